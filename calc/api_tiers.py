"""API price tiers (``PriceTier``, reference data section 4.1): the providers' price table, the default
tiers, and tiers to and from the editable table of the Monthly bill page. USD per 1e6 tokens.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .checks import check_nonneg_number, check_positive_number
from .price_sheet import PriceSheet, price_file, request_cost, sheet_from_row
from .product_traffic import TOKENS_PER_MILLION, TrafficScenario, _check_at_most

MAX_PRICE_USD_PER_MTOK = 10_000.0
MAX_CACHE_WRITE_MULTIPLIER = 10.0


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
            # the surcharge alone; a write priced at the base leaves a float residue of 1e-14 that would
            # print as "-$0.0000000000000179": zeroed below a billionth of the writes' base price
            "cache_write_usd": _surcharge(b.cache_write_usd, written_at_base),
            "output_usd": b.output_usd,
        }
        parts["total_usd"] = sum(parts.values())
        return parts


def _surcharge(write_usd, written_at_base):
    """``write_usd - written_at_base`` (scalars or arrays, USD), 0 where it is below 1e-9 of ``written_at_base``
    in size (the rounding residue of a cache write priced at the base input price)."""
    d = np.asarray(write_usd, dtype=float) - np.asarray(written_at_base, dtype=float)
    d = np.where(np.abs(d) <= 1e-9 * np.abs(np.asarray(written_at_base, dtype=float)), 0.0, d)
    return float(d) if d.ndim == 0 else d


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
