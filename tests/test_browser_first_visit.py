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


@pytest.mark.parametrize("step, number", [
    (4, "1.07 GB"), (6, "38.65 GB"), (7, "9.21 GB"), (8, "134 sequences"), (11, "131.07 MB")])
def test_a_steps_quoted_figure_is_on_the_first_screen_in_its_banner(laptop, app_url, step, number):
    # Steps whose page shows the figure below its controls: the banner quotes it (computed by the page's own calc
    # call, tests/test_page_classroom.py), and the banner's line with it ends within the first 720 px.
    page = {4: "kv_cache", 6: "kv_cache", 7: "kv_cache", 8: "quantization", 11: "batching"}[step]
    laptop.goto(f"{app_url}/{page}?story={step}")
    wait_for_app(laptop)
    banner = laptop.get_by_text(f"Lecture, step {step} of").first
    banner.wait_for(state="visible", timeout=30_000)
    text = laptop.locator("[data-testid=stMarkdownContainer]").filter(has_text=f"Lecture, step {step} of").first
    assert number in text.inner_text()
    box = text.bounding_box()
    assert box["y"] + box["height"] <= 720, box


def test_no_empty_band_above_the_title(laptop, app_url):
    laptop.goto(f"{app_url}/kv_cache")
    wait_for_app(laptop)
    top = laptop.locator("h1").first.bounding_box()["y"]
    # Streamlit's default top padding, 6rem = 96 px, put the h1's box at 128 px; 4rem (64 px, just below the
    # 60 px header bar) puts it at 96 px
    assert top < 110, top


#: Each metric value (ui/metric_row.py's cells and st.metric's): its text's lines (distinct tops of the text's line
#: boxes), the text's height against its font's line height, and how far the text runs past its column (px).
VALUE_LINES = """() => Array.from(document.querySelectorAll('.xm-value, [data-testid=stMetricValue]')).map(v => {
  const walker = document.createTreeWalker(v, NodeFilter.SHOW_TEXT);
  let node = null, n; while ((n = walker.nextNode())) { if (n.textContent.trim()) { node = n; break; } }
  if (!node) return null;
  const range = document.createRange(); range.selectNodeContents(node);
  const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
  const box = range.getBoundingClientRect(), column = v.getBoundingClientRect(), style = getComputedStyle(node.parentElement);
  return {text: v.textContent.trim(), lines: new Set(rects.map(r => Math.round(r.top))).size, height: box.height,
          line: parseFloat(style.lineHeight), past: box.right - column.right, font: parseFloat(style.fontSize)};
}).filter(x => x)"""


@pytest.mark.parametrize("width, height", [(700, 900), (1280, 720)])
@pytest.mark.parametrize("path", [
    "monthly_bill?mb_dau=50000000",   # a bill of $1,788,187 a month (Opus) in a third of the right-hand column
    "", "latency_cost", "many_gpus", "workloads"])
def test_a_metric_value_is_never_broken_across_lines(browser, app_url, path, width, height):
    # The values used to wrap anywhere: at 700 px "$1,788,187" read "$1,788" over ",187". A value shrinks to fit
    # its column instead (and could wrap only at a space, between a number and its unit).
    with page_at(browser, width, height) as pg:
        pg.goto(f"{app_url}/{path}")
        wait_for_app(pg)
        pg.locator(".xm-value").first.wait_for(state="visible", timeout=30_000)
        values = pg.evaluate(VALUE_LINES)
    assert len(values) >= 3, values
    for v in values:
        assert v["lines"] == 1 and v["height"] < 1.5 * v["line"], v   # one line
        assert v["past"] <= 1, v                                        # and all of it inside its column
        assert v["font"] >= 14, v                                       # no smaller than the label's text
    if path.startswith("monthly_bill"):
        assert any(v["text"].startswith("$1,7") and len(v["text"]) == 10 for v in values), values  # the big bill


#: Text cut in the elements ``sel`` selects and inside them: an element whose text runs past its box where the box
#: hides it (scrollWidth > clientWidth, overflow not visible: clipped or ellipsised), and a word split across
#: two lines (its letters' boxes on two lines; words split at spaces, hyphens and slashes, where a line may end).
CUT_TEXT = """sel => {
  const roots = Array.from(document.querySelectorAll(sel)), cut = [];
  for (const root of roots) {
    for (const e of [root, ...root.querySelectorAll('*')]) {
      if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible' && e.textContent.trim())
        cut.push('clipped: ' + e.textContent.trim());
    }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const text = node.textContent, re = /[^\\s\\-\\/]+/g;
      let m;
      while ((m = re.exec(text))) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const tops = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) cut.push('split: ' + m[0]);
      }
    }
  }
  return [roots.length, cut];
}"""


@pytest.mark.parametrize("width, height", [(700, 900), (1280, 720)])
@pytest.mark.parametrize("path, sel, at_least", [
    ("", "[data-testid=stMain] [data-testid=stPageLink], [data-testid=stMain] [data-testid=stCaptionContainer]", 26),
    ("workloads", "[data-testid=stMain] [data-testid=stWidgetLabel], [data-testid=stMain] [data-baseweb=select], "
                  "[data-testid=stMain] [data-testid=stRadio] label", 12),
    ("monthly_bill", "[data-testid=stMain] [data-testid=stWidgetLabel]", 20),  # the "Buying" inputs split words
])
def test_cards_and_labels_are_shown_whole(browser, app_url, path, sel, at_least, width, height):
    # At 700 px the home page's cards (four to a row) cut their titles with an ellipsis ("Latency against co…"), and
    # the Workloads inputs (four to a row in a third of the window) split "Running batch" mid-word and cut the
    # eviction policy's option ("demote to th…").
    with page_at(browser, width, height) as pg:
        pg.goto(f"{app_url}/{path}")
        wait_for_app(pg)
        pg.locator(sel.split(",")[0]).first.wait_for(state="visible", timeout=30_000)
        # the page draws its widgets one after another: count them once all have come (a busy machine drew 10 of
        # the Workloads page's 12 when the first was visible), then look for cuts
        pg.wait_for_function("([s, k]) => document.querySelectorAll(s).length >= k", arg=[sel, at_least],
                             timeout=30_000)
        n, cut = pg.evaluate(CUT_TEXT, sel)
    assert n >= at_least, n
    assert cut == [], cut
