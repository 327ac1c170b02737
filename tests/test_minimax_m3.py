"""MiniMax-M3: its config.json read into full and block-sparse (MSA) layers, its parameter count, KV cache, decode
read and prefill attention FLOPs, checked against hand counts written out here.

Oracles: the shapes of MiniMaxAI/MiniMax-M3's config.json (calc/data/hf_configs/minimax-m3.json, a verbatim copy
from ai-dynamo/aiconfigurator @095f58a5) read with SGLang's model code (sgl-project/sglang
python/sglang/srt/models/minimax_m3.py @01b5f572) and cache (MiniMaxSparseKVPool: K/V of every layer in the cache
dtype, one indexer key head in the model's bf16 per sparse layer), and MiniMax's MSA kernels (MiniMax-AI/MSA
@32877839: 16 blocks of 128 per query, the local block the last of them). Each figure below is computed by hand in
the comments, not by calc.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import calc
from calc.config_json import from_hf_config
from calc.layers import decode_read_bytes, layer_specs
from calc.models import get_model, hf_config, model_preset_id
from calc.roofline import attention_flops, block_sparse_attended_keys

M3 = "minimax-m3"

# -- parameter count by hand ---------------------------------------------------------------------------------------
# D = 6144, N = 64, K = 4, H = 128, V = 200,064; experts E = 128 of F = 3,072, top-4, one shared of 3,072; dense 12,288.
# attention per layer: q 6144 x 8192 + k, v 2 x 6144 x 512 + o 8192 x 6144 = 106,954,752, + q_norm, k_norm 2 x 128
#   = 106,955,008
# indexer per sparse layer: index_q 6144 x 512 + index_k 6144 x 128 = 3,932,160, + two norms of 128 = 3,932,416
# dense MLP: 3 x 6144 x 12288 = 226,492,416
# one expert: 3 x 6144 x 3072 = 56,623,104; 128 of them 7,247,757,312; shared 56,623,104; router 6144 x 128 = 786,432;
#   correction bias 128: MoE 7,305,166,976 (active: 5 x 56,623,104 + 786,432 = 283,901,952)
# norms per layer 2 x 6144 = 12,288
# layers 0-2: 106,955,008 + 226,492,416 + 12,288 = 333,459,712, x 3 = 1,000,379,136
# layers 3-59: 106,955,008 + 3,932,416 + 7,305,166,976 + 12,288 = 7,416,066,688, x 57 = 422,715,801,216
# embedding + head 2 x 200,064 x 6,144 = 2,458,386,432; final norm 6,144
TOTAL = 1_000_379_136 + 422_715_801_216 + 2_458_386_432 + 6_144                      # 426,174,572,928
ACTIVE = 1_000_379_136 + 57 * (106_955_008 + 3_932_416 + 283_901_952 + 12_288) + 2_458_386_432 + 6_144


def test_parameter_count_by_hand():
    assert TOTAL == 426_174_572_928 and ACTIVE == 25_962_466_560
    m = get_model(M3)
    assert (m.n_params, m.n_active_params) == (TOTAL, ACTIVE)
    assert (m.n_mtp_layers, m.n_mtp_params) == (0, 0)  # num_mtp_modules 7: shapes not in the config, not counted


def _nvidia_config() -> dict:
    """nvidia/MiniMax-M3-NVFP4's config.json as the shipped MiniMaxAI copy's text shapes under text_config (the keys it
    lacks and has: no first_k_dense_replace, moe_intermediate_size or num_nextn_predict_layers, num_mtp_modules 1,
    model_type minimax_m3_vl outside), with a ModelOpt MIXED_PRECISION quantization_config."""
    text = copy.deepcopy(hf_config(M3))
    for key in ("first_k_dense_replace", "moe_intermediate_size", "num_nextn_predict_layers", "model_type",
                "torch_dtype", "architectures"):
        text.pop(key)
    text["num_mtp_modules"] = 1
    layers = {"language_model.model.layers.0.self_attn.q_proj": {"quant_algo": "MXFP8"},
              "language_model.model.layers.3.block_sparse_moe.experts.0.w1": {"quant_algo": "NVFP4", "group_size": 16},
              "language_model.model.layers.3.block_sparse_moe.shared_experts.up_proj": {"quant_algo": "MXFP8"}}
    return {"architectures": ["MiniMaxM3SparseForConditionalGeneration"], "model_type": "minimax_m3_vl",
            "text_config": text, "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1280},
            "quantization_config": {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
                                    "quantized_layers": layers}}


def test_the_nvidia_copy_counts_the_same_once_its_per_layer_moe_list_is_read():
    # its text_config has no first_k_dense_replace: the per-layer moe_layer_freq list alone makes layers 0-2 dense
    # (before, all 60 layers were read as MoE: 447.2B); the vision tower is not counted (text_config only)
    m = from_hf_config(_nvidia_config(), name="MiniMax-M3")
    assert (m.n_params, m.n_active_params) == (TOTAL, ACTIVE)
    assert m.ffn_layer_types == get_model(M3).ffn_layer_types and m.d_ff_dense == 12_288
    assert m.checkpoint_format == "nvfp4-fp8"  # NVFP4 routed experts, MXFP8 elsewhere


def test_layers_are_three_full_then_fifty_seven_sparse():
    m = get_model(M3)
    assert m.layer_types == ("full",) * 3 + ("sparse",) * 57
    assert (m.index_n_heads, m.index_head_dim, m.index_topk, m.index_block_size, m.index_key_dtype) == (
        4, 128, 16, 128, "bf16")
    specs = layer_specs(m)
    assert {s.kind for s in specs[:3]} == {"full"} and {s.kind for s in specs[3:]} == {"sparse"}
    assert specs[0].index_bytes_per_token == 0.0 and specs[3].index_bytes_per_token == 256.0
    assert specs[3].label == "sparse (top-16 x 128)"


# -- KV cache by hand ----------------------------------------------------------------------------------------------
# per token and layer: K and V of 4 heads of 128 = 1,024 elements, 2,048 B in bf16 (1,024 B in fp8);
# the 57 sparse layers add one indexer key of 128 in bf16 = 256 B whatever the KV dtype.
# bf16: 60 x 2,048 + 57 x 256 = 122,880 + 14,592 = 137,472 B per token; fp8: 61,440 + 14,592 = 76,032 B.
# 8K: 137,472 x 8,192 = 1,126,170,624 B; 128K: 137,472 x 131,072 = 18,018,729,984 B.

def test_kv_bytes_per_token_and_at_two_contexts():
    m = get_model(M3)
    assert calc.kv_bytes_per_token(m) == 137_472
    assert calc.kv_bytes_per_token(m, "fp8") == 76_032
    assert calc.kv_cache_bytes(m, 8192) == 1_126_170_624
    assert calc.kv_cache_bytes(m, 131_072) == 18_018_729_984
    assert calc.kv_cache_bytes(m, 131_072, kv_dtype="fp8") == 76_032 * 131_072


# Decode read of one sequence at S: the 3 full layers read all S tokens' K/V; a sparse layer every indexer key (S x
# 256 B) and the K/V of 15 full blocks plus its own block's ((S - 1) mod 128) + 1 tokens, at most S.
# S = 8,192: 3 x 2,048 x 8,192 = 50,331,648; sparse 57 x (2,048 x (1,920 + 128) + 256 x 8,192)
#   = 57 x (4,194,304 + 2,097,152) = 358,612,992; sum 408,944,640.
# S = 131,072: 3 x 2,048 x 131,072 = 805,306,368; 57 x (4,194,304 + 33,554,432) = 2,151,677,952; sum 2,956,984,320.
# S = 2,049 (17 blocks, the last holding 1 token): 3 x 2,048 x 2,049 = 12,589,056; 57 x (2,048 x 1,921 + 256 x 2,049)
#   = 57 x 4,458,752 = 254,148,864; sum 266,737,920.
# S = 2,048 (16 blocks): every token read, as the cache: 137,472 x 2,048 = 281,542,656.

@pytest.mark.parametrize("context, read", [(8192, 408_944_640), (131_072, 2_956_984_320), (2049, 266_737_920),
                                           (2048, 281_542_656), (100, 13_747_200)])
def test_decode_reads_the_selected_blocks_and_every_indexer_key(context, read):
    assert decode_read_bytes(get_model(M3), context) == read


def test_block_sparse_keys_against_a_loop():
    # query at position p attends to p keys up to 16 x 128, then 15 x 128 + ((p - 1) mod 128) + 1
    def loop(t, past):
        return sum(p if p <= 2048 else 1920 + (p - 1) % 128 + 1 for p in range(past + 1, past + t + 1))
    for t, past in [(1, 0), (2048, 0), (2049, 0), (4096, 0), (5000, 300), (1, 8191), (130, 2047)]:
        assert block_sparse_attended_keys(t, 16, 128, past) == loop(t, past)
    # by hand, n = 4,096: 2,048 x 2,049 / 2 + 2,048 x 1,920 + 16 x 128 x 129 / 2 = 2,098,176 + 3,932,160 + 132,096
    assert block_sparse_attended_keys(4096, 16, 128) == 6_162_432
    assert np.array_equal(block_sparse_attended_keys(np.array([2048.0, 4096.0]), 16, 128),
                          np.array([2_098_176.0, 6_162_432.0]))


def test_prefill_attention_flops_by_hand():
    # T = 1,024 < 2,048: every layer attends causally to all keys, 1,024 x 1,025 / 2 = 524,800 per layer;
    # 2 x N x (H + H) = 2 x 64 x 256 = 32,768 FLOPs per key, 60 layers: 1,031,798,784,000; the 57 indexers score every
    # key with 4 heads of 128: 2 x 4 x 128 = 1,024 per key, 57 x 524,800 x 1,024 = 30,631,526,400.
    assert attention_flops(get_model(M3), 1024) == 1_031_798_784_000 + 30_631_526_400
    # T = 4,096: full layers 4,096 x 4,097 / 2 = 8,390,656 keys; sparse layers 6,162,432 (above)
    expected = 32_768 * (3 * 8_390_656 + 57 * 6_162_432) + 1_024 * 57 * 8_390_656
    assert attention_flops(get_model(M3), 4096) == expected


@pytest.mark.parametrize("name", ["MiniMaxAI/MiniMax-M3-MXFP8", "nvidia/MiniMax-M3-NVFP4", "amd/MiniMax-M3-MXFP4",
                                  "MiniMaxAI/MiniMax-M3", "MiniMax-M3"])
def test_checkpoint_names_resolve(name):
    assert model_preset_id(name) == M3


def test_checkpoint_tags_and_format():
    assert get_model(M3).checkpoint_format is None  # bf16: the base config has no quantization_config
    assert calc.models.checkpoint_tag("MiniMaxAI/MiniMax-M3-MXFP8") == "fp8"
    assert calc.models.checkpoint_tag("amd/MiniMax-M3-MXFP4") == "mxfp4"
    assert model_preset_id("Inferact/MiniMax-M3-EAGLE3") is None  # the EAGLE3 draft is another model


def test_sparse_config_values_calc_does_not_model_are_refused():
    cfg = copy.deepcopy(hf_config(M3))
    cfg["sparse_attention_config"]["sparse_init_block"] = 1
    with pytest.raises(ValueError, match="sparse_init_block"):
        from_hf_config(cfg)
    cfg = copy.deepcopy(hf_config(M3))
    cfg["sparse_attention_config"]["sparse_disable_index_value"][5] = 0
    with pytest.raises(ValueError, match="sparse_disable_index_value"):
        from_hf_config(cfg)
    cfg = copy.deepcopy(hf_config(M3))
    cfg["sparse_attention_config"]["use_sparse_attention"] = False  # then every layer is full attention
    m = from_hf_config(cfg)
    assert m.layer_types is None and m.index_topk is None
    assert m.n_params == TOTAL - 57 * 3_932_416


def test_serving_estimate_is_finite():
    r = calc.serving.serving_estimate(M3, "b200", 1024, 1024, concurrency=16, tp=8, ep=8)
    for v in (r.ttft.estimate_s, r.tpot.estimate_s, r.e2e_s, r.output_tokens_per_s_per_gpu):
        assert math.isfinite(v) and v > 0
    # a bf16 checkpoint: no format notice; only the one that its sparse attention layers (an indexer, as
    # DeepSeek-V3.2's DSA) are a kind the calibration set barely has (calc.serving_params.architecture_notice)
    assert r.decode_batch == 16 and len(r.notices) == 1 and "sparse attention with an indexer" in r.notices[0]
    named = calc.serving.serving_estimate("MiniMaxAI/MiniMax-M3-MXFP8", "b200", 1024, 1024, concurrency=16, tp=8, ep=8)
    assert any("fp8" in n for n in named.notices) and named.tpot.estimate_s < r.tpot.estimate_s
