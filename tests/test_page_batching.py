"""AppTest of the Batching and memory page: widgets -> calc.batching -> metrics and charts."""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import calc
from calc.batching import batching_experiment
from ui import formats
import pagetest
from pagetest import metric, metric_element, figures

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/batching.py"
# The page's documented defaults (the widget values when nothing is set).
DEFAULTS = dict(n_requests=200, arrival_rate_per_s=16.0, prompt_mean_tokens=512, prompt_spread=0.5,
                output_mean_tokens=256, output_spread=1.0, distribution="lognormal", max_len_tokens=4096,
                slot_limit=64, block_size_tokens=16, seed=0)
LLAMA, H100 = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")


def open_page(**query) -> AppTest:
    return pagetest.open_page(PAGE, timeout=60, **query)


@pytest.fixture(scope="module")
def default_page():
    return open_page()


def test_default_run_shows_calc_numbers(default_page):
    exp = batching_experiment(LLAMA, H100, **DEFAULTS)
    s, c = exp.comparison.static.summary, exp.comparison.continuous.summary
    assert metric(default_page, "Static: tok/s") == f"{s.throughput_tokens_per_s:,.0f}"
    assert metric(default_page, "Continuous: tok/s") == f"{c.throughput_tokens_per_s:,.0f}"
    speedup = metric_element(default_page, "Continuous: tok/s").delta
    assert speedup == f"{exp.comparison.speedup:.2f}x static"
    assert metric(default_page, "Static: TTFT p50") == formats.fmt_seconds(s.ttft_p50_s)
    assert metric(default_page, "Paged: KV wasted") == f"{exp.paging_summary.paged_waste_fraction:.1%}"
    charts = figures(default_page)
    assert len(charts) == 3
    timeline = charts[0]  # active slots (x, y) and cumulative tokens (x2, y2)
    assert {t["name"] for t in timeline["data"]} == {"static", "continuous"}
    assert sorted(t.get("yaxis", "y") for t in timeline["data"]) == ["y", "y", "y2", "y2"]
    assert "s" in timeline["layout"]["xaxis"]["title"]["text"]
    bars = charts[1]
    # Used memory is the same for both allocators: the token states of the 200 requests (GB).
    assert bars["data"][0]["y"][0] == pytest.approx(exp.paging_summary.used_bytes / 1e9)
    assert len(default_page.get("download_button")) >= 4


def test_default_prefix_section_reproduces_seed_000(default_page):
    # Seed 000 step 2: 20 conversations sharing a 1,000-token prompt on Llama-3-8B:
    # prefill 20,000 -> 1,000 tokens; cache 20,000 x 131,072 B = 2.62 GB -> 1,000 x 131,072 B = 131 MB.
    assert metric(default_page, "Prefill tokens, no cache") == "20,000"
    assert metric(default_page, "Prefill tokens, cached") == "1,000"
    assert metric(default_page, "KV without cache") == "2.62 GB"
    assert metric(default_page, "KV with cache") == "131.07 MB"


def test_moving_sliders_changes_metrics_to_calc_values():
    at = open_page()
    at.select_slider(key="bt_rate").set_value(32.0).run()
    assert not at.exception
    exp = batching_experiment(LLAMA, H100, **{**DEFAULTS, "arrival_rate_per_s": 32.0})
    assert metric(at, "Continuous: tok/s") == f"{exp.comparison.continuous.summary.throughput_tokens_per_s:,.0f}"
    at.select_slider(key="bt_block").set_value(256).run()
    exp = batching_experiment(LLAMA, H100, **{**DEFAULTS, "arrival_rate_per_s": 32.0, "block_size_tokens": 256})
    assert metric(at, "Paged: KV wasted") == f"{exp.paging_summary.paged_waste_fraction:.1%}"
    at.slider(key="bt_hit").set_value(0.5).run()
    # With h = 0.5: 1,000 x (1 + 19 x 0.5) = 10,500 prefill tokens.
    assert metric(at, "Prefill tokens, cached") == "10,500"
    pc = calc.prefix_cache_savings(LLAMA, 20, 1000, 0, 0.5)
    assert metric(at, "Prefill tokens, cached") == f"{pc.prefill_tokens_with:,.0f}"


def test_experiment_buttons_set_state():
    at = open_page()
    at.button(key="bt_exp_0").click().run()  # chat traffic
    assert at.select_slider(key="bt_rate").value == 24.0
    assert at.slider(key="bt_ospread").value == 1.5
    assert at.radio(key="bt_dist").value == "lognormal"
    at.button(key="bt_exp_1").click().run()  # equal lengths
    assert at.radio(key="bt_dist").value == "fixed"
    at.button(key="bt_exp_2").click().run()  # light traffic: starts from the defaults, not from "equal lengths"
    assert at.select_slider(key="bt_rate").value == 0.5
    assert at.radio(key="bt_dist").value == "lognormal" and at.slider(key="bt_ospread").value == 1.0
    at.button(key="bt_exp_3").click().run()  # 32K reservation: memory caps the 512 slots at 14
    assert at.select_slider(key="bt_maxlen").value == 32768
    assert at.select_slider(key="bt_rate").value == 16.0
    assert any("14 sequences" in i.value for i in at.info)
    at.slider(key="bt_hit").set_value(0.3).run()
    at.button(key="bt_pexp_1").click().run()
    assert at.slider(key="bt_hit").value == 0.5
    at.button(key="bt_pexp_0").click().run()
    assert at.slider(key="bt_hit").value == 1.0 and at.slider(key="bt_pn").value == 20
    assert not at.exception


def test_deep_link_and_garbage_in_url():
    at = open_page(bt_block="64", bt_n="100")
    assert at.select_slider(key="bt_block").value == 64
    assert at.slider(key="bt_n").value == 100
    at = open_page(bt_rate="banana", bt_n="-5", bt_dist="gaussian", bt_hit="7")
    assert at.select_slider(key="bt_rate").value == 16.0
    assert at.slider(key="bt_n").value == 200
    assert at.radio(key="bt_dist").value == "lognormal"
    assert at.slider(key="bt_hit").value == 1.0
    assert not at.error


def test_a_calc_error_is_a_message_and_keeps_the_inputs(monkeypatch):
    # What the core says when the weights leave no room (see test_batching): shown, not raised.
    import calc.batching

    def refuse(*args, **kwargs):
        raise ValueError("Llama-3.1-405B does not fit on one NVIDIA H100 SXM 80GB")

    at = open_page()
    monkeypatch.setattr(calc.batching, "batching_experiment", refuse)
    at.slider(key="bt_n").set_value(150).run()  # inputs not seen before: the cached result cannot answer
    assert not at.exception
    assert at.error and "does not fit" in at.error[0].value
    assert at.slider(key="bt_n").value == 150


def test_the_per_request_paging_table_is_built_only_while_open():
    # hundreds of rows (one per request): a stream control must not rebuild it while its expander is closed
    at = pagetest.open_page("app_pages/batching.py")
    assert len(pagetest.tables(at)) == 1          # the summary table only
    at.session_state["bt_paging_table"] = True
    at.run()
    exp = batching_experiment(LLAMA, H100, **DEFAULTS)
    paging = pagetest.tables(at)[1]
    assert len(paging) == len(exp.paging) == DEFAULTS["n_requests"]
    # shown in MB: the first request's bytes / 10^6
    assert paging["used_bytes"].iloc[0] == pytest.approx(exp.paging["used_bytes"].iloc[0] / 1e6)


def _window_notes(at) -> list[str]:
    return [w.value for w in at.warning if "Beyond the model's window" in w.value]


def test_a_sequence_longer_than_the_models_window_is_marked():
    # Llama-3-8B was trained for 8,192 tokens (max_position_embeddings): a 32K reservation per sequence is beyond it
    notes = _window_notes(open_page(bt_maxlen="32768"))
    assert notes and "32K" in notes[0] and "8,192" in notes[0], notes
    assert not _window_notes(open_page(bt_maxlen="8192"))


def test_a_conversation_longer_than_the_window_is_marked_in_the_prefix_section():
    # a 6,000-token shared prompt + 4,000 own tokens = 10,000 tokens of one conversation's context > 8,192
    notes = _window_notes(open_page(bt_pl="6000", bt_pu="4000"))
    assert notes and "8,192" in notes[0], notes


def test_paging_caption_says_what_it_leaves_out():
    # Gemma-4-26B-A4B's 25 sliding layers hold at most 1,024 tokens: its 225,280 B per token at every token is an
    # upper bound. Nemotron-3 Nano's 23 Mamba layers hold a constant state the comparison leaves out (it charges
    # 6,144 B per token and nothing else): per layer a conv state of 3 x (4,096 + 2 x 8 x 128) x 2 B = 36,864 B and
    # an SSM state of 64 x 64 x 128 x 4 B = 2,097,152 B, x 23 = 49,082,368 B per sequence, which the words name.
    # Llama-3-8B (every layer full attention, no state) needs no such words.
    from ui.batching_views import bound_words
    gemma = bound_words(calc.get_model("gemma-4-26b-a4b"))
    assert "upper bound" in gemma and "constant state" not in gemma
    nano = calc.get_model("nemotron-3-nano-30b-a3b")
    words = bound_words(nano)
    assert calc.kv.kv_state_bytes(nano) == 23 * (36_864 + 2_097_152)
    assert "understate" in words and formats.fmt_bytes(23 * (36_864 + 2_097_152)) in words
    assert "upper bound" not in words
    assert bound_words(calc.get_model("llama-3-8b")) == ""
    at = open_page(model="gemma-4-26b-a4b")
    assert not at.exception
    assert any("the KV here is an upper bound" in c.value for c in at.caption)
