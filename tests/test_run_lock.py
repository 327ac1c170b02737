"""ui/run_lock.py: script runs of a process one at a time, the lock given back while a run waits, and a run
that waited WAIT_S going on anyway."""
from __future__ import annotations

import threading
import time

from ui import run_lock


def _overlap_of(func, n_threads: int) -> int:
    """Most calls of ``func`` in progress at once over ``n_threads`` threads calling it together."""
    now, most, guard = [0], [0], threading.Lock()

    def body():
        with guard:
            now[0] += 1
            most[0] = max(most[0], now[0])
        func()
        with guard:
            now[0] -= 1
    wrapped = run_lock.serialized(body)
    threads = [threading.Thread(target=wrapped) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return most[0]


def test_runs_do_not_overlap():
    # 6 threads each busy 20 ms: without the lock all 6 are in progress together (the 20 ms sleep
    # lets every thread enter); with it, never more than one.
    assert _overlap_of(lambda: time.sleep(0.02), 6) == 1


def test_without_the_lock_they_would_overlap():
    # the same bookkeeping without serialized(): the check above could have failed
    now, most, guard = [0], [0], threading.Lock()

    def body():
        with guard:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.02)
        with guard:
            now[0] -= 1
    threads = [threading.Thread(target=body) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] > 1


def test_released_lets_another_run_in_while_one_waits():
    order = []
    first_waiting = threading.Event()

    def long_run():
        order.append("long starts")
        with run_lock.released():
            first_waiting.set()
            time.sleep(0.3)      # e.g. following a live measurement's progress
        order.append("long ends")

    def short_run():
        first_waiting.wait(2)
        order.append("short runs")
    a = threading.Thread(target=run_lock.serialized(long_run))
    b = threading.Thread(target=run_lock.serialized(short_run))
    a.start()
    b.start()
    a.join()
    b.join()
    # the short run did not wait the 0.3 s out: it ran while the long one had given the lock back
    assert order == ["long starts", "short runs", "long ends"]


def test_a_run_that_waited_wait_s_goes_on(monkeypatch):
    monkeypatch.setattr(run_lock, "WAIT_S", 0.1)
    started = threading.Event()
    t_short = []

    def stuck():
        started.set()
        time.sleep(0.6)

    def short():
        t_short.append(time.monotonic())
    a = threading.Thread(target=run_lock.serialized(stuck))
    a.start()
    started.wait(2)
    t0 = time.monotonic()
    run_lock.serialized(short)()
    a.join()
    # ran after ~0.1 s (WAIT_S), not after the stuck run's 0.6 s
    assert 0.05 <= t_short[0] - t0 < 0.45


def test_a_run_within_a_run_does_not_wait_for_itself():
    inner = run_lock.serialized(lambda: "inner")
    outer = run_lock.serialized(lambda: inner())
    t0 = time.monotonic()
    assert outer() == "inner"
    assert time.monotonic() - t0 < 0.5     # no WAIT_S (2 s) spent waiting on its own lock


def test_released_outside_a_run_does_nothing():
    with run_lock.released():
        pass
    assert run_lock._LOCK.acquire(blocking=False)   # the lock is free, not released twice
    run_lock._LOCK.release()


def test_install_wraps_streamlits_run_and_uninstall_restores():
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    plain = ScriptRunner._run_script
    run_lock.install()
    try:
        assert run_lock.installed() and ScriptRunner._run_script.__wrapped__ is plain
        run_lock.install()   # idempotent: not wrapped twice
        assert ScriptRunner._run_script.__wrapped__ is plain
    finally:
        run_lock.uninstall()
    assert ScriptRunner._run_script is plain and not run_lock.installed()


def _start_and_stop_lifespan(monkeypatch, env_value):
    import asyncio

    import asgi

    monkeypatch.setattr(asgi, "freeze_startup_heap", lambda: 0)   # not the whole app's imports here
    if env_value is None:
        monkeypatch.delenv(asgi.RUN_LOCK_ENV, raising=False)
    else:
        monkeypatch.setenv(asgi.RUN_LOCK_ENV, env_value)

    async def go():
        async with asgi.server_log(None):
            return run_lock.installed()
    try:
        return asyncio.run(go())
    finally:
        run_lock.uninstall()


def test_the_server_entry_installs_the_lock_unless_turned_off(monkeypatch):
    assert _start_and_stop_lifespan(monkeypatch, None) is True
    assert _start_and_stop_lifespan(monkeypatch, "0") is False
    assert _start_and_stop_lifespan(monkeypatch, "1") is True
