"""One live measurement at a time per machine, across every server process.

A class deployment runs several Streamlit processes on one machine (deploy/serve_class.py); each has
its own ``LiveWorker``. Two of them timing at once would share the cores and the memory bus and corrupt
each other's numbers, so a run first takes an exclusive file lock (the ``filelock`` package: ``flock``
on Unix, ``LockFileEx`` on Windows) that all processes on the machine share. The operating system drops
the lock when its holder dies, so a crashed process never blocks the machine.

Beside the lock, a small JSON status file says what the holder measures and how far it got, so that a
page served by another process can show that run as "running in another server process".

The files live in ``$LLM_EXPLORER_RUNTIME_DIR`` when set (tests point it at a private directory),
otherwise in the system's temporary directory: every process of one machine finds the same files.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from filelock import FileLock, Timeout

RUNTIME_DIR_ENV = "LLM_EXPLORER_RUNTIME_DIR"
LOCK_NAME = "llm-explorer-live.lock"
STATUS_NAME = "llm-explorer-live.json"


def runtime_dir() -> Path:
    """The directory the processes of this machine share (``$LLM_EXPLORER_RUNTIME_DIR`` or the temp dir)."""
    return Path(os.environ.get(RUNTIME_DIR_ENV) or tempfile.gettempdir())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


class MachineLock:
    """The machine-wide live-measurement lock of one process (thread-safe enough for one LiveWorker).

    Usage::

        lock = MachineLock()
        if lock.try_acquire("Llama-3-8B config, 4 points on cpu"):
            lock.update("decode B = 4", 0.5)
            ...
            lock.release()
        else:
            lock.holder()   # {"pid", "what", "message", "fraction", "started_s"} of the other process

    Args:
        directory: where the lock and status files live (default ``runtime_dir()``).
    """

    def __init__(self, directory: str | os.PathLike | None = None):
        d = Path(directory) if directory is not None else runtime_dir()
        d.mkdir(parents=True, exist_ok=True)
        self.lock_path = d / LOCK_NAME
        self.status_path = d / STATUS_NAME
        # thread_local=False: the page's script thread takes the lock, the worker's reader thread releases it.
        self._lock = FileLock(str(self.lock_path), thread_local=False)
        self._what = ""
        self._started_s = 0.0

    @property
    def held(self) -> bool:
        """True while this process holds the lock."""
        return self._lock.is_locked

    def try_acquire(self, what: str) -> bool:
        """Take the lock without waiting; True when taken (``what`` describes the run for others)."""
        if self._lock.is_locked:
            return False
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            return False
        self._what, self._started_s = what, time.time()
        self.update("starting", 0.0)
        return True

    def update(self, message: str, fraction: float) -> None:
        """Publish the holder's progress for other processes (no-op when not holding the lock)."""
        if not self._lock.is_locked:
            return
        status = dict(pid=os.getpid(), what=self._what, message=message, fraction=float(fraction),
                      started_s=self._started_s)
        tmp = self.status_path.with_name(f"{self.status_path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(status))
            os.replace(tmp, self.status_path)
        except OSError:  # progress for others is best effort; the lock itself is what serialises runs
            pass

    def release(self) -> None:
        """Drop the lock (and its status) if this process holds it."""
        if not self._lock.is_locked:
            return
        try:
            self.status_path.unlink(missing_ok=True)
        except OSError:
            pass
        self._lock.release(force=True)

    def holder(self) -> dict | None:
        """The run another live process of this machine holds the lock for, or None.

        Read from the status file; a status left by a process that has died, or by this process, is None.
        """
        try:
            status = json.loads(self.status_path.read_text())
            pid = int(status["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if pid == os.getpid() or not _pid_alive(pid):
            return None
        return status
