"""The speculative-decoding page's parts: the acceptance table, the sampling test's result with the proof,
tokens per target forward against γ, and the speedup against batch size.

The numbers come from calc.speculative; this module draws them.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

import calc
from calc import spec_speedup as sd
from calc.layout_choice import smallest_tp
from calc.speculative_serving import acceptance_length
from ui import caching, charts, downloads, equations, html_table, serving_views, sidebar, url_state, widgets
from ui.formats import fmt_number, md_escape

ALPHAS = (0.5, 0.6, 0.7, 0.8, 0.9)
GAMMAS = tuple(range(0, 17))
PAIRS = {  # target model id, draft model id (same tokenizer family)
    "llama-3.1-70b+llama-3.2-1b": ("llama-3.1-70b", "llama-3.2-1b"),
    "llama-3.1-70b+llama-3.1-8b": ("llama-3.1-70b", "llama-3.1-8b"),
    "llama-3-8b+llama-3.2-1b": ("llama-3-8b", "llama-3.2-1b"),
    "qwen2.5-7b+qwen2.5-0.5b": ("qwen2.5-7b", "qwen2.5-0.5b"),
}


def acceptance_table(table: pd.DataFrame, wrong: bool) -> None:
    """Per symbol: proposal, acceptance, accepted and rejected mass, residual, output (and its CSV). Probabilities
    to two decimals, as the sliders show p and q (the CSV keeps every digit)."""
    SHORT = {"proposal q": "q", "acceptance min(1, p/q)": "min(1, p/q)", "accepted mass min(p, q)": "min(p, q)",
             "rejection mass max(0, q - p)": "max(0, q − p)", "residual (resampled from)": "residual",
             "resampled mass": "(1 − α)·residual", "output": "output", "target p": "p"}
    html_table.show_table(table, key="sd_table", hide_index=True, width="stretch", placeholder="—",
                 column_config={"symbol": st.column_config.TextColumn("x")}
                 | {c: st.column_config.NumberColumn(SHORT.get(c, c), help=c, format="%.2f") for c in table.columns[1:]})
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


OWN_CHAIN = "Your own rates"


def parse_chain(text: str) -> list[float]:
    """Rates typed as "0.9, 0.8, 0.7" (commas or spaces; percent allowed as 90%) -> a list of fractions.

    Raises:
        ValueError: a part that is not a number (the message names it), no rate at all.
    """
    parts = [t for t in text.replace(";", ",").replace(" ", ",").split(",") if t.strip()]
    if not parts:
        raise ValueError("type at least one acceptance rate, e.g. 0.9, 0.8, 0.7")
    rates = []
    for t in parts:
        t = t.strip()
        try:
            rates.append(float(t[:-1]) / 100 if t.endswith("%") else float(t))
        except ValueError:
            raise ValueError(f"{t!r} is not a number; type rates like 0.9, 0.8, 0.7") from None
    return rates


def per_position_section(alpha: float, chains: dict) -> None:
    """Section 4: a chain with an acceptance rate per draft position (EAGLE, MTP), its expected tokens per
    verification and speedup, against the i.i.d. formula at the chain's first rate.

    Args:
        alpha: the page's i.i.d. α (section 1), the default of "your own rates".
        chains: name -> {"acceptance": rates, "source": text, optionally "cost_ratio": c}, offered first.
    """
    st.subheader("4. Acceptance per draft position")
    st.markdown("EAGLE drafts and multi-token-prediction (MTP) modules report an acceptance rate **per draft "
                "position** that falls along the chain: a_k is the chance the k-th draft is accepted once the "
                "ones before it were. The k-th draft counts only if all before it are kept:")
    st.latex(r"E[\text{tokens per verification}] = 1 + \sum_{k=1}^{\gamma} \prod_{j \le k} a_j,\qquad "
             r"\text{speedup} = \frac{E}{\gamma c + 1}")
    names = list(chains) + [OWN_CHAIN]
    url_state.accept_url_values("sd_chain", names, str)
    c1, c2 = st.columns([2, 1])
    name = c1.selectbox("Chain", names, key="sd_chain", bind="query-params")
    spec = chains.get(name, {})
    c_default = float(spec.get("cost_ratio", 0.05))
    c = c2.number_input("Draft cost ratio c", 0.0, 2.0, c_default, 0.01, format="%.3f",
                        key=f"sd_chain_c_{names.index(name)}", bind="query-params",
                        help="One draft step's time over one target step's (an MTP module: its share of a step).")
    if name == OWN_CHAIN:
        text = st.text_input("Acceptance per position a_1, a_2, ...", f"{alpha:.2f}, {alpha * 0.9:.2f}, "
                             f"{alpha * 0.8:.2f}", key="sd_chain_rates", bind="query-params")
    else:
        text = ", ".join(f"{a:g}" for a in spec["acceptance"])
        st.caption(f"a = ({md_escape(text)}). Source: {md_escape(spec['source'])}")
    try:
        rates = parse_chain(text)
        table = sd.chain_position_table(rates, c)
        e = sd.expected_tokens_per_verification(rates)
        iid = sd.expected_tokens_per_target_forward(rates[0], len(rates))
        best = sd.best_chain_length(rates, c)
    except ValueError as exc:
        widgets.show_error(exc)
        return
    with widgets.metric_row(4) as m:
        m[0].metric("Tokens per verification", f"{e:.3f}", help="1 + Σ_k Π_{j≤k} a_j")
        m[1].metric("Chain speedup", f"{sd.walltime_speedup_chain(rates, c):.2f}×", help="E / (γ c + 1)")
        m[2].metric("i.i.d. at a_1", f"{iid:.3f}", help=f"(1 − a_1^(γ+1)) / (1 − a_1) with a_1 = {rates[0]:g}: "
                    "what one rate for every position would predict")
        m[3].metric("Best chain length", f"{best}", help="The prefix of the chain that maximises the speedup (0: none pays).")
    html_table.show_table(table, key="sd_chain_table", hide_index=True, width="stretch", column_config={
        "position": st.column_config.NumberColumn("k"),
        "acceptance": st.column_config.NumberColumn("a_k", format="%.3f"),
        "kept_probability": st.column_config.NumberColumn("Π a_j (draft k kept)", format="%.4f"),
        "tokens_per_verification": st.column_config.NumberColumn("E if cut at k", format="%.3f"),
        "walltime_speedup": st.column_config.NumberColumn("speedup if cut at k", format="%.2f")})
    downloads.download_csv(table, "speculative_chain.csv", key="sd_chain_csv")
    st.caption("Convention: a_k conditional on drafts 1..k−1 accepted (EAGLE's n-α); a chain of equal rates gives "
               "Leviathan's formula exactly. An MTP module drafts from the target's own hidden state, so its cost "
               "ratio is its share of a target step.")


@caching.bounded_cache(max_entries=64, max_bytes=8 * caching.MB)
def _batch_table(target_id, draft_id, gpu_id, gamma, alpha, context_len, weight_dtype, kv_dtype):
    return sd.batch_speedup_table(calc.get_model(target_id), calc.get_model(draft_id),
                                            calc.get_accelerator(gpu_id), sd.DEFAULT_BATCHES, gamma, alpha,
                                            context_len, weight_dtype, kv_dtype)


@widgets.fragment
def batch_section(gamma: int) -> None:
    """The batch effect for a target/draft pair on the sidebar's GPU, at the γ of section 2. A fragment nested
    in the page's explorer: the pair, α and context rerun this part only."""
    sel = sidebar.selection()
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
    context_len = widgets.context_slider(c3, "Context length (tokens)", "sd_ctx", value=512)
    widgets.context_warning(calc.get_model(PAIRS[pair_id][0]), context_len)
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
    fig = batch_figure(batch, gamma, b_verify, b_star)
    st.markdown(f"**Speculative speedup against batch size, {context_len:,}-token context, γ = {gamma}**")
    charts.show_chart(fig, key="sd_batch")
    downloads.download_csv(batch, "speculative_batch_speedup.csv", key="sd_batch_csv")
    st.caption("speedup(B) = E[tokens per forward] · t_target(B, 1) / (t_target(B, γ+1) + γ · t_draft(B, 1)), "
               "with t(B, T) the roofline decode step of B sequences verifying T tokens each (weights and KV read "
               "once, 2·N·B·T FLOPs). A napkin lower bound: it ignores memory capacity (a 70B model in bf16 needs "
               "two 80 GB GPUs) and attention FLOPs. Long contexts keep the step memory-bound on the KV read, so "
               "the gain lasts to larger batches.")


#: Clients of the closed loop the serving section offers (``serving_section``).
SERVING_CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
#: Draft methods the serving section offers (``calc.speculative_serving.SPEC_METHODS``' keys), in words.
SERVING_METHODS = {"mtp": "the model's own MTP module", "head": "a one-layer draft head (EAGLE-3, DSpark)"}


def serving_figure(plain: pd.DataFrame, spec: pd.DataFrame, concurrency: int):
    """Throughput per GPU against tokens/s per user (InferenceX's axes) of the serving estimate without and with
    speculative decoding (``calc.serving.serving_frontier`` frames), the chosen concurrency marked on both."""
    fig = charts.Figure()
    for frame, name, colour in ((plain, "plain decoding", "#1f77b4"), (spec, "speculative decoding", "#d62728")):
        f = frame.sort_values("concurrency")
        fig.add_scatter(x=f["tokens_per_s_per_user"], y=f["tokens_per_s_per_gpu"], mode="lines", name=name,
                        line=dict(color=colour), customdata=f["concurrency"],
                        hovertemplate="concurrency %{customdata:.0f}<br>%{x:.1f} tok/s/user<br>%{y:,.0f} tok/s/GPU"
                                      f"<extra>{name}</extra>")
        at = f[f["concurrency"] == concurrency]
        if len(at):
            fig.add_scatter(x=at["tokens_per_s_per_user"], y=at["tokens_per_s_per_gpu"], mode="markers",
                            marker=dict(color=colour, size=11),
                            name=f"{concurrency} client{'s' if concurrency != 1 else ''}, {name}",
                            hovertemplate="%{x:.1f} tok/s/user<br>%{y:,.0f} tok/s/GPU<extra></extra>")
    fig.update_xaxes(title="output tokens/s per user (1000 / TPOT ms)", type="log")
    fig.update_yaxes(title="output tokens/s per GPU", type="log")
    fig.update_layout(height=420, legend=dict(orientation="h", y=-0.25))
    return fig


@widgets.fragment
def serving_section() -> None:
    """Section 5: the serving estimate (``calc.serving``) of the sidebar's model and GPU with and without
    speculative decoding, at a concurrency: TPOT, the gap between streamed chunks (ITL: one verification round) and
    throughput per GPU, the frontier of both over concurrency, and the speculative estimate's breakdown
    (``ui.serving_views.show_estimate``). The acceptance length defaults to InferenceX's golden curve for the model
    (``calc.speculative_serving.acceptance_length``). A fragment: its controls rerun this part only."""
    sel = sidebar.selection()
    st.markdown(f"**{md_escape(sel.model.name)} on {md_escape(sel.accelerator.name)}** (the sidebar's model, GPU and "
                "dtypes), served by an engine that drafts k tokens per sequence and verifies them in one step of "
                "k + 1 tokens: a round. TPOT is the round over the acceptance length AL (tokens a round emits, the "
                "target's own included); a benchmark's ITL, the gap between streamed chunks, is the round itself as "
                "vLLM's `vllm bench serve` counts it (SGLang's `sglang.bench_serving` splits a chunk's wait among "
                "its tokens, so its ITL is the TPOT).")
    c1, c2, c3 = st.columns(3)
    engine = serving_views.engine_select(c1, "sd_eng")
    url_state.accept_url_values("sd_meth", list(SERVING_METHODS), SERVING_METHODS.get)
    # a model without an MTP module on file opens on the draft head, not on a module it lacks
    method = c2.selectbox("Draft", list(SERVING_METHODS), key="sd_meth", bind="query-params",
                          index=0 if sel.model.n_mtp_layers > 0 else list(SERVING_METHODS).index("head"),
                          format_func=SERVING_METHODS.get,
                          help="An MTP module is one of the model's own layers with its output head (DeepSeek-V3, "
                               "Qwen3.5); a model without one on file is priced with a one-layer head of its width.")
    k = c3.slider("Draft tokens per round k", 1, 8, 3, key="sd_k", bind="query-params",
                  help="vLLM num_speculative_tokens, SGLang --speculative-num-steps, TensorRT-LLM max_draft_len. "
                       "3 is the most common setting in InferenceX's recipes.")
    c4, c5, c6 = st.columns(3)
    url_state.accept_url_values("sd_conc", SERVING_CONCURRENCIES, lambda n: f"{n:,}")
    concurrency = c4.select_slider("Concurrency (clients)", SERVING_CONCURRENCIES, value=8, key="sd_conc",
                                   bind="query-params")
    prompt = c5.number_input("Prompt tokens", 1, 131_072, 1024, step=256, key="sd_in", bind="query-params")
    output = c6.number_input("Output tokens", 2, 32_768, 1024, step=256, key="sd_out", bind="query-params")
    golden, source = acceptance_length(sel.model, k, method)
    own = st.toggle("Enter the acceptance length", key="sd_own", bind="query-params",
                    help=f"Off: {golden:.2f} tokens per round, {md_escape(source)}.")
    spec = {"method": method, "draft_tokens": k}
    if own:
        al = st.slider("Acceptance length AL (tokens per round)", 1.0, 9.0, 2.5, 0.01, key="sd_al",
                       bind="query-params", help="1: every draft rejected; k + 1: every draft accepted. Random-token "
                                                 "prompts accept fewer than real ones.")
        if al > k + 1:
            st.caption(f"AL {al:.2f} is above k + 1 = {k + 1}, the most a round of {k} drafts emits: taken as "
                       f"{k + 1}.")
            al = float(k + 1)
        spec["acceptance_length"] = round(float(al), 4)
    else:
        st.caption(f"Acceptance length {golden:.2f} tokens per round: {md_escape(source)}.")
    try:
        tp = smallest_tp(sel.model, sel.accelerator, int(prompt) + int(output), 1, sel.weight_dtype, sel.kv_dtype) or 8
        kw = dict(tp=tp, weight_dtype=sel.weight_dtype, kv_dtype=sel.kv_dtype, engine=engine)
        plain = serving_views.estimate(sel.model, sel.accelerator, int(prompt), int(output), concurrency=concurrency,
                                       **kw)
        drafted = serving_views.estimate(sel.model, sel.accelerator, int(prompt), int(output),
                                         concurrency=concurrency, speculative=spec, **kw)
        curves = [serving_views.frontier(sel.model, sel.accelerator, int(prompt), int(output),
                                         [float(c) for c in SERVING_CONCURRENCIES], speculative=s, **kw)
                  for s in (None, spec)]
    except ValueError as exc:
        widgets.show_error(exc)
        return
    gain = plain.tpot.estimate_s / drafted.tpot.estimate_s
    with widgets.metric_row(4) as m:
        m[0].metric("TPOT, plain", f"{plain.tpot.estimate_s * 1e3:.2f} ms")
        m[1].metric("TPOT, speculative", f"{drafted.tpot.estimate_s * 1e3:.2f} ms",
                    delta=f"{gain:.2f}× faster" if gain >= 1 else f"{1 / gain:.2f}× slower", delta_color="off",
                    delta_arrow="off")
        m[2].metric("ITL (one round), speculative", f"{drafted.itl_s * 1e3:.2f} ms",
                    help="The gap between two streamed chunks, as vLLM's `vllm bench serve` counts it: AL tokens "
                         "arrive together. SGLang's `sglang.bench_serving` splits a chunk's wait among its tokens, "
                         "so its ITL is the TPOT.")
        m[3].metric("Output tok/s per GPU, speculative",
                    fmt_number(drafted.output_tokens_per_s_per_gpu),
                    delta=f"plain {fmt_number(plain.output_tokens_per_s_per_gpu)}", delta_color="off",
                    delta_arrow="off")
    if engine == "sglang":  # the engine's own client books a round's wait per token (calc.measurements.itl_per_token)
        st.caption(f"SGLang's own benchmark client (`sglang.bench_serving`) splits each round's wait among the tokens "
                   f"it streams: it would report an ITL of {drafted.tpot.estimate_s * 1e3:.2f} ms, the TPOT, where "
                   f"`vllm bench serve` reports the round's {drafted.itl_s * 1e3:.2f} ms.")
    capped = next((n for n in drafted.notices if "running requests" in n), "")  # the engine's own cap, if any
    st.caption(f"TP{tp} ({'the fewest GPUs that hold the model and one request' if tp != 8 else 'eight GPUs'}), "
               f"{concurrency:,} client{'s' if concurrency != 1 else ''} in a closed loop; "
               f"{md_escape(drafted.speculative)}" + (f"; {md_escape(capped)}: the speculative curve stops at its "
                                                       "batch" if capped else "") + ".")
    st.markdown("**Throughput per GPU against tokens/s per user, over concurrency (1 to 512 clients)**")
    charts.show_chart(serving_figure(*curves, concurrency), key="sd_serving")
    st.caption("At a small batch the verify step reads the weights once for k + 1 tokens per sequence, so a round "
               "costs little more than a plain step and TPOT falls by about AL. As the batch grows the verify "
               "step's B·(k + 1) tokens reach the critical batch and it turns compute-bound: the rejected drafts' "
               "matmuls then cost real time and the gain shrinks; at a low acceptance length the speculative curve "
               "meets the plain one, or falls below it.")
    serving_views.show_estimate(drafted, "sd_est", "tpot")
    downloads.download_csv(pd.concat([curves[0].assign(decoding="plain"), curves[1].assign(decoding="speculative")]),
                           "speculative_serving.csv", key="sd_serving_csv")
