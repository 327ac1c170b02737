"""Speculative decoding's speedup: tokens per target forward, i.i.d. and per draft position, and the batch effect.

Leviathan, Kalman, Matias 2022 ("Fast Inference from Transformers via Speculative Decoding", section 3)
assume every drafted token is accepted with the same probability alpha, independently. Drafts that
reuse the target's features (EAGLE, Li et al. 2024/2025; multi-token-prediction modules, DeepSeek-V3
technical report, arXiv 2412.19437, section 5.4.3) report instead an acceptance rate per draft
position that falls along the chain: a_k, the probability that the k-th drafted token is accepted given
that the k - 1 before it were (EAGLE's "n-alpha"). A round emits the accepted prefix plus one token from
the target, so

    E[tokens per verification] = 1 + sum_{k=1..gamma} prod_{j<=k} a_j

(the k-th draft is kept only if every draft up to it is), and with a_j = alpha for every j this is
Leviathan's (1 - alpha^(gamma+1)) / (1 - alpha). The walltime speedup divides it by the round's cost in
target steps, gamma c + 1 (Theorem 3.8).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .checks import check_fraction, check_nonneg_int, check_nonneg_number, check_positive_int
from .models import ModelConfig, get_model
from .roofline import critical_batch
from .step import decode_step_time


def _check_gamma(gamma) -> int:
    return check_nonneg_int(gamma, "gamma (draft tokens per round)")


def _check_alpha(alpha) -> float:
    return check_fraction(alpha, "alpha (acceptance rate)")


# ---------------------------------------------------------------------------------------------
# Speedup formulas (Leviathan et al. 2022, section 3)
# ---------------------------------------------------------------------------------------------

def expected_tokens_per_target_forward(alpha, gamma) -> float:
    """Expected tokens emitted per target forward pass: (1 - alpha^(gamma+1)) / (1 - alpha).

    Args:
        alpha: acceptance rate in [0, 1].
        gamma: drafted tokens per round, >= 0.

    Returns:
        tokens per forward, between 1 (alpha = 0 or gamma = 0) and gamma + 1 (alpha = 1, the limit
        of the formula).

    Raises:
        ValueError: alpha outside [0, 1] or gamma negative / not an integer.

    Source: Leviathan et al. 2022, Eq. 1 (a capped geometric variable).
    """
    alpha, gamma = _check_alpha(alpha), _check_gamma(gamma)
    if alpha == 1.0:
        return float(gamma + 1)
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def walltime_speedup(alpha, gamma, cost_ratio) -> float:
    """Expected walltime improvement over plain decoding, with draft cost ratio c.

    speedup = (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)), where c = time of one draft
    forward / time of one target forward, and a verification forward is assumed to cost the same as
    a plain target step (true while decode is memory-bound; see ``batch_speedup_table``).

    Args:
        alpha: acceptance rate in [0, 1].
        gamma: drafts per round, >= 0.
        cost_ratio: c >= 0.

    Returns:
        speedup factor (1.0 means no gain; below 1 is a slowdown).

    Raises:
        ValueError: alpha outside [0, 1], gamma negative, cost_ratio negative.

    Source: Leviathan et al. 2022, Theorem 3.8.
    """
    c = check_nonneg_number(cost_ratio, "cost_ratio (draft / target step time)")
    gamma = _check_gamma(gamma)
    return expected_tokens_per_target_forward(alpha, gamma) / (gamma * c + 1.0)


def operations_factor(alpha, gamma, cost_ratio_ops=0.0) -> float:
    """Expected factor by which total arithmetic grows: (1 - alpha)(gamma c_hat + gamma + 1) / (1 - alpha^(gamma+1)).

    Args:
        alpha: acceptance rate in [0, 1].
        gamma: drafts per round, >= 0.
        cost_ratio_ops: c_hat >= 0, draft operations per token / target operations per token.

    Returns:
        the factor (>= 1 for c_hat >= 0): extra FLOP spent on rejected drafts.

    Raises:
        ValueError: as ``walltime_speedup``.

    Source: Leviathan et al. 2022, Theorem 3.11.
    """
    c_hat = check_nonneg_number(cost_ratio_ops, "cost_ratio_ops")
    gamma = _check_gamma(gamma)
    return (gamma * c_hat + gamma + 1.0) / expected_tokens_per_target_forward(alpha, gamma)


def best_gamma(alpha, cost_ratio, max_gamma: int = 32) -> int:
    """The number of drafts per round that maximises ``walltime_speedup``.

    Args:
        alpha: acceptance rate in [0, 1].
        cost_ratio: c >= 0 (draft step time / target step time).
        max_gamma: search 0..max_gamma (>= 1).

    Returns:
        the smallest gamma with the highest speedup; 0 when no gamma beats plain decoding
        (which happens when alpha <= c, Corollary 3.9).

    Raises:
        ValueError: as ``walltime_speedup``; max_gamma not a positive integer.

    Source: Leviathan et al. 2022, Theorem 3.8 and Corollary 3.9 (optimal gamma, Figure 3).
    """
    max_gamma = check_positive_int(max_gamma, "max_gamma")
    speedups = [walltime_speedup(alpha, g, cost_ratio) for g in range(max_gamma + 1)]
    best = int(np.argmax(speedups))
    return best if speedups[best] > 1.0 + 1e-12 else 0


def tokens_per_forward_table(alphas, gammas, cost_ratio: float = 0.0) -> pd.DataFrame:
    """Expected tokens per target forward and walltime speedup over a grid of alpha and gamma.

    Args:
        alphas: acceptance rates in [0, 1].
        gammas: drafts per round, >= 0.
        cost_ratio: c >= 0 for the speedup column.

    Returns:
        long DataFrame, one row per (alpha, gamma): alpha, gamma, tokens_per_target_forward,
        walltime_speedup.

    Raises:
        ValueError: as ``walltime_speedup``.

    Source: Leviathan et al. 2022, Eq. 1 and Theorem 3.8 (their Figure 2 draws the same curves).
    """
    rows = [{"alpha": float(a), "gamma": int(g),
             "tokens_per_target_forward": expected_tokens_per_target_forward(a, g),
             "walltime_speedup": walltime_speedup(a, g, cost_ratio)}
            for a in alphas for g in gammas]
    return pd.DataFrame(rows, columns=["alpha", "gamma", "tokens_per_target_forward", "walltime_speedup"])


# ---------------------------------------------------------------------------------------------
# Acceptance per draft position (EAGLE, MTP chains)
# ---------------------------------------------------------------------------------------------

#: The most draft positions a chain may list.
MAX_CHAIN = 64


def _check_chain(acceptance) -> np.ndarray:
    """A chain of per-position acceptance rates: a 1-D list of numbers in [0, 1], at most ``MAX_CHAIN``."""
    if isinstance(acceptance, (str, bytes)):
        raise ValueError("acceptance per position must be a list of numbers, e.g. [0.9, 0.8, 0.7]")
    try:
        a = np.asarray(acceptance, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"acceptance per position must be a list of numbers, got {acceptance!r}") from None
    if a.ndim != 1:
        raise ValueError("acceptance per position must be a flat list, one rate per draft position")
    if a.size > MAX_CHAIN:
        raise ValueError(f"at most {MAX_CHAIN} draft positions, got {a.size}")
    for k, v in enumerate(a, start=1):
        check_fraction(float(v), f"acceptance rate at draft position {k}")
    return a


def expected_tokens_per_verification(acceptance) -> float:
    """Expected tokens a round emits per target verification, with an acceptance rate per draft position.

    E = 1 + sum_{k=1..gamma} prod_{j<=k} a_j, gamma = len(acceptance): the k-th draft counts only if all
    drafts before it are accepted; the 1 is the token the target adds (resample or bonus).

    Args:
        acceptance: a_1..a_gamma, each in [0, 1], a_k conditional on positions 1..k-1 accepted (EAGLE's
            "n-alpha"); an empty list is plain decoding (E = 1).

    Returns:
        tokens per verification, between 1 and gamma + 1.

    Raises:
        ValueError: a rate outside [0, 1], not a flat list of numbers, more than ``MAX_CHAIN`` positions.

    Source: Leviathan et al. 2022, Eq. 1 with a_j no longer equal (the expectation of the accepted prefix
    length, sum over k of P[first k accepted]); DeepSeek-V3 technical report, section 5.4.3, for MTP.
    """
    a = _check_chain(acceptance)
    return float(1.0 + np.cumprod(a).sum()) if a.size else 1.0


def walltime_speedup_chain(acceptance, cost_ratio) -> float:
    """Walltime speedup of a per-position chain: E[tokens per verification] / (gamma c + 1).

    Args:
        acceptance: per-position rates (``expected_tokens_per_verification``); gamma = its length.
        cost_ratio: c >= 0, one draft step's time / one target step's time (0 for an MTP head whose cost
            is folded into the verify step).

    Returns:
        the speedup factor (1 = no gain).

    Raises:
        ValueError: as ``expected_tokens_per_verification``; a negative cost ratio.

    Source: Leviathan et al. 2022, Theorem 3.8, with the chain's expected tokens in place of Eq. 1.
    """
    c = check_nonneg_number(cost_ratio, "cost_ratio (draft / target step time)")
    a = _check_chain(acceptance)
    return expected_tokens_per_verification(a) / (a.size * c + 1.0)


def best_chain_length(acceptance, cost_ratio) -> int:
    """How many of the chain's positions to draft: the prefix length k that maximises the speedup.

    Returns:
        the smallest k in 0..len(acceptance) with the highest ``walltime_speedup_chain`` of the first k
        positions; 0 when no prefix beats plain decoding.

    Raises:
        ValueError: as ``walltime_speedup_chain``.

    Source: Leviathan et al. 2022, Theorem 3.8 (optimal gamma), per position.
    """
    a = _check_chain(acceptance)
    speedups = [walltime_speedup_chain(a[:k], cost_ratio) for k in range(a.size + 1)]
    best = int(np.argmax(speedups))
    return best if speedups[best] > 1.0 + 1e-12 else 0


def chain_position_table(acceptance, cost_ratio: float = 0.0) -> pd.DataFrame:
    """Per draft position: its rate, the chance it is reached and kept, and the running expectation.

    Returns:
        DataFrame, one row per position k = 1..gamma: position, acceptance (a_k), kept_probability
        (prod_{j<=k} a_j), tokens_per_verification (1 + the sum up to k: E for a chain cut at k),
        walltime_speedup (of the chain cut at k, with ``cost_ratio``).

    Raises:
        ValueError: as ``walltime_speedup_chain``.
    """
    a = _check_chain(acceptance)
    kept = np.cumprod(a)
    c = check_nonneg_number(cost_ratio, "cost_ratio (draft / target step time)")
    e = 1.0 + np.cumsum(kept)
    k = np.arange(1, a.size + 1)
    return pd.DataFrame({"position": k, "acceptance": a, "kept_probability": kept,
                         "tokens_per_verification": e, "walltime_speedup": e / (k * c + 1.0)})


def mtp_cost_ratio(model: ModelConfig) -> float:
    """Napkin cost of one MTP draft step over one target decode step: the parameters the MTP module uses
    per drafted token over the main model's active parameters (a memory-bound decode step reads each once).

    Raises:
        ValueError: a model without an MTP module (``n_mtp_layers`` 0).

    Source: DeepSeek-V3 technical report, section 2.2 (one MTP module: a projection, one transformer block
    and the shared output head); the weights-read cost of the inference course, week 11, step 4.
    """
    if not isinstance(model, ModelConfig) or model.n_mtp_layers == 0:
        raise ValueError(f"{getattr(model, 'name', model)!r} has no multi-token-prediction module to draft with")
    return model.n_mtp_active_params / model.active_params


def mtp_chain(model: ModelConfig, acceptance=(0.85,)) -> dict:
    """A model's own MTP module as the draft, for the pages: {"acceptance", "cost_ratio", "source"}.

    Args:
        model: a ``ModelConfig`` with ``n_mtp_layers`` > 0.
        acceptance: per-position rates; default DeepSeek-V3's reported 0.85 (the low end of 85-90%, a
            stand-in for other models, whose acceptance is not on file).

    Raises:
        ValueError: a model without an MTP module, a bad chain.
    """
    return {"acceptance": tuple(float(a) for a in _check_chain(acceptance)), "cost_ratio": mtp_cost_ratio(model),
            "source": f"{model.name}'s MTP module ({model.n_mtp_layers} layer(s), {model.n_mtp_params / 1e9:.2f}B "
                      f"stored, {model.n_mtp_active_params / 1e9:.2f}B used per draft): c = its active parameters "
                      f"/ the model's; acceptance DeepSeek-V3's reported 85% (arXiv 2412.19437, 5.4.3)"}


def published_chains() -> dict:
    """Per-position acceptance chains from public reports, for the pages (name -> dict with acceptance,
    source).

    * DeepSeek-V3 MTP (one module, one draft): "the acceptance rate of the second token prediction ranges
      between 85% and 90%", giving 1.8x tokens per second (technical report, arXiv 2412.19437, section
      5.4.3): the two ends of that range.
    * An illustrative falling chain of 5 positions (0.80, 0.75, 0.70, 0.65, 0.60), the shape EAGLE's
      per-position "n-alpha" tables show (Li et al., EAGLE-3, arXiv 2503.01840); illustrative numbers,
      not the paper's.
    """
    c_v3 = mtp_cost_ratio(get_model("deepseek-v3"))
    return {
        "DeepSeek-V3 MTP, low end (a1 = 0.85)": {
            "acceptance": (0.85,), "cost_ratio": c_v3,
            "source": "DeepSeek-V3 technical report (arXiv 2412.19437), section 5.4.3: second-token acceptance 85-90%; "
                      "c = the MTP module's active parameters / the model's"},
        "DeepSeek-V3 MTP, high end (a1 = 0.90)": {
            "acceptance": (0.90,), "cost_ratio": c_v3,
            "source": "DeepSeek-V3 technical report (arXiv 2412.19437), section 5.4.3: second-token acceptance 85-90%; "
                      "c = the MTP module's active parameters / the model's"},
        "Falling chain, 5 positions (illustrative)": {
            "acceptance": (0.80, 0.75, 0.70, 0.65, 0.60),
            "source": "illustrative: the falling shape of EAGLE's per-position acceptance (arXiv 2503.01840), "
                      "not its figures"},
    }


# ---------------------------------------------------------------------------------------------
# The batch effect (roofline)
# ---------------------------------------------------------------------------------------------

#: Batch sizes of the default sweep: 1..4096, about four per doubling (duplicates after rounding removed).
DEFAULT_BATCHES = tuple(int(b) for b in np.unique(np.round(np.geomspace(1, 4096, 49))))


def verify_critical_batch(accelerator, gamma, weight_dtype: str = "bf16") -> float:
    """Batch size at which a verify step of gamma + 1 tokens per sequence turns compute-bound.

    A verify step of B sequences runs B (gamma + 1) tokens through the weights, so it meets the
    ridge when B (gamma + 1) equals the critical batch B* = P * bytes / (2 W):
    B = B* / (gamma + 1). Below it, verifying gamma + 1 tokens costs about as much as decoding one.

    Args:
        accelerator: calc ``Accelerator``.
        gamma: drafts per round, >= 0.
        weight_dtype: dtype name of the weights.

    Returns:
        the batch size (float, sequences).

    Raises:
        ValueError: gamma negative, unknown dtype.

    Source: The inference course, week 11, step 4 (critical batch); CS336 lecture 10 (Inference), "Two lossless wins".
    """
    gamma = _check_gamma(gamma)
    return critical_batch(accelerator, weight_dtype) / (gamma + 1)


def batch_speedup_table(target, draft, accelerator, batches=DEFAULT_BATCHES, gamma=4, alpha=0.8, context_len=4096,
                        weight_dtype: str = "bf16", kv_dtype: str = "bf16", acceptance=None) -> pd.DataFrame:
    """Speedup of speculative decoding against batch size, from calc's decode roofline.

    Per round each of the B sequences drafts gamma tokens (gamma draft steps of 1 token) and the
    target verifies gamma + 1 positions in one step, so

        speedup(B) = E[tokens per forward] * t_target(B, 1) / (t_target(B, gamma+1) + gamma t_draft(B, 1))

    with t(B, T) = ``decode_step_time(model, accelerator, B, context_len, query_tokens=T).total_s``
    and E[tokens per forward] = (1 - alpha^(gamma+1)) / (1 - alpha). At small B the verify step
    reads the same weights as a plain step and costs about the same, so the gain is Eq. 1 less the
    draft's cost; once B (gamma + 1) passes the critical batch the verify step is compute-bound, costs
    about gamma + 1 plain steps, and the gain falls below 1.

    Args:
        target, draft: calc ``ModelConfig``s (the draft should share the target's vocabulary).
        accelerator: calc ``Accelerator``.
        batches: batch sizes B (positive integers).
        gamma: drafts per round, >= 0 (0 is plain decoding: speedup 1 at every batch).
        alpha: acceptance rate in [0, 1].
        context_len: tokens of context per sequence (positive integer).
        weight_dtype, kv_dtype: dtype names (calc.dtypes).
        acceptance: per-position acceptance rates (``expected_tokens_per_verification``) or None; when
            given, gamma = its length (the ``gamma`` argument must match it or be None) and alpha is unused.

    Returns:
        DataFrame, one row per batch: batch, target_step_s (t_target(B, 1)), verify_step_s
        (t_target(B, gamma+1)), draft_step_s (t_draft(B, 1)), round_s, cost_ratio (draft / target
        step), tokens_per_target_forward, speedup, baseline_tokens_per_s, speculative_tokens_per_s
        (all sequences together), verify_tokens_per_step (B (gamma+1)).

    Raises:
        ValueError: gamma negative, alpha outside [0, 1], a non-positive batch or context, an unknown
            dtype (and whatever ``decode_step_time`` raises).

    Source: Leviathan et al. 2022, Theorem 3.8 with c and the verify cost from the roofline of the
    inference course, week 11, step 4 (decode_step_time); the batch caveat is CS336 lecture 10 (Inference), "Two lossless wins".
    """
    if acceptance is not None:
        chain = _check_chain(acceptance)
        if gamma is not None and _check_gamma(gamma) != chain.size:
            raise ValueError(f"gamma ({gamma}) must equal the number of per-position rates ({chain.size})")
        gamma = int(chain.size)
        e_tokens = expected_tokens_per_verification(chain)
    else:
        gamma = _check_gamma(gamma)
        e_tokens = expected_tokens_per_target_forward(_check_alpha(alpha), gamma)
    context_len = check_positive_int(context_len, "context_len")
    batch_list = [check_positive_int(b, "batch") for b in batches]
    if not batch_list:
        raise ValueError("batches must list at least one batch size")
    rows = []
    for b in batch_list:
        t_target = decode_step_time(target, accelerator, b, context_len, weight_dtype, kv_dtype).total_s
        t_verify = decode_step_time(target, accelerator, b, context_len, weight_dtype, kv_dtype,
                                    query_tokens=gamma + 1).total_s
        t_draft = decode_step_time(draft, accelerator, b, context_len, weight_dtype, kv_dtype).total_s
        round_s = t_verify + gamma * t_draft
        rows.append({
            "batch": b,
            "target_step_s": t_target,
            "verify_step_s": t_verify,
            "draft_step_s": t_draft,
            "round_s": round_s,
            "cost_ratio": t_draft / t_target,
            "tokens_per_target_forward": e_tokens,
            "speedup": e_tokens * t_target / round_s,
            "baseline_tokens_per_s": b / t_target,
            "speculative_tokens_per_s": b * e_tokens / round_s,
            "verify_tokens_per_step": b * (gamma + 1),
        })
    return pd.DataFrame(rows)
