"""AppTest of the "Latency against cost" page: TPOT against USD per 1M, the chosen point, replicas.

Checked against seed 000 step 4 (Llama-3-8B, H100 SXM, 8k, $3 per hour): TPOT <= 10 ms gives
B = 16 at 9.9 ms and $0.52; chat at B = 48: a 20.2 ms step, 50 tok/s per person, $0.35.
"""
import base64
import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import calc
from ui.formats import fmt_seconds, fmt_usd
import pagetest
from pagetest import metric, plotly_values as values, figures

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/latency_cost.py"
H100 = calc.get_accelerator("h100-sxm")
LLAMA3 = calc.get_model("llama-3-8b")


def open_page(**query) -> AppTest:
    return pagetest.open_page(PAGE, timeout=60, **query)


def test_default_picks_b16_for_a_10ms_target():
    at = open_page(emb="table")
    price = at.session_state["price"]  # the sidebar's list price for the H100
    step = calc.decode_step_time(LLAMA3, H100, 16, 8192, embedding="table")
    assert metric(at, "Chosen batch B") == "16"
    assert metric(at, "Its TPOT") == fmt_seconds(step.total_s) == "9.92 ms"  # seed: 9.9 ms
    # USD per 1M = price / (16 / 9.92 ms x 3600) x 1e6.
    assert metric(at, "USD per 1M output tokens") == fmt_usd(price / (16 / step.total_s * 3600) * 1e6)
    assert metric(at, "Replicas needed") == "63"  # ceil(1000 / 16)


def test_seed_000_experiment_at_3_usd():
    at = open_page()
    at.button(key="lc_exp_0").click().run()
    assert not at.exception
    assert (at.session_state["model"], at.session_state["gpu"], at.session_state["price"],
            at.session_state["lc_ctx"], at.session_state["lc_tpot"]) == ("llama-3-8b", "h100-sxm", 3.0, 8192, 10.0)
    assert metric(at, "Chosen batch B") == "16"
    assert metric(at, "USD per 1M output tokens") == "$0.52"  # seed 000 step 4
    # The chat marker at 20.2 ms: B = 48 (4.794 + 48 x 0.3205 = 20.18 ms; B = 49 is 20.50 ms), $0.35.
    chat = [md.value for md in at.markdown if md.value.startswith("**Chat**")]
    assert chat and "B = 48, 20.18 ms per token, 50 tok/s per person, $0.35 per 1M" in chat[0]


def test_tpot_slider_and_concurrency_move_the_metrics():
    at = open_page(emb="table")
    at.slider(key="lc_tpot").set_value(20.2).run()
    at.number_input(key="lc_users").set_value(1000).run()
    b = calc.max_batch_for_tpot(LLAMA3, H100, 8192, 20.2e-3, embedding="table")
    assert b == 48
    assert metric(at, "Chosen batch B") == "48"
    assert metric(at, "Replicas needed") == str(math.ceil(1000 / 48)) == "21"
    at.slider(key="lc_tpot").set_value(3.0).run()  # below the B = 1 step of 5.11 ms
    assert metric(at, "Chosen batch B") == "none"
    assert at.error and "even B = 1 takes 5.11 ms" in at.error[0].value


def test_front_spans_b1_to_the_memory_ceiling():
    at = open_page(emb="table")
    # the first chart that is not the serving estimate's breakdown bar (tests/test_serving_pages.py)
    spec = next(f for f in figures(at) if not any(d.get("name") == "serving estimate and range" for d in f["data"]))
    front = spec["data"][0]
    batches, tpots = values(front["customdata"]), values(front["x"])
    assert batches[0] == 1 and batches[-1] == 59  # seed 000: 59 sequences of 8k
    # TPOT at B = 1: 5.11 ms; at B = 59: 4.794 + 59 x 0.3205 = 23.70 ms.
    assert tpots[0] == pytest.approx(5.115, abs=0.001)
    assert tpots[-1] == pytest.approx(23.70, abs=0.01)
    names = [d.get("name") for d in spec["data"]]
    assert "agent: B = 16" in names and "chat: B = 59" in names  # default chat target 50 ms -> the ceiling
    assert not pagetest.tables(at)                       # the table is built only while its expander is open
    at.session_state["lc_front_table"] = True
    at.run()
    assert pagetest.tables(at)[0]["batch"].tolist() == list(range(1, 60))


def test_garbage_url_falls_back_to_defaults():
    at = open_page(emb="table", lc_tpot="abc", lc_users="-3", lc_ctx="zzz", lc_chat="1e9")
    assert at.slider(key="lc_tpot").value == 10.0
    assert at.number_input(key="lc_users").value == 1000
    assert metric(at, "Chosen batch B") == "16"


def test_model_that_does_not_fit_is_an_error_not_a_traceback():
    at = open_page(model="deepseek-v3")
    assert at.error and "do not fit" in at.error[0].value


def test_a_context_whose_cache_does_not_fit_says_so_not_that_the_weights_do_not():
    # Llama-3-8B bf16 on an H100: 16.06 GB of weights fit in 80 GB; one sequence of 1,048,576 tokens holds
    # 2 x 8 KV heads x 128 x 32 layers x 2 B = 131,072 B a token -> 137.4 GB of cache, which does not fit beside them
    at = open_page(lc_ctx=1048576)
    assert calc.weight_bytes(LLAMA3, "bf16") < H100.memory_bytes
    assert calc.kv_cache_bytes(LLAMA3, 1048576, 1, "bf16") == 1048576 * 131_072
    assert at.error and not at.exception
    text = at.error[0].value
    assert "fit on one" in text and "KV cache at S = 1,048,576" in text and "137.44 GB" in text, text
