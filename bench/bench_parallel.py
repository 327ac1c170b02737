"""Speed of the capacity-plan search (printed figures, not a timed test).

Run: python bench/bench_parallel.py
Prints the median and best time of ``calc.planning.capacity_plan`` over TP in {1, 2, 4, 8}, PP in
{1, 2}, batch 1..512 and the replicas each needs (one vectorised evaluation per layout), for
Llama-3.1-70B and DeepSeek-V3 (which adds EP in {1, 2, 4, 8}) on H100 SXM, and of the "which GPUs"
table. Target: the plan under 50 ms.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import calc  # noqa: E402
from timing import median_ms  # noqa: E402
from calc import layout_choice, planning  # noqa: E402


def main():
    h100 = calc.get_accelerator("h100-sxm")
    traffic = planning.ServingTraffic(requests_per_s=20, peak_to_average=3, input_tokens=2048, output_tokens=256,
                               prefix_hit_rate=0.5)
    for model_id, target in (("llama-3.1-70b", 0.05), ("deepseek-v3", 0.08)):
        model = calc.get_model(model_id)
        h200 = calc.get_accelerator("h200") if model_id == "deepseek-v3" else h100
        plan = planning.capacity_plan(model, h200, traffic, target, 2.0)
        rows = len(planning.plan_grid(model, h200, traffic))
        med, best = median_ms(lambda: planning.capacity_plan(model, h200, traffic, target, 2.0))
        print(f"capacity plan, {model.name} on {h200.name}, {rows:,} (layout, batch) rows: "
              f"median {med:.1f} ms, best {best:.1f} ms (target < 50 ms)")
        print(f"  -> {plan.verdict}")
    model = calc.get_model("llama-3.1-70b")
    med, best = median_ms(lambda: layout_choice.which_gpus(model, 8192), repeat=10)
    print(f"which GPUs, Llama-3.1-70B at 8k, {len(calc.list_accelerators())} accelerators: "
          f"median {med:.1f} ms, best {best:.1f} ms")
    med, best = median_ms(lambda: layout_choice.throughput_frontier(model, h100, 8192), repeat=10)
    print(f"throughput front, TP 1-8 x 64 batches: median {med:.1f} ms, best {best:.1f} ms")


if __name__ == "__main__":
    main()
