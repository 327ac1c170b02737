"""DeepSeek-V4 (Pro and Flash): parameters, KV cache, decode read, attention FLOPs and weight bytes by hand.

Oracles: hand counts from the shapes of the shipped config.json files (arithmetic in the comments), the layer rules of
DeepSeek's inference code (deepseek-ai/DeepSeek-V4-Flash @60d8d707, inference/model.py: ``Attention``, ``Compressor``,
``Indexer``, ``Gate``, ``Block``, ``MTPBlock``, ``Transformer``) and the cache layouts of vLLM and SGLang
(vllm/v1/attention/backends/mla/sparse_swa.py @03dc5649: 584 B per entry; deepseek_v4_attention.py @0a291a2e: indexer
keys of 128 fp8 + 4 B; deepseek_compressor.py @0de10a27: fp32 state rows of 2 x coff x head_dim, a ring of coff x
ratio rows; SGLang's deepseek_v4_memory_pool.py @007bddd4 asserts the same 584 B and ring sizes 8 and 128); brute-force
sums for the attention FLOPs. The published totals are in tests/test_published_totals.py.
"""
from __future__ import annotations

import json
import math

import pytest

import calc
from calc import inferencex
from calc.config_json import from_hf_config
from calc.kv import decode_kv_read_bytes_array
from calc.models import DATA_DIR, hf_config, model_preset_id
from calc.roofline import attention_flops, compressed_attended_keys

PRO, FLASH = "deepseek-v4-pro", "deepseek-v4-flash"


def test_pro_parameters_by_hand():
    # DeepSeek-V4-Pro config: D 7168, 61 layers, 128 heads of 512 (RoPE 64), q_lora 1536, o_lora 1024 in 16 groups,
    # indexer 64 heads of 128, hc_mult 4, 384 experts of 3072, top-6, 1 shared, V 129,280, 3 hash layers, untied.
    # Attention of every layer: attn_sink 128, wq_a 7168 x 1536 = 11,010,048, q_norm 1,536, wq_b 1536 x 65,536 =
    #   100,663,296, wkv 7168 x 512 = 3,670,016, kv_norm 512, wo_a 4096 x 16,384 = 67,108,864, wo_b 16,384 x 7168 =
    #   117,440,512 -> 299,894,912.
    # csa (ratio 4, overlapping compressor of 512: ape 4 x 1024 + wkv, wgate 2 x 7168 x 1024 + norm 512 = 14,684,672;
    #   indexer: wq_b 1536 x 8192 = 12,582,912, weights_proj 7168 x 64 = 458,752, compressor of 128: 4 x 256 +
    #   2 x 7168 x 256 + 128 = 3,671,168 -> 16,712,832): 299,894,912 + 14,684,672 + 16,712,832 = 331,292,416.
    # hca (ratio 128, compressor ape 128 x 512 + 2 x 7168 x 512 + 512 = 7,406,080): 307,300,992.
    # Per layer besides: 2 norms 14,336; hyper-connections 2 x (24 x 28,672 + 24 + 3) = 1,376,310; router 384 x 7168 =
    #   2,752,512; shared expert 3 x 7168 x 3072 = 66,060,288 -> 70,203,446; routed experts 384 x 66,060,288 =
    #   25,367,150,592; the gate bias 384 (58 layers) or the hash table 129,280 x 6 = 775,680 (layers 0-2).
    # Ends: embedding and head 2 x 129,280 x 7168 = 1,853,358,080, norm 7168, hc_head 4 x 28,672 + 4 + 1 = 114,693.
    # Layers: 30 csa, 31 hca (compress_ratios 128, 128, then 4 / 128 alternating).
    ends = 1_853_358_080 + 7_168 + 114_693
    total = (ends + 30 * 331_292_416 + 31 * 307_300_992 + 61 * (70_203_446 + 25_367_150_592)
             + 3 * 775_680 + 58 * 384)
    active = ends + 30 * 331_292_416 + 31 * 307_300_992 + 61 * (70_203_446 + 6 * 66_060_288)
    m = calc.get_model(PRO)
    assert m.n_params == total == 1_572_999_528_803          # DeepSeek: 1.6T
    assert m.n_active_params == active == 49_779_058_787     # DeepSeek: 49B (less the embedding: 48.85B)
    # the MTP module (compress_ratios' 62nd entry 0: a window-only layer, its gate with a bias), counted apart:
    # attention 299,894,912 + 70,203,446 + experts 25,367,150,592 + bias 384 + e_proj, h_proj 2 x 7168^2 =
    # 102,760,448 + enorm, hnorm, norm 21,504 + hc_head 114,693 + the checkpoint's copies of embedding and head
    assert m.n_mtp_params == (299_894_912 + 70_203_446 + 25_367_150_592 + 384 + 102_760_448 + 21_504 + 114_693
                              + 1_853_358_080) == 27_693_504_059
    assert m.params_loaded() == m.n_params


def test_flash_parameters_by_hand():
    # DeepSeek-V4-Flash: D 4096, 43 layers, 64 heads of 512, q_lora 1024, o_lora 1024 in 8 groups, 256 experts of
    # 2048, top-6, 1 shared. Attention: 64 + 4096 x 1024 + 1024 + 1024 x 32,768 + 4096 x 512 + 512 + 4096 x 8192 +
    # 8192 x 4096 = 106,956,352; csa compressor 4 x 1024 + 2 x 4096 x 1024 + 512 = 8,393,216, indexer 1024 x 8192 +
    # 4096 x 64 + (4 x 256 + 2 x 4096 x 256 + 128) = 10,749,056; hca compressor 128 x 512 + 2 x 4096 x 512 + 512 =
    # 4,260,352. Per layer: norms 8192, hc 2 x (24 x 16,384 + 27) = 786,486, router 256 x 4096 = 1,048,576, shared
    # 3 x 4096 x 2048 = 25,165,824 -> 27,009,078; experts 256 x 25,165,824. Layers 0-1 window-only, 21 csa, 20 hca.
    ends = 2 * 129_280 * 4096 + 4096 + (4 * 16_384 + 5)
    attention = 43 * 106_956_352 + 21 * (8_393_216 + 10_749_056) + 20 * 4_260_352
    total = ends + attention + 43 * (27_009_078 + 256 * 25_165_824) + 3 * 129_280 * 6 + 40 * 256
    m = calc.get_model(FLASH)
    assert m.n_params == total == 284_334_567_511           # DeepSeek: 284B
    assert m.n_active_params == ends + attention + 43 * (27_009_078 + 6 * 25_165_824) == 13_799_622_231  # 13B


def test_layer_kinds_and_cache_shapes_from_compress_ratios():
    pro, flash = calc.get_model(PRO), calc.get_model(FLASH)
    assert (pro.layer_kinds.count("csa"), pro.layer_kinds.count("hca"), pro.layer_kinds[:3]) == (30, 31, ("hca", "hca", "csa"))
    assert (flash.layer_kinds.count("sliding"), flash.layer_kinds.count("csa"), flash.layer_kinds.count("hca")) == (2, 21, 20)
    assert (pro.sliding_window, pro.csa_compress_ratio, pro.hca_compress_ratio, pro.index_topk) == (128, 4, 128, 1024)
    assert (pro.attention, pro.kv_lora_rank, pro.qk_rope_head_dim, pro.n_kv_heads) == ("mla", 448, 64, 1)
    assert flash.index_topk == 512
    # one entry: bf16 2 x 512 = 1,024 B (DeepSeek's code); fp8_ds_mla 448 + 7 scales + 1 pad + 2 x 64 = 584 B (vLLM,
    # SGLang); fp8 512 B (SGLang's uniform pool); the indexer key 128 + 4 = 132 B
    for dtype, entry in (("bf16", 1024), ("fp8_ds_mla", 584), ("fp8", 512)):
        spec = next(s for s in calc.layers.layer_specs(pro, dtype) if s.kind == "csa")
        assert (spec.kv_bytes_per_token, spec.index_bytes_per_token) == (entry, 132)
    specs = {s.kind: s for s in calc.layers.layer_specs(pro)}
    # compressor states, fp32: csa (2 x 4 rows of 2 x 2 x 512) + its indexer's (8 rows of 2 x 2 x 128); hca 128 rows of
    # 2 x 512
    assert specs["csa"].compressor_state_bytes == 8 * 2048 * 4 + 8 * 512 * 4 == 81_920
    assert specs["hca"].compressor_state_bytes == 128 * 1024 * 4 == 524_288
    assert specs["hca"].index_bytes_per_token == 0 and specs["hca"].read_top_k is None
    # DeepSeek-V3's FlashMLA entry keeps its own layout
    assert next(iter(calc.layers.layer_specs(calc.get_model("deepseek-v3"), "fp8_ds_mla"))).kv_bytes_per_token == 656


@pytest.mark.parametrize("context, fp8_ds_mla, bf16", [
    # per sequence: every layer's window min(S, 128) x 61; csa floor(S / 4) entries and indexer keys x 30; hca
    # floor(S / 128) x 31; states 30 x 81,920 + 31 x 524,288 = 18,710,528.
    # 8K: entries 7,808 + 61,440 + 1,984 = 71,232; keys 61,440 x 132 = 8,110,080.
    (8192, 71_232 * 584 + 8_110_080 + 18_710_528, 71_232 * 1024 + 8_110_080 + 18_710_528),
    # 128K: entries 7,808 + 983,040 + 31,744 = 1,022,592; keys 983,040 x 132 = 129,761,280.
    (131072, 1_022_592 * 584 + 129_761_280 + 18_710_528, 1_022_592 * 1024 + 129_761_280 + 18_710_528),
])
def test_pro_kv_cache_by_hand(context, fp8_ds_mla, bf16):
    m = calc.get_model(PRO)
    assert calc.kv_cache_bytes(m, context, kv_dtype="fp8_ds_mla") == fp8_ds_mla
    assert calc.kv_cache_bytes(m, context) == bf16
    # against DeepSeek-V3 (61 x 656 B per token in fp8_ds_mla, 61 x 1,152 B in bf16): 20.9% and 14.2% of its cache
    v3 = calc.get_model("deepseek-v3")
    assert calc.kv_cache_bytes(v3, context, kv_dtype="fp8_ds_mla") == 61 * 656 * context
    share = fp8_ds_mla / (61 * 656 * context)
    assert share == pytest.approx(0.2087 if context == 8192 else 0.1422, abs=1e-4)


def test_values_at_8k_and_128k():
    m = calc.get_model(PRO)
    assert calc.kv_cache_bytes(m, 8192, kv_dtype="fp8_ds_mla") == 68_420_096
    assert calc.kv_cache_bytes(m, 131072, kv_dtype="fp8_ds_mla") == 745_665_536
    assert calc.kv_cache_bytes(m, 8192) == 99_762_176
    assert calc.kv_cache_bytes(m, 131072) == 1_195_606_016
    # the constant part is the compressors' state; kv_cache_bytes(include_state=False) leaves it out
    assert calc.kv.kv_state_bytes(m) == 18_710_528
    assert calc.kv_cache_bytes(m, 8192, kv_dtype="fp8_ds_mla", include_state=False) == 68_420_096 - 18_710_528


def test_pro_decode_read_by_hand():
    # One token at S = 8,192, fp8_ds_mla: windows 61 x 128 x 584 = 4,559,872; csa top 1,024 of 2,048 entries:
    # 30 x 1,024 x 584 = 17,940,480, every indexer key 8,110,080; hca every entry 1,984 x 584 = 1,158,656; the
    # compressors' rows moved (one written, one read amortised): csa 2 x (2,048 + 512) x 4 = 20,480, hca 2 x 1,024 x
    # 4 = 8,192 -> 30 x 20,480 + 31 x 8,192 = 868,352.
    m = calc.get_model(PRO)
    hand = 4_559_872 + 17_940_480 + 8_110_080 + 1_158_656 + 868_352
    assert float(decode_kv_read_bytes_array(m, 8192, 1, "fp8_ds_mla")) == hand == 32_637_440
    # below 4 x 1,024 tokens the indexer picks every entry: the step reads all the cache but the states' rest
    s = 2048
    held = calc.kv_cache_bytes(m, s, kv_dtype="fp8_ds_mla", include_state=False)
    assert float(decode_kv_read_bytes_array(m, s, 1, "fp8_ds_mla")) == held + 868_352


def test_compressed_attended_keys_against_brute_force():
    def brute(t, r, k, past):
        return sum(min(p // r, k) if k else p // r for p in range(past + 1, past + t + 1))
    for t, r, k, past in [(1, 4, 1024, 0), (3, 4, None, 0), (4, 4, None, 0), (9, 4, 2, 0), (5000, 4, 1024, 0),
                          (300, 128, None, 77), (1, 4, 1024, 8191), (4100, 4, 1024, 17)]:
        assert compressed_attended_keys(t, r, k, past) == brute(t, r, k, past), (t, r, k, past)


def test_pro_attention_flops_by_brute_force():
    # per query at position p: a csa layer attends min(p, 128) + min(p // 4, 1024) entries and its indexer scores
    # p // 4; an hca layer min(p, 128) + p // 128; each entry 2 x 128 heads x (512 + 512) FLOPs, each indexer key
    # 2 x 64 x 128
    m = calc.get_model(PRO)
    t = 5000
    keys = sum(30 * (min(p, 128) + min(p // 4, 1024)) + 31 * (min(p, 128) + p // 128) for p in range(1, t + 1))
    index = sum(30 * (p // 4) for p in range(1, t + 1))
    assert attention_flops(m, t) == 2 * 128 * 1024 * keys + 2 * 64 * 128 * index
    # decode at S = 8,192: 30 x (128 + 1,024) + 31 x (128 + 64) entries and 30 x 2,048 indexer keys
    assert attention_flops(m, 1, 1, past_len=8191) == 2 * 128 * 1024 * (30 * 1152 + 31 * 192) + 2 * 64 * 128 * 61_440


def test_checkpoint_formats_and_weight_bytes():
    cfgs = {name: json.loads((DATA_DIR / "hf_configs" / f"{name}.json").read_text()) for name in (PRO, FLASH)}
    assert calc.get_model(PRO).checkpoint_format == calc.get_model(FLASH).checkpoint_format == "mxfp4-fp8"
    nvidia = dict(cfgs[PRO], quantization_config=dict(cfgs[PRO]["quantization_config"], moe_quant_algo="NVFP4"))
    assert from_hf_config(nvidia).checkpoint_format == "nvfp4-fp8"
    fp8 = {k: v for k, v in cfgs[PRO].items() if k != "expert_dtype"}   # sgl-project's FP8 copy: fp8 experts
    assert from_hf_config(fp8).checkpoint_format == "fp8-block"
    # mxfp4-fp8: 61 x 384 x 3 x 7168 x 3072 = 1,547,396,186,112 routed-expert weights at 4.25 bits; embedding and
    # head 1,853,358,080, norms 61 x 2 x 7168 + 7168 = 881,664 and router 61 x 384 x 7168 = 167,903,232 in bf16; the
    # other 23,581,199,715 in fp8 with one e8m0 byte per 128 x 128 block
    m = calc.get_model(PRO)
    rest = m.n_params - 1_547_396_186_112 - 1_853_358_080 - 881_664 - 167_903_232
    assert rest == 23_581_199_715
    hand = 1_547_396_186_112 * 17 / 32 + 2 * (1_853_358_080 + 881_664 + 167_903_232) + rest * (1 + 1 / 16384)
    assert calc.weight_bytes(m, "mxfp4-fp8") == pytest.approx(hand, abs=1.0)
    # The checkpoint itself, tensor by tensor (inference/model.py's dtypes): experts as above; fp8 blocks for wq_a,
    # wq_b, wkv, wo_a, wo_b, the indexer's wq_b and the shared experts (22,700,621,824); bf16 for embedding, head,
    # every norm, the router, the compressors' wkv and wgate and weights_proj (2,814,108,928); fp32 for attention
    # sinks, hyper-connections, ape and the gate bias (86,284,899); int32 hash tables 3 x 129,280 x 6 = 2,327,040.
    assert 1_547_396_186_112 + 22_700_621_824 + 2_814_108_928 + 86_284_899 + 2_327_040 == m.n_params
    stored = (1_547_396_186_112 * 17 / 32 + 22_700_621_824 * (1 + 1 / 16384) + 2 * 2_814_108_928
              + 4 * (86_284_899 + 2_327_040))
    assert stored == pytest.approx(850_738_896_844, abs=1.0)
    # calc prices the 0.88B parameters kept wider with the fp8 layers: 1.06 GB, 0.12% below the checkpoint
    assert stored - calc.weight_bytes(m, "mxfp4-fp8") == pytest.approx(1.0577e9, rel=1e-3)
    with pytest.raises(ValueError, match="weight-only format"):
        calc.kv_cache_bytes(m, 8192, kv_dtype="mxfp4-fp8")


def test_checkpoints_and_inferencex_names_resolve():
    for name in ("deepseek-ai/DeepSeek-V4-Pro", "nvidia/DeepSeek-V4-Pro-NVFP4", "sgl-project/DeepSeek-V4-Pro-FP8"):
        assert model_preset_id(name) == PRO
    assert model_preset_id("deepseek-ai/DeepSeek-V4-Flash") == FLASH
    assert inferencex.match_model("dsv4") == PRO
    assert inferencex.weight_dtype("fp4", "deepseek-ai/DeepSeek-V4-Pro", "b200") == "mxfp4-fp8"


@pytest.mark.parametrize("change, message", [
    (dict(compress_ratios=[4] * 10), "at least one ratio per layer"),
    (dict(compress_ratios=[4, 128, 64] + [4] * 59), "more than one heavy ratio"),
    (dict(sliding_window=None), "'sliding_window' is not set"),
    (dict(o_groups=None), "missing 'o_groups'"),
])
def test_malformed_v4_configs_name_the_key(change, message):
    cfg = dict(hf_config(PRO), **change)
    with pytest.raises(ValueError, match=message):
        from_hf_config(cfg)


def test_serving_estimate_runs_on_the_preset():
    est = calc.serving.serving_estimate(PRO, "b200", 1024, 1024, concurrency=16, tp=8, ep=8, weight_dtype="mxfp4-fp8",
                                        kv_dtype="fp8_ds_mla")
    for value in (est.ttft.estimate_s, est.tpot.estimate_s, est.output_tokens_per_s_per_gpu, est.e2e_s):
        assert math.isfinite(value) and value > 0
    assert est.tpot.bound_s <= est.tpot.estimate_s
    # the checkpoint's own format when none is given, with a notice that says so
    default = calc.serving.serving_estimate(PRO, "b200", 1024, 1024, concurrency=16, tp=8, ep=8)
    assert any("mxfp4-fp8" in n for n in default.notices)


def test_the_mixed_v4_formats_run_their_experts_on_fp4_tensor_cores_under_low_precision():
    # "low_precision" is each format's own precision: the routed experts of mxfp4-fp8 / nvfp4-fp8 are fp4 (W4A4, as
    # plain mxfp4 and nvfp4), the fastest rate a bound may assume; "auto" keeps the fp8 blocks' W8A8, weight_only bf16
    from calc.hardware import matmul_dtype
    for fmt in ("mxfp4-fp8", "nvfp4-fp8"):
        assert (matmul_dtype(fmt, "low_precision"), matmul_dtype(fmt, "auto"), matmul_dtype(fmt, "weight_only")) == (
            matmul_dtype("mxfp4", "low_precision"), "fp8", "bf16")
