"""One live measurement run: load (or reuse) the model, probe the machine, calibrate, sweep, predict.

Runs inside the worker process (``live.worker``); tests call ``LiveSession.run`` directly. Each
sweep point is timed by ``live.measure`` and set beside the three predictions of ``live.predict``.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict

import torch

from calc import kv_cache_bytes

from . import measure
from .models import LoadedModel, build_random, calc_model_for, load_model, tiny_width_config
from .predict import (annotate_points, calibrated_parts, datasheet_for, fit_decode_overhead, fit_overhead,
                      machine_critical_batch, matmul_time_s)
from .probe import ProbeResult, linear_groups, probe_machine, time_linears
from .spec import SWEEP_NAMES, RunSpec

TEXT_PROMPT = "The roofline model says that decoding one token"
#: Largest input row count timed for the matmul calibration (larger ones scale with rows).
MAX_KERNEL_ROWS = 128


def _available_bytes(device: str) -> float:
    """Free memory now: ``torch.cuda.mem_get_info`` on a GPU, MemAvailable from /proc/meminfo on a CPU."""
    if device == "cuda":
        return float(torch.cuda.mem_get_info()[0])
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return math.inf


def _load_average() -> tuple[float, float, float] | None:
    """``os.getloadavg()`` (1, 5, 15 minutes) or None where the platform has none."""
    try:
        return tuple(float(x) for x in os.getloadavg())
    except (AttributeError, OSError):
        return None


def point_memory_bytes(lm: LoadedModel, phase: str, batch: int, seq_len: int) -> float:
    """Rough extra memory a point needs beyond the weights (bytes): the KV cache (calc) plus activations.

    Activations: the attention score matrix of one layer ``B * N * T * S * 4`` bytes (the math
    attention path keeps it in fp32) and a few ``B * T * max(D, F)`` hidden tensors; used only to
    skip points that would exhaust memory, before they run.
    """
    m = lm.calc_model
    elem = 4.0
    kv = kv_cache_bytes(m, seq_len, batch, kv_dtype=lm.dtype)
    t = seq_len if phase == "prefill" else 1
    scores = batch * m.n_heads * t * seq_len * elem
    hidden = 6 * batch * t * max(m.d_model, m.d_ff) * elem
    return kv + scores + hidden


class LiveSession:
    """What the worker keeps warm between runs: the loaded model, probe results and calibrations."""

    def __init__(self, probe_buffer_bytes: int | None = None):
        """``probe_buffer_bytes``: bandwidth buffer of the probe (None: the probe's default, 512 MiB on a CPU)."""
        self.probe_buffer_bytes = probe_buffer_bytes
        self.loaded: LoadedModel | None = None
        self.loaded_key: tuple | None = None
        self.load_s = 0.0
        self.probes: dict[tuple, ProbeResult] = {}
        self.overheads: dict[tuple, dict] = {}
        self.kernels: dict[tuple, list[dict]] = {}

    # -- pieces -------------------------------------------------------------------------------
    def model_for(self, spec: RunSpec) -> tuple[LoadedModel, bool]:
        """The model of ``spec``, loaded now or reused (True when reused). Frees the previous one first."""
        if self.loaded is not None and self.loaded_key == spec.model_key:
            return self.loaded, True
        self.release()
        t0 = time.perf_counter()
        self.loaded = load_model(spec)
        self.loaded_key = spec.model_key
        self.load_s = time.perf_counter() - t0
        return self.loaded, False

    def release(self) -> None:
        """Drop the loaded model and free its memory."""
        self.loaded, self.loaded_key = None, None
        import gc

        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def probe(self, device: str, dtype: str) -> ProbeResult:
        """The machine probe for (device, dtype, threads), measured once per worker."""
        key = (device, dtype, torch.get_num_threads())
        if key not in self.probes:
            self.probes[key] = probe_machine(device, dtype, buffer_bytes=self.probe_buffer_bytes)
        return self.probes[key]

    def calibrate(self, lm: LoadedModel, spec: RunSpec, machine) -> dict:
        """The calibration of the third prediction (``predict.calibrated_parts``), cached per worker.

        1. Matmul kernels (``kernel_groups``): ``F.linear`` timed on the model's own weights at the
           row counts the sweeps need.
        2. Overhead: tiny-width models of depth L and 1 (same architecture and attention shape)
           decode at batch 1 and the run's fixed context; from each step time (the p10 of the steps,
           the statistic decode points are reported by, ``predict.REPORTED_STAT``) their own linear
           layers (timed the same way) and their KV read (calc, probed W) are subtracted, and
           ``t(L) = L * c_layer + c_step`` is fitted (``fit_overhead``). What remains is what the
           kernel term and the KV term do not hold: dispatch, norms, rotary, attention launches.
        """
        t0 = time.perf_counter()
        groups = self.kernel_groups(lm, spec)
        t_kernels = time.perf_counter() - t0
        depth = lm.calc_model.n_layers
        tiny_cfgs = {d: tiny_width_config(lm.hf_config, d) for d in sorted({depth, 1})}
        key = (json.dumps(tiny_cfgs, sort_keys=True, default=str), spec.device, spec.dtype, torch.get_num_threads(),
               spec.decode_context_len)
        extra = self.overhead_points(spec)
        key = key + (extra,)
        if key not in self.overheads:
            t1 = time.perf_counter()
            times, parts = {}, {}
            steps = 8
            decode_overhead, extra_parts = None, []
            for d, cfg in tiny_cfgs.items():
                tiny = build_random(cfg, spec.dtype, spec.device, spec.seed)
                timing, _ = measure.time_decode(tiny, 1, spec.decode_context_len, steps=steps, repeats=3, warmup=1)
                rows = (1,) + tuple(b for b, _ in extra) if d == depth else (1,)
                tiny_groups = time_linears(tiny, rows, repeats=5, warmup=1)
                tiny_model = calc_model_for(cfg, "tiny", tiny)

                def residual(b, ctx, step_s, n_steps):
                    mm = matmul_time_s(tiny_groups, "decode", b, 1)
                    kv = calibrated_parts(tiny_model, machine, "decode", b, ctx + n_steps, spec.dtype)["kv_s"]
                    return step_s - mm - kv, mm, kv

                times[d], mm, kv = residual(1, spec.decode_context_len, timing.p10_s, steps)
                times[d] = max(times[d], 0.0)
                parts[d] = dict(step_s=timing.p10_s, matmul_s=mm, kv_s=kv)
                if d == depth and extra:
                    # per-sequence work that grows with B and B*S, on the same-depth tiny model
                    for b, ctx in extra:
                        t, _ = measure.time_decode(tiny, b, ctx, steps=4, repeats=2, warmup=1)
                        r, mm_b, kv_b = residual(b, ctx, t.p10_s, 4)
                        extra_parts.append(dict(batch=b, context_len=ctx, kv_tokens=ctx + 4, step_s=t.p10_s, matmul_s=mm_b, kv_s=kv_b,
                                                residual_s=r))
                    decode_overhead = fit_decode_overhead(extra_parts, times[d], spec.decode_context_len + steps)
                del tiny
            c_layer, c_step = fit_overhead(times)
            self.overheads[key] = dict(c_layer_s=c_layer, c_step_s=c_step, depth_times_s=times, tiny_parts=parts,
                                       decode_overhead=decode_overhead, decode_overhead_points=extra_parts,
                                       overhead_calibration_s=time.perf_counter() - t1)
        ov = self.overheads[key]
        from .predict import kernel_bandwidth

        kb = kernel_bandwidth(groups, 1)
        return dict(ov, overhead_s=depth * ov["c_layer_s"] + ov["c_step_s"], matmul_groups=groups,
                    kernel_bytes_per_s=kb["bytes_per_s"], kernel_calibration_s=t_kernels,
                    calibration_s=t_kernels + ov["overhead_calibration_s"],
                    method=(f"matmuls: F.linear on the model's own weights at {groups[0]['rows']} rows; overhead: "
                            f"decode steps at batch 1 of tiny-width models (hidden = 2 x heads, the same attention "
                            f"heads) of depth {sorted(ov['depth_times_s'])}, less their own matmuls and KV read"))

    @staticmethod
    def overhead_points(spec: RunSpec) -> tuple[tuple[int, int], ...]:
        """(batch, context) decode points of the sweeps, other than batch 1 at the fixed context, at which
        the same-depth tiny model is also timed (at most 6; batch <= MAX_KERNEL_ROWS, B x S <= 2^17)."""
        pts = {(b, spec.decode_context_len) for b in spec.decode_batches} | {(1, c) for c in spec.decode_contexts}
        pts.discard((1, spec.decode_context_len))
        pts = sorted(p for p in pts if p[0] <= MAX_KERNEL_ROWS and p[0] * p[1] <= (1 << 17))
        return tuple(pts[:6])

    def kernel_groups(self, lm: LoadedModel, spec: RunSpec) -> list[dict]:
        """``probe.time_linears`` on the loaded model, cached per (model shapes, dtype, device, threads, rows).

        Rows: 1, every decode and prefill batch up to ``MAX_KERNEL_ROWS``, and the largest prefill
        row count B*T capped there (above it the prediction scales with rows: compute-bound).
        """
        prefill_rows = [b * spec.prefill_prompt_len for b in spec.prefill_batches] + list(spec.prompt_lens)
        rows = {1} | {b for b in (*spec.decode_batches, *spec.prefill_batches) if b <= MAX_KERNEL_ROWS}
        rows.add(min(max(prefill_rows), MAX_KERNEL_ROWS))
        rows = tuple(sorted(rows))
        shapes = tuple((g["label"], g["count"]) for g in linear_groups(lm.model))
        key = (shapes, spec.device, spec.dtype, torch.get_num_threads(), rows)
        if key not in self.kernels:
            self.kernels[key] = time_linears(lm.model, rows, repeats=3, warmup=1)
        return self.kernels[key]

    # -- the run ------------------------------------------------------------------------------
    def run(self, spec: RunSpec, progress=lambda frac, msg: None, cancelled=lambda: False) -> dict:
        """Measure every sweep point of ``spec`` and return the result dict the page draws.

        Args:
            progress: called as ``progress(fraction_done, message)``.
            cancelled: polled between points; when it returns True the run stops and returns what
                it has, with ``cancelled=True``.

        Returns:
            dict with keys ``model``, ``probe``, ``machine`` (calc Accelerator), ``datasheet``,
            ``calibration``, ``table`` (DataFrame from ``predict.annotate_points``), ``kv_check``,
            ``text``, ``critical_batch``, ``timings``, ``skipped``, ``notes``, ``cancelled``, ``load``
            (``before``/``after``: ``os.getloadavg()`` or None; ``cores``).

        Raises:
            ValueError: the model cannot be loaded (the message says why).
        """
        t_start = time.perf_counter()
        load_before = _load_average()
        if spec.threads:
            torch.set_num_threads(spec.threads)
        n_units = 3 + spec.n_points + 1
        done = 0

        def step(msg):
            nonlocal done
            if cancelled():
                raise measure.Cancelled()
            progress(done / n_units, msg)
            done += 1

        result = dict(cancelled=False, skipped=[], notes=[], kv_check=[], points=[])
        try:
            step("loading the model (random weights are built from the config)")
            lm, reused = self.model_for(spec)
            m = lm.calc_model
            result["model"] = dict(
                label=lm.label, weights=lm.weights, source=lm.source, n_params=m.n_params, n_layers=m.n_layers,
                dtype=lm.dtype, device=lm.device, notes=list(lm.notes), reused=reused, load_s=self.load_s,
                calc_model=m, tokenizer=lm.tokenizer is not None, tokenizer_note=lm.tokenizer_note)
            step(f"probing this machine's bandwidth and {spec.dtype} matmul rate")
            pr = self.probe(spec.device, spec.dtype)
            machine = pr.accelerator()
            datasheet = datasheet_for(pr.datasheet_id)
            result.update(probe=pr.to_dict(), machine=machine, datasheet=datasheet,
                          critical_batch=machine_critical_batch(machine, spec.dtype))
            step("calibrating: the matmul kernels at the model's shapes, then the per-step overhead on "
                 "tiny-width models of the same depth")
            if spec.calibrate:
                cal = self.calibrate(lm, spec, machine)
            else:
                cal = dict(c_layer_s=0.0, c_step_s=0.0, depth_times_s={}, overhead_s=0.0, calibration_s=0.0,
                           matmul_groups=None, kernel_bytes_per_s=None, method="not calibrated")
            result["calibration"] = cal
            t_measure = time.perf_counter()
            plan = ([("prompt_len", "prefill", 1, p) for p in spec.prompt_lens]
                    + [("prefill_batch", "prefill", b, spec.prefill_prompt_len) for b in spec.prefill_batches]
                    + [("decode_batch", "decode", b, spec.decode_context_len) for b in spec.decode_batches]
                    + [("decode_context", "decode", 1, s) for s in spec.decode_contexts])
            for sweep, phase, batch, size in plan:
                what = "prompt" if phase == "prefill" else "context"
                step(f"{SWEEP_NAMES[sweep]}: {phase} at batch {batch}, {what} {size} tokens")
                self._measure_point(lm, spec, sweep, phase, batch, size, result)
            result.setdefault("timings", {})["measure_s"] = time.perf_counter() - t_measure
            step(f"generating {spec.new_tokens} tokens of text")
            result["text"] = self._sample_text(lm, spec)
        except measure.Cancelled:
            result["cancelled"] = True
        finally:
            if "machine" in result:
                cal = result.get("calibration") or dict(c_layer_s=0.0, c_step_s=0.0)
                result["table"] = annotate_points(result["points"], result["model"]["calc_model"], result["machine"],
                                                  spec.dtype, cal["c_layer_s"], cal["c_step_s"], result["datasheet"],
                                                  cal.get("matmul_groups"), cal.get("decode_overhead"))
        result.setdefault("timings", {})["total_s"] = time.perf_counter() - t_start
        result["load"] = dict(before=load_before, after=_load_average(), cores=os.cpu_count())
        progress(1.0, "cancelled" if result["cancelled"] else "done")
        return result

    def _measure_point(self, lm, spec, sweep, phase, batch, size, result) -> None:
        """Time one point; OOM or a point too large for free memory is recorded in ``skipped``."""
        need = point_memory_bytes(lm, phase, batch, size + (spec.decode_steps if phase == "decode" else 0))
        free = _available_bytes(spec.device)
        if need > 0.8 * free:
            result["skipped"].append(f"{phase} at batch {batch}, {size} tokens: needs about {need / 1e9:.1f} GB, "
                                     f"{free / 1e9:.1f} GB free")
            return
        m = lm.calc_model
        t_point = time.perf_counter()
        try:
            if phase == "prefill":
                timing, kv = measure.time_prefill(lm.model, batch, size, spec.repeats, spec.warmup, spec.seed)
                kv_tokens = size
            else:
                timing, kv = measure.time_decode(lm.model, batch, size, spec.decode_steps, spec.repeats, spec.warmup,
                                                 spec.seed)
                kv_tokens = size + spec.decode_steps
        except Exception as e:  # noqa: BLE001 - OOM and friends become a skipped point, not a crash
            if measure.is_oom(e):
                self.release_cuda_cache(spec.device)
                result["skipped"].append(f"{phase} at batch {batch}, {size} tokens: out of memory")
                return
            raise
        calc_kv = kv_cache_bytes(m, kv_tokens, batch, kv_dtype=spec.dtype)
        point = dict(sweep=sweep, phase=phase, batch=batch, seq_len=kv_tokens if phase == "decode" else size,
                     context_len=size, kv_measured_bytes=kv, kv_calc_bytes=calc_kv, **timing.stats(),
                     wall_s=time.perf_counter() - t_point)
        result["points"].append(point)
        result["kv_check"].append(self._kv_row(m, phase, batch, size, kv_tokens, kv, calc_kv, spec.dtype))

    @staticmethod
    def release_cuda_cache(device: str) -> None:
        """Return cached GPU blocks after an out-of-memory error."""
        if device == "cuda":
            torch.cuda.empty_cache()

    @staticmethod
    def _kv_row(m, phase, batch, size, kv_tokens, measured, calc_kv, dtype) -> dict:
        cache = "DynamicCache after prefill" if phase == "prefill" else "StaticCache allocated for decode"
        note = "equal" if measured == calc_kv else "differs"
        if measured != calc_kv and phase == "prefill" and m.sliding_window and kv_tokens >= m.sliding_window:
            # transformers' DynamicSlidingWindowLayer keeps W - 1 tokens: the token being decoded brings
            # its own K and V, so attention still sees W keys; calc counts W (a rolling buffer of W).
            alt = kv_cache_bytes(m.with_changes(sliding_window=m.sliding_window - 1), kv_tokens, batch, kv_dtype=dtype)
            if alt == measured:
                note = "DynamicCache keeps W-1 tokens in sliding layers; calc counts W"
        return dict(phase=phase, cache=cache, batch=batch, tokens=kv_tokens, measured_bytes=measured,
                    calc_bytes=calc_kv, difference_bytes=measured - calc_kv, verdict=note)

    def _sample_text(self, lm: LoadedModel, spec: RunSpec) -> dict:
        """Greedy continuation of a short prompt; decoded only when a local tokenizer exists."""
        dev = next(lm.model.parameters()).device
        if lm.tokenizer is not None:
            ids = lm.tokenizer(TEXT_PROMPT, return_tensors="pt").input_ids.to(dev)
        else:
            ids = measure.random_ids(measure._vocab(lm.model), 1, 8, dev, spec.seed)
        out = measure.generate_ids(lm.model, ids, spec.new_tokens)
        text = lm.tokenizer.decode(out) if lm.tokenizer is not None else None
        prompt = TEXT_PROMPT if lm.tokenizer is not None else None
        why = ("random weights: every next token is the argmax of untrained logits, so the text is gibberish"
               if lm.weights == "random" else "trained weights from the given path")
        return dict(prompt_ids=ids[0].tolist(), output_ids=out, text=text, prompt=prompt, why=why,
                    tokenizer_note=lm.tokenizer_note)


def spec_summary(spec: RunSpec) -> dict:
    """The spec as a plain dict without the pasted config text (for the result and the CSV)."""
    d = asdict(spec)
    d.pop("config_json", None)
    return d
