"""The first round's cold start of the engines' ROCm builds (calc.serving_params.cold_start_values): InferenceMAX's
runs on AMD Instinct measure a mean TTFT above the serving model's by about the same 1-2 s over ten rounds, while
their medians (which leave the first round aside) are met; the model adds that cold start to a closed loop's first
round where the run's rounds are stated, on ROCm only."""
import math

import numpy as np
import pandas as pd
import pytest

from calc.serving import FIXED_PARTS, serving_estimate
from calc.serving_fit import calibrate_cold_start, prepare_rows, predict_rows
from calc.serving_params import (COLD_START_PREFIX, COLD_START_RUNS_PATH, cold_start_values, load_serving_params,
                                 param_values)
from calc.serving_terms import burst_cold_start_s, with_cold_start


def test_the_burst_carries_the_first_rounds_cold_start_spread_over_its_share():
    # varied lengths, 10 rounds: the burst is the first round (share 1 / 10) and carries all of it
    assert burst_cold_start_s(1.4, 10, 0.1) == pytest.approx(1.4)
    # a lockstep run of 20 rounds whose burst holds 0.1545 of the requests (0.05 + 0.95 x 0.11): 1.4 / (20 x 0.1545)
    # = 0.4531 per burst request, 1.4 / 20 = 0.07 s on the run's mean (0.4531 x 0.1545)
    assert burst_cold_start_s(1.4, 20, 0.1545) == pytest.approx(0.45307, rel=1e-4)
    assert burst_cold_start_s(1.4, 20, 0.1545) * 0.1545 == pytest.approx(0.07)
    # a long run (rounds not stated: infinite) and a run without a burst carry none
    assert burst_cold_start_s(1.4, math.inf, 0.1) == 0.0 and burst_cold_start_s(1.4, 10, 0.0) == 0.0


def test_with_cold_start_adds_the_seconds_before_the_first_token_as_a_fixed_part():
    a = {"ttft_estimate": np.array([0.2, 0.3]), "ttft_fixed": np.array([0.05, 0.05]),
         "ttft_request_s": np.array([0.01, 0.01]), "e2e_s": np.array([2.0, 3.0]), "tpot_estimate": np.array([0.02, 0.02])}
    out = with_cold_start(a, np.array([1.0, 0.0]))
    assert list(out["ttft_estimate"]) == [1.2, 0.3] and list(out["e2e_s"]) == [3.0, 3.0]
    assert list(out["ttft_fixed"]) == [1.05, 0.05] and list(out["ttft_request_s"]) == [1.01, 0.01]
    assert list(out["ttft_fixed_first_round"]) == [1.0, 0.0] and list(out["tpot_fixed_first_round"]) == [0.0, 0.0]
    assert list(out["tpot_estimate"]) == [0.02, 0.02] and list(a["ttft_estimate"]) == [0.2, 0.3]  # a copy
    assert "first_round" in FIXED_PARTS


def test_the_stored_cold_start_is_the_calibration_of_the_shipped_runs():
    stored = load_serving_params()["first_round_cold"]
    again = calibrate_cold_start()
    assert again["rocm"] == stored["rocm"] and again["n"] == stored["n"]
    runs = pd.read_csv(COLD_START_RUNS_PATH)
    # every run is a mean TTFT on AMD Instinct of vLLM's or SGLang's ROCm build, and the counts are the file's
    assert set(runs["metric"]) == {"ttft_ms"} and set(runs["statistic"]) == {"mean"}
    assert runs["accelerator"].str.startswith("mi").all()
    assert stored["n"]["generic"] == len(runs) == stored["n"]["vllm"] + stored["n"]["sglang"]
    # vLLM's ROCm build pays more than a second over the ten rounds, SGLang's less; both are stored for the fit
    assert stored["rocm"]["vllm"] > 1.0 > stored["rocm"]["sglang"] > 0.0
    values = param_values(load_serving_params())
    assert values[f"{COLD_START_PREFIX}vllm"] == stored["rocm"]["vllm"]
    assert cold_start_values(load_serving_params()) == {f"{COLD_START_PREFIX}{k}": v
                                                        for k, v in stored["rocm"].items()}


def test_a_run_of_stated_rounds_on_rocm_pays_it_once_over_its_rounds():
    cold = load_serving_params()["first_round_cold"]["rocm"]["vllm"]
    args = ("gpt-oss-120b", "mi300x", 1024, 1024)
    long_run = serving_estimate(*args, concurrency=16)
    ten = serving_estimate(*args, concurrency=16, rounds=10)
    plain = serving_estimate(*args, concurrency=16, rounds=10, params=_without_cold())
    # varied lengths: the burst is the first round, 1 / 10 of the run, so the mean TTFT grows by cold / 10
    assert ten.ttft.estimate_s - plain.ttft.estimate_s == pytest.approx(cold / 10, rel=1e-9)
    assert ten.e2e_s - plain.e2e_s == pytest.approx(cold / 10, rel=1e-9)
    assert ten.tpot.estimate_s == pytest.approx(plain.tpot.estimate_s, rel=1e-12)
    # the run is longer by it: its requests per second are C over the longer mean e2e
    assert ten.requests_per_s == pytest.approx(16 / ten.e2e_s, rel=1e-9)
    # in the fixed costs, as its own part, and the parts still add up to the estimate
    parts = dict(ten.ttft.fixed_parts)
    assert parts["first_round"] == pytest.approx(cold / 10, rel=1e-9)
    assert sum(v for _, v in ten.ttft.fixed_parts) == pytest.approx(ten.ttft.fixed_s, rel=1e-9)
    assert sum(ten.ttft.parts().values()) == pytest.approx(ten.ttft.estimate_s, rel=1e-9)
    assert any("cold start" in n and "10 rounds" in n for n in ten.notices)
    # a long run's first round does not count, and NVIDIA's builds take none
    assert not any("cold start" in n for n in long_run.notices) and dict(long_run.ttft.fixed_parts)["first_round"] == 0
    h100 = serving_estimate("gpt-oss-120b", "h100-sxm", 1024, 1024, concurrency=16, rounds=10)
    assert not any("cold start" in n for n in h100.notices)
    # its 99th percentile TTFT falls in the first round: at least the burst's own wait plus the cold start
    assert ten.ttft_p99_s >= cold


def _without_cold():
    prm = dict(load_serving_params())
    prm["first_round_cold"] = {"rocm": {}}
    return prm


def test_the_fit_predicts_a_shipped_run_as_the_public_estimate_does():
    # one shipped run: vLLM's gpt-oss-120b on eight MI300X at TP8, 1k/1k at 16 clients; its predicted mean TTFT is
    # the prediction without the cold start plus cold / 10 (the fit's rows and the public estimate share the rule)
    runs = pd.read_csv(COLD_START_RUNS_PATH)
    one = runs[runs["id"].str.contains("mi300x-gpt-oss-120b-vllm-fp4-1024-1024-tp8-ep1-c16-", regex=False)]
    assert len(one) == 1
    prm = load_serving_params()
    rows, comps, _ = prepare_rows(one, prm)
    with_cold = predict_rows(rows, comps, param_values(prm))[0]
    without = predict_rows(rows, comps, param_values(_without_cold()))[0]
    assert float(rows["rounds"].iat[0]) == 10
    assert with_cold - without == pytest.approx(prm["first_round_cold"]["rocm"]["vllm"] / 10 * 1e3, rel=1e-9)


def test_the_measured_page_says_how_much_of_a_rows_ttft_is_the_cold_start():
    # one shipped run uploaded as a file (the measurement file's columns): its TTFT row's breakdown says how much of
    # the fixed costs is the first round's cold start, cold / 10 for its 10 rounds
    from tests.pagetest import open_page
    from ui import formats, measured_views
    runs = pd.read_csv(COLD_START_RUNS_PATH)
    one = runs[runs["id"].str.contains("mi300x-gpt-oss-120b-vllm-fp4-1024-1024-tp8-ep1-c16-", regex=False)]
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("amd.csv", one.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception and not at.error
    cold = load_serving_params()["first_round_cold"]["rocm"]["vllm"] / 10
    want = measured_views.COLD_START_WORDS.format(cold=formats.fmt_seconds(cold))
    assert want in [c.value for c in at.caption], [c.value for c in at.caption]
