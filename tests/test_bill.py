"""Tests of calc.bill: the monthly API bill, prompt caching, self-hosting and the break-even DAU.

Every expected number is worked by hand in the comments (seed 003, last part, formula:
monthly = 30 x G x (missed x base + hit x cached + output x out) + cache-write surcharge).
"""
import math

import numpy as np
import pandas as pd
import pytest

from calc import get_accelerator, get_model, weight_bytes
from calc.api_tiers import PriceTier, api_price_table, default_tiers, tiers_from_frame, tiers_to_frame
from calc.bill import (SelfHostedRates, SelfHostedSetup, api_monthly_bill, replicas_for_traffic,
                       self_hosted_monthly_bill, self_hosted_rates)
from calc.bill_compare import bill_vs_dau, bill_vs_hit_rate, break_even_dau, compare_tiers, verdict
from calc.product_traffic import TrafficScenario

# Opus-class prices of reference data 4.1 (Anthropic flagship): $5 in, $0.50 hit, $25 out, writes 1.25x.
OPUS = PriceTier("flagship", "Opus", 5.0, 0.5, 25.0, 1.25)


def test_small_scenario_by_hand():
    # DAU 1000, 5% remix + 5% original, 2 generations each: G = 1000 x 0.10 x 2 = 200 per day,
    # 30 x 200 = 6,000 generations per month.
    # Prompt: 1000-token shared prefix + 200 unique; 100 output; hit rate 0.5.
    #   hit = 500, missed = 500 + 200 = 700, written = 500, output = 100 tokens.
    # Prices: $2 in, $0.2 cached, $10 out, writes 1.5x (surcharge 0.5 x $2 = $1 per 1M).
    #   missed 700 x 2 / 1e6 = 0.0014; hit 500 x 0.2 / 1e6 = 0.0001;
    #   writes 500 x 1 / 1e6 = 0.0005; output 100 x 10 / 1e6 = 0.001; total 0.003 USD per generation.
    # Monthly: 8.4 + 0.6 + 3.0 + 6.0 = 18.0 USD; per DAU 18 / 1000 = 0.018 USD.
    s = TrafficScenario(dau=1000, remix_share=0.05, original_share=0.05, generations_per_creator=2,
                        shared_prefix_tokens=1000, unique_input_tokens=200, output_tokens=100, cache_hit_rate=0.5)
    tier = PriceTier("t", "m", 2.0, 0.2, 10.0, 1.5)
    b = api_monthly_bill(s, tier)
    assert s.generations_per_day == pytest.approx(200)
    assert b.input_missed_usd == pytest.approx(8.4)
    assert b.input_hit_usd == pytest.approx(0.6)
    assert b.cache_write_usd == pytest.approx(3.0)
    assert b.output_usd == pytest.approx(6.0)
    assert b.total_usd == pytest.approx(18.0)
    assert b.per_generation_usd == pytest.approx(0.003)
    assert b.per_dau_usd == pytest.approx(0.018)
    assert b.idle_usd == 0 and b.n_gpus == 0


def test_defaults_scenario_seed_experiment_1():
    # Seed 003 experiment 1: 100,000 DAU, remix 1/100, original 1/1000, hit 70%.
    # With this project's 5 generations per creator: G = 100,000 x 0.011 x 5 = 5,500 per day,
    # 165,000 per month. Prefix 3000, unique 500, output 500 tokens:
    #   hit 2100, missed 900 + 500 = 1400, written 900, output 500.
    # Opus: 1400 x 5 = 7000; 2100 x 0.5 = 1050; 900 x 0.25 x 5 = 1125; 500 x 25 = 12500
    #   -> 21,675 USD per 1M generations = 0.021675 per generation -> 3,576.375 USD per month.
    # Sonnet-class ($3/$0.3/$15) is 3/5 of that (2,145.825); Haiku-class ($1/$0.1/$5) 1/5 (715.275).
    s = TrafficScenario()
    assert s.generations_per_day == pytest.approx(5500)
    bills = {t.name: api_monthly_bill(s, t) for t in default_tiers()}
    assert bills["Opus 4.8"].total_usd == pytest.approx(3576.375)
    assert bills["Opus 4.8"].input_missed_usd == pytest.approx(1155.0)
    assert bills["Opus 4.8"].input_hit_usd == pytest.approx(173.25)
    assert bills["Opus 4.8"].cache_write_usd == pytest.approx(185.625)
    assert bills["Opus 4.8"].output_usd == pytest.approx(2062.5)
    assert bills["Sonnet 4.6"].total_usd == pytest.approx(2145.825)
    assert bills["Haiku 4.5"].total_usd == pytest.approx(715.275)
    # per DAU: 3576.375 / 100,000
    assert bills["Opus 4.8"].per_dau_usd == pytest.approx(0.03576375)


def test_cache_hit_edges():
    # Defaults, Opus. Hit 0: missed 3500 x 5 = 17,500; written 3000 x 1.25 = 3,750; output 12,500
    #   -> 0.03375 per generation -> 5,568.75 per month; nothing is billed as a hit.
    # Hit 1: missed 500 x 5 = 2,500; hit 3000 x 0.5 = 1,500; no writes; output 12,500
    #   -> 0.0165 -> 2,722.5 per month.
    b0 = api_monthly_bill(TrafficScenario(cache_hit_rate=0.0), OPUS)
    b1 = api_monthly_bill(TrafficScenario(cache_hit_rate=1.0), OPUS)
    assert b0.total_usd == pytest.approx(5568.75) and b0.input_hit_usd == 0
    assert b0.cache_write_usd == pytest.approx(618.75)
    assert b1.total_usd == pytest.approx(2722.5) and b1.cache_write_usd == 0
    # The vectorised sweep agrees with the scalar bill at both ends and is linear in between
    # (midpoint = mean of the ends: 4,145.625).
    sweep = bill_vs_hit_rate(TrafficScenario(), [OPUS], None, [0.0, 0.5, 1.0])
    assert sweep["total_usd"].tolist() == pytest.approx([5568.75, 4145.625, 2722.5])


def test_no_write_surcharge_when_multiplier_is_one():
    # OpenAI-style: writes free. Defaults at $5/$0.5/$30: 1400 x 5 + 2100 x 0.5 + 500 x 30 = 23,050
    # per 1M generations -> 0.02305 x 165,000 = 3,803.25.
    b = api_monthly_bill(TrafficScenario(), PriceTier("gpt", "x", 5.0, 0.5, 30.0, 1.0))
    assert b.cache_write_usd == 0
    assert b.total_usd == pytest.approx(3803.25)


def test_every_tier_priced_at_base_for_writes_has_exactly_zero_surcharge():
    # a tier whose cache writes cost the base input price pays no surcharge: written x (1 - 1) x base = 0 exactly,
    # never the float residue of subtracting two equal products (it printed as "-$0.0000000000000179")
    at_base = [t for t in default_tiers() if t.cache_write_multiplier == 1.0]
    assert at_base
    for t in at_base:
        for s in (TrafficScenario(), TrafficScenario(dau=123_457)):
            assert api_monthly_bill(s, t).cache_write_usd == 0.0, t.name


def test_zero_dau_gives_zero_api_bill():
    s = TrafficScenario(dau=0)
    for t in default_tiers():
        b = api_monthly_bill(s, t)
        assert b.total_usd == 0 and b.output_usd == 0
        assert b.per_generation_usd > 0  # the price of one generation is still defined


@pytest.mark.parametrize("changes, word", [
    ({"dau": -1}, "dau"), ({"dau": 1e11}, "dau"), ({"dau": float("nan")}, "dau"),
    ({"remix_share": 1.5}, "remix_share"), ({"remix_share": 0.6, "original_share": 0.6}, "at most 1"),
    ({"cache_hit_rate": 1.2}, "cache_hit_rate"), ({"cache_hit_rate": -0.1}, "cache_hit_rate"),
    ({"generations_per_creator": 0}, "generations_per_creator"),
    ({"generations_per_creator": 1e6}, "generations_per_creator"),
    ({"output_tokens": 0}, "output_tokens"), ({"shared_prefix_tokens": 1e8}, "shared_prefix_tokens"),
    ({"shared_prefix_tokens": 0, "unique_input_tokens": 0}, "at least one token"),
    ({"unique_input_tokens": -5}, "unique_input_tokens"),
])
def test_bad_scenarios_raise_clear_errors(changes, word):
    with pytest.raises(ValueError, match=word):
        TrafficScenario(**changes)


@pytest.mark.parametrize("args, word", [
    (("t", "m", -1, 0.1, 1, 1.0), "input_usd_per_mtok"),
    (("t", "m", 1, 0.1, 1e6, 1.0), "output_usd_per_mtok"),
    (("t", "m", 1, float("inf"), 1, 1.0), "cached_input_usd_per_mtok"),
    (("t", "m", 1, 0.1, 1, 0.5), "cache_write_multiplier"),
    (("", "m", 1, 0.1, 1, 1.0), "name"),
])
def test_bad_prices_raise_clear_errors(args, word):
    with pytest.raises(ValueError, match=word):
        PriceTier(*args)


def test_price_file_rows_are_dated_and_sourced():
    df = api_price_table()
    assert len(df) >= 6
    assert df["source"].str.len().min() > 20 and df["as_of"].str.len().min() >= 4
    # reference data 4.1: Haiku 4.5 is $1 / $0.10 / $5 with 1.25x 5-minute writes
    haiku = df[df["model"] == "Claude Haiku 4.5"].iloc[0]
    assert (haiku["input_usd_per_mtok"], haiku["cached_input_usd_per_mtok"], haiku["output_usd_per_mtok"],
            haiku["cache_write_multiplier"]) == (1.0, 0.1, 5.0, 1.25)
    names = [t.name for t in default_tiers()]
    assert names == ["Opus 4.8", "Sonnet 4.6", "Haiku 4.5", "GPT-5.4 mini"]    # named by model


def test_editor_round_trip_and_errors():
    tiers = default_tiers()
    assert tiers_from_frame(tiers_to_frame(tiers)) == tiers
    df = tiers_to_frame(tiers).astype({"output_usd_per_mtok": object})
    df.loc[1, "output_usd_per_mtok"] = "abc"
    with pytest.raises(ValueError, match="row 2"):
        tiers_from_frame(df)
    df = tiers_to_frame(tiers)
    df.loc[2, "name"] = "Opus 4.8"
    with pytest.raises(ValueError, match="unique"):
        tiers_from_frame(df)
    df = tiers_to_frame(tiers)
    df["name"] = None
    with pytest.raises(ValueError, match="no tier"):
        tiers_from_frame(df)


# ------------------------------------------------------------------------------------------
# Self-hosting with hand-made rates (independent of the roofline)
# ------------------------------------------------------------------------------------------

# 10% of users remix, 10 generations each: 1 generation per DAU per day.
ONE_GEN = TrafficScenario(dau=0, remix_share=0.1, original_share=0.0, generations_per_creator=10,
                          shared_prefix_tokens=0, unique_input_tokens=100, output_tokens=100, cache_hit_rate=0.0)
# One replica at $1/h = 720 USD per month; a generation occupies it 0.864 s (prefill 100 tokens at
# 1000 tok/s = 0.1 s, decode 100 tokens at 1000/7.64 tok/s = 0.764 s).
RATES = SelfHostedRates(gpus_per_replica=1, batch=8, context_len=150, decode_tokens_per_s=1000 / 7.64,
                        prefill_tokens_per_s=1000.0, replica_s_per_generation=0.864,
                        replica_price_per_hour_usd=1.0, output_usd_per_mtok=0, input_usd_per_mtok=0)
SETUP_PEAK1 = SelfHostedSetup(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), price_per_hour_usd=1.0,
                              batch=8, peak_to_average=1.0)


def _sh(dau, setup=SETUP_PEAK1):
    return self_hosted_monthly_bill(ONE_GEN.replace(dau=dau), setup, RATES).total_usd


def _api(dau, tier):
    return api_monthly_bill(ONE_GEN.replace(dau=dau), tier).total_usd


def test_self_hosted_staircase_by_hand():
    # One replica is busy 86,400 s a day at 100,000 generations a day = 100,000 DAU here.
    # Peak 1: 0 DAU -> floor 1 replica (720); 100,000 -> exactly 1; 100,001 -> 2 (1440); 250,000 -> 3.
    assert _sh(0) == pytest.approx(720)
    assert _sh(100_000) == pytest.approx(720)
    assert _sh(100_001) == pytest.approx(1440)
    assert _sh(250_000) == pytest.approx(2160)
    # Peak-to-average 3: 50,000 DAU average 0.5 replicas, peak 1.5 -> 2 replicas.
    peak3 = SelfHostedSetup(get_model("llama-3.1-8b"), get_accelerator("h100-sxm"), 1.0, peak_to_average=3.0)
    assert _sh(50_000, peak3) == pytest.approx(1440)
    # Busy-time split at 50,000 DAU (peak 1, 1 replica): 1.5e6 generations a month x 0.1 s prefill
    # = 150,000 s = 41.67 h -> 41.67 USD; decode 0.764 s -> 318.33 USD; idle 720 - 360 = 360.
    b = self_hosted_monthly_bill(ONE_GEN.replace(dau=50_000), SETUP_PEAK1, RATES)
    assert b.input_missed_usd == pytest.approx(150_000 / 3600)
    assert b.output_usd == pytest.approx(1.5e6 * 0.764 / 3600)
    assert b.idle_usd == pytest.approx(360)
    assert b.n_gpus == 1
    # zero DAU: one replica all idle, per-generation cost undefined
    b0 = self_hosted_monthly_bill(ONE_GEN, SETUP_PEAK1, RATES)
    assert b0.idle_usd == pytest.approx(720) and math.isnan(b0.per_generation_usd)


def test_replicas_for_traffic_vectorised():
    # 86,400 replica-seconds a day = 1 replica on average; x peak 2 = 2.
    n = replicas_for_traffic(np.array([0, 1000, 86_400, 86_401]), 1.0, 2.0)
    assert n.tolist() == [1, 1, 2, 3]


def test_break_even_one_replica_case():
    # API at $0.001 per generation: a = 30 x 1 x 0.001 = 0.03 USD per DAU per month.
    # c = 0.864 / 86,400 = 1e-5 replicas per DAU; r = a / (M c) = 0.03 / 0.0072 = 4.17 >= 2,
    # so the bills cross once for good where one replica's 720 USD equals the API: D* = 720 / 0.03 = 24,000.
    tier = PriceTier("api", "x", 0.0, 0.0, 10.0, 1.0)   # 100 output tokens x $10 / 1e6 = 0.001
    d = break_even_dau(ONE_GEN, tier, SETUP_PEAK1, RATES)
    assert d == pytest.approx(24_000)
    assert _api(d * 0.999, tier) < _sh(d * 0.999)
    assert _api(d * 1.001, tier) > _sh(d * 1.001)
    grid = np.linspace(d * 1.001, 50 * d, 3000)
    assert all(_sh(x) <= _api(x, tier) for x in grid)


def test_break_even_sawtooth_case():
    # API at $0.0003 per generation: a = 0.009, r = 0.009 / 0.0072 = 1.25, r / (r - 1) = 5,
    # k* = 4: D* = 4 x 720 / 0.009 = 320,000 DAU (on step 4, where 4 replicas = 2,880 USD).
    # Earlier the curves cross and uncross: at 299,000 DAU (3 replicas, 2,160) the API bill is 2,691,
    # so self-hosting is cheaper there, but at 301,000 (4 replicas, 2,880) the API's 2,709 is cheaper.
    tier = PriceTier("api", "x", 0.0, 0.0, 3.0, 1.0)    # 100 x $3 / 1e6 = 0.0003
    d = break_even_dau(ONE_GEN, tier, SETUP_PEAK1, RATES)
    assert d == pytest.approx(320_000)
    assert _sh(299_000) < _api(299_000, tier) and _sh(301_000) > _api(301_000, tier)
    assert _api(d - 10, tier) < _sh(d - 10)
    assert _api(d + 10, tier) > _sh(d + 10)
    grid = np.linspace(d + 1, 30 * d, 5000)
    assert all(_sh(x) <= _api(x, tier) + 1e-9 for x in grid)


def test_break_even_never():
    # API at $0.0002 per generation: a = 0.006 < M c = 0.0072, so the API is cheaper at every DAU.
    tier = PriceTier("api", "x", 0.0, 0.0, 2.0, 1.0)
    assert break_even_dau(ONE_GEN, tier, SETUP_PEAK1, RATES) is None
    grid = np.geomspace(1, 1e9, 400)
    assert all(_api(x, tier) < _sh(x) for x in grid)


# ------------------------------------------------------------------------------------------
# Self-hosting through calc's roofline
# ------------------------------------------------------------------------------------------

def _setup(model="llama-3.1-8b", gpu="h100-sxm", **kw):
    acc = get_accelerator(gpu)
    return SelfHostedSetup(get_model(model), acc, kw.pop("price", 3.99), **kw)


def test_self_hosted_rates_consistent():
    s = TrafficScenario()
    r = self_hosted_rates(s, _setup(batch=32))
    # missed 1400 prompt tokens at prefill speed + 500 output tokens at decode speed
    assert r.replica_s_per_generation == pytest.approx(1400 / r.prefill_tokens_per_s + 500 / r.decode_tokens_per_s)
    assert r.context_len == 3500 + 250 and r.batch == 32 and r.gpus_per_replica == 1
    # decode is slower per token than prefill (memory-bound vs compute-bound)
    assert r.prefill_tokens_per_s > 10 * r.decode_tokens_per_s
    # USD per 1M output tokens = price / 3600 / tokens_per_s x 1e6
    assert r.output_usd_per_mtok == pytest.approx(3.99 / 3600 / r.decode_tokens_per_s * 1e6)


def test_big_model_needs_a_ganged_replica():
    # Llama-3-70B in bf16 is about 141 GB of weights: more than one 80 GB H100, less than two.
    m = get_model("llama-3.1-70b")
    assert 80e9 < weight_bytes(m, "bf16") < 160e9
    r = self_hosted_rates(TrafficScenario(), _setup("llama-3.1-70b", batch=8))
    assert r.gpus_per_replica == 2
    assert r.replica_price_per_hour_usd == pytest.approx(2 * 3.99)


def test_batch_clamped_to_memory():
    r = self_hosted_rates(TrafficScenario(), _setup(batch=100_000))
    assert 1 <= r.batch < 100_000


def test_remix_blowup_self_hosting_order_of_magnitude_cheaper():
    # Seed 003 experiment 3: remix 1/10 -> G = 100,000 x 0.101 x 5 = 50,500 per day; the flagship bill
    # is 50,500 / 5,500 x 3,576.375 = 32,837.4 USD. An 8B model on one H100 at $3.99/h is
    # 3.99 x 720 = 2,872.8 USD per replica; the roofline keeps it at one or two replicas.
    s = TrafficScenario(remix_share=0.1)
    t = compare_tiers(s, default_tiers(), _setup())
    flagship = t.set_index("name").loc["Opus 4.8", "total_usd"]
    sh = t.set_index("name").loc["self-hosted", "total_usd"]
    assert flagship == pytest.approx(32_837.44, rel=1e-4)
    assert sh <= 2 * 2872.8 + 1e-6
    assert flagship / sh > 5
    assert "self-hosted" in verdict(t) or "Self-hosting" in verdict(t)


def test_real_break_even_crosses():
    s = TrafficScenario()
    setup = _setup()
    for tier in default_tiers():
        d = break_even_dau(s, tier, setup)
        if d is None:
            continue
        below, above = s.replace(dau=d * 0.999), s.replace(dau=d * 1.001)
        assert api_monthly_bill(below, tier).total_usd < self_hosted_monthly_bill(below, setup).total_usd
        assert api_monthly_bill(above, tier).total_usd > self_hosted_monthly_bill(above, setup).total_usd


def test_bill_vs_dau_matches_scalar_bills():
    s = TrafficScenario()
    setup = _setup()
    tiers = default_tiers()
    daus = np.array([0, 1e3, 1e5, 1e7])
    df = bill_vs_dau(s, tiers, setup, daus)
    assert len(df) == len(daus) * (len(tiers) + 1)
    for dau in daus:
        s2 = s.replace(dau=float(dau))
        for t in tiers:
            got = df[(df["name"] == t.name) & (df["dau"] == dau)]["total_usd"].item()
            assert got == pytest.approx(api_monthly_bill(s2, t).total_usd)
        got = df[(df["name"] == "self-hosted") & (df["dau"] == dau)]["total_usd"].item()
        assert got == pytest.approx(self_hosted_monthly_bill(s2, setup).total_usd)
    with pytest.raises(ValueError, match="dau"):
        bill_vs_dau(s, tiers, setup, [-1, 5])


def test_bad_setup_raises():
    with pytest.raises(ValueError, match="peak_to_average"):
        _setup(peak_to_average=0.5)
    with pytest.raises(ValueError, match="batch"):
        _setup(batch=0)
    with pytest.raises(ValueError, match="price_per_hour_usd"):
        _setup(price=-1)


def test_compare_tiers_columns():
    t = compare_tiers(TrafficScenario(), default_tiers(), _setup())
    assert list(t["name"]) == ["Opus 4.8", "Sonnet 4.6", "Haiku 4.5", "GPT-5.4 mini", "self-hosted"]
    parts = t[["input_missed_usd", "input_hit_usd", "cache_write_usd", "output_usd", "idle_usd"]].sum(axis=1)
    assert np.allclose(parts, t["total_usd"])
    assert isinstance(t, pd.DataFrame)


def test_ganged_replica_is_tensor_parallel_with_its_all_reduces():
    # Llama-3.1-70B on H100s: a replica of TP 2; its decode speed is calc's TP 2 step at the clamped batch,
    # which pays 80 x 2 all-reduces over NVLink 4, one-shot at two GPUs (each reads its peer's B x 8,192 x 2 B in one
    # hop: 1 x M / 450 GB/s + 1 us each; a ring's 2 x 1/2 x M / 450 GB/s + 2 x 1 us is slower by 1 us).
    from calc import decode_step_time
    r = self_hosted_rates(TrafficScenario(), _setup("llama-3.1-70b", batch=8))
    m, h100 = get_model("llama-3.1-70b"), get_accelerator("h100-sxm")
    step = decode_step_time(m, h100, r.batch, r.context_len, tp=2)
    assert r.decode_tokens_per_s == pytest.approx(step.tokens_per_s)
    assert step.comm_s == pytest.approx(160 * (r.batch * 8192 * 2 / 450e9 + 1e-6))


def test_verdict_writes_money_the_house_way():
    # ui/formats.fmt_usd's rules, now calc.number_text's: whole dollars with separators from $100 ($570.49 ->
    # "$570", 12,345.6 -> "$12,346"), cents below ($3.5 -> "$3.50"), 2 significant digits below $1.
    t = pd.DataFrame({"name": ["Tier A", "Tier B", "self-hosted"], "model": ["a", "b", "8B"],
                      "total_usd": [570.49, 1_140.98, 12_345.6], "per_generation_usd": [0.01, 0.02, float("nan")],
                      "n_gpus": [float("nan"), float("nan"), 2.0], "break_even_dau": [float("nan"), 9_999.4, float("nan")]})
    v = verdict(t)
    assert v.startswith("Cheapest: Tier A (a) at $570 per month.") and "$570.49" not in v
    assert "Self-hosting 8B ($12,346) is dearer than every API tier" in v
    # a self-hosted row without a model name says how many GPUs it takes
    assert "Self-hosting (2 GPUs, $12,346) is dearer" in verdict(t.assign(model=["a", "b", ""]))
    # cheaper than both tiers, which serve other models: the sentence says the bill compares prices only
    win = verdict(t.assign(total_usd=[570.49, 1_140.98, 100.0]))
    assert "Self-hosting 8B ($100) costs less than Tier A and Tier B at this traffic; it serves another model than " \
           "those tiers, so the bill compares prices, not what the models can do." in win
    same = verdict(t.assign(total_usd=[570.49, 1_140.98, 100.0], model=["8B", "b", "8B"]))
    assert "costs less than Tier A and Tier B at this traffic; it serves another model than that tier" in same
    assert "The dearest, self-hosted, costs 21.6x as much." in v  # 12,345.6 / 570.49 = 21.64
    cheap = t.assign(total_usd=[3.5, 7.0, 12_345.6])
    assert verdict(cheap).startswith("Cheapest: Tier A (a) at $3.50 per month.")
    tiny = t.assign(total_usd=[0.0123, 7.0, 12_345.6])
    assert verdict(tiny).startswith("Cheapest: Tier A (a) at $0.012 per month.")


def test_a_bill_equal_to_the_cent_is_the_same_not_dearer():
    # no traffic and a free GPU: every tier and self-hosting cost $0; the verdict said "dearer than every API tier"
    # and "It would beat Tier B from 0 DAU". Now the same, and a break-even at no traffic is not named.
    t = pd.DataFrame({"name": ["Tier A", "Tier B", "self-hosted"], "model": ["a", "b", "8B"],
                      "total_usd": [0.0, 0.0, 0.0], "per_generation_usd": [0.01, 0.02, float("nan")],
                      "n_gpus": [float("nan"), float("nan"), 1.0], "break_even_dau": [float("nan"), 0.0, float("nan")]})
    v = verdict(t)
    assert "Self-hosting 8B ($0.00) costs the same as every API tier at this traffic" in v
    assert "dearer" not in v and "would beat" not in v
    # one tier the same to the cent ($570.49 and $570.494), the other cheaper: named as such
    one = verdict(t.assign(total_usd=[570.494, 100.0, 570.49], break_even_dau=[float("nan")] * 3))
    assert "Self-hosting 8B ($570) costs the same as Tier A and more than the other tiers at this traffic" in one


def test_names_are_listed_as_a_sentence_lists_them():
    from calc.number_text import join_and
    assert join_and([]) == "" and join_and(["Opus 4.8"]) == "Opus 4.8"
    assert join_and(["A", "B"]) == "A and B" and join_and(["A", "B", "C"]) == "A, B and C"


# ------------------------------------------------------------------------------------------
# Self-hosting timed by the serving estimate (timing="serving")
# ------------------------------------------------------------------------------------------

def _llama3_h100(timing, **kw):
    return SelfHostedSetup(get_model("llama-3-8b"), get_accelerator("h100-sxm"), 3.99, timing=timing, **kw)


def test_serving_priced_bill_by_hand_from_the_estimates_throughput():
    from calc.bill import self_hosted_bill_range
    from calc.product_traffic import HOURS_PER_MONTH
    from calc.serving import serving_estimate
    # No prefix hit: every generation prefills its whole prompt (3,000 + 500 tokens) and writes 500 tokens. The
    # estimate (vLLM, continuous batching, 32 requests in flight on one H100) gives X output tokens/s per GPU, its
    # prompts' prefill included, so a generation holds the replica 500 / X s. 10M DAU x 1.1% x 5 = 550,000
    # generations a day; replicas = ceil(550,000 x 500 / X / 86,400 x 3); a replica is 1 GPU at $3.99/h for
    # 24 h x 30 days = 720 h.
    assert HOURS_PER_MONTH == 24 * 30
    s = TrafficScenario(dau=10_000_000, cache_hit_rate=0.0)
    est = serving_estimate(get_model("llama-3-8b"), get_accelerator("h100-sxm"), 3500, 500, concurrency=32, tp=1,
                           engine="vllm", batching="continuous")

    def by_hand(x_per_gpu):
        return max(1, math.ceil(550_000 * 500 / x_per_gpu / 86_400 * 3)) * 3.99 * 720

    low, mid, high = self_hosted_bill_range(s, _llama3_h100("serving"))
    assert mid.total_usd == pytest.approx(by_hand(est.output_tokens_per_s_per_gpu))
    # the range: the high throughput gives the low bill, the low throughput the high one
    assert low.total_usd == pytest.approx(by_hand(est.per_gpu_high))
    assert high.total_usd == pytest.approx(by_hand(est.per_gpu_low))
    assert low.total_usd <= mid.total_usd <= high.total_usd and low.total_usd < high.total_usd
    # the worked numbers of self_hosted_rates' docstring: 1,794 tok/s (1,454 - 2,043) against the bound's 3,487,
    # 550,000 x 500 / 1,794 / 86,400 x 3 = 5.3 -> 6 replicas ($17,237), where the bound's
    # 550,000 x 0.200 s x 3 / 86,400 = 3.8 rents 4 ($11,491)
    assert (round(est.output_tokens_per_s_per_gpu), round(est.per_gpu_low), round(est.per_gpu_high)) == (1794, 1454, 2043)
    assert mid.n_gpus == 6 and mid.total_usd == pytest.approx(6 * 3.99 * 720)
    bound = self_hosted_monthly_bill(s, _llama3_h100("bound"))
    assert bound.n_gpus == 4 and bound.total_usd == pytest.approx(4 * 3.99 * 720)


def test_serving_timing_credits_prefix_hits_at_the_bounds_prefill_rate():
    from calc import prefill_time
    from calc.serving import serving_estimate
    # At a 70% hit rate 2,100 of the 3,500 prompt tokens skip prefill: the estimate's 500 / X s per generation
    # less 2,100 tokens at the bound's prefill rate (prefill_time of the whole prompt on the GPU).
    m, a = get_model("llama-3-8b"), get_accelerator("h100-sxm")
    x = serving_estimate(m, a, 3500, 500, concurrency=32).output_tokens_per_s_per_gpu
    prefill_tps = 3500 / float(prefill_time(m, a, 3500).total_s)
    r = self_hosted_rates(TrafficScenario(cache_hit_rate=0.7), _llama3_h100("serving"))
    assert r.replica_s_per_generation == pytest.approx(500 / x - 2100 / prefill_tps)
    assert r.timing == "serving" and r.estimate.engine == "vllm" and r.estimate.decode_batch == 32
    # the bound's own formula still holds with the estimate's decode rate, which is below the bound's
    bound = self_hosted_rates(TrafficScenario(cache_hit_rate=0.7), _llama3_h100("bound"))
    assert r.replica_s_per_generation == pytest.approx(1400 / r.prefill_tokens_per_s + 500 / r.decode_tokens_per_s)
    assert r.decode_tokens_per_s < bound.decode_tokens_per_s
    assert r.replica_s_per_generation > bound.replica_s_per_generation
    # over the hit-rate sweep: each end of the range in order, more hits less time, never below the bound
    h = np.linspace(0, 1, 11)
    rs = self_hosted_rates(TrafficScenario(), _llama3_h100("serving"), cache_hit_rate=h)
    rb = self_hosted_rates(TrafficScenario(), _llama3_h100("bound"), cache_hit_rate=h)
    assert np.all(rs.replica_s_per_generation_low <= rs.replica_s_per_generation)
    assert np.all(rs.replica_s_per_generation <= rs.replica_s_per_generation_high)
    assert np.all(np.diff(rs.replica_s_per_generation) < 0)
    assert np.all(rs.replica_s_per_generation_low >= rb.replica_s_per_generation - 1e-12)


def test_serving_timing_follows_the_engine_and_the_bound_stays_the_default():
    from calc.bill import self_hosted_bill_range
    s = TrafficScenario(dau=10_000_000)
    sg = self_hosted_rates(s, _llama3_h100("serving", engine="sglang"))
    vl = self_hosted_rates(s, _llama3_h100("serving"))
    assert sg.estimate.engine == "sglang" and sg.decode_tokens_per_s != pytest.approx(vl.decode_tokens_per_s)
    # no timing named: the bound, as before, with no range (the three bills equal) and no estimate
    default = self_hosted_rates(s, SelfHostedSetup(get_model("llama-3-8b"), get_accelerator("h100-sxm"), 3.99))
    assert default == self_hosted_rates(s, _llama3_h100("bound"))
    assert default.estimate is None and default.timing == "bound"
    assert default.for_bill_end("high") == default == default.for_bill_end("low")
    low, mid, high = self_hosted_bill_range(s, _llama3_h100("bound"))
    assert low == mid == high


@pytest.mark.parametrize("kw, words", [({"timing": "measured"}, "timing must be 'bound'"),
                                       ({"engine": ""}, "engine must be a serving engine's name")])
def test_bad_timing_or_engine_is_a_clear_error(kw, words):
    with pytest.raises(ValueError, match=words):
        SelfHostedSetup(get_model("llama-3-8b"), get_accelerator("h100-sxm"), 3.99, **kw)


@pytest.mark.parametrize("timing", ["bound", "serving"])
def test_rates_keep_the_batch_asked_and_say_when_the_request_passes_the_trained_context(timing):
    # Llama-3-8B on one H100: 4,096 asked at a 3,500 + 500 / 2 = 3,750-token context is clamped to calc.max_batch
    # there (130 on the data sheet's 80 GB); the batch asked is kept beside it for the page's message.
    m, a = get_model("llama-3-8b"), get_accelerator("h100-sxm")
    traffic = TrafficScenario.from_percentages(1000, 1.0, 0.1, 5.0, 3000, 500, 500, 70)
    r = self_hosted_rates(traffic, SelfHostedSetup(m, a, 2.0, batch=4096, timing=timing))
    from calc.step import max_batch
    assert r.requested_batch == 4096 and r.batch == max_batch(m, a, 3750) and r.context_len == 3750
    assert r.context_notice is None                        # 4,000 tokens fit in the trained 8,192
    # 9,000 prompt + 200 output = 9,200 tokens > 8,192 (config.json's max_position_embeddings): the notice names both
    long = TrafficScenario.from_percentages(1000, 1.0, 0.1, 5.0, 9000, 0, 200, 0)
    r = self_hosted_rates(long, SelfHostedSetup(m, a, 2.0, batch=8, timing=timing))
    assert m.max_context_len == 8192
    assert r.context_notice.startswith("9,200 tokens of prompt and output exceed Llama-3-8B's trained context of 8,192")


def test_a_context_past_eight_gpus_reads_with_thousands_separators():
    # 3,500 prompt + 10,000,000 / 2 output = 5,003,500 tokens: no replica of up to 8 H100s holds it
    m, a = get_model("llama-3-8b"), get_accelerator("h100-sxm")
    traffic = TrafficScenario.from_percentages(1000, 1.0, 0.1, 5.0, 3000, 500, 10_000_000, 70)
    with pytest.raises(ValueError, match="with a 5,003,500-token context does not fit on 8 x"):
        self_hosted_rates(traffic, SelfHostedSetup(m, a, 2.0))


def test_bill_vs_dau_with_range_is_the_staircase_at_the_serving_estimates_two_ends():
    from calc.bill import self_hosted_bill_range
    from calc.bill_compare import RANGE_COLUMNS
    # The page's defaults (1.1% of DAU create, 5 generations each: G = 0.055 x DAU a day; 3,000 + 500 prompt
    # tokens, 70% of the 3,000 hit, so 1,400 miss; 500 output) on Llama-3-8B, one H100 at $3.99/h per replica:
    # a replica's month is 1 x 3.99 x 720 = $2,872.80. At one end of the serving estimate's range a generation
    # holds the replica s = 1,400 / prefill tok/s + 500 / decode tok/s at that end (the high throughput gives the
    # low bill), and the bill is max(1, ceil(G x s x 3 / 86,400)) replicas.
    s = TrafficScenario.from_percentages(100_000, 1.0, 0.1, 5.0, 3000, 500, 500, 70)
    setup = _llama3_h100("serving")
    r = self_hosted_rates(s, setup)
    assert r.gpus_per_replica == 1 and r.replica_month_usd == pytest.approx(2872.80)
    s_low = 1400 / r.prefill_tokens_per_s + 500 / r.decode_tokens_per_s_high
    s_high = 1400 / r.prefill_tokens_per_s + 500 / r.decode_tokens_per_s_low
    daus = np.array([0.0, 1e3, 1e6, 1e7, 5e7, 1e9])
    df = bill_vs_dau(s, default_tiers(), setup, daus, with_range=True)
    assert list(df.columns) == ["dau", "name", "total_usd", "n_gpus", *RANGE_COLUMNS]
    hosted = df[df["name"] == "self-hosted"].set_index("dau")
    for dau in daus:
        g = 0.055 * dau
        for end, sec in (("low", s_low), ("high", s_high)):
            n = max(1, math.ceil(g * sec * 3 / 86_400 - 1e-9))
            assert hosted.loc[dau, f"n_gpus_{end}"] == n, (dau, end)
            assert hosted.loc[dau, f"total_{end}_usd"] == pytest.approx(n * 2872.80), (dau, end)
        # the same ends as the bill's range at that DAU (calc.bill.self_hosted_bill_range, one DAU at a time)
        low, mid, high = self_hosted_bill_range(s.replace(dau=float(dau)), setup)
        assert hosted.loc[dau, "total_low_usd"] == pytest.approx(low.total_usd)
        assert hosted.loc[dau, "total_usd"] == pytest.approx(mid.total_usd)
        assert hosted.loc[dau, "total_high_usd"] == pytest.approx(high.total_usd)
        assert (hosted.loc[dau, "n_gpus_low"], hosted.loc[dau, "n_gpus_high"]) == (low.n_gpus, high.n_gpus)
    # 10M DAU: 550,000 generations a day; s_low = 1,400 / 61,943 + 500 / 2,623 = 0.213 s -> 4.07 -> 5 replicas
    # ($14,364.00); s_high = 1,400 / 61,943 + 500 / 1,718 = 0.314 s -> 5.99 -> 6 ($17,236.80); the estimate's
    # 1,400 / 61,943 + 500 / 2,246 = 0.245 s -> 4.68 -> 5, the low end's count
    assert (hosted.loc[1e7, "n_gpus_low"], hosted.loc[1e7, "n_gpus"], hosted.loc[1e7, "n_gpus_high"]) == (5, 5, 6)
    assert hosted.loc[1e7, "total_low_usd"] == pytest.approx(14_364.00)
    assert hosted.loc[1e7, "total_high_usd"] == pytest.approx(17_236.80)
    # the API rows carry no range; the GPU counts stay whole numbers
    api = df[df["name"] != "self-hosted"]
    assert api["total_low_usd"].isna().all() and api["n_gpus_high"].isna().all()
    assert str(df["n_gpus_low"].dtype) == "Int64"


def test_bill_vs_dau_keeps_its_columns_by_default_and_the_bound_has_no_range():
    s = TrafficScenario.from_percentages(100_000, 1.0, 0.1, 5.0, 3000, 500, 500, 70)
    daus = np.array([1e3, 1e7, 5e7])
    plain = bill_vs_dau(s, default_tiers(), _llama3_h100("bound"), daus)
    assert list(plain.columns) == ["dau", "name", "total_usd", "n_gpus"]   # the course's sweep, unchanged
    ranged = bill_vs_dau(s, default_tiers(), _llama3_h100("bound"), daus, with_range=True)
    hosted = ranged[ranged["name"] == "self-hosted"]
    # the bound has no range: both ends are its own staircase (at 50M DAU it rents more than one replica)
    assert hosted["n_gpus"].iloc[-1] > 1
    for end in ("low", "high"):
        assert hosted[f"total_{end}_usd"].tolist() == pytest.approx(hosted["total_usd"].tolist())
        assert hosted[f"n_gpus_{end}"].astype(int).tolist() == hosted["n_gpus"].tolist()
    # no self-hosted tier: nothing to range, the plain sweep
    assert list(bill_vs_dau(s, default_tiers(), None, daus, with_range=True).columns) == list(plain.columns)


def test_generation_context_notice_names_the_prompt_and_output_past_the_trained_context():
    from calc.bill import generation_context_notice
    m = get_model("llama-3-8b")
    assert m.max_context_len == 8192

    def notice(prefix, unique, out):
        return generation_context_notice(TrafficScenario.from_percentages(1000, 1.0, 0.1, 5.0, prefix, unique, out, 70), m)

    # 3,000 + 500 prompt + 500 output = 4,000 tokens: inside 8,192
    assert notice(3000, 500, 500) is None
    # 7,692 + 0 + 500 = 8,192 exactly: inside; one output token more, 8,193, is past it
    assert notice(7692, 0, 500) is None
    assert notice(7692, 0, 501).startswith("8,193 tokens of prompt and output exceed Llama-3-8B's trained context of 8,192")
    # 3,000 + 500 + 10,000,000 = 10,003,500 tokens: said although no replica of up to 8 H100s holds the model at that
    # length (self_hosted_rates refuses it)
    said = notice(3000, 500, 10_000_000)
    assert said.startswith("10,003,500 tokens of prompt and output exceed Llama-3-8B's trained context of 8,192")
    with pytest.raises(ValueError, match="does not fit on 8 x"):
        self_hosted_rates(TrafficScenario.from_percentages(1000, 1.0, 0.1, 5.0, 3000, 500, 10_000_000, 70),
                          SelfHostedSetup(m, get_accelerator("h100-sxm"), 2.0))
