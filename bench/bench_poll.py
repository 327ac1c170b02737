"""Load and faults of the class poll through the two-process class deployment (nginx + 2 Streamlit processes).

    python bench/bench_poll.py                  # SQLite, then PostgreSQL (a throwaway server, tests/pgserver.py)
    python bench/bench_poll.py --backend sqlite --students 60 --window 10

What it does, per database:
1. Starts the deployment as deploy/serve_class.py does (its nginx config, two ``streamlit run asgi.py``
   processes), both on one database: the SQLite file, or one PostgreSQL server. Started here without
   serve_class's supervisor, which would start a killed process again: here it stays down, the harder case.
2. The teacher opens a session, asks a prediction and opens answering (through classroom.poll); the students
   join (ids as the join form gives them).
3. Records what a real headless Chromium sends over the websocket when a student answers on the poll page
   (the page's first run, the answer form's submit, the 2-second refresh of the student's fragment), then
   replays it from N websocket clients through nginx, each with its own student id and answer: every student
   refreshes every 2 s as a browser does and submits once at a random moment of the window.
4. Halfway through the window one Streamlit process is killed (SIGKILL). Its students' websockets drop; each
   reloads (a new websocket, which nginx sends to the surviving process) and must see its answer if it was
   stored ("Your answer: ..." in the page's first run), else sends it again.
5. Checks: one row per student, each with the student's own answer (count check); p50/p90 from the submit's
   send to the row being in the database (a watcher polls the table every 20 ms, as the teacher's count
   would see it) and to the end of the submit's script run.

Figures depend on the machine and what else runs on it: the load average is printed with them.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import sqlalchemy as sa  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from deploy.serve_class import free_port, nginx_binary, start_streamlit, wait_healthy, write_config  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
MARK = "1.111"  # the answer typed while recording; replaced by each student's own


def is_finished(raw: bytes) -> bool:
    """Whether a ForwardMsg ends a script run (whole page or fragment)."""
    m = ForwardMsg()
    m.ParseFromString(raw)
    return m.WhichOneof("type") == "script_finished"


def start_deployment(db_url: str, runtime: Path) -> tuple[list[subprocess.Popen], subprocess.Popen, str]:
    """Two Streamlit processes on ``db_url`` behind nginx (deploy/nginx.conf.template); returns them and the URL."""
    os.environ["EXPLORER_POLL_DATABASE_URL"] = db_url  # inherited by the processes
    ports = [free_port(), free_port()]
    procs = [start_streamlit(p, "127.0.0.1", quiet=True, new_session=True) for p in ports]
    for p in ports:
        wait_healthy(f"http://127.0.0.1:{p}", timeout_s=120)
    port = free_port()
    conf = write_config([f"127.0.0.1:{p}" for p in ports], f"127.0.0.1:{port}", runtime)
    nginx = subprocess.Popen([nginx_binary(), "-p", str(runtime), "-c", str(conf), "-g", "daemon off;"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, timeout_s=60)
    return procs, nginx, url


def record(url: str, code: str, me: str) -> dict[str, bytes]:
    """The BackMsgs Chromium sends for a student's page: "open", "submit" (the form, answer ``MARK``) and
    "refresh" (the fragment's 2-second rerun)."""
    from playwright.sync_api import sync_playwright

    sent: list[bytes] = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                              "--disable-background-networking"])
        page = b.new_page(viewport={"width": 390, "height": 844})
        page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(
            f if isinstance(f, bytes) else f.encode())))
        page.goto(f"{url}/poll?code={code}&me={me}")
        page.get_by_label("Your answer").wait_for(timeout=90_000)
        page.wait_for_timeout(2500)  # at least one refresh
        page.get_by_label("Your answer").fill(MARK)
        page.get_by_role("button", name="Send").click()
        page.get_by_text(f"Your answer: {MARK}").wait_for(timeout=60_000)
        b.close()
    msgs = {}
    for raw in sent:
        m = BackMsg()
        m.ParseFromString(raw)
        if m.WhichOneof("type") != "rerun_script":
            continue
        rs = m.rerun_script
        has_mark = any(w.string_value == MARK for w in rs.widget_states.widgets)
        if not rs.fragment_id:
            msgs.setdefault("open", raw)
        elif has_mark:
            msgs.setdefault("submit", raw)
        elif "submit" not in msgs:
            msgs.setdefault("refresh", raw)
    missing = {"open", "submit", "refresh"} - set(msgs)
    if missing:
        raise RuntimeError(f"the recording lacks {missing}")
    return msgs


def personalise(raw: bytes, me0: str, me: str, answer: str | None = None) -> bytes:
    """The recorded message for student ``me`` (and their ``answer`` in place of ``MARK``)."""
    m = BackMsg()
    m.ParseFromString(raw)
    rs = m.rerun_script
    rs.query_string = rs.query_string.replace(me0, me)
    rs.context_info.url = rs.context_info.url.replace(me0, me)
    if answer is not None:
        for w in rs.widget_states.widgets:
            if w.string_value == MARK:
                w.string_value = answer
    return m.SerializeToString()


class Watcher(threading.Thread):
    """Polls the answers table every 20 ms: when each student's row first appeared (perf_counter)."""

    def __init__(self, store, session_id: str):
        super().__init__(daemon=True)
        self.store, self.session_id, self.seen, self.stop = store, session_id, {}, False

    def run(self):
        from classroom.store import answers
        while not self.stop:
            with self.store.reader() as c:
                ids = c.execute(sa.select(answers.c.student_id).where(answers.c.session_id == self.session_id)).scalars()
                now = time.perf_counter()
                for sid in ids:
                    self.seen.setdefault(sid, now)
            time.sleep(0.02)


async def student(url, msgs, me0, me, answer, submit_at, end_at, kill_done, log):
    """One phone: open the page, refresh every 2 s, submit at ``submit_at``; on a dropped connection, reload."""
    import websockets

    ws_url = url.replace("http", "ws", 1) + "/_stcore/stream"
    opened, submit, refresh = (personalise(msgs[k], me0, me, answer if k == "submit" else None)
                               for k in ("open", "submit", "refresh"))
    sent_answer = False
    while True:
        try:
            async with websockets.connect(ws_url, subprotocols=["streamlit"], origin=url, max_size=None,
                                          open_timeout=60, ping_interval=None) as ws:
                upstream = ws.response.headers.get("X-Explorer-Upstream", "?")
                log.setdefault("upstream", upstream)

                async def run(raw):
                    await ws.send(raw)
                    body = b""
                    while True:
                        frame = await asyncio.wait_for(ws.recv(), timeout=60)
                        if isinstance(frame, bytes):
                            if is_finished(frame):
                                return body
                            body += frame
                first = await run(opened)
                if log.get("dropped"):
                    log["reload_upstream"] = upstream
                    log["kept_on_reload"] = f"Your answer: {answer}".encode() in first
                    sent_answer = log["kept_on_reload"]  # not shown: not stored, so the student sends it again
                while time.perf_counter() < end_at:
                    if not sent_answer and time.perf_counter() >= submit_at:
                        log["sent"] = time.perf_counter()
                        log["sent_n"] = log.get("sent_n", 0) + 1
                        await run(submit)
                        log["finished"] = time.perf_counter()
                        sent_answer = True
                        continue
                    nxt = min(2.0, (submit_at - time.perf_counter()) if not sent_answer else 2.0)
                    await asyncio.sleep(max(0.0, nxt))
                    if sent_answer or time.perf_counter() < submit_at:
                        await run(refresh)
                return
        except Exception as exc:  # noqa: BLE001 - a dropped connection: the student reloads the page
            if log.get("dropped"):
                log["error"] = f"{type(exc).__name__}: {exc}"
                return
            log["dropped"] = time.perf_counter()
            log["answered_before_drop"] = sent_answer
            await kill_done.wait()
            await asyncio.sleep(random.uniform(0.5, 2.0))  # the student notices and reloads


async def run_class(url, msgs, me0, ids, window_s, procs, kill_at_s, ports):
    logs = {sid: {} for sid in ids}
    t0 = time.perf_counter() + 3.0  # everyone has opened the page by then
    end_at = t0 + window_s + 8.0
    kill_done = asyncio.Event()
    rng = random.Random(7)
    answers = {sid: f"{rng.uniform(1, 40):.3f}" for sid in ids}
    tasks = [asyncio.create_task(student(url, msgs, me0, sid, answers[sid], t0 + rng.uniform(0, window_s), end_at,
                                         kill_done, logs[sid])) for sid in ids]
    killed = None
    if kill_at_s is not None:
        await asyncio.sleep(max(0.0, t0 + kill_at_s - time.perf_counter()))
        victim = procs[0]
        os.killpg(victim.pid, signal.SIGKILL)
        killed = ports[0]
        kill_done.set()
    await asyncio.gather(*tasks)
    return logs, answers, killed


def pct(xs, q):
    """The q-quantile (0..1) of ``xs`` by nearest rank."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def one(backend: str, students: int, window_s: float, kill: bool) -> dict:
    from classroom import poll
    from classroom.store import open_store, sessions

    work = Path(tempfile.mkdtemp(prefix="bench-poll-"))
    work.chmod(0o755)
    pg = None
    if backend == "postgresql":
        import pgserver
        pg = work / "pg"
        db_url = pgserver.start(pg)
    else:
        db_url = f"sqlite:///{work}/poll.sqlite"
    procs, nginx = [], None
    try:
        store = open_store(db_url)
        procs, nginx, url = start_deployment(db_url, work / "nginx")
        ports = [int(a[a.index("--server.port") + 1]) for a in (p.args for p in procs)]
        o = poll.open_session(store)
        poll.ask(store, o.code, o.teacher_key, {"kind": "predict", "quantity": "tpot", "model": "llama-3-8b",
                                               "gpu": "h100-sxm", "context": 8192, "batch": 32})
        poll.set_state(store, o.code, o.teacher_key, "open")
        me0 = poll.join(store, o.code, "recorder")
        msgs = record(url, o.code, me0)
        ids = [poll.join(store, o.code, f"s{i}") for i in range(students)]
        with store.reader() as c:
            session_id = c.execute(sa.select(sessions.c.id).where(sessions.c.code == o.code)).scalar_one()
        watcher = Watcher(store, session_id)
        watcher.start()
        load0 = os.getloadavg()
        logs, answers, killed = asyncio.run(run_class(url, msgs, me0, ids, window_s, procs,
                                                      window_s / 2 if kill else None, ports))
        time.sleep(0.5)
        watcher.stop = True
        watcher.join()
        load1 = os.getloadavg()
        rows = poll.results(store, o.code, o.teacher_key).answers
        by_student = {}
        with store.reader() as c:
            from classroom.store import answers as atable
            for sid, text in c.execute(sa.select(atable.c.student_id, atable.c.text)
                                       .where(atable.c.session_id == session_id)):
                by_student.setdefault(sid, []).append(text)
        stored_ok = sum(1 for sid in ids if by_student.get(sid) == [answers[sid]])
        lat_count = [watcher.seen[sid] - lg["sent"] for sid, lg in logs.items()
                     if "sent" in lg and sid in watcher.seen and not lg.get("dropped")]
        lat_fin = [lg["finished"] - lg["sent"] for lg in logs.values() if "finished" in lg and not lg.get("dropped")]
        dropped = [lg for lg in logs.values() if lg.get("dropped")]
        return dict(backend=backend, students=students, rows=len([r for r in rows if r.nickname != "recorder"]),
                    stored_ok=stored_ok, dup=sum(len(v) > 1 for v in by_student.values()),
                    p50_count=pct(lat_count, 0.5), p90_count=pct(lat_count, 0.9), p90_fin=pct(lat_fin, 0.9),
                    killed=killed, dropped=len(dropped),
                    dropped_answered=sum(1 for d in dropped if d.get("answered_before_drop")),
                    kept=sum(1 for d in dropped if d.get("answered_before_drop") and d.get("kept_on_reload")),
                    resent=sum(1 for d in dropped if not d.get("answered_before_drop") and d.get("sent")),
                    errors=[lg["error"] for lg in logs.values() if "error" in lg],
                    load=(load0[0], load1[0]))
    finally:
        if nginx is not None:
            nginx.terminate()
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        if pg is not None:
            import pgserver
            pgserver.stop(pg)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--window", type=float, default=10.0, help="seconds over which the students submit")
    ap.add_argument("--no-kill", action="store_true", help="do not kill a Streamlit process mid-poll")
    args = ap.parse_args()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    out = [one(b, args.students, args.window, not args.no_kill) for b in backends]
    print(f"\n{os.cpu_count()} cores; load average (1 min) before -> after each run. {args.students} students submit "
          f"once each within {args.window:g} s and refresh every 2 s"
          + ("." if args.no_kill else f"; one of the 2 Streamlit processes killed at {args.window / 2:g} s."))
    head = ("database", "students", "rows", "own answer once", "duplicates", "p50 to counted", "p90 to counted",
            "p90 to run end", "on killed proc", "had answered", "kept on reload", "sent after reload", "load")
    print(" | ".join(head))
    for r in out:
        print(" | ".join([r["backend"], str(r["students"]), str(r["rows"]), str(r["stored_ok"]), str(r["dup"]),
                          f"{r['p50_count'] * 1e3:.0f} ms", f"{r['p90_count'] * 1e3:.0f} ms",
                          f"{r['p90_fin'] * 1e3:.0f} ms", str(r["dropped"]), str(r["dropped_answered"]),
                          str(r["kept"]), str(r["resent"]), f"{r['load'][0]:.2f} -> {r['load'][1]:.2f}"]))
        if r["errors"]:
            print(f"  errors ({len(r['errors'])}): {r['errors'][:3]}")


if __name__ == "__main__":
    main()
