"""The three predictions set beside every live measurement, and the tables the page shows (no torch).

1. Data-sheet roofline: calc's ``decode_step_time`` / ``prefill_time`` on the accelerator's
   published W and P (only for a GPU in calc's catalogue; none for a CPU).
2. This machine's roofline: the same functions on the probed ``Accelerator`` (measured W and P).
3. Calibrated: (2) plus a per-forward overhead ``n_layers * c_layer_s + c_step_s`` fitted on this
   machine from same-depth, tiny-width models (DESIGN.md "roofline + per-step overhead";
   the tiny-hidden-size idea of transformers#43089).

Ratios are measured / predicted: 1.0 is a perfect prediction, 2.0 means the real step took twice
the predicted time.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from calc import Accelerator, ModelConfig, critical_batch, decode_step_time, get_accelerator, prefill_time
from calc.dtypes import check_nonneg_number, check_positive_int, check_positive_number

PREDICTIONS = {
    "datasheet": "data-sheet roofline",
    "machine": "machine roofline",
    "calibrated": "roofline + overhead",
}

#: (substring rules, calc accelerator id); first match wins. GPU names as torch.cuda reports them.
_GPU_RULES = (
    (("h200",), "h200"),
    (("h100", "pcie"), "h100-pcie"),
    (("h100",), "h100-sxm"),
    (("a100", "40gb"), "a100-40gb"),
    (("a100",), "a100-80gb"),
    (("b200",), "b200"),
    (("l40s",), "l40s"),
    (("4090",), "rtx-4090"),
    (("mi300x",), "mi300x"),
)


def datasheet_accelerator_id(device_name: str) -> str | None:
    """calc's accelerator id for a GPU name as torch reports it ("NVIDIA H200" -> "h200"), else None.

    An "NVIDIA L4" matches "l4" only as a whole word. CPUs never match: their data sheets give no
    single achievable bandwidth, so the CPU charts show only the measured-machine predictions.
    """
    name = str(device_name).lower()
    for needles, acc_id in _GPU_RULES:
        if all(n in name for n in needles):
            return acc_id
    if "l4" in name.replace("-", " ").split():
        return "l4"
    return None


def fit_overhead(depth_times_s: dict[int, float]) -> tuple[float, float]:
    """Fit ``t(L) = L * c_layer_s + c_step_s`` to decode-step times of tiny-width models of depth L.

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


def overhead_s(model: ModelConfig, c_layer_s: float, c_step_s: float) -> float:
    """Per-forward overhead of ``model``: ``n_layers * c_layer_s + c_step_s`` (seconds)."""
    return model.n_layers * check_nonneg_number(c_layer_s, "c_layer_s") + check_nonneg_number(c_step_s, "c_step_s")


def predict_point(model: ModelConfig, machine: Accelerator, phase: str, batch: int, seq_len: int, dtype: str,
                  c_layer_s: float = 0.0, c_step_s: float = 0.0, datasheet: Accelerator | None = None) -> dict:
    """The three predictions for one measured point.

    Args:
        phase: "prefill" (``seq_len`` = prompt tokens per sequence) or "decode" (``seq_len`` = KV
            tokens each step reads per sequence).
        dtype: weight and KV dtype ("fp32", "bf16", "fp16").

    Returns:
        dict with ``machine_s``, ``calibrated_s``, ``datasheet_s`` (NaN without a data sheet),
        ``bytes`` (bytes the step must move: weights + KV, calc), ``flops``, ``bound``.

    Raises:
        ValueError: unknown phase, non-positive sizes, unknown dtype.
    """
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")

    def step(acc):
        if phase == "decode":
            return decode_step_time(model, acc, batch, seq_len, weight_dtype=dtype, kv_dtype=dtype)
        return prefill_time(model, acc, seq_len, batch, weight_dtype=dtype, kv_dtype=dtype)

    m = step(machine)
    ds = step(datasheet).total_s if datasheet is not None else math.nan
    return dict(machine_s=m.total_s, calibrated_s=m.total_s + overhead_s(model, c_layer_s, c_step_s),
                datasheet_s=ds, bytes=m.bytes, flops=m.flops, bound=m.bound)


def achieved_bandwidth_fraction(bytes_moved: float, step_s: float, bandwidth_bytes_per_s: float) -> float:
    """``bytes_moved / step_s / bandwidth``: the share of the probed bandwidth a step achieved (0..1+).

    Raises:
        ValueError: non-positive arguments.
    """
    return (check_positive_number(bytes_moved, "bytes_moved") / check_positive_number(step_s, "step_s")
            / check_positive_number(bandwidth_bytes_per_s, "bandwidth_bytes_per_s"))


def annotate_points(points: list[dict], model: ModelConfig, machine: Accelerator, dtype: str,
                    c_layer_s: float, c_step_s: float, datasheet: Accelerator | None = None) -> pd.DataFrame:
    """A table of every measured point with the three predictions and measured/predicted ratios.

    Args:
        points: dicts with at least ``sweep``, ``phase``, ``batch``, ``seq_len``, ``median_s``.

    Returns:
        DataFrame: the input columns plus ``pred_datasheet_s``, ``pred_machine_s``,
        ``pred_calibrated_s``, ``ratio_datasheet``, ``ratio_machine``, ``ratio_calibrated``
        (measured/predicted), ``bytes_moved``, ``achieved_bandwidth_pct`` (decode only: calc bytes
        / measured time / probed W, in percent), ``tokens_per_s``.
    """
    rows = []
    for p in points:
        pr = predict_point(model, machine, p["phase"], p["batch"], p["seq_len"], dtype, c_layer_s, c_step_s, datasheet)
        med = p["median_s"]
        row = dict(p)
        row.update(pred_datasheet_s=pr["datasheet_s"], pred_machine_s=pr["machine_s"],
                   pred_calibrated_s=pr["calibrated_s"], ratio_datasheet=med / pr["datasheet_s"],
                   ratio_machine=med / pr["machine_s"], ratio_calibrated=med / pr["calibrated_s"],
                   bytes_moved=pr["bytes"], roofline_bound=pr["bound"])
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
                      dtype: str, c_layer_s: float, c_step_s: float, datasheet: Accelerator | None = None
                      ) -> pd.DataFrame:
    """Predictions on a fine grid for the charts' lines.

    Args:
        phase: "prefill" or "decode"; vary: "batch" or "seq_len" (the x axis); fixed: the other size.
        xs: grid of x values (positive integers).

    Returns:
        DataFrame with columns x, datasheet_s, machine_s, calibrated_s.
    """
    rows = []
    for x in xs:
        b, s = (int(x), fixed) if vary == "batch" else (fixed, int(x))
        pr = predict_point(model, machine, phase, b, s, dtype, c_layer_s, c_step_s, datasheet)
        rows.append(dict(x=int(x), datasheet_s=pr["datasheet_s"], machine_s=pr["machine_s"],
                         calibrated_s=pr["calibrated_s"]))
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
