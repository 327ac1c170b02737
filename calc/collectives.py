"""Collectives between accelerators: the links (``Interconnect``, ``data/interconnects.json``) and the
time of a ring all-reduce, an all-to-all and a point-to-point transfer over them.

Ring all-reduce of M bytes over n ranks, ``2 (n - 1) / n x M / bw + 2 (n - 1) x latency`` (NCCL
tests, doc/PERFORMANCE.md: bus bandwidth = algorithm bandwidth x 2 (n - 1) / n); all-to-all of M
bytes per rank, ``M (n - 1) / n / bw + latency`` (the pieces to all peers in flight at once, as
DeepEP's kernels send them); point to point, ``M / bw + latency``.
Bandwidth is per GPU and direction, latency per hop. A group that does not fit in one
NVLink/NVSwitch domain runs its collectives in two levels (``group_all_reduce_s``, ``group_all_to_all_s``):
inside each domain on the fabric, and between domains on the scale-out network, where each GPU's own NIC
carries its 1 / d share (d GPUs per domain, one NIC each, as in an HGX or DGX server).
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
        direct_peers: True where every accelerator of a domain writes to every other at once (a switch:
            NVSwitch; a full mesh: AMD's 8-GPU Infinity Fabric), so that an all-reduce needs one or two hops,
            not a ring's 2 (n - 1) (``all_reduce_s``); False for a ring or torus (TPU ICI) and PCIe.
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
    direct_peers: bool = False
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


def all_reduce_s(message_bytes, n_ranks: int, interconnect: Interconnect):
    """Seconds of an all-reduce of ``message_bytes`` over ``n_ranks`` ranks of one domain: the fastest
    schedule the fabric allows.

    On a fabric whose ranks write to every peer at once (``interconnect.direct_peers``: NVSwitch, a full
    mesh), the least of a one-shot all-reduce, ``(n - 1) x M / bw + latency`` (each rank reads every peer's
    whole buffer in one hop and sums), and a two-shot one, ``2 (n - 1) / n x M / bw + 2 x latency`` (a
    reduce-scatter and an all-gather, each one hop to all peers at once). These are the custom all-reduces the
    serving engines run on small messages instead of NCCL's ring: vLLM's ``custom_all_reduce`` (its 1-stage
    and 2-stage kernels, csrc/custom_all_reduce.cuh, also used by SGLang) and TensorRT-LLM's ONESHOT and
    TWOSHOT ``AllReduceStrategy``. The ring never beats the two-shot there (the same bytes, 2 (n - 1) hops
    against 2). Elsewhere, ``ring_all_reduce_s``. 0 for one rank.
    Example: 16,384 B (one token of Llama-3.1-70B in bf16) over 8 H100s on NVLink 4 (450 GB/s, 1 us):
    one-shot 7 x 16,384 / 450e9 + 1 us = 1.255 us, two-shot 0.064 + 2 = 2.064 us, ring 14.06 us: 1.255 us.
    At 1 MB the two-shot (3.89 + 2 = 5.89 us) beats the one-shot (16.6 us) and the ring (17.9 us).
    """
    n = int(n_ranks)
    if n <= 1 or not interconnect.direct_peers:
        return ring_all_reduce_s(message_bytes, n_ranks, interconnect)
    m = np.asarray(message_bytes, dtype=float)
    bw, lat = interconnect.bandwidth_bytes_per_s, interconnect.latency_s
    out = np.minimum((n - 1) * m / bw + lat, 2.0 * (n - 1) / n * m / bw + 2.0 * lat)
    return float(out) if out.ndim == 0 else out


def group_all_reduce_s(message_bytes, n_ranks: int, fabric: Interconnect):
    """Seconds of an all-reduce of ``message_bytes`` over ``n_ranks`` ranks of a fabric of domains.

    Within one domain (``n <= fabric.domain_size``): ``all_reduce_s`` on the fabric. Over k = n / d
    domains of d ranks: a reduce-scatter and an all-gather inside each domain on the fabric (one hop each where
    the fabric reaches every peer directly, ``direct_peers``, else d - 1 each), and between
    them an all-reduce of each rank's M / d slice across the k domains on the scale-out network, every GPU
    on its own NIC, its latency that of a tree (2 ceil(log2 k) hops):
    ``2 (d - 1) / d x M / bw_fabric + 2 (d - 1) x latency_fabric + 2 (k - 1) / k x M / d / bw_net
    + 2 ceil(log2 k) x latency_net``. This is the least each NIC must carry (a domain's partial sums leave it
    once, split over its d NICs) and NCCL's hierarchical schedule (Jeaugey, "Massively Scale Your Deep
    Learning Training with NCCL 2.4", NVIDIA blog 2019: double binary trees between nodes, logarithmic
    latency; NCCL's rings give each GPU of a node its own NIC channel). A flat ring at the network's pace
    (2 (n - 1) hops of 5 us: 150 us for 16 GPUs on 2 servers) is several times what NCCL measures for a
    small message (tens of microseconds). Example: 229,376 B (16 tokens of DeepSeek-V3's 7,168 in bf16) over
    16 H100s on 2 HGX servers (NVLink 4 450 GB/s 1 us, InfiniBand NDR 50 GB/s 5 us): 1.75 x 229,376 / 450e9
    + 14 us + 1 x 28,672 / 50e9 + 2 x 5 us = 0.892 + 14 + 0.573 + 10 = 25.47 us.

    Raises:
        ValueError: the group spans domains and the fabric has no scale-out network.
    """
    def across(m, n, d, k, net):
        hops = 1.0 if fabric.direct_peers else d - 1.0
        return (2.0 * (d - 1) / d * m / fabric.bandwidth_bytes_per_s + 2.0 * hops * fabric.latency_s
                + 2.0 * (k - 1) / k * m / d / net.bandwidth_bytes_per_s + 2.0 * np.ceil(np.log2(k)) * net.latency_s)
    return _over_domains(message_bytes, n_ranks, fabric, all_reduce_s, across)


def group_all_to_all_s(message_bytes, n_ranks: int, fabric: Interconnect):
    """Seconds of an all-to-all of ``message_bytes`` per rank over ``n_ranks`` ranks of a fabric of domains.

    Within one domain: ``all_to_all_s`` on the fabric. Over domains of d ranks: the (d - 1) / n of a rank's
    bytes for its own domain go over the fabric while the (n - d) / n for other domains go over its NIC,
    both at once: ``max((d - 1) / n x M / bw_fabric, (n - d) / n x M / bw_net) + latency_net``. Example:
    DeepEP's 7.34 MB per rank at EP 32 over 4 H800 servers (NVLink 450 GB/s, NDR 50 GB/s 5 us):
    max(7/32 x 7.34e6 / 450e9, 24/32 x 7.34e6 / 50e9) + 5 us = 115 us, under its measured 155 us
    (deepseek-ai/DeepEP, docs/legacy.md, low-latency kernels over pure RDMA, node-local peers included).

    Raises:
        ValueError: the group spans domains and the fabric has no scale-out network.
    """
    def across(m, n, d, k, net):
        return np.maximum((d - 1) / n * m / fabric.bandwidth_bytes_per_s,
                          (n - d) / n * m / net.bandwidth_bytes_per_s) + net.latency_s
    return _over_domains(message_bytes, n_ranks, fabric, all_to_all_s, across)


def _over_domains(message_bytes, n_ranks: int, fabric: Interconnect, within, across):
    """A collective over ``n_ranks`` ranks of ``fabric``: ``within(M, n, fabric)`` when they fit in one domain,
    else ``across(M array, n, d ranks per domain, k domains, scale-out link)``; a float for a scalar M."""
    n = int(n_ranks)
    d = fabric.domain_size
    if n <= d:
        return within(message_bytes, n, fabric)
    out = across(np.asarray(message_bytes, dtype=float), n, d, -(-n // d), link_for_group(fabric, n))
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
