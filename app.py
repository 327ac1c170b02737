"""LLM Inference Explorer: entry point.

``streamlit run app.py``. Cleans the URL's parameters, draws the shared sidebar (model, GPU, dtypes,
price), then the page the navigation picks. Pages live in app_pages/, one explorable per file.
"""
import os

# No call leaves the machine unless the user asks: the hub libraries read these at import time.
for _switch in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ.setdefault(_switch, "1")

from pathlib import Path  # noqa: E402

import streamlit as st  # noqa: E402

from ui import classroom, fast_session_state, nav, number_ranges, session_cap, sidebar, url_state  # noqa: E402

fast_session_state.install()  # each widget looks up its own key instead of copying the whole state
number_ranges.install()  # every number box with a min or max says under it which values it accepts

# A shipped icon: a ":material/...:" page icon makes every visitor's browser fetch it from a font host.
st.set_page_config(page_title="LLM Inference Explorer", layout="wide",
                   page_icon=str(Path(__file__).parent / "assets" / "favicon.png"),
                   initial_sidebar_state="collapsed" if classroom.presenting() else "auto")
session_cap.enforce()  # past the per-process cap on sessions: "the class server is full", and stop here
dropped = url_state.sanitize_query_params()  # before any widget reads the URL
opened = url_state.link_params_at_open()  # the link as it came, to name what its widgets refuse (after the page)
pages = [st.Page(f, title=t, icon=i, default=(f == "app_pages/home.py")) for f, t, i, _ in nav.PAGES]
pg = st.navigation(pages)
sidebar.render_sidebar(next((f for (f, *_), p in zip(nav.PAGES, pages) if p.url_path == pg.url_path), None))
if dropped:  # on the page, where a narrow window shows it too (the sidebar starts closed there)
    st.warning(url_state.dropped_message(dropped), icon=":material/link_off:")
notice = st.empty()  # filled after the page ran, above it: what of the link no control took


def _show_refused(page_ran: bool) -> None:
    """Name, in ``notice`` (one warning, replaced), the link's values that the controls drawn so far refused and,
    once the page ran (its widgets registered), the link's parameters that nothing on the page reads."""
    text = url_state.link_notice(url_state.ignored_link_params(opened),
                                 url_state.unread_link_params(opened) if page_ran else [],
                                 url_state.rounded_link_params(opened))
    if text:
        notice.warning(text, icon=":material/link_off:")


_show_refused(page_ran=False)  # the sidebar's now, in case the page fails
try:
    pg.run()
except nav.PageEnd:  # the page ended early (nav.end_page: the live page before a run); its controls registered
    pass
_show_refused(page_ran=True)  # the page's controls too, and what no control reads
