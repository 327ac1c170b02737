"""ui/fast_session_state.py: the lazy filtered state answers every key as Streamlit's own dict does.

Each page is opened in AppTest with the view installed (app.py installs it); then, on that session's real
state, Streamlit's own ``filtered_state`` (the full dict) and the view are compared key by key: every key
of the dict is in the view with the same value, the view has the same length and keys, and keys the dict
lacks (a widget id, an internal key, a name never used) are not in the view.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.state.safe_session_state import SafeSessionState
from streamlit.runtime.state.session_state import SessionState
from streamlit.testing.v1 import AppTest

from ui import fast_session_state as fss
from ui.nav import PAGES

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE_FILES = [f for f, *_ in PAGES if not f.endswith(("live.py", "home.py"))]


def _open(path: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def _same(view, full: dict) -> None:
    assert len(view) == len(full) and set(view) == set(full)
    for k, v in full.items():
        assert k in view
        got = view[k]
        assert got is v or got == v or (got != got and v != v), k   # NaN equals NaN here


@pytest.mark.parametrize("path", PAGE_FILES)
def test_view_agrees_with_streamlits_dict_on_every_page(path):
    at = _open(path)
    assert fss.installed()
    safe = at._session_state
    full = fss.ORIGINAL_FILTERED_STATE.fget(safe)
    assert len(full) > 10   # the sidebar's keyed widgets at least: a real state, not an empty one
    view = safe.filtered_state
    assert isinstance(view, fss.FilteredStateView)
    _same(view, full)
    # keys the dict leaves out: a widget id, an internal key, a name nobody used
    wid = next(iter(safe._state._key_id_mapper.id_key_mapping))
    for absent in (wid, "$$STREAMLIT_INTERNAL_KEY_x", "no such key"):
        assert absent not in full and absent not in view
        with pytest.raises(KeyError):
            view[absent]


def test_a_none_value_reaches_the_widget():
    """The widgets read ``key in state and state[key] is None`` through the view: a selectbox whose key
    holds None shows no choice (index None), as with Streamlit's dict."""
    script = """
import streamlit as st
from ui import fast_session_state
fast_session_state.install()
if "pick" not in st.session_state:
    st.session_state["pick"] = None
st.selectbox("Pick", ["a", "b"], index=0, key="pick")
st.write(repr(st.session_state.to_dict()))
"""
    at = AppTest.from_string(script).run()
    assert not at.exception
    assert at.selectbox[0].value is None          # index 0 would give "a"
    assert at.markdown[0].value == "{'pick': None}"   # to_dict stays a plain dict


def test_a_run_builds_no_full_dict(monkeypatch):
    """Streamlit's own property built the whole dict once per widget; with the view a page run builds
    it 0 times (nothing on the page iterates the state)."""
    calls = [0]
    original = fss.ORIGINAL_FILTERED_STATE.fget

    def counting(self):
        calls[0] += 1
        return original(self)
    monkeypatch.setattr(fss, "ORIGINAL_FILTERED_STATE", property(counting))
    at = _open("app_pages/monthly_bill.py")
    calls[0] = 0
    at.run()
    with_view = calls[0]
    # Streamlit's own property (counted), and app.py's install() made a no-op for this run
    monkeypatch.setattr(SafeSessionState, "filtered_state", property(counting))
    monkeypatch.setattr(fss, "install", lambda: None)
    calls[0] = 0
    at.run()
    without = calls[0]
    assert with_view == 0
    assert without >= 20   # the bill page and the sidebar have over 20 keyed widgets that ask


def test_uninstall_restores_streamlits_property():
    fss.uninstall()
    try:
        assert not fss.installed()
        assert isinstance(SafeSessionState(SessionState(), lambda: None).filtered_state, dict)
    finally:
        fss.install()
    assert fss.installed()
