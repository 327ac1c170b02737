"""Prefill's LM head: the course charges it for every prompt token (2*N*B*T, the default "all"); serving
engines compute logits only for each prompt's last token ("last": vLLM's logits_indices, SGLang's
LogitsProcessor pruning). Hand counts on Llama-3-8B (V = 128,256, D = 4,096)."""
import pytest

import calc
from calc import planning, sweeps
from calc.operators import step_operators

LLAMA3 = calc.get_model("llama-3-8b")
H100 = calc.get_accelerator("h100-sxm")
V_D = 128_256 * 4_096          # 525,336,576 head parameters


def test_default_is_the_courses_two_n_t():
    # The course's prefill: 2 x 8,030,261,248 x 8,192 matmul FLOPs + causal attention
    # 32 layers x 2 x 32 heads x 256 x 8,192 x 8,193 / 2.
    attn = 32 * 2 * 32 * 256 * (8192 * 8193 // 2)
    p = calc.prefill_time(LLAMA3, H100, 8192, embedding="table")
    assert p.flops == pytest.approx(2 * 8_030_261_248 * 8192 + attn, rel=1e-12)
    assert p == calc.prefill_time(LLAMA3, H100, 8192, embedding="table", logits="all")


def test_last_skips_the_head_for_all_but_one_token_per_prompt():
    # T = 8,192, B = 1: 2 x 525,336,576 x 8,191 = 8,606,063,788,032 FLOPs fewer, 8.70 ms of 989 TFLOP/s.
    attn = 32 * 2 * 32 * 256 * (8192 * 8193 // 2)
    last = calc.prefill_time(LLAMA3, H100, 8192, embedding="table", logits="last")
    assert last.flops == pytest.approx(2 * 8_030_261_248 * 8192 - 2 * V_D * 8191 + attn, rel=1e-12)
    everything = calc.prefill_time(LLAMA3, H100, 8192, embedding="table")
    assert everything.compute_s - last.compute_s == pytest.approx(8_606_063_788_032 / 989e12, rel=1e-9)
    assert last.weights_s == everything.weights_s        # the head's weights are read either way
    # B = 4 prompts of 100 tokens: 4 x 99 head rows skipped
    a = calc.prefill_time(LLAMA3, H100, 100, 4)
    b = calc.prefill_time(LLAMA3, H100, 100, 4, logits="last")
    assert a.flops - b.flops == pytest.approx(2 * V_D * 4 * 99, rel=1e-12)
    # one-token prompt: nothing to skip
    assert calc.prefill_time(LLAMA3, H100, 1, logits="last") == calc.prefill_time(LLAMA3, H100, 1)


def test_ttft_sweeps_and_intensity_follow_the_keyword():
    t = 4096
    last = calc.prefill_time(LLAMA3, H100, t, logits="last")
    assert calc.ttft(LLAMA3, H100, t, queue_s=0.1, logits="last") == pytest.approx(0.1 + last.total_s)
    row = sweeps.ttft_sweep(LLAMA3, H100, [t], logits="last").iloc[0]
    assert row["ttft_s"] == pytest.approx(last.total_s, rel=1e-12)
    pts = sweeps.roofline_points(LLAMA3, H100, 8192, (1,), prompt_len=t, logits="last")
    assert pts.iloc[-1]["step_s"] == pytest.approx(last.total_s, rel=1e-12)
    assert calc.arithmetic_intensity_prefill(LLAMA3, t, logits="last") == pytest.approx(
        last.flops / last.bytes, rel=1e-12)


def test_tensor_parallel_prefill_splits_the_saving():
    # TP = 2: each GPU does half the FLOPs, so half of the 2 x V x D x (T - 1) skipped.
    a = calc.prefill_time(LLAMA3, H100, 2048, tp=2)
    b = calc.prefill_time(LLAMA3, H100, 2048, tp=2, logits="last")
    assert a.flops - b.flops == pytest.approx(V_D * 2047, rel=1e-9)
    traffic = planning.ServingTraffic(1.0, 1.0, 2048, 64, 0.0)
    g_all = planning.plan_grid(LLAMA3, H100, traffic, tps=(1,), pps=(1,), max_batch=4)
    g_last = planning.plan_grid(LLAMA3, H100, traffic, tps=(1,), pps=(1,), max_batch=4, logits="last")
    assert (g_last["ttft_s"] < g_all["ttft_s"]).all()
    assert (g_last["tpot_s"] == g_all["tpot_s"]).all()   # decode: one token, nothing to skip


def test_operator_split_charges_the_head_once_per_prompt():
    ops = step_operators(LLAMA3, H100, "prefill", 2, 512, logits="last").set_index("operator")
    assert ops.loc["lm_head", "flops"] == pytest.approx(2 * V_D * 2, rel=1e-12)   # one row per prompt
    full = step_operators(LLAMA3, H100, "prefill", 2, 512).set_index("operator")
    assert full.loc["lm_head", "flops"] == pytest.approx(2 * V_D * 2 * 512, rel=1e-12)


def test_unknown_mode_is_refused():
    for call in (lambda: calc.prefill_time(LLAMA3, H100, 10, logits="first"),
                 lambda: sweeps.ttft_sweep(LLAMA3, H100, [10], logits="every"),
                 lambda: calc.ttft(LLAMA3, H100, 10, logits=None)):
        with pytest.raises(ValueError, match="'last'"):
            call()


def test_napkin_table_ttft_row_follows_the_keyword():
    def ttft_row(**kw):
        t = calc.napkin_table(LLAMA3, H100, 8192, **kw).set_index("quantity")
        return t.loc["prefill (TTFT, no queue)"]
    assert ttft_row()["value"] == pytest.approx(calc.prefill_time(LLAMA3, H100, 8192).total_s)
    last = ttft_row(logits="last")
    assert last["value"] == pytest.approx(calc.prefill_time(LLAMA3, H100, 8192, logits="last").total_s)
    assert "last token" in last["note"]
