"""The weight format a checkpoint is stored in, read from its config.json's ``quantization_config``
(AWQ, GPTQ, fp8, mxfp4, compressed-tensors, modelopt)."""
from __future__ import annotations

# == The checkpoint's own weight format (quantization_config) ====================================

_GROUPS = (32, 64, 128, 256)


def _group_name(bits, group) -> str | None:
    """int4/int8 at a group size calc models ("int4-g128"); per-channel (group -1 or None): plain "int4"."""
    if bits not in (4, 8):
        return None
    if group in (None, -1, 0):
        return f"int{bits}"
    return f"int{bits}-g{group}" if group in _GROUPS else None


def _compressed_tensors_format(q: dict) -> tuple[str | None, str]:
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
          as AWQ/GPTQ.
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
        return _compressed_tensors_format(q)
    if method == "modelopt":
        algo = str(q.get("quant_algo", "")).upper()
        if algo == "MIXED_PRECISION" and isinstance(q.get("quantized_layers"), dict):
            return _modelopt_mixed(q["quantized_layers"])
        return {"FP8": "fp8", "NVFP4": "nvfp4"}.get(algo), f"quant_method modelopt, quant_algo {algo}"
    return None, f"quant_method {method or 'unnamed'}"
