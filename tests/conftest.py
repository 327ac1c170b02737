"""Shared test setup: the page-test helpers live in tests/pagetest.py, the browser-test helpers in
tests/browsertest.py (imported by the tests); the browser fixtures are here.

The live page's machine-wide lock (live/machine_lock.py) lives in a private directory during the tests, so
that a test run never waits for, or blocks, another run of the suite on the same machine. Servers the tests
start inherit the variable. So does the class poll's database: a SQLite file in that directory, not the app's
data/poll.sqlite.

``postgres_url``: the PostgreSQL server .ci/run starts (``EXPLORER_TEST_POSTGRES_URL``); elsewhere a throwaway
one from Debian's postgresql package (tests/pgserver.py) if installed, else the test is skipped.
"""
import os
import tempfile

import pytest

os.environ["LLM_EXPLORER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="llm-explorer-tests-")
# The scripted OpenAI-compatible servers of the tests listen on loopback, on ports chosen at random: the suite
# lists loopback as an operator would list 127.0.0.1:8000 (nothing is allowed unless listed). Tests of refusals
# pass their own allow-list or remove the variable.
os.environ.setdefault("LLM_EXPLORER_ENDPOINT_ALLOW", "127.0.0.1")
os.environ["EXPLORER_POLL_DATABASE_URL"] = f"sqlite:///{os.environ['LLM_EXPLORER_RUNTIME_DIR']}/poll.sqlite"


@pytest.fixture(scope="session")
def postgres_url():
    """A PostgreSQL server's URL for the session (see the module's docstring)."""
    url = os.environ.get("EXPLORER_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    import shutil
    from pathlib import Path

    import pgserver
    try:
        pgserver.pg_bin("initdb")
    except FileNotFoundError:
        if os.environ.get("CI"):
            pytest.fail("CI must provide PostgreSQL (bash .ci/run starts it)")
        pytest.skip("no PostgreSQL server: install Debian's postgresql package (bash .ci/run does)")
    folder = Path(tempfile.mkdtemp(prefix="explorer-pg-"))
    folder.chmod(0o755)
    try:
        yield pgserver.start(folder / "pg")
    finally:
        pgserver.stop(folder / "pg")
        shutil.rmtree(folder, ignore_errors=True)


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
