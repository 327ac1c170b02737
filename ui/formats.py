"""Number and text formatters shared by the pages and their equations (``ui.equations``): one definition, so a figure reads the same in a metric and in its formula.

Pure Python: no streamlit. Small values keep two significant digits ("0.37 tok/s", "$0.012",
"0.40 µs"), never a bare "0".
"""
from __future__ import annotations

import math
import re

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


# -- text from outside: links, configs, file names ----------------------------------------------------
#: The characters that open a markdown construct that could fetch, link, format code or formulas, or draw
#: a directive: links/images ``[ ] ( ) !``, HTML ``< >``, code, formulas ``$``, directives ``[ ]``, emphasis,
#: headings, tables, strikethrough. ".", "_" and ":" stay (messages read better).
_MD_ACTIVE = re.compile(r"([\\`*\[\]()<>!$#|~{}])")


#: An invisible word joiner (U+2060). GFM turns bare URLs, "www." names and e-mail addresses into links
#: after parsing, in the text itself, so no backslash stops it; a joiner inside "://", "www." and after
#: "@" breaks those patterns while the text reads the same.
_JOIN = "\u2060"


def md_escape(text: object) -> str:
    """``text`` made inert for Streamlit markdown: shown exactly as typed, never as a link, image,
    heading, formula, colour directive or HTML.

    Each character that can open such a construct gets a backslash (CommonMark 2.4: any ASCII
    punctuation may be backslash-escaped), which also defeats ``$`` formulas; bare URLs, "www." names
    and e-mail addresses get an invisible word joiner (``_JOIN``) so GFM does not link them; line
    breaks become spaces. Use it for anything that comes from a URL, a pasted config or a file name.
    """
    flat = _MD_ACTIVE.sub(r"\\\1", " ".join(str(text).splitlines()))
    flat = flat.replace("://", ":" + _JOIN + "//").replace("@", "@" + _JOIN)
    return re.sub(r"(?i)(www)\.", "\\1" + _JOIN + ".", flat)


def safe_name(text: object, max_chars: int = 80) -> str:
    """A model name from a config.json or a file name, kept to characters that cannot form markdown
    (letters, digits, spaces and ``- _ . + ( )``), "www." defused, cut to ``max_chars``.

    Pages print model names inside markdown (titles, captions, messages); a name reduced this way
    shows as typed everywhere, charts included. Falls back to "custom model" when nothing is left.
    """
    kept = re.sub(r"[^\w \-.+()]", "", " ".join(str(text).split()), flags=re.ASCII)
    kept = re.sub(r"(?i)www\.", "www-", kept).strip(" -+.")
    return (kept[:max_chars].rstrip() or "custom model")


def fmt_bytes(n_bytes: float, unit: str = "GB") -> str:
    """Bytes with an explicit unit: "GB" (1e9, with MB/kB below 1 GB and TB above 1,000 GB), or
    "GiB" (2**30, with MiB/KiB/TiB). The unit is always printed; "n/a" for NaN or an infinity."""
    n = float(n_bytes)
    if not math.isfinite(n):
        return "n/a"
    if unit == "GiB":
        steps = [(2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")]
    else:
        steps = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
    for size, name in steps:
        if abs(n) >= size:
            return f"{n / size:,.2f} {name}"
    return f"{n:,.0f} B"


def fmt_tokens(n: float) -> str:
    """A token count the way contexts are named: "128", "8K" (8,192), "128K", "1M" (1,048,576); a count that
    is not a power-of-two multiple of 1,024 keeps its digits with separators ("10,000")."""
    n = int(n)
    if n >= 2**20 and n % 2**20 == 0:
        return f"{n // 2**20:,}M"
    if n >= 2**10 and n % 2**10 == 0:
        return f"{n // 2**10:,}K"
    return f"{n:,}"
