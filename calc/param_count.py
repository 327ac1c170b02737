"""Counting a model's parameters from the shapes of its Hugging Face ``config.json`` alone.

The shapes are read by ``calc.config_shapes``; the counts reproduce the official totals of the presets
(tests/test_models.py, tests/test_published_totals.py).
"""
from __future__ import annotations

from .config_shapes import _GDN_FAMILIES, _bool_key, _first, _int_key, _present, _shapes


def _gpt2(s: dict, head: int) -> int:
    """GPT-2 style: wte + wpe + L*(2 LN, c_attn, c_proj, c_fc, c_proj, all with biases) + final LN."""
    cfg, d, L, N, K, H, V = s["cfg"], s["d"], s["L"], s["N"], s["K"], s["H"], s["V"]
    F = s["F_dense"]
    _, n_pos = _first(cfg, "max_context_len", required=False, default=1024)
    qkv = N * H + 2 * K * H
    layer = (2 * 2 * d + d * qkv + qkv + N * H * d + d + d * F + F + F * d + d)
    return V * d + n_pos * d + L * layer + 2 * d + head


def _falcon(s: dict, head: int) -> int:
    """Falcon: fused QKV (N + 2K)*H, dense, a 2-matrix MLP, one or two LayerNorms with bias per layer."""
    cfg, d, L, N, K, H, V = s["cfg"], s["d"], s["L"], s["N"], s["K"], s["H"], s["V"]
    F = s["F_dense"]
    bias = _bool_key(cfg, "bias", False)
    new_arch = _bool_key(cfg, "new_decoder_architecture", False)
    parallel = _bool_key(cfg, "parallel_attn", True)
    n_ln = 2 if (new_arch or not parallel) else 1
    qkv = (N + 2 * K) * H
    layer = n_ln * 2 * d + d * qkv + N * H * d + 2 * d * F
    if bias:
        layer += qkv + d + F + d
    return V * d + L * layer + 2 * d + head


def _attention(s: dict) -> int:
    """One attention block: MLA's low-rank projections (and DSA's indexer), or Q/K/V/O with the family's biases,
    output gate, QK-norm and sinks."""
    cfg, mt, d, N, K, H = s["cfg"], s["model_type"], s["d"], s["N"], s["K"], s["H"]
    if s["family"] == "mla":
        nope, rope, vh, kvl, ql = (s["qk_nope_head_dim"], s["qk_rope_head_dim"], s["v_head_dim"],
                                   s["kv_lora_rank"], s["q_lora_rank"])
        q = d * ql + ql + ql * N * (nope + rope) if ql else d * N * (nope + rope)
        attn = q + d * (kvl + rope) + kvl + kvl * N * (nope + vh) + N * vh * d
        if s.get("index_topk"):  # DSA lightning indexer: wq_b, wk, k_norm (LayerNorm), weights_proj
            hi, di = s["index_n_heads"], s["index_head_dim"]
            attn += (ql or d) * hi * di + d * di + 2 * di + d * hi
        return attn
    gate = 2 if (mt.startswith(_GDN_FAMILIES) and _bool_key(cfg, "attn_output_gate", True)) else 1
    attn = gate * d * N * H + 2 * d * K * H + N * H * d
    if mt.startswith("qwen2"):
        attn += N * H + 2 * K * H
    elif mt.startswith("glm4_moe") and _bool_key(cfg, "attention_bias", False):
        attn += N * H + 2 * K * H  # GLM-4.5: biases on q, k and v; o_proj has none (transformers' Glm4MoeAttention)
    elif _bool_key(cfg, "attention_bias", False):
        attn += N * H + 2 * K * H + d
    if mt.startswith(("qwen3", "gemma3", "gemma4")):
        attn += 2 * H
    if mt.startswith("glm4_moe") and _bool_key(cfg, "use_qk_norm", False):
        attn += 2 * H  # GLM-4.5 (not GLM-4.5-Air): q_norm and k_norm of head_dim
    if mt.startswith(("minimax_m2", "minimax_m3")) and _bool_key(cfg, "use_qk_norm", False):
        if cfg.get("qk_norm_type") == "per_head":  # MiniMax-M3: one q_norm and one k_norm of H shared by the heads
            attn += 2 * H
        else:  # MiniMax-M2: q_norm and k_norm over all heads at once (modeling_minimax_m2.py)
            attn += N * H + K * H
    if mt.startswith("gpt_oss"):  # gpt-oss: one learned attention sink per query head (self_attn.sinks)
        attn += N
    return attn


def _ffn(s: dict, width: int) -> int:
    """One MLP of ``width``: gate, up and down (Nemotron-H: up and down, relu^2), with biases under mlp_bias."""
    n_mats = 2 if s["model_type"].startswith("nemotron_h") else 3
    bias = (((n_mats - 1) * width + s["d"]) if _bool_key(s["cfg"], "mlp_bias", False) else 0)
    return n_mats * s["d"] * width + bias


def _mamba2(s: dict) -> int:
    """A Mamba2 mixer: in_proj, conv1d (+ bias), dt_bias, A_log, D, gated norm, out_proj."""
    cfg, mt, d = s["cfg"], s["model_type"], s["d"]
    inner, n_st, g, h, k = s["ssm_d_inner"], s["ssm_d_state"], s["ssm_n_groups"], s["ssm_n_heads"], s["ssm_conv_kernel"]
    conv = inner + 2 * g * n_st
    out = d * (2 * inner + 2 * g * n_st + h) + conv * k + 3 * h + inner * d
    out += conv if _bool_key(cfg, "use_conv_bias", _bool_key(cfg, "mamba_conv_bias", True)) else 0
    out += d if _bool_key(cfg, "mamba_proj_bias", False) else 0
    if not mt.startswith("falcon_h1") or _bool_key(cfg, "mamba_rms_norm", False):
        out += inner
    return out


def _mamba1(s: dict) -> int:
    """Jamba's Mamba1 mixer."""
    cfg, d = s["cfg"], s["d"]
    inner, n_st, k = s["ssm_d_inner"], s["ssm_d_state"], s["ssm_conv_kernel"]
    dt = cfg.get("mamba_dt_rank", "auto")
    dt = -(-d // 16) if dt in (None, "auto") else _int_key(cfg, "mamba_dt_rank")
    out = (d * 2 * inner + inner * k + inner * (dt + 2 * n_st) + dt * inner + inner + inner * n_st + inner
           + inner * d + dt + 2 * n_st)
    out += inner if _bool_key(cfg, "mamba_conv_bias", True) else 0
    out += d if _bool_key(cfg, "mamba_proj_bias", False) else 0
    return out


def _msa_indexer(s: dict) -> int:
    """MiniMax-M3's indexer in a sparse layer (sgl-project/sglang python/sglang/srt/models/minimax_m3.py @01b5f572,
    ``MiniMaxM3Attention``): index_q_proj D x index_heads*d_I, index_k_proj D x d_I (one key head), index_q_norm and
    index_k_norm of d_I each (per head, as its q_norm / k_norm); no index_v_proj or index_o_proj (the checkpoint's
    sparse layers all disable the index value)."""
    d, hi, di = s["d"], s["index_n_heads"], s["index_head_dim"]
    return d * hi * di + d * di + 2 * di


def _global_attention(s: dict) -> int:
    """A Gemma 4 global layer's attention (transformers' Gemma4TextAttention with its per-layer config): Q, K, O of
    ``global_head_dim`` H_g over the global KV heads K_g, V only without ``attention_k_eq_v``, q_norm and k_norm
    of H_g (v_norm has no weight): D*N*H_g + (1 or 2)*D*K_g*H_g + N*H_g*D + 2*H_g."""
    d, N = s["d"], s["N"]
    h = s["global_head_dim"] or s["H"]
    k = s["n_global_kv_heads"] or s["K"]
    kv = 1 if s["global_k_eq_v"] else 2
    attn = d * N * h + kv * d * k * h + N * h * d + 2 * h
    if _bool_key(s["cfg"], "attention_bias", False):
        attn += N * h + kv * k * h + d
    return attn


def _mixer(s: dict, kind: str, attn: int) -> int:
    """The token mixer of a layer of ``kind`` (``attn``: one attention block's count); 0 for a layer without."""
    d, N, H = s["d"], s["N"], s["H"]
    if kind in ("full", "sliding", "chunked"):
        return attn
    if kind == "sparse":
        return attn + _msa_indexer(s)
    if kind == "linear_attention":  # Gated DeltaNet: in_proj_qkvz, in_proj_ba, conv1d, dt_bias, A_log, norm, out_proj
        hk, hv, dk, dv = (s["linear_n_key_heads"], s["linear_n_value_heads"], s["linear_key_head_dim"],
                          s["linear_value_head_dim"])
        conv = 2 * hk * dk + hv * dv
        return d * (2 * hk * dk + 2 * hv * dv) + d * 2 * hv + conv * s["linear_conv_kernel"] + 2 * hv + dv + hv * dv * d
    if kind == "lightning":  # qkv_proj, output_gate, out_proj, norm
        return 3 * d * N * H + d * N * H + N * H * d + N * H
    if kind == "mamba":
        return _mamba1(s)
    if kind == "mamba2":
        return _mamba2(s)
    if kind == "parallel_mamba2":
        return attn + _mamba2(s)
    return 0


def _moe_extras(s: dict) -> tuple[int, int, int, int]:
    """A MoE layer's parts beside its routed experts: (shared experts, router, the router's score-correction
    bias, each expert's biases); all 0 for a dense model."""
    cfg, mt, d, E, F = s["cfg"], s["model_type"], s["d"], s["E"], s["F"]
    shared = router = score_bias = expert_bias = 0
    if E is None:
        return shared, router, score_bias, expert_bias
    _, n_shared = _first(cfg, "n_shared_experts", required=False, default=0, allow_zero=True)
    if mt.startswith("nemotron_h"):
        shared_w = (_int_key(cfg, "moe_shared_expert_intermediate_size")
                    if _present(cfg, "moe_shared_expert_intermediate_size") else F)
        shared = n_shared * _ffn(s, shared_w)
    else:
        shared = n_shared * _ffn(s, F)
    if _present(cfg, "shared_expert_intermediate_size"):  # Qwen-MoE: one shared expert and its gate
        width = _int_key(cfg, "shared_expert_intermediate_size", allow_zero=True)
        shared += _ffn(s, width) + d if width else 0
    if mt.startswith("llama4"):  # Llama 4: an implicit shared expert of width intermediate_size
        shared += _ffn(s, s["F_dense"])
    # the sigmoid router's correction bias: DeepSeek-V3 (HF topk_method "noaux_tc"; DeepSeek's own
    # inference config score_func "sigmoid", whose Gate holds a bias per expert), Nemotron-H, GLM-4.5
    # (Glm4MoeTopkRouter, whose config names no topk_method) and MiniMax-M2 (``use_routing_bias``:
    # e_score_correction_bias of E, its modeling_minimax_m2.py)
    score_bias = (E if (mt.startswith(("deepseek_v3", "nemotron_h", "glm4_moe")) or cfg.get("topk_method") == "noaux_tc"
                       or cfg.get("score_func") == "sigmoid"
                       or (mt.startswith(("minimax_m2", "minimax_m3")) and _bool_key(cfg, "use_routing_bias", False)))
                  else 0)
    router = d * E
    if mt.startswith("gemma4"):  # its dense MLP runs beside the experts, with three more norms; the router's
        shared += _ffn(s, s["F_dense"]) + 3 * d  # scale (D) and per-expert scale (E) beside its projection
        router += d + E
    if mt.startswith("gpt_oss"):  # gpt-oss: router bias, and per expert gate_up (2F) and down (D) biases
        router += E
        expert_bias = 2 * F + d
    return shared, router, score_bias, expert_bias


def _gemma3n_extra(s: dict) -> int:
    """Gemma-3n's per-layer embeddings, AltUp and LAuReL (transformers' Gemma3n modules), less the k_proj,
    v_proj and k_norm its KV-shared layers do not have."""
    cfg, d, L, K, H = s["cfg"], s["d"], s["L"], s["K"], s["H"]
    a = _int_key(cfg, "altup_num_inputs") if _present(cfg, "altup_num_inputs") else 4
    r = _int_key(cfg, "laurel_rank") if _present(cfg, "laurel_rank") else 64
    p = _int_key(cfg, "hidden_size_per_layer_input") if _present(cfg, "hidden_size_per_layer_input") else 256
    v_pl = (_int_key(cfg, "vocab_size_per_layer_input") if _present(cfg, "vocab_size_per_layer_input")
            else 262144)
    per_layer = (d + a * a + a ** 3 + a * d + d) + (2 * d * r + d) + (2 * p * d + d)
    extra = v_pl * L * p + L * p * d + p + 2 * (a - 1) * d * d + L * per_layer
    return extra - s["kv_shared"] * (2 * d * K * H + H)


def _moe_layer(s: dict, moe: tuple[int, int, int, int]) -> tuple[int, int]:
    """A MoE layer's experts, shared experts and router: (total with every expert, active with top-k).

    A latent MoE (Nemotron-3 Super's ``moe_latent_size``, transformers' NemotronHMoE): the routed experts read
    and write the latent width, and the layer holds fc1_latent_proj (D -> latent) and fc2_latent_proj (latent
    -> D), both run for every token (biases under ``mlp_bias``)."""
    shared, router, score_bias, expert_bias = moe
    latent = s.get("moe_latent_dim")
    if latent:
        expert = _ffn(dict(s, d=latent), s["F"]) + expert_bias
        shared += 2 * s["d"] * latent + ((latent + s["d"]) if _bool_key(s["cfg"], "mlp_bias", False) else 0)
    else:
        expert = _ffn(s, s["F"]) + expert_bias
    return s["E"] * expert + shared + router + score_bias, s["top_k"] * expert + shared + router


def _mtp(s: dict, attn: int, norms: int, moe: tuple[int, int, int, int]) -> tuple[int, int]:
    """The multi-token-prediction modules (not part of the main model; counted apart, see ``mtp_params``):
    each is one decoder layer with full attention and the FFN of the last main layer, fed by a
    projection 2D x D of [embedding; hidden state] and its norms. DeepSeek-V3's checkpoint stores, in
    its extra layer, enorm, hnorm, eh_proj, the layer, shared_head.norm and copies of embed_tokens and
    shared_head.head (V x D each); Qwen3-Next / Qwen3.5 store fc, two pre-fc norms, the layer and a
    norm, and share the main model's embedding and head (unless mtp_use_dedicated_embeddings)."""
    n_mtp = s.get("mtp_layers", 0)
    if not n_mtp:
        return 0, 0
    d, V = s["d"], s["V"]
    ffn_kind, width = s["ffn"][-1]
    layer = _mixer(s, "full", attn) + norms * d
    layer_total = layer_active = layer + (_ffn(s, width) if ffn_kind == "dense" else 0)
    if ffn_kind == "moe":
        more_total, more_active = _moe_layer(s, moe)
        layer_total += more_total
        layer_active += more_active
    glue = 2 * d * d + 3 * d
    copies = 2 * V * d if (s["model_type"].startswith("deepseek_v3")
                           or _bool_key(s["cfg"], "mtp_use_dedicated_embeddings", False)) else 0
    # the head's matmul runs for every drafted token
    return n_mtp * (layer_total + glue + copies), n_mtp * (layer_active + glue + V * d)


def _dsv4_compressor(d: int, ratio: int, width: int, overlap: bool) -> int:
    """A DeepSeek-V4 ``Compressor``: ape (ratio x coff*width), wkv and wgate (D x coff*width each), norm (width);
    coff = 2 with overlapping windows (the csa layers' compressors), else 1."""
    coff = 2 if overlap else 1
    return ratio * coff * width + 2 * d * coff * width + width


def _dsv4_attention(s: dict, kind: str) -> int:
    """One DeepSeek-V4 ``Attention`` (inference/model.py): attn_sink (N), wq_a (D x q_lora), q_norm, wq_b
    (q_lora x N*H), wkv (D x H), kv_norm (H), wo_a (N*H/G x G*o_lora, grouped), wo_b (G*o_lora x D); a csa or hca
    layer its compressor (of H = 512, overlapping for csa); a csa layer its ``Indexer``: wq_b (q_lora x
    index_heads*index_dim), weights_proj (D x index_heads) and a compressor of index_dim (overlapping)."""
    d, n, h = s["d"], s["N"], s["H"]
    ql, ol, g = s["q_lora_rank"], s["o_lora_rank"], s["o_groups"]
    attn = n + d * ql + ql + ql * n * h + d * h + h + (n * h // g) * (g * ol) + g * ol * d
    if kind == "csa":
        r, hi, di = s["csa_compress_ratio"], s["index_n_heads"], s["index_head_dim"]
        attn += _dsv4_compressor(d, r, h, True) + ql * hi * di + d * hi + _dsv4_compressor(d, r, di, True)
    elif kind == "hca":
        attn += _dsv4_compressor(d, s["hca_compress_ratio"], h, False)
    return attn


def _dsv4(s: dict) -> tuple[int, int]:
    """DeepSeek-V4's total and active counts (inference/model.py of deepseek-ai/DeepSeek-V4-Flash @60d8d707; the
    Pro and Flash configs share the code). Per ``Block``: the attention of its kind (``_dsv4_attention``),
    attn_norm and ffn_norm (2D), the hyper-connections' hc_attn_fn and hc_ffn_fn ((2 + m) m x mD each, m =
    ``hc_mult``), their bases ((2 + m) m each) and scales (3 each); the MoE: gate weight E x D, for the first
    ``num_hash_layers`` layers the hash table tid2eid (V x top-k, int32) and after them the gate bias (E), E routed
    experts and one shared expert of 3 x D x F. Outside the blocks: embedding and head (V x D each, untied), the
    final norm (D), hc_head_fn (m x mD), hc_head_base (m), hc_head_scale (1). Active: the routed experts' top-k,
    the hash table and the gate bias left out (as V3's correction bias). The MTP modules, counted apart
    (``s["mtp"]``): a ``Block`` of the kind its ``compress_ratios`` entry names (0: window only) with the gate
    bias, e_proj and h_proj (D x D each), enorm, hnorm and norm, its hc_head, and the copies of the embedding and
    head the checkpoint stores with it (mtp.0.emb.tok_emb.weight, mtp.0.head.weight: vLLM's
    ``DeepSeekV4MTP.load_weights``, vllm/model_executor/models/deepseek_v4_mtp.py @023da1fc)."""
    d, L, V, E, F, k = s["d"], s["L"], s["V"], s["E"], s["F"], s["top_k"]
    m = s["hc_mult"]
    mix = (2 + m) * m
    hc_block = 2 * (mix * m * d + mix + 3)
    hc_head = m * m * d + m + 1
    expert = _ffn(s, F)
    shared = _first(s["cfg"], "n_shared_experts", required=False, default=0, allow_zero=True)[1] * expert

    def layer(i: int, kind: str) -> tuple[int, int]:
        base = _dsv4_attention(s, kind) + 2 * d + hc_block + E * d + shared
        table = V * k if i < s["n_hash"] else E
        return base + table + E * expert, base + k * expert

    total = active = 2 * V * d + d + hc_head
    for i, kind in enumerate(s["layer_types"]):
        t, a = layer(i, kind)
        total += t
        active += a
    n_mtp = s.get("mtp_layers", 0)
    if n_mtp:
        ratios = list(s["cfg"].get("compress_ratios") or [])
        mtp_total = mtp_active = 0
        for j in range(n_mtp):
            r = ratios[L + j] if L + j < len(ratios) else 0
            kind = "sliding" if r == 0 else "csa" if r == 4 else "hca"
            t, a = layer(L + j, kind)
            glue = 2 * d * d + 3 * d + hc_head
            mtp_total += t + glue + 2 * V * d
            mtp_active += a + glue + V * d
        s["mtp"] = (mtp_total, mtp_active)
    return total, active


def _count(s: dict) -> tuple[int, int]:
    """Total and active parameter counts from the shapes (formulas of the reference data, 1.1).

    Llama family: V*D + L*(D*N*H + 2*D*K*H + N*H*D + 3*D*F + 2*D) + D, plus V*D for an untied head.
    Qwen2 adds the QKV bias N*H + 2*K*H per layer; Qwen3 and Gemma 3 the QK-norm 2*H; Gemma has 4
    norms per layer. MoE layers hold E experts of 3*D*F and a D*E router (active: top-k experts).
    GPT-2 style: wte + wpe + L*(2 LN, c_attn, c_proj, c_fc, c_proj, all with biases) + final LN.
    Falcon: fused QKV (N + 2K)*H, dense, a 2-matrix MLP, one or two LayerNorms with bias per layer.
    DeepSeek MLA: q_a/q_b (or q_proj), kv_a, kv_b, o and the two latent norms; dense first layers,
    then routed and shared experts plus the gate (V3 also an e_score_correction_bias, counted in the
    total only). The MTP modules (DeepSeek-V3, Qwen3.5) are not part of the main model: they are
    counted apart, into ``s["mtp"]`` (``ModelConfig.n_mtp_params``). gpt-oss: q/k/v/o biases
    (``attention_bias``), one attention sink per head, a router bias and gate_up / down biases per
    expert (transformers' GptOss modules; reproduces the model card's 116.83B / 20.91B). MiniMax-M2: q_norm over
    N*H and k_norm over K*H (``use_qk_norm``) and the router's correction bias (``use_routing_bias``). MiniMax-M3
    (SGLang's minimax_m3.py): per-head q_norm and k_norm of H (``qk_norm_type`` per_head), three dense layers of
    ``dense_intermediate_size`` (the per-layer ``moe_layer_freq``), one shared expert of ``intermediate_size``,
    the router's correction bias, and in each sparse layer the indexer (``_msa_indexer``); its MTP modules are
    not counted. GLM-4.5 (``glm4_moe``, transformers' Glm4Moe modules): biases on q, k and v only
    (``attention_bias``; o_proj has none), q_norm and k_norm of H under ``use_qk_norm``, the router's correction
    bias; its MTP layer (``num_nextn_predict_layers``) is counted apart like DeepSeek-V3's.
    Other families are counted with the Llama formula (exact for Llama-like decoders; an estimate
    for architectures with extra biases or sinks). Checked against transformers' own model classes
    for llama, mixtral, qwen2, qwen3, qwen2_moe, gemma2, gemma3, deepseek_v2/v3, gpt2, gpt_bigcode
    and falcon, and for glm4_moe (tests/test_models.py).
    """
    fam, mt, d, L, V = s["family"], s["model_type"], s["d"], s["L"], s["V"]
    s["mtp"] = (0, 0)
    head = 0 if s["tied"] else V * d
    if fam == "gpt2":
        total = _gpt2(s, head)
        return total, total
    if fam == "falcon":
        total = _falcon(s, head)
        return total, total
    if fam == "dsv4":
        return _dsv4(s)
    norms = 4 if mt.startswith(("gemma2", "gemma3", "gemma4")) else 1 if mt.startswith("nemotron_h") else 2
    attn = _attention(s)
    global_attn = _global_attention(s) if (s.get("global_head_dim") or s.get("n_global_kv_heads")
                                           or s.get("global_k_eq_v")) else attn
    moe = _moe_extras(s)
    shared_mlp = 0
    if mt.startswith("granitemoehybrid") and _present(s["cfg"], "shared_intermediate_size"):
        shared_mlp = _ffn(s, _int_key(s["cfg"], "shared_intermediate_size", allow_zero=True))  # every layer
    total = active = V * d + head + d
    if mt.startswith("gemma3n"):
        extra = _gemma3n_extra(s)
        total += extra
        active += extra
    for kind, (ffn_kind, width) in zip(s["layer_types"] or ("full",) * L, s["ffn"]):
        layer = _mixer(s, kind, global_attn if kind == "full" else attn) + norms * d + shared_mlp
        if ffn_kind == "dense":
            layer += _ffn(s, width)
        total += layer
        active += layer
        if ffn_kind == "moe":
            more_total, more_active = _moe_layer(s, moe)
            total += more_total
            active += more_active
    s["mtp"] = _mtp(s, attn, norms, moe)
    return total, active


def count_params(config) -> tuple[int, int]:
    """Return (total, active) parameter counts computed from a Hugging Face config's shapes.

    Args:
        config: a config.json as a dict (or its JSON text); multimodal files are read through
            their ``text_config`` (the language model only).

    Returns:
        (total parameters with every expert, embeddings and head included; parameters used per
        token). For a dense model the two are equal. Formulas: reference data 1.1, "How the [D]
        parameter counts were computed" (see ``_count``); they reproduce the official counts of
        Llama-2-7B (6,738,415,616), Llama-3-8B (8,030,261,248), GPT-2 (124,439,808) and Mixtral
        (46,702,792,704) exactly.

    Raises:
        ValueError: a malformed config (see ``from_hf_config``).
    """
    return _count(_shapes(config))
