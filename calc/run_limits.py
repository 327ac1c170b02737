"""The latency limits a published run was tuned to, read from a measurement row's notes and names.

A run at a request rate tuned to 99th-percentile latency limits (MLPerf Inference's Server and Interactive
scenarios: the submitter raises the rate until a limit binds) sits at the edge of its engine's capacity, and the
serving model predicts it so (``calc.serving.edge_of_limits``). Its row says so in free text, each writer in their
own words, so the reading here is deliberately narrow: a limit is a number beside TTFT and beside TPOT that a
limit's word (limit, constraint, target, SLO, mlperf.conf's ``_latency`` keys) or a comparator (<, <=) marks; a
number beside TTFT without one (a measured p99) is a measurement, and a limit's word under a negation ("no latency
limits", "met its SLO") marks nothing. A row that names MLPerf and its scenario but states no number takes its
benchmark's limits (``calc.serving_params.mlperf_latency_limits``, from mlcommons/inference loadgen/mlperf.conf).
"""
from __future__ import annotations

import re

from .serving_params import mlperf_latency_limits

#: A number and its unit; no unit is ms (mlperf.conf writes its limits so).
_NUMBER = r"([\d.,]*\d)\s*(ms|msec|milliseconds?|s|secs?|seconds?|us|µs|microseconds?|min|minutes?)?(?![\w/])"
#: What may stand between a metric, or a limit's word, and its number.
_TO_NUMBER = r"\W{0,3}(?:(?:of|is|at most|under|below|<=|≤|<|=|:)\W{0,2})?"
_WORD = r"(?:limits?|constraints?|targets?|slos?)"
#: Between the two metrics: no sentence's end (a dot before a word character or another dot is part of a name).
_SAME_SENTENCE = r"(?:[^.\n]|\.(?=[\w.]))"
#: A negation near a limit: "no latency limits", "limits were not set", "the run met its SLO", "... were not met".
_NEGATION = re.compile(r"\b(?:no|not|never|without|met|meets|attain\w*)\b")
#: A statistic before a metric marks a measurement ("p99 TPOT 180 ms"), whatever limit's word came before it.
_STATISTIC = re.compile(r"\b(?:p\d+|mean|median|avg|average|measured)\W*$")
#: Where a clause ends: a negation beyond it is about something else ("caching not used; latency limits ...").
_CLAUSE_END = re.compile(r"[.;\n](?:\s|$)")


def _pair(first: str, second: str) -> list:
    a, b = first, second
    return [
        # "latency limits TTFT 2000 ms and TPOT 200 ms", "constraints: TTFT <= 450 ms, TPOT <= 40 ms", "SLO: TTFT 450ms
        # and TPOT 40ms", "target TTFT of 0.45 s and TPOT of 0.04 s"
        _WORD + r"\W{1,3}(?:(?:p99|of|the|at|for)\W+){0,2}" + a + _TO_NUMBER + _NUMBER + _SAME_SENTENCE
        + r"{0,40}?\b" + b + _TO_NUMBER + _NUMBER,
        # "TTFT limit 2 s. TPOT limit 200 ms", "ttft_latency = 2000; tpot_latency = 200", "TTFT target 2,000 ms; TPOT
        # target 200 ms": a limit's word on each
        r"\b" + a + r"(?:_latency|\s*" + _WORD + r")" + _TO_NUMBER + _NUMBER + r".{0,80}?\b" + b
        + r"(?:_latency|\s*" + _WORD + r")" + _TO_NUMBER + _NUMBER,
        # "TTFT limit: 2000 ms, TPOT: 200 ms": the first's word stands for both, within one sentence
        r"\b" + a + r"(?:_latency|\s*" + _WORD + r")" + _TO_NUMBER + _NUMBER + _SAME_SENTENCE + r"{0,40}?\b" + b
        + _TO_NUMBER + _NUMBER,
        # "TTFT 900 ms (limit 2000 ms), TPOT 35 ms (limit 200 ms)"
        r"\b" + a + r"\b[^()]{0,30}\(\s*(?:p99\s*)?" + _WORD + _TO_NUMBER + _NUMBER + r"\s*\).{0,80}?\b" + b
        + r"\b[^()]{0,30}\(\s*(?:p99\s*)?" + _WORD + _TO_NUMBER + _NUMBER,
        # "TTFT < 2 s and TPOT < 100 ms": a comparator is a limit
        r"\b" + a + r"\s*(?:<=|≤|<)\s*" + _NUMBER + _SAME_SENTENCE + r"{0,40}?\b" + b + r"\s*(?:<=|≤|<)\s*" + _NUMBER,
    ]


#: (pattern, TTFT first): each phrasing with TTFT first and with TPOT first.
_LIMITS = [(re.compile(p), True) for p in _pair("ttft", "tpot")] + \
    [(re.compile(p), False) for p in _pair("tpot", "ttft")]


def _seconds(number: str, unit: str | None) -> float:
    """A limit's number in seconds; no unit: ms."""
    u, value = unit or "ms", float(number.replace(",", ""))
    if u.startswith(("ms", "milli")):
        return value / 1e3
    if u.startswith(("us", "µs", "micro")):
        return value / 1e6
    return value * 60.0 if u.startswith("min") else value


def stated_latency_limits(notes: str) -> dict | None:
    """The 99th-percentile latency limits a row's notes state, {"ttft_s", "tpot_s"} in seconds; None where they
    state none (the module's reading: a limit's word or a comparator beside each metric's number, no negation before
    it). Examples: "latency limits TTFT 2000 ms and TPOT 200 ms at the 99th percentile" -> 2.0 and 0.2 s; "TTFT limit
    2 s, TPOT limit 200 ms" -> the same; "p99 TTFT 350 ms and p99 TPOT 40 ms" -> None (measured)."""
    text = str(notes).lower()
    for pattern, ttft_first in _LIMITS:
        for m in pattern.finditer(text):
            before = _CLAUSE_END.split(text[max(0, m.start() - 30):m.start()])[-1]
            after = _CLAUSE_END.split(text[m.end():m.end() + 30])[0]
            if _NEGATION.search(before + " " + m.group(0) + " " + after):
                continue
            second = m.start(3)  # the second number: no statistic may name its metric ("p99 TPOT 180 ms")
            metric_at = text.rfind("tpot" if ttft_first else "ttft", m.start(), second)
            if _STATISTIC.search(text[max(m.start(), metric_at - 12):metric_at]):
                continue
            first, second = _seconds(m.group(1), m.group(2)), _seconds(m.group(3), m.group(4))
            ttft, tpot = (first, second) if ttft_first else (second, first)
            if ttft > 0 and tpot > 0:
                return {"ttft_s": ttft, "tpot_s": tpot}
    return None


def run_latency_limits(notes: str, model: str = "", names: str = "") -> dict | None:
    """The 99th-percentile latency limits a rate run was tuned to, as ``serving_estimate``'s ``latency_limits``
    ({"ttft_s", "tpot_s"}, seconds): those its notes state (``stated_latency_limits``), else, for an MLPerf Server or
    Interactive run of model preset ``model`` (its notes or ``names``, the row's source id and id, name MLPerf and
    the scenario), its benchmark's (``mlperf_latency_limits``); None for any other run."""
    return stated_latency_limits(notes) or mlperf_latency_limits(model, f"{notes} {names}")
