"""What the teacher's screen shows about a class's answers: the histogram's bins, the share within the
tolerance, and the wrong answers grouped by the known mistake each matches.

An answer here is ``(value, unit)``: the number a student typed and the unit they chose (a key of the
exercises module's ``UNITS``). Matching follows the Exercises page's grading (calc's exercises module,
``grade``): within the tolerance is right; the right number in another unit of the same kind is a unit
mix-up (GB vs GiB, ms vs s); a number near one of the exercise's known mistakes (forgetting K and V, the
2 in 2N, bits for bytes, per token vs per sequence) is that mistake, in the chosen unit or another;
anything else is too high or too low.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from classroom.questions import UNITS, Exercise

#: Spread (largest / smallest positive answer) from which the histogram uses logarithmic bins.
LOG_SPREAD = 20.0
#: Logarithmic bins per decade: edges at 1, 2.15, 4.64, 10, ...
BINS_PER_DECADE = 3


@dataclass(frozen=True)
class Histogram:
    """Bins over answers in the question's unit: ``edges`` (n + 1, increasing), ``counts`` (n), ``log`` when the
    edges are spaced evenly in log10 (the spread of positive answers is ``LOG_SPREAD`` or more)."""

    edges: tuple[float, ...]
    counts: tuple[int, ...]
    log: bool


@dataclass(frozen=True)
class Cluster:
    """Answers that share one diagnosis: ``kind`` ("right", "unit", "mistake", "high", "low"), a label
    for the screen, how many and their share of all answers (0-1)."""

    kind: str
    label: str
    count: int
    share: float


def in_unit(ex: Exercise, value: float, unit: str) -> float:
    """``value`` typed in ``unit``, expressed in the question's own unit (``ex.unit``).

    Raises:
        ValueError: a unit the question cannot be answered in.
    """
    if unit not in UNITS or UNITS[unit][0] != UNITS[ex.unit][0]:
        raise ValueError(f"answer in one of: {', '.join(ex.unit_choices)}")
    return value * UNITS[unit][1] / UNITS[ex.unit][1]


def histogram(values: list[float]) -> Histogram:
    """Bins for ``values`` (numbers in one unit; empty gives no bins).

    Logarithmic, ``BINS_PER_DECADE`` per decade aligned on powers of ten, when every value is positive and
    the largest is at least ``LOG_SPREAD`` times the smallest; else linear: ceil(sqrt(n)) bins, 5 to 20,
    from the smallest to the largest (a single distinct value gets one bin of ±10% around it).
    """
    x = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if x.size == 0:
        return Histogram((), (), False)
    lo, hi = float(x.min()), float(x.max())
    if lo > 0 and hi / lo >= LOG_SPREAD:
        k0 = math.floor(BINS_PER_DECADE * math.log10(lo) + 1e-9)
        k1 = max(math.ceil(BINS_PER_DECADE * math.log10(hi) - 1e-9), k0 + 1)
        edges = np.array([10.0 ** (k / BINS_PER_DECADE) for k in range(k0, k1 + 1)])
        counts, _ = np.histogram(np.clip(x, edges[0], edges[-1]), bins=edges)
        return Histogram(tuple(edges.tolist()), tuple(int(c) for c in counts), True)
    if lo == hi:
        pad = abs(lo) * 0.1 or 1.0
        return Histogram((lo - pad, hi + pad), (int(x.size),), False)
    n = min(20, max(5, math.ceil(math.sqrt(x.size))))
    counts, edges = np.histogram(x, bins=n, range=(lo, hi))
    return Histogram(tuple(edges.tolist()), tuple(int(c) for c in counts), False)


def bars(ex: Exercise, values: list[float], revealed: bool) -> tuple[list[str], list[int], list[bool], bool]:
    """The histogram of ``values`` (in the question's unit) as bars: labels "a–b" (3 significant digits), counts,
    whether each bin holds the right answer (all False before the reveal), and whether the bins are logarithmic."""
    h = histogram(values)
    pairs = list(zip(h.edges[:-1], h.edges[1:]))
    hit = [revealed and a <= ex.answer_in_unit <= b for a, b in pairs]
    return [f"{a:,.3g}–{b:,.3g}" for a, b in pairs], list(h.counts), hit, h.log


def _close(x: float, target: float, ex: Exercise) -> bool:
    return abs(x - target) <= max(ex.rel_tol * abs(target), ex.abs_tol) * (1 + 1e-9)


def classify(ex: Exercise, value: float, unit: str) -> tuple[str, str]:
    """(kind, label) of one answer: "right", "unit" (the right number in another unit), "mistake" (the
    label is the mistake's hint), "high" or "low". The order is the Exercises page's grading order."""
    base = value * UNITS[unit][1] if unit in UNITS else float("nan")
    if unit not in UNITS or UNITS[unit][0] != ex.dimension or not math.isfinite(base):
        return "unit", "Not a unit of this question"
    if _close(base, ex.answer, ex):
        return "right", f"Right: {ex.answer_text} ({ex.tolerance_text})"
    for other in ex.unit_choices:
        if other != unit and _close(value * UNITS[other][1], ex.answer, ex):
            return "unit", f"The right number in {other}, labelled {unit} ({other} vs {unit})"
    for m in ex.mistakes:
        if _close(base, m.value, ex):
            return "mistake", m.hint
    for m in ex.mistakes:
        for other in ex.unit_choices:
            if other != unit and _close(value * UNITS[other][1], m.value, ex):
                return "mistake", m.hint
    return ("high", "Too high, no known mistake") if base > ex.answer else ("low", "Too low, no known mistake")


def clusters(ex: Exercise, answers: list[tuple[float, str]]) -> list[Cluster]:
    """The answers grouped by ``classify``: the right ones first, then by count (largest first), then label."""
    groups: dict[tuple[str, str], int] = {}
    for value, unit in answers:
        k = classify(ex, value, unit)
        groups[k] = groups.get(k, 0) + 1
    n = len(answers)
    order = sorted(groups.items(), key=lambda kv: (kv[0][0] != "right", -kv[1], kv[0][1]))
    return [Cluster(kind, label, count, count / n) for (kind, label), count in order]


def share_right(ex: Exercise, answers: list[tuple[float, str]]) -> float:
    """The share (0-1) of ``answers`` within the question's tolerance (0 when there are none)."""
    if not answers:
        return 0.0
    return sum(classify(ex, v, u)[0] == "right" for v, u in answers) / len(answers)
