"""The monthly bill of a product built on LLM calls: API tiers, prompt-cache hits, self-hosting.

Chapter 9, LLM inference (last part): "in a scaled product, model selection is essentially unit economics".

    monthly_usd = 30 x G x (missed input x base price + hit input x cached price + output x output price)
                  + cache-write surcharge

with G the generations per day. The traffic model (``TrafficScenario``): of the daily active users,
a share remixes existing content and a share creates original content each day; each of these
creators runs ``generations_per_creator`` generations. Every generation sends a prompt made of a
shared prefix (system prompt, style guide, few-shot examples: the same bytes for everyone, so it
can be served from the provider's prompt cache) and a unique part, and receives ``output_tokens``.

Prompt caching (reference data section 4.2): ``cache_hit_rate`` is the fraction of generations
whose shared prefix is found in the cache. A hit bills the prefix at the cached-read price; a miss
bills it at the base input price and writes it to the cache. Providers that charge for writes bill
the written tokens at ``cache_write_multiplier`` x base (Anthropic 5-minute TTL: 1.25x; OpenAI before
GPT-5.6 and Gemini implicit caching: 1.0x, i.e. no surcharge). The bill shows the surcharge,
(multiplier - 1) x base x written tokens, as its own "cache writes" component, so the missed-input
component stays exactly the chapter's "missed input x base price". The unique part always misses.

Self-hosting (``SelfHostedSetup``): an open model from calc's catalogue on rented GPUs. Its cost is
GPU time, not tokens: output tokens take decode time at the chosen batch (``decode_step_time``,
The inference course, week 11, step 4, tokens/s per replica at that batch), input tokens take prefill time
(``prefill_time``, compute-bound), and prefix-cache hits skip prefill (vLLM/SGLang automatic prefix
caching), so one generation occupies a replica for

    replica_s = missed input tokens / prefill tokens_per_s + output tokens / decode tokens_per_s.

The replicas needed are ceil(average busy replicas x peak-to-average ratio), with a floor of one
always-on replica, so the self-hosted bill is a step function of DAU and is not zero at zero DAU
(the floor replica is paid for whether anyone uses it or not). A replica is the smallest power of
two of GPUs (up to 8) whose memory holds the weights and at least one sequence's KV cache, run
tensor-parallel as ``calc.parallel`` lays it out: each GPU holds and reads its share of the weights
and of the KV heads, and every layer pays its two all-reduces over the GPU's interconnect.

Timing (``SelfHostedSetup.timing``): "bound" (the default, the course's numbers) times the replica with
the roofline above, a lower bound on time that real engines measure well above (DESIGN.md: 1.2-2x), so
it buys too few GPUs. "serving" times it with ``calc.serving.serving_estimate``: what an engine (vLLM,
SGLang, TensorRT-LLM) measures serving requests of the scenario's prompt and output at the setup's batch
under continuous batching, with a low-high range from the cross-validated errors. Its output tokens per
second X per replica (``output_tokens_per_s_per_gpu`` x GPUs) already carries every prompt's prefill,
since the serving model has no prefix cache; a prefix-cache hit skips its token's prefill, credited at
the bound's prefill rate (the least time that token costs, so the credit never makes the bill too
small). So decode is priced at

    decode tokens/s = 1 / (1 / X - prompt tokens / (output tokens x prefill tokens/s))

(at most the bound's decode rate: no engine beats the roofline), and the same replica_s formula holds:
with no hit, replica_s = output tokens / X. The low throughput of the range gives the high bill.

All money is USD; token prices are USD per 1e6 tokens ("per 1M"); a month is 30 days.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .api_tiers import PriceTier
from .checks import check_choice, check_nonneg_number, check_positive_int, check_positive_number
from .cost import cost_per_million
from .dtypes import dtype_bytes, kv_dtype_bytes
from .step import decode_step_time, max_batch, prefill_time
from .product_traffic import DAYS_PER_MONTH, HOURS_PER_MONTH, SECONDS_PER_DAY, TrafficScenario
from .serving import context_notice, serving_estimate

MAX_PEAK_TO_AVERAGE = 100.0
MAX_GPUS_PER_REPLICA = 8
#: How a self-hosted replica is timed: the roofline bound (the course's default) or the serving estimate.
TIMINGS = ("bound", "serving")

BILL_COMPONENTS = ("input_missed_usd", "input_hit_usd", "cache_write_usd", "output_usd", "idle_usd")


# The API bill
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MonthlyBill:
    """One tier's monthly bill, USD, by component.

    Fields:
        name, model: the tier.
        input_missed_usd, input_hit_usd, cache_write_usd, output_usd: monthly components (for a
            self-hosted tier: GPU time spent on prefill, 0, 0, GPU time spent on decode).
        idle_usd: rented GPU time not busy on average (self-hosted only: peak headroom and the
            always-on floor; 0 for API tiers).
        total_usd: the monthly bill.
        per_generation_usd: total_usd / monthly generations (NaN when there is no traffic and the
            bill is not per token).
        per_dau_usd: total_usd / dau (NaN at dau = 0 for the same reason). For API tiers both are
            the per-token prices applied to one generation / one user's month, defined even at 0 DAU.
        n_gpus: GPUs rented (self-hosted only; 0 for API tiers).
    """

    name: str
    model: str
    input_missed_usd: float
    input_hit_usd: float
    cache_write_usd: float
    output_usd: float
    idle_usd: float
    total_usd: float
    per_generation_usd: float
    per_dau_usd: float
    n_gpus: int = 0


def api_monthly_bill(scenario: TrafficScenario, tier: PriceTier) -> MonthlyBill:
    """Monthly bill of one API tier (chapter 9, LLM inference, last part, plus the cache-write surcharge).

    monthly = 30 x G x (missed x base + hit x cached + written x (m - 1) x base + output x out) / 1e6.

    Args:
        scenario: traffic (G = ``scenario.generations_per_day``).
        tier: prices.

    Returns:
        ``MonthlyBill`` in USD; zero DAU gives a zero bill (per-generation and per-DAU costs stay
        defined: they are the prices applied to one generation and one user).
    """
    per_gen = tier.cost_per_generation_usd(scenario)
    gens_per_month = DAYS_PER_MONTH * scenario.generations_per_day
    monthly = {k: float(v * gens_per_month) for k, v in per_gen.items()}
    return MonthlyBill(
        tier.name, tier.model, monthly["input_missed_usd"], monthly["input_hit_usd"], monthly["cache_write_usd"],
        monthly["output_usd"], 0.0, monthly["total_usd"], float(per_gen["total_usd"]),
        float(per_gen["total_usd"] * DAYS_PER_MONTH * scenario.generations_per_dau_per_day), 0)


# --------------------------------------------------------------------------------------------
# Self-hosting
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SelfHostedSetup:
    """An open model served on rented GPUs.

    Fields:
        model: a calc ``ModelConfig`` (e.g. ``get_model("llama-3.1-8b")``).
        accelerator: a calc ``Accelerator`` (one GPU).
        price_per_hour_usd: rent of one GPU, USD per hour (>= 0).
        batch: decode batch the server runs at (clamped to what fits, see ``self_hosted_rates``).
        peak_to_average: peak traffic / average traffic, in [1, 100]; capacity is sized for the peak.
        weight_dtype, kv_dtype: storage formats (DESIGN.md dtype names).
        timing: "bound" (default: the roofline lower bound, the course's numbers) or "serving"
            (``calc.serving.serving_estimate``, continuous batching, with its range; module docstring).
        engine: the serving engine the estimate follows ("vllm", "sglang", "trtllm"; an engine without
            fitted parameters falls back to the generic one with a notice); unused with timing "bound".

    Raises:
        ValueError: a non-positive batch, a peak-to-average ratio outside [1, 100], a negative
            price, an unknown dtype or timing, an engine that is not a name.
    """

    model: object
    accelerator: object
    price_per_hour_usd: float
    batch: int = 32
    peak_to_average: float = 3.0
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    timing: str = "bound"
    engine: str = "vllm"

    def __post_init__(self):
        check_nonneg_number(self.price_per_hour_usd, "price_per_hour_usd")
        check_positive_int(self.batch, "batch")
        p = check_positive_number(self.peak_to_average, "peak_to_average")
        if not 1.0 <= p <= MAX_PEAK_TO_AVERAGE:
            raise ValueError(f"peak_to_average must be between 1 and {MAX_PEAK_TO_AVERAGE:g} "
                             f"(peak traffic is at least the average), got {p!r}")
        dtype_bytes(self.weight_dtype, "weight_dtype")
        kv_dtype_bytes(self.kv_dtype)
        check_choice(self.timing, TIMINGS, "timing must be 'bound' (the roofline) or 'serving' (the serving estimate)")
        if not isinstance(self.engine, str) or not self.engine.strip():
            raise ValueError(f"engine must be a serving engine's name such as vllm, sglang or trtllm; got {self.engine!r}")


@dataclass(frozen=True)
class SelfHostedRates:
    """What one replica of a self-hosted model delivers (per-token economics, independent of DAU).

    Fields:
        gpus_per_replica: GPUs of one tensor-parallel replica (1, 2, 4 or 8).
        batch: decode batch used (the requested one clamped to ``max_batch`` at ``context_len``).
        context_len: mean context during decode, tokens: prompt + output / 2.
        decode_tokens_per_s: output tokens per second of one replica at ``batch`` (timing "serving": the
            estimate's, its prompts' prefill taken out at the bound's prefill rate; module docstring).
        prefill_tokens_per_s: prompt tokens per second of one replica (one full prompt; the bound's).
        replica_s_per_generation: replica-seconds one generation occupies (module docstring).
        replica_price_per_hour_usd: rent of one replica, USD per hour.
        output_usd_per_mtok, input_usd_per_mtok: ``cost_per_million`` of the decode and prefill
            throughputs at the replica's price (a fully busy replica).
        timing: "bound" or "serving" (``SelfHostedSetup.timing``).
        decode_tokens_per_s_low, decode_tokens_per_s_high: ``decode_tokens_per_s`` at the low and the high end
            of the serving estimate's throughput range (timing "bound": both equal ``decode_tokens_per_s``).
        replica_s_per_generation_low, replica_s_per_generation_high: ``replica_s_per_generation`` at the high and
            the low end of that range (the fast end gives the short time): low <= replica_s <= high.
        estimate: the ``calc.serving.ServingEstimate`` of one replica (timing "serving"; None for "bound").
        requested_batch: the batch the setup asked for (``batch`` is it clamped to what fits).
        context_notice: ``calc.serving.context_notice`` of the request priced (the prompt and the output, rounded
            to whole tokens) when it runs past the model's trained context, for either timing; else None.
    """

    gpus_per_replica: int
    batch: int
    context_len: int
    decode_tokens_per_s: float
    prefill_tokens_per_s: float
    replica_s_per_generation: float
    replica_price_per_hour_usd: float
    output_usd_per_mtok: float
    input_usd_per_mtok: float
    timing: str = "bound"
    decode_tokens_per_s_low: float | None = None
    decode_tokens_per_s_high: float | None = None
    replica_s_per_generation_low: float | None = None
    replica_s_per_generation_high: float | None = None
    estimate: object = None
    requested_batch: int | None = None
    context_notice: str | None = None

    @property
    def replica_month_usd(self) -> float:
        """Rent of one replica for a 30-day month, USD."""
        return self.replica_price_per_hour_usd * HOURS_PER_MONTH

    def for_bill_end(self, end: str) -> "SelfHostedRates":
        """These rates at one end of the serving estimate's range, by the bill it gives: "high" (the low
        throughput: more replica time, the high bill) or "low" (the high throughput). With timing "bound" (no
        range) the rates themselves.

        Raises:
            ValueError: ``end`` is neither "low" nor "high".
        """
        check_choice(end, ("low", "high"), "end must be 'low' or 'high' (the bill's end of the range)")
        decode = self.decode_tokens_per_s_low if end == "high" else self.decode_tokens_per_s_high
        replica_s = self.replica_s_per_generation_high if end == "high" else self.replica_s_per_generation_low
        if decode is None or replica_s is None:
            return self
        return replace(self, decode_tokens_per_s=decode, replica_s_per_generation=replica_s,
                       output_usd_per_mtok=float(cost_per_million(decode, self.replica_price_per_hour_usd)))


def _smallest_replica(setup: SelfHostedSetup, context_len: int, start: int = 1) -> tuple[int, int]:
    """(GPUs, max batch): the smallest power of two of GPUs from ``start`` (up to 8) whose tensor-parallel replica
    holds the model and one sequence of ``context_len`` tokens. Raises ValueError when 8 do not."""
    n = start
    while True:
        fit = max_batch(setup.model, setup.accelerator, context_len, setup.weight_dtype, setup.kv_dtype, tp=n)
        if fit >= 1:
            return n, fit
        if n >= MAX_GPUS_PER_REPLICA:
            raise ValueError(f"{setup.model.name} ({setup.weight_dtype} weights) with a {context_len:,}-token "
                             f"context does not fit on {MAX_GPUS_PER_REPLICA} x {setup.accelerator.name}; "
                             "pick a larger GPU, a smaller model or a smaller dtype")
        n *= 2


def _serving_replica(setup: SelfHostedSetup, context_len: int, prompt_len: int, output_len: int):
    """(GPUs, max batch, ServingEstimate): the smallest replica, from the bound's, on which the serving estimate
    holds the model (an engine keeps part of the memory back, so it may need twice the bound's GPUs), timed at
    the setup's batch (clamped to what fits) under continuous batching. Raises the estimate's ValueError, said
    as the serving estimate's, when 8 GPUs do not do."""
    n, fit = _smallest_replica(setup, context_len)
    while True:
        try:
            est = serving_estimate(setup.model, setup.accelerator, prompt_len, output_len,
                                   concurrency=min(setup.batch, fit), tp=n, weight_dtype=setup.weight_dtype,
                                   kv_dtype=setup.kv_dtype, engine=setup.engine, batching="continuous")
            return n, fit, est
        except ValueError as exc:
            if n >= MAX_GPUS_PER_REPLICA:
                raise ValueError(f"the serving estimate cannot time {setup.model.name} on up to "
                                 f"{MAX_GPUS_PER_REPLICA} x {setup.accelerator.name}: {exc}") from exc
            n, fit = _smallest_replica(setup, context_len, 2 * n)


def _decode_rate(output_per_s: float, prompt_len: int, output_len: int, prefill_tps: float, bound_decode_tps: float):
    """Decode tokens/s of a replica whose output tokens/s, prompts' prefill included, is ``output_per_s``: the
    time per output token less the prompt's prefill at ``prefill_tps`` spread over the output,
    1 / (1 / X - prompt / (output x prefill tok/s)), at most the bound's ``bound_decode_tps`` (module docstring)."""
    per_token_s = 1.0 / output_per_s - prompt_len / (output_len * prefill_tps)
    return bound_decode_tps if per_token_s <= 1.0 / bound_decode_tps else 1.0 / per_token_s


def _request_lengths(scenario: TrafficScenario) -> tuple[int, int]:
    """(prompt tokens, output tokens) of the scenario's generation, rounded to whole tokens, each at least 1."""
    return max(1, int(round(scenario.input_tokens))), max(1, int(round(scenario.output_tokens)))


def generation_context_notice(scenario: TrafficScenario, model) -> str | None:
    """What to warn of when one of the scenario's generations, its whole prompt (shared prefix + unique part) and its
    output, runs past ``model``'s trained context: ``calc.serving.context_notice`` of those lengths (rounded to whole
    tokens, as ``self_hosted_rates`` prices them), else None. Needs no replica, so it holds where the model does
    not fit on the GPUs. Example: Llama-3-8B (trained on 8,192 tokens), 3,000 + 500 prompt and 10,000,000 output
    tokens: "10,003,500 tokens of prompt and output exceed Llama-3-8B's trained context of 8,192: ...".

    Args:
        scenario: the token counts (``input_tokens``, ``output_tokens``).
        model: a calc ``ModelConfig`` (its trained context: ``calc.models.beyond_trained_window``).

    Returns:
        the notice (str), or None when the generation fits in the trained context (or the model names none).
    """
    return context_notice(model, *_request_lengths(scenario))


def self_hosted_rates(scenario: TrafficScenario, setup: SelfHostedSetup, cache_hit_rate=None) -> SelfHostedRates:
    """Throughput and per-token cost of one replica, from calc's roofline (the inference course, week 11, step 4)
    or, with ``setup.timing`` "serving", from ``calc.serving.serving_estimate``.

    Decode: ``decode_step_time(model, replica, batch, context_len)``, with context_len the prompt plus
    half the output (the mean context while decoding) and batch clamped to ``max_batch``. Prefill:
    ``prefill_time(model, replica, prompt_len)`` for the whole prompt, as tokens per second. A
    generation occupies the replica for missed_input / prefill_tokens_per_s + output /
    decode_tokens_per_s seconds (prefix-cache hits skip prefill). Both are roofline lower bounds;
    a real server is 1.2-2x slower (DESIGN.md), which makes self-hosting look cheaper than it is.

    Timing "serving": the estimate of ``setup.engine`` serving requests of the whole prompt and the output
    (rounded to whole tokens) at concurrency = the batch above, continuous batching, on the smallest replica
    where it holds the model. Its output tokens/s per replica X (``output_tokens_per_s_per_gpu`` x GPUs) gives
    the decode rate of the module docstring, so that with no prefix hit replica_s = output / X; its range
    (``per_gpu_low``, ``per_gpu_high``) gives ``decode_tokens_per_s_low`` / ``_high`` and the replica seconds at each
    end. Example: Llama-3-8B on one H100 at batch 32, 3,500 prompt and 500 output tokens: vLLM's estimate is
    about 1,794 output tok/s (range 1,454 - 2,043) against the bound's 3,487 decode tok/s, 0.279 replica-s per
    generation with no hit against the bound's 0.200.

    Args:
        scenario: token counts and hit rate.
        setup: model, GPU, price, batch, dtypes, timing and engine.
        cache_hit_rate: overrides the scenario's (float, or numpy array: then
            ``replica_s_per_generation`` and its range ends are arrays).

    Raises:
        ValueError: the model does not fit on 8 GPUs with room for one sequence's KV cache (timing "serving":
            in the memory the engine gives weights and cache).
    """
    prompt_len, output_len = _request_lengths(scenario)
    context_len = prompt_len + max(1, int(round(scenario.output_tokens / 2)))
    est = None
    if setup.timing == "serving":
        n, fit, est = _serving_replica(setup, context_len, prompt_len, output_len)
    else:  # the smallest tensor-parallel replica that holds the model and one sequence
        n, fit = _smallest_replica(setup, context_len)
    batch = min(setup.batch, fit)
    decode = decode_step_time(setup.model, setup.accelerator, batch, context_len, setup.weight_dtype, setup.kv_dtype,
                              tp=n)
    prefill = prefill_time(setup.model, setup.accelerator, prompt_len, 1, setup.weight_dtype, setup.kv_dtype, tp=n)
    decode_tps = float(decode.tokens_per_s)
    prefill_tps = prompt_len / float(prefill.total_s)
    rates = [decode_tps] * 3  # the decode rate and its range's ends, low and high
    if est is not None:
        rates = [_decode_rate(x * n, prompt_len, output_len, prefill_tps, decode_tps)
                 for x in (est.output_tokens_per_s_per_gpu, est.per_gpu_low, est.per_gpu_high)]
    t = scenario.token_split(cache_hit_rate)
    replica_s = [t["missed"] / prefill_tps + t["output"] / r for r in rates]
    price = n * setup.price_per_hour_usd
    return SelfHostedRates(n, int(batch), int(context_len), rates[0], prefill_tps, replica_s[0], price,
                           float(cost_per_million(rates[0], price)), float(cost_per_million(prefill_tps, price)),
                           setup.timing, rates[1], rates[2], replica_s[2], replica_s[1], est, int(setup.batch),
                           generation_context_notice(scenario, setup.model))


def replicas_for_traffic(generations_per_day, replica_s_per_generation, peak_to_average) -> np.ndarray:
    """Replicas to rent: max(1, ceil(G x replica_s / 86,400 x peak_to_average)).

    Args:
        generations_per_day: G, scalar or array.
        replica_s_per_generation: scalar or array (broadcast with G).
        peak_to_average: ratio >= 1.

    Returns:
        integer array (broadcast shape), at least 1: one always-on replica even with no traffic.
    """
    busy = np.asarray(generations_per_day, dtype=float) * replica_s_per_generation / SECONDS_PER_DAY
    # round away float noise (2.0000000001 replicas is 2) before the ceiling
    return np.maximum(1, np.ceil(np.round(busy * peak_to_average, 9))).astype(np.int64)


def self_hosted_monthly_bill(scenario: TrafficScenario, setup: SelfHostedSetup,
                             rates: SelfHostedRates | None = None, name: str = "self-hosted") -> MonthlyBill:
    """Monthly bill of the self-hosted tier: replicas x replica price x 720 h.

    The components split the rent into the GPU time busy on prefill (``input_missed_usd``), busy on
    decode (``output_usd``) and the rest (``idle_usd``: the headroom for peaks and the always-on
    floor). At zero DAU the bill is one replica's rent, all idle; per-generation and per-DAU costs
    are then NaN.

    Raises:
        ValueError: see ``self_hosted_rates``.
    """
    r = rates if rates is not None else self_hosted_rates(scenario, setup)
    n_rep = int(replicas_for_traffic(scenario.generations_per_day, r.replica_s_per_generation, setup.peak_to_average))
    total = n_rep * r.replica_month_usd
    t = scenario.token_split()
    gens = DAYS_PER_MONTH * scenario.generations_per_day
    usd_per_replica_s = r.replica_price_per_hour_usd / 3600.0
    prefill_usd = gens * t["missed"] / r.prefill_tokens_per_s * usd_per_replica_s
    decode_usd = gens * t["output"] / r.decode_tokens_per_s * usd_per_replica_s
    model = f"{setup.model.name} on {n_rep * r.gpus_per_replica:,} x {setup.accelerator.name}"
    return MonthlyBill(name, model, float(prefill_usd), 0.0, 0.0, float(decode_usd),
                       float(total - prefill_usd - decode_usd), float(total),
                       total / gens if gens > 0 else math.nan,
                       total / scenario.dau if scenario.dau > 0 else math.nan,
                       n_rep * r.gpus_per_replica)


def self_hosted_bill_range(scenario: TrafficScenario, setup: SelfHostedSetup, rates: SelfHostedRates | None = None,
                           name: str = "self-hosted") -> tuple[MonthlyBill, MonthlyBill, MonthlyBill]:
    """(low, central, high) monthly bills of the self-hosted tier: ``self_hosted_monthly_bill`` at the high end of
    the serving estimate's throughput range, at the estimate, and at its low end (the low throughput rents the most
    replicas). low.total_usd <= central.total_usd <= high.total_usd; with timing "bound" the three are equal (the
    bound has no range).

    Raises:
        ValueError: see ``self_hosted_rates``.
    """
    r = rates if rates is not None else self_hosted_rates(scenario, setup)
    return tuple(self_hosted_monthly_bill(scenario, setup, r.for_bill_end(end) if end else r, name)
                 for end in ("low", None, "high"))
