"""Reading the shapes of a Hugging Face ``config.json`` (or Meta/Mistral ``params.json``): the key names
of each family, defaults, the per-layer mixer and FFN patterns, recurrent-state shapes.

``calc.param_count`` counts parameters from these shapes and ``calc.config_json`` builds a ``ModelConfig``
from them. Untrusted text is bounded by ``calc.limits``.
"""
from __future__ import annotations

from .layers import STATE_LAYER_KINDS
from .limits import check_config_dict, check_config_int, parse_config_json


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
    "n_experts_per_token": ("num_experts_per_tok", "num_experts_per_token", "n_activated_experts", "top_k_experts"),
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
    # Gemma4TextConfig: five sliding layers to one global; the global layers' heads 512 wide unless the config
    # says otherwise (its __post_init__ pops global_head_dim with that default)
    "gemma4_text": {"head_dim": 256, "vocab_size": 262144, "max_position_embeddings": 131072, "sliding_window": 512,
                    "sliding_window_pattern": 6, "global_head_dim": 512, "hidden_size_per_layer_input": 256},
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


def _is_deepseek_v4(cfg: dict, model_type: str) -> bool:
    """DeepSeek-V4 (``DeepseekV4ForCausalLM``): model_type deepseek_v4, or a config with its ``compress_ratios``
    and grouped output projection (``o_lora_rank``), as sgl-project's FP8 copy whose model_type is deepseek_ref."""
    return model_type.startswith("deepseek_v4") or (_present(cfg, "compress_ratios") and _present(cfg, "o_lora_rank"))


def _family(cfg: dict, outer: dict) -> str:
    """The architecture family that decides the parameter-count formula and key defaults."""
    model_type = str(cfg.get("model_type") or outer.get("model_type") or "").lower()
    if _is_deepseek_v4(cfg, model_type):
        return "dsv4"
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


def _refuse_per_kind_widths(cfg: dict, model_type: str) -> None:
    """Refuse a config whose layers differ in attention shapes that ``ModelConfig`` cannot hold, so that its KV
    cache and weights are never priced wrong without a word:

    - outside Gemma 4, full-attention layers with their own head width or KV heads (``global_head_dim``,
      ``num_global_key_value_heads``, ``attention_k_eq_v``; MiMo-V2-Flash's ``swa_head_dim``,
      ``swa_num_key_value_heads``, ``swa_v_head_dim``), values narrower than keys outside MLA (MiMo-V2-Flash's
      ``v_head_dim`` 128 beside ``head_dim`` 192), or a sparse-attention indexer shared across layers (GLM-5.2's
      ``indexer_types``);
    - in Gemma 4, whose global layers' own shapes are read (``_global_shapes``), the features of its E2B and E4B
      models: per-layer embeddings (``hidden_size_per_layer_input``, 256 by transformers' default), KV-shared layers
      (``num_kv_shared_layers``) and double-wide MLPs (``use_double_wide_mlp``).

    Raises:
        ValueError: naming the keys and what they would change.
    """
    same_as = {"global_head_dim": "head_dim", "num_global_key_value_heads": "num_key_value_heads",
               "swa_head_dim": "head_dim", "swa_num_key_value_heads": "num_key_value_heads",
               "swa_v_head_dim": "v_head_dim"}
    if model_type.startswith("gemma4"):  # its global layers' shapes are read (``_global_shapes``); not these:
        keys = [k for k, on in (("hidden_size_per_layer_input", check_config_int(
                    cfg.get("hidden_size_per_layer_input") or 0, "hidden_size_per_layer_input", minimum=0) > 0),
                ("num_kv_shared_layers", bool(cfg.get("num_kv_shared_layers"))),
                ("use_double_wide_mlp", _bool_key(cfg, "use_double_wide_mlp", False))) if on]
        if keys:
            raise ValueError(f"config (model_type {model_type!r}) sets {', '.join(repr(k) for k in keys)}: Gemma 4's "
                             "per-layer embeddings, KV-shared layers and double-wide MLPs (its E2B and E4B models) "
                             "are not modelled by calc, so it refuses this config rather than give a wrong number "
                             "(the 26B-A4B and 31B models, without them, are read)")
        return
    keys = [k for k, base in same_as.items() if _present(cfg, k) and cfg[k] != cfg.get(base)]
    if _bool_key(cfg, "attention_k_eq_v", False):
        keys.append("attention_k_eq_v")
    if (_present(cfg, "v_head_dim") and _present(cfg, "head_dim") and not _present(cfg, "kv_lora_rank")
            and cfg["v_head_dim"] != cfg["head_dim"]):
        keys.append("v_head_dim")  # values narrower than keys outside MLA (MiMo-V2-Flash: 128 beside 192)
    if isinstance(cfg.get("indexer_types"), list) and any(t != "full" for t in cfg["indexer_types"]):
        keys.append("indexer_types")  # GLM-5.2: one sparse-attention indexer shared by several layers
    if keys:
        raise ValueError(f"config (model_type {model_type or 'unknown'!r}) sets {', '.join(repr(k) for k in keys)}: "
                         "attention shapes that differ from layer to layer (full-attention layers with their own head "
                         "width or KV heads, values narrower than keys, or an indexer shared across layers). calc "
                         "models one head width, one KV-head count and one indexer per layer for every layer, so it "
                         "cannot price this model's KV cache or weights right, and refuses it rather than give a "
                         "wrong number")


def _global_shapes(cfg: dict, model_type: str, n_kv: int, head_dim: int) -> dict:
    """Gemma 4's global ("full") layers' own shapes, as transformers' Gemma4TextConfig sets them: ``global_head_dim``
    (default 512), ``num_global_key_value_heads`` where ``attention_k_eq_v`` is set (its __post_init__ overrides
    the global layers' KV heads only then), and ``attention_k_eq_v`` (no V projection in those layers). Each is
    None (False) where it equals the other layers' or the config is not Gemma 4's.

    Raises:
        ValueError: a value that is not a positive whole number.
    """
    out = {"global_head_dim": None, "n_global_kv_heads": None, "global_k_eq_v": False}
    if not model_type.startswith("gemma4"):
        return out
    k_eq_v = _bool_key(cfg, "attention_k_eq_v", False)
    h = _int_key(cfg, "global_head_dim") if _present(cfg, "global_head_dim") else head_dim
    k = _int_key(cfg, "num_global_key_value_heads") if k_eq_v and _present(cfg, "num_global_key_value_heads") else n_kv
    out.update(global_head_dim=h if h != head_dim else None, n_global_kv_heads=k if k != n_kv else None,
               global_k_eq_v=k_eq_v)
    return out


def _shapes(config) -> dict:
    """Read every shape the calc core needs from a HF config; the heart of ``from_hf_config``."""
    cfg, outer = _text_config(config)
    model_type = str(cfg.get("model_type") or outer.get("model_type") or "").lower()
    cfg = _resolved(cfg, model_type)
    family = _family(cfg, outer)
    s: dict = {"family": family, "model_type": model_type}
    _refuse_per_kind_widths(cfg, model_type)

    _, d = _first(cfg, "d_model")
    if model_type.startswith("nemotron_h") and isinstance(cfg.get("layers_block_type"), list):
        # transformers' NemotronHConfig (5.x): the layer count is the list's length; num_hidden_layers is
        # deprecated, ignored where it differs, and absent from newer configs (Nemotron-3 Ultra)
        cfg = dict(cfg, num_hidden_layers=len(cfg["layers_block_type"]))
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
    elif family == "dsv4":
        # DeepSeek-V4 (inference/model.py Attention): one KV head of head_dim = 512, its last qk_rope_head_dim
        # rotary, serving as key and value; calc's MLA latent d_c + d_h^R = (head_dim - rope) + rope.
        attention = "mla"
        for key in ("head_dim", "qk_rope_head_dim", "q_lora_rank", "o_lora_rank", "o_groups"):
            if not _present(cfg, key):
                raise ValueError(f"DeepSeek-V4 config (model_type {model_type or 'unknown'!r}) is missing {key!r}")
            s[key] = _int_key(cfg, key)
        head_dim, rope = s["head_dim"], s["qk_rope_head_dim"]
        if rope >= head_dim or (n_heads * head_dim) % s["o_groups"]:
            raise ValueError(f"config key 'qk_rope_head_dim' ({rope}) must be below 'head_dim' ({head_dim}) and "
                             f"'o_groups' ({s['o_groups']}) must divide the heads' width ({n_heads} x {head_dim})")
        s.update(kv_lora_rank=head_dim - rope, qk_nope_head_dim=head_dim - rope, v_head_dim=head_dim)
        s["hc_mult"] = _int_key(cfg, "hc_mult") if _present(cfg, "hc_mult") else 1
        s["n_hash"] = _int_key(cfg, "num_hash_layers", allow_zero=True) if _present(cfg, "num_hash_layers") else 0
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
    if model_type.startswith("minimax"):
        # MiniMax's MTP modules (num_mtp_modules: 7 in MiniMax-M3's config, 3 in M2.5's) are not described by the
        # config; engines skip their weights (SGLang's minimax_m3.py get_spec_layer_idx_from_weight_name) and
        # InferenceX drafts with EAGLE3: not counted
        s["mtp_layers"] = 0
    s.update(_global_shapes(cfg, model_type, n_kv, head_dim))
    latent = cfg.get("moe_latent_size")  # Nemotron-3 Super: the routed experts work in this width
    s["moe_latent_dim"] = (_int_key(cfg, "moe_latent_size") if latent is not None and n_experts is not None
                           else None)
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
    ``no_rope_layer_interval``); MiniMax-M3 ``sparse_attention_config`` (``_sparse_attention``).
    """
    if _is_deepseek_v4(cfg, model_type):
        return [_KIND_OF_RATIO.get(r, "hca") for r in _compress_ratios(cfg, n_layers)]
    sparse = _sparse_attention(cfg, n_layers)
    if sparse is not None:
        return ["sparse" if on else "full" for on in sparse]
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


def _sparse_config(cfg: dict) -> dict | None:
    """MiniMax-M3's ``sparse_attention_config`` when it switches sparse attention on, else None."""
    sparse = cfg.get("sparse_attention_config")
    if sparse is None:
        return None
    if not isinstance(sparse, dict):
        raise ValueError(f"config key 'sparse_attention_config' must be a JSON object, got {type(sparse).__name__}")
    return sparse if _bool_key(sparse, "use_sparse_attention", False) else None


def _sparse_attention(cfg: dict, n_layers: int) -> list[bool] | None:
    """Per layer, whether it runs MiniMax Sparse Attention (``sparse_attention_config.sparse_attention_freq``: 1
    sparse, 0 full; SGLang's ``get_minimax_sparse_layer_ids``); None for a config without it. calc models the
    index cache as keys only (``sparse_disable_index_value`` on every sparse layer, as MiniMax-M3 ships) and no
    initial blocks (``sparse_init_block`` 0): other values are refused."""
    sparse = _sparse_config(cfg)
    if sparse is None:
        return None
    freq = _per_layer_list(sparse, "sparse_attention_freq", n_layers)
    if any(f not in (0, 1) for f in freq):
        raise ValueError("config key 'sparse_attention_freq' entries must be 0 (full) or 1 (sparse)")
    no_value = sparse.get("sparse_disable_index_value", [1] * n_layers)
    no_value = [no_value] * n_layers if isinstance(no_value, (bool, int)) else _per_layer_list(
        sparse, "sparse_disable_index_value", n_layers)
    if any(on and not off for on, off in zip(freq, no_value)):
        raise ValueError("config key 'sparse_disable_index_value' must be set on every sparse layer: calc models "
                         "an index cache of keys only (MiniMax-M3)")
    if _present(sparse, "sparse_init_block") and check_config_int(sparse["sparse_init_block"], "sparse_init_block",
                                                                   minimum=0):
        raise ValueError("config key 'sparse_init_block' must be 0: calc models the top-k and the local block only")
    return [bool(f) for f in freq]


#: DeepSeek-V4's ``compress_ratios`` entries -> layer kind (inference/model.py ``Attention``: 0 no compressor,
#: a window only; 4 an overlapping compressor and an indexer; any other ratio a compressor alone).
_KIND_OF_RATIO = {0: "sliding", 4: "csa"}


def _compress_ratios(cfg: dict, n_layers: int) -> list[int]:
    """DeepSeek-V4's ``compress_ratios`` for the main layers: one entry per layer, the list's extra entries
    being the MTP modules' (DeepSeek-V4-Pro lists 62 for 61 layers, the last 0). Every ratio that is neither 0
    nor 4 must be the same one (the hca layers' ratio)."""
    raw = cfg.get("compress_ratios")
    if not isinstance(raw, (list, tuple)) or len(raw) < n_layers:
        raise ValueError(f"config key 'compress_ratios' must list at least one ratio per layer ({n_layers}), got "
                         f"{len(raw) if isinstance(raw, (list, tuple)) else raw!r}")
    ratios = [check_config_int(r, "compress_ratios", minimum=0) for r in raw[:n_layers]]
    heavy = sorted({r for r in ratios if r not in _KIND_OF_RATIO})
    if len(heavy) > 1:
        raise ValueError(f"config key 'compress_ratios' has more than one heavy ratio {heavy}: calc models one "
                         "ratio for the csa layers (4) and one for the others")
    return ratios


def _merge_kinds(cfg: dict, kinds: list[str]):
    """(sliding_window, layer_types, attention_chunk_size) for a hybrid stack of ``kinds``."""
    window_key = "sliding_window" if _present(cfg, "sliding_window") else "sliding_window_size"
    window = _int_key(cfg, window_key) if _present(cfg, window_key) else None
    windowed = {"sliding", "csa", "hca"} & set(kinds)
    if windowed and window is None:
        raise ValueError(f"config lists {'sliding' if 'sliding' in windowed else 'compressed'} layers but "
                         "'sliding_window' is not set")
    if not windowed:
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
    ``index_head_dim`` 128, ``index_topk`` 2048); DeepSeek-V4's ``compress_ratios`` give the csa ratio (4)
    and the hca ratio (the other non-zero entry, 128); MiniMax-M3's ``sparse_attention_config``
    (``sparse_num_index_heads`` 4, ``sparse_index_dim`` 128, ``sparse_topk_blocks`` 16 of ``sparse_block_size``
    128; its index keys in the model's dtype, bf16).
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
    if "sparse" in kinds:
        sparse = _sparse_config(cfg)

        def sget(key):
            if not _present(sparse, key):
                raise ValueError(f"config key 'sparse_attention_config' is missing {key!r}")
            return _int_key(sparse, key)
        out.update(index_n_heads=sget("sparse_num_index_heads"), index_head_dim=sget("sparse_index_dim"),
                   index_topk=sget("sparse_topk_blocks"), index_block_size=sget("sparse_block_size"),
                   index_key_dtype="bf16")
    if "csa" in kinds:
        out["csa_compress_ratio"] = 4
    if "hca" in kinds:
        out["hca_compress_ratio"] = next(r for r in _compress_ratios(cfg, len(layer_types))
                                         if r not in _KIND_OF_RATIO)
    return out


def _ffn_layout(cfg: dict, model_type: str, n_layers: int, has_experts: bool, d_ff_dense: int,
                widths: list[int] | None) -> list[tuple[str, int]]:
    """Per-layer FFN: ("moe", 0), ("dense", width) or ("none", 0).

    MoE placement: DeepSeek ``first_k_dense_replace`` and ``moe_layer_freq``; Qwen-MoE
    ``decoder_sparse_step`` and ``mlp_only_layers``; Llama 4 ``moe_layers`` or
    ``interleave_moe_layer_step`` (dense layers of width ``intermediate_size_mlp``); Jamba
    ``expert_layer_period``/``expert_layer_offset``; MiniMax-M3's per-layer ``moe_layer_freq`` list (dense
    layers of width ``dense_intermediate_size``); Nemotron-H's pattern (M and * layers have no
    FFN, - a dense one, E an MoE one).
    """
    dense_w = d_ff_dense
    if model_type.startswith("llama4") and _present(cfg, "intermediate_size_mlp"):
        dense_w = _int_key(cfg, "intermediate_size_mlp")
    if _present(cfg, "dense_intermediate_size"):  # MiniMax-M3: its dense layers' width beside 3,072-wide experts
        dense_w = _int_key(cfg, "dense_intermediate_size")
    out = [("dense", w) for w in (widths or [dense_w] * n_layers)]
    if _present(cfg, "hybrid_override_pattern"):
        return [("moe", 0) if c == "E" else ("dense", dense_w) if c == "-" else ("none", 0)
                for c in cfg["hybrid_override_pattern"]]
    if model_type.startswith("nemotron_h") and _present(cfg, "layers_block_type"):
        # the same rule in transformers 5's list form: "moe" an MoE FFN, "mlp" a dense one, a mixer none
        return [("moe", 0) if t == "moe" else ("dense", dense_w) if t == "mlp" else ("none", 0)
                for t in _per_layer_list(cfg, "layers_block_type", n_layers)]
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
    if isinstance(cfg.get("moe_layer_freq"), (list, tuple)):  # MiniMax-M3: one entry per layer, 0 dense, 1 MoE
        flags = _per_layer_list(cfg, "moe_layer_freq", n_layers)
        moe = [m and bool(f) for m, f in zip(moe, flags)]
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
        if mt.startswith(("llama4", "gemma4")):  # Gemma 4's MoE layers keep their dense MLP beside the experts
            shared += s["F_dense"]
    two = s["family"] in ("gpt2", "falcon") or mt.startswith("nemotron_h")
    positions = None
    if s["family"] == "gpt2":  # wpe: n_positions x D (the count's n_pos, ``_count``)
        positions = _first(cfg, "max_context_len", required=False, default=1024)[1]
    return dict(ffn_layer_types=None if kinds == default else kinds,
                d_ff_dense=dense[0] if dense and dense[0] != s["F"] else None,
                d_ff_shared=shared, ffn_matrices=2 if two else 3, learned_positions=positions,
                moe_latent_dim=s.get("moe_latent_dim"))


def _parse_json_text(text) -> dict:
    return parse_config_json(text)  # bounded: size, depth, digits, NaN/Infinity (calc/limits.py)
