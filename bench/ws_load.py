"""Load benchmark at the websocket level: simulated students who drag sliders, and the CPU a rerun costs.

Streamlit's browser client talks to the server over one websocket (``/_stcore/stream``): it sends
``BackMsg`` protobufs (``rerun_script`` with the query string, every widget's state and the page) and
receives ``ForwardMsg`` protobufs (deltas, then ``script_finished``). This benchmark first records what a
real headless Chromium sends on every page (Playwright: open the page, press the arrow keys on its first
enabled slider), then replays those exact messages from many websocket clients at once; only the
``context_info.url`` is rewritten to the server under test. A rerun's latency is the time from sending
its ``rerun_script`` to receiving its ``script_finished``.

Two ways a simulated student moves (``--how``):

- ``random`` (the default): after the first visit, each move takes a random enabled slider of the page it
  is on (read from the sliders the server drew, so ranges and steps are the page's own) and sets it to a
  random value of its range; every student joins at the same moment (``--ramp 0``). Nothing one student
  asks for is likely to be in a cache another filled: the class's worst case.
- ``replay``: the recorded moves of one slider back and forth (right, left, right ...), students arriving
  over ``--ramp`` seconds. Caches serve most of it: the class's best case.

Modes (each prints a table; figures depend on what else the machine runs, so the load average is printed):

    python bench/ws_load.py cpu                      # server CPU seconds per rerun, every page
    python bench/ws_load.py load --students 20       # p50/p90/p99, server CPU and memory, plain server
    python bench/ws_load.py load --students 60 --class-procs 2   # behind nginx (deploy/serve_class.py)
    python bench/ws_load.py load --students 60 --class-procs 2 --how replay --ramp 5
    python bench/ws_load.py load --url http://host:port --pids 123,456   # a server you started

``load`` reports memory before the class, at its peak, and after it left (``--settle`` seconds after the last
student closed: Streamlit keeps a closed session for a reconnect for up to two minutes).

Server CPU is read from /proc (user + system time of the server processes and their children).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from deploy.serve_class import free_port, start_streamlit, wait_healthy  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CLK_TCK = os.sysconf("SC_CLK_TCK")


# -- servers ------------------------------------------------------------------------------------------
def start_plain(script: str = "asgi.py") -> tuple[subprocess.Popen, str]:
    """``streamlit run asgi.py`` (the app, as the README runs it; or ``script``) on a free port; returns the
    process and its URL."""
    port = free_port()
    proc = start_streamlit(port, "127.0.0.1", script=script, quiet=True, new_session=True)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, timeout_s=90)
    return proc, url


def start_class(procs: int) -> tuple[subprocess.Popen, str]:
    """``deploy/serve_class.py`` with ``procs`` Streamlit processes behind nginx on a free port."""
    port = free_port()
    first = free_port()   # the Streamlit processes on first, first + 1, ...: all free (another server may run)
    while port in range(first, first + procs) or not all(_port_free(first + i) for i in range(procs)):
        first = free_port()
    proc = subprocess.Popen([sys.executable, "deploy/serve_class.py", "--procs", str(procs), "--port", str(port),
                             "--host", "127.0.0.1", "--first-port", str(first)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, timeout_s=120)
    for _ in range(4 * procs):  # every upstream answers (ip_hash sends us to one; /_stcore/health is cheap)
        wait_healthy(url, timeout_s=90)
    return proc, url


def _port_free(port: int) -> bool:
    import socket
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` so far (processes that ended count as 0)."""
    total = 0.0
    for p in pids:
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            total += (int(f[11]) + int(f[12])) / CLK_TCK
        except (OSError, IndexError, ValueError):
            pass
    return total


def rss_bytes(pids: list[int]) -> int:
    """Resident memory of ``pids`` in bytes (VmRSS)."""
    total = 0
    for p in pids:
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


# -- what a browser sends --------------------------------------------------------------------------------
def capture(url: str, pages: list[str], moves: int = 2) -> dict[str, list[bytes]]:
    """Per page, the BackMsgs a real Chromium sends: the first visit, then ``moves`` slider moves.

    Returns ``{page: [initial, move1, move2, ...]}`` (raw protobuf bytes). The first enabled slider is
    moved right, then left, and so on; a page without a slider gets its initial message only.
    """
    from playwright.sync_api import sync_playwright

    out: dict[str, list[bytes]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        for name in pages:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            sent: list[bytes] = []
            finished = [0]

            def on_ws(ws, sent=sent, finished=finished):
                ws.on("framesent", lambda b: sent.append(b if isinstance(b, bytes) else b.encode()))

                def on_recv(b, finished=finished):
                    if isinstance(b, bytes) and is_finished(b):
                        finished[0] += 1
                ws.on("framereceived", on_recv)
            page.on("websocket", on_ws)
            page.goto(f"{url}/{name}")
            wait_until(page, lambda: finished[0] >= 1, 90)
            try:
                page.get_by_role("slider").first.wait_for(timeout=15000)
            except Exception:  # noqa: BLE001 - a page without a slider
                pass
            page.wait_for_timeout(500)
            sliders = page.get_by_role("slider").all()
            keys = ["ArrowRight", "ArrowLeft"]
            chosen = None
            for slider in sliders:  # the first slider that reruns the page (disabled ones do not)
                for _ in range(2):
                    n = finished[0]
                    slider.focus()
                    page.keyboard.press(keys[0])
                    try:
                        wait_until(page, lambda n=n: finished[0] > n, 6)
                        chosen = slider
                        break
                    except TimeoutError:  # disabled, or at its end: try the other way, then the next
                        keys.reverse()
                if chosen is not None:
                    break
            for i in range(1, moves if chosen is not None else 0):
                page.wait_for_timeout(300)
                n = finished[0]
                chosen.focus()
                page.keyboard.press(keys[i % 2])
                wait_until(page, lambda n=n: finished[0] > n, 60)
            out[name] = [m for m in sent if _is_rerun(m)]
            print(f"  /{name}: {len(out[name])} messages", file=sys.stderr)
            page.close()
        browser.close()
    return out


def wait_until(page, cond, timeout_s: float) -> None:
    """Poll ``cond`` (Playwright's sync API delivers events only while it waits: wait on the page)."""
    end = time.time() + timeout_s
    while not cond():
        if time.time() > end:
            raise TimeoutError(f"the page did not finish its run in time ({page.url})")
        page.wait_for_timeout(50)


def _is_rerun(raw: bytes) -> bool:
    m = BackMsg()
    m.ParseFromString(raw)
    return m.WhichOneof("type") == "rerun_script"


def is_finished(raw: bytes) -> bool:
    """Whether a ForwardMsg is the end of a script run (whole page or fragment)."""
    m = ForwardMsg()
    m.ParseFromString(raw)
    return m.WhichOneof("type") == "script_finished"


def retarget(raw: bytes, url: str) -> bytes:
    """The same BackMsg with ``context_info.url`` pointing at ``url`` (the server under test)."""
    m = BackMsg()
    m.ParseFromString(raw)
    old = m.rerun_script.context_info.url
    if old:
        path = "/" + old.split("/", 3)[3] if old.count("/") >= 3 else "/"
        m.rerun_script.context_info.url = url.rstrip("/") + path
    return m.SerializeToString()


# -- a student ------------------------------------------------------------------------------------------
SLIDER, SELECT_SLIDER = 1, 2          # Slider.type
INT, FLOAT = 0, 1                     # Slider.data_type (dates and times are not moved)


def sliders_in(frames: list[ForwardMsg]) -> dict[str, tuple[object, str]]:
    """The enabled sliders the server drew in ``frames``: ``{widget id: (Slider proto, fragment id)}``."""
    out = {}
    for f in frames:
        if f.WhichOneof("type") != "delta" or f.delta.WhichOneof("type") != "new_element":
            continue
        el = f.delta.new_element
        if el.WhichOneof("type") == "slider" and not el.slider.disabled and not el.slider.ignore_rerun:
            sl = el.slider
            if sl.options or sl.data_type in (INT, FLOAT):
                out[sl.id] = (sl, f.delta.fragment_id)
    return out


def random_state(slider, rng: random.Random):
    """A WidgetState that sets ``slider`` (a Slider proto) to a random value of its range (one or two ends)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    st = WidgetState(id=slider.id)
    n = max(1, len(slider.default))
    if slider.options:
        picks = sorted(rng.randrange(len(slider.options)) for _ in range(n))
        st.string_array_value.data.extend(slider.options[i] for i in picks)
    else:
        steps = max(0, int(round((slider.max - slider.min) / slider.step))) if slider.step > 0 else 0
        vals = sorted(slider.min + slider.step * rng.randint(0, steps) for _ in range(n))
        st.double_array_value.data.extend(round(v) if slider.data_type == INT else v for v in vals)
    return st


def move_message(first: bytes, states: dict, fragment_id: str, page_script_hash: str = "") -> bytes:
    """The rerun a browser sends after a widget moved: ``first``'s page, query and context with ``states``,
    and the page's script hash the server named in its ``navigation`` message (a browser sends it once it knows it; a
    deep link's first message names the page by its URL path only, and a run that asks for a whole-app rerun,
    ``st.rerun(scope="app")``, keeps the page only by its hash)."""
    m = BackMsg()
    m.ParseFromString(first)
    if page_script_hash:
        m.rerun_script.page_script_hash = page_script_hash
    m.rerun_script.widget_states.ClearField("widgets")
    m.rerun_script.widget_states.widgets.extend(states.values())
    m.rerun_script.fragment_id = fragment_id
    return m.SerializeToString()


async def rerun_until_drawn(ws, raw: bytes, sliders: dict, page_hash: list, keep_frames: bool = True) -> float:
    """Send one rerun message on ``ws`` and wait until the page it asked for is drawn; returns the seconds.

    A run that asks for a whole-page rerun (``st.rerun(scope="app")``: Many GPUs' context) ends "early for
    rerun", and the page is drawn when the rerun ends, so that end is waited through. The page's script hash
    from the server's navigation message goes into ``page_hash[0]`` (a browser sends it once it knows it); a
    whole run redraws every slider (fragment ids may change), so ``sliders`` is emptied then, and refilled from
    the run's frames (``keep_frames``: parse them for sliders at all).
    """
    t0 = time.perf_counter()
    await ws.send(raw)
    frames = []
    while True:
        frame = await asyncio.wait_for(ws.recv(), timeout=120)
        if isinstance(frame, bytes):
            f = ForwardMsg()
            f.ParseFromString(frame)
            if f.WhichOneof("type") == "navigation" and f.navigation.page_script_hash:
                page_hash[0] = f.navigation.page_script_hash
            if f.WhichOneof("type") == "script_finished":
                if f.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                if f.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                    sliders.clear()
                sliders.update(sliders_in(frames))
                return time.perf_counter() - t0
            if keep_frames:
                frames.append(f)


async def student(url: str, msgs: list[bytes], moves: int, think_s: tuple[float, float], lat: list[float],
                  errors: list[str], rng: random.Random, how: str = "replay", headers: dict | None = None,
                  first_lat: list[float] | None = None, page: str = "") -> None:
    """One browser tab: open the page, then ``moves`` slider moves with a think time between them.

    ``how``: "replay" sends ``msgs[1:]`` in turn (a recorded slider moved back and forth); "random" moves a
    random slider of the page to a random value each time (see the module's docstring). ``headers``: sent with
    the websocket's opening request (e.g. a Cookie). Appends each move's latency (s) to ``lat``, the first
    visit's to ``first_lat``, and failures to ``errors`` (named with ``page`` and the step that failed: "open",
    "move 3" ...).
    """
    import websockets

    ws_url = url.replace("http", "ws", 1) + "/_stcore/stream"
    step = "connect"
    try:
        async with websockets.connect(ws_url, subprotocols=["streamlit"], origin=url, max_size=None,
                                      open_timeout=60, ping_interval=None, additional_headers=headers) as ws:
            sliders: dict = {}
            page_hash = [""]   # the page's script hash, from the server's navigation message

            async def run(raw: bytes) -> float:
                return await rerun_until_drawn(ws, raw, sliders, page_hash, keep_frames=how == "random")
            step = "open"
            t_first = await run(msgs[0])
            if first_lat is not None:
                first_lat.append(t_first)
            cycle = msgs[1:] or msgs[:1]
            states: dict = {}
            if how == "random" and len(msgs) > 1:   # the browser's widget states as the starting point
                m = BackMsg()
                m.ParseFromString(msgs[1])
                states = {w.id: w for w in m.rerun_script.widget_states.widgets
                          if w.WhichOneof("value") not in ("trigger_value", "string_trigger_value", "json_trigger_value")}
            for i in range(moves):
                await asyncio.sleep(rng.uniform(*think_s))
                step = f"move {i + 1}"
                if how == "random" and sliders:
                    wid = rng.choice(sorted(sliders))
                    slider, fragment = sliders[wid]
                    states[wid] = random_state(slider, rng)
                    lat.append(await run(move_message(msgs[0], states, fragment, page_hash[0])))
                else:
                    lat.append(await run(cycle[i % len(cycle)]))
    except Exception as e:  # noqa: BLE001 - a benchmark counts failures, it does not stop on them
        errors.append(f"/{page} ({step}): {type(e).__name__}: {e}")


def pct(xs: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``xs`` by nearest rank."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


async def _load(url: str, templates: dict[str, list[bytes]], students: int, moves: int,
                think_s: tuple[float, float], ramp_s: float, seed: int, how: str = "replay"):
    rng = random.Random(seed)
    pages = [p for p in templates if len(templates[p]) > 1]
    lat: list[float] = []
    first: list[float] = []
    errors: list[str] = []
    tasks = []
    for i in range(students):
        msgs = [retarget(m, url) for m in templates[pages[i % len(pages)]]]
        tasks.append(asyncio.create_task(student(url, msgs, moves, think_s, lat, errors, random.Random(rng.random()),
                                                 how=how, first_lat=first, page=pages[i % len(pages)])))
        if ramp_s > 0:
            await asyncio.sleep(ramp_s / max(students, 1))
    await asyncio.gather(*tasks)
    return lat, errors, first


def run_load(url: str, pids_root: list[int], templates, students: int, moves: int, think_s, ramp_s: float,
             how: str = "random", settle_s: float = 5.0) -> dict:
    """Run ``students`` simulated students; returns latencies (s), errors, CPU and memory figures.

    ``rss_after`` is read ``settle_s`` seconds after the last student left.
    """
    pids = sorted({q for p in pids_root for q in process_tree(p)})
    rss0 = rss_bytes(pids)
    c0, t0 = cpu_s(pids), time.perf_counter()
    peak = [rss0]
    stop = [False]

    async def sampler():
        while not stop[0]:
            peak[0] = max(peak[0], rss_bytes(pids))
            await asyncio.sleep(0.5)

    async def main():
        s = asyncio.create_task(sampler())
        res = await _load(url, templates, students, moves, think_s, ramp_s, seed=1, how=how)
        stop[0] = True
        await s
        return res
    client0 = time.process_time()
    lat, errors, first = asyncio.run(main())
    wall = time.perf_counter() - t0
    client_cpu = time.process_time() - client0
    cpu = cpu_s(pids) - c0
    time.sleep(settle_s)  # sessions closed: let the server drop them
    return dict(lat=lat, first=first, errors=errors, cpu_s=cpu, wall_s=wall, rss0=rss0, rss_peak=peak[0],
                rss_after=rss_bytes(pids), client_cpu_s=client_cpu)


def run_cpu(url: str, pids_root: list[int], templates, reruns: int) -> list[tuple[str, float, float]]:
    """Per page: server CPU seconds per rerun and median latency, one client, ``reruns`` moves in a row."""
    pids = sorted({q for p in pids_root for q in process_tree(p)})
    out = []
    for page, msgs in templates.items():
        lat: list[float] = []
        errs: list[str] = []
        msgs = [retarget(m, url) for m in msgs]
        asyncio.run(student(url, msgs, 2, (0.2, 0.2), [], errs, random.Random(0)))  # warm the page's caches
        c0 = cpu_s(pids)
        asyncio.run(student(url, msgs, reruns, (0.05, 0.05), lat, errs, random.Random(0)))
        # the initial visit is in the CPU figure too: subtract nothing, count it as one more rerun
        per = (cpu_s(pids) - c0) / (reruns + 1)
        out.append((page, per, statistics.median(lat) if lat else float("nan")))
        if errs:
            print(f"{page}: {errs[0]}", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["cpu", "load"])
    ap.add_argument("--url", help="a running server (default: start one)")
    ap.add_argument("--pids", help="comma-separated server pids, with --url (for CPU and memory)")
    ap.add_argument("--class-procs", type=int, default=0,
                    help="start deploy/serve_class.py with this many processes instead of a plain streamlit run")
    ap.add_argument("--how", choices=["random", "replay"], default="random",
                    help="random: random sliders to random values, all joining at once (default); replay: the "
                         "recorded slider back and forth")
    ap.add_argument("--students", type=int, default=20)
    ap.add_argument("--moves", type=int, default=10, help="slider moves per student")
    ap.add_argument("--think", default="2,5", help="seconds between a student's moves: min,max (uniform)")
    ap.add_argument("--ramp", type=float, default=None,
                    help="seconds over which the students arrive (default: 0 for random, 5 for replay)")
    ap.add_argument("--settle", type=float, default=5.0,
                    help="seconds after the class left before memory is read again")
    ap.add_argument("--reruns", type=int, default=10, help="cpu mode: reruns per page")
    ap.add_argument("--pages", default="", help="comma-separated url paths (default: every page but live)")
    args = ap.parse_args()

    from ui.nav import PAGES
    pages = args.pages.split(",") if args.pages else [
        "" if f.endswith("home.py") else Path(f).stem for f, *_ in PAGES if not f.endswith("live.py")]
    proc = None
    if args.url:
        url, roots = args.url.rstrip("/"), [int(p) for p in args.pids.split(",")] if args.pids else []
    elif args.class_procs:
        proc, url = start_class(args.class_procs)
        roots = [proc.pid]
    else:
        proc, url = start_plain()
        roots = [proc.pid]
    try:
        t0 = time.time()
        templates = capture(url, pages)
        print(f"captured the messages of a real Chromium on {len(templates)} pages in {time.time() - t0:.0f} s "
              f"(load average {os.getloadavg()[0]:.2f})")
        if args.mode == "cpu":
            print(f"{'page':<16} {'CPU s/rerun':>12} {'median latency s':>17}")
            for page, per, med in run_cpu(url, roots, templates, args.reruns):
                print(f"{page or 'home':<16} {per:>12.3f} {med:>17.3f}")
        else:
            lo, hi = (float(x) for x in args.think.split(","))
            ramp = args.ramp if args.ramp is not None else (0.0 if args.how == "random" else 5.0)
            load0 = os.getloadavg()[0]
            r = run_load(url, roots, templates, args.students, args.moves, (lo, hi), ramp, args.how, args.settle)
            lat = r["lat"]
            setup = f"nginx + {args.class_procs} processes" if args.class_procs else ("given server" if args.url
                                                                                    else "plain streamlit run")
            print(f"{setup}, {args.students} students x {args.moves} moves ({args.how}), think {lo:g}-{hi:g} s, "
                  f"arriving over {ramp:g} s, {os.cpu_count()} CPUs")
            print("| students | how | reruns | errors | rerun p50 | p90 | p99 | first visit p90 | server CPU "
                  "| RSS start | peak | after | load avg before/after |")
            print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            first = r["first"]
            print(f"| {args.students} | {args.how} | {len(lat)} | {len(r['errors'])} | {pct(lat, .5):.2f} s | "
                  f"{pct(lat, .9):.2f} s | {pct(lat, .99):.2f} s | {pct(first, .9):.2f} s | "
                  f"{100 * r['cpu_s'] / r['wall_s']:.0f}% of one core | "
                  f"{r['rss0'] / 1e6:.0f} MB | {r['rss_peak'] / 1e6:.0f} MB | {r['rss_after'] / 1e6:.0f} MB | "
                  f"{load0:.2f} / {os.getloadavg()[0]:.2f} |")
            if lat:
                print(f"server CPU per rerun: {r['cpu_s'] / (len(lat) + args.students):.3f} s; this load client "
                      f"used {100 * r['client_cpu_s'] / r['wall_s']:.0f}% of one core on the same machine")
            for e in sorted(set(r["errors"]))[:12]:
                print("error:", e)
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
