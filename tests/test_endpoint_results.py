"""The endpoint prediction (calc's roofline per concurrency) and the import of vLLM / GuideLLM result files."""
import json
import math

import pandas as pd
import pytest

from calc import get_accelerator, get_model
from live.endpoint_predict import (compare, levels_frame, predict_levels, read_guidellm_report, read_result_file,
                                   read_vllm_result)

LLAMA, H100 = get_model("llama-3-8b"), get_accelerator("h100-sxm")


def test_prediction_by_hand():
    # Llama-3-8B (8.03e9 params, bf16: 16.06e9 B of weights; input embedding 128,256 x 4,096 = 0.525e9 params,
    # 1.05e9 B), H100 SXM (3.35e12 B/s, 989e12 FLOP/s bf16). P = 8160, N = 64: mean context 8192, KV
    # 8192 x 131,072 B = 1.074e9 B per sequence (0.32 ms at W).
    # TPOT at c = 1, "table" (every weight read): 4.794 + 0.321 = 5.115 ms;
    # "gather" (one embedding row read, as engines do): (16.06e9 - 1.05e9) / 3.35e12 + 0.321 = 4.80 ms.
    for emb, want in (("table", 5.115), ("gather", 4.80)):
        p = predict_levels(LLAMA, H100, [1, 8], 8160, 64, embedding=emb)
        assert p.loc[0, "pred_tpot_ms"] == pytest.approx(want, rel=0.005), emb
    # TTFT at c = 8, P = 256 (compute-bound): matmuls 2 x N x 8 x 256 / 989e12, N = 8.03e9 ("table") or
    # 8.03e9 - 0.525e9 ("gather": the embedding is a lookup) = 33.26 or 31.08 ms; + causal attention
    # 8 x 2 x 32 heads x 256 (H_qk + H_v) x 32 layers x 256 x 257 / 2 keys = 1.38e11 FLOP = 0.14 ms
    # + the KV written, 8 x 256 x 131,072 B / 3.35e12 = 0.08 ms.
    for emb, want in (("table", 33.26), ("gather", 31.08)):
        q = predict_levels(LLAMA, H100, [1, 8], 256, 64, embedding=emb)
        assert q.loc[1, "pred_ttft_ms"] == pytest.approx(want + 0.14 + 0.08, rel=0.002), emb
    # logits="last" (engines compute logits for each prompt's last token only): the head's matmul skips
    # T - 1 = 255 of 256 tokens per sequence, 2 x V x D x B x 255 = 2 x 128,256 x 4,096 x 8 x 255 = 2.143e12
    # FLOP = 2.167 ms at 989e12 FLOP/s: 31.08 - 2.167 = 28.91 ms ("gather")
    last = predict_levels(LLAMA, H100, [8], 256, 64, logits="last")
    assert last.loc[0, "pred_ttft_ms"] == pytest.approx(28.91 + 0.14 + 0.08, rel=0.002)
    # c = 1, P = 256 is memory-bound: the weights read, 4.79 ms ("table") or 4.48 ms ("gather"), + 0.01 ms KV
    assert q.loc[0, "pred_ttft_ms"] == pytest.approx(4.48 + 0.01, rel=0.005)
    # E2E = TTFT + 63 TPOT; tokens/s = c N / E2E
    row = q.iloc[1]
    assert row.pred_e2e_ms == pytest.approx(row.pred_ttft_ms + 63 * row.pred_tpot_ms)
    assert row.pred_output_tokens_per_s == pytest.approx(8 * 64 / (row.pred_e2e_ms / 1e3))


def test_prediction_for_a_tensor_parallel_layout():
    from live.endpoint_predict import parallel_supported
    if not parallel_supported():
        with pytest.raises(ValueError, match="one GPU"):
            predict_levels(LLAMA, H100, [1], 256, 64, tp=2)
        return
    one, two = (predict_levels(LLAMA, H100, [1, 8], 2048, 64, tp=tp) for tp in (1, 2))
    # tp = 2: each GPU reads half the weights and half the KV heads, and adds all-reduces; so a decode step
    # takes more than half and less than all of the one-GPU step
    assert (two["pred_tpot_ms"] > one["pred_tpot_ms"] / 2).all() and (two["pred_tpot_ms"] < one["pred_tpot_ms"]).all()


def test_compare_ratios():
    measured = levels_frame([{"concurrency": 1, "ttft_ms_p50": 12.0, "tpot_ms_p50": 10.0, "e2e_ms_p50": 700.0}])
    pred = pd.DataFrame([{"concurrency": 1, "pred_ttft_ms": 6.0, "pred_tpot_ms": 5.0, "pred_e2e_ms": 350.0}])
    out = compare(measured, pred)
    assert out.loc[0, ["ratio_ttft", "ratio_tpot", "ratio_e2e"]].tolist() == [2.0, 2.0, 2.0]


def vllm_result(concurrency, ttft, tpot, itl, e2el, detailed=False):
    """A result as `vllm bench serve --save-result` writes it (field names from vllm/benchmarks/serve.py)."""
    d = {"date": "20261130-120000", "backend": "vllm", "model_id": "m", "num_prompts": 16, "request_rate": "inf",
         "burstiness": 1.0, "max_concurrency": concurrency, "duration": 8.0, "completed": 16, "failed": 0,
         "total_input_tokens": 16 * 256, "total_output_tokens": 16 * 64, "request_throughput": 2.0,
         "request_goodput": None, "output_throughput": 128.0, "total_token_throughput": 640.0,
         "mean_ttft_ms": ttft, "median_ttft_ms": ttft, "std_ttft_ms": 1.0, "p99_ttft_ms": ttft * 2,
         "mean_tpot_ms": tpot, "median_tpot_ms": tpot, "std_tpot_ms": 0.1, "p99_tpot_ms": tpot * 1.5,
         "mean_itl_ms": itl, "median_itl_ms": itl, "std_itl_ms": 0.1, "p99_itl_ms": itl * 3,
         "mean_e2el_ms": e2el, "median_e2el_ms": e2el, "std_e2el_ms": 2.0, "p99_e2el_ms": e2el * 1.2}
    if detailed:
        d["itls"] = [[0.010, 0.012], [0.011]]
    return d


def test_vllm_result_files_one_per_level_and_json_lines():
    text = "\n".join(json.dumps(vllm_result(c, 20.0 * c, 8.0 + c, 7.5 + c, 600.0 + c, detailed=(c == 1)))
                     for c in (4, 1))
    tool, levels = read_result_file(text)
    assert tool == "vllm bench serve"
    assert [lv["concurrency"] for lv in levels] == [1, 4]  # sorted
    lv = levels[1]
    assert lv["ttft_ms_p50"] == 80.0 and lv["ttft_ms_p99"] == 160.0 and math.isnan(lv["ttft_ms_p90"])
    assert lv["tpot_ms_p50"] == 12.0 and lv["itl_ms_p99"] == pytest.approx(34.5) and lv["e2e_ms_p50"] == 604.0
    assert lv["prompt_tokens_mean"] == 256 and lv["output_tokens_mean"] == 64
    assert lv["requests_ok"] == 16 and lv["output_tokens_per_s"] == 128.0 and math.isnan(lv["request_rate_per_s"])
    assert levels[0]["itl_ms"] == pytest.approx([10.0, 12.0, 11.0])
    assert list(levels_frame(levels)["concurrency"]) == [1, 4]


def test_not_a_result_file_is_a_sentence():
    with pytest.raises(ValueError, match="median_ttft_ms"):
        read_vllm_result('{"hello": 1}')
    with pytest.raises(ValueError, match="Not a result file"):
        read_result_file("not json at all")


def dist(median, mean=None, p90=None, p99=None):
    s = {"mean": mean if mean is not None else median, "median": median, "mode": median, "variance": 0.0,
         "std_dev": 0.0, "min": median, "max": median, "count": 8, "total_sum": median * 8,
         "percentiles": {"p001": median, "p01": median, "p05": median, "p10": median, "p25": median,
                         "p50": median, "p75": median, "p90": p90 or median, "p95": median, "p99": p99 or median,
                         "p999": median}}
    return {"successful": s, "incomplete": None, "errored": None, "total": s}


def test_guidellm_report():
    # two benchmarks as in a GuideLLM JSON report (schemas/generative/metrics.py field names): concurrent 2, poisson 3/s
    def bench(strategy, ttft, itl):
        return {"type_": "generative_benchmark", "config": {"strategy": strategy}, "metrics": {
            "request_totals": {"successful": 8, "incomplete": 1, "errored": 1, "total": 10},
            "requests_per_second": dist(1.5), "request_concurrency": dist(2.0), "request_latency": dist(0.9),
            "prompt_token_count": dist(256), "output_token_count": dist(64), "time_to_first_token_ms": dist(ttft, p90=2 * ttft),
            "time_per_output_token_ms": dist(itl + ttft / 64), "inter_token_latency_ms": dist(itl, p99=3 * itl),
            "output_tokens_per_second": dist(96.0)}}
    report = {"benchmarks": [bench({"type_": "poisson", "rate": 3.0}, 50.0, 12.0),
                             bench({"type_": "concurrent", "streams": 2}, 40.0, 11.0)]}
    tool, levels = read_result_file(json.dumps(report))
    assert tool == "GuideLLM"
    c2 = levels[0]
    assert c2["concurrency"] == 2 and c2["ttft_ms_p50"] == 40.0 and c2["ttft_ms_p90"] == 80.0
    assert c2["tpot_ms_p50"] == 11.0 and c2["tpot_ms_p99"] == 33.0  # GuideLLM's ITL is vLLM's TPOT
    assert c2["e2e_ms_p50"] == pytest.approx(900.0) and math.isnan(c2["itl_ms_p50"])
    assert c2["requests_ok"] == 8 and c2["requests_failed"] == 2
    assert levels[1]["request_rate_per_s"] == 3.0 and math.isnan(levels[1]["concurrency"])


def test_the_ttft_bound_column_is_the_levels_prompts_at_once_and_says_so():
    # The vLLM result file a new user tried: concurrency 8, 256-token prompts, 64 outputs (6,400 / 100 requests).
    # The table's TTFT bound prefills the level's 8 prompts as one batch (the course's closed loop): 8 x 256 =
    # 2,048 tokens; the serving estimate starts from one prompt's prefill (256 tokens) and adds the engine's fixed
    # costs and the others' decode, landing near the batch's figure (29.4 against 29.1 ms with the stored
    # parameters, below it before), so a bound column named plainly "TTFT bound" read as a bound the estimate breaks.
    from calc import prefill_time
    from ui.live_endpoint import COLUMNS, TTFT_BOUND_HELP
    p = predict_levels(LLAMA, H100, [8], 256, 64, logits="last").iloc[0]
    eight = prefill_time(LLAMA, H100, 256, batch=8, logits="last", embedding="gather").total_s * 1e3
    one = prefill_time(LLAMA, H100, 256, batch=1, logits="last", embedding="gather").total_s * 1e3
    assert p["pred_ttft_ms"] == pytest.approx(eight, rel=1e-9)
    assert one < p["est_ttft_ms"] and one < p["pred_ttft_ms"]
    header = COLUMNS["pred_ttft_ms"]
    assert "prompts at once" in header["label"] and header["help"] == TTFT_BOUND_HELP
    assert "one prompt's prefill" in TTFT_BOUND_HELP


def test_the_ttft_chart_names_its_roofline_curve_for_what_it_is():
    # The TTFT curve prefills the level's c prompts as one batch: a measurement under continuous batching can be
    # below it, so it is not called a lower bound (the TPOT curve, a decode step of batch c, still is one).
    from live.endpoint_charts import PREDICTED_NAMES, metric_figure
    measured = levels_frame([{"concurrency": c, "ttft_ms_p50": 25.0, "tpot_ms_p50": 9.0, "e2e_ms_p50": 600.0}
                             for c in (1, 8)])
    table = compare(measured, predict_levels(LLAMA, H100, [1, 8], 256, 64))
    ttft = metric_figure(table, "ttft")
    curve = next(t for t in ttft.data if t.name == PREDICTED_NAMES["ttft"])
    assert "prompts prefilled at once" in curve.name and "prompts prefilled at once" in curve.hovertemplate
    assert list(curve.y) == pytest.approx(list(table["pred_ttft_ms"]))
    words = " ".join(f"{t.name} {t.hovertemplate}" for t in ttft.data)
    assert "lower bound" not in words
    e2e = " ".join(f"{t.name} {t.hovertemplate}" for t in metric_figure(table, "e2e").data)
    assert "lower bound" not in e2e and "prompts prefilled at once" in e2e
    assert "calc's roofline (lower bound)" in [t.name for t in metric_figure(table, "tpot").data]


def test_the_ttft_estimate_has_its_range_beside_it_in_the_csv_and_the_headers():
    # predict_levels' row is the CSV's column order: TTFT's range right after TTFT's estimate, as TPOT's after its own
    from calc.serving import serving_estimate
    from ui.live_endpoint import COLUMNS
    p = predict_levels(LLAMA, H100, [2, 16], 1024, 128, engine="sglang")
    cols = list(p.columns)
    for m in ("ttft", "tpot"):
        i = cols.index(f"est_{m}_ms")
        assert cols[i:i + 3] == [f"est_{m}_ms", f"est_{m}_ms_low", f"est_{m}_ms_high"]
    for _, row in p.iterrows():
        est = serving_estimate(LLAMA, H100, 1024, 128, concurrency=int(row["concurrency"]), engine="sglang")
        assert (row["est_ttft_ms_low"], row["est_ttft_ms_high"]) == pytest.approx((est.ttft.low_s * 1e3,
                                                                                   est.ttft.high_s * 1e3))
    assert COLUMNS["est_ttft_ms_low"]["label"] == "TTFT estimate low (ms)"
    assert COLUMNS["est_ttft_ms_high"]["label"] == "TTFT estimate high (ms)"
    # a model the serving model refuses leaves every estimate column empty, the range too
    huge = predict_levels(get_model("llama-3.1-405b"), H100, [1], 256, 64)
    assert huge[["est_ttft_ms", "est_ttft_ms_low", "est_ttft_ms_high"]].isna().all(axis=None)


#: The vLLM bench result a new user pasted: concurrency 4, 100 requests of 256 prompt + 64 output tokens.
USER_RESULT = {"backend": "vllm", "model_id": "meta-llama/Meta-Llama-3-8B", "max_concurrency": 4, "completed": 100,
               "total_input_tokens": 25600, "total_output_tokens": 6400, "request_throughput": 5.0,
               "output_throughput": 320.0, "mean_ttft_ms": 40.0, "median_ttft_ms": 38.0, "p99_ttft_ms": 90.0,
               "mean_tpot_ms": 12.0, "median_tpot_ms": 11.5, "p99_tpot_ms": 20.0, "mean_itl_ms": 12.0,
               "median_itl_ms": 11.0, "p99_itl_ms": 25.0, "duration": 20.0}


@pytest.mark.parametrize("field, value, words", [
    ("median_ttft_ms", -38, "the file's median_ttft_ms is -38; a time must be 0 ms or more"),
    ("median_ttft_ms", "abc", "the file's median_ttft_ms is \"abc\", not a number"),
    ("max_concurrency", -4, "the file's max_concurrency is -4; a concurrency must be a positive whole number"),
    ("completed", -100, "the file's completed is -100; a count must be 0 or more"),
    ("total_input_tokens", True, "the file's total_input_tokens is True, not a number"),
])
def test_a_vllm_result_with_an_impossible_figure_is_refused_naming_the_field_and_value(field, value, words):
    from live.endpoint_predict import ResultValueError
    with pytest.raises(ResultValueError) as e:
        read_result_file(json.dumps(dict(USER_RESULT, **{field: value})))
    assert words in str(e.value) and "Not a result file" not in str(e.value)  # the vLLM file, not "neither format"


def test_a_run_of_one_output_token_with_a_tpot_of_zero_is_read():
    # vllm bench serve writes TPOT and ITL 0 when every request has one output token (no gap between tokens):
    # a sound file, read, not refused; those zeros are no measurement (NaN), its TTFT stays
    one = dict(USER_RESULT, total_output_tokens=100, mean_tpot_ms=0, median_tpot_ms=0, p99_tpot_ms=0,
               mean_itl_ms=0, median_itl_ms=0, p99_itl_ms=0)
    tool, levels = read_result_file(json.dumps(one))
    assert tool == "vllm bench serve" and levels[0]["output_tokens_mean"] == 1.0
    assert math.isnan(levels[0]["tpot_ms_p50"]) and math.isnan(levels[0]["itl_ms_p99"])
    assert levels[0]["ttft_ms_p50"] == 38.0
    # two output tokens a request: a gap to time, so a TPOT of 0 there is read as written
    two = dict(one, total_output_tokens=200)
    assert read_result_file(json.dumps(two))[1][0]["tpot_ms_p50"] == 0.0


def test_an_overflowing_figure_and_several_bad_ones_are_named_at_once():
    from live.endpoint_predict import ResultValueError
    # 1e400 is read by JSON as infinity; with a second bad field, both are named in one message
    text = json.dumps(dict(USER_RESULT, p99_tpot_ms=-1)).replace('"median_ttft_ms": 38.0', '"median_ttft_ms": 1e400')
    with pytest.raises(ResultValueError, match="median_ttft_ms is inf, not a finite number") as e:
        read_result_file(text)
    assert "p99_tpot_ms is -1; a time must be 0 ms or more" in str(e.value)
    # the same file with sound figures is read: 25,600 / 100 = 256 prompt tokens, TPOT p50 11.5 ms
    lv = read_result_file(json.dumps(USER_RESULT))[1][0]
    assert lv["prompt_tokens_mean"] == 256 and lv["tpot_ms_p50"] == 11.5 and lv["concurrency"] == 4
    assert lv["length_fields"] == {"prompt": "total_input_tokens 25600", "output": "total_output_tokens 6400"}


def test_a_guidellm_report_passes_the_same_check():
    from live.endpoint_predict import ResultValueError
    # GuideLLM's request_latency is in seconds; -0.9 s is refused as a time, named by its path in the report
    m = {"request_totals": {"successful": 8, "errored": 0, "incomplete": 0}, "request_latency": dist(-0.9),
         "time_to_first_token_ms": dist(40.0), "inter_token_latency_ms": dist(float("nan"))}
    report = {"benchmarks": [{"config": {"strategy": {"type_": "concurrent", "streams": 2}}, "metrics": m}]}
    with pytest.raises(ResultValueError) as e:
        read_result_file(json.dumps(report))  # json writes NaN, as Python's json module reads it
    msg = str(e.value)
    assert msg.startswith("This GuideLLM report has impossible figures")
    assert "benchmarks[0].metrics.request_latency.successful.median is -0.9; a time must be 0 ms or more" in msg
    assert "benchmarks[0].metrics.inter_token_latency_ms.successful.median is nan, not a number" in msg
    report["benchmarks"][0]["config"]["strategy"]["streams"] = -4
    report["benchmarks"][0]["metrics"] = dict(m, request_latency=dist(0.9), inter_token_latency_ms=dist(11.0))
    with pytest.raises(ResultValueError, match=r"config.strategy.streams is -4; a concurrency must be a positive"):
        read_result_file(json.dumps(report))


def test_the_charts_draw_the_serving_estimate_with_its_range_from_the_tables_columns():
    from live.endpoint_charts import ESTIMATE_NAME, metric_figure
    measured = levels_frame([{"concurrency": c, "ttft_ms_p50": 25.0 * c, "tpot_ms_p50": 9.0 + c, "e2e_ms_p50": 700.0}
                             for c in (1, 8)])
    table = compare(measured, predict_levels(LLAMA, H100, [1, 8], 256, 64))
    for metric in ("ttft", "tpot"):
        fig = metric_figure(table, metric)
        est = next(t for t in fig.data if t.name == ESTIMATE_NAME)
        assert list(est.x) == [1, 8]
        assert list(est.y) == pytest.approx(list(table[f"est_{metric}_ms"]))
        # the bar reaches from the low to the high end of the table's range
        assert list(est.y + est.error_y.array) == pytest.approx(list(table[f"est_{metric}_ms_high"]))
        assert list(est.y - est.error_y.arrayminus) == pytest.approx(list(table[f"est_{metric}_ms_low"]))
        assert (table[f"est_{metric}_ms_low"] < table[f"est_{metric}_ms"]).all()  # a range, not a point
    # E2E has no range in the table: no estimate trace claims one
    assert ESTIMATE_NAME not in [t.name for t in metric_figure(table, "e2e").data]
    # measured levels alone (no prediction): no estimate trace
    assert ESTIMATE_NAME not in [t.name for t in metric_figure(measured, "tpot").data]


def test_the_tables_throughput_bound_and_token_columns_have_headers_and_one_format():
    from ui.live_endpoint import COLUMNS
    head = COLUMNS["pred_output_tokens_per_s"]
    assert head["label"] == "output tok/s bound" and head["type_config"]["format"] == "%,.0f"
    assert "bound" in head["label"] and "roofline" in head["help"]
    # 851.1604 tok/s shows as 851, and 64.0 output tokens as 64, as 256 prompt tokens shows as 256
    assert COLUMNS["output_tokens_mean"]["type_config"]["format"] == COLUMNS["prompt_tokens_mean"]["type_config"]["format"]


def test_a_result_files_run_date_sets_the_estimates_software():
    # vLLM's --save-result writes "date" as "%Y%m%d-%H%M%S"; GuideLLM a benchmark's start_time in epoch seconds
    # (1736951412 s = 2025-01-15 14:30:12 UTC: 20,103 days of 86,400 s from 1970-01-01 plus 52,212 s)
    _, levels = read_result_file(json.dumps(vllm_result(4, 80.0, 12.0, 11.5, 900.0)))
    assert levels[0]["run_date"] == "2026-11-30"
    from live.endpoint_predict import run_date
    assert run_date(1736951412.5) == "2025-01-15" and run_date("2025-01-15 14:30:12") == "2025-01-15"
    assert run_date("20251345-000000") is None and run_date("soon") is None and run_date(float("nan")) is None
    bench = {"start_time": 1736951412.5, "config": {"strategy": {"type_": "concurrent", "streams": 2}},
             "metrics": {"request_totals": {"successful": 8}, "time_to_first_token_ms": dist(40.0),
                         "inter_token_latency_ms": dist(11.0), "prompt_token_count": dist(256),
                         "output_token_count": dist(64)}}
    assert read_guidellm_report(json.dumps({"benchmarks": [bench]}))[0]["run_date"] == "2025-01-15"
    bench["run_stats"] = {"start_time": bench.pop("start_time") - 86400 * 31}  # GuideLLM 0.2's place for it
    assert read_guidellm_report(json.dumps({"benchmarks": [bench]}))[0]["run_date"] == "2024-12-15"
    # the estimate takes the software of that day: a run of 2025-01-15 decodes with the fitted software gain of
    # the releases up to that day, a current build with all of it, so its TPOT estimate is above a current
    # build's at the same level (the bound, which has no software, is the same)
    then = predict_levels(LLAMA, H100, [16], 1024, 128, engine="vllm", engine_version="2025-01-15").iloc[0]
    now = predict_levels(LLAMA, H100, [16], 1024, 128, engine="vllm").iloc[0]
    assert then["pred_tpot_ms"] == now["pred_tpot_ms"]
    assert then["est_tpot_ms"] > now["est_tpot_ms"] * 1.01


def test_a_figure_past_any_benchmark_is_refused_by_its_field():
    # 1e300 ms and 1e20 tokens are finite JSON numbers, but no run measures them (1e12 ms is 32 years): the page
    # printed them with hundreds of digits; now the file is refused, each figure named, as a negative one is
    from live.endpoint_predict import ResultValueError
    doc = vllm_result(4, 80.0, 12.0, 11.5, 900.0)
    doc.update(median_ttft_ms=1e300, total_input_tokens=1e20)
    with pytest.raises(ResultValueError) as e:
        read_result_file(json.dumps(doc))
    assert "the file's median_ttft_ms is 1e+300; no benchmark measures past 1e12" in str(e.value)
    assert "the file's total_input_tokens is 1e+20" in str(e.value)
    doc.update(median_ttft_ms=1e12, total_input_tokens=1e12)  # at the ceiling: taken
    assert read_result_file(json.dumps(doc))[1][0]["ttft_ms_p50"] == 1e12


def test_a_model_that_does_not_fit_is_one_notice_however_many_levels_it_refuses():
    import calc
    from live.endpoint_predict import predict_levels
    # DeepSeek-V3 in fp8 is 671e9 params x 1 B = 671 GB of weights: more than one MI355X's 288 GB at TP1, so the
    # serving estimate refuses every level. The page shows the reason once (not once per level), ending in one full
    # stop of its own (the page adds it), and the estimate's columns stay empty.
    pred = predict_levels(calc.get_model("deepseek-v3"), calc.get_accelerator("mi355x"), [1, 4, 16, 64], 1024, 128,
                          "fp8", "fp8", engine="vllm")
    refusals = [n for n in pred.attrs["notices"] if n.startswith("no serving estimate:")]
    assert len(refusals) == 1 and "does not fit" in refusals[0] and not refusals[0].endswith(".")
    assert pred["est_tpot_ms"].isna().all() and len(pred) == 4
    assert pred.attrs["fits"] is False  # 671 GB of weights over 288 GB: the bound is a time "if it fit"


def rate_result(rate, ttft, tpot):
    """A `vllm bench serve --request-rate R --save-result` result: Poisson arrivals, no max concurrency."""
    d = vllm_result(None, ttft, tpot, tpot, 700.0)
    d.update(request_rate=rate, num_prompts=400, completed=400, total_input_tokens=400 * 256,
             total_output_tokens=400 * 64, request_throughput=rate, output_throughput=rate * 64.0)
    return d


def test_levels_at_a_request_rate_get_the_serving_estimate_and_the_bound_at_its_batch():
    from calc import decode_step_time, prefill_time
    from calc.serving import serving_estimate
    from live.endpoint_predict import predict_rate_levels
    model, gpu = get_model("llama-3.1-8b"), get_accelerator("h100-sxm")
    pred = predict_rate_levels(model, gpu, [10.0, 80.0, 10_000.0], 256, 64, requests={80.0: 400})
    assert list(pred["request_rate_per_s"]) == [10.0, 80.0, 10_000.0]
    # the estimate is serving_estimate's at that rate, with the level's 400 requests as num_prompts
    est = serving_estimate(model, gpu, 256, 64, request_rate_per_s=80.0, num_prompts=400)
    row = pred.iloc[1]
    assert row["est_tpot_ms"] == pytest.approx(est.tpot.estimate_s * 1e3, rel=1e-12)
    assert row["est_tpot_ms_high"] == pytest.approx(est.tpot.high_s * 1e3, rel=1e-12)
    assert row["est_ttft_ms"] == pytest.approx(est.ttft.estimate_s * 1e3, rel=1e-12)
    # the bound at the batch Little's law gives (B = 80/s x e2e, not a whole number): a decode step between those of
    # its neighbouring whole batches at the mean context 256 + 32, and one prompt's prefill (LM head on its last
    # token, as the serving model) for TTFT
    b = row["est_decode_batch"]
    assert b == pytest.approx(est.decode_batch) and b > 10
    steps = [decode_step_time(model, gpu, n, 256 + 32).total_s * 1e3 for n in (math.floor(b), math.ceil(b))]
    assert steps[0] <= row["pred_tpot_ms"] <= steps[1] * (1 + 1e-9)
    one_prompt = prefill_time(model, gpu, 256, 1, logits="last").total_s * 1e3
    assert list(pred["pred_ttft_ms"].iloc[:2]) == pytest.approx([one_prompt, one_prompt])
    assert row["pred_e2e_ms"] == pytest.approx(row["pred_ttft_ms"] + 63 * row["pred_tpot_ms"])
    assert row["pred_output_tokens_per_s"] == 80.0 * 64
    # a higher rate, a larger batch: the bound and the estimate grow with it
    assert pred["pred_tpot_ms"].iloc[0] < row["pred_tpot_ms"] and pred["est_tpot_ms"].iloc[0] < row["est_tpot_ms"]
    # 10,000 requests/s is far beyond the deployment: NaN, and the reason once
    assert pred.iloc[2][["pred_tpot_ms", "est_tpot_ms"]].isna().all()
    assert [n for n in pred.attrs["notices"] if "more than this deployment serves" in n]
    assert pred.attrs["fits"]
    # measured levels join the prediction on the rate
    levels = levels_frame(read_result_file("\n".join(json.dumps(rate_result(r, 30.0, 12.0)) for r in (10, 80)))[1])
    joined = compare(levels, pred)
    assert list(joined["request_rate_per_s"]) == [10.0, 80.0]
    assert joined["ratio_tpot"].iloc[1] == pytest.approx(12.0 / row["pred_tpot_ms"])
    assert joined["ratio_tpot_est"].iloc[1] == pytest.approx(12.0 / row["est_tpot_ms"])
