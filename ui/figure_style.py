"""The house style of a Plotly figure: readable on a projector, log axes labelled with their magnitude.

No streamlit: the figure cache (``ui.caching``) styles a figure once when it builds it, and
``ui.charts.show_chart`` styles the figures a page built itself.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go


def fmt_tick(v: float) -> str:
    """A tick label that carries its magnitude: 0.4, 2, 50, 1k, 20k, 3M, 1e+09 (k = 10^3, M = 10^6)."""
    if abs(v) >= 1e9:
        return f"{v:.0e}"
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= size:
            return f"{v / size:g}{suffix}"
    return f"{v:.3g}"


def log_ticks(lo: float, hi: float, prefix: str = "", suffix: str = "") -> tuple[list[float], list[str]]:
    """Tick values and full labels for a log axis spanning [lo, hi] (both > 0).

    Up to two decades: 1-2-5 in every decade; up to four: 1-3; beyond: powers of ten only, every
    other one past six decades (denser when that leaves fewer than three ticks). Each label is the whole number ("$0.5", "20 ms"), not
    Plotly's bare minor-tick digit ("5").

    Raises:
        ValueError: lo or hi not positive, or lo > hi.
    """
    if not (lo > 0 and hi > 0 and lo <= hi):
        raise ValueError(f"log_ticks needs 0 < lo <= hi, got lo={lo}, hi={hi}")
    decades = np.log10(hi / lo)
    first, last = int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi)))
    choices = [(1,), (1, 3), (1, 2, 5), tuple(range(1, 10))]
    start = 0 if decades > 4 else 1 if decades > 2 else 2
    for mantissas in choices[start:]:  # the sparsest set that still gives three ticks
        stride = max(1, int(np.ceil(decades / 6))) if mantissas == (1,) else 1  # at most ~7 decade ticks
        vals = [float(f"{m * 10.0 ** e:.6g}") for e in range(first, last + 1, stride) for m in mantissas]
        vals = [v for v in vals if lo / 1.001 <= v <= hi * 1.001]
        if len(vals) >= 3:
            break
    vals = vals or [float(f"{lo:.2g}"), float(f"{hi:.2g}")]
    return vals, [f"{prefix}{fmt_tick(v)}{suffix}" for v in vals]


def _label_log_axes(fig: go.Figure) -> None:
    # Every log axis without its own tickvals gets full 1-2-5 labels over the range of its data.
    for name in [k for k in fig.layout.to_plotly_json() if re.fullmatch(r"[xy]axis\d*", k)] or ["xaxis", "yaxis"]:
        axis = fig.layout[name]
        if axis.type != "log" or axis.tickvals is not None:
            continue
        ref, letter = name.replace("axis", ""), name[0]
        values: list[float] = []
        for trace in fig.data:
            if (getattr(trace, f"{letter}axis", None) or letter) != ref:
                continue
            data = getattr(trace, letter, None)
            if data is None:
                continue
            arr = pd.to_numeric(pd.Series(np.asarray(data).ravel()), errors="coerce").to_numpy(dtype=float)
            values.extend(arr[np.isfinite(arr) & (arr > 0)].tolist())
        if axis.range is not None and None not in axis.range:
            lo, hi = 10.0 ** min(axis.range), 10.0 ** max(axis.range)
        elif values:  # Plotly pads the autorange around markers: label a little beyond the data
            lo, hi = min(values) / 1.25, max(values) * 1.25
        else:
            continue
        vals, text = log_ticks(lo, hi, axis.tickprefix or "", axis.ticksuffix or "")
        axis.update(tickmode="array", tickvals=vals, ticktext=text, tickprefix=None, ticksuffix=None)


def style_figure(fig: go.Figure) -> go.Figure:
    """Apply the house layout to ``fig`` in place and return it (readable on a projector, hover on every point).

    Log axes get tick labels that carry their magnitude (``log_ticks``) unless the page set tickvals.
    ``Figure()`` recipes arrive styled from the figure cache; ``show_chart`` styles the others.
    """
    _label_log_axes(fig)
    top = max(fig.layout.margin.t or 0, 50 if fig.layout.title.text else 20)  # more when the figure asks
    fig.update_layout(
        height=fig.layout.height or 420, margin=dict(l=10, r=10, t=top, b=10),
        font=dict(size=14), hovermode=fig.layout.hovermode or "closest",
    )
    if fig.layout.legend.orientation is None:  # a figure that placed its legend itself keeps it
        fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0))
    fig._house_styled = True
    return fig
