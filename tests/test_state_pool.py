"""SGLang keeps a hybrid model's Mamba / Gated DeltaNet states in a pool of their own, and that pool caps its batch.

SGLang gives the states mamba_full_memory_ratio / (1 + mamba_full_memory_ratio) = 0.9 / 1.9 of the memory left for
caches, the attention KV the rest, and runs no more requests than the pool's slots over 3 (radix cache on):
sgl-project/sglang model_runner_kv_cache_mixin.py, handle_max_mamba_cache, _calculate_mamba_ratio,
_resolve_max_num_reqs.
"""
import json

import pytest

import calc
from calc.gpu_share import max_batch_per_replica, state_pool_batch, weight_bytes_per_gpu
from calc.layout import make_layout
from calc.memory import with_capacity
from calc.serving import serving_estimate

GDN = calc.get_model("qwen3.5-35b-a3b")
# one sequence's states, by hand from Qwen3.5-35B-A3B's config.json (text_config): 30 Gated DeltaNet layers, each a
# recurrent state of 32 value heads x 128 x 128 in fp32 (the config's mamba_ssm_dtype) and a convolution state of
# (2 x 16 key heads x 128 + 32 value heads x 128) = 8,192 channels x (kernel 4 - 1) bf16 values
STATE_BYTES = 30 * (32 * 128 * 128 * 4 + 8192 * 3 * 2)       # = 64,389,120
# the attention KV of one sequence at 623 tokens (342 + 281): 10 gated-attention layers x K and V x 2 KV heads x
# 256 x 2 bytes x 623
KV_BYTES_623 = 10 * 2 * 2 * 256 * 2 * 623                     # = 12,759,040


def _free_bytes():
    """The memory SGLang leaves for caches on one H200 at its large-GPU share (0.88 of what the driver reports)."""
    sg = json.loads((calc.serving_params.PARAMS_PATH).read_text())["engines"]["sglang"]["large_gpu"]
    acc = with_capacity(calc.get_accelerator("h200"), "driver")
    reserve = acc.memory_bytes * (1 - sg["kv_memory_fraction"])
    weights = weight_bytes_per_gpu(GDN, make_layout(GDN, 1, 1, 1, 1), "bf16")
    return acc, reserve, acc.memory_bytes - weights - reserve


def test_the_state_pool_holds_its_share_over_the_states_of_a_request_over_three():
    acc, reserve, free = _free_bytes()
    lay = make_layout(GDN, 1, 1, 1, 1)
    pool = state_pool_batch(GDN, acc, lay, "bf16", "bf16", reserve, 0.9 / 1.9, 3)
    assert pool == int(free * 0.9 / 1.9 // STATE_BYTES) // 3 == 155   # 63.3e9 B free: 465 slots, 155 requests
    assert state_pool_batch(GDN, acc, lay, "bf16", "bf16", reserve, 0.9 / 1.9, 1) == 465
    # the attention KV then has the other 1 / 1.9 of the free memory to itself
    kv_only = max_batch_per_replica(GDN, acc, 623, lay, "bf16", "bf16", reserve, state_share=0.9 / 1.9)
    assert kv_only == int(free / 1.9 // KV_BYTES_623) == 2612
    # one pool for both (vLLM's, and the default): per sequence the KV and the states together
    assert max_batch_per_replica(GDN, acc, 623, lay, "bf16", "bf16", reserve) == \
        int(free // (KV_BYTES_623 + STATE_BYTES)) == 821


def test_a_model_without_states_has_no_state_pool_and_bad_shares_are_refused():
    acc, reserve, _ = _free_bytes()
    dense = calc.get_model("qwen3-32b")
    lay = make_layout(dense, 1, 1, 1, 1)
    assert state_pool_batch(dense, acc, lay, "bf16", "bf16", reserve, 0.9 / 1.9, 3) is None
    # a dense model's batch does not move with the share (no state to split off)
    assert max_batch_per_replica(dense, acc, 4096, lay, "bf16", "bf16", reserve, state_share=0.5) == \
        max_batch_per_replica(dense, acc, 4096, lay, "bf16", "bf16", reserve)
    for share in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="state_share must be in"):
            state_pool_batch(GDN, acc, lay, state_share=share)
    with pytest.raises(ValueError, match="slots_per_request must be at least 1"):
        state_pool_batch(GDN, acc, lay, state_share=0.5, slots_per_request=0)
    with pytest.raises(ValueError, match=r"state_share must be in \[0, 1\)"):
        max_batch_per_replica(GDN, acc, 623, lay, state_share=1.0)


def test_sglang_runs_a_hybrid_at_its_state_pools_batch_and_queues_the_rest():
    # GPUStack's Qwen3.5-35B-A3B page: 512 clients of ShareGPT (342 / 281 tokens) on one H200, SGLang 0.5.9
    sg = serving_estimate(GDN, "h200", 342, 281, concurrency=512, engine="sglang")
    assert sg.decode_batch == 155 and sg.batch_limit == "state_pool"
    assert "Mamba / linear-attention states" in calc.serving.BATCH_LIMIT_WHY[sg.batch_limit]
    # the other 357 clients wait for a slot: by Little's law about 357 / throughput (requests/s) of TTFT, where the
    # page measured a mean TTFT of 34.4 s at 8.0 requests/s
    assert sg.ttft.estimate_s == pytest.approx(357 / sg.requests_per_s, rel=0.15)
    assert sg.ttft.estimate_s > 20
    # vLLM keeps states and KV in one pool and runs all 512 (its max_num_seqs is 1,024 on an H200)
    vl = serving_estimate(GDN, "h200", 342, 281, concurrency=512, engine="vllm")
    assert vl.decode_batch == 512 and vl.batch_limit == "concurrency"
    # below the pool's batch nothing changes: 64 clients run as 64
    assert serving_estimate(GDN, "h200", 342, 281, concurrency=64, engine="sglang").decode_batch == 64


def test_the_measured_pages_row_box_says_what_holds_the_batch():
    from ui.measured_views import batch_limit_words
    sg = serving_estimate(GDN, "h200", 342, 281, concurrency=512, engine="sglang")
    words = batch_limit_words(sg)
    assert words.startswith(" (SGLang: its pool of Mamba / linear-attention states") and words.endswith(
        "; the other 357 wait)")  # 512 clients, 155 decoding
    assert batch_limit_words(serving_estimate(GDN, "h200", 342, 281, concurrency=64, engine="sglang")) == ""
