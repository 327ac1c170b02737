"""What a poll asks: an exercise of the Exercises page (by key and variant), or "predict this number" for
a page state that calc computes (a model, a GPU, a context, a batch).

A question's spec is a small dict (stored as JSON): ``{"kind": "exercise", "key": ..., "variant": ...}``
or ``{"kind": "predict", "quantity": ..., "model": ..., "gpu": ..., "context": ..., "batch": ...}``.
``build`` turns a spec into an ``Exercise`` (the exercises module's dataclass): the question's text, the
answer from calc, its unit and tolerance, the known mistakes with their hints, and the page state that
shows why. The predictions follow the course's napkin conventions (the inference course, week 11, steps
1-4: every weight read once per step, each sequence's cache read once per step).
"""
from __future__ import annotations

import functools
import json

from calc import get_accelerator, get_model, kv_cache_bytes, list_models
from course import exercises as ex_calc

#: Predictable quantities: key -> what the teacher's menu calls it.
QUANTITIES = {
    "tpot": "Time per output token (one decode step)",
    "throughput": "Decode throughput of the batch (tokens/s)",
    "kv_seq": "KV cache of one sequence",
}
#: Contexts and batches the roofline and KV cache pages' sliders offer (a link must land on a stop).
CONTEXTS = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
BATCHES = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024)
GPUS = ex_calc.GPUS
Exercise = ex_calc.Exercise
Mistake = ex_calc.Mistake
UNITS = ex_calc.UNITS
fmt_number = ex_calc.fmt_number


def exercise_menu() -> dict[str, str]:
    """Exercise key -> "N. title" (variant 0's titles), in the Exercises page's order."""
    return {k: f"{i}. {ex_calc.exercise(k, 0).title}" for i, k in enumerate(ex_calc.TEMPLATES, 1)}


def models() -> list[str]:
    """Model ids a prediction may use (calc's presets)."""
    return list(list_models())


def check_spec(spec: dict) -> dict:
    """The spec with its values checked and normalised (ints as ints, only known keys).

    Raises:
        ValueError: not a dict, an unknown kind, key, quantity, model or GPU, or a context, batch or variant
            outside what the pages offer.
    """
    if not isinstance(spec, dict):
        raise ValueError("a question is a dict with a kind")
    kind = spec.get("kind")
    if kind == "exercise":
        key = spec.get("key")
        if key not in ex_calc.TEMPLATES:
            raise ValueError(f"unknown exercise {key!r}")
        return {"kind": "exercise", "key": key, "variant": ex_calc.check_variant(spec.get("variant", 0))}
    if kind == "predict":
        q, model, gpu = spec.get("quantity"), spec.get("model"), spec.get("gpu")
        if q not in QUANTITIES:
            raise ValueError(f"unknown quantity {q!r}; valid: {', '.join(QUANTITIES)}")
        if model not in list_models():
            raise ValueError(f"unknown model {model!r}")
        if gpu not in GPUS:
            raise ValueError(f"unknown GPU {gpu!r}; valid: {', '.join(GPUS)}")
        try:
            ctx, batch = int(spec.get("context")), int(spec.get("batch", 1))
        except (TypeError, ValueError):
            raise ValueError("the context and the batch must be whole numbers") from None
        if ctx not in CONTEXTS:
            raise ValueError(f"the context must be one of {', '.join(f'{c:,}' for c in CONTEXTS)} tokens")
        if batch not in BATCHES:
            raise ValueError(f"the batch must be one of {', '.join(map(str, BATCHES))}")
        return {"kind": "predict", "quantity": q, "model": model, "gpu": gpu, "context": ctx,
                "batch": 1 if q == "kv_seq" else batch}
    raise ValueError(f"unknown question kind {kind!r} (exercise or predict)")


def build(spec: dict) -> Exercise:
    """The question ``spec`` as an Exercise (answer in base units, unit, tolerance, mistakes, page link).

    Raises:
        ValueError: see ``check_spec``.
    """
    return _build(json.dumps(check_spec(spec), sort_keys=True))


def label(spec: dict) -> str:
    """A one-line name of the question, e.g. "Decode step time (variant 7)" or "Predict: ... (Llama-3-8B ...)"."""
    ex = build(spec)
    if spec["kind"] == "exercise":
        return f"{ex.title} (variant {spec['variant']})"
    batch = "" if spec["quantity"] == "kv_seq" else f", B = {spec['batch']}"
    return f"{ex.title} ({spec['model']}, {spec['gpu']}, S = {spec['context']:,}{batch})"


@functools.lru_cache(maxsize=256)
def _build(spec_json: str) -> Exercise:
    spec = json.loads(spec_json)
    if spec["kind"] == "exercise":
        return ex_calc.exercise(spec["key"], spec["variant"])
    return _predict(spec)


def _keep(answer: float, rel_tol: float, mistakes: list[Mistake]) -> tuple[Mistake, ...]:
    # A mistake that lands on the answer, or on an earlier mistake, cannot be told apart: dropped.
    kept: list[Mistake] = []
    for m in mistakes:
        if m.value > 0 and all(abs(m.value - c) > rel_tol * abs(c) for c in [answer] + [k.value for k in kept]):
            kept.append(m)
    return tuple(kept)


def _predict(spec: dict) -> Exercise:
    q, model_id, gpu, ctx, batch = spec["quantity"], spec["model"], spec["gpu"], spec["context"], spec["batch"]
    m, acc = get_model(model_id), get_accelerator(gpu)
    state = {"model": model_id, "gpu": gpu, "wq": "bf16", "kvq": "bf16", "emb": "table"}
    where = (f"{m.name} in bf16 on one {acc.name} ({acc.bandwidth_bytes_per_s / 1e12:,.3g} TB/s), "
             f"B = {batch} sequences of {ctx:,} tokens of context")
    rel = 0.05
    if q in ("tpot", "throughput"):
        s = ex_calc.napkin_step(m, acc, batch, ctx)
        no_cache = max(s.weights_s, s.compute_s)
        half_kv = s.kv_s / 2 + no_cache
        page, state = "roofline", {**state, "rf_ctx": ctx, "rf_b": batch}
        if q == "tpot":
            answer, unit, title = s.total_s, "ms", "Predict: the time per output token"
            question = f"{where}. Predict the time of one decode step (each sequence's time per output token)."
            mistakes = [Mistake(no_cache, "Too short: every sequence's cache is read each step too (B x KV / W)."),
                        Mistake(half_kv, "The cache part is half what it should be: forgetting K and V (x2)."),
                        Mistake(s.total_s / batch, "That is the step divided by the batch: per token of the batch, "
                                                   "not per sequence; each sequence waits the whole step."),
                        Mistake(s.total_s * 8, "Eight times too long: bits, not bytes.")]
        else:
            answer, unit, title = batch / s.total_s, "tok/s", "Predict: the batch's decode throughput"
            question = f"{where}. Predict the decode throughput of the whole batch, in tokens per second."
            mistakes = [Mistake(1 / s.total_s, "That is one sequence's speed: per sequence, not per batch; the "
                                               "batch makes B tokens per step."),
                        Mistake(batch / no_cache, "Too fast: each sequence's cache must be read every step too."),
                        Mistake(batch / half_kv, "Too fast: the cache holds K and V (x2)."),
                        Mistake(answer / 8, "Eight times too slow: bits, not bytes.")]
        solution = (f"A decode step reads the weights once for the batch and each sequence's cache: "
                    f"{fmt_number(s.weights_s * 1e3)} ms + {fmt_number(s.kv_s * 1e3)} ms of cache = "
                    f"{fmt_number(s.total_s * 1e3)} ms ({s.bound}-bound).")
    else:
        answer, unit, title = float(kv_cache_bytes(m, ctx, 1)), "GB", "Predict: one sequence's KV cache"
        page, state = "kv_cache", {**state, "kv_layout": "model", "kv_win": "model", "kv_ctx": ctx, "kv_b": 1}
        question = (f"{m.name} ({m.n_layers} layers, {m.n_kv_heads} KV heads of {m.head_dim}), cache in bf16. "
                    f"Predict the KV cache of one sequence of {ctx:,} tokens.")
        mistakes = [Mistake(answer / 2, "About half: forgetting K and V (x2); every token keeps a key and a value."),
                    Mistake(answer / ctx, "That is the cache per token; a sequence holds S tokens: per token vs "
                                          "per sequence."),
                    Mistake(answer * 8, "Eight times too large: bits, not bytes.")]
        if m.n_kv_heads and m.n_heads != m.n_kv_heads:
            mistakes.append(Mistake(answer * m.n_heads / m.n_kv_heads,
                                    "Too large: the cache holds the K KV heads, not the N query heads."))
        solution = (f"2 (K and V) x layers x KV heads x head size x 2 bytes x {ctx:,} tokens = "
                    f"{fmt_number(answer / 1e9)} GB.")
    return Exercise(key=f"predict_{q}", number=0, title=title, variant=0, question=question, answer=answer,
                    unit=unit, rel_tol=rel, abs_tol=0.0, solution_latex="", solution_text=solution, page=page,
                    state=state, link=ex_calc.encode_state(state), mistakes=_keep(answer, rel, mistakes),
                    source=f"{ex_calc.COURSE}, steps 1-4 (napkin conventions)",
                    inputs={"model": model_id, "gpu": gpu, "context_len": ctx, "batch": batch})
