"""The decode and prefill step split into its operators, each on the roofline (LLM-Viewer's view).

One step of a decoder-only transformer runs, per layer, the QKV projection, attention over the cache,
the output projection and the MLP (or the router and the experts), and once per step the input
embedding lookup and the LM head. Each operator moves its own bytes (its weights; attention: the KV
cache) and does its own FLOPs (2 per weight and token; attention: ``calc.roofline.attention_flops``),
so each has its own arithmetic intensity and its own side of the ridge P/W (Williams et al. 2009; Yuan
et al. 2024, "LLM Inference Unveiled: Survey and Roofline Model Insights", section 3, LLM-Viewer).

The split is exact where the step is: per-operator weight bytes add up to
``calc.memory.weight_bytes_read`` (block formats group by group, MoE experts the batch touches, the
embedding convention of ``embedding``), attention's bytes are the step's KV-cache bytes, and the matmul
FLOPs add up to ``2 * matmul_params * B * T``. Attention FLOPs are added on top: the prefill step counts
them, the decode napkin leaves them out (``decode_step_time``), so in decode the operators' FLOPs exceed
the step's by exactly ``attention_flops(model, 1, B, past_len=S - 1)``. The parameter split between the
attention projections and the MLP is ``calc.quant.tensor_groups``' (MLA: q, the latent down- and
up-projections and o counted from the config, without a low-rank q; the MLP is what is left).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .checks import check_positive_int
from .hardware import Accelerator
from .kv import decode_kv_read_bytes_array, kv_cache_bytes_array
from .memory import check_embedding, expected_experts_touched, input_embedding_params, lookup_params_not_read
from .models import ModelConfig
from .layers import STATE_LAYER_KINDS, has_compressed_layers, owns_cache, layer_params
from .quant import tensor_groups, weight_bytes_by_group
from .roofline import attention_flops, check_logits, head_flops_skipped, matmul_params

#: The operators in the order a step runs them.
OPERATORS = ("embedding", "qkv_projection", "attention", "output_projection", "mlp", "norms", "lm_head")
LABELS = {"embedding": "embedding lookup", "qkv_projection": "QKV projection", "attention": "attention over the cache",
          "output_projection": "output projection", "mlp": "MLP", "norms": "norms", "lm_head": "LM head"}


def _attention_params(model: ModelConfig, rest: float) -> tuple[float, float]:
    """(QKV projection, output projection) parameters over the layers that attend, at most ``rest``.

    Layer by layer from ``calc.layers.layer_params``: a softmax attention layer D*(N + 2K)*H + N*H*D (Gemma 4's
    global layers their own K and H, and D*(N + K)*H where the K projection serves as V; MLA:
    q, the latent down- and up-projections, o); a layer that borrows another's cache has no K and V
    projections (D*N*H); a lightning layer its fused qkv_proj 3*D*N*H and out_proj; Mamba, Gated DeltaNet
    and MLP-only layers none (their projections fall in the MLP row).
    """
    d, n = model.d_model, model.n_heads
    if model.attention == "mla":
        rope = model.qk_rope_head_dim or 0
        nope = model.qk_nope_head_dim or (model.head_dim - rope)
        h_v = model.v_head_dim or model.head_dim
        c = model.kv_lora_rank or 0
        full_qkv, q_only, out = d * n * (nope + rope) + d * (c + rope) + c * n * (nope + h_v), d * n * (nope + rope), n * h_v * d
    qkv = o = 0.0
    for i, p in enumerate(layer_params(model)):
        if model.attention != "mla":  # Gemma 4: its full layers' own widths, and no V projection where K is V
            h, k = model.head_dim_of(p.kind), model.kv_heads_of(p.kind)
            kv_proj = 1 if p.kind == "full" and model.global_k_eq_v else 2
            full_qkv, q_only, out = d * (n + kv_proj * k) * h, d * n * h, n * h * d
        if p.kind in ("full", "sliding", "chunked", "parallel_mamba2", "csa", "hca", "sparse"):
            owns_kv = (p.attention_v or model.attention == "mla" or (p.kind == "full" and model.global_k_eq_v))
            qkv += full_qkv if owns_kv and owns_cache(model, i) else q_only
            o += out
        elif p.kind == "lightning":
            qkv += 3 * d * n * model.head_dim
            o += n * model.head_dim * d
    scale = min(1.0, rest / (qkv + o)) if qkv + o else 0.0
    return qkv * scale, o * scale


def step_operators(model: ModelConfig, accelerator: Accelerator, phase: str = "decode", batch: int = 1,
                   context_len: int = 8192, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                   embedding: str = "gather", sliding: str = "cap", mla: str = "latent",
                   utilisation=None, logits: str = "all") -> pd.DataFrame:
    """One decode or prefill step, operator by operator, each with its own roofline time.

    Args:
        phase: "decode" (B sequences, one new token each, ``context_len`` cached tokens) or "prefill"
            (B prompts of ``context_len`` tokens).
        embedding: "gather" (the lookup reads B*T rows, no FLOPs) or "table" (the course's napkin: the
            whole table read, 2 FLOPs per parameter), as ``decode_step_time``.
        logits: prefill only: the LM head on every prompt token ("all", the course) or on each prompt's
            last one ("last", engines), as ``prefill_time``.

    Returns:
        DataFrame, one row per operator of ``OPERATORS`` (the order a step runs them; norms: the RMSNorm/
        LayerNorm weights, which the napkin counts at 2 FLOPs per parameter like any other): operator,
        label, params (weights the step reads for it), flops (FLOP), bytes (weights read; attention: KV
        cache read in decode, written in prefill), intensity_flop_per_byte, memory_s (bytes / W),
        compute_s (flops / P), time_s (max of the two: the operator alone on the roofline), bound
        ("memory"/"compute"), share_of_time (time_s over the sum of time_s); with a ``utilisation``
        (``calc.efficiency.Utilisation``) also estimate_s = max(memory_s / MBU, compute_s / MFU), an estimate.

    Raises:
        ValueError: unknown phase, dtype or embedding mode; non-positive batch or context_len.
    """
    if phase not in ("decode", "prefill"):
        raise ValueError(f"phase must be 'decode' or 'prefill', got {phase!r}")
    b = check_positive_int(batch, "batch")
    s = check_positive_int(context_len, "context_len")
    check_embedding(embedding)
    check_logits(logits)
    t = 1 if phase == "decode" else s
    n_tok = float(b * t)

    groups = tensor_groups(model)
    gbytes = weight_bytes_by_group(model, weight_dtype)
    per = {g: (gbytes[g] / p if p else 0.0) for g, p in groups.items()}       # bytes per parameter, by group
    rest = groups["attention_v"] + groups["ffn_down"] + groups["linear"]       # projections + dense MLP
    # DeepSeek-V4: the MLA formula overstates its low-rank projections; the shared experts stay in the MLP row
    mlp_known = sum(p.ffn_down + p.ffn_up for p in layer_params(model)) if has_compressed_layers(model) else 0.0
    qkv_p, out_p = _attention_params(model, rest - mlp_known)
    # Byte rates: attention_v (V projection) at its own width, the rest of the projections at "linear"'s.
    v_p = min(groups["attention_v"], qkv_p)
    qkv_b = v_p * per["attention_v"] + (qkv_p - v_p) * per["linear"]
    out_b = out_p * per["linear"]
    dense_mlp_p = rest - qkv_p - out_p
    dense_mlp_b = gbytes["attention_v"] + gbytes["ffn_down"] + gbytes["linear"] - qkv_b - out_b
    routed_p = groups["experts"] + groups["experts_down"]
    touched = (expected_experts_touched(model.n_experts, model.n_experts_per_token, n_tok) / model.n_experts
               if routed_p else 0.0)
    mlp_b = dense_mlp_b + gbytes["router"] + (gbytes["experts"] + gbytes["experts_down"]) * touched
    mlp_params_read = dense_mlp_p + groups["router"] + routed_p * touched

    lookup = float(input_embedding_params(model))      # untied token table + learned position table
    emb_p = lookup - (lookup_params_not_read(model, n_tok) if embedding == "gather" else 0.0)
    emb_b = emb_p * per["embedding"]
    if not model.tie_word_embeddings:
        head_p, head_b = groups["head"], gbytes["head"]
    else:  # one matrix: read once, as the head (calc.memory.weight_bytes_read)
        head_p = float(model.vocab_size * model.d_model)
        head_b = head_p * per["embedding"]

    if phase == "decode":
        kv_b = float(decode_kv_read_bytes_array(model, s, b, kv_dtype, sliding, mla))
        attn_f = attention_flops(model, 1, b, past_len=s - 1)
    else:
        kv_b = float(kv_cache_bytes_array(model, s, b, kv_dtype, sliding, mla))
        attn_f = attention_flops(model, s, b)

    # FLOPs: 2 per parameter a token multiplies by; the MLP takes what the others leave of matmul_params
    # (its active experts), so the matmul FLOPs add up to the step's exactly.
    emb_f = 2.0 * n_tok * lookup if embedding == "table" else 0.0
    qkv_f, out_f, norm_f, head_f = (2.0 * n_tok * p for p in (qkv_p, out_p, groups["norms"], head_p))
    mlp_f = 2.0 * n_tok * matmul_params(model, embedding) - emb_f - qkv_f - out_f - norm_f - head_f
    if phase == "prefill":
        head_f -= head_flops_skipped(model, t, b, logits)

    rows = {
        "embedding": (emb_p, emb_f, emb_b),
        "qkv_projection": (qkv_p, qkv_f, qkv_b),
        "attention": (0.0, attn_f, kv_b),
        "output_projection": (out_p, out_f, out_b),
        "mlp": (mlp_params_read, mlp_f, mlp_b),
        "norms": (groups["norms"], norm_f, gbytes["norms"]),
        "lm_head": (head_p, head_f, head_b),
    }
    df = pd.DataFrame([{"operator": op, "label": LABELS[op], "params": p, "flops": f, "bytes": by}
                       for op, (p, f, by) in rows.items()])
    if model.is_moe:
        df.loc[df["operator"] == "mlp", "label"] = "router and experts"
    if any(k in STATE_LAYER_KINDS for k in model.layer_kinds):  # their in/out projections are counted here
        df.loc[df["operator"] == "mlp", "label"] += " + Mamba / linear-attention mixers"
    w, peak = accelerator.bandwidth_bytes_per_s, accelerator.compute_flops(weight_dtype)
    df["intensity_flop_per_byte"] = np.where(df["bytes"] > 0, df["flops"] / df["bytes"].where(df["bytes"] > 0, 1),
                                             np.inf)
    df["memory_s"] = df["bytes"] / w
    df["compute_s"] = df["flops"] / peak
    df["time_s"] = np.maximum(df["memory_s"], df["compute_s"])
    df["bound"] = np.where(df["compute_s"] > df["memory_s"], "compute", "memory")
    total = df["time_s"].sum()
    df["share_of_time"] = df["time_s"] / total if total > 0 else 0.0
    if utilisation is not None:
        df["estimate_s"] = np.maximum(df["memory_s"] / utilisation.memory_bandwidth,
                                      df["compute_s"] / utilisation.compute)
    return df
