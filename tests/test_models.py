"""Tests of the model catalogue and of reading Hugging Face config.json files (calc/models.py).

Oracles: the catalogue (calc/data/models.json) and the shipped config.json files
(calc/data/hf_configs/) are transcribed independently from the reference tables; the parameter
counts below are the reference's derived counts (reference data 1.1) or hand calculations written
in the comments; where transformers is installed, its own model classes (built on the meta device)
count the parameters of small configs of every family.
"""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.models import DATA_DIR, ModelConfig, get_model, hf_config, list_models
from calc.config_json import from_hf_config, model_from_json_text
from calc.param_count import count_params
from hf_meta import transformers_param_count

PRESETS = ["llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3.1-8b", "llama-3.1-70b",
           "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "mistral-7b-v0.1", "mixtral-8x7b", "qwen2.5-0.5b",
           "qwen2.5-7b", "qwen3-8b", "gemma-2-9b", "gemma-3-27b", "deepseek-v2", "deepseek-v3", "gpt-3-175b",
           "smollm2-135m", "smollm2-360m", "smollm2-1.7b", "tinyllama-1.1b", "gpt2", "deepseek-v3.2", "minimax-m1",
           "qwen3-next-80b-a3b", "qwen3.5-27b", "kimi-k2", "nemotron-h-56b", "qwen3.5-35b-a3b",
           "jamba-v0.1", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b", "gpt-oss-20b", "qwen3-32b",
           "llama-4-scout", "llama-4-maverick", "mixtral-8x22b", "minimax-m2.5", "qwen3.5-397b-a17b",
           "qwen3.5-122b-a10b", "glm-5", "qwen3-coder-480b-a35b", "deepseek-v4-pro", "deepseek-v4-flash",
           "minimax-m3", "qwen2.5-72b", "qwen2.5-32b", "qwen2.5-14b", "qwen2.5-3b", "qwen2.5-1.5b", "qwen3-14b",
           "qwen3-4b", "qwen3-1.7b", "qwen3-0.6b", "phi-4", "nemotron-3-nano-30b-a3b", "nemotron-3-super-120b-a12b",
           "nemotron-3-ultra-550b-a55b", "gemma-4-26b-a4b", "glm-4.5", "glm-4.5-air", "glm-4.7"]


def llama_count(V, D, L, N, K, H, F, tied):
    """Reference data 1.1, Llama family: V*D + L*(D*N*H + 2*D*K*H + N*H*D + 3*D*F + 2*D) + D (+ V*D)."""
    return V * D + L * (D * N * H + 2 * D * K * H + N * H * D + 3 * D * F + 2 * D) + D + (0 if tied else V * D)


# -- catalogue -------------------------------------------------------------------------------------

def test_catalogue_has_every_preset_and_a_config_file_for_each():
    assert list_models() == PRESETS
    files = sorted(p.stem for p in (DATA_DIR / "hf_configs").glob("*.json"))
    assert files == sorted(PRESETS)


@pytest.mark.parametrize("model_id", PRESETS)
def test_preset_round_trips_through_its_hf_config(model_id):
    preset = get_model(model_id)
    parsed = from_hf_config(hf_config(model_id), name=preset.name)
    assert parsed == preset  # every field, the parameter counts included
    assert preset.source  # each entry says where its numbers come from


@pytest.mark.parametrize("model_id", PRESETS)
def test_preset_round_trips_through_json_text(model_id):
    text = (DATA_DIR / "hf_configs" / f"{model_id}.json").read_text()
    assert model_from_json_text(text, name=get_model(model_id).name) == get_model(model_id)


# Reference data 1.1, "total params [D]" and "active params" columns.
REFERENCE_COUNTS = {
    "llama-2-7b": (6_738_415_616, None), "llama-2-13b": (13_015_864_320, None),
    "llama-2-70b": (68_976_648_192, None), "llama-3-8b": (8_030_261_248, None),
    "llama-3.1-8b": (8_030_261_248, None), "llama-3.1-70b": (70_553_706_496, None),
    "llama-3.1-405b": (405_853_388_800, None), "llama-3.2-1b": (1_235_814_400, None),
    "llama-3.2-3b": (3_212_749_824, None), "mistral-7b-v0.1": (7_241_732_096, None),
    "mixtral-8x7b": (46_702_792_704, 12_879_925_248), "qwen2.5-0.5b": (494_032_768, None),
    "qwen2.5-7b": (7_615_616_512, None), "qwen3-8b": (8_190_735_360, None),
    "gemma-2-9b": (9_241_705_984, None), "gemma-3-27b": (27_009_346_304, None),
    "deepseek-v2": (235_741_434_880, 21_375_800_320), "deepseek-v3": (671_026_419_200, 37_552_282_624),
    "smollm2-135m": (134_515_008, None), "smollm2-360m": (361_821_120, None),
    "smollm2-1.7b": (1_711_376_384, None), "tinyllama-1.1b": (1_100_048_384, None), "gpt2": (124_439_808, None),
}


@pytest.mark.parametrize("model_id", sorted(REFERENCE_COUNTS))
def test_counts_from_shapes_match_the_reference(model_id):
    total, active = REFERENCE_COUNTS[model_id]
    assert count_params(hf_config(model_id)) == (total, active or total)
    model = get_model(model_id)
    assert model.n_params == total
    assert model.n_active_params == active
    assert model.active_params == (active or total)


def test_llama_3_8b_count_by_hand():
    # 128256*4096 = 525,336,576 per embedding; per layer 4096^2 + 2*4096*8*128 + 4096^2 + 3*4096*14336 + 2*4096
    # = 16,777,216 + 8,388,608 + 16,777,216 + 176,160,768 + 8,192 = 218,112,000; x32 = 6,979,584,000;
    # + 2 * 525,336,576 + 4096 = 8,030,261,248 (Meta's official count).
    assert llama_count(128256, 4096, 32, 32, 8, 128, 14336, tied=False) == 8_030_261_248
    assert get_model("llama-3-8b").n_params == llama_count(128256, 4096, 32, 32, 8, 128, 14336, tied=False)


def test_gpt2_count_by_hand():
    # wte 50257*768 = 38,597,376; wpe 1024*768 = 786,432; per layer: 2 LN (4*768 = 3,072),
    # c_attn 3*768^2 + 3*768 = 1,771,776, c_proj 768^2 + 768 = 590,592, c_fc 4*768^2 + 4*768 = 2,362,368,
    # c_proj 4*768^2 + 768 = 2,360,064 -> 7,087,872; x12 = 85,054,464; final LN 1,536; tied head.
    assert 38_597_376 + 786_432 + 85_054_464 + 1_536 == 124_439_808
    gpt2 = get_model("gpt2")
    assert gpt2.n_params == 124_439_808 and gpt2.tie_word_embeddings


def test_gpt3_count_documents_biases_and_layernorms():
    # GPT-2 formula with biases and LN: the reference's 12*L*D^2 + V*D + 2048*D (174,588,899,328, no biases
    # or LN) plus per layer 13*D (biases 3D + D + 4D + D, two LayerNorms 4D) and a final LN 2*D.
    D, L = 12288, 96
    reference_no_bias = 12 * L * D * D + 50257 * D + 2048 * D
    assert reference_no_bias == 174_588_899_328
    gpt3 = get_model("gpt-3-175b")
    assert gpt3.n_params == reference_no_bias + 13 * D * L + 2 * D == 174_604_259_328
    assert gpt3.attention == "mha" and gpt3.n_heads == 96 and gpt3.head_dim == 128 and gpt3.d_ff == 4 * D
    assert "_comment" in hf_config("gpt-3-175b")


def _moe_counts(ends: int, layers: int, shared: int, expert: int, experts: int, used: int) -> tuple[int, int]:
    """(total, active) parameters of a stack whose every layer holds ``shared`` parameters (attention, norms,
    router) and ``experts`` SwiGLU experts of ``expert`` parameters, ``used`` of them per token, plus ``ends``
    (embedding, head and final norm): the hand counts below."""
    return ends + layers * (shared + experts * expert), ends + layers * (shared + used * expert)


def test_moe_active_counts_by_hand():
    # Mixtral: attention per layer 4096*4096*2 + 2*4096*8*128 = 41,943,040, 2 norms 8,192, router 4096*8 =
    # 32,768, one expert 3*4096*14336 = 176,160,768; embeddings 2*32000*4096 = 262,144,000, final norm 4,096.
    total, active = _moe_counts(262_144_000 + 4_096, 32, 41_943_040 + 8_192 + 32_768, 176_160_768, 8, 2)
    mixtral = get_model("mixtral-8x7b")
    assert (mixtral.n_params, mixtral.n_active_params) == (total, active) == (46_702_792_704, 12_879_925_248)
    assert mixtral.is_moe and mixtral.n_experts == 8 and mixtral.n_experts_per_token == 2
    assert mixtral.d_ff == 14336  # one expert's width
    v3 = get_model("deepseek-v3")
    assert (v3.n_experts, v3.n_experts_per_token, v3.d_ff) == (256, 8, 2048)
    # The 256 routed experts that are not used cost (256 - 8) * 3 * 7168 * 2048 per MoE layer (58 layers);
    # the e_score_correction_bias (256 per MoE layer) is counted in the total only.
    assert v3.n_params - v3.n_active_params == 58 * ((256 - 8) * 3 * 7168 * 2048 + 256)


def test_llama4_counts_by_hand():
    # Llama 4 text_config (both): D 5120, 48 layers, 40 query / 8 KV heads of 128, V 202,048, untied; the QK norm
    # of Scout (use_qk_norm) is an L2 norm without weights. Per layer:
    #   attention 5120x5120 + 2 x 5120x1024 + 5120x5120 = 62,914,560; norms 2 x 5120 = 10,240
    #   one SwiGLU of 8,192 (an expert, or the shared expert of intermediate_size): 3 x 5120 x 8192 = 125,829,120
    # embedding and head 2 x 202,048 x 5120 = 2,068,971,520; final norm 5,120.
    attn, norms, expert, ends = 62_914_560, 10_240, 125_829_120, 2_068_971_520 + 5_120
    # Scout: every layer MoE, router 5120 x 16 = 81,920, 16 routed experts + 1 shared, top-1 (17 experts counted,
    # 2 used per token).
    scout_total, scout_active = _moe_counts(ends, 48, attn + norms + 81_920, expert, 17, 2)
    scout = get_model("llama-4-scout")
    assert (scout.n_params, scout.n_active_params) == (scout_total, scout_active) == (107_769_861_120, 17_172_894_720)
    # Maverick: interleave_moe_layer_step 2: layers 1, 3, ..., 47 MoE (router 5120 x 128 = 655,360, 128 routed
    # experts + 1 shared, top-1), layers 0, 2, ..., 46 a dense SwiGLU of 16,384 (3 x 5120 x 16384 = 251,658,240).
    dense = attn + norms + 251_658_240
    mav_total = ends + 24 * dense + 24 * (attn + norms + 655_360 + 129 * expert)
    mav_active = ends + 24 * dense + 24 * (attn + norms + 655_360 + 2 * expert)
    mav = get_model("llama-4-maverick")
    assert (mav.n_params, mav.n_active_params) == (mav_total, mav_active) == (400_711_848_960, 17_184_691_200)
    # Model card (meta-llama/Llama-4-Scout-17B-16E-Instruct and -Maverick-17B-128E-Instruct): "17B (Activated)"
    # for both, to the card's whole billions.
    assert round(scout.n_active_params / 1e9) == round(mav.n_active_params / 1e9) == 17
    # the layout calc derives from the same config.json: iRoPE, every 4th layer global (no RoPE), the rest chunked
    for m in (scout, mav):
        assert m.attention_chunk_size == 8192 and m.d_ff == 8192 and m.d_ff_shared == 8192
        assert [i for i, k in enumerate(m.layer_kinds) if k == "full"] == list(range(3, 48, 4))
        assert m.layer_kinds.count("chunked") == 36 and not m.tie_word_embeddings
    assert scout.ffn_kinds == ("moe",) * 48 and (scout.n_experts, scout.n_experts_per_token) == (16, 1)
    assert mav.ffn_kinds == ("dense", "moe") * 24 and (mav.n_experts, mav.n_experts_per_token) == (128, 1)
    assert mav.d_ff_dense == 16384 and scout.d_ff_dense is None
    assert (scout.max_context_len, mav.max_context_len) == (10_485_760, 1_048_576)


def test_mixtral_8x22b_count_by_hand():
    # config.json: D 6144, 56 layers, 48 query / 8 KV heads of 128, 8 experts of F 16,384, top-2, V 32,000, untied.
    # Per layer: attention 2 x 6144^2 + 2 x 6144 x 1024 = 88,080,384; 2 norms 12,288; router 6144 x 8 = 49,152;
    # one expert 3 x 6144 x 16384 = 301,989,888. Embedding and head 2 x 32,000 x 6144 = 393,216,000; final norm 6,144.
    total, active = _moe_counts(393_216_000 + 6_144, 56, 88_080_384 + 12_288 + 49_152, 301_989_888, 8, 2)
    m = get_model("mixtral-8x22b")
    assert (m.n_params, m.n_active_params) == (total, active) == (140_620_634_112, 39_152_031_744)
    # Mistral's announcement (mistral.ai/news/mixtral-8x22b): "39B active parameters out of 141B"
    assert (round(m.n_params / 1e9), round(m.n_active_params / 1e9)) == (141, 39)
    assert m.layer_kinds == ("full",) * 56 and m.sliding_window is None and m.max_context_len == 65536


def test_kv_bytes_of_the_new_presets_by_hand():
    from calc.kv import cache_layer_counts, kv_bytes_per_token, kv_cache_bytes
    # bf16, per token: layers x 2 (K and V) x KV heads x head_dim x 2 bytes.
    # Llama 4 (both): 48 x 2 x 8 x 128 x 2 = 196,608 B; Mixtral-8x22B: 56 x 2 x 8 x 128 x 2 = 229,376 B.
    assert kv_bytes_per_token(get_model("llama-4-scout")) == 48 * 2 * 8 * 128 * 2 == 196_608
    assert kv_bytes_per_token(get_model("llama-4-maverick")) == 196_608
    assert kv_bytes_per_token(get_model("mixtral-8x22b")) == 56 * 2 * 8 * 128 * 2 == 229_376
    # Llama 4's chunked layers (36 of 48, 3 in every 4) hold only their current chunk of C = 8,192 tokens,
    # ((S - 1) mod C) + 1 (calc.layers); the 12 global layers hold all S. One layer: 2 x 8 x 128 x 2 = 4,096 B.
    #   S = 131,072 = 16 C: 12 x 131,072 x 4,096 + 36 x 8,192 x 4,096 = 6,442,450,944 + 1,207,959,552 = 7,650,410,496 B
    #   S = 20,000: chunk tokens (19,999 mod 8,192) + 1 = 3,616;
    #               12 x 20,000 x 4,096 + 36 x 3,616 x 4,096 = 983,040,000 + 533,200,896 = 1,516,240,896 B
    #   S = 1,000 (inside the first chunk): every layer holds S: 1,000 x 196,608 = 196,608,000 B
    for model_id in ("llama-4-scout", "llama-4-maverick"):
        m = get_model(model_id)
        assert cache_layer_counts(m) == (12, 36)
        assert kv_cache_bytes(m, 131_072) == 7_650_410_496
        assert kv_cache_bytes(m, 20_000) == 1_516_240_896
        assert kv_cache_bytes(m, 1_000) == 196_608_000
        # engines without a hybrid allocator reserve every layer at full length: 131,072 x 196,608 B
        assert kv_cache_bytes(m, 131_072, sliding="full") == 131_072 * 196_608 == 25_769_803_776
    # Mixtral-8x22B, no window: 131,072 x 229,376 = 30,064,771,072 B (fp8: half)
    mixtral = get_model("mixtral-8x22b")
    assert kv_cache_bytes(mixtral, 131_072) == 30_064_771_072
    assert kv_cache_bytes(mixtral, 131_072, kv_dtype="fp8") == 30_064_771_072 / 2


@pytest.mark.parametrize("model_id, gpu, kw", [
    ("llama-4-maverick", "h200", dict(tp=8, ep=8, weight_dtype="fp8", engine="trtllm")),
    ("llama-4-scout", "h100-sxm", dict(tp=4, weight_dtype="bf16", engine="vllm")),
    ("mixtral-8x22b", "h100-sxm", dict(tp=8, weight_dtype="fp8", engine="vllm")),
    ("qwen2.5-72b", "h100-sxm", dict(tp=4, weight_dtype="fp8", engine="vllm")),
    ("qwen2.5-32b", "h100-sxm", dict(tp=1, weight_dtype="fp8", engine="vllm")),
    ("qwen3-0.6b", "h100-sxm", dict(tp=1, weight_dtype="bf16", engine="vllm")),
    ("phi-4", "h100-sxm", dict(tp=1, weight_dtype="fp8", engine="vllm")),  # 10 KV heads: TP 1 or 2 only
])
def test_a_serving_estimate_runs_for_the_new_presets(model_id, gpu, kw):
    import math
    from calc.serving import serving_estimate
    e = serving_estimate(model_id, gpu, 1024, 1024, concurrency=64, **kw)
    for t in (e.ttft, e.tpot):
        assert math.isfinite(t.estimate_s) and 0 < t.bound_s <= t.estimate_s
    assert math.isfinite(e.output_tokens_per_s) and e.output_tokens_per_s > 0


# -- the traps of reference data section 6 -----------------------------------------------------------

def test_head_dim_is_read_not_derived():
    assert get_model("gemma-2-9b").head_dim == 256 != 3584 // 16  # 224 would be wrong
    assert get_model("gemma-3-27b").head_dim == 128 != 5376 // 32  # 168 would be wrong
    assert get_model("qwen3-8b").head_dim == 128
    assert get_model("llama-3.2-1b").head_dim == 64
    # Without the key, Gemma 3 takes the transformers default of Gemma3TextConfig (256), not D/N.
    cfg = copy.deepcopy(hf_config("gemma-3-27b"))
    del cfg["text_config"]["head_dim"]
    assert from_hf_config(cfg).head_dim == 256
    # A Llama config without head_dim: D/N.
    cfg = copy.deepcopy(hf_config("llama-2-7b"))
    assert "head_dim" not in cfg and from_hf_config(cfg).head_dim == 4096 // 32


def test_llama_405b_has_8_kv_heads():
    m = get_model("llama-3.1-405b")
    assert (m.n_heads, m.n_kv_heads, m.attention) == (128, 8, "gqa")


def test_gemma3_layer_pattern():
    kinds = get_model("gemma-3-27b").layer_kinds
    assert (kinds.count("full"), kinds.count("sliding")) == (10, 52)
    assert [i for i, k in enumerate(kinds) if k == "full"] == list(range(5, 62, 6))
    assert get_model("gemma-3-27b").sliding_window == 1024


def test_gemma2_layer_pattern():
    m = get_model("gemma-2-9b")
    assert (m.layer_kinds.count("full"), m.layer_kinds.count("sliding")) == (21, 21)
    assert all(k == ("sliding" if i % 2 == 0 else "full") for i, k in enumerate(m.layer_kinds))
    assert m.sliding_window == 4096 and m.tie_word_embeddings  # tied by the Gemma default (no key in the file)


def test_mistral_all_layers_sliding_and_mixtral_none():
    mistral = get_model("mistral-7b-v0.1")
    assert mistral.sliding_window == 4096 and mistral.layer_kinds == ("sliding",) * 32
    mixtral = get_model("mixtral-8x7b")
    assert mixtral.sliding_window is None and mixtral.layer_kinds == ("full",) * 32


def test_qwen_sliding_keys_are_inert_unless_enabled():
    cfg = hf_config("qwen2.5-0.5b")
    assert cfg["sliding_window"] == 32768 and cfg["use_sliding_window"] is False
    m = get_model("qwen2.5-0.5b")
    assert m.sliding_window is None and m.layer_types is None
    assert get_model("qwen2.5-7b").sliding_window is None
    # Enabled: layers with index >= max_window_layers slide (transformers Qwen2Config).
    on = dict(cfg, use_sliding_window=True, sliding_window=4096, max_window_layers=21)
    kinds = from_hf_config(on).layer_kinds
    assert kinds == ("full",) * 21 + ("sliding",) * 3


def test_mla_fields_and_kv_heads_ignored_for_the_cache():
    for model_id, layers in (("deepseek-v2", 60), ("deepseek-v3", 61)):
        m = get_model(model_id)
        assert m.attention == "mla" and m.n_layers == layers
        assert (m.kv_lora_rank, m.qk_rope_head_dim, m.qk_nope_head_dim, m.v_head_dim) == (512, 64, 128, 128)
        assert m.kv_lora_rank + m.qk_rope_head_dim == 576  # elements per token and layer (V2 report 2.1)
        assert m.head_dim == 128 + 64


def test_tied_embeddings_per_reference_section_6():
    tied = {"llama-3.2-1b", "llama-3.2-3b", "qwen2.5-0.5b", "gemma-2-9b", "gemma-3-27b", "smollm2-135m",
            "smollm2-360m", "smollm2-1.7b", "gpt2", "gpt-3-175b", "qwen2.5-3b", "qwen2.5-1.5b", "qwen3-4b", "qwen3-1.7b",
            "qwen3-0.6b", "gemma-4-26b-a4b"}  # Gemma 4: "tie_word_embeddings": true in its config
    for model_id in PRESETS:
        assert get_model(model_id).tie_word_embeddings == (model_id in tied), model_id


def test_attention_kinds():
    assert get_model("llama-2-7b").attention == "mha"
    assert get_model("smollm2-1.7b").attention == "mha"
    assert get_model("llama-2-70b").attention == "gqa"


# -- other key conventions ---------------------------------------------------------------------------

def test_gpt2_style_keys():
    cfg = {"model_type": "gpt2", "n_embd": 256, "n_layer": 4, "n_head": 8, "n_positions": 512, "vocab_size": 1000}
    m = from_hf_config(cfg, name="tiny")
    assert (m.d_model, m.n_layers, m.n_heads, m.n_kv_heads, m.head_dim) == (256, 4, 8, 8, 32)
    assert m.d_ff == 4 * 256 and m.max_context_len == 512 and m.attention == "mha" and m.tie_word_embeddings
    # wte 256,000 + wpe 131,072 + 4 x (LN 1,024 + c_attn 196,608 + 768 + c_proj 65,536 + 256
    # + c_fc 262,144 + 1,024 + c_proj 262,144 + 256) + final LN 512
    assert m.n_params == 256_000 + 131_072 + 4 * 789_760 + 512
    wide = from_hf_config(dict(cfg, n_inner=2048))
    assert wide.d_ff == 2048 and wide.n_params == m.n_params + 4 * (2 * 256 * 1024 + 1024)


def test_multi_query_configs():
    # GPT-BigCode (StarCoder style): one KV head of 128.
    bigcode = {"model_type": "gpt_bigcode", "n_embd": 1024, "n_layer": 2, "n_head": 8, "multi_query": True,
               "n_positions": 2048, "vocab_size": 1000}
    m = from_hf_config(bigcode)
    assert (m.attention, m.n_kv_heads, m.head_dim) == ("mqa", 1, 128)
    # Falcon-7B: d 4544, 71 heads of 64, multi_query, parallel attention with one LayerNorm, no biases, tied.
    # Per layer: LN 2*4544 = 9,088; QKV 4544*(71+2)*64 = 21,229,568; dense 4544^2 = 20,647,936;
    # MLP 2*4544*18176 = 165,183,488 -> 207,070,080; x32 = 6,626,242,560; + 65024*4544 = 295,469,056
    # + final LN 9,088 = 6,921,720,704.
    falcon = {"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71, "num_hidden_layers": 32,
              "multi_query": True, "parallel_attn": True, "bias": False, "vocab_size": 65024}
    f = from_hf_config(falcon)
    assert (f.attention, f.n_kv_heads, f.head_dim) == ("mqa", 1, 64)
    assert f.n_params == 6_921_720_704
    # multi_query false and no KV key: MHA.
    assert from_hf_config(dict(bigcode, multi_query=False)).attention == "mha"


def test_kv_heads_absent_means_mha():
    cfg = {k: v for k, v in hf_config("llama-2-7b").items() if k != "num_key_value_heads"}
    m = from_hf_config(cfg)
    assert m.attention == "mha" and m.n_kv_heads == 32


def test_layer_types_and_pattern_keys():
    base = dict(hf_config("llama-2-7b"), num_hidden_layers=4, sliding_window=512)
    explicit = dict(base, layer_types=["sliding_attention", "full_attention", "sliding_attention", "sliding_attention"])
    assert from_hf_config(explicit).layer_kinds == ("sliding", "full", "sliding", "sliding")
    patterned = dict(base, num_hidden_layers=8, sliding_window_pattern=4)  # layers 3 and 7 full
    assert [i for i, k in enumerate(from_hf_config(patterned).layer_kinds) if k == "full"] == [3, 7]
    all_full = dict(base, layer_types=["full_attention"] * 4)
    m = from_hf_config(all_full)
    assert m.sliding_window is None and m.layer_types is None  # canonical: no sliding layer, no window


def test_gemma3_vision_config_is_ignored_and_name_defaults():
    cfg = copy.deepcopy(hf_config("gemma-3-27b"))
    cfg["vision_config"] = {"hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16}
    cfg["_name_or_path"] = "google/gemma-3-27b-it"
    m = from_hf_config(cfg)
    assert m.d_model == 5376 and m.name == "google/gemma-3-27b-it"
    assert m.with_changes(name="Gemma-3-27B") == get_model("gemma-3-27b")
    assert from_hf_config(hf_config("gpt2")).name == "GPT2LMHeadModel"  # no _name_or_path: the architecture


def test_n_params_override():
    m = from_hf_config(hf_config("llama-3-8b"), name="x", n_params=8_000_000_000)
    assert m.n_params == 8_000_000_000 and m.n_active_params is None
    with pytest.raises(ValueError, match="n_params"):
        from_hf_config(hf_config("llama-3-8b"), n_params=0)


# -- lookups ----------------------------------------------------------------------------------------

def test_get_model_accepts_id_and_display_name_case_insensitively():
    assert get_model("Llama-3-8B") is get_model("llama-3-8b") is get_model("  LLAMA-3-8B ")
    assert get_model("GPT-3 175B").n_layers == 96
    assert get_model("gpt2") is get_model("GPT-2")


@pytest.mark.parametrize("checkpoint, preset", [
    ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"), ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.1-70b"), ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic",
                                                             "llama-3.1-70b"),
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek-v3"), ("deepseek-ai/DeepSeek-V3.1", "deepseek-v3"),
    ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-v3.2"), ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "qwen3-235b-a22b"),
    ("openai/gpt-oss-120b", "gpt-oss-120b"), ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
    ("meta-llama/Llama-2-70b-chat-hf", "llama-2-70b"), ("moonshotai/Kimi-K2-Instruct", "kimi-k2"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick"),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b"), ("mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b"),
    # the models of InferenceX's 2026 runs and their sibling releases of the same shapes (config.json copies in
    # ai-dynamo/aiconfigurator's model_configs, cited by models.json and checkpoint_aliases.json)
    ("zai-org/GLM-5-FP8", "glm-5"), ("nvidia/GLM-5.1-NVFP4", "glm-5"), ("MiniMaxAI/MiniMax-M2.5", "minimax-m2.5"),
    ("MiniMaxAI/MiniMax-M2.7", "minimax-m2.5"), ("amd/MiniMax-M2.5-MXFP4", "minimax-m2.5"),
    ("Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5-397b-a17b"), ("nvidia/Qwen3.5-397B-A17B-NVFP4-V2", "qwen3.5-397b-a17b"),
    ("Qwen/Qwen3.6-35B-A3B", "qwen3.5-35b-a3b"), ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder-480b-a35b"),
    ("deepseek-ai/DeepSeek-V4-Pro", "deepseek-v4-pro"), ("nvidia/DeepSeek-V4-Pro-NVFP4", "deepseek-v4-pro"),
    ("sgl-project/DeepSeek-V4-Pro-FP8", "deepseek-v4-pro"), ("deepseek-ai/DeepSeek-V4-Flash", "deepseek-v4-flash"),
    ("MiniMaxAI/MiniMax-M3-MXFP8", "minimax-m3"), ("nvidia/MiniMax-M3-NVFP4", "minimax-m3"),
    ("amd/MiniMax-M3-MXFP4", "minimax-m3"),
    # served Qwen2.5 and Qwen3 checkpoints, and a distill of the same shapes (tests/test_presets_more_models.py)
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"), ("Qwen/Qwen2.5-32B-Instruct-AWQ", "qwen2.5-32b"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "qwen2.5-32b"), ("Qwen/Qwen3-14B-FP8", "qwen3-14b"),
    # Phi-4 by its own id (tests/test_presets_more_models.py)
    ("microsoft/phi-4", "phi-4"),
    # the GLM-4.5 family (tests/test_presets_glm.py); GLM-4.6 is served as GLM-4.7 (checkpoint_aliases.json)
    ("zai-org/GLM-4.5-FP8", "glm-4.5"), ("zai-org/GLM-4.5-Air-FP8", "glm-4.5-air"), ("zai-org/GLM-4.6-FP8", "glm-4.7"),
    ("zai-org/GLM-4.7", "glm-4.7"),
])
def test_a_served_checkpoint_names_the_preset_of_its_architecture(checkpoint, preset):
    # each pair's config.json has the preset's shapes (checkpoint_aliases.json cites them): Llama 3.3 70B is
    # Llama 3.1 70B's architecture, DeepSeek-R1 DeepseekV3ForCausalLM with V3's; tags and dates are not a model
    from calc.models import match_checkpoint
    assert match_checkpoint(checkpoint) == preset
    assert get_model(checkpoint) is get_model(preset)


@pytest.mark.parametrize("other", ["gpt2-xl", "Qwen/Qwen2.5-7B-Instruct-1M", "meta-llama/Llama-3.2-11B-Vision",
                                   "Qwen/Qwen3.5-397B-A17B-Base-1M", "llama-3.1-8bx", "Qwen/Qwen2.5-14B-Instruct-1M",
                                   "zai-org/GLM-5.2-FP8", "nvidia/GLM-5.2-NVFP4",
                                   "Inferact/MiniMax-M3-EAGLE3", "microsoft/Phi-4-mini-instruct",
                                   "microsoft/Phi-4-reasoning", "zai-org/GLM-4.7-Flash", "zai-org/GLM-4.5V"])
def test_a_different_model_that_shares_a_presets_prefix_is_not_taken_for_it(other):
    # GPT-2 XL is not GPT-2, Qwen2.5-7B- and 14B-Instruct-1M have another config (a 1M-token RoPE), a vision model has more;
    # GLM-5.2 would read as a version of GLM-5 but shares its indexer across layers (a null alias refuses it);
    # MiniMax-M3's EAGLE3 draft is a small model of its own; Phi-4-mini is a 3.8B model, and Phi-4-reasoning's 32k-token
    # context is past Phi-4's 16,384-token window (a null alias refuses it); GLM-4.7-Flash is a 30B MLA model and
    # GLM-4.5V a vision model on GLM-4.5-Air, not the 355B GLM-4.7 or GLM-4.5
    from calc.models import match_checkpoint
    assert match_checkpoint(other) is None
    with pytest.raises(ValueError, match="unknown model"):
        get_model(other)


@pytest.mark.parametrize("name, preset", [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("H100", "h100-sxm"), ("H100 SXM", "h100-sxm"), ("h100sxm", "h100-sxm"),
    ("NVIDIA H100 PCIe", "h100-pcie"), ("NVIDIA A100-SXM4-40GB", "a100-40gb"), ("A100", "a100-80gb"),
    ("AMD Instinct MI300X", "mi300x"), ("GB300", "b300"), ("NVIDIA GB200", "gb200"), ("NVIDIA H200", "h200"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"), ("NVIDIA L4", "l4"), ("NVIDIA L40S", "l40s"),
])
def test_an_accelerator_is_found_by_the_name_a_driver_or_a_cloud_gives_it(name, preset):
    from calc import get_accelerator
    from calc.hardware import match_accelerator_name
    assert match_accelerator_name(name) == preset
    assert get_accelerator(name) == get_accelerator(preset)


@pytest.mark.parametrize("other", ["NVIDIA H800 PCIe", "NVIDIA A100-PCIE-40GB", "NVIDIA H20-3e",
                                   "NVIDIA A800 80GB PCIe", "AMD EPYC 7763", "TPU v9"])
def test_a_part_without_a_preset_is_not_taken_for_a_neighbour(other):
    # H800 PCIe has 2 TB/s and 350 W (not the SXM part), an A100 PCIe 40GB 1.56 TB/s and 250 W, an H20-3e 141 GB of
    # HBM3e (not the 96 GB H20), an A800 PCIe 1.94 TB/s: the SXM or 96 GB presets would price them wrong
    from calc import get_accelerator
    from calc.hardware import match_accelerator_name
    assert match_accelerator_name(other) is None
    with pytest.raises(ValueError, match="unknown accelerator"):
        get_accelerator(other)


@pytest.mark.parametrize("bad", ["llama-9", "", None, 7])
def test_unknown_preset_lists_valid_ids(bad):
    with pytest.raises(ValueError) as e:
        get_model(bad)
    for model_id in PRESETS:
        assert model_id in str(e.value)


# -- malformed configs -------------------------------------------------------------------------------

LLAMA = {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_attention_heads": 8,
         "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 1000}


def _with(**changes):
    cfg = dict(LLAMA)
    for k, v in changes.items():
        if v is _DROP:
            cfg.pop(k)
        else:
            cfg[k] = v
    return cfg


_DROP = object()
MLA = {"model_type": "deepseek_v3", "hidden_size": 512, "intermediate_size": 1024, "moe_intermediate_size": 256,
       "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000, "kv_lora_rank": 64,
       "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32}

MALFORMED = [
    ([1, 2], "dict"),
    (None, "dict"),
    (_with(hidden_size=_DROP), "hidden_size"),
    (_with(hidden_size=0), "hidden_size"),
    (_with(hidden_size=-512), "hidden_size"),
    (_with(hidden_size="512"), "hidden_size"),
    (_with(hidden_size=512.5), "hidden_size"),
    (_with(num_hidden_layers=_DROP), "num_hidden_layers"),
    (_with(num_hidden_layers=True), "num_hidden_layers"),
    (_with(num_attention_heads=_DROP), "num_attention_heads"),
    (_with(vocab_size=_DROP), "vocab_size"),
    (_with(intermediate_size=_DROP), "intermediate_size"),
    (_with(num_key_value_heads=3), "num_key_value_heads"),
    (_with(num_key_value_heads=16), "num_key_value_heads"),
    (_with(num_attention_heads=7, num_key_value_heads=7), "head_dim"),
    (_with(head_dim=0), "head_dim"),
    (_with(sliding_window=0), "sliding_window"),
    (_with(layer_types=["full_attention"]), "layer_types"),
    (_with(layer_types=["full_attention", "banded"]), "layer_types"),
    (_with(layer_types=["full_attention", ["sliding_attention"]]), "layer_types"),
    (_with(layer_types="full_attention"), "layer_types"),
    (_with(layer_types=["sliding_attention", "full_attention"]), "sliding_window"),
    (_with(tie_word_embeddings="yes"), "tie_word_embeddings"),
    (_with(num_key_value_heads=_DROP, multi_query="true"), "multi_query"),
    (_with(num_local_experts=8), "num_experts_per_tok"),
    (_with(num_experts_per_tok=2), "num_local_experts"),
    (_with(num_local_experts=4, num_experts_per_tok=8), "num_experts_per_tok"),
    ({**MLA, "kv_lora_rank": None}, "kv_lora_rank"),
    ({k: v for k, v in MLA.items() if k != "kv_lora_rank"}, "kv_lora_rank"),
    ({k: v for k, v in MLA.items() if k != "qk_rope_head_dim"}, "qk_rope_head_dim"),
    ({**MLA, "kv_lora_rank": 0}, "kv_lora_rank"),
    ({**MLA, "n_routed_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 3}, "first_k_dense_replace"),
    ({"model_type": "gemma3", "text_config": [1]}, "text_config"),
]


@pytest.mark.parametrize("config, key", MALFORMED, ids=[f"{i}-{k}" for i, (_, k) in enumerate(MALFORMED)])
def test_malformed_config_names_the_key(config, key):
    with pytest.raises(ValueError, match=key):
        from_hf_config(config)


def test_valid_base_of_the_malformed_cases_parses():
    # So the cases above fail for the change they make, not for the base config.
    assert from_hf_config(LLAMA).attention == "gqa"
    assert from_hf_config(MLA).attention == "mla"


def test_json_text_errors():
    with pytest.raises(ValueError, match=r"line 2, column \d+"):
        model_from_json_text('{"hidden_size": 512,\n "num_hidden_layers": }')
    with pytest.raises(ValueError, match="object"):
        model_from_json_text("[1, 2, 3]")
    with pytest.raises(ValueError, match="string"):
        model_from_json_text(LLAMA)
    with pytest.raises(ValueError, match="hidden_size"):
        model_from_json_text(json.dumps(_with(hidden_size=_DROP)))
    raw = json.dumps(hf_config("llama-3-8b")).encode()
    assert model_from_json_text(raw, name="Llama-3-8B") == get_model("llama-3-8b")


def test_model_config_rejects_mla_without_rank():
    with pytest.raises(ValueError, match="kv_lora_rank"):
        get_model("deepseek-v3").with_changes(kv_lora_rank=None)


# -- property tests ----------------------------------------------------------------------------------

@st.composite
def llama_configs(draw):
    n_kv = draw(st.integers(1, 16))
    n_heads = n_kv * draw(st.integers(1, 8))
    head_dim = draw(st.sampled_from([16, 32, 64, 128]))
    explicit_head_dim = draw(st.booleans())
    d_model = draw(st.integers(1, 64)) * 64 if explicit_head_dim else n_heads * head_dim
    cfg = {"model_type": "llama", "hidden_size": d_model, "num_attention_heads": n_heads,
           "num_key_value_heads": n_kv, "num_hidden_layers": draw(st.integers(1, 128)),
           "intermediate_size": draw(st.integers(1, 60000)), "vocab_size": draw(st.integers(1, 300000)),
           "tie_word_embeddings": draw(st.booleans())}
    if explicit_head_dim:
        cfg["head_dim"] = head_dim
    return cfg, head_dim


@settings(max_examples=150, deadline=None)
@given(llama_configs())
def test_any_llama_config_parses_and_counts_by_the_formula(case):
    cfg, head_dim = case
    m = from_hf_config(cfg, name="random")
    N, K = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    assert (m.n_heads, m.n_kv_heads, m.head_dim) == (N, K, head_dim)
    assert m.attention == ("mha" if K == N else "mqa" if K == 1 else "gqa")
    assert m.n_params == llama_count(cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"], N, K,
                                     head_dim, cfg["intermediate_size"], cfg["tie_word_embeddings"])
    assert count_params(cfg) == (m.n_params, m.n_params)
    assert isinstance(m, ModelConfig) and m.sliding_window is None


@settings(max_examples=100, deadline=None)
@given(n_layers=st.integers(1, 80), pattern=st.integers(1, 8), window=st.integers(1, 8192))
def test_sliding_window_pattern_counts(n_layers, pattern, window):
    cfg = dict(LLAMA, num_hidden_layers=n_layers, sliding_window=window, sliding_window_pattern=pattern)
    kinds = from_hf_config(cfg).layer_kinds
    assert kinds.count("full") == n_layers // pattern  # layers p-1, 2p-1, ... are global
    assert len(kinds) == n_layers


# -- transformers as an outside oracle ---------------------------------------------------------------

SMALL = {
    "llama": dict(hidden_size=64, intermediate_size=96, num_attention_heads=8, num_key_value_heads=2,
                  num_hidden_layers=3, vocab_size=100, tie_word_embeddings=False, attention_bias=True, mlp_bias=True),
    "mixtral": dict(hidden_size=64, intermediate_size=96, num_attention_heads=8, num_key_value_heads=2,
                    num_hidden_layers=3, vocab_size=100, num_local_experts=4, num_experts_per_tok=2),
    "qwen2": dict(hidden_size=64, intermediate_size=96, num_attention_heads=8, num_key_value_heads=2,
                  num_hidden_layers=3, vocab_size=100, tie_word_embeddings=True),
    "qwen3": dict(hidden_size=64, intermediate_size=96, num_attention_heads=8, num_key_value_heads=2, head_dim=16,
                  num_hidden_layers=3, vocab_size=100),
    "gemma2": dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                   num_hidden_layers=3, vocab_size=100),
    "gemma3_text": dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2,
                        head_dim=24, num_hidden_layers=3, vocab_size=100),
    "deepseek_v2": dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_attention_heads=4,
                        num_key_value_heads=4, num_hidden_layers=3, vocab_size=100, kv_lora_rank=16, q_lora_rank=None,
                        qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=12, n_routed_experts=6,
                        n_shared_experts=2, num_experts_per_tok=2, first_k_dense_replace=1, n_group=1, topk_group=1),
    "deepseek_v3": dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_attention_heads=4,
                        num_key_value_heads=4, num_hidden_layers=4, vocab_size=100, kv_lora_rank=16, q_lora_rank=24,
                        qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=12, n_routed_experts=8,
                        n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=2, n_group=2, topk_group=1),
    "gpt2": dict(n_embd=64, n_layer=3, n_head=4, n_positions=32, vocab_size=100, bos_token_id=0, eos_token_id=0),
    "gpt_bigcode": dict(n_embd=64, n_layer=3, n_head=4, n_positions=32, vocab_size=100, multi_query=True,
                        bos_token_id=0, eos_token_id=0),
    "falcon": dict(hidden_size=64, num_attention_heads=8, num_kv_heads=2, num_hidden_layers=3, vocab_size=100,
                   new_decoder_architecture=True),
    "qwen2_moe": dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
                      shared_expert_intermediate_size=48, num_attention_heads=8, num_key_value_heads=2,
                      num_hidden_layers=3, vocab_size=100, num_experts=4, num_experts_per_tok=2),
    # GLM-4.5's block: q/k/v biases (no o bias), QK norm, partial RoPE, a dense first layer, then routed experts, a
    # shared one and the router's correction bias
    "glm4_moe": dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_attention_heads=8,
                     num_key_value_heads=2, head_dim=16, num_hidden_layers=4, vocab_size=100, n_routed_experts=8,
                     n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=1, attention_bias=True,
                     use_qk_norm=True, partial_rotary_factor=0.5, n_group=1, topk_group=1),
}


@pytest.mark.parametrize("model_type", sorted(SMALL))
def test_count_matches_transformers_model_on_meta_device(model_type):
    kw = SMALL[model_type]
    n, _ = transformers_param_count(model_type, kw)
    assert count_params({"model_type": model_type, **kw})[0] == n


@pytest.mark.parametrize("model_id", ["gemma-2-9b", "gemma-3-27b", "qwen2.5-0.5b", "qwen3-8b"])
def test_layer_types_match_transformers(model_id):
    transformers = pytest.importorskip("transformers")
    cfg = hf_config(model_id)
    conf = transformers.AutoConfig.for_model(cfg["model_type"], **{k: v for k, v in cfg.items() if k != "model_type"})
    text = getattr(conf, "text_config", conf)
    theirs = tuple("sliding" if t == "sliding_attention" else "full" for t in text.layer_types)
    assert get_model(model_id).layer_kinds == theirs
    assert get_model(model_id).tie_word_embeddings == text.tie_word_embeddings


def test_qwen3_32b_count_by_hand():
    # Qwen3-32B (config.json): V 151,936, D 5,120, 64 layers, 64 Q / 8 KV heads of 128, F 25,600, untied, QK-norm.
    # Per layer: 5120*64*128 = 41,943,040 (Q) + 2*5120*8*128 = 10,485,760 (K, V) + 41,943,040 (O)
    # + 3*5120*25600 = 393,216,000 (MLP) + 2*5120 (norms) + 2*128 (q_norm, k_norm) = 487,598,336;
    # x 64 = 31,206,293,504; + 2 x 151,936 x 5,120 = 1,555,824,640 (embedding, head) + 5,120 = 32,762,123,264
    # (model card: 32.8B).
    assert get_model("qwen3-32b").n_params == 32_762_123_264
    assert count_params(hf_config("qwen3-32b")) == (32_762_123_264, 32_762_123_264)


def test_the_longer_context_preset_is_the_nearest_in_size_whose_window_holds_the_context():
    from calc.models import get_model, list_models, longer_context_preset
    small = get_model("llama-3-8b")  # 8.03e9 parameters, trained on 8,192 tokens
    assert longer_context_preset(small, 8_192) is None  # its own window holds it
    # 70,000 tokens: Llama-3.1-8B (131,072 tokens) has the same 8.03e9 parameters, a size ratio of 1
    assert longer_context_preset(small, 70_000) == "llama-3.1-8b"
    # past every window of the catalogue: none
    assert longer_context_preset(small, 10 ** 9) is None
    # any answer holds the context and no preset that holds it is nearer in size (by the ratio of parameters)
    import math
    pick = get_model(longer_context_preset(small, 200_000))
    gap = abs(math.log(pick.n_params / small.n_params))
    assert pick.max_context_len >= 200_000
    assert all(abs(math.log(get_model(k).n_params / small.n_params)) >= gap for k in list_models()
               if (get_model(k).max_context_len or 0) >= 200_000)


def test_minimax_m2_5_is_counted_by_hand_with_its_qk_norms_and_router_bias():
    # MiniMax-M2.5 (config.json: D 3072, L 62, 48 heads and 8 KV heads of 128, 256 experts of 1536, top-8, vocab 200064,
    # untied, use_qk_norm over all heads at once, use_routing_bias). Per layer: q 3072 x 6144 + k, v 2 x 3072 x 1024 +
    # o 6144 x 3072 = 44,040,192; q_norm 6144 + k_norm 1024 + 2 layer norms x 3072 = 13,312; experts 256 x 3 x 3072 x
    # 1536 = 3,623,878,656; router 3072 x 256 = 786,432 and its correction bias 256: 3,668,718,848 per layer, x 62 =
    # 227,460,568,576; embedding and head 2 x 200064 x 3072 = 1,229,193,216; final norm 3072: 228,689,764,864 (MiniMax:
    # 230B). Active: 8 of 256 experts (8 x 3 x 3072 x 1536 = 113,246,208 per layer), no correction bias (a routing
    # buffer, not a weight read per token): 62 x (44,040,192 + 13,312 + 113,246,208 + 786,432) + 1,229,193,216 + 3072
    model = get_model("minimax-m2.5")
    assert model.n_params == 228_689_764_864
    assert model.n_active_params == 62 * (44_040_192 + 13_312 + 113_246_208 + 786_432) + 1_229_193_216 + 3072
    assert (model.n_layers, model.n_kv_heads, model.head_dim, model.n_experts, model.n_experts_per_token) == (
        62, 8, 128, 256, 8)


@pytest.mark.parametrize("model_id, total_b, active_b", [
    # the totals and actives their makers publish (model cards: Qwen3.5-397B-A17B, Qwen3.5-122B-A10B, GLM-5 744B
    # total / 40B active, Qwen3-Coder-480B-A35B); the count from the shapes within 1% of the total, active within 5%
    ("qwen3.5-397b-a17b", 397, 17), ("qwen3.5-122b-a10b", 122, 10), ("glm-5", 744, 40),
    ("qwen3-coder-480b-a35b", 480, 35),
])
def test_the_new_moe_presets_count_what_their_makers_publish(model_id, total_b, active_b):
    model = get_model(model_id)
    assert model.n_params / 1e9 == pytest.approx(total_b, rel=0.01)
    assert model.n_active_params / 1e9 == pytest.approx(active_b, rel=0.05)
