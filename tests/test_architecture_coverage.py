"""The serving model says on screen when a model's kind of layer is one its calibration set barely saw.

The fitted fixed costs and utilisations were measured on dense, MoE, MLA and sliding-window models; a Gated DeltaNet
or Mamba hybrid, or a sparse-attention model, gets the same per-layer prices, so its estimate is an extrapolation and
the notice says so, with the held-out rows' figures for such models.
"""
import copy
import math

import pandas as pd
import pytest

import calc
from calc.serving import serving_estimate
from calc.serving_params import (ARCHITECTURE_TRAITS, FORMAT_TRAIT, TRAIT_LEAST_ROWS, architecture_coverage,
                                 architecture_notice, architecture_traits, format_coverage, load_serving_params,
                                 thin_format)


@pytest.mark.parametrize("key,traits", [
    ("llama-3.1-8b", ()),                                  # dense, full attention in every layer
    ("qwen3-32b", ()),
    ("deepseek-v3", ("moe", "mla")),                       # 58 MoE layers of 61, latent attention
    ("gpt-oss-120b", ("moe", "sliding")),                  # every other layer a 128-token window
    ("mistral-7b-v0.1", ("sliding",)),                     # a 4,096-token window in every layer
    ("qwen3.5-35b-a3b", ("moe", "linear_attention")),      # 30 Gated DeltaNet layers of 40
    ("qwen3-next-80b-a3b", ("moe", "linear_attention")),
    ("nemotron-3-nano-30b-a3b", ("moe", "mamba")),         # Mamba-2 layers between attention and MoE layers
    ("deepseek-v3.2", ("moe", "mla", "sparse_attention")),  # DSA: a lightning indexer in every attention layer
])
def test_traits_are_read_from_the_presets_shapes(key, traits):
    assert architecture_traits(calc.get_model(key)) == traits


def test_stored_coverage_counts_the_fitted_rows_of_each_kind():
    from calc.serving_fit import prepare_rows, read_measurements
    stored = load_serving_params()
    rows = prepare_rows(read_measurements(), stored)[0]
    cover = stored["coverage"]["architectures"]
    assert set(cover) == set(ARCHITECTURE_TRAITS)
    # counted apart from the traits function: the fitted rows of the presets known to have latent attention
    # (DeepSeek-V3, DeepSeek-V3.2, Kimi K2) and of those with a DSA indexer (DeepSeek-V3.2 only)
    mla = rows["model"].isin(["deepseek-v3", "deepseek-v3.2", "kimi-k2"])
    assert cover["mla"]["rows"] == int(mla.sum()) > 1000
    assert cover["mla"]["sources"] == rows.loc[mla, "source_id"].nunique()
    dsa = rows["model"] == "deepseek-v3.2"
    assert cover["sparse_attention"]["rows"] == int(dsa.sum()) == 8
    assert cover["sparse_attention"]["models"] == ["DeepSeek-V3.2"]
    # no Gated DeltaNet or Mamba hybrid among the fitted rows
    assert not rows["model"].str.contains("qwen3-next|qwen3.5|nemotron").any()
    assert cover["linear_attention"]["rows"] == cover["mamba"]["rows"] == 0


def test_architecture_coverage_rejects_misaligned_inputs():
    with pytest.raises(ValueError, match="2 models but 1 sources"):
        architecture_coverage(["llama-3.1-8b"] * 2, ["a"])


def test_a_hybrid_model_gets_the_notice_with_the_held_out_figures_and_a_dense_one_none():
    params = load_serving_params()
    gdn = calc.get_model("qwen3.5-35b-a3b")
    (words,) = architecture_notice(params, gdn)
    held = params["validation"]["held_out_by_trait"]["linear_attention"]
    assert words.startswith("it was calibrated on no published measurement of a model with linear-attention layers")
    assert f"On {held['n']:,} published measurements of such models that it was not fitted to" in words
    assert f"within 25% on {100 * held['within_25']:.0f}% of them" in words
    assert f"typically {math.exp(held['median_log_ratio']):.2g}x slower than the estimate" in words
    assert words.endswith("the range shown is widened to the spread of those misses")
    assert architecture_notice(params, calc.get_model("llama-3.1-70b")) == []
    assert architecture_notice(params, calc.get_model("deepseek-v3")) == []  # MoE and MLA: thousands of rows
    # the public estimate carries it beside its other notices
    est = serving_estimate(gdn, calc.get_accelerator("h200"), 1000, 200, concurrency=8)
    assert words in est.notices


def test_the_notice_follows_the_coverage_thresholds():
    params = copy.deepcopy(load_serving_params())
    params["validation"].pop("held_out_by_trait", None)
    cover = params["coverage"]["architectures"]
    gdn = calc.get_model("qwen3-next-80b-a3b")
    # enough rows but one source: still thin
    cover["linear_attention"] = {"rows": 400, "sources": 1, "models": ["Qwen3-Next-80B-A3B"]}
    (words,) = architecture_notice(params, gdn)
    assert "only 400 published measurements of models with linear-attention layers" in words
    assert "from 1 source)" in words
    assert "such models" not in words  # no held-out figures in this file: none quoted
    # two sources and TRAIT_LEAST_ROWS rows: covered, no notice
    cover["linear_attention"] = {"rows": TRAIT_LEAST_ROWS, "sources": 2, "models": ["Qwen3-Next-80B-A3B"]}
    assert architecture_notice(params, gdn) == []
    cover["linear_attention"]["rows"] = TRAIT_LEAST_ROWS - 1
    assert len(architecture_notice(params, gdn)) == 1
    # a params file without the coverage (an older file) says nothing
    params.pop("coverage")
    assert architecture_notice(params, gdn) == []


def test_stored_held_out_figures_by_trait_are_the_held_out_tables():
    from calc.serving_fit import error_summary, holdout_table
    table = holdout_table()[0]
    centre = table[table["statistic"].isin(["mean", "median"])]
    stored = load_serving_params()["validation"]["held_out_by_trait"]
    # the latent-attention models among the held-out rows, chosen by name here
    mla = centre[centre["model"].isin(["deepseek-v3", "deepseek-v3.2", "kimi-k2", "glm-5"])]
    assert {k: v for k, v in stored["mla"].items() if k in ("n", "median_abs_log", "within_25", "within_50")} \
        == error_summary(mla["log_ratio"])
    assert stored["mla"]["median_log_ratio"] == pytest.approx(float(mla["log_ratio"].median()), abs=1e-4)
    assert stored["mla"]["models"] == sorted(calc.get_model(k).name for k in set(mla["model"]))
    assert pd.Series(stored.keys()).isin(list(ARCHITECTURE_TRAITS) + [FORMAT_TRAIT]).all()


def test_error_quantiles_span_a_thin_traits_held_out_range_and_no_more():
    from calc.serving_params import error_quantiles, thin_traits
    params = copy.deepcopy(load_serving_params())
    val = params["validation"]
    val["range_by_engine"]["vllm"]["latency"] = [-0.2, 0.4]
    val["held_out_by_trait"] = {"linear_attention": {"range": {"latency": [0.1, 1.5]}},
                                "mamba": {"range": {"latency": [-0.6, 0.3]}}}
    assert error_quantiles(params, "latency", "vllm") == (-0.2, 0.4)
    # the union of the two spans: low from the engine's (the trait's 0.1 is above it), high from the trait's
    assert error_quantiles(params, "latency", "vllm", ("linear_attention",)) == (-0.2, 1.5)
    assert error_quantiles(params, "latency", "vllm", ("linear_attention", "mamba")) == (-0.6, 1.5)
    # a trait with no range of that kind leaves it
    assert error_quantiles(params, "throughput", "vllm", ("linear_attention",)) == \
        error_quantiles(params, "throughput", "vllm")
    assert thin_traits(params, calc.get_model("qwen3.5-35b-a3b")) == ("linear_attention",)  # MoE is well covered
    assert thin_traits(params, calc.get_model("llama-3.1-8b")) == ()


def test_a_hybrids_estimate_keeps_its_value_and_takes_the_held_out_spread_as_its_range():
    params = load_serving_params()
    gdn = calc.get_model("qwen3.5-35b-a3b")
    high = params["validation"]["held_out_by_trait"]["linear_attention"]["range"]["latency"][1]
    engine_high = params["validation"]["range_by_engine"]["vllm"]["latency"][1]
    assert high > engine_high  # held-out hybrids were slower than the cross-validated spread allows
    est = serving_estimate(gdn, calc.get_accelerator("h200"), 1000, 200, concurrency=8, engine="vllm")
    bare = copy.deepcopy(params)
    bare["coverage"].pop("architectures")  # the same file without the coverage: no trait is thin
    plain = serving_estimate(gdn, calc.get_accelerator("h200"), 1000, 200, concurrency=8, engine="vllm",
                             params=bare)
    assert est.tpot.estimate_s == plain.tpot.estimate_s and est.ttft.estimate_s == plain.ttft.estimate_s
    # TPOT's high end: the estimate times e^high (a latency range, bounded below by the roofline only)
    assert est.tpot.high_s == pytest.approx(est.tpot.estimate_s * math.exp(high), rel=1e-9)
    assert plain.tpot.high_s == pytest.approx(plain.tpot.estimate_s * math.exp(engine_high), rel=1e-9)


def test_the_frontier_widens_its_band_unless_told_to_keep_the_cross_validated_one():
    from calc.serving import serving_frontier
    params = load_serving_params()
    gdn = calc.get_model("qwen3.5-35b-a3b")
    c = [1.0, 8.0, 64.0]
    wide = serving_frontier(gdn, "h200", 1000, 200, c, engine="vllm")
    kept = serving_frontier(gdn, "h200", 1000, 200, c, engine="vllm", trait_range=False)
    assert (wide["tpot_s"] == kept["tpot_s"]).all()  # the estimate itself is the same
    # tokens/s per user is 1 / TPOT: its low end is the estimate over e^(the latency range's high end)
    high = params["validation"]["held_out_by_trait"]["linear_attention"]["range"]["latency"][1]
    engine_high = params["validation"]["range_by_engine"]["vllm"]["latency"][1]
    per_user = wide["tokens_per_s_per_user"]
    assert wide["tokens_per_s_per_user_low"].to_numpy() == pytest.approx((per_user / math.exp(high)).to_numpy())
    assert kept["tokens_per_s_per_user_low"].to_numpy() == pytest.approx((per_user / math.exp(engine_high)).to_numpy())
    # and each says which range it drew, in its notice
    assert any(n.endswith("widened to the spread of those misses") for n in wide.attrs["notices"])
    kept_words = [n for n in kept.attrs["notices"] if "linear-attention" in n]
    assert len(kept_words) == 1 and "the range shown here is the cross-validated one" in kept_words[0]


# An engine's kernels for a weight format are its own (vLLM's block-scaled FP8 GEMMs, SGLang's 4-bit weight-only MoE
# kernels), so its rows of other formats need not carry: a pair of engine and weight format the calibration read
# thinly gets the same notice and the same widened range as a thin architecture trait. On the held-out rows such
# pairs came within 25% on 13% of 659 rows, the others on 62.5%.

def test_format_coverage_counts_rows_and_sources_per_engine_and_format():
    # three rows by hand: two vLLM fp8-block rows of one source, one SGLang fp8-block row of another
    cover = format_coverage(["vllm", "vllm", "sglang"], ["fp8-block", "fp8-block", "fp8-block"], ["a", "a", "b"])
    assert cover == {"sglang": {"fp8-block": {"rows": 1, "sources": 1}},
                     "vllm": {"fp8-block": {"rows": 2, "sources": 1}}}
    with pytest.raises(ValueError, match="2 engines, 1 weight formats and 2 sources"):
        format_coverage(["vllm", "vllm"], ["fp8"], ["a", "b"])


def test_stored_format_coverage_counts_the_fitted_rows():
    from calc.serving_fit import prepare_rows, read_measurements
    stored = load_serving_params()
    rows = prepare_rows(read_measurements(), stored)[0]
    cover = stored["coverage"]["weight_formats"]
    # counted apart from format_coverage, with pandas: every (engine, format) pair's rows and sources
    counts = rows.groupby(["engine_key", "weight_dtype"])["source_id"].agg(["size", "nunique"])
    assert {(e, f): (c["rows"], c["sources"]) for e, fs in cover.items() for f, c in fs.items()} == \
        {k: (int(v["size"]), int(v["nunique"])) for k, v in counts.iterrows()}
    # the calibration's block-scaled FP8 rows ran on SGLang and TensorRT-LLM, none on vLLM
    assert "fp8-block" not in cover["vllm"] and cover["sglang"]["fp8-block"]["sources"] >= 2


@pytest.mark.parametrize("engine,fmt,thin", [
    ("vllm", "fp8-block", True),     # no fitted row of the pair
    ("sglang", "int4-g32", True),    # Kimi K2's INT4 checkpoint ran on vLLM only in the calibration set
    ("vllm", "nvfp4", True),         # 180 rows, but of one source
    ("sglang", "fp8-block", False),  # 284 rows of 2 sources
    ("vllm", "fp8", False),
    ("trtllm", "nvfp4", False),
    ("generic", "fp8-block", False),  # an engine the fit did not read has its own fallback notice
    ("vllm", None, False),
])
def test_thin_format_follows_the_stored_coverage(engine, fmt, thin):
    assert thin_format(load_serving_params(), engine, fmt) is thin


def test_a_thin_pair_gets_the_notice_and_the_held_out_range_and_keeps_its_value():
    params = load_serving_params()
    held = params["validation"]["held_out_by_trait"][FORMAT_TRAIT]
    h200 = calc.get_accelerator("h200")
    est = serving_estimate("deepseek-v3", h200, 1000, 200, concurrency=8, tp=8, engine="vllm")
    [words] = [n for n in est.notices if "costs fitted on other weight formats" in n]
    assert words.startswith("no published vLLM run with fp8-block weights was in its calibration (its fp8-block "
                            "runs are SGLang's and TensorRT-LLM's), so this estimate carries vLLM's costs")
    assert f"On {held['n']:,} held-out runs of engine and weight-format pairs as thinly covered" in words
    assert f"within 25% on {100 * held['within_25']:.0f}% of them" in words
    assert "vLLM with fp8-block weights" in held["models"]
    # the same file without the format coverage: same estimate, the engine's cross-validated range, no notice
    bare = copy.deepcopy(params)
    bare["coverage"].pop("weight_formats")
    plain = serving_estimate("deepseek-v3", h200, 1000, 200, concurrency=8, tp=8, engine="vllm", params=bare)
    assert est.tpot.estimate_s == plain.tpot.estimate_s
    assert not [n for n in plain.notices if "costs fitted on other weight formats" in n]
    high = max(held["range"]["latency"][1], params["validation"]["range_by_engine"]["vllm"]["latency"][1])
    assert est.tpot.high_s == pytest.approx(est.tpot.estimate_s * math.exp(high), rel=1e-9)
    assert est.tpot.high_s > plain.tpot.high_s
    # SGLang read fp8-block from two sources: no notice there
    other = serving_estimate("deepseek-v3", h200, 1000, 200, concurrency=8, tp=8, engine="sglang")
    assert not [n for n in other.notices if "costs fitted on other weight formats" in n]
    # a pair of one source: its rows counted; one of another engine's format: whose runs they are
    params_one = copy.deepcopy(params)
    params_one["coverage"]["weight_formats"]["vllm"]["fp8-block"] = {"rows": 1, "sources": 1}
    [one] = [n for n in architecture_notice(params_one, calc.get_model("deepseek-v3"), engine="vllm",
                                            weight_dtype="fp8-block") if "weight formats" in n]
    assert one.startswith("only 1 published vLLM run with fp8-block weights, from 1 source, was in its calibration "
                          "(its other fp8-block runs are SGLang's and TensorRT-LLM's)")


def test_stored_held_out_figures_of_thin_pairs_are_the_held_out_tables():
    from calc.serving_fit import error_summary, holdout_table
    params = load_serving_params()
    table = holdout_table()[0]
    centre = table[table["statistic"].isin(["mean", "median"])]
    stored = params["validation"]["held_out_by_trait"][FORMAT_TRAIT]
    # the pairs chosen by hand from the stored coverage: fewer than TRAIT_LEAST_ROWS fitted rows or one source
    cover = params["coverage"]["weight_formats"]
    thin = [(e, f) for e, f in set(zip(centre["engine_key"], centre["weight_dtype"]))
            if e in cover and (cover[e].get(f, {}).get("rows", 0) < TRAIT_LEAST_ROWS
                               or cover[e].get(f, {}).get("sources", 0) < 2)]
    rows = centre[[p in thin for p in zip(centre["engine_key"], centre["weight_dtype"])]]
    assert {k: v for k, v in stored.items() if k in ("n", "median_abs_log", "within_25", "within_50")} \
        == error_summary(rows["log_ratio"])
    assert ("vllm", "fp8-block") in thin and ("sglang", "int4-g32") in thin


def test_the_plans_verdict_says_when_its_range_was_widened():
    # the capacity plan quotes the replica's range; for a model with a thin trait (Qwen3.5's linear attention) that
    # range took the held-out spread, and the verdict says so rather than calling it the cross-validated one
    from calc import planning
    traffic = planning.ServingTraffic(5.0, 2.0, 2048, 256, 0.0)
    h100 = calc.get_accelerator("h100-sxm")
    for key, widened in (("qwen3.5-35b-a3b", True), ("llama-3.1-8b", False)):
        plan = planning.capacity_plan(calc.get_model(key), h100, traffic, 0.05, 1.0, timing="serving")
        est = plan.estimate
        words = ("cross-validated errors, widened to held-out misses as the notice says" if widened
                 else "cross-validated errors")
        assert plan.verdict.endswith(
            f"Range ({words}): TPOT {est.tpot.low_s * 1e3:.1f} - {est.tpot.high_s * 1e3:.1f} ms, "
            f"TTFT {est.ttft.low_s * 1e3:,.0f} - {est.ttft.high_s * 1e3:,.0f} ms."), key
        assert any(n.endswith("widened to the spread of those misses") for n in est.notices) is widened
