"""An edited table in the URL: the cells that differ from a base table as one parameter value, and back."""
from __future__ import annotations

import re
import urllib.parse

import numpy as np
import pandas as pd


def _cell_text(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return f"{float(v):.10g}"
    return str(v)


def _same_cell(a, b) -> bool:
    return _cell_text(a) == _cell_text(b)


def _deleted_rows(base: pd.DataFrame, edited: pd.DataFrame, short: dict[str, str]) -> list[int]:
    """0-based rows of ``base`` that ``edited`` dropped: those whose first column (a row's name) no row of
    ``edited`` matches in order (difflib's longest matching blocks); none when ``edited`` is not shorter."""
    import difflib
    if len(edited) >= len(base):
        return []
    key = [c for c in short if c in base and c in edited][:1]

    def rows(df):
        return [tuple(_cell_text(df[c].iloc[i]) for c in key) for i in range(len(df))]

    old, new = rows(base), rows(edited)
    kept = set()
    for block in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_matching_blocks():
        kept.update(range(block.a, block.a + block.size))
    dropped = [i for i in range(len(base)) if i not in kept]
    return dropped[:len(base) - len(edited)]


def encode_table_edits(base: pd.DataFrame, edited: pd.DataFrame, short: dict[str, str]) -> str:
    """The cells of ``edited`` that differ from ``base``, as one URL parameter value ("" when none).

    Items are joined by commas: ``del=4`` drops row 4 of ``base`` (rows whose cells reappear unchanged
    in ``edited`` are kept); then ``rows=5`` says the table has 5 rows (when that differs), and ``out1=30``
    sets column "out" (a short name from ``short``, column -> short name) of row 1 of the table after the
    deletions. Rows are numbered from 1. Text is percent-quoted where it holds a comma, an equals sign or
    a percent sign; numbers are written with 10 significant digits.
    ``apply_table_edits(base, encode_table_edits(base, edited, short), short)`` gives ``edited`` back
    (in ``short``'s columns).
    """
    dropped = _deleted_rows(base, edited, short)
    items = [f"del={i + 1}" for i in dropped]
    base = base.drop(index=base.index[dropped]).reset_index(drop=True) if dropped else base
    if len(edited) != len(base):
        items.append(f"rows={len(edited)}")
    for i in range(len(edited)):
        for col, name in short.items():
            new = edited[col].iloc[i] if col in edited else None
            old = base[col].iloc[i] if i < len(base) else None
            if i >= len(base) or not _same_cell(new, old):
                text = _cell_text(new)
                if text or i < len(base):
                    items.append(f"{name}{i + 1}={urllib.parse.quote(text, safe=' ./:()-_+$')}")
    return ",".join(items)


def apply_table_edits(base: pd.DataFrame, text: str, short: dict[str, str]) -> pd.DataFrame:
    """``base`` with the edits of ``encode_table_edits``'s text applied (a new frame, same columns).

    Numeric columns of ``base`` take numbers; other columns take text. New rows start empty (None).

    Raises:
        ValueError: an item that is not ``<column><row>=<value>``, ``rows=<n>`` or ``del=<row>``, an unknown
            column, a row beyond the table or beyond 100, or a value that is not a number in a numeric column.
    """
    out = base.copy().reset_index(drop=True).astype(object)
    if not text:
        return out
    by_short = {v: k for k, v in short.items()}
    items = [s for s in text.split(",") if s]
    dropped = []
    for item in items:
        if item.startswith("del="):
            n = item[4:]
            if not n.isdigit() or not 1 <= int(n) <= len(out):
                raise ValueError(f"'{item}' must name a row of the {len(out)}-row table")
            dropped.append(int(n) - 1)
    if dropped:
        out = out.drop(index=sorted(set(dropped))).reset_index(drop=True)
    sized = [s for s in items if s.startswith("rows=")]
    if sized:
        n = sized[-1][5:]
        if not n.isdigit() or not 0 <= int(n) <= 100:
            raise ValueError(f"'{sized[-1]}' must give a number of rows between 0 and 100")
        n = int(n)
        out = out.iloc[:n] if n <= len(out) else pd.concat(
            [out, pd.DataFrame([{c: None for c in out.columns}] * (n - len(out)))], ignore_index=True)
    for item in items:
        if item.startswith(("rows=", "del=")):
            continue
        m = re.fullmatch(r"([a-z_]+)(\d+)=(.*)", item, flags=re.S)
        if m is None or m.group(1) not in by_short:
            raise ValueError(f"'{item}' is not a table edit (expected one of "
                             f"{', '.join(short.values())} with a row number, e.g. {next(iter(short.values()))}1=...)")
        col, row, value = by_short[m.group(1)], int(m.group(2)), urllib.parse.unquote(m.group(3))
        if not 1 <= row <= len(out):
            raise ValueError(f"'{item}' names row {row}, but the table has {len(out)} rows")
        if pd.api.types.is_numeric_dtype(base[col]):
            try:
                value = float(value) if value else None
            except ValueError:
                raise ValueError(f"'{item}': {col} must be a number, got {value!r}") from None
        out.at[row - 1, col] = value if value != "" else None
    return out.infer_objects()
