"""Workloads of 2026: multi-turn and agentic sessions, a prefix cache in tiers, hit rates from a replay, both bills."""
import pandas as pd
import streamlit as st

from calc import workload, workload_bill
from ui import downloads, formats, html_table, sidebar, widgets
from ui import workload_views as ww

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
        inp = ww.workload_inputs(sel.model)
    if inp.source == "upload" and inp.upload is None:
        right.info("Choose a trace file: Mooncake JSON lines (timestamp, input_length, output_length, hash_ids) or a CSV "
                   "with TIMESTAMP,ContextTokens,GeneratedTokens (Azure) or BurstGPT's columns.")
        return
    try:
        r = ww.replay(sel, inp)
    except ValueError as exc:
        with right:
            widgets.show_error(exc)
        return
    with right:
        ww.show_replay(sel, inp, r)
    ww.show_sources_and_ttft(r.summary)

    st.subheader("The API bill against self-hosting, same traffic")
    if r.self_hosted_error:
        st.warning(f"Self-hosting left out: {formats.md_escape(r.self_hosted_error)}")
    ww.show_bills(r.bills)
    ww.self_hosted_note(r)
    timed = ("decode at the serving estimate's rate, prefill at the bound's" if inp.timing == "serving"
             else "roofline lower bounds")
    st.caption(f"Traffic: the stream's own rate, {workload_bill.stream_stats(r.stream)['requests_per_day']:,.0f} "
               f"requests a day. API: the provider's cache keeps a prefix {inp.ttl_min:,g} min after its last use, "
               "whatever its size; reasoning billed as output (all three providers). Self-hosted: GPU time of prefill "
               f"left after the tiered cache plus decode of answers and reasoning, replicas for the peak; {timed}.")
    inputs = {"source": inp.source, "block_size": r.stream.block_size, "policy": inp.policy,
              "running_batch": inp.running_batch, "cpu_gb": inp.cpu_gb, "ssd_gb": inp.ssd_gb,
              "remote_gb": inp.remote_gb, "gpu_cache_bytes": round(r.gpu_cache_bytes), "api_ttl_min": inp.ttl_min,
              "edits": dict(inp.edits) or "none"}
    c1, c2 = st.columns(2)
    with c1:
        downloads.download_csv(r.summary.table(), "replay_summary.csv", key="wl_csv", inputs=inputs)
    with c2:
        downloads.download_csv(r.bills, "workload_bills.csv", key="wl_bill_csv", inputs=inputs)


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
