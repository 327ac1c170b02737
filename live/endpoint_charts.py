"""Plotly figures of an endpoint measurement: TTFT / TPOT against load with calc's prediction, the ITL distribution.

Pure (plotly + pandas): the page passes the levels table (``endpoint_predict.compare`` or
``levels_frame``) and gets ``go.Figure`` objects back, so tests can read the figure data.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

METRIC_TITLES = {"ttft": "TTFT (ms)", "tpot": "TPOT (ms per output token)", "e2e": "E2E latency (ms)"}
_MEASURED = "#1f77b4"
_PREDICTED = "#7f7f7f"
_ESTIMATE = "#ff7f0e"
#: The legend name of the serving estimate (``predict_levels``' ``est_<metric>_ms``, its error bar from
#: ``est_<metric>_ms_low`` to ``_high``): what an engine is expected to measure, above calc's bound.
ESTIMATE_NAME = "serving estimate (range)"
#: The legend name of calc's prediction per metric (``predict_levels``' ``pred_<metric>_ms``). TPOT's is a decode
#: step of batch c, a lower bound; TTFT's prefills all c of the level's prompts as one batch (the closed loop's
#: lockstep), which staggered arrivals, each prompt prefilled nearly alone, can beat; E2E adds that TTFT.
PREDICTED_NAMES = {"ttft": "calc's roofline: the level's prompts prefilled at once",
                   "tpot": "calc's roofline (lower bound)",
                   "e2e": "calc's roofline: prompts prefilled at once, then decode"}
_PREDICTED_HOVER = {"ttft": "roofline, the level's %{x} prompts prefilled at once",
                    "tpot": "roofline lower bound", "e2e": "roofline, prompts prefilled at once, then decode"}
#: The same at a request rate (``predict_rate_levels``): requests arrive one by one, so TTFT's bound is one prompt's
#: prefill, a lower bound; TPOT's is a decode step at the serving estimate's batch (Little's law).
RATE_PREDICTED_NAMES = {"ttft": "calc's roofline: one prompt's prefill (lower bound)",
                        "tpot": "calc's roofline at the estimate's decode batch (lower bound)",
                        "e2e": "calc's roofline at the estimate's decode batch (lower bound)"}
_RATE_PREDICTED_HOVER = {"ttft": "roofline lower bound, one prompt's prefill",
                         "tpot": "roofline lower bound at the estimate's decode batch",
                         "e2e": "roofline lower bound at the estimate's decode batch"}


def x_axis(levels: pd.DataFrame) -> tuple[str, str]:
    """The load column and its title: concurrency when the levels have it, else the request rate."""
    if levels["concurrency"].notna().any():
        return "concurrency", "Concurrency (requests in flight)"
    return "request_rate_per_s", "Request rate (requests/s, Poisson arrivals)"


def metric_figure(levels: pd.DataFrame, metric: str) -> go.Figure | None:
    """Measured p50 (markers, error bar up to p90) and p99 (hollow) of ``metric`` ("ttft", "tpot" or
    "e2e") against load, with calc's prediction (dashed, named ``PREDICTED_NAMES[metric]``, at a request rate
    ``RATE_PREDICTED_NAMES[metric]``) when the table has
    ``pred_<metric>_ms``, and the serving estimate (``ESTIMATE_NAME``, error bars from ``est_<metric>_ms_low``
    to ``_high``) when it has ``est_<metric>_ms`` and its range (TTFT and TPOT).
    Axes: x concurrency or request rate (log once the levels span more than 2x), y milliseconds (log). None when
    nothing was measured."""
    xcol, xtitle = x_axis(levels)
    pts = levels[levels[f"{metric}_ms_p50"].notna() & levels[xcol].notna()].sort_values(xcol)
    if pts.empty:
        return None
    p50, p90, p99 = (pts[f"{metric}_ms_{p}"].to_numpy(float) for p in ("p50", "p90", "p99"))
    fig = go.Figure()
    fig.add_scatter(x=pts[xcol], y=p50, mode="markers+lines", name="measured p50", line=dict(color=_MEASURED),
                    marker=dict(size=10), error_y=dict(type="data", symmetric=False, array=np.nan_to_num(p90 - p50),
                                                       arrayminus=np.zeros_like(p50), visible=True),
                    hovertemplate="%{x}: %{y:.2f} ms (p50; bar to p90)<extra></extra>")
    if np.isfinite(p99).any():
        fig.add_scatter(x=pts[xcol], y=p99, mode="markers", name="measured p99",
                        marker=dict(size=9, symbol="circle-open", color=_MEASURED),
                        hovertemplate="%{x}: %{y:.2f} ms (p99)<extra></extra>")
    pred = f"pred_{metric}_ms"
    if pred in pts and pts[pred].notna().any():
        names, hover = (PREDICTED_NAMES, _PREDICTED_HOVER) if xcol == "concurrency" else \
            (RATE_PREDICTED_NAMES, _RATE_PREDICTED_HOVER)
        fig.add_scatter(x=pts[xcol], y=pts[pred], mode="lines+markers", name=names[metric],
                        line=dict(color=_PREDICTED, dash="dash"), marker=dict(symbol="diamond", size=8),
                        hovertemplate=f"%{{x}}: %{{y:.2f}} ms, {hover[metric]}<extra></extra>")
    est, low, high = f"est_{metric}_ms", f"est_{metric}_ms_low", f"est_{metric}_ms_high"
    if {est, low, high} <= set(pts.columns) and pts[est].notna().any():
        y = pts[est].to_numpy(float)
        fig.add_scatter(x=pts[xcol], y=y, mode="lines+markers", name=ESTIMATE_NAME,
                        line=dict(color=_ESTIMATE), marker=dict(symbol="square", size=7),
                        error_y=dict(type="data", symmetric=False, array=pts[high].to_numpy(float) - y,
                                     arrayminus=y - pts[low].to_numpy(float), visible=True, color=_ESTIMATE),
                        customdata=pts[[low, high]].to_numpy(float),
                        hovertemplate="%{x}: %{y:.2f} ms, serving estimate (range %{customdata[0]:.2f}-"
                                      "%{customdata[1]:.2f} ms)<extra></extra>")
    fig.update_layout(xaxis_title=xtitle, yaxis_title=METRIC_TITLES[metric])
    # concurrencies and rates both span decades (1 to 256 clients, 1 to 5,000 requests/s): log once they spread
    fig.update_xaxes(type="log" if pts[xcol].max() > 2 * pts[xcol].min() else "linear")
    fig.update_yaxes(type="log")
    return fig


def itl_figure(itl_ms: dict) -> go.Figure | None:
    """Distribution of the inter-token latencies (ms; every chunk gap of every request) per level, as
    overlaid histograms. ``itl_ms``: level label -> list of gaps in ms. None when there are none."""
    data = {k: v for k, v in itl_ms.items() if v}
    if not data:
        return None
    fig = go.Figure()
    for label, gaps in data.items():
        fig.add_histogram(x=gaps, name=str(label), opacity=0.6, nbinsx=50,
                          hovertemplate="%{x} ms: %{y} gaps<extra></extra>")
    fig.update_layout(barmode="overlay", xaxis_title="Inter-token latency (ms)", yaxis_title="gaps",
                      legend_title_text="level")
    return fig
