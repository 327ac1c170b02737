"""Speculative decoding in the serving model: what a verification round costs and how many tokens it emits.

An engine that drafts ``k`` tokens per sequence (vLLM ``--speculative-config '{"method": "mtp",
"num_speculative_tokens": k}'``, SGLang ``--speculative-num-steps k``, TensorRT-LLM ``max_draft_len: k``) runs
each decode step as a round: ``k`` draft passes one after another (the draft's next token needs its last), then
one pass of the target over ``k + 1`` tokens per sequence that checks them (Leviathan et al. 2022, "Fast
Inference from Transformers via Speculative Decoding", section 3). A round emits the accepted prefix plus the
target's own token: its mean over rounds is the acceptance length AL (1 to k + 1), so

    TPOT = round / AL,    round = verify step (B x (k + 1) tokens) + k x draft pass,

and a benchmark's ITL, the gap between two streamed chunks, is the round itself (vllm bench serve records one
gap per chunk; a round's accepted tokens arrive together). The verify step reads the weights and each sequence's
cache once, as a decode step does, and multiplies k + 1 times the tokens (``calc.parallel.parallel_step_arrays``
with ``query_tokens = k + 1``); a draft pass is a small model of its own: the target's multi-token-prediction
module (DeepSeek-V3 technical report, arXiv 2412.19437, section 2.2: a projection, one transformer block and the
shared output head) or a one-layer draft head (EAGLE-3, Li et al., arXiv 2503.01840; DSpark), priced here as the
share of the target's decode step its parameters are (``draft_cost``) plus one layer's launches.

The acceptance length depends on the prompts and the draft, not on the engine: ``acceptance_length`` takes the
model's own curve from InferenceX's golden acceptance lengths (SPEED-Bench coding prompts, calc/data/
spec_acceptance.json), else their median at that draft length, unless the run states its own (vLLM's
``synthetic_acceptance_length``, a measured "acceptance length").
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from .checks import check_positive_int, check_positive_number
from .models import ModelConfig, model_preset_id

SPEC_PATH = Path(__file__).resolve().parent / "data" / "spec_acceptance.json"
#: Draft methods: "mtp", the model's own multi-token-prediction module; "head", a separate one-layer draft head
#: (EAGLE, EAGLE-3, DSpark), in words for the pages.
SPEC_METHODS = {"mtp": "the model's own multi-token-prediction (MTP) module",
                "head": "a one-layer draft head (EAGLE, EAGLE-3, DSpark)"}
#: The draft methods in a few words, for a row's notes column.
SPEC_SHORT = {"mtp": "MTP module", "head": "one-layer draft head"}
#: How engines and benchmarks name a draft method (lower case) -> ``SPEC_METHODS``' key.
METHOD_NAMES = {"mtp": "mtp", "deepseek_mtp": "mtp", "qwen3_next_mtp": "mtp", "nextn": "mtp", "next-n": "mtp",
                "eagle": "head", "eagle3": "head", "eagle-3": "head", "dspark": "head", "head": "head"}
#: Draft tokens per round where a run says it drafts but not how many: the most common setting of InferenceX's
#: speculative recipes (``num_speculative_tokens`` 3 in 87 of its vLLM configs against 27 with 2 and 15 with 1,
#: SGLang ``--speculative-num-steps 3`` in 47, TensorRT-LLM ``max_draft_len: 3`` in 38; SemiAnalysisAI/InferenceX at
#: commit 843c6254ff69b567f772f6a5fd97675af3d04431).
DEFAULT_DRAFT_TOKENS = 3
#: Most draft tokens per round the estimate takes (InferenceX's curves stop at 8; engines allow more).
MAX_DRAFT_TOKENS = 16


@lru_cache(maxsize=1)
def golden_curves() -> dict:
    """calc/data/spec_acceptance.json: {"source": ..., "curves": [{"model", "preset", "method", "thinking",
    "acceptance_length": {"1": AL, ...}, ...}]} (``bench/convert_golden_al.py``)."""
    return json.loads(SPEC_PATH.read_text())


def _curve_value(curve: dict, k: int) -> float:
    table = {int(key): float(v) for key, v in curve["acceptance_length"].items()}
    return table[min(k, max(table))]


def _preset_of(model) -> str:
    """The preset id the golden curves name: a name as given, a ``ModelConfig`` by its preset (else its name)."""
    return model_preset_id(model.name) or model.name if isinstance(model, ModelConfig) else str(model)


def _own_curves(preset: str) -> list:
    """The golden curves (thinking on) of the model whose preset is ``preset``; [] for a model without one."""
    return [c for c in golden_curves()["curves"] if c["thinking"] == "on" and c["preset"] == preset]


def acceptance_length(model_name, draft_tokens: int, method: str = "mtp") -> tuple[float, str]:
    """The mean acceptance length of ``draft_tokens`` drafts per round, and where it comes from, in words.
    ``model_name``: a preset id, or a ``ModelConfig`` (its preset's curve).

    The model's own curve from InferenceX's golden acceptance lengths (calc/data/spec_acceptance.json; its
    preset's, the draft ``method`` ("mtp" or "head") preferred, thinking on as InferenceX's AgentX runs take it),
    else the median of every curve (thinking on) at that draft length: 1.835, 2.44, 2.875, 3.23 for 1 to 4 drafts.
    Beyond 8 drafts, the curves' value at 8 (they level off). The curves were measured on real prompts (SPEED-Bench
    coding); random-token prompts, as many serving benchmarks send, accept fewer (DeepSeek-V4 MTP on vLLM, random
    1,024 / 1,024: 77% at the first position, 38% at the second, vllm-project/vllm pull request 41044), so a run
    that states its own acceptance length should pass it (``speculative_settings``).

    Raises:
        ValueError: draft_tokens not a whole number from 1 to ``MAX_DRAFT_TOKENS``; an unknown method.
    """
    k = check_draft_tokens(draft_tokens)
    kind = method_kind(method)
    model_name = _preset_of(model_name)
    curves = [c for c in golden_curves()["curves"] if c["thinking"] == "on"]
    own = _own_curves(model_name)
    if own:
        pick = next((c for c in own if c["method"] == kind), own[0])
        src = golden_curves()["source"]
        return _curve_value(pick, k), (f"InferenceX's golden acceptance length of {pick['draft']} at {k} draft "
                                        f"token(s) (SPEED-Bench coding prompts, {pick['file']} of InferenceX at "
                                        f"{src['commit'][:8]})")
    value = float(np.median([_curve_value(c, k) for c in curves]))
    return value, (f"the median of InferenceX's {len(curves)} golden acceptance-length curves at {k} draft token(s) "
                   f"(SPEED-Bench coding prompts; no curve for {model_name} on file)")


def check_draft_tokens(value) -> int:
    """A whole number of draft tokens per round, 1 to ``MAX_DRAFT_TOKENS``.

    Raises:
        ValueError: anything else, with the range in the message.
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    k = check_positive_int(value, "draft_tokens (tokens drafted per round)")
    if k > MAX_DRAFT_TOKENS:
        raise ValueError(f"draft_tokens must be at most {MAX_DRAFT_TOKENS}; got {k}")
    return k


def method_kind(method) -> str:
    """``SPEC_METHODS``' key of a draft method as an engine names it ("mtp", "deepseek_mtp", "eagle3", "dspark").

    Raises:
        ValueError: a name ``METHOD_NAMES`` does not hold (a separate draft model, n-gram lookup: not priced).
    """
    key = METHOD_NAMES.get(str(method).strip().lower())
    if key is None:
        raise ValueError(f"speculative method {str(method)!r:.40} is not priced: give one of "
                         f"{', '.join(sorted(METHOD_NAMES))} (a separate draft model or n-gram lookup has no cost "
                         "model here)")
    return key


def draft_cost(model: ModelConfig, method: str) -> tuple[float, str]:
    """(share, words): one draft pass's weights and matmuls as a share of one target decode step's, for the pages.

    "mtp" on a model with an MTP module: its parameters used per drafted token over the model's active ones
    (``ModelConfig.n_mtp_active_params``; DeepSeek-V3: 1.61e9 / 37.6e9 = 0.043). A "head", or "mtp" on a model
    without a module on file: one layer of the target's width and its output head, ``(P_layer + V x D) / P_active``
    with ``P_layer = (P_active - 2 V D) / L`` (the embedding and head taken out, the rest spread over the layers).
    A draft pass also launches one layer's kernels (``calc.serving.combine``).

    Raises:
        ValueError: an unknown method.
    """
    kind = method_kind(method)
    active = float(model.active_params)
    if kind == "mtp" and model.n_mtp_layers:
        return model.n_mtp_active_params / active, (f"{model.name}'s MTP module, {model.n_mtp_active_params / 1e9:.2f}B "
                                                    "parameters used per draft")
    head = float(model.vocab_size) * model.d_model
    layer = max(active - 2.0 * head, 0.0) / model.n_layers
    what = "no MTP module on file for it: priced as " if kind == "mtp" else ""
    return (layer + head) / active, (f"{what}a one-layer draft head at {model.name}'s width with its output head, "
                                     f"{(layer + head) / 1e9:.2f}B parameters per draft")


def speculative_settings(model: ModelConfig, speculative) -> tuple[dict, list[str]]:
    """The serving model's settings for a speculative run, and its notices.

    ``speculative``: None or False (plain decoding: {}), a method name ("mtp", "eagle3", ...: ``DEFAULT_DRAFT_TOKENS``
    drafts), or a dict {"method", "draft_tokens" (default ``DEFAULT_DRAFT_TOKENS``), "acceptance_length" (tokens
    per round, 1 to draft_tokens + 1; default ``acceptance_length``'s)}.

    Returns:
        ({"spec_tokens": k, "spec_al": AL, "spec_share": draft share, "spec_words": the convention in words}, notices).

    Raises:
        ValueError: an unknown method or key, draft tokens outside 1..``MAX_DRAFT_TOKENS``, an acceptance length
            outside [1, k + 1].
    """
    if speculative is None or speculative is False:
        return {}, []
    spec = {"method": speculative} if isinstance(speculative, str) else speculative
    if not isinstance(spec, dict):
        raise ValueError(f"speculative must be a method name or a dict with method, draft_tokens and "
                         f"acceptance_length; got {speculative!r:.60}")
    unknown = set(spec) - {"method", "draft_tokens", "acceptance_length"}
    if unknown:
        raise ValueError(f"unknown speculative key(s) {', '.join(sorted(map(str, unknown)))}: the keys are method, "
                         "draft_tokens, acceptance_length")
    if "method" not in spec:
        raise ValueError("speculative needs a method (mtp, eagle3, dspark, ...)")
    kind = method_kind(spec["method"])
    notices = []
    stated_k = spec.get("draft_tokens")
    k = check_draft_tokens(stated_k) if stated_k is not None else DEFAULT_DRAFT_TOKENS
    if stated_k is None:
        notices.append(f"speculative decoding without draft_tokens: {DEFAULT_DRAFT_TOKENS} per round, the most common "
                       "setting of InferenceX's speculative recipes")
    if spec.get("acceptance_length") is not None:
        al = check_positive_number(spec["acceptance_length"], "acceptance_length")
        if not 1.0 <= al <= k + 1:
            raise ValueError(f"acceptance_length must lie between 1 and draft_tokens + 1 = {k + 1} (tokens a round "
                             f"emits, the target's own included); got {al!r}")
        al_words = f"acceptance length {al:g} as given"
    else:
        al, source = acceptance_length(model, k, kind)
        own = bool(_own_curves(_preset_of(model)))
        al_words = (f"acceptance length {al:.2f}, InferenceX's golden curve for the model" if own else
                    f"acceptance length {al:.2f}, the median of InferenceX's golden curves")
        notices.append(f"speculative decoding at an acceptance length of {al:.2f} tokens per round, {source}: give "
                       "acceptance_length for your own prompts and draft")
    share, cost_words = draft_cost(model, kind)
    notices.append(f"speculative decoding's draft pass: {cost_words}")
    draft = SPEC_SHORT[kind] if kind == "head" or model.n_mtp_layers else "one-layer draft head, no MTP module on file"
    words = f"speculative decoding ({draft}, {k} draft token(s) per round, {al_words})"
    return {"spec_tokens": k, "spec_al": float(al), "spec_share": float(share), "spec_words": words}, notices


#: How a row's notes state speculative decoding's settings (lower case): the draft length as vLLM's
#: num_speculative_tokens, SGLang's --speculative-num-steps, TensorRT-LLM's max_draft_len or num_nextn_predict_layers,
#: or InferenceX's "(MTP, 3 next-n layers)"; the acceptance length as vLLM's synthetic_acceptance_length, SGLang's
#: SGLANG_SIMULATE_ACC_LEN, or a stated "acceptance length 2.4".
_DRAFT_TOKENS = re.compile(r"(?:num_speculative_tokens|speculative[-_ ]num[-_ ]steps|max_draft_len|"
                           r"num_nextn_predict_layers)\W{0,4}(\d+)|(\d+)\s*(?:next-n layers|draft tokens)")
_ACCEPTANCE = re.compile(r"(?:synthetic_acceptance_length|sglang_simulate_acc_len|acceptance length)\W{0,4}"
                         r"(\d+(?:\.\d+)?)")
_METHOD = re.compile(r"\b(deepseek_mtp|qwen3_next_mtp|mtp|eagle-?3|eagle|dspark)\b")
#: Draft methods the estimate does not price, as notes name them: such a row is refused with ``method_kind``'s
#: message rather than read as MTP.
_UNPRICED = re.compile(r"\b(medusa|n-?gram|lookahead|draft[_ ]model|suffix decoding|prompt lookup)\b")
#: Words of a row's notes that mark a run of speculative decoding (``speculative_notes``).
_SPECULATIVE = ("speculative decoding on", "mtp,", "(mtp", "eagle", "dspark", "medusa", "ngram", "n-gram",
                "num_speculative_tokens", "speculative-num-steps", "speculative_num_steps", "max_draft_len",
                "speculative_config", "speculative-config", "speculative-algorithm")
#: A negated mention of speculative decoding ("no MTP", "without EAGLE", "spec decoding: none", "MTP off", "mtp=0"),
#: removed from a row's notes before ``_SPECULATIVE``'s words are looked for (``speculative_notes``).
_SPEC_NEGATED = re.compile(r"\b(?:no|without|non|not|disabled?)[\s-]+(?:speculative(?:[\s-]+decoding)?|spec(?:[\s-]+decoding)?"
                           r"|mtp|eagle\w*|dspark|medusa|n-?gram)\b|\b(?:speculative[\s-]+decoding|spec[\s-]+decoding|mtp|"
                           r"eagle\w*|dspark|medusa|n-?gram)\s*[:=]?\s*(?:off|disabled|none|false|0)\b")


#: An explicit statement that a run decoded plainly ("no speculative decoding (baseline)", "spec decoding: off"): it
#: settles a row whose notes also name a draft method elsewhere (a chart's title, a figure's path, the paired run).
_SPEC_OFF = re.compile(r"\b(?:no|without|not|disabled?)[\s-]+(?:speculative|spec)[\s-]+decoding\b"
                       r"|\b(?:speculative|spec)[\s-]+decoding\s*[:=]?\s*(?:off|disabled|none|false)\b")


def speculative_notes(notes) -> bool:
    """Whether a row's notes say its run used speculative decoding ("speculative decoding on (MTP, 3 next-n layers)",
    "EAGLE", "(MTP"), the words of ``_SPECULATIVE`` outside a negation ("no MTP, concurrency 4", "EAGLE off",
    "spec decoding: none" say a plain run; "no speculative decoding" anywhere settles it, ``_SPEC_OFF``). The fit
    leaves such rows out (``calc.serving_fit.prepare_rows``); the comparison predicts them with the draft their notes
    state (``speculative_from_notes``), and a measured run with it is a run of its own (``calc.comparison``).
    Example: "no speculative decoding (baseline); chart 'Kimi-K2.5 EAGLE3 on MI355X'" -> False."""
    text = str(notes or "").lower()
    if _SPEC_OFF.search(text):  # stated plain, whatever else the notes name
        return False
    text = _SPEC_NEGATED.sub(" ", text)
    return any(w in text for w in _SPECULATIVE)


def speculative_from_notes(notes: str):
    """The ``speculative`` dict (``speculative_settings``) a row's notes state: the draft method, and draft_tokens and
    acceptance_length where given; None where ``speculative_notes`` finds no speculative decoding (negations such as
    "no MTP" removed first). Notes that say "speculative decoding on" but name no method are read as MTP.
    A method the estimate does not price (Medusa, n-gram lookup, a separate draft model) comes back by its name, for
    ``speculative_settings`` to refuse.
    Example: "speculative decoding on (MTP, 3 next-n layers)" -> {"method": "mtp", "draft_tokens": 3}.
    """
    if not speculative_notes(notes):
        return None
    text = _SPEC_NEGATED.sub(" ", str(notes).lower())
    found = _METHOD.search(text)
    if found is None:
        other = _UNPRICED.search(text)
        if other:  # a method the estimate does not price: named, so that ``speculative_settings`` refuses it
            return {"method": other.group(1)}
    spec = {"method": found.group(1).replace("-", "") if found else "mtp"}
    k = _DRAFT_TOKENS.search(text)
    if k:
        spec["draft_tokens"] = int(k.group(1) or k.group(2))
    al = _ACCEPTANCE.search(text)
    if al:
        spec["acceptance_length"] = float(al.group(1))
    return spec
