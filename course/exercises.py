"""Graded napkin exercises: problem templates whose numbers come from a variant number.

Each template builds an ``Exercise`` for a variant: variant 0 carries the course's own numbers
(the inference course, week 11, steps 1-4 and its back-of-the-envelope problems; chapter 9, LLM
inference; CS336 lecture 10, Inference), every other variant draws its inputs deterministically from
a random generator seeded by the template and the variant, over presets and values the pages offer.
The answer is computed by calling calc's public functions; the worked solution is the same equation
filled in with the variant's numbers (LaTeX, ending in ``= <answer> <unit>``); known mistakes (a unit
mix-up, a forgotten factor) carry hints; ``link`` is the query string that opens the explorable page
in the state that shows the answer.

Pure: no streamlit; it uses calc's public API (``calc``'s names, and ``calc.kv.cache_layer_counts``).
The page links name the pages' widget keys (``URL_LABELS``, ``URL_DEFAULTS``, ``_sidebar``); the link
tests (tests/test_link_notice.py) check every link against its page's widgets. ``grade`` turns a typed number and unit into a verdict and a hint.

The structure of the problems follows the course's back-of-the-envelope problems (a model, a GPU,
a context, find the cache, the batch, the step, the price); the text is this project's own.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
import zlib
from dataclasses import dataclass, field
from urllib.parse import urlencode

import numpy as np

from calc import api_tiers as _api_tiers, bill as _bill, product_traffic as _traffic
from calc import spec_speedup as _spec
from calc import (Accelerator, ModelConfig, attention_flops, batch_where_cache_equals_weights, cost_per_million,
                  critical_batch, decode_step_time, dtype_bytes, get_accelerator, get_model, kv_bytes_per_token,
                  kv_cache_bytes, kv_reservation, list_models, max_batch, prefill_time, prefix_cache_savings,
                  throughput_ceiling_tokens_per_s, weight_bytes)
from calc.kv import cache_layer_counts

#: The 13B model of the inference course's back-of-the-envelope problems (week 11): "a 13B-parameter
#: model in bf16, 40 layers, GQA with 8 KV heads, H = 128". D, N, F and V are Llama-2-13B's; only
#: L, K, H and the 13e9 count enter the problems' numbers.
COURSE_13B = ModelConfig(name="Week 11 napkin 13B (L=40, K=8, H=128)", n_params=13_000_000_000, n_layers=40,
                         d_model=5120, n_heads=40, n_kv_heads=8, head_dim=128, d_ff=13824, vocab_size=32000,
                         attention="gqa", source="the inference course, week 11, back-of-the-envelope problems")
COURSE_13B_ID = "seed13b"  # the quantization page's URL value for this model (q_model=seed13b)
MAX_VARIANT = 999_999

#: unit -> (dimension, size in base units). Base units: bytes, seconds, tokens per second, sequences,
#: tokens, USD, ratio (x), fraction (% shown).
UNITS: dict[str, tuple[str, float]] = {
    "B": ("bytes", 1.0), "kB": ("bytes", 1e3), "KiB": ("bytes", 2.0**10), "MB": ("bytes", 1e6),
    "MiB": ("bytes", 2.0**20), "GB": ("bytes", 1e9), "GiB": ("bytes", 2.0**30), "TB": ("bytes", 1e12),
    "TiB": ("bytes", 2.0**40),
    "µs": ("seconds", 1e-6), "ms": ("seconds", 1e-3), "s": ("seconds", 1.0), "min": ("seconds", 60.0),
    "tok/s": ("rate", 1.0), "tok/ms": ("rate", 1e3),
    "sequences": ("sequences", 1.0), "tokens": ("tokens", 1.0),
    "USD": ("usd", 1.0), "x": ("ratio", 1.0), "%": ("fraction", 0.01),
}
#: Unit choices offered for each dimension, in the order a select box shows them.
UNIT_CHOICES = {
    "bytes": ("B", "KiB", "kB", "MiB", "MB", "GiB", "GB", "TB"),
    "seconds": ("µs", "ms", "s"),
    "rate": ("tok/s", "tok/ms"),
    "sequences": ("sequences",), "tokens": ("tokens",), "usd": ("USD",), "ratio": ("x",), "fraction": ("%",),
}
_UNIT_NOTES = {
    frozenset({"GB", "GiB"}): "GB is 10^9 bytes, GiB is 2^30 = 1.074 x 10^9 bytes",
    frozenset({"MB", "MiB"}): "MB is 10^6 bytes, MiB is 2^20 = 1.049 x 10^6 bytes",
    frozenset({"kB", "KiB"}): "kB is 1,000 bytes, KiB is 1,024 bytes",
    frozenset({"TB", "TiB"}): "TB is 10^12 bytes, TiB is 2^40 bytes",
    frozenset({"ms", "s"}): "1 s = 1,000 ms",
    frozenset({"µs", "ms"}): "1 ms = 1,000 µs",
}

#: Where the course's worked numbers live, by the course's own titles.
COURSE = "the inference course, week 11"
CHAPTER = "chapter 9, LLM inference"
CS336 = "CS336 lecture 10, Inference"


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer (base units) and the hint to give when a student types it."""

    value: float
    hint: str


@dataclass(frozen=True)
class Exercise:
    """One problem of one variant.

    Fields:
        key: template id ("kv_per_token"); number: position in ``TEMPLATES`` (1-based); title.
        variant: the variant number (0 = the course's numbers).
        question: markdown text with every number needed.
        answer: the correct value in base units (bytes, seconds, tok/s, sequences, tokens, USD, x,
            fraction).
        unit: the unit the solution states the answer in (a key of ``UNITS``).
        rel_tol, abs_tol: an answer within max(rel_tol * |answer|, abs_tol) (base units) is accepted.
        solution_latex: the equation filled in with the variant's numbers, ending in
            ``= <answer>\\,\\text{<unit>}``.
        solution_text: one sentence that says what the equation means.
        page: the explorable page's URL path ("kv_cache"); state: the widget values (key -> value) that
            show the answer there; link: the query string that sets them (no "?", see ``encode_state``).
        mistakes: known wrong answers with hints.
        source: the course material this problem follows, by its title.
        course_value: the course's own worked number in base units (variant 0 only; None if it has none).
        inputs: the inputs as plain values (model id or "seed13b", gpu id, sizes), for tests and display.
    """

    key: str
    number: int
    title: str
    variant: int
    question: str
    answer: float
    unit: str
    rel_tol: float
    abs_tol: float
    solution_latex: str
    solution_text: str
    page: str
    state: dict
    link: str
    mistakes: tuple[Mistake, ...]
    source: str
    course_value: float | None = None
    inputs: dict = field(default_factory=dict)

    @property
    def dimension(self) -> str:
        """What the answer measures ("bytes", "seconds", ...); the unit select offers its units."""
        return UNITS[self.unit][0]

    @property
    def unit_choices(self) -> tuple[str, ...]:
        """Units a student may answer in."""
        return UNIT_CHOICES[self.dimension]

    @property
    def answer_in_unit(self) -> float:
        """The answer expressed in ``unit``."""
        return self.answer / UNITS[self.unit][1]

    @property
    def answer_text(self) -> str:
        """The answer as text in its unit, e.g. "0.671 GB"."""
        return f"{fmt_number(self.answer_in_unit)} {self.unit}"

    @property
    def tolerance_text(self) -> str:
        """The stated tolerance, e.g. "within 2%" or "within ±1 sequences"."""
        if self.abs_tol and self.abs_tol >= self.rel_tol * abs(self.answer):
            return f"within ±{fmt_number(self.abs_tol / UNITS[self.unit][1])} {self.unit}"
        return f"within {self.rel_tol * 100:g}%"

    @property
    def url(self) -> str:
        """Relative URL of the explorable page in the state that shows the answer."""
        return f"{self.page}?{self.link}"


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer: correct, a message, and the hint's kind ("unit", "factor", "off", "")."""

    correct: bool
    message: str
    kind: str = ""


# -- formatting ----------------------------------------------------------------------------------
def fmt_number(x: float) -> str:
    """A number for text: 4 significant digits below 1,000, whole with thousands separators above."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if x == 0:
        return "0"
    digits = max(0, 3 - int(math.floor(math.log10(abs(x)))))
    text = f"{x:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def tex(x: float) -> str:
    """``fmt_number`` for LaTeX: thousands separators as ``{,}``."""
    return fmt_number(x).replace(",", "{,}")


def break_lines(latex: str, width: int = 80) -> str:
    """A long chain ``a = b = c`` as an ``aligned`` block, one ``= ...`` per line (it then fits a page's
    width); short ones unchanged. Splits only at top-level " = " (outside braces)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(latex):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0 and latex.startswith(" = ", i):
            parts.append(latex[start:i])
            start = i + 3
    parts.append(latex[start:])
    if len(latex) <= width or len(parts) < 3:
        return latex
    return r"\begin{aligned}" + parts[0] + " &= " + r" \\ &= ".join(parts[1:]) + r"\end{aligned}"


def _u(unit: str) -> str:
    if unit == "µs":
        return r"\,\mu\text{s}"
    return r"\,\text{" + unit.replace("%", r"\%").replace("$", r"\$") + "}"


def _best_unit(value: float, dimension: str) -> str:
    if dimension == "bytes":
        for unit in ("TB", "GB", "MB", "kB"):
            if abs(value) >= UNITS[unit][1]:
                return unit
        return "B"
    if dimension == "seconds":
        return "s" if abs(value) >= 1 else "ms" if abs(value) >= 1e-3 else "µs"
    return {"rate": "tok/s", "sequences": "sequences", "tokens": "tokens", "usd": "USD", "ratio": "x",
            "fraction": "%"}[dimension]


def _q(unit_value: float, unit: str) -> str:
    """A quantity for LaTeX in a given unit: ``0.671\\,\\text{GB}``."""
    return tex(unit_value / UNITS[unit][1]) + _u(unit)


def _bytes(value: float) -> str:
    return _q(value, _best_unit(value, "bytes"))


def _secs(value: float) -> str:
    return _q(value, _best_unit(value, "seconds"))


# -- helpers over calc ----------------------------------------------------------------------------
def _napkin_kwargs(func) -> dict:
    # The course's napkin reads every parameter each step; newer calc versions make that a keyword.
    return {"embedding": "table"} if "embedding" in inspect.signature(func).parameters else {}


def napkin_step(model: ModelConfig, acc: Accelerator, batch: int, context_len: int, weight_dtype: str = "bf16",
                kv_dtype: str = "bf16"):
    """``decode_step_time`` under the course's napkin convention (every parameter read each step)."""
    return decode_step_time(model, acc, batch, context_len, weight_dtype, kv_dtype, **_napkin_kwargs(decode_step_time))


def napkin_prefill(model: ModelConfig, acc: Accelerator, prompt_len: int, batch: int = 1,
                   weight_dtype: str = "bf16", kv_dtype: str = "bf16"):
    """``prefill_time`` under the course's napkin convention."""
    return prefill_time(model, acc, prompt_len, batch, weight_dtype, kv_dtype, **_napkin_kwargs(prefill_time))


def _model(model_id: str) -> ModelConfig:
    return COURSE_13B if model_id == COURSE_13B_ID else get_model(model_id)


def _rng(key: str, variant: int) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(key.encode()), variant])


def _pick(rng: np.random.Generator, options):
    options = list(options)
    return options[int(rng.integers(len(options)))]


def _models(kind: str) -> list[str]:
    out = []
    for m in list_models():
        c = get_model(m)
        plain = c.sliding_window is None and not c.layer_types and getattr(c, "kv_sharing", 1) == 1
        if kind == "gqa" and c.attention == "gqa" and plain and not c.is_moe:
            out.append(m)
        elif kind == "mha" and c.attention == "mha" and plain:
            out.append(m)
        elif kind == "mla" and c.attention == "mla":
            out.append(m)
        elif kind == "window" and c.sliding_window is not None and c.attention in ("gqa", "mha", "mqa"):
            out.append(m)
    return out


GPUS = ("h100-sxm", "h100-pcie", "h200", "a100-80gb", "b200", "l40s", "mi300x")
PRICES = (1.5, 2.0, 2.5, 3.0, 4.0, 6.0)


def _link(page: str, **params) -> dict:
    # The raw widget values (keys as the pages name them); ``encode_state`` turns them into a query string.
    return dict(params)


def _ctx_label(s: int) -> str:
    return f"{s // 1024:,}K" if s < 2**20 else "1M"


#: A widget bound to the URL with a format_func carries its label there, not its value: these are the
#: labels of the pages' widgets (kv_cache, quantization). Keys at their page default are left out.
URL_LABELS = {
    "kv_ctx": _ctx_label, "q_ctx": _ctx_label,
    "kv_layout": {"model": "As configured", "mha": "MHA", "gqa": "GQA", "mqa": "MQA", "mla": "MLA"}.get,
    "q_model": {"sidebar": "The sidebar's model", COURSE_13B_ID: "The course's 13B"}.get,
    "q_apply": {"both": "weights and cache", "weights": "weights only", "cache": "cache only"}.get,
}
URL_DEFAULTS = {"kv_layout": "model", "kv_win": "model", "kv_full": False, "kv_exp": False, "q_apply": "both"}


def encode_state(state: dict) -> str:
    """The query string that opens a page with ``state`` (widget key -> value) set."""
    out = {}
    for k, v in state.items():
        if k in URL_DEFAULTS and URL_DEFAULTS[k] == v:
            continue
        out[k] = URL_LABELS[k](v) if k in URL_LABELS else (str(v).lower() if isinstance(v, bool) else v)
    return urlencode(out)


def _sidebar(model_id: str, gpu: str = "h100-sxm", wq: str = "bf16", kvq: str = "bf16", price=None) -> dict:
    # emb=table: the course's napkin, every parameter read each step (the sidebar's embedding convention).
    out = {"model": model_id if model_id != COURSE_13B_ID else "llama-2-13b", "gpu": gpu, "wq": wq, "kvq": kvq,
           "emb": "table"}
    if price is not None:
        out["price"] = float(price)
    return out


def _quant_link(model_id: str, gpu: str, ctx: int, batch: int, reserve_gb: float = 0.0) -> tuple[str, dict]:
    # The quantization page is the one that offers the course's 13B (q_model=seed13b).
    q_model = COURSE_13B_ID if model_id == COURSE_13B_ID else "sidebar"
    return "quantization", _link("quantization", **_sidebar(model_id, gpu), q_model=q_model, q_apply="both",
                                 q_ctx=ctx, q_b=batch, q_res=float(reserve_gb))


def _model_text(model: ModelConfig, model_id: str) -> str:
    if model_id == COURSE_13B_ID:
        return "the course's 13B model (13e9 parameters, L = 40 layers, GQA with K = 8 KV heads of H = 128)"
    return (f"{model.name} ({model.n_params / 1e9:.2f}e9 parameters, L = {model.n_layers} layers, "
            f"N = {model.n_heads} query heads, K = {model.n_kv_heads} KV heads of H = {model.head_dim})")


def _gpu_text(acc: Accelerator, dtype: str = "bf16") -> str:
    return (f"{acc.name} ({acc.memory_bytes / 1e9:,.0f} GB, {acc.bandwidth_bytes_per_s / 1e12:,.3g} TB/s, "
            f"{acc.compute_flops(dtype) / 1e12:,.0f} TFLOP/s {dtype})")


def _kv_mistakes(answer: float, per_token: float | None = None, n_heads_ratio: float = 1.0) -> list[Mistake]:
    out = [Mistake(answer / 2, "About half the answer: did you forget the factor 2 for K and V? Every token "
                                "stores a key and a value in every layer."),
           Mistake(answer * 8,
                   "Eight times too large: that looks like bits, not bytes (bf16 is 16 bits = 2 bytes per number).")]
    if per_token is not None:
        out.append(Mistake(per_token, "That is the cache per token; a sequence holds S tokens: multiply by S."))
    if n_heads_ratio != 1.0:
        out.append(Mistake(answer * n_heads_ratio, f"{n_heads_ratio:g} times too large: the cache holds the K KV "
                                                   "heads, not the N query heads (that would be MHA)."))
    return out


# -- the templates ----------------------------------------------------------------------------------
def _kv_per_token(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, kvq = "llama-3-8b", "bf16"
    else:
        model_id, kvq = _pick(rng, _models("gqa") + _models("mha")), _pick(rng, ("bf16", "bf16", "fp8", "int8"))
    m = get_model(model_id)
    b = dtype_bytes(kvq)
    ans = kv_bytes_per_token(m, kvq)
    unit = "KiB" if ans >= 1024 else "B"
    sol = (r"\text{KV per token} = 2 \times L \times K \times H \times \text{bytes} = 2 \times " + f"{m.n_layers}"
           + r"\times " + f"{m.n_kv_heads}" + r"\times " + f"{m.head_dim}" + r"\times " + tex(b) + _u("B")
           + " = " + tex(ans) + _u("B") + " = " + _q(ans, unit))
    return dict(
        title="KV cache per token", unit=unit, answer=ans, rel_tol=0.01,
        question=(f"{_model_text(m, model_id)} stores its KV cache in {kvq} ({b:g} {'byte' if b == 1 else 'bytes'} per number). "
                  "How many bytes of cache does one more token of context add, summed over all layers?"),
        solution_latex=sol,
        solution_text="Each layer keeps a key and a value vector for each KV head, for every token.",
        mistakes=_kv_mistakes(ans, n_heads_ratio=m.n_heads / m.n_kv_heads),
        page="kv_cache", link=_link("kv_cache", **_sidebar(model_id, kvq=kvq), kv_layout="model", kv_win="model",
                                    kv_ctx=8192, kv_b=1),
        source=f"{COURSE}, step 2 (128 KiB per token for Llama-3-8B)",
        course_value=131_072.0 if v == 0 else None,
        inputs=dict(model=model_id, kv_dtype=kvq))


def _kv_per_sequence(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, ctx, kvq = COURSE_13B_ID, 4096, "bf16"
    else:
        model_id, ctx = _pick(rng, _models("gqa")), _pick(rng, (2048, 4096, 8192, 16384, 32768, 131072))
        kvq = _pick(rng, ("bf16", "bf16", "fp8"))
    m = _model(model_id)
    b = dtype_bytes(kvq)
    per_tok = kv_bytes_per_token(m, kvq)
    ans = kv_cache_bytes(m, ctx, 1, kvq)
    sol = (r"\text{KV per sequence} = 2 L K H \cdot \text{bytes} \cdot S = 2 \times " + f"{m.n_layers}"
           + r"\times " + f"{m.n_kv_heads}" + r"\times " + f"{m.head_dim}" + r"\times " + tex(b) + _u("B")
           + r"\times " + tex(ctx) + r"\,\text{tokens} = " + tex(per_tok) + r"\,\text{B/token} \times "
           + tex(ctx) + " = " + _q(ans, "GB"))
    if model_id == COURSE_13B_ID:
        page, link = _quant_link(model_id, "h100-sxm", ctx, 1)
    else:
        page, link = "kv_cache", _link("kv_cache", **_sidebar(model_id, kvq=kvq), kv_layout="model",
                                       kv_win="model", kv_ctx=ctx, kv_b=1)
    return dict(
        title="KV cache per sequence (GQA)", unit="GB", answer=ans, rel_tol=0.02,
        question=(f"{_model_text(m, model_id)}, cache in {kvq}. How big is the KV cache of one sequence of "
                  f"S = {ctx:,} tokens? (GB = 10^9 bytes.)"),
        solution_latex=sol, solution_text="The per-token cache times the tokens held: linear in S.",
        mistakes=_kv_mistakes(ans, per_tok, m.n_heads / m.n_kv_heads),
        page=page, link=link, source=f"{COURSE}, back-of-the-envelope problem 1 (≈ 0.67 GB)",
        course_value=0.67e9 if v == 0 else None, inputs=dict(model=model_id, context_len=ctx, kv_dtype=kvq))


def _kv_mha(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, ctx = "llama-2-13b", 1024
    else:
        model_id, ctx = _pick(rng, _models("mha")), _pick(rng, (1024, 2048, 4096))
    m = get_model(model_id)
    per_tok = kv_bytes_per_token(m, "bf16")
    ans = kv_cache_bytes(m, ctx, 1, "bf16")
    sol = (r"\text{KV} = S \cdot (K H) \cdot L \cdot 2 \cdot 2 = " + tex(ctx) + r"\times (" + f"{m.n_kv_heads}"
           + r"\times " + f"{m.head_dim}" + r") \times " + f"{m.n_layers}" + r"\times 2 \times 2" + _u("B")
           + " = " + _q(ans, "GB"))
    return dict(
        title="KV cache per sequence (MHA)", unit="GB", answer=ans, rel_tol=0.02,
        question=(f"{_model_text(m, model_id)}: multi-head attention, so every query head has its own KV head. "
                  f"In bf16, how much KV cache does one sequence of S = {ctx:,} tokens need?"),
        solution_latex=sol, solution_text="One factor 2 for K and V, one for the two bytes of bf16.",
        mistakes=_kv_mistakes(ans, per_tok),
        page="kv_cache", link=_link("kv_cache", **_sidebar(model_id), kv_layout="model", kv_win="model",
                                    kv_ctx=ctx, kv_b=1),
        source=f"{CS336}, napkin math for Llama 2 13B (0.84 GB per sequence at S = 1,024)",
        course_value=0.84e9 if v == 0 else None, inputs=dict(model=model_id, context_len=ctx))


def _kv_mla(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, ctx = "deepseek-v3", 32768
    else:
        model_id, ctx = _pick(rng, _models("mla")), _pick(rng, (4096, 8192, 32768, 65536, 131072))
    m = get_model(model_id)
    dc, dr = m.kv_lora_rank, m.qk_rope_head_dim
    ans = kv_cache_bytes(m, ctx, 1, "bf16")
    no_rope = m.n_layers * dc * 2 * ctx
    sol = (r"\text{KV} = L \cdot (d_c + d_h^R) \cdot \text{bytes} \cdot S = " + f"{m.n_layers}" + r"\times ("
           + f"{dc} + {dr}" + r") \times 2" + _u("B") + r"\times " + tex(ctx) + " = " + _q(ans, "GB"))
    return dict(
        title="KV cache with MLA", unit="GB", answer=ans, rel_tol=0.02,
        question=(f"{m.name} uses multi-head latent attention: per token and layer it caches a latent of "
                  f"d_c = {dc} numbers plus a shared RoPE key of d_h^R = {dr}, in bf16, over L = {m.n_layers} "
                  f"layers. How big is the cache of one sequence of {ctx:,} tokens?"),
        solution_latex=sol,
        solution_text="MLA caches one compressed latent (and the small RoPE key) instead of K and V per head.",
        mistakes=[Mistake(no_rope, "Close, but the RoPE key (d_h^R numbers per token and layer) is cached "
                                   "next to the latent."),
                  Mistake(ans * 2, "Twice the answer: MLA stores one latent, not a separate K and V."),
                  Mistake(ans / ctx, "That is per token; multiply by the S tokens of the sequence."),
                  Mistake(ans * 8, "Eight times too large: bits, not bytes.")],
        page="kv_cache", link=_link("kv_cache", **_sidebar(model_id), kv_layout="model", kv_win="model",
                                    kv_exp=False, kv_ctx=ctx, kv_b=1),
        source=f"{COURSE}, step 2, depth (576 numbers per token and layer for DeepSeek)",
        inputs=dict(model=model_id, context_len=ctx))


def _kv_window(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, ctx = "mistral-7b-v0.1", 32768
    else:
        model_id, ctx = _pick(rng, _models("window")), _pick(rng, (8192, 16384, 32768, 131072))
    m = get_model(model_id)
    n_full, n_slide = cache_layer_counts(m)
    w = m.sliding_window
    ans = kv_cache_bytes(m, ctx, 1, "bf16")
    full = kv_cache_bytes(m, ctx, 1, "bf16", sliding="full")
    layers = (f"all {n_slide} layers use a sliding window of W = {w:,} tokens" if n_full == 0 else
              f"{n_slide} of its {m.n_layers} layers use a sliding window of W = {w:,} tokens, the other "
              f"{n_full} attend to the full context")
    sol = (r"\text{KV} = 2 K H \cdot \text{bytes} \cdot (n_\text{full} S + n_\text{window} \min(S, W)) = 2 \times "
           + f"{m.n_kv_heads}" + r"\times " + f"{m.head_dim}" + r"\times 2" + _u("B") + r"\times (" + f"{n_full}"
           + r"\times " + tex(ctx) + " + " + f"{n_slide}" + r"\times " + tex(min(ctx, w)) + ") = " + _q(ans, "GB"))
    return dict(
        title="KV cache with a sliding window", unit="GB", answer=ans, rel_tol=0.02,
        question=(f"{_model_text(m, model_id)}: {layers}. In bf16, how big is the cache of one sequence of "
                  f"{ctx:,} tokens, if window layers keep only their last W tokens?"),
        solution_latex=sol, solution_text="A window layer stops growing at W tokens; a full layer keeps all S.",
        mistakes=[Mistake(full, "That is the cache without the window: a window layer keeps only its last W tokens."),
                  Mistake(ans / 2, "About half: did you forget the factor 2 for K and V?"),
                  Mistake(ans * 8, "Eight times too large: bits, not bytes.")],
        page="kv_cache", link=_link("kv_cache", **_sidebar(model_id), kv_layout="model", kv_win="model",
                                    kv_full=False, kv_ctx=ctx, kv_b=1),
        source=f"{COURSE}, step 2 (a window caps the cache at the window size); {CS336}, local attention",
        inputs=dict(model=model_id, context_len=ctx))


def _max_batch(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, gpu, ctx, reserve = COURSE_13B_ID, "h100-sxm", 4096, 6.0
    else:
        while True:
            model_id, gpu = _pick(rng, _models("gqa")), _pick(rng, GPUS)
            ctx, reserve = _pick(rng, (2048, 4096, 8192, 16384, 32768)), _pick(rng, (0.0, 2.0, 4.0, 6.0, 10.0))
            if max_batch(_model(model_id), get_accelerator(gpu), ctx, reserve_bytes=reserve * 1e9) >= 1:
                break
    m, acc = _model(model_id), get_accelerator(gpu)
    wb, kv = weight_bytes(m), kv_cache_bytes(m, ctx, 1)
    ans = float(max_batch(m, acc, ctx, reserve_bytes=reserve * 1e9))
    free = acc.memory_bytes - wb - reserve * 1e9
    page, link = _quant_link(model_id, gpu, ctx, 1, reserve)
    sol = (r"B_\text{max} = \left\lfloor \frac{M - \text{weights} - \text{reserve}}{\text{KV per sequence}} "
           r"\right\rfloor = \left\lfloor \frac{" + tex(acc.memory_bytes / 1e9) + " - " + tex(wb / 1e9) + " - "
           + tex(reserve) + r"}{" + tex(kv / 1e9) + r"} \right\rfloor\,\text{GB/GB} = \lfloor " + tex(free / kv)
           + r" \rfloor = " + tex(ans) + _u("sequences"))
    no_reserve = math.floor((acc.memory_bytes - wb) / kv)
    return dict(
        title="Max batch beside the weights", unit="sequences", answer=ans, rel_tol=0.0, abs_tol=1.0,
        question=(f"{_model_text(m, model_id)} in bf16 (weights and cache) on one {_gpu_text(acc)}. Keep "
                  f"{reserve:g} GB free for activations and fragmentation. How many sequences of {ctx:,} tokens "
                  "fit at once?"),
        solution_latex=sol, solution_text="What is left after the weights and the reserve, divided by one "
                                          "sequence's cache, rounded down.",
        mistakes=[Mistake(float(no_reserve), "Too many: did you forget to keep the reserve free?"),
                  Mistake(float(math.floor(acc.memory_bytes / kv)), "Far too many: the weights take memory too."),
                  Mistake(float(math.floor(free / (kv / 2))), "About twice the answer: the cache holds K and V, "
                                                               "two vectors per KV head.")],
        page=page, link=link, source=f"{COURSE}, back-of-the-envelope problem 2 (≈ 71)",
        course_value=71.0 if v == 0 else None,
        inputs=dict(model=model_id, gpu=gpu, context_len=ctx, reserve_gb=reserve))


def _decode_link(model_id, gpu, ctx, batch, wq="bf16", kvq="bf16", price=None):
    if model_id == COURSE_13B_ID:
        return _quant_link(model_id, gpu, ctx, batch)
    ctx_ok = ctx if ctx in (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072) else 8192
    return "roofline", _link("roofline", **_sidebar(model_id, gpu, wq, kvq, price), rf_ctx=ctx_ok, rf_b=batch)


def _single_user(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, gpu, wq = COURSE_13B_ID, "h100-sxm", "bf16"
    else:
        model_id, gpu, wq = _pick(rng, _models("gqa")), _pick(rng, GPUS), _pick(rng, ("bf16", "bf16", "int8", "int4"))
    m, acc = _model(model_id), get_accelerator(gpu)
    step = napkin_step(m, acc, 1, 4096, wq)
    ans = 1.0 / step.weights_s
    wb = weight_bytes(m, wq)
    sol = (r"\text{tokens/s} \le \frac{W}{\text{weight bytes}} = \frac{" + tex(acc.bandwidth_bytes_per_s / 1e12)
           + r"\,\text{TB/s}}{" + tex(wb / 1e9) + r"\,\text{GB}} = \frac{1}{" + _secs(step.weights_s) + "} = "
           + tex(ans) + _u("tok/s"))
    page, link = _decode_link(model_id, gpu, 4096, 1, wq)
    return dict(
        title="Speed ceiling for one user", unit="tok/s", answer=ans, rel_tol=0.02,
        question=(f"{_model_text(m, model_id)}, weights in {wq} ({dtype_bytes(wq):g} B per parameter), on one "
                  f"{_gpu_text(acc)}. Ignoring the cache, how many tokens per second can a single user get at most?"),
        solution_latex=sol, solution_text="Every token reads every weight once; nothing is shared at B = 1.",
        mistakes=[Mistake(ans * dtype_bytes(wq), "Too fast: a parameter is not one byte; multiply the parameter "
                                                 "count by the bytes per weight."),
                  Mistake(ans / 8, "Eight times too slow: bits instead of bytes."),
                  Mistake(acc.compute_flops(wq) / (2 * m.active_params), "That is the compute limit 2N/P; decode "
                                                                      "at B = 1 is limited by memory, not FLOPs.")],
        page=page, link=link, source=f"{COURSE}, back-of-the-envelope problem 3 (≈ 129 tok/s)",
        course_value=129.0 if v == 0 else None, inputs=dict(model=model_id, gpu=gpu, weight_dtype=wq))


def _decode_step(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, gpu, ctx, batch = COURSE_13B_ID, "h100-sxm", 4096, 32
    else:
        while True:
            model_id, gpu = _pick(rng, _models("gqa")), _pick(rng, GPUS)
            ctx, batch = _pick(rng, (1024, 2048, 4096, 8192, 16384)), _pick(rng, (4, 8, 16, 32, 48, 64))
            if batch <= max_batch(_model(model_id), get_accelerator(gpu), ctx):
                break
    m, acc = _model(model_id), get_accelerator(gpu)
    s = napkin_step(m, acc, batch, ctx)
    kv = kv_cache_bytes(m, ctx, 1)
    sol = (r"t = \frac{B \cdot KV}{W} + \max\left(\frac{\text{weights}}{W}, \frac{2 N B}{P}\right) = \frac{"
           + f"{batch}" + r"\times " + tex(kv / 1e9) + r"\,\text{GB}}{" + tex(acc.bandwidth_bytes_per_s / 1e12)
           + r"\,\text{TB/s}} + \max(" + _secs(s.weights_s) + ", " + _secs(s.compute_s) + ") = " + _secs(s.kv_s)
           + " + " + _secs(max(s.weights_s, s.compute_s)) + " = " + _q(s.total_s, "ms"))
    page, link = _decode_link(model_id, gpu, ctx, batch)
    return dict(
        title="Decode step time", unit="ms", answer=s.total_s, rel_tol=0.03,
        question=(f"{_model_text(m, model_id)} in bf16 on one {_gpu_text(acc)}. B = {batch} sequences, each with "
                  f"{ctx:,} tokens of context. What is the lower bound on one decode step?"),
        solution_latex=sol,
        solution_text=f"The cache is read per sequence; the weights once for the batch. Here the step is "
                      f"{s.bound}-bound.",
        mistakes=[Mistake(max(s.weights_s, s.compute_s), "Too short: every sequence's cache is read each step too "
                                                         "(B x KV / W)."),
                  Mistake(s.compute_s, "That is the arithmetic alone; decode reads the weights and the cache "
                                       "from memory, which takes far longer."),
                  Mistake(s.kv_s / 2 + max(s.weights_s, s.compute_s), "The cache part is half what it should be: "
                                                                      "K and V are two vectors per KV head.")],
        page=page, link=link, source=f"{COURSE}, back-of-the-envelope problem 4 (≈ 14.2 ms) and step 4",
        course_value=14.2e-3 if v == 0 else None,
        inputs=dict(model=model_id, gpu=gpu, context_len=ctx, batch=batch))


def _decode_throughput(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, gpu, ctx, batch = "llama-3-8b", "h100-sxm", 8192, 32
    else:
        while True:
            model_id, gpu = _pick(rng, _models("gqa")), _pick(rng, GPUS)
            ctx, batch = _pick(rng, (1024, 2048, 4096, 8192, 16384)), _pick(rng, (1, 8, 16, 32, 64, 128))
            if batch <= max_batch(get_model(model_id), get_accelerator(gpu), ctx):
                break
    m, acc = get_model(model_id), get_accelerator(gpu)
    s = napkin_step(m, acc, batch, ctx)
    sol = (r"\text{tokens/s} = \frac{B}{t} = \frac{" + f"{batch}" + r"}{" + _secs(s.kv_s) + " + "
           + _secs(max(s.weights_s, s.compute_s)) + r"} = \frac{" + f"{batch}" + "}{" + _secs(s.total_s) + "} = "
           + tex(s.tokens_per_s) + _u("tok/s"))
    page, link = _decode_link(model_id, gpu, ctx, batch)
    return dict(
        title="Decode throughput", unit="tok/s", answer=s.tokens_per_s, rel_tol=0.03,
        question=(f"{_model_text(m, model_id)} in bf16 on one {_gpu_text(acc)}: B = {batch} sequences of "
                  f"{ctx:,} tokens. How many tokens per second does the whole batch produce (lower-bound step)?"),
        solution_latex=sol, solution_text="Each step yields one token per sequence.",
        mistakes=[Mistake(1 / s.total_s, "That is one user's speed; the batch makes B tokens per step."),
                  Mistake(batch / max(s.weights_s, s.compute_s), "Too fast: each sequence's cache must be read "
                                                                  "every step as well.")]
        if batch > 1 else
        [Mistake(1 / max(s.weights_s, s.compute_s), "Too fast: the sequence's cache is read every step as well.")]
        + [Mistake(batch / s.compute_s, "That uses the arithmetic time alone; a decode step waits for the weights "
                                        "and the cache to come from memory.")],
        page=page, link=link, source=f"{COURSE}, step 4 (2,126 tok/s at B = 32)",
        course_value=2126.0 if v == 0 else None, inputs=dict(model=model_id, gpu=gpu, context_len=ctx, batch=batch))


def _critical_batch(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        gpu, wq = "h100-sxm", "bf16"
    else:
        while True:
            gpu, wq = _pick(rng, GPUS + ("l4", "a100-40gb")), _pick(rng, ("bf16", "bf16", "fp8", "int8"))
            try:
                get_accelerator(gpu).compute_flops(wq)
                break
            except ValueError:
                continue
    acc = get_accelerator(gpu)
    ans = critical_batch(acc, wq)
    b = dtype_bytes(wq)
    p = acc.compute_flops(wq)
    sol = (r"B^* = \frac{P \cdot \text{bytes per weight}}{2 W} = \frac{" + tex(p / 1e12) + r"\times 10^{12} \times "
           + tex(b) + r"}{2 \times " + tex(acc.bandwidth_bytes_per_s / 1e12) + r"\times 10^{12}} = " + tex(ans)
           + _u("tokens"))
    return dict(
        title="Critical batch", unit="tokens", answer=ans, rel_tol=0.02,
        question=(f"{acc.name}: {p / 1e12:,.0f} TFLOP/s dense for {wq} matmuls, "
                  f"{acc.bandwidth_bytes_per_s / 1e12:,.3g} TB/s of memory bandwidth; weights in {wq} "
                  f"({b:g} B each). A decode matmul does 2 FLOPs per weight per token. From how many tokens per "
                  "step does decode turn compute-bound?"),
        solution_latex=sol, solution_text="Arithmetic per step grows with B, the weight read does not; they "
                                          "meet at B*.",
        mistakes=[Mistake(ans * 2, "Twice the answer: each weight does 2 FLOPs per token (a multiply and an add), "
                                   "the 2 in 2N."),
                  Mistake(ans * 8, "Eight times too large: bits per weight instead of bytes."),
                  Mistake(ans / b, "Close: the weights' bytes per parameter enter the read time.")] if b != 1 else
                 [Mistake(ans * 2, "Twice the answer: the 2 in 2N FLOPs per token."),
                  Mistake(ans * 8, "Eight times too large: bits instead of bytes.")],
        page="roofline", link=_link("roofline", **_sidebar("llama-3-8b", gpu, wq, "bf16"), rf_ctx=8192, rf_b=32),
        source=f"{COURSE}, step 3 (about 295 for an H100); {CS336}, one ratio (≈ 295 FLOPs per byte)",
        course_value=295.0 if v == 0 else None, inputs=dict(gpu=gpu, weight_dtype=wq))


def _cost_per_million(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, gpu, ctx, batch, price = "llama-3-8b", "h100-sxm", 8192, 1, 3.0
    else:
        while True:
            model_id, gpu = _pick(rng, _models("gqa")), _pick(rng, GPUS)
            ctx, batch, price = (_pick(rng, (2048, 4096, 8192, 16384)), _pick(rng, (1, 8, 16, 32, 64)),
                                 _pick(rng, PRICES))
            if batch <= max_batch(get_model(model_id), get_accelerator(gpu), ctx):
                break
    m, acc = get_model(model_id), get_accelerator(gpu)
    s = napkin_step(m, acc, batch, ctx)
    ans = cost_per_million(s.tokens_per_s, price)
    sol = (r"\$\text{ per 1M} = \frac{\text{price per hour}}{\text{tokens/s} \times 3600} \times 10^6 = \frac{"
           + tex(price) + r"}{" + tex(s.tokens_per_s) + r"\times 3600} \times 10^6 = " + tex(ans) + _u("USD"))
    return dict(
        title="Price of a million tokens", unit="USD", answer=ans, rel_tol=0.03,
        question=(f"{_model_text(m, model_id)} in bf16 on one {_gpu_text(acc)} rented at ${price:.2f} per hour. "
                  f"B = {batch} sequences of {ctx:,} tokens, lower-bound steps (t = {fmt_number(s.total_s * 1e3)} ms, "
                  "which you can check). What do 1M output tokens cost?"),
        solution_latex=sol, solution_text="GPUs are paid by the hour, not by the token.",
        mistakes=[Mistake(ans * 3600, "3,600 times too much: the price is per hour, the throughput per second."),
                  Mistake(ans / 1000, "That is the price of 1,000 tokens; the question asks for a million."),
                  Mistake(price / (1 / s.total_s * 3600) * 1e6, "That uses one user's tokens per second; the batch "
                                                                "shares the hour, so divide by B times more tokens.")]
        if batch > 1 else
        [Mistake(ans * 3600, "3,600 times too much: the price is per hour, the throughput per second."),
         Mistake(ans / 1000, "That is the price of 1,000 tokens; the question asks for a million.")],
        page="home", link=_link("home", **_sidebar(model_id, gpu, price=price), h_ctx=ctx, h_b=batch),
        source=f"{COURSE}, step 4 ($4.26 per million at B = 1 and $3 per hour)",
        course_value=4.26 if v == 0 else None,
        inputs=dict(model=model_id, gpu=gpu, context_len=ctx, batch=batch, price_per_hour_usd=price))


def _prefill(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, gpu, prompt = "llama-3-8b", "h100-sxm", 2048
    else:
        model_id, gpu = _pick(rng, _models("gqa")), _pick(rng, GPUS)
        prompt = _pick(rng, (512, 1024, 2048, 4096, 8192, 16384))
    m, acc = get_model(model_id), get_accelerator(gpu)
    s = napkin_prefill(m, acc, prompt)
    attn = attention_flops(m, prompt, 1)
    p = acc.compute_flops("bf16")
    matmul = 2.0 * m.active_params * prompt
    sol = (r"\text{TTFT} \approx \frac{2 N T + A}{P} + \frac{\text{KV written}}{W} = \frac{2 \times "
           + tex(m.active_params / 1e9) + r"\times 10^9 \times " + tex(prompt) + " + " + tex(attn / 1e12)
           + r"\times 10^{12}}{" + tex(p / 1e12) + r"\times 10^{12}} + " + _secs(s.kv_s) + " = " + _secs(s.compute_s)
           + " + " + _secs(s.kv_s) + " = " + _q(s.total_s, "ms"))
    if s.weights_s > s.compute_s:  # short prompt on a fast chip: the weight read dominates
        sol = sol.replace(r"\frac{2 N T + A}{P}", r"\max\left(\frac{\text{weights}}{W}, \frac{2 N T + A}{P}\right)")
    return dict(
        title="Prefill time and TTFT", unit="ms", answer=s.total_s, rel_tol=0.03,
        question=(f"{_model_text(m, model_id)} in bf16 on one {_gpu_text(acc)}. A single prompt of T = {prompt:,} "
                  f"tokens arrives at an idle server. Causal attention adds A = {attn / 1e12:,.3g} TFLOP. What is "
                  "the time to first token (a lower bound: prefill only)?"),
        solution_latex=sol, solution_text="Prefill does 2N FLOPs per prompt token and reads the weights once: "
                                          "compute-bound.",
        mistakes=[Mistake(s.total_s - s.compute_s + (matmul / 2 + attn) / p, "Too short: each parameter does 2 "
                                                                              "FLOPs per token, the 2 in 2N."),
                  Mistake(s.weights_s, "That is one pass over the weights: right for one decode step, but prefill "
                                       "is limited by its arithmetic.")],
        page="roofline", link=_link("roofline", **_sidebar(model_id, gpu), rf_ctx=8192, rf_b=32, rf_prompt=prompt),
        source=f"{COURSE}, step 3 (TTFT is queueing plus prefill); {CS336}, the two regimes",
        inputs=dict(model=model_id, gpu=gpu, prompt_len=prompt))


def _gqa_saving(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, k = "llama-2-13b", 8
    else:
        model_id = _pick(rng, _models("mha") + _models("gqa"))
        n = get_model(model_id).n_heads
        k = _pick(rng, [c for c in (1, 2, 4, 5, 8, 16) if c < n and n % c == 0] or [1])
    base = get_model(model_id)
    mha = base.with_changes(attention="mha", n_kv_heads=base.n_heads)
    gqa = base.with_changes(attention="gqa" if k > 1 else "mqa", n_kv_heads=k)
    ans = kv_bytes_per_token(mha) / kv_bytes_per_token(gqa)
    sol = (r"\frac{\text{KV}_\text{MHA}}{\text{KV}_\text{GQA}} = \frac{2 L N H \cdot \text{bytes}}{2 L K H \cdot "
           r"\text{bytes}} = \frac{N}{K} = \frac{" + f"{base.n_heads}" + "}{" + f"{k}" + "} = " + tex(ans) + _u("x"))
    return dict(
        title="What GQA saves", unit="x", answer=ans, rel_tol=0.01,
        question=(f"{base.name} has N = {base.n_heads} query heads of H = {base.head_dim} over L = {base.n_layers} "
                  f"layers. Under MHA each query head has its own KV head; with GQA the heads share K = {k} KV "
                  "heads. By what factor does GQA shrink the KV cache?"),
        solution_latex=sol, solution_text="Only the number of cached heads changes: the factor is N/K.",
        mistakes=[Mistake(1 / ans, "That is the fraction left, not the factor saved: invert it."),
                  Mistake(1 - 1 / ans, "That is the fraction saved; the question asks for the factor N/K.")],
        page="kv_cache", link=_link("kv_cache", **_sidebar(model_id), kv_layout="gqa", kv_k=k, kv_win="model",
                                    kv_ctx=8192, kv_b=1),
        source=f"{CS336}, grouped-query attention (a 1:5 ratio on the 13B config); {COURSE}, step 2 (N/K)",
        course_value=5.0 if v == 0 else None, inputs=dict(model=model_id, n_kv_heads=k))


def _mla_saving(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        k, h, dc, dr = 8, 128, 512, 64
    else:
        k, h, dc, dr = (_pick(rng, (2, 4, 8, 16)), _pick(rng, (64, 128)), _pick(rng, (256, 512, 1024)),
                        _pick(rng, (32, 64)))
    base = get_model("deepseek-v3")
    mla = base.with_changes(kv_lora_rank=dc, qk_rope_head_dim=dr)
    gqa = base.with_changes(attention="gqa", n_kv_heads=k, head_dim=h, kv_lora_rank=None, qk_rope_head_dim=None,
                            qk_nope_head_dim=None, v_head_dim=None)
    ans = kv_bytes_per_token(gqa) / kv_bytes_per_token(mla)
    sol = (r"\frac{\text{KV}_\text{GQA}}{\text{KV}_\text{MLA}} = \frac{2 K H}{d_c + d_h^R} = \frac{2 \times " + f"{k}"
           + r"\times " + f"{h}" + "}{" + f"{dc} + {dr}" + r"} = \frac{" + tex(2 * k * h) + "}{" + tex(dc + dr)
           + "} = " + tex(ans) + _u("x"))
    return dict(
        title="What MLA saves", unit="x", answer=ans, rel_tol=0.01,
        question=(f"Per token and layer, a GQA model with K = {k} KV heads of H = {h} caches a key and a value per "
                  f"KV head; an MLA model caches a latent of d_c = {dc} plus a RoPE key of d_h^R = {dr}. Same "
                  "number of layers, same dtype. By what factor is the MLA cache smaller?"),
        solution_latex=sol, solution_text="Layers and bytes cancel: compare the numbers cached per token and layer.",
        mistakes=[Mistake(2 * k * h / dc, "Close: the RoPE key is cached next to the latent (d_c + d_h^R)."),
                  Mistake(k * h / (dc + dr), "Half the answer: GQA caches K and V, 2KH numbers per layer."),
                  Mistake(1 / ans, "Inverted: the question asks how many times smaller MLA is.")],
        page="kv_cache", link=_link("kv_cache", **_sidebar("deepseek-v3"), kv_layout="mla", kv_rank=dc if dc in
                                    (128, 256, 512, 1024, 2048) else 512, kv_win="model", kv_ctx=8192, kv_b=1),
        source=f"{COURSE}, step 2, depth (576 numbers against 2,048 with GQA)",
        course_value=2048 / 576 if v == 0 else None, inputs=dict(n_kv_heads=k, head_dim=h, kv_lora_rank=dc,
                                                                 qk_rope_head_dim=dr))


def _spec_tokens(key: str, v: int) -> dict:
    rng = _rng(key, v)
    alpha, gamma = (0.8, 4) if v == 0 else (_pick(rng, (0.5, 0.6, 0.7, 0.8, 0.9)), int(rng.integers(1, 9)))
    ans = _spec.expected_tokens_per_target_forward(alpha, gamma)
    sol = (r"E[\text{tokens}] = \frac{1 - \alpha^{\gamma + 1}}{1 - \alpha} = \frac{1 - " + tex(alpha) + "^{"
           + f"{gamma + 1}" + r"}}{1 - " + tex(alpha) + "} = " + tex(ans) + _u("tokens"))
    return dict(
        title="Speculative decoding: tokens per target pass", unit="tokens", answer=ans, rel_tol=0.01,
        question=(f"A draft model proposes γ = {gamma} tokens per round; the target accepts each with probability "
                  f"α = {alpha:g}, independently, until the first rejection, and always adds one token of its own "
                  "(the correction, or a bonus token when all drafts pass). How many tokens does one target "
                  "forward pass yield on average?"),
        solution_latex=sol, solution_text="A capped geometric series: 1 + α + α² + … + α^γ.",
        mistakes=[Mistake((1 - alpha ** gamma) / (1 - alpha), "One term short: the target always adds a token of its "
                                                              "own, so the sum runs to α^γ."),
                  Mistake(gamma * alpha + 1, "The guess γα + 1 treats the drafts as independent; a rejection ends "
                                             "the round, so later drafts count only if all earlier ones pass."),
                  Mistake(gamma * alpha, "The guess γα ignores both the order of the drafts and the target's own token.")],
        page="speculative", link=_link("speculative", sd_a=float(alpha), sd_g=gamma),
        source="Leviathan et al. 2022, Eq. 1; " + f"{COURSE}, step 3",
        inputs=dict(alpha=alpha, gamma=gamma))


def _spec_speedup(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        alpha, gamma, c = 0.8, 4, 0.05
    else:
        alpha, gamma, c = (_pick(rng, (0.5, 0.6, 0.7, 0.8, 0.9)), int(rng.integers(1, 9)),
                           _pick(rng, (0.02, 0.05, 0.1, 0.2)))
    tokens = _spec.expected_tokens_per_target_forward(alpha, gamma)
    ans = _spec.walltime_speedup(alpha, gamma, c)
    sol = (r"\text{speedup} = \frac{1 - \alpha^{\gamma + 1}}{(1 - \alpha)(\gamma c + 1)} = \frac{" + tex(tokens)
           + r"}{" + f"{gamma}" + r"\times " + tex(c) + " + 1} = " + tex(ans) + _u("x"))
    return dict(
        title="Speculative decoding: wall-clock speedup", unit="x", answer=ans, rel_tol=0.01,
        question=(f"Acceptance rate α = {alpha:g}, γ = {gamma} drafts per round, and one draft step costs "
                  f"c = {c:g} of a target step. Verifying costs one target step (decode is memory-bound). What is "
                  "the expected speedup over plain decoding?"),
        solution_latex=sol, solution_text="Tokens per round divided by the round's cost in target steps.",
        mistakes=[Mistake(tokens, "That is tokens per target pass; each round also pays γ draft steps of cost c."),
                  Mistake(tokens / (c + 1), "The round runs the draft γ times, not once: divide by γc + 1.")],
        page="speculative", link=_link("speculative", sd_a=float(alpha), sd_g=gamma),
        source="Leviathan et al. 2022, Theorem 3.8; " + f"{COURSE}, step 3",
        inputs=dict(alpha=alpha, gamma=gamma, cost_ratio=c))


def _prefix_cache(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, n, prefix = "llama-3-8b", 20, 1000
    else:
        model_id = _pick(rng, _models("gqa"))
        n, prefix = _pick(rng, (5, 10, 20, 50, 100, 200)), _pick(rng, (500, 1000, 2000, 4000, 8000))
    m = get_model(model_id)
    sv = prefix_cache_savings(m, n, prefix, 0, 1.0)
    per_tok = kv_bytes_per_token(m)
    sol = (r"\text{KV} = P \times \text{KV per token} = " + tex(prefix) + r"\times " + tex(per_tok) + _u("B")
           + " = " + _q(sv.cache_bytes_with, "MB"))
    return dict(
        title="Prefix caching", unit="MB", answer=sv.cache_bytes_with, rel_tol=0.02,
        question=(f"{n} conversations with {m.name} (KV per token {per_tok:,.0f} B in bf16) share one system prompt "
                  f"of P = {prefix:,} tokens. With prefix caching (every request finds the prefix), how much KV "
                  "memory do the shared prompts take? (MB = 10^6 bytes.)"),
        solution_latex=sol,
        solution_text=(f"The prefix is prefilled and stored once, not once per conversation (without the cache: "
                       f"{n} x {prefix:,} tokens x {per_tok:,.0f} B = {fmt_number(sv.cache_bytes_without / 1e9)} GB)."),
        mistakes=[Mistake(sv.cache_bytes_without, f"That is without the cache: {n} copies of the prompt. The prefix "
                                                  "cache keeps one."),
                  Mistake(sv.cache_bytes_with / 2, "Half the answer: K and V are both cached.")],
        page="batching", link=_link("batching", **_sidebar(model_id), bt_pn=n, bt_pl=prefix, bt_pu=0, bt_hit=1.0),
        source=f"{COURSE}, step 2 (20 conversations, 1,000-token prompt: 2.6 GB without, 131 MB with)",
        course_value=131e6 if v == 0 else None, inputs=dict(model=model_id, n_requests=n, prefix_len=prefix))


def _monthly_bill(key: str, v: int) -> dict:
    rng = _rng(key, v)
    tiers = _api_tiers.default_tiers()  # the price list's tiers, in its order (the middle one for variant 0)
    if v == 0:
        dau, hit, tier_index = 100_000, 70, min(1, len(tiers) - 1)
    else:
        dau = _pick(rng, (10_000, 50_000, 100_000, 500_000, 1_000_000))
        hit, tier_index = _pick(rng, (0, 30, 50, 70, 90, 95)), int(rng.integers(len(tiers)))
    tier = tiers[tier_index]
    sc = _traffic.TrafficScenario(dau=dau, cache_hit_rate=hit / 100)
    b = _bill.api_monthly_bill(sc, tier)
    t = sc.token_split()
    g = sc.generations_per_day
    m = tier.cache_write_multiplier
    write = (r" + " + tex(t["written"]) + r"\times " + tex(m - 1) + r"\times " + tex(tier.input_usd_per_mtok)) \
        if m != 1 else ""
    sol = (r"\text{month} = 30 \cdot G \cdot \frac{\text{missed} \cdot p_\text{in} + \text{hit} \cdot p_\text{cached}"
           + (r" + \text{written} (m - 1) p_\text{in}" if m != 1 else "") + r" + \text{out} \cdot p_\text{out}}{10^6}"
           + r" = 30 \times " + tex(g) + r"\times \frac{" + tex(t["missed"]) + r"\times " + tex(tier.input_usd_per_mtok)
           + " + " + tex(t["hit"]) + r"\times " + tex(tier.cached_input_usd_per_mtok) + write + " + "
           + tex(t["output"]) + r"\times " + tex(tier.output_usd_per_mtok) + r"}{10^6} = " + tex(b.total_usd)
           + _u("USD"))
    no_hit = _bill.api_monthly_bill(sc.replace(cache_hit_rate=0.0), tier).total_usd
    return dict(
        title="Monthly bill with prompt-cache hits", unit="USD", answer=b.total_usd, rel_tol=0.02,
        question=(f"A product has {dau:,} daily active users; 1% remix and 0.1% create each day, 5 generations "
                  f"each (G = {g:,.0f} generations a day). Each generation sends a {sc.shared_prefix_tokens:,.0f}-token "
                  f"shared prefix and {sc.unique_input_tokens:,.0f} unique tokens, and gets "
                  f"{sc.output_tokens:,.0f} tokens back. {hit}% of prefixes are read from the prompt cache. "
                  f"Prices of {tier.model} per 1M tokens: ${tier.input_usd_per_mtok:g} input, "
                  f"${tier.cached_input_usd_per_mtok:g} cached input, ${tier.output_usd_per_mtok:g} output"
                  + (f"; a cache miss also writes the prefix at {m:g}x the input price" if m != 1 else "")
                  + ". What is the bill for a 30-day month?"),
        solution_latex=sol, solution_text="Input billed by how it was served (missed, hit, written), output at its "
                                          "own price, times the month's generations.",
        mistakes=[Mistake(b.total_usd / 30, "That is one day's bill: the month has 30."),
                  *([Mistake(no_hit, "That ignores the cache: hits are billed at the cached price.")] if hit else []),
                  Mistake(b.total_usd * 1000, "1,000 times too much: prices are per million tokens, not per thousand.")],
        page="monthly_bill", link=_link("monthly_bill", mb_dau=dau, mb_remix=1.0, mb_orig=0.1, mb_gens=5.0,
                                        mb_prefix=3000, mb_unique=500, mb_out=500, mb_hit=hit),
        source=f"{CHAPTER}, the monthly cost formula (plus the cache-write surcharge of the price list)",
        inputs=dict(dau=dau, cache_hit_pct=hit, tier=tier_index))


def _paging(key: str, v: int, paged: bool) -> dict:
    rng = _rng(key, v)
    if v == 0:
        prompt, output, max_len, block = (1024, 16, 2048, 64) if paged else (512, 256, 2048, 16)
    else:
        while True:  # the paged problem needs a partly filled last block
            prompt, output = _pick(rng, (64, 128, 256, 512, 1024)), _pick(rng, (16, 32, 64, 128, 256, 512))
            max_len, block = _pick(rng, (2048, 4096, 8192)), _pick(rng, (16, 32, 64, 128, 256))
            if not paged or (prompt + output) % block:
                break
    length = prompt + output
    per_tok = kv_bytes_per_token(get_model("llama-3-8b"))
    _, s = kv_reservation([length], per_tok, max_len, block)
    if not paged:
        ans = s.contiguous_waste_fraction
        sol = (r"\text{waste} = 1 - \frac{\text{length}}{\text{max length}} = 1 - \frac{" + tex(length) + "}{"
               + tex(max_len) + "} = " + tex(ans * 100) + _u("%"))
        question = (f"A server reserves a contiguous KV slab for the maximum length, {max_len:,} tokens, per request. "
                    f"A request has a {prompt:,}-token prompt and {output:,} output tokens. What share of its "
                    "reservation is wasted?")
        mistakes = [Mistake(1 - ans, "That is the share used; the question asks for the share wasted."),
                    Mistake(1 - prompt / max_len, "The output tokens are cached too: the request holds prompt + "
                                                  "output tokens.")]
        title = "Paging: waste of contiguous slabs"
    else:
        ans = s.paged_waste_fraction
        blocks = -(-length // block)
        sol = (r"\text{waste} = \frac{\lceil \ell / b \rceil b - \ell}{\lceil \ell / b \rceil b} = \frac{" + f"{blocks}"
               + r"\times " + f"{block}" + " - " + tex(length) + "}{" + f"{blocks}" + r"\times " + f"{block}" + "} = "
               + tex(ans * 100) + _u("%"))
        question = (f"PagedAttention allocates the KV cache in blocks of b = {block} tokens on demand. A request "
                    f"holds ℓ = {prompt:,} + {output:,} = {length:,} tokens. What share of the memory allocated to it "
                    "is wasted (the unfilled tail of its last block)?")
        mistakes = [Mistake(1 - ans, "That is the share used; the question asks for the share wasted."),
                    Mistake(s.contiguous_waste_fraction, f"That is the waste of a contiguous {max_len:,}-token slab; "
                                                         "pages waste at most one block's tail.")]
        title = "Paging: waste of PagedAttention blocks"
    return dict(
        title=title, unit="%", answer=ans, rel_tol=0.0, abs_tol=0.005,
        question=question, solution_latex=sol,
        solution_text="Contiguous slabs reserve for the worst case; pages only round up to a block.",
        mistakes=mistakes,
        page="batching", link=_link("batching", **_sidebar("llama-3-8b"), bt_dist="fixed", bt_pmean=prompt,
                                    bt_omean=output, bt_maxlen=max_len, bt_block=block),
        source=f"{CS336}, PagedAttention; {CHAPTER} (utilisation often below 40% before paging)",
        inputs=dict(prompt=prompt, output=output, max_len=max_len, block=block))


def _contiguous_waste(key: str, v: int) -> dict:
    return _paging(key, v, paged=False)


def _paged_waste(key: str, v: int) -> dict:
    return _paging(key, v, paged=True)


def _cache_equals_weights(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, ctx = COURSE_13B_ID, 4096
    else:
        model_id, ctx = _pick(rng, _models("gqa")), _pick(rng, (2048, 4096, 8192, 16384, 32768))
    m = _model(model_id)
    ans = batch_where_cache_equals_weights(m, ctx)
    wb, kv = weight_bytes(m), kv_cache_bytes(m, ctx, 1)
    sol = (r"B = \frac{\text{weight bytes}}{\text{KV per sequence}} = \frac{" + _bytes(wb) + "}{" + _bytes(kv)
           + "} = " + tex(ans) + _u("sequences"))
    page, link = _quant_link(model_id, "h100-sxm", ctx, 32) if model_id == COURSE_13B_ID else \
        ("roofline", _link("roofline", **_sidebar(model_id), rf_ctx=ctx if ctx <= 131072 else 8192, rf_b=32))
    return dict(
        title="When the cache outweighs the weights", unit="sequences", answer=ans, rel_tol=0.03,
        question=(f"{_model_text(m, model_id)}, weights and cache in bf16, sequences of {ctx:,} tokens. From what "
                  "batch size does reading the batch's cache take longer than reading the weights?"),
        solution_latex=sol, solution_text="Past this batch the step grows almost linearly in B.",
        mistakes=[Mistake(ans * 2, "Twice the answer: the cache holds K and V, so one sequence weighs twice as "
                                   "much as you counted."),
                  Mistake(ans / 2, "Half the answer: a bf16 parameter is 2 bytes, like a cached number.")],
        page=page, link=link, source=f"{COURSE}, back-of-the-envelope problem 5 (from B ≈ 39) and step 4 (15)",
        course_value=39.0 if v == 0 else None, inputs=dict(model=model_id, context_len=ctx))


def _throughput_ceiling(key: str, v: int) -> dict:
    rng = _rng(key, v)
    if v == 0:
        model_id, gpu, ctx = "llama-3-8b", "h100-sxm", 8192
    else:
        model_id, gpu, ctx = _pick(rng, _models("gqa")), _pick(rng, GPUS), _pick(rng, (2048, 4096, 8192, 16384, 32768))
    m, acc = get_model(model_id), get_accelerator(gpu)
    ans = throughput_ceiling_tokens_per_s(m, acc, ctx)
    kv = kv_cache_bytes(m, ctx, 1)
    sol = (r"\lim_{B \to \infty} \frac{B}{t} = \frac{W}{\text{KV per sequence}} = \frac{"
           + tex(acc.bandwidth_bytes_per_s / 1e12) + r"\,\text{TB/s}}{" + _bytes(kv) + "} = " + tex(ans) + _u("tok/s"))
    return dict(
        title="The throughput ceiling", unit="tok/s", answer=ans, rel_tol=0.03,
        question=(f"{_model_text(m, model_id)} on one {_gpu_text(acc)}, sequences of {ctx:,} tokens, cache in bf16. "
                  "Ignoring the memory limit, what decode throughput does the batch approach as B grows without "
                  "bound?"),
        solution_latex=sol, solution_text="Every extra sequence brings one token and its own cache read, which "
                                          "no batch shares.",
        mistakes=[Mistake(ans / 2, "Half the answer: the cache of a sequence was counted twice?"),
                  Mistake(ans * 2, "Twice the answer: did you forget the factor 2 for K and V?")],
        page="roofline", link=_link("roofline", **_sidebar(model_id, gpu), rf_ctx=ctx, rf_b=1024),
        source=f"{COURSE}, step 4 (a ceiling of W / KV ≈ 3,120 tok/s)",
        course_value=3120.0 if v == 0 else None, inputs=dict(model=model_id, gpu=gpu, context_len=ctx))


#: Every template in the order the page lists them: key -> builder.
TEMPLATES = {
    "kv_per_token": _kv_per_token,
    "kv_per_sequence": _kv_per_sequence,
    "kv_mha": _kv_mha,
    "kv_mla": _kv_mla,
    "kv_window": _kv_window,
    "max_batch": _max_batch,
    "single_user_ceiling": _single_user,
    "decode_step": _decode_step,
    "decode_throughput": _decode_throughput,
    "cache_equals_weights": _cache_equals_weights,
    "throughput_ceiling": _throughput_ceiling,
    "critical_batch": _critical_batch,
    "cost_per_million": _cost_per_million,
    "prefill_ttft": _prefill,
    "gqa_saving": _gqa_saving,
    "mla_saving": _mla_saving,
    "spec_tokens": _spec_tokens,
    "spec_speedup": _spec_speedup,
    "prefix_cache": _prefix_cache,
    "monthly_bill": _monthly_bill,
    "contiguous_waste": _contiguous_waste,
    "paged_waste": _paged_waste,
}


def check_variant(variant) -> int:
    """The variant as an int in [0, MAX_VARIANT].

    Raises:
        ValueError: not a whole number in range.
    """
    try:
        v = int(str(variant).strip())
    except (TypeError, ValueError):
        raise ValueError(f"the variant must be a whole number from 0 to {MAX_VARIANT:,}, got {variant!r}") from None
    if not 0 <= v <= MAX_VARIANT:
        raise ValueError(f"the variant must be a whole number from 0 to {MAX_VARIANT:,}, got {v}")
    return v


def exercise(key: str, variant: int = 0) -> Exercise:
    """The problem ``key`` for ``variant`` (0 = the course's numbers).

    Raises:
        ValueError: unknown key or a variant outside [0, MAX_VARIANT].
    """
    if key not in TEMPLATES:
        raise ValueError(f"unknown exercise {key!r}; valid: {', '.join(TEMPLATES)}")
    v = check_variant(variant)
    d = TEMPLATES[key](key, v)
    d.setdefault("abs_tol", 0.0)
    d["solution_latex"] = break_lines(d["solution_latex"])
    d["state"] = d.pop("link")
    d["link"] = encode_state(d["state"])
    d["question"] = d["question"][:1].upper() + d["question"][1:]
    mistakes = d.pop("mistakes")
    ex = Exercise(key=key, number=list(TEMPLATES).index(key) + 1, variant=v, mistakes=(), **d)
    # A mistake is diagnosable only if it does not land on the answer (in any unit) or on an earlier
    # mistake: with these inputs (a zero reserve, one-byte weights) some slips change nothing.
    kept: list[Mistake] = []
    for m in mistakes:
        clash = [ex.answer] + [k.value for k in kept]
        if m.value and math.isfinite(m.value) and not any(
                _close(m.value * UNITS[u][1] / UNITS[ex.unit][1], c, ex) or _close(m.value, c, ex)
                for c in clash for u in ex.unit_choices):
            kept.append(m)
    return dataclasses.replace(ex, mistakes=tuple(kept))


def all_exercises(variant: int = 0) -> list[Exercise]:
    """Every problem of one variant, in page order."""
    return [exercise(k, variant) for k in TEMPLATES]


# -- grading ----------------------------------------------------------------------------------------
def _close(x: float, target: float, ex: Exercise) -> bool:
    return abs(x - target) <= max(ex.rel_tol * abs(target), ex.abs_tol) * (1 + 1e-9)


def _siblings(unit: str, other: str) -> bool:
    """Whether two units of one dimension differ by less than 12% (a decimal prefix and its binary one: kB and KiB,
    1.024; GB and GiB, 1.074; TB and TiB, 1.100): the unit confusion a student makes on top of a formula's mistake."""
    ratio = UNITS[other][1] / UNITS[unit][1]
    return 1 / 1.12 <= ratio <= 1.12


def grade(ex: Exercise, value, unit: str) -> Grade:
    """Grade a typed answer ``value`` in ``unit`` against ``ex``.

    Accepted within the stated tolerance. A negative number, or one past what the unit holds (1e308 kB), is said
    as such. Otherwise the first matching diagnosis: the right number in another unit of the same kind (GiB vs
    GB, ms vs s), or one of the exercise's known mistakes (forgotten K and V, the 2 in 2N, bits vs bytes, per
    token vs per sequence), in the chosen unit or its decimal or binary sibling, else "too high / too low".

    Raises:
        ValueError: never for a typed number; a unit not in ``UNITS`` gives a Grade with a message.
    """
    try:
        x = float(value)
    except (TypeError, ValueError):
        return Grade(False, "Type a number.", "input")
    if not math.isfinite(x):
        return Grade(False, "Type a finite number.", "input")
    if unit not in UNITS or UNITS[unit][0] != ex.dimension:
        return Grade(False, f"Answer in one of: {', '.join(ex.unit_choices)}.", "unit")
    base = x * UNITS[unit][1]
    if x < 0 <= ex.answer:
        return Grade(False, "The answer is a size, a time or a rate: not below zero. Type it without the minus sign.",
                     "input")
    if not math.isfinite(base):  # 1e308 kB: a finite number whose size in the base unit is not
        return Grade(False, "Far too high: that number is past any the formula gives. Check each factor.", "off")
    if _close(base, ex.answer, ex):
        return Grade(True, f"Correct: {ex.answer_text} ({ex.tolerance_text}).", "")
    for other in ex.unit_choices:
        if other != unit and _close(x * UNITS[other][1], ex.answer, ex):
            note = _UNIT_NOTES.get(frozenset({unit, other}), f"1 {other} = {UNITS[other][1] / UNITS[unit][1]:g} {unit}")
            return Grade(False, f"Your number is right in {other}, but you chose {unit} ({note}).", "unit")
    for m in ex.mistakes:
        if m.value and _close(base, m.value, ex):
            return Grade(False, m.hint, "factor")
    for m in ex.mistakes:  # the same mistake typed in the unit's decimal or binary sibling (kB for KiB, GB for GiB):
        for other in ex.unit_choices:  # units 1,000 times apart would diagnose any round number ("1 kB" as MiB)
            if other != unit and m.value and _siblings(unit, other) and _close(x * UNITS[other][1], m.value, ex):
                return Grade(False, m.hint + f" (And check the unit: that number is in {other}.)", "factor")
    direction = "high" if base > ex.answer else "low"
    ratio = base / ex.answer if ex.answer else float("inf")
    return Grade(False, f"Not within the tolerance ({ex.tolerance_text}): too {direction} "
                        f"(x{fmt_number(ratio)} of the answer). Check each factor of the formula.", "off")


def solution_number(ex: Exercise) -> tuple[float, str]:
    """The number and unit the worked solution ends with (parsed from ``solution_latex``), in that unit."""
    tail = ex.solution_latex.removesuffix(r"\end{aligned}").rsplit("=", 1)[1]
    num, unit = tail.split(r"\,\text{", 1)
    unit = unit.rstrip("}").replace("\\%", "%")
    return float(num.replace("{,}", "").strip()), unit
