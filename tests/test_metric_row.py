"""widgets.metric_row: st.metric's arguments and meaning, drawn as one element (ui/metric_row.py).

The rules checked here are st.metric's own (Streamlit's API reference for st.metric): with delta_color
"normal" a rising delta is green and a falling one (a string starting with "-") red, "inverse" swaps them,
"off" is grey; the arrow follows the sign unless delta_arrow is "off". The cells are read back with the same
parser the page tests use (tests/pagetest.py), so a cell the parser cannot read fails here first.
"""
import pytest

from ui.metric_row import MetricRow
from pagetest import _RowParser, metric_element, open_page, row_metrics


def _parse(row: MetricRow):
    parser = _RowParser()
    parser.feed(row.html())
    return parser.cells


@pytest.mark.parametrize("delta, color, want_colour, want_arrow", [
    ("+5%", "normal", "green", "↑"),
    ("-5%", "normal", "red", "↓"),
    ("-5%", "inverse", "green", "↓"),     # batching's "prefill tokens, cached: -95%" is good news
    ("1.51x static", "normal", "green", "↑"),   # no sign: rising, as st.metric reads it
    ("estimate 6.96 ms", "off", "gray", "↑"),
])
def test_delta_colour_and_arrow_follow_st_metric(delta, color, want_colour, want_arrow):
    row = MetricRow(1)
    row[0].metric("x", "1", delta=delta, delta_color=color)
    html = row.html()
    (cell,) = _parse(row)
    assert (cell.delta, cell.delta_colour, cell.arrow) == (delta, want_colour, want_arrow)
    assert html.count("xm-arrow") == 1


def test_arrow_off_and_no_delta():
    row = MetricRow(2)
    row[0].metric("a", "1", delta="fits on one GPU", delta_color="green", delta_arrow="off")
    row[1].metric("b", "2")
    a, b = _parse(row)
    assert (a.delta, a.delta_colour) == ("fits on one GPU", "green")
    assert a.arrow is None and b.delta is None and "xm-arrow" not in row.html()


def test_text_is_escaped_and_help_loses_markdown_marks():
    row = MetricRow(1)
    row[0].metric("<b>KV</b> & more", "<script>x</script>", help='**bold** and `code` "quoted"')
    html = row.html()
    assert "<script>" not in html and "<b>" not in html
    (cell,) = _parse(row)
    assert (cell.label, cell.value) == ("<b>KV</b> & more", "<script>x</script>")
    assert cell.help == 'bold and code "quoted"'


def test_cells_keep_their_places_and_rows():
    row = MetricRow(6, per_row=3)
    row[0].metric("first", "1")
    row[4].metric("fifth", "5")
    row[4].caption("under the fifth")
    cells = _parse(row)
    assert len(cells) == 6 and [c.label for c in cells] == ["first", "", "", "", "fifth", ""]
    assert cells[4].captions == ["under the fifth"]
    assert "--xm-n: 3" in row.html()


def test_bad_arguments_raise():
    with pytest.raises(ValueError):
        MetricRow(0)
    with pytest.raises(ValueError):
        MetricRow(1)[0].metric("a", "1", delta="1", delta_color="blue")


def test_a_page_draws_each_row_as_one_element():
    # Batching: the prefix-cache row (4), the static/continuous rows (8, one element) and the paging row (4)
    at = open_page("app_pages/batching.py")
    rows = [h for h in at.get("html") if 'class="xm-row"' in h.proto.body]
    assert len(rows) == 3
    assert len(row_metrics(at)) == 16
    assert not at.metric  # no st.metric left on the page
    # st.metric's "inverse": fewer prefill tokens with the cache is good news, drawn green with a down arrow
    cached = metric_element(at, "Prefill tokens, cached")
    assert (cached.delta[0], cached.arrow, cached.delta_colour) == ("-", "↓", "green")


@pytest.mark.parametrize("text, measured_em", [
    ("$1,788,187", 4.47),    # Chromium, Source Sans at 100 px: 447 px wide
    ("297.00 ms", 4.19),     # 419 px
    ("2,126 tok/s", 4.57),   # 457 px
])
def test_a_values_width_is_estimated_a_little_over_what_the_browser_draws(text, measured_em):
    # Over, so that a value sized to fit its column fits (the font shrinks by width / estimate); by at most 20 %
    # (letters are taken at the wider ones: "tok/s" 2.13 em drawn, 2.40 estimated).
    from ui.metric_row import text_width_em
    assert measured_em <= text_width_em(text) <= 1.2 * measured_em


def test_a_row_carries_its_widest_value_and_word_for_the_font_that_fits():
    from ui.metric_row import text_width_em
    row = MetricRow(2)
    row[0].metric("a", "$1,788,187")
    row[1].metric("b", "297.00 ms")
    html = row.html()
    whole, word = text_width_em("$1,788,187"), text_width_em("$1,788,187")  # the widest value is one word
    assert f"--xm-w: {whole:.2f}; --xm-word: {word:.2f}" in html
    assert 'class="xm-fit">$1,788,187<' in html
