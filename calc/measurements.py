"""Published serving measurements of real engines (vLLM, SGLang, TensorRT-LLM, ...), and their lower bounds.

One row of ``data/serving_measurements.csv`` is one published number: a model (a preset of
``data/models.json``) served by an engine on ``n_gpus`` accelerators (a preset of
``data/accelerators.json``) with a parallel layout (tp, pp, ep, dp), weight and KV dtypes, request
lengths, a load (concurrency, request rate or offline), and one metric with its statistic and value.
Each row names a source in ``data/serving_sources.csv`` (title, URL or repository + commit, dates,
licence). Only sources whose licence allows it ship their numbers (``shipped == "yes"``); the others
are listed without values in ``data/serving_cited.csv`` so that a user can look them up and load them
(``load_measurements(path)`` reads a user file of the same columns).

Each row's model is stored as the preset calc computes it with; the name its source published (a checkpoint's id,
or another model of the same architecture such as GLM-4.6, computed as GLM-4.7) stays in ``PUBLISHED_MODEL``
(``published_models`` counts them).

``measurement_bound`` gives, for a row, calc's roofline bound on its metric (``decode_step_time`` and
``prefill_time`` with the row's tp/pp/ep): a measured latency is never below it, a measured throughput
never above it. The metric names and their units follow vLLM's ``benchmark_serving`` (TTFT, TPOT =
(E2E - TTFT) / (output tokens - 1), ITL = each gap between tokens, tok/s/user = 1000 / TPOT_ms).
"""
from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .dtypes import canonical_dtype, dtype_bytes
from .gpu_share import max_batch_per_replica
from .hardware import accelerator_preset_id, get_accelerator, list_accelerators, with_matmul
from .layout import Layout
from .memory import with_capacity
from .limits import limit_of
from .models import get_model, list_models, model_preset_id, names_another_model
from .speculative_serving import MAX_DRAFT_TOKENS, speculative_from_notes
from .step import decode_step_time, prefill_time

DATA_DIR = Path(__file__).resolve().parent / "data"
MEASUREMENTS_PATH = DATA_DIR / "serving_measurements.csv"
SOURCES_PATH = DATA_DIR / "serving_sources.csv"
CITED_PATH = DATA_DIR / "serving_cited.csv"

#: Columns of a measurements file, in order (a cited file has the same columns less ``value``).
COLUMNS = ("id", "source_id", "model", "model_family", "accelerator", "n_gpus", "tp", "pp", "ep", "dp", "engine",
           "engine_version", "weight_dtype", "kv_dtype", "input_len", "output_len", "len_dist", "concurrency",
           "request_rate_per_s", "mode", "metric", "statistic", "value", "notes")
CITED_COLUMNS = tuple(c for c in COLUMNS if c != "value")
#: The column a loaded frame adds after the file's columns (``COLUMNS``, ``CITED_COLUMNS``): each row's model as its
#: source published it, the file's model cell as written (stripped of surrounding spaces; an InferenceX result's
#: model field), before ``model`` is rewritten to the preset calc computes the row with (``model_preset_id``: a
#: preset's id or display name, a checkpoint's id, or an alias of data/checkpoint_aliases.json). Example: the
#: held-out file's 241 rows of GPUStack's GLM-4.6 pages have model "glm-4.7" (GLM-4.6 has no preset; its alias
#: computes it with GLM-4.7's shapes) and model_published "glm-4.6". A file does not carry it (a user's file that
#: names it has it ignored, as any other column), and no fit reads it.
PUBLISHED_MODEL = "model_published"
SOURCE_COLUMNS = ("source_id", "title", "url", "commit", "published", "retrieved", "license", "shipped", "notes")

#: metric -> (unit, "latency" (a measured value is >= its bound) or "throughput" (<= its bound)).
METRICS = {
    "output_tok_per_s": ("output tokens/s, whole deployment", "throughput"),
    "output_tok_per_s_per_gpu": ("output tokens/s per GPU", "throughput"),
    "total_tok_per_s_per_gpu": ("input + output tokens/s per GPU", "throughput"),
    "output_tok_per_s_per_user": ("output tokens/s seen by one request (1000 / TPOT_ms)", "throughput"),
    "tpot_ms": ("ms per output token after the first", "latency"),
    "itl_ms": ("ms between two output tokens", "latency"),
    "ttft_ms": ("ms to the first output token", "latency"),
    "e2e_ms": ("ms from request to last token", "latency"),
    "requests_per_s": ("completed requests/s, whole deployment", "throughput"),
}
STATISTICS = ("mean", "median", "p90", "p95", "p99", "p99.9", "max")
#: Other names of a statistic, as benchmarks write them.
STATISTIC_ALIASES = {"avg": "mean", "average": "mean", "p50": "median", "p99_9": "p99.9", "p999": "p99.9"}
MODES = ("concurrency", "rate", "offline")
ENGINES = ("vllm", "sglang", "trtllm", "other")
#: Each engine family's name as its project writes it, for sentences and labels (calc's keys are lowercase; the
#: serving model's fallback family is "generic").
ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "generic": "generic engine",
                "other": "other engine"}
_INT_COLUMNS = ("n_gpus", "tp", "pp", "ep", "dp", "input_len", "output_len")
#: Names benchmarks give the throughput metrics (after ``_metric_words``) -> (calc's metric, per deployment: its value
#: is divided by n_gpus into the per-GPU metric). vllm bench serve's result keys (output_throughput,
#: total_token_throughput, request_throughput), InferenceX's (tput_per_gpu, output_tput_per_gpu, interactivity).
THROUGHPUT_ALIASES = {
    "output_throughput": ("output_tok_per_s", False), "output_token_throughput": ("output_tok_per_s", False),
    "output_tokens_per_s": ("output_tok_per_s", False), "output_tok_s": ("output_tok_per_s", False),
    "total_token_throughput": ("total_tok_per_s_per_gpu", True), "total_tok_per_s": ("total_tok_per_s_per_gpu", True),
    "total_tokens_per_s": ("total_tok_per_s_per_gpu", True), "total_tok_s": ("total_tok_per_s_per_gpu", True),
    "request_throughput": ("requests_per_s", False), "req_per_s": ("requests_per_s", False),
    "requests_per_second": ("requests_per_s", False),
    "tput_per_gpu": ("total_tok_per_s_per_gpu", False), "total_tput_per_gpu": ("total_tok_per_s_per_gpu", False),
    "output_tput_per_gpu": ("output_tok_per_s_per_gpu", False),
    "output_tokens_per_s_per_gpu": ("output_tok_per_s_per_gpu", False),
    "output_throughput_per_gpu": ("output_tok_per_s_per_gpu", False),
    "output_token_throughput_per_gpu": ("output_tok_per_s_per_gpu", False),
    "output_throughput_per_user": ("output_tok_per_s_per_user", False),
    "interactivity": ("output_tok_per_s_per_user", False), "intvty": ("output_tok_per_s_per_user", False),
    "tok_per_s_per_user": ("output_tok_per_s_per_user", False),
    "tokens_per_s_per_user": ("output_tok_per_s_per_user", False),
}
#: Names of the latency metrics (after a statistic prefix such as mean_ or p99_), and the unit suffixes -> ms.
_LATENCY_NAMES = {"ttft": "ttft_ms", "time_to_first_token": "ttft_ms", "tpot": "tpot_ms",
                  "time_per_output_token": "tpot_ms", "itl": "itl_ms", "inter_token_latency": "itl_ms",
                  "e2el": "e2e_ms", "e2e": "e2e_ms", "e2e_latency": "e2e_ms", "end_to_end_latency": "e2e_ms",
                  "request_latency": "e2e_ms"}
_TIME_UNITS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "seconds": 1000.0, "us": 1e-3}


def _metric_words(text: str) -> str:
    """A metric's name in lower case with its spaces, dashes and slashes as underscores and a unit in parentheses as
    a suffix: "Output token throughput (tok/s)" -> "output_token_throughput_tok_s", "TTFT (ms)" -> "ttft_ms"."""
    t = re.sub(r"\(([^)]*)\)", r" \1", str(text).strip().lower())
    return re.sub(r"[\s/\-]+", "_", t).strip("_")


def _throughput_words(words: str) -> str:
    """A throughput's words in one spelling: tokens as "tok", a second as "per_s", a GPU and a user as "per_gpu" and
    "per_user" ("output tokens/s per GPU", "output_tok_s_gpu" -> "output_tok_per_s_per_gpu"; "tok/s/user" ->
    "tok_per_s_per_user"), trtllm-bench's "Total Output Throughput" as vllm bench serve's "output_throughput"."""
    w = re.sub(r"(?:^|(?<=_))tokens?(?=_|$)", "tok", words)
    w = re.sub(r"_(?:per_)?(?:s|sec|second)(?=_|$)", "_per_s", w)
    w = re.sub(r"_(?:per_)?(gpu|user)$", r"_per_\1", w)
    return re.sub(r"^total_output_throughput", "output_throughput", w)


#: ``THROUGHPUT_ALIASES`` by their words in one spelling (``_throughput_words``).
_THROUGHPUT_WORDS = {_throughput_words(k): v for k, v in THROUGHPUT_ALIASES.items()}


def metric_reading(metric: str, statistic: str = "") -> tuple[str, str, float, bool]:
    """calc's (metric, statistic, scale, per_deployment) for a metric as a benchmark names it: ``METRICS``' own names;
    vllm bench serve's keys ("mean_ttft_ms", "median_e2el_ms", "output_throughput", "total_token_throughput",
    "request_throughput"); InferenceX's ("median_ttft" needs its unit: "median_ttft_s"; "tput_per_gpu",
    "interactivity"); words ("TTFT (ms)", "p99 TPOT s", "Output token throughput (tok/s)"). A statistic in the name
    (mean, median, avg, p50, p90, p95, p99, p99.9) is used where ``statistic`` is empty or the same. ``scale`` turns the value into
    the metric's unit (a latency in s x 1000); ``per_deployment``: a whole deployment's total tokens/s, to divide by
    n_gpus for ``total_tok_per_s_per_gpu``. A name it cannot read comes back as it is (scale 1), for the caller's
    check against ``METRICS``.

    Throughputs are read in any spelling of tokens, seconds, GPU and user ("Output tokens/s per GPU", "tok/s/user",
    trtllm-bench's "Total Output Throughput (tokens/sec)": ``_throughput_words``).

    Raises:
        ValueError: a latency without its unit ("ttft", "median_tpot": ms or s?); a throughput of tokens that says
            not which ("throughput", "tok/s/gpu": output or prompt + output?).

    Source: vllm benchmarks/serve.py's result keys; InferenceX utils/process_result.py's fields; trtllm-bench's
    report (tensorrt_llm/bench/dataclasses/reporting.py)."""
    words = _metric_words(metric)
    stat = STATISTIC_ALIASES.get(statistic, statistic)
    if words in METRICS:
        return words, stat, 1.0, False
    named = re.fullmatch(r"(?:(mean|median|avg|average|p50|p90|p95|p99\.9|p99_9|p999|p99|max)_)?(.+)", words)
    prefix = STATISTIC_ALIASES.get(named.group(1), named.group(1)) if named.group(1) else ""
    rest = named.group(2)
    if prefix and stat not in ("", prefix):
        return str(metric).strip().lower(), stat, 1.0, False  # two statistics: the caller names the metric
    latency = re.fullmatch(r"(.+?)(?:_(ms|s|sec|seconds|us))?", rest)
    base, unit = latency.group(1), latency.group(2)
    if base in _LATENCY_NAMES:
        if unit is None:
            raise ValueError(f"{metric!r} gives no unit: write it as {_LATENCY_NAMES[base]} (milliseconds) or "
                             f"{_LATENCY_NAMES[base][:-3]}_s (seconds)")
        return _LATENCY_NAMES[base], prefix or stat, _TIME_UNITS[unit], False
    # "... throughput (tok/s)", "... throughput per GPU (tok/s)"
    rest = re.sub(r"(throughput(?:_per_(?:gpu|user))?)_(?:tok|tokens|req|requests)_(?:s|sec|second)$", r"\1", rest)
    rest = _throughput_words(rest)
    if rest in METRICS or rest in _THROUGHPUT_WORDS:
        name, per_deployment = _THROUGHPUT_WORDS.get(rest, (rest, False))
        return name, prefix or stat, 1.0, per_deployment
    if re.search(r"(?:^|_)(?:throughput|tput|tok)(?:_|$)", rest) and not re.search(r"(?:^|_)(?:output|total|req)", rest):
        raise ValueError(f"{metric!r} says not which tokens it counts: write output_tok_per_s (output tokens/s of the "
                         "deployment), output_tok_per_s_per_gpu or total_tok_per_s_per_gpu (prompt + output tokens/s "
                         "per GPU)")
    return str(metric).strip().lower(), stat, 1.0, False


#: The columns a user's file must have; the others of ``COLUMNS`` may be left out of its header (or their cells left
#: empty) and are then taken as ``_check_row`` says: id "<file> line <n>", source_id the file's name, model_family
#: the preset's family, tp n_gpus / (pp * dp) and n_gpus tp * pp * dp (one of the two given), pp / ep / dp 1, an
#: engine of no family here kept as written (the serving model's generic engine, with a notice naming it), an image's
#: tag in the engine's name its version when engine_version is empty,
#: engine_version / kv_dtype / notes empty (a KV dtype as the serving model reads an unstated one), len_dist
#: "not stated" (read as varied lengths, the estimate's default), statistic "mean", mode from the load (concurrency
#: given: a closed loop; a request rate: a rate run; neither: offline).
REQUIRED_COLUMNS = ("model", "accelerator", "engine", "weight_dtype", "input_len", "output_len", "metric", "value")
#: Headers of a user's file that give the run's date (YYYY-MM-DD, or a date and time): read into its notes as "measured
#: <date>", the words the serving model dates an engine without a version by (``calc.serving_fit``).
DATE_HEADERS = ("date", "run_date", "measured", "measured_on", "date_measured", "benchmark_date", "published",
                "published_on", "retrieved")
#: Headers benchmarks and dashboards use for ``COLUMNS`` (lower case), read in a user's file as the column they name.
HEADER_ALIASES = {"isl": "input_len", "input_tokens": "input_len", "prompt_len": "input_len",
                  "osl": "output_len", "output_tokens": "output_len",
                  "gpu": "accelerator", "gpus": "n_gpus", "hardware": "accelerator", "hw": "accelerator",
                  "num_gpus": "n_gpus", "gpu_count": "n_gpus", "framework": "engine",
                  "precision": "weight_dtype", "dtype": "weight_dtype", "kv_cache_dtype": "kv_dtype",
                  "conc": "concurrency", "max_concurrency": "concurrency", "request_rate": "request_rate_per_s",
                  "qps": "request_rate_per_s", "rate": "request_rate_per_s", "stat": "statistic",
                  "source": "source_id", "source_url": "source_id", "url": "source_id", "version": "engine_version"}
_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
#: The largest measured value a row may give, in its metric's unit: no latency of 10^12 ms (some 30 years) or
#: throughput of 10^12 tokens or requests per second has been measured; a larger number is a typing slip.
MAX_VALUE = 1e12
#: The longest prompt or output a row may give, and their sum (a request's context): the context limit of
#: ``calc.limits`` (2^27 tokens), beyond which no model of calc runs.
MAX_CONTEXT_TOKENS = limit_of("context")
#: Besides calc's dtype names (``calc.dtypes.dtype_bytes``: bf16, fp8, int4-g128, mxfp4, nvfp4, ...), "fp4" where a
#: source names no block format (read as nvfp4 for the bound). kv_dtype may be left empty when the source does not say.
EXTRA_DTYPES = ("fp4",)


def engine_spelling(engine: str) -> str:
    """An engine's name in lower case without its hyphens and underscores, TensorRT-LLM as "trtllm": "vLLM" ->
    "vllm", "TensorRT-LLM" and "tensorrt_llm" -> "trtllm" (the key ``engine_key`` and
    ``calc.serving_params.engine_settings`` look up)."""
    return str(engine).strip().lower().replace("-", "").replace("_", "").replace("tensorrtllm", "trtllm")


#: Words that name an engine family inside a longer name (a serving stack or an image: "dynamo-trt",
#: "vllm-openai", "lmsysorg/sglang"), by family.
_FAMILY_WORDS = {"trtllm": ("trt", "trtllm", "tensorrt", "tensorrtllm"), "vllm": ("vllm",), "sglang": ("sglang",)}


def engine_key(engine: str) -> str:
    """calc's key of an engine family as a source writes it: "TensorRT-LLM", "TRT-LLM", "tensorrt_llm" and
    "TensorRT" -> "trtllm", "vLLM" -> "vllm", "SGLang" -> "sglang"; a longer name that names exactly one of them as
    a word ("dynamo-trt", NVIDIA Dynamo over TensorRT-LLM, InferenceX's framework name; "vllm/vllm-openai") -> that
    family; any other text as it is (``ENGINES`` has "other" for an engine of no family here)."""
    key = engine_spelling(re.sub(r"\s", "", str(engine)))
    key = "trtllm" if key == "tensorrt" else key
    if key in ENGINES:
        return key
    words = set(re.split(r"[^a-z0-9]+", str(engine).lower().replace("tensorrt-llm", "trtllm")))
    named = [family for family, names in _FAMILY_WORDS.items() if words & set(names)]
    return named[0] if len(named) == 1 else str(engine)


def engine_name(engine: str) -> str:
    """The name a sentence or a label gives calc's engine key: "vllm" -> "vLLM", "sglang" -> "SGLang", "trtllm" ->
    "TensorRT-LLM", "generic" -> "generic engine"; any other text as it is (an engine without parameters, which
    the serving model names in its notice)."""
    return ENGINE_NAMES.get(engine, str(engine))


def _check_dtype(where: str, column: str, value: str) -> None:
    if value in EXTRA_DTYPES:
        return
    try:
        dtype_bytes(value, column)
    except ValueError as e:
        _fail(where, column, str(e))


def _fail(where: str, column: str, message: str):
    raise ValueError(f"{where}, column {column!r}: {message}")


def _number(text: str, where: str, column: str, kind=float, positive=True, allow_empty=False):
    raw = (text or "").strip()
    if raw == "":
        if allow_empty:
            return None
        _fail(where, column, "is empty")
    # thousands written with commas ("1,024"), and a whole number written as a float ("8.0", "1e3", as pandas
    # writes an integer column that has empty cells) are read as the number they spell
    text = raw.replace(",", "") if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?", raw) else raw
    try:
        value = float(text)
        if kind is int:
            if not value.is_integer():
                raise ValueError
            value = int(value)
    except (ValueError, OverflowError):
        _fail(where, column, f"must be {'an integer' if kind is int else 'a number'}, got {raw!r}")
    if not math.isfinite(value) or (positive and value <= 0):
        _fail(where, column, f"must be a positive number, got {raw!r}")
    return value


def _read_rows(path, columns, label: str, keep_bad: bool = False, lenient: bool = False, about: list | None = None):
    """(where, dict) per data row of a CSV file with exactly ``columns`` as its header (``keep_bad``, ``lenient``,
    ``about``: as ``_parse_rows``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise ValueError(f"cannot read {label} file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path.name}: not UTF-8 text; save the file as CSV (UTF-8)") from None
    return _parse_rows(text, path.name, columns, keep_bad, lenient, about)


def _parse_rows(text: str, name: str, columns, keep_bad: bool = False, lenient: bool = False,
                about: list | None = None):
    """(where, dict) per data row of CSV ``text`` (called ``name`` in messages) with ``columns`` as its header (in
    that order or any other: fields are read by their column's name).
    A row of the wrong number of fields raises ValueError, or with ``keep_bad`` comes as (where, message) for the
    caller to name beside the file's other bad rows.
    ``lenient`` (a user's file): a header of ``HEADER_ALIASES`` is read as the column it names, only
    ``REQUIRED_COLUMNS`` must be present (the others come as empty cells, for ``_check_row`` to fill), and a column
    that is not one of ``columns`` is ignored, but for a column of ``DATE_HEADERS``, whose YYYY-MM-DD is added to each
    row's notes as "measured <date>"; ``about`` (a list) gets a sentence for each of these and one for the columns
    taken as their defaults."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        what = (f"name at least {', '.join(c for c in columns if c in REQUIRED_COLUMNS)} (and n_gpus or tp)"
                if lenient else f"be {','.join(columns)}")
        raise ValueError(f"{name} line 1: the file is empty; the header must {what}") from None
    except csv.Error as e:
        raise ValueError(f"{name} line 1: not a CSV file ({e})") from None
    header = [h.strip().lstrip("\ufeff") for h in header]
    if lenient:
        header = [h if h in columns else HEADER_ALIASES.get(h.lower(), h.lower() if h.lower() in columns else h)
                  for h in header]
    twice = [c for c in dict.fromkeys(header) if header.count(c) > 1]
    needed = [c for c in columns if c in REQUIRED_COLUMNS] if lenient else list(columns)
    missing = [c for c in needed if c not in header]
    extra = [c for c in header if c not in columns]
    if lenient and (missing or twice):  # a user's file: name what it needs, not every column it may give
        sep = next((c for c in (";", "\t", "|") if len(header) == 1 and c in header[0]), None)
        raise ValueError(f"{name} line 1: the header must name at least {', '.join(needed)} (and n_gpus or tp)"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + "".join(f"; {c} named twice" for c in twice)
                         + (f"; its columns look separated by {sep!r}: save the file with commas" if sep else ""))
    if missing or twice or (extra and not lenient):  # the same columns in another order are read by name, below
        raise ValueError(f"{name} line 1: the header must be {','.join(columns)}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(extra)}" if extra and not lenient else "")
                         + "".join(f"; {c} named twice" for c in twice))
    absent = [c for c in columns if c not in header]
    # the first date column a user's file gives (in DATE_HEADERS' order) dates its rows, through their notes
    dated = next((h for d in DATE_HEADERS for h in extra if h.lower() == d), None) if "notes" in columns else None
    extra = [c for c in extra if c != dated]
    if about is not None and dated:
        about.append(f"column {dated} read as each run's date (its notes: measured YYYY-MM-DD)")
    if about is not None and extra:
        about.append(f"columns not read: {', '.join(extra)}")
    if about is not None and absent:
        about.append(f"columns not in the file, taken as their defaults: {', '.join(absent)}")
    rows = []
    try:
        numbered = list(enumerate(reader, start=2))
    except csv.Error as e:
        raise ValueError(f"{name} line {reader.line_num}: not a CSV row ({e})") from None
    for line_no, fields in numbered:
        if not fields or all(not f.strip() for f in fields):
            continue
        where = f"{name} line {line_no}"
        if len(fields) != len(header):
            message = f"{where}: {len(fields)} fields, expected {len(header)} ({','.join(header)})"
            if not keep_bad:
                raise ValueError(message)
            rows.append((where, message))
            continue
        cells = {c: f.strip() for c, f in zip(header, fields) if c in columns}
        row = {c: cells.get(c, "") for c in columns}
        day = re.match(r"\d{4}-\d{2}-\d{2}", fields[header.index(dated)].strip()) if dated else None
        if day:
            row["notes"] = "; ".join(t for t in (row["notes"], f"measured {day.group(0)}") if t)
        rows.append((where, row))
    return rows


def load_sources(path=None) -> pd.DataFrame:
    """The sources table (``data/serving_sources.csv`` by default), indexed by source_id.

    Checks: unique ids; a title; a URL or repository; ``published`` (when the source states it) and
    ``retrieved`` (always) as YYYY-MM or YYYY-MM-DD; a commit, when given, as a git hash (it pins the
    version read); a licence; ``shipped`` "yes" or "cite".

    Raises:
        ValueError: the file cannot be read, or a row breaks a rule (the message names line and column).
    """
    out = []
    seen = set()
    for where, r in _read_rows(path or SOURCES_PATH, SOURCE_COLUMNS, "sources"):
        if not r["source_id"]:
            _fail(where, "source_id", "is empty")
        if r["source_id"] in seen:
            _fail(where, "source_id", f"{r['source_id']!r} appears twice")
        seen.add(r["source_id"])
        for col in ("title", "url", "license"):
            if not r[col]:
                _fail(where, col, "is empty")
        if not _DATE.match(r["retrieved"]):
            _fail(where, "retrieved", f"must be YYYY-MM-DD or YYYY-MM, got {r['retrieved']!r}")
        if r["published"] and not _DATE.match(r["published"]):
            _fail(where, "published", f"must be YYYY-MM-DD or YYYY-MM (or empty), got {r['published']!r}")
        if r["commit"] and not re.fullmatch(r"[0-9a-f]{7,40}", r["commit"]):
            _fail(where, "commit", f"must be a git commit hash, got {r['commit']!r}")
        if r["shipped"] not in ("yes", "cite"):
            _fail(where, "shipped", f"must be 'yes' or 'cite', got {r['shipped']!r}")
        out.append(r)
    return pd.DataFrame(out, columns=list(SOURCE_COLUMNS)).set_index("source_id", drop=False)


def _fill_defaults(where: str, row: dict) -> None:
    """A user's row with cells left empty (or columns left out), completed as ``REQUIRED_COLUMNS`` says."""
    if not row["id"]:
        row["id"] = where
    if not row["source_id"]:
        row["source_id"] = where.rsplit(" line ", 1)[0]
    for col in ("pp", "ep", "dp"):
        row[col] = row[col] or "1"
    layout = {c: _number(row[c], where, c, int) for c in ("pp", "dp")}
    if not row["n_gpus"] and row["tp"]:
        row["n_gpus"] = str(_number(row["tp"], where, "tp", int) * layout["pp"] * layout["dp"])
    if not row["tp"] and row["n_gpus"]:
        n = _number(row["n_gpus"], where, "n_gpus", int)
        if n % (layout["pp"] * layout["dp"]):
            _fail(where, "tp", f"is empty and n_gpus {n} is not a multiple of pp * dp = {layout['pp'] * layout['dp']}")
        row["tp"] = str(n // (layout["pp"] * layout["dp"]))
    if not row["n_gpus"] and not row["tp"]:
        _fail(where, "n_gpus", "is empty, and so is tp: give the GPUs of the run (n_gpus) or its layout (tp)")
    row["len_dist"] = row["len_dist"] or "not stated"
    if not row["mode"]:
        row["mode"] = "concurrency" if row["concurrency"] else "rate" if row["request_rate_per_s"] else "offline"


def _check_row(where: str, r: dict, sources: pd.DataFrame | None, with_value: bool, lenient: bool = False) -> dict:
    """One row, typed and validated (see ``load_measurements``); ``lenient`` (a user's file): empty cells first take
    their defaults (``REQUIRED_COLUMNS``)."""
    row = dict(r)
    if lenient:
        _fill_defaults(where, row)
        r = dict(row)
    if not row["id"]:
        _fail(where, "id", "is empty")
    if sources is not None and row["source_id"] not in sources.index:
        _fail(where, "source_id", f"unknown source {row['source_id']!r}; add it to the sources file")
    if not row["source_id"]:
        _fail(where, "source_id", "is empty")
    # names as sources spell them: a checkpoint's id or a display name for the model, a driver's or a vendor's name
    # for the accelerator, the project's name for the engine, a framework's name for a dtype; stored as calc's keys
    # the name as published is kept beside the preset's id (``PUBLISHED_MODEL``); a converter that matched the preset
    # itself (InferenceX) passes the name its result gave
    row[PUBLISHED_MODEL] = str(r.get(PUBLISHED_MODEL) or r["model"]).strip()
    row["model"] = model_preset_id(row["model"]) or row["model"]
    if lenient and not row["model_family"] and row["model"] in list_models():
        row["model_family"] = re.match(r"[a-z]*", row["model"]).group(0)  # llama-3.1-8b -> llama
    if row["model"] not in list_models():
        _fail(where, "model", f"unknown model preset {row['model']!r}; valid: {', '.join(list_models())} (or a "
                              "checkpoint's id of one of them, such as meta-llama/Llama-3.1-8B-Instruct)")
    row["accelerator"] = accelerator_preset_id(row["accelerator"]) or row["accelerator"]
    if row["accelerator"] not in list_accelerators():
        _fail(where, "accelerator",
              f"unknown accelerator preset {row['accelerator']!r}; valid: {', '.join(list_accelerators())} (or "
              "the name a driver gives one of them, such as NVIDIA H100 80GB HBM3)")
    row["engine"] = engine_key(row["engine"])
    if lenient and row["engine"] not in ENGINES:
        # an engine of no family here (TGI, LMDeploy, a NIM without its backend) keeps its name: the serving model
        # gives it the generic engine's settings and costs and a notice naming it
        row["engine"] = row["engine"].strip()
    if lenient and not row["engine_version"]:
        # an engine named by an image with its tag (vllm/vllm-openai:v0.10.2, tgi:3.2.0): the tag is its version
        tag = re.search(r":v?(\d+\.\d+[\w.+-]*)$", r["engine"].strip())
        row["engine_version"] = tag.group(1) if tag else row["engine_version"]
    for col in ("weight_dtype", "kv_dtype", "mode", "metric", "statistic"):
        row[col] = canonical_dtype(row[col]) if col.endswith("dtype") else row[col].strip().lower()
    # a metric as a benchmark names it (vllm bench serve's mean_ttft_ms, output_throughput; InferenceX's
    # median_ttft_s, tput_per_gpu): calc's metric, its statistic, and the scale to its unit (``metric_reading``)
    try:
        row["metric"], row["statistic"], scale, per_deployment = metric_reading(row["metric"], row["statistic"])
    except ValueError as e:
        _fail(where, "metric", str(e))
    if lenient and not row["statistic"]:
        row["statistic"] = "mean"
    for col in _INT_COLUMNS:
        row[col] = _number(r[col], where, col, int)
    for col in ("input_len", "output_len"):
        if row[col] > MAX_CONTEXT_TOKENS:
            _fail(where, col, f"{row[col]:,} tokens is above the context limit of {MAX_CONTEXT_TOKENS:,} tokens")
    if row["input_len"] + row["output_len"] > MAX_CONTEXT_TOKENS:
        _fail(where, "output_len", f"input_len + output_len = {row['input_len'] + row['output_len']:,} tokens is "
                                   f"above the context limit of {MAX_CONTEXT_TOKENS:,} tokens")
    if row["tp"] * row["pp"] * row["dp"] != row["n_gpus"]:
        _fail(where, "n_gpus", f"must equal tp * pp * dp = {row['tp'] * row['pp'] * row['dp']}, got {row['n_gpus']}")
    if row["engine"] not in ENGINES and not lenient:
        _fail(where, "engine", f"must be one of {', '.join(ENGINES)}, got {row['engine']!r}")
    if not row["engine"]:
        _fail(where, "engine", "is empty")
    _check_dtype(where, "weight_dtype", row["weight_dtype"])
    if row["kv_dtype"]:
        _check_dtype(where, "kv_dtype", row["kv_dtype"])
    if not row["len_dist"]:
        _fail(where, "len_dist", "is empty (write 'fixed', 'random 0.8-1.0', 'sharegpt', ...)")
    row["concurrency"] = _number(r["concurrency"], where, "concurrency", int, allow_empty=True)
    row["request_rate_per_s"] = _number(r["request_rate_per_s"], where, "request_rate_per_s", allow_empty=True)
    if row["mode"] not in MODES:
        _fail(where, "mode", f"must be one of {', '.join(MODES)}, got {row['mode']!r}")
    if row["mode"] == "concurrency" and row["concurrency"] is None:
        _fail(where, "concurrency", "is empty in a concurrency run")
    if row["mode"] == "rate" and row["request_rate_per_s"] is None:
        _fail(where, "request_rate_per_s", "is empty in a rate run")
    if row["metric"] not in METRICS:
        _fail(where, "metric", f"must be one of {', '.join(METRICS)}, got {row['metric']!r}")
    if row["statistic"] not in STATISTICS:
        _fail(where, "statistic", f"must be one of {', '.join(STATISTICS)}, got {row['statistic']!r}")
    if with_value:
        row["value"] = _number(r["value"], where, "value") * scale / (row["n_gpus"] if per_deployment else 1)
        if row["value"] > MAX_VALUE:
            _fail(where, "value", f"{row['value']:.4g} is above {MAX_VALUE:,.0f} (unit: {METRICS[row['metric']][0]}), "
                                  "which is not a measurement; check the number and its unit")
    return row


def _frame(rows, columns) -> pd.DataFrame:
    """Checked rows (``_check_row``'s dicts) as a frame of ``columns`` then ``PUBLISHED_MODEL``, typed."""
    df = pd.DataFrame(rows, columns=list(columns) + [PUBLISHED_MODEL])
    for col in ("concurrency",):
        df[col] = df[col].astype("Int64")
    df["request_rate_per_s"] = df["request_rate_per_s"].astype("float64")
    return df


def load_measurements(path=None, sources: pd.DataFrame | None = None, skip_bad: bool = False) -> pd.DataFrame:
    """Read and validate a measurements CSV (``data/serving_measurements.csv`` by default, or a user's file
    of the same columns, ``COLUMNS``) into a DataFrame, one row per published number.

    Each row must name a known model and accelerator preset (by its id, or as sources write them: a checkpoint's
    id such as meta-llama/Llama-3.1-8B-Instruct, a display name, the name a driver gives a GPU such as NVIDIA H100
    80GB HBM3; ``model_preset_id``, ``accelerator_preset_id``), an engine of ``ENGINES`` (or its project's name:
    TensorRT-LLM, vLLM, SGLang; ``engine_key``), dtypes as calc or a framework spells them (bfloat16, FP8:
    ``canonical_dtype``); each is stored under calc's key, and the model as the row wrote it is kept in
    ``PUBLISHED_MODEL`` (a row of GLM-4.6, which calc computes with GLM-4.7's architecture: model "glm-4.7",
    model_published "glm-4.6"). It needs a metric of ``METRICS`` with a statistic of
    ``STATISTICS``, a mode of ``MODES`` (a concurrency run gives its concurrency, a rate run its rate), a
    positive value of at most ``MAX_VALUE`` in the metric's unit, input and output lengths whose sum is at
    most ``MAX_CONTEXT_TOKENS``, and n_gpus = tp * pp * dp. The shipped file also needs each source_id in the sources
    table (``sources``; for a user file, sources are checked only when given). Ids are unique. Integers may be
    written as whole floats ("8.0", as pandas writes an integer column with empty cells) and numbers with thousands'
    commas ("1,024").

    A user's file (``sources`` not given) needs only ``REQUIRED_COLUMNS``, in any order, also under the headers of
    ``HEADER_ALIASES`` (isl, osl, gpu, framework, conc, ...); a column left out or a cell left empty takes the default
    ``REQUIRED_COLUMNS`` describes, and other columns are ignored (``attrs["header"]`` says which of each). The
    shipped files need every column of ``COLUMNS`` filled.

    ``skip_bad``: a malformed row (a model or GPU calc has no preset of, a value that is not a number) is left out
    rather than failing the file, its message in the frame's ``attrs["skipped"]``.

    Returns:
        DataFrame with ``COLUMNS`` then ``PUBLISHED_MODEL`` (text: the model cell as written); integers for the
        layout and lengths, ``concurrency`` as nullable Int64,
        ``request_rate_per_s`` and ``value`` as floats; ``attrs["skipped"]``: the messages of the rows left out;
        ``attrs["header"]``: sentences on the columns a user's file left out or added (empty otherwise).

    Raises:
        ValueError: unreadable file, wrong header, or malformed rows (without ``skip_bad``); the message names the
        file, the line (1 = header) and the column, e.g. "mine.csv line 3, column 'value': must be a number, got
        'fast'", and after the first malformed row up to ``LISTED_ROW_ERRORS`` more and the count of the rest.
    """
    if path is None and sources is None:
        sources = load_sources()
    lenient, about = sources is None, []
    return _measurement_frame(_read_rows(path or MEASUREMENTS_PATH, COLUMNS, "measurements", keep_bad=True,
                                         lenient=lenient, about=about), sources, skip_bad, lenient, about)


#: The largest measurements file a user may load (bytes): 8 MB holds some 11,000 rows with notes as long as the data
#: set's (its own CSV, 4.5 MB for 6,367 rows, fits, to be edited and loaded back); the server's cap is the same.
MAX_UPLOAD_BYTES = 8_000_000


def measurements_from_text(data: bytes | str, name: str = "upload.csv", skip_bad: bool = False) -> pd.DataFrame:
    """``load_measurements`` for the content of a file (an upload) rather than a path: same columns, same
    checks (sources are not checked), the messages name ``name``. ``skip_bad``: a file with some good rows keeps them,
    its malformed rows' messages in ``attrs["skipped"]`` (``row_errors_text`` words them); a file none of whose rows
    is good is still refused.

    Raises:
        ValueError: more than ``MAX_UPLOAD_BYTES``, not UTF-8 text, or as ``load_measurements``; with ``skip_bad``,
            every row malformed (the message names them all).
    """
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"{name}: {len(data):,} bytes; the limit is {MAX_UPLOAD_BYTES:,} bytes")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError(f"{name}: not UTF-8 text; save the file as CSV (UTF-8)") from None
    about = []
    frame = _measurement_frame(_parse_rows(data, name, COLUMNS, keep_bad=True, lenient=True, about=about), None,
                               skip_bad=skip_bad, lenient=True, about=about)
    if frame.empty:
        _raise_row_errors(frame.attrs["skipped"])  # no good row: the file is refused, every bad row named
    return frame


#: How many malformed rows a message lists after the first before it counts the rest.
LISTED_ROW_ERRORS = 5


def _raise_row_errors(errors: list) -> None:
    """Raise one ValueError for every malformed row of a file (``row_errors_text``), so a user fixes a file in one
    pass, not a row per try; nothing when ``errors`` is empty."""
    if errors:
        raise ValueError(row_errors_text(errors))


def row_errors_text(errors: list) -> str:
    """One message for the malformed rows of a file (their messages, in file order): the first in full, then up to
    ``LISTED_ROW_ERRORS`` more (a column's list of valid names given once), then the count of the rest; "" for none."""
    if not errors:
        return ""
    message = errors[0]
    if len(errors) > 1:
        # each column's valid names once, in the first message that lists them: the later ones stop before them
        listed, more = set(), []
        for m in errors[:1 + LISTED_ROW_ERRORS]:
            column = re.search(r"column '([^']+)'", m)
            key = column.group(1) if column else m
            if "; valid" in m and key in listed:
                m = m.split("; valid")[0]
            listed.add(key)
            more.append(m)
        more = more[1:]
        rest = len(errors) - 1 - len(more)
        message += (f". {len(errors) - 1:,} more malformed row{'s' if len(errors) > 2 else ''}: " + "; ".join(more)
                    + (f"; and {rest:,} more" if rest else ""))
    return message


def _measurement_frame(parsed, sources, skip_bad: bool = False, lenient: bool = False,
                       about: list | None = None) -> pd.DataFrame:
    """The checked rows of ``parsed`` ((where, raw row) pairs) as a frame; an id seen twice is an error.
    ``skip_bad``: the malformed rows are left out instead, their messages in the frame's ``attrs["skipped"]``.
    ``lenient`` (a user's file): empty cells take their defaults (``REQUIRED_COLUMNS``); ``about``: the sentences
    ``_parse_rows`` wrote on the file's header, kept in ``attrs["header"]``.

    Raises:
        ValueError: naming every malformed row (``_raise_row_errors``), not only the first (without ``skip_bad``).
    """
    rows, seen, errors = [], set(), []
    for where, r in parsed:
        try:
            if isinstance(r, str):  # a line ``_parse_rows`` could not split into the columns
                raise ValueError(r)
            row = _check_row(where, r, sources, with_value=True, lenient=lenient)
            if row["id"] in seen:
                _fail(where, "id", f"{row['id']!r} appears twice")
        except ValueError as e:
            errors.append(str(e))
            continue
        seen.add(row["id"])
        rows.append(row)
    if not skip_bad:
        _raise_row_errors(errors)
    frame = _frame(rows, COLUMNS)
    frame.attrs["skipped"] = errors
    frame.attrs["header"] = list(about or [])
    return frame


def load_cited(path=None, sources: pd.DataFrame | None = None) -> pd.DataFrame:
    """The cited measurements (``data/serving_cited.csv``): rows of sources whose licence does not let us
    ship their numbers, with every column but ``value`` (``CITED_COLUMNS``, then ``PUBLISHED_MODEL`` as
    ``load_measurements`` keeps it); a user reads the value at the source's URL.

    Raises:
        ValueError: as ``load_measurements``.
    """
    if path is None and sources is None:
        sources = load_sources()
    rows = [_check_row(where, r, sources, with_value=False)
            for where, r in _read_rows(path or CITED_PATH, CITED_COLUMNS, "cited")]
    return _frame(rows, CITED_COLUMNS)


def model_cell(preset: str, published: str) -> str:
    """The model cell a converter writes for a row that calc computes with ``preset`` (an id) and whose source names
    ``published`` (a checkpoint's id, or the model's name as the source wrote it): ``published`` where it names another
    model or release of the preset's architecture (``calc.models.names_another_model``: "deepseek-ai/DeepSeek-R1-0528"
    for "deepseek-v3"), so that loading the file keeps it as ``PUBLISHED_MODEL`` and the pages say which model was
    measured; else ``preset``, the id a preset's own checkpoints are stored under ("Qwen/Qwen3-8B-FP8" -> "qwen3-8b").
    A ``published`` that resolves to another preset than ``preset`` is not taken either: the row keeps ``preset``.
    """
    published = str(published or "").strip()
    if published and model_preset_id(published) == preset and names_another_model(published):
        return published
    return preset


def is_preset_name(published: str, model: str) -> bool:
    """Whether ``published`` (a row's ``PUBLISHED_MODEL``) names the preset ``model`` itself: its id or its display
    name, in any case, with or without an organisation ("deepseek-ai/DeepSeek-V3" for "deepseek-v3"), rather than
    another name the preset stands for (a checkpoint's id such as meta-llama/Llama-3.1-8B-Instruct, or an alias
    such as glm-4.6 for "glm-4.7"). A ``model`` calc has no preset of compares by its id alone."""
    text = str(published).strip().lower()
    names = {str(model).strip().lower()}
    try:
        names.add(get_model(str(model)).name.lower())
    except ValueError:
        pass
    return text in names or text.rsplit("/", 1)[-1] in names


def published_models(df: pd.DataFrame) -> pd.DataFrame:
    """The names the rows of ``df`` (a frame of ``load_measurements``' columns) were published under, per model.

    Returns:
        DataFrame with one row per (model, model_published) pair: ``model`` (the preset id), ``model_published``
        (the name as the rows wrote it; a frame without ``PUBLISHED_MODEL`` counts each row under its model),
        ``rows`` (how many rows, int), ``model_rows`` (the model's rows in all, int) and ``own`` (bool:
        ``is_preset_name``, the preset's own name rather than another it stands for); ordered by model, then
        most rows first, then by name. Example: the held-out file (calc/data/serving_holdout.csv) gives
        ("glm-4.7", "glm-4.6", 241, 241, False): every glm-4.7 row there is one of GLM-4.6, computed with
        GLM-4.7's architecture. An empty frame gives no row.
    """
    names = df[PUBLISHED_MODEL] if PUBLISHED_MODEL in df else df["model"]
    pairs = pd.DataFrame({"model": df["model"].astype(str), PUBLISHED_MODEL: names.fillna("").astype(str)})
    out = pairs.groupby(["model", PUBLISHED_MODEL]).size().rename("rows").reset_index()
    out["model_rows"] = out.groupby("model")["rows"].transform("sum")
    out["own"] = [is_preset_name(p, m) for p, m in zip(out[PUBLISHED_MODEL], out["model"])]
    out = out.sort_values(["model", "rows", PUBLISHED_MODEL], ascending=[True, False, True], kind="stable")
    return out.astype({"rows": int, "model_rows": int, "own": bool}).reset_index(drop=True)


# == Lower bounds ================================================================================

@dataclass(frozen=True)
class MeasurementBound:
    """calc's roofline bound on one row's metric.

    ``bound`` is in the metric's unit; ``kind`` "latency" means the measured value should be >= bound,
    "throughput" that it should be <= bound; ``ratio`` = measured / bound (>= 1 for a latency, <= 1 for a
    throughput when the measurement respects the bound); ``how`` says what was computed.
    """
    bound: float
    kind: str
    ratio: float
    how: str

    @property
    def respected(self) -> bool:
        """True when the measurement is no faster than the bound (a relative tolerance of 1e-9)."""
        return self.ratio >= 1 - 1e-9 if self.kind == "latency" else self.ratio <= 1 + 1e-9


#: A batch large enough that ``B / decode_step(B)`` has reached its ceiling (the weights amortised away).
_UNBOUNDED_BATCH = 1 << 20


#: How a row's notes name SGLang's benchmark client on its native endpoint (``python -m sglang.bench_serving``, whose
#: default backend is sglang: async_request_sglang_generate), which books a streamed chunk of n new tokens as n gaps
#: of 1/n of its wait (``adjust_itl = chunk_gap / num_new_tokens``, python/sglang/bench_serving.py), and the OpenAI
#: backends of the same client, which book one gap per chunk as vLLM's client does.
_SGLANG_CLIENT = re.compile(r"sglang\.bench_serving")
_OPENAI_BACKEND = re.compile(r"--backend[ =](?:sglang-oai|vllm|lmdeploy|openai)")


def itl_per_token(notes) -> bool:
    """Whether a row's ITL is a gap per token rather than per streamed chunk: SGLang's bench_serving on its native
    backend splits a chunk's wait among its tokens (``_SGLANG_CLIENT``), so under speculative decoding, where a
    round streams its accepted tokens as one chunk, its ITL is the round over the acceptance length (about the
    TPOT), where vLLM's client (``vllm bench serve``) reports the round.
    Example: "python3 -m sglang.bench_serving --backend sglang ..." -> True; "... --backend sglang-oai ..." and
    "vllm bench serve ..." -> False."""
    text = str(notes or "").lower()
    return bool(_SGLANG_CLIENT.search(text)) and not _OPENAI_BACKEND.search(text)


def tokens_per_round(notes) -> int:
    """The most tokens one decode step emits per sequence, as a row's notes state its decoding: k + 1 for a
    verification round of speculative decoding with k drafts (``calc.speculative_serving.speculative_from_notes``;
    ``MAX_DRAFT_TOKENS`` + 1 where the notes give no k, so that a bound holds whatever k the run took), 1 for plain
    decoding. Example: "speculative decoding on (MTP, 3 next-n layers)" -> 4; "no MTP" -> 1."""
    spec = speculative_from_notes(str(notes or ""))
    if spec is None:
        return 1
    return int(spec.get("draft_tokens") or MAX_DRAFT_TOKENS) + 1


#: The smallest default largest batch of the engines (vLLM's max_num_seqs 256, its V0 default and its V1 default
#: below 70 GiB and on the A100: vllm/engine/arg_utils.py, ``get_batch_defaults``): a row with more in service than
#: this may have decoded fewer at once, so its latency bounds take one sequence (``measurement_bound``).
ENGINE_BATCH_FLOOR = 256


def measurement_bound(row) -> MeasurementBound:
    """calc's lower bound for a published row (a dict or a DataFrame row with ``COLUMNS``).

    The step times come from ``calc.decode_step_time`` / ``calc.prefill_time`` with the row's tp, pp, ep
    on its accelerator, with the fastest arithmetic the accelerator has for the weight dtype
    (``with_matmul(..., "low_precision")``: FP8 and FP4 tensor cores where present) and the KV cache in
    the row's kv_dtype (fp8 where the source does not say: the smaller cache gives the looser bound).
    The decode context is input_len + output_len / 2 (a request's mean context while it decodes).
    One replica spans max(tp, ep) * pp GPUs (calc.layout.Layout: with ep > tp the attention is data
    parallel inside the replica); n_gpus / that many replicas share the load.

    - tpot_ms, itl_ms: >= one decode step at batch = concurrency per replica (1 when a rate run). Where more are
      in service than an engine surely decodes at once, it decodes fewer, a number the row does not give, while the
      others wait, and the step is then bounded at one sequence: more than the sequences of that context whose
      cache fits beside the weights in all of the memory the driver reports (``calc.gpu_share.
      max_batch_per_replica``, no reserve; the engine's own reserve, vLLM's --gpu-memory-utilization, SGLang's
      --mem-fraction-static, its CUDA graphs and activations, holds fewer), or more than ``ENGINE_BATCH_FLOOR``,
      the smallest default largest batch of the engines (vLLM's max_num_seqs 256). GPUStack's 1,000 ShareGPT
      prompts at once with Qwen3-32B on one A100 measured a TPOT of 75 ms against a step of 110 ms at the 219 the
      whole memory holds (SGLang held 79), and vLLM's FP8 run an ITL of 218 ms against 225 ms at 1,000 (it ran 256).
    - output_tok_per_s_per_user: <= 1000 / that step in ms.
    - ttft_ms, e2e_ms: >= the prefill of one prompt (e2e adds output_len - 1 decode steps).
    - output_tok_per_s (whole deployment), output_tok_per_s_per_gpu, total_tok_per_s_per_gpu,
      requests_per_s: <= what the replicas can produce when each decodes ``B`` sequences per step, B =
      concurrency / replicas (offline and rate runs: unbounded), and each request also pays its prompt's
      prefill FLOPs: time per request per replica >= prefill compute / pp + output_len * step(B) / B (the pp
      pipeline stages prefill pp prompts at once, each over its share of the layers).

    A run with speculative decoding (MTP, EAGLE; said in its notes) emits up to k + 1 tokens per sequence in a round
    that costs at least one decode step (``tokens_per_round``): its per-token times (TPOT, an ITL its client books
    per token, ``itl_per_token``, the decode part of E2E) are bounded by the step over k + 1, its throughputs by k + 1
    times the plain ones; an ITL booked per streamed chunk is a whole round, at least one step. Rate runs are
    bounded at batch 1, the loosest case, since their concurrency is not published.

    Source of the step formulas: ``calc.step.decode_step_time`` (the inference course, week 11,
    step 4) and ``calc.parallel``; the serving metrics as vLLM's benchmark_serving defines them.

    Raises:
        ValueError: unknown model/accelerator/dtype or a layout the model cannot take (calc.parallel).
    """
    r = dict(row)
    model = get_model(r["model"])
    acc = with_matmul(get_accelerator(r["accelerator"]), "low_precision")
    wdt = "nvfp4" if r["weight_dtype"] == "fp4" else r["weight_dtype"]
    kdt = r["kv_dtype"] if isinstance(r["kv_dtype"], str) and r["kv_dtype"] else "fp8"
    kdt = "fp8" if kdt in ("fp4", "nvfp4", "mxfp4") else kdt
    tp, pp, ep = (int(r[k]) for k in ("tp", "pp", "ep"))
    n_in, n_out = int(r["input_len"]), int(r["output_len"])
    conc = r.get("concurrency")
    conc = None if conc is None or (isinstance(conc, float) and math.isnan(conc)) or conc is pd.NA else int(conc)
    ctx = n_in + max(n_out // 2, 1)
    metric, value = r["metric"], float(r["value"])
    kind = METRICS[metric][1]
    layout = dict(tp=tp, pp=pp, ep=ep)

    notes = r.get("notes", "")
    per_round = tokens_per_round(notes)  # tokens a decode step may emit per sequence: k + 1 under speculation

    def step(batch):
        return decode_step_time(model, acc, batch, ctx, wdt, kdt, **layout)

    def prefill_s(batch=1):
        return prefill_time(model, acc, n_in, batch, wdt, kdt, logits="last", **layout)

    replicas = max(1, int(r["n_gpus"]) // (max(tp, ep) * pp))
    per_replica = max(1, math.ceil(conc / replicas)) if conc else None

    def decoded(batch):
        """The batch a decode step is bounded at: ``batch`` where it fits in the driver's whole memory and no engine
        default holds fewer, else one sequence (the engine's own reserve or largest batch sets how many fewer it
        decodes)."""
        if batch <= 1:
            return batch
        try:
            fits = max_batch_per_replica(model, with_capacity(acc, "driver"), ctx, Layout(tp, pp, ep), wdt, kdt)
        except ValueError:
            return batch
        return batch if batch <= ENGINE_BATCH_FLOOR and (fits < 1 or batch <= fits) else 1

    spec_words = f" over the {per_round} tokens a speculative round emits at most" if per_round > 1 else ""
    if metric in ("tpot_ms", "itl_ms", "output_tok_per_s_per_user"):
        b = decoded(per_replica or 1)
        tokens = 1 if metric == "itl_ms" and not itl_per_token(notes) else per_round  # a chunk is a whole round
        ms = step(b).total_s * 1e3 / tokens
        bound = ms if kind == "latency" else 1e3 / ms
        held = (f" (of {per_replica} in service: more than an engine surely decodes at once, the whole memory's "
                f"fit or {ENGINE_BATCH_FLOOR}, so bounded at one)") if per_replica and b < per_replica else ""
        how = f"decode step at batch {b}{held}, context {ctx}{spec_words if tokens > 1 else ''}: {ms:.3f} ms"
    elif metric in ("ttft_ms", "e2e_ms"):
        p = prefill_s(1).total_s * 1e3
        bound, how = p, f"prefill of one {n_in}-token prompt: {p:.3f} ms"
        if metric == "e2e_ms":
            s = step(decoded(per_replica or 1)).total_s * 1e3 / per_round
            bound = p + (n_out - 1) * s
            how += f" + {n_out - 1} decode steps of {s:.3f} ms{spec_words}"
    else:
        b = per_replica or _UNBOUNDED_BATCH
        st = step(b)
        per_token_s = st.total_s / b / per_round
        pre = prefill_s(1)
        # per replica, requests back to back; a prompt's prefill is a pass through all pp stages (its latency), while
        # the stages prefill pp prompts at once, each its own share of the layers, as they decode (the decode step
        # above is already a stage's)
        request_s = pre.compute_s / pp + n_out * per_token_s
        out_per_s = replicas * n_out / request_s  # whole deployment
        bound = {"output_tok_per_s": out_per_s,
                 "output_tok_per_s_per_gpu": out_per_s / int(r["n_gpus"]),
                 "total_tok_per_s_per_gpu": out_per_s * (n_in + n_out) / n_out / int(r["n_gpus"]),
                 "requests_per_s": out_per_s / n_out}[metric]
        how = (f"{replicas} replica(s) of tp{tp} pp{pp} ep{ep}, batch {b if per_replica else 'unbounded'}: "
               f"{per_token_s * 1e6:.2f} us per output token{spec_words} + prefill compute "
               f"{pre.compute_s / pp * 1e3:.3f} ms per request"
               + (f" (its pass through the {pp} stages over {pp}: they prefill {pp} prompts at once)" if pp > 1 else ""))
    return MeasurementBound(bound, kind, value / bound, how)


def bounds_table(df: pd.DataFrame) -> pd.DataFrame:
    """``measurement_bound`` for every row of a measurements frame: columns id, metric, value, bound, kind,
    ratio, respected, how (one row per measurement, same order).

    Raises:
        ValueError: as ``measurement_bound``.
    """
    out = []
    for _, r in df.iterrows():
        b = measurement_bound(r)
        out.append(dict(id=r["id"], metric=r["metric"], value=r["value"], bound=b.bound, kind=b.kind,
                        ratio=b.ratio, respected=b.respected, how=b.how))
    return pd.DataFrame(out, columns=["id", "metric", "value", "bound", "kind", "ratio", "respected", "how"])


def rounds_note(rounds: int) -> str:
    """The words a row's notes use for a closed loop's run of ``rounds`` x C requests at concurrency C (the
    importers write them; ``calc.serving_fit`` reads the rounds back for ``calc.serving_terms.lockstep_share``)."""
    return f"{int(rounds)} rounds of C requests"
