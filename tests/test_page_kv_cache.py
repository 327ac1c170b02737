"""AppTest of the KV cache bill page: widgets -> calc.kv / calc.memory -> metrics, verdict, charts, table.

Hand numbers (seed 000 step 2; seed 003 "must-memorize formula" 2 x L x K x H x bytes):
Llama-3-8B has L = 32, K = 8, H = 128, N = 32 query heads, 8,030,261,248 parameters.
"""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import calc
from ui.formats import fmt_bytes
import pagetest
from pagetest import metric, figures

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/kv_cache.py"
LLAMA = calc.get_model("llama-3-8b")


def open_page(**query) -> AppTest:
    return pagetest.open_page(PAGE, timeout=60, **query)


@pytest.fixture(scope="module")
def default_page():
    return open_page()


def test_default_page_shows_the_hand_numbers(default_page):
    at = default_page
    # 2 x 32 x 8 x 128 x 2 bytes = 131,072 B per token; x 8,192 tokens = 1,073,741,824 B = 1.07 GB.
    assert metric(at, "KV per token") == "131,072 B"
    assert metric(at, "KV per sequence") == "1.07 GB"
    assert metric(at, "KV in total (B = 1)") == "1.07 GB"
    # 8,030,261,248 x 2 bytes = 16.06 GB of weights; 16.06 + 1.07 = 17.13 GB fits in 80 GB.
    assert metric(at, "Weights") == "16.06 GB"
    assert "fits on one" in at.success[0].value and "17.13 GB" in at.success[0].value
    assert len(figures(at)) == 2


def test_variants_table_by_hand(default_page):
    df = pagetest.tables(default_page)[0].set_index("layout")
    # MHA: K = N = 32 -> 4 x 131,072 = 524,288 B; MQA: K = 1 -> 16,384 B;
    # MLA with d_c = 4H = 512, d_h^R = H/2 = 64: 32 x 576 x 2 = 36,864 B.
    assert df.loc["MHA", "kv_bytes_per_token"] == "524,288 B"
    assert df.loc["MQA", "kv_bytes_per_token"] == "16,384 B"
    assert df.loc["MLA", "kv_bytes_per_token"] == "36,864 B"
    # Window 4096 at 8,192 tokens: every layer keeps 4,096 tokens -> 4,096 x 131,072 = 536.87 MB.
    assert df.loc["Window 4096", "kv_bytes_per_sequence"] == "536.87 MB"


def test_context_and_batch_sliders_change_the_metrics():
    at = open_page()
    at.select_slider(key="kv_ctx").set_value(32768).run()
    at.select_slider(key="kv_b").set_value(4).run()
    assert not at.exception
    # Exactly what calc computes, through the same formatter ...
    assert metric(at, "KV per sequence") == fmt_bytes(calc.kv_cache_bytes(LLAMA, 32768))
    assert metric(at, "KV in total (B = 4)") == fmt_bytes(calc.kv_cache_bytes(LLAMA, 32768, 4))
    # ... and by hand: 131,072 x 32,768 = 4,294,967,296 B per sequence; x 4 = 17.18 GB.
    assert metric(at, "KV per sequence") == "4.29 GB"
    assert metric(at, "KV in total (B = 4)") == "17.18 GB"


@pytest.mark.parametrize("layout, extra, per_token", [
    ("gqa", {"kv_k": 4}, "65,536 B"),        # 2 x 32 x 4 x 128 x 2
    ("mqa", {}, "16,384 B"),                 # 2 x 32 x 1 x 128 x 2
    ("mha", {}, "524,288 B"),                # 2 x 32 x 32 x 128 x 2
    ("mla", {"kv_rank": 256}, "20,480 B"),   # 32 x (256 + 64) x 2
])
def test_attention_layout_controls(layout, extra, per_token):
    at = open_page()
    at.radio(key="kv_layout").set_value(layout).run()
    for k, v in extra.items():
        (at.selectbox if k == "kv_k" else at.select_slider)(key=k).set_value(v).run()
    assert not at.exception and not at.error
    assert metric(at, "KV per token") == per_token


def test_kv_heads_offers_only_divisors_and_starts_at_the_models_own_k():
    # Qwen2.5-7B: N = 28 query heads, K = 4 (its config.json). Divisors of 28: 1, 2, 4, 7, 14, 28.
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(model="qwen2.5-7b", kv_layout="gqa")     # the layout's id, as a person types it
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert at.radio(key="kv_layout").value == "gqa"
    k = at.selectbox(key="kv_k")
    assert k.value == 4 and k.options == ["1", "2", "4", "7", "14", "28"]
    # 28 layers x 2 x 4 x 128 x 2 bytes = 57,344 B per token
    assert metric(at, "KV per token") == "57,344 B"
    at.selectbox(key="kv_k").set_value(7).run()
    assert metric(at, "KV per token") == "100,352 B"       # 2 x 28 x 7 x 128 x 2
    # A K that does not divide the new model's 32 heads gives way to that model's own K = 8.
    at.selectbox(key="model").set_value("llama-3-8b").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="kv_k").value == 8
    assert metric(at, "KV per token") == "131,072 B"


def test_a_linked_k_that_does_not_divide_falls_back_to_the_models_own():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(model="qwen2.5-7b", kv_layout="GQA", kv_k="8")   # 8 does not divide 28
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="kv_k").value == 4


def test_hybrid_window_and_both_sliding_conventions():
    at = open_page()
    at.select_slider(key="kv_ctx").set_value(32768).run()
    at.selectbox(key="kv_win").set_value("4096").run()
    at.select_slider(key="kv_ratio").set_value(5).run()
    # 5:1 over 32 layers: layers 6, 12, 18, 24, 30 are global -> 5 full + 27 sliding.
    # 131,072 / 32 = 4,096 B per token and layer; (5 x 32,768 + 27 x 4,096) x 4,096 = 1,124,073,472 B.
    assert metric(at, "KV per sequence") == "1.12 GB"
    at.toggle(key="kv_full").set_value(True).run()
    # Reserved at full length: 32 x 32,768 x 4,096 = 4.29 GB.
    assert metric(at, "KV per sequence") == "4.29 GB"


def test_experiment_8b_at_128k():
    at = open_page(model="gpt2")
    at.button(key="kv_exp_btn_0").click().run()
    assert not at.exception
    # Llama-3.1-8B: Llama-3-8B's shapes, trained for 128K (the lecture's step 5), so the experiment's own state is
    # within the model's window; Llama-3-8B was trained for 8K and would open on a "beyond the window" warning.
    assert at.session_state["model"] == "llama-3.1-8b"
    assert at.select_slider(key="kv_ctx").value == 131072 and at.select_slider(key="kv_b").value == 1
    # 131,072 x 131,072 = 17,179,869,184 B: the cache outgrows the 16.06 GB of weights.
    assert metric(at, "KV per sequence") == "17.18 GB"
    assert metric(at, "Weights") == "16.06 GB"
    assert not [w.value for w in at.warning if "Beyond the model's window" in w.value]


def test_experiment_gpt3_mha():
    at = open_page()
    at.button(key="kv_exp_btn_1").click().run()
    assert at.session_state["model"] == "gpt-3-175b" and at.radio(key="kv_layout").value == "model"
    # 96 layers, 96 KV heads, H = 128: 2 x 96 x 96 x 128 x 2 = 4,718,592 B per token.
    assert metric(at, "KV per token") == "4,718,592 B"
    # Weights 174.6e9 x 2 = 349 GB + 38.7 GB of cache: 5 x 80 GB.
    assert any("needs 5 x" in w.value for w in at.warning)
    # ...and the course's 8K is past GPT-3's 2,048-token window: the page says so
    assert any("Beyond the model's window" in w.value and "2,048" in w.value for w in at.warning)
    # a page of arithmetic says its figures are that: the cache's bytes at a length the model was not trained for
    assert any(w.value.endswith("The figures below are the arithmetic of a cache that long; the model itself does "
                                "not use a context past its window.") for w in at.warning)


def test_experiment_deepseek_mla():
    at = open_page()
    at.button(key="kv_exp_btn_2").click().run()
    assert at.session_state["model"] == "deepseek-v3"
    assert at.select_slider(key="kv_ctx").value == 131072
    # 61 layers x (512 + 64) x 2 bytes = 70,272 B per token; x 131,072 = 9.21 GB (vs 17.18 GB for the 8B).
    assert metric(at, "KV per token") == "70,272 B"
    assert metric(at, "KV per sequence") == "9.21 GB"
    at.toggle(key="kv_exp").set_value(True).run()
    # Expanded: 128 heads x (128 + 64) for K + 128 x 128 for V = 40,960 elements per layer;
    # 61 x 40,960 x 2 = 4,997,120 B per token.
    assert metric(at, "KV per token") == "4,997,120 B"


def test_bad_config_json_is_an_error_and_keeps_the_model():
    at = open_page(model="mistral-7b-v0.1")
    at.text_area(key="cfg_text").input("{not json").run()
    at.button(key="cfg_load").click().run()
    assert not at.exception
    assert at.error
    assert at.session_state["model"] == "mistral-7b-v0.1"
    assert metric(at, "KV per token") == "131,072 B"   # Mistral 7B: 2 x 32 x 8 x 128 x 2


def test_pasted_config_becomes_the_model():
    cfg = calc.models.hf_config("llama-3.2-1b")
    at = open_page()
    at.text_area(key="cfg_text").input(json.dumps(cfg)).run()
    at.button(key="cfg_load").click().run()
    assert not at.exception and not at.error
    # Llama-3.2-1B: 16 layers, K = 8, H = 64: 2 x 16 x 8 x 64 x 2 = 32,768 B per token.
    assert metric(at, "KV per token") == "32,768 B"


def test_garbage_url_values_fall_back_to_defaults():
    at = open_page(kv_ctx="banana", kv_b="-3", kv_k="x", kv_win="zzz", kv_layout="foo", kv_ratio="9",
                   kv_rank="1e99", kv_full="maybe")
    assert at.select_slider(key="kv_ctx").value == 8192
    assert at.select_slider(key="kv_b").value == 1
    assert at.radio(key="kv_layout").value == "model"
    assert metric(at, "KV per sequence") == "1.07 GB"


def test_deep_link_reproduces_the_view():
    at = open_page(kv_ctx="32K", kv_b="4", kv_layout="MQA")
    # MQA: 16,384 B per token x 32,768 tokens x 4 = 2.15 GB.
    assert metric(at, "KV in total (B = 4)") == "2.15 GB"


def test_hybrid_config_shows_the_per_layer_breakdown():
    # Qwen3-Next-style stack: 4 layers, every 4th full attention (K = 2 of 256: 2 x 2 x 256 x 2 = 2,048 B per
    # token), 3 Gated DeltaNet layers with the Qwen3-Next shapes (transformers defaults): each conv
    # 3 x (2 x 16 x 128 + 32 x 128) x 2 B = 49,152 B + recurrent 32 x 128 x 128 x 4 B = 2,097,152 B.
    cfg = {"model_type": "qwen3_next", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 256, "intermediate_size": 1024, "vocab_size": 1000,
           "full_attention_interval": 4}
    at = open_page()
    at.text_area(key="cfg_text").input(json.dumps(cfg)).run()
    at.button(key="cfg_load").click().run()
    assert not at.exception and not at.error
    assert metric(at, "KV per token") == "2,048 B"
    assert metric(at, "Constant per sequence") == fmt_bytes(3 * (49_152 + 2_097_152))
    # 8,192 x 2,048 B + 6,438,912 B = 23,216,128 B
    assert metric(at, "KV per sequence") == fmt_bytes(8192 * 2048 + 3 * (49_152 + 2_097_152))
    table = next(d for d in pagetest.tables(at) if "tokens_held" in d.columns).set_index("kind")
    assert table.loc["linear_attention", "layers"] == 3 and table.loc["full", "layers"] == 1
    assert table.loc["full", "tokens_held"] == "8,192" and table.loc["linear_attention", "tokens_held"] == "0"


@pytest.mark.parametrize("model_id, per_token, state", [
    ("minimax-m1", "40,960 B", 293_601_280),   # 10 softmax layers x 2 x 8 x 128 x 2 B; 70 x 64 x 128 x 128 x 4 B
    ("deepseek-v3.2", "78,324 B", 0),          # 61 x (576 x 2 B latent + 132 B indexer key)
    ("qwen3-next-80b-a3b", "24,576 B", 77_266_944),  # 12 x 2 x 2 x 256 x 2 B; 36 x (3 x 8,192 x 2 + 32 x 128^2 x 4) B
    ("qwen3.5-27b", "65,536 B", 153_944_064),  # 16 x 2 x 4 x 256 x 2 B; 48 x (3 x 10,240 x 2 + 48 x 128^2 x 4) B
    ("kimi-k2", "70,272 B", 0),                # 61 x 576 x 2 B latent
    ("qwen3.5-35b-a3b", "20,480 B", 64_389_120),  # 10 x 2 x 2 x 256 x 2 B; 30 x (3 x 8,192 x 2 + 32 x 128^2 x 4) B
    ("nemotron-h-56b", "40,960 B", 912_605_184),  # 10 x 2 x 8 x 128 x 2 B; 54 x (3 x 20,480 x 2 + 256 x 64 x 256 x 4) B
])
def test_hybrid_presets_load(model_id, per_token, state):
    at = open_page(model=model_id)
    assert metric(at, "KV per token") == per_token
    assert metric(at, "Constant per sequence") == fmt_bytes(state)


def test_the_explanation_quotes_the_selected_model():
    # Qwen3-8B: L = 36, K = 8, H = 128 -> 2 x 36 x 8 x 128 x 2 B = 147,456 B per token;
    # x 8,192 = 1,207,959,552 B = 1.21 GB per 8K sequence; x 131,072 = 19.33 GB at 128K
    text = " ".join(m.value for m in open_page(model="qwen3-8b").markdown)
    assert "for Qwen3-8B (bf16 cache) 147,456 B" in text and "1.21 GB per 8K" in text and "19.33 GB at 128K" in text
    assert "Llama-3-8B" not in text
    # the default is the course's: 131,072 B, 1.07 GB at 8K, 17.18 GB at 128K, more than 16.06 GB of weights
    text = " ".join(m.value for m in open_page().markdown)
    assert "131,072 B" in text and "1.07 GB per 8K" in text and "17.18 GB at 128K, more than its 16.06 GB" in text


def test_lightning_state_dtype_convention_from_the_url():
    # MiniMax-M1's 70 lightning layers hold 64 x 128 x 128 each: 73,400,320 elements per sequence,
    # 293,601,280 B in fp32 (the reference, calc's default) and 146,800,640 B in the model's bf16 (vLLM).
    for query, state, dtype in (({}, 293_601_280, "fp32"), ({"kv_state": "vllm"}, 146_800_640, "bf16")):
        at = open_page(model="minimax-m1", **query)
        assert not at.exception
        assert metric(at, "Constant per sequence") == fmt_bytes(state)
        table = next(d for d in pagetest.tables(at) if "tokens_held" in d.columns).set_index("kind")
        assert table.loc["lightning", "state_dtype"] == dtype and table.loc["full", "state_dtype"] == ""
        assert at.radio(key="kv_state").value == ("vllm" if query else "reference")
    # a model without lightning layers: the control is off and changes nothing
    at = open_page(kv_state="vllm")
    assert at.radio(key="kv_state").disabled and metric(at, "KV per sequence") == "1.07 GB"


@pytest.mark.parametrize("layout, model, says", [
    ("mqa", "llama-3-8b", "MQA: K = 1"),
    ("mha", "llama-3-8b", "MHA: K = N = 32"),          # Llama-3-8B: 32 query heads
    ("model", "qwen2.5-7b", "As configured: K = 4"),   # Qwen2.5-7B: 28 query heads, 4 KV heads
    ("model", "deepseek-v3", "As configured: MLA, no KV heads"),
])
def test_the_greyed_k_box_says_which_k_the_layout_uses(layout, model, says):
    at = pagetest.open_page("app_pages/kv_cache.py", kv_layout=layout, model=model)
    assert any(c.value.startswith(says) for c in at.caption), [c.value for c in at.caption]


@pytest.mark.parametrize("query, says", [
    # Llama-4-Scout (config.json: 48 layers, no RoPE, so full attention, in every 4th: no_rope_layers /
    # interleave 4): 48 / 4 = 12 full, 36 chunked, 3:1 (not the slider's own 5:1)
    ({"model": "llama-4-scout"}, "As configured: 36 chunked and 12 full-attention layers (3:1)"),
    # Gemma-3-27B: 62 layers, every 6th global: floor(62 / 6) = 10 full, 52 sliding, 52 / 10 = 5.2:1
    ({"model": "gemma-3-27b"}, "As configured: 52 sliding-window and 10 full-attention layers (5.2:1)"),
    ({}, "As configured: all 32 layers full attention"),                    # Llama-3-8B
    ({"kv_win": "none", "model": "gemma-3-27b"}, "No window: every attention layer holds the full context"),
])
def test_the_greyed_ratio_slider_says_which_stack_is_shown(query, says):
    at = open_page(**query)
    assert at.select_slider(key="kv_ratio").disabled
    assert any(c.value.startswith(says) for c in at.caption), [c.value for c in at.caption]
    # a window the user chooses takes the slider, and the words go
    at.selectbox(key="kv_win").set_value("4096").run()
    assert not at.select_slider(key="kv_ratio").disabled
    assert not any("the slider above applies" in c.value for c in at.caption)


@pytest.mark.parametrize("query, window_on, mla_on", [
    ({}, False, False),                                  # Llama-3-8B: full attention everywhere, GQA
    ({"kv_win": "4096"}, True, False),                   # a 4,096-token window on 5 of each 6 layers
    ({"kv_layout": "mla"}, False, True),                 # Llama-3-8B recast as MLA
    ({"model": "gemma-2-9b"}, True, False),              # its own 4,096-token window on half the layers
    ({"model": "deepseek-v3"}, False, True),             # MLA as configured
])
def test_the_storage_conventions_are_offered_where_they_change_the_bytes(query, window_on, mla_on):
    at = open_page(**query)
    assert at.toggle(key="kv_full").disabled is (not window_on)
    assert at.toggle(key="kv_exp").disabled is (not mla_on)
    # Cross-check with calc, independently of the page: the convention changes the cache of the model shown.
    m = calc.get_model(query.get("model", "llama-3-8b"))
    if query.get("kv_win"):
        m = calc.kv.with_attention_layout(m, "model", m.n_kv_heads, 512, int(query["kv_win"]), 5)
    if query.get("kv_layout") == "mla":
        m = calc.kv.with_attention_layout(m, "mla", m.n_kv_heads, 512, None, 5)
    s = 32768
    assert (calc.kv_cache_bytes(m, s, sliding="full") != calc.kv_cache_bytes(m, s)) is window_on
    assert (calc.kv_cache_bytes(m, s, mla="expanded") != calc.kv_cache_bytes(m, s)) is mla_on


def test_flashmla_fp8_cache_and_a_format_the_model_cannot_store():
    # DeepSeek-V3 in FlashMLA's fp8 cache: 61 layers x (512 fp8 + 4 fp32 scales + 64 bf16 RoPE) = 61 x 656
    # = 40,016 B per token (FlashMLA README, "FP8 KV cache"; vLLM kv_cache_dtype "fp8_ds_mla").
    at = open_page(model="deepseek-v3", kvq="fp8_ds_mla")
    assert metric(at, "KV per token") == "40,016 B" and not at.exception
    # Llama-3-8B has no MLA latent: the sidebar says so, the page shows the reason, nothing crashes.
    at = open_page(kvq="fp8_ds_mla")
    assert any("no latent cache" in e.value for e in at.sidebar.error)
    assert any("no latent cache" in e.value for e in at.error) and not at.exception


def test_deepseek_v4_numbers_agree_with_each_other():
    at = open_page(model="deepseek-v4-pro")
    assert not at.exception and not at.error
    # By hand at S = 8,192, bf16: 30 csa layers hold 128 window entries of 1,024 B and 8,192 / 4 = 2,048 compressed
    # entries of 1,024 + 132 B (indexer key): 2,498,560 B each; 31 hca layers 128 + 8,192 / 128 = 64 entries of
    # 1,024 B: 196,608 B each. 74,956,800 + 6,094,848 = 81,051,648 B; / 8,192 = 9,894 B per token. Compressor
    # state: 30 x 81,920 + 31 x 524,288 = 18,710,528 B; sequence 99,762,176 B.
    assert metric(at, "KV per token (average at 8,192)") == "9,894 B"
    assert metric(at, "Constant per sequence") == fmt_bytes(18_710_528)
    assert metric(at, "KV per sequence") == fmt_bytes(99_762_176) == "99.76 MB"
    table = next(d for d in pagetest.tables(at) if "tokens_held" in d.columns).set_index("kind")
    assert table.loc["csa (r=4, W=128): window", "tokens_held"] == "128"
    assert table.loc["csa (r=4, W=128): compressed entries", "tokens_held"] == "2,048"
    assert table.loc["csa (r=4, W=128): compressed entries", "bytes_per_token"] == "1,156 B"
    assert table.loc["hca (r=128, W=128): compressed entries", "tokens_held"] == "64"
    # every row multiplies out: layers x tokens held x bytes per token = its per-token part
    per_layer = calc.layers.layer_breakdown(calc.get_model("deepseek-v4-pro"), 8192)
    assert (per_layer["layers"] * per_layer["tokens_held"] * per_layer["bytes_per_token"]
            == per_layer["cache_bytes"]).all()
    assert table.loc["csa (r=4, W=128): compressed entries", "cache_bytes"] == fmt_bytes(30 * 2048 * 1156)
    prose = " ".join(m.value for m in at.markdown)
    assert "99.76 MB per 8K sequence (9,894 B per token on average" in prose
    assert "csa and hca layers keep their last W tokens" in " ".join(c.value for c in at.caption)


@pytest.mark.parametrize("layout, per_seq", [
    ("mha", 61 * 2 * 128 * 512 * 2 * 8192),   # 131.00 GB: 61 full layers of K = N = 128 heads of H = 512, bf16
    ("mqa", 61 * 2 * 1 * 512 * 2 * 8192),     # 1.02 GB
])
def test_deepseek_v4_under_another_layout_matches_the_comparison_table(layout, per_seq):
    at = open_page(model="deepseek-v4-pro", kv_layout=layout)
    assert not at.exception and not at.error
    assert metric(at, "KV per sequence") == fmt_bytes(per_seq)
    assert any("csa and hca layers become full-attention layers" in c.value for c in at.caption)
    table = next(d for d in pagetest.tables(at) if "kv_bytes_total" in d.columns).set_index("layout")
    assert table.loc[layout.upper(), "kv_bytes_total"] == fmt_bytes(per_seq)


def test_minimax_m3_under_mqa():
    at = open_page(model="minimax-m3", kv_layout="mqa")
    assert not at.exception and not at.error
    # 60 layers (3 full, 57 sparse become full), K = 1, H = 128, bf16: 2 x 128 x 2 = 512 B each, 30,720 B per token
    assert metric(at, "KV per token") == "30,720 B"
    table = next(d for d in pagetest.tables(at) if "kv_bytes_total" in d.columns).set_index("layout")
    assert table.loc["MQA", "kv_bytes_total"] == fmt_bytes(30_720 * 8192)
