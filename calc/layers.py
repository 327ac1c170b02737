"""What each layer holds: one per-layer description that kv, memory, roofline and the pages read.

A sequence's cache is ``sum over layers of bytes_per_token * tokens_held(S) + constant state``:

=================  ===========================  ===================================================
kind               tokens held at context S     per-token bytes / constant per-sequence state
=================  ===========================  ===================================================
full               S                            2*K*H (MLA: d_c + d_h^R) elements
sliding            min(S, W)                    as full
chunked            ((S - 1) mod C) + 1          as full; at most one chunk C (Llama 4)
sparse_mla         S (reads min(S, top-k))      MLA latent + the indexer key (fp8 + fp32 scale)
sparse             S (reads top-k blocks)       2*K*H elements + the indexer key (MiniMax-M3's MSA)
csa                min(S, W) + floor(S / r)     one latent entry per held entry; per compressed entry an
                   (reads top-k compressed)     indexer key; two fp32 compressor states (DeepSeek-V4)
hca                min(S, W) + floor(S / r)     one latent entry per held entry; one fp32 compressor
                   (reads all of them)          state (DeepSeek-V4)
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
- DeepSeek-V4's compressed layers (``csa``, ratio r = 4, and ``hca``, r = 128; the config's
  ``compress_ratios``, 0 marking a window-only ``sliding`` layer): every layer keeps the last W = 128
  tokens uncompressed, and a compressed layer also one entry per r tokens, floor(S / r) of them (a token
  joins its entry when the r-th token of its group arrives). Both are one latent vector of
  ``kv_lora_rank + qk_rope_head_dim`` = 448 + 64 elements (key and value at once). A csa layer's indexer
  keeps one key per compressed entry (132 B, as V3.2's) and selects the top-k (1,024 for V4-Pro) of them
  for each query; an hca layer attends to every compressed entry. The compressors keep a ring of the last
  2r (csa, overlapping windows) or r (hca) tokens' partial kv and score rows in fp32, a constant state
  per sequence: 2 x 2r x 2 x 512 x 4 = 65,536 B for csa plus 16,384 B for its indexer's compressor
  (width 128), 2 x r x 512 x 4 = 524,288 B for hca. Sources: DeepSeek's inference code
  (deepseek-ai/DeepSeek-V4-Flash @60d8d707, inference/model.py: ``Attention``, ``Compressor``,
  ``Indexer``, ``get_compress_topk_idxs``); vLLM's ``DeepseekV4SWACache``, ``DeepseekV4IndexerCache`` and
  ``CompressorStateCache`` (vllm/v1/attention/backends/mla/sparse_swa.py @03dc5649,
  vllm/model_executor/layers/deepseek_v4_attention.py @0a291a2e, deepseek_compressor.py @0de10a27); SGLang's
  ``DeepSeekV4SingleKVPool``, ``DeepSeekV4IndexerPool`` and ``get_compress_state_ring_size``
  (python/sglang/srt/mem_cache/deepseek_v4_memory_pool.py @007bddd4). A decode step reads the window,
  the top-k (csa) or all (hca) compressed entries and every indexer key, and moves two compressor-state
  rows (one written, and amortised the ring's r rows read at every r-th token): ``compressor_step_bytes``.
- MiniMax-M3's sparse layers (``sparse``, MiniMax Sparse Attention, MSA; the config's ``sparse_attention_config``,
  ``sparse_attention_freq`` 1 marking them, 0 a plain ``full`` layer): every token keeps its full GQA K and V
  (2 x K x H elements in ``kv_dtype``, as a full layer) and one indexer key of ``index_head_dim`` elements (one
  head shared by the ``index_n_heads`` index queries; no index value: ``sparse_disable_index_value``) in
  ``index_key_dtype``, bf16, the model's dtype: 128 x 2 = 256 B per token and layer whatever the KV dtype (SGLang's
  ``MiniMaxSparseKVPool``, python/sglang/srt/mem_cache/memory_pool.py, built with ``index_dtype=model dtype`` by
  the model runner, and its ``MHATokenToKOnlyPool`` of one head; TensorRT-LLM's ``MiniMaxM3KVCacheManagerV2``,
  bf16 unless the cache is fp16/fp32). Each index head scores every held key, takes a block's score as the
  maximum over its 128 tokens and selects ``index_topk`` = 16 blocks of ``index_block_size`` = 128 tokens, the
  query's own (partly filled) block the last of them (MiniMax-AI/MSA @32877839, README: "the local block in the
  last valid position"; inference/msa_v1/indexer/decode/q8kv8/README.en.md: output [H, B*Q, 16] logical pages,
  "the final valid entry is the local page", one index head per KV head). A decode step so reads every indexer
  key and min(S, 15 x 128 + the local block's ((S - 1) mod 128) + 1 tokens) of K/V per KV head; the three
  dense layers read all S. Model code: sgl-project/sglang python/sglang/srt/models/minimax_m3.py @01b5f572
  (``MiniMaxM3Attention``: index_qkv_proj of 4 query heads and 1 key head of 128, K-only).

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
from .limits import LIMITS

#: A sliding window no context reaches (the largest context calc accepts, ``calc.limits.LIMITS["context"]``): a
#: model's windows switched off without changing its layers' kinds (Gemma 4, whose full layers have their own shapes;
#: ``calc.kv`` switches them off with it).
NO_WINDOW = LIMITS["context"][0]

SLIDING_CONVENTIONS = ("cap", "full")
MLA_CONVENTIONS = ("latent", "expanded")
INDEX_QUANT_BLOCK = 128     # elements per fp32 scale of the DSA indexer keys (vLLM, DeepSeek-V3.2)
#: Per-layer kinds a ``ModelConfig.layer_types`` entry may name (the table above says what each holds).
LAYER_KINDS = ("full", "sliding", "chunked", "linear_attention", "lightning", "mamba", "mamba2",
               "parallel_mamba2", "mlp_only", "csa", "hca", "sparse")
#: Kinds that attend over cached tokens (and so hold per-token K/V).
ATTENTION_LAYER_KINDS = ("full", "sliding", "chunked", "sparse_mla", "parallel_mamba2", "csa", "hca", "sparse")
#: Kinds a config names as the layers that carry an indexer (DeepSeek-V4's csa, MiniMax-M3's sparse); a model
#: without them and with an indexer has one in every attention layer (DeepSeek-V3.2).
INDEXED_KINDS = ("csa", "sparse")
#: DeepSeek-V4's compressed-attention kinds: a window of W tokens plus one entry per r tokens.
COMPRESSED_KINDS = ("csa", "hca")
#: The dtype of the compressors' kv and score state (fp32 in DeepSeek's code, vLLM and SGLang).
COMPRESSOR_STATE_DTYPE = "fp32"
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
                     "parallel_mamba2": _MAMBA2_FIELDS,
                     "csa": ("csa_compress_ratio", "sliding_window", "kv_lora_rank", "index_n_heads", "index_head_dim",
                             "index_topk"),
                     "hca": ("hca_compress_ratio", "sliding_window", "kv_lora_rank")}
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
    "csa": "compressed sparse attention (CSA): window + 1/r compressed entries, indexer picks top-k",
    "hca": "heavily compressed attention (HCA): window + every 1/r compressed entry",
    "sparse": "block-sparse attention (MSA): K/V + indexer key per token, reads the top-k blocks",
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


def kv_elements_per_token_per_layer(model: ModelConfig, mla: str = "latent", kind: str | None = None) -> int:
    """Cached elements per token in one cache-holding attention layer (of ``kind``: a "full" layer of a model
    whose full layers have their own shapes, Gemma 4's global layers, takes those; None or another kind: the
    model's ``n_kv_heads`` and ``head_dim``).

    MHA/GQA/MQA: 2*K*H (a key and a value per KV head; chapter 9 (LLM inference) "must-memorize
    formula"); Gemma-4-31B's global layers 2 x 4 x 512 = 4,096, its sliding ones 2 x 16 x 256 = 8,192. MLA latent: d_c + d_h^R (576 for DeepSeek-V2/V3; DeepSeek-V2 report, section 2.1).
    MLA expanded: N*(qk_nope + qk_rope) + N*v_head_dim. DeepSeek-V4 (compressed layers): one vector of
    d_c + d_h^R = 448 + 64 = 512 elements is both key and value of its single KV head, and no engine
    expands it: the expanded convention is the latent one.

    Raises:
        ValueError: unknown ``mla`` convention.
    """
    check_conventions("cap", mla)
    if model.attention == "mla":
        if mla == "latent" or has_compressed_layers(model):
            return model.kv_lora_rank + model.qk_rope_head_dim
        rope = model.qk_rope_head_dim
        nope = model.qk_nope_head_dim if model.qk_nope_head_dim is not None else model.head_dim - rope
        v = model.v_head_dim if model.v_head_dim is not None else nope
        return model.n_heads * (nope + rope) + model.n_heads * v
    return 2 * model.kv_heads_of(kind) * model.head_dim_of(kind)


FLASHMLA_FP8_BLOCK = 128    # latent elements per fp32 scale of FlashMLA's fp8 KV format
FLASHMLA_V4_FP8_BLOCK = 64  # non-RoPE elements per one-byte (ue8m0) scale of DeepSeek-V4's fp8 entries


def has_compressed_layers(model: ModelConfig) -> bool:
    """True for a model with DeepSeek-V4's compressed-attention layers (``COMPRESSED_KINDS``)."""
    return any(k in COMPRESSED_KINDS for k in model.layer_kinds)


def kv_bytes_per_token_per_layer(model: ModelConfig, kv_dtype: str = "bf16", mla: str = "latent",
                                 kind: str | None = None) -> float:
    """Bytes per token of one cache-holding attention layer's own KV (MLA: latent) entry, in ``kv_dtype`` (of
    ``kind``, as ``kv_elements_per_token_per_layer``).

    ``kv_elements_per_token_per_layer x bytes`` for every cache format of ``calc.dtypes.kv_dtype_bytes``;
    "fp8_ds_mla" (FlashMLA's fp8 cache, vLLM's ``kv_cache_dtype="fp8_ds_mla"``): the d_c latent in fp8 with one
    fp32 scale per 128 of it, the d_h^R RoPE part in bf16, ``d_c + 4 ceil(d_c / 128) + 2 d_h^R``: DeepSeek-V3
    (512, 64): 512 + 16 + 128 = 656 B (FlashMLA README, "FP8 KV cache" format), where plain fp8 says 576.
    DeepSeek-V4 (a model with compressed layers; vLLM's ``model_version="deepseek_v4"`` layout, the same entry
    for its window and its compressed entries): the 448 non-RoPE elements in fp8 with one ue8m0 byte per 64 of
    them and one pad byte, the 64 RoPE elements in bf16, ``d_c + d_c // 64 + 1 + 2 d_h^R`` = 448 + 7 + 1 + 128 =
    584 B (vllm/v1/attention/backends/mla/sparse_swa.py @03dc5649, ``DeepseekSparseSWABackend.get_kv_cache_shape``:
    "584B per token (448 NoPE + 128 RoPE + 8 fp8 scale)"; SGLang's ``DeepSeekV4SingleKVPool.get_bytes_per_token``,
    python/sglang/srt/mem_cache/deepseek_v4_memory_pool.py @007bddd4, asserts the same 584); plain "fp8" is SGLang's
    uniform fp8 pool, 512 B (``DeepSeekV4UniformFP8KVPool``); "bf16" DeepSeek's own inference code, 1,024 B
    (inference/model.py keeps ``kv_cache`` in bf16: "kv could also use fp8 format, though current implementation
    uses bf16").

    Raises:
        ValueError: a weight-only format; fp8_ds_mla for a model without MLA or with the expanded cache.
    """
    per = kv_dtype_bytes(kv_dtype)
    if kv_dtype == "fp8_ds_mla":
        if model.attention != "mla" or (mla != "latent" and not has_compressed_layers(model)):
            raise ValueError("fp8_ds_mla is FlashMLA's cache of an MLA latent (fp8 latent + scales, bf16 RoPE "
                             f"part); {model.name} has no latent cache to store in it" if model.attention != "mla"
                             else "fp8_ds_mla stores the MLA latent; it has no expanded per-head form (use "
                             "mla='latent')")
        r = model.kv_lora_rank
        if has_compressed_layers(model):
            return float(r + r // FLASHMLA_V4_FP8_BLOCK + 1 + 2 * model.qk_rope_head_dim)
        return float(r + 4 * -(-r // FLASHMLA_FP8_BLOCK) + 2 * model.qk_rope_head_dim)
    return kv_elements_per_token_per_layer(model, mla, kind) * per


def index_bytes_per_token_per_layer(model: ModelConfig) -> float:
    """Bytes of an indexer's key per token and layer: DeepSeek-V3.2's lightning indexer ``d_I + 4 * d_I / 128``,
    or ``d_I`` x the bytes of ``index_key_dtype`` where the model names one (MiniMax-M3: 128 x 2 = 256 B in bf16).

    DSA: fp8 keys with one fp32 scale per 128 elements: 128 + 4 = 132 B for ``index_head_dim`` 128
    (vLLM's DeepseekV32IndexerCache, head_dim + head_dim // quant_block_size * 4). 0 without an indexer.
    """
    if model.index_topk is None:
        return 0.0
    d = model.index_head_dim
    if model.index_key_dtype is not None:
        return float(d * dtype_bytes(model.index_key_dtype, "index_key_dtype"))
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


def compress_ratio(model: ModelConfig, kind: str) -> int | None:
    """Tokens per compressed entry of a layer of ``kind``: ``csa_compress_ratio`` (4 in DeepSeek-V4) for "csa",
    ``hca_compress_ratio`` (128) for "hca", None for the other kinds."""
    return {"csa": model.csa_compress_ratio, "hca": model.hca_compress_ratio}.get(kind)


def compressor_state_shapes(model: ModelConfig, kind: str) -> tuple[tuple[int, int], ...]:
    """(rows, width) of each fp32 compressor state of one layer of ``kind``, per sequence; () for other kinds.

    A compressor pools r consecutive tokens into one entry (csa: two overlapping windows, so it keeps 2r rows of
    twice the width); its state holds each row's kv and its score: width 2 x coff x d, coff = 2 for csa, 1 for
    hca, d the entry's width (``kv_lora_rank + qk_rope_head_dim``, 512) or the indexer's key (``index_head_dim``,
    128). DeepSeek-V4-Pro: csa (8, 2,048) and its indexer's (8, 512); hca (128, 1,024). Sources: DeepSeek's
    inference/model.py ``Compressor`` (kv_state and score_state of (coff x ratio, coff x head_dim) each); vLLM's
    ``CompressorStateCache`` (state_dim = 2 x coff x head_dim, a sliding window of coff x ratio tokens); SGLang's
    ``CompressStatePool`` (ring of 8 / 128 rows of 2 x (1 + overlap) x head_dim).
    """
    r = compress_ratio(model, kind)
    if r is None:
        return ()
    d = model.kv_lora_rank + model.qk_rope_head_dim
    if kind == "csa":
        return (2 * r, 2 * 2 * d), (2 * r, 2 * 2 * model.index_head_dim)
    return ((r, 2 * d),)


def _numel(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape)) if shape else 0


@dataclass(frozen=True)
class LayerSpec:
    """What one layer holds for one sequence.

    Fields:
        kind: one of ``KIND_DESCRIPTIONS`` ("sparse_mla" for the attention layers of an MLA model
            with a DSA indexer).
        owns_cache: False when the layer reuses another layer's KV cache (or has none).
        span_limit: W of a sliding, csa or hca layer (the window of uncompressed tokens), C of a chunked
            layer, None for the others.
        kv_bytes_per_token: bytes per held token of the layer's own KV (MLA: latent) cache; for csa and hca
            bytes per held entry, window tokens and compressed entries alike; 0 when it owns none.
        index_bytes_per_token: bytes per held token of the DSA indexer key cache (csa: per compressed
            entry; 0 without an indexer).
        read_top_k: decode attention reads at most this many KV entries (DSA's index_topk; csa: of the
            compressed entries, the window besides; sparse: this many blocks of ``read_block`` tokens).
        read_block: tokens per selected block (MiniMax-M3: 128; the last block selected is the query's own,
            partly filled); 1 for token-level selection.
        compress_ratio: r of a csa or hca layer (tokens per compressed entry), None for the others.
        conv_state_bytes, recurrent_state_bytes: the constant per-sequence state (Mamba, Gated DeltaNet,
            lightning), read and written whole by every decode step.
        compressor_state_bytes: DeepSeek-V4's compressor states (fp32 ring of partial kv and score rows),
            constant per sequence; compressor_step_bytes: what one decode step moves of them (one row
            written, one row read amortised over the ring's r-th-token reads).
    """

    kind: str
    owns_cache: bool
    span_limit: int | None = None
    kv_bytes_per_token: float = 0.0
    index_bytes_per_token: float = 0.0
    read_top_k: int | None = None
    conv_state_bytes: float = 0.0
    recurrent_state_bytes: float = 0.0
    compress_ratio: int | None = None
    compressor_state_bytes: float = 0.0
    compressor_step_bytes: float = 0.0
    read_block: int = 1

    @property
    def bytes_per_token(self) -> float:
        """Bytes per held token: the KV (or latent) entry plus the indexer key. csa / hca: per context token
        with the window not applied (as a sliding layer's), ``kv + (kv + index) / r``."""
        if self.compress_ratio:
            return self.kv_bytes_per_token + (self.kv_bytes_per_token + self.index_bytes_per_token) / self.compress_ratio
        return self.kv_bytes_per_token + self.index_bytes_per_token

    @property
    def state_bytes(self) -> float:
        """Constant bytes per sequence (conv + recurrent state, compressor states)."""
        return self.conv_state_bytes + self.recurrent_state_bytes + self.compressor_state_bytes

    @property
    def state_step_bytes(self) -> float:
        """Constant-state bytes one decode step moves for one sequence: a recurrent state read and written
        whole (2 x conv + recurrent), the compressors' two rows (``compressor_step_bytes``)."""
        return 2.0 * (self.conv_state_bytes + self.recurrent_state_bytes) + self.compressor_step_bytes

    @property
    def label(self) -> str:
        """Kind with its span and sharing, e.g. "sliding (W=1,024)", "full (shared KV)", "csa (r=4, W=128)"."""
        text = self.kind
        if self.kind == "sliding":  # a window no context reaches: windows switched off (``NO_WINDOW``)
            text += " (no window)" if self.span_limit >= NO_WINDOW else f" (W={self.span_limit:,})"
        elif self.kind == "chunked":
            text += f" (C={self.span_limit:,})"
        elif self.compress_ratio:
            text += f" (r={self.compress_ratio:,}, W={self.span_limit:,})"
        elif self.kind == "sparse" and self.read_top_k is not None:
            text += f" (top-{self.read_top_k:,} x {self.read_block:,})"
        if self.kind in ATTENTION_LAYER_KINDS and not self.owns_cache:
            text += " (shared KV)"
        return text

    def compressed_entries(self, context_len):
        """Compressed entries of a csa / hca layer at context S: floor(S / r) (0 for the other kinds and
        for a layer without a cache of its own); float or array like ``context_len``."""
        s = np.asarray(context_len, dtype=float)
        if not self.compress_ratio or not self.owns_cache or self.kv_bytes_per_token == 0:
            out = np.zeros_like(s)
        else:
            out = np.floor(s / self.compress_ratio)
        return float(out) if out.ndim == 0 else out

    def tokens_held(self, context_len, sliding: str = "cap"):
        """Tokens (entries) this layer's own cache holds at context S (float or array like ``context_len``).

        full / sparse_mla / parallel_mamba2: S; sliding: min(S, W); chunked: ((S - 1) mod C) + 1;
        csa / hca: the window's min(S, W) plus floor(S / r) compressed entries; 0 for layers that own no KV
        cache. ``sliding="full"``: S for every cache-owning layer's window part.
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
        out = out + np.asarray(self.compressed_entries(s))
        return float(out) if out.ndim == 0 else out

    def cache_bytes(self, context_len, sliding: str = "cap"):
        """Bytes of one sequence's per-token cache in this layer at context S (the constant state left out):
        KV entries x tokens held, plus indexer keys (csa: one per compressed entry)."""
        held = np.asarray(self.tokens_held(context_len, sliding))
        keys = np.asarray(self.compressed_entries(context_len)) if self.compress_ratio else held
        out = self.kv_bytes_per_token * held + self.index_bytes_per_token * keys
        return float(out) if np.ndim(out) == 0 else out

    def bytes_held(self, context_len, sliding: str = "cap"):
        """Bytes of one sequence in this layer at context S: the per-token cache (``cache_bytes``) + state."""
        out = np.asarray(self.cache_bytes(context_len, sliding)) + self.state_bytes
        return float(out) if np.ndim(out) == 0 else out

    def decode_bytes_read(self, context_len, sliding: str = "cap"):
        """Cache bytes one decode step moves for one sequence in this layer.

        KV entries read: the tokens held, at most ``read_top_k`` of them (DSA); csa: the window and the top-k
        of the compressed entries, hca: the window and every compressed entry; indexer keys: all held (csa:
        one per compressed entry); the constant state: ``state_step_bytes``.
        """
        held = np.asarray(self.tokens_held(context_len, sliding))
        comp = np.asarray(self.compressed_entries(context_len))
        if self.compress_ratio:
            window = held - comp
            read = window + (comp if self.read_top_k is None else np.minimum(comp, self.read_top_k))
            keys = comp
        elif self.read_top_k is not None and self.read_block > 1:
            # k blocks of b tokens, the last the query's own: k - 1 full blocks and the local block's tokens
            b = self.read_block
            local = np.where(held > 0, np.mod(held - 1.0, b) + 1.0, 0.0)
            read = np.minimum(held, (self.read_top_k - 1) * b + local)
            keys = held
        else:
            read = held if self.read_top_k is None else np.minimum(held, self.read_top_k)
            keys = held
        out = self.kv_bytes_per_token * read + self.index_bytes_per_token * keys + self.state_step_bytes
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
    cmp_b = dtype_bytes(COMPRESSOR_STATE_DTYPE)
    per_token = kv_bytes_per_token_per_layer(model, kv_dtype, mla)
    per_token_full = kv_bytes_per_token_per_layer(model, kv_dtype, mla, "full")  # Gemma 4's global layers
    index_b = index_bytes_per_token_per_layer(model)
    explicit = any(k in INDEXED_KINDS for k in model.layer_kinds)
    specs = []
    for i, kind in enumerate(model.layer_kinds):
        owns = owns_cache(model, i)
        conv, rec = state_shapes(model, kind)
        state = dict(conv_state_bytes=float(_numel(conv) * cv_b), recurrent_state_bytes=float(_numel(rec) * st_b))
        if kind in ("full", "sliding", "chunked", "parallel_mamba2", "sparse", *COMPRESSED_KINDS):
            # a DSA indexer keeps its keys in every attention layer (DeepSeek-V3.2), DeepSeek-V4's in its csa layers,
            # MiniMax-M3's in its sparse layers (a sparse layer without an indexer is a full one)
            dsa = bool(index_b) and (kind in INDEXED_KINDS if explicit else True)
            if kind == "sparse" and not dsa:
                kind = "full"
            if kind == "full" and dsa:
                kind = "sparse_mla"
            span = model.sliding_window if kind in ("sliding", *COMPRESSED_KINDS) else (
                model.attention_chunk_size if kind == "chunked" else None)
            rows = compressor_state_shapes(model, kind) if owns else ()
            own = per_token_full if kind == "full" else per_token
            specs.append(LayerSpec(
                kind, owns, span, float(own) if owns else 0.0, index_b if owns and dsa else 0.0,
                model.index_topk if dsa else None, compress_ratio=compress_ratio(model, kind),
                compressor_state_bytes=float(sum(n * w for n, w in rows) * cmp_b),
                compressor_step_bytes=float(sum(2 * w for _, w in rows) * cmp_b),
                read_block=(model.index_block_size or 1) if kind == "sparse" else 1, **state))
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
            layer's cache; 0 for lightning attention, whose fused qkv_proj counts as linear; 0 for a full layer
            whose values come from its K projection, Gemma 4's ``global_k_eq_v``).
        ffn_down, ffn_up: the down projection (F*D) and the rest (gate and up, (m - 1)*D*F) of the dense
            MLP or of the shared experts, m = ``ffn_matrices``.
        router: D*E of an MoE layer.
        experts_down, experts_up: the routed experts' down projections, E*D*F, and the rest, E*(m - 1)*D*F (D:
            ``moe_latent_dim`` for a latent MoE, whose two latent projections count as linear).
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
        if (kind in ("full", "sliding", "chunked", "parallel_mamba2", "sparse") and model.attention != "mla"
                and owns_cache(model, i) and not (kind == "full" and model.global_k_eq_v)):
            v = d * model.kv_heads_of(kind) * model.head_dim_of(kind)
        p = dict(kind=kind, ffn=ffn, mixer_norm=0 if kind == "mlp_only" else d, ffn_norm=0 if ffn == "none" else d,
                 attention_v=v)
        if ffn == "dense":
            p.update(ffn_down=dense_w * d, ffn_up=(m - 1) * d * dense_w)
        elif ffn == "moe":
            e, width = model.n_experts, model.moe_latent_dim or d  # a latent MoE's experts work in its width
            p.update(ffn_down=model.d_ff_shared * d, ffn_up=(m - 1) * d * model.d_ff_shared, router=d * e,
                     experts_down=e * model.d_ff * width, experts_up=e * (m - 1) * width * model.d_ff)
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
    "fp32 (compressor)" for DeepSeek-V4's compressor states; "" for a layer without state), description.
    A csa / hca layer (DeepSeek-V4) gives two rows, "<label>: window" (min(S, W) tokens of one entry each) and
    "<label>: compressed entries" (floor(S / r) entries of an entry plus the indexer key each, and the compressor
    state), so that every row's cache_bytes = layers x tokens_held x bytes_per_token.
    Rows sum to ``sequence_cache_bytes``.
    """
    recurrent = model.ssm_state_dtype if state_dtype is None else state_dtype
    rows = []
    for spec, n in grouped_specs(model, kv_dtype=kv_dtype, mla=mla, state_dtype=state_dtype):
        held = spec.tokens_held(context_len, sliding)
        dtype = ""
        if spec.recurrent_state_bytes:
            dtype = recurrent + (" (conv bf16)" if spec.conv_state_bytes else "")
        elif spec.compressor_state_bytes:
            dtype = f"{COMPRESSOR_STATE_DTYPE} (compressor)"
        if spec.compress_ratio and spec.owns_cache:  # two rows: the window's tokens, the compressed entries
            entries = spec.compressed_entries(context_len)
            entry = spec.kv_bytes_per_token + spec.index_bytes_per_token
            rows.append(dict(kind=f"{spec.label}: window", layers=n, tokens_held=held - entries,
                             bytes_per_token=spec.kv_bytes_per_token, per_token_bytes=n * spec.kv_bytes_per_token,
                             cache_bytes=n * spec.kv_bytes_per_token * (held - entries), state_bytes=0.0,
                             state_dtype="", description=KIND_DESCRIPTIONS[spec.kind]))
            rows.append(dict(kind=f"{spec.label}: compressed entries", layers=n, tokens_held=entries,
                             bytes_per_token=entry, per_token_bytes=n * entry / spec.compress_ratio,
                             cache_bytes=n * entry * entries, state_bytes=n * spec.state_bytes, state_dtype=dtype,
                             description=KIND_DESCRIPTIONS[spec.kind]))
            continue
        rows.append(dict(kind=spec.label, layers=n, tokens_held=held, bytes_per_token=spec.bytes_per_token,
                         per_token_bytes=n * spec.bytes_per_token, cache_bytes=n * spec.cache_bytes(context_len, sliding),
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
    included: they attend over the cache they borrow). Used for attention FLOPs. The span: W of a sliding,
    csa or hca layer (their window; the compressed entries by ``compress_ratio``), C of a chunked one, the
    top-k of a sparse_mla one (tokens) or of a sparse one (blocks of ``index_block_size``), else None."""
    out: Counter = Counter()
    for spec in layer_specs(model):
        if spec.kind in ATTENTION_LAYER_KINDS:
            out[(spec.kind, spec.span_limit if spec.kind in ("sliding", "chunked", *COMPRESSED_KINDS) else
                 (spec.read_top_k if spec.kind in ("sparse_mla", "sparse") else None))] += 1
    return [(k, span, n) for (k, span), n in out.items()]


__all__ = ["LayerSpec", "LayerParams", "layer_params", "layer_specs", "grouped_specs", "bytes_per_token", "state_bytes", "sequence_cache_bytes",
           "decode_read_bytes", "layer_breakdown", "state_shapes", "kv_elements_per_token_per_layer",
           "index_bytes_per_token_per_layer", "attention_layer_spans", "KIND_DESCRIPTIONS", "with_state_convention",
           "STATE_CONVENTIONS", "COMPRESSED_KINDS", "INDEXED_KINDS", "compress_ratio", "compressor_state_shapes", "has_compressed_layers"]
