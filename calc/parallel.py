"""Many accelerators: tensor, pipeline and expert parallelism, replicas, and a capacity plan.

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

Collectives (the link is ``Interconnect``; bandwidth per GPU and direction, latency per hop):
ring all-reduce of M bytes over n ranks, ``2 (n - 1) / n x M / bw + 2 (n - 1) x latency`` (NCCL
tests, doc/PERFORMANCE.md: bus bandwidth = algorithm bandwidth x 2 (n - 1) / n); all-to-all of M
bytes per rank, ``M (n - 1) / n / bw + (n - 1) x latency``; point to point, ``M / bw + latency``.
A group that does not fit in one NVLink/NVSwitch domain communicates over the scale-out network.

The step of one GPU follows the roofline of ``calc.roofline`` (the inference course, week 11, step 4) on its share:
``stage = kv_s + max(weights_s, compute_s) + collectives``; one decode token of a sequence takes
``max(m, PP)`` stage times plus PP - 1 hops. Lower bounds, like the rest of calc: communication is
not overlapped with compute (engines overlap a little of it), layers are split evenly over stages,
and every layer of a MoE model counts as a MoE layer.

On top of the step: tokens/s per GPU against tokens/s per user for every layout and batch and their
Pareto front (``throughput_frontier``, NVIDIA AIConfigurator's axes), the cheapest layout, batch and
replica count for a traffic and TPOT/TTFT targets (``capacity_plan``, with its binding constraint),
separate prefill and decode pools (``disaggregated_plan``), and every accelerator of the catalogue
with the smallest TP that holds a model (``which_gpus``).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from .checks import check_fraction, check_nonneg_number, check_positive_int, check_positive_number
from .dtypes import dtype_bytes
from .hardware import Accelerator, get_accelerator, list_accelerators
from .kv import MLA_CONVENTIONS, kv_cache_bytes_array
from .memory import expected_experts_touched, routed_expert_params, weight_bytes, weight_bytes_read
from .models import DATA_DIR, ModelConfig

#: Bytes of one activation element exchanged between ranks (bf16, what engines send).
ACTIVATION_BYTES = 2
#: Layout grid of the capacity plan (the benchmark's grid).
PLAN_TP = (1, 2, 4, 8)
PLAN_PP = (1, 2)
PLAN_MAX_BATCH = 512
HOURS_PER_MONTH = 720.0


# == Interconnects ==============================================================================

@dataclass(frozen=True)
class Interconnect:
    """A link between accelerators, as the collectives see it.

    Fields:
        id, name: preset id ("nvlink4") and display name.
        bandwidth_bytes_per_s: per GPU and direction (vendors quote both directions summed: NVLink 4's
            "900 GB/s" is 450 GB/s each way), the figure NCCL's bus bandwidth approaches.
        latency_s: per hop of a ring (per peer of an all-to-all), a few microseconds.
        domain_size: accelerators this fabric joins (8 in an HGX server); larger groups use ``scale_out``.
        scale_out: id of the network between domains (InfiniBand, RoCE, Ethernet), or None.
        source: the vendor sheet (not compared).

    Raises:
        ValueError: non-positive bandwidth or domain, negative latency.
    """

    id: str
    name: str
    bandwidth_bytes_per_s: float
    latency_s: float
    domain_size: int
    scale_out: str | None = None
    source: str = field(default="", compare=False)

    def __post_init__(self):
        check_positive_number(self.bandwidth_bytes_per_s, "bandwidth_bytes_per_s")
        check_nonneg_number(self.latency_s, "latency_s")
        check_positive_int(self.domain_size, "domain_size")


@lru_cache(maxsize=1)
def _interconnect_table() -> dict:
    raw = json.loads((DATA_DIR / "accelerators.json").read_text())["interconnects"]
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def list_interconnects() -> list[str]:
    """Ids of the interconnect presets (the "interconnects" section of ``calc/data/accelerators.json``)."""
    return list(_interconnect_table())


def get_interconnect(name) -> Interconnect:
    """The interconnect preset ``name`` (an id such as "nvlink4"), or ``name`` itself if it is one.

    Raises:
        ValueError: unknown id; the message lists the valid ones.
    """
    if isinstance(name, Interconnect):
        return name
    table = _interconnect_table()
    key = str(name).strip().lower()
    if key not in table:
        raise ValueError(f"unknown interconnect {name!r}; valid: {', '.join(table)}")
    return Interconnect(id=key, **table[key])


def default_interconnect(accelerator: Accelerator) -> Interconnect | None:
    """The link an accelerator's servers use (its ``interconnect`` field), or None for a lone device."""
    return None if accelerator.interconnect is None else get_interconnect(accelerator.interconnect)


def _resolve_interconnect(accelerator: Accelerator, interconnect) -> Interconnect | None:
    return default_interconnect(accelerator) if interconnect is None else get_interconnect(interconnect)


def link_for_group(interconnect: Interconnect, n_gpus: int) -> Interconnect:
    """The link a collective over ``n_gpus`` ranks runs at: the fabric itself when the group fits in
    one domain, else its scale-out network (the slowest hop sets a ring's pace).

    Raises:
        ValueError: the group is larger than the domain and there is no scale-out network.
    """
    if n_gpus <= interconnect.domain_size:
        return interconnect
    if interconnect.scale_out is None:
        raise ValueError(f"{interconnect.name} joins at most {interconnect.domain_size} accelerators; "
                         f"a group of {n_gpus} needs a network between domains, and none is given")
    return get_interconnect(interconnect.scale_out)


def ring_all_reduce_s(message_bytes, n_ranks: int, interconnect: Interconnect):
    """Seconds of a ring all-reduce of ``message_bytes`` over ``n_ranks`` ranks.

    ``2 (n - 1) / n x M / bw + 2 (n - 1) x latency``: a ring does a reduce-scatter and an all-gather,
    each of n - 1 steps moving M / n bytes per rank (NCCL tests, doc/PERFORMANCE.md, "bus bandwidth":
    busbw = algbw x 2 (n - 1) / n). 0 for one rank. Accepts numpy arrays of message sizes.
    Example: 16,384 B (one token of Llama-3.1-70B in bf16) over 8 H100s on NVLink 4 (450 GB/s,
    1 us per hop): 1.75 x 16,384 / 450e9 + 14 us = 14.06 us.
    """
    n = int(n_ranks)
    m = np.asarray(message_bytes, dtype=float)
    if n <= 1:
        out = np.zeros_like(m)
    else:
        out = 2.0 * (n - 1) / n * m / interconnect.bandwidth_bytes_per_s + 2.0 * (n - 1) * interconnect.latency_s
    return float(out) if out.ndim == 0 else out


def all_to_all_s(message_bytes, n_ranks: int, interconnect: Interconnect):
    """Seconds of an all-to-all where each rank holds ``message_bytes`` for all ranks (itself included).

    Each rank sends (n - 1) / n of its bytes, one piece per peer: ``(n - 1) / n x M / bw + (n - 1) x
    latency`` (the pairwise exchange; GShard section 2.2 routes MoE tokens this way). 0 for one rank.
    """
    n = int(n_ranks)
    m = np.asarray(message_bytes, dtype=float)
    if n <= 1:
        out = np.zeros_like(m)
    else:
        out = (n - 1) / n * m / interconnect.bandwidth_bytes_per_s + (n - 1) * interconnect.latency_s
    return float(out) if out.ndim == 0 else out


# == The layout ==================================================================================

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


# == Memory per GPU ==============================================================================

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
    from .kv import kv_bytes_per_token
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
    from .kv import decode_kv_read_bytes_array, kv_state_bytes
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
        from .kv import decode_kv_read_bytes_array, kv_state_bytes
        fn = decode_kv_read_bytes_array if read else kv_cache_bytes_array
        total = np.asarray(fn(model, context_len, n, kv_dtype, sliding, mla), dtype=float)
        state = kv_state_bytes(model) * n * (2.0 if read else 1.0)
    attention = (total - state) / layout.pp
    share = kv_share_per_gpu(model, layout.tp, mla)
    return (attention * share, state / (layout.tp * layout.pp),
            attention * max(0.0, share - 1.0 / layout.tp))


# == Time per step ===============================================================================

def _links(accelerator: Accelerator, layout: Layout, interconnect) -> tuple:
    """(link of the TP/EP group, link between stages), or Nones for one accelerator."""
    ic = _resolve_interconnect(accelerator, interconnect)
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
            the course's napkin), as in ``calc.roofline.decode_step_time``.
        logits: prefill only: "all" (the LM head on every prompt token, the course) or "last" (engines), as
            in ``calc.roofline.prefill_time``.

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
    from .roofline import matmul_params
    flops = 2.0 * matmul_params(model, embedding) * bm * t
    if prefill:
        from .roofline import _attention_flops_array, head_flops_skipped
        flops = flops - head_flops_skipped(model, t, bm, logits) + _attention_flops_array(model, t, bm, past_len)
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
    from .roofline import StepTime
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


# == Throughput per GPU against per user =========================================================

def throughput_frontier(model: ModelConfig, accelerator: Accelerator, context_len: int, tps=PLAN_TP,
                        pps=(1,), eps=(1,), batches=None, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                        reserve_bytes: float = 0.0, interconnect=None, embedding: str = "gather") -> pd.DataFrame:
    """Tokens/s per GPU against tokens/s per user for every layout and batch that fits, and their
    Pareto front (NVIDIA AIConfigurator's two axes).

    Per user: 1 / TPOT; per GPU: B / TPOT / gpus_per_replica. Replicas multiply GPUs and tokens
    alike, so neither axis moves with them: a point stands for any number of replicas. A point is on
    the front when no other point is at least as good on both axes and better on one. Layouts the
    model or the interconnect cannot take are skipped.

    Args:
        batches: 1-D array of batch sizes per replica (default 1..512 on a log grid of 64 points);
            each layout keeps those within its memory ceiling.

    Returns:
        DataFrame: layout, tp, pp, ep, gpus_per_replica, batch, tpot_s, tokens_per_s_per_user,
        tokens_per_s_per_gpu, comm_s, pareto (bool).

    Raises:
        ValueError: invalid context or dtypes; no layout that fits.
    """
    s = check_positive_int(context_len, "context_len")
    grid = (np.unique(np.round(np.geomspace(1, PLAN_MAX_BATCH, 64)).astype(int)) if batches is None
            else np.asarray(batches, dtype=int))
    frames = []
    for tp in tps:
        for pp in pps:
            for ep in eps:
                try:
                    lay = make_layout(model, tp, pp, ep)
                    ceiling = max_batch_per_replica(model, accelerator, s, lay, weight_dtype, kv_dtype, reserve_bytes)
                    bs = grid[grid <= ceiling]
                    if bs.size == 0:
                        continue
                    a = parallel_step_arrays(model, accelerator, bs, s, lay, weight_dtype, kv_dtype,
                                             interconnect=interconnect, embedding=embedding)
                except ValueError:
                    continue
                frames.append(pd.DataFrame({
                    "layout": lay.label, "tp": tp, "pp": pp, "ep": ep, "gpus_per_replica": lay.gpus_per_replica,
                    "batch": bs, "tpot_s": a["total_s"], "tokens_per_s_per_user": 1.0 / a["total_s"],
                    "tokens_per_s_per_gpu": a["tokens_per_s_per_gpu"], "comm_s": a["comm_s"]}))
    if not frames:
        raise ValueError(f"{model.name} does not fit on {accelerator.name} in any layout of "
                         f"{grid_label(tps, pps, eps)} with one sequence of {s:,} tokens")
    df = pd.concat(frames, ignore_index=True)
    df["pareto"] = pareto_mask(df["tokens_per_s_per_user"].to_numpy(), df["tokens_per_s_per_gpu"].to_numpy())
    return df


def _listed(values) -> str:
    return ", ".join(str(v) for v in values)


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:,.2f} ms" if ms < 10 else f"{ms:,.1f} ms" if ms < 100 else f"{ms:,.0f} ms"


def pareto_mask(x, y) -> np.ndarray:
    """Boolean mask of the points no other point beats on both axes (both maximised), vectorised:
    sort by x descending (ties by y descending), keep a point when its y exceeds every y before it."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.lexsort((-y, -x))
    ys = y[order]
    best_before = np.concatenate([[-np.inf], np.maximum.accumulate(ys)[:-1]])
    mask = np.empty(len(x), dtype=bool)
    mask[order] = ys > best_before
    return mask


# == Capacity plan ===============================================================================

@dataclass(frozen=True)
class ServingTraffic:
    """Traffic a deployment must serve.

    Fields:
        requests_per_s: average arrival rate (>= 0).
        peak_to_average: peak rate / average (>= 1); capacity is sized for the peak.
        input_tokens, output_tokens: per request (>= 1).
        prefix_hit_rate: fraction of input tokens found in the prefix cache (skip prefill), in [0, 1].

    Raises:
        ValueError: negative rate, a peak below the average, lengths below 1, a rate outside [0, 1].
    """

    requests_per_s: float = 1.0
    peak_to_average: float = 1.0
    input_tokens: int = 2048
    output_tokens: int = 256
    prefix_hit_rate: float = 0.0

    def __post_init__(self):
        check_nonneg_number(self.requests_per_s, "requests_per_s")
        if check_positive_number(self.peak_to_average, "peak_to_average") < 1:
            raise ValueError(f"peak_to_average must be at least 1 (the peak is at least the average), "
                             f"got {self.peak_to_average!r}")
        check_positive_int(self.input_tokens, "input_tokens")
        check_positive_int(self.output_tokens, "output_tokens")
        check_fraction(self.prefix_hit_rate, "prefix_hit_rate")

    @property
    def peak_requests_per_s(self) -> float:
        """Arrival rate to size for: requests_per_s x peak_to_average."""
        return self.requests_per_s * self.peak_to_average


@dataclass(frozen=True)
class CapacityPlan:
    """The cheapest layout that serves a traffic within latency targets.

    Fields:
        layout: Layout (tp, pp, ep, replicas).
        batch: decode batch per replica; gpus: all accelerators; gpus_per_replica.
        usd_per_hour, usd_per_month (720 h): the rent (NaN without a price).
        tpot_s, ttft_s: predicted at the plan's batch (mean context) and for one prompt's uncached part.
        requests_per_s_per_replica: what a replica serves at that batch.
        binding: "memory", "TPOT" or "TTFT" (the constraint whose removal would save the most GPUs),
            or "traffic" when none of them would save one.
        max_batch: the memory ceiling per replica of the layout.
        verdict: one sentence.
    """

    layout: Layout
    batch: int
    gpus: int
    gpus_per_replica: int
    usd_per_hour: float
    usd_per_month: float
    tpot_s: float
    ttft_s: float
    requests_per_s_per_replica: float
    binding: str
    max_batch: int
    verdict: str


def plan_grid(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, weight_dtype: str = "bf16",
              kv_dtype: str = "bf16", tps=PLAN_TP, pps=PLAN_PP, eps=None, max_batch: int = PLAN_MAX_BATCH,
              reserve_bytes: float = 0.0, interconnect=None, embedding: str = "gather",
              logits: str = "all") -> pd.DataFrame:
    """Every (layout, batch) of the grid with its TPOT, TTFT, memory fit and replica capacity.

    TPOT: a decode step at the mean context ``input + output / 2``. Memory: each sequence reserved at
    ``input + output`` tokens. TTFT: the prefill of one prompt's uncached tokens
    ``ceil((1 - prefix_hit_rate) x input)`` after the cached ones (no queueing). A replica at batch B
    serves ``1 / (prefill_s + output x TPOT / B)`` requests per second (prefill and decode share its
    time; the self-hosting formula of ``calc.bill``). Vectorised over batch (one numpy evaluation per
    layout).

    Args:
        eps: expert-parallel degrees tried (default (1,) for dense models, (1, 2, 4, 8) for MoE).
        logits: the prefill's LM head on every prompt token ("all", the course) or the last only
            ("last", engines), as ``calc.roofline.prefill_time``.

    Returns:
        DataFrame: tp, pp, ep, layout, gpus_per_replica, batch, max_batch, fits, tpot_s, ttft_s,
        requests_per_s_per_replica.

    Raises:
        ValueError: invalid dtypes or sizes.
    """
    mb = check_positive_int(max_batch, "max_batch")
    if eps is None:
        eps = plan_eps(model)
    ctx_mean = traffic.input_tokens + max(1, traffic.output_tokens // 2)
    ctx_full = traffic.input_tokens + traffic.output_tokens
    cached = int(round(traffic.prefix_hit_rate * traffic.input_tokens))
    new = max(1, traffic.input_tokens - cached)
    b = np.arange(1, mb + 1)
    cols = {k: [] for k in ("tp", "pp", "ep", "layout", "gpus_per_replica", "max_batch", "tpot_s", "ttft_s")}
    for tp in tps:
        for pp in pps:
            for ep in eps:
                try:
                    lay = make_layout(model, tp, pp, ep)
                    ceiling = max_batch_per_replica(model, accelerator, ctx_full, lay, weight_dtype, kv_dtype,
                                                    reserve_bytes)
                    a = parallel_step_arrays(model, accelerator, b, ctx_mean, lay, weight_dtype, kv_dtype,
                                             interconnect=interconnect, embedding=embedding)
                    ttft = parallel_prefill(model, accelerator, new, 1, lay, weight_dtype, kv_dtype, interconnect,
                                            past_len=cached, embedding=embedding, logits=logits).total_s
                except ValueError:
                    continue
                for k, v in (("tp", tp), ("pp", pp), ("ep", ep), ("layout", lay.label),
                             ("gpus_per_replica", lay.gpus_per_replica), ("max_batch", ceiling), ("ttft_s", ttft)):
                    cols[k].append(np.full(mb, v))
                cols["tpot_s"].append(np.asarray(a["total_s"], dtype=float))
    if not cols["tp"]:
        raise ValueError(f"no layout of the grid can run {model.name} on {accelerator.name}")
    df = pd.DataFrame({k: np.concatenate(v) for k, v in cols.items()})
    batch = np.tile(b, len(cols["tp"]))
    df.insert(5, "batch", batch)
    df.insert(7, "fits", batch <= df["max_batch"].to_numpy())
    df["requests_per_s_per_replica"] = 1.0 / (df["ttft_s"].to_numpy()
                                              + traffic.output_tokens * df["tpot_s"].to_numpy() / batch)
    return df


def _cheapest(grid: pd.DataFrame, peak_rps: float, ok: np.ndarray):
    """Index of the cheapest feasible row (fewest GPUs, then most requests/s per GPU), and its replicas."""
    if not ok.any():
        return None, None
    rps = grid["requests_per_s_per_replica"].to_numpy()
    replicas = np.maximum(1, np.ceil(np.round(peak_rps / rps, 9))).astype(np.int64)
    gpus = replicas * grid["gpus_per_replica"].to_numpy()
    gpus_ok = np.where(ok, gpus, np.iinfo(np.int64).max)
    best = gpus_ok.min()
    cand = np.flatnonzero(gpus_ok == best)
    per_gpu = rps[cand] / grid["gpus_per_replica"].to_numpy()[cand]
    i = int(cand[np.argmax(per_gpu)])
    return i, replicas


def capacity_plan(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, tpot_target_s: float,
                  ttft_target_s: float, price_per_hour_usd: float | None = None, weight_dtype: str = "bf16",
                  kv_dtype: str = "bf16", tps=PLAN_TP, pps=PLAN_PP, eps=None, max_batch: int = PLAN_MAX_BATCH,
                  reserve_bytes: float = 0.0, interconnect=None, grid: pd.DataFrame | None = None,
                  embedding: str = "gather", logits: str = "all") -> CapacityPlan:
    """The cheapest layout, batch and replica count that serves ``traffic`` within the targets.

    Over ``plan_grid`` (TP x PP x EP x batch 1..max_batch), a row is feasible when it fits in memory,
    its TPOT <= ``tpot_target_s`` and its TTFT <= ``ttft_target_s``; it needs
    ``replicas = max(1, ceil(peak requests/s / requests/s per replica))`` (one always-on replica at
    zero traffic). The plan is the feasible row with the fewest GPUs (so the lowest rent, every GPU
    costing the same), ties broken by the most requests/s per GPU (headroom). The binding
    constraint is the one of memory, TPOT and TTFT whose removal would save the most GPUs (ties in
    that order); when removing none of them saves a GPU, the traffic alone sets the bill ("traffic":
    the replicas the peak needs, or the one always-on replica).

    Args:
        price_per_hour_usd: per GPU (default: the accelerator's list price; NaN dollars if none).
        grid: a ``plan_grid`` already computed for these inputs (the page reuses it).

    Returns:
        CapacityPlan.

    Raises:
        ValueError: non-positive targets; nothing in the grid meets them (the message says what is closest).
    """
    tpot_t = check_positive_number(tpot_target_s, "tpot_target_s")
    ttft_t = check_positive_number(ttft_target_s, "ttft_target_s")
    price = accelerator.price_per_hour_usd if price_per_hour_usd is None else check_nonneg_number(
        price_per_hour_usd, "price_per_hour_usd")
    g = grid if grid is not None else plan_grid(model, accelerator, traffic, weight_dtype, kv_dtype, tps, pps, eps,
                                               max_batch, reserve_bytes, interconnect, embedding, logits)
    fits = g["fits"].to_numpy()
    tpot_ok = g["tpot_s"].to_numpy() <= tpot_t
    ttft_ok = g["ttft_s"].to_numpy() <= ttft_t
    peak = traffic.peak_requests_per_s
    i, replicas = _cheapest(g, peak, fits & tpot_ok & ttft_ok)
    if i is None:
        if not fits.any():
            raise ValueError(f"{model.name} does not fit on {accelerator.name} in any layout of "
                             f"{grid_label(sorted(set(g['tp'])), sorted(set(g['pp'])), sorted(set(g['ep'])))} "
                             f"(up to {g['gpus_per_replica'].max()} GPUs) with one sequence of "
                             f"{traffic.input_tokens + traffic.output_tokens:,} tokens (the traffic's input + "
                             "output, what each sequence reserves)")
        best_tpot = g.loc[fits, "tpot_s"].min()
        best_ttft = g.loc[fits, "ttft_s"].min()
        if best_tpot > tpot_t:
            raise ValueError(f"no layout of the grid meets a TPOT of {_ms(tpot_t)}: the fastest that fits "
                             f"takes {_ms(best_tpot)} per token")
        if best_ttft > ttft_t:
            raise ValueError(f"no layout of the grid meets a TTFT of {_ms(ttft_t)}: the fastest prefill "
                             f"that fits takes {_ms(best_ttft)}")
        raise ValueError("no layout of the grid meets both the TPOT and the TTFT target at once")
    gpus = int(replicas[i] * g["gpus_per_replica"].iat[i])
    relaxed = {"memory": np.ones_like(fits) & tpot_ok & ttft_ok, "TPOT": fits & ttft_ok, "TTFT": fits & tpot_ok}
    savings = {}
    for name, ok in relaxed.items():
        j, rep = _cheapest(g, peak, ok)
        savings[name] = gpus - int(rep[j] * g["gpus_per_replica"].iat[j])
    best = max(savings.values())
    binding = "traffic" if best <= 0 else next(k for k in ("memory", "TPOT", "TTFT") if savings[k] == best)
    row = g.iloc[i]
    lay = Layout(int(row["tp"]), int(row["pp"]), int(row["ep"]), int(replicas[i]))
    usd_h = math.nan if price is None else gpus * float(price)
    why = {"memory": "more memory per GPU would allow a larger batch or a narrower replica",
           "TPOT": "a looser TPOT target would allow a larger batch or less TP",
           "TTFT": "a looser TTFT target would allow a narrower replica",
           "traffic": "the traffic sets the number of replicas" if lay.replicas > 1
           else "one always-on replica covers the traffic"}[binding]
    money = "" if price is None else f", ${usd_h:,.2f}/h (${usd_h * HOURS_PER_MONTH:,.0f} a month)"
    verdict = (f"{lay.replicas} replica{'s' if lay.replicas != 1 else ''} of {lay.label} at batch "
               f"{int(row['batch'])} = {gpus} x {accelerator.name}{money}: TPOT {row['tpot_s'] * 1e3:.1f} ms, "
               f"TTFT {row['ttft_s'] * 1e3:.0f} ms; binding: {binding} ({why}).")
    return CapacityPlan(lay, int(row["batch"]), gpus, lay.gpus_per_replica, usd_h, usd_h * HOURS_PER_MONTH,
                        float(row["tpot_s"]), float(row["ttft_s"]), float(row["requests_per_s_per_replica"]),
                        binding, int(row["max_batch"]), verdict)


def plan_options(grid: pd.DataFrame, traffic: ServingTraffic, tpot_target_s: float, ttft_target_s: float,
                 price_per_hour_usd: float | None = None) -> pd.DataFrame:
    """The best row of every layout of a ``plan_grid``: what each TP/PP/EP would cost for the traffic.

    Per layout: the feasible batch with the fewest GPUs (ties: most requests/s per GPU), as
    ``capacity_plan`` chooses over all layouts; a layout with no feasible batch says why ("memory": no
    batch fits; "TPOT" or "TTFT": the target is missed even at the best batch that fits).

    Returns:
        DataFrame, one row per layout, cheapest first (ties: most requests/s per GPU, as the plan):
        layout, tp, pp, ep, gpus_per_replica, batch, replicas, gpus, usd_per_month (NaN without a
        price), tpot_s, ttft_s, max_batch, requests_per_s_per_gpu, fails ("" when feasible).

    Raises:
        ValueError: non-positive targets or a negative price.
    """
    tpot_t = check_positive_number(tpot_target_s, "tpot_target_s")
    ttft_t = check_positive_number(ttft_target_s, "ttft_target_s")
    price = math.nan if price_per_hour_usd is None else check_nonneg_number(price_per_hour_usd, "price_per_hour_usd")
    rows = []
    for (tp, pp, ep), part in grid.groupby(["tp", "pp", "ep"], sort=False):
        fits = part["fits"].to_numpy()
        ok = fits & (part["tpot_s"].to_numpy() <= tpot_t) & (part["ttft_s"].to_numpy() <= ttft_t)
        first = part.iloc[0]
        row = dict(layout=first["layout"], tp=tp, pp=pp, ep=ep, gpus_per_replica=int(first["gpus_per_replica"]),
                   batch=np.nan, replicas=np.nan, gpus=np.nan, usd_per_month=np.nan, tpot_s=np.nan,
                   ttft_s=float(first["ttft_s"]), max_batch=int(first["max_batch"]), requests_per_s_per_gpu=np.nan,
                   fails="")
        i, replicas = _cheapest(part, traffic.peak_requests_per_s, ok)
        if i is None:
            row["fails"] = ("memory" if not fits.any() else "TTFT" if first["ttft_s"] > ttft_t else "TPOT")
        else:
            gpus = int(replicas[i] * row["gpus_per_replica"])
            row.update(batch=int(part["batch"].iat[i]), replicas=int(replicas[i]), gpus=gpus,
                       usd_per_month=gpus * price * HOURS_PER_MONTH, tpot_s=float(part["tpot_s"].iat[i]),
                       requests_per_s_per_gpu=float(part["requests_per_s_per_replica"].iat[i]) / row["gpus_per_replica"])
        rows.append(row)
    df = pd.DataFrame(rows)
    order = np.lexsort((-df["requests_per_s_per_gpu"].fillna(-1).to_numpy(), df["gpus"].fillna(np.inf).to_numpy()))
    return df.iloc[order].reset_index(drop=True)


@dataclass(frozen=True)
class DisaggregatedPlan:
    """Separate prefill and decode pools (xPyD) for a traffic, each the cheapest grid layout for its job.

    Fields:
        prefill_layout, decode_layout: Layout of one replica of each pool (replicas set).
        prefill_gpus, decode_gpus: GPUs of each pool; ratio: prefill_gpus / decode_gpus.
        decode_batch: batch per decode replica; tpot_s, ttft_s: predicted.
        gpus: both pools; usd_per_hour (NaN without a price).
        verdict: one sentence.
    """

    prefill_layout: Layout
    decode_layout: Layout
    prefill_gpus: int
    decode_gpus: int
    ratio: float
    decode_batch: int
    tpot_s: float
    ttft_s: float
    gpus: int
    usd_per_hour: float
    verdict: str


def disaggregated_plan(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, tpot_target_s: float,
                       ttft_target_s: float, price_per_hour_usd: float | None = None, grid: pd.DataFrame | None = None,
                       **grid_kwargs) -> DisaggregatedPlan:
    """Prefill on one pool, decode on another (Zhong et al. 2024, "DistServe", section 3; Patel et al.
    2024, "Splitwise"): each pool sized for the peak on its own.

    Prefill replica: serves ``1 / TTFT`` prompts per second (one uncached prompt at a time; a long
    prompt is compute-bound, so batching prompts adds little), needs TTFT <= target.
    Decode replica at batch B: serves ``B / (output x TPOT)`` requests per second, needs TPOT <= target
    and the memory. Each pool: the grid row (``plan_grid``) with the fewest GPUs for the peak, at least
    one replica. The KV cache moves from pool to pool once per request; its time is left out.

    Raises:
        ValueError: non-positive targets, or no row that meets one of them (the message says which).
    """
    tpot_t = check_positive_number(tpot_target_s, "tpot_target_s")
    ttft_t = check_positive_number(ttft_target_s, "ttft_target_s")
    price = accelerator.price_per_hour_usd if price_per_hour_usd is None else check_nonneg_number(
        price_per_hour_usd, "price_per_hour_usd")
    g = grid if grid is not None else plan_grid(model, accelerator, traffic, **grid_kwargs)
    peak = traffic.peak_requests_per_s
    width = g["gpus_per_replica"].to_numpy()
    fits = g["fits"].to_numpy()
    pre_ok = fits & (g["ttft_s"].to_numpy() <= ttft_t)
    dec_ok = fits & (g["tpot_s"].to_numpy() <= tpot_t)
    if not pre_ok.any():
        raise ValueError(f"no layout of the grid prefills within a TTFT of {_ms(ttft_t)}")
    if not dec_ok.any():
        raise ValueError(f"no layout of the grid decodes within a TPOT of {_ms(tpot_t)}")
    pre_rep = np.maximum(1, np.ceil(np.round(peak * g["ttft_s"].to_numpy(), 9)))
    dec_rep = np.maximum(1, np.ceil(np.round(peak * traffic.output_tokens * g["tpot_s"].to_numpy()
                                             / g["batch"].to_numpy(), 9)))
    big = np.iinfo(np.int64).max
    i = int(np.argmin(np.where(pre_ok, pre_rep * width, big)))
    j = int(np.argmin(np.where(dec_ok, dec_rep * width, big)))
    lay_p = Layout(int(g["tp"].iat[i]), int(g["pp"].iat[i]), int(g["ep"].iat[i]), int(pre_rep[i]))
    lay_d = Layout(int(g["tp"].iat[j]), int(g["pp"].iat[j]), int(g["ep"].iat[j]), int(dec_rep[j]))
    n_p, n_d = lay_p.n_gpus, lay_d.n_gpus
    usd_h = math.nan if price is None else (n_p + n_d) * float(price)
    verdict = (f"Disaggregated: prefill on {lay_p.replicas} x {lay_p.label} ({n_p} GPU{'s' * (n_p != 1)}), decode on "
               f"{lay_d.replicas} x {lay_d.label} at batch {int(g['batch'].iat[j])} ({n_d} GPU{'s' * (n_d != 1)}): "
               f"{n_p / n_d:.2f} prefill GPUs per "
               f"decode GPU, {n_p + n_d} in all" + ("" if price is None else f", ${usd_h:,.2f}/h") + ".")
    return DisaggregatedPlan(lay_p, lay_d, n_p, n_d, n_p / n_d, int(g["batch"].iat[j]), float(g["tpot_s"].iat[j]),
                             float(g["ttft_s"].iat[i]), n_p + n_d, usd_h, verdict)


# == Which accelerators can run it ===============================================================

def smallest_tp(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
                weight_dtype: str = "bf16", kv_dtype: str = "bf16", tps=(1, 2, 4, 8), reserve_bytes: float = 0.0):
    """The smallest tensor-parallel degree in ``tps`` whose GPUs hold the model and ``batch`` sequences of
    ``context_len`` tokens (``max_batch_per_replica``), or None. TP above 1 needs an interconnect;
    a TP that does not divide the query heads is skipped. Llama-3.1-70B bf16 at 8k on H100 SXM: 2.

    Raises:
        ValueError: invalid sizes or dtypes.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    for tp in tps:
        if tp > 1 and accelerator.interconnect is None:
            return None
        try:
            lay = make_layout(model, tp)
        except ValueError:
            continue
        if max_batch_per_replica(model, accelerator, s, lay, weight_dtype, kv_dtype, reserve_bytes) >= b:
            return tp
    return None



def plan_eps(model: ModelConfig, eps=(1, 2, 4, 8)) -> tuple[int, ...]:
    """Expert-parallel degrees a search tries for ``model``: those of ``eps`` that divide its routed
    experts for a mixture of experts, (1,) for a dense model (EP needs experts to spread)."""
    return tuple(e for e in eps if e == 1 or (model.is_moe and model.n_experts % e == 0))


def grid_label(tps, pps, eps) -> str:
    """The layouts a search tries, in words: "TP 1, 2, 4, 8 x PP 1, 2 x EP 1, 2, 4, 8" (the EP part left
    out when it is only 1). One wording for every message and caption that names a grid."""
    out = f"TP {_listed(tps)} x PP {_listed(pps)}"
    return out + (f" x EP {_listed(eps)}" if tuple(eps) != (1,) else "")


def smallest_layout(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
                    weight_dtype: str = "bf16", kv_dtype: str = "bf16", tps=PLAN_TP, pps=PLAN_PP, eps=None,
                    reserve_bytes: float = 0.0):
    """The layout of ``tps x pps x eps`` with the fewest GPUs per replica whose GPUs hold the model and
    ``batch`` sequences of ``context_len`` tokens (``max_batch_per_replica`` >= batch), or None.
    Ties: fewer pipeline stages (PP saves memory, not time per token), then the smaller TP. Layouts the model cannot take are
    skipped; TP or PP above 1 needs an interconnect. ``eps`` defaults to ``plan_eps(model)``.
    Llama-3.1-70B bf16 on H100 SXM (80 GB), one 8k sequence: 141 GB of weights need 2 GPUs, TP2.

    Raises:
        ValueError: invalid sizes or dtypes.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    eps = plan_eps(model) if eps is None else tuple(eps)
    best = None
    for tp in tps:
        for pp in pps:
            for ep in eps:
                try:
                    lay = make_layout(model, tp, pp, ep)
                except ValueError:
                    continue
                if lay.gpus_per_replica > 1 and accelerator.interconnect is None:
                    continue
                if best is not None and (lay.gpus_per_replica, lay.pp, lay.tp) >= (best.gpus_per_replica, best.pp,
                                                                                     best.tp):
                    continue
                if max_batch_per_replica(model, accelerator, s, lay, weight_dtype, kv_dtype, reserve_bytes) >= b:
                    best = lay
    return best


def which_gpus(model: ModelConfig, context_len: int, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
               tps=(1, 2, 4, 8), reserve_bytes: float = 0.0, accelerators=None, embedding: str = "gather") -> pd.DataFrame:
    """For every accelerator of the catalogue, the smallest TP that holds the model with one sequence
    of ``context_len`` tokens, and what it gives.

    Memory convention: the data-sheet capacity minus ``reserve_bytes`` per GPU (0 by default, the
    course's convention). Columns: accelerator (id), name, interconnect, tp (NaN when no TP fits),
    gpus, tpot_b1_s (decode at B = 1), max_batch (per replica at that TP), tokens_per_s (at the
    max batch), usd_per_hour (the replica), usd_per_million_output (at the max batch, fully busy;
    NaN without a price), fits. Sorted by usd_per_million_output (unpriced and non-fitting last).

    Raises:
        ValueError: invalid context or dtypes.
    """
    from .cost import cost_per_million
    s = check_positive_int(context_len, "context_len")
    rows = []
    for gid in (accelerators or list_accelerators()):
        acc = get_accelerator(gid) if isinstance(gid, str) else gid
        ic = default_interconnect(acc)
        row = dict(accelerator=gid if isinstance(gid, str) else acc.name, name=acc.name,
                   interconnect="none" if ic is None else ic.name, tp=math.nan, gpus=math.nan,
                   tpot_b1_s=math.nan, max_batch=0, tokens_per_s=math.nan, usd_per_hour=math.nan,
                   usd_per_million_output=math.nan, fits=False)
        for tp in tps:
            if tp > 1 and ic is None:
                break
            try:
                lay = make_layout(model, tp)
                ceiling = max_batch_per_replica(model, acc, s, lay, weight_dtype, kv_dtype, reserve_bytes)
                if ceiling < 1:
                    continue
                one = parallel_step_arrays(model, acc, 1, s, lay, weight_dtype, kv_dtype, embedding=embedding)
                full = parallel_step_arrays(model, acc, ceiling, s, lay, weight_dtype, kv_dtype, embedding=embedding)
            except ValueError:
                continue
            tps_full = float(full["tokens_per_s"])
            price = acc.price_per_hour_usd
            row.update(tp=tp, gpus=lay.gpus_per_replica, tpot_b1_s=float(one["total_s"]), max_batch=ceiling,
                       tokens_per_s=tps_full, fits=True,
                       usd_per_hour=math.nan if price is None else price * lay.gpus_per_replica,
                       usd_per_million_output=math.nan if price is None
                       else float(cost_per_million(tps_full, price * lay.gpus_per_replica)))
            break
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values(["fits", "usd_per_million_output"], ascending=[False, True], na_position="last",
                          kind="stable").reset_index(drop=True)


# == Hooks for the single-GPU functions of calc ===================================================

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
    ``calc.roofline.decode_sweep`` and ``calc.sweeps.decode_split``; ``batches=None`` sweeps 1..ceiling
    (on the bounded grid of ``calc.roofline.batch_grid``).

    Raises:
        ValueError: invalid layout for the model or the accelerator.
    """
    lay = make_layout(model, tp, pp, ep)
    ceiling = max_batch_per_replica(model, accelerator, context_len, lay, weight_dtype, kv_dtype, reserve_bytes)
    if batches is None:  # every B up to 1,024, a bounded geometric grid above (calc.roofline.batch_grid)
        from .roofline import batch_grid

        b = batch_grid(ceiling)
    else:
        b = np.asarray(batches)
    a = parallel_step_arrays(model, accelerator, b, context_len, lay, weight_dtype, kv_dtype,
                             interconnect=interconnect, embedding=embedding)
    return b, a, memory_per_gpu_array(model, lay, b, context_len, weight_dtype, kv_dtype), ceiling


@dataclass(frozen=True)
class LayoutSummary:
    """Headline numbers of one configuration (model, accelerator, layout, dtypes, batch, context).

    Fields: gpus_per_replica, n_gpus (all replicas), max_batch (per replica), fits (batch <= max_batch),
    tpot_s, comm_s, tokens_per_s_per_user (1 / TPOT), tokens_per_s_per_gpu, tokens_per_s (all replicas),
    usd_per_hour and usd_per_month (all replicas, 720 h), usd_per_million_output (fully busy; NaN
    without a price or a positive throughput), memory (``GpuMemory`` of one GPU).
    """

    gpus_per_replica: int
    n_gpus: int
    max_batch: int
    fits: bool
    tpot_s: float
    comm_s: float
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    tokens_per_s: float
    usd_per_hour: float
    usd_per_month: float
    usd_per_million_output: float
    memory: GpuMemory


def layout_summary(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int, layout: Layout,
                   weight_dtype: str = "bf16", kv_dtype: str = "bf16", price_per_hour_usd: float | None = None,
                   interconnect=None, reserve_bytes: float = 0.0, embedding: str = "gather") -> LayoutSummary:
    """TPOT, throughput per user and per GPU, memory and rent of a configuration (``parallel_decode_step``,
    ``gpu_memory``, ``max_batch_per_replica``; dollars: GPUs x price per GPU-hour, and
    ``cost_per_million`` of the replicas' output tokens per second).

    Raises:
        ValueError: invalid sizes, dtypes, layout or price.
    """
    from .cost import cost_per_million
    step = parallel_decode_step(model, accelerator, batch, context_len, layout, weight_dtype, kv_dtype,
                                interconnect=interconnect, embedding=embedding)
    mem = gpu_memory(model, accelerator, context_len, batch, layout, weight_dtype, kv_dtype, reserve_bytes)
    ceiling = max_batch_per_replica(model, accelerator, context_len, layout, weight_dtype, kv_dtype, reserve_bytes)
    price = accelerator.price_per_hour_usd if price_per_hour_usd is None else check_nonneg_number(
        price_per_hour_usd, "price_per_hour_usd")
    tps = step.tokens_per_s * layout.replicas
    usd_h = math.nan if price is None else price * layout.n_gpus
    usd_m = usd_h * HOURS_PER_MONTH
    per_m = math.nan if price is None else float(cost_per_million(tps, usd_h))
    return LayoutSummary(layout.gpus_per_replica, layout.n_gpus, ceiling, mem.fits, step.total_s, step.comm_s,
                         1.0 / step.total_s, step.tokens_per_s / layout.gpus_per_replica, tps, usd_h, usd_m, per_m,
                         mem)
