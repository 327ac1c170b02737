"""ui.charts.coinciding_groups: which points of a chart would hide one another under one marker."""
import math

import numpy as np
import pytest

from ui.charts import coinciding_groups


def test_equal_points_group_and_distinct_ones_do_not():
    # three operators at (32, 107.2), one at (4, 13.4), one at (32, 50): same x but another y stays apart
    xs = [32.0, 4.0, 32.0, 32.0, 32.0]
    ys = [107.2, 13.4, 107.2, 50.0, 107.2]
    assert coinciding_groups(xs, ys) == [[0, 2, 4], [1], [3]]


def test_the_tolerance_is_relative_on_both_axes():
    # 32 and 32.3 differ by 0.93% of 32.3 (< 1%): one point; 32 and 32.4 by 1.2%: two
    assert coinciding_groups([32.0, 32.3], [1.0, 1.0]) == [[0, 1]]
    assert coinciding_groups([32.0, 32.4], [1.0, 1.0]) == [[0], [1]]
    assert coinciding_groups([1e-3, 1.001e-3], [5e12, 5.04e12]) == [[0, 1]]   # scale-free
    assert coinciding_groups([32.0, 32.3], [1.0, 1.0], rel_tol=0) == [[0], [1]]


def test_numpy_input_and_non_finite_points_stand_alone():
    xs = np.array([2.0, np.nan, np.nan, 2.0, math.inf])
    ys = np.array([3.0, 1.0, 1.0, 3.0, math.inf])
    assert coinciding_groups(xs, ys) == [[0, 3], [1], [2], [4]]
    assert coinciding_groups([], []) == []


@pytest.mark.parametrize("xs, ys, tol, words", [([1, 2], [1], 0.01, "same length"),
                                                ([1], [1], -0.1, "rel_tol"), ([1], [1], float("nan"), "rel_tol")])
def test_bad_arguments_say_what_is_wrong(xs, ys, tol, words):
    with pytest.raises(ValueError, match=words):
        coinciding_groups(xs, ys, tol)
