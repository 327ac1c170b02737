"""The live page's "an endpoint" section: measure an OpenAI-compatible server under load, next to calc's prediction.

Called by app_pages/live.py (``render()``); not a page of its own. The measurement runs in a
background thread (``live.endpoint.EndpointJob``), so this session's script only polls it and other
sessions are never blocked. Every setting but the API key is bound to the URL.
"""
from __future__ import annotations

import dataclasses
import datetime
import math
import os
import time

import pandas as pd
import streamlit as st

from calc import measurements
from calc.models import get_model, match_checkpoint
from calc.serving_terms import first_release, release_on
from ui import (caching, charts, downloads, equations, formats, run_lock, serving_views, sidebar, url_state,
                widgets)
from live.endpoint_spec import (ALLOW_ENV, KEY_ENV, MAX_REQUESTS_PER_RUN, EndpointRefused, EndpointSpec, allow_entries,
                                check_base_url)
from live.endpoint import EndpointJob
from live.endpoint_charts import itl_figure, metric_figure
from live.endpoint_predict import (compare, level_estimate, level_rounds, levels_frame, parallel_supported,
                                   predict_levels, predict_rate_levels, predicted_decode_step, rate_level_estimate,
                                   read_result_file, tpot_from_p50s_ms)

#: The help of the table's TTFT bound columns (``live.endpoint_predict.predict_levels``' ``pred_ttft_ms``).
TTFT_BOUND_HELP = ("calc's roofline prefill of all the level's prompts in one batch, as when its C clients start "
                   "together. Under continuous batching requests arrive staggered and a prompt prefills nearly alone, "
                   "so the serving estimate (whose own bound is one prompt's prefill) and a measurement can be below it.")

#: Table headers (times in ms; the CSV keeps the column names).
COLUMNS = {
    "concurrency": st.column_config.NumberColumn("concurrency", format="%,d"),
    "request_rate_per_s": st.column_config.NumberColumn("rate (req/s)", format="%.2f"),
    "requests_ok": st.column_config.NumberColumn("ok"), "requests_failed": st.column_config.NumberColumn("failed"),
    "output_tokens_per_s": st.column_config.NumberColumn("output tok/s", format="%.1f"),
    "request_throughput_per_s": st.column_config.NumberColumn("req/s", format="%.2f"),
    "goodput_per_s": st.column_config.NumberColumn("goodput (req/s)", format="%.2f",
                                                   help="Requests meeting every TTFT/TPOT target, per second"),
    "duration_s": st.column_config.NumberColumn("level time (s)", format="%.2f"),
    "prompt_tokens_mean": st.column_config.NumberColumn("prompt tokens", format="%,.0f"),
    "output_tokens_mean": st.column_config.NumberColumn("output tokens", format="%,.0f"),
    "pred_output_tokens_per_s": st.column_config.NumberColumn(
        "output tok/s bound", format="%,.0f",
        help="calc's roofline: c N / the E2E bound, the most output tokens per second this load can give"),
    **{f"{m}_ms_{p}": st.column_config.NumberColumn(f"{m.upper()} {p} (ms)", format="%.2f")
       for m in ("ttft", "tpot", "itl", "e2e") for p in ("p50", "p90", "p99")},
    **{f"itl_per_token_ms_{p}": st.column_config.NumberColumn(f"ITL per token {p} (ms)", format="%.2f")
       for p in ("p50", "p90", "p99")},
    **{f"pred_{m}_ms": st.column_config.NumberColumn(f"{m.upper()} bound (ms)", format="%.2f")
       for m in ("tpot", "e2e")},
    "pred_ttft_ms": st.column_config.NumberColumn("TTFT bound, the level's prompts at once (ms)", format="%.2f",
                                                  help=TTFT_BOUND_HELP),
    **{f"ratio_{m}": st.column_config.NumberColumn(f"{m.upper()} measured/bound", format="%.2f")
       for m in ("tpot", "e2e")},
    "ratio_ttft": st.column_config.NumberColumn("TTFT measured/bound (prompts at once)", format="%.2f",
                                                help=TTFT_BOUND_HELP),
    **{f"est_{m}_ms": st.column_config.NumberColumn(f"{m.upper()} serving estimate (ms)", format="%.2f")
       for m in ("ttft", "tpot", "e2e")},
    "est_ttft_ms_low": st.column_config.NumberColumn("TTFT estimate low (ms)", format="%.2f"),
    "est_ttft_ms_high": st.column_config.NumberColumn("TTFT estimate high (ms)", format="%.2f"),
    "est_tpot_ms_low": st.column_config.NumberColumn("TPOT estimate low (ms)", format="%.2f"),
    "est_tpot_ms_high": st.column_config.NumberColumn("TPOT estimate high (ms)", format="%.2f"),
    "est_output_tokens_per_s": st.column_config.NumberColumn("output tok/s, estimate", format="%,.0f"),
    **{f"ratio_{m}_est": st.column_config.NumberColumn(f"{m.upper()} measured/estimate", format="%.2f")
       for m in ("ttft", "tpot", "e2e")},
}


#: The source a run of this page's own client names (its requests: one prompt length, a fixed output).
OWN_SOURCE = "this page's client"
#: The URL-bound controls drawn only once results are in: the layout and convention of the prediction, the level
#: broken down (``url_state.reads_later``: a link's values for them are not "ignored" before then).
#: What the serving estimate covers, under the endpoint's prediction. Its fixed costs are fitted on engines that replay
#: CUDA graphs or compiled kernels; `transformers serve` (Llama-3.2-1B, bf16, one H200, 256 + 64 tokens;
#: bench/gpu_serving_check.py, figures in the README) measured 14.1-19.6 ms TPOT at 1-8 clients against an estimate of
#: 2.3-2.6 ms (generic engine, no CUDA graphs), and 86 ms at 32 clients against 3.5 ms; with --cb-use-cuda-graph
#: 11.5-19.6 ms at 1-32 clients against 1.6-2.8 ms (the estimate with graphs).
EAGER_SERVER_CAVEAT = ("The serving estimate is fitted to vLLM, SGLang and TensorRT-LLM, whose decode steps replay "
                       "CUDA graphs or compiled kernels. A server that drives its model from Python module by module "
                       "measures far more: `transformers serve` on one H200 (Llama-3.2-1B, bf16) measured 5.9-7.9x the "
                       "estimate's TPOT at 1-8 clients and 25x at 32, and 7x with its own CUDA graphs on. For such a "
                       "server, plan with the live tab's calibrated prediction, which measures that overhead on the "
                       "machine itself.")
PREDICTION_CONTROLS = ("ep_tp", "ep_pp", "ep_ep", "ep_engine", "ep_lengths")
RESULT_CONTROLS = PREDICTION_CONTROLS + ("ep_level", "ep_rate")
#: Table headers that differ at a request rate (``predict_rate_levels``: the bound at the estimate's decode batch).
RATE_COLUMNS = {
    "pred_ttft_ms": st.column_config.NumberColumn(
        "TTFT bound, one prompt's prefill (ms)", format="%.2f",
        help="calc's roofline prefill of one prompt: at a rate requests arrive one by one"),
    "ratio_ttft": st.column_config.NumberColumn("TTFT measured/bound", format="%.2f"),
    "pred_output_tokens_per_s": st.column_config.NumberColumn(
        "output tok/s at the rate", format="%,.0f", help="The rate x the output tokens per request: what the "
        "deployment delivers when it keeps up"),
    "est_decode_batch": st.column_config.NumberColumn(
        "decode batch (estimate)", format="%,.1f",
        help="The sequences decoding at once that the serving estimate finds by Little's law, B = rate x E2E(B); "
             "the TPOT bound is a decode step of that batch"),
}
#: The closed-loop conventions the serving estimate offers (``calc.serving.serving_estimate``'s ``lengths``).
LENGTH_LABELS = {"fixed": "fixed (clients start together, partly in lockstep)", "varied": "varied (steady state)"}


def _allow() -> list[str]:
    return allow_entries(secrets=st.secrets)


def _levels_text(text: str, cast, what: str) -> tuple[tuple, str | None]:
    """The comma-separated levels as numbers, and one message naming every entry that is not a positive
    number (all of them at once, so that one correction is enough)."""
    vals, bad = [], []
    for part in text.split(","):
        if part.strip():
            try:
                v = cast(part.strip())
            except ValueError:
                bad.append(f"{part.strip()!r} not a number")
                continue
            if not v > 0:
                bad.append(f"{part.strip()!r} not above 0")
            else:
                vals.append(v)
    return tuple(vals), (f"{what}: {', '.join(bad)}" if bad else None)


#: What an empty Model box says once Measure is pressed (before, the page's hint asks for the model name).
NO_MODEL = "Enter the model name the server serves (as in its /v1/models list)."


def _settings() -> tuple[EndpointSpec | None, str | None]:
    """The sweep widgets; returns (spec, error message)."""
    c = st.columns([3, 2, 2])
    url = c[0].text_input("Base URL (the server's root)", "http://127.0.0.1:8000", key="ep_url", bind="query-params",
                          help="e.g. http://127.0.0.1:8000 for `vllm serve` or `transformers serve`; /v1 is added")
    model = c[1].text_input("Model (as the server names it)", "", key="ep_model", bind="query-params")
    c[2].text_input("API key", type="password", key="ep_key", placeholder="optional",
                    help="Sent only in the Authorization header; never put in the URL, the tables, the CSV or a "
                         f"message. Empty: the server's {KEY_ENV} environment variable, if set.")
    c = st.columns([2, 2, 3])
    api = c[0].radio("API", ["completions", "chat"], key="ep_api", bind="query-params", horizontal=True,
                     help="/v1/completions or /v1/chat/completions (the chat template adds prompt tokens)")
    mode = c[1].radio("Load", ["concurrency", "rate"], key="ep_mode", bind="query-params", horizontal=True,
                      help="concurrency: closed loop, N requests always in flight; rate: Poisson arrivals at R "
                           "requests/s (open loop)")
    levels_txt = c[2].text_input("Levels (concurrencies, or requests/s for rate)", "1, 2, 4, 8", key="ep_levels",
                                 bind="query-params")
    c = st.columns(5)
    prompt = c[0].number_input("Prompt tokens", 1, 131072, 256, key="ep_prompt", bind="query-params")
    out = c[1].number_input("Output tokens", 2, 16384, 64, key="ep_out", bind="query-params")
    n = c[2].number_input("Requests per level", 1, MAX_REQUESTS_PER_RUN, 16, key="ep_n", bind="query-params")
    warm = c[3].number_input("Warm-up requests", 0, 100, 1, key="ep_warm", bind="query-params",
                             help="Sent first at concurrency 1, not counted")
    seed = c[4].number_input("Seed", 0, 2**31 - 1, 0, key="ep_seed", bind="query-params")
    with st.expander("Targets (goodput) and timeouts"):
        c = st.columns(4)
        ttft_slo = c[0].number_input("TTFT target (ms, 0 = none)", 0.0, 1e6, 0.0, key="ep_ttft_slo", bind="query-params")
        tpot_slo = c[1].number_input("TPOT target (ms, 0 = none)", 0.0, 1e6, 0.0, key="ep_tpot_slo", bind="query-params")
        stall = c[2].number_input("Stall timeout (s)", 1.0, 600.0, 30.0, key="ep_stall", bind="query-params",
                                  help="Longest silence allowed mid-stream (and 2x that before the first token)")
        timeout = c[3].number_input("Whole-request timeout (s)", 1.0, 3600.0, 600.0, key="ep_timeout",
                                    bind="query-params")
    cast = int if mode == "concurrency" else float
    levels, bad = _levels_text(levels_txt, cast, "Levels")
    if bad:
        return None, bad
    if not model.strip():
        return None, NO_MODEL
    try:
        spec = EndpointSpec(base_url=url, model=model, api=api, prompt_tokens=int(prompt), output_tokens=int(out),
                            mode=mode, concurrency=levels if mode == "concurrency" else (),
                            request_rates_per_s=levels if mode == "rate" else (), requests_per_level=int(n),
                            warmup_requests=int(warm), seed=int(seed), stall_timeout_s=float(stall),
                            first_byte_timeout_s=float(min(2 * stall, timeout)), request_timeout_s=float(timeout),
                            ttft_slo_ms=ttft_slo or None, tpot_slo_ms=tpot_slo or None)
        check_base_url(spec.base_url, _allow())
    except ValueError as e:  # EndpointRefused is a ValueError
        return None, str(e)
    return spec, None


def _run_section() -> dict | None:
    """Settings, run/cancel and progress; returns the result to show (dict) or None."""
    spec, problem = _settings()
    allowed = _allow()
    st.caption((f"This server contacts only {', '.join(allowed)}" if allowed else "This server contacts no endpoint")
               + f" (its operator's `{ALLOW_ENV}` setting); redirects are not followed.")
    c = st.columns([2, 1, 4])
    run = c[0].button("Measure the endpoint", type="primary", key="ep_run",
                      disabled=spec is None and problem != NO_MODEL)
    cancel = c[1].button("Cancel", key="ep_cancel")
    if problem and (problem != NO_MODEL or run):  # an empty Model box: the hint below, until Measure is pressed
        st.error(formats.md_escape(problem))
    job: EndpointJob | None = st.session_state.get("_ep_job")
    if cancel and job is not None:
        job.cancel()
    if run and spec is not None and (job is None or job.finished):
        key = st.session_state.get("ep_key") or os.environ.get(KEY_ENV) or None
        job = EndpointJob(spec, key, allow=allowed)
        st.session_state["_ep_job"] = job
    if job is not None and not job.finished:
        with st.status("Measuring the endpoint…", expanded=True) as status:
            bar = st.progress(0.0, text=job.message)
            with run_lock.released():   # the endpoint's replies: other sessions' runs go on meanwhile
                while not job.finished:
                    bar.progress(min(max(job.fraction, 0.0), 1.0), text=job.message)
                    time.sleep(0.25)
            status.update(label="Measurement finished" if job.state == "done" else "Measurement stopped",
                          state="complete" if job.state == "done" else "error", expanded=False)
    if job is None:
        st.info("Start a server (for example `vllm serve MODEL` or `transformers serve`), enter its base URL and "
                "model name, and press **Measure the endpoint**. The sweep is as many requests as levels x "
                "requests per level, plus the warm-up.")
        return None
    if job.state == "error" and not (job.result and job.result.levels):
        st.error(f"The measurement failed: {formats.md_escape(job.error)}")
        return None
    if job.state == "cancelled":
        st.warning("Cancelled: the levels finished before the cancel are shown.")
    r = job.result
    return dict(levels=r.levels, itl_ms=r.itl_ms, samples=r.samples, notes=r.notes, source=OWN_SOURCE,
                prompt_tokens=job.spec.prompt_tokens, output_tokens=job.spec.output_tokens, mode=job.spec.mode)


def _import_section() -> dict | None:
    up = st.file_uploader("A `vllm bench serve --save-result` JSON (one per concurrency, or JSON lines) or a "
                          "GuideLLM JSON report", type=["json", "jsonl"], accept_multiple_files=True, key="ep_files")
    pasted = st.text_area("…or paste a file's text", key="ep_paste", height=100)
    texts = [(f.name, f.getvalue().decode("utf-8", errors="replace")) for f in up or []]
    if pasted.strip():
        texts.append(("the pasted text", pasted))
    if not texts:
        st.info("Upload one or more result files: each vLLM file is one load level (its `max_concurrency` or "
                "`request_rate`); a GuideLLM report holds every level.")
        return None
    levels, tools = [], set()
    for name, text in texts:
        try:
            tool, lv = read_result_file(text)
        except ValueError as e:
            st.error(f"{formats.md_escape(name)}: {formats.md_escape(e)}")
            continue
        tools.add(tool)
        levels += lv
    if not levels:
        return None
    df = levels_frame(levels)
    itl = {f"{lv['concurrency']:g}" if not math.isnan(lv["concurrency"]) else f"{lv['request_rate_per_s']:g}/s":
           lv["itl_ms"] for lv in levels if lv.get("itl_ms")}
    dates = sorted({lv["run_date"] for lv in levels if lv.get("run_date")})
    return dict(levels=levels, itl_ms=itl, samples=[], notes=[], source=" and ".join(sorted(tools)),
                run_dates=dates,
                model_ids=sorted({lv.get("model_id") for lv in levels if lv.get("model_id")}),
                prompt_tokens=int(round(df["prompt_tokens_mean"].median())) if df["prompt_tokens_mean"].notna().any() else None,
                output_tokens=int(round(df["output_tokens_mean"].median())) if df["output_tokens_mean"].notna().any() else None,
                mode="concurrency" if df["concurrency"].notna().any() else "rate",
                length_fields={k: ", ".join(dict.fromkeys(lv["length_fields"][k] for lv in levels
                                                          if lv.get("length_fields")))
                               for k in ("prompt", "output")})


def _headline(table: pd.DataFrame, inputs: dict | None = None) -> None:
    """Four metrics: TTFT and TPOT at the lightest load, TPOT measured / calc's bound there, the best output tok/s;
    then the equations behind the TPOT figures, filled in (``inputs``: the prediction's, or None)."""
    ok = table[table["tpot_ms_p50"].notna()]
    if ok.empty:
        return
    xcol = "concurrency" if ok["concurrency"].notna().any() else "request_rate_per_s"
    low = ok.sort_values(xcol).iloc[0]
    where = f"at concurrency {low[xcol]:g}" if xcol == "concurrency" else f"at {low[xcol]:g} requests/s"
    c = st.columns(4)
    c[0].metric("TTFT p50, lightest load", f"{low['ttft_ms_p50']:.1f} ms", help=f"Measured {where}")
    c[1].metric("TPOT p50, lightest load", f"{low['tpot_ms_p50']:.2f} ms", help=f"Measured {where}")
    if "ratio_tpot" in low and pd.notna(low["ratio_tpot"]):
        est = (f"{low['ratio_tpot_est']:.2f}x of the serving estimate"
               if "ratio_tpot_est" in low and pd.notna(low["ratio_tpot_est"]) else None)
        # where the model does not fit the sidebar's GPUs (``predict_levels``' attrs["fits"]), the bound is a time
        # with enough memory, as the roofline page marks it
        unreal = "" if (inputs or {}).get("fits", True) else " (if it fit)"
        c[2].metric(f"TPOT measured / bound{unreal}", f"{low['ratio_tpot']:.2f}x", delta=est, delta_color="off",
                    delta_arrow="off",
                    help=("The model does not fit these GPUs (the notice above): the bound is the time it would take "
                          "with enough memory. " if unreal else "")
                    + f"{where}: measured p50 / calc's roofline ({low['pred_tpot_ms']:.2f} ms); 1 = the roofline. "
                         + (f"Below: measured / the serving estimate ({low['est_tpot_ms']:.2f} ms, range "
                            f"{low['est_tpot_ms_low']:.2f}-{low['est_tpot_ms_high']:.2f} ms)." if est else ""))
    best = ok.loc[ok["output_tokens_per_s"].idxmax()] if ok["output_tokens_per_s"].notna().any() else None
    if best is not None:
        load = (f"concurrency {best['concurrency']:g}" if pd.notna(best["concurrency"])
                else f"{best['request_rate_per_s']:g} requests/s")  # each level by its own load (files may mix them)
        c[3].metric("Best output throughput", f"{best['output_tokens_per_s']:,.0f} tok/s",
                    help=f"All requests' output tokens / level duration, at {load}")
    step = None  # at a rate the bound's batch is the estimate's (not a whole number): no step to fill in
    if inputs is not None and not inputs.get("at_rate") and "ratio_tpot" in low and pd.notna(low["ratio_tpot"]):
        step = predicted_decode_step(concurrency=int(low["concurrency"]),
                                     **{k: v for k, v in inputs.items()
                                        if k not in ("lengths", "requests", "engine_version", "fits", "at_rate")})
    widgets.show_equations(equations.endpoint_rows(
        low, tpot_from_p50s_ms(low), step, inputs and inputs["accelerator"], inputs and inputs["weight_dtype"]))


def no_prediction_reasons(prompt_tokens, output_tokens, length_fields: dict) -> str:
    """Why a concurrency sweep has no prediction though it has concurrencies: "no prompt length
    (total_input_tokens 0)" when the mean prompt is missing or 0 tokens, "fewer than 2 output tokens
    (total_output_tokens 100)" when TPOT is undefined; ``length_fields``: the file's fields and values behind the
    lengths (``read_result_file``'s ``length_fields``: "prompt", "output"); "" when both lengths hold."""
    why = []
    if not prompt_tokens:
        why.append(f"no prompt length ({length_fields.get('prompt', 'the prompt tokens')})")
    if not output_tokens or output_tokens < 2:
        why.append("fewer than 2 output tokens per request, so no TPOT "
                   f"({length_fields.get('output', 'the output tokens')})")
    return "; ".join(why)


def model_mismatch(model_ids, model) -> str:
    """A warning when a result file names a served model whose preset (``calc.models.match_checkpoint``) is not the
    sidebar's ``model``, or one calc has no preset for; "" when they agree or the file names none."""
    for mid in model_ids:
        preset = match_checkpoint(mid)
        if preset is None:
            return (f"The file's model is {formats.md_escape(mid)}, which calc has no preset for: the prediction is "
                    f"for the sidebar's {formats.md_escape(model.name)}. Add its config.json in the sidebar (Your own "
                    "model) to predict that model.")
        if get_model(preset) != model:
            return (f"The file's model is {formats.md_escape(mid)} (calc's {preset}), but the prediction is for the "
                    f"sidebar's {formats.md_escape(model.name)}: pick {preset} in the sidebar to compare like with like.")
    return ""


def _arrivals_caption(lengths: str, sent: dict) -> str:
    """The closed-loop convention the serving estimate follows, in one sentence (``calc.serving.serving_estimate``'s
    ``lengths`` and ``rounds``), with each level's rounds: its requests over its concurrency."""
    rounds = ", ".join(f"{level_rounds(sent, c):g} at concurrency {c:,}" for c, n in sorted(sent.items()) if n > 0)
    how = ("fixed lengths: the clients start together, the first round is one burst of prompts and the later "
           "rounds partly stay in lockstep" if lengths == "fixed" else
           "varied lengths: the first round is one burst of prompts, the later ones the steady state")
    return f"The serving estimate takes each level as a run of {how} (rounds, the level's requests over its " \
           f"concurrency: {rounds})."


def _software_date(dates: list, engine: str) -> str:
    """The ``engine_version`` the serving estimate takes for imported results: the latest run date the files state
    (``run_date``), so that the estimate counts the software gain of releases up to that day, as the fit does for
    the published runs that state a date; "" (a current build) without a date, or for a date before ``engine``'s
    first release on file. Says on the page which one the estimate follows."""
    if not dates:
        return ""
    day, key = dates[-1], str(engine)
    first = first_release(key)
    if first and not release_on(key, datetime.date.fromisoformat(day)):
        st.caption(f"The files were run on {day}, before {key}'s first release on file ({first}): the serving "
                   "estimate takes a current build.")
        return ""
    span = f"run dates {dates[0]} to {day}, the latest taken" if len(dates) > 1 else f"run date {day}"
    st.caption(f"The files' {span} (vLLM's `date`, GuideLLM's `start_time`): the serving estimate takes the engine's "
               "software of that day, not a current build.")
    return day


def _prediction(res: dict, table: pd.DataFrame) -> tuple[pd.DataFrame, dict | None, str | None]:
    """The layout inputs and calc's prediction for a concurrency sweep; the table with the predicted
    columns and ratios (unchanged in rate mode or when calc refuses the inputs, with a message), the
    prediction's inputs (``predicted_decode_step``'s keywords; None without a prediction) and the serving
    estimate's engine (None without a prediction)."""
    P, N = res["prompt_tokens"], res["output_tokens"]
    at_rate = res["mode"] != "concurrency"
    missing = no_prediction_reasons(P, N, res.get("length_fields") or {})
    if missing:
        st.warning(f"No prediction: {formats.md_escape(missing)}.")
        return table, None, None
    sel = sidebar.selection()
    # drawn only once results are in, after the run that checks the opening link: their refused values are named here
    linked = {k: url_state.link_values(k) for k in PREDICTION_CONTROLS}
    layout = dict(tp=1, pp=1, ep=1)
    if parallel_supported():
        c = st.columns(3)
        for i, (k, what) in enumerate((("tp", "tensor-parallel GPUs"), ("pp", "pipeline stages"),
                                        ("ep", "expert-parallel GPUs"))):
            layout[k] = int(c[i].number_input(f"{k}: {what} of the deployment", 1, 64, 1, key=f"ep_{k}",
                                              bind="query-params"))
        layout_text = "layout " + ", ".join(f"{k} = {v}" for k, v in layout.items())
    else:
        layout_text = "one GPU (calc has no parallel layout yet)"
    embedding = getattr(sel, "embedding", "gather")
    cols = st.columns(3)
    engine = serving_views.engine_select(cols[0], "ep_engine")
    own = res.get("source") == OWN_SOURCE
    if at_rate:
        return _rate_prediction(res, table, sel, layout, layout_text, engine, linked)
    url_state.accept_url_values("ep_lengths", list(LENGTH_LABELS), LENGTH_LABELS.get)
    lengths = cols[1].radio(
        "Request lengths of the run", list(LENGTH_LABELS), index=0 if own else 1, key="ep_lengths",
        format_func=LENGTH_LABELS.get, bind="query-params",
        help="How the serving estimate takes the closed loop (benchmark tools differ): fixed lengths (this page's "
             "client: one prompt length, ignore_eos) start the clients together and keep them partly in lockstep, "
             "each level's first round one burst of prompts; varied lengths (ShareGPT, random lengths with a range) "
             "spread the requests out, the steady state. A result file does not say which; its default is varied.")
    sent, version = _level_context(res, table, sel, engine, linked, "concurrency", int)
    at_rates = table[table["concurrency"].isna() & table["request_rate_per_s"].notna()]["request_rate_per_s"]
    if len(at_rates):  # files of both kinds: the prediction follows the concurrencies, and says what it leaves
        st.caption(f"The levels at a request rate ({', '.join(f'{r:g}' for r in sorted(at_rates))} requests/s) are "
                   "shown as measured, without a prediction: with concurrency levels in the same files the "
                   "prediction follows the concurrencies. Load the rate files alone to predict them at each rate.")
    try:
        pred = predict_levels(sel.model, sel.accelerator, table["concurrency"].dropna().astype(int).unique(), P, N,
                              sel.weight_dtype, sel.kv_dtype, embedding=embedding, logits=sel.logits,
                              engine=engine, lengths=lengths, requests=sent, engine_version=version, **layout)
    except ValueError as e:
        st.warning(f"No prediction: {e}")
        return table, None, None
    serving_views.show_notices(pred.attrs.get("notices"))
    if pred.attrs.get("arrivals"):
        st.caption(_arrivals_caption(lengths, sent))
    st.markdown(f"Prediction: **{sel.model.name}** on **{sel.accelerator.name}**, weights {sel.weight_dtype}, "
                f"KV {sel.kv_dtype}, input embedding {embedding}, {sel.logits_short} in prefill (engines such as "
                f"vLLM compute only the last), {layout_text} (the sidebar's choice: pick the "
                f"deployment's model and GPU there), {P} prompt + {N} output tokens. calc's roofline: c prompts "
                "prefilled in one pass (a closed loop of equal requests runs in lockstep), then decode steps of "
                "batch c at the mean context P + N/2; its TPOT is a lower bound, its TTFT (the level's prompts at "
                "once) is not one when requests arrive staggered. The serving estimate (the table's serving-estimate columns, est_ in the CSV) is "
                f"what {measurements.engine_name(engine)} is expected to measure: the bound plus "
                "fixed costs, efficiency, batching interference and queueing (calc.serving, as on the other "
                "pages).")
    st.caption(EAGER_SERVER_CAVEAT)
    inputs = dict(model=sel.model, accelerator=sel.accelerator, prompt_tokens=P, output_tokens=N,
                  weight_dtype=sel.weight_dtype, kv_dtype=sel.kv_dtype, embedding=embedding, lengths=lengths,
                  requests=sent, engine_version=version, **layout)
    return compare(table, pred), dict(inputs, fits=pred.attrs.get("fits", True)), engine


def _level_context(res: dict, table: pd.DataFrame, sel, engine: str, linked: dict, column: str, cast):
    """What a prediction of levels says before it runs: the link's refused values, a file of another model than the
    sidebar's; and what it takes: (the requests each level sent, {level: ok + failed}, its levels by ``column``
    cast by ``cast``; the serving estimate's ``engine_version``, ``_software_date``)."""
    notice = url_state.late_links_notice(linked)
    if notice:
        st.warning(notice, icon=":material/link_off:")
    other = model_mismatch(res.get("model_ids") or [], sel.model)
    if other:
        st.warning(other)
    sent = {cast(v): float(ok) + float(bad if bad == bad else 0.0) for v, ok, bad in
            table[[column, "requests_ok", "requests_failed"]].dropna(subset=[column]).itertuples(index=False)}
    return sent, _software_date(res.get("run_dates") or [], engine)


def _rate_prediction(res: dict, table: pd.DataFrame, sel, layout: dict, layout_text: str, engine: str,
                     linked: dict) -> tuple[pd.DataFrame, dict | None, str | None]:
    """``_prediction`` for levels at a request rate: the serving estimate at each rate and the bound at the decode
    batch it finds (``live.endpoint_predict.predict_rate_levels``), said in words; (table with the predicted columns
    and ratios, the prediction's inputs with ``at_rate`` True, the engine), or (table, None, None) with a message
    where calc refuses the inputs."""
    P, N = res["prompt_tokens"], res["output_tokens"]
    sent, version = _level_context(res, table, sel, engine, linked, "request_rate_per_s", float)
    try:
        pred = predict_rate_levels(sel.model, sel.accelerator, table["request_rate_per_s"].dropna().unique(), P, N,
                                   sel.weight_dtype, sel.kv_dtype, engine=engine, requests=sent,
                                   engine_version=version, **layout)
    except ValueError as e:
        st.warning(f"No prediction: {e}")
        return table, None, None
    serving_views.show_notices(pred.attrs.get("notices"))
    if pred["pred_tpot_ms"].isna().all():
        st.caption("At a request rate the bound is drawn at the decode batch the serving estimate finds; where the "
                   "estimate is refused (above), there is no batch, so no bound either.")
    st.markdown(f"Prediction: **{sel.model.name}** on **{sel.accelerator.name}**, weights {sel.weight_dtype}, "
                f"KV {sel.kv_dtype}, {layout_text} (the sidebar's choice: pick the deployment's model and GPU there), "
                f"{P} prompt + {N} output tokens, requests arriving at each level's rate (Poisson). The serving "
                f"estimate (the table's serving-estimate columns, est_ in the CSV) is what "
                f"{measurements.engine_name(engine)} is expected to measure at that rate: the decode batch B that "
                "Little's law gives (B = rate x E2E(B)), each step's fixed costs, efficiency and other requests' "
                "prefill, and the queue before the first token (calc.serving, as on the other pages); its range "
                "carries the engine's speed through that batch, so it widens near capacity. A rate has no batch of "
                "its own: calc's roofline is drawn at the estimate's batch, a decode step of B sequences for TPOT "
                "and one prompt's prefill for TTFT (requests arrive one by one), with the serving model's "
                "conventions (input embedding gathered, the LM head on the last prompt token), not the sidebar's.")
    st.caption(EAGER_SERVER_CAVEAT)
    inputs = dict(model=sel.model, accelerator=sel.accelerator, prompt_tokens=P, output_tokens=N,
                  weight_dtype=sel.weight_dtype, kv_dtype=sel.kv_dtype, requests=sent, engine_version=version,
                  at_rate=True, **layout)
    return compare(table, pred), dict(inputs, fits=pred.attrs.get("fits", True)), engine


#: The breakdown's name for a level's measured figure (the marker on each bar).
MEASURED_P50 = "measured p50"


def _breakdown(table: pd.DataFrame, inputs: dict | None, engine: str | None) -> None:
    """Below the table: one level's serving estimate (``live.endpoint_predict.level_estimate`` at a concurrency,
    ``rate_level_estimate`` at a request rate: the estimate behind the table's est_ columns) with its range and
    where its time goes, TPOT then TTFT, each bar ending at the level's measured p50 (a marker). The level is chosen
    among those with an estimate, the highest by default: the heaviest load, where batching interference and
    queueing show (the lightest is in the headline above). Nothing without a prediction or an estimate."""
    if inputs is None or engine is None or "est_tpot_ms" not in table:
        return
    kw = {k: inputs[k] for k in ("model", "accelerator", "prompt_tokens", "output_tokens", "weight_dtype",
                                  "kv_dtype", "tp", "pp", "ep", "engine_version")}
    rate = bool(inputs.get("at_rate"))
    picked = _pick_level(table, *(("request_rate_per_s", "ep_rate", "one rate", "Request rate (requests/s)", float,
                                   lambda r: f"{r:,.4g}/s") if rate else
                                  ("concurrency", "ep_level", "one level", "Concurrency level", int, lambda c: f"{c:,}")))
    if picked is None:
        return
    level, lv = picked
    if rate:
        at = f"{level:,.4g} requests/s"
        estimate = lambda: caching.cached_call(  # noqa: E731
            rate_level_estimate, rate_per_s=level, engine=engine,
            num_prompts=(inputs.get("requests") or {}).get(level), **kw)
        batch = lambda est: f"decode batch {est.decode_batch:,.1f} by Little's law"  # noqa: E731
        ttft_words = "one prompt's prefill), serving estimate {} ({}, the queue before the first token included)"
    else:
        at = f"concurrency {level:,}"
        estimate = lambda: caching.cached_call(  # noqa: E731
            level_estimate, concurrency=level, engine=engine, lengths=inputs["lengths"],
            rounds=level_rounds(inputs.get("requests"), level), **kw)
        batch = lambda est: f"{est.batching} batching, decode batch {est.decode_batch:,.0f}"  # noqa: E731
        ttft_words = "one prompt's prefill, not the table's prompts at once), serving estimate {} ({})"
    try:
        est = estimate()
    except ValueError as e:
        widgets.show_error(e)
        return
    tpot_s, ttft_s = lv["tpot_ms_p50"] / 1e3, lv["ttft_ms_p50"] / 1e3
    serving_views.show_estimate(
        dataclasses.replace(est, notices=(), arrivals=""),  # its notices and convention are shown above
        "ep_est", which="tpot", measured_s=tpot_s, measured_label=MEASURED_P50, engine_version=kw["engine_version"],
        title=f"**TPOT at {at}: serving estimate ({measurements.engine_name(est.engine)}, {batch(est)}) beside the "
              "bound and the measurement**")
    st.markdown(_measured_text("TPOT", tpot_s, est.tpot))
    st.markdown(f"**TTFT at {at}**: bound {formats.fmt_seconds(est.ttft.bound_s)} ("
                + ttft_words.format(formats.fmt_seconds(est.ttft.estimate_s),
                                    serving_views.range_text(est.ttft.low_s, est.ttft.high_s)))
    charts.show_chart(serving_views.breakdown_figure(est, "ttft", ttft_s, MEASURED_P50), key="ep_est_ttft_bar")
    st.markdown(_measured_text("TTFT", ttft_s, est.ttft))


def _pick_level(table: pd.DataFrame, column: str, key: str, what: str, label: str, cast, fmt):
    """The breakdown's level: a radio (URL-bound as ``key``) over the values of ``column`` ("concurrency" or
    "request_rate_per_s", each cast by ``cast``) of the rows with an estimate, the highest by default, a link's
    refused value named; (level, its table row), or None where no row has an estimate."""
    rows = table[table[column].notna() & table["est_tpot_ms"].notna()]
    if rows.empty:
        return None
    levels = sorted({cast(v) for v in rows[column]})
    st.markdown(f"**Where the time goes at {what}**: the serving estimate's parts, its range and the level's "
                "measured p50")
    linked = url_state.link_values(key)  # a link's level, taken or refused by the radio below
    url_state.accept_url_values(key, levels)
    if st.session_state.get(key) is not None and st.session_state[key] not in levels:
        del st.session_state[key]  # a level of an earlier file: the default again
    level = st.radio(label, levels, index=len(levels) - 1, key=key, bind="query-params", horizontal=True,
                     format_func=fmt, help="The level whose serving estimate is broken down (the highest by default).")
    # drawn only once a file is read, after the run that checks the opening link (app.py): its notice is here
    notice = url_state.late_link_notice(key, linked)
    if notice:
        st.warning(notice, icon=":material/link_off:")
    return level, rows[rows[column] == level].iloc[0]


def _measured_text(name: str, measured_s: float, tb) -> str:
    """'Measured p50 TPOT: 13.00 ms, 1.15x the serving estimate, inside its range' (a ``TimeBreakdown``'s
    estimate and range); "not measured at this level" when the figure is missing (NaN)."""
    if not measured_s == measured_s:
        return f"Measured p50 {name}: not measured at this level."
    where = ("inside its range" if tb.low_s <= measured_s <= tb.high_s else
             "below its range" if measured_s < tb.low_s else "above its range")
    return (f"Measured p50 {name}: **{formats.fmt_seconds(measured_s)}**, {measured_s / tb.estimate_s:.2f}x the "
            f"serving estimate, {where}.")


def _show(res: dict) -> None:
    table = levels_frame(res["levels"])
    errors = [(lv.get("concurrency", lv.get("request_rate_per_s")), msg, n)
              for lv in res["levels"] for msg, n in (lv.get("errors") or {}).items()]
    error_list = "\n".join(f"- level {lv:g}: {n} x {formats.md_escape(msg)}" for lv, msg, n in errors)
    if not (table["requests_ok"] > 0).any():
        st.error("Every request failed:\n\n" + error_list if errors else "No request finished.")
        for note in res["notes"]:
            st.caption(note)
        return
    st.subheader("Measured against predicted")
    for note in res["notes"]:
        st.caption(note)
    table, inputs, engine = _prediction(res, table)
    _headline(table, inputs)
    st.latex(r"\text{TPOT} = (\text{E2E} - \text{TTFT}) \,/\, (n_\text{out} - 1), \qquad "
             r"\text{ITL} = \text{every gap between content chunks}")
    st.caption(f"Source: {res['source']}. Definitions of vLLM's `vllm bench serve`: TTFT to the first chunk with "
               "output text; TPOT per request from the usage's token count; ITL pooled over all requests, one value "
               "per chunk (a chunk carrying k tokens is one gap; the CSV also has per-token gaps). Times are seen "
               "by the measuring client: network and queueing included.")
    c = st.columns(2)
    for i, metric in enumerate(("ttft", "tpot")):
        fig = metric_figure(table, metric)
        if fig is not None:
            with c[i]:
                spread = "bar: p50 to p90" if table.get(f"{metric}_ms_p90", pd.Series(dtype=float)).notna().any() \
                    else "p50 and p99: the file has no p90"
                st.markdown(f"**{metric.upper()} against load** ({spread})")
                charts.show_chart(fig, key=f"ep_chart_{metric}")
    fig = itl_figure({str(k): v for k, v in res["itl_ms"].items()})
    if fig is not None:
        st.markdown("**Inter-token latency distribution** (every chunk gap, per level)")
        charts.show_chart(fig, key="ep_chart_itl")
    first = ["concurrency", "request_rate_per_s", "requests_ok", "requests_failed", "ttft_ms_p50", "pred_ttft_ms",
             "est_ttft_ms", "est_ttft_ms_low", "est_ttft_ms_high", "ratio_ttft", "ratio_ttft_est", "tpot_ms_p50", "pred_tpot_ms", "est_tpot_ms",
             "est_tpot_ms_low", "est_tpot_ms_high", "ratio_tpot", "ratio_tpot_est", "itl_ms_p50", "e2e_ms_p50",
             "output_tokens_per_s"]
    shown = table[[c for c in first if c in table] + [c for c in table if c not in first]].dropna(axis=1, how="all")
    labels = dict(COLUMNS, **RATE_COLUMNS) if (inputs or {}).get("at_rate") else COLUMNS
    st.dataframe(shown, hide_index=True, key="ep_table",
                 column_config={k: v for k, v in labels.items() if k in shown.columns})
    downloads.download_csv(table, "endpoint_levels.csv", key="ep_csv")
    _breakdown(table, inputs, engine)
    if errors:
        st.error("Failed requests:\n\n" + error_list)
    if res["samples"]:
        with st.expander("Every request"):
            samples = pd.DataFrame(res["samples"])
            st.dataframe(samples, hide_index=True, key="ep_samples")
            downloads.download_csv(samples, "endpoint_requests.csv", key="ep_samples_csv")


def render() -> None:
    """Draw the endpoint section (called by the live page when the user picks "an endpoint")."""
    url_state.reads_later(RESULT_CONTROLS)
    st.markdown("Measure a **serving deployment** (vLLM, SGLang, TGI, llama.cpp's server, `transformers serve`, "
                "a hosted API): TTFT, TPOT and ITL as load grows, streamed through its OpenAI-compatible API, beside "
                "calc's prediction for the same model and GPU.")
    source = st.segmented_control("Results from", ["a run from here", "a result file"], default="a run from here",
                                  key="ep_src", bind="query-params")
    res = _import_section() if source == "a result file" else _run_section()  # None (deselected): a run
    if res is not None:
        if not res["levels"]:
            st.warning("No level finished.")
        else:
            _show(res)
