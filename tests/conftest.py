"""Shared test setup.

AppTest and st.navigation with a folder named ``pages/``: Streamlit's real server marks an app that
calls ``st.navigation`` as not using the legacy ``pages/`` folder (``PagesManager.uses_pages_directory
= False``), but AppTest resets that flag before every run and re-derives it from the folder's
existence, so from the second run on it resolves pages the legacy way and the entry script's widgets
(our shared sidebar) vanish from the element tree. The patch below restores what the server does.
"""
from __future__ import annotations

import pytest
from streamlit.runtime import pages_manager

_original_init = pages_manager.PagesManager.__init__


def _init_as_the_server_does(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    pages_manager.PagesManager.uses_pages_directory = False


pages_manager.PagesManager.__init__ = _init_as_the_server_does


@pytest.fixture
def app_test():
    """Factory: ``app_test(page=None, **query_params)`` -> an AppTest of app.py that has run once
    (on ``page`` when given, e.g. "pages/kv_cache.py")."""
    from streamlit.testing.v1 import AppTest

    def make(page: str | None = None, **query_params):
        at = AppTest.from_file("../app.py", default_timeout=60)
        for k, v in query_params.items():
            at.query_params[k] = v
        at.run()
        if page is not None:
            at.switch_page(page).run()
        return at

    return make
