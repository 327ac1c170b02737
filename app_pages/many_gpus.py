"""Many GPUs: tensor, pipeline and expert parallelism, replicas, a capacity plan, which GPUs, pins."""
import streamlit as st

from ui import (caching, custom_models, downloads, formats, gpu_pins, html_table, parallel_views, serving_views, sidebar,
                widgets)
from ui.parallel_views import DEFAULTS, EPS, PPS, TPS
from calc import collectives, layout_choice, parallel, planning

PLAN_TIMING_LABELS = {"serving": "serving estimate", "bound": "roofline bound"}

sel = sidebar.selection()
st.title("Many GPUs")
st.markdown(
    "A 70B model does not fit on one 80 GB GPU, and a 671B one not on eight. **Tensor parallelism** (TP) "
    "splits every matrix, so each GPU reads 1/TP of the weights per token, then pays two all-reduces per "
    "layer; **pipeline parallelism** (PP) splits the layers, which saves memory but not time per token; "
    "**expert parallelism** (EP) spreads a mixture of experts' experts; **replicas** copy the whole thing. "
    "The KV cache splits by KV heads: with TP above the KV-head count each head is stored twice or more, and "
    "MLA's latent is not split at all.")
widgets.experiment_buttons({
    "70B on 8 x H100": dict(DEFAULTS, model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16",
                                      mg_tp=8, mg_b=32),
    "70B over PCIe": dict(DEFAULTS, model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16", mg_tp=8,
                         mg_b=32, mg_ic="pcie5"),
    "70B at TP 16": dict(DEFAULTS, model="llama-3.1-70b", gpu="h100-sxm", wq="bf16",
                                          kvq="bf16", mg_tp=16, mg_b=32),
    "DeepSeek-V3 at EP 8": dict(DEFAULTS, model="deepseek-v3", gpu="h200", wq="fp8",
                                                 kvq="bf16", mg_ep=8, mg_b=64),
    "DeepSeek-V3 prefill: EP 32 + 32 redundant": dict(DEFAULTS, model="deepseek-v3", gpu="h100-sxm", wq="fp8",
                                                      kvq="bf16", mg_tp=4, mg_ep=32, mg_red=32, mg_b=64),
}, key="mg_exp")


@widgets.fragment
def layout_section() -> None:
    """The layout's controls, its headline numbers, memory and step charts and the throughput frontier. A
    fragment: TP, PP, EP, replicas and batch rerun this part only; a change of the context, interconnect or
    reserve, which the sections below also use, reruns the page."""
    inputs = parallel_views.layout_controls(sel)
    tp, pp, ep, replicas, ctx, batch = inputs.tp, inputs.pp, inputs.ep, inputs.replicas, inputs.ctx, inputs.batch
    interconnect, reserve_gb = inputs.interconnect, inputs.reserve_gb
    ic_default = collectives.default_interconnect(sel.accelerator)
    reserve = reserve_gb * 1e9
    shared = {"ctx": ctx, "interconnect": interconnect, "reserve": reserve, "reserve_gb": reserve_gb}
    if not st.session_state.get("_mg_full_run") and st.session_state.get("_mg_shared") != shared:
        # Context, interconnect and reserve also drive the capacity plan and the GPU table below the fragment.
        st.rerun(scope="app")
    st.session_state["_mg_shared"] = shared
    model, acc, wd, kvd, emb = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.embedding
    link_name = collectives.get_interconnect(interconnect).name if interconnect else (
        f"{ic_default.name}, the GPU's own" if ic_default else "none")
    st.caption(f"{model.name} on {acc.name}; interconnect {link_name}; weights {wd}, KV cache {kvd}, input embedding: "
               f"{sidebar.EMBEDDING[emb]}; "
               f"{formats.fmt_usd(sel.price_per_hour_usd)} per GPU-hour (all from the sidebar).")

    try:
        layout = inputs.layout(model)
        summary = layout_choice.layout_summary(model, acc, ctx, batch, layout, wd, kvd, sel.price_per_hour_usd,
                                          interconnect, reserve, emb)
        split = parallel.step_split(model, acc, batch, ctx, layout, wd, kvd, interconnect, emb)
    except ValueError as exc:
        widgets.show_error(exc)
        layout = summary = None

    if summary is not None:
        st.caption(f"Convention: {layout.convention(model)}.")
        parallel_views.layout_headline(sel, model, acc, summary, layout, inputs, reserve)
        serving_views.section("mg_srv", model, acc, ctx, 256, batch * replicas, wd, kvd, tp, pp, ep, replicas,
                              price_per_gpu_hour_usd=sel.price_per_hour_usd)
        parallel_views.memory_and_step_charts(summary, layout, split, interconnect, ic_default)

    parallel_views.frontier_section(sel, model, acc, layout, summary, inputs, reserve)


@widgets.fragment
def plan_section(model, acc, wd, kvd, emb, interconnect, reserve) -> None:
    """The capacity plan for a traffic. A fragment: its inputs rerun this part only."""
    c = st.columns(7)
    rps = c[0].number_input("Requests/s", 0.0, 1e6, 5.0, step=1.0, key="mg_rps", bind="query-params")
    peak = c[1].number_input("Peak / average", 1.0, 100.0, 2.0, step=0.5, key="mg_peak", bind="query-params")
    n_in = c[2].number_input("Input tokens", 1, 1_000_000, 2048, step=256, key="mg_in", bind="query-params")
    n_out = c[3].number_input("Output tokens", 1, 1_000_000, 256, step=64, key="mg_out", bind="query-params")
    hit = c[4].number_input("Prefix hit, %", 0, 100, 0, step=10, key="mg_hit", bind="query-params")
    tpot_ms = c[5].number_input("TPOT target, ms", 1.0, 10_000.0, 50.0, step=5.0, key="mg_tpot", bind="query-params")
    ttft_ms = c[6].number_input("TTFT target, ms", 1.0, 600_000.0, 1000.0, step=100.0, key="mg_ttft", bind="query-params")
    t1, t2, t3 = st.columns([2, 1, 1])
    timing = t1.radio("Size the plan with", ("serving", "bound"), key="mg_timing", bind="query-params",
                      horizontal=True, format_func=PLAN_TIMING_LABELS.get,
                      help="The serving estimate: what the engine measures (fixed costs, efficiency, batching "
                           "interference, queueing). The bound: the roofline lower bound, the course's numbers.")
    engine = serving_views.engine_select(t2, "mg_plan_engine") if timing == "serving" else "vllm"
    cap = t3.number_input("Largest batch tried", 16, 8192, layout_choice.PLAN_MAX_BATCH, step=256, key="mg_cap",
                          bind="query-params", help="The plan searches batches 1 to this per replica. "
                          "Raise it when the plan names the batch cap as its binding limit.")
    try:
        traffic = planning.ServingTraffic(rps, peak, int(n_in), int(n_out), hit / 100)
        grid = caching.cached_call(planning.plan_grid, model, acc, traffic, wd, kvd, max_batch=int(cap),
                                   reserve_bytes=reserve, interconnect=interconnect, embedding=emb, logits=sel.logits,
                                   timing=timing, engine=engine)
        searched = (layout_choice.PLAN_TP, layout_choice.PLAN_PP, layout_choice.plan_eps(model))
        if not grid["fits"].any():  # too big for up to 16 GPUs: search the sliders' range, as the section above does
            searched = (TPS, PPS, layout_choice.plan_eps(model, EPS))
            grid = caching.cached_call(planning.plan_grid, model, acc, traffic, wd, kvd, *searched,
                                       max_batch=int(cap), reserve_bytes=reserve, interconnect=interconnect,
                                       embedding=emb, logits=sel.logits, timing=timing, engine=engine)
        serving_views.show_notices(grid.attrs.get("notices"))
        plan = caching.cached_call(planning.capacity_plan, model, acc, traffic, tpot_ms / 1e3, ttft_ms / 1e3,
                                   sel.price_per_hour_usd, wd, kvd, grid=grid, interconnect=interconnect, embedding=emb,
                                   logits=sel.logits)
        st.success(plan.verdict)
        st.caption(f"The plan's {plan.layout.label}: {plan.layout.convention(model)}."
                   + (" " + parallel_views.refused_words(plan.refused) if plan.refused else ""))
        st.info(caching.cached_call(planning.disaggregated_plan, model, acc, traffic, tpot_ms / 1e3, ttft_ms / 1e3,
                                    sel.price_per_hour_usd, grid=grid).verdict)
        with st.expander("Every layout of the grid, cheapest first"):
            options = caching.cached_call(planning.plan_options, grid, traffic, tpot_ms / 1e3, ttft_ms / 1e3,
                                          sel.price_per_hour_usd)
            html_table.show_table(options.assign(tpot_ms=options["tpot_s"] * 1e3, ttft_ms=options["ttft_s"] * 1e3), hide_index=True,
                         width="stretch", column_order=["layout", "gpus", "usd_per_month", "batch", "replicas", "tpot_ms",
                                                        "ttft_ms", "max_batch", "fails"], column_config={
                             "gpus": st.column_config.NumberColumn("GPUs", format="%,d"),
                             "usd_per_month": st.column_config.NumberColumn("USD per month", format="dollar"),
                             "batch": st.column_config.NumberColumn("batch per replica", format="%,d"),
                             "replicas": st.column_config.NumberColumn("replicas", format="%,d"),
                             "tpot_ms": st.column_config.NumberColumn("TPOT, ms", format="%.1f"),
                             "ttft_ms": st.column_config.NumberColumn("TTFT, ms", format="%,.0f"),
                             "max_batch": st.column_config.NumberColumn("max batch"),
                             "fails": st.column_config.TextColumn("misses")})
            downloads.download_csv(options, "capacity_plan_layouts.csv", key="mg_plan_csv")
        st.caption(f"Searched: {layout_choice.grid_label(*searched)} x "
                   f"batch 1-{int(cap):,}, the replicas each needs for the peak. This plan uses the traffic's "
                   "lengths, not the Context above: TPOT at the mean context (input + output / 2), memory reserved at input + "
                   f"output, TTFT = prefill of the uncached prompt without queueing ({sel.logits_label}); roofline lower "
                   "bounds. With the serving estimate: the engine's TPOT and TTFT at B requests in flight per "
                   "replica (calc.serving). The second line "
                   "splits prefill and decode into two pools (DistServe, Splitwise), each sized on its own; moving the KV "
                   "cache between them is left out.")
    except ValueError as exc:
        widgets.show_error(exc)


def _pin() -> None:
    # From the widgets' state, not this run's variables: the layout section reruns on its own.
    s = st.session_state
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


st.session_state["_mg_full_run"] = True  # a whole-page run: the layout section needs no second one
try:
    layout_section()
finally:
    st.session_state["_mg_full_run"] = False
shared = st.session_state["_mg_shared"]
ctx, interconnect, reserve, reserve_gb = shared["ctx"], shared["interconnect"], shared["reserve"], shared["reserve_gb"]
model, acc, wd, kvd, emb = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.embedding
st.subheader("Capacity plan")
plan_section(model, acc, wd, kvd, emb, interconnect, reserve)

st.subheader("Which GPUs can run it")
try:
    table = caching.cached_call(layout_choice.which_gpus, model, ctx, wd, kvd, reserve_bytes=reserve, embedding=emb)
    if not table["fits"].any():
        st.info(f"No GPU of the catalogue holds {model.name} with one sequence of {ctx:,} tokens in one node "
                "(TP 1, 2, 4, 8, no PP or EP): the layout above and the capacity plan spread it over more GPUs.")
    html_table.show_table(table.assign(tpot_b1_ms=table["tpot_b1_s"] * 1e3,  # a GPU that holds nothing: "no fit", not 0
                              max_batch=table["max_batch"].where(table["fits"])), hide_index=True, width="stretch",
                 height=38 + 35 * len(table), placeholder="no fit",
                 column_order=["name", "usd_per_million_output", "tp", "gpus", "tpot_b1_ms", "max_batch", "tokens_per_s",
                               "usd_per_hour", "interconnect"], column_config={
        "name": st.column_config.TextColumn("accelerator", pinned=True, width="medium"),
        "interconnect": st.column_config.TextColumn("interconnect", width="medium"),
        "tp": st.column_config.NumberColumn("smallest TP", format="%,d"),
        "gpus": st.column_config.NumberColumn("GPUs", format="%,d"),
        "tpot_b1_ms": st.column_config.NumberColumn("TPOT at B = 1, ms", format="%.1f"),
        "max_batch": st.column_config.NumberColumn("max batch"),
        "tokens_per_s": st.column_config.NumberColumn("tok/s at max batch", format="%,.0f"),
        "usd_per_hour": st.column_config.NumberColumn("USD/h", format="dollar"),
        "usd_per_million_output": st.column_config.NumberColumn("USD per 1M output", format="$%.3f")})
    st.caption(f"{model.name} at {ctx:,} tokens. Memory convention: the data sheet's capacity minus the reserve "
               f"({reserve_gb:g} GB per GPU). Dollars at each GPU's list price, at the max batch, fully busy.")
    downloads.download_csv(table, "which_gpus.csv", key="mg_csv")
except ValueError as exc:
    widgets.show_error(exc)

st.subheader("Pinned configurations")
pins_section()
