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
from .model_builder import LoadedModel, build_random, calc_model_for, load_model, tiny_width_config
from .overhead_fit import fit_overhead
from .predict import annotate_points, reported_time_s, calibrated_parts, datasheet_for, machine_critical_batch
from .probe import (ProbeResult, fastest_threads, model_pass_timer, probe_machine, reference_kernel, stub_matmuls,
                    thread_candidates, time_linears)
from .robust import (check_overhead_terms, fit_decode_overhead_checked, fit_prefill_overhead_checked,
                     measure_interleaved, prefill_term_ranges_s, raise_bound, sweep_checks, term_ranges_s,
                     validate_kernel_rows)
from .run_spec import SWEEP_NAMES, RunSpec

TEXT_PROMPT = "The roofline model says that decoding one token"
#: Input rows of the matmul pass that chooses the thread count: at 1 row the matrix-vector kernels run on one
#: thread whatever the setting (they cannot tell a busy core); at 16 rows the matmuls split over every thread.
#: Measured on 2 cores (SmolLM2-135M, fp32): quiet, 2 threads 58 ms against 1 thread 83 ms; with a busy loop on
#: one core, 2 threads 150 ms against 1 thread 82 ms (at 1 row: 33 ms either way, busy or not).
THREAD_ROWS = 16
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


class _ProbeOnlyDone(Exception):
    """Ends a probe-only run after its probe."""


class LiveSession:
    """What the worker keeps warm between runs: the loaded model. The probe and the calibration are taken
    afresh for every run (a few seconds), so they describe the machine as loaded now."""

    def __init__(self, probe_buffer_bytes: int | None = None):
        """``probe_buffer_bytes``: bandwidth buffer of the probe (None: the probe's default, 512 MiB on a CPU)."""
        self.probe_buffer_bytes = probe_buffer_bytes
        self.loaded: LoadedModel | None = None
        self.loaded_key: tuple | None = None
        self.load_s = 0.0

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

    def probe(self, device: str, dtype: str, buffer_bytes: int | None = None) -> dict:
        """A fresh machine probe (``probe_machine``) with the wall-clock time it was taken and the load
        average before and after it: a dict of ``ProbeResult`` fields plus ``taken_at`` (``time.time()``),
        ``load_before``, ``load_after``."""
        load_before = _load_average()
        pr = probe_machine(device, dtype, buffer_bytes=buffer_bytes or self.probe_buffer_bytes)
        return dict(pr.to_dict(), taken_at=time.time(), load_before=load_before, load_after=_load_average())

    def calibrate(self, lm: LoadedModel, spec: RunSpec, machine, progress=lambda msg: None, reference=None) -> dict:
        """The calibration of the third prediction (``predict.calibrated_parts``), taken afresh for the run.

        1. Matmul kernels (``kernel_groups``): ``F.linear`` timed on the model's own weights at the
           row counts the sweeps need, the row counts interleaved, the fastest pass kept; row counts
           that break the physical checks are timed again, then rejected (``robust.validate_kernel_rows``).
        2. Overhead: the model itself with its matmuls taken out (``probe.stub_matmuls``: every linear
           layer and MoE block returns zeros of its shape) is timed at the sweep's own decode points (batch
           1 at the fixed context, ``overhead_points``) and prefill points (``prefill_overhead_points``),
           interleaved with the reference kernel between them; the p10 of its steps (the statistic points
           are reported by, ``predict.REPORTED_STAT``) less the KV read (decode) or the KV write and the
           attention FLOPs (prefill) at the probed W and P is what the kernel term and the KV term do not
           hold: dispatch, norms, rotary, activations and residual adds at the model's real width, attention
           beyond its bytes and FLOPs, cache updates. Decode: the batch-1 figure is the overhead per forward,
           split into ``L * c_layer + c_step`` with a 1-layer tiny-width model's (not in a quick run: all
           per layer); the batch and context terms are fitted (``fit_decode_overhead``). Prefill:
           ``c + per_token * B*T + per_pair * B*T^2`` (``predict.fit_prefill_overhead``). Every fit is checked on the points it left out and every term
           is held to its physical range, relative to the probed roofline (``live.robust``).
        """
        reference = reference or reference_kernel(spec.device)
        t0 = time.perf_counter()
        progress("the matmul kernels at the model's own shapes")
        groups, kernel_notes = self.kernel_groups(lm, spec)
        t_kernels = time.perf_counter() - t0
        m = lm.calc_model
        depth = m.n_layers
        extra = self.overhead_points(spec)
        pre = self.prefill_overhead_points(spec)
        t1 = time.perf_counter()
        notes = list(kernel_notes)
        steps, ctx = 8, spec.decode_context_len
        keys = [("decode", 1, ctx)] + [("decode", b, c) for b, c in extra] + [("prefill", b, t) for b, t in pre]

        def once(k, r, model=lm.model, what="the model with its matmuls taken out"):
            phase, b, n = k
            progress(f"overhead, {what}: {phase} at batch {b}, {'context' if phase == 'decode' else 'prompt'} "
                     f"{n} tokens")
            warm = 1 if r == 0 else 0
            if phase == "decode":
                t, _ = measure.time_decode(model, b, n, steps=steps if k == keys[0] else 4, repeats=1, warmup=warm)
            else:
                t, _ = measure.time_prefill(model, b, n, repeats=1, warmup=warm)
            return t.samples_s

        with stub_matmuls(lm.model):
            timed = measure_interleaved(keys, once, reference, rounds=3, extra_rounds=1)
        ref_pt = timed.get(keys[0])
        if ref_pt is None:
            raise ValueError("the overhead calibration did not run at batch 1; see the server log")

        def kv_read_s(model, b, n_tokens):
            return calibrated_parts(model, machine, "decode", b, n_tokens, spec.dtype)["kv_s"]

        kv1 = kv_read_s(m, 1, ctx + steps)
        times = {depth: max(ref_pt["p10_s"] - kv1, 0.0)}
        parts = {depth: dict(step_s=ref_pt["p10_s"], matmul_s=0.0, kv_s=kv1)}
        # per-sequence work that grows with B and B*S
        extra_parts = []
        for b, c in extra:
            tp = timed.get(("decode", b, c))
            if tp is not None:
                kv_b = kv_read_s(m, b, c + 4)
                extra_parts.append(dict(batch=b, context_len=c, kv_tokens=c + 4, step_s=tp["p10_s"], matmul_s=0.0,
                                        kv_s=kv_b, residual_s=tp["p10_s"] - kv_b))
        decode_overhead = None
        if extra_parts:
            decode_overhead, fit_notes = fit_decode_overhead_checked(extra_parts, times[depth], ctx + steps,
                                                                     ranges=term_ranges_s(m, machine, spec.dtype))
            notes += fit_notes
        prefill_parts = []
        for b, t in pre:
            tp = timed.get(("prefill", b, t))
            if tp is not None:
                cp = calibrated_parts(m, machine, "prefill", b, t, spec.dtype)
                prefill_parts.append(dict(batch=b, prompt_len=t, step_s=tp["p10_s"], kv_s=cp["kv_s"],
                                          attention_s=cp["attention_s"],
                                          residual_s=tp["p10_s"] - cp["kv_s"] - cp["attention_s"]))
        prefill_overhead, fit_notes = fit_prefill_overhead_checked(prefill_parts,
                                                                   ranges=prefill_term_ranges_s(m, machine, spec.dtype))
        notes += fit_notes
        try:
            cfg = tiny_width_config(lm.hf_config, 1) if depth > 1 and not spec.quick else None
        except (KeyError, TypeError, ValueError) as e:
            cfg = None
            notes.append(f"no 1-layer tiny model of this config ({e!r}): the overhead is counted per layer")
        if spec.quick and depth > 1:
            notes.append("quick run: the overhead is counted per layer (no 1-layer model to split off the per-step part; "
                         "the prediction is the same, the split is what the full run adds)")
        if cfg is not None:
            # the split into per layer and per step: a 1-layer tiny-width model (same attention shape), timed alike
            tiny = build_random(cfg, spec.dtype, spec.device, spec.seed)
            with stub_matmuls(tiny):
                t_one = measure_interleaved([("decode", 1, ctx)], lambda k, r: once(k, r, tiny, "a 1-layer tiny model"),
                                            reference, rounds=3, extra_rounds=1)
            if ("decode", 1, ctx) in t_one:
                kv_t = kv_read_s(calc_model_for(cfg, "tiny", tiny), 1, ctx + steps)
                step1 = t_one[("decode", 1, ctx)]["p10_s"]
                times[1] = max(step1 - kv_t, 0.0)
                parts[1] = dict(step_s=step1, matmul_s=0.0, kv_s=kv_t)
            del tiny
        c_layer, c_step = fit_overhead(times)
        terms, term_notes = check_overhead_terms(dict(c_layer_s=c_layer, c_step_s=c_step))
        notes += term_notes
        c_layer, c_step = terms["c_layer_s"], terms["c_step_s"]
        from .predict import kernel_bandwidth

        kb = kernel_bandwidth(groups, 1)
        return dict(c_layer_s=c_layer, c_step_s=c_step, depth_times_s=times, tiny_parts=parts,
                    decode_overhead=decode_overhead, decode_overhead_points=extra_parts,
                    prefill_overhead=prefill_overhead, prefill_overhead_points=prefill_parts,
                    overhead_calibration_s=time.perf_counter() - t1, overhead_s=depth * c_layer + c_step,
                    matmul_groups=groups, kernel_bytes_per_s=kb["bytes_per_s"], kernel_calibration_s=t_kernels,
                    calibration_s=time.perf_counter() - t0, taken_at=time.time(), notes=notes,
                    method=(f"matmuls: F.linear on the model's own weights at {groups[0]['rows']} rows; overhead: "
                            f"the model with its matmuls taken out at the sweep's decode and prefill points, less "
                            f"its KV traffic and attention FLOPs at the probed W and P"))

    @staticmethod
    def prefill_overhead_points(spec: RunSpec) -> tuple[tuple[int, int], ...]:
        """(batch, prompt) prefill points of the sweeps at which the model with its matmuls taken out is timed:
        B x T <= 4096, at most 6 (4 in a quick run), spread from the smallest to the largest B x T."""
        pts = {(1, t) for t in spec.prompt_lens} | {(b, spec.prefill_prompt_len) for b in spec.prefill_batches}
        pts = sorted((p for p in pts if p[0] * p[1] <= 4096), key=lambda p: (p[0] * p[1], p))
        cap = 4 if spec.quick else 6
        if len(pts) > cap:
            idx = sorted({round(i * (len(pts) - 1) / (cap - 1)) for i in range(cap)})
            pts = [pts[i] for i in idx]
        return tuple(pts)

    @staticmethod
    def overhead_points(spec: RunSpec) -> tuple[tuple[int, int], ...]:
        """(batch, context) decode points of the sweeps, other than batch 1 at the fixed context, at which
        the model with its matmuls taken out is also timed (at most 6, 3 in a quick run; batch <= MAX_KERNEL_ROWS,
        B x S <= 2^17)."""
        pts = {(b, spec.decode_context_len) for b in spec.decode_batches} | {(1, c) for c in spec.decode_contexts}
        pts.discard((1, spec.decode_context_len))
        pts = sorted(p for p in pts if p[0] <= MAX_KERNEL_ROWS and p[0] * p[1] <= (1 << 17))
        return tuple(pts[:3 if spec.quick else 6])

    @staticmethod
    def kernel_rows(spec: RunSpec) -> tuple[int, ...]:
        """Row counts of the matmul calibration: 1, every decode and prefill batch up to ``MAX_KERNEL_ROWS``,
        and the largest prefill row count B*T capped there (above it the prediction scales with rows)."""
        prefill_rows = [b * spec.prefill_prompt_len for b in spec.prefill_batches] + list(spec.prompt_lens)
        rows = {1} | {b for b in (*spec.decode_batches, *spec.prefill_batches) if b <= MAX_KERNEL_ROWS}
        rows.add(min(max(prefill_rows), MAX_KERNEL_ROWS))
        return tuple(sorted(rows))

    def kernel_groups(self, lm: LoadedModel, spec: RunSpec) -> tuple[list[dict], list[str]]:
        """``probe.time_linears`` on the loaded model at ``kernel_rows(spec)``, checked and mended by
        ``robust.validate_kernel_rows`` (suspect row counts timed again with more passes, then rejected).
        Three timed passes per row count, two in a quick run. Decode's row counts (1 and the decode
        batches) feed mixture-of-experts blocks tokens of separate sequences (``probe.moe_inputs``).

        Returns:
            (groups, notes).
        """
        decode_rows = tuple({1, *spec.decode_batches})
        groups = time_linears(lm.model, self.kernel_rows(spec), repeats=2 if spec.quick else 3, warmup=1,
                              decode_rows=decode_rows)
        return validate_kernel_rows(groups, lambda rows: time_linears(lm.model, rows, repeats=5, warmup=1,
                                                                      decode_rows=decode_rows))

    @staticmethod
    def choose_threads(lm: LoadedModel, spec: RunSpec, stage=lambda frac, msg: None) -> dict:
        """The intra-op thread count of the run: ``spec.threads`` when given; on a CPU otherwise the fastest
        of all cores and one fewer (``probe.fastest_threads`` on the model's matmul pass at ``THREAD_ROWS``
        rows, 3 interleaved rounds, median): when another program holds a core, one thread fewer stops every
        kernel from waiting on the stalled one. Sets it (``torch.set_num_threads``) and returns dict(threads, how, candidates_s)."""
        if spec.threads:
            torch.set_num_threads(spec.threads)
            return dict(threads=int(spec.threads), how="given", candidates_s={})
        cands = thread_candidates()
        if spec.device != "cpu" or len(cands) < 2:
            torch.set_num_threads(cands[0])
            return dict(threads=cands[0], how="all cores", candidates_s={})
        stage(0.04, f"choosing the thread count: the model's matmul pass at {THREAD_ROWS} rows with " +
              " and ".join(str(c) for c in cands) + " threads")
        chosen, med = fastest_threads(cands, model_pass_timer(lm.model, THREAD_ROWS), rounds=3)
        torch.set_num_threads(chosen)
        return dict(threads=chosen, how="fastest of " + ", ".join(str(c) for c in cands) + " threads, measured now",
                    candidates_s=med)

    # -- the run ------------------------------------------------------------------------------
    def run(self, spec: RunSpec, progress=lambda frac, msg: None, cancelled=lambda: False) -> dict:
        """Measure every sweep point of ``spec`` and return the result dict the page draws.

        Stages and their share of the progress bar: model 0-5 %, probe 5-12 %, calibration 12-40 %,
        the sweeps 40-97 % (one tick per timed repetition), the text sample. With ``spec.probe_only``
        only the probe runs.

        Args:
            progress: called as ``progress(fraction_done, message)``; the message names the stage and the
                point being measured.
            cancelled: polled between repetitions; when it returns True the run stops and returns what
                it has, with ``cancelled=True``.

        Returns:
            dict with keys ``model``, ``probe`` (with ``taken_at`` and its own load figures), ``machine``
            (calc Accelerator: the probe raised to the best evidence, ``robust.raise_bound``),
            ``machine_probed`` (the probe's own), ``bound_notes``, ``datasheet``, ``calibration``, ``table``
            (DataFrame from ``predict.annotate_points``), ``kv_check``, ``text``, ``critical_batch``,
            ``timings``, ``skipped``, ``notes``, ``cancelled``, ``threads`` (``choose_threads``), ``load`` (``before``/``after``:
            ``os.getloadavg()`` or None; ``cores``).

        Raises:
            ValueError: the model cannot be loaded (the message says why).
        """
        t_start = time.perf_counter()
        load_before = _load_average()
        if spec.threads:
            torch.set_num_threads(spec.threads)

        def stage(frac, msg):
            if cancelled():
                raise measure.Cancelled()
            progress(frac, msg)

        result = dict(cancelled=False, skipped=[], notes=[], kv_check=[], points=[], bound_notes=[])
        try:
            if spec.probe_only:
                stage(0.0, f"probing this machine's bandwidth and {spec.dtype} matmul rate")
                result["probe"] = self.probe(spec.device, spec.dtype,
                                             buffer_bytes=(256 << 20) if spec.device == "cpu" else None)
                raise _ProbeOnlyDone()
            stage(0.0, "loading the model (random weights are built from the config)")
            lm, reused = self.model_for(spec)
            m = lm.calc_model
            result["model"] = dict(
                label=lm.label, weights=lm.weights, source=lm.source, n_params=m.n_params, n_layers=m.n_layers,
                dtype=lm.dtype, device=lm.device, notes=list(lm.notes), reused=reused, load_s=self.load_s,
                calc_model=m, tokenizer=lm.tokenizer is not None, tokenizer_note=lm.tokenizer_note)
            result["threads"] = self.choose_threads(lm, spec, stage)
            stage(0.05, f"probing this machine's bandwidth and {spec.dtype} matmul rate (fresh for every run)")
            pr = self.probe(spec.device, spec.dtype, buffer_bytes=(256 << 20) if spec.quick and spec.device == "cpu"
                            else None)
            probed = ProbeResult(**{k: v for k, v in pr.items() if k in ProbeResult.__dataclass_fields__}).accelerator()
            datasheet = datasheet_for(pr["datasheet_id"])
            result.update(probe=pr, machine=probed, machine_probed=probed, datasheet=datasheet,
                          critical_batch=machine_critical_batch(probed, spec.dtype))
            reference = reference_kernel(spec.device)
            if spec.calibrate:
                n_cal = [0]

                def cal_progress(msg):
                    n_cal[0] += 1
                    stage(min(0.12 + 0.01 * n_cal[0], 0.39), f"calibrating: {msg}")

                cal = self.calibrate(lm, spec, probed, cal_progress, reference)
                # the kernels at the model's own shapes are evidence of W and P too
                machine, notes = raise_bound(m, probed, spec.dtype, (), cal["matmul_groups"])
                result["bound_notes"] += notes
                result.update(machine=machine, critical_batch=machine_critical_batch(machine, spec.dtype))
            else:
                cal = dict(c_layer_s=0.0, c_step_s=0.0, depth_times_s={}, overhead_s=0.0, calibration_s=0.0,
                           matmul_groups=None, kernel_bytes_per_s=None, method="not calibrated", notes=[],
                           taken_at=time.time())
            result["calibration"] = cal
            t_measure = time.perf_counter()
            self._measure_sweeps(lm, spec, result, stage, reference)
            result.setdefault("timings", {})["measure_s"] = time.perf_counter() - t_measure
            stage(0.97, f"generating {spec.new_tokens} tokens of text")
            result["text"] = self._sample_text(lm, spec)
        except measure.Cancelled:
            result["cancelled"] = True
        except _ProbeOnlyDone:
            pass
        except Exception as e:
            e.partial_result = result  # filled in by the finally below: the worker reports it with the error
            raise
        finally:
            if "machine" in result:
                cal = result.get("calibration") or dict(c_layer_s=0.0, c_step_s=0.0)
                pts = [dict(p, reported_s=reported_time_s(p)) for p in result["points"]]
                machine, notes = raise_bound(result["model"]["calc_model"], result["machine"], spec.dtype, pts)
                if notes:
                    result["bound_notes"] += notes
                    result.update(machine=machine, critical_batch=machine_critical_batch(machine, spec.dtype))
                result["table"] = annotate_points(result["points"], result["model"]["calc_model"], result["machine"],
                                                  spec.dtype, cal["c_layer_s"], cal["c_step_s"], result["datasheet"],
                                                  cal.get("matmul_groups"), cal.get("decode_overhead"),
                                                  cal.get("prefill_overhead"))
        result.setdefault("timings", {})["total_s"] = time.perf_counter() - t_start
        result["load"] = dict(before=load_before, after=_load_average(), cores=os.cpu_count())
        progress(1.0, "cancelled" if result["cancelled"] else "done")
        return result

    def _measure_sweeps(self, lm, spec, result, stage, reference) -> None:
        """Every sweep point, timed by ``robust.measure_interleaved``: ``spec.repeats`` interleaved rounds,
        the reference kernel between points, disturbed points measured again, the physical checks
        (``robust.sweep_checks``: more work is not faster within a sweep), then flagged with reasons."""
        plan = ([("prompt_len", "prefill", 1, p) for p in spec.prompt_lens]
                + [("prefill_batch", "prefill", b, spec.prefill_prompt_len) for b in spec.prefill_batches]
                + [("decode_batch", "decode", b, spec.decode_context_len) for b in spec.decode_batches]
                + [("decode_context", "decode", 1, s) for s in spec.decode_contexts])
        keys, kv_seen, walls = [], {}, {}
        for key in plan:
            sweep, phase, batch, size = key
            need = point_memory_bytes(lm, phase, batch, size + (spec.decode_steps if phase == "decode" else 0))
            free = _available_bytes(spec.device)
            if need > 0.8 * free:
                result["skipped"].append(f"{phase} at batch {batch}, {size} tokens: needs about {need / 1e9:.1f} GB, "
                                         f"{free / 1e9:.1f} GB free")
            else:
                keys.append(key)

        def tick(done, planned, key, r):
            sweep, phase, batch, size = key
            what = "prompt" if phase == "prefill" else "context"
            stage(0.40 + 0.57 * min(done / max(planned, 1), 1.0),
                  f"run {r + 1} of {spec.repeats}{' (again: disturbed)' if r >= spec.repeats else ''}, "
                  f"{SWEEP_NAMES[sweep]}: {phase} at batch {batch}, {what} {size} tokens")

        def once(key, r):
            sweep, phase, batch, size = key
            warm = spec.warmup if r == 0 else 0
            t0 = time.perf_counter()
            try:
                if phase == "prefill":
                    timing, kv = measure.time_prefill(lm.model, batch, size, 1, warm, spec.seed)
                else:
                    timing, kv = measure.time_decode(lm.model, batch, size, spec.decode_steps, 1, warm, spec.seed)
            except Exception as e:  # noqa: BLE001 - OOM and friends become a skipped point, not a crash
                if measure.is_oom(e):
                    self.release_cuda_cache(spec.device)
                    result["skipped"].append(f"{phase} at batch {batch}, {size} tokens: out of memory")
                    return None
                raise
            kv_seen.setdefault(key, kv)
            walls[key] = walls.get(key, 0.0) + time.perf_counter() - t0
            return timing.samples_s

        xs = {k: (k[0], k[2] if k[0] in ("prefill_batch", "decode_batch") else k[3]) for k in keys}
        try:
            timed = measure_interleaved(keys, once, reference, rounds=spec.repeats, extra_rounds=2,
                                        checks=lambda pts: sweep_checks(pts, xs), progress=tick)
        except Exception as e:  # a cancel or a failure mid-sweep: keep the points timed so far, then stop
            self._add_points(lm, spec, result, keys, getattr(e, "partial_timings", {}), kv_seen, walls)
            raise
        self._add_points(lm, spec, result, keys, timed, kv_seen, walls)

    def _add_points(self, lm, spec, result, keys, timed, kv_seen, walls) -> None:
        """Append the timed points (``measure_interleaved``'s dict) to ``result["points"]`` and ``kv_check``."""
        m = lm.calc_model
        for key in keys:
            if key not in timed or key not in kv_seen:
                continue
            sweep, phase, batch, size = key
            t = timed[key]
            kv_tokens = size + spec.decode_steps if phase == "decode" else size
            kv = kv_seen[key]
            calc_kv = kv_cache_bytes(m, kv_tokens, batch, kv_dtype=spec.dtype)
            stats = {k: t[k] for k in ("median_s", "p10_s", "p90_s", "min_s", "max_s", "n_samples")}
            result["points"].append(dict(
                sweep=sweep, phase=phase, batch=batch, seq_len=kv_tokens if phase == "decode" else size,
                context_len=size, kv_measured_bytes=kv, kv_calc_bytes=calc_kv, **stats, wall_s=walls.get(key, 0.0),
                runs=t["rounds"], remeasured=t["remeasured"], ref_drift=t["ref_drift"], flagged=t["unreliable"],
                reasons="; ".join(t["reasons"])))
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
