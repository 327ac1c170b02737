"""Many GPUs: tensor, pipeline and expert parallelism, replicas, a capacity plan, which GPUs, pins."""
import streamlit as st

from ui import formats, many_gpus_views, parallel_views, serving_views, sidebar, widgets
from ui.parallel_views import DEFAULTS
from calc import collectives, layout_choice, parallel

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
    "DeepSeek-V3 at EP 8 on H200": dict(DEFAULTS, model="deepseek-v3", gpu="h200", wq="fp8",
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
    # the serving estimate's engine is the page's: the capacity plan below sizes with it too
    shared = {"ctx": ctx, "interconnect": interconnect, "reserve": reserve, "reserve_gb": reserve_gb,
              "engine": st.session_state.get(many_gpus_views.ENGINE_KEY)}
    if not st.session_state.get("_mg_full_run") and st.session_state.get("_mg_shared") != shared:
        # Context, interconnect, reserve and engine also drive the capacity plan and the GPU table below the fragment.
        st.rerun(scope="app")
    st.session_state["_mg_shared"] = shared
    model, acc, wd, kvd, emb = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.embedding
    link_name = collectives.get_interconnect(interconnect).name if interconnect else (
        f"{ic_default.name}, the GPU's own" if ic_default else "none")
    st.caption(f"{formats.md_escape(model.name)} on {acc.name}; interconnect {link_name}; weights {wd}, KV cache {kvd}, input embedding: "
               f"{sidebar.EMBEDDING[emb]}; "
               f"{formats.fmt_usd(sel.price_per_hour_usd)} per GPU-hour (all from the sidebar).")

    try:
        layout = inputs.layout(model)
        summary = layout_choice.layout_summary(model, acc, ctx, batch, layout, wd, kvd, sel.price_per_hour_usd,
                                          interconnect, reserve, emb)
        split = parallel.step_split(model, acc, batch, ctx, layout, wd, kvd, interconnect, emb)
    except ValueError as exc:
        if inputs.split_wanted:  # "by hand" chosen, nothing typed yet: what to do next, not a failure
            st.info(formats.md_escape(formats.sentence(exc)))
        else:
            widgets.show_error(exc)
        layout = summary = None

    engine_here = summary is not None and summary.memory.fits  # the serving block draws the engine selector
    est = None
    if summary is not None:
        st.caption(f"Convention: {layout.convention(model)}.")
        parallel_views.layout_headline(sel, model, acc, summary, layout, inputs, reserve)
        if engine_here:  # a layout that holds no batch has no serving estimate: the headline says why
            est = serving_views.section("mg_srv", model, acc, ctx, 256, batch * replicas, wd, kvd, tp, pp, ep,
                                        replicas, price_per_gpu_hour_usd=sel.price_per_hour_usd,
                                        interconnect=interconnect)
        parallel_views.memory_and_step_charts(summary, layout, split, interconnect, ic_default)
    notices_above = tuple(est.notices) if est is not None else ()
    if (st.session_state.get(many_gpus_views.ENGINE_DRAWN_ABOVE) != engine_here
            or st.session_state.get(many_gpus_views.NOTICES_ABOVE) != notices_above):
        # the capacity plan draws the engine selector itself when this block does not, and shows the serving notices
        # this block did not: it must run again
        st.session_state[many_gpus_views.ENGINE_DRAWN_ABOVE] = engine_here
        st.session_state[many_gpus_views.NOTICES_ABOVE] = notices_above
        if not st.session_state.get("_mg_full_run"):
            st.rerun(scope="app")

    parallel_views.frontier_section(sel, model, acc, layout, summary, inputs, reserve)


st.session_state["_mg_full_run"] = True  # a whole-page run: the layout section needs no second one
try:
    layout_section()
finally:
    st.session_state["_mg_full_run"] = False
shared = st.session_state["_mg_shared"]
ctx, interconnect, reserve, reserve_gb = shared["ctx"], shared["interconnect"], shared["reserve"], shared["reserve_gb"]
model, acc, wd, kvd, emb = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.embedding
st.subheader("Capacity plan")
many_gpus_views.plan_section(model, acc, wd, kvd, emb, interconnect, reserve)

st.subheader("Which GPUs can run it")
many_gpus_views.which_gpus_section(model, ctx, wd, kvd, reserve, reserve_gb, emb)

st.subheader("Pinned configurations")
many_gpus_views.pins_section()
