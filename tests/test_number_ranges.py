"""Every number box with a min or a max says under it which values it accepts (ui/number_ranges.py): a value typed
outside the range turns the box red while the page keeps the last valid one, and the range was only in a tooltip."""
import re

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, NumberInput

import pagetest
from ui import number_ranges
from ui.number_ranges import bound_text, range_text


def test_range_text_writes_each_kind_of_range():
    assert range_text(1.0, 100.0) == "Accepts 1 to 100"
    assert range_text(0, 10_000_000_000) == "Accepts 0 to 10,000,000,000"        # not 1e+10
    assert range_text(0.001, 2.5) == "Accepts 0.001 to 2.5"
    assert range_text(0.0, None) == "Accepts 0 or more"
    assert range_text(None, 64) == "Accepts up to 64"
    assert range_text(None, None) == ""
    assert bound_text(1e20) == "1e+20" and bound_text(-3) == "-3"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "5", True])
def test_a_bound_that_is_not_a_number_is_refused_in_words(bad):
    with pytest.raises(ValueError, match="finite number"):
        bound_text(bad)


def _text(caption) -> str:
    """A caption's words (plain text: no markup in the page's text elements, tests/test_hardening_pages.py)."""
    assert "<" not in caption.value
    return caption.value


def _boxes_and_what_follows(node) -> list[tuple[NumberInput, object]]:
    """(number box, the element drawn right after it in the same container) over the whole tree."""
    out = []
    if isinstance(node, Block):
        kids = [node.children[i] for i in sorted(node.children)]
        for i, kid in enumerate(kids):
            if isinstance(kid, NumberInput):
                out.append((kid, kids[i + 1] if i + 1 < len(kids) else None))
            out += _boxes_and_what_follows(kid)
    return out


@pytest.mark.parametrize("page", ["app_pages/many_gpus.py", "app_pages/monthly_bill.py", "app_pages/roofline.py"])
def test_every_bounded_box_has_its_range_right_under_it(page):
    at = pagetest.open_page(page)
    pairs = _boxes_and_what_follows(at._tree)
    bounded = [(box, after) for box, after in pairs if box.min is not None or box.max is not None]
    assert bounded
    for box, after in bounded:
        assert after is not None and after.type == "caption", box.label
        # read the caption's numbers back and compare them with the bounds the box itself holds
        m = re.fullmatch(r"Accepts (?:([-\d,.e+]+) to ([-\d,.e+]+)|([-\d,.e+]+) or more|up to ([-\d,.e+]+))",
                         _text(after))
        assert m, (box.label, after.value)
        num = lambda t: None if t is None else float(t.replace(",", ""))  # noqa: E731
        lo, hi = (num(m[1]), num(m[2])) if m[1] else (num(m[3]), num(m[4]))
        assert (lo, hi) == (box.min, box.max), (box.label, after.value)


def test_the_plans_boxes_name_their_ranges():
    # the capacity plan: Peak / average 1 to 100, Requests/s from 0 with no upper end, the largest batch 16 to 8,192;
    # the sidebar's price 0 to 1,000 USD per GPU-hour
    at = pagetest.open_page("app_pages/many_gpus.py")
    after = {box.key: _text(nxt) for box, nxt in _boxes_and_what_follows(at._tree)
             if nxt is not None and nxt.type == "caption"}
    assert after["mg_peak"] == "Accepts 1 to 100"
    assert after["mg_rps"] == "Accepts 0 or more"
    assert after["mg_cap"] == "Accepts 16 to 8,192"
    assert after["price"] == "Accepts 0 to 1,000"


def test_an_unbounded_box_and_a_box_in_a_placeholder_get_no_caption():
    def app():
        import streamlit as st
        from ui import number_ranges
        number_ranges.install()
        st.number_input("free", value=None, key="free")
        slot = st.empty()
        slot.number_input("in a placeholder", 0, 10, 5, key="slot")
        c1, _ = st.columns(2)
        c1.number_input("in a column", 0.5, 2.0, 1.0, key="col")
        with c1:
            st.number_input("through st", min_value=3, key="st")

    at = AppTest.from_function(app).run()
    assert not at.exception
    assert [n.key for n in at.number_input] == ["free", "slot", "col", "st"]
    assert [_text(c) for c in at.caption] == ["Accepts 0.5 to 2", "Accepts 3 or more"]


def test_uninstall_restores_streamlits_own():
    was = number_ranges.installed()
    number_ranges.install()
    assert number_ranges.installed() and st.number_input.__func__ is not number_ranges.ORIGINAL_NUMBER_INPUT
    number_ranges.uninstall()
    assert not number_ranges.installed() and st.number_input.__func__ is number_ranges.ORIGINAL_NUMBER_INPUT
    if was:
        number_ranges.install()
