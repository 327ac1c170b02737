"""The serving model: what an engine serving a workload measures (TTFT, TPOT, e2e, throughput).

The roofline (``calc.roofline``, ``calc.parallel.parallel_step_arrays``) gives a lower bound on one
step. A serving engine adds four things, each a separate part of the estimate so that a page can show
where the time goes (``TimeBreakdown``: bound -> fixed -> efficiency -> interference -> queue):

1. **Fixed time** per step (scheduler, sampler, launch of the step), per sequence per step (the
   engine's bookkeeping, detokenising and streaming), per layer (kernel launches: with CUDA graphs a
   few microseconds each; eager mode adds ``eager_layer_extra_s``), per MoE layer (routing,
   dispatch and combine) and per multi-head latent attention layer (``mla_layer_fixed_s``: its latent path's
   extra kernels); an engine's ROCm build on AMD Instinct scales the device part (``rocm_fixed_scale.<engine>``).
   The issue's large MoE on 8 GPUs misses 7-9 ms per step on one engine.
2. **Efficiency**: each bound part divided by the utilisation the engine reaches in that phase:
   weights by ``mbu_weights``, the KV read by ``mbu_kv`` (the attention kernel), decode matmuls by
   ``mfu_decode`` (times ``grouped_gemm`` for a MoE's experts), prefill matmuls by ``mfu_prefill_<bits>``
   of their precision (16, 8 or 4 bits; a prompt's attention scores and values run at the precision of
   the KV cache, fp8 or bf16, not at the weights' fp4 or fp8: ``attention_extra_s``), collectives by ``comm_efficiency`` (``comm_efficiency_scale_out``
   when a replica spans servers, ``comm_efficiency_pcie`` when its GPUs meet over PCIe); matmuls whose weights are
   decoded inside the kernel (weight-only: MXFP4 on Hopper) reach ``weight_only_matmul`` of that. Unlike the bound, the
   estimate does not overlap the weight read with the matmuls: ``kv / mbu_kv + weights / mbu_w + compute / mfu +
   comm / eff``. A smooth maximum ``(a^q + b^q)^(1/q)`` of the two, fitted to the measurements, took q to 1 (the sum);
   the roofline's max (q infinite) fitted worse (69.9% against 71.0% of the rows within 25%).
3. **Batching interference** under continuous batching (Orca; vLLM's and SGLang's chunked prefill):
   in steady state each of the B running sequences turns over every O output tokens, so a decode step
   also carries ``f = (B - 1) / O`` other requests' prompts (their prefill tokens, chunked into the
   step's token budget). A share ``p_mix = min(f x I / chunk, 1)`` of the steps carries a chunk (``f x I /
   p_mix`` prompt tokens: weights read once, the experts those tokens reach, matmuls of decode and prefill
   tokens added) and the rest decode alone; ``mixed`` is the mean of the two steps' times, not the time of one
   mean step (the experts read is not linear in the tokens).
   Interference = mixed step - decode-only step: 0 at B = 1 (a request's own prefill
   is in its TTFT, not its TPOT) and falling as O grows. The issue's 70B sweep moved from 0.64 / 0.57
   of the measurement to 0.98 / 1.01 with this term. Under attention data parallelism the other ranks also
   wait for the one prefilling (``calc.serving_terms.attention_dp_imbalance_s``).
4. **Queueing** before the first token: with more clients than the engine's batch (its
   ``max_batch``, the KV capacity, or the token budget's steady state ``budget x O / (I + O)``) a
   request waits for a slot, ``e2e x (C - B) / B`` (Little's law on a closed loop); each prompt
   waits for the prefills ahead of it, an M/D/1 queue with service time s and load rho = X s:
   ``rho s / (2 (1 - rho))`` (Kleinrock, Queueing Systems vol. 1, 1975, the Pollaczek-Khinchine mean
   wait for deterministic service), where s is a prompt's marginal time (its matmuls, attention, KV
   writes and collectives: the engine batches waiting prompts into one step, so they share its weight
   read); and an arrival is admitted at the next iteration boundary, so it waits the mean residual of
   the step in flight, half a step, whenever another request keeps the engine stepping (a closed loop
   with C > 1; at a rate, with probability ``1 - exp(-B)``). At a request rate (an open loop), the
   batch B solves Little's law ``B = lambda x e2e(B)`` (bisection). Under attention data parallelism a
   new request also waits a fitted number of decode steps, each engine its own
   (``adp_prompt_wait_steps.<engine>``), before the ranks, which step together through every MoE layer,
   take its prompt (a notice says how many and where the number comes from).

Static batching (the course's pages; in-process benchmarks such as vLLM's benchmark_latency and
TensorRT-LLM's gptSessionBenchmark) prefills B prompts in one pass and decodes them together: no
interference, no per-request serving overhead, TTFT = the batch's prefill.

Every time is in seconds. Parameters: ``calc/data/serving_params.json`` (``calc.serving_params``),
fitted to published measurements by ``calc.serving_fit``; each estimate carries a low-high range
from the spread of the cross-validated errors, not a fixed percentage.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .checks import check_choice, check_positive_int, check_positive_number
from .hardware import Accelerator, get_accelerator, list_accelerators, match_accelerator_name
from .dtypes import MIXED_EXPERT_FORMATS, canonical_dtype
from .models import ModelConfig, beyond_trained_window, checkpoint_tag, get_model, model_preset_id
from .number_text import fmt_number
from .gpu_share import max_batch_per_replica, state_pool_batch, weight_bytes_per_gpu
from .measurements import engine_name
from .memory import with_capacity
from .layout import Layout, make_layout
from .parallel import parallel_step_arrays
from .speculative_serving import speculative_settings
from .serving_tails import TAIL_METRICS, output_quantile_ratio, point_values, run_quantile_s
from .serving_terms import (LENGTHS, SOFTWARE_LATEST_DAY, SOFTWARE_LATEST_RELEASE, SOFTWARE_LATEST_YEAR, arrivals_text, decimal_year,
                            first_release, release_on, version_day,
                            attention_dp_imbalance_s, attention_extra_s, burst_admission_context, burst_schedule,
                            burst_share, engine_matmul,
                            closer_to_peak, dequantized_in_kernel, eager_prefill, finite_run_tail_s, finite_run_waves,
                            groups_later_rounds, lockstep_recompute_tokens, MULTI_STEP_NOT_TAKEN, multi_step_steps,
                            over_pcie, overlap_fixed_s, speculative_schedule,
                            overlaps_schedule, release_number, release_year, software_factor, spans_domains,
                            unquantized_matmul_extra_s, burst_cold_start_s, slot_wait_s, with_cold_start)
from .serving_params import (mlperf_benchmark_models, mlperf_latency_limits, mlperf_scenario, accelerator_notice,
                             architecture_notice, device_family, engine_costs, engine_settings, error_quantiles,
                             family_factors, load_serving_params, matmul_scale, on_rocm, param_values,
                             platform_notice, cold_start_s, speculative_batch_limit, thin_traits)

#: Batching disciplines the model knows.
BATCHING = ("continuous", "static")


@dataclass(frozen=True)
class TimeBreakdown:
    """Where the time of one latency (TTFT or TPOT) goes, in seconds; the parts add up to ``estimate_s``.

    Fields:
        weights_s, kv_s, compute_s, comm_s: the lower bound's parts (compute_s is the compute time in
            excess of the weight read, ``max(0, compute - weights)``, so the four add up to ``bound_s``).
        bound_s: the roofline lower bound (``calc.roofline`` / ``calc.parallel``).
        fixed_s: fixed time per step, per sequence, per layer and per request.
        efficiency_s: the bound's parts divided by the utilisations, the weight read and the matmuls added (the bound
            overlaps them, the estimate does not), less the bound.
        interference_s: other requests' prefill in the same steps (continuous batching).
        queue_s: waiting before the first token (TTFT only; 0 for TPOT).
        estimate_s: the sum of the parts above.
        low_s, high_s: the range from the cross-validated error spread (``low_s <= estimate_s <= high_s``), its low
            end never below ``bound_s`` (no engine beats the roofline's lower bound).
        fixed_parts: ``fixed_s`` split, as (key of ``FIXED_PARTS``, seconds) pairs in that order, adding up to
            ``fixed_s``; () where the estimate was built without them.
        draft_s: speculative decoding's draft passes (TPOT: k per round, over the acceptance length; TTFT: the
            draft's pass over the prompt), ``calc.speculative_serving``; 0 for plain decoding. Under speculative
            decoding every TPOT part is the round's over the acceptance length.
    """

    weights_s: float
    kv_s: float
    compute_s: float
    comm_s: float
    bound_s: float
    fixed_s: float
    efficiency_s: float
    interference_s: float
    queue_s: float
    estimate_s: float
    low_s: float
    high_s: float
    fixed_parts: tuple = ()
    draft_s: float = 0.0

    def parts(self) -> dict:
        """The parts in the order of the breakdown (they add up to ``estimate_s``); the speculative draft's only
        where there is one."""
        out = {"weights": self.weights_s, "KV cache": self.kv_s, "compute": self.compute_s,
               "communication": self.comm_s, "fixed costs (per step, per request)": self.fixed_s,
               "efficiency": self.efficiency_s, "batching interference": self.interference_s}
        if self.draft_s:
            out["speculative draft"] = self.draft_s
        out["queueing"] = self.queue_s
        return out


#: The parts of the fixed cost (``TimeBreakdown.fixed_parts``, ``combine``'s ``tpot_fixed_<key>`` and
#: ``ttft_fixed_<key>``), in words.
FIXED_PARTS = {"host": "host work per step (scheduler, sampler, each sequence's output) not hidden behind the GPU",
               "layers": "kernel launches per layer",
               "moe": "MoE routing, dispatch and combine per MoE layer",
               "mla": "latent attention (MLA) layers' extra kernels",
               "prompt_launch": "launches of the steps that carry prompt tokens (outside the decode CUDA graphs)",
               "request": "per request: HTTP, tokenising, admission (MoE models: also per MoE layer and GPU)",
               "first_round": "the first round's cold start after the warm-up (the engines' ROCm builds), over the run"}


#: What caps the decode batch below the requests in flight, in words, by ``ServingEstimate.batch_limit`` (the
#: limits that can hold requests waiting; "concurrency" and "rate" are the load itself).
BATCH_LIMIT_WHY = {"kv_capacity": "its KV cache, at the share of GPU memory the engine gives it, holds no more",
                   "max_batch": "the engine's max batch setting allows no more",
                   "token_budget": "the engine's per-step token budget allows no more",
                   "state_pool": "its pool of Mamba / linear-attention states, at the share of the cache memory the "
                                 "engine gives it, has no more slots"}


@dataclass(frozen=True)
class ServingEstimate:
    """The serving model's prediction for one engine, layout and workload.

    Fields:
        ttft, tpot: ``TimeBreakdown`` of the time to first token and the time per output token
            (= mean inter-token latency, vLLM's TPOT: (e2e - TTFT) / (O - 1)).
        e2e_s, e2e_low_s, e2e_high_s: request latency TTFT + (O - 1) TPOT, and its range.
        output_tokens_per_s: output tokens per second of the whole deployment (all replicas).
        output_tokens_per_s_per_gpu, per_gpu_low, per_gpu_high: the same per accelerator, with range.
        tokens_per_s_per_user: 1 / TPOT (InferenceX's "interactivity").
        requests_per_s: completed requests per second, whole deployment.
        bound_tpot_s, bound_ttft_s, bound_output_tokens_per_s_per_gpu: the lower bound's values at the
            same batch (the teaching numbers; throughput is then an upper bound).
        decode_batch: sequences decoding at once per replica (B); concurrency: requests in the system
            per replica; batch_limit: what caps B ("concurrency", "max_batch", "kv_capacity",
            "state_pool" (a hybrid's Mamba / linear-attention state pool, SGLang's), "token_budget", "rate").
        engine: the engine family whose parameters were used; mode: "concurrency", "rate" or "offline";
        batching: "continuous" or "static"; notices: fallbacks taken (show them beside the numbers);
        arrivals: how a closed loop's requests arrive, in words (``calc.serving_terms.arrivals_text``: the
            steady state, lockstep waves of fixed lengths, rounds); "" for a rate or an offline run.
        speculative: speculative decoding's convention in words (draft method and tokens, acceptance length and
            its source, ``calc.speculative_serving.speculative_settings``); "" for plain decoding.
        itl_s: the mean gap between two streamed chunks, one decode step (a verification round under speculative
            decoding, AL tokens; TPOT otherwise; N steps under multi-step scheduling, which streams N steps' tokens
            at once), as vllm bench serve's mean ITL counts it. SGLang's ``sglang.bench_serving`` (native backend)
            books a chunk of n tokens as n gaps of 1/n of its wait, so its ITL is TPOT's (``tpot.estimate_s``;
            ``calc.measurements.itl_per_token``).
        itl_median_s: the median of those gaps (vllm bench serve's median ITL): a step that decodes alone where
            fewer than half of the decode steps carry prompt tokens, else ``itl_s``.
        ttft_p99_s, tpot_p99_s, itl_p99_s, e2e_p99_s: the 99th percentiles of the run's requests (of its gaps for
            the ITL), each from its own mechanism (``calc.serving_tails``; a run tuned to latency limits: its means
            times the tuned runs' p99 over their mean, under the limits); NaN where not estimated (static
            batching; an offline run's TTFT and end-to-end time, which grow with its number of requests).
        tail_words: the conventions the percentiles follow, in words ("" without them).
    """

    ttft: TimeBreakdown
    tpot: TimeBreakdown
    e2e_s: float
    e2e_low_s: float
    e2e_high_s: float
    output_tokens_per_s: float
    output_tokens_per_s_per_gpu: float
    per_gpu_low: float
    per_gpu_high: float
    tokens_per_s_per_user: float
    requests_per_s: float
    bound_tpot_s: float
    bound_ttft_s: float
    bound_output_tokens_per_s_per_gpu: float
    decode_batch: float
    concurrency: float
    batch_limit: str
    engine: str
    mode: str
    batching: str
    notices: tuple = field(default=())
    arrivals: str = ""
    speculative: str = ""
    itl_s: float = math.nan
    itl_median_s: float = math.nan
    ttft_p99_s: float = math.nan
    tpot_p99_s: float = math.nan
    itl_p99_s: float = math.nan
    e2e_p99_s: float = math.nan
    tail_words: str = ""


# == Stage 1: the bound's parts (independent of the fitted parameters) ==========================

def _compute_bits(accelerator: Accelerator, weight_dtype: str) -> int:
    """16, 8 or 4: the width of the precision the matmuls run in (``Accelerator.matmul_precision``)."""
    dtype = accelerator.matmul_precision(weight_dtype)[0]
    return 8 if dtype in ("fp8", "int8") else 4 if dtype in ("fp4", "int4") else 16


def serving_components(model: ModelConfig, accelerator: Accelerator, input_len: int, output_len: int,
                       concurrency, layout: Layout, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                       settings: dict | None = None, interconnect=None, batching: str = "continuous",
                       rate: bool = False, matmul_scale: float = 1.0, burst: bool = False,
                       grouped: bool = False) -> dict:
    """The roofline parts the serving model combines, for an array of concurrencies per replica.

    Params-independent (the fit computes them once per measurement). ``concurrency``: requests in the
    system per replica (float array; for ``rate=True`` the decode batch itself). Decode at the mean
    context ``I + O / 2`` (sequences in flight are spread evenly over their output); the prompt's
    prefill with logits for its last token only (engines); capacity from ``max_batch_per_replica`` at
    that context with ``1 - kv_memory_fraction`` of memory held back (paged KV: a sequence holds
    what it has written), of the memory the driver reports (``calc.memory.with_capacity``, "driver": engines
    size their cache from cudaMemGetInfo, 85.5e9 B on an H100 "80 GB"); with the settings' ``state_pool_ratio`` r
    (SGLang's mamba_full_memory_ratio) a hybrid's Mamba / linear-attention states take r / (1 + r) of the memory
    left for caches, the KV the rest, and the pool's slots over ``state_slots_per_request`` cap the batch
    (``calc.gpu_share.state_pool_batch``: batch_limit "state_pool"). ``matmul_scale``: the accelerator's matmul ceiling over the reference's
    (``calc.serving_params.matmul_scale``), stored as ``mm`` for stage 2. ``burst``: ``concurrency`` is a
    finite burst of N requests sent at once (continuous batching; ``burst_schedule``): the prompts are
    prefilled up front, the batch is ``min(N, max_batch, KV capacity at I + O)`` (not the token budget's
    steady state), and ``f``, ``n_chunks`` and ``pf_n`` are the burst's means. ``grouped``: the steady state of a
    lockstep closed loop's later rounds on an engine that prefills each returning group together
    (``calc.serving_terms.groups_later_rounds``): ``pf_n`` is the group, min(B, floor(token budget / I)) prompts
    prefilled in one step before any of their first tokens, and ``combine`` counts no queue of random arrivals.
    ``settings["reserve_full_sequence"]``
    (TensorRT-LLM: its capacity scheduler's default policy ``GUARANTEED_NO_EVICT`` admits a request only when
    blocks for its prompt and all its ``max_new_tokens`` are free, so a request is never paused; trtllm-bench
    throughput's ``--scheduler_policy`` defaults to it, tensorrt_llm/bench/benchmark/throughput.py at commit
    000a01de66f0eab4ab05640711f0253f50f5209c): the KV capacity is counted at ``I + O`` tokens per sequence,
    not at the mean context ``I + O / 2`` of a paged cache that grows as it writes (vLLM, SGLang).
    ``settings["spec_tokens"]`` k, ``settings["spec_al"]`` AL and ``settings["spec_share"]`` (speculative decoding,
    ``calc.speculative_serving.speculative_settings``): the decode step verifies k + 1 tokens per sequence, a
    request's O tokens take O / AL steps (so f, the token budget's cap and a burst's schedule count steps), and
    the draft's parts per pass are returned (d_w_s, d_c_s: the draft's share of a one-token step's weights and
    matmuls; d_kv_s, d_comm_s: one layer's share of its cache reads and collectives; pf_d_w_s, pf_d_c_s: its pass
    over the prompt), with spec_k and spec_al; zeros and k = 0, AL = 1 for plain decoding.
    ``settings["per_rank_limits"]`` (TensorRT-LLM, vLLM: each attention-DP rank runs its own scheduler;
    "--max_batch_size: Max batch size in each rank", TensorRT-LLM docs/source/blogs/
    Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md): ``max_batch`` counts per rank, so a replica of D
    attention-DP ranks holds up to D x max_batch sequences; without it (SGLang, whose --max-running-requests is the
    server's) max_batch is the replica's.
    ``settings["sliding"]``: "cap" (default: a sliding-window layer holds and reads its window) or "full" (every
    token cached and read: TensorRT-LLM's TensorRT engines keep a cyclic window only when the run sets
    ``max_attention_window_size``, docs/source/advanced/gpt-attention.md, "Sliding Window Attention, Cyclic
    (Rolling Buffer) KV Cache"; trtllm-bench sets none).

    Returns:
        dict of arrays: B (the decode batch), N (requests in service: B, or more where an engine that
        preempts admits more than its cache decodes at once), C, limit, and the bound's parts: decode w_s, kv_s, c_s, comm_s; mixed-step
        weights wmix_s (a step that carries prompt tokens) and p_mix (the share of decode steps that do); one
        prompt's pf_w_s, pf_kv_s, pf_c_s, pf_comm_s and pf_attn_s (its attention at
        the KV cache's precision beyond what the bound charged, ``attention_extra_s``); f (prompts per step),
        n_chunks, pf_n (prompts prefilled before a request's first token, its own included), burst, overlap (1 where
        ``settings["overlap_schedule"]``: the engine prepares the next step on the host while the GPU runs this
        one, ``calc.serving_terms.overlap_fixed_s``), adp_timeout and adp_ranks (``settings["adp_balance_timeout_iters"]``,
        default 0, and the layout's attention-DP ranks: TensorRT-LLM's attention-DP balance), recv_interval (``settings["recv_interval"]``, default 1: the
        engine takes in new requests every that many steps, SGLang's ``--scheduler-recv-interval``), sched_steps
        (``settings["scheduler_steps"]``, default 1: decode steps per scheduler call, vLLM V0's multi-step
        scheduling, ``calc.serving_terms.multi_step_steps``), and the
        model's n_layers, n_moe_layers, n_mla_layers (its layers of multi-head latent attention), is_moe, bits,
        gpus, pp (the layout's pipeline stages), I, O, mm, static, scale_out, pcie, and wo (1 where
        the weights are decoded inside the matmul kernel, ``calc.serving_terms.dequantized_in_kernel``), dp_wait_s and
        dp_alone_s (attention DP: the wait for the rank that prefills, per mixed step and for a prompt alone, at
        the matmul peak, ``calc.serving_terms.attention_dp_imbalance_s``), and for a burst on an engine that
        preempts (vLLM, SGLang: not ``reserve_full_sequence``) whole_seqs (the sequences of I + O tokens its cache
        holds; 0 otherwise), recompute_tokens (per request, ``calc.serving_terms.lockstep_recompute_tokens``: the
        burst's requests grow together, so past whole_seqs of them the engine pauses and later prefills the rest
        again) and f_recompute (those tokens in prompts of I per decode step, B x r / (I x O / AL); ``combine`` adds
        their prompt work to the step, in TPOT's interference part).

    Raises:
        ValueError: a layout, dtype or length the bound rejects; a model that does not fit.
    """
    s = settings or {"max_batch": 1024, "token_budget": 8192, "kv_memory_fraction": 0.9}
    i, o = float(input_len), float(output_len)
    # speculative decoding (``calc.speculative_serving``): k drafts per sequence per round, verified in one step of
    # k + 1 tokens per sequence; a request's O tokens take O / AL rounds (AL: the acceptance length)
    k_spec = int(s.get("spec_tokens", 0))
    al = float(s.get("spec_al", 1.0)) if k_spec else 1.0
    per_seq = float(k_spec + 1)
    o_steps = o / al
    c = np.atleast_1d(np.asarray(concurrency, dtype=float))
    ctx = int(round(i + o / 2.0))
    # engines size their cache from the memory the driver reports (vLLM's gpu_memory_utilization and
    # TensorRT-LLM's free_gpu_memory_fraction are shares of cudaMemGetInfo's total or free bytes): an H100
    # "80 GB" holds 85.5e9 B (``calc.memory.capacity_bytes``, "driver")
    held = with_capacity(accelerator, "driver")
    reserve = held.memory_bytes * (1.0 - s["kv_memory_fraction"])
    burst = bool(burst) and batching == "continuous"
    # an engine that admits a request only with cache for its whole sequence reserved (TensorRT-LLM's
    # GUARANTEED_NO_EVICT) holds I + O tokens per running sequence, not the I + O / 2 it has written
    reserve_all = bool(s.get("reserve_full_sequence", False))
    # an engine that admits a request by what it needs now and pauses (preempts) running ones when the cache runs
    # out (vLLM, SGLang: ``preempts``) holds, on average, the mean context of each sequence it decodes
    preempts = batching == "continuous" and not reserve_all
    kv_ctx = ctx if preempts else int(i + o)
    # sliding-window layers keep their window ("cap") unless the engine caches every token ("full": TensorRT-LLM's
    # TensorRT engines keep a cyclic window only when max_attention_window_size is set)
    sliding = s.get("sliding", "cap")
    # an engine that keeps a hybrid model's Mamba / linear-attention states in a pool of their own (SGLang:
    # ``state_pool_ratio``, its mamba_full_memory_ratio) gives the attention KV the rest of the cache memory, and runs
    # no more requests than that pool's slots over ``state_slots_per_request`` (``calc.gpu_share.state_pool_batch``)
    ratio = float(s.get("state_pool_ratio", 0.0))
    share = ratio / (1.0 + ratio)
    cache_kw = dict(sliding=sliding, state_share=share)
    b_kv = max_batch_per_replica(model, held, kv_ctx, layout, weight_dtype, kv_dtype, reserve, **cache_kw)
    if b_kv < 1:
        what = "its mean context" if kv_ctx < int(i + o) else "its prompt and output"
        raise ValueError(f"{model.name} in {weight_dtype} with one sequence of {kv_ctx:,} tokens ({what}) does not "
                         f"fit in the {s['kv_memory_fraction']:.0%} of {accelerator.name}'s memory (as its driver reports "
                         f"it) that the engine gives weights and cache under {layout.label}: shorten the prompt or "
                         "the output, quantize the weights or the cache, or spread the model over more GPUs.")
    # an engine whose attention-DP ranks each run their own scheduler (TensorRT-LLM, vLLM) holds max_batch sequences
    # per rank, so a replica of D attention groups holds D x max_batch
    ranks = float(layout.attention_dp) if s.get("per_rank_limits", False) else 1.0
    caps = {"max_batch": float(s["max_batch"]) * ranks, "kv_capacity": float(b_kv)}
    pool = state_pool_batch(model, held, layout, weight_dtype, kv_dtype, reserve, share,
                            int(s.get("state_slots_per_request", 1))) if share > 0 else None
    if pool is not None:
        caps["state_pool"] = float(max(pool, 1))
    if preempts:
        # admission by the cache a request needs now (``burst_admission_context``: vLLM blocks for its prompt,
        # SGLang its prompt and a reserve for output; in the steady state at most the mean context): more
        # requests can be in service than the cache decodes at once; the rest wait paused (preempted, then
        # recomputed), which stretches every request's TPOT by N / B rather than queueing new ones for a slot
        admit_ctx = burst_admission_context(i, o, s.get("admit_output_ratio", 0.0), s.get("admit_output_clip", o))
        admit_ctx = admit_ctx if burst else min(admit_ctx, kv_ctx)
        caps["kv_capacity"] = float(max_batch_per_replica(model, held, admit_ctx, layout, weight_dtype, kv_dtype,
                                                          reserve, **cache_kw))
    if batching == "continuous" and not burst:
        caps["token_budget"] = max(1.0, np.floor(s["token_budget"] * o_steps / (i + per_seq * o_steps)))
    cap_name = min(caps, key=caps.get)
    cap = caps[cap_name]
    n_in = np.minimum(c, cap)
    b = np.minimum(n_in, float(b_kv)) if preempts else n_in
    # a burst's requests grow together, so an engine that preempts runs out of cache once N x (I + O) passes it
    whole = float(max_batch_per_replica(model, held, int(i + o), layout, weight_dtype, kv_dtype, reserve,
                                        **cache_kw)) if preempts and burst else 0.0
    recompute = lockstep_recompute_tokens(n_in, whole, i + o)  # none where whole is 0 (no burst, or no preemption)
    limit = np.where(c <= cap, "rate" if rate else "concurrency", cap_name)
    limit = np.where(b < n_in, "kv_capacity", limit)
    dec = parallel_step_arrays(model, accelerator, b, ctx, layout, weight_dtype, kv_dtype, k_spec + 1, interconnect,
                               sliding=sliding)
    f = (b - 1.0) / o_steps if batching == "continuous" else np.zeros_like(b)
    if batching == "continuous":
        pf = parallel_step_arrays(model, accelerator, 1, int(i), layout, weight_dtype, kv_dtype, int(i), interconnect,
                                  sliding=sliding, prefill=True, logits="last")
        pf = {k: np.full_like(b, float(pf[k])) for k in ("weights_s", "kv_s", "compute_s", "comm_s")}
        budget_left = np.maximum(s["token_budget"] - (b - 1.0) * per_seq, 1.0)
        n_chunks = np.ceil(i / budget_left)
        pf_n = np.ones_like(b)
        if grouped and not burst:
            pf_n = np.minimum(b, max(np.floor(float(s["token_budget"]) / float(i)), 1.0))
        if burst:
            f, n_chunks, pf_n = burst_schedule(b, i, o_steps, s["token_budget"])
    else:  # static: the batch's B prompts in one pass
        pf_n = np.ones_like(b)
        pf = parallel_step_arrays(model, accelerator, b, int(i), layout, weight_dtype, kv_dtype, int(i), interconnect,
                                  sliding=sliding, prefill=True, logits="last")
        n_chunks = np.ones_like(b)
    if batching == "continuous":
        # the prompt tokens a step that carries some holds: a chunk of up to the token budget left beside the
        # batch (steady state), or a burst's prefill step of B x I / K tokens (``burst_schedule``). So a share
        # p_mix = min(f x I / chunk, 1) of the decode steps carries prompt tokens, f x I / p_mix of them, and the
        # rest decode alone (``combine`` takes the mean of the two steps' times)
        chunk = b * i / np.maximum(np.ceil(b * i / s["token_budget"]), 1.0) if burst \
            else np.minimum(i, np.maximum(s["token_budget"] - (b - 1.0) * per_seq, 1.0))
        p_mix = np.where(f > 0, np.minimum(f * i / chunk, 1.0), 0.0)
        extra = np.where(p_mix > 0, f * i / np.maximum(p_mix, 1e-12), 0.0)
    else:
        p_mix = np.zeros_like(b)
        extra = np.zeros_like(b)
    if model.is_moe and batching == "continuous":
        # the experts a step carrying prompt tokens reads: those of its B + f x I / p_mix tokens (a prompt's
        # chunk reaches nearly every expert), not those of B + f x I tokens spread over every step
        wmix = parallel_step_arrays(model, accelerator, b * per_seq + extra, ctx, layout, weight_dtype, kv_dtype, 1,
                                    interconnect, sliding=sliding)["weights_s"]
    else:
        wmix = dec["weights_s"]
    n_moe = sum(1 for k in model.ffn_kinds if k == "moe")
    pf_attn = (attention_extra_s(model, accelerator, i, layout, weight_dtype, kv_dtype)
               + unquantized_matmul_extra_s(model, accelerator, i, 1.0, layout, weight_dtype)) \
        * (b if batching == "static" else 1.0)
    c_x = unquantized_matmul_extra_s(model, accelerator, b * per_seq, b * per_seq, layout, weight_dtype)
    # a draft pass (``calc.speculative_serving.draft_cost``): its share of a one-token decode step's weights and
    # matmuls, and one layer's share of its cache reads and collectives; k of them per round
    spec = {key: np.zeros_like(b) for key in ("d_w_s", "d_c_s", "d_kv_s", "d_comm_s", "pf_d_w_s", "pf_d_c_s")}
    if k_spec:
        one = parallel_step_arrays(model, accelerator, b, ctx, layout, weight_dtype, kv_dtype, 1, interconnect,
                                   sliding=sliding)
        share, layer = float(s["spec_share"]), 1.0 / model.n_layers
        spec = {"d_w_s": share * one["weights_s"], "d_c_s": share * one["compute_s"], "d_kv_s": layer * one["kv_s"],
                "d_comm_s": layer * one["comm_s"], "pf_d_w_s": share * pf["weights_s"],
                "pf_d_c_s": share * pf["compute_s"]}
    # attention DP: the ranks wait for the one prefilling (per step, and for a prompt's own prefill alone)
    dp_wait = attention_dp_imbalance_s(model, accelerator, i, layout, weight_dtype, f) \
        if batching == "continuous" else np.zeros_like(b)
    dp_alone = attention_dp_imbalance_s(model, accelerator, i, layout, weight_dtype, np.ones_like(b)) \
        if batching == "continuous" else np.zeros_like(b)
    # the recomputed tokens in prompts of I per decode step: the run's N x r over its O / AL steps of B at a time
    f_re = b * recompute / (i * o_steps)
    return dict(pf_attn_s=np.broadcast_to(np.asarray(pf_attn, dtype=float), b.shape).copy(), c_x_s=c_x, B=b, N=n_in, C=c, limit=limit, w_s=dec["weights_s"], kv_s=dec["kv_s"], c_s=dec["compute_s"],
                f_recompute=np.asarray(f_re, dtype=float), recompute_tokens=np.asarray(recompute, dtype=float),
                whole_seqs=np.full_like(b, whole),
                comm_s=dec["comm_s"], wmix_s=np.asarray(wmix, dtype=float), p_mix=np.asarray(p_mix, dtype=float), pf_w_s=pf["weights_s"],
                pf_kv_s=pf["kv_s"], pf_c_s=pf["compute_s"], pf_comm_s=pf["comm_s"], f=f, n_chunks=n_chunks,
                pf_n=pf_n, burst=np.full_like(b, 1.0 if burst else 0.0),
                grouped=np.full_like(b, 1.0 if grouped and not burst and batching == "continuous" else 0.0),
                n_layers=np.full_like(b, model.n_layers), n_moe_layers=np.full_like(b, n_moe),
                n_mla_layers=np.full_like(b, model.n_layers if model.attention == "mla" else 0),
                is_moe=np.full_like(b, 1.0 if model.is_moe else 0.0),
                bits=np.full_like(b, _compute_bits(accelerator, weight_dtype)),
                gpus=np.full_like(b, layout.gpus_per_replica), pp=np.full_like(b, float(layout.pp)),
                I=np.full_like(b, i), O=np.full_like(b, o),
                static=np.full_like(b, 0.0 if batching == "continuous" else 1.0), mm=np.full_like(b, matmul_scale),
                family=np.full_like(b, float(s.get("device_family", 0))),
                scale_out=np.full_like(b, 1.0 if spans_domains(accelerator, layout, interconnect) else 0.0),
                pcie=np.full_like(b, 1.0 if over_pcie(accelerator, layout, interconnect) else 0.0),
                wo=np.full_like(b, 1.0 if dequantized_in_kernel(accelerator, weight_dtype) else 0.0),
                overlap=np.full_like(b, 1.0 if s.get("overlap_schedule", False) else 0.0),
                eager_pf=np.full_like(b, 1.0 if s.get("eager_prefill", True) and batching == "continuous" else 0.0),
                recv_interval=np.full_like(b, float(s.get("recv_interval", 1))),
                sched_steps=np.full_like(b, float(s.get("scheduler_steps", 1))),
                adp_timeout=np.full_like(b, float(s.get("adp_balance_timeout_iters", 0))),
                adp_ranks=np.full_like(b, float(layout.attention_dp)),
                year=np.full_like(b, float(s.get("release_year", math.nan))),
                dp_wait_s=np.asarray(dp_wait, dtype=float), dp_alone_s=np.asarray(dp_alone, dtype=float),
                spec_k=np.full_like(b, float(k_spec)), spec_al=np.full_like(b, al),
                **{key: np.broadcast_to(np.asarray(v, dtype=float), b.shape).copy() for key, v in spec.items()})


# == Stage 2: the estimate from the parts and the parameters =====================================

def _read_and_matmuls(read_s, matmul_s, overlap=0.0):
    """A step's weight read and its matmuls, each already at its utilisation (seconds; arrays broadcast): their
    sum, since an engine's kernels read and multiply one after the other (the estimate; fitted: a smooth maximum
    ``(a^q + b^q)^(1/q)`` of the two took q to 1 on calc/data/serving_measurements.csv), or their max where
    ``overlap`` is 1 (the roofline's overlap rule, inference course week 11 step 4, which the estimate before the
    serving model kept: ``calc.serving_fit.old_estimate_rows``)."""
    read_s, matmul_s = np.asarray(read_s, dtype=float), np.asarray(matmul_s, dtype=float)
    return np.where(np.asarray(overlap) > 0, np.maximum(read_s, matmul_s), read_s + matmul_s)


def combine(comp: dict, p: dict, costs: dict, graphs=1.0, rate_per_s=None) -> dict:
    """TTFT, TPOT and throughput per replica from ``serving_components`` and parameter values ``p``
    (``calc.serving_params.param_values``); every input broadcasts (rows of a fit, points of a sweep).

    ``costs``: the engine's fixed times (``calc.serving_params.engine_costs``: per step "step", per
    sequence per step "seq", per MoE layer per step "moe", per layer and per MoE layer of a step that carries prompt
    tokens "prefill" and "prefill_moe", per MoE layer and GPU once per request "request_moe", 0 when absent; the
    factor of its ROCm build on a decode step's device fixed costs on AMD Instinct "rocm", 1 when absent; scalars or
    arrays); ``graphs``: 1 with CUDA graphs, 0 eager.
    ``rate_per_s``: requests per second per replica for an open loop (then no slot wait; the M/D/1
    load is the rate), else None (closed loop: the load is the throughput the clients make).
    Under speculative decoding (``comp["spec_k"]`` k > 0, ``comp["spec_al"]`` AL) a decode step is a round, k draft
    passes then the verify step, and every TPOT part is the round's over AL, the draft's passes in a part of their
    own (``tpot_draft``; ``ttft_draft``: the draft's pass over the prompt); ``round_s`` is one step (a round), the
    unit of the waits for a step and a benchmark's ITL, and ``spec_al`` AL (1 for plain decoding).
    ``comp["year"]``, the engine release's date (nan: the reference year), sets the software factor
    (``calc.serving_terms.software_factor``) that scales the decode step's fixed costs and its utilisations'
    shortfalls.

    Returns:
        dict of arrays: the TTFT and TPOT parts (``ttft_<part>``, ``tpot_<part>`` with parts weights,
        kv, compute, comm, bound, fixed, efficiency, interference, queue, estimate; and the fixed cost's parts,
        ``tpot_fixed_<key>``, ``ttft_fixed_<key>`` for each key of ``FIXED_PARTS``, adding up to it), e2e_s,
        requests_per_s, output_tokens_per_s (per replica), bound_tpot_s, bound_ttft_s, ttft_adp_wait_s (the
        attention-DP wait inside TTFT's queue part, 0 without attention DP), prompt_s (one prompt's marginal time,
        the service time of the queue of prompts: its matmuls, attention, cache writes and collectives over the
        PP stages, not the weights a step reads anyway), itl_mean_s and itl_median_s (the
        mean and the median gap between streamed chunks, a benchmark's ITL: N decode steps apart under multi-step
        scheduling; the median a step that decodes alone where most steps carry no prompt tokens), and for the
        percentiles of ``calc.serving_tails``: itl_alone_s and itl_prompt_s (the gap of a step that decodes alone and
        of one that carries prompt tokens), ttft_request_s (the request's own overhead), ttft_step_wait_s and
        ttft_md1_s (TTFT's random waits: for the step in flight, with the attention-DP balance, and behind other
        prompts) and ttft_rho (that queue's load).
    """
    g = comp
    b, f, n = g["B"], g["f"], g["n_chunks"]
    mbu_w, mbu_kv = p["mbu_weights"], p["mbu_kv"]
    ce = np.where(g["scale_out"] > 0, p["comm_efficiency_scale_out"],
                  np.where(g["pcie"] > 0, p["comm_efficiency_pcie"], p["comm_efficiency"]))
    pf_bits = np.where(g["bits"] == 8, p["mfu_prefill_8"], np.where(g["bits"] == 4, p["mfu_prefill_4"], p["mfu_prefill_16"]))
    # decode matmuls lose to their precision what prefill's do (fp8 and fp4 engines reach less of their peak)
    # weights decoded to bf16 inside the kernel (weight-only: MXFP4 on Hopper) reach less of bf16's peak
    wq = np.where(g.get("wo", 0.0) > 0, p["weight_only_matmul"], 1.0)
    mfu_d = np.minimum(p["mfu_decode"] * g["mm"] * pf_bits / p["mfu_prefill_16"], 1.0) \
        * np.where(g["is_moe"] > 0, p["grouped_gemm"], 1.0) * wq
    # a mixture of experts multiplies a prompt's tokens in grouped GEMMs of a few hundred rows per expert
    mfu_pf = np.minimum(g["mm"] * pf_bits, 1.0) * wq * np.where(g["is_moe"] > 0, p["moe_prefill_matmul"], 1.0)
    # a later release decodes closer to the roofline: its decode-step fixed costs and decode utilisation shortfalls
    # scaled by the software factor of its release date (``software_factor``; 1 at the reference year). Prompt
    # steps keep theirs: compute-bound GEMMs gain little, and the TTFT of newer releases shows no trend
    soft = software_factor(g.get("year", math.nan), p["software_gain_per_year"])
    # the accelerator family's memory system and short-kernel speed beside the reference's (``family_factors``)
    fam_bw, fam_fixed = family_factors(p, g.get("family", 0.0))
    mbu_w, mbu_kv = np.minimum(mbu_w * fam_bw, 1.0), np.minimum(mbu_kv * fam_bw, 1.0)
    mbu_w, mbu_kv = closer_to_peak(mbu_w, soft), closer_to_peak(mbu_kv, soft)
    mfu_d = closer_to_peak(mfu_d, soft)
    costs = dict(costs, **{k: costs[k] * soft for k in ("step", "seq", "moe")})
    per_layer = (p["layer_fixed_s"] + (1.0 - graphs) * p["eager_layer_extra_s"]) * soft
    # TPOT: decode step at B, plus f other prompts mixed in
    w, kv, c, cm = g["w_s"], g["kv_s"], g["c_s"], g["comm_s"]
    bound = kv + np.maximum(w, c) + cm
    cx = c + g.get("c_x_s", 0.0)  # decode matmuls with those the checkpoint leaves in bf16
    # an engine's step reads its weights and runs its matmuls one after the other, not overlapped: the estimate
    # adds the two times where the bound takes their max (the roofline). Fitted to calc/data/serving_measurements.csv,
    # a smooth maximum (a^q + b^q)^(1/q) of the two took its exponent to q = 1, the sum: within 25% on 71.0% of the
    # rows against 69.9% with the max, and utilisations nearer the kernels' own (weight read 0.93 of the bandwidth)
    ov = g.get("overlap_read", 0.0)  # 1: the roofline's overlap (the "before" estimate of calc.serving_fit)
    dec = kv / mbu_kv + _read_and_matmuls(w / mbu_w, cx / mfu_d, ov) + cm / ce
    pc_x = g["pf_c_s"] + g["pf_attn_s"]  # a prompt's matmuls, its attention at the cache's precision, bf16 layers
    # a share p_mix of the decode steps carries the prompt tokens (f x I per step on average, f x I / p_mix in each
    # of those) and the rest decode alone: TPOT is the mean of the two steps' times, not the time of a mean step,
    # since the expert weights read is not linear in the tokens (Jensen's
    # inequality; Agrawal et al., Sarathi-Serve, OSDI 2024, section 3: a prefill chunk in a decode batch makes
    # that iteration compute-bound). With every step carrying prompt tokens (p_mix 1) it is the mean step.
    p_mix = g.get("p_mix", np.ones_like(b))
    f_in = np.where(p_mix > 0, f / np.maximum(p_mix, 1e-12), 0.0)
    # pipeline parallelism: the prompt tokens of a step ride its micro-batches through the stages, each stage
    # multiplying its own layers while the others work on other micro-batches, so a step's cycle grows by a
    # prompt's time over the PP stages (the prompt's own time, stage after stage, is its latency: TTFT keeps it).
    # ``calc.parallel.parallel_step_arrays`` times a prompt alone (one micro-batch through every stage), so its
    # parts are divided here. Checked on MLPerf Inference v5.1 Offline, Llama-3.1-405B (9,429-token prompts) at
    # PP2: measured / estimated 1.8x before, on every system with PP2, and 0.87x on the one without (B300, PP1)
    stages = g.get("pp", 1.0)
    mixed = (kv + f * g["pf_kv_s"] / stages) / mbu_kv + (1.0 - p_mix) * _read_and_matmuls(w / mbu_w, cx / mfu_d, ov) \
        + p_mix * _read_and_matmuls(g["wmix_s"] / mbu_w, cx / mfu_d + f_in * pc_x / stages / mfu_pf, ov) \
        + (cm + f * g["pf_comm_s"] / stages) / ce + g.get("dp_wait_s", 0.0) * costs.get("adp_wait", 1.0) / mfu_pf
    # a lockstep burst on an engine that preempts recomputes the contexts of the requests it paused
    # (``lockstep_recompute_tokens``): their prompt work, without the weights each step reads anyway
    f_re = g.get("f_recompute", 0.0)
    mixed = mixed + f_re * (g["pf_kv_s"] / mbu_kv + pc_x / mfu_pf + g["pf_comm_s"] / ce) / stages
    # the step's host work (scheduler, sampler bookkeeping, per-sequence output handling) and its device-side
    # launch gaps per layer and per MoE layer; an engine that schedules step k + 1 while the GPU runs step k
    # hides the host work behind the device's (``overlap_fixed_s``)
    # a multi-head latent attention layer launches about twice a GQA layer's kernels (its latent projections and
    # norms, the absorbed W_UK / W_UV matmuls, the split-KV combine): ``mla_layer_fixed_s`` per MLA layer, fitted
    # with one value for every engine (vLLM, SGLang and TensorRT-LLM each fitted 89-99 us on their own). Without it
    # the fitted estimate of TensorRT-LLM's DeepSeek-V3 on 8 H200 at 4 clients was 1.46x below the measured TPOT of
    # 13.8 ms (InferenceMAX, 1k/1k), and Kimi K2 on vLLM 1.17x below at the median
    mla = g.get("n_mla_layers", 0.0) * p.get("mla_layer_fixed_s", 0.0) * soft
    # an engine's ROCm build on AMD Instinct runs its own kernels and graphs (``rocm_fixed_scale.<engine>``)
    rocm = np.where(on_rocm(g.get("family", 0.0)), costs.get("rocm", 1.0), 1.0)
    device_scale = fam_fixed * rocm
    gpu_fixed = (g["n_layers"] * per_layer + g["n_moe_layers"] * costs["moe"] + mla) * device_scale
    # multi-step scheduling (vLLM V0's --num-scheduler-steps N, ``multi_step_steps``): the host schedules and
    # processes outputs once per N decode steps
    host_work = (costs["step"] + costs["seq"] * b) / g.get("sched_steps", 1.0)
    fixed_step = overlap_fixed_s(host_work, gpu_fixed, mixed, g.get("overlap", 0.0))
    # a step that carries prompt tokens runs outside the decode CUDA graphs (``eager_prefill``): a launch cost per
    # layer, paid by the share of decode steps that carry a prompt (at most all of them) and by a prompt's chunks
    prefill_fixed = (g["n_layers"] * costs.get("prefill", 0.0) + g["n_moe_layers"] * costs.get("prefill_moe", 0.0)) \
        * g.get("eager_pf", 0.0)
    tpot_fixed = fixed_step + np.minimum(f, 1.0) * prefill_fixed
    # the fixed cost's own parts (``FIXED_PARTS``): the host work the GPU does not hide, the device's launch gaps per
    # layer, per MoE layer and per latent attention layer (with the family's and the ROCm build's factors), and the
    # launches of the steps that carry prompt tokens; they add up to the fixed cost
    step_parts = {"host": fixed_step - gpu_fixed, "layers": g["n_layers"] * per_layer * device_scale,
                  "moe": g["n_moe_layers"] * costs["moe"] * device_scale, "mla": mla * device_scale}
    tpot_fixed_parts = dict(step_parts, prompt_launch=np.minimum(f, 1.0) * prefill_fixed,
                            request=np.zeros_like(b), first_round=np.zeros_like(b))
    # speculative decoding (``calc.speculative_serving``): a round is k draft passes, each a small model's step
    # (its share of the weights and matmuls, one layer's cache reads, collectives and launches), then the verify
    # step above (k + 1 tokens per sequence); it emits AL tokens per sequence, so every part of a token's time is
    # the round's over AL. Plain decoding: k = 0, AL = 1, no draft
    k_spec, al = g.get("spec_k", 0.0), g.get("spec_al", 1.0)
    zero = np.zeros_like(b)
    draft = k_spec * (g.get("d_kv_s", zero) / mbu_kv
                      + _read_and_matmuls(g.get("d_w_s", zero) / mbu_w, g.get("d_c_s", zero) / mfu_d, ov)
                      + g.get("d_comm_s", zero) / ce
                      + (per_layer + np.where(g["is_moe"] > 0, costs["moe"], 0.0)
                         + np.where(g.get("n_mla_layers", 0.0) > 0, p.get("mla_layer_fixed_s", 0.0) * soft, 0.0))
                      * device_scale)
    tpot = {"weights": w / al, "kv": kv / al, "compute": np.maximum(c - w, 0.0) / al, "comm": cm / al,
            "bound": bound / al, "fixed": tpot_fixed / al, "efficiency": (dec - bound) / al,
            "interference": (mixed - dec) / al, "draft": draft / al, "queue": np.zeros_like(b)}
    tpot_fixed_parts = {key: v / al for key, v in tpot_fixed_parts.items()}
    # requests in service beyond what the cache decodes at once wait paused, each decoding B / N of the steps
    # (``serving_components``' ``preempts``): the wait falls in TPOT's queue part
    n_in = g.get("N", b)
    unpaused = bound + tpot_fixed + (dec - bound) + (mixed - dec) + draft
    tpot["queue"] = (n_in / b - 1.0) * unpaused / al
    tpot["estimate"] = unpaused / al + tpot["queue"]
    # one decode step of the engine (a verification round under speculative decoding: AL tokens per sequence), the
    # unit of the waits for a step below
    round_s = tpot["estimate"] * al
    # a benchmark's ITL, the gap between two streamed chunks: an engine that schedules once per N decode steps
    # (multi-step scheduling, ``sched_steps``) streams N steps' tokens at once, so its chunks come N steps apart
    # (vLLM 0.6.0 with --num-scheduler-steps 10: median ITL 129-275 ms against TPOTs of 14-29 ms, SGLang's
    # benchmark/benchmark_vllm_060/README.md). The mean gap is the mean step's; the median gap is the step most
    # gaps are: a step that decodes alone where fewer than half of the steps carry prompt tokens (p_mix < 1/2),
    # else one that carries them
    sched = g.get("sched_steps", 1.0)
    dec_step = overlap_fixed_s(host_work, gpu_fixed, dec, g.get("overlap", 0.0)) + dec + draft
    itl_mean = round_s * sched
    itl_alone = np.minimum(dec_step, unpaused)
    itl_median = np.where(p_mix < 0.5, itl_alone, unpaused) * sched
    # the gap of a step that carries prompt tokens (the tail of the ITL, ``calc.serving_tails``): the steps that do
    # carry the whole of the mean step's excess over one that decodes alone
    itl_prompt = np.where(p_mix > 0, itl_alone + (unpaused - itl_alone) / np.maximum(p_mix, 1e-12), unpaused) * sched
    # TTFT: the prompt in n chunk steps, each also carrying the others' decode (continuous)
    pw, pkv, pc, pcm = g["pf_w_s"], g["pf_kv_s"], g["pf_c_s"], g["pf_comm_s"]
    pbound = pkv + np.maximum(pw, pc) + pcm
    wr = np.maximum(pw, w * (1.0 - g["static"]))
    alone = pkv / mbu_kv + _read_and_matmuls(n * wr / mbu_w, pc_x / mfu_pf, ov) + pcm / ce
    o_share = np.where(g["static"] > 0, 0.0, (b - 1.0) / b)
    core = (pkv + n * o_share * kv) / mbu_kv + _read_and_matmuls(n * wr / mbu_w, n * o_share * cx / mfu_d + pc_x / mfu_pf, ov) \
        + (pcm + n * o_share * cm) / ce + g.get("dp_alone_s", 0.0) / mfu_pf
    # a served request pays its HTTP, tokenising and admission, and, in a mixture of experts, a cost per MoE layer
    # per GPU of the replica, the engine's own (``request_moe_overhead_s.<engine>``: fitted, TensorRT-LLM 0.22 ms,
    # so about 0.1 s for DeepSeek-V3's 58 MoE layers on an 8-GPU server, vLLM 0.03 ms; none for a dense model); a
    # static batch is an in-process run
    request = p["request_overhead_s"] + costs.get("request_moe", 0.0) * g["n_moe_layers"] * g["gpus"]
    ttft_fixed = n * (fixed_step + prefill_fixed) + request * (1.0 - g["static"])
    ttft_fixed_parts = {k: n * v for k, v in step_parts.items()}
    # (a closed loop's first-round cold start is the caller's: ``calc.serving_terms.with_cold_start``)
    ttft_fixed_parts.update(prompt_launch=n * prefill_fixed, request=request * (1.0 - g["static"]),
                            first_round=np.zeros_like(b))
    ttft_service = ttft_fixed + core
    e2e_service = ttft_service + (g["O"] - 1.0) * tpot["estimate"]
    # queueing: for a slot (closed loop beyond the batch), behind other prompts (M/D/1), and for the step
    # in flight. The prompts ahead share each step's weight read (the engine batches waiting prompts into
    # one step up to its token budget), so a prompt occupies the engine for its marginal time only: its
    # matmuls, attention, KV writes and collectives, not the weights (Yu et al., Orca, OSDI 2022, section 4:
    # iteration-level scheduling; Agrawal et al., Sarathi-Serve, OSDI 2024, section 3).
    # (over the PP stages: the engine pipelines the prompts as it does the decode steps' micro-batches)
    s = (pkv / mbu_kv + pc_x / mfu_pf + pcm / ce) / stages
    if rate_per_s is None:
        slot = np.where(g["C"] > n_in, e2e_service * (g["C"] - n_in) / n_in, 0.0)
        load = n_in / e2e_service
        # a closed loop's other C - 1 clients keep the engine stepping
        busy = np.minimum(np.maximum(g["C"] - 1.0, 0.0), 1.0)
    else:
        slot = np.zeros_like(b)
        load = np.broadcast_to(np.asarray(rate_per_s, dtype=float), b.shape)
        # Poisson arrivals see the time average (PASTA): B requests in service, the engine idle with
        # probability exp(-B) (M/G/infinity: the number in service is Poisson)
        busy = 1.0 - np.exp(-b)
    rho = np.minimum(load * s * (1.0 - g["static"]), 0.95)
    md1 = rho * s / (2.0 * (1.0 - rho))
    if rate_per_s is None:
        md1 = np.minimum(md1, np.maximum(g["C"] - 1.0, 0.0) * s)
    # an arrival is admitted at the next iteration boundary: the mean residual of a deterministic step in
    # flight is half of it (Kleinrock 1975, the residual life T^2 / 2T); an engine that polls for new requests only
    # every R steps (SGLang's --scheduler-recv-interval R) admits an arrival at the next poll, R / 2 steps on average;
    # so does an engine that schedules once per N decode steps (vLLM V0's multi-step scheduling, ``sched_steps``)
    step_wait = busy * g.get("recv_interval", 1.0) * g.get("sched_steps", 1.0) * round_s / 2.0 \
        * (1.0 - g["static"])
    # a burst's requests all arrive before the first step: each waits for the prompts prefilled before its own
    # (``burst_schedule``), not for a step in flight nor in a queue of arrivals
    burst = g.get("burst", 0.0)
    # TensorRT-LLM's attention-DP balance (``attention_dp_config.enable_balance``): a rank holding a prompt waits
    # until every one of the D ranks has one, at most ``timeout_iters`` steps (NVIDIA TensorRT-LLM tech blog 10,
    # "ADP Balance Strategy", context synchronization). Arrivals land a = load x TPOT per step, so the D prompts of
    # a round gather in (D - 1) / a steps; a prompt waits half of that on average, at most half the timeout
    timeout, ranks = g.get("adp_timeout", 0.0), g.get("adp_ranks", 1.0)
    per_step = np.maximum(load * round_s, 1e-9)
    balance = np.where((timeout > 0) & (ranks > 1),
                       np.minimum((ranks - 1.0) / (2.0 * per_step), timeout / 2.0) * round_s, 0.0)
    # a lockstep loop's later rounds on an engine that prefills each returning group together: the group's prompts
    # share one step (``pf_n``, below), and no queue of random arrivals forms
    md1 = md1 * (1.0 - g.get("grouped", 0.0))
    # attention DP (a mixture of experts whose attention runs in data-parallel ranks): a new request waits a set
    # number of decode steps before the ranks, which step together through every MoE layer's all-to-all, take its
    # prompt (``adp_prompt_wait_steps.<engine>``, fitted); none without it. Under a stated balance the engine holds a
    # prompt at most ``timeout_iters`` steps, so the wait is capped there (MLPerf v6.0's DeepSeek-R1 Server configs
    # set 9, and the fitted 26 steps put the estimate of their mean TTFT at 1.3-2.8x of the measured; v5.1's runs,
    # no balance, measured 9-12 decode steps; InferenceX's 60 leaves the fitted wait whole)
    adp = np.where((g.get("adp_ranks", 1.0) > 1.0) & (g["is_moe"] > 0), 1.0, 0.0)
    wait_steps = costs.get("adp_wait_steps", 0.0)
    wait_steps = np.where(timeout > 0, np.minimum(wait_steps, timeout), wait_steps)
    adp_wait = adp * wait_steps * round_s * (1.0 - g["static"])
    queue = slot + (md1 + step_wait + balance) * (1.0 - burst) + (g.get("pf_n", 1.0) - 1.0) * s + adp_wait
    # under speculative decoding the draft also runs over the prompt once (an MTP module's or a head's prefill)
    pf_draft = np.where(k_spec > 0, _read_and_matmuls(g.get("pf_d_w_s", zero) / mbu_w,
                                                      g.get("pf_d_c_s", zero) / mfu_pf, ov), 0.0)
    ttft = {"weights": pw, "kv": pkv, "compute": np.maximum(pc - pw, 0.0), "comm": pcm, "bound": pbound,
            "fixed": ttft_fixed, "efficiency": alone - pbound, "interference": core - alone, "draft": pf_draft,
            "queue": queue}
    ttft["estimate"] = pbound + ttft_fixed + (alone - pbound) + (core - alone) + pf_draft + queue
    e2e = ttft["estimate"] + (g["O"] - 1.0) * tpot["estimate"]
    rps = g["C"] / e2e if rate_per_s is None else load
    out = {f"tpot_{k}": v for k, v in tpot.items()}
    out.update({f"ttft_{k}": v for k, v in ttft.items()})
    out.update({f"tpot_fixed_{k}": np.broadcast_to(v, b.shape) for k, v in tpot_fixed_parts.items()})
    out.update({f"ttft_fixed_{k}": np.broadcast_to(v, b.shape) for k, v in ttft_fixed_parts.items()})
    rand = 1.0 - burst
    out.update(ttft_request_s=np.broadcast_to(request * (1.0 - g["static"]), b.shape),
               ttft_step_wait_s=np.broadcast_to((step_wait + balance) * rand, b.shape),
               ttft_md1_s=np.broadcast_to(md1 * rand, b.shape), ttft_rho=np.broadcast_to(rho, b.shape),
               itl_alone_s=np.broadcast_to(itl_alone * sched, b.shape),
               itl_prompt_s=np.broadcast_to(itl_prompt, b.shape))
    out.update(ttft_adp_wait_s=adp_wait, itl_mean_s=np.broadcast_to(itl_mean, b.shape),
               itl_median_s=np.broadcast_to(itl_median, b.shape), prompt_s=np.broadcast_to(s, b.shape))
    out.update(e2e_s=e2e, requests_per_s=rps, output_tokens_per_s=rps * g["O"], bound_tpot_s=tpot["bound"],
               bound_ttft_s=pbound, decode_batch=b, round_s=round_s, spec_al=np.broadcast_to(al, b.shape))
    return out


# == The public estimate ========================================================================

def trtllm_bench_max_batch(model, acc, seq_len: int, layout, weight_dtype: str, kv_dtype: str,
                           cache_fraction: float = 0.95, cap: int = 4096) -> int:
    """The max batch trtllm-bench throughput builds for a run of ``seq_len`` = ISL + OSL tokens
    (NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py, calc_engine_setting and finetune_setting):
    the requests whose cache at the full ISL + OSL fits in ``cache_fraction`` of the memory left after the
    weights (of the driver's total, ``calc.memory.with_capacity``), every attention layer counted at full length
    (its byte_per_token ignores sliding windows: gpt-oss's 128-token windows do not enlarge the batch), capped at
    ``cap`` and rounded up as the
    benchmark does (to 32 under 256, to 128 under 1,024, else to 256; at least 64), over the replicas'
    pipeline stages. Falls back to ``cap`` when nothing fits (the run then sets its own limits).
    """
    acc = with_capacity(acc, "driver")  # the benchmark reads the free memory the driver reports
    free = acc.memory_bytes - weight_bytes_per_gpu(model, layout, weight_dtype)
    reserve = max(free, 0.0) * (1.0 - cache_fraction)
    raw = max_batch_per_replica(model, acc, int(seq_len), layout, weight_dtype, kv_dtype, reserve, sliding="full")
    if raw < 1:
        return int(cap)
    raw = min(raw, cap) / layout.pp
    if raw < 256:
        return int(max(64, 32 * math.ceil(raw / 32)))
    if raw < 1024:
        return int(128 * math.ceil(raw / 128))
    return int(256 * math.ceil(raw / 256))


def trtllm_bench_settings(params: dict, engine_key: str, model, accelerator, seq_len: int, layout, weight_dtype: str,
                          kv_dtype: str) -> dict:
    """The scheduler settings of the engine ``trtllm-bench throughput`` builds for itself (serving_params.json's
    ``engines.trtllm.trtllm_bench``: cache share 0.95, a token budget of up to 32,768), its max batch sized for a run
    of ``seq_len`` = ISL + OSL tokens (``trtllm_bench_max_batch``).

    Raises:
        KeyError: ``engine_key`` has no benchmark settings (only TensorRT-LLM has them).
    """
    settings = dict(params["engines"][engine_key]["trtllm_bench"])
    settings.pop("source", None)
    settings["max_batch"] = trtllm_bench_max_batch(model, accelerator, int(seq_len), layout, weight_dtype, kv_dtype,
                                                   settings["kv_memory_fraction"], settings["max_batch"])
    return settings


def finite_run_drain_s(a: dict, first, n_requests, batch, output_len):
    """Duration (s) of a finite run of ``n_requests`` whose outputs end at end-of-text (``finite_run_tail_s``), from
    ``combine``'s arrays ``a``: point ``first`` is the engine at its decode batch ``batch`` (its steps without the
    wait of the requests it holds paused, ``tpot_queue``), point ``first + 1`` one request alone. ``first`` may be
    an array of points (the fit's rows), the other arguments broadcasting with it."""
    step = a["tpot_estimate"][first] - a["tpot_queue"][first]
    return finite_run_tail_s(n_requests, batch, output_len, step, step - a["tpot_interference"][first],
                             a["tpot_estimate"][first + 1], a["ttft_estimate"][first + 1])


#: The notice of a rate estimate given the run's number of requests (``num_prompts``): the same words at every rate,
#: so a sweep of rates says it once.
FINITE_RATE_RUN_WORDS = ("a finite run at a request rate: its throughput is its num_prompts requests over the run's "
                         "duration (the span of their arrivals, (N - 1) / rate, plus the last one's latency; past "
                         "what the engine serves, N over what it completes once full, plus one request's latency), "
                         "below the rate sent, as a benchmark divides it; the times are the rate's")


def rate_run_requests_per_s(rate_per_s, n_requests, e2e_s, in_service, keeps_up, e2e_alone_s):
    """Requests per second a finite run of ``n_requests`` sent at ``rate_per_s`` (a Poisson process, as vLLM's and
    SGLang's bench_serving, Triton's and MLPerf's LoadGen Server send them) completes, as its report divides them: N
    over the run's duration, from the first arrival to the last completion. Arrays broadcast; per replica; seconds.

    - An engine that keeps up (``keeps_up``: Little's law has a root, ``in_service`` = rate x ``e2e_s``): the N
      arrivals span (N - 1) / rate on average, and the last request then takes its end-to-end latency ``e2e_s``
      at the run's steady load: duration = (N - 1) / rate + e2e.
    - One that does not (the rate beyond what it serves): once full it holds ``in_service`` requests (its batch or
      KV limit, or all N) for ``e2e_s`` each, completing mu = in_service / e2e per second, and its first request
      completes after about one request's latency alone (``e2e_alone_s``): duration = e2e_alone + N / mu (a fluid
      queue drained at its capacity), never less than the arrivals' span plus that latency.
    - ``n_requests`` inf (a run whose size is not stated): the steady state, the rate or the capacity mu.

    Examples: 500 requests at 8 per second, each 7.7 s end to end: 500 / (499 / 8 + 7.7 s) = 7.14 per second (the
    TensorRT-LLM v0.14 performance overview's Llama-3.1-70B on 4 H100 at QPS 8 reports 7, not 8). The same 500 at 16
    per second on an engine that completes 15 per second with all 500 in flight, 5.6 s for one request alone:
    500 / (5.6 + 500 / 15 s) = 12.8 per second (reported: 12). MLPerf's 24,576 requests at 8.6 per second, 45 s
    each: 0.985 of the rate.

    Returns:
        requests per second per replica (array). Source: Little's law (Little 1961) for the requests in service and
        the capacity; a finite run's duration is the span of its arrivals plus the last one's sojourn, or, past
        capacity, the fluid approximation of a queue served at its capacity (Kleinrock, Queueing Systems vol. 2,
        1976, chapter 2).
    """
    lam = np.asarray(rate_per_s, dtype=float)
    n = np.asarray(n_requests, dtype=float)
    capacity = np.asarray(in_service, dtype=float) / np.asarray(e2e_s, dtype=float)
    alone = np.asarray(e2e_alone_s, dtype=float)
    steady = np.where(keeps_up, lam, np.minimum(lam, capacity))
    finite = np.isfinite(n)
    nn = np.where(finite, n, 1.0)
    span = np.maximum(nn - 1.0, 0.0) / lam
    duration = np.where(keeps_up, span + np.asarray(e2e_s, dtype=float),
                        np.maximum(span, nn / capacity) + alone)
    return np.where(finite, nn / duration, steady)


def finite_offline_run(model: ModelConfig, accelerator: Accelerator, input_len: int, output_len: int,
                       n_requests: float, lengths: str, layout, weight_dtype: str, kv_dtype: str, settings: dict,
                       interconnect, p: dict, costs: dict, graphs=1.0) -> tuple[dict, dict, str]:
    """An offline run of ``n_requests`` requests per replica, all sent at once (continuous batching): the
    components, ``combine``'s arrays and the words for ``ServingEstimate.arrivals``.

    ``lengths="fixed"`` (every output of one length): the run is ``finite_run_waves`` full bursts of the engine's
    batch B and one burst of the requests left, each a ``burst_schedule`` (point 0: a full burst, point 1: the
    last one); the run's requests/s are N / (waves x e2e(B) + e2e(rest)). ``"varied"`` (outputs ending at
    end-of-text): the engine's batch (point 0), then its last batch draining (``finite_run_tail_s``, with one
    request alone at point 1); the requests/s are N / that duration. TTFT and TPOT at point 0 are those of a full
    batch. ``calc.serving_fit`` predicts its measurement rows that state a run's size the same way
    (``prepare_rows``' waves and tail, ``predict_rows``), so a published run and this estimate of it agree.

    Args:
        n_requests: requests per replica (> 0); settings: the engine's (``calc.serving_params.engine_settings``);
        p, costs, graphs: as ``combine`` takes them.

    Returns:
        (components, arrays, words): arrays per point as ``combine``'s, with ``requests_per_s`` and
        ``output_tokens_per_s`` at point 0 the whole run's.

    Raises:
        ValueError: a non-positive ``n_requests`` or a ``lengths`` other than "varied" or "fixed"; what
            ``serving_components`` raises (a model that does not fit).
    """
    check_choice(lengths, LENGTHS, f"lengths must be one of {', '.join(LENGTHS)}")
    if not n_requests > 0:
        raise ValueError(f"a finite run needs a positive number of requests; got {n_requests!r}")
    args = (model, accelerator, input_len, output_len)
    kw = dict(layout=layout, weight_dtype=weight_dtype, kv_dtype=kv_dtype, settings=settings,
              interconnect=interconnect, batching="continuous", matmul_scale=settings["matmul_scale"])
    if lengths == "fixed":
        comp = serving_components(*args, [n_requests], burst=True, **kw)
        waves, rest = finite_run_waves(n_requests, float(comp["N"][0]))
        if rest >= 1.0:
            more = serving_components(*args, [rest], burst=True, **kw)
            comp = {k: np.concatenate([comp[k], more[k]]) for k in comp}
    else:
        comp = serving_components(*args, [n_requests, 1.0], **kw)
    comp["C"] = comp["N"].copy()
    a = combine(comp, p, costs, graphs)
    a = dict(a, requests_per_s=np.array(a["requests_per_s"], dtype=float),
             output_tokens_per_s=np.array(a["output_tokens_per_s"], dtype=float))
    batch = float(comp["N"][0])
    if lengths == "fixed":
        last = float(a["e2e_s"][1]) if len(comp["N"]) > 1 else 0.0
        rps = n_requests / (waves * float(a["e2e_s"][0]) + last)
        words = (f"offline, {n_requests:,.0f} requests of one length sent at once: {waves:,.0f} "
                 + ("wave" if waves == 1 else "waves") + f" of {batch:,.0f} admitted together"
                 + (f" and a last one of {rest:,.0f}, as long as a full one" if rest >= 1.0 else "") + " (each a burst)")
    else:
        rps = n_requests / float(finite_run_drain_s(a, 0, n_requests, comp["B"][0], output_len))
        words = (f"offline, {n_requests:,.0f} requests sent at once, outputs ending at end-of-text: {batch:,.0f} "
                 "admitted at a time, then the last of them draining at a shrinking batch")
    a["requests_per_s"][0] = rps
    a["output_tokens_per_s"][0] = rps * output_len
    return comp, a, words


def _named(model, accelerator, weight_dtype, kv_dtype):
    """(model, accelerator, weight_dtype, kv_dtype, notices) of a public estimate: a model or an accelerator given
    by name (a preset id, a checkpoint's id, a driver's name: ``get_model``, ``get_accelerator``), dtypes as calc
    spells them (``calc.dtypes.canonical_dtype``: "bfloat16" is bf16, "fp8_e5m2" fp8, a cache of "auto" the
    model's bf16). Weights not given (None): the format the checkpoint's id names (``checkpoint_tag``), else the
    model's own checkpoint format (gpt-oss: mxfp4, DeepSeek-V3: fp8-block, DeepSeek-V4: mxfp4-fp8), else bf16 (an
    NVFP4 copy of a model released with fp4 experts beside fp8 layers: "nvfp4-fp8"); a named weight format that
    the id contradicts is followed, with a notice.

    Raises:
        ValueError: an unknown name, or a model or accelerator that is neither a name nor calc's object (None)."""
    notices = []
    tag = checkpoint_tag(model) if isinstance(model, str) else None
    if isinstance(model, str):
        model = get_model(model)
        if tag in ("mxfp4", "nvfp4") and model.checkpoint_format in MIXED_EXPERT_FORMATS:
            # a 4-bit copy of a model released with fp4 experts beside fp8 layers keeps those layers (the ignore list
            # of nvidia/DeepSeek-V4-Pro-NVFP4's quantization_config: attention, shared experts, head, MTP)
            tag = f"{tag}-fp8"
    if isinstance(accelerator, str):
        accelerator = get_accelerator(accelerator)
    if not isinstance(model, ModelConfig):
        raise ValueError("model must be a calc.ModelConfig or a model's name (a preset id such as 'llama-3.1-8b', "
                         f"or a checkpoint's id); got {model!r}")
    if not isinstance(accelerator, Accelerator):
        raise ValueError("accelerator must be a calc.Accelerator or its name (a preset id such as 'h100-sxm', or a "
                         f"driver's name for the GPU); got {accelerator!r}")
    if weight_dtype is None:
        weight_dtype = tag or model.checkpoint_format or "bf16"
        if weight_dtype != "bf16":
            notices.append(f"weights in {weight_dtype}, " + ("the format the checkpoint's name gives" if tag else
                           f"{model.name}'s published checkpoint format") + ", since weight_dtype was not given")
    elif tag and canonical_dtype(weight_dtype) != tag:
        notices.append(f"the checkpoint's name says {tag} weights; the estimate follows weight_dtype="
                       f"{canonical_dtype(weight_dtype)!r}")
    return model, accelerator, canonical_dtype(weight_dtype), canonical_dtype(kv_dtype), notices


def _check_workload(input_len, output_len, concurrency, request_rate_per_s, batching):
    i = check_positive_int(input_len, "input_len")
    o = check_positive_int(output_len, "output_len")
    check_choice(batching, BATCHING, "batching must be 'continuous' (vLLM, SGLang, TensorRT-LLM) or 'static'")
    if concurrency is not None and request_rate_per_s is not None:
        raise ValueError("give concurrency or request_rate_per_s, not both (a closed loop of clients, or an open "
                         "stream of requests)")
    if concurrency is not None:
        check_positive_number(concurrency, "concurrency")
    if request_rate_per_s is not None:
        check_positive_number(request_rate_per_s, "request_rate_per_s")
        if batching == "static":
            raise ValueError("a request rate needs continuous batching (static batches do not admit arrivals)")
    return i, o


#: Launch settings ``serving_estimate``'s ``engine_options`` may override: numbers, and flags (booleans).
ENGINE_OPTIONS = {"max_batch": "number", "token_budget": "number", "kv_memory_fraction": "number",
                  "recv_interval": "number", "adp_balance_timeout_iters": "number", "overlap_schedule": "flag",
                  "eager_prefill": "flag", "reserve_full_sequence": "flag", "trtllm_bench": "flag",
                  "full_window_cache": "flag", "scheduler_steps": "number"}
#: Options that only some engines have (the engines, what the option is): SGLang's ``--scheduler-recv-interval``,
#: TensorRT-LLM's attention-DP balance, the engine ``trtllm-bench throughput`` builds, steps per scheduler call.
ENGINE_ONLY_OPTIONS = {"recv_interval": (("sglang",), "SGLang's --scheduler-recv-interval"),
                       "adp_balance_timeout_iters": (("trtllm",), "TensorRT-LLM's attention_dp_config balance"),
                       "trtllm_bench": (("trtllm",), "the engine trtllm-bench builds"),
                       "full_window_cache": (("trtllm",), "a TensorRT engine's cache of every token of a sliding "
                                                          "window"),
                       "scheduler_steps": (("vllm", "sglang"), "vLLM's --num-scheduler-steps (multi-step "
                                                             "scheduling of its V0 engine) or SGLang's "
                                                             "--num-continuous-decode-steps")}


#: Engine options counted in whole units (a batch of sequences, a budget of tokens, steps).
_WHOLE_OPTIONS = {"max_batch": "sequences", "token_budget": "tokens per step", "recv_interval": "decode steps",
                  "adp_balance_timeout_iters": "steps",
                  "scheduler_steps": "decode steps per scheduler call (1 or more)"}


def _engine_options(options, engine_key: str = "") -> dict:
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"engine_options must be a dict of {', '.join(ENGINE_OPTIONS)}; got {options!r:.60}")
    out = {}
    for k, v in options.items():
        if k not in ENGINE_OPTIONS:
            raise ValueError(f"unknown engine option {k!r}: the options are {', '.join(ENGINE_OPTIONS)}")
        own, what = ENGINE_ONLY_OPTIONS.get(k, ((engine_key,), ""))
        if engine_key and engine_key not in own:
            raise ValueError(f"engine option {k!r} is {what}; the engine here is {engine_key}")
        if ENGINE_OPTIONS[k] == "flag":
            if not isinstance(v, bool):
                raise ValueError(f"engine option {k!r} must be True or False; got {v!r:.40}")
            out[k] = v
            if k == "full_window_cache":  # a TensorRT engine keeps a cyclic window only when the build sets one
                out["sliding"] = "full" if v else "cap"
        else:
            check_positive_number(v, f"engine option {k!r}")
            if k == "kv_memory_fraction" and v > 1:
                raise ValueError(f"engine option 'kv_memory_fraction' must be at most 1; got {v!r}")
            if k in _WHOLE_OPTIONS and float(v) != int(v):
                raise ValueError(f"engine option {k!r} must be a whole number of {_WHOLE_OPTIONS[k]}; got {v!r}")
            out[k] = float(v)
    return out


def _setup(model, accelerator, weight_dtype, tp, pp, ep, replicas, engine, params, engine_version="",
           engine_options=None, trait_range=True):
    """(params, layout, engine key, settings, notices, accelerator) of a public estimate: the accelerator as the
    engines run ``weight_dtype``'s matmuls (``engine_matmul``), its notice after the fallbacks'; ``trait_range``: the
    range takes a thinly covered trait's held-out spread, a thinly read engine and weight-format pair's included
    (``architecture_notice``'s words say so)."""
    accelerator, fp4 = engine_matmul(accelerator, weight_dtype)
    prm = params if params is not None else load_serving_params()
    layout = make_layout(model, tp, pp, ep, check_positive_int(replicas, "replicas"))
    key, settings, notices = engine_settings(prm, engine, accelerator.memory_bytes, accelerator.name)
    version = release_number(engine_version) if engine_version else ""
    other = [name for name, k in (("vllm", "vllm"), ("sglang", "sglang"), ("tensorrt", "trtllm"), ("trtllm", "trtllm"))
             if name in str(engine_version).lower() and k != key]
    if version and other:
        notices = notices + [f"engine_version {str(engine_version)!r:.60} names {other[0]}, not the engine here "
                             f"({key}): its number {version} is read as {key}'s release"]
    day = version_day(engine_version)
    if day is not None:
        then = release_on(key, day)
        if not then and first_release(key):
            raise ValueError(f"engine_version {day.isoformat()} is before {key}'s first release on file "
                             f"({first_release(key)}): the serving model has no software of that day")
        # the fitted software gain stops at the newest release the benchmarks hold (``software_factor``): a later
        # day is that day's software, and the notice says so rather than counting a gain no data measured
        counted = (f"the fitted gain of later releases counted to that day" if day <= SOFTWARE_LATEST_DAY else
                   f"the fitted gain of later releases counted up to {SOFTWARE_LATEST_DAY.isoformat()}, the newest "
                   "release in the benchmarks, and none beyond")
        notices = notices + [f"engine_version {str(engine_version)!r:.40} is a date: the engine's software as of "
                             f"{day.isoformat()} ({counted}"
                             + (f"; {key} {then} was its latest release then" if then else "")
                             + "), its scheduling (overlap, prompt steps) a current build's: the convention of the "
                             "published runs that state a date but no version"]
    elif engine_version and not version:
        notices = notices + [f"engine_version {str(engine_version)!r:.40} names no release number (such as 0.14.0 or "
                             f"1.2.0): the estimate takes a current build ({SOFTWARE_LATEST_RELEASE}), as without one"]
    if day is not None:
        settings = dict(settings, release_year=decimal_year(day))
    elif version:  # a named release: its overlap scheduling and prompt steps (else the file's current release)
        settings = dict(settings, overlap_schedule=overlaps_schedule(key, version, layout.attention_dp),
                        eager_prefill=eager_prefill(key, version), release_year=release_year(key, version))
    else:
        settings = dict(settings, release_year=SOFTWARE_LATEST_YEAR)  # a current build: the latest the fit saw
    settings.update(_engine_options(engine_options, key))
    if settings.get("scheduler_steps", 1) != 1:
        # multi-step scheduling exists only in the V0 engine of vLLM's releases before 0.10.1 (``multi_step_steps``)
        steps = multi_step_steps(key, version, settings["scheduler_steps"])
        if steps == 1:
            notices = notices + [f"scheduler_steps {settings['scheduler_steps']:g} is not taken: "
                                 f"{MULTI_STEP_NOT_TAKEN} (name one with engine_version); "
                                 + (f"vLLM {version} has none" if version else "a current build has none")]
        settings["scheduler_steps"] = steps
    acc_key = _accelerator_key(accelerator)
    scale, more = matmul_scale(prm, acc_key)
    family, fam_notice = device_family(prm, acc_key)
    settings = dict(settings, matmul_scale=scale, device_family=family)
    # the platform's name where the accelerator is a preset (a hand-built one says nothing of its maker)
    platform = get_accelerator(acc_key).name if acc_key in list_accelerators() else ""
    notices = (notices + accelerator_notice(prm, acc_key) + more + fam_notice + platform_notice(key, family, platform)
               + fp4 + architecture_notice(prm, model, widened=trait_range, engine=key, weight_dtype=weight_dtype))
    return prm, layout, key, settings, notices, accelerator


def speculative_engine(prm: dict, key: str, version: str, settings: dict, stated_batch: bool = False,
                       clients=None, notes: str = "", stated_overlap: bool = False) -> tuple[dict, list[str]]:
    """(settings, words): what engine ``key`` at release ``version`` ("" for a current build) does of its own under
    speculative decoding, for ``settings`` that carry a draft (``spec_tokens``): its cap on running requests unless
    the run states its largest batch (``stated_batch``; ``calc.serving_params.speculative_batch_limit``, said where
    ``clients`` per replica may exceed it), then its overlap scheduling unless the run states it (``notes`` setting
    ``SGLANG_ENABLE_SPEC_V2``, or ``stated_overlap``; ``calc.serving_terms.speculative_schedule``: SGLang before
    0.5.13 turns it off). The public estimate and the fit's rows both take these facts from here."""
    settings, capped = speculative_batch_limit(prm, key, settings, stated_batch, clients)
    settings, unhidden = speculative_schedule(key, version, settings, notes, stated_overlap)
    return settings, capped + unhidden


def _with_speculative(model, speculative, prm, key, settings, engine_options, clients=None, engine_version=""):
    """(settings, notices) of a public estimate under ``speculative`` (``calc.speculative_serving.
    speculative_settings``): its draft settings and what the engine does of its own under them
    (``speculative_engine``), max_batch and overlap_schedule in ``engine_options`` stating the run's own."""
    spec, notices = speculative_settings(model, speculative)
    options = engine_options if isinstance(engine_options, dict) else {}
    settings, words = speculative_engine(prm, key, release_number(engine_version) if engine_version else "",
                                         dict(settings, **spec), "max_batch" in options, clients,
                                         stated_overlap="overlap_schedule" in options)
    return settings, notices + words


def _accelerator_key(accelerator: Accelerator) -> str:
    """The preset whose fitted factors an accelerator takes: the preset of its name (a preset's own, or one a
    driver or a cloud gives, ``calc.hardware.match_accelerator_name``), else the preset with its data-sheet figures
    (memory, bandwidth and bf16 peak each within 5%: an Accelerator built by hand), else its name (no preset: the
    fallback and its notice)."""
    for k in list_accelerators():
        if get_accelerator(k).name == accelerator.name:
            return k
    named = match_accelerator_name(accelerator.name)
    if named:
        return named
    near = lambda a, b: abs(float(a) - float(b)) <= 0.05 * abs(float(b))  # noqa: E731
    for k in list_accelerators():
        ref = get_accelerator(k)
        try:
            same = (near(accelerator.memory_bytes, ref.memory_bytes)
                    and near(accelerator.bandwidth_bytes_per_s, ref.bandwidth_bytes_per_s)
                    and near(accelerator.peak_flops("bf16"), ref.peak_flops("bf16")))
        except (ValueError, KeyError, TypeError):
            same = False
        if same:
            return k
    return accelerator.name


def bounded_range(estimate, q: tuple, bound, kind: str):
    """(low, high) of an estimate from the held-out log-error quantiles ``q`` = (low, high), stopped at the
    roofline's ``bound``, which no engine passes: a latency range (``kind`` "latency") never reaches below it, a
    throughput range ("throughput") never above it; the range always holds the estimate. Scalars or arrays."""
    lo, hi = estimate * np.exp(q[0]), estimate * np.exp(q[1])
    if kind == "latency":
        low = np.maximum(lo, np.minimum(bound, estimate))
        return low, np.maximum(hi, low)
    high = np.maximum(np.minimum(hi, bound), estimate)
    return np.minimum(lo, high), high


def _breakdown(a: dict, prefix: str, i: int, q: tuple) -> TimeBreakdown:
    v = {k: float(np.asarray(a[f"{prefix}_{k}"])[i]) for k in ("weights", "kv", "compute", "comm", "bound", "fixed",
                                                                 "efficiency", "interference", "queue", "estimate")}
    est = v["estimate"]
    low, high = bounded_range(est, q, v["bound"], "latency")
    fixed_parts = tuple((k, float(np.asarray(a[f"{prefix}_fixed_{k}"])[i])) for k in FIXED_PARTS
                        if f"{prefix}_fixed_{k}" in a)
    draft = float(np.asarray(a[f"{prefix}_draft"])[i]) if f"{prefix}_draft" in a else 0.0
    return TimeBreakdown(v["weights"], v["kv"], v["compute"], v["comm"], v["bound"], v["fixed"], v["efficiency"],
                         v["interference"], v["queue"], est, float(low), float(high), fixed_parts, draft)


def context_notice(model: ModelConfig, input_len: int, output_len: int) -> str | None:
    """The notice an estimate carries when a request of ``input_len`` prompt and ``output_len`` output tokens runs
    past the model's trained context (``calc.models.beyond_trained_window``: config.json's
    ``max_position_embeddings``), else None; pages that price such a request show it as a warning.

    Raises:
        ValueError: lengths whose sum is not a positive number of tokens.
    """
    total = int(input_len) + int(output_len)
    limit = beyond_trained_window(model, total)
    if not limit:
        return None
    return (f"{total:,} tokens of prompt and output exceed {model.name}'s trained context of {limit:,}: an engine "
            "refuses such a request; the times are the arithmetic all the same")


def serving_estimate(model: ModelConfig, accelerator: Accelerator, input_len: int, output_len: int,
                     concurrency: float | None = None, request_rate_per_s: float | None = None, tp: int = 1,
                     pp: int = 1, ep: int = 1, replicas: int = 1, weight_dtype: str | None = None,
                     kv_dtype: str = "bf16", engine: str = "vllm", cuda_graphs: bool = True,
                     batching: str = "continuous", interconnect=None, params: dict | None = None,
                     engine_version: str = "", engine_options: dict | None = None, lengths: str = "varied",
                     rounds: float | None = None, num_prompts: int | None = None,
                     latency_limits: dict | None = None, speculative=None) -> ServingEstimate:
    """Predict what ``engine`` measures serving ``model`` on ``replicas`` x (``tp``, ``pp``, ``ep``)
    accelerators, for requests of ``input_len`` prompt and ``output_len`` output tokens.

    ``model`` and ``accelerator``: a ``ModelConfig`` and an ``Accelerator``, or their names (a preset, a served
    checkpoint's id, a driver's name for the GPU: ``get_model``, ``get_accelerator``); dtypes as engines write them
    too ("bfloat16", "fp8_e4m3", a cache of "auto": ``calc.dtypes.canonical_dtype``). ``weight_dtype`` None (the
    default): the checkpoint's own format, the one its id names ("-FP8", NVIDIA's "-FP4" as nvfp4, "-AWQ"), else
    the preset's published checkpoint (gpt-oss: mxfp4, DeepSeek-V3: fp8-block), else bf16, with a notice.

    Load: ``concurrency`` (requests in flight over the whole deployment, a closed loop as
    ``vllm bench serve --max-concurrency``), or ``request_rate_per_s`` (Poisson arrivals, open loop),
    or neither (offline, all requests at once: the engine runs at its batch limit; so does a rate of
    ``math.inf``, vllm bench serve's ``--request-rate inf``, with a notice). Requests are
    spread evenly over the replicas. Attention data parallelism is ``tp`` below ``ep``: ``tp=1, ep=8`` is
    attention in 8 ranks of TP1 with the experts over the 8 GPUs.

    A closed loop's benchmark convention (``lengths``, ``rounds``; ``calc.serving_terms.lockstep_closed_loop``):
    ``lengths="varied"`` (the default: prompts and outputs spread around their means, as production traffic, a
    ShareGPT set or random lengths with a range, so requests arrive spread out: the steady state) or ``"fixed"``
    (every prompt and output of the one length, outputs forced with ``ignore_eos``: the C clients start together
    and the run moves in waves, each a burst whose prompts are prefilled before it decodes,
    ``calc.serving_terms.burst_schedule``). ``rounds``: the run's requests over its concurrency (``vllm bench
    serve --num-prompts`` / ``--max-concurrency``); its first round is a burst and, at fixed lengths, the later
    ones partly stay one (``lockstep_share``, the fitted persistence); None: a long run, whose first round does not
    count: at varied lengths all steady state, at fixed lengths the share of later rounds that stay in lockstep
    (the persistence itself, the limit of ``lockstep_share`` for many rounds: about 8% of the run a burst on an
    engine that mixes prompts into decode steps, all of it on one that prefills a round before decoding it); 1: one
    round, a single burst. (Taking None at fixed lengths as lockstep waves throughout put 18.2% of the 1,517 fitted
    fixed-length closed-loop TTFTs within 25%, the long run 48.6%, their stated rounds 51.3%.) The convention
    followed is the estimate's ``arrivals``.

    ``num_prompts``: the run's requests, as a benchmark states them (``vllm bench serve --num-prompts``,
    ``benchmark_throughput.py --num-prompts``, trtllm-bench's dataset of ``--num-requests``). At a concurrency it
    gives the rounds (``num_prompts / concurrency``). Offline it makes the run finite (``finite_offline_run``): at
    ``lengths="fixed"`` (one output length, ``ignore_eos``) the run moves in waves of the engine's batch and its
    last, partial wave takes as many steps as a full one (``calc.serving_terms.finite_run_waves``); at
    ``lengths="varied"`` (outputs ending at end-of-text, a ShareGPT set) its last batch drains for many steps at a
    shrinking batch (``finite_run_tail_s``), so its throughput is below the steady state's; None (the default): a
    run long enough for its start and end not to count. At a rate it caps the requests in flight:
    a run of N requests never holds more, so a rate beyond what the engine serves is taken with all N in (a notice)
    rather than refused; and the throughput is the run's, N over its duration (``rate_run_requests_per_s``: the
    span of the arrivals plus the last one's latency, below the rate sent), as a benchmark reports it.

    ``engine_version`` (default: a current release; a release number wherever it stands, as in an image tag, or
    a date "YYYY-MM-DD" for a run that states its date and no version: the software of that day, as the fit reads
    such runs) picks the engine's version-dependent behaviour: overlap
    scheduling (``calc.serving_terms.overlaps_schedule``) and eager prompt steps (``eager_prefill``: TensorRT-LLM
    before 1.0 ran TensorRT engines). ``engine_options`` overrides the engine's launch settings (``ENGINE_OPTIONS``:
    ``max_batch`` (per attention-DP rank on TensorRT-LLM and vLLM, whose ranks each schedule their own requests:
    serving_params.json's ``per_rank_limits``; the server's on SGLang), ``token_budget``, ``kv_memory_fraction``, ``recv_interval`` for SGLang's
    ``--scheduler-recv-interval``, ``adp_balance_timeout_iters`` for TensorRT-LLM's ``attention_dp_config``
    balance, ``overlap_schedule``, ``eager_prefill``, ``reserve_full_sequence``, ``trtllm_bench``,
    ``full_window_cache``: a TensorRT engine of TensorRT-LLM built without ``max_attention_window_size`` caches every
    token of a sliding-window layer, not its window; ``scheduler_steps`` for vLLM's ``--num-scheduler-steps``, the
    multi-step scheduling of its V0 engine in releases before 0.10.1, or SGLang's ``--num-continuous-decode-steps``,
    which pay the host's work per step once per that many decode steps and admit new requests at the next scheduler
    call, ``calc.serving_terms.multi_step_steps``: a vLLM release without it gives a notice). An offline
    estimate on TensorRT-LLM takes the LLM API's defaults; ``engine_options={"trtllm_bench": True}`` runs the engine
    ``trtllm-bench throughput`` builds for the run's lengths instead, as NVIDIA's published offline tables do
    (``trtllm_bench_settings``), and its ``arrivals`` says so.

    ``speculative``: None (plain decoding), a draft method ("mtp", "eagle3", "dspark", ...), or a dict {"method",
    "draft_tokens", "acceptance_length"} (``calc.speculative_serving.speculative_settings``): each decode step is a
    round of k draft passes and one verify step of k + 1 tokens per sequence, and emits the acceptance length AL
    tokens per sequence, so TPOT is the round over AL and ``itl_s`` (the gap between streamed chunks) the round;
    without an acceptance length, InferenceX's golden curve for the model, else their median at k drafts (a notice
    says which). Continuous batching only.

    ``latency_limits`` (at a rate only): ``{"ttft_s": ..., "tpot_s": ...}``, the 99th-percentile limits a run was
    tuned to meet at this rate, as MLPerf Inference's Server and Interactive scenarios are (the submitter raises the
    rate until a limit binds; a VALID result met both). Such a run sits at the edge of its engine's capacity, where
    the estimate's point is least sure (``rate_range``); with the limits, the estimate takes, among the engines its
    range admits, the one that runs at that edge (``edge_of_limits``), and takes each mean the limits name at its
    share of its limit within the latency range (``tuned_means``; the shares of the engine's own tuned runs where it
    served enough of them, ``edge_shares``), even where the plain estimate would not keep
    up with the rate (a VALID run kept up; its means lie below its limits). ``latency_limits="mlperf server"`` or
    ``"mlperf interactive"``: MLPerf Inference's own limits for the model's benchmark in that scenario (Llama-2-70B,
    Mixtral-8x7B, Llama-3.1-405B and -8B, DeepSeek-R1: ``calc.serving_params.mlperf_latency_limits``, from
    mlcommons/inference loadgen/mlperf.conf). None (the default): the plain estimate.

    Returns:
        ``ServingEstimate`` (times in seconds, throughputs in tokens/s); ``notices`` lists fallbacks. Its ranges come
        from the cross-validated errors; at a rate they are also carried through Little's law (``rate_range``: an
        engine slower than the estimate runs nearer its capacity, so near it the range's top grows), except for a run
        tuned to ``latency_limits``, which sits at the edge whatever its engine's speed: its range is the latency
        range around its means, its top held at the limit (``below_limits``; on the held-out MLPerf rate rows 87.1%
        of the measured means inside, median width 2.4x, against 91.5% and 4.4x carried through Little's law too).

    Raises:
        ValueError: non-positive lengths, concurrency or rate; both a concurrency and a rate; an unknown
            batching; a layout the model cannot take; a model that does not fit; a rate above what the
            deployment can serve (the message gives the largest rate it sustains); an engine option
            ``ENGINE_OPTIONS`` does not name, or a value that is not a positive number (a flag for the booleans);
            ``lengths`` other than "varied" or "fixed"; ``rounds`` below 1; ``num_prompts`` not a positive whole
            number, below the concurrency, or given with ``rounds``; a ``speculative`` method not priced, draft tokens
            outside 1 to 16, an acceptance length outside [1, k + 1], or speculation with static batching; an
            ``engine_version`` date that does not exist
            or precedes the engine's first release; ``latency_limits`` without a rate, or not a dict of positive
            numbers under "ttft_s" and "tpot_s" nor a text naming MLPerf's limits of a model it benchmarks.
    """
    model, accelerator, weight_dtype, kv_dtype, named = _named(model, accelerator, weight_dtype, kv_dtype)
    every_at_once = isinstance(request_rate_per_s, (int, float)) and request_rate_per_s == math.inf
    if every_at_once and concurrency is None:  # vllm bench serve's --request-rate inf: an offline run
        request_rate_per_s = None
    i, o = _check_workload(input_len, output_len, concurrency, request_rate_per_s, batching)
    check_choice(lengths, LENGTHS, f"lengths must be one of {', '.join(LENGTHS)}")
    if num_prompts is not None:
        num_prompts = check_positive_int(num_prompts, "num_prompts")
        if rounds is not None:
            raise ValueError("give rounds or num_prompts, not both (rounds is num_prompts / concurrency)")
        if concurrency is not None:
            if num_prompts < concurrency:
                raise ValueError(f"num_prompts ({num_prompts:,}) is below the concurrency ({concurrency:,g}): a run "
                                 "never has more requests in flight than it sends")
            rounds = num_prompts / float(concurrency)
    limits = _check_limits(latency_limits, None if every_at_once else request_rate_per_s, every_at_once, model)
    if rounds is not None and check_positive_number(rounds, "rounds") < 1:
        raise ValueError(f"rounds must be at least 1 (the run's requests over its concurrency); got {rounds!r}")
    prm, layout, key, settings, notices, accelerator = _setup(model, accelerator, weight_dtype, tp, pp, ep, replicas,
                                                              engine, params, engine_version, engine_options)
    notices = notices + named
    settings, spec_notices = _with_speculative(model, speculative, prm, key, settings, engine_options,
                                               None if concurrency is None else float(concurrency) / layout.replicas,
                                               engine_version)
    if settings.get("spec_tokens") and batching != "continuous":
        raise ValueError("speculative decoding needs continuous batching here (the static batch is the course's "
                         "plain decoding)")
    notices = notices + spec_notices
    beyond = context_notice(model, i, o)
    if beyond:
        notices = notices + [beyond]
    if every_at_once and concurrency is None:
        notices = notices + ["a request rate of inf sends every request at once (vllm bench serve's default): the "
                             "offline estimate, the engine at its batch limit"]
    p = param_values(prm)
    costs = engine_costs(p, key)
    finite = request_rate_per_s is None and concurrency is None and num_prompts is not None \
        and batching == "continuous"  # a finite offline run (``finite_offline_run``)
    graphs = 1.0 if cuda_graphs else 0.0
    reps = layout.replicas
    tuned = False  # a rate run tuned to latency limits (``edge_of_limits``, ``tuned_means``)
    if request_rate_per_s is not None:
        mode = "rate"
        lam = float(request_rate_per_s) / reps
        n_rep = math.inf if num_prompts is None else num_prompts / reps
        comp, a, at_limit = _solve_rate(model, accelerator, i, o, lam, layout, weight_dtype, kv_dtype, settings,
                                        interconnect, p, costs, graphs, error_quantiles(prm, "throughput")[1], n_rep)

        def solve_any(rate):  # another engine's rate (``rate_range``, ``edge_of_limits``): never refused
            return _solve_rate(model, accelerator, i, o, rate, layout, weight_dtype, kv_dtype, settings, interconnect,
                               p, costs, graphs, math.inf, n_rep)
        tuned = bool(limits)
        if tuned:
            # a run tuned to its latency limits: the engine of the range at their edge (its notice replaces the
            # plain estimate's words on capacity, which are about another engine)
            comp, a, edge_notice = edge_of_limits(solve_any, lam, limits, error_quantiles(prm, "throughput", key),
                                                  error_quantiles(prm, "latency", key), key)
            at_limit = [edge_notice]
        if math.isfinite(n_rep) and not bool(np.asarray(comp["burst"])[0] > 0):
            # a finite run's throughput: its requests over the span of their arrivals plus the last one's latency,
            # or over what the engine completes where it does not keep up (``rate_run_requests_per_s``); a run
            # piled up as a burst keeps the burst's
            e2e = float(np.asarray(a["e2e_s"])[0])
            # a run too short for the rate's steady state (``_solve_rate``: all its N in service, fewer than the rate
            # keeps in flight) is read as the fit reads such runs: one that does not keep up, all N in flight
            short = bool(np.ravel(comp.get("held_by_run", 0.0))[0] > 0)
            keeps_up = tuned or not (at_limit or short)
            # one request's latency alone counts only where the engine does not keep up
            alone = e2e if keeps_up else float(np.asarray(combine(serving_components(
                model, accelerator, i, o, [1.0], layout, weight_dtype, kv_dtype, settings, interconnect,
                matmul_scale=settings["matmul_scale"]), p, costs, graphs)["e2e_s"])[0])
            rps = float(rate_run_requests_per_s(lam, n_rep, e2e, float(np.asarray(comp["C"])[0]), keeps_up, alone))
            a = dict(a, requests_per_s=np.asarray([rps]), output_tokens_per_s=np.asarray([rps * o]))
            at_limit = at_limit + [FINITE_RATE_RUN_WORDS]
        notices = notices + at_limit
    else:
        mode = "offline" if concurrency is None else "concurrency"
        c = 1e9 if concurrency is None else float(concurrency) / reps
        if mode == "offline" and key == "trtllm" and settings.get("trtllm_bench", False):
            # a trtllm-bench throughput run (NVIDIA's offline tables) sizes its own engine
            bench = trtllm_bench_settings(prm, key, model, accelerator, i + o, layout, weight_dtype, kv_dtype)
            settings = dict(settings, **bench)
            settings.update(_engine_options(engine_options, key))  # a setting the caller names stays as named
        share = 0.0
        if concurrency is not None and batching == "continuous":
            # rounds not given: a long run, its first round not counting, its later rounds at fixed lengths
            # partly in lockstep (R -> infinity in ``lockstep_share``); rounds=1 is one burst
            share = float(burst_share(lengths == "fixed", math.inf if rounds is None else rounds,
                                      p["lockstep_persistence"], float(settings.get("mixed_prefill", True))))
        args = (model, accelerator, i, o, [c], layout, weight_dtype, kv_dtype, settings, interconnect, batching)
        if finite:
            comp, a, finite_words = finite_offline_run(model, accelerator, i, o, float(num_prompts) / reps, lengths,
                                                       layout, weight_dtype, kv_dtype, settings, interconnect, p,
                                                       costs, graphs)
        else:
            grouped = (concurrency is not None and lengths == "fixed" and 0.0 < share < 1.0
                       and groups_later_rounds(key))
            comp = serving_components(*args, matmul_scale=settings["matmul_scale"], burst=share >= 1.0,
                                      grouped=grouped)
            if concurrency is None:
                comp["C"] = comp["N"].copy()
            a = combine(comp, p, costs, graphs)
        # the first round's cold start on the engines' ROCm builds, spread over the burst's requests (a run of
        # stated rounds; a long run's first round does not count): ``calc.serving_params.cold_start_values``
        cold = float(burst_cold_start_s(cold_start_s(costs["cold"], settings["device_family"]),
                                        math.inf if rounds is None else rounds, share))
        if cold > 0:
            notices = notices + [cold_start_words(costs["cold"], key, rounds, cold * share)]
        if cold > 0 and share >= 1.0:  # the whole run is its burst (else the burst's point carries it, below)
            a = with_cold_start(a, cold)
            a["requests_per_s"] = comp["C"] / a["e2e_s"]
            a["output_tokens_per_s"] = a["requests_per_s"] * o
        tail_points = [(a, comp, 1.0)]
        if 0.0 < share < 1.0:  # the burst's times for its share of the run, the steady state's for the rest
            burst_comp = serving_components(*args, matmul_scale=settings["matmul_scale"], burst=True)
            burst = combine(burst_comp, p, costs, graphs)
            if cold > 0:
                burst = with_cold_start(burst, cold)
            tail_points = [(burst, burst_comp, share), (a, comp, 1.0 - share)]
            a = {k: share * np.asarray(burst[k]) + (1.0 - share) * np.asarray(v) for k, v in a.items()}
            a["requests_per_s"] = comp["C"] / a["e2e_s"]
            a["output_tokens_per_s"] = a["requests_per_s"] * o
    arrivals = arrivals_text(mode, lengths, rounds, batching, groups_later_rounds(key))
    if mode == "rate" and (rounds is not None or lengths != "varied"):
        notices = notices + ["lengths and rounds describe a closed loop at a concurrency; a rate estimate does not "
                             "use them"]
    elif mode == "offline" and (rounds is not None or (lengths != "varied" and num_prompts is None)):
        notices = notices + ["rounds, and lengths without num_prompts, describe a closed loop at a concurrency: an "
                             "offline estimate does not use them (offline, lengths apply to a run of num_prompts "
                             "requests)"]
    if finite:
        arrivals = finite_words
        n_rep, held, rps_rep = num_prompts / reps, float(comp["N"][0]), float(a["requests_per_s"][0])
        if n_rep > held:
            # the request j beyond the first B waits about (j - B) / (the run's requests/s) for a slot
            wait = float(slot_wait_s(n_rep, held, rps_rep))
            notices = notices + [f"the TTFT and TPOT shown are a request's in a full batch; sent all at once, the "
                                 f"run's {num_prompts:,} requests also wait for a free slot, {wait:,.3g} s on "
                                 f"average ((N - B)^2 / (2 N x requests/s), B = {held:,.0f} held per replica)"]
    if mode == "offline" and key == "trtllm" and settings.get("trtllm_bench", False):
        bench_words = (f"on the engine trtllm-bench throughput builds (max batch {settings['max_batch']:,.0f}, "
                       f"{settings['token_budget']:,.0f} tokens per step)")
        arrivals = f"{arrivals}, {bench_words}" if arrivals else f"offline, {bench_words}"
    notices = notices + scheduling_notices({**comp, **a}, prm, key)
    thin = thin_traits(prm, model, key, weight_dtype)
    est = estimate_from_arrays(a, prm, key, reps, layout.gpus_per_replica, o, float(comp["C"][0]),
                               str(comp["limit"][0]), mode, batching, notices, arrivals,
                               speculative=settings.get("spec_words", ""), traits=thin)
    if mode == "rate":
        tail_points = [(a, comp, 1.0)]
    if batching == "continuous":
        est = with_percentiles(est, tail_points, mode, lengths, limits if tuned else None, finite,
                               max_output=(model.max_context_len - i) if model.max_context_len else None)
    if tuned:
        est = below_limits(est, limits)
    if mode == "rate" and not tuned:
        # (a run tuned to its limits sits at the edge whatever its engine's speed: the edge already took the engine,
        # so its range is the latency range around its means, not the engine's throughput carried through the rate)
        est = rate_range(est, solve_any, lam, error_quantiles(prm, "throughput", key, thin),
                         burst=bool(np.asarray(comp["burst"])[0] > 0))
    return est


def cold_start_words(cold_s: float, engine: str, rounds, per_run_s: float) -> str:
    """The notice of a closed loop whose first round pays a cold start (``calc.serving_params.cold_start_values``):
    ``cold_s`` seconds on ``engine``'s ROCm build over ``rounds`` rounds, ``per_run_s`` (``cold_s / rounds``) on the
    run's mean TTFT. Example: "the first of the run's 10 rounds pays a cold start of 1,390 ms before its first
    tokens on vLLM's ROCm build, 139 ms on the mean TTFT (in its fixed costs; calibrated on InferenceMAX's AMD runs,
    whose mean TTFT carries it and whose median does not): a long run's first round does not count (leave rounds
    out)"."""
    return (f"the first of the run's {rounds:,.3g} rounds pays a cold start of {fmt_number(cold_s * 1e3)} ms before "
            f"its first tokens on {engine_name(engine)}'s ROCm build, {fmt_number(per_run_s * 1e3)} ms on the mean "
            "TTFT (in its fixed costs; calibrated on InferenceMAX's AMD runs, whose mean TTFT carries it and whose "
            "median does not): a long run's first round does not count (leave rounds out)")


def scheduling_notices(a: dict, params: dict, engine: str) -> list:
    """The notices of what the engine's scheduler adds to an estimate, from ``serving_components``' and
    ``combine``'s arrays at their first point (``a``, both merged; any missing key counts as none): the
    attention-DP wait before a prompt is prefilled (``adp_wait_words``; "ttft_adp_wait_s", "adp_ranks",
    "adp_timeout"), and a lockstep burst's recompute on an engine that preempts ("recompute_tokens", "whole_seqs",
    "N", "B", "I", "O"; ``calc.serving_terms.lockstep_recompute_tokens``). ``params``: a serving_params dict;
    ``engine``: its engine key. Example: "the 1,500 requests per replica in service start together and grow together, and the
    cache holds 989 whole sequences of 4,224 tokens: vLLM pauses the rest as it runs out and prefills them again
    later, 1,160 tokens per request on average (...)"."""
    def first(key):
        return float(np.ravel(a.get(key, 0.0))[0])

    out = []
    if first("ttft_adp_wait_s") > 0:
        out.append(adp_wait_words(params, engine, int(first("adp_ranks")), first("ttft_adp_wait_s"),
                                  first("adp_timeout")))
    if first("recompute_tokens") > 0:
        paused = (f" (the decode batch, {first('B'):,.0f}, counts those it decodes at once, the others waiting "
                  "paused)" if first("B") and round(first("B")) < round(first("N")) else "")
        out.append(f"the {first('N'):,.0f} requests per replica in service{paused} start together and grow together, "
                   f"and the cache holds {first('whole_seqs'):,.0f} whole sequences of {first('I') + first('O'):,.0f} "
                   "tokens: "
                   f"{engine_name(engine)} pauses the rest as it runs out and prefills them again later, "
                   f"{first('recompute_tokens'):,.0f} tokens per request on average (in TPOT's interference part; "
                   "calc.serving_terms.lockstep_recompute_tokens)")
    return out


def adp_wait_words(params: dict, engine: str, ranks: int, wait_s: float, timeout_iters: float = 0.0) -> str:
    """The notice beside an estimate under attention data parallelism: the decode steps a new request waits before
    its prompt is prefilled (``adp_prompt_wait_steps.<engine>`` of ``params``, a serving_params dict, capped at
    ``timeout_iters`` where the engine's attention-DP balance states one, as ``combine`` caps it), the time they
    come to (``wait_s``, seconds, inside TTFT's queue part) and where the number comes from (fitted on the engine's
    own rows, or pooled from the other engines' where the calibration set has none of it with attention DP).
    Example: "attention DP8: a new request waits 26.5 decode steps (530 ms) before the ranks, which step together
    through every MoE layer, take its prompt (in TTFT's queue part; fitted on TensorRT-LLM's published runs with
    attention DP)" (26.5 steps of a 20 ms TPOT); with a balance timeout of 9 steps, "waits 9 decode steps (180 ms)
    ... (... attention DP; held at the balance's timeout of 9 steps, under the fitted 26.5)"."""
    spec = params["params"][f"adp_prompt_wait_steps.{engine}"]
    whose = {"fitted": f"fitted on {engine_name(engine)}'s published runs with attention DP",
             "pooled": f"no published {engine_name(engine)} run with attention DP in the calibration set: pooled "
                       "from the other engines'"}.get(spec["provenance"], "the prior, no run informs it")
    steps = spec["value"]
    if 0 < timeout_iters < steps:
        whose += f"; held at the balance's timeout of {timeout_iters:,.0f} steps, under the fitted {steps:.3g}"
        steps = timeout_iters
    return (f"attention DP{int(ranks)}: a new request waits {steps:.3g} decode steps ({wait_s * 1e3:,.4g} ms) "
            "before the ranks, which step together through every MoE layer, take its prompt (in TTFT's queue part; "
            f"{whose})")


#: MLPerf Inference runs tuned to their latency limits (``edge_shares``): round, system, benchmark, the mean and 99th
#: percentile TTFT and TPOT and the limits, the engine that served the run and where that is read ("engine",
#: "engine_from"), with the repository, commit and path of each summary.
TUNED_RUNS_PATH = Path(__file__).resolve().parent / "data" / "mlperf_tuned_runs.csv"

#: The fewest tuned runs of one engine whose own medians ``edge_shares`` takes for it (else every run's).
ENGINE_RUNS_LEAST = 3


@lru_cache(maxsize=16)
def _tuned_ratios(engine: str = "", over: str = "limit", of: str = "mean") -> dict:
    """Each tuned run's ``of`` ("mean", "p99") over its ``over`` ("limit", "mean"), {"tpot": array, "ttft": array},
    from ``TUNED_RUNS_PATH`` (read once per engine): the runs ``engine`` served where they number
    ``ENGINE_RUNS_LEAST`` or more, else every run."""
    runs = pd.read_csv(TUNED_RUNS_PATH, keep_default_na=False)
    own = runs[runs["engine"] == engine] if engine else runs.iloc[:0]
    runs = own if len(own) >= ENGINE_RUNS_LEAST else runs
    return {m: (runs[f"{m}_{of}_ms"] / runs[f"{m}_{over}_ms"]).to_numpy(float) for m in ("tpot", "ttft")}


def edge_tail_ratio(metric: str, engine: str = "", q: float = 0.99) -> float:
    """The 99th percentile over the mean of a run tuned to its latency limits: the median over ``TUNED_RUNS_PATH``'s
    runs (MLPerf Inference v5.0 Server, a round no fitted or held-out row comes from) of their p99 TTFT over their
    mean TTFT (``metric`` "ttft") or p99 TPOT over mean TPOT ("tpot"), of the runs ``engine`` served where they
    number ``ENGINE_RUNS_LEAST`` or more, else of every run (TensorRT-LLM's 102 runs: TTFT 2.40, TPOT 1.09).
    At the edge of its limits a run's tail is its queue's, which the engine's scheduler shapes at that load. Another
    quantile ``q`` (0.5 to 1) takes the excess over the mean as an exponential tail's grows, with ln(1 / (1 - q)):
    1 + (ratio - 1) ln(1 / (1 - q)) / ln(100) (MLPerf's summaries give p90 to p99.9; the tuned runs' file keeps p99).

    Raises:
        ValueError: a metric other than "ttft" or "tpot", or ``q`` outside [0.5, 1).
    """
    if metric not in ("ttft", "tpot"):
        raise ValueError(f"edge_tail_ratio takes 'ttft' or 'tpot', got {metric!r}")
    if not 0.5 <= q < 1.0:
        raise ValueError(f"q must lie in [0.5, 1), got {q!r}")
    ratio = float(np.median(_tuned_ratios(engine, "mean", "p99")[metric]))
    return 1.0 + (ratio - 1.0) * math.log(1.0 / (1.0 - q)) / math.log(100.0)


def tuned_tail_s(mean_s: float, metric: str, engine: str = "", limit_s: float | None = None, q: float = 0.99) -> float:
    """A percentile ``q`` of a run tuned to its latency limits: its ``mean_s`` (the estimate at their edge; seconds,
    or any unit ``limit_s`` shares)
    times the tuned runs' ``edge_tail_ratio`` of ``metric`` ("ttft", "tpot") for ``engine``; at q of 0.99 or more
    under the run's 99th-percentile ``limit_s`` (a VALID run met it), but never below the mean itself (where the
    estimate's mean is above the limit)."""
    value = mean_s * edge_tail_ratio(metric, engine, q)
    if limit_s is not None and q >= 0.99:
        value = max(min(value, float(limit_s)), mean_s)
    return value


def edge_shares(engine: str = "") -> dict:
    """How far below its limits a run tuned to them sits: the median over ``TUNED_RUNS_PATH``'s runs of the mean
    TPOT over the TPOT limit ("tpot_s") and of the mean TTFT over the TTFT limit ("ttft_s"), the runs' count ("n")
    and the engine whose runs they are ("engine": ``engine``, or "" for every run). With ``engine`` (an engine key,
    "trtllm", "vllm"), the medians of the runs that engine served where there are at least ``ENGINE_RUNS_LEAST`` of
    them (TensorRT-LLM 102 runs: TPOT 0.72, TTFT 0.20; vLLM 3: TPOT 0.71, TTFT 0.51), else every run's: an engine's
    scheduler sets how long a prompt waits at the same load (vLLM's runs held their mean TTFT at half the limit, 2.5x
    TensorRT-LLM's share, their mean TPOT at the same share), so one engine's TTFT says little of another's.
    The runs are every VALID MLPerf Inference v5.0 closed-division result of its LLM benchmarks (Llama-2-70B, its
    Interactive limits, Mixtral-8x7B, Llama-3.1-405B) in the Server scenario that the results repository stores, by
    every submitter (107 runs: NVIDIA's harness on TensorRT-LLM mostly, AMD's and its partners' vLLM too). Each
    submitter raises the rate until a 99th-percentile limit binds, in steps, so the mean sits below the limit by the
    spread of the latencies and the step; v5.0 is a round no fit or held-out row of this project comes from. Medians
    of the runs tuned to the same limits alone (Mixtral's and Llama-2-70B's mean TTFT 0.13 and 0.20 of a 2 s limit,
    Llama-3.1-405B's mean TPOT 0.35 of 175 ms) followed one round's submitters too closely: on the held-out MLPerf
    v5.1 runs of Llama-3.1-405B, whose mean TPOT sat at 0.57 of that limit, 19% of the TPOT rows came within 25%
    against 58% with every run's median. Source: MLCommons inference_results_v5.0, mlperf_log_summary.txt of each
    run and its system's framework (Apache-2.0), listed with commit and path in the file."""
    ratios = _tuned_ratios(engine)
    own = len(ratios["tpot"]) < len(_tuned_ratios("")["tpot"])
    return {"tpot_s": float(np.median(ratios["tpot"])), "ttft_s": float(np.median(ratios["ttft"])),
            "n": int(len(ratios["tpot"])), "engine": engine if own else ""}


def _check_limits(latency_limits, request_rate_per_s, every_at_once: bool = False, model=None) -> dict:
    """``serving_estimate``'s ``latency_limits`` checked: {} for None, else {"ttft_s": s, "tpot_s": s} (either); a
    text naming MLPerf ("mlperf server", "MLPerf interactive") is ``model``'s benchmark's limits in that scenario
    (``calc.serving_params.mlperf_latency_limits``)."""
    if latency_limits is None:
        return {}
    if isinstance(latency_limits, str):
        scenario = mlperf_scenario(latency_limits)
        if scenario is None or not re.fullmatch(r"\s*mlperf\s+(server|interactive)\s*", latency_limits.lower()):
            raise ValueError(f"latency_limits {latency_limits!r}: as text, 'mlperf server' or 'mlperf interactive' "
                             "(MLPerf Inference's limits for the model's benchmark in that scenario; Offline has no "
                             "latency limits); otherwise a dict of the limits in seconds")
        preset = model_preset_id(model.name) if isinstance(model, ModelConfig) else None
        named = mlperf_latency_limits(preset, latency_limits)
        if named is None:
            raise ValueError(f"latency_limits {latency_limits!r}: MLPerf Inference has no {scenario} benchmark of "
                             f"{preset or getattr(model, 'name', model)}; its {scenario} benchmarks are of "
                             + ", ".join(mlperf_benchmark_models(scenario)) + "; give a dict of the limits in seconds")
        latency_limits = named
    if every_at_once:
        raise ValueError("latency_limits describe a run at a finite request rate (MLPerf's Server scenario); a rate "
                         "of inf sends every request at once, an offline run with no rate to tune")
    if request_rate_per_s is None:
        raise ValueError("latency_limits describe a run at a request rate (MLPerf's Server scenario): give "
                         "request_rate_per_s too")
    if not isinstance(latency_limits, dict) or not latency_limits or set(latency_limits) - {"ttft_s", "tpot_s"}:
        raise ValueError('latency_limits must be a dict with "ttft_s" and/or "tpot_s" (99th-percentile limits in '
                         f"seconds); got {latency_limits!r}")
    return {k: check_positive_number(v, f"latency_limits[{k!r}]") for k, v in latency_limits.items()}


def slower_engine(a: dict, k: float) -> dict:
    """``combine``'s arrays for an engine whose every time is ``k`` times theirs (``a`` computed at ``k`` times the
    rate: Little's law in the slower clock, ``rate_range``): the times and their parts times ``k``, the bound's parts
    kept (the roofline does not move) and the difference, ``(k - 1) x bound``, in the efficiency part, so the parts
    still add up; requests and tokens per second over ``k``."""
    out = dict(a)
    for ph in ("tpot", "ttft"):
        for part in ("fixed", "interference", "draft", "queue", "estimate"):
            if f"{ph}_{part}" in a:
                out[f"{ph}_{part}"] = k * np.asarray(a[f"{ph}_{part}"])
        out[f"{ph}_efficiency"] = k * np.asarray(a[f"{ph}_efficiency"]) + (k - 1.0) * np.asarray(a[f"{ph}_bound"])
        for key in FIXED_PARTS:
            if f"{ph}_fixed_{key}" in a:
                out[f"{ph}_fixed_{key}"] = k * np.asarray(a[f"{ph}_fixed_{key}"])
    out["e2e_s"] = k * np.asarray(a["e2e_s"])
    for key in ("round_s", "itl_mean_s", "itl_median_s"):
        if key in a:
            out[key] = k * np.asarray(a[key])
    if "ttft_adp_wait_s" in a:
        out["ttft_adp_wait_s"] = k * np.asarray(a["ttft_adp_wait_s"])
    out["requests_per_s"] = np.asarray(a["requests_per_s"]) / k
    out["output_tokens_per_s"] = np.asarray(a["output_tokens_per_s"]) / k
    return out


def edge_speed(times, limits: dict, q_throughput: tuple, steps: int = 10,
               shares: dict | None = None) -> tuple[float, str, bool]:
    """(k, words, at_capacity): the engine, among those the estimate's throughput range admits (every time ``k`` times the
    estimate's, ``k`` from ``exp(-q_throughput[1])`` to ``exp(-q_throughput[0])``, as in ``rate_range``), that runs at
    the edge of ``limits`` ({"ttft_s", "tpot_s"}: 99th-percentile limits, seconds) as a run tuned to them does: the
    smallest ``k`` at which the mean TPOT reaches ``edge_shares()["tpot_s"]`` of its limit or the mean TTFT
    ``edge_shares()["ttft_s"]`` of its limit, by bisection on log k (``steps`` halvings; the largest ``k`` short of
    the edge, to 2^-steps of the range's log width); the range's slowest engine where none reaches it, its fastest
    where even that passes it. An engine that does not keep up with the rate is past the edge (a VALID run kept up):
    ``times(k)``, (mean TPOT, mean TTFT) in seconds of the engine ``k`` times slower at the run's rate (``k x`` the
    estimate's times at ``k x`` the rate), is (inf, inf) for it. ``words`` says which it is, with k. Why: at a rate near capacity a few percent in the step is a large error in
    the batch (the held-out MLPerf Server runs: the step within 8% at the batch their means imply, the estimate at
    their rate up to 2.8x off); a tuned run says where on that steep curve it sits.
    Where the range's engines run out of capacity before either mean reaches its share (the slowest that keeps up,
    the next one a little slower not keeping up, is still short of them), the limits do not say where the run sits:
    it was held by its capacity, or by a 99th percentile its means do not show, and the slowest engine that keeps up
    sits where the step diverges. The estimate's own engine is then taken (``k = 1``; the slowest that keeps up where
    even that one does not) and ``at_capacity`` is True: ``tuned_means`` does not raise its TPOT. On the held-out
    MLPerf v5.1 Server runs of Llama-3.1-8B on 8 B200 (TPOT 20-28 ms under a 100 ms limit) and of Mixtral-8x7B and
    Llama-2-70B whose edge is so held (70 TPOT and 70 TTFT rows), 64 TPOT rows came within 25% against 46 with the
    slowest engine that keeps up, and 42 TTFT rows against 36.
    ``shares`` ({"tpot_s", "ttft_s"}: the means over the limits taken as the edge) replaces ``edge_shares()``
    (bench/bench_serving_misses.py compares other edges)."""
    shares = shares or edge_shares()

    def reach(k):
        tpot, ttft = times(k)
        have = {"tpot_s": tpot, "ttft_s": ttft}
        return max(have[m] / (shares[m] * limits[m]) for m in ("tpot_s", "ttft_s") if m in limits)

    k_lo, k_hi = math.exp(-q_throughput[1]), math.exp(-q_throughput[0])
    span = f"its throughput range takes engines whose times are {k_lo:.2f}x to {k_hi:.2f}x the estimate's"
    first = reach(k_lo)
    if first >= 1.0:
        return k_lo, (f"even the fastest engine of the estimate's range ({span}) is past that edge, so the one "
                      f"whose times are {k_lo:.2f}x the estimate's is taken"), math.isinf(first)
    last = reach(k_hi)
    if last <= 1.0:
        return k_hi, (f"even the slowest engine of the estimate's range ({span}) stays short of that edge, so the "
                      f"one whose times are {k_hi:.2f}x the estimate's is taken; limits this loose for this rate are "
                      "odd for a run tuned to them (it would have raised its rate until one bound): if the run was "
                      "not tuned to them, leave them out"), False
    lo, hi, capped = math.log(k_lo), math.log(k_hi), math.isinf(last)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        at_mid = reach(math.exp(mid))
        if at_mid >= 1.0:
            hi, capped = mid, math.isinf(at_mid)
        else:
            lo = mid
    k = math.exp(lo)
    if capped:
        # the range's engines run out of capacity before either mean reaches its share: the run was held by its
        # capacity or by a tail the means do not show, so the limits do not place it on that steep curve; the
        # estimate's own engine is taken (or the slowest that keeps up, where even the estimate's does not)
        taken = ("the estimate's own engine is taken" if k >= 1.0
                 else f"the estimate's own engine would not keep up, so the one whose times are {k:.2f}x the "
                      "estimate's, the slowest that keeps up, is taken")
        return min(k, 1.0), (f"no engine of the estimate's range reaches those shares short of its capacity (the one "
                             f"whose times are {k:.2f}x the estimate's is the slowest that keeps up with the rate; "
                             f"{span}), so the limits do not say where it runs: {taken}"), True
    return k, f"the engine whose times are {k:.2f}x the estimate's runs at that edge ({span})", False


def spread_ttft_s(ttft_s: float, wait_s: float, limits: dict) -> float:
    """The mean TTFT ``edge_speed`` compares with its share of the TTFT limit, seconds: ``ttft_s`` itself, or, where
    ``wait_s`` > 0 of it is a set wait (the attention-DP wait of ``adp_prompt_wait_steps.<engine>`` decode steps,
    which every request pays and so does not spread its 99th percentile), the rest of it over the rest of the limit,
    scaled back to the whole limit: ``(ttft - wait) x limit / (limit - wait)``. A run tuned to its limits holds the
    spread part of its TTFT at its share of what the limit leaves it.
    Example: TTFT 400 ms of which 300 ms is the wait, limit 2 s: 100 x 2000 / 1700 = 117.6 ms against the share."""
    limit = limits.get("ttft_s")
    if wait_s <= 0 or not limit:
        return ttft_s
    return (ttft_s - wait_s) * limit / max(limit - wait_s, 1e-9)


def edge_of_limits(solve, lam: float, limits: dict, q_throughput: tuple, q_latency: tuple, engine: str = ""):
    """(components, arrays, notice): the estimate at ``lam`` requests/s per replica of a run tuned to ``limits``: the
    engine at their edge (``edge_speed``, its arrays ``slower_engine``'s), its means at their shares of the limits
    within the latency range ``q_latency`` (``tuned_means``), and the notice of both. ``solve``: (components, arrays,
    beyond) at a rate per replica (``_solve_rate``, or the Measurements page's row at that rate), never refused (past
    capacity: at the batch limit, ``beyond`` true).

    Raises:
        ValueError: where ``solve`` refuses the rate (a layout or length the model cannot take)."""
    seen = {}

    def at(k):
        if k not in seen:
            seen[k] = solve(lam * k)
        return seen[k]

    def times(k):
        _, a, beyond = at(k)
        if beyond:  # past its capacity, taken at its batch limit: an engine this slow does not keep up
            return math.inf, math.inf
        return k * float(np.asarray(a["tpot_estimate"])[0]), spread_ttft_s(
            k * float(np.asarray(a["ttft_estimate"])[0]), k * float(np.ravel(a.get("ttft_adp_wait_s", 0.0))[0]),
            limits)

    shares = edge_shares(engine)
    k, where, capped = edge_speed(times, limits, q_throughput, shares=shares)
    comp, a, _ = at(k)
    tuned, mean_words = tuned_means(slower_engine(a, k), limits, q_latency, capped, shares=shares)
    return comp, tuned, unmeetable_words(tuned, limits) + f"{edge_words(limits, k, where, shares)}; {mean_words}"


def unmeetable_words(tuned: dict, limits: dict) -> str:
    """The opening of a tuned run's notice where its limits cannot be met: a mean of ``tuned`` (arrays of
    ``tuned_means``: tpot_estimate, ttft_estimate in s) above its 99th-percentile limit (``limits``: ttft_s,
    tpot_s) means the 99th percentile is above it too, so no run at this rate on this deployment meets them; ""
    where every mean is under its limit.
    Example: TPOT limit 5 ms, mean 6.6 ms: "these latency limits cannot be met here: the estimate's mean TPOT
    (6.6 ms) is above its 5.0 ms limit ..."."""
    over = [f"mean {name.upper()} ({1e3 * mean:,.3g} ms) is above its {1e3 * limit:,.3g} ms limit"
            for name in ("ttft", "tpot")
            for limit, mean in [(limits.get(f"{name}_s"), float(np.ravel(tuned[f"{name}_estimate"])[0]))]
            if limit and mean > limit]
    if not over:
        return ""
    return ("these latency limits cannot be met here: the estimate's " + " and its ".join(over) + ", and a 99th "
            "percentile lies above its mean, so no run at this rate on this deployment stays under them (a faster "
            "GPU, more GPUs per replica or a smaller model could); ")


def tuned_means(a: dict, limits: dict, q_latency: tuple, at_capacity: bool = False,
                shares: dict | None = None) -> tuple[dict, str]:
    """(arrays, words): the means of a run tuned to ``limits`` ({"ttft_s", "tpot_s"}: 99th-percentile limits,
    seconds), from ``a``, the arrays (``combine``'s, or any dict with "tpot_estimate", "ttft_estimate" and "e2e_s",
    seconds, scalars or arrays) of the engine at their edge (``edge_of_limits``): each mean a limit states is taken
    at its share of that limit (``shares``, ``edge_shares``' of the engine where ``edge_of_limits`` calls it; every
    run's by default: TPOT 0.72, TTFT 0.20 of the limit, medians of the tuned MLPerf runs) where that lies within the estimate's latency range around ``a``'s value (``a`` x exp(``q_latency``), the
    engine's cross-validated (low, high) log(measured / predicted) latency quantiles, ``error_quantiles``), else at
    that range's nearer end, and never below the bound ("bound_tpot_s", "bound_ttft_s" where ``a`` has them). With
    ``at_capacity`` (``edge_speed``: the range's engines run out of capacity short of the limits' shares) the TPOT
    is not raised: the limits did not bind, and a slower decode step would soon not keep up.
    Why: the tuned runs hold both means near their shares whichever limit binds (half of the 107 v5.0 runs within
    0.60-0.84 of the TPOT limit and 0.14-0.28 of the TTFT limit), while the estimate's ratio of TTFT to TPOT at a
    loaded engine is off in
    both directions (TTFT under 1.4 decode steps against 1.9-3.7 measured for short prompts; the long prompts of
    Llama-3.1-405B reach the TTFT share first in the estimate, the TPOT share first in the runs), so the limit the
    estimate finds binding says little about the other mean; the range keeps the answer the model's.

    The breakdown still adds up: a mean raised puts the difference in TTFT's queue (the wait of a run held at its
    limits, beyond the modelled queue) or TPOT's efficiency (a slower step, as ``slower_engine``); a mean lowered
    scales its parts above the bound (and the fixed cost's parts) down together. e2e follows: TTFT + (e2e - TTFT) x
    the TPOT's ratio (the O - 1 later tokens). Requests and tokens per second stay the rate's.
    ``shares`` ({"tpot_s", "ttft_s"}, either) replaces ``edge_shares()``; a mean whose share it leaves out keeps
    ``a``'s value.
    """
    shares = shares or edge_shares()
    spread = {m: (float(v.min()), float(v.max())) for m, v in _tuned_ratios(shares.get("engine", "")).items()}
    out = dict(a)
    said = []
    old = {m: np.asarray(a[f"{m}_estimate"], dtype=float) for m in ("tpot", "ttft")}
    for m in ("tpot", "ttft"):
        if f"{m}_s" not in limits or f"{m}_s" not in shares:
            continue
        target = shares[f"{m}_s"] * limits[f"{m}_s"]
        est = old[m]
        top = 0.0 if (at_capacity and m == "tpot") else q_latency[1]
        new = np.clip(target, est * math.exp(q_latency[0]), est * math.exp(top))
        if f"bound_{m}_s" in a:
            new = np.maximum(new, np.asarray(a[f"bound_{m}_s"], dtype=float))
        out[f"{m}_estimate"] = new
        if f"{m}_bound" in a:
            bound = np.asarray(a[f"{m}_bound"], dtype=float)
            up = new >= est
            scale = np.where(up, 1.0, (new - bound) / np.maximum(est - bound, 1e-30))
            for part in ("fixed", "efficiency", "interference", "draft", "queue"):
                if f"{m}_{part}" in a:
                    out[f"{m}_{part}"] = np.asarray(a[f"{m}_{part}"], dtype=float) * scale
            if m == "ttft" and "ttft_adp_wait_s" in a:  # the attention-DP wait is inside the queue part
                out["ttft_adp_wait_s"] = np.asarray(a["ttft_adp_wait_s"], dtype=float) * scale
            for key in FIXED_PARTS:
                if f"{m}_fixed_{key}" in a:
                    out[f"{m}_fixed_{key}"] = np.asarray(a[f"{m}_fixed_{key}"], dtype=float) * scale
            extra = "queue" if m == "ttft" else "efficiency"
            out[f"{m}_{extra}"] = out[f"{m}_{extra}"] + np.where(up, new - est, 0.0)
        name = "TPOT" if m == "tpot" else "TTFT"
        first_new, first_est = float(np.ravel(new)[0]), float(np.ravel(est)[0])
        bound_first = float(np.ravel(a.get(f"bound_{m}_s", 0.0))[0])
        share = f"{shares[f'{m}_s']:.4f} x {fmt_number(limits[f'{m}_s'] * 1e3)} ms"
        if abs(first_new - target) <= 1e-9 * target:
            said.append(f"{name} {fmt_number(first_new * 1e3)} ms, its share ({share})")
            continue
        where = ("the engine's own, held by its capacity" if first_new < target and top == 0.0
                 else "the top of that range" if first_new < target
                 else "the bound" if first_new <= bound_first
                 else "the bottom of that range")
        engine = ("" if abs(first_new - first_est) <= 5e-3 * first_est
                  else f"; the engine taken {fmt_number(first_est * 1e3)} ms")
        said.append(f"{name} {fmt_number(first_new * 1e3)} ms, {where} (its share {share} = "
                    f"{fmt_number(target * 1e3)} ms{engine})")
    rest = np.asarray(a["e2e_s"], dtype=float) - old["ttft"]
    out["e2e_s"] = out["ttft_estimate"] + rest * out["tpot_estimate"] / np.maximum(old["tpot"], 1e-30)
    lo, hi = math.exp(q_latency[0]), math.exp(q_latency[1])
    named = [m for m in ("tpot", "ttft") if f"{m}_s" in limits and f"{m}_s" in shares]
    seen = ", ".join(f"{m.upper()} {spread[m][0]:.2f}-{spread[m][1]:.2f}" for m in named)
    words = (f"{'each mean' if len(named) > 1 else 'the mean'} then goes to the share of its limit that the tuned runs "
             f"hold it near whichever limit binds ({seen} of their limits), kept within the latency range around the "
             f"value of the engine taken ({lo:.2f}x to {hi:.2f}x of it): " + "; ".join(said))
    return out, words


def below_limits(est: ServingEstimate, limits: dict) -> ServingEstimate:
    """``est`` (a run tuned to ``limits``, {"ttft_s", "tpot_s"}, 99th-percentile limits in seconds) with the top of
    each range a limit names held at that limit: a VALID run met its limits, and a mean lies below its 99th
    percentile, so a mean above its limit is not a value of such a run (never below the estimate itself)."""
    out = {}
    for m in ("tpot", "ttft"):
        if f"{m}_s" in limits:
            tb = getattr(est, m)
            out[m] = replace(tb, high_s=float(max(min(tb.high_s, limits[f"{m}_s"]), tb.estimate_s)))
    return replace(est, **out)


def edge_words(limits: dict, k: float, where: str, shares: dict | None = None) -> str:
    """The notice of an estimate at the edge of ``limits`` (``edge_speed``'s ``k`` and ``where``; ``shares``:
    ``edge_shares``' of the engine, every run's by default)."""
    shares = shares or edge_shares()
    named = [m for m in ("ttft", "tpot") if f"{m}_s" in limits]
    said = " and ".join(f"{m.upper()} {fmt_number(limits[f'{m}_s'] * 1e3)} ms" for m in named)
    sits = " or ".join(f"its mean {m.upper()} is about {shares[f'{m}_s']:.2f} of the {m.upper()} limit"
                       for m in ("tpot", "ttft") if m in named)
    whose = f"{engine_name(shares['engine'])}'s " if shares.get("engine") else ""
    return (f"a run tuned to its latency limits (99th percentile: {said}) sits where {sits} (the medians of "
            f"{whose}{shares['n']} MLPerf Inference v5.0 runs so tuned): {where}")


def rate_range(est: ServingEstimate, solve, lam: float, q_throughput: tuple, burst: bool = False) -> ServingEstimate:
    """``est`` (an estimate at ``lam`` requests/s per replica; a ``ServingEstimate``, times in seconds) with its TTFT,
    TPOT and e2e ranges carried through
    the rate's fixed point: an engine whose every time is ``k`` times the estimate's, at ``lam``, runs as the
    estimate's engine at ``k x lam`` with its clock stretched by ``k`` (a change of time unit in Little's law
    ``B = lambda x e2e(B)`` and in the queue's load ``lambda x s``), so the range's ends are ``k x`` the times
    ``solve(k x lam)`` gives (``solve``: ``_solve_rate``'s (components, arrays, notices) at a rate per replica, past
    capacity at the batch limit, never refused nor taken as a burst) for ``k = exp(-q)``, ``q_throughput`` the (low, high) quantiles of the cross-validated
    log(measured / predicted) throughput of the engine: an engine that serves ``exp(q)`` times the estimate's tokens
    per second takes ``exp(-q)`` times its time per step. Far below the engine's
    capacity this is the plain range (the times hardly change with the rate); near it, where a benchmark raises the
    rate until a latency limit binds, the batch grows with ``k`` and the range's top with it: in the held-out MLPerf
    Inference Server runs, the decode step's estimate at the batch the measured means imply (Little's law) was
    within 8% of the measured TPOT at each source's median but DeepSeek-R1's, while the estimate at the rate was up
    to 2.8x off (at
    the latency limit's edge a small error in a step is a large one in the batch). Where ``k x lam`` is beyond what
    the estimate's engine serves, the top is ``k x`` the times at its batch limit, and a notice says that an engine
    that much slower would not keep up (its queue, so its TTFT, grows). With ``burst`` (``est`` itself a finite
    run's requests piled up as one burst, past the estimate's throughput range) ``est`` is returned as it is: a
    burst's times do not follow the rate. The low end never goes below the bound.
    Source: a change of time unit scales a queue's arrival and service rates together (Kleinrock, Queueing Systems
    vol. 1, 1975, section 1.3: Little's law and the load rho = lambda x s are invariant)."""
    if burst:  # ``est`` is a burst of the run's requests (``_solve_rate``): the plain range
        return est
    ends, words = {}, None
    for side, k in (("low", math.exp(-q_throughput[1])), ("high", math.exp(-q_throughput[0]))):
        try:
            _, a, beyond = solve(lam * k)
        except ValueError:  # a layout or length the model refuses at this rate too: keep the plain range's end
            a, beyond = None, []
        if side == "high" and beyond:
            words = (f"at {fmt_number(est.requests_per_s)} requests/s an engine whose step is {k:.2f}x the "
                     "estimate's (the top of its throughput range) would not keep up: the range's top is such an "
                     "engine's times with the requests piling up, its TTFT growing")
        ends[side] = (k, a)

    def widened(low: float, high: float, key: str, floor: float = 0.0):
        for side, (k, a) in ends.items():
            if a is not None:
                t = k * float(np.asarray(a[key])[0])
                low, high = (min(low, max(t, floor)), high) if side == "low" else (low, max(high, t))
        return float(low), float(high)

    def breakdown(tb: TimeBreakdown, which: str) -> TimeBreakdown:
        low, high = widened(tb.low_s, tb.high_s, f"{which}_estimate", tb.bound_s)
        return replace(tb, low_s=low, high_s=high)

    e2e_low, e2e_high = widened(est.e2e_low_s, est.e2e_high_s, "e2e_s")
    return replace(est, tpot=breakdown(est.tpot, "tpot"), ttft=breakdown(est.ttft, "ttft"), e2e_low_s=e2e_low,
                   e2e_high_s=e2e_high,
                   notices=est.notices + ((words,) if words else ()))


def estimate_from_arrays(a: dict, params: dict, engine: str, replicas: int, gpus_per_replica: float, output_len: float,
                         concurrency: float, batch_limit: str, mode: str, batching: str, notices=(),
                         arrivals: str = "", speculative: str = "", traits=()) -> ServingEstimate:
    """A ``ServingEstimate`` from ``combine``'s arrays at their first point (per replica: ``decode_batch``, the
    TTFT and TPOT parts, e2e_s, requests_per_s, output_tokens_per_s, bound_tpot_s, bound_ttft_s), with the
    ranges of ``engine``'s cross-validated errors (``error_quantiles`` of ``params``), each bounded at the
    roofline (``bounded_range``): throughput per GPU of a replica and for all ``replicas``; the bound's
    throughput is the decode batch over the bound's TPOT (decode steps only). ``serving_estimate`` and
    ``calc.comparison.row_estimate`` (one measurement row's weighted points) both build theirs here. ``traits``: the
    model's thinly covered architecture traits (``calc.serving_params.thin_traits``), whose held-out spread widens
    the ranges (``error_quantiles``)."""
    q_lat, q_thr = (error_quantiles(params, "latency", engine, traits),
                    error_quantiles(params, "throughput", engine, traits))
    ttft, tpot = _breakdown(a, "ttft", 0, q_lat), _breakdown(a, "tpot", 0, q_lat)
    first = lambda k: float(np.asarray(a[k])[0])  # noqa: E731
    e2e, b = first("e2e_s"), first("decode_batch")
    per_gpu = first("output_tokens_per_s") / gpus_per_replica
    bound_per_gpu = b / first("bound_tpot_s") / gpus_per_replica
    e2e_bound = first("bound_ttft_s") + (output_len - 1) * first("bound_tpot_s")
    e2e_low, e2e_high = bounded_range(e2e, q_lat, e2e_bound, "latency")
    gpu_low, gpu_high = bounded_range(per_gpu, q_thr, bound_per_gpu, "throughput")
    return ServingEstimate(
        ttft=ttft, tpot=tpot, e2e_s=e2e, e2e_low_s=float(e2e_low),
        e2e_high_s=float(e2e_high), output_tokens_per_s=per_gpu * gpus_per_replica * replicas,
        output_tokens_per_s_per_gpu=per_gpu, per_gpu_low=float(gpu_low),
        per_gpu_high=float(gpu_high), tokens_per_s_per_user=1.0 / tpot.estimate_s,
        requests_per_s=first("requests_per_s") * replicas, bound_tpot_s=first("bound_tpot_s"),
        bound_ttft_s=first("bound_ttft_s"), bound_output_tokens_per_s_per_gpu=bound_per_gpu,
        decode_batch=b, concurrency=float(concurrency), batch_limit=batch_limit,
        engine=engine, mode=mode, batching=batching, notices=tuple(notices), arrivals=arrivals,
        speculative=speculative, itl_s=first("itl_mean_s") if "itl_mean_s" in a else tpot.estimate_s,
        itl_median_s=first("itl_median_s") if "itl_median_s" in a else tpot.estimate_s)


#: The percentile whose times ``with_percentiles`` gives, and the words of its output lengths by convention.
TAIL_QUANTILE = 0.99
_TAIL_OUTPUTS = {"fixed": "every output of the one length",
                 "varied": "outputs ending at end-of-text, taken as exponential around their mean (the 99th "
                           "percentile output 4.6x the mean)"}


def with_percentiles(est: ServingEstimate, points: list, mode: str, lengths: str, limits: dict | None = None,
                     finite: bool = False, max_output: float | None = None) -> ServingEstimate:
    """``est`` with its 99th percentiles (``ServingEstimate.ttft_p99_s`` ...) from the run's points (``points``: a
    list of (``combine``'s arrays, ``serving_components``' arrays, share of the requests), a closed loop's burst and
    steady state; ``calc.serving_tails.run_quantile_s``) and the words of their conventions. Outputs: one length at
    ``lengths="fixed"``, else ending at end-of-text (exponential: ``output_quantile_ratio``). A run tuned to its
    latency ``limits``: TTFT and TPOT are its means times the tuned MLPerf runs' p99 over their mean
    (``edge_tail_ratio``), under the limits. An offline run (``mode``) or a ``finite`` one gives no TTFT or
    end-to-end percentile: its requests' waits grow with their number. ``max_output``: the most output tokens a
    request can have (the model's trained context less the prompt), where the exponential quantile would pass it.
    The ITL's percentile is at least TPOT's scaled by the mean ITL over the mean TPOT (a request's TPOT is the mean
    of its gaps)."""
    q = TAIL_QUANTILE
    take = [(point_values(a, 0), point_values(g, 0), w) for a, g, w in points]
    ratio = output_quantile_ratio(q, None, lengths != "fixed")
    o_mean = float(np.ravel(points[0][1]["O"])[0])
    capped = max_output is not None and ratio * o_mean > max(float(max_output), o_mean)
    if capped:
        ratio = max(float(max_output), o_mean) / o_mean
    tails = {m: run_quantile_s(m, take, q, ratio) for m in TAIL_METRICS}  # seconds, by metric
    words = [_TAIL_OUTPUTS["fixed" if lengths == "fixed" else "varied"]
             + (f", capped at the {max_output:,.0f} the model's trained context leaves after the prompt" if capped
                else "")]
    if len(points) > 1:
        words.append(f"the run's first-round burst ({points[0][2]:.0%} of its requests) beside its steady state")
    if limits:
        tails["ttft_ms"] = tuned_tail_s(est.ttft.estimate_s, "ttft", est.engine, limits.get("ttft_s"))
        tails["tpot_ms"] = tuned_tail_s(est.tpot.estimate_s, "tpot", est.engine, limits.get("tpot_s"))
        words.append("TTFT and TPOT: the means times the tuned MLPerf runs' 99th percentile over their mean "
                     f"({edge_tail_ratio('ttft', est.engine):.2f} and {edge_tail_ratio('tpot', est.engine):.2f}), "
                     "under the limits")
    # a percentile is at least the mean the estimate gives (its paused requests' waits, which the tails leave out),
    # and the ITL's at least TPOT's in the ITL's units (a request's TPOT is the mean of its gaps)
    for m, mean in (("ttft_ms", est.ttft.estimate_s), ("tpot_ms", est.tpot.estimate_s), ("itl_ms", est.itl_s),
                    ("e2e_ms", est.e2e_s)):
        tails[m] = max(tails[m], mean)
    if est.tpot.estimate_s > 0:
        tails["itl_ms"] = max(tails["itl_ms"], tails["tpot_ms"] * est.itl_s / est.tpot.estimate_s)
    if mode == "offline" or finite:
        tails["ttft_ms"] = tails["e2e_ms"] = math.nan
        words.append("no TTFT or end-to-end percentile offline: the waits grow with the run's number of requests")
    return replace(est, ttft_p99_s=float(tails["ttft_ms"]), tpot_p99_s=float(tails["tpot_ms"]),
                   itl_p99_s=float(tails["itl_ms"]), e2e_p99_s=float(tails["e2e_ms"]), tail_words="; ".join(words))


def pile_up_words(rate_text: str, n_requests: float, sustained_text: str) -> str:
    """The notice of a finite run whose requests pile up (``_solve_rate``; the held-out table's rows alike,
    ``calc.serving_fit.predict_rows``): ``rate_text`` requests/s sent, ``n_requests`` in the run (every replica's),
    ``sustained_text`` requests/s served by them as one burst.
    Example: ("100", 1000, "2.3") -> "100 requests/s is more than this deployment serves: the run's 1,000 requests
    pile up as if sent at once, and the times and throughput are those of that burst (about 2.3 requests/s)"."""
    return (f"{rate_text} requests/s is more than this deployment serves: the run's {n_requests:,.0f} requests pile up "
            f"as if sent at once, and the times and throughput are those of that burst (about {sustained_text} "
            "requests/s)")


def _solve_rate(model, accelerator, i, o, lam, layout, weight_dtype, kv_dtype, settings, interconnect, p,
                costs, graphs, q_high: float = 0.0, n_requests: float = math.inf):
    """(components, combined arrays, notices): the requests in service N that Little's law gives at ``lam``
    requests/s per replica, N = lam x e2e(N), by bisection on N in [1e-6, the batch limit] (e2e grows with N, so
    the root is unique); the decode batch B is N, or less where the engine preempts (``serving_components``).

    A rate above the estimate's capacity but within its throughput range (at most ``exp(q_high)`` times it,
    ``q_high`` the high quantile of the cross-validated log(measured / predicted) throughput of all engines
    pooled: an engine's own can be wide where a few runs went astray) is taken at the
    batch limit with a notice: engines measured that much above the estimate (MLPerf Inference v4.1's Server
    runs of Llama-2-70B on 8 H200s sustained 101-114 requests/s where the estimate's limit is 87). Beyond the
    range it raises ValueError: no engine in the data set served that much more than its estimate.

    A finite run of ``n_requests`` per replica never has more than that many in flight (``calc.serving_fit``'s rate
    rows stop their grid there). A run too short to reach the rate's steady state (fewer requests than it keeps in
    flight, N < lam x e2e) on an engine that keeps up at its batch limit is taken with its N in service, without a
    notice: the run's size holds it, not the engine (Llama-3.1-8B on one H100, 1,024 / 128 tokens, 10 requests at 10
    requests/s: TTFT 51 ms, not a burst's 194 ms); its throughput is then read as the fit reads such runs, all N in
    flight and completed at that load (``rate_run_requests_per_s`` without keeping up). At a rate beyond the top of
    that range, with more requests than the batch holds or prompts sent faster than even that range's top prefills
    them (rate x a prompt's time, ``combine``'s prompt_s), its requests pile up as a burst of
    ``n_requests`` sent at once would (a closed loop of that many, ``burst=True``: its times and its throughput,
    below the rate), with a notice, rather than refused; where the batch holds them all and their prompts are
    prefilled as they arrive, none waits for a slot: the times are those with all of them in service (TensorRT-LLM
    v0.14's Llama-3.1-70B on 4 H100 at 32 requests/s, 500 requests: TTFT 1.2 s measured, a burst's 9 s). (Taking
    every rate past the estimate's capacity as a burst put the held-out MLPerf Server runs, which sit at the edge of capacity with hundreds of thousands of requests,
    at TTFTs of minutes: 42% -> 33% of their TTFTs within 25%.) Where the burst itself serves faster than the rate
    (its prompts prefilled up front, its batch full), the requests do not pile up: the rate is taken at the batch
    limit, as within the range, with a notice that says so (Llama-3.1-8B on one H100, 1,024 / 128 tokens: about 28
    requests/s at the batch limit at random arrivals, 37 as one burst; 100,000 requests at 35/s have a TTFT under a
    second, not the 22 minutes of a backlog)."""
    def at(bb):
        comp = serving_components(model, accelerator, i, o, [bb], layout, weight_dtype, kv_dtype, settings,
                                  interconnect, rate=True, matmul_scale=settings["matmul_scale"])
        return comp, combine(comp, p, costs, graphs, rate_per_s=lam)

    comp, a = at(min(1e12, float(n_requests)))
    cap = float(comp["N"][0])
    if math.isfinite(n_requests) and lam * float(a["e2e_s"][0]) > cap:
        full_comp, full_a = at(1e12)
        full_cap = float(full_comp["N"][0])
        if full_cap > cap and lam * float(full_a["e2e_s"][0]) <= full_cap:
            # a run of fewer requests than the rate keeps in flight in its steady state, on an engine that keeps
            # up with it: its N are in flight together before the first finishes, none waiting for a slot, so the
            # times are those with the run's N in service (the run's size holds it, not the engine's capacity)
            comp["C"], comp["held_by_run"] = np.asarray([cap]), np.asarray([1.0])
            return comp, a, []
    rate_text = fmt_number(lam * layout.replicas)
    top = math.exp(max(q_high, 0.0))
    within = lam * float(a["e2e_s"][0]) <= cap * top  # within the estimate's throughput range of what it serves
    queued = cap < n_requests or lam * float(a["prompt_s"][0]) > top
    if lam * float(a["e2e_s"][0]) > cap and math.isfinite(n_requests) and not within and queued:
        # the run's requests arrive faster than even the top of the estimate's range serves, and either more of them
        # than its batch holds or faster than even that top prefills their prompts: they queue, piling up as a burst
        # sent at once (``burst_schedule``: prompts prefilled up front, a closed loop of N clients), whose times and
        # throughput the run measures, not the rate's
        burst_comp = serving_components(model, accelerator, i, o, [float(n_requests)], layout, weight_dtype,
                                        kv_dtype, settings, interconnect, matmul_scale=settings["matmul_scale"],
                                        burst=True)
        burst_a = combine(burst_comp, p, costs, graphs)
        burst_rps = float(burst_a["requests_per_s"][0])
        sustained = fmt_number(burst_rps * layout.replicas)
        if burst_rps < lam:
            return burst_comp, burst_a, [pile_up_words(rate_text, n_requests * layout.replicas, sustained)]
        # the same requests sent at once are served faster than they arrive: the engine keeps up, at its batch
        # limit, so they never pile up (a burst's TTFT of minutes would contradict its own throughput)
        comp["C"] = np.asarray([cap])
        return comp, a, [f"{rate_text} requests/s is above the estimate's capacity at this rate "
                         f"(about {fmt_number(cap / float(a['e2e_s'][0]) * layout.replicas)} requests/s at its batch "
                         f"limit of {cap:,.0f} sequences per replica, {comp['limit'][0]}), but the run's requests sent "
                         f"at once would be served at about {sustained} requests/s: the times are those at the batch "
                         "limit; at this rate the engine runs at its edge and its queue, so its TTFT, may grow"]
    if lam * float(a["e2e_s"][0]) > cap:
        sustained = cap / float(a["e2e_s"][0]) * layout.replicas
        what = (f"about {fmt_number(sustained)} requests/s with all the run's {n_requests * layout.replicas:,.0f} "
                "requests in flight" if cap >= n_requests else
                f"about {fmt_number(sustained)} requests/s at its batch limit of {cap:,.0f} sequences per replica "
                f"({comp['limit'][0]})")
        if not within and not math.isfinite(n_requests):
            raise ValueError(f"{rate_text} requests/s is more than this deployment serves: {what}, "
                             f"{top:.2f}x that at the top of the estimate's range; the queue would grow without bound")
        comp["C"] = np.asarray([cap])
        if not within:
            # every request of the run in service at once (its batch holds them all) and their prompts prefilled as
            # fast as they arrive: none waits for a slot, the batch grows and with it TPOT (TensorRT-LLM v0.14's
            # Llama-3.1-70B on 4 H100 at 32 requests/s, 500 requests of 467 prompt tokens: 16 completed per second,
            # TTFT 1.2 s, not a burst's 9 s)
            return comp, a, [f"{rate_text} requests/s is more than this deployment serves, {what}: the batch holds "
                             "them all and their prompts are prefilled as fast as they arrive, so none waits for a "
                             "slot and the times are those with all of them in service"]
        return comp, a, [f"{rate_text} requests/s is above the estimate's capacity, {what}, but "
                         f"within its range (engines measured up to {top:.2f}x the estimate's throughput): the times "
                         "are those at the batch limit; at this rate the engine runs at its edge and its queue, so "
                         "its TTFT, may grow"]
    lo, hi = 1e-6, cap
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        comp, a = at(mid)
        if lam * float(a["e2e_s"][0]) > mid:
            lo = mid
        else:
            hi = mid
    comp, a = at(max(hi, 1.0))
    comp["C"] = np.asarray([hi])
    return comp, a, []


def max_concurrency_within_tpot(model: ModelConfig, accelerator: Accelerator, input_len: int, output_len: int,
                                tpot_target_s: float, up_to: int, **kwargs) -> int:
    """The largest concurrency B in 1 .. ``up_to`` whose estimated TPOT (``serving_estimate`` with ``kwargs``:
    layout, dtypes, engine, batching, interconnect) is at most ``tpot_target_s`` seconds; 0 when even B = 1
    misses it or cannot be estimated. The estimate's TPOT grows with B (more cache read and more prompts mixed
    into each step), so B is found by bisection: about log2(``up_to``) estimates. The serving model's
    counterpart of ``calc.cost.max_batch_for_tpot`` (the course's week 11, step 4, on the bound).
    Example: Llama-3-8B, 8,192 - 256 prompt and 256 output tokens on an H100 at 10 ms: the bound's B = 17 gives
    an estimated 22 ms per token, and the largest B that meets 10 ms by the estimate is 6.

    Raises:
        ValueError: a non-positive target.
    """
    target = check_positive_number(tpot_target_s, "tpot_target_s")

    def meets(b: int) -> bool:
        try:
            return serving_estimate(model, accelerator, input_len, output_len, concurrency=b,
                                    **kwargs).tpot.estimate_s <= target
        except ValueError:
            return False

    if int(up_to) < 1 or not meets(1):
        return 0
    lo, hi = 1, int(up_to)  # meets(lo)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if meets(mid) else (lo, mid - 1)
    return lo


def pareto_mask(x, y) -> np.ndarray:
    """Boolean mask of the points no other point beats on both axes (both maximised), vectorised:
    sort by x descending (ties by y descending), keep a point when its y exceeds every y before it.
    Used by the serving frontier here and by ``calc.layout_choice.throughput_frontier``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.lexsort((-y, -x))
    ys = y[order]
    best_before = np.concatenate([[-np.inf], np.maximum.accumulate(ys)[:-1]])
    mask = np.empty(len(x), dtype=bool)
    mask[order] = ys > best_before
    return mask


def frontier_concurrencies(up_to: float, points: int = 256) -> np.ndarray:
    """The concurrencies a frontier is drawn at: ``points`` values from 1 to ``up_to`` on a geometric grid, rounded
    to whole clients and unique (a fractional concurrency is no run: between two whole numbers the model's decode
    batch and prompt schedule change in steps, which drew a staircase at the curve's low end). 1-D float array.
    Example: frontier_concurrencies(1024.0) starts 1, 2, 3 and ends 1,024, with 159 values."""
    return np.unique(np.round(np.geomspace(1.0, float(up_to), int(points))))


def serving_frontier(model: ModelConfig, accelerator: Accelerator, input_len: int, output_len: int,
                     concurrencies=None, tp: int = 1, pp: int = 1, ep: int = 1, weight_dtype: str | None = None,
                     kv_dtype: str = "bf16", engine: str = "vllm", cuda_graphs: bool = True,
                     interconnect=None, params: dict | None = None, engine_version: str = "",
                     engine_options: dict | None = None, speculative=None, trait_range: bool = True) -> pd.DataFrame:
    """Throughput per GPU against tokens/s per user over concurrency (InferenceX's axes), vectorised.

    One replica of (tp, pp, ep) under continuous batching; ``concurrencies`` per replica (default
    ``frontier_concurrencies(1024)``: 256 values from 1 to 1,024 on a geometric grid, rounded and unique, 159 of
    them). Replicas scale both axes away.

    Returns:
        DataFrame, one row per concurrency: concurrency, decode_batch, batch_limit, tpot_s, ttft_s, e2e_s,
        tokens_per_s_per_user (1 / TPOT) with _low/_high, tokens_per_s_per_gpu with _low/_high,
        bound_tokens_per_s_per_user and bound_tokens_per_s_per_gpu (the roofline at the same batch:
        upper bounds), pareto (no other concurrency better on both axes). ``df.attrs["notices"]``:
        fallbacks taken.

    ``engine_version``, ``engine_options`` and ``speculative``: as in ``serving_estimate``; so are a model, an
    accelerator or a dtype given by name. ``trait_range``: a model with a thinly covered architecture trait
    (``calc.serving_params.thin_traits``) takes that trait's held-out spread into its range (default); False keeps the
    cross-validated range (the measured page, whose rows that spread comes from).

    Raises:
        ValueError: invalid lengths, layout, concurrencies or engine options; a model that does not fit.
    """
    model, accelerator, weight_dtype, kv_dtype, _ = _named(model, accelerator, weight_dtype, kv_dtype)
    i, o = _check_workload(input_len, output_len, None, None, "continuous")
    prm, layout, key, settings, notices, accelerator = _setup(model, accelerator, weight_dtype, tp, pp, ep, 1, engine,
                                                              params, engine_version, engine_options, trait_range)
    if concurrencies is None:
        c = frontier_concurrencies(1024.0)
    else:
        c = np.asarray(concurrencies, dtype=float)
        if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)) or np.any(c <= 0):
            raise ValueError("concurrencies must be a non-empty 1-D array of positive numbers")
    settings, spec_notices = _with_speculative(model, speculative, prm, key, settings, engine_options, float(c.max()),
                                               engine_version)
    notices = notices + spec_notices
    p = param_values(prm)
    comp = serving_components(model, accelerator, i, o, c, layout, weight_dtype, kv_dtype, settings, interconnect,
                              matmul_scale=settings["matmul_scale"])
    a = combine(comp, p, engine_costs(p, key), 1.0 if cuda_graphs else 0.0)
    thin = thin_traits(prm, model, key, weight_dtype) if trait_range else ()
    q_lat, q_thr = error_quantiles(prm, "latency", key, thin), error_quantiles(prm, "throughput", key, thin)
    gpus = layout.gpus_per_replica
    tpot, per_gpu = a["tpot_estimate"], a["output_tokens_per_s"] / gpus
    # tokens/s per user is 1 / TPOT: its range is the latency quantiles' reciprocal
    user_low, user_high = bounded_range(1.0 / tpot, (-q_lat[1], -q_lat[0]), 1.0 / a["bound_tpot_s"], "throughput")
    gpu_low, gpu_high = bounded_range(per_gpu, q_thr, comp["B"] / a["bound_tpot_s"] / gpus, "throughput")
    df = pd.DataFrame({
        "concurrency": c, "decode_batch": comp["B"], "batch_limit": comp["limit"], "tpot_s": tpot,
        "ttft_s": a["ttft_estimate"], "e2e_s": a["e2e_s"], "tokens_per_s_per_user": 1.0 / tpot,
        "tokens_per_s_per_user_low": user_low, "tokens_per_s_per_user_high": user_high,
        "tokens_per_s_per_gpu": per_gpu, "tokens_per_s_per_gpu_low": gpu_low, "tokens_per_s_per_gpu_high": gpu_high,
        "bound_tokens_per_s_per_user": 1.0 / a["bound_tpot_s"],
        "bound_tokens_per_s_per_gpu": comp["B"] / a["bound_tpot_s"] / gpus})
    df["pareto"] = pareto_mask(df["tokens_per_s_per_user"].to_numpy(), df["tokens_per_s_per_gpu"].to_numpy())
    df.attrs["notices"] = tuple(notices)
    return df
