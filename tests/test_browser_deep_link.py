"""A deep link on a plain server (no nginx), started as the README says (``streamlit run asgi.py``): the browser
asks nothing under the page's path, so its console shows no 404.

Opened on ``streamlit run app.py`` the same visit logs two 404s per deep link, ``/kv_cache/_stcore/health`` and
``/kv_cache/_stcore/host-config`` (Streamlit's frontend tries the page's path as the server's base URL first;
Streamlit issue #7074): this test fails there. Same server and Chromium as test_browser.py (fixtures in
tests/conftest.py; skipped where no chromium is installed).
"""
import pytest

from browsertest import page_at, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser

NAV = "[data-testid=stSidebarNav]"


def test_deep_links_ask_nothing_under_the_pages_path(browser, app_url):
    failed, console = [], []
    with page_at(browser, 1280, 720) as pg:   # a fresh browser: nothing cached from another test
        pg.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        pg.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
        pg.goto(f"{app_url}/kv_cache?kv_ctx=16K")
        pg.locator("h1").filter(has_text="KV cache bill").first.wait_for(timeout=60_000)
        wait_for_app(pg)
        assert pg.evaluate("window.__streamlit.BACKEND_BASE_URL") == app_url + "/"
        # the menu switches pages, and the URL names the new one
        pg.locator(NAV).get_by_text("Decode and the roofline").click()
        pg.locator("h1").filter(has_text="Decode and the roofline").first.wait_for(timeout=60_000)
        assert pg.url.split("?")[0] == f"{app_url}/roofline"
        # a second deep link, straight in
        pg.goto(f"{app_url}/latency_cost")
        pg.locator("h1").filter(has_text="Latency against cost").first.wait_for(timeout=60_000)
        wait_for_app(pg)
        assert pg.locator(NAV).get_by_text("KV cache bill").count() == 1     # the menu is there
        assert pg.url.split("?")[0] == f"{app_url}/latency_cost"
    assert not [f for f in failed if "_stcore" in f], failed
    assert not [c for c in console if "404" in c], console


def _sidebar_choices(pg) -> tuple[str, str, str]:
    """The sidebar's model and GPU ids (its first two select boxes) and its price box."""
    side = pg.locator("section[data-testid=stSidebar]")
    model = side.locator("input[aria-label='Model']").input_value()
    gpu = side.locator("input[aria-label='GPU / accelerator']").input_value()
    return model, gpu, side.locator("input[type=number]").first.input_value()


@pytest.mark.parametrize("opened, shown", [
    # a page opened without ?model=: the defaults (Llama-3-8B on an H100 SXM at its $3.99/h list price); Back used
    # to show the lists' first entries (DeepSeek-V2 on an A10 at $0.00)
    ("/kv_cache", ("llama-3-8b", "h100-sxm", "3.99")),
    # a page opened on a link's choices keeps them, and its URL keeps naming them
    ("/kv_cache?model=qwen3-8b&gpu=h200&price=2.5", ("qwen3-8b", "h200", "2.50")),
])
def test_back_returns_to_the_sidebar_the_page_was_opened_with(browser, app_url, opened, shown):
    with page_at(browser, 1280, 900) as pg:
        pg.goto(app_url + opened)
        pg.locator("h1").filter(has_text="KV cache bill").first.wait_for(timeout=60_000)
        wait_for_app(pg)
        before = _sidebar_choices(pg)
        assert before[0] == shown[0] and before[1] == shown[1] and before[2] == shown[2], before
        pg.locator(NAV).get_by_text("Decode and the roofline").click()
        pg.locator("h1").filter(has_text="Decode and the roofline").first.wait_for(timeout=60_000)
        wait_for_app(pg)
        pg.go_back()
        pg.locator("h1").filter(has_text="KV cache bill").first.wait_for(timeout=60_000)
        wait_for_app(pg)
        assert _sidebar_choices(pg) == before
        if "?" in opened:
            assert "model=qwen3-8b" in pg.url and "gpu=h200" in pg.url
