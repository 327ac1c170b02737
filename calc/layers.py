"""What each layer holds: one per-layer description that kv, memory, roofline and the pages read.

A sequence's cache is ``sum over layers of bytes_per_token * tokens_held(S) + constant state``:

=================  ===========================  ===================================================
kind               tokens held at context S     per-token bytes / constant per-sequence state
=================  ===========================  ===================================================
full               S                            2*K*H (MLA: d_c + d_h^R) elements
sliding            min(S, W)                    as full
chunked            ((S - 1) mod C) + 1          as full; at most one chunk C (Llama 4)
sparse_mla         S (reads min(S, top-k))      MLA latent + the indexer key (fp8 + fp32 scale)
linear_attention   none                         Gated DeltaNet: conv + recurrent state
lightning          none                         MiniMax lightning attention: N x H x H state
mamba              none                         Mamba1: conv + SSM state
mamba2             none                         Mamba2: conv + SSM state
parallel_mamba2    S                            attention (as full) and a Mamba2 state (Falcon-H1)
mlp_only           none                         nothing
=================  ===========================  ===================================================

A layer that shares another layer's cache (cross-layer sharing, Brandon et al. 2024; Gemma-3n's
``num_kv_shared_layers``) owns no per-token bytes; it still attends.

Conventions (where engines differ, both are offered):
- ``sliding="cap"`` (default): a sliding layer keeps at most W tokens and a chunked layer only its
  current chunk (vLLM's hybrid allocator frees the blocks that fell out). ``sliding="full"``: every
  attention layer is reserved at full length (engines without a hybrid allocator).
- Chunk span: a chunked layer attending in chunks of C holds the tokens of the current chunk,
  ``((S - 1) mod C) + 1`` (C when S is a multiple of C): Llama 4's chunked attention mask.
- State shapes follow vLLM's ``MambaStateShapeCalculator``
  (vllm/model_executor/layers/mamba/mamba_utils.py): Mamba1 conv (d_inner, k - 1) and SSM
  (d_inner, N); Mamba2 conv (k - 1, d_inner + 2*G*N) and SSM (heads, head_dim, N); Gated DeltaNet
  conv (k - 1, 2*H_k*d_k + H_v*d_v) and recurrent (H_v, d_v, d_k); lightning (heads, H, H).
- State dtypes: the conv state in ``conv_dtype`` (default "bf16", the activations' dtype: vLLM's
  ``mamba_cache_dtype="auto"``); the SSM/recurrent state in the model's own ``ssm_state_dtype``
  (the config's ``mamba_ssm_dtype`` / ``mamba_ssm_cache_dtype``, e.g. float32 in Qwen3.5 and
  Nemotron-H; "fp32" when the config says nothing), or ``state_dtype`` when given ("bf16" is
  vLLM's "auto").
- DeepSeek-V3.2's indexer key cache: ``index_head_dim`` fp8 bytes plus one fp32 scale per 128
  elements per token and layer (132 B for 128; vLLM's ``DeepseekV32IndexerCache``), whatever the
  KV dtype. Decode attention reads only the top-k selected latent entries; the indexer reads all S.

The functions take a ``calc.models.ModelConfig`` (named in the annotations only: this module sits
below ``calc.models``, which reads its layer kinds from here).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from .checks import check_choice
from .dtypes import dtype_bytes, kv_dtype_bytes

SLIDING_CONVENTIONS = ("cap", "full")
MLA_CONVENTIONS = ("latent", "expanded")
INDEX_QUANT_BLOCK = 128     # elements per fp32 scale of the DSA indexer keys (vLLM, DeepSeek-V3.2)
#: Per-layer kinds a ``ModelConfig.layer_types`` entry may name (the table above says what each holds).
LAYER_KINDS = ("full", "sliding", "chunked", "linear_attention", "lightning", "mamba", "mamba2",
               "parallel_mamba2", "mlp_only")
#: Kinds that attend over cached tokens (and so hold per-token K/V).
ATTENTION_LAYER_KINDS = ("full", "sliding", "chunked", "sparse_mla", "parallel_mamba2")
#: Kinds that hold a constant per-sequence state (conv + recurrent/SSM).
STATE_LAYER_KINDS = ("linear_attention", "lightning", "mamba", "mamba2", "parallel_mamba2")
#: Kinds whose attention span a window or chunk can limit.
WINDOWED_KINDS = ("full", "sliding", "chunked")
#: Per-layer FFN kinds a ``ModelConfig.ffn_layer_types`` entry may name.
FFN_KINDS = ("dense", "moe", "none")
_GDN_FIELDS = ("linear_n_key_heads", "linear_n_value_heads", "linear_key_head_dim", "linear_value_head_dim",
               "linear_conv_kernel")
_MAMBA2_FIELDS = ("ssm_d_inner", "ssm_d_state", "ssm_conv_kernel", "ssm_n_heads", "ssm_head_dim", "ssm_n_groups")
#: The ``ModelConfig`` shape fields a model must set when one of its layers is of that kind.
LAYER_KIND_FIELDS = {"chunked": ("attention_chunk_size",), "linear_attention": _GDN_FIELDS,
                     "mamba": ("ssm_d_inner", "ssm_d_state", "ssm_conv_kernel"), "mamba2": _MAMBA2_FIELDS,
                     "parallel_mamba2": _MAMBA2_FIELDS}
KIND_DESCRIPTIONS = {
    "full": "full attention: every token",
    "sliding": "sliding window: the last W tokens",
    "chunked": "chunked local attention: the current chunk",
    "sparse_mla": "sparse MLA (DSA): latent + indexer key per token, reads top-k",
    "linear_attention": "Gated DeltaNet: constant recurrent state",
    "lightning": "lightning attention: constant state",
    "mamba": "Mamba: constant conv + SSM state",
    "mamba2": "Mamba2: constant conv + SSM state",
    "parallel_mamba2": "attention + Mamba2 side by side",
    "mlp_only": "MLP only: holds nothing",
}


#: How the lightning-attention state is stored (``with_state_convention``).
STATE_CONVENTIONS = ("reference", "vllm")
#: The activation dtype of the models calc prices; vLLM's "auto" state dtype follows it.
MODEL_DTYPE = "bf16"


def with_state_convention(model: ModelConfig, convention: str = "reference") -> ModelConfig:
    """``model`` with its lightning-attention state in the dtype ``convention`` says.

    "reference" (default): unchanged, the state in ``ssm_state_dtype`` (the config's
    ``mamba_ssm_dtype``, fp32 when it says nothing: MiniMax-01/M1's configs name none, and their
    reference code accumulates the N x H x H state in fp32). "vllm": the model's own dtype, bf16:
    vLLM sizes a lightning layer's state with ``MambaStateDtypeCalculator.linear_attention_state_dtype``
    (vllm/model_executor/layers/mamba/mamba_utils.py), ``get_kv_cache_torch_dtype(mamba_cache_dtype,
    model_dtype)``, the model dtype under the default ``mamba_cache_dtype="auto"`` (and refuses "float32":
    "fp32 state for minimax is not yet supported"). MiniMax-M1: 70 lightning layers x 64 heads x 128 x 128
    = 73,400,320 elements per sequence, 293.6 MB in fp32, 146.8 MB in bf16. Models whose constant-state layers are not all
    lightning (Mamba, Gated DeltaNet) are returned unchanged: their state dtype is the config's.

    Raises:
        ValueError: an unknown convention.
    """
    check_choice(convention, STATE_CONVENTIONS, "state convention must be 'reference' (fp32, or the config's "
                 "mamba_ssm_dtype) or 'vllm' (the model dtype, bf16, as vLLM stores lightning-attention state)")
    kinds = {k for k in model.layer_kinds if k in STATE_LAYER_KINDS}
    if convention == "vllm" and kinds == {"lightning"} and model.ssm_state_dtype != MODEL_DTYPE:
        return model.with_changes(ssm_state_dtype=MODEL_DTYPE)
    return model


def check_conventions(sliding: str = "cap", mla: str = "latent") -> None:
    """Raise ValueError for an unknown ``sliding`` or ``mla`` convention (see the module docstring)."""
    check_choice(sliding, SLIDING_CONVENTIONS, f"sliding must be one of {', '.join(SLIDING_CONVENTIONS)}")
    check_choice(mla, MLA_CONVENTIONS, f"mla must be one of {', '.join(MLA_CONVENTIONS)}")


def kv_elements_per_token_per_layer(model: ModelConfig, mla: str = "latent") -> int:
    """Cached elements per token in one cache-holding attention layer.

    MHA/GQA/MQA: 2*K*H (a key and a value per KV head; chapter 9 (LLM inference) "must-memorize
    formula"). MLA latent: d_c + d_h^R (576 for DeepSeek-V2/V3; DeepSeek-V2 report, section 2.1).
    MLA expanded: N*(qk_nope + qk_rope) + N*v_head_dim.

    Raises:
        ValueError: unknown ``mla`` convention.
    """
    check_conventions("cap", mla)
    if model.attention == "mla":
        if mla == "latent":
            return model.kv_lora_rank + model.qk_rope_head_dim
        rope = model.qk_rope_head_dim
        nope = model.qk_nope_head_dim if model.qk_nope_head_dim is not None else model.head_dim - rope
        v = model.v_head_dim if model.v_head_dim is not None else nope
        return model.n_heads * (nope + rope) + model.n_heads * v
    return 2 * model.n_kv_heads * model.head_dim


FLASHMLA_FP8_BLOCK = 128    # latent elements per fp32 scale of FlashMLA's fp8 KV format


def kv_bytes_per_token_per_layer(model: ModelConfig, kv_dtype: str = "bf16", mla: str = "latent") -> float:
    """Bytes per token of one cache-holding attention layer's own KV (MLA: latent) entry, in ``kv_dtype``.

    ``kv_elements_per_token_per_layer x bytes`` for every cache format of ``calc.dtypes.kv_dtype_bytes``;
    "fp8_ds_mla" (FlashMLA's fp8 cache, vLLM's ``kv_cache_dtype="fp8_ds_mla"``): the d_c latent in fp8 with one
    fp32 scale per 128 of it, the d_h^R RoPE part in bf16, ``d_c + 4 ceil(d_c / 128) + 2 d_h^R``: DeepSeek-V3
    (512, 64): 512 + 16 + 128 = 656 B (FlashMLA README, "FP8 KV cache" format), where plain fp8 says 576.

    Raises:
        ValueError: a weight-only format; fp8_ds_mla for a model without MLA or with the expanded cache.
    """
    per = kv_dtype_bytes(kv_dtype)
    if kv_dtype == "fp8_ds_mla":
        if model.attention != "mla" or mla != "latent":
            raise ValueError("fp8_ds_mla is FlashMLA's cache of an MLA latent (fp8 latent + scales, bf16 RoPE "
                             f"part); {model.name} has no latent cache to store in it" if model.attention != "mla"
                             else "fp8_ds_mla stores the MLA latent; it has no expanded per-head form (use "
                             "mla='latent')")
        r = model.kv_lora_rank
        return float(r + 4 * -(-r // FLASHMLA_FP8_BLOCK) + 2 * model.qk_rope_head_dim)
    return kv_elements_per_token_per_layer(model, mla) * per


def index_bytes_per_token_per_layer(model: ModelConfig) -> float:
    """Bytes of DeepSeek-V3.2's lightning-indexer key per token and layer: ``d_I + 4 * d_I / 128``.

    fp8 keys with one fp32 scale per 128 elements: 128 + 4 = 132 B for ``index_head_dim`` 128
    (vLLM's DeepseekV32IndexerCache, head_dim + head_dim // quant_block_size * 4). 0 without DSA.
    """
    if model.index_topk is None:
        return 0.0
    d = model.index_head_dim
    return float(d + 4 * -(-d // INDEX_QUANT_BLOCK))


def state_shapes(model: ModelConfig, kind: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(conv state shape, recurrent/SSM state shape) of one layer of ``kind``, per sequence.

    Shapes of vLLM's MambaStateShapeCalculator (vllm/model_executor/layers/mamba/mamba_utils.py)
    at tensor-parallel size 1; () for a part the kind does not have. Gated DeltaNet: conv
    (k - 1, 2*H_k*d_k + H_v*d_v), recurrent (H_v, d_v, d_k). Mamba1: conv (d_inner, k - 1), SSM
    (d_inner, N). Mamba2: conv (k - 1, d_inner + 2*G*N), SSM (heads, head_dim, N). Lightning: no
    conv, state (N_heads, H, H).
    """
    m = model
    if kind == "linear_attention":
        conv_dim = 2 * m.linear_n_key_heads * m.linear_key_head_dim + m.linear_n_value_heads * m.linear_value_head_dim
        return ((m.linear_conv_kernel - 1, conv_dim),
                (m.linear_n_value_heads, m.linear_value_head_dim, m.linear_key_head_dim))
    if kind == "lightning":
        return (), (m.n_heads, m.head_dim, m.head_dim)
    if kind == "mamba":
        return (m.ssm_d_inner, m.ssm_conv_kernel - 1), (m.ssm_d_inner, m.ssm_d_state)
    if kind in ("mamba2", "parallel_mamba2"):
        conv_dim = m.ssm_d_inner + 2 * m.ssm_n_groups * m.ssm_d_state
        return (m.ssm_conv_kernel - 1, conv_dim), (m.ssm_n_heads, m.ssm_head_dim, m.ssm_d_state)
    return (), ()


def _numel(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape)) if shape else 0


@dataclass(frozen=True)
class LayerSpec:
    """What one layer holds for one sequence.

    Fields:
        kind: one of ``KIND_DESCRIPTIONS`` ("sparse_mla" for the attention layers of an MLA model
            with a DSA indexer).
        owns_cache: False when the layer reuses another layer's KV cache (or has none).
        span_limit: W of a sliding layer, C of a chunked layer, None for the others.
        kv_bytes_per_token: bytes per held token of the layer's own KV (MLA: latent) cache; 0 when
            it owns none.
        index_bytes_per_token: bytes per held token of the DSA indexer key cache (0 without DSA).
        read_top_k: decode attention reads at most this many KV entries (DSA's index_topk).
        conv_state_bytes, recurrent_state_bytes: the constant per-sequence state.
    """

    kind: str
    owns_cache: bool
    span_limit: int | None = None
    kv_bytes_per_token: float = 0.0
    index_bytes_per_token: float = 0.0
    read_top_k: int | None = None
    conv_state_bytes: float = 0.0
    recurrent_state_bytes: float = 0.0

    @property
    def bytes_per_token(self) -> float:
        """Bytes per held token: the KV (or latent) entry plus the indexer key."""
        return self.kv_bytes_per_token + self.index_bytes_per_token

    @property
    def state_bytes(self) -> float:
        """Constant bytes per sequence (conv + recurrent state)."""
        return self.conv_state_bytes + self.recurrent_state_bytes

    @property
    def label(self) -> str:
        """Kind with its span and sharing, e.g. "sliding (W=1,024)", "full (shared KV)"."""
        text = self.kind
        if self.kind == "sliding":
            text += f" (W={self.span_limit:,})"
        elif self.kind == "chunked":
            text += f" (C={self.span_limit:,})"
        if self.kind in ATTENTION_LAYER_KINDS and not self.owns_cache:
            text += " (shared KV)"
        return text

    def tokens_held(self, context_len, sliding: str = "cap"):
        """Tokens this layer's own cache holds at context S (float or array like ``context_len``).

        full / sparse_mla / parallel_mamba2: S; sliding: min(S, W); chunked: ((S - 1) mod C) + 1;
        0 for layers that own no KV cache. ``sliding="full"``: S for every cache-owning layer.
        """
        s = np.asarray(context_len, dtype=float)
        if not self.owns_cache or self.bytes_per_token == 0:
            out = np.zeros_like(s)
        elif sliding == "full" or self.span_limit is None:
            out = s
        elif self.kind == "chunked":
            out = np.where(s > 0, np.mod(s - 1.0, self.span_limit) + 1.0, 0.0)
        else:
            out = np.minimum(s, self.span_limit)
        return float(out) if out.ndim == 0 else out

    def bytes_held(self, context_len, sliding: str = "cap"):
        """Bytes of one sequence in this layer at context S: per-token bytes x tokens held + state."""
        held = np.asarray(self.tokens_held(context_len, sliding))
        out = self.bytes_per_token * held + self.state_bytes
        return float(out) if np.ndim(out) == 0 else out

    def decode_bytes_read(self, context_len, sliding: str = "cap"):
        """Cache bytes one decode step moves for one sequence in this layer.

        KV entries read: the tokens held, at most ``read_top_k`` of them (DSA); indexer keys: all
        held tokens; the constant state is read and written back (2 x state).
        """
        held = np.asarray(self.tokens_held(context_len, sliding))
        read = held if self.read_top_k is None else np.minimum(held, self.read_top_k)
        out = self.kv_bytes_per_token * read + self.index_bytes_per_token * held + 2.0 * self.state_bytes
        return float(out) if np.ndim(out) == 0 else out


def owns_cache(model: ModelConfig, i: int) -> bool:
    """Cross-layer sharing: with factor s layers 0, s, 2s, ... hold caches (CLA); the last
    ``n_kv_shared_layers`` layers reuse earlier ones (Gemma-3n: transformers' Gemma3n
    ``first_kv_shared_layer_idx = num_hidden_layers - num_kv_shared_layers``)."""
    return i % model.kv_sharing == 0 and i < model.n_layers - model.n_kv_shared_layers


@lru_cache(maxsize=256)
def layer_specs(model: ModelConfig, kv_dtype: str = "bf16", mla: str = "latent", state_dtype: str | None = None,
                conv_dtype: str = "bf16") -> tuple[LayerSpec, ...]:
    """The per-layer description of ``model``: one ``LayerSpec`` per layer, in order.

    Args:
        kv_dtype: storage dtype of K and V (or the MLA latent).
        mla: "latent" or "expanded" (see calc.kv).
        state_dtype: dtype of the SSM / recurrent state; None: the model's own (``ssm_state_dtype``,
            from the config's ``mamba_ssm_dtype``, else "fp32"); "bf16" is vLLM's "auto".
        conv_dtype: dtype of the conv state ("bf16").

    Raises:
        ValueError: an unknown dtype or convention.
    """
    st_b = dtype_bytes(model.ssm_state_dtype if state_dtype is None else state_dtype, "state_dtype")
    cv_b = dtype_bytes(conv_dtype, "conv_dtype")
    per_token = kv_bytes_per_token_per_layer(model, kv_dtype, mla)
    index_b = index_bytes_per_token_per_layer(model)
    specs = []
    for i, kind in enumerate(model.layer_kinds):
        owns = owns_cache(model, i)
        conv, rec = state_shapes(model, kind)
        state = dict(conv_state_bytes=float(_numel(conv) * cv_b), recurrent_state_bytes=float(_numel(rec) * st_b))
        if kind in ("full", "sliding", "chunked", "parallel_mamba2"):
            if kind == "full" and index_b:
                kind = "sparse_mla"
            span = model.sliding_window if kind == "sliding" else (
                model.attention_chunk_size if kind == "chunked" else None)
            specs.append(LayerSpec(  # a DSA indexer (DeepSeek-V3.2) keeps its keys in every attention layer
                kind, owns, span, float(per_token) if owns else 0.0, index_b if owns else 0.0,
                model.index_topk if index_b else None, **state))
        else:
            specs.append(LayerSpec(kind, False, **state))
    return tuple(specs)


@dataclass(frozen=True)
class LayerParams:
    """The weights of one layer that quantization recipes treat apart (parameters, not bytes).

    Fields:
        kind: the token mixer (``layer_specs``' kind before the DSA rename: "full", "mamba2", ...).
        ffn: "dense", "moe" or "none" (``ModelConfig.ffn_kinds``).
        mixer_norm, ffn_norm: D for the pre-norm of the mixer / of the FFN, 0 where the layer has none
            (Nemotron-H's blocks hold one mixer or one FFN, so one norm each).
        attention_v: the V projection, D*K*H, of a softmax attention layer that owns its KV cache
            (0 for MLA, whose V lives in the latent up-projection; 0 for a layer that borrows another
            layer's cache; 0 for lightning attention, whose fused qkv_proj counts as linear).
        ffn_down, ffn_up: the down projection (F*D) and the rest (gate and up, (m - 1)*D*F) of the dense
            MLP or of the shared experts, m = ``ffn_matrices``.
        router: D*E of an MoE layer.
        experts_down, experts_up: the routed experts' down projections, E*D*F, and the rest, E*(m - 1)*D*F.
    """

    kind: str
    ffn: str
    mixer_norm: int = 0
    ffn_norm: int = 0
    attention_v: int = 0
    ffn_down: int = 0
    ffn_up: int = 0
    router: int = 0
    experts_down: int = 0
    experts_up: int = 0


@lru_cache(maxsize=256)
def layer_params(model: ModelConfig) -> tuple[LayerParams, ...]:
    """The per-layer weights of ``model`` that ``calc.quant.tensor_groups`` sorts into groups.

    Counted from the per-layer description: the token mixer of ``layer_kinds`` and the FFN of
    ``ffn_kinds`` (dense of width ``d_ff_dense`` or ``d_ff``; MoE: D*E router, E routed experts of
    ``ffn_matrices`` x D x ``d_ff``, shared experts of ``d_ff_shared``). Everything else a layer holds
    (Q, K, O, the latent projections of MLA, Mamba and Gated DeltaNet projections, biases, the
    sigmoid router's bias) is "linear": ``tensor_groups`` takes it as what remains of ``n_params``.
    """
    d, m = model.d_model, model.ffn_matrices
    dense_w = model.d_ff_dense if model.d_ff_dense is not None else model.d_ff
    out = []
    for i, (kind, ffn) in enumerate(zip(model.layer_kinds, model.ffn_kinds)):
        v = 0
        if kind in ("full", "sliding", "chunked", "parallel_mamba2") and model.attention != "mla" and owns_cache(model, i):
            v = d * model.n_kv_heads * model.head_dim
        p = dict(kind=kind, ffn=ffn, mixer_norm=0 if kind == "mlp_only" else d, ffn_norm=0 if ffn == "none" else d,
                 attention_v=v)
        if ffn == "dense":
            p.update(ffn_down=dense_w * d, ffn_up=(m - 1) * d * dense_w)
        elif ffn == "moe":
            e = model.n_experts
            p.update(ffn_down=model.d_ff_shared * d, ffn_up=(m - 1) * d * model.d_ff_shared, router=d * e,
                     experts_down=e * model.d_ff * d, experts_up=e * (m - 1) * d * model.d_ff)
        out.append(LayerParams(**p))
    return tuple(out)


def grouped_specs(model: ModelConfig, **kw) -> list[tuple[LayerSpec, int]]:
    """Distinct ``LayerSpec``s of ``model`` with how many layers share each, in order of first use."""
    return list(Counter(layer_specs(model, **kw)).items())


def bytes_per_token(model: ModelConfig, kv_dtype: str = "bf16", mla: str = "latent") -> float:
    """Per-token cache bytes of one sequence summed over the layers that own a cache (spans not
    applied): KV (or latent) entries plus DSA indexer keys. Llama-3-8B in bf16: 131,072 B."""
    return float(sum(s.bytes_per_token * n for s, n in grouped_specs(model, kv_dtype=kv_dtype, mla=mla)))


def state_bytes(model: ModelConfig, state_dtype: str | None = None, conv_dtype: str = "bf16") -> float:
    """Constant per-sequence bytes: the conv + recurrent/SSM state of every linear and Mamba layer."""
    return float(sum(s.state_bytes * n
                     for s, n in grouped_specs(model, state_dtype=state_dtype, conv_dtype=conv_dtype)))


def _summed_over_layers(model: ModelConfig, context_len, per_layer, kv_dtype: str, sliding: str, mla: str,
                        state_dtype: str | None):
    """Sum over layers of ``per_layer(spec, S, sliding)`` (bytes of one layer at context S), vectorised over S."""
    check_conventions(sliding, mla)
    s = np.asarray(context_len, dtype=float)
    out = np.zeros_like(s)
    for spec, n in grouped_specs(model, kv_dtype=kv_dtype, mla=mla, state_dtype=state_dtype):
        out = out + n * np.asarray(per_layer(spec, s, sliding))
    return float(out) if out.ndim == 0 else out


def sequence_cache_bytes(model: ModelConfig, context_len, kv_dtype: str = "bf16", sliding: str = "cap",
                         mla: str = "latent", state_dtype: str | None = None):
    """Cache bytes of one sequence at context S: per-token bytes x tokens held per layer + state.

    Vectorised over an array of context lengths (returns the same shape); no validation of values.

    Raises:
        ValueError: unknown dtype or convention.
    """
    return _summed_over_layers(model, context_len, LayerSpec.bytes_held, kv_dtype, sliding, mla, state_dtype)


def decode_read_bytes(model: ModelConfig, context_len, kv_dtype: str = "bf16", sliding: str = "cap",
                      mla: str = "latent", state_dtype: str | None = None):
    """Cache bytes one decode step moves for one sequence at context S (``LayerSpec.decode_bytes_read``
    summed over layers): the KV held (DSA: top-k latent entries plus every indexer key) and the
    constant state read and written. Equals ``sequence_cache_bytes`` for a model without state or DSA.
    Vectorised over context lengths.
    """
    return _summed_over_layers(model, context_len, LayerSpec.decode_bytes_read, kv_dtype, sliding, mla,
                               state_dtype)


def layer_breakdown(model: ModelConfig, context_len: int, kv_dtype: str = "bf16", sliding: str = "cap",
                    mla: str = "latent", state_dtype: str | None = None) -> pd.DataFrame:
    """One row per distinct layer kind (with its span and sharing) of ``model`` at context S.

    Columns: kind (label), layers (count), tokens_held (per layer), bytes_per_token (per layer),
    per_token_bytes (all such layers, per context token, spans not applied), cache_bytes (all such
    layers at S, per-token part), state_bytes (all such layers, constant per sequence), total_bytes,
    state_dtype (the dtype of the recurrent/SSM state and of the conv state, e.g. "fp32 (conv bf16)";
    "" for a layer without state), description. Rows sum to ``sequence_cache_bytes``.
    """
    recurrent = model.ssm_state_dtype if state_dtype is None else state_dtype
    rows = []
    for spec, n in grouped_specs(model, kv_dtype=kv_dtype, mla=mla, state_dtype=state_dtype):
        held = spec.tokens_held(context_len, sliding)
        dtype = ""
        if spec.recurrent_state_bytes:
            dtype = recurrent + (" (conv bf16)" if spec.conv_state_bytes else "")
        rows.append(dict(kind=spec.label, layers=n, tokens_held=held, bytes_per_token=spec.bytes_per_token,
                         per_token_bytes=n * spec.bytes_per_token, cache_bytes=n * spec.bytes_per_token * held,
                         state_bytes=n * spec.state_bytes, state_dtype=dtype, description=KIND_DESCRIPTIONS[spec.kind]))
    df = pd.DataFrame(rows)
    df = df.groupby(["kind", "description"], sort=False, as_index=False).agg(
        layers=("layers", "sum"), tokens_held=("tokens_held", "first"), bytes_per_token=("bytes_per_token", "first"),
        per_token_bytes=("per_token_bytes", "sum"), cache_bytes=("cache_bytes", "sum"),
        state_bytes=("state_bytes", "sum"), state_dtype=("state_dtype", "first"))
    df["total_bytes"] = df["cache_bytes"] + df["state_bytes"]
    return df[["kind", "layers", "tokens_held", "bytes_per_token", "per_token_bytes", "cache_bytes",
               "state_bytes", "total_bytes", "state_dtype", "description"]]


def attention_layer_spans(model: ModelConfig) -> list[tuple[str, int | None, int]]:
    """(kind, span limit, layer count) of the layers that run softmax attention (shared-KV layers
    included: they attend over the cache they borrow). Used for attention FLOPs."""
    out: Counter = Counter()
    for spec in layer_specs(model):
        if spec.kind in ATTENTION_LAYER_KINDS:
            out[(spec.kind, spec.span_limit if spec.kind in ("sliding", "chunked") else
                 (spec.read_top_k if spec.kind == "sparse_mla" else None))] += 1
    return [(k, span, n) for (k, span), n in out.items()]


__all__ = ["LayerSpec", "LayerParams", "layer_params", "layer_specs", "grouped_specs", "bytes_per_token", "state_bytes", "sequence_cache_bytes",
           "decode_read_bytes", "layer_breakdown", "state_shapes", "kv_elements_per_token_per_layer",
           "index_bytes_per_token_per_layer", "attention_layer_spans", "KIND_DESCRIPTIONS", "with_state_convention",
           "STATE_CONVENTIONS"]
