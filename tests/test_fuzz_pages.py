"""Seeded fuzz of the shared server's two doors: deep links (URL parameters) and pasted config.json texts.

Each case opens a page of the app with AppTest (a fresh session), with adversarial URL parameters (every
widget key of every page, with non-finite numbers, huge and negative values, markdown, HTML, long and
odd text, or valid values), or with an adversarial config.json loaded through the sidebar. Every run
must end without an exception, show no internal text (a traceback, a source path, a PyTorch frame),
no metric reading inf or NaN, no table cell holding an infinity, and finish within ``RUN_LIMIT_S``.
The generator is seeded: a failure names its case index, and the same index reproduces it.
"""
import json
import random
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import calc
from ui.nav import PAGES
import pagetest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
SEED = 14
N_URL_CASES = 260
N_CONFIG_CASES = 60
#: One run of a page must finish within this (AppTest's own timeout; a page should take well under 1 s).
RUN_LIMIT_S = 20

PAGE_FILES = [p[0] for p in PAGES]
#: Every widget key the pages name (a link may carry any of them).
KEYS = sorted({k for d in ("app_pages", "ui") for f in (ROOT / d).glob("*.py") for k in re.findall(r'key="([a-z][a-z0-9_]*)"', f.read_text())})
NUMBERS = ["inf", "-inf", "Infinity", "-Infinity", "NaN", "nan", "1e400", "-1e400", "9" * 400, "-" + "9" * 60, "0", "-1",
           "1e308", "1e-320", "2147483648", "9223372036854775808", "1.5", "-0", "0x10", "1_000", "1e3", " 7 "]
TEXTS = ["", " ", "abc", "![x](http://example.invalid/p.png)", "[sign in](http://example.invalid/x)",
         "<img src=x onerror=alert(1)>", "$\\frac{1}{0}$", ":red[x] :material/bolt:", "a" * 3000, "\x00", "𝓧",
         "%", "'", '"', "../../etc/passwd", "/etc/shadow", "custom:evil", "custom:![x](http://example.invalid/p.png)",
         "1,2,3", "4, -5, abc, 1e9", "out1=1e400,rows=100000", "rows=-1", "www.example.invalid"]
VALID = {"model": calc.list_models(), "gpu": calc.list_accelerators(),
         "wq": ["bf16", "fp8", "int8", "int4", "fp32"], "kvq": ["bf16", "fp8", "int8", "int4"]}
RAW = ("Traceback", 'File "', "Exception raised from", "site-packages", str(ROOT), "frame #0", "RecursionError",
       "set_int_max_str_digits")
INF_WORD = re.compile(r"(?<![a-z])(inf|nan|infinity)(?![a-z])", re.I)


def _value(rng: random.Random, key: str) -> str:
    roll = rng.random()
    if key in VALID and roll < 0.4:
        return rng.choice(VALID[key])
    if roll < 0.55:
        return rng.choice(NUMBERS)
    if roll < 0.8:
        return rng.choice(TEXTS)
    return str(rng.choice([1, 2, 8, 64, 1024, 8192, 131072, 10**6, 10**9]))


def url_cases() -> list[tuple[str, dict[str, str]]]:
    rng = random.Random(SEED)
    cases = []
    for _ in range(N_URL_CASES):
        page = rng.choice(PAGE_FILES)
        keys = rng.sample(KEYS, rng.randint(1, 5))
        cases.append((page, {k: _value(rng, k) for k in keys}))
    return cases


BAD_JSON_VALUES = ["1e400", "-1e400", "9" * 5000, "9" * 25, "-3", "0", "0.5", "1e9", "2000000000", "true", "null",
                   '"64"', '"![x](http://example.invalid/p.png)"', "[1, 2]", "{}", "[" * 3000 + "]" * 3000,
                   '{"a": ' * 60 + "1" + "}" * 60, "NaN", "Infinity"]
CONFIG_KEYS = ["hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
               "vocab_size", "head_dim", "max_position_embeddings", "sliding_window", "num_local_experts",
               "num_experts_per_tok", "kv_lora_rank", "layer_types", "tie_word_embeddings", "model_type",
               "text_config", "_name_or_path"]


def config_cases() -> list[tuple[str, str]]:
    rng = random.Random(SEED + 1)
    bases = sorted((ROOT / "calc" / "data" / "hf_configs").glob("*.json"))
    cases = []
    for _ in range(N_CONFIG_CASES):
        cfg = json.loads(rng.choice(bases).read_text())
        text_cfg = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
        marks = {}
        for i, key in enumerate(rng.sample(CONFIG_KEYS, rng.randint(1, 3))):
            marks[f"@@{i}@@"] = rng.choice(BAD_JSON_VALUES)
            text_cfg[key] = f"@@{i}@@"
        text = json.dumps(cfg)
        for mark, raw in marks.items():  # raw JSON text, so absurd literals reach the reader as typed
            text = text.replace(json.dumps(mark), raw)
        cases.append((rng.choice(PAGE_FILES[:-1]), text))
    return cases


def check_run(at: AppTest, what: str) -> None:
    assert not at.exception, (what, [e.message for e in at.exception])
    texts = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "subheader", "title", "code", "text"):
        texts += [str(getattr(e, "value", "")) for e in at.get(kind)]
    for t in texts:
        assert not any(r in t for r in RAW), (what, t[:300])
    for m in pagetest.metrics(at):
        assert not INF_WORD.search(str(m.value)), (what, m.label, m.value)
    for value in pagetest.tables(at):
        if isinstance(value, pd.DataFrame):
            numeric = value.select_dtypes(include=[np.number])
            assert not np.isinf(numeric.to_numpy(dtype=float)).any(), (what, list(numeric.columns))


def _run(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=RUN_LIMIT_S)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(page)
    return at.run()


def test_fuzzed_deep_links_are_harmless():
    slowest = (0.0, None)
    for i, (page, query) in enumerate(url_cases()):
        t0 = time.perf_counter()
        at = _run(page, query)
        check_run(at, f"URL case {i}: {page} {query!r}"[:400])
        slowest = max(slowest, (time.perf_counter() - t0, i))
    print(f"{N_URL_CASES} deep links; slowest run {slowest[0]:.2f} s (case {slowest[1]})")


def test_fuzzed_config_json_texts_are_harmless():
    loaded = refused = 0
    for i, (page, text) in enumerate(config_cases()):
        at = AppTest.from_file(APP, default_timeout=RUN_LIMIT_S)
        at.session_state["cfg_text"] = text
        at.switch_page(page)
        at.run()
        at.button(key="cfg_load").click().run()
        check_run(at, f"config case {i}: {page} {text[:200]!r}")
        if at.session_state["model"].startswith("custom:"):
            loaded += 1
        else:
            refused += 1
            assert any("as a config.json" in e.value for e in at.error), f"config case {i}"
    assert refused >= N_CONFIG_CASES // 2  # most mutations are absurd: each got its message
    print(f"{N_CONFIG_CASES} config.json texts: {loaded} loaded, {refused} refused with a message")


def test_the_case_generators_are_seeded():
    assert url_cases() == url_cases() and config_cases() == config_cases()
    assert len(KEYS) > 40 and {"model", "gpu", "price", "wq", "kvq"} <= set(KEYS)  # the sidebar's keys are fuzzed
