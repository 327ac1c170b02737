"""The hybrid presets added from their verbatim hub config.json: counts and cache by hand, and against transformers.

Oracles: hand counts from the shapes (arithmetic in the comments), the parameter totals the model makers
publish, and transformers' own model class for the same config.json built on the meta device (shapes only).
The round trip catalogue entry == from_hf_config(stored file) is in tests/test_models.py for every preset.
"""
from __future__ import annotations

import json

import calc
from calc.models import DATA_DIR, hf_config
from hf_meta import transformers_param_count


def _meta_count(model_id: str) -> int:
    cfg = {k: v for k, v in hf_config(model_id).items() if k not in ("auto_map", "architectures")}
    return transformers_param_count(cfg.pop("model_type"), cfg)[0]


def test_jamba_v01_stored_file_is_the_published_size():
    # the hub page of the file (revision 871ab2b1) gives its size as 1,310 bytes
    assert len((DATA_DIR / "hf_configs" / "jamba-v0.1.json").read_bytes()) == 1_310


def test_jamba_v01_preset_by_hand():
    # Jamba-v0.1: D 4,096, 32 layers; attention at layers 4, 12, 20, 28 (attn_layer_period 8, offset 4), the other
    # 28 are Mamba (d_inner 2 x 4,096 = 8,192, state 16, conv 4, dt_rank 256); MoE at the odd layers (16 experts
    # of 14,336, top-2), a dense MLP of 14,336 at the even ones; untied, V 65,536.
    # Embeddings 2 x 65,536 x 4,096 = 536,870,912; final norm 4,096; 2 norms a layer 8,192.
    # Attention (GQA 32 heads, 8 KV heads of 128): q, o 2 x 4,096^2 + k, v 2 x 4,096 x 1,024 = 41,943,040.
    # Mamba (transformers' JambaMambaMixer): in_proj 4,096 x 16,384 = 67,108,864, conv1d 8,192 x 4 + bias 8,192 =
    # 40,960, x_proj 8,192 x (256 + 2 x 16) = 2,359,296, dt_proj 256 x 8,192 + bias 8,192 = 2,105,344, A_log
    # 8,192 x 16 = 131,072, D 8,192, out_proj 8,192 x 4,096 = 33,554,432, dt/B/C layernorms 256 + 16 + 16 = 288
    # -> 105,308,448. MLP 3 x 4,096 x 14,336 = 176,160,768; MoE layer: router 4,096 x 16 = 65,536 + 16 MLPs.
    mlp = 176_160_768
    total = (536_870_912 + 4_096 + 32 * 8_192 + 4 * 41_943_040 + 28 * 105_308_448
             + 16 * mlp + 16 * (65_536 + 16 * mlp))
    m = calc.get_model("jamba-v0.1")
    assert m.n_params == total == 51_570_323_328                    # AI21 (arXiv 2403.19887): 52B total
    assert m.n_active_params == total - 16 * 14 * mlp == 12_110_311_296   # AI21: 12B active
    assert m.layer_kinds.count("full") == 4 and m.layer_kinds.count("mamba") == 28
    # cache: 4 x 2 x 8 x 128 x 2 B = 16,384 B per token; each Mamba layer holds conv (4 - 1) x 8,192 x 2 B = 49,152 B
    # and SSM 8,192 x 16 x 4 B = 524,288 B (vLLM's MambaStateShapeCalculator.mamba1_state_shape), 28 of them.
    assert calc.kv_bytes_per_token(m) == 16_384
    assert calc.kv.kv_state_bytes(m) == 28 * (49_152 + 524_288) == 16_056_320


def test_jamba_v01_count_equals_transformers():
    assert _meta_count("jamba-v0.1") == calc.get_model("jamba-v0.1").n_params
