"""Decode and the roofline: why decode is memory-bound, the step split, the knee, TTFT."""
import plotly.graph_objects as go
import streamlit as st

import calc
from calc import sweeps
from app_pages import common, energy_view, equations

CONTEXTS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
BATCHES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024]
PROMPTS = [16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
EXPERIMENTS = {
    "Llama-3-8B, B=1 at 8k": {"model": "llama-3-8b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                             "rf_ctx": 8192, "rf_b": 1, "rf_prompt": 8192},
    "Llama-3-8B, B=32 at 8k": {"model": "llama-3-8b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                              "rf_ctx": 8192, "rf_b": 32, "rf_prompt": 8192},
    "Llama 2 13B napkin, B=64": {"model": "llama-2-13b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                                 "rf_ctx": 1024, "rf_b": 64, "rf_prompt": 1024},
    "Llama 2 13B napkin, B=256": {"model": "llama-2-13b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "emb": "table",
                                  "rf_ctx": 1024, "rf_b": 256, "rf_prompt": 1024},
}

sel = common.selection()
st.title("Decode and the roofline")
# the selected chip's own critical batch (calc.critical_batch: P/W in bf16), not a fixed example's
b_star_bf16 = calc.critical_batch(sel.accelerator, "bf16")
st.markdown(
    "Arithmetic intensity (FLOPs per byte moved) against the chip's ratio P/W decides which resource a "
    f"step spends. A bf16 decode matmul has intensity about B, the {common.md_escape(sel.accelerator.name)} "
    f"needs about {b_star_bf16:,.0f}: "
    "**decode at chat batch sizes is memory-bound**, prefill of a long prompt is compute-bound "
    "(CS336 lecture 10, Inference, \"One ratio explains the entire lecture\").")
st.latex(r"t_\text{step} \approx \underbrace{\frac{B \cdot KV}{W}}_\text{cache read} + "
         r"\max\!\Big(\underbrace{\frac{\text{weight bytes}}{W}}_\text{weight read},\;"
         r"\underbrace{\frac{2 N B}{P}}_\text{compute}\Big)")
st.latex(r"I_\text{matmul} = \frac{2BDF}{2BD + 2DF + 2BF} \approx B \quad\text{vs}\quad \frac{P}{W}")
st.caption("W: memory bandwidth, P: peak FLOP/s, KV: cache bytes of one sequence, N: parameters, B: batch "
           "(the inference course, week 11, step 4). Multiply X (B x D) by W (D x F) in bf16: when D and F dwarf B the intensity is "
           f"B, so the {common.md_escape(sel.accelerator.name)} needs B > {b_star_bf16:,.0f} to saturate; at B = 1 it streams a whole matrix for 2DF "
           "FLOPs.")
common.experiment_buttons(EXPERIMENTS, key="rf_exp")


# -- the step, operator by operator ---------------------------------------------------------------------
@common.fragment
def operators_section(m, acc, batch: int, context_len: int, prompt_len: int, wq: str, kvq: str, emb: str,
                      util, roof) -> None:
    """The step split into its operators. A fragment of its own: switching decode/prefill reruns this part
    only, not the charts above (a rerun of the page's fragment passes the new slider values in)."""
    sel = common.selection()
    st.markdown("**The step, operator by operator** (each operator alone on the same roofline)")
    o1, o2 = st.columns([1, 3])
    op_phase = o1.radio("Step", ["decode", "prefill"], key="rf_op_phase", bind="query-params", horizontal=True,
                        help=f"decode: B = {batch:,} sequences, one new token each, S = {context_len:,} cached tokens. "
                             f"prefill: one prompt of T = {prompt_len:,} tokens.")
    try:
        ops = common.cached_call(calc.operators.step_operators, m, acc, op_phase, batch if op_phase == "decode" else 1,
                                            context_len if op_phase == "decode" else prompt_len, wq, kvq, emb,
                                            utilisation=util, logits=sel.logits)
    except ValueError as exc:
        common.show_error(exc)
        return
    o2.caption("Weights and FLOPs add up to the step's; attention reads the KV cache (decode) or writes it "
               "(prefill). Its intensity in decode is about N/K whatever B is, so no batch moves it to the ridge. "
               "Times are each operator's own roofline time, lower bounds; the step overlaps none of them here.")
    shown_ops = ops[ops["bytes"] > 0]
    fig = common.Figure()
    fig.add_scatter(x=roof["intensity_flop_per_byte"], y=roof["attainable_flops_per_s"] / 1e12, mode="lines",
                    name="roofline min(P, W x I)", line=dict(color="#888", width=3), hoverinfo="skip")
    palette = ["#8c564b", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#7f7f7f", "#9467bd"]
    for i, r in enumerate(shown_ops.itertuples()):
        achieved = r.flops / r.time_s / 1e12 if r.time_s > 0 and r.flops > 0 else None
        if achieved is None:
            continue
        fig.add_scatter(x=[r.intensity_flop_per_byte], y=[achieved], mode="markers", name=r.label,
                        marker=dict(size=8 + 16 * r.share_of_time ** 0.5, color=palette[i % len(palette)]),
                        hovertemplate=f"{r.label}<br>I = %{{x:,.1f}} FLOP/byte<br>%{{y:,.1f}} TFLOP/s<br>"
                                      f"{common.fmt_seconds(r.time_s)}, {r.share_of_time:.0%} of the operators' time, "
                                      f"{r.bound}-bound<extra></extra>")
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP/byte)")
    fig.update_yaxes(type="log", title="attainable FLOP/s (TFLOP/s; marker area: share of time)")
    fig.update_layout(height=420)
    common.show_chart(fig, key="rf_ops")
    common.show_table(ops.assign(time_s=ops["time_s"] * 1e3, estimate_s=ops["estimate_s"] * 1e3, bytes=ops["bytes"] / 1e9,
                            flops=ops["flops"] / 1e9),
                 hide_index=True, width="stretch", column_order=(
                     "label", "flops", "bytes", "intensity_flop_per_byte", "time_s", "estimate_s", "share_of_time", "bound"),
                 column_config={
                     "label": st.column_config.TextColumn("operator", pinned=True),
                     "flops": st.column_config.NumberColumn("GFLOP", format="%.2f"),
                     "bytes": st.column_config.NumberColumn("GB moved", format="%.3f"),
                     "intensity_flop_per_byte": st.column_config.NumberColumn("FLOP/byte", format="%.1f"),
                     "time_s": st.column_config.NumberColumn("time (ms), bound", format="%.3f"),
                     "estimate_s": st.column_config.NumberColumn("estimate (ms)", format="%.3f",
                                                                 help="Bound parts over MBU and MFU (the inputs above)"),
                     "share_of_time": st.column_config.NumberColumn("share", format="percent"),
                     "bound": "bound"})
    common.download_csv(ops, f"operators_{op_phase}.csv", key="rf_csv_ops", inputs={
        "phase": op_phase, "batch": batch if op_phase == "decode" else 1,
        "context_len" if op_phase == "decode" else "prompt_len": context_len if op_phase == "decode" else prompt_len})


def _ms(label: str) -> st.column_config.NumberColumn:
    return st.column_config.NumberColumn(label, format="%.3f")


def _count(label: str) -> st.column_config.NumberColumn:
    return st.column_config.NumberColumn(label, format="%,.0f")


def _in_ms(df, cols):
    """The same columns, seconds shown as milliseconds (the CSV keeps seconds)."""
    return df.assign(**{c: df[c] * 1e3 for c in cols})


@common.fragment
def explore() -> None:
    """The sliders and everything they change. A fragment: a slider reruns this part only (not the sidebar)."""
    sel = common.selection()
    c1, c2, c3 = st.columns(3)
    context_len = c1.select_slider("Context length S (tokens)", CONTEXTS, value=8192, key="rf_ctx", bind="query-params")
    batch = c2.select_slider("Batch B (sequences)", BATCHES, value=32, key="rf_b", bind="query-params")
    prompt_len = c3.select_slider("Prompt length T for prefill (tokens)", PROMPTS, value=8192, key="rf_prompt",
                                  bind="query-params")

    u1, u2, u3 = st.columns([1, 1, 2])
    util = common.utilisation_inputs([u1, u2])
    u3.caption("The roofline is a lower bound: every byte at the spec bandwidth, every FLOP at the spec peak. The "
               "**estimate** divides the bound's parts by these utilisations (published measurements: the ? on each).")
    choice = energy_view.energy_inputs(sel.accelerator)

    m, acc, wq, kvq, emb = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.embedding
    try:
        step = calc.decode_step_time(m, acc, batch, context_len, wq, kvq, embedding=emb)
        step_est = calc.efficiency.estimate_step(step, util)
        napkin = common.napkin_note(sel, step, batch, context_len)
        b_star = calc.critical_batch(acc, wq)
        ceiling = calc.max_batch(m, acc, context_len, wq, kvq)
        points = common.cached_call(sweeps.roofline_points, m, acc, context_len, sorted({1, batch}), prompt_len, wq, kvq, emb, sel.logits)
        roof = sweeps.roofline_curve(acc, wq)
        ridge = sweeps.ridge_intensity(acc, wq)
        # The grid holds the chosen B only when it lies beyond the ceiling's range: within it, the chart stays
        # the same whatever B is (no marker at B), so a B move does not redraw it.
        split = common.cached_call(sweeps.decode_split, m, acc, context_len, batch if batch > ceiling else 1, wq, kvq,
                                   embedding=emb)
        kheads = common.cached_call(sweeps.throughput_by_kv_heads, m, acc, context_len, wq, kvq, embedding=emb)
        ttfts = common.cached_call(sweeps.ttft_sweep, m, acc, None, 1, wq, kvq, embedding=emb, logits=sel.logits)
        ttft_here = calc.ttft(m, acc, prompt_len, 1, 0.0, wq, kvq, embedding=emb, logits=sel.logits)
    except ValueError as exc:
        common.show_error(exc)
        return

    st.subheader(f"{m.name} on {acc.name}, S = {context_len:,}, B = {batch:,}")
    with common.metric_row(4) as mc:
        mc[0].metric("Decode step (TPOT), bound", common.fmt_seconds(step.total_s),
                     delta=f"estimate {common.fmt_seconds(step_est.total_s)}", delta_color="off", delta_arrow="off",
                     help="Bound: the roofline lower bound. Estimate: the bound's parts divided by MBU and MFU above.")
        mc[1].metric("Throughput (tok/s), bound", common.fmt_number(step.tokens_per_s),
                     delta=f"estimate {common.fmt_number(step_est.tokens_per_s)}", delta_color="off", delta_arrow="off",
                     help="Bound: B / the bound step (an upper bound on throughput). Estimate: B / the estimated step.")
        mc[2].metric("Critical batch (tokens)", f"{b_star:,.0f}", help="P x bytes per weight / (2 W): B beyond which "
                     "decode's matmuls turn compute-bound (the inference course, week 11, step 3).")
        mc[3].metric("Bound", step.bound, help="compute when 2NB/P exceeds the time to move every byte of the step "
                     "(weights and KV cache), i.e. when the point sits right of the ridge on the chart below.")
    common.show_equations(equations.decode_rows(step, acc, batch, wq) + [equations.critical_batch_row(acc, wq, b_star)])
    st.caption(f"Price: {common.fmt_usd(calc.cost_per_million(step.tokens_per_s, sel.price_per_hour_usd))} per 1M output "
               f"tokens at {common.fmt_usd(sel.price_per_hour_usd)}/h (bound). "
               + energy_view.energy_sentence(step.tokens_per_s, choice, label=f" at B = {batch:,}"))
    if napkin:
        st.caption(napkin)
    if batch > ceiling:
        st.warning(f"B = {batch:,} does not fit: one {acc.name} holds the weights and at most {ceiling:,} "
                   f"sequences of {context_len:,} tokens ({sel.capacity_label}). The times below are what the step "
                   "would take with enough memory.")


    # -- the roofline ---------------------------------------------------------------------------------
    st.markdown("**The roofline: where decode and prefill sit** (achieved FLOP/s of each step)")
    fig = common.Figure()
    fig.add_scatter(x=roof["intensity_flop_per_byte"], y=roof["attainable_flops_per_s"] / 1e12, mode="lines",
                    name="roofline min(P, W x I)", line=dict(color="#888", width=3),
                    hovertemplate="I = %{x:,.1f} FLOP/byte<br>%{y:,.1f} TFLOP/s<extra></extra>")
    top = roof["attainable_flops_per_s"].max() / 1e12
    fig.add_scatter(x=[ridge, ridge], y=[roof["attainable_flops_per_s"].min() / 1e12, top], mode="lines",
                    name=f"ridge P/W = {ridge:,.0f} FLOP/byte", line=dict(dash="dot", color="#888"),
                    hovertemplate="ridge P/W = %{x:,.0f} FLOP/byte<extra></extra>")
    colors = {"decode": "#1f77b4", "prefill": "#d62728"}
    for r in points.itertuples():
        fig.add_scatter(x=[r.intensity_flop_per_byte], y=[r.achieved_flops_per_s / 1e12], mode="markers",
                        name=r.label, marker=dict(size=14, color=colors[r.phase],
                                                  symbol="circle" if r.phase == "prefill" or r.batch == batch else "circle-open"),
                        hovertemplate=f"{r.label}<br>I = %{{x:,.1f}} FLOP/byte<br>%{{y:,.1f}} TFLOP/s achieved<br>"
                                      f"step {common.fmt_seconds(r.step_s)}, {r.bound}-bound<extra></extra>")
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP/byte)")
    fig.update_yaxes(type="log", title="attainable FLOP/s (TFLOP/s)")
    fig.update_layout(height=460)
    common.show_chart(fig, key="rf_roof")
    st.caption(f"Compute peak: {acc.matmul_note(wq)} (sidebar: matmul precision).")


    # -- the decode split over batch, and throughput against batch for K = N, 8, 1 -------------------------
    # Two panels of one figure: a context move makes the browser draw one new chart here, not two.
    fig = common.Figure(subplots=dict(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=(
        "<b>The decode step, split, over the batch</b>", "<b>Throughput against batch,<br>each K cut at its memory "
        "ceiling</b>")))
    fig.update_annotations(yshift=112, font_size=15)  # the panel titles above the legends
    ms = 1e3
    for col, name, color in (("weights_s", "weight read", "#1f77b4"), ("kv_s", "KV-cache read", "#ff7f0e"),
                             ("compute_excess_s", "compute beyond the weight read", "#2ca02c")):
        fig.add_scatter(x=split["batch"], y=split[col] * ms, stackgroup="step", name=name, mode="lines",
                        line=dict(width=0.5, color=color), row=1, col=1, legend="legend",
                        hovertemplate="B = %{x}<br>" + name + ": %{y:.2f} ms<extra></extra>")
    fig.add_scatter(x=split["batch"], y=split["compute_s"] * ms, name="2NB/P (hidden below the weight read)",
                    mode="lines", line=dict(dash="dot", color="#2ca02c"), row=1, col=1, legend="legend",
                    hovertemplate="B = %{x}<br>compute 2NB/P: %{y:.2f} ms<extra></extra>")
    # The memory ceiling is named in the legend, not on the plot. No line at the chosen B: the chart then
    # stays the same when only B moves (the browser keeps an unchanged chart; B's step is in the metrics).
    if ceiling >= 1:
        common.add_marker_line(fig, ceiling, f"memory ceiling B = {ceiling:,}", "#d62728", "dash", row=1, col=1,
                               legend="legend")
    palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b"]
    for i, (label, g) in enumerate(kheads.groupby("variant", sort=False)):
        color = palette[i % len(palette)]
        fig.add_scatter(x=g["batch"], y=g["tokens_per_s"], mode="lines", name=label, line=dict(color=color),
                        customdata=[common.fmt_number(v) for v in g["tokens_per_s"]],  # 0.37, not 0
                        row=1, col=2, legend="legend2",
                        hovertemplate=label + "<br>B = %{x:,}<br>%{customdata} tok/s<extra></extra>")
        end = g[g["is_ceiling"]]
        fig.add_scatter(x=end["batch"], y=end["tokens_per_s"], mode="markers", showlegend=False,
                        marker=dict(symbol="x", size=12, color=color), row=1, col=2,
                        customdata=[common.fmt_number(v) for v in end["tokens_per_s"]],
                        hovertemplate=label + "<br>memory ceiling B = %{x:,}<br>%{customdata} tok/s<extra></extra>")
        knee = g[g["is_knee"]]
        fig.add_scatter(x=knee["batch"], y=knee["tokens_per_s"], mode="markers", showlegend=False,
                        marker=dict(symbol="circle-open", size=12, color=color, line=dict(width=2)), row=1, col=2,
                        customdata=[common.fmt_number(v) for v in knee["tokens_per_s"]],
                        hovertemplate=label + "<br>knee B = %{x:,}: cache = weights<br>%{customdata} tok/s<extra></extra>")
    fig.update_xaxes(title="batch B (sequences)", row=1, col=1)
    fig.update_yaxes(title="decode step (ms)", row=1, col=1)
    fig.update_xaxes(type="log", title="batch B (sequences, log)", row=1, col=2)
    fig.update_yaxes(title="decode throughput (tok/s)", row=1, col=2)
    legend = dict(orientation="v", yanchor="bottom", y=1.02, xanchor="left", font_size=13)
    fig.update_layout(height=560, margin=dict(t=150), legend=dict(legend, x=0.0), legend2=dict(legend, x=0.55))
    common.show_chart(fig, key="rf_split_kheads")

    if kheads.empty:
        st.info(f"The weights of {m.name} in {wq} do not fit on one {acc.name}: no batch fits, so there is no curve.")
    else:
        knees = kheads.groupby("variant", sort=False).first()[["n_kv_heads", "max_batch", "knee_batch",
                                                                "ceiling_tokens_per_s"]].reset_index()
        st.caption(
            "Crosses: where each curve stops, the most sequences of this length that fit beside the weights. Circles: "
            "the knee, where the batch's cache equals the weights (B = weight bytes / KV; throughput is then about half "
            "of W/KV): "
            + "; ".join(f"{r.variant}: knee B = {r.knee_batch:,.0f}, ceiling B = {r.max_batch:,}"
                        for r in knees.itertuples())
            + ". Past the knee B sits in the numerator and the denominator and cancels: throughput saturates at W/KV. "
            "Fewer KV heads shrink KV; GQA's real win is the batch it unlocks (CS336 lecture 10, Inference, exercise 1). Only K changes: "
            "the K and V projections shrink with it (2LDHK parameters)."
            + (" This model uses MLA: the K = N, 8, 1 curves are plain attention with its head width, parameters kept."
               if m.attention == "mla" else ""))

    # -- TTFT against prompt length ------------------------------------------------------------------------
    st.markdown(f"**Time to first token against prompt length: {common.fmt_seconds(ttft_here)} at T = {prompt_len:,}** "
                f"({sel.logits_short})")
    fig = common.Figure()
    for bound, color in (("memory", "#1f77b4"), ("compute", "#d62728")):
        part = ttfts[ttfts["bound"] == bound]
        if len(part):
            fig.add_scatter(x=part["prompt_len"], y=part["ttft_s"] * 1e3, mode="lines+markers", name=f"{bound}-bound",
                            line=dict(color=color), marker=dict(size=5),
                            hovertemplate="T = %{x:,} tokens<br>TTFT %{y:,.1f} ms<extra></extra>")
    # No marker at the chosen T (its TTFT is in the heading): the chart stays the same when only T moves.
    fig.update_xaxes(type="log", title="prompt length T (tokens, log)")
    fig.update_yaxes(type="log", title="TTFT, prefill only (ms, log)", ticksuffix=" ms")
    fig.update_layout(height=420)
    common.show_chart(fig, key="rf_ttft")
    st.caption("One prompt, no queue. Short prompts read the weights once (memory-bound, flat); long ones are "
               "compute-bound, 2NT plus causal attention growing as T^2 (the inference course, week 11, step 3). "
               f"Conventions (sidebar): {sel.logits_label}; P = {acc.compute_flops(wq) / 1e12:,.0f} TFLOP/s, matmul "
               f"precision {calc.hardware.MATMUL_LABELS[acc.matmul]}.")

    operators_section(m, acc, batch, context_len, prompt_len, wq, kvq, emb, util, roof)

    csv_in = {"context_len": context_len, "batch": batch, "prompt_len": prompt_len}
    # Built only while open (the expander reruns the page when toggled): a slider move then redraws no table.
    tables = st.expander("Tables (times in ms here; the CSVs keep seconds and every column)", key="rf_tables",
                         on_change="rerun")
    if tables.open:
        with tables:
            st.markdown(f"**Decode step split over the batch** (its grid holds the chosen B = {batch:,})")
            # the chart's grid leaves B out while B is within the ceiling (so a B move does not redraw it); the
            # table holds it
            split = energy_view.with_energy(common.cached_call(sweeps.decode_split, m, acc, context_len, batch, wq, kvq,
                                                               embedding=emb), choice, price_per_hour_usd=sel.price_per_hour_usd)
            common.show_table(_in_ms(split, ["weights_s", "kv_s", "compute_s", "compute_excess_s", "total_s"]), hide_index=True,
                         width="stretch", column_order=("batch", "weights_s", "kv_s", "compute_s", "total_s", "tokens_per_s",
                                                        "usd_per_million", "j_per_token", "max_batch"),
                         column_config=energy_view.ENERGY_COLUMNS | {
                             "batch": _count("batch B"), "weights_s": _ms("weight read (ms)"), "kv_s": _ms("KV read (ms)"),
                             "compute_s": _ms("compute 2NB/P (ms)"), "compute_excess_s": _ms("compute beyond weights (ms)"),
                             "total_s": _ms("step (ms)"), "tokens_per_s": _count("throughput (tok/s)"), "fits": "fits",
                             "max_batch": _count("memory ceiling B")})
            common.download_csv(split, "decode_split.csv", key="rf_csv_split", inputs=csv_in)
            st.markdown("**Throughput by number of KV heads**")
            common.show_table(_in_ms(kheads, ["total_s"]), hide_index=True, width="stretch", column_order=(
                "variant", "n_kv_heads", "batch", "total_s", "tokens_per_s", "max_batch", "knee_batch", "ceiling_tokens_per_s"),
                column_config={
                "variant": "variant", "n_kv_heads": _count("KV heads K"), "batch": _count("batch B"),
                "total_s": _ms("step (ms)"), "tokens_per_s": _count("throughput (tok/s)"),
                "max_batch": _count("memory ceiling B"), "knee_batch": st.column_config.NumberColumn("knee B", format="%.1f"),
                "ceiling_tokens_per_s": _count("W/KV ceiling (tok/s)"), "is_ceiling": "at ceiling", "is_knee": "at knee"})
            common.download_csv(kheads, "throughput_by_kv_heads.csv", key="rf_csv_k", inputs=csv_in)
            st.markdown("**Prefill (TTFT) against prompt length**")
            common.show_table(_in_ms(ttfts, ["weights_s", "kv_s", "compute_s", "ttft_s"]), hide_index=True, width="stretch",
                         column_config={
                             "prompt_len": _count("prompt T"), "weights_s": _ms("weights (ms)"),
                             "kv_s": _ms("KV read (ms)"), "compute_s": _ms("compute (ms)"),
                             "attention_flops": st.column_config.NumberColumn("attention FLOP", format="%.2e"),
                             "flops": st.column_config.NumberColumn("FLOP", format="%.2e"), "ttft_s": _ms("TTFT (ms)"),
                             "prefill_tokens_per_s": _count("prefill (tok/s)"), "bound": "bound"})
            common.download_csv(ttfts, "ttft.csv", key="rf_csv_ttft", inputs=csv_in)


explore()
