"""Tests of the presets of accelerators that published serving benchmarks run beyond the HGX servers and the parts
calc had before (calc/data/accelerators.json): NVIDIA A10G, A10, L40, RTX 6000 Ada Generation, RTX 5090, A40, RTX A6000,
RTX 3090; AMD Instinct MI250X (one GCD) and MI210; Intel Gaudi 2 and Gaudi 3; Google TPU v6e and v5p; and the parts
of MLPerf Inference v6.0 and the engines' recent recipes, AMD Instinct MI350X and NVIDIA H200 NVL.

Oracles: the data-sheet and whitepaper figures, written out in the comments (dense; NVIDIA's starred sparse figures
halved where only those are printed); the names nvidia-smi, rocm-smi, hl-smi, clouds and benchmark tables give these
parts; the notes of serving_params.json's device_families; and one decode step worked by hand.
"""
from __future__ import annotations

import json

import pytest

import calc
from calc.collectives import get_interconnect, link_for_group
from calc.hardware import accelerator_preset_id, list_accelerators, match_accelerator_name
from calc.models import DATA_DIR
from calc.serving import serving_estimate
from calc.serving_params import DEVICE_FAMILIES, device_family, load_serving_params

#: The presets before these, in the data file's order (test_accelerator_presets.OLD + NEW).
BEFORE = ("h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200", "l4", "l40s", "rtx-4090", "mi300x", "gb200",
          "tpu-v5e", "m2-ultra", "m3-max", "ddr5-desktop", "mi325x", "mi355x", "b300", "rtx-pro-6000", "h100-nvl", "h20",
          "h800", "a800-80gb", "a100-pcie-80gb", "gh200-96gb", "gh200-144gb")
MORE = ("a10g", "a10", "l40", "rtx-6000-ada", "rtx-5090", "a40", "rtx-a6000", "rtx-3090", "mi250x", "mi210", "gaudi2",
        "gaudi3", "tpu-v6e", "tpu-v5p")
#: The parts of MLPerf Inference v6.0 that calc lacked, after those.
NEWER = ("mi350x", "h200-nvl")


def test_the_new_presets_follow_the_old_ones_in_the_list():
    # appended, so that an accelerator built by hand with an older part's figures still finds the older preset first
    assert tuple(list_accelerators()) == BEFORE + MORE + NEWER


@pytest.mark.parametrize("gid, gb, gb_s, bf16, fp8, int8, tdp, link", [
    # A10G (AWS G5): 24 GB GDDR6, 600 GB/s; tensor FP16 70 TFLOP/s, INT8 140 TOPS dense; nvidia-smi cap 300 W
    ("a10g", 24, 600, 70, None, 140, 300, "pcie4"),
    # A10 datasheet: 24 GB, 600 GB/s; BF16 125 | 250*, INT8 250 | 500*; 150 W
    ("a10", 24, 600, 125, None, 250, 150, "pcie4"),
    # L40 datasheet: 48 GB, 864 GB/s; BF16 181.05 | 362.1*, FP8 362 | 724*, INT8 362 | 724*; 300 W
    ("l40", 48, 864, 181.05, 362, 362, 300, "pcie4"),
    # RTX 6000 Ada Generation: 48 GB, 960 GB/s; BF16 364 | 728*, FP8 728 | 1,457*, INT8 728 | 1,457*; 300 W
    ("rtx-6000-ada", 48, 960, 364, 728, 728, 300, "pcie4"),
    # RTX 5090 (GB202 whitepaper): 32 GB GDDR7, 1,792 GB/s; BF16 with FP32 accumulate 209.5/419, FP8 419 | 838*,
    # INT8 838 | 1,676*; 575 W
    ("rtx-5090", 32, 1792, 209.5, 419, 838, 575, "pcie5"),
    # A40 datasheet: 48 GB, 696 GB/s; BF16 149.7 | 299.4*, INT8 299.3 | 598.6*; 300 W
    ("a40", 48, 696, 149.7, None, 299.3, 300, "pcie4"),
    # RTX A6000 (GA102 whitepaper table 3): 48 GB, 768 GB/s; BF16 with FP32 accumulate 154.8/309.6, INT8 309.7; 300 W
    ("rtx-a6000", 48, 768, 154.8, None, 309.7, 300, "pcie4"),
    # RTX 3090: 24 GB GDDR6X, 936 GB/s; 350 W; bf16 derived (82 SMs x 1.695 GHz x 512), no INT8 figure on file
    ("rtx-3090", 24, 936, 71.2, None, None, 350, "pcie4"),
    # MI250X, one of two GCDs: 128 GB and 8,192 bits x 3.2 Gbps = 3,276.8 GB/s, BF16 383, INT8 383 per module, halved;
    # 560 W per module, halved
    ("mi250x", 64, 1638.4, 383 / 2, None, 383 / 2, 280, None),
    # MI210: 64 GB HBM2E, 4,096 bits x 3.2 Gbps = 1,638.4 GB/s, FP16 181, INT8 181; 300 W
    ("mi210", 64, 1638.4, 181, None, 181, 300, "pcie4"),
    # Gaudi 2: 96 GB, 2.46 TB/s, BF16 432, FP8 865; no power figure on file
    ("gaudi2", 96, 2460, 432, 865, None, None, None),
    # Gaudi 3 white paper: 128 GB, 3.7 TB/s, BF16 and FP8 1,835
    ("gaudi3", 128, 3700, 1835, 1835, None, None, "gaudi3-roce"),
    # TPU v6e docs: 32 GB, 1,638 GBps, bf16 918, int8 1,836
    ("tpu-v6e", 32, 1638, 918, None, 1836, None, "ici-v6e"),
    # TPU v5p docs: 95 GB, 2,765 GBps, bf16 459, fp8 459; int8 918
    ("tpu-v5p", 95, 2765, 459, 459, 918, None, "ici-v5p"),
    # MI350X: 288 GB HBM3E, 8.0 TB/s; 256 CUs x 2.2 GHz x 4,096 = 2,306.9 bf16, FP8 and INT8 twice that; 1,000 W
    ("mi350x", 288, 8000, 2306.9, 4613.7, 4613.7, 1000, "infinity-fabric"),
    # H200 data sheet, NVL column: 141 GB, 4.8 TB/s; BF16 1,671*, FP8 3,341*, INT8 3,341* (* sparse); up to 600 W
    ("h200-nvl", 141, 4800, 1671 / 2, 3341 / 2, 3341 / 2, 600, "nvlink4-bridge-4way"),
])
def test_each_preset_carries_its_data_sheets_figures(gid, gb, gb_s, bf16, fp8, int8, tdp, link):
    close = lambda x: pytest.approx(x * 1e12, rel=1e-3)  # noqa: E731
    a = calc.get_accelerator(gid)
    assert a.memory_bytes == pytest.approx(gb * 1e9) and a.bandwidth_bytes_per_s == pytest.approx(gb_s * 1e9)
    assert a.peak_flops("bf16") == close(bf16) and a.peak_flops("fp16") == a.peak_flops("bf16")
    if fp8 is None:   # no FP8 engine (Ampere, CDNA2) or no figure: fp8 weights run at the bf16 rate
        assert "fp8" not in a.peak_flops_per_s and a.peak_flops("fp8") == a.peak_flops("bf16")
    else:
        assert a.peak_flops("fp8") == close(fp8)
    if int8 is None:
        assert "int8" not in a.peak_flops_per_s
    else:
        assert a.peak_flops("int8") == close(int8)
    assert a.tdp_w == tdp and (tdp is None or len(a.power_source) > 20)
    assert a.interconnect == link
    if link is not None:
        assert get_interconnect(link).source
    assert a.source and len(a.source) > 80


def test_only_the_a10g_has_a_verified_price_and_a_driver_total():
    a10g = calc.get_accelerator("a10g")
    # AWS g5.xlarge, one A10G: $1.006/h on demand in us-east-1
    assert a10g.price_per_hour_usd == 1.006 and a10g.price_date == "2025-11-30" and "g5.xlarge" in a10g.price_source
    # nvidia-smi '8722MiB / 23028MiB' on an A10G: 23,028 x 2^20 = 24,146,608,128 B
    assert a10g.driver_memory_bytes == 23_028 * 2**20 == 24_146_608_128 and "DCGM#232" in a10g.driver_memory_source
    for gid in MORE[1:]:
        a = calc.get_accelerator(gid)
        assert a.price_per_hour_usd is None and "no verified on-demand listing" in a.price_source, gid
        assert a.driver_memory_bytes is None, gid


def test_derived_figures_say_how_they_were_derived():
    # RTX 3090: 82 SMs x 1.695 GHz x 512 FLOP per SM per clock = 71.2 TFLOP/s
    assert 82 * 1.695e9 * 512 == pytest.approx(calc.get_accelerator("rtx-3090").peak_flops("bf16"), rel=1e-3)
    assert "Derived" in calc.get_accelerator("rtx-3090").source
    # MI250X: the module's 383 TFLOP/s and 3,276.8 GB/s over its two GCDs
    gcd = calc.get_accelerator("mi250x")
    assert 2 * gcd.bandwidth_bytes_per_s == pytest.approx(8192 / 8 * 3.2e9)
    assert "GCD" in gcd.name and "2 GCDs" in gcd.source
    # Gaudi 3: the white paper's 1,835 is kept; the source names the 1,677 of shipping clocks
    assert "1,677" in calc.get_accelerator("gaudi3").source


def test_parts_of_one_die_relate_as_their_sheets_say():
    l40, l40s, ada6000, rtx4090 = (calc.get_accelerator(g) for g in ("l40", "l40s", "rtx-6000-ada", "rtx-4090"))
    # L40 and L40S: the same 48 GB at 864 GB/s; the L40's bf16 (FP32 accumulate) is half the L40S's
    assert (l40.memory_bytes, l40.bandwidth_bytes_per_s) == (l40s.memory_bytes, l40s.bandwidth_bytes_per_s)
    assert l40.peak_flops("bf16") / l40s.peak_flops("bf16") == pytest.approx(181.05 / 362)
    # the RTX 6000 Ada runs FP32 accumulate at full rate, the RTX 4090 at half
    assert ada6000.peak_flops("bf16") > 2 * rtx4090.peak_flops("bf16")
    # A10 and A10G share their memory; the A10G has about half the tensor rate
    a10, a10g = calc.get_accelerator("a10"), calc.get_accelerator("a10g")
    assert (a10.memory_bytes, a10.bandwidth_bytes_per_s) == (a10g.memory_bytes, a10g.bandwidth_bytes_per_s)
    assert a10g.peak_flops("bf16") == pytest.approx(0.56 * a10.peak_flops("bf16"))
    # an MI210 is one CDNA2 GCD with the MI250X GCD's memory
    assert calc.get_accelerator("mi210").memory_bytes == calc.get_accelerator("mi250x").memory_bytes


def test_the_rtx_5090_has_fp4_tensor_cores_and_the_older_parts_none():
    assert calc.get_accelerator("rtx-5090").peak_flops_per_s["fp4"] == 838e12
    for gid in MORE:
        if gid != "rtx-5090":
            assert "fp4" not in calc.get_accelerator(gid).peak_flops_per_s, gid


@pytest.mark.parametrize("name, preset", [
    # as nvidia-smi and torch.cuda.get_device_name print them
    ("NVIDIA A10G", "a10g"), ("NVIDIA A10", "a10"), ("NVIDIA L40", "l40"), ("NVIDIA L40S", "l40s"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"), ("NVIDIA GeForce RTX 5090", "rtx-5090"), ("NVIDIA A40", "a40"),
    ("NVIDIA RTX A6000", "rtx-a6000"), ("NVIDIA GeForce RTX 3090", "rtx-3090"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"),
    # as rocm-smi, hl-smi and clouds name them
    ("AMD Instinct MI250X", "mi250x"), ("AMD Instinct MI250X/MI250", "mi250x"), ("AMD Instinct MI210", "mi210"),
    ("HL-325L", "gaudi3"), ("HL-225", "gaudi2"), ("v6e-8", "tpu-v6e"), ("v5p-8", "tpu-v5p"),
    # as benchmark tables shorten them
    ("A10G", "a10g"), ("A10", "a10"), ("L40", "l40"), ("RTX 6000 Ada", "rtx-6000-ada"), ("RTX 5090", "rtx-5090"),
    ("A40", "a40"), ("RTX A6000", "rtx-a6000"), ("A6000", "rtx-a6000"), ("RTX 3090", "rtx-3090"), ("MI250X", "mi250x"),
    ("MI210", "mi210"), ("Gaudi3", "gaudi3"), ("Intel Gaudi 3", "gaudi3"), ("Gaudi2", "gaudi2"),
    ("Intel Gaudi 2", "gaudi2"), ("TPU v6e", "tpu-v6e"), ("Trillium", "tpu-v6e"), ("TPU v5p", "tpu-v5p"),
])
def test_a_new_part_is_found_by_the_names_drivers_and_benchmarks_give_it(name, preset):
    assert match_accelerator_name(name) == preset and accelerator_preset_id(name) == preset
    assert calc.get_accelerator(name) == calc.get_accelerator(preset)


@pytest.mark.parametrize("name, preset", [
    # 'a10' is not taken by an A100, nor 'a10g' by the A10 rule
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"), ("NVIDIA A100-SXM4-40GB", "a100-40gb"), ("A100", "a100-80gb"),
    ("NVIDIA A100-PCIE-40GB", None),
    # the L40S stays the L40S; the L4 stays the L4
    ("NVIDIA L40S", "l40s"), ("L40S", "l40s"), ("NVIDIA L4", "l4"),
    # 'rtx 6000 ada' and 'rtx pro 6000' do not take each other; the Turing Quadro RTX 6000 has no preset
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000"), ("RTX PRO 6000", "rtx-pro-6000"),
    ("Quadro RTX 6000", None),
    # other RTX parts than these presets
    ("NVIDIA GeForce RTX 4090", "rtx-4090"), ("NVIDIA GeForce RTX 3090 Ti", None), ("NVIDIA GeForce RTX 5090 D", None),
    ("NVIDIA GeForce RTX 5090 Laptop GPU", None), ("NVIDIA RTX A4000", None), ("NVIDIA A4000", None),
    # other AMD, Intel and Google parts
    ("AMD Instinct MI250", None), ("AMD Instinct MI300X", "mi300x"), ("Gaudi", None), ("TPU v5e", "tpu-v5e"),
    ("TPU v4", None),
])
def test_the_name_rules_do_not_take_neighbours(name, preset):
    assert match_accelerator_name(name) == preset


@pytest.mark.parametrize("gid", MORE + NEWER)
def test_a_new_presets_id_and_display_name_resolve_to_it(gid):
    name = calc.get_accelerator(gid).name
    assert accelerator_preset_id(gid) == accelerator_preset_id(name) == accelerator_preset_id(name.upper()) == gid
    assert match_accelerator_name(name) == gid


def test_narrower_rules_come_before_broader_ones():
    rules = [tuple(w) for w, _ in json.loads((DATA_DIR / "accelerators.json").read_text())["_names"]]
    for narrow, broad in ((("a10g",), ("a10",)), (("a100",), ("a10",)), (("l40s",), ("l40",)), (("l40",), ("l4",)),
                          (("3090", "ti"), ("3090",)), (("5090", "d"), ("5090",)), (("mi250x",), ("mi250",)),
                          (("gaudi3",), ("gaudi",)), (("gaudi", "2"), ("gaudi",)),
                          # the MLPerf v6.0 parts: MI350X before the series' name, H200 NVL before the SXM part
                          (("mi350x",), ("mi350",)), (("h200", "nvlink"), ("h200", "nvl")),
                          (("h200", "nvl"), ("h200",)), (("h200nvl",), ("h200",))):
        assert rules.index(narrow) < rules.index(broad), (narrow, broad)


# -- families of the serving model ---------------------------------------------------------------------------------
@pytest.mark.parametrize("gid", ["l40", "rtx-6000-ada"])
def test_an_ad102_part_takes_adas_factors_and_says_so(gid):
    # the AD102 die of the fitted L40S and RTX 4090, no serving measurement of its own: assumed ada
    prm = load_serving_params()
    idx, notice = device_family(prm, gid)
    assert idx == 1 + DEVICE_FAMILIES.index("ada") == device_family(prm, "l40s")[0]
    assert f"no accelerator family fitted with {gid}" in notice[0] and "ada" in notice[0]


@pytest.mark.parametrize("gid", ["a10g", "a10", "a40", "rtx-a6000", "rtx-3090", "rtx-5090", "gaudi2", "gaudi3",
                                 "tpu-v6e", "tpu-v5p"])
def test_a_part_in_no_family_takes_the_references_factors_and_says_so(gid):
    # GA102 (GDDR) is not the fitted A100s' GA100, GB202 sits with the RTX PRO 6000 in no family; Gaudi, TPU
    prm = load_serving_params()
    idx, notice = device_family(prm, gid)
    assert idx == 0 and f"no accelerator family fitted with {gid}" in notice[0] and "hopper" in notice[0]
    assert gid in prm["device_families"]["notes"]


def test_the_fitted_families_are_as_before():
    fams = load_serving_params()["device_families"]
    assert fams["members"] == {"hopper": ["h100-sxm", "h100-pcie", "h200"], "ampere": ["a100-40gb", "a100-80gb"],
                               "ada": ["l4", "l40s", "rtx-4090"], "blackwell": ["b200", "gb200", "b300"],
                               "cdna3": ["mi300x", "mi325x"], "cdna4": ["mi355x"]}
    assert fams["assumed"] == {"a800-80gb": "ampere", "a100-pcie-80gb": "ampere", "l40": "ada", "rtx-6000-ada": "ada",
                               "mi250x": "cdna3", "mi210": "cdna3", "mi350x": "cdna4"}


@pytest.mark.parametrize("gid", ["mi250x", "mi210"])
def test_a_cdna2_part_takes_cdna3s_factors_as_a_rocm_part_and_says_why(gid):
    # no CDNA2 serving measurement: the nearest fitted family, whose engines' ROCm builds it runs, so the ROCm
    # factor of the fixed costs applies (on_rocm) and TensorRT-LLM gets the no-ROCm-build notice
    from calc.serving_params import on_rocm
    prm = load_serving_params()
    idx, notice = device_family(prm, gid)
    assert idx == 1 + DEVICE_FAMILIES.index("cdna3") and bool(on_rocm(idx))
    assert "those of cdna3, the nearest fitted family" in notice[0] and "CDNA2" in notice[0]
    est = serving_estimate("llama-3.1-8b", gid, 1000, 200, concurrency=8, engine="trtllm")
    assert any("no ROCm build" in n for n in est.notices)


@pytest.mark.parametrize("gid", ["gaudi3", "gaudi2", "tpu-v6e", "tpu-v5p"])
def test_tensorrt_llm_on_a_part_that_is_not_nvidias_is_a_what_if_and_says_so(gid):
    est = serving_estimate("llama-3.1-8b", gid, 1000, 200, concurrency=8, engine="trtllm")
    said = [n for n in est.notices if n.startswith("TensorRT-LLM runs on NVIDIA GPUs only, not on")]
    assert len(said) == 1 and calc.get_accelerator(gid).name in said[0]
    # vLLM there, and TensorRT-LLM on an NVIDIA part or on a hand-built accelerator of no known maker: no such notice
    for other in (serving_estimate("llama-3.1-8b", gid, 1000, 200, concurrency=8, engine="vllm"),
                  serving_estimate("llama-3.1-8b", "a10g", 1000, 200, concurrency=8, engine="trtllm"),
                  serving_estimate("llama-3.1-8b", calc.Accelerator("my part", 50e9, 1e12, {"bf16": 100e12}), 1000,
                                   200, concurrency=8, engine="trtllm")):
        assert not any(n.startswith("TensorRT-LLM runs on NVIDIA GPUs only") for n in other.notices)


def test_a_serving_estimate_on_a_new_part_carries_the_family_notice():
    est = serving_estimate("llama-3.1-8b", "a10g", 1000, 200, concurrency=8)
    assert any("no accelerator family fitted with a10g" in n for n in est.notices)
    assert est.tpot.estimate_s > 0 and est.output_tokens_per_s > 0
    # the same request on an L40, ada's factors
    est = serving_estimate("llama-3.1-8b", "l40", 1000, 200, concurrency=8)
    assert any("no accelerator family fitted with l40" in n and "ada" in n for n in est.notices)


# -- the roofline by hand ------------------------------------------------------------------------------------------
def test_one_decode_step_on_an_a10g_by_hand():
    # Llama-3.1-8B bf16, batch 1, one token of context: the step reads the weights but the embedding table
    # (16,060,522,496 - 128,256 x 4,096 x 2 = 15,009,849,344 B), plus the one row it looks up (4,096 x 2 = 8,192 B):
    # 15,009,857,536 B at the A10G's 600 GB/s = 25.016 ms, 39.97 tok/s; the cache of one token is
    # 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B, 0.218 us
    m, a = calc.get_model("llama-3.1-8b"), calc.get_accelerator("a10g")
    step = calc.decode_step_time(m, a, 1, 1)
    assert step.weights_s == pytest.approx((15_009_849_344 + 8_192) / 600e9, rel=1e-9)
    assert step.kv_s == pytest.approx(131_072 / 600e9, rel=1e-9)
    # compute: 2 x 7.5e9 FLOP over 70 TFLOP/s = 0.214 ms, far under the weight read at batch 1
    assert step.compute_s == pytest.approx(step.flops / 70e12, rel=1e-9) and step.compute_s < step.weights_s / 100
    assert step.total_s == pytest.approx(step.weights_s + step.kv_s, rel=1e-9)
    assert step.tokens_per_s == pytest.approx(1 / step.total_s)
    # the RTX A6000's 768 GB/s reads the same bytes in 768 / 600 less time
    a6000 = calc.decode_step_time(m, calc.get_accelerator("rtx-a6000"), 1, 1)
    assert step.weights_s / a6000.weights_s == pytest.approx(768 / 600)


def test_the_ridge_point_of_a_new_part():
    # RTX A6000: 154.8 TFLOP/s over 768 GB/s = 201.6 FLOP per byte
    assert calc.get_accelerator("rtx-a6000").ridge_flops_per_byte == pytest.approx(154.8e12 / 768e9)


# -- links ---------------------------------------------------------------------------------------------------------
def test_the_new_links_are_their_documents_figures_one_direction():
    # TPU v6e: 800 GBps bidirectional ICI per chip, 256 chips per pod; v5p: 1,200 GBps, 8,960 chips
    v6e, v5p = get_interconnect("ici-v6e"), get_interconnect("ici-v5p")
    assert (v6e.bandwidth_bytes_per_s, v6e.domain_size) == (800e9 / 2, 256)
    assert (v5p.bandwidth_bytes_per_s, v5p.domain_size) == (1200e9 / 2, 8960)
    # Gaudi 3: 21 scale-up ports x 200 Gb/s = 525 GB/s each way to the 7 others of an 8-card box; 3 x 200 Gb/s out
    g3 = get_interconnect("gaudi3-roce")
    assert g3.bandwidth_bytes_per_s == 21 * 200e9 / 8 == 525e9 and g3.domain_size == 8 and g3.direct_peers
    assert link_for_group(g3, 16).bandwidth_bytes_per_s == 3 * 200e9 / 8 == 75e9


def test_a_part_without_links_on_file_runs_on_one_device_only():
    # the Infinity Fabric between MI250X GCDs and Gaudi 2's scale-up ports are not on file
    for gid in ("mi250x", "gaudi2"):
        a = calc.get_accelerator(gid)
        assert a.interconnect is None
        with pytest.raises(ValueError, match="not ganged with others"):
            calc.decode_step_time(calc.get_model("llama-3.1-8b"), a, 1, 1024, tp=2)
    # a Gaudi 3 box of 8 is one tensor-parallel group
    step = calc.decode_step_time(calc.get_model("llama-3.1-70b"), calc.get_accelerator("gaudi3"), 8, 1024, tp=8)
    assert step.comm_s > 0


# -- MLPerf Inference v6.0's parts: AMD Instinct MI350X, NVIDIA H200 NVL ------------------------------------------
def test_the_mi350x_is_the_mi355x_die_at_a_lower_clock():
    mi350x, mi355x = calc.get_accelerator("mi350x"), calc.get_accelerator("mi355x")
    # 256 CUs x 2.2 GHz x 4,096 bf16 FLOP per CU per clock = 2,306.9 TFLOP/s (the MI355X: 2.4 GHz, 2,516.6)
    assert mi350x.peak_flops("bf16") == pytest.approx(256 * 2.2e9 * 4096, rel=1e-4)
    # every dense figure scales by the clock ratio 2.2 / 2.4 (stas00: "144.2 vs 157.3 fp32")
    for dtype in ("bf16", "fp16", "fp8", "int8", "fp32", "fp4"):
        assert mi350x.peak_flops(dtype) / mi355x.peak_flops(dtype) == pytest.approx(2.2 / 2.4, rel=1e-3), dtype
    # CDNA 4's steps: FP8 twice bf16, MXFP4 four times
    assert mi350x.peak_flops_per_s["fp8"] == pytest.approx(2 * mi350x.peak_flops("bf16"), rel=1e-4)
    assert mi350x.peak_flops_per_s["fp4"] == 9227.5e12 == pytest.approx(4 * mi350x.peak_flops("bf16"), rel=1e-4)
    # the same 288 GB of HBM3E at 8 TB/s and the same 8-GPU Infinity Fabric; 1,000 W air-cooled against 1,400 W
    assert (mi350x.memory_bytes, mi350x.bandwidth_bytes_per_s) == (mi355x.memory_bytes, mi355x.bandwidth_bytes_per_s)
    assert mi350x.interconnect == mi355x.interconnect == "infinity-fabric"
    assert (mi350x.tdp_w, mi355x.tdp_w) == (1000, 1400) and "determine_accelerator.sh" in mi350x.power_source
    assert "Derived" in mi350x.source and "2.2 GHz" in mi350x.source


def test_the_h200_nvl_computes_as_an_h100_nvl_with_the_h200s_memory():
    nvl, h100_nvl, h200 = (calc.get_accelerator(g) for g in ("h200-nvl", "h100-nvl", "h200"))
    # the NVL columns of the H100 and H200 data sheets print the same 1,671 / 3,341 / 835 (sparse)
    assert nvl.peak_flops_per_s == h100_nvl.peak_flops_per_s
    assert nvl.peak_flops("fp32") == 835 / 2 * 1e12
    # 141 GB of HBM3e at 4.8 TB/s, as the SXM part; 600 W against its 700 W; no FP4 on Hopper
    assert (nvl.memory_bytes, nvl.bandwidth_bytes_per_s) == (h200.memory_bytes, h200.bandwidth_bytes_per_s)
    assert (nvl.tdp_w, h200.tdp_w) == (600, 700) and "fp4" not in nvl.peak_flops_per_s
    # the SXM part's dense bf16 is 989: the NVL card's is 1,671 / 2 / 989 of it
    assert nvl.peak_flops("bf16") / h200.peak_flops("bf16") == pytest.approx(835.5 / 989)


def test_the_new_parts_have_no_price_nor_driver_total_on_file():
    for gid in NEWER:
        a = calc.get_accelerator(gid)
        assert a.price_per_hour_usd is None and "no verified on-demand listing" in a.price_source, gid
        assert a.driver_memory_bytes is None, gid


@pytest.mark.parametrize("name, preset", [
    # as rocm-smi, torch and MLPerf's systems/*.json name them
    ("AMD Instinct MI350X", "mi350x"), ("AMD Instinct MI350X 288GB HBM3e", "mi350x"), ("MI350X", "mi350x"),
    ("mi350x", "mi350x"),
    # as nvidia-smi, MLPerf's systems/*.json, their system names and Slurm's gres name them
    ("NVIDIA H200 NVL", "h200-nvl"), ("NVIDIA H200-NVL-141GB", "h200-nvl"), ("H200NVL_141GBx8", "h200-nvl"),
    ("H200 NVL", "h200-nvl"), ("nvidia_h200_nvl", "h200-nvl"),
])
def test_an_mlperf_v6_part_is_found_by_the_names_drivers_and_benchmarks_give_it(name, preset):
    assert match_accelerator_name(name) == preset and accelerator_preset_id(name) == preset
    assert calc.get_accelerator(name) == calc.get_accelerator(preset)


@pytest.mark.parametrize("name, preset", [
    # the MI355X stays the MI355X; a bare MI350 (the series of both) and the MI350P PCIe card are refused
    ("AMD Instinct MI355X", "mi355x"), ("AMD Instinct MI355X 288GB HBM3e", "mi355x"), ("MI355X", "mi355x"),
    ("MI350", None), ("AMD Instinct MI350 Series", None), ("AMD Instinct MI350P", None),
    # the H200 SXM's names stay the SXM part's, an H200 name with NVLink in it as before; the H100 NVL stays its own
    ("NVIDIA H200", "h200"), ("NVIDIA H200-SXM-141GB", "h200"), ("H200", "h200"), ("HGX H200 NVLink", "h200"),
    ("NVIDIA H100 NVL", "h100-nvl"), ("NVIDIA H20", "h20"), ("NVIDIA GH200 144G HBM3e", "gh200-144gb"),
    # RTX PRO 4500 and 5000 Blackwell: no preset, and no other RTX PRO preset takes them
    ("RTX PRO 4500", None), ("NVIDIA RTX PRO 4500 Blackwell", None),
    ("NVIDIA RTX PRO 4500 Blackwell Server Edition", None), ("NVIDIA RTX PRO 5000 Blackwell", None),
])
def test_the_mlperf_v6_name_rules_do_not_take_neighbours(name, preset):
    assert match_accelerator_name(name) == preset


def test_the_mi350x_takes_cdna4s_factors_as_the_mi355x_die_and_says_why():
    # no MI350X serving measurement: the fitted MI355X's family, a ROCm platform (TensorRT-LLM has no build there)
    from calc.serving_params import on_rocm
    prm = load_serving_params()
    idx, notice = device_family(prm, "mi350x")
    assert idx == 1 + DEVICE_FAMILIES.index("cdna4") == device_family(prm, "mi355x")[0] and bool(on_rocm(idx))
    assert "no accelerator family fitted with mi350x" in notice[0]
    assert "those of cdna4, the fitted mi355x's" in notice[0] and "CDNA 4 die" in notice[0]
    assert "mi350x" in prm["device_families"]["notes"]
    est = serving_estimate("llama-3.1-8b", "mi350x", 1000, 200, concurrency=8, engine="trtllm")
    assert any("no ROCm build" in n for n in est.notices)


def test_the_h200_nvl_takes_hoppers_factors_as_the_h100_nvl_does():
    # a GH100 die with no serving measurement: in no family (Hopper the reference), the H100 SXM's matmul ceiling
    from calc.serving_params import matmul_scale
    prm = load_serving_params()
    for gid in ("h200-nvl", "h100-nvl"):
        idx, notice = device_family(prm, gid)
        assert idx == 0 and f"no accelerator family fitted with {gid}" in notice[0] and "hopper" in notice[0]
        assert gid in prm["device_families"]["notes"]
        scale, more = matmul_scale(prm, gid)
        assert scale == 1.0 and "h100-sxm" in more[0]
    est = serving_estimate("llama-3.1-8b", "h200-nvl", 1000, 200, concurrency=8)
    assert any("no published serving measurement on h200-nvl" in n for n in est.notices)
    assert est.tpot.estimate_s > 0 and est.output_tokens_per_s > 0


def test_one_decode_step_on_an_h200_nvl_by_hand():
    # Llama-3.1-8B bf16, batch 1, one token of context: 15,009,849,344 B of weights but the embedding table, plus
    # the row it looks up (8,192 B), at 4.8 TB/s = 3.127 ms, 319.8 tok/s; the cache of one token, 131,072 B, 27.3 ns
    m, a = calc.get_model("llama-3.1-8b"), calc.get_accelerator("h200-nvl")
    step = calc.decode_step_time(m, a, 1, 1)
    assert step.weights_s == pytest.approx((15_009_849_344 + 8_192) / 4.8e12, rel=1e-9)
    assert step.kv_s == pytest.approx(131_072 / 4.8e12, rel=1e-9)
    # compute: 15,009,849,344 FLOP over 835.5 TFLOP/s = 17.97 us, far under the weight read at batch 1
    assert step.flops == 15_009_849_344 and step.compute_s == pytest.approx(15_009_849_344 / 835.5e12, rel=1e-9)
    assert step.total_s == pytest.approx(step.weights_s + step.kv_s, rel=1e-9) and step.comm_s == 0
    assert step.tokens_per_s == pytest.approx(1 / step.total_s) == pytest.approx(319.787, rel=1e-5)
    # the H200 SXM reads the same bytes at the same 4.8 TB/s; the MI350X at 8.0 TB/s in 4.8 / 8 of the time
    assert calc.decode_step_time(m, calc.get_accelerator("h200"), 1, 1).weights_s == step.weights_s
    mi350x = calc.decode_step_time(m, calc.get_accelerator("mi350x"), 1, 1)
    assert mi350x.weights_s / step.weights_s == pytest.approx(4.8 / 8.0)


def test_the_h200_nvl_bridge_joins_four_cards_at_900_gb_s():
    # "2- or 4-way NVLink bridge: 900 GB/s per GPU" both directions -> 450 GB/s each way; past four cards, PCIe Gen5
    bridge4, bridge2 = get_interconnect("nvlink4-bridge-4way"), get_interconnect("nvlink4-bridge")
    assert bridge4.bandwidth_bytes_per_s == 900e9 / 2 and bridge4.domain_size == 4 and bridge4.direct_peers
    assert bridge4.scale_out == "pcie5" and link_for_group(bridge4, 4) is bridge4
    assert link_for_group(bridge4, 8).id == "pcie5"
    # TP4 of Llama-3.1-70B: the H200 NVL's four cards share a bridge, the H100 NVL's pairs cross PCIe
    m = calc.get_model("llama-3.1-70b")
    h200_nvl = calc.decode_step_time(m, calc.get_accelerator("h200-nvl"), 8, 1024, tp=4)
    h100_nvl = calc.decode_step_time(m, calc.get_accelerator("h100-nvl"), 8, 1024, tp=4)
    assert 0 < h200_nvl.comm_s < h100_nvl.comm_s
    assert bridge2.domain_size == 2   # the H100 NVL's bridge is unchanged
    # the MI350X's all-reduces run on the MI355X's Infinity Fabric: the same time for the same messages
    mi350x, mi355x = (calc.decode_step_time(m, calc.get_accelerator(g), 8, 1024, tp=8) for g in ("mi350x", "mi355x"))
    assert mi350x.comm_s == mi355x.comm_s > 0
