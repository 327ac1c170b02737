"""Tests of calc.batching: the request stream, the two schedulers, the timeline and KV paging.

Every expected number below is worked by hand in the comment next to it.
"""
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calc
from calc.batching import (StepCost, batching_experiment, compare_batching, prefix_cache_curve, simulate_batching,
                           simulate_continuous, simulate_static, step_cost_from_model, timeline)
from calc.kv_paging import kv_reservation
from calc.request_stream import make_requests

ONE_SECOND = StepCost(weights_s=1.0, compute_s_per_token=0.0, kv_s_per_token=0.0)  # every step costs 1 s


def frame(arrival, prompt, output):
    return pd.DataFrame({"request_id": np.arange(len(arrival)), "arrival_s": np.asarray(arrival, dtype=float),
                         "prompt_len": np.asarray(prompt, dtype=np.int64),
                         "output_len": np.asarray(output, dtype=np.int64)})


# Three requests at t = 0 with outputs 2, 4 and 6 tokens, two slots, every step 1 s.
THREE = frame([0, 0, 0], [1, 1, 1], [2, 4, 6])


def test_static_three_requests_by_hand():
    # Batch 1 = {r0, r1}: the prefill step ends at 1 s (token 1 of both); decode steps end at 2, 3, 4 s.
    # r0 (2 tokens) is done at 2 s, r1 (4 tokens) at 4 s; the batch holds its slot until 4 s.
    # Batch 2 = {r2} starts at 4 s: prefill ends at 5 s, five decode steps end at 10 s.
    run = simulate_static(THREE, 2, ONE_SECOND)
    assert run.requests["ttft_s"].tolist() == [1.0, 1.0, 5.0]
    assert run.requests["e2e_s"].tolist() == [2.0, 4.0, 10.0]
    # Useful slots per step: 2, 2, 1, 1 (r0 is padding), then 1 x 6 -> 12 slot-seconds of 2 x 10.
    assert run.steps["active_slots"].tolist() == [2, 2, 1, 1, 1, 1, 1, 1, 1, 1]
    assert run.steps["queue_len"].tolist() == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert run.summary.mean_utilisation == pytest.approx(0.6)
    assert run.summary.throughput_tokens_per_s == pytest.approx(12 / 10)


def test_continuous_three_requests_by_hand():
    # Step ending 1 s: prefill of r0, r1. Step ending 2 s: r0 token 2 (done), r1 token 2.
    # r2 takes r0's slot: the step ending 3 s prefills r2 (its TTFT is 3 s) and gives r1 token 3;
    # at 4 s r1 token 4 (done); r2 alone then emits tokens 3..6 at 5, 6, 7, 8 s.
    run = simulate_continuous(THREE, 2, ONE_SECOND)
    assert run.requests["ttft_s"].tolist() == [1.0, 1.0, 3.0]
    assert run.requests["e2e_s"].tolist() == [2.0, 4.0, 8.0]
    assert run.steps["active_slots"].tolist() == [2, 2, 2, 2, 1, 1, 1, 1]
    assert run.steps["time_s"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    assert run.steps["queue_len"].tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    assert run.steps["prefill_tokens"].tolist() == [2, 0, 1, 0, 0, 0, 0, 0]
    # 12 slot-seconds of 2 slots x 8 s; 12 tokens in 8 s.
    assert run.summary.mean_utilisation == pytest.approx(0.75)
    assert run.summary.throughput_tokens_per_s == pytest.approx(1.5)


def test_cache_reads_and_padding_by_hand():
    # weights 1 s per step, 0.1 s per context token read or written, no compute term.
    # Two requests at 0, prompts of 10 tokens, outputs 1 and 3 tokens, two slots.
    cost = StepCost(weights_s=1.0, compute_s_per_token=0.0, kv_s_per_token=0.1)
    reqs = frame([0, 0], [10, 10], [1, 3])
    # Static: prefill writes 20 tokens -> 1 + 2.0 = 3 s. r0 stays as padding: token 2 reads
    # 11 + 11 = 22 tokens -> 3.2 s (ends 6.2); token 3 reads 12 + 12 -> 3.4 s (ends 9.6).
    static = simulate_static(reqs, 2, cost)
    assert static.requests["e2e_s"].tolist() == pytest.approx([3.0, 9.6])
    # Continuous: same prefill (3 s); r0 leaves; token 2 reads 11 -> 2.1 s (5.1); token 3 reads 12 -> 2.2 s (7.3).
    cont = simulate_continuous(reqs, 2, cost)
    assert cont.requests["e2e_s"].tolist() == pytest.approx([3.0, 7.3])
    assert cont.steps["step_s"].tolist() == pytest.approx([3.0, 2.1, 2.2])


def test_compute_term_and_mixed_step():
    # No weights or cache: a step costs 0.01 s per token processed (prompt or decode).
    # r0 (prompt 100, 3 tokens) at 0; r1 (prompt 50, 1 token) at 0.5 s; two slots.
    cost = StepCost(weights_s=0.0, compute_s_per_token=0.01, kv_s_per_token=0.0)
    reqs = frame([0, 0.5], [100, 50], [3, 1])
    # Continuous: prefill r0 = 100 x 0.01 = 1 s. r1 arrived at 0.5 s during it, joins at 1 s: the mixed
    # step processes 1 decode + 50 prompt tokens = 0.51 s (ends 1.51, r1 done, TTFT 1.01 s);
    # r0's last token: 0.01 s -> 1.52 s.
    cont = simulate_continuous(reqs, 2, cost)
    assert cont.requests["finish_s"].tolist() == pytest.approx([1.52, 1.51])
    assert cont.requests["ttft_s"].tolist() == pytest.approx([1.0, 1.01])
    # Static: r1 waits for r0's batch (1 + 0.01 + 0.01 = 1.02 s), then its prefill 0.5 s -> 1.52 s.
    static = simulate_static(reqs, 2, cost)
    assert static.requests["finish_s"].tolist() == pytest.approx([1.02, 1.52])


def test_arrival_during_a_step_and_idle_gap():
    # r0 at 0 s (3 tokens), r1 at 0.5 s (2 tokens), r2 at 100 s (1 token); 1 s steps, 2 slots.
    reqs = frame([0, 0.5, 100], [1, 1, 1], [3, 2, 1])
    cont = simulate_continuous(reqs, 2, ONE_SECOND)
    # r1 joins at 1 s (after the step in flight): first token at 2 s, last at 3 s -> TTFT 1.5, e2e 2.5.
    # The engine idles until r2 arrives at 100 s: its prefill ends at 101 s.
    assert cont.requests["ttft_s"].tolist() == pytest.approx([1.0, 1.5, 1.0])
    assert cont.requests["e2e_s"].tolist() == pytest.approx([3.0, 2.5, 1.0])
    static = simulate_static(reqs, 2, ONE_SECOND)
    # Static: r0 runs alone 0-3 s; r1 waits until 3 s, finishes at 5 s (e2e 4.5 s).
    assert static.requests["e2e_s"].tolist() == pytest.approx([3.0, 4.5, 1.0])
    # Makespan from the first arrival to the last completion: 101 s; 6 tokens.
    assert cont.summary.makespan_s == pytest.approx(101.0)
    assert cont.summary.throughput_tokens_per_s == pytest.approx(6 / 101)
    # Utilisation counts only the 4 steps that ran (the idle gap is left out): slot-seconds
    # 1 + 2 + 2 + 1 = 6 of 2 slots x 4 s.
    assert cont.steps["active_slots"].tolist() == [1, 2, 2, 1]
    assert cont.summary.mean_utilisation == pytest.approx(6 / 8)


def test_equal_lengths_all_at_once_static_equals_continuous():
    # Four identical requests at 0, two slots: both schedulers run two waves of 5 one-second steps.
    reqs = frame([0, 0, 0, 0], [8, 8, 8, 8], [5, 5, 5, 5])
    s, c = simulate_static(reqs, 2, ONE_SECOND), simulate_continuous(reqs, 2, ONE_SECOND)
    assert s.requests["finish_s"].tolist() == [5.0, 5.0, 10.0, 10.0]
    assert c.requests["finish_s"].tolist() == [5.0, 5.0, 10.0, 10.0]


def test_one_token_outputs_finish_at_prefill():
    reqs = frame([0, 0, 0], [4, 4, 4], [1, 1, 1])
    run = simulate_continuous(reqs, 2, ONE_SECOND)
    # Wave 1 (r0, r1) ends at 1 s; r2 prefills in the next step, ending at 2 s.
    assert run.requests["finish_s"].tolist() == [1.0, 1.0, 2.0]


def test_continuous_beats_static_on_ragged_traffic():
    cost = step_cost_from_model(calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm"), batch_hint=32)
    for seed in range(3):
        reqs = make_requests(150, 40.0, 256, 0.5, 256, 1.5, "lognormal", 4096, seed)
        cmp = compare_batching(reqs, 32, cost)
        assert cmp.continuous.summary.throughput_tokens_per_s >= cmp.static.summary.throughput_tokens_per_s
        assert cmp.continuous.summary.e2e_p50_s < cmp.static.summary.e2e_p50_s
        # The speedup is the ratio of the two throughputs.
        assert cmp.speedup == pytest.approx(cmp.continuous.summary.throughput_tokens_per_s
                                            / cmp.static.summary.throughput_tokens_per_s)


def test_runs_conserve_tokens_and_respect_the_slot_limit():
    cost = StepCost(weights_s=5e-3, compute_s_per_token=1.6e-5, kv_s_per_token=4e-8)
    reqs = make_requests(300, 20.0, 300, 1.0, 200, 1.0, "lognormal", 2048, 7)
    total = int(reqs["output_len"].sum())
    for policy in ("static", "continuous"):
        run = simulate_batching(reqs, policy, 16, cost)
        assert int(run.steps["tokens_emitted"].sum()) == total
        assert int(run.steps["cumulative_tokens"].iloc[-1]) == total
        assert run.steps["active_slots"].max() <= 16
        assert (run.requests["first_token_s"] >= run.requests["arrival_s"]).all()
        assert (run.requests["finish_s"] >= run.requests["first_token_s"]).all()
        assert (run.requests["admit_s"] >= run.requests["arrival_s"]).all()
        # Steps follow each other without overlap.
        assert (run.steps["start_s"].to_numpy()[1:] >= run.steps["time_s"].to_numpy()[:-1] - 1e-12).all()
        # Prompt tokens processed = all prompts, once each.
        assert int(run.steps["prefill_tokens"].sum()) == int(reqs["prompt_len"].sum())


def test_continuous_segments_match_a_step_by_step_reference():
    # An independent, naive one-step-at-a-time implementation of the documented rules.
    cost = StepCost(weights_s=0.004, compute_s_per_token=2e-5, kv_s_per_token=5e-7)
    reqs = make_requests(60, 30.0, 64, 1.0, 40, 1.0, "lognormal", 512, 3)
    arrival, prompt, output = (reqs[c].to_numpy() for c in ("arrival_s", "prompt_len", "output_len"))
    t, nxt, active, finish = 0.0, 0, [], {}
    while nxt < len(reqs) or active:
        if not active:
            t = max(t, arrival[nxt])
        new = []
        while nxt < len(reqs) and arrival[nxt] <= t and len(active) + len(new) < 8:
            new.append(nxt)
            nxt += 1
        ctx = sum(c for _, _, c in active)
        dur = cost.kv_s_per_token * (ctx + sum(prompt[i] for i in new)) + max(
            cost.weights_s, cost.compute_s_per_token * (len(active) + sum(prompt[i] for i in new)))
        t += dur
        active = [(i, rem - 1, c + 1) for i, rem, c in active] + [(i, output[i] - 1, prompt[i] + 1) for i in new]
        for i, rem, _ in active:
            if rem == 0:
                finish[i] = t
        active = [a for a in active if a[1] > 0]
    run = simulate_continuous(reqs, 8, cost)
    np.testing.assert_allclose(run.requests["finish_s"].to_numpy(), [finish[i] for i in range(len(reqs))],
                               rtol=1e-9)


def test_determinism_for_a_seed():
    a = make_requests(100, 5.0, seed=11)
    b = make_requests(100, 5.0, seed=11)
    pd.testing.assert_frame_equal(a, b)
    assert not make_requests(100, 5.0, seed=12).equals(a)
    cost = StepCost(5e-3, 1.6e-5, 4e-8)
    pd.testing.assert_frame_equal(compare_batching(a, 8, cost).summary, compare_batching(b, 8, cost).summary)


def test_request_stream_statistics():
    # 5,000 Poisson arrivals at 10/s: the mean gap is 0.1 s (standard error 0.1 / sqrt(5000) = 1.4%).
    reqs = make_requests(5000, 10.0, 500, 0.5, 200, 0.5, "lognormal", 100_000, seed=1)
    assert reqs["arrival_s"].iloc[0] == 0.0
    assert np.diff(reqs["arrival_s"]).mean() == pytest.approx(0.1, rel=0.05)
    # Lognormal with coefficient of variation 0.5: mean 500 and std 250 (standard error of the mean 0.7%).
    assert reqs["prompt_len"].mean() == pytest.approx(500, rel=0.03)
    assert reqs["prompt_len"].std() / reqs["prompt_len"].mean() == pytest.approx(0.5, rel=0.1)
    uni = make_requests(2000, 1.0, 100, 0.5, 40, 1.0, "uniform", 4096, seed=2)
    # Uniform on [50, 150] and [0 -> 1, 80] tokens.
    assert uni["prompt_len"].between(50, 150).all() and uni["output_len"].between(1, 80).all()
    fixed = make_requests(10, 1.0, 100, 0.9, 40, 0.9, "fixed", 4096)
    assert (fixed["prompt_len"] == 100).all() and (fixed["output_len"] == 40).all()
    capped = make_requests(500, 1.0, 1000, 1.5, 1000, 1.5, "lognormal", 1024, seed=3)
    assert ((capped["prompt_len"] + capped["output_len"]) <= 1024).all()
    assert (capped["output_len"] >= 1).all()


def test_step_cost_matches_calc_and_seed_000():
    # Seed 000 step 4: Llama-3-8B on an H100 at 8k, B = 32: 4.79 ms of weights + 32 x 0.32 ms of cache = 15.1 ms.
    model, gpu = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    cost = step_cost_from_model(model, gpu, embedding="table")
    assert cost.weights_s == pytest.approx(4.79e-3, rel=0.01)
    assert float(cost.step_s(32, 32 * 8192)) == pytest.approx(15.1e-3, rel=0.01)
    assert float(cost.step_s(32, 32 * 8192)) == pytest.approx(
        calc.decode_step_time(model, gpu, 32, 8192, embedding="table").total_s, rel=1e-9)
    # Gathered (the default), the 1.05 GB input table is not read: 4.79 - 1.0507/3.35 = 4.48 ms.
    assert step_cost_from_model(model, gpu).weights_s == pytest.approx(4.48e-3, rel=0.01)


def test_timeline_bins_by_hand():
    run = simulate_continuous(THREE, 2, ONE_SECOND)
    # Steps of 1 s with 2, 2, 2, 2, 1, 1, 1, 1 active slots; 2-second bins average pairs of steps.
    tl = timeline(run.steps, 2, 8.0, 4)
    assert tl["time_s"].tolist() == [2.0, 4.0, 6.0, 8.0]
    assert tl["active_slots"].tolist() == pytest.approx([2, 2, 1, 1])
    assert tl["slot_utilisation"].tolist() == pytest.approx([1, 1, 0.5, 0.5])
    assert tl["cumulative_tokens"].tolist() == [4, 8, 10, 12]
    assert tl["tokens_per_s"].tolist() == pytest.approx([2, 2, 1, 1])
    # A bin past the end counts as idle: 10 s over 5 bins of 2 s, the last one empty.
    tl = timeline(run.steps, 2, 10.0, 5)
    assert tl["active_slots"].tolist() == pytest.approx([2, 2, 1, 1, 0])


def test_paging_by_hand():
    # Lengths 1, 16, 17, 100 tokens; 1,000 B per token; blocks of 16; slabs of 128 tokens.
    # Blocks: 1, 1, 2, 7 -> 16 + 16 + 32 + 112 = 176 tokens reserved; 134 used; waste 15 + 0 + 15 + 12 = 42.
    # Contiguous: 4 x 128 = 512 tokens reserved, 512 - 134 = 378 wasted.
    df, s = kv_reservation([1, 16, 17, 100], 1000.0, 128, 16, kv_budget_bytes=1_000_000)
    assert df["blocks"].tolist() == [1, 1, 2, 7]
    assert df["paged_wasted_bytes"].tolist() == [15_000, 0, 15_000, 12_000]
    assert s.used_bytes == 134_000
    assert s.paged_reserved_bytes == 176_000 and s.paged_wasted_bytes == 42_000
    assert s.contiguous_reserved_bytes == 512_000 and s.contiguous_wasted_bytes == 378_000
    assert s.contiguous_waste_fraction == pytest.approx(378 / 512)
    assert s.paged_waste_fraction == pytest.approx(42 / 176)
    # 1 MB holds floor(1e6 / 128,000) = 7 slabs, or floor(1e6 / 44,000) = 22 requests of the mean 44 paged tokens.
    assert (s.fit_contiguous, s.fit_paged, s.n_blocks) == (7, 22, 11)


def test_paging_one_token_blocks_waste_nothing():
    _, s = kv_reservation([5, 9, 300], 2.0, 512, 1)
    assert s.paged_wasted_bytes == 0 and s.paged_reserved_bytes == (5 + 9 + 300) * 2.0


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(1, 4096), min_size=1, max_size=50),
       block=st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256]),
       per_token=st.floats(1.0, 1e6))
def test_paged_waste_is_under_one_block(lengths, block, per_token):
    df, s = kv_reservation(lengths, per_token, 4096, block)
    waste_tokens = df["paged_wasted_bytes"] / per_token
    assert (waste_tokens >= -1e-6).all() and (waste_tokens <= block - 1 + 1e-6).all()
    # Every block size divides 4096, so a paged request never reserves more than its slab.
    assert (df["paged_reserved_bytes"] <= df["contiguous_reserved_bytes"]).all()
    assert s.contiguous_wasted_bytes == pytest.approx(sum(4096 - n for n in lengths) * per_token)


def test_experiment_caps_slots_by_memory():
    # Llama-3-8B bf16 on an H100 (80 GB): (80e9 - 16.06e9) / (131,072 B x 32,768 tokens = 4.29 GB) -> 14 slabs.
    exp = batching_experiment(calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm"), n_requests=50,
                              max_len_tokens=32768, slot_limit=512)
    assert exp.memory_max_batch == 14 and exp.max_slots == 14
    assert exp.comparison.static.summary.max_slots == 14
    # Uniform spreads above 1 are clamped to 1 rather than refused.
    exp = batching_experiment(calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm"), n_requests=50,
                              distribution="uniform", prompt_spread=2.0, output_spread=1.5)
    assert exp.prompt_spread == 1.0 and exp.output_spread == 1.0


@pytest.mark.parametrize("kwargs, words", [
    (dict(n_requests=0), "n_requests"),
    (dict(n_requests=10**6), "n_requests"),
    (dict(arrival_rate_per_s=0), "arrival_rate_per_s"),
    (dict(prompt_mean_tokens=-5), "prompt_mean_tokens"),
    (dict(distribution="normal"), "distribution"),
    (dict(distribution="uniform", output_spread=1.5), "output_spread"),
    (dict(prompt_spread=-0.1), "prompt_spread"),
    (dict(max_len_tokens=1), "max_len_tokens"),
    (dict(seed=-1), "seed"),
    (dict(seed=1.5), "seed"),
])
def test_make_requests_rejects_bad_input(kwargs, words):
    with pytest.raises(ValueError, match=words):
        make_requests(**kwargs)


def test_simulators_reject_bad_input():
    with pytest.raises(ValueError, match="max_slots"):
        simulate_static(THREE, 0, ONE_SECOND)
    with pytest.raises(ValueError, match="sorted"):
        simulate_continuous(frame([1, 0], [1, 1], [1, 1]), 2, ONE_SECOND)
    with pytest.raises(ValueError, match="output_len"):
        simulate_continuous(frame([0, 1], [1, 1], [1, 0]), 2, ONE_SECOND)
    with pytest.raises(ValueError, match="missing"):
        simulate_static(THREE.drop(columns="prompt_len"), 2, ONE_SECOND)
    with pytest.raises(ValueError, match="at least one"):
        simulate_static(THREE.iloc[:0], 2, ONE_SECOND)
    with pytest.raises(ValueError, match="policy"):
        simulate_batching(THREE, "dynamic", 2, ONE_SECOND)
    with pytest.raises(ValueError, match="StepCost"):
        simulate_static(THREE, 2, lambda b, c: 1.0)
    with pytest.raises(ValueError, match="weights_s"):
        StepCost(-1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="positive term"):
        StepCost(0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="n_bins"):
        timeline(simulate_static(THREE, 2, ONE_SECOND).steps, 2, 10.0, 0)


def test_kv_reservation_rejects_bad_input():
    with pytest.raises(ValueError, match="max_len_tokens = 128"):
        kv_reservation([10, 200], 1.0, 128)
    with pytest.raises(ValueError, match="block_size_tokens"):
        kv_reservation([10], 1.0, 128, 0)
    with pytest.raises(ValueError, match="non-empty"):
        kv_reservation([], 1.0, 128)
    with pytest.raises(ValueError, match="whole token"):
        kv_reservation([1.5], 1.0, 128)
    with pytest.raises(ValueError, match="kv_bytes_per_token"):
        kv_reservation([10], 0.0, 128)
    with pytest.raises(ValueError, match="kv_budget_bytes"):
        kv_reservation([10], 1.0, 128, 16, kv_budget_bytes=-1)


def test_experiment_says_when_the_model_does_not_fit():
    # Llama-3.1-405B in bf16 is about 810 GB: no sequence fits on one 80 GB H100.
    with pytest.raises(ValueError, match="does not fit"):
        batching_experiment(calc.get_model("llama-3.1-405b"), calc.get_accelerator("h100-sxm"), n_requests=50)
    assert math.isfinite(calc.weight_bytes(calc.get_model("llama-3.1-405b")))


def test_prefix_cache_curve_by_hand():
    # Seed 000 step 2: 20 conversations share a 1,000-token prompt. Expected prefill tokens
    # P (1 + (n - 1)(1 - h)): h = 0 -> 20,000; h = 0.5 -> 1,000 x 10.5 = 10,500; h = 1 -> 1,000.
    # Llama-3-8B holds 131,072 B per token: 1,000 tokens -> 131 MB, 20,000 -> 2.62 GB.
    curve = prefix_cache_curve(calc.get_model("llama-3-8b"), 20, 1000, 0, "bf16", n_points=3)
    assert curve["hit_rate"].tolist() == [0.0, 0.5, 1.0]
    assert curve["prefill_tokens_with"].tolist() == pytest.approx([20_000, 10_500, 1_000])
    assert (curve["prefill_tokens_without"] == 20_000).all()
    assert curve["cache_bytes_with"].iloc[-1] == pytest.approx(131.072e6)
    assert curve["cache_bytes_without"].iloc[0] == pytest.approx(2.62144e9)
    with pytest.raises(ValueError, match="n_points"):
        prefix_cache_curve(calc.get_model("llama-3-8b"), 20, 1000, n_points=1)


def test_one_admission_step_is_charged_as_the_vectorised_step():
    # kv 1e-6 s/token x (1,000 context + 200 prompt) = 0.0012 s; compute 1e-4 s/token x (4 + 200) = 0.0204 s
    # beats the 0.01 s weight read: 0.0012 + 0.0204 = 0.0216 s, by either path
    cost = StepCost(weights_s=0.01, compute_s_per_token=1e-4, kv_s_per_token=1e-6)
    assert cost._one_step_s(4, 1000, 200) == pytest.approx(0.0216)
    assert cost._one_step_s(4, 1000, 200) == float(cost.step_s(4, 1000, 200))
    assert cost._one_step_s(0, 0, 0) == 0.01                     # an empty step still reads the weights
