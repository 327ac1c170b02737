"""The serving model against published measurements, and its speed (printed figures, not a timed test).

Run: python bench/bench_serving.py
Prints (1) the error tables of the estimate before the serving model (the bound's parts over MBU 0.69
and MFU 0.80) and of the serving model, in-sample and cross-validated (each source held out, each
model held out): median |log(measured / predicted)|, share of rows within 25% and within 50%, overall
and by kind, engine, accelerator and model family; (2) the rows the new model misses most; the same figures on
the held-out rows no fit reads (calc/data/serving_holdout.csv), by source, mode and metric; (3) the
time of a 256-point throughput-per-GPU vs tokens/s-per-user frontier with the serving model beside the
lower-bound sweep of the same batches. Target for (3): under 10 ms.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import calc  # noqa: E402
from calc.serving import serving_frontier  # noqa: E402
from calc.serving_fit import calibrate, error_summary, error_tables, holdout_table, read_measurements  # noqa: E402
from timing import median_ms  # noqa: E402


def frontier_timings():
    m, a = calc.get_model("llama-3.1-70b"), calc.get_accelerator("h100-sxm")
    conc = np.geomspace(1, 1024, 256)

    def serving():
        serving_frontier(m, a, 1000, 1000, concurrencies=conc, tp=8, weight_dtype="fp8", kv_dtype="fp8")

    def bound():
        calc.decode_sweep(m, a, 1500, batches=np.unique(np.round(conc)).astype(int), weight_dtype="fp8",
                          kv_dtype="fp8", tp=8)

    return [("serving-model frontier, 256 concurrencies (Llama-3.1-70B fp8, TP8 H100, 1000/1000)", serving),
            ("lower-bound decode sweep, same batches (calc.decode_sweep, TP8)", bound)]


def main():
    df = read_measurements()
    fitted, table = calibrate(df)
    pd.set_option("display.width", 160)
    print(f"{len(table)} rows from {table['source_id'].nunique()} sources "
          f"({fitted['validation']['skipped_rows']} skipped: p90/p99 statistics or rows the model cannot take)")
    for title, t in error_tables(table).items():
        print(f"\n== {title} ==")
        print(t.to_string(index=False))
    worst = table.assign(miss=np.abs(table["log_ratio"])).sort_values("miss", ascending=False).head(8)
    print("\n== largest in-sample misses (measured / predicted) ==")
    print(worst.assign(ratio=np.exp(worst["log_ratio"]), old_ratio=np.exp(worst["log_ratio_old"]))
          [["id", "metric", "measured", "predicted", "ratio", "old_ratio"]].to_string(index=False))
    held, skipped = holdout_table(fitted)
    print(f"\n== held-out rows no fit reads (calc/data/serving_holdout.csv): {len(held)} predicted, "
          f"{len(skipped)} skipped ==")
    print(pd.DataFrame([dict(group="all", **error_summary(held["log_ratio"]))]
                       + [dict(group=" / ".join(map(str, g)), **error_summary(t["log_ratio"]))
                          for g, t in held.groupby(["source_id", "mode", "metric"])]).to_string(index=False))
    print(f"\n{'benchmark':<90} {'median ms':>10} {'min ms':>8}")
    for label, fn in frontier_timings():
        med, best = median_ms(fn, repeat=30)
        print(f"{label:<90} {med:>10.2f} {best:>8.2f}")


if __name__ == "__main__":
    main()
