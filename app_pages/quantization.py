"""Quantization: bf16, fp8, int8 and int4 weights and KV cache side by side; where int8 weights stop winning."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import calc
from calc.exercises import COURSE_13B
from ui import caching, charts, downloads, equations, formats, html_table, sidebar, url_state, widgets

FORMATS = ("bf16", "fp8", "int8", "int4")
CONTEXTS = [2**k for k in range(10, 21)]          # 1K .. 1M tokens
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
                     help=f"Sidebar: {sel.model.name}. Course: {SEED_13B.name}, 13e9 parameters.")
    url_state.accept_url_values("q_apply", list(APPLY), APPLY.get)
    apply = c1.radio("Quantize", list(APPLY), format_func=APPLY.get, key="q_apply", bind="query-params",
                     horizontal=True, help="The part not quantized stays at the sidebar's dtype.")
    url_state.accept_url_values("q_ctx", CONTEXTS, lambda s: f"{s // 1024:,}K" if s < 2**20 else "1M")
    ctx = c2.select_slider("Context length S (tokens)", CONTEXTS, value=8192, key="q_ctx", bind="query-params",
                           format_func=lambda s: f"{s // 1024:,}K" if s < 2**20 else "1M")
    batch = c2.select_slider("Batch B (sequences)", BATCHES, value=32, key="q_b", bind="query-params")
    reserve_gb = c3.number_input("Reserved for activations (GB)", min_value=0.0, max_value=100.0, value=0.0, step=1.0,
                                 key="q_res", bind="query-params", help="Memory kept free; lowers the max batch.")
    model = SEED_13B if which == "seed13b" else sel.model
    acc = sel.accelerator
    reserve = reserve_gb * 1e9
    st.caption(f"{model.name} on {acc.name}. GB = 10^9 bytes; step times are roofline lower bounds (the inference course, "
               f"week 11, step 4). Max batch against {sel.capacity_label}.")

    try:
        rows = []
        for f in FORMATS:
            wq = f if apply in ("both", "weights") else sel.weight_dtype
            kvq = f if apply in ("both", "cache") else sel.kv_dtype
            step = calc.decode_step_time(model, acc, batch, ctx, wq, kvq, embedding=sel.embedding)
            budget = calc.memory_budget(model, acc, ctx, batch, wq, kvq, reserve_bytes=reserve)
            rows.append(dict(format=f, weight_dtype=wq, kv_dtype=kvq, weights_bytes=budget.weights_bytes,
                             kv_bytes=budget.kv_bytes, total_bytes=budget.total_bytes, gpus_needed=budget.n_accelerators,
                             weights_read_s=step.weights_s, kv_read_s=step.kv_s, compute_s=step.compute_s,
                             step_s=step.total_s, tokens_per_s=step.tokens_per_s,
                             max_batch=calc.max_batch(model, acc, ctx, wq, kvq, reserve)))
        table = pd.DataFrame(rows)
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
                   + "; ".join(f"{r.format} needs {r.gpus_needed} ({formats.fmt_bytes(r.total_bytes)})"
                               for r in too_big.itertuples())
                   + ". The step times below assume one device's bandwidth; a max batch of 0 means the weights "
                     "alone do not fit.")
    with widgets.metric_row(4) as m:
        for i, r in enumerate(table.itertuples()):
            m[i].metric(f"{r.format}: decode step at B = {batch}", formats.fmt_seconds(r.step_s),
                        delta=f"max batch {r.max_batch:,}", delta_color="off", delta_arrow="off",
                        help=f"weights {r.weight_dtype}, cache {r.kv_dtype}; memory {formats.fmt_bytes(r.total_bytes)}")
    widgets.show_equations(equations.quant_rows(table, acc, reserve, batch))

    # Three panels in one figure: the browser draws one chart, not three, when B or S moves.
    titles = (f"<b>Memory at B = {batch}, {ctx:,} tokens</b>", f"<b>Decode step at B = {batch}</b>",
              f"<b>Max batch at {ctx:,} tokens</b>")
    fig = charts.Figure(subplots=dict(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.09))
    fig.update_annotations(yshift=78, font_size=15)  # the panel titles above the legends
    # Each panel starts the house colours afresh (one figure would otherwise carry the cycle on across panels).
    colors = ("#2563eb", "#f97316", "#16a34a")
    for (col, name), color in zip((("weights_bytes", "weights"), ("kv_bytes", f"KV cache (B = {batch})")), colors):
        fig.add_bar(x=table["format"], y=table[col] / 1e9, name=name, legend="legend", row=1, col=1, marker_color=color,
                    hovertemplate="%{x}: %{y:,.2f} GB<extra></extra>")
    fig.add_hline(y=acc.memory_bytes / 1e9, line_dash="dash", line_color="#888888", row=1, col=1,
                  annotation_text=f"{acc.memory_bytes / 1e9:,.0f} GB")
    for (col, name), color in zip((("weights_read_s", "weights read"), ("kv_read_s", "cache read"), ("step_s", "step")),
                                  colors):
        fig.add_bar(x=table["format"], y=table[col] * 1e3, name=name, legend="legend2", row=1, col=2, marker_color=color,
                    hovertemplate="%{x}: %{y:,.2f} ms<extra></extra>")
    fig.add_bar(x=table["format"], y=table["max_batch"], name="max batch", showlegend=False, row=1, col=3,
                marker_color=colors[0],
                hovertemplate="%{x}: %{y:,} sequences<extra></extra>")
    fig.update_xaxes(title="format")
    fig.update_yaxes(title="memory (GB)", row=1, col=1)
    fig.update_yaxes(title="time per decode step (ms)", row=1, col=2)
    fig.update_yaxes(title="max batch (sequences)", row=1, col=3)
    legend = dict(orientation="v", yanchor="bottom", y=1.02, xanchor="left", font_size=13)
    fig.update_layout(barmode="group", height=470, legend2=dict(legend, x=0.37),
                      margin=dict(t=115))
    fig.update_layout(legend=dict(legend, x=0.0))
    charts.show_chart(fig, key="q_chart_formats")
    shown = table.copy()
    for c in ("weights_bytes", "kv_bytes", "total_bytes"):
        shown[c] = [formats.fmt_bytes(x) for x in table[c]]
    for c in ("weights_read_s", "kv_read_s", "compute_s", "step_s"):
        shown[c] = [formats.fmt_seconds(x) for x in table[c]]
    shown["tokens_per_s"] = [formats.fmt_number(x) for x in table["tokens_per_s"]]
    format_columns = {
        "format": st.column_config.TextColumn("format", width="small", pinned=True),
        "weight_dtype": st.column_config.TextColumn("weights", width="small"),
        "kv_dtype": st.column_config.TextColumn("KV cache", width="small"), "weights_bytes": "weight memory",
        "kv_bytes": f"KV memory (B = {batch:,})", "total_bytes": "total memory",
        "gpus_needed": st.column_config.NumberColumn("GPUs", width="small"), "weights_read_s": "weight read",
        "kv_read_s": "KV read", "compute_s": "compute 2NB/P", "step_s": "decode step",
        "tokens_per_s": "throughput (tok/s)", "max_batch": st.column_config.NumberColumn("max batch", format="localized")}
    # The key columns fit at 1280 px; the memory and time parts are one click away.
    html_table.show_table(shown, hide_index=True, width="stretch", column_config=format_columns, column_order=(
        "format", "total_bytes", "gpus_needed", "step_s", "tokens_per_s", "max_batch"))
    # Expanders build their table only while open (toggling reruns the page): a slider move redraws no hidden table.
    every = st.expander("Every column: dtypes, memory and the step's parts", key="q_every", on_change="rerun")
    if every.open:
        html_table.show_table(shown, container=every, hide_index=True, width="stretch", column_config=format_columns, column_order=(
            "format", "weight_dtype", "kv_dtype", "weights_bytes", "kv_bytes", "weights_read_s", "kv_read_s", "compute_s"))
    downloads.download_csv(table, "quantization.csv", key="q_csv", inputs={
        "model_used": model.name, "context_len": ctx, "batch": batch, "quantize": apply, "reserve_gb": reserve_gb})

    st.subheader("Formats as stored: what a weight really costs")
    try:
        format_rows = calc.quant.format_table(model)
        steps = [calc.decode_step_time(model, acc, batch, ctx, f, sel.kv_dtype, embedding=sel.embedding)
                 for f in format_rows["format"]]
        format_rows["step_s"] = [s.total_s for s in steps]
        format_rows["max_batch"] = [calc.max_batch(model, acc, ctx, f, sel.kv_dtype, reserve) for f in format_rows["format"]]
    except ValueError as exc:
        widgets.show_error(exc)
        return
    html_table.show_table(format_rows.assign(weights_bytes=[formats.fmt_bytes(x) for x in format_rows["weights_bytes"]],
                                step_s=[formats.fmt_seconds(x) for x in format_rows["step_s"]]),
                 hide_index=True, width="stretch", column_order=(
                     "format", "bits_per_quantized_weight", "bits_per_param", "weights_bytes", "step_s", "max_batch"),
                 column_config={
                     "format": st.column_config.TextColumn("format", pinned=True),
                     "bits_per_quantized_weight": st.column_config.NumberColumn("bits per quantized weight", format="%.3f"),
                     "bits_per_param": st.column_config.NumberColumn("bits per parameter, whole model", format="%.2f"),
                     "weights_bytes": "weights", "step_s": f"decode step (B = {batch:,})",
                     "max_batch": st.column_config.NumberColumn("max batch", format="localized")})
    st.caption(f"{model.name}; cache in {sel.kv_dtype}. A block format stores a scale per block: q4_0 is 18 bytes per "
               "32 weights (4.5 bits), mxfp4 17 bytes per 32 (4.25), nvfp4 9 bytes per 16 (4.5), int4-g128 adds an "
               "fp16 scale and a 4-bit zero per 128 (4.16). The recipes keep embeddings, the output head and norms in "
               "16-bit (gpt-oss also its attention and router), so the whole model costs more bits per parameter "
               "than the block. Checked against published files: gpt-oss-20b/120b in mxfp4, Llama-3-8B in q8_0 and "
               "q4_K_M (within 0.2%).")
    how = st.expander("How each format stores a block, what it leaves unquantized, and its source", key="q_how",
                      on_change="rerun")
    if how.open:
        html_table.show_table(format_rows[["format", "block", "keeps", "compute_dtype", "source"]], container=how, hide_index=True, width="stretch",
                     column_config={"keeps": "left unquantized", "compute_dtype": "matmul in"})

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
    fig = charts.Figure()
    for df, name in ((int8_w, "int8 weights, bf16 cache"), (int8_kv, "bf16 weights, int8 cache")):
        fig.add_scatter(x=df["batch"], y=df["total_s"] * 1e3, mode="lines", name=name,
                        customdata=np.where(df["fits"], "fits", "exceeds one GPU"),
                        hovertemplate="B = %{x}: %{y:,.2f} ms (%{customdata})<extra></extra>")
    # Named in the legend: on the plot the flip label ran across the chosen-B line.
    charts.add_marker_line(fig, flip, f"flip at B = {flip:,.1f}", "#888888", "dash")
    # No line at the chosen B (its two steps are in the metrics above): the chart stays the same when only B moves.
    st.markdown(f"**Decode step against batch, {model.name}, {ctx:,} tokens, {acc.name}**")
    fig.update_layout(xaxis_title="batch B (sequences)",
                      yaxis_title="decode step (ms)", hovermode="x unified")
    charts.show_chart(fig, key="q_chart_flip")
    st.markdown(f"Below B = {flip:,.1f} the weights are the bigger read, so quantizing them saves more; above it the "
                "cache is. A longer context lowers the threshold. The course's 13B at 4K on an H100: 10.3 ms against "
                "11.0 ms at B = 32, flipping near B = 39.")


explore()

st.subheader("What it costs in quality (chapter 9, LLM inference)")
st.table(QUALITY.astype(str).set_index("scheme"))
st.markdown("**4-bit weights are the last stop before the quality cliff.** FP8 is nearly lossless; more "
            "parameters at 4-bit usually beat fewer at 16-bit (70B-int4 ≳ 13B-bf16). Check quality after each step.")
downloads.download_csv(QUALITY.astype(str), "quantization_quality.csv", key="q_csv_quality")
