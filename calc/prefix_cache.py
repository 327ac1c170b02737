"""A prefix cache in tiers (GPU memory, CPU memory, local SSD, a remote pool), replayed on a request stream.

Engines keep the KV cache of prompt prefixes so that a request whose prompt starts like an earlier one
skips that part of prefill (vLLM automatic prefix caching, SGLang RadixAttention). The cache is cut
into blocks (16 tokens in vLLM, 512-token chunks in Mooncake's store, 256 by default in LMCache) and
addressed by the hash of a block together with everything before it, so a block is reusable only when
the whole prefix up to it matches: a prompt's hit is its longest run of cached blocks from the start.

Tiers. GPU memory holds what the weights and the running batch leave; offloading engines add CPU
memory (LMCache, SGLang HiCache's host pool), local SSD (LMCache local disk, HiCache storage) and a
remote pool (Mooncake Store over RDMA). Each tier has a capacity in blocks and evicts its least
recently used block (LRU). Two policies for what an eviction does:

* ``"demote"``: a block evicted from a tier moves to the next one (SGLang HiCache's write-back
  policy; the tiers are exclusive). A hit in a lower tier moves the block back to the GPU. Together
  the tiers are one LRU stack of their summed capacity, the GPU its most recent part.
* ``"write_through"``: every block is written to every tier as it is computed and each tier evicts on
  its own (LMCache's CPU and disk backends store each chunk at prefill; the tiers are inclusive). A
  block is found in the fastest tier that still holds it.

A block found in the GPU tier is used in place. A block found below is loaded over the tier's link
(PCIe for CPU memory, NVMe for the SSD, the network for a pool) when that is faster than recomputing
it, else recomputed (``load_or_recompute``): this is what TTFT and the prefill work follow
(``replay_ttft``). Per request, in isolation: no queueing, loads not overlapped with compute (LMCache's
layer-wise pipelining would hide part of a load), the link not shared with other requests.

Sources: Kwon et al., "PagedAttention" (SOSP'23) section 4 and vLLM's automatic prefix caching design
doc (block hashes over the whole prefix, LRU of free blocks); Zheng et al., "SGLang" (RadixAttention);
Qin et al., "Mooncake" (FAST'25), section 4 (KVCache pool in CPU/DRAM/SSD); LMCache docs (CPU offload,
local disk backend); SGLang HiCache docs (write_through / write_back).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from .checks import check_choice, check_nonneg_number, check_positive_int, check_positive_number
from .kv import kv_bytes_per_token, kv_cache_bytes
from .memory import weight_bytes
from .models import DATA_DIR
from .step import prefill_time
from .traces import MAX_BLOCK_ACCESSES, RequestStream

POLICIES = ("demote", "write_through")
#: Where a prompt token came from, in the order the page stacks them.
SOURCES = ("computed", "recomputed", "gpu", "cpu", "ssd", "remote")


@dataclass(frozen=True)
class Tier:
    """One level of the prefix cache.

    Fields:
        name: "gpu", "cpu", "ssd" or "remote" (lower case, as ``SOURCES``).
        capacity_bytes: bytes this tier gives the prefix cache (>= 0; 0 = tier absent).
        bandwidth_bytes_per_s: speed of loading from this tier into GPU memory (PCIe, NVMe, network);
            ignored for the GPU tier, whose blocks are used in place.
        latency_s: fixed cost of one load from this tier (>= 0).

    Raises:
        ValueError: a negative capacity or latency, a bandwidth <= 0, an unknown name.
    """

    name: str
    capacity_bytes: float
    bandwidth_bytes_per_s: float
    latency_s: float = 0.0

    def __post_init__(self):
        check_choice(self.name, SOURCES[2:], f"a tier's name must be one of {', '.join(SOURCES[2:])}")
        check_nonneg_number(self.capacity_bytes, f"capacity_bytes of the {self.name} tier")
        check_positive_number(self.bandwidth_bytes_per_s, f"bandwidth_bytes_per_s of the {self.name} tier")
        check_nonneg_number(self.latency_s, f"latency_s of the {self.name} tier")


@lru_cache(maxsize=1)
def _tier_file() -> dict:
    with open(DATA_DIR / "workloads.json", encoding="utf-8") as f:
        return json.load(f)["tiers"]


def default_tiers(gpu_bytes: float, cpu_bytes: float = 0.0, ssd_bytes: float = 0.0, remote_bytes: float = 0.0) -> list:
    """The four tiers with the link speeds of ``calc/data/workloads.json`` (each row cites its source:
    PCIe 5.0 x16 for CPU memory, one PCIe 4.0 NVMe drive for the SSD, a 200 Gb/s RDMA NIC for the pool).

    Returns:
        list of four ``Tier`` (gpu, cpu, ssd, remote) with the given capacities in bytes.
    """
    rows = _tier_file()
    caps = {"gpu": gpu_bytes, "cpu": cpu_bytes, "ssd": ssd_bytes, "remote": remote_bytes}
    return [Tier(n, caps[n], rows[n]["bandwidth_bytes_per_s"], rows[n].get("latency_s", 0.0)) for n in caps]


def tier_sources() -> dict:
    """Each tier's link speed, its name and its source, as in ``calc/data/workloads.json``."""
    return {k: dict(v) for k, v in _tier_file().items()}


def gpu_memory_split(model, accelerator, running_batch: int, context_len: int, weight_dtype: str = "bf16",
                     kv_dtype: str = "bf16", tp: int = 1) -> tuple[float, float]:
    """(after_weights_bytes, running_kv_bytes): tp x memory less the weights (at least 0), and the running batch's
    KV cache (``running_batch`` sequences of ``context_len`` tokens, ``calc.kv_cache_bytes``), which holds its blocks
    while it decodes. Llama-3-8B in bf16 on one H100 SXM (80 GB), 16 sequences of 8,192 tokens: (63.9 GB, 17.2 GB).

    Raises:
        ValueError: a batch < 0 or a context < 1; unknown dtypes.
    """
    b = int(running_batch)
    if b < 0:
        raise ValueError(f"running_batch must be >= 0, got {running_batch!r}")
    n = check_positive_int(tp, "tp")
    kv = float(kv_cache_bytes(model, check_positive_int(context_len, "context_len"), b, kv_dtype)) if b else 0.0
    return max(0.0, n * float(accelerator.memory_bytes) - float(weight_bytes(model, weight_dtype))), kv


def gpu_cache_bytes(model, accelerator, running_batch: int, context_len: int, weight_dtype: str = "bf16",
                    kv_dtype: str = "bf16", tp: int = 1) -> float:
    """GPU memory left for the prefix cache: tp x memory - weights - the running batch's KV cache, at least 0
    (``gpu_memory_split``).

    The running batch holds its blocks while it decodes; only the rest can keep finished prompts' prefixes (vLLM's
    free-block LRU). Llama-3-8B in bf16 on one H100 SXM (80 GB) with 16 sequences of 8,192 tokens: 80 - 16.06 -
    16 x 1.07 = 46.8 GB.

    Raises:
        ValueError: a batch < 0 or a context < 1; unknown dtypes.
    """
    after_weights, running = gpu_memory_split(model, accelerator, running_batch, context_len, weight_dtype, kv_dtype,
                                              tp)
    return max(0.0, after_weights - running)


def capacity_blocks(tiers, block_size: int, kv_bytes_per_token_: float) -> list[int]:
    """Blocks each tier holds: floor(capacity_bytes / (block_size x KV bytes per token)).

    Raises:
        ValueError: block_size not a positive integer, KV bytes per token <= 0.
    """
    bs = check_positive_int(block_size, "block_size")
    kvb = check_positive_number(kv_bytes_per_token_, "kv_bytes_per_token")
    return [int(t.capacity_bytes // (bs * kvb)) for t in tiers]


# --------------------------------------------------------------------------------------------
# The replay: hits per tier from the blocks
# --------------------------------------------------------------------------------------------

def replay_blocks(stream: RequestStream, capacities, policy: str = "demote") -> np.ndarray:
    """Replay every request's blocks through LRU tiers of the given capacities.

    For each request in arrival order: look its prompt blocks up in order; a block counts as a hit in
    tier t if it is held by tier t and every block before it in the prompt was a hit (prefix rule).
    Then every block of the request (its prompt, then the output blocks it stored, ``stream.stored_ids``)
    becomes the most recent, touched from the last block to the first, so that the first blocks of a
    prompt are the most recent and a prompt's tail is evicted before its head (vLLM frees a request's
    blocks in reverse order for this reason; SGLang's radix cache evicts leaves first). Evictions happen
    once the request is done (its blocks are in use while it runs, so it never evicts its own) and
    follow ``policy`` (module docstring).

    How: LRU caches of capacities c1 <= c2 <= ... fed the same accesses are nested (an LRU holds the c
    most recently used blocks; Mattson et al., "Evaluation techniques for storage hierarchies", 1970).
    With ``"demote"`` the exclusive tiers are one LRU stack cut at the running sums of their capacities;
    with ``"write_through"`` each tier is its own LRU of its own capacity. Either way one pass over
    nested LRUs (one ``OrderedDict`` per distinct size) finds, for each block, the smallest LRU holding
    it, hence its tier.

    Args:
        stream: the requests.
        capacities: blocks per tier, fastest first (list of ints >= 0; a 0 tier is absent).
        policy: "demote" or "write_through".

    Returns:
        int64 array (R, len(capacities)): prompt blocks of each request found in each tier.

    Raises:
        ValueError: an unknown policy, a negative capacity, a stream of more than ``MAX_BLOCK_ACCESSES``.
    """
    return replay_many(stream, [capacities], policy)[0]


def replay_many(stream: RequestStream, configurations, policy: str = "demote") -> list:
    """``replay_blocks`` for several tier configurations in one pass over the stream.

    The nested LRUs of every configuration's bounds are run together (one ``OrderedDict`` per distinct size);
    each configuration's hits are read off the smallest LRU holding each block. Used by ``hit_rate_sweep``.

    Args:
        configurations: list of capacity lists (blocks per tier, fastest first), all of the same length.

    Returns:
        list of int64 arrays (R, tiers), one per configuration.

    Raises:
        ValueError: as ``replay_blocks``.
    """
    check_choice(policy, POLICIES, f"policy must be one of {', '.join(POLICIES)}")
    configs = [[int(c) for c in caps] for caps in configurations]
    if not configs or any(not caps or any(c < 0 for c in caps) for caps in configs):
        raise ValueError(f"capacities must be block counts >= 0, got {configurations!r}")
    if stream.n_block_accesses > MAX_BLOCK_ACCESSES:
        raise ValueError(f"the stream has {stream.n_block_accesses:,} block lookups; at most "
                         f"{MAX_BLOCK_ACCESSES:,} are replayed: choose a larger block size or fewer requests")
    # demote: tier t holds the blocks at depths [sum(caps[:t]), sum(caps[:t+1])) of one LRU stack;
    # write-through: tier t holds the caps[t] most recent blocks, and a block goes to the fastest tier holding it
    bounds = [np.cumsum(caps).tolist() if policy == "demote" else caps for caps in configs]
    sizes = sorted({b for bs in bounds for b in bs if b > 0})
    level_hits = (_nested_lru(stream.block_ids.tolist(), stream.block_offsets.tolist(), stream.stored_ids.tolist(),
                              stream.stored_offsets.tolist(), sizes) if sizes else None)
    out = []
    for caps, bs in zip(configs, bounds):
        counts = np.zeros((stream.n_requests, len(caps)), dtype=np.int64)
        for k, size in enumerate(sizes):  # a block whose smallest LRU is `size` sits in the first tier reaching it
            t = next((t for t, (c, b) in enumerate(zip(caps, bs)) if c > 0 and b >= size), None)
            if t is not None:
                counts[:, t] += level_hits[:, k]
        out.append(counts)
    return out


def _nested_lru(ids, off, sids, soff, sizes) -> np.ndarray:
    """Prefix hits of each request by the smallest of the nested LRUs (capacities ``sizes``, increasing)
    holding each block. Returns int64 (R, len(sizes))."""
    levels = [OrderedDict() for _ in sizes]
    n_l = len(sizes)
    big = levels[-1]  # the largest LRU holds every block any level holds: a block not in it is a miss everywhere
    moves = [lv.move_to_end for lv in levels]
    plan = [(lv, cap, lv.popitem) for lv, cap in zip(levels, sizes)]
    out = np.zeros((len(off) - 1, n_l), dtype=np.int64)
    for r in range(len(off) - 1):
        seg = ids[off[r]:off[r + 1]]
        hits = None
        for b in seg:  # lookup, before this request changes anything: stop at the first miss
            if b not in big:
                break
            if hits is None:
                hits = [0] * n_l
            for k in range(n_l):
                if b in levels[k]:
                    hits[k] += 1
                    break
        if hits is not None:
            out[r] = hits
        stored = sids[soff[r]:soff[r + 1]]
        for b in reversed(seg + stored if stored else seg):  # touch the output, then the prompt, backwards
            if b not in big:
                for level in levels:
                    level[b] = None
                continue
            for k, level in enumerate(levels):
                if b in level:  # then every larger level holds it too (nested): refresh them all
                    for move in moves[k:]:
                        move(b)
                    break
                level[b] = None
        for level, cap, pop in plan:  # evict after the request: its own blocks are in use until it ends
            while len(level) > cap:
                pop(False)
    return out


def lru_hits_reference(blocks_per_request, capacity: int, stored_per_request=None) -> list[int]:
    """The plainest LRU of ``capacity`` blocks (a Python list, most recent last), for checking the replay:
    prefix hits of each request, looked up before the request touches its blocks in reverse order and
    evicts down to ``capacity`` (as ``replay_blocks``). O(capacity) per lookup; for tests on small streams only."""
    stack, out = [], []
    for i, blocks in enumerate(blocks_per_request):
        n = 0
        for b in blocks:
            if b not in stack:
                break
            n += 1
        out.append(n)
        stored = list(stored_per_request[i]) if stored_per_request else []
        for b in reversed(list(blocks) + stored):
            if b in stack:
                stack.remove(b)
            stack.append(b)
        while len(stack) > capacity:
            stack.pop(0)
    return out


# --------------------------------------------------------------------------------------------
# Load or recompute; TTFT
# --------------------------------------------------------------------------------------------

def load_or_recompute(n_tokens, kv_bytes_per_token_: float, bandwidth_bytes_per_s: float, recompute_s,
                      latency_s: float = 0.0):
    """Load ``n_tokens`` of cached KV from a tier, or recompute them: whichever is faster.

    load_s = latency + n_tokens x KV bytes per token / bandwidth; the engine loads when load_s < recompute_s.
    Llama-3-8B in bf16 holds 131,072 B per token; 10,000 tokens over PCIe 5.0 x16 (64 GB/s) load in
    10,000 x 131,072 / 64e9 = 20.5 ms, against 168 ms to prefill them on an H100 SXM (``prefill_time``,
    LM head on the last token): load. Over a 0.5 GB/s link the load takes 2.6 s: recompute.

    Args:
        n_tokens: scalar or array, tokens found in the tier (>= 0).
        kv_bytes_per_token_: KV bytes per token (``calc.kv_bytes_per_token``).
        bandwidth_bytes_per_s: the tier's link speed (> 0).
        recompute_s: scalar or array (broadcast), prefill seconds of those tokens.
        latency_s: fixed cost per load (applies when n_tokens > 0).

    Returns:
        (load: bool array, seconds: float array): whether each is loaded, and the time it takes either way.

    Raises:
        ValueError: a bandwidth <= 0, negative tokens or times.
    """
    n = np.asarray(n_tokens, dtype=float)
    rec = np.asarray(recompute_s, dtype=float)
    check_positive_number(bandwidth_bytes_per_s, "bandwidth_bytes_per_s")
    check_nonneg_number(latency_s, "latency_s")
    if np.any(n < 0) or np.any(rec < 0):
        raise ValueError("tokens and recompute times must be >= 0")
    load_s = np.where(n > 0, latency_s + n * kv_bytes_per_token_ / bandwidth_bytes_per_s, 0.0)
    load = load_s < rec
    return load, np.where(load, load_s, rec)


def prefill_curve(model, accelerator, max_tokens: int, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                  tp: int = 1, points: int = 40):
    """T(L): prefill seconds of an L-token prompt (``calc.prefill_time``, LM head on the last token only, as
    engines run it) at ``points`` lengths from 1 to ``max_tokens``, log-spaced, for interpolation.

    Returns:
        (lengths int64, seconds float64) arrays of the same length.
    """
    top = max(2, check_positive_int(max_tokens, "max_tokens"))
    lengths = np.unique(np.geomspace(1, top, points).round().astype(np.int64))
    secs = np.array([prefill_time(model, accelerator, int(n), 1, weight_dtype, kv_dtype, tp=tp, logits="last").total_s
                     for n in lengths])
    return lengths, secs


@dataclass(frozen=True)
class ReplaySummary:
    """What the replay of a stream through the tiers gives.

    Fields:
        per_request: DataFrame, one row per request: arrival_s, input_tokens, output_tokens, reasoning_tokens,
            the tokens by ``SOURCES`` (computed, recomputed, gpu, cpu, ssd, remote: they add up to
            input_tokens), ttft_s (with the cache), ttft_no_cache_s, prefill_gpu_s (GPU seconds of
            prefill compute with the cache: computed and recomputed tokens).
        tier_names, capacity_blocks: the tiers replayed and their sizes in blocks.
        block_size, policy: as replayed.
    """

    per_request: pd.DataFrame
    tier_names: tuple
    capacity_blocks: tuple
    block_size: int
    policy: str

    def tokens_by_source(self) -> dict:
        """Prompt tokens over the whole stream by where they came from (``SOURCES``), as ints."""
        return {s: int(self.per_request[s].sum()) for s in SOURCES}

    def hit_rate(self) -> float:
        """Share of prompt tokens found in the cache, in any tier, loaded or recomputed (0..1)."""
        total = self.per_request["input_tokens"].sum()
        return float((total - self.per_request["computed"].sum()) / total) if total else 0.0

    def hit_rate_by_tier(self) -> dict:
        """Share of all prompt tokens found in each tier (0..1), whether it was then loaded or recomputed."""
        total = float(self.per_request["input_tokens"].sum()) or 1.0
        return {n: float(self.per_request[f"found_{n}"].sum()) / total for n in self.tier_names}

    def table(self) -> pd.DataFrame:
        """One row of totals and means, for the page's CSV: requests, tokens by source, hit rates, TTFT p50/p90."""
        d = self.per_request
        row = {"requests": len(d), "block_size": self.block_size, "policy": self.policy,
               **{f"capacity_blocks_{n}": c for n, c in zip(self.tier_names, self.capacity_blocks)},
               "prompt_tokens": int(d["input_tokens"].sum()), **{f"tokens_{s}": v for s, v in self.tokens_by_source().items()},
               "hit_rate": self.hit_rate(), **{f"hit_rate_{n}": v for n, v in self.hit_rate_by_tier().items()},
               "ttft_p50_s": float(d["ttft_s"].median()), "ttft_p90_s": float(d["ttft_s"].quantile(0.9)),
               "ttft_no_cache_p50_s": float(d["ttft_no_cache_s"].median()),
               "prefill_gpu_s": float(d["prefill_gpu_s"].sum()),
               "prefill_gpu_no_cache_s": float(d["ttft_no_cache_s"].sum())}
        return pd.DataFrame([row])


def replay_ttft(stream: RequestStream, tiers, model, accelerator, policy: str = "demote", weight_dtype: str = "bf16",
                kv_dtype: str = "bf16", tp: int = 1, counts=None) -> ReplaySummary:
    """Replay ``stream`` through ``tiers`` and turn the hits into tokens by source and TTFT.

    Per request with L prompt tokens and h of them found (the cached prefix; at most L - 1, since the
    last prompt token is always computed to give the first output token): each tier's found tokens
    n_t are used in place (GPU), loaded, or recomputed, by ``load_or_recompute`` with the recompute
    time n_t x T(h) / h; the rest of the prompt is prefilled with the prefix in cache, max(T(L) - T(h),
    T(1)) seconds (the roofline difference keeps the suffix's attention over the whole prefix). TTFT =
    the tiers' times + that; without the cache TTFT = T(L). T is ``prefill_curve``, interpolated.

    Args:
        stream: the requests (``calc.traces`` or ``calc.workload``).
        tiers: list of ``Tier``, fastest first; capacities are turned into blocks of the stream's block size.
        model, accelerator: what serves it (``calc.get_model``, ``calc.get_accelerator``); ``tp`` GPUs per replica.
        counts: a precomputed ``replay_blocks`` result for these tiers (skips the replay).

    Raises:
        ValueError: see ``replay_blocks``; a stream without requests.
    """
    if stream.n_requests == 0:
        raise ValueError("the stream has no request")
    kvb = float(kv_bytes_per_token(model, kv_dtype))
    caps = capacity_blocks(tiers, stream.block_size, kvb)
    if counts is None:
        counts = replay_blocks(stream, caps, policy)
    L = stream.input_tokens.astype(np.float64)
    found_tok = counts * stream.block_size
    found = np.minimum(found_tok.sum(axis=1), np.maximum(L - 1, 0))
    # trim the over-count (a partial last block, or the token always computed) from the slowest tiers first
    excess = found_tok.sum(axis=1) - found
    per_tier = found_tok.astype(np.float64)
    for t in range(len(tiers) - 1, -1, -1):
        cut = np.minimum(per_tier[:, t], excess)
        per_tier[:, t] -= cut
        excess = excess - cut
    lengths, secs = prefill_curve(model, accelerator, int(max(L.max(), 2)), weight_dtype, kv_dtype, tp)
    T = lambda x: np.interp(x, lengths, secs)  # noqa: E731
    t_full = T(np.maximum(L, 1))
    t_prefix = np.where(found > 0, T(np.maximum(found, 1)), 0.0)
    per_tok = np.where(found > 0, t_prefix / np.maximum(found, 1), 0.0)
    suffix_s = np.maximum(t_full - t_prefix, T(1.0))
    out = {"arrival_s": stream.arrival_s, "input_tokens": stream.input_tokens, "output_tokens": stream.output_tokens,
           "reasoning_tokens": stream.reasoning_tokens, "computed": (L - found).astype(np.int64),
           "recomputed": np.zeros(len(L), dtype=np.int64)}
    tier_s = np.zeros(len(L))
    recompute_gpu_s = np.zeros(len(L))
    for t, tier in enumerate(tiers):
        n = per_tier[:, t]
        out[f"found_{tier.name}"] = n.astype(np.int64)
        if tier.name == "gpu":
            out["gpu"] = n.astype(np.int64)
            continue
        load, secs_t = load_or_recompute(n, kvb, tier.bandwidth_bytes_per_s, n * per_tok, tier.latency_s)
        out[tier.name] = np.where(load, n, 0).astype(np.int64)
        out["recomputed"] = out["recomputed"] + np.where(load, 0, n).astype(np.int64)
        tier_s += secs_t
        recompute_gpu_s += np.where(load, 0.0, secs_t)
    for name in SOURCES:
        out.setdefault(name, np.zeros(len(L), dtype=np.int64))
    out["ttft_s"] = tier_s + suffix_s
    out["ttft_no_cache_s"] = t_full
    out["prefill_gpu_s"] = suffix_s + recompute_gpu_s
    return ReplaySummary(pd.DataFrame(out), tuple(t.name for t in tiers), tuple(caps), stream.block_size, policy)


def hit_rate_sweep(stream: RequestStream, tiers, kv_bytes_per_token_: float, vary: str = "cpu", sizes_bytes=None,
                   policy: str = "demote") -> pd.DataFrame:
    """Hit rate against the size of one tier, the others fixed: how many GB of CPU memory buy how many points.

    Args:
        vary: the tier whose capacity moves ("cpu" by default).
        sizes_bytes: capacities to replay (default: 0 and 6 log-spaced sizes from 1/64 of the bytes of every
            distinct block in the stream up to all of them, past which a larger tier cannot help).

    Returns:
        DataFrame: size_bytes, hit_rate (all tiers), and hit_rate_<tier> for each tier (shares of the prompt
        blocks found, prefix rule applied).

    Raises:
        ValueError: an unknown tier name; see ``replay_blocks``.
    """
    names = [t.name for t in tiers]
    if vary not in names:
        raise ValueError(f"vary must be one of the tiers {', '.join(names)}, got {vary!r}")
    block_bytes = stream.block_size * check_positive_number(kv_bytes_per_token_, "kv_bytes_per_token")
    if sizes_bytes is None:
        distinct = len(np.unique(np.concatenate([stream.block_ids, stream.stored_ids])))
        top = max(distinct * block_bytes, block_bytes * 8)
        sizes_bytes = np.concatenate([[0.0], np.geomspace(top / 64, top, 6)])
    k = names.index(vary)
    total = float(len(stream.block_ids)) or 1.0
    configs = []
    for size in sizes_bytes:
        caps = capacity_blocks(tiers, stream.block_size, kv_bytes_per_token_)
        caps[k] = int(size // block_bytes)
        configs.append(caps)
    rows = []
    for size, counts in zip(sizes_bytes, replay_many(stream, configs, policy)):
        by = counts.sum(axis=0) / total
        rows.append({"size_bytes": float(size), "hit_rate": float(by.sum()),
                     **{f"hit_rate_{n}": float(v) for n, v in zip(names, by)}})
    return pd.DataFrame(rows)


def ttl_hits(stream: RequestStream, ttl_s: float, min_tokens: int = 0) -> np.ndarray:
    """Prompt tokens of each request an API provider's cache would find: a block is kept for ``ttl_s`` after
    its last use (a hit refreshes it, as Anthropic's 5-minute cache and OpenAI's in-memory retention of
    5-10 minutes do), capacity unbounded; prefix rule; a hit shorter than ``min_tokens`` (the provider's
    minimum cacheable prompt, 1,024 tokens for OpenAI) counts as none. Capped at input_tokens.

    Vectorised: each block's previous use is found by sorting (block, time).

    Returns:
        int64 array (R,): cached prompt tokens per request.

    Raises:
        ValueError: a negative ttl or min_tokens.
    """
    ttl = check_nonneg_number(ttl_s, "ttl_s")
    check_nonneg_number(min_tokens, "min_tokens")
    r_n = stream.n_requests
    lens = np.diff(stream.block_offsets)
    req = np.repeat(np.arange(r_n), lens)
    blocks = stream.block_ids
    t = stream.arrival_s[req]
    order = np.lexsort((np.arange(len(blocks)), blocks))  # by block, then by position in the stream
    sb, st = blocks[order], t[order]
    prev_t = np.full(len(blocks), -np.inf)
    same = np.zeros(len(blocks), dtype=bool)
    same[1:] = sb[1:] == sb[:-1]
    prev_sorted = np.where(same, np.concatenate([[-np.inf], st[:-1]]), -np.inf)
    prev_t[order] = prev_sorted
    # a block repeated inside one request is not a hit on itself: its previous use must be an earlier request
    prev_req = np.full(len(blocks), -1)
    prev_req_sorted = np.where(same, np.concatenate([[-1], req[order][:-1]]), -1)
    prev_req[order] = prev_req_sorted
    ok = (t - prev_t <= ttl) & (prev_req >= 0) & (prev_req < req)
    pos = np.arange(len(blocks)) - np.repeat(stream.block_offsets[:-1], lens)
    first_miss = np.where(ok, np.iinfo(np.int64).max, pos)
    hit_blocks = lens.copy()
    nz = lens > 0
    if nz.any():
        mins = np.minimum.reduceat(first_miss, stream.block_offsets[:-1][nz])
        hit_blocks[nz] = np.minimum(mins, lens[nz])
    tokens = np.minimum(hit_blocks * stream.block_size, np.maximum(stream.input_tokens - 1, 0))
    return np.where(tokens >= min_tokens, tokens, 0).astype(np.int64)
