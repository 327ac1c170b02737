"""Accelerators: the ``Accelerator`` dataclass and the presets in ``calc/data/accelerators.json``."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from .dtypes import dtype_bytes, quant_format
from .checks import check_choice, check_nonneg_number, check_positive_number
from .models import DATA_DIR

#: Compute dtype used for a weight dtype (DESIGN.md dtype names). Weight-only int4 (GPTQ/AWQ,
#: W4A16) dequantises to bf16 before the matmul, so its arithmetic runs at the bf16 rate.
COMPUTE_DTYPE = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "int8", "int4": "bf16"}
_FALLBACK = ("bf16", "fp16", "fp32")
#: Names a ``peak_flops_per_s`` table may use: the storage dtypes and fp4 (e2m1 tensor cores, Blackwell).
PEAK_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")
#: How a quantized model's matmuls run (``Accelerator.matmul``, ``with_matmul``).
MATMUL_CONVENTIONS = ("auto", "weight_only", "low_precision")
MATMUL_LABELS = {"auto": "as stored: W8A8 for 8-bit, W4A16 for 4-bit",
                 "weight_only": "weight-only: activations bf16 (W8A16, W4A16)",
                 "low_precision": "low precision: W8A8, W4A4 kernels"}
#: The precision a W8A8 / W4A4 kernel multiplies in, for each quantized storage format.
_LOW = {"fp8": "fp8", "int8": "int8", "int4": "int4", "fp8-block": "fp8", "q8_0": "int8", "q4_0": "int4",
        "q4_k_m": "int4", "mxfp4": "fp4", "nvfp4": "fp4",
        # DeepSeek-V4's checkpoints: fp4 routed experts (most of the FLOPs) beside fp8 blocks; the fp4 rate keeps a
        # bound a bound
        "mxfp4-fp8": "fp4", "nvfp4-fp8": "fp4"}


def matmul_dtype(weight_dtype: str, matmul: str = "auto") -> str:
    """The dtype the matmuls of a model stored in ``weight_dtype`` run in, under ``matmul``.

    "auto" (default; the course's and calc's rule so far): fp8, int8 and fp8-block on their own tensor
    cores (W8A8, as FP8 checkpoints are served), every 4-bit format dequantized to bf16 (W4A16: GPTQ/AWQ
    Marlin kernels, llama.cpp, gpt-oss's MXFP4 MoE kernels on Hopper). "weight_only": every quantized
    format dequantized to bf16 (W8A16 / W4A16; activations stay bf16). "low_precision": the format's own
    precision, activations quantized too (W8A8 int8/fp8, W4A4: NVFP4 and MXFP4 on Blackwell's fp4 tensor
    cores, int4 for GPTQ-style int4 and GGUF q4). fp32, bf16 and fp16 run in their own precision always.

    Raises:
        ValueError: unknown dtype or convention.
    """
    check_choice(matmul, MATMUL_CONVENTIONS,
                 f"matmul must be one of {', '.join(MATMUL_CONVENTIONS)} ({'; '.join(MATMUL_LABELS.values())})")
    dtype_bytes(weight_dtype, "weight_dtype")
    key = weight_dtype.lower()
    if key in ("fp32", "bf16", "fp16"):
        return key
    if matmul == "weight_only":
        return "bf16"
    if matmul == "low_precision":
        return _LOW.get(key) or ("int8" if key.startswith("int8-g") else "int4")
    if key in COMPUTE_DTYPE:
        return COMPUTE_DTYPE[key]
    return quant_format(weight_dtype).compute_dtype


@dataclass(frozen=True)
class Accelerator:
    """One accelerator (or CPU) as the roofline sees it.

    Fields:
        name: display name.
        memory_bytes: memory capacity in bytes (GB = 1e9 bytes).
        bandwidth_bytes_per_s: memory bandwidth W in bytes/s.
        peak_flops_per_s: dense peak P in FLOP/s by compute dtype, e.g. {"bf16": 989e12, "fp8": 1979e12}.
            Never the 2:4-sparse figure (reference-data section 2.1).
        price_per_hour_usd: default hourly price in USD, or None (owned hardware).
        price_date, price_source, source: provenance (not compared); price_source names the listing in a few
            words ("Nebius HGX H200 on-demand"), price_evidence, where given, quotes it with the copy read (repository,
            commit, day), for a help text.
        interconnect: id of the link between accelerators of this kind in a server (an entry of the
            "interconnects" section of accelerators.json, read by ``calc.parallel``), or None for a
            device that is not ganged with others (not compared).
        driver_memory_bytes: the capacity the driver reports (nvidia-smi's total, in MiB x 2^20;
            an H100 80GB reports 81,559 MiB = 85,520,809,984 B), or None where none is on file.
        driver_memory_source: where that figure was read (not compared).
        matmul: how quantized matmuls run, one of ``MATMUL_CONVENTIONS`` ("auto": W8A8 for 8-bit, W4A16
            for 4-bit formats; "weight_only"; "low_precision"), read by ``compute_flops`` (``with_matmul``).
        tdp_w: board power limit in watts (the data sheet's TDP / maximum board power, or the cap nvidia-smi
            and rocm-smi report), or None where none is on file; power_source says where (not compared).
        measured_power_w: watts one board drew under an inference load in a public measurement, or None;
            measured_power_source says which (not compared).
        idle_power_w: watts one board draws with a model loaded and no traffic, or None; idle_power_source
            (not compared). ``calc.energy`` reads all three.

    Raises:
        ValueError: non-positive memory or bandwidth, an empty FLOP/s table, a non-positive FLOP/s,
            an unknown dtype name in the table, a negative price, or a non-positive power figure.
    """

    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    peak_flops_per_s: dict
    price_per_hour_usd: float | None = None
    price_date: str | None = field(default=None, compare=False)
    price_source: str = field(default="", compare=False)
    price_evidence: str = field(default="", compare=False)
    source: str = field(default="", compare=False)
    interconnect: str | None = field(default=None, compare=False)
    driver_memory_bytes: float | None = None
    driver_memory_source: str = field(default="", compare=False)
    matmul: str = "auto"
    tdp_w: float | None = field(default=None, compare=False)
    power_source: str = field(default="", compare=False)
    measured_power_w: float | None = field(default=None, compare=False)
    measured_power_source: str = field(default="", compare=False)
    idle_power_w: float | None = field(default=None, compare=False)
    idle_power_source: str = field(default="", compare=False)

    def __post_init__(self):
        check_positive_number(self.memory_bytes, "memory_bytes")
        check_positive_number(self.bandwidth_bytes_per_s, "bandwidth_bytes_per_s")
        if not isinstance(self.peak_flops_per_s, dict) or not self.peak_flops_per_s:
            raise ValueError("peak_flops_per_s must be a non-empty dict like {'bf16': 989e12}")
        for k, v in self.peak_flops_per_s.items():
            if k not in PEAK_DTYPES:
                raise ValueError(f"peak_flops_per_s keys must be among {', '.join(PEAK_DTYPES)}; got {k!r}")
            check_positive_number(v, f"peak_flops_per_s[{k!r}]")
        check_choice(self.matmul, MATMUL_CONVENTIONS, f"matmul must be one of {', '.join(MATMUL_CONVENTIONS)}")
        if self.price_per_hour_usd is not None:
            check_nonneg_number(self.price_per_hour_usd, "price_per_hour_usd")
        if self.driver_memory_bytes is not None:
            check_positive_number(self.driver_memory_bytes, "driver_memory_bytes")
        for what in ("tdp_w", "measured_power_w", "idle_power_w"):
            if getattr(self, what) is not None:
                check_positive_number(getattr(self, what), what)

    def __hash__(self):
        return hash((self.name, self.memory_bytes, self.bandwidth_bytes_per_s,
                     tuple(sorted(self.peak_flops_per_s.items())), self.price_per_hour_usd, self.matmul))

    def peak_flops(self, dtype: str = "bf16") -> float:
        """Dense peak FLOP/s for arithmetic in ``dtype``.

        Falls back to the bf16, fp16, then fp32 rate when the accelerator has no engine for
        ``dtype`` (an A100 runs fp8 weights through its bf16 tensor cores).

        Raises:
            ValueError: unknown dtype name.
        """
        if dtype != "fp4":
            dtype_bytes(dtype, "dtype")
        for d in (dtype, *_FALLBACK):
            if d in self.peak_flops_per_s:
                return float(self.peak_flops_per_s[d])
        return float(max(self.peak_flops_per_s.values()))

    def matmul_precision(self, weight_dtype: str = "bf16") -> tuple[str, bool]:
        """(the precision the matmuls of ``weight_dtype`` run in on this accelerator, whether that is a
        fallback). Under "low_precision" a precision this accelerator has no tensor-core peak for falls
        back to bf16, weight-only, as vLLM does: on a GPU without fp4 engines it runs NVFP4 and MXFP4
        through the Marlin weight-only kernel ("Your GPU does not have native support for FP4
        computation ... Weight-only FP4 compression will be used leveraging the Marlin kernel",
        vllm/model_executor/layers/quantization/utils/marlin_utils_fp4.py).

        Raises:
            ValueError: unknown dtype.
        """
        dtype = matmul_dtype(weight_dtype, self.matmul)
        if self.matmul == "low_precision" and dtype not in self.peak_flops_per_s:
            return "bf16", True
        return dtype, False

    def compute_flops(self, weight_dtype: str = "bf16") -> float:
        """Peak FLOP/s of the matmuls of a model stored in ``weight_dtype``, in the precision
        ``matmul_precision`` names ("auto": ``COMPUTE_DTYPE``, or a block format's ``compute_dtype``:
        bf16 for weight-only formats, fp8 for fp8-block; "weight_only": bf16; "low_precision": the
        format's own precision where this accelerator has an engine for it, else bf16). A precision
        without its own entry falls back to bf16 (``peak_flops``).
        B200, nvfp4 weights: 2.25e15 (auto, W4A16), 9.0e15 (low_precision, fp4 tensor cores); H100:
        989e12 in every convention (no fp4 engine).

        Raises:
            ValueError: unknown dtype.
        """
        return self.peak_flops(self.matmul_precision(weight_dtype)[0])

    def matmul_note(self, weight_dtype: str = "bf16") -> str:
        """Which precision and peak the compute term of ``weight_dtype`` uses, in words, e.g. "nvfp4
        weights: matmuls in fp4 (low precision: W8A8, W4A4 kernels), P = 9,000 TFLOP/s dense"; says so
        when a low-precision choice falls back to bf16 for want of an engine.

        Raises:
            ValueError: unknown dtype.
        """
        dtype, fallback = self.matmul_precision(weight_dtype)
        p = self.peak_flops(dtype)
        text = f"{weight_dtype} weights: matmuls in {dtype} ({MATMUL_LABELS[self.matmul]}), P = {p / 1e12:,.0f} TFLOP/s dense"
        if fallback:
            want = matmul_dtype(weight_dtype, self.matmul)
            text += (f"; the {self.name} has no {want} tensor cores, so they run weight-only in bf16, as vLLM falls "
                     "back to its Marlin kernels")
        return text

    @property
    def ridge_flops_per_byte(self) -> float:
        """The roofline ridge point P/W for bf16, in FLOP/byte (about 295 on an H100 SXM)."""
        return self.peak_flops("bf16") / self.bandwidth_bytes_per_s


def with_matmul(accelerator: Accelerator, matmul: str = "auto") -> Accelerator:
    """``accelerator`` with its quantized matmuls run under ``matmul`` (``matmul_dtype``); every roofline,
    sweep and plan reads the compute peak through ``Accelerator.compute_flops``.

    Raises:
        ValueError: an unknown convention.
    """
    check_choice(matmul, MATMUL_CONVENTIONS, f"matmul must be one of {', '.join(MATMUL_CONVENTIONS)}")
    return accelerator if accelerator.matmul == matmul else replace(accelerator, matmul=matmul)


@lru_cache(maxsize=1)
def _catalogue() -> dict:
    raw = json.loads((DATA_DIR / "accelerators.json").read_text())
    return {k: v for k, v in raw.items() if not k.startswith("_") and k != "interconnects"}


def list_accelerators() -> list[str]:
    """Ids of the accelerator presets, in the data file's order."""
    return list(_catalogue())


@lru_cache(maxsize=1)
def _name_rules() -> tuple:
    raw = json.loads((DATA_DIR / "accelerators.json").read_text())
    return tuple((tuple(words), preset) for words, preset in raw["_names"])


def _word_in(word: str, tokens: list) -> bool:
    # a token equal to the word, or starting with it before a letter ("h100sxm"), never before a digit ("h200")
    return any(t == word or (t.startswith(word) and not t[len(word)].isdigit()) for t in tokens)


def match_accelerator_name(name: str) -> str | None:
    """The preset id for an accelerator's name as a driver, a cloud or a benchmark gives it ("NVIDIA H100 80GB HBM3"
    -> "h100-sxm", "NVIDIA A100-SXM4-40GB" -> "a100-40gb", "AMD Instinct MI300X" -> "mi300x", "H100" -> "h100-sxm",
    "NVIDIA H100 NVL" -> "h100-nvl", "NVIDIA GH200 480GB" -> "gh200-96gb", "GB300" -> "b300"), or None (a part
    without a preset such as "NVIDIA H800 PCIe" or "NVIDIA A100-PCIE-40GB", a CPU): the first rule of
    accelerators.json's ``_names`` whose words all occur in the name (each a whole word, or the start of one
    before a letter: "h100sxm" holds "h100", "h200" does not hold "h20"), so a narrower rule ("h100 nvl") comes
    before a broader one ("h100").
    """
    tokens = re.split(r"[\s\-_/(),]+", str(name).strip().lower())
    for words, preset in _name_rules():
        if all(_word_in(w, tokens) for w in words):
            return preset
    return None


def accelerator_preset_id(name: str) -> str | None:
    """The preset id ``get_accelerator`` resolves ``name`` to ("NVIDIA H100 80GB HBM3" -> "h100-sxm", "NVIDIA H200
    SXM 141GB" -> "h200", "MI300X" -> "mi300x"), or None for a name it does not know."""
    cat = _catalogue()
    key = str(name).strip().lower()
    for pid, entry in cat.items():
        if key in (pid, entry["name"].lower()):
            return pid
    preset = match_accelerator_name(key) if key else None
    return preset if preset in cat else None


def get_accelerator(name: str) -> Accelerator:
    """Return the preset ``name``: its id such as "h100-sxm", its display name (case-insensitive), or a name a
    driver, a cloud or a benchmark table gives the part ("NVIDIA H100 80GB HBM3", "H100", "AMD Instinct MI300X";
    ``match_accelerator_name``).

    Raises:
        ValueError: unknown name; the message lists the valid ids.
    """
    cat = _catalogue()
    preset = accelerator_preset_id(name)
    if preset is None:
        raise ValueError(f"unknown accelerator {name!r}; valid: {', '.join(cat)}")
    return Accelerator(**cat[preset])
