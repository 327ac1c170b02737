"""Layouts as the serving engines build them, caches as they store them, and the public per-GPU names.

Each expected value is worked by hand in the comment beside it from a released config.json, an engine's
source or a technical report, cited there.
"""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calc
from calc import collectives, layout_choice, planning
from calc import gpu_share as GS
from calc import layout as LY
from calc import parallel as P

H100 = calc.get_accelerator("h100-sxm")
L70 = calc.get_model("llama-3.1-70b")
DSV3 = calc.get_model("deepseek-v3")
DSV32 = calc.get_model("deepseek-v3.2")
QNEXT = calc.get_model("qwen3-next-80b-a3b")

# Phi-4's config.json (microsoft/phi-4): 40 layers, hidden 5120, 40 attention heads, 10 KV heads, head_dim 128.
PHI4 = calc.from_hf_config({
    "model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": 5120, "intermediate_size": 17920,
    "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 10, "vocab_size": 100352,
    "max_position_embeddings": 16384, "tie_word_embeddings": False, "hidden_act": "silu"}, name="Phi-4")


# -- the engines' TP rule -------------------------------------------------------------------------
@pytest.mark.parametrize("tp", [4, 8])
def test_phi4_tp4_and_tp8_refused_with_the_engines_reason(tp):
    # vLLM QKVParallelLinear (vllm/model_executor/layers/linear.py): tp < K needs divide(K, tp), tp >= K needs
    # divide(tp, K). K = 10: 10 / 4 = 2.5 and 10 / 8 = 1.25 are not whole, 4 / 10 and 8 / 10 neither: refused.
    why = LY.tp_refusal(PHI4, tp)
    assert why is not None and "10 KV heads" in why and f"TP {tp}" in why
    for call in (lambda: LY.make_layout(PHI4, tp),
                 lambda: calc.decode_step_time(PHI4, H100, 1, 1024, tp=tp),
                 lambda: calc.memory_budget(PHI4, H100, 1024, tp=tp),
                 lambda: calc.max_batch(PHI4, H100, 1024, tp=tp),
                 lambda: calc.prefill_time(PHI4, H100, 512, tp=tp)):
        with pytest.raises(ValueError, match="KV heads"):
            call()


def test_phi4_accepted_layouts_and_the_grid_says_why_it_skips():
    # TP 2: 10 / 2 = 5 KV heads and 40 / 2 = 20 query heads per rank, accepted (and TP 1).
    assert LY.tp_refusal(PHI4, 2) is None and LY.tp_refusal(PHI4, 1) is None
    refused = dict(layout_choice.refused_layouts(PHI4, (1, 2, 4, 8), (1,), (1,)))
    assert set(refused) == {"TP4", "TP8"}
    grid = planning.plan_grid(PHI4, H100, planning.ServingTraffic(1.0, 1.0, 512, 128), tps=(1, 2, 4, 8), pps=(1,),
                              max_batch=8)
    assert sorted(set(grid["tp"])) == [1, 2]
    assert dict(grid.attrs["refused"]) == refused


def test_replicated_kv_heads_accepted_and_counted():
    # Llama-3.1-70B: K = 8; TP 16 is a multiple of 8: one head per rank, each stored 16 / 8 = 2 times (vLLM
    # num_kv_head_replicas = 2): 2 x 1 x 128 x 80 x 2 B = 40,960 B per token per GPU, as at TP 8.
    assert LY.tp_refusal(L70, 16) is None
    assert GS.kv_bytes_per_gpu_per_token(L70, LY.Layout(16)) == 40_960
    assert "replicate" in LY.Layout(16).convention(L70)


def test_mla_rule_is_the_query_heads():
    # DeepSeek-V3: 128 query heads, the latent not split by heads: TP 8 accepted, TP 3 refused (128 / 3).
    assert LY.tp_refusal(DSV3, 8) is None
    assert "128 query heads" in LY.tp_refusal(DSV3, 3)


# -- pipeline stages of whole layers --------------------------------------------------------------
def test_llama70b_pp3_split_as_vllm_and_sglang():
    # vLLM get_pp_indices (vllm/distributed/utils.py): 80 // 3 = 26 each, remainder 2 goes to partitions[-2]
    # and partitions[-3]: 27/27/26. SGLang get_pp_indices (python/sglang/srt/distributed/utils.py): the last
    # 2 stages get one more: 26/27/27.
    assert LY.pipeline_stage_layers(80, 3, "vllm") == (27, 27, 26)
    assert LY.pipeline_stage_layers(80, 3, "sglang") == (26, 27, 27)
    # DeepSeek-V3, 61 layers at PP 4 (vLLM's docs example): 15 each, remainder 1 on partitions[-2]: 15/15/16/15.
    assert LY.pipeline_stage_layers(61, 4, "vllm") == (15, 15, 16, 15)
    assert LY.pipeline_stage_layers(80, 3, stage_layers=(28, 26, 26)) == (28, 26, 26)
    with pytest.raises(ValueError, match="add"):
        LY.pipeline_stage_layers(80, 3, stage_layers=(28, 26, 25))


def test_llama70b_pp3_per_gpu_kv_follows_the_27_layer_stage():
    # TP 8 PP 3 under vLLM's split: the largest stage holds 27 layers, 1 KV head per rank:
    # 27 x 2 x 128 x 2 B = 13,824 B per token per GPU (L / PP would say 80 / 3 x 512 = 13,653.3, 1.25% low).
    lay = LY.make_layout(L70, 8, 3)
    assert GS.kv_bytes_per_gpu_per_token(L70, lay) == 13_824
    # With the context: windows none, so the same per token at S = 8,192.
    assert GS.kv_bytes_per_gpu_per_token(L70, lay, context_len=8192) == 13_824
    # gpu_memory reports the most loaded stage: a 27-layer stage (vLLM puts its extras on stages 0 and 1).
    g = GS.gpu_memory(L70, H100, 8192, 16, lay)
    assert g.stage_layers == 27 and g.stage in (0, 1)
    # 16 sequences x 8,192 tokens x 13,824 B = 1,811,939,328 B of KV on that GPU.
    assert g.kv_bytes == 16 * 8192 * 13_824


def test_hybrid_stage_counts_its_own_layer_kinds():
    # Qwen3-Next-80B-A3B: layers 0-2 Gated DeltaNet (no KV), layer 3 full attention (2 KV heads x 256):
    # a hand split (3, 45): stage 0 holds no KV per token; stage 1 holds all 12 full layers:
    # 12 x 2 x 2 x 256 x 2 B = 24,576 B per token (TP 1).
    lay = LY.make_layout(QNEXT, 1, 2, stage_layers=(3, 45))
    assert GS.kv_bytes_per_gpu_per_token(QNEXT, lay) == 24_576
    assert GS.kv_bytes_per_gpu_per_token(QNEXT, LY.Layout()) == 24_576


# -- expert parallelism as DeepSeek-V3 deploys it ---------------------------------------------------
def test_deepseek_v3_ep32_with_32_redundant_experts():
    # DeepSeek-V3 report, section 3.4 (prefill): EP32 over 4 nodes, attention TP4 x DP8, 32 redundant experts:
    # each GPU hosts its 8 experts plus one redundant: (256 + 32) / 32 = 9. One routed expert over the 58 MoE
    # layers is 58 x 3 x 7,168 x 2,048 = 2,554,331,136 parameters, in fp8 that many bytes: the redundant one
    # adds exactly 2,554,331,136 B per GPU.
    plain = LY.make_layout(DSV3, 4, 1, 32)
    red = LY.make_layout(DSV3, 4, 1, 32, redundant_experts=32)
    diff = GS.weight_bytes_per_gpu(DSV3, red, "fp8") - GS.weight_bytes_per_gpu(DSV3, plain, "fp8")
    assert diff == pytest.approx(2_554_331_136, rel=1e-9)
    assert red.label == "TP4 EP32+32R" and red.attention_dp == 8
    assert "9 experts per GPU" in red.convention(DSV3)
    # The group spans 4 servers of 8: of each rank's all-to-all, the 24/32 bound for the other servers goes
    # over the scale-out network (InfiniBand NDR, 400 Gb/s = 50 GB/s per GPU, 5 us), the 7/32 for its own
    # server over NVLink at the same time. At batch 64: 64 / 32 tokens per rank x top-8 x 7,168 x 2 B =
    # 229,376 B; max(7/32 x 229,376 / 450e9, 24/32 x 229,376 / 50e9) + 5 us = 3.441 + 5 = 8.441 us, twice
    # (dispatch and combine) in each of the 61 layers: 1.0298 ms.
    group, _ = P._links(H100, red, None)
    assert group.id == "nvlink4" and group.scale_out == "infiniband-ndr"
    a = P.parallel_step_arrays(DSV3, H100, 64, 4096, red, "fp8", "fp8")
    assert float(a["alltoall_s"]) == pytest.approx(61 * 2 * (24 / 32 * 229_376 / 50e9 + 5e-6), rel=1e-9)


def test_deepseek_v3_decode_ep320():
    # Report section 3.4 (decode): EP320 over 40 nodes, attention TP4 x DP80; 64 GPUs host redundant and shared
    # experts, one expert per GPU: (256 + 64) / 320 = 1. Without the 64 copies 256 / 320 is not whole: refused.
    with pytest.raises(ValueError, match=r"^EP 320 must divide the 256 routed experts of DeepSeek-V3: every EP rank "):
        LY.make_layout(DSV3, 4, 1, 320)
    with pytest.raises(ValueError, match=r"^EP 320 must divide the 256 routed experts of DeepSeek-V3 plus 32 "
                                         r"redundant copies \(288 in all\): "):
        LY.make_layout(DSV3, 4, 1, 320, redundant_experts=32)
    lay = LY.make_layout(DSV3, 4, 1, 320, redundant_experts=64)
    assert lay.gpus_per_replica == 320 and lay.attention_dp == 80
    # (256 + 64) / 320 = 1 expert on each GPU, said in the singular
    assert "64 redundant experts per MoE layer, 1 expert per GPU " in lay.convention(DSV3)


# -- caches as engines store them -----------------------------------------------------------------
def test_flashmla_fp8_bytes_per_token():
    # FlashMLA's fp8 KV format (vLLM kv_cache_dtype "fp8_ds_mla"): 512 fp8 latent bytes + 4 fp32 scales (one per
    # 128) = 16 B + 64 RoPE dims in bf16 = 128 B: 656 B per token and layer; DeepSeek-V3's 61 layers: 40,016 B.
    assert calc.kv_bytes_per_token(DSV3, "fp8_ds_mla") == 61 * 656 == 40_016
    # Plain fp8 (per-tensor scale, 0 B per token) says 61 x 576 = 35,136 B.
    assert calc.kv_bytes_per_token(DSV3, "fp8") == 35_136
    # DeepSeek-V3.2 adds the indexer key per token and layer: index_head_dim 128 in fp8 + one fp32 scale =
    # 132 B (vLLM DeepseekV32IndexerCache): 61 x (656 + 132) = 48,068 B.
    assert calc.kv_bytes_per_token(DSV32, "fp8_ds_mla") == 61 * (656 + 132) == 48_068
    with pytest.raises(ValueError, match="no latent cache"):
        calc.kv_bytes_per_token(L70, "fp8_ds_mla")


@pytest.mark.parametrize("fmt", ["q4_K_M", "int4-g128", "fp8-block"])
def test_weight_only_formats_refused_as_cache(fmt):
    for call in (lambda: calc.kv_bytes_per_token(L70, fmt), lambda: calc.kv_cache_bytes(L70, 1024, 1, fmt),
                 lambda: calc.max_batch(L70, H100, 1024, kv_dtype=fmt)):
        with pytest.raises(ValueError, match="weight-only"):
            call()
    # llama.cpp's cache types stay: q8_0 is 34 B per 32 elements: Llama-3.1-70B 2 x 8 x 128 x 80 x 34 / 32.
    assert calc.kv_bytes_per_token(L70, "q8_0") == 2 * 8 * 128 * 80 * 34 / 32


# -- public API ------------------------------------------------------------------------------------
def test_kv_only_and_state_apart():
    # Qwen3-Next: kv_cache_bytes(include_state=False) + kv_state_bytes = the default (state included).
    s = 8192
    both = calc.kv_cache_bytes(QNEXT, s)
    kv_only = calc.kv_cache_bytes(QNEXT, s, include_state=False)
    assert kv_only == s * 24_576  # 12 full layers x 2 x 2 x 256 x 2 B per token, no window
    assert both == pytest.approx(kv_only + calc.kv_state_bytes(QNEXT))
    assert calc.kv_cache_bytes(L70, s, include_state=False) == calc.kv_cache_bytes(L70, s)


def test_capacity_and_per_gpu_names_public():
    assert calc.capacity_bytes(H100) == 80e9
    assert calc.kv_bytes_per_gpu_per_token(L70, calc.make_layout(L70, 8)) == 40_960
    # Gemma-2-9B: 42 layers alternating sliding (W = 4,096) and full, K = 8, H = 256: per token at 8,192 tokens
    # with windows (21 x 8,192 + 21 x 4,096) x 2 x 8 x 256 x 2 / 8,192 = 258,048 B; no windows 344,064 B.
    g2 = calc.get_model("gemma-2-9b")
    lay = calc.make_layout(g2)
    assert calc.kv_bytes_per_gpu_per_token(g2, lay) == 42 * 8192
    assert calc.kv_bytes_per_gpu_per_token(g2, lay, context_len=8192) == (21 * 8192 + 21 * 4096) * 8192 / 8192
    with pytest.raises(ValueError):
        calc.capacity_bytes(H100, "nvidia")


# -- properties -----------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200), st.integers(1, 64), st.sampled_from(["vllm", "sglang"]))
def test_a_stage_never_holds_a_fraction_of_a_layer(n_layers, pp, rule):
    if pp > n_layers:
        with pytest.raises(ValueError):
            LY.pipeline_stage_layers(n_layers, pp, rule)
        return
    split = LY.pipeline_stage_layers(n_layers, pp, rule)
    assert all(isinstance(k, int) and k >= 1 for k in split)
    assert sum(split) == n_layers and len(split) == pp and max(split) - min(split) <= 1


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 3, 4, 5]), st.integers(0, 64))
def test_replication_never_lowers_per_gpu_bytes(tp, pp, redundant):
    # Redundant experts (EP 8 of DeepSeek-V3) and replicated KV heads (TP > K) only add bytes on a GPU.
    ep = 8
    if (256 + redundant) % ep:
        return
    base = LY.make_layout(DSV3, tp, pp, ep)
    red = LY.make_layout(DSV3, tp, pp, ep, redundant_experts=redundant)
    assert GS.weight_bytes_per_gpu(DSV3, red) >= GS.weight_bytes_per_gpu(DSV3, base)
    lay = LY.make_layout(L70, 8 * tp, pp)
    assert GS.kv_bytes_per_gpu_per_token(L70, lay) >= calc.kv_bytes_per_token(L70) / (8 * tp * pp)
    # and the most loaded stage never holds less than the L / PP average
    assert GS.kv_bytes_per_gpu_per_token(L70, LY.Layout(8, pp)) >= calc.kv_bytes_per_token(L70) / (8 * pp)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([(40, 10), (64, 8), (32, 32), (28, 4), (48, 12), (40, 40), (12, 4), (14, 2)]),
       st.integers(1, 64))
def test_every_accepted_layout_passes_the_engine_rule(heads, tp):
    n, k = heads
    model = L70.with_changes(n_heads=n, n_kv_heads=k, attention="gqa" if k < n else "mha")
    rule = n % tp == 0 and (k % tp == 0 or tp % k == 0)
    try:
        LY.make_layout(model, tp)
        accepted = True
    except ValueError:
        accepted = False
    assert accepted == rule


def test_public_functions_take_a_layout_with_redundant_experts_and_a_split():
    # The same layout through tp/pp/ep and through layout= gives the same answer; a redundant expert adds one
    # expert's bytes per GPU in memory_budget (2,554,331,136 B in fp8, as above).
    red = calc.make_layout(DSV3, 4, 1, 32, redundant_experts=32)
    a = calc.memory_budget(DSV3, H100, 4096, 8, "fp8", tp=4, ep=32)
    b = calc.memory_budget(DSV3, H100, 4096, 8, "fp8", layout=red)
    assert b.weights_bytes - a.weights_bytes == pytest.approx(2_554_331_136, rel=1e-9)
    assert b.n_accelerators == 32
    # SGLang's split of Llama-3.1-70B at PP 3 (26/27/27) holds its 27-layer stage last: per-GPU KV the same as vLLM's.
    sg = calc.make_layout(L70, 8, 3, pp_rule="sglang")
    assert calc.kv_bytes_per_gpu_per_token(L70, sg) == 13_824
    with pytest.raises(ValueError, match="contradict"):
        calc.decode_step_time(L70, H100, 1, 1024, tp=4, layout=sg)
    assert calc.decode_step_time(L70, H100, 1, 1024, layout=sg).total_s > 0


def test_pp_max_batch_follows_the_most_loaded_stage():
    # Llama-3.1-70B bf16, TP 1 PP 3 on an H100 (80 GB), 8,192 tokens; vLLM's split 27/27/26.
    # Parameters: 70,553,706,496; input table and untied head 128,256 x 8,192 = 1,050,673,152 each; the rest,
    # 68,452,360,192, over 80 layers: 855,654,502.4 per layer (the final norm shared in proportion).
    # Stage 0: 27 layers + the table = 24,153,344,716.8 params = 48,306,689,433.6 B;
    # stage 1: 27 layers = 46,205,343,129.6 B; stage 2: 26 layers + the head = 46,595,380,428.8 B.
    # KV per sequence (TP 1: 8 heads x 128 x 2 x 2 B = 4,096 B per layer per token): stage 0 27 x 4,096 x 8,192
    # = 905,969,664 B: floor((80e9 - 48,306,689,433.6) / 905,969,664) = floor(34.98) = 34; stage 1: 37;
    # stage 2 (26 layers): 38. The ceiling is 34. Fractional L / PP stages said floor(36.84) = 36.
    lay = calc.make_layout(L70, 1, 3)
    assert calc.weight_bytes_per_gpu(L70, lay) == pytest.approx(48_306_689_433.6, rel=1e-9)
    assert calc.max_batch(L70, H100, 8192, tp=1, pp=3) == 34
    g = GS.gpu_memory(L70, H100, 8192, 34, lay)
    assert g.stage == 0 and g.stage_layers == 27 and g.fits
    assert not GS.gpu_memory(L70, H100, 8192, 35, lay).fits


def test_deepseek_v3_pp4_kv_per_gpu_was_five_percent_low():
    # DeepSeek-V3, 61 layers at PP 4, vLLM 15/15/16/15: the 16-layer stage holds 16 x 576 x 2 B = 18,432 B per
    # token on each GPU (the latent whole on every TP rank); L / PP said 61 / 4 x 1,152 = 17,568 B, 4.9% low.
    lay = calc.make_layout(DSV3, 8, 4)
    assert calc.kv_bytes_per_gpu_per_token(DSV3, lay) == 18_432
    assert 18_432 / 17_568 - 1 == pytest.approx(0.0492, abs=1e-4)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256, 320]), st.integers(0, 128), st.sampled_from([1, 2, 4, 8]))
def test_every_accepted_ep_layout_gives_each_rank_the_same_experts(ep, redundant, tp):
    # An EP layout the engines accept puts (E + R) / EP whole experts on every rank (DeepSeek-V3: E = 256).
    try:
        lay = LY.make_layout(DSV3, tp, 1, ep, redundant_experts=redundant)
    except ValueError as exc:
        assert ep == 1 and redundant or (256 + redundant) % ep or max(tp, ep) % min(tp, ep), str(exc)
        return
    assert (256 + lay.redundant_experts) % lay.ep == 0 and lay.width % lay.tp == 0
