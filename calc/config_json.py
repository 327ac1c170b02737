"""Reading a Hugging Face ``config.json`` (or Meta/Mistral ``params.json``) into a ``ModelConfig``, and
counting its parameters from the shapes alone.

The presets' verbatim config.json files live in ``calc/data/hf_configs/`` (``calc.models.hf_config``);
the tests check that ``from_hf_config`` of each reproduces the preset of ``calc/data/models.json``
exactly, parameter count included. Untrusted text is bounded by ``calc.limits``.
"""
from __future__ import annotations

from .checks import check_positive_int
from .layers import STATE_LAYER_KINDS
from .limits import check_config_dict, check_config_int, parse_config_json, plain_name
from .models import OPTIONAL_SHAPE_FIELDS, ModelConfig


# == Reading Hugging Face config.json ============================================================

# Key names for each shape across the families (Llama/Mistral/Qwen/Gemma/DeepSeek HF keys, GPT-2
# style keys, Falcon/RW keys, and Meta/Mistral params.json / DeepSeek inference-config keys).
_LABELS = {"d_model": "the hidden size", "n_layers": "the number of layers", "n_heads": "the number of attention heads",
           "d_ff": "the FFN width", "vocab_size": "the vocabulary size"}
_KEYS = {
    "d_model": ("hidden_size", "n_embd", "d_model", "dim"),
    "n_layers": ("num_hidden_layers", "n_layer", "n_layers", "num_layers"),
    "n_heads": ("num_attention_heads", "n_head", "n_heads"),
    "n_kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads"),
    "d_ff": ("intermediate_size", "n_inner", "ffn_hidden_size", "hidden_dim", "inter_dim"),
    "vocab_size": ("vocab_size", "padded_vocab_size"),
    "max_context_len": ("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len"),
    "n_experts": ("num_local_experts", "num_experts", "n_routed_experts"),
    "n_experts_per_token": ("num_experts_per_tok", "num_experts_per_token", "n_activated_experts"),
    "moe_d_ff": ("moe_intermediate_size", "moe_inter_dim"),
    "n_shared_experts": ("n_shared_experts",),
    "first_k_dense": ("first_k_dense_replace", "n_dense_layers"),
}

# Defaults of the transformers config classes for keys a shipped config.json may leave out
# (Gemma2Config / Gemma3TextConfig in transformers 5.x; PretrainedConfig ties embeddings unless
# the family's class says otherwise).
_FAMILY_DEFAULTS = {
    "gemma": {"head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192},
    "gemma2": {"head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192, "sliding_window": 4096,
               "sliding_window_pattern": 2},
    "llama4_text": {"attention_chunk_size": 8192},
    "llama4": {"attention_chunk_size": 8192},
    "gemma3_text": {"head_dim": 256, "vocab_size": 262208, "max_position_embeddings": 131072,
                    "sliding_window": 4096, "sliding_window_pattern": 6},
}
_TIED_BY_DEFAULT = ("gemma", "gpt2", "gpt_bigcode", "falcon", "refinedweb")

_LAYER_TYPE_NAMES = {"sliding_attention": "sliding", "sliding": "sliding", "local": "sliding",
                     "full_attention": "full", "full": "full", "global": "full"}


def _present(cfg: dict, key: str) -> bool:
    return key in cfg and cfg[key] is not None


def _int_key(cfg: dict, key: str, *, allow_zero: bool = False) -> int:
    """Read ``cfg[key]`` as an integer (> 0, or >= 0 with allow_zero) within the key's plausible range
    (calc/limits.py); ValueError naming the key (and the limit)."""
    return check_config_int(cfg[key], key, minimum=0 if allow_zero else 1)


def _first(cfg: dict, what: str, *, required: bool = True, default=None, allow_zero: bool = False):
    """Return (key, int value) for the first present alias of ``what``; ValueError when required."""
    for key in _KEYS[what]:
        if _present(cfg, key):
            return key, _int_key(cfg, key, allow_zero=allow_zero)
    if required:
        names = ", ".join(repr(k) for k in _KEYS[what])
        raise ValueError(f"config is missing {_LABELS.get(what, what)} (expected one of {names})")
    return None, default


def _bool_key(cfg: dict, key: str, default: bool) -> bool:
    if not _present(cfg, key):
        return default
    value = cfg[key]
    if not isinstance(value, bool):
        raise ValueError(f"config key {key!r} must be true or false, got {value!r}")
    return value


def _text_config(config) -> tuple[dict, dict]:
    """Return (text config, outer config): multimodal files (Gemma 3) nest the LM under text_config."""
    if isinstance(config, (str, bytes, bytearray)):
        config = _parse_json_text(config)
    if not isinstance(config, dict):
        raise ValueError(f"a Hugging Face config must be a JSON object (dict), got {type(config).__name__}")
    check_config_dict(config)
    inner = config.get("text_config")
    if inner is None:
        return config, config
    if not isinstance(inner, dict):
        raise ValueError(f"config key 'text_config' must be a JSON object, got {type(inner).__name__}")
    return inner, config


def _family(cfg: dict, outer: dict) -> str:
    """The architecture family that decides the parameter-count formula and key defaults."""
    model_type = str(cfg.get("model_type") or outer.get("model_type") or "").lower()
    if _present(cfg, "kv_lora_rank") or model_type.startswith("deepseek_v"):
        return "mla"
    if "n_embd" in cfg or model_type in ("gpt2", "gpt_bigcode"):
        return "gpt2"
    if model_type in ("falcon", "refinedweb", "refinedwebmodel"):
        return "falcon"
    return model_type or "llama"


def _resolved(cfg: dict, model_type: str) -> dict:
    """``cfg`` with the transformers class defaults of its family filled in for absent keys."""
    defaults = _FAMILY_DEFAULTS.get(model_type, {})
    merged = dict(defaults)
    merged.update(cfg)
    return merged


def _shapes(config) -> dict:
    """Read every shape the calc core needs from a HF config; the heart of ``from_hf_config``."""
    cfg, outer = _text_config(config)
    model_type = str(cfg.get("model_type") or outer.get("model_type") or "").lower()
    cfg = _resolved(cfg, model_type)
    family = _family(cfg, outer)
    s: dict = {"family": family, "model_type": model_type}

    _, d = _first(cfg, "d_model")
    _, n_layers = _first(cfg, "n_layers")
    heads_key, n_heads = _first(cfg, "n_heads")
    _, vocab = _first(cfg, "vocab_size")
    _, max_ctx = _first(cfg, "max_context_len", required=False)

    # K: an explicit count wins; else multi_query (Falcon's default is true); else MHA.
    kv_key, n_kv = _first(cfg, "n_kv_heads", required=False)
    if kv_key is None:
        mq_key = "multi_query"
        multi_query = _bool_key(cfg, mq_key, default=(family == "falcon"))
        n_kv = 1 if multi_query else n_heads
        kv_key = mq_key if multi_query else heads_key

    # MoE: routed experts E, top-k, one routed expert's width.
    e_key, n_experts = _first(cfg, "n_experts", required=False)
    k_key, top_k = _first(cfg, "n_experts_per_token", required=False)
    if n_experts is not None and top_k is None:
        raise ValueError(f"config has {e_key!r} but no top-k (expected one of "
                         f"{', '.join(repr(k) for k in _KEYS['n_experts_per_token'])})")
    if n_experts is None and top_k is not None:
        raise ValueError(f"config has {k_key!r} but no expert count (expected one of "
                         f"{', '.join(repr(k) for k in _KEYS['n_experts'])})")
    if n_experts is not None and top_k > n_experts:
        raise ValueError(f"config key {k_key!r} ({top_k}) exceeds the number of experts {e_key!r} ({n_experts})")

    if family == "mla":
        attention = "mla"
        for key in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
            if not _present(cfg, key):
                raise ValueError(f"MLA config (model_type {model_type or 'unknown'!r}) is missing {key!r}")
            s[key] = _int_key(cfg, key)
        s["q_lora_rank"] = _int_key(cfg, "q_lora_rank") if _present(cfg, "q_lora_rank") else None
        head_dim = s["qk_nope_head_dim"] + s["qk_rope_head_dim"]  # the query/key head width
    else:
        if n_kv > n_heads or n_heads % n_kv:
            raise ValueError(f"config key {kv_key!r} ({n_kv}) must divide {heads_key!r} ({n_heads})")
        attention = "mha" if n_kv == n_heads else "mqa" if n_kv == 1 else "gqa"
        if _present(cfg, "head_dim"):
            head_dim = _int_key(cfg, "head_dim")
        elif d % n_heads == 0:
            head_dim = d // n_heads
        else:
            raise ValueError(f"config has no 'head_dim' and the hidden size {d} is not divisible by "
                             f"{heads_key!r} ({n_heads})")

    # F: one routed expert's width for MoE (DeepSeek's moe_intermediate_size, Mixtral's
    # intermediate_size); GPT-2 style n_inner defaults to 4 * n_embd.
    ffn_widths = None
    if isinstance(cfg.get("intermediate_size"), (list, tuple)):  # Gemma-3n: one width per layer
        widths = cfg["intermediate_size"]
        if len(widths) != n_layers:
            raise ValueError(f"config key 'intermediate_size' lists {len(widths)} widths but the model has "
                             f"{n_layers} layers")
        ffn_widths = [_int_key({"intermediate_size": w}, "intermediate_size") for w in widths]
        cfg = dict(cfg, intermediate_size=ffn_widths[0])
        s["cfg_widths"] = ffn_widths
    _, moe_d_ff = _first(cfg, "moe_d_ff", required=False)
    # An all-MoE config (Qwen3.5-MoE: no dense FFN, so no intermediate_size) needs no dense width;
    # a dense layer without one is refused below, once the layout is known.
    experts_only = n_experts is not None and moe_d_ff is not None
    _, d_ff_dense = _first(cfg, "d_ff", required=family not in ("gpt2", "falcon") and not experts_only,
                           default=None if experts_only else 4 * d)
    d_ff = moe_d_ff if experts_only else d_ff_dense

    kinds = _mixer_kinds(cfg, model_type, n_layers)
    chunk = None
    if kinds is None:
        window, layer_types = _layer_pattern(cfg, model_type, n_layers)
    else:
        window, layer_types, chunk = _merge_kinds(cfg, kinds)
    s["ffn"] = _ffn_layout(cfg, model_type, n_layers, n_experts is not None, d_ff_dense, ffn_widths)
    if any(kind == "dense" and width is None for kind, width in s["ffn"]):
        _first(cfg, "d_ff")  # raises: the config's dense layers have no width
    s["chunk"] = chunk
    s.update(_state_shapes(cfg, model_type, d, layer_types))
    n_shared_kv = _int_key(cfg, "num_kv_shared_layers", allow_zero=True) if _present(cfg, "num_kv_shared_layers") else 0
    if n_shared_kv >= n_layers:
        raise ValueError(f"config key 'num_kv_shared_layers' ({n_shared_kv}) must be below the number of "
                         f"layers ({n_layers})")
    s["kv_shared"] = n_shared_kv
    tie_key = "tie_word_embeddings"
    tie_default = ((any(model_type.startswith(p) for p in _TIED_BY_DEFAULT) and not model_type.startswith("falcon_h1"))
                   or family in ("gpt2", "falcon"))
    tied = _bool_key(cfg, tie_key, _bool_key(outer, tie_key, tie_default))

    mtp_key = next((key for key in ("num_nextn_predict_layers", "mtp_num_hidden_layers") if _present(cfg, key)), None)
    s["mtp_layers"] = _int_key(cfg, mtp_key, allow_zero=True) if mtp_key else 0
    s.update(d=d, L=n_layers, N=n_heads, K=n_kv, H=head_dim, F=d_ff, F_dense=d_ff_dense, V=vocab,
             max_ctx=max_ctx, attention=attention, window=window, layer_types=layer_types, tied=tied,
             E=n_experts, top_k=top_k, cfg=cfg)
    return s


def _layer_pattern(cfg: dict, model_type: str, n_layers: int):
    """Return (sliding_window, layer_types) in canonical form.

    Rules (transformers config classes): ``use_sliding_window: false`` disables the window (Qwen2,
    Qwen3); an explicit ``layer_types`` list wins; Qwen's ``max_window_layers`` keeps the first
    layers full; ``sliding_window_pattern`` p makes layer i full when (i + 1) % p == 0 (Gemma 2
    default p = 2, Gemma 3 default p = 6); otherwise a window applies to every layer (Mistral).
    Canonical form: no sliding layer -> (None, None); all sliding -> (W, None); mixed -> (W, tuple).
    """
    window_key = "sliding_window" if _present(cfg, "sliding_window") else "sliding_window_size"
    window = _int_key(cfg, window_key) if _present(cfg, window_key) else None
    if _present(cfg, "use_sliding_window") and not _bool_key(cfg, "use_sliding_window", False):
        window = None
    kinds: list[str]
    if _present(cfg, "layer_types"):
        raw = cfg["layer_types"]
        if not isinstance(raw, (list, tuple)) or len(raw) != n_layers:
            raise ValueError(f"config key 'layer_types' must be a list of {n_layers} entries (one per layer), "
                             f"got {raw!r}")
        bad = sorted({str(t) for t in raw if not isinstance(t, str) or t not in _LAYER_TYPE_NAMES})
        if bad:
            raise ValueError(f"config key 'layer_types' has unknown entries {bad}; expected "
                             "'full_attention' or 'sliding_attention'")
        kinds = [_LAYER_TYPE_NAMES[t] for t in raw]
        if "sliding" in kinds and window is None:
            raise ValueError("config key 'layer_types' lists sliding layers but 'sliding_window' is not set")
    elif window is None:
        kinds = ["full"] * n_layers
    elif _present(cfg, "use_sliding_window") and _present(cfg, "max_window_layers"):
        first_full = _int_key(cfg, "max_window_layers", allow_zero=True)
        kinds = ["sliding" if i >= first_full else "full" for i in range(n_layers)]
    elif _present(cfg, "sliding_window_pattern"):
        p = _int_key(cfg, "sliding_window_pattern")
        kinds = ["full" if (i + 1) % p == 0 else "sliding" for i in range(n_layers)]
    else:
        kinds = ["sliding"] * n_layers
    if "sliding" not in kinds:
        return None, None
    if "full" not in kinds:
        return window, None
    return window, tuple(kinds)


_GDN_FAMILIES = ("qwen3_next", "qwen3_5")          # "linear_attention" = Gated DeltaNet
_LIGHTNING_FAMILIES = ("minimax",)                  # "linear_attention" = lightning attention
_MAMBA2_FAMILIES = ("nemotron_h", "granitemoehybrid", "falcon_h1")
_KIND_NAMES = {"full_attention": "full", "full": "full", "global": "full", "attention": "full",
               "indexed_attention": "full", "sliding_attention": "sliding", "sliding": "sliding", "local": "sliding",
               "chunked_attention": "chunked", "mlp": "mlp_only", "moe": "mlp_only", "hybrid": "parallel_mamba2"}
_PATTERN_CHARS = {"M": "mamba2", "*": "full", "-": "mlp_only", "E": "mlp_only"}


def _kind_name(name, model_type: str, key: str) -> str:
    """Canonical kind of one per-layer entry of ``key`` (family decides what "linear_attention" is)."""
    if isinstance(name, str) and name in _KIND_NAMES:
        return _KIND_NAMES[name]
    if name in ("linear_attention", "mamba", "mamba2"):
        if model_type.startswith(_GDN_FAMILIES):
            return "linear_attention"
        if model_type.startswith(_LIGHTNING_FAMILIES):
            return "lightning"
        if model_type.startswith(_MAMBA2_FAMILIES):
            return "mamba2"
        if model_type.startswith("jamba"):
            return "mamba"
    raise ValueError(f"config key {key!r} has an unknown layer kind {name!r} for model_type {model_type or 'unknown'!r}")


def _per_layer_list(cfg: dict, key: str, n_layers: int) -> list:
    value = cfg[key]
    if not isinstance(value, (list, tuple, str)) or len(value) != n_layers:
        raise ValueError(f"config key {key!r} must give one entry per layer ({n_layers}), got "
                         f"{len(value) if isinstance(value, (list, tuple, str)) else value!r}")
    return list(value)


def _mixer_kinds(cfg: dict, model_type: str, n_layers: int) -> list[str] | None:
    """Per-layer kinds of the hybrid families (None: a plain transformer, see ``_layer_pattern``).

    Rules (transformers config classes): Nemotron-H ``hybrid_override_pattern`` (M = Mamba2, * =
    attention, - = MLP, E = MoE); MiniMax ``attn_type_list`` (0 = lightning, 1 = softmax); Jamba
    ``attn_layer_period``/``attn_layer_offset`` (layer i attends when i % period == offset, else
    Mamba); Qwen3-Next/Qwen3.5 ``layer_types`` or ``full_attention_interval`` k (layer i full when
    (i + 1) % k == 0, default 4); Falcon-H1: every layer attention and Mamba2 in parallel; Granite-4
    ``layer_types`` "mamba"/"attention"; Llama 4 ``attention_chunk_size`` with ``no_rope_layers``
    (1 = chunked RoPE layer, 0 = global NoPE layer; empty: every 4th layer global,
    ``no_rope_layer_interval``).
    """
    if _present(cfg, "hybrid_override_pattern") or _present(cfg, "layers_block_type"):
        key = "hybrid_override_pattern" if _present(cfg, "hybrid_override_pattern") else "layers_block_type"
        entries = _per_layer_list(cfg, key, n_layers)
        if key == "hybrid_override_pattern":
            bad = sorted({c for c in entries if c not in _PATTERN_CHARS})
            if bad:
                raise ValueError(f"config key {key!r} has an unknown layer kind {bad[0]!r} (expected M, *, - or E)")
            return [_PATTERN_CHARS[c] for c in entries]
        return [_kind_name(t, model_type, key) for t in entries]
    if _present(cfg, "attn_type_list"):
        entries = _per_layer_list(cfg, "attn_type_list", n_layers)
        if any(t not in (0, 1) or isinstance(t, bool) for t in entries):
            raise ValueError(f"config key 'attn_type_list' entries must be 0 (lightning) or 1 (softmax), got "
                             f"{sorted({str(t) for t in entries if t not in (0, 1)})}")
        return ["full" if t == 1 else "lightning" for t in entries]
    if _present(cfg, "attn_layer_period"):
        period = _int_key(cfg, "attn_layer_period")
        offset = _int_key(cfg, "attn_layer_offset", allow_zero=True) if _present(cfg, "attn_layer_offset") else 0
        if offset >= period:
            raise ValueError(f"config key 'attn_layer_offset' ({offset}) must be below 'attn_layer_period' ({period})")
        return ["full" if i % period == offset else "mamba" for i in range(n_layers)]
    if model_type.startswith("falcon_h1"):
        return ["parallel_mamba2"] * n_layers
    if _present(cfg, "layer_types") and model_type.startswith(_GDN_FAMILIES + _LIGHTNING_FAMILIES + _MAMBA2_FAMILIES
                                                                 + ("jamba", "deepseek_v32", "llama4")):
        entries = _per_layer_list(cfg, "layer_types", n_layers)
        return [_kind_name(t, model_type, "layer_types") for t in entries]
    if model_type.startswith(_GDN_FAMILIES):
        k = _int_key(cfg, "full_attention_interval") if _present(cfg, "full_attention_interval") else 4
        return ["full" if (i + 1) % k == 0 else "linear_attention" for i in range(n_layers)]
    if model_type.startswith("llama4") and _present(cfg, "attention_chunk_size"):
        _int_key(cfg, "attention_chunk_size")
        rope = cfg.get("no_rope_layers") or []
        if rope:
            rope = _per_layer_list(cfg, "no_rope_layers", n_layers)
            if any(r not in (0, 1) or isinstance(r, bool) for r in rope):
                raise ValueError("config key 'no_rope_layers' entries must be 0 (global NoPE layer) or 1 (chunked)")
        else:
            interval = _int_key(cfg, "no_rope_layer_interval") if _present(cfg, "no_rope_layer_interval") else 4
            rope = [int((i + 1) % interval != 0) for i in range(n_layers)]
        return ["chunked" if r else "full" for r in rope]
    return None


def _merge_kinds(cfg: dict, kinds: list[str]):
    """(sliding_window, layer_types, attention_chunk_size) for a hybrid stack of ``kinds``."""
    window_key = "sliding_window" if _present(cfg, "sliding_window") else "sliding_window_size"
    window = _int_key(cfg, window_key) if _present(cfg, window_key) else None
    if "sliding" in kinds and window is None:
        raise ValueError("config lists sliding layers but 'sliding_window' is not set")
    if "sliding" not in kinds:
        window = None
    chunk = _int_key(cfg, "attention_chunk_size") if "chunked" in kinds else None
    if all(k == "full" for k in kinds):
        return None, None, None
    return window, tuple(kinds), chunk


_TORCH_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def _state_shapes(cfg: dict, model_type: str, d: int, layer_types) -> dict:
    """ModelConfig fields of the constant-state layers (Gated DeltaNet, Mamba, Mamba2) and DSA.

    Keys and defaults of the transformers config classes: Qwen3NextConfig (``linear_*``; 16 key
    heads, 32 value heads of 128, kernel 4), JambaConfig (``mamba_expand`` 2, ``mamba_d_state`` 16,
    ``mamba_d_conv`` 4), NemotronHConfig (``mamba_num_heads`` x ``mamba_head_dim``,
    ``ssm_state_size``, ``n_groups``, ``conv_kernel``), FalconH1Config and GraniteMoeHybridConfig
    (``mamba_d_ssm`` or ``mamba_expand`` x D, ``mamba_n_heads``, ``mamba_d_head``, ``mamba_d_state``,
    ``mamba_n_groups``, ``mamba_d_conv``), DeepseekV32Config (``index_n_heads`` 64,
    ``index_head_dim`` 128, ``index_topk`` 2048).
    """
    kinds = set(layer_types or ())
    out: dict = {}

    def get(key, default):
        return _int_key(cfg, key) if _present(cfg, key) else default

    if "linear_attention" in kinds:
        out.update(linear_n_key_heads=get("linear_num_key_heads", 16), linear_n_value_heads=get("linear_num_value_heads", 32),
                   linear_key_head_dim=get("linear_key_head_dim", 128),
                   linear_value_head_dim=get("linear_value_head_dim", 128),
                   linear_conv_kernel=get("linear_conv_kernel_dim", 4))
    if "mamba" in kinds:
        out.update(ssm_d_inner=get("mamba_expand", 2) * d, ssm_d_state=get("mamba_d_state", 16),
                   ssm_conv_kernel=get("mamba_d_conv", 4))
    if kinds & {"mamba2", "parallel_mamba2"}:
        if model_type.startswith("nemotron_h"):
            heads, head_dim = get("mamba_num_heads", 128), get("mamba_head_dim", 64)
            out.update(ssm_n_heads=heads, ssm_head_dim=head_dim, ssm_d_inner=heads * head_dim,
                       ssm_d_state=get("ssm_state_size", 128), ssm_n_groups=get("n_groups", get("mamba_n_groups", 8)),
                       ssm_conv_kernel=get("conv_kernel", get("mamba_d_conv", 4)))
        else:
            inner = get("mamba_d_ssm", get("mamba_expand", 2) * d)
            heads = get("mamba_n_heads", 128)
            out.update(ssm_n_heads=heads, ssm_head_dim=get("mamba_d_head", inner // heads), ssm_d_inner=inner,
                       ssm_d_state=get("mamba_d_state", 256), ssm_n_groups=get("mamba_n_groups", 1),
                       ssm_conv_kernel=get("mamba_d_conv", 4))
    for key in ("mamba_ssm_dtype", "mamba_ssm_cache_dtype"):
        if _present(cfg, key) and kinds & set(STATE_LAYER_KINDS) and cfg[key] != "auto":
            if cfg[key] not in _TORCH_DTYPES:
                raise ValueError(f"config key {key!r} must be one of {', '.join(_TORCH_DTYPES)} or 'auto', "
                                 f"got {cfg[key]!r}")
            out["ssm_state_dtype"] = _TORCH_DTYPES[cfg[key]]
            break
    if model_type.startswith("deepseek_v32") or _present(cfg, "index_topk"):
        out.update(index_n_heads=get("index_n_heads", 64), index_head_dim=get("index_head_dim", 128),
                   index_topk=get("index_topk", 2048))
    return out


def _ffn_layout(cfg: dict, model_type: str, n_layers: int, has_experts: bool, d_ff_dense: int,
                widths: list[int] | None) -> list[tuple[str, int]]:
    """Per-layer FFN: ("moe", 0), ("dense", width) or ("none", 0).

    MoE placement: DeepSeek ``first_k_dense_replace`` and ``moe_layer_freq``; Qwen-MoE
    ``decoder_sparse_step`` and ``mlp_only_layers``; Llama 4 ``moe_layers`` or
    ``interleave_moe_layer_step`` (dense layers of width ``intermediate_size_mlp``); Jamba
    ``expert_layer_period``/``expert_layer_offset``; Nemotron-H's pattern (M and * layers have no
    FFN, - a dense one, E an MoE one).
    """
    dense_w = d_ff_dense
    if model_type.startswith("llama4") and _present(cfg, "intermediate_size_mlp"):
        dense_w = _int_key(cfg, "intermediate_size_mlp")
    out = [("dense", w) for w in (widths or [dense_w] * n_layers)]
    if _present(cfg, "hybrid_override_pattern"):
        return [("moe", 0) if c == "E" else ("dense", dense_w) if c == "-" else ("none", 0)
                for c in cfg["hybrid_override_pattern"]]
    if not has_experts:
        return out
    moe = [True] * n_layers
    if model_type.startswith("llama4"):
        if isinstance(cfg.get("moe_layers"), list):
            listed = set(cfg["moe_layers"])
            moe = [i in listed for i in range(n_layers)]
        else:
            step = _int_key(cfg, "interleave_moe_layer_step") if _present(cfg, "interleave_moe_layer_step") else 1
            moe = [(i + 1) % step == 0 for i in range(n_layers)]
    if _present(cfg, "expert_layer_period"):
        period = _int_key(cfg, "expert_layer_period")
        offset = _int_key(cfg, "expert_layer_offset", allow_zero=True) if _present(cfg, "expert_layer_offset") else 0
        moe = [i % period == offset for i in range(n_layers)]
    if _present(cfg, "decoder_sparse_step"):
        step = _int_key(cfg, "decoder_sparse_step")
        dense_layers = set(cfg.get("mlp_only_layers") or [])
        moe = [(i not in dense_layers) and (i + 1) % step == 0 for i in range(n_layers)]
    _, n_dense = _first(cfg, "first_k_dense", required=False, default=0, allow_zero=True)
    if n_dense > n_layers:
        raise ValueError(f"config key 'first_k_dense_replace' ({n_dense}) exceeds the number of layers ({n_layers})")
    freq = _int_key(cfg, "moe_layer_freq") if isinstance(cfg.get("moe_layer_freq"), int) else 1
    moe = [m and i >= n_dense and i % freq == 0 for i, m in enumerate(moe)]
    return [("moe", 0) if m else f for m, f in zip(moe, out)]


def _ffn_fields(s: dict) -> dict:
    """The ``ModelConfig`` FFN-layout fields (and GPT-2's learned position table) of the shapes ``s``, in
    canonical form (a default left None/0).

    ffn_layer_types from ``_ffn_layout``; d_ff_dense the dense layers' width (the first one's where
    Gemma-3n lists several); d_ff_shared the shared experts' summed width per MoE layer (as ``_count``:
    DeepSeek ``n_shared_experts`` x expert width, Nemotron-H ``moe_shared_expert_intermediate_size``,
    Qwen-MoE ``shared_expert_intermediate_size``, Llama 4 ``intermediate_size``); ffn_matrices 2 for
    GPT-2 style, Falcon and Nemotron-H MLPs, else 3.
    """
    cfg, mt, E = s["cfg"], s["model_type"], s["E"]
    kinds = tuple(kind for kind, _ in s["ffn"])
    default = ("moe" if E is not None else "dense",) * s["L"]
    dense = [w for kind, w in s["ffn"] if kind == "dense"]
    shared = 0
    if E is not None:
        _, n_shared = _first(cfg, "n_shared_experts", required=False, default=0, allow_zero=True)
        width = s["F"]
        if mt.startswith("nemotron_h") and _present(cfg, "moe_shared_expert_intermediate_size"):
            width = _int_key(cfg, "moe_shared_expert_intermediate_size")
        shared = n_shared * width
        if _present(cfg, "shared_expert_intermediate_size"):
            shared += _int_key(cfg, "shared_expert_intermediate_size", allow_zero=True)
        if mt.startswith("llama4"):
            shared += s["F_dense"]
    two = s["family"] in ("gpt2", "falcon") or mt.startswith("nemotron_h")
    positions = None
    if s["family"] == "gpt2":  # wpe: n_positions x D (the count's n_pos, ``_count``)
        positions = _first(cfg, "max_context_len", required=False, default=1024)[1]
    return dict(ffn_layer_types=None if kinds == default else kinds,
                d_ff_dense=dense[0] if dense and dense[0] != s["F"] else None,
                d_ff_shared=shared, ffn_matrices=2 if two else 3, learned_positions=positions)


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
    expert (transformers' GptOss modules; reproduces the model card's 116.83B / 20.91B).
    Other families are counted with the Llama formula (exact for Llama-like decoders; an estimate
    for architectures with extra biases or sinks). Checked against transformers' own model classes
    for llama, mixtral, qwen2, qwen3, qwen2_moe, gemma2, gemma3, deepseek_v2/v3, gpt2, gpt_bigcode
    and falcon (tests/test_models.py).
    """
    cfg, fam, mt = s["cfg"], s["family"], s["model_type"]
    d, L, N, K, H, V = s["d"], s["L"], s["N"], s["K"], s["H"], s["V"]
    s["mtp"] = (0, 0)
    head = 0 if s["tied"] else V * d
    if fam == "gpt2":
        F = s["F_dense"]
        _, n_pos = _first(cfg, "max_context_len", required=False, default=1024)
        qkv = N * H + 2 * K * H
        layer = (2 * 2 * d + d * qkv + qkv + N * H * d + d + d * F + F + F * d + d)
        total = V * d + n_pos * d + L * layer + 2 * d + head
        return total, total
    if fam == "falcon":
        F = s["F_dense"]
        bias = _bool_key(cfg, "bias", False)
        new_arch = _bool_key(cfg, "new_decoder_architecture", False)
        parallel = _bool_key(cfg, "parallel_attn", True)
        n_ln = 2 if (new_arch or not parallel) else 1
        qkv = (N + 2 * K) * H
        layer = n_ln * 2 * d + d * qkv + N * H * d + 2 * d * F
        if bias:
            layer += qkv + d + F + d
        total = V * d + L * layer + 2 * d + head
        return total, total

    norms = 4 if mt.startswith(("gemma2", "gemma3")) else 1 if mt.startswith("nemotron_h") else 2
    if fam == "mla":
        nope, rope, vh, kvl, ql = (s["qk_nope_head_dim"], s["qk_rope_head_dim"], s["v_head_dim"],
                                   s["kv_lora_rank"], s["q_lora_rank"])
        q = d * ql + ql + ql * N * (nope + rope) if ql else d * N * (nope + rope)
        attn = q + d * (kvl + rope) + kvl + kvl * N * (nope + vh) + N * vh * d
        if s.get("index_topk"):  # DSA lightning indexer: wq_b, wk, k_norm (LayerNorm), weights_proj
            hi, di = s["index_n_heads"], s["index_head_dim"]
            attn += (ql or d) * hi * di + d * di + 2 * di + d * hi
    else:
        gate = 2 if (mt.startswith(_GDN_FAMILIES) and _bool_key(cfg, "attn_output_gate", True)) else 1
        attn = gate * d * N * H + 2 * d * K * H + N * H * d
        if mt.startswith("qwen2"):
            attn += N * H + 2 * K * H
        elif _bool_key(cfg, "attention_bias", False):
            attn += N * H + 2 * K * H + d
        if mt.startswith(("qwen3", "gemma3")):
            attn += 2 * H
        if mt.startswith("gpt_oss"):  # gpt-oss: one learned attention sink per query head (self_attn.sinks)
            attn += N
    mlp_bias = _bool_key(cfg, "mlp_bias", False)
    n_mats = 2 if mt.startswith("nemotron_h") else 3  # Nemotron-H's MLP: up and down (relu^2)

    def ffn(width: int) -> int:
        return n_mats * d * width + (((n_mats - 1) * width + d) if mlp_bias else 0)

    def mamba2() -> int:  # in_proj, conv1d (+ bias), dt_bias, A_log, D, gated norm, out_proj
        inner, n_st, g, h, k = s["ssm_d_inner"], s["ssm_d_state"], s["ssm_n_groups"], s["ssm_n_heads"], s["ssm_conv_kernel"]
        conv = inner + 2 * g * n_st
        out = d * (2 * inner + 2 * g * n_st + h) + conv * k + 3 * h + inner * d
        out += conv if _bool_key(cfg, "use_conv_bias", _bool_key(cfg, "mamba_conv_bias", True)) else 0
        out += d if _bool_key(cfg, "mamba_proj_bias", False) else 0
        if not mt.startswith("falcon_h1") or _bool_key(cfg, "mamba_rms_norm", False):
            out += inner
        return out

    def mixer(kind: str) -> int:
        if kind in ("full", "sliding", "chunked"):
            return attn
        if kind == "linear_attention":  # Gated DeltaNet: in_proj_qkvz, in_proj_ba, conv1d, dt_bias, A_log, norm, out_proj
            hk, hv, dk, dv = (s["linear_n_key_heads"], s["linear_n_value_heads"], s["linear_key_head_dim"],
                              s["linear_value_head_dim"])
            conv = 2 * hk * dk + hv * dv
            return d * (2 * hk * dk + 2 * hv * dv) + d * 2 * hv + conv * s["linear_conv_kernel"] + 2 * hv + dv + hv * dv * d
        if kind == "lightning":  # qkv_proj, output_gate, out_proj, norm
            return 3 * d * N * H + d * N * H + N * H * d + N * H
        if kind == "mamba":  # Jamba's Mamba1 mixer
            inner, n_st, k = s["ssm_d_inner"], s["ssm_d_state"], s["ssm_conv_kernel"]
            dt = cfg.get("mamba_dt_rank", "auto")
            dt = -(-d // 16) if dt in (None, "auto") else _int_key(cfg, "mamba_dt_rank")
            out = (d * 2 * inner + inner * k + inner * (dt + 2 * n_st) + dt * inner + inner + inner * n_st + inner
                   + inner * d + dt + 2 * n_st)
            out += inner if _bool_key(cfg, "mamba_conv_bias", True) else 0
            out += d if _bool_key(cfg, "mamba_proj_bias", False) else 0
            return out
        if kind == "mamba2":
            return mamba2()
        if kind == "parallel_mamba2":
            return attn + mamba2()
        return 0

    E, k, F = s["E"], s["top_k"], s["F"]
    shared = router = score_bias = expert_bias = 0
    if E is not None:
        _, n_shared = _first(cfg, "n_shared_experts", required=False, default=0, allow_zero=True)
        if mt.startswith("nemotron_h"):
            shared_w = (_int_key(cfg, "moe_shared_expert_intermediate_size")
                        if _present(cfg, "moe_shared_expert_intermediate_size") else F)
            shared = n_shared * ffn(shared_w)
        else:
            shared = n_shared * ffn(F)
        if _present(cfg, "shared_expert_intermediate_size"):  # Qwen-MoE: one shared expert and its gate
            width = _int_key(cfg, "shared_expert_intermediate_size", allow_zero=True)
            shared += ffn(width) + d if width else 0
        if mt.startswith("llama4"):  # Llama 4: an implicit shared expert of width intermediate_size
            shared += ffn(s["F_dense"])
        # the sigmoid router's correction bias: DeepSeek-V3 (HF topk_method "noaux_tc"; DeepSeek's own
        # inference config score_func "sigmoid", whose Gate holds a bias per expert) and Nemotron-H
        score_bias = E if (mt.startswith(("deepseek_v3", "nemotron_h")) or cfg.get("topk_method") == "noaux_tc"
                           or cfg.get("score_func") == "sigmoid") else 0
        router = d * E
        if mt.startswith("gpt_oss"):  # gpt-oss: router bias, and per expert gate_up (2F) and down (D) biases
            router += E
            expert_bias = 2 * F + d
    shared_mlp = 0
    if mt.startswith("granitemoehybrid") and _present(cfg, "shared_intermediate_size"):
        shared_mlp = ffn(_int_key(cfg, "shared_intermediate_size", allow_zero=True))  # every layer

    kinds = s["layer_types"] or ("full",) * L
    total = active = V * d + head + d
    if mt.startswith("gemma3n"):  # Gemma-3n: per-layer embeddings, AltUp and LAuReL (transformers' Gemma3n modules)
        a = _int_key(cfg, "altup_num_inputs") if _present(cfg, "altup_num_inputs") else 4
        r = _int_key(cfg, "laurel_rank") if _present(cfg, "laurel_rank") else 64
        p = _int_key(cfg, "hidden_size_per_layer_input") if _present(cfg, "hidden_size_per_layer_input") else 256
        v_pl = (_int_key(cfg, "vocab_size_per_layer_input") if _present(cfg, "vocab_size_per_layer_input")
                else 262144)
        per_layer = (d + a * a + a ** 3 + a * d + d) + (2 * d * r + d) + (2 * p * d + d)
        extra = v_pl * L * p + L * p * d + p + 2 * (a - 1) * d * d + L * per_layer
        extra -= s["kv_shared"] * (2 * d * K * H + H)  # KV-shared layers have no k_proj, v_proj, k_norm
        total += extra
        active += extra
    for kind, (ffn_kind, width) in zip(kinds, s["ffn"]):
        layer = mixer(kind) + norms * d + shared_mlp
        if ffn_kind == "dense":
            layer += ffn(width)
        total += layer
        active += layer
        if ffn_kind == "moe":
            total += E * (ffn(F) + expert_bias) + shared + router + score_bias
            active += k * (ffn(F) + expert_bias) + shared + router

    # Multi-token-prediction modules (not part of the main model; counted apart, see ``mtp_params``):
    # each is one decoder layer with full attention and the FFN of the last main layer, fed by a
    # projection 2D x D of [embedding; hidden state] and its norms. DeepSeek-V3's checkpoint stores, in
    # its extra layer, enorm, hnorm, eh_proj, the layer, shared_head.norm and copies of embed_tokens and
    # shared_head.head (V x D each); Qwen3-Next / Qwen3.5 store fc, two pre-fc norms, the layer and a
    # norm, and share the main model's embedding and head (unless mtp_use_dedicated_embeddings).
    mtp_total = mtp_active = 0
    n_mtp = s.get("mtp_layers", 0)
    if n_mtp:
        ffn_kind, width = s["ffn"][-1]
        layer = mixer("full") + norms * d
        layer_total = layer_active = layer + (ffn(width) if ffn_kind == "dense" else 0)
        if ffn_kind == "moe":
            layer_total += E * (ffn(F) + expert_bias) + shared + router + score_bias
            layer_active += k * (ffn(F) + expert_bias) + shared + router
        glue = 2 * d * d + 3 * d
        copies = 2 * V * d if (mt.startswith("deepseek_v3") or _bool_key(cfg, "mtp_use_dedicated_embeddings", False)) \
            else 0
        mtp_total = n_mtp * (layer_total + glue + copies)
        mtp_active = n_mtp * (layer_active + glue + V * d)   # the head's matmul runs for every drafted token
    s["mtp"] = (mtp_total, mtp_active)
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


def from_hf_config(config, name: str | None = None, n_params: int | None = None,
                   n_active_params: int | None = None) -> ModelConfig:
    """Build a ``ModelConfig`` from a Hugging Face ``config.json`` as users download it.

    Reads the key names of Llama, Mistral, Mixtral, Qwen2/2.5, Qwen3, Gemma 2, Gemma 3 (including
    the multimodal file that nests the LM under ``text_config``), DeepSeek-V2/V3, GPT-2 style
    configs (``n_embd``, ``n_layer``, ``n_head``, ``n_inner`` defaulting to 4 * n_embd,
    ``n_positions``), GPT-BigCode and Falcon (``multi_query``, ``num_kv_heads``).

    Rules:
        - ``head_dim`` is the config's value where given (Gemma 2: 256, Gemma 3: 128, Qwen3: 128),
          else the family default of transformers (Gemma: 256), else hidden_size / heads.
        - K = ``num_key_value_heads`` (or ``num_kv_heads``); absent: 1 when ``multi_query`` is
          true, else K = N. Attention is "mha" when K == N, "mqa" when K == 1, else "gqa";
          "mla" when ``kv_lora_rank`` is present (DeepSeek): then ``head_dim`` is
          qk_nope_head_dim + qk_rope_head_dim (192 for DeepSeek), ``n_kv_heads`` the config's
          K (meaningless for the cache, which holds kv_lora_rank + qk_rope_head_dim per layer).
        - Windows: see ``_layer_pattern`` (``use_sliding_window: false`` disables the keys, Qwen;
          ``layer_types``; ``max_window_layers``; ``sliding_window_pattern``; else all layers).
        - MoE: ``d_ff`` is one routed expert's width (``moe_intermediate_size`` where given).
        - Tied embeddings: ``tie_word_embeddings``, else the family default (Gemma, GPT-2,
          GPT-BigCode, Falcon tied; the others untied).
        - ``n_params``: given, or computed by ``count_params`` (and ``n_active_params`` for MoE).

    Args:
        config: the parsed config.json (dict), or its JSON text.
        name: display name; default the config's ``_name_or_path``, architecture or model_type.
        n_params: total parameter count, when known better than the shapes tell.
        n_active_params: parameters used per token (MoE), overriding the computed count.

    Returns:
        the ``ModelConfig``; ``max_context_len`` is ``max_position_embeddings`` (or ``n_positions``);
        ``checkpoint_format`` is ``checkpoint_weight_format`` of the config (its quantization_config).

    Raises:
        ValueError: not a dict or JSON object; a missing hidden size, layer count, head count,
            vocabulary size or FFN width; a non-integer or non-positive value; K not dividing N;
            MLA without ``kv_lora_rank``/``qk_rope_head_dim``/``qk_nope_head_dim``/``v_head_dim``;
            experts without top-k; a bad ``layer_types`` list. Each message names the key.
    """
    if isinstance(config, (str, bytes, bytearray)):
        config = _parse_json_text(config)
    s = _shapes(config)
    total, active = _count(s)
    if n_params is not None:
        total = check_positive_int(n_params, "n_params")
    if n_active_params is not None:
        active = check_positive_int(n_active_params, "n_active_params")
    if s["E"] is not None and active > total:
        raise ValueError(f"n_active_params ({active:,}) exceeds n_params ({total:,})")
    if name is None:
        archs = config.get("architectures")
        name = (config.get("_name_or_path") or (archs[0] if isinstance(archs, list) and archs else None)
                or s["model_type"] or "custom model")
    mla = s["attention"] == "mla"
    return ModelConfig(
        name=plain_name(name), n_params=total, n_layers=s["L"], d_model=s["d"], n_heads=s["N"], n_kv_heads=s["K"],
        head_dim=s["H"], d_ff=s["F"], vocab_size=s["V"], attention=s["attention"],
        kv_lora_rank=s.get("kv_lora_rank") if mla else None,
        qk_rope_head_dim=s.get("qk_rope_head_dim") if mla else None,
        qk_nope_head_dim=s.get("qk_nope_head_dim") if mla else None,
        v_head_dim=s.get("v_head_dim") if mla else None,
        sliding_window=s["window"], layer_types=s["layer_types"],
        n_experts=s["E"], n_experts_per_token=s["top_k"],
        n_active_params=active if s["E"] is not None else None,
        tie_word_embeddings=s["tied"], max_context_len=s["max_ctx"], source="Hugging Face config.json",
        checkpoint_format=checkpoint_weight_format(config)[0],
        attention_chunk_size=s["chunk"], n_kv_shared_layers=s["kv_shared"],
        **{f: s.get(f) for f in OPTIONAL_SHAPE_FIELDS if f != "attention_chunk_size"},
        ssm_state_dtype=s.get("ssm_state_dtype", "fp32"), **_ffn_fields(s),
        n_mtp_layers=s["mtp_layers"], n_mtp_params=s["mtp"][0], n_mtp_active_params=s["mtp"][1],
    )


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


def checkpoint_weight_format(config) -> tuple[str | None, str]:
    """The weight format a checkpoint is stored in, read from its config.json's ``quantization_config``.

    Rules (the keys as transformers' quantizers write them):
        - ``quant_method`` "mxfp4" (gpt-oss) -> "mxfp4"; "fp8" with ``weight_block_size`` [128, 128]
          (DeepSeek-V3, Kimi-K2) -> "fp8-block", other fp8 -> "fp8".
        - "awq" (``bits``/``w_bit``, ``group_size``/``q_group_size``) and "gptq" (``bits``, ``group_size``)
          -> "int4-g128" and the like (groups of 32, 64, 128, 256); group -1 (one scale per output channel)
          -> plain "int4"/"int8".
        - "compressed-tensors" (llm-compressor): the first config group's weights: float 8-bit -> "fp8"
          ("fp8-block" with a 128 x 128 block), float 4-bit in groups of 16 -> "nvfp4", int 4/8-bit ->
          as AWQ/GPTQ.
        - "modelopt" (TensorRT Model Optimizer): ``quant_algo`` "FP8" -> "fp8", "NVFP4" -> "nvfp4".
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
            return "fp8-block", "quant_method fp8, weight_block_size [128, 128]"
        return "fp8", "quant_method fp8" + (f", weight_block_size {block}" if block else "")
    if method in ("awq", "gptq"):
        bits = q.get("bits", q.get("w_bit"))
        group = q.get("group_size", q.get("q_group_size"))
        return _group_name(bits, group), f"quant_method {method}, {bits}-bit, group size {group}"
    if method == "compressed-tensors":
        return _compressed_tensors_format(q)
    if method == "modelopt":
        algo = str(q.get("quant_algo", "")).upper()
        return {"FP8": "fp8", "NVFP4": "nvfp4"}.get(algo), f"quant_method modelopt, quant_algo {algo}"
    return None, f"quant_method {method or 'unnamed'}"


def _parse_json_text(text) -> dict:
    return parse_config_json(text)  # bounded: size, depth, digits, NaN/Infinity (calc/limits.py)


def model_from_json_text(text, name: str | None = None) -> ModelConfig:
    """Build a ``ModelConfig`` from pasted or uploaded config.json text (str or UTF-8 bytes).

    Returns:
        ``from_hf_config`` of the parsed object.

    Raises:
        ValueError: text that is not JSON (the message gives line, column and character
            position), JSON that is not an object, or any error of ``from_hf_config``.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise ValueError(f"config.json text must be a string, got {type(text).__name__}")
    return from_hf_config(_parse_json_text(text), name=name)
