"""Quantized weight bytes against the sizes of published checkpoints, for the formats that otherwise rest on
their block arithmetic alone (int4 with group scales and zeros, FP8 with 128 x 128 block scales).

Oracle: the file sizes the Hugging Face hub lists for each checkpoint (rounded there to three significant
digits, so a sum of two files is known to about 0.2%); the tolerance is 1%. Which tensors stay 16-bit is the
recipe's (calc/quant.py); the comments give the arithmetic.
"""
from __future__ import annotations

import pytest

import calc
from calc.config_json import from_hf_config


def test_awq_int4_g128_matches_the_published_llama31_8b_checkpoint():
    # hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4 (AutoAWQ, 4 bits, group 128, zero point; revision
    # 62c1d842, "Files and versions"): model-00001-of-00002.safetensors 4.68 GB + model-00002 1.05 GB = 5.73 GB.
    # AWQ per linear weight: 4 bits + per group of 128 an fp16 scale and a 4-bit zero = 4 + 20/128 = 4.15625 bits;
    # embeddings, lm_head and norms stay fp16: 6,979,321,856 x 4.15625 / 8 + (2 x 525,336,576 + 266,240) x 2 B
    # = 5,727,854,592 B (-0.04%).
    m = calc.get_model("llama-3.1-8b")
    assert calc.weight_bytes(m, "int4-g128") == pytest.approx(4.68e9 + 1.05e9, rel=0.01)


# Qwen3-4B's shapes (the Qwen3 model card: 36 layers, 32 query and 8 KV heads, tied embeddings; config.json:
# hidden 2,560, FFN 9,728, head_dim 128, V 151,936).
QWEN3_4B = {"model_type": "qwen3", "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
            "tie_word_embeddings": True}


def test_fp8_block_matches_the_published_qwen3_4b_fp8_checkpoint():
    # Qwen/Qwen3-4B-FP8 ("fine-grained fp8 quantization with block size of 128", model card; "Files and
    # versions"): model-00001-of-00002.safetensors 4.41 GB + model-00002-of-00002.safetensors 778 MB = 5.188 GB.
    # By hand: 36 x (2 x 2,560 x 4,096 + 2 x 2,560 x 1,024 + 3 x 2,560 x 9,728) = 3,633,315,840 fp8 weights, one
    # fp32 scale per 128 x 128 block (+ 887,040 B); the 151,936 x 2,560 embedding in bf16 777,912,320 B; norms.
    # The file stores that tied matrix twice (embed_tokens and lm_head, the second shard's 778 MB is exactly
    # 151,936 x 2,560 x 2 B); engines load it once (vLLM's Qwen3 load_weights skips lm_head.weight when
    # tie_word_embeddings), so the memory calc reports is the file less one copy.
    m = from_hf_config(QWEN3_4B, name="Qwen3-4B")
    assert m.n_params == 4_022_468_096                                  # Qwen: 4.0B
    head_copy = 151_936 * 2_560 * 2
    assert head_copy == pytest.approx(778e6, rel=0.001)
    assert calc.weight_bytes(m, "fp8-block") + head_copy == pytest.approx(4.41e9 + 778e6, rel=0.01)
    # the recipe's own arithmetic: fp8 weights + block scales + the 16-bit embedding and norms
    assert calc.weight_bytes(m, "fp8-block") == pytest.approx(
        3_633_315_840 * (1 + 4 / 128**2) + 777_912_320 + (2 * 36 + 1) * 2_560 * 2, rel=1e-4)
