"""A link value that no control accepts is named on the page (Streamlit drops it silently and the control
starts from its default); values the controls take, defaults included, and the app's own links are not."""
from urllib.parse import parse_qsl

import pytest

from course import exercises
from ui.classroom import STORY
from pagetest import open_page

NOTICE = "Link values that no control on this page accepts were ignored"


def _notice(at) -> str:
    return next((w.value for w in at.warning if NOTICE in w.value), "")


def _open_first(page: str, **query):
    """The page as a link opens it: the page itself runs first (pagetest.open_page runs home first)."""
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(__import__("pagetest").APP), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = str(v)
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("page, query, named", [
    ("app_pages/roofline.py", {"rf_b": "abc"}, ["rf_b=abc (not one of its 16 options, 1 to 1024)"]),               # not a batch of the slider
    ("app_pages/kv_cache.py", {"kv_ctx": "-5", "kv_b": "4"}, ["kv_ctx=-5 (not one of its 14 options, 128 to 1M)"]),  # kv_b=4 is taken
    ("app_pages/roofline.py", {"wq": "bogus"}, ["wq=bogus (not one of its"]),               # the sidebar's weight dtype
    ("app_pages/batching.py", {"mem": "garbage"}, ["mem=garbage (not one of datasheet, driver, engine)"]),         # the memory convention radio
    ("app_pages/many_gpus.py", {"mg_tp": "999"}, ["mg_tp=999 (not one of 1, 2, 4, 8, 16, 32)"]),            # TP is 1..32 in powers of 2
    ("app_pages/monthly_bill.py", {"price": "abc"}, ["price=abc (not a number)"]),         # a number input
    ("app_pages/monthly_bill.py", {"mb_hit": "-50"}, ["mb_hit=-50 (outside 0 to 100)"]),       # the hit-rate slider runs 0..100
    ("app_pages/speculative.py", {"sd_p0": "2", "sd_p1": "abc"}, ["sd_p0=2 (outside 0 to 1)", "sd_p1=abc (not a number)"]),  # p(A) in 0..1
    ("app_pages/many_gpus.py", {"mg_rep": "0"}, ["mg_rep=0 (outside 1 to 100,000)"]),              # replicas: a number input from 1
    # a range end of ten million is written with its digits, as the pages write numbers, not "1e+07"
    ("app_pages/monthly_bill.py", {"mb_dau": "-5"}, ["mb_dau=-5 (outside 0 to 10,000,000,000)"]),
    # the sidebar's model and GPU: too many presets to list, so "not a known ..."
    ("app_pages/roofline.py", {"model": "nonexistent"}, ["model=nonexistent (not a known model)"]),
    ("app_pages/kv_cache.py", {"gpu": "xyz", "kv_b": "4"}, ["gpu=xyz (not a known GPU)"]),
    ("app_pages/home.py", {"model": "nonexistent", "gpu": "xyz"}, ["model=nonexistent (not a known model)",
                                                                   "gpu=xyz (not a known GPU)"]),
    # the live page ends early with st.stop() before a run: the sidebar's refusals are named all the same
    ("app_pages/live.py", {"model": "banana", "gpu": "zzz"}, ["model=banana (not a known model)",
                                                               "gpu=zzz (not a known GPU)"]),
    # a select box of one option: "not X, the only option" (DeepSeek-V3.2's rows are vLLM's only)
    ("app_pages/measured.py", {"ms_model": "deepseek-v3.2", "ms_engine": "zzz"}, ["ms_engine=zzz (not vLLM, the only option)"]),
    # a long value is cut at 40 characters, with an ellipsis that says so
    ("app_pages/roofline.py", {"wq": "x" * 60}, ["wq=" + "x" * 40 + "… (not one of its"]),
    ("app_pages/roofline.py", {"wq": "y" * 40}, ["wq=" + "y" * 40 + " (not one of its"]),   # 40: shown whole
    ("app_pages/home.py", {"model": "custom:my model"},                 # loaded in another browser session
     ["model=custom:my model (a model loaded from a config.json in another browser session)"]),
])
def test_a_refused_value_is_named(page, query, named):
    # each with why: the options it is not one of (up to 8 short ones named, more by their count and ends: the
    # roofline's batch slider has 16 stops from 1 to 1024), not a number, or the range it is outside
    text = _notice(_open_first(page, **query))
    for n in named:
        assert n in text, text
    assert "kv_b" not in text


@pytest.mark.parametrize("page, query", [
    ("app_pages/kv_cache.py", {"kv_ctx": "8192"}),      # the default, as a plain number (rewritten to "8K")
    ("app_pages/kv_cache.py", {"kv_ctx": "16K", "kv_layout": "mqa"}),
    ("app_pages/roofline.py", {"rf_b": "32", "emb": "table", "not_a_control": "x"}),  # no control reads the last
    ("app_pages/roofline.py", {"model": "qwen3-8b", "gpu": "h200"}),   # presets of the sidebar's lists
    ("app_pages/monthly_bill.py", {"mb_hit": "35"}),   # within 0..100
    ("app_pages/speculative.py", {"sd_p0": "0.3"}),
])
def test_values_the_controls_take_are_not_named(page, query):
    assert _notice(_open_first(page, **query)) == ""


@pytest.mark.parametrize("value", ["sglang", "SGLang", "SGLANG", "sgLang"])
def test_a_serving_engine_link_takes_its_id_or_name_in_any_case(value):
    # the selectbox binds by its label ("SGLang"); the measured page's links say "sglang": both open on SGLang
    at = _open_first("app_pages/many_gpus.py", mg_srv_engine=value)
    assert at.selectbox(key="mg_srv_engine").value == "sglang"
    assert _notice(at) == ""
    assert at.query_params["mg_srv_engine"] in ("SGLang", ["SGLang"])      # the one form the app writes


@pytest.mark.parametrize("value", ["trtllm", "TRTLLM", "tensorrt-llm", "TensorRT-LLM"])
def test_tensorrt_llm_is_named_by_its_id_or_its_name(value):
    at = _open_first("app_pages/roofline.py", rf_srv_engine=value)
    assert at.selectbox(key="rf_srv_engine").value == "trtllm" and _notice(at) == ""


def test_the_apps_own_links_raise_no_notice():
    # Every exercise's "open the page that shows the answer" link and every step of the lecture.
    links = [(f"app_pages/{ex.page}.py", dict(parse_qsl(ex.link))) for ex in exercises.all_exercises()]
    links += [(page, {k: str(v) for k, v in params.items()}) for page, params, _ in STORY]
    for page, query in links:
        assert _notice(_open_first(page, **query)) == "", (page, query)


@pytest.mark.parametrize("page, query, named, kept", [
    ("app_pages/kv_cache.py", {"kv_ctx": "inf", "kv_b": "4"}, "kv_ctx=inf", {"kv_b": 4}),
    ("app_pages/monthly_bill.py", {"mb_hit": "NaN", "mb_dau": "250000"}, "mb_hit=NaN", {"mb_dau": 250_000}),
    ("app_pages/batching.py", {"bt_pl": "-Infinity", "gpu": "h200"}, "bt_pl=-Infinity", {"gpu": "h200"}),
])
def test_a_value_that_is_not_a_finite_number_is_named_on_the_page_and_the_rest_of_the_link_holds(
        page, query, named, kept):
    at = _open_first(page, **query)
    main = [w.value for w in at.main.warning]  # the page itself, not the sidebar (closed in a narrow window)
    message = next((m for m in main if "Ignored link parameters" in m), "")
    assert named in message, main                       # the parameter and the value it ignored
    assert "not a finite number" in message, message
    for key, value in kept.items():                      # the link's other values were taken
        assert at.query_params[key] in (str(value), [str(value)]), (key, at.query_params[key])
        widget = next((w for kind in ("number_input", "select_slider", "slider", "selectbox")
                       for w in at.get(kind) if getattr(w, "key", None) == key), None)
        if widget is not None:
            assert widget.value == value, (key, widget.value)
