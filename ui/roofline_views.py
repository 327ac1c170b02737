"""The roofline page's sections: the headline metrics with their equations, the charts over batch and prompt
length (the roofline, the decode split beside throughput by KV heads, TTFT), and the step operator by operator.

The numbers come from calc (calc.sweeps, calc.operators); this module lays them out.
"""
from __future__ import annotations

import streamlit as st

import calc
from ui import caching, charts, downloads, equations, formats, roofline_charts, roofline_tables, sidebar, widgets


def headline(step, step_est, acc, batch: int, wq: str, b_star: float, servable: bool = True) -> None:
    """The decode step's bound and course estimate (``step_est``: the bound / MBU and MFU), throughput, the
    critical batch and the bound, with their equations. ``servable`` False (no batch fits in memory): the step and
    throughput labels end "(if it fit)", so that they do not read as numbers this GPU reaches."""
    unreal = "" if servable else " (if it fit)"
    with widgets.metric_row(4) as mc:
        mc[0].metric(f"Decode step (TPOT), bound{unreal}", formats.fmt_seconds(step.total_s),
                     delta=f"{widgets.COURSE_ESTIMATE} {formats.fmt_seconds(step_est.total_s)}", delta_color="off",
                     delta_arrow="off", help="Bound: the roofline lower bound. Course estimate: the bound's parts "
                     "divided by MBU and MFU above (bound / MBU). Not the serving estimate below.")
        mc[1].metric(f"Throughput (tok/s), bound{unreal}", formats.fmt_number(step.tokens_per_s),
                     delta=f"{widgets.COURSE_ESTIMATE} {formats.fmt_number(step_est.tokens_per_s)}",
                     delta_color="off", delta_arrow="off",
                     help="Bound: B / the bound step (an upper bound on throughput). Course estimate: B / the course "
                          "estimate's step.")
        mc[2].metric("Critical batch (tokens)", f"{b_star:,.0f}", help="P x bytes per weight / (2 W): B beyond which "
                     "decode's matmuls turn compute-bound (the inference course, week 11, step 3).")
        mc[3].metric("Bound", step.bound, help="compute when 2NB/P exceeds the time to move every byte of the step "
                     "(weights and KV cache), i.e. when the point sits right of the ridge on the chart below.")
    widgets.show_equations(equations.decode_rows(step, acc, batch, wq) + [equations.critical_batch_row(acc, wq, b_star)])


def sweep_charts(sel, roof, ridge: float, points, batch: int, split, kheads, ceiling: int, ttfts, ttft_here: float,
                 prompt_len: int) -> None:
    """The roofline with decode and prefill on it, the decode split over batch beside throughput by KV heads, and
    TTFT against prompt length (the frames of calc.sweeps; ``sel`` the sidebar's selection)."""
    m, acc, wq = sel.model, sel.accelerator, sel.weight_dtype
    # -- the roofline ---------------------------------------------------------------------------------
    st.markdown("**The roofline: where decode and prefill sit** (achieved FLOP/s of each step)")
    fig = roofline_charts.roofline_figure(roof, ridge, points, batch)
    charts.show_chart(fig, key="rf_roof")
    st.caption(f"Compute peak: {acc.matmul_note(wq)} (sidebar: matmul precision).")

    # -- the decode split over batch, and throughput against batch for K = N, 8, 1 -------------------------
    # Two panels of one figure: a context move makes the browser draw one new chart here, not two.
    fig = roofline_charts.split_and_kv_heads_figure(split, kheads, ceiling)
    charts.show_chart(fig, key="rf_split_kheads")

    drawn, caption = roofline_charts.kv_heads_caption(kheads, m)
    if not drawn:
        st.info(f"No batch of {formats.md_escape(m.name)} fits on one {acc.name} at this context with any of these KV "
                "head counts (K = N, 8, 1), so there is no curve.")
    else:
        st.caption(caption)

    # -- TTFT against prompt length ------------------------------------------------------------------------
    st.markdown(f"**Time to first token against prompt length: {formats.fmt_seconds(ttft_here)} at T = {prompt_len:,}** "
                f"({sel.logits_short})")
    fig = roofline_charts.ttft_figure(ttfts)
    charts.show_chart(fig, key="rf_ttft")
    st.caption("One prompt, no queue. Short prompts read the weights once (memory-bound, flat); long ones are "
               "compute-bound, 2NT plus causal attention growing as T^2 (the inference course, week 11, step 3). "
               f"Conventions (sidebar): {sel.logits_label}; P = {acc.compute_flops(wq) / 1e12:,.0f} TFLOP/s, matmul "
               f"precision {calc.hardware.MATMUL_LABELS[acc.matmul]}.")


@widgets.fragment
def operators_section(m, acc, batch: int, context_len: int, prompt_len: int, wq: str, kvq: str, emb: str,
                      util, roof) -> None:
    """The step split into its operators. A fragment of its own: switching decode/prefill reruns this part
    only, not the charts above (a rerun of the page's fragment passes the new slider values in)."""
    sel = sidebar.selection()
    st.markdown("**The step, operator by operator** (each operator alone on the same roofline)")
    o1, o2 = st.columns([1, 3])
    op_phase = o1.radio("Step", ["decode", "prefill"], key="rf_op_phase", bind="query-params", horizontal=True,
                        help=f"decode: B = {batch:,} sequences, one new token each, S = {context_len:,} cached tokens. "
                             f"prefill: one prompt of T = {prompt_len:,} tokens.")
    try:
        ops = caching.cached_call(calc.operators.step_operators, m, acc, op_phase, batch if op_phase == "decode" else 1,
                                            context_len if op_phase == "decode" else prompt_len, wq, kvq, emb,
                                            utilisation=util, logits=sel.logits)
    except ValueError as exc:
        widgets.show_error(exc)
        return
    o2.caption("Weights and FLOPs add up to the step's; attention reads the KV cache (decode) or writes it "
               "(prefill). Its intensity in decode is about N/K whatever B is, so no batch moves it to the ridge. "
               "Times are each operator's own roofline time, lower bounds; the step overlaps none of them here.")
    shown_ops = ops[ops["bytes"] > 0]
    fig = roofline_charts.operators_figure(roof, shown_ops)
    charts.show_chart(fig, key="rf_ops")
    roofline_tables.operators_table(ops)
    downloads.download_csv(ops, f"operators_{op_phase}.csv", key="rf_csv_ops", inputs={
        "phase": op_phase, "batch": batch if op_phase == "decode" else 1,
        "context_len" if op_phase == "decode" else "prompt_len": context_len if op_phase == "decode" else prompt_len})
