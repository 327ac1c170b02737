"""The traffic of a product built on LLM calls (``TrafficScenario``): daily active users, the creators
among them, their generations per day and the shared-prefix / unique / output tokens of each generation.

Chapter 9, LLM inference (last part); the bill of this traffic is ``calc.bill``. A month is 30 days.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .checks import check_fraction, check_nonneg_number, check_positive_number

DAYS_PER_MONTH = 30
SECONDS_PER_DAY = 86_400.0
HOURS_PER_MONTH = 24.0 * DAYS_PER_MONTH
TOKENS_PER_MILLION = 1e6

#: Limits past which an input is treated as a typing mistake rather than a scenario.
MAX_DAU = 1e10                       # more than the people on Earth
MAX_TOKENS_PER_GENERATION = 10_000_000   # beyond any model's context window
MAX_GENERATIONS_PER_CREATOR = 10_000     # per day


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
