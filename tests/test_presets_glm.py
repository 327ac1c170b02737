"""The GLM-4.5 family presets (GLM-4.5, GLM-4.5-Air, GLM-4.7, and GLM-4.6 served as GLM-4.7): counts and cache by hand,
the makers' figures, transformers' own classes, and the served checkpoints that name them.

Oracles: hand counts from the shapes of each shipped config.json (arithmetic in the comments); the GLM-4.5 report's
Table 1 (arXiv 2508.06471: GLM-4.5 3 dense + 89 MoE layers, 160 experts, QK-Norm; GLM-4.5-Air 1 dense + 45 MoE
layers, 128 experts, no QK-Norm; 355B / 32B and 106B / 12B); transformers' Glm4Moe classes built on the meta device
(tests/hf_meta.py). The round trip catalogue entry == from_hf_config(stored file) is in tests/test_models.py for
every preset, and the totals against the published figures in tests/test_published_totals.py.
"""
from __future__ import annotations

import pytest

import calc
from calc.models import get_model, hf_config, match_checkpoint
from calc.param_count import count_params
from hf_meta import transformers_param_count

GLM = ["glm-4.5", "glm-4.5-air", "glm-4.7"]


def test_glm_4_5_count_by_hand():
    # GLM-4.5 (config.json): V 151,552, D 5,120, 92 layers, 96 query / 8 KV heads of 128 (N x H = 12,288, wider than
    # D), attention_bias (q, k and v; o_proj has none), use_qk_norm, first_k_dense_replace 3 (dense MLP of 12,288),
    # then 160 routed experts of 1,536, top-8, one shared expert of 1,536; untied. Per layer:
    #   attention q 5120 x 12288 = 62,914,560; k, v 2 x 5120 x 1024 = 10,485,760; o 12288 x 5120 = 62,914,560;
    #   q/k/v biases 12288 + 2 x 1024 = 14,336; q_norm and k_norm 2 x 128 = 256                -> 136,329,472
    #   two norms 2 x 5120 = 10,240
    #   dense layer: + MLP 3 x 5120 x 12288 = 188,743,680                                      -> 325,083,392 (x 3)
    #   MoE layer: + 160 experts x 3 x 5120 x 1536 (23,592,960 each) = 3,774,873,600, shared 23,592,960,
    #              router 5120 x 160 = 819,200, its correction bias 160                       -> 3,935,625,632 (x 89)
    #   embedding and head 2 x 151,552 x 5,120 = 1,551,892,480; final norm 5,120
    #   = 975,250,176 + 350,270,681,248 + 1,551,897,600 = 352,797,829,024 (Z.ai: 355B)
    attn = 62_914_560 + 10_485_760 + 62_914_560 + 14_336 + 256
    assert attn == 136_329_472
    dense = attn + 10_240 + 188_743_680
    moe = attn + 10_240 + 160 * 23_592_960 + 23_592_960 + 819_200 + 160
    assert (dense, moe) == (325_083_392, 3_935_625_632)
    total = 3 * dense + 89 * moe + 1_551_892_480 + 5_120
    # active: 8 routed experts and the shared one, the router's matmul, not its correction bias (a stored tensor)
    moe_active = attn + 10_240 + 9 * 23_592_960 + 819_200
    active = 3 * dense + 89 * moe_active + 1_551_892_480 + 5_120
    m = get_model("glm-4.5")
    assert m.n_params == total == 352_797_829_024
    assert m.n_active_params == active == 33_632_251_904
    assert count_params(hf_config("glm-4.5")) == (total, active)
    assert (m.n_experts, m.n_experts_per_token, m.d_ff, m.d_ff_dense, m.d_ff_shared) == (160, 8, 1536, 12288, 1536)
    assert m.ffn_kinds == ("dense",) * 3 + ("moe",) * 89 and not m.tie_word_embeddings


def test_glm_4_5_air_count_by_hand():
    # GLM-4.5-Air (config.json): V 151,552, D 4,096, 46 layers, 96 query / 8 KV heads of 128, q/k/v biases, no QK
    # norm (use_qk_norm false), first_k_dense_replace 1 (dense MLP of 10,944), then 128 routed experts of 1,408, top-8,
    # one shared expert of 1,408; untied. Per layer:
    #   attention q 4096 x 12288 = 50,331,648; k, v 2 x 4096 x 1024 = 8,388,608; o 50,331,648; biases 14,336
    #                                                                                           -> 109,066,240
    #   two norms 8,192
    #   dense layer: + MLP 3 x 4096 x 10944 = 134,479,872                                      -> 243,554,304 (x 1)
    #   MoE layer: + 128 experts x 3 x 4096 x 1408 (17,301,504 each) = 2,214,592,512, shared 17,301,504,
    #              router 4096 x 128 = 524,288, its correction bias 128                       -> 2,341,492,864 (x 45)
    #   embedding and head 2 x 151,552 x 4,096 = 1,241,513,984; final norm 4,096
    #   = 243,554,304 + 105,367,178,880 + 1,241,518,080 = 106,852,251,264 (Z.ai: 106B)
    attn = 50_331_648 + 8_388_608 + 50_331_648 + 14_336
    dense = attn + 8_192 + 134_479_872
    moe = attn + 8_192 + 128 * 17_301_504 + 17_301_504 + 524_288 + 128
    assert (attn, dense, moe) == (109_066_240, 243_554_304, 2_341_492_864)
    moe_active = attn + 8_192 + 9 * 17_301_504 + 524_288
    m = get_model("glm-4.5-air")
    assert m.n_params == dense + 45 * moe + 1_241_513_984 + 4_096 == 106_852_251_264
    assert m.n_active_params == dense + 45 * moe_active + 1_241_513_984 + 4_096 == 13_424_123_904
    assert m.ffn_kinds == ("dense",) + ("moe",) * 45
    # the QK norm is the one attention difference from GLM-4.5 beside the widths: 2 x 128 per layer, 46 layers
    cfg = dict(hf_config("glm-4.5-air"), use_qk_norm=True)
    assert count_params(cfg)[0] - m.n_params == 46 * 2 * 128


@pytest.mark.parametrize("model_id", ["glm-4.5", "glm-4.5-air"])
def test_counts_match_transformers_at_full_size(model_id):
    # transformers' Glm4MoeForCausalLM on the meta device, from the shipped config.json (its MTP layer is not built,
    # as calc's main-model count leaves it out); the router's correction bias is a buffer there, a stored tensor in
    # the checkpoint, and counted by both
    cfg = hf_config(model_id)
    n, conf = transformers_param_count("glm4_moe", {k: v for k, v in cfg.items() if k != "model_type"})
    assert get_model(model_id).n_params == n
    assert conf.num_hidden_layers == get_model(model_id).n_layers


@pytest.mark.parametrize("model_id, layers, per_token", [
    # bf16, per token: 2 (K and V) x layers x 8 KV heads x head_dim 128 x 2 bytes, every layer full attention. The
    # partial RoPE (partial_rotary_factor 0.5) rotates half of each key's 128 dims and caches all 128; the MTP layer
    # (num_nextn_predict_layers 1, outside num_hidden_layers) is not run in plain decoding and holds no cache
    ("glm-4.5", 92, 376_832),       # 2 x 92 x 8 x 128 x 2
    ("glm-4.5-air", 46, 188_416),   # 2 x 46 x 8 x 128 x 2
    ("glm-4.7", 92, 376_832),       # GLM-4.5's shapes
])
def test_kv_bytes_per_token_by_hand(model_id, layers, per_token):
    m = get_model(model_id)
    assert (m.n_layers, m.n_kv_heads, m.head_dim, m.attention) == (layers, 8, 128, "gqa")
    assert hf_config(model_id)["partial_rotary_factor"] == 0.5 and hf_config(model_id)["num_nextn_predict_layers"] == 1
    assert calc.kv_bytes_per_token(m) == 2 * layers * 8 * 128 * 2 == per_token
    assert m.sliding_window is None and m.layer_kinds == ("full",) * layers
    # a 131,072-token sequence: GLM-4.5 131,072 x 376,832 = 49,392,123,904 B (49.4 GB); fp8 halves it
    assert calc.kv_cache_bytes(m, 131_072) == 131_072 * per_token
    assert calc.kv_cache_bytes(m, 131_072, kv_dtype="fp8") == 131_072 * per_token / 2
    assert calc.kv_cache_bytes(get_model("glm-4.5"), 131_072) == 49_392_123_904


def test_the_mtp_layer_is_counted_apart_and_not_loaded():
    # GLM-4.5's MTP layer (num_nextn_predict_layers 1): one MoE layer as above (3,935,625,632) and its glue, eh_proj
    # 2 x 5120 x 5120 = 52,428,800 and three norms 3 x 5,120 = 15,360: 3,988,069,792; per drafted token its active
    # layer 349,495,552, the glue 52,444,160 and the head's matmul 151,552 x 5,120 = 775,946,240: 1,177,885,952
    m = get_model("glm-4.5")
    assert m.n_mtp_layers == 1
    assert m.n_mtp_params == 3_935_625_632 + 52_428_800 + 15_360 == 3_988_069_792
    assert m.n_mtp_active_params == 349_495_552 + 52_444_160 + 775_946_240 == 1_177_885_952
    assert m.params_loaded() == m.n_params  # engines load it only for MTP speculative decoding
    assert calc.weight_bytes(m) == 2 * 352_797_829_024


@pytest.mark.parametrize("model_id, total_b, active_b", [
    # GLM-4.5 report and model cards: "355 billion total parameters with 32 billion active parameters" and "106
    # billion total parameters and 12 billion active parameters" (GLM-4.5-Air); GLM-4.7, of GLM-4.5's shapes, against
    # GLM-4.5's figures (its own card is not on file).
    # Totals within 1% (352.80B and 106.85B counted: the figures' convention is not stated, and with the MTP layer
    # GLM-4.5 would be 356.79B). The active figures count the layers, not the untied embedding and head (a lookup and
    # the output matmul, 1.55B and 1.24B): 32.08B and 12.18B, to the figures' whole billions.
    ("glm-4.5", 355, 32), ("glm-4.5-air", 106, 12), ("glm-4.7", 355, 32),
])
def test_counts_against_the_published_figures(model_id, total_b, active_b):
    m = get_model(model_id)
    assert m.n_params / 1e9 == pytest.approx(total_b, rel=0.01)
    layers_active = m.n_active_params - 2 * m.vocab_size * m.d_model - m.d_model
    assert layers_active / 1e9 == pytest.approx(active_b, abs=0.5)


def test_glm_4_7_is_glm_4_5_with_a_longer_window():
    # the two config.json files hold the same keys and values but max_position_embeddings (202,752 and 131,072)
    a, b = hf_config("glm-4.5"), hf_config("glm-4.7")
    assert {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} == {"max_position_embeddings"}
    g47 = get_model("glm-4.7")
    assert g47.max_context_len == 202_752 and get_model("glm-4.5").max_context_len == 131_072
    assert g47.with_changes(name="GLM-4.5", max_context_len=131_072) == get_model("glm-4.5")
    # a 150,000-token context is inside GLM-4.7's trained window, past GLM-4.5's
    from calc.models import beyond_trained_window
    assert beyond_trained_window(g47, 150_000) is None
    assert beyond_trained_window(get_model("glm-4.5"), 150_000) == 131_072


@pytest.mark.parametrize("checkpoint, preset", [
    ("zai-org/GLM-4.5", "glm-4.5"), ("zai-org/GLM-4.5-FP8", "glm-4.5"), ("zai-org/GLM-4.5-Base", "glm-4.5"),
    ("zai-org/GLM-4.5-Air", "glm-4.5-air"), ("zai-org/GLM-4.5-Air-FP8", "glm-4.5-air"),
    ("zai-org/GLM-4.7", "glm-4.7"), ("zai-org/GLM-4.7-FP8", "glm-4.7"), ("nvidia/GLM-4.7-NVFP4", "glm-4.7"),
    # GLM-4.6: served as GLM-4.7 (checkpoint_aliases.json says on what evidence)
    ("zai-org/GLM-4.6", "glm-4.7"), ("zai-org/GLM-4.6-FP8", "glm-4.7"),
])
def test_a_served_checkpoint_finds_its_preset(checkpoint, preset):
    assert match_checkpoint(checkpoint) == preset
    assert get_model(checkpoint) is get_model(preset)


@pytest.mark.parametrize("other", [
    # GLM-4.7-Flash is a 30B MLA model (glm4_moe_lite), GLM-4.5V and GLM-4.6V vision models (Glm4vMoe), GLM-4-9B a
    # dense model: none of them may pass for the 355B or 106B presets
    "zai-org/GLM-4.7-Flash", "zai-org/GLM-4.5V", "zai-org/GLM-4.6V", "zai-org/GLM-4.6V-Flash", "THUDM/glm-4-9b-chat",
    "zai-org/GLM-4-32B-0414",
])
def test_a_different_glm_model_names_no_preset(other):
    assert match_checkpoint(other) is None
    with pytest.raises(ValueError, match="unknown model"):
        get_model(other)


@pytest.mark.parametrize("model_id, gpu, kw", [
    ("glm-4.5", "h200", dict(tp=8, weight_dtype="fp8", engine="vllm")),
    ("glm-4.5-air", "h100-sxm", dict(tp=4, weight_dtype="bf16", engine="sglang")),
    ("glm-4.7", "h200", dict(tp=8, ep=8, weight_dtype="fp8", engine="sglang")),
])
def test_a_serving_estimate_runs(model_id, gpu, kw):
    import math
    from calc.serving import serving_estimate
    e = serving_estimate(model_id, gpu, 1024, 1024, concurrency=32, **kw)
    for t in (e.ttft, e.tpot):
        assert math.isfinite(t.estimate_s) and 0 < t.bound_s <= t.estimate_s
    assert math.isfinite(e.output_tokens_per_s) and e.output_tokens_per_s > 0


@pytest.mark.parametrize("model_id, per_token", [
    ("glm-4.5", "376,832 B"), ("glm-4.5-air", "188,416 B"), ("glm-4.7", "376,832 B"),  # 2 x L x 8 x 128 x 2 B
])
def test_every_page_opens_with_the_preset(model_id, per_token):
    # each page runs with the preset selected and keeps it; the KV page shows the hand count of the 92 (46) layers
    from pagetest import metric, open_page
    from ui.nav import PAGES
    at = open_page(model=model_id)
    for path, *_ in PAGES[1:]:
        at.switch_page(path).run()
        assert not at.exception, (path, at.exception)
        assert at.session_state["_selection"].model_id == model_id, path
        if path.endswith("kv_cache.py"):
            assert metric(at, "KV per token") == per_token


@pytest.mark.parametrize("linked", ["glm-4.6", "zai-org/GLM-4.6-FP8", "GLM-4.7"])
def test_a_link_naming_a_checkpoint_or_alias_opens_its_preset_and_says_so(linked):
    import pagetest
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    at.query_params["model"] = linked
    at.switch_page("app_pages/kv_cache.py").run()  # the link opens on the page itself, as a browser does
    assert not at.exception, at.exception
    assert at.sidebar.selectbox(key="model").value == "glm-4.7"
    said = [i.value for i in at.sidebar.info]
    assert any("is read as the preset glm-4.7" in s and linked[:20] in s for s in said), said
    # the page then shows GLM-4.7's cache: 376,832 B per token in bf16 (2 x 92 layers x 8 KV heads x 128 x 2 B)
    assert pagetest.metric(at, "KV per token") == "376,832 B"
    # and no link notice calls it unknown
    assert not any("not a known model" in str(w.value) for w in at.warning)
