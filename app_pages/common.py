"""What every page shares: the sidebar choices, formatting, charts, CSV downloads, experiments.

The sidebar (model, GPU, weight and KV dtypes, hourly price) is rendered once per run by app.py
before the page; its widgets are keyed and bound to the URL, so the choices persist from page to
page and a copied link reproduces them. Pages read them with ``selection()``.
"""
from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import calc
from app_pages import caching, classroom, inplace_chart
from app_pages.html_table import show_table  # noqa: F401 (pages call common.show_table like st.dataframe)
from app_pages.metric_row import MetricRow
from app_pages.formats import fmt_number, fmt_seconds, fmt_usd  # noqa: F401 (the pages call them as common.fmt_*)
from app_pages.caching import cached_call  # noqa: F401 (pages call common.cached_call(func, *args))
from calc.exercises import break_lines
from calc.models import model_from_json_text

DTYPES = ("bf16", "fp16", "fp8", "int8", "int4", "fp32")
#: Weights also come in the block formats of calc.quant; a cache in llama.cpp's q8_0/q4_0 blocks.
WEIGHT_DTYPES = DTYPES + tuple(calc.quant.format_names())
KV_DTYPES = DTYPES + ("q8_0", "q4_0")
CUSTOM_PREFIX = "custom:"
#: Every page, in menu order: (file, title, icon, one-line blurb for the home page's cards).
PAGES = [
    ("app_pages/home.py", "Home", ":material/home:", "The one fact and the napkin table."),
    ("app_pages/kv_cache.py", "KV cache bill", ":material/memory:",
     "How big the cache gets: MHA, GQA, MQA, MLA, windows; what fits."),
    ("app_pages/roofline.py", "Decode and the roofline", ":material/speed:",
     "Why decode is memory-bound; the step split; the knee."),
    ("app_pages/latency_cost.py", "Latency against cost", ":material/payments:",
     "TPOT against dollars per million tokens: the Pareto front."),
    ("app_pages/quantization.py", "Quantization", ":material/compress:", "Weights and cache from bf16 to 4 bits; q4_K_M, mxfp4, nvfp4 as stored."),
    ("app_pages/batching.py", "Batching and memory", ":material/view_week:",
     "Static vs continuous batching; PagedAttention; prefix caching."),
    ("app_pages/speculative.py", "Speculative decoding", ":material/fast_forward:",
     "Exact sampling from a draft; when the speedup vanishes."),
    ("app_pages/many_gpus.py", "Many GPUs", ":material/hub:",
     "TP, PP, EP and replicas; a capacity plan for your traffic; which GPUs can run it."),
    ("app_pages/monthly_bill.py", "Monthly bill", ":material/receipt_long:",
     "A product's bill across model tiers; when self-hosting wins."),
    ("app_pages/exercises.py", "Exercises", ":material/school:",
     "Graded napkin problems with worked solutions; a teacher view."),
    ("app_pages/poll.py", "Class poll", ":material/how_to_vote:",
     "Predict, then reveal: the class answers together, the projector shows the spread, then the answer."),
    ("app_pages/live.py", "Live measurement", ":material/monitor_heart:",
     "A real model on this machine, next to the prediction."),
]
#: The two ways of counting the input embedding in a step (calc's ``embedding`` keyword).
EMBEDDING = {"gather": "B rows gathered (engines)", "table": "whole table (course napkin)"}
#: Matmul-precision conventions (calc.hardware.with_matmul), by the name the sidebar shows.
MATMUL = {"auto": "auto", "weight-only": "weight_only", "low-precision": "low_precision"}
#: Which prompt tokens prefill's LM head multiplies (calc's ``logits`` keyword).
LOGITS = {"all": "every prompt token (course)", "last": "last prompt token (engines)"}
#: The memory conventions of calc.memory.capacity_bytes, as the sidebar offers them.
MEMORY = {"datasheet": "data sheet", "driver": "driver (nvidia-smi)", "engine": "engine (vLLM share)"}
DEFAULT_MODEL = "llama-3-8b"
DEFAULT_GPU = "h100-sxm"
#: Hourly price used for owned hardware that has no list price (users type their own).
OWNED_HARDWARE_PRICE_USD = 1.0


@dataclass(frozen=True)
class Selection:
    """The shared sidebar choices: a model, an accelerator, the dtypes and the hourly price (USD)."""

    model_id: str
    model: calc.ModelConfig
    gpu_id: str
    accelerator: calc.Accelerator
    weight_dtype: str
    kv_dtype: str
    price_per_hour_usd: float
    embedding: str = "gather"
    memory: str = "datasheet"
    gpu_memory_utilization: float = calc.memory.DEFAULT_GPU_MEMORY_UTILIZATION
    runtime_reserve_bytes: float = 0.0
    logits: str = "all"

    @property
    def logits_label(self) -> str:
        """Which convention prefill and TTFT figures follow for the LM head, in words."""
        if self.logits == "last":
            return "LM head on each prompt's last token only, as vLLM and SGLang run it"
        return "LM head on every prompt token (the course's 2NT)"

    @property
    def logits_short(self) -> str:
        """The LM-head convention in a few words, for headings."""
        return "LM head on the last prompt token" if self.logits == "last" else "LM head on every prompt token"

    @property
    def capacity_label(self) -> str:
        """Which memory convention ``accelerator.memory_bytes`` follows, with its figure, for verdicts."""
        return capacity_label(self.accelerator, self.memory, self.gpu_memory_utilization, self.runtime_reserve_bytes)


@st.cache_data(show_spinner=False)
def _presets() -> tuple[list[str], dict[str, str], list[str], dict[str, str]]:
    models = calc.list_models()
    gpus = calc.list_accelerators()
    return (models, {m: calc.get_model(m).name for m in models},
            gpus, {g: calc.get_accelerator(g).name for g in gpus})


def list_price_usd(gpu_id: str) -> float:
    """The preset's hourly list price, or ``OWNED_HARDWARE_PRICE_USD`` when it has none."""
    price = calc.get_accelerator(gpu_id).price_per_hour_usd
    return OWNED_HARDWARE_PRICE_USD if price is None else float(price)


def _custom_models() -> dict[str, calc.ModelConfig]:
    return st.session_state.setdefault("_custom_models", {})


def get_any_model(model_id: str) -> calc.ModelConfig:
    """A preset by id, or a config.json the user loaded in this browser session ("custom:<name>").

    Raises:
        ValueError: unknown id.
    """
    if model_id.startswith(CUSTOM_PREFIX):
        custom = _custom_models()
        if model_id in custom:
            return custom[model_id]
        raise ValueError(f"the model {model_id[len(CUSTOM_PREFIX):]!r} is not loaded in this session")
    return calc.get_model(model_id)


def add_custom_model(text: str, name: str | None = None) -> str:
    """Parse config.json text, keep it for this session and return its id ("custom:<name>").

    Raises:
        ValueError: the text is not a usable config.json (the message names the key or the JSON error).
    """
    model = model_from_json_text(text, name=name or None)
    model = model.with_changes(name=safe_name(model.name))  # pages print names inside markdown
    model_id = CUSTOM_PREFIX + model.name
    _custom_models()[model_id] = model
    return model_id


#: URL parameter that carries a config.json-loaded model (``model_to_param``), so that a link reproduces it.
CFG_PARAM = "cfg"
_MAX_CFG_PARAM_CHARS = 8000


def model_to_param(model: calc.ModelConfig) -> str:
    """``model`` as one URL-safe text: the fields that differ from ModelConfig's defaults, as JSON,
    zlib-compressed and base64url-encoded (a Llama-3.2-1B config: about 200 characters)."""
    import base64
    import dataclasses
    import json
    import zlib
    fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model) if getattr(model, f.name) != f.default}
    raw = json.dumps(fields, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")


def dataclasses_replace_name(model: calc.ModelConfig, name: str) -> calc.ModelConfig:
    """``model`` under another display name (the one its link gives it)."""
    import dataclasses
    return dataclasses.replace(model, name=name)


def model_from_param(text: str) -> calc.ModelConfig:
    """The model ``model_to_param`` wrote.

    Raises:
        ValueError: text that is too long, not base64url, not zlib, more than 64 kB unpacked, not a JSON
            object, or fields ModelConfig rejects (the message says which).
    """
    import base64
    import binascii
    import dataclasses
    import json
    import zlib
    if not isinstance(text, str) or not text or len(text) > _MAX_CFG_PARAM_CHARS:
        raise ValueError(f"the model in the link must be 1 to {_MAX_CFG_PARAM_CHARS:,} characters")
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        unpack = zlib.decompressobj()
        raw = unpack.decompress(packed, 65536)
        if unpack.unconsumed_tail:
            raise ValueError("the model in the link unpacks to more than 64 kB")
        fields = json.loads(raw.decode("utf-8"))
    except (binascii.Error, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the model in the link is damaged ({type(exc).__name__})") from None
    known = {f.name for f in dataclasses.fields(calc.ModelConfig)}
    if not isinstance(fields, dict) or not set(fields) <= known or "name" not in fields:
        raise ValueError("the model in the link is not a model description")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    try:
        return calc.ModelConfig(**fields)
    except TypeError as exc:
        raise ValueError(f"the model in the link is not usable: {exc}") from None


def _on_gpu_change() -> None:
    # The price follows the GPU's list price unless the user typed a price of their own.
    previous = st.session_state.get("_price_gpu")
    typed = previous is not None and st.session_state.get("price") != list_price_usd(previous)
    if not typed:
        st.session_state["price"] = list_price_usd(st.session_state["gpu"])
    st.session_state["_price_gpu"] = st.session_state["gpu"]


def _load_config() -> None:
    upload = st.session_state.get("cfg_upload")
    text = upload.getvalue().decode("utf-8", errors="replace") if upload is not None else st.session_state.get("cfg_text", "")
    name = st.session_state.get("cfg_name", "").strip() or (upload.name.rsplit(".", 1)[0] if upload is not None else "")
    if not text.strip():
        st.session_state["_cfg_error"] = "Paste the text of a config.json or upload the file first."
        return
    try:
        st.session_state["model"] = add_custom_model(text, name or None)
        st.session_state["_cfg_error"] = None
    except ValueError as exc:  # keep the previous model; say what is wrong
        st.session_state["_cfg_error"] = f"Could not read that config.json: {exc}"


def render_sidebar(current_page: str | None = None) -> Selection:
    """Draw the shared sidebar and return the choices (called by app.py once per run).

    Also the classroom parts every page shares: a lecture step's state is applied before the widgets,
    the presenter toggle sits at the sidebar's foot, and the story banner opens the main area
    (``current_page``: the page file shown, so that a step's banner appears on its own page only).
    """
    classroom.apply_story_state()
    models, model_names, gpus, gpu_names = _presets()
    custom = _custom_models()
    linked = st.query_params.get("model", "")
    if linked.startswith(CUSTOM_PREFIX) and linked not in custom and st.query_params.get(CFG_PARAM):
        try:  # the link carries the config.json-loaded model itself
            custom[linked] = dataclasses_replace_name(model_from_param(st.query_params[CFG_PARAM]),
                                                      linked[len(CUSTOM_PREFIX):])
        except ValueError as exc:
            st.sidebar.warning(f"The link's own model could not be read: {md_escape(str(exc))}")
    options = models + list(custom)
    if linked.startswith(CUSTOM_PREFIX) and linked not in options:
        st.sidebar.warning(f"This link names the model {md_escape(repr(linked[len(CUSTOM_PREFIX):][:80]))}, which was loaded from a "
                           "config.json in another browser session. Load that config.json under \"Your own "
                           "model\" to see it; until then the default model is shown.")
    unknown = [f"{key}={str(st.query_params[key])[:40]!r}" for key, valid in (("model", options), ("gpu", gpus))
               if key in st.query_params and st.query_params[key] not in valid
               and not (key == "model" and str(st.query_params[key]).startswith(CUSTOM_PREFIX))]
    if unknown:  # the selectbox would silently fall back to its default
        st.sidebar.caption(md_escape("Unknown preset in the link, default shown instead: " + ", ".join(unknown)
                                     + ". The lists below hold the names a link may use."))
    # Defaults go in through index= only on a first run (or after a bad value), so that a URL
    # parameter can still seed the widget and Streamlit sees no clash with session state.
    for key, valid in (("model", options), ("gpu", gpus)):
        if key in st.session_state and st.session_state[key] not in valid:
            del st.session_state[key]
    model_default = {} if "model" in st.session_state else {"index": options.index(DEFAULT_MODEL)}
    gpu_default = {} if "gpu" in st.session_state else {"index": gpus.index(DEFAULT_GPU)}
    with st.sidebar:
        st.markdown("**Model and hardware**")
        model_id = st.selectbox(
            "Model", options, key="model", **model_default,
            bind="query-params", help="Preset id (the URL carries it); the full name is shown below.")
        st.caption(md_escape(custom[model_id].name) + " (your config.json)" if model_id in custom
                   else model_names.get(model_id, model_id))
        with st.expander("Your own model (config.json)"):
            st.file_uploader("Upload config.json", type=["json"], key="cfg_upload")
            st.text_area("…or paste its text", key="cfg_text", height=100)
            st.text_input("Name (optional)", key="cfg_name")
            st.button("Use this config", on_click=_load_config, key="cfg_load")
            if st.session_state.get("_cfg_error"):
                st.error(md_escape(st.session_state["_cfg_error"]))
        gpu_id = st.selectbox("GPU / accelerator", gpus, key="gpu", **gpu_default,
                              bind="query-params", on_change=_on_gpu_change)
        price_default = {} if "price" in st.session_state else {"value": list_price_usd(gpu_id)}
        c1, c2 = st.columns(2)
        weight_dtype = c1.selectbox("Weights", WEIGHT_DTYPES, key="wq", bind="query-params",
                                    help="Storage format of the weights. Plain names (int4 = 0.5 byte) count no "
                                         "scales, as the course does; the block formats (q4_K_M, mxfp4, "
                                         "int4-g128, ...) count their scales and the tensors they keep in 16-bit.")
        kv_dtype = c2.selectbox("KV cache", KV_DTYPES, key="kvq", bind="query-params",
                                help="Storage format of the cached keys and values")
        matmul = st.selectbox("Matmul precision", list(MATMUL), key="mm", bind="query-params",
                              help="How quantized weights are multiplied, which sets the compute peak P. auto: "
                                   "fp8/int8 on their own tensor cores (W8A8), 4-bit formats dequantized to bf16 "
                                   "(W4A16), as calc and the course count. weight-only: activations in bf16, the "
                                   "bf16 peak for every format. low-precision: W8A8 / W4A4 kernels at the "
                                   "format's own peak (nvfp4, mxfp4: Blackwell's fp4 tensor cores).")
        price = st.number_input("Price, USD per GPU-hour", min_value=0.0, max_value=1000.0, step=0.1,
                                format="%.2f", key="price", bind="query-params", **price_default,
                                help="Defaults to the preset's dated list price; type your own.")
        st.session_state.setdefault("_price_gpu", gpu_id)
        # Plain option names (no format_func): a bound widget writes its shown label into the URL.
        embedding = st.radio("Input embedding per step", list(EMBEDDING), key="emb", bind="query-params",
                             horizontal=True,
                             help="gather: a step reads only the B rows it looks up, as engines do. table: the "
                                  "course's napkin, every parameter read every step (Llama-3-8B at 8K on an H100: "
                                  "5.1 ms instead of 4.8 ms). Tied embeddings are read once, as the head.")
        logits = st.radio("Prefill LM head on", list(LOGITS), key="lgt", bind="query-params", horizontal=True,
                          help="all: the head multiplies every prompt token, the course's 2NT. last: only each "
                               "prompt's last token, where the first output token is sampled, as vLLM and SGLang "
                               "run it (Llama-3-8B, T = 8,192, H100, embedding gathered: 143 ms with all, 134 ms "
                               "with last). Changes prefill and TTFT only.")
        memory = st.radio("Memory capacity", list(MEMORY), key="mem", bind="query-params", horizontal=True,
                          help="datasheet: the marketed capacity (80 GB for an H100), the course's convention. "
                               "driver: what nvidia-smi reports (an H100 80GB: 81,559 MiB = 85.5 GB). engine: a "
                               "serving engine's share of that, vLLM's gpu_memory_utilization (default 0.9).")
        util, runtime_gb = calc.memory.DEFAULT_GPU_MEMORY_UTILIZATION, 0.0
        if memory == "engine":
            e1, e2 = st.columns(2)
            util = e1.number_input("Utilization", min_value=0.05, max_value=1.0, value=util, step=0.05,
                                   key="gmu", bind="query-params", help="vLLM's gpu_memory_utilization: the fraction "
                                   "of the driver's total the engine takes for weights, activations and cache "
                                   "(default 0.9).")
            runtime_gb = e2.number_input("Reserve (GB)", min_value=0.0, max_value=200.0, value=0.0, step=0.5,
                                         key="rtr", bind="query-params", help="Activations at the largest "
                                         "prefill chunk and CUDA graphs, which the engine keeps inside its share "
                                         "(vLLM profiles them at start-up: a few GB for an 8B model).")
        acc = calc.get_accelerator(gpu_id)
        st.caption(f"{acc.name}: {acc.memory_bytes / 1e9:,.0f} GB, {acc.bandwidth_bytes_per_s / 1e12:,.2f} TB/s, "
                   f"{acc.peak_flops('bf16') / 1e12:,.0f} TFLOP/s bf16 dense.")
        if acc.price_per_hour_usd is not None:
            st.caption(f"List price ${acc.price_per_hour_usd:.2f}/h, {acc.price_source} ({acc.price_date}).")
        else:
            st.caption("Owned hardware: no rental price. Enter your own amortised cost per hour.")
        st.divider()
        st.markdown("**Classroom**")
        classroom.presenter_toggle()
        st.page_link("app_pages/home.py", label="Start the lecture (story)", icon=":material/slideshow:",
                     query_params={"story": "1", **({"present": "1"} if classroom.presenting() else {})})
        classroom.story_menu({path: title for path, title, *_ in PAGES})
    classroom.page_css()
    classroom.story_banner({path: title for path, title, *_ in PAGES}, current_page)
    # Every page checks what fits against the chosen convention's capacity (calc.memory.with_capacity).
    memory = memory or "datasheet"
    if model_id in custom:  # keep the loaded model in the link
        st.query_params[CFG_PARAM] = model_to_param(custom[model_id])
    elif CFG_PARAM in st.query_params:
        del st.query_params[CFG_PARAM]
    try:
        capped = calc.memory.with_capacity(acc, memory, float(util), float(runtime_gb or 0.0) * 1e9)
    except ValueError as exc:  # a reserve larger than the share: say so, keep the share without it
        st.sidebar.error(str(exc))
        capped, runtime_gb = calc.memory.with_capacity(acc, memory, float(util)), 0.0
    capped = calc.hardware.with_matmul(capped, MATMUL.get(matmul or "auto", "auto"))
    if capped.matmul_precision(weight_dtype)[1]:  # low precision asked, no engine: say what runs instead
        st.sidebar.info(capped.matmul_note(weight_dtype) + ".")
    sel = Selection(model_id, get_any_model(model_id), gpu_id, capped, weight_dtype, kv_dtype, float(price or 0.0),
                    embedding or "gather", memory, float(util), float(runtime_gb or 0.0) * 1e9, logits or "all")
    st.session_state["_selection"] = sel
    return sel


def selection() -> Selection:
    """The shared sidebar choices of this run (rendered by app.py before the page)."""
    sel = st.session_state.get("_selection")
    return sel if sel is not None else render_sidebar()


# -- text from outside: links, configs, file names ----------------------------------------------------
#: The characters that open a markdown construct that could fetch, link, format code or formulas, or draw
#: a directive: links/images ``[ ] ( ) !``, HTML ``< >``, code, formulas ``$``, directives ``[ ]``, emphasis,
#: headings, tables, strikethrough. ".", "_" and ":" stay (messages read better).
_MD_ACTIVE = re.compile(r"([\\`*\[\]()<>!$#|~{}])")
#: An invisible word joiner (U+2060). GFM turns bare URLs, "www." names and e-mail addresses into links
#: after parsing, in the text itself, so no backslash stops it; a joiner inside "://", "www." and after
#: "@" breaks those patterns while the text reads the same.
_JOIN = "\u2060"
#: Longest query parameter value kept (a pasted config.json travels in one on the live page).
MAX_QUERY_VALUE_CHARS = 20_000


def md_escape(text: object) -> str:
    """``text`` made inert for Streamlit markdown: shown exactly as typed, never as a link, image,
    heading, formula, colour directive or HTML.

    Each character that can open such a construct gets a backslash (CommonMark 2.4: any ASCII
    punctuation may be backslash-escaped), which also defeats ``$`` formulas; bare URLs, "www." names
    and e-mail addresses get an invisible word joiner (``_JOIN``) so GFM does not link them; line
    breaks become spaces. Use it for anything that comes from a URL, a pasted config or a file name.
    """
    flat = _MD_ACTIVE.sub(r"\\\1", " ".join(str(text).splitlines()))
    flat = flat.replace("://", ":" + _JOIN + "//").replace("@", "@" + _JOIN)
    return re.sub(r"(?i)(www)\.", "\\1" + _JOIN + ".", flat)


def safe_name(text: object, max_chars: int = 80) -> str:
    """A model name from a config.json or a file name, kept to characters that cannot form markdown
    (letters, digits, spaces and ``- _ . + ( )``), "www." defused, cut to ``max_chars``.

    Pages print model names inside markdown (titles, captions, messages); a name reduced this way
    shows as typed everywhere, charts included. Falls back to "custom model" when nothing is left.
    """
    kept = re.sub(r"[^\w \-.+()]", "", " ".join(str(text).split()), flags=re.ASCII)
    kept = re.sub(r"(?i)www\.", "www-", kept).strip(" -+.")
    return (kept[:max_chars].rstrip() or "custom model")


def sanitize_query_params() -> list[str]:
    """Drop URL parameters no widget can take, before any widget reads the URL (called first by app.py).

    Dropped: values that read as a number but not a finite one ("inf", "-inf", "Infinity", "nan",
    "1e400", a 400-digit integer; Streamlit 1.67 converts an integer input's URL value to int before
    its range check, and these raise), and values longer than ``MAX_QUERY_VALUE_CHARS``. The widget
    then starts from its default.

    A widget seeds itself on its first run from the URL as the session opened (Streamlit keeps that
    copy apart from ``st.query_params``), so the parameter is removed from both.

    Returns:
        the names of the dropped parameters (already cut to 40 characters).
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    dropped = []
    with get_session_state().query_params() as qp:
        initial = getattr(qp, "_initial_query_params", None)
        initial = initial if isinstance(initial, dict) else {}
        for key in set(qp) | set(initial):
            values = list(qp.get_all(key)) + list(initial.get(key) or [])
            if any(_bad_query_value(str(v)) for v in values):
                if key in qp:
                    del qp[key]
                initial.pop(key, None)
                dropped.append(str(key)[:40])
    return sorted(dropped)


def link_params_at_open() -> dict[str, list[str]] | None:
    """The URL's parameters (after ``sanitize_query_params``) on a session's first run, else None.

    ``report_ignored_link_params`` compares them with what the bound widgets took, after the page ran.
    """
    if st.session_state.get("_link_checked"):
        return None
    st.session_state["_link_checked"] = True
    return {str(k): list(st.query_params.get_all(k)) for k in st.query_params}


def ignored_link_params(opened: dict[str, list[str]] | None) -> list[str]:
    """``name=value`` for each parameter of the opening link that a URL-bound widget refused (the value is
    not one of a select widget's options, not a number for a number widget, or outside a slider's or number
    input's range): Streamlit then starts the
    widget from its default and drops the parameter, silently. A value equal to the default is dropped
    too, and is not reported; nor are parameters no widget reads.

    Uses the widgets' registration metadata (Streamlit 1.67's session state: ``formatted_options``,
    ``value_type``, the deserializer), the checks Streamlit's ``_seed_widget_from_url`` applies.
    """
    if not opened:
        return []
    from streamlit.runtime.state.query_params import parse_url_param
    from streamlit.runtime.state.session_state_proxy import get_session_state

    state = get_session_state()._state
    refused = []
    for key, values in opened.items():
        if key in st.query_params or not values or key in ("model", "gpu"):
            continue  # kept (taken as given, or corrected) by its widget, or read by no widget; an unknown
            # model or GPU has a message of its own (the sidebar names it)
        values = [st.session_state.get("_url_rewrites", {}).get(key, values[-1])]  # accept_url_values' form
        widget_id = state._key_id_mapper.get_id_from_key(key, None)
        meta = state._new_widget_state.widget_metadata.get(widget_id) if widget_id else None
        if meta is None or getattr(meta, "bind", None) != "query-params":
            continue
        try:
            parsed = parse_url_param(values[0], meta.value_type)
            meta.deserializer(parsed)
            options = meta.formatted_options  # radio, selectbox; a select slider keeps its labels in its serde
            if options is None:
                labels = getattr(getattr(meta.deserializer, "__self__", None), "formatted_option_to_index", None)
                options = list(labels) if isinstance(labels, dict) else None
            ok = options is None or (
                all(v in options for v in parsed) if isinstance(parsed, list) else
                not isinstance(parsed, str) or parsed in options)
            serde = getattr(meta.deserializer, "__self__", None)  # a slider's or number input's range
            lo, hi = getattr(serde, "min_value", None), getattr(serde, "max_value", None)
            numbers = [v for v in (parsed if isinstance(parsed, list) else [parsed])
                       if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if ok and isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                ok = all(lo <= v <= hi for v in numbers)
        except Exception:  # noqa: BLE001 - a value the widget cannot parse is a refused value
            ok = False
        if not ok:
            refused.append(f"{key[:40]}={md_escape(values[-1][:40])}")
    return refused


def accept_url_values(key: str, options, format_func=str) -> None:
    """Let a link name an option of the URL-bound widget ``key`` by its plain value as well as by its label.

    A bound select slider, selectbox or radio reads its URL parameter as the label it shows (``format_func``
    applied: "16K" for 16384, "16.0" for 16.0, "MHA" for "mha") and silently drops anything else, so
    ``/kv_cache?kv_ctx=16384`` opened on the default. Called just before the widget: a value that names an
    option as a plain number equal to it ("16384", "16", "1.6e4"), as the option itself ("mha"), or as its
    label in other letter case, is rewritten to that option's label, the one form the app writes.
    Anything else is left for the widget (which ignores it).
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    labels = [str(format_func(o)) for o in options]

    def label_of(value: str) -> str | None:
        if value in labels:
            return None
        for option, label in zip(options, labels):
            if value == str(option) or value.casefold() == label.casefold():
                return label
        try:
            number = float(value.replace(",", "").replace("_", ""))
        except ValueError:
            return None
        for option, label in zip(options, labels):
            if isinstance(option, (int, float, np.integer, np.floating)) and not isinstance(option, bool) \
                    and float(option) == number:
                return label
        return None

    with get_session_state().query_params() as qp:
        if key in qp:
            label = label_of(str(qp[key]))
            if label is not None:
                qp[key] = label
                st.session_state.setdefault("_url_rewrites", {})[key] = label  # taken (ignored_link_params)
        initial = getattr(qp, "_initial_query_params", None)
        if isinstance(initial, dict) and initial.get(key):
            values = [label_of(str(v)) or str(v) for v in initial[key]]
            initial[key] = values


def _bad_query_value(value: str) -> bool:
    if len(value) > MAX_QUERY_VALUE_CHARS:
        return True
    try:
        number = float(value.strip())
    except (ValueError, OverflowError):
        return False
    return not np.isfinite(number)


# -- formatting ---------------------------------------------------------------------------------
# fmt_number, fmt_seconds and fmt_usd: app_pages.formats (pure, shared with app_pages.equations).
def fmt_bytes(n_bytes: float, unit: str = "GB") -> str:
    """Bytes with an explicit unit: "GB" (1e9, with MB/kB below 1 GB and TB above 1,000 GB), or
    "GiB" (2**30, with MiB/KiB/TiB). The unit is always printed; "n/a" for NaN or an infinity."""
    n = float(n_bytes)
    if not np.isfinite(n):
        return "n/a"
    if unit == "GiB":
        steps = [(2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")]
    else:
        steps = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
    for size, name in steps:
        if abs(n) >= size:
            return f"{n / size:,.2f} {name}"
    return f"{n:,.0f} B"


# -- output helpers -------------------------------------------------------------------------------
def fmt_tick(v: float) -> str:
    """A tick label that carries its magnitude: 0.4, 2, 50, 1k, 20k, 3M, 1e+09 (k = 10^3, M = 10^6)."""
    if abs(v) >= 1e9:
        return f"{v:.0e}"
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= size:
            return f"{v / size:g}{suffix}"
    return f"{v:.3g}"


def log_ticks(lo: float, hi: float, prefix: str = "", suffix: str = "") -> tuple[list[float], list[str]]:
    """Tick values and full labels for a log axis spanning [lo, hi] (both > 0).

    Up to two decades: 1-2-5 in every decade; up to four: 1-3; beyond: powers of ten only, every
    other one past six decades (denser when that leaves fewer than three ticks). Each label is the whole number ("$0.5", "20 ms"), not
    Plotly's bare minor-tick digit ("5").

    Raises:
        ValueError: lo or hi not positive, or lo > hi.
    """
    if not (lo > 0 and hi > 0 and lo <= hi):
        raise ValueError(f"log_ticks needs 0 < lo <= hi, got lo={lo}, hi={hi}")
    decades = np.log10(hi / lo)
    first, last = int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi)))
    choices = [(1,), (1, 3), (1, 2, 5), tuple(range(1, 10))]
    start = 0 if decades > 4 else 1 if decades > 2 else 2
    for mantissas in choices[start:]:  # the sparsest set that still gives three ticks
        stride = max(1, int(np.ceil(decades / 6))) if mantissas == (1,) else 1  # at most ~7 decade ticks
        vals = [float(f"{m * 10.0 ** e:.6g}") for e in range(first, last + 1, stride) for m in mantissas]
        vals = [v for v in vals if lo / 1.001 <= v <= hi * 1.001]
        if len(vals) >= 3:
            break
    vals = vals or [float(f"{lo:.2g}"), float(f"{hi:.2g}")]
    return vals, [f"{prefix}{fmt_tick(v)}{suffix}" for v in vals]


def _label_log_axes(fig: go.Figure) -> None:
    # Every log axis without its own tickvals gets full 1-2-5 labels over the range of its data.
    for name in [k for k in fig.layout.to_plotly_json() if re.fullmatch(r"[xy]axis\d*", k)] or ["xaxis", "yaxis"]:
        axis = fig.layout[name]
        if axis.type != "log" or axis.tickvals is not None:
            continue
        ref, letter = name.replace("axis", ""), name[0]
        values: list[float] = []
        for trace in fig.data:
            if (getattr(trace, f"{letter}axis", None) or letter) != ref:
                continue
            data = getattr(trace, letter, None)
            if data is None:
                continue
            arr = pd.to_numeric(pd.Series(np.asarray(data).ravel()), errors="coerce").to_numpy(dtype=float)
            values.extend(arr[np.isfinite(arr) & (arr > 0)].tolist())
        if axis.range is not None and None not in axis.range:
            lo, hi = 10.0 ** min(axis.range), 10.0 ** max(axis.range)
        elif values:  # Plotly pads the autorange around markers: label a little beyond the data
            lo, hi = min(values) / 1.25, max(values) * 1.25
        else:
            continue
        vals, text = log_ticks(lo, hi, axis.tickprefix or "", axis.ticksuffix or "")
        axis.update(tickmode="array", tickvals=vals, ticktext=text, tickprefix=None, ticksuffix=None)


def add_marker_line(fig: go.Figure, x: float, name: str, color: str, dash: str = "dot", **panel) -> None:
    """A full-height vertical line at ``x`` (data units) named in the legend rather than on the plot.

    Used instead of an annotated line where the label would cross other lines or labels: the legend
    never overlaps the plot. The line is a layout shape; a legend-only trace carries its name and style.
    ``panel``: in a figure of several panels, ``row`` and ``col`` of the one it belongs to, and the
    ``legend`` ("legend2", ...) that names it.
    """
    where = {k: v for k, v in panel.items() if k in ("row", "col")}
    fig.add_vline(x=x, line_dash=dash, line_color=color, line_width=2, **where)
    fig.add_scatter(x=[None], y=[None], mode="lines", name=name, line=dict(color=color, dash=dash, width=2),
                    hoverinfo="skip", **panel)


def style_figure(fig: go.Figure) -> go.Figure:
    """Apply the house layout to ``fig`` in place and return it (readable on a projector, hover on every point).

    Log axes get tick labels that carry their magnitude (``log_ticks``) unless the page set tickvals.
    ``Figure()`` recipes arrive styled from the figure cache; ``show_chart`` styles the others.
    """
    _label_log_axes(fig)
    top = max(fig.layout.margin.t or 0, 50 if fig.layout.title.text else 20)  # more when the figure asks
    fig.update_layout(
        height=fig.layout.height or 420, margin=dict(l=10, r=10, t=top, b=10),
        font=dict(size=14), hovermode=fig.layout.hovermode or "closest",
    )
    if fig.layout.legend.orientation is None:  # a figure that placed its legend itself keeps it
        fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0))
    fig._house_styled = True
    return fig


def fragment(func):
    """Decorator: ``func`` draws a part of a page that its own widgets rerun alone (``st.fragment``).

    How a page stays fast (measured with bench/browser_speed.py --attribute; figures on the 2-core machine):

    - A full rerun runs app.py (the sidebar, the navigation) and the whole page, sends every element again
      and has the browser reconcile all of them; a slider inside a fragment reruns only the fragment and
      sends only its elements. Put a page's controls and everything they change in one ``fragment``.
    - Anything that changes the sidebar's widgets (``experiment_buttons``, the model, the GPU) stays
      outside: a widget inside a fragment reruns only the fragment, so the sidebar would not redraw.
      Sidebar changes rerun the whole page, fragments included.
    - Read the sidebar's choices with ``selection()`` inside the fragment (a fragment rerun does not run
      app.py; ``selection()`` returns the last full run's choices). Inside a fragment, end early with
      ``return`` rather than ``st.stop()``.
    - A Plotly chart whose figure is byte-for-byte the same as last run costs the browser nothing (it is not
      sent again); a changed one is redrawn in place (``show_chart``: ``Plotly.react``, 10-24 ms of the
      browser's main thread per chart on this machine). So a chart should not change when a control only
      moves a marker on it, and a chart that does not depend on the fragment's controls belongs outside
      the fragment.
    - Server time counts twice on a shared machine (the script and the browser compete for the cores): draw
      charts through ``Figure()`` (built, styled and serialised once per distinct figure) and call calc's
      sweeps and searches through ``cached_call(func, *args)`` (memoised across sessions on the arguments).
    """
    return st.fragment(func)


def Figure(*args, **kwargs) -> caching.FigureRecipe:  # noqa: N802 - stands in for go.Figure
    """A figure for ``show_chart``, written like ``go.Figure()`` but built once per distinct content and
    cached across sessions (``caching.FigureRecipe``): building a Plotly figure costs more than sending it."""
    return caching.FigureRecipe(*args, **kwargs)


#: Plotly's config for every chart: no Plotly logo and no "Share chart" button (plotly.js's default
#: ``showSendToCloud``: it offers to upload the figure to Plotly's cloud, and nothing here contacts another host).
CHART_CONFIG = {"displaylogo": False, "showSendToCloud": False, "showEditInChartStudio": False}


def metric_row(n: int, per_row: int | None = None) -> MetricRow:
    """``n`` metric cells drawn as one element when the ``with`` block ends: ``with common.metric_row(4) as m:
    m[0].metric(label, value, delta=..., help=...)``. Same arguments and look as st.metric in st.columns, one
    element instead of 2n + 1 (see app_pages/metric_row.py for the measured difference). Raises ValueError for
    ``n`` < 1."""
    return MetricRow(n, per_row)


def show_chart(fig: go.Figure | caching.FigureRecipe, key: str) -> None:
    """Draw a Plotly figure, or a ``Figure()`` recipe, with the house layout (``style_figure``).

    The chart is ``inplace_chart``'s element: it keeps its identity (``key``) across reruns and a changed
    figure is drawn over the old one with ``Plotly.react``. With the environment variable
    ``EXPLORER_CHARTS=plotly_chart`` the app uses ``st.plotly_chart`` instead (bench/browser_speed.py
    --charts compares the two), as it does where plotly.js cannot be put in ``static/`` (a read-only install).
    """
    if isinstance(fig, caching.FigureRecipe):
        fig = caching.build_figure(fig)
    elif not getattr(fig, "_house_styled", False):
        style_figure(fig)
    if classroom.presenting():  # on a copy: the cached figure is shared with every other session
        fig = go.Figure(fig)
        classroom.style_figure(fig)
    if os.environ.get("EXPLORER_CHARTS") == "plotly_chart" or not inplace_chart.available():
        st.plotly_chart(fig, key=key, width="stretch", config=CHART_CONFIG)
        return
    inplace_chart.show(inplace_chart.figure_json(fig, CHART_CONFIG), key=key, height_px=int(fig.layout.height or 420))


def _is_money(column: str) -> bool:
    return "usd" in column.lower()


def _is_per_unit(column: str) -> bool:
    c = column.lower()
    return "per_" in c or "mtok" in c or "million" in c


def tidy_for_csv(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the float noise taken out of its numbers, for a CSV a person reads.

    Money columns (a name with "usd"): totals to the cent; prices per unit (a name with "per_", "mtok" or
    "million", e.g. ``per_generation_usd``) to a millionth of a dollar. Byte columns (a name with
    "bytes") to whole bytes. Other floats to 6 significant digits. Text, integers and booleans unchanged;
    NaN stays empty.
    """
    out = df.copy()
    for col in out.columns:
        values = out[col]
        if not pd.api.types.is_float_dtype(values):
            continue
        name = str(col)
        if _is_money(name):
            out[col] = values.round(6 if _is_per_unit(name) else 2)
        elif "bytes" in name.lower():
            out[col] = values.round().astype("Int64")
        else:
            out[col] = values.map(lambda v: float(f"{v:.6g}") if v == v else v)
    return out


def app_version() -> str:
    """The app's version: ``calc.__version__``, with the git commit when run from a checkout."""
    return _app_version()


@st.cache_resource(show_spinner=False)
def _app_version() -> str:
    import subprocess
    from pathlib import Path
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                                capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return calc.__version__ + (f"+g{commit}" if commit else "")


def csv_with_inputs(df: pd.DataFrame, inputs: dict[str, object]) -> str:
    """``df`` as CSV text (``tidy_for_csv``, index left out), after one ``# name: value`` line per input.

    pandas reads it back with ``pd.read_csv(path, comment="#")``.
    """
    head = "".join(f"# {k}: {str(v).replace(chr(10), ' ')}\n" for k, v in inputs.items())
    return head + tidy_for_csv(df).to_csv(index=False)


def csv_inputs(inputs: dict[str, object] | None = None) -> dict[str, object]:
    """What produced a download: the app and its version, the time (UTC), the page's link (its query
    string carries every input that differs from its default), the sidebar's model, GPU, dtypes and
    price, then the page's own ``inputs`` (e.g. context, batch)."""
    import datetime
    sel = selection()
    query = "&".join(f"{k}={urllib.parse.quote(str(v), safe=',=:./')}" for k, v in st.query_params.items())
    try:
        path = urllib.parse.urlsplit(st.context.url or "").path
    except Exception:  # no browser behind this run (tests): the path is not known
        path = ""
    return {"app": f"LLM Inference Explorer {app_version()}",
            "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
            "link": f"{path or '/'}{'?' + query if query else ''}",
            "model": f"{sel.model_id} ({sel.model.name})", "gpu": f"{sel.gpu_id} ({sel.accelerator.name})",
            "weight_dtype": sel.weight_dtype, "kv_dtype": sel.kv_dtype, "embedding": getattr(sel, "embedding", ""),
            "prefill_logits": getattr(sel, "logits", ""),
            "price_per_gpu_hour_usd": f"{sel.price_per_hour_usd:.2f}", **(inputs or {})}


def show_equations(rows: list[tuple[str, str]], label: str = "The equations behind these numbers",
                   key: str = "equations") -> None:
    """The equation of each headline number, filled in with the numbers on screen (``app_pages.equations``
    builds the rows: ``(what, latex)``), in an expander under the metrics; open in presenter mode.

    The equations are drawn only while the expander is open (opening or closing it reruns the page), so a
    slider move with the expander closed typesets no LaTeX. ``key`` names the expander's open state
    (session state); a page with two such expanders gives the second its own key.
    """
    box = st.expander(label, expanded=classroom.presenting(), icon=":material/function:", key=key,
                      on_change="rerun")
    if box.open:
        with box:
            for what, latex in rows:
                st.caption(what)
                st.latex(break_lines(latex))


def download_csv(df: pd.DataFrame, filename: str, key: str, inputs: dict[str, object] | None = None) -> None:
    """A button that downloads ``df`` as CSV: ``csv_with_inputs`` with the inputs of ``csv_inputs(inputs)``
    in the first lines, money to the cent and bytes whole (``tidy_for_csv``). The file is written when the
    button is clicked, not on every run. The button names its file, so that buttons side by side differ."""
    header = csv_inputs(inputs)
    st.download_button(f"Download {filename}", lambda: csv_with_inputs(df, header).encode("utf-8"), file_name=filename,
                       mime="text/csv", key=key, help="The lines starting with # list the inputs that produced "
                       "the table; pandas reads it with pd.read_csv(path, comment='#').")


def experiment_buttons(experiments: dict[str, dict[str, object]], key: str) -> None:
    """One button per experiment; a click sets ``st.session_state[k] = v`` for each pair.

    The state is set in the button's callback, which runs before the widgets of the next run, so the
    sliders move to the experiment's values.
    """
    cols = st.columns(min(len(experiments), 4) or 1)
    for i, (label, state) in enumerate(experiments.items()):
        cols[i % len(cols)].button(label, key=f"{key}_{i}", on_click=_apply_experiment, args=(dict(state),),
                                   width="stretch")


def _apply_experiment(state: dict[str, object]) -> None:
    """An experiment button's callback: set its widget values; an experiment that changes the GPU without
    naming a price moves the price as the GPU menu does (the list price, unless the user typed one), so the
    page and its link show the same dollars."""
    gpu_before = st.session_state.get("gpu")
    st.session_state.update(state)
    if "gpu" in state and "price" not in state and state["gpu"] != gpu_before:
        _on_gpu_change()


def capacity_label(accelerator: calc.Accelerator, memory: str, gpu_memory_utilization: float,
                   runtime_reserve_bytes: float = 0.0) -> str:
    """ "data-sheet capacity, 80.00 GB" and the like: the convention a fit verdict follows."""
    cap = fmt_bytes(accelerator.memory_bytes)
    if memory == "driver":
        return (f"the driver's total, {cap}" if accelerator.driver_memory_bytes
                else f"the data sheet's {cap} (no driver figure on file for this accelerator)")
    if memory == "engine":
        less = f" less a {fmt_bytes(runtime_reserve_bytes)} runtime reserve" if runtime_reserve_bytes else ""
        return f"an engine's share, {gpu_memory_utilization:g} x the driver's total{less} = {cap}"
    return f"the data-sheet capacity, {cap}"


def napkin_note(sel: Selection, step, batch: int, context_len: int) -> str | None:
    """A sentence giving the course's napkin step beside ``step`` (the gathered one), or None when
    they agree (tied embeddings, or the sidebar already set to the napkin)."""
    if sel.embedding != "gather" or not calc.memory.input_embedding_params(sel.model):
        return None
    napkin = calc.decode_step_time(sel.model, sel.accelerator, batch, context_len, sel.weight_dtype, sel.kv_dtype,
                                   embedding="table")
    if napkin.total_s == step.total_s:
        return None
    table = calc.memory.input_embedding_params(sel.model) * calc.dtype_bytes(sel.weight_dtype)
    what = "input embedding table"
    if sel.model.learned_positions:
        what = ("learned position table" if sel.model.tie_word_embeddings
                else "input embedding and learned position tables")
    return (f"Course napkin: {fmt_seconds(napkin.total_s)} ({fmt_number(napkin.tokens_per_s, 'tok/s')}). It reads every "
            f"parameter each step, the {fmt_bytes(table)} {what} included; a step only looks up "
            f"{batch:,} of its rows, which is what {fmt_seconds(step.total_s)} counts. Switch in the sidebar.")


def show_error(exc: Exception) -> None:
    """A calc ValueError shown as a message on the page (as plain text: it may quote a config's values)."""
    st.error(md_escape(exc))


# -- an edited table in the URL ---------------------------------------------------------------------
def _cell_text(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return f"{float(v):.10g}"
    return str(v)


def _same_cell(a, b) -> bool:
    return _cell_text(a) == _cell_text(b)


def _deleted_rows(base: pd.DataFrame, edited: pd.DataFrame, short: dict[str, str]) -> list[int]:
    """0-based rows of ``base`` that ``edited`` dropped: those whose first column (a row's name) no row of
    ``edited`` matches in order (difflib's longest matching blocks); none when ``edited`` is not shorter."""
    import difflib
    if len(edited) >= len(base):
        return []
    key = [c for c in short if c in base and c in edited][:1]

    def rows(df):
        return [tuple(_cell_text(df[c].iloc[i]) for c in key) for i in range(len(df))]

    old, new = rows(base), rows(edited)
    kept = set()
    for block in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_matching_blocks():
        kept.update(range(block.a, block.a + block.size))
    dropped = [i for i in range(len(base)) if i not in kept]
    return dropped[:len(base) - len(edited)]


def encode_table_edits(base: pd.DataFrame, edited: pd.DataFrame, short: dict[str, str]) -> str:
    """The cells of ``edited`` that differ from ``base``, as one URL parameter value ("" when none).

    Items are joined by commas: ``del=4`` drops row 4 of ``base`` (rows whose cells reappear unchanged
    in ``edited`` are kept); then ``rows=5`` says the table has 5 rows (when that differs), and ``out1=30``
    sets column "out" (a short name from ``short``, column -> short name) of row 1 of the table after the
    deletions. Rows are numbered from 1. Text is percent-quoted where it holds a comma, an equals sign or
    a percent sign; numbers are written with 10 significant digits.
    ``apply_table_edits(base, encode_table_edits(base, edited, short), short)`` gives ``edited`` back
    (in ``short``'s columns).
    """
    dropped = _deleted_rows(base, edited, short)
    items = [f"del={i + 1}" for i in dropped]
    base = base.drop(index=base.index[dropped]).reset_index(drop=True) if dropped else base
    if len(edited) != len(base):
        items.append(f"rows={len(edited)}")
    for i in range(len(edited)):
        for col, name in short.items():
            new = edited[col].iloc[i] if col in edited else None
            old = base[col].iloc[i] if i < len(base) else None
            if i >= len(base) or not _same_cell(new, old):
                text = _cell_text(new)
                if text or i < len(base):
                    items.append(f"{name}{i + 1}={urllib.parse.quote(text, safe=' ./:()-_+$')}")
    return ",".join(items)


def apply_table_edits(base: pd.DataFrame, text: str, short: dict[str, str]) -> pd.DataFrame:
    """``base`` with the edits of ``encode_table_edits``'s text applied (a new frame, same columns).

    Numeric columns of ``base`` take numbers; other columns take text. New rows start empty (None).

    Raises:
        ValueError: an item that is not ``<column><row>=<value>``, ``rows=<n>`` or ``del=<row>``, an unknown
            column, a row beyond the table or beyond 100, or a value that is not a number in a numeric column.
    """
    out = base.copy().reset_index(drop=True).astype(object)
    if not text:
        return out
    by_short = {v: k for k, v in short.items()}
    items = [s for s in text.split(",") if s]
    dropped = []
    for item in items:
        if item.startswith("del="):
            n = item[4:]
            if not n.isdigit() or not 1 <= int(n) <= len(out):
                raise ValueError(f"'{item}' must name a row of the {len(out)}-row table")
            dropped.append(int(n) - 1)
    if dropped:
        out = out.drop(index=sorted(set(dropped))).reset_index(drop=True)
    sized = [s for s in items if s.startswith("rows=")]
    if sized:
        n = sized[-1][5:]
        if not n.isdigit() or not 0 <= int(n) <= 100:
            raise ValueError(f"'{sized[-1]}' must give a number of rows between 0 and 100")
        n = int(n)
        out = out.iloc[:n] if n <= len(out) else pd.concat(
            [out, pd.DataFrame([{c: None for c in out.columns}] * (n - len(out)))], ignore_index=True)
    for item in items:
        if item.startswith(("rows=", "del=")):
            continue
        m = re.fullmatch(r"([a-z_]+)(\d+)=(.*)", item, flags=re.S)
        if m is None or m.group(1) not in by_short:
            raise ValueError(f"'{item}' is not a table edit (expected one of "
                             f"{', '.join(short.values())} with a row number, e.g. {next(iter(short.values()))}1=...)")
        col, row, value = by_short[m.group(1)], int(m.group(2)), urllib.parse.unquote(m.group(3))
        if not 1 <= row <= len(out):
            raise ValueError(f"'{item}' names row {row}, but the table has {len(out)} rows")
        if pd.api.types.is_numeric_dtype(base[col]):
            try:
                value = float(value) if value else None
            except ValueError:
                raise ValueError(f"'{item}': {col} must be a number, got {value!r}") from None
        out.at[row - 1, col] = value if value != "" else None
    return out.infer_objects()


def utilisation_inputs(columns) -> "calc.efficiency.Utilisation":
    """Two inputs, MBU and MFU in percent (keys "mbu", "mfu", in the URL), in two of ``columns``; the
    estimate beside the roofline bound uses them (``calc.efficiency.estimate_step``). Defaults: the
    measurements cited in ``calc/data/utilisation.json``."""
    d = calc.efficiency.default_utilisation()
    mbu = columns[0].number_input(
        "MBU, bandwidth (%)", 1.0, 100.0, round(100 * d.memory_bandwidth, 1), step=1.0, format="%.0f",
        key="mbu", bind="query-params", help="Share of the spec bandwidth a real engine reaches in decode. "
        "Default: gpt-fast (torch.compile), Llama-2-7B and Llama-3.1-8B at batch 1 on an A100, 69%; eager "
        "PyTorch reaches about 17%, sub-1B models far less.")
    mfu = columns[1].number_input(
        "MFU, compute (%)", 1.0, 100.0, round(100 * d.compute, 1), step=1.0, format="%.0f",
        key="mfu", bind="query-params", help="Share of the spec dense FLOP/s a matmul reaches. Default: the best "
        "bf16 matmul measured on an H100 SXM, 80% (A100 87%, MI300X 51%).")
    return calc.efficiency.Utilisation(mbu / 100.0, mfu / 100.0, "the page's inputs")


def estimate_help() -> str:
    """The sentence that says what an estimate beside a bound is (default utilisations, their source)."""
    u = calc.efficiency.default_utilisation()
    return (f"Bound: the roofline lower bound. Estimate: its parts divided by a bandwidth utilisation of "
            f"{u.memory_bandwidth:.0%} and a compute utilisation of {u.compute:.0%}, published measurements "
            "(gpt-fast, 7B-8B models at batch 1; the best H100 bf16 matmul). The roofline page lets you change them.")
