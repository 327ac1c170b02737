"""Quantization: bf16, fp8, int8 and int4 weights and KV cache side by side; where int8 weights stop winning."""
import numpy as np
import pandas as pd
import streamlit as st

import calc
from calc import sweeps
from course.exercises import COURSE_13B
from ui import caching, charts, downloads, equations, formats, quant_views, sidebar, url_state, widgets

FORMATS = ("bf16", "fp8", "int8", "int4")
BATCHES = [1, 2, 4, 8, 16, 32, 48, 64, 128, 256, 512]
SWEEP_BATCHES = np.arange(1, 257)
APPLY = {"both": "weights and cache", "weights": "weights only", "cache": "cache only"}
SEED_13B = COURSE_13B  # the course's 13B of its back-of-the-envelope problems (one definition, in calc)
QUALITY = pd.DataFrame([
    ("bf16", 16, "baseline", "The reference everything is compared with."),
    ("FP8", 8, "nearly lossless", "Native on H100; used for training and inference; the new default at frontier labs."),
    ("INT8 (LLM.int8)", 8, "small loss", "Per-channel scales plus outlier separation: the few huge activation "
                                         "dimensions are kept in fp16."),
    ("GPTQ / AWQ", 4, "~1% loss for 4x compression", "Post-training weight quantization: GPTQ minimises "
                                                      "second-order error layer by layer; AWQ protects the weights "
                                                      "that large activations hit."),
    ("KV cache quantization", "8 / 4", "task-dependent", "The second battlefield: large gains at long context."),
    ("below 4-bit", "< 4", "the cliff", "Below about 3 bits quality drops noticeably."),
], columns=["scheme", "bits", "quality", "key points"])

sel = sidebar.selection()
st.title("Quantization")
widgets.experiment_buttons({
    "Week 11 napkin problem 5 (13B, 4K, B = 32)": dict(q_model="seed13b", q_ctx=4096, q_b=32, q_res=6.0, q_apply="both",
                                               gpu="h100-sxm", wq="bf16", kvq="bf16", emb="table"),
    "Llama-3-8B at 8K, B = 32": dict(q_model="sidebar", model="llama-3-8b", q_ctx=8192, q_b=32, q_res=0.0,
                                     q_apply="both", gpu="h100-sxm", wq="bf16", kvq="bf16", emb="table"),
}, key="q_exp_btn")

@widgets.fragment
def explore() -> None:
    """The page's controls and everything they change. A fragment: a control here reruns this part only."""
    sel = sidebar.selection()
    c1, c2, c3 = st.columns(3)
    url_state.accept_url_values("q_model", ["sidebar", "seed13b"], {"sidebar": "The sidebar's model", "seed13b": "The course's 13B"}.get)
    which = c1.radio("Model", ["sidebar", "seed13b"], key="q_model", bind="query-params",
                     format_func={"sidebar": "The sidebar's model", "seed13b": "The course's 13B"}.get,
                     help=f"Sidebar: {formats.md_escape(sel.model.name)}. Course: {SEED_13B.name}, 13e9 parameters.")
    url_state.accept_url_values("q_apply", list(APPLY), APPLY.get)
    apply = c1.radio("Quantize", list(APPLY), format_func=APPLY.get, key="q_apply", bind="query-params",
                     horizontal=True, help="The part not quantized stays at the sidebar's dtype.")
    ctx = widgets.context_slider(c2, "Context length S (tokens)", "q_ctx")
    batch = c2.select_slider("Batch B (sequences)", BATCHES, value=32, key="q_b", bind="query-params")
    reserve_gb = c3.number_input("Reserved for activations (GB)", min_value=0.0, max_value=100.0, value=0.0, step=1.0,
                                 key="q_res", bind="query-params", help="Memory kept free; lowers the max batch.")
    model = SEED_13B if which == "seed13b" else sel.model
    widgets.context_warning(model, ctx)
    acc = sel.accelerator
    reserve = reserve_gb * 1e9
    st.caption(f"{formats.md_escape(model.name)} on {acc.name}. GB = 10^9 bytes; step times are roofline lower bounds (the inference course, "
               f"week 11, step 4). Max batch against {sel.capacity_label}.")

    try:
        table = sweeps.quantization_table(model, acc, ctx, batch, FORMATS, apply, sel.weight_dtype, sel.kv_dtype,
                                          sel.embedding, reserve)
        int8_w = caching.cached_call(calc.decode_sweep, model, acc, ctx, SWEEP_BATCHES, "int8", "bf16", embedding=sel.embedding)
        int8_kv = caching.cached_call(calc.decode_sweep, model, acc, ctx, SWEEP_BATCHES, "bf16", "int8", embedding=sel.embedding)
        at_b_w = calc.decode_step_time(model, acc, batch, ctx, "int8", "bf16", embedding=sel.embedding)
        at_b_kv = calc.decode_step_time(model, acc, batch, ctx, "bf16", "int8", embedding=sel.embedding)
        flip = calc.batch_where_cache_equals_weights(model, ctx, "bf16", "bf16")
    except ValueError as exc:
        widgets.show_error(exc)
        return

    too_big = table[table["gpus_needed"] > 1]
    if len(too_big):
        st.warning("Does not fit on one " + acc.name + f" at B = {batch} and {ctx:,} tokens: "
                   + "; ".join(f"{r.format} needs {r.gpus_needed:,} ({formats.fmt_bytes(r.total_bytes)})"
                               for r in too_big.itertuples())
                   + ". The step times below assume one device's bandwidth" + quant_views.zero_batch_reasons(
                       table, acc, reserve) + ".")
    with widgets.metric_row(4) as m:
        for i, r in enumerate(table.itertuples()):
            m[i].metric(f"{r.format}: decode step at B = {batch}", formats.fmt_seconds(r.step_s),
                        delta=f"max batch {r.max_batch:,}", delta_color="off", delta_arrow="off",
                        help=f"weights {r.weight_dtype}, cache {r.kv_dtype}; memory {formats.fmt_bytes(r.total_bytes)}")
    widgets.show_equations(equations.quant_rows(table, acc, reserve, batch))

    fig = quant_views.formats_figure(table, acc, batch, ctx)
    charts.show_chart(fig, key="q_chart_formats")
    quant_views.formats_table(table, batch)
    downloads.download_csv(table, "quantization.csv", key="q_csv", inputs={
        "model_used": model.name, "context_len": ctx, "batch": batch, "quantize": apply, "reserve_gb": reserve_gb})

    st.subheader("Formats as stored: what a weight really costs")
    try:
        format_rows = sweeps.stored_format_steps(model, acc, ctx, batch, sel.kv_dtype, sel.embedding, reserve)
    except ValueError as exc:
        widgets.show_error(exc)
        return
    quant_views.stored_formats_table(format_rows, model, batch, sel.kv_dtype)
    st.latex(r"t_\text{step} \approx \frac{N \cdot b_\text{w} + B \cdot S \cdot 2LKH \cdot b_\text{kv}}{W}"
             r"\quad(\text{while } 2NB/P \text{ stays below the weight read})")
    st.markdown("Decode is bound by memory bandwidth, so halving the bytes roughly halves the step and doubles "
                "what fits. Weights are read once per step whatever B is; the cache is read once per sequence. "
                "So int8 weights win at small batch, an int8 cache wins once the batch's cache outweighs the weights.")

    st.subheader("int8 weights or an int8 cache? (the inference course, week 11, napkin problem 5)")
    with widgets.metric_row(3) as n:
        n[0].metric(f"int8 weights, bf16 cache, B = {batch}", formats.fmt_seconds(at_b_w.total_s))
        n[1].metric(f"bf16 weights, int8 cache, B = {batch}", formats.fmt_seconds(at_b_kv.total_s))
        n[2].metric("They flip at B", f"{flip:,.1f}", help="Where the batch's bf16 cache weighs as much as the bf16 "
                    "weights: weight bytes / KV per sequence.")
    fig = quant_views.flip_figure(int8_w, int8_kv, flip)
    st.markdown(f"**Decode step against batch, {formats.md_escape(model.name)}, {ctx:,} tokens, {acc.name}**")
    charts.show_chart(fig, key="q_chart_flip")
    st.markdown((f"Below B = {flip:,.1f} the weights are the bigger read, so quantizing them saves more; above it the "
                 "cache is." if flip >= 1 else f"At {ctx:,} tokens one sequence's cache already outweighs the weights "
                 f"(they would weigh the same at B = {flip:,.2g}, less than one sequence), so an int8 cache saves more at "
                 "every batch.") + " A longer context lowers the threshold. The course's 13B at 4K on an H100: 10.3 ms against "
                "11.0 ms at B = 32, flipping near B = 39.")


explore()

st.subheader("What it costs in quality (chapter 9, LLM inference)")
st.table(QUALITY.astype(str).set_index("scheme"))
st.markdown("**4-bit weights are the last stop before the quality cliff.** FP8 is nearly lossless; more "
            "parameters at 4-bit usually beat fewer at 16-bit (70B-int4 ≳ 13B-bf16). Check quality after each step.")
downloads.download_csv(QUALITY.astype(str), "quantization_quality.csv", key="q_csv_quality")
