"""Print how fast the tiered prefix cache replays 20,000 requests (the size of the public Mooncake traces: 12,031
conversation and 23,608 tool-and-agent requests), and what the workload presets give.

The 20,000 requests are the shipped Mooncake conversation sample (2,000 requests, 512-token blocks) repeated ten
times with fresh block ids, so the reuse pattern is the trace's own. Wall time and this process's CPU time are both
printed: on a shared machine the wall time counts the other users' load too.

Run: python bench/bench_prefix_cache.py
"""
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc import get_accelerator, get_model, kv_bytes_per_token  # noqa: E402
from calc import prefix_cache, traces, workload  # noqa: E402


def tiled_mooncake(copies: int = 10) -> traces.RequestStream:
    """The shipped Mooncake sample, ``copies`` times in a row, each copy with its own block ids."""
    s = traces.load_sample("mooncake_conversation_2000.jsonl")
    step = int(s.block_ids.max()) + 1
    ids = np.concatenate([s.block_ids + k * step for k in range(copies)])
    lens = np.tile(np.diff(s.block_offsets), copies)
    t = np.concatenate([s.arrival_s + k * (s.duration_s + 1.0) for k in range(copies)])
    return traces.RequestStream(t, np.tile(s.input_tokens, copies), np.tile(s.output_tokens, copies), 512, ids,
                                traces._offsets(lens), name="Mooncake conversation sample x 10")


def timed(fn):
    """(result, wall s, CPU s) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    model, acc = get_model("llama-3-8b"), get_accelerator("h100-sxm")
    kvb = kv_bytes_per_token(model)
    stream = tiled_mooncake()
    print(f"{stream.n_requests:,} requests, {stream.n_block_accesses:,} block lookups; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    tiers = prefix_cache.default_tiers(40e9, 512e9, 4e12)
    caps = prefix_cache.capacity_blocks(tiers, 512, kvb)
    for policy in prefix_cache.POLICIES:
        counts, wall, cpu = timed(lambda: prefix_cache.replay_blocks(stream, caps, policy))
        found = counts.sum(axis=0) / len(stream.block_ids)
        print(f"replay_blocks {policy:>13}: {wall:.3f} s wall, {cpu:.3f} s CPU; tiers {caps} blocks; found "
              + ", ".join(f"{t.name} {f:.1%}" for t, f in zip(tiers, found)))
    summary, wall, cpu = timed(lambda: prefix_cache.replay_ttft(stream, tiers, model, acc, counts=counts))
    print(f"replay_ttft (TTFT, sources, given the counts): {wall:.3f} s wall, {cpu:.3f} s CPU; "
          f"hit rate {summary.hit_rate():.1%}, TTFT p50 {summary.per_request['ttft_s'].median() * 1e3:.1f} ms "
          f"(no cache {summary.per_request['ttft_no_cache_s'].median() * 1e3:.1f} ms)")
    _, wall, cpu = timed(lambda: prefix_cache.ttl_hits(stream, 300.0, 1024))
    print(f"ttl_hits (API cache, 5 min): {wall:.3f} s wall, {cpu:.3f} s CPU")
    for key, w in workload.presets().items():
        s, wall, cpu = timed(lambda: workload.generate(w, 512))
        counts, w2, c2 = timed(lambda: prefix_cache.replay_blocks(s, caps))
        print(f"preset {key:>8}: {s.n_requests:,} requests, {s.n_block_accesses:,} lookups; generate {wall:.2f} s, "
              f"replay {w2:.2f} s wall ({c2:.2f} s CPU); found {counts.sum() / max(len(s.block_ids), 1):.1%}")


if __name__ == "__main__":
    main()
