"""Config files of 2026 architectures that the reader used to misprice without a word.

Oracles: transformers' own model classes built on the meta device (tests/hf_meta.py) for the parameter counts,
and hand arithmetic in the comments. The shapes are those of NVIDIA's Nemotron-3 configs (verbatim copies in
github.com/ai-dynamo/aiconfigurator at 095f58a5, aic-core/src/aiconfigurator_core/model_configs/; the shipped
presets' files in calc/data/hf_configs/), Google's Gemma 4, Xiaomi's MiMo-V2-Flash and Z.ai's GLM-5.2 (same folder).

Before: Nemotron-3 Super's config (a latent MoE, ``moe_latent_size``) read as 458.56B parameters (120.67B), a
config in transformers 5's list form (``layers_block_type``, Nemotron-3.5 Lightning) as 69.20B (31.58B) and one
without ``num_hidden_layers`` (Nemotron-3 Ultra) was refused; Gemma 4's 31B read as 30.15B with every layer's KV
cache at the sliding layers' shapes (30.70B; its global layers now have their own), Gemma 4's 26B-A4B was refused
(its top_k_experts), MiMo-V2-Flash read as 309.43B (308.78B) and GLM-5.2 as GLM-5 (both now refused).
"""
from __future__ import annotations

import json

import pytest

import calc
from calc.config_json import from_hf_config, model_from_json_text
from calc.models import DATA_DIR
from calc.param_count import count_params
from calc.quant import tensor_groups
from hf_meta import transformers_param_count

# A small Nemotron-H in transformers 5's list form: no num_hidden_layers (the list's length is the count),
# latent MoE blocks. D 64, latent 16, 4 routed experts of 32 (top 2), one shared expert of 48, squared-ReLU MLPs.
NEMOTRON_LIST = dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                     vocab_size=100, layers_block_type=["mamba", "moe", "attention", "moe", "mamba", "mlp"],
                     mamba_num_heads=8, mamba_head_dim=16, ssm_state_size=8, n_groups=2, conv_kernel=4,
                     n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                     moe_shared_expert_intermediate_size=48, n_shared_experts=1, moe_latent_size=16)


def test_list_form_with_latent_moe_matches_transformers():
    n, _ = transformers_param_count("nemotron_h", NEMOTRON_LIST)
    assert count_params({"model_type": "nemotron_h", **NEMOTRON_LIST})[0] == n
    m = from_hf_config({"model_type": "nemotron_h", **NEMOTRON_LIST})
    assert m.n_layers == 6
    assert m.layer_kinds == ("mamba2", "mlp_only", "full", "mlp_only", "mamba2", "mlp_only")
    assert m.ffn_kinds == ("none", "moe", "none", "moe", "none", "dense")
    assert m.moe_latent_dim == 16


def test_latent_moe_layer_by_hand():
    # One MoE block, D 64, latent 16: 4 experts x (up 32 x 16 + down 16 x 32) = 4,096; router 64 x 4 = 256 and its
    # correction bias 4; shared expert 2 x 64 x 48 = 6,144; latent projections 2 x 64 x 16 = 2,048; norm 64.
    # Total less the same config without the latent (experts at D: 4 x 2 x 64 x 32 = 16,384, no projections):
    # (4,096 + 2,048) - 16,384 = -10,240.
    with_latent = count_params({"model_type": "nemotron_h", **NEMOTRON_LIST})
    without = count_params({"model_type": "nemotron_h", **dict(NEMOTRON_LIST, moe_latent_size=None)})
    assert with_latent[0] - without[0] == 2 * (4_096 + 2_048 - 16_384)  # two MoE blocks
    # active: top 2 of 4 experts -> 2 x 1,024 + 2,048 against 2 x 4,096 at D, per MoE block
    assert with_latent[1] - without[1] == 2 * (2 * 1_024 + 2_048 - 2 * 4_096)
    # the routed experts' weights (the quantization recipes' "experts" groups) are the latent ones
    g = tensor_groups(from_hf_config({"model_type": "nemotron_h", **NEMOTRON_LIST}))
    assert g["experts"] + g["experts_down"] == 2 * 4_096


@pytest.mark.parametrize("preset", ["nemotron-3-nano-30b-a3b", "nemotron-3-super-120b-a12b", "nemotron-3-ultra-550b-a55b"])
def test_nemotron_3_presets_match_transformers(preset):
    cfg = json.loads((DATA_DIR / "hf_configs" / f"{preset}.json").read_text())
    n, conf = transformers_param_count("nemotron_h", {k: v for k, v in cfg.items() if k != "model_type"})
    m = calc.get_model(preset)
    assert m.n_params == n
    assert m.n_layers == len(conf.layers_block_type)


def test_nemotron_3_super_by_hand():
    # 88 blocks of "MEMEMEM*EMEMEMEM*...": 40 latent-MoE blocks of 512 experts, up 2,688 x 1,024 and down 1,024 x
    # 2,688 each -> 40 x 512 x 2 x 1,024 x 2,688 = 112,742,891,520 routed-expert parameters; 8 attention blocks of
    # 2 KV heads x 128 -> 8 x 2 x 2 x 128 x 2 B = 8,192 B of KV cache per token in bf16.
    m = calc.get_model("nemotron-3-super-120b-a12b")
    g = tensor_groups(m)
    assert g["experts"] + g["experts_down"] == 40 * 512 * 2 * 1_024 * 2_688
    assert calc.kv_bytes_per_token(m) == 8 * 2 * 2 * 128 * 2
    # active: 22 of 512 experts, so the 490 others are in the total only, with the router's correction bias of
    # 512 per block (a stored tensor, not a matmul): 40 x (490 x 2 x 1,024 x 2,688 + 512) = 107,898,490,880
    assert m.n_params - m.n_active_params == 40 * (490 * 2 * 1_024 * 2_688 + 512)


def test_served_checkpoint_names_find_the_presets():
    assert calc.get_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4") == calc.get_model(
        "nemotron-3-super-120b-a12b")
    assert calc.get_model("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").name == "NVIDIA-Nemotron-3-Nano-30B-A3B"


# Gemma 4: its global ("full") layers have their own head width (global_head_dim, 512 by default), their own KV
# heads (num_global_key_value_heads, under attention_k_eq_v) and no V projection (attention_k_eq_v).
GEMMA4 = dict(model_type="gemma4_text", hidden_size=64, intermediate_size=96, num_attention_heads=4,
              num_key_value_heads=2, head_dim=16, num_hidden_layers=3, vocab_size=100, sliding_window=32,
              layer_types=["sliding_attention", "sliding_attention", "full_attention"], hidden_size_per_layer_input=0,
              global_head_dim=32, num_global_key_value_heads=1, attention_k_eq_v=True)
GEMMA4_MOE = dict(GEMMA4, enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=24)


@pytest.mark.parametrize("cfg", [GEMMA4, GEMMA4_MOE, dict(GEMMA4, attention_k_eq_v=False),
                                 {k: v for k, v in GEMMA4.items() if k != "global_head_dim"}])
def test_gemma_4_counts_match_transformers(cfg):
    n, _ = transformers_param_count("gemma4_text", {k: v for k, v in cfg.items() if k != "model_type"})
    assert count_params(cfg)[0] == n


def test_gemma_4_cache_by_hand():
    m = from_hf_config(GEMMA4)
    assert (m.global_head_dim, m.n_global_kv_heads, m.global_k_eq_v) == (32, 1, True)
    # two sliding layers of 2 x 2 heads x 16 and one global layer of 2 x 1 head x 32, bf16: (2 x 64 + 64) x 2 B
    assert calc.kv_bytes_per_token(m) == (2 * (2 * 2 * 16) + 2 * 1 * 32) * 2
    # at 100 tokens the sliding layers hold their window of 32: 2 x 128 B x 32 + 128 B x 100
    assert calc.kv_cache_bytes(m, 100) == 2 * 128 * 32 + 128 * 100
    # without attention_k_eq_v the global layers keep the sliding layers' KV heads (transformers overrides them
    # only under it), and their V projection
    plain = from_hf_config(dict(GEMMA4, attention_k_eq_v=False))
    assert (plain.n_global_kv_heads, plain.global_k_eq_v) == (None, False)
    assert calc.kv_bytes_per_token(plain) == (2 * (2 * 2 * 16) + 2 * 2 * 32) * 2


def test_gemma_4_26b_a4b_preset_by_hand():
    m = calc.get_model("gemma-4-26b-a4b")
    # 25 sliding layers of 2 x 8 heads x 256 and 5 global layers of 2 x 2 heads x 512, bf16:
    # 25 x 8,192 + 5 x 4,096 = 225,280 B per token
    assert calc.kv_bytes_per_token(m) == 25 * 8_192 + 5 * 4_096
    # at 8,192 tokens the sliding layers hold their 1,024-token window: 25 x 8,192 x 1,024 + 5 x 4,096 x 8,192
    assert calc.kv_cache_bytes(m, 8192) == 25 * 8_192 * 1_024 + 5 * 4_096 * 8_192
    # at TP 4 a rank holds 2 of the sliding layers' 8 KV heads, and 1 of the global layers' 2 (replicated):
    # 25 x 8,192 / 4 + 5 x 4,096 / 2 = 61,440 B per token
    from calc.gpu_share import kv_bytes_per_gpu_per_token
    from calc.layout import make_layout
    assert kv_bytes_per_gpu_per_token(m, make_layout(m, tp=4)) == 25 * 8_192 / 4 + 5 * 4_096 / 2
    # transformers' count of the shipped config
    cfg = json.loads((DATA_DIR / "hf_configs" / "gemma-4-26b-a4b.json").read_text())["text_config"]
    assert m.n_params == transformers_param_count("gemma4_text", {k: v for k, v in cfg.items()
                                                                  if k != "model_type"})[0]


@pytest.mark.parametrize("extra, key", [
    (dict(hidden_size_per_layer_input=8), "hidden_size_per_layer_input"),
    (dict(num_kv_shared_layers=1), "num_kv_shared_layers"),
    (dict(use_double_wide_mlp=True), "use_double_wide_mlp"),
])
def test_gemma_4_e2b_features_are_refused(extra, key):
    with pytest.raises(ValueError, match=key):
        from_hf_config({**GEMMA4, **extra})
    # transformers' default per-layer input width is 256: a config that leaves it out is refused too
    with pytest.raises(ValueError, match="hidden_size_per_layer_input"):
        from_hf_config({k: v for k, v in GEMMA4.items() if k != "hidden_size_per_layer_input"})


def test_mimo_and_glm_5_2_are_refused():
    llama = dict(model_type="llama", hidden_size=64, intermediate_size=96, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=24, num_hidden_layers=2, vocab_size=100)
    with pytest.raises(ValueError, match="v_head_dim"):
        from_hf_config({**llama, "v_head_dim": 16})
    with pytest.raises(ValueError, match="swa_num_key_value_heads"):
        from_hf_config({**llama, "swa_num_key_value_heads": 4})
    glm = json.loads((DATA_DIR / "hf_configs" / "glm-5.json").read_text())
    glm["indexer_types"] = ["full"] * 3 + ["shared"] * (glm["num_hidden_layers"] - 3)
    with pytest.raises(ValueError, match="indexer_types"):
        from_hf_config(glm)
    # the pasted-text path of the pages gives the same message (shown in the page, nothing lost)
    with pytest.raises(ValueError, match="refuses it rather than give a wrong number"):
        model_from_json_text(json.dumps({**llama, "swa_num_key_value_heads": 4}))


@pytest.mark.parametrize("model_id, formula, per_token", [
    # Gemma-4-26B-A4B: 2 x (25 x 8 x 256 + 5 x 2 x 512) x 2 B = 225,280 B
    ("gemma-4-26b-a4b", r"2 \times (25 \times 8 \times 256 + 5 \times 2 \times 512) \times 2", 225_280),
    # Nemotron-H-56B: its 10 attention layers hold the cache, not its 118 blocks: 2 x 10 x 8 x 128 x 2 B = 40,960 B
    ("nemotron-h-56b", r"2 \times 10 \times 8 \times 128 \times 2", 40_960),
    # Llama-3-8B, the course's: 2 x 32 x 8 x 128 x 2 B = 131,072 B
    ("llama-3-8b", r"2 \times 32 \times 8 \times 128 \times 2", 131_072),
])
def test_kv_equation_counts_the_layers_that_hold_a_cache(model_id, formula, per_token):
    from ui import equations
    m = calc.get_model(model_id)
    per = calc.kv_bytes_per_token(m)
    assert per == per_token
    tok = equations.kv_rows(m, per, per * 100, per * 100, 100, 1, "bf16")[0][1]
    assert formula in tok and f"{per_token:,}".replace(",", "{,}") in tok


def test_gemma_4_without_windows_keeps_each_layers_shape():
    # Switching Gemma 4's windows off keeps its 25 sliding layers at their own 8 KV heads of 256 (they hold every
    # token, as "windows reserved in full" has them), not the global layers' 2 of 512: 225,280 B per token either
    # way, 225,280 x 131,072 = 29.53 GB per sequence at 128K
    from calc.kv import attention_variants, with_attention_layout
    m = calc.get_model("gemma-4-26b-a4b")
    off = with_attention_layout(m, window=0)
    assert calc.kv_bytes_per_token(off) == 225_280
    assert calc.kv_cache_bytes(off, 131072) == calc.kv_cache_bytes(m, 131072, sliding="full") == 225_280 * 131072
    # the comparison's MHA, GQA and MQA rows keep each layer's width as the layout radio does: MHA 25 x 2 x 16 x 256
    # x 2 + 5 x 2 x 16 x 512 x 2 = 573,440 B; GQA (K = 8) 286,720 B; MQA 35,840 B
    rows = attention_variants(m)
    assert calc.kv_bytes_per_token(rows["MHA"]) == calc.kv_bytes_per_token(with_attention_layout(m, "mha")) == 573_440
    assert calc.kv_bytes_per_token(rows["GQA (16:8)"]) == 286_720
    assert calc.kv_bytes_per_token(rows["MQA"]) == 35_840
    from calc.layers import layer_specs
    assert {s.label for s in layer_specs(off)} == {"sliding (no window)", "full"}


def test_kv_page_without_windows_compares_with_a_4096_window():
    # the KV page's "No window" on Gemma 4 puts its sliding layers behind calc.kv.NO_WINDOW; the layout comparison's
    # window row still takes the page's 4,096-token default rather than that sentinel
    import pagetest
    at = pagetest.open_page("app_pages/kv_cache.py", timeout=60, model="gemma-4-26b-a4b", kv_win="none")
    assert not at.exception
    texts = [str(getattr(e, "value", "")) for e in list(at.markdown) + list(at.caption)]
    texts += [d.to_csv() for d in pagetest.tables(at)]
    assert any("Window 4096" in t for t in texts)
    assert not any("134217728" in t or "134,217,728" in t for t in texts)
