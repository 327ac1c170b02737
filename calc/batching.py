"""Serving a ragged stream of requests: static against continuous batching, and paged KV memory.

Three pieces, all pure numpy/pandas and deterministic for a seed:

1. ``calc.request_stream.make_requests``: a stream of requests with Poisson arrivals and random prompt and output
   lengths (CS336 lecture 10, Inference, "live traffic is ragged").
2. ``simulate_static`` / ``simulate_continuous``: the two schedulers run step by step on the
   napkin cost of one forward pass (``StepCost``, the inference course, week 11, step 4). Static batching forms a batch
   from whatever is waiting when the engine is idle and runs it until its longest request is done
   (the inference course, week 11: "static batching waits for the longest response in the batch"). Continuous batching
   (Orca, Yu et al. 2022, section 4.2, iteration-level scheduling) returns to the scheduler after
   every step: a finished request leaves and a waiting one takes its slot at the next step.
3. ``calc.kv_paging.kv_reservation``: the KV memory reserved, used and wasted by a contiguous max-length slab per
   request against PagedAttention's fixed-size blocks (Kwon et al. 2023, sections 3 and 4.1).

How a step is charged (one forward pass over every running sequence; the inference course, week 11, step 4, with
Orca's selective batching, section 4.3, for steps that also admit prompts):

    step_s = kv_s_per_token * (context tokens read + prompt tokens written)
             + max(weights_s, compute_s_per_token * (decode tokens + prompt tokens))

A step that admits requests processes their whole prompts in the same pass (their prefill) and
emits their first token at its end, so TTFT = end of that step - arrival. Attention FLOPs of the
prompt are left out (they are small against 2*N per token below a few thousand tokens).
Static batching keeps a finished sequence in the batch as padding until the batch ends: its slot
is computed and its cache is read every step (that is what a padded tensor costs), but its tokens
do not count. The model is a lower bound like the napkin step it is built on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .checks import check_nonneg_number, check_positive_int, check_positive_number
from .cost import prefix_cache_savings
from .kv import kv_bytes_per_token
from .kv_paging import PagingSummary, kv_reservation
from .memory import weight_bytes
from .request_stream import check_requests, make_requests
from .step import decode_step_time, max_batch

POLICIES = ("static", "continuous")


# --------------------------------------------------------------------------- cost of one step

@dataclass(frozen=True)
class StepCost:
    """The napkin cost of one forward pass (the inference course, week 11, step 4), split so ragged batches can be charged.

    Fields (seconds):
        weights_s: reading all weights once (weight bytes / W); paid by every step.
        compute_s_per_token: 2 * N_active / P, the matmul time of one token through the model.
        kv_s_per_token: KV bytes of one context token / W, the time to read (or write) it.

    For B sequences whose contexts sum to C tokens, a decode step takes
    ``kv_s_per_token * C + max(weights_s, compute_s_per_token * B)``, which is DESIGN.md's
    ``B*KV/W + max(weight_bytes/W, 2*N_active*B/P)`` when every context is the same.

    Raises:
        ValueError: a negative or non-finite field, or all three zero.
    """

    weights_s: float
    compute_s_per_token: float
    kv_s_per_token: float

    def __post_init__(self):
        for name in ("weights_s", "compute_s_per_token", "kv_s_per_token"):
            check_nonneg_number(getattr(self, name), name)
        if self.weights_s == 0 and self.compute_s_per_token == 0 and self.kv_s_per_token == 0:
            raise ValueError("a StepCost needs at least one positive term; all three are 0")

    def step_s(self, decode_tokens, context_tokens, prompt_tokens=0):
        """Seconds of one step (numpy-broadcasting over arrays).

        Args:
            decode_tokens: sequences that emit a token by decoding (B).
            context_tokens: KV tokens read by those sequences, summed over them (C).
            prompt_tokens: prompt tokens prefilled in the same pass (their KV is written).
        Returns:
            kv_s_per_token * (C + prompt) + max(weights_s, compute_s_per_token * (B + prompt)).
        """
        return (self.kv_s_per_token * (np.asarray(context_tokens) + prompt_tokens)
                + np.maximum(self.weights_s, self.compute_s_per_token * (np.asarray(decode_tokens) + prompt_tokens)))

    def _one_step_s(self, decode_tokens: int, context_tokens: int, prompt_tokens: int = 0) -> float:
        """``step_s`` of one step from whole numbers, in Python floats (the same IEEE arithmetic, without
        numpy's per-call cost on scalars: the simulators charge hundreds of admission steps a run)."""
        return (self.kv_s_per_token * float(context_tokens + prompt_tokens)
                + max(self.weights_s, self.compute_s_per_token * float(decode_tokens + prompt_tokens)))


def step_cost_from_model(model, accelerator, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                         batch_hint: int = 1, embedding: str = "gather") -> StepCost:
    """The ``StepCost`` of ``model`` on ``accelerator``, from calc's own roofline.

    weights_s is ``decode_step_time(model, accelerator, batch_hint, 1).weights_s`` (the weight
    bytes read / W; for a mixture-of-experts model that read depends on how many experts the
    step's tokens touch, so it is taken at ``batch_hint`` tokens, e.g. the slot limit, and steps
    with fewer tokens are charged the same read); compute_s_per_token is that step's compute_s /
    batch_hint (2 * N_active / P); kv_s_per_token is ``kv_bytes_per_token(model, kv_dtype) / W``
    (full-attention bytes per token: sliding windows are not applied, so for windowed models the
    cache term is an upper bound). For a dense full-attention model and equal contexts,
    ``cost.step_s(B, B*S)`` equals ``decode_step_time(model, accelerator, B, S).total_s`` (with
    ``embedding="gather"``, up to the B - batch_hint input-embedding rows a step gathers: B x D bytes).
    ``embedding``: "gather" (default) or "table" (the course's napkin), as in ``decode_step_time``.

    Raises:
        ValueError: an unknown dtype or a non-positive batch_hint (from calc's checks).
    Source: The inference course, week 11, step 4 (the decode step lower bound).
    """
    hint = check_positive_int(batch_hint, "batch_hint")
    step = decode_step_time(model, accelerator, hint, 1, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            embedding=embedding)
    return StepCost(weights_s=float(step.weights_s), compute_s_per_token=float(step.compute_s) / hint,
                    kv_s_per_token=float(kv_bytes_per_token(model, kv_dtype)) / accelerator.bandwidth_bytes_per_s)


# --------------------------------------------------------------------------- the two schedulers

@dataclass(frozen=True)
class BatchingSummary:
    """Headline numbers of one simulated run.

    Fields: policy ("static" | "continuous"); n_requests; output_tokens (all requests);
    makespan_s (first arrival to last completion); throughput_tokens_per_s (output tokens /
    makespan); ttft_{mean,p50,p90}_s (first token - arrival); e2e_{mean,p50,p90}_s (last token -
    arrival); mean_utilisation (useful slots / slot limit, weighted by step duration over the
    steps that ran; idle gaps with nothing to run are left out); n_steps; max_slots.
    Percentiles use numpy's default linear interpolation.
    """

    policy: str
    n_requests: int
    output_tokens: int
    makespan_s: float
    throughput_tokens_per_s: float
    ttft_mean_s: float
    ttft_p50_s: float
    ttft_p90_s: float
    e2e_mean_s: float
    e2e_p50_s: float
    e2e_p90_s: float
    mean_utilisation: float
    n_steps: int
    max_slots: int


@dataclass(frozen=True)
class BatchingRun:
    """One simulated run.

    Fields:
        steps: DataFrame, one row per forward pass: ``step`` (0-based), ``start_s``, ``time_s``
            (end of the step, seconds), ``step_s`` (duration), ``active_slots`` (sequences that emit
            a useful token), ``slot_utilisation`` (active_slots / max_slots), ``tokens_emitted``,
            ``cumulative_tokens``, ``queue_len`` (requests arrived and waiting at the step's start,
            after admission), ``prefill_tokens`` (prompt tokens processed in the step).
        requests: the input frame plus ``admit_s``, ``first_token_s``, ``finish_s``, ``ttft_s``,
            ``e2e_s`` (seconds).
        summary: ``BatchingSummary``.
    """

    policy: str
    steps: pd.DataFrame
    requests: pd.DataFrame
    summary: BatchingSummary


class _StepLog:
    """Collects step rows as numpy chunks (one chunk per segment) and builds the frame once."""

    def __init__(self):
        self.chunks = []  # (start, dur, active, queue, prefill); the last three may be scalars
        self.sizes = []   # rows of each chunk

    def add(self, start, dur, active, queue, prefill):
        self.chunks.append((start, dur, active, queue, prefill))
        self.sizes.append(np.size(start))

    def frame(self, max_slots: int) -> pd.DataFrame:
        bounds = np.concatenate(([0], np.cumsum(self.sizes, dtype=np.int64))).tolist()

        def column(i, dtype):
            # one slice assignment per chunk (a scalar fills its rows): no per-chunk array to concatenate
            out = np.empty(bounds[-1], dtype=dtype)
            for c, lo, hi in zip(self.chunks, bounds, bounds[1:]):
                out[lo:hi] = c[i]
            return out

        start, dur, active = column(0, float), column(1, float), column(2, np.int64)
        return pd.DataFrame({
            "step": np.arange(start.size), "start_s": start, "time_s": start + dur, "step_s": dur,
            "active_slots": active, "slot_utilisation": active / max_slots,
            "tokens_emitted": active, "cumulative_tokens": np.cumsum(active),
            "queue_len": column(3, np.int64), "prefill_tokens": column(4, np.int64),
        })


def _finish_run(policy, requests, arrival, admit, first, finish, log, max_slots) -> BatchingRun:
    steps = log.frame(max_slots)
    req = requests.reset_index(drop=True).copy()
    req["admit_s"], req["first_token_s"], req["finish_s"] = admit, first, finish
    req["ttft_s"] = first - arrival
    req["e2e_s"] = finish - arrival
    output_tokens = int(req["output_len"].sum())
    makespan = float(finish.max() - arrival.min())
    busy = float(steps["step_s"].sum())
    util = float((steps["active_slots"] * steps["step_s"]).sum() / (max_slots * busy)) if busy > 0 else 0.0
    ttft, e2e = req["ttft_s"].to_numpy(), req["e2e_s"].to_numpy()
    summary = BatchingSummary(
        policy=policy, n_requests=len(req), output_tokens=output_tokens, makespan_s=makespan,
        throughput_tokens_per_s=output_tokens / makespan if makespan > 0 else math.inf,
        ttft_mean_s=float(ttft.mean()), ttft_p50_s=float(np.percentile(ttft, 50)),
        ttft_p90_s=float(np.percentile(ttft, 90)), e2e_mean_s=float(e2e.mean()),
        e2e_p50_s=float(np.percentile(e2e, 50)), e2e_p90_s=float(np.percentile(e2e, 90)),
        mean_utilisation=util, n_steps=len(steps), max_slots=max_slots)
    return BatchingRun(policy=policy, steps=steps, requests=req, summary=summary)


def _check_run_args(requests: pd.DataFrame, max_slots: int, cost: StepCost):
    """The simulators' argument checks: (arrival, prompt, output, max_slots, cost), or ValueError."""
    arrival, prompt, output = check_requests(requests)
    max_slots = check_positive_int(max_slots, "max_slots")
    if not isinstance(cost, StepCost):
        raise ValueError(f"cost must be a StepCost, got {type(cost).__name__}")
    return arrival, prompt, output, max_slots, cost


def simulate_static(requests: pd.DataFrame, max_slots: int, cost: StepCost) -> BatchingRun:
    """Static batching: a batch runs until its longest request is done; arrivals wait for it.

    When the engine is idle it takes up to ``max_slots`` waiting requests (first come, first
    served; it does not wait for a full batch) and runs them together: one prefill step over all
    their prompts (which emits every first token), then decode steps until the longest output is
    complete. Finished sequences stay in the batch as padding (computed and their cache read, their
    tokens discarded), so the batch costs as if every member ran to the longest length.

    Args:
        requests: frame with ``calc.request_stream.REQUEST_COLUMNS`` (e.g. from ``make_requests``), sorted by arrival.
        max_slots: the slot limit (maximum batch), a positive integer.
        cost: the ``StepCost`` of one forward pass.
    Returns:
        ``BatchingRun`` (steps frame, per-request times, summary).
    Raises:
        ValueError: a malformed request frame, a non-positive max_slots or a non-StepCost cost.
    Source: The inference course, week 11 ("static batching waits for the longest response in the batch"); CS336 lecture 10 (Inference).
    """
    arrival, prompt, output, max_slots, cost = _check_run_args(requests, max_slots, cost)
    n = arrival.size
    admit, first, finish = np.empty(n), np.empty(n), np.empty(n)
    log = _StepLog()
    t, nxt = 0.0, 0
    while nxt < n:
        t = max(t, arrival[nxt])
        b = min(max_slots, int(arrival.searchsorted(t, side="right")) - nxt)
        idx = np.arange(nxt, nxt + b)
        nxt += b
        p, o = prompt[idx], output[idx]
        p_sum, o_max = int(p.sum()), int(o.max())
        # step j = 0 is the prefill (token 1); step j >= 1 decodes token k = j + 1 and reads
        # every member's prompt plus the k - 1 tokens before it (padding included).
        k = np.arange(2, o_max + 1)
        durs = np.concatenate(([cost.step_s(0, 0, p_sum)], cost.step_s(b, p_sum + b * (k - 1))))
        starts = t + np.concatenate(([0.0], np.cumsum(durs[:-1])))
        ends = starts + durs
        o_sorted = np.sort(o)
        active = b - np.searchsorted(o_sorted, np.arange(1, o_max + 1), side="left")
        queue = arrival.searchsorted(starts, side="right") - nxt
        prefill = np.zeros(o_max, dtype=np.int64)
        prefill[0] = p_sum
        log.add(starts, durs, active, queue, prefill)
        admit[idx], first[idx], finish[idx] = t, ends[0], ends[o - 1]
        t = float(ends[-1])
    return _finish_run("static", requests, arrival, admit, first, finish, log, max_slots)


def simulate_continuous(requests: pd.DataFrame, max_slots: int, cost: StepCost) -> BatchingRun:
    """Continuous batching (Orca's iteration-level scheduling): the batch is re-formed every step.

    After each step, finished requests leave; if a slot is free and a request is waiting, it joins
    at the next step, whose forward pass also prefills its prompt (selective batching) and emits its
    first token. A request that arrives during a step waits for that step to end. Between arrivals
    and completions the batch is constant, so runs of identical-membership decode steps are
    computed in one vectorised segment (the result is the same as stepping one by one).

    Args / Returns / Raises: as ``simulate_static``.
    Source: Yu et al., Orca (OSDI 2022), sections 4.2-4.3; the inference course, week 11 ("continuous batching
    schedules per step: a finished request leaves, and a new one takes its place").
    """
    arrival, prompt, output, max_slots, cost = _check_run_args(requests, max_slots, cost)
    n = arrival.size
    admit, first, finish = np.empty(n), np.empty(n), np.empty(n)
    log = _StepLog()
    act = np.empty(0, dtype=np.int64)        # request indices in the batch
    remaining = np.empty(0, dtype=np.int64)  # tokens each still has to emit
    ctx = np.empty(0, dtype=np.int64)        # context tokens each reads at its next decode step
    t, nxt = 0.0, 0
    while nxt < n or act.size:
        if act.size == 0:
            t = max(t, arrival[nxt])
        n_waiting = int(arrival.searchsorted(t, side="right")) - nxt
        n_admit = min(max_slots - act.size, n_waiting)
        if n_admit > 0:
            new = np.arange(nxt, nxt + n_admit)
            nxt += n_admit
            p_new = int(prompt[new].sum())
            b_old = act.size
            dur = cost._one_step_s(b_old, int(ctx.sum()), p_new)
            log.add(t, dur, b_old + n_admit, n_waiting - n_admit, p_new)
            admit[new], first[new] = t, t + dur
            act = np.concatenate((act, new))
            remaining = np.concatenate((remaining - 1, output[new] - 1))
            ctx = np.concatenate((ctx + 1, prompt[new] + 1))
            t += dur
        else:
            b = act.size
            k_max = int(remaining.min())
            durs = cost.step_s(b, ctx.sum() + b * np.arange(k_max))
            ends = t + np.cumsum(durs)
            k = k_max
            if nxt < n and b < max_slots:  # stop at the step during which the next request arrives
                k = min(k_max, int(ends.searchsorted(arrival[nxt], side="left")) + 1)
            starts = np.concatenate(([t], ends[:k - 1]))
            log.add(starts, durs[:k], b, arrival.searchsorted(starts, side="right") - nxt, 0)
            remaining = remaining - k
            ctx = ctx + k
            t = float(ends[k - 1])
        done = remaining == 0
        if done.any():
            finish[act[done]] = t
            act, remaining, ctx = act[~done], remaining[~done], ctx[~done]
    return _finish_run("continuous", requests, arrival, admit, first, finish, log, max_slots)


def simulate_batching(requests: pd.DataFrame, policy: str, max_slots: int, cost: StepCost) -> BatchingRun:
    """Run ``simulate_static`` or ``simulate_continuous`` by name ("static" | "continuous").

    Raises:
        ValueError: an unknown policy, or whatever the chosen simulator raises.
    """
    if policy == "static":
        return simulate_static(requests, max_slots, cost)
    if policy == "continuous":
        return simulate_continuous(requests, max_slots, cost)
    raise ValueError(f"policy must be one of {', '.join(POLICIES)}; got {policy!r}")


def timeline(steps: pd.DataFrame, max_slots: int, end_s: float, n_bins: int = 200) -> pd.DataFrame:
    """Resample a steps frame onto ``n_bins`` equal time bins over [0, end_s] for charting.

    Returns:
        DataFrame with one row per bin: ``time_s`` (bin end), ``active_slots`` (time-weighted mean
        over the bin, idle time counted as 0), ``slot_utilisation`` (that / max_slots),
        ``tokens_per_s`` (tokens emitted by steps ending in the bin / bin width),
        ``cumulative_tokens`` (emitted by the bin's end), ``queue_len`` (at the bin's end, from
        the last step that started before it).
    Raises:
        ValueError: non-positive end_s, n_bins or max_slots.
    """
    end_s = check_positive_number(end_s, "end_s")
    n_bins = check_positive_int(n_bins, "n_bins")
    max_slots = check_positive_int(max_slots, "max_slots")
    edges = np.linspace(0.0, end_s, n_bins + 1)
    start = steps["start_s"].to_numpy()
    stop = steps["time_s"].to_numpy()
    active = steps["active_slots"].to_numpy(dtype=float)
    # Integral of active slots over time: piecewise linear through the step boundaries.
    knots_t = np.concatenate(([0.0], np.column_stack((start, stop)).ravel()))
    area = np.concatenate(([0.0], np.column_stack((np.zeros_like(active), active * (stop - start))).ravel()))
    integral = np.interp(edges, knots_t, np.cumsum(area))
    width = np.diff(edges)
    mean_active = np.diff(integral) / width
    cum = steps["cumulative_tokens"].to_numpy()
    n_done = np.searchsorted(stop, edges[1:], side="right")
    cum_at = np.where(n_done > 0, cum[np.maximum(n_done - 1, 0)], 0)
    n_started = np.searchsorted(start, edges[1:], side="right")
    queue = steps["queue_len"].to_numpy()
    queue_at = np.where(n_started > 0, queue[np.maximum(n_started - 1, 0)], 0)
    return pd.DataFrame({
        "time_s": edges[1:], "active_slots": mean_active, "slot_utilisation": mean_active / max_slots,
        "tokens_per_s": np.diff(np.concatenate(([0], cum_at))) / width,
        "cumulative_tokens": cum_at, "queue_len": queue_at})


@dataclass(frozen=True)
class BatchingComparison:
    """Static and continuous batching on the same stream.

    Fields: static, continuous (``BatchingRun``); summary (DataFrame, one row per policy with the
    ``BatchingSummary`` fields); timeline (long DataFrame: the ``timeline`` columns plus ``policy``,
    both policies on the same bins); speedup (continuous throughput / static throughput).
    """

    static: BatchingRun
    continuous: BatchingRun
    summary: pd.DataFrame
    timeline: pd.DataFrame
    speedup: float


def compare_batching(requests: pd.DataFrame, max_slots: int, cost: StepCost, n_bins: int = 200) -> BatchingComparison:
    """Simulate both schedulers on ``requests`` and line them up (see ``BatchingComparison``).

    Raises:
        ValueError: as ``simulate_static`` / ``timeline``.
    """
    runs = {p: simulate_batching(requests, p, max_slots, cost) for p in POLICIES}
    end_s = max(float(r.steps["time_s"].iloc[-1]) for r in runs.values())
    tl = pd.concat([timeline(r.steps, max_slots, end_s, n_bins).assign(policy=p) for p, r in runs.items()],
                   ignore_index=True)
    summary = pd.DataFrame([vars(r.summary) for r in runs.values()])
    speedup = runs["continuous"].summary.throughput_tokens_per_s / runs["static"].summary.throughput_tokens_per_s
    return BatchingComparison(static=runs["static"], continuous=runs["continuous"], summary=summary,
                              timeline=tl, speedup=float(speedup))


# --------------------------------------------------------------------------- one call for the page

@dataclass(frozen=True)
class BatchingExperiment:
    """Everything the batching page shows, from one call of ``batching_experiment``.

    Fields: requests (the stream, see ``make_requests``); cost (``StepCost``); memory_max_batch
    (sequences of max_len_tokens whose cache fits beside the weights, ``calc.max_batch``);
    max_slots (the slot limit used: the requested limit capped by memory_max_batch); comparison
    (``BatchingComparison``); paging (per-request DataFrame of ``kv_reservation``) and
    paging_summary (``PagingSummary``, with the budget memory - weights); kv_bytes_per_token;
    prompt_spread and output_spread (as used, after clamping).
    """

    requests: pd.DataFrame
    cost: StepCost
    memory_max_batch: int
    max_slots: int
    comparison: BatchingComparison
    paging: pd.DataFrame
    paging_summary: PagingSummary
    kv_bytes_per_token: float
    prompt_spread: float
    output_spread: float


def batching_experiment(model, accelerator, *, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                        n_requests: int = 200, arrival_rate_per_s: float = 16.0,
                        prompt_mean_tokens: float = 512, prompt_spread: float = 0.5,
                        output_mean_tokens: float = 256, output_spread: float = 1.0,
                        distribution: str = "lognormal", max_len_tokens: int = 4096,
                        slot_limit: int = 64, block_size_tokens: int = 16, seed: int = 0,
                        n_bins: int = 200) -> BatchingExperiment:
    """Build the request stream, simulate both schedulers and measure paged against contiguous KV.

    The slot limit is ``min(slot_limit, max_batch(model, accelerator, max_len_tokens))``: a
    contiguous allocator must reserve max_len_tokens per sequence. With the "uniform" distribution
    the spreads are clamped to 1 (a wider slider serves the lognormal one). The paging section
    takes each request's final length (prompt + output) and the budget
    ``accelerator.memory_bytes - weight_bytes(model, weight_dtype)``.

    Returns:
        ``BatchingExperiment``.
    Raises:
        ValueError: the weights leave no room for one sequence of max_len_tokens ("does not fit"),
            or any invalid argument (see ``make_requests``, ``simulate_static``, ``kv_reservation``).
    Sources: as the functions it calls (the inference course, week 11, steps 2 and 4; Orca; PagedAttention).
    """
    if distribution == "uniform":
        prompt_spread = min(check_nonneg_number(prompt_spread, "prompt_spread"), 1.0)
        output_spread = min(check_nonneg_number(output_spread, "output_spread"), 1.0)
    slot_limit = check_positive_int(slot_limit, "slot_limit")
    requests = make_requests(n_requests, arrival_rate_per_s, prompt_mean_tokens, prompt_spread,
                             output_mean_tokens, output_spread, distribution, max_len_tokens, seed)
    memory_max = max_batch(model, accelerator, max_len_tokens, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    if memory_max < 1:
        raise ValueError(f"{model.name} does not fit on one {accelerator.name} with {weight_dtype} weights "
                         f"and a {max_len_tokens:,}-token {kv_dtype} cache: no room for a single sequence. "
                         "Pick a larger GPU, smaller dtypes or a shorter maximum length.")
    slots = min(slot_limit, memory_max)
    cost = step_cost_from_model(model, accelerator, weight_dtype, kv_dtype, batch_hint=slots)
    comparison = compare_batching(requests, slots, cost, n_bins)
    per_token = float(kv_bytes_per_token(model, kv_dtype))
    budget = max(accelerator.memory_bytes - weight_bytes(model, weight_dtype), 0.0)
    lengths = (requests["prompt_len"] + requests["output_len"]).to_numpy()
    paging, paging_summary = kv_reservation(lengths, per_token, max_len_tokens, block_size_tokens, budget)
    return BatchingExperiment(requests=requests, cost=cost, memory_max_batch=int(memory_max), max_slots=slots,
                              comparison=comparison, paging=paging, paging_summary=paging_summary,
                              kv_bytes_per_token=per_token, prompt_spread=float(prompt_spread),
                              output_spread=float(output_spread))


def prefix_cache_curve(model, n_requests: int, prefix_len: int, unique_len: int = 0, kv_dtype: str = "bf16",
                       n_points: int = 21) -> pd.DataFrame:
    """``calc.prefix_cache_savings`` over hit rates from 0 to 1, for a chart.

    Returns:
        DataFrame with ``n_points`` rows: ``hit_rate`` (0..1, evenly spaced), ``prefill_tokens_with``,
        ``prefill_tokens_without`` (tokens), ``cache_bytes_with``, ``cache_bytes_without`` (bytes).
    Raises:
        ValueError: n_points < 2, or whatever ``prefix_cache_savings`` raises.
    Source: The inference course, week 11, step 2 (prefix caching); SGLang (Zheng et al. 2024), RadixAttention.
    """
    n_points = check_positive_int(n_points, "n_points")
    if n_points < 2:
        raise ValueError(f"n_points must be at least 2, got {n_points}")
    rows = []
    for h in np.linspace(0.0, 1.0, n_points):
        s = prefix_cache_savings(model, n_requests, prefix_len, unique_len, float(h), kv_dtype)
        rows.append({"hit_rate": float(h), "prefill_tokens_with": s.prefill_tokens_with,
                     "prefill_tokens_without": s.prefill_tokens_without,
                     "cache_bytes_with": s.cache_bytes_with, "cache_bytes_without": s.cache_bytes_without})
    return pd.DataFrame(rows)
