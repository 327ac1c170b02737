"""Print the monthly-bill figures of the three experiments of chapter 9 (LLM inference) and how long the sweeps take.

Run: python bench/bench_bill.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc import get_accelerator, get_model  # noqa: E402
from calc.api_tiers import default_tiers
from calc.bill import SelfHostedSetup
from calc.bill_compare import bill_vs_dau, bill_vs_hit_rate, compare_tiers
from calc.product_traffic import TrafficScenario
from timing import call_times_s  # noqa: E402


def _median_s(fn, repeat: int = 20) -> float:
    times = call_times_s(fn, repeat, warmup=False)
    return sorted(times)[len(times) // 2]


def main() -> None:
    acc = get_accelerator("h100-sxm")
    setup = SelfHostedSetup(get_model("llama-3-8b"), acc, acc.price_per_hour_usd or 3.99)
    tiers = default_tiers()
    experiments = {"defaults": TrafficScenario(), "cache hit 0%": TrafficScenario(cache_hit_rate=0.0),
                   "cache hit 95%": TrafficScenario(cache_hit_rate=0.95),
                   "remix 1/10": TrafficScenario(remix_share=0.1)}
    for label, s in experiments.items():
        t = compare_tiers(s, tiers, setup)
        cells = ", ".join(f"{r.name} ${r.total_usd:,.0f}" for r in t.itertuples())
        print(f"{label:>14}: {cells}")
    s = TrafficScenario()
    print(f"compare_tiers     median {_median_s(lambda: compare_tiers(s, tiers, setup)) * 1e3:.2f} ms")
    print(f"bill_vs_dau (801) median {_median_s(lambda: bill_vs_dau(s, tiers, setup)) * 1e3:.2f} ms")
    print(f"bill_vs_hit (101) median {_median_s(lambda: bill_vs_hit_rate(s, tiers, setup)) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
