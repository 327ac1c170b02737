"""Every page of the app opens with each preset of the 2025-26 architectures selected.

Oracle: the page runs without an exception and keeps the chosen preset (the selection the sidebar
hands to the page); on the KV page the per-token figure is the hand count of the attention layers
(tests/test_layers.py gives the arithmetic). Where a preset cannot be served on the chosen GPU the
page says so in a sentence (st.error), which is allowed; a traceback is not.
"""
from __future__ import annotations

import pytest

from ui.nav import PAGES
from pagetest import metric, open_page

# preset id -> KV per token on the KV page (attention layers only; the constant-state layers hold none)
HYBRID_PRESETS = {
    "qwen3-next-80b-a3b": "24,576 B",   # 12 x 2 x 2 x 256 x 2 B
    "qwen3.5-27b": "65,536 B",          # 16 x 2 x 4 x 256 x 2 B
    "qwen3.5-35b-a3b": "20,480 B",      # 10 x 2 x 2 x 256 x 2 B
    "kimi-k2": "70,272 B",              # 61 x 576 x 2 B
    "nemotron-h-56b": "40,960 B",       # 10 x 2 x 8 x 128 x 2 B
    "minimax-m1": "40,960 B",           # 10 x 2 x 8 x 128 x 2 B
    "deepseek-v3.2": "78,324 B",        # 61 x (576 x 2 + 132) B
    "jamba-v0.1": "16,384 B",           # 4 x 2 x 8 x 128 x 2 B
    # DeepSeek-V4: the average at S = 8,192 (its compressed layers hold fewer tokens than S): each csa / hca layer a
    # window of 128 entries of 1,024 B plus 8,192 / r entries, csa's 2,048 of 1,024 + 132 B, hca's 64 of 1,024 B; Pro
    # 30 csa and 31 hca layers, Flash 21 and 20 and 2 window-only layers of 128 x 1,024 B
    "deepseek-v4-pro": "9,894 B",       # (30 x (131,072 + 2,367,488) + 31 x (131,072 + 65,536)) / 8,192
    "deepseek-v4-flash": "6,917 B",     # (21 x 2,498,560 + 20 x 196,608 + 2 x 131,072) / 8,192 = 6,917
    # MiniMax-M3: every layer's GQA K/V, 2 x 4 x 128 x 2 B = 2,048 B, and a bf16 indexer key of 128 (256 B) in its
    # 57 sparse layers
    "minimax-m3": "137,472 B",          # 60 x 2,048 + 57 x 256
}


@pytest.mark.parametrize("model_id", sorted(HYBRID_PRESETS))
@pytest.mark.parametrize("query", [{}, {"gpu": "mi300x", "wq": "int4", "kvq": "fp8"}], ids=["default", "int4-mi300x"])
def test_every_page_opens_with_the_preset(model_id, query):
    at = open_page(model=model_id, **query)
    for path, *_ in PAGES[1:]:
        at.switch_page(path).run()
        assert not at.exception, (path, at.exception)
        sel = at.session_state["_selection"]
        assert sel.model_id == model_id, path
        assert (sel.gpu_id, sel.weight_dtype, sel.kv_dtype) == (query.get("gpu", sel.gpu_id), query.get("wq", sel.weight_dtype),
                                                               query.get("kvq", sel.kv_dtype)), path
        if path.endswith("kv_cache.py") and not query:
            assert metric(at, "KV per token") == HYBRID_PRESETS[model_id]
