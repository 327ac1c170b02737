"""What one GPU of a layout holds: its weights, its share of the KV cache, per-GPU memory and the batch ceiling.

What one GPU holds: its stage's dense weights / TP, its stage's routed experts x (E + R) / E / max(TP, EP)
(R redundant copies of hot experts, DeepSeek-V3 report section 3.4); of the KV cache, ceil(K / TP) of
the K heads of its sequences, on its stage's own layers (a hybrid model's stage counts its own layer
kinds): with TP > K every KV head is stored TP / K times (Llama-3.1-70B, K = 8, at TP 16: twice).
MLA's latent is not split by heads: every TP rank holds the whole latent of its sequences (why engines
serve DeepSeek with DP attention). Per-GPU memory, the batch ceiling and the step follow the most loaded
stage.

Layouts and which the engines accept: ``calc.layout``; the step of a layout: ``calc.parallel``.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .checks import check_nonneg_number, check_positive_int
from .dtypes import dtype_bytes
from .hardware import Accelerator
from .kv import MLA_CONVENTIONS
from .layers import LayerSpec, check_conventions, has_compressed_layers, layer_params, layer_specs
from .layout import Layout, check_layout, stage_ranges
from .memory import routed_expert_params, weight_bytes
from .quant import is_plain, tensor_groups, weight_bytes_by_group
from .models import ModelConfig


def kv_share_per_gpu(model: ModelConfig, tp: int, mla: str = "latent", kind: str | None = None) -> float:
    """Fraction of a sequence's KV cache (per layer) one TP rank stores, in a layer of ``kind`` (a "full" layer of
    a model whose full layers have their own KV heads, Gemma 4's global layers, counts those heads; None or another
    kind: ``n_kv_heads``).

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
        if mla == "latent" or has_compressed_layers(model):  # DeepSeek-V4: one KV head, never expanded
            return 1.0
        return math.ceil(model.n_heads / t) / model.n_heads
    k = model.kv_heads_of(kind)
    return math.ceil(k / t) / k


def _full_layer_bytes(model: ModelConfig, a: int, b: int, s, kv_dtype: str, sliding: str, mla: str, read: bool):
    """The cache bytes of one sequence held (or, ``read``, moved by a decode step) in the "full" layers a..b-1 of
    a model whose full layers have their own KV heads (Gemma 4), which a TP rank splits by those heads; 0 for any
    other model. Vectorised over S."""
    if not model.has_global_shapes:
        return 0.0
    fn = LayerSpec.decode_bytes_read if read else LayerSpec.bytes_held
    out = 0.0
    for spec, n in Counter(layer_specs(model, kv_dtype, mla)[a:b]).items():
        if spec.kind == "full":
            out = out + n * np.asarray(fn(spec, np.asarray(s, dtype=float), sliding))
    return out


def routed_expert_bytes(model: ModelConfig, weight_dtype: str = "bf16") -> float:
    """Bytes of one routed expert (all MoE layers): ``calc.memory.routed_expert_params`` x bytes,
    the rule of ``calc.memory.weight_bytes_read``; 0 for a dense model."""
    per = dtype_bytes(weight_dtype, "weight_dtype")
    return routed_expert_params(model) * per


#: Tensor groups of ``calc.quant.tensor_groups`` that live inside the decoder layers.
_LAYER_GROUPS = ("norms", "router", "attention_v", "ffn_down", "experts_down", "experts", "linear")


@lru_cache(maxsize=256)
def _layer_group_shares(model: ModelConfig) -> dict:
    """Per layer, its share of each in-layer tensor group (arrays of length L adding up to 1): from
    ``calc.layers.layer_params``; "linear" (Q, K, O, latent and Mamba projections, what remains) by
    layer count, "norms" by the layer's norms."""
    lp = layer_params(model)
    n = len(lp)
    fields = {"norms": [p.mixer_norm + p.ffn_norm for p in lp], "router": [p.router for p in lp],
              "attention_v": [p.attention_v for p in lp], "ffn_down": [p.ffn_down for p in lp],
              "experts_down": [p.experts_down for p in lp], "experts": [p.experts_up for p in lp],
              "linear": [1.0] * n}
    out = {}
    for g, v in fields.items():
        a = np.asarray(v, dtype=float)
        out[g] = a / a.sum() if a.sum() > 0 else np.full(n, 1.0 / n)
    return out


@lru_cache(maxsize=512)
def stage_weight_bytes(model: ModelConfig, layout: Layout, weight_dtype: str = "bf16") -> tuple:
    """(dense bytes, routed-expert bytes) of each pipeline stage, whole stage (before TP/EP splits).

    A stage holds its whole layers' tensors (``calc.quant.tensor_groups`` spread over the layers by
    ``calc.layers.layer_params``), the first stage the input embedding, the last the LM head (a tied
    model's last stage holds its own copy of the embedding as the head when PP > 1: vLLM's LlamaModel
    builds ``embed_tokens`` on the first rank and, when tied, on the last, vllm/model_executor/models/llama.py).
    Routed experts: ``routed_expert_bytes`` x E spread by the layers' experts. At PP 1 the sum is
    ``weight_bytes``. Llama-3.1-70B bf16 at PP 3 (27/27/26): 48.31, 46.21 and 46.60 GB.
    """
    routed_total = routed_expert_bytes(model, weight_dtype) * (model.n_experts or 0)
    if layout.pp == 1:  # one stage: the whole model, exactly
        return ((weight_bytes(model, weight_dtype) - routed_total, routed_total),)
    per = dtype_bytes(weight_dtype, "weight_dtype")
    groups = ({g: v * per for g, v in tensor_groups(model).items()} if is_plain(weight_dtype)
              else weight_bytes_by_group(model, weight_dtype))
    shares = _layer_group_shares(model)
    moe_share = shares["experts"] if (groups["experts"] + groups["experts_down"]) else np.zeros(model.n_layers)
    out = []
    ranges = stage_ranges(model, layout)
    for i, (a, b) in enumerate(ranges):
        total = sum(groups[g] * float(shares[g][a:b].sum()) for g in _LAYER_GROUPS)
        if i == 0:
            total += groups["embedding"]
        if i == len(ranges) - 1:
            total += groups["head"]
            if model.tie_word_embeddings and layout.pp > 1:
                total += groups["embedding"]
        routed = routed_total * float(moe_share[a:b].sum())
        out.append((total - routed, routed))
    return tuple(out)


def _stage_weights_per_gpu(model: ModelConfig, layout: Layout, weight_dtype: str) -> list[float]:
    """Weight bytes on one GPU of each stage: dense / TP + routed x (E + R) / E / width."""
    e = model.n_experts or 0
    copies = (e + layout.redundant_experts) / e if e else 1.0
    return [d / layout.tp + r * copies / layout.width for d, r in stage_weight_bytes(model, layout, weight_dtype)]


def weight_bytes_per_gpu(model: ModelConfig, layout: Layout, weight_dtype: str = "bf16") -> float:
    """Weight bytes one accelerator of the most loaded stage stores: its stage's dense part / TP + its
    routed experts x (E + R) / E / width (R redundant copies, ``Layout.redundant_experts``), stages of
    whole layers (``stage_weight_bytes``).

    Llama-3.1-70B in bf16 (141.1 GB): 70.55 GB at TP 2, 35.28 GB at TP 4, 17.64 GB at TP 8.
    """
    return max(_stage_weights_per_gpu(model, layout, weight_dtype))


def _stage_cache(model: ModelConfig, a: int, b: int, context_len, kv_dtype: str, sliding: str, mla: str,
                 read: bool):
    """(cache bytes, constant-state bytes, the part of that state each TP rank holds whole) of one sequence in
    layers a..b-1: held, or moved by a decode step (``read``: ``LayerSpec.decode_bytes_read``, the state read and
    written back, ``state_step_bytes``). Recurrent states split by their heads over TP; DeepSeek-V4's compressor
    states do not (vLLM replicates the compressors, ``disable_tp=True``, beside the one-head latent cache).
    Vectorised over S."""
    check_conventions(sliding, mla)
    s = np.asarray(context_len, dtype=float)
    fn = LayerSpec.decode_bytes_read if read else LayerSpec.bytes_held
    total, state, whole = np.zeros_like(s), 0.0, 0.0
    for spec, n in Counter(layer_specs(model, kv_dtype, mla)[a:b]).items():
        total = total + n * np.asarray(fn(spec, s, sliding))
        state += n * (spec.state_step_bytes if read else spec.state_bytes)
        whole += n * (spec.compressor_step_bytes if read else spec.compressor_state_bytes)
    return (float(total) if total.ndim == 0 else total), state, whole


def kv_bytes_per_gpu_per_token(model: ModelConfig, layout: Layout, kv_dtype: str = "bf16",
                               mla: str = "latent", context_len: int | None = None, sliding: str = "cap") -> float:
    """KV bytes one accelerator of the most loaded stage stores per context token of one of its sequences.

    Without ``context_len``: every cache-holding layer counted full (no windows), ``2 x ceil(K / TP) x H x
    L_stage x bytes`` (MLA latent: ``(d_c + d_h^R) x L_stage x bytes``), L_stage the layers of the stage
    with the most cache (``Layout.layers_per_stage``). With ``context_len`` S: the stage's cache of one
    sequence at S, windows and chunks applied (``sliding``), divided by S (the constant state left out:
    ``kv_state_bytes_per_gpu``). Llama-3.1-70B in bf16: 327,680 B per token on one GPU; 40,960 B at TP 8
    (one KV head); 40,960 B at TP 16 as well (one head, stored on two ranks); at TP 8 PP 3 (vLLM's
    27/27/26) 27 x 512 = 13,824 B, where L / PP would say 13,653. DeepSeek-V3 at TP 8: the whole
    latent, 61 x 576 x 2 = 70,272 B.

    Raises:
        ValueError: unknown dtype or convention, a context that is not a positive integer.
    """
    share = kv_share_per_gpu(model, layout.tp, mla)
    share_full = kv_share_per_gpu(model, layout.tp, mla, "full")  # Gemma 4's global layers: their own KV heads
    s = 1.0 if context_len is None else float(check_positive_int(context_len, "context_len"))
    best = 0.0
    for a, b in stage_ranges(model, layout):
        if context_len is None:
            specs = layer_specs(model, kv_dtype, mla)[a:b]
            held = sum(spec.bytes_per_token for spec in specs)
            full = sum(spec.bytes_per_token for spec in specs if spec.kind == "full") if model.has_global_shapes else 0.0
        else:
            total, state, _ = _stage_cache(model, a, b, s, kv_dtype, sliding, mla, False)
            held = (total - state) / s
            full = float(_full_layer_bytes(model, a, b, s, kv_dtype, sliding, mla, False)) / s
        best = max(best, (held - full) * share + full * share_full)
    return float(best)


def kv_state_bytes_per_gpu(model: ModelConfig, layout: Layout, state_dtype: str | None = None) -> float:
    """Constant per-sequence state bytes (Mamba / Gated DeltaNet / lightning layers) one accelerator of the
    stage with the most of it holds: that stage's state / TP (split by its heads); DeepSeek-V4's compressor
    states whole on every rank. 0 for a transformer."""
    best = 0.0
    for a, b in stage_ranges(model, layout):
        specs = layer_specs(model, "bf16", "latent", state_dtype)[a:b]
        best = max(best, sum((spec.state_bytes - spec.compressor_state_bytes) / layout.tp + spec.compressor_state_bytes
                             for spec in specs))
    return best


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
        stage: index of the stage described (the most loaded one: the largest total); stage_layers:
            its whole layers.
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
    stage: int = 0
    stage_layers: int = 0


def gpu_memory(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
               layout: Layout = Layout(), weight_dtype: str = "bf16", kv_dtype: str = "bf16",
               reserve_bytes: float = 0.0, sliding: str = "cap", mla: str = "latent") -> GpuMemory:
    """Memory of one accelerator of ``layout`` serving ``batch`` sequences of ``context_len`` tokens.

    Per stage of whole layers (``Layout.layers_per_stage``): weights ``stage_weight_bytes`` split over
    TP (experts over the width, redundant copies included); KV: the attention group of a GPU serves
    ceil(B / attention_dp) sequences; of each it holds ``kv_share_per_gpu`` of the cache of its stage's
    own layers (windows applied as in ``kv_cache_bytes``; a hybrid model's stage counts its own layer
    kinds). The answer is the stage with the largest total (what sets whether the layout fits). The
    replicated part is the share above 1/TP. At TP = PP = EP = 1 this is ``memory_budget``'s answer.

    Raises:
        ValueError: invalid sizes, dtypes, layout or reserve.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    check_layout(model, layout)
    seqs = math.ceil(b / layout.attention_dp)
    best = None
    for i, (w, rng) in enumerate(zip(_stage_weights_per_gpu(model, layout, weight_dtype), stage_ranges(model, layout))):
        kv, state, replicated = (float(x) for x in _cache_per_gpu(model, s, seqs, layout, kv_dtype, sliding, mla,
                                                                  stage=rng))
        total = w + kv + state + reserve
        if best is None or total > best[5]:
            best = (w, kv, replicated, state, reserve, total, i, rng[1] - rng[0])
    w, kv, replicated, state, reserve, total, i, n = best
    cap = accelerator.memory_bytes
    return GpuMemory(w, kv, replicated, state, reserve, total, cap, cap - total, total <= cap, b, seqs, i, n)


def max_batch_per_replica(model: ModelConfig, accelerator: Accelerator, context_len: int, layout: Layout,
                          weight_dtype: str = "bf16", kv_dtype: str = "bf16", reserve_bytes: float = 0.0,
                          sliding: str = "cap", mla: str = "latent", state_share: float = 0.0) -> int:
    """Largest batch per replica whose per-GPU cache fits beside the per-GPU weights.

    ``min over stages of floor((memory - the stage's weights per GPU - reserve) / its KV per sequence per
    GPU) x attention_dp`` (stages of whole layers); 0 when the weights alone do not fit. At TP = PP = EP
    = 1, ``calc.max_batch``. ``state_share``: the share of that free memory an engine gives a separate pool of
    the constant per-sequence states (Mamba, linear attention: ``state_pool_batch``); the batch is then what the
    rest holds of the attention KV alone (SGLang's split, ``mamba_full_memory_ratio``). 0 (the default): KV and
    states share one pool, per sequence the sum of the two.

    Raises:
        ValueError: invalid context, dtypes, layout, reserve or a share outside [0, 1).
    """
    s = check_positive_int(context_len, "context_len")
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    if not 0.0 <= float(state_share) < 1.0:
        raise ValueError(f"state_share must be in [0, 1); got {state_share!r}")
    check_layout(model, layout)
    out = None
    for w, rng in zip(_stage_weights_per_gpu(model, layout, weight_dtype), stage_ranges(model, layout)):
        free = accelerator.memory_bytes - w - reserve
        if free <= 0:
            return 0
        kv, state, _ = _cache_per_gpu(model, s, 1, layout, kv_dtype, sliding, mla, stage=rng)
        split = state_share > 0 and float(state) > 0
        per_seq = float(kv) if split else float(kv) + float(state)
        room = free * (1.0 - state_share) if split else free
        n = int(math.floor(room / per_seq + 1e-9)) if per_seq > 0 else 10**12
        out = n if out is None else min(out, n)
    return out * layout.attention_dp


def state_pool_batch(model: ModelConfig, accelerator: Accelerator, layout: Layout, weight_dtype: str = "bf16",
                     kv_dtype: str = "bf16", reserve_bytes: float = 0.0, state_share: float = 0.5,
                     slots_per_request: int = 1) -> int | None:
    """Largest batch per replica an engine's separate pool of constant per-sequence states admits: per stage,
    ``floor(floor(state_share x (memory - weights per GPU - reserve) / state bytes per sequence per GPU) /
    slots_per_request)``, the least over stages, x attention_dp; None for a model without such states (no Mamba
    or linear-attention layer). SGLang sizes the pool of a hybrid model's Mamba / Gated DeltaNet states as
    ``mamba_full_memory_ratio / (1 + mamba_full_memory_ratio)`` of the memory left for caches (0.9 / 1.9 by default)
    and caps its running requests at the pool's slots over 3 with the radix cache on (1 without): sgl-project/sglang
    python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py, ``handle_max_mamba_cache``,
    ``_calculate_mamba_ratio`` and ``_resolve_max_num_reqs``. The states are calc's (``calc.layers``: the
    recurrent state in the model's ``ssm_state_dtype``, the convolution state at ``kv_dtype``).

    Raises:
        ValueError: a share outside (0, 1), slots below 1, or an invalid layout or reserve.
    """
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    if not 0.0 < float(state_share) < 1.0:
        raise ValueError(f"state_share must be in (0, 1); got {state_share!r}")
    if int(slots_per_request) < 1:
        raise ValueError(f"slots_per_request must be at least 1; got {slots_per_request!r}")
    check_layout(model, layout)
    out = None
    for w, rng in zip(_stage_weights_per_gpu(model, layout, weight_dtype), stage_ranges(model, layout)):
        _, state, _ = _cache_per_gpu(model, 1, 1, layout, kv_dtype, "cap", "latent", stage=rng)
        if float(state) <= 0:
            continue
        free = max(accelerator.memory_bytes - w - reserve, 0.0)
        n = int(math.floor(state_share * free / float(state) + 1e-9)) // int(slots_per_request)
        out = n if out is None else min(out, n)
    return None if out is None else out * layout.attention_dp


@lru_cache(maxsize=1024)
def _per_sequence_cache(model: ModelConfig, context_len: float, kv_dtype: str, sliding: str, mla: str,
                        read: bool, stage: tuple) -> tuple[float, float, float]:
    """(cache bytes, constant-state bytes, its part held whole on each TP rank) of one sequence at one context
    in the layers ``stage`` = (a, b):
    held, or moved by a decode step (``read``: the state read and written back). Layout-independent
    beyond the stage, so computed once per plan."""
    return _stage_cache(model, stage[0], stage[1], context_len, kv_dtype, sliding, mla, read)


def _cache_per_gpu(model: ModelConfig, context_len, seqs, layout: Layout, kv_dtype: str, sliding: str, mla: str,
                   read: bool = False, stage: tuple | None = None):
    """(attention KV bytes, constant-state bytes, replicated KV bytes) on one GPU of the stage holding layers
    ``stage`` = (a, b) (default: the first stage) for ``seqs`` sequences.

    The attention cache is split by KV heads (``kv_share_per_gpu``), the constant per-sequence state of
    linear/Mamba layers by its heads, 1/TP; each stage holds its own layers' cache. ``read=True``: what a
    decode step moves (``calc.layers.LayerSpec.decode_bytes_read``: the state is read and written back).
    Vectorised over seqs/context.
    """
    rng = tuple(stage) if stage is not None else stage_ranges(model, layout)[0]
    n = np.asarray(seqs, dtype=float)
    if np.ndim(context_len) == 0:  # the usual case: one context, many batch sizes (cached per sequence)
        total_one, state_one, whole_one = _per_sequence_cache(model, float(context_len), kv_dtype, sliding, mla, read,
                                                              rng)
    else:
        total_one, state_one, whole_one = _stage_cache(model, rng[0], rng[1], context_len, kv_dtype, sliding, mla,
                                                       read)
    total, state, whole = np.asarray(total_one) * n, state_one * n, whole_one * n
    attention = total - state
    share = kv_share_per_gpu(model, layout.tp, mla)
    if model.has_global_shapes:  # Gemma 4: its global layers split by their own KV heads (fewer: replicated sooner)
        full = np.asarray(_full_layer_bytes(model, rng[0], rng[1], context_len, kv_dtype, sliding, mla, read)) * n
        share_full = kv_share_per_gpu(model, layout.tp, mla, "full")
        return ((attention - full) * share + full * share_full, (state - whole) / layout.tp + whole,
                (attention - full) * max(0.0, share - 1.0 / layout.tp) + full * max(0.0, share_full - 1.0 / layout.tp))
    return (attention * share, (state - whole) / layout.tp + whole,
            attention * max(0.0, share - 1.0 / layout.tp))


def memory_per_gpu_array(model: ModelConfig, layout: Layout, batch, context_len: int, weight_dtype: str = "bf16",
                         kv_dtype: str = "bf16", sliding: str = "cap", mla: str = "latent"):
    """Weights + KV bytes on one accelerator of ``layout``'s most loaded stage for an array of batch sizes
    per replica (``gpu_memory`` without the reserve, vectorised; no validation)."""
    seqs = np.ceil(np.asarray(batch, dtype=float) / layout.attention_dp)
    out = None
    for w, rng in zip(_stage_weights_per_gpu(model, layout, weight_dtype), stage_ranges(model, layout)):
        kv, state, _ = _cache_per_gpu(model, context_len, seqs, layout, kv_dtype, sliding, mla, stage=rng)
        total = w + kv + state
        out = total if out is None else np.maximum(out, total)
    return out
