"""The step, operator by operator: per-operator FLOPs and bytes add up to the step's totals."""
import pytest

import calc
from calc.operators import OPERATORS, step_operators

H100 = calc.get_accelerator("h100-sxm")
LLAMA = calc.get_model("llama-3-8b")


@pytest.mark.parametrize("model_id, weight_dtype", [("llama-3-8b", "bf16"), ("mixtral-8x7b", "bf16"),
                                                    ("deepseek-v3", "fp8"), ("gemma-2-9b", "q4_K_M"),
                                                    ("gpt2", "fp16"), ("qwen2.5-7b", "int8")])
@pytest.mark.parametrize("embedding", ["gather", "table"])
def test_operators_add_up_to_the_step(model_id, weight_dtype, embedding):
    m = calc.get_model(model_id)
    for batch, ctx in ((1, 8192), (64, 2048)):
        dec = step_operators(m, H100, "decode", batch, ctx, weight_dtype, "bf16", embedding)
        step = calc.decode_step_time(m, H100, batch, ctx, weight_dtype, "bf16", embedding=embedding)
        assert list(dec["operator"]) == list(OPERATORS)
        assert dec["bytes"].sum() == pytest.approx(step.bytes, rel=1e-9)
        # The decode napkin leaves attention FLOPs out; the operators count them (attention over S keys).
        attn = calc.attention_flops(m, 1, batch, past_len=ctx - 1)
        assert dec["flops"].sum() == pytest.approx(step.flops + attn, rel=1e-9)
        assert (dec[["params", "flops", "bytes", "time_s"]] >= 0).all().all()
        pre = step_operators(m, H100, "prefill", batch, ctx, weight_dtype, "bf16", embedding)
        step = calc.prefill_time(m, H100, ctx, batch, weight_dtype, "bf16", embedding=embedding)
        assert pre["bytes"].sum() == pytest.approx(step.bytes, rel=1e-9)
        assert pre["flops"].sum() == pytest.approx(step.flops, rel=1e-9)     # prefill counts attention


def test_llama_3_8b_decode_by_hand():
    # L = 32, D = 4096, N = 32, K = 8, H = 128, V = 128,256, bf16, B = 1, S = 8,192.
    df = step_operators(LLAMA, H100, "decode", 1, 8192).set_index("operator")
    # QKV: 32 x 4096 x (32 + 2 x 8) x 128 = 805,306,368 parameters; output: 32 x 4096 x 4096 = 536,870,912
    assert df.loc["qkv_projection", "params"] == pytest.approx(805_306_368)
    assert df.loc["output_projection", "params"] == pytest.approx(536_870_912)
    assert df.loc["qkv_projection", "bytes"] == pytest.approx(2 * 805_306_368)
    # LM head 128,256 x 4,096 = 525,336,576 parameters; the lookup gathers one row of 4,096 (8,192 B).
    assert df.loc["lm_head", "flops"] == pytest.approx(2 * 525_336_576)
    assert df.loc["embedding", "bytes"] == pytest.approx(8192) and df.loc["embedding", "flops"] == 0
    # Attention reads the cache, 2 x 32 x 8 x 128 x 2 B x 8,192 = 1,073,741,824 B, and does
    # 32 layers x 32 heads x 2 x (128 + 128) x 8,192 keys = 4,294,967,296 FLOP: intensity N/K = 4.
    assert df.loc["attention", "bytes"] == pytest.approx(1_073_741_824)
    assert df.loc["attention", "flops"] == pytest.approx(4_294_967_296)
    assert df.loc["attention", "intensity_flop_per_byte"] == pytest.approx(4.0)
    # A matmul at B = 1 does 2 FLOPs per 2-byte weight: intensity 1, far left of the ridge (295).
    assert df.loc["mlp", "intensity_flop_per_byte"] == pytest.approx(1.0)
    assert (df["bound"] == "memory").all()
    assert df["share_of_time"].sum() == pytest.approx(1.0)


def test_long_prefill_matmuls_are_compute_bound_and_bad_phase_is_refused():
    df = step_operators(LLAMA, H100, "prefill", 1, 8192).set_index("operator")
    # 8,192 tokens x 2 FLOPs per 2-byte weight: intensity 8,192 > 295
    assert df.loc["mlp", "intensity_flop_per_byte"] == pytest.approx(8192)
    assert df.loc["mlp", "bound"] == "compute"
    with pytest.raises(ValueError, match="phase"):
        step_operators(LLAMA, H100, "verify", 1, 8192)
    with pytest.raises(ValueError, match="batch"):
        step_operators(LLAMA, H100, "decode", 0, 8192)


def test_operator_estimate_is_its_bound_over_the_utilisation():
    from calc.efficiency import Utilisation
    df = step_operators(LLAMA, H100, "decode", 1, 8192, utilisation=Utilisation(0.5, 0.25))
    # every operator is memory-bound at B = 1 (intensity <= 4, compute/0.25 still below memory/0.5): twice the bound
    assert list(df["estimate_s"]) == pytest.approx(list(2 * df["time_s"]))
