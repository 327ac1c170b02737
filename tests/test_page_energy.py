"""AppTest: the roofline and latency-cost pages show J per output token beside USD per 1M; the sidebar says when
a memory convention has no driver total on file for the accelerator."""
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import calc

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _page(path: str, **query):
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(path).run()
    assert not at.exception
    return at


def test_roofline_shows_price_and_energy_at_the_chosen_batch():
    at = _page("app_pages/roofline.py")
    [text] = [c.value for c in at.caption if "J per output token" in c.value]
    # defaults: Llama-3-8B on an H100 SXM at $3.99/h, S = 8,192, B = 32; the step from calc's roofline,
    # the wall power (700 + 575) x 1.58 = 2,014.5 W
    step = calc.decode_step_time(calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm"), 32, 8192)
    assert f"{2014.5 / step.tokens_per_s:,.3g} J per output token" in text
    assert f"${calc.cost_per_million(step.tokens_per_s, 3.99):.2f} per 1M output tokens" in text
    assert "United States grid" in text and "PUE 1.58" in text


def test_large_energy_figures_are_written_out_not_in_exponent_form():
    # Llama-3.1-70B in fp8 at B = 1 on an H100: some 47 tok/s at 2,014.5 W, about 43 J a token, thousands of
    # grams of CO2e per 1M tokens: "4,570 g", not "4.57e+03 g"
    at = _page("app_pages/roofline.py", model="llama-3.1-70b", wq="fp8", rf_b="1")
    [text] = [c.value for c in at.caption if "J per output token" in c.value]
    grams = re.search(r"\), ([0-9,.e+]+) g CO2e per 1M tokens", text).group(1)
    assert re.fullmatch(r"[1-9]\d{0,2}(,\d{3})+", grams), text
    assert "e+" not in text.split("g CO2e")[0]
    from ui.energy import three_digits
    assert [three_digits(v) for v in (9139.6, 999.6, 85.23, 0.2224, 1.2e-5)] == ["9,140", "1,000", "85.2", "0.222",
                                                                                  "0.000012"]


def test_energy_inputs_move_the_figure():
    # France's grid (56.04 g/kWh) and a hyperscaler's PUE of 1.1: (700 + 575) x 1.1 = 1,402.5 W
    at = _page("app_pages/latency_cost.py", en_grid="FRA", en_pue="1.1")
    [text] = [c.value for c in at.caption if "J per output token" in c.value]
    assert "France grid" in text and "PUE 1.1" in text and "1,402 W at the wall" in text


def test_measured_power_is_used_where_one_is_on_file():
    at = _page("app_pages/roofline.py", gpu="rtx-4090", en_basis="measured")
    [text] = [c.value for c in at.caption if "J per output token" in c.value]
    assert "(247 W board" in text                 # 246.6 W read under a vLLM decode (club-3090#697)


@pytest.mark.parametrize("memory,shown", [("driver", True), ("engine", True), ("datasheet", False)])
def test_sidebar_says_when_no_driver_total_is_on_file(memory, shown):
    at = _page("app_pages/roofline.py", gpu="b300", mem=memory)
    notes = [i.value for i in at.sidebar.info if "No driver-reported total memory" in i.value]
    assert bool(notes) == shown
    at = _page("app_pages/roofline.py", gpu="h200", mem=memory)   # 143,771 MiB on file: no notice
    assert not [i.value for i in at.sidebar.info if "No driver-reported total memory" in i.value]
