"""Workloads of 2026: multi-turn and agentic sessions, a prefix cache in tiers, hit rates from a replay, both bills."""
import numpy as np
import pandas as pd
import streamlit as st

import calc
from calc import api_tiers, bill, prefix_cache, workload, workload_bill
from ui import charts, downloads, formats, html_table, sidebar, url_state, widgets
from ui import workload_views as ww

TIER_COLORS = {"computed": "#d62728", "recomputed": "#ff7f0e", "gpu": "#2ca02c", "cpu": "#1f77b4", "ssd": "#9467bd",
               "remote": "#8c564b"}

st.title("Workloads of 2026: sessions, a tiered prefix cache, both bills")
st.caption("Chat, RAG and agent loops send the same growing prefix again and again. Whether it is still cached depends "
           "on what fits where: GPU memory, then CPU memory, local SSD, a remote pool. The hit rates here come from "
           "replaying the requests' blocks through LRU tiers, not from a slider.")


@widgets.fragment
def workloads_section() -> None:
    """Source, tiers, the replay's hits, TTFT and both bills. A fragment: its inputs rerun this part only."""
    sel = sidebar.selection()
    left, right = st.columns([5, 7], gap="medium")
    with left:
        url_state.accept_url_values("wl_src", list(ww.SOURCES), ww.SOURCES.get)  # a link may name the key or the label
        source = st.selectbox("Workload", list(ww.SOURCES), format_func=ww.SOURCES.get, key="wl_src",
                              bind="query-params")
        edits, upload, upload_name, shared = (), None, "", 0
        if source.startswith("preset:"):
            edits = ww.preset_editor(source)
        elif source == "upload":
            f = st.file_uploader("Trace file", type=["jsonl", "json", "csv", "txt"], key="wl_file",
                                 help=f"At most {calc.traces.MAX_UPLOAD_BYTES / 1e6:.0f} MB, "
                                 f"{calc.traces.MAX_REQUESTS:,} requests")
            upload, upload_name = (f.getvalue(), f.name) if f is not None else (None, "")
        if source.endswith(".csv") or source == "upload":
            shared = st.number_input("Shared prefix assumed for CSV traces, tokens", 0, 1_000_000, 0, step=512,
                                     key="wl_shared", bind="query-params", help="A CSV trace has no block hashes: its prompts are unique "
                                     "unless every prompt starts with the same system prompt")
        # Two to a row and a radio (its labels wrap): at 700 px, four to a row cut labels and a select box its option
        c1, c2 = st.columns(2)
        block = c1.selectbox("Block size, tokens", [16, 256, 512], index=2, key="wl_bs", bind="query-params",
                             help="16: vLLM's block; 256: LMCache's default chunk; 512: Mooncake's (its trace's hashes)")
        running = c2.number_input("Running batch", 0, 4096, 4, step=4, key="wl_run", bind="query-params",
                                  help="Sequences decoding now: their KV cache is not free for prefixes")
        url_state.accept_url_values("wl_pol", list(prefix_cache.POLICIES), ww.POLICY_LABELS.get)
        policy = st.radio("When a tier is full", list(prefix_cache.POLICIES), key="wl_pol", bind="query-params",
                          format_func=ww.POLICY_LABELS.get)
        c1, c2 = st.columns(2)
        cpu_gb = c1.number_input("CPU GB", 0, 100_000, 256, step=64, key="wl_cpu", bind="query-params")
        ssd_gb = c2.number_input("SSD GB", 0, 1_000_000, 2000, step=500, key="wl_ssd", bind="query-params")
        c1, c2 = st.columns(2)
        remote_gb = c1.number_input("Remote GB", 0, 10_000_000, 0, step=1000, key="wl_rem", bind="query-params")
        ttl_min = c2.number_input("API cache TTL, min", 0.0, 1440.0, 5.0, step=1.0, key="wl_ttl", bind="query-params",
                                  help="Anthropic: 5 min (1 h at 2x writes); OpenAI: 5-10 min in memory")
        c1, c2 = st.columns(2)
        batch = c1.number_input("Decode batch", 1, 4096, 32, step=8, key="wl_batch", bind="query-params")
        peak = c2.number_input("Peak / average", 1.0, 100.0, 3.0, step=0.5, key="wl_peak", bind="query-params")
    if source == "upload" and upload is None:
        right.info("Choose a trace file: Mooncake JSON lines (timestamp, input_length, output_length, hash_ids) or a CSV "
                   "with TIMESTAMP,ContextTokens,GeneratedTokens (Azure) or BurstGPT's columns.")
        return
    key = (source, edits, int(block), upload, upload_name, int(shared))
    try:
        stream = ww.stream(*key)
        setup = bill.SelfHostedSetup(sel.model, sel.accelerator, sel.price_per_hour_usd, int(batch), float(peak),
                                     sel.weight_dtype, sel.kv_dtype)
        try:
            rates, sh_error = workload_bill.self_hosted_rates_for(stream, setup), None
        except ValueError as exc:
            rates, sh_error = None, exc
        tp = rates.gpus_per_replica if rates else 1
        ctx = int(stream.input_tokens.mean() + stream.output_tokens.mean())
        gpu_bytes = prefix_cache.gpu_cache_bytes(sel.model, sel.accelerator, int(running), ctx, sel.weight_dtype,
                                                 sel.kv_dtype, tp)
        tiers = prefix_cache.default_tiers(gpu_bytes, cpu_gb * 1e9, ssd_gb * 1e9, remote_gb * 1e9)
        kvb = float(calc.kv_bytes_per_token(sel.model, sel.kv_dtype))
        caps = tuple(prefix_cache.capacity_blocks(tiers, stream.block_size, kvb))
        counts = ww.replay_counts(key, caps, policy)
        summary = prefix_cache.replay_ttft(stream, tiers, sel.model, sel.accelerator, policy, sel.weight_dtype,
                                           sel.kv_dtype, tp, counts=counts)
        sweep = ww.cpu_sweep(key, tuple(tiers), kvb, policy)
        table = workload_bill.compare(stream, api_tiers.default_tiers(), summary if rates else None, setup, rates,
                                      ttl_s=60.0 * ttl_min)
    except ValueError as exc:
        with right:
            widgets.show_error(exc)
        return

    stats, d = workload_bill.stream_stats(stream), summary.per_request
    with right:
        st.markdown(f"**{stats['requests']:,} requests** over {stats['duration_s'] / 60:,.1f} min; prompt median "
                    f"{stats['median_input_tokens']:,.0f} tokens, output mean {stats['mean_output_tokens']:,.0f} "
                    f"(reasoning {stats['mean_reasoning_tokens']:,.0f}). GPU keeps {formats.fmt_bytes(gpu_bytes)} for "
                    f"prefixes ({tp} x {sel.accelerator.name} less the weights and {running} running sequences of "
                    f"{ctx:,} tokens); a {stream.block_size}-token block holds {formats.fmt_bytes(stream.block_size * kvb)}.")
        by_tier = summary.hit_rate_by_tier()
        with widgets.metric_row(6, per_row=3) as m:
            m[0].metric("Prefix hit rate", f"{summary.hit_rate():.1%}", help="Share of prompt tokens found in any tier")
            for cell, name in zip(m[1:4], ("gpu", "cpu", "ssd")):
                cell.metric(f"found in {name.upper()}", f"{by_tier[name]:.1%}", help=f"{caps[('gpu', 'cpu', 'ssd').index(name)]:,} blocks")
            m[4].metric("TTFT p50", formats.fmt_seconds(float(d["ttft_s"].median())),
                        delta=f"{formats.fmt_seconds(float(d['ttft_no_cache_s'].median()))} without cache", delta_color="off",
                        delta_arrow="off")
            m[5].metric("Prefill GPU work", f"{d['prefill_gpu_s'].sum() / d['ttft_no_cache_s'].sum():.0%}",
                        help="GPU seconds of prefill with the cache / without it")
        fig = charts.Figure()
        for name in ("gpu", "cpu", "ssd", "remote"):
            fig.add_scatter(x=sweep["size_bytes"] / 1e9, y=sweep[f"hit_rate_{name}"], name=name.upper(), stackgroup="h",
                            mode="lines", line_color=TIER_COLORS[name], hovertemplate="%{x:,.0f} GB CPU: %{y:.1%}<extra>" + name + "</extra>")
        fig.add_vline(x=cpu_gb, line_dash="dot", line_color="gray")
        fig.update_layout(xaxis_title="CPU memory for the cache, GB", yaxis_title="share of prompt blocks found",
                          yaxis_tickformat=".0%", height=300, margin=dict(t=10))
        st.markdown("**How many GB of CPU memory buy how many points of hit rate** (other tiers as set)")
        charts.show_chart(fig, key="wl_sweep")
        st.caption(f"Without CPU memory the tiers find {sweep['hit_rate'].iloc[0]:.1%} of the prompt blocks; with "
                   f"{formats.fmt_bytes(sweep['size_bytes'].iloc[-1])}, which holds every distinct block of the stream, "
                   f"{sweep['hit_rate'].iloc[-1]:.1%}. Each point is the same replay with another CPU size.")

    tok = summary.tokens_by_source()
    left, right = st.columns(2)
    with left:
        fig = charts.Figure()
        for name, n in tok.items():
            fig.add_bar(x=[n / max(sum(tok.values()), 1)], y=["prompt tokens"], orientation="h", name=name,
                        marker_color=TIER_COLORS[name], hovertemplate=f"{name}: {n:,} tokens (%{{x:.1%}})<extra></extra>")
        fig.update_layout(barmode="stack", xaxis_tickformat=".0%", height=200, margin=dict(t=10), yaxis_visible=False)
        st.markdown("**Where each prompt token came from**")
        charts.show_chart(fig, key="wl_sources")
        st.caption("Computed: missed. Recomputed: found in a tier but slower to load than to prefill again. "
                   "GPU: used in place. CPU/SSD/remote: loaded over PCIe, NVMe or the network.")
    with right:
        fig = charts.Figure()
        q = np.linspace(0, 1, 101)
        for col, label in (("ttft_no_cache_s", "no cache"), ("ttft_s", "tiered cache")):
            fig.add_scatter(x=np.quantile(d[col], q), y=q, name=label, mode="lines")
        fig.update_layout(xaxis_title="TTFT, s (prefill alone, no queueing)", yaxis_title="share of requests",
                          xaxis_type="log", height=260, margin=dict(t=10))
        st.markdown("**TTFT with and without the cache**")
        charts.show_chart(fig, key="wl_ttft")

    st.subheader("The API bill against self-hosting, same traffic")
    if sh_error:
        st.warning(f"Self-hosting left out: {formats.md_escape(sh_error)}")
    ww.show_bills(table)
    st.caption(f"Traffic: the stream's own rate, {stats['requests_per_day']:,.0f} requests a day. API: the provider's "
               f"cache keeps a prefix {ttl_min:,g} min after its last use, whatever its size; reasoning billed as output "
               "(all three providers). Self-hosted: GPU time of prefill left after the tiered cache plus decode of "
               "answers and reasoning, replicas for the peak; roofline lower bounds.")
    inputs = {"source": source, "block_size": stream.block_size, "policy": policy, "running_batch": running,
              "cpu_gb": cpu_gb, "ssd_gb": ssd_gb, "remote_gb": remote_gb, "gpu_cache_bytes": round(gpu_bytes),
              "api_ttl_min": ttl_min, "edits": dict(edits) or "none"}
    c1, c2 = st.columns(2)
    with c1:
        downloads.download_csv(summary.table(), "replay_summary.csv", key="wl_csv", inputs=inputs)
    with c2:
        downloads.download_csv(table, "workload_bills.csv", key="wl_bill_csv", inputs=inputs)


workloads_section()
with st.expander("Reasoning tokens: billed as output, kept or dropped by each provider and engine"):
    html_table.show_table(pd.DataFrame([{"who": k, **v} for k, v in workload.reasoning_conventions().items()]),
                      hide_index=True, width="stretch")
st.markdown(
    "**How the replay works.** Each prompt is a list of block hashes; a block's hash stands for it and everything "
    "before it, so a prompt hits on its longest cached prefix. Each tier is an LRU; with *demote* an evicted block "
    "moves down a tier and the tiers form one LRU stack, with *write-through* every tier keeps its own. A block found "
    "below the GPU is loaded when `KV bytes / link bandwidth` beats recomputing it, else recomputed. Dropping "
    "reasoning at a new user turn rewrites the history, so the next prompt misses from the first dropped reasoning on.")
