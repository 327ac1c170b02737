"""Dollars: USD per million tokens, the latency-cost Pareto front, TPOT targets, prefix caching."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .checks import check_fraction, check_nonneg_int, check_nonneg_number, check_positive_int, check_positive_number
from .hardware import Accelerator
from .kv import kv_bytes_per_token
from .step import max_batch as _max_batch
from .models import ModelConfig
from .roofline import batch_grid
from .step import decode_sweep


def cost_per_million(tokens_per_s, price_per_hour_usd):
    """USD per 1M tokens from a throughput and an hourly price.

    ``price / (tokens_per_s * 3600) * 1e6`` (the inference course, week 11, step 4, "The price of a token"). At $3/h:
    196 tok/s -> $4.26; 2,126 tok/s -> $0.39. Accepts numpy arrays of throughputs.

    Raises:
        ValueError: non-positive throughput or negative price.
    """
    price = check_nonneg_number(price_per_hour_usd, "price_per_hour_usd")
    t = np.asarray(tokens_per_s, dtype=float)
    if t.size == 0 or np.any(~np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"tokens_per_s must be positive, got {tokens_per_s!r}")
    out = price / (t * 3600.0) * 1e6
    return float(out) if out.ndim == 0 else out


def pareto_front(model: ModelConfig, accelerator: Accelerator, context_len: int, price_per_hour_usd: float,
                 weight_dtype: str = "bf16", kv_dtype: str = "bf16", reserve_bytes: float = 0.0,
                 max_batch: int | None = None, include_batches=(), embedding: str = "gather") -> pd.DataFrame:
    """TPOT against USD per 1M output tokens for B = 1 .. memory ceiling (the inference course, week 11, step 4).

    Each batch size gives a pair (TPOT, price); ``pareto`` marks the pairs no other batch beats on
    both (cheaper and faster). Computed in one vectorised sweep.

    Args:
        max_batch: cap on B (default: the memory ceiling, at least 1). Without it, batches above 1,024
            follow the bounded grid of ``decode_sweep`` (about 2,000 rows at most).
        include_batches: batches to add to the default grid (e.g. the ones a TPOT target picks).
        embedding: "gather" (default) or "table" (the course's napkin), as in ``decode_step_time``.

    Returns:
        DataFrame with the columns of ``decode_sweep`` plus tpot_s, tokens_per_s_per_user and pareto.

    Raises:
        ValueError: invalid sizes, dtypes or price.
    """
    check_nonneg_number(price_per_hour_usd, "price_per_hour_usd")
    if max_batch is not None:
        batches = np.arange(1, check_positive_int(max_batch, "max_batch") + 1)
    else:
        ceiling = _max_batch(model, accelerator, context_len, weight_dtype, kv_dtype, reserve_bytes)
        extra = [check_positive_int(b, "include_batches") for b in include_batches]
        batches = np.union1d(batch_grid(ceiling), [b for b in extra if b <= ceiling]).astype(np.int64)
    df = decode_sweep(model, accelerator, context_len, batches, weight_dtype, kv_dtype, reserve_bytes,
                      price_per_hour_usd, embedding=embedding)
    df["tpot_s"] = df["total_s"]
    df["tokens_per_s_per_user"] = 1.0 / df["total_s"]
    # Sorted by TPOT (which rises with B), a point is on the front when it is cheaper than every
    # faster point.
    order = np.argsort(df["tpot_s"].to_numpy(), kind="stable")
    cost = df["usd_per_million"].to_numpy()[order]
    best_before = np.concatenate([[np.inf], np.minimum.accumulate(cost)[:-1]])
    on_front = np.empty(len(df), dtype=bool)
    on_front[order] = cost < best_before
    df["pareto"] = on_front
    return df


def max_batch_for_tpot(model: ModelConfig, accelerator: Accelerator, context_len: int, tpot_target_s: float,
                       weight_dtype: str = "bf16", kv_dtype: str = "bf16", reserve_bytes: float = 0.0,
                       embedding: str = "gather") -> int:
    """Largest B (within the memory ceiling) whose decode step meets ``tpot_target_s``; 0 if none.

    The inference course, week 11, step 4: TPOT <= 10 ms for Llama-3-8B at 8k on an H100 gives B = 16 (9.9 ms,
    $0.52 at $3/h) with the course's ``embedding="table"``.

    Raises:
        ValueError: non-positive target; invalid sizes or dtypes.
    """
    target = check_positive_number(tpot_target_s, "tpot_target_s")
    ceiling = _max_batch(model, accelerator, context_len, weight_dtype, kv_dtype, reserve_bytes)

    def tpot(b: int) -> float:
        return float(decode_sweep(model, accelerator, context_len, np.array([b]), weight_dtype, kv_dtype,
                                  reserve_bytes, embedding=embedding)["total_s"].iloc[0])

    # The step time grows with B (more cache to read, more FLOPs), so the largest B meeting the
    # target is found by bisection over 1 .. ceiling: ~log2(ceiling) evaluations, not one per batch.
    if ceiling < 1 or tpot(1) > target:
        return 0
    lo, hi = 1, ceiling  # tpot(lo) <= target
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tpot(mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return lo


def replicas_needed(concurrency: int, batch_per_replica: int) -> int:
    """Replicas (model copies) to serve ``concurrency`` simultaneous streams at ``batch_per_replica``
    each: ``ceil(concurrency / B)`` (CS336 lecture 10, Inference: replicas scale throughput at identical latency).

    Raises:
        ValueError: negative concurrency or non-positive batch.
    """
    c = check_nonneg_int(concurrency, "concurrency")
    b = check_positive_int(batch_per_replica, "batch_per_replica")
    return math.ceil(c / b)


@dataclass(frozen=True)
class PrefixCacheSavings:
    """Prefill tokens and KV bytes for ``n_requests`` sharing a prefix, without and with caching.

    Fields: prefill_tokens_without, prefill_tokens_with, cache_bytes_without, cache_bytes_with,
    prefill_saved_fraction, cache_saved_fraction.
    """

    prefill_tokens_without: float
    prefill_tokens_with: float
    cache_bytes_without: float
    cache_bytes_with: float

    @property
    def prefill_saved_fraction(self) -> float:
        """Share of prefill tokens the cache avoids."""
        return 1 - self.prefill_tokens_with / self.prefill_tokens_without if self.prefill_tokens_without else 0.0

    @property
    def cache_saved_fraction(self) -> float:
        """Share of KV bytes the shared prefix avoids."""
        return 1 - self.cache_bytes_with / self.cache_bytes_without if self.cache_bytes_without else 0.0


def prefix_cache_savings(model: ModelConfig, n_requests: int, prefix_len: int, unique_len: int = 0,
                         hit_rate: float = 1.0, kv_dtype: str = "bf16") -> PrefixCacheSavings:
    """Prefix caching (SGLang's RadixAttention; vLLM's automatic prefix caching) for a shared prompt.

    Without caching every request prefills and stores prefix + unique tokens. With it, the first
    request computes the prefix and each of the other n - 1 finds it with probability ``hit_rate``
    (a miss recomputes and stores its own copy): expected prefill tokens
    ``P * (1 + (n - 1) * (1 - h)) + n * U`` and the same token count held in the cache.
    The inference course, week 11, step 2: 20 conversations sharing a 1,000-token system prompt on Llama-3-8B: prefill
    20,000 -> 1,000 tokens, cache 2.6 GB -> 131 MB.

    Raises:
        ValueError: non-positive n_requests, negative lengths, hit_rate outside [0, 1].
    """
    n = check_positive_int(n_requests, "n_requests")
    p = check_nonneg_int(prefix_len, "prefix_len")
    u = check_nonneg_int(unique_len, "unique_len")
    h = check_fraction(hit_rate, "hit_rate")
    per_token = kv_bytes_per_token(model, kv_dtype)
    without = n * (p + u)
    with_cache = p * (1 + (n - 1) * (1 - h)) + n * u
    return PrefixCacheSavings(float(without), float(with_cache), without * per_token, with_cache * per_token)
