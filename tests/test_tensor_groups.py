"""The tensor groups quantization recipes treat apart, counted layer by layer from calc.layers: hybrid
stacks (Mamba2, Gated DeltaNet, MLP-only layers), MLA, DeepSeek's dense first layers, Llama 4's
interleaved dense and MoE layers. Each group is a hand count from the config.json; the groups add up
to n_params."""
import pytest

import calc
from calc.layers import layer_params
from calc.quant import GROUPS, tensor_groups


def check_adds_up(model, groups):
    assert set(groups) == set(GROUPS)
    assert sum(groups.values()) == pytest.approx(model.n_params, rel=1e-12)
    assert all(v >= 0 for v in groups.values())


def test_nemotron_h_56b_groups_by_hand():
    # hybrid_override_pattern: 118 layers, 54 "M" (Mamba2, no FFN), 10 "*" (attention, no FFN),
    # 54 "-" (an MLP of up and down, squared ReLU, intermediate_size 32,768). D = 8,192, K = 8, H = 128.
    m = calc.get_model("nemotron-h-56b")
    g = tensor_groups(m)
    check_adds_up(m, g)
    assert g["attention_v"] == 10 * 8192 * 8 * 128            # 83,886,080: only the 10 attention layers
    assert g["ffn_down"] == 54 * 32768 * 8192                  # 14,495,514,624: only the 54 MLP layers
    assert g["router"] == g["experts"] == g["experts_down"] == 0
    assert g["norms"] == (118 + 1) * 8192                      # one pre-norm per block + the final norm
    assert g["embedding"] == g["head"] == 131072 * 8192        # untied
    # linear: the Mamba2 mixers, Q/K/O of the attention layers, the MLPs' up projections
    assert g["linear"] == pytest.approx(m.n_params - 2 * 131072 * 8192 - 974_848 - 83_886_080 - 14_495_514_624)


def test_qwen3_next_groups_by_hand():
    # 48 layers, full_attention_interval 4: 12 gated-attention layers (K = 2, H = 256, D = 2,048) and 36
    # Gated DeltaNet layers; every layer an MoE of 512 experts of 512 (gate, up, down), one shared
    # expert of 512, a 2,048 x 512 router.
    m = calc.get_model("qwen3-next-80b-a3b")
    g = tensor_groups(m)
    check_adds_up(m, g)
    assert g["attention_v"] == 12 * 2048 * 2 * 256            # 12,582,912 (not 48 layers' worth)
    assert g["router"] == 48 * 2048 * 512                      # 50,331,648
    assert g["ffn_down"] == 48 * 512 * 2048                    # the shared experts' down projections
    assert g["experts_down"] == 48 * 512 * 512 * 2048          # 25,769,803,776
    assert g["experts"] == 2 * g["experts_down"]               # gate and up
    assert g["norms"] == (2 * 48 + 1) * 2048


def test_deepseek_v3_groups_by_hand():
    # 61 layers, first_k_dense_replace 3: layers 0-2 a dense MLP of 18,432, layers 3-60 (58) an MoE of
    # 256 routed experts of 2,048 plus n_shared_experts 1 of 2,048 and a 7,168 x 256 router. MLA: V is in
    # the latent up-projection (kv_b_proj), so no separate attention_v.
    m = calc.get_model("deepseek-v3")
    g = tensor_groups(m)
    check_adds_up(m, g)
    assert g["router"] == 58 * 7168 * 256                      # 106,430,464 (not 61 layers)
    assert g["ffn_down"] == 3 * 18432 * 7168 + 58 * 2048 * 7168  # 1,247,805,440
    assert g["experts_down"] == 58 * 256 * 2048 * 7168         # 217,969,590,272
    assert g["experts"] == 2 * g["experts_down"]
    assert g["attention_v"] == 0
    # one routed expert over the 58 MoE layers: 3 x 7,168 x 2,048 x 58 = 2,554,331,136 parameters
    assert calc.memory.routed_expert_params(m) == 2_554_331_136


LLAMA4_SMALL = {"model_type": "llama4_text", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
                "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "intermediate_size_mlp": 1024,
                "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
                "vocab_size": 1000, "tie_word_embeddings": False, "attention_chunk_size": 8192, "no_rope_layers": []}


def test_llama4_interleaved_groups_by_hand():
    # interleave_moe_layer_step 2: layer 0 dense (intermediate_size_mlp 1,024), layer 1 MoE (4 experts of
    # 512, the implicit shared expert of intermediate_size 512, a 256 x 4 router). Both layers chunked
    # attention (no_rope_layers empty: every 4th layer global), N = 4, K = 2, H = 64, D = 256, V = 1,000.
    #   embedding = head = 1,000 x 256 = 256,000; norms = 2 x 2 x 256 + 256 = 1,280
    #   attention_v = 2 x 256 x 2 x 64 = 65,536; router = 256 x 4 = 1,024
    #   ffn_down = 1,024 x 256 (dense) + 512 x 256 (shared) = 393,216
    #   experts_down = 4 x 512 x 256 = 524,288; experts (gate, up) = 1,048,576
    #   linear = 2 x (q 65,536 + k 32,768 + o 65,536) + dense gate/up 2 x 256 x 1,024 + shared gate/up
    #            2 x 256 x 512 = 327,680 + 524,288 + 262,144 = 1,114,112
    #   total = 3,660,032
    m = calc.from_hf_config(LLAMA4_SMALL)
    assert m.n_params == 3_660_032
    assert m.ffn_kinds == ("dense", "moe") and m.d_ff_dense == 1024 and m.d_ff_shared == 512
    g = tensor_groups(m)
    assert {k: int(v) for k, v in g.items()} == {
        "embedding": 256_000, "head": 256_000, "norms": 1_280, "router": 1_024, "attention_v": 65_536,
        "ffn_down": 393_216, "linear": 1_114_112, "experts_down": 524_288, "experts": 1_048_576}


def test_lightning_and_shared_kv_layers_hold_no_v_projection():
    # MiniMax-M1: attn_type_list has 10 softmax layers of 80; the 70 lightning layers fuse q, k, v in one
    # qkv_proj (linear). 10 x 6,144 x 8 x 128 = 62,914,560.
    assert tensor_groups(calc.get_model("minimax-m1"))["attention_v"] == 10 * 6144 * 8 * 128
    # Gemma-3n style sharing: the last of 2 layers borrows layer 0's cache and has no v_proj.
    base = calc.get_model("llama-3-8b").with_changes(n_params=8_000_000_000)
    shared = base.with_changes(n_kv_shared_layers=1)
    assert tensor_groups(shared)["attention_v"] == 31 * 4096 * 8 * 128
    assert [p.attention_v for p in layer_params(shared)][-1] == 0


def test_q4_k_m_upgrades_only_the_real_attn_v_and_ffn_down():
    # The q6_K share of q4_K_M lands on attention_v and ffn_down: Nemotron-H's Mamba layers hold neither,
    # so its file is smaller than a transformer-wide estimate would say.
    m = calc.get_model("nemotron-h-56b")
    g = tensor_groups(m)
    q = calc.quant.weight_bytes_by_group(m, "q4_K_M")
    assert q["attention_v"] / g["attention_v"] * 8 > calc.quant.Q4_K_BITS   # q6_K in some layers
    assert q["linear"] / g["linear"] * 8 == pytest.approx(calc.quant.Q4_K_BITS)


def test_hypothetical_model_below_its_shapes_still_adds_up():
    # n_params set below what the shapes hold: the groups scale down together and linear is 0.
    m = calc.get_model("llama-3-8b").with_changes(n_params=1_000_000_000)
    g = tensor_groups(m)
    check_adds_up(m, g)
    assert g["linear"] == 0


def test_ffn_layout_is_validated():
    base = calc.get_model("llama-3-8b")
    with pytest.raises(ValueError, match="ffn_layer_types has 2 entries"):
        base.with_changes(ffn_layer_types=("dense", "dense"))
    with pytest.raises(ValueError, match="n_experts is not set"):
        base.with_changes(ffn_layer_types=("moe",) * 32)
    with pytest.raises(ValueError, match="ffn_matrices"):
        base.with_changes(ffn_matrices=4)


def test_operator_split_counts_projections_only_in_layers_that_attend():
    # Nemotron-H-56B: 10 attention layers of N = 64, K = 8, H = 128, D = 8,192:
    #   QKV 10 x 8,192 x (64 + 16) x 128 = 838,860,800; output 10 x 64 x 128 x 8,192 = 671,088,640
    # (all 118 layers would give 11.8x that); the Mamba mixers' projections join the MLP row.
    from calc.operators import step_operators
    ops = step_operators(calc.get_model("nemotron-h-56b"), calc.get_accelerator("h100-sxm"), "decode", 1,
                         1024).set_index("operator")
    assert ops.loc["qkv_projection", "params"] == 838_860_800
    assert ops.loc["output_projection", "params"] == 671_088_640
    assert "Mamba" in ops.loc["mlp", "label"]
    # MiniMax-M1: 70 lightning layers with a fused qkv_proj 3 x 6,144 x 64 x 128 plus 10 softmax layers
    # 6,144 x (64 + 16) x 128: 10,569,646,080 + 629,145,600 = 11,198,791,680
    ops = step_operators(calc.get_model("minimax-m1"), calc.get_accelerator("h100-sxm"), "decode", 1,
                         1024).set_index("operator")
    assert ops.loc["qkv_projection", "params"] == 11_198_791_680
