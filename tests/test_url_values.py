"""Deep links may name a select slider's option by its plain value: /kv_cache?kv_ctx=16384 opens at 16K.

A URL-bound select slider shows (and writes into the URL) its label, "16K" for 16,384 tokens; a link with
the plain number used to be dropped silently and the page opened on its default of 8K.
"""
import pytest

from pagetest import metric, open_page


@pytest.mark.parametrize("value", ["16384", "16K", "16,384"])
def test_kv_context_from_a_plain_number_or_the_label(value):
    at = open_page("app_pages/kv_cache.py", kv_ctx=value)
    assert at.select_slider(key="kv_ctx").value == 16384
    assert at.query_params["kv_ctx"] == "16K"              # the one form the app writes


def test_float_options_and_option_ids_are_accepted_too():
    at = open_page("app_pages/batching.py", bt_rate="32")    # the option is 32.0, labelled "32.0"
    assert at.select_slider(key="bt_rate").value == 32.0
    at = open_page("app_pages/kv_cache.py", kv_layout="mqa")   # the option id; the label reads "MQA"
    assert at.radio(key="kv_layout").value == "mqa"


def test_a_value_that_names_no_option_is_still_ignored():
    at = open_page("app_pages/kv_cache.py", kv_ctx="12345")  # 12,345 is not one of the context options
    assert at.select_slider(key="kv_ctx").value == 8192
