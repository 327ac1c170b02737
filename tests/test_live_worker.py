"""The measurement worker subprocess: results come back, one job at a time, cancel, errors keep it usable."""
import json
import time

import pytest

from live.run_spec import RunSpec
from live.worker import LiveWorker, WorkerBusy

TINY = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 128}


def tiny_spec(**changes):
    base = dict(source="config", config_json=json.dumps(TINY), prompt_lens=(8,), prefill_batches=(1,),
                prefill_prompt_len=8, decode_batches=(1,), decode_context_len=8, decode_contexts=(8,),
                decode_steps=2, repeats=1, warmup=0, new_tokens=3)
    base.update(changes)
    return RunSpec(**base)


@pytest.fixture(scope="module")
def worker():
    w = LiveWorker()
    yield w
    w.stop()
    assert not w.is_alive()


def test_run_returns_points_and_progress_reaches_done(worker):
    job = worker.submit(tiny_spec(), owner="a")
    state = worker.wait(job, timeout_s=120)
    assert state.state == "done", state.error
    # 1 prompt length + 1 prefill batch + 1 decode batch + 1 decode context = 4 points
    assert len(state.result["table"]) == 4
    assert state.fraction == 1.0 and state.owner == "a"
    assert len(state.result["text"]["output_ids"]) == 3


def test_second_submit_while_running_is_refused_then_cancel_stops_it(worker):
    many = tiny_spec(prompt_lens=tuple(range(8, 200, 4)), repeats=3)
    job = worker.submit(many, owner="a")
    with pytest.raises(WorkerBusy):
        worker.submit(tiny_spec(), owner="b")
    # another session sees the run and what it measures; its owner does not ("b" only looked, nothing started)
    seen = worker.running_for_other("b")
    assert seen is not None and seen.job_id == job and seen.what == many.describe()
    assert worker.running_for_other("a") is None
    for _ in range(600):  # cancel once the sweep has started (the flag is checked between points)
        if "prefill at batch" in worker.job(job).message:
            break
        time.sleep(0.05)
    worker.cancel(job)
    state = worker.wait(job, timeout_s=120)
    assert state.state == "cancelled"
    # the points measured so far are kept (interleaved rounds): either some point was never reached, or every one
    # was reached but some have fewer than the 3 rounds planned and are marked unreliable
    table = state.result["table"]
    assert len(table) < many.n_points or (len(table) == many.n_points and table["unreliable"].any())
    assert not worker.busy


def test_load_failure_is_a_message_and_the_worker_stays_usable(worker, tmp_path):
    job = worker.submit(RunSpec(source="weights", weights_path=str(tmp_path / "missing")))
    state = worker.wait(job, timeout_s=60)
    assert state.state == "error" and "Local weights are off" in state.error  # no models folder set
    job = worker.submit(tiny_spec())
    assert worker.wait(job, timeout_s=60).state == "done"


def test_the_model_stays_warm_between_runs(worker):
    worker.wait(worker.submit(tiny_spec()), timeout_s=60)
    state = worker.wait(worker.submit(tiny_spec(new_tokens=2)), timeout_s=60)
    assert state.result["model"]["reused"] is True


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (no longer listed, or a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not __import__("os").path.isdir("/proc"), reason="reads /proc to watch the worker")
def test_the_worker_ends_when_its_server_is_killed(tmp_path):
    # A server killed with SIGKILL cannot stop its worker; the worker must notice its parent is gone and exit
    # rather than keep its threads (and a GPU's memory) forever.
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    script = ("import sys, time\n"
              f"sys.path.insert(0, {str(root)!r})\n"
              "from live.worker import LiveWorker\n"
              "w = LiveWorker()\n"
              "w._ensure_started()\n"
              "print(w._proc.pid, flush=True)\n"
              "time.sleep(120)\n")
    env = dict(os.environ, LLM_EXPLORER_RUNTIME_DIR=str(tmp_path))
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    worker_pid = None
    try:
        worker_pid = int(server.stdout.readline())
        time.sleep(1.0)
        assert not _gone(worker_pid)  # the worker is up while its server lives
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        end = time.time() + 30
        while not _gone(worker_pid) and time.time() < end:
            time.sleep(0.2)
        assert _gone(worker_pid)
    finally:
        server.kill()
        if worker_pid is not None and not _gone(worker_pid):
            os.kill(worker_pid, signal.SIGKILL)
