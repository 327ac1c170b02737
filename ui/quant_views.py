"""The quantization page's parts: the four formats side by side (memory, decode step, max batch in one figure,
and their table), the formats as stored, and the decode step against batch for int8 weights or an int8 cache.

The numbers come from calc.sweeps (``quantization_table``, ``stored_format_steps``) and calc.decode_sweep; this
module draws them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from calc.number_text import join_and
from ui import charts, columns, formats, html_table


def formats_figure(table: pd.DataFrame, acc, batch: int, ctx: int):
    """Three panels in one figure: memory at B and S, the decode step's parts, the max batch, per format."""
    # Three panels in one figure: the browser draws one chart, not three, when B or S moves.
    titles = (f"<b>Memory at B = {batch}, {ctx:,} tokens</b>", f"<b>Decode step at B = {batch}</b>",
              f"<b>Max batch at {ctx:,} tokens</b>")
    fig = charts.Figure(subplots=dict(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.09))
    fig.update_annotations(yshift=78, font_size=15)  # the panel titles above the legends
    # Each panel starts the house colours afresh (one figure would otherwise carry the cycle on across panels).
    colors = ("#2563eb", "#f97316", "#16a34a")
    for (col, name), color in zip((("weights_bytes", "weights"), ("kv_bytes", f"KV cache (B = {batch})")), colors):
        fig.add_bar(x=table["format"], y=table[col] / 1e9, name=name, legend="legend", row=1, col=1, marker_color=color,
                    hovertemplate="%{x}: %{y:,.2f} GB<extra></extra>")
    fig.add_hline(y=acc.memory_bytes / 1e9, line_dash="dash", line_color="#888888", row=1, col=1,
                  annotation_text=f"{acc.memory_bytes / 1e9:,.0f} GB")
    for (col, name), color in zip((("weights_read_s", "weights read"), ("kv_read_s", "cache read"), ("step_s", "step")),
                                  colors):
        fig.add_bar(x=table["format"], y=table[col] * 1e3, name=name, legend="legend2", row=1, col=2, marker_color=color,
                    hovertemplate="%{x}: %{y:,.2f} ms<extra></extra>")
    fig.add_bar(x=table["format"], y=table["max_batch"], name="max batch", showlegend=False, row=1, col=3,
                marker_color=colors[0],
                hovertemplate="%{x}: %{y:,} sequences<extra></extra>")
    fig.update_xaxes(title="format")
    fig.update_yaxes(title="memory (GB)", row=1, col=1)
    fig.update_yaxes(title="time per decode step (ms)", row=1, col=2)
    fig.update_yaxes(title="max batch (sequences)", row=1, col=3)
    legend = dict(orientation="v", yanchor="bottom", y=1.02, xanchor="left", font_size=13)
    fig.update_layout(barmode="group", height=470, legend2=dict(legend, x=0.37),
                      margin=dict(t=115))
    fig.update_layout(legend=dict(legend, x=0.0))
    return fig


def zero_batch_reasons(table: pd.DataFrame, acc, reserve_bytes: float = 0.0) -> str:
    """Why each format of ``table`` (``calc.sweeps.quantization_table``) with a max batch of 0 holds no sequence,
    as a clause for the page's warning: "; max batch 0 for bf16 and fp8: the weights alone do not fit; for int4:
    one sequence's KV cache does not fit beside the weights" ("" when every format holds one). The weights alone
    (with the reserve) may fill the memory, or they fit and one sequence's cache at this context does not fit
    beside them."""
    zero = table[table["max_batch"] < 1]
    if zero.empty:
        return ""
    alone = "the weights and the reserve alone do not fit" if reserve_bytes > 0 else "the weights alone do not fit"
    beside = "one sequence's KV cache does not fit beside the weights"
    groups: dict[str, list[str]] = {}
    for r in zero.itertuples():
        groups.setdefault(alone if r.weights_bytes + reserve_bytes >= acc.memory_bytes else beside, []).append(r.format)
    parts = [f"for {join_and(names)}: {why}"
             for why, names in groups.items()]
    return "; max batch 0 " + "; ".join(parts)


def formats_table(table: pd.DataFrame, batch: int) -> None:
    """The formats' table: the key columns, and every column in an expander built only while open."""
    shown = table.copy()
    for c in ("weights_bytes", "kv_bytes", "total_bytes"):
        shown[c] = [formats.fmt_bytes(x) for x in table[c]]
    for c in ("weights_read_s", "kv_read_s", "compute_s", "step_s"):
        shown[c] = [formats.fmt_seconds(x) for x in table[c]]
    shown["tokens_per_s"] = [formats.fmt_number(x) for x in table["tokens_per_s"]]
    format_columns = {
        "format": st.column_config.TextColumn("format", width="small", pinned=True),
        "weight_dtype": st.column_config.TextColumn("weights", width="small"),
        "kv_dtype": st.column_config.TextColumn("KV cache", width="small"), "weights_bytes": "weight memory",
        "kv_bytes": f"KV memory (B = {batch:,})", "total_bytes": "total memory",
        "gpus_needed": columns.column("gpus_needed", width="small"), "weights_read_s": "weight read",
        "kv_read_s": "KV read", "compute_s": columns.text_column("compute_s", help="2NB/P"), "step_s": "decode step",
        "tokens_per_s": columns.text_column("tokens_per_s", unit_in_cells=False), "max_batch": columns.column("max_batch")}
    # The key columns fit at 1280 px; the memory and time parts are one click away.
    html_table.show_table(shown, hide_index=True, width="stretch", column_config=format_columns, column_order=(
        "format", "total_bytes", "gpus_needed", "step_s", "tokens_per_s", "max_batch"))
    # Expanders build their table only while open (toggling reruns the page): a slider move redraws no hidden table.
    every = st.expander("Every column: dtypes, memory and the step's parts", key="q_every", on_change="rerun")
    if every.open:
        html_table.show_table(shown, container=every, hide_index=True, width="stretch", column_config=format_columns, column_order=(
            "format", "weight_dtype", "kv_dtype", "weights_bytes", "kv_bytes", "weights_read_s", "kv_read_s", "compute_s"))


def stored_formats_table(format_rows: pd.DataFrame, model, batch: int, kv_dtype: str) -> None:
    """Each weight format as stored: bits per weight and per parameter, weights, decode step, max batch; how each
    stores a block in an expander."""
    html_table.show_table(format_rows.assign(weights_bytes=[formats.fmt_bytes(x) for x in format_rows["weights_bytes"]],
                                step_s=[formats.fmt_seconds(x) for x in format_rows["step_s"]]),
                 hide_index=True, width="stretch", column_order=(
                     "format", "bits_per_quantized_weight", "bits_per_param", "weights_bytes", "step_s", "max_batch"),
                 column_config={
                     "format": st.column_config.TextColumn("format", pinned=True),
                     "bits_per_quantized_weight": st.column_config.NumberColumn("bits per quantized weight", format="%.3f"),
                     "bits_per_param": st.column_config.NumberColumn("bits per parameter, whole model", format="%.2f"),
                     "weights_bytes": "weights", "step_s": f"decode step (B = {batch:,})",
                     "max_batch": columns.column("max_batch")})
    st.caption(f"{formats.md_escape(model.name)}; cache in {kv_dtype}. A block format stores a scale per block: q4_0 is 18 bytes per "
               "32 weights (4.5 bits), mxfp4 17 bytes per 32 (4.25), nvfp4 9 bytes per 16 (4.5), int4-g128 adds an "
               "fp16 scale and a 4-bit zero per 128 (4.16). The recipes keep embeddings, the output head and norms in "
               "16-bit (gpt-oss also its attention and router), so the whole model costs more bits per parameter "
               "than the block. Checked against published files: gpt-oss-20b/120b in mxfp4, Llama-3-8B in q8_0 and "
               "q4_K_M (within 0.2%).")
    how = st.expander("How each format stores a block, what it leaves unquantized, and its source", key="q_how",
                      on_change="rerun")
    if how.open:
        html_table.show_table(format_rows[["format", "block", "keeps", "compute_dtype", "source"]], container=how, hide_index=True, width="stretch",
                     column_config={"keeps": "left unquantized", "compute_dtype": "matmul in"})


def flip_figure(int8_w: pd.DataFrame, int8_kv: pd.DataFrame, flip: float):
    """The decode step against batch for int8 weights with a bf16 cache and for bf16 weights with an int8 cache,
    and the batch where they flip (named in the legend)."""
    fig = charts.Figure()
    for df, name in ((int8_w, "int8 weights, bf16 cache"), (int8_kv, "bf16 weights, int8 cache")):
        fig.add_scatter(x=df["batch"], y=df["total_s"] * 1e3, mode="lines", name=name,
                        customdata=np.where(df["fits"], "fits", "exceeds one GPU"),
                        hovertemplate="B = %{x}: %{y:,.2f} ms (%{customdata})<extra></extra>")
    # Named in the legend: on the plot the flip label ran across the chosen-B line.
    charts.add_marker_line(fig, flip, f"flip at B = {flip:,.1f}", "#888888", "dash")
    # No line at the chosen B (its two steps are in the metrics above): the chart stays the same when only B moves.
    fig.update_layout(xaxis_title="batch B (sequences)",
                      yaxis_title="decode step (ms)", hovermode="x unified")
    return fig
