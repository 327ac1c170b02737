"""Sentences a page shows beside its numbers: which memory convention a fit verdict follows, and the
course's napkin step beside the gathered one."""
from __future__ import annotations

import calc
from ui.formats import fmt_bytes, fmt_number, fmt_seconds, md_escape


def capacity_label(accelerator: calc.Accelerator, memory: str, gpu_memory_utilization: float,
                   runtime_reserve_bytes: float = 0.0) -> str:
    """ "data-sheet capacity, 80.00 GB" and the like: the convention a fit verdict follows."""
    cap = fmt_bytes(accelerator.memory_bytes)
    if memory == "driver":
        return (f"the driver's total, {cap}" if accelerator.driver_memory_bytes
                else f"the data sheet's {cap} (no driver figure on file for this accelerator)")
    if memory == "engine":
        less = f" less a {fmt_bytes(runtime_reserve_bytes)} runtime reserve" if runtime_reserve_bytes else ""
        return f"an engine's share, {gpu_memory_utilization:g} x the driver's total{less} = {cap}"
    return f"the data-sheet capacity, {cap}"


def no_batch_sentence(model: calc.ModelConfig, accelerator: calc.Accelerator, context_len: int, weight_dtype: str,
                      kv_dtype: str) -> str:
    """Why not one sequence of ``context_len`` tokens fits on one ``accelerator`` (``calc.max_batch`` is 0), and
    what to change: the weights alone do not fit in its memory, or they do and one sequence's KV cache does not
    fit beside them. The pages that find no batch say it with these words."""
    weights_b = calc.weight_bytes(model, weight_dtype)
    head = (f"The weights of {md_escape(model.name)} in {weight_dtype} ({fmt_bytes(weights_b)}) "
            f"{'do not fit' if weights_b >= accelerator.memory_bytes else 'fit'} on one {accelerator.name} "
            f"({fmt_bytes(accelerator.memory_bytes)})")
    more_gpus = "or spread the model over several GPUs (the Many GPUs page)"
    if weights_b >= accelerator.memory_bytes:
        return (f"{head}: no batch can be served. Pick a smaller model, a smaller weight dtype or a larger "
                f"accelerator, {more_gpus}.")
    one = calc.kv_cache_bytes(model, context_len, 1, kv_dtype)
    return (f"{head}, but one sequence's KV cache at S = {context_len:,} ({fmt_bytes(one)} in {kv_dtype}) does not fit "
            f"beside them: no batch can be served. Shorten the context, quantize the KV cache, pick a larger "
            f"accelerator, {more_gpus}.")


def napkin_note(sel: "Selection", step, batch: int, context_len: int) -> str | None:
    """A sentence giving the course's napkin step beside ``step`` (the gathered one), or None when
    they agree (tied embeddings, or the sidebar already set to the napkin)."""
    if sel.embedding != "gather" or not calc.memory.input_embedding_params(sel.model):
        return None
    napkin = calc.decode_step_time(sel.model, sel.accelerator, batch, context_len, sel.weight_dtype, sel.kv_dtype,
                                   embedding="table")
    if napkin.total_s == step.total_s:
        return None
    table = calc.memory.input_embedding_params(sel.model) * calc.dtype_bytes(sel.weight_dtype)
    what = "input embedding table"
    if sel.model.learned_positions:
        what = ("learned position table" if sel.model.tie_word_embeddings
                else "input embedding and learned position tables")
    return (f"Course napkin: {fmt_seconds(napkin.total_s)} ({fmt_number(napkin.tokens_per_s, 'tok/s')}). It reads every "
            f"parameter each step, the {fmt_bytes(table)} {what} included; a step only looks up "
            f"{batch:,} of its rows, which is what {fmt_seconds(step.total_s)} counts. Switch in the sidebar.")
