"""A ragged stream of requests: Poisson arrivals, random prompt and output lengths.

``make_requests`` draws the stream (CS336 lecture 10, Inference, "live traffic is ragged");
``check_requests`` validates a request frame before a scheduler of ``calc.batching`` runs on it.
Pure numpy/pandas, deterministic for a seed.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .checks import check_fraction, check_nonneg_number, check_positive_int, check_positive_number

DISTRIBUTIONS = ("lognormal", "uniform", "fixed")
REQUEST_COLUMNS = ("request_id", "arrival_s", "prompt_len", "output_len")
#: Upper bound on the simulated stream (keeps a page rerun well under 100 ms).
MAX_REQUESTS = 5000

def _lengths(rng: np.random.Generator, n: int, mean_tokens: float, spread: float,
             distribution: str) -> np.ndarray:
    """Draw ``n`` integer lengths >= 1 (tokens) with the given mean and spread (see make_requests)."""
    if distribution == "fixed" or spread == 0:
        values = np.full(n, mean_tokens, dtype=float)
    elif distribution == "lognormal":
        # A lognormal with mean m and coefficient of variation s: sigma^2 = ln(1 + s^2),
        # mu = ln(m) - sigma^2 / 2 (the moments of the lognormal distribution).
        sigma = math.sqrt(math.log1p(spread * spread))
        values = rng.lognormal(mean=math.log(mean_tokens) - sigma * sigma / 2, sigma=sigma, size=n)
    else:  # uniform on [m (1 - s), m (1 + s)]
        values = rng.uniform(mean_tokens * (1 - spread), mean_tokens * (1 + spread), size=n)
    return np.maximum(np.rint(values), 1).astype(np.int64)


def make_requests(n_requests: int = 200, arrival_rate_per_s: float = 16.0,
                  prompt_mean_tokens: float = 512, prompt_spread: float = 0.5,
                  output_mean_tokens: float = 256, output_spread: float = 1.0,
                  distribution: str = "lognormal", max_len_tokens: int = 4096,
                  seed: int = 0) -> pd.DataFrame:
    """A stream of requests with Poisson arrivals and random prompt and output lengths.

    Arrivals: the gaps between requests are exponential with mean ``1 / arrival_rate_per_s``
    (a Poisson process); the first request arrives at 0 s. Lengths, for ``distribution``:
      - "lognormal": mean ``*_mean_tokens`` and coefficient of variation ``*_spread``
        (standard deviation / mean, any value >= 0); a long right tail like chat traffic.
      - "uniform": uniform on [mean (1 - spread), mean (1 + spread)], spread in [0, 1].
      - "fixed": every request has exactly the mean (spread ignored).
    Lengths are rounded to whole tokens, at least 1; then the prompt is capped at
    ``max_len_tokens - 1`` and the output at ``max_len_tokens - prompt_len`` so that every
    request fits the context a contiguous allocator reserves.
    Draw order (gaps, prompts, outputs) from one ``numpy.random.default_rng(seed)``: the same
    arguments always give the same stream.

    Returns:
        DataFrame with one row per request, sorted by arrival: ``request_id`` (int),
        ``arrival_s`` (float, seconds), ``prompt_len`` and ``output_len`` (int, tokens).

    Raises:
        ValueError: n_requests not a positive integer or above MAX_REQUESTS, a non-positive rate,
            mean or max_len_tokens (< 2), a negative spread (above 1 for "uniform"), an unknown
            distribution, or a seed that is not a non-negative integer.

    Source: CS336 lecture 10, Inference ("Training gets a dense rectangle of tokens; serving gets a ragged one").
    """
    n_requests = check_positive_int(n_requests, "n_requests")
    if n_requests > MAX_REQUESTS:
        raise ValueError(f"n_requests must be at most {MAX_REQUESTS}, got {n_requests}")
    rate = check_positive_number(arrival_rate_per_s, "arrival_rate_per_s")
    prompt_mean = check_positive_number(prompt_mean_tokens, "prompt_mean_tokens")
    output_mean = check_positive_number(output_mean_tokens, "output_mean_tokens")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}; got {distribution!r}")
    p_spread = check_nonneg_number(prompt_spread, "prompt_spread")
    o_spread = check_nonneg_number(output_spread, "output_spread")
    if distribution == "uniform":
        check_fraction(p_spread, "prompt_spread (uniform)")
        check_fraction(o_spread, "output_spread (uniform)")
    max_len = check_positive_int(max_len_tokens, "max_len_tokens")
    if max_len < 2:
        raise ValueError(f"max_len_tokens must be at least 2 (one prompt and one output token), got {max_len}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")

    rng = np.random.default_rng(int(seed))
    gaps = rng.exponential(1.0 / rate, size=n_requests)
    gaps[0] = 0.0
    arrival_s = np.cumsum(gaps)
    prompt = np.minimum(_lengths(rng, n_requests, prompt_mean, p_spread, distribution), max_len - 1)
    output = _lengths(rng, n_requests, output_mean, o_spread, distribution)
    output = np.minimum(output, max_len - prompt)
    return pd.DataFrame({"request_id": np.arange(n_requests), "arrival_s": arrival_s,
                         "prompt_len": prompt, "output_len": output})


def check_requests(requests: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a request frame (columns ``REQUEST_COLUMNS``, as ``make_requests`` builds it); return
    (arrival_s, prompt_len, output_len) as numpy arrays (seconds, tokens, tokens).

    Raises:
        ValueError: not a DataFrame, a missing column, no request, arrivals negative, not finite or not
            sorted, lengths that are not integers >= 1.
    """
    if not isinstance(requests, pd.DataFrame):
        raise ValueError(f"requests must be a pandas DataFrame, got {type(requests).__name__}")
    missing = [c for c in REQUEST_COLUMNS if c not in requests.columns]
    if missing:
        raise ValueError(f"requests is missing the column(s) {', '.join(missing)}")
    if len(requests) == 0:
        raise ValueError("requests must hold at least one request")
    arrival = requests["arrival_s"].to_numpy(dtype=float)
    prompt = requests["prompt_len"].to_numpy()
    output = requests["output_len"].to_numpy()
    if not np.all(np.isfinite(arrival)) or np.any(arrival < 0):
        raise ValueError("arrival_s must be finite and >= 0 for every request")
    if np.any(np.diff(arrival) < 0):
        raise ValueError("requests must be sorted by arrival_s")
    for name, col in (("prompt_len", prompt), ("output_len", output)):
        if not np.issubdtype(col.dtype, np.integer) or np.any(col < 1):
            raise ValueError(f"{name} must be integers >= 1 for every request")
    return arrival, prompt.astype(np.int64), output.astype(np.int64)
