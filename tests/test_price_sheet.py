"""Price sheets as vendors bill them (calc.price_sheet) and the monthly bill built on the one-request bill."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.api_tiers import PriceTier, api_price_table, default_tiers
from calc.bill import api_monthly_bill
from calc.product_traffic import TrafficScenario
from calc.price_sheet import LongContextTier, PriceSheet, price_sheet, price_sheets, request_cost


def test_gemini_long_context_request_billed_whole_at_the_higher_rate():
    # Gemini 2.5 Pro (ai.google.dev/gemini-api/docs/pricing): $1.25 / $10 up to 200k prompt tokens,
    # $2.50 / $15 above, for the whole request.
    g = price_sheet("google-gemini-2.5-pro")
    long = request_cost(g, 250_000, output_tokens=10_000)
    # 250,000 x 2.50 / 1e6 = 0.625 ; 10,000 x 15 / 1e6 = 0.15 ; total 0.775
    assert long.long_context
    assert long.input_usd == pytest.approx(0.625)
    assert long.output_usd == pytest.approx(0.15)
    assert long.total_usd == pytest.approx(0.775)
    # exactly 200,000 is not "> 200k": 200,000 x 1.25 / 1e6 = 0.25 ; 10,000 x 10 / 1e6 = 0.1
    at = request_cost(g, 200_000, output_tokens=10_000)
    assert not at.long_context and at.total_usd == pytest.approx(0.35)
    assert "long-context tier" in long.convention(g) and "200,000" in long.convention(g)


def test_sonnet_long_context_matches_the_published_worked_example():
    # Sonnet 4/4.5 1M context (docs.anthropic.com pricing; worked in eonsr.com's explainer): 250K in, 2K out
    # crosses 200K -> $6 in / $22.50 out for all tokens: 250,000 x 6 / 1e6 = 1.50 ; 2,000 x 22.5 / 1e6 = 0.045
    s = price_sheet("anthropic-claude-sonnet-4.5-1m")
    b = request_cost(s, 250_000, output_tokens=2_000)
    assert b.total_usd == pytest.approx(1.545)
    # "With Batch: ~ $0.77": 1.545 x 0.5 = 0.7725
    assert request_cost(s, 250_000, output_tokens=2_000, batch=True).total_usd == pytest.approx(0.7725)
    # 199,999 in, 2K out stays at base: 199,999 x 3 / 1e6 + 2,000 x 15 / 1e6 = 0.599997 + 0.03 = 0.629997
    assert request_cost(s, 199_999, output_tokens=2_000).total_usd == pytest.approx(0.629997)
    # cached reads count toward the threshold and are billed at the long-context read price:
    # 200,000 cached x 0.60 + 50,000 plain x 6 + 2,000 x 22.5 = 0.12 + 0.30 + 0.045 = 0.465
    assert request_cost(s, 250_000, cached_input_tokens=200_000, output_tokens=2_000).total_usd \
        == pytest.approx(0.465)


def test_one_hour_cache_write_at_twice_the_input_price():
    # Anthropic pricing page: 1h cache writes 2x base input, 5m writes 1.25x. Sonnet 4.6 at $3:
    # 100,000 written (1h) x 3 x 2 / 1e6 = 0.60 ; 1,000 out x 15 / 1e6 = 0.015 ; total 0.615
    s = price_sheet("anthropic-claude-sonnet-4.6")
    b = request_cost(s, 100_000, cache_write_tokens=100_000, output_tokens=1_000, ttl="1h")
    assert b.cache_write_usd == pytest.approx(0.60) and b.total_usd == pytest.approx(0.615)
    # the 5-minute write: 100,000 x 3 x 1.25 / 1e6 = 0.375
    assert request_cost(s, 100_000, cache_write_tokens=100_000, ttl="5m").cache_write_usd == pytest.approx(0.375)
    assert "2x input (1h TTL)" in b.convention(s)
    with pytest.raises(ValueError, match="no cache TTL"):
        request_cost(s, 10, ttl="24h")


def test_gemini_cache_storage_per_token_hour_and_reasoning_as_output():
    # Gemini 2.5 Pro storage $4.50 per 1M tokens per hour: 100,000 tokens kept 2 h = 200,000 token-hours
    # -> 0.2 x 4.50 = 0.90 USD, not discounted by batch.
    g = price_sheet("google-gemini-2.5-pro")
    assert request_cost(g, 1, storage_token_hours=200_000).storage_usd == pytest.approx(0.90)
    assert request_cost(g, 1, storage_token_hours=200_000, batch=True).storage_usd == pytest.approx(0.90)
    # reasoning tokens bill at the output rate: 3,000 x 10 / 1e6 = 0.03
    assert request_cost(g, 1_000, reasoning_tokens=3_000).reasoning_usd == pytest.approx(0.03)


def test_deepseek_off_peak_rates():
    # DeepSeek 2025-02-26: deepseek-chat off-peak at 50%: $0.135 miss, $0.035 hit, $0.55 out per 1M.
    d = price_sheet("deepseek-chat-v3-2025-02")
    b = request_cost(d, 2_000_000, cached_input_tokens=1_000_000, output_tokens=1_000_000, off_peak=True)
    # 1M miss x 0.135 + 1M hit x 0.035 + 1M out x 0.55 = 0.72
    assert b.total_usd == pytest.approx(0.72)
    with pytest.raises(ValueError, match="no batch API"):
        request_cost(d, 10, batch=True)
    with pytest.raises(ValueError, match="no off-peak"):
        request_cost(price_sheet("openai-gpt-5.4"), 10, off_peak=True)


def test_bad_requests_are_refused():
    s = price_sheet("anthropic-claude-haiku-4.5")
    with pytest.raises(ValueError, match="at most input_tokens"):
        request_cost(s, 100, cached_input_tokens=80, cache_write_tokens=30)
    with pytest.raises(ValueError):
        request_cost(s, -1)
    with pytest.raises(ValueError, match="PriceSheet"):
        request_cost({"input": 1}, 10)
    with pytest.raises(ValueError):
        PriceSheet("x", 1, 0.1, 2, (("5m", 0.5),))
    with pytest.raises(ValueError):
        PriceSheet("x", 1, 0.1, 2, batch_multiplier=1.5)


def test_every_price_row_has_a_dated_source_and_every_extra_its_own_source():
    for row in api_price_table().to_dict("records"):
        assert row["source"] and row["as_of"], row["id"]
    for sid, s in price_sheets().items():
        if s.long_context is not None:
            assert s.long_context.source and s.long_context.as_of, sid
            # a long-context tier is never cheaper than the base tier
            assert s.long_context.input_usd_per_mtok >= s.input_usd_per_mtok
            assert s.long_context.output_usd_per_mtok >= s.output_usd_per_mtok


def test_monthly_bill_uses_the_long_context_tier_of_its_prompt():
    # A 250,000-token shared prefix on Gemini 2.5 Pro, no cache hits, 1,000 output tokens:
    # per generation = (250,000 + 500) x 2.50 / 1e6 + 1,000 x 15 / 1e6 = 0.62625 + 0.015 = 0.64125
    g = [t for t in default_tiers() if t.name.startswith("Opus")][0]
    row = price_sheet("google-gemini-2.5-pro")
    tier = PriceTier("Gemini 2.5 Pro", "Gemini 2.5 Pro", row.input_usd_per_mtok, row.cached_input_usd_per_mtok,
                     row.output_usd_per_mtok, 1.0, extras=row)
    s = TrafficScenario(shared_prefix_tokens=250_000, unique_input_tokens=500, output_tokens=1_000,
                        cache_hit_rate=0.0)
    assert api_monthly_bill(s, tier).per_generation_usd == pytest.approx(0.64125)
    assert "long-context" in tier.convention(s)
    # batch halves it
    assert api_monthly_bill(s, dataclasses.replace(tier, batch=True)).per_generation_usd == pytest.approx(0.320625)
    assert "base tier" in g.convention(TrafficScenario())


prices = st.floats(0.0, 100.0)


@settings(max_examples=80, deadline=None)
@given(base_in=prices, base_cached=prices, base_out=prices, up_in=prices, up_cached=prices, up_out=prices,
       threshold=st.integers(1, 400_000), n_in=st.integers(0, 1_000_000), cached_frac=st.floats(0, 1),
       written_frac=st.floats(0, 1), n_out=st.integers(0, 100_000), ttl=st.sampled_from(["5m", "1h"]),
       batch=st.booleans())
def test_a_price_tier_never_lowers_a_bill(base_in, base_cached, base_out, up_in, up_cached, up_out, threshold,
                                         n_in, cached_frac, written_frac, n_out, ttl, batch):
    # A long-context tier with rates at least the base rates: the bill with the tier >= the bill without.
    plain = PriceSheet("p", base_in, base_cached, base_out, (("5m", 1.25), ("1h", 2.0)), batch_multiplier=0.5)
    tier = LongContextTier(threshold, base_in + up_in, base_cached + up_cached, base_out + up_out)
    tiered = dataclasses.replace(plain, long_context=tier)
    cached = int(n_in * cached_frac)
    written = int((n_in - cached) * written_frac)
    kw = dict(cached_input_tokens=cached, cache_write_tokens=written, output_tokens=n_out, ttl=ttl, batch=batch)
    a = request_cost(plain, n_in, **kw).total_usd
    b = request_cost(tiered, n_in, **kw).total_usd
    assert b >= a - 1e-12
    # and one more prompt token never lowers the tiered bill (crossing the threshold only raises it)
    assert request_cost(tiered, n_in + 1, **kw).total_usd >= b - 1e-12


def test_arrays_of_hit_rates_bill_like_scalars():
    s = price_sheet("anthropic-claude-opus-4.8")
    hits = np.array([0.0, 5_000.0, 10_000.0])
    arr = request_cost(s, 10_000.0 + 0 * hits, hits, 10_000.0 - hits, 500.0 + 0 * hits)
    for i, h in enumerate(hits):
        assert arr.total_usd[i] == pytest.approx(request_cost(s, 10_000, h, 10_000 - h, 500).total_usd)


def test_an_edited_price_table_keeps_each_models_sheet_extras():
    # The page's table carries only the base prices; reading it back re-attaches the price file's extras by
    # model name, so the batch multiplier (0.5) of the Anthropic rows survives an edit of the output price.
    from calc.api_tiers import tiers_from_frame, tiers_to_frame
    df = tiers_to_frame(default_tiers())
    df.loc[0, "output_usd_per_mtok"] = 30.0
    tiers = tiers_from_frame(df)
    assert tiers[0].output_usd_per_mtok == 30.0
    assert tiers[0].extras is not None and tiers[0].extras.batch_multiplier == 0.5
    # a renamed model (not in the price file) has no extras: batch billing is refused with a message
    df.loc[1, "model"] = "my model"
    t = tiers_from_frame(df)[1]
    assert t.extras is None
    with pytest.raises(ValueError, match="no batch API"):
        dataclasses.replace(t, batch=True)
