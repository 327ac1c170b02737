"""Fits of the overhead a measured step spends beyond its matmuls and memory reads (seconds).

``fit_overhead``: per layer and per step, from models of two depths; ``fit_decode_overhead``: decode's
batch and context terms; ``fit_prefill_overhead``: prefill's per-forward, per-token and per-pair terms.
``live.robust`` checks these fits on the points they left out; ``live.predict`` adds their terms to the
calibrated prediction.
"""
from __future__ import annotations

import numpy as np

from calc.checks import check_nonneg_number, check_positive_int


def fit_overhead(depth_times_s: dict[int, float]) -> tuple[float, float]:
    """Fit ``t(L) = L * c_layer_s + c_step_s`` to decode-step overheads of models of depth L (the stubbed model
    and a 1-layer tiny-width one).

    Args:
        depth_times_s: {n_layers: measured step time in s}; one depth gives c_step_s = 0.

    Returns:
        (c_layer_s, c_step_s), both clipped at 0 (a negative intercept is noise).

    Raises:
        ValueError: empty input, a non-positive depth or a negative/non-finite time.
    """
    if not depth_times_s:
        raise ValueError("fit_overhead needs at least one (depth, time) pair")
    depths = np.array([check_positive_int(d, "depth") for d in depth_times_s], dtype=float)
    times = np.array([check_nonneg_number(t, "step time") for t in depth_times_s.values()], dtype=float)
    if len(depths) == 1 or np.ptp(depths) == 0:
        return float(times.mean() / depths.mean()), 0.0
    slope, intercept = np.polyfit(depths, times, 1)
    if intercept < 0:
        return float(np.sum(depths * times) / np.sum(depths * depths)), 0.0
    if slope < 0:
        return 0.0, float(times.mean())
    return float(slope), float(intercept)


def fit_decode_overhead(points: list[dict], ref_residual_s: float, ref_tokens: int) -> dict | None:
    """Fit the batch and context terms of the decode overhead (``decode_overhead_s``) by non-negative least
    squares: ``residual(B, S) - ref_residual_s = per_seq_s * (B - 1) + per_kv_token_s * (B*S - ref_tokens)``.

    Args:
        points: dicts with ``batch``, ``kv_tokens`` (S: KV tokens per sequence the step reads) and
            ``residual_s`` (tiny-model step time less its matmuls and KV read).
        ref_residual_s: the same residual at batch 1 and ``ref_tokens`` KV tokens.

    Returns:
        dict(per_seq_s, per_kv_token_s, ref_tokens), or None without points.

    Raises:
        ValueError: non-positive sizes.
    """
    if not points:
        return None
    from scipy.optimize import nnls

    ref = check_positive_int(ref_tokens, "ref_tokens")
    a = np.array([[check_positive_int(p["batch"], "batch") - 1.0,
                   p["batch"] * float(check_positive_int(p["kv_tokens"], "kv_tokens")) - ref] for p in points])
    y = np.array([float(p["residual_s"]) - float(ref_residual_s) for p in points])
    # columns may be all zero or negative (contexts below the reference): nnls handles both
    coef, _ = nnls(a, y)
    return dict(per_seq_s=float(coef[0]), per_kv_token_s=float(coef[1]), ref_tokens=ref)


def fit_prefill_overhead(points: list[dict]) -> dict | None:
    """Fit the prefill overhead by non-negative least squares:
    ``residual(B, T) = c_prefill_s + per_token_s * B*T + per_pair_s * B*T^2``: a per-forward part (dispatch of
    every layer's ops), a part per prompt token (norms, rotary, activations, cache writes at the model's
    width) and a part per causal (query, key) pair beyond the attention FLOPs at P (the attention kernel's
    own speed; calc ``attention_flops`` counts B*T^2 pairs' work).

    Args:
        points: dicts with ``batch``, ``prompt_len`` and ``residual_s`` (a prefill with the matmuls taken
            out, ``probe.stub_matmuls``, less its KV write at W and attention FLOPs at P).

    Returns:
        dict(c_prefill_s, per_token_s, per_pair_s), or None without points.

    Raises:
        ValueError: non-positive sizes.
    """
    if not points:
        return None
    from scipy.optimize import nnls

    a = np.array([[1.0, check_positive_int(p["batch"], "batch") * float(check_positive_int(p["prompt_len"], "prompt_len")),
                   p["batch"] * float(p["prompt_len"]) ** 2] for p in points])
    y = np.array([float(p["residual_s"]) for p in points])
    scale = np.maximum(np.abs(a).max(axis=0), 1e-30)  # nnls on columns of similar size
    coef, _ = nnls(a / scale, y)
    coef = coef / scale
    return dict(c_prefill_s=float(coef[0]), per_token_s=float(coef[1]), per_pair_s=float(coef[2]))
