"""Widgets and cached replays the Workloads page and the Monthly bill share: pick a workload (a preset, a shipped
trace sample or an upload) and replay it through the tiered prefix cache (calc.prefix_cache), once per distinct input."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import streamlit as st

import calc
from calc import api_tiers, bill, prefix_cache, traces, workload, workload_bill
from ui import charts, columns, formats, html_table, serving_views, url_state, widgets

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
TIER_COLORS = {"computed": "#d62728", "recomputed": "#ff7f0e", "gpu": "#2ca02c", "cpu": "#1f77b4", "ssd": "#9467bd",
               "remote": "#8c564b"}
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


@dataclass(frozen=True)
class WorkloadInputs:
    """What the Workloads page's left column sets: the source (and its edits or upload), the cache tiers, the API
    cache's TTL and the self-hosted decode batch and peak, and how self-hosting is timed (``calc.bill.TIMINGS``)
    with which engine. GB are 1e9 bytes."""
    source: str
    edits: tuple
    upload: bytes | None
    upload_name: str
    shared_prefix_tokens: int
    block_size: int
    running_batch: int
    policy: str
    cpu_gb: float
    ssd_gb: float
    remote_gb: float
    ttl_min: float
    batch: int
    peak_to_average: float
    timing: str = "serving"
    engine: str = "vllm"

    @property
    def key(self) -> tuple:
        """The arguments of ``stream``: the request stream's cache key."""
        return (self.source, self.edits, int(self.block_size), self.upload, self.upload_name,
                int(self.shared_prefix_tokens))


#: Session key: set once the user picks in the Workload box; the box's default then explains itself no more.
SOURCE_CHOSEN = "_wl_src_chosen"
#: Session key: the Workload box's default at its last run (``default_source`` of the model then).
SHOWN_DEFAULT = "_wl_src_default"


@st.cache_data(max_entries=64, show_spinner=False)
def _counts(source: str, window: int | None, _model) -> tuple[int, int, int]:
    """``_beyond`` cached on the source and the trained window, all that its counts depend on (``_model`` is not
    hashed)."""
    s = stream(source)
    return workload_bill.requests_beyond_window(s, _model), s.n_requests, int(workload_bill.request_tokens(s).max())


def _beyond(source: str, model) -> tuple[int, int, int]:
    """(requests past ``model``'s trained context, requests, longest request's prompt + output tokens) of a source
    key of ``SOURCES`` as shipped (no edits, 512-token blocks): calc.workload_bill's counts.

    Raises:
        ValueError: a source without requests, or one ``stream`` refuses (an upload).
    """
    return _counts(source, model.max_context_len, model)


def default_source(model) -> str:
    """The Workload box's default for ``model``: the first source of ``SOURCES`` (the presets, then the shipped
    traces; never the upload) whose every request's prompt and output fit the model's trained context
    (``calc.workload_bill.requests_beyond_window``), so that a first visit opens on a workload the model can serve;
    where none does, the one with the smallest share of its requests past it (the first listed among equals).
    Llama-3-8B (8,192 tokens): the Chat preset (the Agentic coding loop's requests reach 134,299 tokens); a model
    trained on 262,144 tokens or one that states no window: the Agentic coding loop, listed first."""
    best, best_share = next(iter(SOURCES)), None
    for key in SOURCES:
        if key == "upload":
            continue
        try:
            over, n, _ = _beyond(key, model)
        except ValueError:  # a shipped source always has requests; skipped rather than break the page
            continue
        if best_share is None or over / n < best_share:
            best, best_share = key, over / n
        if over == 0:
            break
    return best


def default_note(source: str, model) -> str | None:
    """Under the Workload box while it shows its default (``default_source``) and that is not the first source
    listed: why the page opened there, with the first listed source's requests past ``model``'s trained context
    (counts from calc.workload_bill), and how to see it anyway. None otherwise."""
    first = next(iter(SOURCES))
    if source == first or source != default_source(model):
        return None
    over, n, longest = _beyond(first, model)
    mine, mine_n, _ = _beyond(source, model)
    limit = f"{formats.md_escape(model.name)}'s trained context of {model.max_context_len:,} tokens"
    why = (f"the first workload listed whose every request fits {limit}" if mine == 0 else
           f"the workload listed with the fewest requests past {limit} ({mine:,} of its {mine_n:,})")
    return (f"Opened on **{formats.md_escape(SOURCES[source])}**, {why}: **{formats.md_escape(SOURCES[first])}**, "
            f"listed first, has {over:,} of its {n:,} requests past it (up to {longest:,} tokens of prompt and "
            "output), which an engine refuses. Choose it above to replay it all the same, or pick a model trained on "
            "longer contexts in the sidebar.")


def preset_in_link() -> str | None:
    """The source key of the preset whose own fields the page's link edits (a parameter of ``EDITABLE`` or of the
    reasoning box, each keyed with the preset's name: wl_sess_agentic=10, wl_rctx_chat=keep), the first listed where
    it edits several; None where it edits none. A link made while that preset was the Workload box's default carries
    no wl_src: its edits name the preset all the same."""
    params = set(st.query_params)
    for key in SOURCES:
        name = key.split(":", 1)[1] if key.startswith("preset:") else None
        if name and any(f"{url_key}_{name}" in params for url_key in [v[1] for v in EDITABLE.values()] + ["wl_rctx"]):
            return key
    return None


def _mark_source_chosen() -> None:
    """The Workload box's on_change: the user has picked, so its value is theirs (``SOURCE_CHOSEN``)."""
    st.session_state[SOURCE_CHOSEN] = True


def workload_inputs(model=None) -> WorkloadInputs:
    """The Workloads page's inputs (rendered where it is called): source, its edits or upload, tiers, TTL, batch.
    ``model`` (the sidebar's ``ModelConfig``): the Workload box opens on the preset the link edits
    (``preset_in_link``), else on ``default_source(model)`` (the first listed source when None), with
    ``default_note`` under it; a value in the link or picked before is kept, whatever the model."""
    url_state.accept_url_values("wl_src", list(SOURCES), SOURCES.get)  # a link may name the key or the label
    default = preset_in_link() or (default_source(model) if model is not None else next(iter(SOURCES)))
    if "wl_src" in st.session_state and st.session_state.get(SHOWN_DEFAULT) not in (None, default):
        # the model changed under a box that keeps its value: set it again, so that the link writes it now that it
        # is not the default any more (a bound box leaves out of the link a value equal to its default)
        st.session_state["wl_src"] = st.session_state["wl_src"]
    st.session_state[SHOWN_DEFAULT] = default
    source = st.selectbox("Workload", list(SOURCES), index=list(SOURCES).index(default), format_func=SOURCES.get,
                          key="wl_src", bind="query-params", on_change=_mark_source_chosen)
    note = None if model is None or st.session_state.get(SOURCE_CHOSEN) else default_note(source, model)
    if note:
        st.caption(note)
    edits, upload, upload_name, shared = (), None, "", 0
    if source.startswith("preset:"):
        edits = preset_editor(source)
    elif source == "upload":
        f = st.file_uploader("Trace file", type=["jsonl", "json", "csv", "txt"], key="wl_file",
                             help=f"At most {min(traces.MAX_UPLOAD_BYTES / 1e6, st.get_option('server.maxUploadSize')):.0f} "
                                  f"MB (the server's cap), {traces.MAX_REQUESTS:,} requests")
        upload, upload_name = (f.getvalue(), f.name) if f is not None else (None, "")
    if source.endswith(".csv") or source == "upload":
        shared = st.number_input("Shared prefix assumed for CSV traces, tokens", 0, 1_000_000, 0, step=512,
                                 key="wl_shared", bind="query-params", help="A CSV trace has no block hashes: its "
                                 "prompts are unique unless every prompt starts with the same system prompt")
    # Two to a row and a radio (its labels wrap): at 700 px, four to a row cut labels and a select box its option
    c1, c2 = st.columns(2)
    block = c1.selectbox("Block size, tokens", [16, 256, 512], index=2, key="wl_bs", bind="query-params",
                         help="16: vLLM's block; 256: LMCache's default chunk; 512: Mooncake's (its trace's hashes)")
    running = c2.number_input("Running batch", 0, 4096, 4, step=4, key="wl_run", bind="query-params",
                              help="Sequences decoding now: their KV cache is not free for prefixes")
    url_state.accept_url_values("wl_pol", list(prefix_cache.POLICIES), POLICY_LABELS.get)
    policy = st.radio("When a tier is full", list(prefix_cache.POLICIES), key="wl_pol", bind="query-params",
                      format_func=POLICY_LABELS.get)
    c1, c2 = st.columns(2)
    cpu_gb = c1.number_input("CPU GB", 0, 100_000, 256, step=64, key="wl_cpu", bind="query-params")
    ssd_gb = c2.number_input("SSD GB", 0, 1_000_000, 2000, step=500, key="wl_ssd", bind="query-params")
    c1, c2 = st.columns(2)
    remote_gb = c1.number_input("Remote GB", 0, 10_000_000, 0, step=1000, key="wl_rem", bind="query-params")
    ttl_min = c2.number_input("API cache TTL, min", 0.0, 1440.0, 5.0, step=1.0, key="wl_ttl", bind="query-params",
                              help="Anthropic: 5 min (1 h at 2x writes); OpenAI: 5-10 min in memory")
    c1, c2 = st.columns(2)
    batch = c1.number_input("Decode batch", 1, 4096, 32, step=8, key="wl_batch", bind="query-params")
    peak = c2.number_input("Peak / average", 1.0, 100.0, 3.0, step=0.5, key="wl_peak", bind="query-params")
    timing, engine = serving_views.timing_select("wl")
    return WorkloadInputs(source, edits, upload, upload_name, shared, block, running, policy, cpu_gb, ssd_gb,
                          remote_gb, ttl_min, batch, peak, timing, engine)


@dataclass(frozen=True)
class Replay:
    """The Workloads page's results for one ``WorkloadInputs``: the stream, the GPU's prefix-cache bytes and the
    tiers' capacities in blocks, the replay's summary, the CPU-size sweep, the bill table; the self-hosted rates
    (None, with ``self_hosted_error`` set, when the model cannot be self-hosted as set) and setup; the GPUs' memory
    after the weights and the running batch's KV cache (``calc.prefix_cache.gpu_memory_split``)."""
    stream: traces.RequestStream
    rates: object
    self_hosted_error: ValueError | None
    gpus_per_replica: int
    context_tokens: int
    gpu_cache_bytes: float
    kv_bytes_per_token: float
    capacities_blocks: tuple
    summary: object
    sweep: object
    bills: object
    setup: object = None
    after_weights_bytes: float = 0.0
    running_kv_bytes: float = 0.0


def replay(sel, inp: WorkloadInputs) -> Replay:
    """Replay the inputs' stream through the tiers on the sidebar's model and GPU, and price both bills.

    Raises:
        ValueError: a bad source or upload, tiers or model the replay refuses (the message says which).
    """
    stream_ = stream(*inp.key)
    setup = bill.SelfHostedSetup(sel.model, sel.accelerator, sel.price_per_hour_usd, int(inp.batch),
                                 float(inp.peak_to_average), sel.weight_dtype, sel.kv_dtype, inp.timing, inp.engine)
    try:
        rates, sh_error = workload_bill.self_hosted_rates_for(stream_, setup), None
    except ValueError as exc:
        rates, sh_error = None, exc
    tp = rates.gpus_per_replica if rates else 1
    # a running sequence at its whole prompt + output, the mean request rounded as the bill prices it (calc.bill)
    ctx = sum(max(1, int(round(float(t.mean())))) for t in (stream_.input_tokens, stream_.output_tokens))
    after_weights, running_kv = prefix_cache.gpu_memory_split(sel.model, sel.accelerator, int(inp.running_batch), ctx,
                                                              sel.weight_dtype, sel.kv_dtype, tp)
    gpu_bytes = max(0.0, after_weights - running_kv)  # ``prefix_cache.gpu_cache_bytes``
    tiers = prefix_cache.default_tiers(gpu_bytes, inp.cpu_gb * 1e9, inp.ssd_gb * 1e9, inp.remote_gb * 1e9)
    kvb = float(calc.kv_bytes_per_token(sel.model, sel.kv_dtype))
    caps = tuple(prefix_cache.capacity_blocks(tiers, stream_.block_size, kvb))
    counts = replay_counts(inp.key, caps, inp.policy)
    summary = prefix_cache.replay_ttft(stream_, tiers, sel.model, sel.accelerator, inp.policy, sel.weight_dtype,
                                       sel.kv_dtype, tp, counts=counts)
    sweep = cpu_sweep(inp.key, tuple(tiers), kvb, inp.policy)
    table = workload_bill.compare(stream_, api_tiers.default_tiers(), summary if rates else None, setup, rates,
                                  ttl_s=60.0 * inp.ttl_min)
    return Replay(stream_, rates, sh_error, tp, ctx, gpu_bytes, kvb, caps, summary, sweep, table, setup,
                  after_weights, running_kv)


def self_hosted_note(r: Replay) -> None:
    """Under the bills: which timing the self-hosted tier with the tiered cache follows, its range, the other
    timing's bill and the replica's TPOT breakdown (``serving_views.self_hosted_pricing``), from
    ``calc.workload_bill``. Nothing when the tier could not be priced."""
    if r.rates is None:
        return
    setup = r.setup
    other = dataclasses.replace(setup, timing="bound" if setup.timing == "serving" else "serving")
    try:
        other_rates = workload_bill.self_hosted_rates_for(r.stream, other)
        other_usd, other_error = workload_bill.self_hosted_bill(r.stream, r.summary, other, other_rates).total_usd, None
    except ValueError as exc:
        other_rates, other_usd, other_error = None, None, exc
    bills = [b.total_usd for b in workload_bill.self_hosted_bill_range(r.stream, r.summary, setup, r.rates)]
    serving_rates = r.rates if setup.timing == "serving" else other_rates
    serving_views.self_hosted_pricing(setup.timing, setup.engine, bills, other_usd, serving_rates, "wl",
                                      what="The self-hosted bill with the tiered cache", other_error=other_error,
                                      rates=r.rates,
                                      context_warning=workload_bill.context_warning(r.stream, setup.model, r.rates))
    longer_context_button(r.stream, setup.model, "wl_longer_bill")


def _switch_model(key: str) -> None:
    st.session_state["model"] = key  # the sidebar's model box, before the full run that draws it


def longer_context_button(stream, model, widget_key: str = "wl_longer") -> None:
    """Where the stream's longest request runs past ``model``'s trained window: a button (``widget_key``: the
    page draws one over the replay and one under the bills) that switches the sidebar to the preset nearest in size
    whose window holds it (``calc.models.longer_context_preset``); the page then reruns whole, so the sidebar and
    the bills follow. Nothing when the window holds every request or no preset's does."""
    longest = int(workload_bill.request_tokens(stream).max())
    key = calc.models.longer_context_preset(model, longest)
    if key is None:
        return
    other = calc.get_model(key)
    if st.button(f"Switch the model to {other.name} (trained on {other.max_context_len:,} tokens)", key=widget_key,
                 on_click=_switch_model, args=(key,),
                 help=f"The preset nearest {formats.md_escape(model.name)} in size whose trained context holds this "
                      f"workload's longest request ({longest:,} tokens of prompt and output)"):
        st.rerun(scope="app")  # a click in this fragment reruns only the fragment: the sidebar would not follow


def show_replay(sel, inp: WorkloadInputs, r: Replay) -> None:
    """The stream's numbers, the hit rates by tier, TTFT, and hit rate against the CPU tier's size."""
    stats, d, sweep = workload_bill.stream_stats(r.stream), r.summary.per_request, r.sweep
    st.markdown(f"**{stats['requests']:,} requests** over {stats['duration_s'] / 60:,.1f} min; prompt median "
                f"{stats['median_input_tokens']:,.0f} tokens, output mean {stats['mean_output_tokens']:,.0f} "
                f"(reasoning {stats['mean_reasoning_tokens']:,.0f}). GPU keeps {formats.fmt_bytes(r.gpu_cache_bytes)} "
                f"for prefixes ({r.gpus_per_replica} x {sel.accelerator.name} less the weights and "
                f"{inp.running_batch:,} running sequences of {r.context_tokens:,} tokens: the Running batch, each at its "
                f"whole prompt + output); a {r.stream.block_size}-token "
                f"block holds {formats.fmt_bytes(r.stream.block_size * r.kv_bytes_per_token)}.")
    if r.gpu_cache_bytes <= 0 and inp.running_batch > 0:  # the running batch alone overflows the GPUs
        gpus = "the GPU holds" if r.gpus_per_replica == 1 else f"the {r.gpus_per_replica} GPUs hold"
        st.warning(f"The Running batch alone needs {formats.fmt_bytes(r.running_kv_bytes)} of KV cache "
                   f"({inp.running_batch:,} sequences of {r.context_tokens:,} tokens) where {gpus} "
                   f"{formats.fmt_bytes(r.after_weights_bytes)} "
                   "after the weights: no engine runs that batch here, and no prefix stays on the GPU. Lower the "
                   "Running batch (the bills below size their own Decode batch).", icon=":material/warning:")
    # requests past the model's trained window, said before any figure (the bill's own warning is far below)
    beyond = workload_bill.context_warning(r.stream, sel.model)
    if beyond:
        st.warning(f"{formats.md_escape(beyond)}. The hit rates, times and bills below are the arithmetic all the "
                   "same.", icon=":material/warning:")
        longer_context_button(r.stream, sel.model)
    by_tier = r.summary.hit_rate_by_tier()
    with widgets.metric_row(6, per_row=3) as m:
        m[0].metric("Prefix hit rate", f"{r.summary.hit_rate():.1%}", help="Share of prompt tokens found in any tier")
        for cell, name in zip(m[1:4], ("gpu", "cpu", "ssd")):
            cell.metric(f"found in {name.upper()}", f"{by_tier[name]:.1%}",
                        help=f"{r.capacities_blocks[('gpu', 'cpu', 'ssd').index(name)]:,} blocks")
        m[4].metric("TTFT p50", formats.fmt_seconds(float(d["ttft_s"].median())),
                    delta=f"{formats.fmt_seconds(float(d['ttft_no_cache_s'].median()))} without cache", delta_color="off",
                    delta_arrow="off")
        m[5].metric("Prefill GPU work", f"{d['prefill_gpu_s'].sum() / d['ttft_no_cache_s'].sum():.0%}",
                    help="GPU seconds of prefill with the cache / without it")
    fig = charts.Figure()
    for name in ("gpu", "cpu", "ssd", "remote"):
        fig.add_scatter(x=sweep["size_bytes"] / 1e9, y=sweep[f"hit_rate_{name}"], name=name.upper(), stackgroup="h",
                        mode="lines", line_color=TIER_COLORS[name],
                        hovertemplate="%{x:,.0f} GB CPU: %{y:.1%}<extra>" + name + "</extra>")
    fig.add_vline(x=inp.cpu_gb, line_dash="dot", line_color="gray")
    fig.update_layout(xaxis_title="CPU memory for the cache, GB", yaxis_title="share of prompt blocks found",
                      yaxis_tickformat=".0%", height=300, margin=dict(t=10))
    st.markdown("**How many GB of CPU memory buy how many points of hit rate** (other tiers as set)")
    charts.show_chart(fig, key="wl_sweep")
    none, every = float(sweep["hit_rate"].iloc[0]), float(sweep["hit_rate"].iloc[-1])
    here = float(np.interp(inp.cpu_gb * 1e9, sweep["size_bytes"].to_numpy(float), sweep["hit_rate"].to_numpy(float)))
    reach = (f"The tiers find {none:.1%} of the prompt blocks both without CPU memory and with "
             f"{formats.fmt_bytes(sweep['size_bytes'].iloc[-1])}, which holds every distinct block of the stream: "
             "CPU memory changes which tier finds them, not how many, and a block it holds loads faster than from "
             "SSD or than recomputing it (the TTFT and the prefill GPU work above follow its size)"
             if round(none, 3) == round(every, 3) else
             f"Without CPU memory the tiers find {none:.1%} of the prompt blocks; with "
             f"{formats.fmt_bytes(sweep['size_bytes'].iloc[-1])}, which holds every distinct block of the stream, "
             f"{every:.1%}")
    st.caption(f"{reach}. Each point is the same replay with another CPU size. This chart counts blocks; the prefix "
               f"hit rate above counts prompt tokens ({r.summary.hit_rate():.1%} at the CPU size set, against "
               f"{here:.1%} of the blocks): a prompt's last, partly filled block is one block but fewer tokens.")


def show_sources_and_ttft(summary) -> None:
    """Two charts side by side: where each prompt token came from, and TTFT's distribution with and without the
    cache."""
    tok = summary.tokens_by_source()
    d = summary.per_request
    left, right = st.columns(2)
    with left:
        fig = charts.Figure()
        for name, n in tok.items():
            fig.add_bar(x=[n / max(sum(tok.values()), 1)], y=["prompt tokens"], orientation="h", name=name,
                        marker_color=TIER_COLORS[name], hovertemplate=f"{name}: {n:,} tokens (%{{x:.1%}})<extra></extra>")
        fig.update_layout(barmode="stack", xaxis_tickformat=".0%", height=200, margin=dict(t=10), yaxis_visible=False)
        st.markdown("**Where each prompt token came from**")
        charts.show_chart(fig, key="wl_sources")
        st.caption("Computed: missed. Recomputed: found in a tier but slower to load than to prefill again. "
                   "GPU: used in place. CPU/SSD/remote: loaded over PCIe, NVMe or the network.")
    with right:
        fig = charts.Figure()
        q = np.linspace(0, 1, 101)
        for col, label in (("ttft_no_cache_s", "no cache"), ("ttft_s", "tiered cache")):
            fig.add_scatter(x=np.quantile(d[col], q), y=q, name=label, mode="lines")
        fig.update_layout(xaxis_title="TTFT, s (prefill alone, no queueing)", yaxis_title="share of requests",
                          xaxis_type="log", height=260, margin=dict(t=10))
        st.markdown("**TTFT with and without the cache**")
        charts.show_chart(fig, key="wl_ttft")
