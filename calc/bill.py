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

All money is USD; token prices are USD per 1e6 tokens ("per 1M"); a month is 30 days.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .api_tiers import PriceTier
from .checks import check_nonneg_number, check_positive_int, check_positive_number
from .cost import cost_per_million
from .dtypes import dtype_bytes, kv_dtype_bytes
from .step import decode_step_time, max_batch, prefill_time
from .product_traffic import DAYS_PER_MONTH, HOURS_PER_MONTH, SECONDS_PER_DAY, TrafficScenario

MAX_PEAK_TO_AVERAGE = 100.0
MAX_GPUS_PER_REPLICA = 8

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

    Raises:
        ValueError: a non-positive batch, a peak-to-average ratio outside [1, 100], a negative
            price, an unknown dtype.
    """

    model: object
    accelerator: object
    price_per_hour_usd: float
    batch: int = 32
    peak_to_average: float = 3.0
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"

    def __post_init__(self):
        check_nonneg_number(self.price_per_hour_usd, "price_per_hour_usd")
        check_positive_int(self.batch, "batch")
        p = check_positive_number(self.peak_to_average, "peak_to_average")
        if not 1.0 <= p <= MAX_PEAK_TO_AVERAGE:
            raise ValueError(f"peak_to_average must be between 1 and {MAX_PEAK_TO_AVERAGE:g} "
                             f"(peak traffic is at least the average), got {p!r}")
        dtype_bytes(self.weight_dtype, "weight_dtype")
        kv_dtype_bytes(self.kv_dtype)


@dataclass(frozen=True)
class SelfHostedRates:
    """What one replica of a self-hosted model delivers (per-token economics, independent of DAU).

    Fields:
        gpus_per_replica: GPUs of one tensor-parallel replica (1, 2, 4 or 8).
        batch: decode batch used (the requested one clamped to ``max_batch`` at ``context_len``).
        context_len: mean context during decode, tokens: prompt + output / 2.
        decode_tokens_per_s: output tokens per second of one replica at ``batch``.
        prefill_tokens_per_s: prompt tokens per second of one replica (one full prompt).
        replica_s_per_generation: replica-seconds one generation occupies (module docstring).
        replica_price_per_hour_usd: rent of one replica, USD per hour.
        output_usd_per_mtok, input_usd_per_mtok: ``cost_per_million`` of the decode and prefill
            throughputs at the replica's price (a fully busy replica).
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

    @property
    def replica_month_usd(self) -> float:
        """Rent of one replica for a 30-day month, USD."""
        return self.replica_price_per_hour_usd * HOURS_PER_MONTH


def self_hosted_rates(scenario: TrafficScenario, setup: SelfHostedSetup, cache_hit_rate=None) -> SelfHostedRates:
    """Throughput and per-token cost of one replica, from calc's roofline (the inference course, week 11, step 4).

    Decode: ``decode_step_time(model, replica, batch, context_len)``, with context_len the prompt plus
    half the output (the mean context while decoding) and batch clamped to ``max_batch``. Prefill:
    ``prefill_time(model, replica, prompt_len)`` for the whole prompt, as tokens per second. A
    generation occupies the replica for missed_input / prefill_tokens_per_s + output /
    decode_tokens_per_s seconds (prefix-cache hits skip prefill). Both are roofline lower bounds;
    a real server is 1.2-2x slower (DESIGN.md), which makes self-hosting look cheaper than it is.

    Args:
        scenario: token counts and hit rate.
        setup: model, GPU, price, batch, dtypes.
        cache_hit_rate: overrides the scenario's (float, or numpy array: then
            ``replica_s_per_generation`` is an array).

    Raises:
        ValueError: the model does not fit on 8 GPUs with room for one sequence's KV cache.
    """
    prompt_len = max(1, int(round(scenario.input_tokens)))
    context_len = prompt_len + max(1, int(round(scenario.output_tokens / 2)))
    n = 1
    while True:  # the smallest tensor-parallel replica that holds the model and one sequence
        fit = max_batch(setup.model, setup.accelerator, context_len, setup.weight_dtype, setup.kv_dtype, tp=n)
        if fit >= 1:
            break
        if n >= MAX_GPUS_PER_REPLICA:
            raise ValueError(f"{setup.model.name} ({setup.weight_dtype} weights) with a {context_len}-token "
                             f"context does not fit on {MAX_GPUS_PER_REPLICA} x {setup.accelerator.name}; "
                             "pick a larger GPU, a smaller model or a smaller dtype")
        n *= 2
    batch = min(setup.batch, fit)
    decode = decode_step_time(setup.model, setup.accelerator, batch, context_len, setup.weight_dtype, setup.kv_dtype,
                              tp=n)
    prefill = prefill_time(setup.model, setup.accelerator, prompt_len, 1, setup.weight_dtype, setup.kv_dtype, tp=n)
    decode_tps = float(decode.tokens_per_s)
    prefill_tps = prompt_len / float(prefill.total_s)
    t = scenario.token_split(cache_hit_rate)
    replica_s = t["missed"] / prefill_tps + t["output"] / decode_tps
    price = n * setup.price_per_hour_usd
    return SelfHostedRates(n, int(batch), int(context_len), decode_tps, prefill_tps, replica_s, price,
                           float(cost_per_million(decode_tps, price)), float(cost_per_million(prefill_tps, price)))


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
