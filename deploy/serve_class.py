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

Supervision: a Streamlit process (or nginx) that exits is started again on the same port, after a pause that
grows while it keeps failing (1 s, doubling to 30 s, reset once it has run for a minute); the others keep
serving meanwhile, and nginx sends no new request to a port that refused one (``max_fails``/``fail_timeout``
in the config) so the survivors carry the class. A student whose process died reconnects on a reload, with
the URL's state. For a server that must come back after a reboot, use the systemd units in deploy/systemd/
(the same processes, supervised by systemd) instead of this command.

Warm-up: each process draws every page once at start (``WARM_PAGES``, before nginx takes students; after a
restart, in the background), so that what the pages show at open is in its shared caches before a class
opens the same link at once (``--no-warm-up`` to skip).

Limits (see deploy/nginx.conf.template): connections per client address (``--conn-per-client``), header and
body timeouts, request bodies up to the app's upload limit (``server.maxUploadSize`` in .streamlit/config.toml),
and the open-file limit of every process raised to ``--nofile`` (each idle websocket holds about 3-4 handles).
Each Streamlit process admits ``--max-sessions`` browser sessions and shows later ones a "the class server
is full" page (environment variable ``LLM_EXPLORER_MAX_SESSIONS``, read by ui/session_cap.py).

Memory: the processes run with glibc's ``MALLOC_ARENA_MAX=2`` (``APP_MALLOC_ARENA_MAX``; see
:func:`app_environment`), so that the memory a class used is handed back after it instead of staying
scattered over one malloc arena per session thread.

Ctrl-C (or SIGTERM) stops nginx and every process. The config and nginx's caches live in a fresh
temporary directory (``--runtime-dir`` to choose one), printed at start.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.template"
STREAMLIT_CONFIG = ROOT / ".streamlit" / "config.toml"
#: Open files per process: an idle websocket holds about 3-4 handles, so 1,024 (a common default) locks a
#: process out after about 300 connections.
DEFAULT_NOFILE = 65536
#: Concurrent connections nginx accepts from one client address. A browser holds one websocket and a few
#: requests at once (about 6 while a page loads); a whole class behind one school NAT address needs
#: students x 6, so raise it for such a class (--conn-per-client).
DEFAULT_CONN_PER_CLIENT = 512
#: Browser sessions one Streamlit process admits before it shows "the class server is full".
DEFAULT_MAX_SESSIONS = 100
#: glibc's malloc arenas per Streamlit process (the standard tunable ``MALLOC_ARENA_MAX``). Streamlit runs
#: each session's script in a thread of its own, and glibc gives threads new arenas up to 8 per core; a
#: class's sessions then leave freed memory scattered over many arenas, which ``malloc_trim`` (run by
#: ui/session_cap.py when the process is idle) cannot hand back while any block in them lives. Two arenas
#: keep the heap compact; the scripts take turns on Python's GIL anyway, so they barely contend for them.
APP_MALLOC_ARENA_MAX = "2"


def nginx_binary() -> str:
    """The nginx executable (PATH, then /usr/sbin), or a clear error."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if found is None:
        raise SystemExit("nginx is not installed: `sudo apt-get install nginx` (Debian/Ubuntu), then run again.")
    return found


def upload_limit_mb(config: Path = STREAMLIT_CONFIG) -> int:
    """The app's upload limit in MB: ``server.maxUploadSize`` of ``config`` (Streamlit's default, 200, if unset).

    nginx's ``client_max_body_size`` is set to the same, so a larger body is refused by the proxy (413) before
    any of it is read, instead of being spooled to disk and refused by the app afterwards.
    """
    try:
        value = tomllib.loads(config.read_text()).get("server", {}).get("maxUploadSize", 200)
    except FileNotFoundError:
        return 200
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"server.maxUploadSize in {config} must be a whole number of MB, got {value!r}")
    return value


def raise_nofile_limit(want: int = DEFAULT_NOFILE) -> int:
    """Raise this process's open-file limit (RLIMIT_NOFILE) to ``want`` where allowed; children inherit it.

    The soft limit goes up to ``want``; the hard limit too when the process may raise it (root), else the soft
    limit stops at the hard one. Returns the soft limit now in force.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= want:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def render_config(upstreams: list[str], listen: str, runtime: Path, workers: int = 1, *,
                  conn_per_client: int = DEFAULT_CONN_PER_CLIENT, body_mb: int | None = None,
                  nofile: int = DEFAULT_NOFILE) -> str:
    """The nginx.conf text for ``upstreams`` (host:port strings), listening on ``listen`` ("8080" or "ip:port").

    ``conn_per_client``: concurrent connections from one client address (nginx ``limit_conn``); ``body_mb``:
    the largest request body in MB (default: the app's ``server.maxUploadSize``); ``nofile``: nginx's
    ``worker_rlimit_nofile``.

    Raises:
        ValueError: no upstream, an upstream that is not host:port, or a limit below 1.
    """
    body_mb = upload_limit_mb() if body_mb is None else body_mb
    for name, value in (("conn_per_client", conn_per_client), ("body_mb", body_mb), ("nofile", nofile)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if not upstreams:
        raise ValueError("nginx needs at least one upstream host:port")
    for u in upstreams:
        host, _, port = u.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"an upstream must be host:port, got {u!r}")
    # Passive health check: one failed connection takes an upstream out for 5 s (then nginx tries it again);
    # the request that failed goes on to the next upstream (proxy_next_upstream), so no student sees it.
    lines = "\n".join(f"        server {u} max_fails=1 fail_timeout=5s;" for u in upstreams)
    text = TEMPLATE.read_text()
    for name, value in (("UPSTREAMS", lines), ("LISTEN", listen), ("RUNTIME", str(runtime)), ("WORKERS", str(workers)),
                        ("CONN_PER_CLIENT", str(conn_per_client)), ("BODY_MB", str(body_mb)), ("NOFILE", str(nofile))):
        text = text.replace(f"@{name}@", value)
    return text


def write_config(upstreams: list[str], listen: str, runtime: Path, **limits) -> Path:
    """Write nginx.conf into ``runtime`` (made readable for nginx's worker user) and return its path.

    ``limits``: the keyword arguments of :func:`render_config`.
    """
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o755)
    conf = runtime / "nginx.conf"
    conf.write_text(render_config(upstreams, listen, runtime, **limits))
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


def app_environment(max_sessions: int, base: dict | None = None) -> dict:
    """The environment of the Streamlit processes: ``base`` (default: this process's environment) with
    ``LLM_EXPLORER_MAX_SESSIONS`` set to ``max_sessions`` and glibc's ``MALLOC_ARENA_MAX`` set to
    ``APP_MALLOC_ARENA_MAX`` unless ``base`` already sets it (an operator's own value wins). Why two arenas:
    see ``APP_MALLOC_ARENA_MAX``; the tunable is glibc's (the GNU C Library manual, "Memory Allocation
    Tunables", glibc.malloc.arena_max). Raises ValueError when ``max_sessions`` is below 1."""
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1 (got {max_sessions})")
    env = dict(os.environ if base is None else base)
    env["LLM_EXPLORER_MAX_SESSIONS"] = str(max_sessions)
    env.setdefault("MALLOC_ARENA_MAX", APP_MALLOC_ARENA_MAX)
    return env


def start_streamlit(port: int, address: str, *, script: str = "asgi.py", quiet: bool = False,
                    new_session: bool = False, env: dict | None = None) -> subprocess.Popen:
    """One ``streamlit run asgi.py`` (or another ``script``, relative to the repository) on ``address:port``
    (headless, no file watcher). asgi.py serves app.py and names the server's base URL in the page, so a
    deep link asks nothing under its own path.

    ``quiet`` discards its output; ``new_session`` starts it in a process group of its own (so that a
    signal to the caller's group does not reach it, and its whole group can be signalled); ``env``: its
    environment (default: this process's).
    """
    out = subprocess.DEVNULL if quiet else None
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port), "--server.address", address,
         "--server.headless", "true", "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=out, stderr=out, start_new_session=new_session, env=env)


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


#: The pages a process draws once at start (url paths; "" is the home page), so that the figures and tables
#: every page shows at open are in the process's shared caches before the first student asks (a class opens
#: the same link at once: the first visits would all compute them). The live page runs nothing at open.
WARM_PAGES = ("", "kv_cache", "roofline", "latency_cost", "quantization", "batching", "speculative", "many_gpus",
              "monthly_bill", "exercises")


def warm_up(url: str, pages=WARM_PAGES, timeout_s: float = 120.0) -> int:
    """Draw each of ``pages`` once on the Streamlit process at ``url`` (one websocket session, as a browser
    would: a ``rerun_script`` per page, answered when ``script_finished`` arrives). Returns the pages drawn.

    Failures are not errors (the process then computes on its first visits, as without warm-up).
    """
    import asyncio

    async def visit() -> int:
        import websockets
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        done = 0
        async with websockets.connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                      origin=url, max_size=None, open_timeout=30, ping_interval=None) as ws:
            for page in pages:
                m = BackMsg()
                m.rerun_script.query_string = ""
                m.rerun_script.page_name = page
                m.rerun_script.context_info.url = f"{url}/{page}"
                await ws.send(m.SerializeToString())
                while True:
                    f = ForwardMsg()
                    f.ParseFromString(await asyncio.wait_for(ws.recv(), timeout=timeout_s))
                    if f.WhichOneof("type") == "script_finished":
                        done += 1
                        break
        return done
    try:
        return asyncio.run(visit())
    except Exception:  # noqa: BLE001 - warm-up is an optimisation
        return 0


#: Restart pauses: the first after 1 s, doubling while a process keeps failing, at most 30 s; a process that
#: has run for a minute counts as healthy again (its next failure restarts it after 1 s).
RESTART_FIRST_S, RESTART_MAX_S, HEALTHY_AFTER_S = 1.0, 30.0, 60.0


class Supervised:
    """One child process kept running: ``start()`` makes it, :meth:`check` restarts it once it has exited
    (then calls ``after_restart()`` in a thread of its own, when given).

    Attributes: ``name`` (for the log), ``proc`` (the running Popen, None while waiting to restart),
    ``restarts`` (how many times it was started again).
    """

    def __init__(self, name: str, start, after_restart=None):
        self.name, self._start, self._after_restart = name, start, after_restart
        self.restarts = 0
        self._delay_s = RESTART_FIRST_S
        self._restart_at: float | None = None
        self.proc: subprocess.Popen | None = start()
        self._started = time.monotonic()

    def check(self, now: float) -> None:
        """Restart the process if it has exited and its pause is over (call about once a second)."""
        if self.proc is None:
            if now >= self._restart_at:
                self.proc, self._started = self._start(), now
                self.restarts += 1
                print(f"{self.name}: started again (pid {self.proc.pid}, restart {self.restarts})",
                      file=sys.stderr, flush=True)
                if self._after_restart is not None:   # e.g. warm its caches, without holding up the others
                    threading.Thread(target=self._after_restart, daemon=True).start()
            return
        code = self.proc.poll()
        if code is None:
            if now - self._started >= HEALTHY_AFTER_S:
                self._delay_s = RESTART_FIRST_S
            return
        print(f"{self.name}: exited (code {code}); starting it again in {self._delay_s:.0f} s, the others "
              "keep serving", file=sys.stderr, flush=True)
        self.proc, self._restart_at = None, now + self._delay_s
        self._delay_s = min(RESTART_MAX_S, 2 * self._delay_s)

    def stop(self) -> None:
        """Ask the process to end (SIGTERM)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()

    def wait(self, timeout_s: float = 15) -> None:
        """Wait for the process to end, killing it after ``timeout_s``."""
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, start the processes and nginx, keep them running until interrupted."""
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
    ap.add_argument("--conn-per-client", type=int, default=DEFAULT_CONN_PER_CLIENT,
                    help="concurrent connections nginx accepts from one client address (default "
                         f"{DEFAULT_CONN_PER_CLIENT}; a class behind one NAT address needs about 6 per student)")
    ap.add_argument("--max-sessions", type=int,
                    default=int(os.environ.get("LLM_EXPLORER_MAX_SESSIONS", DEFAULT_MAX_SESSIONS)),
                    help="browser sessions per Streamlit process before later ones see 'the class server is full' "
                         f"(default {DEFAULT_MAX_SESSIONS}, or LLM_EXPLORER_MAX_SESSIONS)")
    ap.add_argument("--no-warm-up", action="store_true",
                    help="do not draw every page once per process at start (see WARM_PAGES)")
    ap.add_argument("--nofile", type=int, default=DEFAULT_NOFILE,
                    help=f"open-file limit for every process (default {DEFAULT_NOFILE}; capped by the hard limit "
                         "unless run as root)")
    args = ap.parse_args(argv)
    if args.database_url:  # the Streamlit processes inherit it (classroom/store.py reads it)
        os.environ["EXPLORER_POLL_DATABASE_URL"] = args.database_url
    if args.procs < 0 or (args.procs == 0 and not args.upstream):
        ap.error("--procs must be at least 1, or 0 with --upstream")
    if args.max_sessions < 1 or args.conn_per_client < 1 or args.nofile < 64:
        ap.error("--max-sessions and --conn-per-client must be at least 1, --nofile at least 64")

    # nginx's worker processes run as an unprivileged user when started by root: the runtime directory and
    # every directory above it must be readable for them (the default, a new directory under /tmp, is).
    own_runtime = not args.runtime_dir
    runtime = Path(args.runtime_dir) if args.runtime_dir else Path(tempfile.mkdtemp(prefix="explorer-class-"))
    ports = [args.first_port + i for i in range(args.procs)]
    upstreams = [f"127.0.0.1:{p}" if args.address in ("127.0.0.1", "0.0.0.0") else f"{args.address}:{p}"
                 for p in ports] + args.upstream
    conf = None
    if not args.no_proxy:
        conf = write_config(upstreams, f"{args.host}:{args.port}", runtime, conn_per_client=args.conn_per_client,
                            nofile=args.nofile)
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

    nofile = raise_nofile_limit(args.nofile)   # inherited by every process started below
    if nofile < args.nofile:
        print(f"open-file limit {nofile} (the hard limit; run as root or raise it to allow {args.nofile})",
              file=sys.stderr)
    env = app_environment(args.max_sessions)
    children: list[Supervised] = []

    def stop(*_):
        for c in reversed(children):
            c.stop()
        for c in children:
            c.wait()
        if own_runtime:
            shutil.rmtree(runtime, ignore_errors=True)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    def warm(port: int) -> None:
        if not args.no_warm_up:
            try:
                wait_healthy(f"http://127.0.0.1:{port}")
            except RuntimeError:
                return  # not up yet: the supervisor restarts it if it dies; its first visits compute
            warm_up(f"http://127.0.0.1:{port}")

    for port in ports:
        children.append(Supervised(f"Streamlit process on port {port}",
                                   lambda port=port: start_streamlit(port, args.address, env=env),
                                   after_restart=lambda port=port: warm(port)))
    for port in ports:
        wait_healthy(f"http://127.0.0.1:{port}")
    warmers = [threading.Thread(target=warm, args=(port,), daemon=True) for port in ports]
    for t in warmers:
        t.start()
    for t in warmers:
        t.join()
    if conf is not None:
        children.append(Supervised("nginx", lambda: subprocess.Popen(
            [nginx_binary(), "-p", str(runtime), "-c", str(conf), "-g", "daemon off;"])))
        shown = "localhost" if args.host == "0.0.0.0" else args.host
        print(f"Serving {len(upstreams)} Streamlit processes behind nginx: http://{shown}:{args.port} "
              f"(config {conf}; a process that exits is started again)", flush=True)
    else:
        print("Serving " + ", ".join(f"http://{args.address}:{p}" for p in ports)
              + " (a process that exits is started again)", flush=True)
    while True:
        now = time.monotonic()
        for c in children:
            c.check(now)
        time.sleep(0.5)


if __name__ == "__main__":
    sys.exit(main())
