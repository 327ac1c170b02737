"""Slider to redrawn on the same pages served from two versions of the app, side by side in one run.

A change meant to make a page faster is measured against the commit before it: the base revision is
checked out in a temporary git worktree, both versions are served by their own `streamlit run`, and one
Chromium moves the same slider on each page, alternating between the two (``--rounds`` rounds of two moves
each), so that the machine's load falls on both alike. Printed per page: both medians and their ratio.

    python bench/ab_speed.py                                # working tree against HEAD, every page
    python bench/ab_speed.py --base HEAD~3 --pages quantization,roofline --rounds 12
    python bench/ab_speed.py --head-env EXPLORER_TABLES=dataframe   # the same tree with a switch thrown

Timing as in bench/browser_speed.py (key press to the script-finished message plus two animation frames).
A ratio within about 0.05 of 1 is noise on the 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_speed as bs  # noqa: E402
import ws_load  # noqa: E402

ROOT = ws_load.ROOT


def start(script: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """``streamlit run <script>`` (absolute: the app of a worktree) with ``env`` added; process and URL."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return ws_load.start_plain(str(script))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="HEAD", help="git revision to compare against (default HEAD)")
    ap.add_argument("--pages", default="", help="comma-separated url paths (default: every page but the live ones)")
    ap.add_argument("--rounds", type=int, default=8, help="rounds of two moves per version and page")
    ap.add_argument("--head-env", action="append", default=[], metavar="KEY=VALUE",
                    help="environment for the working tree's server only (repeatable)")
    args = ap.parse_args()
    pages = args.pages.split(",") if args.pages else bs.default_pages()
    head_env = dict(kv.split("=", 1) for kv in args.head_env)
    procs = []
    with tempfile.TemporaryDirectory(prefix="ab-base-") as tmp:
        base_tree = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base_tree), args.base],
                       check=True)
        try:
            from playwright.sync_api import sync_playwright
            servers = {"base": start(base_tree / "app.py", {}), "head": start(ROOT / "app.py", head_env)}
            procs = [p for p, _ in servers.values()]
            print(f"base {args.base} against the working tree{' with ' + ' '.join(args.head_env) if head_env else ''}; "
                  f"{2 * args.rounds} moves each; load average {os.getloadavg()[0]:.2f}")
            print(f"{'page':<14} {'slider':<32} {'base ms':>8} {'head ms':>8} {'head/base':>10}")
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=ws_load.CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                for page in pages:
                    tabs = {}
                    for name, (_, url) in servers.items():
                        tab = bs.Tab(browser, f"{url}/{page}")
                        tab.find_slider()
                        if tab.slider is None:
                            break
                        tab.move()
                        tab.move()
                        tabs[name] = tab
                    if len(tabs) < 2:
                        print(f"{page:<14} no slider")
                        continue
                    times = {n: [] for n in tabs}
                    for _ in range(args.rounds):
                        for n, tab in tabs.items():
                            times[n] += [tab.move() * 1e3 for _ in range(2)]
                    b, h = statistics.median(times["base"]), statistics.median(times["head"])
                    print(f"{page:<14} {tabs['head'].label[:32]:<32} {b:8.0f} {h:8.0f} {h / b:10.2f}", flush=True)
                    for tab in tabs.values():
                        tab.page.context.close()
                browser.close()
        finally:
            for proc in procs:
                os.killpg(proc.pid, signal.SIGTERM)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)], check=False)


if __name__ == "__main__":
    main()
