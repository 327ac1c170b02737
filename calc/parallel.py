"""Many accelerators: tensor, pipeline and expert parallelism, replicas; what one GPU holds and the
step of a layout.

A replica of the model runs on ``gpus_per_replica = max(TP, EP) x PP`` accelerators:

- Tensor parallelism (TP; Shoeybi et al. 2019, "Megatron-LM", section 3): every matrix of a layer is
  split over TP ranks (attention by heads, the MLP by columns then rows), so each rank stores and
  reads 1/TP of the weights, and each layer ends its attention and its MLP with an all-reduce of
  the activations: two all-reduces per layer and step.
- Pipeline parallelism (PP; Huang et al. 2019, "GPipe", section 2.2): the layers are cut into PP
  stages of L/PP layers; the activations pass from stage to stage (point to point), and with m
  micro-batches a stage idles for a bubble of (PP - m) stage times in every cycle when m < PP.
- Expert parallelism (EP; Lepikhin et al. 2020, "GShard", section 2.2; DeepSeek-V3 report,
  section 3.4): the routed experts of a mixture-of-experts layer are spread over EP ranks; each
  MoE layer sends every token to the ranks of its experts and back (two all-to-alls). When EP > TP,
  attention runs data-parallel over EP / TP groups of TP ranks ("DP attention"), each holding the
  KV cache of its own sequences.
- Replicas (DP): independent copies; they multiply throughput and GPUs and change no per-GPU number.

What one GPU holds: the dense weights / (TP x PP), the routed experts / (max(TP, EP) x PP); of the KV
cache, ceil(K / TP) of the K heads of its sequences, on its L / PP layers: with TP > K every KV head
is stored TP / K times (Llama-3.1-70B, K = 8, at TP 16: twice). MLA's latent is not split by heads:
every TP rank holds the whole latent of its sequences (why engines serve DeepSeek with DP attention).

Collectives and links: ``calc.collectives``.

The step of one GPU follows the roofline of ``calc.roofline`` (the inference course, week 11, step 4) on its share:
``stage = kv_s + max(weights_s, compute_s) + collectives``; one decode token of a sequence takes
``max(m, PP)`` stage times plus PP - 1 hops. Lower bounds, like the rest of calc: communication is
not overlapped with compute (engines overlap a little of it), layers are split evenly over stages,
and every layer of a MoE model counts as a MoE layer.

Planning on top of this step (frontier, capacity plan, disaggregated pools, which GPUs): ``calc.planning``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .checks import check_nonneg_number, check_positive_int
from .collectives import all_to_all_s, link_for_group, resolve_interconnect, ring_all_reduce_s
from .dtypes import dtype_bytes
from .hardware import Accelerator
from .kv import MLA_CONVENTIONS, decode_kv_read_bytes_array, kv_bytes_per_token, kv_cache_bytes_array, kv_state_bytes
from .memory import expected_experts_touched, routed_expert_params, weight_bytes, weight_bytes_read
from .models import ModelConfig
from .roofline import StepTime, attention_flops_array, batch_grid, head_flops_skipped, matmul_params


#: Bytes of one activation element exchanged between ranks (bf16, what engines send).
ACTIVATION_BYTES = 2


@dataclass(frozen=True)
class Layout:
    """How a model is spread over accelerators.

    Fields:
        tp: tensor-parallel degree (ranks that split every matrix).
        pp: pipeline stages.
        ep: expert-parallel degree (ranks that split the routed experts; 1 for a dense model).
        replicas: independent copies (data parallelism).

    Derived: ``width = max(tp, ep)`` ranks per stage, ``attention_dp = width / tp`` attention groups
    (DP attention), ``gpus_per_replica = width x pp``, ``n_gpus = gpus_per_replica x replicas``.

    Raises:
        ValueError: a degree that is not a positive integer, or tp and ep that do not divide the
            larger of the two (engines need whole groups).
    """

    tp: int = 1
    pp: int = 1
    ep: int = 1
    replicas: int = 1

    def __post_init__(self):
        for f in ("tp", "pp", "ep", "replicas"):
            check_positive_int(getattr(self, f), f)
        if self.width % self.tp or self.width % self.ep:
            raise ValueError(f"tp ({self.tp}) and ep ({self.ep}) must divide the larger of the two "
                             "(each stage is whole groups of ranks)")

    @property
    def width(self) -> int:
        """Ranks per pipeline stage: max(tp, ep)."""
        return max(self.tp, self.ep)

    @property
    def attention_dp(self) -> int:
        """Attention groups per stage (data-parallel attention when ep > tp): width / tp."""
        return self.width // self.tp

    @property
    def gpus_per_replica(self) -> int:
        """Accelerators of one replica: width x pp."""
        return self.width * self.pp

    @property
    def n_gpus(self) -> int:
        """Accelerators of all replicas."""
        return self.gpus_per_replica * self.replicas

    @property
    def is_single(self) -> bool:
        """True for one accelerator per replica (today's single-GPU answers)."""
        return self.gpus_per_replica == 1

    @property
    def label(self) -> str:
        """Short name: "TP8", "TP4 PP2", "TP1 EP8" (replicas left out)."""
        out = f"TP{self.tp}" + (f" PP{self.pp}" if self.pp > 1 else "") + (f" EP{self.ep}" if self.ep > 1 else "")
        return out


def check_layout(model: ModelConfig, layout: Layout) -> Layout:
    """Validate ``layout`` for ``model`` and return it.

    Raises:
        ValueError: tp not dividing the query heads (a rank holds whole heads), pp above the layer
            count, ep > 1 for a dense model, or ep not dividing the routed experts.
    """
    if model.n_heads % layout.tp:
        raise ValueError(f"tp ({layout.tp}) must divide the {model.n_heads} query heads of {model.name}")
    if layout.pp > model.n_layers:
        raise ValueError(f"pp ({layout.pp}) cannot exceed the {model.n_layers} layers of {model.name}")
    if layout.ep > 1:
        if not model.is_moe:
            raise ValueError(f"ep > 1 needs a mixture-of-experts model; {model.name} is dense")
        if model.n_experts % layout.ep:
            raise ValueError(f"ep ({layout.ep}) must divide the {model.n_experts} routed experts of {model.name}")
    return layout


def make_layout(model: ModelConfig, tp: int = 1, pp: int = 1, ep: int = 1, replicas: int = 1) -> Layout:
    """``Layout(tp, pp, ep, replicas)`` checked against ``model`` (``check_layout``)."""
    return check_layout(model, Layout(tp, pp, ep, replicas))


def kv_share_per_gpu(model: ModelConfig, tp: int, mla: str = "latent") -> float:
    """Fraction of a sequence's KV cache (per layer) one TP rank stores.

    GQA/MHA/MQA: ``ceil(K / TP) / K`` (a rank holds whole KV heads; with TP > K each head is copied
    TP / K times: vLLM's and Megatron's rule). MLA with the latent cache: 1 (the latent c_KV is shared
    by all heads, so every rank holds all of it; DeepSeek-V2 report section 2.1). MLA expanded:
    ``ceil(N / TP) / N`` (per-head K and V). Llama-3.1-70B (K = 8): 1/8 at TP 8, 1/8 again at TP 16.

    Raises:
        ValueError: non-positive tp, unknown mla convention.
    """
    t = check_positive_int(tp, "tp")
    if mla not in MLA_CONVENTIONS:
        raise ValueError(f"mla must be one of {', '.join(MLA_CONVENTIONS)}; got {mla!r}")
    if model.attention == "mla":
        return 1.0 if mla == "latent" else math.ceil(model.n_heads / t) / model.n_heads
    return math.ceil(model.n_kv_heads / t) / model.n_kv_heads


def routed_expert_bytes(model: ModelConfig, weight_dtype: str = "bf16") -> float:
    """Bytes of one routed expert (all MoE layers): ``calc.memory.routed_expert_params`` x bytes,
    the rule of ``calc.memory.weight_bytes_read``; 0 for a dense model."""
    per = dtype_bytes(weight_dtype, "weight_dtype")
    return routed_expert_params(model) * per


def weight_bytes_per_gpu(model: ModelConfig, layout: Layout, weight_dtype: str = "bf16") -> float:
    """Weight bytes one accelerator stores: dense part / (TP x PP) + routed experts / (width x PP).

    Llama-3.1-70B in bf16 (141.1 GB): 70.55 GB at TP 2, 35.28 GB at TP 4, 17.64 GB at TP 8.
    """
    total = weight_bytes(model, weight_dtype)
    routed = routed_expert_bytes(model, weight_dtype) * (model.n_experts or 0)
    return (total - routed) / (layout.tp * layout.pp) + routed / (layout.width * layout.pp)


def kv_bytes_per_gpu_per_token(model: ModelConfig, layout: Layout, kv_dtype: str = "bf16",
                               mla: str = "latent") -> float:
    """KV bytes one accelerator stores per context token of one of its sequences (no windows applied).

    ``2 x ceil(K / TP) x H x L / PP x bytes`` (MLA latent: ``(d_c + d_h^R) x L / PP x bytes``).
    Llama-3.1-70B in bf16: 327,680 B per token on one GPU; 40,960 B at TP 8 (one KV head); 40,960 B
    at TP 16 as well (one head, stored on two ranks). DeepSeek-V3 at TP 8: the whole latent,
    61 x 576 x 2 = 70,272 B.
    """
    return kv_bytes_per_token(model, kv_dtype, mla) * kv_share_per_gpu(model, layout.tp, mla) / layout.pp


@dataclass(frozen=True)
class GpuMemory:
    """What one accelerator of a layout holds, in bytes.

    Fields:
        weights_bytes: its share of the weights.
        kv_bytes: attention KV cache of the sequences its attention group serves (its heads, its
            layers), the replicated part included.
        kv_replicated_bytes: the part of kv_bytes that is a copy of another rank's (TP > K, MLA latent).
        state_bytes: constant per-sequence state of linear-attention/Mamba layers (``calc.layers``),
            split 1/TP by its heads and over PP stages; 0 for a pure transformer.
        reserve_bytes: kept free (activations, CUDA graphs, fragmentation).
        total_bytes, capacity_bytes, free_bytes (capacity - total), fits.
        batch: sequences per replica; sequences_per_gpu: those whose cache this GPU holds.
    """

    weights_bytes: float
    kv_bytes: float
    kv_replicated_bytes: float
    state_bytes: float
    reserve_bytes: float
    total_bytes: float
    capacity_bytes: float
    free_bytes: float
    fits: bool
    batch: int
    sequences_per_gpu: int


def gpu_memory(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
               layout: Layout = Layout(), weight_dtype: str = "bf16", kv_dtype: str = "bf16",
               reserve_bytes: float = 0.0, sliding: str = "cap", mla: str = "latent") -> GpuMemory:
    """Memory of one accelerator of ``layout`` serving ``batch`` sequences of ``context_len`` tokens.

    Weights: ``weight_bytes_per_gpu``. KV: the attention group of a GPU serves ceil(B / attention_dp)
    sequences; of each it holds ``kv_share_per_gpu`` of the cache of L / PP layers (windows applied as
    in ``kv_cache_bytes``). The replicated part is the share above 1/TP. At TP = PP = EP = 1 this is
    ``memory_budget``'s answer.

    Raises:
        ValueError: invalid sizes, dtypes, layout or reserve.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    check_layout(model, layout)
    seqs = math.ceil(b / layout.attention_dp)
    kv, state, replicated = (float(x) for x in _cache_per_gpu(model, s, seqs, layout, kv_dtype, sliding, mla))
    w = weight_bytes_per_gpu(model, layout, weight_dtype)
    total = w + kv + state + reserve
    cap = accelerator.memory_bytes
    return GpuMemory(w, kv, replicated, state, reserve, total, cap, cap - total, total <= cap, b, seqs)


def max_batch_per_replica(model: ModelConfig, accelerator: Accelerator, context_len: int, layout: Layout,
                          weight_dtype: str = "bf16", kv_dtype: str = "bf16", reserve_bytes: float = 0.0,
                          sliding: str = "cap", mla: str = "latent") -> int:
    """Largest batch per replica whose per-GPU cache fits beside the per-GPU weights.

    ``floor((memory - weights per GPU - reserve) / KV per sequence per GPU) x attention_dp``; 0 when
    the weights alone do not fit. At TP = PP = EP = 1, ``calc.max_batch``.

    Raises:
        ValueError: invalid context, dtypes, layout or reserve.
    """
    s = check_positive_int(context_len, "context_len")
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    check_layout(model, layout)
    free = accelerator.memory_bytes - weight_bytes_per_gpu(model, layout, weight_dtype) - reserve
    if free <= 0:
        return 0
    kv, state, _ = _cache_per_gpu(model, s, 1, layout, kv_dtype, sliding, mla)
    per_seq = float(kv) + float(state)
    return int(math.floor(free / per_seq + 1e-9)) * layout.attention_dp


@lru_cache(maxsize=512)
def _per_sequence_cache(model: ModelConfig, context_len: float, kv_dtype: str, sliding: str, mla: str,
                        read: bool) -> tuple[float, float]:
    """(cache bytes, constant-state bytes) of one sequence at one context: held, or moved by a decode step
    (``read``: the state read and written back). Layout-independent, so computed once per plan."""
    fn = decode_kv_read_bytes_array if read else kv_cache_bytes_array
    return (float(fn(model, context_len, 1.0, kv_dtype, sliding, mla)),
            kv_state_bytes(model) * (2.0 if read else 1.0))


def _cache_per_gpu(model: ModelConfig, context_len, seqs, layout: Layout, kv_dtype: str, sliding: str, mla: str,
                   read: bool = False):
    """(attention KV bytes, constant-state bytes, replicated KV bytes) on one GPU for ``seqs`` sequences.

    The attention cache is split by KV heads (``kv_share_per_gpu``), the constant per-sequence state of
    linear/Mamba layers by its heads, 1/TP; both over PP stages. ``read=True``: what a decode step moves
    (``decode_kv_read_bytes_array``: the state is read and written back). Vectorised over seqs/context.
    """
    n = np.asarray(seqs, dtype=float)
    if np.ndim(context_len) == 0:  # the usual case: one context, many batch sizes (cached per sequence)
        total_one, state_one = _per_sequence_cache(model, float(context_len), kv_dtype, sliding, mla, read)
        total, state = total_one * n, state_one * n
    else:
        fn = decode_kv_read_bytes_array if read else kv_cache_bytes_array
        total = np.asarray(fn(model, context_len, n, kv_dtype, sliding, mla), dtype=float)
        state = kv_state_bytes(model) * n * (2.0 if read else 1.0)
    attention = (total - state) / layout.pp
    share = kv_share_per_gpu(model, layout.tp, mla)
    return (attention * share, state / (layout.tp * layout.pp),
            attention * max(0.0, share - 1.0 / layout.tp))


def _links(accelerator: Accelerator, layout: Layout, interconnect) -> tuple:
    """(link of the TP/EP group, link between stages), or Nones for one accelerator."""
    ic = resolve_interconnect(accelerator, interconnect)
    if layout.is_single:
        return None, None
    if ic is None:
        raise ValueError(f"{accelerator.name} is not ganged with others (no interconnect); use tp = pp = ep = 1 "
                         "or name an interconnect")
    group = link_for_group(ic, layout.width) if layout.width > 1 else ic
    between = link_for_group(ic, layout.gpus_per_replica) if layout.pp > 1 else ic
    return group, between


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
    w_stage = ((total_read - routed_read) / tp + routed_read / width) / pp
    # KV per GPU per stage visit: its share of the sequences of its attention group
    seqs = np.ceil(bm / dp)
    kv_part, state_part, _ = _cache_per_gpu(model, context_len, seqs, layout, kv_dtype, sliding, mla, read=not prefill)
    kv_stage = kv_part + state_part
    # FLOPs per GPU per stage visit
    flops = 2.0 * matmul_params(model, embedding) * bm * t
    if prefill:
        flops = flops - head_flops_skipped(model, t, bm, logits) + attention_flops_array(model, t, bm, past_len)
    c_stage = flops / (width * pp)
    layers = model.n_layers / pp
    d_bytes = model.d_model * ACTIVATION_BYTES
    ar = np.zeros_like(bm)
    a2a = np.zeros_like(bm)
    p2p = np.zeros_like(bm)
    if tp > 1:
        per_layer = 1 if layout.ep > 1 else 2
        ar = layers * per_layer * ring_all_reduce_s(seqs * t * d_bytes, tp, group)
    if layout.ep > 1:
        msg = bm * t / width * model.n_experts_per_token * d_bytes
        a2a = layers * 2 * all_to_all_s(msg, layout.ep, group)
    if pp > 1:
        p2p = (pp - 1) * (bm * t * d_bytes / between.bandwidth_bytes_per_s + between.latency_s)
    cycle = np.maximum(m, float(pp))
    weights_s = cycle * w_stage / bw
    kv_s = cycle * kv_stage / bw
    compute_s = cycle * c_stage / accelerator.compute_flops(weight_dtype)
    allreduce_s, alltoall_s = cycle * ar, cycle * a2a
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
    if past:  # the cache written is the new tokens', not the whole context's
        seqs = math.ceil(b / layout.attention_dp)
        now = sum(_cache_per_gpu(model, past + t, seqs, layout, kv_dtype, sliding, mla)[:2])
        before = sum(_cache_per_gpu(model, past, seqs, layout, kv_dtype, sliding, mla)[:2])
        kv_s = layout.pp * float(now - before) / accelerator.bandwidth_bytes_per_s
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


def memory_per_gpu_array(model: ModelConfig, layout: Layout, batch, context_len: int, weight_dtype: str = "bf16",
                         kv_dtype: str = "bf16", sliding: str = "cap", mla: str = "latent"):
    """Weights + KV bytes on one accelerator of ``layout`` for an array of batch sizes per replica
    (``gpu_memory`` without the reserve, vectorised; no validation)."""
    seqs = np.ceil(np.asarray(batch, dtype=float) / layout.attention_dp)
    kv, state, _ = _cache_per_gpu(model, context_len, seqs, layout, kv_dtype, sliding, mla)
    return weight_bytes_per_gpu(model, layout, weight_dtype) + kv + state


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
