"""The worked numbers of the seeds, reproduced by calc (issue 2's acceptance list).

Each expected value is the seed's own figure (seed 000 step 2-4 and problems 1-5; seed 004's
Llama 2 13B napkin math), checked within the rounding of the digits the seed states. The hand
arithmetic behind each is in the comment beside it.
"""
import math

import pytest

import calc
from calc import ModelConfig

H100 = calc.Accelerator("H100 SXM", memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12,
                        peak_flops_per_s={"bf16": 989e12})
LLAMA3_8B = calc.get_model("llama-3-8b")
# Seed 000 problems: "A 13B-parameter model in bf16, 40 layers, GQA with 8 KV heads, H = 128".
# Only the shapes the problems use matter; the others are Llama-2-13B's.
SEED_13B = ModelConfig("seed 13B", n_params=13_000_000_000, n_layers=40, d_model=5120, n_heads=40,
                       n_kv_heads=8, head_dim=128, d_ff=13824, vocab_size=32000, attention="gqa")
GB = 1e9


def close(value, expected, digits_rel=0.005):
    return value == pytest.approx(expected, rel=digits_rel)


# ---- Llama-3-8B on an H100 (seed 000 steps 2 and 4) -----------------------------------------
def test_llama3_8b_kv_bytes_per_token_and_sequence():
    # 2 (K and V) x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 B = 128 KiB
    assert calc.kv_bytes_per_token(LLAMA3_8B) == 131_072
    # x 8,192 tokens = 1,073,741,824 B = 1.07 GB (1 GiB)
    assert calc.kv_cache_bytes(LLAMA3_8B, 8192) == 131_072 * 8192
    assert round(calc.kv_cache_bytes(LLAMA3_8B, 8192) / GB, 2) == 1.07


def test_h100_critical_batch_is_about_295():
    # 989e12 / 3.35e12 = 295.2 FLOP/byte
    assert round(calc.critical_batch(H100)) == 295


def test_llama3_8b_decode_step_at_batch_1():
    s = calc.decode_step_time(LLAMA3_8B, H100, batch=1, context_len=8192, embedding="table")
    assert round(s.weights_s * 1e3, 2) == 4.79   # 16.06 GB / 3.35 TB/s
    assert round(s.kv_s * 1e3, 2) == 0.32        # 1.07 GB / 3.35 TB/s
    assert round(s.total_s * 1e3, 1) == 5.1
    assert round(s.tokens_per_s) == 196          # 1 / 5.115 ms = 195.5


def test_llama3_8b_decode_step_at_batch_32():
    s = calc.decode_step_time(LLAMA3_8B, H100, batch=32, context_len=8192, embedding="table")
    assert round(s.kv_s * 1e3, 1) == 10.3        # 32 x 0.32 ms
    assert round(s.total_s * 1e3, 1) == 15.1     # 4.79 + 10.26
    assert round(s.tokens_per_s) == 2126         # 32 / 15.05 ms
    assert round(s.compute_s * 1e3, 1) == 0.5    # 2 x 8.03e9 x 32 / 989e12 = 0.52 ms ("about 0.5")
    assert s.bound == "memory"


@pytest.mark.parametrize("batch,usd", [(1, 4.26), (8, 0.77), (32, 0.39)])
def test_cost_per_million_at_3_usd_per_hour(batch, usd):
    # $3 / (tok/s x 3600) x 1e6: B=1 196 tok/s -> 4.26; B=8 1,087 -> 0.77; B=32 2,126 -> 0.39
    tps = calc.decode_step_time(LLAMA3_8B, H100, batch, 8192, embedding="table").tokens_per_s
    assert round(calc.cost_per_million(tps, 3.0), 2) == usd


def test_cost_floor_and_throughput_ceiling():
    # W / KV = 3.35e12 / 1.0737e9 = 3,120 tok/s; at $3/h that is 3/(3120*3600)*1e6 = $0.267
    ceiling = calc.throughput_ceiling_tokens_per_s(LLAMA3_8B, H100, 8192)
    assert round(ceiling, -1) == 3120
    assert round(calc.cost_per_million(ceiling, 3.0), 2) == 0.27


def test_tpot_target_10ms_gives_batch_16():
    # 4.79 + 16 x 0.32 = 9.92 ms <= 10 ms; 17 x 0.32 + 4.79 = 10.24 ms > 10 ms
    assert calc.max_batch_for_tpot(LLAMA3_8B, H100, 8192, 0.010, embedding="table") == 16
    s = calc.decode_step_time(LLAMA3_8B, H100, 16, 8192, embedding="table")
    assert round(s.total_s * 1e3, 1) == 9.9
    assert round(calc.cost_per_million(s.tokens_per_s, 3.0), 2) == 0.52


def test_chat_point_batch_48():
    # 4.79 + 48 x 0.3205 = 20.18 ms; 48 / 20.18 ms = 2,379 tok/s -> $0.35 at $3/h; 50 tok/s per person
    s = calc.decode_step_time(LLAMA3_8B, H100, 48, 8192, embedding="table")
    assert round(s.total_s * 1e3, 1) == 20.2
    assert round(calc.cost_per_million(s.tokens_per_s, 3.0), 2) == 0.35
    assert round(1 / s.total_s) == 50


def test_max_batch_bf16_and_int8():
    # (80 - 16.06) / 1.0737 = 59.55 -> 59; int8: (80 - 8.03) / 0.5369 = 134.05 -> 134
    assert calc.max_batch(LLAMA3_8B, H100, 8192) == 59
    assert calc.max_batch(LLAMA3_8B, H100, 8192, weight_dtype="int8", kv_dtype="int8") == 134


def test_int8_weights_and_cache_halve_the_step():
    # (8.03 + 0.537) GB / 3.35 TB/s = 2.56 ms
    s = calc.decode_step_time(LLAMA3_8B, H100, 1, 8192, weight_dtype="int8", kv_dtype="int8", embedding="table")
    assert round(s.total_s * 1e3, 1) == 2.6


def test_cache_equals_weights_at_batch_about_15():
    # 16.06 GB / 1.0737 GB = 14.96
    assert round(calc.batch_where_cache_equals_weights(LLAMA3_8B, 8192)) == 15


def test_pareto_front_covers_batch_1_to_ceiling_and_is_monotone():
    df = calc.pareto_front(LLAMA3_8B, H100, 8192, price_per_hour_usd=3.0, embedding="table")
    assert df["batch"].tolist() == list(range(1, 60))   # B = 1 .. 59, the memory ceiling
    # In the memory-bound regime every extra sequence adds latency and lowers the price, so every
    # point is on the front.
    assert df["pareto"].all()
    assert df["tpot_s"].is_monotonic_increasing and df["usd_per_million"].is_monotonic_decreasing
    assert round(df.loc[df.batch == 32, "usd_per_million"].item(), 2) == 0.39


# ---- Seed 000 back-of-the-envelope problems: a 13B GQA model, 6 GB reserved -------------------
def test_problem_1_kv_per_token_and_sequence():
    # 2 x 40 x 8 x 128 x 2 = 163,840 B = 160 KiB; x 4,096 = 0.67 GB
    assert calc.kv_bytes_per_token(SEED_13B) == 163_840 == 160 * 1024
    assert round(calc.kv_cache_bytes(SEED_13B, 4096) / GB, 2) == 0.67


def test_problem_2_max_batch_with_reserve():
    # (80 - 26 - 6) / 0.671 = 71.5 -> 71
    assert calc.max_batch(SEED_13B, H100, 4096, reserve_bytes=6e9) == 71


def test_problem_3_single_user_ceiling():
    # 26 GB / 3.35 TB/s = 7.76 ms per pass over the weights -> at most 129 tokens/s
    s = calc.decode_step_time(SEED_13B, H100, 1, 4096, embedding="table")
    assert round(1 / s.weights_s) == 129


def test_problem_4_batch_32():
    # cache 32 x 0.671 = 21.5 GB -> 6.4 ms; + 7.76 ms = 14.2 ms; 32 / 14.2 ms = 2,260; compute 0.84 ms
    s = calc.decode_step_time(SEED_13B, H100, 32, 4096, embedding="table")
    assert round(s.total_s * 1e3, 1) == 14.2
    assert round(s.tokens_per_s, -1) == 2260
    assert round(s.compute_s * 1e3, 2) == 0.84
    assert s.bound == "memory"


def test_problem_5_int8_weights_beat_int8_cache_at_batch_32():
    # int8 weights: (13 + 21.5) / 3.35 = 10.3 ms; int8 cache: (26 + 10.7) / 3.35 = 11.0 ms
    w8 = calc.decode_step_time(SEED_13B, H100, 32, 4096, weight_dtype="int8", embedding="table")
    kv8 = calc.decode_step_time(SEED_13B, H100, 32, 4096, kv_dtype="int8", embedding="table")
    assert round(w8.total_s * 1e3, 1) == 10.3
    assert round(kv8.total_s * 1e3, 1) == 11.0
    # the cache outweighs the weights from B = 26 / 0.671 = 38.7 -> 39
    assert math.ceil(calc.batch_where_cache_equals_weights(SEED_13B, 4096)) == 39


# ---- Seed 004: Llama 2 13B napkin math (S = 1024) ----------------------------------------------
def test_llama2_13b_lecture_napkin():
    m = calc.get_model("llama-2-13b")
    assert (m.d_model, m.d_ff, m.n_layers, m.n_heads, m.n_kv_heads, m.head_dim, m.vocab_size) == \
        (5120, 13824, 40, 40, 40, 128, 32000)
    assert round(calc.weight_bytes(m) / GB, 1) == 26.0           # 13.016e9 x 2
    assert round(calc.kv_cache_bytes(m, 1024) / GB, 2) == 0.84   # 819,200 x 1,024
    s1 = calc.decode_step_time(m, H100, 1, 1024, embedding="table")
    assert round(s1.total_s * 1e3, 1) == 8.0                     # (26.03 + 0.84) / 3.35
    assert round(s1.tokens_per_s, -1) == 120 or round(s1.tokens_per_s) == 125
    assert round(s1.tokens_per_s) == 125
    s64, s256 = (calc.decode_step_time(m, H100, b, 1024, embedding="table") for b in (64, 256))
    # B=64: (26.03 + 53.7) / 3.35 = 23.8 ms; B=256: (26.03 + 214.7) / 3.35 = 71.9 ms: about 3x
    assert round(s256.total_s / s64.total_s, 1) == 3.0
    # throughput 2,689 -> 3,562 tok/s: about 32% more
    assert round(s256.tokens_per_s / s64.tokens_per_s - 1, 2) == pytest.approx(0.32, abs=0.01)
    # memory at B=256: 26.03 + 214.7 = 240.8 GB ("about 241 GB")
    budget = calc.memory_budget(m, H100, 1024, 256)
    assert round(budget.total_bytes / GB) == 241
    assert not budget.fits and budget.n_accelerators == 4        # ceil(240.8 / 80)


# ---- Prefix caching (seed 000 step 2) -----------------------------------------------------------
def test_prefix_caching_20_conversations():
    s = calc.prefix_cache_savings(LLAMA3_8B, n_requests=20, prefix_len=1000)
    assert (s.prefill_tokens_without, s.prefill_tokens_with) == (20_000, 1_000)
    assert round(s.cache_bytes_without / GB, 1) == 2.6      # 20,000 x 131,072 = 2.62 GB
    assert round(s.cache_bytes_with / 1e6) == 131           # 1,000 x 131,072 = 131 MB
    # half the requests miss: 1,000 + 19 x 0.5 x 1,000 = 10,500 tokens prefilled
    assert calc.prefix_cache_savings(LLAMA3_8B, 20, 1000, hit_rate=0.5).prefill_tokens_with == 10_500


# ---- GPT-3 MHA and DeepSeek MLA (seed 003 experiments; DeepSeek-V2 report section 2.1) ----------
def test_gpt3_mha_bytes_per_token():
    # 2 x 96 layers x 96 heads x 128 x 2 B = 4,718,592
    assert calc.kv_bytes_per_token(calc.get_model("gpt-3-175b")) == 4_718_592


def test_deepseek_mla_576_elements_per_token_per_layer():
    v3 = calc.get_model("deepseek-v3")
    assert calc.kv.kv_elements_per_token_per_layer(v3) == 576           # 512 latent + 64 RoPE
    assert calc.kv_bytes_per_token(v3) == 576 * 61 * 2 == 70_272
    assert calc.kv_bytes_per_token(calc.get_model("deepseek-v2")) == 69_120   # 576 x 60 x 2
    # stored expanded: 128 heads x (192 K + 128 V) = 40,960 elements per layer (reference-data 1.2)
    assert calc.kv.kv_elements_per_token_per_layer(v3, mla="expanded") == 40_960
    # "at the same context the KV shrinks by an order of magnitude" against GPT-3-style MHA
    assert calc.kv_bytes_per_token(calc.get_model("gpt-3-175b")) / calc.kv_bytes_per_token(v3) > 10


# ---- Windows and hybrids (reference-data 5.9 and the Gemma-3 example) ----------------------------
def test_mistral_window_caps_cache_at_4096_tokens():
    m = calc.get_model("mistral-7b-v0.1")
    # 4,096 x 131,072 = 512 MiB per sequence, whatever the context beyond the window
    assert calc.kv_cache_bytes(m, 32768) == 4096 * 131_072 == 512 * 2**20
    assert calc.kv_cache_bytes(m, 32768, sliding="full") == 32768 * 131_072
    assert calc.kv_cache_bytes(m, 1000) == 1000 * 131_072


def test_gemma3_27b_hybrid_cache_at_128k():
    m = calc.get_model("gemma-3-27b")
    # 10 global x 131,072 x 8,192 B + 52 local x 1,024 x 8,192 B = 10,737,418,240 + 436,207,616
    assert calc.kv_cache_bytes(m, 131072) == 10_737_418_240 + 436_207_616
    assert round(calc.kv_cache_bytes(m, 131072, sliding="full") / GB, 2) == 66.57


def test_cross_layer_sharing_halves_the_cache():
    shared = LLAMA3_8B.with_changes(kv_sharing=2)
    assert calc.kv_cache_bytes(shared, 8192) == calc.kv_cache_bytes(LLAMA3_8B, 8192) / 2


def test_kv_dtypes_scale_the_cache():
    full = calc.kv_cache_bytes(LLAMA3_8B, 8192)
    assert calc.kv_cache_bytes(LLAMA3_8B, 8192, kv_dtype="fp8") == full / 2
    assert calc.kv_cache_bytes(LLAMA3_8B, 8192, kv_dtype="int4") == full / 4
    assert calc.kv_cache_bytes(LLAMA3_8B, 8192, kv_dtype="fp32") == full * 2


# ---- MoE: experts touched, compute on active parameters ----------------------------------------
def test_mixtral_reads_only_the_experts_a_batch_touches():
    m = calc.get_model("mixtral-8x7b")
    # one token, top-2 of 8: reads shared + 2 experts = the active parameters
    assert calc.weight_bytes_read(m, 1, embedding="table") == pytest.approx(m.n_active_params * 2, rel=1e-12)
    # expected distinct experts for 2 tokens: 8 x (1 - (6/8)^2) = 3.5
    assert calc.expected_experts_touched(8, 2, 2) == pytest.approx(3.5)
    # a large batch touches all 8: reads every parameter
    assert calc.weight_bytes_read(m, 512, embedding="table") == pytest.approx(m.n_params * 2, rel=1e-9)
    s = calc.decode_step_time(m, H100, 1, 4096, embedding="table")
    assert s.compute_s == pytest.approx(2 * m.n_active_params / 989e12)


# ---- Prefill ---------------------------------------------------------------------------------
def test_prefill_is_compute_bound_and_counts_causal_attention():
    p = calc.prefill_time(LLAMA3_8B, H100, 8192, embedding="table")
    assert p.bound == "compute"
    # matmuls 2 x 8.03e9 x 8192 = 1.3157e14; causal attention per layer
    # 2 x 32 heads x (128 + 128) x 8192 x 8193 / 2 = 5.4982e11, x 32 layers = 1.7594e13
    matmul = 2 * 8_030_261_248 * 8192
    attn = 32 * 2 * 32 * 256 * (8192 * 8193 // 2)
    assert p.flops == pytest.approx(matmul + attn, rel=1e-12)
    assert p.compute_s == pytest.approx((matmul + attn) / 989e12)
    # TTFT = queue + prefill
    assert calc.ttft(LLAMA3_8B, H100, 8192, queue_s=0.25, embedding="table") == pytest.approx(0.25 + p.total_s)
    # prefill intensity is in the thousands, decode's at B = 1 is about 1 FLOP/byte
    assert calc.arithmetic_intensity_prefill(LLAMA3_8B, 8192, embedding="table") > 1000
    assert calc.arithmetic_intensity_decode(LLAMA3_8B, 1, 8192, embedding="table") == pytest.approx(
        2 * 8_030_261_248 / (16_060_522_496 + 1_073_741_824))
