"""Quantization formats as stored: block bits from the formats' own structs, weight bytes against
published checkpoint sizes, what each recipe leaves in 16-bit."""
import json
from pathlib import Path

import pytest

import calc
from calc import quant

DATA = Path(__file__).resolve().parent / "data"
LLAMA3 = calc.get_model("llama-3-8b")
H100 = calc.get_accelerator("h100-sxm")


def gpt_oss(n_layers=24, n_experts=32):
    """gpt-oss-20b from its config.json (openai/gpt-oss-20b, transformers 4.55); the 120b config differs
    only in num_hidden_layers = 36, num_local_experts = 128 and the length of layer_types."""
    cfg = json.loads((DATA / "gpt-oss-20b.json").read_text())
    cfg.update(num_hidden_layers=n_layers, num_local_experts=n_experts,
               layer_types=["sliding_attention", "full_attention"] * (n_layers // 2))
    return calc.from_hf_config(cfg)


@pytest.mark.parametrize("name,bits", [
    ("q8_0", 34 * 8 / 32),                 # ggml block_q8_0: fp16 d + int8 qs[32] = 34 bytes per 32
    ("q4_0", 18 * 8 / 32),                 # block_q4_0: fp16 d + uint8 qs[16] = 18 bytes per 32
    ("q4_K_M", (2 + 2 + 12 + 128) * 8 / 256),  # block_q4_K: fp16 d, dmin, scales[12], qs[128] per 256
    ("mxfp4", (16 + 1) * 8 / 32),          # OCP MX: 32 e2m1 (16 bytes) + one e8m0 scale byte
    ("nvfp4", (8 + 1) * 8 / 16),           # 16 e2m1 (8 bytes) + one e4m3 scale byte
    ("int4-g128", 4 + (16 + 4) / 128),     # GPTQ/AWQ: fp16 scale + 4-bit zero per 128 weights
    ("int4-g64", 4 + (16 + 4) / 64),
    ("fp8-block", 8 + 32 / (128 * 128)),   # DeepSeek-V3: one fp32 scale per 128 x 128 tile
])
def test_bits_per_weight_come_from_the_block_structs(name, bits):
    assert quant.bits_per_element(name) == pytest.approx(bits, rel=1e-12)
    assert calc.dtype_bytes(name) == pytest.approx(bits / 8, rel=1e-12)


def test_q6_k_block_is_210_bytes():
    # block_q6_K: ql[128] + qh[64] + int8 scales[16] + fp16 d = 210 bytes per 256 weights
    assert quant.Q6_K_BITS == pytest.approx(210 * 8 / 256)


def test_gpt_oss_mxfp4_matches_the_checkpoint():
    # openai/gpt-oss-20b model.safetensors.index.json: "total_size": 13761264768 (tensor bytes).
    # By hand: experts 24 x 32 x (2880 x 5760 + 2880 x 2880) = 19,110,297,600 weights x 4.25 / 8
    # = 10,152,345,600 B; everything else bf16: attention (with biases) 1,274.0 MB, embedding and
    # head 2 x 201,088 x 2,880 x 2 = 2,316.5 MB, router 4.4 MB, norms 0.3 MB. The config-derived count
    # leaves out the expert biases, router bias and sinks (13.3 MB, 0.1%).
    m = gpt_oss()
    assert calc.weight_bytes(m, "mxfp4") == pytest.approx(13_761_264_768, rel=0.01)
    groups = quant.weight_bytes_by_group(m, "mxfp4")
    assert groups["experts"] + groups["experts_down"] == pytest.approx(10_152_345_600, rel=1e-9)
    # openai/gpt-oss-120b: tensor bytes 65,248,815,744 (15 shards, 65,248,893,184 bytes with headers).
    assert calc.weight_bytes(gpt_oss(36, 128), "mxfp4") == pytest.approx(65_248_815_744, rel=0.01)


def test_gpt_oss_mxfp4_keeps_attention_router_and_embeddings_in_bf16():
    m = gpt_oss()
    bits = quant.group_bits(m, "mxfp4")
    assert bits["experts"] == bits["experts_down"] == 4.25
    assert {bits[g] for g in ("embedding", "head", "linear", "attention_v", "router", "norms")} == {16.0}
    # a dense model in mxfp4 quantizes its linear layers, not its embeddings
    dense = quant.group_bits(LLAMA3, "mxfp4")
    assert dense["linear"] == 4.25 and dense["embedding"] == dense["head"] == 16.0


def test_llama3_gguf_sizes_match_the_published_files():
    # bartowski/Meta-Llama-3-8B-Instruct-GGUF README: Q8_0 8.54GB, Q4_K_M 4.92GB; a Q8_0 file measured
    # at 8,540,770,880 bytes in a public llama.cpp tokenizer note. The files hold ~8 MB of metadata and
    # tokenizer on top of the tensors.
    # Q8_0 by hand: (8,030,261,248 - 266,240 norm weights) x 34/32 + 266,240 x 4 (f32) = 8,532,934,656 B.
    assert calc.weight_bytes(LLAMA3, "q8_0") == pytest.approx(8_532_934_656, rel=1e-6)
    assert calc.weight_bytes(LLAMA3, "q8_0") == pytest.approx(8_540_770_880, rel=0.01)
    # Q4_K_M: token_embd q4_K, output q6_K, attn_v and ffn_down q6_K in 16 of 32 layers (use_more_bits),
    # the rest q4_K: 295.5 + 430.9 + 4,185.4 MB + 1.1 MB of f32 norms = 4,912.9 MB.
    assert calc.weight_bytes(LLAMA3, "q4_K_M") == pytest.approx(4.92e9, rel=0.01)
    assert calc.weight_bytes(LLAMA3, "q4_K_M") == pytest.approx(4_912_898_048, rel=1e-6)


def test_plain_dtypes_keep_the_course_convention():
    for name, b in (("bf16", 2), ("int8", 1), ("int4", 0.5), ("fp8", 1)):
        assert calc.weight_bytes(LLAMA3, name) == LLAMA3.n_params * b


def test_recipes_leave_embeddings_and_head_in_16_bit():
    # int4-g128 (GPTQ/AWQ): 6,979,321,856 linear weights x 4.15625 / 8 + embedding and head
    # 2 x 525,336,576 x 2 B + 266,240 norms x 2 B = 5,727,854,592 B (bits per parameter 5.71, not 4.16).
    assert calc.weight_bytes(LLAMA3, "int4-g128") == pytest.approx(5_727_854_592, rel=1e-6)
    t = quant.format_table(LLAMA3).set_index("format")
    assert t.loc["int4-g128", "bits_per_param"] == pytest.approx(5_727_854_592 * 8 / 8_030_261_248)
    assert t.loc["bf16", "bits_per_param"] == 16.0
    assert t.loc["nvfp4", "bits_per_quantized_weight"] == 4.5 and t.loc["nvfp4", "bits_per_param"] > 5.9


def test_moe_decode_reads_the_touched_experts_at_their_own_bits():
    m = gpt_oss()
    g = quant.weight_bytes_by_group(m, "mxfp4")
    routed = g["experts"] + g["experts_down"]
    total = sum(g.values())
    # one token routes to 4 of 32 experts and gathers one embedding row (2,880 x 2 B)
    expected = total - routed * (1 - 4 / 32) - g["embedding"] + 2880 * 2
    assert calc.weight_bytes_read(m, 1, "mxfp4") == pytest.approx(expected, rel=1e-9)
    # and a large batch reads every expert
    assert calc.weight_bytes_read(m, 100_000, "mxfp4", embedding="table") == pytest.approx(total, rel=1e-9)


def test_compute_dtype_of_each_format():
    assert H100.compute_flops("fp8-block") == 1979e12       # fp8 tensor cores
    assert H100.compute_flops("q4_K_M") == 989e12           # weight-only: dequantized to bf16
    assert H100.compute_flops("mxfp4") == 989e12


def test_kv_cache_in_a_block_format():
    # llama.cpp's q8_0 cache: 131,072 B of bf16 per token x 8.5 / 16 = 69,632 B
    assert calc.kv_bytes_per_token(LLAMA3, "q8_0") == 69_632


def test_unknown_format_names_the_valid_ones():
    with pytest.raises(ValueError, match="q4_K_M"):
        calc.weight_bytes(LLAMA3, "q5_banana")
    with pytest.raises(ValueError, match="weight_dtype"):
        calc.decode_step_time(LLAMA3, H100, 1, 1024, "int4-g100")


def test_the_public_api_takes_models_accelerators_and_dtypes_by_the_names_engines_write():
    # Llama-3.1-8B: 8,030,261,248 parameters x 2 bytes = 16.06 GB in bf16; its cache 32 layers x 8 KV heads x 128 x
    # 2 (K and V) = 65,536 elements per token, 131,072 bytes in bf16, 65,536 in fp8. torch's "bfloat16", the e4m3 name
    # of fp8 and AWQ (4-bit integers per group of 128, calc's "int4-g128") give calc's own names' numbers
    m = calc.get_model("llama-3.1-8b")
    h100 = calc.get_accelerator("h100-sxm")
    assert calc.weight_bytes(m, "bfloat16") == calc.weight_bytes(m, "bf16") == pytest.approx(2 * 8_030_261_248, rel=1e-3)
    assert calc.kv_bytes_per_token(m, kv_dtype="fp8_e4m3") == calc.kv_bytes_per_token(m, "fp8") == 65_536
    assert calc.kv_bytes_per_token(m, "bfloat16") == 131_072
    assert calc.weight_bytes(m, weight_dtype="AWQ") == calc.weight_bytes(m, "int4-g128") < calc.weight_bytes(m, "fp8")
    assert calc.critical_batch(h100, "FP8") == calc.critical_batch(h100, "fp8") != calc.critical_batch(h100, "bf16")
    step = calc.decode_step_time(m, h100, 8, 1024, "bfloat16", kv_dtype="fp8_e5m2")
    assert step.total_s == calc.decode_step_time(m, h100, 8, 1024, "bf16", "fp8").total_s
    assert calc.max_batch(m, h100, 4096, weight_dtype="W8A8") == calc.max_batch(m, h100, 4096, "int8")
    # the model and the accelerator by name too (a hub id, the name nvidia-smi prints), as serving_estimate takes them
    assert calc.weight_bytes("meta-llama/Llama-3.1-8B-Instruct", "bfloat16") == calc.weight_bytes(m, "bf16")
    assert calc.decode_step_time("llama-3.1-8b", "NVIDIA H100 80GB HBM3", 8, 1024, "fp8", "fp8").total_s \
        == calc.decode_step_time(m, h100, 8, 1024, "fp8", "fp8").total_s
    with pytest.raises(ValueError, match="model must be a ModelConfig or a model name .*got int"):
        calc.weight_bytes(3, "bf16")
    with pytest.raises(ValueError, match="unknown accelerator 'tpu9'"):
        calc.critical_batch("tpu9")
    # an unknown name still meets the function's own check, with the valid names; a weight-only format is no cache
    with pytest.raises(ValueError, match="weight_dtype must be one of .*; got 'fp5'"):
        calc.weight_bytes(m, "fp5")
    with pytest.raises(ValueError, match="weight-only format"):
        calc.kv_bytes_per_token(m, "AWQ")
