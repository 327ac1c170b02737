"""Weights stored and read per step, and the pieces of the memory ceiling: an accelerator's capacity
conventions and ``MemoryBudget``. The ceiling itself (``memory_budget``, ``max_batch``, one accelerator
or a layout) is in ``calc.step``."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .checks import check_choice, check_fraction, check_nonneg_number
from .dtypes import dtype_bytes
from .hardware import Accelerator
from .models import ModelConfig
from .quant import is_plain, tensor_groups, weight_bytes_by_group


def weight_bytes(model: ModelConfig, weight_dtype: str = "bf16") -> float:
    """Bytes of all the model's parameters stored in ``weight_dtype``.

    A plain dtype ("bf16", "int8", "int4", ...): ``n_params * bytes``, no scales, as the course counts
    (Llama-3-8B in bf16: 8,030,261,248 * 2 = 16.06 GB; the inference course, week 11, step 4). A block
    format of ``calc.quant`` ("q4_K_M", "mxfp4", "int4-g128", "fp8-block", "nvfp4", ...): the sum over
    tensor groups of parameters x that group's bits, scales included and the tensors the recipe keeps
    in 16 or 32 bits counted as such (``calc.quant.weight_bytes_by_group``). gpt-oss-20b in mxfp4:
    13.76 GB, its checkpoint's 13,761,264,768 tensor bytes.

    Raises:
        ValueError: unknown dtype.
    """
    per = dtype_bytes(weight_dtype, "weight_dtype")
    if is_plain(weight_dtype):
        return float(model.n_params * per)
    return float(sum(weight_bytes_by_group(model, weight_dtype).values()))


def expected_experts_touched(n_experts: int, top_k: int, n_tokens):
    """Expected number of distinct experts a batch of ``n_tokens`` tokens routes to, per layer.

    Each token picks ``top_k`` of ``n_experts`` uniformly without replacement, so an expert is missed
    by one token with probability 1 - k/E and by all with (1 - k/E)^n:
    ``E * (1 - (1 - k/E) ** n)``. Accepts a numpy array of token counts.
    """
    n = np.asarray(n_tokens, dtype=float)
    out = n_experts * (1.0 - (1.0 - top_k / n_experts) ** n)
    return float(out) if out.ndim == 0 else out


def routed_expert_params(model: ModelConfig) -> float:
    """Parameters of one routed expert summed over the MoE layers: the routed experts of
    ``calc.quant.tensor_groups`` (experts + experts_down, counted layer by layer from ``calc.layers``,
    so DeepSeek's dense first layers and Llama 4's dense interleaved layers hold none) over E.
    DeepSeek-V3: 58 MoE layers x 3 x 7,168 x 2,048 = 2,554,331,136. 0 for a dense model, a model without
    ``n_active_params`` or one whose every expert is active (all read every step).
    """
    if not model.is_moe or model.n_active_params is None or model.n_experts == model.n_experts_per_token:
        return 0.0
    g = tensor_groups(model)
    return (g["experts"] + g["experts_down"]) / model.n_experts


EMBEDDING_MODES = ("gather", "table")


def check_embedding(embedding) -> str:
    """Return ``embedding`` if it is "gather" or "table".

    Raises:
        ValueError: any other value, with the two choices explained.
    """
    return check_choice(embedding, EMBEDDING_MODES, "embedding must be 'gather' (a step reads the B rows it looks up, "
                        "as engines do) or 'table' (the course's napkin: every parameter read every step)")


def position_embedding_params(model: ModelConfig) -> int:
    """Parameters of a learned absolute position table, ``P * D`` (GPT-2's wpe: 1,024 x 768 = 786,432),
    0 for rotary or relative positions (``ModelConfig.learned_positions`` None)."""
    return (model.learned_positions or 0) * model.d_model


def input_embedding_params(model: ModelConfig) -> int:
    """Parameters of the input lookup tables that no matmul uses: ``V * D`` when untied, else 0, plus a
    learned position table ``P * D`` (``position_embedding_params``).

    The input embedding is a lookup (a gather of one row per token), not a matmul. An untied model
    (Llama 3: ``tie_word_embeddings`` false) holds a separate V x D output head that is a matmul; a
    tied model (Gemma, GPT-2) reads its one matrix as the head, so nothing of it is left to subtract.
    GPT-2's position table wpe is a lookup too (one row per position).
    Llama-3-8B: 128,256 x 4,096 = 525,336,576 parameters, 1.05 GB in bf16 (6.5% of 16.06 GB).
    GPT-2 (tied): 1,024 x 768 = 786,432, its wpe.
    """
    return (0 if model.tie_word_embeddings else model.vocab_size * model.d_model) + position_embedding_params(model)


def lookup_params_not_read(model: ModelConfig, n_tokens):
    """Parameters of the input lookup tables a step of ``n_tokens`` tokens leaves unread when it gathers:
    ``(V - min(n, V)) * D`` of an untied token table plus ``(P - min(n, P)) * D`` of a learned position
    table (a decode step of B sequences reads B rows of each; a prefill of T tokens, T rows). 0 for a
    tied model with rotary positions. Accepts an array of token counts.
    """
    n = np.asarray(n_tokens, dtype=float)
    d, v, p = model.d_model, model.vocab_size, model.learned_positions or 0
    out = np.zeros_like(n)
    if not model.tie_word_embeddings:
        out = out + (v - np.minimum(n, v)) * d
    if p:
        out = out + (p - np.minimum(n, p)) * d
    return float(out) if out.ndim == 0 else out


def weight_bytes_read(model: ModelConfig, n_tokens, weight_dtype: str = "bf16", embedding: str = "gather"):
    """Weight bytes one forward step reads when it processes ``n_tokens`` tokens.

    Dense model: all weights. Mixture of experts: the shared part (attention, embeddings, shared
    experts, router) plus the routed experts the batch touches in expectation
    (``expected_experts_touched``) in the MoE layers; one expert is ``routed_expert_params``.
    Accepts an array of token counts.

    ``embedding="gather"`` (default, what engines do): of an untied input embedding (V x D) the step
    reads only the rows it looks up, ``min(n_tokens, V) * D`` elements, and of a learned position
    table (GPT-2's wpe, P x D) ``min(n_tokens, P) * D`` (``lookup_params_not_read``); ``"table"``: the whole table,
    as the course's napkin does (every parameter read every step; the inference course, week 11, step 4).
    A tied embedding is read once, as the output head, in both modes.

    Raises:
        ValueError: unknown dtype or embedding mode.
    """
    per = dtype_bytes(weight_dtype, "weight_dtype")
    check_embedding(embedding)
    n = np.asarray(n_tokens, dtype=float)
    emb = input_embedding_params(model)
    if not is_plain(weight_dtype):  # block formats: group by group, each at its own bits
        groups = weight_bytes_by_group(model, weight_dtype)
        routed = groups["experts"] + groups["experts_down"]
        out = np.full(n.shape, sum(groups.values()) - routed)
        if routed:
            out = out + routed * expected_experts_touched(model.n_experts, model.n_experts_per_token, n) \
                / model.n_experts
        if embedding == "gather" and emb:  # the lookup tables at the embedding group's bytes per parameter
            out = out - groups["embedding"] / tensor_groups(model)["embedding"] * lookup_params_not_read(model, n)
        return float(out) if np.ndim(out) == 0 else out
    expert = routed_expert_params(model)
    if not expert:
        out = np.full(n.shape, model.n_params * per)
    else:
        e, k = model.n_experts, model.n_experts_per_token
        shared = model.n_params - e * expert
        out = (shared + expert * expected_experts_touched(e, k, n)) * per
    if embedding == "gather" and emb:
        out = out - lookup_params_not_read(model, n) * per
    return float(out) if np.ndim(out) == 0 else out


#: How much of an accelerator's memory a model may use (``capacity_bytes``).
MEMORY_CONVENTIONS = ("datasheet", "driver", "engine")


#: vLLM's default ``--gpu-memory-utilization`` (vllm/engine/arg_utils.py, EngineArgs).
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9


def capacity_bytes(accelerator: Accelerator, memory: str = "datasheet",
                   gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION) -> float:
    """Bytes of one accelerator a model replica may fill, by convention.

    "datasheet" (default, the course's convention): the marketed capacity, 80e9 B for an 80 GB H100
    (59 sequences of 8K beside Llama-3-8B; the inference course, week 11, step 4). "driver": what the
    driver reports, nvidia-smi's total (an H100 80GB: 81,559 MiB = 85,520,809,984 B), the data sheet's
    figure where none is on file (``capacity_note`` gives the sentence a page shows then). "engine": a
    serving engine's share of the driver's total, vLLM's
    ``gpu_memory_utilization`` (default 0.9: 76.97e9 B on an H100); the engine also keeps activations
    and CUDA graphs inside it, which callers pass as ``reserve_bytes``.

    Raises:
        ValueError: an unknown convention, or a utilization outside (0, 1].
    """
    check_choice(memory, MEMORY_CONVENTIONS, f"memory must be one of {', '.join(MEMORY_CONVENTIONS)} (the data-sheet "
                 "capacity, the driver's total, or a serving engine's share of it)")
    if memory == "datasheet":
        return float(accelerator.memory_bytes)
    driver = accelerator.driver_memory_bytes or accelerator.memory_bytes
    if memory == "driver":
        return float(driver)
    util = check_fraction(gpu_memory_utilization, "gpu_memory_utilization")
    if util == 0:
        raise ValueError("gpu_memory_utilization must be above 0 (vLLM's default is 0.9), got 0")
    return float(driver) * util


def capacity_note(accelerator: Accelerator, memory: str = "datasheet") -> str | None:
    """A sentence for the page when the "driver" or "engine" convention has no driver-reported total on
    file for ``accelerator`` and ``capacity_bytes`` therefore uses the data sheet's capacity; None when
    the convention's own figure is used (always for "datasheet").

    Raises:
        ValueError: an unknown convention.
    """
    check_choice(memory, MEMORY_CONVENTIONS, f"memory must be one of {', '.join(MEMORY_CONVENTIONS)}")
    if memory == "datasheet" or accelerator.driver_memory_bytes is not None:
        return None
    what = "the driver's total" if memory == "driver" else "the engine's share of the driver's total"
    return (f"No driver-reported total memory is on file for the {accelerator.name}, so {what} is taken from "
            f"the data sheet's {accelerator.memory_bytes / 1e9:,.0f} GB; a real driver usually reports a little "
            "more (an H100 80GB: 85.5 GB). Read yours with nvidia-smi or rocm-smi.")


def with_capacity(accelerator: Accelerator, memory: str = "datasheet",
                  gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
                  runtime_reserve_bytes: float = 0.0) -> Accelerator:
    """The accelerator with ``memory_bytes`` set to ``capacity_bytes`` of that convention, less
    ``runtime_reserve_bytes`` (an engine's activations and CUDA graphs), for every function that checks
    what fits; bandwidth, FLOP/s and price unchanged.

    Raises:
        ValueError: as ``capacity_bytes``; a negative reserve or one that leaves no memory.
    """
    reserve = check_nonneg_number(runtime_reserve_bytes, "runtime_reserve_bytes")
    cap = capacity_bytes(accelerator, memory, gpu_memory_utilization) - reserve
    if cap <= 0:
        raise ValueError(f"the runtime reserve ({reserve / 1e9:.2f} GB) leaves no memory of the "
                         f"{(cap + reserve) / 1e9:.2f} GB; make it smaller")
    return accelerator if cap == accelerator.memory_bytes else dataclasses.replace(accelerator, memory_bytes=cap)


@dataclass(frozen=True)
class MemoryBudget:
    """Memory use of one model replica serving ``batch`` sequences, in bytes.

    Fields: weights_bytes, kv_bytes, reserve_bytes, total_bytes (their sum), capacity_bytes (one
    accelerator), free_bytes (capacity - total; negative when it does not fit), fits (on one),
    n_accelerators (how many are needed when weights and cache are sharded evenly and each keeps
    its reserve; 1 when it fits).
    """

    weights_bytes: float
    kv_bytes: float
    reserve_bytes: float
    total_bytes: float
    capacity_bytes: float
    free_bytes: float
    fits: bool
    n_accelerators: int


def accelerators_needed(total_model_bytes: float, capacity_bytes: float, reserve_bytes: float = 0.0) -> int:
    """Accelerators needed to hold ``total_model_bytes`` (weights + KV) sharded evenly, each keeping
    ``reserve_bytes`` free: ``ceil(total / (capacity - reserve))``.

    Raises:
        ValueError: reserve not smaller than the capacity, or negative sizes.
    """
    check_nonneg_number(total_model_bytes, "total bytes")
    check_nonneg_number(reserve_bytes, "reserve_bytes")
    usable = capacity_bytes - reserve_bytes
    if usable <= 0:
        raise ValueError(f"reserve_bytes ({reserve_bytes:.3g}) must be smaller than the memory ({capacity_bytes:.3g})")
    return max(1, math.ceil(total_model_bytes / usable - 1e-12))
