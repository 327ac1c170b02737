"""Speculative decoding: the accept/resample rule that keeps the output exact, and when it pays."""
import streamlit as st

import calc
from calc import spec_speedup, spec_tables
from calc import speculative as sd
from ui import caching, charts, downloads, equations, sidebar, speculative_views, url_state, widgets

SYMBOLS = ("A", "B", "C", "D", "E")
DEFAULT_P = (0.6, 0.4, 0.0, 0.0, 0.0)   # The inference course, week 11, step 3: target p
DEFAULT_Q = (0.9, 0.1, 0.0, 0.0, 0.0)   # and draft q
SAMPLE_SIZES = (1_000, 10_000, 60_000, 100_000, 300_000, 1_000_000)
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
    return spec_speedup.batch_speedup_table(calc.get_model(target_id), calc.get_model(draft_id),
                                            calc.get_accelerator(gpu_id), spec_speedup.DEFAULT_BATCHES, gamma, alpha,
                                            context_len, weight_dtype, kv_dtype)


sel = sidebar.selection()
st.title("Speculative decoding")
intro = widgets.page_intro()
intro.markdown(
    "Decode reads all the weights to emit one token, so the GPU idles. A small **draft** model q guesses "
    "γ tokens; the **target** p checks all of them in one forward pass, which costs about the same as "
    "one decode step while the step is memory-bound. A drafted token x is accepted with probability "
    "min(1, p(x)/q(x)); at the first rejection the token is resampled from the **residual** "
    "max(0, p − q), normalised. The output is then distributed *exactly* as p (the inference course, week 11, step 3; "
    "Leviathan et al. 2022; Chen et al. 2023).")
intro.latex(r"P[x] = \underbrace{q(x)\min\!\left(1, \tfrac{p(x)}{q(x)}\right)}_{\min(p,q)}"
         r" + (1-\alpha)\,\frac{\max(0,\,p(x)-q(x))}{1-\alpha} = p(x)")
intro.latex(r"\alpha = \sum_x \min(p(x), q(x))")


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
    context_len = widgets.context_slider(c3, "Context length (tokens)", "sd_ctx", value=512)
    widgets.context_warning(calc.get_model(PAIRS[pair_id][0]), context_len)
    try:
        target_id, draft_id = PAIRS[pair_id]
        batch = _batch_table(target_id, draft_id, sel.gpu_id, gamma, llm_alpha, context_len,
                             sel.weight_dtype, sel.kv_dtype)
        b_verify = spec_speedup.verify_critical_batch(sel.accelerator, gamma, sel.weight_dtype)
        b_star = calc.critical_batch(sel.accelerator, sel.weight_dtype)
        c_at_1 = float(batch["cost_ratio"].iloc[0])
        g_best = spec_speedup.best_gamma(llm_alpha, c_at_1, max_gamma=16)
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
    fig = speculative_views.batch_figure(batch, gamma, b_verify, b_star)
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
        p = spec_tables.normalise(p_weights, "the target p")
        q = spec_tables.normalise(q_weights, "the draft q")
        table = sd.acceptance_table(p, q, SYMBOLS, wrong_residual=wrong)
        alpha = spec_tables.acceptance_rate(p, q)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    with widgets.metric_row(3) as m:
        m[0].metric("Acceptance rate α = Σ min(p, q)", f"{alpha:.3f}")
        m[1].metric("Rejected draws 1 − α", f"{table['rejection mass max(0, q - p)'].iloc[-1]:.1%}")
        m[2].metric("On rejection, resample from", "p (wrong)" if wrong else "the residual")
    widgets.show_equations([equations.alpha_row(p, q, SYMBOLS, alpha)])
    speculative_views.acceptance_table(table, wrong)
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

    speculative_views.sample_test(run, n_tokens, gamma, alpha, wrong)
    speculative_views.tokens_per_forward(alpha, gamma)
    batch_section(gamma)
    chains = spec_speedup.published_chains()
    if sel.model.n_mtp_layers:  # the sidebar's model ships an MTP module: offer it as the draft
        chains = {f"{sel.model.name}'s own MTP module (the sidebar's model)": spec_speedup.mtp_chain(sel.model), **chains}
    speculative_views.per_position_section(alpha, chains)


# Section 1's heading, buttons and note stay outside the fragment (a fragment rerun re-sends every element
# inside it; a button's full rerun runs the fragment as well).
st.subheader("1. Edit the target p and the draft q")
widgets.experiment_buttons(EXPERIMENTS, key="sd_exp")
st.caption("Weights are renormalised to sum to 1. Five symbols A–E; set a weight to 0 to drop a symbol.")
explorer()
