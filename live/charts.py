"""Plotly figures of a live run: measured points (median, p10-p90 bars) against the three predictions.

Pure (plotly + pandas, no torch): the page passes the result dict of ``LiveSession.run`` and gets
``go.Figure`` objects back, so tests can read the figure data without Streamlit.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .predict import PREDICTIONS, REPORTED_LABEL, prediction_curves

_STYLE = {"datasheet": dict(dash="dot", color="#7f7f7f"), "machine": dict(dash="dash", color="#1f77b4"),
          "calibrated": dict(dash="solid", color="#2ca02c")}
SWEEPS = {
    "prompt_len": ("prefill", "seq_len", "Prompt length (tokens)", "TTFT (ms)", "TTFT against prompt length, batch 1"),
    "prefill_batch": ("prefill", "batch", "Batch (sequences)", "TTFT (ms)", "TTFT against batch, fixed prompt"),
    "decode_batch": ("decode", "batch", "Batch (sequences)", "TPOT (ms per step)",
                     "TPOT against batch, fixed context"),
    "decode_context": ("decode", "context_len", "Context (tokens in the KV cache)", "TPOT (ms per step)",
                       "TPOT against context, batch 1"),
}


def _grid(xs) -> np.ndarray:
    lo, hi = max(1, int(min(xs))), int(max(xs))
    if hi <= lo:
        return np.array([lo])
    return np.unique(np.round(np.geomspace(lo, hi, 40)).astype(int))


def sweep_figure(result: dict, sweep: str) -> go.Figure | None:
    """Measured points (the reported statistic, ``predict.REPORTED_STAT``; error bars p10-p90; hollow markers
    for points marked unreliable) and the prediction lines of one sweep; None if no points.

    Axes: x in tokens or sequences, y in milliseconds. The decode-against-batch chart marks the
    probed machine's critical batch with a vertical line.
    """
    table: pd.DataFrame = result.get("table")
    if table is None or table.empty or sweep not in set(table["sweep"]):
        return None
    phase, xcol, xtitle, ytitle, title = SWEEPS[sweep]
    pts = table[table["sweep"] == sweep].sort_values(xcol)
    spec_steps = int(pts["seq_len"].iloc[0] - pts["context_len"].iloc[0]) if phase == "decode" else 0
    cal = result.get("calibration") or {}
    fig = go.Figure()
    xs = pts[xcol].to_numpy()
    grid = _grid(xs)
    confirmed = (pts["cal_confirmed"].astype(bool).all() if "cal_confirmed" in pts else False)
    # x of the curve's own axis (decode context curves run on seq_len = context + the timed steps)
    confirmed_x = ((float(min(xs)) + spec_steps * (sweep == "decode_context"),
                    float(max(xs)) + spec_steps * (sweep == "decode_context")) if confirmed else None)
    if sweep in ("prompt_len", "decode_context"):
        fixed = int(pts["batch"].iloc[0])
        curves = prediction_curves(result["model"]["calc_model"], result["machine"], phase, grid + spec_steps,
                                   vary="seq_len", fixed=fixed, dtype=result["model"]["dtype"],
                                   c_layer_s=cal.get("c_layer_s", 0.0), c_step_s=cal.get("c_step_s", 0.0),
                                   datasheet=result.get("datasheet"), matmul_groups=cal.get("matmul_groups"),
                                   decode_overhead=cal.get("decode_overhead"), confirmed_x=confirmed_x,
                                   prefill_overhead=cal.get("prefill_overhead"))
        curves["x"] = curves["x"] - spec_steps
    else:
        fixed = int(pts["seq_len"].iloc[0])
        curves = prediction_curves(result["model"]["calc_model"], result["machine"], phase, grid, vary="batch",
                                   fixed=fixed, dtype=result["model"]["dtype"], c_layer_s=cal.get("c_layer_s", 0.0),
                                   c_step_s=cal.get("c_step_s", 0.0), datasheet=result.get("datasheet"),
                                   matmul_groups=cal.get("matmul_groups"),
                                   decode_overhead=cal.get("decode_overhead"), confirmed_x=confirmed_x,
                                   prefill_overhead=cal.get("prefill_overhead"))
    cal_off = "cal_valid" in pts and not pts["cal_valid"].astype(bool).all()
    for key, label in PREDICTIONS.items():
        y = curves[f"{key}_s"]
        if key == "calibrated" and cal_off:
            # held-out check failed at a measured point of this sweep: the line is not drawn as valid
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="#bbbbbb", dash="solid"),
                                     name="calibrated: not drawn, off by > 2x at a measured point"))
            continue
        if y.isna().all():
            continue
        fig.add_trace(go.Scatter(x=curves["x"].tolist(), y=(y * 1e3).tolist(), mode="lines", name=label, line=_STYLE[key],
                                 hovertemplate=f"{label}<br>%{{x}}: %{{y:.3g}} ms<extra></extra>"))
    y = pts["reported_s"]
    bad = pts["unreliable"].astype(bool).tolist()
    stat = REPORTED_LABEL[phase]
    fig.add_trace(go.Scatter(
        x=[int(x) for x in xs], y=(y * 1e3).tolist(), mode="markers", name=f"measured ({stat})",
        marker=dict(size=10, color="#d62728", symbol=["circle-open" if b else "circle" for b in bad],
                    line=dict(width=2, color="#d62728")),
        error_y=dict(type="data", symmetric=False, array=((pts["p90_s"] - y) * 1e3).clip(lower=0).tolist(),
                     arrayminus=((y - pts["p10_s"]) * 1e3).clip(lower=0).tolist()),
        customdata=np.stack([pts["ratio_machine"], pts["ratio_calibrated"], pts["median_s"] * 1e3, pts["spread"],
                             [("unreliable: " + str(r or "samples spread widely"))[:160] if b else "steady"
                              for b, r in zip(bad, pts["reasons"] if "reasons" in pts else [""] * len(bad))]],
                            axis=1).tolist(),
        hovertemplate=f"measured %{{y:.3g}} ms ({stat}) at %{{x}}<br>median %{{customdata[2]:.3g}} ms, "
                      "p90/p10 %{customdata[3]:.2f} (%{customdata[4]})"
                      "<br>measured / machine roofline %{customdata[0]:.2f}"
                      "<br>measured / calibrated %{customdata[1]:.2f}<extra></extra>"))
    if any(bad):
        # a legend entry explaining the hollow markers (no data of its own)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="hollow: unreliable (disturbed; reason on hover)",
                                 marker=dict(size=10, color="#d62728", symbol="circle-open", line=dict(width=2))))
    log_x = max(xs) / max(min(xs), 1) >= 8
    if sweep == "decode_batch" and result.get("critical_batch"):
        cb = float(result["critical_batch"])
        # a vertical line as a trace in data coordinates (shapes on log axes are error-prone)
        top = float(np.nanmax([pts["p90_s"].max(), curves["machine_s"].max(), curves["calibrated_s"].max()])) * 1e3
        fig.add_trace(go.Scatter(x=[cb, cb], y=[0.0, top * 1.05], mode="lines", name=f"critical batch ≈ {cb:.0f}",
                                 line=dict(color="#9467bd", dash="dashdot"),
                                 hovertemplate=f"critical batch {cb:.1f} (P x bytes / 2W)<extra></extra>"))
    # no figure title: the page writes it above the chart, so the legend row has the top margin to itself
    fig.update_layout(xaxis_title=xtitle, yaxis_title=ytitle, hovermode="closest", meta=dict(sweep=sweep, title=title))
    if log_x:
        fig.update_xaxes(type="log")
    return fig


def ratio_figure(result: dict) -> go.Figure | None:
    """Measured / predicted for every point and each prediction (1 = exact; log y axis; hollow markers for
    points marked unreliable)."""
    table: pd.DataFrame = result.get("table")
    if table is None or table.empty:
        return None
    labels = [f"{SWEEPS[s][0]} B={b} {'T' if SWEEPS[s][0] == 'prefill' else 'S'}={c}"
              for s, b, c in zip(table["sweep"], table["batch"], table["context_len"])]
    fig = go.Figure()
    for key, label in PREDICTIONS.items():
        r = table[f"ratio_{key}"]
        if r.isna().all():
            continue
        invalid = (~table["cal_valid"].astype(bool)).tolist() if key == "calibrated" and "cal_valid" in table \
            else [False] * len(table)
        fig.add_trace(go.Scatter(x=labels, y=r.tolist(), mode="markers", name=label, marker=dict(size=9, color=_STYLE[key]["color"], line=dict(width=2, color=_STYLE[key]["color"]),
                                             symbol=["x-thin-open" if v else "circle-open" if b else "circle"
                                                     for b, v in zip(table["unreliable"], invalid)]),
                                 hovertemplate="%{x}<br>measured / predicted = %{y:.2f}<extra>" + label + "</extra>"))
    fig.add_hline(y=1.0, line=dict(color="black", width=1))
    fig.update_layout(meta=dict(sweep="ratio"), xaxis_title="point (phase, batch B, prompt T or context S in tokens)",
                      yaxis_title="measured / predicted (ratio)", hovermode="closest")
    fig.update_yaxes(type="log")
    return fig


def finite(x) -> bool:
    """True for a finite number."""
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False
