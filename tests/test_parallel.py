"""Many GPUs: per-GPU memory, the step with collectives, the throughput front, the capacity plan.

Every expected value is computed by hand in the comment beside it (NVLink 4: 450 GB/s per GPU and
direction, 1 us per hop; PCIe Gen5: 63 GB/s, 5 us; H100 SXM: 80 GB, 3.35 TB/s, 989 TFLOP/s bf16).
"""
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calc
from calc import collectives, layout_choice, planning
from calc import gpu_share as GS
from calc import layout as LY
from calc import parallel as P

H100 = calc.get_accelerator("h100-sxm")
H200 = calc.get_accelerator("h200")
L70 = calc.get_model("llama-3.1-70b")
DSV3 = calc.get_model("deepseek-v3")
NVLINK4 = collectives.get_interconnect("nvlink4")


# -- data ---------------------------------------------------------------------------------------
def test_every_accelerator_names_a_known_interconnect():
    for gid in calc.list_accelerators():
        acc = calc.get_accelerator(gid)
        if acc.interconnect is not None:
            ic = collectives.get_interconnect(acc.interconnect)
            assert ic.source and ic.bandwidth_bytes_per_s > 0
            if ic.scale_out is not None:
                collectives.get_interconnect(ic.scale_out)
    # NVLink 4: "900 GB/s" both directions on the H100 datasheet = 450 GB/s each way, 8 per NVSwitch domain.
    assert NVLINK4.bandwidth_bytes_per_s == 450e9 and NVLINK4.domain_size == 8
    assert collectives.get_interconnect("pcie5").bandwidth_bytes_per_s == 63e9  # 32 GT/s x 16 lanes / 8, 128b/130b
    assert "interconnects" not in calc.list_accelerators()


# -- memory per GPU -----------------------------------------------------------------------------
@pytest.mark.parametrize("tp, expected", [(2, 70_553_706_496), (4, 35_276_853_248), (8, 17_638_426_624)])
def test_llama_70b_bf16_weights_per_gpu(tp, expected):
    # 70,553,706,496 parameters x 2 bytes = 141,107,412,992 B, split over TP ranks.
    assert GS.weight_bytes_per_gpu(L70, LY.Layout(tp)) == expected
    assert calc.memory_budget(L70, H100, 8192, tp=tp).weights_bytes == expected


def test_llama_70b_kv_per_gpu_per_token_at_tp8_and_tp16():
    # One GPU: 2 x K=8 heads x H=128 x L=80 x 2 B = 327,680 B per token.
    # TP 8: one KV head per GPU: 2 x 1 x 128 x 80 x 2 = 40,960 B.
    assert GS.kv_bytes_per_gpu_per_token(L70, LY.Layout(1)) == 327_680
    assert GS.kv_bytes_per_gpu_per_token(L70, LY.Layout(8)) == 40_960
    # TP 16 > K = 8: still one whole head per GPU (each head stored on two GPUs): 40,960 B, of which
    # half (20,480 B per token) is a copy.
    assert GS.kv_bytes_per_gpu_per_token(L70, LY.Layout(16)) == 40_960
    mem = GS.gpu_memory(L70, H100, 1000, 1, LY.Layout(16))
    assert mem.kv_bytes == 40_960 * 1000
    assert mem.kv_replicated_bytes == 20_480 * 1000


def test_deepseek_v3_latent_is_not_split_by_tp():
    # MLA latent: (d_c + d_h^R) x L x 2 B = (512 + 64) x 61 x 2 = 70,272 B per token, on every TP rank.
    assert GS.kv_bytes_per_gpu_per_token(DSV3, LY.Layout(8)) == 70_272 == calc.kv_bytes_per_token(DSV3)
    # 64 sequences of 8,192 tokens at TP 8: each GPU holds all 64 latents: 64 x 8,192 x 70,272 B = 36.84 GB;
    # 7/8 of it is a copy of another rank's.
    tp8 = GS.gpu_memory(DSV3, H200, 8192, 64, LY.Layout(8))
    assert tp8.kv_bytes == pytest.approx(64 * 8192 * 70_272)
    assert tp8.kv_replicated_bytes == pytest.approx(64 * 8192 * 70_272 * 7 / 8)
    # DP attention (TP 1, EP 8): each GPU holds the latents of its own 64 / 8 = 8 sequences: 4.61 GB.
    dp = GS.gpu_memory(DSV3, H200, 8192, 64, LY.Layout(1, 1, 8))
    assert dp.kv_bytes == pytest.approx(8 * 8192 * 70_272) and dp.kv_replicated_bytes == 0


def test_constant_state_splits_by_its_heads():
    # A 4-layer Qwen3-Next-style stack: 1 attention layer with one KV head of 128 (512 B per token in
    # bf16) and 3 Gated DeltaNet layers of 2,146,304 B of state each (6,438,912 B per sequence; the
    # hand count of tests/test_layers.py). At TP 2 the single KV head is stored on both ranks (512 B per
    # token per GPU, half of it a copy) and the state's 32 value heads split 16 + 16: 3,219,456 B.
    from calc.config_json import from_hf_config
    m = from_hf_config({"model_type": "qwen3_next", "num_hidden_layers": 4, "hidden_size": 256,
                        "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 128,
                        "intermediate_size": 512, "vocab_size": 1000, "full_attention_interval": 4,
                        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
                        "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4})
    mem = GS.gpu_memory(m, H100, 1000, 1, LY.Layout(2))
    assert mem.state_bytes == 3_219_456
    assert mem.kv_bytes == 512 * 1000 and mem.kv_replicated_bytes == 256 * 1000
    assert calc.memory_budget(m, H100, 1000, tp=2).kv_bytes == 512 * 1000 + 3_219_456


def test_pipeline_halves_weights_and_cache_per_gpu():
    # TP 4 x PP 2 = 8 GPUs: 141.1 GB / 8 = 17.64 GB of weights; each GPU 40 layers of 2 of its 8 KV heads:
    # 2 x 2 x 128 x 40 x 2 = 40,960 B per token.
    lay = LY.Layout(4, 2)
    assert GS.weight_bytes_per_gpu(L70, lay) == 17_638_426_624
    assert GS.kv_bytes_per_gpu_per_token(L70, lay) == 40_960


def test_max_batch_per_gpu_at_tp8():
    # 80 GB - 17.638 GB = 62.36 GB free; 8,192 tokens x 40,960 B = 335.5 MB per sequence -> 185.
    assert calc.max_batch(L70, H100, 8192, tp=8) == 185
    assert calc.max_batch(L70, H100, 8192) == 0  # 141 GB of weights do not fit on one 80 GB GPU


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["llama-3.1-70b", "llama-3.1-8b", "deepseek-v3", "mixtral-8x7b", "qwen3-8b", "gemma-2-9b"]),
       st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]), st.integers(1, 64), st.integers(1, 32768))
def test_more_gpus_never_reduce_free_memory_per_gpu(model_id, tp, pp, batch, ctx):
    m = calc.get_model(model_id)
    base = LY.Layout(tp, pp)
    for wider in (LY.Layout(2 * tp, pp), LY.Layout(tp, 2 * pp), LY.Layout(tp, pp, 2 * tp)):  # EP: attention DP 2
        try:
            LY.check_layout(m, base)
            LY.check_layout(m, wider)
        except ValueError:
            continue
        assert (GS.gpu_memory(m, H100, ctx, batch, wider).free_bytes
                >= GS.gpu_memory(m, H100, ctx, batch, base).free_bytes - 1e-3)


# -- time per step ------------------------------------------------------------------------------
def test_ring_all_reduce_formula():
    # 16,384 B over 8 ranks: 2 x 7/8 x 16,384 / 450e9 + 2 x 7 x 1e-6 = 6.37e-8 + 1.4e-5 = 14.0637 us.
    assert collectives.ring_all_reduce_s(16_384, 8, NVLINK4) == pytest.approx(14.0637e-6, rel=1e-4)
    assert collectives.ring_all_reduce_s(16_384, 1, NVLINK4) == 0


def test_all_reduce_on_a_switch_takes_one_or_two_hops():
    # NVSwitch lets every GPU write to all 7 peers at once (direct_peers): the engines' one-shot all-reduce,
    # (n - 1) x M / bw + latency, and two-shot, 2 (n - 1) / n x M / bw + 2 x latency, beat the ring's 14 hops.
    # 16,384 B over 8 H100s (450 GB/s, 1 us): one-shot 7 x 16,384 / 450e9 + 1 us = 0.2549 + 1 = 1.2549 us;
    # two-shot 0.0637 + 2 = 2.0637 us; ring 14.0637 us -> 1.2549 us.
    assert NVLINK4.direct_peers
    assert collectives.all_reduce_s(16_384, 8, NVLINK4) == pytest.approx(1.2549e-6, rel=1e-3)
    # 1 MiB (1,048,576 B): one-shot 7 x 1,048,576 / 450e9 + 1 us = 17.31 us; two-shot 2 x 7/8 x 1,048,576 / 450e9
    # + 2 us = 4.078 + 2 = 6.078 us; ring 4.078 + 14 = 18.08 us -> 6.078 us
    assert collectives.all_reduce_s(1_048_576, 8, NVLINK4) == pytest.approx(6.0779e-6, rel=1e-3)
    # PCIe has no switch that carries every pair at full speed here: the ring, 2 x 3/4 x 16,384 / 63e9 + 6 x 5 us
    pcie = collectives.get_interconnect("pcie5")
    assert not pcie.direct_peers
    assert collectives.all_reduce_s(16_384, 4, pcie) == pytest.approx(2 * 0.75 * 16_384 / 63e9 + 30e-6, rel=1e-9)
    assert collectives.all_reduce_s(16_384, 1, NVLINK4) == 0
    # arrays of messages, each the least of the three schedules
    out = collectives.all_reduce_s(np.array([16_384, 1_048_576]), 8, NVLINK4)
    assert out == pytest.approx([1.2549e-6, 6.0779e-6], rel=1e-3)


def test_all_to_all_pays_its_latency_once_like_deepep():
    # DeepEP's low-latency dispatch (deepseek-ai/DeepEP docs/legacy.md): 128 tokens x 7168 hidden x top-8 in
    # FP8 = 7,340,032 B per rank, H800 + 400 Gb/s CX7: 155 us at EP 32, 194 us at EP 256.
    # Here on InfiniBand NDR (50 GB/s, 5 us): 31/32 x 7,340,032 / 50e9 + 5e-6 = 142.2 + 5 = 147.2 us;
    # at EP 256: 255/256 x 7,340,032 / 50e9 + 5e-6 = 151.2 us (a latency per peer would give 297 us, 1.42 ms).
    ndr = collectives.get_interconnect("infiniband-ndr")
    msg = 128 * 7168 * 8
    assert collectives.all_to_all_s(msg, 32, ndr) == pytest.approx(147.21e-6, rel=1e-3)
    assert collectives.all_to_all_s(msg, 256, ndr) == pytest.approx(151.23e-6, rel=1e-3)
    assert collectives.all_to_all_s(msg, 32, ndr) == pytest.approx(155e-6, rel=0.1)   # DeepEP's EP 32 figure
    assert collectives.all_to_all_s(msg, 1, ndr) == 0


def test_all_reduce_over_two_servers_runs_in_two_levels():
    # 16 tokens of DeepSeek-V3 (16 x 7,168 x 2 B = 229,376 B) over TP 16 on 2 HGX H100 servers:
    # inside each server a reduce-scatter and an all-gather on NVLink 4, one hop each (NVSwitch reaches every
    # peer): 2 x 7/8 x 229,376 / 450e9 = 0.892 us + 2 x 1 us; between the 2 servers each GPU's 1/8 slice
    # (28,672 B) all-reduced on its own NDR NIC: 2 x 1/2 x 28,672 / 50e9 = 0.573 us + 2 x ceil(log2 2) x 5 us.
    # Total 0.892 + 2 + 0.573 + 10 = 13.465 us, where a flat ring at InfiniBand's pace would take
    # 2 x 15/16 x 229,376 / 50e9 + 30 x 5 us = 158.6 us.
    msg = 16 * 7168 * 2
    ndr = collectives.get_interconnect("infiniband-ndr")
    assert collectives.group_all_reduce_s(msg, 16, NVLINK4) == pytest.approx(13.465e-6, rel=1e-3)
    assert collectives.ring_all_reduce_s(msg, 16, ndr) == pytest.approx(158.60e-6, rel=1e-3)
    # within one server it is the fabric's own all-reduce (all_reduce_s: one-shot 7 x 229,376 / 450e9 + 1 us =
    # 4.568 us, two-shot 0.892 + 2 = 2.892 us); 8 servers (k = 8): the tree's 2 x 3 hops of 5 us
    assert collectives.group_all_reduce_s(msg, 8, NVLINK4) == collectives.all_reduce_s(msg, 8, NVLINK4)
    assert collectives.group_all_reduce_s(msg, 8, NVLINK4) == pytest.approx(2.892e-6, rel=1e-3)
    # TP 64: 0.892 + 2 + 2 x 7/8 x 28,672 / 50e9 (1.004) + 30 = 33.90 us
    assert collectives.group_all_reduce_s(msg, 64, NVLINK4) == pytest.approx(33.896e-6, rel=1e-3)
    # a fabric without direct peers keeps the ring inside each domain: 2 x 7 hops of 1 us, 25.465 us at TP 16
    ring_fabric = dataclasses.replace(NVLINK4, direct_peers=False)
    assert collectives.group_all_reduce_s(msg, 16, ring_fabric) == pytest.approx(25.465e-6, rel=1e-3)
    with pytest.raises(ValueError, match="network between domains"):
        collectives.group_all_reduce_s(msg, 16, collectives.get_interconnect("ici-v5e").__class__(
            id="x", name="one box", bandwidth_bytes_per_s=1e11, latency_s=1e-6, domain_size=8))


def test_all_to_all_across_servers_splits_fabric_and_network():
    # DeepEP's 7,340,032 B per rank at EP 32 over 4 H800 servers: 7/32 of it to peers in the same server on
    # NVLink (3.57 us), 24/32 to the other servers on the NIC (24/32 x 7,340,032 / 50e9 = 110.1 us), at once,
    # + 5 us: 115.1 us, under DeepEP's measured 155 us (its low-latency kernels send even to node-local
    # peers over RDMA).
    msg = 128 * 7168 * 8
    t = collectives.group_all_to_all_s(msg, 32, NVLINK4)
    assert t == pytest.approx(115.1e-6, rel=1e-3)
    assert t < 155e-6
    assert collectives.group_all_to_all_s(msg, 8, NVLINK4) == collectives.all_to_all_s(msg, 8, NVLINK4)


def test_decode_at_tp8_on_h100_weights_an_eighth_and_one_shot_all_reduces():
    one = calc.decode_step_time(L70, H100, 1, 8192)
    eight = calc.decode_step_time(L70, H100, 1, 8192, tp=8)
    # TP 1: 141.1 GB less the gathered 2.10 GB input table (128,256 x 8,192 x 2 B) = 139.0 GB / 3.35 TB/s
    # = 41.49 ms of weight read; TP 8: 17.38 GB / 3.35 TB/s = 5.187 ms.
    assert eight.weights_s == pytest.approx(one.weights_s / 8, rel=1e-12)
    assert eight.weights_s == pytest.approx(5.1868e-3, rel=1e-4)
    # 80 layers x 2 all-reduces of one token's activations, 8,192 x 2 B = 16,384 B, each one-shot over NVSwitch
    # (each GPU reads its 7 peers' buffers in one hop): 7 x 16,384 / 450e9 + 1 us = 1.2549 us; 160 x 1.2549 us
    # = 0.20078 ms (a ring's 2 x 7 hops would take 160 x 14.0637 us = 2.2502 ms).
    assert eight.comm_s == pytest.approx(160 * (7 * 16_384 / 450e9 + 1e-6), rel=1e-12)
    assert eight.comm_s == pytest.approx(0.20078e-3, rel=1e-4)
    # total = kv + max(weights, compute) + comm: 0.1002 + 5.265 + 0.201 = 5.566 ms.
    assert eight.total_s == pytest.approx(eight.kv_s + max(eight.weights_s, eight.compute_s) + eight.comm_s)
    assert one.comm_s == 0


def test_pcie_tp8_is_slower_per_token_than_nvlink():
    nv = calc.decode_step_time(L70, H100, 1, 8192, tp=8)
    pcie = calc.decode_step_time(L70, H100, 1, 8192, tp=8, interconnect="pcie5")
    # PCIe Gen5: 160 x (1.75 x 16,384 / 63e9 + 14 x 5 us) = 160 x 70.46 us = 11.27 ms of all-reduces.
    assert pcie.comm_s == pytest.approx(160 * (1.75 * 16_384 / 63e9 + 14 * 5e-6), rel=1e-12)
    assert pcie.total_s > nv.total_s


def test_pipeline_at_batch_one_adds_a_hop_and_no_speed():
    # PP 2 at B = 1: one micro-batch, so each stage idles half the cycle (the bubble); the token still
    # crosses all 80 layers: TPOT(PP 2) = TPOT(PP 1) + one hop of 16,384 B (16,384 / 450e9 + 1 us).
    one = calc.decode_step_time(L70, H200, 1, 4096)
    two = calc.decode_step_time(L70, H200, 1, 4096, pp=2)
    assert two.total_s == pytest.approx(one.total_s + 16_384 / 450e9 + 1e-6, rel=1e-9)
    split = P.step_split(L70, H200, 1, 4096, LY.Layout(1, 2))
    assert split["bubble_s"] == pytest.approx((one.total_s) / 2, rel=1e-9)


def test_group_beyond_the_nvswitch_domain_uses_infiniband_between_servers():
    # TP 16 spans two HGX servers: each all-reduce of 16,384 B runs in two levels (group_all_reduce_s):
    # NVLink 4 inside each server, a reduce-scatter and an all-gather of one hop each, 2 x 7/8 x 16,384 / 450e9
    # + 2 x 1 us = 2.064 us, and each GPU's 2,048 B slice between the servers on its NDR NIC, 2 x 1/2 x 2,048 /
    # 50e9 + 2 x 5 us = 10.041 us: 160 all-reduces x 12.105 us = 1.937 ms (a flat ring at InfiniBand's pace:
    # 160 x 150.61 us = 24.10 ms).
    step = calc.decode_step_time(L70, H100, 1, 8192, tp=16)
    per = 2 * 7 / 8 * 16_384 / 450e9 + 2e-6 + 2 * 1 / 2 * 2_048 / 50e9 + 2 * 5e-6
    assert step.comm_s == pytest.approx(160 * per, rel=1e-12)
    assert step.comm_s == pytest.approx(1.937e-3, rel=1e-3)


def test_layout_errors_are_sentences():
    with pytest.raises(ValueError, match="mixture-of-experts"):
        calc.decode_step_time(L70, H100, 1, 1024, ep=2)
    with pytest.raises(ValueError, match="query heads"):
        calc.decode_step_time(L70, H100, 1, 1024, tp=3)
    with pytest.raises(ValueError, match="not ganged"):
        calc.decode_step_time(calc.get_model("llama-3-8b"), calc.get_accelerator("m2-ultra"), 1, 1024, tp=2)
    with pytest.raises(ValueError, match="tp"):
        LY.Layout(tp=0)


def test_sweeps_take_the_layout():
    df = calc.decode_sweep(L70, H100, 8192, tp=8)
    assert df["batch"].max() == 185 and df["fits"].all()
    assert df["comm_s"].min() > 0
    split = calc.sweeps.decode_split(L70, H100, 8192, tp=8)
    assert split["max_batch"].iat[0] == 185
    ttft = calc.sweeps.ttft_sweep(L70, H100, [128, 2048], tp=8)
    assert ttft["ttft_s"].iat[1] == pytest.approx(calc.prefill_time(L70, H100, 2048, tp=8).total_s)


# -- throughput front ---------------------------------------------------------------------------
def test_front_points_are_not_dominated():
    df = layout_choice.throughput_frontier(L70, H100, 4096, tps=(2, 4, 8))
    assert set(df["tp"]) == {2, 4, 8}
    x, y = df["tokens_per_s_per_user"].to_numpy(), df["tokens_per_s_per_gpu"].to_numpy()
    for i in np.flatnonzero(df["pareto"].to_numpy()):
        assert not np.any((x >= x[i]) & (y >= y[i]) & ((x > x[i]) | (y > y[i])))
    for i in np.flatnonzero(~df["pareto"].to_numpy()):
        assert np.any((x >= x[i]) & (y >= y[i]) & ((x > x[i]) | (y > y[i])))


# -- capacity plan ------------------------------------------------------------------------------
TRAFFIC = planning.ServingTraffic(requests_per_s=5.0, peak_to_average=2.0, input_tokens=2048, output_tokens=256)


def test_plan_meets_targets_and_no_cheaper_grid_layout_does():
    plan = planning.capacity_plan(L70, H100, TRAFFIC, tpot_target_s=0.04, ttft_target_s=0.5)
    lay = plan.layout
    # Its own numbers, recomputed with the public functions: TPOT at the mean context 2,048 + 128.
    tpot = calc.decode_step_time(L70, H100, plan.batch, 2176, tp=lay.tp, pp=lay.pp).total_s
    ttft = calc.prefill_time(L70, H100, 2048, tp=lay.tp, pp=lay.pp).total_s
    assert tpot <= 0.04 and ttft <= 0.5
    assert plan.batch <= calc.max_batch(L70, H100, 2304, tp=lay.tp, pp=lay.pp)
    assert plan.usd_per_hour == pytest.approx(plan.gpus * 3.99)
    # Brute force over the grid: no (TP, PP, batch) meeting both targets needs fewer GPUs.
    peak = 10.0
    for tp in (1, 2, 4, 8):
        for pp in (1, 2):
            ceiling = min(512, calc.max_batch(L70, H100, 2304, tp=tp, pp=pp))
            if ceiling < 1:
                continue
            t1 = calc.prefill_time(L70, H100, 2048, tp=tp, pp=pp).total_s
            if t1 > 0.5:
                continue
            for b in range(1, ceiling + 1, 7):
                step = calc.decode_step_time(L70, H100, b, 2176, tp=tp, pp=pp).total_s
                if step > 0.04:
                    break
                rps = 1.0 / (t1 + 256 * step / b)
                gpus = max(1, math.ceil(peak / rps)) * tp * pp
                assert gpus >= plan.gpus, (tp, pp, b, gpus)


def test_plan_options_one_row_per_layout_and_the_plan_is_the_cheapest():
    grid = planning.plan_grid(L70, H100, TRAFFIC)
    options = planning.plan_options(grid, TRAFFIC, 0.04, 0.5, 3.99)
    plan = planning.capacity_plan(L70, H100, TRAFFIC, 0.04, 0.5, grid=grid)
    assert len(options) == 8  # TP 1, 2, 4, 8 x PP 1, 2
    best = options.iloc[0]
    assert (best["tp"], best["pp"], best["gpus"], best["batch"]) == (plan.layout.tp, plan.layout.pp, plan.gpus,
                                                                      plan.batch)
    # 141 GB of weights on one 80 GB GPU: TP 1 x PP 1 fails on memory; every other row with GPUs costs
    # GPUs x $3.99 x 720 h.
    tp1 = options[(options.tp == 1) & (options.pp == 1)].iloc[0]
    assert tp1["fails"] == "memory" and np.isnan(tp1["gpus"])
    ok = options[options["fails"] == ""]
    assert np.allclose(ok["usd_per_month"], ok["gpus"] * 3.99 * 720)


def test_zero_traffic_gives_one_always_on_replica():
    plan = planning.capacity_plan(L70, H100, planning.ServingTraffic(requests_per_s=0.0), 0.05, 2.0)
    assert plan.layout.replicas == 1
    # 141 GB of weights need two 80 GB GPUs; memory is what sets the bill.
    assert plan.gpus == 2 and plan.binding == "memory"
    assert "1 replica of TP2" in plan.verdict


@pytest.mark.parametrize("price, money", [
    (19.56, "$39.12/h ($28,166 a month)"),   # 2 x $19.56 = $39.12 an hour (cents below $100); x 720 h = $28,166.40
    (60.0, "$120/h ($86,400 a month)"),      # 2 x $60 = $120: whole dollars from $100, as everywhere else
    (0.02, "$0.040/h ($28.80 a month)"),     # 2 x $0.02 = $0.04 (below $1: two significant digits); x 720 = $28.80
])
def test_the_plans_verdict_writes_its_rent_as_every_other_dollar(price, money):
    # the zero-traffic plan of the test above: 2 x H100 (141 GB of weights on 80 GB GPUs)
    plan = planning.capacity_plan(L70, H100, planning.ServingTraffic(requests_per_s=0.0), 0.05, 2.0,
                                  price_per_hour_usd=price)
    assert plan.gpus == 2
    assert f"= 2 x {H100.name}, {money}: TPOT " in plan.verdict, plan.verdict


def test_plan_binding_tpot_when_the_target_is_tight():
    # At 12 ms per token, TP 2 (21.8 ms at B = 1) cannot serve: the plan needs more TP, bound by TPOT.
    plan = planning.capacity_plan(L70, H100, planning.ServingTraffic(requests_per_s=0.0), 0.012, 2.0)
    assert plan.layout.tp >= 4 and plan.binding == "TPOT"


def test_plan_binding_ttft_for_a_long_prompt():
    # Llama-3.1-8B, a 32,768-token prompt: one H100 prefills it in 0.78 s, two (TP 2) in 0.43 s; a 0.5 s TTFT
    # target needs the second GPU although one holds the model: bound by TTFT.
    m = calc.get_model("llama-3.1-8b")
    plan = planning.capacity_plan(m, H100, planning.ServingTraffic(0.0, 1.0, 32768, 256), 0.1, 0.5)
    assert calc.prefill_time(m, H100, 32768).total_s > 0.5 >= calc.prefill_time(m, H100, 32768, tp=2).total_s
    assert plan.gpus == 2 and plan.binding == "TTFT"


def test_plan_bound_by_traffic_alone():
    # Llama-3.2-1B, 256 + 64 tokens: one H100 holds far more than the grid's 512 sequences and every
    # target is loose, so only the arrival rate sets the count: replicas = ceil(peak / per replica).
    m = calc.get_model("llama-3.2-1b")
    traffic = planning.ServingTraffic(requests_per_s=4000.0, input_tokens=256, output_tokens=64)
    plan = planning.capacity_plan(m, H100, traffic, 1.0, 1.0)
    # No target and no memory limit binds; what sets the replicas is each request's prefill, which a replica runs
    # one after another: ttft x requests/s per replica = the share of its time spent in prefill, over half here.
    assert plan.binding == "prefill" and plan.layout.replicas > 1
    assert plan.ttft_s * plan.requests_per_s_per_replica > 0.5
    assert plan.layout.replicas == math.ceil(4000.0 / plan.requests_per_s_per_replica)


def test_disaggregated_pools_meet_their_targets_and_size_for_the_peak():
    d = planning.disaggregated_plan(L70, H100, TRAFFIC, 0.04, 0.5)
    lp, ld = d.prefill_layout, d.decode_layout
    ttft = calc.prefill_time(L70, H100, 2048, tp=lp.tp, pp=lp.pp).total_s
    tpot = calc.decode_step_time(L70, H100, d.decode_batch, 2176, tp=ld.tp, pp=ld.pp).total_s
    assert ttft <= 0.5 and tpot <= 0.04
    # Peak 10 requests/s: prefill replicas = ceil(10 x TTFT); decode replicas = ceil(10 x 256 x TPOT / B).
    assert lp.replicas == max(1, math.ceil(10 * ttft))
    assert ld.replicas == max(1, math.ceil(10 * 256 * tpot / d.decode_batch))
    assert d.ratio == pytest.approx(d.prefill_gpus / d.decode_gpus)
    # its rent as every other dollar (number_text.fmt_usd): cents below $100, whole dollars from $100
    gpus = d.prefill_gpus + d.decode_gpus
    cheap = planning.disaggregated_plan(L70, H100, TRAFFIC, 0.04, 0.5, price_per_hour_usd=19.56 / gpus)
    assert cheap.verdict.endswith(f"{gpus} in all, $19.56/h."), cheap.verdict
    dear = planning.disaggregated_plan(L70, H100, TRAFFIC, 0.04, 0.5, price_per_hour_usd=1234.4 / gpus)
    assert dear.verdict.endswith(f"{gpus} in all, $1,234/h."), dear.verdict      # not "$1,234.40/h"


@pytest.mark.parametrize("rps", [0.0, 0.01, 5.0])
def test_both_plans_give_the_same_batch_the_largest_within_the_targets(rps):
    # Llama-3-8B on one H100, 2,048 + 256 tokens, TPOT <= 20 ms: one TP1 replica of each kind covers 0 to 10
    # requests/s. Both plans' batch is the largest that needs no more GPUs, found here by hand: the largest B whose
    # step at the mean context 2,048 + 128 takes <= 20 ms and whose cache fits at 2,304 tokens (ceiling 211):
    # B = 182 (19.98 ms). The disaggregated decode pool used to say batch 1 at 0 requests/s (the grid's first row).
    m = calc.get_model("llama-3-8b")
    by_hand = max(b for b in range(1, 513) if b <= calc.max_batch(m, H100, 2304)
                  and calc.decode_step_time(m, H100, b, 2176).total_s <= 0.02)
    assert by_hand == 182
    traffic = planning.ServingTraffic(rps, 2.0, 2048, 256)
    plan = planning.capacity_plan(m, H100, traffic, 0.02, 1.0)
    split = planning.disaggregated_plan(m, H100, traffic, 0.02, 1.0)
    assert (plan.layout.label, plan.gpus, plan.batch) == ("TP1", 1, 182)
    assert (split.decode_layout.label, split.decode_gpus, split.decode_batch) == ("TP1", 1, 182)
    assert "at batch 182 " in plan.verdict and "at batch 182 " in split.verdict


def test_the_decode_pool_takes_the_most_headroom_among_its_cheapest_rows():
    # Brute force over the grid: no row that meets the TPOT target with as few GPUs serves more requests/s per GPU
    grid = planning.plan_grid(L70, H100, TRAFFIC)
    d = planning.disaggregated_plan(L70, H100, TRAFFIC, 0.04, 0.5, grid=grid)
    ok = grid[grid["fits"] & (grid["tpot_s"] <= 0.04)]
    rate = ok["batch"] / (256 * ok["tpot_s"])                                 # requests/s per decode replica
    gpus = np.maximum(1, np.ceil(10.0 / rate)) * ok["gpus_per_replica"]
    assert d.decode_gpus == gpus.min()
    best = (rate / ok["gpus_per_replica"])[gpus == gpus.min()].max()
    ld = d.decode_layout
    assert d.decode_batch / (256 * d.tpot_s) / (ld.tp * ld.pp) == pytest.approx(best)


def test_the_load_note_says_what_the_batch_means_and_how_full_the_peak_makes_it():
    m = calc.get_model("llama-3-8b")
    idle = planning.ServingTraffic(0.0, 2.0, 2048, 256)
    note = planning.load_note(planning.capacity_plan(m, H100, idle, 0.02, 1.0),
                              planning.disaggregated_plan(m, H100, idle, 0.02, 1.0), idle)
    assert note.startswith("Batch, in both lines: the largest a replica runs within the TPOT target")
    assert "With no traffic (0 requests/s) the always-on replicas stay idle" in note
    # 5 requests/s x 2 at the peak. Colocated, one replica at B = 182: 1 / (prefill 2,048 + 256 x TPOT / 182)
    # requests/s; decode pool: 182 / (256 x TPOT).
    busy = planning.ServingTraffic(5.0, 2.0, 2048, 256)
    tpot = calc.decode_step_time(m, H100, 182, 2176).total_s
    colocated = 1 / (calc.prefill_time(m, H100, 2048).total_s + 256 * tpot / 182)
    decode = 182 / (256 * tpot)
    note = planning.load_note(planning.capacity_plan(m, H100, busy, 0.02, 1.0),
                              planning.disaggregated_plan(m, H100, busy, 0.02, 1.0), busy)
    assert (f"The peak of 10 requests/s uses {10 / colocated:.0%} of the colocated replicas' capacity "
            f"({colocated:,.0f} requests/s) and {10 / decode:.0%} of the decode pool's ({decode:,.0f} requests/s).") in note


def test_two_pools_dearer_than_one_are_explained():
    import dataclasses
    plan = planning.capacity_plan(L70, H100, TRAFFIC, 0.04, 0.5)
    d = planning.disaggregated_plan(L70, H100, TRAFFIC, 0.04, 0.5)
    # as many GPUs or fewer: nothing to explain
    assert planning.disaggregation_note(plan, dataclasses.replace(d, gpus=plan.gpus)) == ""
    # 120 prefill + 155 decode GPUs = 275 against 162 colocated: the prefill pool one prompt at a time
    more = dataclasses.replace(d, prefill_gpus=120, decode_gpus=155, gpus=275)
    note = planning.disaggregation_note(dataclasses.replace(plan, gpus=162), more)
    assert note.startswith("Split into two pools it takes 275 GPUs against 162 colocated: its prefill pool "
                           "(120 GPUs) is sized one prompt at a time"), note
    one = dataclasses.replace(d, prefill_gpus=1, decode_gpus=2, gpus=3)
    assert "its prefill pool (1 GPU) is sized" in planning.disaggregation_note(dataclasses.replace(plan, gpus=2), one)


def test_plan_that_cannot_meet_the_target_says_so():
    with pytest.raises(ValueError, match="TPOT of 1.00 ms"):
        planning.capacity_plan(L70, H100, TRAFFIC, 0.001, 1.0)


def test_plan_that_cannot_meet_a_target_names_the_fastest_layout_and_what_to_change():
    # Llama-3.1-405B on H100, bound timing: the fastest row that fits is TP8 PP2 (16 GPUs) at batch 1; its TPOT is
    # what the message quotes as the target to loosen to, and its prefill the TTFT to loosen to
    m = calc.get_model("llama-3.1-405b")
    grid = planning.plan_grid(m, H100, TRAFFIC)
    fits = grid[grid["fits"]]
    fast = fits.sort_values(["tpot_s", "batch"]).iloc[0]
    assert (fast["layout"], fast["batch"], fast["gpus_per_replica"]) == ("TP8 PP2", 1, 16)
    tpot_ms = f"{fast['tpot_s'] * 1e3:.1f} ms"
    with pytest.raises(ValueError) as err:
        planning.capacity_plan(m, H100, TRAFFIC, 0.02, 1.0, grid=grid)
    assert str(err.value) == (
        f"no layout of the grid meets a TPOT of 20.0 ms: the fastest that fits, TP8 PP2 at batch 1, takes {tpot_ms} "
        f"per token. To plan this traffic, loosen the TPOT target to {tpot_ms} or more, or choose a GPU with more "
        "memory bandwidth, more GPUs per replica than the grid's 16 (a larger TP), or lower-precision weights than "
        "bf16 (fewer bytes read per token).")
    ttft_ms = f"{fits['ttft_s'].min() * 1e3:,.0f} ms"
    with pytest.raises(ValueError, match=rf"fastest prefill that fits, TP8 PP2 at batch 1, takes {ttft_ms}\. To plan "
                                         rf"this traffic, loosen the TTFT target to {ttft_ms} or more, or choose a GPU "
                                         r"with more compute \(FLOP/s\)") as err:
        planning.capacity_plan(m, H100, TRAFFIC, 1.0, 0.01, grid=grid)
    assert str(err.value).endswith("lower-precision weights than bf16, or shorter prompts (more prefix-cache hits).")
    # weights already 4-bit: no lower precision to suggest
    grid4 = planning.plan_grid(m, H100, TRAFFIC, "int4")
    with pytest.raises(ValueError) as err:
        planning.capacity_plan(m, H100, TRAFFIC, 0.001, 1.0, weight_dtype="int4", grid=grid4)
    assert "lower-precision" not in str(err.value) and str(err.value).endswith("(a larger TP).")


def test_plan_that_meets_each_target_but_never_both_names_the_closest_of_each():
    import pandas as pd
    # two layouts: TP8 decodes fast but prefills slowly, TP4 the other way round; neither meets both targets
    grid = pd.DataFrame(dict(tp=[8, 4], pp=[1, 1], ep=[1, 1], layout=["TP8", "TP4"], gpus_per_replica=[8, 4],
                             batch=[2, 1], max_batch=[10, 10], fits=[True, True], tpot_s=[0.02, 0.06],
                             ttft_s=[0.9, 0.2], requests_per_s_per_replica=[1.0, 1.0]))
    with pytest.raises(ValueError) as err:
        planning.capacity_plan(L70, H100, TRAFFIC, 0.03, 0.5, grid=grid)
    assert str(err.value).startswith(
        "no layout of the grid meets both the TPOT and the TTFT target at once: within the TPOT target the fastest "
        "prefill, TP8 at batch 2, takes 900 ms; within the TTFT target the fastest, TP4 at batch 1, takes 60.0 ms "
        "per token. To plan this traffic, loosen the TTFT target to 900 ms or the TPOT target to 60.0 ms, or choose")


def test_a_rate_above_the_plans_limit_is_refused_and_a_large_fleet_gets_a_note():
    with pytest.raises(ValueError, match="requests_per_s must be at most 100,000,000"):
        planning.ServingTraffic(requests_per_s=planning.MAX_REQUESTS_PER_S * 1.5)
    planning.ServingTraffic(requests_per_s=planning.MAX_REQUESTS_PER_S)  # the limit itself is taken
    import dataclasses
    plan = planning.capacity_plan(L70, H100, TRAFFIC, 0.05, 1.0)
    assert planning.fleet_note(plan) == ""  # a few replicas: nothing to put in perspective
    at_limit = dataclasses.replace(plan, gpus=planning.LARGE_FLEET_GPUS)
    assert planning.fleet_note(at_limit) == ""
    # 164,832 GPUs at $3.99/h for 720 h: $473,529,370 a month, about $474 million; 16 clusters of 10,000 and more
    big = dataclasses.replace(plan, gpus=164_832, usd_per_month=164_832 * 3.99 * 720)
    assert planning.fleet_note(big) == (
        "A very large fleet: 164,832 GPUs, over 16 clusters of 10,000, about $474 million a month. Traffic this "
        "large is split over many clusters in several regions, each planned as here for its share of the requests.")
    unpriced = dataclasses.replace(big, usd_per_month=math.nan)
    assert planning.fleet_note(unpriced).startswith("A very large fleet: 164,832 GPUs, over 16 clusters of 10,000. ")
    assert "$47.4 billion a month" in planning.fleet_note(dataclasses.replace(big, usd_per_month=47.4e9))
    assert "$1.0 billion a month" in planning.fleet_note(dataclasses.replace(big, usd_per_month=999.8e6))
    just_over = dataclasses.replace(plan, gpus=planning.LARGE_FLEET_GPUS + 1, usd_per_month=10_001 * 3.99 * 720)
    assert planning.fleet_note(just_over).startswith("A very large fleet: 10,001 GPUs, over 1 cluster of 10,000, "
                                                     "about $29 million a month. ")


# -- which accelerators ---------------------------------------------------------------------------
def test_which_gpus_smallest_tp_and_sorted_by_cost():
    df = layout_choice.which_gpus(L70, 8192).set_index("accelerator")
    # 141.1 GB of weights: one B200 (180 GB) or MI300X (192 GB); two H100 (80 GB) or H200 (141 GB: the
    # weights alone fill one); four A100 40GB; L4 (24 GB): 141.1 / 24 -> 8.
    assert df.loc["b200", "tp"] == 1 and df.loc["mi300x", "tp"] == 1
    assert df.loc["h100-sxm", "tp"] == 2 and df.loc["h200", "tp"] == 2
    assert df.loc["a100-40gb", "tp"] == 4 and df.loc["l4", "tp"] == 8
    # H100 at TP 2: 80 - 70.55 = 9.45 GB free per GPU; 8,192 x 163,840 B = 1.342 GB per sequence -> 7.
    assert df.loc["h100-sxm", "max_batch"] == 7
    priced = layout_choice.which_gpus(L70, 8192)
    priced = priced[priced["fits"] & priced["usd_per_million_output"].notna()]
    assert priced["usd_per_million_output"].is_monotonic_increasing


@pytest.mark.parametrize("embedding", ["gather", "table"])
@pytest.mark.parametrize("model_id, batch", [("llama-3.1-70b", 1), ("mixtral-8x7b", 32), ("deepseek-v3", 8)])
def test_general_path_on_one_gpu_is_the_single_gpu_answer(model_id, batch, embedding):
    # The layout code at TP = PP = EP = 1 must reproduce calc's single-GPU roofline, both embedding modes.
    m, b200 = calc.get_model(model_id), calc.get_accelerator("b200")
    one = calc.decode_step_time(m, b200, batch, 4096, embedding=embedding)
    via = P.parallel_decode_step(m, b200, batch, 4096, LY.Layout(), embedding=embedding)
    for f in ("weights_s", "kv_s", "compute_s", "total_s"):
        assert getattr(via, f) == pytest.approx(getattr(one, f), rel=1e-12), f
    pre = calc.prefill_time(m, b200, 1024, embedding=embedding)
    pvia = P.parallel_prefill(m, b200, 1024, 1, LY.Layout(), embedding=embedding)
    assert pvia.total_s == pytest.approx(pre.total_s, rel=1e-12)


def test_layout_sweeps_follow_the_embedding_keyword():
    # "table" reads the whole 2.10 GB input table (128,256 x 8,192 x 2 B) each step; split over TP 8 that is
    # 262.7 MB more per GPU: 262.7e6 / 3.35e12 = 78.4 us more weight read per step than "gather" (which reads
    # B rows of 16 kB). Every layout sweep passes the keyword through.
    extra = 128_256 * 8192 * 2 / 8 / 3.35e12
    for table, gather in (
            (calc.decode_sweep(L70, H100, 8192, [1], tp=8, embedding="table"),
             calc.decode_sweep(L70, H100, 8192, [1], tp=8)),
            (calc.sweeps.decode_split(L70, H100, 8192, tp=8, embedding="table").iloc[:1],
             calc.sweeps.decode_split(L70, H100, 8192, tp=8).iloc[:1])):
        assert table["weights_s"].iat[0] - gather["weights_s"].iat[0] == pytest.approx(extra - 8192 * 2 / 8 / 3.35e12,
                                                                                       rel=1e-6)
    front = layout_choice.throughput_frontier(L70, H100, 8192, tps=(8,), batches=[1], embedding="table")
    assert 1 / front["tokens_per_s_per_user"].iat[0] == pytest.approx(
        calc.decode_step_time(L70, H100, 1, 8192, tp=8, embedding="table").total_s)


def test_smallest_tp():
    # 141.1 GB of bf16 weights: 2 x 80 GB H100; with 64 sequences of 8k (327,680 B x 8,192 = 2.68 GB each,
    # 171.8 GB) TP 4 (320 GB) is the first that holds both; one B200 (180 GB) holds the weights alone.
    assert layout_choice.smallest_tp(L70, H100, 8192) == 2
    assert layout_choice.smallest_tp(L70, H100, 8192, batch=64) == 4
    assert layout_choice.smallest_tp(L70, calc.get_accelerator("b200"), 8192) == 1
    assert layout_choice.smallest_tp(L70, calc.get_accelerator("m3-max"), 8192) is None  # 128 GB, no interconnect


def test_smallest_layout_and_grid_label():
    l70, h100 = calc.get_model("llama-3.1-70b"), calc.get_accelerator("h100-sxm")
    # 70.6e9 x 2 bytes = 141 GB of weights: more than one 80 GB H100, less than two (160 GB): TP2.
    assert layout_choice.smallest_layout(l70, h100, 8192).label == "TP2"
    # Dense: no EP in the grid or its words.
    assert layout_choice.plan_eps(l70) == (1,)
    assert layout_choice.grid_label((1, 2), (1,), (1,)) == "TP 1, 2 x PP 1"
    # 405e9 x 2 bytes = 811 GB > 16 x 24 GB (384 GB) of L4s: nothing in TP 1-8 x PP 1-2.
    assert layout_choice.smallest_layout(calc.get_model("llama-3.1-405b"), calc.get_accelerator("l4"), 8192) is None


def test_a_serving_sized_plan_names_prefill_only_when_its_own_figures_bear_it_out():
    # Sized with the serving estimate, a plan's TTFT is the engine's time to first token at B requests in flight:
    # queueing and batching interference included, not one prompt's prefill compute. Llama-3-8B on H100, 400
    # requests/s at the peak, 512 + 512 tokens, TPOT <= 200 ms: 36 replicas at batch 476, each serving
    # 400 / 36 = 11.1 requests/s, with a TTFT of 129 ms. Calling that "prefill binds: a replica serves at most
    # 1 / 129 ms = 7.8 requests/s whatever its batch" contradicts the plan's own 11.1 per replica.
    m = calc.get_model("llama-3-8b")
    traffic = planning.ServingTraffic(200.0, 2.0, 512, 512, 0)
    plan = planning.capacity_plan(m, H100, traffic, 0.2, 1.0, 3.99, timing="serving")
    served_per_replica = traffic.peak_requests_per_s / plan.layout.replicas
    assert served_per_replica > 1 / plan.ttft_s          # the TTFT is no ceiling on a replica's rate here
    assert plan.binding != "prefill" and "whatever its batch" not in plan.verdict
    # with the roofline bound the TTFT is the prefill alone, and the prefill rule stays (test_plan_bound_by_traffic_alone)


def test_a_large_disaggregated_plan_writes_its_gpu_count_with_thousands_separators():
    # DeepSeek-V3 fp8 on H200 at 4,000 requests/s at the peak (2,048 in, 256 out, TPOT 10 s, TTFT 600 s: only the
    # traffic binds): over a thousand GPUs in all (888 + 392), written "1,280", as every other count of the verdict
    m, a = calc.get_model("deepseek-v3"), calc.get_accelerator("h200")
    t = planning.ServingTraffic(2000.0, 2.0, 2048, 256, 0)
    d = planning.disaggregated_plan(m, a, t, 10.0, 600.0, 4.5, weight_dtype="fp8", kv_dtype="bf16")
    total = d.prefill_gpus + d.decode_gpus
    assert total >= 1000 and f" {total:,} in all, " in d.verdict, d.verdict


def test_gb200_nvl72_is_one_nvlink_domain_of_72():
    # A GB200 NVL72 rack joins its 72 GPUs through NVLink Switch trays (NVIDIA's GB200 NVL72 datasheet), so TP 32
    # stays on NVLink: one-shot 31 x 16,384 / 900e9 + 1 us = 0.5644 + 1 = 1.5644 us (two-shot 2 x 31/32 x 16,384 /
    # 900e9 + 2 us = 2.035 us). On HGX B200 servers of 8, TP 32 spans 4 servers: 2 x 7/8 x 16,384 / 900e9 + 2 x 1 us
    # inside, 2 x 3/4 x 2,048 / 50e9 + 2 x ceil(log2 4) x 5 us between = 0.0319 + 2 + 0.0614 + 20 = 22.09 us.
    nvl72 = collectives.default_interconnect(calc.get_accelerator("gb200"))
    assert nvl72.domain_size == 72 and nvl72.direct_peers
    assert collectives.group_all_reduce_s(16_384, 32, nvl72) == pytest.approx(1.5644e-6, rel=1e-3)
    hgx = collectives.get_interconnect("nvlink5")
    assert collectives.group_all_reduce_s(16_384, 32, hgx) == pytest.approx(22.093e-6, rel=1e-3)


def test_the_verdict_says_which_times_are_lower_bounds_for_either_timing():
    # The zero-traffic plan (2 x H100 for 141 GB of weights): sized on the bound its TPOT and TTFT are roofline
    # lower bounds and the verdict says so at its end, its beginning unchanged; sized with the serving estimate
    # they are estimates and the bound's note is absent.
    traffic = planning.ServingTraffic(requests_per_s=0.0)
    bound = planning.capacity_plan(L70, H100, traffic, 0.05, 2.0)
    assert bound.verdict.startswith("1 replica of TP2 at batch "), bound.verdict
    assert bound.verdict.endswith(" TPOT and TTFT are roofline lower bounds; an engine measures more (choose the "
                                  "serving estimate to size with it)."), bound.verdict
    serving = planning.capacity_plan(L70, H100, traffic, 0.2, 2.0, timing="serving")
    assert serving.verdict.startswith("Sized with the serving estimate (vLLM): ")
    assert "estimates, not lower bounds" in serving.verdict and "roofline lower bounds" not in serving.verdict


def test_a_grid_where_no_layout_runs_names_the_widest_layout_tried_and_why():
    # Kimi-K2 (about 1.03e12 parameters, fp8-block: over 1 TB of weights) on L4s of 24 GB, timed by the serving
    # estimate (which refuses a layout whose weights and one sequence miss the engine's share): the plan's
    # one-server grid (TP 1-8, PP 1-2, EP up to 8) reaches 16 GPUs, 384 GB, so no layout runs; the sentence names
    # the widest layout tried and why it fails
    kimi, l4 = calc.get_model("kimi-k2"), calc.get_accelerator("l4")
    with pytest.raises(ValueError) as err:
        planning.plan_grid(kimi, l4, planning.ServingTraffic(1.0, 1.0, 1024, 128), "fp8-block", "bf16",
                           timing="serving", engine="vllm")
    text = str(err.value)
    assert text.startswith("no layout of the grid can run Kimi-K2 on NVIDIA L4 24GB; the widest layout tried, ")
    assert "(16 GPUs per replica)" in text and "does not fit" in text
