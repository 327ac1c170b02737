"""Server-side rerun time of every page (AppTest, repeated), printed; not a timed test.

Run: python bench/bench_pages.py [repeats]
For each page: the first run (imports, caches) and the median / p90 of later reruns. The target
for the 2-core machine is a median well under 150 ms.
"""
import logging
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))



from streamlit.testing.v1 import AppTest  # noqa: E402



def main():
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    from ui.nav import PAGES
    print(f"{'page':<28} {'first run ms':>13} {'median ms':>10} {'p90 ms':>8}")
    for path, title, _, _ in PAGES:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        t0 = time.perf_counter()
        at.run()
        if path != "app_pages/home.py":
            at.switch_page(path).run()
        first = time.perf_counter() - t0
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
        if at.exception:
            print(f"{title:<28} raised: {at.exception[0].value}")
            continue
        times.sort()
        p90 = times[int(0.9 * (len(times) - 1))]
        print(f"{title:<28} {first * 1e3:>13.0f} {statistics.median(times) * 1e3:>10.0f} {p90 * 1e3:>8.0f}")


if __name__ == "__main__":
    main()
