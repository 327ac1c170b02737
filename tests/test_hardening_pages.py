"""What a link or a pasted config can do to a page of the shared server: nothing but get a message.

Examples of the issue "a shared server that no link or paste can hurt", each as an AppTest: URL
parameters that are not finite numbers, markdown smuggled in through a link, a config value or a
file name, and the error-details setting that keeps tracebacks and server paths from visitors.
"""
import html as _html
import json
import re
import tomllib
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from ui import formats, nav, sidebar
import pagetest

ROOT = Path(__file__).resolve().parent.parent
#: Every integer number input bound to the URL, by page.
INT_KEYS = {
    "app_pages/latency_cost.py": ["lc_users"],
    "app_pages/batching.py": ["bt_seed", "bt_pl", "bt_pu"],
    "app_pages/monthly_bill.py": ["mb_dau", "mb_prefix", "mb_unique", "mb_out", "mb_batch"],
    "app_pages/speculative.py": ["sd_seed"],
    "app_pages/live.py": ["lv_pprompt", "lv_dctx", "lv_steps", "lv_reps", "lv_warm", "lv_newtok"],
}
NOT_FINITE = ["inf", "-inf", "Infinity", "1e400", "9" * 400, "nan"]
INJECTION = "![x](http://example.invalid/p.png) [sign in](http://example.invalid/x)"


def _texts(at: AppTest) -> list[str]:
    """The markdown source of every text element of a run (main area and sidebar)."""
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "subheader", "title", "header"):
        out += [e.value for e in at.get(kind) if isinstance(getattr(e, "value", None), str)]
    return out


def _shown(source: str) -> str:
    """What a reader sees of a markdown source (CommonMark rendering, tags dropped)."""
    import html
    import re

    text = html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").renderInline(source)))
    return text.replace("\u2060", "")  # md_escape's invisible word joiners


def _assert_inert(source: str) -> None:
    """A CommonMark parser finds no link or image in ``source``, and no bare URL is left for GFM to link."""
    tokens = MarkdownIt("commonmark").parse(source)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"image", "link_open", "html_inline", "html_block"}, (source, kinds)
    assert not re.search(r"(?<!\\)://", source) and "www." not in source.lower(), source  # GFM autolinks


@pytest.mark.parametrize("page", list(INT_KEYS))
@pytest.mark.parametrize("value", NOT_FINITE)
def test_integer_inputs_take_no_harm_from_non_finite_url_values(page, value):
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    for key in INT_KEYS[page]:
        at.query_params[key] = value
    at.switch_page(page).run()  # a deep link: the page's widgets read the URL on their first run
    assert not at.exception, [e.message for e in at.exception]
    assert any("Ignored link parameters" in t for t in _texts(at))  # the visitor is told
    numbers = {n.key: n.value for n in at.number_input}
    for key in INT_KEYS[page]:  # the widget is back at a finite default
        assert key in numbers and float(numbers[key]) == float(numbers[key]) and abs(numbers[key]) < 1e12


def test_the_url_is_cleaned_but_good_parameters_stay():
    at = pagetest.open_page("app_pages/batching.py", bt_pl="inf", gpu="h200", wq="int8")
    assert "bt_pl" not in at.query_params
    assert at.query_params["gpu"] == "h200" and at.query_params["wq"] == "int8"


def test_a_linked_custom_model_name_is_shown_as_plain_text():
    at = pagetest.open_page(None, model="custom:" + INJECTION)
    warnings = [w.value for w in at.warning]
    assert any("sign in" in w for w in warnings)   # the sidebar's warning quotes the whole name
    assert any(w.startswith("Link values") and "another browser session" in w for w in warnings)  # the link notice
    for t in _texts(at):
        _assert_inert(t)


def _load_config(at: AppTest, text: str, name: str = "") -> AppTest:
    at.text_area(key="cfg_text").input(text)
    at.text_input(key="cfg_name").input(name)
    at.button(key="cfg_load").click()
    return at.run()


def test_a_config_value_with_markdown_is_quoted_as_plain_text():
    at = pagetest.open_page(None)
    _load_config(at, '{"hidden_size": "' + INJECTION.replace('"', "") + '", "num_hidden_layers": 2}')
    errors = [_shown(e.value) for e in at.error]
    assert errors and "config key 'hidden_size' must be a positive integer, got '![x](http://example" in errors[0]
    for t in _texts(at):
        _assert_inert(t)


def test_a_model_name_with_markdown_is_kept_as_typed_and_inert():
    at = pagetest.open_page(None)
    cfg = ('{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 1, "intermediate_size": 64, '
           '"vocab_size": 10, "_name_or_path": "' + INJECTION + ' $x$"}')   # 79 characters: under the 80 kept
    _load_config(at, cfg)
    assert at.session_state["model"] == "custom:" + INJECTION + " $x$"  # nothing stripped
    for page in ("app_pages/home.py", "app_pages/kv_cache.py", "app_pages/latency_cost.py"):
        at.switch_page(page).run()
        assert not at.exception
        for t in _texts(at):
            _assert_inert(t)
        # shown as typed: the title reads the name, every character of it
        assert any(INJECTION + " $x$" in _shown(t) for t in _texts(at)), page


#: A model name with HTML in it: it used to lose its "<", ">" and "/" on loading ("bMyb model").
HTML_NAME = "<b>My</b> model"
TINY_CONFIG = {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
               "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 8192}


def _walk(node):
    yield node
    for k in sorted(getattr(node, "children", None) or {}):
        yield from _walk(node.children[k])


def _name_shown_as_typed(at: AppTest, name: str) -> int:
    """Asserts that every element of the run that prints ``name`` shows it as typed: markdown (texts, widget labels
    and help) renders to it, HTML holds it escaped, a chart never holds its tags raw, and nothing holds it with
    its markup stripped. Returns how many elements print it."""
    stripped = re.sub(r"<[^>]+>", "", name)   # "My model": the name as an HTML or markdown renderer would eat it
    mangled = re.sub(r"[^\w ]", "", name)    # "bMyb model": the name with its punctuation dropped
    seen = 0
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "DESCRIPTOR"):
            continue
        kind = getattr(node, "type", "")
        fields = {f.name: getattr(proto, f.name) for f in proto.DESCRIPTOR.fields
                  if f.name in ("body", "label", "help", "spec", "json") and isinstance(getattr(proto, f.name), str)}
        for field, text in fields.items():
            # the name in any form (typed, escaped, stripped of its tags or punctuation), not the page's own "My CSV"
            if not re.search(r"My\S*\s+model", text) and mangled not in text:
                continue
            assert mangled not in text, (kind, field, text[:300])
            if kind in ("plotly_chart",) or field in ("spec", "json"):
                assert name not in text and stripped not in text.replace(name, ""), (kind, text[:300])
            elif kind == "html":  # never raw in the source; where its cells or labels show it, as typed
                visible = _html.unescape(re.sub(r"<[^>]+>", "", text))
                assert name not in text and (stripped not in visible or name in visible), (kind, text[:300])
            else:  # markdown: a text element, or a widget's label or help
                assert name in _shown(text), (kind, field, text[:300])
                _assert_inert(text)
            seen += 1
    return seen


@pytest.mark.parametrize("page", [p for p, *_ in nav.PAGES])
def test_a_model_name_with_html_shows_as_typed_on_every_page(page):
    from calc.config_json import model_from_json_text
    from ui.custom_models import model_to_param

    at = AppTest.from_file(pagetest.APP, default_timeout=120)
    at.query_params["model"] = "custom:" + HTML_NAME  # a link that carries the loaded model
    at.query_params["cfg"] = model_to_param(model_from_json_text(json.dumps(TINY_CONFIG), name=HTML_NAME))
    at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["model"] == "custom:" + HTML_NAME
    assert _name_shown_as_typed(at, HTML_NAME) >= 1   # the sidebar names it at least


def test_a_loaded_model_name_with_html_is_kept_as_typed():
    at = pagetest.open_page(None)
    _load_config(at, json.dumps(TINY_CONFIG), name=HTML_NAME)
    assert at.session_state["model"] == "custom:" + HTML_NAME   # not "custom:bMyb model"
    assert any(HTML_NAME in _shown(s.value) for s in at.success)  # "Loaded <b>My</b> model from the pasted text"
    for page in ("app_pages/home.py", "app_pages/kv_cache.py", "app_pages/many_gpus.py", "app_pages/monthly_bill.py"):
        at.switch_page(page).run()
        assert not at.exception
        assert _name_shown_as_typed(at, HTML_NAME) >= 2, page  # the sidebar and the page itself


def test_a_sized_out_config_gets_the_limit_message_in_the_sidebar():
    at = pagetest.open_page(None)
    _load_config(at, '{"hidden_size": 64, "num_hidden_layers": 2000000000, "num_attention_heads": 1, '
                     '"intermediate_size": 64, "vocab_size": 10}')
    errors = [_shown(e.value) for e in at.error]
    assert errors and "'num_hidden_layers' is 2,000,000,000, above the limit of 1,024 layers" in errors[0]
    assert at.session_state["model"] == sidebar.DEFAULT_MODEL  # nothing already chosen is lost


@pytest.mark.parametrize("text", ["!", "[a](b)", "`x`", "$x$", ":red[x]", "<b>x</b>", "# h", "a\nb", "\\", "*x*",
                                  "see http://example.invalid/x", "www.example.invalid", "me@example.invalid"])
def test_md_escape_round_trips_through_a_commonmark_parser(text):
    # CommonMark: an escaped punctuation character renders as itself, so the text survives unchanged.
    html = MarkdownIt("commonmark").renderInline(formats.md_escape(text))
    import html as html_lib

    assert html_lib.unescape(html).replace("\u2060", "") == " ".join(text.splitlines())  # joiners are invisible


def test_error_details_are_off_for_visitors():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    from streamlit import config

    assert cfg["client"]["showErrorDetails"] in [o.value for o in config.ShowErrorDetailsConfigOptions]
    assert cfg["client"]["showErrorDetails"] == "none"


def test_an_uncaught_error_shows_no_trace_or_path(tmp_path):
    # A script that raises, run with the project's setting: the page gets the generic message only.
    from streamlit import config

    script = tmp_path / "boom.py"
    script.write_text("raise RuntimeError('secret /srv/path/file.py')\n")
    config.set_option("client.showErrorDetails", "none")
    try:
        at = AppTest.from_file(str(script)).run()
    finally:
        config.set_option("client.showErrorDetails", "full")
    assert at.exception
    shown = at.exception[0]
    assert "/srv/path" not in shown.message and not list(shown.stack_trace)


# -- what a page still says when a number is degenerate ------------------------------------------------------
def test_free_api_tiers_are_called_free_not_no_generations():
    # Every tier's input, cached-input and output price set to 0 by a link: 4 default tiers x 3 cells.
    zero = ",".join(f"{c}{r}=0" for r in range(1, 5) for c in ("in", "hit", "out"))
    at = pagetest.open_page("app_pages/monthly_bill.py", mb_prices=zero)
    said = " ".join(s.value for s in at.success)
    assert "free at these prices" in said and "No generations" not in said


def test_no_traffic_still_says_no_generations():
    from calc import api_tiers, bill_compare, product_traffic

    table = bill_compare.compare_tiers(product_traffic.TrafficScenario(dau=0), api_tiers.default_tiers())
    assert bill_compare.verdict(table).startswith("No generations")
    free = [t.__class__(**{**t.__dict__, "input_usd_per_mtok": 0.0, "cached_input_usd_per_mtok": 0.0,
                           "output_usd_per_mtok": 0.0}) for t in api_tiers.default_tiers()]
    assert "free at these prices" in bill_compare.verdict(bill_compare.compare_tiers(product_traffic.TrafficScenario(), free))


def test_batching_page_keeps_the_prefix_cache_section_when_the_model_does_not_fit():
    # Llama-3.1-405B in bf16 is ~811 GB of weights; an L4 holds 24 GB: no batch can be simulated.
    at = pagetest.open_page("app_pages/batching.py", model="llama-3.1-405b", gpu="l4")
    assert at.error and "prefix-cache arithmetic below" in " ".join(i.value for i in at.info)
    # The course's example: 20 chats sharing a 1,000-token prompt prefill 20 x 1,000 = 20,000 tokens without
    # the cache and 1,000 with it.
    assert pagetest.metric(at, "Prefill tokens, no cache") == "20,000"
    assert pagetest.metric(at, "Prefill tokens, cached") == "1,000"


@pytest.mark.parametrize("fmt", [formats.fmt_bytes, formats.fmt_seconds, formats.fmt_usd])
def test_formatters_never_print_an_infinity(fmt):
    for x in (float("inf"), float("-inf"), float("nan")):
        assert fmt(x) == "n/a"
    assert fmt(1.5) != "n/a"
