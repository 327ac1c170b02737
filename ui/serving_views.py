"""The serving model's estimate on a page: an engine selector, the estimate with its range beside the
roofline bound, and "where the time goes" (bound parts -> fixed costs -> efficiency -> batching
interference -> queue -> estimate). Every number comes from ``calc.serving``; this module only formats."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from calc import cost as calc_cost
from calc import measurements, serving, serving_params
from calc.serving_terms import SOFTWARE_LATEST_DAY, SOFTWARE_LATEST_RELEASE, release_on, version_day
from ui import caching, charts, columns, formats, html_table, url_state, widgets
from ui.charts import axis_unit

#: The engines a page offers (calc.serving_params has fitted parameters for each; others fall back).
ENGINES = ("vllm", "sglang", "trtllm")
_ESTIMATE_WORDS = ("**Serving estimate**: what the chosen engine measures, fitted to published benchmarks "
                   "(calc/data/serving_params.json), with its range from the cross-validated errors")
#: Added to ``_ESTIMATE_WORDS`` where a coverage notice widened the range (``calc.serving_params.widened_range``).
_WIDENED_ESTIMATE_WORDS = ", widened to the held-out misses the notice above names"


def estimate_words(notices=None) -> str:
    """What the serving estimate and its range are, in Markdown without a final full stop: the range from the
    cross-validated errors, or, where one of the estimate's ``notices`` (strings, e.g. ``ServingEstimate.notices``
    or a frontier's ``attrs["notices"]``; None: none) says a thinly covered trait widened it
    (``calc.serving_params.widened_range``), that range widened to the held-out misses that notice names."""
    return _ESTIMATE_WORDS + (_WIDENED_ESTIMATE_WORDS if serving_params.widened_range(notices) else "")


def bound_and_estimate(measures: str = "time", notices=None) -> str:
    """What the two numbers are, said once on every page that shows both, in words right for what its chart or
    metrics measure: ``measures`` "time" (TPOT, TTFT: the roofline bound is a lower bound, and the throughput it
    implies an upper bound) or "throughput" (tokens per second: the bound is an upper bound, the most that the
    spec bandwidth and peak allow). ``notices``: the estimate's notices, which say whether its range is the
    cross-validated one or was widened (``estimate_words``). Markdown, no final full stop.

    Raises:
        ValueError: ``measures`` is neither "time" nor "throughput".
    """
    spec = "every byte at the spec bandwidth, every FLOP at the spec peak"
    if measures == "time":
        bound = (f"**Bound**: the roofline lower bound on each time ({spec}), so an upper bound on throughput: "
                 "the teaching number")
    elif measures == "throughput":
        bound = (f"**Bound**: the roofline upper bound on throughput ({spec}: each step at its lower bound on "
                 "time), the most tokens per second physics allows, which no engine passes: the teaching number")
    else:
        raise ValueError(f"measures must be 'time' or 'throughput', got {measures!r}")
    return f"{bound}. {estimate_words(notices)}"


#: What the two numbers are where times lead (the serving estimate's block: TPOT or TTFT, then throughput), for an
#: estimate whose range is the cross-validated one (``bound_and_estimate`` with its notices says which range).
BOUND_AND_ESTIMATE = bound_and_estimate("time")


def current_release(engine: str) -> str:
    """The software an estimate assumes, for calc's engine id ``engine``: the newest release date in the benchmarks,
    which the estimate takes for every engine, naming that engine and its release current on that day
    (``calc.serving_terms.release_on``), so that an SGLang estimate does not read as vLLM's.
    Example: for "sglang", "a current release of SGLang: its software as of 2026-05-29 (SGLang <release> then), the
    day the newest release of any engine in the benchmarks came out (vLLM 0.22.0), ..."."""
    name = measurements.engine_name(engine)
    then = release_on(engine, SOFTWARE_LATEST_DAY)
    latest = SOFTWARE_LATEST_RELEASE.split(" of ")[0]
    if f"{name} {then}" == latest:  # the engine of the newest release itself
        return (f"a current release of {name}: {latest} of {SOFTWARE_LATEST_DAY.isoformat()}, the newest release of "
                "any engine in the benchmarks, to whose day the serving estimate dates every engine's software; "
                "later releases may be faster")
    return (f"a current release of {name}: its software as of {SOFTWARE_LATEST_DAY.isoformat()}"
            + (f" ({name} {then} then)" if then else "")
            + f", the day the newest release of any engine in the benchmarks came out "
              f"({SOFTWARE_LATEST_RELEASE.split(' of ')[0]}), to which the serving estimate dates every engine's "
              "software; later releases may be faster")


def which_is_which(engine: str, engine_version: str = "", notices=None) -> str:
    """What the bound and the estimate are (``bound_and_estimate`` of times), as a caption: for ``engine``'s current
    release, or for the software of ``engine_version`` where an estimate took one (a run's date, "YYYY-MM-DD", or a
    release number: ``calc.serving.serving_estimate``'s), so the caption and the estimate's notice name the same
    software. ``notices``: the estimate's (``ServingEstimate.notices``), so that the caption says whether the range
    shown is the cross-validated one or one a coverage notice widened; None: the cross-validated one."""
    return (f"{bound_and_estimate('time', notices)}, "
            f"for {version_words(engine, engine_version) or current_release(engine)}.")


def version_words(engine: str, engine_version: str) -> str:
    """The software an estimate took from ``engine_version``, in words: "vLLM's software as of 2025-06-01 (vLLM
    0.9.0.1 then)" for a date (past the newest release in the benchmarks, that the fitted gain stops there), "vLLM
    0.9.0" for a release number; "" for none (a current release, ``current_release``)."""
    if not engine_version:
        return ""
    name = measurements.engine_name(engine)
    day = version_day(engine_version)
    if day is None:
        return f"{name} {engine_version}"
    then = release_on(engine, day)
    later = (f"; the fitted gain of later releases stops at {SOFTWARE_LATEST_DAY.isoformat()}, the newest in the "
             "benchmarks" if day > SOFTWARE_LATEST_DAY else "")
    return f"{name}'s software as of {day.isoformat()}" + (f" ({name} {then} then{later})" if then else
                                                           (f" ({later[2:]})" if later else ""))
#: What the bound's throughput beside the estimate's counts (``ServingEstimate.bound_output_tokens_per_s_per_gpu``:
#: the decode batch over the bound's TPOT, no prefill), said on the metric itself.
BOUND_THROUGHPUT_WORDS = ", decode steps only"
#: What the throughput metric adds at a request rate: the rate sets the throughput, the bound's is what the same
#: batch could give if the engine ran at the roofline.
RATE_THROUGHPUT_WORDS = (" At a request rate the throughput is the rate's (requests/s x output tokens, per GPU) while "
                         "the deployment keeps up; a run of N requests reports fewer, N over the span of their "
                         "arrivals plus the last one's latency, as a benchmark divides it; the bound's is what the "
                         "same decode batch would give at the roofline, the headroom, not a contradiction.")
#: The breakdown figure's marker of the serving estimate and its range (tests find the figure by it).
ESTIMATE_TRACE = "serving estimate and range"
#: The breakdown figure's default name of a measured time's marker (``breakdown_figure``'s ``measured_s``).
MEASURED_TRACE = "measured"
#: Colours of the breakdown's parts (bound parts blue shades, engine costs warm).
_COLOURS = {"weights": "#1f77b4", "KV cache": "#6baed6", "compute": "#9467bd", "communication": "#17becf",
            "fixed costs (per step, per request)": "#ff7f0e", "efficiency": "#d62728",
            "batching interference": "#e377c2", "speculative draft": "#bcbd22", "queueing": "#8c564b"}


def engine_select(container, key: str, disabled: bool = False) -> str:
    """A selectbox of the serving engines (URL-bound under ``key``); returns calc's engine name. A link may name
    the engine by calc's id ("sglang", "trtllm") or by its name in any letter case ("SGLang", "tensorrt-llm"); the
    URL then holds the name the selectbox shows ("SGLang"), the one form the app writes. ``disabled``: shown
    greyed (its value kept) where nothing follows the estimate."""
    url_state.accept_url_values(key, ENGINES, measurements.engine_name)
    return container.selectbox("Serving engine", ENGINES, key=key, bind="query-params",
                               format_func=measurements.engine_name, disabled=disabled,
                               help="The engine whose fitted fixed costs and scheduler settings the serving "
                                    "estimate uses (calc.serving_params).")


#: The self-hosted tier's two timings (calc.bill.TIMINGS), as the pricing control names them.
TIMING_LABELS = {"serving": "serving estimate", "bound": "roofline bound"}


def timing_select(key: str, default: str = "serving") -> tuple[str, str]:
    """The control "Price self-hosting with" (serving estimate / roofline bound: ``calc.bill.TIMINGS``, URL-bound
    under ``key``_timing; a link may name either by its value or its label) beside the engine selector
    (``key``_engine, greyed with the bound), in one row where the caller is. Returns (timing, engine): calc's
    names, for ``calc.bill.SelfHostedSetup``."""
    left, right = st.columns(2)
    url_state.accept_url_values(f"{key}_timing", list(TIMING_LABELS), TIMING_LABELS.get)
    timing = left.radio("Price self-hosting with", list(TIMING_LABELS), index=list(TIMING_LABELS).index(default),
                        format_func=TIMING_LABELS.get, key=f"{key}_timing", bind="query-params",
                        help="Serving estimate: the GPU time the chosen engine measures at this batch and these "
                             "lengths (calc.serving, fitted to published benchmarks), with its range. Roofline bound: "
                             "the least time physics allows (the course's number); real engines measure well below "
                             "its throughput, so it rents too few GPUs.")
    engine = engine_select(right, f"{key}_engine", disabled=timing != "serving")
    return timing, engine


def follows_text(timing: str, engine: str) -> str:
    """The words that say which timing a self-hosted number follows: "serving estimate (vLLM)" or "roofline
    bound"."""
    return (f"serving estimate ({measurements.engine_name(engine)})" if timing == "serving"
            else TIMING_LABELS["bound"])


#: The words for a self-hosted replica's decode rate wherever it is shown (``calc.bill.SelfHostedRates.decode_tokens_per_s``).
DECODE_ONLY = "decode-only rate, with the prompts' prefill priced apart"


def batch_notes(rates) -> list[str]:
    """Sentences on a self-hosted replica's batch (``calc.bill.SelfHostedRates``): that the decode batch was reduced
    from the one typed to what fits in memory at its context (``calc.step.max_batch``), and, with a serving
    estimate, why the estimate decodes fewer than the requests in flight at once (what caps its decode batch,
    ``ServingEstimate.batch_limit``). Empty when neither applies."""
    notes = []
    asked = getattr(rates, "requested_batch", None)
    if asked is not None and rates.batch < asked:
        notes.append(f"Decode batch reduced from {asked:,} to {rates.batch:,}: what fits in memory at a "
                     f"{rates.context_len:,}-token context (each sequence at its mean while decoding, prompt + "
                     "output / 2).")
    est = getattr(rates, "estimate", None)
    if est is not None and round(est.decode_batch) < rates.batch:
        why = serving.BATCH_LIMIT_WHY.get(est.batch_limit, f"its {est.batch_limit} allows no more")
        notes.append(f"The serving estimate decodes {est.decode_batch:,.0f} of the {rates.batch:,} requests in flight "
                     f"at once ({measurements.engine_name(est.engine)}: {why}; the rest wait).")
    return notes


def self_hosted_pricing(timing: str, engine: str, bills_usd: tuple, other_usd: float | None, serving_rates, key: str,
                        what: str = "The self-hosted bill", other_error: Exception | None = None, rates=None,
                        context_warning: str | None = None, warn_context: bool = True) -> None:
    """Under a page's self-hosted bill: which timing it follows, its range, the other timing's bill beside it, and
    the self-hosted replica's TPOT breakdown (``show_estimate``) in an expander, built only while open.

    Args:
        timing, engine: the page's choice (``timing_select``).
        bills_usd: (low, central, high) USD per month at the chosen timing (``calc.bill.self_hosted_bill_range``;
            the three are equal for the bound).
        other_usd: the central bill at the other timing, USD per month (None when it could not be priced,
            ``other_error`` saying why).
        serving_rates: the ``calc.bill.SelfHostedRates`` of timing "serving" (chosen or not), whose ``estimate`` the
            breakdown shows; None when the estimate could not be made.
        key: widget key prefix.
        what: the bill's name in the sentence.
        rates: the chosen timing's ``SelfHostedRates``: its reduced batch (``batch_notes``) and, unless
            ``context_warning`` is given, its ``context_notice`` are shown by the bill (st.warning, st.caption).
        context_warning: a page's own warning of contexts past the model's trained one (it replaces the rates').
        warn_context: False where the page warns of the context itself, elsewhere: no second warning here.
    Beside the bill, too: the serving estimate's other notices (st.info) when the bill follows it.
    """
    low, mid, high = (float(x) for x in bills_usd)
    name = measurements.engine_name(engine)
    same = other_usd is not None and formats.fmt_usd(other_usd) == formats.fmt_usd(mid)
    alike = "prices it the same (the traffic needs the same whole replicas either way)"
    if timing == "serving":
        span = ("the same at both ends of the estimate's throughput range"
                if formats.fmt_usd(low) == formats.fmt_usd(high) else
                f"range {formats.fmt_usd(low)} - {formats.fmt_usd(high)} from the estimate's throughput range "
                "(its low throughput rents the most GPUs)")
        said = (f"**{what} follows the serving estimate** ({name}, continuous batching): "
                f"**{formats.fmt_usd(mid)}** a month, {span}")
        other = (f"the roofline bound {alike}" if same else
                 f"the roofline bound would price it at {formats.fmt_usd(other_usd)}" if other_usd is not None else
                 f"the roofline bound cannot price it ({formats.md_escape(other_error)})")
    else:
        said = (f"**{what} follows the roofline bound**: **{formats.fmt_usd(mid)}** a month, the least the GPUs "
                "could cost (real engines measure well below the bound's throughput)")
        other = (f"the serving estimate ({name}) {alike}" if same else
                 f"the serving estimate ({name}) would price it at {formats.fmt_usd(other_usd)}"
                 if other_usd is not None else
                 f"the serving estimate cannot price it ({formats.md_escape(other_error)})")
    st.markdown(f"{said}; {other}.")
    beyond = context_warning or getattr(rates, "context_notice", None)
    if beyond and warn_context:
        st.warning(f"Self-hosted tier: {formats.md_escape(beyond)}.", icon=":material/warning:")
    chosen = getattr(rates, "estimate", None) if timing == "serving" else None
    if chosen is not None:
        show_notices(n for n in chosen.notices if n != getattr(rates, "context_notice", None))
    notes = batch_notes(rates) if rates is not None else []
    if notes:
        st.caption(" ".join(notes))
    est = getattr(serving_rates, "estimate", None)
    if est is None:
        return
    box = st.expander(f"Where the self-hosted replica's time goes: TPOT, serving estimate ({name}) beside the bound",
                      key=f"{key}_tpot", on_change="rerun")
    if box.open:
        with box:
            r = serving_rates
            # the notices stand beside the bill already (with the serving estimate's timing), and the page's own
            # context warning: not a second time in here
            shown = set(est.notices) if timing == "serving" else {beyond, getattr(r, "context_notice", None)}
            show_estimate(est, key, "tpot", price_per_gpu_hour_usd=r.replica_price_per_hour_usd / r.gpus_per_replica,
                          notices=[n for n in est.notices if n not in shown])
            st.caption(f"One replica: {r.gpus_per_replica} GPU{'s' if r.gpus_per_replica != 1 else ''}, "
                       f"{r.batch:,} requests in flight, each its whole prompt and output at a mean context of "
                       f"{r.context_len:,} tokens. " + " ".join(batch_notes(r)) + " The bill prices decode at the "
                       f"estimate's {DECODE_ONLY}: {formats.fmt_number(r.decode_tokens_per_s)} tok/s per replica "
                       f"({formats.fmt_usd(r.output_usd_per_mtok)} per 1M output tokens when busy, prefill not "
                       "included; the USD per 1M above includes the prompts' prefill): the prompts' prefill is "
                       "taken out at the bound's rate, since the bill charges the prompt tokens that miss the prefix "
                       "cache apart.")


def estimate(*args, **kwargs) -> serving.ServingEstimate:
    """``calc.serving.serving_estimate`` through the app's bounded cache (same arguments)."""
    return caching.cached_call(serving.serving_estimate, *args, **kwargs)


def frontier(*args, **kwargs) -> pd.DataFrame:
    """``calc.serving.serving_frontier`` through the app's bounded cache (same arguments)."""
    return caching.cached_call(serving.serving_frontier, *args, **kwargs)


def show_notices(notices) -> None:
    """Each fallback the serving model took (an engine or accelerator without fitted parameters), as st.info."""
    for n in notices or ():
        st.info(f"Serving model: {formats.md_escape(str(n).rstrip('.'))}.")


def range_text(low_s: float, high_s: float) -> str:
    """'range 5.1 ms - 7.9 ms' for a time range in seconds."""
    return f"range {formats.fmt_seconds(low_s)} - {formats.fmt_seconds(high_s)}"


def breakdown_frame(est: serving.ServingEstimate) -> pd.DataFrame:
    """The TPOT and TTFT breakdowns as one table (columns part, tpot_s, ttft_s; seconds): a row per part in the
    order of ``TimeBreakdown.parts``, the fixed costs followed by their own parts (``calc.serving.FIXED_PARTS``,
    "↳ of which: ...", those not zero in both), then the bound, the estimate and its range."""
    rows = []
    tpot, ttft = est.tpot.parts(), est.ttft.parts()
    fixed_tpot, fixed_ttft = dict(est.tpot.fixed_parts), dict(est.ttft.fixed_parts)
    for name in tpot:
        rows.append({"part": name, "tpot_s": tpot[name], "ttft_s": ttft.get(name, 0.0)})
        if name.startswith("fixed costs"):
            for key, words in serving.FIXED_PARTS.items():
                a, b = fixed_tpot.get(key, 0.0), fixed_ttft.get(key, 0.0)
                if a > 0 or b > 0:
                    rows.append({"part": f"↳ of which: {words}", "tpot_s": a, "ttft_s": b})
    for label, attr in (("lower bound", "bound_s"), ("serving estimate", "estimate_s"), ("range low", "low_s"),
                        ("range high", "high_s")):
        rows.append({"part": label, "tpot_s": getattr(est.tpot, attr), "ttft_s": getattr(est.ttft, attr)})
    return pd.DataFrame(rows)


def show_breakdown_table(est: serving.ServingEstimate) -> None:
    """``breakdown_frame`` of ``est`` as a table at full height: every row shows, the range's ends last, with no
    inner scrolling."""
    frame = breakdown_frame(est)
    html_table.show_table(columns.shown(frame), hide_index=True, width="stretch", height=38 + 35 * len(frame),
                          column_config=columns.config(frame.columns))


def breakdown_figure(est: serving.ServingEstimate, which: str = "tpot", measured_s: float | None = None,
                     measured_label: str = MEASURED_TRACE, label: str | None = None):
    """One horizontal stacked bar of ``which`` ("tpot" or "ttft"): the bound's parts, then what the engine adds,
    with the range as an error bar on the total. With ``measured_s`` (seconds; None or NaN: none), a marker of the
    measured time on the same bar, named ``measured_label`` (``MEASURED_TRACE`` by default), the breakdown's last
    step: bound -> fixed costs -> efficiency -> batching interference -> estimate -> measured. Axis: ms, s or min
    by the largest time drawn (``axis_unit``). ``label``: the bar's name (default ``which`` in capitals; "ITL"
    where the bar is a benchmark's gap between chunks)."""
    tb = getattr(est, which)
    name_y = label or which.upper()
    seen = measured_s is not None and math.isfinite(measured_s)  # None or NaN: nothing measured
    k, unit = axis_unit(max(tb.high_s, tb.estimate_s, measured_s if seen else 0.0))
    fig = charts.Figure()
    for name, value in tb.parts().items():
        if value <= 0:
            continue
        fig.add_bar(x=[value * k], y=[name_y], orientation="h", name=name,
                    marker=dict(color=_COLOURS.get(name, "#7f7f7f")),
                    hovertemplate=f"{name}: %{{x:.3f}} {unit}<extra></extra>")
    fig.add_scatter(x=[tb.estimate_s * k], y=[name_y], mode="markers", name=ESTIMATE_TRACE,
                    marker=dict(color="black", symbol="line-ns-open", size=18),
                    error_x=dict(type="data", symmetric=False, array=[(tb.high_s - tb.estimate_s) * k],
                                 arrayminus=[(tb.estimate_s - tb.low_s) * k]),
                    hovertemplate=f"serving estimate %{{x:.3f}} {unit}<extra></extra>")
    if seen:
        fig.add_scatter(x=[measured_s * k], y=[name_y], mode="markers", name=measured_label,
                        marker=dict(color="#ffd92f", symbol="diamond", size=14, line=dict(color="black", width=1.5)),
                        hovertemplate=f"{measured_label} %{{x:.3f}} {unit}<extra></extra>")
    fig.add_vline(x=tb.bound_s * k, line=dict(color="#2ca02c", dash="dash"),
                  annotation_text="bound", annotation_position="top")
    fig.update_layout(barmode="stack", height=200, margin=dict(l=10, r=10, t=30, b=10),
                      legend=dict(orientation="h", y=-0.35, traceorder="normal"))
    fig.update_xaxes(ticksuffix=f" {unit}")
    return fig


def single_output_note(prompt_len: int, priced: bool) -> str:
    """What the per-output-token figures mean when a request has one output token (``prompt_len`` prompt tokens):
    each output token then carries its whole prompt's prefill. ``priced``: the block shows USD per 1M output
    tokens too."""
    figures = "output tok/s per GPU and the USD per 1M output tokens" if priced else "output tok/s per GPU"
    return (f"One output token per request: every request is its whole prompt's prefill ({prompt_len:,} tokens) for "
            f"a single output token, so the {figures} (serving estimate and bound alike) carry all of that prefill, "
            f"{prompt_len:,} prompt tokens per output token, and sit far from a chat's. They price a "
            "classification or scoring call, not generation; more output tokens per request give a chat's figures.")


def percentile_words(est: serving.ServingEstimate) -> str:
    """The 99th percentiles of ``est`` in a sentence (``ServingEstimate.ttft_p99_s`` ...: what a service level is
    set on), each beside its mean, with the conventions they follow; "" where it has none. Example: "99th percentile
    of the requests (serving estimate, calc.serving_tails), beside the mean: TTFT 246 ms (mean 117 ms), TPOT 32.70 ms
    (29.70 ms), ITL 85.10 ms (29.70 ms: the slowest gaps are the steps that carry a prompt chunk), end-to-end 41.2 s
    (8.99 s). Outputs ending at end-of-text, ..."."""
    fmt = formats.fmt_seconds
    chunk = est.itl_p99_s > 1.5 * max(est.tpot_p99_s, est.itl_s)
    parts = [(name, v, mean, why) for name, v, mean, why in (
        ("TTFT", est.ttft_p99_s, est.ttft.estimate_s, ""), ("TPOT", est.tpot_p99_s, est.tpot.estimate_s, ""),
        ("ITL", est.itl_p99_s, est.itl_s, ": the slowest gaps are the steps that carry a prompt chunk" if chunk else ""),
        ("end-to-end", est.e2e_p99_s, est.e2e_s, "")) if math.isfinite(v)]
    if not parts:
        return ""
    said = ", ".join(f"{name} {fmt(v)} ({'mean ' if k == 0 else ''}{fmt(mean)}{why})"
                     for k, (name, v, mean, why) in enumerate(parts))
    return (f"99th percentile of the requests (serving estimate, calc.serving_tails), beside the mean: {said}. "
            f"{est.tail_words[:1].upper()}{est.tail_words[1:]}.")


def show_estimate(est: serving.ServingEstimate, key: str, which: str = "tpot", price_per_gpu_hour_usd=None,
                  title: str | None = None, prompt_len: int | None = None, output_len: int | None = None,
                  measured_s: float | None = None, measured_label: str = MEASURED_TRACE, notices=None,
                  engine_version: str = "") -> None:
    """The serving estimate beside the bound: metrics (bound, estimate with range, throughput per GPU and,
    with a price, USD per 1M output tokens from both), the notices, the breakdown bar and table. With
    ``output_len`` 1 (and the request's ``prompt_len``), a caption says what the per-output-token figures then
    mean (``single_output_note``). ``measured_s`` (seconds) and ``measured_label``: a measured ``which`` marked on
    the breakdown bar (``breakdown_figure``). ``notices``: the notices to show (default: all of ``est.notices``;
    a page that shows some of them elsewhere passes the rest). ``engine_version``: the software the estimate took
    (``serving_estimate``'s; "" a current release), named in the caption (``which_is_which``)."""
    tb = getattr(est, which)
    name = which.upper()
    st.markdown(title or f"**Serving estimate ({measurements.engine_name(est.engine)}, "
                         f"{est.batching} batching, decode batch {est.decode_batch:,.0f}) beside the bound**")
    show_notices(est.notices if notices is None else notices)
    n = 4 if price_per_gpu_hour_usd is not None else 3
    with widgets.metric_row(n) as mc:
        mc[0].metric(f"{name}, bound", formats.fmt_seconds(tb.bound_s),
                     help="The roofline lower bound at the same batch: the teaching number.")
        mc[1].metric(f"{name}, serving estimate", formats.fmt_seconds(tb.estimate_s),
                     delta=range_text(tb.low_s, tb.high_s), delta_color="off", delta_arrow="off",
                     help="What the engine measures: the bound plus fixed cost, efficiency, batching interference "
                          "and queueing (calc.serving). Range: the cross-validated error spread, widened to the held-out "
                          "misses where a notice above says so.")
        mc[2].metric("Output tok/s per GPU, serving estimate", formats.fmt_number(est.output_tokens_per_s_per_gpu),
                     delta=f"bound {formats.fmt_number(est.bound_output_tokens_per_s_per_gpu)}{BOUND_THROUGHPUT_WORDS}",
                     delta_color="off", delta_arrow="off",
                     help=f"Range {formats.fmt_number(est.per_gpu_low)} - {formats.fmt_number(est.per_gpu_high)}. "
                          "The bound's throughput is an upper bound: the decode batch over the bound's TPOT, decode "
                          "steps only. The serving estimate's counts each request's prefill and wait too "
                          "(requests x output "
                          "tokens / end-to-end time), so the two differ by more than the engine's costs."
                          + (RATE_THROUGHPUT_WORDS if est.mode == "rate" else ""))
        if price_per_gpu_hour_usd is not None:
            mc[3].metric("USD per 1M output tokens, serving estimate",
                         formats.fmt_usd(calc_cost.cost_per_million(est.output_tokens_per_s_per_gpu, price_per_gpu_hour_usd)),
                         delta="bound " + formats.fmt_usd(calc_cost.cost_per_million(
                             est.bound_output_tokens_per_s_per_gpu, price_per_gpu_hour_usd)) + BOUND_THROUGHPUT_WORDS,
                         delta_color="off", delta_arrow="off",
                         help="GPU price per hour / (tokens per second per GPU x 3,600) x 10^6. Range "
                              + formats.fmt_usd(calc_cost.cost_per_million(est.per_gpu_high, price_per_gpu_hour_usd))
                              + " - "
                              + formats.fmt_usd(calc_cost.cost_per_million(est.per_gpu_low, price_per_gpu_hour_usd))
                              + ", from the throughput's range.")
    if output_len == 1 and prompt_len is not None:
        st.caption(single_output_note(prompt_len, price_per_gpu_hour_usd is not None))
    tail = percentile_words(est)
    if tail:
        st.caption(tail)
    st.caption(which_is_which(est.engine, engine_version, est.notices))
    if est.arrivals:  # the convention the estimate follows, where engines' benchmarks differ (calc.serving)
        other = (" A benchmark that sends one prompt length and forces one output length starts its clients "
                 "together and keeps them partly in lockstep instead, and waits longer for its first token (the "
                 "Live page's endpoint section offers both)."
                 if est.arrivals.startswith("varied lengths, the requests spread out") else "")
        st.caption(f"How the requests arrive: {est.arrivals}.{other}")
    charts.show_chart(breakdown_figure(est, which, measured_s, measured_label), key=f"{key}_bar")
    box = st.expander("Where the time goes, as a table", key=f"{key}_table", on_change="rerun")
    if box.open:
        with box:
            show_breakdown_table(est)


def estimate_or_error(*args, **kwargs):
    """``estimate`` or None after showing calc's ValueError as a message on the page."""
    try:
        return estimate(*args, **kwargs)
    except ValueError as exc:
        widgets.show_error(exc)
        return None


def engine_memory_note(message: str) -> None:
    """Under the serving estimate's refusal of a model that does not fit in the engine's share of the GPU
    (``message``: calc's), where the page's own figures follow another memory convention (the sidebar's Memory
    capacity, the data sheet's by default): say that the two differ and where to choose the engine's, so that the
    page sizes its layouts as the engine does. Nothing for other refusals, or when the sidebar already says
    "engine"."""
    memory = st.session_state.get("mem") or "datasheet"
    if "does not fit" not in message or memory == "engine":
        return
    st.caption(f"The page's own figures (what fits, the layouts it finds) follow the sidebar's Memory capacity, "
               f"{MEMORY_WORDS.get(memory, memory)}; the serving estimate follows the engine's, its share of what the "
               "driver reports. Choose **engine** under the sidebar's Memory capacity to size the page as the engine "
               "does.")


#: The sidebar's Memory capacity conventions in words (``ui.sidebar.MEMORY``'s keys).
MEMORY_WORDS = {"datasheet": "the data sheet's capacity (the course's convention)",
                "driver": "what the driver reports"}


def section(key: str, model, accelerator, input_len: int, output_len: int, concurrency, weight_dtype: str,
            kv_dtype: str, tp: int = 1, pp: int = 1, ep: int = 1, replicas: int = 1, price_per_gpu_hour_usd=None,
            which: str = "tpot", output_choice: bool = True, interconnect=None, tpot_target_s=None):
    """A page's serving-estimate block: engine (and batching, output length when ``output_choice``) controls
    keyed under ``key``, then ``show_estimate``; with ``tpot_target_s`` (a page that picks its batch on the bound to
    meet a TPOT target), a warning when the estimate misses that target, with the largest batch that meets it by
    the estimate (``calc.serving.max_concurrency_within_tpot``). ``input_len`` is the page's context S: the request timed has a
    prompt of S less its output, so that it ends at S (a prompt of S when the output is not shorter than S).
    ``interconnect``: the page's link between the GPUs (None: the accelerator's own), for the bound and the estimate.
    Returns the ``ServingEstimate`` or None (after a message)."""
    c1, c2, c3 = st.columns(3)
    engine = engine_select(c1, f"{key}_engine")
    batching = c2.radio("Batching", serving.BATCHING, key=f"{key}_batching", bind="query-params", horizontal=True,
                        help="continuous: requests join and leave each step, other prompts' prefill shares the "
                             "steps (a served endpoint). static: a batch prefilled together and decoded together "
                             "(the course's pages, offline benchmarks).")
    if output_choice:
        output_len = c3.number_input("Output tokens per request", 1, 1_000_000, int(output_len), step=64,
                                     key=f"{key}_out", bind="query-params",
                                     help="The serving model averages the step over a request's output.")
    # the page's context S is the sequence's length at its last step: the prompt is S less the output (a
    # request that ends at S), or S itself when the output is not shorter than S
    context = int(input_len)
    input_len = context - int(output_len) if context > int(output_len) else context
    try:
        est = estimate(model, accelerator, int(input_len), int(output_len), concurrency=concurrency, tp=tp, pp=pp,
                       ep=ep, replicas=replicas, weight_dtype=weight_dtype, kv_dtype=kv_dtype, engine=engine,
                       batching=batching, interconnect=interconnect)
    except ValueError as exc:
        widgets.show_error(exc)
        engine_memory_note(str(exc))
        est = None
    if est is not None:
        # said before the figures: the block's bound beside the page's own step at the full context reads as a
        # contradiction until one knows they time different contexts
        ends = (f"ending at the page's context of {context:,}" if int(input_len) < context
                else f"running past the page's context of {context:,}, which is not longer than the output")
        st.caption(f"This block times a request of {int(input_len):,} prompt and {int(output_len):,} output tokens, "
                   f"{ends}: its bound is the decode step at the request's mean context, "
                   f"{int(input_len) + int(output_len) // 2:,} tokens (prompt + half the output), so it differs a little "
                   "from the page's step at the full context.")
        show_estimate(est, key, which=which, price_per_gpu_hour_usd=price_per_gpu_hour_usd, prompt_len=int(input_len),
                      output_len=int(output_len))
        if tpot_target_s is not None and est.tpot.estimate_s > tpot_target_s:
            kw = dict(tp=tp, pp=pp, ep=ep, replicas=replicas, weight_dtype=weight_dtype, kv_dtype=kv_dtype, engine=engine,
                      batching=batching, interconnect=interconnect)
            best = caching.cached_call(serving.max_concurrency_within_tpot, model, accelerator, int(input_len),
                                       int(output_len), tpot_target_s, int(concurrency), **kw)
            then = (f"by the estimate, B = {best:,} is the largest batch that meets it" if best else
                    "by the estimate, no batch meets it, not even B = 1")
            st.warning(f"The batch above meets the {tpot_target_s * 1e3:g} ms target on the bound, the course's "
                       f"number; the serving estimate at B = {int(concurrency):,} is "
                       f"{formats.fmt_seconds(est.tpot.estimate_s)} per token: {then} ({measurements.engine_name(est.engine)}, "
                       f"{est.batching} batching).")
    return est
