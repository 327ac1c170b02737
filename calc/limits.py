"""Plausible ranges for every size that enters the calculator, and a guarded config.json reader.

The app is one server shared by a class or a team: any visitor's link or pasted config.json reaches
the same process. A size nobody could run (two billion layers, a vocabulary of 10^15) is therefore
refused before any arithmetic, with one sentence naming the key and the limit, instead of being
carried into tables, charts or the live model builder, where it would cost memory and seconds.

The limits sit one to two orders of magnitude above the largest published decoder-only models, so
no real config.json is refused:

========================  =============  ==========================================================
quantity                  limit          largest published value (config.json of the model)
========================  =============  ==========================================================
layers L                  1,024          126 (Llama-3.1-405B), 96 (GPT-3 175B)
hidden size D             131,072        18,432 (PaLM 540B), 16,384 (Llama-3.1-405B)
FFN width F               1,048,576      73,728 (PaLM 540B), 53,248 (Llama-3.1-405B)
heads N, KV heads K       16,384         128 (DeepSeek-V3, Llama-3.1-405B)
head dim H                4,096          256 (Gemma 2/3), 192 (DeepSeek MLA q/k)
vocabulary V              4,194,304      262,208 (Gemma 3)
routed experts E          4,096          384 (Kimi K2), 256 (DeepSeek-V3)
context / window tokens   134,217,728    10,485,760 (Llama 4 Scout)
parameters                1e15           ~2e12 (the largest announced MoE models)
========================  =============  ==========================================================

Formats of a pasted config.json: at most ``MAX_CONFIG_CHARS`` characters, nesting at most
``MAX_JSON_DEPTH`` deep, integers of at most ``MAX_INT_DIGITS`` digits, no NaN or Infinity (but for
Mamba2's ``time_step_limit``, see ``parse_config_json``).
"""
from __future__ import annotations

import json
import math
from numbers import Integral, Real

#: quantity -> (largest accepted value, what one unit is called in messages).
LIMITS: dict[str, tuple[int, str]] = {
    "n_layers": (1024, "layers"),
    "d_model": (131_072, "hidden units"),
    "d_ff": (1_048_576, "FFN units"),
    "n_heads": (16_384, "heads"),
    "n_kv_heads": (16_384, "KV heads"),
    "head_dim": (4096, "elements per head"),
    "vocab_size": (4_194_304, "tokens"),
    "n_experts": (4096, "experts"),
    "n_experts_per_token": (4096, "experts"),
    "context": (134_217_728, "tokens"),
    "latent": (65_536, "elements"),
    "n_params": (10**15, "parameters"),
    "count": (2**31 - 1, ""),  # any other integer a config gives (a ratio, an index, a count)
}

#: ModelConfig field -> quantity of ``LIMITS``.
FIELD_LIMITS: dict[str, str] = {
    "n_layers": "n_layers", "d_model": "d_model", "d_ff": "d_ff", "n_heads": "n_heads",
    "n_kv_heads": "n_kv_heads", "head_dim": "head_dim", "vocab_size": "vocab_size",
    "n_experts": "n_experts", "n_experts_per_token": "n_experts_per_token",
    "sliding_window": "context", "max_context_len": "context", "kv_lora_rank": "latent",
    "qk_rope_head_dim": "head_dim", "qk_nope_head_dim": "head_dim", "v_head_dim": "head_dim",
    "n_params": "n_params", "n_active_params": "n_params", "kv_sharing": "n_layers",
}

#: config.json key (every family's spelling that calc reads) -> quantity of ``LIMITS``.
CONFIG_KEY_LIMITS: dict[str, str] = {
    **{k: "d_model" for k in ("hidden_size", "n_embd", "d_model", "dim")},
    **{k: "n_layers" for k in ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "first_k_dense_replace",
                               "n_dense_layers", "max_window_layers", "sliding_window_pattern")},
    **{k: "n_heads" for k in ("num_attention_heads", "n_head", "n_heads")},
    **{k: "n_kv_heads" for k in ("num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads")},
    **{k: "d_ff" for k in ("intermediate_size", "n_inner", "ffn_hidden_size", "hidden_dim", "inter_dim",
                           "moe_intermediate_size", "moe_inter_dim", "shared_expert_intermediate_size")},
    **{k: "vocab_size" for k in ("vocab_size", "padded_vocab_size")},
    **{k: "context" for k in ("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "sliding_window",
                              "sliding_window_size")},
    **{k: "n_experts" for k in ("num_local_experts", "num_experts", "n_routed_experts", "n_shared_experts")},
    **{k: "n_experts_per_token" for k in ("num_experts_per_tok", "num_experts_per_token", "n_activated_experts")},
    **{k: "head_dim" for k in ("head_dim", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")},
    **{k: "latent" for k in ("kv_lora_rank", "q_lora_rank")},
}

MAX_CONFIG_CHARS = 2_000_000   # a config.json with a label table is ~100 kB; 2 MB is generous
MAX_JSON_DEPTH = 32            # real config.json files nest 3-4 deep
MAX_INT_DIGITS = 30            # 10^30 is far beyond any size; int() of longer text is slow and pointless
MAX_TEXT_CHARS = 200           # names and other short text shown on a page


def limit_of(quantity: str) -> int:
    """The largest accepted value of a quantity of ``LIMITS`` ("n_layers" -> 1024).

    Raises:
        ValueError: unknown quantity.
    """
    if quantity not in LIMITS:
        raise ValueError(f"unknown quantity {quantity!r}; known: {', '.join(LIMITS)}")
    return LIMITS[quantity][0]


def short_repr(value, max_chars: int = 60) -> str:
    """``repr(value)`` cut to ``max_chars`` characters (with "…"), safe for huge or deeply nested values."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f"a {type(value).__name__}"
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def check_range(value, what: str, quantity: str, minimum: int = 1) -> int:
    """Return ``value`` as an int when it is an integer in ``[minimum, limit of quantity]``.

    Args:
        value: the number (int, or a float with an integral value; bools are refused).
        what: how the message names it ("config key 'num_hidden_layers'", "n_layers").
        quantity: a key of ``LIMITS``.
        minimum: the smallest accepted value (1, or 0 where zero means "none").

    Raises:
        ValueError: one sentence naming ``what``, the value and the limit, e.g. "config key
            'num_hidden_layers' is 2,000,000,000, above the limit of 1,024 layers that this
            calculator accepts".
    """
    top, unit = LIMITS[quantity]
    kind = "positive" if minimum >= 1 else "non-negative"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{what} must be a {kind} integer, got {short_repr(value)}")
    if not isinstance(value, Integral):
        if not math.isfinite(value) or not float(value).is_integer():
            raise ValueError(f"{what} must be a {kind} integer, got {short_repr(value)}")
        if abs(value) > 2.0**63:
            raise ValueError(f"{what} is {value:.3g}, above the limit of {top:,} {unit} that this calculator "
                             "accepts".replace("  ", " "))
        value = int(value)
    value = int(value)
    if value < minimum:
        raise ValueError(f"{what} must be a {kind} integer, got {short_repr(value)}")
    if value > top:
        shown = f"{value:,}" if value.bit_length() <= 200 else short_repr(value)
        raise ValueError(f"{what} is {shown}, above the limit of {top:,} {unit} that this calculator "
                         "accepts".replace("  ", " "))
    return value


def check_config_int(value, key: str, minimum: int = 1) -> int:
    """An integer read from config.json key ``key``, checked against the key's plausible range.

    Keys not in ``CONFIG_KEY_LIMITS`` are judged by their name (``quantity_of_key``): "..._intermediate_size"
    as an FFN width, "..._heads" as heads, "..._window"/"..._chunk_size" as tokens, and so on; the rest
    get the generic bound of ``LIMITS["count"]`` (2^31 - 1).

    Raises:
        ValueError: "config key 'num_hidden_layers' is 2,000,000,000, above the limit of 1,024 layers
            that this calculator accepts", or "... must be a positive integer, got 'x'".
    """
    return check_range(value, f"config key {key!r}", quantity_of_key(key), minimum)


#: Name fragments of config keys -> quantity, tried in order for keys not in ``CONFIG_KEY_LIMITS``
#: (the hybrid families' keys: "linear_num_value_heads", "mamba_d_head", "attention_chunk_size", ...).
_KEY_PATTERNS = (("intermediate", "d_ff"), ("head_dim", "head_dim"), ("d_head", "head_dim"), ("heads", "n_heads"),
                 ("layer", "n_layers"), ("expert", "n_experts"), ("vocab", "vocab_size"), ("window", "context"),
                 ("chunk", "context"), ("position", "context"), ("hidden", "d_model"), ("rank", "latent"),
                 ("d_state", "latent"), ("d_conv", "latent"), ("state_size", "latent"))


def quantity_of_key(key: str) -> str:
    """The quantity of ``LIMITS`` that bounds config key ``key`` ("num_hidden_layers" -> "n_layers";
    "linear_num_value_heads" -> "n_heads"; an unknown name -> "count")."""
    if key in CONFIG_KEY_LIMITS:
        return CONFIG_KEY_LIMITS[key]
    low = str(key).lower()
    return next((q for frag, q in _KEY_PATTERNS if frag in low), "count")


def check_model_field(value, field_name: str, minimum: int = 1) -> int:
    """A ``ModelConfig`` field checked against its plausible range (fields not listed: positive only).

    Raises:
        ValueError: "n_layers is 100,000,000, above the limit of 1,024 layers that this calculator accepts".
    """
    return check_range(value, field_name, FIELD_LIMITS.get(field_name, "count"), minimum)


class _NonFinite:
    """A NaN or Infinity met while parsing, kept until its place in the config is known."""

    def __init__(self, name: str):
        self.name = name


# Keys whose lists may hold Infinity in real configs: Mamba2's clamp on the time step, whose
# "no clamp" default is [0.0, Infinity] (transformers' Mamba2Config and NemotronHConfig; the
# config.json of nvidia/Nemotron-H-56B-Base-8K ships "time_step_limit": [0.0, Infinity]).
_NON_FINITE_ALLOWED_KEYS = frozenset({"time_step_limit"})


def _reject_constant(name: str):
    raise ValueError(f"config.json contains {name}, which is not a number a config can use")


def _resolve_non_finite(data) -> None:
    """Turn the Infinity of an allowed key into a float; refuse NaN/Infinity anywhere else."""
    stack = [(data, None)]
    while stack:
        value, key = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            if isinstance(v, _NonFinite):
                if key in _NON_FINITE_ALLOWED_KEYS and isinstance(value, list) and v.name != "NaN":
                    value[k] = float(v.name.replace("Infinity", "inf"))
                else:
                    _reject_constant(v.name)
            elif isinstance(v, (dict, list)):
                stack.append((v, k if isinstance(value, dict) else None))


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"config.json contains the number {text[:40]}, too large for a float")
    return value


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"config.json contains an integer of {digits:,} digits; sizes have at most "
                         f"{MAX_INT_DIGITS} digits")
    return int(text)


def json_depth(value) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0, ``{"a": [1]}`` is 2), computed without recursion."""
    depth, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
            depth = max(depth, d + 1)
        elif isinstance(v, (list, tuple)):
            stack.extend((x, d + 1) for x in v)
            depth = max(depth, d + 1)
    return depth


def parse_config_json(text) -> dict:
    """Parse config.json text (str or UTF-8 bytes) into a dict, refusing what no real config holds.

    Refused, each with one sentence: text over ``MAX_CONFIG_CHARS`` characters, bytes that are not
    UTF-8, invalid JSON (line, column and character of the error), NaN/Infinity (except Infinity in the
    list of ``time_step_limit``, Mamba2's unclamped default, which real configs ship), floats that overflow
    (1e400), integers longer than ``MAX_INT_DIGITS`` digits, nesting deeper than ``MAX_JSON_DEPTH``,
    and a top level that is not an object.

    Raises:
        ValueError: any of the above.
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > 4 * MAX_CONFIG_CHARS:
            raise ValueError(f"config.json is {len(text):,} bytes; a config.json has at most "
                             f"{MAX_CONFIG_CHARS:,} characters")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"config.json is not UTF-8 text (byte {e.start})") from None
    if not isinstance(text, str):
        raise ValueError(f"config.json text must be a string, got {type(text).__name__}")
    if len(text) > MAX_CONFIG_CHARS:
        raise ValueError(f"config.json is {len(text):,} characters; a config.json has at most "
                         f"{MAX_CONFIG_CHARS:,} characters")
    if not text.strip():
        raise ValueError("config.json is empty: a config.json holds one JSON object of the model's settings "
                         "(hidden_size, num_hidden_layers, ...)")
    try:
        data = json.loads(text, parse_constant=_NonFinite, parse_float=_parse_float, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise ValueError(f"config.json is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno} "
                         f"(character {e.pos})") from None
    except RecursionError:
        raise ValueError(f"config.json is nested too deeply (a config.json nests at most {MAX_JSON_DEPTH} "
                         "levels)") from None
    if isinstance(data, _NonFinite):
        _reject_constant(data.name)
    if not isinstance(data, dict):
        raise ValueError(f"config.json must hold a JSON object, got {type(data).__name__}")
    check_config_dict(data)
    _resolve_non_finite(data)
    return data


def check_config_dict(config) -> None:
    """Refuse a parsed config (dict) nested deeper than ``MAX_JSON_DEPTH``.

    Raises:
        ValueError: too deeply nested.
    """
    if json_depth(config) > MAX_JSON_DEPTH:
        raise ValueError(f"config.json is nested too deeply (a config.json nests at most {MAX_JSON_DEPTH} levels)")


def plain_name(text, max_chars: int = MAX_TEXT_CHARS) -> str:
    """A display name made safe to keep: control characters turned into spaces, cut to ``max_chars``.

    (Escaping for the page is the page's job; this only bounds what is stored.)
    """
    s = "".join(ch if ch.isprintable() else " " for ch in str(text)).strip()
    return s if len(s) <= max_chars else s[: max_chars - 1] + "…"
