"""The speculative-decoding page's parts: the acceptance table, the sampling test's result with the proof,
tokens per target forward against γ, and the speedup against batch size.

The numbers come from calc.speculative; this module draws them.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from calc import speculative as sd
from ui import charts, downloads, html_table, widgets

ALPHAS = (0.5, 0.6, 0.7, 0.8, 0.9)
GAMMAS = tuple(range(0, 17))


def acceptance_table(table: pd.DataFrame, wrong: bool) -> None:
    """Per symbol: proposal, acceptance, accepted and rejected mass, residual, output (and its CSV)."""
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



def sample_test(run, n_tokens: int, gamma: int, alpha: float, wrong: bool) -> None:
    """The χ² test of the sampled tokens against p, the histogram against p, and why the output is exactly p."""
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



def tokens_per_forward(alpha: float, gamma: int) -> None:
    """Eq. 1 and Theorem 3.8; expected tokens per target forward against γ for a few α, yours named."""
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


def batch_figure(batch: pd.DataFrame, gamma: int, b_verify: float, b_star: float):
    """Speedup against batch size, with the batch where the verify step and where a plain step turn
    compute-bound."""
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
    return fig
