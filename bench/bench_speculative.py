"""Time speculative sampling of 10^6 tokens over probability tables (calc.speculative).

Prints the median wall time of ``speculative_generate`` for a few draft lengths gamma, on the
The inference course, week 11 pair (p = (0.6, 0.4), q = (0.9, 0.1)) and a random 5-symbol pair, plus the time of the
chi-square check. Run: python -m bench.bench_speculative  (or python bench/bench_speculative.py)
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.speculative import chi_square_p_value, speculative_generate  # noqa: E402
from timing import call_times_s  # noqa: E402

N_TOKENS = 1_000_000
REPEATS = 5


def median_s(fn) -> float:
    """Median wall time in seconds of ``REPEATS`` calls after one warm-up call."""
    return statistics.median(call_times_s(fn, REPEATS))


def main() -> None:
    rng = np.random.default_rng(0)
    pairs = {
        "course pair (V=2)": (np.array([0.6, 0.4]), np.array([0.9, 0.1])),
        "random pair (V=5)": (rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))),
    }
    print(f"speculative_generate, {N_TOKENS:,} tokens, median of {REPEATS}")
    for name, (p, q) in pairs.items():
        for gamma in (0, 1, 4, 8):
            for wrong in (False, True):
                t = median_s(lambda: speculative_generate(p, q, N_TOKENS, gamma, np.random.default_rng(1),
                                                          wrong_residual=wrong))
                label = "wrong residual" if wrong else "residual"
                print(f"  {name:18s} gamma={gamma:<2d} {label:14s} {t * 1e3:8.1f} ms")
    p, q = pairs["random pair (V=5)"]
    tokens, _ = speculative_generate(p, q, N_TOKENS, 4, np.random.default_rng(1))
    t = median_s(lambda: chi_square_p_value(tokens, p))
    print(f"chi_square_p_value on {N_TOKENS:,} tokens: {t * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
