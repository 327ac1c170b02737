"""Benchmark of the live tab: the default model on this machine, measured against the three predictions.

Prints the machine probe, the calibrated overhead, every point (median, p10-p90, the three
predictions and measured/predicted ratios), the achieved-bandwidth fraction of decode at batch 1,
and the median ratios. Runs the page's default RunSpec in the worker subprocess, as the page does.

    python bench/bench_live.py [--device cuda] [--dtype bf16] [--preset smollm2-135m] [--threads N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from live.predict import PREDICTIONS, headline, ratio_summary  # noqa: E402
from live.spec import DEFAULT_PRESET, RunSpec, default_dtype  # noqa: E402
from live.worker import LiveWorker  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default=None, choices=["fp32", "bf16", "fp16"])
    ap.add_argument("--preset", default=DEFAULT_PRESET)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None, help="timed runs per point (default: the page's)")
    args = ap.parse_args(argv)
    kw = dict(preset_id=args.preset, device=args.device, dtype=args.dtype or default_dtype(args.device),
              threads=args.threads)
    if args.repeats:
        kw["repeats"] = args.repeats
    spec = RunSpec(**kw)
    load_before = os.getloadavg()
    w = LiveWorker()
    t0 = time.perf_counter()
    try:
        state = w.wait(w.submit(spec), timeout_s=1800)
    finally:
        w.stop()
    wall = time.perf_counter() - t0
    if state is None or state.state != "done":
        print("run failed:", None if state is None else state.error)
        return 1
    res = state.result
    pr, cal, table = res["probe"], res["calibration"], res["table"]
    print(f"model {res['model']['label']} ({res['model']['n_params']:,} params, {res['model']['weights']} weights), "
          f"{spec.dtype} on {pr['device_name']}, {pr['threads']} threads, capability {pr['cpu_capability']}")
    print(f"load average before the run (1/5/15 min): {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; "
          f"after: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}")
    print(f"probe: read {pr['read_bytes_per_s'] / 1e9:.1f} GB/s, copy {pr['copy_bytes_per_s'] / 1e9:.1f} GB/s, "
          f"GEMV {pr['gemv_bytes_per_s'] / 1e9:.1f} GB/s, matmul {pr['matmul_flops_per_s'] / 1e9:.1f} GFLOP/s "
          f"({pr['matmul_n']}^2), in {pr['probe_s']:.1f} s; critical batch {res['critical_batch']:.1f}")
    print(f"calibration: c_layer {cal['c_layer_s'] * 1e3:.3f} ms, c_step {cal['c_step_s'] * 1e3:.3f} ms, "
          f"overhead {cal['overhead_s'] * 1e3:.2f} ms per forward; tiny-model steps "
          + ", ".join(f"L={d}: {t * 1e3:.2f} ms" for d, t in sorted(cal["depth_times_s"].items())))
    print()
    cols = ["sweep", "batch", "context_len", "median_s", "p10_s", "p90_s", "pred_machine_s", "pred_calibrated_s",
            "ratio_datasheet", "ratio_machine", "ratio_calibrated", "achieved_bandwidth_pct"]
    with_pd = table[cols].copy()
    for c in ("median_s", "p10_s", "p90_s", "pred_machine_s", "pred_calibrated_s"):
        with_pd[c] = (with_pd[c] * 1e3).round(2)
    with_pd = with_pd.rename(columns={c: c.replace("_s", "_ms") for c in cols if c.endswith("_s")})
    print(with_pd.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print()
    head = headline(table)
    d1 = head["decode_b1"]
    if d1 is not None:
        print(f"decode batch 1 (context {d1['context_len']}): TPOT {d1['median_s'] * 1e3:.1f} ms "
              f"(p10 {d1['p10_s'] * 1e3:.1f}, p90 {d1['p90_s'] * 1e3:.1f}); bytes per step {d1['bytes_moved'] / 1e6:.1f} MB; "
              f"achieved bandwidth {head['bandwidth_pct']:.1f} % of the probed read bandwidth")
        for k, label in PREDICTIONS.items():
            print(f"  measured / {label}: {d1[f'ratio_{k}']:.2f}")
    print("median measured / predicted over all points:")
    for k, label in PREDICTIONS.items():
        print(f"  {label}: {head[f'median_ratio_{k}']:.2f}")
    print(f"points with the calibrated prediction within 15 %: {head['within_15pct'] * 100:.0f} %")
    print("median ratio per sweep:")
    print(ratio_summary(table).to_string(float_format=lambda x: f"{x:.2f}"))
    print(f"\nKV check: {sum(r['verdict'] == 'equal' for r in res['kv_check'])}/{len(res['kv_check'])} points equal to calc")
    print(f"wall time {wall:.1f} s (worker start + load {res['model']['load_s']:.1f} s + probe + calibration "
          f"{cal['calibration_s']:.1f} s + sweeps {res['timings'].get('measure_s', float('nan')):.1f} s)")
    for s in res["skipped"]:
        print("skipped:", s)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
