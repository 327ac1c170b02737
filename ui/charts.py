"""Drawing a chart: ``Figure()`` recipes built once per distinct content, ``show_chart`` with the house
layout (``ui.figure_style``) in the in-place element (``ui.inplace_chart``), marker lines named in the legend.
"""
from __future__ import annotations

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
