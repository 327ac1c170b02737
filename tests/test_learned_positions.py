"""GPT-2's learned position table (wpe, n_positions x D) is a lookup like the token embedding: under
embedding="gather" a decode step reads the B rows at the current positions and prefill gathers T rows with
no matmul; under "table" (the course's napkin) every parameter is read and multiplied. By hand on GPT-2:
V = 50,257, D = 768, P = 1,024, tied (wte is the head), 124,439,808 parameters, bf16."""
import pytest

import calc
from calc.operators import step_operators

GPT2 = calc.get_model("gpt2")
H100 = calc.get_accelerator("h100-sxm")
N = 124_439_808
WPE = 1024 * 768                     # 786,432 parameters


def test_gpt2_config_has_its_position_table():
    assert GPT2.learned_positions == 1024
    assert calc.memory.input_embedding_params(GPT2) == WPE          # tied: the token table is the head
    assert calc.from_hf_config(calc.models.hf_config("gpt2")).learned_positions == 1024
    # rotary models have no table
    assert calc.get_model("llama-3-8b").learned_positions is None


def test_decode_reads_b_rows_of_wpe():
    # B = 1: every weight but 1,023 rows of wpe: (124,439,808 - 1,023 x 768) x 2 = 247,308,288 B
    assert calc.weight_bytes_read(GPT2, 1) == (N - 1023 * 768) * 2 == 247_308_288
    # B = 16: 16 rows read
    assert calc.weight_bytes_read(GPT2, 16) == (N - (1024 - 16) * 768) * 2
    # the napkin: the whole table, 248,879,616 B
    assert calc.weight_bytes_read(GPT2, 1, embedding="table") == N * 2 == 248_879_616
    step = calc.decode_step_time(GPT2, H100, 1, 512)
    napkin = calc.decode_step_time(GPT2, H100, 1, 512, embedding="table")
    assert napkin.weights_s - step.weights_s == pytest.approx(1023 * 768 * 2 / 3.35e12, rel=1e-9)
    # no matmul with the lookup: 2 x (124,439,808 - 786,432) = 247,306,752 FLOPs per token
    assert step.flops == 2 * (N - WPE) == 247_306_752
    assert napkin.flops == 2 * N


def test_prefill_gathers_t_rows_without_a_matmul():
    # T = 512: 512 of 1,024 rows read, (N - 512 x 768) x 2 B; matmul FLOPs 2 x (N - 786,432) x 512
    t = 512
    attn = calc.roofline.attention_flops(GPT2, t)
    p = calc.prefill_time(GPT2, H100, t)
    assert p.flops == pytest.approx(2 * (N - WPE) * t + attn, rel=1e-12)
    assert calc.weight_bytes_read(GPT2, t) == (N - 512 * 768) * 2
    full = calc.prefill_time(GPT2, H100, t, embedding="table")
    assert full.flops == pytest.approx(2 * N * t + attn, rel=1e-12)
    # at T >= 1,024 every row of wpe is read
    assert calc.weight_bytes_read(GPT2, 1024) == N * 2


def test_operator_split_puts_wpe_in_the_lookup_row():
    ops = step_operators(GPT2, H100, "decode", 4, 512).set_index("operator")
    assert ops.loc["embedding", "params"] == 4 * 768                   # four rows of wpe
    assert ops.loc["embedding", "flops"] == 0
    assert ops.loc["lm_head", "params"] == 50_257 * 768                # wte, read once as the head
    assert ops["bytes"].sum() - ops.loc["attention", "bytes"] == pytest.approx(calc.weight_bytes_read(GPT2, 4))
    table = step_operators(GPT2, H100, "decode", 4, 512, embedding="table").set_index("operator")
    assert table.loc["embedding", "params"] == WPE


def test_block_format_gathers_at_the_embedding_bits():
    # int8-g128 keeps the embeddings (wte + wpe) in 16-bit: gathering skips 1,023 rows x 768 x 2 B
    whole = calc.weight_bytes_read(GPT2, 1, "int8-g128", embedding="table")
    assert whole - calc.weight_bytes_read(GPT2, 1, "int8-g128") == pytest.approx(1023 * 768 * 2, rel=1e-12)
