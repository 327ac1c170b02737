"""A session's side of the live worker's queue: submit a run when the machine is free, follow it to its end.

The live page calls these with callbacks that draw (a notice while it waits, a progress bar while the run
goes); nothing here imports streamlit. One measurement runs at a time per machine (``live.worker``,
``live.machine_lock``), so a session whose run finds the worker busy waits its turn here.
"""
from __future__ import annotations

import time
from typing import Callable

from .run_spec import RunSpec
from .worker import JobState, LiveWorker, WorkerBusy

#: Seconds between two tries to submit while another run holds the worker.
SUBMIT_POLL_S = 0.5
#: Seconds between two reads of a running job's progress.
PROGRESS_POLL_S = 0.25


def started_by(job: JobState) -> str:
    """Who started ``job``, in words: a session of this server process, or of another one on this machine."""
    return "another session" if job.pid is None else "a session of another server process on this machine"


def progress_text(job: JobState, now_s: float | None = None) -> str:
    """The step and point being measured, the time so far (s) and an estimate of the time left (from the
    fraction done, once 5 % is done)."""
    elapsed = max((time.time() if now_s is None else now_s) - job.started_s, 0.0)
    left = (f", about {elapsed * (1 - job.fraction) / job.fraction:.0f} s left" if job.fraction >= 0.05 else "")
    return f"{job.message} · {elapsed:.0f} s{left}"


def submit_when_free(worker: LiveWorker, spec: RunSpec, owner: str,
                     on_wait: Callable[[JobState | None], None]) -> int:
    """Submit ``spec`` as soon as the worker takes it and return its job id; while another run holds the
    worker, call ``on_wait(current run or None)`` every ``SUBMIT_POLL_S`` seconds."""
    while True:
        try:
            return worker.submit(spec, owner=owner)
        except WorkerBusy:
            on_wait(worker.current() or worker.running_for_other(owner))
            time.sleep(SUBMIT_POLL_S)


def follow(worker: LiveWorker, job_id: int, on_progress: Callable[[JobState], None]) -> JobState | None:
    """Poll job ``job_id`` until it finishes, calling ``on_progress(job)`` every ``PROGRESS_POLL_S`` seconds;
    return its final state (None when the worker no longer knows it)."""
    job = worker.job(job_id)
    while job is not None and not job.finished:
        on_progress(job)
        time.sleep(PROGRESS_POLL_S)
        job = worker.job(job_id)
    return job
