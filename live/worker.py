"""The measurement worker: one subprocess that owns torch, the loaded model and the timings.

Why a subprocess (DESIGN.md, "Streamlit and the live tab"): torch thread settings are
process-wide, CUDA graphs break across threads, and two browser sessions timing at once would
corrupt each other's numbers. The Streamlit process imports only this module (no torch); it holds
one ``LiveWorker`` (``st.cache_resource(max_entries=1, on_release=LiveWorker.stop)``), which
starts the process with multiprocessing's "spawn" method, sends it ``RunSpec`` requests, and
collects progress and results on a reader thread. One job runs at a time per worker; a second
submit while one runs raises ``WorkerBusy`` (the page shows "waiting for the current run"). Across the
server processes of one machine (a class deployment), a ``MachineLock`` keeps it to one run per machine;
``running_for_other`` reports another process's run too.
"""
from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import queue
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field, replace

from .machine_lock import MachineLock
from .run_spec import RunSpec, short_error

JOB_STATES = ("queued", "running", "done", "error", "cancelled")
_START_LOCK = threading.Lock()


def _start_clean(proc) -> None:
    """Start a spawn-method process without re-running the parent's ``__main__`` in the child.

    Streamlit executes each page run as a module named ``__main__`` whose file is app.py; spawn would
    import that file in the child (running the whole app there). Starting with a blank ``__main__``
    makes the child import only ``live.worker``.
    """
    import sys
    import types

    with _START_LOCK:
        saved = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            proc.start()
        finally:
            if saved is not None:
                sys.modules["__main__"] = saved


class WorkerBusy(RuntimeError):
    """Another measurement is running; try again when it finishes."""


@dataclass(frozen=True)
class JobState:
    """A snapshot of one job.

    Fields:
        job_id: increasing integer; owner: who submitted it (a session id, for the page).
        state: one of ``JOB_STATES``; fraction: 0..1 done; message: what is being measured now.
        what: the whole run in words (``RunSpec.describe``), for other sessions' waiting message.
        result: the runner's result dict when done (partial when cancelled or failed: the points measured
            before); error: the message.
        started_s / finished_s: ``time.time()`` stamps.
        pid: None for a job of this process; the process id when the run belongs to another server
            process of this machine (``LiveWorker.running_for_other``; job_id is then 0).
    """

    job_id: int
    owner: str = ""
    state: str = "queued"
    fraction: float = 0.0
    message: str = "waiting for the worker to start"
    what: str = ""
    result: dict | None = None
    error: str | None = None
    started_s: float = field(default_factory=time.time)
    finished_s: float | None = None
    pid: int | None = None

    @property
    def finished(self) -> bool:
        """True once the job is done, failed or cancelled."""
        return self.state in ("done", "error", "cancelled")


def _error_message(err: BaseException) -> str:
    """A message a person understands for an exception raised in the worker."""
    from .measure import is_oom

    if is_oom(err):
        return ("out of memory: the model or a sweep point does not fit on this device. "
                "Choose a smaller model, batch or context, or a 16-bit dtype.")
    if isinstance(err, ValueError):
        return str(err)
    # The page gets one line; the whole traceback goes to the server's log (this process's stderr).
    traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
    return f"the measurement failed: {short_error(err)}"


def _exit_with_parent() -> None:
    """In the worker: end this process as soon as the Streamlit process that started it is gone.

    A server stopped by SIGKILL (an out-of-memory kill, ``kill -9``) never sends "stop", and a daemon
    child outlives a parent that could not run its exit handlers; the worker would keep its torch threads
    (and a GPU's memory) to itself. multiprocessing's ``parent_process().join()`` waits on the parent's
    sentinel, which closes when the parent dies, however it dies.
    """
    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="live-worker-parent-watch").start()


def _serve(requests, events, cancel) -> None:
    """Worker process main loop: run each request, stream ("progress", id, fraction, message) events."""
    _exit_with_parent()
    session = None
    while True:
        msg = requests.get()
        if msg[0] == "stop":
            break
        _, job_id, spec = msg
        events.put(("running", job_id, 0.0, "starting"))
        try:
            if session is None:
                events.put(("progress", job_id, 0.0, "importing torch and transformers in the worker"))
                from .runner import LiveSession

                session = LiveSession()
            res = session.run(spec, progress=lambda f, m, j=job_id: events.put(("progress", j, f, m)),
                              cancelled=cancel.is_set)
            events.put(("cancelled" if res.get("cancelled") else "done", job_id, res))
        except BaseException as e:  # noqa: BLE001 - report every failure and keep serving
            if session is not None and not isinstance(e, ValueError):
                session.release()
            events.put(("error", job_id, _error_message(e), getattr(e, "partial_result", None)))
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                break


class LiveWorker:
    """Handle to the measurement subprocess (thread-safe; shared by all sessions of a server).

    Usage::

        w = LiveWorker()
        job = w.submit(RunSpec(), owner="me")      # raises WorkerBusy while another job runs
        state = w.wait(job, timeout_s=120)          # or poll w.job(job) from the page
        w.stop()
    """

    def __init__(self, machine_lock: MachineLock | None = None):
        self._machine = machine_lock if machine_lock is not None else MachineLock()
        self._ctx = mp.get_context("spawn")
        self._lock = threading.Lock()
        self._jobs: dict[int, JobState] = {}
        self._ids = itertools.count(1)
        self._proc = None
        self._current: int | None = None
        self._stopping = False

    # -- process ------------------------------------------------------------------------------
    def _ensure_started(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self._requests = self._ctx.Queue()
        self._events = self._ctx.Queue()
        self._cancel = self._ctx.Event()
        self._proc = self._ctx.Process(target=_serve, args=(self._requests, self._events, self._cancel),
                                       daemon=True, name="live-measurement-worker")
        _start_clean(self._proc)
        self._reader = threading.Thread(target=self._read_events, args=(self._proc, self._events), daemon=True,
                                        name="live-worker-reader")
        self._reader.start()

    def _read_events(self, proc, events) -> None:
        while True:
            try:
                ev = events.get(timeout=0.2)
            except queue.Empty:
                if not proc.is_alive():
                    self._on_death(proc)
                    return
                continue
            except (EOFError, OSError):
                self._on_death(proc)
                return
            self._apply(ev)

    def _apply(self, ev) -> None:
        kind, job_id = ev[0], ev[1]
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            if kind in ("running", "progress"):
                job = replace(job, state="running", fraction=float(ev[2]), message=str(ev[3]))
            elif kind in ("done", "cancelled"):
                job = replace(job, state=kind, fraction=1.0, result=ev[2], finished_s=time.time(),
                              message="cancelled" if kind == "cancelled" else "done")
            elif kind == "error":
                job = replace(job, state="error", error=str(ev[2]), finished_s=time.time(), message="failed",
                              result=ev[3] if len(ev) > 3 else None)  # the points measured before the failure
            self._jobs[job_id] = job
            if job.finished and self._current == job_id:
                self._current = None
                self._machine.release()
            elif self._current == job_id:
                self._machine.update(job.message, job.fraction)

    def _on_death(self, proc) -> None:
        with self._lock:
            if self._current is not None:
                job = self._jobs[self._current]
                why = "" if self._stopping else (
                    f" (exit code {proc.exitcode}; most likely the machine ran out of memory). "
                    "The worker restarts on the next run.")
                self._jobs[self._current] = replace(job, state="error", finished_s=time.time(), message="failed",
                                                    error="the measurement process stopped" + why)
                self._current = None
                self._machine.release()

    # -- public API ---------------------------------------------------------------------------
    def submit(self, spec: RunSpec, owner: str = "") -> int:
        """Start a measurement of ``spec``; returns its job id at once.

        Raises:
            WorkerBusy: another job is still running (one measurement at a time per machine: in this
                process, or in another server process of the machine).
            ValueError: ``spec`` is not a RunSpec.
        """
        if not isinstance(spec, RunSpec):
            raise ValueError(f"submit needs a RunSpec, got {type(spec).__name__}")
        with self._lock:
            if self._current is not None:
                raise WorkerBusy("waiting for the current run to finish")
            if not self._machine.try_acquire(spec.describe()):
                raise WorkerBusy("waiting for the run of another server process on this machine to finish")
            try:
                self._ensure_started()
            except BaseException:
                self._machine.release()
                raise
            job_id = next(self._ids)
            self._jobs[job_id] = JobState(job_id=job_id, owner=owner, what=spec.describe())
            self._current = job_id
            self._cancel.clear()
            self._requests.put(("run", job_id, spec))
            # keep only the latest few results in memory
            for old in sorted(self._jobs)[:-8]:
                self._jobs.pop(old, None)
        return job_id

    def job(self, job_id: int) -> JobState | None:
        """The latest snapshot of job ``job_id`` (None when unknown or forgotten)."""
        with self._lock:
            return self._jobs.get(job_id)

    def current(self) -> JobState | None:
        """The running job, if any."""
        with self._lock:
            return self._jobs.get(self._current) if self._current is not None else None

    def running_for_other(self, owner: str) -> JobState | None:
        """The running job when someone other than ``owner`` submitted it (None otherwise): what a second
        browser is told when its page opens while another session measures. Starts nothing.

        A run of another server process of this machine comes back as a JobState with ``pid`` set."""
        cur = self.current()
        if cur is not None:
            return cur if cur.owner != owner else None
        other = self._machine.holder()
        if other is None:
            return None
        return JobState(job_id=0, owner="", state="running", fraction=float(other.get("fraction", 0.0)),
                        message=str(other.get("message", "")), what=str(other.get("what", "")),
                        started_s=float(other.get("started_s", 0.0)), pid=int(other["pid"]))

    @property
    def busy(self) -> bool:
        """True while a job runs."""
        with self._lock:
            return self._current is not None

    def cancel(self, job_id: int | None = None) -> None:
        """Ask the running job (or ``job_id`` if it is the running one) to stop at the next point."""
        with self._lock:
            if self._current is not None and (job_id is None or job_id == self._current):
                self._cancel.set()

    def wait(self, job_id: int, timeout_s: float = 600.0, poll_s: float = 0.1) -> JobState:
        """Block until job ``job_id`` finishes or ``timeout_s`` passes; returns its last snapshot."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            j = self.job(job_id)
            if j is None or j.finished:
                return j
            time.sleep(poll_s)
        return self.job(job_id)

    def is_alive(self) -> bool:
        """Whether the subprocess is running."""
        return self._proc is not None and self._proc.is_alive()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the subprocess (cancel the running job, ask it to exit, terminate if it does not)."""
        self._stopping = True
        proc = self._proc
        if proc is None:
            return
        try:
            self._cancel.set()
            self._requests.put(("stop",))
        except (OSError, ValueError):
            pass
        proc.join(timeout_s)
        if proc.is_alive():
            proc.terminate()
            proc.join(2.0)
        self._proc = None
        with self._lock:  # the reader thread marks the job failed; the machine is free now
            self._machine.release()
