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

import contextlib
import os
import platform
import time
from dataclasses import asdict, dataclass

import torch

from calc import Accelerator

from .predict import datasheet_accelerator_id
from .run_spec import cpu_flags


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
    from .model_builder import check_device, torch_dtype

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


def _apply(mod, x, moe: bool = False):
    """One call of a linear layer as its forward runs it (``F.linear``; Conv1D's ``addmm``); with ``moe`` an
    MoE block (``moe_blocks``) called whole on ``x`` as ``[1, rows, D]``: its router, the experts its top-k
    routing touches, and their gather and scatter."""
    if moe:
        return mod(x.unsqueeze(0))
    if _is_conv1d(mod):
        return mod(x)
    return torch.nn.functional.linear(x, mod.weight, mod.bias)


#: Config keys of the top-k of an MoE router (transformers' names across Mixtral, Qwen-MoE, gpt-oss, Llama 4,
#: DeepSeek); calc.limits reads the same keys.
_TOP_K_KEYS = ("num_experts_per_tok", "num_experts_per_token", "experts_per_token", "n_activated_experts", "moe_topk",
               "top_k")


def _text_config(model):
    cfg = getattr(model, "config", None)
    if cfg is not None and hasattr(cfg, "get_text_config"):
        cfg = cfg.get_text_config(decoder=True)
    return cfg


def _is_experts(name: str, mod) -> bool:
    """A module that holds a mixture's experts: one with its own 3-D parameter ``[E, ...]`` (transformers'
    fused experts: Mixtral, Qwen-MoE, gpt-oss, Llama 4), or a ``ModuleList`` named ``experts`` (one MLP per
    expert, the older layout)."""
    if any(p.dim() == 3 for p in mod.parameters(recurse=False)):
        return True
    return isinstance(mod, torch.nn.ModuleList) and name.rsplit(".", 1)[-1] == "experts" and len(mod) > 1


def moe_blocks(model) -> list[dict]:
    """The model's mixture-of-experts blocks, in forward order: the parent of each experts module (router,
    experts and any shared expert, as the decoder layer calls it), or the experts module itself when its
    parent holds the attention too.

    Returns a list of dicts: ``module`` (the block, called as ``block(hidden [1, rows, D])``), ``name``,
    ``role`` (its attribute name: ``mlp``, ``block_sparse_moe``, ``feed_forward``...), ``n_experts`` (E),
    ``top_k`` (k from the config, 1 when the config names none), ``d_model`` (D), ``weight_bytes`` and
    ``n_weights`` (every parameter of the block), ``active_bytes`` and ``active_weights`` (what one token
    reads: the block less its routed experts, plus k/E of them).
    Source of the active share: Fedus, Zoph and Shazeer, "Switch Transformers" (2021), section 2.1 (each
    token runs only its top-k experts).
    """
    named = dict(model.named_modules())
    cfg = _text_config(model)
    d_model = int(getattr(cfg, "hidden_size", 0) or getattr(cfg, "n_embd", 0) or 0)
    top_k = next((int(getattr(cfg, k)) for k in _TOP_K_KEYS if isinstance(getattr(cfg, k, None), int)), 1)
    out, seen = [], set()
    for name, mod in named.items():
        if not name or not _is_experts(name, mod):
            continue
        parent_name = name.rsplit(".", 1)[0] if "." in name else ""
        parent = named.get(parent_name)
        block, bname = (mod, name)
        if parent is not None and parent_name and not any(
                ("attn" in c or "attention" in c) for c, _ in parent.named_children()):
            block, bname = parent, parent_name
        if id(block) in seen:
            continue
        seen.add(id(block))
        if isinstance(mod, torch.nn.ModuleList):
            n_experts = len(mod)
        else:
            n_experts = int(next(p.shape[0] for p in mod.parameters(recurse=False) if p.dim() == 3))
        params = {id(p): p for p in block.parameters()}
        expert_params = {id(p): p for p in mod.parameters()}
        n_all = sum(p.numel() for p in params.values())
        b_all = sum(p.numel() * p.element_size() for p in params.values())
        n_exp = sum(p.numel() for p in expert_params.values())
        b_exp = sum(p.numel() * p.element_size() for p in expert_params.values())
        share = min(top_k, n_experts) / n_experts
        out.append(dict(module=block, name=bname, role=bname.rsplit(".", 1)[-1], n_experts=n_experts, top_k=top_k,
                        d_model=d_model, weight_bytes=b_all, n_weights=n_all,
                        active_bytes=b_all - b_exp + b_exp * share, active_weights=n_all - n_exp + n_exp * share))
    return out


def linear_groups(model) -> list[dict]:
    """The model's linear layers (``nn.Linear`` and GPT-2's ``Conv1D``) and mixture-of-experts blocks,
    grouped by role and shape, in forward order.

    Role: the module's own name (``q_proj``, ``c_attn``...; the output head is "lm_head" whatever
    its name). Returns a list of dicts: ``label`` ("q_proj 576x576"), ``role``, ``shape`` (out, in),
    ``count`` (matrices), ``weight_bytes`` (all of them), ``n_weights``, ``per_token`` (False only
    for the output head, which a step runs on the last token alone), ``modules`` (the layers).

    An MoE block (``moe_blocks``: experts stored as 3-D parameters or as a list of MLPs) is one
    entry timed whole, router and shared expert included (its linear layers are not listed again), so
    the time at B rows holds the experts that B tokens' routing actually touches. Its group has
    ``moe`` True, ``n_experts``, ``top_k``, ``weight_bytes`` and ``n_weights`` of what one token reads
    (``active_bytes``: the evidence of bandwidth at 1 row and of FLOP/s per row, ``robust.raise_bound``)
    and ``total_weight_bytes`` (every expert).
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    groups: dict[tuple, dict] = {}
    moes = moe_blocks(model)
    inside = {id(m) for b in moes for m in b["module"].modules()}
    moe_by_id = {id(b["module"]): b for b in moes}
    for name, mod in model.named_modules():
        if id(mod) in moe_by_id:
            b = moe_by_id[id(mod)]
            d = b["d_model"]
            key = ("moe", b["role"], b["n_experts"], b["weight_bytes"])
            g = groups.setdefault(key, dict(
                label=f"{b['role']} (MoE: router + top-{b['top_k']} of {b['n_experts']} experts) {d}x{d}",
                role=b["role"], shape=(d, d), count=0, weight_bytes=0, n_weights=0, total_weight_bytes=0,
                per_token=True, moe=True, n_experts=b["n_experts"], top_k=b["top_k"], modules=[]))
            g["count"] += 1
            g["weight_bytes"] += b["active_bytes"]
            g["n_weights"] += b["active_weights"]
            g["total_weight_bytes"] += b["weight_bytes"]
            g["modules"].append(mod)
            continue
        if id(mod) in inside or not (isinstance(mod, torch.nn.Linear) or _is_conv1d(mod)):
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


@contextlib.contextmanager
def stub_matmuls(model):
    """The model with its matmul term taken out, for timing everything else at the model's own shapes.

    Inside the ``with`` block every layer of ``linear_groups`` (linear layers, Conv1D, whole MoE blocks)
    returns zeros of its output shape instead of computing: a forward then runs the embedding, norms,
    rotary, activations, residual adds, attention over the real cache and the cache updates at the model's
    real width, depth and attention shape, plus one allocation per stubbed layer (as the real layer's
    output). Timed, it is the per-step work the kernel term (``time_linears``) does not hold: the overhead
    of the calibrated prediction, with nothing counted twice. Zeros keep every later op on ordinary numbers
    (no NaN or denormal slow paths). The layers' own ``forward`` is restored on exit, also on an error.
    """
    groups = linear_groups(model)
    stubbed = []

    def zeros_of(mod, moe):
        if moe:
            d = {"tuple": None}

            def fwd(hidden, *a, **k):
                z = torch.zeros_like(hidden)
                if d["tuple"] is None:  # the block's output structure, learned once from a real call
                    out = orig(hidden, *a, **k)
                    d["tuple"] = len(out) if isinstance(out, tuple) else 0
                return (z,) + (None,) * (d["tuple"] - 1) if d["tuple"] else z

            orig = mod.forward
            return fwd
        out_f = int(mod.weight.shape[1]) if _is_conv1d(mod) else int(mod.out_features)
        return lambda x, *a, **k: x.new_zeros(*x.shape[:-1], out_f)

    try:
        for g in groups:
            for m in g["modules"]:
                m.forward = zeros_of(m, bool(g.get("moe")))
                stubbed.append(m)
        yield model
    finally:
        for m in stubbed:
            m.__dict__.pop("forward", None)


def moe_inputs(model, blocks, rows, decode_rows=()) -> dict:
    """The hidden states each MoE block really receives with ``r`` tokens: one forward of ``r`` random token
    ids per row count, the blocks' inputs caught by a forward pre-hook, as ``{(id(block), r): [r, D]}``.
    A row count in ``decode_rows`` is ``r`` sequences of one token each (a decode step's rows come from
    different sequences); any other is one sequence of ``r`` tokens (a prompt's). Measured on a shrunk
    Qwen3-MoE (bench/tiny_qwen3_moe.json, quick run): feeding decode's rows as one sequence routed them to
    too few experts and under-predicted decode at batch 8 by 17-21%; as separate sequences, 4-5%.

    Routing depends on them: in a random-weight model the residual stream of later layers grows alike across
    tokens and routes them to few experts (a shrunk Qwen3-MoE, 128 tokens, 32 experts, top-2: 28 experts
    touched in layer 0, 6 in layer 7), where standard-normal rows would touch all 32. Empty without blocks.
    """
    if not blocks:
        return {}
    caught: dict = {}
    ids = {id(b) for b in blocks}
    r_now = [0]

    def hook(mod, args, kwargs):
        h = args[0] if args else next(iter(kwargs.values()))
        caught[(id(mod), r_now[0])] = h.detach().reshape(-1, h.shape[-1]).clone()

    handles = [b.register_forward_pre_hook(hook, with_kwargs=True) for b in blocks]
    try:
        emb = model.get_input_embeddings()
        vocab = int(emb.weight.shape[0])
        dev = emb.weight.device
        g = torch.Generator().manual_seed(0)
        with torch.inference_mode():
            for r in rows:
                r_now[0] = r
                shape = (r, 1) if r in decode_rows else (1, r)
                model(input_ids=torch.randint(0, vocab, shape, generator=g).to(dev), use_cache=False,
                      logits_to_keep=1)
    finally:
        for h in handles:
            h.remove()
    return {k: v for k, v in caught.items() if k[0] in ids}


def time_linears(model, rows: tuple[int, ...] = (1,), repeats: int = 3, warmup: int = 1,
                 decode_rows: tuple[int, ...] = ()) -> list[dict]:
    """Time ``F.linear`` on the model's own weights, at its own shapes and dtype, with ``rows`` input rows;
    each mixture-of-experts block (``linear_groups``) whole, on the hidden states it really receives with
    ``rows`` tokens (``moe_inputs``), so it runs the experts their routing touches.

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
        decode_rows: the row counts that are decode steps: their MoE blocks route tokens of separate
            sequences (``moe_inputs``).

    Returns:
        The groups of ``linear_groups`` without ``modules``, each with ``rows`` (sorted) and
        ``times_s`` (seconds for all the group's matrices at each row count).

    Raises:
        ValueError: no linear layer in the model, or a non-positive row count.
    """
    from calc.checks import check_positive_int

    groups = linear_groups(model)
    if not groups:
        raise ValueError("this model has no linear layers (torch.nn.Linear or Conv1D) to time")
    rows = tuple(sorted({check_positive_int(r, "rows") for r in rows}))
    p = next(model.parameters())
    dev, cuda = p.device, p.device.type == "cuda"
    pos = {id(m): i for i, m in enumerate(model.modules())}
    order = sorted(((gi, m) for gi, g in enumerate(groups) for m in g["modules"]), key=lambda t: pos[id(t[1])])
    moe = [bool(groups[gi].get("moe")) for gi, _ in order]
    width = [int(groups[gi]["shape"][1]) if moe[ci] else _in_features(m) for ci, (gi, m) in enumerate(order)]
    # the fastest of the timed passes of every single call: a call takes milliseconds, so on a busy machine
    # some pass of it runs undisturbed, where a whole pass (seconds at many rows) rarely would
    best = {(ci, r): float("inf") for ci in range(len(order)) for r in rows}
    with torch.inference_mode():
        widths = {width[ci]: next(m.parameters()).dtype for ci, (_, m) in enumerate(order)}
        xs = {(r, k): torch.randn(r, k, dtype=dt, device=dev) for r in rows for k, dt in widths.items()}
        moe_in = moe_inputs(model, [m for ci, (_, m) in enumerate(order) if moe[ci]], rows, decode_rows)
        for rep in range(warmup + repeats):
            for r in (rows if rep % 2 == 0 else rows[::-1]):
                if cuda:
                    torch.cuda.synchronize()
                    evs = []
                    for ci, (gi, m) in enumerate(order):
                        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        s.record()
                        _apply(m, moe_in.get((id(m), r), xs[(r, width[ci])]), moe[ci])
                        e.record()
                        evs.append((ci, s, e))
                    torch.cuda.synchronize()
                    took = [(ci, s.elapsed_time(e) / 1e3) for ci, s, e in evs]
                else:
                    took = []
                    for ci, (gi, m) in enumerate(order):
                        t0 = time.perf_counter()
                        _apply(m, moe_in.get((id(m), r), xs[(r, width[ci])]), moe[ci])
                        took.append((ci, time.perf_counter() - t0))
                if rep >= warmup:
                    for ci, t in took:
                        best[(ci, r)] = min(best[(ci, r)], t)
        del xs, moe_in
    out = []
    for gi, g in enumerate(groups):
        d = {k: v for k, v in g.items() if k != "modules"}
        d.update(rows=list(rows), times_s=[sum(best[(ci, r)] for ci, (gj, _) in enumerate(order) if gj == gi)
                                           for r in rows])
        out.append(d)
    return out


def thread_candidates(cores: int | None = None) -> tuple[int, ...]:
    """Intra-op thread counts worth trying on a CPU of ``cores`` cores (default ``os.cpu_count()``): all of
    them and one fewer (leaving a core to whatever else runs), largest first; (1,) on one core."""
    n = int(cores or os.cpu_count() or 1)
    return (n, n - 1) if n > 1 else (1,)


def fastest_threads(candidates, time_pass, rounds: int = 3, margin: float = 0.03) -> tuple[int, dict]:
    """The thread count whose pass runs fastest, measured now.

    torch splits every matmul over its intra-op threads and waits for the slowest: when another program
    holds one core, a thread on it stalls every kernel, and one thread fewer can be the faster choice.
    Each round times ``time_pass(n)`` (seconds of one pass with ``n`` threads) for every candidate,
    interleaved; a candidate's figure is the median of its rounds (a stall is what is being measured, so
    the low end would hide it). The largest count within ``margin`` of the fastest wins (more threads
    are faster on a quiet machine; a tie goes to them).

    Returns:
        (chosen thread count, {candidate: median seconds}).

    Raises:
        ValueError: no candidates or rounds < 1.
    """
    cands = sorted({int(c) for c in candidates if int(c) >= 1}, reverse=True)
    if not cands or rounds < 1:
        raise ValueError("fastest_threads needs at least one thread count and one round")
    samples: dict[int, list[float]] = {c: [] for c in cands}
    for r in range(rounds):
        for c in (cands if r % 2 == 0 else cands[::-1]):
            samples[c].append(float(time_pass(c)))
    med = {c: float(sorted(v)[len(v) // 2]) for c, v in samples.items()}
    best = min(med.values())
    return max(c for c in cands if med[c] <= best * (1 + margin)), med


def model_pass_timer(model, rows: int = 1):
    """``time_pass(n)`` for ``fastest_threads``: the wall time of one call of every linear layer and MoE
    block of ``model`` (``linear_groups``, forward order) at ``rows`` rows with ``n`` intra-op threads.
    Leaves the thread count at the last ``n``."""
    groups = linear_groups(model)
    dev = next(model.parameters()).device
    calls = []
    for g in groups:
        for m in g["modules"]:
            k = int(g["shape"][1]) if g.get("moe") else _in_features(m)
            calls.append((m, bool(g.get("moe")), k))
    dtype = next(model.parameters()).dtype
    xs = {k: torch.randn(rows, k, dtype=dtype, device=dev) for _, _, k in calls}

    def run(n: int) -> float:
        torch.set_num_threads(int(n))
        with torch.inference_mode():
            t0 = time.perf_counter()
            for m, moe, k in calls:
                _apply(m, xs[k], moe)
            return time.perf_counter() - t0

    return run


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


__all__ = ["ProbeResult", "probe_machine", "cpu_flags", "moe_blocks", "linear_groups", "stub_matmuls",
           "thread_candidates", "fastest_threads", "model_pass_timer", "moe_inputs", "time_linears", "reference_kernel"]
