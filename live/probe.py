"""A roofline probe of the machine the worker runs on: achievable memory bandwidth and matmul FLOP/s.

Method (gpt-fast's empirical peak; STREAM-style copy and read): buffers many times larger than the
last-level cache (512 MiB on a CPU, 1 GiB on a GPU), a copy (bytes read + bytes written) and a
read-only reduction (``sum``), a GEMV over the same buffer (``F.linear`` at batch 1, what a decode
step's linear layers run), and a square
matmul in the chosen dtype whose size grows until one product takes a measurable time. On CUDA
every timing uses CUDA events after a synchronize. The result is a calc ``Accelerator`` whose
bandwidth is the read figure and whose FLOP/s table holds the measured matmul rate for the dtype.
"""
from __future__ import annotations

import os
import platform
import time
from dataclasses import asdict, dataclass

import torch

from calc import Accelerator

from .predict import datasheet_accelerator_id
from .spec import cpu_flags


@dataclass(frozen=True)
class ProbeResult:
    """What the probe measured (base units: bytes, seconds, FLOP).

    Fields:
        device: "cpu" or "cuda"; device_name: CPU model or GPU name; dtype: matmul dtype.
        threads: torch intra-op threads; cpu_capability: ``torch.backends.cpu.get_cpu_capability()``.
        buffer_bytes: size of the bandwidth buffer.
        read_bytes_per_s, copy_bytes_per_s, gemv_bytes_per_s: best of the repetitions.
        matmul_flops_per_s: best matmul rate at ``matmul_n`` x ``matmul_n`` in ``dtype``.
        memory_bytes: RAM (CPU) or device memory (GPU).
        datasheet_id: calc accelerator id of a known GPU, else None.
        probe_s: wall time of the probe.
    """

    device: str
    device_name: str
    dtype: str
    threads: int
    cpu_capability: str
    buffer_bytes: int
    read_bytes_per_s: float
    copy_bytes_per_s: float
    gemv_bytes_per_s: float
    matmul_flops_per_s: float
    matmul_n: int
    memory_bytes: float
    datasheet_id: str | None
    probe_s: float

    def accelerator(self) -> Accelerator:
        """This machine as a calc ``Accelerator``: W = measured read bandwidth, P = measured matmul rate."""
        return Accelerator(name=f"this machine ({self.device_name}, measured)", memory_bytes=self.memory_bytes,
                           bandwidth_bytes_per_s=self.read_bytes_per_s,
                           peak_flops_per_s={self.dtype: self.matmul_flops_per_s}, price_per_hour_usd=None,
                           source="live probe: read of a buffer larger than the caches; square matmul")

    def to_dict(self) -> dict:
        """Fields as a plain dict."""
        return asdict(self)


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _best_time_s(fn, device: str, repeats: int) -> float:
    """Fastest of ``repeats`` timed calls after one warm-up (CUDA events on a GPU)."""
    fn()
    _sync(device)
    best = float("inf")
    for _ in range(repeats):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            t = start.elapsed_time(end) / 1e3
        else:
            t0 = time.perf_counter()
            fn()
            t = time.perf_counter() - t0
        best = min(best, t)
    return best


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


def _ram_bytes() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8e9


def probe_machine(device: str = "cpu", dtype: str = "fp32", buffer_bytes: int | None = None,
                  repeats: int = 3, max_matmul_s: float = 0.15) -> ProbeResult:
    """Measure achievable bandwidth and matmul FLOP/s on ``device`` (a few seconds on 2 CPU cores).

    Args:
        device: "cpu" or "cuda".
        dtype: "fp32", "bf16" or "fp16": the matmul dtype (the GEMV uses it too).
        buffer_bytes: bandwidth buffer size; default 512 MiB (CPU) or 1 GiB (GPU), well above any
            last-level cache (32 MiB L3 here; 50-60 MB L2 on H100/H200).
        repeats: timed repetitions (the best is kept: an achievable figure, as gpt-fast reports).
        max_matmul_s: the matmul size doubles from 256 until one product takes about this long
            (a CPU without native bf16 runs bf16 matmuls ~300x slower; this keeps the probe short).

    Returns:
        ``ProbeResult``; ``.accelerator()`` gives the calc ``Accelerator``.

    Raises:
        ValueError: unknown device/dtype or CUDA requested without a GPU.
    """
    from .models import check_device, torch_dtype

    check_device(device, dtype)
    tdt = torch_dtype(dtype)
    t_start = time.perf_counter()
    if buffer_bytes is None:
        buffer_bytes = (1 << 30) if device == "cuda" else (512 << 20)
    n_el = int(buffer_bytes) // 4
    with torch.inference_mode():
        x = torch.ones(n_el, dtype=torch.float32, device=device)
        y = torch.empty_like(x)
        copy_s = _best_time_s(lambda: y.copy_(x), device, repeats)
        read_s = _best_time_s(lambda: x.sum(), device, repeats)
        del y
        # GEMV over the same bytes in the model dtype, the way nn.Linear runs a batch-1 decode step:
        # F.linear(x [1, 4096], W [rows, 4096]).
        xm = x.view(-1, 4096).to(tdt) if tdt != torch.float32 else x.view(-1, 4096)
        del x
        v = torch.ones(1, 4096, dtype=tdt, device=device)
        gemv_s = _best_time_s(lambda: torch.nn.functional.linear(v, xm), device, repeats)
        gemv_bytes = xm.numel() * xm.element_size()
        del xm, v
        n, mm_s = 256, 0.0
        cap = 8192 if device == "cuda" else 4096
        while True:
            a = torch.randn(n, n, dtype=tdt, device=device)
            b = torch.randn(n, n, dtype=tdt, device=device)
            mm_s = _best_time_s(lambda: a @ b, device, 1 if n < cap else repeats)
            if mm_s >= max_matmul_s / 4 or n >= cap:
                mm_s = min(mm_s, _best_time_s(lambda: a @ b, device, repeats))
                break
            n *= 2
        del a, b
    if device == "cuda":
        torch.cuda.empty_cache()
        name = torch.cuda.get_device_name(0)
        mem = float(torch.cuda.get_device_properties(0).total_memory)
    else:
        name, mem = _cpu_name(), _ram_bytes()
    return ProbeResult(
        device=device, device_name=name, dtype=dtype, threads=torch.get_num_threads(),
        cpu_capability=str(torch.backends.cpu.get_cpu_capability()),
        buffer_bytes=n_el * 4, read_bytes_per_s=n_el * 4 / read_s, copy_bytes_per_s=2 * n_el * 4 / copy_s,
        gemv_bytes_per_s=gemv_bytes / gemv_s, matmul_flops_per_s=2.0 * n ** 3 / mm_s, matmul_n=n,
        memory_bytes=mem, datasheet_id=datasheet_accelerator_id(name) if device == "cuda" else None,
        probe_s=time.perf_counter() - t_start)




def _is_conv1d(mod) -> bool:
    """GPT-2's ``Conv1D`` (transformers.pytorch_utils): a linear layer whose weight is stored [in, out]."""
    return type(mod).__name__ == "Conv1D" and getattr(mod, "weight", None) is not None and mod.weight.dim() == 2


def _in_features(mod) -> int:
    """Input width of a linear layer (``nn.Linear.in_features``; Conv1D's ``weight.shape[0]``)."""
    return int(mod.weight.shape[0]) if _is_conv1d(mod) else int(mod.in_features)


def _apply(mod, x):
    """One call of a linear layer as its forward runs it (``F.linear``; Conv1D's ``addmm``)."""
    if _is_conv1d(mod):
        return mod(x)
    return torch.nn.functional.linear(x, mod.weight, mod.bias)


def linear_groups(model) -> list[dict]:
    """The model's linear layers (``nn.Linear`` and GPT-2's ``Conv1D``) grouped by role and shape, in
    forward order.

    Role: the module's own name (``q_proj``, ``c_attn``...; the output head is "lm_head" whatever
    its name). Returns a list of dicts: ``label`` ("q_proj 576x576"), ``role``, ``shape`` (out, in),
    ``count`` (matrices), ``weight_bytes`` (all of them), ``n_weights``, ``per_token`` (False only
    for the output head, which a step runs on the last token alone), ``modules`` (the layers).
    MoE experts stored as 3-D parameters are not seen: for such models the kernel term covers only
    the layers found.
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    groups: dict[tuple, dict] = {}
    for name, mod in model.named_modules():
        if not (isinstance(mod, torch.nn.Linear) or _is_conv1d(mod)):
            continue
        role = "lm_head" if mod is head else name.rsplit(".", 1)[-1]
        w = mod.weight
        shape = (int(w.shape[1]), int(w.shape[0])) if _is_conv1d(mod) else tuple(int(x) for x in w.shape)
        g = groups.setdefault((role, shape), dict(label=f"{role} {shape[0]}x{shape[1]}", role=role, shape=shape,
                                                  count=0, weight_bytes=0, n_weights=0, per_token=role != "lm_head",
                                                  modules=[]))
        g["count"] += 1
        g["weight_bytes"] += w.numel() * w.element_size()
        g["n_weights"] += w.numel()
        g["modules"].append(mod)
    return list(groups.values())


def time_linears(model, rows: tuple[int, ...] = (1,), repeats: int = 3, warmup: int = 1) -> list[dict]:
    """Time ``F.linear`` on the model's own weights, at its own shapes and dtype, with ``rows`` input rows.

    One pass calls every linear layer once in forward order (layer 0's q, k, v, o, gate, up, down,
    then layer 1's...), on a fixed random input of ``rows`` rows: the weights stream from memory as
    they do in a real step (one group alone might fit in the last-level cache). Each call is timed
    (``perf_counter`` on a CPU, where the call is synchronous; on CUDA a pair of CUDA events around
    each call and one synchronize per pass). The passes interleave the row counts (1, 2, 4, ..., then
    again), so a burst of other work spreads over all of them; each call keeps the fastest of its
    ``repeats`` timed passes after ``warmup`` untimed ones (other work only slows a call), and the calls
    are summed per group.

    Args:
        rows: input row counts (a decode step at batch B runs B rows; a prefill B*T, but its output
            head B).

    Returns:
        The groups of ``linear_groups`` without ``modules``, each with ``rows`` (sorted) and
        ``times_s`` (seconds for all the group's matrices at each row count).

    Raises:
        ValueError: no linear layer in the model, or a non-positive row count.
    """
    from calc.dtypes import check_positive_int

    groups = linear_groups(model)
    if not groups:
        raise ValueError("this model has no linear layers (torch.nn.Linear or Conv1D) to time")
    rows = tuple(sorted({check_positive_int(r, "rows") for r in rows}))
    p = next(model.parameters())
    dev, cuda = p.device, p.device.type == "cuda"
    pos = {id(m): i for i, m in enumerate(model.modules())}
    order = sorted(((gi, m) for gi, g in enumerate(groups) for m in g["modules"]), key=lambda t: pos[id(t[1])])
    # the fastest of the timed passes of every single call: a call takes milliseconds, so on a busy machine
    # some pass of it runs undisturbed, where a whole pass (seconds at many rows) rarely would
    best = {(ci, r): float("inf") for ci in range(len(order)) for r in rows}
    with torch.inference_mode():
        widths = {_in_features(m): m.weight.dtype for _, m in order}
        xs = {(r, k): torch.randn(r, k, dtype=dt, device=dev) for r in rows for k, dt in widths.items()}
        for rep in range(warmup + repeats):
            for r in (rows if rep % 2 == 0 else rows[::-1]):
                if cuda:
                    torch.cuda.synchronize()
                    evs = []
                    for ci, (gi, m) in enumerate(order):
                        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        s.record()
                        _apply(m, xs[(r, _in_features(m))])
                        e.record()
                        evs.append((ci, s, e))
                    torch.cuda.synchronize()
                    took = [(ci, s.elapsed_time(e) / 1e3) for ci, s, e in evs]
                else:
                    took = []
                    for ci, (gi, m) in enumerate(order):
                        t0 = time.perf_counter()
                        _apply(m, xs[(r, _in_features(m))])
                        took.append((ci, time.perf_counter() - t0))
                if rep >= warmup:
                    for ci, t in took:
                        best[(ci, r)] = min(best[(ci, r)], t)
        del xs
    out = []
    for gi, g in enumerate(groups):
        d = {k: v for k, v in g.items() if k != "modules"}
        d.update(rows=list(rows), times_s=[sum(best[(ci, r)] for ci, (gj, _) in enumerate(order) if gj == gi)
                                           for r in rows])
        out.append(d)
    return out


def reference_kernel(device: str = "cpu"):
    """A small fixed kernel to time between measured points: a contention detector.

    A 256 x 256 fp32 matmul on a CPU (about 34 MFLOP, 0.5-5 ms on a core); on a GPU 4096 x 4096 (137
    GFLOP, about a millisecond: a smaller one would time only the launch and its jitter). Repeated 3
    times, the fastest kept. When it runs clearly slower than its best of the run, other work had the
    device (``live.robust.measure_interleaved``).

    Returns:
        A function of no arguments returning seconds.
    """
    n = 4096 if device == "cuda" else 256
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)

    def run() -> float:
        with torch.inference_mode():
            return _best_time_s(lambda: a @ b, device, 3)

    return run


__all__ = ["ProbeResult", "probe_machine", "cpu_flags", "linear_groups", "time_linears", "reference_kernel"]
