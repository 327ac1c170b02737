"""A row of metrics drawn as one element.

``st.columns(4)`` with a ``st.metric`` in each is nine elements that the browser rebuilds one by one on every
rerun. A page with ten metrics pays for it on each slider move: measured in Chromium on the 2-core machine
(bench/element_costs.py: the one-chart floor app, 62 ms slider-to-redrawn, 30 moves), eight ``st.metric``
in columns added 16 ms, the same eight in one ``MetricRow`` 5 ms. ``MetricRow`` keeps ``st.metric``'s call
(label, value, delta, delta_color, delta_arrow, help) and its look (label 14 px, value 2.25 rem, delta as a
pill with its arrow, a help mark whose text shows on hover or keyboard focus; characters, not SVG, which
st.html's sanitiser removes), and draws the row as one ``st.html`` element when its ``with`` block ends::

    with widgets.metric_row(4) as m:
        m[0].metric("TPOT", "4.80 ms", delta="estimate 6.96 ms", delta_color="off", help="...")
        m[1].metric(...)

The look is the stylesheet ``CSS`` (injected once per run by ``classroom.page_css``); its colours follow the
page's text colour, so the light and dark themes both hold without a rerun. Tests read the row back through
``tests/pagetest.metrics`` (the same label, value, delta and help as AppTest's metric elements).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

import streamlit as st

#: The row's classes; tests and the presenter-mode CSS select on them.
ROW_CLASS, CELL_CLASS, LABEL_CLASS, VALUE_CLASS, DELTA_CLASS, HELP_CLASS, CAPTION_CLASS = (
    "xm-row", "xm-metric", "xm-label", "xm-value", "xm-delta", "xm-help", "xm-caption")
#: The value's text inside ``VALUE_CLASS`` (a size container): its font shrinks to fit the column.
FIT_CLASS = "xm-fit"

#: Advance widths of the value font's characters (Source Sans, Streamlit's font), in em, measured in Chromium:
#: digits and "$" 0.497, "," and "." 0.249, "%" 0.824, "/" 0.350, a space 0.200, "m" 0.829, "W" 0.786.
_EM = {**dict.fromkeys("0123456789$+=<>×≈~", 0.50), **dict.fromkeys(",.:;'!|", 0.25), **dict.fromkeys("()[]-", 0.31),
       **dict.fromkeys("fijlrtI/", 0.36), **dict.fromkeys("mwMW%—", 0.83), " ": 0.20}
#: Other lower-case letters (0.42 to 0.555 em) and every other character (capitals up to 0.66 em).
_EM_LOWER, _EM_OTHER = 0.56, 0.67


def text_width_em(text: str) -> float:
    """The width of ``text`` in the value font, in em, a little over (7 % and 0.1 em) so that the text fits
    the width it is sized for: "$1,788,187" is 4.47 em measured, 4.92 here."""
    return 1.07 * sum(_EM.get(c, _EM_LOWER if c.islower() else _EM_OTHER) for c in text) + 0.1

_GREEN, _RED = "rgb(20, 150, 100)", "rgb(215, 45, 60)"
#: The stylesheet. Colours are mixed with ``currentColor`` (the theme's text colour): a green delta reads dark
#: green on the light theme and light green on the dark one, like st.metric's.
CSS = f"""
.{ROW_CLASS} {{ display: grid; grid-template-columns: repeat(var(--xm-n, 4), minmax(0, 1fr));
  column-gap: 1rem; row-gap: 0.75rem; }}
@media (max-width: 640px) {{ .{ROW_CLASS} {{ grid-template-columns: minmax(0, 1fr); }} }}
.{CELL_CLASS} {{ min-width: 0; position: relative; }}
.{LABEL_CLASS} {{ font-size: 14px; line-height: 1.6; display: flex; align-items: flex-start; gap: 0.25rem;
  min-height: 1.5rem; overflow-wrap: anywhere; }}
.{VALUE_CLASS} {{ font-size: 2.25rem; line-height: 1.2; padding-bottom: 0.25rem; container-type: inline-size; }}
.{FIT_CLASS} {{ line-height: var(--xm-value-lh, 1.2); overflow-wrap: normal; word-break: normal;
  font-size: min(var(--xm-value-max, 2.25rem), max(1.25rem, 100cqi / var(--xm-w, 1)), 100cqi / var(--xm-word, 1)); }}
.{DELTA_CLASS} {{ display: inline-flex; align-items: center; gap: 0.15rem; font-size: 14px; line-height: 1.3;
  padding: 2px 6px; border-radius: 9999px; overflow-wrap: anywhere;
  color: color-mix(in srgb, currentColor 70%, transparent);
  background: color-mix(in srgb, currentColor 5%, transparent); }}
.{DELTA_CLASS}.xm-green {{ color: color-mix(in srgb, {_GREEN} 62%, currentColor);
  background: color-mix(in srgb, {_GREEN} 10%, transparent); }}
.{DELTA_CLASS}.xm-red {{ color: color-mix(in srgb, {_RED} 70%, currentColor);
  background: color-mix(in srgb, {_RED} 10%, transparent); }}
.xm-arrow {{ font-weight: 600; }}
.xm-nb {{ white-space: nowrap; }}
.{CAPTION_CLASS} {{ font-size: 14px; color: color-mix(in srgb, currentColor 60%, transparent); margin-top: 0.2rem; }}
.{HELP_CLASS} {{ display: inline-flex; align-items: center; justify-content: center; flex: none;
  box-sizing: border-box; width: 15px; height: 15px; margin-top: 0.25rem; border-radius: 50%; cursor: help;
  border: 1.5px solid color-mix(in srgb, currentColor 60%, transparent); font-size: 10px; font-weight: 700;
  line-height: 1; color: color-mix(in srgb, currentColor 60%, transparent); }}
.{HELP_CLASS}::after {{ content: attr(data-help); display: none; position: absolute; top: 1.6rem; left: 0; right: 0;
  z-index: 1000; white-space: pre-line; padding: 0.5rem 0.75rem;
  border-radius: 0.5rem; font-size: 14px; font-weight: 400; line-height: 1.45; color: #fafafa; background: rgb(38, 39, 48);
  border: 1px solid rgba(250, 250, 250, 0.2); box-shadow: 0 2px 8px rgba(0, 0, 0, 0.25); }}
.{HELP_CLASS}:hover::after, .{HELP_CLASS}:focus::after {{ display: block; }}
.{HELP_CLASS}:focus-visible {{ outline: 2px solid color-mix(in srgb, currentColor 60%, transparent); }}
"""

#: Arrows of a delta (st.html's sanitiser drops inline SVG, so they are characters).
_ARROW_UP = '<span class="xm-arrow" aria-hidden="true">↑</span>'
_ARROW_DOWN = '<span class="xm-arrow" aria-hidden="true">↓</span>'


#: st.metric's delta_color values and the colour each gives a rising and a falling delta.
_DELTA_COLOURS = {"normal": ("green", "red"), "inverse": ("red", "green"), "off": ("gray", "gray"),
                  "green": ("green", "green"), "red": ("red", "red"), "gray": ("gray", "gray"),
                  "grey": ("gray", "gray")}


def plain_text(text: object) -> str:
    """``text`` without markdown emphasis and code marks (help texts are written for st.metric's markdown)."""
    return re.sub(r"(\*\*|__|`)", "", str(text))


@dataclass(frozen=True)
class Metric:
    """One metric as ``st.metric`` takes it: label, value, delta (str or None), delta_color, delta_arrow, help."""
    label: str
    value: str
    delta: str | None = None
    delta_color: str = "normal"
    delta_arrow: str = "auto"
    help: str | None = None


class MetricCell:
    """One column of a ``MetricRow``: ``.metric(...)`` with st.metric's arguments, ``.caption(text)`` under it."""

    def __init__(self) -> None:
        self.item: Metric | None = None
        self.captions: list[str] = []

    def metric(self, label: object, value: object, delta: object = None, delta_color: str = "normal",
               help: str | None = None, delta_arrow: str = "auto", **_ignored) -> None:  # noqa: A002 - st.metric's name
        """Set this cell's metric. Raises ValueError for a ``delta_color`` st.metric does not know."""
        if delta_color not in _DELTA_COLOURS:
            raise ValueError(f"delta_color must be one of {sorted(_DELTA_COLOURS)}, not {delta_color!r}")
        self.item = Metric(str(label), "—" if value is None else str(value),
                           None if delta in (None, "") else str(delta), delta_color, delta_arrow,
                           None if not help else str(help))

    def caption(self, text: object) -> None:
        """A small muted line under the cell's metric (st.caption in the column)."""
        self.captions.append(str(text))


class MetricRow:
    """``n`` metric cells, ``per_row`` to a row (default all in one), drawn as one ``st.html`` element when the
    ``with`` block ends (or on ``show()``). Indexing, slicing and iteration give the cells, as st.columns does.

    Raises ValueError when ``n`` or ``per_row`` is below 1.
    """

    def __init__(self, n: int, per_row: int | None = None) -> None:
        if n < 1 or (per_row is not None and per_row < 1):
            raise ValueError(f"a metric row needs at least one cell and one per row (n={n}, per_row={per_row})")
        self.per_row = per_row or n
        self.cells = [MetricCell() for _ in range(n)]
        self.shown = False

    def __enter__(self) -> "MetricRow":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.show()

    def __getitem__(self, i):
        return self.cells[i]

    def __iter__(self):
        return iter(self.cells)

    def __len__(self) -> int:
        return len(self.cells)

    def html(self) -> str:
        """The row's HTML (no script, no style: the look is ``CSS``)."""
        cells = []
        for cell in self.cells:
            cells.append(f'<div class="{CELL_CLASS}">' + (_cell_html(cell.item) if cell.item else "")
                         + "".join(f'<div class="{CAPTION_CLASS}">{html.escape(plain_text(c))}</div>'
                                   for c in cell.captions) + "</div>")
        values = [c.item.value for c in self.cells if c.item] or [""]
        whole = max(text_width_em(v) for v in values)  # one font size for the row's values (CSS: FIT_CLASS)
        word = max(text_width_em(w) for v in values for w in (v.split() or [v]))
        return (f'<div class="{ROW_CLASS}" style="--xm-n: {self.per_row}; --xm-w: {whole:.2f}; --xm-word: {word:.2f}">'
                + "".join(cells) + "</div>")

    def show(self) -> None:
        """Draw the row (once) where the page is now; a row with no metric and no caption draws nothing."""
        if self.shown:
            return
        self.shown = True
        if any(c.item or c.captions for c in self.cells):
            st.html(self.html())


def _cell_html(m: Metric) -> str:
    label = f'<span>{html.escape(m.label)}</span>'
    if m.help:
        text = html.escape(plain_text(m.help), quote=True)
        label += (f'<span class="{HELP_CLASS}" tabindex="0" role="img" '
                  f'aria-label="Help: {text}" data-help="{text}">?</span>')
    out = f'<div class="{LABEL_CLASS}">{label}</div><div class="{VALUE_CLASS}">{_value_html(m.value)}</div>'
    if m.delta is not None:
        falling = m.delta.lstrip().startswith(("-", "−"))
        colour = _DELTA_COLOURS[m.delta_color][1 if falling else 0]
        arrow = "" if m.delta_arrow == "off" else (
            _ARROW_DOWN if (m.delta_arrow == "down" or (m.delta_arrow == "auto" and falling)) else _ARROW_UP)
        # a number in the delta ("estimate $1,234,567") is kept whole: the pill wraps only at its spaces
        text = re.sub(r"\S*\d\S*", lambda n: f'<span class="xm-nb">{n.group(0)}</span>', html.escape(m.delta))
        out += (f'<div><span class="{DELTA_CLASS} xm-{colour}">{arrow}<span>{text}</span>'
                "</span></div>")
    return out


def _value_html(value: str) -> str:
    """The value as a block whose font fits the column (``CSS``, ``FIT_CLASS``), so that a number is never broken.

    The font is 2.25 rem where the row's values fit; else it shrinks until the row's widest value fits on one
    line, down to 1.25 rem; below that a value wraps, only at its spaces (between a number and its unit), and
    the font shrinks further only as far as the widest word needs. The row carries the widths (``--xm-w``: its
    widest value in em, ``--xm-word``: its widest word; ``text_width_em``), so its values share one size;
    100cqi is the column's width.
    """
    return f'<div class="{FIT_CLASS}">{html.escape(value)}</div>'
