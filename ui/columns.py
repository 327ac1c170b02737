"""Table columns the pages share: one name, unit and number format per calc column name, so every page names a
figure the same way ("TPOT (ms)" on every table that shows ``tpot_s``), and the helpers that build Streamlit
column configurations from them.

calc's frames keep SI units (``*_s`` seconds, ``*_bytes`` bytes); a table on screen shows the unit of
``COLUMNS`` (``shown`` scales, e.g. seconds to milliseconds), its CSV keeps calc's units.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st


@dataclass(frozen=True)
class Column:
    """How a table shows one calc column: ``name`` the quantity in words, ``unit`` what the shown number counts
    (empty for a count or where the format carries it), ``format`` a Streamlit NumberColumn format, ``scale`` the
    factor from calc's unit to the shown one (1e3: seconds to ms)."""
    name: str
    unit: str = ""
    format: str = "%,.0f"
    scale: float = 1.0

    @property
    def label(self) -> str:
        """The header: "TPOT (ms)", "batch B"."""
        return f"{self.name} ({self.unit})" if self.unit else self.name


def _ms(name: str) -> Column:
    return Column(name, "ms", "%.3f", 1e3)


#: calc column name -> how every table shows it.
COLUMNS: dict[str, Column] = {
    # counts
    "batch": Column("batch B"),
    "replicas": Column("replicas"),
    "gpus": Column("GPUs"),
    "n_gpus": Column("GPUs"),
    "gpus_needed": Column("GPUs"),
    "n_kv_heads": Column("KV heads K"),
    "kv_heads": Column("KV heads K"),
    "prompt_len": Column("prompt T"),
    "context_len": Column("context S", "tokens"),
    "max_batch": Column("max batch"),
    "knee_batch": Column("knee B", format="%.1f"),
    # times, shown in ms
    "total_s": _ms("step"),
    "tpot_s": _ms("TPOT"),
    "ttft_s": _ms("TTFT"),
    "tpot_b1_s": _ms("TPOT at B = 1"),
    "weights_s": _ms("weight read"),
    "kv_s": _ms("KV read"),
    "compute_s": _ms("compute"),
    "compute_excess_s": _ms("compute beyond weights"),
    # rates
    "tokens_per_s": Column("throughput", "tok/s"),
    "tokens_per_s_per_user": Column("per stream", "tok/s", "%.1f"),
    "prefill_tokens_per_s": Column("prefill", "tok/s"),
    "ceiling_tokens_per_s": Column("W/KV ceiling", "tok/s"),
    # money, memory, energy
    "usd_per_million": Column("USD per 1M output tokens", format="$%.3f"),
    "usd_per_million_output": Column("USD per 1M output tokens", format="$%.3f"),
    "usd_per_hour": Column("USD per hour", format="dollar"),
    "usd_per_month": Column("USD per month", format="dollar"),
    "memory_bytes": Column("memory", "GB", "%.2f", 1e-9),
    "j_per_token": Column("J per output token", format="%.3f"),
    "tokens_per_kwh": Column("tokens per kWh"),
    "co2_g_per_million": Column("g CO2e per 1M tokens", format="%,.1f"),
}


def label(name: str) -> str:
    """The header of calc's column ``name`` ("TPOT (ms)" for ``tpot_s``).

    Raises:
        KeyError: a name ``COLUMNS`` does not hold.
    """
    return COLUMNS[name].label


def column(name: str, *, format: str | None = None, help: str | None = None,
           **kwargs) -> st.column_config.NumberColumn:
    """The NumberColumn of calc's ``name`` as ``COLUMNS`` labels and formats it; ``format`` replaces the number
    format where a table needs another precision, ``help`` and ``kwargs`` (width, pinned) pass through; the
    label is never replaced.

    Raises:
        KeyError: a name ``COLUMNS`` does not hold.
    """
    c = COLUMNS[name]
    return st.column_config.NumberColumn(c.label, format=format or c.format, help=help, **kwargs)


def text_column(name: str, unit_in_cells: bool = True, **kwargs) -> st.column_config.TextColumn:
    """A column of calc's ``name`` whose cells are text already formatted: headed by the quantity's name alone
    ("compute") when the cells carry their unit ("4.52 ms"), else by its label ("throughput (tok/s)").

    Raises:
        KeyError: a name ``COLUMNS`` does not hold.
    """
    c = COLUMNS[name]
    return st.column_config.TextColumn(c.name if unit_in_cells else c.label, **kwargs)


def config(names, **formats) -> dict:
    """``{name: column(name)}`` for each of ``names`` that ``COLUMNS`` holds (a DataFrame's columns will do);
    ``formats`` maps a name to another number format (``tpot_s="%.1f"``)."""
    return {n: column(n, format=formats.get(n)) for n in names if n in COLUMNS}


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """The same frame with every ``COLUMNS`` column in its shown unit (seconds as ms, bytes as GB); the other
    columns as they are. The CSV keeps ``df``."""
    return df.assign(**{c: df[c] * COLUMNS[c].scale for c in df.columns
                        if c in COLUMNS and COLUMNS[c].scale != 1.0})
