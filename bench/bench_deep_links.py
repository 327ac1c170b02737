"""The slowest deep link per page: server time to open it and to rerun it, and the bytes it sends; printed.

Run: python bench/bench_deep_links.py [links_per_page] [seed]
For every page: a few hand-picked worst cases (the smallest preset in int4 at the shortest context on
the largest GPU, where a batch ceiling runs into the millions; the largest models; fp32 on the
smallest GPU) and ``links_per_page`` random links from the same seeded generator as the fuzz test
(valid and extreme values of the page's own URL keys). Each link is opened in a fresh AppTest
session (imports and reference tables already warm) and rerun once; "sent" is the serialized size
of every element the run produced (Plotly specs and table data included), about what goes to the
browser. The issue's target: every page's worst rerun under 1 s on 2 cores.
"""
import logging
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

import calc  # noqa: E402
from ui.nav import PAGES

SIDEBARS = [
    {"model": "smollm2-135m", "gpu": "b200", "wq": "int4", "kvq": "int4"},
    {"model": "smollm2-135m", "gpu": "mi300x", "wq": "int4", "kvq": "int4"},
    {"model": "llama-3.1-405b", "gpu": "l4", "wq": "fp32", "kvq": "fp32"},
    {"model": "deepseek-v3", "gpu": "h200", "wq": "int4", "kvq": "fp8"},
]
EXTREMES = ["1", "2", "128", "131072", "1000000", "4096", "0"]


def page_keys(path: str) -> list[str]:
    """The URL-bound widget keys of one page file."""
    text = (ROOT / path).read_text()
    return sorted(set(re.findall(r'key="([a-z][a-z0-9_]*)"', text)))


def sent_bytes(at: AppTest) -> int:
    """Serialized size of every element of the run (a proxy for what the browser receives)."""
    total, stack = 0, [at._tree]
    while stack:
        node = stack.pop()
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ByteSize"):
            total += proto.ByteSize()
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    return total


def time_link(path: str, query: dict[str, str]) -> tuple[float, float, float, float, int, bool]:
    """(open wall s, open CPU s, rerun wall s, rerun CPU s, bytes sent, raised); CPU = this process's, all threads."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(path)
    t0, c0 = time.perf_counter(), time.process_time()
    at.run()
    opened, open_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    at.run()
    rerun, cpu = time.perf_counter() - t0, time.process_time() - c0
    return opened, open_cpu, rerun, cpu, sent_bytes(at), bool(at.exception)


def links(path: str, n_random: int, rng: random.Random) -> list[dict[str, str]]:
    out = [dict(s) for s in SIDEBARS]
    keys = [k for k in page_keys(path) if k not in ("model", "gpu", "wq", "kvq", "price")]
    for s in SIDEBARS[:2]:  # each page key at an extreme, with the tiny-model sidebar
        for k in keys:
            out.append(dict(s, **{k: rng.choice(EXTREMES)}))
    for _ in range(n_random):
        q = dict(rng.choice(SIDEBARS))
        for k in rng.sample(keys, min(len(keys), rng.randint(1, 4))):
            q[k] = rng.choice(EXTREMES)
        out.append(q)
    return out


def _quiet() -> None:
    for name in [n for n in logging.root.manager.loggerDict if n.startswith("streamlit")] + ["streamlit"]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def main():
    _quiet()
    n_random = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 14)
    time_link("app_pages/home.py", {})  # imports and reference tables
    _quiet()  # loggers Streamlit created during the first run
    print(f"{'page':<26} {'links':>5} {'open s':>7} {'CPU s':>6} {'rerun s':>8} {'CPU s':>6} {'sent kB':>8}  "
          "slowest link (by the open's CPU)")
    for path, title, _, _ in PAGES:
        if path == "app_pages/live.py":  # no measurement starts without a click; its page run is cheap
            candidates = [{"lv_src": "config.json", "lv_cfg": "{}"}, {}]
        else:
            candidates = links(path, n_random, rng)
        worst = None
        for q in candidates:
            opened, open_cpu, rerun, cpu, sent, failed = time_link(path, q)
            if worst is None or open_cpu > worst[1]:
                worst = (opened, open_cpu, rerun, cpu, sent, q, failed)
        opened, open_cpu, rerun, cpu, sent, q, failed = worst
        link = "&".join(f"{k}={v}" for k, v in q.items())
        print(f"{title[:26]:<26} {len(candidates):>5} {opened:>7.2f} {open_cpu:>6.2f} {rerun:>8.2f} {cpu:>6.2f} "
              f"{sent / 1e3:>8.0f}  "
              f"/{Path(path).stem}?{link}" + ("  (raised)" if failed else ""), flush=True)
    print("open: a fresh session's first run of the link (uncached unless an earlier link computed the same); "
          "rerun: the same session again. Wall seconds, and this process's CPU seconds, which other work on the "
          "cores inflates less. A page's first open also pays its module imports.")


if __name__ == "__main__":
    main()
