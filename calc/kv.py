"""The KV cache bill: bytes per token and per sequence for MHA, GQA, MQA, MLA, windows and hybrids.

Conventions (where serving engines differ, both are offered):
- ``sliding="cap"`` (default): a sliding-window layer keeps at most W tokens (Mistral's rolling
  buffer, vLLM's hybrid allocator). ``sliding="full"``: sliding layers are reserved at full length
  (engines without a hybrid allocator).
- ``mla="latent"`` (default): MLA stores the latent c_KV plus the decoupled RoPE key,
  d_c + d_h^R elements per token and layer (DeepSeek-V2 report, section 2.1). ``mla="expanded"``:
  per-head K (qk_nope + qk_rope wide) and V (v_head_dim wide) are materialised, as an engine without
  the absorbed path does.
- Cross-layer KV sharing (Brandon et al. 2024): layers 0, s, 2s, ... hold a cache, the others reuse it.
"""
from __future__ import annotations

import numpy as np

from .dtypes import check_positive_int, dtype_bytes
from .models import ModelConfig

SLIDING_CONVENTIONS = ("cap", "full")
MLA_CONVENTIONS = ("latent", "expanded")


def _check_conventions(sliding: str, mla: str) -> None:
    if sliding not in SLIDING_CONVENTIONS:
        raise ValueError(f"sliding must be one of {', '.join(SLIDING_CONVENTIONS)}; got {sliding!r}")
    if mla not in MLA_CONVENTIONS:
        raise ValueError(f"mla must be one of {', '.join(MLA_CONVENTIONS)}; got {mla!r}")


def kv_elements_per_token_per_layer(model: ModelConfig, mla: str = "latent") -> int:
    """Cached elements per token in one cache-holding layer.

    MHA/GQA/MQA: 2*K*H (a key and a value per KV head; chapter 9 (LLM inference) "must-memorize formula").
    MLA latent: d_c + d_h^R (576 for DeepSeek-V2/V3). MLA expanded: N*(qk_nope + qk_rope) + N*v_head_dim.

    Raises:
        ValueError: unknown ``mla`` convention.
    """
    _check_conventions("cap", mla)
    if model.attention == "mla":
        if mla == "latent":
            return model.kv_lora_rank + model.qk_rope_head_dim
        rope = model.qk_rope_head_dim
        nope = model.qk_nope_head_dim if model.qk_nope_head_dim is not None else model.head_dim - rope
        v = model.v_head_dim if model.v_head_dim is not None else nope
        return model.n_heads * (nope + rope) + model.n_heads * v
    return 2 * model.n_kv_heads * model.head_dim


def cache_layer_counts(model: ModelConfig) -> tuple[int, int]:
    """Number of (full-attention, sliding-window) layers that hold their own cache.

    With cross-layer sharing factor s, layers 0, s, 2s, ... hold the caches (CLA, Brandon et al. 2024).
    """
    kinds = model.layer_kinds[:: model.kv_sharing]
    n_sliding = sum(1 for k in kinds if k == "sliding")
    return len(kinds) - n_sliding, n_sliding


def kv_bytes_per_token(model: ModelConfig, kv_dtype: str = "bf16", mla: str = "latent") -> float:
    """Full-attention KV-cache bytes per context token of one sequence, summed over layers.

    ``2 * L * K * H * bytes`` for MHA/GQA/MQA (the inference course, week 11, step 2; chapter 9, LLM inference), ``L * (d_c + d_h^R) * bytes``
    for MLA. Windows are not applied here (every cache-holding layer counts as full): use
    ``kv_cache_bytes`` for a real context length. Llama-3-8B in bf16: 131,072 B.

    Raises:
        ValueError: unknown ``kv_dtype`` or ``mla``.
    """
    b = dtype_bytes(kv_dtype, "kv_dtype")
    n_full, n_sliding = cache_layer_counts(model)
    return float((n_full + n_sliding) * kv_elements_per_token_per_layer(model, mla) * b)


def cached_tokens_per_layer(model: ModelConfig, context_len, sliding: str = "cap"):
    """Tokens summed over cache-holding layers for a context of ``context_len`` tokens.

    ``n_full * S + n_sliding * min(S, W)`` with ``sliding="cap"``, else ``n_layers_cached * S``.
    Accepts a numpy array of context lengths (returns an array of the same shape).
    """
    _check_conventions(sliding, "latent")
    n_full, n_sliding = cache_layer_counts(model)
    s = np.asarray(context_len, dtype=float)
    if sliding == "cap" and n_sliding:
        capped = np.minimum(s, model.sliding_window)
    else:
        capped = s
    out = n_full * s + n_sliding * capped
    return float(out) if out.ndim == 0 else out


def kv_cache_bytes(model: ModelConfig, context_len: int, batch: int = 1, kv_dtype: str = "bf16",
                   sliding: str = "cap", mla: str = "latent") -> float:
    """KV-cache bytes of ``batch`` sequences of ``context_len`` tokens, windows and MLA applied.

    ``B * bytes * elements_per_layer * (n_full * S + n_sliding * min(S, W))``; for a plain GQA model
    this is ``2 * B * S * L * K * H * bytes`` (the inference course, week 11, step 2). Llama-3-8B, 8,192 tokens, bf16:
    1.07 GB.

    Args:
        model: the architecture.
        context_len: tokens in the cache per sequence (S), a positive integer.
        batch: concurrent sequences (B), a positive integer.
        kv_dtype: storage dtype of K and V ("bf16", "fp8", "int8", "int4", ...).
        sliding: "cap" (window layers keep W tokens) or "full" (reserved at full length).
        mla: "latent" or "expanded" (see the module docstring).

    Returns:
        bytes (float).

    Raises:
        ValueError: non-positive or non-integer ``context_len``/``batch``; unknown dtype or convention.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    per_el = dtype_bytes(kv_dtype, "kv_dtype")
    return float(b * per_el * kv_elements_per_token_per_layer(model, mla)
                 * cached_tokens_per_layer(model, s, sliding))


def kv_cache_bytes_array(model: ModelConfig, context_len, batch, kv_dtype: str = "bf16",
                         sliding: str = "cap", mla: str = "latent") -> np.ndarray:
    """Vectorised ``kv_cache_bytes`` over numpy arrays of context lengths and/or batch sizes.

    Arguments broadcast against each other; no validation of the array values beyond dtype checks
    (callers pass sweeps they built).
    """
    per_el = dtype_bytes(kv_dtype, "kv_dtype")
    tokens = np.asarray(cached_tokens_per_layer(model, np.asarray(context_len, dtype=float), sliding))
    return np.asarray(batch, dtype=float) * per_el * kv_elements_per_token_per_layer(model, mla) * tokens


def attention_variants(model: ModelConfig, window: int = 4096) -> dict[str, ModelConfig]:
    """The same model under MHA, GQA (its own K, or 8), MQA, MLA and a sliding window.

    Used for the side-by-side comparison of chapter 9's experiments. MLA uses DeepSeek's proportions
    d_c = 4H and d_h^R = H/2 (DeepSeek-V2 report, section 2.1). The window variant keeps the model's
    K and puts every layer behind a window of ``window`` tokens.

    Raises:
        ValueError: non-positive window.
    """
    check_positive_int(window, "window")
    n, h = model.n_heads, model.head_dim
    plain = dict(sliding_window=None, layer_types=None, kv_lora_rank=None, qk_rope_head_dim=None,
                 qk_nope_head_dim=None, v_head_dim=None)
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
                                     "qk_nope_head_dim": h, "v_head_dim": h}, attention="mla", n_kv_heads=n),
        f"Window {window}": gqa.with_changes(sliding_window=window),
    }


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
    plain = dict(kv_lora_rank=None, qk_rope_head_dim=None, qk_nope_head_dim=None, v_head_dim=None)
    if layout == "mha":
        model = model.with_changes(**plain, attention="mha", n_kv_heads=model.n_heads)
    elif layout == "gqa":
        k = check_positive_int(n_kv_heads, "n_kv_heads")
        model = model.with_changes(**plain, attention="gqa" if k > 1 else "mqa", n_kv_heads=k)
    elif layout == "mqa":
        model = model.with_changes(**plain, attention="mqa", n_kv_heads=1)
    elif layout == "mla":
        if model.attention != "mla":
            model = attention_variants(model)["MLA"].with_changes(sliding_window=model.sliding_window,
                                                                  layer_types=model.layer_types)
        if latent_rank is not None:
            model = model.with_changes(kv_lora_rank=check_positive_int(latent_rank, "latent_rank"))
    elif layout != "model":
        raise ValueError(f"layout must be one of model, mha, gqa, mqa, mla; got {layout!r}")
    if window is None:
        return model
    if window == 0:
        return model.with_changes(sliding_window=None, layer_types=None)
    w = check_positive_int(window, "window")
    kinds = hybrid_layer_types(model.n_layers, local_per_global) if local_per_global else None
    return model.with_changes(sliding_window=w, layer_types=kinds)
