"""Shared test setup: the page-test helpers live in tests/pagetest.py (imported by the tests).

The live page's machine-wide lock (live/machine_lock.py) lives in a private directory during the tests, so
that a test run never waits for, or blocks, another run of the suite on the same machine. Servers the tests
start inherit the variable.
"""
import os
import tempfile

os.environ["LLM_EXPLORER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="llm-explorer-tests-")
