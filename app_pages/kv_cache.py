"""KV cache bill: bytes per token, per sequence and per batch under MHA, GQA, MQA, MLA and windows."""
import streamlit as st

import calc
from ui import charts, equations, formats, sidebar, widgets
from ui.kv_layout import CONTEXTS, layer_breakdown_section, layout_comparison_section, layout_controls

sel = sidebar.selection()
st.title("KV cache bill")
st.caption(f"{formats.md_escape(sel.model.name)} on {sel.accelerator.name}; weights {sel.weight_dtype}, KV cache {sel.kv_dtype} "
           "(change them in the sidebar, or load your own config.json there).")

widgets.experiment_buttons({
    "8B at 128K context": dict(model="llama-3.1-8b", kv_layout="model", kv_win="model", kv_ctx=131072, kv_b=1,
                               wq="bf16", kvq="bf16", kv_full=False, kv_exp=False),
    "GPT-3-style MHA: 96 KV heads": dict(model="gpt-3-175b", kv_layout="model", kv_win="model", kv_ctx=8192,
                                         kv_b=1, wq="bf16", kvq="bf16", kv_full=False, kv_exp=False),
    "DeepSeek MLA": dict(model="deepseek-v3", kv_layout="model", kv_win="model", kv_ctx=131072, kv_b=1,
                         wq="bf16", kvq="bf16", kv_full=False, kv_exp=False),
}, key="kv_exp_btn")


@widgets.fragment
def explore() -> None:
    """Everything the page's own controls change. A fragment: a control here reruns this part only."""
    sel = sidebar.selection()
    choice = layout_controls(sel)
    ctx, batch, window, sliding, mla = choice.ctx, choice.batch, choice.window, choice.sliding, choice.mla

    model = calc.layers.with_state_convention(choice.model, choice.state_conv)

    try:
        # compressed layers (DeepSeek-V4) hold W tokens plus S/r entries: their per-token figure is an average at S
        averaged = calc.layers.has_compressed_layers(model)
        per_token = (calc.kv.kv_bytes_per_context_token(model, ctx, sel.kv_dtype, sliding, mla) if averaged
                     else calc.kv_bytes_per_token(model, sel.kv_dtype, mla=mla))
        avg_8k, avg_128k = (calc.kv.kv_bytes_per_context_token(model, n, sel.kv_dtype, sliding, mla) for n in (8192, 131072))
        per_seq = calc.kv_cache_bytes(model, ctx, 1, sel.kv_dtype, sliding, mla)
        budget = calc.memory_budget(model, sel.accelerator, ctx, batch, sel.weight_dtype, sel.kv_dtype,
                                    sliding=sliding, mla=mla)
        own_window = model.sliding_window if (model.sliding_window or 0) < calc.kv.NO_WINDOW else None  # "No window"
        variants = calc.attention_variants(model, window=int(window) if window.isdigit() else (own_window or 4096))
        sweep_kv = calc.kv_cache_bytes_array(model, CONTEXTS, batch, sel.kv_dtype, sliding, mla)
        state = calc.kv.kv_state_bytes(model)
        # the prose's worked example is the selected model's (the course quotes Llama-3-8B: 128 KiB/token, 1.07 GB at 8K)
        seq_8k, seq_128k = (calc.kv_cache_bytes(model, n, 1, sel.kv_dtype, sliding, mla) for n in (8192, 131072))
        per_layer = calc.layers.layer_breakdown(model, ctx, sel.kv_dtype, sliding, mla)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    with widgets.metric_row(6, per_row=3) as m:  # two rows: the per-token and constant parts, then the totals
        if averaged:
            m[0].metric(f"KV per token (average at {ctx:,})", f"{per_token:,.0f} B", help=f"The cache of {ctx:,} "
                        f"tokens without its constant state, divided by {ctx:,} ({formats.fmt_bytes(per_token, 'GiB')}): "
                        "the compressed layers hold a window of W tokens plus one entry per r tokens, so the figure "
                        "falls as S grows.")
        else:
            m[0].metric("KV per token", f"{per_token:,.0f} B", help="Per context token, summed over the layers that own "
                        f"a cache, each counted as full attention ({formats.fmt_bytes(per_token, 'GiB')}).")
        m[1].metric("Constant per sequence", formats.fmt_bytes(state), help="Conv + recurrent state of the Mamba, "
                    f"Gated DeltaNet and lightning layers (state in {model.ssm_state_dtype}, as the config says or fp32 "
                    "when it says nothing; conv in bf16), and DeepSeek-V4's compressor states (fp32): the same at any "
                    "context.")
        m[2].metric("KV per sequence", formats.fmt_bytes(per_seq), help=f"{ctx:,} tokens, windows and chunks applied, "
                    "constant state included.")
        m[3].metric(f"KV in total (B = {batch:,})", formats.fmt_bytes(budget.kv_bytes))
        m[4].metric("Weights", formats.fmt_bytes(budget.weights_bytes), help=f"{sel.model.n_params:,} parameters in "
                    f"{sel.weight_dtype}." + (f" The checkpoint's MTP module ({sel.model.n_mtp_params:,} parameters) is "
                    "not loaded: vLLM and SGLang load it only for MTP speculative decoding."
                    if sel.model.n_mtp_layers else ""))
    verdict = (f"fits on one {sel.accelerator.name}" if budget.fits
               else f"needs {budget.n_accelerators:,} x {sel.accelerator.name}")
    detail = (f"Weights {formats.fmt_bytes(budget.weights_bytes)} + cache {formats.fmt_bytes(budget.kv_bytes)} = "
              f"{formats.fmt_bytes(budget.total_bytes)} of {formats.fmt_bytes(budget.capacity_bytes)}: **{verdict}**.")
    (st.success if budget.fits else st.warning)(detail)
    widgets.show_equations(equations.kv_rows(model, per_token, per_seq, budget.kv_bytes, ctx, batch, sel.kv_dtype, state,
                                             averaged=averaged))
    st.caption(f"GB = 10^9 bytes, kB = 10^3 bytes. Capacity: {sel.capacity_label} (sidebar: memory capacity). No memory "
               "is reserved for activations here.")

    st.latex(r"\text{KV bytes} = 2 \cdot L \cdot K \cdot H \cdot \text{bytes} \cdot S \cdot B")
    if len(per_layer) > 1 or state or per_layer["kind"].iloc[0] != "full":  # anything but plain full attention
        layer_breakdown_section(model, per_layer, ctx)
    st.markdown(
        "The K and V of an old token never change, so decode stores them instead of recomputing them, and pays "
        f"in memory: for {formats.md_escape(model.name)} ({sel.kv_dtype} cache) "
        + (f"{formats.fmt_bytes(seq_8k)} per 8K sequence ({avg_8k:,.0f} B per token on average, constant state "
           f"apart), {formats.fmt_bytes(seq_128k)} at 128K ({avg_128k:,.0f} B per token), " if averaged else
           f"{per_token:,.0f} B ({formats.fmt_bytes(per_token, 'GiB')}) per token, {formats.fmt_bytes(seq_8k)} per 8K "
           f"sequence, {formats.fmt_bytes(seq_128k)} at 128K, ")
        + f"{'more' if seq_128k > budget.weights_bytes else 'less'} than its "
        f"{formats.fmt_bytes(budget.weights_bytes)} of weights. The bill is linear in context and in concurrency, which is "
        "why GQA (divide by N/K), MLA (DeepSeek-V3's 576-wide latent instead of K and V), windows (cap S at W) and 8-bit "
        "caches (halve it) exist. MLA: L(d_c + d_h^R) per token instead of 2LKH; a window layer holds min(S, W) tokens.")

    cap_gb = sel.accelerator.memory_bytes / 1e9
    fig = charts.Figure()
    labels = [f"{s // 1024:,}K" if s < 2**20 else "1M" for s in CONTEXTS]
    # No highlight of the chosen S: the chart then stays the same when only S moves (the browser keeps it).
    fig.add_bar(x=labels, y=[budget.weights_bytes / 1e9] * len(CONTEXTS), name="weights",
                hovertemplate="%{x}: weights %{y:,.2f} GB<extra></extra>")
    fig.add_bar(x=labels, y=sweep_kv / 1e9, name=f"KV cache, B = {batch}",
                hovertemplate="%{x}: KV cache %{y:,.2f} GB<extra></extra>")
    fig.add_hline(y=cap_gb, line_dash="dash", line_color="#888888", annotation_text=f"{sel.accelerator.name}: {cap_gb:,.0f} GB",
                  annotation_position="top left")
    fig.update_layout(barmode="stack", legend_traceorder="normal",
                      xaxis_title="context length S (tokens)", yaxis_title="memory (GB)")
    st.markdown(f"**Weights and cache of {formats.md_escape(model.name)} against one GPU's memory**")
    charts.show_chart(fig, key="kv_chart_ctx")

    layout_comparison_section(sel, model, variants, budget, choice)


explore()
