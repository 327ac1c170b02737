"""AppTest of the speculative decoding page: it runs, edits reach the table, the wrong residual fails."""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
import pagetest
from pagetest import figures, metrics

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/speculative.py"


def open_page(query_params=None):
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query_params or {}).items():
        at.query_params[key] = value
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def metric(at, label_start):
    return next(m.value for m in metrics(at) if m.label.startswith(label_start))


def table(at):
    return pagetest.tables(at)[0].set_index("symbol")


def test_default_run_shows_the_seed_example():
    at = open_page()
    # Seed 000, step 3: alpha = 0.7, A accepted with 2/3, residual only B, output (0.6, 0.4).
    assert metric(at, "Acceptance rate") == "0.700"
    df = table(at)
    assert df.loc["A", "acceptance min(1, p/q)"] == pytest.approx(2 / 3)
    assert df.loc["B", "residual (resampled from)"] == pytest.approx(1.0)
    assert df.loc["A", "output"] == pytest.approx(0.6) and df.loc["B", "output"] == pytest.approx(0.4)
    assert metric(at, "Verdict") == "matches p"
    # sections 2 to 4 draw three figures; section 5, the serving estimate, two more (the frontier with and without
    # drafts, and the speculative estimate's breakdown bar)
    assert len(figures(at)) == 5


def test_the_table_shows_probabilities_as_the_sliders_do():
    # Course example: p = (0.6, 0.4), q = (0.9, 0.1). Row A: q 0.9, min(1, p/q) = 0.6 / 0.9 = 0.666... -> "0.67",
    # output 0.6 -> "0.60" (two decimals, as the sliders read), not "0.6000"
    at = open_page()
    header, *rows = pagetest.shown_tables(at)[0]
    row_a = dict(zip(header, rows[0]))
    assert row_a["x"] == "A" and row_a["q"] == "0.90" and row_a["min(1, p/q)"] == "0.67"
    assert row_a["output"] == "0.60" and row_a["p"] == "0.60"
    assert not any(len(c.split(".")[-1]) > 2 for row in rows for c in row[1:] if "." in c), rows


def test_editing_a_probability_updates_the_table():
    at = open_page()
    at.slider(key="sd_q0").set_value(0.5).run()
    assert not at.exception
    df = table(at)
    # q weights (0.5, 0.1) renormalise to (5/6, 1/6); A is accepted with 0.6 / (5/6) = 0.72;
    # alpha = 0.6 + 1/6 = 0.767.
    assert df.loc["A", "proposal q"] == pytest.approx(5 / 6)
    assert df.loc["A", "acceptance min(1, p/q)"] == pytest.approx(0.72)
    assert metric(at, "Acceptance rate") == "0.767"


def test_wrong_residual_switch_changes_the_verdict():
    at = open_page()
    assert metric(at, "Verdict") == "matches p"
    at.toggle(key="sd_wrong").set_value(True).run()
    assert not at.exception
    assert metric(at, "Verdict") == "NOT p"
    # One step with p sampled on rejection outputs A with 0.6 + 0.3 * 0.6 = 0.78.
    assert table(at).loc["A", "output"] == pytest.approx(0.78)
    assert at.error, "the failing test is explained in an error box"


def test_url_seeds_the_view_and_garbage_falls_back():
    at = open_page({"sd_p0": "0.5", "sd_p1": "0.5", "sd_q0": "0.5", "sd_q1": "0.5", "sd_g": "banana",
                    "sd_pair": "no-such-pair", "sd_ctx": "7"})
    # p = q = (0.5, 0.5): alpha = 1. The garbage values fall back to the defaults.
    assert metric(at, "Acceptance rate") == "1.000"
    assert at.slider(key="sd_g").value == 4
    assert at.selectbox(key="sd_pair").value == "llama-3.1-70b+llama-3.2-1b"
    assert at.select_slider(key="sd_ctx").value == 512
    fig = figures(at)[2]
    assert fig["layout"]["xaxis"]["type"] == "log"


def test_all_zero_target_is_an_error_message_not_a_traceback():
    at = open_page()
    for i in range(2):
        at.slider(key=f"sd_p{i}").set_value(0.0)
    at.run()
    assert not at.exception
    assert any("target p" in e.value and "positive" in e.value for e in at.error)


def test_per_position_chain_section():
    # "Your own rates" 0.9, 0.8, 0.7: E = 1 + 0.9 + 0.72 + 0.504 = 3.124; i.i.d. at a_1 = 0.9: (1 - 0.9^4)/0.1 = 3.439
    at = open_page({"sd_chain": "Your own rates", "sd_chain_rates": "0.9, 0.8, 0.7"})
    assert metric(at, "Tokens per verification") == "3.124"
    assert metric(at, "i.i.d. at a_1") == "3.439"
    # a typing mistake is a message, not a traceback, and the text stays
    at = open_page({"sd_chain": "Your own rates", "sd_chain_rates": "0.9, x"})
    assert any("'x' is not a number" in e.value for e in at.error)
    assert at.text_input(key="sd_chain_rates").value == "0.9, x"
    # the DeepSeek-V3 MTP chain, a1 = 0.85: 1.85 tokens per verification
    at = open_page({"sd_chain": "DeepSeek-V3 MTP, low end (a1 = 0.85)"})
    assert metric(at, "Tokens per verification") == "1.850"


def test_the_sidebar_models_mtp_module_is_offered_as_the_draft():
    # DeepSeek-V3 in the sidebar: its MTP module is the first chain; a = 0.85, c = 1.615B / 37.55B = 0.043:
    # 1.85 tokens per verification, 1.85 / 1.043 = 1.77x.
    at = open_page({"model": "deepseek-v3"})
    assert at.selectbox(key="sd_chain").value.startswith("DeepSeek-V3")
    assert "MTP module" in at.selectbox(key="sd_chain").value
    assert metric(at, "Tokens per verification") == "1.850"
    assert metric(at, "Chain speedup") == "1.77×"


def _ms(text: str) -> float:
    return float(text.replace(" ms", "").replace(",", ""))


def test_serving_section_prices_drafts_against_plain_decoding():
    # Section 5 on DeepSeek-V3 (its own MTP module) on H200 in fp8-block at 8 clients: TPOT falls below plain
    # decoding's, and the ITL (one round) is TPOT times the acceptance length the caption names (the golden curves'
    # median at 3 drafts, 2.875: DeepSeek-V3 has no curve of its own)
    at = open_page({"model": "deepseek-v3", "gpu": "h200", "wq": "fp8-block"})
    plain, spec = _ms(metric(at, "TPOT, plain")), _ms(metric(at, "TPOT, speculative"))
    itl = _ms(metric(at, "ITL (one round)"))
    assert spec < plain
    assert itl / spec == pytest.approx(2.875, rel=0.01)   # two decimals shown: 1% of slack
    assert any("2.88 tokens per round" in c.value and "median" in c.value for c in at.caption)
    # every draft rejected (AL 1): a round is a plain step plus 3 drafts, slower per token than plain decoding
    at = open_page({"model": "deepseek-v3", "gpu": "h200", "wq": "fp8-block", "sd_own": "true", "sd_al": "1.0"})
    assert _ms(metric(at, "TPOT, speculative")) > _ms(metric(at, "TPOT, plain"))
    # an AL above k + 1 is capped, and the page says so
    at = open_page({"model": "deepseek-v3", "gpu": "h200", "wq": "fp8-block", "sd_own": "true", "sd_al": "6.0",
                    "sd_k": "2"})
    assert any("taken as 3" in c.value for c in at.caption)
    assert _ms(metric(at, "ITL (one round)")) / _ms(metric(at, "TPOT, speculative")) == pytest.approx(3.0, rel=0.01)


def test_sglang_runs_at_most_48_requests_under_speculative_decoding_and_the_page_says_so():
    # SGLang's default max_running_requests under speculative decoding is 48: at 128 clients the speculative
    # estimate decodes 48 and queues the rest (its caption and the estimate's header say so); plain decoding and
    # vLLM decode all 128
    at = open_page({"model": "deepseek-v3", "gpu": "h200", "wq": "fp8-block", "sd_eng": "SGLang", "sd_conc": "128"})
    assert any("at most 48 running requests" in c.value and "stops at its batch" in c.value for c in at.caption)
    assert any("decode batch 48)" in m.value for m in at.markdown)
    # SGLang's own client books the round's wait per token: the page gives that ITL, the TPOT, beside the round's
    tpot, itl = metric(at, "TPOT, speculative"), metric(at, "ITL (one round)")
    assert any(f"report an ITL of {tpot}, the TPOT" in c.value and f"round's {itl}" in c.value for c in at.caption)
    # at 8 clients the cap does not bind: nothing queues and the page does not say so
    at = open_page({"model": "deepseek-v3", "gpu": "h200", "wq": "fp8-block", "sd_eng": "SGLang", "sd_conc": "8"})
    assert not any("running requests" in c.value for c in at.caption)
    assert any("decode batch 8)" in m.value for m in at.markdown)
    at = open_page({"model": "deepseek-v3", "gpu": "h200", "wq": "fp8-block", "sd_eng": "vLLM", "sd_conc": "128"})
    assert not any("running requests" in c.value or "sglang.bench_serving" in c.value for c in at.caption)
    assert any("decode batch 128)" in m.value for m in at.markdown)


@pytest.mark.parametrize("model, method", [("deepseek-v3", "mtp"), ("llama-3-8b", "head")])
def test_the_draft_opens_on_what_the_model_has(model, method):
    # DeepSeek-V3 ships one MTP module (num_nextn_predict_layers 1): the serving section opens on it; Llama-3-8B ships
    # none, so it opens on a one-layer draft head rather than on a module it lacks; a link still chooses
    query = {"model": model, "gpu": "h200"} | ({"wq": "fp8-block"} if model == "deepseek-v3" else {})
    at = open_page(query)
    assert at.selectbox(key="sd_meth").value == method
    at = open_page(query | {"sd_meth": "mtp"})
    assert at.selectbox(key="sd_meth").value == "mtp"
