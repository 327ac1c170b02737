"""The lightning-attention state dtype as a convention: fp32 (the reference, calc's default when a config
names no dtype) or the model's bf16 (vLLM's MambaStateDtypeCalculator.linear_attention_state_dtype)."""
import pytest

import calc
from calc.layers import with_state_convention

MINIMAX = calc.get_model("minimax-m1")
H100 = calc.get_accelerator("h100-sxm")


def test_minimax_state_by_hand():
    # 70 lightning layers x 64 heads x 128 x 128 = 73,400,320 elements per sequence (no conv state)
    assert calc.kv.kv_state_bytes(MINIMAX) == 73_400_320 * 4                           # fp32: 293,601,280 B
    vllm = with_state_convention(MINIMAX, "vllm")
    assert vllm.ssm_state_dtype == "bf16" and calc.kv.kv_state_bytes(vllm) == 73_400_320 * 2
    assert with_state_convention(MINIMAX, "reference") is MINIMAX
    # every consumer follows the model: the batch's cache at B = 4 drops by 4 x 146,800,640 B
    a = calc.memory_budget(MINIMAX, H100, 8192, 4)
    b = calc.memory_budget(vllm, H100, 8192, 4)
    assert a.kv_bytes - b.kv_bytes == 4 * 73_400_320 * 2
    # a decode step reads and writes the state: 2 x 146,800,640 B less per sequence
    s_a = calc.decode_step_time(MINIMAX, H100, 1, 8192)
    s_b = calc.decode_step_time(vllm, H100, 1, 8192)
    assert (s_a.kv_s - s_b.kv_s) * 3.35e12 == pytest.approx(2 * 73_400_320 * 2, rel=1e-9)


def test_other_state_kinds_keep_their_configured_dtype():
    for model_id in ("nemotron-h-56b", "qwen3-next-80b-a3b", "llama-3-8b"):
        m = calc.get_model(model_id)
        assert with_state_convention(m, "vllm") is m


def test_unknown_convention_is_refused():
    with pytest.raises(ValueError, match="'vllm'"):
        with_state_convention(MINIMAX, "bf16")
