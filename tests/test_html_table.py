"""html_table.show_table: st.dataframe's arguments drawn as one HTML table (ui/html_table.py).

Number formats are checked against what st.dataframe's NumberColumn writes for the same format (Streamlit's
column_config reference: printf formats through sprintf-js, "localized" through toLocaleString with at most
three decimals, "dollar" as US currency); the table is read back with the parser the page tests use.
"""
import math

import pandas as pd
import pytest
import streamlit as st

from ui import html_table
from ui.html_table import format_number, table_html
from pagetest import open_page, tables


@pytest.mark.parametrize("value, fmt, written", [
    (1234.5678, "%.2f", "1234.57"),
    (1234.9, "%d", "1234"),              # sprintf's %d truncates
    (1234.5, "%,.0f", "1,234"),          # hand: 1234.5 rounds half to even -> 1234, with a separator
    (0.01234, "$%.3f", "$0.012"),
    (1234.5678, "localized", "1,234.568"),
    (1200.0, "localized", "1,200"),
    (2145.8333, "dollar", "$2,145.83"),
    (-3.5, "dollar", "-$3.50"),
    (0.2284, "percent", "22.84%"),
    (131072, None, "131,072"),
    (0.123456789, None, "0.1235"),
    (float("nan"), "%.2f", "—"),
    (float("inf"), None, "∞"),
])
def test_number_formats_match_st_dataframe(value, fmt, written):
    assert format_number(value, fmt) == written


def _cells(html: str) -> list[list[str]]:
    body = html[html.index("<tbody>"):].replace("<wbr>", "")  # line-break opportunities, tested on their own
    return [[c.split(">", 1)[1] for c in row.split("</td>")[:-1]] for row in body.split("<tr>")[1:]]


def test_columns_labels_order_placeholder_and_escaping():
    df = pd.DataFrame({"name": ["<b>x</b>", "y"], "bytes": [1.5e9, math.nan], "hidden": [1, 2], "gone": [3, 4]})
    html = table_html(df, column_config={
        "bytes": st.column_config.NumberColumn("GB", format="%.1f", help="10^9 bytes"), "gone": None},
        column_order=("bytes", "name", "gone"), hide_index=True, placeholder="no fit")
    head = html[html.index("<thead>"):html.index("</thead>")]
    assert ">GB</th>" in head and 'title="10^9 bytes"' in head and ">name</th>" in head
    assert "hidden" not in head and "gone" not in head  # not in column_order / hidden by a None config
    assert _cells(html) == [["1500000000.0", "&lt;b&gt;x&lt;/b&gt;"], ["no fit", "y"]]
    assert "<b>x" not in html


def test_the_index_is_shown_with_its_label_unless_hidden():
    df = pd.DataFrame({"v": [1, 2]}, index=["a", "b"])
    shown = table_html(df, column_config={"_index": st.column_config.TextColumn("quantity")})
    assert ">quantity</th>" in shown and _cells(shown)[0] == ["a", "1"]
    assert _cells(table_html(df, hide_index=True))[0] == ["1"]
    # st.dataframe's default hides a plain 0..n-1 index
    assert _cells(table_html(pd.DataFrame({"v": [7]})))[0] == ["7"]


def test_numbers_and_numbers_with_units_are_right_aligned_text_is_not():
    df = pd.DataFrame({"t": ["14.74 ms", "$2,145.83"], "n": [1, 2], "s": ["NVLink 4", "PCIe"]})
    html = table_html(df, hide_index=True)
    assert html.count('class="xm-num"') == 4 and "<td>NVLink 4</td>" in html
    # a dash where a number column has no number (the bill's "self-hosting cheaper from DAU") keeps it a
    # number column
    dashed = table_html(pd.DataFrame({"dau": ["80,327", "—"]}), hide_index=True)
    assert dashed.count('xm-num') == 3  # header and both cells


def test_a_long_table_stays_a_dataframe_and_tables_read_back():
    # AppTest through a page: Batching draws a 13-row summary (HTML) and a 200-request paging table (over
    # MAX_ROWS: st.dataframe); pagetest.tables reads both, in page order, as the DataFrames the page passed
    at = open_page("app_pages/batching.py")
    at.session_state["bt_paging_table"] = True  # the per-request table is built while its expander is open
    at.run()
    html_tables = [h for h in at.get("html") if 'class="xm-table"' in h.proto.body]
    frames = tables(at)
    assert len(html_tables) == 1 and len(at.dataframe) == 1 and len(frames) == 2
    assert len(frames[0]) <= html_table.MAX_ROWS < len(frames[1]) == len(at.dataframe[0].value)
    assert frames[1].equals(at.dataframe[0].value)


def test_a_column_the_table_lacks_is_left_out_as_st_dataframe_does():
    # the monthly bill names "self-hosting cheaper from DAU" in column_order; a bill without a self-hosted tier
    # has no such column, and st.dataframe draws the rest
    html = table_html(pd.DataFrame({"a": [1]}), column_order=("a", "b"), hide_index=True)
    assert ">a</th>" in html and ">b</th>" not in html and _cells(html) == [["1"]]


def test_a_link_column_is_an_anchor_with_its_display_text_and_only_for_web_urls():
    df = pd.DataFrame({"source": ["https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/perf.md",
                                  "javascript:alert(1)", "aiconfigurator-silicon", 'https://x.org/a"b<c']})
    cfg = {"source": st.column_config.LinkColumn("source", display_text=r"https?://([^/]+)")}
    cells = _cells(table_html(df, column_config=cfg, hide_index=True))
    # the host is the text, the whole URL the target, opened in a new tab
    assert cells[0] == ['<a href="https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/perf.md" target="_blank" '
                        'rel="noopener noreferrer">github.com</a>']
    # anything but an http(s) URL stays plain, escaped text
    assert cells[1] == ["javascript:alert(1)"] and cells[2] == ["aiconfigurator-silicon"]
    assert 'href="https://x.org/a&quot;b&lt;c"' in cells[3][0] and cells[3][0].endswith(">x.org</a>")
    # without a display pattern the URL is its own text
    plain = _cells(table_html(df.head(1), column_config={"source": st.column_config.LinkColumn("source")},
                              hide_index=True))
    assert plain[0][0].endswith(">https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/perf.md</a>")


def test_a_long_name_may_break_after_its_underscores_and_slashes_and_a_number_never():
    df = pd.DataFrame({"metric": ["output_tok_per_s_per_gpu"], "v": [1234.5], "u": ["a/b"]})
    html = table_html(df, hide_index=True)
    assert "<td>output_<wbr>tok_<wbr>per_<wbr>s_<wbr>per_<wbr>gpu</td>" in html and "<td>a/<wbr>b</td>" in html
    assert '<td class="xm-num">1,234.5</td>' in html
    # not inside a tag: an anchor's URL stays whole, its text may break
    link = table_html(pd.DataFrame({"s": ["https://a.org/x_y"]}), hide_index=True,
                      column_config={"s": st.column_config.LinkColumn("s")})
    assert 'href="https://a.org/x_y"' in link and ">https:/<wbr>/<wbr>a.org/<wbr>x_<wbr>y</a>" in link
