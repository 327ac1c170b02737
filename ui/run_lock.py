"""One script run at a time in a server process, first come first served, instead of all at once.

A Streamlit process runs each session's script in its own thread, and Python's GIL lets one thread compute at
a time: when 30 students' reruns arrive together, the threads take turns every 5 ms (``sys.getswitchinterval``)
and every run finishes near the end of the whole batch (processor sharing). A class server's runs are all
short (20-110 ms of CPU), and for jobs of similar size serving them one after the other finishes each sooner:
the mean response time of a queue at load rho is S / (1 - rho) with processor sharing and S (1 + rho / (2 (1 -
rho))) first come first served for a fixed service time S (processor sharing: Kleinrock, Queueing Systems
vol. 2; first come first served: the Pollaczek-Khinchine formula for M/D/1; at rho = 0.9: 10 S against 5.5 S),
and the threads stop evicting each other's caches every 5 ms.

:func:`install` wraps ``ScriptRunner._run_script`` (one whole run of a session, a fragment's or the page's)
in a process-wide lock; deploy's processes install it at start (asgi.py). Two guards keep one run from
holding the others up:

- a run that waits on something outside the process (a live measurement's progress, an endpoint's replies)
  gives the lock back for the wait (:func:`released`);
- a run that has waited ``WAIT_S`` seconds for the lock runs anyway, beside the one holding it (what
  Streamlit does without the lock), so an overloaded or stuck process never stops every session.

Where the lock is not installed (AppTest, ``streamlit run app.py``), :func:`released` does nothing.
"""
from __future__ import annotations

import contextlib
import threading

#: Seconds a run waits for the lock before it runs beside the holder.
WAIT_S = 2.0

_LOCK = threading.Lock()
_held = threading.local()   # .value: whether this thread holds _LOCK now
_original: list = []        # ScriptRunner._run_script before install()


def _acquire(wait_s: float) -> bool:
    got = _LOCK.acquire(timeout=wait_s)
    _held.value = got
    return got


def _release() -> None:
    if getattr(_held, "value", False):
        _held.value = False
        _LOCK.release()


def serialized(func, wait_s: float | None = None):
    """``func`` wrapped so that calls from different threads run one at a time (in the order the lock gives
    them: the kernel wakes waiters oldest first), a call that waited ``wait_s`` seconds (default ``WAIT_S``)
    running anyway. Re-entrant calls on the same thread (a run within a run) do not wait."""
    def run(*args, **kwargs):
        if getattr(_held, "value", False):
            return func(*args, **kwargs)
        _acquire(WAIT_S if wait_s is None else wait_s)
        try:
            return func(*args, **kwargs)
        finally:
            _release()
    run.__wrapped__ = func
    return run


@contextlib.contextmanager
def released():
    """Give the lock back while the block runs (a run waiting on a worker or the network), then take it again
    (waiting at most ``WAIT_S``). Does nothing on a thread that does not hold it."""
    held = getattr(_held, "value", False)
    if held:
        _release()
    try:
        yield
    finally:
        if held:
            _acquire(WAIT_S)


def install() -> None:
    """Serialize Streamlit's script runs in this process (idempotent)."""
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    if not _original:
        _original.append(ScriptRunner._run_script)
        ScriptRunner._run_script = serialized(ScriptRunner._run_script)


def uninstall() -> None:
    """Undo :func:`install` (tests)."""
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    if _original:
        ScriptRunner._run_script = _original.pop()


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return bool(_original)
