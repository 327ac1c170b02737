"""Measurement on real hardware: a causal LM timed with torch next to calc's roofline predictions.

Importing ``live`` does not import torch: the Streamlit process uses ``live.run_spec`` (what to run),
``live.worker`` (the handle to the measurement subprocess) and ``live.predict`` (pure tables);
``live.model_builder``, ``live.probe``, ``live.measure`` and ``live.runner`` import torch and run inside
the worker process. ``live.endpoint`` (no torch) measures an OpenAI-compatible serving endpoint over
HTTP, ``live.endpoint_predict`` sets calc's prediction beside it and reads vLLM / GuideLLM result files.
"""
import os

# No call leaves the machine: the hub libraries read these when first imported, in this process and in
# the measurement worker (which imports this package before transformers).
for _switch in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ.setdefault(_switch, "1")

from .run_spec import DEFAULT_PRESET  # noqa: E402, PRESET_IDS, RunSpec, default_dtype, parse_sizes

__all__ = ["DEFAULT_PRESET", "PRESET_IDS", "RunSpec", "default_dtype", "parse_sizes"]
