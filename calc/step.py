"""The public step times and memory of a deployment: one accelerator, or one replica of a layout.

``decode_step_time``, ``prefill_time``, ``ttft``, ``decode_sweep``, ``memory_budget`` and ``max_batch``
take ``tp``, ``pp``, ``ep``: at 1, 1, 1 the single-accelerator roofline (``calc.roofline``,
``calc.memory``); above, one replica spread over accelerators (``calc.parallel``).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .checks import check_nonneg_number, check_positive_int
from .hardware import Accelerator
from .kv import decode_kv_read_bytes_array, kv_cache_bytes, kv_cache_bytes_array
from .memory import (DEFAULT_GPU_MEMORY_UTILIZATION, MemoryBudget, accelerators_needed, check_embedding, weight_bytes,
                     with_capacity)
from .models import ModelConfig
from .parallel import (Layout, check_layout, gpu_memory, layout_sweep_arrays, make_layout, max_batch_per_replica,
                       parallel_decode_step, parallel_prefill)
from .roofline import StepTime, batch_grid, bound_label, check_logits, decode_arrays, prefill_arrays


def _layout_of(model: ModelConfig, tp: int, pp: int, ep: int, layout: Layout | None) -> Layout | None:
    """The checked layout of a public call: ``layout`` when given (then tp, pp, ep must be left at 1 or agree
    with it), else ``make_layout(model, tp, pp, ep)``; None for one accelerator (the single-GPU path).

    Raises:
        ValueError: a layout the engines refuse (``calc.parallel.check_layout``), or tp/pp/ep that contradict
            ``layout``.
    """
    if layout is not None:
        if not isinstance(layout, Layout):
            raise ValueError(f"layout must be a calc.parallel.Layout, got {type(layout).__name__}")
        if (tp, pp, ep) != (1, 1, 1) and (tp, pp, ep) != (layout.tp, layout.pp, layout.ep):
            raise ValueError(f"tp, pp, ep ({tp}, {pp}, {ep}) contradict the layout given ({layout.label}); pass one")
        check_layout(model, layout)
        return None if layout.is_single else layout
    if (tp, pp, ep) == (1, 1, 1):
        return None
    return make_layout(model, tp, pp, ep)


def memory_budget(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
                  weight_dtype: str = "bf16", kv_dtype: str = "bf16", reserve_bytes: float = 0.0,
                  sliding: str = "cap", mla: str = "latent", tp: int = 1, pp: int = 1, ep: int = 1,
                  memory: str = "datasheet",
                  gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
                  layout: Layout | None = None) -> MemoryBudget:
    """Weights + KV cache of ``batch`` sequences of ``context_len`` tokens + reserve, against capacity.

    ``memory``: which capacity (``capacity_bytes``): "datasheet" (default), "driver" or "engine"
    (``gpu_memory_utilization`` of the driver's total); capacity_bytes of the result is that figure.

    With ``tp``, ``pp``, ``ep`` above 1, the bytes on one accelerator of that layout's most loaded stage
    against one accelerator's capacity (``calc.parallel.gpu_memory``); n_accelerators is then the layout's
    GPUs. ``layout``: a ``calc.parallel.Layout`` instead of tp/pp/ep (redundant experts, the engine's
    pipeline split or one by hand). Every layout is checked as the engines check it (``check_layout``).

    The inference course, week 11, step 2: on an 80 GB H100, after Llama-3-8B's weights, room for about 59 sequences of 8k.
    ``kv_bytes`` includes each sequence's constant per-sequence state (Mamba, Gated DeltaNet,
    lightning layers), as ``kv_cache_bytes`` does.

    Raises:
        ValueError: invalid sizes or dtypes; a reserve at least as large as the memory.
    """
    accelerator = with_capacity(accelerator, memory, gpu_memory_utilization)
    lay = _layout_of(model, tp, pp, ep, layout)
    if lay is not None:
        g = gpu_memory(model, accelerator, context_len, batch, lay, weight_dtype, kv_dtype, reserve_bytes, sliding, mla)
        return MemoryBudget(g.weights_bytes, g.kv_bytes + g.state_bytes, g.reserve_bytes, g.total_bytes, g.capacity_bytes,
                            g.free_bytes, g.fits, lay.gpus_per_replica)
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    w = weight_bytes(model, weight_dtype)
    kv = kv_cache_bytes(model, context_len, batch, kv_dtype, sliding, mla)
    total = w + kv + reserve
    cap = accelerator.memory_bytes
    return MemoryBudget(w, kv, reserve, total, cap, cap - total, total <= cap,
                        accelerators_needed(w + kv, cap, reserve))


def max_batch(model: ModelConfig, accelerator: Accelerator, context_len: int, weight_dtype: str = "bf16",
              kv_dtype: str = "bf16", reserve_bytes: float = 0, sliding: str = "cap", mla: str = "latent",
              tp: int = 1, pp: int = 1, ep: int = 1, memory: str = "datasheet",
              gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION, layout: Layout | None = None) -> int:
    """Largest number of sequences of ``context_len`` tokens whose cache fits beside the weights.

    ``memory``: the capacity convention of ``capacity_bytes`` ("datasheet" by default, the course's;
    "driver"; "engine" with ``gpu_memory_utilization``). Llama-3-8B at 8K on an H100 SXM: 59, 64
    and 56 sequences.

    With ``tp``, ``pp``, ``ep`` above 1: sequences per replica whose per-GPU share fits on every GPU
    (``calc.parallel.max_batch_per_replica``: the most loaded stage sets it). ``layout``: a
    ``calc.parallel.Layout`` instead of tp/pp/ep, as in ``memory_budget``.

    ``floor((memory - weights - reserve) / KV per sequence)``, 0 when the weights alone do not fit.
    KV per sequence is ``kv_cache_bytes``: the tokens each layer holds plus the constant state of
    the Mamba / Gated DeltaNet / lightning layers (``calc.layers``).
    The inference course, week 11, step 4: Llama-3-8B at 8k on an H100 SXM: 59 in bf16, 134 with int8 weights and cache.
    The inference course, week 11, napkin problem 2: a 13B model (L=40, K=8, H=128) at 4k with 6 GB reserved: 71.

    Raises:
        ValueError: invalid context, dtypes or reserve.
    """
    accelerator = with_capacity(accelerator, memory, gpu_memory_utilization)
    lay = _layout_of(model, tp, pp, ep, layout)
    if lay is not None:
        return max_batch_per_replica(model, accelerator, context_len, lay, weight_dtype, kv_dtype, reserve_bytes,
                                     sliding, mla)
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    free = accelerator.memory_bytes - weight_bytes(model, weight_dtype) - reserve
    per_seq = kv_cache_bytes(model, context_len, 1, kv_dtype, sliding, mla)
    if free <= 0:
        return 0
    return int(math.floor(free / per_seq + 1e-9))


def decode_step_time(model: ModelConfig, accelerator: Accelerator, batch: int, context_len: int,
                     weight_dtype: str = "bf16", kv_dtype: str = "bf16", query_tokens: int = 1,
                     sliding: str = "cap", mla: str = "latent", tp: int = 1, pp: int = 1, ep: int = 1,
                     interconnect=None, embedding: str = "gather", layout: Layout | None = None) -> StepTime:
    """Lower bound on one decode step of ``batch`` sequences with ``context_len`` cached tokens.

    With ``tp``, ``pp``, ``ep`` above 1 the step is that of one replica spread over accelerators
    (``calc.parallel.parallel_decode_step``: each GPU reads its share, plus the collectives over
    ``interconnect``, the accelerator's own by default); at 1, 1, 1 the single-GPU answer below. ``layout``: a
    ``calc.parallel.Layout`` instead of tp/pp/ep (redundant experts, the pipeline split), checked as the
    engines check it.

    ``total_s = B*KV/W + max(weight_bytes_read/W, 2*N_active*B*T/P)`` (the inference course, week 11, step 4), T =
    ``query_tokens`` (1 for plain decode; gamma + 1 when a speculative step verifies gamma drafts).
    MoE models read only the experts the batch touches. Attention FLOPs are left out, as in the course.
    The cache term is what a step moves (``calc.kv.decode_kv_read_bytes_array``): each constant
    per-sequence state (Mamba, Gated DeltaNet) is read and written, and DeepSeek-V3.2's sparse
    attention reads only its top-k latent entries while its indexer reads every key.

    ``embedding="gather"`` (default): the input embedding is a lookup; the step reads the B*T rows it
    needs, not the table, and does no matmul with it (``weight_bytes_read``, ``matmul_params``).
    ``embedding="table"``: the course's napkin, every parameter read every step. Llama-3-8B on an
    H100 SXM at 8k, napkin: B=1 5.1 ms (196 tok/s), B=32 15.1 ms (2,126 tok/s); gathered, the
    1.05 GB untied input table is not read: B=1 4.8 ms.

    Returns:
        StepTime (seconds; tokens_per_s = B / total_s, or B*T / total_s when T > 1).

    Raises:
        ValueError: non-positive or non-integer batch/context/query_tokens; unknown dtype.
    """
    lay = _layout_of(model, tp, pp, ep, layout)
    if lay is not None:
        return parallel_decode_step(model, accelerator, batch, context_len, lay, weight_dtype, kv_dtype, query_tokens,
                                    interconnect, sliding=sliding, mla=mla, embedding=embedding)
    b = check_positive_int(batch, "batch")
    s = check_positive_int(context_len, "context_len")
    t = check_positive_int(query_tokens, "query_tokens")
    a = decode_arrays(model, accelerator, b, s, weight_dtype, kv_dtype, t, sliding, mla, embedding)
    return StepTime(float(a["weights_s"]), float(a["kv_s"]), float(a["compute_s"]), float(a["total_s"]),
                    float(a["tokens_per_s"]), float(a["flops"]), float(a["bytes"]), b, t)


def prefill_time(model: ModelConfig, accelerator: Accelerator, prompt_len: int, batch: int = 1,
                 weight_dtype: str = "bf16", kv_dtype: str = "bf16", sliding: str = "cap",
                 mla: str = "latent", tp: int = 1, pp: int = 1, ep: int = 1, interconnect=None,
                 embedding: str = "gather", logits: str = "all", layout: Layout | None = None) -> StepTime:
    """Lower bound on the prefill of ``batch`` prompts of ``prompt_len`` tokens, in one pass.

    ``tp``, ``pp``, ``ep`` above 1: one replica over several accelerators
    (``calc.parallel.parallel_prefill``, communication in ``comm_s``).  ``layout``: a ``calc.parallel.Layout`` instead.

    The roofline with T = prompt tokens (DESIGN.md; CS336 lecture 10 (Inference) "The KV cache, and the two regimes"):
    compute = ``2*N_active*B*T`` + causal attention FLOPs (``attention_flops``); bytes = weights read
    (MoE: experts touched by B*T tokens) + the KV cache written; ``total_s = kv_s + max(weights_s,
    compute_s)``. Prefill of a long prompt is compute-bound: its intensity is about B*T.
    ``embedding="gather"`` (default): no matmul and only B*T rows read for an untied input embedding
    (N_active less V*D in the FLOPs); ``"table"``: the course's napkin, 2*N_active*B*T.
    ``logits="all"`` (default, the course's 2*N*B*T): the LM head multiplies every prompt token;
    ``"last"``: only each sequence's last one, as vLLM and SGLang do (``head_flops_skipped``: 2*V*D*B*(T-1)
    FLOPs fewer; the head's weights are read either way). Llama-3-8B on an H100 SXM at T = 8,192, gathered
    embedding: 143 ms with "all", 134 ms with "last".

    Returns:
        StepTime with tokens_per_s = B*T / total_s (prompt tokens processed per second).

    Raises:
        ValueError: non-positive or non-integer prompt_len/batch; unknown dtype, embedding or logits mode.
    """
    check_logits(logits)
    lay = _layout_of(model, tp, pp, ep, layout)
    if lay is not None:
        return parallel_prefill(model, accelerator, prompt_len, batch, lay, weight_dtype, kv_dtype, interconnect,
                                sliding, mla, embedding=embedding, logits=logits)
    t = check_positive_int(prompt_len, "prompt_len")
    b = check_positive_int(batch, "batch")
    check_embedding(embedding)
    a = prefill_arrays(model, accelerator, t, b, weight_dtype, kv_dtype, sliding, mla, embedding, logits)
    return StepTime(float(a["weights_s"]), float(a["kv_s"]), float(a["compute_s"]), float(a["total_s"]),
                    float(a["tokens_per_s"]), float(a["flops"]), float(a["bytes"]), b, t)


def ttft(model: ModelConfig, accelerator: Accelerator, prompt_len: int, batch: int = 1, queue_s: float = 0.0,
         weight_dtype: str = "bf16", kv_dtype: str = "bf16", embedding: str = "gather", logits: str = "all") -> float:
    """Time to first token in seconds: queueing + prefill (the inference course, week 11, step 3, "Metrics").
    ``embedding`` and ``logits`` (LM head on every prompt token, or the last only): as ``prefill_time``.

    Raises:
        ValueError: negative queue time or invalid prefill arguments.
    """
    q = check_nonneg_number(queue_s, "queue_s")
    return q + prefill_time(model, accelerator, prompt_len, batch, weight_dtype, kv_dtype,
                            embedding=embedding, logits=logits).total_s


def throughput_ceiling_tokens_per_s(model: ModelConfig, accelerator: Accelerator, context_len: int,
                                    kv_dtype: str = "bf16") -> float:
    """Decode throughput as B grows without bound: W / KV per sequence (the inference course, week 11, step 4: ~3,120 tok/s
    for Llama-3-8B at 8k on an H100). Each extra sequence adds its own cache read and one token; the
    bytes a step moves per sequence are ``calc.kv.decode_kv_read_bytes_array`` (constant states read and
    written, DSA's top-k)."""
    s = check_positive_int(context_len, "context_len")
    return accelerator.bandwidth_bytes_per_s / float(decode_kv_read_bytes_array(model, s, 1, kv_dtype))


def decode_sweep(model: ModelConfig, accelerator: Accelerator, context_len: int, batches=None,
                 weight_dtype: str = "bf16", kv_dtype: str = "bf16", reserve_bytes: float = 0.0,
                 price_per_hour_usd: float | None = None, tp: int = 1, pp: int = 1, ep: int = 1,
                 interconnect=None, embedding: str = "gather") -> pd.DataFrame:
    """Decode steps for every batch size at once (one numpy evaluation, no Python loop).

    With ``tp``, ``pp``, ``ep`` above 1: batch per replica, memory and fit per GPU, tokens_per_s per
    replica, a comm_s column (``calc.parallel``); the price is then per GPU, times the replica's GPUs.

    Args:
        batches: 1-D array of batch sizes; default every B in 1 .. max(1, memory ceiling) up to
            ``SWEEP_DENSE_BATCHES``, and above that a geometric grid of about
            ``SWEEP_MAX_POINTS`` batches ending at the ceiling (a tiny model on a large GPU has a
            ceiling in the millions: one row per batch would cost seconds and gigabytes).
        embedding: "gather" (default) or "table" (the course's napkin), as in ``decode_step_time``.

    Returns:
        DataFrame, one row per batch: batch, weights_s, kv_s, compute_s, total_s (= TPOT),
        tokens_per_s, memory_bytes (weights + held cache ``kv_cache_bytes`` + reserve), fits (B within
        ``calc.max_batch``), usd_per_million (NaN without a price), bound ("memory"/"compute", as ``StepTime.bound``).

    Raises:
        ValueError: invalid context, dtypes, reserve or batch values.
    """
    s = check_positive_int(context_len, "context_len")
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    if (tp, pp, ep) != (1, 1, 1):
        b, a, mem, _ = layout_sweep_arrays(model, accelerator, batches, s, tp, pp, ep, weight_dtype, kv_dtype,
                                           interconnect, reserve, embedding)
        gpus = max(tp, ep) * pp
        df = pd.DataFrame({"batch": b.astype(int), "weights_s": a["weights_s"], "kv_s": a["kv_s"],
                           "compute_s": a["compute_s"], "comm_s": a["comm_s"], "total_s": a["total_s"],
                           "tokens_per_s": a["tokens_per_s"], "memory_bytes": mem + reserve,
                           "fits": mem + reserve <= accelerator.memory_bytes})
        df["usd_per_million"] = (np.nan if price_per_hour_usd is None
                                 else gpus * price_per_hour_usd / (df["tokens_per_s"] * 3600.0) * 1e6)
        df["bound"] = bound_label(a["compute_s"], a["weights_s"] + a["kv_s"])
        return df
    ceiling = max_batch(model, accelerator, s, weight_dtype, kv_dtype, reserve)
    if batches is None:
        batches = batch_grid(ceiling)
    b = np.asarray(batches)
    if b.ndim != 1 or b.size == 0 or np.any(b < 1) or np.any(b != np.floor(b)):
        raise ValueError("batches must be a non-empty 1-D array of positive integers")
    check_embedding(embedding)
    a = decode_arrays(model, accelerator, b, s, weight_dtype, kv_dtype, embedding=embedding)
    # Memory holds the cache (kv_cache_bytes: each constant state once), not what a step moves
    # (a["kv_bytes"] reads and writes each state, and DSA reads only its top-k); a batch fits when it
    # is within calc.max_batch, the one definition of the memory ceiling.
    mem = weight_bytes(model, weight_dtype) + kv_cache_bytes_array(model, s, b, kv_dtype) + reserve
    df = pd.DataFrame({
        "batch": b.astype(int), "weights_s": a["weights_s"], "kv_s": a["kv_s"], "compute_s": a["compute_s"],
        "total_s": a["total_s"], "tokens_per_s": a["tokens_per_s"], "memory_bytes": mem,
        "fits": b <= ceiling,
    })
    if price_per_hour_usd is not None:
        df["usd_per_million"] = price_per_hour_usd / (df["tokens_per_s"] * 3600.0) * 1e6
    else:
        df["usd_per_million"] = np.nan
    df["bound"] = bound_label(a["compute_s"], a["weights_s"] + a["kv_s"])
    return df
