"""Faults a class server meets in a lecture, on the README's deployment (deploy/serve_class.py, nginx + N
Streamlit processes): one process killed mid-lecture, and hundreds of idle connections from one client.

    python bench/class_faults.py kill                 # 40 students moving random sliders; one process killed
    python bench/class_faults.py idle --idle 500      # 500 idle websockets from 127.0.0.2, then 20 new students
    python bench/class_faults.py all                  # both, one table each

Students are websocket clients as in bench/ws_load.py's random mode (a random enabled slider of their page to a
random value of its range, think time between moves), each with its own ``explorer_route`` cookie, so nginx
keeps each on one process, as a browser's cookie does.

kill: after ``--kill-after`` seconds one Streamlit process gets SIGKILL. Its students' websockets close; each
reloads at once (a new websocket with the same cookie and the same page, as a browser's reload does) and counts
the seconds from the reload to its page drawn. Reported: the other process's students' errors and latency
before and after the kill, the seconds until the killed one's students were back (worst), and whether and
when the supervisor restarted the process (its port answering /_stcore/health again, a new pid).

idle: ``--idle`` websockets are opened from a second loopback address (127.0.0.2: nginx counts connections
per client address) and left idle; then ``--students`` new students join from 127.0.0.1 and make a few moves.
Reported: how many idle connections nginx accepted and refused (limit_conn), the server's open files, and the
new students' errors and latency.

Each table carries the machine's load average: figures depend on what else the machine runs.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402

from bench.ws_load import move_message, pct, process_tree, random_state, rerun_until_drawn, start_class  # noqa: E402

PAGES = ("", "kv_cache", "roofline", "latency_cost", "quantization", "batching", "speculative", "many_gpus",
         "monthly_bill")


def first_visit(url: str, page: str) -> bytes:
    """The rerun a browser sends when it opens ``url/page`` (no widget state yet)."""
    m = BackMsg()
    m.rerun_script.query_string = ""
    m.rerun_script.page_name = page
    m.rerun_script.context_info.url = f"{url}/{page}"
    return m.SerializeToString()


def upstream_of(url: str, cookie: str) -> str:
    """The upstream (host:port) nginx sends this cookie's requests to (its X-Explorer-Upstream header)."""
    req = urllib.request.Request(url + "/", headers={"Cookie": cookie})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.headers["X-Explorer-Upstream"]


def streamlit_children(pid: int) -> dict[int, int]:
    """``{port: pid}`` of the Streamlit processes under serve_class.py's ``pid``."""
    out = {}
    for p in process_tree(pid):
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in cmd and b"--server.port" in cmd:
            out[int(cmd[cmd.index(b"--server.port") + 1])] = p
    return out


def open_files(pids: list[int]) -> int:
    """Open file descriptors of ``pids`` (from /proc)."""
    n = 0
    for p in pids:
        try:
            n += len(os.listdir(f"/proc/{p}/fd"))
        except OSError:
            pass
    return n


class Student:
    """One browser tab moving random sliders; reloads (a new websocket, same cookie and page) when dropped."""

    def __init__(self, url: str, page: str, cookie: str, rng: random.Random, local_addr=None):
        self.url, self.page, self.cookie, self.rng, self.local_addr = url, page, cookie, rng, local_addr
        self.lat: list[tuple[float, float]] = []   # (time.monotonic() at the move, latency s)
        self.errors: list[str] = []
        self.drops = 0
        self.drop_reasons: list[str] = []          # why each drop happened (the exception)
        self.back_s: list[float] = []              # reload -> page drawn, seconds

    async def run(self, moves: int, think_s: tuple[float, float], deadline: float) -> None:
        import websockets

        reload_at = None
        while moves > 0 and time.monotonic() < deadline:
            try:
                async with websockets.connect(self.url.replace("http", "ws", 1) + "/_stcore/stream",
                                              subprotocols=["streamlit"], origin=self.url, max_size=None,
                                              open_timeout=60, ping_interval=None,
                                              additional_headers={"Cookie": self.cookie},
                                              **({"local_addr": self.local_addr} if self.local_addr else {})) as ws:
                    sliders: dict = {}
                    page_hash = [""]   # the page's script hash, from the server's navigation message
                    first = first_visit(self.url, self.page)

                    async def rerun(raw: bytes) -> float:
                        return await rerun_until_drawn(ws, raw, sliders, page_hash)
                    await rerun(first)
                    if reload_at is not None:
                        self.back_s.append(time.monotonic() - reload_at)
                        reload_at = None
                    states: dict = {}
                    while moves > 0 and time.monotonic() < deadline:
                        await asyncio.sleep(self.rng.uniform(*think_s))
                        if not sliders:
                            break
                        wid = self.rng.choice(sorted(sliders))
                        slider, fragment = sliders[wid]
                        states[wid] = random_state(slider, self.rng)
                        t = time.monotonic()
                        self.lat.append((t, await rerun(move_message(first, states, fragment, page_hash[0]))))
                        moves -= 1
                    return
            except Exception as e:  # noqa: BLE001 - a dropped socket: reload, as a browser tab does
                self.drops += 1
                self.drop_reasons.append(f"/{self.page}: {type(e).__name__}: {e}")
                if self.drops > 3:
                    self.errors.append(f"{type(e).__name__}: {e}")
                    return
                reload_at = time.monotonic() if reload_at is None else reload_at


def kill_mode(args) -> None:
    proc, url = start_class(args.procs)
    try:
        kids = streamlit_children(proc.pid)
        rng = random.Random(1)
        students = [Student(url, PAGES[i % len(PAGES)], f"explorer_route=student{i}", random.Random(rng.random()))
                    for i in range(args.students)]
        on = {s: upstream_of(url, s.cookie).rsplit(":", 1)[1] for s in students}
        victim_port = int(on[students[0]])
        victim = kids[victim_port]
        load0 = os.getloadavg()[0]
        restarted = {}

        async def lecture():
            t0 = time.monotonic()
            deadline = t0 + args.duration
            tasks = [asyncio.create_task(s.run(10 ** 6, (args.think_min, args.think_max), deadline)) for s in students]
            await asyncio.sleep(args.kill_after)
            os.kill(victim, signal.SIGKILL)
            t_kill = time.monotonic()
            while time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                if "s" not in restarted:
                    now = streamlit_children(proc.pid).get(victim_port)
                    if now and now != victim:
                        try:
                            urllib.request.urlopen(f"http://127.0.0.1:{victim_port}/_stcore/health", timeout=1)
                            restarted.update(s=time.monotonic() - t_kill, pid=now)
                        except OSError:
                            pass
            await asyncio.gather(*tasks)
            return t_kill
        t_kill = asyncio.run(lecture())
        load1 = os.getloadavg()[0]
        survivors = [s for s in students if int(on[s]) != victim_port]
        hit = [s for s in students if int(on[s]) == victim_port]

        def lat(group, after):
            return [x for s in group for t, x in s.lat if (t >= t_kill) == after]
        before, after = lat(survivors, False), lat(survivors, True)
        back = [b for s in hit for b in s.back_s]
        print(f"one process killed mid-lecture: nginx + {args.procs} processes, {args.students} students (random "
              f"sliders, think {args.think_min:g}-{args.think_max:g} s), SIGKILL to port {victim_port} after "
              f"{args.kill_after:g} s of {args.duration:g} s")
        print("| students on the other processes | their errors | their p90 before / after the kill "
              "| students on the killed one | dropped and reloaded | back after reload (worst) | their errors "
              "| restarted by the supervisor | load avg before/after |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| {len(survivors)} | {sum(len(s.errors) + s.drops for s in survivors)} | {pct(before, .9):.2f} s / "
              f"{pct(after, .9):.2f} s | {len(hit)} | {sum(1 for s in hit if s.drops)} | "
              f"{max(back) if back else float('nan'):.1f} s | {sum(len(s.errors) for s in hit)} | "
              + (f"yes, answering {restarted['s']:.1f} s after the kill (new pid)" if restarted else "no")
              + f" | {load0:.2f} / {load1:.2f} |")
        for e in sorted({e for s in students for e in s.errors})[:5]:
            print("error:", e)
        for e in sorted({e for s in survivors for e in s.drop_reasons})[:5]:
            print("survivor dropped:", e)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def idle_mode(args) -> None:
    import websockets

    proc, url = start_class(args.procs)
    try:
        pids = process_tree(proc.pid)
        fds0 = open_files(pids)
        load0 = os.getloadavg()[0]

        async def scenario():
            ws_url = url.replace("http", "ws", 1) + "/_stcore/stream"

            async def idle_one():
                try:
                    return await websockets.connect(ws_url, subprotocols=["streamlit"], origin=url, max_size=None,
                                                    open_timeout=60, ping_interval=None,
                                                    local_addr=("127.0.0.2", 0))
                except Exception as e:  # noqa: BLE001 - counted: refused (429) or failed
                    return e
            idle = []
            for i in range(0, args.idle, 50):   # in batches, as fast as a script opens them
                idle += await asyncio.gather(*[idle_one() for _ in range(min(50, args.idle - i))])
            opened = [w for w in idle if not isinstance(w, Exception)]
            refused = [w for w in idle if isinstance(w, Exception)]
            await asyncio.sleep(2)
            fds = open_files(process_tree(proc.pid))
            rng = random.Random(2)
            students = [Student(url, PAGES[i % len(PAGES)], f"explorer_route=new{i}", random.Random(rng.random()))
                        for i in range(args.students)]
            deadline = time.monotonic() + 120
            await asyncio.gather(*[s.run(args.moves, (1.0, 2.0), deadline) for s in students])
            for w in opened:
                await w.close()
            return opened, refused, fds, students
        opened, refused, fds, students = asyncio.run(scenario())
        lat = [x for s in students for _, x in s.lat]
        reasons = sorted({str(e)[:80] for e in refused})[:3]
        print(f"{args.idle} idle websockets from one client (127.0.0.2), then {args.students} new students from "
              f"127.0.0.1 (random sliders, {args.moves} moves): nginx + {args.procs} processes")
        print("| idle accepted | idle refused | server open files before / with them | new students | their errors "
              "| their moves | p50 | p90 | load avg before/after |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| {len(opened)} | {len(refused)} | {fds0} / {fds} | {len(students)} | "
              f"{sum(len(s.errors) + s.drops for s in students)} | {len(lat)} | {pct(lat, .5):.2f} s | "
              f"{pct(lat, .9):.2f} s | {load0:.2f} / {os.getloadavg()[0]:.2f} |")
        for r in reasons:
            print("refused:", r)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["kill", "idle", "all"])
    ap.add_argument("--procs", type=int, default=2, help="Streamlit processes behind nginx")
    ap.add_argument("--students", type=int, default=None, help="kill: 40; idle: 20 new students")
    ap.add_argument("--duration", type=float, default=45.0, help="kill: seconds of lecture")
    ap.add_argument("--kill-after", type=float, default=15.0, help="kill: seconds before the SIGKILL")
    ap.add_argument("--think-min", type=float, default=1.0)
    ap.add_argument("--think-max", type=float, default=3.0)
    ap.add_argument("--idle", type=int, default=500, help="idle: websockets from one client")
    ap.add_argument("--moves", type=int, default=3, help="idle: moves per new student")
    args = ap.parse_args()
    if args.mode in ("kill", "all"):
        kill_mode(argparse.Namespace(**{**vars(args), "students": args.students or 40}))
    if args.mode in ("idle", "all"):
        idle_mode(argparse.Namespace(**{**vars(args), "students": args.students or 20}))


if __name__ == "__main__":
    main()
