"""Planning a deployment on many accelerators, on top of the layout's step (``calc.parallel``).

Tokens/s per GPU against tokens/s per user for every layout and batch and their Pareto front
(``throughput_frontier``, NVIDIA AIConfigurator's axes); the cheapest layout, batch and replica count
for a traffic and TPOT/TTFT targets (``capacity_plan``, with its binding constraint; ``plan_grid``,
``plan_options``); separate prefill and decode pools (``disaggregated_plan``); the smallest layout
that holds a model (``smallest_tp``, ``smallest_layout``); every accelerator of the catalogue with the
smallest TP that holds a model (``which_gpus``); one layout's headline numbers (``layout_summary``).
Lower bounds, like the rest of calc.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .collectives import default_interconnect
from .cost import cost_per_million
from .checks import check_fraction, check_nonneg_number, check_positive_int, check_positive_number
from .hardware import Accelerator, get_accelerator, list_accelerators
from .models import ModelConfig
from .gpu_share import GpuMemory, gpu_memory, max_batch_per_replica
from .layout import Layout, make_layout
from .parallel import parallel_decode_step, parallel_prefill, parallel_step_arrays
from .serving import serving_frontier


#: Layout grid of the capacity plan (the benchmark's grid).
PLAN_TP = (1, 2, 4, 8)


PLAN_PP = (1, 2)


PLAN_MAX_BATCH = 512
#: How a plan times a layout: "bound" (the roofline lower bound, the course's numbers) or "serving" (the serving
#: model's estimate for an engine, ``calc.serving``).
PLAN_TIMINGS = ("bound", "serving")


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


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:,.2f} ms" if ms < 10 else f"{ms:,.1f} ms" if ms < 100 else f"{ms:,.0f} ms"


def pareto_mask(x, y) -> np.ndarray:
    """Boolean mask of the points no other point beats on both axes (both maximised), vectorised:
    sort by x descending (ties by y descending), keep a point when its y exceeds every y before it."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.lexsort((-y, -x))
    ys = y[order]
    best_before = np.concatenate([[-np.inf], np.maximum.accumulate(ys)[:-1]])
    mask = np.empty(len(x), dtype=bool)
    mask[order] = ys > best_before
    return mask


@dataclass(frozen=True)
class ServingTraffic:
    """Traffic a deployment must serve.

    Fields:
        requests_per_s: average arrival rate (>= 0).
        peak_to_average: peak rate / average (>= 1); capacity is sized for the peak.
        input_tokens, output_tokens: per request (>= 1).
        prefix_hit_rate: fraction of input tokens found in the prefix cache (skip prefill), in [0, 1].

    Raises:
        ValueError: negative rate, a peak below the average, lengths below 1, a rate outside [0, 1].
    """

    requests_per_s: float = 1.0
    peak_to_average: float = 1.0
    input_tokens: int = 2048
    output_tokens: int = 256
    prefix_hit_rate: float = 0.0

    def __post_init__(self):
        check_nonneg_number(self.requests_per_s, "requests_per_s")
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
            "traffic" when none of them would save one.
        max_batch: the memory ceiling per replica of the layout.
        verdict: one sentence.
        batch_cap: the largest batch the grid tried (``plan_grid``'s ``max_batch``).
        refused: ((layout label, the engine's reason), ...) of the grid's layouts skipped as the engines
            refuse them (``refused_layouts``).
        timing: "bound" (roofline lower bounds) or "serving" (the serving model's estimate).
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


def plan_grid(model: ModelConfig, accelerator: Accelerator, traffic: ServingTraffic, weight_dtype: str = "bf16",
              kv_dtype: str = "bf16", tps=PLAN_TP, pps=PLAN_PP, eps=None, max_batch: int = PLAN_MAX_BATCH,
              reserve_bytes: float = 0.0, interconnect=None, embedding: str = "gather",
              logits: str = "all", timing: str = "bound", engine: str = "vllm") -> pd.DataFrame:
    """Every (layout, batch) of the grid with its TPOT, TTFT, memory fit and replica capacity.

    ``timing="serving"`` times each (layout, batch) with the serving model instead
    (``calc.serving.serving_frontier`` for ``engine``, continuous batching, B requests in flight per
    replica, prompts of the uncached ``ceil((1 - hit) x input)`` tokens): TPOT and TTFT are the estimates
    (fixed costs, efficiency, batching interference, queueing included) and a replica serves
    ``output tokens/s / output tokens`` requests per second. Memory fit stays the bound's. The frame's
    ``attrs``: ``timing``, ``engine`` and ``notices`` (the serving model's fallbacks).

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
        ValueError: invalid dtypes or sizes.
    """
    mb = check_positive_int(max_batch, "max_batch")
    if timing not in PLAN_TIMINGS:
        raise ValueError(f"timing must be one of {', '.join(PLAN_TIMINGS)}; got {timing!r}")
    notices: list[str] = []
    if eps is None:
        eps = plan_eps(model)
    ctx_mean = traffic.input_tokens + max(1, traffic.output_tokens // 2)
    ctx_full = traffic.input_tokens + traffic.output_tokens
    cached = int(round(traffic.prefix_hit_rate * traffic.input_tokens))
    new = max(1, traffic.input_tokens - cached)
    b = np.arange(1, mb + 1)
    cols = {k: [] for k in ("tp", "pp", "ep", "layout", "gpus_per_replica", "max_batch", "tpot_s", "ttft_s",
                            "requests_per_s_per_replica")}
    for tp in tps:
        for pp in pps:
            for ep in eps:
                try:
                    lay = make_layout(model, tp, pp, ep)
                    ceiling = max_batch_per_replica(model, accelerator, ctx_full, lay, weight_dtype, kv_dtype,
                                                    reserve_bytes)
                    if timing == "serving":
                        fr = serving_frontier(model, accelerator, new, traffic.output_tokens, b, tp, pp, ep,
                                              weight_dtype, kv_dtype, engine, interconnect=interconnect)
                        notices.extend(n for n in fr.attrs.get("notices", ()) if n not in notices)
                        tpot = fr["tpot_s"].to_numpy(float)
                        ttft = fr["ttft_s"].to_numpy(float)
                        rps = (fr["tokens_per_s_per_gpu"].to_numpy(float) * lay.gpus_per_replica
                               / traffic.output_tokens)
                    else:
                        a = parallel_step_arrays(model, accelerator, b, ctx_mean, lay, weight_dtype, kv_dtype,
                                                 interconnect=interconnect, embedding=embedding)
                        ttft = np.full(mb, parallel_prefill(model, accelerator, new, 1, lay, weight_dtype, kv_dtype,
                                                            interconnect, past_len=cached, embedding=embedding,
                                                            logits=logits).total_s)
                        tpot = np.asarray(a["total_s"], dtype=float)
                        rps = 1.0 / (ttft + traffic.output_tokens * tpot / b)
                except ValueError:
                    continue
                for k, v in (("tp", tp), ("pp", pp), ("ep", ep), ("layout", lay.label),
                             ("gpus_per_replica", lay.gpus_per_replica), ("max_batch", ceiling)):
                    cols[k].append(np.full(mb, v))
                cols["tpot_s"].append(tpot)
                cols["ttft_s"].append(ttft)
                cols["requests_per_s_per_replica"].append(rps)
    if not cols["tp"]:
        raise ValueError(f"no layout of the grid can run {model.name} on {accelerator.name}")
    df = pd.DataFrame({k: np.concatenate(v) for k, v in cols.items()})
    batch = np.tile(b, len(cols["tp"]))
    df.insert(5, "batch", batch)
    df.insert(7, "fits", batch <= df["max_batch"].to_numpy())
    df.attrs.update(timing=timing, engine=engine if timing == "serving" else "", notices=tuple(notices))
    df.attrs["refused"] = refused_layouts(model, tps, pps, eps)
    return df


def _cheapest(grid: pd.DataFrame, peak_rps: float, ok: np.ndarray):
    """Index of the cheapest feasible row (fewest GPUs, then most requests/s per GPU), and its replicas."""
    if not ok.any():
        return None, None
    rps = grid["requests_per_s_per_replica"].to_numpy()
    replicas = np.maximum(1, np.ceil(np.round(peak_rps / rps, 9))).astype(np.int64)
    gpus = replicas * grid["gpus_per_replica"].to_numpy()
    gpus_ok = np.where(ok, gpus, np.iinfo(np.int64).max)
    best = gpus_ok.min()
    cand = np.flatnonzero(gpus_ok == best)
    per_gpu = rps[cand] / grid["gpus_per_replica"].to_numpy()[cand]
    i = int(cand[np.argmax(per_gpu)])
    return i, replicas


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
    the replicas the peak needs, or the one always-on replica).

    Args:
        price_per_hour_usd: per GPU (default: the accelerator's list price; NaN dollars if none).
        grid: a ``plan_grid`` already computed for these inputs (the page reuses it; its ``attrs["timing"]``
            then says how it was timed).
        timing: "bound" (default: the roofline lower bound, the course's numbers) or "serving" (the serving
            model's estimate for ``engine``, see ``plan_grid``); the verdict says which.

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
        if not fits.any():
            raise ValueError(f"{model.name} does not fit on {accelerator.name} in any layout of "
                             f"{grid_label(sorted(set(g['tp'])), sorted(set(g['pp'])), sorted(set(g['ep'])))} "
                             f"(up to {g['gpus_per_replica'].max()} GPUs) with one sequence of "
                             f"{traffic.input_tokens + traffic.output_tokens:,} tokens (the traffic's input + "
                             "output, what each sequence reserves)")
        best_tpot = g.loc[fits, "tpot_s"].min()
        best_ttft = g.loc[fits, "ttft_s"].min()
        if best_tpot > tpot_t:
            raise ValueError(f"no layout of the grid meets a TPOT of {_ms(tpot_t)}: the fastest that fits "
                             f"takes {_ms(best_tpot)} per token")
        if best_ttft > ttft_t:
            raise ValueError(f"no layout of the grid meets a TTFT of {_ms(ttft_t)}: the fastest prefill "
                             f"that fits takes {_ms(best_ttft)}")
        raise ValueError("no layout of the grid meets both the TPOT and the TTFT target at once")
    gpus = int(replicas[i] * g["gpus_per_replica"].iat[i])
    relaxed = {"memory": np.ones_like(fits) & tpot_ok & ttft_ok, "TPOT": fits & ttft_ok, "TTFT": fits & tpot_ok}
    savings, relaxed_rows = {}, {}
    for name, ok in relaxed.items():
        j, rep = _cheapest(g, peak, ok)
        savings[name] = gpus - int(rep[j] * g["gpus_per_replica"].iat[j])
        relaxed_rows[name] = g.iloc[j]
    best = max(savings.values())
    binding = "traffic" if best <= 0 else next(k for k in ("memory", "TPOT", "TTFT") if savings[k] == best)
    row = g.iloc[i]
    lay = Layout(int(row["tp"]), int(row["pp"]), int(row["ep"]), int(replicas[i]))
    cap = int(g["batch"].max())
    # The grid's own batch cap: the plan's layout at the batches above it that memory holds (up to 16 x the cap)
    # and the TPOT target allows; it binds when those would need fewer GPUs, and at least as many fewer as any
    # other relaxation saves.
    above = min(int(row["max_batch"]), 16 * cap)
    cap_best_batch = None
    if int(row["batch"]) == cap and above > cap and lay.replicas > 1:
        b = np.arange(cap + 1, above + 1)
        a = parallel_step_arrays(model, accelerator, b, traffic.input_tokens + max(1, traffic.output_tokens // 2),
                                 make_layout(model, lay.tp, lay.pp, lay.ep), weight_dtype, kv_dtype,
                                 interconnect=interconnect, embedding=embedding)
        tpot_b = np.asarray(a["total_s"], dtype=float)
        ok = tpot_b <= tpot_t
        if ok.any():
            rps_b = 1.0 / (float(row["ttft_s"]) + traffic.output_tokens * tpot_b[ok] / b[ok])
            k = int(np.argmax(rps_b))
            fewer = gpus - max(1, math.ceil(round(peak / rps_b[k], 9))) * lay.gpus_per_replica
            if fewer > 0 and fewer >= best:
                binding, cap_best_batch = "batch cap", int(b[ok][k])
    rps_row = float(row["requests_per_s_per_replica"])
    prefill_share = float(row["ttft_s"]) * rps_row
    if binding == "traffic" and lay.replicas > 1 and prefill_share > 0.5:
        binding = "prefill"  # each request's prefill fills most of a replica's time: batch cannot help
    usd_h = math.nan if price is None else gpus * float(price)
    why = {"batch cap": f"the plan tries batches up to {cap:,}; this layout holds {int(row['max_batch']):,} sequences "
                        f"in memory and at batch {cap_best_batch or 0:,} would need fewer replicas within the TPOT "
                        "target: raise the largest batch tried",
           "prefill": f"each request's prefill, {float(row['ttft_s']) * 1e3:,.0f} ms of compute, fills "
                      f"{prefill_share:.0%} of a replica's time, so a replica serves at most "
                      f"{1 / float(row['ttft_s']):,.1f} requests/s whatever its batch; a prefix cache or a separate "
                      "prefill pool lifts it",
           "memory": (f"this layout holds {int(row['max_batch']):,} sequences, more than the plan's batch; "
                      f"the narrower {relaxed_rows['memory']['layout']} would serve the traffic with fewer GPUs "
                      "but does not hold the model and its cache"
                      if int(row["batch"]) < int(row["max_batch"]) and relaxed_rows["memory"]["layout"] != row["layout"]
                      else "more memory per GPU would allow a larger batch or a narrower replica"),
           "TPOT": "a looser TPOT target would allow a larger batch or less TP",
           "TTFT": "a looser TTFT target would allow a narrower replica",
           "traffic": "the traffic sets the number of replicas" if lay.replicas > 1
           else "one always-on replica covers the traffic"}[binding]
    money = "" if price is None else f", ${usd_h:,.2f}/h (${usd_h * HOURS_PER_MONTH:,.0f} a month)"
    verdict = (f"{lay.replicas:,} replica{'s' if lay.replicas != 1 else ''} of {lay.label} at batch "
               f"{int(row['batch']):,} = {gpus:,} x {accelerator.name}{money}: TPOT {row['tpot_s'] * 1e3:.1f} ms, "
               f"TTFT {row['ttft_s'] * 1e3:,.0f} ms; binding: {binding} ({why}).")
    if timing == "serving":
        verdict = (f"Sized with the serving estimate ({g.attrs.get('engine', engine)}): " + verdict
                   + " TPOT and TTFT are estimates, not lower bounds.")
    return CapacityPlan(lay, int(row["batch"]), gpus, lay.gpus_per_replica, usd_h, usd_h * HOURS_PER_MONTH,
                        float(row["tpot_s"]), float(row["ttft_s"]), float(row["requests_per_s_per_replica"]),
                        binding, int(row["max_batch"]), verdict, cap, tuple(g.attrs.get("refused", ())), timing)


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
    one replica. The KV cache moves from pool to pool once per request; its time is left out.

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
        raise ValueError(f"no layout of the grid prefills within a TTFT of {_ms(ttft_t)}")
    if not dec_ok.any():
        raise ValueError(f"no layout of the grid decodes within a TPOT of {_ms(tpot_t)}")
    pre_rep = np.maximum(1, np.ceil(np.round(peak * g["ttft_s"].to_numpy(), 9)))
    dec_rep = np.maximum(1, np.ceil(np.round(peak * traffic.output_tokens * g["tpot_s"].to_numpy()
                                             / g["batch"].to_numpy(), 9)))
    big = np.iinfo(np.int64).max
    i = int(np.argmin(np.where(pre_ok, pre_rep * width, big)))
    j = int(np.argmin(np.where(dec_ok, dec_rep * width, big)))
    lay_p = Layout(int(g["tp"].iat[i]), int(g["pp"].iat[i]), int(g["ep"].iat[i]), int(pre_rep[i]))
    lay_d = Layout(int(g["tp"].iat[j]), int(g["pp"].iat[j]), int(g["ep"].iat[j]), int(dec_rep[j]))
    n_p, n_d = lay_p.n_gpus, lay_d.n_gpus
    usd_h = math.nan if price is None else (n_p + n_d) * float(price)
    verdict = (f"Disaggregated: prefill on {lay_p.replicas:,} x {lay_p.label} ({n_p:,} GPU{'s' * (n_p != 1)}), decode on "
               f"{lay_d.replicas:,} x {lay_d.label} at batch {int(g['batch'].iat[j]):,} ({n_d:,} GPU{'s' * (n_d != 1)}): "
               f"{n_p / n_d:.2f} prefill GPUs per "
               f"decode GPU, {n_p + n_d} in all" + ("" if price is None else f", ${usd_h:,.2f}/h") + ".")
    return DisaggregatedPlan(lay_p, lay_d, n_p, n_d, n_p / n_d, int(g["batch"].iat[j]), float(g["tpot_s"].iat[j]),
                             float(g["ttft_s"].iat[i]), n_p + n_d, usd_h, verdict)


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
