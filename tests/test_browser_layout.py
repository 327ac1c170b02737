"""What a person sees at 1280 x 720 in Chromium: the key columns of the wide tables without scrolling (numbers
on one line), the metric rows' look and help marks, the edited price table in a shared link, the inputs at the
head of a downloaded CSV. Same set-up as test_browser.py (Debian's chromium through Playwright; skipped where
none is installed)."""
import io
import time

import pandas as pd
import pytest

from browsertest import METRIC_VALUE, sync_api, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser

WIDE_TABLES = {  # page -> the key columns of its wide table, in order (headers as shown)
    "kv_cache": ["layout", "KV heads K", "KV per token (B)", "KV in total (B = 1)", "weights + KV", "GPUs"],
    "quantization": ["format", "total memory", "GPUs", "decode step", "throughput (tok/s)", "max batch"],
    "monthly_bill": ["tier", "total / month", "per generation", "per DAU / month", "GPUs",
                     "self-hosting cheaper from DAU"],
}


def _table_with(pg, headers: list[str], timeout_s: float = 90.0):
    """The visible table (html_table.show_table's .xm-table-wrap) whose header row shows every one of ``headers``.
    Every header, not one: a page can hold two tables that share a column name (quantization's "max batch")."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        frames = pg.locator(".xm-table-wrap")
        for i in range(frames.count()):
            frame = frames.nth(i)
            if frame.is_visible():
                shown = frame.locator("th").all_inner_texts()
                if all(h in shown for h in headers):
                    frame.scroll_into_view_if_needed()
                    return frame
        pg.wait_for_timeout(500)
    pytest.fail(f"no table with the columns {headers!r}")


@pytest.mark.parametrize("path", list(WIDE_TABLES))
def test_key_columns_of_each_wide_table_are_visible_at_1280_px(page, app_url, path):
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    want = WIDE_TABLES[path]
    frame = _table_with(page, want)
    sync_api.expect(frame.locator("th")).to_have_text(want, timeout=30_000)
    # no horizontal scrolling: the table is no wider than its box, and every header cell lies inside the window
    scroll, client = frame.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert scroll <= client + 1, f"{path}: the table scrolls ({scroll} px of content in {client} px)"
    for box in (h.bounding_box() for h in frame.locator("th").all()):
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1280
    # numbers are not broken across lines: every number cell is one line high (a row's height may come from
    # wrapped text in another cell, so compare the cell's text box with one line of the table's font)
    lines = frame.evaluate("""e => Array.from(e.querySelectorAll('td.xm-num')).map(td => {
        const r = document.createRange(); r.selectNodeContents(td); return r.getClientRects().length; })""")
    assert lines and max(lines) == 1, f"{path}: a number wraps ({lines})"


def test_an_edited_price_goes_into_the_link_and_the_link_shows_it(page, app_url, browser):
    page.goto(f"{app_url}/monthly_bill")
    wait_for_app(page)
    editor = page.locator(".st-key-mb_prices")
    editor.scroll_into_view_if_needed()
    sync_api.expect(editor.locator("th").filter(has_text="out $/1M")).to_have_count(1, timeout=30_000)
    headers = editor.locator("th").all_inner_texts()          # the grid's accessible (hidden) header row
    box = editor.bounding_box()
    # Click the first row's tier cell (below the 35-px header, right of the row markers), walk with the
    # keyboard to the second row (Sonnet 4.6) and its output price, open the cell's editor: $15 -> $20 per 1M.
    # The canvas draws a moment after the header cells: try again until the cell editor opens.
    cell_input = page.locator("#portal input.gdg-input")
    for _ in range(5):
        page.wait_for_timeout(500)
        page.mouse.click(box["x"] + 70, box["y"] + 35 + 17)
        page.wait_for_timeout(300)
        page.keyboard.press("ArrowDown")
        for _ in range(headers.index("out $/1M") - headers.index("tier")):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        try:
            cell_input.wait_for(timeout=3_000)
            break
        except sync_api.TimeoutError:
            page.keyboard.press("Escape")
    assert cell_input.input_value() == "15"                   # Sonnet 4.6's output price
    cell_input.fill("20")
    cell_input.press("Enter")
    page.wait_for_function("() => location.search.includes('mb_prices=out2%3D20')", timeout=30_000)
    link = page.url
    other = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    try:
        other.goto(link)
        wait_for_app(other)
        # 165,000 generations a month x 500 output tokens x $5 more per 1M = $412.50 on top of $2,145.83
        sync_api.expect(other.locator(METRIC_VALUE).filter(has_text="$2,558").first).to_be_visible(
            timeout=30_000)
    finally:
        other.context.close()


def test_a_downloaded_csv_starts_with_its_inputs_and_has_money_to_the_cent(page, app_url, tmp_path):
    page.goto(f"{app_url}/monthly_bill?mb_hit=95")
    wait_for_app(page)
    button = page.locator(".st-key-mb_csv").get_by_role("button")
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=30_000) as info:
        button.click()
    path = tmp_path / "bill.csv"
    info.value.save_as(path)
    text = path.read_text()
    head = [line for line in text.splitlines() if line.startswith("# ")]
    keys = {line[2:].split(":", 1)[0] for line in head}
    assert {"app", "created_utc", "link", "model", "gpu", "weight_dtype", "kv_dtype", "price_per_gpu_hour_usd",
            "dau", "cache_hit_pct"} <= keys
    assert "# model: llama-3-8b (Llama-3-8B)" in head and "# cache_hit_pct: 95" in head
    # the whole address, so the file's link opens the same bill from anywhere
    assert any(line.startswith(f"# link: {app_url}/monthly_bill?") and "mb_hit=95" in line for line in head), head
    df = pd.read_csv(io.StringIO(text), comment="#")
    totals = df["total_usd"].astype(str)
    assert all(len(t.split(".")[1]) <= 2 for t in totals if "." in t)    # cents at most


def test_metric_rows_read_like_st_metric_and_their_help_opens_from_the_keyboard(page, app_url):
    page.goto(f"{app_url}/?batch=8")
    wait_for_app(page)
    value = page.locator(".xm-value").first
    sync_api.expect(value).to_be_visible(timeout=30_000)
    # st.metric's sizes in Streamlit 1.67 (computed style of stMetricValue / stMetricLabel): 36 px and 14 px
    assert value.evaluate("e => getComputedStyle(e).fontSize") == "36px"
    assert page.locator(".xm-label").first.evaluate("e => getComputedStyle(e).fontSize") == "14px"
    mark = page.locator(".xm-help").first
    tip = "e => getComputedStyle(e, '::after')"
    assert mark.evaluate(tip + ".display") == "none"
    assert mark.get_attribute("tabindex") == "0"  # in the Tab order
    mark.focus()
    assert mark.evaluate(tip + ".display") == "block"
    assert mark.evaluate(tip + ".content").strip('"').startswith("Bound: the roofline lower bound.")



#: The left and right edges (px) of a focused help mark's text box (its ::after), from its containing block:
#: the nearest positioned ancestor, the mark itself included.
TIP_BOX = """e => {
  let cb = e; while (cb && getComputedStyle(cb).position === 'static') cb = cb.parentElement;
  const r = cb.getBoundingClientRect(), s = getComputedStyle(e, '::after');
  const extra = s.boxSizing === 'border-box' ? 0 : parseFloat(s.paddingLeft) + parseFloat(s.paddingRight)
    + parseFloat(s.borderLeftWidth) + parseFloat(s.borderRightWidth);
  const w = parseFloat(s.width) + extra;
  const l = s.left !== 'auto' ? r.left + parseFloat(s.left) : r.right - parseFloat(s.right) - w;
  return [l, l + w]; }"""


@pytest.mark.parametrize("path, width", [("monthly_bill", 1280), ("monthly_bill", 700), ("kv_cache", 700)])
def test_every_metric_help_stays_inside_the_window(page, app_url, path, width):
    # A help text spans its own metric's column, so it cannot run past the window however the rows wrap.
    # (It used to open from the mark and run 50-170 px past the right edge for the bill's tiers in the
    # page's right-hand column, and for the KV cache's middle metric at 700 px.)
    page.set_viewport_size({"width": width, "height": 720})
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    marks = page.locator(".xm-help")
    sync_api.expect(marks.first).to_be_attached(timeout=30_000)
    assert marks.count() >= 3
    for i in range(marks.count()):
        mark = marks.nth(i)
        mark.scroll_into_view_if_needed()
        mark.focus()
        left, right = mark.evaluate(TIP_BOX)
        assert 0 <= left and right <= width + 1, (path, width, i, left, right)


def test_a_green_delta_stays_legible_in_the_dark_theme(browser, app_url):
    # dark theme: st.metric draws a green delta light on dark (126, 213, 176 on 14, 47, 36); the mixed colours of
    # metric_row.CSS must also put a light text on a dark pill, not the light theme's dark green
    pg = browser.new_context(viewport={"width": 1280, "height": 720}, color_scheme="dark").new_page()
    try:
        pg.goto(f"{app_url}/?batch=8")
        wait_for_app(pg)
        delta = pg.locator(".xm-delta.xm-green").first
        sync_api.expect(delta).to_have_text("fits on one GPU", timeout=30_000)
        rgb = delta.evaluate("e => getComputedStyle(e).color")
        nums = [float(x) for x in rgb[rgb.index("(") + 1:rgb.index(")")].replace("srgb", "").split()[:3]] \
            if rgb.startswith("color(") else [float(x) for x in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3]]
        nums = [v * 255 if max(nums) <= 1 else v for v in nums]
        assert nums[1] > 150 and nums[1] > nums[0] + 30, rgb  # a light green: green channel high and dominant
    finally:
        pg.context.close()


@pytest.mark.parametrize("width, height", [(1280, 720), (1600, 1000)])
def test_the_plans_requests_per_s_box_shows_seven_digits_and_says_when_a_rate_is_beyond_the_plan(
        browser, app_url, width, height):
    from browsertest import page_at
    with page_at(browser, width, height) as pg:
        pg.goto(f"{app_url}/many_gpus?model=llama-3-8b")
        wait_for_app(pg)
        box = pg.get_by_label("Requests/s", exact=True)
        box.fill("1000000")
        box.press("Enter")
        sync_api.expect(pg.get_by_text("A very large fleet", exact=False)).to_be_visible(timeout=60_000)
        wait_for_app(pg)
        assert box.input_value() == "1000000.00"
        # the whole number is in view: the text is no wider than the box's text area (it would scroll inside it)
        scroll, client = box.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert scroll <= client, f"Requests/s shows {client} px of {scroll} px at {width} px"
        text_px = box.evaluate("""e => { const c = document.createElement('canvas').getContext('2d');
            c.font = getComputedStyle(e).font; return c.measureText(e.value).width; }""")
        assert text_px <= client, (text_px, client)
        # above the plan's limit: a warning in the page, and the box keeps what was typed
        pg.get_by_label("Input tokens", exact=True).fill("4096")
        pg.get_by_label("Input tokens", exact=True).press("Enter")
        wait_for_app(pg)
        box.fill("200000000")
        box.press("Enter")
        sync_api.expect(pg.get_by_text("is beyond what the plan accepts")).to_be_visible(timeout=60_000)
        assert box.input_value() == "200000000.00"
        assert pg.get_by_label("Input tokens", exact=True).input_value() == "4096"
