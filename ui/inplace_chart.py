"""A Plotly chart that a rerun updates in place (``Plotly.react`` on the chart already drawn).

Why: ``st.plotly_chart`` (Streamlit 1.67) names its element after the figure's JSON
(``compute_and_register_element_id(..., key_as_main_identity=False, plotly_spec=...)`` in
streamlit/elements/plotly_chart.py), so a figure that changed is a new element: the frontend unmounts the
old chart and mounts a new one, and Plotly builds it from nothing (35-40 ms of main-thread time per chart
on the 2-core machine, measured with bench/browser_speed.py --attribute; a slider on the roofline page
changed three charts). This element is an ``st.components.v2`` component with a fixed key, so it stays
mounted; its JavaScript hands each new figure to ``Plotly.react``, which diffs it against the chart on
screen.

plotly.js is the copy that ships with the plotly Python package (``plotly/package_data/plotly.min.js``),
served by Streamlit's static file serving (``server.enableStaticServing``, folder ``static/``) and loaded
once per browser tab; ``ensure_plotly_js`` puts it there when the app starts.

A chart outside the window is not drawn when its figure arrives: a slider move redraws the charts in view
only. The others are drawn when they scroll into the window (an IntersectionObserver) or once the page has
been still for 0.6 s, one chart per browser task; until then they are faded. Printing draws them all.

Theme: ``st.plotly_chart`` restyles figures with Streamlit's theme; here the JavaScript reads the page's
own theme variables (text colour, background, font) on every draw, so light and dark themes both hold,
and the colour sequence comes from ``[theme.light|dark] chartCategoricalColors`` in .streamlit/config.toml.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import shutil
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
STATIC_DIR = ROOT / "static"
PLOTLY_JS = "plotly.min.js"

_JS = r"""
const SRC = "app/static/plotly.min.js?v=__PLOTLY_VERSION__";
function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__explorerPlotly) {
    window.__explorerPlotly = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = new URL(SRC, document.baseURI).href;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => { window.__explorerPlotly = null; reject(new Error("plotly.js did not load")); };
      document.head.appendChild(s);
    });
  }
  return window.__explorerPlotly;
}
function luminance(rgb) {
  const m = (rgb || "").match(/\d+(\.\d+)?/g);
  if (!m) return 1;
  return (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) / 255;
}
function themed(fig, host) {
  const cs = getComputedStyle(host);
  const text = cs.color || "#0f172a";
  const page = getComputedStyle(document.body).backgroundColor || "rgb(255,255,255)";
  const dark = luminance(page) < 0.5;
  const grid = dark ? "rgba(226,232,240,0.16)" : "rgba(15,23,42,0.10)";
  const line = dark ? "rgba(226,232,240,0.35)" : "rgba(15,23,42,0.30)";
  const muted = dark ? "#94a3b8" : "#64748b";
  const layout = Object.assign({}, fig.layout);
  // the page's own background, not transparency: a PNG from the mode bar then has it too
  layout.paper_bgcolor = page;
  layout.plot_bgcolor = page;
  // the mode bar (on hover, top right) on the page's colour: legible in both themes where it covers a legend
  layout.modebar = Object.assign({bgcolor: page, color: muted, activecolor: text}, layout.modebar || {});
  layout.font = Object.assign({family: cs.fontFamily, color: text}, layout.font || {});
  if (!layout.colorway) layout.colorway = dark ? fig.colorway_dark : fig.colorway_light;
  layout.template = {layout: {
    xaxis: {gridcolor: grid, linecolor: line, zerolinecolor: line, automargin: true,
            tickfont: {color: muted}, title: {font: {color: muted}}},
    yaxis: {gridcolor: grid, linecolor: line, zerolinecolor: line, automargin: true,
            tickfont: {color: muted}, title: {font: {color: muted}}},
    hoverlabel: {font: {family: cs.fontFamily}},
    legend: {bgcolor: "rgba(0,0,0,0)"},
  }};
  return layout;
}
// A chart in the window is drawn as soon as its figure arrives. One outside the window waits: it is drawn when
// it scrolls into the window, or once no new figure has come for STILL_MS (the reader has stopped moving
// controls), one chart per task so that a key press can come in between. While it waits it is faded, so an
// out-of-date figure never passes for the current one. (window.__explorerStillMs overrides the wait.)
const STILL_MS = 600;
function inWindow(div) {
  const r = div.getBoundingClientRect();
  const h = window.innerHeight || document.documentElement.clientHeight;
  return r.bottom > 0 && r.top < h;
}
function watchWindow(div) {
  if (div.__explorerSeen) return;
  div.__explorerSeen = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) draw(div);
  });
  div.__explorerSeen.observe(div);
}
function drawWhenStill() {
  clearTimeout(window.__explorerStill);
  const wait = window.__explorerStillMs == null ? STILL_MS : window.__explorerStillMs;
  window.__explorerStill = setTimeout(() => {
    const waiting = Array.from(document.querySelectorAll("div.explorer-plot")).filter((d) => d.__explorerPending);
    const next = () => {
      const d = waiting.shift();
      if (!d) return;
      draw(d, true);
      setTimeout(next, 0);
    };
    next();
  }, wait);
}
function draw(div, always) {
  const fig = div.__explorerPending;
  if (!fig || div.clientWidth === 0) return;  // hidden (a closed expander, another tab): drawn when shown
  if (!always && window.IntersectionObserver && !inWindow(div)) {
    if (div.__explorerFig) div.style.opacity = "0.4";
    watchWindow(div);
    drawWhenStill();
    return;
  }
  div.__explorerPending = null;
  loadPlotly().then((Plotly) => {
    Plotly.react(div, fig.data, themed(fig, div), fig.config);
    div.style.opacity = "";
    div.__explorerFig = fig;
    div.__explorerWidth = div.clientWidth;
    div.dataset.explorerDraws = String(Number(div.dataset.explorerDraws || 0) + 1);
  }).catch((e) => { div.textContent = "This chart could not be drawn: " + e.message; });
}
function bodyColour() {
  return getComputedStyle(document.body).backgroundColor;
}
function watchTheme() {
  // A theme switched in the app's settings changes the page's colours without a rerun: redraw every chart
  // in the new colours (checked once a second; a getComputedStyle call).
  if (window.__explorerThemeWatch) return;
  let last = bodyColour();
  window.__explorerThemeWatch = setInterval(() => {
    const now = bodyColour();
    if (now === last) return;
    last = now;
    document.querySelectorAll("div.explorer-plot").forEach((d) => {
      if (d.__explorerFig && !d.__explorerPending) { d.__explorerPending = d.__explorerFig; draw(d); }
    });
  }, 1000);
}
function drawAllForPrint() {
  // printing (or saving the page as PDF) shows every chart, near the window or not
  if (window.__explorerPrint) return;
  window.__explorerPrint = true;
  window.addEventListener("beforeprint", () => {
    document.querySelectorAll("div.explorer-plot").forEach((d) => draw(d, true));
  });
}
export default function (component) {
  watchTheme();
  drawAllForPrint();
  const { data, parentElement } = component;
  let div = parentElement.querySelector("div.explorer-plot");
  if (!div) {
    div = document.createElement("div");
    div.className = "explorer-plot";
    div.style.width = "100%";
    parentElement.appendChild(div);
    if (window.ResizeObserver) {
      new ResizeObserver(() => {
        const w = div.clientWidth;
        if (w === 0) return;
        if (div.__explorerPending) draw(div);
        else if (w !== div.__explorerWidth && div.__explorerFig) {
          // Drawn anew at the new width: Plotly.Plots.resize kept the old automatic margins, and a legend
          // above the plot that wrapped to another row then covered the plot's top.
          div.__explorerPending = div.__explorerFig;
          div.__explorerWidth = w;
          window.Plotly.purge(div);
          draw(div);
        }
      }).observe(div);
    }
  }
  const fig = typeof data === "string" ? JSON.parse(data) : data;
  div.style.height = (fig.layout && fig.layout.height ? fig.layout.height : 420) + "px";
  div.__explorerPending = fig;
  draw(div);
}
"""


def ensure_plotly_js() -> Path:
    """Copy plotly.js from the plotly package into ``static/`` when it is missing or differs in size.

    Returns the path the server serves as ``app/static/plotly.min.js``. Raises OSError when the folder
    cannot be written (an install on a read-only disk runs this once at build time: see deploy/Dockerfile).
    """
    import plotly

    src = Path(plotly.__file__).resolve().parent / "package_data" / PLOTLY_JS
    dst = STATIC_DIR / PLOTLY_JS
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        STATIC_DIR.mkdir(exist_ok=True)
        tmp = dst.with_name(dst.name + f".{os.getpid()}.tmp")
        shutil.copyfile(src, tmp)
        tmp.replace(dst)  # atomic: a browser never reads a half-written file
    return dst


@st.cache_resource
def available() -> bool:
    """Whether plotly.js is in ``static/`` for the browser (copied there now if it was not); False, with the
    reason logged, where the folder cannot be written: ``charts.show_chart`` then uses ``st.plotly_chart``."""
    try:
        ensure_plotly_js()
        return True
    except OSError as exc:
        logging.getLogger(__name__).warning("charts fall back to st.plotly_chart: plotly.js not in static/ (%s)", exc)
        return False


@st.cache_resource
def _component():
    import plotly

    js = _JS.replace("__PLOTLY_VERSION__", plotly.__version__)
    return st.components.v2.component("explorer_inplace_plotly", js=js, isolate_styles=False)


def colorways() -> tuple[list[str], list[str]]:
    """The light and dark themes' colour sequences (``chartCategoricalColors`` of .streamlit/config.toml);
    empty lists when the config sets none (then Plotly's own sequence applies)."""
    return (list(st.get_option("theme.light.chartCategoricalColors") or []),
            list(st.get_option("theme.dark.chartCategoricalColors") or []))


@functools.lru_cache(maxsize=8)
def _tail(config_json: str) -> str:
    """The part of ``figure_json``'s text after the figure: the config and the theme's two colour sequences
    (the theme options are read once: they hold for the life of the process)."""
    light, dark = colorways()
    return json.dumps({"config": json.loads(config_json), "colorway_light": light, "colorway_dark": dark})[1:]


def figure_json(fig, config: dict) -> str:
    """The JSON text ``show`` takes for a go.Figure: {"data", "layout", "config", "colorway_light",
    "colorway_dark"}. Arrays go as Plotly's typed-array encoding ({"dtype", "bdata"}, base64).

    A ``caching.FrozenFigure`` (the cached figures of ``caching.FIGURES``, which never change after they
    are styled) keeps its JSON after the first call, as it keeps its ``to_dict()``; any other figure, a
    presenter-mode copy included, is written anew.
    """
    import plotly.io as pio

    from ui.caching import frozen_figure_class

    config_json = json.dumps(config, sort_keys=True)
    kept = fig.__dict__.get("_explorer_json")
    if kept is not None and kept[0] == config_json:
        return kept[1]
    text = pio.to_json(fig, validate=False, remove_uids=True)[:-1] + "," + _tail(config_json)
    if isinstance(fig, frozen_figure_class()):  # only a figure that cannot change keeps its JSON
        fig.__dict__["_explorer_json"] = (config_json, text)
    return text


def recipe_json(recipe, config: dict) -> tuple[str, int]:
    """``figure_json`` of a ``caching.FigureRecipe``'s styled figure, and its height in px; from
    ``caching.FIGURE_JSON`` when any session drew the same recipe with the same config before.

    Built on dicts (``ui.fast_figure``: the same figure without Plotly's object tree, ~7x less CPU);
    a recipe that module does not reproduce (subplots, row/col) or that Plotly would refuse is built
    with Plotly (``style_figure(recipe.build())``), which raises Plotly's own error for invalid input.
    """
    import plotly.io as pio

    from ui import caching, fast_figure
    from ui.figure_style import style_figure

    config_json = json.dumps(config, sort_keys=True)
    key = recipe.key()
    cache_key = None if key is None else (key, config_json)
    if cache_key is not None:
        hit = caching.FIGURE_JSON.get(cache_key)
        if hit is not None:
            return hit
    try:
        spec = fast_figure.styled_figure_dict(recipe.calls)
        text = pio.to_json(spec, validate=False, remove_uids=True)[:-1] + "," + _tail(config_json)
        out = (text, int(spec["layout"].get("height") or 420))
    except (fast_figure.Unsupported, ValueError, TypeError):
        fig = style_figure(recipe.build())
        out = (figure_json(fig, config), int(fig.layout.height or 420))
    if cache_key is not None:
        caching.FIGURE_JSON.put(cache_key, out, size=len(out[0]) + 64)
    return out


def show(fig_json: str, key: str, height_px: int) -> None:
    """Draw the figure ``fig_json`` (``figure_json``) in the element named ``key``, ``height_px`` high.

    While ``key`` stays the same the element stays mounted across reruns: a changed figure is drawn over
    the old one (``Plotly.react``), an unchanged one is not sent again. A chart in a hidden container (a
    closed expander, another tab) is drawn when it is first shown.
    """
    _component()(data=fig_json, key=key, height=height_px)
