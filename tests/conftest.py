"""Shared test setup: the page-test helpers live in tests/pagetest.py, the browser-test helpers in
tests/browsertest.py (imported by the tests); the browser fixtures are here.

The live page's machine-wide lock (live/machine_lock.py) lives in a private directory during the tests, so
that a test run never waits for, or blocks, another run of the suite on the same machine. Servers the tests
start inherit the variable.
"""
import os
import tempfile

import pytest

os.environ["LLM_EXPLORER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="llm-explorer-tests-")
# The scripted OpenAI-compatible servers of the tests listen on loopback, on ports chosen at random: the suite
# lists loopback as an operator would list 127.0.0.1:8000 (nothing is allowed unless listed). Tests of refusals
# pass their own allow-list or remove the variable.
os.environ.setdefault("LLM_EXPLORER_ENDPOINT_ALLOW", "127.0.0.1")


# -- browser tests (tests/browsertest.py; each fixture skips its test where no chromium is installed) ----------
@pytest.fixture(scope="module")
def app_url():
    """A server of the app for the test module; yields its URL."""
    from browsertest import start_app
    proc, url = start_app()
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for the test module."""
    from browsertest import launch_chromium, sync_api
    with sync_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context's page at 1280 x 720."""
    from browsertest import page_at
    with page_at(browser, 1280, 720) as pg:
        yield pg
