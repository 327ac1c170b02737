"""Every number box says which values it takes: a caption under each ``number_input`` that has a min or a max.

Streamlit's number box refuses a typed value outside its range in the browser: the box turns red and keeps
showing the refused number while the page goes on computing with the last valid one, and the reason is only
in a tooltip on a small icon. So the range is written where it can be read before typing, under the box:
"Accepts 1 to 100", "Accepts 0 or more", "Accepts up to 10".

:func:`install` (called once by app.py, before any page runs) wraps ``DeltaGenerator.number_input`` and the
``st.number_input`` shortcut, so that every box of the app, in any column, form or sidebar, gets its caption
from this one place without a change at its call site. The widget itself (label, key, value, help, URL binding)
is passed through unchanged. A box in an ``st.empty`` placeholder gets no caption (a second element there would
replace the box).
"""
from __future__ import annotations

import functools
import inspect
import math
import numbers

import streamlit as st
from streamlit.cursor import LockedCursor
from streamlit.delta_generator import DeltaGenerator

#: Streamlit's own method, kept for :func:`uninstall`.
ORIGINAL_NUMBER_INPUT = DeltaGenerator.number_input
_SIGNATURE = inspect.signature(ORIGINAL_NUMBER_INPUT)


def bound_text(value: float) -> str:
    """A range end as the page writes numbers: "10,000,000" (not "1e+07"), "0.5", "0.001"; a huge or tiny
    one as "1e+20". Raises ValueError for a value that is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"a range end must be a finite number, got {value!r}")
    v = float(value)
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,g}"


def range_text(min_value: float | None, max_value: float | None) -> str:
    """What a number box with these bounds accepts, as a caption: "Accepts 1 to 100", "Accepts 0 or more",
    "Accepts up to 10"; "" when it has neither bound. Bounds are in the box's own unit (the one its label
    names). Raises ValueError for a bound that is not a finite number."""
    if min_value is not None and max_value is not None:
        return f"Accepts {bound_text(min_value)} to {bound_text(max_value)}"
    if min_value is not None:
        return f"Accepts {bound_text(min_value)} or more"
    if max_value is not None:
        return f"Accepts up to {bound_text(max_value)}"
    return ""


#: The caption's look (injected once per run with the app's other styles, ``classroom.page_css``): pulled up into
#: the gap Streamlit leaves between elements (1rem) and set small on short lines, so that it reads as the box's own
#: note and a row of boxes grows by one small line, not by a gap and a line (the number a lecture step quotes
#: stays on a 1280 x 720 first screen, tests/test_browser_first_visit.py). The caption is the element right after
#: a number box, which is where ``install`` puts it; its text is plain (no markup in the page's text elements).
CSS = """
[data-testid="stElementContainer"]:has(> [data-testid="stNumberInput"])
  + [data-testid="stElementContainer"]:has([data-testid="stCaptionContainer"]) { margin-top: -1rem; }
[data-testid="stElementContainer"]:has(> [data-testid="stNumberInput"])
  + [data-testid="stElementContainer"] [data-testid="stCaptionContainer"] { font-size: 0.8rem; line-height: 1.15; }
"""


@functools.wraps(ORIGINAL_NUMBER_INPUT)
def _number_input(self: DeltaGenerator, *args, **kwargs):
    value = ORIGINAL_NUMBER_INPUT(self, *args, **kwargs)
    bound = _SIGNATURE.bind(self, *args, **kwargs).arguments
    try:
        text = range_text(bound.get("min_value"), bound.get("max_value"))
    except ValueError:  # a bound Streamlit took but this cannot write (not a plain number): no caption
        text = ""
    target = self._active_dg
    if text and not isinstance(target._cursor, LockedCursor):  # in an st.empty, a caption would replace the box
        target.caption(text)
    return value


def install() -> None:
    """Give every ``number_input`` with a min or a max its range caption (``st.number_input``, and
    ``.number_input`` on any column, container, form or the sidebar); idempotent, for the whole process."""
    DeltaGenerator.number_input = _number_input
    st.number_input = st._main.number_input


def uninstall() -> None:
    """Restore Streamlit's own ``number_input`` (for comparisons in tests)."""
    DeltaGenerator.number_input = ORIGINAL_NUMBER_INPUT
    st.number_input = st._main.number_input


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return DeltaGenerator.number_input is _number_input
