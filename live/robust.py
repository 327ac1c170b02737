"""Timing that survives a busy machine, and a calibration that cannot blow up (numpy and calc; no torch).

What a student's laptop does to a measurement: another program takes the cores for a while, so some
repetitions run slower, never faster. The defences here, each testable on recorded timings:

- ``measure_interleaved``: the repetitions of all points interleave (round 1 runs every point once,
  round 2 again, in the opposite order...), so a minute of load spreads over every point instead of
  spoiling one; a small reference kernel is timed between points, and a round whose reference ran
  slower than its best by ``REF_DRIFT`` is set aside as disturbed; the figure is the 10th percentile of
  the undisturbed samples (a step can be slowed by load, never sped up); a point whose samples spread
  (p90/p10 above ``NOISY_SPREAD``) or lack undisturbed rounds is measured again, and still
  disturbed it is flagged with its reason.
- Physical checks (``monotone_suspects``, ``per_row_suspects``): more work is not faster (decode at a
  longer context, a larger batch, a longer prompt), and above 1 row the matmul time per row does not
  rise with the rows. A point that breaks one is measured again; still breaking it, it is flagged (a
  sweep point) or rejected (a kernel row count of the calibration, ``validate_kernel_rows``).
- ``check_overhead_terms``: each fitted overhead term has a physical range (``TERM_RANGES_S``).
- ``fit_decode_overhead_checked``: the batch and context terms are checked on points the fit did
  not use (leave one out); a point its own fit cannot predict is rejected as an outlier.
- ``raise_bound``: the machine roofline must stay a lower bound. Evidence that the machine is faster
  than the probe said (the matmul kernels at the model's own shapes, a measured step under the line)
  raises the probed W or P to the best evidence, with a note saying which.

Method: the interleaving and best-of-k statistic follow the practice of pytest-benchmark and
Google Benchmark's repetitions; "load only slows" is the argument of Chen and Revels, "Robust
benchmarking in noisy environments" (2016), section 3, for taking the low end of the samples.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Hashable, Iterable, Sequence

import numpy as np

from calc import Accelerator, ModelConfig, decode_step_time, prefill_time

from .overhead_fit import fit_decode_overhead, fit_prefill_overhead

#: A point whose samples spread more than this (p90 / p10) is marked unreliable: an undisturbed CPU or GPU
#: repeats a step within a few percent, so a wider spread means something else took the cores meanwhile.
NOISY_SPREAD = 1.5


#: The LM head in a measured prefill: the worker asks for the last token's logits only (``logits_to_keep=1``,
#: as serving engines do), so every prefill prediction follows calc's ``logits="last"`` convention (B rows of the
#: head, not B*T); the course's ``"all"`` would charge the head for every prompt token and put the machine
#: roofline above steps that really ran.
PREFILL_LOGITS = "last"

#: A round is disturbed when the reference kernel around it ran this much slower than its best of the run.
REF_DRIFT = 1.3
#: Tolerance of the physical checks: a larger size may be this much faster before it counts as a violation
#: (timer resolution and cache luck on near-equal steps).
CHECK_SLACK = 1.15
#: A point needs this many undisturbed rounds (fewer when the run has fewer rounds).
MIN_CLEAN_ROUNDS = 2
#: Physical range of each fitted overhead term (seconds; eager PyTorch on a CPU or a GPU). Per layer:
#: dispatch of ~10 kernels, 5-50 us each; per step: sampling, cache bookkeeping, Python; per extra
#: sequence in a decode step: norms, rotary, cache writes of one more row in each of up to 100 layers. The
#: per-KV-token term is relative to the machine (``per_kv_token_range_s``); this constant is its fallback
#: when no model and machine are given.
TERM_RANGES_S = {"c_layer_s": (0.0, 5e-3), "c_step_s": (0.0, 50e-3), "per_seq_s": (0.0, 2e-3),
                 "per_kv_token_s": (0.0, 1e-6)}
#: Passes over a cached token's K and V bytes that eager attention may make beyond the one read the KV term
#: already counts, per query-head group: the read itself, the copy that expands K and V to every query head
#: (transformers' ``repeat_kv``: a write and a read per group) and the fp32 scores and softmax.
KV_PASSES_PER_GROUP = 4.0
#: The calibrated matmul term may exceed the machine roofline's weight/compute term by at most this factor
#: (the worst matrix-vector kernels seen at small shapes reach ~10 % of the read bandwidth), plus a launch floor
#: per kernel (``LAUNCH_FLOOR_S``); beyond that the calibration needs the evidence of a measured point
#: (``EVIDENCE_FACTOR``) to be drawn as valid.
CAL_MAX_FACTOR = 10.0
#: Time one kernel call costs however small its work (seconds): eager PyTorch's dispatch of an op and, on a
#: GPU, the kernel launch; 5-20 us is typical, 50 us the generous end (a loaded CPU, Python hooks). A
#: small model on a fast GPU is launch-bound: its ~200 matmul calls take milliseconds whatever their bytes.
LAUNCH_FLOOR_S = 50e-6
#: A calibrated prediction outside its physical range is still drawn where a measured point it never used
#: (held out) agrees with it within this factor: the evidence outranks the range.
EVIDENCE_FACTOR = 1.5


def p10(samples: Sequence[float]) -> float:
    """10th percentile of ``samples`` (numpy's linear interpolation); NaN when empty."""
    return float(np.percentile(samples, 10)) if len(samples) else math.nan


def interleaved_order(keys: Sequence[Hashable], round_index: int) -> list:
    """The order of one round: as given in even rounds, reversed in odd ones, so no point always runs
    right after the same neighbour or always first after a pause."""
    ks = list(keys)
    return ks if round_index % 2 == 0 else ks[::-1]


def monotone_suspects(xs: Sequence[float], times_s: Sequence[float], slack: float = CHECK_SLACK) -> dict[int, str]:
    """Points that break "more work is not faster": for x_i < x_j, a time t_i above slack * t_j.

    The suspect is the slower, smaller point (load slows a step, nothing speeds it up). Returns
    {index: reason}. Used for decode against context or batch and prefill against prompt or batch.
    """
    out: dict[int, str] = {}
    for i in range(len(xs)):
        for j in range(len(xs)):
            if xs[i] < xs[j] and times_s[i] > slack * times_s[j] and i not in out:
                out[i] = (f"slower at {xs[i]:g} ({times_s[i] * 1e3:.3g} ms) than at the larger {xs[j]:g} "
                          f"({times_s[j] * 1e3:.3g} ms): more work cannot take less time")
    return out


def per_row_suspects(rows: Sequence[int], times_s: Sequence[float], slack: float = CHECK_SLACK) -> dict[int, str]:
    """Row counts whose matmul time per row rose although the rows grew past 1 (r_i >= 2, r_j > r_i).

    From 1 row to 2 the kernel may change (matrix-vector to matrix-matrix), so 1 row is not compared;
    above it the weights are read once for more rows and the time per row can only fall. The suspect
    is the larger, slower-per-row count. Returns {index: reason}.
    """
    out: dict[int, str] = {}
    for i in range(len(rows)):
        for j in range(len(rows)):
            if 2 <= rows[i] < rows[j] and times_s[j] / rows[j] > slack * times_s[i] / rows[i] and j not in out:
                out[j] = (f"{times_s[j] / rows[j] * 1e3:.3g} ms per row at {rows[j]} rows against "
                          f"{times_s[i] / rows[i] * 1e3:.3g} ms at {rows[i]}: the time per row cannot rise with rows")
    return out


def kernel_row_suspects(rows: Sequence[int], times_s: Sequence[float], slack: float = CHECK_SLACK) -> dict[int, str]:
    """Both checks of a matmul calibration's total time per row count: the total does not fall as rows
    grow (``monotone_suspects``) and the time per row does not rise above 1 row (``per_row_suspects``)."""
    out = per_row_suspects(rows, times_s, slack)
    for i, why in monotone_suspects(rows, times_s, slack).items():
        out.setdefault(i, why)
    return out


def validate_kernel_rows(groups: list[dict], remeasure: Callable[[tuple[int, ...]], list[dict]] | None = None,
                         slack: float = CHECK_SLACK) -> tuple[list[dict], list[str]]:
    """Check a matmul calibration (``probe.time_linears`` groups) and mend what breaks the checks.

    The row counts whose total time (all groups) breaks ``kernel_row_suspects`` are timed again with
    ``remeasure(rows)`` (same group order), and the faster of the two timings is kept (load only slows).
    A row count still breaking a check is rejected: dropped from every group, so the prediction
    interpolates over its neighbours. Row count 1 and at least two counts are always kept.

    Returns:
        (groups, notes): the mended groups (new dicts) and one sentence per re-measured or rejected count.

    Raises:
        ValueError: groups whose row lists differ.
    """
    if not groups:
        return groups, []
    rows = list(groups[0]["rows"])
    if any(list(g["rows"]) != rows for g in groups):
        raise ValueError("every matmul group must be timed at the same row counts")
    times = [list(map(float, g["times_s"])) for g in groups]
    notes: list[str] = []

    def totals():
        return [sum(t[i] for t in times) for i in range(len(rows))]

    sus = kernel_row_suspects(rows, totals(), slack)
    if sus and remeasure is not None:
        again = remeasure(tuple(rows[i] for i in sorted(sus)))
        for gi, g in enumerate(again):
            for k, r in enumerate(g["rows"]):
                i = rows.index(r)
                times[gi][i] = min(times[gi][i], float(g["times_s"][k]))
        notes.append("matmul kernels timed again at " + ", ".join(f"{rows[i]} rows ({sus[i]})" for i in sorted(sus)))
        sus = kernel_row_suspects(rows, totals(), slack)
    drop = sorted(i for i in sus if rows[i] != 1)[: max(len(rows) - 2, 0)]
    for i in drop:
        notes.append(f"matmul timing at {rows[i]} rows rejected as an outlier: {sus[i]}")
    keep = [i for i in range(len(rows)) if i not in drop]
    out = [dict(g, rows=[rows[i] for i in keep], times_s=[times[gi][i] for i in keep]) for gi, g in enumerate(groups)]
    return out, notes


def per_kv_token_range_s(model: ModelConfig, machine: Accelerator, dtype: str) -> tuple[float, float]:
    """Physical range of the per-KV-token decode overhead (seconds per cached token of the batch), relative to
    the probed roofline: from 0 up to ``KV_PASSES_PER_GROUP * (1 + N / K)`` passes over the token's KV bytes
    (calc ``kv_bytes_per_token``, every layer) at the probed bandwidth W. The KV term already reads the cache
    once at W; eager attention reads it again, may expand it to the N query heads of each of the K KV heads
    (a write and a read of N / K copies) and keeps fp32 scores. SmolLM2-135M in fp32 (30 layers, 3 KV heads
    of 64, N / K = 3): 46 kB per token, 0.67 us at 69 GB/s, a range up to 16 x 0.67 = 10.7 us.

    Raises:
        ValueError: an unknown dtype.
    """
    from calc import kv_bytes_per_token

    groups = model.n_heads / max(model.n_kv_heads or model.n_heads, 1)
    per_token_s = kv_bytes_per_token(model, kv_dtype=dtype) / float(machine.bandwidth_bytes_per_s)
    return 0.0, KV_PASSES_PER_GROUP * (1.0 + groups) * per_token_s


def term_ranges_s(model: ModelConfig | None = None, machine: Accelerator | None = None,
                  dtype: str = "fp32") -> dict:
    """``TERM_RANGES_S`` with the per-KV-token range taken relative to the machine
    (``per_kv_token_range_s``) when a model and a machine are given."""
    ranges = dict(TERM_RANGES_S)
    if model is not None and machine is not None:
        ranges["per_kv_token_s"] = per_kv_token_range_s(model, machine, dtype)
    return ranges


def check_overhead_terms(terms: dict, ranges: dict | None = None) -> tuple[dict, list[str]]:
    """Clamp each fitted overhead term into its physical range (``ranges``, default ``TERM_RANGES_S``;
    ``term_ranges_s`` gives the machine-relative one).

    A term outside its range is not trusted: it is set to the range's nearest end and a note says so.
    Keys not in the table pass unchanged; None passes as None.

    Returns:
        (terms, notes).
    """
    out, notes = dict(terms), []
    for k, (lo, hi) in (ranges or TERM_RANGES_S).items():
        v = out.get(k)
        if v is None:
            continue
        v = float(v)
        if not math.isfinite(v) or v < lo or v > hi:
            clamped = lo if (not math.isfinite(v) or v < lo) else hi
            notes.append(f"fitted {k} = {v:.3g} s lies outside its physical range {lo:g}-{hi:g} s: set to {clamped:g}")
            out[k] = clamped
    return out, notes


def _reject_outliers(points: list[dict], fit: Callable[[list[dict]], dict], miss: Callable[[dict, dict], float],
                     max_error: float, min_points: int, what: Callable[[dict], str]) -> tuple[list[dict], list[str]]:
    """Leave-one-out outlier rejection shared by the overhead fits: while at least ``min_points`` remain, the
    candidate is the point whose removal leaves the others best explained by their own fit (smallest worst
    ``miss``); it is dropped when that fit misses it by more than ``max_error`` (a fraction of its step),
    one point at a time. Returns the kept points and one note per rejected point (``what`` names it)."""
    pts, notes = list(points), []
    while len(pts) >= min_points:
        best = None
        for i, p in enumerate(pts):
            rest = pts[:i] + pts[i + 1:]
            f = fit(rest)
            rest_miss = max(miss(f, q) for q in rest)
            if best is None or rest_miss < best[1]:
                best = (i, rest_miss, miss(f, p))
        i, _, own_miss = best
        if own_miss <= max_error:
            break
        p = pts.pop(i)
        notes.append(f"{what(p)} rejected: the fit of the other points misses it by {own_miss:.0%} of its step")
    return pts, notes


def fit_decode_overhead_checked(points: list[dict], ref_residual_s: float, ref_tokens: int,
                                max_error: float = 0.5, ranges: dict | None = None) -> tuple[dict | None, list[str]]:
    """``overhead_fit.fit_decode_overhead`` checked on points it did not use: each point in turn is left out,
    the other points are fitted, and the left-out residual is predicted. A point whose prediction misses
    by more than ``max_error`` of its whole tiny-model step (``step_s``) is an outlier and is rejected
    (one at a time: the point whose removal leaves the others best explained first); the terms are then
    range-checked (``check_overhead_terms`` with ``ranges``).

    Args:
        points: as ``fit_decode_overhead``, each also with ``step_s`` (the stubbed model's measured step).

    Returns:
        (fit or None, notes).
    """
    pts = list(points)

    def miss(f, p):
        pred = (ref_residual_s + f["per_seq_s"] * (p["batch"] - 1)
                + f["per_kv_token_s"] * (p["batch"] * p["kv_tokens"] - ref_tokens))
        return abs(pred - p["residual_s"]) / max(float(p.get("step_s", 0.0)), 1e-12)

    pts, notes = _reject_outliers(
        pts, lambda rest: fit_decode_overhead(rest, ref_residual_s, ref_tokens), miss, max_error, min_points=3,
        what=lambda p: f"tiny-model step at batch {p['batch']}, context {p.get('context_len', p['kv_tokens'])}")
    fit = fit_decode_overhead(pts, ref_residual_s, ref_tokens)
    if fit is None:
        return None, notes
    fit, more = check_overhead_terms(fit, ranges)
    return fit, notes + more


def prefill_term_ranges_s(model: ModelConfig, machine: Accelerator, dtype: str) -> dict:
    """Physical range of each prefill overhead term (``overhead_fit.fit_prefill_overhead``; seconds), relative to
    the probed roofline where the work scales with the model:

    - ``c_prefill_s`` (per forward): at most the per-layer and per-step ranges of ``TERM_RANGES_S`` summed
      over the layers;
    - ``per_token_s`` (per prompt token): at most 64 passes over a token's activations in every layer,
      ``L * 64 * (D + F) * bytes / W`` (norms, rotary, activations, residual adds: a few passes each);
    - ``per_pair_s`` (per causal query-key pair): at most 16x the attention FLOPs of a pair at P
      (``4 * L * N * H`` FLOP: scores and the weighted sum) plus 16 passes over a token's KV bytes at W.

    Raises:
        ValueError: an unknown dtype.
    """
    from calc import kv_bytes_per_token
    from calc.dtypes import dtype_bytes

    w, p = float(machine.bandwidth_bytes_per_s), float(machine.compute_flops(dtype))
    layers = model.n_layers
    per_token = layers * 64.0 * (model.d_model + model.d_ff) * dtype_bytes(dtype) / w
    per_pair = 16.0 * 4.0 * layers * model.n_heads * model.head_dim / p + 16.0 * kv_bytes_per_token(model, kv_dtype=dtype) / w
    return {"c_prefill_s": (0.0, layers * TERM_RANGES_S["c_layer_s"][1] + TERM_RANGES_S["c_step_s"][1]),
            "per_token_s": (0.0, per_token), "per_pair_s": (0.0, per_pair)}


def fit_prefill_overhead_checked(points: list[dict], max_error: float = 0.5,
                                 ranges: dict | None = None) -> tuple[dict | None, list[str]]:
    """``overhead_fit.fit_prefill_overhead`` checked on points it did not use, as ``fit_decode_overhead_checked``:
    with at least 4 points, each point in turn is predicted by the fit of the others; a point missed by more
    than ``max_error`` of its whole step (``step_s``) is rejected as an outlier, one at a time; the terms are
    then range-checked (``check_overhead_terms`` with ``ranges``, e.g. ``prefill_term_ranges_s``).

    Returns:
        (fit or None, notes).
    """
    pts = list(points)

    def miss(f, q):
        pred = f["c_prefill_s"] + f["per_token_s"] * q["batch"] * q["prompt_len"] + \
            f["per_pair_s"] * q["batch"] * q["prompt_len"] ** 2
        return abs(pred - q["residual_s"]) / max(float(q.get("step_s", 0.0)), 1e-12)

    pts, notes = _reject_outliers(
        pts, fit_prefill_overhead, miss, max_error, min_points=4,
        what=lambda q: f"prefill with the matmuls taken out at batch {q['batch']}, {q['prompt_len']} tokens")
    fit = fit_prefill_overhead(pts)
    if fit is None:
        return None, notes
    fit, more = check_overhead_terms(fit, ranges or {})
    return fit, notes + more


def measure_interleaved(keys: Sequence[Hashable], time_once: Callable[[Hashable, int], Sequence[float] | None],
                        reference_s: Callable[[], float], rounds: int = 3, extra_rounds: int = 2,
                        checks: Callable[[dict], dict] | None = None, spread_limit: float = NOISY_SPREAD,
                        drift_limit: float = REF_DRIFT,
                        progress: Callable[[int, int, Hashable, int], None] | None = None) -> dict:
    """Time every point ``rounds`` times, interleaved, with a reference kernel between points; re-measure
    disturbed points; run the physical ``checks``; flag what stays disturbed.

    Args:
        keys: the points (any hashable ids).
        time_once: ``time_once(key, round_index)`` runs one repetition of a point and returns its samples
            in seconds (a decode repetition gives one per step), or None when the point cannot run (out
            of memory): it is then dropped.
        reference_s: one timing of the reference kernel (seconds); called before the first point and
            after every point.
        rounds: interleaved rounds over all points; extra_rounds: at most this many more rounds over the
            disturbed points, and one more for the points the checks suspect.
        checks: ``checks({key: figure_s})`` returns {key: reason} for points breaking a physical check.
        progress: ``progress(done, planned, key, round_index)`` before each repetition.

    Returns:
        {key: dict(samples_s (undisturbed rounds' samples, or all when none), p10_s, median_s, p90_s,
        min_s, max_s, n_samples, rounds, clean_rounds, ref_drift (worst reference ratio of the used rounds),
        remeasured (extra repetitions), unreliable, reasons (list of sentences))}; dropped points are absent.

    Raises:
        ValueError: rounds < 1.
        Exception: whatever ``time_once`` or ``progress`` raised (a cancel, a failure) during the first
            ``rounds``, the extra rounds or the checks; it carries ``partial_timings``, the dict above for the points timed so far (a point
            with fewer rounds than planned is unreliable, the reason says how many it had).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    keys = list(keys)
    runs: dict = {k: [] for k in keys}  # key -> [(samples, raw reference max around it)]
    dropped: set = set()
    planned = rounds * len(keys)
    done = 0
    last_ref = [reference_s()]

    def one_round(ks, r):
        nonlocal done
        if r >= rounds:  # an extra round starts after a pause: a fresh reference before it
            last_ref[0] = reference_s()
        for k in interleaved_order(ks, r):
            if k in dropped:
                continue
            if progress:
                progress(done, planned, k, r)
            done += 1
            s = time_once(k, r)
            if s is None:
                dropped.add(k)
                continue
            after = reference_s()
            runs[k].append((tuple(float(x) for x in s), max(last_ref[0], after)))
            last_ref[0] = after

    def judge(k) -> dict:
        refs = [ref for run in runs for (_, ref) in runs[run]]
        best = min(refs) if refs else math.nan
        drifts = [ref / best if best > 0 else 1.0 for _, ref in runs[k]]
        clean = [i for i, d in enumerate(drifts) if d <= drift_limit]
        use = clean if clean else list(range(len(runs[k])))
        samples = [x for i in use for x in runs[k][i][0]]
        reasons = []
        need = min(MIN_CLEAN_ROUNDS, len(runs[k]))
        if len(clean) < need:
            reasons.append(f"the reference kernel ran up to {max(drifts):.2f}x slower than its best around "
                           f"{len(runs[k]) - len(clean)} of {len(runs[k])} runs: other work took the cores")
        sp = float(np.percentile(samples, 90) / np.percentile(samples, 10)) if samples and min(samples) > 0 else math.inf
        if sp > spread_limit:
            reasons.append(f"samples spread p90/p10 = {sp:.2f} (> {spread_limit:g})")
        return dict(samples_s=tuple(samples), p10_s=p10(samples), median_s=float(np.median(samples)),
                    p90_s=float(np.percentile(samples, 90)), min_s=float(min(samples)), max_s=float(max(samples)),
                    n_samples=len(samples), rounds=len(runs[k]), clean_rounds=len(clean),
                    ref_drift=float(max(drifts[i] for i in use)), reasons=reasons)

    try:
        for r in range(rounds):
            one_round(keys, r)
        r = rounds
        for _ in range(extra_rounds):
            bad = [k for k in keys if k not in dropped and judge(k)["reasons"]]
            if not bad:
                break
            planned += len(bad)
            one_round(bad, r)
            r += 1
        live = [k for k in keys if k not in dropped]
        suspects = checks({k: judge(k)["p10_s"] for k in live}) if checks else {}
        if suspects:
            planned += len(suspects)
            one_round([k for k in live if k in suspects], r)
            live = [k for k in keys if k not in dropped]
            suspects = checks({k: judge(k)["p10_s"] for k in live})
    except Exception as e:
        # Interrupted (a cancel, a failure): what was timed so far rides on the exception for the caller
        # to show, each point judged on its rounds so far, and flagged when it has fewer than planned.
        partial = {}
        for key in keys:
            if key in dropped or not runs[key]:
                continue
            j = judge(key)
            if j["rounds"] < rounds:
                j["reasons"].append(f"the run stopped after {j['rounds']} of {rounds} rounds")
            j["remeasured"], j["unreliable"] = max(0, j["rounds"] - rounds), bool(j["reasons"])
            partial[key] = j
        e.partial_timings = partial
        raise
    out = {}
    for k in live:
        j = judge(k)
        if k in suspects:
            j["reasons"].append(suspects[k])
        j["remeasured"] = j["rounds"] - rounds
        j["unreliable"] = bool(j["reasons"])
        out[k] = j
    return out


def sweep_checks(points: dict, sweeps: dict) -> dict:
    """Physical checks over the points of each sweep: ``sweeps`` maps a key to (sweep name, x); points maps
    the key to its figure (s). Returns {key: reason} from ``monotone_suspects`` within each sweep."""
    by: dict = {}
    for k, t in points.items():
        name, x = sweeps[k]
        by.setdefault(name, []).append((x, t, k))
    out = {}
    for items in by.values():
        sus = monotone_suspects([x for x, _, _ in items], [t for _, t, _ in items])
        out.update({items[i][2]: why for i, why in sus.items()})
    return out


def _step(model: ModelConfig, acc: Accelerator, phase: str, batch: int, seq_len: int, dtype: str):
    if phase == "decode":
        return decode_step_time(model, acc, batch, seq_len, weight_dtype=dtype, kv_dtype=dtype)
    return prefill_time(model, acc, seq_len, batch, weight_dtype=dtype, kv_dtype=dtype, logits=PREFILL_LOGITS)


def raise_bound(model: ModelConfig, machine: Accelerator, dtype: str, points: Iterable[dict] = (),
                kernel_groups: list[dict] | None = None) -> tuple[Accelerator, list[str]]:
    """The machine roofline made a true lower bound: W and P raised to the best evidence of this run.

    Evidence, in order:
      1. the matmul kernels at the model's own shapes (``kernel_groups``): at 1 row they stream every
         weight once, so weight bytes / time is a bandwidth the machine reached; at every row count
         2 x weights x rows / time is a FLOP rate it reached;
      2. measured steps (``points``: dicts with phase, batch, seq_len and ``reported_s``) faster than the
         line: a memory-bound one raises W to what its bytes need, a compute-bound one raises P;
      3. whatever point still beats the line raises W and P by the same factor (the roofline is
         inversely proportional to both), so none stays below it.

    Returns:
        (accelerator with the raised W and P, one note per raise naming its evidence); unchanged with no
        notes when the probe's figures already bound everything.
    """
    w, p = float(machine.bandwidth_bytes_per_s), float(machine.compute_flops(dtype))
    notes: list[str] = []
    if kernel_groups:
        i1 = [g["rows"].index(1) for g in kernel_groups] if all(1 in g["rows"] for g in kernel_groups) else None
        if i1 is not None and all("weight_bytes" in g for g in kernel_groups):
            t1 = sum(g["times_s"][i] for g, i in zip(kernel_groups, i1))
            bw = sum(g["weight_bytes"] for g in kernel_groups) / t1 if t1 > 0 else 0.0
            if bw > w:
                notes.append(f"bandwidth W raised from {w / 1e9:.3g} to {bw / 1e9:.3g} GB/s: the model's matmul "
                             "kernels at 1 row streamed its weights that fast")
                w = bw
        if all("n_weights" in g for g in kernel_groups):
            rows = kernel_groups[0]["rows"]
            for k, r in enumerate(rows):
                t = sum(g["times_s"][k] for g in kernel_groups)
                fl = 2.0 * sum(g["n_weights"] for g in kernel_groups) * r / t if t > 0 else 0.0
                if fl > p:
                    notes.append(f"matmul rate P raised from {p / 1e9:.3g} to {fl / 1e9:.3g} GFLOP/s: the model's "
                                 f"matmul kernels at {r} rows reached it (the square-matmul probe under-measured)")
                    p = fl
    acc = replace(machine, bandwidth_bytes_per_s=w, peak_flops_per_s={**machine.peak_flops_per_s, dtype: p})
    pts = [q for q in points if q.get("reported_s") and q["reported_s"] > 0]
    for q in pts:
        st = _step(model, acc, q["phase"], q["batch"], q["seq_len"], dtype)
        t = float(q["reported_s"])
        if st.total_s <= t:
            continue
        if st.compute_s > st.weights_s and t > st.kv_s:
            new_p = p * st.compute_s / (t - st.kv_s)
            notes.append(f"matmul rate P raised from {p / 1e9:.3g} to {new_p / 1e9:.3g} GFLOP/s: {q['phase']} at "
                         f"batch {q['batch']}, {q['seq_len']} tokens ran in {t * 1e3:.3g} ms, under the line")
            p = new_p
        else:
            new_w = w * st.total_s / t
            notes.append(f"bandwidth W raised from {w / 1e9:.3g} to {new_w / 1e9:.3g} GB/s: {q['phase']} at "
                         f"batch {q['batch']}, {q['seq_len']} tokens ran in {t * 1e3:.3g} ms, under the line")
            w = new_w
        acc = replace(acc, bandwidth_bytes_per_s=w, peak_flops_per_s={**acc.peak_flops_per_s, dtype: p})
    scale = max([_step(model, acc, q["phase"], q["batch"], q["seq_len"], dtype).total_s / q["reported_s"]
                 for q in pts] + [1.0])
    if scale > 1.0:
        scale *= 1.0 + 1e-9
        notes.append(f"W and P raised by a further {scale:.3g}x so that no measured step beats the line")
        w, p = w * scale, p * scale
        acc = replace(acc, bandwidth_bytes_per_s=w, peak_flops_per_s={**acc.peak_flops_per_s, dtype: p})
    if notes:
        acc = replace(acc, source=acc.source + "; raised to the best evidence of the run")
    return acc, notes


def kernel_calls(groups: list[dict] | None, rows: int = 1) -> int:
    """Kernel calls one forward's matmul term issues at ``rows`` input rows: one per matrix of a linear
    group; per mixture-of-experts block (``probe.linear_groups``' ``moe`` groups) the router and top-k (2)
    and three per expert touched (at most E, at most rows x k). 0 without groups."""
    n = 0
    for g in groups or ():
        c = int(g.get("count", 1) or 1)
        if g.get("moe"):
            e, k = int(g.get("n_experts", 1)), int(g.get("top_k", 1))
            n += c * (2 + 3 * min(e, max(int(rows), 1) * k))
        else:
            n += c
    return n


def calibration_valid(cal_matmul_s: float, machine_matmul_s: float, factor: float = CAL_MAX_FACTOR,
                      n_kernels: int = 0, launch_floor_s: float = LAUNCH_FLOOR_S) -> bool:
    """Whether a calibrated matmul term lies in its physical range against the machine roofline's
    weight/compute term: not below it beyond timer noise (1/1.25 of it: the roofline is a bound), and at most
    ``factor`` times it plus ``n_kernels`` launch floors (``kernel_calls``): a launch-bound step costs
    ``n_kernels * launch_floor_s`` however few bytes its kernels move."""
    hi = factor * machine_matmul_s + max(int(n_kernels), 0) * launch_floor_s
    return bool(machine_matmul_s / 1.25 <= cal_matmul_s <= hi)


def evidence_confirms(ratio_calibrated: float, factor: float = EVIDENCE_FACTOR) -> bool:
    """Whether a held-out measured point confirms the calibration: measured / calibrated within 1/factor-factor."""
    r = float(ratio_calibrated)
    return bool(math.isfinite(r) and 1.0 / factor <= r <= factor)


__all__ = ["REF_DRIFT", "CHECK_SLACK", "TERM_RANGES_S", "KV_PASSES_PER_GROUP", "per_kv_token_range_s", "term_ranges_s",
           "CAL_MAX_FACTOR", "p10", "interleaved_order",
           "monotone_suspects", "per_row_suspects", "kernel_row_suspects", "validate_kernel_rows",
           "check_overhead_terms", "fit_decode_overhead_checked", "measure_interleaved", "sweep_checks",
           "raise_bound", "LAUNCH_FLOOR_S", "EVIDENCE_FACTOR", "kernel_calls", "calibration_valid",
           "prefill_term_ranges_s", "fit_prefill_overhead_checked",
           "evidence_confirms"]
