"""The weight format a checkpoint is stored in, read from its config.json's ``quantization_config``
(AWQ, GPTQ, fp8, mxfp4, compressed-tensors, modelopt), or from the precision tag of its name (``-FP8``, ``-NVFP4``)."""
from __future__ import annotations

import re

from .config_shapes import _KEYS

# == The checkpoint's own weight format (quantization_config) ====================================

_GROUPS = (32, 64, 128, 256)


def _group_name(bits, group) -> str | None:
    """int4/int8 at a group size calc models ("int4-g128"); per-channel (group -1 or None): plain "int4"."""
    if bits not in (4, 8):
        return None
    if group in (None, -1, 0):
        return f"int{bits}"
    return f"int{bits}-g{group}" if group in _GROUPS else None


def _has_routed_experts(config: dict) -> bool:
    """Whether a config.json (or its ``text_config``) declares routed experts (``num_local_experts``, ``num_experts``,
    ``n_routed_experts``: more than one)."""
    for cfg in (config, config.get("text_config")):
        if isinstance(cfg, dict) and any(isinstance(cfg.get(k), int) and not isinstance(cfg.get(k), bool)
                                         and cfg[k] > 1 for k in _KEYS["n_experts"]):
            return True
    return False


def _symmetric_reading(weights: dict, q: dict, config: dict, bits, group) -> tuple[str | None, str]:
    """compressed-tensors int weights in groups with ``symmetric: true`` (no ``weight_zero_point``): (calc's
    symmetric group format, what else the reading says) where its recipe matches the ``ignore`` list (a mixture of
    experts with attention left out, as Kimi-K2-Thinking and Kimi-K2.5 ship; a dense model with attention
    quantized), else (None, why) and the caller reads it with a zero point, as before."""
    if weights.get("symmetric") is not True or bits not in (4, 8) or group not in _GROUPS:
        return None, ""
    attention_kept = any("attn" in str(i) for i in (q.get("ignore") or []))
    if attention_kept == _has_routed_experts(config):
        return f"int{bits}-g{group}-sym", ", symmetric (no zero point)"
    return None, (", symmetric, read with a zero point per group: the symmetric format keeps a mixture of experts' "
                  "attention in bf16 and quantizes a dense model's, and this file's ignore list does the other")


def _compressed_tensors_format(q: dict, config: dict) -> tuple[str | None, str]:
    groups = q.get("config_groups")
    weights = None
    if isinstance(groups, dict):
        for g in groups.values():
            if isinstance(g, dict) and isinstance(g.get("weights"), dict):
                weights = g["weights"]
                break
    if weights is None:
        return None, "compressed-tensors without a weights scheme"
    bits, kind = weights.get("num_bits"), weights.get("type")
    strategy, group = weights.get("strategy"), weights.get("group_size")
    said = f"compressed-tensors, {kind} {bits}-bit weights, strategy {strategy}"
    if group not in (None, -1):
        said += f", group size {group}"
    if kind == "float" and bits == 8:
        block = weights.get("block_structure")
        return ("fp8-block" if strategy == "block" and list(block or []) == [128, 128] else "fp8"), said
    if kind == "float" and bits == 4 and group == 16:
        return "nvfp4", said
    if kind == "int":
        if strategy == "group":
            sym, words = _symmetric_reading(weights, q, config, bits, group)
            if sym:
                return sym, said + words
            said += words
        return _group_name(bits, group if strategy == "group" else None), said
    return None, said


def _modelopt_mixed(layers: dict) -> tuple[str | None, str]:
    """ModelOpt's MIXED_PRECISION: one ``quant_algo`` per layer. Routed experts (``.experts.`` in the name) all in
    NVFP4 and every other quantized layer in FP8 or MXFP8 (nvidia/MiniMax-M3-NVFP4: attention, dense MLP, shared
    expert and indexer projections in MXFP8) -> "nvfp4-fp8"; any other mixture -> None."""
    algos: dict[str, set] = {"experts": set(), "other": set()}
    for name, spec in layers.items():
        algo = str(spec.get("quant_algo", "")).upper() if isinstance(spec, dict) else ""
        algos["experts" if ".experts." in str(name) else "other"].add(algo)
    said = "quant_method modelopt, quant_algo MIXED_PRECISION"
    if algos["experts"] == {"NVFP4"} and algos["other"] <= {"FP8", "MXFP8"}:
        return "nvfp4-fp8", said + f", routed experts NVFP4, other layers {'/'.join(sorted(algos['other'])) or 'none'}"
    return None, said


def checkpoint_weight_format(config) -> tuple[str | None, str]:
    """The weight format a checkpoint is stored in, read from its config.json's ``quantization_config``.

    Rules (the keys as transformers' quantizers write them):
        - ``quant_method`` "mxfp4" (gpt-oss) -> "mxfp4"; "fp8" with ``weight_block_size`` [128, 128]
          (DeepSeek-V3, Kimi-K2) -> "fp8-block", other fp8 -> "fp8"; DeepSeek-V4's fp8 blocks with
          ``expert_dtype`` "fp4" (its MXFP4 routed experts) -> "mxfp4-fp8", with ModelOpt's
          ``moe_quant_algo`` "NVFP4" (nvidia/DeepSeek-V4-Pro-NVFP4) -> "nvfp4-fp8".
        - "awq" (``bits``/``w_bit``, ``group_size``/``q_group_size``) and "gptq" (``bits``, ``group_size``)
          -> "int4-g128" and the like (groups of 32, 64, 128, 256); group -1 (one scale per output channel)
          -> plain "int4"/"int8".
        - "compressed-tensors" (llm-compressor): the first config group's weights: float 8-bit -> "fp8"
          ("fp8-block" with a 128 x 128 block), float 4-bit in groups of 16 -> "nvfp4", int 4/8-bit ->
          as AWQ/GPTQ, but with ``symmetric: true`` in groups -> "int4-g32-sym" and the like (no zero point:
          compressed-tensors' pack-quantized stores ``weight_zero_point`` only when symmetric is false), where the
          ``ignore`` list fits that format's recipe (``calc.quant``): a mixture of experts whose attention is
          ignored (moonshotai/Kimi-K2-Thinking and Kimi-K2.5: int 4-bit, group 32, symmetric; ignore lm_head,
          self_attn, shared_experts, the dense MLPs -> "int4-g32-sym"), or a dense model whose attention is not.
          Otherwise, and where ``symmetric`` is absent, read with a zero point per group ("int4-g32"), as before.
        - "modelopt" (TensorRT Model Optimizer): ``quant_algo`` "FP8" -> "fp8", "NVFP4" -> "nvfp4";
          "MIXED_PRECISION" with NVFP4 routed experts and FP8 / MXFP8 elsewhere -> "nvfp4-fp8" (``_modelopt_mixed``).
        - No ``quantization_config`` (a 16-bit checkpoint): (None, "").

    Args:
        config: the parsed config.json (dict); a multimodal file's ``text_config`` is looked into too.

    Returns:
        (format, said): a dtype name ``calc.dtypes.dtype_bytes`` accepts, or None when there is no
        quantization_config or its scheme is one calc does not model (bitsandbytes NF4, 3-bit GPTQ...);
        ``said`` names what the file declares, in words, for the page to quote ("" when nothing).
    """
    if not isinstance(config, dict):
        return None, ""
    q = config.get("quantization_config")
    if not isinstance(q, dict) and isinstance(config.get("text_config"), dict):
        q = config["text_config"].get("quantization_config")
    if not isinstance(q, dict):
        return None, ""
    method = str(q.get("quant_method", "")).lower()
    if method == "mxfp4":
        return "mxfp4", "quant_method mxfp4"
    if method == "fp8":
        block = q.get("weight_block_size")
        if isinstance(block, list) and list(block) == [128, 128]:
            said = "quant_method fp8, weight_block_size [128, 128]"
            if str(q.get("moe_quant_algo", "")).upper() == "NVFP4":
                return "nvfp4-fp8", said + ", routed experts in NVFP4 (moe_quant_algo NVFP4)"
            if str(config.get("expert_dtype", "")).lower() == "fp4":
                return "mxfp4-fp8", said + ", routed experts in fp4 (expert_dtype fp4)"
            return "fp8-block", said
        return "fp8", "quant_method fp8" + (f", weight_block_size {block}" if block else "")
    if method in ("awq", "gptq"):
        bits = q.get("bits", q.get("w_bit"))
        group = q.get("group_size", q.get("q_group_size"))
        return _group_name(bits, group), f"quant_method {method}, {bits}-bit, group size {group}"
    if method == "compressed-tensors":
        return _compressed_tensors_format(q, config)
    if method == "modelopt":
        algo = str(q.get("quant_algo", "")).upper()
        if algo == "MIXED_PRECISION" and isinstance(q.get("quantized_layers"), dict):
            return _modelopt_mixed(q["quantized_layers"])
        return {"FP8": "fp8", "NVFP4": "nvfp4"}.get(algo), f"quant_method modelopt, quant_algo {algo}"
    return None, f"quant_method {method or 'unnamed'}"


# == The weight format a checkpoint's name says (its hub id's precision tag) ======================

#: Precision words of a checkpoint's name that fix a weight format of calc's on their own: word -> (format, what the
#: name says, in words). Sources in ``checkpoint_name_format``.
_NAME_WORDS = {
    "bf16": ("bf16", "BF16"),
    "fp16": ("fp16", "FP16"),
    "fp8": ("fp8", "FP8"),
    "nvfp4": ("nvfp4", "NVFP4"),
    "mxfp4": ("mxfp4", "MXFP4"),
    "mxfp8": ("fp8", "MXFP8, read as fp8 (its e8m0 scale per 32 weights, 0.25 bit each, not counted)"),
    "awq": ("int4-g128", "AWQ, read as 4-bit integers in groups of 128 (AutoAWQ's defaults)"),
    "w4a16": ("int4-g128", "W4A16 (llm-compressor's scheme: 4-bit integers in groups of 128)"),
    "w4a8": ("int4-g128", "W4A8 (llm-compressor's scheme: 4-bit integer weights in groups of 128)"),
    "w8a16": ("int8-g128", "W8A16 (llm-compressor's scheme: 8-bit integers in groups of 128)"),
    "w8a8": ("int8", "W8A8 (llm-compressor's scheme: 8-bit integers, one scale per output channel)"),
    "int8": ("int8", "INT8 (llm-compressor's name for W8A8: 8-bit integers, one scale per output channel)"),
}
#: Precision words that name no weight format of calc's on their own: word -> why (unless another word fixes it).
_NAME_UNFIXED = {
    "int4": "INT4 without its group size (one scale per channel, or per 32, 64 or 128 weights)",
    "fp4": "FP4 without its block format (NVFP4 or MXFP4)",
}
#: Every precision word a name is read for ("gptq": read with the bits of an INT4/INT8 word beside it).
_PRECISION_WORDS = frozenset(_NAME_WORDS) | frozenset(_NAME_UNFIXED) | {"gptq"}
#: Method words whose grouping an INT4/INT8 word beside them completes ("AWQ-INT4", "GPTQ-Int8", "W8A8-INT8").
_GROUPED_METHODS = {"awq", "gptq", "w4a16", "w4a8", "w8a16", "w8a8"}


def _word_reading(word: str, words: set, org: str) -> tuple[str | None, str] | None:
    """What one precision word of a name says, given the name's other words and its organisation: (format, said),
    (None, why) where it fixes no format, or None where another word of the name carries it."""
    if word == "gptq":  # AutoGPTQ's defaults: bits 4, group_size 128; Qwen's GPTQ-Int4/-Int8 name their bits
        bits = 8 if "int8" in words else 4
        said = "GPTQ-Int8" if bits == 8 else "GPTQ-Int4" if "int4" in words else "GPTQ"
        return f"int{bits}-g128", said + f", read as {bits}-bit integers in groups of 128 (AutoGPTQ's default group)"
    if word == "int4" and words & _GROUPED_METHODS or word == "int8" and words & {"gptq", "w8a8"}:
        return None  # the method word beside it says the grouping
    if word == "w8a8" and "fp8" in words:
        return None  # W8A8-FP8: the bit widths of an fp8 scheme, which the FP8 word carries
    if word == "fp8" and "block" in words:
        return "fp8-block", "FP8 in 128 x 128 blocks"
    if word == "fp4" and org == "nvidia":  # ModelOpt's first FP4 exports (nvidia/DeepSeek-R1-FP4): NVFP4
        return "nvfp4", "FP4, an NVIDIA ModelOpt export: NVFP4"
    if word in _NAME_UNFIXED:
        return None, _NAME_UNFIXED[word]
    return _NAME_WORDS[word]


def checkpoint_name_format(name: str) -> tuple[str | None, str]:
    """The weight format a served checkpoint's name says ("zai-org/GLM-4.6-FP8" -> "fp8", "nvidia/GLM-4.7-NVFP4" ->
    "nvfp4"), read from the whole words of its name after any "org/" prefix (split at "-", "_", "." and spaces; a
    tag inside a word, "Qwen3-8B" or "MyFP8Model", names nothing).

    Rules, after the naming conventions of the organisations that publish such checkpoints:
        - "FP8", "NVFP4", "MXFP4", "BF16", "FP16": that format; "FP8" beside "block" -> "fp8-block" (fp8 with one
          scale per 128 x 128 block). NVIDIA's TensorRT Model Optimizer (ModelOpt) exports are named
          ``nvidia/<model>-FP8`` and ``-NVFP4`` (their hf_quant_config.json: quant_algo FP8, NVFP4), its first FP4
          ones ``-FP4`` (nvidia/DeepSeek-R1-FP4, nvidia/Llama-3.3-70B-Instruct-FP4: quant_algo NVFP4), so "FP4"
          in an ``nvidia/`` name -> "nvfp4"; elsewhere "FP4" alone may be NVFP4 or MXFP4 and names no format. Z.ai
          (zai-org/GLM-4.5-FP8, GLM-4.6-FP8) and Qwen (Qwen/Qwen3-8B-FP8) name fp8 checkpoints the same way.
        - "MXFP8" -> "fp8": calc has no MXFP8 (OCP Microscaling Formats v1.0: 32 e4m3 weights with one e8m0
          scale); its scales, 0.25 bit per weight, are not counted.
        - llm-compressor's scheme names (compressed-tensors' PRESET_SCHEMES, which RedHatAI and neuralmagic use
          in their names, "quantized.w4a16"): "W4A16" and "W4A8" -> "int4-g128" (4-bit integer weights in groups
          of 128), "W8A16" -> "int8-g128", "W8A8" and its alias "INT8" -> "int8" (one scale per output channel,
          which the plain name does not count); "W8A8" beside "FP8" is the fp8 scheme -> "fp8".
        - "AWQ" -> "int4-g128" (AutoAWQ's defaults w_bit 4, q_group_size 128); "GPTQ" -> "int4-g128", beside
          "Int8" -> "int8-g128" (AutoGPTQ's defaults bits 4, group_size 128; Qwen's -GPTQ-Int4 and -GPTQ-Int8 and
          hugging-quants' -AWQ-INT4 checkpoints use groups of 128). calc.dtypes.METHOD_ALIASES reads the method
          names so too.
        - "INT4" without a method word: the group size is not in the name, so no format.
        - Several words that disagree ("-BF16-FP8"): no format.
    ``calc.models.checkpoint_tag``, the serving estimates' reading of a measured row's checkpoint, takes the name's
    last tag whatever the rest says (every row needs some weights); this reading sets a format only where the name
    fixes one, and says why where it does not.

    Args:
        name: a checkpoint's id, with or without its organisation ("nvidia/GLM-4.7-NVFP4", "GLM-4.5-Air-FP8").

    Returns:
        (format, said): a weight format ``calc.dtypes.dtype_bytes`` accepts and the sidebar offers, or None where
        the name names no precision or none that fixes a format of calc's; ``said``: what the name says, in words,
        with why no format is read where none is ("" when the name has no precision word).

    Raises:
        Nothing: a name that is not a string is read as its ``str``.
    """
    org, _, base = str(name).strip().lower().rpartition("/")
    words = [w for w in re.split(r"[-_.\s]+", base) if w]
    tags = list(dict.fromkeys(w for w in words if w in _PRECISION_WORDS))
    readings = [r for r in (_word_reading(w, set(words), org.rsplit("/", 1)[-1]) for w in tags) if r is not None]
    if not readings:
        return None, ""
    unfixed = [said for fmt, said in readings if fmt is None]
    formats = list(dict.fromkeys(fmt for fmt, _ in readings if fmt is not None))
    if unfixed and not formats:
        return None, "; ".join(unfixed)
    if unfixed or len(formats) > 1:
        return None, "several precisions (" + "; ".join(said for _, said in readings) + ")"
    return formats[0], "; ".join(said for fmt, said in readings)
