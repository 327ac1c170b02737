"""AppTest of the Quantization page: bf16 / fp8 / int8 / int4 side by side, and seed 000 problem 5.

Hand numbers: H100 SXM, W = 3.35e12 B/s. Llama-3-8B: 8,030,261,248 parameters, 131,072 B of bf16 cache
per token (2 x 32 x 8 x 128 x 2). Seed 000's 13B: 13e9 parameters, 2 x 40 x 8 x 128 x 2 = 163,840 B per
token, 671,088,640 B per 4,096-token sequence.
"""
import base64
import json
from pathlib import Path

import numpy as np

import pytest
from streamlit.testing.v1 import AppTest

import calc
from ui.formats import fmt_seconds
import pagetest
from pagetest import metric_element as metric, plotly_values, figures

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/quantization.py"
LLAMA, H100 = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")


def open_page(**query) -> AppTest:
    return pagetest.open_page(PAGE, timeout=60, **query)


def array(v) -> np.ndarray:
    """A Plotly trace array as numpy."""
    return np.asarray(plotly_values(v))


@pytest.fixture(scope="module")
def default_page():
    return open_page(emb="table")


def test_default_page_matches_seed_step_4(default_page):
    at = default_page
    # bf16 at 8K, B = 32 (seed 000 step 4): weights 16.06e9 / 3.35e12 = 4.794 ms; cache 32 x 1.0737e9 /
    # 3.35e12 = 10.257 ms; compute 2 x 8.03e9 x 32 / 989e12 = 0.52 ms < 4.79 -> 15.05 ms.
    assert metric(at, "bf16: decode step").value == "15.05 ms"
    # Max batch: (80 - 16.06) GB / 1.0737 GB = 59.5 -> 59 in bf16; (80 - 8.03) / 0.537 = 134 in int8.
    assert metric(at, "bf16: decode step").delta == "max batch 59"
    assert metric(at, "int8: decode step").delta == "max batch 134"
    # int4 halves both again: 15.05 / 4 = 3.76 ms.
    assert metric(at, "int4: decode step").value == "3.76 ms"
    # Memory, step and max batch are three panels of one figure, then the flip chart.
    assert len(figures(at)) == 2
    panels = figures(at)[0]["data"]
    max_batch = next(d for d in panels if d["name"] == "max batch")
    assert max_batch["xaxis"] == "x3" and array(max_batch["y"]).tolist()[:3] == [59, 134, 134]


def test_flip_chart_crosses_at_the_flip(default_page):
    at = default_page
    # Llama-3-8B at 8K: weight bytes / KV per sequence = 16.06e9 / 1.0737e9 = 14.96 (seed: "15 sequences").
    assert metric(at, "They flip at B").value == "15.0"
    fig = figures(at)[1]
    kv = array(fig["data"][1]["y"])
    x, w = array(fig["data"][0]["x"]), array(fig["data"][0]["y"])
    # int8 weights are faster up to B = 14, an int8 cache from B = 15 on.
    assert x[13] == 14 and w[13] < kv[13] and w[14] > kv[14]
    assert "ms" in fig["layout"]["yaxis"]["title"]["text"]


def test_batch_slider_changes_the_metric_to_what_calc_computes():
    at = open_page(emb="table")
    at.select_slider(key="q_b").set_value(8).run()
    assert not at.exception
    expected = calc.decode_step_time(LLAMA, H100, 8, 8192, "bf16", "bf16", embedding="table").total_s
    assert metric(at, "bf16: decode step at B = 8").value == fmt_seconds(expected)
    # By hand: 4.794 + 8 x 0.3205 = 7.36 ms.
    assert metric(at, "bf16: decode step at B = 8").value == "7.36 ms"


def test_quantize_weights_only_keeps_the_cache_at_the_sidebar_dtype():
    at = open_page(emb="table")
    at.radio(key="q_apply").set_value("weights").run()
    # int8 weights, bf16 cache, B = 32: (8.03 + 34.36) GB / 3.35 TB/s = 12.65 ms (the flip metric agrees).
    assert metric(at, "int8: decode step").value == "12.65 ms"
    assert metric(at, "int8 weights, bf16 cache").value == "12.65 ms"


def test_seed_problem_5_button():
    at = open_page()
    at.button(key="q_exp_btn_0").click().run()
    assert not at.exception
    assert at.radio(key="q_model").value == "seed13b"
    assert at.select_slider(key="q_ctx").value == 4096 and at.select_slider(key="q_b").value == 32
    assert at.number_input(key="q_res").value == 6.0 and at.session_state["gpu"] == "h100-sxm"
    # Seed answers: int8 weights (13 + 21.47) / 3.35 = 10.29 ms; int8 cache (26 + 10.74) / 3.35 = 10.97 ms;
    # flip at 26e9 / 0.671e9 = 38.7; bf16 max batch (80 - 26 - 6) / 0.671 = 71.5 -> 71; bf16 step
    # (26 + 21.47) / 3.35 = 14.17 ms.
    assert metric(at, "int8 weights, bf16 cache").value == "10.29 ms"
    assert metric(at, "bf16 weights, int8 cache").value == "10.97 ms"
    assert metric(at, "They flip at B").value == "38.7"
    assert metric(at, "bf16: decode step").delta == "max batch 71"
    assert metric(at, "bf16: decode step").value == "14.17 ms"


def test_llama_button_selects_the_model():
    at = open_page(model="gpt2")
    at.button(key="q_exp_btn_1").click().run()
    assert at.session_state["model"] == "llama-3-8b" and at.radio(key="q_model").value == "sidebar"
    assert metric(at, "bf16: decode step").value == "15.05 ms"


def test_reserve_larger_than_the_gpu_is_an_error_not_a_traceback():
    at = open_page()
    at.number_input(key="q_res").set_value(90.0).run()
    assert not at.exception
    assert at.error and "reserve" in at.error[0].value


def test_bad_config_json_is_an_error_and_keeps_the_model():
    at = open_page(model="qwen2.5-7b")
    at.text_area(key="cfg_text").input("{not json").run()
    at.button(key="cfg_load").click().run()
    assert not at.exception and at.error
    assert at.session_state["model"] == "qwen2.5-7b"


def test_garbage_url_values_fall_back_to_defaults():
    at = open_page(emb="table", q_ctx="banana", q_b="0", q_res="-5", q_model="zzz", q_apply="42")
    assert at.select_slider(key="q_ctx").value == 8192 and at.select_slider(key="q_b").value == 32
    assert at.radio(key="q_model").value == "sidebar"
    assert metric(at, "bf16: decode step").value == "15.05 ms"


def test_quality_table_has_the_cliff():
    at = open_page()
    text = " ".join(str(v) for v in at.table[0].value.to_numpy().ravel())
    assert "nearly lossless" in text and "the cliff" in text


def test_a_model_that_does_not_fit_is_said_so():
    # Llama-3.1-405B in bf16: 811.7 GB of weights + 32 x 8,192 x 516,096 B = 135.3 GB of cache
    # = 947.0 GB, / 24 GB per L4 = 39.5 -> 40 of them
    at = pagetest.open_page(PAGE, model="llama-3.1-405b", gpu="l4")
    [warning] = [w.value for w in at.warning]
    assert "Does not fit on one NVIDIA L4 24GB" in warning
    assert "bf16 needs 40" in warning


def test_formats_table_says_what_a_weight_really_costs():
    at = open_page()
    table = next(d for d in pagetest.tables(at) if "bits_per_param" in d.columns).set_index("format")
    # Llama-3-8B: q4_0 blocks are 18 bytes per 32 weights = 4.5 bits; with the output head in q6_K and
    # f32 norms the whole model is 4,653,375,488 B x 8 / 8,030,261,248 = 4.64 bits per parameter.
    assert table.loc["q4_0", "bits_per_quantized_weight"] == 4.5
    assert round(table.loc["q4_0", "bits_per_param"], 2) == 4.64
    assert table.loc["q4_0", "weights_bytes"] == "4.65 GB"
    assert table.loc["mxfp4", "bits_per_quantized_weight"] == 4.25
    assert table.loc["bf16", "weights_bytes"] == "16.06 GB"


def test_a_block_format_in_the_sidebar_reaches_the_metrics():
    at = open_page(wq="q4_K_M")
    at.radio(key="q_apply").set_value("cache").run()
    # weights in q4_K_M (4,912,898,048 B), cache bf16 at 8K, B = 32: (4.9129e9 - 0.2955e9 + 32 x 4,096 x
    # 0.5625) / 3.35e12 = 1.378 ms of weights (the gathered table is q4_K) + 32 x 0.3205 ms of cache.
    step = calc.decode_step_time(LLAMA, H100, 32, 8192, "q4_K_M", "bf16")
    assert step.weights_s * 1e3 == pytest.approx(1.378, abs=0.001)
    assert metric(at, "bf16: decode step").value == fmt_seconds(step.total_s)


def test_a_crossover_below_one_sequence_is_said_in_words():
    # Llama-3-8B at 1,048,576 tokens: one sequence's bf16 cache is 1,048,576 x 131,072 B = 137.4 GB, more than the
    # 16.06 GB of bf16 weights, so the weights and the cache weigh the same at B = 16.06 / 137.4 = 0.117 < 1.
    at = open_page(q_ctx="1M", q_b="1")
    text = " ".join(m.value for m in at.markdown)
    assert "one sequence's cache already outweighs the weights" in text
    assert "B = 0.12," in text and "Below B = 0.1 " not in text


@pytest.mark.parametrize("query, clause", [
    # Llama-3-8B at 1M tokens: 16.06 GB of bf16 weights fit; one sequence's 137.44 GB of bf16 cache does not (fp8
    # and below hold one: 68.7 GB of fp8 cache beside 8.0 GB of weights)
    ({"q_ctx": "1M"}, "; max batch 0 for bf16: one sequence's KV cache does not fit beside the weights."),
    # Llama-3.1-70B at 128K: 141 GB of bf16 weights do not fit; fp8 and int8 weights (70.6 GB) do, but one
    # sequence's 21.5 GB of cache does not fit beside them
    ({"model": "llama-3.1-70b", "q_ctx": "128K"}, "; max batch 0 for bf16: the weights alone do not fit; for fp8 "
                                                 "and int8: one sequence's KV cache does not fit beside the weights."),
])
def test_a_max_batch_of_zero_says_whether_the_weights_or_the_cache_do_not_fit(query, clause):
    at = open_page(**query)
    [text] = [w.value for w in at.warning if w.value.startswith("Does not fit on one")]
    assert text.endswith("The step times below assume one device's bandwidth" + clause), text
    assert "a max batch of 0 means the weights alone" not in text
