"""Server-side cost of every page's rerun (AppTest, in this process), printed; not a timed test.

Run:
    python bench/bench_pages.py                      # every page, 15 reruns of each kind
    python bench/bench_pages.py --reruns 30 --save before.json
    python bench/bench_pages.py --against before.json   # the saved figures beside today's
    python bench/bench_pages.py --pages many_gpus,roofline --profile   # where a random move's CPU goes

For each page, in CPU milliseconds of this process (``time.process_time``: user + system time of all its
threads, so other people's work on a shared machine does not inflate it, as wall time would):

- open: a new session's first run of the page, after another session opened it (imports done, and the
  caches hold what the page shows at open: what a student joining a class costs);
- same: a rerun with nothing changed (a cached figure, or a widget moved back to a value seen before);
- random: a rerun after a random enabled slider of the page moved to a random value of its range (the
  class's worst case, as ``bench/ws_load.py``'s default ``random`` mode; seeded, so two runs ask for the
  same values). Median and mean of the reruns.

The heap is frozen first (``gc.freeze``), as the server's entry (asgi.py) does at start; ``--no-freeze``
measures without. Wall milliseconds of the random moves are printed too. The target for the 2-core machine: a random move
well under 50 ms of CPU (60 students each moving every 2-5 s is 12-30 moves a second on two cores).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import logging
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.proto.Slider_pb2 import Slider as SliderProto  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ws_load import random_state  # noqa: E402  (the same random move as the load benchmark's)

INT, FLOAT = SliderProto.DataType.INT, SliderProto.DataType.FLOAT


def movable_sliders(at: AppTest) -> list:
    """The page's enabled sliders and select sliders that rerun the page (as ws_load picks them)."""
    out = []
    for w in list(at.slider) + list(at.select_slider):
        p = w.proto
        if p.disabled or p.ignore_rerun:
            continue
        if p.options or p.data_type in (INT, FLOAT):
            out.append(w)
    return out


def move_random_slider(at: AppTest, rng: random.Random) -> bool:
    """Set a random movable slider of ``at``'s last run to a random value for the next run; False if none."""
    sliders = movable_sliders(at)
    if not sliders:
        return False
    w = rng.choice(sorted(sliders, key=lambda s: s.id))
    state = random_state(w.proto, rng)

    class Moved(type(w)):  # the element reports the chosen state to the next run
        _widget_state = property(lambda self: state)
    w.__class__ = Moved
    return True


#: The profiler the script thread runs under (``--profile``: the random moves only), else None.
PROFILING: list = [None]


def _profile_script_thread() -> None:
    """Make Streamlit's script thread run under ``PROFILING[0]`` when one is set (cProfile sees one thread)."""
    from streamlit.runtime.scriptrunner import script_runner

    plain = script_runner.ScriptRunner._run_script

    def run_script(self, *a, **k):
        prof = PROFILING[0]
        if prof is None:
            return plain(self, *a, **k)
        prof.enable()
        try:
            return plain(self, *a, **k)
        finally:
            prof.disable()
    script_runner.ScriptRunner._run_script = run_script


def _share_script_cache() -> None:
    """One compiled-script cache for every AppTest run, as a server's runtime has one for all sessions.

    AppTest compiles the app and page scripts anew on every run (a new ``ScriptCache`` each time: ~25 ms
    a script with Streamlit's "magic" rewrite), which a server does once; left in, it would be counted
    in every figure here.
    """
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared


def open_page(path: str) -> AppTest:
    """A new session with ``path`` open (run once)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    if path != "app_pages/home.py":
        at.switch_page(path).run()
    return at


def measure(path: str, reruns: int, seed: int, profiler: cProfile.Profile | None = None) -> dict:
    """CPU and wall figures of one page (see the module's docstring); ms."""
    open_page(path)  # a first session: imports and the caches of what the page shows at open
    c0 = time.process_time()
    at = open_page(path)
    open_ms = (time.process_time() - c0) * 1e3
    if at.exception:
        return dict(error=str(at.exception[0].value))
    same = []
    for _ in range(reruns):
        c0 = time.process_time()
        at.run()
        same.append((time.process_time() - c0) * 1e3)
    rng = random.Random(f"{seed}:{path}")
    rand, wall = [], []
    for _ in range(reruns):
        if not move_random_slider(at, rng):
            break
        PROFILING[0] = profiler
        c0, t0 = time.process_time(), time.perf_counter()
        at.run()
        rand.append((time.process_time() - c0) * 1e3)
        wall.append((time.perf_counter() - t0) * 1e3)
        PROFILING[0] = None
        if at.exception:
            return dict(error=f"after a random move: {at.exception[0].value}")
    return dict(open_ms=open_ms, same_ms=statistics.median(same),
                random_ms=statistics.median(rand) if rand else None,
                random_mean_ms=statistics.fmean(rand) if rand else None,
                random_wall_ms=statistics.median(wall) if wall else None)


def _f(v) -> str:
    return f"{v:.0f}" if isinstance(v, (int, float)) else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reruns", type=int, default=15, help="reruns of each kind per page")
    ap.add_argument("--pages", help="comma-separated page file stems (default: every page but live)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", help="write the figures to this JSON file")
    ap.add_argument("--against", help="print a JSON file saved before beside today's figures")
    ap.add_argument("--profile", action="store_true", help="cProfile the random moves; print the top functions")
    ap.add_argument("--no-freeze", action="store_true",
                    help="leave the heap unfrozen (the server, asgi.py, freezes it at start: gc.freeze)")
    args = ap.parse_args()
    if not args.no_freeze:   # as the server does at start (asgi.freeze_startup_heap)
        from asgi import freeze_startup_heap
        freeze_startup_heap()
    for name in ["streamlit"] + [n for n in logging.root.manager.loggerDict if n.startswith("streamlit")]:
        logging.getLogger(name).setLevel(logging.ERROR)
    _share_script_cache()
    if args.profile:
        _profile_script_thread()
    from ui.nav import PAGES

    wanted = set(args.pages.split(",")) if args.pages else None
    before = json.loads(Path(args.against).read_text()) if args.against else {}
    prof = cProfile.Profile() if args.profile else None
    results = {}
    head = f"{'page':<30} {'open':>6} {'same':>6} {'random':>7} {'mean':>6} {'wall':>6}"
    if before:
        head += f" | {'open':>6} {'same':>6} {'random':>7} {'mean':>6}  (before)"
    print("CPU ms per run of this process (wall ms of the random moves)")
    print(head)
    for path, title, _, _ in PAGES:
        stem = Path(path).stem
        if (wanted and stem not in wanted) or (not wanted and stem == "live"):
            continue
        r = results[stem] = measure(path, args.reruns, args.seed, prof)
        if "error" in r:
            print(f"{title:<30} raised: {r['error']}")
            continue
        line = (f"{title:<30} {_f(r['open_ms']):>6} {_f(r['same_ms']):>6} {_f(r['random_ms']):>7} "
                f"{_f(r['random_mean_ms']):>6} {_f(r['random_wall_ms']):>6}")
        b = before.get(stem)
        if b and "error" not in b:
            line += (f" | {_f(b['open_ms']):>6} {_f(b['same_ms']):>6} {_f(b['random_ms']):>7} "
                     f"{_f(b['random_mean_ms']):>6}")
        print(line, flush=True)
    ok = [r for r in results.values() if "error" not in r and r["random_ms"] is not None]
    if ok:
        print(f"{'mean over pages':<30} {_f(statistics.fmean(r['open_ms'] for r in ok)):>6} "
              f"{_f(statistics.fmean(r['same_ms'] for r in ok)):>6} "
              f"{_f(statistics.fmean(r['random_ms'] for r in ok)):>7} "
              f"{_f(statistics.fmean(r['random_mean_ms'] for r in ok)):>6}")
    if args.save:
        Path(args.save).write_text(json.dumps(results, indent=1))
    if prof:
        stats = pstats.Stats(prof).strip_dirs()
        stats.sort_stats("cumulative").print_stats(45)
        stats.sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
