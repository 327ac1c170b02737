"""Benchmark of calc.batching and the Batching and memory page; prints figures, asserts nothing.

    python bench/bench_batching.py [--repeats 7]

Prints: the time of one static + continuous simulation (compare_batching) across stream sizes and
arrival rates, with the number of steps simulated and the continuous / static throughput ratio;
the paged and contiguous KV waste of the default stream at each block size; and the median
server-side rerun of the page (AppTest, same inputs, repeated).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import calc  # noqa: E402
from calc.batching import batching_experiment, compare_batching, step_cost_from_model  # noqa: E402
from calc.kv_paging import kv_reservation  # noqa: E402
from calc.request_stream import make_requests  # noqa: E402
from timing import call_times_s  # noqa: E402


def median_ms(fn, repeats: int) -> float:
    return statistics.median(call_times_s(fn, repeats, warmup=False)) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    model, gpu = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    cost = step_cost_from_model(model, gpu, batch_hint=64)
    print(f"Llama-3-8B on H100 SXM, bf16, 64 slots; step cost {cost}")
    print(f"{'requests':>8} {'rate/s':>7} {'steps static':>13} {'steps cont.':>12} {'speedup':>8} {'median ms':>10}")
    for n in (100, 300, 1000):
        for rate in (0.5, 4.0, 16.0, 64.0):
            reqs = make_requests(n, rate, 512, 0.5, 256, 1.0, "lognormal", 4096, seed=0)
            cmp = compare_batching(reqs, 64, cost)
            ms = median_ms(lambda: compare_batching(reqs, 64, cost), args.repeats)
            print(f"{n:>8} {rate:>7.1f} {cmp.static.summary.n_steps:>13,} {cmp.continuous.summary.n_steps:>12,} "
                  f"{cmp.speedup:>7.2f}x {ms:>10.1f}")

    exp = batching_experiment(model, gpu)
    lengths = (exp.requests["prompt_len"] + exp.requests["output_len"]).to_numpy()
    print("\nKV waste of the default stream (200 requests, max length 4,096 tokens):")
    print(f"{'block':>6} {'contiguous':>11} {'paged':>7}")
    for block in (1, 4, 16, 64, 256):
        _, s = kv_reservation(lengths, exp.kv_bytes_per_token, 4096, block)
        print(f"{block:>6} {s.contiguous_waste_fraction:>10.1%} {s.paged_waste_fraction:>6.1%}")

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("app_pages/batching.py").run()
    assert not at.exception, at.exception
    ms = median_ms(at.run, args.repeats)
    print(f"\nPage rerun (AppTest, same inputs, median of {args.repeats}): {ms:.0f} ms")
    at.select_slider(key="bt_rate").set_value(32.0).run()
    print(f"Page rerun back at an arrival rate seen before (cached simulation): "
          f"{median_ms(lambda: at.select_slider(key='bt_rate').set_value(32.0).run(), args.repeats):.0f} ms")
    values = [4.0, 6.0, 8.0, 12.0, 24.0, 48.0, 64.0]
    times = []
    for v in values:
        t0 = time.perf_counter()
        at.select_slider(key="bt_rate").set_value(v).run()
        times.append(time.perf_counter() - t0)
    print(f"Page rerun with a new arrival rate each time (uncached), median: {statistics.median(times) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
