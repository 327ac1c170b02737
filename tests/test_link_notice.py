"""A link value that no control accepts is named on the page (Streamlit drops it silently and the control
starts from its default), and so is a link parameter that nothing on the page reads; values the controls take,
defaults included, and the app's own links are not."""
import re
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from course import exercises
from ui import url_state
from ui.classroom import STORY
from pagetest import open_page

NOTICE = "Link values that no control on this page accepts were ignored"
UNREAD = "Link parameters that no control shown on this page reads were ignored: "
#: A parameter no control reads, added to the app's own links: named alone, it shows that the check ran.
CANARY = {"zz_canary": "1"}
CANARY_ONLY = UNREAD + "zz_canary=1."


def _notices(at) -> list[str]:
    return [w.value for w in at.warning if NOTICE in w.value or UNREAD in w.value]


def _notice(at) -> str:
    return next(iter(_notices(at)), "")


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
    # requests/s: a number input from 0 with no max (Streamlit's end, 1.79769e308, is not named as a range end)
    ("app_pages/many_gpus.py", {"mg_rps": "-5"}, ["mg_rps=-5 (below 0, the least it accepts)"]),
    # a range end of ten million is written with its digits, as the pages write numbers, not "1e+07"
    ("app_pages/monthly_bill.py", {"mb_dau": "-5"}, ["mb_dau=-5 (outside 0 to 10,000,000,000)"]),
    # the sidebar's model and GPU: too many presets to list, so "not a known ..."
    ("app_pages/roofline.py", {"model": "nonexistent"}, ["model=nonexistent (not a known model)"]),
    ("app_pages/kv_cache.py", {"gpu": "xyz", "kv_b": "4"}, ["gpu=xyz (not a known GPU)"]),
    # a character that does not print ("%00" in a link) is named by its escape, backslash escaped for markdown, which
    # shows as gpu=\x00, not as a blank or a replacement mark
    ("app_pages/kv_cache.py", {"gpu": "\x00", "kv_b": "4"}, ["gpu=\\\\x00 (not a known GPU)"]),
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
    ("app_pages/roofline.py", {"rf_b": "32", "emb": "table"}),
    ("app_pages/roofline.py", {"model": "qwen3-8b", "gpu": "h200"}),   # presets of the sidebar's lists
    ("app_pages/monthly_bill.py", {"mb_hit": "35"}),   # within 0..100
    ("app_pages/speculative.py", {"sd_p0": "0.3"}),
])
def test_values_the_controls_take_are_not_named(page, query):
    assert _notice(_open_first(page, **query)) == ""


def test_a_parameter_no_control_reads_is_named_and_the_values_the_controls_take_are_not():
    at = _open_first("app_pages/roofline.py", rf_b="32", emb="table", not_a_control="x")
    assert _notices(at) == [UNREAD + "not_a_control=x."]
    assert at.select_slider(key="rf_b").value == 32          # the rest of the link holds


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
    # Every exercise's "open the page that shows the answer" link and every step of the lecture (its state, and
    # story=N&present=1 as the lecture's own links write it). The canary, which no control reads, is named
    # alone: the check ran after the page, and named nothing of the app's own.
    links = [(f"app_pages/{ex.page}.py", dict(parse_qsl(ex.link))) for ex in exercises.all_exercises()]
    links += [(page, {**{k: str(v) for k, v in params.items()}, "story": str(n), "present": "1"})
              for n, (page, params, _) in enumerate(STORY, 1)]
    for page, query in links:
        assert _notices(_open_first(page, **query, **CANARY)) == [CANARY_ONLY], (page, query)


# -- parameters that nothing on the page reads ----------------------------------------------------------------
@pytest.mark.parametrize("page, query, refused, unread", [
    ("app_pages/latency_cost.py", {"batch": "-5", "ctx": "abc"}, [], ["batch=-5", "ctx=abc"]),
    ("app_pages/latency_cost.py", {"batch": "-5", "ctx": "abc", "lc_tpot": "abc"}, ["lc_tpot=abc (not a number)"],
     ["batch=-5", "ctx=abc"]),
    ("app_pages/roofline.py", {"rf_b": "abc", "not_a_control": "x"},
     ["rf_b=abc (not one of its 16 options, 1 to 1024)"], ["not_a_control=x"]),
    ("app_pages/home.py", {"model": "nonexistent", "zz": "1"}, ["model=nonexistent (not a known model)"], ["zz=1"]),
    ("app_pages/home.py", {"h_b": "4", "zz": "1", "kv_ctx": "16K"}, [], ["zz=1", "kv_ctx=16K"]),  # another page's
    ("app_pages/kv_cache.py", {"kv_ctx": "-5", "rf_b": "32"}, ["kv_ctx=-5 (not one of its 14 options, 128 to 1M)"],
     ["rf_b=32"]),
])
def test_a_parameter_no_control_reads_is_named_beside_the_refused_values(page, query, refused, unread):
    # one warning: the refused values' sentence, then the unread parameters' sentence, in the link's order
    notices = _notices(_open_first(page, **query))
    assert len(notices) == 1, notices
    expected = url_state.link_notice(refused, unread)
    if refused:
        assert notices[0].startswith(NOTICE) and notices[0].endswith(UNREAD + ", ".join(unread) + "."), notices
        for r in refused:
            assert r in notices[0], notices
    else:
        assert notices[0] == expected, notices


def test_an_unread_parameter_is_named_escaped_and_cut():
    text = _notice(_open_first("app_pages/home.py", **{"a*b": "[x]" + "y" * 60, "k" * 50: "1"}))
    assert text == UNREAD + "a\\*b=\\[x\\]" + "y" * 37 + "…, " + "k" * 40 + "…=1.", text


def test_many_unread_parameters_are_counted_past_the_first_twenty():
    text = _notice(_open_first("app_pages/home.py", **{f"p{i:02d}": str(i) for i in range(25)}))
    assert text == UNREAD + ", ".join(f"p{i:02d}={i}" for i in range(20)) + ", and 5 more.", text


def _config_link() -> dict:
    import json

    import calc
    from ui.custom_models import model_to_param
    cfg = calc.models.hf_config("llama-3.2-1b")
    mine = calc.config_json.model_from_json_text(json.dumps(cfg), name="my-1b")
    return {"model": "custom:my-1b", "cfg": model_to_param(mine)}


def test_the_apps_own_link_keys_are_not_named():
    from classroom import poll
    from classroom.store import get_store
    store = get_store()
    o = poll.open_session(store)
    student = poll.join(store, o.code, "Ada")
    links = [
        ("app_pages/home.py", {"story": "1", "present": "1"}),   # the sidebar's "Start the lecture"
        ("app_pages/home.py", {"present": "1"}),                  # "End the lecture" in presenter mode
        ("app_pages/roofline.py", {"mbu": "42"}),                # the live page's "Use 42% as MBU"
        ("app_pages/kv_cache.py", _config_link()),               # a config.json-loaded model's link
        ("app_pages/home.py", _config_link()),
        ("app_pages/monthly_bill.py", {"mb_prices": "out1=30"}),  # the bill's edited prices
        ("app_pages/kv_cache.py", {"kv_layout": "gqa"}),          # a layout by its id
        ("app_pages/exercises.py", {"variant": "7"}),
        ("app_pages/exercises.py", {"teacher": "not-a-key"}),     # refused by the page itself, with its own words
        ("app_pages/poll.py", {"code": o.code, "key": o.teacher_key, "present": "1"}),  # the teacher's view
        ("app_pages/poll.py", {"code": o.code, "me": student}),   # a student's
        ("app_pages/home.py", {"embed": "true", "embed_options": "light_theme"}),  # Streamlit's own
    ]
    for page, query in links:
        assert _notices(_open_first(page, **query, **CANARY)) == [CANARY_ONLY], (page, query)
    # The poll's teacher link: the teacher view ends the page with st.stop(), so nothing is checked after it
    # (a page that ends early names no unread parameters) and its keys raise no notice.
    at = _open_first("app_pages/exercises.py", variant="7", teacher=o.teacher_key)
    assert "answers and worked solutions" in " ".join(m.value for m in at.markdown) and _notices(at) == []


def test_a_bound_control_that_is_not_drawn_leaves_the_url():
    # The requests-a-day box is drawn only in that traffic mode: switched back to the product's users, Streamlit
    # removes its parameter from the URL, so a link copied from the app never carries the key of a control the
    # page does not draw. A hand-made link that does is named.
    at = _open_first("app_pages/monthly_bill.py", mb_mode="requests a day", mb_rpd="9000", **CANARY)
    assert at.number_input(key="mb_rpd").value == 9000 and _notices(at) == [CANARY_ONLY]
    at.radio(key="mb_mode").set_value("a product's users").run()
    assert "mb_rpd" not in at.query_params and not [w for w in at.number_input if w.key == "mb_rpd"]
    assert _notices(_open_first("app_pages/monthly_bill.py", mb_rpd="9000")) == [UNREAD + "mb_rpd=9000."]


# -- every key the app reads from the link without a widget is listed -------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
_QP = r"(?:st\.query_params|\bqp)"
#: st.query_params.get("x"), st.query_params["x"], .get_all("x"), qp.get("x"), qp["x"], del qp["x"]
_READ = re.compile(_QP + r"\s*(?:\.get(?:_all)?\(|\[)\s*(?:([\"'])(.+?)\1|([A-Z][A-Z0-9_]*)\b)")
#: "x" in st.query_params, "x" not in qp
_IN = re.compile(r"([\"'])([^\"']+)\1\s+(?:not\s+)?in\s+" + _QP + r"(?![\w.(\[])")
#: st.query_params.update({"x": ..., "y": ...})
_UPDATE = re.compile(_QP + r"\.update\(\s*\{(.*?)\}", re.S)


def _literal_keys(text: str):
    """(match, key or None, constant name or None) of each st.query_params read or write in ``text`` that names a
    literal key or a module constant (``_READ``, ``_IN``, ``_UPDATE``)."""
    for m in _READ.finditer(text):
        yield m, m.group(2), m.group(3)
    for m in _IN.finditer(text):
        yield m, m.group(2), None
    for m in _UPDATE.finditer(text):
        for k in re.findall(r"([\"'])(\w+)\1\s*:", m.group(1)):
            yield m, k[1], None


def _sources() -> dict[Path, str]:
    files = [ROOT / "app.py"] + sorted((ROOT / "ui").glob("*.py")) + sorted((ROOT / "app_pages").glob("*.py"))
    return {f: f.read_text() for f in files}


def _keys_read_from_the_link() -> dict[str, str]:
    """Each literal key (or module constant holding one) the app's code reads or writes in st.query_params, with
    where; a key held in a variable cannot be read from the source."""
    sources = _sources()
    constants = {m.group(1): m.group(3) for text in sources.values()
                 for m in re.finditer(r"^([A-Z][A-Z0-9_]*)\s*=\s*([\"'])(.+?)\2\s*(?:#.*)?$", text, re.M)}
    found = {}
    for path, text in sources.items():
        where = lambda m: f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"  # noqa: E731
        for m, key, name in _literal_keys(text):
            assert name is None or name in constants, f"{where(m)}: {name} is not a module constant with a literal"
            found.setdefault(key if name is None else constants[name], where(m))
    return found


def test_every_key_read_from_the_link_without_a_widget_is_listed():
    found = _keys_read_from_the_link()
    # the scan sees what it should: the classroom's, the loaded model's, the bill's, the exercises' and the poll's
    assert {"present", "story", "cfg", "model", "mb_prices", "kv_layout", "variant", "teacher", "code", "key",
            "me"} <= set(found), found
    unlisted = {k: w for k, w in found.items() if k not in url_state.READ_WITHOUT_WIDGET}
    assert not unlisted, ("keys read from st.query_params but not in url_state.READ_WITHOUT_WIDGET (their link "
                          f"parameters would be named as read by nothing): {unlisted}")
    stale = set(url_state.READ_WITHOUT_WIDGET) - set(found) - set(url_state._STREAMLIT_KEYS)
    assert not stale, f"listed in url_state.READ_WITHOUT_WIDGET but read nowhere: {stale}"


def test_the_scan_finds_each_form_of_a_read():
    text = ('st.query_params.get("a1")\nst.query_params["a2"]\nqp.get("a3", "")\nqp["a4"] = 1\n'
            'del st.query_params["a5"]\nif "a6" in st.query_params:\nst.query_params.get_all("a7")\n'
            'st.query_params.update({"a8": 1, "a9": x})\nst.query_params.get(PARAM)\n')
    found = list(_literal_keys(text))
    assert {key for _, key, _ in found if key} == {f"a{i}" for i in range(1, 10)}
    assert [name for _, _, name in found if name] == ["PARAM"]


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


def test_a_fraction_a_whole_number_control_cuts_off_is_named():
    # the many-GPUs page's input-token box takes whole numbers: Streamlit reads 1.5 as 1 and the browser rewrites
    # the URL to it, silently; the page names the cut. 2.0 is a whole number (read as 2) and is not named, nor a
    # fraction in a box that takes fractions (requests/s)
    at = _open_first("app_pages/many_gpus.py", mg_in="1.5", mg_out="2.0", mg_rps="2.5")
    text = " ".join(w.value for w in at.warning if "whole-number control" in w.value)
    assert "mg_in=1.5 (read as 1)" in text
    assert "mg_out" not in text and "mg_rps" not in text


@pytest.mark.parametrize("query", [{"lv_target": "an endpoint"}, {}])
def test_a_page_that_ends_early_still_names_what_no_control_reads(query):
    # the live page ends its run before any measurement (nav.end_page, in place of st.stop(), which would discard
    # app.py's notice drawn after the page): the link's unread parameter is still named
    at = _open_first("app_pages/live.py", **query, **CANARY)
    assert CANARY_ONLY in _notice(at)


def test_a_control_the_endpoint_section_draws_once_results_are_in_is_not_called_ignored():
    # ep_tp is read once a result file is in (the layout of the prediction): before that it is not "ignored", and
    # a refused value is named when the box is drawn (test_page_endpoint's late-link tests)
    at = _open_first("app_pages/live.py", lv_target="an endpoint", ep_tp="3", **CANARY)
    assert _notice(at) == CANARY_ONLY
