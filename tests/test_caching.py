"""Caches bounded in bytes (ui/caching.py): eviction by size and by count, figures built once."""
import pickle

import numpy as np
import plotly.graph_objects as go
import pytest

from ui import caching
from ui.caching import BoundedCache, FigureRecipe, bounded_cache


def test_a_cache_over_its_byte_bound_evicts_the_least_recently_used():
    blob = b"x" * 400
    size = len(pickle.dumps(blob, protocol=pickle.HIGHEST_PROTOCOL))   # 400 bytes + a few of framing
    assert 400 <= size < 450
    cache = BoundedCache(max_entries=100, max_bytes=1000)              # room for two, not three
    cache.put("a", blob)
    cache.put("b", blob)
    assert cache.get("a") == blob                                      # "a" is now the most recent
    cache.put("c", blob)
    assert cache.get("b") is None and cache.get("a") == blob and cache.get("c") == blob
    assert len(cache) == 2 and cache.total_bytes == 2 * size <= 1000


def test_a_value_larger_than_the_whole_bound_is_not_kept_and_counts_are_bounded_too():
    cache = BoundedCache(max_entries=2, max_bytes=10_000)
    cache.put("huge", b"x" * 20_000)
    assert cache.get("huge") is None and cache.total_bytes == 0
    for k in "abc":
        cache.put(k, k)
    assert len(cache) == 2 and cache.get("a") is None
    with pytest.raises(ValueError, match="max_bytes"):
        BoundedCache(max_entries=1, max_bytes=0)


def test_bounded_cache_calls_once_per_distinct_arguments():
    calls = []

    @bounded_cache(max_entries=4, max_bytes=1_000_000)
    def square(x):
        calls.append(x)
        return np.arange(x) ** 2

    assert square(3).tolist() == [0, 1, 4]
    square(3)
    square(4)
    assert calls == [3, 4] and square.cache.hits == 1


def test_a_page_file_run_again_keeps_its_bounded_cache():
    # Streamlit executes a page's file anew on every run, which defines its cached functions anew: the
    # second run must find what the first one computed (before, each run started with an empty cache).
    page = compile("from ui.caching import bounded_cache\n"
                   "@bounded_cache(max_entries=4, max_bytes=1_000_000)\n"
                   "def slow(x):\n"
                   "    CALLS.append(x)\n"
                   "    return x * 2\n", "a_page_run_twice.py", "exec")
    calls = []
    first, second = {"CALLS": calls}, {"CALLS": calls}
    exec(page, first)
    exec(page, second)
    assert first["slow"](21) == 42 and second["slow"](21) == 42
    assert calls == [21] and second["slow"].cache is first["slow"].cache


def test_a_figure_recipe_builds_what_go_figure_builds_and_once_per_content():
    caching.FIGURES.clear()

    def recipe(y):
        return FigureRecipe().add_scatter(x=[1, 2, 3], y=y, name="s").update_layout(height=300)

    direct = go.Figure()
    direct.add_scatter(x=[1, 2, 3], y=[4, 5, 6], name="s")
    direct.update_layout(height=300)
    assert recipe([4, 5, 6]).build().to_dict() == direct.to_dict()
    first = caching.build_figure(recipe([4, 5, 6]))
    assert caching.build_figure(recipe([4, 5, 6])) is first           # same calls: the cached figure
    assert caching.build_figure(recipe([4, 5, 7])) is not first       # other data: another figure
    assert first.layout.height == 300 and first.layout.font.size == 14   # the house style applied
    assert len(caching.FIGURES) == 2


def test_a_cached_figure_serialises_once_and_a_copy_of_it_leaves_it_unchanged():
    caching.FIGURES.clear()
    fig = caching.build_figure(FigureRecipe().add_bar(x=["a", "b"], y=[1.0, 2.0]).update_layout(height=300))
    first = fig.to_dict()
    assert fig.to_dict() is first                      # st.plotly_chart's to_dict() is not recomputed
    assert first["data"][0]["type"] == "bar" and first["layout"]["height"] == 300
    copy = go.Figure(fig)                              # presenter mode restyles a copy
    copy.update_layout(height=900, font_size=30)
    assert fig.to_dict()["layout"]["height"] == 300 and fig.to_dict()["layout"]["font"]["size"] == 14
    assert go.Figure(pickle.loads(pickle.dumps(fig))).to_dict() == first   # stored and measured as a plain figure


def test_cached_call_runs_a_function_once_per_arguments_and_does_not_keep_errors():
    calls = []

    def halve(n):
        calls.append(n)
        if n < 0:
            raise ValueError("n must be >= 0")
        return n / 2

    assert caching.cached_call(halve, 8) == 4.0
    assert caching.cached_call(halve, 8) == 4.0 and caching.cached_call(halve, n=8) == 4.0
    assert calls == [8, 8]                             # positional and keyword are two keys; each ran once
    for _ in range(2):
        with pytest.raises(ValueError):
            caching.cached_call(halve, -1)
    assert calls == [8, 8, -1, -1]                     # an error is raised again, never served from the cache
