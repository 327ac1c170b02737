"""Sentences a page shows beside its numbers: which memory convention a fit verdict follows, and the
course's napkin step beside the gathered one."""
from __future__ import annotations

import calc
from ui.formats import fmt_bytes, fmt_number, fmt_seconds


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
