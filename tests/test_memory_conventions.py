"""Accelerator memory conventions: the data sheet (the course's), the driver's total, a serving engine's share."""
import pytest

import calc
from calc.memory import capacity_bytes

LLAMA3 = calc.get_model("llama-3-8b")     # 16,060,522,496 B of bf16 weights; 1,073,741,824 B of cache per 8K
H100 = calc.get_accelerator("h100-sxm")


def test_driver_capacity_is_what_nvidia_smi_reports():
    # nvidia-smi on an H100 80GB HBM3: "81559MiB" = 81,559 x 2^20 = 85,520,809,984 B (85.5 GB)
    assert H100.driver_memory_bytes == 81_559 * 2**20 == 85_520_809_984
    assert "nvidia-smi" in H100.driver_memory_source
    for gpu in calc.list_accelerators():
        a = calc.get_accelerator(gpu)
        if a.driver_memory_bytes is not None:
            # whole MiB, a little above the data sheet's decimal GB (or below it, B200's 180 GB usable)
            assert a.driver_memory_bytes % 2**20 == 0 and a.driver_memory_source
            assert 0.9 < a.driver_memory_bytes / a.memory_bytes < 1.1


def test_max_batch_under_each_convention():
    # data sheet (course): (80e9 - 16.0605e9) / 1.0737e9 = 59.55 -> 59
    assert calc.max_batch(LLAMA3, H100, 8192) == 59
    assert calc.max_batch(LLAMA3, H100, 8192, memory="datasheet") == 59
    # driver: (85.5208e9 - 16.0605e9) / 1.0737e9 = 64.69 -> 64
    assert calc.max_batch(LLAMA3, H100, 8192, memory="driver") == 64
    # engine, vLLM's 0.9: 0.9 x 85.5208e9 = 76.9687e9; (76.9687 - 16.0605) / 1.0737 = 56.73 -> 56
    assert calc.max_batch(LLAMA3, H100, 8192, memory="engine") == 56
    # with 2 GB of activations and CUDA graphs kept: (76.9687 - 16.0605 - 2) / 1.0737 = 54.86 -> 54
    assert calc.max_batch(LLAMA3, H100, 8192, memory="engine", reserve_bytes=2e9) == 54
    # a utilization of 0.5: 42.7604e9 - 16.0605e9 = 26.70e9 / 1.0737e9 = 24.87 -> 24
    assert calc.max_batch(LLAMA3, H100, 8192, memory="engine", gpu_memory_utilization=0.5) == 24


def test_memory_budget_reports_the_capacity_it_used():
    b = calc.memory_budget(LLAMA3, H100, 8192, 60, memory="driver")
    assert b.capacity_bytes == 85_520_809_984 and b.fits          # 60 x 1.0737 + 16.06 = 80.49 GB
    assert not calc.memory_budget(LLAMA3, H100, 8192, 60).fits   # > 80 GB on the data sheet
    assert capacity_bytes(H100, "engine") == pytest.approx(0.9 * 85_520_809_984)


def test_an_engine_keeps_a_runtime_reserve_inside_its_share():
    # 0.9 x 85.5208e9 - 2e9 = 74.9687e9; (74.9687 - 16.0605) / 1.0737 = 54.86 -> 54, as reserve_bytes=2e9 gives
    engine = calc.memory.with_capacity(H100, "engine", 0.9, runtime_reserve_bytes=2e9)
    assert engine.memory_bytes == pytest.approx(0.9 * 85_520_809_984 - 2e9)
    assert calc.max_batch(LLAMA3, engine, 8192) == 54
    with pytest.raises(ValueError, match="leaves no memory"):
        calc.memory.with_capacity(H100, "engine", 0.1, runtime_reserve_bytes=9e9)


def test_no_driver_figure_falls_back_to_the_data_sheet_and_says_so():
    b300 = calc.get_accelerator("b300")
    assert b300.driver_memory_bytes is None
    assert capacity_bytes(b300, "driver") == 288e9
    assert capacity_bytes(b300, "engine", 0.8) == pytest.approx(0.8 * 288e9)
    for memory in ("driver", "engine"):
        note = calc.memory.capacity_note(b300, memory)
        assert "No driver-reported total memory is on file for the NVIDIA B300" in note and "288 GB" in note
    assert calc.memory.capacity_note(b300, "datasheet") is None
    assert calc.memory.capacity_note(H100, "engine") is None


def test_driver_totals_read_from_public_logs():
    # nvidia-smi on an H200: "124585MiB / 143771MiB" (sgl-project/sglang#3196): 143,771 x 2^20 = 150,754,820,096 B
    h200 = calc.get_accelerator("h200")
    assert h200.driver_memory_bytes == 143_771 * 2**20 == 150_754_820_096
    assert "sglang#3196" in h200.driver_memory_source
    assert calc.max_batch(LLAMA3, h200, 8192, memory="driver") == 125   # (150.7548e9 - 16.0605e9) / 1.0737e9 = 125.4
    # rocm-smi on an MI300X: "VRAM Total Memory (B): 206141652992" = 196,592 MiB
    assert calc.get_accelerator("mi300x").driver_memory_bytes == 206_141_652_992 == 196_592 * 2**20
    # an RTX PRO 6000 Blackwell: "94490MiB / 97887MiB" (vllm-project/vllm#27542) = 102,641,958,912 B
    assert calc.get_accelerator("rtx-pro-6000").driver_memory_bytes == 97_887 * 2**20
    # an H100 PCIe reports the same 81,559 MiB as the SXM part
    assert calc.get_accelerator("h100-pcie").driver_memory_bytes == H100.driver_memory_bytes
    # every preset either has a driver figure with its source or gets the notice
    for gid in calc.list_accelerators():
        a = calc.get_accelerator(gid)
        assert (a.driver_memory_bytes is not None and a.driver_memory_source) or calc.memory.capacity_note(a, "driver")


@pytest.mark.parametrize("kwargs,needle", [
    (dict(memory="vram"), "memory must be one of datasheet, driver, engine"),
    (dict(memory="engine", gpu_memory_utilization=1.5), "gpu_memory_utilization must be a number between 0 and 1"),
    (dict(memory="engine", gpu_memory_utilization=0), "gpu_memory_utilization must be above 0"),
])
def test_bad_conventions_say_what_is_allowed(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        calc.max_batch(LLAMA3, H100, 8192, **kwargs)


def test_cli_takes_the_convention():
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "calc", "--memory", "driver", "--json"], capture_output=True,
                         text=True, timeout=120)
    rows = {r["quantity"]: r["value"] for r in json.loads(out.stdout)["rows"]}
    assert rows["max batch"] == 64     # (85.5208e9 - 16.0605e9) / 1.0737e9 = 64.69
