"""Robust live timing on recorded timings (no clock is read): interleaving, the reference kernel, re-measure,
physical checks, the kernel-row outlier, the overhead ranges and the lower bound raised by evidence."""
import math

import pytest

import calc
from live.predict import annotate_points
from live.robust import (CAL_MAX_FACTOR, TERM_RANGES_S, calibration_valid, check_overhead_terms,
                         fit_decode_overhead_checked, interleaved_order, measure_interleaved, monotone_suspects,
                         per_row_suspects, raise_bound, sweep_checks, validate_kernel_rows)


class Script:
    """Recorded timings served in call order: time_once(key, round) pops the key's next repetition;
    reference_s() pops the next reference timing (1 ms when the script runs out). Logs the call order."""

    def __init__(self, reps: dict, refs: list):
        self.reps = {k: list(v) for k, v in reps.items()}
        self.refs = list(refs)
        self.calls = []

    def time_once(self, key, r):
        self.calls.append((key, r))
        return self.reps[key].pop(0)

    def reference_s(self):
        return self.refs.pop(0) if self.refs else 1e-3


def test_rounds_interleave_and_alternate_direction():
    s = Script({"a": [[1.0]] * 3, "b": [[2.0]] * 3, "c": [[3.0]] * 3}, [])
    measure_interleaved(["a", "b", "c"], s.time_once, s.reference_s, rounds=3, extra_rounds=0)
    # never a point's repetitions back to back: a b c | c b a | a b c
    assert [k for k, _ in s.calls] == list("abccbaabc")
    assert interleaved_order([1, 2], 1) == [2, 1]


def test_steady_points_report_the_p10_and_are_not_flagged():
    s = Script({"a": [[0.100, 0.102], [0.101, 0.103], [0.100, 0.104]]}, [])
    out = measure_interleaved(["a"], s.time_once, s.reference_s, rounds=3, extra_rounds=2)["a"]
    # samples 0.100 0.100 0.101 0.102 0.103 0.104: p10 by linear interpolation = 0.100 + 0.5 * 0.0 = 0.100
    assert out["p10_s"] == pytest.approx(0.100)
    assert out["unreliable"] is False and out["remeasured"] == 0 and out["n_samples"] == 6


def test_a_round_with_a_slow_reference_is_set_aside_and_the_point_remeasured():
    # point "a": round 2 ran while the reference kernel took 3 ms against its best 1 ms (drift 3 > 1.3);
    # that round's 0.300 s is not used; with only 2 of 3 rounds clean the point still has enough (2), so it
    # is not re-measured. Point "b" gets two disturbed rounds of 3: re-measured once, then clean.
    reps = {"a": [[0.100], [0.300], [0.101]], "b": [[0.050], [0.140], [0.150], [0.051]]}
    # a run is judged by the slower of the references before and after it. Reference calls: start, after
    # a(r0), b(r0), b(r1) [3 ms], a(r1), a(r2), b(r2) [3 ms]; the extra round starts with a fresh one, then b(r3).
    # So a(r1) (3, 1), b(r1) (1, 3) and b(r2) (1, 3) are disturbed; a(r0), a(r2), b(r0), b(r3) are clean.
    refs = [1e-3, 1e-3, 1e-3, 3e-3, 1e-3, 1e-3, 3e-3, 1e-3, 1e-3]
    s = Script(reps, refs)
    out = measure_interleaved(["a", "b"], s.time_once, s.reference_s, rounds=3, extra_rounds=2)
    assert out["a"]["samples_s"] == (0.100, 0.101) and out["a"]["clean_rounds"] == 2 and not out["a"]["unreliable"]
    assert s.calls[-1] == ("b", 3)  # the extra round measured only b
    assert out["b"]["remeasured"] == 1 and out["b"]["samples_s"] == (0.050, 0.051)
    assert not out["b"]["unreliable"]


def test_a_point_that_stays_disturbed_is_flagged_with_its_reason():
    # every repetition of "a" spreads 0.1 .. 0.5 s, however often it is measured: p90/p10 far above 1.5
    s = Script({"a": [[0.1, 0.5]] * 6}, [])
    out = measure_interleaved(["a"], s.time_once, s.reference_s, rounds=3, extra_rounds=2)["a"]
    assert out["unreliable"] and out["remeasured"] == 2
    assert any("spread p90/p10" in r for r in out["reasons"])


def test_decode_at_longer_context_measured_faster_is_remeasured_then_flagged():
    # S = 128 took 80 ms, S = 2048 took 60 ms: longer context cannot be faster; the short one is the suspect
    assert list(monotone_suspects([128, 2048], [0.080, 0.060])) == [0]
    assert monotone_suspects([128, 2048], [0.060, 0.062]) == {}
    keys = ["s128", "s2048"]
    sweeps = {"s128": ("decode_context", 128), "s2048": ("decode_context", 2048)}
    # the re-measure of s128 gives 58 ms: the check passes and the point is kept, re-measured once
    s = Script({"s128": [[0.080]] * 3 + [[0.058]], "s2048": [[0.060]] * 3}, [])
    out = measure_interleaved(keys, s.time_once, s.reference_s, rounds=3, extra_rounds=2,
                              checks=lambda pts: sweep_checks(pts, sweeps))
    assert out["s128"]["remeasured"] == 1 and not out["s128"]["unreliable"]
    # a re-measure that stays slow: the point is flagged, the reason names both contexts
    s = Script({"s128": [[0.080]] * 4, "s2048": [[0.060]] * 3}, [])
    out = measure_interleaved(keys, s.time_once, s.reference_s, rounds=3, extra_rounds=2,
                              checks=lambda pts: sweep_checks(pts, sweeps))
    assert out["s128"]["unreliable"] and "more work cannot take less time" in out["s128"]["reasons"][-1]
    assert not out["s2048"]["unreliable"]


def test_a_point_that_cannot_run_is_dropped():
    s = Script({"a": [[0.1]] * 3, "b": [None]}, [])
    out = measure_interleaved(["a", "b"], s.time_once, s.reference_s, rounds=3)
    assert list(out) == ["a"] and ("b", 1) not in s.calls


def test_per_row_time_may_not_rise_past_one_row():
    # 1 -> 2 rows may switch kernels (not compared); 4 rows at 40 ms = 10 ms/row, 8 rows at 120 ms = 15 ms/row
    assert per_row_suspects([1, 2, 4, 8], [0.010, 0.030, 0.040, 0.120]) == {3: per_row_suspects(
        [1, 2, 4, 8], [0.010, 0.030, 0.040, 0.120])[3]}
    assert per_row_suspects([1, 2, 4], [0.010, 0.030, 0.040]) == {}


def _groups(times_by_rows):
    rows = sorted(times_by_rows)
    # two groups sharing the time equally: each group holds half
    return [dict(label=f"g{i}", rows=rows, times_s=[times_by_rows[r] / 2 for r in rows], per_token=True,
                 weight_bytes=1e8, n_weights=2.5e7) for i in range(2)]


def test_the_3250_ms_kernel_timing_at_2_rows_is_rejected():
    # the case: all matmuls 55 ms at 1 row, 3,250 ms at 2 rows, 1,076 ms at 4 rows. 2 rows doing
    # less work than 4 cannot take 3x longer: the 2-row count is re-measured; when it stays slow it is dropped
    groups = _groups({1: 0.055, 2: 3.250, 4: 1.076})
    asked = []

    def again_slow(rows):
        asked.append(rows)
        return _groups({1: 0.055, 2: 3.100, 4: 1.076})

    out, notes = validate_kernel_rows(groups, again_slow)
    assert asked == [(2,)]
    assert out[0]["rows"] == [1, 4] and sum(g["times_s"][1] for g in out) == pytest.approx(1.076)
    assert any("2 rows rejected" in n for n in notes)
    # a re-measure that comes back at 0.54 s (0.27 s per row, as at 4 rows: 1.076 / 4 = 0.269) is kept
    # (the faster of the two) and nothing is rejected
    out, notes = validate_kernel_rows(groups, lambda rows: _groups({1: 0.055, 2: 0.540, 4: 1.076}))
    assert out[0]["rows"] == [1, 2, 4] and sum(g["times_s"][1] for g in out) == pytest.approx(0.540)
    assert not any("rejected" in n for n in notes)


def test_the_calibrated_curve_cannot_spike_from_a_rejected_outlier():
    # with the outlier kept, B = 2 would be predicted at 3.25 s of matmuls; after rejection it interpolates
    # between 55 ms (1 row) and 1,076 ms (4 rows): 55 + (1076 - 55) / 3 = 395.3 ms
    from live.predict import matmul_time_s
    out, _ = validate_kernel_rows(_groups({1: 0.055, 2: 3.250, 4: 1.076}), None)
    assert matmul_time_s(out, "decode", 2, 1) == pytest.approx(0.055 + (1.076 - 0.055) / 3)


def test_overhead_terms_outside_their_physical_range_are_clamped():
    terms, notes = check_overhead_terms(dict(c_layer_s=2e-4, c_step_s=0.9, per_seq_s=-1e-3, per_kv_token_s=1e-8))
    assert terms["c_layer_s"] == 2e-4 and terms["per_kv_token_s"] == 1e-8
    assert terms["c_step_s"] == TERM_RANGES_S["c_step_s"][1] and terms["per_seq_s"] == 0.0
    assert len(notes) == 2


def test_the_per_kv_token_range_is_relative_to_the_probed_bandwidth():
    from live.robust import per_kv_token_range_s, term_ranges_s
    m = calc.get_model("smollm2-135m")
    slow = calc.Accelerator("probe", 1e10, 68.6e9, {"fp32": 2e11})
    # 30 layers x 3 KV heads x 64 x 2 (K, V) x 4 B = 46,080 B per token: 0.6717 us at 68.6 GB/s;
    # 9 query heads on 3 KV heads: 4 x (1 + 3) = 16 passes -> 10.75 us
    lo, hi = per_kv_token_range_s(m, slow, "fp32")
    assert lo == 0.0 and hi == pytest.approx(16 * 46_080 / 68.6e9)
    # the 2.55 us a quiet 2-core run fitted lies inside (the old constant 1 us clamped it); 20 us does not
    terms, notes = check_overhead_terms(dict(per_kv_token_s=2.55e-6), term_ranges_s(m, slow, "fp32"))
    assert terms["per_kv_token_s"] == 2.55e-6 and notes == []
    terms, notes = check_overhead_terms(dict(per_kv_token_s=20e-6), term_ranges_s(m, slow, "fp32"))
    assert terms["per_kv_token_s"] == pytest.approx(hi) and len(notes) == 1
    # a machine with 10x the bandwidth (a GPU) allows a 10x smaller term
    fast = calc.Accelerator("gpu", 1e11, 686e9, {"fp32": 2e13})
    assert per_kv_token_range_s(m, fast, "fp32")[1] == pytest.approx(hi / 10)


def test_the_decode_overhead_fit_rejects_a_point_it_cannot_predict():
    # residual(B, S) - r0 = 1e-4 * (B - 1) + 1e-8 * (B*S - 132) on four points, and a fifth (B = 8) 0.5 s off
    ref_r, ref_t = 0.010, 132

    def pt(b, s, extra=0.0):
        res = ref_r + 1e-4 * (b - 1) + 1e-8 * (b * s - ref_t) + extra
        return dict(batch=b, kv_tokens=s, context_len=s - 4, residual_s=res, step_s=res + 0.02)

    pts = [pt(4, 132), pt(16, 132), pt(32, 132), pt(1, 2052), pt(8, 132, extra=0.5)]
    fit, notes = fit_decode_overhead_checked(pts, ref_r, ref_t)
    assert len(notes) == 1 and "batch 8" in notes[0]
    assert fit["per_seq_s"] == pytest.approx(1e-4, rel=1e-6) and fit["per_kv_token_s"] == pytest.approx(1e-8, rel=1e-4)


def test_the_lower_bound_is_raised_by_kernel_evidence_and_by_a_step_under_it():
    m = calc.get_model("smollm2-135m")
    acc = calc.Accelerator("probe", 1e10, 5e9, {"fp32": 2e10})  # W = 5 GB/s, P = 20 GFLOP/s
    # kernels: 540 MB of weights in 60 ms at 1 row = 9 GB/s (> 5: W raised to 9 GB/s);
    # 135e6 weights x 2 x 64 rows in 0.5 s = 34.6 GFLOP/s (> 20: P raised)
    n_w, wb = 135e6, 540e6
    groups = [dict(label="all", rows=[1, 64], times_s=[0.060, 0.5], per_token=True, weight_bytes=wb, n_weights=n_w)]
    raised, notes = raise_bound(m, acc, "fp32", [], groups)
    assert raised.bandwidth_bytes_per_s == pytest.approx(9e9)
    assert raised.compute_flops("fp32") == pytest.approx(2 * n_w * 64 / 0.5)
    assert len(notes) == 2 and "bandwidth W raised" in notes[0] and "P raised" in notes[1]
    # the prefill at 0.5-0.6x the machine roofline: a prompt of 256 measured at half the line's time
    line = calc.prefill_time(m, raised, 256, 1, weight_dtype="fp32", kv_dtype="fp32").total_s
    pts = [dict(sweep="prompt_len", phase="prefill", batch=1, seq_len=256, context_len=256, median_s=0.5 * line,
                p10_s=0.5 * line, p90_s=0.5 * line, reported_s=0.5 * line)]
    raised2, notes2 = raise_bound(m, raised, "fp32", pts)
    assert notes2 and raised2.compute_flops("fp32") > raised.compute_flops("fp32")
    t = annotate_points(pts, m, raised2, "fp32", 0.0, 0.0)
    assert t["ratio_machine"].min() >= 1.0 - 1e-9  # no measured point below the bound
    # nothing beats the probe's line: unchanged, no notes
    same, none = raise_bound(m, acc, "fp32", [dict(phase="decode", batch=1, seq_len=132, reported_s=10.0)])
    assert same == acc and none == []


def test_calibration_validity_against_the_machine_line():
    assert calibration_valid(0.10, 0.05) and not calibration_valid(0.10 * CAL_MAX_FACTOR, 0.05)
    assert not calibration_valid(0.01, 0.05)  # below the bound: the kernels beat the roofline by 5x
    assert math.isclose(CAL_MAX_FACTOR, 10.0)


def test_a_calibrated_prediction_off_by_more_than_2x_at_a_held_out_point_is_not_drawn():
    from live.charts import ratio_figure, sweep_figure

    m = calc.get_model("smollm2-135m")
    acc = calc.Accelerator("probe", 1e10, 2e10, {"fp32": 1e11})  # W = 20 GB/s: 540 MB of weights = 27 ms
    # kernels: 30 ms at 1 row, 32 ms at 8 rows (within 10x of the 27 ms line: the factor rule passes)
    groups = [dict(label="all", rows=[1, 8], times_s=[0.030, 0.032], per_token=True, weight_bytes=5.4e8,
                   n_weights=1.35e8)]
    pts = [dict(sweep="decode_batch", phase="decode", batch=1, seq_len=132, context_len=128, median_s=0.031,
                p10_s=0.031, p90_s=0.032),   # calibrated 30 ms + KV 0.3 ms: ratio ~1.02, valid
           dict(sweep="decode_batch", phase="decode", batch=8, seq_len=132, context_len=128, median_s=0.120,
                p10_s=0.120, p90_s=0.125)]   # calibrated 32 + 2.4 ms KV = 34.4 ms: measured 120 ms is 3.5x: invalid
    t = annotate_points(pts, m, acc, "fp32", 0.0, 0.0, matmul_groups=groups)
    assert t["cal_valid"].tolist() == [True, False]
    assert "outside 1/2-2" in t["cal_check"].iloc[1] and t["ratio_calibrated"].iloc[1] > 3
    res = dict(table=t, model=dict(calc_model=m, dtype="fp32"), machine=acc, calibration=dict(matmul_groups=groups),
               critical_batch=None)
    names = [tr.name for tr in sweep_figure(res, "decode_batch").data]
    assert "calibrated (kernels + KV + overhead)" not in names
    assert any(n.startswith("calibrated: not drawn") for n in names) and "machine roofline" in names
    cal = [tr for tr in ratio_figure(res).data if tr.name.startswith("calibrated")][0]
    assert list(cal.marker.symbol) == ["circle", "x-thin-open"]


def _smollm_groups(times_by_rows, count=211):
    # SmolLM2-135M: 30 layers x 7 projections + the output head = 211 matmul calls per forward, 269 MB in bf16
    rows = sorted(times_by_rows)
    return [dict(label="all", rows=rows, times_s=[times_by_rows[r] for r in rows], per_token=True, count=count,
                 weight_bytes=2.69e8, n_weights=1.345e8)]


def test_a_launch_bound_gpu_calibration_is_in_its_physical_range_and_drawn():
    from live.robust import LAUNCH_FLOOR_S, kernel_calls
    m = calc.get_model("smollm2-135m")
    h200 = calc.get_accelerator("h200")
    line = calc.decode_step_time(m, h200, 1, 132, weight_dtype="bf16", kv_dtype="bf16")
    mm_line = line.total_s - line.kv_s  # ~269 MB / 4.8 TB/s = 56 us
    # 211 kernel calls at ~10 us each (launch-bound): 2.1 ms, 38x the line -- the old 10x rule hid it
    groups = _smollm_groups({1: 2.1e-3, 8: 2.2e-3})
    assert kernel_calls(groups, 1) == 211
    assert not calibration_valid(2.1e-3, mm_line)                      # the old rule: no launch floor
    assert calibration_valid(2.1e-3, mm_line, n_kernels=211)           # 10 x 56 us + 211 x 50 us = 11.1 ms
    assert 10 * mm_line + 211 * LAUNCH_FLOOR_S == pytest.approx(0.56e-3 + 10.55e-3, rel=0.02)
    pts = [dict(sweep="decode_batch", phase="decode", batch=b, seq_len=132, context_len=128, median_s=t, p10_s=t,
                p90_s=t * 1.05) for b, t in ((1, 2.6e-3), (8, 2.8e-3))]
    t = annotate_points(pts, m, h200, "bf16", 0.0, 0.0, matmul_groups=groups)
    assert t["cal_physical"].all() and t["cal_valid"].all()


def test_a_calibration_outside_its_range_is_drawn_only_where_held_out_points_confirm_it():
    from live.charts import sweep_figure
    m = calc.get_model("smollm2-135m")
    h200 = calc.get_accelerator("h200")
    # 15 ms of kernels: above 0.56 + 10.55 ms, outside the physical range even with the launch floor
    groups = _smollm_groups({1: 15e-3, 8: 16e-3})

    def table(t1, t8):
        pts = [dict(sweep="decode_batch", phase="decode", batch=b, seq_len=132, context_len=128, median_s=t,
                    p10_s=t, p90_s=t) for b, t in ((1, t1), (8, t8))]
        return annotate_points(pts, m, h200, "bf16", 0.0, 0.0, matmul_groups=groups)

    ok = table(16.5e-3, 17.0e-3)  # measured / calibrated ~1.1 and ~1.06: the evidence confirms it
    assert not ok["cal_physical"].any() and ok["cal_confirmed"].all() and ok["cal_valid"].all()
    res = dict(table=ok, model=dict(calc_model=m, dtype="bf16"), machine=h200, calibration=dict(matmul_groups=groups),
               critical_batch=None)
    cal = [tr for tr in sweep_figure(res, "decode_batch").data if tr.name.startswith("calibrated (")]
    ys = [y for y in cal[0].y if y is not None and math.isfinite(y)]
    assert len(ys) >= 2  # drawn between the confirmed batches 1 and 8
    bad = table(16.5e-3, 28.0e-3)  # at batch 8 measured 1.7x the calibrated: within 2x, but no confirmation
    assert bad["cal_valid"].tolist() == [True, False]
    assert "does not confirm it" in bad["cal_check"].iloc[1]


def test_the_3250_ms_calibration_stays_rejected_with_the_launch_floor():
    # the case on the 2-core CPU: SmolLM2-135M in fp32 (540 MB), W about 20 GB/s -> a 27 ms line; kernels
    # 55 ms at 1 row, 3,250 ms at 2 rows, 1,076 ms at 4; measured decode at batch 2 about 135 ms
    m = calc.get_model("smollm2-135m")
    acc = calc.Accelerator("probe", 1e10, 2e10, {"fp32": 1e11})
    groups = [dict(label="all", rows=[1, 2, 4], times_s=[0.055, 3.250, 1.076], per_token=True, count=211,
                   weight_bytes=5.4e8, n_weights=1.35e8)]
    # the range: 10 x 27 ms + 211 x 50 us = 281 ms; 3,250 ms lies far outside it
    assert not calibration_valid(3.250, 0.027, n_kernels=211)
    pts = [dict(sweep="decode_batch", phase="decode", batch=2, seq_len=132, context_len=128, median_s=0.135,
                p10_s=0.135, p90_s=0.140)]
    t = annotate_points(pts, m, acc, "fp32", 0.0, 0.0, matmul_groups=groups)
    assert not t["cal_valid"].iloc[0] and not t["cal_physical"].iloc[0] and not t["cal_confirmed"].iloc[0]


def test_one_thread_fewer_is_chosen_when_a_busy_core_stalls_every_kernel():
    from live.probe import fastest_threads, thread_candidates
    assert thread_candidates(2) == (2, 1) and thread_candidates(16) == (16, 15) and thread_candidates(1) == (1,)
    # recorded pass times on 2 cores with a busy loop on one: 2 threads wait on the stalled one (90-140 ms),
    # 1 thread runs at its own pace (48-50 ms)
    times = {2: iter([0.090, 0.140, 0.120]), 1: iter([0.050, 0.048, 0.049])}
    asked = []

    def time_pass(n):
        asked.append(n)
        return next(times[n])

    chosen, med = fastest_threads((2, 1), time_pass, rounds=3)
    assert chosen == 1 and med == {2: 0.120, 1: 0.049}
    assert asked == [2, 1, 1, 2, 2, 1]  # interleaved, alternating direction
    # quiet: 2 threads 32 ms, 1 thread 33 ms (within 3 %): the larger count wins the tie
    quiet = {2: 0.032, 1: 0.033}
    assert fastest_threads((2, 1), lambda n: quiet[n])[0] == 2
    with pytest.raises(ValueError):
        fastest_threads((), lambda n: 0.0)


def test_the_prefill_line_charges_the_head_for_the_last_token_only_as_measured():
    # the worker's prefill asks for logits_to_keep=1: the head runs on B rows, not B*T. SmolLM2-135M's head is
    # V x D = 49,152 x 576 = 28,311,552 weights; at T = 128 the course's "all" adds 2 x 28,311,552 x 127 FLOPs
    from live.predict import predict_point
    m = calc.get_model("smollm2-135m")
    acc = calc.Accelerator("probe", 1e10, 68.6e9, {"fp32": 1.9e11})
    live_flops = predict_point(m, acc, "prefill", 1, 128, "fp32")["flops"]
    course = calc.prefill_time(m, acc, 128, 1, weight_dtype="fp32", kv_dtype="fp32", logits="all").flops
    assert course - live_flops == pytest.approx(2 * 28_311_552 * 127, rel=1e-9)


def test_an_interrupted_measurement_hands_over_the_points_timed_so_far():
    class Stop(Exception):
        pass
    calls = []

    def progress(done, planned, key, r):
        calls.append((key, r))
        if len(calls) == 5:          # 3 points x 2 rounds: the cancel comes before the 5th repetition
            raise Stop()
    with pytest.raises(Stop) as info:
        measure_interleaved(["a", "b", "c"], lambda k, r: [0.010, 0.010], lambda: 0.001, rounds=2, extra_rounds=0,
                            progress=progress)
    partial = info.value.partial_timings
    # round 1 timed a, b, c; round 2 timed one more point (interleaved order) before the cancel
    assert set(partial) == {"a", "b", "c"}
    assert sorted(t["rounds"] for t in partial.values()) == [1, 1, 2]
    for t in partial.values():
        assert t["median_s"] == pytest.approx(0.010)
        assert t["unreliable"] == (t["rounds"] == 1)
        assert ("the run stopped after 1 of 2 rounds" in t["reasons"]) == (t["rounds"] == 1)
