"""Shared setup of the browser tests: a real server of the app and headless Chromium (Debian's package).

Importing this module skips the importing test module, with the way to install it, where no chromium
is on the PATH (``bash .ci/run`` installs it, so in CI these run). No browser is downloaded. The
fixtures ``app_url``, ``browser`` and ``page`` (tests/conftest.py) are built from these helpers.
"""
import contextlib
import shutil

import pytest

from deploy.serve_class import free_port, start_streamlit, wait_healthy

#: A metric's value and label: st.metric's elements and the cells of widgets.metric_row (ui/metric_row.py).
METRIC_VALUE = "[data-testid=stMetricValue], .xm-value"
METRIC_LABEL = "[data-testid=stMetricLabel], .xm-label"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed: run `apt-get install chromium` (bash .ci/run does it)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

#: Headless Chromium in a container, asking nothing of any other host by itself.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def start_app(script: str = "asgi.py"):
    """``streamlit run asgi.py`` (the app as the README starts it; or ``script``) on a free port of 127.0.0.1,
    once it answers; returns (process, URL).

    Fails the test (and kills the server) if it does not answer within 60 s.
    """
    port = free_port()
    proc = start_streamlit(port, "127.0.0.1", script=script, quiet=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, timeout_s=60)
    except RuntimeError:
        proc.kill()
        pytest.fail("the app did not start within 60 s")
    return proc, url


def launch_chromium(playwright):
    """Chromium started from ``playwright`` (a sync_playwright context) with ``CHROMIUM_ARGS``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@contextlib.contextmanager
def page_at(browser, width: int, height: int):
    """A page of a fresh browser context (empty cache and cookies) with a ``width`` x ``height`` viewport."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    try:
        yield ctx.new_page()
    finally:
        ctx.close()


#: Resolves once the page's main thread has been idle: the frames React committed are painted and the widgets'
#: mount effects (each registers its value with Streamlit's widget manager) have run.
BROWSER_IDLE = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(
    () => requestIdleCallback(() => done(true), {timeout: 30000}))))"""


def wait_for_app(pg):
    """Wait (up to 90 s) until the app's script run on ``pg`` has ended and the browser has drawn it.

    The run's end (``data-test-script-state``) comes before the browser has mounted every element it sent: a
    widget registers its value with the form's state on mount, and on a loaded machine that can come seconds
    later; an input typed into before then is sent without its value. So wait for the page to be idle too.
    """
    pg.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=90_000)
    pg.evaluate(BROWSER_IDLE)
    pg.wait_for_timeout(300)


def pick_option(pg, widget_key: str, option_name: str, exact: bool = False) -> None:
    """Open the selectbox of key ``widget_key`` (its ``.st-key-<key>`` element) on ``pg`` and click the option
    ``option_name``. The list opens on a click once the widget has mounted, which on a loaded machine can lag: up to
    five clicks, each waiting 5 s for the option, Escape between them."""
    for _ in range(5):
        pg.locator(f".st-key-{widget_key}").get_by_role("combobox").click()
        option = pg.get_by_role("option", name=option_name, exact=exact)
        try:
            option.wait_for(timeout=5_000)
            break
        except sync_api.TimeoutError:
            pg.keyboard.press("Escape")
    option.click()
