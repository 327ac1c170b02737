"""The "Against published measurements" page's parts: the data (shipped, a user's CSV or InferenceX JSON),
the frontier chart on InferenceX's axes, the measured-against-predicted chart, the row table and one row's
"where the time goes" beside what it measured. Numbers
come from calc.measurements, calc.inferencex and calc.comparison; this module formats and draws."""
from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from calc import comparison, inferencex, measurements, models, serving, serving_params
from calc.number_text import join_and
from calc.serving_fit import HOLDOUT_PATH, MULTI_STEP_READ
from calc.speculative_serving import speculative_notes
from calc.serving_tails import statistic_quantile
from ui import caching, charts, formats, html_table, serving_views, url_state, widgets

SOURCES = ("The data set", "My CSV (same columns)", "InferenceX result JSON", "Held-out rows (no fit reads them)")


def shipped() -> pd.DataFrame:
    """The shipped measurements (cached)."""
    return caching.cached_call(measurements.load_measurements)


def sources_table() -> pd.DataFrame:
    """The shipped sources table (cached)."""
    return caching.cached_call(measurements.load_sources)


def held_out() -> pd.DataFrame:
    """The shipped held-out measurements, calc/data/serving_holdout.csv (cached): published rows no fit reads
    (MLPerf Inference, vendors' and engines' documentation runs, GPUStack's pages, InferenceX runs the fit leaves
    out), each with its source."""
    return caching.cached_call(measurements.load_measurements, HOLDOUT_PATH)


#: Under the sources of the data set and its held-out rows: where a user's own measurements go (the sidebar's
#: config.json upload, seen first on a first visit, loads a model, not measurements).
OWN_DATA_WORDS = (f"Your own measurements: choose **{SOURCES[1]}** or **{SOURCES[2]}** above and the upload box opens "
                  "here, under this choice. The sidebar's config.json upload loads a model for the other pages, not "
                  "measurements.")

#: The upload box's label, by the kind of file.
UPLOAD_LABELS = {"csv": "Your measurements: a CSV with the data set's columns",
                 "json": "Your measurements: an InferenceX result JSON"}

#: In the upload box until a file is loaded, by the kind of file: that none is, what the file needs, and what the
#: page shows meanwhile.
NO_FILE_WORDS = {
    "csv": ("**No file loaded yet**, so nothing of yours is compared. The CSV needs the data set's columns: at least "
            + ", ".join(measurements.REQUIRED_COLUMNS) + " (and n_gpus or tp); the others take their defaults (the "
            "**?** of the box lists every column). The data set's own CSV, above, is a template: edit it and load "
            "it back. Until then, the charts and the table below are the shipped data set's, marked as such."),
    "json": ("**No file loaded yet**, so nothing of yours is compared. The box takes InferenceX's result JSON in any "
             "of four shapes (the **?** of the box names them). Until then, the charts and the table below are the "
             "shipped data set's, marked as such.")}

#: The mark on each heading over the shipped data set while it stands in for the user's file (none loaded yet, or
#: one that cannot be read).
STAND_IN_MARK = ":orange-badge[:material/database: The shipped data set, not your file]"


def heading(text: str, stand_in: bool = False) -> str:
    """A heading of the page (markdown, bold), marked ``STAND_IN_MARK`` while the shipped data set stands in for
    the user's file (``stand_in``), so that no chart or table of it reads as the user's measurements."""
    return f"{STAND_IN_MARK} **{text}**" if stand_in else f"**{text}**"


def load_data(choice: str) -> tuple[pd.DataFrame, bool]:
    """(rows, stand_in): the measurements of ``choice`` (the data set, its held-out rows, or an upload read with
    calc's checks), or, while no file is given or after a message that the file cannot be read, the data set with
    ``stand_in`` true (the choices made in an earlier file are kept for its return: ``ui.url_state.keep_valid``). An
    upload stays in its widget after an error, so the user fixes the file and loads it again. Drawn right under the
    sources: the upload box in a frame of its own (``UPLOAD_LABELS``), or, for the shipped sources, where it opens
    (``OWN_DATA_WORDS``)."""
    if choice == SOURCES[0]:
        st.caption(OWN_DATA_WORDS)
        return shipped(), False
    if choice == SOURCES[3]:
        st.caption(OWN_DATA_WORDS)
        st.caption("Published runs kept out of the fit (calc/data/serving_holdout.csv): MLPerf Inference v4.1 "
                   "Server, v5.0 Offline, v5.1 and v6.0 Offline, Server and Interactive, ROCm's MI300X throughput "
                   "tables, vendor pages and the engines' own benchmark runs (TensorRT-LLM v0.17's throughput "
                   "tables, its tuning guide and blogs, SGLang's benchmark pages and cookbook, vLLM's recipes, a "
                   "ROCm blog), GPUStack's performance-lab pages, and InferenceX's token-position runs of GLM-5, "
                   "MiniMax-M2.5 and Qwen3.5 on nightly vLLM builds of February 2026 (the runs the estimate "
                   "misses most: in the median 2-5x slower than it, some TTFTs far more); the serving model never "
                   "saw them. Rows whose source allows no copy are listed in calc/data/serving_cited.csv without "
                   "their values.")
        return held_out(), False
    kind = "csv" if choice == SOURCES[1] else "json"
    box = st.container(border=True, key="ms_upload_box")
    up = box.file_uploader(UPLOAD_LABELS[kind],
                           type=[kind], key=f"ms_up_{kind}", max_upload_size=8,  # the server's own cap (.streamlit)
                           help=("The columns of calc/data/serving_measurements.csv (in any order): "
                                 + ",".join(measurements.COLUMNS) + ". Only "
                                 + ", ".join(measurements.REQUIRED_COLUMNS) + " (and n_gpus or tp) are required: "
                                 "the others take their defaults (1 for pp, ep and dp, mean, the mode from the "
                                 "concurrency or rate given), a date column dates the runs, and other columns are "
                                 "ignored. Models, GPUs, engines and dtypes may be named as their sources write them "
                                 "(meta-llama/Llama-3.1-8B-Instruct, NVIDIA H100 80GB HBM3, TensorRT-LLM, bfloat16); "
                                 "isl, osl, gpu, framework and conc are read as their columns") if kind == "csv" else
                           "InferenceX JSON, one object or a list, in any of four shapes: the agg_*.json "
                           "results of a run (utils/process_result.py), InferenceMAX's aggregated results of 2025 "
                           "(no lengths inside: the file's name carries them, e.g. agg_gptoss_1k8k.json), the "
                           "dashboard's benchmark records (inferencex.com's API: hardware, model such as dsr1, "
                           "metrics in seconds) or a runner's result files (together_runner: metrics in ms, tokens/s "
                           "of the server). Multi-node and disaggregated runs are skipped.")
    if kind == "csv":  # the data set's own file, to edit and load back: the columns and checks an upload needs
        box.download_button("Download the data set's CSV (edit it and upload it here)",
                            lambda: Path(measurements.MEASUREMENTS_PATH).read_bytes(),
                            file_name="serving_measurements.csv", mime="text/csv", key="ms_dataset_csv",
                            help="calc/data/serving_measurements.csv as shipped: every row with its source and "
                                 "licence; keep the header, change or add rows, and upload the file above.")
    run_date = None
    if kind == "json":
        run_date = box.date_input("Run date, for results that state none (optional)", value=None, key="ms_run_date",
                                  help="InferenceMAX's aggregated results of 2025 carry no date or image: the serving "
                                       "model dates an engine without a version by its run (a later release runs "
                                       "closer to the roofline). Without a date such rows are taken as of 2025.")
    if up is None:  # said in the box; the data set stands in below, marked, so that the choices made stay
        box.warning(NO_FILE_WORDS[kind], icon=":material/upload_file:")
        return shipped(), True
    data = up.getvalue()
    name = formats.safe_name(up.name)
    try:
        if kind == "csv":
            df = caching.cached_call(measurements.measurements_from_text, data, name, skip_bad=True)
            for sentence in df.attrs.get("header", []):  # columns the file left out, added or named its own way
                st.caption(f"{formats.md_escape(name)}: {formats.md_escape(sentence)}.")
            skipped = df.attrs.get("skipped", [])
            if skipped:  # the good rows are shown; the others are named, to fix and load again
                st.warning(f"{len(skipped):,} row{'s' if len(skipped) > 1 else ''} of {formats.md_escape(name)} "
                           f"left out, the other {len(df):,} shown: "
                           f"{formats.md_escape(measurements.row_errors_text(skipped).rstrip('.'))}.")
        else:
            df, skipped = caching.cached_call(inferencex.parse_inferencex, data, name,
                                              run_date=run_date.isoformat() if run_date else None)
            for s in skipped:
                st.caption(f"Skipped {formats.md_escape(s)}.")
    except ValueError as exc:
        st.error(f"That file cannot be read: {formats.md_escape(str(exc).rstrip('.'))}.")
        return _unreadable()
    if df.empty:  # a header alone, or runs the page skips every one of
        st.warning(f"{formats.md_escape(name)} holds no measurement row to compare"
                   + (" (only its header)" if kind == "csv" else " (every run skipped, above)") + ".")
        return _unreadable()
    return df, False


def _unreadable() -> tuple[pd.DataFrame, bool]:
    """The data set, standing in for a file that cannot be read, and the caption that says so."""
    st.caption("The data set is shown until the file can be read; the model, accelerator, engine and "
               "configuration chosen in your file come back when it can.")
    return shipped(), True


def upload_inputs(choice: str, upload=None, run_date=None, stand_in: bool = False) -> dict[str, str]:
    """The upload behind the page's rows, for a download's header lines (``ui.downloads.csv_inputs``): the file's
    name (``upload``, the file uploader's value: anything with a ``name``; "none" before a file is given), for
    InferenceX JSON the ``run_date`` (a date) given for results that state none ("not given" without one), and,
    while the shipped data set stands in for the file (``stand_in``: none is loaded yet, or it cannot be read),
    that the rows are the data set's. The link cannot carry them (a file and its date box stay in the browser), so
    the CSV says them. {} for the data set."""
    if choice in (SOURCES[0], SOURCES[3]):
        return {}
    out = {"uploaded_file": formats.safe_name(upload.name) if upload is not None else "none"}
    if choice == SOURCES[2]:
        out["run_date_for_undated_results"] = run_date.isoformat() if run_date else "not given"
    if stand_in:
        out["rows"] = "the shipped data set, standing in for the file (calc/data/serving_measurements.csv)"
    return out


def frontier_figure(frontier: pd.DataFrame, points: pd.DataFrame, throughput_only: pd.DataFrame,
                    at_rate: pd.DataFrame | None = None):
    """Throughput per GPU against tokens/s per user (InferenceX's axes): the serving estimate with its range
    band, the roofline bound, measured runs at a concurrency, runs at a request rate (``at_rate``:
    ``calc.comparison.rate_points``, their own markers), and throughput-only runs at the estimate's tokens/s per
    user."""
    fig = charts.Figure()
    f = frontier.sort_values("tokens_per_s_per_user")
    x = f["tokens_per_s_per_user"].to_numpy()
    fig.add_scatter(x=np.concatenate([x, x[::-1]]),
                    y=np.concatenate([f["tokens_per_s_per_gpu_high"].to_numpy(),
                                      f["tokens_per_s_per_gpu_low"].to_numpy()[::-1]]),
                    fill="toself", mode="lines", line=dict(width=0), fillcolor="rgba(31,119,180,0.18)",
                    name="estimate range", hoverinfo="skip")
    fig.add_scatter(x=x, y=f["tokens_per_s_per_gpu"], mode="lines", name="serving estimate",
                    line=dict(color="#1f77b4"), customdata=f["concurrency"],
                    hovertemplate="concurrency %{customdata:.0f}<br>%{x:.1f} tok/s/user<br>%{y:,.0f} tok/s/GPU"
                                  "<extra>estimate</extra>")
    b = frontier.sort_values("bound_tokens_per_s_per_user")
    fig.add_scatter(x=b["bound_tokens_per_s_per_user"], y=b["bound_tokens_per_s_per_gpu"], mode="lines",
                    name="roofline bound", line=dict(color="#2ca02c", dash="dash"),
                    hovertemplate="%{x:.1f} tok/s/user<br>%{y:,.0f} tok/s/GPU<extra>bound</extra>")
    if len(points):
        fig.add_scatter(x=points["tokens_per_s_per_user"], y=points["tokens_per_s_per_gpu"], mode="markers",
                        name="measured", marker=dict(color="#d62728", size=10), customdata=points["concurrency"],
                        hovertemplate="concurrency %{customdata}<br>%{x:.1f} tok/s/user<br>%{y:,.0f} tok/s/GPU"
                                      "<extra>measured</extra>")
    if at_rate is not None and len(at_rate):
        fig.add_scatter(x=at_rate["tokens_per_s_per_user"], y=at_rate["tokens_per_s_per_gpu"], mode="markers",
                        name="measured at a request rate", marker=dict(color="#9467bd", size=10, symbol="square"),
                        customdata=at_rate["request_rate_per_s"],
                        hovertemplate="%{customdata:,.4~g} requests/s<br>%{x:.1f} tok/s/user<br>%{y:,.0f} tok/s/GPU"
                                      "<extra>measured at a rate</extra>")
    if len(throughput_only):
        fig.add_scatter(x=throughput_only["x"], y=throughput_only["y"], mode="markers",
                        name="measured throughput (x: the estimate's)",
                        marker=dict(color="#ff7f0e", size=9, symbol="diamond-open"),
                        customdata=throughput_only["concurrency"],
                        hovertemplate="concurrency %{customdata}<br>%{y:,.0f} tok/s/GPU measured"
                                      "<extra>throughput only</extra>")
    fig.update_xaxes(title="output tokens/s per user (1000 / TPOT ms)", type="log")
    fig.update_yaxes(title="output tokens/s per GPU", type="log")
    fig.update_layout(height=440, legend=dict(orientation="h", y=-0.2))
    return fig


def throughput_only_points(rows: pd.DataFrame, frontier: pd.DataFrame, n_gpus: int) -> pd.DataFrame:
    """Throughput rows of a configuration without a latency partner: y measured (per GPU), x the estimate's
    tokens/s per user at the same concurrency (``calc.comparison.row_concurrency``: an offline run of N requests
    sent at once at N; one of unstated size at the frontier's largest batch)."""
    r = comparison.throughput_rows(rows)
    if r.empty:
        return pd.DataFrame(columns=["x", "y", "concurrency"])
    f = frontier.sort_values("concurrency")
    stated = comparison.row_concurrency(r)
    c = stated.fillna(f["concurrency"].max()).to_numpy()
    x = np.interp(np.log(c), np.log(f["concurrency"].to_numpy(float)), f["tokens_per_s_per_user"].to_numpy(float))
    y = np.where(r["metric"] == "output_tok_per_s", r["value"] / n_gpus, r["value"])
    out = pd.DataFrame({"x": x, "y": y, "concurrency": stated.astype("object").fillna("offline")})
    # a run published both per GPU and for the whole deployment is one point
    return out.loc[~out.assign(k=out["y"].round(6)).duplicated(subset=["concurrency", "k"])]


def no_frontier_words(exc: Exception) -> str:
    """The page's message where the serving model draws no curve for a configuration (``calc.comparison.
    config_frontier`` refused it: a layout the engines refuse, a model it cannot build), the reason quoted."""
    reason = str(exc).strip()
    return (f"No serving estimate for this configuration, so no curve to draw: {formats.md_escape(reason)}. Its rows "
            "are listed below as measured, each with the reason it has no estimate.")


def no_estimate_sentence(table: pd.DataFrame) -> str | None:
    """A sentence for a configuration none of whose rows the serving model estimates (``table``: ``compare_rows``'
    columns ``predicted`` and ``note``), naming the notes' reasons (a run without CUDA graphs, a model not in the presets):
    its curve then shows plain decoding, not what these runs measured. None when any row has an estimate."""
    if table.empty or table["predicted"].notna().any():
        return None
    reasons = sorted({str(n) for n in table["note"].dropna() if str(n).strip()})
    why = f": {'; '.join(reasons)}" if reasons else ""
    return ("The serving model makes no estimate for any row of this configuration" + why + ". The curve and its "
            "band are what the engine would measure without that, so what these runs measured need not lie on them.")


def beyond_bound_sentence(table: pd.DataFrame) -> str | None:
    """A sentence naming the rows of ``table`` (``compare_rows``' columns metric, statistic, concurrency, value, bound)
    that beat calc's roofline bound: a latency below it or a throughput above it (1e-9 relative), which no engine
    can measure, so the row is misread (its layout, dtypes, lengths or unit). None when every row respects it.
    A row of speculative decoding (its ``from_notes`` say so) is left out: the bound is plain decoding's, which a
    run that emits several tokens per step may beat (``calc.measurements.measurement_bound``).
    Source: ``calc.measurements.METRICS`` (each metric's kind)."""
    if table.empty:
        return None
    value = pd.to_numeric(table["value"], errors="coerce")
    bound = pd.to_numeric(table["bound"], errors="coerce")
    kind = table["metric"].map(lambda m: measurements.METRICS.get(m, ("", ""))[1])
    drafted = table.get("from_notes", pd.Series("", index=table.index)).fillna("").astype(str) \
        .str.contains("speculative decoding")
    beyond = (((kind == "latency") & (value < bound * (1 - 1e-9)))
              | ((kind == "throughput") & (value > bound * (1 + 1e-9)))) & ~drafted
    if not beyond.any():
        return None
    shown = [f"{r.metric} {formats.fmt_number(r.value)} against a bound of {formats.fmt_number(r.bound)}"
             + (f" at concurrency {int(r.concurrency)}" if pd.notna(r.concurrency) else "")
             for r in table[beyond].head(4).itertuples()]
    more = int(beyond.sum()) - len(shown)
    return (f"{int(beyond.sum())} row{'s' if beyond.sum() > 1 else ''} beat{'' if beyond.sum() > 1 else 's'} the "
            "roofline bound, which no engine can: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
            + ". Check the row's layout (GPUs, TP, EP), dtypes, lengths and the metric's unit.")


def percentile_rows(table: pd.DataFrame) -> pd.Series:
    """Which rows of ``table`` (a frame with a statistic column; none: no row) give a percentile, p99 and the like
    (``calc.serving_tails.statistic_quantile``), rather than a mean or a median."""
    if "statistic" not in table:
        return pd.Series(False, index=table.index)
    return table["statistic"].map(lambda st: statistic_quantile(st) is not None).astype(bool)


def parity_figure(table: pd.DataFrame):
    """Measured against predicted and against the bound, log-log, with y = x: every row with a prediction (the
    percentile rows, p99 and the like, in a trace of their own), and every row with a bound (a row the serving model
    leaves out, e.g. a run without CUDA graphs, keeps its bound point; the figure says when no row has an
    estimate)."""
    have = table[pd.to_numeric(table["value"], errors="coerce") > 0]
    fig = charts.Figure()
    vals = pd.to_numeric(pd.concat([have["value"], have["predicted"], have["bound"]]), errors="coerce")
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if len(vals):
        lo, hi = float(vals.min()) / 1.5, float(vals.max()) * 1.5
        fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color="grey", dash="dot"), name="y = x",
                        hoverinfo="skip")
    tail = percentile_rows(have)
    for what, rows, name, colour, symbol in (
            ("predicted", have[~tail], "serving estimate", "#1f77b4", "circle"),
            ("predicted", have[tail], "serving estimate, percentile rows (p99...)", "#9467bd", "diamond"),
            ("bound", have, "bound", "#2ca02c", "x")):
        t = rows.dropna(subset=[what])
        if t.empty:
            continue
        stat = t["statistic"] if "statistic" in t else pd.Series("", index=t.index)
        fig.add_scatter(x=t["value"], y=t[what], mode="markers", name=name,
                        customdata=np.column_stack([t["metric"], t["id"], stat]),
                        marker=dict(color=colour, symbol=symbol, size=8),
                        hovertemplate="%{customdata[1]}<br>%{customdata[0]} (%{customdata[2]}): measured %{x:,.4g}, "
                                      + what + " %{y:,.4g}<extra></extra>")
    if len(have) and have["predicted"].isna().all():
        what = "bound only" if have["bound"].notna().any() else "no bound either, nothing to draw"
        fig.add_annotation(text=f"no serving estimate for these rows (the table's note says why): {what}",
                           xref="paper", yref="paper", x=0.02, y=0.98, showarrow=False, xanchor="left")
    fig.update_xaxes(title="measured (the metric's unit)", type="log")
    fig.update_yaxes(title="serving estimate / bound", type="log")
    fig.update_layout(height=380, legend=dict(orientation="h", y=-0.25))
    return fig


def show_table(table: pd.DataFrame, sources: pd.DataFrame, model: str | None = None) -> None:
    """The rows with measured, predicted and bound, and each row's source link; the model each row was published as
    (``calc.comparison.compare_rows``' model_published) where some row names another than the preset ``model``
    itself (``calc.measurements.is_preset_name``: GLM-4.6's rows under glm-4.7), or, without ``model``, always."""
    urls = sources["url"].to_dict() if len(sources) else {}
    shown = table.assign(source=table["source_id"].map(urls).fillna(table["source_id"]))
    # four significant digits, written with separators and no exponent (16,460 and 24.49, not 1.646e+04); the
    # download keeps every digit
    for col in ("value", "predicted", "bound"):
        shown[col] = pd.to_numeric(shown[col], errors="coerce").map(
            lambda v: float(f"{v:.4g}") if np.isfinite(v) else v)
    # a run at a rate or offline has no concurrency: a number or nothing ("—"), never the text of a missing value
    shown["concurrency"] = pd.to_numeric(shown["concurrency"].astype(object).where(shown["concurrency"].notna()),
                                         errors="coerce")
    html_table.show_table(shown, hide_index=True, width="stretch",
                          # the numbers first: an imported file's ids are long (InferenceX's name the whole
                          # configuration) and a grid gave them most of its width
                          column_order=["metric", "statistic", "concurrency"]
                          # a run at a request rate shows its rate (a column only where some row has one)
                          + (["request_rate_per_s"] if "request_rate_per_s" in shown
                             and pd.to_numeric(shown["request_rate_per_s"], errors="coerce").notna().any() else [])
                          + ["value", "predicted", "bound", "predicted_over_measured"]
                          # the engine settings a row's notes set, which its estimate follows (where some row has any)
                          + (["from_notes"] if "from_notes" in shown
                             and shown["from_notes"].fillna("").astype(str).str.strip().any() else [])
                          # the model as each row's source published it, where it is not the preset's own name
                          + (["model_published"] if "model_published" in shown and (
                              model is None or not all(measurements.is_preset_name(p, model)
                                                       for p in shown["model_published"])) else [])
                          + ["id", "source"]
                          # a note where some row has one (the rows the serving model leaves out say why)
                          + (["note"] if "note" in shown and shown["note"].fillna("").astype(str).str.strip().any()
                             else []),
                          column_config={
                              "id": st.column_config.TextColumn("id", width="medium"),
                              "request_rate_per_s": st.column_config.NumberColumn("request rate (/s)",
                                                                                  format="localized"),
                              "value": st.column_config.NumberColumn("measured", format="localized"),
                              "predicted": st.column_config.NumberColumn("serving estimate", format="localized"),
                              "bound": st.column_config.NumberColumn("bound", format="localized"),
                              "predicted_over_measured": st.column_config.NumberColumn("estimate / measured",
                                                                                       format="%.2f"),
                              "from_notes": st.column_config.TextColumn("settings read from its notes",
                                                                        width="medium"),
                              "model_published": st.column_config.TextColumn("model as published"),
                              # the source's host as the link's text: a whole URL would push the table sideways
                              "source": st.column_config.LinkColumn("source", display_text=r"https?://([^/]+)")})


#: How many of a model's other published names its label lists before it counts the rest.
LISTED_NAMES = 3


def published_words(published: pd.DataFrame, model: str, architecture: bool = True) -> str:
    """What the rows of preset ``model`` were published as, where some name another model or checkpoint than the
    preset itself (``published``: ``calc.measurements.published_models`` of the page's rows): "rows published as
    glm-4.6, computed with GLM-4.7's architecture" (without ``architecture``: "rows published as glm-4.6"),
    "12 of 40 rows published as ..." where the others give the preset's own name, up to ``LISTED_NAMES`` names then
    "and N more"; "" where every row gives the preset's own name. Names are plain text (a user's file may name
    anything): escape them for markdown."""
    other = published[(published["model"] == model) & ~published["own"]]
    if other.empty:
        return ""
    names = [formats.plain_name(n, fallback="(no name)") for n in other["model_published"]]
    shown = names[:LISTED_NAMES] + ([f"{len(names) - LISTED_NAMES} more"] if len(names) > LISTED_NAMES else [])
    count, total = int(other["rows"].sum()), int(other["model_rows"].iloc[0])
    try:
        arch = models.get_model(model).name
    except ValueError:
        arch = model
    return (("rows" if count == total else f"{count:,} of {total:,} rows") + f" published as {join_and(shown)}"
            + (f", computed with {arch}'s architecture" if architecture else ""))


def model_labels(df: pd.DataFrame, architecture: bool = False) -> dict[str, str]:
    """The label of each model of ``df`` (measurement rows): its preset id, followed where its rows were published
    under other names by ``published_words`` in parentheses, "glm-4.7 (rows published as glm-4.6)" for the model
    box, whose width shows no more (the caption under it says the rest), and with ``architecture`` "glm-4.7 (rows
    published as glm-4.6, computed with GLM-4.7's architecture)" for a heading. The box's option stays the id
    (``model_of_label`` reads a label back)."""
    published = measurements.published_models(df)
    labels = {}
    for model in published["model"].unique():
        words = published_words(published, model, architecture)
        labels[model] = f"{model} ({words})" if words else model
    return labels


def model_of_label(label) -> str:
    """The preset id a ``model_labels`` label or a link names: the text before " (" (the whole text where it has
    none), read as ``calc.models.model_preset_id`` reads a model's name (an id, a display name, a checkpoint's id or
    an alias: "GLM-4.6" -> "glm-4.7"), else as it stands. So a link naming the model by its id
    ("?ms_model=glm-4.7"), by the name its rows were published under ("?ms_model=glm-4.6") or by a label written for
    other rows names the same option."""
    text = str(label).split(" (", 1)[0]
    return models.model_preset_id(text) or text


def published_caption(df: pd.DataFrame, model: str) -> str | None:
    """The sentence under the model box where the rows of ``model`` (a preset id of ``df``, measurement rows) were
    published as another model or checkpoint (``published_words``): that calc computes them with the preset's
    architecture, and where the table names each row's model; None where every row gives the preset's own name.
    Markdown, names escaped."""
    words = published_words(measurements.published_models(df[df["model"] == model]), model)
    if not words:
        return None
    return (f"**{formats.md_escape(model)}** here: {formats.md_escape(words)}, the preset the published name resolves "
            "to (a checkpoint of it, or another model of the same shapes: calc/data/checkpoint_aliases.json). Its "
            "estimates and bounds are the preset's; the table's **model as published** column names each row's "
            "model.")


#: The parts of a choice of rows that come back with the model the user chose (``keep_chosen_model``).
_CHOICE_PARTS = ("model", "acc", "engine", "config")


def keep_chosen_model(options, key: str, stand_in: bool = False, source: str = "") -> tuple[str, str] | None:
    """Before the model box ``key``_model, drawn over ``options`` (the models of the source shown): where the model
    the user chose is not one of them (another source chosen above, or a file loaded), remember it with its
    accelerator, engine and configuration, show the first option in its place, and return (the model missing, the
    source it was chosen in: a name of ``SOURCES`` as ``source`` gave it then, "" where none was given), for the page
    to say so; where a later source has it again (and the user has not chosen another model meanwhile), put it back
    with its accelerator, engine and configuration (each where that source has it: ``ui.url_state.keep_valid``) and
    return None. None too where the model chosen is among ``options`` (it stays), on the box's first run (a link's
    model is the link's to settle: ``follow_linked_source``, and the link notice), and while ``stand_in`` (the data
    set shown for a file not loaded yet or that cannot be read: the model is remembered, and said once a file shows
    its own rows). After a stand-in it reads the choices ``keep_valid`` kept from before it (``__chosen``, which it
    puts back in that run), so a file loaded then is checked against the model chosen before the stand-in."""
    options = list(options)
    box, wanted_key, shown_key, source_key = (f"{key}_model", f"_{key}_wanted_choice", f"_{key}_wanted_shown",
                                              f"_{key}_source_shown")
    before = st.session_state.get(source_key, "")  # the source of the last run that showed its own rows
    if not stand_in:
        st.session_state[source_key] = source
    if box not in st.session_state:
        return None

    def own(part: str):
        """The user's last choice of the box ``key``_``part``: the box's value, or after a stand-in the choice
        ``keep_valid`` kept from before it (None where none was made: the stand-in's own first option is no one's
        choice)."""
        part_key = f"{key}_{part}"
        if not stand_in and st.session_state.get(f"{part_key}__back"):
            return st.session_state.get(f"{part_key}__chosen")
        return st.session_state.get(part_key)

    def put(part: str, value) -> None:
        """The box ``key``_``part`` set to ``value``, and the choice ``keep_valid`` keeps with it (not in a
        stand-in, whose choices are not the user's own rows')."""
        st.session_state[f"{key}_{part}"] = value
        if not stand_in and f"{key}_{part}__chosen" in st.session_state:
            st.session_state[f"{key}_{part}__chosen"] = value

    wanted = st.session_state.get(wanted_key)
    if wanted is not None and st.session_state.get(box) != st.session_state.get(shown_key):
        wanted = None  # the user chose another model since: that one is theirs now
    if wanted is None:
        current = own("model")
        if current is None or current in options or model_of_label(current) in options:
            st.session_state.pop(wanted_key, None)
            st.session_state.pop(shown_key, None)
            return None
        wanted = {part: own(part) for part in _CHOICE_PARTS}
        wanted["source"] = before
    if wanted["model"] in options:  # back in a source that has it: the user's choice returns
        for part in _CHOICE_PARTS:
            if wanted.get(part) is not None:
                put(part, wanted[part])
        st.session_state.pop(wanted_key, None)
        st.session_state.pop(shown_key, None)
        return None
    st.session_state[wanted_key] = wanted
    st.session_state[shown_key] = options[0]
    put("model", options[0])
    return None if stand_in else (str(wanted["model"]), str(wanted.get("source") or ""))


def selection(df: pd.DataFrame, key: str, stand_in: bool = False, source: str = ""):
    """Model, accelerator and engine selectboxes from the data (each narrowing the next); the rows chosen. The
    engine shows by its name ("TensorRT-LLM") and a link may name it by its id or its name in any case.
    ``stand_in``: ``df`` is the data set shown while an upload cannot be read; the choices made among the upload's
    rows come back with a file that can (``ui.url_state.keep_valid``). ``source``: the source's name (one of
    ``SOURCES``), for the note where the model chosen is not among its rows (``keep_chosen_model``: the first
    model is shown, and the one chosen comes back with a source that has it)."""
    c1, c2, c3 = st.columns(3)
    options = sorted(df["model"].unique())
    labels = model_labels(df)
    missing = keep_chosen_model(options, key, stand_in, source)
    # a model absent from an upload: the first (``ui.url_state.keep_valid``); the box names the models its rows were
    # published as, and a link names the model by its id (or by a label written for other rows: ``model_of_label``)
    model = widgets.linked_selectbox(c1, "Model", options, f"{key}_model", stand_in, same=model_of_label,
                                     format_func=lambda m: labels.get(m, m),
                                     help="calc's model preset; where a row was published under another name (a "
                                          "checkpoint's id, or a model of the same architecture that has no preset "
                                          "of its own), the label names it.")
    d = df[df["model"] == model]
    accs = sorted(d["accelerator"].unique())
    acc = widgets.linked_selectbox(c2, "Accelerator", accs, f"{key}_acc", stand_in)
    d = d[d["accelerator"] == acc]
    engines = sorted(d["engine"].unique())
    url_state.accept_url_values(f"{key}_engine", engines, measurements.engine_name)
    engine = widgets.linked_selectbox(c3, "Engine", engines, f"{key}_engine", stand_in,
                                      format_func=measurements.engine_name)
    if missing:  # the user's model: not in this source, and not silently swapped for another
        name, before = (formats.md_escape(m) for m in missing)
        where = f"**{formats.md_escape(source)}**" if source else "these measurements"
        st.info(f"**{name}** is not in {where}, so **{formats.md_escape(model)}** is shown instead. {name} comes back "
                + (f"when you choose **{before}** again." if before and before != source else
                   "with a source that has it."))
    st.caption(("These three choose among the shipped data set's models, accelerators and engines until your file "
                "is loaded (what you chose in a file comes back with it)" if stand_in else
                "These three choose among the measurements' own models, accelerators and engines")
               + "; the sidebar's model, GPU and dtypes apply on the other pages, not here.")
    said = published_caption(df, model)
    if said:  # the rows of another model (or checkpoint) computed with this preset's architecture
        st.caption(said)
    return d[d["engine"] == engine]


def linked_row_id(df: pd.DataFrame, key: str) -> str | None:
    """The row id a link names (``key``_row: the id, or the label ``row_label`` writes, which starts with it; an id
    of ``df`` as it stands first), else None."""
    value = st.query_params.get(f"{key}_row")
    if not value:
        return None
    return value if (df["id"].astype(str) == value).any() else row_id_of(value)


def linked_row(df: pd.DataFrame, key: str) -> pd.Series | None:
    """The row of ``df`` a link names (as ``linked_row_id`` reads it), else None."""
    value = st.query_params.get(f"{key}_row")
    if not value:
        return None
    ids = df["id"].astype(str)
    for row_id in (value, row_id_of(value)):  # the id as it stands first, then the id a label starts with
        hit = (ids == row_id).to_numpy()
        if hit.any():
            return df[hit].iloc[0]
    return None


def has_linked_choice(df: pd.DataFrame, key: str) -> bool:
    """Whether ``df`` (measurement rows) has a row of the model, accelerator and engine a link names (``key``_model,
    ``key``_acc, ``key``_engine; those it leaves out match any row). The model is read as the model box reads it
    (``model_of_label``: an id, a published name, a label), the engine by its key (``calc.measurements.engine_key``:
    its id or its name in any case)."""
    model, acc, engine = (st.query_params.get(f"{key}_{part}") for part in ("model", "acc", "engine"))
    hit = np.ones(len(df), bool)
    if model:
        hit &= (df["model"] == model_of_label(model)).to_numpy()
    if acc:
        hit &= (df["accelerator"] == acc).to_numpy()
    if engine:
        hit &= (df["engine"].map(measurements.engine_key) == measurements.engine_key(engine)).to_numpy()
    return bool(hit.any())


def follow_linked_source(key: str) -> None:
    """Before the sources' radio ``key``_source: a link that names no source but a row (``key``_row), or a model,
    accelerator or engine (``has_linked_choice``), found among the held-out rows and not in the data set opens the
    held-out rows, so a shared link to a held-out row or model ("?ms_model=glm-4.7") shows it rather than a notice
    that the data set has no such option. Once per link: a source the user picks afterwards stays."""
    seen = f"_{key}_source_followed"
    if st.query_params.get(f"{key}_source") or st.session_state.get(seen):
        return
    st.session_state[seen] = True
    if st.query_params.get(f"{key}_row"):
        only_held_out = linked_row(shipped(), key) is None and linked_row(held_out(), key) is not None
    else:
        only_held_out = not has_linked_choice(shipped(), key) and has_linked_choice(held_out(), key)
    if only_held_out:
        url_state.set_over_link(f"{key}_source", SOURCES[3])


def follow_linked_choice(df: pd.DataFrame, key: str) -> None:
    """Before the model, accelerator and engine boxes (``selection``): a link that names a row of ``df``
    (``linked_row``) opens on that row's model, accelerator and engine, whatever the link says of them, so that
    ``follow_linked_row`` finds its configuration and the row's breakdown shows. Once per linked row: a choice the
    user makes afterwards stays (the stale row then drops out)."""
    r = linked_row(df, key)
    seen = f"_{key}_row_chosen"
    if r is None or st.session_state.get(seen) == r["id"]:
        return
    st.session_state[seen] = r["id"]
    if row_id_of(st.session_state.get(f"{key}_row", "")) == r["id"]:
        return  # the row box's own choice, which it writes into the link: the user's boxes stand
    for part, column in (("model", "model"), ("acc", "accelerator"), ("engine", "engine")):
        url_state.set_over_link(f"{key}_{part}", str(r[column]))


def config_labels(configs: pd.DataFrame) -> list[str]:
    """The configuration selectbox's labels, one per row of ``configs`` (``calc.comparison.configurations``): its
    setup (``calc.comparison.config_label``) and its row count, 'TP1 PP1 EP1 on 1 GPU, bf16 / KV bf16, 1,000 in /
    200 out (12 rows)'."""
    return [f"{comparison.config_label(c)} ({c['rows']:,} row{'s' if c['rows'] != 1 else ''})"
            for _, c in configs.iterrows()]


_ROW_COUNT = re.compile(r" \([\d,]+ rows?\)$")


def config_setup(label: str) -> str:
    """A label of ``config_labels`` without its row count: the configuration itself, the same in a file and in the
    data set whatever their rows."""
    return _ROW_COUNT.sub("", str(label))


def config_rows(d: pd.DataFrame, config) -> pd.DataFrame:
    """The rows of ``d`` in configuration ``config`` (a row of ``calc.comparison.configurations``)."""
    mask = np.ones(len(d), dtype=bool)
    for c in comparison.CONFIG_COLUMNS:
        col = d[c].fillna("") if c == "kv_dtype" else d[c]
        mask &= (col == config[c]).to_numpy()
    return d[mask]


def follow_linked_row(d: pd.DataFrame, configs: pd.DataFrame, labels: list[str], key: str) -> None:
    """Before the configuration selectbox ``key``_config: a link that names a row (``key``_row, by its id or by
    the label ``row_label`` writes, which starts with the id) opens on that row's configuration, whatever
    configuration it names (or none), so the row's breakdown shows instead of the default configuration's first
    row. Once per linked row: a configuration the user picks afterwards stays (the stale row then drops out). The
    row the page shows already (the link carries it too) is no link to follow.
    ``labels``: the selectbox's labels, one per row of ``configs`` (``calc.comparison.configurations`` of ``d``)."""
    row_id = linked_row_id(d, key)
    if not row_id:
        return
    # remembered by the row's id: the row selectbox rewrites the link's id into its label, the same row
    seen = f"_{key}_row_followed"
    if st.session_state.get(seen) == row_id:
        return
    if st.session_state.get(f"{key}_row") == row_id:  # the row box's own choice, which it writes into the link
        st.session_state[seen] = row_id
        return
    st.session_state[seen] = row_id
    rows = d[d["id"].astype(str) == row_id]
    if rows.empty:
        return  # not a row of these data: the row selectbox ignores it
    for i, (_, config) in enumerate(configs.iterrows()):
        if len(config_rows(rows, config)):
            url_state.set_over_link(f"{key}_config", labels[i])  # over the link's configuration, or into the link
            return


def row_label(r) -> str:
    """A measurement row (``calc.measurements`` columns) of a time in ms for a selectbox (and its link):
    'vllm-70b-c64-tpot: TPOT mean at concurrency 64, measured 41.20 ms' (a time of minutes as '4.5 min'); the run's
    load as its mode states it (a concurrency, a request rate, offline), and ', speculative decoding' where its notes
    say so (``calc.speculative_serving.speculative_notes``). No estimate in it: a link keeps its row when the model is
    refitted, and a link by an older label keeps it too (``row_id_of``)."""
    if r["mode"] == "rate":
        at = f"at {float(r['request_rate_per_s']):,.4g} requests/s"
    elif pd.notna(r["concurrency"]):
        at = ("at concurrency " if r["mode"] == "concurrency" else "offline, ") + f"{float(r['concurrency']):,.0f}" \
            + ("" if r["mode"] == "concurrency" else " requests at once")
    else:
        at = "offline"
    what = comparison.METRIC_WORDS.get(r["metric"], str(r["metric"]))
    drafted = ", speculative decoding" if speculative_notes(r.get("notes", "")) else ""
    return (f"{r['id']}: {what} {r['statistic']} {at}{drafted}, measured "
            f"{formats.fmt_seconds(float(r['value']) / 1e3)}")


def row_id_of(label) -> str:
    """The row id a ``row_label`` starts with (the whole text where it has no ': '): a row's identity, the same
    whatever the label says after it."""
    return str(label).split(": ", 1)[0]


#: What the breakdown's two bars predict for a row of each statistic (``calc.serving_fit.prepare_rows``: a median
#: leaves a closed loop's first round, one burst of prompts, aside; a mean weighs it in).
STATISTIC_WORDS = {
    "mean": "Both bars predict this row's statistic, the run's mean: a closed loop's first round, one burst of "
            "prompts, weighed in. The same run's median rows show the typical request instead, without that burst, "
            "so their bars can be shorter.",
    "median": "Both bars predict this row's statistic, the run's median: the typical request, a closed loop's first "
              "round (one burst of prompts) left aside. The same run's mean rows weigh that burst in, so their bars "
              "can be longer."}

#: What the bars predict for a median row of a run at a request rate: the serving model's times at a rate are means
#: (Little's law relates the means: ``calc.serving_fit.predict_rows``), so a mean and a median row of one run get the
#: same estimate.
RATE_MEDIAN_WORDS = ("Both bars predict the run's mean, as the serving model does at a request rate (Little's law "
                     "relates means), so the run's mean row gets the same estimate; this row is a median")

#: The columns that name one run: its rows differ only in these (and in their metric).
_ROW_OWN = ("id", "statistic", "value", "notes")


def run_mean_value(raw: pd.DataFrame, pick: str) -> float | None:
    """The measured mean of the same run and metric as row ``pick`` of ``raw`` (measurement rows indexed by id,
    ``calc.measurements`` columns): the row whose every column but id, statistic, value and notes equals ``pick``'s
    and whose statistic is "mean"; None where the run has no such row or its value is not a number."""
    text = raw[[c for c in raw.columns if c not in _ROW_OWN]].astype(str).fillna("")  # by column: 8 stays "8"
    same = (text == text.loc[pick]).all(axis=1) & (raw["statistic"].astype(str) == "mean")
    values = pd.to_numeric(raw.loc[same, "value"], errors="coerce").dropna()
    return float(values.iloc[0]) if len(values) else None


def itl_words(est, from_notes: str, statistic: str) -> str:
    """Why a row's ITL bar is not its TPOT, from what applies to it: a round of speculative decoding (``est``
    decodes speculatively), a multi-step scheduler's chunk of N steps (its notes set the steps per scheduler call:
    ``from_notes``, the settings ``calc.comparison.compare_rows`` read), a median gap that decodes alone (a median
    row), joined with "and"; the three kinds where none is named.
    Example: itl_words(est, "10 decode steps per scheduler call", "median") -> "the 10 steps of a multi-step
    scheduler's chunk and a median gap that decodes alone"."""
    why = []
    if getattr(est, "speculative", ""):
        why.append("a round of speculative decoding of AL tokens")
    steps = re.search(re.escape(MULTI_STEP_READ).replace(r"\{\}", r"(\d+)"), from_notes or "")
    if steps:
        why.append(f"the {steps.group(1)} steps of a multi-step scheduler's chunk")
    if statistic == "median":
        why.append("a median gap that decodes alone")
    return " and ".join(why) if why else ("a round of speculative decoding, a multi-step scheduler's chunk or a "
                                          "median gap that decodes alone")


#: What the bar predicts for a median ITL row: the median gap between streamed chunks, which the serving model gives
#: apart from the mean (``calc.serving.ServingEstimate.itl_median_s``).
ITL_MEDIAN_WORDS = ("This row is a median ITL, and the bar is the model's median gap: a step that decodes alone where "
                    "fewer than half of the steps carry prompt tokens, so it can be well under the run's mean ITL.")


def statistic_words(raw: pd.DataFrame, pick: str, t, statistic: str) -> str:
    """The caption's words on what the bars of row ``pick`` (``raw``: the rows by id; ``t``: its row of the times
    table, with metric and value) predict for its ``statistic``: a closed loop's mean or median
    (``STATISTIC_WORDS``), a median ITL (``ITL_MEDIAN_WORDS``), a median at a request rate against the run's mean
    (``rate_median_words``), else nothing."""
    mode = raw.loc[pick].get("mode")
    if mode == "concurrency":
        return STATISTIC_WORDS.get(statistic, "")
    if statistic == "median" and t["metric"] == "itl_ms":
        return ITL_MEDIAN_WORDS
    if mode == "rate" and statistic == "median":
        return rate_median_words(float(t["value"]), run_mean_value(raw, pick))
    return ""


def rate_median_words(median_ms: float, mean_ms: float | None) -> str:
    """The caption's words for a median row (``median_ms``) of a run at a request rate whose mean row measured
    ``mean_ms`` (None: the run has no mean row): the bars predict the mean (``RATE_MEDIAN_WORDS``), and where the
    median lies against it, measured, not assumed (a queue's long tail of waits pulls a TTFT's mean above its
    median; a TPOT's median can lie on either side).
    Example: rate_median_words(82.5, 99.5) says the median lies 17.1% below the run's mean of 99.5 ms."""
    if mean_ms is None or not math.isfinite(mean_ms) or mean_ms <= 0:
        return (f"{RATE_MEDIAN_WORDS}, and the run states no mean to set it beside (a queue's long tail of waits "
                "usually pulls a TTFT's mean above its median).")
    gap = median_ms / mean_ms - 1.0
    side = "above" if gap > 0 else "below" if gap < 0 else "equal to"
    return (f"{RATE_MEDIAN_WORDS}: measured {median_ms:,.4g} ms, {abs(gap):.1%} {side} the run's mean of "
            f"{mean_ms:,.4g} ms.")


def outside_range_words(which: str, measured_s: float, estimate_s: float, low_s: float, high_s: float) -> str:
    """The warning beside a row whose measured time (``measured_s``, seconds) lies outside its estimate's range
    (``low_s`` to ``high_s`` around ``estimate_s``): which side, and how far from the estimate. The range is the
    10th to 90th percentile of the serving model's cross-validated errors (``calc.serving_params.error_quantiles``),
    so about one measurement in five lies outside it.
    Example: outside_range_words("ttft", 0.309, 0.049, 0.03, 0.09) says the measured TTFT is 6.3x the estimate,
    above the range's top."""
    side = "above the range's top" if measured_s > high_s else "below the range's bottom"
    return (f"The measured {which.upper()} lies outside the estimate's range: {measured_s / estimate_s:.2g}x the "
            f"estimate, {side} ({formats.fmt_seconds(low_s)} to {formats.fmt_seconds(high_s)}). The range spans "
            "the 10th to 90th percentile of the serving model's cross-validated errors, so about one measurement "
            "in five lies outside it: for this row the estimate is a miss (the README lists the known ones).")


def batch_limit_words(est) -> str:
    """The words that say why the estimate decodes fewer requests per replica than its run keeps in flight,
    " (SGLang: <why>; the other N wait)" (``calc.serving.BATCH_LIMIT_WHY`` of its ``batch_limit``: its max batch,
    its KV cache, a hybrid's state pool...), else ""."""
    why = serving.BATCH_LIMIT_WHY.get(est.batch_limit)
    if not why or not est.decode_batch < est.concurrency:
        return ""
    return (f" ({measurements.engine_name(est.engine)}: {why}; the other "
            f"{est.concurrency - est.decode_batch:,.0f} wait)")


def row_notices(rows: pd.DataFrame, table: pd.DataFrame, most: int = 12) -> list:
    """The notices of the serving estimates (``calc.comparison.row_estimate``) of the first ``most`` rows of
    ``table`` (``compare_rows`` of the configuration's ``rows``) that have one, each once, with the ids of the rows
    it is about ("every row above" where it is about all of them): what the estimate of a throughput row counts
    that its table line does not say (a burst's recompute on an engine that preempts, the attention-DP wait). A row
    whose estimate fails is left out (the table says why)."""
    said = {}
    estimated = table[np.isfinite(pd.to_numeric(table["predicted"], errors="coerce"))].drop_duplicates("id")
    raw = rows.drop_duplicates("id").set_index("id", drop=False)
    for rid in estimated["id"].head(most):
        try:
            est = caching.cached_call(comparison.row_estimate, raw.loc[[rid]])
        except ValueError:
            continue
        for notice in est.notices:
            said.setdefault(notice, []).append(str(rid))
    every = min(len(estimated), most)
    return [f"{notice} ({'every row above' if len(ids) == every > 1 else ', '.join(ids)})"
            for notice, ids in said.items()]


#: What the breakdown says of the configuration's percentile rows.
TAIL_ROWS_WORDS = ("A percentile row (p99 TTFT, TPOT, ITL or latency) has its estimate in the table above and no "
                   "breakdown here: the parts below add up to a mean. Its estimate reads the run's structure: a "
                   "burst's last prompts for TTFT, the prompts prefilled during a request's decode for TPOT, the steps "
                   "that carry a prompt chunk for ITL; for a run tuned to its latency limits, the mean at their edge "
                   "times the tuned MLPerf runs' 99th percentile over their mean.")


#: The caption of a row whose TTFT carries the first round's cold start (``calc.serving_params.cold_start_values``).
COLD_START_WORDS = ("TTFT's fixed costs hold {cold} of the first round's cold start on the engine's ROCm build: the "
                    "first of the run's rounds waits that much more before its tokens, spread here over the run's "
                    "requests (calibrated on InferenceMAX's AMD runs, whose mean TTFT carries it and whose median "
                    "does not; calc.serving_params.cold_start_values).")


def row_breakdown(rows: pd.DataFrame, table: pd.DataFrame, key: str, stand_in: bool = False) -> None:
    """Where the time of one row goes: a selectbox of the rows of ``table`` (``calc.comparison.compare_rows`` of
    the configuration's ``rows``) that measure a TPOT, ITL or TTFT and have a serving estimate (URL-bound under
    ``key``_row, by the row's id), then that row's estimate (``calc.comparison.row_estimate``: its TPOT or TTFT is
    the table's "serving estimate") as TPOT and TTFT breakdown bars, the measured value marked on its own bar."""
    predicted = pd.to_numeric(table["predicted"], errors="coerce")
    # a percentile row (p99) has its estimate in the table, not a breakdown: the parts are the mean's
    tail = percentile_rows(table)
    times = table[table["metric"].isin(list(comparison.BREAKDOWN_METRICS)) & np.isfinite(predicted)
                  & (pd.to_numeric(table["value"], errors="coerce") > 0) & ~tail]
    st.markdown(heading("Where one row's time goes", stand_in))
    if (tail & np.isfinite(predicted)).any():
        st.caption(TAIL_ROWS_WORDS)
    if times.empty:
        st.caption("No row of this configuration measures a TPOT, ITL or TTFT with a serving estimate: the table "
                   "above has no time to break down.")
        url_state.keep_valid(f"{key}_row", [], stand_in)  # the row chosen in a file comes back with the file
        serving_views.show_notices(row_notices(rows, table))  # what the rows' estimates count (a burst's recompute)
        return
    times = times.drop_duplicates("id")
    linked = linked_row(rows, key)
    if linked is None and st.query_params.get(f"{key}_row"):
        url_state.link_reason(f"{key}_row", "no row of these measurements has that id; the first row's breakdown "
                                            "is shown")
    if linked is not None and linked["id"] not in set(times["id"]):  # a row of the table that has no breakdown
        what = (f"a {linked['statistic']} row" if bool(percentile_rows(table[table["id"] == linked["id"]]).any())
                else "a row without a serving estimate" if linked["metric"] in comparison.BREAKDOWN_METRICS
                else f"a row of {comparison.METRIC_WORDS.get(linked['metric'], linked['metric'])}")
        url_state.link_reason(f"{key}_row", f"{linked['id']} is {what}: it is in the table above, with no breakdown; "
                                            "the first row's is shown")
    raw = rows.drop_duplicates("id").set_index("id")
    labels = {i: row_label(raw.loc[i].to_dict() | {"id": i}) for i in times["id"]}
    ids = list(labels)
    # stand_in: the data set shown while a file cannot be read; a link may name the row by its id or an older label
    pick = widgets.linked_selectbox(st, "Row (a measured TPOT, ITL or TTFT)", ids, f"{key}_row", stand_in,
                                    same=row_id_of, format_func=labels.get,
                                    help="One row of the table above: its serving estimate's parts, with what it "
                                         "measured.")
    t = times[times["id"] == pick].iloc[0]
    try:
        est = caching.cached_call(comparison.row_estimate, rows[rows["id"] == pick].iloc[[0]])
    except ValueError as exc:
        widgets.show_error(exc)
        return
    which = comparison.BREAKDOWN_METRICS[t["metric"]]
    tb, measured_s = comparison.row_time(est, t["metric"], str(t.get("statistic", "mean"))), float(t["value"]) / 1e3
    rounds = tb is not getattr(est, which)  # an ITL other than TPOT: a speculative round, multi-step's N steps
    itl_over_tpot = tb.estimate_s / est.tpot.estimate_s if rounds and est.tpot.estimate_s > 0 else 1.0
    if rounds:
        est = replace(est, tpot=tb)
    shown = "itl" if rounds and t["metric"] == "itl_ms" else which  # the bar's name: the ITL where it is not TPOT
    statistic = str(raw.loc[pick].get("statistic", "") or "")
    st.caption(f"{formats.md_escape(pick)}: {comparison.METRIC_WORDS[t['metric']]}"
               f"{f' ({formats.md_escape(statistic)})' if statistic else ''} measured "
               f"{formats.fmt_seconds(measured_s)}; serving estimate {formats.fmt_seconds(tb.estimate_s)} "
               f"({serving_views.range_text(tb.low_s, tb.high_s)}) at a decode batch of {est.decode_batch:,.0f} per "
               f"replica{batch_limit_words(est)}, and the bound at that batch {formats.fmt_seconds(tb.bound_s)} "
               "(the table's bound holds whatever the batch, so it can be lower). The yellow diamond marks the "
               "measured value "
               f"on the {shown.upper()} bar" + ("" if t["metric"] != "itl_ms" else
                                                f" (the bar is the model's ITL, the gap between streamed chunks: "
                                                f"{itl_over_tpot:.2f} times its TPOT, "
                                                f"{itl_words(est, str(t.get('from_notes', '')), statistic)})"
                                                if rounds else
                                                " (the model's ITL is its TPOT)")
               + "; the other bar is the same run's estimate. " + statistic_words(raw, pick, t, statistic))
    read = str(t.get("from_notes", "") or "")
    if read:  # the table's column, cut there: what the estimate took from this run's notes (its draft, its scheduling)
        st.caption(f"Settings read from this row's notes, which its estimate follows: {formats.md_escape(read)}.")
    if not tb.low_s <= measured_s <= tb.high_s:
        st.warning(outside_range_words(shown, measured_s, tb.estimate_s, tb.low_s, tb.high_s))
    # the convention the estimate followed (a run tuned to its limits...); the model's coverage notice is the
    # configuration's, shown above the chart
    above = set(serving_params.architecture_notice(serving_params.load_serving_params(),
                                                   models.get_model(str(raw.loc[pick, "model"])), widened=False,
                                                   engine=measurements.engine_key(str(raw.loc[pick, "engine"])),
                                                   weight_dtype=str(raw.loc[pick, "weight_dtype"])))
    serving_views.show_notices(n for n in est.notices if n not in above)
    cold = dict(est.ttft.fixed_parts).get("first_round", 0.0)
    if cold > 0:
        st.caption(COLD_START_WORDS.format(cold=formats.fmt_seconds(cold)))
    for w in ("tpot", "ttft"):
        charts.show_chart(serving_views.breakdown_figure(est, w, measured_s if w == which else None,
                                                         label=shown.upper() if w == which else None),
                          key=f"{key}_row_{w}")
