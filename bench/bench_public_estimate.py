"""The public serving estimate, called as an engineer calls it, against the published measurements (printed
figures, not a timed test).

Run: python bench/bench_public_estimate.py
For every row of calc/data/serving_measurements.csv and serving_holdout.csv that the serving model predicts
(``calc.serving_fit.prepare_rows``), calls ``calc.serving.serving_estimate`` with the row's own fields only (model,
accelerator, lengths, concurrency or rate, layout, dtypes, engine and version), with the stored parameters, in two
ways: (a) without a closed-loop convention (every closed loop the steady state) and (b) with the row's lengths and
rounds (``lengths="fixed"`` for a run of one length or a burst of N requests sent at once, ``rounds`` where the notes
state them). Prints the share within
25% and 50% and the median |log(measured / predicted)| of each, by set, mode and metric, beside the fit's own
prediction of the same rows (``predict_rows``, which also reads what the notes say of the run: a finite run's
size, trtllm-bench, SGLang's poll interval...). The fitted rows are in-sample; the held-out rows are not.
"""
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from calc.measurements import load_measurements, load_sources  # noqa: E402
from calc.serving import serving_estimate  # noqa: E402
from calc.serving_fit import (HOLDOUT_PATH, _ROUNDS, error_summary, predict_rows, prepare_rows,  # noqa: E402
                              read_measurements, row_kv_dtype)
from calc.serving_params import load_serving_params, param_values  # noqa: E402

METRIC = {"tpot_ms": lambda e: e.tpot.estimate_s * 1e3, "itl_ms": lambda e: e.tpot.estimate_s * 1e3,
          "ttft_ms": lambda e: e.ttft.estimate_s * 1e3, "e2e_ms": lambda e: e.e2e_s * 1e3,
          "output_tok_per_s": lambda e: e.output_tokens_per_s,
          "output_tok_per_s_per_gpu": lambda e: e.output_tokens_per_s_per_gpu,
          "requests_per_s": lambda e: e.requests_per_s}


def public(row, convention: bool) -> float:
    """The row's metric from serving_estimate called with the row's fields (NaN where it refuses them)."""
    kw = dict(tp=int(row.tp), pp=int(row.pp), ep=int(row.ep), replicas=int(row.replicas),
              weight_dtype=str(row.weight_dtype), kv_dtype=row_kv_dtype(row.weight_dtype, row.kv_dtype),
              engine=str(row.engine), engine_version="" if pd.isna(row.engine_version) else str(row.engine_version))
    if row.mode == "rate":
        kw["request_rate_per_s"] = float(row.request_rate_per_s)
    elif row.mode == "offline" and not pd.isna(row.concurrency):
        kw["concurrency"] = float(row.concurrency)  # a burst of N requests sent at once
        if convention:
            kw["lengths"] = "fixed"  # one burst: every request arrives before the first step
    elif row.mode == "concurrency":
        kw["concurrency"] = float(row.concurrency)
        if convention:
            kw["lengths"] = "fixed" if str(row.len_dist).strip().lower() == "fixed" else "varied"
            stated = _ROUNDS.search(str(row.notes).lower())
            if stated and row.statistic == "mean":
                kw["rounds"] = float(stated.group(1))
    try:
        est = serving_estimate(str(row.model), str(row.accelerator), int(row.input_len), int(row.output_len), **kw)
    except ValueError:
        return math.nan
    if row.metric == "total_tok_per_s_per_gpu":
        return est.output_tokens_per_s_per_gpu * (row.input_len + row.output_len) / row.output_len
    return METRIC[row.metric](est)


def main():
    prm = load_serving_params()
    sets = {"fitted (in-sample)": read_measurements(),
            "held out": load_measurements(HOLDOUT_PATH, sources=load_sources())}
    pd.set_option("display.width", 160)
    for name, frame in sets.items():
        rows, comps, _ = prepare_rows(frame, prm)
        meas = rows["value"].to_numpy(float)
        out = rows[["mode", "metric"]].copy()
        out["fit"] = np.log(meas / predict_rows(rows, comps, param_values(prm)))
        out["plain"] = np.log(meas / np.array([public(r, False) for r in rows.itertuples()]))
        out["convention"] = np.log(meas / np.array([public(r, True) for r in rows.itertuples()]))
        recs = []
        for group, t in [(("all", ""), out)] + list(out.groupby(["mode", "metric"])):
            for col, label in (("fit", "fit's own path"), ("plain", "serving_estimate, steady state"),
                               ("convention", "serving_estimate, the row's lengths and rounds")):
                recs.append(dict(mode=group[0], metric=group[1], prediction=label, **error_summary(t[col])))
        print(f"\n== {name}: {len(rows)} rows ==")
        print(pd.DataFrame(recs).to_string(index=False))


if __name__ == "__main__":
    main()
