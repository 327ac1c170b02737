"""The matmul calibration of mixture-of-experts models: experts stored as 3-D parameters (transformers'
fused experts: Qwen3-MoE, Mixtral, gpt-oss, Llama 4) or as a list of MLPs are timed as whole blocks,
router and shared expert included, at the rows a step runs (tiny configs, random weights, seconds)."""
import json
import math

import pytest
import torch

from live import measure
from live.model_builder import build_random
from live.predict import matmul_time_s
from live.probe import linear_groups, moe_blocks, moe_inputs, time_linears
from live.runner import LiveSession
from live.run_spec import RunSpec

# Qwen3-MoE shrunk: hidden 64, 2 layers, 8 experts of width 32, top-2, vocab 128
QWEN3_MOE = dict(model_type="qwen3_moe", hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
                 num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_experts=8,
                 num_experts_per_tok=2, vocab_size=128, decoder_sparse_step=1, mlp_only_layers=[],
                 max_position_embeddings=512)
LLAMA4 = dict(model_type="llama4_text", hidden_size=64, intermediate_size=32, intermediate_size_mlp=64,
              num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_local_experts=8,
              num_experts_per_tok=1, vocab_size=128, interleave_moe_layer_step=1, max_position_embeddings=512)


def test_fused_experts_are_one_timed_block_per_layer_with_the_bytes_one_token_reads():
    model = build_random(QWEN3_MOE, "fp32")
    groups = {g["label"]: g for g in time_linears(model, (1, 4), repeats=1, warmup=0)}
    moe = [g for g in groups.values() if g.get("moe")]
    assert len(moe) == 1 and moe[0]["count"] == 2 and moe[0]["n_experts"] == 8 and moe[0]["top_k"] == 2
    # per layer: router 8 x 64 = 512 weights; experts 8 x (gate_up 64 x 64 + down 64 x 32) = 49,152 weights.
    # One token reads the router and 2 of the 8 experts: 512 + 49,152 / 4 = 12,800 weights = 51,200 B in fp32
    assert moe[0]["n_weights"] == 2 * 12_800 and moe[0]["weight_bytes"] == 2 * 51_200
    assert moe[0]["total_weight_bytes"] == 2 * (512 + 49_152) * 4
    # the router is inside the block: not a linear group of its own; the attention and the head are
    assert set(groups) - {moe[0]["label"]} == {"q_proj 64x64", "k_proj 32x64", "v_proj 32x64", "o_proj 64x64",
                                               "lm_head 128x64"}
    assert all(measure.finite_positive(t) for g in groups.values() for t in g["times_s"])


def test_the_block_is_timed_on_the_hidden_states_it_really_receives():
    model = build_random(QWEN3_MOE, "fp32")
    touched = []
    model.model.layers[1].mlp.experts.register_forward_pre_hook(
        lambda mod, args: touched.append(tuple(sorted(args[1].unique().tolist()))))
    time_linears(model, (1, 64), repeats=1, warmup=0)
    # calls of layer 1's experts: a real forward of 1 token, then of 64 tokens (catching the block's inputs),
    # then the timed calls at 1 and 64 rows on those inputs: the same routing, the same experts
    real_1, real_64, timed_1, timed_64 = touched
    assert len(real_1) == 2 and timed_1 == real_1  # one token runs its top-2
    assert timed_64 == real_64


def test_moe_inputs_are_caught_per_block_and_row_count():
    model = build_random(QWEN3_MOE, "fp32")
    blocks = [b["module"] for b in moe_blocks(model)]
    got = moe_inputs(model, blocks, (1, 8))
    assert sorted((blocks.index(next(b for b in blocks if id(b) == k)), r) for k, r in got) == \
        [(0, 1), (0, 8), (1, 1), (1, 8)]
    assert all(v.shape == (r, 64) for (_, r), v in got.items())
    assert moe_inputs(model, [], (1,)) == {}


def test_decode_rows_are_separate_sequences_and_prompt_rows_one_sequence():
    # A decode step at batch 8 routes one token from each of 8 sequences; a prompt of 8 tokens is one sequence
    # whose tokens attend to each other. moe_inputs feeds each row count the way it runs: (8, 1) or (1, 8).
    model = build_random(QWEN3_MOE, "fp32")
    blocks = [b["module"] for b in moe_blocks(model)]
    shapes = []
    model.get_input_embeddings().register_forward_pre_hook(lambda mod, args: shapes.append(tuple(args[0].shape)))
    got = moe_inputs(model, blocks, (1, 8, 16), decode_rows=(1, 8))
    assert shapes == [(1, 1), (8, 1), (1, 16)]
    assert all(v.shape == (r, 64) for (_, r), v in got.items())


def test_a_shared_expert_and_a_linear_router_are_counted_once_in_the_block():
    # Llama 4: experts as 3-D parameters, a router that is an nn.Linear, a shared expert of nn.Linear layers
    model = build_random(LLAMA4, "fp32")
    groups = linear_groups(model)
    moe = [g for g in groups if g.get("moe")]
    assert len(moe) == 1 and moe[0]["role"] == "feed_forward" and moe[0]["count"] == 2
    block_bytes = sum(p.numel() * p.element_size() for layer in model.model.layers
                      for p in layer.feed_forward.parameters())
    assert moe[0]["total_weight_bytes"] == block_bytes
    block_linears = {id(m) for layer in model.model.layers for m in layer.feed_forward.modules()}
    assert not any(id(m) in block_linears for g in groups if not g.get("moe") for m in g["modules"])


def test_experts_as_a_list_of_mlps_are_one_block():
    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up, self.down = torch.nn.Linear(16, 32, bias=False), torch.nn.Linear(32, 16, bias=False)

        def forward(self, x):
            return self.down(torch.relu(self.up(x)))

    class Moe(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = torch.nn.Linear(16, 4, bias=False)
            self.experts = torch.nn.ModuleList(Mlp() for _ in range(4))

        def forward(self, x):
            top = self.gate(x).argmax(-1)
            return sum(torch.where((top == i)[..., None], e(x), 0.0) for i, e in enumerate(self.experts))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.moe = Moe()

    (b,) = moe_blocks(Net())
    # 4 experts x (16 x 32 + 32 x 16) = 4,096 weights + router 64; no top-k in a config: 1 of 4 per token
    assert b["n_experts"] == 4 and b["top_k"] == 1 and b["n_weights"] == 4_160
    assert b["active_weights"] == 64 + 4_096 / 4


def test_a_tiny_moe_model_runs_calibrated_end_to_end():
    spec = RunSpec(source="config", config_json=json.dumps(QWEN3_MOE), prompt_lens=(8,), prefill_batches=(1, 2),
                   prefill_prompt_len=8, decode_batches=(1, 4), decode_context_len=16, decode_contexts=(16,),
                   decode_steps=2, repeats=1, warmup=0, new_tokens=2)
    res = LiveSession(probe_buffer_bytes=16 << 20).run(spec)
    groups = res["calibration"]["matmul_groups"]
    assert any(g.get("moe") for g in groups)
    t = res["table"]
    assert len(t) == 6 and all(math.isfinite(x) and x > 0 for x in t["pred_calibrated_s"])
    # 6 points: prompt 8; prefill batch 1, 2; decode batch 1, 4; decode context 16.
    # the kernel term of decode at batch 4 is the groups' time at 4 rows (head at 4 rows too), the MoE blocks in it
    d4 = t[(t["phase"] == "decode") & (t["batch"] == 4)].iloc[0]
    assert d4["cal_matmul_s"] == pytest.approx(matmul_time_s(groups, "decode", 4, 1))
    assert d4["cal_matmul_s"] >= sum(g["times_s"][g["rows"].index(4)] for g in groups if g.get("moe"))
