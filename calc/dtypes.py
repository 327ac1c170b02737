"""Number formats and their sizes: the plain dtypes and the block (quantized) storage formats.

Sizes are storage bytes per element; int4 packs two elements per byte (0.5 B). The plain names leave
scale factors out, as the course material does; the block formats ("q4_K_M", "mxfp4", "int4-g128", ...;
their table is in ``calc.quant``'s docstring, which tensors each keeps in 16-bit is ``calc.quant``) count them (q4_0: 18 bytes per 32 elements = 0.5625 B).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: Bytes per stored element for each dtype name the project accepts (DESIGN.md, "Dtype names").
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}


def dtype_bytes(dtype: str, what: str = "dtype") -> float:
    """Return the bytes per element of ``dtype``.

    Args:
        dtype: one of ``DTYPE_BYTES`` ("fp32", "bf16", "fp16", "fp8", "int8", "int4") or a block
            format of ``calc.quant`` ("q8_0", "q4_0", "q4_K_M", "int4-g128", "int4-g32-sym", "fp8-block",
            "mxfp4", "nvfp4"), whose scales are included (mxfp4: 4.25 bits = 0.53125 B).
        what: the argument's name, used in the error message (e.g. "kv_dtype").

    Returns:
        bytes per element (float; 0.5 for int4).

    Raises:
        ValueError: unknown dtype; the message lists the valid names.
    """
    if isinstance(dtype, str) and dtype.lower() in DTYPE_BYTES:
        return DTYPE_BYTES[dtype.lower()]
    bits = bits_per_element(dtype) if isinstance(dtype, str) else None
    if bits is None:
        valid = ", ".join([*DTYPE_BYTES, *FORMATS])
        raise ValueError(f"{what} must be one of {valid} (int4 and int8 at a group of 32, 64, 128 or 256 too: "
                         f"int4-g64, or symmetric: int4-g64-sym); got {dtype!r}")
    return bits / 8.0


#: Other spellings of the plain dtypes, as engines, Hugging Face configs and benchmark tables write them: torch's
#: names (config.json's ``torch_dtype``), the fp8 encodings (e4m3 for weights; vLLM's ``--kv-cache-dtype
#: fp8_e5m2``, whose cache is one byte all the same), and ``auto``, vLLM's and SGLang's default for the cache: the
#: model's own 16-bit dtype.
DTYPE_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
                 "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "fp8e4m3": "fp8", "e4m3": "fp8", "e5m2": "fp8",
                 "float8_e4m3fn": "fp8", "float8": "fp8", "auto": "bf16"}


#: Quantization methods as engines, checkpoints and benchmark tables name them, for the format they store (keys
#: with "-" for "_" and in lower case): AWQ and GPTQ store 4-bit integers per group of 128 by default (AutoAWQ
#: ``q_group_size`` 128, ``w_bit`` 4; AutoGPTQ ``group_size`` 128, ``bits`` 4), as llm-compressor's W4A16 scheme does;
#: W8A8 (SmoothQuant, llm-compressor) multiplies int8 by int8; FP8_DYNAMIC and W8A8-FP8 store fp8 e4m3 per channel;
#: TensorRT-LLM's quant algos FP8_BLOCK_SCALES (fp8 per 128 x 128 block) and W4A16_MXFP4 (MXFP4 weights, bf16
#: activations). The same names ``calc.models.CHECKPOINT_TAGS`` reads in a checkpoint's hub id.
METHOD_ALIASES = {"awq": "int4-g128", "int4-awq": "int4-g128", "awq-int4": "int4-g128", "w4a16-awq": "int4-g128",
                  "gptq": "int4-g128", "int4-gptq": "int4-g128", "gptq-int4": "int4-g128", "w4a16": "int4-g128",
                  "w8a8": "int8", "int8-w8a8": "int8", "w8a8-int8": "int8", "fp8-dynamic": "fp8", "w8a8-fp8": "fp8",
                  "fp8-block-scales": "fp8-block", "w4a16-mxfp4": "mxfp4"}


def canonical_dtype(name):
    """The dtype name calc uses for ``name``: a plain dtype in lower case ("FP8" -> "fp8"), an alias of
    ``DTYPE_ALIASES`` ("bfloat16" -> "bf16", "fp8_e5m2" -> "fp8", "auto" -> "bf16"), a quantization method of
    ``METHOD_ALIASES`` for the format it stores ("AWQ" -> "int4-g128", "W8A8" -> "int8", "FP8_DYNAMIC" -> "fp8"), a
    block format as it is spelt here ("NVFP4" -> "nvfp4"); anything else unchanged, for the caller's check to refuse with the valid names."""
    if not isinstance(name, str):
        return name
    key = name.strip().lower()
    if key in DTYPE_BYTES:
        return key
    if key in DTYPE_ALIASES:
        return DTYPE_ALIASES[key]
    if key.replace("_", "-") in METHOD_ALIASES:
        return METHOD_ALIASES[key.replace("_", "-")]
    for f in FORMATS:
        if f.lower() == key:
            return f
    return name


#: Bits of each plain dtype (the course's convention: no scales).
PLAIN_BITS = {"fp32": 32.0, "bf16": 16.0, "fp16": 16.0, "fp8": 8.0, "int8": 8.0, "int4": 4.0}

Q4_K_BITS = 144 * 8 / 256     # block_q4_K: d, dmin (fp16) + 12 B of 6-bit scales/mins + 128 B of nibbles
Q6_K_BITS = 210 * 8 / 256     # block_q6_K: 128 B low nibbles + 64 B high bits + 16 B int8 scales + fp16 d
Q4_0_BITS = 18 * 8 / 32       # block_q4_0: fp16 d + 16 B of nibbles
Q8_0_BITS = 34 * 8 / 32       # block_q8_0: fp16 d + 32 int8


@dataclass(frozen=True)
class QuantFormat:
    """One weight storage format.

    Fields:
        name: the dtype name calc accepts ("q4_K_M", "int4-g128", ...).
        bits_per_weight: bits per quantized element, scales and zeros included (q4_K_M: its q4_K part).
        block: how one block is stored, in words.
        compute_dtype: the dtype of the matmul (weight-only formats dequantize to bf16; fp8-block runs
            on fp8 tensor cores).
        keeps: which tensors the recipe leaves unquantized.
        source: where the layout comes from.
    """

    name: str
    bits_per_weight: float
    block: str
    compute_dtype: str
    keeps: str
    source: str


def _group_format(bits: int, group: int) -> QuantFormat:
    return QuantFormat(
        f"int{bits}-g{group}", bits + (16 + bits) / group,
        f"{bits}-bit integers, one fp16 scale and one {bits}-bit zero point per {group} weights along the input",
        "bf16", "embeddings, output head, norms, MoE router in fp16",
        "AutoGPTQ/AutoAWQ packing: qweight int32 (32/b weights), qzeros int32 per group, scales fp16 per group")


def _symmetric_group_format(bits: int, group: int) -> QuantFormat:
    return QuantFormat(
        f"int{bits}-g{group}-sym", bits + 16 / group,
        f"{bits}-bit integers symmetric about zero, one 16-bit scale per {group} weights along the input, "
        "no zero point",
        "bf16", "MoE: everything but the routed experts in bf16 (attention, shared experts, dense MLPs, router, "
        "embeddings, head); dense: embeddings, output head, norms in bf16",
        "compressed-tensors pack-quantized (weight_packed int32, weight_scale per group in the model's dtype; "
        "weight_zero_point only when symmetric is false); moonshotai/Kimi-K2.5 config.json: int 4-bit, group 32, "
        "symmetric, ignore lm_head, self_attn, shared_experts and the dense MLPs")


FORMATS: dict[str, QuantFormat] = {
    "int4-g128": _group_format(4, 128),
    "int8-g128": _group_format(8, 128),
    "int4-g32-sym": _symmetric_group_format(4, 32),
    "q8_0": QuantFormat("q8_0", Q8_0_BITS, "32 int8 + one fp16 scale (34 bytes)", "bf16",
                        "norms and MoE router in f32", "ggml block_q8_0 (ggml-common.h)"),
    "q4_0": QuantFormat("q4_0", Q4_0_BITS, "32 x 4-bit + one fp16 scale (18 bytes)", "bf16",
                        "output head in q6_K; norms and MoE router in f32", "ggml block_q4_0; llama.cpp llama-quant.cpp"),
    "q4_K_M": QuantFormat("q4_K_M", Q4_K_BITS, "q4_K super-blocks of 256 (144 bytes); half of attn_v and ffn_down "
                          "and the output head in q6_K (210 bytes per 256)", "bf16",
                          "norms and MoE router in f32", "ggml block_q4_K/block_q6_K; llama.cpp use_more_bits"),
    "fp8-block": QuantFormat("fp8-block", 8 + 32 / (128 * 128), "fp8 e4m3, one fp32 scale per 128 x 128 block",
                             "fp8", "embeddings, output head, norms, MoE router in bf16",
                             "DeepSeek-V3 technical report, section 3.3.1 (weight_block_size [128, 128])"),
    "mxfp4": QuantFormat("mxfp4", 4 + 8 / 32, "32 x fp4 e2m1 + one e8m0 power-of-two scale (17 bytes)", "bf16",
                         "MoE: everything but the routed experts (gpt-oss: attention, router, embeddings, head) in "
                         "bf16; dense: embeddings, head, norms", "OCP Microscaling Formats (MX) v1.0, section 5.2"),
    "nvfp4": QuantFormat("nvfp4", 4 + 8 / 16, "16 x fp4 e2m1 + one fp8 e4m3 scale (9 bytes), one fp32 scale per "
                         "tensor", "bf16", "embeddings, output head, norms, MoE router in bf16",
                         "NVIDIA NVFP4 (Blackwell); TensorRT Model Optimizer checkpoints"),
    "mxfp4-fp8": QuantFormat("mxfp4-fp8", 4 + 8 / 32, "routed experts: 32 x fp4 e2m1 + one e8m0 scale (17 bytes); every "
                             "other linear layer fp8 e4m3 with one e8m0 (ue8m0) scale per 128 x 128 block", "fp8",
                             "embeddings, output head, norms, MoE router in bf16",
                             "DeepSeek-V4 config.json (expert_dtype fp4; quantization_config fp8, weight_block_size "
                             "[128, 128], scale_fmt ue8m0); inference/model.py Linear: fp4 weights with one "
                             "float8_e8m0fnu scale per 32 along the input, fp8 with one per 128 x 128 block"),
    "nvfp4-fp8": QuantFormat("nvfp4-fp8", 4 + 8 / 16, "routed experts: 16 x fp4 e2m1 + one fp8 e4m3 scale (9 bytes); "
                             "every other linear layer fp8 e4m3 with one scale per 128 x 128 block", "fp8",
                             "embeddings, output head, norms, MoE router in bf16",
                             "nvidia/DeepSeek-V4-Pro-NVFP4 config.json: ModelOpt MIXED_PRECISION, moe_quant_algo "
                             "NVFP4 (group 16) on the routed experts; attention, shared experts, head and MTP "
                             "ignored, left in the checkpoint's fp8 blocks"),
}
#: The fp8 part of the mixed formats: e4m3 with one e8m0 byte per 128 x 128 block (DeepSeek-V4's scale_fmt ue8m0).
FP8_UE8M0_BLOCK_BITS = 8 + 8 / (128 * 128)
#: Mixed formats: their routed experts in the format's own 4-bit blocks, the other linear layers in fp8 blocks.
MIXED_EXPERT_FORMATS = ("mxfp4-fp8", "nvfp4-fp8")
_GROUP_NAME = re.compile(r"^int(4|8)-g(32|64|128|256)$")
#: The symmetric group formats: "int4-g32-sym" (no zero point; compressed-tensors with ``symmetric: true``).
_SYMMETRIC_GROUP_NAME = re.compile(r"^int(4|8)-g(32|64|128|256)-sym$")


def quant_format(name: str) -> QuantFormat | None:
    """The block format called ``name`` (case-insensitive; int4/int8 at any group of 32, 64, 128 or 256
    as "int4-g64", with a zero point per group, or symmetric as "int4-g64-sym", without), or None for a plain
    dtype or an unknown name."""
    if not isinstance(name, str):
        return None
    key = name.strip()
    for k, f in FORMATS.items():
        if k.lower() == key.lower():
            return f
    m = _GROUP_NAME.match(key.lower())
    if m:
        return _group_format(int(m.group(1)), int(m.group(2)))
    m = _SYMMETRIC_GROUP_NAME.match(key.lower())
    return _symmetric_group_format(int(m.group(1)), int(m.group(2))) if m else None


def is_symmetric_group(name) -> bool:
    """True for a symmetric group format ("int4-g32-sym": no zero point; on a mixture of experts only the routed
    experts quantized, see ``calc.quant``)."""
    return isinstance(name, str) and bool(_SYMMETRIC_GROUP_NAME.match(name.strip().lower()))


def data_set_format(name):
    """The weight format as the published measurements spell it (calc/data/serving_*.csv, ``weight_dtype``): by
    bits and group alone, so a symmetric group format is its zero-point sibling's label ("int4-g32-sym" ->
    "int4-g32": the data set's rows of Kimi-K2-Thinking and Kimi-K2.5, whose checkpoints store symmetric 4-bit
    integers per 32 on the routed experts, are labelled "int4-g32"); any other name unchanged."""
    return name.strip()[:-len("-sym")] if is_symmetric_group(name) else name


def format_names() -> list[str]:
    """Every block format name, in the table's order."""
    return list(FORMATS)


def bits_per_element(name: str) -> float | None:
    """Bits per element of a plain dtype or a block format (scales included); None if unknown."""
    if isinstance(name, str) and name.lower() in PLAIN_BITS:
        return PLAIN_BITS[name.lower()]
    f = quant_format(name)
    return None if f is None else f.bits_per_weight


#: The cache formats of the serving engines, and where their scales live (bytes per token counted by calc):
#: - "bf16"/"fp16"/"fp32": no scales.
#: - "fp8" (vLLM ``--kv-cache-dtype fp8``/``fp8_e4m3``/``fp8_e5m2``, SGLang ``fp8_e4m3``/``fp8_e5m2``,
#:   TensorRT-LLM FP8 KV): one k_scale and one v_scale per layer (per tensor; vLLM also reads per-head scales
#:   from llm-compressor checkpoints): constants of the model, 0 bytes per token, 1 byte per element.
#: - "fp8_ds_mla" (vLLM's name; FlashMLA's fp8 KV format for DeepSeek MLA, per token and layer): the 512 latent
#:   elements in fp8 e4m3 + one fp32 scale per 128 of them (per token, per block of 128) + the 64 RoPE
#:   dimensions in bf16: 512 + 16 + 128 = 656 bytes (FlashMLA README, "FP8 KV cache"; vLLM
#:   ``kv_cache_dtype="fp8_ds_mla"``). MLA models with the latent cache only.
#: - "q8_0"/"q4_0" (llama.cpp ``--cache-type-k/-v``): blocks of 32 elements with one fp16 scale (per block),
#:   counted: 34 and 18 bytes per 32.
#: - "int8"/"int4": the course's plain sizes (no scales); LMDeploy's int8/int4 caches add a scale and zero
#:   point per token and head, not counted here.
#: - "mxfp4"/"nvfp4": 4-bit block caches (SGLang ``fp4_e2m1``, TensorRT-LLM NVFP4 KV), one scale per 32 / 16
#:   elements, counted.
KV_CACHE_ONLY_FORMATS = ("fp8_ds_mla",)

#: Weight-only formats no serving engine stores a KV cache in (GGUF k-quants, GPTQ/AWQ and symmetric integer groups,
#: DeepSeek's 128 x 128 weight blocks, the mixed fp4-expert formats): refused as a cache dtype.
WEIGHT_ONLY_FORMATS = ("q4_K_M", "int4-g*", "int8-g*", "int4-g*-sym", "int8-g*-sym", "fp8-block",
                       *MIXED_EXPERT_FORMATS)


def kv_dtype_bytes(kv_dtype) -> float:
    """Bytes per cached element of ``kv_dtype``, refusing what no engine stores a cache in.

    A plain dtype or a cache format of the list above; "fp8_ds_mla": 1 (its latent elements; its
    per-token bytes, 656 for DeepSeek, come from ``calc.layers.kv_bytes_per_token_per_layer``).

    Raises:
        ValueError: a weight-only format (q4_K_M, int4-g128, ..., fp8-block), with the reason, or an
            unknown name.
    """
    if isinstance(kv_dtype, str) and kv_dtype in KV_CACHE_ONLY_FORMATS:
        return 1.0
    f = quant_format(kv_dtype) if isinstance(kv_dtype, str) else None
    if f is not None and (f.name in ("q4_K_M", "fp8-block", *MIXED_EXPERT_FORMATS) or _GROUP_NAME.match(f.name.lower())
                          or _SYMMETRIC_GROUP_NAME.match(f.name.lower())):
        raise ValueError(f"{f.name} is a weight-only format: no serving engine stores a KV cache in it (vLLM and "
                         "SGLang keep the cache in bf16/fp16 or fp8, llama.cpp in f16, q8_0, q4_0 and a few more "
                         "blocks, never k-quants, GPTQ/AWQ or symmetric integer groups or 128 x 128 weight blocks); "
                         "choose bf16, fp8, q8_0 or q4_0 for the cache")
    try:
        return dtype_bytes(kv_dtype, "kv_dtype")
    except ValueError:
        valid = ", ".join([*DTYPE_BYTES, "q8_0", "q4_0", "mxfp4", "nvfp4", *KV_CACHE_ONLY_FORMATS])
        raise ValueError(f"kv_dtype must be one of {valid} (the cache formats); got {kv_dtype!r}") from None

