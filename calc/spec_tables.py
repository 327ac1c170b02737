"""Speculative sampling over probability tables: checking the tables, and the rule for one drafted token.

Notation of the inference course, week 11, step 3: the target model gives the next-token distribution ``p``, the draft
model gives ``q``. A drafted token x ~ q is accepted with probability min(1, p(x)/q(x)); on rejection the
token is resampled from the residual max(0, p - q) / sum(max(0, p - q)), so the emitted token is
distributed exactly as p. alpha = sum_x min(p(x), q(x)) is the acceptance rate (Leviathan, Kalman,
Matias 2022, "Fast Inference from Transformers via Speculative Decoding", Theorem 3.5 and
Corollary 3.6; Chen et al. 2023, "Accelerating LLM Decoding with Speculative Sampling", Theorem 1).

Rounds of gamma drafts, many rounds vectorised, and the exactness test: ``calc.speculative``.
All probability tables are 1-D numpy arrays of shape (V,) (V symbols) unless stated.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from .checks import check_nonneg_int

#: A table "sums to 1" when it is within this absolute tolerance of 1.
SUM_TOLERANCE = 1e-6


# ---------------------------------------------------------------------------------------------
# Checking and normalising tables
# ---------------------------------------------------------------------------------------------

def as_table(values, what: str, ndim: int = 1) -> np.ndarray:
    """Return ``values`` as a float array of ``ndim`` dimensions with finite, non-negative entries.

    Raises:
        ValueError: values that are not numbers, of another number of dimensions, empty, negative or not finite.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a table of numbers, got {values!r}") from None
    if arr.ndim != ndim:
        shape = "a 1-D table (one probability per symbol)" if ndim == 1 else \
            "a 2-D table (one row of probabilities per position)"
        raise ValueError(f"{what} must be {shape}, got an array of shape {arr.shape}")
    if arr.shape[-1] < 1 or arr.size == 0:
        raise ValueError(f"{what} must have at least one symbol, got an empty table")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must contain only finite numbers, got {arr.tolist()}")
    if np.any(arr < 0):
        bad = arr[arr < 0][0]
        raise ValueError(f"{what} must not contain negative probabilities, got {bad:g}")
    return arr


def normalise(weights, what: str = "weights") -> np.ndarray:
    """Scale non-negative weights so that they sum to 1.

    Args:
        weights: shape (V,), finite and >= 0, not all zero (e.g. slider values 0.6, 0.4, 0, 0, 0).
        what: the argument's name for error messages.

    Returns:
        float array of shape (V,) summing to 1.

    Raises:
        ValueError: not 1-D, empty, negative or non-finite entries, or all weights zero.
    """
    arr = as_table(weights, what)
    total = arr.sum()
    if total <= 0:
        raise ValueError(f"{what} must have at least one positive entry; all {arr.size} are zero")
    return arr / total


def check_distribution(p, what: str = "p") -> np.ndarray:
    """Return ``p`` as a float array after checking it is a probability distribution.

    Args:
        p: shape (V,), entries >= 0 summing to 1 within ``SUM_TOLERANCE``.
        what: the argument's name for error messages.

    Returns:
        float array of shape (V,), rescaled so it sums to 1 exactly up to rounding.

    Raises:
        ValueError: not 1-D, empty, negative or non-finite entries, or a sum other than 1
            ("q must sum to 1, got 0.9; normalise it first").
    """
    arr = as_table(p, what)
    total = float(arr.sum())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ValueError(f"{what} must sum to 1, got {total:.6g}; normalise it first")
    return arr / total


def check_pair(p, q) -> tuple[np.ndarray, np.ndarray]:
    """Check a target ``p`` and a draft ``q`` over the same symbols.

    Returns:
        (p, q) as float arrays of shape (V,).

    Raises:
        ValueError: either is not a distribution (see ``check_distribution``) or their lengths
            differ ("p and q must have the same number of symbols, got 2 and 3").
    """
    p_arr = check_distribution(p, "p")
    q_arr = check_distribution(q, "q")
    if p_arr.shape != q_arr.shape:
        raise ValueError(f"p and q must have the same number of symbols, got {p_arr.size} and {q_arr.size}")
    return p_arr, q_arr


def check_gamma(gamma) -> int:
    """gamma, the draft tokens per round, as an int >= 0.

    Raises:
        ValueError: gamma not a non-negative integer.
    """
    return check_nonneg_int(gamma, "gamma (draft tokens per round)")


def check_rng(rng) -> np.random.Generator:
    """``rng`` itself when it is a numpy Generator (``np.random.default_rng(seed)``).

    Raises:
        ValueError: anything else (a seed, ``np.random.RandomState``).
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    return rng


# ---------------------------------------------------------------------------------------------
# One token: acceptance, residual, accept-or-resample
# ---------------------------------------------------------------------------------------------

def acceptance_probability(p, q) -> np.ndarray:
    """Probability of accepting a drafted symbol x: min(1, p(x)/q(x)), per symbol.

    Symbols the draft never proposes (q(x) = 0) get 1 (the value never matters).

    Args:
        p, q: target and draft distributions, shape (V,).

    Returns:
        float array of shape (V,) in [0, 1].

    Raises:
        ValueError: as ``check_pair``.

    Source: Leviathan et al. 2022, section 2.3 (standardized sampling); the inference course, week 11, step 3.
    """
    p_arr, q_arr = check_pair(p, q)
    return acceptance_of_arrays(p_arr, q_arr)


def acceptance_of_arrays(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """min(1, p(x)/q(x)) per symbol (1 where q(x) = 0) of tables already checked by ``check_pair``, shape (V,);
    ``acceptance_probability`` checks its input first (Leviathan et al. 2022, Algorithm 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(q > 0, p / np.where(q > 0, q, 1.0), 1.0)
    return np.minimum(1.0, ratio)


def acceptance_rate(p, q) -> float:
    """Acceptance rate alpha = sum_x min(p(x), q(x)) = 1 - total variation distance(p, q).

    Args:
        p, q: target and draft distributions, shape (V,).

    Returns:
        alpha in [0, 1] (dimensionless): the probability that one drafted token is accepted.

    Raises:
        ValueError: as ``check_pair``.

    Source: Leviathan et al. 2022, Definition 3.1 and Corollary 3.6.
    """
    p_arr, q_arr = check_pair(p, q)
    return float(np.minimum(p_arr, q_arr).sum())


def residual_of_arrays(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """max(0, p - q) / sum(max(0, p - q)) of tables already checked by ``check_pair`` (p itself when p == q),
    shape (V,); ``residual_distribution`` checks its input first (Leviathan et al. 2022, section 2.3)."""
    excess = np.maximum(0.0, p - q)
    total = excess.sum()
    # p == q: nothing is ever rejected, so the residual is never sampled; return p to stay a distribution.
    return excess / total if total > 0 else p.copy()


def residual_distribution(p, q) -> np.ndarray:
    """The distribution a rejected draft is resampled from: max(0, p - q), normalised.

    Args:
        p, q: target and draft distributions, shape (V,).

    Returns:
        float array of shape (V,) summing to 1. It is zero wherever q >= p (the tokens the draft
        overrated). When p == q there is no residual mass and rejection never happens; p is
        returned then so the result is still a distribution.

    Raises:
        ValueError: as ``check_pair``.

    Source: Leviathan et al. 2022, section 2.3, p'(x) = norm(max(0, p(x) - q(x))); the inference course, week 11, step 3
    (p = (0.6, 0.4), q = (0.9, 0.1) gives max(0, p - q) = (0, 0.3), i.e. only B).
    """
    p_arr, q_arr = check_pair(p, q)
    return residual_of_arrays(p_arr, q_arr)


def accept_or_resample(p, q, x, rng, wrong_residual: bool = False) -> tuple[int, bool]:
    """Verify one drafted token x ~ q against the target p.

    Accept x with probability min(1, p(x)/q(x)); otherwise emit a token sampled from the residual
    max(0, p - q) normalised (or from p itself when ``wrong_residual`` is True: the classic mistake,
    which makes the tokens the draft overrated come out too often).

    Args:
        p, q: target and draft distributions, shape (V,).
        x: the drafted symbol index, 0 <= x < V, with q(x) > 0.
        rng: a seeded ``np.random.Generator``.
        wrong_residual: sample from p instead of the residual on rejection.

    Returns:
        (token, accepted): the emitted symbol index and whether the draft was accepted.

    Raises:
        ValueError: invalid tables (``check_pair``), x out of range, q(x) = 0 (the draft cannot
            have proposed it), or rng not a numpy Generator.

    Source: Leviathan et al. 2022, Algorithm 1; the inference course, week 11, step 3.
    """
    p_arr, q_arr = check_pair(p, q)
    check_rng(rng)
    if isinstance(x, bool) or not isinstance(x, Integral | np.integer) or not 0 <= int(x) < p_arr.size:
        raise ValueError(f"x must be a symbol index between 0 and {p_arr.size - 1}, got {x!r}")
    x = int(x)
    if q_arr[x] <= 0:
        raise ValueError(f"the draft gives symbol {x} probability 0, so it cannot have proposed it")
    if rng.random() < min(1.0, p_arr[x] / q_arr[x]):
        return x, True
    fallback = p_arr if wrong_residual else residual_of_arrays(p_arr, q_arr)
    return int(rng.choice(p_arr.size, p=fallback)), False
