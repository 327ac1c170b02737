"""LLM Inference Explorer: entry point.

``streamlit run app.py``. Draws the shared sidebar (model, GPU, dtypes, price), then the page the
navigation picks. Pages live in app_pages/, one explorable per file.
"""
import streamlit as st

from app_pages import common

st.set_page_config(page_title="LLM Inference Explorer", page_icon=":material/bolt:", layout="wide")
pages = [st.Page(f, title=t, icon=i, default=(f == "app_pages/home.py")) for f, t, i, _ in common.PAGES]
pg = st.navigation(pages)
common.render_sidebar()
pg.run()
