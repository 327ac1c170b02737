"""A throwaway PostgreSQL server for the tests and the bench (Debian's ``postgresql`` package).

    python3 tests/pgserver.py start DIR   # initdb into DIR, start on a free port; prints the database URL
    python3 tests/pgserver.py stop DIR    # stop it (the caller removes DIR)

The cluster trusts local connections (it listens on 127.0.0.1 only, for the length of a test run). PostgreSQL
refuses to run as root: under root the cluster belongs to the ``postgres`` user the package creates.
.ci/run starts one and exports its URL as ``EXPLORER_TEST_POSTGRES_URL``.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
from pathlib import Path


def pg_bin(name: str) -> str:
    """The path of a PostgreSQL server program (``initdb``, ``pg_ctl``): Debian keeps them out of the PATH.

    Raises:
        FileNotFoundError: the postgresql package is not installed.
    """
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    if found:
        return found[-1]
    on_path = shutil.which(name)
    if on_path:
        return on_path
    raise FileNotFoundError(f"{name} not found: install Debian's postgresql package (bash .ci/run does)")


def _as_owner(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.getuid() == 0 else cmd


def _run(cmd: list[str]) -> None:
    done = subprocess.run(_as_owner(cmd), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def start(folder: Path) -> str:
    """initdb into ``folder``/data, start the server on a free port of 127.0.0.1; returns the database URL.

    Under root every folder above ``folder`` must be open to the ``postgres`` user (mode 755, as /tmp is).

    Raises:
        RuntimeError: initdb or pg_ctl failed (their message).
    """
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    if os.getuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(folder, pw.pw_uid, pw.pw_gid)
    folder.chmod(0o755)
    _run([pg_bin("initdb"), "-D", str(data), "-U", "explorer", "--auth=trust", "-E", "UTF8", "--no-sync"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    opts = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    _run([pg_bin("pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-o", opts, "-w", "-t", "60", "start"])
    return f"postgresql+psycopg://explorer@127.0.0.1:{port}/postgres"


def stop(folder: Path) -> None:
    """Stop the server whose cluster is ``folder``/data (fast shutdown)."""
    subprocess.run(_as_owner([pg_bin("pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"]),
                   check=False, capture_output=True)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        sys.exit(__doc__)
    if sys.argv[1] == "start":
        print(start(Path(sys.argv[2])))
    else:
        stop(Path(sys.argv[2]))
