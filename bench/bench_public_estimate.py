"""The public serving estimate, called as an engineer calls it, against the published measurements (printed
figures, not a timed test).

Run: python bench/bench_public_estimate.py
For every row of calc/data/serving_measurements.csv and serving_holdout.csv that the serving model predicts
(``calc.serving_fit.prepare_rows``), calls ``calc.serving.serving_estimate`` with the row's own fields only (model,
accelerator, lengths, concurrency or rate, layout, dtypes, engine and version), with the stored parameters, in two
ways: (a) the fields alone (every closed loop the steady state, every offline run endless, an unstated version a
current build) and (b) with the run's conventions as its notes state them, each through a public argument:
``lengths="fixed"`` for a run of one length, with ``rounds=1`` for a burst of N requests sent at once or a
fixed-length run that states no rounds (the fit reads it as one burst), ``rounds`` for a closed loop's stated rounds
(``calc.serving_fit.closed_loop_rounds``),
``num_prompts`` for a run of a stated number of requests (offline: ``lengths`` "varied" where its
outputs end at end-of-text; at a rate: never more in flight), ``latency_limits`` for a rate run tuned to the 99th-percentile limits
its notes state (MLPerf's Server and Interactive runs: the engine of the range at their edge), the run's date as ``engine_version`` where it states a date and no version,
``batching="static"`` for an in-process static batch, and ``engine_options`` for trtllm-bench's engine, SGLang's
``--scheduler-recv-interval``, TensorRT-LLM's attention-DP balance, its PyTorch backend's prompt steps and a
TensorRT engine's cache of every token of a sliding window. Prints
the share within 25% and 50% and the median |log(measured / predicted)| of each, by set, mode and metric, beside
the fit's own prediction of the same rows (``predict_rows``), and the share of latency rows whose measured value lies
in the estimate's range (``range_coverage``). The fitted rows are in-sample; the held-out rows are not. Where (b) still differs from the fit: rows with neither a version nor a date (the fit takes its
reference year, the public estimate a current build).
"""
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from calc.measurements import load_measurements, load_sources  # noqa: E402
from calc.serving import serving_estimate  # noqa: E402
from calc.serving_fit import (_ADP_BALANCE, _RECV_INTERVAL, _RUN_DATE, _RUN_THROUGHPUT,  # noqa: E402
                              _STATIC, _TRT_ENGINE, _TRTLLM_BENCH, HOLDOUT_PATH, _run_requests, closed_loop_rounds,
                              checkpoint_kv_scales, error_summary, predict_rows, prepare_rows, read_measurements,
                              row_kv_dtype)
from calc.run_limits import run_latency_limits  # noqa: E402
from calc.serving_terms import spread_outputs  # noqa: E402
from calc.serving_params import load_serving_params, param_values  # noqa: E402

METRIC = {"tpot_ms": lambda e: e.tpot.estimate_s * 1e3, "itl_ms": lambda e: e.tpot.estimate_s * 1e3,
          "ttft_ms": lambda e: e.ttft.estimate_s * 1e3, "e2e_ms": lambda e: e.e2e_s * 1e3,
          "output_tok_per_s": lambda e: e.output_tokens_per_s,
          "output_tok_per_s_per_gpu": lambda e: e.output_tokens_per_s_per_gpu,
          "requests_per_s": lambda e: e.requests_per_s}


def public(row, convention: bool) -> float:
    """The row's metric from serving_estimate called with the row's fields (NaN where it refuses them)."""
    est = public_estimate(row, convention)
    if est is None:
        return math.nan
    if row.metric == "total_tok_per_s_per_gpu":
        return est.output_tokens_per_s_per_gpu * (row.input_len + row.output_len) / row.output_len
    return METRIC[row.metric](est)


def public_estimate(row, convention: bool):
    """serving_estimate called with the row's fields (and, with ``convention``, the run's conventions as its notes
    state them); None where it refuses them."""
    kw = dict(tp=int(row.tp), pp=int(row.pp), ep=int(row.ep), replicas=int(row.replicas),
              weight_dtype=str(row.weight_dtype), kv_dtype=row_kv_dtype(row.weight_dtype, row.kv_dtype, str(row.engine),
                                                                 checkpoint_kv_scales(row.notes)),
              engine=str(row.engine), engine_version="" if pd.isna(row.engine_version) else str(row.engine_version))
    notes = str(row.notes).lower()
    when = _RUN_DATE.search(notes)
    if convention and not kw["engine_version"] and when:
        kw["engine_version"] = "-".join(when.groups())  # a run that states its date but no version
    if convention and any(w in notes for w in _STATIC):
        kw["batching"] = "static"  # an in-process static batch (gptSessionBenchmark, a batch run of one size)
    options = {}
    if convention and row.mode == "offline" and "trtllm" in str(row.engine) and any(w in notes for w in _TRTLLM_BENCH):
        options["trtllm_bench"] = True  # NVIDIA's offline tables: the engine trtllm-bench builds
    recv, balance = _RECV_INTERVAL.search(notes), _ADP_BALANCE.search(notes)
    if convention and recv and "sglang" in str(row.engine):
        options["recv_interval"] = int(recv.group(1))  # the launch's --scheduler-recv-interval
    if convention and balance and "trtllm" in str(row.engine) and int(row.tp) < int(row.ep):
        options["adp_balance_timeout_iters"] = int(balance.group(1))  # attention_dp_config's balance
    if convention and "trtllm" in str(row.engine) and any(w in notes for w in _TRT_ENGINE):
        options["full_window_cache"] = True  # a TensorRT engine caches every token of a sliding window
    if convention and "trtllm" in str(row.engine) and "pytorch backend" in notes:
        options["eager_prefill"] = True  # TensorRT-LLM's PyTorch backend (before 1.0 too): prompt steps outside graphs
    if options:
        kw["engine_options"] = options
    if row.mode == "rate":
        kw["request_rate_per_s"] = float(row.request_rate_per_s)
        if convention and np.isfinite(_run_requests(str(row.notes))):
            kw["num_prompts"] = int(_run_requests(str(row.notes)))  # never more in flight than the run sends
        limits = run_latency_limits(row.notes, row.model, f"{row.source_id} {row.id}")
        if convention and limits:
            kw["latency_limits"] = limits  # a run tuned to its limits (stated, or MLPerf's) sits at their edge
    elif row.mode == "offline" and pd.isna(row.concurrency) and convention and np.isfinite(_run_requests(
            str(row.notes))) and row.metric in _RUN_THROUGHPUT and not any(w in notes for w in _STATIC):
        # a finite run of N requests sent at once (its notes state N): waves of one length, or outputs ending at
        # end-of-text draining at the end (calc.serving.finite_offline_run)
        kw["num_prompts"] = int(_run_requests(str(row.notes)))
        kw["lengths"] = "varied" if spread_outputs(row.len_dist) else "fixed"
    elif row.mode == "offline" and not pd.isna(row.concurrency):
        kw["concurrency"] = float(row.concurrency)  # a burst of N requests sent at once
        if convention:
            kw["lengths"], kw["rounds"] = "fixed", 1.0  # one burst: every request arrives before the first step
    elif row.mode == "concurrency":
        kw["concurrency"] = float(row.concurrency)
        if convention:
            kw["lengths"] = "fixed" if str(row.len_dist).strip().lower() == "fixed" else "varied"
            rounds = closed_loop_rounds(row.mode, row.concurrency, notes)
            if rounds is not None and row.statistic == "mean":
                kw["rounds"] = rounds  # stated in the notes
            elif kw["lengths"] == "fixed" and rounds is None:
                kw["rounds"] = 1.0  # the fit reads a fixed-length run that states no rounds as one burst throughout
    try:
        return serving_estimate(str(row.model), str(row.accelerator), int(row.input_len), int(row.output_len), **kw)
    except ValueError:
        return None


#: The range of each latency metric of an estimate, (low, high) in ms.
RANGES = {"tpot_ms": lambda e: (e.tpot.low_s * 1e3, e.tpot.high_s * 1e3),
          "itl_ms": lambda e: (e.tpot.low_s * 1e3, e.tpot.high_s * 1e3),
          "ttft_ms": lambda e: (e.ttft.low_s * 1e3, e.ttft.high_s * 1e3),
          "e2e_ms": lambda e: (e.e2e_low_s * 1e3, e.e2e_high_s * 1e3)}


def range_coverage(rows) -> pd.DataFrame:
    """Per mode and latency metric, the share of ``rows`` (prepared measurement rows) whose measured value lies in
    the public estimate's range (the run's conventions), and the median width of the range, log(high / low): the
    range is made from the 10% and 90% quantiles of the cross-validated errors, so about 80% should lie in it."""
    recs = []
    for r in rows[rows["metric"].isin(list(RANGES))].itertuples():
        est = public_estimate(r, True)
        if est is not None:
            low, high = RANGES[r.metric](est)
            recs.append({"mode": r.mode, "metric": r.metric, "inside": low <= r.value <= high,
                         "width": math.log(high / low)})
    t = pd.DataFrame(recs)
    out = t.groupby(["mode", "metric"]).agg(n=("inside", "size"), inside=("inside", "mean"),
                                            width_median=("width", "median"))
    out.loc[("all", ""), :] = [len(t), t["inside"].mean(), t["width"].median()]
    return out.astype({"n": int}).round(3)


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
            for col, label in (("fit", "fit's own path"), ("plain", "serving_estimate, the fields alone"),
                               ("convention", "serving_estimate, the run's conventions")):
                recs.append(dict(mode=group[0], metric=group[1], prediction=label, **error_summary(t[col])))
        print(f"\n== {name}: {len(rows)} rows ==")
        print(pd.DataFrame(recs).to_string(index=False))
        print(f"\n== {name}: measured values inside the public estimate's range (the run's conventions) ==")
        print(range_coverage(rows).to_string())


if __name__ == "__main__":
    main()
