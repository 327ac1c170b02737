"""Batching and memory: static against continuous batching on a request stream; contiguous KV
reservation against PagedAttention blocks; prefix caching with a shared system prompt."""
import dataclasses

import streamlit as st

import calc
from calc.batching import batching_experiment, prefix_cache_curve
from ui import batching_views, caching, charts, downloads, equations, formats, sidebar, widgets
from ui.batching_views import STREAM_DEFAULTS

sel = sidebar.selection()
st.title("Batching and memory")
intro = widgets.page_intro()
intro.markdown(
    "Live traffic is ragged: requests arrive at random times and finish at different lengths "
    "(CS336 lecture 10, Inference). **Static batching** waits for the longest response in the batch; **continuous "
    "batching** (Orca's iteration-level scheduling) returns to the scheduler after every step, so a "
    "finished request leaves and a waiting one takes its slot. Both run on the napkin step of "
    f"{formats.md_escape(sel.model.name)} on {sel.accelerator.name} (the inference course, week 11, step 4).")

@caching.bounded_cache(max_entries=32, max_bytes=64 * caching.MB)
def _experiment(model, accelerator, **kwargs):
    """The simulation for one set of inputs, cached for every session (a rerun with the same inputs is free).

    What the page shows, not the per-step logs: a run's ``steps`` frame has one row per forward pass
    (1.2 million rows, 95 MB, for 1,000 long requests), so it is dropped before caching; the timeline,
    summaries, requests and paging (tens of kB) stay. Bounded in bytes as well as in entries.
    """
    exp = batching_experiment(model, accelerator, **kwargs)
    cmp = exp.comparison
    slim = {run: dataclasses.replace(getattr(cmp, run), steps=getattr(cmp, run).steps.iloc[:0])
            for run in ("static", "continuous")}
    return dataclasses.replace(exp, comparison=dataclasses.replace(cmp, **slim))


@widgets.fragment
def prefix_caching_section() -> None:
    """The prefix-cache explorable: it needs only the model's KV bytes per token, so it is drawn even when
    the model does not fit on the GPU and the batching simulation above cannot run. A fragment: its
    controls rerun this section only, not the simulation, charts and tables above."""
    st.subheader("Prefix caching: a shared system prompt")
    widgets.experiment_buttons({
        "Course, week 11: 20 chats share a 1,000-token prompt": {"bt_pn": 20, "bt_pl": 1000, "bt_pu": 0, "bt_hit": 1.0},
        "Half the requests miss the cache": {"bt_pn": 20, "bt_pl": 1000, "bt_pu": 0, "bt_hit": 0.5},
    }, key="bt_pexp")
    c = st.columns(4)
    pn = c[0].slider("Conversations", 1, 200, 20, key="bt_pn", bind="query-params")
    pl = c[1].number_input("Shared prefix (tokens)", min_value=0, max_value=131072, value=1000, step=100,
                           key="bt_pl", bind="query-params")
    pu = c[2].number_input("Own tokens per conversation", min_value=0, max_value=131072, value=0, step=100,
                           key="bt_pu", bind="query-params")
    hit = c[3].slider("Cache hit rate", 0.0, 1.0, 1.0, step=0.05, key="bt_hit", bind="query-params")
    if pl + pu > 0:  # one conversation's context: the shared prefix and its own tokens
        widgets.context_warning(sel.model, int(pl) + int(pu))
    try:
        pc = calc.prefix_cache_savings(sel.model, pn, int(pl), int(pu), hit, sel.kv_dtype)
        curve = prefix_cache_curve(sel.model, pn, int(pl), int(pu), sel.kv_dtype)
    except ValueError as exc:
        widgets.show_error(exc)
        return
    with widgets.metric_row(4) as m:
        m[0].metric("Prefill tokens, no cache", f"{pc.prefill_tokens_without:,.0f}")
        m[1].metric("Prefill tokens, cached", f"{pc.prefill_tokens_with:,.0f}",
                    delta=f"-{pc.prefill_saved_fraction:.0%}", delta_color="inverse")
        m[2].metric("KV without cache", formats.fmt_bytes(pc.cache_bytes_without))
        m[3].metric("KV with cache", formats.fmt_bytes(pc.cache_bytes_with),
                    delta=f"-{pc.cache_saved_fraction:.0%}", delta_color="inverse")
    widgets.show_equations(equations.prefix_rows(pc, calc.kv_bytes_per_token(sel.model, sel.kv_dtype), pn, int(pl), int(pu),
                                                hit))
    fig = charts.Figure()
    fig.add_scatter(x=curve["hit_rate"], y=curve["prefill_tokens_without"], name="without cache",
                    line=dict(color="#EF553B", dash="dash"),
                    customdata=curve["cache_bytes_without"] / 1e9,
                    hovertemplate="hit rate %{x:.0%}: %{y:,.0f} tokens, %{customdata:,.2f} GB<extra>without</extra>")
    fig.add_scatter(x=curve["hit_rate"], y=curve["prefill_tokens_with"], name="with prefix cache",
                    line=dict(color="#636EFA"), customdata=curve["cache_bytes_with"] / 1e9,
                    hovertemplate="hit rate %{x:.0%}: %{y:,.0f} tokens, %{customdata:,.2f} GB<extra>with</extra>")
    # No marker at the chosen h (the metrics above give its numbers): the chart then stays the same while
    # only the hit rate moves, and the browser keeps it instead of drawing it anew.
    fig.update_layout(xaxis_title="cache hit rate h", xaxis_tickformat=".0%", yaxis_title="prefill tokens (= tokens cached)",
                      height=340)
    st.latex(r"\text{prefill}_\text{without} = n\,(P + U) \qquad "
             r"\text{prefill}_\text{with} = P\,\big(1 + (n-1)(1-h)\big) + nU")
    c = st.columns([3, 2])
    with c[0]:
        charts.show_chart(fig, key="bt_fig_prefix")
        downloads.download_csv(curve, "prefix_cache.csv", key="bt_csv_prefix")
    with c[1]:
        st.markdown(
            "If the start of a prompt has been seen before, its keys and values are not recomputed: the first "
            "conversation computes the prefix, the others find it with probability h (SGLang's RadixAttention, "
            "vLLM's automatic prefix caching). Blocks make the sharing cheap: a shared block is reference-counted "
            "and copied only on write. The router must send requests with the same prefix to the same replica, or "
            "the cache is not found (the inference course, week 11, step 2). SGLang reports hit rates of 52-74% on real workloads.")


@widgets.fragment
def simulation_section() -> None:
    """The request stream, its two simulations and the paging comparison. A fragment: the stream's controls
    rerun this section only, not the sidebar, the page's introduction or the prefix-cache section."""
    stream = batching_views.stream_controls()
    max_len, slot_limit, block = stream["max_len_tokens"], stream["slot_limit"], stream["block_size_tokens"]
    widgets.context_warning(sel.model, max_len)   # a sequence's length is its context: marked past the window
    try:
        exp = _experiment(sel.model, sel.accelerator, weight_dtype=sel.weight_dtype, kv_dtype=sel.kv_dtype, **stream)
    except ValueError as exc:  # e.g. the weights do not fit: what does not depend on the GPU still applies
        widgets.show_error(exc)
        st.info("The batching simulation needs the model on the GPU; the prefix-cache arithmetic below does not.")
        return

    if exp.max_slots < slot_limit:
        st.info(f"Memory caps the batch: {exp.memory_max_batch:,} sequences of {max_len:,} tokens fit beside the "
                f"weights, so the simulation uses {exp.max_slots} slots, not {slot_limit}.")

    batching_views.policy_comparison(exp)

    st.markdown("**How a step is charged**")
    st.latex(r"t_\text{step} = \frac{KV_\text{tok}}{W}\Big(\sum_{i \in \text{batch}} S_i + T_\text{new}\Big)"
             r" + \max\!\Big(\frac{\text{weight bytes}}{W},\; \frac{2 N (B + T_\text{new})}{P}\Big)")
    st.markdown(
        "Each running sequence reads its own cache (S_i tokens); the weights are read once for the whole "
        "batch. A step that admits requests also prefills their prompts (T_new tokens) in the same pass and "
        "emits their first token, so TTFT = queueing + that step. Static batching keeps finished sequences "
        "as padding until the longest one is done: their slots are computed but emit nothing useful. "
        "Continuous batching wins on ragged traffic; with equal lengths, or with so little traffic that "
        "requests rarely overlap, the two come close.")

    batching_views.paging_comparison(exp, sel.kv_dtype, block, max_len, sel.model)


# The experiment buttons and headings stay outside the fragment: a fragment rerun re-sends (and the browser
# re-renders) every element inside it, changed or not; a button's full rerun runs the fragment as well.
st.subheader("Experiments")
widgets.experiment_buttons({
    "Chat traffic": {**STREAM_DEFAULTS, "bt_ospread": 1.5, "bt_rate": 24.0},
    "Equal lengths": {**STREAM_DEFAULTS, "bt_dist": "fixed", "bt_rate": 12.0},
    "Light traffic": {**STREAM_DEFAULTS, "bt_rate": 0.5},
    "32K reservation": {**STREAM_DEFAULTS, "bt_maxlen": 32768, "bt_slots": 512},
}, key="bt_exp")
st.subheader("The request stream")
simulation_section()
prefix_caching_section()
