"""The live measurement runs one at a time per machine: a lock that separate server processes share."""
import subprocess
import sys
import textwrap

import pytest

from live.machine_lock import MachineLock
from live.run_spec import RunSpec
from live.worker import LiveWorker, WorkerBusy

HOLDER = textwrap.dedent("""
    import sys
    from live.machine_lock import MachineLock
    lock = MachineLock()
    assert lock.try_acquire("run A: tiny llama, 4 points")
    lock.update("decode B = 4", 0.5)
    print("held", flush=True)
    sys.stdin.readline()          # hold until the test says so
    lock.release()
    print("released", flush=True)
    sys.stdin.readline()
""")


@pytest.fixture
def holder():
    """Another process that holds the machine lock until its stdin gets a line."""
    p = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    yield p
    p.kill()
    p.wait(timeout=10)


def test_a_second_process_cannot_take_the_lock_and_sees_the_holders_run(holder):
    lock = MachineLock()
    assert not lock.try_acquire("run B")
    status = lock.holder()
    assert status["pid"] == holder.pid and status["what"].startswith("run A")
    assert status["message"] == "decode B = 4" and status["fraction"] == 0.5
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"
    assert lock.holder() is None
    assert lock.try_acquire("run B")      # free once the other process let go
    lock.release()


def test_the_lock_of_a_process_that_died_is_free(holder):
    holder.kill()
    holder.wait(timeout=10)
    lock = MachineLock()
    assert lock.holder() is None          # its status names a dead pid
    assert lock.try_acquire("run B")      # the operating system dropped its lock
    lock.release()


def test_the_worker_refuses_and_reports_another_processes_run(holder):
    worker = LiveWorker()
    with pytest.raises(WorkerBusy, match="another server process"):
        worker.submit(RunSpec(), owner="me")
    other = worker.running_for_other("me")
    assert other is not None and other.pid == holder.pid
    assert other.what.startswith("run A") and other.fraction == 0.5
    assert not worker.is_alive()          # refused before starting a measurement process
