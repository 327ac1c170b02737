"""A first visit at 1280 x 720: the number a lecture step quotes is on the first screen, presenter mode too, and
no page opens on an empty band above its title.

Same server and Chromium as test_browser.py (fixtures in tests/conftest.py; skipped where no chromium is installed).
"""
import pytest

from browsertest import METRIC_VALUE, page_at, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser


@pytest.fixture
def laptop(browser):
    with page_at(browser, 1280, 720) as pg:
        yield pg


def _value_box(pg, text: str):
    cell = pg.locator(METRIC_VALUE).filter(has_text=text).first
    cell.wait_for(state="visible", timeout=30_000)
    return cell.bounding_box()


@pytest.mark.parametrize("present", ["", "&present=1"])
@pytest.mark.parametrize("path, number", [
    ("roofline?story=3", "2,126"),        # step 3: "... to 2,126 tokens per second"
    ("latency_cost?story=9", "$0.52"),    # step 9: "... gets B = 16 at $0.52 per million tokens"
    ("?story=1", "196"),                  # step 1: "... one user gets about 200 tokens per second"
])
def test_the_number_a_lecture_step_quotes_is_on_the_first_screen(laptop, app_url, path, number, present):
    laptop.goto(f"{app_url}/{path}{present}")
    wait_for_app(laptop)
    box = _value_box(laptop, number)
    assert box["y"] + box["height"] <= 720, box   # not below the fold of a 1280 x 720 window


def test_no_empty_band_above_the_title(laptop, app_url):
    laptop.goto(f"{app_url}/kv_cache")
    wait_for_app(laptop)
    top = laptop.locator("h1").first.bounding_box()["y"]
    # Streamlit's default top padding, 6rem = 96 px, put the h1's box at 128 px; 4rem (64 px, just below the
    # 60 px header bar) puts it at 96 px
    assert top < 110, top
