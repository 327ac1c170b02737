"""Small tables drawn as one HTML element, with st.dataframe's arguments.

``st.dataframe`` draws a canvas grid that the browser rebuilds on every rerun, even when its data did not
change. Measured in Chromium on the 2-core machine (bench/element_costs.py: the one-chart floor app, 62 ms
slider-to-redrawn, 30 moves): two 4 x 6 dataframes added 37 ms when their numbers followed the slider and
18 ms when they did not; the same two tables through ``show_table`` added 12 ms. The tables a slider redraws
on the explorable pages (a few to a few dozen rows) are drawn by ``show_table`` instead: the same
``column_config`` (labels, help on hover, number formats), ``column_order``, ``hide_index`` and
``placeholder`` as st.dataframe, every column visible without scrolling (text wraps at spaces, numbers stay
on one line and right-aligned), a header row that stays while a long table scrolls. What it does not offer:
sorting by a column, and the grid's toolbar (search, full screen, download; the pages' main tables have a
CSV download button of their own, with the inputs that made them).

The table element also carries its DataFrame as JSON (``data-frame``, pandas' "split" orient, all columns as
st.dataframe sends them), which tests read back (tests/pagetest.tables).
"""
from __future__ import annotations

import html
import math
import os
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

TABLE_CLASS, WRAP_CLASS = "xm-table", "xm-table-wrap"
#: Longer tables stay st.dataframe: batching's 200-row paging table is 60 kB of HTML, all of it laid out.
MAX_ROWS = 50

#: The look: st.dataframe's text size and lines, colours mixed with the theme's text colour (light and dark hold).
#: A text cell may break a long name after each "_" and "/" (``_breakable``: an id, a metric name, a path), so a wide
#: table narrows its text columns to fit the page before it scrolls sideways; numbers never break.
CSS = f"""
.{WRAP_CLASS} {{ overflow: auto; max-height: 28rem; border-radius: 0.5rem;
  border: 1px solid color-mix(in srgb, currentColor 12%, transparent); }}
.{WRAP_CLASS}.xm-full {{ max-height: none; }}
.{TABLE_CLASS} {{ width: 100%; border-collapse: collapse; font-size: 14px; line-height: 1.4; margin: 0; }}
.{TABLE_CLASS} th, .{TABLE_CLASS} td {{ padding: 0.3rem 0.6rem; text-align: left; vertical-align: top;
  border-bottom: 1px solid color-mix(in srgb, currentColor 8%, transparent); overflow-wrap: break-word; }}
.{TABLE_CLASS} th {{ font-weight: 400; color: color-mix(in srgb, currentColor 70%, transparent);
  position: sticky; top: 0; z-index: 1; background-color: var(--xm-page-bg, #ffffff);
  background-image: linear-gradient(color-mix(in srgb, currentColor 4%, transparent),
                                    color-mix(in srgb, currentColor 4%, transparent)); }}
.{TABLE_CLASS} th[title] {{ text-decoration: underline dotted color-mix(in srgb, currentColor 40%, transparent);
  text-underline-offset: 3px; cursor: help; }}
.{TABLE_CLASS} tr:last-child td {{ border-bottom: none; }}
.{TABLE_CLASS} td.xm-num, .{TABLE_CLASS} th.xm-num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.{TABLE_CLASS} td.xm-num {{ white-space: nowrap; }}
.{TABLE_CLASS} td.xm-none {{ color: color-mix(in srgb, currentColor 45%, transparent); }}
"""

#: A number written with its unit, right-aligned like a number: "14.74 ms", "$2,145.83", "1.07 GB", "2.5x".
_NUMBER_TEXT = re.compile(r"^[-−]?\$?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( ?[A-Za-zμ%/×]+(/[A-Za-z]+)?)?$")
#: Words a number column holds where it has no number ("—" for never, "n/a"); they do not make it a text column.
_NO_VALUE = {"—", "-", "n/a", "no fit", "never", ""}
_PRINTF = re.compile(r"%(,?)(\.\d+)?([dfeEgGi])")


def _empty(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def format_number(value: float, fmt: str | None) -> str:
    """``value`` written as st.dataframe writes it with a NumberColumn ``format``: printf ("%.2f", "%d",
    "%,.0f", "$%.3f", "%.2e"), "localized" (thousands separators, at most 3 decimals), "dollar" ($1,234.57),
    "percent" (x 100, %), or None (integers with separators, floats with at most 4 decimals).
    NaN and None give "—". Raises nothing: an unknown format falls back to None's."""
    if _empty(value):
        return "—"
    if not _number(value):  # a boolean
        return "yes" if value else "no"
    v = float(value)
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if fmt == "localized":
        return _trim(f"{v:,.3f}")
    if fmt == "dollar":
        return ("-$" if v < 0 else "$") + f"{abs(v):,.2f}"
    if fmt == "percent":
        return _trim(f"{v * 100:,.2f}") + "%"
    if fmt and _PRINTF.search(fmt):
        def one(m: re.Match) -> str:
            comma, precision, kind = m.group(1), m.group(2) or "", m.group(3)
            if kind in "di":
                return f"{int(v):{comma}d}"
            return f"{v:{comma}{precision}{kind}}"
        return _PRINTF.sub(one, fmt)
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return _trim(f"{v:,.4f}")


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _cell(value: object, config: Mapping | None, placeholder: str) -> str:
    """The text of one cell: ``placeholder`` when empty, a number in its column's format, else the value."""
    if _empty(value):
        return placeholder
    if _number(value) or isinstance(value, (bool, np.bool_)):
        return format_number(value, ((config or {}).get("type_config") or {}).get("format"))
    return str(value)


def _breakable(escaped: str) -> str:
    """Escaped cell text with a line-break opportunity (``<wbr>``, invisible and not copied) after each "_" and "/"
    outside tags: "output_tok_per_s_per_gpu" may wrap as "output_tok_per_" / "s_per_gpu" in a narrow column."""
    parts = re.split(r"(<[^>]*>)", escaped)
    return "".join(p if p.startswith("<") else re.sub(r"([_/])", r"\1<wbr>", p) for p in parts)


def _link(value: object, config: Mapping | None) -> str:
    """A LinkColumn's cell as an anchor that opens in a new tab, its text the ``display_text`` pattern's first
    group (st.column_config.LinkColumn's rule: r"https?://([^/]+)" shows the host) or else the URL; "" for any other
    cell, and for a value that is not an http(s) URL (it is then shown as text)."""
    tc = (config or {}).get("type_config") or {}
    if tc.get("type") != "link" or not isinstance(value, str) or not re.match(r"https?://\S+$", value.strip()):
        return ""
    url = value.strip()
    m = re.search(tc["display_text"], url) if tc.get("display_text") else None
    text = m.group(1) if m and m.groups() else url
    return f'<a href={_attr(url)} target="_blank" rel="noopener noreferrer">{html.escape(text)}</a>'


def table_html(df: pd.DataFrame, column_config: Mapping | None = None, column_order: Sequence[str] | None = None,
               hide_index: bool | None = None, placeholder: str | None = None, full_height: bool = False) -> str:
    """The table's HTML: ``df``'s columns in ``column_order`` (default all), headers and formats from
    ``column_config`` (st.column_config objects, plain label strings, or None to hide a column), the index
    first unless ``hide_index`` (labelled by ``column_config["_index"]``); an empty cell reads ``placeholder``
    (default "—"). Over 28 rem the table scrolls under a header that stays, unless ``full_height``. A column
    in ``column_order`` that ``df`` lacks is left out, as st.dataframe does. Raises nothing of its own."""
    placeholder = "—" if placeholder is None else placeholder
    config = dict(column_config or {})
    order = list(column_order) if column_order is not None else list(df.columns)
    # as st.dataframe: a column named in column_order that the table lacks is left out (a tier without a
    # self-hosted row has no break-even column)
    order = [c for c in order if c in df.columns and not (c in config and config[c] is None)]
    show_index = not hide_index and not (isinstance(df.index, pd.RangeIndex) and hide_index is None)

    def label_help(key: object, default: str) -> tuple[str, str | None]:
        c = config.get(key)
        if isinstance(c, str):
            return c, None
        if isinstance(c, Mapping):
            return (c.get("label") or default), c.get("help")
        return default, None

    def numeric_column(values: list) -> bool:  # numbers, or numbers written with their unit ("14.74 ms", "$2.15")
        shown = [v for v in values if not _empty(v) and v not in _NO_VALUE]
        return bool(shown) and all(_number(v) or (isinstance(v, str) and _NUMBER_TEXT.match(v)) for v in shown)

    def mapping(key: object) -> Mapping | None:
        return config.get(key) if isinstance(config.get(key), Mapping) else None

    # per column (each keeps its own type; a row would mix them): header, help, values, format, alignment
    columns = [(label_help("_index", "" if df.index.name is None else str(df.index.name)), df.index.tolist(),
                mapping("_index"))] if show_index else []
    columns += [(label_help(c, str(c)), df[c].tolist(), mapping(c)) for c in order]
    numeric = [numeric_column(values) for _, values, _ in columns]
    th = "".join(
        f'<th{" class=xm-num" if num else ""}{f" title={_attr(h)}" if h else ""}>{html.escape(label)}</th>'
        for ((label, h), _, _), num in zip(columns, numeric))
    rows = []
    for i in range(len(df)):
        tds = []
        for (_, values, cfg), num in zip(columns, numeric):  # aligned by column, not by cell
            classes = " ".join(c for c in ("xm-none" if _empty(values[i]) else "", "xm-num" if num else "") if c)
            attr = f' class="{classes}"' if classes else ""
            text = _link(values[i], cfg) or html.escape(_cell(values[i], cfg, placeholder))
            tds.append(f"<td{attr}>{text if num else _breakable(text)}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    data = df.to_json(orient="split", date_format="iso", default_handler=str)
    wrap = WRAP_CLASS + (" xm-full" if full_height else "")
    return (f'<div class="{wrap}"><table class="{TABLE_CLASS}" data-frame={_attr(data)}>'
            f"<thead><tr>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def _attr(text: str) -> str:
    return '"' + html.escape(str(text), quote=True) + '"'


def show_table(df: pd.DataFrame, column_config: Mapping | None = None, column_order: Sequence[str] | None = None,
               hide_index: bool | None = None, container=None, placeholder: str | None = None,
               height: int | None = None, **_grid_only) -> None:
    """Draw ``df`` as one HTML table element (``table_html``) where st.dataframe would have drawn it (in
    ``container``, e.g. an expander, when given); takes st.dataframe's arguments: a ``height`` shows every row
    (no inner scrolling), those of the grid only (width, key) are ignored. A table of more than ``MAX_ROWS``
    rows is an st.dataframe (its grid draws only the rows in view), as is every table when the environment
    sets ``EXPLORER_TABLES=dataframe``."""
    if len(df) > MAX_ROWS or os.environ.get("EXPLORER_TABLES") == "dataframe":
        (container or st).dataframe(df, column_config=column_config, column_order=column_order, hide_index=hide_index,
                                    placeholder=placeholder, height=height or "auto", **_grid_only)
        return
    (container or st).html(table_html(df, column_config, column_order, hide_index, placeholder,
                                      full_height=height is not None))
