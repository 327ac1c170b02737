"""Serve a class: N Streamlit processes of the app behind nginx, started by one command.

    python3 deploy/serve_class.py                      # one process per core, http://0.0.0.0:8080
    python3 deploy/serve_class.py --procs 4 --port 80
    python3 deploy/serve_class.py --check              # write the nginx config and test it (nginx -t)

One Streamlit process runs its scripts on one core (Python's GIL), so a 2-core machine needs two
processes to use both. nginx (Debian's package ``nginx``) holds every browser on one process with a
cookie, proxies the websocket, and compresses and caches the static files; see deploy/nginx.conf.template.
The live page's measurement stays one at a time per machine across the processes (live/machine_lock.py).

More machines: run the app on each (``python3 deploy/serve_class.py --no-proxy --address 0.0.0.0`` starts
the processes without nginx), then on the machine that receives the students:

    python3 deploy/serve_class.py --procs 0 --upstream 10.0.0.2:8601 --upstream 10.0.0.2:8602 \\
        --upstream 10.0.0.3:8601 --upstream 10.0.0.3:8602

The class poll's answers live in one database that every process reads: by default the SQLite file
data/poll.sqlite beside app.py (every process of this machine shares it); for several machines, one
PostgreSQL database for all (``--database-url postgresql+psycopg://user:password@host/db``, or the
environment variable EXPLORER_POLL_DATABASE_URL, which the processes inherit).

Ctrl-C (or SIGTERM) stops nginx and every process. The config and nginx's caches live in a fresh
temporary directory (``--runtime-dir`` to choose one), printed at start.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.template"


def nginx_binary() -> str:
    """The nginx executable (PATH, then /usr/sbin), or a clear error."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if found is None:
        raise SystemExit("nginx is not installed: `sudo apt-get install nginx` (Debian/Ubuntu), then run again.")
    return found


def render_config(upstreams: list[str], listen: str, runtime: Path, workers: int = 1) -> str:
    """The nginx.conf text for ``upstreams`` (host:port strings), listening on ``listen`` ("8080" or "ip:port").

    Raises:
        ValueError: no upstream, or an upstream that is not host:port.
    """
    if not upstreams:
        raise ValueError("nginx needs at least one upstream host:port")
    for u in upstreams:
        host, _, port = u.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"an upstream must be host:port, got {u!r}")
    lines = "\n".join(f"        server {u} max_fails=0;" for u in upstreams)
    text = TEMPLATE.read_text()
    for name, value in (("UPSTREAMS", lines), ("LISTEN", listen), ("RUNTIME", str(runtime)), ("WORKERS", str(workers))):
        text = text.replace(f"@{name}@", value)
    return text


def write_config(upstreams: list[str], listen: str, runtime: Path) -> Path:
    """Write nginx.conf into ``runtime`` (made readable for nginx's worker user) and return its path."""
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o755)
    conf = runtime / "nginx.conf"
    conf.write_text(render_config(upstreams, listen, runtime))
    return conf


def check_config(conf: Path) -> subprocess.CompletedProcess:
    """``nginx -t`` on ``conf`` (returncode 0 and "syntax is ok" in stderr when valid)."""
    return subprocess.run([nginx_binary(), "-t", "-p", str(conf.parent), "-c", str(conf)],
                          capture_output=True, text=True)


def free_port() -> int:
    """An unused TCP port on 127.0.0.1 (the system picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_streamlit(port: int, address: str, *, script: str = "app.py", quiet: bool = False,
                    new_session: bool = False) -> subprocess.Popen:
    """One ``streamlit run app.py`` (or another ``script``, relative to the repository) on ``address:port``
    (headless, no file watcher).

    ``quiet`` discards its output; ``new_session`` starts it in a process group of its own (so that a
    signal to the caller's group does not reach it, and its whole group can be signalled).
    """
    out = subprocess.DEVNULL if quiet else None
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port), "--server.address", address,
         "--server.headless", "true", "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=out, stderr=out, start_new_session=new_session)


def wait_healthy(url: str, timeout_s: float = 120.0) -> None:
    """Block until ``url``/_stcore/health answers ok (RuntimeError after ``timeout_s``)."""
    end = time.time() + timeout_s
    while time.time() < end:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout_s:.0f} s")


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, start the processes and nginx, wait until interrupted."""
    ap = argparse.ArgumentParser(description="Serve the app to a class: N Streamlit processes behind nginx.")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1,
                    help="Streamlit processes on this machine (default: one per core)")
    ap.add_argument("--port", type=int, default=8080, help="the port students open (nginx)")
    ap.add_argument("--host", default="0.0.0.0", help="the address nginx listens on")
    ap.add_argument("--first-port", type=int, default=8601, help="the first Streamlit process's port")
    ap.add_argument("--address", default="127.0.0.1",
                    help="the address the Streamlit processes listen on (0.0.0.0 to serve another machine's nginx)")
    ap.add_argument("--upstream", action="append", default=[],
                    help="host:port of a Streamlit process on another machine (repeat); added to the local ones")
    ap.add_argument("--no-proxy", action="store_true", help="start the Streamlit processes only, no nginx")
    ap.add_argument("--runtime-dir", help="where the nginx config, pid and caches go (default: a new temp dir)")
    ap.add_argument("--check", action="store_true", help="write the config, run nginx -t, and exit")
    ap.add_argument("--database-url", help="the class poll's database, shared by every process (default: the "
                    "SQLite file data/poll.sqlite; postgresql+psycopg://user:password@host/db for several machines)")
    args = ap.parse_args(argv)
    if args.database_url:  # the Streamlit processes inherit it (classroom/store.py reads it)
        os.environ["EXPLORER_POLL_DATABASE_URL"] = args.database_url
    if args.procs < 0 or (args.procs == 0 and not args.upstream):
        ap.error("--procs must be at least 1, or 0 with --upstream")

    # nginx's worker processes run as an unprivileged user when started by root: the runtime directory and
    # every directory above it must be readable for them (the default, a new directory under /tmp, is).
    own_runtime = not args.runtime_dir
    runtime = Path(args.runtime_dir) if args.runtime_dir else Path(tempfile.mkdtemp(prefix="explorer-class-"))
    ports = [args.first_port + i for i in range(args.procs)]
    upstreams = [f"127.0.0.1:{p}" if args.address in ("127.0.0.1", "0.0.0.0") else f"{args.address}:{p}"
                 for p in ports] + args.upstream
    conf = None
    if not args.no_proxy:
        conf = write_config(upstreams, f"{args.host}:{args.port}", runtime)
        check = check_config(conf)
        if check.returncode != 0 or args.check:
            if check.returncode != 0:
                print(check.stderr, file=sys.stderr)
            else:
                print(check.stderr.strip())
                print(f"config ({conf.name}, written to a temporary folder and removed):" if own_runtime
                      else f"config: {conf}")
                if own_runtime:
                    print(conf.read_text())
            if own_runtime:
                shutil.rmtree(runtime, ignore_errors=True)
            return 1 if check.returncode != 0 else 0
    elif own_runtime:
        shutil.rmtree(runtime, ignore_errors=True)

    children: list[subprocess.Popen] = []

    def stop(*_):
        for c in reversed(children):
            if c.poll() is None:
                c.terminate()
        for c in children:
            try:
                c.wait(timeout=15)
            except subprocess.TimeoutExpired:
                c.kill()
        if own_runtime:
            shutil.rmtree(runtime, ignore_errors=True)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for port in ports:
        children.append(start_streamlit(port, args.address))
    for port in ports:
        wait_healthy(f"http://127.0.0.1:{port}")
    if conf is not None:
        children.append(subprocess.Popen([nginx_binary(), "-p", str(runtime), "-c", str(conf), "-g", "daemon off;"]))
        shown = "localhost" if args.host == "0.0.0.0" else args.host
        print(f"Serving {len(upstreams)} Streamlit processes behind nginx: http://{shown}:{args.port} "
              f"(config {conf})", flush=True)
    else:
        print("Serving " + ", ".join(f"http://{args.address}:{p}" for p in ports), flush=True)
    while True:
        for c in children:
            if c.poll() is not None:
                print(f"a server process stopped (exit code {c.returncode}); stopping the others", file=sys.stderr)
                try:
                    stop()
                except SystemExit:
                    return 1
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
