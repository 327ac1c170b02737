"""Reading a Hugging Face ``config.json`` (or Meta/Mistral ``params.json``) into a ``ModelConfig``.

The shapes are read by ``calc.config_shapes``, the parameters counted by ``calc.param_count`` and the
checkpoint's own weight format read by ``calc.checkpoint_format``. The presets' verbatim config.json files
live in ``calc/data/hf_configs/`` (``calc.models.hf_config``); the tests check that ``from_hf_config`` of
each reproduces the preset of ``calc/data/models.json`` exactly, parameter count included. Untrusted text
is bounded by ``calc.limits``.
"""
from __future__ import annotations

from .checkpoint_format import checkpoint_weight_format
from .checks import check_positive_int
from .config_shapes import _ffn_fields, _parse_json_text, _shapes
from .limits import plain_name
from .models import OPTIONAL_SHAPE_FIELDS, ModelConfig
from .param_count import _count


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
        ssm_state_dtype=s.get("ssm_state_dtype", "fp32"), index_key_dtype=s.get("index_key_dtype"), **_ffn_fields(s),
        n_mtp_layers=s["mtp_layers"], n_mtp_params=s["mtp"][0], n_mtp_active_params=s["mtp"][1],
        global_head_dim=s["global_head_dim"], n_global_kv_heads=s["n_global_kv_heads"],
        global_k_eq_v=s["global_k_eq_v"],
    )


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
