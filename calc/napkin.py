"""The napkin table: the handful of numbers that price one model on one accelerator."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .checks import check_positive_int
from .cost import cost_per_million
from .dtypes import dtype_bytes
from .hardware import Accelerator, get_accelerator, list_accelerators
from .kv import decode_kv_read_bytes_array, kv_bytes_per_token, kv_cache_bytes
from .memory import input_embedding_params, weight_bytes, weight_bytes_read
from .models import ModelConfig, get_model, list_models
from .roofline import critical_batch, matmul_params
from .step import decode_step_time, max_batch, memory_budget, prefill_time, throughput_ceiling_tokens_per_s


def _kv_note(model: ModelConfig) -> str:
    if model.attention == "mla":
        note = f"MLA latent {model.kv_lora_rank} + RoPE key {model.qk_rope_head_dim} per layer"
        return note + (" (windows not applied)" if model.sliding_window else "")
    if model.has_global_shapes:  # Gemma 4: its global layers' own heads beside the sliding ones'
        full = model.layer_kinds.count("full")
        note = (f"2 x ({model.n_layers - full} layers x {model.n_kv_heads} KV heads x {model.head_dim} + {full} "
                f"global layers x {model.kv_heads_of('full')} x {model.head_dim_of('full')})")
    else:
        note = f"2 x {model.n_layers} layers x {model.n_kv_heads} KV heads x {model.head_dim}"
    return note + (" (windows not applied)" if model.sliding_window else "")


def _napkin_row(model, accelerator, batch, context_len, weight_dtype, kv_dtype, embedding, gathered_s):
    """The course's whole-table step as an extra row, when the gathered step differs from it."""
    if embedding != "gather" or not input_embedding_params(model):
        return []
    napkin = decode_step_time(model, accelerator, batch, context_len, weight_dtype, kv_dtype, embedding="table")
    if napkin.total_s == gathered_s:
        return []
    emb = input_embedding_params(model) * dtype_bytes(weight_dtype, "weight_dtype")
    return [("decode step, course napkin", napkin.total_s, "s",
             f"also reads the {emb / 1e9:.3g} GB of input lookup tables")]


def napkin_table(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
                 weight_dtype: str = "bf16", kv_dtype: str = "bf16", price_per_hour_usd: float | None = None,
                 reserve_bytes: float = 0.0, prompt_len: int | None = None,
                 embedding: str = "gather", logits: str = "all") -> pd.DataFrame:
    """The napkin estimate of the inference course, week 11, step 4 as a table of (quantity, value, unit, note).

    Values are in base units (bytes, seconds, tokens/s, USD); ``price_per_hour_usd`` defaults to the
    accelerator's list price, and the USD rows are omitted when neither is known. ``prompt_len``
    (default: ``context_len``) is the prompt of the TTFT row. ``embedding``: "gather" (default, the
    step reads B rows of the input embedding) or "table" (the course's napkin), as in ``decode_step_time``.
    ``logits``: the TTFT row's LM head on every prompt token ("all", the course) or the last ("last",
    engines), as in ``prefill_time``.

    Raises:
        ValueError: invalid sizes, dtypes or price (from the functions it calls).
    """
    price = accelerator.price_per_hour_usd if price_per_hour_usd is None else price_per_hour_usd
    step = decode_step_time(model, accelerator, batch, context_len, weight_dtype, kv_dtype, embedding=embedding)
    budget = memory_budget(model, accelerator, context_len, batch, weight_dtype, kv_dtype, reserve_bytes)
    pre = prefill_time(model, accelerator, prompt_len or context_len, 1, weight_dtype, kv_dtype, embedding=embedding,
                       logits=logits)
    rows = [
        ("weights", weight_bytes(model, weight_dtype), "bytes", f"{model.n_params:,} parameters in {weight_dtype}"),
        ("KV cache per token", kv_bytes_per_token(model, kv_dtype), "bytes", _kv_note(model)),
        ("KV cache per sequence", kv_cache_bytes(model, context_len, 1, kv_dtype), "bytes",
         f"{context_len:,} tokens, windows applied"),
        ("KV cache of the batch", budget.kv_bytes, "bytes", f"B = {batch}"),
        ("memory used", budget.total_bytes, "bytes",
         f"of {accelerator.memory_bytes / 1e9:.0f} GB; {budget.n_accelerators:,} accelerator(s) needed"),
        ("max batch", max_batch(model, accelerator, context_len, weight_dtype, kv_dtype, reserve_bytes), "sequences",
         "memory ceiling"),
        ("decode step: weights", step.weights_s, "s", "weight bytes / W"),
        ("decode step: KV cache", step.kv_s, "s", "B x KV / W"),
        ("decode step: compute", step.compute_s, "s", "2 N B / P"),
        ("decode step (TPOT)", step.total_s, "s", "KV + max(weights, compute); a lower bound"),
        *_napkin_row(model, accelerator, batch, context_len, weight_dtype, kv_dtype, embedding, step.total_s),
        ("throughput", step.tokens_per_s, "tokens/s", f"B = {batch}"),
        ("per-user speed", 1.0 / step.total_s, "tokens/s", "1 / TPOT"),
        ("throughput ceiling W/KV", throughput_ceiling_tokens_per_s(model, accelerator, context_len, kv_dtype),
         "tokens/s", "B -> infinity"),
        ("critical batch", critical_batch(accelerator, weight_dtype), "tokens", "P x bytes / (2 W)"),
        ("prefill (TTFT, no queue)", pre.total_s, "s", f"{prompt_len or context_len:,}-token prompt, B = 1, LM head on "
         + ("the last token" if logits == "last" else "every token")),
    ]
    if price is not None:
        rows.append(("cost per 1M output tokens", cost_per_million(step.tokens_per_s, price), "USD",
                     f"at ${price:.2f}/h"))
    return pd.DataFrame(rows, columns=["quantity", "value", "unit", "note"])


def preset_table(context_len: int = 8192, batch: int = 1, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                 models=None, accelerators=None, embedding: str = "gather") -> pd.DataFrame:
    """The napkin numbers of every model on every accelerator, broadcast in one numpy evaluation.

    Args:
        models: ModelConfigs (default: every preset); accelerators: Accelerators (default: every preset).
        embedding: "gather" (default) or "table" (the course's napkin), as in ``decode_step_time``.

    Returns:
        DataFrame, one row per (model, accelerator): model, accelerator, weights_bytes, kv_bytes_per_seq,
        max_batch, fits (weights + batch's cache within memory), decode_s (the course's week 11 step at
        ``batch``), tokens_per_s, usd_per_million (NaN without a list price).

    Raises:
        ValueError: invalid sizes or dtypes.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    dtype_bytes(weight_dtype, "weight_dtype")
    models = [get_model(m) for m in list_models()] if models is None else list(models)
    accs = [get_accelerator(a) for a in list_accelerators()] if accelerators is None else list(accelerators)
    weights = np.array([weight_bytes(m, weight_dtype) for m in models])[:, None]
    read = np.array([float(weight_bytes_read(m, b, weight_dtype, embedding)) for m in models])[:, None]
    kv = np.array([kv_cache_bytes(m, s, 1, kv_dtype) for m in models])[:, None]
    # what a decode step moves: the cache, each constant state read and written, DSA's top-k (calc.layers)
    kv_read = np.array([float(decode_kv_read_bytes_array(m, s, 1, kv_dtype)) for m in models])[:, None]
    flops = np.array([2.0 * matmul_params(m, embedding) * b for m in models])[:, None]
    bw = np.array([a.bandwidth_bytes_per_s for a in accs])[None, :]
    peak = np.array([a.compute_flops(weight_dtype) for a in accs])[None, :]
    mem = np.array([a.memory_bytes for a in accs])[None, :]
    price = np.array([np.nan if a.price_per_hour_usd is None else a.price_per_hour_usd for a in accs])[None, :]
    step = b * kv_read / bw + np.maximum(read / bw, flops / peak)
    tps = b / step
    ceiling = np.floor(np.maximum(mem - weights, 0) / kv + 1e-9)
    shape = step.shape
    return pd.DataFrame({
        "model": np.repeat([m.name for m in models], shape[1]),
        "accelerator": np.tile([a.name for a in accs], shape[0]),
        "weights_bytes": np.broadcast_to(weights, shape).ravel(),
        "kv_bytes_per_seq": np.broadcast_to(kv, shape).ravel(),
        "max_batch": ceiling.ravel().astype(int),
        "fits": (weights + b * kv <= mem).ravel(),
        "decode_s": step.ravel(),
        "tokens_per_s": tps.ravel(),
        "usd_per_million": (price / (tps * 3600.0) * 1e6).ravel(),
    })
