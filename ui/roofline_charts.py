"""The roofline page's figures: the roofline with decode and prefill on it, the step's operators on it, the
decode step split over the batch beside throughput by number of KV heads, and TTFT against prompt length.

Each takes the frames calc.sweeps and calc.operators return and builds a ``charts.Figure`` recipe; it computes
nothing but unit scaling for the axes.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from calc.kv import PLAIN_LAYOUT_FULL_KINDS
from ui import charts, formats


def operators_figure(roof: pd.DataFrame, shown_ops: pd.DataFrame):
    """Each operator of the step alone on the roofline (marker area: its share of the step's time).

    Operators at the same point (in decode every weight matmul has intensity about B, and all are memory-bound,
    so QKV, output projection, MLP, norms and LM head coincide) are drawn as one marker, named by all of them in
    the legend and beside it, whose hover lists each with its own intensity, time and share; its area is their
    summed share. No operator's position moves."""
    fig = charts.Figure()
    fig.add_scatter(x=roof["intensity_flop_per_byte"], y=roof["attainable_flops_per_s"] / 1e12, mode="lines",
                    name="roofline min(P, W x I)", line=dict(color="#888", width=3), hoverinfo="skip")
    palette = ["#8c564b", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#7f7f7f", "#9467bd"]
    drawn = [(i, r, r.flops / r.time_s / 1e12) for i, r in enumerate(shown_ops.itertuples())
             if r.time_s > 0 and r.flops > 0]  # (palette index, operator, achieved TFLOP/s)
    for group in charts.coinciding_groups([d[1].intensity_flop_per_byte for d in drawn], [d[2] for d in drawn]):
        members = sorted((drawn[j] for j in group), key=lambda d: -d[1].share_of_time)  # largest first
        i, lead, achieved = members[0]
        share = sum(r.share_of_time for _, r, _ in members)
        hover = "<br>".join(f"{r.label}: I = {r.intensity_flop_per_byte:,.1f} FLOP/byte, {a:,.1f} TFLOP/s, "
                            f"{formats.fmt_seconds(r.time_s)}, {r.share_of_time:.0%} of the operators' time, "
                            f"{r.bound}-bound" for _, r, a in members)
        together = len(members) > 1
        name = ", ".join(r.label for _, r, _ in members)
        fig.add_scatter(x=[lead.intensity_flop_per_byte], y=[achieved], mode="markers+text" if together else "markers",
                        name=f"{name} (same point)" if together else name,
                        text=["<br>".join(r.label for _, r, _ in members)] if together else None,
                        textposition="bottom right", textfont=dict(size=12),
                        marker=dict(size=8 + 16 * share ** 0.5, color=palette[i % len(palette)]),
                        hovertemplate=(f"{len(members)} operators at one point<br>" if together else "")
                                      + hover + "<extra></extra>")
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP/byte)")
    fig.update_yaxes(type="log", title="attainable FLOP/s (TFLOP/s; marker area: share of time)")
    fig.update_layout(height=420)
    return fig


def roofline_figure(roof: pd.DataFrame, ridge: float, points: pd.DataFrame, batch: int):
    """The roofline min(P, W x I), its ridge, and the decode and prefill points (filled: the chosen B)."""
    fig = charts.Figure()
    fig.add_scatter(x=roof["intensity_flop_per_byte"], y=roof["attainable_flops_per_s"] / 1e12, mode="lines",
                    name="roofline min(P, W x I)", line=dict(color="#888", width=3),
                    hovertemplate="I = %{x:,.1f} FLOP/byte<br>%{y:,.1f} TFLOP/s<extra></extra>")
    top = roof["attainable_flops_per_s"].max() / 1e12
    fig.add_scatter(x=[ridge, ridge], y=[roof["attainable_flops_per_s"].min() / 1e12, top], mode="lines",
                    name=f"ridge P/W = {ridge:,.0f} FLOP/byte", line=dict(dash="dot", color="#888"),
                    hovertemplate="ridge P/W = %{x:,.0f} FLOP/byte<extra></extra>")
    colors = {"decode": "#1f77b4", "prefill": "#d62728"}
    for r in points.itertuples():
        fig.add_scatter(x=[r.intensity_flop_per_byte], y=[r.achieved_flops_per_s / 1e12], mode="markers",
                        name=r.label, marker=dict(size=14, color=colors[r.phase],
                                                  symbol="circle" if r.phase == "prefill" or r.batch == batch else "circle-open"),
                        hovertemplate=f"{r.label}<br>I = %{{x:,.1f}} FLOP/byte<br>%{{y:,.1f}} TFLOP/s achieved<br>"
                                      f"step {formats.fmt_seconds(r.step_s)}, {r.bound}-bound<extra></extra>")
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP/byte)")
    fig.update_yaxes(type="log", title="attainable FLOP/s (TFLOP/s)")
    fig.update_layout(height=460)
    return fig


def split_and_kv_heads_figure(split: pd.DataFrame, kheads: pd.DataFrame, ceiling: int):
    """Two panels: the decode step split over the batch (weights, KV, compute beyond the weight read) with the
    memory ceiling; throughput against batch for K = N, 8, 1, each cut at its ceiling, with its knee."""
    fig = charts.Figure(subplots=dict(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=(
        "<b>The decode step, split, over the batch</b>", "<b>Throughput against batch,<br>each K cut at its memory "
        "ceiling</b>")))
    fig.update_annotations(yshift=112, font_size=15)  # the panel titles above the legends
    ms = 1e3
    for col, name, color in (("weights_s", "weight read", "#1f77b4"), ("kv_s", "KV-cache read", "#ff7f0e"),
                             ("compute_excess_s", "compute beyond the weight read", "#2ca02c")):
        fig.add_scatter(x=split["batch"], y=split[col] * ms, stackgroup="step", name=name, mode="lines",
                        line=dict(width=0.5, color=color), row=1, col=1, legend="legend",
                        hovertemplate="B = %{x}<br>" + name + ": %{y:.2f} ms<extra></extra>")
    fig.add_scatter(x=split["batch"], y=split["compute_s"] * ms, name="2NB/P (hidden below the weight read)",
                    mode="lines", line=dict(dash="dot", color="#2ca02c"), row=1, col=1, legend="legend",
                    hovertemplate="B = %{x}<br>compute 2NB/P: %{y:.2f} ms<extra></extra>")
    # The memory ceiling is named in the legend, not on the plot. No line at the chosen B: the chart then
    # stays the same when only B moves (the browser keeps an unchanged chart; B's step is in the metrics).
    if ceiling >= 1:
        charts.add_marker_line(fig, ceiling, f"memory ceiling B = {ceiling:,}", "#d62728", "dash", row=1, col=1,
                               legend="legend")
    palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b"]
    for i, (label, g) in enumerate(kheads.groupby("variant", sort=False)):
        color = palette[i % len(palette)]
        fig.add_scatter(x=g["batch"], y=g["tokens_per_s"], mode="lines", name=label, line=dict(color=color),
                        customdata=[formats.fmt_number(v) for v in g["tokens_per_s"]],  # 0.37, not 0
                        row=1, col=2, legend="legend2",
                        hovertemplate=label + "<br>B = %{x:,}<br>%{customdata} tok/s<extra></extra>")
        end = g[g["is_ceiling"]]
        fig.add_scatter(x=end["batch"], y=end["tokens_per_s"], mode="markers", showlegend=False,
                        marker=dict(symbol="x", size=12, color=color), row=1, col=2,
                        customdata=[formats.fmt_number(v) for v in end["tokens_per_s"]],
                        hovertemplate=label + "<br>memory ceiling B = %{x:,}<br>%{customdata} tok/s<extra></extra>")
        knee = g[g["is_knee"]]
        fig.add_scatter(x=knee["batch"], y=knee["tokens_per_s"], mode="markers", showlegend=False,
                        marker=dict(symbol="circle-open", size=12, color=color, line=dict(width=2)), row=1, col=2,
                        customdata=[formats.fmt_number(v) for v in knee["tokens_per_s"]],
                        hovertemplate=label + "<br>knee B = %{x:,}: cache = weights<br>%{customdata} tok/s<extra></extra>")
    fig.update_xaxes(title="batch B (sequences)", row=1, col=1)
    fig.update_yaxes(title="decode step (ms)", row=1, col=1)
    fig.update_xaxes(type="log", title="batch B (sequences, log)", row=1, col=2)
    fig.update_yaxes(title="decode throughput (tok/s)", row=1, col=2)
    legend = dict(orientation="v", yanchor="bottom", y=1.02, xanchor="left", font_size=13)
    fig.update_layout(height=560, margin=dict(t=150), legend=dict(legend, x=0.0), legend2=dict(legend, x=0.55))
    return fig


def kv_heads_caption(kheads: pd.DataFrame, model) -> tuple[bool, str]:
    """(True, the knees and ceilings of each K in words), or (False, why there is no curve) when nothing fits."""
    if kheads.empty:
        return False, ""
    kinds = set(model.layer_kinds)
    knees = kheads.groupby("variant", sort=False).first()[["n_kv_heads", "max_batch", "knee_batch",
                                                            "ceiling_tokens_per_s"]].reset_index()
    return True, (
        "Crosses: where each curve stops, the most sequences of this length that fit beside the weights. Circles: "
        "the knee, where the batch's cache equals the weights (B = weight bytes / KV; throughput is then about half "
        "of W/KV): "
        + "; ".join(f"{r.variant}: knee B = {r.knee_batch:,.0f}, ceiling B = {r.max_batch:,}"
                    for r in knees.itertuples())
        + ". Past the knee B sits in the numerator and the denominator and cancels: throughput saturates at W/KV. "
        "Fewer KV heads shrink KV; GQA's real win is the batch it unlocks (CS336 lecture 10, Inference, exercise 1). Only K changes: "
        "the K and V projections shrink with it (2LDHK parameters)."
        + (" This model uses MLA: the K = N, 8, 1 curves are plain attention with its head width, parameters kept."
           if model.attention == "mla" else "")
        + (f" Its {' and '.join(sorted(kinds & set(PLAIN_LAYOUT_FULL_KINDS)))} layers become full-attention layers "
           "of that layout, each holding every token as K and V; the MLA curve is the model as configured."
           if model.attention == "mla" and kinds & set(PLAIN_LAYOUT_FULL_KINDS) else "")
        + (" Its sparse layers stay sparse (the same block selection and indexer keys) under every K."
           if model.attention != "mla" and "sparse" in kinds else ""))


def ttft_figure(ttfts: pd.DataFrame):
    """TTFT (prefill only; in ms, s or min by the middle of its log axis) against prompt length, coloured by what
    bounds it."""
    fig = charts.Figure()
    # ms, s or min (``charts.axis_unit``) by the middle of the log axis (the geometric mean of the shortest and the
    # longest TTFT drawn), so that both ends read: 0.24 s to 179 s (Llama-3.1-405B on one H100) in s, not in ms
    times = ttfts["ttft_s"].to_numpy(float) if len(ttfts) else np.array([0.0])
    times = times[np.isfinite(times) & (times > 0)]
    k, unit = charts.axis_unit(float(np.sqrt(times.min() * times.max())) if times.size else 0.0)
    for bound, color in (("memory", "#1f77b4"), ("compute", "#d62728")):
        part = ttfts[ttfts["bound"] == bound]
        if len(part):
            fig.add_scatter(x=part["prompt_len"], y=part["ttft_s"] * k, mode="lines+markers", name=f"{bound}-bound",
                            line=dict(color=color), marker=dict(size=5),
                            hovertemplate=f"T = %{{x:,}} tokens<br>TTFT %{{y:,.{1 if unit == 'ms' else 2}f}} {unit}"
                                          "<extra></extra>")
    # No marker at the chosen T (its TTFT is in the heading): the chart stays the same when only T moves.
    fig.update_xaxes(type="log", title="prompt length T (tokens, log)")
    fig.update_yaxes(type="log", title=f"TTFT, prefill only ({unit}, log)", ticksuffix=f" {unit}")
    fig.update_layout(height=420)
    return fig
