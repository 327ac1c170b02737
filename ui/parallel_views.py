"""The Many GPUs page's layout section: TP, PP, EP, replicas and the shared inputs, the layout's headline numbers
(or why it does not fit, and the smallest layout that does), one GPU's memory beside the decode step's parts, and
tokens/s per GPU against tokens/s per user.

The numbers come from calc.parallel; this module draws them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

from calc import collectives, layout_choice
from calc.layout import make_layout
from ui import caching, charts, equations, formats, url_state, widgets

TPS, PPS, EPS = [1, 2, 4, 8, 16, 32], [1, 2, 3, 4, 8], [1, 2, 4, 8, 16, 32, 64, 128, 256, 320]
#: The layers-per-stage choices (plain labels: a bound widget writes its shown label into the URL) -> calc's rule.
#: Each names a split convention, not an engine: the serving engine is chosen apart from it.
PP_RULES = {"vLLM's split": "vllm", "SGLang's split": "sglang", "by hand": None}
DEFAULTS = dict(mg_tp=1, mg_pp=1, mg_ep=1, mg_rep=1, mg_ctx=8192, mg_b=16, mg_ic="default", mg_res=0.0,
                mg_ppr="vLLM's split", mg_split="", mg_red=0)


def pp_rule_choice(value) -> str:
    """The layers-per-stage choice (a key of ``PP_RULES``) that ``value`` names: the choice itself, the engine's
    name alone that older links wrote ("vLLM", "SGLang") or calc's rule ("vllm", "sglang"), "hand" for "by hand",
    in any letter case and with spaces around it; ``value`` unchanged (as a string) where it names none. For
    ``url_state.accept_url_values``' ``same``."""
    v = str(value).strip().casefold()
    for label, rule in PP_RULES.items():
        names = {label.casefold(), label.split("'")[0].casefold(), label.casefold().removeprefix("by ")}
        if v in names | ({rule} if rule else set()):
            return label
    return str(value)


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


def refused_words(refused) -> str:
    """"Skipped, as vLLM and SGLang refuse them: TP8, TP8 PP2 (reason)." from ((label, reason), ...), one reason
    once with the layouts it refuses."""
    by_reason: dict[str, list[str]] = {}
    for label, why in refused:
        by_reason.setdefault(why, []).append(label)
    return "Skipped, as vLLM and SGLang refuse them: " + "; ".join(
        f"**{', '.join(labels)}** ({formats.md_escape(why)})" for why, labels in by_reason.items()) + "."


def _dp_words(layout) -> str:
    """", attention data-parallel in N groups of TP" when EP exceeds TP, else ""."""
    return (f", attention data-parallel in {layout.attention_dp:,} groups of TP {layout.tp}"
            if layout.attention_dp > 1 else "")


@dataclass(frozen=True)
class LayoutInputs:
    """The layout's controls: TP, PP, EP (1 for a dense model), replicas, context (tokens), batch per replica,
    the interconnect's id (None: the GPU's own) and the reserve per GPU (GB)."""

    tp: int
    pp: int
    ep: int
    replicas: int
    ctx: int
    batch: int
    interconnect: str | None
    reserve_gb: float
    pp_rule: str = "vllm"
    stage_layers: tuple | None = None
    redundant_experts: int = 0
    layout_error: str | None = None
    #: True when ``layout_error`` only asks for the split by hand not typed yet: an instruction, not a fault
    split_wanted: bool = False

    def layout(self, model):
        """The checked layout of these controls (``calc.layout.make_layout``).

        Raises:
            ValueError: a layout the engines refuse, or a hand split that cannot be read.
        """
        if self.layout_error:
            raise ValueError(self.layout_error)
        return make_layout(model, self.tp, self.pp, self.ep, self.replicas, self.redundant_experts,
                                    self.pp_rule, self.stage_layers)


def layout_controls(sel) -> LayoutInputs:
    """Two rows of four controls (keys mg_*, in the URL): TP, PP, EP, replicas; context, batch, interconnect,
    reserve. A link's EP for a dense model is said and taken as 1."""
    c1, c2, c3, c4 = st.columns(4)
    tp = c1.select_slider("Tensor parallel TP", TPS, value=1, key="mg_tp", bind="query-params")
    pp = c2.select_slider("Pipeline stages PP", PPS, value=1, key="mg_pp", bind="query-params")
    dense = not sel.model.is_moe
    ep = c3.select_slider("Expert parallel EP", EPS, value=1, key="mg_ep", bind="query-params", disabled=dense,
                          help="Mixture-of-experts models only. EP above TP runs attention data-parallel.")
    if dense and ep != 1:  # a link's EP for a dense model: the layout runs at EP 1 and says so
        c3.caption(f"{formats.md_escape(sel.model.name)} is dense: EP 1 (EP spreads experts).")
        ep = 1
    replicas = c4.number_input("Replicas", 1, 100_000, 1, key="mg_rep", bind="query-params")
    c1, c2, c3, c4 = st.columns(4)
    ctx = widgets.context_slider(c1, "Context, tokens", "mg_ctx")   # the range and "8K" of every other page
    batch = c2.number_input("Batch per replica", 1, 65_536, 16, step=8, key="mg_b", bind="query-params")
    widgets.context_warning(sel.model, ctx)
    ic_default = collectives.default_interconnect(sel.accelerator)
    ic_id = c3.selectbox("Interconnect", ["default"] + collectives.list_interconnects(), key="mg_ic", bind="query-params",
                         format_func=lambda i: "default" if i == "default" else _short(collectives.get_interconnect(i).name),
                         help=f"Default: the GPU's own, {ic_default.name if ic_default else 'none'}. Others: "
                              + "; ".join(collectives.get_interconnect(i).name for i in collectives.list_interconnects()) + ".")
    reserve_gb = c4.number_input("Reserve per GPU, GB", 0.0, 10_000.0, 0.0, step=1.0, key="mg_res", bind="query-params",
                                 help="Kept free for activations and CUDA graphs; 0 = the data sheet's capacity.")
    c1, c2, c3, _ = st.columns(4)
    url_state.accept_url_values("mg_ppr", list(PP_RULES), same=pp_rule_choice)  # older links: mg_ppr=vLLM
    rule = c1.selectbox("Layers per stage", list(PP_RULES), key="mg_ppr", bind="query-params",
                        help="How PP cuts the layers into stages of whole layers, a split convention only: it is "
                             "independent of the Serving engine select below, which picks the serving estimate's "
                             "fitted costs. vLLM's split (the default): the remainder on the stages just before the "
                             "last; SGLang's split: on the last ones; by hand: the layers of each stage, as "
                             "VLLM_PP_LAYER_PARTITION / SGLANG_PP_LAYER_PARTITION set them.")
    split_text = c2.text_input("Split by hand", key="mg_split", bind="query-params", disabled=rule != "by hand",
                               placeholder="e.g. 27,27,26", help="Layers of each stage, first to last, adding up to "
                               "the model's layers (used with 'by hand').")
    red = c3.number_input("Redundant experts", 0, 4096, 0, step=8, key="mg_red", bind="query-params", disabled=dense,
                          help="Extra copies of hot experts per MoE layer spread over the EP group (DeepSeek-V3: 32 "
                               "at EP 32 for prefill, 64 at EP 320 for decode). (experts + redundant) must divide by EP.")
    stage_layers, error, wanted = None, None, False
    if rule == "by hand" and pp > 1:
        try:
            stage_layers = tuple(int(x) for x in split_text.replace(" ", "").split(",") if x)
        except ValueError:
            error = f"the split by hand must be whole numbers separated by commas, e.g. 27,27,26; got {split_text!r}"
        wanted = not error and not stage_layers
        if wanted:
            error = f"type the layers of each of the {pp} stages, e.g. 27,27,26 (or choose vLLM's or SGLang's split)"
    return LayoutInputs(tp, pp, ep, replicas, ctx, batch, None if ic_id == "default" else ic_id, reserve_gb,
                        PP_RULES[rule] or "vllm", stage_layers, 0 if dense else int(red), error, wanted)


def layout_headline(sel, model, acc, summary, layout, inputs: LayoutInputs, reserve: float) -> None:
    """Five metrics for a layout that runs (with its equations); for one that does not, why, and the smallest
    layout of the sliders' range that holds the batch."""
    replicas, batch, ctx, wd, kvd = inputs.replicas, inputs.batch, inputs.ctx, sel.weight_dtype, sel.kv_dtype
    mem = summary.memory
    cols = widgets.metric_row(5)
    if mem.fits:
        cols[0].metric("GPUs", f"{layout.n_gpus:,}", help=f"{layout.gpus_per_replica} per replica x {replicas:,}")
        cols[1].metric("TPOT", formats.fmt_seconds(summary.tpot_s),
                       help=f"The roofline bound on a decode step (every byte at the data sheet's bandwidth, every "
                            f"FLOP at its peak), of which communication {formats.fmt_seconds(summary.comm_s)}; the "
                            "serving estimate below is what an engine measures.")
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
        blocked = reserve_words(reserve, mem.capacity_bytes, mem.weights_bytes)
        if summary.max_batch == 0:
            why = blocked or (f"The weights alone need {formats.fmt_bytes(mem.weights_bytes)} on each GPU of "
                              f"{formats.fmt_bytes(mem.capacity_bytes)}, with no room for a sequence.")
        else:
            why = (f"Batch {batch:,} does not fit: one GPU would need {formats.fmt_bytes(mem.total_bytes)} of its "
                   f"{formats.fmt_bytes(mem.capacity_bytes)}; at most {summary.max_batch:,} "
                   f"sequence{'s' if summary.max_batch != 1 else ''} per replica fit{'s' if summary.max_batch == 1 else ''}.")
        search = (TPS, PPS, layout_choice.plan_eps(model, EPS))
        try:
            fit = layout_choice.smallest_layout(model, acc, ctx, batch, wd, kvd, *search, reserve_bytes=reserve)
        except ValueError:
            fit = None
        where = f"{layout_choice.grid_label(*search)}, the sliders' range"
        seqs = f"{batch:,} sequence{'s' if batch != 1 else ''}"
        text = why + " " + (
            f"The smallest layout that holds {seqs} of {ctx:,} tokens (the Batch and Context above) "
            f"is **{fit.label}**, {fit.gpus_per_replica:,} GPUs per replica (max(TP, EP) x PP: "
            f"{fit.gpus_per_replica // fit.pp:,} rank{'s' if fit.gpus_per_replica // fit.pp != 1 else ''} per stage"
            f"{_dp_words(fit)}; searched: {where})."
            if fit else f"No layout of {where} holds {seqs} of {ctx:,} tokens: " + (
                "lower the Reserve per GPU above." if reserve >= mem.capacity_bytes else
                "pick a smaller dtype or a larger GPU, or lower the batch or the context"
                + (", or the Reserve per GPU above." if reserve > 0 else ".")))
        # The page opens on one GPU: for a model that needs more, that is the page's default, not the user's
        # choice, so it says what fits and offers it; a layout the user chose gets the error.
        chosen = any(st.session_state.get(k, 1) != 1 for k in ("mg_tp", "mg_pp", "mg_ep"))
        (st.error if chosen else st.info)(
            text if chosen else f"{model.name} does not fit on one {acc.name}. " + text)
        if fit is not None:
            st.button(f"Use {fit.label} ({fit.gpus_per_replica:,} GPUs per replica)", key="mg_use_fit", type="primary",
                      on_click=_use_layout, args=(fit.tp, fit.pp, fit.ep))


def reserve_words(reserve_bytes: float, capacity_bytes: float, weights_bytes: float) -> str:
    """Why nothing fits where the Reserve per GPU is the cause, naming it; "" where it is not. A reserve of a GPU's
    whole capacity or more leaves no room in any layout; one that with the weights fills the GPU leaves none for a
    sequence, where the weights alone would have left some."""
    if reserve_bytes <= 0:
        return ""
    if reserve_bytes >= capacity_bytes:
        return (f"The Reserve per GPU above ({formats.fmt_bytes(reserve_bytes)}) takes all of each GPU's "
                f"{formats.fmt_bytes(capacity_bytes)}: no layout has room for weights or a sequence.")
    if weights_bytes < capacity_bytes <= weights_bytes + reserve_bytes:
        return (f"The weights need {formats.fmt_bytes(weights_bytes)} and the Reserve per GPU above "
                f"{formats.fmt_bytes(reserve_bytes)} on each GPU of {formats.fmt_bytes(capacity_bytes)}, with no room "
                "for a sequence.")
    return ""


def _use_layout(tp: int, pp: int, ep: int) -> None:
    st.session_state.update(mg_tp=tp, mg_pp=pp, mg_ep=ep)


def memory_and_step_charts(summary, layout, split, interconnect, ic_default) -> None:
    """One GPU's memory (weights, KV, copies, state, reserve against capacity) and, for a layout that runs, the
    decode step's parts, in one figure; captions on what fits, cross-domain collectives and the pipeline bubble."""
    mem = summary.memory
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
    fit_text = (f"At most {summary.max_batch:,} sequence{'s' if summary.max_batch != 1 else ''} per replica "
                f"fit{'s' if summary.max_batch == 1 else ''}." if summary.max_batch
                else "Not one sequence fits beside the weights.")
    per_gpu = mem.sequences_per_gpu
    whose = "sequence's" if per_gpu == 1 else "sequences'"
    left.caption(f"{fit_text} The batch puts {per_gpu:,} {whose} cache on each GPU; "
                 f"{formats.fmt_bytes(mem.kv_replicated_bytes)} of it copies of another rank's heads.")
    if mem.fits:
        link = collectives.get_interconnect(interconnect) if interconnect else ic_default
        if link is not None and layout.gpus_per_replica > link.domain_size and link.scale_out:
            right.caption(f"{layout.gpus_per_replica} GPUs per replica span more than one {link.name} domain "
                          f"({link.domain_size} GPUs): a collective that leaves it runs in two levels, inside each "
                          f"domain on its own links and between domains over "
                          f"{collectives.get_interconnect(link.scale_out).name}, each GPU on its own NIC.")
        if split["bubble_s"] > 0:
            right.caption(f"Pipeline bubble: stages idle {formats.fmt_seconds(split['bubble_s'])} of each step "
                          f"(fewer micro-batches in flight than stages).")


def frontier_section(sel, model, acc, layout, summary, inputs: LayoutInputs, reserve: float) -> None:
    """Tokens/s per GPU against tokens/s per user: a curve per TP at the chosen PP and EP, and their Pareto front."""
    tp, pp, ep, ctx, batch, interconnect = inputs.tp, inputs.pp, inputs.ep, inputs.ctx, inputs.batch, inputs.interconnect
    wd, kvd, emb = sel.weight_dtype, sel.kv_dtype, sel.embedding
    st.subheader("Tokens/s per GPU against tokens/s per user")
    try:
        front = caching.cached_call(layout_choice.throughput_frontier, model, acc, ctx, TPS, (pp,), (ep,), None, wd,
                                    kvd, reserve, interconnect, emb)
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
        elif reserve >= acc.memory_bytes:   # no layout holds anything: raising PP or EP cannot help
            widgets.show_error(reserve_words(reserve, acc.memory_bytes, 0.0) + " Lower it to see the curves.")
        else:
            widgets.show_error(f"{exc} (TP as the curves, PP and EP as chosen above, the Context above). Raise PP "
                              "or EP above to see curves of layouts that hold it"
                              + (", or lower the Reserve per GPU." if reserve > 0 else "."))
