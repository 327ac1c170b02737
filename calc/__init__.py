"""The calculation core of the LLM Inference Explorer: numbers in, dataclasses and DataFrames out.

Pure Python + numpy/pandas (no streamlit, no torch). The public API is fixed in DESIGN.md; the
formulas follow the course material (the inference course, week 11, steps 1-4; chapter 9, LLM inference; CS336 lecture 10, Inference) and the papers cited per function.
"""
__version__ = "0.1.0"

# In the order of the layers (tests/test_layering.py), bottom to top.
from .dtypes import DTYPE_BYTES, dtype_bytes, kv_dtype_bytes
from .models import ModelConfig, get_model, list_models
from .config_json import from_hf_config
from .hardware import Accelerator, get_accelerator, list_accelerators
from .kv import attention_variants, kv_bytes_per_token, kv_cache_bytes, kv_cache_bytes_array, kv_state_bytes
from .memory import (MemoryBudget, accelerators_needed, capacity_bytes, expected_experts_touched, weight_bytes,
                     weight_bytes_read)
from .roofline import (StepTime, arithmetic_intensity_decode, arithmetic_intensity_prefill, attention_flops,
                       batch_where_cache_equals_weights, critical_batch)
from .layout import Layout, check_layout, make_layout, pipeline_stage_layers, tp_refusal
from .gpu_share import kv_bytes_per_gpu_per_token, kv_state_bytes_per_gpu, weight_bytes_per_gpu
from .step import (decode_step_time, decode_sweep, max_batch, memory_budget, prefill_time,
                   throughput_ceiling_tokens_per_s, ttft)
from .cost import (PrefixCacheSavings, cost_per_million, max_batch_for_tpot, pareto_front,
                   prefix_cache_savings, replicas_needed)
from .sweeps import (decode_split, kv_head_variants, ridge_intensity, roofline_curve, roofline_points,
                     throughput_by_kv_heads, ttft_sweep)
from .napkin import napkin_table, preset_table
from .layout_choice import refused_layouts, which_gpus
from .planning import CapacityPlan, ServingTraffic, capacity_plan
from .batching import compare_batching, simulate_batching
from .kv_paging import kv_reservation
from .request_stream import make_requests
from .bill import api_monthly_bill
from .bill_compare import break_even_dau, compare_tiers
from .product_traffic import TrafficScenario
from .spec_tables import accept_or_resample, acceptance_rate, residual_distribution
from .spec_speedup import expected_tokens_per_target_forward, walltime_speedup
from .speculative import SpecDecodeStats, speculative_generate
import functools as _functools
import inspect as _inspect

from .dtypes import DTYPE_BYTES as _PLAIN_DTYPES, canonical_dtype as _canonical_dtype

#: How the public functions resolve a name given for a model, an accelerator or a dtype (``_takes_names``): the type
#: taken as it is, the resolver for a name, and what is expected, in words (None: a value of another type passes on
#: to the function's own check).
_RESOLVERS = {"model": (ModelConfig, get_model, "a ModelConfig or a model name (a preset id or a hub id)"),
              "accelerator": (Accelerator, get_accelerator, "an Accelerator or an accelerator name (a preset id "
                                                                 "or the name nvidia-smi / rocm-smi prints)"),
              **{n: (type(None), _canonical_dtype, None) for n in ("weight_dtype", "kv_dtype", "dtype")}}


def _takes_names(fn):
    """``fn`` of DESIGN.md's public API, taking names as an engineer writes them, as ``calc.serving.serving_estimate``
    does: a model as a preset or hub id ("meta-llama/Llama-3.1-8B-Instruct": ``get_model``), an accelerator as a
    preset or device name ("NVIDIA H100 80GB HBM3": ``get_accelerator``), a dtype as torch or an engine writes it
    ("bfloat16", "fp8_e4m3", "AWQ": ``calc.dtypes.canonical_dtype``; calc's own names pass unchanged, an unknown one
    reaches ``fn``'s own check). Raises ValueError for an unknown model or accelerator name (the resolver's message,
    with the valid ones) or one of another type."""
    names = list(_inspect.signature(fn).parameters)
    where = {n: names.index(n) for n in _RESOLVERS if n in names}

    @_functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = list(args)
        for n, i in where.items():
            kind, resolve, words = _RESOLVERS[n]
            positional = i < len(args)
            value = args[i] if positional else kwargs.get(n)
            if value is None or isinstance(value, kind) or (isinstance(value, str) and value in _PLAIN_DTYPES):
                continue
            if not isinstance(value, str):
                if words is None:
                    continue
                raise ValueError(f"{n} must be {words}, got {type(value).__name__}")
            if positional:
                args[i] = resolve(value)
            else:
                kwargs[n] = resolve(value)
        return fn(*args, **kwargs)
    return wrapper


# the public API of DESIGN.md takes models, accelerators and dtypes by the names engines and configs write
(kv_bytes_per_token, kv_cache_bytes, weight_bytes, max_batch, memory_budget, decode_step_time, prefill_time,
 critical_batch) = map(_takes_names, (kv_bytes_per_token, kv_cache_bytes, weight_bytes, max_batch, memory_budget,
                                      decode_step_time, prefill_time, critical_batch))
from . import (batching, bill, collectives, efficiency, layers, operators, parallel, planning, quant, speculative, step,
               sweeps)

__all__ = [
    "ModelConfig", "Accelerator", "get_model", "list_models", "get_accelerator", "list_accelerators",
    "from_hf_config", "kv_bytes_per_token", "kv_cache_bytes", "kv_cache_bytes_array", "weight_bytes",
    "weight_bytes_read", "max_batch", "memory_budget", "MemoryBudget", "accelerators_needed",
    "expected_experts_touched", "decode_step_time", "prefill_time", "critical_batch", "cost_per_million",
    "StepTime", "decode_sweep", "pareto_front", "max_batch_for_tpot", "replicas_needed",
    "prefix_cache_savings", "PrefixCacheSavings", "attention_variants", "attention_flops", "ttft",
    "arithmetic_intensity_decode", "arithmetic_intensity_prefill", "throughput_ceiling_tokens_per_s",
    "batch_where_cache_equals_weights", "napkin_table", "preset_table", "DTYPE_BYTES", "dtype_bytes",
    "batching", "bill", "efficiency", "operators", "layers", "quant", "speculative", "sweeps", "parallel",
    "Layout", "ServingTraffic", "CapacityPlan", "capacity_plan", "which_gpus",
    "compare_batching", "kv_reservation", "make_requests", "simulate_batching",
    "TrafficScenario", "api_monthly_bill", "break_even_dau", "compare_tiers",
    "SpecDecodeStats", "accept_or_resample", "acceptance_rate", "expected_tokens_per_target_forward",
    "residual_distribution", "speculative_generate", "walltime_speedup",
    "decode_split", "kv_head_variants", "ridge_intensity", "roofline_curve", "roofline_points",
    "throughput_by_kv_heads", "ttft_sweep",
    "kv_state_bytes", "kv_dtype_bytes", "capacity_bytes", "check_layout", "make_layout", "tp_refusal",
    "pipeline_stage_layers", "kv_bytes_per_gpu_per_token", "kv_state_bytes_per_gpu", "weight_bytes_per_gpu",
    "refused_layouts",
]
