"""Slider to redrawn, in headless Chromium, for every page against a one-chart Streamlit floor.

For each page the first enabled slider is moved with the arrow keys; the time runs from the key press to
the script-finished message on the page's websocket plus two animation frames (the browser has painted
what the rerun sent). The floor is bench/one_chart_app.py (one slider, three metrics, one bar chart),
served by its own Streamlit process and measured in the same run, alternating with the pages. Also a
cold visit per page: time to the first script-finished plus two frames, and bytes over the wire.

    python bench/browser_speed.py                 # plain `streamlit run`
    python bench/browser_speed.py --class-procs 2  # through nginx (deploy/serve_class.py): gzip, cache
    python bench/browser_speed.py --moves 9 --pages kv_cache,roofline
    python bench/browser_speed.py --all-sliders --moves 3   # every slider of each page: median and worst
    python bench/browser_speed.py --attribute --pages roofline   # where a rerun's time goes
    python bench/browser_speed.py --charts both --all-sliders   # in-place charts against st.plotly_chart

``--all-sliders`` moves every enabled slider and select slider of each page (``--moves`` times each,
alternating with the floor) and prints, per page, the median over all of them and the worst slider's
median, each against the floor; ``--sliders-detail`` also prints one line per slider, with the number of
websocket messages its move received (each element the rerun re-sends is one: about 0.3 ms each on the
server and in the browser, bench/element_costs.py).

``--attribute`` moves the first slider a few more times under Chrome's DevTools protocol and splits each
rerun into: server and wire (the rerun request leaving the browser to the script-finished message
arriving, timestamps of the DevTools network domain); browser (the rest of key press to painted); the
websocket bytes the rerun received, by element type (parsed ForwardMsg deltas); and the main thread's CPU
time (the V8 sampling profiler), by the script that ran it: Plotly charts, dataframes (glide grid and
Arrow), markdown and LaTeX (KaTeX), message decoding, React and Streamlit's core, garbage collection,
and the browser's own work outside JavaScript (style, layout, paint). The profiled moves are slower than
the timed ones; the split is what they are for.

Figures depend on what else the machine runs; the ratio to the floor is what compares.
"""
from __future__ import annotations

import argparse
import base64
import collections
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ws_load  # noqa: E402

ROOT = ws_load.ROOT
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))"


def default_pages() -> list[str]:
    """The url paths of every page but the live ones ("" for the home page)."""
    sys.path.insert(0, str(ROOT))
    from ui.nav import PAGES
    return ["" if f.endswith("home.py") else Path(f).stem for f, *_ in PAGES if "live" not in Path(f).stem]


def start_floor() -> tuple[subprocess.Popen, str]:
    """bench/one_chart_app.py on a free port."""
    return ws_load.start_plain("bench/one_chart_app.py")


class Tab:
    """One browser tab on one page, counting script-finished messages and bytes received."""

    def __init__(self, browser, url: str):
        # A fresh context per tab: an empty browser cache, so every page's first visit is a cold one.
        self.page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        self.finished = 0
        self.bytes = 0
        self.kinds: collections.Counter = collections.Counter()  # messages received by kind since the last move
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        cdp = self.page.context.new_cdp_session(self.page)
        cdp.send("Network.enable")
        cdp.on("Network.loadingFinished", lambda e: setattr(self, "bytes", self.bytes + e.get("encodedDataLength", 0)))
        t0 = time.perf_counter()
        self.page.goto(url)
        self.wait(0, 120)
        self.page.evaluate(TWO_FRAMES)
        self.cold_s = time.perf_counter() - t0
        self.slider = None
        self.label = ""
        self.offset: dict[str, int] = {}  # per slider: steps away from where the page opened it (0 or 1)

    def _frame(self, payload) -> None:
        if isinstance(payload, bytes):
            self.kinds[delta_kind(payload)] += 1
            if ws_load.is_finished(payload):
                self.finished += 1

    def wait(self, n: int, timeout_s: float) -> None:
        """Until more than ``n`` runs have finished."""
        end = time.time() + timeout_s
        while self.finished <= n:
            if time.time() > end:
                raise TimeoutError("no script-finished message in time")
            self.page.wait_for_timeout(5)

    def find_slider(self) -> None:
        """The first slider whose move reruns the page (disabled ones do not)."""
        found = self.find_sliders(first_only=True)
        if found:
            self.use(*found[0])
            self.offset[self.label] = 1

    def use(self, slider, keys: list[str], label: str) -> None:
        """Make ``slider`` the one ``move`` moves."""
        self.slider, self.keys, self.label = slider, keys, label

    def find_sliders(self, first_only: bool = False) -> list[tuple[object, list[str], str]]:
        """Every slider and select slider whose move reruns the page, as (locator, [key, back key], label),
        in page order; each is left where it was (moved one step and back)."""
        try:
            self.page.get_by_role("slider").first.wait_for(timeout=15000)
        except Exception:  # noqa: BLE001
            return []
        found = []
        for s in self.page.get_by_role("slider").all():
            if s.get_attribute("aria-disabled") == "true" or s.get_attribute("disabled") is not None:
                continue
            for key in ("ArrowRight", "ArrowLeft"):
                n = self.finished
                s.focus()
                self.page.keyboard.press(key)
                try:
                    self.wait(n, 6)
                except TimeoutError:
                    continue
                back = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
                label = s.get_attribute("aria-label") or s.get_attribute("aria-valuetext") or "slider"
                found.append((s, [key, back], label))
                self.page.wait_for_timeout(300)
                if not first_only:  # back where it was, so that the next slider sees the page as it opened
                    self.use(s, [key, back], label)
                    self.offset[label] = 1
                    self.move()
                    self.page.wait_for_timeout(200)
                break
            if first_only and found:
                break
        return found

    def move(self, i: int = 0) -> float:
        """One slider move, one step away from where it opened or back; seconds from the key press to the
        rerun painted. (``i`` is not used: the direction follows the slider's position.)"""
        n = self.finished
        self.slider.focus()
        away = self.offset.get(self.label, 0)
        self.offset[self.label] = 1 - away
        self.kinds.clear()
        t0 = time.perf_counter()
        self.page.keyboard.press(self.keys[away])
        self.wait(n, 60)
        self.page.evaluate(TWO_FRAMES)
        return time.perf_counter() - t0


# -- attribution ---------------------------------------------------------------------------------------
#: Script chunks of Streamlit's frontend (file name prefixes under static/js) by what they draw.
CHUNKS = [("plotly", ("PlotlyChart", "plotly.min.js")),
          ("dataframe", ("DataFrame", "arrowFormatUtils", "glide", "withFullScreenWrapper")),
          ("markdown/latex", ("katex", "rehype-", "remark-", "StreamlitMarkdown", "micromark", "mdast", "hast")),
          ("messages", ("protobuf",)),
          ("react/core", ("react-dom", "index.", "react.", "scheduler", "emotion", "styled-components"))]


def chunk_kind(url: str) -> str | None:
    """What a script URL of the frontend draws (``CHUNKS``), "other js" for any other script, None for none."""
    if not url:
        return None
    name = url.rsplit("/", 1)[-1]
    for kind, prefixes in CHUNKS:
        if any(name.startswith(p) or p in name for p in prefixes):
            return kind
    return "other js"


#: Seconds of "other js" by script file name, over every profiled move (printed with --attribute).
OTHER_JS: dict[str, float] = collections.defaultdict(float)


def profile_split(profile: dict) -> dict[str, float]:
    """Seconds of main-thread CPU by kind from a V8 CPU profile (``Profiler.stop``'s ``profile``).

    A sample's time goes to the kind of the script its function came from; a built-in without a script
    (JSON.parse, a DOM call that forces layout) to its caller's. "(program)" is the browser's own work
    outside JavaScript (style, layout, paint, input), "(garbage collector)" the collector; idle is left out.
    """
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}
    kinds: dict[int, str] = {}

    def kind(node_id: int) -> str:
        if node_id in kinds:
            return kinds[node_id]
        frame = nodes[node_id]["callFrame"]
        fn = frame.get("functionName", "")
        if fn == "(program)":
            k = "browser (style, layout, paint)"
        elif fn == "(garbage collector)":
            k = "garbage collection"
        elif fn in ("(idle)", "(root)"):
            k = "idle"
        else:
            k = chunk_kind(frame.get("url", "")) or (kind(parent[node_id]) if node_id in parent else "other js")
            if k == "idle":
                k = "other js"
        kinds[node_id] = k
        return k

    components: dict[int, str] = {}

    def component(node_id: int) -> str:
        # The nearest frame (itself or a caller) from a component's own chunk: Streamlit names them after the
        # element (PlotlyChart.*.js, Slider.*.js, Metric*.js, StreamlitMarkdown.*.js, DataFrame.*.js).
        if node_id not in components:
            name = nodes[node_id]["callFrame"].get("url", "").rsplit("/", 1)[-1]
            if name.startswith("plotly.min.js"):  # the in-place chart's own plotly.js
                components[node_id] = "InplaceChart"
            elif name[:1].isupper():
                components[node_id] = name.split(".", 1)[0]
            else:
                components[node_id] = component(parent[node_id]) if node_id in parent else ""
        return components[node_id]

    out: dict[str, float] = collections.defaultdict(float)
    for node_id, dt_us in zip(profile.get("samples", []), profile.get("timeDeltas", [])):
        k = kind(node_id)
        out[k] += dt_us / 1e6
        if k == "other js":
            OTHER_JS[nodes[node_id]["callFrame"].get("url", "").rsplit("/", 1)[-1] or "(no script)"] += dt_us / 1e6
        if k not in ("idle", "browser (style, layout, paint)", "garbage collection"):
            out["component: " + (component(node_id) or "(app core)")] += dt_us / 1e6
    out.pop("idle", None)
    return dict(out)


#: Trace events of the renderer's main thread that are the browser's own work, by what they do.
NATIVE = {"style": ("UpdateLayoutTree", "RecalculateStyles", "ScheduleStyleRecalculation"),
          "layout": ("Layout",),
          "paint": ("Paint", "PrePaint", "Layerize", "UpdateLayer", "UpdateLayerTree", "CompositeLayers", "Commit",
                    "PaintImage", "RasterTask")}


def main_thread_split(trace: list[dict], js: dict[str, float], window_s: float) -> dict[str, float]:
    """Seconds of the renderer main thread's work, by kind, from a DevTools trace.

    The trace (``devtools.timeline``) gives the main thread's busy time (its top-level ``RunTask`` events,
    from the key press for ``window_s``: the timed move)
    and the browser's own style, layout and paint events in it; the rest is JavaScript, split in the
    proportions of the sampling profile ``js`` (``profile_split``: by the script's kind). A style or layout
    that JavaScript forced counts as style or layout.
    """
    names = {(e.get("pid"), e.get("tid")): e["args"]["name"] for e in trace
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    main = {k for k, v in names.items() if v == "CrRendererMain"}
    events = sorted((e for e in trace if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X"),
                    key=lambda e: e["ts"])
    keys = [e["ts"] for e in events if e["name"] == "EventDispatch"
            and (e.get("args", {}).get("data") or {}).get("type") == "keydown"]
    start = keys[0] if keys else (events[0]["ts"] if events else 0)
    end = start + window_s * 1e6
    busy, native, task_end = 0.0, collections.defaultdict(float), -1.0
    depth_of = {n: k for k, names_ in NATIVE.items() for n in names_}
    for e in events:
        if not start <= e["ts"] <= end:
            continue
        if e["name"] == "RunTask":
            if e["ts"] >= task_end:  # top-level tasks only (a task may nest another)
                busy += e.get("dur", 0) / 1e6
                task_end = e["ts"] + e.get("dur", 0)
        elif e["name"] in depth_of:
            native[depth_of[e["name"]]] += e.get("dur", 0) / 1e6
    script = max(busy - sum(native.values()), 0.0)
    js_only = {k: v for k, v in js.items() if not k.startswith(("browser", "component: "))}
    total_js = sum(js_only.values()) or 1.0
    out = {k: script * v / total_js for k, v in js_only.items()}
    out.update({f"browser {k}": v for k, v in native.items()})
    out.update({k: script * v / total_js for k, v in js.items() if k.startswith("component: ")})
    return out


def delta_kind(raw: bytes) -> str:
    """The element type a ForwardMsg carries ("plotly_chart", "markdown", ..., "block", or the message type)."""
    m = ws_load.ForwardMsg()
    m.ParseFromString(raw)
    t = m.WhichOneof("type")
    if t != "delta":
        return t or "unknown"
    d = m.delta
    what = d.WhichOneof("type")
    if what == "new_element":
        return d.new_element.WhichOneof("type") or "element"
    return "block" if what == "add_block" else (what or "delta")


class Attribution:
    """Profiled slider moves on one tab: server and wire time, bytes by element type, CPU by kind."""

    def __init__(self, tab: Tab):
        self.tab = tab
        self.cdp = tab.page.context.new_cdp_session(tab.page)
        self.cdp.send("Network.enable")
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        self.sent: list[float] = []
        self.received: list[tuple[float, bytes]] = []
        self.cdp.on("Network.webSocketFrameSent", lambda e: self.sent.append(e["timestamp"]))
        self.cdp.on("Network.webSocketFrameReceived", self._received)
        self.trace: list[dict] = []
        self.trace_done = False
        self.cdp.on("Tracing.dataCollected", lambda e: self.trace.extend(e["value"]))
        self.cdp.on("Tracing.tracingComplete", lambda e: setattr(self, "trace_done", True))

    def _received(self, e) -> None:
        r = e["response"]
        if r.get("opcode") == 2:
            self.received.append((e["timestamp"], base64.b64decode(r["payloadData"])))

    def move(self, i: int = 0) -> dict:
        """One profiled move: its total, server-and-wire and browser seconds, bytes by type, CPU by kind."""
        self.sent.clear()
        self.received.clear()
        self.trace.clear()
        self.trace_done = False
        self.cdp.send("Tracing.start", {"categories": "devtools.timeline,disabled-by-default-devtools.timeline",
                                        "transferMode": "ReportEvents"})
        self.cdp.send("Profiler.start")
        total = self.tab.move(i)
        profile = self.cdp.send("Profiler.stop")["profile"]
        self.cdp.send("Tracing.end")
        ws_load.wait_until(self.tab.page, lambda: self.trace_done, 30)
        finished = [t for t, raw in self.received if ws_load.is_finished(raw)]
        server = (finished[-1] - self.sent[0]) if finished and self.sent else float("nan")
        nbytes: dict[str, int] = collections.defaultdict(int)
        count: dict[str, int] = collections.defaultdict(int)
        for _, raw in self.received:
            k = delta_kind(raw)
            nbytes[k] += len(raw)
            count[k] += 1
        return {"total": total, "server": server, "browser": total - server, "bytes": dict(nbytes),
                "count": dict(count), "cpu": main_thread_split(self.trace, profile_split(profile), total)}


def print_attribution(name: str, moves: list[dict], floor_ms: float) -> None:
    """One page's attribution: medians over its profiled moves."""
    med = statistics.median
    tot, srv = med(m["total"] for m in moves) * 1e3, med(m["server"] for m in moves) * 1e3
    kinds = sorted({k for m in moves for k in m["cpu"]}, key=lambda k: -med(m["cpu"].get(k, 0) for m in moves))
    comps = {k[len("component: "):]: med(m["cpu"].get(k, 0.0) for m in moves) * 1e3 for k in kinds
             if k.startswith("component: ")}
    cpu = {k: med(m["cpu"].get(k, 0.0) for m in moves) * 1e3 for k in kinds if not k.startswith("component: ")}
    types = sorted({k for m in moves for k in m["bytes"]}, key=lambda k: -med(m["bytes"].get(k, 0) for m in moves))
    if any(m["count"].get("exception") for m in moves):
        print(f"\n{name}: THE PAGE SENT AN EXCEPTION during the profiled moves: its figures are not valid")
    print(f"\n{name}: profiled move {tot:.0f} ms (floor, unprofiled, {floor_ms:.0f} ms): server and wire {srv:.0f} ms, "
          f"browser {tot - srv:.0f} ms; main-thread CPU {sum(cpu.values()):.0f} ms")
    print("  main thread (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in cpu.items() if v >= 0.5))
    print("  JavaScript by the element whose code ran it (ms): " + ", ".join(
        f"{k} {v:.0f}" for k, v in comps.items() if v >= 0.5))
    total_b = med(sum(m["bytes"].values()) for m in moves)
    print(f"  websocket per rerun {total_b / 1e3:.1f} kB: " + ", ".join(
        f"{k} {med(m['bytes'].get(k, 0) for m in moves) / 1e3:.1f} kB x{med(m['count'].get(k, 0) for m in moves):.0f}"
        for k in types if med(m["bytes"].get(k, 0) for m in moves) >= 50))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moves", type=int, default=7, help="slider moves per page (median reported)")
    ap.add_argument("--pages", default="", help="comma-separated url paths (default: every page but the live ones)")
    ap.add_argument("--class-procs", type=int, default=0, help="serve the app through nginx with this many processes")
    ap.add_argument("--all-sliders", action="store_true",
                    help="move every slider of each page; print the median over all and the worst slider's median")
    ap.add_argument("--sliders-detail", action="store_true", help="with --all-sliders: one line per slider too")
    ap.add_argument("--attribute", action="store_true",
                    help="split a rerun: server and wire, browser, bytes by element type, main-thread CPU by kind")
    ap.add_argument("--attribute-moves", type=int, default=5, help="profiled moves per page for --attribute")
    ap.add_argument("--charts", choices=["inplace", "plotly_chart", "both"], default="inplace",
                    help="the app's chart element: in place (ui/inplace_chart.py, the default), "
                         "st.plotly_chart (EXPLORER_CHARTS=plotly_chart), or both, one after the other")
    args = ap.parse_args()
    if args.charts == "both":
        for charts in ("inplace", "plotly_chart"):
            print(f"\n== charts: {charts} ==", flush=True)
            subprocess.run([sys.executable, __file__, *[a for a in sys.argv[1:] if a not in ("both", "--charts")
                                                         and not a.startswith("--charts=")], "--charts", charts], check=True)
        return
    if args.charts == "plotly_chart":
        os.environ["EXPLORER_CHARTS"] = "plotly_chart"  # inherited by the app's server
    else:
        os.environ.pop("EXPLORER_CHARTS", None)
    pages = args.pages.split(",") if args.pages else default_pages()
    app_proc, app_url = ws_load.start_class(args.class_procs) if args.class_procs else ws_load.start_plain()
    floor_proc, floor_url = start_floor()
    from playwright.sync_api import sync_playwright
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=ws_load.CHROMIUM,
                                        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            floor = Tab(browser, floor_url)
            floor.find_slider()
            for _ in range(3):  # warm both servers' caches
                floor.move(_)
            rows, all_rows, attributions, floor_attr = [], [], [], []
            if args.attribute:  # the floor's own split, for reference
                fa = Attribution(floor)
                fa.move()
                floor_attr = [fa.move() for _ in range(args.attribute_moves)]
                fa.cdp.detach()
            for name in pages:
                tab = Tab(browser, f"{app_url}/{name}")
                sliders = tab.find_sliders() if args.all_sliders else []
                tab.find_slider()
                if tab.slider is None:
                    print(f"{name or 'home'}: no slider", file=sys.stderr)
                    continue
                first = (tab.slider, tab.keys, tab.label)
                tab.move(0)
                tab.move(1)
                page_t, floor_t = [], []
                for i in range(args.moves):  # alternate: both see the same background load
                    page_t.append(tab.move(i))
                    floor_t.append(floor.move(i))
                rows.append((name or "home", statistics.median(page_t), statistics.median(floor_t), tab.cold_s,
                             tab.bytes))
                if sliders:
                    per_slider = []
                    for s_loc, keys, label in sliders:
                        tab.use(s_loc, keys, label)
                        tab.move(0)
                        tab.move(1)
                        st_, ft_ = [], []
                        for i in range(args.moves):
                            st_.append(tab.move(i))
                            messages = sum(tab.kinds.values())
                            ft_.append(floor.move(i))
                        per_slider.append((label, st_, ft_, messages))
                    all_rows.append((name or "home", per_slider))
                if args.attribute:
                    tab.use(*first)
                    attr = Attribution(tab)
                    attr.move(0)
                    moves = [attr.move(i) for i in range(args.attribute_moves)]
                    attr.cdp.detach()
                    attributions.append((name or "home", moves, statistics.median(floor_t)))
                tab.page.context.close()
            browser.close()
    finally:
        for proc in (app_proc, floor_proc):
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    setup = f"nginx + {args.class_procs} processes" if args.class_procs else "plain streamlit run"
    print(f"slider to redrawn (key press -> script finished -> 2 animation frames), median of {args.moves}; "
          f"{setup}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'page':<14} {'page ms':>8} {'floor ms':>9} {'ratio':>6} {'cold visit s':>13} {'first visit MB':>15}")
    for name, pt, ft, cold, nbytes in rows:
        print(f"{name:<14} {pt * 1e3:>8.0f} {ft * 1e3:>9.0f} {pt / ft:>6.2f} {cold:>13.2f} {nbytes / 1e6:>15.2f}")
    if all_rows:
        print(f"\nevery slider (each moved {args.moves} times, alternating with the floor): the median over all "
              "moves, and the slowest slider's median, each with the floor's median over the same moves")
        print(f"{'page':<14} {'sliders':>7} {'median ms':>10} {'floor ms':>9} {'ratio':>6} {'worst ms':>9} "
              f"{'its floor':>9} {'ratio':>6}  worst slider")
        for name, per_slider in all_rows:
            pts = [t for _, st_, _, _ in per_slider for t in st_]
            fts = [t for _, _, ft_, _ in per_slider for t in ft_]
            label, wst, wft, _ = max(per_slider, key=lambda r: statistics.median(r[1]) / statistics.median(r[2]))
            med, wmed, wf = statistics.median(pts), statistics.median(wst), statistics.median(wft)
            print(f"{name:<14} {len(per_slider):>7} {med * 1e3:>10.0f} {statistics.median(fts) * 1e3:>9.0f} "
                  f"{med / statistics.median(fts):>6.2f} {wmed * 1e3:>9.0f} {wf * 1e3:>9.0f} {wmed / wf:>6.2f}  {label}")
            if args.sliders_detail:
                for label, st_, ft_, messages in per_slider:
                    print(f"    {label[:40]:<40} {statistics.median(st_) * 1e3:>6.0f} ms, floor "
                          f"{statistics.median(ft_) * 1e3:.0f} ms, ratio {statistics.median(st_) / statistics.median(ft_):.2f}, "
                          f"{messages} messages")
    for name, moves, floor_s in attributions:
        print_attribution(name, moves, floor_s * 1e3)
    if OTHER_JS:
        print("\n\"other js\" by script (all profiled moves, s): " + ", ".join(
            f"{k} {v:.2f}" for k, v in sorted(OTHER_JS.items(), key=lambda kv: -kv[1])[:8]))
    if floor_attr:
        print_attribution("floor (one_chart_app)", floor_attr, statistics.median(m["total"] for m in floor_attr) * 1e3)


if __name__ == "__main__":
    main()
