"""The serving model's percentiles (calc.serving_tails) against published ones (printed figures, not a timed test).

Run: python bench/bench_serving_tails.py [INFERENCEMAX_REPO]

Prints, per metric and statistic, the count, the share within 25% and 50% and the median and quartiles of
log(measured / predicted) of (1) the held-out rows of calc/data/serving_holdout.csv that are percentiles (p99 TTFT and
TPOT of the MLPerf v5.1 and v6.0 Server and Interactive runs, bench/derive_mlperf_p99.py, and the few of the vendor
pages), and, with INFERENCEMAX_REPO, a git copy of github.com/faradawn/InferenceMAX (Apache-2.0), (2) the p99 TTFT,
TPOT, end-to-end latency and vLLM's ITL of InferenceMAX's official aggregated results of 2025
(bench/convert_inferencemax_2025.py's runs at its commit): runs whose mean TPOT and median TTFT the fit reads, whose
percentiles nothing fits (TensorRT-LLM's and SGLang's ITL there times chunks of several tokens, so only vLLM's).
The median and mean rows beside them show how much of a miss is the centre's.
"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calc.serving_fit import holdout_table, prepare_rows, predict_rows  # noqa: E402
from calc.serving_params import load_serving_params, param_values  # noqa: E402


def summary(table: pd.DataFrame, by: list) -> pd.DataFrame:
    """Count, within 25% / 50%, median and quartiles of the log ratios of ``table`` by the columns ``by``."""
    t = table.assign(within_25=np.abs(np.exp(-table["log_ratio"]) - 1) <= 0.25,
                     within_50=np.abs(np.exp(-table["log_ratio"]) - 1) <= 0.5)
    return t.groupby(by).agg(n=("log_ratio", "size"), within_25=("within_25", "mean"),
                             within_50=("within_50", "mean"), median=("log_ratio", "median"),
                             q25=("log_ratio", lambda x: x.quantile(0.25)),
                             q75=("log_ratio", lambda x: x.quantile(0.75))).round(3)


def inferencemax_rows(repo: str) -> pd.DataFrame:
    """Every TPOT, TTFT and e2e statistic of InferenceMAX's 2025 files, and their ITL (mean, median, p99)."""
    import calc.inferencex as ix
    import convert_inferencemax_2025 as cv
    ix.METRIC_FIELDS = ix.METRIC_FIELDS + tuple(("itl_ms", s, f"{s}_itl", 1e3) for s in ("mean", "median", "p99"))
    cv.KEEP = {(m, s) for m in ("tpot_ms", "ttft_ms", "e2e_ms", "itl_ms") for s in ("mean", "median", "p99")}
    rows = cv.convert(repo)
    return rows[(rows["metric"] != "itl_ms") | (rows["engine"].str.lower() == "vllm")]


def main(argv) -> int:
    pd.set_option("display.width", 200)
    held, _ = holdout_table()
    tail = held[~held["statistic"].isin(["mean", "median"])]
    print("Held-out percentile rows (no fit reads them):")
    print(summary(tail, ["metric", "statistic"]).to_string())
    print(summary(tail, ["metric", "engine_key"]).to_string())
    if argv:
        prm = load_serving_params()
        rows, comps, _ = prepare_rows(inferencemax_rows(argv[0]), prm, include_tails=True)
        pred = predict_rows(rows, comps, param_values(prm))
        rows = rows.assign(log_ratio=np.log(rows["value"].to_numpy(float) / pred))
        print("\nInferenceMAX 2025 (means and medians of TPOT and TTFT fitted; percentiles not):")
        print(summary(rows, ["metric", "statistic"]).to_string())
        print(summary(rows[rows["statistic"] == "p99"], ["metric", "engine_key"]).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
