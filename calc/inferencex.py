"""InferenceX (formerly InferenceMAX, SemiAnalysis) benchmark results -> measurement rows.

InferenceX results come in four shapes; ``parse_inferencex`` tells them apart by their fields:

1. **Aggregated result** (``agg_<result>.json``, ``utils/process_result.py`` of
   github.com/SemiAnalysisAI/InferenceX, commit 77f3e680728b4026bb0b9e05dca7ba6cb5502362, Apache-2.0): flat
   objects with ``hw`` (runner type, e.g. "h200", "b200-nvd", "mi355x"), ``model`` (the served checkpoint's
   id, e.g. "deepseek-ai/DeepSeek-R1-0528"), ``framework`` ("vllm", "sglang", "trt", "dynamo-trt", ...),
   ``precision`` ("fp8", "fp4", "bf16"), ``spec_decoding`` ("none" or a method), ``disagg``,
   ``is_multinode``, ``isl``, ``osl``, ``conc`` (``max_concurrency``), ``tp``, ``ep``, ``dp_attention``,
   ``image``; ``tput_per_gpu`` (input + output tokens/s / GPUs, GPUs = tp * pp * pcp),
   ``output_tput_per_gpu``, ``input_tput_per_gpu``; every ``*_ms`` field of the benchmark with ``_ms``
   dropped and the value in **seconds** (``mean_ttft``, ``median_tpot``, ``p99_ttft``, ``mean_e2el``, ...),
   and ``*_intvty`` = 1000 / TPOT_ms (tokens/s per user).
2. **Dashboard record** (the benchmark API behind inferencex.com, code in SemiAnalysisAI/InferenceX-app):
   ``hardware``, ``framework``, ``model`` (InferenceX's short model prefix: "dsr1", "gptoss", "llama70b",
   ...), ``precision``, ``spec_method``, ``disagg``, ``is_multinode``, ``prefill_tp`` / ``_ep`` /
   ``_dp_attention`` / ``_num_workers``, the same four for ``decode_``, ``num_prefill_gpu``,
   ``num_decode_gpu``, ``isl``, ``osl``, ``conc``, ``image``, ``date``, ``run_url``, and ``metrics`` with
   the aggregated result's metric fields (times in **seconds**, throughput per GPU). A single-node record
   gives the same layout for prefill and decode; its decode layout is the replica.
3. **Runner result** (``together_runner/compare.py emit`` of SemiAnalysisAI/InferenceX, commit
   1aadd1e57df656ca692bf4b13e294ca0cf503c72, Apache-2.0; e.g. ``together_runner/baselines/``): ``hw``,
   ``model`` (hub id), ``framework``, ``precision``, ``isl``, ``osl``, ``tp``, ``ep`` (0 = no expert
   parallelism), ``conc``, ``image``, ``ts`` and ``metrics`` in **milliseconds** and tokens/s of the **whole
   server** (``total_token_throughput``, ``output_token_throughput``, ``request_throughput``,
   ``median_ttft_ms``, ``p99_tpot_ms``, ...). Per GPU = server / tp, as process_result.py divides:
   ``gpu.n_gpus`` counts every GPU of the node the power monitor saw, used or not.

4. **InferenceMAX aggregated result of 2025** (``official_data/agg_<model>_<isl>k<osl>k.json`` as InferenceMAX
   published it in October-November 2025; e.g. ``official_data/`` of github.com/faradawn/InferenceMAX, a fork of the
   benchmark repository, at commit 7a175041fc1b103832870e8ff4ec3b0b1ff5dd2f of 2025-11-13, Apache-2.0): the aggregated result's fields without ``isl``, ``osl``,
   ``spec_decoding``, ``disagg``, ``is_multinode`` and ``image``. The lengths are in the file's name ("1k1k":
   1,024 / 1,024, "8k1k": 8,192 / 1,024; ``lengths_from_name``), speculative decoding is ``mtp`` ("on" / "off"),
   and a ``dynamo-*`` framework is a disaggregated multi-node run (GB200 NVL72). The file states no date: pass
   ``run_date`` (the date of the commit that added it is the latest the runs can be) or the rows carry none.

A file holds one object or a list of them. Each becomes rows of ``calc.measurements.COLUMNS`` (output and
total tokens/s per GPU, TPOT, TTFT, e2e latency, requests/s; not ITL, see ``METRIC_FIELDS``), validated
as a user's measurements file is, the object's own model name kept in ``calc.measurements.PUBLISHED_MODEL``;
"fp4" is read as NVFP4 or MXFP4 (``weight_dtype``), the formats calc prices. A raw ``benchmark_serving`` result
(``model_id``, ``max_concurrency``: e.g. InferenceX's ``experimental/token_position_decode_slo/*/results``) names no
hardware, layout or precision and is refused with a message that says so.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re

import pandas as pd

from .hardware import get_accelerator, list_accelerators, match_accelerator_name
from .measurements import COLUMNS, PUBLISHED_MODEL, _check_row, _frame, rounds_note
from .dtypes import MIXED_EXPERT_FORMATS
from .models import get_model, match_checkpoint

#: The largest result file read (bytes): a sweep's collected results are some hundred kB, a dashboard export
#: of one model a few MB.
MAX_BYTES = 5_000_000
#: Fields every object of each shape must carry (besides at least one metric).
REQUIRED = ("hw", "conc", "model", "framework", "precision", "isl", "osl", "tp", "output_tput_per_gpu")
REQUIRED_DASHBOARD = ("hardware", "conc", "model", "framework", "precision", "isl", "osl", "decode_tp", "metrics")
REQUIRED_RUNNER = ("hw", "conc", "model", "framework", "precision", "isl", "osl", "tp", "metrics")
#: InferenceX's model prefixes (``model-prefix`` of its configs/*-master.yaml, the dashboard's ``model``) -> the
#: preset of the checkpoint they name there: dsr1 = DeepSeek-R1-0528 (DeepSeek-V3's architecture), gptoss =
#: gpt-oss-120b, llama70b / 70b = Llama-3.3-70B-Instruct (Llama 3.1 70B's architecture), kimik2.5 = Kimi-K2.5,
#: glm5 / glm5.1 = GLM-5 / GLM-5.1 (GLM-5's shapes), minimaxm2.5 = MiniMax-M2.5, qwen3.5 = Qwen3.5-397B-A17B,
#: dsv4 = deepseek-ai/DeepSeek-V4-Pro, minimaxm3 = MiniMaxAI/MiniMax-M3-MXFP8 (MiniMax-M3's shapes) (configs/*.yaml of
#: SemiAnalysisAI/InferenceX at 843c6254). glm5.2 has no preset.
MODEL_PREFIXES = {"dsr1": "deepseek-v3", "gptoss": "gpt-oss-120b", "llama70b": "llama-3.1-70b",
                  "70b": "llama-3.1-70b", "kimik2.5": "kimi-k2", "kimik2": "kimi-k2", "glm5": "glm-5",
                  "glm5.1": "glm-5", "minimaxm2.5": "minimax-m2.5", "qwen3.5": "qwen3.5-397b-a17b",
                  "dsv4": "deepseek-v4-pro", "minimaxm3": "minimax-m3"}
#: Runner names whose preset carries a form factor: InferenceX's H100 runners are SXM (HGX) nodes.
RUNNER_ALIASES = {"h100": "h100-sxm"}


def _time_fields(suffix: str, factor: float) -> tuple:
    """(metric, statistic, field, factor) of TPOT, TTFT and end-to-end latency, each as mean, median and p99:
    the fields ``{statistic}_{tpot|ttft|e2el}{suffix}``."""
    return tuple((metric, stat, f"{stat}_{field}{suffix}", factor)
                 for metric, field in (("tpot_ms", "tpot"), ("ttft_ms", "ttft"), ("e2e_ms", "e2el"))
                 for stat in ("mean", "median", "p99"))


#: (metric of calc.measurements.METRICS, statistic, field, factor to the metric's unit) of the aggregated
#: result and the dashboard's ``metrics``: seconds -> ms, throughput already per GPU. ITL is left out: the
#: engines stream several tokens per chunk, so InferenceX's ITL times chunks, not tokens (the together_runner
#: baseline of DeepSeek-R1 FP4 on SGLang at concurrency 64: median ITL 181 ms, median TPOT 21 ms).
METRIC_FIELDS = (("output_tok_per_s_per_gpu", "mean", "output_tput_per_gpu", 1.0),
                 ("total_tok_per_s_per_gpu", "mean", "tput_per_gpu", 1.0)) + _time_fields("", 1e3)
#: The same for a runner result's ``metrics``: milliseconds as they are; throughput of the server, divided by
#: the GPUs (tp) where the factor is None; requests/s of the whole server.
RUNNER_METRIC_FIELDS = (("output_tok_per_s_per_gpu", "mean", "output_token_throughput", None),
                        ("total_tok_per_s_per_gpu", "mean", "total_token_throughput", None),
                        ("requests_per_s", "mean", "request_throughput", 1.0)) + _time_fields("_ms", 1.0)
_TRUE = (True, "true", "True", "TRUE", 1, "1")
_NO_SPEC = ("none", "false", "", "null")


def match_model(model_id: str) -> str | None:
    """The model preset for a served checkpoint id or an InferenceX model prefix (``MODEL_PREFIXES``, else
    ``calc.models.match_checkpoint``: checkpoints of a preset's architecture), or None."""
    name = str(model_id).strip().lower()
    if name in MODEL_PREFIXES:
        return MODEL_PREFIXES[name]
    return match_checkpoint(name)


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
    return RUNNER_ALIASES.get(head) or match_accelerator_name(name)


def engine_version(image) -> str:
    """The engine version of a container image's tag ("vllm/vllm-openai:v0.22.0" -> "0.22.0",
    "lmsysorg/sglang:v0.5.9-rocm700-mi35x" -> "0.5.9", ".../tensorrt-llm/release:1.1.0rc2" -> "1.1.0rc2"),
    or "" when the tag does not start with a version ("latest", "dev-cu13") or there is no image."""
    if not isinstance(image, str) or ":" not in image:
        return ""
    tag = image.rsplit(":", 1)[1]
    m = re.match(r"v?(\d+\.\d+(?:\.\d+)*(?:\.?(?:rc|post)\d+)*)(?:$|[-_+])", tag)
    return m.group(1) if m else ""


def weight_dtype(precision: str, checkpoint: str, accelerator: str) -> str:
    """calc's weight dtype for an InferenceX ``precision`` ("fp8", "bf16", "fp4", ...; lower-cased as it is
    but for "fp4", which InferenceX writes for several block formats): "mxfp4" for a checkpoint whose name says
    MXFP4 (amd/...-MXFP4) and for gpt-oss (released in MXFP4), "nvfp4" for one that says NVFP4 or comes from
    nvidia/ (nvidia/DeepSeek-R1-0528-FP4); a model released with fp4 experts beside fp8 layers (DeepSeek-V4:
    its preset's ``checkpoint_format`` "mxfp4-fp8") keeps those fp8 layers: "nvfp4-fp8" for NVIDIA's copy, else
    its own format, whatever the accelerator (InferenceX's dsv4 runs name deepseek-ai/DeepSeek-V4-Pro); else by
    the accelerator's maker (AMD: "mxfp4", others "nvfp4")."""
    p = str(precision).strip().lower()
    if p != "fp4":
        return p
    name = str(checkpoint).strip().lower()
    preset = match_model(name)
    mixed = get_model(preset).checkpoint_format if preset else None
    mixed = mixed if mixed in MIXED_EXPERT_FORMATS else None
    if "mxfp4" in name or "gpt-oss" in name or name == "gptoss":
        return "mxfp4"
    if "nvfp4" in name or name.startswith("nvidia/"):
        return "nvfp4-fp8" if mixed else "nvfp4"
    if mixed:
        return mixed
    return "mxfp4" if get_accelerator(accelerator).name.startswith("AMD") else "nvfp4"


#: InferenceX's single-node SGLang scripts for DeepSeek-R1 on B200 and B300 (benchmarks/single_node/fixed_seq_len/
#: dsr1_{fp4,fp8}_{b200,b300}.sh of SemiAnalysisAI/InferenceX at commit 843c6254ff69b567f772f6a5fd97675af3d04431,
#: Apache-2.0; the rule is in the scripts since September 2025, commit 979e65e0c) launch the server with
#: ``--scheduler-recv-interval``: 30 at a concurrency of 16 or more, 10 below; 1 with DP attention; 10 for fp8 at
#: TP4. Accelerators whose script sets it.
RECV_INTERVAL_HARDWARE = ("b200", "b300")
RECV_INTERVAL_SCRIPT = "benchmarks/single_node/fixed_seq_len/dsr1_{precision}_{hardware}.sh"


#: InferenceX's TensorRT-LLM scripts run attention DP with ``attention_dp_config: {enable_balance: true,
#: timeout_iters: 60, batching_wait_iters: 0}`` (benchmarks/single_node/fixed_seq_len/dsr1_*_trt.sh, same commit;
#: since September 2025): a rank with a prompt waits up to 60 iterations for every rank to have one (NVIDIA
#: TensorRT-LLM docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md, "Context Synchronization").
ADP_BALANCE_TIMEOUT_ITERS = 60
#: InferenceX draws each prompt and output length uniformly between RANDOM_RANGE_RATIO x and 1 x the nominal
#: length (utils/bench_serving/benchmark_serving.py, ``sample_uniform``; RANDOM_RANGE_RATIO 0.8 in
#: .github/workflows/benchmark-tmpl.yml, same commit), so a run's mean lengths are (1 + 0.8) / 2 = 0.9 of the
#: nominal ISL and OSL; the import writes the means (the dashboard's record states the nominal lengths only).
RANDOM_RANGE_RATIO = 0.8
#: InferenceX's single-node runs send ``--num-prompts`` CONC x 10 at ``--max-concurrency`` CONC after 2 x CONC
#: warm-up requests (benchmarks/single_node/*.sh and benchmark_lib.sh ``run_benchmark_serving``): 10 rounds,
#: the first of which starts as one burst (``calc.serving_terms.lockstep_share``).
ROUNDS = 10


def launch_recv_interval(preset: str, accelerator: str, engine: str, precision: str, tp: int, conc: int,
                         dp_attention: bool) -> int | None:
    """The ``--scheduler-recv-interval`` InferenceX's own script launched this run's server with (see
    ``RECV_INTERVAL_HARDWARE``), or None where its script sets none (SGLang's default 1): SGLang then takes in
    new requests once every that many decode steps, which ``calc.serving_fit`` turns into the wait before a
    prompt is admitted (R / 2 steps on average).
    Example: launch_recv_interval("deepseek-v3", "b200", "sglang", "fp4", 8, 32, False) = 30; at concurrency 8,
    10; with DP attention, 1; on an H200 (whose script sets none), None.
    """
    if preset != "deepseek-v3" or engine != "sglang" or accelerator not in RECV_INTERVAL_HARDWARE:
        return None
    if dp_attention:
        return 1
    if str(precision).lower() == "fp8" and tp == 4:
        return 10
    return 30 if conc >= 16 else 10


_NAME_LENGTHS = re.compile(r"(?<![0-9a-z])(\d+)k(\d+)k(?![0-9a-z])")


def lengths_from_name(name: str) -> tuple[int, int] | None:
    """(input, output) tokens from a file name that carries them as InferenceMAX named its aggregated results,
    "<isl>k<osl>k" in thousands of 1,024 ("agg_gptoss_1k8k.json" -> (1024, 8192)), or None.

    Raises nothing; two different pairs in one name give None (ambiguous)."""
    pairs = {(int(a) * 1024, int(b) * 1024) for a, b in _NAME_LENGTHS.findall(str(name).lower())}
    pairs = {p for p in pairs if p[0] > 0 and p[1] > 0}
    return pairs.pop() if len(pairs) == 1 else None


def _engine(framework: str) -> str:
    f = str(framework).lower()
    return "trtllm" if "trt" in f else "sglang" if "sglang" in f else "vllm" if "vllm" in f else "other"


def _int(obj: dict, key: str, where: str, minimum: int = 1) -> int:
    v = obj.get(key)
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: field '{key}' must be a number, got {v!r}") from None
    if not math.isfinite(f) or f < minimum or f != int(f):
        raise ValueError(f"{where}: field '{key}' must be a {'positive' if minimum else 'non-negative'} whole "
                         f"number, got {v!r}")
    return int(f)


def _shape(o: dict) -> str:
    """"dashboard", "runner", "agg" or "bench" (a raw benchmark_serving result) by the object's fields."""
    if "hardware" in o and isinstance(o.get("metrics"), dict):
        return "dashboard"
    if "hw" in o and isinstance(o.get("metrics"), dict):
        return "runner"
    if "hw" not in o and "hardware" not in o and "model_id" in o and "max_concurrency" in o:
        return "bench"
    return "dashboard" if "hardware" in o else "agg"


def _require(o: dict, fields, where: str, what: str) -> None:
    missing = [f for f in fields if f not in o]
    if missing:
        raise ValueError(f"{where}: missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)} ({what})")


def _normalise(o: dict, where: str, name_lengths: tuple[int, int] | None = None) -> dict:
    """The object as {hw, model, framework, precision, isl, osl, conc, tp, ep, dp_attention, spec, image,
    multinode, extra, metrics: [(metric, statistic, field, value in the metric's unit)]}. ``name_lengths``: the
    lengths the file's name carries (``lengths_from_name``), for an aggregated result of 2025 without isl / osl."""
    if "metrics" in o and not isinstance(o["metrics"], dict):
        raise ValueError(f"{where}: field 'metrics' must be an object of metric fields, got {o['metrics']!r:.60}")
    shape = _shape(o)
    if shape == "bench":
        raise ValueError(f"{where}: a raw benchmark_serving result (model_id, max_concurrency): it names no "
                         "hardware, parallel layout or precision (InferenceX's experimental files keep them in "
                         "the file name); write its numbers as rows of a measurements CSV instead")
    if shape == "dashboard":
        _require(o, REQUIRED_DASHBOARD, where, "an InferenceX dashboard record: see the benchmark API of "
                 "inferencex.com")
        multinode = o.get("is_multinode") in _TRUE or o.get("disagg") in _TRUE
        src, fields, per_server = o["metrics"], METRIC_FIELDS, False
        hw, spec = o["hardware"], o.get("spec_method", "none")
        tp_key, ep_key, dp_key = "decode_tp", "decode_ep", "decode_dp_attention"
        extra = "; ".join(f"{k} {o[k]}" for k in ("date", "run_url") if o.get(k))
    elif shape == "runner":
        _require(o, REQUIRED_RUNNER, where, "an InferenceX runner result: see together_runner/compare.py of "
                 "SemiAnalysisAI/InferenceX")
        multinode = False
        src, fields, per_server = o["metrics"], RUNNER_METRIC_FIELDS, True
        hw, spec = o["hw"], o.get("spec_decoding", "none")
        tp_key, ep_key, dp_key = "tp", "ep", "dp_attention"
        extra = f"run {o['ts']}" if o.get("ts") else ""
    else:
        # InferenceMAX's aggregated results of 2025 mark a disaggregated multi-node run by its framework alone
        # ("dynamo-sglang", "dynamo-trtllm" on GB200 NVL72) and speculative decoding as mtp "on" / "off"
        multinode = (o.get("is_multinode") in _TRUE or o.get("disagg") in _TRUE
                     or str(o.get("framework", "")).lower().startswith("dynamo"))
        o = dict(o)
        if name_lengths and "isl" not in o and "osl" not in o:
            o["isl"], o["osl"] = name_lengths
            extra_lengths = (f"lengths {name_lengths[0]:,} / {name_lengths[1]:,} from the file's name (InferenceMAX's "
                             "aggregated results of 2025 carry none)")
        else:
            extra_lengths = ""
        wanted = [f for f in REQUIRED if not (multinode and f in ("tp", "isl", "osl"))]
        missing = [f for f in wanted if f not in o]
        if missing and set(missing) <= {"isl", "osl"}:
            # every other field of an aggregated result: InferenceMAX's format of 2025, lengths in the file name
            raise ValueError(f"{where}: an InferenceMAX aggregated result of 2025, which states no lengths (isl, "
                             "osl): its file name must carry them as InferenceMAX named its files, e.g. "
                             "agg_gptoss_1k8k.json for 1,024 prompt and 8,192 output tokens; rename the file")
        _require(o, wanted, where, "not an InferenceX result: see utils/process_result.py of SemiAnalysisAI/InferenceX")
        src, fields, per_server = o, METRIC_FIELDS, False
        mtp = str(o.get("mtp", "")).lower()
        hw, spec = o["hw"], o.get("spec_decoding", "mtp" if mtp in ("on", "true", "1") else "none")
        tp_key, ep_key, dp_key = "tp", "ep", "dp_attention"
        extra = extra_lengths
    n = dict(hw=str(hw), model=str(o["model"]), framework=str(o["framework"]), precision=str(o["precision"]),
             spec=str(spec if spec is not None else "none").lower(), image=o.get("image"), multinode=multinode,
             extra=extra, shape=shape)
    if multinode:
        return n
    n["tp"], n["conc"], n["isl"], n["osl"] = (_int(o, k, where) for k in (tp_key, "conc", "isl", "osl"))
    n["ep"] = max(1, _int(o, ep_key, where, minimum=0)) if o.get(ep_key) is not None else 1
    n["dp_attention"] = str(o.get(dp_key, "")).lower() == "true"
    n["metrics"] = []
    for metric, stat, field, factor in fields:
        if field not in src or src[field] is None:
            continue
        v = src[field]
        try:
            value = float(v) if not isinstance(v, bool) else float("nan")
        except (TypeError, ValueError):
            value = float("nan")
        if not math.isfinite(value):
            raise ValueError(f"{where}: field '{field}'{' of metrics' if src is not o else ''} must be a number, "
                             f"got {v!r}")
        value = value / n["tp"] if factor is None else value * factor
        n["metrics"].append((metric, stat, field, value))
    return n


def _json_kind(value) -> str:
    """What a JSON value is, for a message: "a number", "a string", "a list", "null", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "a list", dict: "an object"}.get(type(value), "a value")


def parse_inferencex(data: bytes | str, name: str = "results.json", model: str | None = None,
                     accelerator: str | None = None, source_id: str = "inferencex-upload",
                     run_date: str | None = None) -> tuple[pd.DataFrame, list]:
    """Rows of ``calc.measurements.COLUMNS`` from an InferenceX result file: aggregated results
    (``agg_*.json``), dashboard records or runner results (see the module docstring), one object or a list.

    Units: seconds become ms; a runner result's server throughput becomes tokens/s per GPU (/ tp) and its
    request throughput stays whole-server ``requests_per_s``. The engine version is read from the image tag
    (``engine_version``); precision "fp4" becomes the block format of the checkpoint or the accelerator's
    maker (``weight_dtype``). ``model`` / ``accelerator``: presets to use for every object (default: matched from
    the object's model and hardware with ``match_model`` and ``match_accelerator``). Skipped, each with its
    reason: multi-node (disaggregated) results (the serving model times one aggregated replica), objects whose
    model or hardware no preset matches, and a second object of the same configuration and concurrency.
    Speculative decoding is named in the rows' notes ("speculative decoding on (mtp)", the words
    ``calc.serving_fit.prepare_rows`` leaves out) and in their ids. An aggregated result of 2025 without lengths
    takes them from ``name`` (``lengths_from_name``). ``run_date`` ("YYYY-MM-DD"): the date of runs whose objects
    state none (the serving model dates an engine without a version by its run, ``calc.serving_terms.release_year``).

    Returns:
        (DataFrame of the rows: ``COLUMNS``, then ``calc.measurements.PUBLISHED_MODEL``, the object's own model
        field as it wrote it, "dsr1" or "deepseek-ai/DeepSeek-R1-0528", where ``model`` is the preset matched;
        list of "object i: reason" for skipped objects).

    Raises:
        ValueError: over ``MAX_BYTES``, not JSON, not an object or a list of objects, a raw benchmark_serving
            result, a missing or malformed field (the message names the object and the field), or no usable
            result at all (the message lists why each object was skipped).
    """
    if len(data) > MAX_BYTES:
        raise ValueError(f"{name}: {len(data):,} bytes; the limit is {MAX_BYTES:,} bytes")
    if not (data.strip() if isinstance(data, (bytes, str)) else data):
        raise ValueError(f"{name}: an empty file: no InferenceX result in it")
    try:
        doc = json.loads(data)
    except UnicodeDecodeError:
        raise ValueError(f"{name}: not JSON text (not UTF-8); upload the result file as the benchmark wrote it") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{name}: not JSON: at line {e.lineno}, column {e.colno} the text stops making sense "
                         f"({e.msg.lower()}); upload the result file as the benchmark wrote it") from None
    objs = [doc] if isinstance(doc, dict) else doc
    if isinstance(objs, list) and not objs:
        raise ValueError(f"{name}: an empty list: no InferenceX result in it")
    kinds = ("an agg_*.json result with fields " + ", ".join(REQUIRED) + ", a dashboard record or a runner result")
    if not isinstance(objs, list):
        raise ValueError(f"{name}: expected an InferenceX result object ({kinds}) or a list of them, got "
                         f"{_json_kind(objs)}")
    other = next((k for k, o in enumerate(objs) if not isinstance(o, dict)), None)
    if other is not None:
        raise ValueError(f"{name}: a list of something other than InferenceX result objects (item {other + 1} is "
                         f"{_json_kind(objs[other])}); each item must be a result object ({kinds})")
    if run_date is not None:
        try:
            run_date = _dt.date.fromisoformat(str(run_date).strip()).isoformat()
        except ValueError:
            raise ValueError(f"run date {run_date!r} is not a date (YYYY-MM-DD)") from None
    name_lengths = lengths_from_name(name)
    rows, skipped, seen = [], [], {}
    for k, o in enumerate(objs):
        where = f"{name} object {k + 1}"
        n = _normalise(o, where, name_lengths)
        if n["multinode"]:
            skipped.append(f"object {k + 1}: multi-node / disaggregated run (the serving model times one "
                           "aggregated replica)")
            continue
        m = model or match_model(n["model"])
        acc = accelerator or match_accelerator(n["hw"])
        if m is None or acc is None:
            skipped.append(f"object {k + 1}: " + (f"no model preset matches '{n['model']}'" if m is None else
                                                  f"no accelerator preset matches runner '{n['hw']}'"))
            continue
        if not n["metrics"]:
            skipped.append(f"object {k + 1}: no metric field")
            continue
        spec = n["spec"] not in _NO_SPEC
        engine = _engine(n["framework"])
        config = (f"{source_id}-{acc}-{m}-{engine}-{n['precision'].lower()}{'-' + n['spec'] if spec else ''}"
                  f"-{n['isl']}-{n['osl']}-tp{n['tp']}-ep{n['ep']}{'-dpa' if n['dp_attention'] else ''}-c{n['conc']}")
        if config in seen:
            skipped.append(f"object {k + 1}: same configuration and concurrency as object {seen[config]} "
                           "(the first is kept)")
            continue
        seen[config] = k + 1
        image = n["image"] if isinstance(n["image"], str) else ""
        recv = launch_recv_interval(m, acc, engine, n["precision"], n["tp"], n["conc"], n["dp_attention"])
        script = RECV_INTERVAL_SCRIPT.format(precision=n["precision"].lower(), hardware=acc)
        notes = (f"InferenceX {n['framework']} {n['precision']}; checkpoint {n['model']}; runner {n['hw']}"
                 + (f"; launched with --scheduler-recv-interval {recv} (InferenceX {script})" if recv else "")
                 + (f"; image {image}" if image else "")
                 + (f"; speculative decoding on ({n['spec']})" if spec else "")
                 + (f"; DP attention: attention in {n['tp']} data-parallel ranks of TP1, experts over the {n['tp']} GPUs"
                    if n["dp_attention"] else "")
                 + (f"; attention DP balance on (attention_dp_config enable_balance, timeout_iters "
                    f"{ADP_BALANCE_TIMEOUT_ITERS}; InferenceX dsr1_*_trt.sh)" if n["dp_attention"] and engine == "trtllm" else "")
                 + (f"; mean lengths of the nominal {n['isl']}/{n['osl']}, drawn uniformly from {RANDOM_RANGE_RATIO:g}x to "
                    "1x (InferenceX's random dataset)" if n["shape"] != "runner" else "")
                 + (f"; {rounds_note(ROUNDS)} (--num-prompts {ROUNDS} x concurrency after 2 x concurrency "
                    "warm-up requests)" if n["shape"] != "runner" else "")
                 + (f"; {n['extra']}" if n["extra"] else "")
                 + (f"; date {run_date} (given with the file: its objects state none)"
                    if run_date and "date " not in n["extra"] and not image else ""))
        # DP attention: attention in tp ranks of TP1 (SGLang --dp tp --enable-dp-attention, TensorRT-LLM
        # enable_attention_dp), the experts sharded over the same GPUs (calc's layout: tp 1, ep = GPUs)
        attn_tp, ep = (1, n["tp"]) if n["dp_attention"] else (n["tp"], n["ep"])
        mean = (1.0 + RANDOM_RANGE_RATIO) / 2.0 if n["shape"] != "runner" else 1.0  # a runner states its means
        isl, osl = max(1, round(n["isl"] * mean)), max(1, round(n["osl"] * mean))
        before = len(rows)
        for metric, stat, field, value in n["metrics"]:
            if value <= 0:
                continue
            raw = {"id": f"{config}-{metric}-{stat}", "source_id": source_id, "model": m, "model_family": "",
                   "accelerator": acc, "n_gpus": str(n["tp"]), "tp": str(attn_tp), "pp": "1", "ep": str(ep),
                   "dp": str(n["tp"] if n["dp_attention"] else 1), "engine": engine, "engine_version": engine_version(image),
                   "weight_dtype": weight_dtype(n["precision"], n["model"], acc), "kv_dtype": "",
                   "input_len": str(isl), "output_len": str(osl), "len_dist": "random",
                   "concurrency": str(n["conc"]), "request_rate_per_s": "", "mode": "concurrency", "metric": metric, "statistic": stat,
                   "value": repr(value), "notes": notes,
                   PUBLISHED_MODEL: n["model"]}  # the result's own name for its model (dsr1, a checkpoint's id)
            rows.append(_check_row(where, raw, None, with_value=True))
        if len(rows) == before:
            skipped.append(f"object {k + 1}: no metric with a positive value")
    if not rows:
        raise ValueError(f"{name}: no single-node result with a positive value"
                         + (f" ({'; '.join(skipped)})" if skipped else ""))
    return _frame(rows, COLUMNS), skipped
