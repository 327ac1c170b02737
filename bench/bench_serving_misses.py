"""Where the serving model misses the published measurements (printed figures, not a timed test).

Run: python bench/bench_serving_misses.py
Predicts every row of calc/data/serving_measurements.csv that the serving model takes (``prepare_rows``) with the
stored parameters (in-sample: these rows fitted them) and prints, for the rows of each group, their count, the
share within 25% and the median and quartiles of log(measured / predicted) (positive: the engine was slower than
the estimate):
(1) by metric and concurrency band; (2) TTFT by prompt length and concurrency band, the closed loops only;
(3) by metric, accelerator family and prompt length (long prompts: 4,096 tokens or more); (4) the groups of at
least 10 rows (source, model, weight format, accelerator, engine) with the lowest share within 25%; (5) on the
held-out MLPerf runs at a rate whose notes state their 99th-percentile limits (LoadGen's Server and Interactive
scenarios), the measured and the estimated mean TPOT and TTFT as shares of those limits: a submitter raises the rate
until a limit binds, so the run sits at the edge of the engine's capacity, where an estimate's small error in
capacity becomes a large one in the times; (6) on those runs, the decode batch their measured means imply (Little's
law) and the estimate's TPOT at that batch beside its TPOT at the run's rate.
The leave-one-source-out figures are bench/bench_serving.py's (about 40 minutes); these take a few seconds and
point at the mechanisms to look at next.
"""
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from calc.measurements import load_measurements, load_sources  # noqa: E402
from calc.serving_fit import HOLDOUT_PATH, holdout_table, predict_rows, prepare_rows, read_measurements  # noqa: E402
from calc.serving_params import load_serving_params, param_values  # noqa: E402

#: Concurrency bands (clients of a closed loop; rate and offline rows have none and take their mode's name).
CONCURRENCY_BANDS = [0, 1, 8, 32, 64, 128, np.inf]
BAND_LABELS = ["C 1", "C 2-8", "C 9-32", "C 33-64", "C 65-128", "C > 128"]


def summary(log_ratio: pd.Series) -> pd.Series:
    """n, share within 25% (|measured / predicted - 1| <= 0.25, the issue's criterion), median and quartiles of
    log(measured / predicted) of one group."""
    r = log_ratio.dropna()
    within = (np.abs(np.exp(-r) - 1.0) <= 0.25).mean() if len(r) else np.nan
    return pd.Series({"n": len(r), "within_25": within, "median": r.median(), "q25": r.quantile(0.25),
                      "q75": r.quantile(0.75)})


def table(rows: pd.DataFrame, by: list) -> pd.DataFrame:
    """``summary`` of rows' ``log_ratio`` per group of ``by``, rounded for printing."""
    return rows.groupby(by, observed=True)["log_ratio"].apply(summary).unstack().astype(
        {"n": int}).round({"within_25": 3, "median": 2, "q25": 2, "q75": 2})


def residuals() -> pd.DataFrame:
    """The prepared measurement rows with ``log_ratio`` = log(measured / predicted) under the stored parameters,
    a concurrency band, a prompt-length band and the accelerator family."""
    params = load_serving_params()
    rows, comps, _ = prepare_rows(read_measurements(), params)
    rows = rows.copy()
    rows["log_ratio"] = np.log(rows["value"].to_numpy(float) / predict_rows(rows, comps, param_values(params)))
    conc = pd.to_numeric(rows["concurrency"], errors="coerce")
    band = pd.cut(conc, CONCURRENCY_BANDS, labels=BAND_LABELS).astype(object).where(conc.notna(), rows["mode"])
    rows["concurrency_band"] = pd.Categorical(band, categories=BAND_LABELS + ["rate", "offline"], ordered=True)
    rows["prompt"] = np.where(rows["input_len"] >= 4096, "prompt >= 4,096", "prompt < 4,096")
    members = params.get("device_families", {}).get("members", {})
    family = {a: f for f, accs in members.items() for a in accs}
    rows["family"] = rows["accelerator"].map(family).fillna(params.get("device_families", {}).get("reference", "?"))
    return rows


#: How a held-out MLPerf row's notes state its latency limits (the run's summary's test parameters).
LIMITS = r"latency limits TTFT (\d+) ms and TPOT (\d+) ms at the 99th percentile"


def limit_shares() -> pd.DataFrame:
    """(5): per held-out source and metric (TTFT, TPOT; the means of runs at a rate whose notes state ``LIMITS``),
    the number of runs and the median, least and largest of measured / limit and of estimated / limit."""
    table, _ = holdout_table()
    notes = load_measurements(HOLDOUT_PATH, sources=load_sources()).set_index("id")["notes"]
    t = table[(table["mode"] == "rate") & (table["statistic"] == "mean")
              & table["metric"].isin(["ttft_ms", "tpot_ms"])].copy()
    lim = notes.reindex(t["id"]).str.extract(LIMITS).astype(float).to_numpy()
    t["limit_ms"] = np.where(t["metric"] == "ttft_ms", lim[:, 0], lim[:, 1])
    t = t[t["limit_ms"].notna()]
    t["measured_share"] = t["measured"] / t["limit_ms"]
    t["estimated_share"] = t["predicted"] / t["limit_ms"]
    return t.groupby(["source_id", "metric"]).agg(
        n=("measured_share", "size"), measured_median=("measured_share", "median"),
        measured_min=("measured_share", "min"), measured_max=("measured_share", "max"),
        estimated_median=("estimated_share", "median"), estimated_min=("estimated_share", "min"),
        estimated_max=("estimated_share", "max")).round(2)


def littles_law_batch() -> pd.DataFrame:
    """(6): per held-out source, the runs at a rate with a mean TTFT and a mean TPOT: the decode batch the measured
    means imply by Little's law, ``B = rate per replica x (TTFT + (O - 1) x TPOT)``, the estimate's TPOT of a
    closed loop of that many clients (so at about that batch, the row's engine, settings and release otherwise), and
    the estimate's TPOT at the row's rate; the medians of log(measured / each). The first separates the decode
    step's error at the engine's own batch from the rate's fixed point ``B = lambda x e2e(B)``, which at a latency
    limit's edge turns a small error in a step into a large one in the batch."""
    params, values = load_serving_params(), param_values(load_serving_params())
    df = load_measurements(HOLDOUT_PATH, sources=load_sources())
    rate = df[(df["mode"] == "rate") & (df["statistic"] == "mean")]
    run = rate["id"].str.replace(r"-(ttft|tpot)-ms-mean$", "", regex=True)
    ttft = rate[rate["metric"] == "ttft_ms"].set_index(run[rate["metric"] == "ttft_ms"])
    tpot = rate[rate["metric"] == "tpot_ms"].set_index(run[rate["metric"] == "tpot_ms"])
    out = []
    for key in ttft.index.intersection(tpot.index):
        a, b = ttft.loc[key], tpot.loc[key]
        replicas = max(1, int(b.n_gpus) // (max(int(b.tp), int(b.ep)) * int(b.pp)))
        batch = b.request_rate_per_s / replicas * (a.value + (b.output_len - 1) * b.value) / 1e3
        closed = b.copy()
        # a row's concurrency counts the clients of every replica
        closed["mode"], closed["request_rate_per_s"] = "concurrency", np.nan
        closed["concurrency"] = max(1, round(batch * replicas))
        closed["len_dist"] = "varied (a closed loop's steady state)"
        at_batch, at_rate = (prepare_rows(pd.DataFrame([r]).reset_index(drop=True), params) for r in (closed, b))
        if at_batch[0].empty or at_rate[0].empty:
            continue
        out.append({"source_id": b.source_id, "batch": batch, "log_at_batch": math.log(
            b.value / predict_rows(at_batch[0], at_batch[1], values)[0]), "log_at_rate": math.log(
            b.value / predict_rows(at_rate[0], at_rate[1], values)[0])})
    t = pd.DataFrame(out)
    return t.groupby("source_id").agg(n=("batch", "size"), batch_median=("batch", "median"),
                                      tpot_at_batch_median=("log_at_batch", "median"),
                                      tpot_at_rate_median=("log_at_rate", "median")).round(2)


def main():
    rows = residuals()
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 200)
    print(f"{len(rows)} rows, in-sample, stored parameters; log ratio = log(measured / predicted)\n")
    print("== (1) by metric and concurrency band ==")
    print(table(rows, ["metric", "concurrency_band"]).to_string())
    closed = rows[(rows["metric"] == "ttft_ms") & (rows["mode"] == "concurrency")]
    print("\n== (2) TTFT of closed loops, by prompt length and concurrency band ==")
    print(table(closed, ["prompt", "concurrency_band"]).to_string())
    print("\n== (3) by metric, accelerator family and prompt length ==")
    lat = rows[rows["metric"].isin(["ttft_ms", "tpot_ms"])]
    print(table(lat, ["metric", "family", "prompt"]).to_string())
    groups = table(rows, ["source_id", "model", "weight_dtype", "accelerator", "engine", "metric"])
    worst = groups[groups["n"] >= 10].sort_values("within_25").head(25)
    print("\n== (4) the 25 groups of at least 10 rows with the lowest share within 25% ==")
    print(worst.to_string())
    print("\n== (5) held-out MLPerf runs at a rate: mean TTFT and TPOT as shares of the run's p99 limits ==")
    print(limit_shares().to_string())
    print("\n== (6) held-out runs at a rate: the decode batch of Little's law from the measured means; median log(measured"
          " / estimated TPOT) at that batch (a closed loop) and at the run's rate ==")
    print(littles_law_batch().to_string())


if __name__ == "__main__":
    main()
