"""Percentiles of a run's times (calc.serving_tails): each from its mechanism, checked by hand, and the held-out
MLPerf runs' p99 rows through the table."""
import math

import numpy as np
import pandas as pd
import pytest

from calc import serving_tails as tails


def test_a_statistic_names_its_quantile():
    assert tails.statistic_quantile("p99") == 0.99
    assert tails.statistic_quantile(" P90 ") == 0.90
    assert tails.statistic_quantile("p99.9") == pytest.approx(0.999)
    assert tails.statistic_quantile("mean") is None and tails.statistic_quantile("median") is None
    assert tails.statistic_quantile("p10") is None  # below the median: not a tail
    assert tails.statistic_quantile("p100") is None and tails.statistic_quantile("99") is None


def test_output_quantiles_follow_the_length_distribution():
    # InferenceX: uniform from 0.8x to 1x of the nominal, mean 0.9x; the 99th percentile 0.8 + 0.2 x 0.99 = 0.998x
    assert tails.output_range_ratio("mean lengths of the nominal 1024/1024, drawn uniformly from 0.8x to 1x") == 0.8
    assert tails.output_range_ratio("random, range ratio 0.5") == 0.5
    assert tails.output_range_ratio("sharegpt") is None
    assert tails.output_quantile_ratio(0.99, 0.8) == pytest.approx(0.998 / 0.9)
    assert tails.output_quantile_ratio(0.99, spread=True) == pytest.approx(math.log(100))  # exponential: ln 100
    assert tails.output_quantile_ratio(0.99) == 1.0  # one length


def test_a_burst_request_waits_its_prefill_steps():
    # K = 2 x 2.5 - 1 = 4 prefill steps; the mean request waits (K + 1) / 2 = 2.5 of them: 0.5 s TTFT, 0.05 s of it
    # its own overhead. At q 0.9: ceil(3.6) = 4 steps -> 0.05 + 0.45 x 4 / 2.5 = 0.77 s; at the median 2 steps ->
    # 0.05 + 0.45 x 2 / 2.5 = 0.41 s
    a = {"ttft_estimate": np.array(0.5), "ttft_request_s": np.array(0.05), "ttft_adp_wait_s": np.array(0.0)}
    g = {"n_chunks": np.array(2.5), "burst": 1.0}
    assert float(tails.burst_ttft_quantile_s(a, g, 0.9)) == pytest.approx(0.77)
    assert float(tails.burst_ttft_quantile_s(a, g, 0.5)) == pytest.approx(0.41)
    # one prefill step (K = 1): every request of the burst has its first token after it
    assert float(tails.burst_ttft_quantile_s(a, {"n_chunks": np.array(1.0), "burst": 1.0}, 0.99)) == pytest.approx(0.5)


def test_a_steady_ttft_tail_is_its_random_waits():
    # 0.2 s mean = 0.16 s of service + 0.01 s for the step in flight + 0.03 s of M/D/1 queue at load 0.6. At q 0.99:
    # the residual 2 x 0.99 x 0.01 = 0.0198 s; the queue (0.03 / 0.6) ln(0.6 / 0.01) = 0.05 x 4.0943 = 0.20472 s
    a = {"ttft_estimate": np.array(0.2), "ttft_step_wait_s": np.array(0.01), "ttft_md1_s": np.array(0.03),
         "ttft_rho": np.array(0.6)}
    assert float(tails.steady_ttft_quantile_s(a, 0.99)) == pytest.approx(0.16 + 0.0198 + 0.20472, rel=1e-4)
    # a queue loaded below 1 - q: its 99th percentile is no wait
    assert float(tails.md1_wait_quantile_s(0.001, 0.005, 0.99)) == 0.0


def test_a_tpot_tail_carries_more_of_the_prompts_prefilled_during_the_decode():
    # 20 ms TPOT, 2 ms of it interference; f = 0.01 prompts per step over O - 1 = 1,000 steps: Poisson with mean
    # 10, whose 99th percentile is 18 -> 20 + 2 x (18 / 10 - 1) = 21.6 ms. A burst's first request: 2q - 1 = 0.98
    # more of it -> 21.96 ms
    a = {"tpot_estimate": np.array(0.020), "tpot_interference": np.array(0.002)}
    g = {"f": np.array(0.01), "O": np.array(1001.0), "burst": 0.0}
    assert float(tails.tpot_quantile_s(a, g, 0.99)) == pytest.approx(0.0216)
    assert float(tails.tpot_quantile_s(a, dict(g, burst=1.0), 0.99)) == pytest.approx(0.02196)
    # no prompts mixed in (f 0): the mean
    assert float(tails.tpot_quantile_s(a, dict(g, f=np.array(0.0)), 0.99)) == pytest.approx(0.020)


def test_the_itl_tail_is_a_step_that_carries_a_prompt_where_enough_steps_do():
    # a closed loop of 10 rounds: the burst (0.1 of the requests, 0.2% of its steps carry its prompts: 150 ms) and
    # the steady state (0.9, 1.6% of its steps carry a prompt chunk: 32 ms). The slowest gaps: 0.1 x 0.002 = 0.02%
    # at 150 ms, then 0.9 x 0.016 = 1.44% at 32 ms: the top 1% ends among the 32 ms steps
    burst = ({"itl_prompt_s": np.array(0.150), "itl_alone_s": np.array(0.0080)}, {"p_mix": np.array(0.002)}, 0.1)
    steady = ({"itl_prompt_s": np.array(0.032), "itl_alone_s": np.array(0.0074)}, {"p_mix": np.array(0.016)}, 0.9)
    assert tails.run_quantile_s("itl_ms", [burst, steady], 0.99) == pytest.approx(0.032)
    # fewer prompt steps (0.9 x 0.005 + 0.0002 = 0.47% < 1%): the 99th percentile gap decodes alone (the burst's 8 ms)
    few = (steady[0], {"p_mix": np.array(0.005)}, 0.9)
    assert tails.run_quantile_s("itl_ms", [burst, few], 0.99) == pytest.approx(0.0080)


def test_a_run_mixes_its_burst_and_its_steady_state():
    # 0.1 of the requests in the burst (K = 4 as above: at its own 1 - 0.01 / 0.1 = 0.9 quantile, 0.77 s) and 0.9 in
    # a steady state whose TTFT is 0.2 s with no random wait: the run's 99th percentile is the burst's 0.77 s
    a_b = {"ttft_estimate": np.array(0.5), "ttft_request_s": np.array(0.05), "ttft_adp_wait_s": np.array(0.0)}
    a_s = {"ttft_estimate": np.array(0.2), "ttft_step_wait_s": np.array(0.0), "ttft_md1_s": np.array(0.0),
           "ttft_rho": np.array(0.0)}
    points = [(a_b, {"n_chunks": np.array(2.5), "burst": 1.0}, 0.1), (a_s, {"n_chunks": np.array(1.0)}, 0.9)]
    assert tails.run_quantile_s("ttft_ms", points, 0.99) == pytest.approx(0.77)
    # a burst's end-to-end time is the burst's whole, its longest output's extra steps added at the mean TPOT:
    # 10 s + (0.998 / 0.9 - 1) x 1,000 x 10 ms = 11.0889 s
    a = {"e2e_s": np.array(10.0), "tpot_estimate": np.array(0.01)}
    out = tails.output_quantile_ratio(0.99, 0.8)
    assert float(tails.e2e_quantile_s(a, {"O": np.array(1000.0), "burst": 1.0}, 0.99, out)) == pytest.approx(11.0889,
                                                                                                              rel=1e-4)
    with pytest.raises(ValueError, match="no percentile model"):
        tails.run_quantile_s("output_tok_per_s", points, 0.99)
    with pytest.raises(ValueError, match="quantile"):
        tails.run_quantile_s("ttft_ms", points, 1.5)


def test_a_tuned_mlperf_runs_p99_is_its_edge_mean_times_the_tuned_runs_tail():
    import calc.serving_fit as fit
    from calc.serving import TUNED_RUNS_PATH, edge_tail_ratio
    runs = pd.read_csv(TUNED_RUNS_PATH)
    trt = runs[runs["engine"] == "trtllm"]
    # TensorRT-LLM's 102 tuned v5.0 runs: median p99 / mean TTFT 2.40, TPOT 1.09 (the file's own columns)
    assert edge_tail_ratio("ttft", "trtllm") == pytest.approx(np.median(trt["ttft_p99_ms"] / trt["ttft_mean_ms"]))
    assert edge_tail_ratio("ttft", "trtllm") == pytest.approx(2.40, abs=0.01)
    assert edge_tail_ratio("tpot", "trtllm") == pytest.approx(1.09, abs=0.01)
    with pytest.raises(ValueError):
        edge_tail_ratio("e2e", "trtllm")
    # a held-out v5.1 Server run on TensorRT-LLM: its p99 TPOT row is predicted as its mean row times 1.09, under
    # the limit its notes state
    table, _ = fit.holdout_table()
    p99 = table[(table["statistic"] == "p99") & (table["metric"] == "tpot_ms") & (table["engine_key"] == "trtllm")]
    assert len(p99) >= 50
    r = p99.iloc[0]
    mean = table.set_index("id").loc[r["id"].replace("-p99", "-mean")]
    limit_ms = fit.run_latency_limits(fit.read_measurements(fit.HOLDOUT_PATH).set_index("id").loc[r["id"], "notes"],
                                      r["model"])["tpot_s"] * 1e3
    assert r["predicted"] == pytest.approx(min(mean["predicted"] * edge_tail_ratio("tpot", "trtllm"), limit_ms))
    # the shipped p99 rows are the same runs' summaries: each p99 at or above its run's median (not always its mean:
    # GB200 NVL72's DeepSeek-R1 v5.1 Server run has one request of 1,170 s per token, its mean TPOT 69.6 ms above
    # its p99 64.5 ms)
    both = p99["id"].str.replace("-p99", "-median")
    both = both[both.isin(table["id"])]
    assert len(both) >= 50
    assert (table.set_index("id").loc[both.str.replace("-median", "-p99"), "measured"].to_numpy()
            >= table.set_index("id").loc[both, "measured"].to_numpy()).all()


def test_the_public_estimate_gives_its_99th_percentiles_by_the_same_mechanisms():
    from calc.serving import edge_tail_ratio, serving_estimate
    kw = dict(tp=4, weight_dtype="fp8", engine="vllm")
    # a long closed loop of varied lengths (the steady state, one point): TTFT's tail is its random waits; the
    # end-to-end 99th percentile is that TTFT plus the 99th percentile output's steps, outputs exponential around
    # their mean (ln 100 x 300 tokens) at the mean TPOT
    est = serving_estimate("llama-3.1-70b", "h100-sxm", 1000, 300, concurrency=64, **kw)
    assert est.ttft_p99_s > est.ttft.estimate_s and est.tpot_p99_s > est.tpot.estimate_s
    assert est.itl_p99_s >= est.itl_s
    assert est.e2e_p99_s == pytest.approx(est.ttft_p99_s + (math.log(100) * 300 - 1) * est.tpot.estimate_s)
    assert "exponential" in est.tail_words
    # one length in 10 rounds: the first round's burst waits its prefill steps, the run's 99th percentile is the
    # burst's at 1 - 0.01 / its share: several times the mean; one length: no output spread in the end-to-end time
    fixed = serving_estimate("llama-3.1-70b", "h100-sxm", 1000, 300, concurrency=64, lengths="fixed", rounds=10, **kw)
    assert fixed.ttft_p99_s > 3 * fixed.ttft.estimate_s and "first-round burst" in fixed.tail_words
    assert "one length" in fixed.tail_words
    # offline: no TTFT or end-to-end percentile (they grow with the run's size), a TPOT one
    off = serving_estimate("llama-3.1-70b", "h100-sxm", 1000, 300, **kw)
    assert math.isnan(off.ttft_p99_s) and math.isnan(off.e2e_p99_s) and off.tpot_p99_s >= off.tpot.estimate_s
    # static batching (the course's pages): none
    static = serving_estimate("llama-3.1-70b", "h100-sxm", 1000, 300, concurrency=8, batching="static", **kw)
    assert math.isnan(static.tpot_p99_s) and static.tail_words == ""
    # a run tuned to MLPerf's Server limits (TTFT 2 s, TPOT 200 ms at the 99th percentile): its means times the
    # tuned runs' p99 over their mean, under the limits, never below the means
    tuned = serving_estimate("llama-2-70b", "h200", 222, 293, request_rate_per_s=10.0, weight_dtype="fp8",
                             kv_dtype="fp8", engine="trtllm", latency_limits="mlperf server")
    for p99, mean, name, limit in ((tuned.ttft_p99_s, tuned.ttft.estimate_s, "ttft", 2.0),
                                   (tuned.tpot_p99_s, tuned.tpot.estimate_s, "tpot", 0.2)):
        assert p99 == pytest.approx(max(min(mean * edge_tail_ratio(name, "trtllm"), limit), mean))
    assert "tuned MLPerf runs" in tuned.tail_words


def test_other_percentiles_are_read_and_predicted_in_order(tmp_path):
    # vllm bench serve's --metric-percentiles and MLPerf's summaries give p90 to p99.9: each read from its name, and
    # the estimates rise with the quantile
    from calc.measurements import metric_reading
    from calc.serving import edge_tail_ratio
    from calc.serving_fit import holdout_table
    assert metric_reading("p95_ttft_ms")[:2] == ("ttft_ms", "p95")
    assert metric_reading("P99.9 TTFT (ms)")[:2] == ("ttft_ms", "p99.9")
    assert metric_reading("p999_itl_ms")[:2] == ("itl_ms", "p99.9")
    head = "model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value\n"
    run = "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,16,"
    (tmp_path / "q.csv").write_text(head + "".join(f"{run}{s}_ttft_ms,100\n" for s in ("p90", "p95", "p99", "p99.9")))
    table, skipped = holdout_table(path=tmp_path / "q.csv")
    assert not skipped and list(table["statistic"]) == ["p90", "p95", "p99", "p99.9"]
    assert table["predicted"].is_monotonic_increasing
    # a tuned run's p90: the p99's excess over the mean at ln 10 / ln 100 = half of it (TensorRT-LLM: 2.40 -> 1.70)
    assert edge_tail_ratio("ttft", "trtllm", 0.9) == pytest.approx(1 + (edge_tail_ratio("ttft", "trtllm") - 1) / 2)
    with pytest.raises(ValueError):
        edge_tail_ratio("ttft", "trtllm", 0.2)


def test_the_public_percentiles_keep_to_the_models_context_and_the_itl_to_tpots_tail():
    from calc.serving import serving_estimate
    # Llama-3-8B's trained context is 8,192 tokens: a 7,936-token prompt leaves 256 for the output, so the 99th
    # percentile output is the 256 itself, not 4.6 x 256: end-to-end = TTFT's tail + 255 steps at the mean TPOT
    est = serving_estimate("llama-3-8b", "h100-sxm", 7936, 256, concurrency=32)
    assert est.e2e_p99_s == pytest.approx(est.ttft_p99_s + 255 * est.tpot.estimate_s)
    assert "capped at the 256 the model's trained context leaves" in est.tail_words
    # a run tuned to MLPerf's limits: TPOT's tail is the tuned runs' ratio, and the ITL's is at least that, in the
    # ITL's units (a request's TPOT is the mean of its gaps)
    tuned = serving_estimate("llama-2-70b", "h200", 222, 293, request_rate_per_s=10.0, weight_dtype="fp8",
                             kv_dtype="fp8", engine="trtllm", latency_limits="mlperf server")
    assert tuned.itl_p99_s >= tuned.tpot_p99_s * tuned.itl_s / tuned.tpot.estimate_s * (1 - 1e-12)
