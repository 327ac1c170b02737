"""Price sheets as vendors bill them, and the bill of one API request.

A vendor's price sheet is more than three prices. This module holds what the 2025-2026 sheets add:

* **Long-context tiers.** Above a prompt-length threshold the *whole request* is billed at the higher
  rates, input and output alike (Gemini 2.5 Pro and Gemini 3 Pro above 200K prompt tokens; Claude
  Sonnet 4 / 4.5 with the 1M-token context above 200K input tokens). The threshold counts every input
  token of the request, cached reads and cache writes included (Anthropic pricing page, "long context
  pricing"; Gemini pricing page, "prompts > 200k tokens").
* **Cache writes per TTL.** Anthropic bills a prompt-cache write at 1.25x the base input price for the
  5-minute cache and 2x for the 1-hour cache; reads at 0.1x.
* **Cache storage per token-hour.** Gemini's explicit context caching bills the cached tokens for as
  long as they are kept (USD per 1M tokens per hour), on top of the discounted reads.
* **Batch API discounts** (50% on input and output at Anthropic, OpenAI and Google) and **off-peak
  rates** (DeepSeek, 26 Feb - 5 Sep 2025: 50% off deepseek-chat, 75% off deepseek-reasoner between
  16:30 and 00:30 UTC). Both multiply every token price of the request; cache storage is not discounted.

Every number is in ``calc/data/api_prices.json`` with its source and the date it was read. All money is
USD; prices are USD per 1e6 tokens ("per 1M").

The one-request bill (``request_cost``)::

    tier     = long-context tier if input_tokens > threshold else base tier  (whole request)
    d        = (batch multiplier if batch) x (off-peak multiplier if off_peak)
    input    = (input - cached - written) x input price x d
    cached   = cached x cached-read price x d
    writes   = written x write multiplier(TTL) x input price x d
    output   = (output + reasoning) x output price x d          (reasoning tokens bill as output)
    storage  = token-hours x storage price                        (not discounted)

Numbers may be floats or numpy arrays (the monthly bill passes arrays of cache hit rates).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .checks import check_nonneg_number, check_positive_number
from .models import DATA_DIR

TOKENS_PER_MILLION = 1e6
MAX_PRICE_USD_PER_MTOK = 10_000.0
MAX_CACHE_WRITE_MULTIPLIER = 10.0
#: TTL label used when a sheet lists one write multiplier only.
DEFAULT_TTL = "5m"


def _price(value, what: str) -> float:
    v = check_nonneg_number(value, what)
    if v > MAX_PRICE_USD_PER_MTOK:
        raise ValueError(f"{what} must be at most {MAX_PRICE_USD_PER_MTOK:g} USD per 1M tokens, got {value!r}")
    return float(v)


def _discount(value, what: str) -> float:
    v = check_positive_number(value, what)
    if v > 1.0:
        raise ValueError(f"{what} is a price multiplier in (0, 1] (0.5 = half price), got {value!r}")
    return float(v)


@dataclass(frozen=True)
class LongContextTier:
    """The rates a whole request is billed at when its prompt is longer than ``threshold_input_tokens``.

    Fields:
        threshold_input_tokens: the prompt length (all input tokens, cached included) above which the
            tier applies; a prompt of exactly the threshold stays at the base rates (">200K").
        input_usd_per_mtok, cached_input_usd_per_mtok, output_usd_per_mtok: the tier's rates.
        source, as_of: provenance.

    Raises:
        ValueError: a threshold below 1 token, a negative or absurd price.
    """

    threshold_input_tokens: float
    input_usd_per_mtok: float
    cached_input_usd_per_mtok: float
    output_usd_per_mtok: float
    source: str = dataclasses.field(default="", compare=False)
    as_of: str = dataclasses.field(default="", compare=False)

    def __post_init__(self):
        if check_positive_number(self.threshold_input_tokens, "threshold_input_tokens") < 1:
            raise ValueError(f"threshold_input_tokens must be at least 1, got {self.threshold_input_tokens!r}")
        for what in ("input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok"):
            _price(getattr(self, what), f"long-context {what}")


@dataclass(frozen=True)
class PriceSheet:
    """One model's price sheet as its vendor bills it (module docstring), USD per 1e6 tokens.

    Fields:
        name: the model's label.
        input_usd_per_mtok, cached_input_usd_per_mtok, output_usd_per_mtok: base rates.
        cache_write_multipliers: tuple of (TTL label, multiplier of the input price) pairs, e.g.
            (("5m", 1.25), ("1h", 2.0)) for Anthropic; (("5m", 1.0),) where writes cost the input price.
        cache_storage_usd_per_mtok_hour: storage of cached tokens, USD per 1M tokens per hour (0 = none).
        long_context: a ``LongContextTier`` or None.
        batch_multiplier: price multiplier of the batch API (0.5), or None where there is none.
        off_peak_multiplier: price multiplier in the off-peak window, or None where there is none.
        off_peak_window: the window as the vendor states it (e.g. "16:30-00:30 UTC").
        source, as_of: provenance.

    Raises:
        ValueError: a negative or absurd price, a write multiplier outside [1, 10] or no TTL at all,
            a duplicate TTL, a discount multiplier outside (0, 1].
    """

    name: str
    input_usd_per_mtok: float
    cached_input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_write_multipliers: tuple = ((DEFAULT_TTL, 1.0),)
    cache_storage_usd_per_mtok_hour: float = 0.0
    long_context: LongContextTier | None = None
    batch_multiplier: float | None = None
    off_peak_multiplier: float | None = None
    off_peak_window: str = ""
    source: str = dataclasses.field(default="", compare=False)
    as_of: str = dataclasses.field(default="", compare=False)

    def __post_init__(self):
        for what in ("input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok",
                     "cache_storage_usd_per_mtok_hour"):
            _price(getattr(self, what), f"{what} of {self.name!r}")
        pairs = tuple((str(k), float(v)) for k, v in dict(self.cache_write_multipliers).items())
        if len(pairs) != len(tuple(self.cache_write_multipliers)) or not pairs:
            raise ValueError(f"cache_write_multipliers of {self.name!r} need one multiplier per TTL, "
                             f"at least one, got {self.cache_write_multipliers!r}")
        for ttl, m in pairs:
            if not 1.0 <= check_positive_number(m, f"cache write multiplier {ttl}") <= MAX_CACHE_WRITE_MULTIPLIER:
                raise ValueError(f"the cache write multiplier for TTL {ttl} of {self.name!r} must be between 1 "
                                 f"and {MAX_CACHE_WRITE_MULTIPLIER:g}, got {m!r}")
        object.__setattr__(self, "cache_write_multipliers", pairs)
        if self.long_context is not None and not isinstance(self.long_context, LongContextTier):
            raise ValueError("long_context must be a LongContextTier or None")
        if self.batch_multiplier is not None:
            _discount(self.batch_multiplier, "batch_multiplier")
        if self.off_peak_multiplier is not None:
            _discount(self.off_peak_multiplier, "off_peak_multiplier")

    @property
    def ttls(self) -> tuple:
        """The cache TTL labels this sheet prices, in the sheet's order."""
        return tuple(k for k, _ in self.cache_write_multipliers)

    def write_multiplier(self, ttl: str) -> float:
        """The cache-write price / input price for a TTL label.

        Raises:
            ValueError: a TTL the sheet does not price (the message lists those it does).
        """
        table = dict(self.cache_write_multipliers)
        if ttl not in table:
            raise ValueError(f"{self.name} has no cache TTL {ttl!r}; it prices {', '.join(table)}")
        return table[ttl]


@dataclass(frozen=True)
class RequestBill:
    """The bill of one API request, USD, by component, with the convention it followed.

    Fields:
        input_usd: uncached, unwritten input tokens x input rate.
        cached_input_usd: cache reads x cached rate.
        cache_write_usd: cache writes x TTL multiplier x input rate (the whole write, base included).
        output_usd, reasoning_usd: visible output and reasoning tokens, both at the output rate.
        storage_usd: cache storage (token-hours x storage rate).
        total_usd: the sum.
        long_context: whether the long-context tier applied (bool, or a bool array).
        input_usd_per_mtok, cached_input_usd_per_mtok, output_usd_per_mtok: the rates applied, after the
            tier and the discounts.
        write_multiplier: the TTL's multiplier; ttl, batch, off_peak: the options billed.
        discount_multiplier: the product of the batch and off-peak multipliers applied (1 = none).
    """

    input_usd: object
    cached_input_usd: object
    cache_write_usd: object
    output_usd: object
    reasoning_usd: object
    storage_usd: object
    total_usd: object
    long_context: object
    input_usd_per_mtok: object
    cached_input_usd_per_mtok: object
    output_usd_per_mtok: object
    write_multiplier: float
    ttl: str
    batch: bool
    off_peak: bool
    discount_multiplier: float

    def convention(self, sheet: PriceSheet | None = None) -> str:
        """One line saying how the request was billed (tier, TTL, batch / off-peak), for a page."""
        lc = np.asarray(self.long_context)
        if lc.size and bool(np.all(lc)):
            thr = f" (prompt > {sheet.long_context.threshold_input_tokens:,.0f} tokens)" \
                if sheet is not None and sheet.long_context is not None else ""
            tier = f"long-context tier{thr}: whole request at the higher rates"
        elif lc.size and bool(np.any(lc)):
            tier = "long-context tier on some points"
        else:
            tier = "base tier"
        parts = [tier, f"cache writes at {self.write_multiplier:g}x input ({self.ttl} TTL)"]
        if self.batch:
            parts.append("batch API")
        if self.off_peak:
            parts.append("off-peak")
        if self.discount_multiplier != 1.0:
            parts.append(f"token prices x {self.discount_multiplier:g}")
        return "; ".join(parts)


def _tokens(value, what: str):
    """A token count: a non-negative finite float, or an array of them."""
    if isinstance(value, np.ndarray):
        a = np.asarray(value, dtype=float)
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError(f"{what} must be non-negative finite numbers")
        return a
    return float(check_nonneg_number(value, what))


def request_cost(prices: PriceSheet, input_tokens, cached_input_tokens=0.0, cache_write_tokens=0.0,
                 output_tokens=0.0, reasoning_tokens=0.0, ttl: str | None = None, batch: bool = False,
                 off_peak: bool = False, storage_token_hours=0.0) -> RequestBill:
    """The bill of one API request (module docstring formula).

    Args:
        prices: the model's ``PriceSheet``.
        input_tokens: every prompt token of the request, cached reads and cache writes included (the
            count the long-context threshold is compared with).
        cached_input_tokens: of those, tokens read from the prompt cache.
        cache_write_tokens: of those, tokens written to the prompt cache.
        output_tokens: visible output tokens.
        reasoning_tokens: reasoning ("thinking") tokens, billed at the output rate by every vendor here.
        ttl: the cache TTL label of the writes (default: the sheet's first, e.g. "5m").
        batch: billed through the batch API (the sheet's batch multiplier).
        off_peak: sent in the vendor's off-peak window (the sheet's off-peak multiplier).
        storage_token_hours: cached tokens x hours kept, for vendors that bill cache storage.

    Token counts may be floats or numpy arrays of one shape.

    Returns:
        ``RequestBill``.

    Raises:
        ValueError: negative or non-finite counts, cached + written > input, an unknown TTL, batch or
            off-peak asked of a sheet that has none.
    """
    if not isinstance(prices, PriceSheet):
        raise ValueError(f"prices must be a PriceSheet, got {type(prices).__name__}")
    n_in = _tokens(input_tokens, "input_tokens")
    n_cached = _tokens(cached_input_tokens, "cached_input_tokens")
    n_write = _tokens(cache_write_tokens, "cache_write_tokens")
    n_out = _tokens(output_tokens, "output_tokens")
    n_reason = _tokens(reasoning_tokens, "reasoning_tokens")
    token_hours = _tokens(storage_token_hours, "storage_token_hours")
    plain = np.asarray(n_in) - np.asarray(n_cached) - np.asarray(n_write)
    if np.any(plain < -1e-9 * np.maximum(1.0, np.asarray(n_in))):
        raise ValueError("cached_input_tokens + cache_write_tokens must be at most input_tokens "
                         "(input_tokens counts every prompt token, cached and written included)")
    plain = np.maximum(plain, 0.0)
    ttl = prices.ttls[0] if ttl is None else ttl
    m_write = prices.write_multiplier(ttl)
    d = 1.0
    if batch:
        if prices.batch_multiplier is None:
            raise ValueError(f"{prices.name} has no batch API price on its sheet")
        d *= prices.batch_multiplier
    if off_peak:
        if prices.off_peak_multiplier is None:
            raise ValueError(f"{prices.name} has no off-peak rate on its sheet")
        d *= prices.off_peak_multiplier
    lc = prices.long_context
    if lc is None:
        is_long = np.zeros(np.shape(n_in), dtype=bool)
        p_in, p_cached, p_out = prices.input_usd_per_mtok, prices.cached_input_usd_per_mtok, prices.output_usd_per_mtok
    else:
        is_long = np.asarray(n_in) > lc.threshold_input_tokens
        p_in = np.where(is_long, lc.input_usd_per_mtok, prices.input_usd_per_mtok)
        p_cached = np.where(is_long, lc.cached_input_usd_per_mtok, prices.cached_input_usd_per_mtok)
        p_out = np.where(is_long, lc.output_usd_per_mtok, prices.output_usd_per_mtok)
    p_in, p_cached, p_out = (np.asarray(p) * d for p in (p_in, p_cached, p_out))
    scale = 1.0 / TOKENS_PER_MILLION
    parts = {
        "input_usd": plain * p_in * scale,
        "cached_input_usd": np.asarray(n_cached) * p_cached * scale,
        "cache_write_usd": np.asarray(n_write) * m_write * p_in * scale,
        "output_usd": np.asarray(n_out) * p_out * scale,
        "reasoning_usd": np.asarray(n_reason) * p_out * scale,
        "storage_usd": np.asarray(token_hours) * prices.cache_storage_usd_per_mtok_hour * scale,
    }
    total = sum(parts.values())
    scalar = all(np.ndim(v) == 0 for v in (n_in, n_cached, n_write, n_out, n_reason, token_hours))

    def out(v):
        return float(v) if scalar else np.asarray(v, dtype=float)
    return RequestBill(**{k: out(v) for k, v in parts.items()}, total_usd=out(total),
                       long_context=bool(is_long) if scalar else is_long,
                       input_usd_per_mtok=out(p_in), cached_input_usd_per_mtok=out(p_cached),
                       output_usd_per_mtok=out(p_out), write_multiplier=m_write, ttl=ttl, batch=bool(batch),
                       off_peak=bool(off_peak), discount_multiplier=d)


# --------------------------------------------------------------------------------------------
# The price file
# --------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def price_file() -> dict:
    """The parsed ``calc/data/api_prices.json`` (read once)."""
    with open(DATA_DIR / "api_prices.json", encoding="utf-8") as f:
        return json.load(f)


def sheet_from_row(row: dict) -> PriceSheet:
    """A ``PriceSheet`` from one row of ``api_prices.json`` (optional keys: cache_write_multipliers,
    cache_storage_usd_per_mtok_hour, long_context, batch_multiplier, off_peak).

    Raises:
        ValueError: a row with a missing price or an invalid one (the message names the row).
    """
    name = row.get("model") or row.get("id") or "?"
    try:
        writes = row.get("cache_write_multipliers") or {DEFAULT_TTL: row.get("cache_write_multiplier", 1.0)}
        lc = row.get("long_context")
        off = row.get("off_peak") or {}
        return PriceSheet(
            name, row["input_usd_per_mtok"], row["cached_input_usd_per_mtok"], row["output_usd_per_mtok"],
            tuple(writes.items()), row.get("cache_storage_usd_per_mtok_hour", 0.0),
            None if lc is None else LongContextTier(lc["threshold_input_tokens"], lc["input_usd_per_mtok"],
                                                    lc["cached_input_usd_per_mtok"], lc["output_usd_per_mtok"],
                                                    lc.get("source", ""), lc.get("as_of", "")),
            row.get("batch_multiplier"), off.get("multiplier"), off.get("window", ""),
            row.get("source", ""), row.get("as_of", ""))
    except KeyError as e:
        raise ValueError(f"price row {name!r} lacks {e.args[0]}") from None


def price_sheets() -> dict:
    """Every row of the price file as a ``PriceSheet``, keyed by its id."""
    return {r["id"]: sheet_from_row(r) for r in price_file()["prices"]}


def price_sheet(row_id: str) -> PriceSheet:
    """The ``PriceSheet`` of one row id of the price file.

    Raises:
        ValueError: an unknown id (the message lists the known ones).
    """
    sheets = price_sheets()
    if row_id not in sheets:
        raise ValueError(f"no price row {row_id!r}; known: {', '.join(sheets)}")
    return sheets[row_id]
