"""Argument checks every calc function shares: each returns the value (as int or float) or raises a
ValueError whose message names the argument and what it must be ("context_len must be a positive
integer, got 0").
"""
from __future__ import annotations

import math
from numbers import Integral, Real


def check_choice(value, choices, rule: str) -> str:
    """Return ``value`` if it is one of ``choices`` (a convention's names).

    Raises:
        ValueError: ``rule`` (what the value must be, e.g. "matmul must be one of auto, weight_only,
        low_precision") followed by "; got 'x'".
    """
    if value not in choices:
        raise ValueError(f"{rule}; got {value!r}")
    return value


def check_positive_int(value, what: str) -> int:
    """Return ``value`` as an int if it is a positive integer (bools rejected).

    Raises:
        ValueError: "context_len must be a positive integer, got 0" and the like.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer() and value > 0:
            return int(value)
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def check_nonneg_int(value, what: str) -> int:
    """Return ``value`` as an int if it is an integer >= 0.

    Raises:
        ValueError: negative or non-integer value.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not float(value).is_integer() or value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    return int(value)


def check_positive_number(value, what: str) -> float:
    """Return ``value`` as a float if it is a finite number > 0.

    Raises:
        ValueError: zero, negative, NaN, infinite or non-numeric value.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive number, got {value!r}")
    return float(value)


def check_nonneg_number(value, what: str) -> float:
    """Return ``value`` as a float if it is a finite number >= 0.

    Raises:
        ValueError: negative, NaN, infinite or non-numeric value.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a non-negative number, got {value!r}")
    return float(value)


def check_fraction(value, what: str) -> float:
    """Return ``value`` as a float if it lies in [0, 1].

    Raises:
        ValueError: outside [0, 1] or not a number.
    """
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or not 0 <= value <= 1:
        raise ValueError(f"{what} must be a number between 0 and 1, got {value!r}")
    return float(value)
