"""Slider to redrawn, in headless Chromium, for every page against a one-chart Streamlit floor.

For each page the first enabled slider is moved with the arrow keys; the time runs from the key press to
the script-finished message on the page's websocket plus two animation frames (the browser has painted
what the rerun sent). The floor is bench/one_chart_app.py (one slider, three metrics, one bar chart),
served by its own Streamlit process and measured in the same run, alternating with the pages. Also a
cold visit per page: time to the first script-finished plus two frames, and bytes over the wire.

    python bench/browser_speed.py                 # plain `streamlit run`
    python bench/browser_speed.py --class-procs 2  # through nginx (deploy/serve_class.py): gzip, cache
    python bench/browser_speed.py --moves 9 --pages kv_cache,roofline

Figures depend on what else the machine runs; the ratio to the floor is what compares.
"""
from __future__ import annotations

import argparse
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

    def _frame(self, payload) -> None:
        if isinstance(payload, bytes) and ws_load.is_finished(payload):
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
        try:
            self.page.get_by_role("slider").first.wait_for(timeout=15000)
        except Exception:  # noqa: BLE001
            return
        for s in self.page.get_by_role("slider").all():
            for key in ("ArrowRight", "ArrowLeft"):
                n = self.finished
                s.focus()
                self.page.keyboard.press(key)
                try:
                    self.wait(n, 6)
                    self.slider, self.keys = s, [key, "ArrowLeft" if key == "ArrowRight" else "ArrowRight"]
                    self.page.wait_for_timeout(300)
                    return
                except TimeoutError:
                    continue

    def move(self, i: int) -> float:
        """One slider move; seconds from the key press to the rerun painted."""
        n = self.finished
        self.slider.focus()
        t0 = time.perf_counter()
        self.page.keyboard.press(self.keys[i % 2])
        self.wait(n, 60)
        self.page.evaluate(TWO_FRAMES)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--moves", type=int, default=7, help="slider moves per page (median reported)")
    ap.add_argument("--pages", default="", help="comma-separated url paths (default: every page but the live ones)")
    ap.add_argument("--class-procs", type=int, default=0, help="serve the app through nginx with this many processes")
    args = ap.parse_args()
    from app_pages.common import PAGES
    pages = args.pages.split(",") if args.pages else [
        "" if f.endswith("home.py") else Path(f).stem for f, *_ in PAGES if "live" not in Path(f).stem]
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
            rows = []
            for name in pages:
                tab = Tab(browser, f"{app_url}/{name}")
                tab.find_slider()
                if tab.slider is None:
                    print(f"{name or 'home'}: no slider", file=sys.stderr)
                    continue
                tab.move(0)
                tab.move(1)
                page_t, floor_t = [], []
                for i in range(args.moves):  # alternate: both see the same background load
                    page_t.append(tab.move(i))
                    floor_t.append(floor.move(i))
                rows.append((name or "home", statistics.median(page_t), statistics.median(floor_t), tab.cold_s,
                             tab.bytes))
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


if __name__ == "__main__":
    main()
