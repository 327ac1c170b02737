"""Published measurements against the serving model and the roofline bound.

For a measurements frame (``calc.measurements.load_measurements`` columns): the configurations it holds
(one model, accelerator, engine, layout, dtypes and lengths each), the measured points on InferenceX's
axes (output tokens/s per GPU against output tokens/s per user = 1000 / TPOT_ms, one point per run at a
concurrency), the serving model's frontier for a configuration, and a row-by-row table of measured,
predicted (``calc.serving_fit.predict_rows`` with the shipped parameters) and bound
(``calc.measurements.measurement_bound``) values.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .hardware import get_accelerator, with_matmul
from .measurements import measurement_bound
from .models import get_model
from .serving import serving_frontier
from .serving_fit import _FP4, _SPECULATIVE, prepare_rows, predict_rows, row_kv_dtype
from .serving_params import load_serving_params, param_values

#: The columns that make one configuration (a curve over concurrency).
CONFIG_COLUMNS = ("model", "accelerator", "engine", "tp", "pp", "ep", "dp", "n_gpus", "weight_dtype", "kv_dtype",
                  "input_len", "output_len")


def _speculative(notes: pd.Series) -> pd.Series:
    """Whether each row's notes say speculative decoding (the words ``calc.serving_fit.prepare_rows`` leaves out)."""
    return notes.fillna("").astype(str).str.lower().map(lambda t: any(w in t for w in _SPECULATIVE))


def configurations(df: pd.DataFrame) -> pd.DataFrame:
    """The distinct configurations of ``df`` (``CONFIG_COLUMNS``) with ``rows``, the number of rows of each,
    ``points``, the runs that give both of InferenceX's axes (``measured_points``), and ``plain``, the rows
    without speculative decoding (the ones the serving model predicts): configurations with plain rows first,
    then those with points (a configuration of TTFT and TPOT rows alone has nothing to draw on those axes),
    then most rows first."""
    if df.empty:
        return pd.DataFrame(columns=list(CONFIG_COLUMNS) + ["rows", "points", "plain"])
    keys = list(CONFIG_COLUMNS)
    spec = _speculative(df["notes"])
    g = df.fillna({"kv_dtype": ""}).assign(_plain=~spec).groupby(keys, dropna=False).agg(
        rows=("_plain", "size"), plain=("_plain", "sum")).reset_index()
    g["plain"] = g["plain"].astype(int)
    pts = measured_points(df)
    n = pts.groupby(keys, dropna=False).size().rename("points").reset_index() if len(pts) else None
    g = g.merge(n, on=keys, how="left") if n is not None else g.assign(points=0)
    g["points"] = g["points"].fillna(0).astype(int)
    g["_has"] = (g["points"] > 0).astype(int)
    g["_predicted"] = (g["plain"] > 0).astype(int)
    g = g.sort_values(["_predicted", "_has", "rows"], ascending=False, kind="stable").drop(columns=["_has", "_predicted"])
    return g.reset_index(drop=True)


def config_label(c) -> str:
    """'TP8 PP1 EP1 on 8 GPUs, fp8 / KV fp8, 1,024 in / 1,024 out' for a configuration row; ', attention DP8' where
    attention runs data-parallel (dp > 1 with tp below the GPUs of a replica), ', speculative decoding' where no row
    of it is plain (``plain`` of ``configurations``)."""
    kv = c["kv_dtype"] or "unstated (engine default)"
    dp = int(c["dp"]) if "dp" in c and not pd.isna(c["dp"]) else 1
    return (f"TP{c['tp']} PP{c['pp']} EP{c['ep']} on {c['n_gpus']} GPUs"
            + (f", attention DP{dp}" if dp > 1 else "")
            + f", {c['weight_dtype']} / KV {kv}, {int(c['input_len']):,} in / {int(c['output_len']):,} out"
            + (", speculative decoding" if "plain" in c and c["plain"] == 0 else ""))


def measured_points(df: pd.DataFrame) -> pd.DataFrame:
    """One point per run (configuration and concurrency) that gives both axes: output tokens/s per GPU
    (``output_tok_per_s_per_gpu``, or ``output_tok_per_s`` / n_gpus) and tokens/s per user
    (``output_tok_per_s_per_user``, or 1000 / mean or median ``tpot_ms``). Mean statistics first. A run with
    speculative decoding (said in its notes, as ``calc.serving_fit.prepare_rows`` reads them) is a run of its
    own: its axes never pair with a plain run's at the same concurrency.

    Returns:
        DataFrame: CONFIG_COLUMNS, concurrency, source_id, tokens_per_s_per_gpu, tokens_per_s_per_user.
    """
    cols = list(CONFIG_COLUMNS) + ["concurrency", "source_id", "tokens_per_s_per_gpu", "tokens_per_s_per_user"]
    d = df[(df["mode"] == "concurrency") & df["statistic"].isin(["mean", "median"])].copy()
    if d.empty:
        return pd.DataFrame(columns=cols)
    d["kv_dtype"] = d["kv_dtype"].fillna("")
    d["x"] = np.where(d["metric"] == "output_tok_per_s_per_user", d["value"],
                      np.where(d["metric"].isin(["tpot_ms", "itl_ms"]), 1000.0 / d["value"], np.nan))
    d["y"] = np.where(d["metric"] == "output_tok_per_s_per_gpu", d["value"],
                      np.where(d["metric"] == "output_tok_per_s", d["value"] / d["n_gpus"], np.nan))
    d["_mean"] = (d["statistic"] != "mean").astype(int)  # mean before median
    d["_itl"] = (d["metric"] == "itl_ms").astype(int)  # TPOT before ITL
    d = d.sort_values(["_mean", "_itl"], kind="stable")
    d["_spec"] = _speculative(d["notes"])
    keys = list(CONFIG_COLUMNS) + ["concurrency", "source_id", "_spec"]
    x = d.dropna(subset=["x"]).groupby(keys, dropna=False)["x"].first()
    y = d.dropna(subset=["y"]).groupby(keys, dropna=False)["y"].first()
    both = pd.concat([y.rename("tokens_per_s_per_gpu"), x.rename("tokens_per_s_per_user")], axis=1).dropna()
    return both.reset_index()[cols]


def config_frontier(config, concurrencies=None, params: dict | None = None) -> pd.DataFrame:
    """``calc.serving.serving_frontier`` for one configuration row (the fitted rules of the data set: fp4
    weights on Blackwell's fp4 tensor cores, an unstated KV dtype as ``row_kv_dtype``). Per replica of
    (tp, pp, ep); throughput is per GPU, so replicas do not move it.

    Raises:
        ValueError: as ``serving_frontier``.
    """
    model = get_model(config["model"])
    acc = get_accelerator(config["accelerator"])
    if str(config["weight_dtype"]).lower() in _FP4 and "fp4" in acc.peak_flops_per_s:
        acc = with_matmul(acc, "low_precision")
    wd = "nvfp4" if str(config["weight_dtype"]).lower() == "fp4" else str(config["weight_dtype"])
    kv = row_kv_dtype(config["weight_dtype"], config["kv_dtype"])
    return serving_frontier(model, acc, int(config["input_len"]), int(config["output_len"]), concurrencies,
                            int(config["tp"]), int(config["pp"]), int(config["ep"]), wd, kv,
                            engine=str(config["engine"]), params=params)


def compare_rows(df: pd.DataFrame, params: dict | None = None) -> pd.DataFrame:
    """Every row of ``df`` with the serving model's prediction and the roofline bound in its metric's unit.

    Returns:
        DataFrame: id, source_id, metric, statistic, concurrency, value (measured), predicted, bound,
        predicted_over_measured, note (why a row has no prediction or bound).
    """
    prm = params or load_serving_params()
    rows, comps, skipped = prepare_rows(df, prm)
    predicted = {}
    if len(rows):
        values = predict_rows(rows, comps, param_values(prm))
        predicted = dict(zip(rows["id"], values))
    notes = dict(skipped)
    out = []
    for _, r in df.iterrows():
        try:
            bound = measurement_bound(r).bound
        except (ValueError, KeyError) as exc:
            bound, notes[r["id"]] = np.nan, notes.get(r["id"]) or str(exc)
        p = predicted.get(r["id"], np.nan)
        out.append(dict(id=r["id"], source_id=r["source_id"], metric=r["metric"], statistic=r["statistic"],
                        concurrency=r["concurrency"], value=r["value"], predicted=p, bound=bound,
                        predicted_over_measured=p / r["value"] if np.isfinite(p) else np.nan,
                        note=notes.get(r["id"], "")))
    return pd.DataFrame(out, columns=["id", "source_id", "metric", "statistic", "concurrency", "value", "predicted",
                                      "bound", "predicted_over_measured", "note"])
