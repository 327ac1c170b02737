"""Many accelerators: tensor, pipeline and expert parallelism, replicas; what one GPU holds and the
step of a layout.

A replica of the model runs on ``gpus_per_replica = max(TP, EP) x PP`` accelerators:

- Tensor parallelism (TP; Shoeybi et al. 2019, "Megatron-LM", section 3): every matrix of a layer is
  split over TP ranks (attention by heads, the MLP by columns then rows), so each rank stores and
  reads 1/TP of the weights, and each layer ends its attention and its MLP with an all-reduce of
  the activations: two all-reduces per layer and step.
- Pipeline parallelism (PP; Huang et al. 2019, "GPipe", section 2.2): the layers are cut into PP
  stages of whole layers, as the engines cut them (``pipeline_stage_layers``: vLLM's or SGLang's
  rule, or a split by hand); the activations pass from stage to stage (point to point), and with m
  micro-batches a stage idles for a bubble of (PP - m) stage times in every cycle when m < PP.
- Expert parallelism (EP; Lepikhin et al. 2020, "GShard", section 2.2; DeepSeek-V3 report,
  section 3.4): the routed experts of a mixture-of-experts layer are spread over EP ranks; each
  MoE layer sends every token to the ranks of its experts and back (two all-to-alls). When EP > TP,
  attention runs data-parallel over EP / TP groups of TP ranks ("DP attention"), each holding the
  KV cache of its own sequences.
- Replicas (DP): independent copies; they multiply throughput and GPUs and change no per-GPU number.

What one GPU holds: its stage's dense weights / TP, its stage's routed experts x (E + R) / E / max(TP, EP)
(R redundant copies of hot experts, DeepSeek-V3 report section 3.4); of the KV cache, ceil(K / TP) of
the K heads of its sequences, on its stage's own layers (a hybrid model's stage counts its own layer
kinds): with TP > K every KV head is stored TP / K times (Llama-3.1-70B, K = 8, at TP 16: twice).
MLA's latent is not split by heads: every TP rank holds the whole latent of its sequences (why engines
serve DeepSeek with DP attention). Per-GPU memory, the batch ceiling and the step follow the most loaded
stage.

Which layouts exist: the engines' rule, checked in one place (``check_layout``, ``tp_refusal``): TP must
divide the query heads, and divide the KV heads or be a multiple of them (vLLM's and SGLang's
``QKVParallelLinear``); EP must divide the experts plus their redundant copies.

Collectives and links: ``calc.collectives``.

The step of one GPU follows the roofline of ``calc.roofline`` (the inference course, week 11, step 4) on its share:
``stage = kv_s + max(weights_s, compute_s) + collectives``; one decode token of a sequence takes
``max(m, PP)`` stage times (of the slowest stage) plus PP - 1 hops. Lower bounds, like the rest of
calc: communication is not overlapped with compute (engines overlap a little of it), and every layer of
a MoE model counts as a MoE layer in the collectives.

Planning on top of this step (frontier, capacity plan, disaggregated pools, which GPUs): ``calc.planning``.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .checks import check_choice, check_nonneg_number, check_positive_int
from .collectives import all_to_all_s, link_for_group, resolve_interconnect, ring_all_reduce_s
from .dtypes import dtype_bytes
from .hardware import Accelerator
from .kv import MLA_CONVENTIONS, kv_cache_bytes_array
from .layers import LayerSpec, check_conventions, layer_params, layer_specs
from .memory import expected_experts_touched, routed_expert_params, weight_bytes, weight_bytes_read
from .quant import is_plain, tensor_groups, weight_bytes_by_group
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
        redundant_experts: extra copies of (hot) routed experts per MoE layer spread over the EP group,
            R: each EP rank holds (E + R) / EP experts (DeepSeek-V3 report, section 3.4: prefill EP 32 with
            32 redundant experts, 9 per GPU; decode EP 320, 64 GPUs for redundant and shared experts, 1
            expert per GPU). 0: every expert once.
        pp_rule: how the layers are cut into stages, "vllm" or "sglang" (``PP_RULES``,
            ``pipeline_stage_layers``); ignored when ``stage_layers`` is given.
        stage_layers: the split set by hand, layers per stage (vLLM's ``VLLM_PP_LAYER_PARTITION``, SGLang's
            ``SGLANG_PP_LAYER_PARTITION``), or None for the rule's split.

    Derived: ``width = max(tp, ep)`` ranks per stage, ``attention_dp = width / tp`` attention groups
    (DP attention), ``gpus_per_replica = width x pp``, ``n_gpus = gpus_per_replica x replicas``.

    Raises:
        ValueError: a degree that is not a positive integer, tp and ep that do not divide the larger of
            the two (engines need whole groups), negative redundant experts or redundant experts without
            EP, an unknown pp_rule, a hand split whose length is not pp or with a stage of no layer.
    """

    tp: int = 1
    pp: int = 1
    ep: int = 1
    replicas: int = 1
    redundant_experts: int = 0
    pp_rule: str = "vllm"
    stage_layers: tuple | None = None

    def __post_init__(self):
        for f in ("tp", "pp", "ep", "replicas"):
            check_positive_int(getattr(self, f), f)
        if self.width % self.tp or self.width % self.ep:
            raise ValueError(f"tp ({self.tp}) and ep ({self.ep}) must divide the larger of the two "
                             "(each stage is whole groups of ranks)")
        r = check_nonneg_number(self.redundant_experts, "redundant_experts")
        if r != int(r):
            raise ValueError(f"redundant_experts must be a whole number of experts, got {self.redundant_experts}")
        if r and self.ep == 1:
            raise ValueError("redundant experts are copies spread over an expert-parallel group: they need ep > 1")
        check_choice(self.pp_rule, PP_RULES, f"pp_rule must be one of {', '.join(PP_RULES)} (vLLM's or SGLang's "
                     "split of the layers into stages)")
        if self.stage_layers is not None:
            split = tuple(self.stage_layers)
            if len(split) != self.pp or any(check_positive_int(n, "layers of a stage") < 1 for n in split):
                raise ValueError(f"stage_layers must give {self.pp} positive layer counts (one per stage), "
                                 f"got {split}")
            object.__setattr__(self, "stage_layers", tuple(int(n) for n in split))

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
        """Short name: "TP8", "TP4 PP2", "TP1 EP8", "TP4 EP32+32R" (replicas left out; R redundant experts)."""
        out = f"TP{self.tp}" + (f" PP{self.pp}" if self.pp > 1 else "") + (f" EP{self.ep}" if self.ep > 1 else "")
        return out + (f"+{self.redundant_experts}R" if self.redundant_experts else "")

    def layers_per_stage(self, n_layers: int) -> tuple[int, ...]:
        """Whole layers of each stage, first to last (``pipeline_stage_layers`` under this layout's rule,
        or the hand split)."""
        return pipeline_stage_layers(n_layers, self.pp, self.pp_rule, self.stage_layers)

    def convention(self, model: ModelConfig) -> str:
        """The engine conventions this layout's numbers follow, in words, for a page to show: the
        stage split (whose rule, or by hand), replicated KV heads (TP > K), redundant experts."""
        parts = []
        if self.pp > 1:
            split = "/".join(str(n) for n in self.layers_per_stage(model.n_layers))
            who = "set by hand" if self.stage_layers is not None else f"{PP_RULE_NAMES[self.pp_rule]}'s split"
            parts.append(f"layers per stage {split} ({who})")
        if model.attention != "mla" and self.tp > model.n_kv_heads:
            parts.append(f"each of the {model.n_kv_heads} KV heads stored on {self.tp // model.n_kv_heads} ranks "
                         "(TP > KV heads: vLLM and SGLang replicate them)")
        elif model.attention == "mla" and self.tp > 1:
            parts.append("the MLA latent whole on every TP rank")
        if self.redundant_experts:
            per = (model.n_experts + self.redundant_experts) // self.ep if model.is_moe else 0
            parts.append(f"{self.redundant_experts} redundant experts per MoE layer, {per} experts per GPU "
                         "(DeepSeek-V3's deployment)")
        if self.width > self.tp:
            parts.append(f"attention data-parallel in {self.attention_dp} groups of TP{self.tp}")
        return "; ".join(parts) if parts else "one GPU per stage group, nothing split unevenly"


#: Pipeline split rules of the serving engines.
PP_RULES = ("vllm", "sglang")
PP_RULE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}


def pipeline_stage_layers(n_layers: int, pp: int, rule: str = "vllm", stage_layers=None) -> tuple[int, ...]:
    """Whole decoder layers held by each of ``pp`` pipeline stages, first to last.

    Both engines give every stage ``L // PP`` layers and place the remainder ``r = L mod PP`` apart:
    - "vllm" (vllm/distributed/utils.py, ``get_pp_indices``): one more layer on each of the r stages
      just before the last (``partitions[-i] += 1`` for i = 2 .. r + 1): the last stage also runs the
      final norm and the LM head, and with r <= PP - 2 the first (the embedding) is spared too.
    - "sglang" (python/sglang/srt/distributed/utils.py, ``get_pp_indices``): one more layer on each of
      the last r stages.
    Llama-3.1-70B (80 layers) at PP 3: vLLM 27/27/26, SGLang 26/27/27; DeepSeek-V3 (61) at PP 4: vLLM
    15/15/16/15. ``stage_layers`` sets the split by hand, as both engines' environment variable
    (``VLLM_PP_LAYER_PARTITION``, ``SGLANG_PP_LAYER_PARTITION``) does; it must have PP entries adding
    up to L.

    Raises:
        ValueError: pp above the layers, an unknown rule, or a hand split that does not add up to L.
    """
    n = check_positive_int(n_layers, "n_layers")
    p = check_positive_int(pp, "pp")
    if p > n:
        raise ValueError(f"pp ({p}) cannot exceed the {n} layers: a stage holds whole layers")
    if stage_layers is not None:
        split = tuple(int(x) for x in stage_layers)
        if len(split) != p or sum(split) != n or min(split) < 1:
            raise ValueError(f"a hand split must give {p} stages of at least one layer adding up to the {n} "
                             f"layers, got {split} (sum {sum(split)})")
        return split
    check_choice(rule, PP_RULES, f"pp_rule must be one of {', '.join(PP_RULES)}")
    base, rem = divmod(n, p)
    parts = [base] * p
    if rule == "vllm":
        for i in range(2, rem + 2):
            parts[-i] += 1
    else:
        for i in range(p - rem, p):
            parts[i] += 1
    return tuple(parts)


def stage_ranges(model: ModelConfig, layout: Layout) -> tuple[tuple[int, int], ...]:
    """(first layer, end layer) of each stage of ``layout`` (end exclusive), from ``layers_per_stage``."""
    out, start = [], 0
    for k in layout.layers_per_stage(model.n_layers):
        out.append((start, start + k))
        start += k
    return tuple(out)


def tp_refusal(model: ModelConfig, tp: int) -> str | None:
    """Why vLLM and SGLang refuse tensor parallelism ``tp`` for ``model``, or None when they accept it.

    Softmax attention (MHA/GQA/MQA): the query heads N must divide by TP (vLLM's
    ``ModelConfig.verify_with_parallel_config``: "Total number of attention heads must be divisible by
    tensor parallel size"), and either TP divides the KV heads K (each rank holds K / TP) or K divides
    TP (each rank holds one head, every head stored TP / K times): vLLM's ``QKVParallelLinear``
    (vllm/model_executor/layers/linear.py: ``divide(total_num_kv_heads, tp_size)`` or
    ``num_kv_head_replicas = divide(tp_size, total_num_kv_heads)``), SGLang's copy of it
    (python/sglang/srt/layers/linear.py). Phi-4 (N = 40, K = 10) at TP 4: 10 / 4 and 4 / 10 are not whole,
    refused; at TP 8 likewise; TP 2 and TP 10 are accepted. MLA: the query heads must divide by TP (the
    latent is not split by heads).
    """
    t = check_positive_int(tp, "tp")
    if model.n_heads % t:
        return (f"vLLM and SGLang need the {model.n_heads} query heads of {model.name} to divide by TP; "
                f"TP {t} does not divide them")
    if model.attention != "mla" and t > 1:
        k = model.n_kv_heads
        if k % t and t % k:
            return (f"vLLM and SGLang split the {k} KV heads of {model.name} evenly (TP divides K) or replicate "
                    f"them (K divides TP); TP {t} does neither ({k} / {t} and {t} / {k} are not whole)")
    return None


def check_layout(model: ModelConfig, layout: Layout) -> Layout:
    """Validate ``layout`` for ``model`` as the serving engines do, and return it. The one check every
    entry of a layout goes through (the step and memory functions with tp/pp/ep, ``make_layout``, the
    planning grids, the pages).

    Raises:
        ValueError: with the engine's reason: tp refused by ``tp_refusal``; pp above the layer count or a
            hand split that does not add up to the layers (``pipeline_stage_layers``); ep > 1 for a dense
            model; ep not dividing the routed experts plus the redundant copies (each EP rank holds the same
            number: vLLM's EPLB ``num_redundant_experts``, DeepSeek-V3 report section 3.4).
    """
    why = tp_refusal(model, layout.tp)
    if why:
        raise ValueError(why)
    pipeline_stage_layers(model.n_layers, layout.pp, layout.pp_rule, layout.stage_layers)
    if layout.ep > 1:
        if not model.is_moe:
            raise ValueError(f"ep > 1 needs a mixture-of-experts model; {model.name} is dense")
        slots = model.n_experts + layout.redundant_experts
        if slots % layout.ep:
            extra = f" plus {layout.redundant_experts} redundant" if layout.redundant_experts else ""
            raise ValueError(f"ep ({layout.ep}) must divide the {model.n_experts} routed experts{extra} of "
                             f"{model.name} ({slots}): every EP rank holds the same number of experts")
    return layout


def make_layout(model: ModelConfig, tp: int = 1, pp: int = 1, ep: int = 1, replicas: int = 1,
                redundant_experts: int = 0, pp_rule: str = "vllm", stage_layers=None) -> Layout:
    """``Layout(tp, pp, ep, replicas, redundant_experts, pp_rule, stage_layers)`` checked against ``model``
    (``check_layout``).

    Raises:
        ValueError: a layout the engines refuse, with their reason.
    """
    return check_layout(model, Layout(tp, pp, ep, replicas, redundant_experts, pp_rule,
                                      None if stage_layers is None else tuple(stage_layers)))


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
    """(cache bytes, constant-state bytes) of one sequence in layers a..b-1: held, or moved by a decode
    step (``read``: ``LayerSpec.decode_bytes_read``, the state read and written back). Vectorised over S."""
    check_conventions(sliding, mla)
    s = np.asarray(context_len, dtype=float)
    fn = LayerSpec.decode_bytes_read if read else LayerSpec.bytes_held
    total, state = np.zeros_like(s), 0.0
    for spec, n in Counter(layer_specs(model, kv_dtype, mla)[a:b]).items():
        total = total + n * np.asarray(fn(spec, s, sliding))
        state += n * spec.state_bytes
    state *= 2.0 if read else 1.0
    return (float(total) if total.ndim == 0 else total), state


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
    s = 1.0 if context_len is None else float(check_positive_int(context_len, "context_len"))
    best = 0.0
    for a, b in stage_ranges(model, layout):
        if context_len is None:
            held = sum(spec.bytes_per_token for spec in layer_specs(model, kv_dtype, mla)[a:b])
        else:
            total, state = _stage_cache(model, a, b, s, kv_dtype, sliding, mla, False)
            held = (total - state) / s
        best = max(best, held * share)
    return float(best)


def kv_state_bytes_per_gpu(model: ModelConfig, layout: Layout, state_dtype: str | None = None) -> float:
    """Constant per-sequence state bytes (Mamba / Gated DeltaNet / lightning layers) one accelerator of the
    stage with the most of it holds: that stage's state / TP (split by its heads). 0 for a transformer."""
    best = 0.0
    for a, b in stage_ranges(model, layout):
        best = max(best, sum(spec.state_bytes for spec in layer_specs(model, "bf16", "latent", state_dtype)[a:b]))
    return best / layout.tp


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
                          sliding: str = "cap", mla: str = "latent") -> int:
    """Largest batch per replica whose per-GPU cache fits beside the per-GPU weights.

    ``min over stages of floor((memory - the stage's weights per GPU - reserve) / its KV per sequence per
    GPU) x attention_dp`` (stages of whole layers); 0 when the weights alone do not fit. At TP = PP = EP
    = 1, ``calc.max_batch``.

    Raises:
        ValueError: invalid context, dtypes, layout or reserve.
    """
    s = check_positive_int(context_len, "context_len")
    reserve = check_nonneg_number(reserve_bytes, "reserve_bytes")
    check_layout(model, layout)
    out = None
    for w, rng in zip(_stage_weights_per_gpu(model, layout, weight_dtype), stage_ranges(model, layout)):
        free = accelerator.memory_bytes - w - reserve
        if free <= 0:
            return 0
        kv, state, _ = _cache_per_gpu(model, s, 1, layout, kv_dtype, sliding, mla, stage=rng)
        per_seq = float(kv) + float(state)
        n = int(math.floor(free / per_seq + 1e-9)) if per_seq > 0 else 10**12
        out = n if out is None else min(out, n)
    return out * layout.attention_dp


@lru_cache(maxsize=1024)
def _per_sequence_cache(model: ModelConfig, context_len: float, kv_dtype: str, sliding: str, mla: str,
                        read: bool, stage: tuple) -> tuple[float, float]:
    """(cache bytes, constant-state bytes) of one sequence at one context in the layers ``stage`` = (a, b):
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
        total_one, state_one = _per_sequence_cache(model, float(context_len), kv_dtype, sliding, mla, read, rng)
        total, state = total_one * n, state_one * n
    else:
        total_one, state_one = _stage_cache(model, rng[0], rng[1], context_len, kv_dtype, sliding, mla, read)
        total, state = np.asarray(total_one) * n, state_one * n
    attention = total - state
    share = kv_share_per_gpu(model, layout.tp, mla)
    return (attention * share, state / layout.tp,
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
            ar = layers * per_layer * ring_all_reduce_s(seqs * t * d_bytes, tp, group)
        if layout.ep > 1:
            msg = bm * t / width * model.n_experts_per_token * d_bytes
            a2a = layers * 2 * all_to_all_s(msg, layout.ep, group)
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
