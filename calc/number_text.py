"""Numbers as text, the one house style for every sentence calc writes and every page shows: figures with two
significant digits ("0.37", "3.7", "12,345") and dollars ("$1,234", "$3.50", "$0.012").

Pure Python. ui/formats.py takes these from here, so a verdict written in calc (``bill_compare.verdict``) and a
metric on a page read the same.
"""
from __future__ import annotations

import math


def fmt_number(x: float, unit: str = "") -> str:
    """A figure with at least two significant digits: "12,345", "37", "3.7", "0.37", "0.0037" (whole
    numbers from 10 up, two significant digits below; from 1e15 on, "1.0e+30"), then `` unit`` when given
    ("0.37 tok/s"); "n/a" for NaN or an infinity. Small values never print as "0"."""
    x = float(x)
    if not math.isfinite(x):
        return "n/a"
    if abs(x) >= 1e15:  # beyond a quadrillion, digits say nothing: "1.0e+30", not 31 digits
        text = f"{x:.1e}"
    elif x == 0 or abs(x) >= 9.95:
        text = f"{x:,.0f}"
    else:
        text = f"{x:.{_decimals_for_two_digits(x)}f}"
    return f"{text} {unit}" if unit else text


def _decimals_for_two_digits(x: float) -> int:
    """Decimals that leave two significant digits of x (0 < |x| < 10): 3.7 -> 1, 0.37 -> 2, 0.0037 -> 4."""
    d = 1 - math.floor(math.log10(abs(x)))
    if abs(round(x, d)) >= 10 ** (2 - d):  # 0.0996 rounds up to 0.10: one decimal fewer keeps two digits
        d -= 1
    return max(d, 0)


def fmt_usd(x: float, significant: int = 2) -> str:
    """Dollars with thousands separators: whole dollars from $100 ("$1,234,567", "$412"), cents below ("$3.50",
    "$0.39"), and below $1 at least ``significant`` significant digits ("$0.012" with 2, "$0.0123" with 3;
    the lecture quotes its prices to two, "$0.52"; a table that compares small prices row by row uses 3).
    A minus sign leads ("-$3.50"); "n/a" for NaN or an infinity."""
    x = float(x)
    if not math.isfinite(x):
        return "n/a"
    sign, x = ("-" if x < 0 else ""), abs(x)
    if round(x, 2) >= 100:  # 99.996 reads "$100", not "$100.00"
        return f"{sign}${x:,.0f}"
    if x >= 1 or x == 0 or round(x, 2) >= 1:
        return f"{sign}${x:,.2f}"
    decimals = max(2, _decimals_for_two_digits(x) + max(significant, 2) - 2)
    if round(x, decimals) >= 1:
        return f"{sign}$1.00"
    return f"{sign}${x:.{decimals}f}"


def join_and(names) -> str:
    """Names as a sentence lists them: "A", "A and B", "A, B and C" (no serial comma); "" for none."""
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""
