"""The KV cache bill: bytes per token and per sequence for MHA, GQA, MQA, MLA, windows and hybrids.

What each layer holds (its kind, the tokens it keeps at a context, its per-token bytes and its
constant per-sequence state) is described once, in ``calc.layers``; this module sums it.

Conventions (where serving engines differ, both are offered):
- ``sliding="cap"`` (default): a sliding-window layer keeps at most W tokens (Mistral's rolling
  buffer, vLLM's hybrid allocator) and a chunked layer its current chunk. ``sliding="full"``: those
  layers are reserved at full length (engines without a hybrid allocator).
- ``mla="latent"`` (default): MLA stores the latent c_KV plus the decoupled RoPE key,
  d_c + d_h^R elements per token and layer (DeepSeek-V2 report, section 2.1). ``mla="expanded"``:
  per-head K (qk_nope + qk_rope wide) and V (v_head_dim wide) are materialised, as an engine without
  the absorbed path does.
- Cross-layer KV sharing (Brandon et al. 2024): layers 0, s, 2s, ... hold a cache, the others reuse it;
  Gemma-3n's last ``n_kv_shared_layers`` layers own none.
- Cache formats (``kv_dtype``) as the engines store them, scales included where they are per token or
  per block (``calc.dtypes.kv_dtype_bytes`` and the table above it): fp8 with per-tensor scales (vLLM,
  SGLang: nothing per token), llama.cpp's q8_0/q4_0 blocks, FlashMLA's "fp8_ds_mla" (656 B per token and
  layer for DeepSeek); weight-only formats (q4_K_M, int4-g128) are refused.
- Constant-state layers (Gated DeltaNet, lightning attention, Mamba) add nothing per token and a
  fixed state per sequence, in the model's ``ssm_state_dtype`` (the config's, else "fp32") or
  ``state_dtype`` when given; see ``calc.layers``.
- DeepSeek-V4's compressed layers (csa, hca) hold a window of W uncompressed tokens and one entry per r
  tokens (csa also an indexer key per entry), plus fp32 compressor states per sequence; its cache formats
  are "bf16" (DeepSeek's inference code, 1,024 B per entry), "fp8_ds_mla" (vLLM and SGLang by default,
  584 B: ``calc.layers.kv_bytes_per_token_per_layer``) and "fp8" (SGLang's uniform fp8 pool, 512 B).
"""
from __future__ import annotations

import numpy as np

from .checks import check_positive_int
from .dtypes import dtype_bytes, kv_dtype_bytes
from .layers import (MLA_CONVENTIONS, NO_WINDOW, SLIDING_CONVENTIONS, ATTENTION_LAYER_KINDS, COMPRESSED_KINDS, WINDOWED_KINDS,
                     bytes_per_token, check_conventions, decode_read_bytes, kv_elements_per_token_per_layer, layer_specs,
                     sequence_cache_bytes, state_bytes)
from .models import ModelConfig

__all__ = ["SLIDING_CONVENTIONS", "MLA_CONVENTIONS", "kv_elements_per_token_per_layer", "cache_layer_counts",
           "kv_bytes_per_token", "cached_tokens_per_layer", "kv_cache_bytes", "kv_cache_bytes_array",
           "kv_state_bytes", "decode_kv_read_bytes_array", "attention_variants", "hybrid_layer_types",
           "with_attention_layout", "conventions_that_matter", "plain_attention_changes",
           "kv_bytes_per_context_token"]


def cache_layer_counts(model: ModelConfig) -> tuple[int, int]:
    """Number of (full-span, bounded-span) attention layers that hold their own cache.

    Full span: full, sparse MLA, parallel attention+Mamba2 and DeepSeek-V4's compressed layers (their
    compressed entries grow with the context); bounded: sliding and chunked.
    With cross-layer sharing factor s, layers 0, s, 2s, ... hold the caches (CLA, Brandon et al. 2024);
    shared-KV and constant-state layers are not counted.
    """
    owners = [s for s in layer_specs(model) if s.owns_cache and s.kind in ATTENTION_LAYER_KINDS]
    n_bounded = sum(1 for s in owners if s.kind in ("sliding", "chunked"))
    return len(owners) - n_bounded, n_bounded


def kv_bytes_per_token(model: ModelConfig, kv_dtype: str = "bf16", mla: str = "latent") -> float:
    """KV-cache bytes per context token of one sequence, summed over the layers that own a cache.

    ``2 * L * K * H * bytes`` for MHA/GQA/MQA (the inference course, week 11, step 2; chapter 9, LLM
    inference), ``L * (d_c + d_h^R) * bytes`` for MLA (plus DeepSeek-V3.2's indexer key). Windows and chunks are not applied
    here (every cache-holding layer counts as full), constant-state layers add nothing: use
    ``kv_cache_bytes`` for a real context length. Llama-3-8B in bf16: 131,072 B. DeepSeek-V4's csa / hca
    layers: the window's entry counted full plus ``(entry + indexer key) / r`` (``LayerSpec.bytes_per_token``).

    Raises:
        ValueError: unknown ``kv_dtype`` or ``mla``.
    """
    check_conventions("cap", mla)
    return bytes_per_token(model, kv_dtype, mla)


def kv_state_bytes(model: ModelConfig, state_dtype: str | None = None) -> float:
    """Constant per-sequence bytes (conv + SSM/recurrent state of the linear and Mamba layers).

    0 for a pure transformer. Shapes: ``calc.layers.state_shapes`` (vLLM's MambaStateShapeCalculator).

    Raises:
        ValueError: unknown dtype.
    """
    return state_bytes(model, state_dtype)


def kv_bytes_per_context_token(model: ModelConfig, context_len: int, kv_dtype: str = "bf16", sliding: str = "cap",
                               mla: str = "latent") -> float:
    """Per-token part of one sequence's cache at context S divided by S: bytes per context token on average.

    ``(kv_cache_bytes(S) - constant state) / S``, so that ``S x this + state = kv_cache_bytes(S)``. For a model
    whose every cache-holding layer is full attention it equals ``kv_bytes_per_token``; it falls with S where
    layers hold fewer tokens than S (windows, chunks, DeepSeek-V4's compressed layers, which keep a W-token window
    plus floor(S / r) entries). DeepSeek-V4-Pro, bf16, S = 8,192: (99,762,176 - 18,710,528) / 8,192 = 9,894 B.

    Raises:
        ValueError: non-positive ``context_len``; unknown dtype or convention.
    """
    s = check_positive_int(context_len, "context_len")
    return kv_cache_bytes(model, s, 1, kv_dtype, sliding, mla, include_state=False) / s


def cached_tokens_per_layer(model: ModelConfig, context_len, sliding: str = "cap"):
    """Tokens summed over cache-holding layers for a context of ``context_len`` tokens.

    ``n_full * S + n_sliding * min(S, W)`` with ``sliding="cap"`` (chunked layers: their current
    chunk), else ``n_layers_cached * S``. Accepts a numpy array of context lengths (returns an array
    of the same shape).
    """
    check_conventions(sliding, "latent")
    s = np.asarray(context_len, dtype=float)
    out = np.zeros_like(s)
    for spec in layer_specs(model):
        out = out + np.asarray(spec.tokens_held(s, sliding))
    return float(out) if out.ndim == 0 else out


def kv_cache_bytes(model: ModelConfig, context_len: int, batch: int = 1, kv_dtype: str = "bf16",
                   sliding: str = "cap", mla: str = "latent", state_dtype: str | None = None,
                   include_state: bool = True) -> float:
    """Cache bytes of ``batch`` sequences of ``context_len`` tokens, windows, chunks, MLA and state applied.

    ``B * (sum over layers of bytes_per_token * tokens_held(S) + constant state)``; for a plain GQA
    model this is ``2 * B * S * L * K * H * bytes`` (the inference course, week 11, step 2; chapter 9,
    LLM inference).
    Llama-3-8B, 8,192 tokens, bf16: 1.07 GB.

    Args:
        model: the architecture.
        context_len: tokens in the cache per sequence (S), a positive integer.
        batch: concurrent sequences (B), a positive integer.
        kv_dtype: storage dtype of K and V ("bf16", "fp8", "int8", "int4", ...).
        sliding: "cap" (window layers keep W tokens, chunked layers one chunk) or "full".
        mla: "latent" or "expanded" (see the module docstring).
        state_dtype: dtype of the SSM / recurrent state of constant-state layers (None: the model's
            own ``ssm_state_dtype``).
        include_state: True (default): the constant per-sequence state of the linear/Mamba layers is
            included; False: the KV cache of the attention layers only, the figure an engine logs as its
            KV cache (the state apart: ``kv_state_bytes`` per sequence).

    Returns:
        bytes (float).

    Raises:
        ValueError: non-positive or non-integer ``context_len``/``batch``; unknown dtype or convention; a
            cache dtype no engine stores a cache in (``calc.dtypes.kv_dtype_bytes``).
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    total = sequence_cache_bytes(model, s, kv_dtype, sliding, mla, state_dtype)
    if not include_state:
        total -= state_bytes(model, state_dtype)
    return float(b * total)


def kv_cache_bytes_array(model: ModelConfig, context_len, batch, kv_dtype: str = "bf16",
                         sliding: str = "cap", mla: str = "latent", state_dtype: str | None = None) -> np.ndarray:
    """Vectorised ``kv_cache_bytes`` over numpy arrays of context lengths and/or batch sizes.

    Arguments broadcast against each other; no validation of the array values beyond dtype checks
    (callers pass sweeps they built).
    """
    kv_dtype_bytes(kv_dtype)
    per_seq = np.asarray(sequence_cache_bytes(model, np.asarray(context_len, dtype=float), kv_dtype, sliding, mla,
                                              state_dtype))
    return np.asarray(batch, dtype=float) * per_seq


def decode_kv_read_bytes_array(model: ModelConfig, context_len, batch, kv_dtype: str = "bf16",
                               sliding: str = "cap", mla: str = "latent",
                               state_dtype: str | None = None) -> np.ndarray:
    """Cache bytes one decode step moves for ``batch`` sequences at context S (vectorised).

    The KV held, except that DeepSeek-V3.2's sparse attention reads only the top-k latent entries
    (its indexer still reads every key), plus each constant state read and written (2 x state):
    ``calc.layers.decode_read_bytes``. Equals ``kv_cache_bytes_array`` for a transformer without
    state or DSA.
    """
    per_seq = np.asarray(decode_read_bytes(model, np.asarray(context_len, dtype=float), kv_dtype, sliding, mla,
                                           state_dtype))
    return np.asarray(batch, dtype=float) * per_seq


#: The layer kinds a change of layout to MHA, GQA or MQA turns into full-attention layers (``plain_attention_changes``):
#: DeepSeek-V4's compressed layers and MiniMax-M3's sparse layers.
PLAIN_LAYOUT_FULL_KINDS = (*COMPRESSED_KINDS, "sparse")


def _windows_off_by_span(model: ModelConfig) -> bool:
    """Whether switching ``model``'s windows off keeps its layer kinds behind ``NO_WINDOW`` (its full layers have
    shapes of their own, Gemma 4's, which its sliding layers must not take) rather than making them full."""
    return model.has_global_shapes and "sliding" in model.layer_kinds


def plain_attention_changes(model: ModelConfig, keep_windows: bool = True) -> dict:
    """Field changes that make ``model``'s attention plain (for a change of layout to MHA, GQA or MQA): the MLA
    latent and the indexer fields dropped, Gemma 4's global KV heads and K-as-V projection too (the new layout's K
    in every layer; its global layers keep their head width), DeepSeek-V4's compressed layers (csa, hca) and MiniMax-M3's sparse
    layers turned into full-attention layers (each then holds every token as K and V of the new layout), sliding
    and chunked layers and the other kinds kept. A sliding window that no layer uses any more is dropped (V4's
    128-token window belongs to its compressed layers). ``keep_windows=False``: sliding and chunked layers become
    full too, and the window and chunk sizes are dropped (every attention layer full); a model whose full layers
    have their own shapes (Gemma 4) keeps its kinds behind ``NO_WINDOW`` instead, each layer its own shape.
    """
    if not keep_windows and _windows_off_by_span(model):
        # Gemma 4: every layer holds every token, each keeping its own shape (``_without_windows``)
        return dict(plain_attention_changes(model, keep_windows=True), sliding_window=NO_WINDOW)
    to_full = PLAIN_LAYOUT_FULL_KINDS + (() if keep_windows else WINDOWED_KINDS)
    kinds = tuple("full" if k in to_full else k for k in model.layer_kinds)
    changes = dict(kv_lora_rank=None, qk_rope_head_dim=None, qk_nope_head_dim=None, v_head_dim=None,
                   index_n_heads=None, index_head_dim=None, index_topk=None, index_block_size=None,
                   index_key_dtype=None, csa_compress_ratio=None, hca_compress_ratio=None,
                   n_global_kv_heads=None, global_k_eq_v=False,
                   layer_types=None if all(k == "full" for k in kinds) else kinds)
    if not keep_windows:
        changes.update(sliding_window=None, attention_chunk_size=None)
    elif "sliding" not in kinds:
        changes["sliding_window"] = None
    return changes


def attention_variants(model: ModelConfig, window: int = 4096) -> dict[str, ModelConfig]:
    """The same model under MHA, GQA (its own K, or 8), MQA, MLA and a sliding window.

    Used for the side-by-side comparison of chapter 9's experiments. MLA uses DeepSeek's proportions
    d_c = 4H and d_h^R = H/2 (DeepSeek-V2 report, section 2.1). The window variant is the GQA
    variant (the model's own K for a GQA model, else 8, 4 or 2 as above) with every layer behind a
    window of ``window`` tokens.

    Raises:
        ValueError: non-positive window.
    """
    check_positive_int(window, "window")
    n, h = model.n_heads, model.head_dim
    plain = plain_attention_changes(model, keep_windows=False)  # every attention layer full
    if model.attention == "gqa":
        k = model.n_kv_heads
    else:  # the largest of 8, 4, 2 that divides N (GQA-8 is the Llama-3 choice)
        k = next((c for c in (8, 4, 2) if c < n and n % c == 0), 1)
    gqa = model.with_changes(**plain, attention="gqa" if k > 1 else "mqa", n_kv_heads=k)
    return {
        "MHA": model.with_changes(**plain, attention="mha", n_kv_heads=n),
        f"GQA ({n}:{k})": gqa,
        "MQA": model.with_changes(**plain, attention="mqa", n_kv_heads=1),
        "MLA": model.with_changes(**{**plain, "kv_lora_rank": 4 * h, "qk_rope_head_dim": max(1, h // 2),
                                     "qk_nope_head_dim": h, "v_head_dim": h, "global_head_dim": None},
                                  attention="mla", n_kv_heads=n),
        f"Window {window}": _windowed(gqa, window, None),
    }



def _without_windows(model: ModelConfig) -> dict:
    """Field changes that turn sliding, chunked and compressed (DeepSeek-V4's csa, hca) layers into full ones,
    keeping the other kinds. A model whose full layers have their own shapes (Gemma 4) keeps its kinds, each layer
    its own shape, behind a window no context reaches (``NO_WINDOW``): its sliding layers hold every token, as under
    ``sliding="full"``, without taking the global layers' shapes."""
    if _windows_off_by_span(model):
        return dict(sliding_window=NO_WINDOW)
    kinds = tuple("full" if k in (*WINDOWED_KINDS, *COMPRESSED_KINDS) else k for k in model.layer_kinds)
    return dict(sliding_window=None, attention_chunk_size=None, csa_compress_ratio=None, hca_compress_ratio=None,
                layer_types=None if all(k == "full" for k in kinds) else kinds)


def _windowed(model: ModelConfig, window: int, local_per_global: int | None) -> ModelConfig:
    """The model with a W-token window on its attention layers: every one, or ``local_per_global``
    sliding layers per full one (counted over the attention layers; other kinds kept)."""
    kinds = list(model.layer_kinds)
    attn = [i for i, k in enumerate(kinds) if k in WINDOWED_KINDS]
    pattern = hybrid_layer_types(len(attn), local_per_global) if local_per_global and attn else ("sliding",) * len(attn)
    for i, k in zip(attn, pattern):
        kinds[i] = k
    plain = all(k in WINDOWED_KINDS for k in kinds)
    if plain and all(k == "sliding" for k in kinds):
        layer_types = None
    else:
        layer_types = tuple(kinds)
    chunk = model.attention_chunk_size if "chunked" in kinds else None
    return model.with_changes(sliding_window=window, layer_types=layer_types, attention_chunk_size=chunk)


def hybrid_layer_types(n_layers: int, local_per_global: int) -> tuple[str, ...]:
    """Per-layer kinds of a hybrid stack: ``local_per_global`` sliding layers, then one full layer,
    repeated (layer i is full when (i + 1) is a multiple of r + 1). Gemma 3 and character.ai use 5:1
    (Gemma 3 report; "Optimizing AI Inference at Character.AI", 2024); Gemma 2 uses 1:1.

    Raises:
        ValueError: non-positive ``n_layers`` or ``local_per_global``.
    """
    n = check_positive_int(n_layers, "n_layers")
    r = check_positive_int(local_per_global, "local_per_global")
    return tuple("full" if (i + 1) % (r + 1) == 0 else "sliding" for i in range(n))


def with_attention_layout(model: ModelConfig, layout: str = "model", n_kv_heads: int | None = None,
                          latent_rank: int | None = None, window: int | None = None,
                          local_per_global: int | None = None) -> ModelConfig:
    """The model with another attention layout and window, for "what if" comparisons.

    Args:
        layout: "model" (as configured), "mha", "gqa" (with ``n_kv_heads``), "mqa" or "mla" (DeepSeek's
            proportions from ``attention_variants`` unless the model is MLA already; latent width
            ``latent_rank`` when given).
        window: None keeps the model's windows; 0 removes them; W > 0 puts a W-token window on the
            sliding layers of a hybrid stack with ``local_per_global`` sliding layers per full one
            (None or 0: every layer sliding).

    Raises:
        ValueError: an unknown layout, or a combination ``ModelConfig`` rejects (e.g. K not dividing N).
    """
    plain = plain_attention_changes(model)
    if layout == "mha":
        model = model.with_changes(**plain, attention="mha", n_kv_heads=model.n_heads)
    elif layout == "gqa":
        k = check_positive_int(n_kv_heads, "n_kv_heads")
        model = model.with_changes(**plain, attention="gqa" if k > 1 else "mqa", n_kv_heads=k)
    elif layout == "mqa":
        model = model.with_changes(**plain, attention="mqa", n_kv_heads=1)
    elif layout == "mla":
        if model.attention != "mla":
            model = attention_variants(model)["MLA"].with_changes(
                sliding_window=model.sliding_window, layer_types=model.layer_types,
                attention_chunk_size=model.attention_chunk_size)
        if latent_rank is not None:
            model = model.with_changes(kv_lora_rank=check_positive_int(latent_rank, "latent_rank"))
    elif layout != "model":
        raise ValueError(f"layout must be one of model, mha, gqa, mqa, mla; got {layout!r}")
    if window is None:
        return model
    if window == 0:
        return model.with_changes(**_without_windows(model))
    w = check_positive_int(window, "window")
    return _windowed(model, w, local_per_global)


def conventions_that_matter(model: ModelConfig) -> tuple[bool, bool]:
    """Whether the storage conventions change ``model``'s cache: (the window convention: some layer holds
    fewer tokens under ``sliding="cap"`` than under ``"full"`` at 2**20 tokens; the MLA convention: the
    latent and the expanded per-head K and V differ in bytes per token).

    A page offers a convention's switch only where it changes the bytes.

    Raises:
        ValueError: a model the layer rules reject (``cached_tokens_per_layer``, ``kv_bytes_per_token``).
    """
    windowed = cached_tokens_per_layer(model, 2**20, "cap") != cached_tokens_per_layer(model, 2**20, "full")
    has_mla = kv_bytes_per_token(model, "bf16", mla="latent") != kv_bytes_per_token(model, "bf16", mla="expanded")
    return windowed, has_mla
