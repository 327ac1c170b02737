"""Tests of the presets of parts published inference benchmarks run beyond the HGX servers (calc/data/accelerators.json):
H100 NVL, H20, H800, A800 SXM 80GB, A100 PCIe 80GB and the GH200 superchip's Hopper GPU with 96 GB or 144 GB.

Oracles: the data sheets' figures, written out in the comments and halved here where NVIDIA prints them with 2:4
sparsity (its starred figures); the names nvidia-smi and MLPerf's systems/*.json give these parts; and a fixed table of
what other names resolved to before these presets existed.
"""
from __future__ import annotations

import re

import pandas as pd
import pytest

import calc
from bench_script import bench_script
from calc.collectives import get_interconnect, group_all_reduce_s, link_for_group
from calc.hardware import accelerator_preset_id, list_accelerators, match_accelerator_name
from calc.models import DATA_DIR
from calc.serving import serving_estimate
from calc.serving_params import DEVICE_FAMILIES, device_family, load_serving_params, matmul_scale

NEW = ("h100-nvl", "h20", "h800", "a800-80gb", "a100-pcie-80gb", "gh200-96gb", "gh200-144gb")
#: The presets before these, in the data file's order (the new ones follow them, so that an accelerator built by hand
#: with an H100's or an A100's figures still finds the H100 or A100 preset first).
OLD = ("h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200", "l4", "l40s", "rtx-4090", "mi300x", "gb200",
       "tpu-v5e", "m2-ultra", "m3-max", "ddr5-desktop", "mi325x", "mi355x", "b300", "rtx-pro-6000")


def test_the_new_presets_follow_the_old_ones_in_the_list():
    # later presets (tests/test_presets_more_accelerators.py) follow these
    assert tuple(list_accelerators())[:len(OLD + NEW)] == OLD + NEW


@pytest.mark.parametrize("gid, gb, tb_s, bf16, fp8, int8, tf32, tdp, link", [
    # H100 datasheet, H100 NVL column: 94 GB, 3.9 TB/s; BF16 1,671*, FP8 3,341*, INT8 3,341*, TF32 835* (* sparse)
    ("h100-nvl", 94, 3.9, 1671 / 2, 3341 / 2, 3341 / 2, 835 / 2, 400, "nvlink4-bridge"),
    # H20 as reported (no public NVIDIA data sheet): 96 GB, 4.0 TB/s; BF16 148, FP8 296, INT8 296, TF32 74, dense
    ("h20", 96, 4.0, 148, 296, 296, 74, 400, "nvlink4"),
    # H800 datasheet (SXM): 80 GB, 3.35 TB/s; BF16 1,979*, FP8 3,958*, INT8 3,958*; the H100 SXM's 494.7 TF32 dense
    ("h800", 80, 3.35, 1979 / 2, 3958 / 2, 3958 / 2, 494.7, 700, "nvlink4-h800"),
    # A800 datasheet (80GB SXM): 80 GB, 2,039 GB/s; BF16 624*, INT8 1,248*, TF32 312*; no FP8 engine
    ("a800-80gb", 80, 2.039, 624 / 2, None, 1248 / 2, 312 / 2, 400, "nvlink3-a800"),
    # A100 datasheet (80GB PCIe): 80 GB, 1,935 GB/s, 300 W; the SXM part's BF16 624*, INT8 1,248*, TF32 312*
    ("a100-pcie-80gb", 80, 1.935, 624 / 2, None, 1248 / 2, 312 / 2, 300, "pcie4"),
    # GH200 datasheet: 96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s; BF16 1,979*, FP8 3,958*, INT8 3,958*;
    # module power up to 1,000 W (CPU, GPU and memory)
    ("gh200-96gb", 96, 4.0, 1979 / 2, 3958 / 2, 3958 / 2, 494.7, 1000, "infiniband-ndr"),
    ("gh200-144gb", 144, 4.9, 1979 / 2, 3958 / 2, 3958 / 2, 494.7, 1000, "infiniband-ndr"),
])
def test_each_preset_carries_its_data_sheets_dense_figures(gid, gb, tb_s, bf16, fp8, int8, tf32, tdp, link):
    # within 0.1%: the sheets round the sparse figure (1,979 = 2 x 989.4), the presets the dense one as the H100 SXM's
    # 989 and 1,979 do
    close = lambda x: pytest.approx(x * 1e12, rel=1e-3)  # noqa: E731
    a = calc.get_accelerator(gid)
    assert a.memory_bytes == pytest.approx(gb * 1e9) and a.bandwidth_bytes_per_s == pytest.approx(tb_s * 1e12)
    assert a.peak_flops("bf16") == close(bf16) and a.peak_flops("fp16") == a.peak_flops("bf16")
    assert a.peak_flops("int8") == close(int8)
    assert a.peak_flops("fp32") == close(tf32)
    if fp8 is None:   # Ampere runs fp8 weights through its bf16 tensor cores
        assert "fp8" not in a.peak_flops_per_s and a.peak_flops("fp8") == a.peak_flops("bf16")
    else:
        assert a.peak_flops("fp8") == close(fp8)
    assert "fp4" not in a.peak_flops_per_s                      # no Hopper or Ampere part has fp4 tensor cores
    assert a.tdp_w == tdp and len(a.power_source) > 20
    assert a.interconnect == link and get_interconnect(link).source
    # no verified rental price: the user enters one
    assert a.price_per_hour_usd is None and "no verified on-demand listing" in a.price_source
    assert a.source and ("datasheet" in a.source or "no public data sheet" in a.source)


def test_the_h20s_figures_say_they_are_not_from_an_nvidia_document():
    a = calc.get_accelerator("h20")
    assert "no public data sheet" in a.source and "not checked against an NVIDIA document" in a.source
    assert "no public NVIDIA data sheet" in a.power_source


def test_parts_of_one_die_share_their_siblings_figures():
    h100, a100 = calc.get_accelerator("h100-sxm"), calc.get_accelerator("a100-80gb")
    same = lambda a, b: (a.memory_bytes, a.bandwidth_bytes_per_s, a.peak_flops_per_s) == (  # noqa: E731
        b.memory_bytes, b.bandwidth_bytes_per_s, b.peak_flops_per_s)
    # H800 and A800 are the H100 and A100 SXM parts with fewer NVLink lanes: 400 GB/s against 900 and 600 GB/s
    assert same(calc.get_accelerator("h800"), h100) and calc.get_accelerator("h800").tdp_w == h100.tdp_w
    assert same(calc.get_accelerator("a800-80gb"), a100) and calc.get_accelerator("a800-80gb").tdp_w == a100.tdp_w
    # the GH200's GPU computes as an H100 SXM; its memory is its own
    for gid in ("gh200-96gb", "gh200-144gb"):
        assert calc.get_accelerator(gid).peak_flops_per_s == h100.peak_flops_per_s
    # the A100 PCIe 80GB computes as the SXM part on 1,935 against 2,039 GB/s and 300 against 400 W
    pcie = calc.get_accelerator("a100-pcie-80gb")
    assert pcie.peak_flops_per_s == a100.peak_flops_per_s and pcie.memory_bytes == a100.memory_bytes
    assert pcie.bandwidth_bytes_per_s / a100.bandwidth_bytes_per_s == pytest.approx(1935 / 2039)
    assert (pcie.tdp_w, a100.tdp_w) == (300, 400)
    # the H100 NVL's dense bf16 is 1,671 / 1,979 of the SXM part's (lower clocks within 350-400 W)
    assert calc.get_accelerator("h100-nvl").peak_flops("bf16") / h100.peak_flops("bf16") == pytest.approx(
        (1671 / 2) / 989)


def test_the_links_are_the_data_sheets_nvlink_halved_to_one_direction():
    # H100 NVL: "NVLink 600 GB/s" over the bridge of a pair of cards, both directions -> 300 GB/s each way;
    # H800 and A800: "NVLink 400 GB/s" -> 200 GB/s each way, 8 GPUs on an NVSwitch
    bridge, h800, a800 = (get_interconnect(k) for k in ("nvlink4-bridge", "nvlink4-h800", "nvlink3-a800"))
    assert bridge.bandwidth_bytes_per_s == 600e9 / 2 and bridge.domain_size == 2 and bridge.scale_out == "pcie5"
    assert h800.bandwidth_bytes_per_s == a800.bandwidth_bytes_per_s == 400e9 / 2
    assert h800.domain_size == a800.domain_size == 8 and h800.direct_peers and a800.direct_peers
    # 2 H100 NVL meet on the bridge; 4 are two pairs, whose partial sums cross PCIe Gen5 (63 GB/s each way)
    assert link_for_group(bridge, 2) is bridge and link_for_group(bridge, 4).id == "pcie5"
    assert group_all_reduce_s(16_384, 4, bridge) > group_all_reduce_s(16_384, 2, bridge)
    # the same all-reduce over 8 H800s takes longer than over 8 H100s (450 GB/s each way), by the bandwidth term only
    nv4 = get_interconnect("nvlink4")
    assert group_all_reduce_s(64e6, 8, h800) > group_all_reduce_s(64e6, 8, nv4)


@pytest.mark.parametrize("name, preset", [
    # as nvidia-smi and torch.cuda.get_device_name print them
    ("NVIDIA H100 NVL", "h100-nvl"), ("NVIDIA H20", "h20"), ("NVIDIA H800", "h800"),
    ("NVIDIA A800-SXM4-80GB", "a800-80gb"), ("NVIDIA A100-PCIE-80GB", "a100-pcie-80gb"),
    ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
    ("NVIDIA GH200 480GB", "gh200-96gb"),            # 96 GB HBM3; the 480 GB is the Grace CPU's LPDDR5X
    ("NVIDIA GH200 144G HBM3e", "gh200-144gb"),
    # as MLPerf's systems/*.json and system names give them
    ("NVIDIA H100-NVL-94GB", "h100-nvl"), ("H100NVL", "h100-nvl"), ("GH200-144GB", "gh200-144gb"),
    ("GH200-GraceHopper-Superchip_GH200-96GB", "gh200-96gb"),
    ("NVIDIA GH200 Grace Hopper Superchip 96GB", "gh200-96gb"),
    ("NVIDIA GH200 Grace Hopper Superchip 144GB", "gh200-144gb"),
    # shortened: a bare H800, A800 or GH200 is the SXM part or the 96 GB superchip
    ("H20", "h20"), ("H800", "h800"), ("A800", "a800-80gb"), ("GH200", "gh200-96gb"),
])
def test_a_new_part_is_found_by_the_names_drivers_and_benchmarks_give_it(name, preset):
    assert match_accelerator_name(name) == preset and accelerator_preset_id(name) == preset
    assert calc.get_accelerator(name) == calc.get_accelerator(preset)


@pytest.mark.parametrize("gid", NEW)
def test_a_new_presets_id_and_display_name_resolve_to_it(gid):
    name = calc.get_accelerator(gid).name
    assert accelerator_preset_id(gid) == accelerator_preset_id(name) == accelerator_preset_id(name.upper()) == gid
    assert match_accelerator_name(name) == gid          # the name rules read the display name the same way


#: What each name resolved to before the new presets (accelerator_preset_id), checked by hand against the rules:
#: None where calc still has no preset for the part.
BEFORE = {
    "NVIDIA H100 80GB HBM3": "h100-sxm", "H100": "h100-sxm", "H100 SXM": "h100-sxm", "h100sxm": "h100-sxm",
    "NVIDIA H100 PCIe": "h100-pcie", "NVIDIA H100-SXM-80GB": "h100-sxm", "NVIDIA H100-PCIe-80GB": "h100-pcie",
    "NVIDIA H200": "h200", "NVIDIA H200-SXM-141GB": "h200",
    "NVIDIA A100-SXM4-80GB": "a100-80gb", "NVIDIA A100-SXM4-40GB": "a100-40gb", "A100": "a100-80gb",
    "NVIDIA B200": "b200", "NVIDIA B200-SXM-180GB": "b200", "NVIDIA GB200": "gb200", "GB300": "b300",
    "NVIDIA L4": "l4", "NVIDIA L40S": "l40s", "NVIDIA GeForce RTX 4090": "rtx-4090",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000", "AMD Instinct MI300X": "mi300x",
    "AMD Instinct MI325X": "mi325x", "AMD Instinct MI355X": "mi355x", "TPU v5e": "tpu-v5e",
    # parts without a preset, refused before and still
    "NVIDIA H800 PCIe": None, "NVIDIA A100-PCIE-40GB": None, "NVIDIA H20 HBM3e": None, "NVIDIA H20-3e": None,
    "NVIDIA A800 80GB PCIe": None, "NVIDIA A800 40GB Active": None, "H100 SXM NVLink": None,
    "AMD EPYC 7763": None, "TPU v9": None, "Tesla T4": None,
    # "NVIDIA A10G" was refused here too; it now has its preset (tests/test_presets_more_accelerators.py)
    # "NVIDIA H200 NVL" was read as the SXM part, h200, here, and "AMD Instinct MI350X" refused; each now has its
    # own preset (h200-nvl, mi350x: tests/test_presets_more_accelerators.py)
}


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_a_name_that_resolved_before_resolves_as_before(name):
    assert accelerator_preset_id(name) == BEFORE[name]


def test_every_accelerator_of_the_shipped_measurements_resolves_as_before():
    # the fitted rows name calc's ids of the old presets; every row's id still resolves to itself, none to another
    # preset (the held-out rows of vLLM's DeepSeek-V3.2 recipe on 8 H20 name a newer preset, h20, by its own id, and
    # MLPerf v5.0's Mixtral Offline on 4 H100 NVL another, h100-nvl; MLPerf v6.0's MI350X and H200 NVL runs two more;
    # TensorRT-LLM v0.17's GH200 column and vLLM's Kimi-K2 recipe on 16 H800 two more)
    fitted = set(pd.read_csv(DATA_DIR / "serving_measurements.csv")["accelerator"].astype(str))
    assert fitted and fitted <= set(OLD)
    names = set(fitted)
    for f in ("serving_holdout.csv", "serving_cited.csv"):
        names |= set(pd.read_csv(DATA_DIR / f)["accelerator"].astype(str))
    assert names - set(OLD) == {"h20", "h100-nvl", "mi350x", "h200-nvl", "gh200-96gb", "h800"}
    for name in names:
        assert accelerator_preset_id(name) == name == match_accelerator_name(name)
    for gid in OLD:   # every old preset's id and display name too
        assert accelerator_preset_id(gid) == accelerator_preset_id(calc.get_accelerator(gid).name) == gid


def _mlperf_converter():
    return bench_script("convert_mlperf")


def test_the_mlperf_converter_maps_gh200_and_h100_nvl_systems_to_their_presets():
    conv = _mlperf_converter()
    # accelerator_model_name of MLPerf v4.1 and v5.0 systems: NVIDIA's, HPE's GH200-144GB, QCT's and Supermicro's
    # GH200-96GB, Cisco's and Lenovo's H100-NVL-94GB
    assert conv.ACCELERATORS["NVIDIA GH200 Grace Hopper Superchip 144GB"] == "gh200-144gb"
    assert conv.ACCELERATORS["NVIDIA GH200 Grace Hopper Superchip 96GB"] == "gh200-96gb"
    assert conv.ACCELERATORS["NVIDIA H100-NVL-94GB"] == "h100-nvl"
    # the converter's table and the name rules agree on every name it maps
    for name, gid in {**conv.ACCELERATORS, **conv.ACCELERATORS_V5}.items():
        assert gid in list_accelerators() and match_accelerator_name(name) == gid, name


@pytest.mark.parametrize("gid", ["h100-nvl", "h20", "h800", "gh200-96gb", "gh200-144gb"])
def test_a_hopper_part_without_measurements_takes_hoppers_factors_and_says_so(gid):
    prm = load_serving_params()
    idx, notice = device_family(prm, gid)
    assert idx == 0 and f"no accelerator family fitted with {gid}" in notice[0] and "hopper" in notice[0]
    scale, more = matmul_scale(prm, gid)
    assert scale == 1.0 and "h100-sxm" in more[0]
    est = serving_estimate("llama-3.1-8b", gid, 1000, 200, concurrency=8)
    assert any(f"no accelerator family fitted with {gid}" in n and "hopper" in n for n in est.notices)
    assert any(f"no published serving measurement on {gid}" in n for n in est.notices)
    assert est.tpot.estimate_s > 0 and est.output_tokens_per_s > 0


@pytest.mark.parametrize("gid", ["a800-80gb", "a100-pcie-80gb"])
def test_an_ampere_part_without_measurements_takes_amperes_factors_and_says_so(gid):
    prm = load_serving_params()
    idx, notice = device_family(prm, gid)
    assert idx == 1 + DEVICE_FAMILIES.index("ampere") == device_family(prm, "a100-80gb")[0]
    assert gid in notice[0] and "ampere" in notice[0]
    # the matmul ceiling of the A100 SXM (0.869 against the reference H100 SXM's 0.803), said
    scale, more = matmul_scale(prm, gid)
    assert scale == pytest.approx(0.869 / 0.803) == matmul_scale(prm, "a100-80gb")[0]
    assert "a100-80gb" in more[0]
    est = serving_estimate("llama-3.1-8b", gid, 1000, 200, concurrency=8)
    assert any("ampere" in n for n in est.notices) and any("a100-80gb" in n for n in est.notices)
    # the fitted accelerators keep their own factors, without a notice
    assert device_family(prm, "a100-80gb")[1] == [] and matmul_scale(prm, "a100-80gb")[1] == []


def test_an_a800_on_one_gpu_is_estimated_as_an_a100_sxm():
    # one GPU: the same data sheet figures and the same family, so the same TPOT and TTFT (only NVLink differs)
    a800 = serving_estimate("llama-3.1-8b", "a800-80gb", 1000, 200, concurrency=8)
    a100 = serving_estimate("llama-3.1-8b", "a100-80gb", 1000, 200, concurrency=8)
    assert a800.tpot.estimate_s == a100.tpot.estimate_s and a800.ttft.estimate_s == a100.ttft.estimate_s
    # on 8 GPUs the A800's 200 GB/s each way makes the tensor-parallel all-reduces slower than the A100's 300 GB/s
    tp8 = dict(concurrency=8, tp=8)
    assert (serving_estimate("llama-3.1-70b", "a800-80gb", 1000, 200, **tp8).tpot.estimate_s
            > serving_estimate("llama-3.1-70b", "a100-80gb", 1000, 200, **tp8).tpot.estimate_s)


@pytest.mark.parametrize("gid, usd, quoted", [
    ("h200", 5.40, "'H200,Nebius,5.4'"),
    ("b300", 7.40, "$7.40 per GPU-hour"),
    # CoreWeave rents GB200 by the 4-GPU instance: $42.00 an hour / 4 GPUs = $10.50 per GPU-hour
    ("gb200", 42.00 / 4, "$42.00 an hour for an instance of 4 GPUs"),
    ("mi300x", 3.45, "'$3.45/GPU-hr'"),
    ("mi355x", 8.60, "$8.60 per GPU-hour"),
])
def test_rental_prices_quote_their_listing_and_its_date(gid, usd, quoted):
    # each price per GPU-hour is the figure its listing quotes (per GPU, or an instance's price over its GPUs), read
    # on a stated day, from a named provider's page or price API, with the repository or file that holds the copy
    # (price_source names the listing in a few words for the sidebar's caption; price_evidence quotes it)
    a = calc.get_accelerator(gid)
    assert a.price_per_hour_usd == pytest.approx(usd, abs=1e-9)
    assert quoted in a.price_evidence and len(a.price_source) < 60
    assert "on-demand" in a.price_source or "pay-as-you-go" in a.price_source
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", a.price_date) and a.price_date in a.price_evidence
    assert "@" in a.price_evidence    # the commit of the copy read
