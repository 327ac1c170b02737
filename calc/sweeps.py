"""Sweeps for the roofline and latency pages: the roofline curve, operating points, the decode
split over batch, TTFT over prompt length, and throughput against batch for several KV-head counts.

All vectorised (numpy over the swept axis), built on the formulas of ``calc.roofline``:
the roofline of Williams, Waterman and Patterson (2009, "Roofline: an insightful visual performance
model", CACM 52(4)), attainable = min(P, W * I); the decode step of the inference course, week 11, step 4; the
throughput-against-batch exercise of CS336 lecture 10 (Inference), exercise 1.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .checks import check_positive_int
from .dtypes import KV_CACHE_ONLY_FORMATS, dtype_bytes, kv_dtype_bytes
from .hardware import Accelerator
from .kv import decode_kv_read_bytes_array, plain_attention_changes, kv_bytes_per_token, kv_cache_bytes
from .memory import check_embedding, weight_bytes, weight_bytes_read
from .models import ModelConfig
from .parallel import layout_sweep_arrays
from .quant import format_table
from .roofline import bound_label, check_logits, decode_arrays, prefill_arrays
from .step import decode_step_time, max_batch, memory_budget, prefill_time

#: Prompt lengths of the default TTFT sweep: 16 .. 131,072 tokens, four points per octave.
DEFAULT_PROMPT_LENS = np.unique(np.round(2.0 ** np.arange(4, 17.01, 0.25)).astype(int))


def ridge_intensity(accelerator: Accelerator, weight_dtype: str = "bf16") -> float:
    """The roofline's ridge point P/W in FLOP/byte, P the peak for matmuls on ``weight_dtype``.

    Below it a kernel is memory-bound, above it compute-bound (Williams et al. 2009; CS336 lecture 10 (Inference),
    "One ratio explains the entire lecture": 989 TFLOP/s / 3.35 TB/s = 295 FLOP/byte on an H100).

    Raises:
        ValueError: unknown dtype.
    """
    return accelerator.compute_flops(weight_dtype) / accelerator.bandwidth_bytes_per_s


def roofline_curve(accelerator: Accelerator, weight_dtype: str = "bf16", intensities=None) -> pd.DataFrame:
    """Attainable FLOP/s against arithmetic intensity: ``min(P, W * I)`` (Williams et al. 2009).

    Args:
        intensities: 1-D array of FLOP/byte values (default: 200 log-spaced points from 0.1 to 10^5,
            plus the ridge itself so the corner is drawn sharp).

    Returns:
        DataFrame sorted by intensity: intensity_flop_per_byte, attainable_flops_per_s, bound
        ("memory" left of the ridge, "compute" from it on).

    Raises:
        ValueError: unknown dtype; intensities not positive.
    """
    ridge = ridge_intensity(accelerator, weight_dtype)
    if intensities is None:
        i = np.sort(np.append(np.logspace(-1, 5, 200), ridge))
    else:
        i = np.asarray(intensities, dtype=float)
        if i.ndim != 1 or i.size == 0 or np.any(~np.isfinite(i)) or np.any(i <= 0):
            raise ValueError("intensities must be a non-empty 1-D array of positive FLOP/byte values")
    p = accelerator.compute_flops(weight_dtype)
    attainable = np.minimum(p, accelerator.bandwidth_bytes_per_s * i)
    return pd.DataFrame({"intensity_flop_per_byte": i, "attainable_flops_per_s": attainable,
                         "bound": np.where(i < ridge, "memory", "compute")})


def roofline_points(model: ModelConfig, accelerator: Accelerator, context_len: int, batches=(1,),
                    prompt_len: int | None = None, weight_dtype: str = "bf16",
                    kv_dtype: str = "bf16", embedding: str = "gather", logits: str = "all") -> pd.DataFrame:
    """Operating points of decode (one per batch size) and of one prefill on the roofline.

    Each point is one step of ``decode_step_time`` / ``prefill_time``: intensity = its FLOPs / its bytes
    (weights read + KV; for decode ``2*N_active*B / (weights read + B*KV)``), achieved rate = FLOPs /
    total_s (which can sit below the roof: the cache read adds time the max() does not hide). The
    point lies right of the ridge P/W exactly when ``StepTime.bound`` is "compute" (compute_s >
    weights_s + kv_s): the chart and the label use one definition. ``logits``: the prefill point's LM head
    on every prompt token ("all", the course) or the last only ("last", engines), as ``prefill_time``.

    Returns:
        DataFrame, one row per point: phase ("decode"/"prefill"), label, batch, tokens (per sequence
        in the step), intensity_flop_per_byte, achieved_flops_per_s, roof_flops_per_s (min(P, W*I)),
        step_s, bound ("memory"/"compute": the step's own verdict).

    Raises:
        ValueError: invalid sizes or dtypes.
    """
    rows = []
    p = accelerator.compute_flops(weight_dtype)
    w = accelerator.bandwidth_bytes_per_s
    for b in batches:
        step = decode_step_time(model, accelerator, b, context_len, weight_dtype, kv_dtype, embedding=embedding)
        ai = step.arithmetic_intensity
        rows.append(dict(phase="decode", label=f"decode B={int(b):,}, S={int(context_len):,}", batch=int(b),
                         tokens=1, intensity_flop_per_byte=ai, achieved_flops_per_s=step.flops / step.total_s,
                         roof_flops_per_s=min(p, w * ai), step_s=step.total_s, bound=step.bound))
    if prompt_len is not None:
        step = prefill_time(model, accelerator, prompt_len, 1, weight_dtype, kv_dtype, embedding=embedding,
                            logits=logits)
        ai = step.arithmetic_intensity
        rows.append(dict(phase="prefill", label=f"prefill T={int(prompt_len):,}", batch=1, tokens=int(prompt_len),
                         intensity_flop_per_byte=ai, achieved_flops_per_s=step.flops / step.total_s,
                         roof_flops_per_s=min(p, w * ai), step_s=step.total_s, bound=step.bound))
    return pd.DataFrame(rows)


def decode_split(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
                 weight_dtype: str = "bf16", kv_dtype: str = "bf16", n_points: int = 200, tp: int = 1, pp: int = 1,
                 ep: int = 1, interconnect=None, embedding: str = "gather") -> pd.DataFrame:
    """The decode step split into weight read, cache read and compute, over a batch grid.

    With ``tp``, ``pp``, ``ep`` above 1 (``calc.parallel``): per replica and per GPU, with a comm_s
    column added to the stack (total_s = kv_s + weights_s + compute_excess_s + comm_s).

    ``total_s = kv_s + max(weights_s, compute_s)`` (the inference course, week 11, step 4), so the three parts that stack
    to the total are kv_s, weights_s and ``compute_excess_s = max(0, compute_s - weights_s)``
    (the arithmetic that no longer hides behind the weight read, beyond the critical batch).
    The grid runs from B = 1 to ``max(16, 1.25 * max(ceiling, batch))`` (at most 2^20), with at most
    ``n_points`` integer batch sizes, and always holds ``batch`` and the memory ceiling.

    Returns:
        DataFrame, one row per batch: batch, weights_s, kv_s, compute_s, compute_excess_s, total_s,
        tokens_per_s, fits (within one accelerator's memory), max_batch (the ceiling, same on every row).

    Raises:
        ValueError: invalid sizes or dtypes.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    n = check_positive_int(n_points, "n_points")
    layout = (tp, pp, ep) != (1, 1, 1)
    ceiling = max_batch(model, accelerator, s, weight_dtype, kv_dtype, tp=tp, pp=pp, ep=ep)
    top = int(min(2**20, max(16, np.ceil(1.25 * max(ceiling, b)))))
    grid = np.unique(np.round(np.linspace(1, top, min(n, top))).astype(int))
    extra = [x for x in (b, ceiling) if 1 <= x <= top]
    grid = np.unique(np.concatenate([grid, extra]).astype(int))
    check_embedding(embedding)
    if layout:
        _, a, mem, _ = layout_sweep_arrays(model, accelerator, grid, s, tp, pp, ep, weight_dtype, kv_dtype,
                                           interconnect, embedding=embedding)
    else:
        a = decode_arrays(model, accelerator, grid, s, weight_dtype, kv_dtype, embedding=embedding)
    df = pd.DataFrame({
        "batch": grid, "weights_s": a["weights_s"], "kv_s": a["kv_s"], "compute_s": a["compute_s"],
        "compute_excess_s": np.maximum(0.0, a["compute_s"] - a["weights_s"]), "total_s": a["total_s"],
        "tokens_per_s": a["tokens_per_s"], "fits": (grid <= ceiling) if not layout else (mem <= accelerator.memory_bytes), "max_batch": ceiling,
    })
    if layout:
        df.insert(5, "comm_s", a["comm_s"])
    return df


def ttft_sweep(model: ModelConfig, accelerator: Accelerator, prompt_lens=None, batch: int = 1,
               weight_dtype: str = "bf16", kv_dtype: str = "bf16", tp: int = 1, pp: int = 1, ep: int = 1,
               interconnect=None, embedding: str = "gather", logits: str = "all") -> pd.DataFrame:
    """Time to first token (no queue) against prompt length, one vectorised roofline evaluation.

    ``tp``, ``pp``, ``ep`` above 1: one replica over several accelerators (``calc.parallel``; each
    prompt length is one call, since the all-reduce message grows with it), with a comm_s column.

    The same model as ``calc.prefill_time`` (the inference course, week 11, step 3; CS336 lecture 10 (Inference) "the two regimes"):
    compute = ``2*N_active*B*T`` + causal attention ``sum over layers of 2*N*(H_qk+H_v)*keys``,
    bytes = weights read + KV written, ``total = kv_s + max(weights_s, compute_s)``.
    Llama-3-8B on an H100 SXM, T = 8,192: about 151 ms with the course's ``embedding="table"``
    (2N counts the input embedding), 143 ms with the default gather (no matmul for the lookup), 134 ms
    gathered with ``logits="last"`` (the LM head on each prompt's last token only, as engines run it;
    ``calc.roofline.head_flops_skipped``); the default "all" is the course's 2*N*B*T.

    Args:
        prompt_lens: 1-D array of prompt lengths in tokens (default ``DEFAULT_PROMPT_LENS``).

    Returns:
        DataFrame, one row per prompt length: prompt_len, weights_s, kv_s, compute_s, attention_flops,
        flops, ttft_s, prefill_tokens_per_s, bound ("memory"/"compute", as ``StepTime.bound``).

    Raises:
        ValueError: prompt lengths not positive integers; invalid batch or dtype.
    """
    b = check_positive_int(batch, "batch")
    t = DEFAULT_PROMPT_LENS if prompt_lens is None else np.asarray(prompt_lens)
    if t.ndim != 1 or t.size == 0 or np.any(t < 1) or np.any(t != np.floor(t)):
        raise ValueError("prompt_lens must be a non-empty 1-D array of positive integers")
    t = t.astype(int)
    check_embedding(embedding)
    check_logits(logits)
    if (tp, pp, ep) != (1, 1, 1):
        steps = [prefill_time(model, accelerator, int(x), b, weight_dtype, kv_dtype, tp=tp, pp=pp, ep=ep,
                              interconnect=interconnect, embedding=embedding, logits=logits) for x in t]
        total = np.array([x.total_s for x in steps])
        compute = np.array([x.compute_s for x in steps])
        weights = np.array([x.weights_s for x in steps])
        kv = np.array([x.kv_s for x in steps])
        return pd.DataFrame({"prompt_len": t, "weights_s": weights, "kv_s": kv,
                             "compute_s": compute, "comm_s": [x.comm_s for x in steps],
                             "flops": [x.flops for x in steps], "ttft_s": total, "prefill_tokens_per_s": b * t / total,
                             "bound": bound_label(compute, weights + kv)})
    a = prefill_arrays(model, accelerator, t, b, weight_dtype, kv_dtype, embedding=embedding, logits=logits)
    weights_s, kv_s, compute_s, total = a["weights_s"], a["kv_s"], a["compute_s"], a["total_s"]
    attn, flops = a["attention_flops"], a["flops"]
    return pd.DataFrame({"prompt_len": t, "weights_s": weights_s, "kv_s": kv_s, "compute_s": compute_s,
                         "attention_flops": attn, "flops": flops, "ttft_s": total,
                         "prefill_tokens_per_s": b * t / total,
                         "bound": bound_label(compute_s, weights_s + kv_s)})


def kv_head_variants(model: ModelConfig, k_values=None) -> dict[str, ModelConfig]:
    """The model with K = N (MHA), K = 8 (GQA) and K = 1 (MQA) KV heads, for CS336 lecture 10 (Inference) exercise 1.

    Only the KV-head count changes; the K and V projections shrink with it, so the parameter count is
    adjusted by ``2 * L * D * H * (K_new - K_old)`` (the ``2*D*K*H`` term of the per-layer count in
    CS336 lecture 10's napkin model). Where 8 does not divide N (or is not below N), the largest divisor of
    N below 8 stands in, and the label says so. A model that is neither of these (its own GQA K, or
    MLA) is added too, under its own label. MLA models become plain attention with the same
    head width H; their parameter count is kept (MLA's projections have another shape), which the
    label states.

    Args:
        k_values: optional explicit KV-head counts (each must divide N).

    Returns:
        dict label -> ModelConfig, ordered from most to fewest KV heads (an MLA model itself last).

    Raises:
        ValueError: a requested K that does not divide N.
    """
    n, h = model.n_heads, model.head_dim
    if k_values is None:
        mid = 8 if (8 < n and n % 8 == 0) else next((c for c in range(7, 1, -1) if c < n and n % c == 0), None)
        ks = [n] + ([mid] if mid else []) + [1]
    else:
        ks = [check_positive_int(k, "n_kv_heads") for k in k_values]
        for k in ks:
            if n % k:
                raise ValueError(f"n_kv_heads must divide n_heads ({n}), got {k}")
    if model.attention != "mla":
        ks.append(model.n_kv_heads)
    ks = sorted(set(ks), reverse=True)
    plain = plain_attention_changes(model)
    out: dict[str, ModelConfig] = {}
    for k in ks:
        kind = "mha" if k == n else ("mqa" if k == 1 else "gqa")
        if model.attention == "mla":
            variant = model.with_changes(**plain, attention=kind, n_kv_heads=k)
            note = ", params kept"
        else:
            # the K and V projections of every layer the new K reaches (Gemma 4's global layers keep their own)
            reached = model.n_layers - (model.layer_kinds.count("full") if model.has_global_shapes else 0)
            delta = 2 * reached * model.d_model * h * (k - model.n_kv_heads)
            changes = dict(attention=kind, n_kv_heads=k, n_params=model.n_params + delta)
            if model.n_active_params is not None:
                changes["n_active_params"] = model.n_active_params + delta
            variant = model.with_changes(**changes)
            note = ""
        name = {"mha": "MHA", "mqa": "MQA", "gqa": "GQA"}[kind]
        stand_in = " (8 does not divide N)" if (k_values is None and kind == "gqa" and k != 8) else ""
        own = " = this model" if (model.attention != "mla" and k == model.n_kv_heads) else ""
        out[f"K={k} {name}{stand_in}{note}{own}"] = variant
    if model.attention == "mla":
        out["MLA = this model"] = model
    return out


def variant_kv_dtype(kv_dtype: str, variant: ModelConfig, mla: str = "latent") -> str:
    """The cache format a layout variant of a sweep keeps: ``kv_dtype``, except that a format holding an MLA latent
    only (``KV_CACHE_ONLY_FORMATS``: "fp8_ds_mla", FlashMLA's) becomes plain "fp8" (one byte per element, the
    per-layer scale an engine gives the same ``--kv-cache-dtype`` family) for a variant with no latent to store:
    plain attention, or MLA cached in its expanded form (``mla`` other than "latent")."""
    if kv_dtype in KV_CACHE_ONLY_FORMATS and (variant.attention != "mla" or mla != "latent"):
        return "fp8"
    return kv_dtype


def throughput_by_kv_heads(model: ModelConfig, accelerator: Accelerator, context_len: int,
                           weight_dtype: str = "bf16", kv_dtype: str = "bf16", k_values=None,
                           n_points: int = 120, embedding: str = "gather") -> pd.DataFrame:
    """Decode throughput against batch for each KV-head variant, each curve cut at its memory ceiling.

    CS336 lecture 10 (Inference) exercise 1: throughput ``B / ((weights + B*KV) / W)`` rises with B until the cache
    dominates, then saturates at W/KV (B is in numerator and denominator). The knee is where the
    batch's cache equals the weights, ``B_knee = weight bytes / KV`` (the inference course, week 11, step 4: about 15 for
    Llama-3-8B at 8k), with half the ceiling's throughput. Fewer KV heads shrink KV, which moves the
    memory ceiling ``floor((memory - weights) / KV)`` out: "GQA's real win is often the batch it unlocks".

    Each variant is swept on a log grid from B = 1 to its own ceiling (always included as the last
    point); a variant whose weights do not fit has no rows. A cache format that holds an MLA latent only
    (``KV_CACHE_ONLY_FORMATS``: "fp8_ds_mla", FlashMLA's) stays on the MLA model; its plain-attention variants keep
    their keys and values in "fp8" (``variant_kv_dtype``), which their label says (", fp8 cache").

    Returns:
        DataFrame, one row per (variant, batch): variant, n_kv_heads, batch, total_s, tokens_per_s,
        max_batch (the variant's ceiling), knee_batch, ceiling_tokens_per_s (W / KV), is_ceiling (the
        last point of the curve), is_knee (the grid point at the knee, rounded; absent past the ceiling).

    Raises:
        ValueError: invalid sizes, dtypes or K values.
    """
    s = check_positive_int(context_len, "context_len")
    n = check_positive_int(n_points, "n_points")
    kv_dtype_bytes(kv_dtype)
    check_embedding(embedding)
    frames = []
    for label, variant in kv_head_variants(model, k_values).items():
        kv = variant_kv_dtype(kv_dtype, variant)
        if kv != kv_dtype:  # no latent to store in it
            label = f"{label}, fp8 cache"
        ceiling = max_batch(variant, accelerator, s, weight_dtype, kv)
        if ceiling < 1:
            continue
        kv_one = float(decode_kv_read_bytes_array(variant, s, 1, kv))  # what a step moves per sequence
        knee = weight_bytes(variant, weight_dtype) / kv_one
        knee_b = int(round(knee))
        extra = [ceiling] + ([knee_b] if 1 <= knee_b <= ceiling else [])
        grid = np.unique(np.concatenate([np.round(np.geomspace(1, ceiling, min(n, ceiling))), extra]).astype(int))
        a = decode_arrays(variant, accelerator, grid, s, weight_dtype, kv, embedding=embedding)
        frames.append(pd.DataFrame({
            "variant": label, "n_kv_heads": variant.n_kv_heads, "batch": grid, "total_s": a["total_s"],
            "tokens_per_s": a["tokens_per_s"], "max_batch": ceiling,
            "knee_batch": knee, "ceiling_tokens_per_s": accelerator.bandwidth_bytes_per_s / kv_one,
            "is_ceiling": grid == ceiling, "is_knee": grid == knee_b,
        }))
    if not frames:
        return pd.DataFrame(columns=["variant", "n_kv_heads", "batch", "total_s", "tokens_per_s", "max_batch",
                                     "knee_batch", "ceiling_tokens_per_s", "is_ceiling", "is_knee"])
    return pd.concat(frames, ignore_index=True)



def quantization_table(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int,
                       formats=("bf16", "fp8", "int8", "int4"), apply: str = "both", weight_dtype: str = "bf16",
                       kv_dtype: str = "bf16", embedding: str = "gather", reserve_bytes: float = 0.0) -> pd.DataFrame:
    """One row per format in ``formats``: the decode step and the memory of ``model`` with that format applied to
    the weights, the cache or both (``apply``: "both", "weights", "cache"; the other part keeps ``weight_dtype``
    or ``kv_dtype``).

    Columns: format, weight_dtype, kv_dtype, weights_bytes, kv_bytes, total_bytes, gpus_needed (``memory_budget``
    at ``batch`` with ``reserve_bytes``), weights_read_s, kv_read_s, compute_s, step_s, tokens_per_s
    (``decode_step_time``), max_batch (``max_batch`` with the reserve). The inference course, week 11, step 4:
    decode reads every weight and the whole cache, so fewer bytes per number mean a shorter step.

    Raises:
        ValueError: ``apply`` not one of the three, or what ``decode_step_time`` / ``memory_budget`` reject.
    """
    if apply not in ("both", "weights", "cache"):
        raise ValueError(f"apply must be 'both', 'weights' or 'cache', got {apply!r}")
    rows = []
    for f in formats:
        wq = f if apply in ("both", "weights") else weight_dtype
        kvq = f if apply in ("both", "cache") else kv_dtype
        step = decode_step_time(model, accelerator, batch, context_len, wq, kvq, embedding=embedding)
        budget = memory_budget(model, accelerator, context_len, batch, wq, kvq, reserve_bytes=reserve_bytes)
        rows.append(dict(format=f, weight_dtype=wq, kv_dtype=kvq, weights_bytes=budget.weights_bytes,
                         kv_bytes=budget.kv_bytes, total_bytes=budget.total_bytes, gpus_needed=budget.n_accelerators,
                         weights_read_s=step.weights_s, kv_read_s=step.kv_s, compute_s=step.compute_s,
                         step_s=step.total_s, tokens_per_s=step.tokens_per_s,
                         max_batch=max_batch(model, accelerator, context_len, wq, kvq, reserve_bytes)))
    return pd.DataFrame(rows)


def stored_format_steps(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int,
                        kv_dtype: str = "bf16", embedding: str = "gather", reserve_bytes: float = 0.0) -> pd.DataFrame:
    """``calc.quant.format_table(model)`` (each weight format as stored: bits per weight and per parameter,
    weights_bytes, block, what stays unquantized, source) with two columns more: ``step_s``, the decode step at
    ``batch`` and ``context_len`` with the weights in that format and the cache in ``kv_dtype``, and
    ``max_batch`` with ``reserve_bytes`` kept free.

    Raises:
        ValueError: what ``decode_step_time`` or ``max_batch`` reject.
    """
    table = format_table(model)
    table["step_s"] = [decode_step_time(model, accelerator, batch, context_len, f, kv_dtype, embedding=embedding).total_s
                       for f in table["format"]]
    table["max_batch"] = [max_batch(model, accelerator, context_len, f, kv_dtype, reserve_bytes) for f in table["format"]]
    return table


def layout_comparison(variants: dict[str, ModelConfig], accelerator: Accelerator, context_len: int, batch: int,
                      weight_dtype: str = "bf16", kv_dtype: str = "bf16", sliding: str = "cap",
                      mla: str = "latent") -> list[dict]:
    """One row per attention layout (``variants``: name -> model, e.g. ``calc.kv.attention_variants``):
    ``layout``, ``attention`` (upper case), ``kv_heads``, ``kv_bytes_per_token``, ``kv_bytes_per_sequence``
    (``context_len`` tokens), and from ``memory_budget`` at ``batch``: ``kv_bytes_total``, ``total_bytes``,
    ``gpus_needed``, and ``kv_dtype``, the cache format of the row. Bytes as ``kv_cache_bytes`` counts them
    (windows and MLA by the conventions given). A format only an MLA latent can be stored in ("fp8_ds_mla",
    FlashMLA's) leaves the layouts without a latent in plain "fp8", the per-tensor-scaled cache an engine gives
    them for the same ``--kv-cache-dtype`` family; their row's ``kv_dtype`` says so.

    Raises:
        ValueError: as ``memory_budget``.
    """
    rows = []
    for name, v in variants.items():
        fmt = variant_kv_dtype(kv_dtype, v, mla)
        b = memory_budget(v, accelerator, context_len, batch, weight_dtype, fmt, sliding=sliding, mla=mla)
        rows.append(dict(layout=name, attention=v.attention.upper(), kv_heads=v.n_kv_heads,
                         kv_bytes_per_token=kv_bytes_per_token(v, fmt, mla=mla),
                         kv_bytes_per_sequence=kv_cache_bytes(v, context_len, 1, fmt, sliding, mla),
                         kv_bytes_total=b.kv_bytes, total_bytes=b.total_bytes, gpus_needed=b.n_accelerators,
                         kv_dtype=fmt))
    return rows
