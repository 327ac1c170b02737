"""Calibrate the serving model on published measurements, and validate it on rows it did not see.

``fit_serving_params(measurements)`` fits the fixed costs and utilisations of
``calc/data/serving_params.json`` to the rows of ``calc/data/serving_measurements.csv`` (one published
number per row): least squares on the log of predicted over measured (``scipy.optimize.least_squares``,
trust-region reflective) under a robust loss (``LOSS``), each parameter in log space within its bounds, with a
weak prior pulling it towards its published value (one residual ``log(p / prior) / sigma`` per parameter: a
parameter no row informs stays at its prior, and is marked "prior", not "fitted"), and each engine's fixed costs
partially pooled with the other engines' (``POOL_SIGMA_LOG``: a hierarchical prior, Gelman et al., Bayesian Data
Analysis, ch. 5).
The loss (``LOSS``, ``F_SCALE``): "cauchy", rho(z) = ln(1 + z) on z = (r / 0.2)^2, by default. A row far
outside (a misread row, a broken run: a 2-node run whose TTFT reached minutes) then pulls on the constants
less and less the farther it is, so the fit settles where most rows agree, which is what the share within 25%
counts. "soft_l1", the earlier choice, counts a far row linearly, so a few broken rows moved every constant.
How the rows share the loss (``SOURCE_WEIGHTING``, ``source_loss_weights``): "sqrt" scales each row's residual
by 1 / sqrt(rows of its source) (normalised to a mean of 1) inside the loss, so a source weighs about like
sqrt(its rows): a 1,600-row benchmark dump counts for more than a 30-row table, but not 50 times more.
"source" gives every source the same weight in total, its rows sharing it equally (each row's loss times
N / (S x rows of its source), N rows of S sources); with it, 32 rows of one broken benchmark weighed as much as
1,689 rows of InferenceMAX's official runs.
Deterministic: fixed start, no random draws.

``cross_validate`` refits without each source (leave-one-source-out) or each model
(leave-one-model-out) and predicts the held-out rows; the spread of those errors is the estimate's
range. ``python -m calc.serving_fit`` rewrites serving_params.json and prints the error tables.

A row run by trtllm-bench throughput gets the engine settings that benchmark chooses (``trtllm_bench``
in the trtllm engine's entry); an offline row with a concurrency is a burst of that many requests
sent at once, a finite burst (``calc.serving_terms.burst_schedule``: prompts prefilled up front, then decode
steps free of prompts), whose mean TTFT and ITL the model predicts.

Rows used: mean or median statistics (p90/p99 rows are kept in the data set but not fitted; the held-out table
predicts them from the same points, ``tail_value`` and ``calc.serving_tails``), concurrency and offline runs (not the TTFT or e2e of an offline run of unstated size, which grow with its
number of requests); request-rate runs are predicted through Little's law on a grid of decode batches
(not their throughput, which for a finite run depends on its number of prompts). A row's notes mark a static batch ("static batch": vLLM's
benchmark_latency), a run without CUDA graphs ("eager", "disable-cuda-graph") and speculative
decoding (skipped: not modelled).
"""
from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from .hardware import get_accelerator
from .measurements import (DATA_DIR, MEASUREMENTS_PATH, engine_key, engine_spelling, load_measurements, load_sources,
                           itl_per_token, rounds_note)
from .models import get_model
from .layout import make_layout
from .run_limits import run_latency_limits
from .serving_tails import (TAIL_METRICS, output_quantile_ratio, output_range_ratio, point_values, run_quantile_s,
                            statistic_quantile)
from .speculative_serving import speculative_from_notes, speculative_notes, speculative_settings
from .serving import (combine, edge_shares, edge_speed, finite_run_drain_s, rate_run_requests_per_s,
                      serving_components, speculative_engine, spread_ttft_s, trtllm_bench_settings, tuned_means,
                      tuned_tail_s)
from .serving_terms import (FP4_FORMATS, MULTI_STEP_NOT_TAKEN, burst_cold_start_s, burst_share, decimal_year,
                            eager_prefill, engine_matmul, finite_run_waves, groups_later_rounds, lockstep_closed_loop,
                            multi_step_steps, overlaps_schedule, release_number, release_year, slot_wait_quantile_s,
                            slot_wait_s, spread_outputs, version_day, with_cold_start, with_slot_wait)
from .serving_params import (ADP_WAIT_KEYS, ARCHITECTURE_TRAITS, COLD_START_PREFIX, COLD_START_RUNS_PATH,
                             ENGINE_GROUPS, ENGINES, FAMILY_KEYS, FORMAT_TRAIT, PARAM_KEYS, PARAMS_PATH,
                             architecture_coverage, cold_start_s, cold_start_values, device_family, engine_costs,
                             engine_settings, error_quantiles, format_coverage, format_pair_words, load_serving_params,
                             matmul_scale, on_rocm, param_values, preset_traits, thin_format)

#: Metrics that are times (the "latency" range) and rates (the "throughput" range).
LATENCY_METRICS = ("tpot_ms", "itl_ms", "ttft_ms", "e2e_ms")
THROUGHPUT_METRICS = ("output_tok_per_s", "output_tok_per_s_per_gpu", "total_tok_per_s_per_gpu",
                      "output_tok_per_s_per_user", "requests_per_s")
#: Statistics the model predicts (a mean; medians of symmetric spreads are close to it).
FIT_STATISTICS = ("mean", "median")
#: Weight of each prior residual against one measurement's.
PRIOR_WEIGHT = 1.0
#: Partial pooling of the per-engine fixed costs: each engine's log cost is also pulled towards the mean of
#: the engines' log costs of its group (one residual per engine, this sigma in log units), so that an engine
#: with few or no rows borrows from the others instead of falling back to the bare prior.
POOL_SIGMA_LOG = 0.7
#: How the rows share the loss: "source" (each source weighs the same in total) or "sqrt" (each row's residual
#: scaled by 1 / sqrt(rows of its source)); see the module docstring and ``source_loss_weights``.
SOURCE_WEIGHTING = "sqrt"
#: The robust loss on log(predicted / measured) (scipy.optimize.least_squares' ``loss``): "cauchy" (default) or
#: "soft_l1" (see the module docstring). With the "source" weighting the loss is soft-L1, applied by
#: ``weighted_soft_l1``.
LOSS = "cauchy"
#: Scale of the loss on log(predicted / measured): a row beyond about 0.2 (22%) counts less than quadratically.
F_SCALE = 0.2
#: Quantiles of the held-out log(measured / predicted) that make the range.
RANGE_QUANTILES = (0.1, 0.9)
_GRID = np.geomspace(1.0, 4096.0, 25)
#: Words of a row's notes that mark a static batch (vLLM's benchmark_latency: B prompts at once, then B sequences
#: decoded together) and a run without CUDA graphs. Speculative decoding's words are
#: ``calc.speculative_serving.speculative_notes``'.
_STATIC = ("static batch",)
_EAGER = ("eager", "disable-cuda-graph", "cuda graphs off", "cuda graph off")
#: Words of a row's notes that mark a trtllm-bench throughput run (the benchmark builds its engine with its own
#: max batch, token budget and cache share: ``engines.trtllm.trtllm_bench`` in serving_params.json).
_TRTLLM_BENCH = ("trtllm-bench",)
#: Words of a row's notes that mark a run of a TensorRT engine (TensorRT-LLM before its PyTorch backend: engines built
#: by trtllm-bench build or run by gptSessionBenchmark). Such an engine keeps a cyclic KV window only when the run
#: sets ``max_attention_window_size`` (TensorRT-LLM docs/source/advanced/gpt-attention.md, "Sliding Window
#: Attention, Cyclic (Rolling Buffer) KV Cache"), which these benchmarks do not: every token is cached and read.
_TRT_ENGINE = ("trtllm-bench build", "gptsessionbenchmark")
#: How a row's notes state SGLang's request polling interval (``--scheduler-recv-interval R``, default 1): its
#: ``SchedulerRecvSkipper`` (python/sglang/srt/managers/scheduler_recv_skipper.py) counts 1 per decode step and takes in
#: new requests only when the count reaches R (at once after a prefill step, weighted 1,000), so an arrival during
#: decode waits for the next poll: R / 2 decode steps on average (``calc.serving.combine``'s step wait).
_RECV_INTERVAL = re.compile(r"--scheduler-recv-interval (\d+)")
#: vLLM's multi-step scheduling as a run's notes state it (``--num-scheduler-steps 10``, ``num_scheduler_steps=10``).
#: SGLang's --num-continuous-decode-steps is the same setting of another engine.
_SCHEDULER_STEPS = re.compile(r"num[-_ ](?:scheduler|continuous[-_ ]decode)[-_ ]steps\s*[=: ]\s*(\d+)")
#: The key under which ``_row_setup`` leaves, in words, the engine settings a row's notes set (``prepare_rows`` gives
#: them as the column ``from_notes``).
NOTES_SETTINGS = "from_notes"
#: How a row's notes state TensorRT-LLM's attention-DP balance (``attention_dp_config`` with ``enable_balance`` and
#: ``timeout_iters T``): a prompt waits for every rank to hold one, at most T steps (``calc.serving.combine``).
_ADP_BALANCE = re.compile(r"enable_balance, timeout_iters (\d+)")
#: AMD's vLLM scheduler patch of its MLPerf Inference v6.0 harness (setup/<benchmark>/patches/*.patch,
#: vllm/v1/core/sched/scheduler.py): with VLLM_SUBSEQUENT_DECODE_STEPS N the waiting requests are scheduled only on one
#: step in N + 1 (while the running batch holds at least VLLM_MIN_REQUEST_DECODE_STEP), so an arrival waits for the
#: next such step, as under SGLang's --scheduler-recv-interval N + 1
_SUBSEQUENT_DECODE = re.compile(r"vllm_subsequent_decode_steps\s*[=: ]\s*(\d+)")
#: A run's stated largest batch: NVIDIA's MLPerf harness gpu_batch_size, TensorRT-LLM's --max_batch_size, vLLM's
#: max_num_seqs, SGLang's --max-running-requests (a number may carry thousands separators, "--max-num-seqs 3,200").
#: A stated token budget per step (max_num_tokens, max_num_batched_tokens, --chunked-prefill-size) is not read: taken,
#: the held-out rows within 25% fell from 78.6% to 77.8% (the MLPerf harness's small budgets against the chunking the
#: serving model assumes)
_STATED_BATCH = re.compile(r"(?:gpu_batch_size|max[-_]batch[-_]size|max[-_]num[-_]seqs|max[-_]running[-_]requests)"
                           r"\s*[=: ]\s*(\d{1,3}(?:,\d{3})+|\d+)")
#: How a row's notes state the date of its run ("measured 2025-10-15", "run on 2025-10-15", "date: 2025-10-15").
_RUN_DATE = re.compile(r"(?:measured|dated?|run of|run on|ran on|benchmarked|collected|tested)(?: on)?:? "
                       r"(\d{4})-(\d{2})-(\d{2})")
#: How the settings read from a row's notes (``prepare_rows``' from_notes) say its multi-step scheduling.
MULTI_STEP_READ = "{} decode steps per scheduler call"
#: How a row's notes state the number of requests of its run.
_N_REQUESTS = re.compile(r"(\d[\d,]*) (?:successful |completed )?(?:requests|prompts)\b")
#: How a row's notes state the rounds of a closed loop's run (aiperf's ``--request-count`` of rounds x C).
_ROUNDS = re.compile(re.escape(rounds_note(0).lower()).replace("0", r"(\d+)", 1))


def _run_requests(notes: str) -> float:
    """The number of requests of a finite run, as its notes state it ("500 requests", "300 prompts"), else
    inf. A run of N requests never has more than N in flight: a rate row's grid of decode batches stops at N,
    so that a rate beyond what the engine serves predicts the run with all N requests in (its batch limit
    otherwise)."""
    m = _N_REQUESTS.search(notes)
    return float(m.group(1).replace(",", "")) if m else math.inf


def stated_concurrency(mode: str, concurrency, notes) -> float:
    """The requests a run keeps in flight as the model reads it: its ``concurrency`` where given; for an offline run
    that gives none, the N requests its ``notes`` state (``_run_requests``: "all 320 requests sent at once"), which
    it sends at once (``prepare_rows`` predicts its latencies as a burst of N); else NaN (an offline run of unstated
    size, a rate)."""
    if not pd.isna(concurrency):
        return float(concurrency)
    if mode == "offline":
        n = _run_requests(str(notes or "").lower())
        if np.isfinite(n):
            return n
    return math.nan


def closed_loop_rounds(mode: str, concurrency, notes: str) -> float | None:
    """The rounds of a closed loop's run (its requests over its concurrency) as its notes state them ("20 rounds of C
    requests", ``rounds_note``); None for a row that states none or is not a closed loop. The fit reads a row of
    fixed lengths that states none as one burst throughout (``lockstep_closed_loop``), where ``serving_estimate``
    reads ``lengths="fixed"`` without rounds as a long run. (Read as a long run in the fit too, 8 fitted rows move
    (TensorRT-LLM's DeepSeek-R1 runs at 1,024-7,168 clients) and the refit moves 28 of its 64 parameters by over 2%,
    grouped_gemm 0.989 -> 0.928, with the held-out rows 80.1% -> 79.1% within 25%: left for a calibration that
    weighs it.)"""
    if mode != "concurrency" or pd.isna(concurrency):
        return None
    stated = _ROUNDS.search(notes)
    return float(stated.group(1)) if stated else None


#: Metrics of a whole run (its duration divides them), predicted over the waves of a finite offline run.
_RUN_THROUGHPUT = ("output_tok_per_s", "output_tok_per_s_per_gpu", "total_tok_per_s_per_gpu", "requests_per_s")


def read_measurements(path=None) -> pd.DataFrame:
    """The measurement rows (``calc/data/serving_measurements.csv`` by default; ``calc.measurements``
    validates them) as a DataFrame.

    Raises:
        ValueError: a malformed file (the message names the line and column).
    """
    return load_measurements(path)


#: Words in a row's notes that name a checkpoint carrying the KV cache's FP8 scales, which vLLM and SGLang then
#: follow with an FP8 cache: NVIDIA's ModelOpt exports, named for their format ("nvidia/...-FP8", "-FP4", "-NVFP4";
#: ``kv_cache_quant_algo`` FP8 in their hf_quant_config.json), and AMD's Quark "-FP8-KV" checkpoints
#: (amd/Llama-3.1-70B-Instruct-FP8-KV). NVIDIA's unquantized checkpoints (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16)
#: and a link to github.com/NVIDIA/TensorRT-LLM carry no cache scales.
_KV_SCALE_CHECKPOINTS = re.compile(r"\bnvidia/[\w.-]*fp[48]|fp8[-_]kv\b")


def checkpoint_kv_scales(notes) -> bool:
    """Whether a row's notes name a checkpoint that carries FP8 scales for the KV cache (``_KV_SCALE_CHECKPOINTS``:
    NVIDIA's ModelOpt exports, AMD's -FP8-KV checkpoints), so an engine left at its default cache dtype caches in
    FP8. Example: "checkpoint nvidia/DeepSeek-R1-0528-FP4-V2" -> True; "checkpoint deepseek-ai/DeepSeek-R1-0528",
    "checkpoint nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16" and "github.com/NVIDIA/TensorRT-LLM" -> False."""
    return bool(_KV_SCALE_CHECKPOINTS.search(str(notes or "").lower()))


def row_kv_dtype(weight_dtype: str, kv_dtype, engine: str = "", kv_scales: bool = False) -> str:
    """The KV dtype of a row: as published, or where the source does not say, the engine's default for its
    checkpoint. vLLM and SGLang (``engine``) cache in the activations' bf16 (``--kv-cache-dtype auto``: the model's
    dtype, whatever the weights' quantization: DeepSeek's block FP8, gpt-oss's MXFP4, an FP8 or INT4 checkpoint),
    unless the checkpoint carries FP8 cache scales (``kv_scales``, ``checkpoint_kv_scales``: ModelOpt and AMD's
    -FP8-KV exports) or is NVIDIA's NVFP4 (a ModelOpt format, its cache FP8); TensorRT-LLM and a row that names no
    engine take fp8 for fp8 and fp4 checkpoints (ModelOpt's ``kv_cache_quant_algo`` FP8, which TensorRT-LLM follows)
    and the weight dtype otherwise, a weight-only format's 8 or 4 bits as plain fp8 or int4.
    (The fit had taken fp8 for every engine, and an INT4 cache, which vLLM does not have, for 21 vLLM rows of an
    INT4 checkpoint; read as the engines' default, 1,166 fitted rows moved and, refitted, the fitted rows went from
    75.70% to 76.12% within 25%, each source held out 70.36% -> 70.76%.)
    The engine may be named as sources write it ("vLLM", "vllm-openai", "lmsysorg/sglang": ``calc.measurements.
    engine_key``).
    Example: ("mxfp4", None, "vllm") -> "bf16"; ("mxfp4", None, "trtllm") -> "fp8"; ("nvfp4", None, "sglang") ->
    "fp8"; ("fp8", None, "vllm", kv_scales=True) -> "fp8"."""
    kv = "" if kv_dtype is None or (isinstance(kv_dtype, float) and np.isnan(kv_dtype)) else str(kv_dtype).strip()
    if kv:
        return kv
    w = str(weight_dtype).lower()
    if kv_scales or w == "nvfp4":
        return "fp8"
    if engine_spelling(engine_key(str(engine))) in ("vllm", "sglang"):  # as sources write it: vLLM, vllm-openai
        return w if w in ("fp16", "fp32") else "bf16"
    if w in ("fp8", "fp8-block") + FP4_FORMATS:
        return "fp8"
    if w.startswith("int4-g"):
        return "int4"
    if w.startswith("int8-g"):
        return "int8"
    return w


def _row_setup(r, params):
    model = get_model(r.model)
    acc = get_accelerator(r.accelerator)
    acc, _ = engine_matmul(acc, str(r.weight_dtype))  # engines run NVFP4 / MXFP4 on Blackwell's fp4 tensor cores
    tp, pp, ep = int(r.tp), int(r.pp), int(r.ep)
    width = max(tp, ep) * pp
    replicas = max(1, int(r.n_gpus) // width)
    layout = make_layout(model, tp, pp, ep, replicas)
    key, settings, _ = engine_settings(params, str(r.engine), acc.memory_bytes, acc.name)
    notes = str(getattr(r, "notes", "") or "").lower()
    read = []  # what the notes set, in words (``NOTES_SETTINGS``)
    if any(w in notes for w in _TRTLLM_BENCH) and "trtllm_bench" in params["engines"].get(key, {}):
        settings = trtllm_bench_settings(params, key, model, acc, int(r.input_len) + int(r.output_len), layout,
                                         str(r.weight_dtype), row_kv_dtype(r.weight_dtype, r.kv_dtype, str(r.engine),
                                                                           checkpoint_kv_scales(notes)))
        read.append("trtllm-bench's own engine (its max batch, tokens per step and cache share)")
    stated = _STATED_BATCH.search(notes)
    if stated and int(stated.group(1).replace(",", "")) >= 1:
        settings["max_batch"] = int(stated.group(1).replace(",", ""))
        # per attention-DP rank on an engine whose ranks schedule alone (``per_rank_limits``: TensorRT-LLM, vLLM)
        per_rank = bool(params["engines"].get(key, {}).get("default", {}).get("per_rank_limits"))
        settings["per_rank_limits"] = per_rank
        read.append(f"max batch {settings['max_batch']:,}" + (" per attention-DP rank"
                                                            if per_rank and layout.attention_dp > 1 else ""))
    if any(w in notes for w in _TRT_ENGINE):
        settings["sliding"] = "full"  # a TensorRT engine caches every token unless the run sets a window
        read.append("a TensorRT engine" + (" (every token of its sliding windows cached)"
                                           if getattr(model, "sliding_window", None) else ""))
    # host work hidden behind the GPU's by the engines' overlap / async schedulers, by engine and release
    # the release as serving_estimate reads engine_version: its number wherever it stands (an image tag such as
    # vllm/vllm-openai:v0.10.2 is 0.10.2), or a date in its place (that day's software, a current build's scheduling)
    text = "" if pd.isna(r.engine_version) else str(r.engine_version)
    version, day = release_number(text), version_day(text)
    settings["overlap_schedule"] = overlaps_schedule(key, version, layout.attention_dp)
    # prompt steps outside the decode CUDA graphs, unless a TensorRT engine runs them (``eager_prefill``)
    settings["eager_prefill"] = eager_prefill(key, "" if "pytorch backend" in notes else version,
                                              any(w in notes for w in _TRT_ENGINE) or "trtllm-build" in notes)
    balance = _ADP_BALANCE.search(notes)
    if balance and layout.attention_dp > 1:
        settings["adp_balance_timeout_iters"] = int(balance.group(1))
        read.append(f"attention-DP balance, timeout {int(balance.group(1))} steps")
    # the release's date (PyPI), else the run's date as its notes state it ("measured 2026-03-25", "date ...")
    year = release_year(key, version) if day is None else decimal_year(day)
    when = _RUN_DATE.search(notes)
    if math.isnan(year) and when:
        year = decimal_year(_dt.date(int(when.group(1)), int(when.group(2)), int(when.group(3))))
    settings["release_year"] = year
    recv = _RECV_INTERVAL.search(notes)
    if recv:
        settings["recv_interval"] = int(recv.group(1))
        read.append(f"new requests taken in every {int(recv.group(1))} steps (--scheduler-recv-interval)")
    held = _SUBSEQUENT_DECODE.search(notes)
    if held and int(held.group(1)) > 0 and not recv:
        settings["recv_interval"] = int(held.group(1)) + 1
        read.append(f"new requests taken in every {int(held.group(1)) + 1} steps (VLLM_SUBSEQUENT_DECODE_STEPS "
                    f"{int(held.group(1))})")
    steps = _SCHEDULER_STEPS.search(notes)
    if steps:  # vLLM V0's multi-step scheduling or SGLang's continuous decode steps, where the engine has them
        stated = int(steps.group(1))
        settings["scheduler_steps"] = multi_step_steps(key, version, stated, notes)
        if settings["scheduler_steps"] > 1:
            read.append(MULTI_STEP_READ.format(stated))
        elif stated > 1:
            read.append(f"{stated} steps per scheduler call stated, not taken ({MULTI_STEP_NOT_TAKEN})")
    if "mixed-chunk" in notes or "mixed_chunk" in notes:
        settings["mixed_prefill"] = True  # SGLang's --enable-mixed-chunk puts prompt chunks into decode steps
        read.append("prompt chunks in decode steps (--enable-mixed-chunk)")
    settings[NOTES_SETTINGS] = "; ".join(read)
    return model, acc, layout, key, dict(settings, matmul_scale=matmul_scale(params, str(r.accelerator))[0],
                                         device_family=device_family(params, str(r.accelerator))[0])


def prepare_rows(measurements: pd.DataFrame, params: dict | None = None, include_eager: bool = False,
                 include_speculative: bool = False, include_tails: bool = False):
    """Stage 1 of the serving model for every usable row, once (the fit only re-runs stage 2).

    ``include_eager``: also rows run without CUDA graphs (left out of the fit by default: their launch
    cost would swamp the graphed engines' fixed costs; the bench predicts them separately).
    ``include_speculative``: also rows of speculative decoding, predicted with the draft method, draft tokens and
    acceptance length their notes state (``calc.speculative_serving.speculative_from_notes``; what they leave out as
    ``speculative_settings`` takes it). Left out of the fit by default: their acceptance length is rarely stated, and
    a prior for it would move the fitted engine constants.
    ``include_tails``: also rows of a percentile (p90, p99: ``calc.serving_tails.statistic_quantile``) of TTFT,
    TPOT, ITL or end-to-end latency, predicted from the same points as the mean (``tail_value``). Left out of the
    fit: no parameter is fitted to a tail.

    Returns:
        (rows, comps, skipped): rows, a DataFrame of the rows used (with engine_key, from_notes: the engine
        settings the row's notes set, in words, such as "10 decode steps per scheduler call", replicas, gpus,
        graphs, kind "latency"/"throughput", rate_per_replica); comps, dict of arrays concatenated over
        those rows (rate rows carry a grid of decode batches, ``calc.serving.serving_components``);
        skipped, a list of (id, reason).
    """
    prm = params or load_serving_params()
    used, comps, skipped = [], [], []
    for r in measurements.itertuples(index=False):
        tail_q = statistic_quantile(r.statistic)
        if r.statistic not in FIT_STATISTICS and not (include_tails and tail_q is not None
                                                       and r.metric in TAIL_METRICS):
            why = "the fit reads means and medians" if tail_q is not None and r.metric in TAIL_METRICS \
                else "the model predicts a mean, a median, and a percentile of TTFT, TPOT, ITL or end-to-end latency"
            skipped.append((r.id, f"statistic {r.statistic} ({why})"))
            continue
        if r.metric not in LATENCY_METRICS + THROUGHPUT_METRICS:
            skipped.append((r.id, f"metric {r.metric}"))
            continue
        notes = str(getattr(r, "notes", "") or "").lower()
        if r.metric in LATENCY_METRICS:
            # an offline run whose notes state its N requests sends them at once: its latencies are a burst of N's,
            # as a row that gives N as its concurrency (``sent_at_once``), not a loop that replaces every request
            # that ends (Lambda's vLLM 0.5.4 runs of 320 ShareGPT prompts: median ITL 18-181 ms measured, 38-424 ms
            # estimated as such a loop, 23-296 ms as the burst); its throughput stays the waves of its N below
            r = r._replace(concurrency=stated_concurrency(r.mode, r.concurrency, notes))
        burst = (r.mode == "offline" and not pd.isna(r.concurrency)) or lockstep_closed_loop(r.mode, r.len_dist)
        if r.mode == "offline" and r.metric in ("ttft_ms", "e2e_ms") and not burst:
            skipped.append((r.id, "latency of an offline run of unstated size (the wait for a slot grows with "
                                  "its number of requests)"))
            continue
        spec = None
        if speculative_notes(notes):
            if not include_speculative:
                skipped.append((r.id, "speculative decoding (left out of the fit: its acceptance length is rarely "
                                      "stated)"))
                continue
            spec = speculative_from_notes(notes)
        static = any(w in notes for w in _STATIC)
        eager = any(w in notes for w in _EAGER)
        if eager and not include_eager:
            skipped.append((r.id, "run without CUDA graphs (the eager launch cost is a prior, not calibrated)"))
            continue
        try:
            model, acc, layout, key, settings = _row_setup(r, prm)
            from_notes = settings.pop(NOTES_SETTINGS, "")
            if spec is not None:
                try:
                    spec_settings, _ = speculative_settings(model, spec)
                except ValueError as exc:
                    raise ValueError(f"speculative decoding as its notes state it: {exc}") from None
                clients = None if r.mode != "concurrency" or pd.isna(r.concurrency) else \
                    float(r.concurrency) / layout.replicas  # a closed loop's clients per replica
                # the release as ``_row_setup`` reads it for the overlap scheduling of plain decoding
                settings, engine_words = speculative_engine(
                    prm, key, release_number("" if pd.isna(r.engine_version) else str(r.engine_version)),
                    dict(settings, **spec_settings), bool(_STATED_BATCH.search(notes)), clients, notes)
                from_notes = "; ".join(w for w in [from_notes, spec_settings["spec_words"]] + engine_words if w)
            i, o = int(r.input_len), int(r.output_len)
            rate = r.mode == "rate"
            if rate:
                n_req = _run_requests(notes) / layout.replicas
                c = np.append(_GRID[_GRID < n_req], n_req) if np.isfinite(n_req) else _GRID
            elif pd.isna(r.concurrency):
                c = [1e9]
            else:  # a closed loop of C clients, or a burst of N requests sent at once (calc.serving_terms.burst_schedule)
                c = [float(r.concurrency) / layout.replicas]
            args = (model, acc, i, o)
            kw = dict(layout=layout, weight_dtype=str(r.weight_dtype),
                      kv_dtype=row_kv_dtype(r.weight_dtype, r.kv_dtype, str(r.engine), checkpoint_kv_scales(notes)),
                      settings=settings, batching="static" if static else "continuous",
                      matmul_scale=settings["matmul_scale"])
            n_run = _run_requests(notes) / layout.replicas
            waves, tail, rounds = 0.0, 0.0, 0.0
            stated = closed_loop_rounds(r.mode, r.concurrency, notes)
            finite = (r.mode == "offline" and pd.isna(r.concurrency) and not static and np.isfinite(n_run)
                      and r.metric in _RUN_THROUGHPUT)
            ranged = output_range_ratio(f"{r.len_dist} {notes}")  # lengths drawn from a stated range: not spread
            spread = spread_outputs(r.len_dist) and ranged is None
            if finite and spread:
                # a finite run whose outputs end at end-of-text: the engine's batch, then one request alone,
                # for the drain of its last batch (``finite_run_tail_s``)
                comp = serving_components(*args, [n_run, 1.0], **kw)
                tail = 1.0
            elif finite:
                # a finite offline run of N requests of one length: full bursts of B, then the rest
                comp = serving_components(*args, [n_run], burst=True, **kw)
                waves, rest = finite_run_waves(n_run, float(comp["N"][0]))
                if rest >= 1.0:
                    more = serving_components(*args, [rest], burst=True, **kw)
                    comp = {k: np.concatenate([comp[k], more[k]]) for k in comp}
            elif stated and r.statistic != "median":
                # a closed loop of R rounds: its first round one burst (the C clients start together), the later
                # ones spread out, all the way for lengths that vary, partly for a lockstep run of one length
                # (``calc.serving_terms.lockstep_share``): the burst, then the steady state, whose prompts arrive as
                # groups prefilled together on an engine that admits a returning group at once (``groups_later_rounds``).
                # A median leaves the first round's C requests of R x C aside; a percentile weighs the two
                # (``tail_value``).
                comp = serving_components(*args, c, burst=True, **kw)
                more = serving_components(*args, c, grouped=burst and groups_later_rounds(key), **kw)
                comp = {k: np.concatenate([comp[k], more[k]]) for k in comp}
                rounds = stated
            else:
                comp = serving_components(*args, c, rate=rate, burst=burst, **kw)
            pile = 0.0
            if rate and np.isfinite(n_req):
                # past its capacity a finite run's requests pile up as one burst of them sent at once would (the
                # public estimate's rule, ``calc.serving._solve_rate``): that burst, a closed loop of its N clients,
                # is a point after the row's grid, which ``predict_rows`` takes where the rate is beyond reach
                more = serving_components(*args, [n_req], burst=True, **kw)
                comp = {k: np.concatenate([comp[k], more[k]]) for k in comp}
                pile = 1.0
        except (ValueError, KeyError) as exc:
            skipped.append((r.id, str(exc)))
            continue
        if r.mode == "offline" or (not rate and pd.isna(r.concurrency)):
            comp["C"] = comp["N"].copy()
        k = len(comp["B"])
        comp["row"] = np.full(k, len(used), dtype=float)
        comps.append(comp)
        used.append(dict(r._asdict(), engine_key=key, from_notes=from_notes,
                         replicas=layout.replicas, gpus=layout.gpus_per_replica,
                         graphs=0.0 if eager else 1.0, npts=k, waves=waves, tail=tail, rounds=rounds,
                         lockstep=1.0 if burst else 0.0, mixed_prefill=float(settings.get("mixed_prefill", True)),
                         run_requests=n_run if waves or tail or rate else np.nan,
                         spread=float(spread), pile=pile, tail_q=np.nan if tail_q is None else tail_q,
                         itl_per_token=float(itl_per_token(notes)),
                         sent_at_once=float(r.concurrency) / layout.replicas
                         if r.mode == "offline" and not pd.isna(r.concurrency) else np.nan,
                         out_range=np.nan if ranged is None else ranged,
                         q_pile=error_quantiles(prm, "throughput")[1] if pile else np.nan,
                         kind="latency" if r.metric in LATENCY_METRICS else "throughput",
                         rate_per_replica=float(r.request_rate_per_s) / layout.replicas if rate else np.nan,
                         **_row_limits(run_latency_limits(notes, r.model, f"{r.source_id} {r.id}") if rate else None,
                                       prm, key)))
    rows = pd.DataFrame(used)
    cat = {key: np.concatenate([c[key] for c in comps]) for key in comps[0]} if comps else {}
    return rows, cat, skipped


def _throughputs(rows, rps_rep, out_rep) -> dict:
    """Each throughput metric of prepared ``rows`` from requests and output tokens per second per replica (arrays
    like the rows): of every replica, or per GPU of a replica."""
    reps, gpus = rows["replicas"].to_numpy(float), rows["gpus"].to_numpy(float)
    i, o = rows["input_len"].to_numpy(float), rows["output_len"].to_numpy(float)
    return {"output_tok_per_s": out_rep * reps, "output_tok_per_s_per_gpu": out_rep / gpus,
            "total_tok_per_s_per_gpu": out_rep / gpus * (i + o) / o, "requests_per_s": rps_rep * reps}


def _pick(rows, table: dict) -> np.ndarray:
    """Each row's value of its metric in ``table`` ({metric: array like the rows}); NaN for another metric."""
    m = rows["metric"].to_numpy()
    out = np.full(len(rows), np.nan)
    for name, v in table.items():
        out = np.where(m == name, v, out)
    return out


def itl_tokens(rows, spec_al) -> np.ndarray:
    """Tokens each row's benchmark books per streamed gap: the acceptance length ``spec_al`` (1 for plain decoding)
    where its client splits a chunk's wait among its tokens (``itl_per_token``), else 1."""
    if "itl_per_token" not in rows:
        return np.ones(len(rows))
    return np.where(rows["itl_per_token"].to_numpy(float) > 0, np.asarray(spec_al, dtype=float), 1.0)


def _metric_value(metric, a, idx, rows):
    """The predicted value of each row's metric from ``combine``'s arrays at positions ``idx``."""
    tpot, ttft, e2e = a["tpot_estimate"][idx], a["ttft_estimate"][idx], a["e2e_s"][idx]
    # a benchmark's ITL is the gap between streamed chunks: one decode step, a round of AL tokens under speculative
    # decoding (``calc.speculative_serving``), N steps under multi-step scheduling; its median the step most gaps
    # are (``calc.serving.combine``'s itl_mean_s, itl_median_s)
    median = rows["statistic"].to_numpy() == "median"
    itl = np.where(median, a["itl_median_s"][idx], a["itl_mean_s"][idx]) / itl_tokens(rows, a["spec_al"][idx])
    # the median request of outputs that end at end-of-text (``spread_outputs``: ShareGPT, random prompts without
    # ignore_eos) is a short one: outputs taken as exponential with mean O, as a finite run's drain takes them
    # (``finite_run_tail_s``), have their median at O ln 2, so the median end-to-end latency is TTFT + (O ln 2 - 1)
    # TPOT (SGLang's and vLLM 0.6.0's ShareGPT runs at 4 and 8 requests/s: median E2E 0.56-0.72 of the mean-output
    # estimate, SGLang's benchmark/benchmark_vllm_060/README.md)
    if "spread" in rows:
        o = rows["output_len"].to_numpy(float)
        short = median & (rows["spread"].to_numpy(float) > 0)
        e2e = np.where(short, ttft + np.maximum(o * math.log(2.0) - 1.0, 0.0) * tpot, e2e)
    table = {"tpot_ms": tpot * 1e3, "itl_ms": itl * 1e3, "ttft_ms": ttft * 1e3, "e2e_ms": e2e * 1e3,
             "output_tok_per_s_per_user": 1.0 / tpot}
    table.update(_throughputs(rows, a["requests_per_s"][idx], a["output_tokens_per_s"][idx]))
    return _pick(rows, table)


def _run_throughput(rows: pd.DataFrame, rps) -> np.ndarray:
    """Prepared ``rows``' throughput metrics from ``rps``, requests per second per replica (an array like the rows)
    of a run that completes that many, each its ``output_len`` tokens (``_throughputs``)."""
    rps = np.asarray(rps, dtype=float)
    return _pick(rows, _throughputs(rows, rps, rps * rows["output_len"].to_numpy(float)))


def point_costs(rows: pd.DataFrame, comps: dict, values: dict) -> tuple[dict, np.ndarray]:
    """(costs, graphs) of every point of prepared ``rows`` (``prepare_rows``): each point's engine's fixed times
    (``calc.serving_params.engine_costs`` of its row's engine under parameter ``values``, arrays over the points)
    and 1 with CUDA graphs, 0 eager, as ``calc.serving.combine`` takes them."""
    keys = rows["engine_key"].to_numpy()
    row = comps["row"].astype(int)
    costs = {what: np.array([engine_costs(values, k)[what] for k in keys])[row] for what in engine_costs(values, "generic")}
    return costs, rows["graphs"].to_numpy(float)[row]


def predict_rows(rows: pd.DataFrame, comps: dict, values: dict) -> np.ndarray:
    """Predicted value of every prepared row (in its metric's unit) under parameter ``values``: a mean or a median
    as ``_predict_centre`` gives it, a percentile (``tail_q``) as ``tail_value`` does."""
    out = _predict_centre(rows, comps, values)
    if "tail_q" in rows:
        for j in np.flatnonzero(np.isfinite(rows["tail_q"].to_numpy(float))):
            limits = prepared_limits(rows.iloc[j])
            if limits and rows["metric"].iat[j] in ("ttft_ms", "tpot_ms"):
                # a run tuned to its latency limits: its means at their edge (``_edge_value``, which
                # ``_predict_centre`` gave) times the tuned runs' tail, under the limit (``tuned_tail_s``)
                which = rows["metric"].iat[j][:4]
                limit = limits.get(f"{which}_s")
                out[j] = tuned_tail_s(out[j], which, str(rows["engine_key"].iat[j]),  # in ms, as the row
                                      None if limit is None else limit * 1e3, float(rows["tail_q"].iat[j]))
                continue
            one, sub = _subset(rows, comps, comps["row"].astype(int), np.arange(len(rows)) == j)
            # at least the row's mean (``_predict_centre``'s value for it): the paused requests' waits, in the mean
            # TPOT's queue part, are not in the tails' steps
            # (a client that splits a chunk's wait among its tokens, ``itl_per_token``, still books a whole round to
            # a round that accepted one token: its high percentiles of ITL are rounds, as the chunk gaps' are)
            out[j] = max(tail_value(one, sub, values), out[j])
    return out


def tail_value(rows: pd.DataFrame, comps: dict, values: dict) -> float:
    """The predicted percentile (``rows["tail_q"]``: 0.99 for p99) of one prepared row's TTFT, TPOT, ITL or
    end-to-end latency, in ms (``calc.serving_tails.run_quantile_s``): over the points ``row_points`` weighs, a
    closed loop's burst and steady state as the shares of its requests they hold, a rate's two grid points around
    Little's law's root as the interpolation they are. (A run tuned to latency limits is ``predict_rows``' own: its
    means at their edge times the tuned runs' tail, ``calc.serving.edge_tail_ratio``.)

    Raises:
        ValueError: ``rows`` holds other than one row, or its metric has no percentile model.
    """
    a, weights = row_points(rows, comps, values)
    r = rows.iloc[0]
    q = float(r["tail_q"])
    rng = None if pd.isna(r.get("out_range", np.nan)) else float(r["out_range"])
    ratio = output_quantile_ratio(q, rng, bool(r.get("spread", 0.0)))
    points = {i: (point_values(a, i), point_values(comps, i)) for i in weights}
    if float(r.get("rounds", 0.0) or 0.0) > 0:  # a mixture of the burst's requests and the steady state's
        value = run_quantile_s(r["metric"], [(*points[i], w) for i, w in weights.items()], q, ratio)
    else:  # the interpolation between a rate's grid points
        value = sum(w * run_quantile_s(r["metric"], [(*points[i], 1.0)], q, ratio) for i, w in weights.items())
    sent = float(r.get("sent_at_once", np.nan))
    if np.isfinite(sent) and r["metric"] in ("ttft_ms", "e2e_ms"):
        # N sent at once to an engine holding fewer: the q-quantile request waits for a slot as well
        # (``slot_wait_quantile_s``), at the burst point's requests per second
        first = min(weights)
        value += float(slot_wait_quantile_s(q, sent, float(np.asarray(comps["N"])[first]),
                                             float(np.asarray(a["requests_per_s"])[first])))
    return value * 1e3


def _predict_centre(rows: pd.DataFrame, comps: dict, values: dict) -> np.ndarray:
    """Predicted value of every prepared row (in its metric's unit) under parameter ``values``. A rate row whose
    notes state the 99th-percentile latency limits it was tuned to (``run_latency_limits``) is predicted for the
    engine of the range at their edge (``_edge_value``, ``calc.serving.edge_speed``), as ``serving_estimate`` with
    ``latency_limits`` predicts it. A rate row's throughput is its run's: the N requests its notes state over the
    span of their arrivals plus the last one's latency, or over what the engine completes where it does not keep up
    (``calc.serving.rate_run_requests_per_s``; the steady state where N is not stated)."""
    costs, graphs = point_costs(rows, comps, values)
    row = comps["row"].astype(int)
    rate = rows["rate_per_replica"].to_numpy(float)[row]
    is_rate = ~np.isnan(rate)
    closed = combine(comps, values, costs, graphs)
    idx = _first_index(rows)
    waves = rows["waves"].to_numpy(float) if "waves" in rows else np.zeros(len(rows))
    if (waves > 0).any():
        # a finite offline run: its duration is its full bursts' and the last partial burst's
        j = np.flatnonzero(waves > 0)
        two = rows["npts"].to_numpy(int)[j] > 1
        last = np.where(two, closed["e2e_s"][np.minimum(idx[j] + 1, len(comps["B"]) - 1)], 0.0)
        n_run = rows["run_requests"].to_numpy(float)[j]
        rps = n_run / (waves[j] * closed["e2e_s"][idx[j]] + last)
        closed = dict(closed, requests_per_s=closed["requests_per_s"].copy(),
                      output_tokens_per_s=closed["output_tokens_per_s"].copy())
        closed["requests_per_s"][idx[j]] = rps
        closed["output_tokens_per_s"][idx[j]] = rps * comps["O"][idx[j]]
    tails = rows["tail"].to_numpy(float) if "tail" in rows else np.zeros(len(rows))
    if (tails > 0).any():
        j = np.flatnonzero(tails > 0)
        i0 = idx[j]
        n_run = rows["run_requests"].to_numpy(float)[j]
        o = comps["O"][i0]
        dur = finite_run_drain_s(closed, i0, n_run, comps["B"][i0], o)
        closed = dict(closed, requests_per_s=closed["requests_per_s"].copy(),
                      output_tokens_per_s=closed["output_tokens_per_s"].copy())
        closed["requests_per_s"][i0] = n_run / dur
        closed["output_tokens_per_s"][i0] = n_run / dur * o
    rounds = rows["rounds"].to_numpy(float) if "rounds" in rows else np.zeros(len(rows))
    if (rounds > 0).any():
        j = np.flatnonzero(rounds > 0)
        i0, i1 = idx[j], idx[j] + 1
        w = _burst_share(rows, values, j)
        closed = dict(closed, **{k: closed[k].copy() for k in ("ttft_estimate", "tpot_estimate", "e2e_s", "itl_mean_s",
                                                                 "itl_median_s", "requests_per_s",
                                                                 "output_tokens_per_s")})
        # the first round's cold start, spread over the burst's requests: the run's mean TTFT and e2e grow by it
        closed = with_cold_start(closed, _burst_cold(costs, comps, i0, rounds[j], w))
        for k in ("ttft_estimate", "tpot_estimate", "e2e_s", "itl_mean_s", "itl_median_s"):
            closed[k][i0] = w * closed[k][i0] + (1.0 - w) * closed[k][i1]
        closed["requests_per_s"][i0] = comps["C"][i0] / closed["e2e_s"][i0]
        closed["output_tokens_per_s"][i0] = closed["requests_per_s"][i0] * comps["O"][i0]
    closed = with_run_slot_wait(rows, comps, closed, idx)
    if is_rate.any():
        opened = combine(comps, values, costs, graphs, rate_per_s=np.where(is_rate, rate, 0.0))
        # Little's law on each rate row's grid of requests in service: N where lam x e2e(N) = N, linear between
        # the two grid points around the root (the last point when the rate exceeds what the engine serves)
        gap = rate * opened["e2e_s"] - comps["N"]
        lo, share = idx.copy(), np.zeros(len(idx))
        beyond = np.zeros(len(idx), dtype=bool)  # no root on the row's grid: the engine does not keep up
        grid = _grid_points(rows)
        for j in np.flatnonzero(~np.isnan(rows["rate_per_replica"].to_numpy(float))):
            row_gap = gap[idx[j]: idx[j] + grid[j]]
            k, share[j] = _rate_root(row_gap)
            lo[j], beyond[j] = idx[j] + k, bool((row_gap > 0).all())
        merged = {k: np.where(is_rate, opened.get(k, closed[k]), closed[k]) for k in closed}
        a = _metric_value(rows["metric"], merged, lo, rows)
        b = _metric_value(rows["metric"], merged, np.minimum(lo + 1, len(gap) - 1), rows)
        out = np.where(share > 0, a * (1 - share) + b * share, a)
        piled = _piled(rows, idx, grid, beyond, opened, closed, comps)
        if piled.any():
            # the run's requests pile up as a burst of them sent at once would: every metric is that burst's
            # (its closed loop of N clients: the waits for a slot in TTFT, its N over its duration)
            out[piled] = _metric_value(rows["metric"], closed, np.minimum(idx + grid, len(gap) - 1), rows)[piled]
        # a finite run's throughput at a rate: its N requests over the span of their arrivals plus the last one's
        # latency, or over what the engine completes where it does not keep up (``rate_run_requests_per_s``)
        thr = np.flatnonzero(np.isin(rows["metric"].to_numpy(), _RUN_THROUGHPUT)
                             & ~np.isnan(rows["rate_per_replica"].to_numpy(float)))
        if thr.size:
            i0, i1, w = lo[thr], np.minimum(lo[thr] + 1, len(gap) - 1), share[thr]
            e2e = (1 - w) * merged["e2e_s"][i0] + w * merged["e2e_s"][i1]
            held = (1 - w) * comps["N"][i0] + w * comps["N"][i1]
            rps = rate_run_requests_per_s(rows["rate_per_replica"].to_numpy(float)[thr],
                                          rows["run_requests"].to_numpy(float)[thr], e2e, held, ~beyond[thr],
                                          closed["e2e_s"][idx[thr]])
            out[thr] = np.where(piled[thr], out[thr], _run_throughput(rows.iloc[thr], rps))
        tuned = rows["limit_tpot_s"].to_numpy(float) if "limit_tpot_s" in rows else np.full(len(rows), np.nan)
        for j in np.flatnonzero(np.isfinite(tuned) & is_rate[idx]):
            out[j] = _edge_value(rows.iloc[j], comps, values, costs, graphs, idx[j])
        return out
    return _metric_value(rows["metric"], closed, idx, rows)


def with_run_slot_wait(rows: pd.DataFrame, comps: dict, arrays: dict, idx) -> dict:
    """``arrays`` (``combine``'s, over the points of prepared ``rows``) with, at each row's point ``idx``, the wait for
    a free slot of an offline row that sends its N requests at once (``sent_at_once``, per replica) to an engine that
    holds fewer (``comps["N"]``): ``calc.serving_terms.slot_wait_s`` at the point's requests per second, in its TTFT
    and end-to-end latency, as a benchmark's means count it (GPUStack's ``vllm bench serve`` runs of 1,000 ShareGPT
    prompts at once on one A100: a mean TTFT of 106 s, of which the burst's own prefills are 5 s). Other rows, and a
    run whose batch holds all N, are unchanged."""
    if "sent_at_once" not in rows:
        return arrays
    n = rows["sent_at_once"].to_numpy(float)
    j = np.flatnonzero(np.isfinite(n))
    if not j.size:
        return arrays
    at = np.asarray(idx)[j]
    wait = slot_wait_s(n[j], np.asarray(comps["N"], dtype=float)[at], np.asarray(arrays["requests_per_s"])[at])
    if not np.any(wait > 0):
        return arrays
    full = np.zeros(len(np.asarray(arrays["ttft_estimate"])))
    full[at] = wait
    return with_slot_wait(arrays, full)


def _row_limits(limits: dict | None, prm: dict, key: str) -> dict:
    """A prepared rate row's latency limits (``run_latency_limits``; NaN where it has none) and the engine's
    throughput quantiles that bound the speed of the engine at their edge (``calc.serving.edge_speed``)."""
    limits = limits or {}
    q = error_quantiles(prm, "throughput", key) if limits else (np.nan, np.nan)
    q_lat = error_quantiles(prm, "latency", key) if limits else (np.nan, np.nan)
    return {"limit_ttft_s": limits.get("ttft_s", np.nan), "limit_tpot_s": limits.get("tpot_s", np.nan),
            "q_thr_low": q[0], "q_thr_high": q[1], "q_lat_low": q_lat[0], "q_lat_high": q_lat[1]}


def prepared_limits(r) -> dict:
    """The latency limits of one prepared row (``prepare_rows``' limit_ttft_s and limit_tpot_s, a row of its frame
    or a named tuple), as ``serving_estimate``'s ``latency_limits``: {} where its notes state none."""
    get = r.get if hasattr(r, "get") else (lambda name, default=np.nan: getattr(r, name, default))
    return {m: float(get(f"limit_{m}", np.nan)) for m in ("ttft_s", "tpot_s")
            if np.isfinite(float(get(f"limit_{m}", np.nan)))}


def edge_solver(r, comps: dict, values: dict, costs: dict, graphs: np.ndarray, first: int, limits: dict):
    """(at, times) of one prepared rate row (``r``, its first point ``first`` in ``comps``; ``costs`` and ``graphs``
    per point, as ``predict_rows`` builds them) for an engine ``k`` times slower (``calc.serving.rate_range``), on
    the row's grid of requests in service: ``at(k)`` is ({"tpot_estimate", "ttft_estimate", "e2e_s" (seconds, ``k``
    times the times at ``k`` times the rate, at Little's law's root, ``_rate_root``), "bound_tpot_s",
    "bound_ttft_s"}, beyond: no root on the grid, the engine does not keep up); ``times(k)`` is (TPOT, TTFT) in
    seconds, (inf, inf) beyond, as ``calc.serving.edge_speed`` takes it (its TTFT ``spread_ttft_s``'s under
    ``limits``, the row's latency limits)."""
    sl = slice(first, first + int(r.npts) - int(float(getattr(r, "pile", 0.0) or 0.0) > 0))
    sub = {key: np.asarray(v)[sl] for key, v in comps.items()}
    sub_costs = {key: np.asarray(v)[sl] for key, v in costs.items()}
    lam = float(r.rate_per_replica)

    def at(k):
        opened = combine(sub, values, sub_costs, graphs[sl], rate_per_s=np.full(len(sub["N"]), k * lam))
        gap = k * lam * opened["e2e_s"] - sub["N"]
        i, share = _rate_root(gap)
        nxt = min(i + 1, len(sub["N"]) - 1)
        t = {m: k * ((1 - share) * opened[m][i] + share * opened[m][nxt])
             for m in ("tpot_estimate", "ttft_estimate", "e2e_s", "ttft_adp_wait_s")}
        t.update({m: (1 - share) * opened[m][i] + share * opened[m][nxt] for m in ("bound_tpot_s", "bound_ttft_s")})
        return t, bool((gap > 0).all())  # no root on the grid: this engine does not keep up with the rate

    def times(k):
        t, beyond = at(k)
        return (math.inf, math.inf) if beyond else (t["tpot_estimate"],
                                                     spread_ttft_s(t["ttft_estimate"], t["ttft_adp_wait_s"], limits))

    return at, times


def _edge_value(r, comps: dict, values: dict, costs: dict, graphs: np.ndarray, first: int) -> float:
    """One rate row's metric for the engine at the edge of its latency limits (``calc.serving.edge_speed``), on the
    row's grid of requests in service (``edge_solver``), its means as a run tuned to them holds them
    (``calc.serving.tuned_means``)."""
    limits = prepared_limits(r)
    at, times = edge_solver(r, comps, values, costs, graphs, first, limits)
    shares = edge_shares(str(r.engine_key))
    k, _, capped = edge_speed(times, limits, (float(r.q_thr_low), float(r.q_thr_high)), shares=shares)
    t = tuned_means(at(k)[0], limits, (float(r.q_lat_low), float(r.q_lat_high)), capped, shares=shares)[0]
    if r.metric in _RUN_THROUGHPUT:  # the engine at the edge keeps up: the run's N over arrivals plus one latency
        rps = float(rate_run_requests_per_s(float(r.rate_per_replica), float(r.run_requests), float(t["e2e_s"]),
                                            float(r.rate_per_replica) * float(t["e2e_s"]), True, float(t["e2e_s"])))
        return float(_run_throughput(r.to_frame().T, [rps])[0])
    return {"tpot_ms": t["tpot_estimate"] * 1e3, "itl_ms": t["tpot_estimate"] * 1e3,
            "ttft_ms": t["ttft_estimate"] * 1e3, "e2e_ms": t["e2e_s"] * 1e3}.get(r.metric, np.nan)


def _burst_share(rows: pd.DataFrame, values: dict, j: np.ndarray) -> np.ndarray:
    """For the prepared rows ``j`` of closed loops of R rounds (``rows["rounds"]`` > 0), the share of the run that
    moves as one burst (``lockstep_share``; the persistence only where every request has one length, and all of
    it where the engine runs a prompt batch as a step of its own: ``lockstep_persistence``): the weight of the
    burst's times (each row's first point) against the steady state's (its second)."""
    rounds = rows["rounds"].to_numpy(float)[j]
    mixes = rows["mixed_prefill"].to_numpy(float)[j] if "mixed_prefill" in rows else np.ones(len(j))
    return burst_share(rows["lockstep"].to_numpy(float)[j], rounds, values["lockstep_persistence"], mixes)


def _burst_cold(costs: dict, comps: dict, first, rounds, share) -> np.ndarray:
    """Seconds of the first round's cold start (the engines' ROCm builds, ``calc.serving_params.cold_start_values``)
    each point of ``comps`` carries before its first token (``calc.serving_terms.with_cold_start``): the burst
    points ``first`` (the closed loops' first points) their run's ``burst_cold_start_s`` over its ``rounds`` and
    burst ``share``, every other point none."""
    extra = np.zeros(len(comps["B"]))
    extra[first] = burst_cold_start_s(cold_start_s(costs["cold"][first], comps["family"][first]), rounds, share)
    return extra


def _rate_root(gap: np.ndarray) -> tuple[int, float]:
    """(k, share) for one rate row's grid of requests in service N: Little's law's root, N where
    ``gap = lam x e2e(N) - N`` crosses 0, lies ``share`` of the way from point k to point k + 1 (share 0: at
    point k; the last point when the rate exceeds what the engine serves)."""
    ok = np.flatnonzero(gap <= 0)
    if ok.size == 0:
        return len(gap) - 1, 0.0
    if ok[0] == 0:
        return 0, 0.0
    k = int(ok[0])
    return k - 1, float(gap[k - 1] / (gap[k - 1] - gap[k]))


def row_points(rows: pd.DataFrame, comps: dict, values: dict) -> tuple[dict, dict]:
    """Where ``predict_rows`` takes one prepared row's times: ``combine``'s arrays over its points (the open loop's
    at its rate for a rate row) and {point: weight}, the weights (adding up to 1) whose sum of any time over the
    points is the row's predicted TPOT, TTFT or e2e: point 0 alone; for a closed loop of R rounds, the burst's
    point and the steady state's (``_burst_share``); for a rate row, the two grid points around Little's law's
    root (``_rate_root``). A finite offline run's throughput (its waves, its drain) is ``predict_rows``' own and
    not in these arrays.

    Args:
        rows, comps: ``prepare_rows``' output for a single measurement row; values: ``param_values``.

    Raises:
        ValueError: ``rows`` holds other than one row.
    """
    if len(rows) != 1:
        raise ValueError(f"row_points takes one prepared row, got {len(rows)}")
    costs = {what: np.full(len(comps["B"]), engine_costs(values, rows["engine_key"].iat[0])[what])
             for what in engine_costs(values, "generic")}
    graphs = np.full(len(comps["B"]), float(rows["graphs"].iat[0]))
    rate = float(rows["rate_per_replica"].iat[0])
    if np.isfinite(rate):
        opened = combine(comps, values, costs, graphs, rate_per_s=np.full(len(comps["B"]), rate))
        grid = int(_grid_points(rows)[0])
        gap = (rate * opened["e2e_s"] - comps["N"])[:grid]
        beyond = bool((gap > 0).all())  # no root on the grid: a finite run's requests may pile up
        if beyond and grid < len(comps["B"]):
            closed = combine(comps, values, costs, graphs)
            if _piled(rows, np.array([0]), np.array([grid]), np.array([beyond]), opened, closed, comps)[0]:
                return closed, {grid: 1.0}  # the run's requests pile up: its burst point (``predict_rows``)
        k, share = _rate_root(gap)
        return opened, ({k: 1.0 - share, k + 1: share} if share > 0 else {k: 1.0})
    closed = combine(comps, values, costs, graphs)
    if "rounds" in rows and float(rows["rounds"].iat[0]) > 0:
        w = float(_burst_share(rows, values, np.array([0]))[0])
        # the burst's point carries the first round's cold start, as in ``_predict_centre``
        closed = with_cold_start(closed, _burst_cold(costs, comps, np.array([0]), float(rows["rounds"].iat[0]), w))
        return closed, {0: w, 1: 1.0 - w}
    return closed, {0: 1.0}


def _grid_points(rows) -> np.ndarray:
    """Each prepared row's points on its grid of requests in service (a rate row's Little's-law grid), without
    the burst point a finite rate run carries after it (``prepare_rows``' ``pile``)."""
    pile = rows["pile"].to_numpy(float) if "pile" in rows else np.zeros(len(rows))
    return rows["npts"].to_numpy(int) - (pile > 0).astype(int)


def _piled(rows, idx, grid, beyond, opened, closed, comps) -> np.ndarray:
    """Which prepared rate rows pile up (as ``calc.serving._solve_rate`` decides for the public estimate): a finite
    run (``pile``) not tuned to latency limits whose rate is beyond what even the top of the estimate's throughput
    range serves at the batch limit (no root of Little's law on its grid, rate x e2e above the batch limit x
    exp(q), q the pooled high quantile of the cross-validated throughput errors), with more requests than its batch
    holds (the rest wait for a slot) or prompts sent faster than even that range's top prefills them (rate x a
    prompt's time, ``combine``'s prompt_s, above exp(q)), and whose N sent at once (its burst point, after the grid) are served more
    slowly than they arrive."""
    pile = rows["pile"].to_numpy(float) if "pile" in rows else np.zeros(len(rows))
    limited = np.isfinite(rows["limit_tpot_s"].to_numpy(float)) | np.isfinite(rows["limit_ttft_s"].to_numpy(float)) \
        if "limit_tpot_s" in rows else np.zeros(len(rows), dtype=bool)
    out = np.zeros(len(rows), dtype=bool)
    for j in np.flatnonzero((pile > 0) & beyond & ~limited):
        last, burst = idx[j] + grid[j] - 1, idx[j] + grid[j]
        lam = float(rows["rate_per_replica"].iat[j])
        top = math.exp(max(float(rows["q_pile"].iat[j]), 0.0))
        over = lam * float(opened["e2e_s"][last]) > float(comps["N"][last]) * top
        # more requests than its batch holds, or prompts arriving faster than it prefills them: they queue
        queued = (float(comps["N"][last]) < float(rows["run_requests"].iat[j])
                  or lam * float(opened["prompt_s"][last]) > top)
        out[j] = over and queued and float(closed["requests_per_s"][burst]) < lam
    return out


def _first_index(rows):
    n = rows["npts"].to_numpy(int)
    return np.concatenate([[0], np.cumsum(n)[:-1]]).astype(int)


def old_estimate_rows(rows: pd.DataFrame, comps: dict) -> np.ndarray:
    """The estimate before the serving model, for comparison: the bound's parts divided by MBU 0.69
    and MFU 0.80 (``calc.efficiency.default_utilisation``) with the bound's overlap of the weight read and the
    matmuls (``overlap_read``: their max, as ``calc.efficiency`` keeps it), no fixed cost, no interference, no queue."""
    old = {k: 0.0 for k in PARAM_KEYS}
    old.update(mbu_weights=0.69, mbu_kv=0.69, mfu_decode=0.80, grouped_gemm=1.0, mfu_prefill_16=0.80,
               mfu_prefill_8=0.80, mfu_prefill_4=0.80, comm_efficiency=1.0, comm_efficiency_scale_out=1.0,
               comm_efficiency_pcie=1.0, weight_only_matmul=1.0, moe_prefill_matmul=1.0, lockstep_persistence=1.0,
               software_gain_per_year=0.0, **{k: 1.0 for k in FAMILY_KEYS + ADP_WAIT_KEYS})
    flat = dict(comps, f=np.zeros_like(comps["f"]), p_mix=np.zeros_like(comps["f"]),
                n_chunks=np.ones_like(comps["n_chunks"]), dp_wait_s=np.zeros_like(comps["f"]), dp_alone_s=np.zeros_like(comps["f"]),
                C=np.minimum(comps["C"], comps["B"]), N=comps["B"], mm=np.ones_like(comps["mm"]),
                overlap_read=np.ones_like(comps["f"]))
    return predict_rows(rows.assign(rate_per_replica=np.nan, waves=0.0), flat, old)


def source_loss_weights(source_ids, weighting: str | None = None) -> np.ndarray:
    """Weight of each row in the fit's loss, from the source of each row (an array of source ids).

    "source": N / (S x n_s) for a row of a source of n_s rows (N rows, S sources), so that every source's
    rows sum to N / S and all rows to N: one source of 1,000 rows and one of 20 weigh the same in total.
    "sqrt": (1 / sqrt(n_s)) / mean over rows, a factor on the row's residual inside the loss (not on its
    loss). Example: sources a, a, a, b -> "source" weights 4 / (2 x 3) = 0.667 for each a row and
    4 / (2 x 1) = 2 for b (sum 4); "sqrt" 1/sqrt(3) = 0.577 and 1, mean 0.683, so 0.845 and 1.464.

    Raises:
        ValueError: an unknown weighting.
    """
    weighting = SOURCE_WEIGHTING if weighting is None else weighting
    ids = pd.Series(np.asarray(source_ids))
    n = ids.map(ids.value_counts()).to_numpy(float)
    if weighting == "source":
        return len(ids) / (ids.nunique() * n)
    if weighting == "sqrt":
        w = 1.0 / np.sqrt(n)
        return w / w.mean()
    raise ValueError(f"unknown source weighting {weighting!r}: use 'source' or 'sqrt'")


def weighted_soft_l1(residual, loss_weight, f_scale: float = F_SCALE) -> np.ndarray:
    """Residuals whose squares sum to the weighted soft-L1 loss sum_i w_i f^2 rho((r_i / f)^2),
    rho(z) = 2 (sqrt(1 + z) - 1) (scipy.optimize.least_squares' "soft_l1"): r_i sqrt(2 w_i / (1 + sqrt(1 +
    (r_i / f)^2))), so a plain least-squares solver minimises it. With w = 1 it is scipy's soft_l1 itself.
    Example: r = 0.6, f = 0.2, w = 1: z = 9, rho = 2 (sqrt(10) - 1) = 4.325, f^2 rho = 0.1730, and
    0.6 sqrt(2 / (1 + sqrt(10))) = 0.4160, whose square is 0.1730."""
    r = np.asarray(residual, dtype=float)
    return r * np.sqrt(2.0 * np.asarray(loss_weight, dtype=float) / (1.0 + np.sqrt(1.0 + (r / f_scale) ** 2)))


def _free_keys(params):
    return [k for k in PARAM_KEYS if params["params"][k].get("fit", True)]


def fit_serving_params(measurements: pd.DataFrame, params: dict | None = None, prepared=None) -> dict:
    """Fit the serving parameters to ``measurements`` (the columns of serving_measurements.csv).

    Returns:
        a new params dict (the layout of serving_params.json) with each free parameter's ``value``
        fitted (provenance "fitted" when some row informs it, else "prior"), the generic engine's fixed
        cost set to the median of the fitted engines', and ``coverage`` (engines, accelerators, architecture
        traits and each engine's weight formats of the rows). Validation is added by ``calibrate``.

    Raises:
        ValueError: no usable row.
    """
    base = copy.deepcopy(params or load_serving_params())
    rows, comps, _ = prepared or prepare_rows(measurements, base)
    if rows.empty:
        raise ValueError("no measurement row the serving model can use (see prepare_rows' skipped list)")
    free = _free_keys(base)
    spec = base["params"]
    x0 = np.log([spec[k]["prior"] for k in free])
    lo = np.log([spec[k]["bounds"][0] for k in free])
    hi = np.log([spec[k]["bounds"][1] for k in free])
    sig = np.array([spec[k]["prior_sigma_log"] for k in free])
    fixed = {k: float(spec[k]["value"]) for k in PARAM_KEYS if k not in free}
    fixed.update(cold_start_values(base))  # a calibration the fit takes as it stands (``calibrate_cold_start``)
    meas = rows["value"].to_numpy(float)
    weighting = SOURCE_WEIGHTING
    weight = source_loss_weights(rows["source_id"].to_numpy(), weighting)

    def values(x):
        v = dict(fixed)
        v.update(zip(free, np.exp(x)))
        return v

    pools = [np.array([free.index(f"{g}.{e}") for e in ENGINES if e != "generic" and f"{g}.{e}" in free])
             for g in ENGINE_GROUPS]
    pools = [ix for ix in pools if ix.size > 1]

    def resid(x):
        pred = predict_rows(rows, comps, values(x))
        pooled = [(x[ix] - x[ix].mean()) / POOL_SIGMA_LOG for ix in pools]
        if weighting == "sqrt":  # the weight scales the residual; scipy applies the loss
            return np.concatenate([weight * np.log(pred / meas), PRIOR_WEIGHT * (x - x0) / sig] + pooled)
        rest = np.concatenate([PRIOR_WEIGHT * (x - x0) / sig] + pooled)
        return np.concatenate([weighted_soft_l1(np.log(pred / meas), weight), weighted_soft_l1(rest, 1.0)])

    sol = least_squares(resid, np.clip(x0, lo + 1e-9, hi - 1e-9), bounds=(lo, hi),
                        loss=LOSS if weighting == "sqrt" else "linear", f_scale=F_SCALE,
                        method="trf", x_scale=1.0, diff_step=1e-4, max_nfev=400)
    v = values(sol.x)
    jac = sol.jac[: len(meas)]
    informed = np.linalg.norm(jac, axis=0) > 1e-3
    pooled_keys = {free[i] for ix in pools for i in ix}
    for k, x, inf in zip(free, sol.x, informed):
        spec[k]["value"] = float(f"{np.exp(x):.4g}")
        spec[k]["provenance"] = "fitted" if inf else "pooled" if k in pooled_keys else "prior"
    engines = sorted(set(rows["engine_key"]) - {"generic"})
    for what in ENGINE_GROUPS:
        fitted = [v[f"{what}.{e}"] for e in engines] or [spec[f"{what}.generic"]["prior"]]
        spec[f"{what}.generic"]["value"] = float(f"{np.median(fitted):.4g}")
        spec[f"{what}.generic"]["provenance"] = "fitted" if engines else "prior"
    base["coverage"] = {"engines": engines, "accelerators": sorted(set(rows["accelerator"])),
                        "architectures": architecture_coverage(rows["model"], rows["source_id"]),
                        "weight_formats": format_coverage(rows["engine_key"], rows["weight_dtype"], rows["source_id"])}
    base["fitted"] = {"rows": int(len(rows)), "sources": int(rows["source_id"].nunique()),
                      "method": f"scipy.optimize.least_squares, trf, {LOSS if weighting == 'sqrt' else 'soft_l1'} "
                                f"(f_scale {F_SCALE}) on log(predicted / "
                                "measured), log-parameters within bounds, prior weight 1 per parameter",
                      "source_weighting": weighting}
    return base


def calibrate_cold_start(params: dict | None = None, path=None) -> dict:
    """The first-round cold start of the engines' ROCm builds (``calc.serving_params.cold_start_values``), from the
    closed-loop runs of ``path`` (``COLD_START_RUNS_PATH`` by default: InferenceMAX's 2025 runs on AMD Instinct, 10
    rounds of C requests after 2 x C warm-up requests, their mean TTFT, which no fit reads) under ``params`` (the
    stored file by default) without any cold start: each run's excess, R x (measured - predicted mean TTFT), is
    what its first round paid beyond the model's burst; the median over an engine's runs is its value (seconds,
    3 significant digits), the median over all of them the "generic" one.

    Returns:
        {"rocm": {engine: seconds, ..., "generic": seconds}, "n": {engine: runs, ..., "generic": runs}}.

    Raises:
        ValueError: a malformed file, or none of its rows a mean TTFT of a closed loop of stated rounds on ROCm.

    Source: the residuals of these runs (bench/convert_cold_start_runs.py); the median keeps a few runs of another
    pathology (SGLang's DeepSeek-R1 on MI355X at high concurrency) from setting it."""
    base = params or load_serving_params()
    df = load_measurements(path or COLD_START_RUNS_PATH, sources=load_sources())
    rows, comps, _ = prepare_rows(df, base)
    values = {k: v for k, v in param_values(base).items() if not k.startswith(COLD_START_PREFIX)}
    pred = predict_rows(rows, comps, values)
    rounds = rows["rounds"].to_numpy(float) if "rounds" in rows else np.zeros(len(rows))
    rocm = on_rocm(comps["family"][_first_index(rows)])
    use = (rocm & (rounds > 0) & (rows["metric"].to_numpy() == "ttft_ms")
           & (rows["statistic"].to_numpy() == "mean") & rows["rate_per_replica"].isna().to_numpy())
    if not use.any():
        raise ValueError("no row of a closed loop of stated rounds on AMD Instinct with a mean TTFT to calibrate on")
    excess = rounds * (rows["value"].to_numpy(float) - pred) / 1e3
    engines = rows["engine_key"].to_numpy()
    out = {"rocm": {}, "n": {}}
    for e in sorted(set(engines[use])) + ["generic"]:
        mask = use & ((engines == e) if e != "generic" else True)
        out["rocm"][e] = float(f"{max(float(np.median(excess[mask])), 0.0):.3g}")
        out["n"][e] = int(mask.sum())
    return out


def error_summary(log_ratio) -> dict:
    """Median |log(measured / predicted)|, share within 25% and 50% (|predicted / measured - 1|), count."""
    r = np.asarray(log_ratio, dtype=float)
    r = r[np.isfinite(r)]
    if r.size == 0:
        return {"n": 0, "median_abs_log": float("nan"), "within_25": float("nan"), "within_50": float("nan")}
    dev = np.abs(np.exp(-r) - 1.0)
    return {"n": int(r.size), "median_abs_log": round(float(np.median(np.abs(r))), 4),
            "within_25": round(float(np.mean(dev <= 0.25)), 4), "within_50": round(float(np.mean(dev <= 0.5)), 4)}


def cross_validate(measurements: pd.DataFrame, by: str = "source_id", params: dict | None = None,
                   prepared=None) -> pd.Series:
    """Held-out log(measured / predicted) of every row: refit without each group of ``by``
    ("source_id": leave-one-source-out; "model": leave-one-model-out) and predict that group.

    Returns:
        Series indexed like the prepared rows (NaN where a group could not be held out: the only group).
    """
    base = params or load_serving_params()
    rows, comps, skipped = prepared or prepare_rows(measurements, base)
    out = pd.Series(np.nan, index=rows.index)
    groups = rows[by].unique()
    if len(groups) < 2:
        return out
    # each group's refit is independent of the others': one process per CPU, the same numbers as one after another
    jobs = [(rows, comps, skipped, base, (rows[by] != g).to_numpy()) for g in groups]
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            held = list(pool.map(_held_out_log_ratio, jobs))
    else:
        held = [_held_out_log_ratio(j) for j in jobs]
    for (_, _, _, _, keep), r in zip(jobs, held):
        out[rows.index[~keep]] = r
    return out


def _held_out_log_ratio(job) -> np.ndarray:
    """log(measured / predicted) of the rows ``keep`` leaves out, under parameters fitted to the others
    (``cross_validate``'s unit of work)."""
    rows, comps, skipped, base, keep = job
    row_of = comps["row"].astype(int)
    train = _subset(rows, comps, row_of, keep)
    test = _subset(rows, comps, row_of, ~keep)
    fitted = fit_serving_params(None, base, prepared=(train[0], train[1], skipped))
    pred = predict_rows(test[0], test[1], param_values(fitted))
    return np.log(test[0]["value"].to_numpy(float) / pred)


#: Published rows that no fit reads (the columns of serving_measurements.csv, sources in serving_sources.csv):
#: the serving model's check on points it never saw. ``holdout_table`` predicts them with the stored parameters.
HOLDOUT_PATH = DATA_DIR / "serving_holdout.csv"


def holdout_table(params: dict | None = None, path=None) -> tuple[pd.DataFrame, list]:
    """The serving model on the held-out rows (``HOLDOUT_PATH`` by default, or another file of the same columns,
    whose sources need not be in serving_sources.csv and whose malformed rows, such as a model calc has no preset of,
    are skipped with their message rather than failing the file): each row measured against its
    prediction with ``params`` (the stored serving_params.json by default), none of them seen by the fit
    (``fit_serving_params`` reads serving_measurements.csv only). Every row the model can predict is taken, as the
    measured page's table takes it: means and medians, percentiles (``tail_value``), speculative runs (with the
    acceptance their notes state, else InferenceX's golden curve: ``prepare_rows``' ``include_speculative``).

    Returns:
        (table, skipped): table with one row per predicted measurement and columns id, source_id, model,
        accelerator, engine_key, weight_dtype, mode, metric, statistic, measured, predicted (the metric's unit: ms or
        tokens/s), log_ratio (log(measured / predicted)); skipped: (id, reason) for rows the model does not
        predict (``prepare_rows``), and, in another file, (its line, message) for a row that could not be read.

    Raises:
        ValueError: a malformed file, or in the shipped held-out file a source id missing from serving_sources.csv
            (``load_measurements``).

    Source: the cross-validation of this module, applied to rows kept out of every fit.
    """
    base = params or load_serving_params()
    own = path is None or os.path.abspath(path) == os.path.abspath(HOLDOUT_PATH)
    df = load_measurements(path or HOLDOUT_PATH, sources=load_sources() if own else None, skip_bad=not own)
    columns = ["id", "source_id", "model", "accelerator", "engine_key", "weight_dtype", "mode", "metric", "statistic"]
    rows, comps, skipped = prepare_rows(df, base, include_speculative=True, include_tails=True)
    if not len(rows):  # an empty file, or one whose every row the model skips (eager runs, offline latencies)
        rows = pd.DataFrame(columns=columns + ["value"])
    pred = predict_rows(rows, comps, param_values(base)) if len(rows) else np.array([])
    meas = rows["value"].to_numpy(float)
    table = rows[columns].assign(
        measured=meas, predicted=pred, log_ratio=np.log(meas / pred) if len(rows) else np.array([]))
    unread = [(m.split(",")[0], m) for m in df.attrs.get("skipped", [])]  # ("mine.csv line 7", its message)
    return table.reset_index(drop=True), unread + list(skipped)


def _subset(rows, comps, row_of, keep):
    sel = keep[row_of]
    new_rows = rows[keep].reset_index(drop=True)
    renum = np.cumsum(keep) - 1
    sub = {k: v[sel] for k, v in comps.items()}
    sub["row"] = renum[row_of[sel]].astype(float)
    return new_rows, sub


def calibrate(measurements: pd.DataFrame, params: dict | None = None) -> tuple[dict, pd.DataFrame]:
    """Fit, cross-validate and summarise: (the new params dict with ``validation``, the per-row table).

    The per-row table has id, source_id, model, model_family, engine, accelerator, metric, kind,
    measured, predicted, old (MBU/MFU estimate), log_ratio (in-sample), log_ratio_old,
    log_ratio_loso, log_ratio_lomo. ``validation.range`` holds the RANGE_QUANTILES of the
    leave-one-source-out errors by kind (latency, throughput), pooled when a kind has few rows;
    ``validation.range_by_engine`` the same per engine (where an engine has fewer than 10 rows of a
    kind: its quantiles over both kinds, or the pooled kind's when it has fewer than 10 rows in all).
    """
    base = copy.deepcopy(params or load_serving_params())
    prepared = prepare_rows(measurements, base)
    rows, comps, skipped = prepared
    fitted = fit_serving_params(measurements, base, prepared=prepared)
    # the first-round cold start of the ROCm builds, from runs no fit reads, under the parameters just fitted; the
    # fit takes it as it stands, so fit again until the calibration no longer moves (a few rounds at most)
    for _ in range(4):
        cold = calibrate_cold_start(fitted)
        if cold["rocm"] == fitted.get("first_round_cold", {}).get("rocm"):
            break
        fitted["first_round_cold"] = dict(fitted.get("first_round_cold", {}), **cold)
        fitted = fit_serving_params(measurements, fitted, prepared=prepared)
    pred = predict_rows(rows, comps, param_values(fitted))
    old = old_estimate_rows(rows, comps)
    table = rows[["id", "source_id", "model", "model_family", "engine", "accelerator", "metric", "kind",
                  "value"]].rename(columns={"value": "measured"}).copy()
    table["predicted"], table["old"] = pred, old
    table["log_ratio"] = np.log(table["measured"] / pred)
    table["log_ratio_old"] = np.log(table["measured"] / old)
    table["log_ratio_loso"] = cross_validate(measurements, "source_id", base, prepared).to_numpy()
    table["log_ratio_lomo"] = cross_validate(measurements, "model", base, prepared).to_numpy()
    cv = table["log_ratio_loso"].where(table["log_ratio_loso"].notna(), table["log_ratio"])
    rng = {kind: _quantiles(cv, table["kind"] == kind) for kind in ("latency", "throughput")}
    by_engine = {}
    for engine in sorted(table["engine"].unique()):
        e = table["engine"] == engine
        both = _quantiles(cv, e, fallback=None) if e.sum() >= 10 else None
        by_engine[engine] = {kind: _quantiles(cv, e & (table["kind"] == kind), fallback=both or rng[kind])
                             for kind in ("latency", "throughput")}
    fitted["validation"] = {
        "range": rng, "range_by_engine": by_engine, "range_quantiles": list(RANGE_QUANTILES),
        "all_rows": {"new": error_summary(table["log_ratio"]), "old": error_summary(table["log_ratio_old"])},
        "leave_one_source_out": error_summary(table["log_ratio_loso"]),
        "leave_one_model_out": error_summary(table["log_ratio_lomo"]),
        "skipped_rows": len(skipped)}
    # after the ranges above: a held-out run tuned to its limits takes its edge engine within them
    fitted["validation"].update(held_out_validation(fitted))
    return fitted, table


def held_out_by_trait(held: pd.DataFrame, params: dict | None = None) -> dict:
    """{trait: figures} of the held-out means and medians (``holdout_table``'s rows whose statistic is in
    ``FIT_STATISTICS``) of models with each key of ``calc.serving_params.ARCHITECTURE_TRAITS``, and under
    ``FORMAT_TRAIT`` of the rows whose engine and weight format ``params``' calibration read thinly (``thin_format``;
    ``params``: the stored file by default): ``error_summary`` plus median_log_ratio (log(measured / predicted),
    positive: slower than the estimate), models (the presets' names, sorted; for ``FORMAT_TRAIT`` the pairs, "vLLM
    with fp8-block weights") and range ({kind: RANGE_QUANTILES of the log ratios of the kind's metrics, latency or
    throughput, where it has 10 rows or more}); a trait no such row has is left out. ``architecture_notice`` quotes
    them, and ``calc.serving_params.error_quantiles`` widens a thinly covered trait's estimates to its range."""
    prm = params or load_serving_params()
    centre = held[held["statistic"].isin(FIT_STATISTICS)]
    known = preset_traits(centre["model"])
    kinds = {"latency": centre["metric"].isin(LATENCY_METRICS), "throughput": centre["metric"].isin(THROUGHPUT_METRICS)}
    groups = {key: (pd.Series([key in known[k][1] for k in centre["model"]], index=centre.index, dtype=bool),
                    [known[k][0] for k in centre["model"]]) for key in ARCHITECTURE_TRAITS}
    pairs = list(zip(centre["engine_key"], centre["weight_dtype"]))
    groups[FORMAT_TRAIT] = (pd.Series([thin_format(prm, e, f) for e, f in pairs], index=centre.index, dtype=bool),
                            [format_pair_words(e, f) for e, f in pairs])
    out = {}
    for key, (has, names) in groups.items():
        t = centre[has]
        if len(t):
            ranges = {kind: _quantiles(centre["log_ratio"], has & mask) for kind, mask in kinds.items()
                      if (has & mask).sum() >= 10}
            out[key] = dict(error_summary(t["log_ratio"]),
                            median_log_ratio=round(float(np.median(t["log_ratio"])), 4),
                            models=sorted({n for n, h in zip(names, has) if h}), range=ranges)
    return out


def held_out_validation(params: dict | None = None) -> dict:
    """The stored figures of the held-out rows (``holdout_table`` under ``params``, the stored file by default):
    ``held_out_rows``, the error summary of their means and medians, and ``held_out_tail_rows``, of their
    percentiles (p99 TTFT, TPOT...: ``tail_value``), a figure of their own (``error_summary``). The fit writes them;
    ``python -m calc.serving_fit --held-out`` rewrites only them when the held-out file has grown, the fitted
    parameters untouched."""
    held = holdout_table(params)[0]
    centre = held["statistic"].isin(FIT_STATISTICS)
    return {"held_out_rows": error_summary(held.loc[centre, "log_ratio"]),
            "held_out_tail_rows": error_summary(held.loc[~centre, "log_ratio"]),
            "held_out_by_trait": held_out_by_trait(held, params)}


def _quantiles(cv: pd.Series, mask, fallback=None, least: int = 10) -> list:
    """RANGE_QUANTILES of the held-out log ratios ``cv[mask]``; ``fallback`` (or all rows) when fewer
    than ``least`` rows are in the mask."""
    r = cv[mask].dropna()
    if len(r) < least:
        if fallback is not None:
            return fallback
        r = cv.dropna()
    return [round(float(np.quantile(r, RANGE_QUANTILES[0])), 4), round(float(np.quantile(r, RANGE_QUANTILES[1])), 4)]


def error_tables(table: pd.DataFrame) -> dict:
    """{title: DataFrame} of error summaries overall and by kind, metric, engine, accelerator, model family and
    source, for the old estimate, the new one in-sample and cross-validated (source, model held out)."""
    cols = {"old (MBU 0.69 / MFU 0.80)": "log_ratio_old", "new, in-sample": "log_ratio",
            "new, source held out": "log_ratio_loso", "new, model held out": "log_ratio_lomo"}
    out = {}
    for by in (None, "kind", "metric", "engine", "accelerator", "model_family", "source_id"):
        groups = [("all", table)] if by is None else list(table.groupby(by))
        recs = []
        for g, t in groups:
            for label, col in cols.items():
                recs.append(dict(group=g, estimate=label, **error_summary(t[col])))
        out["all rows" if by is None else f"by {by}"] = pd.DataFrame(recs)
    return out


def main(argv=None) -> int:
    """``python -m calc.serving_fit [measurements.csv] [--check]``: fit, validate, rewrite
    serving_params.json (``--check``: print only) and print the error tables. ``--held-out``: rewrite only the
    held-out rows' figures of the stored file (``held_out_validation``), no fit."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--held-out" in args:
        stored = load_serving_params()
        figures = held_out_validation(stored)
        print(json.dumps(figures, indent=2))
        stored = copy.deepcopy(stored)
        stored["validation"].update(figures)
        PARAMS_PATH.write_text(json.dumps(stored, indent=2) + "\n", encoding="utf-8")
        print(f"wrote the held-out figures of {PARAMS_PATH.name}")
        return 0
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    df = read_measurements(args[0] if args else None)
    fitted, table = calibrate(df)
    for title, t in error_tables(table).items():
        print(f"\n== {title} ==")
        print(t.to_string(index=False))
    print("\nfitted parameters:")
    for k in PARAM_KEYS:
        e = fitted["params"][k]
        print(f"  {k:<24} {e['value']:<12.4g} prior {e['prior']:<10.4g} {e['provenance']}")
    print("range (log measured/predicted, LOSO quantiles):", fitted["validation"]["range"])
    print("first-round cold start of the ROCm builds, s (calibrate_cold_start):", fitted["first_round_cold"]["rocm"],
          "runs:", fitted["first_round_cold"]["n"])
    if not check:
        PARAMS_PATH.write_text(json.dumps(fitted, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {PARAMS_PATH.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
