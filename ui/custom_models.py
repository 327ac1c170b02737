"""Models the user loads from a config.json: kept for the browser session, and carried in the link
(``cfg=``, ``model_to_param``) so that a copied link reproduces them."""
from __future__ import annotations

import streamlit as st

import calc
from calc.config_json import model_from_json_text
from ui.formats import plain_name


CUSTOM_PREFIX = "custom:"


def _custom_models() -> dict[str, calc.ModelConfig]:
    return st.session_state.setdefault("_custom_models", {})


def get_any_model(model_id: str) -> calc.ModelConfig:
    """A preset by id, or a config.json the user loaded in this browser session ("custom:<name>").

    Raises:
        ValueError: unknown id.
    """
    if model_id.startswith(CUSTOM_PREFIX):
        custom = _custom_models()
        if model_id in custom:
            return custom[model_id]
        raise ValueError(f"the model {model_id[len(CUSTOM_PREFIX):]!r} is not loaded in this session")
    return calc.get_model(model_id)


def add_custom_model(text: str, name: str | None = None) -> str:
    """Parse config.json text, keep it for this session and return its id ("custom:<name>").

    Raises:
        ValueError: the text is not a usable config.json (the message names the key or the JSON error).
    """
    model = model_from_json_text(text, name=name or None)
    # kept as typed ("<b>My</b> model" stays so): the pages escape it where they print it
    model = model.with_changes(name=plain_name(model.name))
    model_id = CUSTOM_PREFIX + model.name
    _custom_models()[model_id] = model
    return model_id


#: URL parameter that carries a config.json-loaded model (``model_to_param``), so that a link reproduces it.
CFG_PARAM = "cfg"


_MAX_CFG_PARAM_CHARS = 8000


def model_to_param(model: calc.ModelConfig) -> str:
    """``model`` as one URL-safe text: the fields that differ from ModelConfig's defaults, as JSON,
    zlib-compressed and base64url-encoded (a Llama-3.2-1B config: about 200 characters)."""
    import base64
    import dataclasses
    import json
    import zlib
    fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model) if getattr(model, f.name) != f.default}
    raw = json.dumps(fields, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")


def dataclasses_replace_name(model: calc.ModelConfig, name: str) -> calc.ModelConfig:
    """``model`` under another display name (the one its link gives it)."""
    import dataclasses
    return dataclasses.replace(model, name=name)


def model_from_param(text: str) -> calc.ModelConfig:
    """The model ``model_to_param`` wrote.

    Raises:
        ValueError: text that is too long, not base64url, not zlib, more than 64 kB unpacked, not a JSON
            object, or fields ModelConfig rejects (the message says which).
    """
    import base64
    import binascii
    import dataclasses
    import json
    import zlib
    if not isinstance(text, str) or not text or len(text) > _MAX_CFG_PARAM_CHARS:
        raise ValueError(f"the model in the link must be 1 to {_MAX_CFG_PARAM_CHARS:,} characters")
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        unpack = zlib.decompressobj()
        raw = unpack.decompress(packed, 65536)
        if unpack.unconsumed_tail:
            raise ValueError("the model in the link unpacks to more than 64 kB")
        fields = json.loads(raw.decode("utf-8"))
    except (binascii.Error, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the model in the link is damaged ({type(exc).__name__})") from None
    known = {f.name for f in dataclasses.fields(calc.ModelConfig)}
    if not isinstance(fields, dict) or not set(fields) <= known or "name" not in fields:
        raise ValueError("the model in the link is not a model description")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    try:
        return calc.ModelConfig(**fields)
    except TypeError as exc:
        raise ValueError(f"the model in the link is not usable: {exc}") from None
