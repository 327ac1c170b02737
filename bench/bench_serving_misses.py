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
law) and the estimate's TPOT at that batch beside its TPOT at the run's rate; (7) on those runs, the share of the
TPOT and TTFT rows within 25% under the stored edge of the limits (the shares of the row's engine's tuned runs) and
under rules tried beside it (every tuned run's shares whatever the engine; the edge engine's own means; an edge at the shares of the runs each limit bound; TTFT plus half a decode step), and that half step on
the fitted rows' TTFT at a rate; (8) on the held-out rows of engine and weight-format pairs the calibration read thinly,
the share inside the estimate's range, the engine's cross-validated one and one widened by the other sources' such
rows; (9) on every held-out mean and median, whether the measurement is no slower than the high end of the
estimate's range (a latency at or below its top, a throughput at or above its bottom or the latency top's reciprocal
where lower: what a capacity plan sized at that end, ``calc.planning.capacity_plan(..., timing="serving_high")``,
assumes), under the engine's cross-validated range and under that range widened for the row's thinly covered traits by the other held-out sources' rows of each.
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
from calc.serving import TUNED_RUNS_PATH, edge_shares, edge_speed, tuned_means  # noqa: E402
from calc.serving_fit import (HOLDOUT_PATH, LATENCY_METRICS, edge_solver, holdout_table, point_costs,  # noqa: E402
                              predict_rows, prepare_rows, prepared_limits, read_measurements)
from calc.models import get_model  # noqa: E402
from calc.serving_params import load_serving_params, param_values, thin_format, thin_traits  # noqa: E402

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


def binding_shares(bound: bool = True) -> dict:
    """Over the tuned runs (``calc.serving.TUNED_RUNS_PATH``), a run's binding limit is the one its 99th percentile
    sat nearer (p99 / limit the larger): {"tpot_s", "ttft_s"}, the median mean / limit of the runs each limit bound
    (``bound``), or of those it did not."""
    runs = pd.read_csv(TUNED_RUNS_PATH)
    ttft_binds = runs["ttft_p99_ms"] / runs["ttft_limit_ms"] > runs["tpot_p99_ms"] / runs["tpot_limit_ms"]
    binds = {"tpot": ~ttft_binds, "ttft": ttft_binds}
    return {f"{m}_s": float((runs[f"{m}_mean_ms"] / runs[f"{m}_limit_ms"])[binds[m] if bound else ~binds[m]].median())
            for m in binds}


def edge_rules() -> pd.DataFrame:
    """(7): on the held-out runs at a rate whose notes state their limits, the share of the TPOT and TTFT rows whose
    estimate lies within 25% of the measurement under the stored rule (``edge_speed`` at ``edge_shares`` of the row's
    engine, the medians of the tuned runs it served where they are enough, else of every run; the means then by
    ``tuned_means``) and under rules tried beside it: every tuned run's medians whatever the engine ("every run's
    shares"); the edge engine's own means ("own means"); the edge where a limit reaches the share of the runs it bound (``binding_shares``), both means
    then at every run's shares ("binding edge"), the binding mean at its binding share and the other the engine's
    own ("binding mean only"), or the other at the share of the runs it did not bind ("binding and free shares");
    and the engine's own TTFT plus half a decode step ("TTFT + half a step"). Returns one row per metric: n and each
    rule's share."""
    params = load_serving_params()
    values = param_values(params)
    rows, comps, _ = prepare_rows(load_measurements(HOLDOUT_PATH, sources=load_sources()), params)
    costs, graphs = point_costs(rows, comps, values)
    first = np.concatenate([[0], np.cumsum(rows["npts"].to_numpy(int))[:-1]])
    bound, free, every = binding_shares(), binding_shares(bound=False), edge_shares()
    out = []
    for j in np.flatnonzero(np.isfinite(rows["limit_tpot_s"].to_numpy(float))):
        r = rows.iloc[j]
        if r.metric not in ("tpot_ms", "ttft_ms"):
            continue
        limits = prepared_limits(r)
        at, times = edge_solver(r, comps, values, costs, graphs, int(first[j]), limits)
        q_thr, q_lat = (float(r.q_thr_low), float(r.q_thr_high)), (float(r.q_lat_low), float(r.q_lat_high))
        m = r.metric[:4]
        own = edge_shares(str(r.engine_key))
        k, _, capped = edge_speed(times, limits, q_thr, shares=own)
        edge = at(k)[0]
        k_e, _, capped_e = edge_speed(times, limits, q_thr, shares=every)
        k_b, _, capped_b = edge_speed(times, limits, q_thr, shares=bound)
        at_b = at(k_b)[0]
        binds = max(("tpot_s", "ttft_s"), key=lambda x: at_b[f"{x[:4]}_estimate"] / (bound[x] * limits[x]))
        other = "ttft_s" if binds == "tpot_s" else "tpot_s"
        rules = {"stored": tuned_means(edge, limits, q_lat, capped, shares=own)[0],
                 "every run's shares": tuned_means(at(k_e)[0], limits, q_lat, capped_e, shares=every)[0],
                 "own means": edge,
                 "binding edge": tuned_means(at_b, limits, q_lat, capped_b)[0],
                 "binding mean only": tuned_means(at_b, limits, q_lat, capped_b, shares={binds: bound[binds]})[0],
                 "binding and free shares": tuned_means(at_b, limits, q_lat, capped_b,
                                                        shares={binds: bound[binds], other: free[other]})[0]}
        value = {name: t[f"{m}_estimate"] for name, t in rules.items()}
        value["TTFT + half a step"] = (edge["ttft_estimate"] + 0.5 * edge["tpot_estimate"] if m == "ttft"
                                       else value["stored"])
        # the criterion: the estimate within 25% of the measurement
        out.append(dict({"metric": r.metric}, **{name: abs(v * 1e3 / r.value - 1.0) <= 0.25
                                                 for name, v in value.items()}))
    t = pd.DataFrame(out)
    return t.groupby("metric").agg(n=("stored", "size"), **{name: (name, "mean") for name in t.columns[1:]}).round(3)


def half_step_on_fitted() -> pd.DataFrame:
    """(7, continued): the fitted rows' TTFT at a rate (open loops, no limits stated) within 25% as predicted, and
    with half a decode step (the same run's predicted TPOT or ITL) added, as the held-out runs' "TTFT + half a step"
    rule would add it."""
    rows = residuals()
    rate = rows[rows["mode"] == "rate"].copy()
    rate["run"] = rate["id"].str.replace(r"[-_](ttft|tpot|itl|e2e)[-_]?ms.*$", "", regex=True)
    pred = rate["value"] / np.exp(rate["log_ratio"])
    step = pred[rate["metric"].isin(["tpot_ms", "itl_ms"])].groupby(rate["run"]).first()
    ttft = rate[rate["metric"] == "ttft_ms"].assign(pred=pred, step=lambda d: d["run"].map(step)).dropna(subset=["step"])
    return pd.DataFrame([{"added": f"{a} step", "n": len(ttft), "within_25": round(float(
        (np.abs((ttft["pred"] + a * ttft["step"]) / ttft["value"] - 1.0) <= 0.25).mean()), 3)} for a in (0.0, 0.5)])


def thin_pair_ranges() -> pd.DataFrame:
    """(8) The held-out means and medians of engine and weight-format pairs the calibration read thinly
    (``calc.serving_params.thin_format``: vLLM with fp8-block weights, SGLang with INT4...): the share whose
    measurement lies inside the estimate's range, under the engine's cross-validated range alone and under that range
    widened by the 10th-90th percentile of the log ratios of the other held-out sources' such rows (each source
    left out of the spread in turn, so that no row widens its own range), by kind (latency, throughput)."""
    params = load_serving_params()
    held = holdout_table(params)[0]
    rows = held[held["statistic"].isin(["mean", "median"])].copy()
    rows = rows[[thin_format(params, e, f) for e, f in zip(rows["engine_key"], rows["weight_dtype"])]]
    rows["kind"] = np.where(rows["metric"].isin(list(LATENCY_METRICS)), "latency", "throughput")
    by_engine = params["validation"]["range_by_engine"]
    out = []
    for source, own in rows.groupby("source_id"):
        rest = rows[rows["source_id"] != source]
        for (kind, engine), g in own.groupby(["kind", "engine_key"]):
            low, high = by_engine[engine][kind]
            low, high = min(low, 0.0), max(high, 0.0)
            r = rest.loc[rest["kind"] == kind, "log_ratio"]
            wide_low, wide_high = min(low, float(np.quantile(r, 0.1))), max(high, float(np.quantile(r, 0.9)))
            out.append({"source_id": source, "kind": kind, "engine": engine, "n": len(g),
                        "inside_engine_range": int(g["log_ratio"].between(low, high).sum()),
                        "inside_widened_range": int(g["log_ratio"].between(wide_low, wide_high).sum())})
    table = pd.DataFrame(out)
    total = table[["n", "inside_engine_range", "inside_widened_range"]].sum()
    print(f"{int(total['n'])} rows: inside the engine's range {total['inside_engine_range'] / total['n']:.1%}, "
          f"inside the widened range {total['inside_widened_range'] / total['n']:.1%}")
    return table


def high_end_coverage() -> pd.DataFrame:
    """(9) The held-out means and medians no slower than the high end of their estimate's range, the end a capacity
    plan sized with ``timing="serving_high"`` assumes: log(measured / predicted) at or below the top q of the latency
    range for a latency; for a throughput, at or above the bottom of the throughput range or -q where that is lower
    (``calc.planning.high_end_per_gpu``). Under the engine's cross-validated ranges alone
    (``validation.range_by_engine``; no held-out row set them), and under them widened for the row's thinly covered
    traits (``calc.serving_params.thin_traits``: architecture and engine / weight format) to the 10th-90th
    percentiles of the other held-out sources' rows of each trait and kind (the row's own source left out of the
    spread, as section 8 does, so that no row widens its own range). By kind and engine, and in all."""
    params = load_serving_params()
    held = holdout_table(params)[0]
    rows = held[held["statistic"].isin(["mean", "median"])].copy().reset_index(drop=True)
    rows["kind"] = np.where(rows["metric"].isin(list(LATENCY_METRICS)), "latency", "throughput")
    val = params["validation"]

    def engine_end(engine, kind, end):
        v = val["range_by_engine"].get(engine, {}).get(kind) or val["range"][kind]
        return min(float(v[0]), 0.0) if end == 0 else max(float(v[1]), 0.0)

    setups = {key: thin_traits(params, get_model(key[0]), key[1], key[2])
              for key in set(zip(rows["model"], rows["engine_key"], rows["weight_dtype"]))}
    traits = [setups[key] for key in zip(rows["model"], rows["engine_key"], rows["weight_dtype"])]
    has = {t: np.array([t in ts for ts in traits]) for t in {t for ts in traits for t in ts}}
    engines = rows["engine_key"].to_numpy()
    lat_high = np.array([engine_end(e, "latency", 1) for e in engines])      # top of each row's latency range
    thr_low = np.array([engine_end(e, "throughput", 0) for e in engines])    # bottom of its throughput range
    wide_lat_high, wide_thr_low = lat_high.copy(), thr_low.copy()
    log_ratio, source, kind = rows["log_ratio"].to_numpy(float), rows["source_id"].to_numpy(), rows["kind"].to_numpy()
    for s in np.unique(source):
        own = source == s
        for t, member in has.items():
            hit = own & member
            lat = log_ratio[member & ~own & (kind == "latency")]
            thr = log_ratio[member & ~own & (kind == "throughput")]
            if hit.any() and len(lat) >= 10:
                wide_lat_high[hit] = np.maximum(wide_lat_high[hit], np.quantile(lat, 0.9))
            if hit.any() and len(thr) >= 10:
                wide_thr_low[hit] = np.minimum(wide_thr_low[hit], np.quantile(thr, 0.1))
    latency = kind == "latency"
    rows["at_or_below_engine_end"] = np.where(latency, log_ratio <= lat_high,
                                              log_ratio >= np.minimum(thr_low, -lat_high))
    rows["at_or_below_widened_end"] = np.where(latency, log_ratio <= wide_lat_high,
                                               log_ratio >= np.minimum(wide_thr_low, -wide_lat_high))
    cols = ["at_or_below_engine_end", "at_or_below_widened_end"]
    out = rows.groupby(["kind", "engine_key"])[cols].mean()
    out.insert(0, "n", rows.groupby(["kind", "engine_key"]).size())
    whole = rows.groupby("engine_key")[cols].mean()
    whole.insert(0, "n", rows.groupby("engine_key").size())
    whole.index = pd.MultiIndex.from_product([["both"], whole.index])
    total = pd.DataFrame([[len(rows), *rows[cols].mean()]], columns=["n", *cols],
                         index=pd.MultiIndex.from_tuples([("all", "all")]))
    return pd.concat([out, whole, total]).astype({"n": int}).round(3)


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
    every, bound, free = edge_shares(), binding_shares(), binding_shares(bound=False)
    engines = "; ".join(f"{e} TPOT {sh['tpot_s']:.3f} / TTFT {sh['ttft_s']:.3f} ({sh['n']} runs)"
                        for e, sh in ((e, edge_shares(e)) for e in ("trtllm", "vllm")))
    print("\n== (7) held-out runs with limits: share of TPOT and TTFT rows whose estimate lies within 25% of the "
          f"measurement under the stored rule (edge and means at the shares of the tuned runs of the row's engine: "
          f"{engines}; every run's, TPOT {every['tpot_s']:.3f} / TTFT {every['ttft_s']:.3f}, for an engine with "
          "fewer) and the rules tried beside it (shares of the runs each limit "
          f"bound: {bound['tpot_s']:.3f} / {bound['ttft_s']:.3f}; of those it did not: {free['tpot_s']:.3f} / "
          f"{free['ttft_s']:.3f}) ==")
    print(edge_rules().to_string())
    print("the fitted rows' TTFT at a rate with half a step added:")
    print(half_step_on_fitted().to_string(index=False))
    print("\n== (8) held-out rows of engine and weight-format pairs the calibration read thinly: inside the estimate's "
          "range, the engine's cross-validated one and one widened by the other sources' such rows ==")
    print(thin_pair_ranges().to_string(index=False))
    print("\n== (9) held-out means and medians no slower than the high end of the estimate's range (what a plan sized "
          "at that end assumes), under the engine's cross-validated range and under it widened for thin traits by the "
          "other held-out sources ==")
    print(high_end_coverage().to_string())


if __name__ == "__main__":
    main()
