"""A cap on browser sessions per Streamlit process: past it, a "the class server is full" page.

A process that takes every student who connects slows every one of them down together (one core runs all
its scripts) and grows its memory with each session. Instead, each process admits up to ``max_sessions()``
sessions (``LLM_EXPLORER_MAX_SESSIONS``, default 100; deploy/serve_class.py --max-sessions sets it) and shows
the next ones a short page that says the server is full, with a button to try again, instead of failing.

A session is admitted at its first script run and stays admitted while its websocket is connected; one that
disconnected (a closed tab, a lost network) gives its place back, and takes one again on reconnecting if
there is room. Sessions are counted with Streamlit's runtime (``Runtime.is_active_session``); where no
runtime runs (Streamlit's AppTest), every session is admitted.
"""
from __future__ import annotations

import os
import threading

import streamlit as st

#: Environment variable holding the cap (a whole number >= 1).
MAX_SESSIONS_ENV = "LLM_EXPLORER_MAX_SESSIONS"
DEFAULT_MAX_SESSIONS = 100

_lock = threading.Lock()
_admitted: set[str] = set()


def max_sessions(env: dict | None = None) -> int:
    """The cap on admitted sessions per process: ``LLM_EXPLORER_MAX_SESSIONS``, else 100.

    Raises:
        ValueError: the setting is not a whole number of at least 1 (named in the message).
    """
    raw = (os.environ if env is None else env).get(MAX_SESSIONS_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_SESSIONS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{MAX_SESSIONS_ENV} must be a whole number of at least 1, got {raw!r}")
    return value


def admit(session_id: str, is_active, cap: int) -> bool:
    """Whether ``session_id`` may run the app: admitted before, or admitted now because fewer than ``cap``
    active sessions are.

    ``is_active(session_id) -> bool`` says whether a session is still connected; admitted sessions that are
    not are forgotten first (their places are free again). Thread-safe (scripts of several sessions run at once).
    """
    with _lock:
        for sid in [s for s in _admitted if s != session_id and not is_active(s)]:
            _admitted.discard(sid)
        if session_id in _admitted:
            return True
        if len(_admitted) < cap:
            _admitted.add(session_id)
            return True
        return False


def _runtime_check():
    """``(session_id, is_active)`` of the running Streamlit server, or None where there is none (AppTest)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return None
    runtime = Runtime.instance()
    return ctx.session_id, runtime.is_active_session


def enforce() -> None:
    """Admit this session or draw the "class server is full" page and stop the script run (``st.stop``).

    Call right after ``st.set_page_config``. A misconfigured cap is shown as an error and admits everyone.
    """
    try:
        cap = max_sessions()
    except ValueError as e:
        st.error(f"{e}. Sessions are not capped until the server's operator fixes it.")
        return
    found = _runtime_check()
    if found is None or admit(found[0], found[1], cap):
        return
    st.title("The class server is full")
    st.write(f"This server process already has {cap} students, the most it serves at once without slowing "
             "everyone down. Try again in a minute, when someone has left (the link you opened is kept), "
             "or ask your teacher for another server's address.")
    st.button("Try again", type="primary")
    st.stop()
