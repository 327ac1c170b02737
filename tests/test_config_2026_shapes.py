"""Config files of 2026 architectures that the reader used to misprice without a word.

Oracles: transformers' own model classes built on the meta device (tests/hf_meta.py) for the parameter counts,
and hand arithmetic in the comments. The shapes are those of NVIDIA's Nemotron-3 configs (verbatim copies in
github.com/ai-dynamo/aiconfigurator at 095f58a5, aic-core/src/aiconfigurator_core/model_configs/; the shipped
presets' files in calc/data/hf_configs/), Google's Gemma 4, Xiaomi's MiMo-V2-Flash and Z.ai's GLM-5.2 (same folder).

Before: Nemotron-3 Super's config (a latent MoE, ``moe_latent_size``) read as 458.56B parameters (120.67B), a
config in transformers 5's list form (``layers_block_type``, Nemotron-3.5 Lightning) as 69.20B (31.58B) and one
without ``num_hidden_layers`` (Nemotron-3 Ultra) was refused; Gemma 4's 31B read as 30.15B with every layer's KV
cache at the sliding layers' shapes (30.70B), MiMo-V2-Flash as 309.43B (308.78B), GLM-5.2 as GLM-5.
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


# Per-layer attention shapes calc's one-width ModelConfig cannot hold: refused with the key named.
GEMMA4 = dict(model_type="gemma4_text", hidden_size=64, intermediate_size=96, num_attention_heads=4,
              num_key_value_heads=2, head_dim=16, num_hidden_layers=2, vocab_size=100, sliding_window=32,
              layer_types=["sliding_attention", "full_attention"])


@pytest.mark.parametrize("extra, key", [
    (dict(global_head_dim=32), "global_head_dim"),
    (dict(num_global_key_value_heads=1), "num_global_key_value_heads"),
    (dict(attention_k_eq_v=True), "attention_k_eq_v"),
])
def test_gemma_4_full_layer_shapes_are_refused(extra, key):
    with pytest.raises(ValueError, match=key):
        from_hf_config({**GEMMA4, **extra})


def test_equal_global_shapes_are_read():
    # the same widths named twice change nothing: read, not refused
    m = from_hf_config({**GEMMA4, "global_head_dim": 16, "num_global_key_value_heads": 2})
    assert calc.kv_bytes_per_token(m) == 2 * (2 * 2 * 16 * 2)  # two layers of 2 x K x H x 2 B


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
        model_from_json_text(json.dumps({**GEMMA4, "attention_k_eq_v": True}))
