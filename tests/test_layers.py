"""Tests of the per-layer description (calc/layers.py) and of reading hybrid configs (calc/models.py).

Oracles: hand arithmetic in the comments (one attention layer with K = 1 KV head of 128 in bf16
holds 2 * 1 * 128 * 2 = 512 B per token); the state shapes of vLLM's MambaStateShapeCalculator
(vllm/model_executor/layers/mamba/mamba_utils.py); transformers' own model classes built on the
meta device for the parameter counts.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calc
from calc import layers
from calc.config_json import from_hf_config
from calc.param_count import count_params
from hf_meta import transformers_param_count

# One attention layer: K = 1, H = 128, bf16 -> 2 * 1 * 128 * 2 = 512 B per token.
TINY = {"hidden_size": 256, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 128,
        "intermediate_size": 512, "vocab_size": 1000}
QWEN3_NEXT = {"model_type": "qwen3_next", "num_hidden_layers": 4, **TINY}


# -- the small failing inputs ---------------------------------------------------------------

def test_qwen3_next_interval_holds_one_attention_layer():
    # full_attention_interval 4 over 4 layers: layer 3 is full attention, 0-2 Gated DeltaNet -> 1 x 512 B.
    m = from_hf_config(dict(QWEN3_NEXT, full_attention_interval=4))
    assert m.layer_kinds == ("linear_attention",) * 3 + ("full",)
    assert calc.kv_bytes_per_token(m) == 512


def test_qwen3_next_layer_types_list_gives_the_same_answer():
    m = from_hf_config(dict(QWEN3_NEXT, layer_types=["linear_attention"] * 3 + ["full_attention"]))
    assert calc.kv_bytes_per_token(m) == 512
    assert m == from_hf_config(dict(QWEN3_NEXT, full_attention_interval=4))


def test_nemotron_h_pattern_m_star():
    # "M*": one Mamba2 layer (no per-token cache) and one attention layer -> 512 B per token.
    m = from_hf_config({"model_type": "nemotron_h", "num_hidden_layers": 2, "hybrid_override_pattern": "M*", **TINY})
    assert m.layer_kinds == ("mamba2", "full")
    assert calc.kv_bytes_per_token(m) == 512


def test_llama4_chunked_layers_hold_one_chunk():
    # 3 chunked layers (chunk 8,192) + 1 global (every 4th layer NoPE) at 16,384 tokens:
    # (16,384 + 3 x 8,192) x 512 = 40,960 x 512 = 20,971,520 B.
    m = from_hf_config({"model_type": "llama4_text", "num_hidden_layers": 4, "attention_chunk_size": 8192,
                        "no_rope_layers": [], **TINY})
    assert m.layer_kinds == ("chunked",) * 3 + ("full",) and m.attention_chunk_size == 8192
    assert calc.kv_cache_bytes(m, 16384) == (16384 + 3 * 8192) * 512 == 20_971_520
    # Past a chunk boundary the chunked layers hold the new chunk only: at 10,000 tokens the current
    # chunk holds 10,000 - 8,192 = 1,808 tokens -> (10,000 + 3 x 1,808) x 512.
    assert calc.kv_cache_bytes(m, 10000) == (10000 + 3 * 1808) * 512
    # An engine without a hybrid allocator reserves every layer at full length: 4 x 16,384 x 512.
    assert calc.kv_cache_bytes(m, 16384, sliding="full") == 4 * 16384 * 512


def test_gemma3n_shared_layers_own_no_cache():
    # 2 full-attention layers, the last one reuses the first one's cache -> 512 B per token.
    m = from_hf_config({"model_type": "gemma3n_text", "num_hidden_layers": 2,
                        "layer_types": ["full_attention"] * 2, "num_kv_shared_layers": 1, **TINY})
    assert m.n_kv_shared_layers == 1
    assert calc.kv_bytes_per_token(m) == 512
    assert [s.owns_cache for s in layers.layer_specs(m)] == [True, False]


def test_llama4_moe_layer_counts_its_shared_expert():
    # 1 layer, D 256, 2 experts top-1, F 512, V 1000, untied:
    # embeddings 2 x 1000 x 256 = 512,000; final norm 256; layer norms 512;
    # attention q 256x256 + k 256x128 + v 256x128 + o 256x256 = 196,608; router 2 x 256 = 512;
    # experts 2 x 3 x 256 x 512 = 786,432; shared expert 3 x 256 x 512 = 393,216 -> 1,889,536.
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 1, "num_local_experts": 2, "num_experts_per_tok": 1,
           "tie_word_embeddings": False, **TINY}
    assert 512_000 + 256 + 512 + 196_608 + 512 + 786_432 + 393_216 == 1_889_536
    total, active = count_params(cfg)
    assert total == 1_889_536
    assert active == total - 3 * 256 * 512  # one of the two routed experts idle per token


def test_llama4_interleaved_moe_layers_and_dense_width():
    # interleave_moe_layer_step 2 over 4 layers: layers 1 and 3 MoE, 0 and 2 dense of width 1,024.
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 4, "num_local_experts": 4, "num_experts_per_tok": 1,
           "interleave_moe_layer_step": 2, "intermediate_size_mlp": 1024, **TINY}
    dense, moe = 3 * 256 * 1024, 4 * 3 * 256 * 512 + 3 * 256 * 512 + 4 * 256
    attn_norms = 196_608 + 512
    total, active = count_params(cfg)
    assert total == 512_000 + 256 + 4 * attn_norms + 2 * dense + 2 * moe
    assert total - active == 2 * 3 * (3 * 256 * 512)  # 3 idle experts in each of the 2 MoE layers only


def test_experts_touched_count_only_moe_layers():
    # The interleaved Llama 4 stack above: 2 MoE layers of 4 experts (X = 3 x 256 x 512 each), top-1.
    # One token touches 1 expert per MoE layer: it reads the active parameters; a huge batch touches all
    # 4 in both MoE layers: every parameter. 100 tokens touch 4 x (1 - (3/4)^100) per MoE layer.
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 4, "num_local_experts": 4, "num_experts_per_tok": 1,
           "interleave_moe_layer_step": 2, "intermediate_size_mlp": 1024, **TINY}
    m = from_hf_config(cfg)
    x = 3 * 256 * 512
    read = calc.weight_bytes_read
    assert read(m, 1, "bf16", embedding="table") == pytest.approx(2 * m.n_active_params)
    assert read(m, 10**6, "bf16", embedding="table") == pytest.approx(2 * m.n_params)
    touched = 4 * (1 - 0.75 ** 100)
    assert read(m, 100, "bf16", embedding="table") == pytest.approx(2 * (m.n_params - 2 * 4 * x + 2 * touched * x))


# -- constant per-sequence state, by hand from the engine's shapes -------------------------------------

def test_mamba2_state_by_hand():
    # Nemotron-H-8B's Mamba2 mixer: 128 heads of 64 (d_inner 8,192), state N = 128, 8 groups, kernel 4.
    # vLLM mamba2_state_shape: conv (k - 1, d_inner + 2*G*N) = (3, 8,192 + 2,048) = 30,720 elements in
    # bf16 = 61,440 B; SSM (heads, head_dim, N) = 128 x 64 x 128 = 1,048,576 elements in fp32 =
    # 4,194,304 B; one layer 4,255,744 B per sequence.
    cfg = {"model_type": "nemotron_h", "num_hidden_layers": 2, "hybrid_override_pattern": "M*", **TINY,
           "hidden_size": 4096, "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128,
           "n_groups": 8, "conv_kernel": 4}
    m = from_hf_config(cfg)
    assert layers.state_shapes(m, "mamba2") == ((3, 10240), (128, 64, 128))
    assert calc.kv.kv_state_bytes(m) == 61_440 + 4_194_304 == 4_255_744
    assert calc.kv.kv_state_bytes(m, state_dtype="bf16") == 61_440 + 2_097_152
    # the state is constant: the cache at S is S x 512 (one attention layer) + the state
    assert calc.kv_cache_bytes(m, 1000) == 1000 * 512 + 4_255_744


def test_gated_deltanet_state_by_hand():
    # Qwen3-Next-80B-A3B's Gated DeltaNet: 16 key heads and 32 value heads of 128, conv kernel 4.
    # vLLM gated_delta_net_state_shape: conv (k - 1, 2*16*128 + 32*128) = (3, 8,192) = 24,576 elements
    # in bf16 = 49,152 B; recurrent (H_v, d_v, d_k) = 32 x 128 x 128 = 524,288 elements in fp32 =
    # 2,097,152 B; one layer 2,146,304 B; 3 such layers in the 4-layer interval-4 stack: 6,438,912 B.
    m = from_hf_config(dict(QWEN3_NEXT, full_attention_interval=4, linear_num_key_heads=16,
                            linear_num_value_heads=32, linear_key_head_dim=128, linear_value_head_dim=128,
                            linear_conv_kernel_dim=4))
    assert layers.state_shapes(m, "linear_attention") == ((3, 8192), (32, 128, 128))
    assert calc.kv.kv_state_bytes(m) == 3 * (49_152 + 2_097_152) == 6_438_912


def test_state_dtype_comes_from_the_config():
    # Nemotron-H's config names its SSM state dtype; bf16 halves the SSM part of the hand-computed state above:
    # 61,440 B conv + 1,048,576 x 2 B = 2,158,592 B.
    cfg = {"model_type": "nemotron_h", "num_hidden_layers": 2, "hybrid_override_pattern": "M*", **TINY,
           "hidden_size": 4096, "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128,
           "n_groups": 8, "conv_kernel": 4}
    assert calc.kv.kv_state_bytes(from_hf_config(dict(cfg, mamba_ssm_cache_dtype="bfloat16"))) == 61_440 + 2_097_152
    assert calc.kv.kv_state_bytes(from_hf_config(dict(cfg, mamba_ssm_cache_dtype="float32"))) == 4_255_744
    with pytest.raises(ValueError, match="mamba_ssm_cache_dtype"):
        from_hf_config(dict(cfg, mamba_ssm_cache_dtype="float8"))


def test_state_enters_memory_and_the_decode_step():
    m = from_hf_config(dict(QWEN3_NEXT, full_attention_interval=4))
    state = calc.kv.kv_state_bytes(m)
    h100 = calc.get_accelerator("h100-sxm")
    # memory: per sequence 8,192 x 512 + state
    assert calc.memory_budget(m, h100, 8192, batch=3).kv_bytes == 3 * (8192 * 512 + state)
    # decode: the state is read and written back each step: 8,192 x 512 + 2 x state per sequence
    step = calc.decode_step_time(m, h100, 2, 8192)
    assert step.kv_s == pytest.approx(2 * (8192 * 512 + 2 * state) / h100.bandwidth_bytes_per_s)


def test_deepseek_v32_sparse_attention_reads_top_k():
    # 2 layers of MLA latent 16 + rope 8 = 24 elements (48 B in bf16) and a DSA indexer key of 32 fp8
    # bytes + one fp32 scale (32 < 128 elements -> 1 block) = 36 B; top-k 8.
    cfg = {"model_type": "deepseek_v32", "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
           "num_hidden_layers": 2, "vocab_size": 100, "kv_lora_rank": 16, "q_lora_rank": 24,
           "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 12, "index_head_dim": 32,
           "index_n_heads": 4, "index_topk": 8}
    m = from_hf_config(cfg)
    assert calc.kv_bytes_per_token(m) == 2 * (48 + 36)
    assert calc.kv_cache_bytes(m, 100) == 100 * 2 * (48 + 36)
    # a decode step reads 8 latent entries per layer but all 100 indexer keys
    assert calc.kv.decode_kv_read_bytes_array(m, 100, 1) == 2 * (8 * 48 + 100 * 36)
    # DeepSeek-V3.2's real indexer: 128 fp8 + 4 B scale = 132 B per token and layer (vLLM)
    assert layers.index_bytes_per_token_per_layer(m.with_changes(index_head_dim=128)) == 132


def test_layer_breakdown_sums_to_the_sequence():
    m = from_hf_config({"model_type": "llama4_text", "num_hidden_layers": 4, "attention_chunk_size": 8192, **TINY})
    df = layers.layer_breakdown(m, 16384)
    assert list(df["kind"]) == ["chunked (C=8,192)", "full"]
    assert list(df["layers"]) == [3, 1] and list(df["tokens_held"]) == [8192, 16384]
    assert df["total_bytes"].sum() == calc.kv_cache_bytes(m, 16384)


# -- malformed hybrid configs: one clear error naming the key -----------------------------------------

BAD = [
    ({"model_type": "nemotron_h", "num_hidden_layers": 3, "hybrid_override_pattern": "M*", **TINY},
     "hybrid_override_pattern"),
    ({"model_type": "nemotron_h", "num_hidden_layers": 2, "hybrid_override_pattern": "MX", **TINY},
     "hybrid_override_pattern"),
    (dict(QWEN3_NEXT, layer_types=["linear_attention"] * 3), "layer_types"),
    (dict(QWEN3_NEXT, layer_types=["linear_attention"] * 3 + ["banana"]), "layer_types"),
    ({"model_type": "minimax", "num_hidden_layers": 2, "attn_type_list": [0], **TINY}, "attn_type_list"),
    ({"model_type": "minimax", "num_hidden_layers": 2, "attn_type_list": [0, 2], **TINY}, "attn_type_list"),
    ({"model_type": "llama4_text", "num_hidden_layers": 4, "attention_chunk_size": 8192, "no_rope_layers": [1, 0],
      **TINY}, "no_rope_layers"),
    ({"model_type": "jamba", "num_hidden_layers": 4, "attn_layer_period": 2, "attn_layer_offset": 2, **TINY},
     "attn_layer_offset"),
    ({"model_type": "gemma3n_text", "num_hidden_layers": 2, "num_kv_shared_layers": 2, **TINY},
     "num_kv_shared_layers"),
    ({"model_type": "gemma3n_text", "num_hidden_layers": 2, **dict(TINY, intermediate_size=[512])},
     "intermediate_size"),
]


@pytest.mark.parametrize("config, key", BAD, ids=[f"{i}-{k}" for i, (_, k) in enumerate(BAD)])
def test_bad_hybrid_config_names_the_key(config, key):
    with pytest.raises(ValueError, match=key):
        from_hf_config(config)


def test_list_valued_intermediate_size_loads():
    # Gemma-3n lists one FFN width per layer; the count uses each: 3 x 256 x (512 + 1024) for the MLPs.
    cfg = {"model_type": "llama", "num_hidden_layers": 2, **dict(TINY, intermediate_size=[512, 1024])}
    same = {"model_type": "llama", "num_hidden_layers": 2, **TINY}
    assert count_params(cfg)[0] - count_params(same)[0] == 3 * 256 * (1024 - 512)


# -- property tests --------------------------------------------------------------------------------

KINDS = ["full", "linear_attention", "mamba2", "mlp_only", "lightning"]


def _hybrid(kinds):
    pattern = {"full": "*", "mamba2": "M", "mlp_only": "-"}
    if all(k in pattern for k in kinds):
        return from_hf_config({"model_type": "nemotron_h", "num_hidden_layers": len(kinds),
                               "hybrid_override_pattern": "".join(pattern[k] for k in kinds), **TINY})
    base = calc.get_model("llama-3-8b").with_changes(n_layers=len(kinds), n_kv_heads=1, attention="mqa")
    return base.with_changes(layer_types=tuple(kinds), linear_n_key_heads=2, linear_n_value_heads=4,
                             linear_key_head_dim=16, linear_value_head_dim=16, linear_conv_kernel=4,
                             ssm_d_inner=64, ssm_d_state=8, ssm_conv_kernel=4, ssm_n_heads=4, ssm_head_dim=16,
                             ssm_n_groups=1)


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=12), s1=st.integers(1, 50_000),
       extra=st.integers(1, 50_000))
def test_constant_state_layers_add_nothing_per_token(kinds, s1, extra):
    m = _hybrid(kinds)
    per_layer = layers.kv_elements_per_token_per_layer(m) * 2
    n_attn = kinds.count("full")
    growth = calc.kv_cache_bytes(m, s1 + extra) - calc.kv_cache_bytes(m, s1)
    assert growth == pytest.approx(extra * n_attn * per_layer)
    assert calc.kv_bytes_per_token(m) == n_attn * per_layer


@settings(max_examples=100, deadline=None)
@given(chunk=st.integers(1, 20_000), s=st.integers(1, 200_000))
def test_chunked_layer_never_exceeds_its_chunk(chunk, s):
    spec = layers.LayerSpec("chunked", True, chunk, kv_bytes_per_token=512.0)
    held = spec.tokens_held(s)
    assert 1 <= held <= min(s, chunk)
    assert held == s if s <= chunk else held <= chunk
    assert spec.bytes_held(s) <= chunk * 512


@settings(max_examples=60, deadline=None)
@given(n_layers=st.integers(2, 40), shared=st.integers(0, 39), s=st.integers(1, 100_000))
def test_sharing_never_increases_bytes(n_layers, shared, s):
    m = calc.get_model("gemma-3-27b").with_changes(n_layers=n_layers, layer_types=None)
    shared = min(shared, n_layers - 1)
    fewer = calc.kv_cache_bytes(m.with_changes(n_kv_shared_layers=shared), s)
    assert fewer <= calc.kv_cache_bytes(m, s)
    if shared:
        assert calc.kv_cache_bytes(m.with_changes(n_kv_shared_layers=shared - 1), s) >= fewer


# -- transformers as an outside oracle for the hybrid families' parameter counts ----------------------

HYBRID_SMALL = {
    "qwen3_next": dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_hidden_layers=4, vocab_size=100,
                       num_experts=4, num_experts_per_tok=2, linear_num_key_heads=2, linear_num_value_heads=4,
                       linear_key_head_dim=8, linear_value_head_dim=12, linear_conv_kernel_dim=4),
    "qwen3_5_text": dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=16, num_hidden_layers=4, vocab_size=100, linear_num_key_heads=2,
                         linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=12),
    "llama4_text": dict(hidden_size=64, intermediate_size=96, intermediate_size_mlp=80, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=16, num_hidden_layers=4, vocab_size=100, num_local_experts=4,
                        num_experts_per_tok=1, interleave_moe_layer_step=2),
    "jamba": dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2,
                  num_hidden_layers=4, vocab_size=100, num_experts=4, num_experts_per_tok=2, attn_layer_period=2,
                  attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1, mamba_d_state=8, mamba_dt_rank=6),
    "nemotron_h": dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                       num_hidden_layers=4, vocab_size=100, hybrid_override_pattern="M*-E", mamba_num_heads=8,
                       mamba_head_dim=16, ssm_state_size=8, n_groups=2, conv_kernel=4, n_routed_experts=4,
                       num_experts_per_tok=2, moe_intermediate_size=32, moe_shared_expert_intermediate_size=48,
                       n_shared_experts=1),
    "falcon_h1": dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                      num_hidden_layers=2, vocab_size=100, mamba_d_ssm=128, mamba_n_heads=8, mamba_d_head=16,
                      mamba_d_state=8, mamba_n_groups=2, mamba_d_conv=4),
    "granitemoehybrid": dict(hidden_size=64, intermediate_size=96, shared_intermediate_size=48, num_attention_heads=4,
                             num_key_value_heads=2, num_hidden_layers=2, vocab_size=100, num_local_experts=4,
                             num_experts_per_tok=2, layer_types=["mamba", "attention"], mamba_n_heads=8,
                             mamba_d_head=16, mamba_d_state=8, mamba_n_groups=2, mamba_d_conv=4, mamba_expand=2),
    "minimax": dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                    num_hidden_layers=2, vocab_size=100, num_local_experts=4, num_experts_per_tok=2,
                    layer_types=["linear_attention", "full_attention"]),
    "gemma3n_text": dict(hidden_size=64, intermediate_size=[96, 80, 96, 80], num_attention_heads=4, num_key_value_heads=2,
                         head_dim=16, num_hidden_layers=4, vocab_size=100, vocab_size_per_layer_input=90,
                         hidden_size_per_layer_input=8, num_kv_shared_layers=2, laurel_rank=4, altup_num_inputs=4,
                         layer_types=["sliding_attention", "full_attention"] * 2, sliding_window=32,
                         activation_sparsity_pattern=[0.0] * 4),
    "deepseek_v32": dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_attention_heads=4,
                         num_key_value_heads=4, num_hidden_layers=2, vocab_size=100, kv_lora_rank=16, q_lora_rank=24,
                         qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=12, n_routed_experts=4,
                         n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=1, n_group=1, topk_group=1,
                         index_head_dim=32, index_n_heads=4, index_topk=8),
}


@pytest.mark.parametrize("model_type", sorted(HYBRID_SMALL))
def test_hybrid_count_matches_transformers_on_meta_device(model_type):
    kw = HYBRID_SMALL[model_type]
    n, conf = transformers_param_count(model_type, kw)
    assert count_params({"model_type": model_type, **kw})[0] == n
    # and the layer kinds agree with the config class's own layer_types
    names = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked", "indexed_attention": "full",
             "hybrid": "parallel_mamba2", "mlp": "mlp_only", "moe": "mlp_only"}
    ours = from_hf_config({"model_type": model_type, **kw}).layer_kinds
    theirs = getattr(conf, "layer_types", None)
    if theirs is not None:
        assert [names.get(t, "state") for t in theirs] == [
            "state" if k in layers.STATE_LAYER_KINDS and k != "parallel_mamba2" else k for k in ours]


# -- presets of the hybrid families -----------------------------------------------------------------

def test_minimax_m1_preset_by_hand():
    # MiniMax-M1 (its config.json): D 6144, 80 layers, 64 heads of 128, 8 KV heads, 32 experts of 9216 top-2,
    # V 200,064, untied. Embeddings 2 x 200,064 x 6,144 = 2,458,386,432; final norm 6,144; per layer norms
    # 12,288, router 196,608, experts 32 x 3 x 6,144 x 9,216 = 5,435,817,984; lightning layer qkv 150,994,944
    # + output gate 50,331,648 + out_proj 50,331,648 + norm 8,192 = 251,666,432; softmax layer q 50,331,648
    # + k, v 12,582,912 + o 50,331,648 = 113,246,208. 70 lightning + 10 softmax layers:
    total = 2_458_386_432 + 6_144 + 80 * (12_288 + 196_608 + 5_435_817_984) + 70 * 251_666_432 + 10 * 113_246_208
    m = calc.get_model("minimax-m1")
    assert m.n_params == total == 456_089_655_296          # MiniMax: 456B
    assert m.n_params - m.n_active_params == 80 * 30 * 3 * 6144 * 9216   # 30 idle experts per layer
    # cache: 10 softmax layers x 2 x 8 x 128 x 2 B = 40,960 B per token; 70 lightning states of
    # 64 x 128 x 128 fp32 = 4,194,304 B each = 293,601,280 B per sequence.
    assert calc.kv_bytes_per_token(m) == 40_960
    assert calc.kv.kv_state_bytes(m) == 70 * 64 * 128 * 128 * 4 == 293_601_280


def test_deepseek_v32_preset_adds_the_indexer_to_v3():
    # Per layer the indexer adds wq_b 1,536 x 64 x 128 = 12,582,912, wk 7,168 x 128 = 917,504, k_norm 256
    # and weights_proj 7,168 x 64 = 458,752 -> 13,959,424; x 61 layers = 851,524,864 over DeepSeek-V3.
    v3, v32 = calc.get_model("deepseek-v3"), calc.get_model("deepseek-v3.2")
    assert v32.n_params - v3.n_params == 61 * 13_959_424 == 851_524_864
    # cache per token: 61 x (576 x 2 B latent + 132 B indexer key) = 78,324 B; V3: 70,272 B.
    assert calc.kv_bytes_per_token(v32) == 61 * (1152 + 132) == 78_324
    # decode at 128K reads 2,048 latent entries per layer and all 131,072 indexer keys
    assert calc.kv.decode_kv_read_bytes_array(v32, 131072, 1) == 61 * (2048 * 1152 + 131072 * 132)


def test_qwen3_next_80b_preset_by_hand():
    # Qwen3-Next-80B-A3B (its config.json): D 2,048, 48 layers, V 151,936, untied. Embeddings 2 x 151,936 x 2,048
    # = 622,329,856; final norm 2,048; per layer 2 norms 4,096 and the MoE: router 2,048 x 512 = 1,048,576, 512
    # experts x 3 x 2,048 x 512 = 1,610,612,736, shared expert 3,145,728 and its gate 2,048 -> 1,614,809,088.
    # Gated DeltaNet (transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz 2,048 x (2 x 16 x 128 + 2 x 32 x 128)
    # = 25,165,824, in_proj_ba 2,048 x 64 = 131,072, conv1d 8,192 x 4 = 32,768, dt_bias and A_log 2 x 32, norm
    # 128, out_proj 4,096 x 2,048 = 8,388,608 -> 33,718,464. Gated attention: q_proj with its gate 2,048 x 2 x 16
    # x 256 = 16,777,216, k and v 2 x 2,048 x 512 = 2,097,152, o 8,388,608, q/k norms 512 -> 27,263,488.
    gdn, attn, moe = 33_718_464, 27_263_488, 1_614_809_088
    total = 622_329_856 + 2_048 + 48 * (4_096 + moe) + 36 * gdn + 12 * attn
    m = calc.get_model("qwen3-next-80b-a3b")
    assert m.n_params == total == 79_674_391_296                      # Qwen: 80B
    # active: 10 of 512 experts -> 502 idle x 3 x 2,048 x 512 x 48 layers; 3.87B (Qwen: "A3B", 3B activated,
    # which leaves out the 0.62B of the two embedding matrices: 3.25B)
    assert m.n_active_params == total - 502 * 3 * 2048 * 512 * 48 == 3_874_929_408
    # cache: 12 attention layers x 2 x 2 x 256 x 2 B = 24,576 B per token; 36 DeltaNet states of conv 3 x 8,192
    # x 2 B = 49,152 B + recurrent 32 x 128 x 128 x 4 B = 2,097,152 B -> 77,266,944 B per sequence.
    assert calc.kv_bytes_per_token(m) == 12 * 2 * 2 * 256 * 2 == 24_576
    assert calc.kv.kv_state_bytes(m) == 36 * (3 * 8192 * 2 + 32 * 128 * 128 * 4) == 77_266_944


def test_qwen35_27b_preset_by_hand():
    # Qwen3.5-27B text_config: D 5,120, 64 layers (48 Gated DeltaNet, 16 gated attention), dense SwiGLU 17,408,
    # V 248,320, untied. Embeddings 2 x 248,320 x 5,120 = 2,542,796,800; final norm 5,120; per layer MLP 3 x 5,120
    # x 17,408 = 267,386,880 and 2 norms 10,240. DeltaNet: qkv and z 5,120 x (2 x 16 x 128 + 2 x 48 x 128) =
    # 83,886,080, b and a 5,120 x 96 = 491,520, conv (4,096 + 6,144) x 4 = 40,960, dt_bias and A_log 96, norm 128,
    # out_proj 6,144 x 5,120 = 31,457,280 -> 115,876,064. Attention: q with gate 5,120 x 2 x 24 x 256 = 62,914,560,
    # k and v 2 x 5,120 x 1,024 = 10,485,760, o 31,457,280, q/k norms 512 -> 104,858,112.
    total = 2_542_796_800 + 5_120 + 64 * (267_386_880 + 10_240) + 48 * 115_876_064 + 16 * 104_858_112
    m = calc.get_model("qwen3.5-27b")
    assert m.n_params == total == 26_895_998_464   # Qwen: 27B (the vision encoder and the MTP layer not counted)
    assert m.n_active_params is None and m.layer_kinds.count("full") == 16
    # cache: 16 x 2 x 4 x 256 x 2 B = 65,536 B per token; 48 states of conv 3 x 10,240 x 2 B = 61,440 B +
    # recurrent 48 x 128 x 128 x 4 B = 3,145,728 B -> 153,944,064 B per sequence.
    assert calc.kv_bytes_per_token(m) == 65_536
    assert calc.kv.kv_state_bytes(m) == 48 * (61_440 + 3_145_728) == 153_944_064


def test_kimi_k2_preset_by_hand():
    # Kimi-K2-Instruct: DeepSeek-V3 layout, D 7,168, 61 layers, V 163,840, untied: embeddings 2 x 163,840 x 7,168
    # = 2,348,810,240, final norm 7,168. MLA per layer with 64 heads: q_a 7,168 x 1,536 = 11,010,048, its norm
    # 1,536, q_b 1,536 x 64 x 192 = 18,874,368, kv_a 7,168 x 576 = 4,128,768, its norm 512, kv_b 512 x 64 x 256 =
    # 8,388,608, o 64 x 128 x 7,168 = 58,720,256 -> 101,124,096; 2 norms 14,336. Layer 0 dense: 3 x 7,168 x 18,432
    # = 396,361,728. 60 MoE layers: router 384 x 7,168 = 2,752,512, correction bias 384, 385 experts (384 routed
    # + 1 shared) of 3 x 7,168 x 2,048 = 44,040,192 each.
    expert = 44_040_192
    moe = 2_752_512 + 384 + 385 * expert
    total = 2_348_810_240 + 7_168 + 61 * (101_124_096 + 14_336) + 396_361_728 + 60 * moe
    m = calc.get_model("kimi-k2")
    assert m.n_params == total == 1_026_408_232_448                  # Moonshot: 1T total
    # active: 8 routed + 1 shared; like the reference's DeepSeek-V3 active count, without the correction bias
    assert m.n_active_params == total - 60 * (376 * expert + 384) == 32_861_477_888   # Moonshot: 32B activated
    assert calc.kv_bytes_per_token(m) == 61 * 576 * 2 == 70_272     # latent 512 + rope key 64 in bf16
    assert calc.kv.kv_state_bytes(m) == 0


def test_nemotron_h_56b_preset_by_hand():
    # Nemotron-H-56B-Base-8K: D 8,192, 118 blocks (54 Mamba2 "M", 10 attention "*", 54 MLP "-"), V 131,072,
    # untied: embeddings 2 x 131,072 x 8,192 = 2,147,483,648, final norm 8,192, one norm per block 8,192.
    # Mamba2 (transformers' NemotronHMamba2Mixer): in_proj 8,192 x (2 x 16,384 + 2 x 8 x 256 + 256) = 304,087,040,
    # conv1d (16,384 + 4,096) x 4 + bias 20,480 = 102,400, dt_bias, A_log and D 3 x 256, gated norm 16,384,
    # out_proj 16,384 x 8,192 = 134,217,728 -> 438,424,320. Attention: q and o 2 x 8,192^2 = 134,217,728, k and v
    # 2 x 8,192 x 1,024 = 16,777,216 -> 150,994,944. MLP (squared ReLU, no gate): 2 x 8,192 x 32,768 = 536,870,912.
    total = 2_147_483_648 + 8_192 + 118 * 8_192 + 54 * 438_424_320 + 10 * 150_994_944 + 54 * 536_870_912
    m = calc.get_model("nemotron-h-56b")
    assert m.n_params == total == 56_324_350_464                     # NVIDIA: 56B
    assert (m.layer_kinds.count("mamba2"), m.layer_kinds.count("full"), m.layer_kinds.count("mlp_only")) == (54, 10, 54)
    # cache: 10 x 2 x 8 x 128 x 2 B = 40,960 B per token; 54 Mamba2 states of conv 3 x 20,480 x 2 B = 122,880 B
    # + SSM 256 x 64 x 256 x 4 B = 16,777,216 B (vLLM's MambaStateShapeCalculator) -> 912,605,184 B per sequence.
    assert calc.kv_bytes_per_token(m) == 40_960
    assert calc.kv.kv_state_bytes(m) == 54 * (122_880 + 16_777_216) == 912_605_184


def test_qwen35_35b_a3b_preset_by_hand():
    # Qwen3.5-35B-A3B text_config: D 2,048, 40 layers (30 Gated DeltaNet, 10 gated attention, the shapes of
    # Qwen3-Next: 33,718,464 and 27,263,488 parameters, see above), every layer MoE: router 2,048 x 256 = 524,288,
    # 256 experts x 3 x 2,048 x 512 = 805,306,368, shared expert 3,145,728 and its gate 2,048 -> 808,978,432;
    # 2 norms 4,096; embeddings 2 x 248,320 x 2,048 = 1,017,118,720; final norm 2,048.
    total = 1_017_118_720 + 2_048 + 40 * (808_978_432 + 4_096) + 30 * 33_718_464 + 10 * 27_263_488
    m = calc.get_model("qwen3.5-35b-a3b")
    assert m.n_params == total == 34_660_610_688                              # Qwen: 35B
    assert m.n_active_params == total - 248 * 3 * 2048 * 512 * 40 == 3_454_988_928   # Qwen: A3B
    assert m.d_ff == 512 and m.n_experts == 256
    assert calc.kv_bytes_per_token(m) == 10 * 2 * 2 * 256 * 2 == 20_480
    assert calc.kv.kv_state_bytes(m) == 30 * (3 * 8192 * 2 + 32 * 128 * 128 * 4) == 64_389_120


def test_an_all_moe_config_needs_no_dense_width_but_a_dense_layer_does():
    # Qwen3.5-MoE ships no intermediate_size (no layer is dense); a config with a dense layer and no width
    # is still refused, naming the keys.
    moe = {"model_type": "qwen3_moe", **TINY, "num_hidden_layers": 2, "num_experts": 4, "num_experts_per_tok": 1,
           "moe_intermediate_size": 32}
    del moe["intermediate_size"]
    m = from_hf_config(moe)
    # per layer: attention 256 x 256 + 2 x 256 x 128 + 256 x 256 = 196,608, router 1,024, 4 experts x 3 x 256 x 32
    # = 98,304, 2 norms 512, q/k norms 2 x 128 = 256; embeddings 2 x 1,000 x 256, final norm 256
    assert m.d_ff == 32
    assert m.n_params == 2 * 1000 * 256 + 256 + 2 * (196_608 + 256 + 1_024 + 98_304 + 512)
    with pytest.raises(ValueError, match="intermediate_size"):
        from_hf_config(dict(moe, decoder_sparse_step=1, mlp_only_layers=[0]))
