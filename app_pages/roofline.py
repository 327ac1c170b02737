"""Decode and the roofline: why decode is memory-bound, the step split, the knee, TTFT."""
import streamlit as st

import calc
from calc import sweeps
from ui import caching, energy, formats, notes, roofline_tables, roofline_views, serving_views, sidebar, widgets

BATCHES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024]
PROMPTS = [16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
EXPERIMENTS = {
    "Llama-3-8B, B=1 at 8K": {"model": "llama-3-8b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                             "rf_ctx": 8192, "rf_b": 1, "rf_prompt": 8192},
    "Llama-3-8B, B=32 at 8K": {"model": "llama-3-8b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                              "rf_ctx": 8192, "rf_b": 32, "rf_prompt": 8192},
    "Llama 2 13B napkin, B=64": {"model": "llama-2-13b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                                 "rf_ctx": 1024, "rf_b": 64, "rf_prompt": 1024},
    "Llama 2 13B napkin, B=256": {"model": "llama-2-13b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                                  "rf_ctx": 1024, "rf_b": 256, "rf_prompt": 1024},
}

sel = sidebar.selection()
st.title("Decode and the roofline")
intro = widgets.page_intro()
# the selected chip's own critical batch (calc.critical_batch: P/W in bf16), not a fixed example's
b_star_bf16 = calc.critical_batch(sel.accelerator, "bf16")
intro.markdown(
    "Arithmetic intensity (FLOPs per byte moved) against the chip's ratio P/W decides which resource a "
    f"step spends. A bf16 decode matmul has intensity about B, the {formats.md_escape(sel.accelerator.name)} "
    f"needs about {b_star_bf16:,.0f}: "
    "**decode at chat batch sizes is memory-bound**, prefill of a long prompt is compute-bound "
    "(CS336 lecture 10, Inference, \"One ratio explains the entire lecture\").")
intro.latex(r"t_\text{step} \approx \underbrace{\frac{B \cdot KV}{W}}_\text{cache read} + "
         r"\max\!\Big(\underbrace{\frac{\text{weight bytes}}{W}}_\text{weight read},\;"
         r"\underbrace{\frac{2 N B}{P}}_\text{compute}\Big)")
intro.latex(r"I_\text{matmul} = \frac{2BDF}{2BD + 2DF + 2BF} \approx B \quad\text{vs}\quad \frac{P}{W}")
intro.caption("W: memory bandwidth, P: peak FLOP/s, KV: cache bytes of one sequence, N: parameters, B: batch "
           "(the inference course, week 11, step 4). Multiply X (B x D) by W (D x F) in bf16: when D and F dwarf B the intensity is "
           f"B, so the {formats.md_escape(sel.accelerator.name)} needs B > {b_star_bf16:,.0f} to saturate; at B = 1 it streams a whole matrix for 2DF "
           "FLOPs.")
widgets.experiment_buttons(EXPERIMENTS, key="rf_exp")


@widgets.fragment
def explore() -> None:
    """The sliders and everything they change. A fragment: a slider reruns this part only (not the sidebar)."""
    sel = sidebar.selection()
    c1, c2, c3 = st.columns(3)
    context_len = widgets.context_slider(c1, "Context length S (tokens)", "rf_ctx")
    widgets.context_warning(sel.model, context_len)
    batch = c2.select_slider("Batch B (sequences)", BATCHES, value=32, key="rf_b", bind="query-params")
    prompt_len = widgets.token_slider(c3, "Prompt length T for prefill (tokens)", PROMPTS, "rf_prompt", 8192)

    u1, u2, u3 = st.columns([1, 1, 2])
    util = widgets.utilisation_inputs([u1, u2])
    u3.caption("The roofline is a lower bound (spec bandwidth, spec peak). The **course estimate** divides its parts "
               "by these utilisations (sources: the ? on each); the **serving estimate** below is an engine's fitted "
               "model.")

    m, acc, wq, kvq, emb = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.embedding
    try:
        step = calc.decode_step_time(m, acc, batch, context_len, wq, kvq, embedding=emb)
        step_est = calc.efficiency.estimate_step(step, util)
        napkin = notes.napkin_note(sel, step, batch, context_len)
        b_star = calc.critical_batch(acc, wq)
        ceiling = calc.max_batch(m, acc, context_len, wq, kvq)
        points = caching.cached_call(sweeps.roofline_points, m, acc, context_len, sorted({1, batch}), prompt_len, wq, kvq, emb, sel.logits)
        roof = sweeps.roofline_curve(acc, wq)
        ridge = sweeps.ridge_intensity(acc, wq)
        # The grid holds the chosen B only when it lies beyond the ceiling's range: within it, the chart stays
        # the same whatever B is (no marker at B), so a B move does not redraw it.
        split = caching.cached_call(sweeps.decode_split, m, acc, context_len, batch if batch > ceiling else 1, wq, kvq,
                                   embedding=emb)
        kheads = caching.cached_call(sweeps.throughput_by_kv_heads, m, acc, context_len, wq, kvq, embedding=emb)
        ttfts = caching.cached_call(sweeps.ttft_sweep, m, acc, None, 1, wq, kvq, embedding=emb, logits=sel.logits)
        ttft_here = calc.ttft(m, acc, prompt_len, 1, 0.0, wq, kvq, embedding=emb, logits=sel.logits)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    st.subheader(f"{formats.md_escape(m.name)} on {acc.name}, S = {context_len:,}, B = {batch:,}")
    servable = ceiling >= 1
    if not servable:  # one message, before numbers that no batch on this GPU can reach
        st.error(notes.no_batch_sentence(m, acc, context_len, wq, kvq) + " The step times below are what it would "
                 "take with enough memory, marked \"if it fit\"; no price, energy or serving estimate is given.")
    roofline_views.headline(step, step_est, acc, batch, wq, b_star, servable=servable)
    choice = None  # no energy inputs where no batch runs: nothing here would use them
    if servable:
        # below the metrics: a lecture step's number stays on the first screen
        choice = energy.energy_inputs(sel.accelerator)
        st.caption(energy.price_and_energy(step.tokens_per_s, sel.price_per_hour_usd, choice, f" at B = {batch:,}"))
        serving_views.section("rf_srv", m, acc, context_len, 256, batch, wq, kvq)
    if napkin:
        st.caption(napkin)
    if servable and batch > ceiling:
        st.warning(f"B = {batch:,} does not fit: one {acc.name} holds the weights and at most {ceiling:,} "
                   f"sequence{'s' if ceiling != 1 else ''} of {context_len:,} tokens ({sel.capacity_label}). The "
                   "times below are what the step would take with enough memory.")

    roofline_views.sweep_charts(sel, roof, ridge, points, batch, split, kheads, ceiling, ttfts, ttft_here,
                                prompt_len)

    roofline_views.operators_section(m, acc, batch, context_len, prompt_len, wq, kvq, emb, util, roof)

    roofline_tables.tables_expander(m, acc, context_len, batch, prompt_len, wq, kvq, emb, kheads, ttfts, choice,
                                    sel.price_per_hour_usd)

explore()
