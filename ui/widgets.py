"""Small pieces every page uses: fragments, metric rows, the equations expander, experiment buttons,
an error message, the MBU/MFU inputs."""
from __future__ import annotations

import streamlit as st

import calc
from course.exercises import break_lines
from ui import classroom, url_state
from ui.formats import fmt_tokens, md_escape
from ui.metric_row import MetricRow
from ui.sidebar import _on_gpu_change


def fragment(func):
    """Decorator: ``func`` draws a part of a page that its own widgets rerun alone (``st.fragment``).

    How a page stays fast (measured with bench/browser_speed.py --attribute; figures on the 2-core machine):

    - A full rerun runs app.py (the sidebar, the navigation) and the whole page, sends every element again
      and has the browser reconcile all of them; a slider inside a fragment reruns only the fragment and
      sends only its elements. Put a page's controls and everything they change in one ``fragment``.
    - Anything that changes the sidebar's widgets (``experiment_buttons``, the model, the GPU) stays
      outside: a widget inside a fragment reruns only the fragment, so the sidebar would not redraw.
      Sidebar changes rerun the whole page, fragments included.
    - Read the sidebar's choices with ``selection()`` inside the fragment (a fragment rerun does not run
      app.py; ``selection()`` returns the last full run's choices). Inside a fragment, end early with
      ``return`` rather than ``st.stop()``.
    - A Plotly chart whose figure is byte-for-byte the same as last run costs the browser nothing (it is not
      sent again); a changed one is redrawn in place (``show_chart``: ``Plotly.react``, 10-24 ms of the
      browser's main thread per chart on this machine). So a chart should not change when a control only
      moves a marker on it, and a chart that does not depend on the fragment's controls belongs outside
      the fragment.
    - Server time counts twice on a shared machine (the script and the browser compete for the cores): draw
      charts through ``Figure()`` (built, styled and serialised once per distinct figure) and call calc's
      sweeps and searches through ``cached_call(func, *args)`` (memoised across sessions on the arguments).
    """
    return st.fragment(func)


def linked_selectbox(where, label: str, options, key: str, stand_in: bool = False, same=None, **kwargs):
    """A selectbox in ``where`` (a column or st) bound to the URL under ``key`` whose choice stays in the link
    whatever it is, the first option included (``ui.url_state.keep_valid``: a stale value becomes the first option,
    or the one ``same`` finds equal to it, in the session and in a link, ``url_state.accept_url_values``;
    ``stand_in`` as there). Drawn with no default (``index=None``;
    ``required``: it cannot be cleared), since Streamlit leaves a widget's default out of the link. ``kwargs``:
    st.selectbox's (help, format_func)."""
    if same is not None:  # a link's value written with what ``same`` leaves out names its option
        url_state.accept_url_values(key, options, kwargs.get("format_func", str), same=same)
    url_state.keep_valid(key, options, stand_in, same)
    return where.selectbox(label, options, index=None, required=True, key=key, bind="query-params", **kwargs)


def linked_radio(where, label: str, options, key: str, **kwargs):
    """``linked_selectbox`` for a radio: its choice stays in the link whatever it is, the first option included."""
    url_state.keep_valid(key, options)
    return where.radio(label, options, index=None, key=key, bind="query-params", **kwargs)


def metric_row(n: int, per_row: int | None = None) -> MetricRow:
    """``n`` metric cells drawn as one element when the ``with`` block ends: ``with widgets.metric_row(4) as m:
    m[0].metric(label, value, delta=..., help=...)``. Same arguments and look as st.metric in st.columns, one
    element instead of 2n + 1 (see ui/metric_row.py for the measured difference). Raises ValueError for
    ``n`` < 1."""
    return MetricRow(n, per_row)


def show_equations(rows: list[tuple[str, str]], label: str = "The equations behind these numbers",
                   key: str = "equations") -> None:
    """The equation of each headline number, filled in with the numbers on screen (``ui.equations``
    builds the rows: ``(what, latex)``), in an expander under the metrics; open in presenter mode.

    The equations are drawn only while the expander is open (opening or closing it reruns the page), so a
    slider move with the expander closed typesets no LaTeX. ``key`` names the expander's open state
    (session state); a page with two such expanders gives the second its own key.
    """
    box = st.expander(label, expanded=classroom.presenting(), icon=":material/function:", key=key,
                      on_change="rerun")
    if box.open:
        with box:
            for what, latex in rows:
                st.caption(what)
                st.latex(break_lines(latex))


def experiment_buttons(experiments: dict[str, dict[str, object]], key: str) -> None:
    """One button per experiment; a click sets ``st.session_state[k] = v`` for each pair.

    The state is set in the button's callback, which runs before the widgets of the next run, so the
    sliders move to the experiment's values.
    """
    cols = st.columns(min(len(experiments), 4) or 1)
    for i, (label, state) in enumerate(experiments.items()):
        cols[i % len(cols)].button(label, key=f"{key}_{i}", on_click=_apply_experiment, args=(dict(state),),
                                   width="stretch")


def _apply_experiment(state: dict[str, object]) -> None:
    """An experiment button's callback: set its widget values; an experiment that changes the GPU without
    naming a price moves the price as the GPU menu does (the list price, unless the user typed one), so the
    page and its link show the same dollars."""
    gpu_before = st.session_state.get("gpu")
    st.session_state.update(state)
    if "gpu" in state and "price" not in state and state["gpu"] != gpu_before:
        _on_gpu_change()


def show_error(exc: Exception) -> None:
    """A calc ValueError shown as a message on the page (as plain text: it may quote a config's values)."""
    st.error(md_escape(exc))


def utilisation_inputs(columns) -> "calc.efficiency.Utilisation":
    """Two inputs, MBU and MFU in percent (keys "mbu", "mfu", in the URL), in two of ``columns``; the course
    estimate beside the roofline bound uses them (``calc.efficiency.estimate_step``). Defaults: the
    measurements cited in ``calc/data/utilisation.json``."""
    d = calc.efficiency.default_utilisation()
    mbu = columns[0].number_input(
        "MBU, bandwidth (%)", 1.0, 100.0, round(100 * d.memory_bandwidth, 1), step=1.0, format="%.0f",
        key="mbu", bind="query-params", help="Share of the spec bandwidth a real engine reaches in decode. "
        "Default: gpt-fast (torch.compile), Llama-2-7B and Llama-3.1-8B at batch 1 on an A100, 69%; eager "
        "PyTorch reaches about 17%, sub-1B models far less.")
    mfu = columns[1].number_input(
        "MFU, compute (%)", 1.0, 100.0, round(100 * d.compute, 1), step=1.0, format="%.0f",
        key="mfu", bind="query-params", help="Share of the spec dense FLOP/s a matmul reaches. Default: the best "
        "bf16 matmul measured on an H100 SXM, 80% (A100 87%, MI300X 51%).")
    return calc.efficiency.Utilisation(mbu / 100.0, mfu / 100.0, "the page's inputs")


#: What the pages call calc.efficiency's estimate (the bound's parts divided by MBU and MFU, as the course does), so
#: that it is never confused with the serving model's estimate ("serving estimate", ui.serving_views).
COURSE_ESTIMATE = "course estimate"


def estimate_help(measures: str = "time") -> str:
    """The sentence that says what the course estimate beside a bound is (default utilisations, their source), in
    words right for the metric: ``measures`` "time" (a step, TPOT, or a cost per token: the roofline bound is a
    lower bound) or "throughput" (tokens per second: the bound, B / the bound's step, is an upper bound).

    Raises:
        ValueError: ``measures`` is neither "time" nor "throughput".
    """
    u = calc.efficiency.default_utilisation()
    divided = (f"a bandwidth utilisation of {u.memory_bandwidth:.0%} and a compute utilisation of {u.compute:.0%}, "
               "published measurements (gpt-fast, 7B-8B models at batch 1; the best H100 bf16 matmul)")
    if measures == "time":
        head = f"Bound: the roofline lower bound. Course estimate (bound / MBU and MFU): its parts divided by {divided}."
    elif measures == "throughput":
        head = ("Bound: the roofline upper bound on throughput, B / the bound's step (the most tokens per second the "
                "spec bandwidth and peak allow). Course estimate: B / the course estimate's step, whose parts are the "
                f"bound's divided by {divided}.")
    else:
        raise ValueError(f"measures must be 'time' or 'throughput', got {measures!r}")
    return (head + " The roofline page lets you change them. Not the serving estimate, which models an engine's "
            "fixed costs, batching and queueing.")


#: The context lengths every page's context slider offers, 128 tokens to 1M (a link from one page works on another).
CONTEXTS = [2**k for k in range(7, 21)]


def token_slider(where, label: str, options, key: str, value: int, **kwargs) -> int:
    """A slider in ``where`` over the token counts ``options`` (ints), shown and linked as the contexts are ("8K",
    ``fmt_tokens``), bound to the URL; a link may say "8192" as well as "8K"."""
    url_state.accept_url_values(key, options, fmt_tokens)
    return where.select_slider(label, options, value=value, key=key, bind="query-params", format_func=fmt_tokens,
                               **kwargs)


def context_slider(where, label: str, key: str, value: int = 8192, **kwargs) -> int:
    """The shared context-length slider in ``where`` (a column or st): ``CONTEXTS``, shown as "8K", bound to the URL."""
    return token_slider(where, label, CONTEXTS, key, value, **kwargs)


#: What a page of arithmetic says its figures are, past the trained window (``context_warning``'s default).
ARITHMETIC_PAST_WINDOW = ("The figures below are the arithmetic of a cache that long; the model itself does not use "
                          "a context past its window.")


def context_warning(model: calc.ModelConfig, context_len: float, where=st,
                    meaning: str = ARITHMETIC_PAST_WINDOW) -> bool:
    """A warning when ``context_len`` exceeds the model's trained window (``calc.models.beyond_trained_window``):
    the numbers below are still computed, and marked as beyond the window with the limit named; ``meaning`` (a
    sentence) says what the page's figures are at that length. True if shown."""
    limit = calc.models.beyond_trained_window(model, context_len)
    if limit is None:
        return False
    where.warning(f"Beyond the model's window: {fmt_tokens(context_len)} tokens of context, but {md_escape(model.name)} "
                  f"was trained for {limit:,} ({fmt_tokens(limit)}, max_position_embeddings). {meaning}",
                  icon=":material/warning:")
    return True


def page_intro():
    """Where a page writes its introduction (paragraphs, equations): the page itself, or, during the lecture
    (``story=N``), a closed "About this page" expander, so that the number a step talks about sits within the
    first screen (1280 x 720) under the step's banner."""
    if classroom.story_step() is not None:
        return st.expander("About this page: what it shows, its equations", expanded=False)
    return st.container()
