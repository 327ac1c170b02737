"""LLM Inference Explorer: entry point.

``streamlit run app.py``. Draws the shared sidebar (model, GPU, dtypes, price), then the page the
navigation picks. Pages live in app_pages/, one explorable per file.
"""
from pathlib import Path

import streamlit as st

from app_pages import common

ROOT = Path(__file__).parent
#: (file, title, icon) of every page, in menu order.
PAGES = [
    ("app_pages/home.py", "Home", ":material/home:"),
    ("app_pages/kv_cache.py", "KV cache bill", ":material/memory:"),
    ("app_pages/roofline.py", "Decode and the roofline", ":material/speed:"),
    ("app_pages/latency_cost.py", "Latency against cost", ":material/payments:"),
    ("app_pages/quantization.py", "Quantization", ":material/compress:"),
    ("app_pages/batching.py", "Batching and memory", ":material/view_week:"),
    ("app_pages/speculative.py", "Speculative decoding", ":material/fast_forward:"),
    ("app_pages/monthly_bill.py", "Monthly bill", ":material/receipt_long:"),
    ("app_pages/live.py", "Live measurement", ":material/monitor_heart:"),
]

st.set_page_config(page_title="LLM Inference Explorer", page_icon=":material/bolt:", layout="wide")
pages = [st.Page(f, title=t, icon=i, default=(f == "app_pages/home.py"))
         for f, t, i in PAGES if (ROOT / f).exists()]
pg = st.navigation(pages)
common.render_sidebar()
pg.run()
