"""Percentiles of a served run's times (p90, p99 TTFT, TPOT, ITL and end-to-end latency), from the serving model's
means (``calc.serving.combine``'s arrays at one point: a burst, a closed loop's steady state or an open loop at a
rate).

A benchmark reports the tail of its requests (vllm bench serve, InferenceX and GuideLLM print the 99th percentile
beside the mean and median; MLPerf's latency limits are 99th percentiles), and a service level is set on it. The
tail is not a fixed multiple of the mean: each time's own mechanism sets it.

- TTFT in a burst (the C requests of a closed loop's first round, or every round of a lockstep run, sent at once):
  the prompts are prefilled K at a time over K steps of the token budget (``calc.serving_terms.burst_schedule``),
  so the request at quantile q of the burst waits ceil(qK) steps where the mean waits (K + 1) / 2. Outside a
  burst: the wait for the step in flight (a residual, uniform up to a step) and the queue behind other prompts
  (M/D/1's wait: zero with probability 1 - rho, else roughly exponential with mean W / rho).
- TPOT: a request's TPOT carries the prompts prefilled while it decodes. In the steady state their number over its
  O - 1 steps is Poisson with mean f (O - 1) (f prompts per step), so its q-quantile carries
  ``poisson.ppf(q, f (O - 1)) / (f (O - 1))`` times the mean interference; in a burst the first request prefilled
  decodes through all the burst's later prefill steps, twice the mean's share.
- ITL: a share p_mix of the steps carries prompt tokens; where more than 1 - q of the gaps are such steps, the
  q-quantile gap is one (``combine``'s itl_prompt_s), else a step that decodes alone (itl_alone_s).
- End-to-end: the burst's requests all finish with the burst (its duration); outside it, TTFT plus the q-quantile
  output's steps at the q-quantile TPOT. Outputs drawn uniformly between a ratio r and 1 of the nominal length
  (InferenceX's random dataset, r = 0.8) have their q-quantile at (r + (1 - r) q) / ((1 + r) / 2) of the mean;
  outputs that end at end-of-text (``calc.serving_terms.spread_outputs``), taken exponential as the finite run's
  drain takes them, at -ln(1 - q) of the mean; one length at the mean.

A run mixes burst requests (a share w, ``calc.serving_terms.burst_share``) and steady ones: its q-quantile is the
burst's at 1 - (1 - q) / w or the steady state's at 1 - (1 - q) / (1 - w), the larger (the slower tail dominates
the run's top 1 - q).

Every time is in seconds; arrays broadcast. Sources: Kleinrock, Queueing Systems vol. 1 (1975), the residual life
and the M/G/1 wait; Agrawal et al., Sarathi-Serve (OSDI 2024), section 3 (a prompt chunk stalls the decode step it
rides in: the tail of the ITL).
"""
from __future__ import annotations

import math
import re

import numpy as np
from scipy import stats

#: Statistics read as a quantile: "p99" -> 0.99, "p90" -> 0.90, "p99.9" -> 0.999.
_PERCENTILE = re.compile(r"^p(\d{1,2}(?:\.\d+)?)$")


def statistic_quantile(statistic) -> float | None:
    """The quantile a statistic names ("p99" -> 0.99, "p95" -> 0.95, "p99.9" -> 0.999), None for "mean", "median"
    or anything else. Only quantiles from 0.5 up are read (a tail above the median): "p10" -> None."""
    m = _PERCENTILE.match(str(statistic).strip().lower())
    if not m:
        return None
    q = float(m.group(1)) / 100.0
    return q if 0.5 <= q < 1.0 else None


#: InferenceX's and vllm bench serve's uniform lengths as a row's notes or its length distribution state them.
_RANGE = re.compile(r"drawn uniformly from ([01](?:\.\d+)?)x to 1x|range[ _-]ratio (?:of )?([01](?:\.\d+)?)")


def output_range_ratio(text) -> float | None:
    """The low end r of outputs drawn uniformly between r and 1 times their nominal length, as a row states it
    ("drawn uniformly from 0.8x to 1x", "range ratio 0.8"), else None."""
    m = _RANGE.search(str(text or "").lower())
    if not m:
        return None
    r = float(m.group(1) or m.group(2))
    return r if 0.0 <= r <= 1.0 else None


def output_quantile_ratio(q: float, range_ratio: float | None = None, spread: bool = False) -> float:
    """The q-quantile output length over the mean: uniform between r and 1 of the nominal (mean (1 + r) / 2):
    (r + (1 - r) q) / ((1 + r) / 2); outputs that end at end-of-text (exponential): -ln(1 - q); one length: 1.
    Example: q 0.99, r 0.8 -> 0.998 / 0.9 = 1.109; spread -> 4.61."""
    if range_ratio is not None:
        return (range_ratio + (1.0 - range_ratio) * q) / ((1.0 + range_ratio) / 2.0)
    if spread:
        return -math.log(1.0 - q)
    return 1.0


def md1_wait_quantile_s(mean_wait_s, rho, q: float):
    """The q-quantile of a queue's wait with mean ``mean_wait_s`` at load ``rho``: zero with probability 1 - rho,
    else exponential with mean W / rho (the M/M/1 wait's distribution, exact there, taken for the M/D/1 queue of
    prompts; Kleinrock, Queueing Systems vol. 1, 1975): (W / rho) ln(rho / (1 - q)) where rho > 1 - q, else 0."""
    w, r = np.asarray(mean_wait_s, dtype=float), np.maximum(np.asarray(rho, dtype=float), 1e-12)
    return np.where(r > 1.0 - q, w / r * np.log(np.maximum(r / (1.0 - q), 1.0)), 0.0)


def burst_ttft_quantile_s(a: dict, g: dict, q: float):
    """TTFT (s) of the request at quantile ``q`` of a burst (``g["burst"]`` 1): its K = 2 n_chunks - 1 prefill
    steps (``burst_schedule``'s mean (K + 1) / 2) scale the mean's time past the request's own overhead and the
    attention-DP wait: ceil(qK) steps of them."""
    n = np.maximum(np.asarray(g["n_chunks"], dtype=float), 1.0)
    k = 2.0 * n - 1.0
    steps = np.maximum(np.ceil(q * k - 1e-9), 1.0)
    own = a["ttft_request_s"] + a["ttft_adp_wait_s"]
    return own + (a["ttft_estimate"] - own) * steps / n


def steady_ttft_quantile_s(a: dict, q: float):
    """TTFT (s) at quantile ``q`` outside a burst: the mean less its random waits, plus their q-quantiles (the step
    in flight's residual, uniform up to the full wait's double, and M/D/1's queue, ``md1_wait_quantile_s``); the
    wait for a slot and a group's prefill stay as they are."""
    rest = a["ttft_estimate"] - a["ttft_step_wait_s"] - a["ttft_md1_s"]
    return rest + 2.0 * q * a["ttft_step_wait_s"] + md1_wait_quantile_s(a["ttft_md1_s"], a["ttft_rho"], q)


def tpot_quantile_s(a: dict, g: dict, q: float):
    """TPOT (s) of the request at quantile ``q``: the mean plus its interference (the prompts prefilled while it
    decodes) scaled to the quantile: in a burst 2q - 1 of it more (the first prompt prefilled decodes through the
    later prefill steps), in the steady state the Poisson quantile of the f (O - 1) prompts over their mean."""
    inter = np.maximum(a["tpot_interference"], 0.0)
    lam = np.maximum(np.asarray(g["f"], dtype=float) * np.maximum(np.asarray(g["O"], dtype=float) - 1.0, 1.0),
                     0.0)
    safe = np.maximum(lam, 1e-12)
    scale = np.where(lam > 0, stats.poisson.ppf(q, safe) / safe, 1.0)
    burst = np.asarray(g.get("burst", 0.0), dtype=float) > 0
    extra = np.where(burst, (2.0 * q - 1.0) * inter, (scale - 1.0) * inter)
    return a["tpot_estimate"] + np.maximum(extra, 0.0)


def itl_quantile_s(a: dict, g: dict, q: float):
    """The q-quantile gap between streamed chunks: a step that carries prompt tokens where more than 1 - q of the
    steps do (``g["p_mix"]``), else one that decodes alone."""
    p_mix = np.asarray(g.get("p_mix", 0.0), dtype=float)
    return np.where(p_mix > 1.0 - q, a["itl_prompt_s"], a["itl_alone_s"])


def e2e_quantile_s(a: dict, g: dict, q: float, out_ratio: float):
    """End-to-end latency (s) at quantile ``q``: a burst's requests finish with it (its mean, the output's spread
    added at the mean TPOT); outside one, the q-quantile TTFT plus the q-quantile output's steps at the mean TPOT.
    ``out_ratio``: the q-quantile output over the mean (``output_quantile_ratio``)."""
    o = np.asarray(g["O"], dtype=float)
    spread = np.maximum(out_ratio - 1.0, 0.0) * o * a["tpot_estimate"]
    burst = np.asarray(g.get("burst", 0.0), dtype=float) > 0
    if burst.all():
        return a["e2e_s"] + spread
    steady = steady_ttft_quantile_s(a, q) + np.maximum(out_ratio * o - 1.0, 0.0) * a["tpot_estimate"]
    return np.where(burst, a["e2e_s"] + spread, steady)


def point_values(arrays: dict, i: int) -> dict:
    """The values of ``arrays`` (``combine``'s or ``serving_components``' arrays over points) at point ``i``, as
    ``run_quantile_s`` takes a point; a scalar entry as it is."""
    return {k: (np.asarray(v)[i] if np.ndim(v) else v) for k, v in arrays.items()}


#: The percentile times ``run_quantile_s`` predicts, by metric.
TAIL_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")


def _point_quantile(metric: str, a: dict, g: dict, q: float, out_ratio: float):
    if metric == "ttft_ms":
        burst = np.asarray(g.get("burst", 0.0), dtype=float) > 0
        if burst.all() or not burst.any():  # one kind of point: only its own arrays are read
            return burst_ttft_quantile_s(a, g, q) if burst.all() else steady_ttft_quantile_s(a, q)
        return np.where(burst, burst_ttft_quantile_s(a, g, q), steady_ttft_quantile_s(a, q))
    if metric == "tpot_ms":
        return tpot_quantile_s(a, g, q)
    if metric == "itl_ms":
        return itl_quantile_s(a, g, q)
    return e2e_quantile_s(a, g, q, out_ratio)


def run_quantile_s(metric: str, points: list, q: float, out_ratio: float = 1.0) -> float:
    """The q-quantile of a run's ``metric`` (one of ``TAIL_METRICS``), in seconds, from its points: a list of
    (a, g, weight), each ``combine``'s arrays and ``serving_components``' arrays at one point (sliced to a single
    value) and the share of the run's requests it stands for (a burst's share w and the steady state's 1 - w; the
    two grid points around a rate's root). A point holding a share s of the requests takes the run's top 1 - q at
    its own quantile 1 - (1 - q) / s; the slowest of those is the run's (the slower tail dominates the top).
    For the ITL the gaps are of two kinds at each point (``itl_quantile_s``), weighed by the point's share and its
    steps' p_mix: the run's q-quantile gap is that of the kind where the slowest 1 - q of them ends.

    Raises:
        ValueError: an unknown metric or a quantile outside (0, 1).
    """
    if metric not in TAIL_METRICS:
        raise ValueError(f"no percentile model for {metric!r}: one of {', '.join(TAIL_METRICS)}")
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile must lie in (0, 1); got {q!r}")
    points = [(a, g, float(w)) for a, g, w in points if float(w) > 0]
    if not points:
        raise ValueError("run_quantile_s needs at least one point with a positive share")
    if metric == "itl_ms":
        # the gaps fall in two kinds per point, steps that carry prompt tokens (a share p_mix of its steps) and
        # steps that decode alone: the run's q-quantile gap is the kind where the slowest 1 - q of all gaps ends
        kinds = sorted(((float(np.asarray(a[key])), w * share) for a, g, w in points
                        for key, share in (("itl_prompt_s", float(np.asarray(g.get("p_mix", 0.0)))),
                                           ("itl_alone_s", 1.0 - float(np.asarray(g.get("p_mix", 0.0)))))
                        if share > 0), reverse=True)
        total, above = sum(s for _, s in kinds), 0.0
        for value, s in kinds:
            above += s / total
            if above > 1.0 - q:
                return value
        return kinds[-1][0]
    out = []
    for a, g, w in points:
        own_q = 1.0 - (1.0 - q) / w
        if own_q <= 0.0:  # a point holding fewer than 1 - q of the requests: the others set the quantile
            continue
        out.append(float(np.asarray(_point_quantile(metric, a, g, own_q, out_ratio))))
    return max(out) if out else float(np.asarray(_point_quantile(metric, *points[0][:2], q, out_ratio)))
