"""Model architectures: the ``ModelConfig`` dataclass and the preset catalogue (``calc.config_json``
reads a Hugging Face config.json into a ``ModelConfig``).

The catalogue lives in ``calc/data/models.json`` (explicit fields, one entry per preset, each with its
source); the verbatim Hugging Face ``config.json`` of each preset lives in ``calc/data/hf_configs/``.
The two are transcribed independently, and the tests check that ``from_hf_config`` of the second
reproduces the first exactly (parameter count included).
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .checks import check_positive_int
from .dtypes import dtype_bytes
from .layers import FFN_KINDS, LAYER_KIND_FIELDS, LAYER_KINDS
from .limits import FIELD_LIMITS, check_model_field

DATA_DIR = Path(__file__).parent / "data"
ATTENTION_KINDS = ("mha", "gqa", "mqa", "mla")


OPTIONAL_SHAPE_FIELDS = ("attention_chunk_size", "linear_n_key_heads", "linear_n_value_heads", "linear_key_head_dim",
                    "linear_value_head_dim", "linear_conv_kernel", "ssm_d_inner", "ssm_d_state", "ssm_conv_kernel",
                    "ssm_n_heads", "ssm_head_dim", "ssm_n_groups", "index_n_heads", "index_head_dim", "index_topk",
                    "csa_compress_ratio", "hca_compress_ratio", "index_block_size")



@dataclass(frozen=True)
class ModelConfig:
    """The shapes of a decoder-only transformer that inference arithmetic needs.

    Notation of the course material (DESIGN.md): L = ``n_layers``, D = ``d_model``, N = ``n_heads``,
    K = ``n_kv_heads``, H = ``head_dim``, F = ``d_ff``, V = ``vocab_size``.

    Fields:
        name: display name.
        n_params: total parameter count (all experts, embeddings included).
        n_layers, d_model, n_heads, n_kv_heads, head_dim, d_ff, vocab_size: the shapes; ``head_dim``
            is the config's own value where it gives one (Qwen3, Gemma), never assumed D/N.
            For MoE models ``d_ff`` is one expert's width.
        attention: "mha" (K = N), "gqa" (1 < K < N, N divisible by K), "mqa" (K = 1) or "mla".
        kv_lora_rank, qk_rope_head_dim: MLA latent width d_c and decoupled RoPE width d_h^R
            (DeepSeek-V2 report, section 2.1); the cache holds d_c + d_h^R elements per token and layer.
        qk_nope_head_dim, v_head_dim: MLA per-head widths, used when the cache is stored expanded.
        sliding_window: window W in tokens of the sliding layers (None: no sliding layers).
        layer_types: per-layer kind, one of ``LAYER_KINDS`` (None: all layers sliding when a window
            is given, else all full). "chunked": local attention in chunks of
            ``attention_chunk_size`` (Llama 4); "linear_attention": Gated DeltaNet (Qwen3-Next);
            "lightning": MiniMax's lightning attention; "sparse": MiniMax-M3's block-sparse attention (MSA: full
            K/V per token plus an indexer key, each query attending to the top-k blocks the indexer picks); "mamba"/"mamba2": SSM mixers (Jamba;
            Nemotron-H, Granite-4); "parallel_mamba2": attention and Mamba2 side by side in one
            layer (Falcon-H1); "mlp_only": no token mixer (Nemotron-H's "-"); "csa" / "hca": DeepSeek-V4's
            compressed sparse / heavily compressed attention (a window of ``sliding_window`` tokens plus
            one entry per ``csa_compress_ratio`` / ``hca_compress_ratio`` tokens). ``calc.layers``
            turns each into what it holds.
        n_experts, n_experts_per_token, n_active_params: mixture of experts (routed experts E, top-k,
            parameters used per token).
        kv_sharing: cross-layer KV sharing factor (Brandon et al. 2024, CLA): this many adjacent layers
            share one KV cache; 1 means none.
        tie_word_embeddings: whether the LM head shares the embedding matrix.
        max_context_len: the context length the model was trained for (``max_position_embeddings``); pages
            mark a context beyond it.
        attention_chunk_size: chunk C of the "chunked" layers (Llama 4's ``attention_chunk_size``).
        n_kv_shared_layers: the last this many layers reuse the KV cache of an earlier layer of the
            same kind and own none (Gemma-3n's ``num_kv_shared_layers``).
        linear_n_key_heads, linear_n_value_heads, linear_key_head_dim, linear_value_head_dim,
            linear_conv_kernel: Gated DeltaNet shapes of the "linear_attention" layers (Qwen3-Next's
            ``linear_*`` keys).
        ssm_d_inner, ssm_d_state, ssm_conv_kernel, ssm_n_heads, ssm_head_dim, ssm_n_groups: Mamba
            shapes (inner width, state size N, conv kernel; Mamba2 heads, head width and B/C groups).
        index_n_heads, index_head_dim, index_topk: DeepSeek-V3.2's lightning indexer (DSA): its
            heads and key width, and the k latent entries each query attends to (DeepSeek-V4: the indexer
            of its csa layers, k of the compressed entries; MiniMax-M3: the indexer of its "sparse" layers, k of
            the blocks of ``index_block_size`` tokens).
        index_block_size: tokens per block an indexer selects (MiniMax-M3's ``sparse_block_size``, 128: its
            top-k counts blocks, the last of them the query's own); None: it selects single tokens (DSA).
        index_key_dtype: the dtype of the indexer's key cache (MiniMax-M3: "bf16", the model's dtype, as SGLang's
            ``MiniMaxSparseKVPool`` keeps it); None: DSA's fp8 keys with one fp32 scale per 128 elements.
        csa_compress_ratio, hca_compress_ratio: DeepSeek-V4's tokens per compressed entry of its "csa"
            layers (4: an indexer selects top-k entries) and its "hca" layers (128: every entry attended),
            read from the config's ``compress_ratios``; None for models without such layers.
        ssm_state_dtype: dtype of the SSM / recurrent state of constant-state layers (the config's
            ``mamba_ssm_dtype`` or ``mamba_ssm_cache_dtype``; default "fp32").
        ffn_layer_types: per-layer FFN, one of ``FFN_KINDS``: "dense" (one MLP of width ``d_ff_dense``),
            "moe" (router, routed experts of width ``d_ff``, shared experts of ``d_ff_shared``) or
            "none" (Nemotron-H's Mamba and attention layers). None: every layer "moe" for a mixture of
            experts, else "dense" (DeepSeek's ``first_k_dense_replace``, Llama 4's interleaving and
            hybrid patterns give a list).
        d_ff_dense: width of the dense FFN layers when it differs from ``d_ff`` (DeepSeek-V3: 18,432
            beside experts of 2,048); None: ``d_ff``.
        d_ff_shared: summed width of the always-active shared experts of each MoE layer (DeepSeek:
            ``n_shared_experts`` x expert width; Llama 4: ``intermediate_size``; Qwen-MoE:
            ``shared_expert_intermediate_size``); 0 for none.
        ffn_matrices: weight matrices of one FFN or expert: 3 for a gated MLP (SwiGLU: gate, up,
            down), 2 for a plain one (GPT-2, Falcon, Nemotron-H's squared ReLU: up, down).
        global_head_dim, n_global_kv_heads: head width and KV heads of the "full" layers where they differ from
            the others' ``head_dim`` and ``n_kv_heads`` (Gemma 4: 512-wide heads and 4 or 2 KV heads on its
            global layers, beside 256-wide heads and 16 or 8 KV heads on its sliding ones; transformers'
            Gemma4TextConfig ``global_head_dim``, ``num_global_key_value_heads``); None: the same as the others.
        global_k_eq_v: the "full" layers have no V projection, their values taken from the K projection's output
            (Gemma 4's ``attention_k_eq_v``); their cache still holds a key and a value per KV head (the key
            normed and rotated, the value normed apart: transformers' Gemma4TextAttention).
        moe_latent_dim: width the routed experts work in when it is not D (Nemotron-3 Super's latent MoE,
            ``moe_latent_size``: a D x d_latent projection before the experts and one back after, so each
            expert holds ``ffn_matrices`` x d_latent x ``d_ff``); None: the experts read and write D.
        learned_positions: rows P of a learned absolute position table (GPT-2's ``wpe``, P x D, of
            ``n_positions`` rows), a lookup like the token embedding; None for rotary or relative
            positions (no table).
        n_mtp_layers: multi-token-prediction modules shipped with the checkpoint (DeepSeek-V3's
            ``num_nextn_predict_layers``, Qwen3-Next / Qwen3.5's ``mtp_num_hidden_layers``); 0 for none.
        n_mtp_params: their parameters as the checkpoint stores them, *not* in ``n_params`` (DeepSeek-V3:
            671B main + 14B MTP = 685B on Hugging Face). Engines load them only for MTP speculative
            decoding (vLLM ``--speculative-config '{"method": "deepseek_mtp"}'`` / "qwen3_next_mtp",
            SGLang ``--speculative-algorithm EAGLE`` / NEXTN); by default they are not loaded
            (``params_loaded``).
        n_mtp_active_params: parameters an MTP module uses per drafted token (its layer's active
            parameters, the projection and the LM head's matmul).
        source: where the numbers come from (not compared).
        checkpoint_format: the weight format the checkpoint itself is stored in, read from a config.json's
            ``quantization_config`` (``calc.checkpoint_format.checkpoint_weight_format``: "mxfp4", "fp8-block",
            "int4-g128", ...); a preset carries its published checkpoint's (gpt-oss: "mxfp4"; DeepSeek-V3,
            Kimi-K2: "fp8-block"), its source named in ``source``; None for a 16-bit checkpoint (not compared).
            Pages use it as the default weight format; calc's functions never read it (their dtype arguments
            keep their own defaults).

    Raises:
        ValueError: a non-positive shape, an unknown attention kind, K not matching the attention
            kind, MLA without ``kv_lora_rank``/``qk_rope_head_dim``, a window without being positive,
            ``layer_types`` of the wrong length or with unknown names.
    """

    name: str
    n_params: int
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    vocab_size: int
    attention: str = "gqa"
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    layer_types: tuple[str, ...] | None = None
    n_experts: int | None = None
    n_experts_per_token: int | None = None
    n_active_params: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    kv_sharing: int = 1
    tie_word_embeddings: bool = False
    max_context_len: int | None = None
    attention_chunk_size: int | None = None
    n_kv_shared_layers: int = 0
    linear_n_key_heads: int | None = None
    linear_n_value_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel: int | None = None
    ssm_d_inner: int | None = None
    ssm_d_state: int | None = None
    ssm_conv_kernel: int | None = None
    ssm_n_heads: int | None = None
    ssm_head_dim: int | None = None
    ssm_n_groups: int | None = None
    index_n_heads: int | None = None
    index_head_dim: int | None = None
    index_topk: int | None = None
    csa_compress_ratio: int | None = None
    hca_compress_ratio: int | None = None
    index_block_size: int | None = None
    index_key_dtype: str | None = None
    ssm_state_dtype: str = "fp32"
    ffn_layer_types: tuple[str, ...] | None = None
    d_ff_dense: int | None = None
    d_ff_shared: int = 0
    ffn_matrices: int = 3
    moe_latent_dim: int | None = None
    global_head_dim: int | None = None
    n_global_kv_heads: int | None = None
    global_k_eq_v: bool = False
    learned_positions: int | None = None
    n_mtp_layers: int = 0
    n_mtp_params: int = 0
    n_mtp_active_params: int = 0
    source: str = field(default="", compare=False)
    checkpoint_format: str | None = field(default=None, compare=False)

    def __post_init__(self):
        for f in ("n_params", "n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff",
                  "vocab_size", "kv_sharing"):
            check_positive_int(getattr(self, f), f)
        for f in FIELD_LIMITS:  # plausible ranges (calc/limits.py): no size nobody could run
            if getattr(self, f) is not None:
                check_model_field(getattr(self, f), f)
        if self.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTION_KINDS)}; got {self.attention!r}")
        n, k = self.n_heads, self.n_kv_heads
        if self.attention == "mha" and k != n:
            raise ValueError(f"MHA needs n_kv_heads == n_heads ({n}), got n_kv_heads={k}")
        if self.attention == "mqa" and k != 1:
            raise ValueError(f"MQA needs n_kv_heads == 1, got {k}")
        if self.attention == "gqa" and (k > n or n % k):
            raise ValueError(f"GQA needs n_kv_heads to divide n_heads ({n}), got n_kv_heads={k}")
        if self.attention == "mla":
            if self.kv_lora_rank is None or self.qk_rope_head_dim is None:
                raise ValueError("MLA needs kv_lora_rank and qk_rope_head_dim (the latent and RoPE widths)")
            check_positive_int(self.kv_lora_rank, "kv_lora_rank")
            check_positive_int(self.qk_rope_head_dim, "qk_rope_head_dim")
        if self.sliding_window is not None:
            check_positive_int(self.sliding_window, "sliding_window")
        dtype_bytes(self.ssm_state_dtype, "ssm_state_dtype")
        if self.index_key_dtype is not None:
            dtype_bytes(self.index_key_dtype, "index_key_dtype")
        if self.checkpoint_format is not None:
            dtype_bytes(self.checkpoint_format, "checkpoint_format")
        for f in OPTIONAL_SHAPE_FIELDS:
            if getattr(self, f) is not None:
                check_positive_int(getattr(self, f), f)
        if not isinstance(self.n_kv_shared_layers, int) or not 0 <= self.n_kv_shared_layers < self.n_layers:
            raise ValueError(f"n_kv_shared_layers must be an integer from 0 to n_layers - 1 ({self.n_layers - 1}), "
                             f"got {self.n_kv_shared_layers!r}")
        if self.layer_types is not None:
            lt = tuple(self.layer_types)
            object.__setattr__(self, "layer_types", lt)
            if len(lt) != self.n_layers:
                raise ValueError(f"layer_types has {len(lt)} entries but the model has {self.n_layers} layers")
            bad = sorted(set(lt) - set(LAYER_KINDS))
            if bad:
                raise ValueError(f"layer_types entries must be one of {', '.join(LAYER_KINDS)}; got {bad}")
        kinds = set(self.layer_kinds)
        if "sliding" in kinds and self.sliding_window is None:
            raise ValueError("layer_types has sliding layers but sliding_window is not set")
        for kind, needed in LAYER_KIND_FIELDS.items():
            missing = [f for f in needed if getattr(self, f) is None]
            if kind in kinds and missing:
                raise ValueError(f"layer_types has {kind!r} layers but {', '.join(missing)} is not set")
        if self.learned_positions is not None:
            check_positive_int(self.learned_positions, "learned_positions")
        if self.ffn_matrices not in (2, 3):
            raise ValueError(f"ffn_matrices must be 2 (up, down) or 3 (gate, up, down), got {self.ffn_matrices!r}")
        if self.d_ff_dense is not None:
            check_positive_int(self.d_ff_dense, "d_ff_dense")
        if self.global_head_dim is not None or self.n_global_kv_heads is not None or self.global_k_eq_v:
            if self.attention == "mla":
                raise ValueError("global_head_dim, n_global_kv_heads and global_k_eq_v describe softmax attention's "
                                 "full layers; an MLA model has one latent cache")
            if not isinstance(self.global_k_eq_v, bool):
                raise ValueError(f"global_k_eq_v must be true or false, got {self.global_k_eq_v!r}")
            if self.global_head_dim is not None:
                check_positive_int(self.global_head_dim, "global_head_dim")
            if self.n_global_kv_heads is not None:
                check_positive_int(self.n_global_kv_heads, "n_global_kv_heads")
                if self.n_global_kv_heads > self.n_heads or self.n_heads % self.n_global_kv_heads:
                    raise ValueError(f"n_global_kv_heads must divide n_heads ({self.n_heads}), got "
                                     f"{self.n_global_kv_heads}")
        if self.moe_latent_dim is not None:
            check_positive_int(self.moe_latent_dim, "moe_latent_dim")
            if self.n_experts is None:
                raise ValueError("moe_latent_dim (the routed experts' latent width) needs n_experts")
        if not isinstance(self.d_ff_shared, int) or isinstance(self.d_ff_shared, bool) or self.d_ff_shared < 0:
            raise ValueError(f"d_ff_shared must be a non-negative integer, got {self.d_ff_shared!r}")
        if self.ffn_layer_types is not None:
            ft = tuple(self.ffn_layer_types)
            object.__setattr__(self, "ffn_layer_types", ft)
            if len(ft) != self.n_layers:
                raise ValueError(f"ffn_layer_types has {len(ft)} entries but the model has {self.n_layers} layers")
            bad = sorted({str(t) for t in ft} - set(FFN_KINDS))
            if bad:
                raise ValueError(f"ffn_layer_types entries must be one of {', '.join(FFN_KINDS)}; got {bad}")
            if "moe" in ft and self.n_experts is None:
                raise ValueError("ffn_layer_types has 'moe' layers but n_experts is not set")
        if self.index_topk is not None and (self.index_head_dim is None or self.index_n_heads is None
                                            or (self.attention != "mla" and "sparse" not in kinds)):
            raise ValueError("index_topk (sparse attention) needs index_head_dim and index_n_heads, and an MLA model "
                             "(DeepSeek's DSA) or 'sparse' layers (MiniMax-M3's MSA)")
        if (self.n_experts is None) != (self.n_experts_per_token is None):
            raise ValueError("a mixture-of-experts model needs both n_experts and n_experts_per_token")
        if self.n_experts is not None:
            check_positive_int(self.n_experts, "n_experts")
            check_positive_int(self.n_experts_per_token, "n_experts_per_token")
            if self.n_experts_per_token > self.n_experts:
                raise ValueError("n_experts_per_token cannot exceed n_experts")
        for f in ("n_mtp_layers", "n_mtp_params", "n_mtp_active_params"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{f} must be a non-negative integer, got {v!r}")
        if (self.n_mtp_layers == 0) != (self.n_mtp_params == 0):
            raise ValueError("n_mtp_layers and n_mtp_params go together: both 0 (no MTP module) or both positive")
        if self.n_active_params is not None:
            check_positive_int(self.n_active_params, "n_active_params")
            if self.n_active_params > self.n_params:
                raise ValueError("n_active_params cannot exceed n_params")

    # -- derived quantities -------------------------------------------------------------------
    @property
    def active_params(self) -> int:
        """Parameters used per token: ``n_active_params`` for MoE, else ``n_params``."""
        return self.n_active_params if self.n_active_params is not None else self.n_params

    def params_loaded(self, load_mtp: bool = False) -> int:
        """Parameters an engine loads: the main model, plus the MTP modules when ``load_mtp``.

        Default False, as vLLM and SGLang do unless MTP speculative decoding is switched on (vLLM skips
        the checkpoint's MTP layer in its DeepSeek-V3 loader; with ``method: deepseek_mtp`` it loads it as
        the draft). Hugging Face's "model size" counts what the checkpoint stores: ``load_mtp=True``.
        """
        return self.n_params + (self.n_mtp_params if load_mtp else 0)

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return self.n_experts is not None and self.n_experts > 1

    @property
    def layer_kinds(self) -> tuple[str, ...]:
        """Per-layer "full"/"sliding", with the defaults of ``layer_types`` resolved."""
        if self.layer_types is not None:
            return self.layer_types
        kind = "sliding" if self.sliding_window is not None else "full"
        return (kind,) * self.n_layers

    @property
    def ffn_kinds(self) -> tuple[str, ...]:
        """Per-layer FFN kind ("dense", "moe", "none"), with the default of ``ffn_layer_types`` resolved."""
        if self.ffn_layer_types is not None:
            return self.ffn_layer_types
        return ("moe" if self.n_experts is not None else "dense",) * self.n_layers

    def kv_heads_of(self, kind: str | None) -> int:
        """KV heads of a softmax-attention layer of ``kind``: ``n_global_kv_heads`` for a "full" layer where
        it is set (Gemma 4's global layers), else ``n_kv_heads``."""
        return self.n_global_kv_heads if kind == "full" and self.n_global_kv_heads is not None else self.n_kv_heads

    def head_dim_of(self, kind: str | None) -> int:
        """Head width of a softmax-attention layer of ``kind``: ``global_head_dim`` for a "full" layer where it
        is set (Gemma 4's global layers), else ``head_dim``."""
        return self.global_head_dim if kind == "full" and self.global_head_dim is not None else self.head_dim

    @property
    def has_global_shapes(self) -> bool:
        """True when the "full" layers' attention shapes differ from the other layers' (Gemma 4)."""
        return self.global_head_dim is not None or self.n_global_kv_heads is not None or self.global_k_eq_v

    def with_changes(self, **changes) -> "ModelConfig":
        """Return a copy with some fields replaced (``dataclasses.replace``); validates again."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The fields as a JSON-friendly dict (``layer_types`` as a list)."""
        d = dataclasses.asdict(self)
        for key in ("layer_types", "ffn_layer_types"):
            if d[key] is not None:
                d[key] = list(d[key])
        return d


def beyond_trained_window(model: ModelConfig, context_len) -> int | None:
    """The model's trained context limit when ``context_len`` exceeds it, else None.

    A context past ``max_context_len`` (config.json's ``max_position_embeddings``) is arithmetic the
    model was not trained for: the bytes and times are computed all the same, and pages mark them as
    beyond the window with this limit named. None also when the model carries no limit.

    Raises:
        ValueError: a context that is not a positive number.
    """
    if isinstance(context_len, bool) or not isinstance(context_len, (int, float)) or not context_len > 0:
        raise ValueError(f"context_len must be a positive number of tokens, got {context_len!r}")
    limit = model.max_context_len
    return limit if limit is not None and context_len > limit else None


def longer_context_preset(model: ModelConfig, context_len) -> str | None:
    """The preset id of the catalogue's model nearest ``model`` in size (total parameters, by their ratio; ties
    by id) whose trained window (``max_context_len``) holds ``context_len`` tokens, for a page to offer when a
    workload runs past ``model``'s window; None when ``model``'s own window holds it, or no preset's does.
    Example: llama-3-8b (8.03e9 parameters, 8,192 tokens) at 70,000 tokens: llama-3.1-8b (131,072 tokens).

    Raises:
        ValueError: a context that is not a positive number (``beyond_trained_window``).
    """
    if beyond_trained_window(model, context_len) is None:
        return None
    fits = [(abs(math.log(m.n_params / model.n_params)), key) for key, m in _catalogue().items()
            if m.max_context_len is not None and m.max_context_len >= context_len]
    return min(fits)[1] if fits else None


# == The preset catalogue ========================================================================

@lru_cache(maxsize=1)
def _catalogue() -> dict[str, ModelConfig]:
    """Load ``data/models.json`` once: preset id -> ModelConfig (every field explicit in the file)."""
    with open(DATA_DIR / "models.json", encoding="utf-8") as f:
        raw = json.load(f)
    known = {f.name for f in dataclasses.fields(ModelConfig)}
    out: dict[str, ModelConfig] = {}
    for model_id, entry in raw.items():
        extra = sorted(set(entry) - known)
        if extra:
            raise ValueError(f"models.json entry {model_id!r} has unknown fields {extra}")
        out[model_id] = ModelConfig(**entry)
    return out


def list_models() -> list[str]:
    """Return the preset ids of the model catalogue (``data/models.json``), in file order.

    Returns:
        ids such as "llama-3-8b", "mixtral-8x7b", "gpt2"; ``get_model`` accepts each.
    """
    return list(_catalogue())


@lru_cache(maxsize=1)
def _checkpoint_aliases() -> tuple:
    raw = json.loads((DATA_DIR / "checkpoint_aliases.json").read_text(encoding="utf-8"))
    pairs = [(a["pattern"].lower(), a["preset"]) for a in raw["aliases"]] + [(k, k) for k in _catalogue()]
    # the longest pattern first: "deepseek-v3.1" before "deepseek-v3", "meta-llama-3.1-8b" before "meta-llama-3-8b"
    return tuple(sorted(pairs, key=lambda p: -len(p[0]))), frozenset(raw["suffixes"])


_SUFFIX_VERSION = re.compile(r"v?\d+")


def match_checkpoint(name: str) -> str | None:
    """The model preset of a served checkpoint's id ("meta-llama/Llama-3.1-70B-Instruct" -> "llama-3.1-70b",
    "deepseek-ai/DeepSeek-R1-0528" -> "deepseek-v3", "nvidia/Llama-3.3-70B-Instruct-FP4" -> "llama-3.1-70b"), or
    None: its name after any "org/" prefix starts with a preset id or an alias of ``data/checkpoint_aliases.json``
    (checkpoints of the same architecture, each with the config.json it cites), and what follows is only tags
    (instruct, fp8, awq, ...) and dates or versions ("0528", "v0.1"). A different model that shares a prefix
    ("gpt2-xl", "qwen2.5-7b-instruct-1m") does not match, nor does one whose alias names no preset (``null``: GLM-5.2,
    which would otherwise pass for a version of GLM-5).
    """
    found = _checkpoint_match(name)
    return found[1] if found else None


def _checkpoint_match(name: str) -> tuple[str, str | None, str, list[str]] | None:
    """(pattern, preset, the text after it, its tokens) of the entry ``match_checkpoint`` takes for ``name``: the longest preset id
    or alias its name (lower case, after any "org/") starts with, followed by tags, dates and versions only; None
    where none matches."""
    text = str(name).strip().lower().rsplit("/", 1)[-1].replace("_", "-")
    pairs, suffixes = _checkpoint_aliases()
    for pattern, preset in pairs:
        if not text.startswith(pattern):
            continue
        rest = text[len(pattern):]
        if rest and rest[0] not in "-.":
            continue
        tokens = [t for t in re.split(r"[-.]", rest) if t]
        if all(t in suffixes or _SUFFIX_VERSION.fullmatch(t) for t in tokens):
            return pattern, preset, rest, tokens
    return None


#: Words after a model's name in a checkpoint's id that mark another release of it, not a tag of the same weights.
RELEASE_WORDS = frozenset({"thinking", "reasoning", "exp", "speciale"})
_RELEASE_DATE = re.compile(r"\d{4}")


@lru_cache(maxsize=1)
def _same_model_patterns() -> frozenset:
    raw = json.loads((DATA_DIR / "checkpoint_aliases.json").read_text(encoding="utf-8"))
    return frozenset(a["pattern"].lower() for a in raw["aliases"] if a.get("same_model")) | frozenset(_catalogue())


def names_another_model(name: str) -> bool:
    """Whether a served checkpoint's id names another model or release than the preset ``match_checkpoint`` computes
    it with, rather than the preset's own weights under a tag or another spelling: True for
    "deepseek-ai/DeepSeek-R1-0528" (DeepSeek-V3's shapes), "moonshotai/Kimi-K2.5" and "moonshotai/Kimi-K2-Thinking"
    (Kimi-K2's), "Qwen/Qwen3-235B-A22B-Instruct-2507" (a later release of Qwen3-235B-A22B),
    "amd/Llama-3.3-70B-Instruct-FP8-KV" (Llama-3.1-70B's); False for "Qwen/Qwen3-8B-FP8",
    "mistralai/Mixtral-8x7B-Instruct-v0.1", "meta-llama/Meta-Llama-3.1-8B-Instruct" and a preset's own id, and for a
    name no preset matches.

    Another model: matched through an alias of data/checkpoint_aliases.json that does not say ``same_model`` (another
    model of the architecture), or, after the preset's own name or a same-model alias, a version that continues the
    name ("Kimi-K2.5"), a release date of four digits ("-2507", "-0905") or a release word (``RELEASE_WORDS``). The
    measurement files write such a checkpoint as the row's model, so that the pages can name the model that was
    measured (``calc.measurements.PUBLISHED_MODEL``); calc computes it with the preset all the same.
    """
    found = _checkpoint_match(name)
    if found is None or found[1] is None:
        return False
    pattern, _preset, rest, tokens = found
    return (pattern not in _same_model_patterns() or (rest[:1] == "." and rest[1:2].isdigit())
            or any(_RELEASE_DATE.fullmatch(t) or t in RELEASE_WORDS for t in tokens))


#: A served checkpoint's precision tag (the words of its id) -> the weight format calc prices it in: NVIDIA's "-FP4"
#: checkpoints are NVFP4 (ModelOpt), AWQ and GPTQ 4-bit with groups of 128, RedHatAI's "w8a8" int8, MXFP8 (e4m3 with
#: one e8m0 scale per 32, MiniMaxAI/MiniMax-M3-MXFP8) calc's fp8 (its scales, 0.25 bit per weight, not counted).
CHECKPOINT_TAGS = {"fp8": "fp8", "mxfp8": "fp8", "nvfp4": "nvfp4", "fp4": "nvfp4", "mxfp4": "mxfp4",
                   "awq": "int4-g128", "gptq": "int4-g128", "w4a16": "int4-g128", "int4": "int4-g128", "w8a8": "int8",
                   "int8": "int8"}


def checkpoint_tag(name: str) -> str | None:
    """The weight format a served checkpoint's id names ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8" -> "fp8",
    "nvidia/Llama-3.3-70B-Instruct-FP4" -> "nvfp4", "...-AWQ" -> "int4-g128"), or None (``CHECKPOINT_TAGS``)."""
    words = re.split(r"[-_.]", str(name).strip().lower().rsplit("/", 1)[-1])
    return next((CHECKPOINT_TAGS[w] for w in reversed(words) if w in CHECKPOINT_TAGS), None)


def model_preset_id(name: str) -> str | None:
    """The preset id ``get_model`` resolves ``name`` to ("meta-llama/Llama-3.1-8B-Instruct" -> "llama-3.1-8b",
    "Llama-3-8B" -> "llama-3-8b"), or None for a name it does not know: the key a data row stores, whatever the
    spelling its source used."""
    try:
        model = get_model(name)
    except ValueError:
        return None
    return next(k for k, m in _catalogue().items() if m is model)


def get_model(name: str) -> ModelConfig:
    """Return the preset ``ModelConfig`` for an id ("llama-3-8b"), a display name ("Llama-3-8B") or a served
    checkpoint of a preset's architecture ("meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-R1",
    ``match_checkpoint``; the preset's own name is returned).

    The lookup ignores case and surrounding spaces. Presets are loaded once and cached; the
    returned dataclass is frozen, so callers cannot change the catalogue.

    Source: ``data/models.json``, each entry transcribed from the reference tables with its source;
    ``data/checkpoint_aliases.json`` for the checkpoints.

    Raises:
        ValueError: unknown name; the message lists the valid ids.
    """
    if isinstance(name, str):
        key = name.strip().lower()
        cat = _catalogue()
        if key in cat:
            return cat[key]
        for model in cat.values():
            if model.name.lower() == key:
                return model
        preset = match_checkpoint(key) if key else None
        if preset:
            return cat[preset]
    raise ValueError(f"unknown model {name!r}; valid ids: {', '.join(_catalogue())}")


def hf_config(model_id: str) -> dict:
    """Return the shipped Hugging Face config.json of a preset (``data/hf_configs/<id>.json``).

    Raises:
        ValueError: unknown preset (the message lists the valid ids).
    """
    model = get_model(model_id)
    key = next(k for k, v in _catalogue().items() if v is model)
    with open(DATA_DIR / "hf_configs" / f"{key}.json", encoding="utf-8") as f:
        return json.load(f)
