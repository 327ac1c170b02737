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

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .checks import check_fraction, check_nonneg_number, check_positive_int, check_positive_number
from .cost import cost_per_million
from .dtypes import dtype_bytes, kv_dtype_bytes
from .price_sheet import PriceSheet, price_file, request_cost, sheet_from_row
from .step import decode_step_time, max_batch, prefill_time

DAYS_PER_MONTH = 30
SECONDS_PER_DAY = 86_400.0
HOURS_PER_MONTH = 24.0 * DAYS_PER_MONTH
TOKENS_PER_MILLION = 1e6

#: Limits past which an input is treated as a typing mistake rather than a scenario.
MAX_DAU = 1e10                       # more than the people on Earth
MAX_TOKENS_PER_GENERATION = 10_000_000   # beyond any model's context window
MAX_GENERATIONS_PER_CREATOR = 10_000     # per day
MAX_PRICE_USD_PER_MTOK = 10_000.0
MAX_CACHE_WRITE_MULTIPLIER = 10.0
MAX_PEAK_TO_AVERAGE = 100.0
MAX_GPUS_PER_REPLICA = 8

BILL_COMPONENTS = ("input_missed_usd", "input_hit_usd", "cache_write_usd", "output_usd", "idle_usd")


def _check_at_most(value: float, limit: float, what: str, why: str) -> float:
    if value > limit:
        raise ValueError(f"{what} must be at most {limit:g} ({why}), got {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# Traffic
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrafficScenario:
    """Daily traffic of the product (chapter 9, LLM inference, last part; defaults are the chapter's experiment 1).

    Fields:
        dau: daily active users (>= 0, at most 1e10).
        remix_share: fraction of DAU who generate by remixing existing content each day (1/100).
        original_share: fraction of DAU who create original content each day (1/1000).
            The two groups are disjoint, so remix_share + original_share <= 1.
        generations_per_creator: generations each of these creators runs per day (> 0, <= 10,000).
        shared_prefix_tokens: cacheable prompt prefix per generation, tokens (>= 0).
        unique_input_tokens: the part of the prompt unique to each generation, tokens (>= 0).
        output_tokens: tokens generated per generation (>= 1).
        cache_hit_rate: fraction of generations whose shared prefix is read from the prompt cache.

    The token counts are assumptions of this project, not the chapter's: a 3,000-token shared prefix
    (instructions + style guide + examples), 500 unique prompt tokens, 500 output tokens, 5
    generations per creator. Edit them to your product.

    Raises:
        ValueError: a negative, non-finite or absurd value (limits above), shares outside [0, 1]
            or summing past 1, a prompt of zero tokens, zero output tokens.
    """

    dau: float = 100_000
    remix_share: float = 1 / 100
    original_share: float = 1 / 1000
    generations_per_creator: float = 5.0
    shared_prefix_tokens: float = 3_000
    unique_input_tokens: float = 500
    output_tokens: float = 500
    cache_hit_rate: float = 0.7

    def __post_init__(self):
        _check_at_most(check_nonneg_number(self.dau, "dau"), MAX_DAU, "dau", "more than the people on Earth")
        check_fraction(self.remix_share, "remix_share")
        check_fraction(self.original_share, "original_share")
        if self.remix_share + self.original_share > 1 + 1e-12:
            raise ValueError("remix_share + original_share must be at most 1 (a user is counted once), "
                             f"got {self.remix_share!r} + {self.original_share!r}")
        _check_at_most(check_positive_number(self.generations_per_creator, "generations_per_creator"),
                       MAX_GENERATIONS_PER_CREATOR, "generations_per_creator", "per creator per day")
        for what in ("shared_prefix_tokens", "unique_input_tokens"):
            _check_at_most(check_nonneg_number(getattr(self, what), what), MAX_TOKENS_PER_GENERATION,
                           what, "longer than any context window")
        if self.shared_prefix_tokens + self.unique_input_tokens <= 0:
            raise ValueError("the prompt must have at least one token: shared_prefix_tokens + "
                             "unique_input_tokens is 0")
        _check_at_most(check_positive_number(self.output_tokens, "output_tokens"), MAX_TOKENS_PER_GENERATION,
                       "output_tokens", "longer than any context window")
        check_fraction(self.cache_hit_rate, "cache_hit_rate")

    @classmethod
    def from_percentages(cls, dau, remix_pct, original_pct, generations_per_creator, shared_prefix_tokens,
                         unique_input_tokens, output_tokens, cache_hit_pct) -> "TrafficScenario":
        """The scenario with its three shares given in percent (as a page shows them): 1.0 means 1/100.

        Raises:
            ValueError: as the constructor (the message names the fraction, e.g. remix_share).
        """
        def frac(v, what):
            return check_nonneg_number(v, what) / 100.0
        return cls(dau, frac(remix_pct, "remix_pct"), frac(original_pct, "original_pct"), generations_per_creator,
                   shared_prefix_tokens, unique_input_tokens, output_tokens, frac(cache_hit_pct, "cache_hit_pct"))

    def replace(self, **changes) -> "TrafficScenario":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def creators_per_day(self) -> float:
        """Users who generate each day: dau x (remix_share + original_share); the rest only view."""
        return self.dau * (self.remix_share + self.original_share)

    @property
    def generations_per_dau_per_day(self) -> float:
        """Generations per day per daily active user: (remix_share + original_share) x generations_per_creator."""
        return (self.remix_share + self.original_share) * self.generations_per_creator

    @property
    def generations_per_day(self) -> float:
        """G, generations per day: dau x generations_per_dau_per_day."""
        return self.dau * self.generations_per_dau_per_day

    @property
    def input_tokens(self) -> float:
        """Prompt tokens per generation: shared prefix + unique part."""
        return self.shared_prefix_tokens + self.unique_input_tokens

    def token_split(self, cache_hit_rate=None) -> dict:
        """Tokens per generation by how they are billed (reference data 4.2).

        Args:
            cache_hit_rate: overrides the scenario's; a float or a numpy array of rates in [0, 1].

        Returns:
            dict of floats (or arrays shaped like ``cache_hit_rate``): ``hit`` = h x prefix,
            ``missed`` = (1 - h) x prefix + unique, ``written`` = (1 - h) x prefix (a miss writes the
            prefix to the cache), ``output``.
        """
        h = self.cache_hit_rate if cache_hit_rate is None else np.asarray(cache_hit_rate, dtype=float)
        if cache_hit_rate is not None and (not np.all(np.isfinite(h)) or np.any((h < 0) | (h > 1))):
            raise ValueError("cache_hit_rate must be between 0 and 1")
        prefix = self.shared_prefix_tokens
        return {"hit": h * prefix, "missed": (1 - h) * prefix + self.unique_input_tokens,
                "written": (1 - h) * prefix, "output": self.output_tokens + 0 * h}


# --------------------------------------------------------------------------------------------
# API price tiers
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PriceTier:
    """One API model's prices (reference data section 4.1), USD per 1e6 tokens.

    Fields:
        name: the tier's short label, by its model ("Opus 4.8", "GPT-5.4 mini").
        model: the model's name.
        input_usd_per_mtok: base (uncached) input price.
        cached_input_usd_per_mtok: price of an input token read from the prompt cache.
        output_usd_per_mtok: output price.
        cache_write_multiplier: cache-write price / base input price, in [1, 10]
            (1.25 for Anthropic 5-minute writes, 2 for 1-hour writes, 1.0 when writes are free).
        source, as_of: provenance (not compared).
        extras: the rest of the vendor's price sheet (``calc.price_sheet.PriceSheet``: long-context tier,
            cache storage, batch and off-peak multipliers) or None; its base prices and write multiplier
            are ignored, the tier's own (editable) ones are used (not compared).
        batch, off_peak: bill through the batch API / in the off-peak window (the sheet must offer it).

    Raises:
        ValueError: a negative, non-finite or absurd price (over $10,000 per 1M tokens), a multiplier
            outside [1, 10], an empty name.
    """

    name: str
    model: str
    input_usd_per_mtok: float
    cached_input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_write_multiplier: float = 1.0
    source: str = dataclasses.field(default="", compare=False)
    as_of: str = dataclasses.field(default="", compare=False)
    extras: PriceSheet | None = dataclasses.field(default=None, compare=False)
    batch: bool = False
    off_peak: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a price tier needs a name, got {self.name!r}")
        for what in ("input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok"):
            label = f"{what} of tier {self.name!r}"
            _check_at_most(check_nonneg_number(getattr(self, what), label), MAX_PRICE_USD_PER_MTOK, label,
                           "USD per 1M tokens")
        m = check_positive_number(self.cache_write_multiplier, f"cache_write_multiplier of tier {self.name!r}")
        if not 1.0 <= m <= MAX_CACHE_WRITE_MULTIPLIER:
            raise ValueError(f"cache_write_multiplier of tier {self.name!r} must be between 1 and "
                             f"{MAX_CACHE_WRITE_MULTIPLIER:g} (1 = no write surcharge), got {m!r}")
        sheet = self.price_sheet()   # raises for batch / off-peak on a sheet without them
        if self.batch and sheet.batch_multiplier is None:
            raise ValueError(f"tier {self.name!r}: its price sheet has no batch API price")
        if self.off_peak and sheet.off_peak_multiplier is None:
            raise ValueError(f"tier {self.name!r}: its price sheet has no off-peak rate")

    def price_sheet(self) -> PriceSheet:
        """The tier as a ``PriceSheet``: its own prices and write multiplier (TTL "tier") plus the extras."""
        e = self.extras
        return PriceSheet(self.name, self.input_usd_per_mtok, self.cached_input_usd_per_mtok,
                          self.output_usd_per_mtok, (("tier", self.cache_write_multiplier),),
                          0.0 if e is None else e.cache_storage_usd_per_mtok_hour,
                          None if e is None else e.long_context, None if e is None else e.batch_multiplier,
                          None if e is None else e.off_peak_multiplier, "" if e is None else e.off_peak_window,
                          self.source, self.as_of)

    def convention(self, scenario: "TrafficScenario") -> str:
        """How a generation of the scenario is billed on this tier (tier applied, TTL, batch / off-peak)."""
        sheet = self.price_sheet()
        b = request_cost(sheet, scenario.input_tokens, 0.0, 0.0, scenario.output_tokens, batch=self.batch,
                         off_peak=self.off_peak)
        return b.convention(sheet).replace("(tier TTL)", "(the tier's TTL)")

    def cost_per_generation_usd(self, scenario: TrafficScenario, cache_hit_rate=None) -> dict:
        """USD per generation by bill component (module docstring formula).

        Args:
            scenario: the traffic scenario (its token counts and hit rate).
            cache_hit_rate: overrides the scenario's; float or numpy array (then every value is an array).

        Returns:
            dict with ``input_missed_usd`` = missed x base, ``input_hit_usd`` = hit x cached,
            ``cache_write_usd`` = written x (multiplier - 1) x base, ``output_usd`` = output x output
            price (all / 1e6), and ``total_usd``.
        """
        t = scenario.token_split(cache_hit_rate)
        # One request of the scenario, billed by calc.price_sheet.request_cost; the prompt length (hit or
        # miss) decides the long-context tier, so the expected bill is linear in the hit rate.
        b = request_cost(self.price_sheet(), scenario.input_tokens + 0 * t["hit"], t["hit"], t["written"],
                         t["output"], batch=self.batch, off_peak=self.off_peak)
        written_at_base = t["written"] * b.input_usd_per_mtok / TOKENS_PER_MILLION
        parts = {
            "input_missed_usd": b.input_usd + written_at_base,
            "input_hit_usd": b.cached_input_usd,
            "cache_write_usd": b.cache_write_usd - written_at_base,
            "output_usd": b.output_usd,
        }
        parts["total_usd"] = sum(parts.values())
        return parts


def _price_file() -> dict:
    return price_file()


def api_price_table() -> pd.DataFrame:
    """Every API price row of ``calc/data/api_prices.json`` (reference data section 4.1), dated.

    Returns:
        DataFrame, one row per model: id, provider, model, tier, input_usd_per_mtok,
        cached_input_usd_per_mtok, output_usd_per_mtok, cache_write_multiplier, as_of, source, and the
        price-sheet extras flattened: cache_write_1h_multiplier, cache_storage_usd_per_mtok_hour,
        long_context_threshold_tokens, long_context_input_usd_per_mtok, long_context_output_usd_per_mtok,
        batch_multiplier, off_peak_multiplier, off_peak_window (NaN / empty where a sheet has none).
    """
    rows = []
    for r in _price_file()["prices"]:
        lc, off = r.get("long_context") or {}, r.get("off_peak") or {}
        flat = {k: v for k, v in r.items() if not isinstance(v, dict)}
        flat.update({
            "cache_write_1h_multiplier": (r.get("cache_write_multipliers") or {}).get("1h", math.nan),
            "cache_storage_usd_per_mtok_hour": r.get("cache_storage_usd_per_mtok_hour", math.nan),
            "long_context_threshold_tokens": lc.get("threshold_input_tokens", math.nan),
            "long_context_input_usd_per_mtok": lc.get("input_usd_per_mtok", math.nan),
            "long_context_output_usd_per_mtok": lc.get("output_usd_per_mtok", math.nan),
            "batch_multiplier": r.get("batch_multiplier", math.nan),
            "off_peak_multiplier": off.get("multiplier", math.nan),
            "off_peak_window": off.get("window", ""),
        })
        rows.append(flat)
    return pd.DataFrame(rows)


def prices_read_on() -> str:
    """The date the price rows were transcribed (ISO date string)."""
    return _price_file()["read_on"]


def default_tiers() -> list[PriceTier]:
    """The default tiers, named by their model: Anthropic's flagship, mid and small (Opus 4.8, Sonnet 4.6,
    Haiku 4.5) and OpenAI's GPT-5.4 mini (names and row ids in the data file's ``default_tiers``).

    Returns:
        list of four ``PriceTier`` in that order.
    """
    rows = {r["id"]: r for r in _price_file()["prices"]}
    tiers = []
    for name, row_id in _price_file()["default_tiers"].items():
        r = rows[row_id]
        tiers.append(PriceTier(name, r["model"], r["input_usd_per_mtok"], r["cached_input_usd_per_mtok"],
                               r["output_usd_per_mtok"], r["cache_write_multiplier"], r["source"], r["as_of"],
                               sheet_from_row(r)))
    return tiers


def _extras_by_model() -> dict:
    """Model name -> the price file's sheet for it (to keep a tier's extras when its table is edited)."""
    return {r["model"]: sheet_from_row(r) for r in _price_file()["prices"]}


TIER_COLUMNS = ("name", "model", "input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok",
                "cache_write_multiplier")


def tiers_to_frame(tiers: list[PriceTier]) -> pd.DataFrame:
    """The tiers as an editable table (columns ``TIER_COLUMNS`` plus as_of and source)."""
    return pd.DataFrame([{**{c: getattr(t, c) for c in TIER_COLUMNS}, "as_of": t.as_of, "source": t.source}
                         for t in tiers])


def tiers_from_frame(df: pd.DataFrame) -> list[PriceTier]:
    """Read tiers back from an edited table (rows with an empty name are skipped).

    Raises:
        ValueError: a missing column, a non-numeric price, a duplicate name, an invalid price
            (the message names the row), or no tier at all.
    """
    missing = [c for c in TIER_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"the price table lacks the column(s) {', '.join(missing)}")
    tiers, seen = [], set()
    for i, row in enumerate(df.to_dict("records"), start=1):
        name = row.get("name")
        if name is None or (isinstance(name, float) and math.isnan(name)) or not str(name).strip():
            continue
        name = str(name).strip()
        if name in seen:
            raise ValueError(f"tier names must be unique; {name!r} appears twice")
        seen.add(name)
        values = {}
        for c in TIER_COLUMNS[2:]:
            v = row.get(c)
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"row {i} ({name}): {c} must be a number, got {v!r}") from None
            values[c] = v
        model = row.get("model")
        model = "" if model is None or (isinstance(model, float) and math.isnan(model)) else str(model)
        as_of, source = row.get("as_of"), row.get("source")
        tiers.append(PriceTier(name, model, **values,
                               source="" if not isinstance(source, str) else source,
                               as_of="" if not isinstance(as_of, str) else as_of,
                               extras=_extras_by_model().get(model)))
    if not tiers:
        raise ValueError("the price table has no tier with a name")
    return tiers


# --------------------------------------------------------------------------------------------
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
    model = f"{setup.model.name} on {n_rep * r.gpus_per_replica} x {setup.accelerator.name}"
    return MonthlyBill(name, model, float(prefill_usd), 0.0, 0.0, float(decode_usd),
                       float(total - prefill_usd - decode_usd), float(total),
                       total / gens if gens > 0 else math.nan,
                       total / scenario.dau if scenario.dau > 0 else math.nan,
                       n_rep * r.gpus_per_replica)


# --------------------------------------------------------------------------------------------
# Break-even
# --------------------------------------------------------------------------------------------

def break_even_dau(scenario: TrafficScenario, tier: PriceTier, setup: SelfHostedSetup,
                   rates: SelfHostedRates | None = None) -> float | None:
    """The DAU from which self-hosting is never dearer than ``tier`` (the scenario's own DAU is ignored).

    The API bill is a line, A(D) = a D with a = 30 x gens per DAU x USD per generation; the
    self-hosted bill is a staircase, S(D) = M max(1, ceil(c D)) with M one replica's month and
    c = gens per DAU x replica_s x peak_to_average / 86,400 replicas per DAU. On step k
    (D in ((k-1)/c, k/c]) S = kM and A rises to a k / c = r k M, r = a / (M c). If r <= 1 the
    line never gets above the staircase: None. Otherwise S <= A on [max(kM/a, (k-1)/c), k/c]; that
    interval leaves a gap (A < S at the start of the step) while k < r / (r - 1). So the bills cross
    for the last time at D* = k* M / a, k* = ceil(r / (r - 1)) - 1 >= 1: below D* (on step k*) the
    API is cheaper, from D* on self-hosting is. With r >= 2, k* = 1 and D* = M / a: the point where
    one replica's rent equals the API bill. (Solved in closed form, since S is piecewise constant.)

    Returns:
        D* in users (float), or None when the curves never cross for good (including a tier that
        costs nothing, or a scenario with no generations).

    Raises:
        ValueError: see ``self_hosted_rates``.
    """
    r_ = rates if rates is not None else self_hosted_rates(scenario, setup)
    gens_per_dau = scenario.generations_per_dau_per_day
    a = DAYS_PER_MONTH * gens_per_dau * float(tier.cost_per_generation_usd(scenario)["total_usd"])
    m = r_.replica_month_usd
    c = gens_per_dau * r_.replica_s_per_generation * setup.peak_to_average / SECONDS_PER_DAY
    if a <= 0 or c <= 0:
        return None
    if m <= 0:
        return 0.0
    ratio = a / (m * c)
    if ratio <= 1.0:
        return None
    k_star = max(1, math.ceil(ratio / (ratio - 1.0)) - 1)
    return k_star * m / a


# --------------------------------------------------------------------------------------------
# Comparison table, sweeps, verdict
# --------------------------------------------------------------------------------------------

def compare_tiers(scenario: TrafficScenario, tiers: list[PriceTier],
                  setup: SelfHostedSetup | None = None) -> pd.DataFrame:
    """The monthly bill of every tier, and of the self-hosted setup when given, side by side.

    Returns:
        DataFrame, one row per tier (self-hosted last): name, model, the ``BILL_COMPONENTS`` (USD per
        month), total_usd, per_generation_usd, per_dau_usd, n_gpus, and break_even_dau (DAU from which
        the self-hosted setup is cheaper than this tier; NaN when it never is or without a setup).

    Raises:
        ValueError: no tiers; see ``self_hosted_rates``.
    """
    if not tiers:
        raise ValueError("give at least one price tier")
    rows = [dataclasses.asdict(api_monthly_bill(scenario, t)) for t in tiers]
    if setup is not None:
        rates = self_hosted_rates(scenario, setup)
        for row, t in zip(rows, tiers):
            d = break_even_dau(scenario, t, setup, rates)
            row["break_even_dau"] = math.nan if d is None else d
        sh = dataclasses.asdict(self_hosted_monthly_bill(scenario, setup, rates))
        sh["break_even_dau"] = math.nan
        rows.append(sh)
    return pd.DataFrame(rows)


#: Default sweeps: DAU from 10 to 1e9 (801 points, log-spaced) and hit rates 0..1 in steps of 0.01.
DAU_SWEEP = np.geomspace(10.0, 1e9, 801)
HIT_RATE_SWEEP = np.linspace(0.0, 1.0, 101)


def _dau_grid(dau) -> np.ndarray:
    d = np.asarray(DAU_SWEEP if dau is None else dau, dtype=float)
    if d.ndim != 1 or not np.all(np.isfinite(d)) or np.any(d < 0) or np.any(d > MAX_DAU):
        raise ValueError(f"dau values must be a 1-D list of numbers between 0 and {MAX_DAU:g}")
    return d


def bill_vs_dau(scenario: TrafficScenario, tiers: list[PriceTier], setup: SelfHostedSetup | None,
                dau=None) -> pd.DataFrame:
    """Monthly bill of each tier against DAU (vectorised over ``dau``; other inputs from ``scenario``).

    Args:
        dau: 1-D array of DAU values, each in [0, 1e10] (default ``DAU_SWEEP``).

    Returns:
        long DataFrame with columns dau, name, total_usd, n_gpus (len(dau) x (tiers + 1) rows); the
        self-hosted rows are the staircase max(1, ceil(c D)) x M.

    Raises:
        ValueError: bad dau values; see ``self_hosted_rates``.
    """
    d = _dau_grid(dau)
    frames = []
    gens_month = DAYS_PER_MONTH * scenario.generations_per_dau_per_day * d
    for t in tiers:
        per_gen = float(t.cost_per_generation_usd(scenario)["total_usd"])
        frames.append(pd.DataFrame({"dau": d, "name": t.name, "total_usd": gens_month * per_gen, "n_gpus": 0}))
    if setup is not None:
        r = self_hosted_rates(scenario, setup)
        n_rep = replicas_for_traffic(scenario.generations_per_dau_per_day * d, r.replica_s_per_generation,
                                setup.peak_to_average)
        frames.append(pd.DataFrame({"dau": d, "name": "self-hosted", "total_usd": n_rep * r.replica_month_usd,
                                    "n_gpus": n_rep * r.gpus_per_replica}))
    return pd.concat(frames, ignore_index=True)


def bill_vs_hit_rate(scenario: TrafficScenario, tiers: list[PriceTier], setup: SelfHostedSetup | None,
                     hit_rates=None) -> pd.DataFrame:
    """Monthly bill of each tier against the prompt-cache hit rate (vectorised), at the scenario's DAU.

    Args:
        hit_rates: 1-D array of rates in [0, 1] (default ``HIT_RATE_SWEEP``).

    Returns:
        long DataFrame with columns cache_hit_rate, name, total_usd (self-hosted: prefix hits skip
        prefill, so fewer replicas may be needed at high rates).

    Raises:
        ValueError: a rate outside [0, 1]; see ``self_hosted_rates``.
    """
    h = np.asarray(HIT_RATE_SWEEP if hit_rates is None else hit_rates, dtype=float)
    if h.ndim != 1:
        raise ValueError("hit_rates must be a 1-D list of numbers between 0 and 1")
    gens_month = DAYS_PER_MONTH * scenario.generations_per_day
    frames = [pd.DataFrame({"cache_hit_rate": h, "name": t.name,
                            "total_usd": gens_month * t.cost_per_generation_usd(scenario, h)["total_usd"]})
              for t in tiers]
    if setup is not None:
        r = self_hosted_rates(scenario, setup, cache_hit_rate=h)
        n_rep = replicas_for_traffic(scenario.generations_per_day, r.replica_s_per_generation, setup.peak_to_average)
        frames.append(pd.DataFrame({"cache_hit_rate": h, "name": "self-hosted",
                                    "total_usd": n_rep * r.replica_month_usd}))
    return pd.concat(frames, ignore_index=True)


def verdict(table: pd.DataFrame) -> str:
    """One sentence on a ``compare_tiers`` table: the cheapest tier, how many times dearer the
    dearest is, and, with a self-hosted row, against which tiers it wins and from which DAU.
    """
    if table.empty:
        raise ValueError("the table is empty")
    cheapest = table.loc[table["total_usd"].idxmin()]
    dearest = table.loc[table["total_usd"].idxmax()]
    api_rows = table[table["name"] != "self-hosted"]
    if len(api_rows) and (api_rows["per_generation_usd"].fillna(0) <= 0).all():
        # Every price is 0: the tiers are free whatever the traffic (not "no generations").
        out = "Every API tier is free at these prices (all its per-token prices are $0), so it costs nothing."
    elif cheapest["total_usd"] <= 0 and (api_rows["total_usd"] <= 0).all():
        out = "No generations, so every API tier costs nothing."
    else:
        model = "" if cheapest["model"] in ("", cheapest["name"]) else f" ({cheapest['model']})"
        out = f"Cheapest: {cheapest['name']}{model} at ${cheapest['total_usd']:,.2f} per month."
    if cheapest["total_usd"] >= 1.0:  # a ratio to a bill of cents says nothing
        out += (f" The dearest, {dearest['name']}, costs {dearest['total_usd'] / cheapest['total_usd']:,.1f}x "
                "as much.")
    if "break_even_dau" in table and (table["name"] == "self-hosted").any():
        sh = table[table["name"] == "self-hosted"].iloc[0]
        api = table[table["name"] != "self-hosted"]
        beaten = api[api["total_usd"] > sh["total_usd"]]["name"].tolist()
        gpus = f"{sh['n_gpus']:.0f} GPU" + ("s" if sh["n_gpus"] != 1 else "")
        out += (f" Self-hosting ({gpus}, ${sh['total_usd']:,.0f}) beats {', '.join(beaten)} at this traffic."
                if beaten else f" Self-hosting ({gpus}, ${sh['total_usd']:,.0f}) is dearer than every API tier "
                "at this traffic.")
        later = api[(api["total_usd"] <= sh["total_usd"]) & api["break_even_dau"].notna()]
        for _, row in later.iterrows():
            out += f" It would beat {row['name']} from {row['break_even_dau']:,.0f} DAU."
    return out
