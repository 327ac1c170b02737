"""Classroom helpers: presenter mode (charts and metrics readable from the back row) and the lecture story.

Presenter mode is a toggle in the shared sidebar and ``present=1`` in the URL: chart text at least
16 px in the theme's text colour, thicker lines, larger legends, metrics that wrap instead of being
cut with an ellipsis, the sidebar collapsed on load.

The story (``story=N`` in the URL, N from 1) is an ordered walk through the pages, from "to emit one
token the model reads all its weights" to the monthly bill: each step is a page in a given state and
one sentence to say; a banner above the page has the previous and next links. The numbers quoted in a
sentence are those of the step's own state (Llama-3-8B on an H100 SXM unless it says otherwise), after
the inference course, week 11; CS336 lecture 10, Inference; and chapter 9, LLM inference.

Not a page: app.py and ui.sidebar, ui.charts and ui.widgets call it; it imports only ui.html_table, ui.metric_row and
ui.formats.
"""
from __future__ import annotations

from functools import lru_cache

import plotly.graph_objects as go
import streamlit as st

import calc
from ui import html_table, metric_row, number_ranges
from ui.formats import fmt_bytes, fmt_number, fmt_seconds, fmt_usd

PRESENT_KEY = "present_mode"
#: The sidebar's state shared by most steps: Llama-3-8B on an H100 SXM at the course's $3 per hour.
#: emb="table" is the course's napkin convention (every parameter read each step), so the numbers quoted match.
_BASE = {"model": "llama-3-8b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "price": 3.0, "emb": "table"}

#: The lecture: (page file, state to set, the sentence to say). State keys are the pages' widget keys.
STORY = [
    ("app_pages/home.py", {**_BASE, "h_ctx": 8192, "h_b": 1},
     "To emit one token the model reads all its weights and its cache: Llama-3-8B's {weights} and one 8K "
     "sequence's {kv} at {bandwidth} take {tpot}, so one user gets about {tok_s} tokens per second, however "
     "fast the GPU multiplies."),
    ("app_pages/roofline.py", {**_BASE, "rf_ctx": 8192, "rf_b": 1},
     "At B = 1 decode is memory-bound: the step is the weight read plus one sequence's cache; the arithmetic "
     "is a sliver of it."),
    ("app_pages/roofline.py", {**_BASE, "rf_ctx": 8192, "rf_b": 32},
     "Serve 32 users with the same weight read: the step grows {step_x}, the output {out_x}, to {tok_s} tokens "
     "per second."),
    ("app_pages/kv_cache.py", {**_BASE, "kv_layout": "model", "kv_win": "model", "kv_ctx": 8192, "kv_b": 1},
     "The price is memory: each token keeps a key and a value in every layer, {kv_tok_binary}, so one 8K sequence "
     "holds {kv_seq}."),
    ("app_pages/kv_cache.py", {**_BASE, "model": "llama-3.1-8b", "kv_layout": "model", "kv_win": "model",
                               "kv_ctx": 131072, "kv_b": 1},
     "At 128K tokens (Llama-3.1-8B: Llama-3-8B's shapes, trained for 128K) one sequence's cache ({kv_seq}) "
     "outweighs the weights ({weights})."),
    ("app_pages/kv_cache.py", {**_BASE, "model": "gpt-3-175b", "kv_layout": "model", "kv_win": "model",
                               "kv_ctx": 8192, "kv_b": 1},
     "GPT-3-style MHA keeps 96 KV heads per layer, one per query head: {kv_tok} per token, {kv_seq} for one 8K "
     "sequence. This bill is why GQA became standard."),
    ("app_pages/kv_cache.py", {**_BASE, "model": "deepseek-v3", "kv_layout": "model", "kv_win": "model",
                               "kv_ctx": 131072, "kv_b": 1},
     "MLA stores a 576-number latent per token and layer instead of K and V: DeepSeek-V3 keeps {kv_tok} per "
     "token, {kv_seq} for a 128K sequence, a cache an order of magnitude smaller than its heads would need."),
    ("app_pages/quantization.py", {**_BASE, "q_model": "sidebar", "q_apply": "both", "q_ctx": 8192, "q_b": 32,
                                   "q_res": 0.0},
     "Fewer bytes per number: int8 weights and cache halve both reads, and {memory} holds {int8_batch} sequences "
     "of 8K instead of {bf16_batch}."),
    ("app_pages/latency_cost.py", {**_BASE, "lc_ctx": 8192, "lc_tpot": 10.0},
     "Each batch size is a pair (TPOT, price): cheaper means slower. An agent that needs TPOT under 10 ms "
     "gets B = {chosen_b} at {usd} per million tokens."),
    ("app_pages/batching.py", {**_BASE},
     "Real traffic is ragged: continuous batching refills a finished slot at the next step, and "
     "PagedAttention hands out the cache in blocks instead of max-length slabs."),
    ("app_pages/batching.py", {**_BASE, "bt_pn": 20, "bt_pl": 1000, "bt_pu": 0, "bt_hit": 1.0},
     "Twenty chats share a 1,000-token system prompt: {without} of cache without prefix caching, {with_} with "
     "it."),
    ("app_pages/speculative.py", {"sd_a": 0.8, "sd_g": 4},
     "Speculative decoding: a draft proposes γ tokens and the target checks them in one pass; the samples "
     "are exactly the target's, and each pass yields several tokens."),
    ("app_pages/monthly_bill.py", {"mb_dau": 100_000, "mb_hit": 70},
     "The monthly bill: 100,000 daily users, 70% prompt-cache hits, and the model tier decides an order of "
     "magnitude of cost."),
]




def _decode_step(state: dict, batch_key: str, ctx_key: str, batch: int | None = None) -> "calc.StepTime":
    """The decode step a page shows in a step's state: the call the home and roofline pages make for their
    "Decode step (TPOT)" and "Throughput" metrics (``calc.decode_step_time`` with the sidebar's model, GPU,
    dtypes and input-embedding convention, and the page's batch and context)."""
    return calc.decode_step_time(calc.get_model(state["model"]), calc.get_accelerator(state["gpu"]),
                                 state[batch_key] if batch is None else batch, state[ctx_key], state["wq"],
                                 state["kvq"], embedding=state["emb"])


def _home_figures(state: dict) -> dict[str, str]:
    """Step 1's figures (home page): the weight and cache reads, their time and the tokens per second."""
    step = _decode_step(state, "h_b", "h_ctx")
    bandwidth = calc.get_accelerator(state["gpu"]).bandwidth_bytes_per_s
    return {"weights": fmt_bytes(step.weights_s * bandwidth), "kv": fmt_bytes(step.kv_s * bandwidth),
            "bandwidth": f"{bandwidth / 1e12:,.2f} TB/s", "tpot": fmt_seconds(step.total_s),
            "tok_s": fmt_number(step.tokens_per_s)}


def _batched_figures(state: dict) -> dict[str, str]:
    """Step 3's figures (roofline page at the step's B against B = 1): how much the step and the output grow."""
    one, many = _decode_step(state, "rf_b", "rf_ctx", batch=1), _decode_step(state, "rf_b", "rf_ctx")
    return {"step_x": f"{many.total_s / one.total_s:,.0f}x", "out_x": f"{many.tokens_per_s / one.tokens_per_s:,.0f}x",
            "tok_s": fmt_number(many.tokens_per_s)}


def _cache_figures(state: dict) -> dict[str, str]:
    """Step 5's figures (KV cache page, the model's own attention layout, B = 1): one sequence's cache and the
    weights, by the calls behind the page's "KV per sequence" and "Weights" metrics."""
    model, acc = calc.get_model(state["model"]), calc.get_accelerator(state["gpu"])
    budget = calc.memory_budget(model, acc, state["kv_ctx"], state["kv_b"], state["wq"], state["kvq"])
    return {"kv_seq": fmt_bytes(calc.kv_cache_bytes(model, state["kv_ctx"], 1, state["kvq"])),
            "weights": fmt_bytes(budget.weights_bytes)}


def _kv_figures(state: dict) -> dict[str, str]:
    """Steps 4, 6 and 7's figures (KV cache page, B = 1): the cache per token as the page's "KV per token"
    metric writes it (bytes, and in binary units as its help does) and one sequence's, "KV per sequence"."""
    model = calc.get_model(state["model"])
    per_token = calc.kv_bytes_per_token(model, state["kvq"])
    return {"kv_tok": f"{per_token:,.0f} B", "kv_tok_binary": fmt_bytes(per_token, "GiB"),
            "kv_seq": fmt_bytes(calc.kv_cache_bytes(model, state["kv_ctx"], 1, state["kvq"]))}


def _quantized_figures(state: dict) -> dict[str, str]:
    """Step 8's figures (quantization page, weights and cache quantized): the GPU's memory (as GPUs are named,
    "80 GB") and the most 8K
    sequences it holds in int8 and in bf16, the "max batch" of the page's int8 and bf16 metrics."""
    model, acc = calc.get_model(state["model"]), calc.get_accelerator(state["gpu"])
    batch = {dt: calc.max_batch(model, acc, state["q_ctx"], dt, dt, reserve_bytes=state["q_res"] * 1e9)
             for dt in ("int8", "bf16")}
    return {"memory": f"{acc.memory_bytes / 1e9:,.0f} GB", "int8_batch": f"{batch['int8']:,}",
            "bf16_batch": f"{batch['bf16']:,}"}


def _agent_figures(state: dict) -> dict[str, str]:
    """Step 9's figures (latency/cost page): the largest batch within the agent's TPOT and its USD per 1M
    output tokens, the page's "Chosen batch B" and "USD per 1M output tokens" metrics."""
    model, acc = calc.get_model(state["model"]), calc.get_accelerator(state["gpu"])
    ctx, tpot_s = state["lc_ctx"], state["lc_tpot"] / 1e3
    batch = calc.max_batch_for_tpot(model, acc, ctx, tpot_s, state["wq"], state["kvq"], embedding=state["emb"])
    front = calc.pareto_front(model, acc, ctx, state["price"], state["wq"], state["kvq"], embedding=state["emb"],
                              include_batches=[batch])
    usd = float(front.loc[front["batch"] == batch, "usd_per_million"].iloc[0])
    return {"chosen_b": f"{batch:,}", "usd": fmt_usd(usd)}


def _prefix_figures(state: dict) -> dict[str, str]:
    """Step 11's figures (batching page, prefix caching): the cache of the conversations without and with the
    shared prefix cached, the section's "KV without cache" and "KV with cache" metrics."""
    pc = calc.prefix_cache_savings(calc.get_model(state["model"]), state["bt_pn"], state["bt_pl"], state["bt_pu"],
                                   state["bt_hit"], state["kvq"])
    return {"without": fmt_bytes(pc.cache_bytes_without), "with_": fmt_bytes(pc.cache_bytes_with)}


#: Steps whose sentence quotes figures: the {fields} of the sentence, computed from the step's state by the
#: calc call its page makes, so the banner says what the page shows (and the number a step talks about is on
#: the first screen, in the banner, even where the page's own metric sits lower).
_FIGURES = {1: _home_figures, 3: _batched_figures, 4: _kv_figures, 5: _cache_figures, 6: _kv_figures,
            7: _kv_figures, 8: _quantized_figures, 9: _agent_figures, 11: _prefix_figures}


@lru_cache(maxsize=None)
def step_sentence(n: int) -> str:
    """The sentence of story step ``n`` (1-based), its quoted figures filled in from the step's state."""
    _, state, sentence = STORY[n - 1]
    return sentence.format(**_FIGURES[n](state)) if n in _FIGURES else sentence


# -- presenter mode -------------------------------------------------------------------------------
def presenting() -> bool:
    """True when presenter mode is on (the sidebar toggle, seeded by ``present=1`` in the URL)."""
    if PRESENT_KEY not in st.session_state:
        raw = st.query_params.get("present", "")
        st.session_state[PRESENT_KEY] = raw in ("1", "true")
        if raw not in ("1", "true", "0", "false", ""):
            st.session_state[_PRESENT_REFUSED] = raw  # named by the toggle (``presenter_toggle``), once
    return bool(st.session_state[PRESENT_KEY])


#: Session-state key of a link's ``present`` value that is no switch (named once beside the toggle).
_PRESENT_REFUSED = "_present_refused"


def _dark() -> bool:
    """Whether the browser shows the dark theme (as of this run)."""
    try:
        return st.context.theme.type == "dark"
    except AttributeError:
        return False


def _text_colour() -> str:
    return "#f8fafc" if _dark() else "#0f172a"


def _page_background() -> str:
    """The theme's page colour (.streamlit/config.toml), under a table's header row that stays while it scrolls."""
    dark = _dark()
    return st.get_option(f"theme.{'dark' if dark else 'light'}.backgroundColor") or ("#0e1117" if dark else "#ffffff")


#: Never cut a metric with an ellipsis: labels and values wrap (at any width, presenter or not). A formula wider
#: than its column scrolls sideways inside it instead of running past the page's edge (KaTeX's display blocks).
#: No "(required)" beside a label: the app's required selectboxes (``ui.widgets.linked_selectbox``) always hold a
#: choice, their ``required`` only takes away the button that would clear it.
_CSS_ALWAYS = """
[data-testid="stMetricValue"], [data-testid="stMetricValue"] *,
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  overflow-wrap: anywhere;
}
[data-testid^="stBaseButton"] p { white-space: normal !important; overflow-wrap: anywhere; }
[data-testid="stMainBlockContainer"] { padding-top: 4rem !important; }
.katex-display { overflow-x: auto; overflow-y: hidden; padding-bottom: 0.25rem; }
[data-testid="stSidebarHeader"] { margin-bottom: 0 !important; height: 2.5rem !important; }
[data-testid="stWidgetLabelRequired"] { display: none; }
"""
_CSS_PRESENT = """
[data-testid="stMetricValue"] { font-size: 2rem !important; line-height: 1.15 !important; }
[data-testid="stMetricLabel"] { font-size: 1.05rem !important; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.1rem; }
[data-testid="stMetricValue"] p, [data-testid="stMetricLabel"] p { font-size: inherit !important; }
.xm-value { font-size: 2.5rem !important; line-height: 1.15 !important; --xm-value-max: 2.5rem; --xm-value-lh: 1.15; }
.xm-label, .xm-delta, .xm-caption, .xm-help::after { font-size: 1.05rem !important; }
.xm-table { font-size: 1rem !important; }
[data-testid="stCaptionContainer"] { font-size: 1rem !important; }
"""


def page_css() -> None:
    """Inject the metric-wrapping CSS, the look of metric rows, HTML tables and number boxes' range captions
    (``metric_row.CSS``, ``html_table.CSS``, ``number_ranges.CSS``), and presenter mode's larger text when it is on."""
    css = (_CSS_ALWAYS + f":root {{ --xm-page-bg: {_page_background()}; }}" + metric_row.CSS + html_table.CSS
           + number_ranges.CSS + (_CSS_PRESENT if presenting() else ""))
    st.html(f"<style>{css}</style>")


def presenter_toggle() -> bool:
    """The sidebar toggle; keeps ``present=1`` in the URL while it is on. Returns the mode."""
    presenting()
    on = st.toggle("Presenter mode", key=PRESENT_KEY,
                   help="Large chart text and thick lines for a projector; metrics wrap instead of being cut. "
                        "Also: present=1 in the URL.")
    refused = st.session_state.pop(_PRESENT_REFUSED, None)
    if refused is not None:
        st.warning(f"present={refused[:40]!r} in the link is not a switch: present=1 (or true) turns presenter "
                   "mode on, so it is off.", icon=":material/link_off:")
    if on:
        st.query_params["present"] = "1"
    elif "present" in st.query_params:
        del st.query_params["present"]
    return on


def style_figure(fig: go.Figure) -> None:
    """Presenter styling of a Plotly figure (in place): every text >= 16 px in the theme's text colour,
    lines >= 4 px, markers >= 10 px, a taller plot. Called by ``charts.show_chart`` in presenter mode."""
    colour = _text_colour()
    fig.update_layout(font=dict(size=18, color=colour), legend=dict(font=dict(size=18, color=colour)),
                      hoverlabel=dict(font_size=16), height=max(int(fig.layout.height or 420), 480))
    if fig.layout.title.text:
        fig.update_layout(title_font=dict(size=22, color=colour))
    axis = dict(tickfont=dict(size=18, color=colour), title_font=dict(size=18, color=colour))
    fig.update_xaxes(**axis)
    fig.update_yaxes(**axis)
    fig.update_annotations(font_size=18)
    for name in fig.layout.to_plotly_json():  # a figure of panels has a legend per panel: legend2, legend3, ...
        if name.startswith("legend") and name != "legend":
            fig.layout[name].font = dict(size=18, color=colour)
    # Panel titles lifted above their legends (annotations with a yshift, in px) rise with the larger legend
    # text, and the top margin that holds them grows alike, so that a title never sits on a legend.
    lifted = [a for a in fig.layout.annotations if a.yshift]
    if lifted:
        grow = 18 / 13  # presenter legend text over the house's 13 px
        for a in lifted:
            a.yshift = round(a.yshift * grow)
        fig.update_layout(margin_t=round((fig.layout.margin.t or 0) * grow))
    for trace in fig.data:
        if trace.type in ("scatter", "scattergl"):
            mode = trace.mode or "lines"
            if "lines" in mode:
                trace.update(line_width=max(4, trace.line.width or 0))
            if "markers" in mode:
                size = trace.marker.size
                if size is None or isinstance(size, (int, float)):
                    trace.update(marker_size=max(10, size or 0))
        if hasattr(trace, "textfont"):
            trace.update(textfont_size=18)
    for shape in fig.layout.shapes or ():
        if shape.type == "line":
            shape.line.width = max(3, shape.line.width or 0)


# -- the story ------------------------------------------------------------------------------------
def story_step() -> int | None:
    """The story step of this run (1-based, from ``story=N`` in the URL), or None."""
    raw = st.query_params.get("story")
    if raw is None:
        return None
    try:
        n = int(raw)
    except ValueError:
        return None
    return n if 1 <= n <= len(STORY) else None


def apply_story_state() -> None:
    """On arriving at a step, set its state (sidebar and page widgets) once; later moves are the user's."""
    n = story_step()
    if n is None or st.session_state.get("_story_applied") == n:
        return
    for key, value in STORY[n - 1][1].items():
        st.session_state[key] = value
    st.session_state["_story_applied"] = n


def _params(n: int) -> dict:
    out = {"story": str(n)}
    if presenting():
        out["present"] = "1"
    return out


def story_banner(page_titles: dict[str, str], current_page: str | None = None) -> None:
    """The banner above the page: step N of M, its sentence, previous / next links, the way out.

    ``current_page`` (the page file being shown; None: not known): on a page other than step N's own,
    only a link to that step, not its sentence above an unrelated page.
    """
    raw = st.query_params.get("story")
    n = story_step()
    if raw is not None and n is None:
        st.warning(f"story={raw!r} is not a step of the lecture (1 to {len(STORY)}).")
        return
    if n is None:
        return
    page, sentence = STORY[n - 1][0], step_sentence(n)
    if current_page is not None and current_page != page:
        with st.container(border=True):
            st.page_link(page, label=f"Lecture step {n} of {len(STORY)} is on the {page_titles.get(page, '')} page: "
                         f"go to step {n} ▶", query_params=_params(n))
        return
    with st.container(border=True):
        st.markdown(f"**Lecture, step {n} of {len(STORY)}** · {sentence}")
        c = st.columns(3)
        if n > 1:
            prev = STORY[n - 2][0]
            c[0].page_link(prev, label=f"◀ Step {n - 1}: {page_titles.get(prev, '')}", query_params=_params(n - 1))
        if n < len(STORY):
            nxt = STORY[n][0]
            c[1].page_link(nxt, label=f"Step {n + 1}: {page_titles.get(nxt, '')} ▶", query_params=_params(n + 1))
        stop = {"present": "1"} if presenting() else {}
        c[2].page_link(page, label="End the lecture", query_params=stop)


def story_menu(page_titles: dict[str, str]) -> None:
    """A popover listing every step as a link, so a teacher can jump (in the sidebar's Classroom part)."""
    with st.popover("Lecture steps", width="stretch"):
        for i, (page, *_) in enumerate(STORY):
            st.page_link(page, label=f"{i + 1}. {page_titles.get(page, '')}: {step_sentence(i + 1)[:70]}…",
                         query_params=_params(i + 1))
