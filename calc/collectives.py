"""Collectives between accelerators: the links (``Interconnect``, ``data/interconnects.json``) and the
time of a ring all-reduce, an all-to-all and a point-to-point transfer over them.

Ring all-reduce of M bytes over n ranks, ``2 (n - 1) / n x M / bw + 2 (n - 1) x latency`` (NCCL
tests, doc/PERFORMANCE.md: bus bandwidth = algorithm bandwidth x 2 (n - 1) / n); all-to-all of M
bytes per rank, ``M (n - 1) / n / bw + latency`` (the pieces to all peers in flight at once, as
DeepEP's kernels send them); point to point, ``M / bw + latency``.
Bandwidth is per GPU and direction, latency per hop. A group that does not fit in one
NVLink/NVSwitch domain communicates over the scale-out network (``link_for_group``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .checks import check_nonneg_number, check_positive_int, check_positive_number
from .hardware import Accelerator
from .models import DATA_DIR


@dataclass(frozen=True)
class Interconnect:
    """A link between accelerators, as the collectives see it.

    Fields:
        id, name: preset id ("nvlink4") and display name.
        bandwidth_bytes_per_s: per GPU and direction (vendors quote both directions summed: NVLink 4's
            "900 GB/s" is 450 GB/s each way), the figure NCCL's bus bandwidth approaches.
        latency_s: per hop of a ring (once per all-to-all: its sends overlap), a few microseconds.
        domain_size: accelerators this fabric joins (8 in an HGX server); larger groups use ``scale_out``.
        scale_out: id of the network between domains (InfiniBand, RoCE, Ethernet), or None.
        source: the vendor sheet (not compared).

    Raises:
        ValueError: non-positive bandwidth or domain, negative latency.
    """

    id: str
    name: str
    bandwidth_bytes_per_s: float
    latency_s: float
    domain_size: int
    scale_out: str | None = None
    source: str = field(default="", compare=False)

    def __post_init__(self):
        check_positive_number(self.bandwidth_bytes_per_s, "bandwidth_bytes_per_s")
        check_nonneg_number(self.latency_s, "latency_s")
        check_positive_int(self.domain_size, "domain_size")


@lru_cache(maxsize=1)
def _interconnect_table() -> dict:
    raw = json.loads((DATA_DIR / "accelerators.json").read_text())["interconnects"]
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def list_interconnects() -> list[str]:
    """Ids of the interconnect presets (the "interconnects" section of ``calc/data/accelerators.json``)."""
    return list(_interconnect_table())


def get_interconnect(name) -> Interconnect:
    """The interconnect preset ``name`` (an id such as "nvlink4"), or ``name`` itself if it is one.

    Raises:
        ValueError: unknown id; the message lists the valid ones.
    """
    if isinstance(name, Interconnect):
        return name
    table = _interconnect_table()
    key = str(name).strip().lower()
    if key not in table:
        raise ValueError(f"unknown interconnect {name!r}; valid: {', '.join(table)}")
    return Interconnect(id=key, **table[key])


def default_interconnect(accelerator: Accelerator) -> Interconnect | None:
    """The link an accelerator's servers use (its ``interconnect`` field), or None for a lone device."""
    return None if accelerator.interconnect is None else get_interconnect(accelerator.interconnect)


def resolve_interconnect(accelerator: Accelerator, interconnect) -> Interconnect | None:
    return default_interconnect(accelerator) if interconnect is None else get_interconnect(interconnect)


def link_for_group(interconnect: Interconnect, n_gpus: int) -> Interconnect:
    """The link a collective over ``n_gpus`` ranks runs at: the fabric itself when the group fits in
    one domain, else its scale-out network (the slowest hop sets a ring's pace).

    Raises:
        ValueError: the group is larger than the domain and there is no scale-out network.
    """
    if n_gpus <= interconnect.domain_size:
        return interconnect
    if interconnect.scale_out is None:
        raise ValueError(f"{interconnect.name} joins at most {interconnect.domain_size} accelerators; "
                         f"a group of {n_gpus} needs a network between domains, and none is given")
    return get_interconnect(interconnect.scale_out)


def ring_all_reduce_s(message_bytes, n_ranks: int, interconnect: Interconnect):
    """Seconds of a ring all-reduce of ``message_bytes`` over ``n_ranks`` ranks.

    ``2 (n - 1) / n x M / bw + 2 (n - 1) x latency``: a ring does a reduce-scatter and an all-gather,
    each of n - 1 steps moving M / n bytes per rank (NCCL tests, doc/PERFORMANCE.md, "bus bandwidth":
    busbw = algbw x 2 (n - 1) / n). 0 for one rank. Accepts numpy arrays of message sizes.
    Example: 16,384 B (one token of Llama-3.1-70B in bf16) over 8 H100s on NVLink 4 (450 GB/s,
    1 us per hop): 1.75 x 16,384 / 450e9 + 14 us = 14.06 us.
    """
    n = int(n_ranks)
    m = np.asarray(message_bytes, dtype=float)
    if n <= 1:
        out = np.zeros_like(m)
    else:
        out = 2.0 * (n - 1) / n * m / interconnect.bandwidth_bytes_per_s + 2.0 * (n - 1) * interconnect.latency_s
    return float(out) if out.ndim == 0 else out


def all_to_all_s(message_bytes, n_ranks: int, interconnect: Interconnect):
    """Seconds of an all-to-all where each rank holds ``message_bytes`` for all ranks (itself included).

    Each rank sends (n - 1) / n of its bytes, one piece per peer, all pieces in flight at once (GPU-
    initiated RDMA or NVLink stores to every peer): ``(n - 1) / n x M / bw + latency``, the latency paid
    once, not per peer. 0 for one rank. Check against DeepEP's low-latency kernels (deepseek-ai/DeepEP,
    docs/legacy.md, "Low-latency kernels with pure RDMA": H800 with one 400 Gb/s CX7 NIC each, 128 tokens
    x 7168 hidden x top-8 in FP8 = 7.34 MB per rank): dispatch 155 us at EP 32 and 194 us at EP 256.
    This formula on InfiniBand NDR (50 GB/s, 5 us): 31/32 x 7.34e6 / 50e9 + 5 us = 147 us at EP 32 and
    151 us at EP 256; a latency per peer would give 297 us and 1.42 ms.
    """
    n = int(n_ranks)
    m = np.asarray(message_bytes, dtype=float)
    if n <= 1:
        out = np.zeros_like(m)
    else:
        out = (n - 1) / n * m / interconnect.bandwidth_bytes_per_s + interconnect.latency_s
    return float(out) if out.ndim == 0 else out
