"""Table columns the pages share: one label and format per calc column name, so every page names a figure the
same way, and the helpers that build Streamlit column configurations from them.

Times in calc's frames are in seconds (``*_s``); a table on screen shows milliseconds (``in_ms``), its CSV keeps
seconds.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

#: calc column name -> (label on screen, number format). Times are shown in ms (``in_ms`` first).
COLUMNS = {
    "batch": ("batch B", "%,.0f"),
    "n_kv_heads": ("KV heads K", "%,.0f"),
    "prompt_len": ("prompt T", "%,.0f"),
    "context_len": ("context S (tokens)", "%,.0f"),
    "total_s": ("step (ms)", "%.3f"),
    "tpot_s": ("TPOT (ms)", "%.3f"),
    "ttft_s": ("TTFT (ms)", "%.3f"),
    "weights_s": ("weight read (ms)", "%.3f"),
    "kv_s": ("KV read (ms)", "%.3f"),
    "tokens_per_s": ("throughput (tok/s)", "%,.0f"),
    "max_batch": ("memory ceiling B", "%,.0f"),
}


def ms_column(label: str) -> st.column_config.NumberColumn:
    """A column of milliseconds, three decimals."""
    return st.column_config.NumberColumn(label, format="%.3f")


def count_column(label: str) -> st.column_config.NumberColumn:
    """A column of counts with thousands separators."""
    return st.column_config.NumberColumn(label, format="%,.0f")


def column(name: str, label: str | None = None) -> st.column_config.NumberColumn:
    """The column of calc's ``name`` as ``COLUMNS`` labels and formats it (``label`` replaces the label).

    Raises:
        KeyError: a name ``COLUMNS`` does not hold.
    """
    text, fmt = COLUMNS[name]
    return st.column_config.NumberColumn(label or text, format=fmt)


def in_ms(df: pd.DataFrame, cols) -> pd.DataFrame:
    """The same columns, seconds shown as milliseconds (the CSV keeps seconds)."""
    return df.assign(**{c: df[c] * 1e3 for c in cols})
