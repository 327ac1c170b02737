"""Parameters of the serving model: engine settings, fixed costs and utilisations, as data.

``calc/data/serving_params.json`` holds three kinds of numbers, each with its source:

* ``engines``: each engine family's scheduler defaults (largest decode batch, prefill token budget per
  step, share of memory given to the KV cache), read from the engines' own code and documentation. Not
  fitted.
* ``params``: the fixed time per step, per sequence and per layer, and the utilisations of each phase
  (decode weight read, KV/attention read, decode and prefill matmuls by precision, grouped expert GEMMs,
  collectives), each with a prior (a published figure), bounds, and the value fitted to published
  serving measurements (``calc.serving_fit``; provenance "fitted"; "pooled" where no row informs it but the other
  engines' values do (partial pooling); "prior" where the calibration
  set says nothing about it).
* ``validation``: the spread of the cross-validated errors (log of measured over predicted), which
  ``calc.serving`` turns into each estimate's low-high range, and the error tables.

An engine or accelerator the calibration set has no rows for gets the documented fallback (the
"generic" engine; the utilisations fitted on other accelerators) and a notice that says so.
"""
from __future__ import annotations

import difflib
import json
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from .dtypes import data_set_format
from .measurements import engine_key, engine_name, engine_spelling
from .models import DATA_DIR, get_model
from .number_text import join_and

#: The file the serving model reads by default (rewritten by ``python -m calc.serving_fit``).
PARAMS_PATH = DATA_DIR / "serving_params.json"
#: The runs the first-round cold start is calibrated on (``cold_start_values``, ``calc.serving_fit.
#: calibrate_cold_start``): InferenceMAX's 2025 runs on AMD Instinct, their mean TTFT (bench/convert_cold_start_runs.py).
COLD_START_RUNS_PATH = DATA_DIR / "cold_start_runs.csv"

#: Engine families the parameters name; anything else falls back to "generic" with a notice.
ENGINES = ("vllm", "sglang", "trtllm", "generic")

#: Fitted parameters that are one number for every engine (keys of ``params`` in the JSON). A request's fixed
#: cost before its first token is ``request_overhead_s + request_moe_overhead_s.<engine> x MoE layers x GPUs of the
#: replica`` (``REQUEST_MOE_KEYS``). ``mla_layer_fixed_s``: the extra device time per decode step of each
#: multi-head latent attention layer (DeepSeek-V2/V3, Kimi K2), one value for every engine (``calc.serving.combine``).
GLOBAL_KEYS = ("mbu_weights", "mbu_kv", "mfu_decode", "grouped_gemm", "mfu_prefill_16", "mfu_prefill_8",
               "mfu_prefill_4", "comm_efficiency", "comm_efficiency_scale_out", "comm_efficiency_pcie", "layer_fixed_s",
               "request_overhead_s", "eager_layer_extra_s", "weight_only_matmul", "lockstep_persistence",
               "moe_prefill_matmul", "software_gain_per_year", "mla_layer_fixed_s")

#: The engine-specific fixed times: per step (``step_fixed_s.<engine>``), per sequence per step
#: (``seq_fixed_s.<engine>``: a Python scheduler and output path cost more per sequence than a C++ one)
#: and per MoE layer per step (``moe_layer_fixed_s.<engine>``: each engine has its own routing and
#: dispatch kernels).
STEP_KEYS = tuple(f"step_fixed_s.{e}" for e in ENGINES)
SEQ_KEYS = tuple(f"seq_fixed_s.{e}" for e in ENGINES)
MOE_KEYS = tuple(f"moe_layer_fixed_s.{e}" for e in ENGINES)
#: Per layer of a step that carries prompt tokens (``prefill_layer_fixed_s.<engine>``): the engines replay CUDA
#: graphs captured for decode-only batches, so a step with a prompt chunk launches its kernels one by one from
#: Python (SGLang's ``cuda_graph_runner`` captures decode batch sizes only; TensorRT-LLM's PyTorch backend its
#: generation-only batches, ``cuda_graph_config``; vLLM V1 its piecewise graphs up to ``max_capture_size``
#: tokens, larger steps running compiled but ungraphed). ``calc.serving.combine`` adds it to a prompt's chunk
#: steps and to the share of decode steps that carry a prompt; an engine compiled ahead of time (TensorRT-LLM's
#: TensorRT engines) has none (``calc.serving_terms.eager_prefill``).
PREFILL_KEYS = tuple(f"prefill_layer_fixed_s.{e}" for e in ENGINES)
#: Per MoE layer of a step that carries prompt tokens (``prefill_moe_layer_fixed_s.<engine>``): the eager routing,
#: token permutation, per-expert grouping and combine of a prompt step, beyond a dense layer's launches; an
#: engine that graphs its prompt steps (vLLM's piecewise CUDA graphs) pays less of it than one that runs them
#: from Python (SGLang, TensorRT-LLM's PyTorch backend).
PREFILL_MOE_KEYS = tuple(f"prefill_moe_layer_fixed_s.{e}" for e in ENGINES)
#: Per MoE layer and per GPU of the replica, once per served request before its first token
#: (``request_moe_overhead_s.<engine>``, 0 for a dense model): each engine hands a new request to its ranks and runs
#: its first eager prompt step through its own routing and dispatch. One value for every engine charged vLLM's
#: gpt-oss-120b a TTFT that grew with its GPUs (InferenceMAX on B200, 1k prompts at 4 and 8 clients, medians: 40,
#: 41, 27 and 35 ms at TP1, 2, 4 and 8, estimated 38, 38, 45 and 62 ms), to give TensorRT-LLM's DeepSeek its TTFT on
#: 8 GPUs.
REQUEST_MOE_KEYS = tuple(f"request_moe_overhead_s.{e}" for e in ENGINES)
#: An engine's ROCm build beside its CUDA build (``rocm_fixed_scale.<engine>``, prior 1): a factor on the device-side
#: fixed costs of a decode step (per layer, per MoE layer, per MLA layer) on AMD Instinct accelerators (the cdna3
#: and cdna4 families), on top of the family's ``device_fixed_scale``. The family factor is one value for every
#: engine; an engine's ROCm kernels and graph capture (SGLang's aiter backends and HIP graphs, vLLM's ROCm
#: attention backends) are its own. InferenceMAX's DeepSeek-V3 on 8 MI300X, MI325X and MI355X with SGLang
#: measured 1.2-1.35x the fitted TPOT at 4 clients where the same engine on 8 H200 measured 0.76-0.79x of it.
ROCM_KEYS = tuple(f"rocm_fixed_scale.{e}" for e in ENGINES)
#: Attention data parallelism (a mixture of experts whose attention runs in D > 1 data-parallel ranks, its experts
#: spread over them: ``Layout.attention_dp``), each engine its own. Every MoE layer's all-to-all makes the D ranks
#: step together, so a rank cannot prefill a prompt when it likes: the engine spreads, holds back or balances prompts
#: across its ranks in its own way (TensorRT-LLM's ``attention_dp_config``, SGLang's ``--enable-dp-attention`` prefill
#: batches, vLLM's DP coordinator). ``adp_prompt_wait_steps.<engine>`` (prior 5, wide): the decode steps a new request
#: waits before its prompt is prefilled, in TTFT's queue part. ``adp_wait_scale.<engine>`` (prior 1): a factor on the
#: time a decode step waits for the rank that prefills (``attention_dp_imbalance_s`` per step): an engine that holds
#: prompts back until every rank has one moves that wait from the decode steps into TTFT. Before these (2026-12),
#: the fitted estimate's TTFT under attention DP was 0.37x the measured at the median (TensorRT-LLM's DeepSeek-V3 on
#: 8 B200 in aiconfigurator's runs and InferenceMAX's, vLLM's Qwen3-235B-A22B and Kimi-K2.5), 12% of those rows within
#: 25%; fitted without InferenceMAX's rows, TensorRT-LLM's wait (24 steps, from aiconfigurator's) put 11 of
#: InferenceMAX's 12 attention-DP TTFTs within 25%, against 1 of 12 before.
ADP_WAIT_STEPS_KEYS = tuple(f"adp_prompt_wait_steps.{e}" for e in ENGINES)
ADP_WAIT_KEYS = tuple(f"adp_wait_scale.{e}" for e in ENGINES)
#: The per-engine groups: each engine's costs, and the generic fallback set to their median.
ENGINE_GROUPS = ("step_fixed_s", "seq_fixed_s", "moe_layer_fixed_s", "prefill_layer_fixed_s", "prefill_moe_layer_fixed_s",
                 "request_moe_overhead_s", "rocm_fixed_scale", "adp_prompt_wait_steps", "adp_wait_scale")

#: Accelerator families with their own memory-bandwidth and device fixed-cost factors (``device_families`` in the
#: file maps each accelerator to one); the reference family (Hopper, the most rows) has both at 1, and an
#: accelerator the file does not map takes the reference's with a notice (``device_family``); one the file lists
#: under ``assumed`` (a part of a family's die with no serving measurement, an A800) takes that family's, also with
#: a notice.
DEVICE_FAMILIES = ("ampere", "ada", "blackwell", "cdna3", "cdna4")
#: Per family: ``mbu_scale.<family>`` multiplies the decode read utilisations (``mbu_weights``, ``mbu_kv``; capped at
#: 1): how much of its data-sheet bandwidth a family's memory system delivers to decode kernels beside Hopper's.
#: ``device_fixed_scale.<family>`` multiplies the device-side fixed costs of a decode step (per layer and per MoE
#: layer): short kernels, their gaps and the expert routing run faster or slower on another generation.
FAMILY_KEYS = tuple(f"mbu_scale.{f}" for f in DEVICE_FAMILIES) + tuple(f"device_fixed_scale.{f}" for f in DEVICE_FAMILIES)
#: The families of AMD Instinct accelerators, where an engine's ROCm build runs (``ROCM_KEYS``).
ROCM_FAMILIES = ("cdna3", "cdna4")

#: Every parameter, in the order of the fit's vector.
PARAM_KEYS = (GLOBAL_KEYS + STEP_KEYS + SEQ_KEYS + MOE_KEYS + PREFILL_KEYS + PREFILL_MOE_KEYS + REQUEST_MOE_KEYS + ROCM_KEYS
              + FAMILY_KEYS + ADP_WAIT_STEPS_KEYS + ADP_WAIT_KEYS)


def engine_costs(values: dict, engine: str) -> dict:
    """{"step", "seq", "moe", "prefill", "prefill_moe", "request_moe", "rocm", "adp_wait_steps", "adp_wait", "cold"}:
    ``engine``'s fixed time per step, per sequence per step, per MoE layer per step, per layer and per MoE layer of a
    step that carries prompt tokens, and per MoE layer and GPU once per request before its first token, the factor of
    its ROCm build on its decode step's device fixed costs (``ROCM_KEYS``), and its attention-DP terms
    (``ADP_WAIT_STEPS_KEYS``, ``ADP_WAIT_KEYS``), and the first-round cold start of its ROCm build
    (``cold_start_values``; 0 where ``values`` has none), from parameter ``values`` (``param_values``)."""
    return {"step": values[f"step_fixed_s.{engine}"], "seq": values[f"seq_fixed_s.{engine}"],
            "moe": values[f"moe_layer_fixed_s.{engine}"], "prefill": values[f"prefill_layer_fixed_s.{engine}"],
            "prefill_moe": values[f"prefill_moe_layer_fixed_s.{engine}"],
            "request_moe": values[f"request_moe_overhead_s.{engine}"], "rocm": values[f"rocm_fixed_scale.{engine}"],
            "adp_wait_steps": values[f"adp_prompt_wait_steps.{engine}"], "adp_wait": values[f"adp_wait_scale.{engine}"],
            "cold": values.get(f"{COLD_START_PREFIX}{engine}", values.get(f"{COLD_START_PREFIX}generic", 0.0))}


@lru_cache(maxsize=4)
def _read(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_serving_params(path=None) -> dict:
    """The serving model's parameter file as a dict (``calc/data/serving_params.json`` by default).

    Raises:
        ValueError: a file that is not valid JSON or lacks a parameter of ``PARAM_KEYS``.
    """
    p = Path(path) if path is not None else PARAMS_PATH
    try:
        data = _read(str(p))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p.name} is not valid JSON: {exc}") from None
    missing = [k for k in PARAM_KEYS if k not in data.get("params", {})]
    if missing:
        raise ValueError(f"{p.name} lacks the serving parameters {', '.join(missing)}")
    return data


def param_values(params: dict) -> dict:
    """{key: value} of every parameter of ``params`` (the dict of ``load_serving_params``), and the first-round
    cold starts its ``first_round_cold`` entry states (``cold_start_values``)."""
    out = {k: float(params["params"][k]["value"]) for k in PARAM_KEYS}
    out.update(cold_start_values(params))
    return out


def engine_settings(params: dict, engine: str, memory_bytes: float,
                    accelerator_name: str = "") -> tuple[str, dict, list[str]]:
    """(engine family used, its scheduler settings, notices) for ``engine`` on a GPU of ``memory_bytes``.

    Settings: ``max_batch`` (largest number of sequences a replica decodes at once; per attention-DP rank where
    ``per_rank_limits`` is set, TensorRT-LLM's and vLLM's ranks scheduling alone), ``token_budget``
    (tokens scheduled per step, decode and prefill chunks together) and ``kv_memory_fraction`` (share
    of each GPU's memory the engine may fill with weights and cache). vLLM raises its defaults on GPUs
    of 70 GiB and more except the A100 (``large_gpu`` entries; vllm/engine/arg_utils.py,
    ``get_batch_defaults``). The engine may be named as sources write it (``calc.measurements.engine_key``:
    "TensorRT-LLM", "TRT", "dynamo-trt", "vllm/vllm-openai"). An engine the file does not know falls back to
    "generic" with a notice.

    Raises:
        ValueError: an engine name that is not a string.
    """
    if not isinstance(engine, str) or not engine.strip():
        raise ValueError(f"engine must be a name such as {', '.join(ENGINES[:3])}; got {engine!r}")
    key = engine_spelling(engine_key(engine))  # as a source writes it: TensorRT-LLM, TRT, dynamo-trt, vllm/vllm-openai
    notices = []
    if key not in params["engines"]:
        known = [k for k in params["engines"] if k != "generic"]
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]}?" if near else f"; the calibrated engines are {', '.join(known)}"
        notices.append(f"no serving parameters for the engine '{engine}': the generic engine's fixed costs and "
                       f"scheduler settings are used (the median of the calibrated engines){hint}")
        key = "generic"
    e = params["engines"][key]
    big = memory_bytes >= 70 * 2**30 and "a100" not in accelerator_name.lower() and "large_gpu" in e
    s = dict(e["large_gpu"] if big else e["default"])
    covered = params.get("coverage", {}).get("engines", [])
    if key != "generic" and covered and key not in covered:
        notices.append(f"the calibration set has no measurement of {key}: its fixed costs are the generic prior")
    return key, s, notices


def speculative_batch_limit(params: dict, key: str, settings: dict, stated: bool = False,
                            clients: float | None = None) -> tuple[dict, list[str]]:
    """(settings, words): an engine's own cap on its running requests under speculative decoding, where the run does
    not state its largest batch (``stated``). SGLang sets ``max_running_requests`` to 48 for its EAGLE, EAGLE3,
    NEXTN (MTP) and STANDALONE drafts unless ``--max-running-requests`` is given (``engines.sglang.speculative`` in
    serving_params.json, with its source), so a closed loop of 100 clients runs 48 requests and queues the rest.
    ``settings`` are a speculative run's (``spec_tokens`` set: ``calc.speculative_serving.speculative_settings``);
    plain decoding, an engine without such a cap (vLLM, TensorRT-LLM) or a stated batch leave them as they are, with
    no words. ``clients``: the most requests a closed loop keeps in flight per replica (the largest of a frontier's
    concurrencies); the words only where they exceed the cap (None: a rate or an offline run, which may reach it).
    Example: SGLang, settings {"max_batch": 4096, "spec_tokens": 3, ...}, 100 clients -> max_batch 48 and the words
    "at most 48 running requests (SGLang's default under speculative decoding; the rest queue)"; 8 clients -> max_batch
    48, no words.
    Source: sgl-project/sglang python/sglang/srt/server_args.py, ServerArgs._handle_speculative_decoding."""
    cap = params.get("engines", {}).get(key, {}).get("speculative", {}).get("max_batch")
    if cap is None or stated or not settings.get("spec_tokens") or settings.get("max_batch", cap + 1) <= cap:
        return settings, []
    words = [] if clients is not None and float(clients) <= cap else \
        [f"at most {int(cap)} running requests ({engine_name(key)}'s default under speculative decoding; the rest "
         "queue)"]
    return dict(settings, max_batch=int(cap)), words


def accelerator_notice(params: dict, accelerator_key: str) -> list[str]:
    """A notice when no calibration row ran on ``accelerator_key`` (the utilisations then come from the
    other accelerators: a fallback the page must show); [] otherwise."""
    covered = params.get("coverage", {}).get("accelerators", [])
    if covered and accelerator_key not in covered:
        return [f"no published serving measurement on {accelerator_key} in the calibration set: its "
                f"utilisations fall back to those fitted on {', '.join(covered)}"]
    return []


#: Architecture traits whose costs the fitted parameters may not carry from one model to another: the serving
#: model prices a layer by its bytes and FLOPs and adds fixed costs fitted on the calibration set's models, so a
#: kind of layer that set lacks (its own kernels, launches and state updates) is priced as if it were one it has.
#: Keys name the traits; values the words a notice uses.
ARCHITECTURE_TRAITS = {
    "moe": "mixture-of-experts layers",
    "mla": "multi-head latent attention",
    "sliding": "sliding-window or chunked attention layers",
    "linear_attention": "linear-attention layers (Gated DeltaNet, lightning attention)",
    "mamba": "Mamba state-space layers",
    "sparse_attention": "sparse attention with an indexer (DSA) or compressed attention",
}
#: A trait is thinly covered when the calibration set has fewer fitted rows of it than this, or one source only:
#: the estimate for such a model then comes with ``architecture_notice``.
TRAIT_LEAST_ROWS = 50


def architecture_traits(model) -> tuple[str, ...]:
    """The keys of ``ARCHITECTURE_TRAITS`` that ``model`` (a ``calc.models.ModelConfig``) has, in that order; a
    dense model of full attention has none. Read from its shapes: ``is_moe``; ``attention == "mla"``; per-layer
    kinds (``calc.layers.LAYER_KINDS``) "sliding"/"chunked", "linear_attention"/"lightning", the Mamba kinds,
    "csa"/"hca"/"sparse"; an indexer (``index_n_heads``, DeepSeek-V3.2's DSA in every attention layer).
    Example: Qwen3.5-35B-A3B -> ("moe", "linear_attention"); Llama-3.1-8B -> ()."""
    kinds = set(model.layer_kinds)
    has = {"moe": model.is_moe, "mla": model.attention == "mla",
           "sliding": bool(kinds & {"sliding", "chunked"}),
           "linear_attention": bool(kinds & {"linear_attention", "lightning"}),
           "mamba": bool(kinds & {"mamba", "mamba2", "parallel_mamba2"}),
           "sparse_attention": bool(kinds & {"csa", "hca", "sparse"}) or bool(getattr(model, "index_n_heads", None))}
    return tuple(k for k in ARCHITECTURE_TRAITS if has[k])


def preset_traits(model_keys) -> dict[str, tuple[str, tuple[str, ...]]]:
    """{key: (the preset's name, its ``architecture_traits``)} for each distinct preset key of ``model_keys``
    (``calc.models.get_model`` reads them: a key, a name or a checkpoint's id).

    Raises:
        ValueError: a model calc has no preset of (``get_model``)."""
    out = {}
    for k in set(model_keys):
        m = get_model(k)
        out[k] = (m.name, architecture_traits(m))
    return out


def architecture_coverage(model_keys, sources) -> dict:
    """{trait: {"rows", "sources", "models"}} of calibration rows, for every key of ``ARCHITECTURE_TRAITS``:
    ``model_keys`` the rows' model presets, ``sources`` their source ids, aligned; "models" lists the preset names
    of the rows with the trait, sorted. ``calc.serving_fit.fit_serving_params`` stores it as
    ``coverage.architectures`` for ``architecture_notice``.

    Raises:
        ValueError: models and sources of different lengths, or a model calc has no preset of."""
    keys, sources = list(model_keys), list(sources)
    if len(keys) != len(sources):
        raise ValueError(f"{len(keys)} models but {len(sources)} sources")
    known = preset_traits(keys)
    out = {}
    for trait in ARCHITECTURE_TRAITS:
        hit = [(k, s) for k, s in zip(keys, sources) if trait in known[k][1]]
        out[trait] = {"rows": len(hit), "sources": len({s for _, s in hit}),
                      "models": sorted({known[k][0] for k, _ in hit})}
    return out


#: The key under ``validation.held_out_by_trait`` of the held-out rows whose engine ran a weight format that the
#: calibration set read thinly under that engine (``thin_format``): a trait of an estimate's setup, not of its model,
#: whose held-out spread widens the range as an architecture trait's does (``error_quantiles``).
FORMAT_TRAIT = "engine_format"

def format_coverage(engine_keys, weight_dtypes, sources) -> dict:
    """{engine key: {weight format: {"rows", "sources"}}} of calibration rows: ``engine_keys`` the rows' engine keys
    ("vllm", "sglang", "trtllm"), ``weight_dtypes`` their weight formats as the data set spells them ("fp8-block",
    "int4-g32"), ``sources`` their source ids, aligned. ``calc.serving_fit.fit_serving_params`` stores it as
    ``coverage.weight_formats`` for ``thin_format``.

    Raises:
        ValueError: columns of different lengths."""
    engines, formats, sources = list(engine_keys), list(weight_dtypes), list(sources)
    if not len(engines) == len(formats) == len(sources):
        raise ValueError(f"{len(engines)} engines, {len(formats)} weight formats and {len(sources)} sources")
    out: dict = {}
    for e, f, src in zip(engines, formats, sources):
        c = out.setdefault(str(e), {}).setdefault(str(f), {"rows": 0, "sources": set()})
        c["rows"] += 1
        c["sources"].add(src)
    return {e: {f: {"rows": c["rows"], "sources": len(c["sources"])} for f, c in sorted(fs.items())}
            for e, fs in sorted(out.items())}


def thin_format(params: dict, engine: str | None, weight_dtype: str | None) -> bool:
    """Whether the calibration set read weight format ``weight_dtype`` under engine ``engine`` (a key of
    ``coverage.engines``) thinly: fewer than ``TRAIT_LEAST_ROWS`` fitted rows or one source
    (``coverage.weight_formats`` of the params). An engine's kernels for a format (block-scaled FP8 GEMMs, 4-bit
    weight-only MoE kernels) are its own, so rows of the format under another engine need not carry; the held-out
    rows of such pairs missed more often than the rest (13% within 25% against 62.5%). False for an
    engine the fit did not read (it has its fallback notice), no format, or params without that coverage.
    Example: vLLM with fp8-block weights (the calibration's block-scaled FP8 runs are SGLang's and TensorRT-LLM's)
    -> True."""
    cover = params.get("coverage", {})
    if not cover.get("weight_formats") or not weight_dtype or engine not in cover.get("engines", ()):
        return False
    c = _format_cover(params, engine, weight_dtype)
    return c["rows"] < TRAIT_LEAST_ROWS or c["sources"] < 2


def _format_cover(params: dict, engine: str, weight_dtype: str) -> dict:
    """{"rows", "sources"} of ``coverage.weight_formats`` for ``engine`` running ``weight_dtype`` (zeros where the
    calibration has none), looked up as the data set spells the format (``calc.dtypes.data_set_format``:
    "int4-g32-sym" -> "int4-g32")."""
    return params["coverage"]["weight_formats"].get(engine, {}).get(str(data_set_format(weight_dtype)),
                                                                    {"rows": 0, "sources": 0})


def format_pair_words(engine: str, weight_dtype: str) -> str:
    """How a notice names an engine and weight format pair: ("vllm", "fp8-block") -> "vLLM with fp8-block weights"."""
    return f"{engine_name(engine)} with {weight_dtype} weights"


#: The words ending a coverage notice whose held-out spread widened the estimate's range (``architecture_notice``):
#: a verdict quoting that range says so (``widened_range``).
WIDENED_WORDS = "the range shown is widened to the spread of those misses"


def widened_range(notices) -> bool:
    """Whether an estimate's ``notices`` (strings) say its range took a thinly covered trait's held-out spread
    (``WIDENED_WORDS``), so that a sentence quoting the range does not call it the cross-validated one alone."""
    return any(str(n).endswith(WIDENED_WORDS) for n in notices or ())


def _held_out_words(h: dict | None, such: str, widened: bool) -> str:
    """The sentence of ``architecture_notice`` on the held-out rows of a thinly covered trait (``h``: its entry of
    ``validation.held_out_by_trait``; "" where it has none): their count, what they are (``such``, the words after
    the count), the share within 25%, the median measured / estimated and whether the range shown took their
    spread."""
    if not h or not h.get("n"):
        return ""
    ratio = math.exp(h["median_log_ratio"])
    typical = (f"real runs typically {ratio:.2g}x slower than the estimate" if ratio >= 1.05 else
               f"real runs typically {1 / ratio:.2g}x faster than the estimate" if ratio <= 1 / 1.05 else
               "real runs typically as fast as the estimate")
    return (f". On {h['n']:,} {such} "
            f"({', '.join(h['models'])}) it came within 25% on {100 * h['within_25']:.0f}% of them, with "
            + typical
            + (f"; {WIDENED_WORDS}" if widened and h.get("range")
               else "; the range shown here is the cross-validated one, as for every row of this page "
               "(the planning pages widen it to the spread of those misses)" if h.get("range") else ""))


def architecture_notice(params: dict, model, widened: bool = True, engine: str | None = None,
                        weight_dtype: str | None = None) -> list[str]:
    """Notices for each trait of ``model`` (``architecture_traits``) that the calibration set covers thinly (fewer
    than ``TRAIT_LEAST_ROWS`` fitted rows, or one source: ``coverage.architectures`` of the params), with the
    held-out rows' figures for models of that trait where the file has them (``validation.held_out_by_trait``,
    written by ``python -m calc.serving_fit --held-out``): their count and models, the share within 25% and the
    median measured / estimated, and, where ``widened`` (the estimate's range took the held-out spread:
    ``error_quantiles`` with ``thin_traits``) and the file has that spread, that its range spans theirs. With
    ``engine`` and ``weight_dtype`` (an engine key and a weight format), one more where the calibration read that
    format thinly under that engine (``thin_format``), with the figures of the held-out rows of such pairs
    (``FORMAT_TRAIT``). [] for a setup whose traits are all covered (``thin_traits``), or params without the
    coverage."""
    cover = params.get("coverage", {}).get("architectures", {})
    held = params.get("validation", {}).get("held_out_by_trait", {})
    out = []
    for key in thin_traits(params, model, engine, weight_dtype):
        if key == FORMAT_TRAIT:
            c = _format_cover(params, engine, weight_dtype)
            others = sorted(engine_name(e) for e in params["coverage"]["weight_formats"]
                            if e != engine and _format_cover(params, e, weight_dtype)["rows"])
            label = str(data_set_format(weight_dtype))   # the name the data set and the list below use
            said = weight_dtype if label == weight_dtype else f"{weight_dtype} (the data set's {label})"
            runs = f"{engine_name(engine)} run{'s' if c['rows'] > 1 else ''} with {said} weights"
            words = ((f"only {c['rows']} published {runs}, from {c['sources']} source"
                      f"{'s' if c['sources'] != 1 else ''}, {'were' if c['rows'] > 1 else 'was'} in its "
                      "calibration") if c["rows"] else f"no published {runs} was in its calibration")
            words += ((f" (its {'other ' if c['rows'] else ''}{label} runs are "
                       f"{join_and([f'{name}{chr(39)}s' for name in others])})" if others else "")
                      + f", so this estimate carries {engine_name(engine)}'s costs fitted on other weight formats")
            out.append(words + _held_out_words(held.get(key), "held-out runs of engine and weight-format pairs as "
                                               "thinly covered", widened))
            continue
        c = cover.get(key, {"rows": 0, "sources": 0, "models": []})
        what = ARCHITECTURE_TRAITS[key]
        seen = (f"only {c['rows']} published measurements of models with {what} "
                f"({', '.join(c['models'])}, from {c['sources']} source{'s' if c['sources'] != 1 else ''})"
                if c["rows"] else f"no published measurement of a model with {what}")
        words = (f"it was calibrated on {seen}, so the estimate for {model.name} carries costs fitted on other "
                 "models")
        out.append(words + _held_out_words(held.get(key), "published measurements of such models that it was not "
                                           "fitted to", widened))
    return out


def matmul_scale(params: dict, accelerator_key: str) -> tuple[float, list[str]]:
    """(factor on the fitted matmul utilisations for ``accelerator_key``, notices): the accelerator's
    largest measured matmul utilisation over the reference accelerator's (``matmul_ceiling`` in the
    file); with a notice, the figure of the accelerator ``matmul_ceiling.assumed`` names for it (an A800 takes
    the A100 SXM's, the same GA100 die) or 1 (the reference's) when the accelerator has no measurement."""
    mc = params.get("matmul_ceiling")
    if not mc:
        return 1.0, []
    ref = mc["values"][mc["reference"]]
    if accelerator_key in mc["values"]:
        return mc["values"][accelerator_key] / ref, []
    like = mc.get("assumed", {}).get(accelerator_key)
    if like in mc["values"]:
        return mc["values"][like] / ref, [f"no measured matmul ceiling for {accelerator_key}: its matmul "
                                          f"utilisations are those of {like} (the same die, assumed)"]
    return 1.0, [f"no measured matmul ceiling for {accelerator_key}: its matmul utilisations are those of "
                 f"{mc['reference']}"]


def device_family(params: dict, accelerator_key: str) -> tuple[int, list[str]]:
    """(index of ``accelerator_key``'s family, notices): 0 for the reference family, ``1 + i`` for
    ``DEVICE_FAMILIES[i]``, from ``device_families`` in the file; for an accelerator it lists under ``assumed``
    (no serving measurement, a family's die: "a800-80gb" -> "ampere"; or a part of the same platform with no
    family of its own: "mi250x" -> "cdna3", whose ROCm builds it runs, the reason in ``assumed_why``) that family's
    index with a notice that names it; 0 with a notice for an accelerator it does not map (its bandwidth and fixed-cost factors are then
    the reference's)."""
    fams = params.get("device_families")
    if not fams:
        return 0, []
    for name, keys in fams["members"].items():
        if accelerator_key in keys:
            return (DEVICE_FAMILIES.index(name) + 1 if name in DEVICE_FAMILIES else 0), []
    name = fams.get("assumed", {}).get(accelerator_key)
    if name is not None:
        why = fams.get("assumed_why", {}).get(accelerator_key, f"{name}, its architecture's")
        return (DEVICE_FAMILIES.index(name) + 1 if name in DEVICE_FAMILIES else 0), [
            f"no accelerator family fitted with {accelerator_key}: its memory-bandwidth and fixed-cost factors are "
            f"those of {why} (assumed)"]
    return 0, [f"no accelerator family fitted with {accelerator_key}: its memory-bandwidth and fixed-cost factors are "
               f"those of {fams['reference']}, the reference family (assumed)"]


def family_factors(values: dict, index) -> tuple:
    """(bandwidth factor, device fixed-cost factor) for family ``index`` (an int or an array of them, as
    ``device_family`` gives), from parameter ``values``; 1 for the reference family and for values without
    family keys."""
    idx = np.asarray(index, dtype=int)
    bw = np.array([1.0] + [values.get(f"mbu_scale.{f}", 1.0) for f in DEVICE_FAMILIES])
    fx = np.array([1.0] + [values.get(f"device_fixed_scale.{f}", 1.0) for f in DEVICE_FAMILIES])
    return bw[idx], fx[idx]


#: Engines built for NVIDIA's CUDA only: no ROCm build runs them on AMD Instinct (TensorRT-LLM compiles for NVIDIA GPUs).
CUDA_ONLY_ENGINES = ("trtllm",)


def platform_notice(engine_key: str, family_index: int, accelerator_name: str = "") -> list[str]:
    """A notice when ``engine_key`` (calc's engine id) has no build for the accelerator's platform: TensorRT-LLM
    (``CUDA_ONLY_ENGINES``) on an AMD Instinct family (``on_rocm``), or on any accelerator whose name
    (``accelerator_name``, the preset's: "Intel Gaudi 3 128GB", "Google TPU v6e Trillium (per chip)") is not an
    NVIDIA part's. The estimate is then what its fitted costs would give there (on ROCm its ROCm factor pooled from
    the other engines', no measurement behind it), a what-if, and the notice says so; [] otherwise.
    Example: ``platform_notice("trtllm", 1 + DEVICE_FAMILIES.index("cdna3"))`` is one notice, and so is
    ``platform_notice("trtllm", 0, "Intel Gaudi 3 128GB")``; ``platform_notice("vllm", ...)`` and
    ``platform_notice("trtllm", 0, "NVIDIA H100 SXM 80GB")`` (Hopper) are []."""
    if engine_key not in CUDA_ONLY_ENGINES:
        return []
    if bool(on_rocm(family_index)):
        return ["TensorRT-LLM runs on NVIDIA GPUs only and has no ROCm build for AMD Instinct: this estimate is a "
                "what-if from its fitted costs (its ROCm factor pooled from vLLM's and SGLang's, no measurement "
                "behind it); vLLM or SGLang is what runs here"]
    name = str(accelerator_name).strip()
    if name and not name.lower().startswith("nvidia"):
        return [f"TensorRT-LLM runs on NVIDIA GPUs only, not on {name}: this estimate is a what-if from its fitted "
                "costs on NVIDIA parts; the engine that runs here is another (vLLM's or SGLang's build for this "
                "platform, or the vendor's own)"]
    return []


def on_rocm(index) -> np.ndarray:
    """True where family ``index`` (an int or an array of them, as ``device_family`` gives) is one of
    ``ROCM_FAMILIES``: the accelerator runs an engine's ROCm build. Example: ``on_rocm(1 + DEVICE_FAMILIES.index(
    "cdna3"))`` is True; ``on_rocm(0)`` (Hopper) is False."""
    idx = np.asarray(index, dtype=int)
    return np.isin(idx, [1 + DEVICE_FAMILIES.index(f) for f in ROCM_FAMILIES])


#: The engines whose ROCm builds' first-round cold start ``first_round_cold`` states (``cold_start_values``); any
#: other takes its "generic" value.
COLD_START_PREFIX = "first_round_cold.rocm."


def cold_start_values(params: dict) -> dict:
    """{"first_round_cold.rocm.<engine>": seconds} of ``params``' ``first_round_cold`` entry (none where the file
    has none), as ``param_values`` adds them beside the fitted parameters and ``engine_costs`` reads them: the
    seconds the first round of a closed loop on the engines' ROCm builds pays before its first tokens beyond the
    serving model's burst. Not fitted: a calibration outside the fit (``calc.serving_fit.calibrate_cold_start``,
    on ``COLD_START_RUNS_PATH``'s runs), which the fit takes as it stands, as it takes the engines' settings.
    Why: InferenceMAX's runs (10 rounds of C requests after 2 x C warm-up requests) on AMD Instinct measure a mean
    TTFT above the estimate by about the same 1-2 s over ten rounds whatever the concurrency, while their medians,
    which leave the first round aside, are met: a first round slower by that much, a cold start after the warm-up
    that NVIDIA's runs do not show to that degree."""
    spec = (params.get("first_round_cold") or {}).get("rocm", {})
    return {f"{COLD_START_PREFIX}{k}": float(v) for k, v in spec.items() if k in ENGINES}


def cold_start_s(cold_s, family_index):
    """``cold_s`` (an engine's ``engine_costs(...)["cold"]``, seconds) where accelerator family ``family_index`` (an
    int or an array, ``device_family``) runs the engines' ROCm builds (``on_rocm``), else 0."""
    return np.where(on_rocm(family_index), cold_s, 0.0)


def error_quantiles(params: dict, kind: str, engine: str | None = None, traits=()) -> tuple[float, float]:
    """(low, high) quantiles of the cross-validated log(measured / predicted) for ``kind`` ("latency"
    or "throughput"), the engine's own where the calibration has enough of its rows, clipped so that the
    range always holds the estimate (low <= 0 <= high). ``traits``: a model's thinly covered architecture traits
    (``thin_traits``): the range then also spans each one's held-out quantiles of the kind
    (``validation.held_out_by_trait.<trait>.range``, where the file has them), since the cross-validation saw no
    such model; the estimate itself does not move. Example: a Gated DeltaNet hybrid's latency range reaches the
    90th percentile of the held-out hybrids' log ratios when that is above the engine's."""
    val = params.get("validation", {})
    v = val.get("range_by_engine", {}).get(engine or "", {}).get(kind) or val.get("range", {}).get(kind)
    low, high = (-0.5, 0.5) if not v else (float(v[0]), float(v[1]))
    for trait in traits:
        r = val.get("held_out_by_trait", {}).get(trait, {}).get("range", {}).get(kind)
        if r:
            low, high = min(low, float(r[0])), max(high, float(r[1]))
    return (min(low, 0.0), max(high, 0.0))


def thin_traits(params: dict, model, engine: str | None = None, weight_dtype: str | None = None) -> tuple[str, ...]:
    """The traits of ``model`` (``architecture_traits``) that the calibration set covers thinly: fewer than
    ``TRAIT_LEAST_ROWS`` fitted rows or one source (``coverage.architectures`` of the params), followed by
    ``FORMAT_TRAIT`` where ``engine`` ran ``weight_dtype`` thinly in it (``thin_format``); () for params without
    that coverage."""
    cover = params.get("coverage", {}).get("architectures")
    thin = []
    for key in architecture_traits(model) if cover else ():
        c = cover.get(key, {"rows": 0, "sources": 0})
        if c["rows"] < TRAIT_LEAST_ROWS or c["sources"] < 2:
            thin.append(key)
    if thin_format(params, engine, weight_dtype):
        thin.append(FORMAT_TRAIT)
    return tuple(thin)


#: MLPerf Inference's LLM latency limits by model preset and scenario (``data/mlperf_latency_limits.json``, from
#: mlcommons/inference loadgen/mlperf.conf).
MLPERF_LIMITS_PATH = DATA_DIR / "mlperf_latency_limits.json"


@lru_cache(maxsize=1)
def _mlperf_benchmarks() -> dict:
    return json.loads(MLPERF_LIMITS_PATH.read_text(encoding="utf-8"))["benchmarks"]


def mlperf_latency_limits(model: str, text: str) -> dict | None:
    """MLPerf Inference's 99th-percentile limits, {"ttft_s", "tpot_s"} in seconds, for a run of model preset
    ``model`` whose ``text`` (a row's notes, source id and id, or a caller's words) names MLPerf and a scenario
    (``mlperf_scenario``): the interactive benchmark's where it says "interactive", else the Server scenario's
    where it says "server" (``data/mlperf_latency_limits.json``,
    from mlcommons/inference loadgen/mlperf.conf at 001712e9); None for a text that does not name MLPerf, or a model
    MLPerf has no LLM benchmark of in that scenario (``mlperf_benchmark_models``).
    Example: ("llama-2-70b", "MLPerf Inference v5.1 ... scenario Interactive") -> TTFT 0.45 s, TPOT 0.04 s."""
    scenario = mlperf_scenario(text)
    entry = _mlperf_benchmarks().get(str(model))
    limits = entry.get(scenario) if entry and scenario else None
    return {"ttft_s": limits["ttft_ms"] / 1e3, "tpot_s": limits["tpot_ms"] / 1e3} if limits else None


def mlperf_scenario(text: str) -> str | None:
    """The MLPerf scenario with latency limits that ``text`` names: "interactive", "server", or None (a text that
    does not name MLPerf, names neither scenario, or names the Offline one, which has no latency limits)."""
    words = set(re.findall(r"[a-z0-9]+", str(text).lower()))
    if not any(w.startswith("mlperf") for w in words) or "offline" in words:
        return None
    return "interactive" if "interactive" in words else "server" if "server" in words else None


def mlperf_benchmark_models(scenario: str | None = None) -> list[str]:
    """The model presets MLPerf Inference has an LLM benchmark of (``mlperf_latency_limits``), in ``scenario``
    ("server", "interactive") where given."""
    return [m for m, e in _mlperf_benchmarks().items() if scenario is None or scenario in e]
