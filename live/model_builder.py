"""Build or load the causal LM that the live tab measures (imports torch; runs in the worker).

Offline default: the real architecture built from its config.json with random weights (timing
depends only on shapes and dtypes). Real weights load only from files already on this machine
(``local_files_only=True``, ``HF_HUB_OFFLINE=1``) and never with ``trust_remote_code``.
Facts used (transformers 5.x): ``from_config`` takes ``dtype`` explicitly (else ``config.dtype``);
``from_pretrained`` defaults to the checkpoint dtype, so ``dtype`` is always passed.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from calc import ModelConfig, from_hf_config
from calc.limits import MAX_CONFIG_CHARS, parse_config_json, short_repr

from .run_spec import (RunSpec, available_memory_bytes, check_config_fits, preset_hf_config, preset_hub_id, preset_name,
                   resolve_weights_path, short_error)

TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
#: Keys of a config.json that would point transformers at code outside the library; always dropped.
REMOTE_CODE_KEYS = ("auto_map", "custom_pipelines")


@dataclass
class LoadedModel:
    """A model ready to time.

    Fields:
        model: the ``torch.nn.Module`` (eval mode, on the target device, in ``dtype``).
        hf_config: the config as a plain dict (what the model was built from).
        calc_model: calc's ``ModelConfig`` of the same architecture, ``n_params`` = the built
            model's unique parameter count (tied embeddings counted once).
        label: display name; weights: "random" or "pretrained"; source: where it came from.
        tokenizer: a tokenizer found on this machine, or None; tokenizer_note: why there is none.
        dtype, device: as requested.
        notes: remarks for the page (e.g. "auto_map ignored: remote code is never run").
    """

    model: torch.nn.Module
    hf_config: dict
    calc_model: ModelConfig
    label: str
    weights: str
    source: str
    tokenizer: object | None
    tokenizer_note: str
    dtype: str
    device: str
    notes: list


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of a live dtype name ("fp32", "bf16", "fp16").

    Raises:
        ValueError: another name.
    """
    if name not in TORCH_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(TORCH_DTYPES)}; got {name!r}")
    return TORCH_DTYPES[name]


def check_device(device: str, dtype: str) -> None:
    """Raise a clear ValueError when ``device``/``dtype`` cannot run here.

    Raises:
        ValueError: "cuda" without a CUDA device; bf16 on a GPU without bf16 support.
    """
    if device == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("device 'cuda' was chosen but torch sees no CUDA GPU on this machine; use 'cpu'")
        if dtype == "bf16" and not torch.cuda.is_bf16_supported():
            raise ValueError("this GPU does not support bf16; choose fp16 or fp32")
    elif device != "cpu":
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")


def clean_config(config: dict) -> tuple[dict, list[str]]:
    """Copy of a config.json dict without the keys that could run remote code, and notes on what was removed.

    Raises:
        ValueError: not a dict, no ``model_type``, or a ``model_type`` transformers does not ship
            (such models need remote code, which is never run here).
    """
    from transformers import CONFIG_MAPPING

    if not isinstance(config, dict):
        raise ValueError(f"config.json must hold a JSON object, got {type(config).__name__}")
    cfg = dict(config)
    notes = []
    for k in REMOTE_CODE_KEYS:
        if k in cfg:
            cfg.pop(k)
            notes.append(f"'{k}' ignored: remote code is never run (trust_remote_code stays False)")
    if cfg.get("trust_remote_code"):
        cfg.pop("trust_remote_code")
        notes.append("'trust_remote_code' ignored")
    model_type = cfg.get("model_type")
    if not model_type:
        raise ValueError("config.json has no 'model_type', so transformers cannot tell which architecture to build")
    if model_type not in CONFIG_MAPPING:
        raise ValueError(f"model_type {model_type!r} is not built into transformers; "
                         "models that need remote code are not run here")
    return cfg, notes


def check_value_types(config: dict) -> None:
    """Refuse values whose type differs from the default of the transformers config class of the same
    ``model_type`` (a string where a bool or a number belongs), before transformers raises on them.

    None is accepted everywhere (transformers' own "not set"); lists are accepted where a number is the
    default (token ids may be lists).

    Raises:
        ValueError: "config key 'tie_word_embeddings' must be true or false, got 'yes'", and the like.
    """
    from transformers import CONFIG_MAPPING

    try:
        defaults = CONFIG_MAPPING[config["model_type"]]()
    except Exception:  # noqa: BLE001 - a class without defaults: nothing to compare against
        return
    for key, value in config.items():
        if value is None or not isinstance(key, str) or key.startswith("_") or not hasattr(defaults, key):
            continue
        default = getattr(defaults, key, None)
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValueError(f"config key {key!r} must be true or false, got {short_repr(value)}")
        elif isinstance(default, (int, float)):
            if isinstance(value, bool) or not isinstance(value, (int, float, list)):
                raise ValueError(f"config key {key!r} must be a number, got {short_repr(value)}")


def hf_config_object(config: dict):
    """A transformers ``PretrainedConfig`` from a cleaned config dict (``AutoConfig.for_model``).

    Raises:
        ValueError: transformers rejects the values (the message says which).
    """
    from transformers import AutoConfig

    cfg, _ = clean_config(config)
    check_value_types(cfg)
    kwargs = {k: v for k, v in cfg.items() if k not in ("model_type", "transformers_version")}
    try:
        return AutoConfig.for_model(cfg["model_type"], **kwargs)
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds; the page needs one line
        raise ValueError(f"transformers could not read this config.json ({short_error(e)})") from None


def count_params(model: torch.nn.Module) -> int:
    """Unique parameters of ``model`` (a tied embedding/head counted once)."""
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def build_random(config: dict, dtype: str = "fp32", device: str = "cpu", seed: int = 0) -> torch.nn.Module:
    """The architecture of ``config`` with random weights, built directly on ``device`` in ``dtype``.

    Uses ``AutoModelForCausalLM.from_config(cfg, dtype=...)`` under ``torch.device(device)``
    (``device="meta"`` builds instantly, for counting). Weights get the library's standard init.

    Raises:
        ValueError: a bad config or dtype.
    """
    from transformers import AutoModelForCausalLM

    cfg = hf_config_object(config)
    torch.manual_seed(seed)
    try:
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(cfg, dtype=torch_dtype(dtype))
    except Exception as e:  # noqa: BLE001 - transformers and torch raise many kinds; the page needs one line
        raise ValueError(f"could not build this architecture ({short_error(e)})") from None
    return model.eval()


def tiny_width_config(config: dict, n_layers: int | None = None) -> dict:
    """The same architecture at a tiny width: hidden 2 x heads, FFN 2 x hidden, vocab 256, same attention heads.

    Keeps the depth (or ``n_layers``), the layer pattern and the attention shape (query heads, KV
    heads, head dim), so timing it measures the per-layer and per-step overhead of eager PyTorch,
    attention kernel launches included, with almost no weight bytes or FLOPs (the tiny-hidden-size
    idea of transformers#43089; DESIGN.md "roofline + per-step overhead").
    """
    cfg, _ = clean_config(config)
    depth = int(n_layers or cfg.get("num_hidden_layers") or cfg.get("n_layer"))
    n_heads = int(cfg.get("num_attention_heads") or cfg.get("n_head"))
    head_dim = int(cfg.get("head_dim") or int(cfg["hidden_size"]) // n_heads)
    hidden = 2 * n_heads  # transformers requires hidden_size to be a multiple of the head count
    cfg.update(hidden_size=hidden, intermediate_size=2 * hidden, head_dim=head_dim, vocab_size=256, num_hidden_layers=depth,
               tie_word_embeddings=True)
    for k in ("moe_intermediate_size", "shared_expert_intermediate_size"):
        if k in cfg:
            cfg[k] = 2 * hidden
    if isinstance(cfg.get("layer_types"), list):
        cfg["layer_types"] = cfg["layer_types"][:depth]
    if "max_window_layers" in cfg:
        cfg["max_window_layers"] = min(int(cfg["max_window_layers"]), depth)
    return cfg


def _find_tokenizer(where: str | None):
    """A tokenizer already on this machine (local dir or cached hub id), or (None, why)."""
    if not where:
        return None, "no tokenizer is known for this model, so the output is shown as token ids"
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(where, local_files_only=True, trust_remote_code=False), ""
    except Exception:  # noqa: BLE001 - any failure means "not available offline"
        return None, (f"no tokenizer for {where} is on this machine (nothing is downloaded), "
                      "so the output is shown as token ids")


def _read_json_file(path: Path) -> dict:
    """A config.json file read with calc's guarded reader (size, depth, digits)."""
    try:
        with open(path, "rb") as f:
            data = f.read(4 * MAX_CONFIG_CHARS + 1)
    except OSError:
        raise ValueError(f"{path.name} could not be read") from None
    return parse_config_json(data)


def _free_bytes(device: str) -> float | None:
    if device == "cuda":
        return float(torch.cuda.mem_get_info()[0])
    return available_memory_bytes()


def load_model(spec: RunSpec) -> LoadedModel:
    """Build or load the model a ``RunSpec`` asks for.

    - "preset": the shipped config.json, random weights; tokenizer only if already cached.
    - "config": the pasted config.json, random weights.
    - "weights": ``from_pretrained(path, dtype=..., local_files_only=True, trust_remote_code=False)``
      with ``HF_HUB_OFFLINE=1``, from a folder below the server's models folder only
      (``spec.resolve_weights_path``).

    Every config is read by calc first (``calc.limits``: sizes within plausible ranges) and its weights
    must fit in the free memory (``spec.check_config_fits``) before anything is allocated.

    Raises:
        ValueError: unknown preset, invalid JSON, a missing path, an architecture transformers does
            not ship, a device/dtype this machine cannot run; each message says what to fix.
    """
    check_device(spec.device, spec.dtype)
    notes: list[str] = []
    tokenizer, tok_note = None, ""
    where_free = "this GPU" if spec.device == "cuda" else "this machine"
    if spec.source in ("preset", "config"):
        if spec.source == "preset":
            raw = preset_hf_config(spec.preset_id)
            label = preset_name(spec.preset_id)
            source = f"config.json of {preset_hub_id(spec.preset_id) or label} (shipped with the app)"
            tok_where = preset_hub_id(spec.preset_id)
        else:
            raw = parse_config_json(spec.config_json)
            label = str(raw.get("_name_or_path") or (raw.get("architectures") or ["custom model"])[0])[:80] \
                if isinstance(raw.get("architectures") or [], list) else "custom model"
            source = "pasted config.json"
            tok_where = None
        # calc's reader first (plausible sizes, its messages), then the memory the weights need.
        check_config_fits(raw, spec.dtype, _free_bytes(spec.device), where_free)
        cfg, notes = clean_config(raw)
        model = build_random(cfg, spec.dtype, spec.device, spec.seed)
        weights = "random"
        tokenizer, tok_note = _find_tokenizer(tok_where)
    else:
        os.environ["HF_HUB_OFFLINE"] = "1"
        path = resolve_weights_path(spec.weights_path)
        raw = _read_json_file(path / "config.json")
        check_config_fits(raw, spec.dtype, _free_bytes(spec.device), where_free)
        cfg, notes = clean_config(raw)
        from transformers import AutoModelForCausalLM

        try:
            with torch.device(spec.device):
                model = AutoModelForCausalLM.from_pretrained(
                    str(path), config=hf_config_object(cfg), dtype=torch_dtype(spec.dtype), local_files_only=True,
                    trust_remote_code=False)
        except ValueError:
            raise
        except Exception as e:  # noqa: BLE001
            raise ValueError(f"could not load the weights of {path.name} ({short_error(e)})") from None
        model = model.eval()
        label, source, weights = path.name, f"weights from the models folder: {path.name}", "pretrained"
        tokenizer, tok_note = _find_tokenizer(str(path))
    calc_model = calc_model_for(cfg, label, model)
    return LoadedModel(model=model, hf_config=cfg, calc_model=calc_model, label=label, weights=weights,
                       source=source, tokenizer=tokenizer, tokenizer_note=tok_note, dtype=spec.dtype,
                       device=spec.device, notes=notes)


def calc_model_for(config: dict, label: str, model: torch.nn.Module | None = None) -> ModelConfig:
    """calc's ``ModelConfig`` of ``config``; ``n_params`` from the built model when given.

    Raises:
        ValueError: calc cannot read the config (its message names the key).
    """
    n = count_params(model) if model is not None else None
    return from_hf_config(config, name=label, n_params=n)
