"""The serving model (calc.serving) and its calibration (calc.serving_fit)."""
import copy
import math

import numpy as np
import pandas as pd
import pytest

import calc
import calc.measurements
import calc.run_limits
import calc.serving_fit
from calc.hardware import with_matmul
from calc.serving import serving_estimate, serving_frontier
from calc.serving_terms import unquantized_matmul_extra_s
from calc.serving_params import PARAM_KEYS, load_serving_params

LLAMA8, LLAMA70 = calc.get_model("llama-3.1-8b"), calc.get_model("llama-3.1-70b")
MIXTRAL = calc.get_model("mixtral-8x7b")
H100 = calc.get_accelerator("h100-sxm")


def simple_params(**values):
    """The stored parameter file with every fixed cost 0 and every utilisation 0.5, no MoE or release-date
    factor (``moe_prefill_matmul`` 1, ``software_gain_per_year`` 0), then ``values``."""
    p = copy.deepcopy(load_serving_params())
    for k in PARAM_KEYS:
        p["params"][k]["value"] = 0.0 if k.endswith("_s") or "_s." in k else 0.5
    p["params"]["grouped_gemm"]["value"] = 1.0
    p["params"]["moe_prefill_matmul"]["value"] = 1.0
    p["params"]["software_gain_per_year"]["value"] = 0.0
    for k, v in values.items():
        p["params"][k]["value"] = v
    for engine in p["engines"].values():  # the host's step work in turn with the GPU's (no overlap scheduler)
        for entry in engine.values():
            if isinstance(entry, dict):
                entry["overlap_schedule"] = False
    return p


def test_hand_worked_single_request_on_one_h100():
    # Llama-3.1-8B bf16 on one H100 SXM (3.35e12 B/s, 989e12 FLOP/s), 1,024 prompt and 1,024 output tokens, one
    # client. Utilisations 0.5, 1 ms per step, nothing else.
    # TPOT at the mean context 1,024 + 512 = 1,536: weights read 15.01e9 B / 3.35e12 = 4.4806 ms; KV 1,536 x
    # 131,072 B (32 layers x 8 heads x 128 x 2 x 2 B) = 201.3 MB / 3.35e12 = 0.0601 ms; bound 4.5407 ms. The
    # matmuls of one token, 2 x 7.50e9 = 15.01e9 FLOP / 989e12 = 0.0152 ms, follow the weight read rather than
    # hide under it (the estimate adds them; the bound takes the max).
    # Estimate = 2 x (4.4806 + 0.0601 + 0.0152) + 1 = 10.1117 ms (one sequence: no other prompt mixed in, no
    # interference).
    # TTFT: prefill compute 14.57e12 FLOP / 989e12 = 14.732 ms (logits of the last token only), KV written
    # 1,024 x 131,072 B = 0.0401 ms, weights read 4.483 ms; at MFU 0.5: 0.0801 + 2 x 4.483 + 29.465 = 38.511 ms,
    # + 1 ms (one chunk: 1,024 <= 8,192 tokens per step) = 39.511 ms. e2e = 39.511 + 1,023 x 10.1117 = 10,383.7 ms:
    # 1,024 / 10.3837 s = 98.6 tokens/s.
    p = simple_params(**{"step_fixed_s.vllm": 1e-3})
    e = serving_estimate(LLAMA8, H100, 1024, 1024, concurrency=1, engine="vllm", params=p)
    assert e.tpot.bound_s == pytest.approx(4.5407e-3, rel=1e-4)
    assert e.tpot.estimate_s == pytest.approx(10.1117e-3, rel=1e-4)
    assert e.tpot.interference_s == 0.0
    assert e.ttft.bound_s == pytest.approx(14.7725e-3, rel=1e-4)
    assert e.ttft.estimate_s == pytest.approx(39.511e-3, rel=1e-4)
    assert e.e2e_s == pytest.approx(10.3837, rel=1e-4)
    assert e.output_tokens_per_s == pytest.approx(98.6, rel=1e-3)
    assert e.tokens_per_s_per_user == pytest.approx(1 / 10.1117e-3, rel=1e-4)
    # vLLM's async scheduling (its current default) prepares the next step while the GPU runs this one: the
    # 1 ms of host work hides behind the 9.112 ms of GPU work, in the TPOT and in the prompt's one step
    p["engines"]["vllm"]["large_gpu"]["overlap_schedule"] = True
    o = serving_estimate(LLAMA8, H100, 1024, 1024, concurrency=1, engine="vllm", params=p)
    assert o.tpot.estimate_s == pytest.approx(9.1117e-3, rel=1e-4) and o.tpot.fixed_s == 0.0
    assert o.ttft.estimate_s == pytest.approx(38.511e-3, rel=1e-4)


def test_a_request_that_does_not_fit_says_what_to_change():
    # Llama-3.1-8B bf16 on one H100: 1,000,000 output tokens after a 7,936-token prompt; a paged cache holds the
    # mean context 7,936 + 500,000 = 507,936 tokens x 131,072 B = 66.6 GB, beyond the 90% of the driver's 85.5 GB
    # that is left after 16.06 GB of weights (60.9 GB)
    with pytest.raises(ValueError, match=r"one sequence of 507,936 tokens \(its mean context\) does not fit in the "
                                         r"90% of NVIDIA H100 SXM 80GB's memory .*shorten the prompt or the output"):
        serving_estimate(LLAMA8, H100, 7936, 1_000_000, concurrency=1)


def test_bound_is_the_roofline_step_and_the_estimate_never_below_it():
    for model, tp, c in ((LLAMA8, 1, 1), (LLAMA8, 1, 64), (LLAMA70, 4, 16), (MIXTRAL, 2, 8)):
        e = serving_estimate(model, H100, 2048, 256, concurrency=c, tp=tp, weight_dtype="fp8", kv_dtype="fp8")
        b = int(e.decode_batch)
        bound = calc.decode_step_time(model, H100, b, 2048 + 128, "fp8", "fp8", tp=tp)
        assert e.tpot.bound_s == pytest.approx(bound.total_s, rel=1e-9)
        pre = calc.prefill_time(model, H100, 2048, 1, "fp8", "fp8", tp=tp, logits="last")
        assert e.ttft.bound_s == pytest.approx(pre.total_s, rel=1e-9)
        assert e.tpot.estimate_s >= bound.total_s and e.ttft.estimate_s >= pre.total_s
        assert e.output_tokens_per_s_per_gpu <= e.bound_output_tokens_per_s_per_gpu


def test_breakdown_parts_add_up_and_range_holds_the_estimate():
    for kw in (dict(concurrency=1), dict(concurrency=200), dict(request_rate_per_s=3.0), dict(),
               dict(concurrency=8, batching="static")):
        e = serving_estimate(LLAMA70, H100, 1000, 500, tp=8, weight_dtype="fp8", kv_dtype="fp8", **kw)
        for t in (e.ttft, e.tpot):
            assert sum(t.parts().values()) == pytest.approx(t.estimate_s, rel=1e-12)
            assert t.weights_s + t.kv_s + t.compute_s + t.comm_s == pytest.approx(t.bound_s, rel=1e-12)
            assert min(t.parts().values()) >= 0
            assert t.low_s <= t.estimate_s <= t.high_s
        assert e.per_gpu_low <= e.output_tokens_per_s_per_gpu <= e.per_gpu_high
        assert e.e2e_low_s <= e.e2e_s <= e.e2e_high_s


def test_interference_zero_alone_and_shrinking_with_output_length():
    assert serving_estimate(LLAMA70, H100, 4000, 200, concurrency=1, tp=4).tpot.interference_s == 0.0
    # 32 clients: each step carries (32 - 1) / O of a 4,000-token prompt
    inter = [serving_estimate(LLAMA70, H100, 4000, o, concurrency=32, tp=4).tpot.interference_s
             for o in (100, 400, 1600, 6400)]
    assert inter[0] > 0
    assert all(a > b for a, b in zip(inter, inter[1:]))
    # at most 1 / O: four times the output puts a quarter of the prompts in each step, and more of their
    # matmuls then hide under the step's weight read (max(weights, compute)), so interference x O falls too
    per_request = [i * o for i, o in zip(inter, (100, 400, 1600, 6400))]
    assert all(a >= b * (1 - 1e-9) for a, b in zip(per_request, per_request[1:]))
    assert serving_estimate(LLAMA70, H100, 4000, 100, concurrency=32, tp=4,
                            batching="static").tpot.interference_s == 0.0


def test_a_step_carrying_a_prompt_chunk_is_averaged_with_the_decode_only_steps():
    # TPOT is the mean over steps: a share p = f x I / chunk of them carries a prompt chunk, the rest decode
    # alone, so interference = p x (chunk step - decode step) + the prompt's KV writes and collectives x f.
    # Utilisations 0.5, no fixed cost; a step's weight read and matmuls add (the estimate does not overlap them).
    # Dense: Llama-3.1-70B bf16 on 4 H100s, 32 clients, 4,000 / 1,600 tokens: f = 31 / 1,600 prompts per step,
    # each prompt one chunk (4,000 <= 8,192 - 31), so p = f. Decode at B = 32, context 4,800: weights 10.37 ms,
    # compute 1.12 ms; the prompt: compute 143.7 ms, collectives 35.3 ms, KV 0.1 ms. The chunk step reads the
    # same weights and adds the prompt's matmuls: f x (0.1 + 35.3 + 143.7) / 0.5 = 6.94 ms.
    p = simple_params()
    e = serving_estimate(LLAMA70, H100, 4000, 1600, concurrency=32, tp=4, engine="vllm", params=p)
    d = calc.decode_step_time(LLAMA70, H100, 32, 4800, "bf16", "bf16", tp=4)
    pf = calc.prefill_time(LLAMA70, H100, 4000, 1, "bf16", "bf16", tp=4, logits="last")
    f = 31 / 1600
    chunk_step = d.weights_s + d.compute_s + pf.compute_s
    want = f * (pf.kv_s + pf.comm_s + chunk_step - (d.weights_s + d.compute_s)) / 0.5
    assert e.tpot.interference_s == pytest.approx(want, rel=1e-9)
    assert e.tpot.interference_s == pytest.approx(6.94e-3, rel=2e-3)
    # MoE: Mixtral-8x7B bf16 on 2 H100s, 4 clients, 2,000 / 1,000 tokens: p = f = 3 / 1,000. A decode step of 4
    # tokens reads the experts 4 tokens reach (9.64 ms); the chunk step those of 2,004 tokens, every expert
    # (13.90 ms). Interference = f x (13.90 - 9.64 + the prompt's matmuls, KV and collectives) / 0.5, about
    # 0.2 ms, where the experts of 4 + f x 2,000 = 10 tokens read in every step would have added 7 ms.
    e = serving_estimate(MIXTRAL, H100, 2000, 1000, concurrency=4, tp=2, engine="vllm", params=p)
    d = calc.decode_step_time(MIXTRAL, H100, 4, 2500, "bf16", "bf16", tp=2)
    chunk = calc.decode_step_time(MIXTRAL, H100, 4 + 2000, 2500, "bf16", "bf16", tp=2)
    pf = calc.prefill_time(MIXTRAL, H100, 2000, 1, "bf16", "bf16", tp=2, logits="last")
    f = 3 / 1000
    assert chunk.weights_s > 1.4 * d.weights_s
    want = f * (pf.kv_s + pf.comm_s + chunk.weights_s + d.compute_s + pf.compute_s
                - (d.weights_s + d.compute_s)) / 0.5
    assert e.tpot.interference_s == pytest.approx(want, rel=1e-9)
    assert e.tpot.interference_s < 0.25e-3


def test_rate_obeys_littles_law_and_an_impossible_rate_is_refused():
    e = serving_estimate(LLAMA8, H100, 512, 256, request_rate_per_s=5.0)
    assert e.mode == "rate"
    assert e.concurrency == pytest.approx(5.0 * e.e2e_s, rel=0.02)  # L = lambda W
    assert e.requests_per_s == pytest.approx(5.0)
    with pytest.raises(ValueError, match="requests/s"):
        serving_estimate(LLAMA8, H100, 512, 256, request_rate_per_s=1e6)


def test_a_rate_within_the_range_above_capacity_is_taken_at_the_limit_and_one_beyond_is_refused():
    import math
    import re
    from calc.serving_params import error_quantiles, load_serving_params
    with pytest.raises(ValueError) as err:
        serving_estimate(LLAMA8, H100, 512, 256, request_rate_per_s=1e6)
    sustained = float(re.search(r"about ([\d.,]+) requests/s", str(err.value)).group(1).replace(",", ""))
    high = math.exp(error_quantiles(load_serving_params(), "throughput")[1])
    assert high > 1.1  # the data set's engines measured more than 1.1x the estimate's throughput at the range's top
    # 5% above the capacity, inside the range: the batch limit's times and a notice; the rate is the one asked
    e = serving_estimate(LLAMA8, H100, 512, 256, request_rate_per_s=sustained * 1.05)
    assert e.requests_per_s == pytest.approx(sustained * 1.05, rel=1e-9)
    assert any("above the estimate's capacity" in n for n in e.notices)
    # at the batch limit: admission holds more requests in service than the cache decodes at once (vLLM pauses the
    # rest: 512 + 256 / 2 tokens a sequence decoding against 512 to admit one); the limit named
    assert e.batch_limit == "kv_capacity" and e.decode_batch < e.concurrency
    # beyond the top of the range: refused, the message giving the range's factor
    with pytest.raises(ValueError, match=f"{high:.2f}x"):
        serving_estimate(LLAMA8, H100, 512, 256, request_rate_per_s=sustained * high * 1.05)


def test_clients_beyond_the_batch_limit_wait_for_a_slot():
    # vLLM decodes at most 1,024 sequences on an H100 (max_num_seqs); 2,048 clients wait about one e2e each
    e = serving_estimate(LLAMA8, H100, 128, 128, concurrency=2048, weight_dtype="fp8", kv_dtype="fp8")
    assert e.decode_batch == 1024 and e.batch_limit == "max_batch"
    assert e.ttft.queue_s > 0.5 * (e.e2e_s - e.ttft.queue_s)


def test_unknown_engine_falls_back_with_a_notice():
    e = serving_estimate(LLAMA8, H100, 512, 256, concurrency=4, engine="my-engine")
    assert e.engine == "generic"
    assert any("my-engine" in n and "generic" in n for n in e.notices)
    assert serving_estimate(LLAMA8, H100, 512, 256, concurrency=4, engine="TensorRT-LLM").engine == "trtllm"
    # an accelerator with no calibration row and no measured matmul ceiling: both fallbacks are named
    l4 = serving_estimate(LLAMA8, calc.get_accelerator("l4"), 512, 256, concurrency=4)
    assert any("no published serving measurement on l4" in n for n in l4.notices)
    assert any("no measured matmul ceiling for l4" in n for n in l4.notices)
    assert serving_estimate(LLAMA8, H100, 512, 256, concurrency=4).notices == ()


def test_bad_inputs_raise_value_error():
    for kw in (dict(input_len=0), dict(output_len=-5), dict(concurrency=0), dict(concurrency=4, request_rate_per_s=1),
               dict(request_rate_per_s=-1), dict(batching="dynamic"), dict(engine=""), dict(tp=3),
               dict(request_rate_per_s=1.0, batching="static")):
        args = dict(input_len=512, output_len=128)
        args.update(kw)
        with pytest.raises(ValueError):
            serving_estimate(LLAMA8, H100, **args)
    with pytest.raises(ValueError):
        serving_frontier(LLAMA8, H100, 512, 128, concurrencies=[1, -2])


def test_frontier_matches_the_scalar_estimate_and_trades_user_for_gpu():
    df = serving_frontier(LLAMA70, H100, 1000, 1000, tp=8, weight_dtype="fp8", kv_dtype="fp8")
    # 256 points of a geometric grid from 1 to 1,024 rounded to whole clients: 1, 2, ... 1,024, each once
    c = df["concurrency"].to_numpy()
    assert c[0] == 1 and c[-1] == 1024 and np.all(c == np.round(c)) and np.all(np.diff(c) > 0)
    assert len(df) == len(np.unique(np.round(np.geomspace(1, 1024, 256))))
    one = serving_estimate(LLAMA70, H100, 1000, 1000, concurrency=float(df["concurrency"][100]), tp=8,
                           weight_dtype="fp8", kv_dtype="fp8")
    assert df["tokens_per_s_per_gpu"][100] == pytest.approx(one.output_tokens_per_s_per_gpu, rel=1e-9)
    assert df["tpot_s"][100] == pytest.approx(one.tpot.estimate_s, rel=1e-9)
    small = df[df["concurrency"] <= 64]
    assert np.all(np.diff(small["tokens_per_s_per_gpu"]) > 0)
    assert np.all(np.diff(small["tokens_per_s_per_user"]) < 0)
    assert np.all(df["tokens_per_s_per_gpu"] <= df["bound_tokens_per_s_per_gpu"])


@pytest.mark.timeout(1800)  # two whole fits: about 5 minutes on a quiet 2-core machine, past pytest.ini's 600 s when busy
def test_fit_is_deterministic_and_reproduces_the_stored_constants():
    from calc.serving_fit import fit_serving_params, prepare_rows, read_measurements
    stored = load_serving_params()
    rows = read_measurements()
    prepared = prepare_rows(rows, stored)
    first = fit_serving_params(rows, stored, prepared=prepared)
    again = fit_serving_params(rows, stored, prepared=prepared)
    for k in PARAM_KEYS:
        assert first["params"][k]["value"] == again["params"][k]["value"], k
        # the stored file is this fit's output (python -m calc.serving_fit), to its 4 significant digits
        assert first["params"][k]["value"] == pytest.approx(stored["params"][k]["value"], rel=0.02), k
    assert stored["fitted"]["rows"] == len(prepared[0])
    # and so is its coverage, the engines, accelerators and architecture traits of the rows it read
    assert first["coverage"] == stored["coverage"]


@pytest.mark.parametrize("notes,limits", [
    ("latency limits TTFT 2000 ms and TPOT 200 ms at the 99th percentile", (2.0, 0.2)),   # the data set's words
    ("TTFT limit 2 s, TPOT limit 200 ms", (2.0, 0.2)),
    ("latency constraints: TTFT <= 450 ms, TPOT <= 40 ms", (0.45, 0.04)),
    ("SLO: TTFT 500ms and TPOT 30ms", (0.5, 0.03)),
    ("target TTFT of 0.45 s and TPOT of 0.04 s", (0.45, 0.04)),
    ("llama2-70b.Server.ttft_latency = 2000, llama2-70b.Server.tpot_latency = 200", (2.0, 0.2)),  # mlperf.conf, ms
    ("TTFT limit: 2000 ms, TPOT: 200 ms", (2.0, 0.2)),                      # the first's word stands for both
    ("TTFT target 2,000 ms; TPOT target 200 ms", (2.0, 0.2)),
    ("TTFT limit 2 s. TPOT limit 200 ms", (2.0, 0.2)),
    ("limits: TPOT 200 ms and TTFT 2000 ms", (2.0, 0.2)),                    # TPOT first
    ("TTFT 900 ms (limit 2000 ms), TPOT 35 ms (limit 200 ms)", (2.0, 0.2)),
    ("TTFT < 2 s and TPOT < 100 ms (SLO)", (2.0, 0.1)),                      # a comparator is a limit
    ("TTFT limit 2 min, TPOT limit 2000 us", (120.0, 0.002)),                # units: 2 min = 120 s, 2000 us = 2 ms
    ("p99 TTFT 350 ms and p99 TPOT 40 ms", None),     # measured percentiles, not limits
    ("TTFT 120 ms, TPOT 20 ms at 16 requests/s", None),
    ("TTFT limit 2 s. Measured TPOT 35 ms.", None),   # the TPOT beside no limit's word, in another sentence
    # a limit's word that marks nothing: negated, met, or about something else
    ("no latency limits; measured TTFT 350 ms and TPOT 40 ms", None),
    ("latency constraints were not set; TTFT 900 ms, TPOT 35 ms", None),
    ("the run met its SLO; TTFT 350 ms and TPOT 40 ms (p99)", None),
    ("SLO attainment 95%: TTFT 350 ms and TPOT 40 ms", None),
    ("target rate 8 qps, TTFT 350 ms, TPOT 40 ms", None),
    ("max_num_seqs limit 256, TTFT 350 ms, TPOT 40 ms", None),
    ("TTFT limit 2000 ms, p99 TPOT 180 ms", None),                           # the TPOT is a measured p99
    ("TTFT limit 2000 ms and TPOT limit 200 ms were not met", None),         # negated after the limits
    # a negation in another clause is about something else
    ("prefix caching not used; latency limits TTFT 2000 ms and TPOT 200 ms", (2.0, 0.2)),
    ("No speculative decoding. Limits: TTFT 2 s, TPOT 200 ms", (2.0, 0.2)),
    ("", None),
])
def test_latency_limits_are_read_however_a_row_states_them(notes, limits):
    got = calc.run_limits.stated_latency_limits(notes)
    assert got == (None if limits is None else pytest.approx({"ttft_s": limits[0], "tpot_s": limits[1]}))


def test_an_mlperf_rate_row_that_states_no_limits_takes_its_benchmarks(tmp_path):
    # mlcommons/inference loadgen/mlperf.conf: llama2-70b Server 2000 / 200 ms, llama2-70b-interactive 450 / 40 ms,
    # llama3_1-8b-interactive 500 / 30 ms. A held-out MLPerf row whose notes lose their limits' words gets the same
    # limits from its benchmark, and so the same prediction row for row; a row naming no MLPerf gets none
    rl = calc.run_limits.run_latency_limits
    assert rl("MLPerf Inference v5.1, Server", "llama-2-70b") == {"ttft_s": 2.0, "tpot_s": 0.2}
    assert rl("", "llama-2-70b", "mlperf-inf51 x-interactive-ttft-ms-mean") == {"ttft_s": 0.45, "tpot_s": 0.04}
    assert rl("mlperf interactive", "llama-3.1-8b") == {"ttft_s": 0.5, "tpot_s": 0.03}
    assert rl("a vLLM run at 10 requests/s", "llama-2-70b") is None and rl("MLPerf Server", "qwen3-32b") is None
    # a scenario is needed, and Offline has no latency limits; Mixtral has a Server benchmark only
    assert rl("MLPerf Inference v5.1", "llama-2-70b") is None and rl("MLPerf Offline", "llama-2-70b") is None
    assert rl("MLPerf interactive", "mixtral-8x7b") is None
    held = pd.read_csv(calc.serving_fit.HOLDOUT_PATH, dtype=str, keep_default_na=False)
    run = held[held["id"].str.startswith("mlperf51-closed-cisco-c885-h200x8-trt-llama2-70b-99-interactive-")]
    # its throughput, mean and median TTFT and TPOT, and their 99th percentiles (under the limits: calc.serving_tails)
    assert len(run) == 7 and run["notes"].str.contains("latency limits TTFT 450 ms and TPOT 40 ms").all()
    bare = run.assign(notes=run["notes"].str.replace(r"latency limits TTFT [\d.,]+ ms and TPOT [\d.,]+ ms", "",
                                                        regex=True), source_id="a-copy-of-my-own")
    tables = []
    for i, frame in enumerate((run, bare)):
        path = tmp_path / f"run{i}.csv"   # a file of its own: its source need not be in serving_sources.csv
        frame.to_csv(path, index=False)
        tables.append(calc.serving_fit.holdout_table(path=path)[0].set_index("id")["predicted"])
    assert len(tables[0]) == 7 and tables[1].equals(tables[0])
    # the public API takes them by name too: the same estimate as the dict
    row = run.iloc[0]
    kw = dict(request_rate_per_s=float(row["request_rate_per_s"]) / 8, weight_dtype="fp8", kv_dtype="fp8",
              engine="trtllm")
    named = serving_estimate("llama-2-70b", "h200", 222, 293, latency_limits="MLPerf interactive", **kw)
    given = serving_estimate("llama-2-70b", "h200", 222, 293, latency_limits={"ttft_s": 0.45, "tpot_s": 0.04}, **kw)
    assert named.tpot.estimate_s == given.tpot.estimate_s and named.ttft.estimate_s == given.ttft.estimate_s
    with pytest.raises(ValueError, match="no server benchmark of qwen3-32b; its server benchmarks are of llama-2-70b"):
        serving_estimate("qwen3-32b", "h200", 222, 293, latency_limits="mlperf server", **kw)
    with pytest.raises(ValueError, match="no interactive benchmark of mixtral-8x7b"):
        serving_estimate("mixtral-8x7b", "h200", 222, 293, latency_limits="mlperf interactive", **kw)
    for text in ("fast", "", "mlperf banana", "mlperf offline", "MLPerf"):
        with pytest.raises(ValueError, match="as text, 'mlperf server' or 'mlperf interactive'"):
            serving_estimate("llama-2-70b", "h200", 222, 293, latency_limits=text, **kw)


def test_a_closed_loops_stated_rounds_are_the_public_estimates_rounds():
    # aiconfigurator's vLLM run of gpt-oss-120b on a B200 (1,024 / 8,192 tokens, 128 clients, fixed lengths): its
    # notes say "20 rounds of C requests", which the fit reads as serving_estimate's rounds=20; the same row stating
    # none, as one burst throughout (rounds=1). Each reading is the public estimate's with the same convention, to
    # the bit, and the burst's TTFT is the longer: every prompt of the round waits for those prefilled before it
    from calc.serving_fit import closed_loop_rounds, predict_rows, prepare_rows, read_measurements
    from calc.serving_params import param_values
    df = read_measurements()
    r = df[df["id"] == "aic-2026-03-25-gpt-oss-120b-b200-sxm-vllm-fp4-agg-1024x8192-c128-tp1-0-ep1-0-616-ttft"]
    assert len(r) == 1 and "20 rounds of C requests" in r["notes"].iat[0]
    prm = load_serving_params()
    x = r.iloc[0]
    predicted = {}
    for words, rounds in (("20 rounds of C requests", 20.0), ("", None)):
        row = r.assign(notes=r["notes"].str.replace("20 rounds of C requests", words, regex=False))
        assert closed_loop_rounds("concurrency", 128, row["notes"].iat[0].lower()) == rounds
        rows, comps, _ = prepare_rows(row, prm)
        predicted[words] = float(predict_rows(rows, comps, param_values(prm))[0])
        est = serving_estimate("gpt-oss-120b", "b200", 1024, 8192, concurrency=128, weight_dtype="mxfp4",
                               engine="vllm", engine_version=str(x["engine_version"]), lengths="fixed",
                               rounds=rounds or 1.0)
        assert est.ttft.estimate_s * 1e3 == pytest.approx(predicted[words], rel=1e-9)
    assert predicted[""] > predicted["20 rounds of C requests"]
    assert closed_loop_rounds("rate", None, "20 rounds of c requests") is None


def test_a_file_of_ones_own_is_scored_row_by_row_and_its_unreadable_rows_are_named(tmp_path):
    # the first 12 held-out rows, two of them broken (a model calc has no preset of, a value that is not a number):
    # the other 10 are scored exactly as in the shipped file, the two named by their line (header = line 1)
    from calc.serving_fit import holdout_table
    held = pd.read_csv(calc.serving_fit.HOLDOUT_PATH, dtype=str, keep_default_na=False).head(12)
    broken = held.copy()
    broken.loc[3, "model"], broken.loc[5, "value"] = "llama-9-1t", "fast"
    broken.to_csv(tmp_path / "mine.csv", index=False)
    table, skipped = holdout_table(path=tmp_path / "mine.csv")
    shipped = holdout_table()[0].set_index("id")["predicted"]
    assert len(table) == 10 and (table.set_index("id")["predicted"] == shipped.loc[table["id"]]).all()
    assert [where for where, _ in skipped[:2]] == ["mine.csv line 5", "mine.csv line 7"]
    assert "unknown model preset 'llama-9-1t'" in skipped[0][1] and "got 'fast'" in skipped[1][1]
    with pytest.raises(ValueError, match="unknown model preset 'llama-9-1t'"):   # an upload is still refused whole
        calc.measurements.load_measurements(tmp_path / "mine.csv")


def test_held_out_rows_are_predicted_by_the_public_estimate_and_their_stored_figure_is_reproduced():
    from calc.serving_fit import error_summary, holdout_table
    table, skipped = holdout_table()
    # every row is either predicted or skipped with a reason
    assert len(table) + len(skipped) == len(pd.read_csv(calc.serving_fit.HOLDOUT_PATH))
    assert all(isinstance(why, str) and why for _, why in skipped)
    # the stored validation (written by python -m calc.serving_fit with the same parameters) is this table's: its
    # means and medians, and apart its percentiles (calc.serving_tails)
    centre = table["statistic"].isin(["mean", "median"])
    assert load_serving_params()["validation"]["held_out_rows"] == error_summary(table.loc[centre, "log_ratio"])
    assert load_serving_params()["validation"]["held_out_tail_rows"] == error_summary(table.loc[~centre, "log_ratio"])
    tails = set(table.loc[~centre, "statistic"])
    assert (~centre).sum() >= 300 and "p99" in tails and tails <= {"p90", "p95", "p99", "p99.9"}  # p99.9: vLLM's Kimi-K2.5 recipe
    # one MLPerf v4.1 Server row through the public API: Llama-2-70B fp8 on one H200 (TP1, TensorRT-LLM) at its
    # Poisson rate, tuned to its latency limits (TTFT 2 s, TPOT 200 ms at the 99th percentile, stated in its
    # notes); serving_estimate solves Little's law itself (calc.serving._solve_rate) and the edge's engine by
    # bisection where the table interpolates prepare_rows' grid, so the two agree to within 1%, not to the bit
    r = table[(table["accelerator"] == "h200") & (table["metric"] == "tpot_ms") & (table["statistic"] == "mean")
              & (table["model"] == "llama-2-70b")].iloc[0]
    row = calc.serving_fit.read_measurements(calc.serving_fit.HOLDOUT_PATH).set_index("id").loc[r["id"]]
    est = serving_estimate(calc.get_model("llama-2-70b"), calc.get_accelerator("h200"), int(row["input_len"]),
                           int(row["output_len"]), request_rate_per_s=float(row["request_rate_per_s"]),
                           tp=int(row["tp"]), replicas=int(row["dp"]), weight_dtype=row["weight_dtype"],
                           kv_dtype=row["kv_dtype"], engine="trtllm", engine_version=str(row["engine_version"]),
                           latency_limits=calc.run_limits.run_latency_limits(row["notes"]))
    assert calc.run_limits.run_latency_limits(row["notes"]) == {"ttft_s": 2.0, "tpot_s": 0.2}
    assert est.tpot.estimate_s * 1e3 == pytest.approx(r["predicted"], rel=0.01)
    assert np.log(row["value"] / r["predicted"]) == pytest.approx(r["log_ratio"], abs=1e-12)
    # the same run's TTFT row: both paths take the mean at its share of the limit within the latency range
    # (calc.serving.tuned_means)
    ttft = table.set_index("id").loc[r["id"].replace("tpot-ms", "ttft-ms")]
    assert est.ttft.estimate_s * 1e3 == pytest.approx(ttft["predicted"], rel=0.01)


def test_prompt_attention_runs_at_the_cache_precision():
    from calc.layout import make_layout
    from calc.serving_terms import attention_extra_s
    one = make_layout(LLAMA8, 1, 1, 1, 1)
    # Llama-3.1-8B, a 1,024-token prompt: 32 layers x 2 x 32 heads x (128 + 128) = 524,288 FLOPs per attended key,
    # keys 1 + 2 + ... + 1,024 = 524,800 -> 2.7515e11 FLOPs. fp8 weights over a bf16 cache on an H100: the bound
    # charged them at 1,979 TFLOP/s, they run at 989: 2.7515e11 x (1 / 989e12 - 1 / 1979e12) = 139.2 us.
    assert attention_extra_s(LLAMA8, H100, 1024, one, "fp8", "bf16") == pytest.approx(139.17e-6, rel=1e-3)
    assert attention_extra_s(LLAMA8, H100, 1024, one, "fp8", "fp8") == 0      # fp8 cache: fp8 attention
    assert attention_extra_s(LLAMA8, H100, 1024, one, "bf16", "bf16") == 0    # the bound's own rate


def test_trtllm_bench_sizes_its_batch_as_its_tuning_code():
    from calc.layout import make_layout
    from calc.serving import trtllm_bench_max_batch
    one = make_layout(LLAMA8, 1, 1, 1, 1)
    # tensorrt_llm/bench/build/tuning.py: fp8 Llama-3.1-8B on an H100 whose driver reports 85.52e9 B, ISL + OSL =
    # 2,000: 0.95 x (85.52e9 - 8.030e9 weights) = 73.62e9 B of cache / (2,000 x 65,536 B per sequence) = 561.7 ->
    # 561, rounded up to a multiple of 128 (256 <= 561 < 1,024): 640. At 256 tokens: 73.62e9 / 16.78e6 = 4,387,
    # capped at 4,096.
    assert trtllm_bench_max_batch(LLAMA8, H100, 2000, one, "fp8", "fp8") == 640
    assert trtllm_bench_max_batch(LLAMA8, H100, 256, one, "fp8", "fp8") == 4096


def test_an_offline_estimate_on_tensorrt_llm_can_run_the_engine_trtllm_bench_builds():
    # NVIDIA's offline tables are trtllm-bench runs: the public estimate takes that engine on request (max batch
    # 640 for fp8 Llama-3.1-8B at 1,000 + 1,000 tokens, as above), and equals the fit's prediction of a
    # trtllm-bench row of the same run (an offline row of unstated size: the steady state)
    import pandas as pd
    from calc.serving_fit import predict_rows, prepare_rows
    from calc.serving_params import param_values
    kw = dict(weight_dtype="fp8", kv_dtype="fp8", engine="trtllm", engine_version="1.0.0")
    bench = serving_estimate(LLAMA8, H100, 1000, 1000, engine_options={"trtllm_bench": True}, **kw)
    serve = serving_estimate(LLAMA8, H100, 1000, 1000, **kw)  # the LLM API's defaults, the default
    from calc.serving_terms import OFFLINE_ARRIVALS
    assert bench.decode_batch <= 640 and "max batch 640" in bench.arrivals and serve.arrivals == OFFLINE_ARRIVALS
    assert bench.arrivals.startswith(OFFLINE_ARRIVALS + ", on the engine trtllm-bench throughput builds")
    assert bench.decode_batch != serve.decode_batch
    row = pd.DataFrame([dict(id="t", source_id="t", model="llama-3.1-8b", model_family="llama", accelerator="h100-sxm",
                             n_gpus=1, tp=1, pp=1, ep=1, dp=1, engine="trtllm", engine_version="1.0.0",
                             weight_dtype="fp8", kv_dtype="fp8", input_len=1000, output_len=1000, len_dist="fixed",
                             concurrency=pd.NA, request_rate_per_s=float("nan"), mode="offline",
                             metric="output_tok_per_s", statistic="mean", value=1.0, notes="trtllm-bench throughput")])
    rows, comps, skipped = prepare_rows(row)
    assert not skipped
    fitted = predict_rows(rows, comps, param_values(load_serving_params()))[0]
    assert bench.output_tokens_per_s == pytest.approx(fitted, rel=1e-9)
    with pytest.raises(ValueError, match="the engine trtllm-bench builds; the engine here is vllm"):
        serving_estimate(LLAMA8, H100, 1000, 1000, engine="vllm", engine_options={"trtllm_bench": True})


def test_a_burst_of_n_requests_decodes_at_most_n_together():
    from calc.serving_fit import prepare_rows, read_measurements
    rows = read_measurements()
    burst = rows[rows["id"] == "trtllm-v014-online-h200-llama-3.1-8b-tp1-202-214-qpsinf-itl_ms"]
    assert int(burst["concurrency"].iloc[0]) == 500      # the page's 500 requests, all sent at once
    used, comps, _ = prepare_rows(burst)
    assert comps["B"][0] == 500 and comps["limit"][0] == "concurrency"   # its KV cache would hold more


def test_collectives_over_pcie_get_their_own_efficiency():
    from calc.layout import make_layout
    from calc.serving import serving_components
    l40s = calc.get_accelerator("l40s")   # PCIe Gen4, no NVLink
    pcie = serving_components(LLAMA70, l40s, 128, 128, [8], make_layout(LLAMA70, 4, 1, 1, 1), "fp8", "fp8")
    nvlink = serving_components(LLAMA70, H100, 128, 128, [8], make_layout(LLAMA70, 4, 1, 1, 1), "fp8", "fp8")
    alone = serving_components(LLAMA8, l40s, 128, 128, [8], make_layout(LLAMA8, 1, 1, 1, 1), "fp8", "fp8")
    assert pcie["pcie"][0] == 1 and nvlink["pcie"][0] == 0 and alone["pcie"][0] == 0   # one GPU: no collective
    p = load_serving_params()["params"]
    assert 0.05 <= p["comm_efficiency_pcie"]["value"] <= 1.0
    # the same all-reduce bytes take 1 / comm_efficiency_pcie instead of 1 / comm_efficiency of their bound: the
    # decode step's efficiency part holds comm_s / e - comm_s, so e = 0.25 against 0.5 adds comm_s x (4 - 2)
    from calc.serving import combine
    from calc.serving_params import engine_costs, param_values
    v = param_values(load_serving_params())
    costs = engine_costs(v, "vllm")
    for comp, moves in ((pcie, True), (nvlink, False)):
        quarter = combine(comp, dict(v, comm_efficiency_pcie=0.25, comm_efficiency=0.5), costs)
        half = combine(comp, dict(v, comm_efficiency_pcie=0.5, comm_efficiency=0.5), costs)
        extra = quarter["tpot_efficiency"][0] - half["tpot_efficiency"][0]
        assert extra == pytest.approx(2.0 * comp["comm_s"][0] if moves else 0.0, rel=1e-9, abs=1e-15)
    assert pcie["comm_s"][0] > 0


def test_an_arrival_waits_for_the_step_in_flight():
    # Llama-3.1-8B on one H100 at 5 requests/s of 512 + 256 tokens: about 10 requests in service, so an arrival
    # almost always finds a step running and waits on average half of it (the mean residual of a deterministic
    # step) before its prompt is admitted. The prompts ahead of it share each step's weight read, so they hold
    # the engine for their matmuls only: 2 x 8.0e9 x 512 FLOP / (989e12 x ~0.5) = ~17 ms each, a load of ~0.08
    # at 5/s and an M/D/1 wait under 1 ms. The queue is then half a TPOT plus at most ~2 ms.
    e = serving_estimate(LLAMA8, H100, 512, 256, request_rate_per_s=5.0)
    assert e.concurrency > 5
    assert e.tpot.estimate_s / 2 * 0.99 <= e.ttft.queue_s <= e.tpot.estimate_s / 2 + 2e-3
    # one client alone never waits for a step: it is the only one running
    assert serving_estimate(LLAMA8, H100, 512, 256, concurrency=1).ttft.queue_s == 0.0


def test_an_mxfp4_checkpoint_runs_its_unquantized_layers_at_bf16():
    # gpt-oss-120b (MXFP4 experts; attention, router, embedding and head bf16 by its config.json) on one B200
    # with fp4 engines, one token: dense active parameters 5.712e9 - 36 layers x 4 experts x 3 x 2880^2
    # - 2 x 201,088 x 2880 = 0.970e9, head 0.579e9: 2 x 1.549e9 FLOP x (1 / 2.25e15 - 1 / 9.0e15) = 1.03 us.
    oss = calc.get_model("gpt-oss-120b")
    b200 = with_matmul(calc.get_accelerator("b200"), "low_precision")
    layout = calc.make_layout(oss, 1, 1, 1, 1)
    assert float(unquantized_matmul_extra_s(oss, b200, 1.0, 1.0, layout, "mxfp4")) == pytest.approx(1.03e-6, rel=0.01)
    # no fp4 engine (Hopper runs MXFP4 weight-only at bf16's rate already), or a format that quantizes everything
    assert float(unquantized_matmul_extra_s(oss, H100, 1.0, 1.0, layout, "mxfp4")) == 0.0
    assert float(unquantized_matmul_extra_s(oss, b200, 1.0, 1.0, layout, "nvfp4")) == 0.0


def test_a_burst_prefills_its_prompts_up_front_then_decodes_free_of_them():
    from calc.layout import make_layout
    from calc.serving import serving_components
    from calc.serving_terms import burst_schedule
    # 4 requests of 100 prompt tokens sent at once, a 200-token budget: K = ceil(400 / 200) = 2 prefill steps.
    # Two requests get their first token after step 1, two after step 2: mean 1.5 steps, and by then 2 or 4
    # prompts are prefilled (mean 3). With O = 3 (m = 2 gaps), a step-1 request's first gap is prefill step 2
    # (2 prompts), a step-2 request's gaps are all prompt-free: 2 x 1 / (4 requests x 2 gaps) = 0.5 prompts per gap.
    f, n, pf_n = burst_schedule(np.array([4.0]), 100, 3, 200)
    assert (f[0], n[0], pf_n[0]) == pytest.approx((0.5, 1.5, 3.0))
    # TensorRT-LLM v0.14's online table, QPS INF: 500 requests of 467 + 256 tokens, max_num_tokens 8,192:
    # K = ceil(233,500 / 8,192) = 29, m = 255 >= K - 1, so f = 500 x 28 / (2 x 29 x 255) = 0.9466 prompts per
    # step (the steady state would carry 499 / 256 = 1.949); first token after (29 + 1) / 2 = 15 steps, with
    # 500 x 30 / 58 = 258.6 prompts prefilled. With 16 output tokens (m = 15 < 28): sum_j min(j, 15) = 120 +
    # 13 x 15 = 315, f = (500 / 29) x 315 / (29 x 15) = 12.49.
    f, n, pf_n = burst_schedule(np.array([500.0]), 467, 256, 8192)
    assert (f[0], n[0], pf_n[0]) == pytest.approx((0.94659, 15.0, 258.62), rel=1e-4)
    assert burst_schedule(np.array([500.0]), 467, 16, 8192)[0][0] == pytest.approx(12.485, rel=1e-3)
    # a burst's batch is not capped by the token budget's steady state (budget x O / (I + O) = 16 at O = 16)
    one = make_layout(LLAMA8, 1, 1, 1, 1)
    s = {"max_batch": 2048, "token_budget": 8192, "kv_memory_fraction": 0.9}
    steady = serving_components(LLAMA8, H100, 8000, 16, [500], one, "bf16", "bf16", s)
    burst = serving_components(LLAMA8, H100, 8000, 16, [500], one, "bf16", "bf16", s, burst=True)
    assert steady["B"][0] == 16 and steady["limit"][0] == "token_budget" and burst["B"][0] > 16


def test_a_rate_run_never_holds_more_requests_than_it_sent():
    from calc.serving_fit import _run_requests, prepare_rows, read_measurements
    assert _run_requests("Triton TensorRT-LLM backend, 500 requests per QPS point") == 500
    assert _run_requests("sglang.bench_serving, 2,400 prompts at 8 request/s") == 2400
    assert _run_requests("no size stated") == float("inf")
    rows = read_measurements()
    # Llama-3.1-70B on 4 H200 at 32 requests/s of 467 + 256 tokens: the page served 16 requests/s, so no steady
    # state exists; the run's 500 requests bound the batch its rate grid may reach (its cache would hold 1,879)
    run = rows[rows["id"] == "trtllm-v014-online-h200-llama-3.1-70b-tp4-467-256-qps32-itl_ms"]
    assert len(run) == 1 and "500 requests" in run["notes"].iloc[0]
    used, comps, _ = prepare_rows(run)
    assert comps["B"].max() == 500


def test_a_finite_run_at_a_rate_completes_its_requests_over_their_arrivals_and_the_last_latency():
    from calc.serving import rate_run_requests_per_s
    # by hand: 500 requests at 8/s, each 7.7 s end to end: 500 / (499 / 8 + 7.7) = 500 / 70.075 = 7.1352 per second
    assert float(rate_run_requests_per_s(8.0, 500, 7.7, 8.0 * 7.7, True, 5.0)) == pytest.approx(7.1352, rel=1e-4)
    # MLPerf's 24,576 requests at 8.6169/s, 45 s each: 24,576 / (24,575 / 8.6169 + 45) = 8.4835/s, 0.9845 of the rate
    assert float(rate_run_requests_per_s(8.6169, 24576, 45.0, 387.8, True, 20.0)) == pytest.approx(8.4835, rel=1e-4)
    # beyond capacity: 256 requests in service for 20 s each complete 12.8/s once full; 500 sent at 32/s arrive
    # within 499 / 32 = 15.6 s, so the run lasts 5.6 s (one request alone) + 500 / 12.8 = 44.66 s: 11.195 per second
    assert float(rate_run_requests_per_s(32.0, 500, 20.0, 256, False, 5.6)) == pytest.approx(500 / 44.6625, rel=1e-9)
    # a run of unstated size: the steady state, the rate or the capacity
    out = rate_run_requests_per_s(np.array([4.0, 32.0]), np.inf, np.array([5.0, 20.0]), np.array([20.0, 256]),
                                  np.array([True, False]), 1.0)
    assert out.tolist() == pytest.approx([4.0, 12.8], rel=1e-12)


def test_the_public_estimate_of_a_finite_run_at_a_rate_divides_its_requests_by_its_duration():
    # Llama-3.1-70B on 4 H100 (TensorRT-LLM 0.14) at 8 requests/s: endless, the throughput is the rate; a run of 500
    # requests completes 500 / (499 / 8 + e2e) per second, e2e the estimate's own end-to-end latency at that rate
    kw = dict(tp=4, engine="trtllm", engine_version="0.14.0")
    endless = serving_estimate("llama-3.1-70b", "h100-sxm", 467, 256, request_rate_per_s=8.0, **kw)
    run = serving_estimate("llama-3.1-70b", "h100-sxm", 467, 256, request_rate_per_s=8.0, num_prompts=500, **kw)
    assert endless.requests_per_s == pytest.approx(8.0, rel=1e-12)
    assert run.requests_per_s == pytest.approx(500 / (499 / 8 + run.e2e_s), rel=1e-9)
    assert run.output_tokens_per_s == pytest.approx(run.requests_per_s * 256, rel=1e-9)
    assert run.e2e_s == pytest.approx(endless.e2e_s, rel=1e-12)  # the times are the rate's
    from calc.serving import FINITE_RATE_RUN_WORDS
    assert FINITE_RATE_RUN_WORDS in run.notices and FINITE_RATE_RUN_WORDS not in endless.notices
    # 16 requests/s is above the estimate's capacity (within its range): once full, the engine completes at most
    # C / e2e per second, so the run completes fewer than that and fewer than it was sent
    fast = serving_estimate("llama-3.1-70b", "h100-sxm", 467, 256, request_rate_per_s=16.0, num_prompts=500, **kw)
    assert fast.requests_per_s < fast.concurrency / fast.e2e_s < 16.0
    assert FINITE_RATE_RUN_WORDS in fast.notices


def test_a_finite_runs_throughput_at_a_rate_is_predicted_from_its_last_latency():
    # TensorRT-LLM v0.14's online table: Llama-3.1-70B on 4 H100 (TP4) at 8 requests/s, 500 requests of 467 + 256
    # tokens, served 7 requests/s. The row's prediction is 500 / (499 / 8 + e2e) with e2e the predicted end-to-end
    # latency of the same run at that rate (its rate row's arrays, Little's law's root), the engine keeping up
    from calc.serving_fit import predict_rows, prepare_rows, read_measurements, row_points
    from calc.serving_params import load_serving_params, param_values
    rows = read_measurements()
    run = rows[rows["id"] == "trtllm-v014-online-h100-sxm-llama-3.1-70b-tp4-467-256-qps8-requests_per_s"]
    assert len(run) == 1 and run["value"].iloc[0] == 7.0
    values = param_values(load_serving_params())
    used, comps, skipped = prepare_rows(run)
    assert not skipped and len(used) == 1
    arrays, weights = row_points(used, comps, values)
    e2e = sum(w * float(arrays["e2e_s"][i]) for i, w in weights.items())
    assert 3.0 < e2e < 20.0  # 256 tokens at tens of ms each
    predicted = float(predict_rows(used, comps, values)[0])
    assert predicted == pytest.approx(500 / (499 / 8 + e2e), rel=1e-9)
    assert abs(predicted / 7.0 - 1) <= 0.25 and predicted < 8.0


def test_engine_options_and_version_change_only_what_they_name():
    # SGLang's --scheduler-recv-interval 30 at 32 clients: an arrival waits for the poll, 30 / 2 steps instead of
    # 1 / 2 (the clients keep the engine stepping), so TTFT grows by exactly 14.5 TPOTs and TPOT is unchanged
    m, a = calc.get_model("deepseek-v3"), calc.get_accelerator("b200")
    kw = dict(concurrency=32, tp=4, weight_dtype="nvfp4", kv_dtype="fp8", engine="sglang")
    one = serving_estimate(m, a, 922, 922, **kw)
    polled = serving_estimate(m, a, 922, 922, engine_options={"recv_interval": 30}, **kw)
    assert polled.tpot.estimate_s == pytest.approx(one.tpot.estimate_s)
    assert polled.ttft.estimate_s - one.ttft.estimate_s == pytest.approx(14.5 * one.tpot.estimate_s, rel=1e-9)
    # TensorRT-LLM 0.20 ran TensorRT engines: no eager prompt step, so its TTFT is below the current release's
    llama, h100 = calc.get_model("llama-3.1-8b"), calc.get_accelerator("h100-sxm")
    now = serving_estimate(llama, h100, 2048, 128, concurrency=1, engine="trtllm")
    old = serving_estimate(llama, h100, 2048, 128, concurrency=1, engine="trtllm", engine_version="0.20.0")
    assert old.ttft.estimate_s < now.ttft.estimate_s
    # a smaller max batch caps the decode batch
    capped = serving_estimate(llama, h100, 512, 512, concurrency=64, engine="vllm", engine_options={"max_batch": 16})
    assert capped.decode_batch == 16 and capped.batch_limit == "max_batch"
    for bad, words in (({"foo": 1}, "unknown engine option 'foo'"), ({"max_batch": 0}, "positive"),
                       ({"eager_prefill": "yes"}, "True or False"), ({"kv_memory_fraction": 2}, "at most 1"),
                       ([1], "must be a dict")):
        with pytest.raises(ValueError, match=words):
            serving_estimate(llama, h100, 512, 512, concurrency=4, engine_options=bad)


def test_multi_step_scheduling_pays_the_host_work_once_per_n_decode_steps():
    # vLLM 0.8.5 (V0 engine, no async scheduling) with --num-scheduler-steps 10: the host's work per step (the
    # scheduler and output handling, step_fixed_s + seq_fixed_s x B) is paid once per 10 decode steps, so the
    # fixed cost's host part is a tenth and TPOT falls by exactly 9/10 of it, every other part unchanged
    m, a = LLAMA70, calc.get_accelerator("mi300x")
    kw = dict(concurrency=256, tp=8, weight_dtype="fp8", kv_dtype="fp8", engine="vllm", engine_version="0.8.5")
    one = serving_estimate(m, a, 128, 2048, **kw)
    ten = serving_estimate(m, a, 128, 2048, engine_options={"scheduler_steps": 10}, **kw)
    host1, host10 = dict(one.tpot.fixed_parts)["host"], dict(ten.tpot.fixed_parts)["host"]
    assert host1 > 0 and host10 == pytest.approx(host1 / 10, rel=1e-12)
    assert one.tpot.estimate_s - ten.tpot.estimate_s == pytest.approx(0.9 * host1, rel=1e-9)
    assert dict(one.tpot.fixed_parts)["layers"] == dict(ten.tpot.fixed_parts)["layers"]
    # a release without it (0.10.1 removed it) or a current build: the same estimate as without, with a notice
    for version, words in (("0.11.0", "vLLM 0.11.0 has none"), ("", "a current build has none")):
        plain = serving_estimate(m, a, 128, 2048, **dict(kw, engine_version=version))
        asked = serving_estimate(m, a, 128, 2048, engine_options={"scheduler_steps": 10},
                                 **dict(kw, engine_version=version))
        assert asked.tpot.estimate_s == plain.tpot.estimate_s
        assert any("scheduler_steps 10 is not taken" in n and words in n for n in asked.notices)
    for bad, words in ((1.5, "whole number of decode steps"), (0, "positive"), ("ten", "positive")):
        with pytest.raises(ValueError, match=words):
            serving_estimate(m, a, 128, 2048, engine_options={"scheduler_steps": bad}, **kw)
    # a batch, a token budget or a poll interval is counted in whole units: 512.5 sequences is refused, 512.0 taken
    for option, words in (("max_batch", "whole number of sequences"), ("token_budget", "whole number of tokens")):
        with pytest.raises(ValueError, match=words):
            serving_estimate(m, a, 128, 2048, engine_options={option: 512.5}, **kw)
    assert serving_estimate(m, a, 128, 2048, engine_options={"max_batch": 512.0}, **kw).decode_batch <= 512
    with pytest.raises(ValueError, match="vLLM's --num-scheduler-steps .* or SGLang's --num-continuous-decode-steps"):
        serving_estimate(m, a, 128, 2048, **dict(kw, engine="trtllm"), engine_options={"scheduler_steps": 10})
    # SGLang's --num-continuous-decode-steps: the same setting, taken in any release, without a notice; its overlap
    # scheduler already hides the host's work, so what it adds is the wait for the next scheduler call in TTFT
    sg = dict(kw, engine="sglang", engine_version="0.4.3")
    sg1 = serving_estimate(m, a, 128, 2048, **sg)
    sg10 = serving_estimate(m, a, 128, 2048, engine_options={"scheduler_steps": 10}, **sg)
    assert not any("scheduler_steps" in n for n in sg10.notices)
    assert sg10.ttft.estimate_s > sg1.ttft.estimate_s and sg10.tpot.estimate_s <= sg1.tpot.estimate_s


def test_a_row_that_states_multi_step_scheduling_is_predicted_with_it():
    # the fit's path reads --num-scheduler-steps from a row's notes where the row's release and engine have it: a V0
    # run of vLLM 0.8.5 at 1,024 sequences (MI300X, Llama-3.1-70B FP8, 128 in / 2,048 out) is predicted faster with
    # it; the same row that names the V1 engine, or a release after 0.10.1, is predicted as without the flag
    base = dict(id="r", source_id="s", model="llama-3.1-70b", model_family="llama", accelerator="mi300x", n_gpus=8,
                tp=8, pp=1, ep=1, dp=1, engine="vllm", engine_version="0.8.5", weight_dtype="fp8", kv_dtype="fp8",
                input_len=128, output_len=2048, len_dist="fixed", concurrency=1024, request_rate_per_s=np.nan,
                mode="offline", metric="output_tok_per_s", statistic="mean", value=10000.0, notes="")
    notes = ["benchmark_throughput.py", "benchmark_throughput.py --num-scheduler-steps 10",
             "--num-scheduler-steps 10, which the image's V1 engine does not take", "num_scheduler_steps: 10"]
    rows = pd.DataFrame([dict(base, id=f"r{k}", notes=n) for k, n in enumerate(notes)]
                        + [dict(base, id="r9", engine_version="0.10.2", notes=notes[1])])
    values = calc.serving_params.param_values(load_serving_params())
    used, comps, skipped = calc.serving_fit.prepare_rows(rows)
    assert not skipped
    plain, steps, v1, spelled, later = calc.serving_fit.predict_rows(used, comps, values)
    assert steps > 1.2 * plain and spelled == pytest.approx(steps, rel=1e-12)
    assert v1 == pytest.approx(plain, rel=1e-12)
    later_plain = calc.serving_fit.predict_rows(*calc.serving_fit.prepare_rows(
        pd.DataFrame([dict(base, engine_version="0.10.2")]))[:2], values)[0]
    assert later == pytest.approx(later_plain, rel=1e-12)


def test_ranges_stop_at_the_bound_and_engine_inputs_are_checked():
    # the held-out spread reaches below 1x on the low side, but no engine is faster than the roofline's bound:
    # the low end of a latency range and the high end of a throughput range stop at it
    m, a = calc.get_model("llama-3.1-70b"), calc.get_accelerator("h100-sxm")
    e = serving_estimate(m, a, 1000, 1000, concurrency=64, tp=8, weight_dtype="fp8", kv_dtype="fp8", engine="vllm")
    for t in (e.tpot, e.ttft):
        assert t.bound_s <= t.low_s <= t.estimate_s <= t.high_s
    assert e.per_gpu_low <= e.output_tokens_per_s_per_gpu <= e.per_gpu_high <= e.bound_output_tokens_per_s_per_gpu
    f = serving_frontier(m, a, 1000, 1000, tp=8, weight_dtype="fp8", kv_dtype="fp8")
    assert (f["tokens_per_s_per_gpu_high"] <= f["bound_tokens_per_s_per_gpu"] * (1 + 1e-12)).all()
    assert (f["tokens_per_s_per_user_high"] <= f["bound_tokens_per_s_per_user"] * (1 + 1e-12)).all()
    assert (f["tokens_per_s_per_gpu_high"] >= f["tokens_per_s_per_gpu"]).all()
    # an option of another engine is refused; a version without a number is a current build, with a notice
    kw = dict(concurrency=4, tp=8, weight_dtype="fp8")
    with pytest.raises(ValueError, match="SGLang's --scheduler-recv-interval; the engine here is vllm"):
        serving_estimate(m, a, 1000, 100, engine="vllm", engine_options={"recv_interval": 4}, **kw)
    with pytest.raises(ValueError, match="attention_dp_config"):
        serving_estimate(m, a, 1000, 100, engine="sglang", engine_options={"adp_balance_timeout_iters": 60}, **kw)
    banana = serving_estimate(m, a, 1000, 100, engine="trtllm", engine_version="banana", **kw)
    assert any("'banana' names no release number" in n for n in banana.notices)
    assert banana.tpot.estimate_s == serving_estimate(m, a, 1000, 100, engine="trtllm", **kw).tpot.estimate_s
    # a request past the trained context (131,072 for Llama 3.1) is computed, with a notice
    far = serving_estimate(m, a, 300_000, 1000, concurrency=1, tp=8, weight_dtype="fp8", kv_dtype="fp8")
    assert any("exceed" in n and "131,072" in n for n in far.notices)


def test_a_mixture_of_experts_request_pays_a_cost_per_moe_layer_and_gpu_before_its_first_token():
    # request_moe_overhead_s.<engine> x MoE layers x GPUs of the replica joins TTFT's fixed part. At one client nothing
    # waits for a slot and no queue term depends on it, so moving SGLang's from 0 to 0.1 ms moves Qwen3-235B-A22B's
    # TTFT (94 MoE layers) on TP8 by 0.1 ms x 94 x 8 = 75.2 ms and on TP4 by 37.6 ms, a dense model's by nothing,
    # no TPOT, and another engine's TTFT not at all
    base = load_serving_params()
    zero, some = copy.deepcopy(base), copy.deepcopy(base)
    zero["params"]["request_moe_overhead_s.sglang"]["value"] = 0.0
    some["params"]["request_moe_overhead_s.sglang"]["value"] = 1e-4
    qwen = calc.get_model("qwen3-235b-a22b")
    assert sum(k == "moe" for k in qwen.ffn_kinds) == 94
    for model, tp, want_s in ((qwen, 8, 1e-4 * 94 * 8), (qwen, 4, 1e-4 * 94 * 4), (LLAMA70, 8, 0.0)):
        a = serving_estimate(model, H100, 1024, 256, concurrency=1, tp=tp, engine="sglang", weight_dtype="fp8",
                             params=zero)
        b = serving_estimate(model, H100, 1024, 256, concurrency=1, tp=tp, engine="sglang", weight_dtype="fp8",
                             params=some)
        assert b.ttft.estimate_s - a.ttft.estimate_s == pytest.approx(want_s, rel=1e-9, abs=1e-12)
        assert b.ttft.fixed_s - a.ttft.fixed_s == pytest.approx(want_s, rel=1e-9, abs=1e-12)
        assert b.tpot.estimate_s == pytest.approx(a.tpot.estimate_s, rel=1e-12)
    other = [serving_estimate(qwen, H100, 1024, 256, concurrency=1, tp=8, engine="vllm", weight_dtype="fp8",
                              params=prm).ttft.estimate_s for prm in (zero, some)]
    assert other[0] == other[1]
    # the fitted values: tens of ms to about a tenth of a second for a large MoE model on an 8-GPU server with
    # TensorRT-LLM (DeepSeek-V3: 58 MoE layers x 8 GPUs), and less for vLLM, whose gpt-oss-120b TTFT on B200 does not
    # grow from TP1 to TP8 (InferenceMAX on B200, 1k prompts at 4 and 8 clients, medians: 40, 41, 27 and 35 ms at
    # TP1, 2, 4 and 8)
    fitted = {e: base["params"][f"request_moe_overhead_s.{e}"]["value"] for e in ("vllm", "sglang", "trtllm")}
    assert 0.02 < fitted["trtllm"] * 58 * 8 < 0.3
    assert fitted["vllm"] < fitted["trtllm"]


def test_the_largest_concurrency_within_a_tpot_target_is_the_last_one_the_estimate_keeps_under_it():
    from calc.serving import max_concurrency_within_tpot
    llama3 = calc.get_model("llama-3-8b")
    # the course's week 11, step 4 case (Llama-3-8B at 8k on an H100, TPOT <= 10 ms) picks B = 17 on the bound; a
    # request of 7,936 prompt and 256 output tokens ends at that context
    b = max_concurrency_within_tpot(llama3, H100, 7936, 256, 0.010, 17)
    tpot = lambda c: serving_estimate(llama3, H100, 7936, 256, concurrency=c).tpot.estimate_s  # noqa: E731
    # the answer meets the target and one more request does not (the bisection's claim, checked one by one)
    assert 1 <= b < 17 and tpot(b) <= 0.010 < tpot(b + 1)
    assert all(tpot(c) <= 0.010 for c in range(1, b + 1))
    # the bound's own B meets the target on the bound (calc.cost.max_batch_for_tpot), not by the estimate
    assert calc.cost.max_batch_for_tpot(llama3, H100, 8192, 0.010) >= 17 and tpot(17) > 0.010
    # a target no batch meets, an empty range, a bad target
    assert max_concurrency_within_tpot(llama3, H100, 7936, 256, 1e-6, 17) == 0
    assert max_concurrency_within_tpot(llama3, H100, 7936, 256, 0.010, 0) == 0
    with pytest.raises(ValueError, match="tpot_target_s"):
        max_concurrency_within_tpot(llama3, H100, 7936, 256, 0.0, 17)


def test_pipeline_stages_share_a_steps_prompt_tokens():
    # Llama-3.1-70B fp8 on 4 H100s as TP2 PP2 at 64 clients of 4,096 + 256 tokens: the decode steps carry
    # f = (B - 1) / O prompts each. With the pipeline full of micro-batches, every stage multiplies its own layers
    # of those prompt tokens while the others work on other micro-batches, so a step's cycle grows by each prompt's
    # time over the 2 stages; a prompt alone (its TTFT) still crosses both stages one after the other.
    # The parts combine adds (the sum form of the read and the matmuls): f x (pf_kv / mbu_kv + (pf_c + pf_attn)
    # / mfu_prefill + pf_comm / comm_efficiency), so the mixed step at PP2 is shorter than the same arrays at one
    # stage by exactly half of that.
    from calc.layout import make_layout
    from calc.serving import combine, serving_components
    from calc.serving_params import engine_costs, param_values
    v = param_values(load_serving_params())
    v = dict(v, mfu_prefill_8=0.5, mfu_prefill_16=0.6, mbu_kv=0.8, comm_efficiency=0.5)
    comp = serving_components(LLAMA70, H100, 4096, 256, [64], make_layout(LLAMA70, 2, 2, 1, 1), "fp8", "fp8")
    assert comp["pp"][0] == 2
    one_stage = dict(comp, pp=np.ones_like(comp["pp"]))
    costs = engine_costs(v, "vllm")
    two, one = combine(comp, v, costs), combine(one_stage, v, costs)
    mfu_pf = min(comp["mm"][0] * 0.5, 1.0)  # fp8 prompt matmuls, no MoE, no weight-only kernel
    prompt = comp["f"][0] * (comp["pf_kv_s"][0] / 0.8 + (comp["pf_c_s"][0] + comp["pf_attn_s"][0]) / mfu_pf
                             + comp["pf_comm_s"][0] / 0.5)
    assert prompt > 0
    assert one["tpot_interference"][0] - two["tpot_interference"][0] == pytest.approx(prompt / 2, rel=1e-9)
    # the prompt's own TTFT parts (its prefill alone, stage after stage) are those of one stage's arrays
    assert two["ttft_efficiency"][0] == pytest.approx(one["ttft_efficiency"][0], rel=1e-12)


def test_fp4_weights_on_fp4_tensor_cores_as_the_engines_and_the_fit_run_them():
    from calc.serving_terms import engine_matmul
    b200, h100 = calc.get_accelerator("b200"), calc.get_accelerator("h100-sxm")
    # B200: NVFP4 on its FP4 tensor cores (9.0 PFLOP/s dense in accelerators.json) instead of bf16's 2.25
    acc, notices = engine_matmul(b200, "nvfp4")
    assert acc.compute_flops("nvfp4") == pytest.approx(4 * b200.compute_flops("bf16"))
    assert b200.compute_flops("nvfp4") == b200.compute_flops("bf16")  # calc's default convention: W4A16
    assert len(notices) == 1 and "W4A4" in notices[0]
    # a convention the caller chose is kept; Hopper has no FP4 tensor cores; fp8 is W8A8 already
    assert engine_matmul(with_matmul(b200, "weight_only"), "nvfp4") == (with_matmul(b200, "weight_only"), [])
    assert engine_matmul(h100, "mxfp4") == (h100, [])
    assert engine_matmul(b200, "fp8") == (b200, [])


def test_llama_405b_long_prompts_on_b200_at_pp2_against_mlperf_v51_offline():
    # MLPerf Inference v5.1 closed, Llama-3.1-405B Offline on 8 B200s (NVIDIA's harness on TensorRT-LLM: TP2 PP2,
    # 2 replicas, NVFP4 weights, FP8 cache; prompts of 9,429 tokens on average, outputs 653): 1,624-1,661 tokens/s
    # in the 11 results of calc/data/serving_holdout.csv, which no fit reads. By hand, per replica of 4 GPUs:
    # a prompt is 2 x 405e9 x 9,429 = 7.6e15 FLOP, 0.45 s at 4 x 9.0e15 x 0.47 (FP4 peak, fitted prompt MFU), and
    # 653 decode steps of a 175-sequence batch at ~0.1 s are 0.37 s per request: ~0.8 s a request, 1.2 requests/s,
    # ~1,600 tokens/s for the two replicas. Before the FP4 rule and the pipeline's prompt sharing, 469 tokens/s.
    e = serving_estimate(calc.get_model("llama-3.1-405b"), calc.get_accelerator("b200"), 9429, 653, tp=2, pp=2,
                         replicas=2, weight_dtype="nvfp4", kv_dtype="fp8", engine="trtllm")
    assert 1650 / 1.25 <= e.output_tokens_per_s <= 1650 * 1.25


def test_a_file_written_by_other_hands_scores_as_the_shipped_rows(tmp_path):
    # the first 12 held-out rows as a third party writes them: through pandas (concurrency "16.0"), the engine's
    # version as a container image tag (nvcr.io/...:0.11.0 for 0.11.0, read as serving_estimate reads it), the
    # run's date in a date column instead of the notes' words; the predictions are the shipped file's, to the bit
    from calc.serving_fit import holdout_table
    held = pd.read_csv(calc.serving_fit.HOLDOUT_PATH).head(12)
    assert held["engine_version"].notna().any() and held["notes"].str.contains(r"measured \d{4}-\d\d-\d\d").all()
    theirs = held.assign(
        engine_version=held["engine_version"].map(lambda v: v if pd.isna(v) else f"nvcr.io/nvidia/tritonserver:{v}"),
        date=held["notes"].str.extract(r"measured (\d{4}-\d\d-\d\d)")[0],
        notes=held["notes"].str.replace(r"measured \d{4}-\d\d-\d\d", "", regex=True))
    theirs.to_csv(tmp_path / "theirs.csv", index=False)
    table, skipped = holdout_table(path=tmp_path / "theirs.csv")
    shipped = holdout_table()[0].set_index("id")["predicted"]
    assert len(table) == 12 and not skipped
    assert (table.set_index("id")["predicted"] == shipped.loc[table["id"]]).all()


def test_a_file_none_of_whose_rows_can_be_read_gives_an_empty_table_and_every_line(tmp_path):
    from calc.serving_fit import holdout_table
    (tmp_path / "mine.csv").write_text("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,metric,value\n"
                                       "llama-9-1t,h100-sxm,1,vllm,bf16,1000,200,tpot_ms,9\n"
                                       "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,tpot_ms,fast\n")
    table, skipped = holdout_table(path=tmp_path / "mine.csv")
    assert table.empty and "log_ratio" in table.columns
    assert [where for where, _ in skipped] == ["mine.csv line 2", "mine.csv line 3"]


def test_a_file_whose_every_row_the_model_leaves_out_gives_an_empty_table_and_each_reason(tmp_path):
    # rows that read well but that the model does not predict: two runs without CUDA graphs. Before, the table of no
    # predicted row failed with a KeyError
    from calc.serving_fit import holdout_table
    (tmp_path / "mine.csv").write_text("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value,notes\n"
                                       "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,tpot_ms,9,enforce-eager\n"
                                       "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,ttft_ms,50,enforce-eager\n")
    table, skipped = holdout_table(path=tmp_path / "mine.csv")
    assert table.empty and list(table.columns)[-3:] == ["measured", "predicted", "log_ratio"]
    assert [why.split(" (")[0] for _, why in skipped] == ["run without CUDA graphs"] * 2
    # a run with speculative decoding is predicted, as the measured page predicts it: EAGLE's drafts at the
    # acceptance InferenceX's curve gives, a TPOT below the same run's plain decoding
    (tmp_path / "spec.csv").write_text("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value,notes\n"
                                       "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,tpot_ms,5,EAGLE drafts\n"
                                       "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,tpot_ms,9,\n")
    table, skipped = holdout_table(path=tmp_path / "spec.csv")
    assert not skipped and len(table) == 2 and table["predicted"].iat[0] < table["predicted"].iat[1]
    # a p99 is predicted (calc.serving_tails), above the same run's mean
    (tmp_path / "p99.csv").write_text("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value,notes\n"
                                      "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,p99_tpot_ms,9,\n"
                                      "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,mean_tpot_ms,8,\n")
    table, skipped = holdout_table(path=tmp_path / "p99.csv")
    assert not skipped and list(table["statistic"]) == ["p99", "mean"]
    assert table["predicted"].iat[0] > table["predicted"].iat[1] > 0


def test_an_engine_version_as_an_image_tag_or_a_date_is_read_as_the_public_estimate_reads_it():
    # one aiconfigurator vLLM row (a release number): written as vllm/vllm-openai:v<number> it predicts the same; a
    # day written in the version's place is that day's software with a current build's scheduling, as a row that
    # names no version and states the day in its notes ("measured 2025-06-01")
    from calc.serving_fit import predict_rows, prepare_rows, read_measurements
    from calc.serving_params import param_values
    df = read_measurements()
    r = df[(df["source_id"] == "aiconfigurator-silicon-vllm") & (df["metric"] == "tpot_ms")].head(1)
    version = str(r["engine_version"].iat[0])
    prm = load_serving_params()

    def predict(v, notes=""):
        rows, comps, _ = prepare_rows(r.assign(engine_version=v, notes=notes), prm)
        return float(predict_rows(rows, comps, param_values(prm))[0])

    assert predict(f"vllm/vllm-openai:v{version}") == predict(version)
    assert predict("2025-06-01") == predict("", "measured 2025-06-01") != predict("", "measured 2026-03-01")
    assert predict("nightly") == predict("")    # no number, no date: as a row that names no version


def test_an_engine_named_as_a_stack_or_an_image_names_it_is_that_engines_estimate():
    # NVIDIA Dynamo over TensorRT-LLM (InferenceX's "dynamo-trt"), "TRT", an image's name: the same family's settings
    # and fixed costs, so the same estimate to the bit and no fallback notice; an engine of no family here falls back
    kw = dict(concurrency=16, weight_dtype="fp8")
    base = serving_estimate("llama-3.1-8b", "h100-sxm", 1000, 200, engine="trtllm", **kw)
    for name in ("dynamo-trt", "TRT", "TensorRT-LLM"):
        est = serving_estimate("llama-3.1-8b", "h100-sxm", 1000, 200, engine=name, **kw)
        assert est.tpot.estimate_s == base.tpot.estimate_s and est.ttft.estimate_s == base.ttft.estimate_s
        assert not [n for n in est.notices if "no serving parameters for the engine" in n]
    vllm = serving_estimate("llama-3.1-8b", "h100-sxm", 1000, 200, engine="vllm", **kw)
    assert serving_estimate("llama-3.1-8b", "h100-sxm", 1000, 200, engine="vllm/vllm-openai",
                            **kw).tpot.estimate_s == vllm.tpot.estimate_s != base.tpot.estimate_s
    tgi = serving_estimate("llama-3.1-8b", "h100-sxm", 1000, 200, engine="TGI", **kw)
    assert any("no serving parameters for the engine 'TGI'" in n for n in tgi.notices)


@pytest.mark.parametrize("notes,speculative", [
    ("speculative decoding on (MTP, 3 next-n layers)", True),   # the data set's words (TensorRT-LLM's DeepSeek-R1)
    ("EAGLE3 draft model, 3 tokens", True),
    ("no DP attention, not disaggregated, speculative decoding on (MTP)", True),   # a negation of something else
    ("no MTP, concurrency 4", False),     # the words of a plain run: before, "mtp," made it speculative
    ("EAGLE off", False),
    ("MTP: off", False),
    ("mtp=0, tp8", False),
    ("non-MTP run", False),
    ("", False),
])
def test_a_plain_run_whose_notes_negate_speculative_decoding_is_predicted(notes, speculative):
    from calc.serving_fit import prepare_rows, read_measurements, speculative_notes
    assert speculative_notes(notes) is speculative
    row = read_measurements().query("source_id == 'aiconfigurator-silicon-vllm' and metric == 'tpot_ms'").head(1)
    rows, _, skipped = prepare_rows(row.assign(notes=notes))
    assert len(rows) == (0 if speculative else 1)
    assert [why.split(" (")[0] for _, why in skipped] == (["speculative decoding"] if speculative else [])
    # the comparison page draws a speculative run as a run of its own, a plain one with the plain runs
    from calc.comparison import _speculative
    assert bool(_speculative(pd.Series([notes])).iloc[0]) is speculative
