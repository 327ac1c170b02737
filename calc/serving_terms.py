"""Terms the serving model adds to the roofline's bound, each a physical cost the bound does not charge.

- ``burst_schedule``: a finite burst of requests sent at once (prompts prefilled up front, then decode).
- ``attention_extra_s``: a prompt's attention runs at the KV cache's precision, not the weights'.
- ``unquantized_matmul_extra_s``: the layers an experts-only checkpoint (gpt-oss MXFP4) leaves in bf16.
- ``dequantized_in_kernel``: whether a format's matmuls decode their weights inside the kernel (weight-only).
- ``attention_dp_imbalance_s``: the wait of attention-DP ranks for the rank that prefills a prompt.
- ``over_pcie`` / ``spans_domains``: which link a replica's collectives use (for their efficiency).
- ``overlap_fixed_s`` / ``overlaps_schedule``: the host's share of a step hidden behind the GPU's by engines that
  prepare step k + 1 while step k runs (SGLang's overlap scheduler, vLLM's async scheduling).
- ``eager_prefill``: whether an engine's prompt steps run outside its decode CUDA graphs.
- ``finite_run_waves`` / ``finite_run_tail_s`` / ``spread_outputs`` / ``lockstep_closed_loop``: the shape of a
  benchmark's run: a finite run of one length in waves, one whose outputs end at end-of-text draining its last
  batch, and a closed loop of fixed lengths moving in lockstep bursts.
- ``burst_cold_start_s`` / ``with_cold_start``: a closed loop's first round after its warm-up paying a cold start
  (the engines' ROCm builds).

Used by ``calc.serving`` (the estimate) and ``calc.serving_fit`` (the calibration). Every time is in
seconds per GPU.
"""
from __future__ import annotations

import csv
import datetime as _dt
import math

import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from .collectives import default_interconnect, get_interconnect
from .hardware import Accelerator, with_matmul
from .layout import Layout
from .models import ModelConfig
from .roofline import attention_flops_array


def burst_admission_context(input_len: float, output_len: float, output_ratio: float, output_clip: float) -> int:
    """Tokens of cache a request of a finite burst must find free to be admitted, for an engine that admits by
    what a request needs now rather than by its whole sequence: its prompt, plus ``output_ratio`` of its output
    clipped at ``output_clip`` tokens, at least one token.

    vLLM (V1 scheduler, ``KVCacheManager.allocate_slots``): blocks for the prompt's scheduled tokens, ratio 0;
    a later shortage preempts running requests (their first tokens are already out). SGLang (``PrefillAdder``,
    python/sglang/srt/managers/schedule_policy.py): the prompt plus ``min(max_new_tokens,
    CLIP_MAX_NEW_TOKENS_ESTIMATION = 4096) x new_token_ratio``, the ratio starting at
    ``SGLANG_INIT_NEW_TOKEN_RATIO`` = 0.7 (python/sglang/global_config.py) on an idle server. TensorRT-LLM's
    ``GUARANTEED_NO_EVICT`` reserves the whole ``I + O`` instead (``serving_components``' ``reserve_full_sequence``).

    Raises:
        ValueError: a negative ratio or clip.
    """
    if output_ratio < 0 or output_clip < 0:
        raise ValueError(f"output_ratio and output_clip must be >= 0; got {output_ratio!r}, {output_clip!r}")
    return max(1, int(round(float(input_len) + float(output_ratio) * min(float(output_len), float(output_clip)))))


def lockstep_recompute_tokens(n_requests, n_full: float, full_len: float) -> np.ndarray:
    """Tokens each request of a lockstep burst recomputes, on average, on an engine that admits a request by what it
    needs now and pauses running ones when its cache runs out (vLLM's preemption by recompute, SGLang's retraction):
    ``n_requests`` N (array) start together and every context grows by one token a step, so the cache of K =
    ``n_full`` x ``full_len`` tokens (``n_full``: the sequences it holds at their whole length ``full_len`` = I + O)
    runs out at the context K / N, and from then on the engine keeps K / c of them at context c, pausing the rest
    (dN = K / c^2 dc of them at c). A paused request is prefilled again over its context when the cache frees, so the
    run recomputes sum of c over the paused = integral of c K / c^2 dc from K / N to I + O = K ln(N / n_full)
    tokens, K ln(N / n_full) / N per request; none where N <= n_full (the cache holds every whole sequence). Every
    request is taken to run its whole output; outputs that end sooner free cache sooner, so for spread outputs
    (ShareGPT's) this is an upper estimate.
    Example: N = 1,500 requests of 128 + 4,096 tokens where the cache holds 989 whole ones: K = 4,177,536 tokens,
    4,177,536 x ln(1,500 / 989) / 1,500 = 1,160.0 tokens per request.
    Source: vLLM's scheduler (vllm/v1/core/sched/scheduler.py: on a failed block allocation it preempts the lowest-
    priority running request, freeing its blocks; it is rescheduled later and its tokens computed again), Kwon et al.,
    PagedAttention (SOSP 2023), section 4.5, recomputation; the integral is this project's.

    Raises:
        ValueError: ``full_len`` not positive or ``n_full`` negative."""
    if full_len <= 0 or n_full < 0:
        raise ValueError(f"full_len must be > 0 and n_full >= 0; got {full_len!r}, {n_full!r}")
    n = np.asarray(n_requests, dtype=float)
    if n_full < 1:
        return np.zeros_like(n)
    k = n_full * full_len
    return np.where(n > n_full, k * np.log(np.maximum(n, 1.0) / n_full) / np.maximum(n, 1.0), 0.0)


def burst_schedule(batch, input_len: float, output_len: float, token_budget: float):
    """A finite burst's schedule: ``batch`` requests (array) admitted at once, their prompts prefilled
    up front in K = ceil(B x I / budget) steps of the token budget (a request whose prompt is in the
    k-th step has its first token at the end of that step, and decodes in the K - k prefill steps that
    follow), then decoded B at a time in steps free of prompts (Yu et al., Orca, OSDI 2022, section 4:
    iteration-level scheduling; TensorRT-LLM's in-flight batching with ``max_num_tokens``).

    Means over the burst's requests (k uniform on 1..K, m = O - 1 gaps between output tokens):
    the prefill steps before a request's first token ``(K + 1) / 2``; the prompts prefilled by then,
    its own included, ``B (K + 1) / (2K)``; of its m gaps, ``min(K - k, m)`` fall in a prefill step
    that carries B / K prompts, so the prompts per decode step are ``f = (B / K) S / (K m)`` with
    ``S = sum_{j=0}^{K-1} min(j, m)`` (B (K - 1) / (2 K m) when K - 1 <= m; 0 when K = 1 or m = 0).
    Then mean TTFT + m x mean ITL = K prefill steps + m decode steps, the burst's duration.

    Returns:
        (f, n_chunks, pf_n): arrays like ``batch``.
    """
    b = np.asarray(batch, dtype=float)
    k = np.maximum(np.ceil(b * float(input_len) / float(token_budget)), 1.0)
    m = float(output_len) - 1.0
    j_max = k - 1.0
    # sum_{j=0}^{K-1} min(j, m): j(j+1)/2 up to j = min(K-1, m), then m for each j beyond
    lo = np.minimum(j_max, m)
    total = lo * (lo + 1.0) / 2.0 + np.maximum(j_max - m, 0.0) * m
    f = np.where(m > 0, (b / k) * total / (k * max(m, 1.0)), 0.0)
    return f, (k + 1.0) / 2.0, b * (k + 1.0) / (2.0 * k)


def attention_extra_s(model: ModelConfig, accelerator: Accelerator, prompt_len: float, layout: Layout,
                      weight_dtype: str, kv_dtype: str) -> float:
    """Seconds per GPU that one prompt's causal attention (scores and weighted values) takes beyond what
    the bound charged it: the bound runs every prefill FLOP at the weights' matmul peak
    (``Accelerator.compute_flops``), but attention multiplies activations by the cached K and V, so it
    runs in the cache's precision: fp8 where the KV cache is fp8 and the accelerator has fp8 engines
    (FP8 context attention, TensorRT-LLM and FlashAttention-3), else bf16. For fp4 or fp8 weights over a
    bf16 cache that is 2-4x slower than the bound's rate. 0 when both precisions agree.
    ``attention_flops / width x (1 / peak_attention - 1 / peak_weights)``
    (``calc.roofline.attention_flops_array``; Dao, FlashAttention-3, 2024, section 3.3 for fp8 attention).
    Example: gpt-oss-120b (MXFP4 experts, bf16 cache), a 32,768-token prompt on one B200 with fp4 engines:
    attention FLOPs / 2.25e15 - attention FLOPs / 9.0e15.
    """
    kv = str(kv_dtype).lower()
    attn = "fp8" if kv == "fp8" and "fp8" in accelerator.peak_flops_per_s else "bf16"
    gap = 1.0 / accelerator.peak_flops(attn) - 1.0 / accelerator.compute_flops(weight_dtype)
    if gap <= 0:
        return 0.0
    return float(attention_flops_array(model, float(prompt_len), 1.0, 0)) / layout.width * gap


#: Weight formats whose checkpoints quantize only the routed experts: gpt-oss's MXFP4 config.json lists
#: ``modules_to_not_convert`` self_attn, mlp.router, embed_tokens and lm_head (they stay bf16).
EXPERTS_ONLY_FORMATS = ("mxfp4",)


def unquantized_matmul_extra_s(model: ModelConfig, accelerator: Accelerator, tokens, head_tokens, layout: Layout,
                               weight_dtype: str):
    """Seconds per GPU that the matmuls a checkpoint leaves in bf16 take beyond what the bound charged them:
    the bound runs every matmul at the weights' format (``Accelerator.compute_flops``), but an MXFP4
    mixture of experts (gpt-oss) quantizes only its routed experts; attention projections and the LM head
    run at bf16's peak (4x slower than fp4 engines on Blackwell). ``tokens``: tokens through the layers
    (a prompt's I, a decode step's B; float or array); ``head_tokens``: tokens through the LM head.
    ``2 x (tokens x P_dense + head_tokens x V x D) / width x (1 / peak_bf16 - 1 / peak_weights)``, with
    P_dense the active parameters less the routed experts' (n_moe x k x 3 x D x d_ff), the embedding and
    the head. 0 for other formats, dense models, and where bf16 runs as fast (no fp4 engine: Hopper
    runs MXFP4 weight-only at bf16's rate already). Source: openai/gpt-oss-120b config.json,
    quantization_config.modules_to_not_convert.
    Example: gpt-oss-120b on one B200 with fp4 engines, one token: P_dense = 5.712e9 - 36 x 4 x 3 x 2880^2
    - 2 x 201,088 x 2880 = 0.970e9; 2 x (0.970e9 + 0.579e9) x (1 / 2.25e15 - 1 / 9.0e15) = 1.03 us.
    """
    if str(weight_dtype).lower() not in EXPERTS_ONLY_FORMATS or not model.is_moe:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    gap = 1.0 / accelerator.peak_flops("bf16") - 1.0 / accelerator.compute_flops(weight_dtype)
    if gap <= 0:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    n_moe = sum(1 for k in model.ffn_kinds if k == "moe")
    head = model.vocab_size * model.d_model
    embed = 0 if model.tie_word_embeddings else head
    dense = max(model.active_params - n_moe * model.n_experts_per_token * 3 * model.d_model * model.d_ff
                - embed - head, 0)
    flops = 2.0 * (np.asarray(tokens, dtype=float) * dense + np.asarray(head_tokens, dtype=float) * head)
    return flops / layout.width * gap


def _dense_params(model: ModelConfig) -> float:
    """Active parameters outside the routed experts, the embedding and the head (attention, shared experts,
    dense layers, router)."""
    n_moe = sum(1 for k in model.ffn_kinds if k == "moe")
    head = model.vocab_size * model.d_model
    embed = 0 if model.tie_word_embeddings else head
    return float(max(model.active_params - n_moe * model.n_experts_per_token * 3 * model.d_model * model.d_ff
                     - embed - head, 0))


def attention_dp_imbalance_s(model: ModelConfig, accelerator: Accelerator, prompt_len: float, layout: Layout,
                             weight_dtype: str, prompts_per_step):
    """Seconds per GPU, at the matmul peak, that the ranks of an attention-data-parallel layout wait in each
    step for the rank prefilling prompts (divide by the prefill utilisation).

    Under attention DP each of the ``dp = layout.attention_dp`` ranks runs attention and the other non-expert
    layers for its own requests, while every MoE layer's all-to-all makes all ranks wait for the slowest
    (TensorRT-LLM's ``enable_attention_dp``; its ``attention_dp_config.enable_balance`` exists because context
    requests land unevenly on the ranks; SGLang's ``--enable-dp-attention``). The bound spreads a prompt's
    non-expert FLOPs over all ``width`` GPUs; in fact a prompt's sit on one rank. A step carrying ``f``
    prompts (``prompts_per_step``) is as long as its busiest rank's: ``ceil(f / dp)`` prompts when ``f >= 1``
    (round-robin), and for ``f < 1`` one prompt in a share ``f`` of the steps. Extra per step:
    ``(L dp - f) x D``, with ``L = f`` below one prompt per step and ``ceil(f / dp)`` above, and ``D`` one
    prompt's non-expert FLOPs (``2 I P_dense`` and its attention) over ``width`` GPUs at the peak. 0 for a
    layout without attention DP.
    Example: Qwen3-235B-A22B on 8 ranks (EP8, DP8), 5,000-token prompts, f = 4 per step: the busiest ranks
    prefill 1 prompt each, 8 - 4 = 4 prompts' worth of spread non-expert time more than the bound charged.
    """
    f = np.asarray(prompts_per_step, dtype=float)
    dp = float(layout.attention_dp)
    if dp <= 1 or not model.is_moe:
        return np.zeros_like(f)
    flops = 2.0 * float(prompt_len) * _dense_params(model) + float(attention_flops_array(model, float(prompt_len),
                                                                                          1.0, 0))
    spread_s = flops / layout.width / accelerator.compute_flops(weight_dtype)
    busiest = np.where(f < 1.0, f, np.ceil(f / dp))
    return np.maximum(busiest * dp - f, 0.0) * spread_s


#: The 4-bit float weight formats that the engines multiply on FP4 tensor cores where the accelerator has them.
FP4_FORMATS = ("nvfp4", "mxfp4", "fp4")


def engine_matmul(accelerator: Accelerator, weight_dtype: str) -> tuple[Accelerator, list[str]]:
    """The accelerator as the serving engines run ``weight_dtype``'s matmuls, with the notice to show beside the
    numbers: NVFP4 or MXFP4 weights on an accelerator with FP4 tensor cores (an "fp4" entry in its peak table:
    Blackwell, MI355X) multiply in FP4 (TensorRT-LLM's and vLLM's NVFP4 GEMMs and FP4 MoE kernels quantize the
    activations too), where calc's default convention ("auto", the course's rule for the bound) dequantizes every
    4-bit format to bf16 (W4A16). The serving model is fitted with that rule (``calc.serving_fit``), so its estimate
    follows it; an accelerator whose convention the caller chose ("weight_only", "low_precision") is kept, and so is
    any other format or an accelerator without FP4 tensor cores (MXFP4 on Hopper runs weight-only).

    Returns:
        (accelerator, notices): ``with_matmul(accelerator, "low_precision")`` and one notice where the rule applies,
        else ``accelerator`` unchanged and no notice.

    Example: B200 with nvfp4 -> FP4 peak (9.0 PFLOP/s dense, W4A4) instead of bf16's 2.25; H100 with nvfp4 -> unchanged.
    """
    w = str(weight_dtype).lower()
    if accelerator.matmul != "auto" or w not in FP4_FORMATS or "fp4" not in accelerator.peak_flops_per_s:
        return accelerator, []
    return with_matmul(accelerator, "low_precision"), [
        f"{weight_dtype} weights on {accelerator.name}: the serving estimate multiplies them on the GPU's FP4 tensor "
        "cores (W4A4), as the engines run them and as the serving model was fitted, where calc's default matmul "
        "precision ('auto', the bound's) takes 4-bit weights at bf16 (W4A16); a matmul precision set to "
        "weight-only is followed as chosen"]


def dequantized_in_kernel(accelerator: Accelerator, weight_dtype: str) -> bool:
    """True when the matmuls of ``weight_dtype`` weights are weight-only on ``accelerator``: the weights are
    stored narrower than the precision the tensor cores run (``Accelerator.compute_flops`` at bf16's peak or
    below for a quantized format), so every tile of weights is decoded to bf16 inside the matmul kernel
    before the multiply: MXFP4 or NVFP4 on Hopper (no fp4 tensor cores: OpenAI's triton_kernels
    ``matmul_ogs`` and vLLM's Marlin FP4 kernel), fp8 on an A100, int4 GPTQ/AWQ everywhere. The decode is
    extra work on the tensor-core pipeline's critical path, so a compute-bound weight-only matmul reaches
    less of the bf16 peak than a dense bf16 one (the serving model's ``weight_only_matmul`` factor).
    False for 16-bit weights and for formats the accelerator multiplies natively (fp8 on Hopper, fp4 on
    Blackwell with ``matmul="low_precision"``).
    Example: H100, mxfp4 -> True (989 TFLOP/s, bf16's peak); H100, fp8 -> False (1,979 TFLOP/s).
    """
    w = str(weight_dtype).lower()
    if w in ("fp32", "bf16", "fp16"):
        return False
    return accelerator.compute_flops(w) <= accelerator.peak_flops("bf16")


def over_pcie(accelerator: Accelerator, layout: Layout, interconnect) -> bool:
    """True when a replica's collectives inside one server run over PCIe (no NVLink / Infinity Fabric)."""
    ic = default_interconnect(accelerator) if interconnect is None else get_interconnect(interconnect)
    return ic is not None and layout.gpus_per_replica > 1 and ic.id.startswith("pcie")


def spans_domains(accelerator: Accelerator, layout: Layout, interconnect) -> bool:
    """True when a replica's collectives leave one NVLink / Infinity Fabric domain (their part between
    domains then runs on the scale-out network, ``calc.collectives.group_all_reduce_s``)."""
    ic = default_interconnect(accelerator) if interconnect is None else get_interconnect(interconnect)
    return ic is not None and layout.gpus_per_replica > ic.domain_size


def overlap_fixed_s(host_s, device_fixed_s, device_busy_s, overlap):
    """Seconds of fixed cost a step adds to its GPU work, when the engine prepares the next step on the host
    while the GPU runs this one (``overlap`` 1) or after it (0); arrays broadcast.

    ``host_s``: the step's host work (scheduling, sampler bookkeeping, per-sequence output handling: the
    engine's ``step_fixed_s + seq_fixed_s x B``); ``device_fixed_s``: its launch gaps on the GPU (per layer,
    per MoE layer); ``device_busy_s``: the step's GPU work. Without overlap the host and the GPU take turns:
    ``host + device_fixed``. With it, step k + 1 is scheduled while step k runs, so a step lasts
    ``max(host, device_busy + device_fixed)``: the fixed cost beyond the GPU work is
    ``device_fixed + max(host - device_busy - device_fixed, 0)``.
    Sources: SGLang's overlap scheduler ("zero-overhead batch scheduler", SGLang v0.4 release notes, LMSYS
    blog 2024-12-04; on by default, ``--disable-overlap-schedule`` turns it off, python/sglang/srt/server_args.py);
    vLLM's async scheduling (vllm/config/scheduler.py ``SchedulerConfig.async_scheduling``: "helps to avoid gaps
    in GPU utilization"; on by default since vllm-project/vllm#27614, tracked in #27679).
    Example: host 2.64 ms (1.28 ms + 16 x 85 us), device fixed 0.56 ms, GPU work 3.4 ms: without overlap
    3.20 ms of fixed cost; with it max(2.64 - 3.4 - 0.56, 0) + 0.56 = 0.56 ms.
    """
    host = np.asarray(host_s, dtype=float)
    dev = np.asarray(device_fixed_s, dtype=float)
    hidden = dev + np.maximum(host - np.asarray(device_busy_s, dtype=float) - dev, 0.0)
    return np.where(np.asarray(overlap, dtype=float) > 0, hidden, host + dev)


def release_tuple(text) -> tuple:
    """(major, minor, patch) of a version string such as "0.4.1", "v0.22.0" or "1.2.0rc6.post2" (1, 2, 0); () when
    none is given."""
    parts = []
    for piece in str(text or "").strip().lstrip("v").split(".")[:3]:
        digits = re.match(r"\d+", piece)  # "0rc6" is patch 0 of a release candidate, not 6
        if not digits:
            break
        parts.append(int(digits.group()))
        if digits.group() != piece:
            break
    return tuple(parts)


_RELEASE_NUMBER = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?(?:\.?(?:rc|post|dev|a|b)\d*)*)")


def release_number(text) -> str:
    """The release number a version text names, wherever it stands: "v0.10.1" -> "0.10.1", "vllm/vllm-openai:v0.22.0"
    -> "0.22.0", "sglang 0.5.2rc1" -> "0.5.2rc1", "1.2.0rc6.post2" as it is; "" when it names none ("gpt-oss-dev",
    "latest", "nightly")."""
    m = _RELEASE_NUMBER.search(str(text or "").strip())
    return m.group(1) if m else ""


_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def version_day(text):
    """The date an engine version text gives in place of a release number ("2025-11-13", "nightly-2026-02-01"),
    as a ``datetime.date``; None when it names a release number (``release_number``) or no date.
    Example: version_day("2025-11-13") = date(2025, 11, 13); version_day("0.10.1") and version_day("latest") are
    None.

    Raises:
        ValueError: a date that does not exist ("2025-13-45", "2025-02-30").
    """
    if release_number(text):
        return None
    m = _DAY.search(str(text or ""))
    if not m:
        return None
    try:
        return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        raise ValueError(f"engine_version {str(text)!r:.40} looks like a date (YYYY-MM-DD) but no such day exists; "
                         "give the run's date as 2025-11-13, or a release number such as 0.14.0") from None


def release_on(engine: str, day) -> str:
    """The latest release of ``engine`` uploaded on or before ``day`` (a ``datetime.date``; ``RELEASES_PATH``), ""
    when the table has none that early.
    Example: release_on("vllm", date(2025, 11, 13)) is the vLLM release current that day."""
    year = decimal_year(day)
    rows = [(y, t, n) for t, n, y in _releases().get(str(engine), []) if y <= year]
    return max(rows)[2] if rows else ""


def first_release(engine: str) -> str:
    """The earliest release of ``engine`` in the upload-dates table (``RELEASES_PATH``), "" when it lists none.
    Example: first_release("vllm") is vLLM's first release on PyPI; first_release("generic") is ""."""
    rows = [(y, n) for _, n, y in _releases().get(str(engine), [])]
    return min(rows)[1] if rows else ""


def overlaps_schedule(engine: str, version: str = "", attention_dp: int = 1) -> bool:
    """Whether ``engine`` at ``version`` (empty: a current build) prepares step k + 1 on the host while the GPU
    runs step k (``overlap_fixed_s``), with its default flags.

    - SGLang: from v0.4.0 (its overlap scheduler, "zero-overhead batch scheduler", LMSYS blog 2024-12-04), except
      with DP attention up to v0.4.1, whose server_args.py set ``disable_overlap_schedule = True`` under
      ``--enable-dp-attention`` ("Overlap scheduler is disabled." in its warning); later releases keep it on.
    - vLLM: from v0.14 (async scheduling made the default, vllm-project/vllm#27614, listed done in the "Async
      Scheduling Plan" issue #27679, closed before v0.14.0 of January 2026); before, ``--async-scheduling`` was
      an opt-in flag the default engine did not set.
    - TensorRT-LLM: False. Its PyTorch backend also overlaps (``disable_overlap_scheduler`` False by default,
      tensorrt_llm/llmapi/llm_args.py), but its fitted per-step cost is the device side of the step (sampling and
      the logits on the GPU, the C++ batch manager's bookkeeping being small: 9 us per sequence), which no host
      overlap hides; counting it as hidden made its rows fit worse (83.6% of them within 25% in-sample without,
      81.6% with), so the data set cannot tell its host share apart.
    Other engines: False.
    Example: overlaps_schedule("sglang", "0.4.1", attention_dp=8) is False; ("sglang", "0.4.1") is True;
    ("vllm", "0.10.0") is False; ("vllm", "0.22.0") is True.
    """
    e = str(engine).strip().lower()
    v = release_tuple(version)
    if e == "sglang":
        if v and v < (0, 4):
            return False
        return not (attention_dp > 1 and v and v <= (0, 4, 1))
    if e == "vllm":
        return not v or v >= (0, 14)
    return False


#: The first release of each engine whose speculative decoding keeps the overlap scheduler by default. SGLang's
#: server_args.py set ``disable_overlap_schedule = True`` for its EAGLE, EAGLE3 and NEXTN (MTP) drafts ("Overlap
#: scheduler is disabled because of using eagle speculative decoding"), later unless ``SGLANG_ENABLE_SPEC_V2`` was
#: set (its documentation: "Want overlap scheduler (experimental): Enable SpecV2 with SGLANG_ENABLE_SPEC_V2=True");
#: sgl-project/sglang#25464 ("[Spec] Deprecate Spec V1", merged 2026-05-16) runs every draft on the V2 worker under
#: the overlap scheduler, first in 0.5.13 (uploaded 2026-06-11; 0.5.12 was uploaded the day it merged). Engines not
#: named keep their overlap scheduling under speculative decoding.
SPECULATIVE_OVERLAP_FROM = {"sglang": (0, 5, 13)}
_SPEC_V2_ON = re.compile(r"sglang_enable_spec_v2\s*=\s*['\"]?(?:1|true)\b", re.IGNORECASE)


def speculative_schedule(engine: str, version: str, settings: dict, notes: str = "",
                         stated: bool = False) -> tuple[dict, list[str]]:
    """(settings, words): a speculative run's overlap scheduling. ``settings`` are a run's with its draft
    (``spec_tokens`` set: ``calc.speculative_serving.speculative_settings``) and its overlap scheduling for plain
    decoding (``overlap_schedule``: ``overlaps_schedule``). An engine release before
    ``SPECULATIVE_OVERLAP_FROM`` runs each verification round with the overlap scheduler off, so the round's host
    work (``overlap_fixed_s``) adds to its GPU work; the words say so. Left as they are: plain decoding, no overlap to
    begin with, a current build (empty ``version``, as ``overlaps_schedule`` takes it), a release from then on, a run
    whose ``notes`` set ``SGLANG_ENABLE_SPEC_V2=1``, or overlap scheduling the caller states (``stated``).
    Example: ("sglang", "0.5.9", {"spec_tokens": 3, "overlap_schedule": True}) -> overlap_schedule False and the
    words; ("sglang", "0.5.13", ...) and ("vllm", "0.10.0", ...) unchanged.
    Source: SPECULATIVE_OVERLAP_FROM's."""
    first = SPECULATIVE_OVERLAP_FROM.get(str(engine).strip().lower())
    v = release_tuple(version)
    if (first is None or stated or not settings.get("spec_tokens") or not settings.get("overlap_schedule")
            or not v or v >= first or _SPEC_V2_ON.search(str(notes or ""))):
        return settings, []
    release = ".".join(str(n) for n in first)
    return dict(settings, overlap_schedule=False), [
        f"no overlap scheduling under speculative decoding (SGLang before {release} turns its overlap scheduler off "
        "for EAGLE and MTP drafts unless SGLANG_ENABLE_SPEC_V2=1: each round's host work adds to its GPU work)"]


#: vLLM's first release without multi-step scheduling (vllm-project/vllm#22138, "[V0 Deprecation] Remove multi-step
#: scheduling", merged 2025-08-03, first in v0.10.1).
MULTI_STEP_REMOVED = (0, 10, 1)
#: Why a stated number of steps per scheduler call is not taken (``calc.serving``'s notice, a row's ``from_notes``).
MULTI_STEP_NOT_TAKEN = "vLLM's multi-step scheduling is its V0 engine's, in releases before 0.10.1"
#: How a run's notes say its vLLM ran the V1 engine, which never had multi-step scheduling.
_V1_WORDS = re.compile(r"vllm_use_v1\s*=\s*1|\bv1 engine\b")


def multi_step_steps(engine: str, version: str = "", stated_steps=1, notes: str = "") -> int:
    """The decode steps per scheduler call that ``engine`` at ``version`` runs when a run sets ``stated_steps``
    (vLLM's ``--num-scheduler-steps``, SGLang's ``--num-continuous-decode-steps``): ``stated_steps`` where the engine
    has the setting, else 1.

    Multi-step scheduling (vllm-project/vllm#7000, merged August 2024, RFC #6854; the v0.6.0 release blog, "vLLM
    v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction", measures it with ``--num-scheduler-steps 10``)
    schedules a decode batch once and runs it N steps on the GPU, its sampled tokens
    fed back on the device and the outputs processed once per N steps: the host's work per step
    (``step_fixed_s + seq_fixed_s x B``) is paid once per N steps, and a request that arrives meanwhile is admitted
    at the next scheduler call, N / 2 steps later on average (``calc.serving.combine``). It belongs to vLLM's
    V0 engine: from v0.8.0, whose default is V1, a run that sets the flag falls back to V0
    (``_is_v1_supported_oracle`` in vllm/engine/arg_utils.py) unless it forces V1 (``VLLM_USE_V1=1``, or notes
    that name the V1 engine: ``notes``); v0.10.1 removed it (``MULTI_STEP_REMOVED``). A current build (no
    version) has none. SGLang's ``--num-continuous-decode-steps N`` (python/sglang/srt/server_args.py, default 1:
    "Run multiple continuous decoding steps to reduce scheduling overhead. This can potentially increase throughput
    but may also increase time-to-first-token latency") does the same in every release that has it: N. Other
    engines: 1.
    Example: multi_step_steps("vllm", "0.8.5", 10) = 10; ("vllm", "0.9.1", 10, "V1 engine") = 1;
    ("vllm", "0.11.0", 10) = 1; ("sglang", "0.4.1", 10) = 10; ("trtllm", "1.0.0", 10) = 1.
    """
    steps = max(int(stated_steps), 1)
    e = str(engine).strip().lower()
    if e == "sglang":
        return steps
    v = release_tuple(version)
    if e != "vllm" or steps == 1 or not v or v >= MULTI_STEP_REMOVED:
        return 1
    return 1 if _V1_WORDS.search(str(notes).lower()) else steps


def eager_prefill(engine: str, version: str = "", compiled_engine: bool = False) -> bool:
    """Whether ``engine`` at ``version`` (empty: a current build) runs a step that carries prompt tokens outside
    the CUDA graphs it replays for decode-only batches, paying a host launch cost per layer
    (``prefill_layer_fixed_s.<engine>`` in serving_params.json, added by ``calc.serving.combine``).

    - SGLang: True (``cuda_graph_runner`` captures decode batch sizes; extend / prefill batches run eagerly unless
      the opt-in piecewise graphs are turned on).
    - vLLM: True (V1's piecewise CUDA graphs cover steps up to ``max_capture_size`` tokens, 512 by default; a
      step with a prompt chunk beyond that runs its torch.compile'd code ungraphed; the fit gives vLLM its own,
      smaller, cost).
    - TensorRT-LLM: True from 1.0, whose default backend is PyTorch (``cuda_graph_config`` graphs
      generation-only batches); False for a TensorRT engine (``compiled_engine``: built ahead of time by
      trtllm-build or trtllm-bench build, the backend of the releases before 1.0), whose context steps are one
      compiled engine call.
    Other engines: True.
    Example: eager_prefill("trtllm", "0.20.0") is False; eager_prefill("trtllm", "1.2.0") and
    eager_prefill("sglang", "0.4.1") are True.
    """
    e = str(engine).strip().lower()
    if e == "trtllm":
        v = release_tuple(version)
        return not compiled_engine and (not v or v >= (1, 0))
    return True


def finite_run_waves(n_requests: float, batch: float) -> tuple[float, float]:
    """(full waves, requests of the last partial wave) of an offline run of ``n_requests`` requests of one
    length on an engine that runs ``batch`` at once: requests of equal length admitted together finish
    together, so the run is ``floor(N / B)`` bursts of B and one burst of the ``N mod B`` left (Yu et al.,
    Orca, OSDI 2022, section 4: iteration-level scheduling admits the next requests as soon as the batch
    frees). The run's throughput is N x O over the sum of the bursts' durations
    (``calc.serving_terms.burst_schedule``), below the steady state when the last wave is small: the
    TensorRT-LLM overview's runs of 1,500 requests of 128/4096 tokens (its ``$num_requests`` table) on
    an engine holding 360 at once are 4 full waves and one of 60, decoded for as many steps.
    Example: finite_run_waves(1500, 360) = (4.0, 60.0).

    Raises:
        ValueError: a non-positive number of requests or batch.
    """
    if not (n_requests > 0 and batch > 0):
        raise ValueError(f"a finite run needs a positive number of requests and batch; got {n_requests!r}, {batch!r}")
    b = min(float(batch), float(n_requests))
    waves = math.floor(float(n_requests) / b + 1e-9)
    return float(waves), max(float(n_requests) - waves * b, 0.0)


def spread_outputs(len_dist) -> bool:
    """Whether a run's outputs end at end-of-text and so spread widely around their mean (a dataset such as
    ShareGPT, or random prompts without ignore_eos), rather than all having one length ("fixed") or lengths drawn
    from a stated narrow range ("uniform", "range ratio"): the drain of a finite run's last batch then takes many
    steps at a shrinking batch (``finite_run_tail_s``).
    Example: spread_outputs("sharegpt") and spread_outputs("random") are True; spread_outputs("fixed") and
    spread_outputs("random, range ratio 0.8 (uniform)") are False.
    """
    text = str(len_dist).strip().lower()
    return not (text.startswith("fixed") or "uniform" in text or "range ratio" in text or not text or text == "nan")


def finite_run_tail_s(n_requests, batch, output_len, step_mixed_s, step_decode_s, step_one_s, prompt_one_s):
    """Duration (s) of a finite run of N requests sent at once whose outputs end at end-of-text, on an engine
    that runs B of them at once (arrays broadcast).

    The outputs are taken as exponential with mean O (a request ends at each step with probability 1 / O, as a
    sampled end-of-text does; ShareGPT's outputs are long-tailed alike): while requests wait, the engine runs B at
    once in its steady mixed steps (``step_mixed_s``, prompts of the newcomers included): (N - B) x O / B steps;
    then its last B requests drain, the batch falling as b(t) = B exp(-t / O), the last one ending after
    O x H_B steps on average (H_B = 1 + 1/2 + ... + 1/B, the expected maximum of B exponentials; memorylessness
    makes the residuals exponential again). With a decode step affine in the batch, a + c b (a and c from the
    step at B, ``step_decode_s``, and alone, ``step_one_s``), the drain lasts O (a H_B + c B). The first B
    prompts are prefilled up front, each at its marginal cost (``prompt_one_s``: the prompt's share of the mixed
    step, or one request's TTFT when B = 1). A run of one length drains in one step instead
    (``finite_run_waves``); a long-tailed one runs at a small batch for many steps, which is why published
    ShareGPT runs of a few hundred prompts measure half the steady throughput.

    Returns:
        array of seconds; throughput = N x O / duration.
    """
    n, b, o = (np.asarray(x, dtype=float) for x in (n_requests, batch, output_len))
    b = np.maximum(np.minimum(b, n), 1.0)
    c = np.where(b > 1.0, (np.asarray(step_decode_s) - step_one_s) / np.maximum(b - 1.0, 1.0), 0.0)
    c = np.maximum(c, 0.0)
    a = np.maximum(np.asarray(step_one_s) - c, 0.0)
    harmonic = np.log(b) + np.euler_gamma + 1.0 / (2.0 * b)  # H_B to within 1 / (12 B^2)
    prompt = np.where(b > 1.0, (np.asarray(step_mixed_s) - step_decode_s) * o / np.maximum(b - 1.0, 1.0),
                      prompt_one_s)
    return np.maximum(n - b, 0.0) * o / b * step_mixed_s + o * (a * harmonic + c * b) + b * prompt


def lockstep_closed_loop(mode: str, len_dist) -> bool:
    """Whether a closed-loop run moves in lockstep waves, each a burst of its C requests
    (``calc.serving_terms.burst_schedule``): C clients with every prompt and output of one length
    (``len_dist`` "fixed", the output forced by ignore_eos). At a concurrency C the client starts C requests
    at once and sends each client's next request when its previous one completes (AIPerF docs, "Load
    Generator Options Reference": ``--concurrency`` alone sends "as fast as possible within concurrency";
    "Gradual Ramping": without a ramp the C requests start together; vllm bench serve ``--max-concurrency``
    and trtllm-bench ``--concurrency`` likewise): the first wave's prompts are prefilled together, its
    requests then decode the same number of steps and finish within the wave's few prefill steps of each
    other, so the next wave arrives as one burst again. Its TTFT is a burst's (the prompts prefilled before
    one's own, (K + 1) / 2 prefill steps of the token budget on average) rather than one step's wait, and
    its TPOT carries the wave's prefill steps. A run of random lengths, or stopping at end-of-text, spreads
    the waves out (the steady-state closed loop of ``calc.serving.combine``).
    Example: lockstep_closed_loop("concurrency", "fixed") is True; ("concurrency", "random 0.8-1.0") and
    ("rate", "fixed") are False.
    """
    return str(mode) == "concurrency" and str(len_dist).strip().lower() == "fixed"


#: Engines whose lockstep closed loops prefill each returning group of prompts together in the later rounds
#: (``groups_later_rounds``).
GROUPING_ENGINES = ("trtllm",)


def groups_later_rounds(engine: str) -> bool:
    """Whether ``engine`` (an engine key) runs the later rounds of a lockstep closed loop (one length, ``ignore_eos``,
    R rounds) as groups: the first round's burst is prefilled in K steps of the token budget, its requests finish
    as they started, K groups a step apart, and each client sends its next request at once, so the next round's
    prompts arrive as the same groups, each of min(B, floor(budget / I)) prompts, which the scheduler admits into
    one step (TensorRT-LLM's in-flight batching takes every waiting context request up to ``max_num_tokens``): a
    request's TTFT is its group's prefill step, not one prompt's after a queue of random arrivals.

    TensorRT-LLM only, on the measurements: with every engine grouped, the fit put 70.6% of the rows within 25%
    against 71.0% without (vLLM's TTFT rows of aiconfigurator's lockstep runs from 60.8% to 43.0%: vLLM's and
    SGLang's returning requests reach the scheduler spread over steps); with TensorRT-LLM alone 72.1%, and with each
    source held out 66.6% against 63.6% (held out, TensorRT-LLM's own TTFT rows of those runs went from 35.2% to
    42.5%; through the shared parameters, its v0.14 table's TTFT from 41.7% to 88.9% and vLLM's lockstep TTFT from
    43.2% to 59.7%).
    Example: groups_later_rounds("trtllm") is True; groups_later_rounds("vllm") is False.
    """
    return str(engine).strip().lower() in GROUPING_ENGINES


def lockstep_persistence(mixing_persistence, mixes_prefill):
    """The share of a lockstep closed loop's rounds after the first that stay one burst
    (``lockstep_share``'s ``persistence``), by how the engine schedules a burst's prompts.

    An engine that puts prompt chunks into decode steps (vLLM V1's chunked prefill, TensorRT-LLM's in-flight
    batching; ``mixes_prefill`` 1) gives the burst's requests their first tokens over the burst's prefill steps
    while the earlier ones already decode, so they finish steps apart and the rounds spread out: the fitted
    ``mixing_persistence``. An engine that runs a prompt batch as a step of its own and prefers it to decoding
    (``mixes_prefill`` 0: SGLang's scheduler, ``get_next_batch_to_run`` "Run prefill first if possible", mixing
    only with ``--enable-mixed-chunk``, off by default; sgl-project/sglang python/sglang/srt/managers/scheduler.py)
    prefills the whole round before any of it decodes, so every request of the round decodes in the same steps,
    finishes in the same step and sends the next round together: 1. Arrays broadcast.
    Example: lockstep_persistence(0.2, [1, 0]) is [0.2, 1.0].
    """
    m = np.asarray(mixes_prefill, dtype=float)
    return m * np.asarray(mixing_persistence, dtype=float) + (1.0 - m)


def lockstep_share(rounds, persistence):
    """The share of a lockstep closed loop's run (``lockstep_closed_loop``) that moves as one burst: its first
    round of C requests starts together (a burst, ``burst_schedule``), and each later round is a burst again
    only to the extent ``persistence`` (0 to 1) that the requests' finishing together survives: the first
    round's requests get their first tokens steps apart, finish those steps apart and start the next round's
    requests in small groups, which the engine admits as they come (the steady state of
    ``calc.serving.combine``). ``1 / R + (1 - 1 / R) x persistence`` for R rounds (arrays broadcast).
    A run's TTFT, TPOT and end-to-end time are this share of the burst's plus the rest of the steady state's.
    Example: 20 rounds (aiperf's ``--request-count`` of 20 x C after 2 x C warm-up requests, as
    aiconfigurator's generated benchmark runs) and persistence 0: 0.05 of the run is the first round's burst.
    """
    r = np.maximum(np.asarray(rounds, dtype=float), 1.0)
    return 1.0 / r + (1.0 - 1.0 / r) * np.clip(np.asarray(persistence, dtype=float), 0.0, 1.0)


def burst_cold_start_s(cold_s, rounds, share):
    """Seconds more before the first token that each request of a closed loop's burst carries on average where
    the run's first round pays a cold start of ``cold_s`` (``calc.serving_params.cold_start_s``): a run of
    ``rounds`` R rounds whose burst holds a share ``share`` of its requests (``burst_share``: 1 / R at varied
    lengths, more where later rounds stay in lockstep) spreads the first round's ``cold_s`` over the burst,
    ``cold_s / (R x share)``, so the run's mean TTFT grows by ``cold_s / R``; 0 where the rounds are not stated (a
    long run, its first round not counting) or the share is 0. Arrays broadcast.
    Example: ``burst_cold_start_s(1.4, 10, 0.1)`` = 1.4 (the first round is the burst); with rounds 20 and a
    lockstep share of 0.1545, 1.4 / 3.09 = 0.453 per burst request, 0.07 s on the run's mean."""
    r, w = np.asarray(rounds, dtype=float), np.asarray(share, dtype=float)
    ok = np.isfinite(r) & (r > 0) & (w > 0)
    return np.where(ok, np.asarray(cold_s, dtype=float) / (np.where(ok, r, 1.0) * np.where(ok, w, 1.0)), 0.0)


def with_cold_start(a: dict, extra_s) -> dict:
    """``calc.serving.combine``'s arrays with ``extra_s`` seconds (a scalar, or an array over their points) more
    before the first token (``burst_cold_start_s``): in TTFT's estimate and its fixed part, as the fixed part's own
    key "first_round" (``ttft_fixed_first_round``, beside a zero ``tpot_fixed_first_round``), in the request's own
    time (``ttft_request_s``, which ``calc.serving_tails`` does not scale by a burst's steps) and in e2e; requests
    and tokens per second are the caller's (a closed loop's C over its e2e)."""
    extra = np.asarray(extra_s, dtype=float)
    shape = np.shape(a["ttft_estimate"])
    out = dict(a)
    for key in ("ttft_estimate", "ttft_fixed", "ttft_request_s", "e2e_s"):
        if key in a:
            out[key] = np.asarray(a[key], dtype=float) + extra
    out["ttft_fixed_first_round"] = np.asarray(a.get("ttft_fixed_first_round", 0.0), dtype=float) \
        + np.broadcast_to(extra, shape)
    out["tpot_fixed_first_round"] = np.zeros(shape) + np.asarray(a.get("tpot_fixed_first_round", 0.0), dtype=float)
    return out


def slot_wait_s(n_requests, held, requests_per_s):
    """Mean wait for a free slot of a run that sends ``n_requests`` N at once to an engine that holds ``held`` B of
    them (arrays broadcast; 0 where N <= B): the first B start at once and request j > B starts when j - B requests
    have completed, (j - B) / X later at the run's X requests per second, so the N requests wait on average
    sum_{k=1}^{N-B} k / (N X) ~ (N - B)^2 / (2 N X) (Little's law on a queue that only drains). A benchmark that
    sends every request at once (``vllm bench serve --request-rate inf`` without ``--max-concurrency``) counts that
    wait in its mean TTFT and end-to-end latency.
    Example: N 1,000, B 207, X 4.53/s -> 793^2 / (2 x 1,000 x 4.53) = 69.4 s.
    """
    n = np.asarray(n_requests, dtype=float)
    b = np.asarray(held, dtype=float)
    x = np.asarray(requests_per_s, dtype=float)
    return np.where((n > b) & (x > 0), np.maximum(n - b, 0.0) ** 2 / (2.0 * n * np.maximum(x, 1e-30)), 0.0)


def slot_wait_quantile_s(q: float, n_requests, held, requests_per_s):
    """The q-quantile of ``slot_wait_s``'s waits: the requests wait 0 (the first B) or (j - B) / X (request j > B),
    so the q-quantile request, j = q N, waits max(q N - B, 0) / X (arrays broadcast).
    Example: q 0.99, N 1,000, B 207, X 4.53/s -> 783 / 4.53 = 172.8 s."""
    n = np.asarray(n_requests, dtype=float)
    x = np.asarray(requests_per_s, dtype=float)
    gap = np.maximum(float(q) * n - np.asarray(held, dtype=float), 0.0)
    return np.where(x > 0, gap / np.maximum(x, 1e-30), 0.0)


def with_slot_wait(a: dict, wait_s) -> dict:
    """``calc.serving.combine``'s arrays with ``wait_s`` seconds (``slot_wait_s``: a scalar, or an array over their
    points) of waiting for a free slot before the first token: in TTFT's estimate and its queue part and in e2e, and
    on its own as ``slot_wait_s`` (for the words that name it); requests and tokens per second are the caller's (the
    run's, which the wait does not change)."""
    extra = np.asarray(wait_s, dtype=float)
    out = dict(a)
    for key in ("ttft_estimate", "ttft_queue", "e2e_s"):
        if key in a:
            out[key] = np.asarray(a[key], dtype=float) + extra
    out["slot_wait_s"] = np.broadcast_to(extra, np.shape(a["ttft_estimate"])).copy()
    return out


#: A closed loop's length conventions (``calc.serving.serving_estimate``'s ``lengths``): "varied" lengths spread
#: the requests out (the steady state), "fixed" ones (one prompt and one output length, ``ignore_eos``) move in
#: lockstep waves (``lockstep_closed_loop``).
LENGTHS = ("varied", "fixed")


def burst_share(fixed, rounds, mixing_persistence, mixes_prefill):
    """The share of a closed loop's run whose times are a burst's (``burst_schedule``), the rest the steady
    state's: for a run of ``rounds`` x C requests (None or 0: a run long enough that its first round does not
    count), the first round is a burst and, where every request has one length (``fixed``), the later rounds
    stay one to the extent ``lockstep_persistence`` gives (``lockstep_share``); a run of fixed lengths without a
    stated number of rounds is one burst throughout (``lockstep_closed_loop``), one of varied lengths none.
    Arrays broadcast; ``calc.serving_fit`` weighs its rows' burst and steady points by it.
    Example: burst_share(True, 20, 0.11, 1) = 0.05 + 0.95 x 0.11 = 0.1545; burst_share(False, 10, 0.11, 1) = 0.1;
    burst_share(True, None, 0.11, 1) = 1.
    """
    fixed = np.asarray(fixed, dtype=float)
    if rounds is None:
        return fixed
    r = np.asarray(rounds, dtype=float)
    stated = lockstep_share(r, lockstep_persistence(mixing_persistence, mixes_prefill) * fixed)
    return np.where(r > 0, stated, fixed)


#: A rate estimate's arrivals in words (``arrivals_text``): the queue before the first token is that of random
#: arrivals; vLLM's ``vllm bench serve --request-rate`` draws them so by default (``--burstiness 1``, gamma-distributed
#: gaps with shape 1: exponential), while a client sending at even intervals (GuideLLM's ``constant`` profile) queues
#: less at the same rate.
RATE_ARRIVALS = ("at random (Poisson) at the rate, the steady state, as vllm bench serve sends them by default; a "
                 "client sending at even intervals (GuideLLM's constant profile) queues less")
#: An offline estimate's arrivals in words: every request waits from the start (trtllm-bench throughput, MLPerf
#: Offline, vLLM's offline throughput benchmark) and the engine holds as many as its batch and cache allow.
OFFLINE_ARRIVALS = "offline: every request queued from the start, the engine at its batch limit"


def arrivals_text(mode: str, lengths: str, rounds, batching: str = "continuous", grouped: bool = False) -> str:
    """How the requests arrive in an estimate, in words for the pages: a closed loop's convention (``burst_share``),
    a rate's (Poisson arrivals: ``calc.serving.combine``'s queue before the first token is M/D/1's) or an offline
    run's (every request queued from the start); the words name the convention, since benchmark tools differ in it.
    ``grouped``: the engine prefills a lockstep loop's returning groups together (``groups_later_rounds``).
    Example: arrivals_text("concurrency", "fixed", None) = "fixed lengths, a long run (rounds not given): the
    clients start together, later rounds partly in lockstep, the rest the steady state; rounds=1 is a single
    burst"; arrivals_text("concurrency", "varied", None) = "varied lengths, the
    requests spread out (a closed loop's steady state)"; arrivals_text("rate", "varied", None) starts "at random
    (Poisson)"."""
    if mode == "rate":
        return RATE_ARRIVALS
    if mode == "offline":
        return OFFLINE_ARRIVALS
    if mode != "concurrency":
        return ""
    if batching != "continuous":
        return "static batches: each batch starts and ends together"
    if rounds is not None and float(rounds) <= 1.0:
        return f"{lengths} lengths, one round of C requests: one burst, the clients starting together"
    if lengths == "fixed":
        rest = ("the rest arriving as groups the engine prefills together" if grouped else "the rest the steady state")
        if rounds is None:
            return ("fixed lengths, a long run (rounds not given): the clients start together, later rounds partly "
                    f"in lockstep, {rest}; rounds=1 is a single burst")
        return (f"fixed lengths, {float(rounds):.3g} rounds of C requests: the first round a burst, later ones partly "
                f"in lockstep, {rest}")
    if rounds is None:
        return "varied lengths, the requests spread out (a closed loop's steady state)"
    return f"varied lengths, {float(rounds):.3g} rounds of C requests: the first round a burst, the rest the steady state"


#: Release dates of the engines (calc/data/engine_releases.csv: PyPI's upload date of each release of vllm,
#: sglang and tensorrt-llm).
RELEASES_PATH = Path(__file__).resolve().parent / "data" / "engine_releases.csv"
#: The year the fitted utilisations and fixed costs describe (``software_factor`` is 1 there).
SOFTWARE_REFERENCE_YEAR = 2025.0
#: The latest release of the data set's rows (vLLM 0.22.0, 2026-05-29): a later or unnamed ("a current build")
#: release is taken at this date, since the fit has seen nothing newer.
SOFTWARE_LATEST_YEAR = 2026 + 148 / 365
#: That release, in words (the pages name it).
SOFTWARE_LATEST_RELEASE = "vLLM 0.22.0 of 2026-05-29"
#: Its day (``release_on`` names each engine's release current then).
SOFTWARE_LATEST_DAY = _dt.date(2026, 5, 29)


def decimal_year(day: _dt.date) -> float:
    """``day`` as a decimal year: 2026-01-01 is 2026.0, day d of the year 2026 + (d - 1) / 365."""
    return day.year + (day.timetuple().tm_yday - 1) / 365.0


@lru_cache(maxsize=1)
def _releases() -> dict:
    out: dict = {}
    with open(RELEASES_PATH, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            year = decimal_year(_dt.date.fromisoformat(row["released"]))
            out.setdefault(row["engine"], []).append((release_tuple(row["version"]), row["version"], year))
    return out


def release_year(engine: str, version: str) -> float:
    """The date of ``engine``'s release ``version`` as a decimal year (2026-01-01 is 2026.0), from PyPI's upload
    dates (``RELEASES_PATH``): the version itself or without its ``.post`` suffix, else the first release of its
    number ("0.20" is dated with 0.20.0, an unlisted build of 1.2.0 with 1.2.0's first), else nan (an unknown engine, a version
    without a number such as "gpt-oss-dev", or one newer than the table).
    Example: release_year("vllm", "0.12.0") = 2025 + 336 / 365 = 2025.92 (2025-12-03).
    """
    table = _releases().get(str(engine), [])
    v = str(version or "").strip().lstrip("v")
    padded = v + ".0" if re.fullmatch(r"\d+\.\d+", v) else v  # "0.20" names 0.20.0
    for name in (v, re.sub(r"\.?post\d+$", "", v), padded):  # 1.2.0rc6.post2 is dated with 1.2.0rc6
        exact = [y for _, n, y in table if n == name]
        if exact:
            return exact[0]
    want = release_tuple(v)
    if not want:
        return math.nan
    same = [y for t, _, y in table if t[: len(want)] == want]
    return min(same) if same else math.nan


def software_factor(year, gain_per_year: float):
    """The share of an engine's distance from the roofline left at release ``year`` (decimal years; nan: the
    reference year): ``exp(-gain x (min(year, SOFTWARE_LATEST_YEAR) - SOFTWARE_REFERENCE_YEAR))``. Engines close the gap
    release after release (fused kernels, wider CUDA-graph capture, overlap scheduling), so ``calc.serving.combine``
    multiplies the decode step's fixed costs by it and moves each decode utilisation u to
    ``1 / (1 + (1 / u - 1) x factor)`` (``closer_to_peak``).
    Example: gain 0.3 per year, a release of 2026.0: exp(-0.3) = 0.741 (a utilisation of 0.5 becomes 0.574).
    """
    y = np.asarray(year, dtype=float)
    y = np.where(np.isnan(y), SOFTWARE_REFERENCE_YEAR, np.minimum(y, SOFTWARE_LATEST_YEAR))
    return np.exp(-np.asarray(gain_per_year, dtype=float) * (y - SOFTWARE_REFERENCE_YEAR))


def closer_to_peak(utilisation, factor):
    """A utilisation u whose shortfall from the peak (1 / u - 1, time lost per unit of peak time) is scaled by
    ``factor``: ``1 / (1 + (1 / u - 1) x factor)`` (``software_factor``). Arrays broadcast."""
    u = np.asarray(utilisation, dtype=float)
    return 1.0 / (1.0 + (1.0 / u - 1.0) * np.asarray(factor, dtype=float))
