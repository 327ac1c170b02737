"""Speculative decoding over probability tables: exact sampling, acceptance rate and speedup.

Notation of the inference course, week 11, step 3: the target model gives the next-token distribution ``p``, the draft
model gives ``q``. The draft proposes a token x ~ q; the target accepts it with probability
min(1, p(x)/q(x)); on rejection the token is resampled from the residual
max(0, p - q) / sum(max(0, p - q)). The emitted token is then distributed exactly as p:

    P[x] = q(x) min(1, p(x)/q(x)) + (1 - alpha) * max(0, p(x) - q(x)) / (1 - alpha)
         = min(p(x), q(x)) + max(0, p(x) - q(x)) = p(x),

where alpha = sum_x min(p(x), q(x)) is the acceptance rate (Leviathan, Kalman, Matias 2022,
"Fast Inference from Transformers via Speculative Decoding", Theorem 3.5 and Corollary 3.6;
Chen et al. 2023, "Accelerating LLM Decoding with Speculative Sampling", Theorem 1).

A round drafts gamma tokens, verifies them in one target forward, keeps the accepted prefix and
appends one more token: the resample at the first rejection, or a bonus token from the target's
distribution after the last draft when all gamma are accepted. So every round emits 1..gamma+1
tokens (Leviathan et al., Algorithm 1).

Here the "models" are fixed probability tables (the same p and q at every position), so the exact
output is an i.i.d. stream from p, which a chi-square goodness-of-fit test can check.

All probability tables are 1-D numpy arrays of shape (V,) (V symbols) unless stated; per-position
tables are 2-D, one row per position.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from scipy import stats as _scipy_stats

from .checks import check_fraction, check_nonneg_int, check_nonneg_number, check_positive_int
# The speedup formulas, the per-position chain and the batch effect live in calc.spec_speedup; re-exported
# here so calc.speculative keeps its public names.
from .spec_speedup import (  # noqa: F401
    DEFAULT_BATCHES, batch_speedup_table, best_chain_length, best_gamma, chain_position_table,
    expected_tokens_per_target_forward, expected_tokens_per_verification, mtp_chain, mtp_cost_ratio,
    operations_factor, published_chains, tokens_per_forward_table, verify_critical_batch, walltime_speedup, walltime_speedup_chain)

#: A table "sums to 1" when it is within this absolute tolerance of 1.
SUM_TOLERANCE = 1e-6
#: The most tokens ``speculative_generate`` samples in one call (keeps memory bounded).
MAX_SAMPLES = 10_000_000
#: Rounds x (gamma + 1) cells simulated at once (about 32 MB per int64 array).
_MAX_CELLS_PER_CHUNK = 4_000_000


# ---------------------------------------------------------------------------------------------
# Checking and normalising tables
# ---------------------------------------------------------------------------------------------

def _as_table(values, what: str, ndim: int = 1) -> np.ndarray:
    """Return ``values`` as a float array of ``ndim`` dimensions with finite, non-negative entries."""
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
    arr = _as_table(weights, what)
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
    arr = _as_table(p, what)
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


def _check_gamma(gamma) -> int:
    return check_nonneg_int(gamma, "gamma (draft tokens per round)")


def _check_alpha(alpha) -> float:
    return check_fraction(alpha, "alpha (acceptance rate)")


def _check_rng(rng) -> np.random.Generator:
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
    return _acceptance(p_arr, q_arr)


def _acceptance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
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


def _residual(p: np.ndarray, q: np.ndarray) -> np.ndarray:
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
    return _residual(p_arr, q_arr)


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
    _check_rng(rng)
    if isinstance(x, bool) or not isinstance(x, Integral | np.integer) or not 0 <= int(x) < p_arr.size:
        raise ValueError(f"x must be a symbol index between 0 and {p_arr.size - 1}, got {x!r}")
    x = int(x)
    if q_arr[x] <= 0:
        raise ValueError(f"the draft gives symbol {x} probability 0, so it cannot have proposed it")
    if rng.random() < min(1.0, p_arr[x] / q_arr[x]):
        return x, True
    fallback = p_arr if wrong_residual else _residual(p_arr, q_arr)
    return int(rng.choice(p_arr.size, p=fallback)), False


# ---------------------------------------------------------------------------------------------
# One round with per-position tables
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpecRound:
    """The outcome of one speculative round.

    Fields:
        tokens: emitted symbol indices, shape (n_accepted + 1,): the accepted drafts, then the
            resampled token (after a rejection) or the bonus token (all accepted).
        draft_tokens: the gamma drafted symbol indices, shape (gamma,).
        n_accepted: how many drafts were accepted (0..gamma).
        bonus: True when all gamma drafts were accepted and the last token came from the target's
            distribution after the last draft.
    """

    tokens: np.ndarray
    draft_tokens: np.ndarray
    n_accepted: int
    bonus: bool


def speculative_round(p_table, q_table, rng, draft_tokens=None, wrong_residual: bool = False) -> SpecRound:
    """Run one round: gamma drafted tokens verified against per-position target tables.

    Position i (0-based) uses target row p_table[i] and draft row q_table[i]; row p_table[gamma] is
    the target's distribution after the last draft, which the bonus token is sampled from.

    Args:
        p_table: shape (gamma + 1, V), each row a distribution.
        q_table: shape (gamma, V), each row a distribution (shape (0, V) for gamma = 0).
        rng: a seeded ``np.random.Generator``.
        draft_tokens: optional shape (gamma,) symbol indices to use instead of sampling from q
            (for worked examples); each must have q_table[i, x_i] > 0.
        wrong_residual: on rejection, sample from p_table[i] instead of the residual.

    Returns:
        ``SpecRound``; always at least one token, at most gamma + 1.

    Raises:
        ValueError: rows that are not distributions, p_table without exactly one row more than
            q_table, different numbers of symbols, bad draft tokens, or rng not a Generator.

    Source: Leviathan et al. 2022, Algorithm 1 (one iteration of SpeculativeDecodingStep).
    """
    _check_rng(rng)
    p_tab = _as_table(p_table, "p_table", ndim=2)
    q_arr = np.asarray(q_table, dtype=float)
    if q_arr.ndim == 2 and q_arr.shape[0] == 0:
        q_tab = q_arr.reshape(0, p_tab.shape[1])
    else:
        q_tab = _as_table(q_table, "q_table", ndim=2)
    gamma = q_tab.shape[0]
    if p_tab.shape[0] != gamma + 1:
        raise ValueError(f"p_table must have one row more than q_table (gamma + 1 = {gamma + 1} rows "
                         f"for gamma = {gamma} drafts), got {p_tab.shape[0]}")
    if p_tab.shape[1] != q_tab.shape[1]:
        raise ValueError(f"p_table and q_table must have the same number of symbols, "
                         f"got {p_tab.shape[1]} and {q_tab.shape[1]}")
    p_rows = [check_distribution(row, f"p_table row {i}") for i, row in enumerate(p_tab)]
    q_rows = [check_distribution(row, f"q_table row {i}") for i, row in enumerate(q_tab)]
    if draft_tokens is None:
        drafts = np.array([rng.choice(row.size, p=row) for row in q_rows], dtype=np.int64)
    else:
        drafts = np.asarray(draft_tokens)
        if drafts.shape != (gamma,) or not np.issubdtype(drafts.dtype, np.integer):
            raise ValueError(f"draft_tokens must be {gamma} symbol indices, got {draft_tokens!r}")
        drafts = drafts.astype(np.int64)
    emitted: list[int] = []
    for i, x in enumerate(drafts):
        token, accepted = accept_or_resample(p_rows[i], q_rows[i], int(x), rng, wrong_residual)
        emitted.append(token)
        if not accepted:
            return SpecRound(np.array(emitted, dtype=np.int64), drafts, i, False)
    bonus = rng.choice(p_rows[gamma].size, p=p_rows[gamma])
    emitted.append(int(bonus))
    return SpecRound(np.array(emitted, dtype=np.int64), drafts, gamma, True)


# ---------------------------------------------------------------------------------------------
# Many rounds, vectorised
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpecDecodeStats:
    """Counters of a speculative decoding run.

    Fields:
        gamma: draft tokens per round.
        n_tokens: tokens emitted by the counted rounds (>= the tokens requested; the last round may
            overshoot and is truncated in the returned sample).
        n_target_forwards: rounds, i.e. target forward passes (each verifies gamma + 1 positions).
        n_drafted: tokens the draft generated (gamma per round).
        n_verified: drafted tokens whose accept/reject test ran (those after a rejection are
            discarded unchecked).
        n_accepted: drafted tokens accepted.

    Properties:
        acceptance_rate: n_accepted / n_verified, the estimator of alpha = sum min(p, q)
            (Leviathan et al. 2022, Definition 3.1); NaN when nothing was drafted (gamma = 0).
        accepted_per_drafted: n_accepted / n_drafted (the fraction of the draft's work kept).
        tokens_per_target_forward: n_tokens / n_target_forwards; its expectation is
            (1 - alpha^(gamma+1)) / (1 - alpha) (Eq. 1).
    """

    gamma: int
    n_tokens: int
    n_target_forwards: int
    n_drafted: int
    n_verified: int
    n_accepted: int

    @property
    def acceptance_rate(self) -> float:
        return self.n_accepted / self.n_verified if self.n_verified else float("nan")

    @property
    def accepted_per_drafted(self) -> float:
        return self.n_accepted / self.n_drafted if self.n_drafted else float("nan")

    @property
    def tokens_per_target_forward(self) -> float:
        return self.n_tokens / self.n_target_forwards if self.n_target_forwards else float("nan")


def _cdf(dist: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(dist)
    return cdf / cdf[-1]


def _draw(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling: symbol i where cdf[i-1] <= u < cdf[i] (zero-probability symbols never drawn)."""
    return np.minimum(np.searchsorted(cdf, u, side="right"), cdf.size - 1)


def speculative_generate(p, q, n_tokens, gamma, rng,
                         wrong_residual: bool = False) -> tuple[np.ndarray, SpecDecodeStats]:
    """Sample ``n_tokens`` tokens by speculative decoding with fixed target and draft tables.

    Rounds are simulated in vectorised batches: draw gamma drafts per round from q, accept each with
    probability min(1, p/q), cut at the first rejection, then append the resample (residual, or p
    with ``wrong_residual``) or the bonus token (from p). The emitted stream is i.i.d. from p when
    ``wrong_residual`` is False; with it, symbol x comes out with probability
    min(p, q)(x) + (1 - alpha) p(x), biased towards the tokens the draft overrated.

    Args:
        p, q: target and draft distributions, shape (V,).
        n_tokens: tokens to return, 1..``MAX_SAMPLES``.
        gamma: drafted tokens per round, >= 0 (0: plain decoding, one target token per forward).
        rng: a seeded ``np.random.Generator``.
        wrong_residual: resample from p instead of the residual (the classic mistake).

    Returns:
        (tokens, stats): int64 array of shape (n_tokens,) of symbol indices, and ``SpecDecodeStats``
        over the rounds needed to reach n_tokens.

    Raises:
        ValueError: invalid tables (``check_pair``), n_tokens not a positive integer or above
            ``MAX_SAMPLES``, gamma negative, rng not a Generator.

    Source: Leviathan et al. 2022, Algorithm 1, with the target and draft replaced by tables.
    """
    p_arr, q_arr = check_pair(p, q)
    n_tokens = check_positive_int(n_tokens, "n_tokens")
    if n_tokens > MAX_SAMPLES:
        raise ValueError(f"n_tokens must be at most {MAX_SAMPLES:,}, got {n_tokens:,}")
    gamma = _check_gamma(gamma)
    _check_rng(rng)

    accept_prob = _acceptance(p_arr, q_arr)
    p_cdf, q_cdf = _cdf(p_arr), _cdf(q_arr)
    fallback_cdf = p_cdf if wrong_residual else _cdf(_residual(p_arr, q_arr))
    alpha = float(np.minimum(p_arr, q_arr).sum())
    per_round = expected_tokens_per_target_forward(alpha, gamma)

    chunks: list[np.ndarray] = []
    n_done = rounds = verified = accepted_total = 0
    positions = np.arange(gamma + 1)
    while n_done < n_tokens:
        n_rounds = int(math.ceil((n_tokens - n_done) / per_round * 1.02)) + 8
        n_rounds = min(n_rounds, _MAX_CELLS_PER_CHUNK // (gamma + 1))  # bound the memory of one chunk
        drafts = _draw(q_cdf, rng.random((n_rounds, gamma)))
        accepted = rng.random((n_rounds, gamma)) < accept_prob[drafts]
        rejected = ~accepted
        has_rejection = rejected.any(axis=1)
        first_rejection = rejected.argmax(axis=1) if gamma else np.zeros(n_rounds, dtype=np.int64)
        n_acc = np.where(has_rejection, first_rejection, gamma)  # accepted prefix length
        u_last = rng.random(n_rounds)
        last = np.where(has_rejection, _draw(fallback_cdf, u_last), _draw(p_cdf, u_last))
        out = np.empty((n_rounds, gamma + 1), dtype=np.int64)
        out[:, :gamma] = drafts
        out[np.arange(n_rounds), n_acc] = last
        per_round_tokens = n_acc + 1
        # Keep only the rounds needed to reach n_tokens, so the counters describe what was used.
        cumulative = np.cumsum(per_round_tokens)
        need = n_tokens - n_done
        keep = int(np.searchsorted(cumulative, need, side="left")) + 1 if cumulative[-1] >= need else n_rounds
        keep_acc = n_acc[:keep]
        chunks.append(out[:keep][positions <= keep_acc[:, None]])
        n_done += int(cumulative[keep - 1])
        rounds += keep
        accepted_total += int(keep_acc.sum())
        verified += int(np.minimum(keep_acc + 1, gamma).sum()) if gamma else 0
    tokens = np.concatenate(chunks)
    stats = SpecDecodeStats(gamma=gamma, n_tokens=n_done, n_target_forwards=rounds,
                            n_drafted=gamma * rounds, n_verified=verified, n_accepted=accepted_total)
    return tokens[:n_tokens], stats


# ---------------------------------------------------------------------------------------------
# Exactness: the per-symbol bookkeeping and a goodness-of-fit test
# ---------------------------------------------------------------------------------------------

def output_distribution(p, q, wrong_residual: bool = False) -> np.ndarray:
    """The exact distribution of one emitted token (accepted draft or resample), per symbol.

    Correct: min(p, q) + max(0, p - q) = p. With ``wrong_residual``: min(p, q) + (1 - alpha) p.

    Args:
        p, q: target and draft distributions, shape (V,).

    Returns:
        float array of shape (V,) summing to 1.

    Raises:
        ValueError: as ``check_pair``.

    Source: The inference course, week 11, step 3 ("Total: min(p, q) + max(0, p - q) = p"); Leviathan et al. 2022,
    Theorem 3.5.
    """
    p_arr, q_arr = check_pair(p, q)
    accepted = np.minimum(p_arr, q_arr)
    reject_mass = 1.0 - accepted.sum()
    fallback = p_arr if wrong_residual else _residual(p_arr, q_arr)
    return accepted + reject_mass * fallback


def stream_distribution(p, q, gamma, wrong_residual: bool = False) -> np.ndarray:
    """The exact frequency of each symbol in the stream ``speculative_generate`` emits.

    A round verifies on average E_v = (1 - alpha^gamma) / (1 - alpha) drafts (each giving a token
    distributed as ``output_distribution``) and adds a bonus token from p with probability
    alpha^gamma, so the stream frequency is (E_v * output + alpha^gamma * p) / (E_v + alpha^gamma).
    With the correct residual both parts are p, so this is p; with ``wrong_residual`` the bias is
    diluted by the bonus tokens.

    Args:
        p, q: target and draft distributions, shape (V,).
        gamma: drafts per round, >= 0.
        wrong_residual: sample from p on rejection.

    Returns:
        float array of shape (V,) summing to 1.

    Raises:
        ValueError: as ``check_pair``; gamma negative.

    Source: Leviathan et al. 2022, Algorithm 1 and Eq. 1 (the verified drafts are the first gamma
    terms of the capped geometric count).
    """
    p_arr, q_arr = check_pair(p, q)
    gamma = _check_gamma(gamma)
    alpha = float(np.minimum(p_arr, q_arr).sum())
    n_verified = expected_tokens_per_target_forward(alpha, gamma) - alpha ** gamma
    step = output_distribution(p_arr, q_arr, wrong_residual)
    mixed = n_verified * step + alpha ** gamma * p_arr
    return mixed / mixed.sum()


def acceptance_table(p, q, labels=None, wrong_residual: bool = False) -> pd.DataFrame:
    """Per-symbol bookkeeping of one accept/resample step, with a totals row.

    Columns (probabilities, dimensionless):
        symbol; proposal q (the draft proposes x); acceptance min(1, p/q); accepted mass min(p, q);
        rejection mass max(0, q - p) (proposals of x that are rejected); residual max(0, p - q)
        normalised (what a rejection resamples from; p itself with ``wrong_residual``);
        resampled mass (1 - alpha) * residual; output (accepted + resampled); target p.
    The "Total" row sums each mass column: accepted sums to alpha, rejection and resampled masses
    both to 1 - alpha, output and target to 1 (acceptance is left empty there).

    Args:
        p, q: target and draft distributions, shape (V,).
        labels: V symbol names (default "A", "B", ...).
        wrong_residual: resample from p instead of the residual.

    Raises:
        ValueError: as ``check_pair``; labels of the wrong length.

    Source: The inference course, week 11, step 3.
    """
    p_arr, q_arr = check_pair(p, q)
    labels = _labels(labels, p_arr.size)
    accepted = np.minimum(p_arr, q_arr)
    reject_mass = 1.0 - accepted.sum()
    fallback = p_arr if wrong_residual else _residual(p_arr, q_arr)
    resampled = reject_mass * fallback
    frame = pd.DataFrame({
        "symbol": labels,
        "proposal q": q_arr,
        "acceptance min(1, p/q)": _acceptance(p_arr, q_arr),
        "accepted mass min(p, q)": accepted,
        "rejection mass max(0, q - p)": np.maximum(0.0, q_arr - p_arr),
        "residual (resampled from)": fallback,
        "resampled mass": resampled,
        "output": accepted + resampled,
        "target p": p_arr,
    })
    totals = frame.drop(columns=["symbol"]).sum()
    totals["acceptance min(1, p/q)"] = np.nan
    totals_row = pd.DataFrame([{"symbol": "Total", **totals.to_dict()}])
    return pd.concat([frame, totals_row], ignore_index=True)


def _labels(labels, n: int) -> list[str]:
    if labels is None:
        return [chr(ord("A") + i) if i < 26 else f"s{i}" for i in range(n)]
    labels = [str(x) for x in labels]
    if len(labels) != n:
        raise ValueError(f"labels must name all {n} symbols, got {len(labels)}")
    return labels


def symbol_counts(samples, n_symbols) -> np.ndarray:
    """Count how often each symbol occurs.

    Args:
        samples: integer symbol indices, any shape.
        n_symbols: V, the number of symbols.

    Returns:
        int64 array of shape (V,).

    Raises:
        ValueError: a sample outside 0..V-1 or non-integer samples.
    """
    n_symbols = check_positive_int(n_symbols, "n_symbols")
    arr = np.asarray(samples).ravel()
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"samples must be integer symbol indices, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= n_symbols):
        raise ValueError(f"samples must lie between 0 and {n_symbols - 1}, got {int(arr.min())}..{int(arr.max())}")
    return np.bincount(arr.astype(np.int64), minlength=n_symbols)


def chi_square_p_value(samples, p) -> float:
    """Chi-square goodness-of-fit p-value of ``samples`` against the distribution ``p``.

    Symbols with p = 0 are left out of the test; a single sample on such a symbol is impossible
    under p, and the p-value is then 0.

    Args:
        samples: integer symbol indices (any shape), at least one.
        p: the claimed distribution, shape (V,).

    Returns:
        the p-value in [0, 1]: the probability of a fit at least this bad if samples came from p.
        Small values (e.g. < 0.01) reject "the samples come from p".

    Raises:
        ValueError: no samples, samples out of range, p not a distribution.

    Source: Pearson's chi-square test, ``scipy.stats.chisquare`` with V' - 1 degrees of freedom
    (V' = symbols with p > 0); CS336 lecture 10 (Inference) exercise 3 ("check the histogram matches within sampling
    error").
    """
    p_arr = check_distribution(p, "p")
    counts = symbol_counts(samples, p_arr.size)
    n = int(counts.sum())
    if n == 0:
        raise ValueError("samples must contain at least one token")
    support = p_arr > 0
    if np.any(counts[~support] > 0):
        return 0.0
    if support.sum() < 2:
        return 1.0  # one possible symbol and every sample on it: a perfect, untestable fit
    expected = n * p_arr[support]
    expected *= n / expected.sum()
    return float(_scipy_stats.chisquare(counts[support], expected).pvalue)


@dataclass(frozen=True)
class SamplingExperiment:
    """The result of ``run_sampling_experiment``.

    Fields:
        histogram: DataFrame with columns symbol, target p, empirical frequency, count,
            predicted frequency (``stream_distribution`` of the procedure run: p unless the wrong
            residual is used).
        p_value: chi-square goodness-of-fit p-value against p.
        significance: the threshold the verdict uses.
        matches_target: p_value >= significance.
        alpha: the acceptance rate sum min(p, q).
        stats: ``SpecDecodeStats`` of the run.
    """

    histogram: pd.DataFrame
    p_value: float
    significance: float
    matches_target: bool
    alpha: float
    stats: SpecDecodeStats


def run_sampling_experiment(p, q, n_tokens, gamma, seed, labels=None, wrong_residual: bool = False,
                            significance: float = 0.01) -> SamplingExperiment:
    """Sample n_tokens by speculative decoding and test the histogram against p.

    Args:
        p, q: target and draft distributions, shape (V,).
        n_tokens: 1..``MAX_SAMPLES``.
        gamma: drafts per round, >= 0.
        seed: non-negative integer seed of ``np.random.default_rng``.
        labels: V symbol names.
        wrong_residual: sample from p on rejection (the classic mistake).
        significance: the verdict threshold in (0, 1).

    Raises:
        ValueError: as ``speculative_generate``, a negative seed or a significance outside (0, 1).

    Source: CS336 lecture 10 (Inference) exercise 3 (histogram against the target); the inference course, week 11, step 3.
    """
    seed = check_nonneg_int(seed, "seed")
    significance = check_fraction(significance, "significance")
    if not 0 < significance < 1:
        raise ValueError(f"significance must lie strictly between 0 and 1, got {significance}")
    p_arr, q_arr = check_pair(p, q)
    labels = _labels(labels, p_arr.size)
    tokens, stats = speculative_generate(p_arr, q_arr, n_tokens, gamma, np.random.default_rng(seed),
                                         wrong_residual=wrong_residual)
    counts = symbol_counts(tokens, p_arr.size)
    p_value = chi_square_p_value(tokens, p_arr)
    histogram = pd.DataFrame({
        "symbol": labels,
        "target p": p_arr,
        "empirical frequency": counts / counts.sum(),
        "count": counts,
        "predicted frequency": stream_distribution(p_arr, q_arr, stats.gamma, wrong_residual),
    })
    return SamplingExperiment(histogram, p_value, significance, p_value >= significance,
                              float(np.minimum(p_arr, q_arr).sum()), stats)
