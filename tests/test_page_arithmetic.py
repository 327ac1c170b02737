"""The arithmetic that pages once did themselves, now in calc: which cache conventions matter for a model
(calc.kv.conventions_that_matter), the KV cache page's layout comparison (calc.sweeps.layout_comparison) and the
quantization page's tables (calc.sweeps.quantization_table, stored_format_steps)."""
import pytest

import calc
from calc import sweeps
from calc.kv import conventions_that_matter
from calc.sweeps import layout_comparison


def test_conventions_that_matter():
    # Llama-3-8B: full attention, GQA: neither switch changes its bytes
    assert conventions_that_matter(calc.get_model("llama-3-8b")) == (False, False)
    # DeepSeek-V3: MLA (latent 512 + 64 against 128 heads x (128 + 128) expanded), no windows
    assert conventions_that_matter(calc.get_model("deepseek-v3")) == (False, True)
    # Gemma-2-9B: every other layer behind a 4,096-token window, so at 2^20 tokens the cap holds fewer
    assert conventions_that_matter(calc.get_model("gemma-2-9b")) == (True, False)


def test_layout_comparison_matches_the_course_figures():
    model = calc.get_model("llama-3-8b")
    rows = layout_comparison({"Your layout": model, **calc.attention_variants(model)},
                             calc.get_accelerator("h100-sxm"), 8192, 2)
    by_name = {r["layout"]: r for r in rows}
    # GQA-8: 2 (K and V) x 32 layers x 8 heads x 128 x 2 bytes = 131,072 B per token (the course: 128 KiB),
    # x 8,192 tokens = 1,073,741,824 B per sequence (the course: 1.07 GB at 8K), x 2 sequences in total
    mine = by_name["Your layout"]
    assert mine["kv_bytes_per_token"] == 131_072
    assert mine["kv_bytes_per_sequence"] == 1_073_741_824
    assert mine["kv_bytes_total"] == 2 * 1_073_741_824
    assert (mine["attention"], mine["kv_heads"], mine["gpus_needed"]) == ("GQA", 8, 1)
    # MHA: 32 KV heads, four times the bytes: 524,288 B per token
    assert by_name["MHA"]["kv_bytes_per_token"] == 524_288
    # MQA: one KV head, an eighth of GQA-8: 16,384 B per token
    assert by_name["MQA"]["kv_bytes_per_token"] == 16_384


def test_quantization_table():
    model, acc = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    table = sweeps.quantization_table(model, acc, 8192, 32)
    assert table["format"].tolist() == ["bf16", "fp8", "int8", "int4"]
    bf16 = table.iloc[0]
    # bf16 cache: 32 sequences x 1,073,741,824 B = 34,359,738,368 B; int4: a quarter
    assert bf16["kv_bytes"] == 34_359_738_368
    assert table.iloc[3]["kv_bytes"] == 34_359_738_368 / 4
    # int8 weights: half the bf16 bytes (same parameters, one byte each instead of two)
    assert table.iloc[2]["weights_bytes"] == pytest.approx(bf16["weights_bytes"] / 2)
    # weights only: the cache keeps the bf16 the caller names
    only = sweeps.quantization_table(model, acc, 8192, 32, apply="weights")
    assert (only["kv_dtype"] == "bf16").all() and only["weight_dtype"].tolist() == ["bf16", "fp8", "int8", "int4"]
    with pytest.raises(ValueError, match="apply"):
        sweeps.quantization_table(model, acc, 8192, 32, apply="neither")


def test_stored_format_steps():
    model, acc = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    table = sweeps.stored_format_steps(model, acc, 8192, 32)
    bf16 = table[table["format"] == "bf16"].iloc[0]
    # the course, week 11, step 4: Llama-3-8B at 8K on an H100 SXM holds 59 sequences in bf16
    assert bf16["max_batch"] == 59
    assert bf16["step_s"] == calc.decode_step_time(model, acc, 32, 8192, "bf16", "bf16").total_s


def test_the_window_row_of_an_mha_model_is_the_gqa_row_behind_a_window():
    # Llama-2-7B is MHA (N = K = 32, H = 128, L = 32): the GQA row is GQA-8, and the window row keeps that K.
    # Its full-attention bytes per token: 2 (K and V) x 32 layers x 8 heads x 128 x 2 B = 131,072 B;
    # at 8K context behind a 4,096-token window each sequence holds 4,096 tokens: 4,096 x 131,072 B.
    variants = calc.attention_variants(calc.get_model("llama-2-7b"))
    window = variants["Window 4096"]
    assert window.n_kv_heads == variants["GQA (32:8)"].n_kv_heads == 8
    assert calc.kv_bytes_per_token(window) == 131_072
    assert calc.kv_cache_bytes(window, 8192) == 4096 * 131_072
