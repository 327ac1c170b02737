"""The KV cache page's parts: the attention-layout controls (MHA, GQA, MQA, MLA, windows, hybrid stacks, the
storage conventions), what each kind of layer holds, and the same model under every layout side by side.

The numbers come from calc.kv, calc.layers and calc.memory; this module draws.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import calc
from ui import charts, columns, downloads, formats, html_table, url_state, widgets

CONTEXTS = [2**k for k in range(10, 21)]          # 1K .. 1M tokens, the chart of the KV cache page

BATCHES = [1, 2, 4, 8, 16, 32, 48, 64, 128, 256, 512, 1024]
LAYOUTS = {"model": "As configured", "mha": "MHA", "gqa": "GQA", "mqa": "MQA", "mla": "MLA"}
WINDOWS = ["model", "none", "512", "1024", "2048", "4096", "8192", "32768"]
RATIOS = [1, 3, 5, 7, 0]                          # local layers per global layer; 0 = every layer local
RANKS = [128, 256, 512, 1024, 2048]
KIND_NAMES = {"linear_attention": "linear attention", "lightning": "lightning attention", "mamba": "Mamba",
              "mamba2": "Mamba-2", "mlp_only": "MLP only"}
STATE_LABELS = {"reference": "fp32 (reference)", "vllm": "model dtype (vLLM)"}


def build_variant(model: calc.ModelConfig, layout: str, n_kv_heads: int, latent_rank: int, window: str,
                  local_per_global: int) -> calc.ModelConfig:
    """The page's choices mapped onto calc.kv.with_attention_layout ("model" window: as configured).

    Raises:
        ValueError: a combination ModelConfig rejects (e.g. K not dividing the query heads).
    """
    w = None if window == "model" else 0 if window == "none" else int(window)
    return calc.kv.with_attention_layout(model, layout, n_kv_heads, latent_rank, w, local_per_global)


def kv_head_options(model: calc.ModelConfig) -> list[int]:
    """The K a GQA layout can have: the divisors of the model's query-head count N, ascending."""
    return [k for k in range(1, model.n_heads + 1) if model.n_heads % k == 0]


def _window_label(model: calc.ModelConfig, w: str) -> str:
    if w == "model":
        if model.sliding_window is None and model.attention_chunk_size is not None:
            return f"As configured (chunks of {model.attention_chunk_size:,})"
        if model.sliding_window is None:
            return "As configured (none)"
        return f"As configured ({model.sliding_window:,} tokens)"
    return "No window" if w == "none" else f"{int(w):,} tokens"


def stack_words(model: calc.ModelConfig) -> str:
    """The model's own stack of local and global layers, as the KV cache page says it beside the greyed "Local :
    global layers" slider: e.g. Llama-4-Scout "As configured: 36 chunked and 12 full-attention layers (3:1)",
    Gemma-3-27B "52 sliding-window and 10 full-attention layers (5.2:1)", a model with no windowed layer "all 32
    layers full attention"; layers of other kinds (linear attention, Mamba) are counted beside them. Counts from
    ``model.layer_kinds``."""
    kinds = list(model.layer_kinds)
    local = {k: kinds.count(k) for k in ("sliding", "chunked") if kinds.count(k)}
    full = kinds.count("full")
    other = len(kinds) - full - sum(local.values())
    other_names = sorted(KIND_NAMES.get(k, k) for k in set(kinds) - {"full", "sliding", "chunked"})
    rest = f", and {other} other layers ({', '.join(other_names)})" if other else ""
    if not local:
        return f"As configured: {'all ' if not other else ''}{full} layers full attention{rest}"
    names = " and ".join(f"{n} {'chunked' if k == 'chunked' else 'sliding-window'}" for k, n in local.items())
    if not full:
        return f"As configured: {'all ' if len(local) == 1 and not other else ''}{names} layers (all local){rest}"
    return f"As configured: {names} and {full} full-attention layers ({sum(local.values()) / full:.3g}:1){rest}"


@dataclass(frozen=True)
class LayoutChoice:
    """The page's controls: the model variant they build (``model``, before the state convention), the window
    choice as the menu names it, and the cache conventions, context ``ctx`` and concurrency ``batch`` (tokens,
    sequences)."""

    model: calc.ModelConfig
    window: str
    sliding: str
    mla: str
    ctx: int
    batch: int
    state_conv: str


def layout_controls(sel) -> LayoutChoice:
    """The attention-layout, window, convention, context and concurrency controls in three columns (keys kv_*,
    in the URL); a layout the model cannot take is said in the page and the model kept as configured."""
    if st.query_params.get("kv_layout") in LAYOUTS and "kv_layout" not in st.session_state:
        st.session_state["kv_layout"] = st.query_params["kv_layout"]  # a link may name the layout by its id ("gqa")
    c1, c2, c3 = st.columns(3)
    url_state.accept_url_values("kv_layout", list(LAYOUTS), LAYOUTS.get)
    layout = c1.radio("Attention layout", list(LAYOUTS), format_func=LAYOUTS.get, key="kv_layout",
                      bind="query-params", horizontal=True,
                      help="MHA: a KV head per query head. GQA: K KV heads shared by groups. MQA: one KV head. "
                           "MLA: a compressed latent per token (DeepSeek-V2).")
    k_options = kv_head_options(sel.model)
    own_k = sel.model.n_kv_heads if sel.model.n_kv_heads in k_options else sel.model.n_heads
    # K starts at the model's own; a K that does not divide this model's heads (a link, another model) or a
    # K left at the previous model's own value follows the model.
    if st.session_state.get("kv_k") not in k_options or (
            st.session_state.get("_kv_k_model") not in (None, sel.model_id)
            and st.session_state.get("kv_k") == st.session_state.get("_kv_k_own")):
        st.session_state.pop("kv_k", None)
    st.session_state["_kv_k_model"], st.session_state["_kv_k_own"] = sel.model_id, own_k
    k_default = {} if "kv_k" in st.session_state else {"index": k_options.index(own_k)}
    n_kv = c1.selectbox("KV heads K (GQA)", k_options, key="kv_k", bind="query-params", disabled=layout != "gqa",
                        **k_default, help=f"The divisors of the {sel.model.n_heads} query heads; "
                                          f"{formats.md_escape(sel.model.name)} has K = {sel.model.n_kv_heads}.")
    if layout != "gqa":  # the greyed box keeps the GQA choice for later; say which K this layout uses
        c1.caption({"mha": f"MHA: K = N = {sel.model.n_heads}", "mqa": "MQA: K = 1",
                    "mla": "MLA: a latent per token, no KV heads"}.get(
            layout, "As configured: MLA, no KV heads" if sel.model.attention == "mla"
            else f"As configured: K = {sel.model.n_kv_heads}") + " (the box above applies to GQA).")
    rank = c1.select_slider("MLA latent rank d_c", RANKS, value=512, key="kv_rank", bind="query-params",
                            disabled=layout != "mla", help="DeepSeek-V2/V3 use 512 (+64 RoPE dims).")
    url_state.accept_url_values("kv_win", WINDOWS, lambda w: _window_label(sel.model, w))
    window = c2.selectbox("Sliding window", WINDOWS, key="kv_win", bind="query-params",
                          format_func=lambda w: _window_label(sel.model, w))
    url_state.accept_url_values("kv_ratio", RATIOS, lambda r: "all local" if r == 0 else f"{r}:1")
    ratio = c2.select_slider("Local : global layers", RATIOS, value=5, key="kv_ratio", bind="query-params",
                             format_func=lambda r: "all local" if r == 0 else f"{r}:1",
                             disabled=window in ("model", "none"),
                             help="Hybrid stack: r sliding-window layers per full-attention layer.")
    if window in ("model", "none"):  # the greyed slider keeps its choice for later; say which stack is shown
        c2.caption((stack_words(sel.model) if window == "model" else "No window: every attention layer holds the "
                    "full context") + " (the slider above applies to a window you choose).")
    try:
        model = build_variant(sel.model, layout, int(n_kv), rank, window, ratio)
    except ValueError as exc:
        st.error(f"That layout is not possible for {formats.md_escape(sel.model.name)}: {formats.md_escape(exc)}. Showing the model as configured.")
        model = sel.model
    converted = sorted(set(calc.kv.PLAIN_LAYOUT_FULL_KINDS) & set(sel.model.layer_kinds))
    if layout in ("mha", "gqa", "mqa") and converted:
        c1.caption(f"{formats.md_escape(sel.model.name)}'s {' and '.join(converted)} layers become full-attention "
                   f"layers of this layout: each holds every token's K and V, with no compression, selection or indexer.")
    # A convention is offered where it changes this variant's bytes: the window one for a model with sliding-
    # window or chunked layers, the MLA one for a model with MLA layers.
    try:
        windowed, has_mla = calc.kv.conventions_that_matter(model)
    except ValueError:  # the page says below what is wrong with this variant
        windowed = has_mla = True
    full = c2.toggle("Windows reserved in full", key="kv_full", bind="query-params", disabled=not windowed,
                     help="Off: a window layer keeps at most W tokens (Mistral's rolling buffer, vLLM's hybrid "
                          "allocator). On: the engine reserves every layer at full context."
                          + ("" if windowed else " (This variant has no sliding-window or chunked layers.)"))
    expanded = c2.toggle("MLA stored expanded", key="kv_exp", bind="query-params", disabled=not has_mla,
                         help="Off: the latent c_KV + RoPE key (576 numbers per token and layer for DeepSeek). "
                              "On: per-head K and V materialised, as an engine without the absorbed path does."
                              + ("" if has_mla else " (This variant has no MLA layers: pick the MLA layout.)"))
    ctx = widgets.context_slider(c3, "Context length S (tokens)", "kv_ctx")
    batch = c3.select_slider("Concurrency B (sequences)", BATCHES, value=1, key="kv_b", bind="query-params")
    url_state.accept_url_values("kv_state", list(STATE_LABELS), STATE_LABELS.get)
    state_conv = c3.radio("Lightning-attention state", list(STATE_LABELS), format_func=STATE_LABELS.get,
                          key="kv_state", bind="query-params", horizontal=True,
                          disabled="lightning" not in sel.model.layer_kinds,
                          help="MiniMax's lightning layers keep an N x H x H state per sequence. fp32: the reference "
                               "(calc's default when the config names no dtype). Model dtype: vLLM stores it in the "
                               "model's bf16 (MambaStateDtypeCalculator.linear_attention_state_dtype), half the bytes.")
    widgets.context_warning(model, ctx)
    return LayoutChoice(model, window, "full" if full else "cap", "expanded" if expanded else "latent", ctx, batch,
                        state_conv or "reference")


def layer_breakdown_section(model: calc.ModelConfig, per_layer: pd.DataFrame, ctx: int) -> None:
    """What each kind of layer holds at the chosen context: a table and a bar per kind (calc.layers)."""
    st.subheader("What each layer holds")
    st.latex(r"\text{cache per sequence} = \sum_{\text{layers}} \text{bytes per token} \cdot "
             r"\text{tokens held}(S) \; + \; \text{constant state}")
    fig = charts.Figure()
    fig.add_bar(y=per_layer["kind"], x=per_layer["cache_bytes"] / 1e9, orientation="h", name=f"per-token part at {ctx:,}",
                hovertemplate="%{y}: %{x:,.3f} GB<extra></extra>")
    fig.add_bar(y=per_layer["kind"], x=per_layer["state_bytes"] / 1e9, orientation="h", name="constant state",
                hovertemplate="%{y}: %{x:,.3f} GB<extra></extra>")
    fig.update_layout(barmode="stack", height=120 + 40 * len(per_layer), xaxis_title="GB per sequence",
                      yaxis_autorange="reversed", margin=dict(t=10, b=40))
    charts.show_chart(fig, key="kv_chart_layers")
    shown = per_layer.assign(
        tokens_held=[f"{x:,.0f}" for x in per_layer["tokens_held"]],
        bytes_per_token=[f"{x:,.0f} B" for x in per_layer["bytes_per_token"]],
        **{c: [formats.fmt_bytes(x) for x in per_layer[c]] for c in ("cache_bytes", "state_bytes", "total_bytes")})
    html_table.show_table(shown, hide_index=True, width="stretch", column_order=(
        "kind", "layers", "tokens_held", "bytes_per_token", "cache_bytes", "state_bytes", "state_dtype", "total_bytes"),
        column_config={"kind": st.column_config.TextColumn("layer kind", pinned=True),
                       "layers": st.column_config.NumberColumn("layers"),
                       "tokens_held": f"tokens held each at {ctx:,}", "bytes_per_token": "bytes per token each",
                       "cache_bytes": "per-token part (all)", "state_bytes": "constant state (all)",
                       "state_dtype": "state dtype",
                       "total_bytes": "per sequence (all)"})
    st.caption("Full attention holds every token, a sliding layer the last W, a chunked layer (Llama 4) its "
               "current chunk, a shared-KV layer (Gemma-3n) nothing of its own. Gated DeltaNet, lightning and "
               "Mamba layers hold a constant state (shapes of vLLM's MambaStateShapeCalculator), read and "
               "written every decode step, in the dtype the table names (lightning: the control above); DeepSeek-V3.2 adds a 132 B indexer key per token and reads only "
               "the top-k latent entries."
               + (" DeepSeek-V4's csa and hca layers keep their last W tokens uncompressed (the window row) and pool "
                  "every r tokens into one compressed entry (r = 4 for csa, 128 for hca; the compressed-entries row, "
                  "floor(S / r) entries, csa's with its indexer key); their compressor state is constant per sequence."
                  if calc.layers.has_compressed_layers(model) else ""))
    downloads.download_csv(per_layer, "kv_cache_layers.csv", key="kv_layers_csv")


def layout_comparison_section(sel, model: calc.ModelConfig, variants: dict, budget, choice: LayoutChoice) -> None:
    """The same model under MHA, GQA, MQA, MLA and a window: a bar per layout, a table, a CSV."""
    ctx, batch, sliding, mla, window = choice.ctx, choice.batch, choice.sliding, choice.mla, choice.window
    st.subheader("The same model under MHA, GQA, MQA, MLA and a window")
    table = pd.DataFrame(calc.sweeps.layout_comparison({"Your layout": model, **variants}, sel.accelerator, ctx, batch,
                                                       sel.weight_dtype, sel.kv_dtype, sliding, mla))
    fig2 = charts.Figure(go.Bar(x=table["layout"], y=table["kv_bytes_total"] / 1e9, name="KV cache",
                            customdata=table["kv_bytes_per_token"],
                            hovertemplate="%{x}: %{y:,.2f} GB (%{customdata:,.0f} B per token)<extra></extra>"))
    fig2.add_hline(y=budget.weights_bytes / 1e9, line_dash="dot", line_color="#888888",
                   annotation_text=f"weights {formats.fmt_bytes(budget.weights_bytes)}", annotation_position="top left")
    fig2.update_layout(yaxis_title="KV cache (GB)", xaxis_title="attention layout")
    st.markdown(f"**KV cache of {batch:,} x {ctx:,} tokens ({sel.kv_dtype}) by attention layout**")
    other = sorted(set(table.loc[table["kv_dtype"] != sel.kv_dtype, "layout"]))
    if other:
        st.caption(f"{sel.kv_dtype} stores an MLA latent only: {', '.join(other)} are counted in plain fp8 "
                   "(one scale per layer), the cache an engine gives them.")
    charts.show_chart(fig2, key="kv_chart_var")
    shown = table.assign(**{c: [formats.fmt_bytes(x) for x in table[c]]
                            for c in ("kv_bytes_per_sequence", "kv_bytes_total", "total_bytes")})
    shown["kv_bytes_per_token"] = [f"{x:,.0f} B" for x in table["kv_bytes_per_token"]]
    layout_columns = {
        "layout": st.column_config.TextColumn("layout", pinned=True), "attention": "attention", "kv_heads": columns.column("kv_heads"),
        "kv_bytes_per_token": "KV per token (B)", "kv_bytes_per_sequence": f"KV per sequence ({ctx:,} tokens)",
        "kv_bytes_total": f"KV in total (B = {batch:,})", "total_bytes": "weights + KV",
        "gpus_needed": columns.column("gpus_needed")}
    # The key columns fit at 1280 px; the rest is one click away.
    html_table.show_table(shown, hide_index=True, width="stretch", column_config=layout_columns, column_order=(
        "layout", "kv_heads", "kv_bytes_per_token", "kv_bytes_total", "total_bytes", "gpus_needed"))
    # Built only while open (toggling reruns): a slider move redraws no hidden table.
    every = st.expander(f"Every column: attention kind and KV per sequence of {ctx:,} tokens", key="kv_every",
                        on_change="rerun")
    if every.open:
        html_table.show_table(shown, container=every, hide_index=True, width="stretch", column_config=layout_columns, column_order=(
            "layout", "attention", "kv_heads", "kv_bytes_per_token", "kv_bytes_per_sequence", "kv_bytes_total"))
    st.caption("MHA, GQA, MQA and MLA rows: every attention layer full, without windows (compressed and sparse "
               "layers become full-attention layers of that layout). "
               "MLA row: DeepSeek's proportions d_c = 4H, d_h^R = H/2 (latent rank slider applies to 'Your layout'). "
               "Window row: the GQA row's K (the model's own K when it is a GQA model; GQA-8 for an MHA or MLA model) "
               "with every layer behind the window.")
    downloads.download_csv(table, "kv_cache_layouts.csv", key="kv_csv", inputs={
        "context_len": ctx, "batch": batch, "your_layout": f"{model.attention} K={model.n_kv_heads}", "window": window})
