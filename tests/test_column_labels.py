"""One name per quantity: every table header of a calc column comes from ui/columns.py.

The source check reads app_pages/ and ui/ (ast): a column configuration keyed by a column ``COLUMNS`` holds must
take its label from ``ui.columns``, not spell its own, and no page spells a ``COLUMNS`` label ("TPOT (ms)") as
a literal. The page check renders two pages' tables and reads their headers back.
"""
import ast
import html
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import pagetest
from ui import columns, html_table
from ui.columns import COLUMNS

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for d in ("app_pages", "ui") for p in (ROOT / d).glob("*.py") if p.name != "columns.py")


def _spelled_label(node: ast.AST) -> str | None:
    """The label ``node`` writes out itself: a string, an f-string, an st.column_config.*Column call with one (or
    with none: the header is then the column's own name), or a helper called with a label (``_ms("step (ms)")``);
    None for ``columns.column(name)`` and the like."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return ast.unparse(node)
    if isinstance(node, ast.Call):
        args = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "label"]
        if "column_config" in ast.unparse(node.func) and not args:
            return "(no label: the column's own name)"
        if args and not (isinstance(args[0], ast.Constant) and args[0].value in COLUMNS):
            return _spelled_label(args[0])
    return None


def _violations(path: Path) -> list[str]:
    """Where ``path`` labels a ``COLUMNS`` column itself, or spells a ``COLUMNS`` header with its unit ("TPOT
    (ms)") outside a keyword argument (an axis title may read the same)."""
    tree = ast.parse(path.read_text(), str(path))
    labels = {c.label for c in COLUMNS.values() if c.unit}
    keyword_values = {id(k.value) for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value in COLUMNS:
                    spelled = _spelled_label(v)
                    if spelled is not None:
                        out.append(f"{path.name}:{v.lineno}: {k.value!r} labelled {spelled!r} in place of "
                                   f"columns.column({k.value!r})")
        elif isinstance(node, ast.Constant) and node.value in labels and id(node) not in keyword_values:
            out.append(f"{path.name}:{node.lineno}: the header {node.value!r} spelled out (columns.label(...))")
    return sorted(out)


def test_the_sources_take_calc_column_labels_from_the_table():
    found = [v for p in SOURCES for v in _violations(p)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_label_spelled_out(tmp_path):
    # the check itself: both ways a page used to spell TPOT's label are caught, the helper is not
    bad = tmp_path / "bad.py"
    bad.write_text('import streamlit as st\nfrom ui import columns\n'
                   'a = {"tpot_s": st.column_config.NumberColumn("TPOT, ms", format="%.1f")}\n'
                   'b = {"tokens_per_s": "throughput (tok/s)"}\n'
                   'c = {"tpot_s": columns.column("tpot_s")}\n')
    found = _violations(bad)
    assert [f.split(": ")[0] for f in found] == ["bad.py:3", "bad.py:4", "bad.py:4"]  # the pair, the literal header


def test_one_label_and_unit_per_quantity():
    assert columns.label("tpot_s") == "TPOT (ms)" and columns.label("ttft_s") == "TTFT (ms)"
    assert columns.label("usd_per_million") == columns.label("usd_per_million_output") == "USD per 1M output tokens"
    assert columns.label("gpus") == columns.label("n_gpus") == columns.label("gpus_needed") == "GPUs"
    # text cells that carry their unit ("520 µs") are headed by the name alone, plain counts by the label
    assert columns.text_column("compute_s")["label"] == "compute"
    assert columns.text_column("tokens_per_s", unit_in_cells=False)["label"] == "throughput (tok/s)"
    with pytest.raises(KeyError):
        columns.column("no_such_column")
    # seconds shown as ms, bytes as GB, counts untouched; the CSV's frame is not changed
    df = pd.DataFrame({"batch": [16], "tpot_s": [0.00992], "memory_bytes": [2.5e10], "label": ["x"]})
    out = columns.shown(df)
    assert out["tpot_s"].iat[0] == pytest.approx(9.92) and out["memory_bytes"].iat[0] == pytest.approx(25.0)
    assert out["batch"].iat[0] == 16 and df["tpot_s"].iat[0] == 0.00992
    text = html_table.table_html(out, columns.config(out.columns), hide_index=True)
    assert "<th class=xm-num>TPOT (ms)</th>" in text and ">9.920<" in text


def _headers(at) -> list[tuple[list[str], pd.DataFrame]]:
    """Every table of the run: its header texts and the DataFrame it carries (an HTML table's <th> cells; a
    grid's (st.dataframe, over 50 rows) column labels as its column configuration sends them)."""
    out = []
    for node in at.get("html"):
        body = node.proto.body
        if 'class="xm-table"' in body:
            heads = [html.unescape(re.sub("<[^>]+>", "", h)) for h in re.findall(r"<th[^>]*>(.*?)</th>", body)]
            start = body.index('data-frame="') + len('data-frame="')
            frame = pd.read_json(io.StringIO(html.unescape(body[start:body.index('"', start)])), orient="split")
            out.append((heads, frame))
    for node in at.dataframe:
        config = json.loads(node.proto.columns or "{}")
        out.append(([config.get(c, {}).get("label") or str(c) for c in node.value.columns], node.value))
    return out


@pytest.mark.parametrize("page, query, opened", [("app_pages/many_gpus.py", {"mg_timing": "roofline bound"}, None),
                                                 ("app_pages/latency_cost.py", {}, "lc_front_table")])
def test_pages_head_tpot_the_same_way(page, query, opened):
    # the capacity plan's layouts (many GPUs) and the front (latency against cost) both hold calc's tpot_s
    at = pagetest.open_page(page, timeout=60, **query)
    if opened:  # a table built only while its expander is open
        at.session_state[opened] = True
        at.run()
    tables = _headers(at)
    with_tpot = [heads for heads, df in tables if "tpot_s" in df.columns]
    assert with_tpot and all("TPOT (ms)" in heads for heads in with_tpot)
    for heads, df in tables:
        assert not any(re.match(r"T(PO|TF)T, ms|TPOT at B = 1, ms|USD/h$", h) for h in heads), heads
