"""Number and text formatters shared by the pages and their equations (``ui.equations``): one definition, so a figure reads the same in a metric and in its formula.

Pure Python: no streamlit. Small values keep two significant digits ("0.37 tok/s", "$0.012",
"0.40 µs"), never a bare "0".
"""
from __future__ import annotations

import math
import re

from calc.number_text import fmt_number, fmt_usd  # noqa: F401 (the pages call them as formats.fmt_usd)


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


def sentence(text: object) -> str:
    """``text`` as a message that starts a sentence: its first character upper-cased when it is a lowercase ASCII
    letter ("the variant must be ..." -> "The variant must be ..."), the rest unchanged. Left as written: an
    identifier or a name whose case is its spelling at the start ("context_len must be", "vLLM needs"), and a
    formula's symbol (a Greek letter: "γ" is not "Γ")."""
    text = str(text)
    first = text.split(" ", 1)[0]
    if not text or not ("a" <= text[0] <= "z") or "_" in first or any(c.isupper() for c in first[1:]):
        return text
    return text[0].upper() + text[1:]


#: Characters a typed name never keeps: C0/C1 controls, and the bidirectional overrides and isolates that would
#: make the name read in another order than it was typed.
_NAME_DROPPED = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain_name(text: object, max_chars: int = 80, fallback: str = "custom model") -> str:
    """A name typed by a user (a config.json's model name, the sidebar's name field, a link's model id) kept as
    typed: runs of white space (line breaks included) become one space, control characters and bidirectional
    overrides are dropped, and it is cut to ``max_chars``; ``fallback`` when nothing is left.

    Markup stays in it as text ("<b>My</b> model" stays so): a page escapes the name where it prints it
    (``md_escape`` in markdown, ``html.escape`` in HTML; a table cell or a select box's option shows text as it
    is), so it shows as typed everywhere, never interpreted and never stripped.
    """
    kept = _NAME_DROPPED.sub("", " ".join(str(text).split()))
    return kept[:max_chars].strip() or fallback


def safe_name(text: object, max_chars: int = 80) -> str:
    """A file name used as a data set's label, kept to characters that cannot form markdown (letters, digits,
    spaces and ``- _ . + ( )``), "www." defused, cut to ``max_chars``. Falls back to "custom model" when nothing
    is left. A model's name is kept as typed instead (``plain_name``).
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
