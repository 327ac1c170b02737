"""Widgets and cached replays the Workloads page and the Monthly bill share: pick a workload (a preset, a shipped
trace sample or an upload) and replay it through the tiered prefix cache (calc.prefix_cache), once per distinct input."""
from __future__ import annotations

import streamlit as st

from calc import prefix_cache, traces, workload, workload_bill
from ui import charts, columns, formats, html_table, url_state

#: The sources a user picks from: key -> label. Presets first, then the shipped samples, then an upload.
SOURCES = {**{f"preset:{k}": f"{w.name} (preset)" for k, w in sorted(workload.presets().items(),
                                                                         key=lambda kw: kw[0] != "agentic")},
           **{f"trace:{f}": desc for f, (_, desc, *_) in traces.SAMPLES.items()},
           "upload": "Upload a trace (Mooncake JSONL, Azure or BurstGPT CSV)"}
#: Preset fields the page lets a user edit: field -> (label, URL key, step, help).
EDITABLE = {"sessions": ("Sessions", "wl_sess", 10, "Sessions generated (each a conversation or an agent task)"),
            "system_prompt_tokens": ("System prompt, tokens", "wl_sys", 500, "Shared by every session"),
            "calls_per_turn": ("LLM calls per user turn", "wl_calls", 1, "1 for chat; an agent loops over tools"),
            "tool_output_tokens": ("Tool output, tokens", "wl_tool", 500, "Appended to the context after each call"),
            "reasoning_tokens": ("Reasoning per call, tokens", "wl_reason", 100, "Generated and billed as output")}
BILL_COLORS = {"input_missed_usd": "#d62728", "input_hit_usd": "#2ca02c", "cache_write_usd": "#ff7f0e",
               "answer_usd": "#1f77b4", "reasoning_usd": "#17becf", "prefill_gpu_usd": "#9467bd",
               "decode_gpu_usd": "#8c564b", "idle_gpu_usd": "#bbbbbb"}
POLICY_LABELS = {"demote": "demote to the next (HiCache write-back)",
                 "write_through": "every tier keeps its own LRU (LMCache)"}
REASONING_LABELS = {"drop": "dropped from the next call", "keep": "kept in the context",
                    "keep_in_tool_loop": "kept in the tool loop, dropped at the next user turn"}


@st.cache_data(max_entries=16, show_spinner="Generating the workload ...")
def stream(source: str, edits: tuple = (), block_size: int = 512, upload: bytes | None = None, upload_name: str = "",
           shared_prefix_tokens: int = 0) -> traces.RequestStream:
    """The request stream of a source key of ``SOURCES`` (presets changed by ``edits``: (field, value) pairs).

    Raises:
        ValueError: a bad edit, a malformed upload (the message names the line), no upload given.
    """
    if source.startswith("preset:"):
        w = workload.presets()[source.split(":", 1)[1]].replace(**dict(edits))
        return workload.generate(w, block_size)
    if source.startswith("trace:"):
        return traces.load_sample(source.split(":", 1)[1], shared_prefix_tokens, block_size)
    if not upload:
        raise ValueError("choose a trace file to upload")
    return traces.read_trace(upload, upload_name, shared_prefix_tokens, block_size)


@st.cache_data(max_entries=64, show_spinner="Replaying the blocks through the tiers ...")
def replay_counts(key: tuple, capacities: tuple, policy: str):
    """``prefix_cache.replay_blocks`` of the stream ``stream(*key)``, cached on the inputs."""
    return prefix_cache.replay_blocks(stream(*key), list(capacities), policy)


@st.cache_data(max_entries=16, show_spinner="Replaying at several CPU memory sizes ...")
def cpu_sweep(key: tuple, tiers: tuple, kv_bytes_per_token: float, policy: str):
    """``prefix_cache.hit_rate_sweep`` over the CPU tier's size, cached on the inputs (tiers as a tuple of Tier)."""
    return prefix_cache.hit_rate_sweep(stream(*key), list(tiers), kv_bytes_per_token, "cpu", policy=policy)


@st.cache_data(max_entries=16, show_spinner=False)
def api_hit_pct(source: str) -> float:
    """Percent of prompt tokens an API provider's 5-minute prompt cache serves on a preset or sample (TTL replay)."""
    return 100.0 * workload_bill.api_cache_hit_rate(stream(source))


def hit_rate_input(container, default_pct: int) -> float:
    """The Monthly bill's prompt-cache hit rate: set by hand (the slider ``mb_hit``) or derived from a workload or
    trace (the share of prompt tokens a 5-minute provider cache serves on it). Returns percent."""
    how = container.radio("Prompt-cache hits", ["set by hand", "derive from a workload/trace"], key="mb_hit_src",
                          bind="query-params", horizontal=True, label_visibility="collapsed")
    if how == "set by hand":
        return container.slider("Prompt-cache hits, %", 0, 100, default_pct, step=5, key="mb_hit", bind="query-params",
                                help="Share of generations whose shared prefix is read from the cache")
    choices = [k for k in SOURCES if k != "upload"]
    url_state.accept_url_values("mb_hit_wl", choices, SOURCES.get)
    src = container.selectbox("Workload or trace", choices, format_func=SOURCES.get, key="mb_hit_wl",
                              bind="query-params", help="Replayed through a 5-minute provider cache (Workloads page)")
    try:
        pct = api_hit_pct(src)
    except ValueError as exc:
        container.error(str(exc))
        return float(default_pct)
    container.caption(f"Derived: {pct:.1f}% of prompt tokens cached (5-minute TTL, 1,024-token minimum).")
    return round(pct, 1)


def preset_editor(source: str) -> tuple:
    """An expander with a preset's editable fields (``EDITABLE``), the reasoning convention and the preset's
    sources; returns the edits as sorted (field, value) pairs. Keys carry the preset's name, so each preset keeps
    its own values."""
    name = source.split(":", 1)[1]
    preset = workload.presets()[name]
    with st.expander("The workload's sessions", expanded=False):
        c = st.columns(2)
        edited = {f: c[i % 2].number_input(label, 1 if f in ("sessions", "calls_per_turn") else 0, 100_000,
                                           getattr(preset, f), step=step, key=f"{key}_{name}", help=why,
                                           bind="query-params")
                  for i, (f, (label, key, step, why)) in enumerate(EDITABLE.items())}
        url_state.accept_url_values(f"wl_rctx_{name}", list(REASONING_LABELS), REASONING_LABELS.get)
        rctx = st.selectbox("Reasoning in the next call's context", list(REASONING_LABELS),
                            index=list(REASONING_LABELS).index(preset.reasoning_context),
                            format_func=REASONING_LABELS.get, key=f"wl_rctx_{name}",
                            bind="query-params")
        notes = workload.preset_notes(name)
        st.caption(f"Source: {formats.md_escape(notes['source'])} {formats.md_escape(notes['notes'])}")
    return tuple(sorted({**edited, "reasoning_context": rctx}.items()))


def show_bills(table) -> None:
    """The ``workload_bill.compare`` table as stacked bars by component and a table of totals."""
    fig = charts.Figure()
    for comp in workload_bill.COMPONENTS:
        fig.add_bar(x=table["name"], y=table[comp], name=comp.removesuffix("_usd").replace("_", " "),
                    marker_color=BILL_COLORS[comp], hovertemplate="%{x}: $%{y:,.0f} per month<extra></extra>")
    fig.update_layout(barmode="stack", yaxis_title="USD per month (30 days)", height=340, margin=dict(t=10))
    charts.show_chart(fig, key="wl_bills")
    money = ("total_usd", "per_request_usd", "reasoning_usd")  # as formats.fmt_usd writes dollars, 3 digits below $1
    shown = table.assign(**{c: [formats.fmt_usd(v, significant=3) for v in table[c]] for c in money})
    html_table.show_table(shown, hide_index=True, width="stretch", column_order=(
        "name", "total_usd", "per_request_usd", "cached_share", "reasoning_usd", "n_gpus", "model"),
        column_config={"total_usd": st.column_config.TextColumn("per month"),
                       "per_request_usd": st.column_config.TextColumn("per request"),
                       "reasoning_usd": st.column_config.TextColumn("of which reasoning"),
                       "cached_share": st.column_config.NumberColumn("prompt cached", format="percent"),
                       "n_gpus": columns.column("n_gpus")})
