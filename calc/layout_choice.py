"""Which layouts and which accelerators hold a model, and what each layout delivers, on top of the layout's
step (``calc.parallel``).

Tokens/s per GPU against tokens/s per user for every layout and batch and their Pareto front
(``throughput_frontier``, NVIDIA AIConfigurator's axes); the smallest layout that holds a model
(``smallest_tp``, ``smallest_layout``) and the layouts the engines refuse (``refused_layouts``); every
accelerator of the catalogue with the smallest TP that holds a model (``which_gpus``); one layout's headline
numbers (``layout_summary``). The layout grid the plans search (``PLAN_TP``, ``PLAN_PP``) lives here too.
Lower bounds, like the rest of calc.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .checks import check_nonneg_number, check_positive_int
from .collectives import default_interconnect
from .cost import cost_per_million
from .gpu_share import GpuMemory, gpu_memory, max_batch_per_replica
from .hardware import Accelerator, get_accelerator, list_accelerators
from .layout import Layout, make_layout
from .models import ModelConfig
from .parallel import parallel_decode_step, parallel_step_arrays
from .serving import pareto_mask


#: Layout grid of the capacity plan (the benchmark's grid).
PLAN_TP = (1, 2, 4, 8)


PLAN_PP = (1, 2)


PLAN_MAX_BATCH = 512
#: How a plan times a layout: "bound" (the roofline lower bound, the course's numbers), "serving" (the serving
#: model's estimate for an engine, ``calc.serving``) or "serving_high" (the high end of that estimate's range: its
#: latencies at the top of the latency range, its throughput at the bottom of the throughput range).
PLAN_TIMINGS = ("bound", "serving", "serving_high")


HOURS_PER_MONTH = 720.0


def throughput_frontier(model: ModelConfig, accelerator: Accelerator, context_len: int, tps=PLAN_TP,
                        pps=(1,), eps=(1,), batches=None, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                        reserve_bytes: float = 0.0, interconnect=None, embedding: str = "gather") -> pd.DataFrame:
    """Tokens/s per GPU against tokens/s per user for every layout and batch that fits, and their
    Pareto front (NVIDIA AIConfigurator's two axes).

    Per user: 1 / TPOT; per GPU: B / TPOT / gpus_per_replica. Replicas multiply GPUs and tokens
    alike, so neither axis moves with them: a point stands for any number of replicas. A point is on
    the front when no other point is at least as good on both axes and better on one. Layouts the
    model or the interconnect cannot take are skipped.

    Args:
        batches: 1-D array of batch sizes per replica (default 1..512 on a log grid of 64 points);
            each layout keeps those within its memory ceiling.

    Returns:
        DataFrame: layout, tp, pp, ep, gpus_per_replica, batch, tpot_s, tokens_per_s_per_user,
        tokens_per_s_per_gpu, comm_s, pareto (bool); ``attrs["refused"]``: layouts the engines refuse,
        with their reasons (``refused_layouts``).

    Raises:
        ValueError: invalid context or dtypes; no layout that fits.
    """
    s = check_positive_int(context_len, "context_len")
    grid = (np.unique(np.round(np.geomspace(1, PLAN_MAX_BATCH, 64)).astype(int)) if batches is None
            else np.asarray(batches, dtype=int))
    frames = []
    for tp in tps:
        for pp in pps:
            for ep in eps:
                try:
                    lay = make_layout(model, tp, pp, ep)
                    ceiling = max_batch_per_replica(model, accelerator, s, lay, weight_dtype, kv_dtype, reserve_bytes)
                    bs = grid[grid <= ceiling]
                    if bs.size == 0:
                        continue
                    a = parallel_step_arrays(model, accelerator, bs, s, lay, weight_dtype, kv_dtype,
                                             interconnect=interconnect, embedding=embedding)
                except ValueError:
                    continue
                frames.append(pd.DataFrame({
                    "layout": lay.label, "tp": tp, "pp": pp, "ep": ep, "gpus_per_replica": lay.gpus_per_replica,
                    "batch": bs, "tpot_s": a["total_s"], "tokens_per_s_per_user": 1.0 / a["total_s"],
                    "tokens_per_s_per_gpu": a["tokens_per_s_per_gpu"], "comm_s": a["comm_s"]}))
    if not frames:
        raise ValueError(f"{model.name} does not fit on {accelerator.name} in any layout of "
                         f"{grid_label(tps, pps, eps)} with one sequence of {s:,} tokens")
    df = pd.concat(frames, ignore_index=True)
    df["pareto"] = pareto_mask(df["tokens_per_s_per_user"].to_numpy(), df["tokens_per_s_per_gpu"].to_numpy())
    df.attrs["refused"] = refused_layouts(model, tps, pps, eps)
    return df


def _listed(values) -> str:
    return ", ".join(str(v) for v in values)


def smallest_tp(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
                weight_dtype: str = "bf16", kv_dtype: str = "bf16", tps=(1, 2, 4, 8), reserve_bytes: float = 0.0):
    """The smallest tensor-parallel degree in ``tps`` whose GPUs hold the model and ``batch`` sequences of
    ``context_len`` tokens (``max_batch_per_replica``), or None. TP above 1 needs an interconnect;
    a TP that does not divide the query heads is skipped. Llama-3.1-70B bf16 at 8k on H100 SXM: 2.

    Raises:
        ValueError: invalid sizes or dtypes.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    for tp in tps:
        if tp > 1 and accelerator.interconnect is None:
            return None
        try:
            lay = make_layout(model, tp)
        except ValueError:
            continue
        if max_batch_per_replica(model, accelerator, s, lay, weight_dtype, kv_dtype, reserve_bytes) >= b:
            return tp
    return None


def plan_eps(model: ModelConfig, eps=(1, 2, 4, 8)) -> tuple[int, ...]:
    """Expert-parallel degrees a search tries for ``model``: those of ``eps`` that divide its routed
    experts for a mixture of experts, (1,) for a dense model (EP needs experts to spread)."""
    return tuple(e for e in eps if e == 1 or (model.is_moe and model.n_experts % e == 0))  # others: refused_layouts


def refused_layouts(model: ModelConfig, tps=PLAN_TP, pps=PLAN_PP, eps=None) -> tuple[tuple[str, str], ...]:
    """The layouts of ``tps x pps x eps`` the serving engines refuse for ``model``, each with the engine's
    reason (``calc.layout.check_layout``: KV or query heads that TP does not split, more stages than
    layers, experts EP does not divide): ((label, reason), ...). A search skips them and says why.
    Phi-4 (40 query, 10 KV heads) over TP 1, 2, 4, 8: TP4 and TP8 refused."""
    eps = plan_eps(model) if eps is None else tuple(eps)
    out = []
    for tp in tps:
        for pp in pps:
            for ep in eps:
                try:
                    make_layout(model, tp, pp, ep)
                except ValueError as exc:
                    label = f"TP{tp}" + (f" PP{pp}" if pp > 1 else "") + (f" EP{ep}" if ep > 1 else "")
                    out.append((label, str(exc)))
    return tuple(out)


def grid_label(tps, pps, eps) -> str:
    """The layouts a search tries, in words: "TP 1, 2, 4, 8 x PP 1, 2 x EP 1, 2, 4, 8" (the EP part left
    out when it is only 1). One wording for every message and caption that names a grid."""
    out = f"TP {_listed(tps)} x PP {_listed(pps)}"
    return out + (f" x EP {_listed(eps)}" if tuple(eps) != (1,) else "")


def smallest_layout(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int = 1,
                    weight_dtype: str = "bf16", kv_dtype: str = "bf16", tps=PLAN_TP, pps=PLAN_PP, eps=None,
                    reserve_bytes: float = 0.0):
    """The layout of ``tps x pps x eps`` with the fewest GPUs per replica whose GPUs hold the model and
    ``batch`` sequences of ``context_len`` tokens (``max_batch_per_replica`` >= batch), or None.
    Ties: fewer pipeline stages (PP saves memory, not time per token), then the smaller TP. Layouts the model cannot take are
    skipped; TP or PP above 1 needs an interconnect. ``eps`` defaults to ``plan_eps(model)``.
    Llama-3.1-70B bf16 on H100 SXM (80 GB), one 8k sequence: 141 GB of weights need 2 GPUs, TP2.

    Raises:
        ValueError: invalid sizes or dtypes.
    """
    s = check_positive_int(context_len, "context_len")
    b = check_positive_int(batch, "batch")
    eps = plan_eps(model) if eps is None else tuple(eps)
    best = None
    for tp in tps:
        for pp in pps:
            for ep in eps:
                try:
                    lay = make_layout(model, tp, pp, ep)
                except ValueError:
                    continue
                if lay.gpus_per_replica > 1 and accelerator.interconnect is None:
                    continue
                if best is not None and (lay.gpus_per_replica, lay.pp, lay.tp) >= (best.gpus_per_replica, best.pp,
                                                                                     best.tp):
                    continue
                if max_batch_per_replica(model, accelerator, s, lay, weight_dtype, kv_dtype, reserve_bytes) >= b:
                    best = lay
    return best


def which_gpus(model: ModelConfig, context_len: int, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
               tps=(1, 2, 4, 8), reserve_bytes: float = 0.0, accelerators=None, embedding: str = "gather") -> pd.DataFrame:
    """For every accelerator of the catalogue, the smallest TP that holds the model with one sequence
    of ``context_len`` tokens, and what it gives.

    Memory convention: the data-sheet capacity minus ``reserve_bytes`` per GPU (0 by default, the
    course's convention). Columns: accelerator (id), name, interconnect, tp (NaN when no TP fits),
    gpus, tpot_b1_s (decode at B = 1), max_batch (per replica at that TP), tokens_per_s (at the
    max batch), usd_per_hour (the replica), usd_per_million_output (at the max batch, fully busy;
    NaN without a price), fits. Sorted by usd_per_million_output (unpriced and non-fitting last).

    Raises:
        ValueError: invalid context or dtypes.
    """
    s = check_positive_int(context_len, "context_len")
    rows = []
    for gid in (accelerators or list_accelerators()):
        acc = get_accelerator(gid) if isinstance(gid, str) else gid
        ic = default_interconnect(acc)
        row = dict(accelerator=gid if isinstance(gid, str) else acc.name, name=acc.name,
                   interconnect="none" if ic is None else ic.name, tp=math.nan, gpus=math.nan,
                   tpot_b1_s=math.nan, max_batch=0, tokens_per_s=math.nan, usd_per_hour=math.nan,
                   usd_per_million_output=math.nan, fits=False)
        for tp in tps:
            if tp > 1 and ic is None:
                break
            try:
                lay = make_layout(model, tp)
                ceiling = max_batch_per_replica(model, acc, s, lay, weight_dtype, kv_dtype, reserve_bytes)
                if ceiling < 1:
                    continue
                one = parallel_step_arrays(model, acc, 1, s, lay, weight_dtype, kv_dtype, embedding=embedding)
                full = parallel_step_arrays(model, acc, ceiling, s, lay, weight_dtype, kv_dtype, embedding=embedding)
            except ValueError:
                continue
            tps_full = float(full["tokens_per_s"])
            price = acc.price_per_hour_usd
            row.update(tp=tp, gpus=lay.gpus_per_replica, tpot_b1_s=float(one["total_s"]), max_batch=ceiling,
                       tokens_per_s=tps_full, fits=True,
                       usd_per_hour=math.nan if price is None else price * lay.gpus_per_replica,
                       usd_per_million_output=math.nan if price is None
                       else float(cost_per_million(tps_full, price * lay.gpus_per_replica)))
            break
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values(["fits", "usd_per_million_output"], ascending=[False, True], na_position="last",
                          kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class LayoutSummary:
    """Headline numbers of one configuration (model, accelerator, layout, dtypes, batch, context).

    Fields: gpus_per_replica, n_gpus (all replicas), max_batch (per replica), fits (batch <= max_batch),
    tpot_s, comm_s, tokens_per_s_per_user (1 / TPOT), tokens_per_s_per_gpu, tokens_per_s (all replicas),
    usd_per_hour and usd_per_month (all replicas, 720 h), usd_per_million_output (fully busy; NaN
    without a price or a positive throughput), memory (``GpuMemory`` of one GPU).
    """

    gpus_per_replica: int
    n_gpus: int
    max_batch: int
    fits: bool
    tpot_s: float
    comm_s: float
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    tokens_per_s: float
    usd_per_hour: float
    usd_per_month: float
    usd_per_million_output: float
    memory: GpuMemory


def layout_summary(model: ModelConfig, accelerator: Accelerator, context_len: int, batch: int, layout: Layout,
                   weight_dtype: str = "bf16", kv_dtype: str = "bf16", price_per_hour_usd: float | None = None,
                   interconnect=None, reserve_bytes: float = 0.0, embedding: str = "gather") -> LayoutSummary:
    """TPOT, throughput per user and per GPU, memory and rent of a configuration (``parallel_decode_step``,
    ``gpu_memory``, ``max_batch_per_replica``; dollars: GPUs x price per GPU-hour, and
    ``cost_per_million`` of the replicas' output tokens per second).

    Raises:
        ValueError: invalid sizes, dtypes, layout or price.
    """
    step = parallel_decode_step(model, accelerator, batch, context_len, layout, weight_dtype, kv_dtype,
                                interconnect=interconnect, embedding=embedding)
    mem = gpu_memory(model, accelerator, context_len, batch, layout, weight_dtype, kv_dtype, reserve_bytes)
    ceiling = max_batch_per_replica(model, accelerator, context_len, layout, weight_dtype, kv_dtype, reserve_bytes)
    price = accelerator.price_per_hour_usd if price_per_hour_usd is None else check_nonneg_number(
        price_per_hour_usd, "price_per_hour_usd")
    tps = step.tokens_per_s * layout.replicas
    usd_h = math.nan if price is None else price * layout.n_gpus
    usd_m = usd_h * HOURS_PER_MONTH
    per_m = math.nan if price is None else float(cost_per_million(tps, usd_h))
    return LayoutSummary(layout.gpus_per_replica, layout.n_gpus, ceiling, mem.fits, step.total_s, step.comm_s,
                         1.0 / step.total_s, step.tokens_per_s / layout.gpus_per_replica, tps, usd_h, usd_m, per_m,
                         mem)
