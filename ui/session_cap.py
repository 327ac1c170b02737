"""A cap on browser sessions per Streamlit process: past it, a "the class server is full" page.

A process that takes every student who connects slows every one of them down together (one core runs all
its scripts) and grows its memory with each session. Instead, each process admits up to ``max_sessions()``
sessions (``LLM_EXPLORER_MAX_SESSIONS``, default 100; deploy/serve_class.py --max-sessions sets it) and shows
the next ones a short page that says the server is full, with a button to try again, instead of failing.

Housekeeping: the app turns off Streamlit's full garbage collection after every run (``postScriptGC``, 40-90
ms of CPU each), so once a process has been idle for ``IDLE_COLLECT_S`` (a lull) a thread of this module
collects once and hands freed memory back to the system (glibc's ``malloc_trim``). Idle for ``IDLE_EMPTY_S``
(a class left; just longer than the two minutes Streamlit keeps a closed session for its reconnect, so within
~135 s of the last run, the collector looking every 10 s), it also drops
the closed sessions Streamlit still holds and empties the shared caches (ui/caching.py), then collects
again: memory after a class returns near where it started instead of staying at the class's peak.

A session is admitted at its first script run and stays admitted while its websocket is connected; one that
disconnected (a closed tab, a lost network) gives its place back, and takes one again on reconnecting if
there is room. Sessions are counted with Streamlit's runtime (``Runtime.is_active_session``); where no
runtime runs (Streamlit's AppTest), every session is admitted.
"""
from __future__ import annotations

import ctypes
import gc
import os
import threading
import time

import streamlit as st

from ui import caching

#: Environment variable holding the cap (a whole number >= 1).
MAX_SESSIONS_ENV = "LLM_EXPLORER_MAX_SESSIONS"
DEFAULT_MAX_SESSIONS = 100

_lock = threading.Lock()
_admitted: set[str] = set()
#: Seconds without a script run after which the process collects garbage once (and again after the next run).
IDLE_COLLECT_S = 20.0
#: Seconds without a script run after which closed sessions and the shared caches are dropped (once).
IDLE_EMPTY_S = 125.0   # Streamlit's server.disconnectedSessionTTL (120 s) and a little
_last_run = [time.monotonic(), False, False]   # time of the last script run; collected, emptied since
_collector: list[threading.Thread] = []


def collect_if_idle(now: float | None = None, idle_s: float = IDLE_COLLECT_S, empty_s: float = IDLE_EMPTY_S) -> bool:
    """Collect garbage (``gc.collect``) and return freed heap to the system (``malloc_trim``, glibc only) when
    no script has run for ``idle_s`` seconds and nothing was collected since the last run; after ``empty_s``
    idle seconds, first drop the closed sessions and empty the shared caches (:func:`empty_idle`), once.
    Returns whether it collected."""
    now = time.monotonic() if now is None else now
    with _lock:
        idle = now - _last_run[0]
        empty = idle >= empty_s and not _last_run[2]
        if not empty and (_last_run[1] or idle < idle_s):
            return False
        _last_run[1] = True
        _last_run[2] = _last_run[2] or empty
    if empty:
        empty_idle()
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: Python's own allocator keeps what it holds
        pass
    return True


def empty_idle() -> None:
    """Drop what an idle process holds for nobody: the shared caches (``caching.clear_all``) and the closed
    sessions Streamlit keeps for a reconnect past their two minutes (its session storage expires them only
    when next touched; reached through the runtime's session manager, skipped where that is not there)."""
    from streamlit.runtime import Runtime

    caching.clear_all()
    if Runtime.exists():
        mgr = getattr(Runtime.instance(), "_session_mgr", None)
        expire = getattr(getattr(getattr(mgr, "_session_storage", None), "_cache", None), "expire", None)
        lock = getattr(mgr, "_storage_lock", None)
        if callable(expire) and lock is not None:
            with lock:
                expire()


def _note_run() -> None:
    """Record a script run and start the idle collector thread once per process."""
    with _lock:
        _last_run[0], _last_run[1], _last_run[2] = time.monotonic(), False, False
        if not _collector:
            def loop():
                while True:
                    time.sleep(IDLE_COLLECT_S / 2)
                    collect_if_idle()
            _collector.append(threading.Thread(target=loop, name="idle-collector", daemon=True))
            _collector[0].start()


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
    _note_run()
    try:
        cap = max_sessions()
    except ValueError as e:
        st.error(f"{e}. Sessions are not capped until the server's operator fixes it.")
        return
    found = _runtime_check()
    if found is None or admit(found[0], found[1], cap):
        return
    st.title("The class server is full")
    students = f"{cap} student" + ("s" if cap != 1 else "")
    st.write(f"This server process already has {students}, the most it serves at once without slowing everyone "
             "down. Try again in a minute, when someone has left (the link you opened is kept), "
             "or ask your teacher for another server's address.")
    st.button("Try again", type="primary")
    st.stop()
