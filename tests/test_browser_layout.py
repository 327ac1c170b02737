"""What a person sees at 1280 x 720 in Chromium: the key columns of the wide tables without scrolling, the
edited price table in a shared link, the inputs at the head of a downloaded CSV. Same set-up as
test_browser.py (Debian's chromium through Playwright; skipped where none is installed)."""
import io
import time

import pandas as pd
import pytest

from browsertest import sync_api, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser

WIDE_TABLES = {  # page -> the key columns of its wide table, in order (headers as shown)
    "kv_cache": ["layout", "KV heads K", "KV per token (B)", "KV in total (B = 1)", "weights + KV", "GPUs needed"],
    "quantization": ["format", "total memory", "GPUs", "decode step", "throughput (tok/s)", "max batch"],
    "monthly_bill": ["tier", "total / month", "per generation", "per DAU / month", "GPUs",
                     "self-hosting cheaper from DAU"],
}


def _table_with(pg, headers: list[str], timeout_s: float = 90.0):
    """The visible st.dataframe whose header row shows every one of ``headers`` (scrolled into view so that
    it renders; the grid draws its header cells a moment after the script ends). Every header, not one: a
    page can hold two tables that share a column name (quantization's "max batch")."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        frames = pg.get_by_test_id("stDataFrame")
        for i in range(frames.count()):
            frame = frames.nth(i)
            if frame.is_visible():
                frame.scroll_into_view_if_needed()
                shown = frame.locator("th").all_inner_texts()
                if all(h in shown for h in headers):
                    return frame
        pg.wait_for_timeout(500)
    pytest.fail(f"no table with the columns {headers!r}")


@pytest.mark.parametrize("path", list(WIDE_TABLES))
def test_key_columns_of_each_wide_table_are_visible_at_1280_px(page, app_url, path):
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    want = WIDE_TABLES[path]
    frame = _table_with(page, want)
    # the header row as drawn, once it has settled (the grid may draw its columns in two passes)
    sync_api.expect(frame.locator("th")).to_have_text(want, timeout=30_000)
    # no horizontal scrolling: the grid's scroller is no wider than its box
    scroll, client = frame.evaluate("e => { const s = e.querySelector('.dvn-scroller'); "
                                    "return [s.scrollWidth, s.clientWidth]; }")
    assert scroll <= client + 1, f"{path}: the table scrolls ({scroll} px of content in {client} px)"
    box = frame.bounding_box()
    assert box["x"] + box["width"] <= 1280


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
        sync_api.expect(other.get_by_test_id("stMetricValue").filter(has_text="$2,558").first).to_be_visible(
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
    assert any(line.startswith("# link: /monthly_bill?") and "mb_hit=95" in line for line in head)
    df = pd.read_csv(io.StringIO(text), comment="#")
    totals = df["total_usd"].astype(str)
    assert all(len(t.split(".")[1]) <= 2 for t in totals if "." in t)    # cents at most
