"""Speculative decoding: the accept/resample rule that keeps the output exact, and when it pays."""
import streamlit as st

from calc import spec_speedup, spec_tables
from calc import speculative as sd
from ui import caching, equations, sidebar, speculative_views, url_state, widgets

SYMBOLS = ("A", "B", "C", "D", "E")
DEFAULT_P = (0.6, 0.4, 0.0, 0.0, 0.0)   # The inference course, week 11, step 3: target p
DEFAULT_Q = (0.9, 0.1, 0.0, 0.0, 0.0)   # and draft q
SAMPLE_SIZES = (1_000, 10_000, 60_000, 100_000, 300_000, 1_000_000)



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
    speculative_views.batch_section(gamma)
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
st.subheader("5. In a serving engine")
speculative_views.serving_section()
