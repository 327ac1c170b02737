"""Accelerators: the ``Accelerator`` dataclass and the presets in ``calc/data/accelerators.json``."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache

from .dtypes import DTYPE_BYTES, check_nonneg_number, check_positive_number, dtype_bytes
from .models import DATA_DIR

#: Compute dtype used for a weight dtype (DESIGN.md dtype names). Weight-only int4 (GPTQ/AWQ,
#: W4A16) dequantises to bf16 before the matmul, so its arithmetic runs at the bf16 rate.
COMPUTE_DTYPE = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "int8", "int4": "bf16"}
_FALLBACK = ("bf16", "fp16", "fp32")


@dataclass(frozen=True)
class Accelerator:
    """One accelerator (or CPU) as the roofline sees it.

    Fields:
        name: display name.
        memory_bytes: memory capacity in bytes (GB = 1e9 bytes).
        bandwidth_bytes_per_s: memory bandwidth W in bytes/s.
        peak_flops_per_s: dense peak P in FLOP/s by compute dtype, e.g. {"bf16": 989e12, "fp8": 1979e12}.
            Never the 2:4-sparse figure (reference-data section 2.1).
        price_per_hour_usd: default hourly price in USD, or None (owned hardware).
        price_date, price_source, source: provenance (not compared).
        interconnect: id of the link between accelerators of this kind in a server (an entry of the
            "interconnects" section of accelerators.json, read by ``calc.parallel``), or None for a
            device that is not ganged with others (not compared).
        driver_memory_bytes: the capacity the driver reports (nvidia-smi's total, in MiB x 2^20;
            an H100 80GB reports 81,559 MiB = 85,520,809,984 B), or None where none is on file.
        driver_memory_source: where that figure was read (not compared).

    Raises:
        ValueError: non-positive memory or bandwidth, an empty FLOP/s table, a non-positive FLOP/s,
            an unknown dtype name in the table, or a negative price.
    """

    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    peak_flops_per_s: dict
    price_per_hour_usd: float | None = None
    price_date: str | None = field(default=None, compare=False)
    price_source: str = field(default="", compare=False)
    source: str = field(default="", compare=False)
    interconnect: str | None = field(default=None, compare=False)
    driver_memory_bytes: float | None = None
    driver_memory_source: str = field(default="", compare=False)

    def __post_init__(self):
        check_positive_number(self.memory_bytes, "memory_bytes")
        check_positive_number(self.bandwidth_bytes_per_s, "bandwidth_bytes_per_s")
        if not isinstance(self.peak_flops_per_s, dict) or not self.peak_flops_per_s:
            raise ValueError("peak_flops_per_s must be a non-empty dict like {'bf16': 989e12}")
        for k, v in self.peak_flops_per_s.items():
            dtype_bytes(k, "peak_flops_per_s key")
            check_positive_number(v, f"peak_flops_per_s[{k!r}]")
        if self.price_per_hour_usd is not None:
            check_nonneg_number(self.price_per_hour_usd, "price_per_hour_usd")
        if self.driver_memory_bytes is not None:
            check_positive_number(self.driver_memory_bytes, "driver_memory_bytes")

    def __hash__(self):
        return hash((self.name, self.memory_bytes, self.bandwidth_bytes_per_s,
                     tuple(sorted(self.peak_flops_per_s.items())), self.price_per_hour_usd))

    def peak_flops(self, dtype: str = "bf16") -> float:
        """Dense peak FLOP/s for arithmetic in ``dtype``.

        Falls back to the bf16, fp16, then fp32 rate when the accelerator has no engine for
        ``dtype`` (an A100 runs fp8 weights through its bf16 tensor cores).

        Raises:
            ValueError: unknown dtype name.
        """
        dtype_bytes(dtype, "dtype")
        for d in (dtype, *_FALLBACK):
            if d in self.peak_flops_per_s:
                return float(self.peak_flops_per_s[d])
        return float(max(self.peak_flops_per_s.values()))

    def compute_flops(self, weight_dtype: str = "bf16") -> float:
        """Peak FLOP/s of the matmuls of a model stored in ``weight_dtype`` (``COMPUTE_DTYPE`` rule; a
        block format of ``calc.quant`` runs at its ``compute_dtype``: bf16 for weight-only formats,
        fp8 for fp8-block; fp4 tensor cores are not modelled)."""
        dtype_bytes(weight_dtype, "weight_dtype")
        if weight_dtype.lower() in COMPUTE_DTYPE:
            return self.peak_flops(COMPUTE_DTYPE[weight_dtype.lower()])
        from .quant import quant_format
        return self.peak_flops(quant_format(weight_dtype).compute_dtype)

    @property
    def ridge_flops_per_byte(self) -> float:
        """The roofline ridge point P/W for bf16, in FLOP/byte (about 295 on an H100 SXM)."""
        return self.peak_flops("bf16") / self.bandwidth_bytes_per_s


@lru_cache(maxsize=1)
def _catalogue() -> dict:
    raw = json.loads((DATA_DIR / "accelerators.json").read_text())
    return {k: v for k, v in raw.items() if not k.startswith("_") and k != "interconnects"}


def list_accelerators() -> list[str]:
    """Ids of the accelerator presets, in the data file's order."""
    return list(_catalogue())


def get_accelerator(name: str) -> Accelerator:
    """Return the preset ``name`` (its id such as "h100-sxm", or its display name; case-insensitive).

    Raises:
        ValueError: unknown name; the message lists the valid ids.
    """
    cat = _catalogue()
    key = str(name).strip().lower()
    for pid, entry in cat.items():
        if key in (pid, entry["name"].lower()):
            return Accelerator(**entry)
    raise ValueError(f"unknown accelerator {name!r}; valid: {', '.join(cat)}")
