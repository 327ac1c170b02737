"""Drawing a chart: ``Figure()`` recipes built once per distinct content, ``show_chart`` with the house
layout (``ui.figure_style``) in the in-place element (``ui.inplace_chart``), marker lines named in the legend.
"""
from __future__ import annotations

import math
import numbers
import os

import plotly.graph_objects as go
import streamlit as st

from ui import caching, classroom, inplace_chart
from ui.figure_style import style_figure


def add_marker_line(fig: go.Figure, x: float, name: str, color: str, dash: str = "dot", **panel) -> None:
    """A full-height vertical line at ``x`` (data units) named in the legend rather than on the plot.

    Used instead of an annotated line where the label would cross other lines or labels: the legend
    never overlaps the plot. The line is a layout shape; a legend-only trace carries its name and style.
    ``panel``: in a figure of several panels, ``row`` and ``col`` of the one it belongs to, and the
    ``legend`` ("legend2", ...) that names it.
    """
    where = {k: v for k, v in panel.items() if k in ("row", "col")}
    fig.add_vline(x=x, line_dash=dash, line_color=color, line_width=2, **where)
    fig.add_scatter(x=[None], y=[None], mode="lines", name=name, line=dict(color=color, dash=dash, width=2),
                    hoverinfo="skip", **panel)


def coinciding_groups(xs, ys, rel_tol: float = 0.01) -> list[list[int]]:
    """The points of a chart that would sit on one another, as groups of their indices.

    Two points share a group when x and y each differ by less than ``rel_tol`` relative to the larger of the
    two (1% by default: under a pixel on a log axis of a few decades), so that a marker drawn once per group
    hides none of them. Groups keep the points' order: the first point of each group comes first, and
    within a group the indices rise. A point whose x or y is not a finite number is alone in its group.

    Args:
        xs, ys: sequences of numbers of equal length (any units; the two axes' own).
        rel_tol: the relative difference below which two values count as equal, >= 0.

    Returns:
        list of lists of indices into ``xs``; every index appears exactly once.

    Raises:
        ValueError: ``xs`` and ``ys`` differ in length, or ``rel_tol`` is negative or not a number.
    """
    xs, ys = list(xs), list(ys)
    if len(xs) != len(ys):
        raise ValueError(f"xs and ys must have the same length, got {len(xs)} and {len(ys)}")
    if not (isinstance(rel_tol, numbers.Real) and rel_tol >= 0):  # NaN fails the comparison too
        raise ValueError(f"rel_tol must be a number >= 0, got {rel_tol!r}")

    def close(a: float, b: float) -> bool:
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0) if rel_tol else a == b

    groups: list[list[int]] = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        finite = all(isinstance(v, numbers.Real) and math.isfinite(v) for v in (x, y))
        home = next((g for g in groups if close(x, xs[g[0]]) and close(y, ys[g[0]])), None) if finite else None
        if home is None:
            groups.append([i])
        else:
            home.append(i)
    return groups


def Figure(*args, **kwargs) -> caching.FigureRecipe:  # noqa: N802 - stands in for go.Figure
    """A figure for ``show_chart``, written like ``go.Figure()`` but built once per distinct content and
    cached across sessions (``caching.FigureRecipe``): building a Plotly figure costs more than sending it."""
    return caching.FigureRecipe(*args, **kwargs)


#: Plotly's config for every chart: no Plotly logo and no "Share chart" button (plotly.js's default
#: ``showSendToCloud``: it offers to upload the figure to Plotly's cloud, and nothing here contacts another host).
CHART_CONFIG = {"displaylogo": False, "showSendToCloud": False, "showEditInChartStudio": False}


def show_chart(fig: go.Figure | caching.FigureRecipe, key: str) -> None:
    """Draw a Plotly figure, or a ``Figure()`` recipe, with the house layout (``style_figure``).

    The chart is ``inplace_chart``'s element: it keeps its identity (``key``) across reruns and a changed
    figure is drawn over the old one with ``Plotly.react``. With the environment variable
    ``EXPLORER_CHARTS=plotly_chart`` the app uses ``st.plotly_chart`` instead (bench/browser_speed.py
    --charts compares the two), as it does where plotly.js cannot be put in ``static/`` (a read-only install).
    """
    plotly_chart = os.environ.get("EXPLORER_CHARTS") == "plotly_chart" or not inplace_chart.available()
    if isinstance(fig, caching.FigureRecipe) and not plotly_chart and not classroom.presenting():
        text, height_px = inplace_chart.recipe_json(fig, CHART_CONFIG)   # the figure's JSON, cached as text
        inplace_chart.show(text, key=key, height_px=height_px)
        return
    if isinstance(fig, caching.FigureRecipe):
        fig = caching.build_figure(fig)
    elif not getattr(fig, "_house_styled", False):
        style_figure(fig)
    if classroom.presenting():  # on a copy: the cached figure is shared with every other session
        fig = go.Figure(fig)
        classroom.style_figure(fig)
    if plotly_chart:
        st.plotly_chart(fig, key=key, width="stretch", config=CHART_CONFIG)
        return
    inplace_chart.show(inplace_chart.figure_json(fig, CHART_CONFIG), key=key, height_px=int(fig.layout.height or 420))


def axis_unit(largest_s: float) -> tuple[float, str]:
    """(scale, suffix) of a time axis whose largest value is ``largest_s`` seconds, at the thresholds of
    ``formats.fmt_seconds``: ms under 1 s, s under 120 s, min above (a run of minutes reads "4.5 min", not
    "271,197 ms")."""
    largest_s = abs(float(largest_s)) if math.isfinite(float(largest_s)) else 0.0
    if largest_s < 1:
        return 1e3, "ms"
    if largest_s < 120:
        return 1.0, "s"
    return 1 / 60, "min"
