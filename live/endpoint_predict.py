"""calc's prediction for an endpoint's load levels, the measured/predicted table, and imported result files.

Pure (numpy, pandas, calc): the page and the tests call it; nothing here opens a connection.

Prediction for a closed loop of c requests with P prompt and N output tokens each: with equal lengths
and fixed output (``ignore_eos``), the c requests start, prefill, decode and finish together, so each
round prefills c prompts in one pass and then decodes c sequences per step:

- TTFT(c) = ``prefill_time(model, gpu, P, batch=c).total_s`` (roofline, DESIGN.md: compute 2 N B T +
  attention, bytes = weights + KV written);
- TPOT(c) = ``decode_step_time(model, gpu, batch=c, context_len=P + N/2).total_s`` (the mean context
  over the decode; the napkin model of the inference course, week 1 step 4);
- E2E(c) = TTFT + (N - 1) TPOT; output tokens/s = c N / E2E.

Both are lower bounds for this lockstep loop (a roofline ignores scheduling, kernel launch and network time): a
measured / predicted ratio above 1 is the usual case, 1.2-2x for a well-tuned engine. TTFT(c) is not a lower
bound when requests arrive staggered (continuous batching): each prompt then prefills nearly alone, faster than
c prompts at once.

Beside the bound, the serving model (``calc.serving.serving_estimate``, the same estimate as the other
pages) predicts what an engine measures at each concurrency: columns ``est_ttft_ms`` and ``est_tpot_ms`` (each
with ``_low`` / ``_high``, the range from the cross-validated errors), ``est_e2e_ms`` and
``est_output_tokens_per_s``; ``compare`` adds measured / estimate ratios ``ratio_ttft_est``,
``ratio_tpot_est``.

Levels at a request rate (an open loop, Poisson arrivals) have no batch of their own: ``predict_rate_levels`` takes
the serving estimate at each rate and draws the bound at the decode batch that estimate finds by Little's law
(``B = rate x e2e(B)``), one prompt's prefill for TTFT.
"""
from __future__ import annotations

import datetime
import inspect
import json
import math

import numpy as np
import pandas as pd

from calc import decode_step_time, prefill_time
from calc.serving import make_layout, max_batch_per_replica, serving_estimate

#: Columns of a levels table (measured, imported or predicted), times in ms.
LEVEL_COLUMNS = ("concurrency", "request_rate_per_s", "requests_ok", "requests_failed", "output_tokens_per_s",
                 "request_throughput_per_s", "goodput_per_s", "duration_s", "prompt_tokens_mean", "output_tokens_mean",
                 "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99", "tpot_ms_p50", "tpot_ms_p90", "tpot_ms_p99",
                 "itl_ms_p50", "itl_ms_p90", "itl_ms_p99", "itl_per_token_ms_p50", "itl_per_token_ms_p90",
                 "itl_per_token_ms_p99", "e2e_ms_p50", "e2e_ms_p90", "e2e_ms_p99")


#: The serving estimate's columns of ``predict_levels`` (ms, tokens/s), in the order the CSV keeps them.
ESTIMATE_COLUMNS = ("est_ttft_ms", "est_ttft_ms_low", "est_ttft_ms_high", "est_tpot_ms", "est_tpot_ms_low",
                    "est_tpot_ms_high", "est_e2e_ms", "est_output_tokens_per_s")


def parallel_supported() -> bool:
    """Whether calc's ``decode_step_time`` and ``prefill_time`` take the parallel layout (``tp``, ``pp``, ``ep``)."""
    return all({"tp", "pp", "ep"} <= set(inspect.signature(f).parameters) for f in (decode_step_time, prefill_time))


def predict_levels(model, accelerator, concurrencies, prompt_tokens: int, output_tokens: int,
                   weight_dtype: str = "bf16", kv_dtype: str = "bf16", tp: int = 1, pp: int = 1,
                   ep: int = 1, embedding: str = "gather", logits: str = "all", engine: str = "vllm",
                   lengths: str = "varied", requests: dict | None = None, engine_version: str = "") -> pd.DataFrame:
    """calc's roofline TTFT, TPOT and E2E (ms) and output tokens/s for each closed-loop concurrency, and the
    serving model's estimate for ``engine`` (``est_*`` columns, NaN where the serving model refuses the inputs,
    e.g. a model that does not fit with the engine's memory share; ``attrs["notices"]``: its fallbacks;
    ``attrs["fits"]``: whether one request of P + N tokens fits beside the weights on the layout's GPUs,
    ``calc.serving.max_batch_per_replica`` >= 1, else the bound is a time "if it fit").

    Shapes: one row per concurrency, columns ``concurrency``, ``pred_ttft_ms``, ``pred_tpot_ms``,
    ``pred_e2e_ms``, ``pred_output_tokens_per_s``, then ``ESTIMATE_COLUMNS`` (``level_estimate``'s figures:
    estimate and range of TTFT and TPOT, E2E, output tokens/s). Formulas in the module docstring; ``tp``, ``pp``,
    ``ep`` are the deployment's parallel layout, passed to calc (per-GPU shares plus collectives);
    ``embedding``: calc's convention for the input embedding ("gather": B rows read, as engines do;
    "table": the course's napkin, the whole table read every step); ``logits``: which prompt tokens
    prefill's LM head multiplies ("all": the course's 2NT; "last": each prompt's last token, as vLLM
    and SGLang compute it; calc.prefill_time). ``lengths`` and ``requests`` ({concurrency: requests sent at that
    level}) give the serving estimate the run's convention (``calc.serving.serving_estimate``'s ``lengths`` and
    ``rounds`` = requests / concurrency): "fixed" for this page's client (one prompt length, ``ignore_eos``: the
    clients move in lockstep), "varied" (the steady state) for a run whose lengths spread; ``attrs["arrivals"]``
    names the convention followed. ``engine_version``: the engine's release or a date ("2025-01-15": the software of
    that day, as a result file's ``run_date``), ``serving_estimate``'s; "" a current build.
    Worked number: Llama-3-8B, H100 SXM, bf16, P = 8160, N = 64, c = 1: TPOT = weights 16.06e9 B +
    KV 1.07e9 B at 3.35e12 B/s = 5.1 ms (4.8 ms when one row of the input embedding is read).

    Raises:
        ValueError: bad concurrencies, token counts or layout (calc's messages), or a layout other
        than one GPU while calc has no parallel layout.
    """
    kw = _calc_kwargs(tp, pp, ep, embedding)
    rows, notices, arrivals = [], [], []
    prefill_kw = dict(kw, logits=logits)
    for c in concurrencies:
        c = int(c)
        ctx = int(prompt_tokens + output_tokens // 2)
        ttft = prefill_time(model, accelerator, int(prompt_tokens), batch=c, weight_dtype=weight_dtype,
                            kv_dtype=kv_dtype, **prefill_kw).total_s
        tpot = decode_step_time(model, accelerator, c, ctx, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                                **kw).total_s
        e2e = ttft + (output_tokens - 1) * tpot
        row = dict(concurrency=c, pred_ttft_ms=ttft * 1e3, pred_tpot_ms=tpot * 1e3, pred_e2e_ms=e2e * 1e3,
                   pred_output_tokens_per_s=c * output_tokens / e2e)
        rounds = level_rounds(requests, c)
        row.update(_estimate_columns(model, accelerator, c, prompt_tokens, output_tokens, weight_dtype, kv_dtype,
                                     tp, pp, ep, engine, notices, lengths, rounds, arrivals, engine_version))
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["notices"] = tuple(notices)
    df.attrs["arrivals"] = tuple(arrivals)
    # whether one request of the level's length fits beside the weights (calc's memory ceiling, as the roofline
    # page's "if it fit"); a layout calc refuses has already raised above
    df.attrs["fits"] = max_batch_per_replica(model, accelerator, int(prompt_tokens + output_tokens),
                                             make_layout(model, tp, pp, ep), weight_dtype, kv_dtype) >= 1
    return df


def predict_rate_levels(model, accelerator, rates_per_s, prompt_tokens: int, output_tokens: int,
                        weight_dtype: str = "bf16", kv_dtype: str = "bf16", tp: int = 1, pp: int = 1, ep: int = 1,
                        engine: str = "vllm", requests: dict | None = None, engine_version: str = "") -> pd.DataFrame:
    """The prediction for levels at a request rate (Poisson arrivals, an open loop: ``vllm bench serve
    --request-rate``, GuideLLM's poisson and constant rates): the serving model at each rate
    (``rate_level_estimate``), and beside it the roofline bound at the decode batch that estimate finds by Little's
    law (``B = rate x e2e(B)``, ``calc.serving``): a decode step of that batch at the mean context for TPOT, one
    prompt's prefill for TTFT (arrivals at a rate come one by one), E2E = TTFT + (N - 1) TPOT. A rate has no batch
    of its own, so the bound follows the estimate's; where the serving model refuses the inputs (a model that does
    not fit, a rate above what the deployment serves) both are NaN and ``attrs["notices"]`` says why, once.

    Shapes: one row per rate, columns ``request_rate_per_s``, ``pred_ttft_ms``, ``pred_tpot_ms``, ``pred_e2e_ms``,
    ``pred_output_tokens_per_s`` (the rate x N the deployment delivers, within its capacity), ``est_decode_batch``,
    then ``ESTIMATE_COLUMNS``; ``attrs`` as ``predict_levels``' (``fits``: calc's memory ceiling; ``arrivals``
    empty: a rate has no closed-loop convention). ``requests``: {rate: requests sent at that level}, the run's
    ``num_prompts`` (never more in flight than it sends).

    Raises:
        ValueError: a layout calc refuses (``make_layout``'s message).
    """
    layout = make_layout(model, int(tp), int(pp), int(ep))
    rows, notices = [], []
    for rate in rates_per_s:
        rate = float(rate)
        row = dict(request_rate_per_s=rate)
        try:
            est = rate_level_estimate(model, accelerator, rate, prompt_tokens, output_tokens, weight_dtype, kv_dtype,
                                      tp, pp, ep, engine, (requests or {}).get(rate), engine_version)
        except ValueError as exc:
            text = f"no serving estimate: {str(exc).rstrip('.')}"
            if text not in notices:
                notices.append(text)
            row.update(dict.fromkeys(("pred_ttft_ms", "pred_tpot_ms", "pred_e2e_ms", "pred_output_tokens_per_s",
                                      "est_decode_batch") + ESTIMATE_COLUMNS, math.nan))
            rows.append(row)
            continue
        notices.extend(n for n in est.notices if n not in notices)
        ttft, tpot = est.ttft.bound_s, est.tpot.bound_s
        row.update(pred_ttft_ms=ttft * 1e3, pred_tpot_ms=tpot * 1e3,
                   pred_e2e_ms=(ttft + (int(output_tokens) - 1) * tpot) * 1e3,
                   pred_output_tokens_per_s=rate * int(output_tokens), est_decode_batch=est.decode_batch,
                   **_estimate_values(est))
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["notices"], df.attrs["arrivals"] = tuple(notices), ()
    df.attrs["fits"] = max_batch_per_replica(model, accelerator, int(prompt_tokens + output_tokens), layout,
                                             weight_dtype, kv_dtype) >= 1
    return df


def rate_level_estimate(model, accelerator, rate_per_s: float, prompt_tokens: int, output_tokens: int,
                        weight_dtype: str = "bf16", kv_dtype: str = "bf16", tp: int = 1, pp: int = 1, ep: int = 1,
                        engine: str = "vllm", num_prompts: float | None = None, engine_version: str = ""):
    """The serving estimate behind ``predict_rate_levels``' ``est_*`` columns at one request rate (requests/s over
    the deployment, Poisson arrivals): a ``calc.serving.ServingEstimate`` (times in s) of ``serving_estimate`` at
    ``request_rate_per_s``, with ``num_prompts`` the level's requests where known (a run never holds more in
    flight) and its range carried through Little's law (``calc.serving.rate_range``).

    Raises:
        ValueError: the serving model refuses the inputs (calc.serving's message: a model that does not fit, a rate
        beyond what the deployment serves).
    """
    n = int(num_prompts) if num_prompts and num_prompts == num_prompts and num_prompts >= 1 else None
    return serving_estimate(model, accelerator, int(prompt_tokens), int(output_tokens),
                            request_rate_per_s=float(rate_per_s), tp=int(tp), pp=int(pp), ep=int(ep),
                            weight_dtype=weight_dtype, kv_dtype=kv_dtype, engine=engine, num_prompts=n,
                            engine_version=engine_version)


def level_rounds(requests: dict | None, concurrency: int) -> float | None:
    """A level's rounds for ``serving_estimate``: the requests it sent (``requests``: {concurrency: requests}) over
    its concurrency, at least 1; None where the level's count is unknown."""
    sent = (requests or {}).get(int(concurrency))
    return max(float(sent) / int(concurrency), 1.0) if sent and sent == sent else None


def _estimate_columns(model, accelerator, c, prompt_tokens, output_tokens, weight_dtype, kv_dtype, tp, pp, ep,
                      engine, notices: list, lengths: str = "varied", rounds=None, arrivals: list | None = None,
                      engine_version: str = "") -> dict:
    """The serving estimate's columns at concurrency ``c`` (NaN when the serving model refuses the inputs)."""
    try:
        est = level_estimate(model, accelerator, c, prompt_tokens, output_tokens, weight_dtype, kv_dtype, tp, pp, ep,
                             engine, lengths, rounds, engine_version)
    except ValueError as exc:
        text = f"no serving estimate: {str(exc).rstrip('.')}"  # once, however many levels it refuses
        if text not in notices:
            notices.append(text)
        return dict.fromkeys(ESTIMATE_COLUMNS, math.nan)
    notices.extend(n for n in est.notices if n not in notices)
    if arrivals is not None and est.arrivals and est.arrivals not in arrivals:
        arrivals.append(est.arrivals)
    return _estimate_values(est)


def _estimate_values(est) -> dict:
    """``ESTIMATE_COLUMNS`` of one ``ServingEstimate`` (ms, tokens/s)."""
    return dict(est_ttft_ms=est.ttft.estimate_s * 1e3, est_ttft_ms_low=est.ttft.low_s * 1e3,
                est_ttft_ms_high=est.ttft.high_s * 1e3, est_tpot_ms=est.tpot.estimate_s * 1e3,
                est_tpot_ms_low=est.tpot.low_s * 1e3, est_tpot_ms_high=est.tpot.high_s * 1e3,
                est_e2e_ms=est.e2e_s * 1e3, est_output_tokens_per_s=est.output_tokens_per_s)


def level_estimate(model, accelerator, concurrency: int, prompt_tokens: int, output_tokens: int,
                   weight_dtype: str = "bf16", kv_dtype: str = "bf16", tp: int = 1, pp: int = 1, ep: int = 1,
                   engine: str = "vllm", lengths: str = "varied", rounds: float | None = None,
                   engine_version: str = ""):
    """The serving estimate behind ``predict_levels``' ``est_*`` columns at one concurrency: a
    ``calc.serving.ServingEstimate`` (times in s; ``est_ttft_ms`` is ``ttft.estimate_s`` * 1e3,
    ``est_ttft_ms_low`` / ``_high`` are ``ttft.low_s`` / ``high_s`` * 1e3, the same for TPOT) for requests of
    ``prompt_tokens`` prompt and ``output_tokens`` output tokens at ``concurrency`` in flight, ``engine``'s
    fitted parameters (calc.serving, continuous batching), under the run's ``lengths`` and ``rounds`` (requests sent
    over the concurrency; ``serving_estimate``'s closed-loop convention) and ``engine_version`` (its release or a
    date, ``serving_estimate``'s). The page draws its "where the time goes"
    from it.

    Raises:
        ValueError: the serving model refuses the inputs (calc.serving's message, e.g. a model that does not
        fit with the engine's memory share).
    """
    return serving_estimate(model, accelerator, int(prompt_tokens), int(output_tokens), concurrency=int(concurrency),
                            tp=int(tp), pp=int(pp), ep=int(ep), weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            engine=engine, lengths=lengths, rounds=rounds, engine_version=engine_version)


def _calc_kwargs(tp: int, pp: int, ep: int, embedding: str) -> dict:
    kw = {}
    if (tp, pp, ep) != (1, 1, 1):
        if not parallel_supported():
            raise ValueError("calc has no parallel layout yet: the prediction is for one GPU (tp = pp = ep = 1)")
        kw = {"tp": int(tp), "pp": int(pp), "ep": int(ep)}
    if "embedding" in inspect.signature(prefill_time).parameters:
        kw["embedding"] = embedding
    return kw


def predicted_decode_step(model, accelerator, concurrency: int, prompt_tokens: int, output_tokens: int,
                          weight_dtype: str = "bf16", kv_dtype: str = "bf16", tp: int = 1, pp: int = 1,
                          ep: int = 1, embedding: str = "gather"):
    """The decode step behind ``predict_levels``' ``pred_tpot_ms`` at one concurrency, term by term
    (calc.StepTime: ``kv_s``, ``weights_s``, ``compute_s``, ``comm_s``, ``flops``; ``total_s`` * 1e3 is
    ``pred_tpot_ms``): batch c at the mean context P + N // 2 (the module docstring).

    Raises:
        ValueError: as ``predict_levels``.
    """
    ctx = int(prompt_tokens + output_tokens // 2)
    return decode_step_time(model, accelerator, int(concurrency), ctx, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            **_calc_kwargs(tp, pp, ep, embedding))


def tpot_from_p50s_ms(level) -> float:
    """(E2E p50 - TTFT p50) / (mean output tokens - 1), in ms: the TPOT definition applied to a level's
    p50 figures (vLLM's ``benchmark_serving``: TPOT = (E2E - TTFT) / (output tokens - 1) per request). A
    check beside the level's TPOT p50, which is the p50 of the per-request quotients, so the two differ
    a little. NaN with fewer than 2 output tokens or a missing figure."""
    n = float(level["output_tokens_mean"])
    e2e, ttft = float(level["e2e_ms_p50"]), float(level["ttft_ms_p50"])
    if not (n > 1) or math.isnan(e2e) or math.isnan(ttft):
        return math.nan
    return (e2e - ttft) / (n - 1)


def compare(levels: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """Measured levels joined with the prediction on ``concurrency`` (``predict_levels``) or on
    ``request_rate_per_s`` (``predict_rate_levels``), with ``ratio_ttft``, ``ratio_tpot``
    and ``ratio_e2e`` = measured p50 / predicted (1 = exact; above 1 slower than predicted), and with the
    serving estimate's columns, ``ratio_ttft_est``, ``ratio_tpot_est``, ``ratio_e2e_est`` = measured p50 /
    estimate (the estimate predicts a mean; p50 is the nearest figure a result file always has)."""
    key = "concurrency" if "concurrency" in predicted else "request_rate_per_s"
    out = levels.merge(predicted, on=key, how="left")
    for m in ("ttft", "tpot", "e2e"):
        out[f"ratio_{m}"] = out[f"{m}_ms_p50"] / out[f"pred_{m}_ms"]
        if f"est_{m}_ms" in out:
            out[f"ratio_{m}_est"] = out[f"{m}_ms_p50"] / out[f"est_{m}_ms"]
    return out


def levels_frame(levels: list[dict]) -> pd.DataFrame:
    """A list of level dicts (``EndpointRun.levels`` or an import) as a table with ``LEVEL_COLUMNS``
    (missing columns NaN; the order kept)."""
    df = pd.DataFrame(levels)
    for col in LEVEL_COLUMNS:
        if col not in df:
            df[col] = np.nan
    return df[list(LEVEL_COLUMNS)]


# -- imports ---------------------------------------------------------------------------------------------
class ResultValueError(ValueError):
    """A result file of a format this page reads whose figures are impossible (the message names each field
    and its value); ``read_result_file`` passes it on as it is rather than trying the other format."""


#: What each kind of figure must be, in the words of the refusal: times, counts, load levels.
_KIND_RULE = {"time": "a time must be 0 ms or more", "count": "a count must be 0 or more",
              "rate": "a rate must be above 0", "load": "a mean concurrency must be above 0",
              "concurrency": "a concurrency must be a positive whole number"}
#: The largest figure of any kind a result file may give, in the file's own unit: 1e12 ms is 32 years, 1e12 tokens
#: or requests a trillion, past any benchmark run; a larger value is a corrupt or hand-made file, and the page
#: would otherwise print it with hundreds of digits.
MAX_FIGURE = 1e12


class _Figures:
    """The one check of every figure a result file gives, whatever its format: ``get`` turns the file's value into
    a float and keeps a refusal for each value that is not a number, not finite, outside its kind's range
    (``_KIND_RULE``) or above ``MAX_FIGURE``; ``done`` raises them all at once, so that one correction is enough."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def get(self, value, field: str, kind: str, scale: float = 1.0) -> float:
        """``value`` (the file's, named ``field`` in the file) as a float times ``scale``; NaN when absent (None,
        as a JSON null or a missing field), and NaN with a refusal when impossible for ``kind``."""
        if value is None:
            return math.nan
        try:
            v = math.nan if isinstance(value, bool) else float(value)
        except (TypeError, ValueError, OverflowError):
            v = math.nan
        shown = json.dumps(value) if isinstance(value, str) else repr(value)
        if math.isnan(v):
            self.problems.append(f"the file's {field} is {_cut(shown)}, not a number")
        elif not math.isfinite(v):
            self.problems.append(f"the file's {field} is {shown}, not a finite number (too large to hold, as 1e400 is)")
        elif (kind == "count" and v < 0) or (kind == "time" and v < 0) or (kind in ("rate", "load") and not v > 0) or (
                kind == "concurrency" and not (v > 0 and v == int(v))):
            self.problems.append(f"the file's {field} is {value:g}; {_KIND_RULE[kind]}")
        elif v > MAX_FIGURE:
            self.problems.append(f"the file's {field} is {v:.3g}; no benchmark measures past 1e12 (32 years in ms, "
                                 "a trillion tokens or requests)")
        else:
            return v * scale
        return math.nan

    def done(self, what: str) -> None:
        """Raise ``ResultValueError`` naming every refused figure of ``what`` (the file's format), if any."""
        if self.problems:
            raise ResultValueError(f"{what} has impossible figures: " + "; ".join(self.problems) + ".")


def _cut(text: str, chars: int = 40) -> str:
    return text[:chars] + ("…" if len(text) > chars else "")


def _documents(text: str) -> list:
    """One JSON document, or JSON lines (``--append-result`` writes one result per line)."""
    text = text.strip()
    if not text:
        raise ValueError("the file is empty")
    try:
        doc = json.loads(text)
        return doc if isinstance(doc, list) else [doc]
    except ValueError:
        pass
    docs = []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                docs.append(json.loads(line))
            except ValueError as e:
                raise ValueError(f"line {i} is not JSON ({e.msg})") from None
    return docs


def run_date(value) -> str | None:
    """The day a result file's run took place, "YYYY-MM-DD", from the file's own field: ``vllm bench serve``'s
    ``date`` ("%Y%m%d-%H%M%S", vllm/benchmarks/serve.py ``main_async``; "2025-01-15 14:30:12" in some forks) or a
    GuideLLM benchmark's ``start_time`` (seconds since the epoch, UTC); None when the value is missing, not one of
    these or not a real day. The page passes it to the serving estimate as ``engine_version`` (the software of
    that day, ``calc.serving.serving_estimate``).
    Example: run_date("20250115-143012") = "2025-01-15"; run_date(1736951412.5) = "2025-01-15"."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or not 0 < value < 32503680000:  # before the year 3000
            return None
        return datetime.datetime.fromtimestamp(float(value), tz=datetime.timezone.utc).date().isoformat()
    text = str(value).strip()[:40]
    for fmt, width in (("%Y%m%d", 8), ("%Y-%m-%d", 10)):
        try:
            return datetime.datetime.strptime(text[:width], fmt).date().isoformat()
        except ValueError:
            continue
    return None


def read_vllm_result(text: str) -> list[dict]:
    """Levels from ``vllm bench serve --save-result`` files (one JSON object per run; JSON lines allowed).

    Fields read (vllm/benchmarks/serve.py, ``benchmark()``'s result dict and ``main_async``'s
    ``result_json``): ``max_concurrency``, ``request_rate``, ``completed``, ``failed``, ``duration``,
    ``output_throughput``, ``request_throughput``, ``total_input_tokens``, ``total_output_tokens``,
    ``median_/p90_/p99_{ttft,tpot,itl,e2el}_ms`` (a percentile missing from the file's
    ``--metric-percentiles`` is NaN), ``model_id`` (the level's ``model_id``, "" when absent), ``date`` (the level's
    ``run_date``, ``run_date``), and with
    ``--save-detailed`` the per-request ``itls`` (seconds).
    vLLM's TPOT and ITL are this page's definitions. Levels are sorted by concurrency then rate.

    Raises:
        ValueError: not JSON, or no object with vLLM's fields (the message says which are missing).
    """
    out, figures = [], _Figures()
    for doc in _documents(text):
        if not isinstance(doc, dict) or "median_ttft_ms" not in doc or "completed" not in doc:
            raise ValueError("this is not a `vllm bench serve --save-result` file: it needs the fields "
                             "completed and median_ttft_ms (run with the default --percentile-metrics)")
        get = figures.get
        completed = get(doc.get("completed"), "completed", "count")
        completed = int(completed) if completed == completed else 0
        rate = doc.get("request_rate")
        total_in = get(doc.get("total_input_tokens"), "total_input_tokens", "count")
        total_out = get(doc.get("total_output_tokens"), "total_output_tokens", "count")
        failed = get(doc.get("failed"), "failed", "count")
        model_id = doc.get("model_id")
        lv = {"concurrency": get(doc.get("max_concurrency"), "max_concurrency", "concurrency"),
              "source": "vllm bench serve", "model_id": model_id if isinstance(model_id, str) else "",
              "run_date": run_date(doc.get("date")),
              "request_rate_per_s": math.nan if rate in (None, "inf") else get(rate, "request_rate", "rate"),
              "requests_ok": completed, "requests_failed": int(failed) if failed == failed else 0,
              "duration_s": get(doc.get("duration"), "duration", "time"),
              "output_tokens_per_s": get(doc.get("output_throughput"), "output_throughput", "count"),
              "request_throughput_per_s": get(doc.get("request_throughput"), "request_throughput", "count"),
              "prompt_tokens_mean": total_in / completed if completed else math.nan,
              "output_tokens_mean": total_out / completed if completed else math.nan,
              "length_fields": {"prompt": f"total_input_tokens {_g(doc.get('total_input_tokens'))}",
                                "output": f"total_output_tokens {_g(doc.get('total_output_tokens'))}"}}
        for ours, theirs in (("ttft", "ttft"), ("tpot", "tpot"), ("itl", "itl"), ("e2e", "e2el")):
            for p, field in (("p50", f"median_{theirs}_ms"), ("mean", f"mean_{theirs}_ms"),
                             ("p90", f"p90_{theirs}_ms"), ("p99", f"p99_{theirs}_ms")):
                lv[f"{ours}_ms_{p}"] = get(doc.get(field), field, "time")
        itls = doc.get("itls")
        if isinstance(itls, list):
            lv["itl_ms"] = [float(g) * 1e3 for req in itls if isinstance(req, list) for g in req]
        out.append(lv)
    figures.done("This vllm bench serve result")
    return sorted(out, key=lambda d: (np.nan_to_num(d["concurrency"], nan=1e18),
                                      np.nan_to_num(d["request_rate_per_s"], nan=1e18)))


def _g(value) -> str:
    """A file's value as a message names it: a number as %g, "missing" for None, anything else as written."""
    if value is None:
        return "missing"
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else _cut(str(value))


def _dist(metrics: dict, name: str, status: str = "successful") -> dict:
    d = metrics.get(name) or {}
    return (d.get(status) or {}) if isinstance(d, dict) else {}


def read_guidellm_report(text: str) -> list[dict]:
    """Levels from a GuideLLM JSON report (``guidellm benchmark --output-path report.json``).

    Structure read (vllm-project/guidellm, ``src/guidellm/benchmark/schemas/generative/metrics.py``
    and ``src/guidellm/schemas/statistics.py``): ``benchmarks[i].metrics.<metric>.successful`` is a
    distribution with ``median``, ``mean`` and ``percentiles.p90/p99``; the level is
    ``benchmarks[i].config.strategy`` (``streams`` for concurrent, ``rate`` for constant/poisson),
    else the mean measured ``request_concurrency``. Conventions differ (reference: GuideLLM's
    ``inter_token_latency_ms`` is vLLM's TPOT, its ``time_per_output_token_ms`` includes the TTFT):
    TPOT here is read from ``inter_token_latency_ms``; GuideLLM has no per-chunk ITL, so ITL is NaN.
    A benchmark's ``start_time`` (or ``run_stats.start_time``, epoch seconds) gives the level's ``run_date``.

    Raises:
        ValueError: not JSON or no ``benchmarks`` list with ``metrics``.
    """
    docs = _documents(text)
    doc = docs[0] if len(docs) == 1 else {"benchmarks": docs}
    benches = doc.get("benchmarks") if isinstance(doc, dict) else None
    if not isinstance(benches, list) or not benches or not all(isinstance(b, dict) and "metrics" in b for b in benches):
        raise ValueError("this is not a GuideLLM JSON report: it needs a benchmarks list whose entries have metrics")
    out, figures = [], _Figures()
    for i, b in enumerate(benches):
        m = b["metrics"]
        get = figures.get
        at = f"benchmarks[{i}]" if len(benches) > 1 else "benchmarks[0]"
        strat = ((b.get("config") or {}).get("strategy") or {}) if isinstance(b.get("config"), dict) else {}
        conc, conc_field, conc_kind = strat.get("streams"), "config.strategy.streams", "concurrency"
        if conc is None and strat.get("type_") == "synchronous":
            conc = 1
        if conc is None and strat.get("rate") is None:
            conc, conc_field, conc_kind = (_dist(m, "request_concurrency").get("mean"),
                                           "metrics.request_concurrency.successful.mean", "load")
        totals = m.get("request_totals") or {}
        counts = {k: get(totals.get(k), f"{at}.metrics.request_totals.{k}", "count")
                  for k in ("successful", "errored", "incomplete")}
        counts = {k: 0 if math.isnan(v) else int(v) for k, v in counts.items()}

        def mean(name, kind="count"):
            return get(_dist(m, name).get("mean"), f"{at}.metrics.{name}.successful.mean", kind)

        lv = {"concurrency": get(conc, f"{at}.{conc_field}", conc_kind),
              "request_rate_per_s": get(strat.get("rate"), f"{at}.config.strategy.rate", "rate"),
              "source": "GuideLLM", "requests_ok": counts["successful"],
              "run_date": run_date(b.get("start_time") if b.get("start_time") is not None
                                   else (b.get("run_stats") or {}).get("start_time")
                                   if isinstance(b.get("run_stats"), dict) else None),
              "requests_failed": counts["errored"] + counts["incomplete"],
              "output_tokens_per_s": mean("output_tokens_per_second"),
              "request_throughput_per_s": mean("requests_per_second"),
              "prompt_tokens_mean": mean("prompt_token_count"), "output_tokens_mean": mean("output_token_count"),
              "length_fields": {"prompt": f"prompt_token_count mean {_g(_dist(m, 'prompt_token_count').get('mean'))}",
                                "output": f"output_token_count mean {_g(_dist(m, 'output_token_count').get('mean'))}"}}
        for ours, theirs, scale in (("ttft", "time_to_first_token_ms", 1.0), ("tpot", "inter_token_latency_ms", 1.0),
                                    ("e2e", "request_latency", 1e3)):
            d = _dist(m, theirs)
            pct = d.get("percentiles") or {}
            base = f"{at}.metrics.{theirs}.successful"
            lv[f"{ours}_ms_p50"] = get(d.get("median"), f"{base}.median", "time", scale)
            lv[f"{ours}_ms_mean"] = get(d.get("mean"), f"{base}.mean", "time", scale)
            lv[f"{ours}_ms_p90"] = get(pct.get("p90"), f"{base}.percentiles.p90", "time", scale)
            lv[f"{ours}_ms_p99"] = get(pct.get("p99"), f"{base}.percentiles.p99", "time", scale)
        for p in ("p50", "p90", "p99"):
            lv[f"itl_ms_{p}"] = math.nan
        out.append(lv)
    figures.done("This GuideLLM report")
    return sorted(out, key=lambda d: (np.nan_to_num(d["concurrency"], nan=1e18),
                                      np.nan_to_num(d["request_rate_per_s"], nan=1e18)))


def _without_gaps_of_one_token(levels: list[dict]) -> list[dict]:
    """``levels`` with TPOT and ITL made NaN (not measured) at a level whose requests have one output token or
    fewer on average: there is no gap between tokens to time, and ``vllm bench serve`` writes 0 for them, which a
    page would show as a measured 0 ms. Every other figure, TTFT and E2E included, stays."""
    for lv in levels:
        n = lv.get("output_tokens_mean", math.nan)
        if n == n and n <= 1.0:
            for key in [k for k in lv if k.startswith(("tpot_ms_", "itl_ms_"))]:
                lv[key] = math.nan
            if "itl_ms" in lv:
                lv["itl_ms"] = []
    return levels


def read_result_file(text: str) -> tuple[str, list[dict]]:
    """Detect and read a vLLM or GuideLLM result file; returns (tool name, levels).

    Every figure of either format passes the one check of ``_Figures``: times (ms, s) 0 or more (a run of one output token writes a TPOT and ITL of 0, read as not measured), counts, token
    totals and throughputs 0 or more, a concurrency a positive whole number, a rate above 0, each a finite
    JSON number no larger than ``MAX_FIGURE`` (1e12); an absent figure (missing or null) is NaN. Each level also
    has ``length_fields``: the file's fields behind its prompt and output lengths with their values
    ("total_input_tokens 0"), for messages.

    Raises:
        ResultValueError (a ValueError): a file of either format with impossible figures; the message names
        each one, as the file's field and its value ("the file's max_concurrency is -4; ...").
        ValueError: neither format (the message names both and what each needs).
    """
    try:
        return "vllm bench serve", _without_gaps_of_one_token(read_vllm_result(text))
    except ResultValueError:
        raise  # a vLLM file with impossible figures: its own message, not "neither format"
    except ValueError as e_vllm:
        try:
            return "GuideLLM", _without_gaps_of_one_token(read_guidellm_report(text))
        except ResultValueError:
            raise
        except ValueError as e_guide:
            raise ValueError(f"Not a result file this page reads. As vLLM's: {e_vllm}. As GuideLLM's: {e_guide}.") \
                from None
