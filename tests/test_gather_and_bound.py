"""The input embedding is a gather, not a read of the table; the "bound" label agrees with the roofline chart.

Hand arithmetic in the comments; the course's napkin ("table") numbers are in test_calc_seeds.py.
"""
import numpy as np
import pytest

import calc
from calc import sweeps

LLAMA3 = calc.get_model("llama-3-8b")      # untied: a 128,256 x 4,096 input table and a separate head
H100 = calc.get_accelerator("h100-sxm")    # W = 3.35e12 B/s, P = 989e12 FLOP/s (bf16)
TABLE_BYTES = 128_256 * 4_096 * 2          # 1,050,673,152 B = 1.05 GB in bf16
WEIGHT_BYTES = 8_030_261_248 * 2           # 16,060,522,496 B = 16.06 GB


def test_the_untied_input_table_is_6_percent_of_llama3_8b():
    assert calc.memory.input_embedding_params(LLAMA3) * 2 == TABLE_BYTES
    assert TABLE_BYTES / WEIGHT_BYTES == pytest.approx(0.0654, abs=1e-4)


def test_decode_reads_b_rows_of_the_input_embedding():
    # B = 1: 16,060,522,496 - 1,050,673,152 + 1 row of 4,096 x 2 B = 15,009,857,536 B -> 4.4806 ms;
    # + the 8K cache 1,073,741,824 B -> 0.3205 ms: 4.8011 ms (the napkin's 5.1147 ms less 0.3136 ms).
    g = calc.decode_step_time(LLAMA3, H100, 1, 8192)
    assert g.bytes - 1_073_741_824 == WEIGHT_BYTES - TABLE_BYTES + 4096 * 2
    assert g.total_s * 1e3 == pytest.approx(4.8011, abs=1e-4)
    t = calc.decode_step_time(LLAMA3, H100, 1, 8192, embedding="table")
    assert t.total_s * 1e3 == pytest.approx(5.1147, abs=1e-4)
    # B = 32 gathers 32 rows: 32 x 8,192 B more than B = 1.
    g32 = calc.decode_step_time(LLAMA3, H100, 32, 8192)
    assert g32.weights_s * H100.bandwidth_bytes_per_s == pytest.approx(WEIGHT_BYTES - TABLE_BYTES + 32 * 8192)
    # no matmul for the lookup: 2 x (8,030,261,248 - 525,336,576) FLOPs per token
    assert g.flops == 2 * (8_030_261_248 - 525_336_576)


def test_tied_embeddings_are_read_once_as_the_head():
    tied = calc.get_model("qwen2.5-0.5b")
    assert tied.tie_word_embeddings
    g = calc.decode_step_time(tied, H100, 8, 4096)
    t = calc.decode_step_time(tied, H100, 8, 4096, embedding="table")
    assert g == t


def test_prefill_does_no_matmul_for_the_input_embedding():
    # matmuls 2 x (8,030,261,248 - 525,336,576) x 8,192 = 1.22958e14 (not 1.3157e14);
    # causal attention 32 layers x 2 x 32 heads x 256 x 8,192 x 8,193 / 2 = 1.7594e13, as in the napkin.
    p = calc.prefill_time(LLAMA3, H100, 8192)
    matmul = 2 * (8_030_261_248 - 525_336_576) * 8192
    attn = 32 * 2 * 32 * 256 * (8192 * 8193 // 2)
    assert p.flops == pytest.approx(matmul + attn, rel=1e-12)
    assert p.total_s == pytest.approx((matmul + attn) / 989e12 + 1_073_741_824 / 3.35e12, rel=1e-12)
    df = sweeps.ttft_sweep(LLAMA3, H100, [8192])
    assert df["ttft_s"].item() == pytest.approx(p.total_s, rel=1e-12)
    assert df["ttft_s"].item() == pytest.approx(0.1424, abs=1e-4)


def test_moe_gather_subtracts_the_table_from_the_shared_part():
    m = calc.get_model("mixtral-8x7b")     # untied, V = 32,000, D = 4,096
    # one token reads the active parameters less the table plus one row
    expected = (m.n_active_params - 32_000 * 4096 + 4096) * 2
    assert calc.weight_bytes_read(m, 1) == pytest.approx(expected, rel=1e-12)


def test_sweeps_take_the_embedding_keyword():
    g = calc.decode_sweep(LLAMA3, H100, 8192, np.array([1, 32]))
    t = calc.decode_sweep(LLAMA3, H100, 8192, np.array([1, 32]), embedding="table")
    assert (t["total_s"] - g["total_s"]).tolist() == pytest.approx(
        [(TABLE_BYTES - 4096 * 2) / 3.35e12, (TABLE_BYTES - 32 * 4096 * 2) / 3.35e12], rel=1e-9)
    p = calc.pareto_front(LLAMA3, H100, 8192, 3.0, embedding="table")
    assert round(p.loc[p.batch == 1, "tpot_s"].item() * 1e3, 2) == 5.11
    with pytest.raises(ValueError, match="embedding must be 'gather'"):
        calc.decode_step_time(LLAMA3, H100, 1, 8192, embedding="rows")


# ---- the bound label ------------------------------------------------------------------------------
def test_llama3_at_8k_batch_1024_is_memory_bound_on_the_kv_read():
    # KV read 1,024 x 1,073,741,824 B / 3.35e12 = 328.2 ms; weights 4.48 ms; compute
    # 2 x 7.505e9 x 1,024 / 989e12 = 15.5 ms. compute > weights (the old label said "compute"), but
    # compute < weights + KV = 332.7 ms: the cache read is 95% of the 343.8 ms step.
    s = calc.decode_step_time(LLAMA3, H100, 1024, 8192)
    assert s.kv_s / s.total_s > 0.95
    assert s.compute_s > s.weights_s
    assert s.bound == "memory"
    pts = sweeps.roofline_points(LLAMA3, H100, 8192, [1024])
    ridge = sweeps.ridge_intensity(H100)
    assert pts["intensity_flop_per_byte"].item() < ridge
    assert pts["bound"].item() == "memory"


def test_short_context_large_batch_is_compute_bound_on_both():
    # S = 128, B = 1,024: compute 15.5 ms > weights 4.48 + KV 1,024 x 128 x 131,072 / 3.35e12 = 5.13 ms
    s = calc.decode_step_time(LLAMA3, H100, 1024, 128)
    assert s.compute_s > s.weights_s + s.kv_s
    assert s.bound == "compute"
    pts = sweeps.roofline_points(LLAMA3, H100, 128, [1024])
    assert pts["intensity_flop_per_byte"].item() > sweeps.ridge_intensity(H100)


@pytest.mark.parametrize("context_len", [128, 1024, 8192, 32768])
def test_every_label_matches_the_side_of_the_ridge(context_len):
    batches = np.array([1, 16, 256, 1024, 4096])
    df = calc.decode_sweep(LLAMA3, H100, context_len, batches)
    ridge = sweeps.ridge_intensity(H100)
    for row in df.itertuples():
        step = calc.decode_step_time(LLAMA3, H100, int(row.batch), context_len)
        assert row.bound == step.bound == ("compute" if step.arithmetic_intensity > ridge else "memory")
    pre = sweeps.ttft_sweep(LLAMA3, H100, [16, 256, 8192])
    for row in pre.itertuples():
        step = calc.prefill_time(LLAMA3, H100, int(row.prompt_len))
        assert row.bound == step.bound == ("compute" if step.arithmetic_intensity > ridge else "memory")
