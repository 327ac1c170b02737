"""The shared number formatters of the pages: small values keep two significant digits, never "0"."""
import math

import pytest

from ui.formats import fmt_number, fmt_seconds, fmt_usd


@pytest.mark.parametrize("value,text", [
    (0.37, "0.37 tok/s"),        # Llama-3.1-405B on an L4: 300e9 / 810e9 B per step
    (0.0037, "0.0037 tok/s"),
    (3.7, "3.7 tok/s"),
    (0.0996, "0.10 tok/s"),      # rounds up to 0.10: still two digits, not "0.100"
    (0.999, "1.0 tok/s"),
    (9.96, "10 tok/s"),
    (196.4, "196 tok/s"),        # the course's 196 tok/s (Llama-3-8B, H100, B = 1)
    (12345.6, "12,346 tok/s"),
    (0, "0 tok/s"),
    (math.nan, "n/a"),
    (999_999_999_999_999, "999,999,999,999,999 tok/s"),  # below 1e15: every digit, grouped
    (1e30, "1.0e+30 tok/s"),     # a rate typed as 1e30 would be 31 digits
    (1e308, "1.0e+308 tok/s"),
])
def test_fmt_number(value, text):
    assert fmt_number(value, "tok/s") == text


@pytest.mark.parametrize("value,text", [
    (5.67, "$5.67"), (0.39, "$0.39"), (0.1, "$0.10"), (0.012, "$0.012"), (0.0049, "$0.0049"),
    (1234.5, "$1,234"), (0, "$0.00"),
])
def test_fmt_usd_keeps_two_digits_below_a_dollar(value, text):
    assert fmt_usd(value) == text


@pytest.mark.parametrize("value,text", [
    (0.021675, "$0.0217"),    # the bill's Opus generation: 21,675 USD per 1M generations, 3 significant digits
    (0.0123456, "$0.0123"), (0.000919, "$0.000919"), (0.5173, "$0.517"), (0.39, "$0.390"),
    (12.3456, "$12.35"),      # cents below $100
    (99.996, "$100"),         # rounds up to whole dollars, not "$100.00"
    (123.45, "$123"), (1_788_187.4, "$1,788,187"),  # whole dollars, with separators, from $100
    (-3.5, "-$3.50"), (float("nan"), "n/a"),
])
def test_fmt_usd_with_three_significant_digits_for_tables(value, text):
    assert fmt_usd(value, significant=3) == text


@pytest.mark.parametrize("value,text", [
    (4e-7, "0.40 µs"), (3.7e-6, "3.7 µs"), (5.12e-4, "512 µs"), (5.11e-3, "5.11 ms"), (2.7, "2.70 s"),
])
def test_fmt_seconds_keeps_two_digits_below_a_microsecond(value, text):
    assert fmt_seconds(value) == text


def test_the_equations_print_the_same_figures_as_the_metrics():
    # one formatter for both: a 0.37 tok/s metric must not read "0" in its formula
    from ui import equations
    assert equations.rate(0.37) == "0.37" and equations.rate(2126.3) == "2{,}126"
    assert equations.sec(4e-7) == r"0.40\,\mu\text{s}" and equations.sec(5.12e-3) == r"5.12\,\text{ms}"
    assert equations.usd(0.012) == r"\$0.012" and equations.usd(1234.5) == r"\$1{,}234"


def test_the_roofline_shows_405b_on_an_l4_below_one_token_per_second():
    # Llama-3.1-405B on an L4 at B = 1: about 810 GB of weights read per step at 300 GB/s, 2.7 s,
    # 0.37 tok/s; the roofline metric printed "0" (a whole-number format)
    import calc
    from pagetest import metric, open_page
    at = open_page("app_pages/roofline.py", model="llama-3.1-405b", gpu="l4", rf_b="1")
    step = calc.decode_step_time(calc.get_model("llama-3.1-405b"), calc.get_accelerator("l4"), 1, 8192)
    assert metric(at, "Throughput (tok/s), bound") == f"{step.tokens_per_s:.2f}" != "0"
