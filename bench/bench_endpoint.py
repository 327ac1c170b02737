"""How closely the endpoint client (live.endpoint) sees a server's real timings, and a sweep of a real server.

1. Against the scripted server of the tests (tests/fake_openai.py, a child process that records when it
   read each request and wrote each chunk): the client's TTFT, ITL and TPOT minus the server's own, per
   concurrency level (medians, ms), and the sweep's wall time.
2. With ``--transformers-serve``: a sweep of `transformers serve` on a tiny random-weight Llama built
   here (as tests/test_endpoint_transformers_serve.py does), printed as the CLI's JSON levels.

Run: python bench/bench_endpoint.py [--levels 1,4,16] [--requests 32] [--transformers-serve] [--json]
Figures depend on the machine's load (a shared 2-core box delays both ends); the load average is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_openai import FakeOpenAI  # noqa: E402
from live.endpoint_spec import EndpointSpec  # noqa: E402
from live.endpoint import levels_json, measure  # noqa: E402


def client_error(levels: list[int], requests: int, ttft_s: float, gap_s: float, out_tokens: int) -> dict:
    """Client minus server medians (ms) of TTFT, ITL and TPOT per level against the scripted server."""
    rows = []
    t0 = time.perf_counter()
    with FakeOpenAI(ttft_s=ttft_s, gap_s=gap_s) as srv:
        spec = EndpointSpec(base_url=srv.base_url, model="fake", prompt_tokens=128, output_tokens=out_tokens,
                            concurrency=tuple(levels), requests_per_level=requests, warmup_requests=1)
        run = measure(spec)
        recs = [r for r in srv.requests if r["body"].get("stream")][1:]  # no warm-up
    wall = time.perf_counter() - t0
    for i, lv in enumerate(run.levels):
        level_recs = recs[i * requests:(i + 1) * requests]
        s_ttft = np.median([(r["sent_s"][0] - r["received_s"]) * 1e3 for r in level_recs])
        s_itl = np.median([g * 1e3 for r in level_recs for g in np.diff(r["sent_s"])])
        s_tpot = np.median([(r["sent_s"][-1] - r["sent_s"][0]) * 1e3 / (out_tokens - 1) for r in level_recs])
        rows.append(dict(concurrency=lv["concurrency"], ttft_ms=round(lv["ttft_ms_p50"], 2),
                         ttft_minus_server_ms=round(lv["ttft_ms_p50"] - s_ttft, 2),
                         itl_minus_server_ms=round(lv["itl_ms_p50"] - s_itl, 3),
                         tpot_minus_server_ms=round(lv["tpot_ms_p50"] - s_tpot, 3),
                         requests_ok=lv["requests_ok"]))
    return {"scripted_ttft_ms": ttft_s * 1e3, "scripted_gap_ms": gap_s * 1e3, "levels": rows, "wall_s": round(wall, 2)}


def transformers_serve_sweep(levels: list[int], requests: int) -> dict:
    """A sweep of `transformers serve` (CPU, fp32) on a tiny random-weight Llama; the CLI's JSON."""
    import socket
    import subprocess
    import urllib.request

    from test_endpoint_transformers_serve import build_tiny_model

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model"
        build_tiny_model(path)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        t0 = time.perf_counter()
        proc = subprocess.Popen(["transformers", "serve", str(path), "--host", "127.0.0.1", "--port", str(port),
                                 "--device", "cpu", "--dtype", "float32"],
                                env=dict(os.environ, HF_HUB_OFFLINE="1"), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                    break
                except OSError:
                    time.sleep(0.5)
            start_s = time.perf_counter() - t0
            spec = EndpointSpec(base_url=f"http://127.0.0.1:{port}", model=str(path), prompt_tokens=64,
                                output_tokens=16, concurrency=tuple(levels), requests_per_level=requests)
            out = levels_json(measure(spec))
        finally:
            proc.terminate()
            proc.wait(30)
    out["server_start_s"] = round(start_s, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--transformers-serve", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",")]
    result = {"load_average_before": os.getloadavg()[0],
              "scripted": client_error(levels, a.requests, 0.05, 0.01, 32)}
    if a.transformers_serve:
        result["transformers_serve"] = transformers_serve_sweep(levels[:2], min(a.requests, 4))
    result["load_average_after"] = os.getloadavg()[0]
    if a.json:
        print(json.dumps(result, indent=1))
        return
    print(f"load average {result['load_average_before']:.2f} before, {result['load_average_after']:.2f} after")
    sc = result["scripted"]
    print(f"scripted server: TTFT {sc['scripted_ttft_ms']:g} ms, gap {sc['scripted_gap_ms']:g} ms; "
          f"sweep wall {sc['wall_s']} s")
    print(f"{'conc.':>5} {'TTFT p50':>9} {'TTFT-srv':>9} {'ITL-srv':>8} {'TPOT-srv':>9}  (client minus server, ms)")
    for r in sc["levels"]:
        print(f"{r['concurrency']:>5} {r['ttft_ms']:>9.2f} {r['ttft_minus_server_ms']:>9.2f} "
              f"{r['itl_minus_server_ms']:>8.3f} {r['tpot_minus_server_ms']:>9.3f}")
    if "transformers_serve" in result:
        ts = result["transformers_serve"]
        print(f"transformers serve (tiny random Llama, CPU): started in {ts['server_start_s']} s")
        for lv in ts["levels"]:
            print(f"  concurrency {lv['concurrency']}: TTFT p50 {lv['ttft_ms_p50']} ms, TPOT p50 {lv['tpot_ms_p50']} ms, "
                  f"{lv['output_tokens_per_s']:.1f} tok/s, {lv['requests_ok']} ok / {lv['requests_failed']} failed")


if __name__ == "__main__":
    main()
