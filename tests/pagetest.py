"""Helpers the page tests share: open a page of the app in AppTest, read its metrics and charts."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
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


def metric_element(at: AppTest, label: str):
    """The metric whose label is ``label`` (or, failing that, starts with it): .value, .delta, .help."""
    found = [m for m in at.metric if m.label == label] or [m for m in at.metric if m.label.startswith(label)]
    assert found, f"no metric {label!r} among {[m.label for m in at.metric]}"
    return found[0]


def metric(at: AppTest, label: str) -> str:
    """The value string of the metric whose label is ``label`` (or, failing that, starts with it)."""
    return metric_element(at, label).value


def chart_elements(at: AppTest) -> list:
    """Every chart element of the run, in page order (``common.show_chart`` draws each as the in-place
    component of app_pages/inplace_chart.py; its data is the figure's JSON text, itself JSON-encoded)."""
    return [c for c in at.get("bidi_component") if c.proto.component_name == "explorer_inplace_plotly"]


def figures(at: AppTest) -> list[dict]:
    """Every Plotly figure of the run as its JSON spec (data, layout and the chart's config), page order."""
    return [json.loads(json.loads(c.proto.json)) for c in chart_elements(at)]


def plotly_values(arr) -> list:
    """A Plotly data array as a list (Plotly 7 writes numpy arrays as {"dtype", "bdata"} base64)."""
    if isinstance(arr, dict) and "bdata" in arr:
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=np.dtype(arr["dtype"])).tolist()
    return list(arr)
