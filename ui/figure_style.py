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


#: The span a log axis is labelled over at most: 10^-300 to 10^300, inside a float's range with room for the
#: mantissas of a decade (9 * 10^300 is still finite), so no tick value overflows to infinity.
LOG_AXIS_FLOOR, LOG_AXIS_CEILING = 1e-300, 1e300


def log_ticks(lo: float, hi: float, prefix: str = "", suffix: str = "") -> tuple[list[float], list[str]]:
    """Tick values and full labels for a log axis spanning [lo, hi] (both > 0).

    Up to two decades: 1-2-5 in every decade; up to four: 1-3; beyond: powers of ten only, every
    other one past six decades (denser when that leaves fewer than three ticks). Each label is the whole number ("$0.5", "20 ms"), not
    Plotly's bare minor-tick digit ("5"). A span reaching beyond ``LOG_AXIS_FLOOR`` .. ``LOG_AXIS_CEILING``
    (an infinite hi included) is labelled within those bounds.

    Raises:
        ValueError: lo or hi not positive (or NaN), or lo > hi.
    """
    if not (lo > 0 and hi > 0 and lo <= hi):
        raise ValueError(f"log_ticks needs 0 < lo <= hi, got lo={lo}, hi={hi}")
    lo = min(max(lo, LOG_AXIS_FLOOR), LOG_AXIS_CEILING)
    hi = min(max(hi, LOG_AXIS_FLOOR), LOG_AXIS_CEILING)
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


def log_axis_span(axis_range, values: list[float]) -> tuple[float, float] | None:
    """The span [lo, hi] a log axis is labelled over: its ``range`` (log10 of the ends) when set, else the data
    ``values`` (finite and positive) padded by 1.25 as Plotly pads markers; None when neither gives a span.

    Ends that overflow a float (a range of [0, 400], data near 1e308 padded) are held within
    ``LOG_AXIS_FLOOR`` .. ``LOG_AXIS_CEILING``, so the span is always finite.
    """
    top, bottom = np.log10(LOG_AXIS_CEILING), np.log10(LOG_AXIS_FLOOR)
    if axis_range is not None and None not in axis_range:
        ends = pd.to_numeric(pd.Series(list(axis_range)), errors="coerce").to_numpy(dtype=float)
        if len(ends) != 2 or not np.isfinite(ends).all():
            return None
        lo_log, hi_log = (float(np.clip(e, bottom, top)) for e in (ends.min(), ends.max()))
        return 10.0 ** lo_log, 10.0 ** hi_log
    if not values:
        return None
    lo = max(min(values) / 1.25, LOG_AXIS_FLOOR)
    hi = min(max(values), LOG_AXIS_CEILING / 1.25) * 1.25
    return min(lo, hi), hi


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
        span = log_axis_span(axis.range, values)  # Plotly pads the autorange around markers: a little beyond
        if span is None:
            continue
        vals, text = log_ticks(*span, axis.tickprefix or "", axis.ticksuffix or "")
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
