"""Speed of the calculation core (printed figures, not a timed test).

Run: python bench/bench_calc.py
Prints the median time of (1) a Pareto sweep B = 1 .. memory ceiling for one model and GPU,
(2) the table of every preset on every accelerator (vectorised), (3) the same sweep and table done
point by point with the scalar functions, for comparison with the vectorised ones, (4) the full
napkin DataFrame (the CLI's) for every pair, (5) a 256-point serving-model frontier beside the
lower-bound sweep of the same batches. Target: (1), (2) and (5) well under 10 ms on a 2-core machine.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import calc  # noqa: E402
from timing import median_ms  # noqa: E402
from bench_serving import frontier_timings  # noqa: E402


def main():
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    n = calc.max_batch(m, a, 8192)
    models = [calc.get_model(x) for x in calc.list_models()]
    gpus = [calc.get_accelerator(x) for x in calc.list_accelerators()]

    def sweep():
        calc.pareto_front(m, a, 8192, 3.0)

    def scalar_sweep():
        for b in range(1, n + 1):
            calc.cost_per_million(calc.decode_step_time(m, a, b, 8192).tokens_per_s, 3.0)

    def every_pair():
        for mm in models:
            for g in gpus:
                calc.decode_step_time(mm, g, 1, 8192)
                calc.max_batch(mm, g, 8192)
                calc.kv_cache_bytes(mm, 8192)

    def every_napkin_table():
        for mm in models:
            for g in gpus:
                calc.napkin_table(mm, g, 8192, 1, price_per_hour_usd=3.0)

    def preset_table():
        calc.napkin.preset_table(8192, 1)

    rows = [
        (f"Pareto sweep B = 1..{n} (vectorised, DataFrame)", sweep),
        (f"same sweep, scalar function in a loop ({n} points)", scalar_sweep),
        (f"preset table (vectorised), {len(models)} presets x {len(gpus)} accelerators", preset_table),
        (f"same numbers, scalar functions in a loop, {len(models)} x {len(gpus)}", every_pair),
        (f"napkin table (DataFrame), {len(models)} presets x {len(gpus)} accelerators", every_napkin_table),
    ] + frontier_timings()
    print(f"{'benchmark':<72} {'median ms':>10} {'min ms':>8}")
    for label, fn in rows:
        med, best = median_ms(fn, repeat=10 if "napkin" in label else 30)
        print(f"{label:<72} {med:>10.2f} {best:>8.2f}")


if __name__ == "__main__":
    main()
