"""Batching and memory: static against continuous batching on a request stream; contiguous KV
reservation against PagedAttention blocks; prefix caching with a shared system prompt."""
import dataclasses

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import calc
from calc.batching import batching_experiment, prefix_cache_curve
from ui import caching, charts, downloads, equations, formats, html_table, sidebar, url_state, widgets

sel = sidebar.selection()
st.title("Batching and memory")
st.markdown(
    "Live traffic is ragged: requests arrive at random times and finish at different lengths "
    "(CS336 lecture 10, Inference). **Static batching** waits for the longest response in the batch; **continuous "
    "batching** (Orca's iteration-level scheduling) returns to the scheduler after every step, so a "
    "finished request leaves and a waiting one takes its slot. Both run on the napkin step of "
    f"{sel.model.name} on {sel.accelerator.name} (the inference course, week 11, step 4).")

RATES = [0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0]
LENGTHS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
MAX_LENS = [1024, 2048, 4096, 8192, 16384, 32768]
SLOTS = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512]
BLOCKS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
DISTS = ["lognormal", "uniform", "fixed"]
_count = "{:,}".format
#: The summary's rows as shown: field -> (label, formatter). The CSV keeps the field names and base units.
SUMMARY_ROWS = {
    "n_requests": ("requests", _count), "output_tokens": ("output tokens", _count),
    "makespan_s": ("makespan", formats.fmt_seconds),
    "throughput_tokens_per_s": ("throughput (tok/s)", formats.fmt_number),
    "ttft_mean_s": ("TTFT, mean", formats.fmt_seconds), "ttft_p50_s": ("TTFT, p50", formats.fmt_seconds),
    "ttft_p90_s": ("TTFT, p90", formats.fmt_seconds), "e2e_mean_s": ("end to end, mean", formats.fmt_seconds),
    "e2e_p50_s": ("end to end, p50", formats.fmt_seconds), "e2e_p90_s": ("end to end, p90", formats.fmt_seconds),
    "mean_utilisation": ("slot utilisation", "{:.1%}".format), "n_steps": ("decode steps", _count),
    "max_slots": ("slot limit", _count),
}

#: The stream's default inputs; every experiment starts from them, so its result does not depend on
#: which button was pressed before.
STREAM_DEFAULTS = {"bt_rate": 16.0, "bt_n": 200, "bt_dist": "lognormal", "bt_seed": 0, "bt_pmean": 512,
                   "bt_pspread": 0.5, "bt_omean": 256, "bt_ospread": 1.0, "bt_maxlen": 4096, "bt_slots": 64,
                   "bt_block": 16}


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
    c = st.columns(4)
    url_state.accept_url_values("bt_rate", RATES)  # float options: "16" names 16.0
    rate = c[0].select_slider("Arrival rate (requests/s)", RATES, value=STREAM_DEFAULTS["bt_rate"], key="bt_rate", bind="query-params",
                              help="Poisson arrivals: exponential gaps with this mean rate.")
    n_requests = c[1].slider("Requests", 50, 1000, 200, step=50, key="bt_n", bind="query-params")
    dist = c[2].radio("Length distribution", DISTS, key="bt_dist", bind="query-params", horizontal=True,
                      help="lognormal: spread = standard deviation / mean (long tail); uniform: "
                           "mean x (1 ± spread), spread capped at 1; fixed: every request exactly the mean.")
    seed = c[3].number_input("Seed", min_value=0, max_value=1_000_000, value=0, step=1, key="bt_seed",
                             bind="query-params")
    c = st.columns(4)
    prompt_mean = c[0].select_slider("Mean prompt (tokens)", LENGTHS, value=512, key="bt_pmean", bind="query-params")
    prompt_spread = c[1].slider("Prompt spread", 0.0, 2.0, 0.5, step=0.1, key="bt_pspread", bind="query-params")
    output_mean = c[2].select_slider("Mean output (tokens)", LENGTHS, value=256, key="bt_omean", bind="query-params")
    output_spread = c[3].slider("Output spread", 0.0, 2.0, 1.0, step=0.1, key="bt_ospread", bind="query-params")
    c = st.columns(3)
    max_len = c[0].select_slider("Maximum length per sequence (tokens)", MAX_LENS, value=4096, key="bt_maxlen",
                                 bind="query-params",
                                 help="Prompt + output are capped here; a contiguous allocator reserves this much.")
    slot_limit = c[1].select_slider("Slot limit (max batch)", SLOTS, value=64, key="bt_slots", bind="query-params",
                                    help="Capped by the memory: sequences of the maximum length that fit beside the weights.")
    block = c[2].select_slider("KV block size (tokens)", BLOCKS, value=16, key="bt_block", bind="query-params",
                               help="PagedAttention block; vLLM's default is 16.")
    try:
        exp = _experiment(
            sel.model, sel.accelerator, weight_dtype=sel.weight_dtype, kv_dtype=sel.kv_dtype, n_requests=n_requests,
            arrival_rate_per_s=rate, prompt_mean_tokens=prompt_mean, prompt_spread=prompt_spread,
            output_mean_tokens=output_mean, output_spread=output_spread, distribution=dist, max_len_tokens=max_len,
            slot_limit=slot_limit, block_size_tokens=block, seed=int(seed))
    except ValueError as exc:  # e.g. the weights do not fit: what does not depend on the GPU still applies
        widgets.show_error(exc)
        st.info("The batching simulation needs the model on the GPU; the prefix-cache arithmetic below does not.")
        return

    cmp = exp.comparison
    if exp.max_slots < slot_limit:
        st.info(f"Memory caps the batch: {exp.memory_max_batch} sequences of {max_len:,} tokens fit beside the "
                f"weights, so the simulation uses {exp.max_slots} slots, not {slot_limit}.")

    st.subheader("Static against continuous batching")
    with widgets.metric_row(8, per_row=4) as rows:  # a row of four for each policy, drawn as one element
        for i, (run, name) in enumerate(((cmp.static, "Static"), (cmp.continuous, "Continuous"))):
            s, m = run.summary, rows[4 * i:4 * i + 4]
            m[0].metric(f"{name}: tok/s", formats.fmt_number(s.throughput_tokens_per_s),
                        delta=f"{cmp.speedup:.2f}x static" if run is cmp.continuous else None,
                        help="Output tokens of all requests / (last completion - first arrival).")
            m[1].metric(f"{name}: TTFT p50", formats.fmt_seconds(s.ttft_p50_s), help="Median time to first token.")
            m[2].metric(f"{name}: latency p90", formats.fmt_seconds(s.e2e_p90_s),
                        help=f"90th percentile of arrival to last token (median {formats.fmt_seconds(s.e2e_p50_s)}).")
            m[3].metric(f"{name}: utilisation", f"{s.mean_utilisation:.1%}",
                        help="Slots emitting useful tokens / slot limit, weighted by step time.")

    COLORS = {"static": "#EF553B", "continuous": "#636EFA"}
    tl = cmp.timeline
    # Both views of the timeline in one figure (two subplots, one legend): a stream control redraws one chart,
    # not two (each changed chart is drawn anew by the browser).
    fig = charts.Figure()
    for policy, color in COLORS.items():
        d = tl[tl["policy"] == policy]
        fig.add_scatter(x=d["time_s"], y=d["active_slots"], name=policy, legendgroup=policy,
                        line=dict(color=color, shape="hv"), customdata=d[["slot_utilisation", "queue_len"]],
                        hovertemplate="%{x:.1f} s: %{y:.1f} active slots (%{customdata[0]:.0%}), "
                                      "%{customdata[1]} waiting<extra>" + policy + "</extra>")
        fig.add_scatter(x=d["time_s"], y=d["cumulative_tokens"], name=policy, legendgroup=policy, showlegend=False,
                        line=dict(color=color), xaxis="x2", yaxis="y2",
                        hovertemplate="%{x:.1f} s: %{y:,} tokens<extra>" + policy + "</extra>")
    fig.add_shape(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=exp.max_slots, y1=exp.max_slots,
                  line=dict(dash="dot", color="#888888"))
    fig.add_annotation(xref="x domain", x=1, xanchor="right", yref="y", y=exp.max_slots, yanchor="bottom",
                       text=f"slot limit {exp.max_slots}", showarrow=False)
    fig.update_layout(xaxis=dict(domain=[0, 0.46], title_text="time (s)"),
                      yaxis=dict(title_text="active slots (sequences)"),
                      xaxis2=dict(domain=[0.56, 1], anchor="y2", title_text="time (s)"),
                      yaxis2=dict(anchor="x2", title_text="cumulative output tokens"), hovermode="x unified")
    c = st.columns(2)
    c[0].markdown("**Sequences emitting tokens**")
    c[1].markdown("**Output tokens emitted**")
    charts.show_chart(fig, key="bt_fig_timeline")

    summary_shown = pd.DataFrame({
        row.policy: [fmt(getattr(row, name)) for name, (_, fmt) in SUMMARY_ROWS.items()]
        for row in cmp.summary.itertuples()}, index=[label for label, _ in SUMMARY_ROWS.values()])
    html_table.show_table(summary_shown, width="stretch", column_config={"_index": st.column_config.TextColumn("quantity", width="medium")})
    c = st.columns(3)
    with c[0]:
        downloads.download_csv(cmp.summary, "batching_summary.csv", key="bt_csv_summary")
    with c[1]:
        downloads.download_csv(cmp.timeline, "batching_timeline.csv", key="bt_csv_timeline")
    with c[2]:
        downloads.download_csv(cmp.continuous.requests, "requests_continuous.csv", key="bt_csv_req")
    st.caption("Downloads (times in seconds): the summary, the charts' timeline (both policies on the same "
               "time bins), and every request with its continuous-batching times.")

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

    st.subheader("Contiguous reservation against PagedAttention")
    ps = exp.paging_summary
    with widgets.metric_row(4) as m:
        m[0].metric("Contiguous: KV wasted", f"{ps.contiguous_waste_fraction:.1%}")
        m[1].metric("Paged: KV wasted", f"{ps.paged_waste_fraction:.1%}")
        m[2].metric("Fit: contiguous", f"{ps.fit_contiguous:,}",
                    help="Slabs of the maximum length that fit in the memory left beside the weights.")
        m[3].metric("Fit: paged", f"{ps.fit_paged:,}",
                    help="Sequences of this stream's mean paged size that fit in the same memory.")
    fig = charts.Figure()
    labels = ["contiguous (max length)", f"paged ({block}-token blocks)"]
    used_gb = [ps.used_bytes / 1e9] * 2
    wasted_gb = [ps.contiguous_wasted_bytes / 1e9, ps.paged_wasted_bytes / 1e9]
    fig.add_bar(x=labels, y=used_gb, name="used (token states)", marker_color="#00CC96",
                hovertemplate="%{x}: %{y:,.2f} GB used<extra></extra>")
    fig.add_bar(x=labels, y=wasted_gb, name="wasted (reserved, never filled)", marker_color="#EF553B",
                hovertemplate="%{x}: %{y:,.2f} GB wasted<extra></extra>")
    fig.update_layout(barmode="stack", yaxis_title="KV cache (GB = 10^9 bytes)")
    c = st.columns([3, 2])
    with c[0]:
        st.markdown(f"**KV memory of the {ps.n_requests} requests at their final length**")
        charts.show_chart(fig, key="bt_fig_paging")
    with c[1]:
        st.latex(r"\text{waste}_\text{contig} = (S_\text{max} - \ell)\,KV_\text{tok}")
        st.latex(r"\text{waste}_\text{paged} = \Big(b\Big\lceil \tfrac{\ell}{b} \Big\rceil - \ell\Big)KV_\text{tok}")
        st.markdown(
            f"A contiguous slab per request must be reserved for the maximum length ({max_len:,} tokens) because "
            "nobody knows in advance how long the answer will be. PagedAttention (vLLM) stores the cache in "
            f"blocks of b = {block} tokens found through a block table, like pages of virtual memory: only the "
            "last block of each request is partly empty (at most b - 1 tokens). The vLLM paper measured 60-80% of KV memory wasted in "
            "earlier systems and under 4% with paging; the memory saved becomes batch: "
            f"{ps.fit_paged:,} sequences of this stream's mean length fit in the "
            f"{formats.fmt_bytes(ps.kv_budget_bytes)} left beside the weights, against {ps.fit_contiguous:,} slabs.")
    PAGING_MB = {"used_bytes": "used (MB)", "contiguous_reserved_bytes": "contiguous reserved (MB)",
                 "contiguous_wasted_bytes": "contiguous wasted (MB)", "paged_reserved_bytes": "paged reserved (MB)",
                 "paged_wasted_bytes": "paged wasted (MB)"}
    # One row per request (hundreds): built only while its expander is open (toggling reruns), so a stream
    # control does not rebuild a grid nobody looks at. Shown in MB (10^6 bytes); the CSV keeps bytes.
    per_request = st.expander(f"Every request: length, blocks, memory reserved and wasted ({len(exp.paging):,} rows)",
                              key="bt_paging_table", on_change="rerun")
    if per_request.open:
        html_table.show_table(
            exp.paging.assign(**{c: exp.paging[c] / 1e6 for c in PAGING_MB}), container=per_request, hide_index=True,
            width="stretch", height=220, column_config={
                "request": st.column_config.NumberColumn("request"),
                "length_tokens": st.column_config.NumberColumn("length (tokens)", format="localized"),
                "blocks": st.column_config.NumberColumn("blocks", format="localized")}
            | {c: st.column_config.NumberColumn(label, format="%.1f") for c, label in PAGING_MB.items()})
    downloads.download_csv(exp.paging, "kv_paging.csv", key="bt_csv_paging")
    st.caption(f"MB = 10^6 bytes (the CSV has bytes); {formats.fmt_bytes(exp.kv_bytes_per_token, 'GB')} of KV per token "
               f"({sel.kv_dtype}). External fragmentation between slabs is not modelled (it only adds to the "
               "contiguous waste).")


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
