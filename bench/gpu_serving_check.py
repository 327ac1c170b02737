"""Measured against predicted on a GPU: the live tab's sweep and a `transformers serve` endpoint at several
concurrencies.

Part A runs ``bench/bench_live.py`` (the live tab's run in its worker process; its quick classroom sweeps unless
``--live-full``) on the GPU in bf16 and keeps its JSON summary: the calibrated prediction's share of points within
15%, its median measured / predicted ratio per sweep, and lower-bound violations.

Part B builds a real architecture (a preset's config.json, Llama-3.2-1B by default) with random weights and a
word-level tokenizer (tests/test_endpoint_transformers_serve.py's ``save_word_tokenizer``: nothing is downloaded),
serves it with `transformers serve` on the GPU, measures it with the endpoint client (``live.endpoint.measure``:
fixed prompt and output lengths, closed loop of C clients) and sets each level beside
``live.endpoint_predict.predict_levels``: the roofline bound (``pred_*``) and the serving model's estimate with its
range (``est_*``) for that machine. `transformers serve` is none of the engines the serving model has parameters
for, so the estimate takes the generic engine (the fitted engines' median costs), both with CUDA graphs
(``predict_levels``) and without (``serving_estimate(cuda_graphs=False)``, the table's columns). Three server modes
(``--modes``): one request at a time (the default), ``--continuous-batching`` (paged attention, its own scheduler),
and the same with ``--cb-use-cuda-graph``.

The model's ``lm_head`` rows beyond the tokenizer's words and the end-of-text row are zeroed, so greedy decoding picks
a word (a random logit above 0) and runs to ``max_tokens``. The word-level tokenizer keeps the untied output head
the full vocabulary wide, so the model is the architecture with untied embeddings; calc's model is read from the
same config (``live.model_builder.calc_model_for``), so the bound and the estimate count what runs.

Run: python bench/gpu_serving_check.py [--quick] [--preset llama-3.2-1b] [--out DIR] [--skip-live]
[--modes plain,cb,cb-graphs]
``--quick``: CPU, fp32, a 2-layer shrink of the config, short lengths (a check that the script works, minutes on 2
cores). Writes gpu_check.json in ``--out`` (default: the current folder) and prints a table; times in ms.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
# the endpoint client contacts only the hosts its operator allows: here the server this script starts
os.environ.setdefault("LLM_EXPLORER_ENDPOINT_ALLOW", "127.0.0.1")

from test_endpoint_transformers_serve import save_word_tokenizer, stop_server  # noqa: E402


#: The server modes' short names (``--modes``).
MODE_IDS = {"one request at a time": "plain", "continuous batching": "cb",
            "continuous batching, CUDA graphs": "cb-graphs"}


def build_served_model(config: dict, out: Path, dtype: str) -> dict:
    """Save ``config`` with random weights (``dtype``) and a whitespace word-level tokenizer to ``out``; returns the
    config as saved (untied embeddings)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    vocab = save_word_tokenizer(out)
    cfg = dict(config, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
    cfg.pop("quantization_config", None)
    hf = AutoConfig.for_model(cfg["model_type"], **{k: v for k, v in cfg.items() if k != "model_type"})
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(hf, dtype={"bf16": torch.bfloat16, "fp32": torch.float32}[dtype])
    with torch.no_grad():
        model.lm_head.weight[len(vocab):].zero_()
        model.lm_head.weight[2].zero_()
    model.save_pretrained(out)
    return cfg


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_and_measure(path: Path, device: str, dtype: str, extra: list[str], levels: list[int], prompt: int,
                      output: int, log) -> dict:
    """Start `transformers serve` on ``path`` with ``extra`` flags, measure ``levels``, stop it."""
    from live.endpoint import levels_json, measure
    from live.endpoint_spec import EndpointSpec

    port = free_port()
    exe = Path(sys.executable).with_name("transformers")
    head = [str(exe)] if exe.exists() else [sys.executable, "-m", "transformers.cli.transformers"]
    cmd = head + ["serve", str(path), "--host", "127.0.0.1", "--port", str(port), "--device", device,
                  "--dtype", {"bf16": "bfloat16", "fp32": "float32"}[dtype], *extra]
    log(" ".join(cmd))
    errf = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, env=dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"),
                            stdout=subprocess.DEVNULL, stderr=errf, text=True)
    t0 = time.perf_counter()
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - t0 > 180:
                    errf.seek(0)
                    raise RuntimeError("transformers serve did not start: " + errf.read()[-3000:])
                time.sleep(0.5)
        start_s = time.perf_counter() - t0
        spec = EndpointSpec(base_url=f"http://127.0.0.1:{port}", model=str(path), prompt_tokens=prompt,
                            output_tokens=output, concurrency=tuple(levels),
                            requests_per_level=requests_per_level(levels), warmup_requests=2,
                            first_byte_timeout_s=120, stall_timeout_s=120)
        # requests per level: the spec has one count for every level; 2 x the largest level keeps the largest full
        run = measure(spec)
        out = levels_json(run)
        out["server_start_s"] = round(start_s, 1)
        if run.error:
            out["error"] = str(run.error)
        return out
    finally:
        stop_server(proc, 30)
        errf.seek(0)
        tail = errf.read()[-1500:]
        if tail.strip():
            log("server stderr (tail): " + tail.replace("\n", " | ")[-800:])


def requests_per_level(levels: list[int]) -> int:
    """The requests the check sends at each concurrency level: 2 x the largest level (at least 4), which keeps the
    largest level full for two rounds."""
    return max(4, 2 * max(levels))


def predictions(config: dict, label: str, accelerator: str, levels: list[int], prompt: int, output: int,
                dtype: str) -> dict:
    """The bound and the serving model's estimate (generic engine, with and without CUDA graphs) for each level, as
    records; ``dtype`` ("bf16" or "fp32") is the weights' and the cache's."""
    from calc import get_accelerator
    from live.endpoint_predict import level_rounds, predict_levels
    from live.model_builder import calc_model_for

    model = calc_model_for(config, label)
    acc = get_accelerator(accelerator)
    wd = dtype
    # the endpoint page's prediction (the generic engine, with CUDA graphs), as the JSON's "generic" entry
    # each level sends the same count of requests as the measurement does (``requests_per_level``), so each
    # prediction takes that level's rounds (requests / concurrency), the first a burst
    sent = {c: requests_per_level(levels) for c in levels}
    pred = predict_levels(model, acc, levels, prompt, output, wd, wd, engine="generic", lengths="fixed",
                          requests=sent)
    out = {"generic": {"rows": pred.to_dict(orient="records"), "notices": list(pred.attrs.get("notices") or [])}}
    # the same estimate without CUDA graphs (transformers serve launches eagerly) from serving_estimate itself
    from calc.serving import serving_estimate
    rows = []
    for c in levels:
        e = serving_estimate(model, acc, prompt, output, concurrency=c, weight_dtype=wd, kv_dtype=wd, engine="generic",
                             cuda_graphs=False, lengths="fixed", rounds=level_rounds(sent, c))
        rows.append({"concurrency": c, "ttft_ms": e.ttft.estimate_s * 1e3, "ttft_ms_low": e.ttft.low_s * 1e3,
                     "ttft_ms_high": e.ttft.high_s * 1e3, "tpot_ms": e.tpot.estimate_s * 1e3,
                     "tpot_ms_low": e.tpot.low_s * 1e3, "tpot_ms_high": e.tpot.high_s * 1e3,
                     "bound_tpot_ms": e.tpot.bound_s * 1e3, "tpot_fixed_ms": e.tpot.fixed_s * 1e3,
                     "output_tokens_per_s": e.output_tokens_per_s, "notices": list(e.notices)})
    out["eager"] = {"rows": rows}
    out["model"] = {"name": model.name, "n_params": model.n_params, "n_layers": model.n_layers}
    return out


def part_a(args, log) -> dict:
    """bench/bench_live.py on the device, its JSON summary line."""
    cmd = [sys.executable, str(ROOT / "bench" / "bench_live.py"), "--device", args.device, "--json",
           "--preset", args.live_preset]
    if args.device == "cuda":
        cmd += ["--dtype", "bf16"]
    if not args.live_full:
        cmd += ["--quick"]
    log(" ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.live_timeout_s)
    log(p.stdout[-6000:])
    if p.returncode:
        log(p.stderr[-3000:])
    lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
    return {"returncode": p.returncode, "summary": json.loads(lines[-1]) if lines else None,
            "stdout_tail": p.stdout[-4000:]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--preset", default="llama-3.2-1b")
    ap.add_argument("--live-preset", default="llama-3.2-1b")
    ap.add_argument("--accelerator", default="h200")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--skip-live", action="store_true")
    ap.add_argument("--modes", default="plain,cb,cb-graphs",
                    help="server modes, comma-separated: plain (one request at a time), cb (--continuous-batching), "
                         "cb-graphs (--continuous-batching --cb-use-cuda-graph)")
    ap.add_argument("--live-full", action="store_true", help="the live page's full sweeps (default: its quick run)")
    ap.add_argument("--live-timeout-s", type=int, default=240)
    args = ap.parse_args()
    args.device = "cpu" if args.quick else "cuda"
    dtype = "fp32" if args.quick else "bf16"
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    result: dict = {}
    logf = open(out_dir / "gpu_check_log.txt", "a", encoding="utf-8")

    def log(msg: str) -> None:
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    def save() -> None:
        (out_dir / "gpu_check.json").write_text(json.dumps(result, indent=1, default=str))

    import torch
    import transformers
    result["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                          "cuda_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    log(json.dumps(result["versions"]))
    t_start = time.perf_counter()

    if not args.skip_live:
        try:
            result["live"] = part_a(args, log)
        except Exception:  # noqa: BLE001 - a failing part leaves the other's results
            result["live"] = {"error": traceback.format_exc()}
            log(result["live"]["error"])
        save()

    from live.run_spec import preset_hf_config

    config = preset_hf_config(args.preset)
    prompt, output = (256, 64) if not args.quick else (16, 8)
    if args.quick:
        config = dict(config, num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16)
    cb_levels = [1, 8, 32] if not args.quick else [1, 4]
    modes = {"one request at a time": ([], [1, 4]),
             "continuous batching": (["--continuous-batching"], cb_levels),
             "continuous batching, CUDA graphs": (["--continuous-batching", "--cb-use-cuda-graph"], cb_levels)}
    modes = {k: v for k, v in modes.items() if MODE_IDS[k] in args.modes.split(",")}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model"
        try:
            saved = build_served_model(config, path, dtype)
            result["served_config"] = {k: saved[k] for k in ("model_type", "hidden_size", "num_hidden_layers",
                                                             "vocab_size") if k in saved}
        except Exception:  # noqa: BLE001
            result["serve_error"] = traceback.format_exc()
            log(result["serve_error"])
            save()
            return
        for mode, (extra, levels) in modes.items():
            if time.perf_counter() - t_start > (400 if not args.quick else 600):
                log(f"skipped {mode}: out of time")
                continue
            entry: dict = {"levels_asked": levels, "prompt_tokens": prompt, "output_tokens": output}
            try:
                entry["predicted"] = predictions(saved, args.preset, args.accelerator if not args.quick else "h200",
                                                 levels, prompt, output, dtype)
            except Exception:  # noqa: BLE001
                entry["predicted_error"] = traceback.format_exc()
                log(entry["predicted_error"])
            try:
                entry["measured"] = serve_and_measure(path, args.device, dtype, extra, levels, prompt, output, log)
            except Exception:  # noqa: BLE001
                entry["measured_error"] = traceback.format_exc()
                log(entry["measured_error"])
            result.setdefault("serve", {})[mode] = entry
            save()
            report(mode, entry, log)
    result["wall_s"] = round(time.perf_counter() - t_start, 1)
    save()
    log(f"wall {result['wall_s']} s")


def report(mode: str, entry: dict, log) -> None:
    """One line per level: measured TTFT / TPOT p50 and tok/s beside the bound and the eager estimate (range)."""
    meas = {lv["concurrency"]: lv for lv in (entry.get("measured") or {}).get("levels", [])}
    est = {r["concurrency"]: r for r in ((entry.get("predicted") or {}).get("eager") or {}).get("rows", [])}
    log(f"== transformers serve, {mode} ({entry['prompt_tokens']} in, {entry['output_tokens']} out) ==")
    log(f"{'C':>3} {'TTFT meas':>10} {'TTFT est (range)':>24} {'TPOT meas':>10} {'TPOT est (range)':>22} "
        f"{'TPOT bound':>10} {'tok/s meas':>10} {'tok/s est':>9}")
    for c in entry["levels_asked"]:
        m, e = meas.get(c, {}), est.get(c, {})

        def f(x, w=10):
            return f"{x:>{w}.2f}" if isinstance(x, (int, float)) else f"{'-':>{w}}"
        rng = (f"{e.get('ttft_ms', float('nan')):.1f} ({e.get('ttft_ms_low', float('nan')):.1f}-"
               f"{e.get('ttft_ms_high', float('nan')):.1f})") if e else "-"
        trng = (f"{e.get('tpot_ms', float('nan')):.2f} ({e.get('tpot_ms_low', float('nan')):.2f}-"
                f"{e.get('tpot_ms_high', float('nan')):.2f})") if e else "-"
        log(f"{c:>3} {f(m.get('ttft_ms_p50'))} {rng:>24} {f(m.get('tpot_ms_p50'))} {trng:>22} "
            f"{f(e.get('bound_tpot_ms'))} {f(m.get('output_tokens_per_s'))} {f(e.get('output_tokens_per_s'), 9)}")


if __name__ == "__main__":
    main()
