"""Planning a deployment on many accelerators for a traffic, on top of the layout's step (``calc.parallel``)
and the layout grid of ``calc.layout_choice``.

The cheapest layout, batch and replica count for a traffic and TPOT/TTFT targets (``capacity_plan``, with
its binding constraint; ``plan_grid``, ``plan_options``); separate prefill and decode pools
(``disaggregated_plan``). Lower bounds, like the rest of calc, unless timed with the serving model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .checks import check_fraction, check_nonneg_number, check_positive_int, check_positive_number
from .dtypes import dtype_bytes
from .gpu_share import max_batch_per_replica
from .hardware import Accelerator
from .layout import Layout, make_layout
from .layout_choice import (HOURS_PER_MONTH, PLAN_MAX_BATCH, PLAN_PP, PLAN_TIMINGS, PLAN_TP, grid_label, plan_eps,
                            refused_layouts)
from .measurements import engine_name
from .models import ModelConfig
from .number_text import fmt_number, fmt_usd
from .parallel import parallel_prefill, parallel_step_arrays
from .serving import ServingEstimate, serving_estimate, serving_frontier
from .serving_params import widened_range


#: The largest average arrival rate a plan takes (requests/s): 10^8, far above any one service's traffic; a rate
#: above it is refused with a message rather than sized.
MAX_REQUESTS_PER_S = 100_000_000
#: A plan above this many GPUs gets a note that puts it in perspective (``fleet_note``): a fleet of clusters.
LARGE_FLEET_GPUS = 10_000


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:,.2f} ms" if ms < 10 else f"{ms:,.1f} ms" if ms < 100 else f"{ms:,.0f} ms"


@dataclass(frozen=True)
class ServingTraffic:
    """Traffic a deployment must serve.

    Fields:
        requests_per_s: average arrival rate (>= 0).
        peak_to_average: peak rate / average (>= 1); capacity is sized for the peak.
        input_tokens, output_tokens: per request (>= 1).
        prefix_hit_rate: fraction of input tokens found in the prefix cache (skip prefill), in [0, 1].

    Raises:
        ValueError: negative rate or one above ``MAX_REQUESTS_PER_S``, a peak below the average, lengths below
            1, a hit rate outside [0, 1].
    """

    requests_per_s: float = 1.0
    peak_to_average: float = 1.0
    input_tokens: int = 2048
    output_tokens: int = 256
    prefix_hit_rate: float = 0.0

    def __post_init__(self):
        if check_nonneg_number(self.requests_per_s, "requests_per_s") > MAX_REQUESTS_PER_S:
            raise ValueError(f"requests_per_s must be at most {MAX_REQUESTS_PER_S:,} (the plan's limit), "
                             f"got {self.requests_per_s:,.0f}")
        if check_positive_number(self.peak_to_average, "peak_to_average") < 1:
            raise ValueError(f"peak_to_average must be at least 1 (the peak is at least the average), "
                             f"got {self.peak_to_average!r}")
        check_positive_int(self.input_tokens, "input_tokens")
        check_positive_int(self.output_tokens, "output_tokens")
        check_fraction(self.prefix_hit_rate, "prefix_hit_rate")

    @property
    def peak_requests_per_s(self) -> float:
        """Arrival rate to size for: requests_per_s x peak_to_average."""
        return self.requests_per_s * self.peak_to_average


@dataclass(frozen=True)
class CapacityPlan:
    """The cheapest layout that serves a traffic within latency targets.

    Fields:
        layout: Layout (tp, pp, ep, replicas).
        batch: decode batch per replica; gpus: all accelerators; gpus_per_replica.
        usd_per_hour, usd_per_month (720 h): the rent (NaN without a price).
        tpot_s, ttft_s: predicted at the plan's batch (mean context) and for one prompt's uncached part.
        requests_per_s_per_replica: what a replica serves at that batch.
        binding: "batch cap" when the plan sits at the grid's largest batch while its layout holds more
            sequences and meets the TPOT target there (raising the cap would serve more per replica); else
            "memory", "TPOT" or "TTFT" (the constraint whose removal would save the most GPUs), or
            "traffic" when none of them would save one ("prefill", with the bound's timing, when each request's
            prefill fills over half of a replica's time).
        max_batch: the memory ceiling per replica of the layout.
        verdict: one sentence.
        batch_cap: the largest batch the grid tried (``plan_grid``'s ``max_batch``).
        refused: ((layout label, the engine's reason), ...) of the grid's layouts skipped as the engines
            refuse them (``refused_layouts``).
        timing: "bound" (roofline lower bounds), "serving" (the serving model's estimate) or "serving_high" (the
            high end of the estimate's range).
        estimate: with ``timing`` "serving" or "serving_high", the ``ServingEstimate`` of one replica of the plan's
            layout at its batch and the traffic's lengths (``plan_estimate``), with ranges and breakdowns: its TPOT
            and TTFT are ``tpot_s`` and ``ttft_s`` with "serving", their ranges' high ends ``tpot.high_s`` and
            ``ttft.high_s`` with "serving_high"; None with the bound.
        range_note: with "serving", what the plan needs at the high end of that estimate's range
            (``range_note``); with "serving_high", what it needs at the central estimate (``central_note``); ""
            with the bound.
    """

    layout: Layout
    batch: int
    gpus: int
    gpus_per_replica: int
    usd_per_hour: float
    usd_per_month: float
    tpot_s: float
    ttft_s: float
    requests_per_s_per_replica: float
    binding: str
    max_batch: int
    verdict: str
    batch_cap: int = PLAN_MAX_BATCH
    refused: tuple = ()
    timing: str = "bound"
    estimate: ServingEstimate | None = None
    range_note: str = ""


def _prompt_split(traffic: ServingTraffic) -> tuple[int, int]:
    """(cached, uncached) tokens of a request's prompt: ``round(prefix_hit_rate x input)`` found in the prefix
    cache, and the rest, at least 1, which the prefill computes."""
    cached = int(round(traffic.prefix_hit_rate * traffic.input_tokens))
    return cached, max(1, traffic.input_tokens - cached)


def plan_grid(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, weight_dtype: str = "bf16",
              kv_dtype: str = "bf16", tps=PLAN_TP, pps=PLAN_PP, eps=None, max_batch: int = PLAN_MAX_BATCH,
              reserve_bytes: float = 0.0, interconnect=None, embedding: str = "gather",
              logits: str = "all", timing: str = "bound", engine: str = "vllm") -> pd.DataFrame:
    """Every (layout, batch) of the grid with its TPOT, TTFT, memory fit and replica capacity.

    ``timing="serving"`` times each (layout, batch) with the serving model instead
    (``calc.serving.serving_frontier`` for ``engine``, continuous batching, B requests in flight per
    replica, prompts of the uncached ``ceil((1 - hit) x input)`` tokens): TPOT and TTFT are the estimates
    (fixed costs, efficiency, batching interference, queueing included) and a replica serves
    ``output tokens/s / output tokens`` requests per second. Memory fit stays the bound's. ``timing="serving_high"``
    takes the high end of each estimate's range instead: TPOT and TTFT at the top of the latency range, the
    replica's throughput at the bottom of the throughput range (``_serving_columns``), the margin a team that
    must not under-buy plans with (or lower where the top of the TPOT range allows less: ``high_end_per_gpu``).
    The frame's ``attrs``: ``timing``, ``engine`` and ``notices`` (the serving model's fallbacks).

    TPOT: a decode step at the mean context ``input + output / 2``. Memory: each sequence reserved at
    ``input + output`` tokens. TTFT: the prefill of one prompt's uncached tokens
    ``ceil((1 - prefix_hit_rate) x input)`` after the cached ones (no queueing). A replica at batch B
    serves ``1 / (prefill_s + output x TPOT / B)`` requests per second (prefill and decode share its
    time; the self-hosting formula of ``calc.bill``). Vectorised over batch (one numpy evaluation per
    layout).

    Args:
        eps: expert-parallel degrees tried (default (1,) for dense models, (1, 2, 4, 8) for MoE).
        logits: the prefill's LM head on every prompt token ("all", the course) or the last only
            ("last", engines), as ``calc.step.prefill_time``.

    Returns:
        DataFrame: tp, pp, ep, layout, gpus_per_replica, batch, max_batch, fits, tpot_s, ttft_s,
        requests_per_s_per_replica; ``attrs["refused"]``: the grid's layouts the engines refuse, with their
        reasons (``refused_layouts``), skipped.

    Raises:
        ValueError: invalid dtypes or sizes; no layout of the grid runs at all (the message gives the reason of
            the layout with the most GPUs per replica, e.g. one sequence's cache does not fit).
    """
    mb = check_positive_int(max_batch, "max_batch")
    if timing not in PLAN_TIMINGS:
        raise ValueError(f"timing must be one of {', '.join(PLAN_TIMINGS)}; got {timing!r}")
    notices: list[str] = []
    if eps is None:
        eps = plan_eps(model)
    ctx_mean = traffic.input_tokens + max(1, traffic.output_tokens // 2)
    ctx_full = traffic.input_tokens + traffic.output_tokens
    cached, new = _prompt_split(traffic)
    b = np.arange(1, mb + 1)
    cols = {k: [] for k in ("tp", "pp", "ep", "layout", "gpus_per_replica", "max_batch", "tpot_s", "ttft_s",
                            "requests_per_s_per_replica")}
    widest = None  # (GPUs per replica, label, why) of the widest layout that could not run: the reason told
    for tp in tps:
        for pp in pps:
            for ep in eps:
                lay = None
                try:
                    lay = make_layout(model, tp, pp, ep)
                    ceiling = max_batch_per_replica(model, accelerator, ctx_full, lay, weight_dtype, kv_dtype,
                                                    reserve_bytes)
                    if timing != "bound":
                        fr = serving_frontier(model, accelerator, new, traffic.output_tokens, b, tp, pp, ep,
                                              weight_dtype, kv_dtype, engine, interconnect=interconnect)
                        notices.extend(n for n in fr.attrs.get("notices", ()) if n not in notices)
                        tpot, ttft, rps = _serving_columns(fr, timing, lay.gpus_per_replica, traffic.output_tokens)
                    else:
                        a = parallel_step_arrays(model, accelerator, b, ctx_mean, lay, weight_dtype, kv_dtype,
                                                 interconnect=interconnect, embedding=embedding)
                        ttft = np.full(mb, parallel_prefill(model, accelerator, new, 1, lay, weight_dtype, kv_dtype,
                                                            interconnect, past_len=cached, embedding=embedding,
                                                            logits=logits).total_s)
                        tpot = np.asarray(a["total_s"], dtype=float)
                        rps = 1.0 / (ttft + traffic.output_tokens * tpot / b)
                except ValueError as exc:
                    if lay is not None and (widest is None or lay.gpus_per_replica > widest[0]):
                        widest = (lay.gpus_per_replica, lay.label, str(exc).rstrip("."))
                    continue
                for k, v in (("tp", tp), ("pp", pp), ("ep", ep), ("layout", lay.label),
                             ("gpus_per_replica", lay.gpus_per_replica), ("max_batch", ceiling)):
                    cols[k].append(np.full(mb, v))
                cols["tpot_s"].append(tpot)
                cols["ttft_s"].append(ttft)
                cols["requests_per_s_per_replica"].append(rps)
    if not cols["tp"]:
        why = (f"; the widest layout tried, {widest[1]} ({widest[0]:,} GPUs per replica), fails too: {widest[2]}"
               if widest else ": the engines refuse every layout of it (see the layouts refused)")
        raise ValueError(f"no layout of the grid can run {model.name} on {accelerator.name}{why}.")
    df = pd.DataFrame({k: np.concatenate(v) for k, v in cols.items()})
    batch = np.tile(b, len(cols["tp"]))
    df.insert(5, "batch", batch)
    df.insert(7, "fits", batch <= df["max_batch"].to_numpy())
    df.attrs.update(timing=timing, engine=engine if timing != "bound" else "", notices=tuple(notices))
    df.attrs["refused"] = refused_layouts(model, tps, pps, eps)
    return df


def _serving_columns(frontier: pd.DataFrame, timing: str, gpus_per_replica: int,
                     output_tokens: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(TPOT s, TTFT s, requests/s per replica) of a ``serving_frontier`` frame, one value per concurrency, for a
    plan timed with ``timing``: "serving", the estimates; "serving_high", the high ends of their ranges, TPOT and
    TTFT as a ``ServingEstimate`` gives them (``plan_estimate``: ``tpot.high_s``, ``ttft.high_s``).

    The latency range's high end is the estimate times exp(q), q the upper latency quantile
    (``calc.serving.bounded_range``: nothing clips it), for TPOT and TTFT alike; the frame's
    ``tokens_per_s_per_user_low`` is 1 / (TPOT x exp(q)), so exp(q) = 1 / (TPOT x that). A replica serves
    ``output tokens/s per GPU x GPUs per replica / output tokens`` requests per second; with "serving_high", at
    the low end of the throughput range or lower, the estimate's throughput / exp(q), where the top of the latency
    range (a separate quantile) implies less: ``high_end_per_gpu``."""
    tpot = frontier["tpot_s"].to_numpy(float)
    ttft = frontier["ttft_s"].to_numpy(float)
    per_gpu = frontier["tokens_per_s_per_gpu"].to_numpy(float)
    if timing == "serving_high":
        stretch = 1.0 / (tpot * frontier["tokens_per_s_per_user_low"].to_numpy(float))   # exp(q) >= 1
        tpot, ttft = tpot * stretch, ttft * stretch
        per_gpu = high_end_per_gpu(per_gpu, frontier["tokens_per_s_per_gpu_low"].to_numpy(float), stretch)
    return tpot, ttft, per_gpu * gpus_per_replica / output_tokens


def high_end_per_gpu(per_gpu, per_gpu_low, stretch):
    """Output tokens/s per GPU of a replica at the high end of the serving estimate's range, as a plan sized there
    (``timing="serving_high"``) counts it: the low end of the throughput range ``per_gpu_low``, or the estimate
    ``per_gpu`` divided by ``stretch`` (exp of the latency range's upper quantile: TPOT's high end over the
    estimate) where that is less. The two ranges are separate quantiles of the held-out errors, and a replica
    whose every step took the top of the TPOT range would emit no more than its estimate / ``stretch``: the
    slower of the two keeps the plan's throughput from exceeding what its quoted TPOT allows (a replica at batch 24
    and a TPOT of 49.4 ms emits at most 24 / 0.0494 = 486 tokens/s). Scalars or numpy arrays, elementwise."""
    return np.minimum(per_gpu_low, per_gpu / stretch)


def _fewest_gpus(gpus: np.ndarray, per_gpu: np.ndarray, ok: np.ndarray) -> int | None:
    """Index of the row among ``ok`` with the fewest ``gpus``, ties broken by the most requests/s per GPU
    (``per_gpu``: the headroom above the peak; at one grid layout, the largest batch within the targets); None
    when no row is ``ok``. The one rule of ``capacity_plan`` and of both pools of ``disaggregated_plan``."""
    if not ok.any():
        return None
    gpus_ok = np.where(ok, gpus, np.iinfo(np.int64).max)
    cand = np.flatnonzero(gpus_ok == gpus_ok.min())
    return int(cand[np.argmax(per_gpu[cand])])


def _cheapest(grid: pd.DataFrame, peak_rps: float, ok: np.ndarray):
    """Index of the cheapest feasible row (fewest GPUs, then most requests/s per GPU), and its replicas."""
    if not ok.any():
        return None, None
    rps = grid["requests_per_s_per_replica"].to_numpy()
    replicas = np.maximum(1, np.ceil(np.round(peak_rps / rps, 9))).astype(np.int64)
    width = grid["gpus_per_replica"].to_numpy()
    return _fewest_gpus(replicas * width, rps / width, ok), replicas


def capacity_plan(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, tpot_target_s: float,
                  ttft_target_s: float, price_per_hour_usd: float | None = None, weight_dtype: str = "bf16",
                  kv_dtype: str = "bf16", tps=PLAN_TP, pps=PLAN_PP, eps=None, max_batch: int = PLAN_MAX_BATCH,
                  reserve_bytes: float = 0.0, interconnect=None, grid: pd.DataFrame | None = None,
                  embedding: str = "gather", logits: str = "all", timing: str = "bound",
                  engine: str = "vllm") -> CapacityPlan:
    """The cheapest layout, batch and replica count that serves ``traffic`` within the targets.

    Over ``plan_grid`` (TP x PP x EP x batch 1..max_batch), a row is feasible when it fits in memory,
    its TPOT <= ``tpot_target_s`` and its TTFT <= ``ttft_target_s``; it needs
    ``replicas = max(1, ceil(peak requests/s / requests/s per replica))`` (one always-on replica at
    zero traffic). The plan is the feasible row with the fewest GPUs (so the lowest rent, every GPU
    costing the same), ties broken by the most requests/s per GPU (headroom). The binding
    constraint is the one of memory, TPOT and TTFT whose removal would save the most GPUs (ties in
    that order); when removing none of them saves a GPU, the traffic alone sets the bill ("traffic":
    the replicas the peak needs, or the one always-on replica); with ``timing="bound"``, "prefill" when each request's
    prefill fills over half of a replica's time, so that no batch helps).

    Args:
        price_per_hour_usd: per GPU (default: the accelerator's list price; NaN dollars if none).
        grid: a ``plan_grid`` already computed for these inputs (the page reuses it; its ``attrs["timing"]``
            then says how it was timed).
        timing: "bound" (default: the roofline lower bound, the course's numbers), "serving" (the serving
            model's estimate for ``engine``, see ``plan_grid``) or "serving_high" (the high end of that estimate's
            range); the verdict says which.

    Returns:
        CapacityPlan.

    Raises:
        ValueError: non-positive targets; nothing in the grid meets them (the message says what is closest).
    """
    tpot_t = check_positive_number(tpot_target_s, "tpot_target_s")
    ttft_t = check_positive_number(ttft_target_s, "ttft_target_s")
    price = accelerator.price_per_hour_usd if price_per_hour_usd is None else check_nonneg_number(
        price_per_hour_usd, "price_per_hour_usd")
    g = grid if grid is not None else plan_grid(model, accelerator, traffic, weight_dtype, kv_dtype, tps, pps, eps,
                                               max_batch, reserve_bytes, interconnect, embedding, logits,
                                               timing=timing, engine=engine)
    timing = g.attrs.get("timing", timing)
    fits = g["fits"].to_numpy()
    tpot_ok = g["tpot_s"].to_numpy() <= tpot_t
    ttft_ok = g["ttft_s"].to_numpy() <= ttft_t
    peak = traffic.peak_requests_per_s
    i, replicas = _cheapest(g, peak, fits & tpot_ok & ttft_ok)
    if i is None:
        raise _no_plan_error(model, accelerator, traffic, g, fits, tpot_t, ttft_t, weight_dtype)
    gpus = int(replicas[i] * g["gpus_per_replica"].iat[i])
    binding, best, relaxed_rows = _relaxed_binding(g, peak, gpus, fits, tpot_ok, ttft_ok)
    row = g.iloc[i]
    lay = Layout(int(row["tp"]), int(row["pp"]), int(row["ep"]), int(replicas[i]))
    cap = int(g["batch"].max())
    cap_best_batch = _batch_cap_batch(model, accelerator, traffic, row, lay, cap, gpus, best, tpot_t, weight_dtype,
                                      kv_dtype, interconnect, embedding)
    if cap_best_batch is not None:
        binding = "batch cap"
    prefill_share = float(row["ttft_s"]) * float(row["requests_per_s_per_replica"])
    if binding == "traffic" and timing == "bound" and lay.replicas > 1 and prefill_share > 0.5:
        # each request's prefill fills most of a replica's time: batch cannot help. Only with the bound, whose TTFT
        # is the prefill alone; the serving estimate's TTFT holds queueing and interference, no ceiling on the rate.
        binding = "prefill"
    usd_h = math.nan if price is None else gpus * float(price)
    why = _binding_reason(binding, row, lay, cap, cap_best_batch, prefill_share, relaxed_rows)
    serving_engine = g.attrs.get("engine", engine) if timing != "bound" else None
    est, note = None, ""
    if serving_engine is not None:
        # the plan's replica as the serving model times it: the grid's row, with its range and breakdown
        est = plan_estimate(model, accelerator, traffic, lay, int(row["batch"]), weight_dtype, kv_dtype,
                            serving_engine, interconnect)
        note = (central_note(est, lay, gpus, traffic) if timing == "serving_high"
                else range_note(est, lay, gpus, traffic, tpot_t, ttft_t))
    verdict = _plan_verdict(lay, row, gpus, accelerator, None if price is None else usd_h, binding, why,
                            serving_engine, est, high=timing == "serving_high")
    return CapacityPlan(lay, int(row["batch"]), gpus, lay.gpus_per_replica, usd_h, usd_h * HOURS_PER_MONTH,
                        float(row["tpot_s"]), float(row["ttft_s"]), float(row["requests_per_s_per_replica"]),
                        binding, int(row["max_batch"]), verdict, cap, tuple(g.attrs.get("refused", ())), timing,
                        est, note)


def plan_estimate(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, layout: Layout, batch: int,
                  weight_dtype: str = "bf16", kv_dtype: str = "bf16", engine: str = "vllm",
                  interconnect=None) -> ServingEstimate:
    """The serving model's estimate for one replica of a plan: ``calc.serving.serving_estimate`` at the
    ``layout``'s (tp, pp, ep), one replica, ``batch`` requests in flight (continuous batching), prompts of the
    uncached ``input - round(hit x input)`` tokens (at least 1) and the traffic's output tokens: the arguments
    ``plan_grid`` gives ``serving_frontier`` with ``timing="serving"``, so its TPOT and TTFT estimates are the grid
    row's ``tpot_s`` and ``ttft_s`` at that layout and batch, here with their ranges (the cross-validated errors)
    and their breakdowns (``TimeBreakdown.parts``). Seconds; throughput in output tokens/s.

    Raises:
        ValueError: as ``serving_estimate`` (a layout the model cannot take, a model that does not fit).
    """
    _, new = _prompt_split(traffic)
    return serving_estimate(model, accelerator, new, traffic.output_tokens, concurrency=int(batch), tp=layout.tp,
                            pp=layout.pp, ep=layout.ep, replicas=1, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            engine=engine, batching="continuous", interconnect=interconnect)


def range_note(est: ServingEstimate, layout: Layout, gpus: int, traffic: ServingTraffic, tpot_target_s: float,
               ttft_target_s: float) -> str:
    """What a plan sized with the serving estimate ``est`` (one replica of ``layout`` at the plan's batch,
    ``plan_estimate``; the plan's ``gpus`` in all) would need at the high end of the estimate's range: the
    same layout and batch, each replica serving ``per GPU x GPUs per replica / output tokens`` requests/s, per GPU
    at the high end of the range as a plan sized there counts it (``high_end_per_gpu``: the low end of the
    throughput range, or less where the top of the TPOT range implies less), so
    ``max(1, ceil(peak / that))`` replicas; and which target the high ends of TPOT and TTFT would miss. No
    other layout or batch is searched: where a target is missed, a smaller batch and more replicas would be
    needed, which the sentence says without sizing. Example: 4 replicas of TP4 (16 GPUs) whose throughput range
    ends at 80% of the estimate need 5 replicas, 20 GPUs, at its low end.

    Returns:
        One or two sentences, no markup.
    """
    per_gpu = float(high_end_per_gpu(est.output_tokens_per_s_per_gpu, est.per_gpu_low,
                                     est.tpot.high_s / est.tpot.estimate_s))
    per_replica = per_gpu * layout.gpus_per_replica / traffic.output_tokens
    replicas = _replicas_for(traffic.peak_requests_per_s, per_replica)
    high_gpus = replicas * layout.gpus_per_replica
    head = (f"At the high end of the range (TPOT {est.tpot.high_s * 1e3:.1f} ms, TTFT {est.ttft.high_s * 1e3:,.0f} ms, "
            f"{fmt_number(per_gpu)} output tokens/s per GPU), the "
            f"same {layout.label} at batch {int(round(est.concurrency)):,} ")
    if not math.isfinite(high_gpus):
        text = head + "would serve nothing."
    elif high_gpus == gpus:
        text = head + f"still needs {replicas:,} replica{'s' * (replicas != 1)}, {gpus:,} GPU{'s' * (gpus != 1)}."
    else:
        text = head + (f"would need {replicas:,} replica{'s' * (replicas != 1)}, {high_gpus:,} GPUs "
                       f"instead of {gpus:,}.")
    missed = [f"{name} target of {_ms(target)}" for name, high, target in
              (("TPOT", est.tpot.high_s, tpot_target_s), ("TTFT", est.ttft.high_s, ttft_target_s)) if high > target]
    if missed:
        text += (f" It would miss the {' and the '.join(missed)} there: a smaller batch, so more replicas, would be "
                 "needed (sizing the plan with the high end of its range searches them).")
    return text


def _replicas_for(peak_requests_per_s: float, per_replica: float) -> float:
    """Replicas that serve a peak of ``peak_requests_per_s`` at ``per_replica`` requests/s each: at least one (the
    always-on replica), rounded at 9 digits before the ceiling so that 4.000000001 is 4; inf for a replica that
    serves nothing."""
    return max(1, math.ceil(round(peak_requests_per_s / per_replica, 9))) if per_replica > 0 else math.inf


def central_note(est: ServingEstimate, layout: Layout, gpus: int, traffic: ServingTraffic) -> str:
    """What a plan sized at the high end of the serving estimate's range (``timing="serving_high"``: ``gpus`` in
    all, replicas of ``layout`` at the batch of ``est``, its ``plan_estimate``) would need at the central estimate:
    the same layout and batch, each replica serving ``per_gpu x GPUs per replica / output tokens`` requests/s,
    so ``max(1, ceil(peak / that))`` replicas (``range_note``'s rule, from the other end). The high end already
    meets the targets, so the centre, faster, does too. Example: 5 replicas of TP4 (20 GPUs) sized at a
    throughput range ending at 80% of the estimate need 4 replicas, 16 GPUs, at the estimate.

    Returns:
        One sentence, no markup.
    """
    per_replica = est.output_tokens_per_s_per_gpu * layout.gpus_per_replica / traffic.output_tokens
    replicas = _replicas_for(traffic.peak_requests_per_s, per_replica)
    central_gpus = replicas * layout.gpus_per_replica
    head = (f"At the central estimate (TPOT {est.tpot.estimate_s * 1e3:.1f} ms, TTFT {est.ttft.estimate_s * 1e3:,.0f} ms, "
            f"{fmt_number(est.output_tokens_per_s_per_gpu)} output tokens/s per GPU), the same {layout.label} at batch "
            f"{int(round(est.concurrency)):,} ")
    if central_gpus == gpus:
        return head + f"needs as many replicas, {replicas:,}, {gpus:,} GPU{'s' * (gpus != 1)}."
    return head + (f"would need {replicas:,} replica{'s' * (replicas != 1)}, {central_gpus:,} GPUs instead of "
                   f"{gpus:,}: the margin this plan buys against engines slower than the estimate.")


def _usd_words(usd: float) -> str:
    """Dollars for a sentence about a large sum: "$474 million", "$47.4 billion"; ``fmt_usd`` below a million."""
    if usd >= 999.5e6:  # not "$1,000 million"
        return f"${usd / 1e9:,.1f} billion"
    return f"${usd / 1e6:,.0f} million" if usd >= 1e6 else fmt_usd(usd)


def disaggregation_note(plan: CapacityPlan, split: DisaggregatedPlan) -> str:
    """Why the disaggregated plan needs more GPUs than the colocated one, "" when it needs as many or fewer.

    The prefill pool of ``disaggregated_plan`` is sized one prompt at a time (each replica busy for a whole
    TTFT per prompt, DistServe's prefill instance at batch 1), while a colocated replica carries its prompts in
    the decode steps it runs anyway, its requests per second counting each prompt's prefill beside its share
    of the steps. Example: a prefill pool of 120 GPUs beside a decode pool of 155 against a colocated plan
    of 162: "Split into two pools it takes 275 GPUs against 162 colocated: ..." """
    if split.gpus <= plan.gpus:
        return ""
    return (f"Split into two pools it takes {split.gpus:,} GPUs against {plan.gpus:,} colocated: its prefill pool "
            f"({split.prefill_gpus:,} GPU{'s' * (split.prefill_gpus != 1)}) is sized one prompt at a time, each replica busy for a whole TTFT per "
            "prompt, while a colocated replica carries its prompts in the decode steps it runs anyway. "
            "Disaggregation pays where long prompts stall decoding (a TPOT target the colocated replicas miss "
            "at a useful batch), and moving each request's KV cache between the pools is left out.")


def fleet_note(plan: CapacityPlan) -> str:
    """A note that puts a very large plan in perspective, "" for one of ``LARGE_FLEET_GPUS`` GPUs or fewer: its
    GPU count as clusters of that size, its monthly rent when priced, and that such traffic is split over many
    clusters in several regions. 164,832 GPUs at $3.99/h: "A very large fleet: 164,832 GPUs, over 16 clusters
    of 10,000, about $474 million a month. ..." """
    if plan.gpus <= LARGE_FLEET_GPUS:
        return ""
    rent = f", about {_usd_words(plan.usd_per_month)} a month" if math.isfinite(plan.usd_per_month) else ""
    clusters = plan.gpus // LARGE_FLEET_GPUS
    return (f"A very large fleet: {plan.gpus:,} GPUs, over {clusters:,} cluster{'s' if clusters != 1 else ''} of "
            f"{LARGE_FLEET_GPUS:,}{rent}. Traffic this large is split over many clusters in several regions, "
            "each planned as here for its share of the requests.")


#: What a plan sized on the roofline bound adds to its verdict: its times are lower bounds.
BOUND_VERDICT_NOTE = (" TPOT and TTFT are roofline lower bounds; an engine measures more (choose the serving estimate "
                      "to size with it).")


def _plan_verdict(lay: Layout, row: pd.Series, gpus: int, accelerator: Accelerator, usd_per_hour: float | None,
                  binding: str, why: str, serving_engine: str | None, est: ServingEstimate | None = None,
                  high: bool = False) -> str:
    """``capacity_plan``'s one-line verdict: replicas, layout, batch, GPUs, the rent (none when ``usd_per_hour``
    is None; dollars as ``number_text.fmt_usd`` writes them everywhere: whole from $100, cents below), TPOT, TTFT
    and the binding limit; when ``serving_engine`` (calc's engine key) is given, that the times are its estimates,
    the engine named as its project writes it ("Sized with the serving estimate (SGLang): ..."), and with ``est``
    (the replica's ``plan_estimate``) their ranges, in the same units and digits as the times
    ("Range (cross-validated errors): TPOT 28.0 - 40.1 ms, TTFT 350 - 612 ms."; "Range (cross-validated errors,
    widened to held-out misses as the notice says)" where a thinly covered trait widened it: ``widened_range``); sized
    on the roofline bound
    (``serving_engine`` None), ``BOUND_VERDICT_NOTE`` after it: the times are lower bounds. ``high``: the plan was
    sized at the high end of the estimate's range (``timing="serving_high"``), which the verdict says ("Sized with
    the high end of the serving estimate's range (vLLM): ...")."""
    money = ("" if usd_per_hour is None else
             f", {fmt_usd(usd_per_hour)}/h ({fmt_usd(usd_per_hour * HOURS_PER_MONTH)} a month)")
    verdict = (f"{lay.replicas:,} replica{'s' if lay.replicas != 1 else ''} of {lay.label} at batch "
               f"{int(row['batch']):,} = {gpus:,} x {accelerator.name}{money}: TPOT {row['tpot_s'] * 1e3:.1f} ms, "
               f"TTFT {row['ttft_s'] * 1e3:,.0f} ms; binding: {binding} ({why}).")
    if serving_engine is not None and high:
        verdict = (f"Sized with the high end of the serving estimate's range ({engine_name(serving_engine)}): "
                   + verdict + " TPOT and TTFT are the high ends of the estimate's ranges, and each replica's "
                   "throughput the low end of its range or what that TPOT allows, whichever is less.")
    elif serving_engine is not None:
        verdict = (f"Sized with the serving estimate ({engine_name(serving_engine)}): " + verdict
                   + " TPOT and TTFT are estimates, not lower bounds.")
    else:
        verdict += BOUND_VERDICT_NOTE
    if est is not None:
        how = ("cross-validated errors, widened to held-out misses as the notice says" if widened_range(est.notices)
               else "cross-validated errors")
        verdict += (f" Range ({how}): TPOT {est.tpot.low_s * 1e3:.1f} - {est.tpot.high_s * 1e3:.1f} ms, "
                    f"TTFT {est.ttft.low_s * 1e3:,.0f} - {est.ttft.high_s * 1e3:,.0f} ms.")
    return verdict


def _fastest(g: pd.DataFrame, ok: np.ndarray, column: str) -> pd.Series:
    """The row of ``g`` among ``ok`` with the least ``column`` (tpot_s or ttft_s), the smallest batch on a tie."""
    return g[ok].sort_values([column, "batch"], kind="stable").iloc[0]


def _at(row: pd.Series) -> str:
    """'TP8 PP2 at batch 1': a grid row's layout and batch, for a sentence."""
    return f"{row['layout']} at batch {int(row['batch']):,}"


def _faster_options(g: pd.DataFrame, weight_dtype: str, prefill: bool) -> str:
    """What else makes a step faster, for ``_no_plan_error``'s advice: a faster GPU (memory bandwidth for decode,
    compute for prefill), more GPUs per replica than the grid's largest, and lower-precision weights while they
    are wider than 4 bits."""
    options = [f"a GPU with more {'compute (FLOP/s)' if prefill else 'memory bandwidth'}",
               f"more GPUs per replica than the grid's {int(g['gpus_per_replica'].max()):,} (a larger TP)"]
    try:
        narrower = dtype_bytes(weight_dtype) > 0.5
    except ValueError:  # a dtype the byte table does not name: say nothing about it
        narrower = False
    if narrower:
        options.append(f"lower-precision weights than {weight_dtype}"
                       + ("" if prefill else " (fewer bytes read per token)"))
    if prefill:
        options.append("shorter prompts (more prefix-cache hits)")
    return ", ".join(options[:-1]) + ", or " + options[-1]


def _no_plan_error(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, g: pd.DataFrame,
                   fits: np.ndarray, tpot_t: float, ttft_t: float, weight_dtype: str = "bf16") -> ValueError:
    """``capacity_plan``'s error when no row of the grid ``g`` is feasible: what is closest (memory, TPOT, TTFT,
    naming the fastest layout and batch that fits) and what the user can change to get a plan (a looser target,
    a faster GPU, more GPUs per replica, lower-precision weights ``weight_dtype`` can go below)."""
    if not fits.any():
        return ValueError(f"{model.name} does not fit on {accelerator.name} in any layout of "
                          f"{grid_label(sorted(set(g['tp'])), sorted(set(g['pp'])), sorted(set(g['ep'])))} "
                          f"(up to {g['gpus_per_replica'].max()} GPUs) with one sequence of "
                          f"{traffic.input_tokens + traffic.output_tokens:,} tokens (the traffic's input + "
                          "output, what each sequence reserves)")
    tpot = g["tpot_s"].to_numpy()
    ttft = g["ttft_s"].to_numpy()
    best_tpot = _fastest(g, fits, "tpot_s")
    best_ttft = _fastest(g, fits, "ttft_s")
    if best_tpot["tpot_s"] > tpot_t:
        return ValueError(f"no layout of the grid meets a TPOT of {_ms(tpot_t)}: the fastest that fits, "
                          f"{_at(best_tpot)}, takes {_ms(best_tpot['tpot_s'])} per token. To plan this traffic, "
                          f"loosen the TPOT target to {_ms(best_tpot['tpot_s'])} or more, or choose "
                          f"{_faster_options(g, weight_dtype, prefill=False)}.")
    if best_ttft["ttft_s"] > ttft_t:
        return ValueError(f"no layout of the grid meets a TTFT of {_ms(ttft_t)}: the fastest prefill that fits, "
                          f"{_at(best_ttft)}, takes {_ms(best_ttft['ttft_s'])}. To plan this traffic, loosen the "
                          f"TTFT target to {_ms(best_ttft['ttft_s'])} or more, or choose "
                          f"{_faster_options(g, weight_dtype, prefill=True)}.")
    # each target alone is met, never both in one row: the closest row within each target
    in_tpot = _fastest(g, fits & (tpot <= tpot_t), "ttft_s")
    in_ttft = _fastest(g, fits & (ttft <= ttft_t), "tpot_s")
    return ValueError(f"no layout of the grid meets both the TPOT and the TTFT target at once: within the TPOT "
                      f"target the fastest prefill, {_at(in_tpot)}, takes {_ms(in_tpot['ttft_s'])}; within the "
                      f"TTFT target the fastest, {_at(in_ttft)}, takes {_ms(in_ttft['tpot_s'])} per token. To plan "
                      f"this traffic, loosen the TTFT target to {_ms(in_tpot['ttft_s'])} or the TPOT target to "
                      f"{_ms(in_ttft['tpot_s'])}, or choose {_faster_options(g, weight_dtype, prefill=False)}.")


def _relaxed_binding(g: pd.DataFrame, peak: float, gpus: int, fits: np.ndarray, tpot_ok: np.ndarray,
                     ttft_ok: np.ndarray) -> tuple[str, int, dict]:
    """The constraint of memory, TPOT and TTFT whose removal saves the most GPUs against the plan's ``gpus``
    ("traffic" when none saves one), those most GPUs saved, and per constraint the grid row chosen without it."""
    relaxed = {"memory": np.ones_like(fits) & tpot_ok & ttft_ok, "TPOT": fits & ttft_ok, "TTFT": fits & tpot_ok}
    savings, relaxed_rows = {}, {}
    for name, ok in relaxed.items():
        j, rep = _cheapest(g, peak, ok)
        savings[name] = gpus - int(rep[j] * g["gpus_per_replica"].iat[j])
        relaxed_rows[name] = g.iloc[j]
    best = max(savings.values())
    binding = "traffic" if best <= 0 else next(k for k in ("memory", "TPOT", "TTFT") if savings[k] == best)
    return binding, best, relaxed_rows


def _batch_cap_batch(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, row: pd.Series,
                     lay: Layout, cap: int, gpus: int, best: int, tpot_t: float, weight_dtype: str, kv_dtype: str,
                     interconnect, embedding: str) -> int | None:
    """The batch above the grid's cap ``cap`` at which the plan's layout would need fewer GPUs, when the cap
    binds; else None.

    The plan's layout at the batches above the cap that memory holds (up to 16 x the cap) and the TPOT target
    allows; the cap binds when those would need fewer GPUs, and at least as many fewer (``best``) as any other
    relaxation saves.
    """
    above = min(int(row["max_batch"]), 16 * cap)
    if not (int(row["batch"]) == cap and above > cap and lay.replicas > 1):
        return None
    b = np.arange(cap + 1, above + 1)
    a = parallel_step_arrays(model, accelerator, b, traffic.input_tokens + max(1, traffic.output_tokens // 2),
                             make_layout(model, lay.tp, lay.pp, lay.ep), weight_dtype, kv_dtype,
                             interconnect=interconnect, embedding=embedding)
    tpot_b = np.asarray(a["total_s"], dtype=float)
    ok = tpot_b <= tpot_t
    if not ok.any():
        return None
    rps_b = 1.0 / (float(row["ttft_s"]) + traffic.output_tokens * tpot_b[ok] / b[ok])
    k = int(np.argmax(rps_b))
    fewer = gpus - max(1, math.ceil(round(traffic.peak_requests_per_s / rps_b[k], 9))) * lay.gpus_per_replica
    return int(b[ok][k]) if fewer > 0 and fewer >= best else None


def _binding_reason(binding: str, row: pd.Series, lay: Layout, cap: int, cap_best_batch: int | None,
                    prefill_share: float, relaxed_rows: dict) -> str:
    """The verdict's words on why ``binding`` binds the plan's ``row`` (and what would lift it)."""
    if binding == "batch cap":
        return (f"the plan tries batches up to {cap:,}; this layout holds {int(row['max_batch']):,} sequences "
                f"in memory and at batch {cap_best_batch or 0:,} would need fewer replicas within the TPOT "
                "target: raise the largest batch tried")
    if binding == "prefill":
        return (f"each request's prefill, {float(row['ttft_s']) * 1e3:,.0f} ms of compute, fills "
                f"{prefill_share:.0%} of a replica's time, so a replica serves at most "
                f"{1 / float(row['ttft_s']):,.1f} requests/s whatever its batch; a prefix cache or a separate "
                "prefill pool lifts it")
    if binding == "memory":
        if int(row["batch"]) < int(row["max_batch"]) and relaxed_rows["memory"]["layout"] != row["layout"]:
            return (f"this layout holds {int(row['max_batch']):,} sequences, more than the plan's batch; "
                    f"the narrower {relaxed_rows['memory']['layout']} would serve the traffic with fewer GPUs "
                    "but does not hold the model and its cache")
        return "more memory per GPU would allow a larger batch or a narrower replica"
    return {"TPOT": "a looser TPOT target would allow a larger batch or less TP",
            "TTFT": "a looser TTFT target would allow a narrower replica",
            "traffic": "the traffic sets the number of replicas" if lay.replicas > 1
            else "one always-on replica covers the traffic"}[binding]


def plan_options(grid: pd.DataFrame, traffic: ServingTraffic, tpot_target_s: float, ttft_target_s: float,
                 price_per_hour_usd: float | None = None) -> pd.DataFrame:
    """The best row of every layout of a ``plan_grid``: what each TP/PP/EP would cost for the traffic.

    Per layout: the feasible batch with the fewest GPUs (ties: most requests/s per GPU), as
    ``capacity_plan`` chooses over all layouts; a layout with no feasible batch says why ("memory": no
    batch fits; "TPOT" or "TTFT": the target is missed even at the best batch that fits).

    Returns:
        DataFrame, one row per layout, cheapest first (ties: most requests/s per GPU, as the plan):
        layout, tp, pp, ep, gpus_per_replica, batch, replicas, gpus, usd_per_month (NaN without a
        price), tpot_s, ttft_s, max_batch, requests_per_s_per_gpu, fails ("" when feasible).

    Raises:
        ValueError: non-positive targets or a negative price.
    """
    tpot_t = check_positive_number(tpot_target_s, "tpot_target_s")
    ttft_t = check_positive_number(ttft_target_s, "ttft_target_s")
    price = math.nan if price_per_hour_usd is None else check_nonneg_number(price_per_hour_usd, "price_per_hour_usd")
    rows = []
    for (tp, pp, ep), part in grid.groupby(["tp", "pp", "ep"], sort=False):
        fits = part["fits"].to_numpy()
        ok = fits & (part["tpot_s"].to_numpy() <= tpot_t) & (part["ttft_s"].to_numpy() <= ttft_t)
        first = part.iloc[0]
        row = dict(layout=first["layout"], tp=tp, pp=pp, ep=ep, gpus_per_replica=int(first["gpus_per_replica"]),
                   batch=np.nan, replicas=np.nan, gpus=np.nan, usd_per_month=np.nan, tpot_s=np.nan,
                   ttft_s=float(first["ttft_s"]), max_batch=int(first["max_batch"]), requests_per_s_per_gpu=np.nan,
                   fails="")
        i, replicas = _cheapest(part, traffic.peak_requests_per_s, ok)
        if i is None:
            row["fails"] = ("memory" if not fits.any() else "TTFT" if first["ttft_s"] > ttft_t else "TPOT")
        else:
            gpus = int(replicas[i] * row["gpus_per_replica"])
            row.update(batch=int(part["batch"].iat[i]), replicas=int(replicas[i]), gpus=gpus,
                       usd_per_month=gpus * price * HOURS_PER_MONTH, tpot_s=float(part["tpot_s"].iat[i]),
                       requests_per_s_per_gpu=float(part["requests_per_s_per_replica"].iat[i]) / row["gpus_per_replica"])
        rows.append(row)
    df = pd.DataFrame(rows)
    order = np.lexsort((-df["requests_per_s_per_gpu"].fillna(-1).to_numpy(), df["gpus"].fillna(np.inf).to_numpy()))
    return df.iloc[order].reset_index(drop=True)


@dataclass(frozen=True)
class DisaggregatedPlan:
    """Separate prefill and decode pools (xPyD) for a traffic, each the cheapest grid layout for its job.

    Fields:
        prefill_layout, decode_layout: Layout of one replica of each pool (replicas set).
        prefill_gpus, decode_gpus: GPUs of each pool; ratio: prefill_gpus / decode_gpus.
        decode_batch: batch per decode replica; tpot_s, ttft_s: predicted.
        gpus: both pools; usd_per_hour (NaN without a price).
        verdict: one sentence.
    """

    prefill_layout: Layout
    decode_layout: Layout
    prefill_gpus: int
    decode_gpus: int
    ratio: float
    decode_batch: int
    tpot_s: float
    ttft_s: float
    gpus: int
    usd_per_hour: float
    verdict: str


def disaggregated_plan(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, tpot_target_s: float,
                       ttft_target_s: float, price_per_hour_usd: float | None = None, grid: pd.DataFrame | None = None,
                       **grid_kwargs) -> DisaggregatedPlan:
    """Prefill on one pool, decode on another (Zhong et al. 2024, "DistServe", section 3; Patel et al.
    2024, "Splitwise"): each pool sized for the peak on its own.

    Prefill replica: serves ``1 / TTFT`` prompts per second (one uncached prompt at a time; a long
    prompt is compute-bound, so batching prompts adds little), needs TTFT <= target.
    Decode replica at batch B: serves ``B / (output x TPOT)`` requests per second, needs TPOT <= target
    and the memory. Each pool: the grid row (``plan_grid``) with the fewest GPUs for the peak, at least
    one replica, ties broken by the most requests/s per GPU, the rule of ``capacity_plan``: the decode
    batch is, like the colocated plan's, the largest that needs no more GPUs (what a replica is provisioned
    for, not what the traffic keeps in flight; at zero traffic both are the one always-on replica's largest
    batch within the targets, ``load_note`` says so). The KV cache moves from pool to pool once per request;
    its time is left out.

    Raises:
        ValueError: non-positive targets, or no row that meets one of them (the message says which).
    """
    tpot_t = check_positive_number(tpot_target_s, "tpot_target_s")
    ttft_t = check_positive_number(ttft_target_s, "ttft_target_s")
    price = accelerator.price_per_hour_usd if price_per_hour_usd is None else check_nonneg_number(
        price_per_hour_usd, "price_per_hour_usd")
    g = grid if grid is not None else plan_grid(model, accelerator, traffic, **grid_kwargs)
    peak = traffic.peak_requests_per_s
    width = g["gpus_per_replica"].to_numpy()
    fits = g["fits"].to_numpy()
    pre_ok = fits & (g["ttft_s"].to_numpy() <= ttft_t)
    dec_ok = fits & (g["tpot_s"].to_numpy() <= tpot_t)
    if not pre_ok.any():
        raise ValueError(f"no layout of the grid prefills within a TTFT of {_ms(ttft_t)}.")
    if not dec_ok.any():
        raise ValueError(f"no layout of the grid decodes within a TPOT of {_ms(tpot_t)}.")
    pre_rate = 1.0 / g["ttft_s"].to_numpy()                                               # prompts/s per replica
    dec_rate = g["batch"].to_numpy() / (traffic.output_tokens * g["tpot_s"].to_numpy())   # requests/s per replica
    pre_rep = np.maximum(1, np.ceil(np.round(peak / pre_rate, 9))).astype(np.int64)
    dec_rep = np.maximum(1, np.ceil(np.round(peak / dec_rate, 9))).astype(np.int64)
    i = _fewest_gpus(pre_rep * width, pre_rate / width, pre_ok)
    j = _fewest_gpus(dec_rep * width, dec_rate / width, dec_ok)
    lay_p = Layout(int(g["tp"].iat[i]), int(g["pp"].iat[i]), int(g["ep"].iat[i]), int(pre_rep[i]))
    lay_d = Layout(int(g["tp"].iat[j]), int(g["pp"].iat[j]), int(g["ep"].iat[j]), int(dec_rep[j]))
    n_p, n_d = lay_p.n_gpus, lay_d.n_gpus
    usd_h = math.nan if price is None else (n_p + n_d) * float(price)
    verdict = (f"Disaggregated: prefill on {lay_p.replicas:,} x {lay_p.label} ({n_p:,} GPU{'s' * (n_p != 1)}), decode on "
               f"{lay_d.replicas:,} x {lay_d.label} at batch {int(g['batch'].iat[j]):,} ({n_d:,} GPU{'s' * (n_d != 1)}): "
               f"{n_p / n_d:.2f} prefill GPUs per "
               f"decode GPU, {n_p + n_d:,} in all" + ("" if price is None else f", {fmt_usd(usd_h)}/h") + ".")
    return DisaggregatedPlan(lay_p, lay_d, n_p, n_d, n_p / n_d, int(g["batch"].iat[j]), float(g["tpot_s"].iat[j]),
                             float(g["ttft_s"].iat[i]), n_p + n_d, usd_h, verdict)


def _share_words(share: float) -> str:
    """A fraction of capacity for a sentence: "0%", "under 1%", "37%"."""
    return "0%" if share == 0 else "under 1%" if share < 0.005 else f"{share:.0%}"


def load_note(plan: CapacityPlan, split: DisaggregatedPlan, traffic: ServingTraffic) -> str:
    """What the batch of both plans means, and how much of the capacity it buys the traffic's peak uses.

    Both ``capacity_plan`` and ``disaggregated_plan`` give a replica's batch as the largest one that needs no
    more GPUs within the targets and memory: what a replica is provisioned for (an engine's ``max_num_seqs``),
    with TPOT quoted at that batch, not the number of requests the traffic keeps in flight. The peak's share of
    each: peak / (replicas x requests/s per replica), the decode pool's replica serving
    ``B / (output tokens x TPOT)`` requests/s. Example, Llama-3-8B on one H100 at 0 requests/s with the serving
    estimate: both say batch 137, and the note says the always-on replicas stay idle.

    Returns:
        A sentence or two in words, no markup.
    """
    head = ("Batch, in both lines: the largest a replica runs within the TPOT target and its memory without "
            "needing more GPUs, what it is provisioned for (an engine's max_num_seqs), with TPOT at that batch; "
            "under less load a replica runs fewer sequences, each step faster. ")
    peak = traffic.peak_requests_per_s
    if peak == 0:
        return head + "With no traffic (0 requests/s) the always-on replicas stay idle until requests come."
    colocated = plan.layout.replicas * plan.requests_per_s_per_replica
    decode = split.decode_layout.replicas * split.decode_batch / (traffic.output_tokens * split.tpot_s)
    return head + (f"The peak of {fmt_number(peak)} requests/s uses {_share_words(peak / colocated)} of the colocated "
                   f"replicas' capacity ({fmt_number(colocated)} requests/s) and {_share_words(peak / decode)} of the "
                   f"decode pool's ({fmt_number(decode)} requests/s).")
