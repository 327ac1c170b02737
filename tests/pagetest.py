"""Helpers the page tests share: open a page of the app in AppTest, read its metrics, tables and charts."""
from __future__ import annotations

import base64
import html
import io
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def open_page(page: str | None = None, timeout: float = 60, **query) -> AppTest:
    """Run app.py once with ``query`` as URL parameters, then switch to ``page`` (e.g.
    "app_pages/kv_cache.py"); asserts that no exception was shown."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


@dataclass
class RowMetric:
    """A metric of a ``widgets.metric_row`` as the page shows it (the attributes of AppTest's metric element, the
    delta's colour class and arrow, the captions under it)."""
    label: str = ""
    value: str = ""
    delta: str | None = None
    help: str | None = None
    delta_colour: str | None = None
    arrow: str | None = None
    captions: list[str] = field(default_factory=list)


class _RowParser(HTMLParser):
    """Reads the cells of metric rows (ui/metric_row.py's HTML) back into ``RowMetric``s."""

    ROLES = {"xm-label": "label", "xm-value": "value", "xm-delta": "delta", "xm-caption": "caption", "xm-help": "help",
             "xm-arrow": "arrow"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[RowMetric] = []
        self.stack: list[str | None] = []
        self.buffer = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        role = next((r for c, r in self.ROLES.items() if c in classes), None)
        if "xm-metric" in classes:
            self.cells.append(RowMetric())
        if role == "help":
            self.cells[-1].help = a.get("data-help")
        if role == "delta":
            self.cells[-1].delta_colour = next((c[3:] for c in classes if c != "xm-delta" and c.startswith("xm-")), None)
        if role in ("label", "value", "delta", "caption"):
            self.buffer = ""
        if role == "arrow":
            self.cells[-1].arrow = ""
        self.stack.append(role or (self.stack[-1] if self.stack else None))

    def handle_endtag(self, tag):
        role = self.stack.pop() if self.stack else None
        if role in ("label", "value", "delta", "caption") and (not self.stack or self.stack[-1] != role):
            cell, text = self.cells[-1], self.buffer.strip()
            if role == "caption":
                cell.captions.append(text)
            else:
                setattr(cell, role, text)

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "arrow":
            self.cells[-1].arrow += data
        elif self.stack and self.stack[-1] in ("label", "value", "delta", "caption"):
            self.buffer += data


def row_metrics(at: AppTest) -> list[RowMetric]:
    """Every metric of the run's metric rows (widgets.metric_row), page order; cells without a metric are left out."""
    out = []
    for h in at.get("html"):
        if 'class="xm-row"' in h.proto.body:
            parser = _RowParser()
            parser.feed(h.proto.body)
            out += [c for c in parser.cells if c.label or c.captions]
    return out


def metrics(at: AppTest) -> list:
    """Every metric of the run: st.metric elements, then the metric rows' metrics."""
    return list(at.metric) + row_metrics(at)


def metric_element(at: AppTest, label: str):
    """The metric whose label is ``label`` (or, failing that, starts with it): .value, .delta, .help."""
    every = metrics(at)
    found = [m for m in every if m.label == label] or [m for m in every if m.label.startswith(label)]
    assert found, f"no metric {label!r} among {[m.label for m in every]}"
    return found[0]


def metric(at: AppTest, label: str) -> str:
    """The value string of the metric whose label is ``label`` (or, failing that, starts with it)."""
    return metric_element(at, label).value


def _in_page_order(node):
    """Every node of an AppTest tree, depth first in page order."""
    yield node
    children = getattr(node, "children", None) or {}
    for k in sorted(children):
        yield from _in_page_order(children[k])


def tables(at: AppTest) -> list[pd.DataFrame]:
    """Every table of the run in page order, as the DataFrame the page passed: st.dataframe's value, or the
    JSON that ``html_table.show_table`` (ui/html_table.py) puts on its table element."""
    out = []
    for node in _in_page_order(at._tree):
        if getattr(node, "type", None) in ("dataframe", "arrow_data_frame"):
            out.append(node.value)
        elif getattr(node, "type", None) == "html" and 'class="xm-table"' in node.proto.body:
            start = node.proto.body.index('data-frame="') + len('data-frame="')
            text = html.unescape(node.proto.body[start:node.proto.body.index('"', start)])
            out.append(pd.read_json(io.StringIO(text), orient="split", convert_dates=False, dtype=False))
    return out


def shown_tables(at: AppTest) -> list[list[list[str]]]:
    """Every ``html_table.show_table`` table of the run as the page shows it, page order: its header row, then its
    rows, each a list of the cells' text (numbers as formatted on screen, "$0.0217", not the DataFrame's value)."""
    out = []
    for node in _in_page_order(at._tree):
        if getattr(node, "type", None) == "html" and 'class="xm-table"' in node.proto.body:
            body = node.proto.body
            rows = re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)
            out.append([[html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                         for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)] for row in rows])
    return out


def chart_elements(at: AppTest) -> list:
    """Every chart element of the run, in page order (``charts.show_chart`` draws each as the in-place
    component of ui/inplace_chart.py; its data is the figure's JSON text, itself JSON-encoded)."""
    return [c for c in at.get("bidi_component") if c.proto.component_name == "explorer_inplace_plotly"]


def figures(at: AppTest) -> list[dict]:
    """Every Plotly figure of the run as its JSON spec (data, layout and the chart's config), page order."""
    return [json.loads(json.loads(c.proto.json)) for c in chart_elements(at)]


def plotly_values(arr) -> list:
    """A Plotly data array as a list (Plotly 7 writes numpy arrays as {"dtype", "bdata"} base64)."""
    if isinstance(arr, dict) and "bdata" in arr:
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=np.dtype(arr["dtype"])).tolist()
    return list(arr)
