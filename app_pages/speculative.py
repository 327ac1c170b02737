"""Speculative decoding: the accept/resample rule that keeps the output exact, and when it pays."""
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import calc
from calc import speculative as sd
from ui import caching, charts, downloads, equations, html_table, sidebar, url_state, widgets

SYMBOLS = ("A", "B", "C", "D", "E")
DEFAULT_P = (0.6, 0.4, 0.0, 0.0, 0.0)   # The inference course, week 11, step 3: target p
DEFAULT_Q = (0.9, 0.1, 0.0, 0.0, 0.0)   # and draft q
ALPHAS = (0.5, 0.6, 0.7, 0.8, 0.9)
GAMMAS = tuple(range(0, 17))
SAMPLE_SIZES = (1_000, 10_000, 60_000, 100_000, 300_000, 1_000_000)
CONTEXTS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
PAIRS = {  # target model id, draft model id (same tokenizer family)
    "llama-3.1-70b+llama-3.2-1b": ("llama-3.1-70b", "llama-3.2-1b"),
    "llama-3.1-70b+llama-3.1-8b": ("llama-3.1-70b", "llama-3.1-8b"),
    "llama-3-8b+llama-3.2-1b": ("llama-3-8b", "llama-3.2-1b"),
    "qwen2.5-7b+qwen2.5-0.5b": ("qwen2.5-7b", "qwen2.5-0.5b"),
}


def _weights(p, q):
    state = {f"sd_p{i}": v for i, v in enumerate(p)}
    state.update({f"sd_q{i}": v for i, v in enumerate(q)})
    return state


EXPERIMENTS = {
    "Course example (week 11, step 3)": {**_weights(DEFAULT_P, DEFAULT_Q), "sd_wrong": False},
    "The classic mistake": {**_weights(DEFAULT_P, DEFAULT_Q), "sd_wrong": True},
    "Close draft, α = 0.9": {**_weights((0.3, 0.25, 0.2, 0.15, 0.1), (0.4, 0.2, 0.2, 0.1, 0.1)),
                                  "sd_wrong": False},
    "Disjoint draft, α = 0": {**_weights((0.5, 0.5, 0, 0, 0), (0, 0, 0.4, 0.3, 0.3)),
                                               "sd_wrong": False},
}


@caching.bounded_cache(max_entries=64, max_bytes=32 * caching.MB)
def _experiment(p, q, n_tokens, gamma, seed, wrong):
    return sd.run_sampling_experiment(p, q, n_tokens, gamma, seed, SYMBOLS, wrong_residual=wrong)


@caching.bounded_cache(max_entries=64, max_bytes=8 * caching.MB)
def _batch_table(target_id, draft_id, gpu_id, gamma, alpha, context_len, weight_dtype, kv_dtype):
    return sd.batch_speedup_table(calc.get_model(target_id), calc.get_model(draft_id), calc.get_accelerator(gpu_id),
                                  sd.DEFAULT_BATCHES, gamma, alpha, context_len, weight_dtype, kv_dtype)


sel = sidebar.selection()
st.title("Speculative decoding")
st.markdown(
    "Decode reads all the weights to emit one token, so the GPU idles. A small **draft** model q guesses "
    "γ tokens; the **target** p checks all of them in one forward pass, which costs about the same as "
    "one decode step while the step is memory-bound. A drafted token x is accepted with probability "
    "min(1, p(x)/q(x)); at the first rejection the token is resampled from the **residual** "
    "max(0, p − q), normalised. The output is then distributed *exactly* as p (the inference course, week 11, step 3; "
    "Leviathan et al. 2022; Chen et al. 2023).")
st.latex(r"P[x] = \underbrace{q(x)\min\!\left(1, \tfrac{p(x)}{q(x)}\right)}_{\min(p,q)}"
         r" + (1-\alpha)\,\frac{\max(0,\,p(x)-q(x))}{1-\alpha} = p(x)")
st.latex(r"\alpha = \sum_x \min(p(x), q(x))")


@widgets.fragment
def batch_section(gamma: int) -> None:
    """The batch effect for a target/draft pair on the sidebar's GPU, at the γ of section 2. A fragment nested
    in ``explorer``: the pair, α and context rerun this part only."""
    st.markdown(f"**The batch effect on {sel.accelerator.name}** (the sidebar's GPU and dtypes). Verifying γ + 1 "
                "tokens is nearly free only while the verify step stays memory-bound, i.e. while B·(γ + 1) is "
                "under the critical batch. Past it the verify step costs about γ + 1 plain steps.")
    c1, c2, c3 = st.columns(3)
    url_state.accept_url_values("sd_pair", list(PAIRS), lambda k: f"{calc.get_model(PAIRS[k][0]).name} ← {calc.get_model(PAIRS[k][1]).name}")
    pair_id = c1.selectbox("Target ← draft", list(PAIRS), key="sd_pair", bind="query-params",
                           format_func=lambda k: f"{calc.get_model(PAIRS[k][0]).name} ← {calc.get_model(PAIRS[k][1]).name}")
    llm_alpha = c2.slider("Acceptance rate α of this pair", 0.0, 1.0, 0.8, 0.01, key="sd_a", bind="query-params",
                          help="Drafts a couple of orders of magnitude smaller typically reach 0.5–0.9 "
                               "(Leviathan et al. 2022, section 3.6).")
    context_len = c3.select_slider("Context length (tokens)", CONTEXTS, value=512, key="sd_ctx", bind="query-params")
    try:
        target_id, draft_id = PAIRS[pair_id]
        batch = _batch_table(target_id, draft_id, sel.gpu_id, gamma, llm_alpha, context_len,
                             sel.weight_dtype, sel.kv_dtype)
        b_verify = sd.verify_critical_batch(sel.accelerator, gamma, sel.weight_dtype)
        b_star = calc.critical_batch(sel.accelerator, sel.weight_dtype)
        c_at_1 = float(batch["cost_ratio"].iloc[0])
        g_best = sd.best_gamma(llm_alpha, c_at_1, max_gamma=16)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    with widgets.metric_row(4) as m:
        m[0].metric("Speedup at B = 1", f"{batch['speedup'].iloc[0]:.2f}×")
        m[1].metric("Draft cost ratio c at B = 1", f"{c_at_1:.3f}")
        m[2].metric("Best γ at B = 1", f"{g_best}", help="Maximises Theorem 3.8 for this α and c over γ = 0..16 (0: no gain).")
        m[3].metric("Ridge batch for γ + 1", f"{b_verify:,.0f}",
                    help=f"The verify step turns compute-bound here: the critical batch {b_star:,.0f} tokens per step, divided by γ + 1.")
    widgets.show_equations([equations.spec_batch_row(batch.iloc[0], llm_alpha, gamma)], key="equations_batch")
    fig = charts.Figure()
    fig.add_scatter(x=batch["batch"], y=batch["speedup"], mode="lines+markers", name=f"speedup, γ = {gamma}",
                    customdata=batch[["target_step_s", "verify_step_s", "draft_step_s"]].to_numpy() * 1e3,
                    hovertemplate="B = %{x}: %{y:.2f}×<br>plain step %{customdata[0]:.2f} ms, verify "
                                  "%{customdata[1]:.2f} ms, draft %{customdata[2]:.2f} ms<extra></extra>")
    fig.add_hline(y=1.0, line_dash="dot", annotation_text="no gain", annotation_position="top left")
    top = batch["speedup"].iloc[0]  # the curve's highest point, so the markers span the chart
    for x, label, dash in ((b_verify, f"B·(γ+1) = critical batch: B = {b_verify:,.0f}", "dash"),
                           (b_star, f"B = critical batch {b_star:,.0f}", "dot")):
        fig.add_scatter(x=[x, x], y=[0, top], mode="lines", name=label, line=dict(dash=dash, color="gray"),
                        hovertemplate=label + "<extra></extra>")
    fig.update_layout(xaxis_title="batch size B (sequences, log scale)", yaxis_title="speedup over plain decoding (×)",
                      xaxis_type="log", yaxis_rangemode="tozero")
    st.markdown(f"**Speculative speedup against batch size, {context_len:,}-token context, γ = {gamma}**")
    charts.show_chart(fig, key="sd_batch")
    downloads.download_csv(batch, "speculative_batch_speedup.csv", key="sd_batch_csv")
    st.caption("speedup(B) = E[tokens per forward] · t_target(B, 1) / (t_target(B, γ+1) + γ · t_draft(B, 1)), "
               "with t(B, T) the roofline decode step of B sequences verifying T tokens each (weights and KV read "
               "once, 2·N·B·T FLOPs). A napkin lower bound: it ignores memory capacity (a 70B model in bf16 needs "
               "two 80 GB GPUs) and attention FLOPs. Long contexts keep the step memory-bound on the KV read, so "
               "the gain lasts to larger batches.")


@widgets.fragment
def explorer() -> None:
    """Sections 1 to 3. A fragment: their controls rerun them, not the sidebar or the introduction."""
    cp, cq = st.columns(2)
    cp.markdown("**Target p** (weights)")
    cq.markdown("**Draft q** (weights)")
    p_weights = [cp.slider(f"p({s})", 0.0, 1.0, DEFAULT_P[i], 0.01, key=f"sd_p{i}", bind="query-params")
                 for i, s in enumerate(SYMBOLS)]
    q_weights = [cq.slider(f"q({s})", 0.0, 1.0, DEFAULT_Q[i], 0.01, key=f"sd_q{i}", bind="query-params")
                 for i, s in enumerate(SYMBOLS)]
    wrong = st.toggle("The classic mistake: on rejection, sample from p instead of the residual", key="sd_wrong",
                      bind="query-params")

    try:
        p = sd.normalise(p_weights, "the target p")
        q = sd.normalise(q_weights, "the draft q")
        table = sd.acceptance_table(p, q, SYMBOLS, wrong_residual=wrong)
        alpha = sd.acceptance_rate(p, q)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    with widgets.metric_row(3) as m:
        m[0].metric("Acceptance rate α = Σ min(p, q)", f"{alpha:.3f}")
        m[1].metric("Rejected draws 1 − α", f"{table['rejection mass max(0, q - p)'].iloc[-1]:.1%}")
        m[2].metric("On rejection, resample from", "p (wrong)" if wrong else "the residual")
    widgets.show_equations([equations.alpha_row(p, q, SYMBOLS, alpha)])
    SHORT = {"proposal q": "q", "acceptance min(1, p/q)": "min(1, p/q)", "accepted mass min(p, q)": "min(p, q)",
             "rejection mass max(0, q - p)": "max(0, q − p)", "residual (resampled from)": "residual",
             "resampled mass": "(1 − α)·residual", "output": "output", "target p": "p"}
    html_table.show_table(table, key="sd_table", hide_index=True, width="stretch", placeholder="—",
                 column_config={"symbol": st.column_config.TextColumn("x")}
                 | {c: st.column_config.NumberColumn(SHORT.get(c, c), help=c, format="%.4f") for c in table.columns[1:]})
    downloads.download_csv(table, "speculative_acceptance_table.csv", key="sd_table_csv")
    st.caption("Per symbol: the draft proposes it with probability q; it survives with min(1, p/q), leaving "
               "min(p, q); the proposals that are rejected (max(0, q − p), total 1 − α) are replaced by draws "
               "from the residual, which adds (1 − α)·residual. The output column sums the two"
               + (" — and with the wrong residual it no longer equals p." if wrong else " and equals p."))

    st.subheader("2. Sample and test")
    c1, c2, c3 = st.columns(3)
    url_state.accept_url_values("sd_n", SAMPLE_SIZES, lambda n: f"{n:,}")
    n_tokens = c1.select_slider("Tokens to sample N", SAMPLE_SIZES, value=60_000, key="sd_n", bind="query-params",
                                format_func=lambda n: f"{n:,}")
    gamma = c2.slider("Drafts per round γ", 0, 16, 4, key="sd_g", bind="query-params")
    seed = c3.number_input("Random seed", 0, 2**31 - 1, 0, key="sd_seed", bind="query-params")
    try:
        run = _experiment(tuple(p.tolist()), tuple(q.tolist()), n_tokens, gamma, int(seed), wrong)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    with widgets.metric_row(4) as m:
        m[0].metric("χ² p-value against p", f"{run.p_value:.3g}")
        m[1].metric("Verdict", "matches p" if run.matches_target else "NOT p",
                    help=f"The test rejects 'the samples come from p' when the p-value is below {run.significance}.")
        m[2].metric("Measured acceptance rate", "n/a (γ = 0)" if gamma == 0 else f"{run.stats.acceptance_rate:.3f}")
        m[3].metric("Tokens / target forward", f"{run.stats.tokens_per_target_forward:.3f}",
                    help=f"Eq. 1 predicts {sd.expected_tokens_per_target_forward(alpha, gamma):.3f}.")
    if run.matches_target:
        st.success(f"{n_tokens:,} tokens: χ² p-value {run.p_value:.3g} ≥ {run.significance}; the histogram is "
                   "consistent with p.")
    else:
        st.error(f"{n_tokens:,} tokens: χ² p-value {run.p_value:.3g} < {run.significance}; the output is not p. "
                 + ("Sampling p on rejection gives the tokens the draft overrated a second chance."
                    if wrong else "(With the right residual this happens by chance in 1% of seeds.)"))
    hist = run.histogram
    fig = charts.Figure()
    fig.add_bar(x=hist["symbol"], y=hist["empirical frequency"], name="sampled frequency",
                customdata=hist["count"], hovertemplate="%{x}: %{y:.4f} (%{customdata:,} tokens)<extra></extra>")
    fig.add_scatter(x=hist["symbol"], y=hist["target p"], mode="markers", name="target p",
                    marker=dict(symbol="line-ew-open", size=40, line=dict(width=3)),
                    hovertemplate="%{x}: p = %{y:.4f}<extra></extra>")
    if wrong:
        fig.add_scatter(x=hist["symbol"], y=hist["predicted frequency"], mode="markers", name="predicted (wrong residual)",
                        marker=dict(symbol="x", size=12), hovertemplate="%{x}: %{y:.4f}<extra></extra>")
    fig.update_layout(xaxis_title="symbol", yaxis_title="probability (fraction of tokens)", yaxis_rangemode="tozero")
    st.markdown(f"**{n_tokens:,} speculative samples against the target p**")
    charts.show_chart(fig, key="sd_hist")
    if wrong:
        st.caption("The ✕ marks the predicted frequency. It is less biased than the table's one-step output: the "
                   "bonus token after a fully accepted round comes from p itself.")
    downloads.download_csv(hist, "speculative_samples.csv", key="sd_hist_csv")

    with st.expander("Why the output is exactly p (a short proof)", expanded=False):
        st.markdown(
            "Fix a symbol x. It can come out in two ways.\n\n"
            "1. **The draft proposes x and it is accepted**: q(x) · min(1, p(x)/q(x)) = min(p(x), q(x)).\n"
            "2. **Some proposal is rejected and the resample gives x.** A proposal y is rejected with "
            "probability q(y) − min(p(y), q(y)) = max(0, q(y) − p(y)), so rejection has total probability "
            "Σ max(0, q − p). Because p and q both sum to 1, the mass q has in excess of p equals the mass p has "
            "in excess of q: Σ max(0, q − p) = Σ max(0, p − q) = 1 − α. The resample draws x with probability "
            "max(0, p(x) − q(x)) / (1 − α), so this branch contributes (1 − α) · max(0, p(x) − q(x)) / (1 − α) "
            "= max(0, p(x) − q(x)): the normalisation cancels.\n\n"
            "Adding the two: min(p, q) + max(0, p − q) = p, since whichever of p(x) and q(x) is smaller, the "
            "first term takes it and the second adds the gap up to p(x). Sampling p instead of the residual "
            "adds (1 − α)·p(x) instead, which over-weights exactly the symbols the draft overrated.")
        st.latex(r"\min(p,q) + \max(0,\,p-q) = p")

    st.subheader("3. How many tokens per target forward, and when it pays")
    st.latex(r"E[\text{tokens per forward}] = \frac{1-\alpha^{\gamma+1}}{1-\alpha},\qquad "
             r"\text{speedup} = \frac{1-\alpha^{\gamma+1}}{(1-\alpha)(\gamma c+1)}")
    st.caption("Leviathan et al. 2022, Eq. 1 and Theorem 3.8; c is the draft's step time over the target's. "
               "Each round ends with one token from the target, so even α = 0 gives 1 token per forward.")
    curves = sd.tokens_per_forward_table(ALPHAS, GAMMAS)
    yours = sd.tokens_per_forward_table([alpha], GAMMAS)
    fig = charts.Figure()
    for a, grp in curves.groupby("alpha"):
        fig.add_scatter(x=grp["gamma"], y=grp["tokens_per_target_forward"], mode="lines+markers", name=f"α = {a}",
                        hovertemplate="γ = %{x}: %{y:.2f} tokens per forward<extra>α = " + f"{a}" + "</extra>")
    # Your p, q are named in the title, not drawn: the chart then depends on nothing the page's controls move,
    # so the browser keeps it instead of drawing it anew on every slider move (the CSV has your α's row too).
    fig.update_layout(xaxis_title="drafts per round γ (tokens)", yaxis_title="tokens per target forward")
    mine = float(yours.loc[yours["gamma"] == gamma, "tokens_per_target_forward"].iloc[0])
    st.markdown(f"**Expected tokens per target forward**: your p, q (α = {alpha:.3f}) give {mine:.2f} at γ = {gamma}")
    charts.show_chart(fig, key="sd_tokens")
    downloads.download_csv(pd.concat([curves, yours]), "speculative_tokens_per_forward.csv", key="sd_tokens_csv")
    batch_section(gamma)


# Section 1's heading, buttons and note stay outside the fragment (a fragment rerun re-sends every element
# inside it; a button's full rerun runs the fragment as well).
st.subheader("1. Edit the target p and the draft q")
widgets.experiment_buttons(EXPERIMENTS, key="sd_exp")
st.caption("Weights are renormalised to sum to 1. Five symbols A–E; set a weight to 0 to drop a symbol.")
explorer()
