"""Many accelerators: the step of a layout (tensor, pipeline and expert parallelism, replicas).

The step of one GPU follows the roofline of ``calc.roofline`` (the inference course, week 11, step 4) on its share:
``stage = kv_s + max(weights_s, compute_s) + collectives``; one decode token of a sequence takes
``max(m, PP)`` stage times (of the slowest stage) plus PP - 1 hops. Lower bounds, like the rest of
calc: communication is not overlapped with compute (engines overlap a little of it), and every layer of
a MoE model counts as a MoE layer in the collectives.

Layouts and which the engines accept: ``calc.layout``; what one GPU holds, per-GPU memory and the batch
ceiling: ``calc.gpu_share``. Collectives and links: ``calc.collectives``.

Planning on top of this step (frontier, capacity plan, disaggregated pools, which GPUs): ``calc.planning``.
"""
from __future__ import annotations

import math

import numpy as np

from .checks import check_nonneg_number, check_positive_int
from .collectives import group_all_reduce_s, group_all_to_all_s, link_for_group, resolve_interconnect
from .gpu_share import (_cache_per_gpu, max_batch_per_replica, memory_per_gpu_array, routed_expert_bytes,
                        stage_weight_bytes)
from .hardware import Accelerator
from .layout import Layout, check_layout, make_layout, stage_ranges
from .memory import expected_experts_touched, weight_bytes_read
from .models import ModelConfig
from .roofline import StepTime, attention_flops_array, batch_grid, head_flops_skipped, matmul_params


#: Bytes of one activation element exchanged between ranks (bf16, what engines send).
ACTIVATION_BYTES = 2


def _links(accelerator: Accelerator, layout: Layout, interconnect) -> tuple:
    """(the fabric of the TP/EP group, the link between stages), or Nones for one accelerator. The group's
    collectives span domains themselves (``calc.collectives.group_all_reduce_s``, which refuses a group beyond
    one domain of a fabric without a scale-out network); stages beyond one domain hand over on the scale-out
    network."""
    ic = resolve_interconnect(accelerator, interconnect)
    if layout.is_single:
        return None, None
    if ic is None:
        raise ValueError(f"{accelerator.name} is not ganged with others (no interconnect); use tp = pp = ep = 1 "
                         "or name an interconnect")
    between = link_for_group(ic, layout.gpus_per_replica) if layout.pp > 1 else ic
    return ic, between


def parallel_step_arrays(model: ModelConfig, accelerator: Accelerator, batch, context_len, layout: Layout,
                         weight_dtype: str = "bf16", kv_dtype: str = "bf16", query_tokens: int = 1,
                         interconnect=None, micro_batches=None, sliding: str = "cap", mla: str = "latent",
                         prefill: bool = False, past_len: int = 0, embedding: str = "gather",
                         logits: str = "all") -> dict:
    """One step of a replica under ``layout``, vectorised over numpy arrays of batch (and context).

    Per micro-batch of b = B / m sequences and per stage, one GPU:
    reads ``dense read / TP / PP + routed experts touched / width / PP`` weight bytes (MoE: the experts
    the micro-batch's b x T tokens touch, ``expected_experts_touched``), reads (decode) or writes
    (prefill) its KV share of ceil(b / attention_dp) sequences, does ``2 N_matmul b T / (width PP)``
    FLOPs (N_matmul: ``calc.roofline.matmul_params``; + causal attention for prefill), and waits for 2 all-reduces per layer (1 when EP > 1)
    of ``ceil(b / attention_dp) x T x D x 2`` bytes over TP ranks, plus (EP > 1) two all-to-alls per
    layer of ``b T / width x k x D x 2`` bytes over EP ranks. One token of a sequence takes
    ``cycle = max(m, PP)`` stage times plus PP - 1 stage-to-stage hops of ``b T D x 2`` bytes; when
    m < PP the stages idle ``(PP - m)`` stage times per cycle (the bubble). m defaults to min(PP, B)
    for decode (one micro-batch in flight per stage, as vLLM's virtual engines) and 1 for prefill.

    Args:
        batch: sequences per replica, int or 1-D array (broadcast with ``context_len``).
        query_tokens: T, tokens per sequence in the step (1 for decode, the prompt for prefill).
        prefill: True for a prefill pass (writes the KV of T tokens, adds causal attention FLOPs over
            ``past_len`` cached tokens); False for decode.
        embedding: "gather" (the input embedding is a lookup of the step's rows) or "table" (read whole,
            the course's napkin), as in ``calc.step.decode_step_time``.
        logits: prefill only: "all" (the LM head on every prompt token, the course) or "last" (engines), as
            in ``calc.step.prefill_time``.

    Returns:
        dict of arrays (seconds unless named): weights_s, kv_s, compute_s (each summed over the cycle),
        allreduce_s, alltoall_s, p2p_s, comm_s (their sum), bubble_s (idle time inside the total),
        total_s (= kv_s + max(weights_s, compute_s) + comm_s), tokens_per_s (per replica),
        tokens_per_s_per_gpu, flops, bytes (per GPU per cycle), micro_batches.

    Raises:
        ValueError: a layout the model or the accelerator's interconnect cannot take.
    """
    check_layout(model, layout)
    group, between = _links(accelerator, layout, interconnect)
    tp, pp, width, dp = layout.tp, layout.pp, layout.width, layout.attention_dp
    b = np.asarray(batch, dtype=float)
    t = float(query_tokens)
    if micro_batches is None:
        m = np.ones_like(b) if prefill else np.minimum(float(pp), b)
    else:
        m = np.minimum(float(check_positive_int(micro_batches, "micro_batches")), b)
    bm = b / m
    bw = accelerator.bandwidth_bytes_per_s
    # weights read per GPU per stage visit
    total_read = np.asarray(weight_bytes_read(model, bm * t, weight_dtype, embedding), dtype=float)
    expert = routed_expert_bytes(model, weight_dtype)
    routed_read = (expert * expected_experts_touched(model.n_experts, model.n_experts_per_token, bm * t)
                   if expert else np.zeros_like(bm))
    e = model.n_experts or 0
    copies = (e + layout.redundant_experts) / e if e else 1.0
    parts = stage_weight_bytes(model, layout, weight_dtype)
    whole = sum(d + r for d, r in parts)
    routed_whole = sum(r for _, r in parts)
    seqs = np.ceil(bm / dp)
    # FLOPs per replica per micro-batch
    flops = 2.0 * matmul_params(model, embedding) * bm * t
    if prefill:
        flops = flops - head_flops_skipped(model, t, bm, logits) + attention_flops_array(model, t, bm, past_len)
    d_bytes = model.d_model * ACTIVATION_BYTES
    p2p = np.zeros_like(bm)
    if pp > 1:
        p2p = (pp - 1) * (bm * t * d_bytes / between.bandwidth_bytes_per_s + between.latency_s)
    peak = accelerator.compute_flops(weight_dtype)
    best = None
    for (dense_i, routed_i), rng in zip(parts, stage_ranges(model, layout)):
        # weights read per GPU per visit of this stage: its share of the step's reads (dense by its bytes,
        # the routed experts touched by its experts), split over TP and the width (redundant copies read too)
        dense_frac = dense_i / (whole - routed_whole) if whole > routed_whole else 0.0
        routed_frac = routed_i / routed_whole if routed_whole else 0.0
        w_i = (total_read - routed_read) * dense_frac / tp + routed_read * routed_frac * copies / width
        kv_part, state_part, _ = _cache_per_gpu(model, context_len, seqs, layout, kv_dtype, sliding, mla,
                                                read=not prefill, stage=rng)
        kv_i = kv_part + state_part
        c_i = flops * ((dense_i + routed_i) / whole if whole else 1.0 / pp) / width
        layers = rng[1] - rng[0]
        ar = np.zeros_like(bm)
        a2a = np.zeros_like(bm)
        if tp > 1:
            per_layer = 1 if layout.ep > 1 else 2
            ar = layers * per_layer * group_all_reduce_s(seqs * t * d_bytes, tp, group)
        if layout.ep > 1:
            msg = bm * t / width * model.n_experts_per_token * d_bytes
            a2a = layers * 2 * group_all_to_all_s(msg, layout.ep, group)
        visit = kv_i / bw + np.maximum(w_i / bw, c_i / peak) + ar + a2a
        if best is None:
            best = dict(w=w_i, kv=kv_i, c=c_i, ar=ar, a2a=a2a, visit=visit)
        else:  # the pipeline runs at the pace of its slowest stage (element by element over the batch)
            slower = visit > best["visit"]
            best = {k: np.where(slower, v, best[k]) for k, v in
                    dict(w=w_i, kv=kv_i, c=c_i, ar=ar, a2a=a2a, visit=visit).items()}
    w_stage, kv_stage, c_stage = best["w"], best["kv"], best["c"]
    cycle = np.maximum(m, float(pp))
    weights_s = cycle * w_stage / bw
    kv_s = cycle * kv_stage / bw
    compute_s = cycle * c_stage / peak
    allreduce_s, alltoall_s = cycle * best["ar"], cycle * best["a2a"]
    comm_s = allreduce_s + alltoall_s + p2p
    total_s = kv_s + np.maximum(weights_s, compute_s) + comm_s
    stage_s = (kv_s + np.maximum(weights_s, compute_s) + allreduce_s + alltoall_s) / cycle
    bubble_s = (cycle - m) * stage_s
    tokens = b * t
    return dict(weights_s=weights_s, kv_s=kv_s, compute_s=compute_s, allreduce_s=allreduce_s,
                alltoall_s=alltoall_s, p2p_s=p2p, comm_s=comm_s, bubble_s=bubble_s, total_s=total_s,
                tokens_per_s=tokens / total_s, tokens_per_s_per_gpu=tokens / total_s / layout.gpus_per_replica,
                flops=cycle * c_stage, bytes=cycle * (w_stage + kv_stage), micro_batches=m,
                kv_bytes_per_gpu=kv_stage, weight_bytes_per_gpu=w_stage)


def _step_time(a: dict, batch: int, tokens: int):
    return StepTime(float(a["weights_s"]), float(a["kv_s"]), float(a["compute_s"]), float(a["total_s"]),
                    float(a["tokens_per_s"]), float(a["flops"]), float(a["bytes"]), batch, tokens,
                    comm_s=float(a["comm_s"]))


def parallel_decode_step(model: ModelConfig, accelerator: Accelerator, batch: int, context_len: int,
                         layout: Layout, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                         query_tokens: int = 1, interconnect=None, micro_batches=None, sliding: str = "cap",
                         mla: str = "latent", embedding: str = "gather"):
    """One decode step of ``batch`` sequences per replica under ``layout`` (``parallel_step_arrays``).

    Returns:
        StepTime with comm_s (all-reduces, all-to-alls, stage hops); tokens_per_s per replica.
        Llama-3.1-70B on 8 H100 SXM (NVLink 4) at B = 1, S = 8,192, the input table gathered: weights
        5.19 ms (1/8 of TP 1's 41.5 ms), all-reduces 160 x 14.06 us = 2.25 ms.

    Raises:
        ValueError: invalid sizes, dtypes or layout.
    """
    b = check_positive_int(batch, "batch")
    s = check_positive_int(context_len, "context_len")
    t = check_positive_int(query_tokens, "query_tokens")
    a = parallel_step_arrays(model, accelerator, b, s, layout, weight_dtype, kv_dtype, t, interconnect,
                             micro_batches, sliding, mla, embedding=embedding)
    return _step_time(a, b, t)


def parallel_prefill(model: ModelConfig, accelerator: Accelerator, prompt_len: int, batch: int,
                     layout: Layout, weight_dtype: str = "bf16", kv_dtype: str = "bf16", interconnect=None,
                     sliding: str = "cap", mla: str = "latent", past_len: int = 0, embedding: str = "gather",
                     logits: str = "all"):
    """Prefill of ``batch`` prompts of ``prompt_len`` new tokens (after ``past_len`` cached ones) under
    ``layout``: one micro-batch through PP stages (``parallel_step_arrays`` with prefill=True).

    Returns:
        StepTime with tokens_per_s = B x T / total_s and comm_s.

    Raises:
        ValueError: invalid sizes, dtypes or layout.
    """
    t = check_positive_int(prompt_len, "prompt_len")
    b = check_positive_int(batch, "batch")
    past = int(check_nonneg_number(past_len, "past_len"))
    a = parallel_step_arrays(model, accelerator, b, past + t, layout, weight_dtype, kv_dtype, t, interconnect,
                             None, sliding, mla, prefill=True, past_len=past, embedding=embedding, logits=logits)
    if past:  # the cache written is the new tokens', not the whole context's (the stage writing most)
        seqs = math.ceil(b / layout.attention_dp)
        written = max(float(sum(_cache_per_gpu(model, past + t, seqs, layout, kv_dtype, sliding, mla, stage=r)[:2])
                            - sum(_cache_per_gpu(model, past, seqs, layout, kv_dtype, sliding, mla, stage=r)[:2]))
                      for r in stage_ranges(model, layout))
        kv_s = layout.pp * written / accelerator.bandwidth_bytes_per_s
        a = dict(a, kv_s=kv_s, total_s=kv_s + np.maximum(a["weights_s"], a["compute_s"]) + a["comm_s"])
        a["tokens_per_s"] = b * t / a["total_s"]
    return _step_time(a, b, t)


def step_split(model: ModelConfig, accelerator: Accelerator, batch: int, context_len: int, layout: Layout,
               weight_dtype: str = "bf16", kv_dtype: str = "bf16", interconnect=None, embedding: str = "gather") -> dict:
    """A decode step split into parts that stack to its total (seconds), for a bar chart.

    ``weights_s``, ``kv_s``, ``compute_excess_s = max(0, compute_s - weights_s)``, ``allreduce_s``,
    ``alltoall_s``, ``p2p_s``; their sum is ``total_s``; ``bubble_s`` is the idle part of the pipeline
    inside those (not added again).

    Raises:
        ValueError: invalid sizes, dtypes or layout.
    """
    b = check_positive_int(batch, "batch")
    s = check_positive_int(context_len, "context_len")
    a = parallel_step_arrays(model, accelerator, b, s, layout, weight_dtype, kv_dtype, 1, interconnect,
                             embedding=embedding)
    out = {k: float(a[k]) for k in ("weights_s", "kv_s", "allreduce_s", "alltoall_s", "p2p_s", "bubble_s",
                                    "total_s", "tokens_per_s", "tokens_per_s_per_gpu")}
    out["compute_excess_s"] = max(0.0, float(a["compute_s"]) - float(a["weights_s"]))
    return out


def layout_sweep_arrays(model: ModelConfig, accelerator: Accelerator, batches, context_len: int, tp: int, pp: int,
                        ep: int, weight_dtype: str = "bf16", kv_dtype: str = "bf16", interconnect=None,
                        reserve_bytes: float = 0.0, embedding: str = "gather"):
    """(step arrays, memory per GPU array, ceiling) of a decode sweep under a layout, for
    ``calc.step.decode_sweep`` and ``calc.sweeps.decode_split``; ``batches=None`` sweeps 1..ceiling
    (on the bounded grid of ``calc.roofline.batch_grid``).

    Raises:
        ValueError: invalid layout for the model or the accelerator.
    """
    lay = make_layout(model, tp, pp, ep)
    ceiling = max_batch_per_replica(model, accelerator, context_len, lay, weight_dtype, kv_dtype, reserve_bytes)
    if batches is None:  # every B up to 1,024, a bounded geometric grid above (calc.roofline.batch_grid)

        b = batch_grid(ceiling)
    else:
        b = np.asarray(batches)
    a = parallel_step_arrays(model, accelerator, b, context_len, lay, weight_dtype, kv_dtype,
                             interconnect=interconnect, embedding=embedding)
    return b, a, memory_per_gpu_array(model, lay, b, context_len, weight_dtype, kv_dtype), ceiling
