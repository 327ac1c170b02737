"""The compute peak of quantized matmuls as a convention (calc.hardware.with_matmul): "auto" (calc's and the
course's rule: fp8/int8 on their own tensor cores, 4-bit formats dequantized to bf16), "weight_only"
(bf16 for every format) or "low_precision" (W8A8 / W4A4 at the format's own peak; fp4 on Blackwell)."""
import pytest

import calc
from calc.hardware import matmul_dtype, with_matmul

H100 = calc.get_accelerator("h100-sxm")
B200 = calc.get_accelerator("b200")
LLAMA3 = calc.get_model("llama-3-8b")


def test_b200_has_its_fp4_peak():
    # DGX B200 datasheet: FP4 Tensor Core 144 PFLOPS with sparsity for 8 GPUs -> 9 PFLOPS dense per GPU
    assert B200.peak_flops_per_s["fp4"] == 9000e12
    assert "fp4" not in H100.peak_flops_per_s


def test_auto_keeps_todays_rule():
    for name, p in (("bf16", 989e12), ("fp8", 1979e12), ("int8", 1979e12), ("fp8-block", 1979e12),
                    ("int4", 989e12), ("q4_K_M", 989e12), ("nvfp4", 989e12)):
        assert H100.compute_flops(name) == p
    assert B200.compute_flops("nvfp4") == 2250e12          # W4A16 even where fp4 engines exist


def test_weight_only_and_low_precision_peaks():
    wo, lp = with_matmul(B200, "weight_only"), with_matmul(B200, "low_precision")
    assert wo.compute_flops("fp8") == wo.compute_flops("nvfp4") == 2250e12
    assert lp.compute_flops("nvfp4") == lp.compute_flops("mxfp4") == 9000e12
    assert lp.compute_flops("fp8-block") == lp.compute_flops("q8_0") == 4500e12
    assert lp.compute_flops("bf16") == 2250e12              # 16-bit runs as 16-bit in every convention
    # critical batch B* = P x bytes / 2W: nvfp4 (4.5 bits) on a B200 at 9e15 / 8e12: 9e15 x 0.5625 / 1.6e13
    assert calc.critical_batch(lp, "nvfp4") == pytest.approx(9e15 * 0.5625 / (2 * 8e12))
    assert calc.critical_batch(B200, "nvfp4") == pytest.approx(2.25e15 * 0.5625 / (2 * 8e12))


def test_prefill_compute_follows_the_convention():
    # Llama-3-8B nvfp4 prefill of 8,192 tokens on a B200: compute-bound, compute_s = FLOPs / P, so the fp4
    # engines make it exactly 4x shorter than W4A16.
    a = calc.prefill_time(LLAMA3, B200, 8192, weight_dtype="nvfp4")
    b = calc.prefill_time(LLAMA3, with_matmul(B200, "low_precision"), 8192, weight_dtype="nvfp4")
    assert a.flops == b.flops and a.compute_s / b.compute_s == pytest.approx(4.0)


def test_no_engine_falls_back_to_weight_only_with_a_notice():
    lp = with_matmul(H100, "low_precision")
    assert lp.matmul_precision("nvfp4") == ("bf16", True)
    assert lp.compute_flops("nvfp4") == 989e12
    assert "no fp4 tensor cores" in lp.matmul_note("nvfp4") and "Marlin" in lp.matmul_note("nvfp4")
    assert lp.matmul_precision("int4-g128") == ("bf16", True)   # Hopper has no int4 engine on file
    assert lp.matmul_precision("fp8") == ("fp8", False)


def test_bad_convention_is_refused():
    with pytest.raises(ValueError, match="weight_only"):
        with_matmul(H100, "w4a4")
    with pytest.raises(ValueError, match="matmul"):
        matmul_dtype("nvfp4", "fast")
    assert matmul_dtype("int8-g64", "low_precision") == "int8"
