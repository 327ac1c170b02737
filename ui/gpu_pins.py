"""Pinned configurations of the "Many GPUs" page: a short text per pin that travels in the URL.

A pin is ``model~gpu~tp~pp~ep~replicas~weights~kv~batch~context~price`` (preset ids, integers, dtype
names, USD per GPU-hour), e.g. ``llama-3.1-70b~h100-sxm~8~1~1~1~bf16~bf16~32~8192~3.99``. It is the
public link format of the pins: keep the order.
"""
from __future__ import annotations

import math

import pandas as pd

import calc
from calc import layout_choice
from calc.layout import make_layout

from ui import columns as table_columns, formats

SEP = "~"
FIELDS = ("model", "gpu", "tp", "pp", "ep", "replicas", "weight_dtype", "kv_dtype", "batch", "context_len",
          "price_per_hour_usd")
PIN_KEYS = ("mg_p1", "mg_p2", "mg_p3")
#: Largest value a pin may carry per whole-number part (beyond them a pin is a typing mistake).
LIMITS = {"tp": 4096, "pp": 4096, "ep": 4096, "replicas": 10**6, "batch": 10**7, "context_len": 10**8}
MAX_PRICE_USD = 10_000.0


def encode(model_id: str, gpu_id: str, tp: int, pp: int, ep: int, replicas: int, weight_dtype: str, kv_dtype: str,
           batch: int, context_len: int, price_per_hour_usd: float) -> str:
    """The pin text of a configuration (see the module docstring)."""
    return SEP.join([model_id, gpu_id, str(int(tp)), str(int(pp)), str(int(ep)), str(int(replicas)), weight_dtype,
                     kv_dtype, str(int(batch)), str(int(context_len)), f"{float(price_per_hour_usd):g}"])


def decode(text: str) -> dict:
    """The configuration of a pin text: a dict with the keys ``FIELDS`` (model and accelerator objects
    under "model_obj" and "accelerator").

    Raises:
        ValueError: a text with the wrong number of parts, an unknown model, GPU or dtype, or a number
            that is not one; the message names the part.
    """
    parts = str(text).strip().split(SEP)
    if len(parts) != len(FIELDS):
        raise ValueError(f"a pin has {len(FIELDS)} parts separated by tildes ({', '.join(FIELDS)}); "
                         f"this one has {len(parts)}")
    out = dict(zip(FIELDS, parts))
    for f in ("tp", "pp", "ep", "replicas", "batch", "context_len"):
        text = out[f].strip()
        if not text.isdigit() or len(text) > 12:
            raise ValueError(f"the pin's {f} must be a whole number between 1 and {LIMITS[f]:,}, got {text[:20]!r}")
        out[f] = int(text)
        if not 1 <= out[f] <= LIMITS[f]:
            raise ValueError(f"the pin's {f} must be between 1 and {LIMITS[f]:,}")
    try:
        out["price_per_hour_usd"] = float(out["price_per_hour_usd"])
    except ValueError:
        raise ValueError(f"the pin's price must be a number, got {out['price_per_hour_usd']!r}") from None
    if not math.isfinite(out["price_per_hour_usd"]) or not 0 <= out["price_per_hour_usd"] <= MAX_PRICE_USD:
        raise ValueError(f"the pin's price must be between 0 and {MAX_PRICE_USD:,.0f} dollars per GPU-hour")
    calc.dtype_bytes(out["weight_dtype"], "weight_dtype")
    calc.kv_dtype_bytes(out["kv_dtype"])  # a weight-only format is refused as a cache
    out["model_obj"] = calc.get_model(out["model"])
    out["accelerator"] = calc.get_accelerator(out["gpu"])
    return out


def pin_table(texts: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """Side-by-side headline numbers of the pins (one column per pin, one row per quantity), and a
    message per pin that could not be read or computed.

    Every number is ``calc.layout_choice.layout_summary``'s; rows: configuration, GPUs, fits, TPOT (ms),
    tokens/s per user, tokens/s per GPU, tokens/s (all replicas), USD per hour, USD per month,
    USD per 1M output tokens.
    """
    columns, errors = {}, []
    for i, text in enumerate(texts, start=1):
        if not text:
            continue
        try:
            p = decode(text)
            lay = make_layout(p["model_obj"], p["tp"], p["pp"], p["ep"], p["replicas"])
            s = layout_choice.layout_summary(p["model_obj"], p["accelerator"], p["context_len"], p["batch"], lay,
                                        p["weight_dtype"], p["kv_dtype"], p["price_per_hour_usd"])
        except ValueError as exc:
            errors.append(f"Pin {i}: {formats.md_escape(exc)}")
            continue
        columns[f"pin {i}"] = {
            "configuration": f"{p['model_obj'].name}, {lay.label} x {lay.replicas:,} on {p['accelerator'].name}",
            "dtypes, batch, context": f"{p['weight_dtype']}/{p['kv_dtype']}, B = {p['batch']:,}, "
                                      f"{p['context_len']:,} tokens",
            "GPUs (all replicas)": f"{s.n_gpus:,} ({s.gpus_per_replica} per replica)",
            "fits in memory": "yes" if s.fits else f"no (at most B = {s.max_batch:,})",
            table_columns.COLUMNS["tpot_s"].name: f"{s.tpot_s * 1e3:,.2f} ms",
            "tokens/s per user": f"{s.tokens_per_s_per_user:,.1f}",
            "tokens/s per GPU": formats.fmt_number(s.tokens_per_s_per_gpu),
            "tokens/s, all replicas": formats.fmt_number(s.tokens_per_s),
            table_columns.label("usd_per_hour"): "n/a" if math.isnan(s.usd_per_hour) else f"${s.usd_per_hour:,.2f}",
            "USD per month (720 h)": "n/a" if math.isnan(s.usd_per_month) else f"${s.usd_per_month:,.0f}",
            table_columns.label("usd_per_million_output"): "n/a" if math.isnan(s.usd_per_million_output)
            else f"${s.usd_per_million_output:,.3f}",
        }
    return pd.DataFrame(columns), errors
