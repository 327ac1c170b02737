"""The batching page's parts: the request stream's controls, static against continuous batching on it (metrics,
timeline, summary), and contiguous KV reservation against PagedAttention blocks.

The simulation is calc.batching's; this module draws its results.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

import calc

from ui import charts, columns, downloads, formats, html_table, url_state, widgets

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
    "throughput_tokens_per_s": (columns.label("tokens_per_s"), formats.fmt_number),
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


def stream_controls() -> dict:
    """The request stream's controls in three rows (keys bt_*, in the URL); returns them as
    ``calc.batching.batching_experiment``'s keywords."""
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
    prompt_mean = widgets.token_slider(c[0], "Mean prompt (tokens)", LENGTHS, "bt_pmean", 512)
    prompt_spread = c[1].slider("Prompt spread", 0.0, 2.0, 0.5, step=0.1, key="bt_pspread", bind="query-params")
    output_mean = widgets.token_slider(c[2], "Mean output (tokens)", LENGTHS, "bt_omean", 256)
    output_spread = c[3].slider("Output spread", 0.0, 2.0, 1.0, step=0.1, key="bt_ospread", bind="query-params")
    c = st.columns(3)
    max_len = widgets.token_slider(c[0], "Maximum length per sequence (tokens)", MAX_LENS, "bt_maxlen", 4096,
                                   help="Prompt + output are capped here; a contiguous allocator reserves this much.")
    slot_limit = c[1].select_slider("Slot limit (max batch)", SLOTS, value=64, key="bt_slots", bind="query-params",
                                    help="Capped by the memory: sequences of the maximum length that fit beside the weights.")
    block = c[2].select_slider("KV block size (tokens)", BLOCKS, value=16, key="bt_block", bind="query-params",
                               help="PagedAttention block; vLLM's default is 16.")
    return dict(n_requests=n_requests, arrival_rate_per_s=rate, prompt_mean_tokens=prompt_mean,
                prompt_spread=prompt_spread, output_mean_tokens=output_mean, output_spread=output_spread,
                distribution=dist, max_len_tokens=max_len, slot_limit=slot_limit, block_size_tokens=block,
                seed=int(seed))


def policy_comparison(exp) -> None:
    """Static against continuous batching: four metrics per policy, the timeline (active slots and output tokens),
    the summary table and the downloads."""
    cmp = exp.comparison
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



def bound_words(model) -> str:
    """What the paging comparison leaves out of ``model``'s cache ("" when nothing): it charges every layer's KV per
    token at every token and nothing else, so a model with windowed or chunked layers holds less KV than it says
    (an upper bound), and a model with a constant per-sequence state (Mamba, Gated DeltaNet, lightning layers)
    holds that state besides, in either allocator (left out: the figures understate its memory)."""
    kinds = set(model.layer_kinds)
    parts = []
    if kinds & {"sliding", "chunked"}:
        parts.append("its sliding or chunked layers hold at most their window of tokens, so the KV here is an upper "
                     "bound")
    state = calc.kv.kv_state_bytes(model)
    if state:
        parts.append(f"its Mamba or linear-attention layers hold {formats.fmt_bytes(state)} of constant state per "
                     "sequence besides, in either allocator, which these figures leave out (they understate its "
                     "memory by that much per sequence)")
    if not parts:
        return ""
    return (f" For {model.name}: these figures charge every layer's KV at every token and nothing else; "
            + "; ".join(parts) + ". The KV cache page has its per-layer cache.")


def paging_comparison(exp, kv_dtype: str, block: int, max_len: int, model=None) -> None:
    """Contiguous reservation for the maximum length against PagedAttention blocks: waste, what fits, a bar per
    allocator, the formulas, and every request in an expander; with ``model``, what the comparison leaves out of
    its cache (``bound_words``)."""
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
        st.markdown(f"**KV memory of the {ps.n_requests:,} requests at their final length**")
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
               f"({kv_dtype}). External fragmentation between slabs is not modelled (it only adds to the "
               "contiguous waste)." + (bound_words(model) if model is not None else ""))
