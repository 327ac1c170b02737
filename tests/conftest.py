"""Shared test setup: the page-test helpers live in tests/pagetest.py (imported by the tests)."""
