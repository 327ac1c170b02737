"""Presenter mode, the lecture story and the exercises in a real browser at a projector's 1024 x 768.

Same server and Chromium as test_browser.py (fixtures in tests/conftest.py; skipped where no chromium is installed).
"""
import pytest

from ui.nav import PAGES
from browsertest import METRIC_VALUE, page_at, sync_api, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser
PATHS = ["" if f.endswith("home.py") else f.rsplit("/", 1)[-1].removesuffix(".py") for f, *_ in PAGES]

#: Every metric label/value element (and what it wraps) whose text is cut: scrollWidth > clientWidth.
CUT_METRICS = """() => Array.from(document.querySelectorAll(
    '[data-testid=stMetricValue], [data-testid=stMetricValue] *, [data-testid=stMetricLabel], [data-testid=stMetricLabel] *, '
    + '.xm-value, .xm-value *, .xm-label, .xm-label *'))
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.trim())"""
#: Font sizes (px) of chart tick labels, legend entries and axis titles.
CHART_TEXT = """() => Array.from(document.querySelectorAll(
    '.js-plotly-plot g.xtick text, .js-plotly-plot g.ytick text, .js-plotly-plot .legendtext, .js-plotly-plot .xtitle, .js-plotly-plot .ytitle'))
  .map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize)])"""


@pytest.fixture
def projector(browser):
    with page_at(browser, 1024, 768) as pg:
        yield pg


@pytest.mark.parametrize("path", PATHS)
def test_presenter_mode_nothing_cut_and_chart_text_at_least_16px(projector, app_url, path):
    projector.goto(f"{app_url}/{path}?present=1")
    wait_for_app(projector)
    projector.wait_for_timeout(1500)   # Plotly draws after the script run ends
    assert projector.get_by_test_id("stSidebar").get_attribute("data-collapsed") == "true"
    assert projector.evaluate(CUT_METRICS) == []
    # a chart below the window is drawn when it comes into view (or the page is still): bring each into view
    plots = projector.locator(".explorer-plot")
    for i in range(plots.count()):
        if plots.nth(i).is_visible():
            plots.nth(i).scroll_into_view_if_needed()
            plots.nth(i).locator(".main-svg").first.wait_for(timeout=30_000)
    small = [(text, size) for text, size in projector.evaluate(CHART_TEXT) if size < 16]
    assert small == []


def test_the_story_walks_from_the_weights_to_the_bill(projector, app_url):
    projector.goto(f"{app_url}/?story=1&present=1")
    wait_for_app(projector)
    banner = projector.get_by_test_id("stMarkdownContainer").filter(has_text="Lecture, step 1 of 13")
    assert "reads all its weights" in banner.first.inner_text()
    projector.get_by_role("link", name="Step 2: Decode and the roofline ▶").click()
    wait_for_app(projector)
    # step 2 sets B = 1 at 8K: Llama-3-8B on an H100 SXM, 4.79 ms + 0.32 ms = 5.11 ms (course, week 11 step 4)
    sync_api.expect(projector.locator(METRIC_VALUE).filter(has_text="5.11 ms").first).to_be_visible(
        timeout=30_000)
    assert "story=2" in projector.url and "present=1" in projector.url


def test_exercise_answered_in_the_browser(projector, app_url):
    projector.goto(f"{app_url}/exercises?variant=0")
    wait_for_app(projector)
    answer = projector.get_by_label("Your answer").nth(1)        # problem 2: 0.671 GB (the course's ≈ 0.67 GB)
    answer.fill("0.67")
    unit = projector.get_by_label("Unit").nth(1)
    unit.click()
    unit.fill("GB")
    unit.press("Enter")
    projector.get_by_role("button", name="Check").nth(1).click()
    sync_api.expect(projector.get_by_text("Correct: 0.6711 GB")).to_be_visible(timeout=30_000)
