"""The "Many GPUs" page's lower sections: the capacity plan for a traffic, the table of GPUs that can run the
model, and the pinned configurations. Every number is calc's (calc.planning, calc.layout_choice); these only
lay them out."""
from __future__ import annotations

import streamlit as st

from calc import layout_choice, measurements, planning
from ui import (caching, charts, columns, custom_models, downloads, formats, gpu_pins, html_table, parallel_views,
                serving_views, sidebar, url_state, widgets)
from ui.parallel_views import EPS, PPS, TPS

#: The capacity plan's timings (calc.layout_choice.PLAN_TIMINGS) as the radio shows them, in its order.
PLAN_TIMING_LABELS = {"serving": "serving estimate", "serving_high": "high end of its range", "bound": "roofline bound"}
#: The page's one serving engine (URL key): the layout's serving estimate and the capacity plan both use it.
ENGINE_KEY = "mg_srv_engine"
#: Session key: whether this run's layout section drew the engine selector (in its serving estimate block).
ENGINE_DRAWN_ABOVE = "_mg_engine_above"
#: Session key: the serving model's notices this run's layout section showed (its serving estimate block's), as a
#: tuple; () when that block is not drawn or its estimate failed.
NOTICES_ABOVE = "_mg_notices_above"


def _traffic_inputs() -> tuple[tuple, float, float]:
    """The traffic's seven inputs in two rows of four columns (one a column wide enough for seven digits and
    the step buttons: 1000000.00 requests/s): planning.ServingTraffic's arguments (requests/s, peak over
    average, input and output tokens, prefix hit share), and the TPOT and TTFT targets in seconds. Requests/s
    has no upper bound in the box (a box refuses a typed value above its bound without a word): the plan
    section says when it is beyond ``planning.MAX_REQUESTS_PER_S``."""
    c = st.columns(4)
    rps = c[0].number_input("Requests/s", 0.0, None, 5.0, step=1.0, key="mg_rps", bind="query-params",
                            help=f"Average arrival rate; the plan takes up to {planning.MAX_REQUESTS_PER_S:,}.")
    peak = c[1].number_input("Peak / average", 1.0, 100.0, 2.0, step=0.5, key="mg_peak", bind="query-params")
    n_in = c[2].number_input("Input tokens", 1, 1_000_000, 2048, step=256, key="mg_in", bind="query-params")
    n_out = c[3].number_input("Output tokens", 1, 1_000_000, 256, step=64, key="mg_out", bind="query-params")
    c = st.columns(4)
    hit = c[0].number_input("Prefix hit (%)", 0, 100, 0, step=10, key="mg_hit", bind="query-params")
    tpot_ms = c[1].number_input("TPOT target (ms)", 1.0, 10_000.0, 50.0, step=5.0, key="mg_tpot", bind="query-params")
    ttft_ms = c[2].number_input("TTFT target (ms)", 1.0, 600_000.0, 1000.0, step=100.0, format="%.0f", key="mg_ttft",
                                bind="query-params")
    return (rps, peak, int(n_in), int(n_out), hit / 100), tpot_ms / 1e3, ttft_ms / 1e3


def rate_beyond_plan(requests_per_s: float) -> str:
    """The warning for an arrival rate the plan does not take (above ``planning.MAX_REQUESTS_PER_S``), or ""."""
    if requests_per_s <= planning.MAX_REQUESTS_PER_S:
        return ""
    return (f"{formats.fmt_number(requests_per_s)} requests/s is beyond what the plan accepts (up to "
            f"{planning.MAX_REQUESTS_PER_S:,} requests/s): type a smaller rate to see a plan; the other inputs "
            "keep their values.")


def plan_engine(container) -> str:
    """The serving engine the capacity plan sizes with: the page's one choice (``ENGINE_KEY``). The layout's
    serving estimate block above draws its selector; when that block is not shown (the layout holds no batch),
    the selector is drawn here in ``container`` instead, under the same key, so the choice is never lost."""
    if st.session_state.get(ENGINE_DRAWN_ABOVE):
        engine = st.session_state.get(ENGINE_KEY)
        engine = engine if engine in serving_views.ENGINES else serving_views.ENGINES[0]
        container.caption(f"Serving engine: **{measurements.engine_name(engine)}**, as chosen for the serving "
                          "estimate above.")
        return engine
    return serving_views.engine_select(container, ENGINE_KEY)


def plan_notices(notices) -> list[str]:
    """The capacity plan's serving notices (its grid's ``attrs["notices"]``, calc.planning.plan_grid) less those the
    serving estimate block above has shown in this run (``NOTICES_ABOVE``): the same engine on the same model and
    GPU says the same words there, such as the model's architecture coverage notice
    (``calc.serving_params.architecture_notice``) or an uncalibrated accelerator's fallbacks, and the page says
    each once. Every other notice is kept, in its order. ``notices``: an iterable of strings, or None."""
    above = set(st.session_state.get(NOTICES_ABOVE) or ())
    return [n for n in notices or () if n not in above]


def _timing_inputs() -> tuple[str, str, int]:
    """How the plan times a step (serving estimate or bound), the engine, and the largest batch tried."""
    t1, t2, t3 = st.columns([2, 1, 1])
    url_state.accept_url_values("mg_timing", list(PLAN_TIMING_LABELS), PLAN_TIMING_LABELS.get)
    timing = t1.radio("Size the plan with", list(PLAN_TIMING_LABELS), key="mg_timing", bind="query-params",
                      horizontal=True, format_func=PLAN_TIMING_LABELS.get,
                      help="The serving estimate: what the engine measures (fixed costs, efficiency, batching "
                           "interference, queueing). The high end of its range: the slowest end of the range "
                           "published runs fell in around the estimate (TPOT and TTFT at the top of their ranges, "
                           "throughput at the bottom), a margin against under-buying. The bound: the roofline "
                           "lower bound, the course's numbers.")
    engine = plan_engine(t2) if timing != "bound" else "vllm"
    cap = t3.number_input("Largest batch tried", 16, 8192, layout_choice.PLAN_MAX_BATCH, step=256, key="mg_cap",
                          bind="query-params", help="The plan searches batches 1 to this per replica. "
                          "Raise it when the plan names the batch cap as its binding limit.")
    return timing, engine, int(cap)


def _plan_grid(sel, model, acc, traffic, wd, kvd, emb, interconnect, reserve, timing, engine, cap):
    """calc.planning.plan_grid over the plan's layouts, or over the sliders' range when no layout of up to 16
    GPUs holds the model: the grid and the (TP, PP, EP) choices searched."""
    kw = dict(max_batch=cap, reserve_bytes=reserve, interconnect=interconnect, embedding=emb, logits=sel.logits,
              timing=timing, engine=engine)
    searched = (layout_choice.PLAN_TP, layout_choice.PLAN_PP, layout_choice.plan_eps(model))
    try:
        grid = caching.cached_call(planning.plan_grid, model, acc, traffic, wd, kvd, **kw)
        if grid["fits"].any():
            return grid, searched
    except ValueError:  # no layout of one server runs at all: the wider grid below says why, if it fails too
        pass
    # too big for up to 16 GPUs: search the sliders' range, as the section above does (its error names that grid)
    searched = wide_grid(model)
    grid = caching.cached_call(planning.plan_grid, model, acc, traffic, wd, kvd, *searched, **kw)
    return grid, searched


def wide_grid(model) -> tuple:
    """The layout controls' range (TP, PP, EP tried), which the plan searches when one server's grid runs nothing."""
    return TPS, PPS, layout_choice.plan_eps(model, EPS)


def options_table(options) -> None:
    """Every layout of the plan's grid, cheapest first (calc.planning.plan_options), with its CSV."""
    html_table.show_table(columns.shown(options), hide_index=True, width="stretch", column_order=[
        "layout", "gpus", "usd_per_month", "batch", "replicas", "tpot_s", "ttft_s", "max_batch", "fails"],
        column_config=columns.config(options.columns, tpot_s="%.1f", ttft_s="%,.0f") | {
            "batch": columns.column("batch", help="per replica"), "fails": st.column_config.TextColumn("misses")})
    downloads.download_csv(options, "capacity_plan_layouts.csv", key="mg_plan_csv")


def unpriced_note(acc, price_per_hour_usd: float) -> str | None:
    """A sentence where ``acc`` has no list price on file and the sidebar's price is still the placeholder
    (``ui.sidebar.OWNED_HARDWARE_PRICE_USD``): the plan's dollars then rest on that placeholder, not on a listing.
    None where the accelerator has a list price or the user typed another price."""
    if acc.price_per_hour_usd is not None or price_per_hour_usd != sidebar.OWNED_HARDWARE_PRICE_USD:
        return None
    return (f"{acc.name} has no list price on file: the plan's dollars use the sidebar's placeholder of "
            f"{formats.fmt_usd(price_per_hour_usd)} per GPU-hour. Type your rental price in the sidebar.")


def plan_breakdown(plan) -> None:
    """Where the time of a plan sized with the serving estimate goes: one replica of its layout at its batch
    (``plan.estimate``, calc.planning.plan_estimate), TPOT and TTFT each as the bound's parts, then fixed costs,
    efficiency, batching interference and queueing up to the estimate, with its range, and the same as a table; a
    plan sized at the range's high end (``plan.timing`` "serving_high") says that its times are that end."""
    est = plan.estimate
    with st.expander("Where the plan's time goes"):
        st.markdown(f"**One replica of {plan.layout.label} at batch {plan.batch:,} "
                    f"({measurements.engine_name(est.engine)}, {est.batching} batching)**: TPOT "
                    f"{formats.fmt_seconds(est.tpot.estimate_s)} ({serving_views.range_text(est.tpot.low_s, est.tpot.high_s)}; "
                    f"bound {formats.fmt_seconds(est.tpot.bound_s)}), TTFT {formats.fmt_seconds(est.ttft.estimate_s)} "
                    f"({serving_views.range_text(est.ttft.low_s, est.ttft.high_s)}; bound "
                    f"{formats.fmt_seconds(est.ttft.bound_s)})")
        if plan.timing == "serving_high":  # the bars build the estimate; the plan took its range's top
            st.caption("The bars build the central estimate; the plan's TPOT and TTFT are the high ends of their "
                       "ranges, where each bar's error line ends.")
        for which in ("tpot", "ttft"):
            charts.show_chart(serving_views.breakdown_figure(est, which), key=f"mg_plan_{which}_bar")
        st.caption(serving_views.which_is_which(est.engine, notices=est.notices))
        serving_views.show_breakdown_table(est)


@widgets.fragment
def plan_section(model, acc, wd, kvd, emb, interconnect, reserve) -> None:
    """The capacity plan for a traffic. A fragment: its inputs rerun this part only."""
    sel = sidebar.selection()
    traffic_args, tpot_s, ttft_s = _traffic_inputs()
    timing, engine, cap = _timing_inputs()
    beyond = rate_beyond_plan(traffic_args[0])
    if beyond:
        st.warning(beyond)
        return
    searched = None  # the layouts the plan searched, once known (a refusal of the wider grid: that one)
    try:
        traffic = planning.ServingTraffic(*traffic_args)
        widgets.context_warning(model, traffic.input_tokens + traffic.output_tokens,
                                meaning="The plan is sized with the arithmetic all the same; an engine refuses such "
                                        "requests.")
        grid, searched = _plan_grid(sel, model, acc, traffic, wd, kvd, emb, interconnect, reserve, timing, engine, cap)
        serving_views.show_notices(plan_notices(grid.attrs.get("notices")))
        plan = caching.cached_call(planning.capacity_plan, model, acc, traffic, tpot_s, ttft_s, sel.price_per_hour_usd,
                                   wd, kvd, grid=grid, interconnect=interconnect, embedding=emb, logits=sel.logits)
        st.success(plan.verdict)
        unpriced = unpriced_note(acc, sel.price_per_hour_usd)
        if unpriced:  # the GPU table says "no list price": the plan's dollars must not read as a listing
            st.warning(unpriced)
        if plan.estimate is not None:  # sized with the serving estimate: the plan at its range's other end, its parts
            st.caption(plan.range_note)
            plan_breakdown(plan)
        note = planning.fleet_note(plan)
        if note:  # a fleet of clusters: its size in perspective
            st.info(note)
        st.caption(f"The plan's {plan.layout.label}: {plan.layout.convention(model)}."
                   + (" " + parallel_views.refused_words(plan.refused) if plan.refused else ""))
        split = caching.cached_call(planning.disaggregated_plan, model, acc, traffic, tpot_s, ttft_s,
                                    sel.price_per_hour_usd, grid=grid)
        st.info(split.verdict)
        st.caption(planning.load_note(plan, split, traffic))  # what "batch" means in both lines, and the load
        more = planning.disaggregation_note(plan, split)
        if more:  # two pools dearer than one: why, in words
            st.caption(more)
        with st.expander("Every layout of the grid, cheapest first"):
            options_table(caching.cached_call(planning.plan_options, grid, traffic, tpot_s, ttft_s, sel.price_per_hour_usd))
        st.caption(f"Searched: {layout_choice.grid_label(*searched)} x "
                   f"batch 1-{cap:,}, the replicas each needs for the peak. This plan uses the traffic's "
                   "lengths, not the Context above: TPOT at the mean context (input + output / 2), memory reserved at input + "
                   f"output, TTFT = prefill of the uncached prompt without queueing ({sel.logits_label}); roofline lower "
                   "bounds. With the serving estimate: the engine's TPOT and TTFT at B requests in flight per "
                   "replica (calc.serving); at the high end of its range, those times at the top of their "
                   "ranges and each replica's throughput at the bottom of its range, or lower where that TPOT allows less. The "
                   "second line "
                   "splits prefill and decode into two pools (DistServe, Splitwise), each sized on its own; moving the KV "
                   "cache between them is left out.")
    except ValueError as exc:  # a sentence: "No layout of the grid meets ...", with what to change
        wide = searched is None or searched == wide_grid(model)
        st.error(formats.md_escape(formats.sentence(exc)) + (
            f" Searched: {layout_choice.grid_label(*wide_grid(model))}, the layout controls' range." if wide else ""))


#: What the "Which GPUs can run it" table's times, throughputs and dollars are.
ROOFLINE_TABLE = ("Roofline bounds, not measurements: TPOT at B = 1 is a lower bound, throughput an upper bound and "
                  "USD per 1M output tokens a lower bound; an engine measures more time and fewer tokens per second "
                  "(the capacity plan above sizes with the serving estimate when chosen).")


def which_gpus_section(model, ctx: int, wd: str, kvd: str, reserve_bytes: float, reserve_gb: float, emb: str) -> None:
    """Every GPU of the catalogue for the model at ``ctx`` tokens: smallest TP that holds it, TPOT at B = 1,
    the max batch, throughput and dollars (calc.layout_choice.which_gpus), with its CSV."""
    try:
        table = caching.cached_call(layout_choice.which_gpus, model, ctx, wd, kvd, reserve_bytes=reserve_bytes,
                                    embedding=emb)
        if not table["fits"].any():
            st.info(f"No GPU of the catalogue holds {formats.md_escape(model.name)} with one sequence of {ctx:,} tokens in one node "
                    "(TP 1, 2, 4, 8, no PP or EP): the layout above and the capacity plan spread it over more GPUs.")
        # a GPU that holds nothing: "no fit", not 0; one that holds the model but has no list price: "no list price"
        shown = columns.shown(table).assign(max_batch=table["max_batch"].where(table["fits"]))
        for col in ("usd_per_million_output", "usd_per_hour"):
            unpriced = table["fits"] & table[col].isna()
            shown[col] = shown[col].astype(object).where(~unpriced, "no list price")
        st.caption(ROOFLINE_TABLE)
        html_table.show_table(shown,
                              hide_index=True, width="stretch", height=38 + 35 * len(table), placeholder="no fit",
                              column_order=["name", "usd_per_million_output", "tp", "gpus", "tpot_b1_s", "max_batch",
                                            "tokens_per_s", "usd_per_hour", "interconnect"],
                              column_config=columns.config(table.columns, tpot_b1_s="%.1f") | {
            "name": st.column_config.TextColumn("accelerator", pinned=True, width="medium"),
            "interconnect": st.column_config.TextColumn("interconnect", width="medium"),
            "tp": st.column_config.NumberColumn("smallest TP", format="%,d"),
            "tpot_b1_s": columns.column("tpot_b1_s", format="%.1f", help="Roofline lower bound: an engine measures more"),
            "tokens_per_s": columns.column("tokens_per_s", help="At the max batch; roofline upper bound: an engine "
                                           "measures less")})
        st.caption(f"{formats.md_escape(model.name)} at {ctx:,} tokens. Memory convention: the data sheet's capacity minus the reserve "
                   f"({reserve_gb:g} GB per GPU). Dollars at each GPU's list price, at the max batch, fully busy.")
        downloads.download_csv(table, "which_gpus.csv", key="mg_csv")
    except ValueError as exc:
        widgets.show_error(exc)


def _pin() -> None:
    # From the widgets' state, not this run's variables: the layout section reruns on its own.
    s, sel = st.session_state, sidebar.selection()
    text = gpu_pins.encode(sel.model_id, sel.gpu_id, s["mg_tp"], s["mg_pp"], s["mg_ep"], s["mg_rep"], sel.weight_dtype,
                           sel.kv_dtype, s["mg_b"], s["mg_ctx"], sel.price_per_hour_usd)
    free = [k for k in gpu_pins.PIN_KEYS if not st.session_state.get(k)]
    if free:
        st.session_state[free[0]] = text
    else:
        st.session_state["_mg_pin_full"] = True


@widgets.fragment
def pins_section() -> None:
    """Pin buttons, the pins as text and their table. A fragment: pinning or editing a pin reruns this part only."""
    sel = sidebar.selection()
    c1, c2 = st.columns([1, 4])
    c1.button("Pin this configuration", key="mg_pin", on_click=_pin, disabled=sel.model_id.startswith(custom_models.CUSTOM_PREFIX),
              help="Up to three; they travel in the URL (mg_p1..mg_p3). Models loaded from a config.json cannot be pinned.")
    c2.button("Clear the pins", key="mg_unpin", on_click=st.session_state.update, args=({k: "" for k in gpu_pins.PIN_KEYS},))
    if st.session_state.pop("_mg_pin_full", False):
        st.warning("Three configurations are pinned already: clear one below first.")
    with st.expander("Pins as text (edit or clear; part of the link)"):
        for k in gpu_pins.PIN_KEYS:
            st.text_input(k.replace("mg_p", "pin "), key=k, bind="query-params",
                          placeholder="model~gpu~tp~pp~ep~replicas~weights~kv~batch~context~price")
    pins, errors = gpu_pins.pin_table([st.session_state.get(k, "") for k in gpu_pins.PIN_KEYS])
    for e in errors:
        st.error(e)
    if len(pins.columns):
        html_table.show_table(pins, width="stretch", height=38 + 35 * len(pins))
    else:
        st.caption("Nothing pinned yet.")
