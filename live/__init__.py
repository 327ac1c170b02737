"""Measurement on real hardware: a causal LM timed with torch next to calc's roofline predictions.

Importing ``live`` does not import torch: the Streamlit process uses ``live.spec`` (what to run),
``live.worker`` (the handle to the measurement subprocess) and ``live.predict`` (pure tables);
``live.models``, ``live.probe``, ``live.measure`` and ``live.runner`` import torch and run inside
the worker process.
"""
from .spec import DEFAULT_PRESET, PRESET_IDS, RunSpec, default_dtype, parse_sizes

__all__ = ["DEFAULT_PRESET", "PRESET_IDS", "RunSpec", "default_dtype", "parse_sizes"]
