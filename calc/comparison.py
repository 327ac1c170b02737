"""Published measurements against the serving model and the roofline bound.

For a measurements frame (``calc.measurements.load_measurements`` columns): the configurations it holds
(one model, accelerator, engine, layout, dtypes and lengths each), the measured points on InferenceX's
axes (output tokens/s per GPU against output tokens/s per user = 1000 / TPOT_ms, one point per run at a
concurrency), the serving model's frontier for a configuration, and a row-by-row table of measured,
predicted (``calc.serving_fit.predict_rows`` with the shipped parameters) and bound
(``calc.measurements.measurement_bound``) values, and one row's estimate with its breakdown (``row_estimate``).
"""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd

from .hardware import get_accelerator
from .measurements import PUBLISHED_MODEL, measurement_bound
from .models import get_model
from .number_text import fmt_number, join_and
from .serving import (ServingEstimate, TimeBreakdown, below_limits, edge_of_limits, estimate_from_arrays, frontier_concurrencies,
                      pile_up_words, rate_range, scheduling_notices, serving_frontier)
from .serving_terms import engine_matmul
from .serving_fit import (_STATIC, _grid_points, checkpoint_kv_scales, prepare_rows, predict_rows, prepared_limits,
                          itl_tokens, row_kv_dtype, row_points, speculative_notes, stated_concurrency,
                          with_run_slot_wait)
from .speculative_serving import speculative_from_notes, speculative_settings
from .serving_params import architecture_notice, error_quantiles, load_serving_params, param_values

#: The columns that make one configuration (a curve over concurrency).
CONFIG_COLUMNS = ("model", "accelerator", "engine", "tp", "pp", "ep", "dp", "n_gpus", "weight_dtype", "kv_dtype",
                  "input_len", "output_len")


def _speculative(notes: pd.Series) -> pd.Series:
    """Whether each row's notes say speculative decoding (``calc.speculative_serving.speculative_notes``: the rows the fit leaves
    out and the comparison predicts with their draft)."""
    return notes.fillna("").astype(str).map(speculative_notes)


#: The metrics of a throughput run that the frontier chart draws at the estimate's tokens/s per user when the run
#: has no latency partner (per GPU, or for the whole deployment, divided by its GPUs).
THROUGHPUT_METRICS = ("output_tok_per_s_per_gpu", "output_tok_per_s")
#: Each metric's name in a sentence ("These 6 rows measure TTFT and TPOT").
METRIC_WORDS = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "itl_ms": "ITL", "e2e_ms": "end-to-end latency",
                "output_tok_per_s": "output tokens/s", "output_tok_per_s_per_gpu": "output tokens/s per GPU",
                "output_tok_per_s_per_user": "tokens/s per user",
                "total_tok_per_s_per_gpu": "input + output tokens/s per GPU", "requests_per_s": "requests/s"}


def row_concurrency(df: pd.DataFrame) -> pd.Series:
    """Each row's concurrency as the serving model reads it (``calc.serving_fit.stated_concurrency``): the column's,
    else, for an offline run whose notes state its N requests, N (all sent at once); NaN for an offline run of
    unstated size and a rate. Index: ``df``'s."""
    notes = df["notes"] if "notes" in df else pd.Series("", index=df.index)
    return pd.Series([stated_concurrency(m, c, n) for m, c, n in zip(df["mode"], df["concurrency"], notes)],
                     index=df.index, dtype="float64")


def throughput_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``df`` that put a throughput on the frontier chart's y axis (``THROUGHPUT_METRICS``, a mean or
    median, at a concurrency or offline), whether or not a latency row pairs with them."""
    return df[df["metric"].isin(THROUGHPUT_METRICS) & df["statistic"].isin(["mean", "median"])
              & df["mode"].isin(["concurrency", "offline"])]


def configurations(df: pd.DataFrame) -> pd.DataFrame:
    """The distinct configurations of ``df`` (``CONFIG_COLUMNS``) with ``rows``, the number of rows of each,
    ``points``, the runs that give both of InferenceX's axes (``measured_points``), ``throughput``, the rows the
    frontier chart draws (``throughput_rows``, with or without a latency partner), ``plain``, the rows
    without speculative decoding, ``kv_scales``, whether a row's notes name a checkpoint with FP8 cache scales
    (``calc.serving_fit.checkpoint_kv_scales``: an unstated cache is then FP8 on every engine), and
    ``speculative``, the draft (JSON text of
    ``calc.speculative_serving.speculative_from_notes``) of a configuration whose every row decodes speculatively,
    which its curve takes (``config_frontier``), else "". Order: configurations with plain rows first, then those with points, then those with a throughput run to draw (a configuration of TTFT and TPOT
    rows alone has nothing to draw on those axes), then most rows first."""
    if df.empty:
        return pd.DataFrame(columns=list(CONFIG_COLUMNS) + ["rows", "points", "throughput", "plain", "speculative",
                                                            "kv_scales"])
    keys = list(CONFIG_COLUMNS)
    spec = _speculative(df["notes"])
    scales = df["notes"].map(checkpoint_kv_scales) if "notes" in df else pd.Series(False, index=df.index)
    g = df.fillna({"kv_dtype": ""}).assign(_plain=~spec, _scales=scales).groupby(keys, dropna=False).agg(
        rows=("_plain", "size"), plain=("_plain", "sum"), kv_scales=("_scales", "max")).reset_index()
    g["plain"] = g["plain"].astype(int)
    g["kv_scales"] = g["kv_scales"].astype(bool)
    # a configuration whose every row decodes speculatively: its curve takes the draft settings of its first row
    # (``calc.speculative_serving.speculative_from_notes``), as JSON text (a configuration row stays hashable)
    first_spec = df.fillna({"kv_dtype": ""})[spec].groupby(keys, dropna=False)["notes"].first()
    g["speculative"] = [json.dumps(speculative_from_notes(first_spec.get(tuple(r), "")))
                        if r_plain == 0 and tuple(r) in first_spec.index else ""
                        for r, r_plain in zip(g[keys].itertuples(index=False, name=None), g["plain"])]
    for name, part in (("points", measured_points(df)), ("throughput", throughput_rows(df).fillna({"kv_dtype": ""}))):
        n = part.groupby(keys, dropna=False).size().rename(name).reset_index() if len(part) else None
        g = g.merge(n, on=keys, how="left") if n is not None else g.assign(**{name: 0})
        g[name] = g[name].fillna(0).astype(int)
    g["_has"] = (g["points"] > 0).astype(int)
    g["_drawn"] = (g["throughput"] > 0).astype(int)
    g["_predicted"] = (g["plain"] > 0).astype(int)
    g = g.sort_values(["_predicted", "_has", "_drawn", "rows"], ascending=False, kind="stable")
    return g.drop(columns=["_has", "_drawn", "_predicted"]).reset_index(drop=True)


def config_parallelism(c) -> tuple[int, int]:
    """(attention_dp, replicas) of a configuration row as the serving model reads its layout
    (``calc.layout.Layout``; ``calc.serving_fit`` builds each row's layout from tp, pp, ep and n_gpus).

    ``attention_dp``: attention groups inside one replica, max(tp, ep) / tp, for a mixture-of-experts model
    with EP above TP (its attention runs data-parallel, "DP attention"); 1 otherwise. ``replicas``:
    independent copies, n_gpus / (max(tp, ep) x pp), at least 1. The data set's ``dp`` column counts the
    groups of tp x pp GPUs (tp x pp x dp = n_gpus), which is either of the two: DeepSeek-V3 at TP1 EP8 on
    8 GPUs has dp 8 = attention DP8 in one replica; dense Llama-2-70B at TP2 on 8 GPUs has dp 4 = 4 replicas.
    """
    tp, pp, ep, n = (int(c[k]) for k in ("tp", "pp", "ep", "n_gpus"))
    width = max(tp, ep)
    try:
        moe = get_model(str(c["model"])).is_moe
    except ValueError:  # a model outside the presets: its EP says it has experts
        moe = ep > 1
    attention_dp = width // tp if moe and ep > tp else 1
    return attention_dp, max(1, n // (width * pp))


def largest_concurrency_per_replica(rows: pd.DataFrame) -> float:
    """The largest measured concurrency of a configuration's rows per replica (``config_parallelism``), NaN when
    no row states one (offline runs, request rates). Example: DeepSeek-R1 at TP1 EP8 on 8 GPUs, one replica,
    --concurrency 3072: 3,072.
    """
    conc = pd.to_numeric(rows["concurrency"], errors="coerce").astype(float)
    if rows.empty or not np.isfinite(conc).any():
        return float("nan")
    replicas = config_parallelism(rows.iloc[0])[1]
    return float(np.nanmax(conc)) / replicas


def frontier_span_per_replica(rows: pd.DataFrame, params: dict | None = None) -> float:
    """The decode batch per replica a configuration's curve must reach so that each of its runs lies on its span:
    the largest of its largest measured concurrency (``largest_concurrency_per_replica``), the batch the serving
    model decodes for its offline runs (``calc.serving_fit.prepare_rows``: the engine's max batch, per attention-DP
    rank where the engine counts so, or its cache) and the batch its runs at a rate measured (Little's law on the
    decode steps: output tokens/s per replica x TPOT, ``rate_points``' two axes). NaN when none of these is known.
    Example: DeepSeek-R1 Offline at TP1 EP8 on 8 B200 with ``gpu_batch_size 512`` per rank: 4,096.
    """
    if rows.empty:
        return float("nan")
    spans = [largest_concurrency_per_replica(rows)]
    gpus = int(rows.iloc[0]["n_gpus"]) // config_parallelism(rows.iloc[0])[1]
    offline = rows[rows["mode"] == "offline"]
    if len(offline):
        try:
            _, comps, _ = prepare_rows(offline, params or load_serving_params(), include_speculative=True)
        except ValueError:
            comps = {}
        if comps:
            spans.append(float(np.max(comps["B"])))
    rate = rate_points(rows)
    if len(rate):
        spans.append(float((rate["tokens_per_s_per_gpu"] * gpus / rate["tokens_per_s_per_user"]).max()))
    spans = [x for x in spans if np.isfinite(x)]
    return max(spans) if spans else float("nan")


def config_label(c) -> str:
    """'TP8 PP1 EP1 on 8 GPUs, fp8 / KV fp8, 1,024 in / 1,024 out' ('on 1 GPU' for one) for a configuration
    row; ', attention DP8' where attention runs data-parallel inside a replica, ', 4 replicas of 2 GPUs' where
    the GPUs hold independent copies (``config_parallelism``), ', speculative decoding' where no row of it is plain
    (``plain`` of ``configurations``)."""
    kv = c["kv_dtype"] or "unstated (engine default)"
    attention_dp, replicas = config_parallelism(c)
    n_gpus = int(c["n_gpus"])
    per_replica = n_gpus // replicas
    return (f"TP{c['tp']} PP{c['pp']} EP{c['ep']} on {n_gpus} GPU{'s' if n_gpus != 1 else ''}"
            + (f", attention DP{attention_dp}" if attention_dp > 1 else "")
            + (f", {replicas} replicas of {per_replica} GPU{'s' if per_replica != 1 else ''}" if replicas > 1 else "")
            + f", {c['weight_dtype']} / KV {kv}, {int(c['input_len']):,} in / {int(c['output_len']):,} out"
            + (", speculative decoding" if "plain" in c and c["plain"] == 0 else ""))


def metrics_words(rows: pd.DataFrame) -> str:
    """The metrics ``rows`` measure, as a sentence names them, in the data set's order: "TTFT", "TTFT and TPOT",
    "TTFT, TPOT and output tokens/s"; a metric outside ``METRIC_WORDS`` by its column name."""
    names = [METRIC_WORDS.get(m, str(m)) for m in dict.fromkeys(rows["metric"])]
    return join_and(names)


def no_point_sentence(rows: pd.DataFrame, estimated: bool = True) -> str:
    """Why a configuration's ``rows`` put nothing on the frontier chart (output tokens/s per GPU against tokens/s
    per user), naming what they measure; "" when one of them is drawn (``measured_points`` or
    ``throughput_rows``) or there are none. "These 6 rows measure TTFT only: no point on the throughput-per-GPU
    vs tokens-per-user chart, which needs a throughput run at a concurrency or offline; the table below compares
    each row with the serving estimate and the bound." ``estimated`` False (the serving model estimates none of
    them: runs without CUDA graphs, a model not in the presets): the table compares them with the bound alone, and the sentence
    says so."""
    if rows.empty or len(measured_points(rows)) or len(rate_points(rows)) or len(throughput_rows(rows)):
        return ""
    what = metrics_words(rows) + (" only" if rows["metric"].nunique() == 1 else "")
    rate = " at a request rate" if (rows["mode"] == "rate").all() else ""
    head = "This row measures" if len(rows) == 1 else f"These {len(rows):,} rows measure"
    return (f"{head} {what}{rate}: no point on the throughput-per-GPU vs tokens-per-user chart, which needs a "
            "throughput run (at a concurrency, at a request rate with its TPOT, or offline); the table below compares "
            + ("it" if len(rows) == 1 else "each row")
            + (" with the serving estimate and the bound." if estimated else " with the bound."))


def measured_points(df: pd.DataFrame) -> pd.DataFrame:
    """One point per run (configuration and concurrency) that gives both axes: output tokens/s per GPU
    (``output_tok_per_s_per_gpu``, or ``output_tok_per_s`` / n_gpus) and tokens/s per user
    (``output_tok_per_s_per_user``, or 1000 / mean or median ``tpot_ms``). Mean statistics first. A run with
    speculative decoding (said in its notes, as ``calc.serving_fit.prepare_rows`` reads them) is a run of its
    own: its axes never pair with a plain run's at the same concurrency. An offline run of N requests sent at once
    (``row_concurrency``: its concurrency, or the N its notes state) is a run at concurrency N.

    Returns:
        DataFrame: CONFIG_COLUMNS, concurrency, source_id, tokens_per_s_per_gpu, tokens_per_s_per_user.
    """
    return _axis_points(df, "concurrency", "concurrency")


def rate_points(df: pd.DataFrame) -> pd.DataFrame:
    """``measured_points`` for the runs at a request rate (Poisson arrivals, ``mode`` "rate": MLPerf's Server
    scenario, ``vllm bench serve --request-rate``): one point per configuration and rate that gives both axes, the
    run's output tokens/s per GPU and 1000 / its mean or median TPOT. The serving estimate's curve is drawn over
    concurrency; a run at a rate lies on the same axes (its decode batch is the concurrency Little's law gives it).

    Returns:
        DataFrame: CONFIG_COLUMNS, request_rate_per_s, source_id, tokens_per_s_per_gpu, tokens_per_s_per_user.
    """
    return _axis_points(df, "rate", "request_rate_per_s")


def _axis_points(df: pd.DataFrame, mode: str, load: str) -> pd.DataFrame:
    cols = list(CONFIG_COLUMNS) + [load, "source_id", "tokens_per_s_per_gpu", "tokens_per_s_per_user"]
    taken = df["mode"] == mode
    if mode == "concurrency":  # an offline burst of N requests is a run at concurrency N (``row_concurrency``)
        df = df.assign(concurrency=row_concurrency(df))
        taken = taken | ((df["mode"] == "offline") & df["concurrency"].notna())
    d = df[taken & df["statistic"].isin(["mean", "median"])].copy()
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
    keys = list(CONFIG_COLUMNS) + [load, "source_id", "_spec"]
    x = d.dropna(subset=["x"]).groupby(keys, dropna=False)["x"].first()
    y = d.dropna(subset=["y"]).groupby(keys, dropna=False)["y"].first()
    both = pd.concat([y.rename("tokens_per_s_per_gpu"), x.rename("tokens_per_s_per_user")], axis=1).dropna()
    return both.reset_index()[cols]


def config_frontier(config, concurrencies=None, params: dict | None = None, up_to=None) -> pd.DataFrame:
    """``calc.serving.serving_frontier`` for one configuration row (the fitted rules of the data set: fp4
    weights on Blackwell's fp4 tensor cores, an unstated KV dtype as ``row_kv_dtype``; a configuration's
    ``speculative`` draft where ``configurations`` gives one, plain decoding with a notice where that draft is
    refused). Per replica of
    (tp, pp, ep); throughput is per GPU, so replicas do not move it. ``up_to``: the largest concurrency per
    replica the curve must reach (a configuration's largest measured one; without ``concurrencies``, whole numbers
    from 1 to max(1,024, up_to) on a geometric grid, ``calc.serving.frontier_concurrencies``, so that a run at 3,072
    clients lies on the curve's span).

    Raises:
        ValueError: as ``serving_frontier``.
    """
    model = get_model(config["model"])
    # the row's engine ran FP4 weights on FP4 tensor cores (as the fit takes it): no notice about the sidebar's choice
    acc, _ = engine_matmul(get_accelerator(config["accelerator"]), str(config["weight_dtype"]))
    wd = "nvfp4" if str(config["weight_dtype"]).lower() == "fp4" else str(config["weight_dtype"])
    kv = row_kv_dtype(config["weight_dtype"], config["kv_dtype"], str(config.get("engine", "")),
                      bool(config.get("kv_scales", False)))
    if concurrencies is None and up_to is not None and np.isfinite(float(up_to)) and float(up_to) > 1024.0:
        concurrencies = frontier_concurrencies(float(up_to))
    spec = config.get("speculative") or None
    spec = json.loads(spec) if isinstance(spec, str) else spec
    refused = None
    if spec is not None:
        try:
            speculative_settings(model, spec)
        except ValueError as exc:  # the rows' own notes refuse it row by row (``compare_rows``' note)
            spec, refused = None, (f"the curve is plain decoding: the speculative decoding its first row's notes "
                                   f"state is refused ({exc})")
    frontier = serving_frontier(model, acc, int(config["input_len"]), int(config["output_len"]), concurrencies,
                                int(config["tp"]), int(config["pp"]), int(config["ep"]), wd, kv,
                                engine=str(config["engine"]), params=params, speculative=spec,
                                trait_range=False)  # the range of the page's rows: the cross-validated one
    if refused:
        frontier.attrs["notices"] = tuple(frontier.attrs.get("notices", ())) + (refused,)
    return frontier


def compare_rows(df: pd.DataFrame, params: dict | None = None) -> pd.DataFrame:
    """Every row of ``df`` with the serving model's prediction and the roofline bound in its metric's unit (a
    percentile row, p99 TTFT or TPOT, its percentile: ``calc.serving_fit.tail_value``).

    Returns:
        DataFrame: id, source_id, model_published (the model as the row's source published it,
        ``calc.measurements.PUBLISHED_MODEL``: "glm-4.6" for a GLM-4.6 row computed with GLM-4.7's architecture; a
        frame without that column gives its model), metric, statistic, concurrency, request_rate_per_s (a run at a
        rate: its requests per second, else NaN), value (measured), predicted, bound, predicted_over_measured,
        from_notes (the engine settings the row's notes set and the prediction follows, in words: ``prepare_rows``'
        column), note (why a row has no prediction or bound).
    """
    prm = params or load_serving_params()
    rows, comps, skipped = prepare_rows(df, prm, include_speculative=True, include_tails=True)
    predicted, read = {}, {}
    if len(rows):
        values = predict_rows(rows, comps, param_values(prm))
        predicted = dict(zip(rows["id"], values))
        read = dict(zip(rows["id"], rows["from_notes"]))
    notes = dict(skipped)
    out = []
    for _, r in df.iterrows():
        try:
            bound = measurement_bound(r).bound
        except (ValueError, KeyError) as exc:
            bound, notes[r["id"]] = np.nan, notes.get(r["id"]) or str(exc)
        p = predicted.get(r["id"], np.nan)
        out.append(dict(id=r["id"], source_id=r["source_id"], model_published=r.get(PUBLISHED_MODEL, r["model"]),
                        metric=r["metric"], statistic=r["statistic"],
                        concurrency=stated_concurrency(r["mode"], r["concurrency"], r.get("notes", "")),
                        request_rate_per_s=r.get("request_rate_per_s", np.nan),
                        value=r["value"], predicted=p, bound=bound,
                        predicted_over_measured=p / r["value"] if np.isfinite(p) else np.nan,
                        from_notes=read.get(r["id"], ""), note=notes.get(r["id"], "")))
    return pd.DataFrame(out, columns=["id", "source_id", "model_published", "metric", "statistic", "concurrency",
                                      "request_rate_per_s", "value", "predicted", "bound", "predicted_over_measured",
                                      "from_notes", "note"])


#: The metrics whose row ``row_estimate``'s breakdown marks: the time of each, as a breakdown's ``which``.
BREAKDOWN_METRICS = {"tpot_ms": "tpot", "itl_ms": "tpot", "ttft_ms": "ttft"}


def row_time(est: ServingEstimate, metric: str, statistic: str = "mean") -> TimeBreakdown:
    """The breakdown of the time a row of ``metric`` (a key of ``BREAKDOWN_METRICS``) and ``statistic`` ("mean",
    "median") measures, from its estimate (``row_estimate``): TTFT's, TPOT's, or for ITL, the gap between streamed
    chunks (``ServingEstimate.itl_s``, its median ``itl_median_s``): one decode step, TPOT's under plain decoding;
    the round of AL tokens under speculative decoding, N steps under multi-step scheduling; every part of TPOT's
    scaled alike, so the parts still add up.

    Raises:
        KeyError: a metric ``BREAKDOWN_METRICS`` does not hold.
    """
    tb = getattr(est, BREAKDOWN_METRICS[metric])
    itl = est.itl_median_s if statistic == "median" else est.itl_s
    k = itl / tb.estimate_s if metric == "itl_ms" and tb.estimate_s > 0 else 1.0
    if not np.isfinite(k) or k == 1.0:
        return tb
    times = ("weights_s", "kv_s", "compute_s", "comm_s", "bound_s", "fixed_s", "efficiency_s", "interference_s",
             "queue_s", "estimate_s", "low_s", "high_s", "draft_s")
    return replace(tb, **{f: k * getattr(tb, f) for f in times},
                   fixed_parts=tuple((name, k * v) for name, v in tb.fixed_parts))


def row_estimate(row, params: dict | None = None) -> ServingEstimate:
    """The serving estimate of one measurement row, as ``compare_rows`` predicts it, with its ranges and
    breakdowns: ``calc.serving_fit.prepare_rows`` on that row alone (its engine's settings, release, benchmark,
    notes and replicas), then ``calc.serving.combine`` at the row's points weighted as ``predict_rows`` weighs
    them (``calc.serving_fit.row_points``: a closed loop of R rounds mixes its burst and its steady state, a rate
    row sits between the grid points around Little's law's root). Its TPOT (ITL) and TTFT are then the
    ``predicted`` of a tpot_ms (itl_ms) or ttft_ms row, in seconds, and each part of their ``TimeBreakdown`` is
    the same weighted sum, so the parts still add up to the estimate. The ranges: the cross-validated error
    quantiles of the row's engine (``error_quantiles``), bounded at the roofline as ``serving_estimate``'s, and for
    a row at a rate carried through Little's law as its (``calc.serving.rate_range``, the row's own path at k times
    its rate), but for a row tuned to the latency limits its notes state (the latency range around its means, as
    ``serving_estimate`` with ``latency_limits``).
    Throughputs are per replica's points x replicas, per GPU of a replica; a finite run's throughput (an offline
    run's waves of bursts and drain, a run's N requests at a rate over their arrivals and the last one's latency,
    ``calc.serving.rate_run_requests_per_s``), which ``predict_rows`` applies to throughput rows, is not (the steady
    state's is given). ``decode_batch`` and ``concurrency`` are per replica.

    Args:
        row: one row of a measurements frame (``calc.measurements.load_measurements``' columns), a Series or a
            one-row DataFrame.

    Raises:
        ValueError: more than one row, or a row the serving model does not predict (the reason
            ``compare_rows``' note gives: a run without CUDA graphs, a model not in the presets...; a percentile row,
            whose estimate ``compare_rows`` gives without a breakdown).
    """
    frame = row.to_frame().T if isinstance(row, pd.Series) else row
    if len(frame) != 1:
        raise ValueError(f"row_estimate takes one measurement row, got {len(frame)}")
    prm = params or load_serving_params()
    rows, comps, mixed, heaviest = _row_arrays(frame.reset_index(drop=True), prm)
    r = rows.iloc[0]
    notes = str(r.get("notes", "") or "").lower()
    piled = float(mixed.get("piled", [0.0])[0]) > 0
    # the model's kinds of layer the calibration barely saw; the range stays the cross-validated one here, since
    # the held-out spread that would widen it includes the published rows this page compares with
    coverage = architecture_notice(prm, get_model(str(r["model"])), widened=False, engine=str(r["engine_key"]),
                                   weight_dtype=str(r["weight_dtype"]))
    pile = [pile_up_words(fmt_number(float(frame["request_rate_per_s"].iat[0])),
                          float(r["run_requests"]) * int(r["replicas"]),
                          fmt_number(float(mixed["requests_per_s"][0]) * int(r["replicas"])))] if piled else []
    est = estimate_from_arrays(
        mixed, prm, str(r["engine_key"]), int(r["replicas"]), float(r["gpus"]), float(r["output_len"]),
        float(mixed["C"][0]), str(np.asarray(comps["limit"])[heaviest]) if "limit" in comps else "", str(r["mode"]),
        "static" if any(w in notes for w in _STATIC) else "continuous",
        pile + scheduling_notices(mixed, prm, str(r["engine_key"])) + _slot_wait_words(r, mixed) + coverage)
    if str(r["mode"]) != "rate" or piled:  # a burst's times do not follow the rate (``rate_range``)
        return est
    # at a rate, the range carried through Little's law as the public estimate's (``calc.serving.rate_range``): the
    # row's own path at k times its rate
    lam = float(frame["request_rate_per_s"].iat[0]) / int(r["replicas"])

    def solve(rate_per_replica):
        scaled = frame.reset_index(drop=True).copy()
        scaled["request_rate_per_s"] = float(scaled["request_rate_per_s"].iat[0]) * rate_per_replica / lam
        return None, _row_arrays(scaled, prm)[2], []
    q_thr = error_quantiles(prm, "throughput", str(r["engine_key"]))
    limits = prepared_limits(r)
    if limits:
        # a run tuned to its latency limits: the engine of the range at their edge and its means, as ``predict_rows``
        # takes them; an engine with no root of Little's law on the row's grid (``row_points`` takes its last point,
        # the batch limit) does not keep up, the test ``predict_rows`` makes
        def solve_edge(rate_per_replica):
            arr = solve(rate_per_replica)[1]
            return None, arr, float(arr["beyond_capacity"][0]) > 0

        _, tuned, notice = edge_of_limits(solve_edge, lam, limits, q_thr,
                                          error_quantiles(prm, "latency", str(r["engine_key"])), str(r["engine_key"]))
        est = estimate_from_arrays(
            tuned, prm, str(r["engine_key"]), int(r["replicas"]), float(r["gpus"]),
            float(r["output_len"]), float(mixed["C"][0]), est.batch_limit, "rate", est.batching,
            [notice] + scheduling_notices(tuned, prm, str(r["engine_key"])) + coverage)
        return below_limits(est, limits)  # at the edge: the latency range around its means, as ``serving_estimate``'s
    return rate_range(est, solve, lam, q_thr)


def _slot_wait_words(r, mixed: dict) -> list[str]:
    """The words of an offline row that sends its N requests at once to an engine holding fewer: the mean wait for
    a free slot its TTFT's queue part carries (``calc.serving_fit.with_run_slot_wait``, which records it as
    ``slot_wait_s``); [] for another row."""
    wait = float(mixed.get("slot_wait_s", [0.0])[0])
    if wait <= 0:
        return []
    sent, held, rps = float(r["sent_at_once"]), float(mixed["N"][0]), float(mixed["requests_per_s"][0])
    queue = float(mixed.get("ttft_queue", [np.nan])[0])
    rest = (f" (of TTFT's {fmt_number(queue)} s queue part; the rest is the wait behind the prompts prefilled before "
            "each one's own)") if np.isfinite(queue) and queue > 1.05 * wait else " (in TTFT's queue part)"
    return [f"{fmt_number(sent)} requests sent at once per replica, {fmt_number(held)} in service: the others wait "
            f"for a free slot, {fmt_number(wait)} s on average ((N - B)^2 / (2 N x {fmt_number(rps)} requests/s))"
            f"{rest}, and as much longer end to end"]


def _row_arrays(frame: pd.DataFrame, prm: dict):
    """(rows, comps, arrays, heaviest) of one measurement row: ``prepare_rows`` on it, and combine's arrays at its
    points weighted as ``predict_rows`` weighs them (``row_points``), one value per key; ``heaviest`` the index of
    the heaviest point. Raises ValueError for a row the serving model does not predict."""
    rows, comps, skipped = prepare_rows(frame, prm, include_speculative=True)
    if rows.empty:
        raise ValueError(f"no serving estimate for row {frame['id'].iat[0]}: {skipped[0][1] if skipped else 'skipped'}")
    arrays, weights = row_points(rows, comps, param_values(prm))
    piled = np.isfinite(float(rows["rate_per_replica"].iat[0])) and list(weights) == [int(_grid_points(rows)[0])]
    mixed = {k: np.asarray([sum(w * float(np.asarray(v)[i]) for i, w in weights.items())])
             for k, v in {**comps, **arrays}.items() if np.ndim(v) == 1 and np.asarray(v).dtype.kind in "fiub"}
    mixed.setdefault("decode_batch", mixed["B"])  # the decode batch B of the weighted points
    mixed = with_run_slot_wait(rows, mixed, mixed, [0])  # an offline row's N sent at once wait for a slot
    tokens = itl_tokens(rows, mixed["spec_al"])  # gaps per token where the row's client books them so
    for key in ("itl_mean_s", "itl_median_s"):
        if key in mixed:
            mixed[key] = mixed[key] / tokens
    rate = float(rows["rate_per_replica"].iat[0])
    if np.isfinite(rate):
        # no root of Little's law on the row's grid (``calc.serving_fit._rate_root``): the engine does not keep up
        gap = rate * np.asarray(arrays["e2e_s"], dtype=float) - np.asarray(comps["N"], dtype=float)
        grid = int(_grid_points(rows)[0])
        mixed["beyond_capacity"] = np.asarray([1.0 if bool((gap[:grid] > 0).all()) else 0.0])
        mixed["piled"] = np.asarray([1.0 if piled else 0.0])  # its requests pile up: its burst point
    return rows, comps, mixed, max(weights, key=weights.get)
