"""The Qwen2.5, Qwen3 and Phi-4 dense presets that published serving benchmarks use: counts and cache by hand, the
model cards' figures, and the served checkpoints that name them.

Oracles: hand counts from the shapes of each shipped config.json (arithmetic in the comments), the parameter figures
of the model cards, and the config.json of the served checkpoints (cited in calc/data/checkpoint_aliases.json). The
round trip catalogue entry == from_hf_config(stored file) is in tests/test_models.py for every preset, and the totals
against the cards with their tolerances in tests/test_published_totals.py.
"""
from __future__ import annotations


import pytest

import calc
from calc.models import get_model, hf_config, match_checkpoint
from calc.param_count import count_params

QWEN25 = ["qwen2.5-72b", "qwen2.5-32b", "qwen2.5-14b", "qwen2.5-3b", "qwen2.5-1.5b"]
QWEN3 = ["qwen3-14b", "qwen3-4b", "qwen3-1.7b", "qwen3-0.6b"]
NEW = QWEN25 + QWEN3


def test_qwen2_5_72b_count_by_hand():
    # Qwen2.5-72B (config.json): V 152,064, D 8,192, 80 layers, 64 query / 8 KV heads of 128, F 29,568, untied,
    # QKV bias (Qwen2 has biases on q, k and v, none on o). Per layer:
    #   q 8192 x 8192 = 67,108,864; k, v 2 x 8192 x 1024 = 16,777,216; o 67,108,864; QKV bias 8192 + 2 x 1024 = 10,240
    #   MLP 3 x 8192 x 29568 = 726,663,168; 2 norms 16,384                       -> 877,684,736
    #   x 80 = 70,214,778,880; embedding and head 2 x 152,064 x 8,192 = 2,491,416,576; final norm 8,192
    #   = 72,706,203,648 (model card: 72.7B)
    per_layer = 67_108_864 + 16_777_216 + 67_108_864 + 10_240 + 726_663_168 + 16_384
    assert per_layer == 877_684_736
    total = 80 * per_layer + 2_491_416_576 + 8_192
    m = get_model("qwen2.5-72b")
    assert m.n_params == total == 72_706_203_648
    assert count_params(hf_config("qwen2.5-72b")) == (total, total)
    assert m.n_active_params is None and not m.is_moe and not m.tie_word_embeddings


def test_qwen3_4b_count_by_hand_tied_with_qk_norm():
    # Qwen3-4B (config.json): V 151,936, D 2,560, 36 layers, 32 query / 8 KV heads of 128 (N x H = 4,096, wider than
    # D), F 9,728, tied, QK-norm, no biases. Per layer:
    #   q 2560 x 4096 = 10,485,760; k, v 2 x 2560 x 1024 = 5,242,880; o 4096 x 2560 = 10,485,760
    #   MLP 3 x 2560 x 9728 = 74,711,040; 2 norms 5,120; q_norm and k_norm 2 x 128 = 256   -> 100,930,816
    #   x 36 = 3,633,509,376; one embedding (tied) 151,936 x 2,560 = 388,956,160; final norm 2,560
    #   = 4,022,468,096 (model card: 4.0B; non-embedding 3.63B, card 3.6B)
    per_layer = 10_485_760 + 5_242_880 + 10_485_760 + 74_711_040 + 5_120 + 256
    assert per_layer == 100_930_816
    m = get_model("qwen3-4b")
    assert m.n_params == 36 * per_layer + 388_956_160 + 2_560 == 4_022_468_096
    assert m.tie_word_embeddings and m.head_dim == 128 and m.n_heads * m.head_dim == 4096 != m.d_model


@pytest.mark.parametrize("model_id, layers, kv_heads, per_token_bytes", [
    # bf16, per token: 2 (K and V) x layers x KV heads x head_dim 128 x 2 bytes; every layer full attention
    ("qwen2.5-72b", 80, 8, 327_680),   # 2 x 80 x 8 x 128 x 2
    ("qwen2.5-32b", 64, 8, 262_144),   # 2 x 64 x 8 x 128 x 2
    ("qwen2.5-14b", 48, 8, 196_608),   # 2 x 48 x 8 x 128 x 2
    ("qwen2.5-3b", 36, 2, 36_864),     # 2 x 36 x 2 x 128 x 2
    ("qwen2.5-1.5b", 28, 2, 28_672),   # 2 x 28 x 2 x 128 x 2
    ("qwen3-14b", 40, 8, 163_840),     # 2 x 40 x 8 x 128 x 2
    ("qwen3-4b", 36, 8, 147_456),      # 2 x 36 x 8 x 128 x 2
    ("qwen3-1.7b", 28, 8, 114_688),    # 2 x 28 x 8 x 128 x 2
    ("qwen3-0.6b", 28, 8, 114_688),    # 2 x 28 x 8 x 128 x 2
])
def test_kv_bytes_per_token_by_hand(model_id, layers, kv_heads, per_token_bytes):
    m = get_model(model_id)
    assert (m.n_layers, m.n_kv_heads, m.head_dim) == (layers, kv_heads, 128)
    assert calc.kv_bytes_per_token(m) == 2 * layers * kv_heads * 128 * 2 == per_token_bytes
    # no window: the cache of a 32,768-token sequence is 32,768 times the per-token bytes; fp8 halves it
    assert m.sliding_window is None and m.layer_kinds == ("full",) * layers
    assert calc.kv_cache_bytes(m, 32_768) == 32_768 * per_token_bytes
    assert calc.kv_cache_bytes(m, 32_768, kv_dtype="fp8") == 32_768 * per_token_bytes / 2


def test_qwen_sliding_keys_stay_inert():
    # every Qwen2.5 file carries sliding_window (131,072 or 32,768) with use_sliding_window false; Qwen3's is null
    for model_id in QWEN25:
        cfg = hf_config(model_id)
        assert cfg["use_sliding_window"] is False and cfg["sliding_window"] == cfg["max_position_embeddings"]
    for model_id in QWEN3:
        assert hf_config(model_id)["sliding_window"] is None
    assert all(get_model(k).sliding_window is None for k in NEW)


@pytest.mark.parametrize("model_id, non_embedding_b", [
    # the model cards' "Number of Parameters (Non-Embedding)", to their last digit: total less V x D (tied) or
    # 2 x V x D (untied). Qwen2.5-3B: 3,085,938,688 - 151,936 x 2,048 = 2,774,777,856 (card 2.77B); Qwen3-14B:
    # 14,768,307,200 - 2 x 151,936 x 5,120 = 13,212,482,560 (card 13.2B)
    ("qwen2.5-3b", 2.77), ("qwen2.5-1.5b", 1.31), ("qwen3-14b", 13.2), ("qwen3-4b", 3.6), ("qwen3-1.7b", 1.4),
    ("qwen3-0.6b", 0.44),
])
def test_non_embedding_counts_match_the_model_cards(model_id, non_embedding_b):
    m = get_model(model_id)
    embedding = m.vocab_size * m.d_model * (1 if m.tie_word_embeddings else 2)
    digits = len(str(non_embedding_b).split(".")[1])
    assert round((m.n_params - embedding) / 1e9, digits) == non_embedding_b


def test_the_larger_qwen2_5_cards_fall_short_of_the_shapes_in_the_layers():
    # Qwen2.5-72B, -32B and -14B: the cards' non-embedding figures (70.0B, 31.0B, 13.1B) are 0.11 to 0.21B under the
    # count of the shipped shapes (total less 2 x V x D: 70.21B, 31.21B, 13.21B), and so are the 32B's and 14B's
    # totals (32.5B and 14.7B against 32.76B and 14.77B); the 72B's total, 72.7B, is the shapes' 72.71B
    for model_id, card_non_embedding_b in (("qwen2.5-72b", 70.0), ("qwen2.5-32b", 31.0), ("qwen2.5-14b", 13.1)):
        m = get_model(model_id)
        ours = (m.n_params - 2 * m.vocab_size * m.d_model) / 1e9
        assert 0.1 < ours - card_non_embedding_b < 0.22, model_id


def test_trained_windows_and_tying_follow_the_files():
    windows = {"qwen2.5-72b": 131_072, "qwen2.5-32b": 131_072, "qwen2.5-14b": 131_072, "qwen2.5-3b": 32_768,
               "qwen2.5-1.5b": 131_072, "qwen3-14b": 40_960, "qwen3-4b": 40_960, "qwen3-1.7b": 40_960,
               "qwen3-0.6b": 40_960}
    for model_id, window in windows.items():
        m = get_model(model_id)
        assert m.max_context_len == window == hf_config(model_id)["max_position_embeddings"], model_id
        assert m.tie_word_embeddings == hf_config(model_id)["tie_word_embeddings"], model_id
        assert m.checkpoint_format is None  # bf16 checkpoints
    # the small models tie their embeddings, the 14B and larger do not
    assert {k for k in NEW if get_model(k).tie_word_embeddings} == {"qwen2.5-3b", "qwen2.5-1.5b", "qwen3-4b",
                                                                      "qwen3-1.7b", "qwen3-0.6b"}


@pytest.mark.parametrize("checkpoint, preset", [
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"), ("Qwen/Qwen2.5-72B-Instruct-AWQ", "qwen2.5-72b"),
    ("Qwen/Qwen2.5-32B-Instruct", "qwen2.5-32b"), ("Qwen/Qwen2.5-14B-Instruct", "qwen2.5-14b"),
    ("Qwen/Qwen2.5-3B-Instruct", "qwen2.5-3b"), ("Qwen/Qwen2.5-1.5B-Instruct", "qwen2.5-1.5b"),
    ("Qwen/Qwen3-14B", "qwen3-14b"), ("Qwen/Qwen3-4B", "qwen3-4b"), ("Qwen/Qwen3-1.7B", "qwen3-1.7b"),
    ("Qwen/Qwen3-0.6B", "qwen3-0.6b"),
    # DeepSeek-R1-Distill-Qwen-32B's config.json is Qwen2.5-32B's, text for text (checkpoint_aliases.json)
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "qwen2.5-32b"),
    # the 2507 releases of Qwen3-235B-A22B keep its shapes (a longer max_position_embeddings only)
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b"), ("Qwen/Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b"),
])
def test_a_served_checkpoint_finds_its_preset(checkpoint, preset):
    assert match_checkpoint(checkpoint) == preset
    assert get_model(checkpoint) is get_model(preset)


@pytest.mark.parametrize("other", [
    # the other R1 distills have no verified config.json here, so no alias: none of them may pass for DeepSeek-R1
    # (671B, the "deepseek-r1" alias) or for a preset whose shapes were not checked against its file
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
    # a different model sharing a prefix: Qwen2.5-Math, Qwen2.5-Coder
    "Qwen/Qwen2.5-Math-1.5B", "Qwen/Qwen2.5-Coder-32B-Instruct",
    # Mistral-7B v0.2 and v0.3 dropped v0.1's 4,096-token sliding window (v0.3 also has a 32,768-token vocabulary):
    # mistral-7b-v0.1 would cap their cache at the window, so they must not fall to it
    "mistralai/Mistral-7B-Instruct-v0.2", "mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-v0.3",
])
def test_a_checkpoint_without_a_checked_config_names_no_preset(other):
    assert match_checkpoint(other) is None
    with pytest.raises(ValueError, match="unknown model"):
        get_model(other)


def test_the_distill_alias_has_the_presets_shapes():
    # the alias's cited file and the preset's shipped file agree on every key calc reads (the same text)
    m = get_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B")
    assert (m.n_layers, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.vocab_size) == (64, 5120, 40, 8, 27648, 152064)
    assert not m.tie_word_embeddings


def test_weights_of_the_72b_by_hand():
    # bf16: 2 bytes x 72,706,203,648 = 145,412,407,296 B, more than one 80 GB card holds; fp8 half of it
    m = get_model("qwen2.5-72b")
    assert calc.weight_bytes(m) == 145_412_407_296
    assert calc.weight_bytes(m, "fp8") == 72_706_203_648


# -- Phi-4 ------------------------------------------------------------------------------------------------------------

def test_phi4_count_by_hand():
    # Phi-4 (config.json, Phi3ForCausalLM): V 100,352, D 5,120, 40 layers, 40 query / 10 KV heads of 128, F 17,920,
    # untied, no biases (its fused qkv_proj 5120 x 7680 and gate_up_proj 5120 x 35840 hold the Llama shapes). Per layer:
    #   q 5120 x 5120 = 26,214,400; k, v 2 x 5120 x 1280 = 13,107,200; o 26,214,400
    #   MLP 3 x 5120 x 17920 = 275,251,200; 2 norms 10,240                      -> 340,797,440
    #   x 40 = 13,631,897,600; embedding and head 2 x 100,352 x 5,120 = 1,027,604,480; final norm 5,120
    #   = 14,659,507,200 (Hugging Face: 14.7B; the Phi-4 report: 14B)
    per_layer = 26_214_400 + 13_107_200 + 26_214_400 + 275_251_200 + 10_240
    assert per_layer == 340_797_440
    total = 40 * per_layer + 1_027_604_480 + 5_120
    m = get_model("phi-4")
    assert m.n_params == total == 14_659_507_200
    assert count_params(hf_config("phi-4")) == (total, total)
    assert (m.n_heads, m.n_kv_heads, m.head_dim, m.attention) == (40, 10, 128, "gqa")
    assert not m.tie_word_embeddings and m.checkpoint_format is None


def test_phi4_cache_by_hand_with_its_window_equal_to_its_context():
    # bf16, per token: 2 x 40 layers x 10 KV heads x 128 x 2 bytes = 204,800 B. The file's sliding_window (16,384)
    # equals max_position_embeddings, so inside the trained context every token is kept:
    #   16,384 tokens: 16,384 x 204,800 = 3,355,443,200 B
    # past it a layer holds its last 16,384 tokens (the same bytes at 32,768), unless an engine reserves full length
    m = get_model("phi-4")
    assert calc.kv_bytes_per_token(m) == 2 * 40 * 10 * 128 * 2 == 204_800
    assert m.sliding_window == 16_384 == m.max_context_len and m.layer_kinds == ("sliding",) * 40
    assert calc.kv_cache_bytes(m, 16_384) == 16_384 * 204_800 == 3_355_443_200
    assert calc.kv_cache_bytes(m, 8_000) == 8_000 * 204_800
    assert calc.kv_cache_bytes(m, 32_768) == 3_355_443_200
    assert calc.kv_cache_bytes(m, 32_768, sliding="full") == 32_768 * 204_800


@pytest.mark.parametrize("checkpoint, preset", [
    ("microsoft/phi-4", "phi-4"), ("microsoft/phi-4-FP8", "phi-4"),
    # Phi-4-mini is another model (3.8B); Phi-4-reasoning's card gives a 32k-token context, past Phi-4's 16,384-token
    # window (its null alias in checkpoint_aliases.json)
    ("microsoft/Phi-4-mini-instruct", None), ("microsoft/Phi-4-reasoning", None),
    ("microsoft/Phi-4-reasoning-plus", None),
])
def test_phi4_checkpoints(checkpoint, preset):
    assert match_checkpoint(checkpoint) == preset
