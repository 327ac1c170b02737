"""The dict-built figure (ui.fast_figure) is the figure Plotly builds: the same dict, call for call.

The reference is Plotly itself: ``style_figure(recipe.build()).to_dict()`` (a go.Figure built by the same
calls, with the house style), compared after a JSON round trip (what the browser receives).
"""
import json
import random

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from tests.pagetest import open_page
from ui import caching, fast_figure, inplace_chart
from ui.caching import FigureRecipe
from ui.figure_style import log_axis_span, log_ticks, style_figure


def by_plotly(recipe: FigureRecipe) -> dict:
    return json.loads(pio.to_json(style_figure(recipe.build()), validate=False, remove_uids=True))


def by_dicts(recipe: FigureRecipe) -> dict:
    return json.loads(pio.to_json(fast_figure.styled_figure_dict(recipe.calls), validate=False, remove_uids=True))


RECIPES = {
    "lines with magic underscores and numpy data": lambda: FigureRecipe()
        .add_scatter(x=np.arange(5), y=np.linspace(1, 2, 5), mode="lines+markers", name="a", line_dash="dot",
                     line=dict(color="#123456", width=3), marker_size=7, hovertemplate="%{y:.2f}<extra></extra>")
        .add_scatter(x=[1, 2, 3], y=pd.Series([3.0, 2.0, 1.0]), customdata=np.array([[1, 2], [3, 4], [5, 6]]),
                     showlegend=False)
        .update_layout(title="A title", xaxis_title="x (s)", yaxis=dict(title=dict(text="y"), rangemode="tozero"),
                       legend_traceorder="normal"),
    "stacked bars, a labelled horizontal line": lambda: FigureRecipe()
        .add_bar(x=["1K", "2K"], y=[16.0, 16.0], name="weights")
        .add_bar(x=["1K", "2K"], y=np.array([0.5, 1.0]), name="KV", marker_color="#ff0000")
        .add_hline(y=20.0, line_dash="dash", line_color="#888888", annotation_text="HBM: 20 GB",
                   annotation_position="top left")
        .update_layout(barmode="stack", margin=dict(t=80)),
    "log axes labelled, a vertical line, shapes and annotations": lambda: FigureRecipe()
        .add_scatter(x=[1, 10, 100, 1000], y=[0.002, 0.02, 0.3, 4.0], mode="markers", name="pts")
        .add_vline(x=30, line_color="red", line_dash="dot", line_width=2)
        .add_vline(x=300, line=dict(color="blue"), annotation_text="knee", annotation_position="top right")
        .add_shape(type="rect", x0=1, x1=2, y0=0, y1=1, xref="x", yref="paper", fillcolor="grey", opacity=0.2)
        .add_annotation(x=10, y=0.02, text="here", showarrow=False, font_size=12, yshift=8)
        .update_xaxes(type="log", title="batch", ticksuffix=" req")
        .update_yaxes(type="log", tickprefix="$")
        .update_layout(hovermode="x unified", legend=dict(orientation="v"), height=300),
    "a figure started from traces and a layout": lambda: FigureRecipe(
        [go.Bar(x=["a", "b"], y=[1, 2], customdata=np.array([3.0, 4.0]))], layout=dict(title_text="t", yaxis_range=[0, 5]))
        .update_layout(title_text=None, yaxis_type="linear"),
    "three panels with titles, lines on one panel, per-panel axes": lambda: FigureRecipe(
        subplots=dict(rows=1, cols=3, subplot_titles=("<b>A</b>", "<b>B</b>", "<b>C</b>"), horizontal_spacing=0.09))
        .update_annotations(yshift=78, font_size=15)
        .add_bar(x=["a", "b"], y=[1.0, 2.0], name="w", legend="legend", row=1, col=1, marker_color="#2563eb")
        .add_hline(y=1.5, line_dash="dash", row=1, col=1, annotation_text="80 GB")
        .add_hline(y=9.0, row=1, col=3, annotation_text="on an empty panel: left out")
        .add_scatter(x=[1, 2, 4], y=[1, 3, 2], mode="lines", row=1, col=2, legend="legend2")
        .add_vline(x=2, line_color="red", row=1, col=2)
        .update_xaxes(title="format")
        .update_xaxes(type="log", row=1, col=2)
        .update_yaxes(title="memory (GB)", row=1, col=1)
        .update_layout(height=470, legend2=dict(orientation="v", x=0.37), margin=dict(t=115)),
    "a second y axis set by name": lambda: FigureRecipe()
        .add_scatter(x=[1, 2], y=[1, 2]).add_scatter(x=[1, 2], y=[10, 1000], yaxis="y2")
        .update_layout(yaxis2=dict(type="log", overlaying="y", side="right"))
        .update_yaxes(showgrid=False),
}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_built_on_dicts_is_the_figure_plotly_builds(name):
    assert by_dicts(RECIPES[name]()) == by_plotly(RECIPES[name]())


def test_the_log_axis_labels_and_house_style_are_applied_on_dicts():
    spec = by_dicts(RECIPES["log axes labelled, a vertical line, shapes and annotations"]())
    # data 1..1000 padded by 1.25 -> 0.8..1250: three decades and a bit -> 1-3 ticks: 1, 3, 10, ..., 1000
    assert spec["layout"]["xaxis"]["tickvals"] == [1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0]
    assert spec["layout"]["xaxis"]["ticktext"][-1] == "1k req" and "ticksuffix" not in spec["layout"]["xaxis"]
    assert spec["layout"]["height"] == 300 and spec["layout"]["font"]["size"] == 14
    assert spec["layout"]["legend"] == {"orientation": "v"}       # a legend placed by the page is kept


def test_a_log_axis_over_huge_or_overflowing_spans_gets_finite_ticks():
    """Data near the float limit padded by 1.25 overflowed to infinity (OverflowError in log_ticks); a range of
    [0, 400] (10^400) did too. Both paths now label within 10^-300 .. 10^300 and agree with each other."""
    recipe = lambda: (FigureRecipe().add_scatter(x=[1.0, 1e308], y=[5e-324, 2.0], mode="markers")
                      .update_xaxes(type="log").update_yaxes(type="log", range=[0, 400]))
    spec = by_dicts(recipe())
    assert spec == by_plotly(recipe())
    x, y = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
    # 0.8 .. 1e300 (held there): powers of ten every 51 decades from 10^-1 (about seven ticks at most)
    assert x["tickvals"] == [1e50, 1e101, 1e152, 1e203, 1e254] and x["ticktext"][0] == "1e+50"
    assert y["tickvals"] == [1.0, 1e50, 1e100, 1e150, 1e200, 1e250, 1e300]
    assert all(np.isfinite(v) for v in x["tickvals"] + y["tickvals"])


def test_log_ticks_hold_an_infinite_end_and_refuse_nan():
    vals, text = log_ticks(10.0, float("inf"), suffix=" ms")
    assert vals == [10.0, 1e51, 1e101, 1e151, 1e201, 1e251] and text[:2] == ["10 ms", "1e+51 ms"]
    assert log_axis_span(None, [2.0, 8.0]) == (1.6, 10.0)                 # the data padded by 1.25
    assert log_axis_span([1, 3], []) == (10.0, 1000.0)                   # a set range, log10 of the ends
    assert log_axis_span([0, float("nan")], [2.0]) is None               # a broken range: Plotly's own ticks
    with pytest.raises(ValueError, match="0 < lo <= hi"):
        log_ticks(float("nan"), 3.0)


def test_what_the_dicts_do_not_reproduce_is_left_to_plotly():
    sub = FigureRecipe(subplots=dict(rows=1, cols=2)).add_scatter(x=[1], y=[1], row=1, col=2).add_vline(x=1)
    with pytest.raises(fast_figure.Unsupported):                           # a line over every panel
        fast_figure.styled_figure_dict(sub.calls)
    caching.FIGURE_JSON.clear()
    text, height = inplace_chart.recipe_json(sub, {})
    spec = json.loads(text)                                                # built by Plotly, styled
    assert spec["data"][0]["xaxis"] == "x2" and height == 420
    assert [s["xref"] for s in spec["layout"]["shapes"]] == ["x2"]         # Plotly skips the empty panel
    with pytest.raises(ValueError):                                        # Plotly's own refusal
        inplace_chart.recipe_json(FigureRecipe().add_scatter(x=[1], y=[1], mode="nonsense"), {})


def test_the_drawn_json_is_cached_as_text_once_per_recipe_and_config():
    caching.FIGURE_JSON.clear()
    recipe = RECIPES["stacked bars, a labelled horizontal line"]
    first = inplace_chart.recipe_json(recipe(), {"displaylogo": False})
    assert inplace_chart.recipe_json(recipe(), {"displaylogo": False}) is first
    assert inplace_chart.recipe_json(recipe(), {}) is not first
    assert len(caching.FIGURE_JSON) == 2
    spec = json.loads(first[0])
    assert spec["config"] == {"displaylogo": False} and first[1] == 420
    assert caching.FIGURE_JSON.total_bytes < 3 * len(first[0])           # charged by its length


@pytest.mark.parametrize("page", ["kv_cache", "roofline", "latency_cost", "quantization", "batching", "many_gpus",
                                  "monthly_bill", "speculative", "workloads", "measured"])
def test_every_chart_a_page_draws_is_the_figure_plotly_builds(page, monkeypatch):
    """Each chart of the page at open and after random slider moves: the dict-built JSON equals Plotly's (and
    none falls back to Plotly: a chart that did would cost a class server ~7x the CPU)."""
    seen = []
    plain = inplace_chart.recipe_json

    def checked(recipe, config):
        text, height = plain(recipe, config)
        fast_figure.styled_figure_dict(recipe.calls)   # every chart of these pages takes the dict path
        fig = style_figure(recipe.build())
        assert json.loads(text) == json.loads(inplace_chart.figure_json(fig, config))
        assert height == int(fig.layout.height or 420)
        seen.append(recipe)
        return text, height

    monkeypatch.setattr(inplace_chart, "recipe_json", checked)
    caching.FIGURE_JSON.clear()
    at = open_page(f"app_pages/{page}.py")
    rng = random.Random(page)
    for _ in range(3):
        sliders = [s for s in at.slider if not s.proto.disabled and isinstance(s.value, (int, float))]
        if not sliders:
            break
        s = rng.choice(sliders)
        steps = int(round((s.max - s.min) / s.step)) if s.step else 0
        s.set_value(type(s.value)(s.min + s.step * rng.randint(0, steps))).run()
        assert not at.exception, at.exception
    assert seen
