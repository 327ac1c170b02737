"""Quantization formats as stored: block structure, real bits per weight, and which tensors stay 16-bit.

A weight format is more than a byte width. Block formats store a scale (and sometimes a zero point or
a second-level scale) per block of elements, and every recipe leaves some tensors unquantized: the
embeddings, the norms, often the output head, and in gpt-oss the attention and router. ``weight_bytes``
of ``calc.memory`` adds these up tensor group by tensor group (``weight_bytes_by_group``).

The plain names ("fp32", "bf16", "fp16", "fp8", "int8", "int4") keep the course's convention: every
parameter at that width, no scales (the inference course, week 11, step 4). The block formats:

==============  ======================================================  =================  ==========================
name            block as stored                                          bits per weight    source
==============  ======================================================  =================  ==========================
int4-g128       4-bit ints, fp16 scale + 4-bit zero per 128 (GPTQ/AWQ)  4 + 20/128 = 4.16  AutoGPTQ / AutoAWQ packing
int8-g128       8-bit ints, fp16 scale + 8-bit zero per 128             8 + 24/128 = 8.19  same layout at 8 bits
int4-g32-sym    4-bit ints symmetric about zero, one bf16 scale per 32,  4 + 16/32 = 4.5    compressed-tensors
                no zero point (Kimi-K2-Thinking, Kimi-K2.5)                                 pack-quantized
q8_0            32 int8 + one fp16 scale = 34 bytes                      8.5                ggml block_q8_0
q4_0            32 x 4-bit + one fp16 scale = 18 bytes                   4.5                ggml block_q4_0
q4_K_M          q4_K: 256 x 4-bit, 8 sub-block 6-bit scales/mins, fp16   4.5 (q6_K: 6.5625) ggml block_q4_K/q6_K,
                d + dmin = 144 bytes; half of attn_v and ffn_down and                       llama.cpp llama-quant.cpp
                the output head in q6_K (210 bytes per 256)
fp8-block       e4m3, one fp32 scale per 128 x 128 block                 8 + 32/16384       DeepSeek-V3 report 3.3.1
mxfp4           32 x e2m1 + one e8m0 scale = 17 bytes                    4.25               OCP MX spec v1.0 5.2
nvfp4           16 x e2m1 + one e4m3 scale, one fp32 per tensor          4.5                NVIDIA Blackwell NVFP4
mxfp4-fp8       routed experts as mxfp4; other linear layers e4m3 with   4.25 / 8 + 8/16384 DeepSeek-V4 config.json,
                one e8m0 scale per 128 x 128 block                                          inference/model.py
nvfp4-fp8       routed experts as nvfp4; others as in mxfp4-fp8          4.5 / 8 + 8/16384  nvidia/DeepSeek-V4-Pro-NVFP4
==============  ======================================================  =================  ==========================

Which tensors each recipe quantizes (the rest stays bf16/fp16, or f32 in GGUF):
- int*-g*, fp8-block, nvfp4: every linear layer (attention, MLP, experts); embeddings, output head,
  norms and MoE router in 16-bit (GPTQ/AWQ leave ``lm_head``; DeepSeek-V3 keeps embedding, head,
  norms and gate in bf16; ModelOpt's NVFP4 recipes ignore ``lm_head``).
- mxfp4: a mixture of experts quantizes only its routed experts, as gpt-oss ships (its
  ``modules_to_not_convert``: self_attn, mlp.router, embed_tokens, lm_head); a dense model every
  linear layer.
- int*-g*-sym (symmetric groups, compressed-tensors ``symmetric: true``; any group of 32-256, "int4-g64-sym"):
  as mxfp4, a mixture of experts quantizes only its routed experts, as Moonshot's INT4 checkpoints ship
  (Kimi-K2-Thinking, Kimi-K2.5: ``ignore`` lm_head, self_attn, shared_experts and the dense MLPs, which stay
  bf16); a dense model every linear layer (llm-compressor's W4A16 scheme, ``ignore`` lm_head).
- mxfp4-fp8, nvfp4-fp8 (DeepSeek-V4's release, "FP4 + FP8 mixed", and NVIDIA's NVFP4 copy of it): the routed
  experts in the 4-bit blocks, every other linear layer (attention, shared experts) in fp8 blocks with an e8m0
  scale; embeddings, head, norms and router in bf16, as fp8-block. The tensors DeepSeek-V4 keeps wider (its
  compressors' wkv and wgate and the indexer's weights_proj in bf16, the hyper-connections, attention sinks,
  compressor position biases and gate bias in fp32, the hash layers' int32 table: 0.88B of V4-Pro's parameters)
  are priced with the fp8 linear layers: 1.06 GB (0.12%) below the checkpoint.
- GGUF (llama.cpp ``llama_tensor_get_type``): the token embedding in the file's type, the output head
  in q6_K (q8_0 files keep q8_0), norms and the MoE router (``ffn_gate_inp``) in f32.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from .dtypes import (FORMATS, FP8_UE8M0_BLOCK_BITS, MIXED_EXPERT_FORMATS, PLAIN_BITS, Q4_K_BITS, Q6_K_BITS,
                     Q8_0_BITS, bits_per_element, is_symmetric_group, quant_format)
from .layers import layer_params

#: Tensor groups ``tensor_groups`` splits a model's parameters into.
GROUPS = ("embedding", "head", "norms", "router", "attention_v", "ffn_down", "linear", "experts_down", "experts")


def _use_more_bits(i: int, n: int) -> bool:
    """llama.cpp's rule for the layers of q4_K_M that get q6_K: the first and last eighth, and every
    third layer between (llama-quant.cpp, ``use_more_bits``)."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def tensor_groups(model) -> dict[str, float]:
    """A model's parameters split into the groups the recipes treat differently, layer by layer.

    Read from ``calc.layers.layer_params`` (the per-layer description: which layers attend, which hold
    Mamba / Gated DeltaNet / lightning mixers, which FFN each has): embedding V*D (for a tied model the
    one matrix that is also the head) plus a learned position table P*D (GPT-2's wpe); head V*D when untied, else 0; norms D per mixer and per FFN
    pre-norm plus the final D; router D*E per MoE layer; attention_v D*K*H per softmax attention layer
    that owns its cache (0 for MLA, shared-KV and lightning layers); ffn_down the down projection of
    every dense MLP and shared expert; experts_down the routed experts' down projections; experts the
    rest of the routed experts (gate and up); linear what remains of ``n_params`` (Q, K, O, MLA's
    latent projections, Mamba and Gated DeltaNet projections, the dense MLPs' gate and up, biases).
    The groups add up to ``n_params``; a hypothetical config whose ``n_params`` is below its shapes
    has every group scaled down in proportion (linear 0).

    Returns:
        dict group name (``GROUPS``) -> parameters (float).
    """
    d, v = model.d_model, model.vocab_size
    total = float(model.n_params)
    layers = layer_params(model)

    def summed(field: str) -> float:
        return float(sum(getattr(p, field) for p in layers))

    groups = {"embedding": float(v * d + (model.learned_positions or 0) * d), "head": 0.0 if model.tie_word_embeddings else float(v * d),
              "norms": summed("mixer_norm") + summed("ffn_norm") + d, "router": summed("router"),
              "attention_v": summed("attention_v"), "ffn_down": summed("ffn_down"),
              "experts_down": summed("experts_down"), "experts": summed("experts_up")}
    counted = sum(groups.values())
    if counted > total:  # shapes larger than the stated count: keep the proportions, add up to n_params
        groups = {g: p * total / counted for g, p in groups.items()}
        counted = total
    groups["linear"] = total - counted
    return {g: groups[g] for g in GROUPS}


def group_bits(model, weight_dtype: str) -> dict[str, float]:
    """Bits per parameter of each group of ``tensor_groups`` under ``weight_dtype`` (see the module
    docstring for each recipe).

    Raises:
        ValueError: unknown name.
    """
    plain = PLAIN_BITS.get(weight_dtype.lower()) if isinstance(weight_dtype, str) else None
    if plain is not None:
        return dict.fromkeys(GROUPS, plain)
    f = quant_format(weight_dtype)
    if f is None:
        raise ValueError(f"weight_dtype must be one of {', '.join([*PLAIN_BITS, *FORMATS])} "
                         f"(or int4/int8 with a group of 32-256, e.g. 'int4-g64', 'int4-g64-sym'); "
                         f"got {weight_dtype!r}")
    q = f.bits_per_weight
    if is_symmetric_group(f.name) and model.is_moe and tensor_groups(model)["experts"] > 0:
        return {**dict.fromkeys(GROUPS, 16.0), "experts": q, "experts_down": q}
    if f.name.startswith("int"):
        return {**dict.fromkeys(GROUPS, q), "embedding": 16.0, "head": 16.0, "norms": 16.0, "router": 16.0}
    if f.name in ("fp8-block", "nvfp4"):
        return {**dict.fromkeys(GROUPS, q), "embedding": 16.0, "head": 16.0, "norms": 16.0, "router": 16.0}
    if f.name in MIXED_EXPERT_FORMATS:
        fp8 = {**dict.fromkeys(GROUPS, FP8_UE8M0_BLOCK_BITS), "embedding": 16.0, "head": 16.0, "norms": 16.0,
               "router": 16.0}
        return {**fp8, "experts": q, "experts_down": q} if model.is_moe else fp8
    if f.name == "mxfp4":
        if model.is_moe and tensor_groups(model)["experts"] > 0:
            return {**dict.fromkeys(GROUPS, 16.0), "experts": q, "experts_down": q}
        return {**dict.fromkeys(GROUPS, q), "embedding": 16.0, "head": 16.0, "norms": 16.0, "router": 16.0}
    gguf = {**dict.fromkeys(GROUPS, q), "norms": 32.0, "router": 32.0}
    if f.name == "q8_0":
        return gguf
    gguf["head"] = Q6_K_BITS
    if model.tie_word_embeddings:  # no output.weight: the token embedding is the head (llama-quant.cpp)
        gguf["embedding"] = Q6_K_BITS
    if f.name == "q4_K_M":
        share = float(np.mean([_use_more_bits(i, model.n_layers) for i in range(model.n_layers)]))
        mixed = share * Q6_K_BITS + (1 - share) * Q4_K_BITS
        gguf["ffn_down"] = gguf["experts_down"] = mixed
        # Eight-expert models store attn_v in q8_0 (llama-quant.cpp: n_expert == 8).
        gguf["attention_v"] = Q8_0_BITS if model.n_experts == 8 else mixed
    return gguf


def weight_bytes_by_group(model, weight_dtype: str = "bf16") -> dict[str, float]:
    """Bytes of each tensor group (``tensor_groups``) stored in ``weight_dtype``.

    Raises:
        ValueError: unknown name.
    """
    bits = group_bits(model, weight_dtype)
    return {g: p * bits[g] / 8.0 for g, p in tensor_groups(model).items()}


def is_plain(weight_dtype: str) -> bool:
    """True for the plain dtypes, which store every parameter at one width (the course's convention)."""
    return isinstance(weight_dtype, str) and weight_dtype.lower() in PLAIN_BITS


def format_table(model, weight_dtypes=None) -> pd.DataFrame:
    """What each format really costs for ``model``.

    Returns:
        DataFrame, one row per format: format, bits_per_quantized_weight (the block's own cost),
        bits_per_param (all weight bytes x 8 / n_params, what stays 16-bit included), weights_bytes,
        compute_dtype, block, keeps, source.

    Raises:
        ValueError: an unknown name.
    """
    names = list(weight_dtypes) if weight_dtypes is not None else ["bf16", *FORMATS]
    rows = []
    for name in names:
        total = sum(weight_bytes_by_group(model, name).values())
        f = quant_format(name)
        rows.append(dict(
            format=name, bits_per_quantized_weight=bits_per_element(name),
            bits_per_param=total * 8.0 / model.n_params, weights_bytes=total,
            compute_dtype=f.compute_dtype if f else ("bf16" if name == "int4" else name),
            block=f.block if f else "plain: every parameter at this width, no scales",
            keeps=f.keeps if f else "nothing", source=f.source if f else "the inference course, week 11, step 4"))
    return pd.DataFrame(rows)
