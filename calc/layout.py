"""Layouts: tensor, pipeline and expert parallelism, replicas; which layouts the engines accept.

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

Which layouts exist: the engines' rule, checked in one place (``check_layout``, ``tp_refusal``): TP must
divide the query heads, and divide the KV heads or be a multiple of them (vLLM's and SGLang's
``QKVParallelLinear``); EP must divide the experts plus their redundant copies.

What one GPU of a layout holds: ``calc.gpu_share``; the step of a layout: ``calc.parallel``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .checks import check_choice, check_nonneg_number, check_positive_int
from .models import ModelConfig


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
        elif model.attention != "mla" and self.tp > model.kv_heads_of("full"):  # Gemma 4's global layers
            k = model.kv_heads_of("full")
            parts.append(f"each of the global layers' {k} KV heads stored on {self.tp // k} ranks (TP > their KV "
                         "heads: vLLM and SGLang replicate them)")
        elif model.attention == "mla" and self.tp > 1:
            parts.append("the MLA latent whole on every TP rank")
        if self.redundant_experts:
            per = (model.n_experts + self.redundant_experts) // self.ep if model.is_moe else 0
            experts = f"{per} expert" if per == 1 else f"{per} experts"
            parts.append(f"{self.redundant_experts} redundant experts per MoE layer, {experts} per GPU "
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
        return (f"the serving engines split the {model.n_heads} query heads of {model.name} evenly over the TP ranks "
                f"(vLLM's and SGLang's checks refuse it otherwise); "
                f"TP {t} does not divide them")
    if model.attention != "mla" and t > 1:
        for k in dict.fromkeys((model.n_kv_heads, model.kv_heads_of("full"))):  # Gemma 4: its global layers' too
            if k % t and t % k:
                return (f"the serving engines split the {k} KV heads of {model.name} evenly (TP divides K) or "
                        f"replicate them (K divides TP), as vLLM's and SGLang's checks require; TP {t} does neither "
                        f"({k} / {t} and {t} / {k} are not whole)")
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
            extra = (f" plus {int(layout.redundant_experts):,} redundant copies ({int(slots):,} in all)"
                     if layout.redundant_experts else "")
            raise ValueError(f"EP {layout.ep:,} must divide the {model.n_experts:,} routed experts of "
                             f"{model.name}{extra}: every EP rank holds the same number of experts")
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
