"""InferenceX (formerly InferenceMAX, SemiAnalysis) benchmark results -> measurement rows.

InferenceX runs ``benchmark_serving`` at each concurrency and reduces every run to one JSON object
(``utils/process_result.py`` of github.com/SemiAnalysisAI/InferenceX, commit
77f3e680728b4026bb0b9e05dca7ba6cb5502362, Apache-2.0), written as ``agg_<result>.json``:

- ``hw`` (runner type, e.g. "h200", "b200-nvd", "mi355x"), ``model`` (the served checkpoint's id, e.g.
  "deepseek-ai/DeepSeek-R1-0528"), ``framework`` ("vllm", "sglang", "trt", "dynamo-trt", ...),
  ``precision`` ("fp8", "fp4", "bf16"), ``spec_decoding`` ("none" or a method), ``disagg``, ``isl``,
  ``osl``, ``conc`` (``max_concurrency``), ``is_multinode``, ``tp``, ``ep``, ``dp_attention``;
- ``tput_per_gpu`` (input + output tokens/s / tp), ``output_tput_per_gpu`` (output tokens/s / tp),
  ``input_tput_per_gpu``;
- every ``*_ms`` field of the benchmark with ``_ms`` dropped and the value in **seconds**
  (``mean_ttft``, ``median_ttft``, ``p99_ttft``, ``mean_tpot``, ``median_tpot``, ``mean_itl``,
  ``mean_e2el``, ...), and for each TPOT statistic an ``*_intvty`` = 1000 / TPOT_ms (tokens/s per user).

A file holds one such object or a list of them (the collected results of a sweep). ``parse_inferencex``
turns each into rows of ``calc.measurements.COLUMNS`` (output tokens/s per GPU, total tokens/s per GPU,
TPOT, TTFT and e2e latency), validated as a user's measurements file is.
"""
from __future__ import annotations

import json
import math
import re

import pandas as pd

from .hardware import list_accelerators
from .measurements import COLUMNS, _check_row, _frame
from .models import list_models

#: The largest result file read (bytes): a sweep's collected results are some hundred kB.
MAX_BYTES = 5_000_000
#: Fields every result object must carry.
REQUIRED = ("hw", "conc", "model", "framework", "precision", "isl", "osl", "tp", "output_tput_per_gpu")
#: Served checkpoints -> the model preset of the same architecture (lower-case substrings of the id).
MODEL_ALIASES = (("deepseek-r1", "deepseek-v3"), ("deepseek-v3.2", "deepseek-v3.2"), ("deepseek-v3", "deepseek-v3"),
                 ("llama-3.3-70b", "llama-3.1-70b"), ("llama-3.1-70b", "llama-3.1-70b"),
                 ("llama-3.1-405b", "llama-3.1-405b"), ("llama-3.1-8b", "llama-3.1-8b"),
                 ("gpt-oss-120b", "gpt-oss-120b"), ("gpt-oss-20b", "gpt-oss-20b"), ("kimi-k2", "kimi-k2"),
                 ("qwen3-235b-a22b", "qwen3-235b-a22b"), ("qwen3-30b-a3b", "qwen3-30b-a3b"))
#: Runner names whose preset carries a form factor: InferenceX's H100 runners are SXM (HGX) nodes.
RUNNER_ALIASES = {"h100": "h100-sxm"}
#: (metric of calc.measurements.METRICS, statistic, InferenceX field, factor to the metric's unit)
METRIC_FIELDS = (("output_tok_per_s_per_gpu", "mean", "output_tput_per_gpu", 1.0),
                 ("total_tok_per_s_per_gpu", "mean", "tput_per_gpu", 1.0),
                 ("tpot_ms", "mean", "mean_tpot", 1e3), ("tpot_ms", "median", "median_tpot", 1e3),
                 ("ttft_ms", "mean", "mean_ttft", 1e3), ("ttft_ms", "median", "median_ttft", 1e3),
                 ("e2e_ms", "mean", "mean_e2el", 1e3))


def match_model(model_id: str) -> str | None:
    """The model preset for a served checkpoint id (``MODEL_ALIASES``, else the id's last part when it is a
    preset name), or None."""
    name = str(model_id).strip().lower()
    for pattern, preset in MODEL_ALIASES:
        if pattern in name:
            return preset
    tail = name.rsplit("/", 1)[-1]
    return tail if tail in list_models() else None


def match_accelerator(hw: str) -> str | None:
    """The accelerator preset for an InferenceX runner type ("h200", "b200-nvd", "h100-cr", "mi300x-amd"):
    the name itself, else its first part before "-" or "_", through ``RUNNER_ALIASES`` where the preset
    names the form factor ("h100" -> "h100-sxm"), or None."""
    name = str(hw).strip().lower()
    presets = list_accelerators()
    if name in presets:
        return name
    head = re.split(r"[-_]", name)[0]
    if head in presets:
        return head
    return RUNNER_ALIASES.get(head)


def _engine(framework: str) -> str:
    f = str(framework).lower()
    return "trtllm" if "trt" in f else "sglang" if "sglang" in f else "vllm" if "vllm" in f else "other"


def _int(obj: dict, key: str, where: str) -> int:
    v = obj.get(key)
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: field '{key}' must be a number, got {v!r}") from None
    if not math.isfinite(f) or f < 1 or f != int(f):
        raise ValueError(f"{where}: field '{key}' must be a positive whole number, got {v!r}")
    return int(f)


def parse_inferencex(data: bytes | str, name: str = "results.json", model: str | None = None,
                     accelerator: str | None = None, source_id: str = "inferencex-upload") -> tuple[pd.DataFrame, list]:
    """Rows of ``calc.measurements.COLUMNS`` from an InferenceX result file (one object or a list).

    ``model`` / ``accelerator``: presets to use for every object (default: matched from ``model`` and
    ``hw`` with ``match_model`` and ``match_accelerator``). Multi-node (disaggregated) results are skipped
    (the serving model times one aggregated replica); speculative decoding is noted so that comparisons
    can leave it out.

    Returns:
        (DataFrame of the rows, list of "object i: reason" for skipped objects).

    Raises:
        ValueError: over ``MAX_BYTES``, not JSON, not an object or a list of objects, a missing or
            malformed field, a model or runner no preset matches (the message names the object and
            the field), or no usable result at all.
    """
    if len(data) > MAX_BYTES:
        raise ValueError(f"{name}: {len(data):,} bytes; the limit is {MAX_BYTES:,} bytes")
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{name}: not a JSON file ({e})") from None
    objs = [doc] if isinstance(doc, dict) else doc
    if not isinstance(objs, list) or not objs or not all(isinstance(o, dict) for o in objs):
        raise ValueError(f"{name}: expected an InferenceX result object (fields {', '.join(REQUIRED)}) or a list "
                         "of them")
    rows, skipped, seen = [], [], set()
    for k, o in enumerate(objs):
        where = f"{name} object {k + 1}"
        multinode = o.get("is_multinode") in (True, "true", "True") or o.get("disagg") in (True, "true", "True")
        missing = [f for f in REQUIRED if f not in o and not (multinode and f == "tp")]
        if missing:
            raise ValueError(f"{where}: missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                             "(not an InferenceX result: see utils/process_result.py of SemiAnalysisAI/InferenceX)")
        if multinode:
            skipped.append(f"object {k + 1}: multi-node / disaggregated run (the serving model times one "
                           "aggregated replica)")
            continue
        m = model or match_model(o["model"])
        if m is None:
            raise ValueError(f"{where}: no model preset matches '{o['model']}'; choose the preset of the same "
                             "architecture")
        acc = accelerator or match_accelerator(o["hw"])
        if acc is None:
            raise ValueError(f"{where}: no accelerator preset matches runner '{o['hw']}'; choose the accelerator")
        tp, conc, isl, osl = (_int(o, key, where) for key in ("tp", "conc", "isl", "osl"))
        ep = _int(o, "ep", where) if "ep" in o else 1
        spec = str(o.get("spec_decoding", "none") or "none").lower()
        notes = (f"InferenceX {o['framework']} {o['precision']}; checkpoint {o['model']}; runner {o['hw']}"
                 + (f"; speculative decoding {spec}" if spec not in ("none", "false", "") else "")
                 + ("; DP attention" if str(o.get("dp_attention", "")).lower() == "true" else ""))
        for metric, stat, field, factor in METRIC_FIELDS:
            if field not in o:
                continue
            try:
                value = float(o[field]) * factor
            except (TypeError, ValueError):
                raise ValueError(f"{where}: field '{field}' must be a number, got {o[field]!r}") from None
            if not math.isfinite(value) or value <= 0:
                continue
            rid = f"{source_id}-{acc}-{m}-{_engine(o['framework'])}-{o['precision']}-{isl}-{osl}-tp{tp}-ep{ep}-c{conc}"\
                  f"-{metric}-{stat}"
            if rid in seen:
                continue
            seen.add(rid)
            raw = {"id": rid, "source_id": source_id, "model": m, "model_family": "", "accelerator": acc,
                   "n_gpus": str(tp), "tp": str(tp), "pp": "1", "ep": str(ep), "dp": "1",
                   "engine": _engine(o["framework"]), "engine_version": str(o.get("image", "")),
                   "weight_dtype": str(o["precision"]).lower(), "kv_dtype": "", "input_len": str(isl),
                   "output_len": str(osl), "len_dist": "random", "concurrency": str(conc),
                   "request_rate_per_s": "", "mode": "concurrency", "metric": metric, "statistic": stat,
                   "value": repr(value), "notes": notes}
            rows.append(_check_row(where, raw, None, with_value=True))
    if not rows:
        raise ValueError(f"{name}: no single-node result with a positive value"
                         + (f" ({'; '.join(skipped)})" if skipped else ""))
    return _frame(rows, COLUMNS), skipped
