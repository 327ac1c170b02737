"""The serving model against InferenceX results it was not fitted on (printed figures, not a timed test).

Run: python bench/bench_inferencex.py [--date YYYY-MM-DD] RESULTS.json [MORE.json ...]
RESULTS: InferenceX result files of any shape ``calc.inferencex.parse_inferencex`` reads (aggregated
``agg_*.json`` results, the dashboard's benchmark records, runner results). The dashboard's data are GPL-3.0
since 2026-03-18, so the project cites them (calc/data/serving_cited.csv) and does not ship their values: load
your own copy here. Prints the share of rows within 25% and 50% (|predicted / measured - 1|,
``calc.serving_fit.error_summary``) and the median of measured / predicted (``median_ratio``: above 1, the
engine was slower than the estimate), overall, by metric and by accelerator,
engine and model, with the stored parameters (calc/data/serving_params.json). Rows with speculative decoding,
multi-node or disaggregated runs are left out, as the fit leaves them out. ``--date``: the run date of files whose
objects state none (InferenceMAX's aggregated results of 2025: the date of the commit that added them), which dates
their engines (``calc.inferencex.parse_inferencex``'s ``run_date``).
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from calc.inferencex import parse_inferencex  # noqa: E402
from calc.serving_fit import FIT_STATISTICS, error_summary, prepare_rows, predict_rows, read_measurements  # noqa: E402
from calc.serving_params import load_serving_params, param_values  # noqa: E402


def evaluate(frames) -> pd.DataFrame:
    """Rows of the InferenceX frames with measured, predicted and log_ratio (measured / predicted)."""
    df = pd.concat(frames, ignore_index=True)
    df = df[df["statistic"].isin(FIT_STATISTICS)]
    prm = load_serving_params()
    rows, comps, skipped = prepare_rows(df, prm)
    print(f"{len(rows)} rows predicted, {len(skipped)} left out "
          f"({pd.Series([r.split(' (')[0] for _, r in skipped]).value_counts().to_dict()})")
    rows["predicted"] = predict_rows(rows, comps, param_values(prm))
    rows["log_ratio"] = np.log(rows["value"] / rows["predicted"])
    return rows


def in_data_set(rows: pd.DataFrame) -> pd.Series:
    """True where a row's model, accelerator and metric and its value to 0.01 also stand in the stored data set
    (``calc.serving_fit.read_measurements``): a run the fit has seen, under other lengths (the data set may hold a
    run's nominal lengths where InferenceX's records hold the drawn means) or another engine name."""
    seen = read_measurements()
    key = ["model", "accelerator", "metric"]

    def keys(df):
        return pd.MultiIndex.from_frame(df[key].astype(str).assign(value=df["value"].astype(float).round(2).astype(str)))

    return pd.Series(keys(rows).isin(keys(seen)), index=rows.index)


def table(rows: pd.DataFrame, by) -> pd.DataFrame:
    """error_summary and the median measured / predicted of each group of ``by``."""
    out = []
    for key, g in rows.groupby(by):
        s = error_summary(g["log_ratio"])
        out.append(dict(zip(by, key if isinstance(key, tuple) else (key,)), n=s["n"], within_25=s["within_25"],
                        within_50=s["within_50"], median_ratio=round(float(np.exp(np.median(g["log_ratio"]))), 3)))
    return pd.DataFrame(out)


def main(paths) -> int:
    if not paths or any(p in ("-h", "--help") for p in paths):
        print(__doc__)
        return 0 if paths else 2
    run_date = None
    if paths[0] == "--date":
        if len(paths) < 3:
            print("--date takes a date (YYYY-MM-DD) and is followed by the result files", file=sys.stderr)
            return 2
        run_date, paths = paths[1], paths[2:]
    frames = []
    for p in paths:
        try:
            df, skipped = parse_inferencex(Path(p).read_bytes(), name=Path(p).name, source_id="inferencex-local",
                                           run_date=run_date)
        except (OSError, ValueError) as exc:
            print(f"{p}: cannot be read: {exc}", file=sys.stderr)
            return 2
        print(f"{p}: {len(df)} rows, {len(skipped)} objects skipped")
        frames.append(df)
    rows = evaluate(frames)
    rows["in_data_set"] = in_data_set(rows)
    s = error_summary(rows["log_ratio"])
    print(f"\nall: {s['n']} rows, within 25% {s['within_25']:.1%}, within 50% {s['within_50']:.1%}, "
          f"median |log ratio| {s['median_abs_log']}")
    unseen = rows[~rows["in_data_set"]]
    u = error_summary(unseen["log_ratio"]) if len(unseen) else {"n": 0, "within_25": float("nan"), "within_50": float("nan")}
    print(f"unseen: {u['n']} rows whose measured value is not in the stored data set, within 25% "
          f"{u['within_25']:.1%}, within 50% {u['within_50']:.1%} ({int(rows['in_data_set'].sum())} rows carry a "
          "value the fit has seen: the data set holds InferenceMAX's official results of 2025, and aiconfigurator's "
          "silicon sample some InferenceX runs)")
    pd.set_option("display.width", 160)
    for by in (["metric"], ["accelerator", "engine", "model"]):
        print()
        print(table(rows, by).to_string(index=False))
    print("\nunseen rows only:")
    for by in (["metric"],):
        print(table(unseen, by).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
