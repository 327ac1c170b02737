"""A link naming a quantized checkpoint (?model=zai-org/GLM-4.6-FP8) in a real browser: the page opens in the
name's weight format, the link is rewritten once (one history entry for the preset id and the format), and the
browser's Back and Forward show what each entry opened on. Same server and Chromium as test_browser.py (fixtures in
tests/conftest.py; skipped where no chromium is installed)."""
import pytest

from browsertest import page_at, pick_option, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser

NAV = "[data-testid=stSidebarNav]"


def _shown(pg) -> tuple[str, str]:
    """The sidebar's model and weight format boxes."""
    side = pg.locator("section[data-testid=stSidebar]")
    return (side.locator("input[aria-label='Model']").input_value(),
            side.locator("input[aria-label='Weights']").input_value())


def _on(pg, heading: str) -> None:
    pg.locator("h1").filter(has_text=heading).first.wait_for(timeout=60_000)
    wait_for_app(pg)


def test_back_and_forward_keep_the_checkpoints_weight_format(browser, app_url):
    with page_at(browser, 1280, 900) as pg:
        pg.goto(f"{app_url}/kv_cache?model=zai-org/GLM-4.6-FP8")
        _on(pg, "KV cache bill")
        assert _shown(pg) == ("glm-4.7", "fp8")
        assert "model=glm-4.7" in pg.url and "wq=fp8" in pg.url
        opened_entries = pg.evaluate("history.length")
        pg.locator(NAV).get_by_text("Decode and the roofline").click()
        _on(pg, "Decode and the roofline")
        assert _shown(pg) == ("glm-4.7", "fp8") and "wq=fp8" in pg.url
        assert pg.evaluate("history.length") == opened_entries + 1
        pg.go_back()   # the KV page as the link's rewrite left it
        _on(pg, "KV cache bill")
        assert _shown(pg) == ("glm-4.7", "fp8") and "wq=fp8" in pg.url
        pg.go_back()   # the link as it was typed: it opens on the same format (no entry in between without it)
        _on(pg, "KV cache bill")
        assert "GLM-4.6-FP8" in pg.url and _shown(pg) == ("glm-4.7", "fp8")
        pg.go_forward()
        _on(pg, "KV cache bill")
        assert _shown(pg) == ("glm-4.7", "fp8")


def test_a_choice_made_after_the_link_holds_on_back(browser, app_url):
    with page_at(browser, 1280, 900) as pg:
        pg.goto(f"{app_url}/kv_cache?model=zai-org/GLM-4.6-FP8")
        _on(pg, "KV cache bill")
        pick_option(pg, "wq", "bf16", exact=True)
        pg.wait_for_function("() => !location.search.includes('wq=')", timeout=30_000)
        wait_for_app(pg)
        assert _shown(pg) == ("glm-4.7", "bf16") and "wq=" not in pg.url
        pg.locator(NAV).get_by_text("Decode and the roofline").click()
        _on(pg, "Decode and the roofline")
        assert _shown(pg) == ("glm-4.7", "bf16")
        pg.go_back()
        _on(pg, "KV cache bill")
        assert _shown(pg) == ("glm-4.7", "bf16")
