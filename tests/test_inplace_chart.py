"""The in-place chart element (ui/inplace_chart.py): same element across reruns, figure JSON, plotly.js."""
import json

import plotly
import plotly.graph_objects as go

from ui import caching, inplace_chart
from pagetest import chart_elements, figures, open_page


def test_a_changed_figure_keeps_its_element():
    # st.plotly_chart names its element after the figure's JSON, so a changed figure was a new element
    # (unmounted and drawn from nothing); this element is named by its key only.
    at = open_page("app_pages/roofline.py")
    before = {c.proto.id: f for c, f in zip(chart_elements(at), figures(at))}
    roof_id = next(i for i in before if i.endswith("-rf_roof"))
    at.select_slider(key="rf_ctx").set_value(32768).run()
    assert not at.exception
    after = {c.proto.id: f for c, f in zip(chart_elements(at), figures(at))}
    assert roof_id in after                                  # the same element ...
    assert after[roof_id]["data"] != before[roof_id]["data"]  # ... with the new figure (S = 32,768 moves decode)
    assert set(after) == set(before)


def test_figure_json_carries_config_and_the_theme_colours():
    fig = caching.build_figure(caching.FigureRecipe().add_bar(x=["a"], y=[2.0]).update_layout(height=300))
    text = inplace_chart.figure_json(fig, {"displaylogo": False})
    spec = json.loads(text)
    assert spec["layout"]["height"] == 300 and spec["data"][0]["type"] == "bar"
    assert spec["config"] == {"displaylogo": False}
    # .streamlit/config.toml: [theme.light] chartCategoricalColors starts with the primary blue #2563eb,
    # [theme.dark] with #60a5fa
    assert spec["colorway_light"][0] == "#2563eb" and spec["colorway_dark"][0] == "#60a5fa"
    assert inplace_chart.figure_json(fig, {"displaylogo": False}) is text   # a frozen figure keeps its JSON


def test_a_plain_figure_is_written_anew_after_a_change():
    fig = go.Figure(go.Bar(x=["a"], y=[1.0]))
    first = json.loads(inplace_chart.figure_json(fig, {}))
    fig.update_layout(height=500)
    second = json.loads(inplace_chart.figure_json(fig, {}))
    assert "height" not in first["layout"] and second["layout"]["height"] == 500


def test_plotly_js_is_copied_once_from_the_plotly_package(tmp_path, monkeypatch):
    monkeypatch.setattr(inplace_chart, "STATIC_DIR", tmp_path / "static")
    dst = inplace_chart.ensure_plotly_js()
    src = plotly.__file__.rsplit("/", 1)[0] + "/package_data/plotly.min.js"
    assert dst.read_bytes() == open(src, "rb").read()
    stamp = dst.stat().st_mtime_ns
    assert inplace_chart.ensure_plotly_js() == dst and dst.stat().st_mtime_ns == stamp   # not copied again
    dst.write_bytes(b"truncated")                                                        # a damaged copy
    assert inplace_chart.ensure_plotly_js().stat().st_size == len(open(src, "rb").read())


def test_presenter_mode_reaches_the_chart_element():
    # classroom.style_figure: axis ticks 18 px and the plot at least 480 px high (the house default is 420)
    plain = figures(open_page("app_pages/quantization.py"))
    present = figures(open_page("app_pages/quantization.py", present="1"))
    assert len(plain) == len(present) == 2
    assert present[0]["layout"]["xaxis"]["tickfont"]["size"] == 18 and present[0]["layout"]["height"] >= 480
    assert "tickfont" not in plain[0]["layout"]["xaxis"]


def test_charts_fall_back_to_st_plotly_chart_where_static_cannot_be_written(monkeypatch, tmp_path):
    # A read-only install: static/ cannot be made, so plotly.js is not served; the page draws its charts
    # with st.plotly_chart instead of breaking (2 charts on the quantization page either way).
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    monkeypatch.setattr(inplace_chart, "STATIC_DIR", blocked / "static")
    inplace_chart.available.clear()
    try:
        at = open_page("app_pages/quantization.py")
        assert len(at.get("plotly_chart")) == 2 and not chart_elements(at)
    finally:
        inplace_chart.available.clear()
