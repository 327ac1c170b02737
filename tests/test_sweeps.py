"""Tests of calc.sweeps: roofline curve and points, decode split, TTFT sweep, KV-head variants.

Expected numbers are worked by hand in the comments from the seeds (000 step 4; 004 napkin math and
Exercise 1) and the datasheet figures of an H100 SXM: P = 989 TFLOP/s bf16, W = 3.35 TB/s, 80 GB.
"""
import numpy as np
import pytest

import calc
from calc import sweeps

H100 = calc.get_accelerator("h100-sxm")
LLAMA3 = calc.get_model("llama-3-8b")    # 8,030,261,248 params, L=32, D=4096, N=32, K=8, H=128
LLAMA2 = calc.get_model("llama-2-13b")   # 13,015,864,320 params, L=40, D=5120, N=K=40, H=128


def test_ridge_is_p_over_w():
    # Seed 004: 989e12 / 3.35e12 = 295.2 FLOP/byte; fp8 doubles P: 1979e12 / 3.35e12 = 590.7.
    assert sweeps.ridge_intensity(H100) == pytest.approx(295.22, abs=0.01)
    assert sweeps.ridge_intensity(H100, "fp8") == pytest.approx(590.75, abs=0.01)


def test_roofline_curve_min_of_p_and_wi():
    df = sweeps.roofline_curve(H100, intensities=[1.0, 10.0, 1000.0])
    # I = 1: 3.35e12 FLOP/s; I = 10: 3.35e13; I = 1000 > ridge: the flat roof 989e12.
    assert df["attainable_flops_per_s"].tolist() == pytest.approx([3.35e12, 3.35e13, 989e12])
    assert df["bound"].tolist() == ["memory", "memory", "compute"]
    default = sweeps.roofline_curve(H100)
    assert default["attainable_flops_per_s"].max() == pytest.approx(989e12)
    assert default["intensity_flop_per_byte"].min() == pytest.approx(0.1)
    with pytest.raises(ValueError, match="positive"):
        sweeps.roofline_curve(H100, intensities=[0.0])


def test_roofline_points_decode_b1_is_far_below_the_ridge():
    pts = sweeps.roofline_points(LLAMA3, H100, 8192, [1, 32], prompt_len=8192, embedding="table")
    d1, d32, pre = pts.iloc[0], pts.iloc[1], pts.iloc[2]
    # Decode B=1 at 8k: 2N FLOPs over weights 16.06 GB + one cache 1.074 GB:
    # 2 * 8.03e9 / 17.135e9 = 0.937 FLOP/byte; it achieves 2N / 5.115 ms = 3.14 TFLOP/s.
    assert d1["intensity_flop_per_byte"] == pytest.approx(0.937, abs=0.002)
    assert d1["achieved_flops_per_s"] == pytest.approx(2 * 8_030_261_248 / 5.115e-3, rel=1e-3)
    # B=32: 64N / (16.06 + 34.36 GB) = 10.19 FLOP/byte; step 15.05 ms (seed 000 step 4: 15.1 ms).
    assert d32["intensity_flop_per_byte"] == pytest.approx(10.19, abs=0.02)
    assert d32["step_s"] == pytest.approx(15.05e-3, abs=0.01e-3)
    assert (d1["bound"], d32["bound"], pre["bound"]) == ("memory", "memory", "compute")
    # Prefill of 8,192 tokens sits far right of the ridge (intensity in the thousands).
    assert pre["intensity_flop_per_byte"] > 10 * sweeps.ridge_intensity(H100)
    assert (pts["achieved_flops_per_s"] <= pts["roof_flops_per_s"] * (1 + 1e-9)).all()


def test_decode_split_parts_stack_to_the_step():
    df = sweeps.decode_split(LLAMA3, H100, 8192, batch=32, embedding="table")
    row = df[df["batch"] == 32].iloc[0]
    # Seed 000 step 4: weights 4.79 ms, cache 32 x 0.32 = 10.26 ms, step 15.05 ms.
    assert row["weights_s"] == pytest.approx(4.794e-3, abs=1e-6)
    assert row["kv_s"] == pytest.approx(10.257e-3, abs=2e-6)
    assert row["total_s"] == pytest.approx(15.05e-3, abs=1e-5)
    parts = df["weights_s"] + df["kv_s"] + df["compute_excess_s"]
    assert np.allclose(parts, df["total_s"])
    # The memory ceiling is 59 sequences (seed 000 step 4) and it is on the grid.
    assert (df["max_batch"] == 59).all() and 59 in df["batch"].tolist()
    assert df.loc[df["batch"] == 59, "fits"].item() and not df.loc[df["batch"] == 60, "fits"].item()


def test_decode_split_compute_shows_past_the_critical_batch():
    # Llama-3-8B at S=128: the ceiling is (80 - 16.06) GB / 16.8 MB = 3,811 sequences, far past B* = 295,
    # so at the ceiling 2NB/P = 2 x 8.03e9 x 3811 / 989e12 = 61.9 ms exceeds the 4.79 ms weight read.
    df = sweeps.decode_split(LLAMA3, H100, 128, batch=1, embedding="table")
    assert df["max_batch"].iloc[0] == 3811
    top = df[df["batch"] == 3811].iloc[0]
    assert top["compute_excess_s"] == pytest.approx(2 * 8_030_261_248 * 3811 / 989e12 - 4.794e-3, rel=1e-3)
    assert df.loc[df["batch"] <= 295, "compute_excess_s"].max() == 0.0
    # The grid reaches past the ceiling (1.25 x 3,811 = 4,764) so the chart shows the whole curve.
    assert df["batch"].max() == 4764 and len(df) <= 202


def test_ttft_matches_a_hand_prefill():
    # T = 8192, Llama-3-8B: matmuls 2 x 8.030e9 x 8192 = 1.3157e14 FLOPs; causal attention
    # 32 layers x 2 x 32 heads x (128 + 128) x 8192 x 8193 / 2 = 1.7594e13; total 1.4916e14 FLOPs
    # / 989e12 = 150.82 ms; plus the cache written, 8192 x 131,072 B / 3.35e12 = 0.32 ms: 151.14 ms.
    df = sweeps.ttft_sweep(LLAMA3, H100, [8192], embedding="table")
    assert df["ttft_s"].item() == pytest.approx(0.15114, abs=2e-5)
    assert df["bound"].item() == "compute"
    # A 16-token prompt reads the weights once: 16.06 GB / 3.35 TB/s = 4.79 ms, memory-bound.
    short = sweeps.ttft_sweep(LLAMA3, H100, [16], embedding="table")
    assert short["ttft_s"].item() == pytest.approx(4.795e-3, abs=2e-6)
    assert short["bound"].item() == "memory"


def test_ttft_sweep_closed_form_agrees_with_prefill_time_on_windows():
    # Gemma-2-9B alternates global and 4,096-token sliding layers; the sweep's closed form
    # W(W+1)/2 + (T-W)W must equal calc.prefill_time, which sums the keys query by query.
    gemma = calc.get_model("gemma-2-9b")
    lens = [100, 4096, 5000, 20000]
    df = sweeps.ttft_sweep(gemma, H100, lens)
    expected = [calc.prefill_time(gemma, H100, t).total_s for t in lens]
    assert df["ttft_s"].tolist() == pytest.approx(expected, rel=1e-12)
    assert (np.diff(df["ttft_s"]) > 0).all()
    with pytest.raises(ValueError, match="prompt_lens"):
        sweeps.ttft_sweep(gemma, H100, [0, 5])


def test_kv_head_variants_of_llama2_13b():
    v = sweeps.kv_head_variants(LLAMA2)
    assert [m.n_kv_heads for m in v.values()] == [40, 8, 1]
    assert [m.attention for m in v.values()] == ["mha", "gqa", "mqa"]
    # K 40 -> 8 removes 2 x L x D x H x 32 = 2 x 40 x 5120 x 128 x 32 = 1,677,721,600 parameters.
    assert list(v.values())[1].n_params == 13_015_864_320 - 1_677_721_600
    # Qwen2.5-7B (N = 28): 8 does not divide 28, so 7 stands in; its own K = 4 is added.
    qwen = sweeps.kv_head_variants(calc.get_model("qwen2.5-7b"))
    assert [m.n_kv_heads for m in qwen.values()] == [28, 7, 4, 1]
    assert any("8 does not divide" in k for k in qwen)
    # An MLA model keeps itself as a curve, labelled.
    ds = sweeps.kv_head_variants(calc.get_model("deepseek-v2"))
    assert list(ds)[-1] == "MLA = this model"
    with pytest.raises(ValueError, match="divide"):
        sweeps.kv_head_variants(LLAMA2, [3])


def test_throughput_by_kv_heads_seed_004_exercise():
    df = sweeps.throughput_by_kv_heads(LLAMA2, H100, 1024, embedding="table")
    by = df.groupby("n_kv_heads")
    # K = 40 (the lecture's 13B): KV per sequence 2 x 40 x 40 x 128 x 2 x 1024 = 838.9 MB; weights
    # 26.03 GB; ceiling floor((80 - 26.03) / 0.8389) = 64; knee 26.03 / 0.8389 = 31.0; W/KV = 3,993 tok/s.
    mha = df[df["n_kv_heads"] == 40]
    assert mha["max_batch"].iloc[0] == 64 and mha["batch"].max() == 64
    assert mha["knee_batch"].iloc[0] == pytest.approx(31.03, abs=0.01)
    assert mha["ceiling_tokens_per_s"].iloc[0] == pytest.approx(3993.3, abs=0.5)
    # Seed 004 at B = 1: about 8 ms, 125 tok/s.
    assert mha.loc[mha["batch"] == 1, "tokens_per_s"].item() == pytest.approx(124.7, abs=0.1)
    # K = 8: weights (13.016e9 - 1.678e9) x 2 = 22.68 GB, KV 167.8 MB: floor(57.32 / 0.1678) = 341.
    assert by["max_batch"].first()[8] == 341
    # K = 1: 2 x 40 x 5120 x 128 x 39 = 2,044,723,200 fewer params, weights (13.016e9 - 2.045e9) x 2
    # = 21.94 GB; KV 20.97 MB: floor(58.06 / 0.02097) = 2,768.
    assert by["max_batch"].first()[1] == 2768
    # Each curve ends at its own ceiling and is cut there.
    assert (by["batch"].max() == by["max_batch"].first()).all()
    assert df.loc[df["is_ceiling"], "batch"].tolist() == [64, 341, 2768]
    # Knees on the grid: round(31.03) = 31 for MHA, 135 for K = 8, 1,046 for MQA.
    assert df.loc[df["is_knee"], "batch"].tolist() == [31, 135, 1046]
    # At the knee the cache read equals the weight read: throughput is half of W/KV (memory-bound).
    knee = df[df["is_knee"] & (df["n_kv_heads"] == 40)].iloc[0]
    assert knee["tokens_per_s"] == pytest.approx(3993.3 / 2, rel=0.02)
    # GQA's win is mostly the batch it unlocks: at each ceiling K=8 gives 5x the MHA output.
    top = df[df["is_ceiling"]].set_index("n_kv_heads")["tokens_per_s"]
    assert top[8] / top[40] > 5


def test_seed_004_batch_64_to_256():
    # Seed 004: B = 64 -> 256 at S = 1024 costs 3x the latency for 32% more tokens per second.
    df = sweeps.decode_split(LLAMA2, H100, 1024, batch=256, embedding="table").set_index("batch")
    assert df.loc[256, "total_s"] / df.loc[64, "total_s"] == pytest.approx(3.0, abs=0.05)
    assert df.loc[256, "tokens_per_s"] / df.loc[64, "tokens_per_s"] == pytest.approx(1.32, abs=0.01)
    assert not df.loc[256, "fits"]  # 26 GB + 256 x 0.84 GB = 241 GB: "240 GB does not fit an 80 GB card"


def test_weights_that_do_not_fit_give_no_curve():
    df = sweeps.throughput_by_kv_heads(calc.get_model("deepseek-v3"), H100, 8192)
    assert df.empty and "tokens_per_s" in df.columns


@pytest.mark.parametrize("model_id", calc.models.list_models())
def test_every_preset_takes_every_attention_layout(model_id):
    # compressed (csa, hca) and sparse layers become full-attention layers of the new layout; nothing raises
    m = calc.get_model(model_id)
    for variant in sweeps.kv_head_variants(m).values():
        assert calc.kv_cache_bytes(variant, 8192) > 0
    for layout in ("mha", "gqa", "mqa", "mla"):
        variant = calc.kv.with_attention_layout(m, layout, n_kv_heads=1)
        assert calc.kv_cache_bytes(variant, 8192) > 0


def test_deepseek_v4_pro_by_kv_heads_by_hand():
    m = calc.get_model("deepseek-v4-pro")
    v = sweeps.kv_head_variants(m)
    # 61 layers, all full after the change, K x 512 wide: 2 x 61 x K x 512 x 2 B per token
    assert calc.kv_bytes_per_token(v["K=128 MHA, params kept"]) == 2 * 61 * 128 * 512 * 2
    assert calc.kv_bytes_per_token(v["K=1 MQA, params kept"]) == 2 * 61 * 512 * 2
    assert v["MLA = this model"] is m


def test_kv_head_variants_of_an_mla_model_in_flashmla_cache_keep_their_cache_in_fp8():
    # fp8_ds_mla holds an MLA latent only: the roofline page's K sweep of DeepSeek-V2 (int4 weights on one H200) with
    # it stopped the page ("has no latent cache"). The MLA model keeps it; the plain-attention variants store keys and
    # values in fp8. By hand, K = 1 (MQA) at 8,192 tokens: 60 layers x 2 (K and V) x 1 head x 192 x 1 B = 23,040 B a
    # token, 188,743,680 B a sequence; its ceiling W / KV = 4.8e12 / 188,743,680 = 25,431 tokens/s
    from calc import get_accelerator, get_model
    from calc.sweeps import throughput_by_kv_heads
    d = throughput_by_kv_heads(get_model("deepseek-v2"), get_accelerator("h200"), 8192, "int4", "fp8_ds_mla")
    first = d.groupby("variant", sort=False).first()
    assert list(first.index) == ["K=8 GQA, params kept, fp8 cache", "K=1 MQA, params kept, fp8 cache",
                                 "MLA = this model"]
    assert first.loc["K=1 MQA, params kept, fp8 cache", "ceiling_tokens_per_s"] == pytest.approx(4.8e12 / (23_040 * 8192))
    # the MLA model in FlashMLA's format: 656 B a token and layer (the 512 latent in fp8, 4 fp32 scales, the 64 RoPE
    # dims in bf16), 60 layers x 656 x 8,192 = 322,437,120 B a sequence
    assert first.loc["MLA = this model", "ceiling_tokens_per_s"] == pytest.approx(4.8e12 / (60 * 656 * 8192))
