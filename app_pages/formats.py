"""Number formatters shared by the pages (``app_pages.common``) and their equations
(``app_pages.equations``): one definition, so a figure reads the same in a metric and in its formula.

Pure Python: no streamlit. Small values keep two significant digits ("0.37 tok/s", "$0.012",
"0.40 µs"), never a bare "0".
"""
from __future__ import annotations

import math

def fmt_number(x: float, unit: str = "") -> str:
    """A figure with at least two significant digits: "12,345", "37", "3.7", "0.37", "0.0037" (whole
    numbers from 10 up, two significant digits below), then `` unit`` when given ("0.37 tok/s");
    "n/a" for NaN or an infinity. Small values never print as "0"."""
    x = float(x)
    if not math.isfinite(x):
        return "n/a"
    if x == 0 or abs(x) >= 9.95:
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


def fmt_seconds(s: float) -> str:
    """Seconds as "512 µs", "3.7 µs", "5.12 ms", "1.30 s" or "2.0 min"; "n/a" for NaN or an infinity."""
    s = float(s)
    if not math.isfinite(s):
        return "n/a"
    if abs(s) < 1e-3:
        return fmt_number(s * 1e6, "µs")
    if abs(s) < 1:
        return f"{s * 1e3:,.2f} ms"
    if abs(s) < 120:
        return f"{s:,.2f} s"
    return f"{s / 60:,.1f} min"


def fmt_usd(x: float) -> str:
    """Dollars: "$1,234", "$3.50", "$0.39", "$0.012" (cents, and two significant digits below $1);
    "n/a" for NaN or an infinity."""
    if not math.isfinite(x):
        return "n/a"
    if abs(x) >= 1000:
        return f"${x:,.0f}"
    if abs(x) >= 1 or x == 0:
        return f"${x:,.2f}"
    return f"${x:.{max(2, _decimals_for_two_digits(x))}f}"
