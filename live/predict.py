"""The three predictions set beside every live measurement, and the tables the page shows (no torch).

1. Data-sheet roofline: calc's ``decode_step_time`` / ``prefill_time`` on the accelerator's
   published W and P (only for a GPU in calc's catalogue; none for a CPU).
2. This machine's roofline: the same functions on the probed ``Accelerator`` (measured W and P).
3. Calibrated: the sum of three measured parts (``calibrated_parts``):
   - the model's matmuls at the speed the matmul kernels reach *at the model's own linear-layer
     shapes and dtype on this machine* (``F.linear`` on the model's weights with B or B*T rows,
     timed in the worker: ``live.probe.time_linears``; a mixture-of-experts block timed whole, router and
     the experts its routing touches at that many rows; interpolated between the measured row
     counts, proportional to rows above the largest);
   - the KV cache read (decode) or written plus the attention FLOPs (prefill) at the probed W and P;
   - a per-forward overhead ``n_layers * c_layer_s + c_step_s`` measured on the model itself with its
     matmuls taken out (``live.probe.stub_matmuls``: DESIGN.md "roofline + per-step overhead", the
     idea of transformers#43089's tiny-hidden-size model taken to the model's own width), from which
     its KV read was subtracted, so no part is counted twice; split per layer and per step with a
     1-layer tiny-width model. In decode the stubbed model, timed at the sweep's batches and contexts,
     adds the per-sequence work that grows with B and B*S (``decode_overhead_s``); prefill has its
     own overhead fitted at the sweep's prompts (``prefill_overhead_s``).
   Without a matmul calibration (``matmul_groups`` None) it is (2) plus the overhead.

Why the kernel term: on a CPU the batch-1 GEMVs of a decode step stream their weights well below
the bandwidth a plain read reaches (a sum over a large buffer), so (2) is a lower bound that a CPU
decode step misses by a factor of 2-4, and only the kernels' own rate explains the gap.

Ratios are measured / predicted: 1.0 is a perfect prediction, 2.0 means the real step took twice
the predicted time.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from calc import Accelerator, ModelConfig, critical_batch, decode_step_time, get_accelerator, prefill_time
from calc.hardware import match_accelerator_name
from calc.roofline import attention_flops
from calc.checks import check_nonneg_number, check_positive_int, check_positive_number

# NOISY_SPREAD and PREFILL_LOGITS belong to the measurement (live.robust); the predictions use the same ones.
from .robust import (CAL_MAX_FACTOR, EVIDENCE_FACTOR, LAUNCH_FLOOR_S, NOISY_SPREAD, PREFILL_LOGITS,  # noqa: F401
                     calibration_valid, evidence_confirms, kernel_calls)

PREDICTIONS = {
    "datasheet": "data-sheet roofline",
    "machine": "machine roofline",
    "calibrated": "calibrated (kernels + KV + overhead)",
}

#: The statistic reported per phase (the ``reported_s`` column, the charts' markers and the ratios): the
#: 10th percentile of the undisturbed samples (decode: every timed step; prefill: every timed run), the
#: least-disturbed estimate that is still robust to one freak sample (a step cannot be sped up by load,
#: only slowed; ``live.robust``).
REPORTED_STAT = {"decode": "p10_s", "prefill": "p10_s"}
REPORTED_LABEL = {"decode": "p10 of the timed steps", "prefill": "p10 of the timed runs"}

#: A calibrated prediction is drawn as valid only where it is within this factor of every measured point of its
#: sweep (the sweep's points are held out: the calibration never used them).
CAL_HELDOUT_FACTOR = 2.0


def reported_time_s(point: dict) -> float:
    """The figure a point is reported by (s): ``REPORTED_STAT`` of its phase, the median when that is missing.

    Raises:
        ValueError: an unknown phase.
    """
    if point.get("phase") not in REPORTED_STAT:
        raise ValueError(f"phase must be 'prefill' or 'decode', got {point.get('phase')!r}")
    v = point.get(REPORTED_STAT[point["phase"]])
    return float(point["median_s"] if v is None else v)


def spread_ratio(p10_s: float, p90_s: float) -> float:
    """p90 / p10 of a point's samples (1 = perfectly repeatable); inf when p10 is not positive."""
    return float(p90_s) / float(p10_s) if p10_s > 0 else math.inf


def datasheet_accelerator_id(device_name: str) -> str | None:
    """calc's accelerator id for a GPU name as torch reports it ("NVIDIA H200" -> "h200"), else None
    (``calc.hardware.match_accelerator_name``: the names' rules are data, in accelerators.json).

    An "NVIDIA L4" matches "l4" only as a whole word. CPUs never match: their data sheets give no
    single achievable bandwidth, so the CPU charts show only the measured-machine predictions.
    """
    return match_accelerator_name(device_name)


def prefill_overhead_s(batch: int, prompt_len: int, prefill_overhead: dict) -> float:
    """Overhead of one prefill of ``batch`` prompts of ``prompt_len`` tokens from ``fit_prefill_overhead``'s
    terms: ``c_prefill_s + per_token_s * B*T + per_pair_s * B*T^2`` (seconds).

    Raises:
        ValueError: non-positive sizes, negative or missing terms.
    """
    b = check_positive_int(batch, "batch")
    t = check_positive_int(prompt_len, "prompt_len")
    try:
        c0, c1, c2 = (check_nonneg_number(prefill_overhead[k], k) for k in ("c_prefill_s", "per_token_s", "per_pair_s"))
    except KeyError as e:
        raise ValueError(f"prefill_overhead lacks {e.args[0]!r}") from None
    return c0 + c1 * b * t + c2 * b * t * t


def overhead_s(model: ModelConfig, c_layer_s: float, c_step_s: float) -> float:
    """Per-forward overhead of ``model``: ``n_layers * c_layer_s + c_step_s`` (seconds)."""
    return model.n_layers * check_nonneg_number(c_layer_s, "c_layer_s") + check_nonneg_number(c_step_s, "c_step_s")


def _rows_time_s(rows: list, times_s: list, n_rows: int) -> float:
    """Time of one group at ``n_rows`` rows from its measured (rows, time) pairs: linear between the
    measured row counts, flat below the smallest, proportional to rows above the largest (there the
    kernels are compute-bound: time grows with the FLOPs)."""
    r = np.asarray(rows, dtype=float)
    t = np.asarray(times_s, dtype=float)
    order = np.argsort(r)
    r, t = r[order], t[order]
    if n_rows > r[-1]:
        return float(t[-1] * n_rows / r[-1])
    return float(np.interp(n_rows, r, t))


def check_matmul_groups(groups) -> list[dict]:
    """Validate a matmul calibration: a non-empty list of dicts with ``rows`` (positive integers),
    ``times_s`` (non-negative, same length), ``per_token`` (bool: True when the layer runs on every
    token, B*T rows; False for the output head, which runs on the last token only: B rows).

    Raises:
        ValueError: a missing key, mismatched lengths, a non-positive row count or a negative time.
    """
    if not groups:
        raise ValueError("matmul_groups must hold at least one group of linear layers")
    for g in groups:
        for k in ("rows", "times_s", "per_token"):
            if k not in g:
                raise ValueError(f"a matmul group is missing {k!r}: {g}")
        if not g["rows"] or len(g["rows"]) != len(g["times_s"]):
            raise ValueError(f"matmul group {g.get('label', '?')}: rows and times_s must be non-empty and of equal "
                             f"length, got {len(g['rows'])} and {len(g['times_s'])}")
        for r in g["rows"]:
            check_positive_int(r, "matmul rows")
        for t in g["times_s"]:
            check_nonneg_number(t, "matmul time")
    return list(groups)


def matmul_time_s(groups: list[dict], phase: str, batch: int, tokens: int) -> float:
    """Time of all the model's linear layers in one forward, from the measured kernel times (seconds).

    ``groups``: see ``check_matmul_groups``; each group's ``times_s`` is the time of all its
    matrices (every layer) at ``rows`` input rows. A per-token group runs on ``batch * tokens``
    rows (``tokens`` = 1 for decode, the prompt length for prefill); the output head on ``batch``
    rows (logits of the last token only, ``logits_to_keep=1``).

    Raises:
        ValueError: an invalid group list or non-positive sizes.
    """
    b = check_positive_int(batch, "batch")
    t = check_positive_int(tokens, "tokens")
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")
    return sum(_rows_time_s(g["rows"], g["times_s"], b * t if g["per_token"] else b)
               for g in check_matmul_groups(groups))


def decode_overhead_s(model: ModelConfig, batch: int, seq_len: int, c_layer_s: float, c_step_s: float,
                      decode_overhead: dict | None = None) -> float:
    """Overhead of one decode step: ``n_layers * c_layer_s + c_step_s`` (fitted at batch 1 and the
    calibration context) plus, with ``decode_overhead``, the per-sequence work measured on the model with
    its matmuls taken out at the sweep's batches and contexts:
    ``per_seq_s * (B - 1) + per_kv_token_s * (B * S - ref_tokens)`` (attention over the cache beyond
    its read at W, norms, rotary; a linear fit), never below 0.

    ``decode_overhead``: dict with ``per_seq_s``, ``per_kv_token_s`` (seconds) and ``ref_tokens``
    (the KV tokens per sequence of the batch-1 calibration step).

    Raises:
        ValueError: negative coefficients, a missing key, non-positive sizes.
    """
    b = check_positive_int(batch, "batch")
    s = check_positive_int(seq_len, "seq_len")
    base = overhead_s(model, c_layer_s, c_step_s)
    if not decode_overhead:
        return base
    try:
        per_seq = check_nonneg_number(decode_overhead["per_seq_s"], "per_seq_s")
        per_tok = check_nonneg_number(decode_overhead["per_kv_token_s"], "per_kv_token_s")
        ref = check_positive_int(decode_overhead["ref_tokens"], "ref_tokens")
    except KeyError as e:
        raise ValueError(f"decode_overhead lacks {e.args[0]!r}") from None
    return max(base + per_seq * (b - 1) + per_tok * (b * s - ref), 0.0)


def calibrated_parts(model: ModelConfig, machine: Accelerator, phase: str, batch: int, seq_len: int, dtype: str,
                     c_layer_s: float = 0.0, c_step_s: float = 0.0, matmul_groups: list[dict] | None = None,
                     decode_overhead: dict | None = None, prefill_overhead: dict | None = None) -> dict:
    """The calibrated prediction of one step and what it is made of (seconds).

    With ``matmul_groups``: ``matmul_s`` (the model's linear layers at the measured kernel speed,
    ``matmul_time_s``) + ``kv_s`` (KV bytes read in decode, written in prefill, / probed W; calc)
    + ``attention_s`` (prefill only: causal attention FLOPs / probed P, calc ``attention_flops``;
    0 in decode, where calc leaves them out) + ``overhead_s`` (``n_layers * c_layer_s + c_step_s``;
    in decode with ``decode_overhead`` also its batch and context terms, ``decode_overhead_s``; in prefill
    with ``prefill_overhead`` the prefill's own, ``prefill_overhead_s``).
    Without: ``matmul_s`` is the machine roofline's ``max(weights_s, compute_s)`` term, so the
    total is the machine roofline plus the overhead (the older, overhead-only calibration).

    Returns:
        dict with matmul_s, kv_s, attention_s, overhead_s, total_s (their sum) and ``kernel`` (True
        when the matmul term is measured).

    Raises:
        ValueError: unknown phase, non-positive sizes, unknown dtype, an invalid group list.
    """
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")
    if phase == "decode":
        st = decode_step_time(model, machine, batch, seq_len, weight_dtype=dtype, kv_dtype=dtype)
        attn = 0.0
    else:
        st = prefill_time(model, machine, seq_len, batch, weight_dtype=dtype, kv_dtype=dtype, logits=PREFILL_LOGITS)
        attn = attention_flops(model, seq_len, batch) / machine.compute_flops(dtype)
    if phase == "decode":
        over = decode_overhead_s(model, batch, seq_len, c_layer_s, c_step_s, decode_overhead)
    elif prefill_overhead:
        over = prefill_overhead_s(batch, seq_len, prefill_overhead)
    else:
        over = overhead_s(model, c_layer_s, c_step_s)
    if matmul_groups:
        mm = matmul_time_s(matmul_groups, phase, batch, 1 if phase == "decode" else seq_len)
        kernel = True
    else:
        mm, attn, kernel = st.total_s - st.kv_s, 0.0, False
    return dict(matmul_s=mm, kv_s=st.kv_s, attention_s=attn, overhead_s=over, total_s=mm + st.kv_s + attn + over,
                kernel=kernel)


def predict_point(model: ModelConfig, machine: Accelerator, phase: str, batch: int, seq_len: int, dtype: str,
                  c_layer_s: float = 0.0, c_step_s: float = 0.0, datasheet: Accelerator | None = None,
                  matmul_groups: list[dict] | None = None, decode_overhead: dict | None = None,
                  prefill_overhead: dict | None = None) -> dict:
    """The three predictions for one measured point.

    Args:
        phase: "prefill" (``seq_len`` = prompt tokens per sequence) or "decode" (``seq_len`` = KV
            tokens each step reads per sequence).
        dtype: weight and KV dtype ("fp32", "bf16", "fp16").
        c_layer_s, c_step_s, matmul_groups, decode_overhead, prefill_overhead: the calibration
            (``calibrated_parts``).

    Returns:
        dict with ``machine_s``, ``calibrated_s``, ``datasheet_s`` (NaN without a data sheet),
        ``bytes`` (bytes the step must move: weights + KV, calc), ``flops``, ``bound``, the
        calibrated parts ``cal_matmul_s``, ``cal_kv_s``, ``cal_attention_s``, ``cal_overhead_s``, the
        machine roofline's weight/compute term ``machine_matmul_s`` and ``cal_valid``
        (``robust.calibration_valid``: the measured matmul term in its physical range against it, a launch
        floor per kernel call allowed, ``robust.kernel_calls``; True without kernels).

    Raises:
        ValueError: unknown phase, non-positive sizes, unknown dtype.
    """
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")

    def step(acc):
        if phase == "decode":
            return decode_step_time(model, acc, batch, seq_len, weight_dtype=dtype, kv_dtype=dtype)
        return prefill_time(model, acc, seq_len, batch, weight_dtype=dtype, kv_dtype=dtype, logits=PREFILL_LOGITS)

    m = step(machine)
    ds = step(datasheet).total_s if datasheet is not None else math.nan
    parts = calibrated_parts(model, machine, phase, batch, seq_len, dtype, c_layer_s, c_step_s, matmul_groups,
                             decode_overhead, prefill_overhead)

    mm_line = m.total_s - m.kv_s
    rows = batch if phase == "decode" else batch * seq_len
    valid = not parts["kernel"] or calibration_valid(parts["matmul_s"], mm_line,
                                                     n_kernels=kernel_calls(matmul_groups, rows))
    return dict(machine_s=m.total_s, calibrated_s=parts["total_s"], datasheet_s=ds, bytes=m.bytes, flops=m.flops,
                bound=m.bound, cal_matmul_s=parts["matmul_s"], cal_kv_s=parts["kv_s"],
                cal_attention_s=parts["attention_s"], cal_overhead_s=parts["overhead_s"], machine_matmul_s=mm_line,
                cal_valid=valid)


def machine_step(model: ModelConfig, machine: Accelerator, point: dict, dtype: str):
    """The machine roofline of one measured point, term by term: calc's ``decode_step_time`` (decode,
    ``seq_len`` = KV tokens read per sequence) or ``prefill_time`` (prefill, ``seq_len`` = prompt tokens)
    on the probed machine, weights and KV in ``dtype``. Its ``total_s`` is the point's ``pred_machine_s``
    (``predict_point``); the page fills the roofline equation in with its ``kv_s``, ``weights_s``,
    ``compute_s`` and ``flops`` (the inference course, week 11, step 4).

    Args:
        point: a row of ``annotate_points`` (needs ``phase``, ``batch``, ``seq_len``).

    Returns:
        calc.StepTime.

    Raises:
        ValueError: unknown phase, non-positive sizes, unknown dtype.
    """
    phase, batch, seq_len = point["phase"], int(point["batch"]), int(point["seq_len"])
    if phase == "decode":
        return decode_step_time(model, machine, batch, seq_len, weight_dtype=dtype, kv_dtype=dtype)
    if phase == "prefill":
        return prefill_time(model, machine, seq_len, batch, weight_dtype=dtype, kv_dtype=dtype, logits=PREFILL_LOGITS)
    raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")


def kernel_bandwidth(groups: list[dict], rows: int = 1) -> dict:
    """Achieved bandwidth of the matmul kernels at the model's shapes: weight bytes / measured time.

    Args:
        groups: the matmul calibration (each group needs ``weight_bytes``: bytes of all its matrices).
        rows: input rows (1 = a batch-1 decode step).

    Returns:
        dict: ``bytes`` (all linear weights), ``time_s`` (all groups at ``rows``), ``bytes_per_s``.

    Raises:
        ValueError: an invalid group list, a group without ``weight_bytes``.
    """
    groups = check_matmul_groups(groups)
    total_b = sum(check_positive_number(g.get("weight_bytes", 0), "weight_bytes") for g in groups)
    total_t = sum(_rows_time_s(g["rows"], g["times_s"], rows) for g in groups)
    return dict(bytes=total_b, time_s=total_t, bytes_per_s=total_b / total_t if total_t > 0 else math.inf)


def kernel_table(groups: list[dict], rows: int = 1) -> pd.DataFrame:
    """One row per group of linear layers: label, matrices, weight bytes, time at ``rows`` rows and the
    achieved bandwidth (weight bytes / time) and FLOP rate (2 * weights * rows / time)."""
    out = []
    for g in check_matmul_groups(groups):
        t = _rows_time_s(g["rows"], g["times_s"], rows)
        wb = float(g.get("weight_bytes", math.nan))
        n_w = float(g.get("n_weights", math.nan))
        out.append(dict(layers=g.get("label", "?"), matrices=int(g.get("count", 0)), weight_bytes=wb, time_s=t,
                        bytes_per_s=wb / t if t > 0 else math.nan,
                        flops_per_s=2.0 * n_w * rows / t if t > 0 else math.nan))
    return pd.DataFrame(out)


def achieved_bandwidth_fraction(bytes_moved: float, step_s: float, bandwidth_bytes_per_s: float) -> float:
    """``bytes_moved / step_s / bandwidth``: the share of the probed bandwidth a step achieved (0..1+).

    Raises:
        ValueError: non-positive arguments.
    """
    return (check_positive_number(bytes_moved, "bytes_moved") / check_positive_number(step_s, "step_s")
            / check_positive_number(bandwidth_bytes_per_s, "bandwidth_bytes_per_s"))


def annotate_points(points: list[dict], model: ModelConfig, machine: Accelerator, dtype: str,
                    c_layer_s: float, c_step_s: float, datasheet: Accelerator | None = None,
                    matmul_groups: list[dict] | None = None, decode_overhead: dict | None = None,
                    prefill_overhead: dict | None = None) -> pd.DataFrame:
    """A table of every measured point with the three predictions and measured/predicted ratios.

    Args:
        points: dicts with at least ``sweep``, ``phase``, ``batch``, ``seq_len``, ``median_s`` (and
            ``p10_s``, ``p90_s`` for the reported figure and the spread).

    Returns:
        DataFrame: the input columns plus ``reported_s`` (``reported_time_s``: p10 of the steps in
        decode, the median in prefill; the ratios below divide it), ``spread`` (p90 / p10),
        ``unreliable`` (flagged by the measurement, ``flagged`` and ``reasons`` of ``live.robust``, or spread
        above ``NOISY_SPREAD``), ``reasons`` (why, "; "-separated), ``cal_physical`` (``predict_point``'s
        ``cal_valid``: the kernel term in its physical range), ``cal_confirmed`` (measured / calibrated of this
        held-out point within ``robust.EVIDENCE_FACTOR``), ``cal_valid`` (the ratio within
        ``CAL_HELDOUT_FACTOR``, and physical or confirmed), ``cal_check`` (why not valid), ``pred_datasheet_s``, ``pred_machine_s``,
        ``pred_calibrated_s``, ``ratio_datasheet``, ``ratio_machine``, ``ratio_calibrated``
        (measured/predicted), the calibrated parts ``cal_matmul_s``, ``cal_kv_s``,
        ``cal_attention_s``, ``cal_overhead_s`` (``calibrated_parts``), ``bytes_moved``, ``achieved_bandwidth_pct`` (decode only: calc bytes
        / measured time / probed W, in percent), ``tokens_per_s``.
    """

    rows = []
    for p in points:
        pr = predict_point(model, machine, p["phase"], p["batch"], p["seq_len"], dtype, c_layer_s, c_step_s, datasheet,
                           matmul_groups, decode_overhead, prefill_overhead)
        med = reported_time_s(p)
        row = dict(p)
        row["reported_s"] = med
        row["spread"] = spread_ratio(p.get("p10_s", med), p.get("p90_s", med))
        reasons = [r for r in str(p.get("reasons") or "").split("; ") if r]
        if row["spread"] > NOISY_SPREAD and not any("spread" in r for r in reasons):
            reasons.append(f"samples spread p90/p10 = {row['spread']:.2f} (> {NOISY_SPREAD:g})")
        row["unreliable"] = bool(p.get("flagged")) or bool(reasons)
        row["reasons"] = "; ".join(reasons)
        row.update(pred_datasheet_s=pr["datasheet_s"], pred_machine_s=pr["machine_s"],
                   pred_calibrated_s=pr["calibrated_s"], ratio_datasheet=med / pr["datasheet_s"],
                   ratio_machine=med / pr["machine_s"], ratio_calibrated=med / pr["calibrated_s"],
                   bytes_moved=pr["bytes"], roofline_bound=pr["bound"], cal_matmul_s=pr["cal_matmul_s"],
                   cal_kv_s=pr["cal_kv_s"], cal_attention_s=pr["cal_attention_s"],
                   cal_overhead_s=pr["cal_overhead_s"])
        # the calibration never saw this point: it is held out, and a prediction off by more than
        # CAL_HELDOUT_FACTOR either way is not drawn as valid. A kernel term outside its physical range
        # (robust.calibration_valid) is drawn only where this evidence confirms it (robust.EVIDENCE_FACTOR):
        # a launch-bound calibration that predicts the measured step is right, whatever the range says
        r_cal = row["ratio_calibrated"]
        held_ok = 1 / CAL_HELDOUT_FACTOR <= r_cal <= CAL_HELDOUT_FACTOR
        row["cal_physical"] = bool(pr["cal_valid"])
        row["cal_confirmed"] = evidence_confirms(r_cal)
        row["cal_valid"] = bool(held_ok and (row["cal_physical"] or row["cal_confirmed"]))
        row["cal_check"] = ("" if row["cal_valid"] else
                            f"measured / calibrated = {r_cal:.2f}, outside 1/{CAL_HELDOUT_FACTOR:g}-{CAL_HELDOUT_FACTOR:g} "
                            "at this held-out point" if not held_ok else
                            f"the calibrated matmul term lies outside its physical range (below the machine roofline's, "
                            f"or above {CAL_MAX_FACTOR:g}x it plus {LAUNCH_FLOOR_S * 1e6:g} us per kernel call) and this "
                            f"held-out point does not confirm it (measured / calibrated = {r_cal:.2f}, outside "
                            f"1/{EVIDENCE_FACTOR:g}-{EVIDENCE_FACTOR:g})")
        row["achieved_bandwidth_pct"] = (100 * achieved_bandwidth_fraction(pr["bytes"], med, machine.bandwidth_bytes_per_s)
                                         if p["phase"] == "decode" else math.nan)
        tokens = p["batch"] * (p["seq_len"] if p["phase"] == "prefill" else 1)
        row["tokens_per_s"] = tokens / med
        rows.append(row)
    return pd.DataFrame(rows)


def machine_critical_batch(machine: Accelerator, dtype: str) -> float:
    """The probed machine's critical batch ``P * bytes / (2 W)`` (calc ``critical_batch``)."""
    return critical_batch(machine, dtype)


def datasheet_for(datasheet_id: str | None) -> Accelerator | None:
    """calc's catalogue entry for ``datasheet_id`` or None."""
    return get_accelerator(datasheet_id) if datasheet_id else None


def ratio_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Median measured/predicted ratio per sweep and prediction (rows: sweeps; a prediction with no
    values at all, the data sheet on a CPU, is left out)."""
    cols = {f"ratio_{k}": v for k, v in PREDICTIONS.items()}
    out = table.groupby("sweep", sort=False)[list(cols)].median().rename(columns=cols)
    return out.dropna(axis=1, how="all")


def prediction_curves(model: ModelConfig, machine: Accelerator, phase: str, xs, *, vary: str, fixed: int,
                      dtype: str, c_layer_s: float, c_step_s: float, datasheet: Accelerator | None = None,
                      matmul_groups: list[dict] | None = None, decode_overhead: dict | None = None,
                      confirmed_x: tuple[float, float] | None = None,
                      prefill_overhead: dict | None = None) -> pd.DataFrame:
    """Predictions on a fine grid for the charts' lines.

    Args:
        phase: "prefill" or "decode"; vary: "batch" or "seq_len" (the x axis); fixed: the other size.
        xs: grid of x values (positive integers).

        confirmed_x: (lowest, highest) x of the sweep's measured points when every one of them confirms the
            calibration (``annotate_points``' ``cal_confirmed``): between them the line is drawn even where
            the kernel term leaves its physical range (interpolation between confirmed points).

    Returns:
        DataFrame with columns x, datasheet_s, machine_s, calibrated_s (NaN where the calibration is not
        valid: ``predict_point``'s ``cal_valid`` false outside ``confirmed_x``; the line is not drawn there).
    """
    rows = []
    for x in xs:
        b, s = (int(x), fixed) if vary == "batch" else (fixed, int(x))
        pr = predict_point(model, machine, phase, b, s, dtype, c_layer_s, c_step_s, datasheet, matmul_groups,
                           decode_overhead, prefill_overhead)
        ok = pr["cal_valid"] or (confirmed_x is not None and confirmed_x[0] <= x <= confirmed_x[1])
        rows.append(dict(x=int(x), datasheet_s=pr["datasheet_s"], machine_s=pr["machine_s"],
                         calibrated_s=pr["calibrated_s"] if ok else math.nan))
    return pd.DataFrame(rows)


def headline(table: pd.DataFrame) -> dict:
    """The figures the page and the benchmark lead with, from an annotated table.

    Returns:
        dict: ``decode_b1`` (the decode point at batch 1 with the shortest context, as a dict, or
        None), ``bandwidth_pct`` (its achieved bandwidth in percent), ``median_ratio_<prediction>``
        (median measured/predicted over all points, NaN when absent) and ``within_15pct`` (share of
        points whose calibrated ratio lies in [0.85, 1.15]).
    """
    out = {"decode_b1": None, "bandwidth_pct": math.nan}
    if table is None or table.empty:
        for k in PREDICTIONS:
            out[f"median_ratio_{k}"] = math.nan
        out["within_15pct"] = math.nan
        return out
    dec = table[(table["phase"] == "decode") & (table["batch"] == 1)].sort_values("context_len")
    if not dec.empty:
        row = dec.iloc[0].to_dict()
        out["decode_b1"] = row
        out["bandwidth_pct"] = float(row["achieved_bandwidth_pct"])
    for k in PREDICTIONS:
        out[f"median_ratio_{k}"] = float(table[f"ratio_{k}"].median())
    r = table["ratio_calibrated"]
    out["within_15pct"] = float(((r >= 0.85) & (r <= 1.15)).mean())
    return out


CALIBRATED_PARTS = {
    "cal_matmul_s": "matmuls at the kernels' measured speed (model shapes)",
    "cal_kv_s": "KV cache read at the probed bandwidth",
    "cal_attention_s": "attention FLOPs at the probed matmul rate (prefill)",
    "cal_overhead_s": "overhead (the model with its matmuls taken out)",
}


def calibrated_parts_table(point: dict) -> pd.DataFrame:
    """What one point's calibrated prediction is made of: a row per part with its time (s) and its share
    of the total (percent), then the total; the attention row only when it is non-zero (prefill).

    Args:
        point: a row of ``annotate_points`` (needs ``cal_matmul_s``, ``cal_kv_s``,
            ``cal_attention_s``, ``cal_overhead_s``, ``pred_calibrated_s``, ``median_s``).

    Raises:
        ValueError: a missing part.
    """
    missing = [k for k in (*CALIBRATED_PARTS, "pred_calibrated_s") if k not in point]
    if missing:
        raise ValueError(f"the point lacks the calibrated parts {missing}")
    total = float(point["pred_calibrated_s"])
    rows = [dict(part=label, time_s=float(point[k]), share_pct=100.0 * float(point[k]) / total if total else math.nan)
            for k, label in CALIBRATED_PARTS.items() if k != "cal_attention_s" or point[k] > 0]
    rows.append(dict(part="calibrated prediction (sum)", time_s=total, share_pct=100.0))
    if "median_s" in point:
        m = float(point.get("reported_s", point["median_s"]))
        label = "measured (p10 of steps)" if point.get("phase") == "decode" and "reported_s" in point else "measured"
        rows.append(dict(part=label, time_s=m, share_pct=100.0 * m / total if total else math.nan))
    return pd.DataFrame(rows)
