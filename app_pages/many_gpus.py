"""Many GPUs: tensor, pipeline and expert parallelism, replicas, a capacity plan, which GPUs, pins."""
import math

import plotly.graph_objects as go
import streamlit as st

from ui import charts, custom_models, downloads, equations, formats, gpu_pins, html_table, sidebar, widgets
from calc import parallel

TPS, PPS, EPS = [1, 2, 4, 8, 16, 32], [1, 2, 4, 8], [1, 2, 4, 8, 16, 32, 64]
DEFAULTS = dict(mg_tp=1, mg_pp=1, mg_ep=1, mg_rep=1, mg_ctx=8192, mg_b=16, mg_ic="default", mg_res=0.0)
PARTS = {"weights_s": ("weights", "#1f77b4"), "kv_s": ("KV cache", "#ff7f0e"),
         "compute_excess_s": ("compute beyond the weight read", "#2ca02c"),
         "allreduce_s": ("all-reduce (TP)", "#d62728"), "alltoall_s": ("all-to-all (EP)", "#9467bd"),
         "p2p_s": ("stage to stage (PP)", "#8c564b")}



def _short(name: str) -> str:
    """An interconnect's name cut to fit a quarter-width select: "NVLink 4 + NVSwitch (HGX H100/H200)" ->
    "NVLink 4" (the full name is in the help and the caption)."""
    for cut in (" (", ", ", " per ", " inter-chip", " + "):
        name = name.split(cut)[0]
    return name


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
}, key="mg_exp")


def _dp_words(layout) -> str:
    """", attention data-parallel in N groups of TP" when EP exceeds TP, else ""."""
    return (f", attention data-parallel in {layout.attention_dp:,} groups of TP {layout.tp}"
            if layout.attention_dp > 1 else "")


@widgets.fragment
def layout_section() -> None:
    """The layout's controls, its headline numbers, memory and step charts and the throughput frontier. A
    fragment: TP, PP, EP, replicas and batch rerun this part only; a change of the context, interconnect or
    reserve, which the sections below also use, reruns the page."""
    c1, c2, c3, c4 = st.columns(4)
    tp = c1.select_slider("Tensor parallel TP", TPS, value=1, key="mg_tp", bind="query-params")
    pp = c2.select_slider("Pipeline stages PP", PPS, value=1, key="mg_pp", bind="query-params")
    dense = not sel.model.is_moe
    ep = c3.select_slider("Expert parallel EP", EPS, value=1, key="mg_ep", bind="query-params", disabled=dense,
                          help="Mixture-of-experts models only. EP above TP runs attention data-parallel.")
    if dense and ep != 1:  # a link's EP for a dense model: the layout runs at EP 1 and says so
        c3.caption(f"{sel.model.name} is dense: EP 1 (EP spreads experts).")
        ep = 1
    replicas = c4.number_input("Replicas", 1, 100_000, 1, key="mg_rep", bind="query-params")
    c1, c2, c3, c4 = st.columns(4)
    ctx = c1.number_input("Context, tokens", 1, 2**21, 8192, step=1024, key="mg_ctx", bind="query-params")
    batch = c2.number_input("Batch per replica", 1, 65_536, 16, step=8, key="mg_b", bind="query-params")
    ic_default = parallel.default_interconnect(sel.accelerator)
    ic_id = c3.selectbox("Interconnect", ["default"] + parallel.list_interconnects(), key="mg_ic", bind="query-params",
                         format_func=lambda i: "default" if i == "default" else _short(parallel.get_interconnect(i).name),
                         help=f"Default: the GPU's own, {ic_default.name if ic_default else 'none'}. Others: "
                              + "; ".join(parallel.get_interconnect(i).name for i in parallel.list_interconnects()) + ".")
    reserve_gb = c4.number_input("Reserve per GPU, GB", 0.0, 10_000.0, 0.0, step=1.0, key="mg_res", bind="query-params",
                                 help="Kept free for activations and CUDA graphs; 0 = the data sheet's capacity.")
    interconnect = None if ic_id == "default" else ic_id
    reserve = reserve_gb * 1e9
    shared = {"ctx": ctx, "interconnect": interconnect, "reserve": reserve, "reserve_gb": reserve_gb}
    if not st.session_state.get("_mg_full_run") and st.session_state.get("_mg_shared") != shared:
        # Context, interconnect and reserve also drive the capacity plan and the GPU table below the fragment.
        st.rerun(scope="app")
    st.session_state["_mg_shared"] = shared
    model, acc, wd, kvd, emb = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.embedding
    link_name = parallel.get_interconnect(interconnect).name if interconnect else (
        f"{ic_default.name}, the GPU's own" if ic_default else "none")
    st.caption(f"{model.name} on {acc.name}; interconnect {link_name}; weights {wd}, KV cache {kvd}, input embedding: "
               f"{sidebar.EMBEDDING[emb]}; "
               f"{formats.fmt_usd(sel.price_per_hour_usd)} per GPU-hour (all from the sidebar).")

    try:
        layout = parallel.make_layout(model, tp, pp, ep, replicas)
        summary = parallel.layout_summary(model, acc, ctx, batch, layout, wd, kvd, sel.price_per_hour_usd,
                                          interconnect, reserve, emb)
        split = parallel.step_split(model, acc, batch, ctx, layout, wd, kvd, interconnect, emb)
    except ValueError as exc:
        widgets.show_error(exc)
        layout = summary = None

    if summary is not None:
        mem = summary.memory
        cols = widgets.metric_row(5)
        if mem.fits:
            cols[0].metric("GPUs", f"{layout.n_gpus:,}", help=f"{layout.gpus_per_replica} per replica x {replicas:,}")
            cols[1].metric("TPOT", formats.fmt_seconds(summary.tpot_s),
                           help=f"of which communication {formats.fmt_seconds(summary.comm_s)}")
            cols[2].metric("Tokens/s per user", f"{summary.tokens_per_s_per_user:,.1f}")
            cols[3].metric("Tokens/s per GPU", formats.fmt_number(summary.tokens_per_s_per_gpu))
            cols[4].metric("USD per month", "n/a" if math.isnan(summary.usd_per_month) else
                           formats.fmt_usd(summary.usd_per_month), help="All replicas, 720 hours")
            cols.show()
            widgets.show_equations(equations.parallel_rows(summary, sel.price_per_hour_usd))
        else:  # no headline numbers for a layout that cannot run
            cols[0].metric("GPUs", "no fit", help=f"{layout.label}: {layout.gpus_per_replica} per replica; "
                           "this layout does not hold the batch (see below)")
            for col, label in zip(cols[1:], ("TPOT", "Tokens/s per user", "Tokens/s per GPU", "USD per month")):
                col.metric(label, "—", help="This layout does not hold the batch: see below.")
            cols.show()
            if summary.max_batch == 0:
                why = (f"The weights alone need {formats.fmt_bytes(mem.weights_bytes)} on each GPU of "
                       f"{formats.fmt_bytes(mem.capacity_bytes)}, with no room for a sequence.")
            else:
                why = (f"Batch {batch:,} does not fit: one GPU would need {formats.fmt_bytes(mem.total_bytes)} of its "
                       f"{formats.fmt_bytes(mem.capacity_bytes)}; at most {summary.max_batch:,} sequences per replica fit.")
            search = (TPS, PPS, parallel.plan_eps(model, EPS))
            try:
                fit = parallel.smallest_layout(model, acc, ctx, batch, wd, kvd, *search, reserve_bytes=reserve)
            except ValueError:
                fit = None
            where = f"{parallel.grid_label(*search)}, the sliders' range"
            st.error(why + " " + (
                f"The smallest layout that holds {batch:,} sequences of {ctx:,} tokens (the Batch and Context above) "
                f"is **{fit.label}**, {fit.gpus_per_replica:,} GPUs per replica (max(TP, EP) x PP: "
                f"{fit.gpus_per_replica // fit.pp:,} ranks per stage{_dp_words(fit)}; searched: {where})."
                if fit else f"No layout of {where} holds {batch:,} sequences of {ctx:,} tokens: pick a smaller dtype "
                "or a larger GPU, or lower the batch or the context."))
        # The memory and the step split are one figure (two subplots, a legend above each) when both are drawn:
        # a layout control then makes the browser draw one new chart, not two.
        fig = charts.Figure()
        for name, v, color in (("weights", mem.weights_bytes, "#1f77b4"),
                               ("KV cache", mem.kv_bytes - mem.kv_replicated_bytes, "#ff7f0e"),
                               ("KV cache, copies", mem.kv_replicated_bytes, "#ffbb78"),
                               ("per-sequence state", mem.state_bytes, "#17becf"), ("reserve", mem.reserve_bytes, "#bbbbbb")):
            fig.add_bar(y=["one GPU"], x=[v / 1e9], name=name, orientation="h", marker_color=color, legendgroup=name,
                        hovertemplate=name + ": %{x:,.2f} GB<extra></extra>")
        charts.add_marker_line(fig, mem.capacity_bytes / 1e9, f"capacity {mem.capacity_bytes / 1e9:,.0f} GB", "gray")
        fig.update_layout(barmode="stack", height=260, xaxis_title="GB (1e9 bytes)")
        if mem.fits:
            for k, (name, color) in PARTS.items():  # weights and KV cache: one legend entry for both subplots
                fig.add_bar(y=["step"], x=[split[k] * 1e3], name=name, orientation="h", marker_color=color,
                            legendgroup=name, showlegend=name not in ("weights", "KV cache"), xaxis="x2", yaxis="y2",
                            hovertemplate=name + ": %{x:,.3f} ms<extra></extra>")
            fig.update_layout(xaxis=dict(domain=[0, 0.46]), yaxis2=dict(anchor="x2"),
                              xaxis2=dict(domain=[0.54, 1], anchor="y2", title_text="milliseconds"))
        left, right = st.columns(2)
        left.markdown("**Memory of one GPU**")
        right.markdown("**One decode step, split**")
        if mem.fits:
            charts.show_chart(fig, key="mg_layout_charts")
            left, right = st.columns(2)
        else:
            with left:
                charts.show_chart(fig, key="mg_mem")
            right.caption("No decode step for a layout that does not hold the batch: pick one that fits.")
        fit_text = (f"At most {summary.max_batch:,} sequences per replica fit." if summary.max_batch
                    else "Not one sequence fits beside the weights.")
        left.caption(f"{fit_text} The batch puts {mem.sequences_per_gpu:,} sequences' cache on each GPU; "
                     f"{formats.fmt_bytes(mem.kv_replicated_bytes)} of it copies of another rank's heads.")
        if mem.fits:
            link = parallel.get_interconnect(interconnect) if interconnect else ic_default
            if link is not None and layout.gpus_per_replica > link.domain_size and link.scale_out:
                right.caption(f"{layout.gpus_per_replica} GPUs per replica span more than one {link.name} domain "
                              f"({link.domain_size} GPUs): collectives that leave it run over "
                              f"{parallel.get_interconnect(link.scale_out).name}.")
            if split["bubble_s"] > 0:
                right.caption(f"Pipeline bubble: stages idle {formats.fmt_seconds(split['bubble_s'])} of each step "
                              f"(fewer micro-batches in flight than stages).")

    st.subheader("Tokens/s per GPU against tokens/s per user")
    try:
        front = parallel.throughput_frontier(model, acc, ctx, TPS, (pp,), (ep,), None, wd, kvd, reserve, interconnect,
                                               emb)
        fig = charts.Figure()
        for t, part in front.groupby("tp"):
            fig.add_scatter(x=part["tokens_per_s_per_user"], y=part["tokens_per_s_per_gpu"], mode="lines+markers",
                            name=f"TP {t}", customdata=part[["batch", "tpot_s"]],
                            hovertemplate=f"TP {t}" + ", B = %{customdata[0]}<br>%{x:,.1f} tok/s per user<br>"
                            "%{y:,.0f} tok/s per GPU<extra></extra>")
        best = front[front["pareto"]].sort_values("tokens_per_s_per_user")
        fig.add_scatter(x=best["tokens_per_s_per_user"], y=best["tokens_per_s_per_gpu"], mode="lines", name="Pareto front",
                        line=dict(color="gray", dash="dot", width=2), hoverinfo="skip")
        # This configuration is named in the caption, not starred: the chart then stays the same while TP, batch
        # or replicas move (only PP, EP, the context and what the sidebar sets change its curves).
        fig.update_layout(xaxis_title="tokens/s per user (1 / TPOT, log)", yaxis_title="tokens/s per GPU (log)",
                          xaxis_type="log", yaxis_type="log")
        charts.show_chart(fig, key="mg_front")
        st.caption(f"One curve per TP, batch 1 to 512 (each up to its memory ceiling), PP and EP as chosen, at the "
                   f"Context above ({ctx:,} tokens). "
                   "Replicas move neither axis: they add GPUs and tokens alike."
                   + (f" This configuration, TP {tp} at B = {batch:,}: {summary.tokens_per_s_per_user:,.1f} tok/s per "
                      f"user, {formats.fmt_number(summary.tokens_per_s_per_gpu)} tok/s per GPU."
                      if summary is not None and summary.memory.fits else ""))
    except ValueError as exc:
        if layout is None:  # the chosen PP or EP is not one this model can take: said once, above
            st.caption("No curves: the PP and EP chosen above are not a layout this model can take (see above).")
        else:
            widgets.show_error(f"{exc} (TP as the curves, PP and EP as chosen above, the Context above). Raise PP or "
                              "EP above to see curves of layouts that hold it.")


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
    try:
        traffic = parallel.ServingTraffic(rps, peak, int(n_in), int(n_out), hit / 100)
        grid = parallel.plan_grid(model, acc, traffic, wd, kvd, reserve_bytes=reserve, interconnect=interconnect,
                                  embedding=emb, logits=sel.logits)
        searched = (parallel.PLAN_TP, parallel.PLAN_PP, parallel.plan_eps(model))
        if not grid["fits"].any():  # too big for up to 16 GPUs: search the sliders' range, as the section above does
            searched = (TPS, PPS, parallel.plan_eps(model, EPS))
            grid = parallel.plan_grid(model, acc, traffic, wd, kvd, *searched, reserve_bytes=reserve,
                                      interconnect=interconnect, embedding=emb, logits=sel.logits)
        plan = parallel.capacity_plan(model, acc, traffic, tpot_ms / 1e3, ttft_ms / 1e3, sel.price_per_hour_usd, grid=grid)
        st.success(plan.verdict)
        st.info(parallel.disaggregated_plan(model, acc, traffic, tpot_ms / 1e3, ttft_ms / 1e3, sel.price_per_hour_usd,
                                            grid=grid).verdict)
        with st.expander("Every layout of the grid, cheapest first"):
            options = parallel.plan_options(grid, traffic, tpot_ms / 1e3, ttft_ms / 1e3, sel.price_per_hour_usd)
            html_table.show_table(options.assign(tpot_ms=options["tpot_s"] * 1e3, ttft_ms=options["ttft_s"] * 1e3), hide_index=True,
                         width="stretch", column_order=["layout", "gpus", "usd_per_month", "batch", "replicas", "tpot_ms",
                                                        "ttft_ms", "max_batch", "fails"], column_config={
                             "gpus": st.column_config.NumberColumn("GPUs", format="%d"),
                             "usd_per_month": st.column_config.NumberColumn("USD per month", format="dollar"),
                             "batch": st.column_config.NumberColumn("batch per replica", format="%d"),
                             "replicas": st.column_config.NumberColumn("replicas", format="%d"),
                             "tpot_ms": st.column_config.NumberColumn("TPOT, ms", format="%.1f"),
                             "ttft_ms": st.column_config.NumberColumn("TTFT, ms", format="%.0f"),
                             "max_batch": st.column_config.NumberColumn("max batch"),
                             "fails": st.column_config.TextColumn("misses")})
            downloads.download_csv(options, "capacity_plan_layouts.csv", key="mg_plan_csv")
        st.caption(f"Searched: {parallel.grid_label(*searched)} x "
                   f"batch 1-{parallel.PLAN_MAX_BATCH}, the replicas each needs for the peak. This plan uses the traffic's "
                   "lengths, not the Context above: TPOT at the mean context (input + output / 2), memory reserved at input + "
                   f"output, TTFT = prefill of the uncached prompt without queueing ({sel.logits_label}); roofline lower "
                   "bounds. The second line "
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
    table = parallel.which_gpus(model, ctx, wd, kvd, reserve_bytes=reserve, embedding=emb)
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
        "tp": st.column_config.NumberColumn("smallest TP", format="%d"),
        "gpus": st.column_config.NumberColumn("GPUs", format="%d"),
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
