"""Monthly bill: API model tiers, prompt-cache hits, and when self-hosting wins (chapter 9, LLM inference, last part)."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from calc import bill
from app_pages import caching, common, equations, workload_widgets

DEFAULTS = {"mb_dau": 100_000, "mb_remix": 1.0, "mb_orig": 0.1, "mb_gens": 5.0, "mb_prefix": 3000,
            "mb_unique": 500, "mb_out": 500, "mb_hit": 70, "mb_batch": 32, "mb_peak": 3.0}
COMPONENTS = {"input_missed_usd": "input, missed cache", "input_hit_usd": "input, cache hit",
              "cache_write_usd": "cache writes (surcharge)", "output_usd": "output", "idle_usd": "idle GPU time"}
COLORS = {"input_missed_usd": "#d62728", "input_hit_usd": "#2ca02c", "cache_write_usd": "#ff7f0e",
          "output_usd": "#1f77b4", "idle_usd": "#bbbbbb"}

#: Price-table columns and their short names in the URL parameter mb_prices ("out1=30": row 1's output price).
PRICE_PARAMS = {"name": "name", "model": "model", "input_usd_per_mtok": "in", "cached_input_usd_per_mtok": "hit",
                "output_usd_per_mtok": "out", "cache_write_multiplier": "write"}


def _usd(x: float, digits: int = 2) -> str:
    """USD with a fixed number of decimals; "n/a" for NaN (no traffic)."""
    return "n/a" if x != x else f"${x:,.{digits}f}"


def _chart_points(part):
    """The rows of one tier's bill-against-DAU sweep that the chart draws: every 20th DAU value (an API tier
    is a straight line on the log-log axes) and, for the self-hosted staircase, each row where the GPU count
    changes (with line_shape "hv" that is the same staircase). The CSV keeps every row."""
    i = np.arange(len(part))
    keep = (i % 20 == 0) | (i == len(part) - 1) | (part["n_gpus"].diff().fillna(0).to_numpy() != 0)
    return part[keep]


PRICE_COLUMNS = ("input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok")


def _complete_rows(edited: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The price table without the named rows that still lack a price (a row just added, its name typed
    first), and those rows' names with the prices they lack; an empty cache-write multiplier reads 1.0 (writes
    cost what a base input token costs). A row with a bad value (text, negative) stays in, for the bill's
    own message."""
    if not set(PRICE_COLUMNS) <= set(edited.columns):
        return edited, []
    named = edited["name"].notna() & edited["name"].astype(str).str.strip().ne("")
    lacking = edited[list(PRICE_COLUMNS)].isna()
    short = {"input_usd_per_mtok": "in $/1M", "cached_input_usd_per_mtok": "hit $/1M", "output_usd_per_mtok": "out $/1M"}
    waiting = []
    for i in range(len(edited)):
        if named.iloc[i] and lacking.iloc[i].any():
            missing = ", ".join(short[c] for c in PRICE_COLUMNS if lacking.iloc[i][c])
            waiting.append(f"{common.md_escape(str(edited['name'].iloc[i]).strip())} ({missing})")
    complete = edited[~(named & lacking.any(axis=1))].copy()
    if "cache_write_multiplier" in complete.columns:
        complete["cache_write_multiplier"] = complete["cache_write_multiplier"].fillna(1.0)
    return complete, waiting


@caching.bounded_cache(max_entries=64, max_bytes=16 * caching.MB)
def _tiers_and_verdict(scenario, tiers, setup):
    """``bill.compare_tiers`` and its verdict, cached on their inputs for every session (read-only)."""
    table = bill.compare_tiers(scenario, tiers, setup)
    return table, bill.verdict(table)


@caching.bounded_cache(max_entries=64, max_bytes=32 * caching.MB)
def _sweeps(scenario, tiers, setup):
    """The bill against DAU and against the hit rate, cached on their inputs for every session (read-only)."""
    return bill.bill_vs_dau(scenario, tiers, setup), bill.bill_vs_hit_rate(scenario, tiers, setup)


sel = common.selection()
st.title("Monthly bill")
st.markdown(
    "Model selection at scale is unit economics (chapter 9, LLM inference). Each generation pays for its prompt "
    "and its output; a long **shared prefix** is served from the provider's prompt cache at about a tenth of the "
    "input price. Rented GPUs cost the same every hour: they lose at small traffic and win once the product takes off.")


@common.fragment
def bill_section() -> None:
    """Traffic, prices, the bill and its charts. A fragment: an input here reruns this part only, not the sidebar,
    the introduction or the formula."""

    inputs, results = st.columns([5, 6], gap="medium")
    with inputs:
        st.markdown("**Traffic**")
        dau = st.number_input("Daily active users", 0, 10_000_000_000, DEFAULTS["mb_dau"], step=10_000, key="mb_dau",
                              bind="query-params")
        c1, c2 = st.columns(2)
        remix = c1.number_input("Remix, % of DAU", 0.0, 100.0, DEFAULTS["mb_remix"], step=0.1, format="%.2f",
                                key="mb_remix", bind="query-params", help="Users who remix existing content each day")
        orig = c2.number_input("Create, % of DAU", 0.0, 100.0, DEFAULTS["mb_orig"], step=0.01, format="%.2f",
                               key="mb_orig", bind="query-params", help="Users who create original content each day")
        c1, c2 = st.columns(2)
        gens = c1.number_input("Generations per creator", 0.1, 10_000.0, DEFAULTS["mb_gens"], step=1.0,
                               key="mb_gens", bind="query-params", help="Generations per remixing or creating user per day")
        hit = workload_widgets.hit_rate_input(c2, DEFAULTS["mb_hit"])  # by hand, or derived from a workload's replay
        c1, c2, c3 = st.columns(3)
        prefix = c1.number_input("Prefix tokens", 0, 10_000_000, DEFAULTS["mb_prefix"], step=500, key="mb_prefix",
                                 bind="query-params", help="Shared, cacheable prompt prefix: tokens per generation")
        unique = c2.number_input("Unique tokens", 0, 10_000_000, DEFAULTS["mb_unique"], step=100, key="mb_unique",
                                 bind="query-params", help="Prompt tokens unique to each generation")
        out = c3.number_input("Output tokens", 1, 10_000_000, DEFAULTS["mb_out"], step=100, key="mb_out",
                              bind="query-params", help="Output tokens per generation")
        st.markdown(f"**Self-hosting** {sel.model.name} on {sel.accelerator.name} (the sidebar's model and GPU)")
        c1, c2 = st.columns(2)
        batch = c1.number_input("Decode batch", 1, 4096, DEFAULTS["mb_batch"], step=8, key="mb_batch",
                                bind="query-params", help="Sequences decoded together (clamped to what fits)")
        peak = c2.number_input("Peak / average", 1.0, 100.0, DEFAULTS["mb_peak"], step=0.5, key="mb_peak",
                               bind="query-params", help="Capacity is sized for the peak hour")

    st.subheader("Prices, USD per 1M tokens")
    st.caption(f"Defaults from the providers' price pages, transcribed {bill.prices_read_on()} "
               "(dates and sources in the last columns). Edit any cell; add rows for more tiers. "
               "Cache-write multiplier: write price / base input price (Anthropic 5-minute writes 1.25; "
               "1.0 = writes free, as for OpenAI before GPT-5.6 and Gemini's implicit cache).")
    # The edited cells travel in the URL (mb_prices, e.g. "out1=30"; st.data_editor cannot bind to it). The
    # editor's base table is fixed while the editor lives (its edits are kept relative to it), and read from
    # the link, or from this session's last edits, when the editor is drawn anew.
    default_prices = bill.tiers_to_frame(bill.default_tiers())
    if "mb_prices" not in st.session_state or "_mb_prices_base" not in st.session_state:
        link = st.query_params.get("mb_prices", st.session_state.get("_mb_prices_link", ""))
        try:
            st.session_state["_mb_prices_base"] = common.apply_table_edits(default_prices, link, PRICE_PARAMS)
        except ValueError as exc:
            st.warning(f"The link's price edits could not be read ({common.md_escape(exc)}); the default prices are shown.")
            st.session_state["_mb_prices_base"] = default_prices
    edited = st.data_editor(
        st.session_state["_mb_prices_base"], key="mb_prices", num_rows="dynamic", hide_index=True,
        width="stretch", column_config={
            "name": st.column_config.TextColumn("tier", required=True, help="A short name: the model's, or your own"),
            "input_usd_per_mtok": st.column_config.NumberColumn("in $/1M", min_value=0.0, format="%.3f", help="Base (uncached) input price, USD per 1M tokens"),
            "cached_input_usd_per_mtok": st.column_config.NumberColumn("hit $/1M", min_value=0.0, format="%.3f", help="Price of an input token read from the prompt cache, USD per 1M"),
            "output_usd_per_mtok": st.column_config.NumberColumn("out $/1M", min_value=0.0, format="%.3f", help="Output price, USD per 1M tokens"),
            "cache_write_multiplier": st.column_config.NumberColumn("write x", min_value=1.0, format="%.2f", help="Cache-write price / base input price"),
            "as_of": st.column_config.TextColumn("as of", width="small"),
            "source": st.column_config.TextColumn("source", width="small"),
        })

    link = common.encode_table_edits(default_prices, edited, PRICE_PARAMS)
    st.session_state["_mb_prices_link"] = link
    if link:
        st.query_params["mb_prices"] = link
    elif "mb_prices" in st.query_params:
        del st.query_params["mb_prices"]

    complete, waiting = _complete_rows(edited)
    if waiting:
        st.info("Left out of the bill until their prices are filled in: " + ", ".join(waiting) + ".",
                icon=":material/edit_note:")
    try:
        scenario = bill.TrafficScenario.from_percentages(dau, remix, orig, gens, prefix, unique, out, hit)
        tiers = bill.tiers_from_frame(complete)
    except ValueError as exc:
        common.show_error(exc)
        return

    setup, self_hosted_error = None, None
    try:
        setup = bill.SelfHostedSetup(sel.model, sel.accelerator, sel.price_per_hour_usd, int(batch), float(peak),
                                     sel.weight_dtype, sel.kv_dtype)
        table, verdict = _tiers_and_verdict(scenario, tiers, setup)
        rates = bill.self_hosted_rates(scenario, setup)
    except ValueError as exc:
        self_hosted_error, setup = exc, None
        table, verdict = _tiers_and_verdict(scenario, tiers, None)

    with results:
        st.markdown(f"#### The bill at {dau:,.0f} daily users")
        with common.metric_row(max(len(table), 1), per_row=3) as cols:  # three tiers to a row
            for col, row in zip(cols, table.itertuples()):
                col.metric(f"{row.name}", _usd(row.total_usd, 0), help=f"{row.model}: USD per month of 30 days")
                col.caption(f"{_usd(row.per_generation_usd, 5)} per generation"
                            + (f", {row.n_gpus:.0f} GPU(s)" if row.name == "self-hosted" else ""))
        st.markdown(
            f"{dau:,.0f} daily users x ({remix:.2f}% who remix + {orig:.2f}% who create) = "
            f"**{scenario.creators_per_day:,.0f} creators a day**, x {gens:g} generations each = "
            f"**{scenario.generations_per_day:,.0f} generations a day**. The other users only view and cost nothing.")
        common.show_equations([equations.bill_row(scenario, t, bill.api_monthly_bill(scenario, t).total_usd)
                               for t in tiers])
        if self_hosted_error:
            st.error(f"Self-hosted tier left out: {self_hosted_error}")
        st.success(verdict)

    fig = common.Figure()
    for comp, label in COMPONENTS.items():
        fig.add_bar(x=table["name"], y=table[comp], name=label, marker_color=COLORS[comp], customdata=table["model"],
                    hovertemplate="%{x} (%{customdata})<br>" + label + ": $%{y:,.0f} per month<extra></extra>")
    st.markdown("**Monthly bill by component**")
    fig.update_layout(barmode="stack", xaxis_title="tier",
                      yaxis_title="USD per month (30 days)")
    common.show_chart(fig, key="mb_bars")

    shown = table.rename(columns={"name": "tier", "break_even_dau": "self-hosting cheaper from DAU"})
    if "self-hosting cheaper from DAU" in shown:  # words, not a grid's "None": never, or not a question (itself)
        shown["self-hosting cheaper from DAU"] = [
            "—" if tier == "self-hosted" else ("never" if pd.isna(d) else f"{d:,.0f}")
            for tier, d in zip(shown["tier"], shown["self-hosting cheaper from DAU"])]
    BILL_USD = {"input_missed_usd": "input, cache miss", "input_hit_usd": "input, cache hit",
                "cache_write_usd": "cache writes", "output_usd": "output", "idle_usd": "idle GPUs",
                "total_usd": "total / month"}
    bill_columns = {c: st.column_config.NumberColumn(label, format="dollar") for c, label in BILL_USD.items()} | {
        "per_dau_usd": st.column_config.NumberColumn("per DAU / month", format="$%.4f"),
        "tier": st.column_config.TextColumn("tier", pinned=True), "model": st.column_config.TextColumn("model", width="medium"),
        "per_generation_usd": st.column_config.NumberColumn("per generation", format="$%.5f"),
        "n_gpus": st.column_config.NumberColumn("GPUs", format="%.0f"),
        "self-hosting cheaper from DAU": st.column_config.TextColumn("self-hosting cheaper from DAU")}
    # The key columns fit at 1280 px; the parts of each bill and the models are one click away.
    common.show_table(shown, hide_index=True, width="stretch", column_config=bill_columns, column_order=(
        "tier", "total_usd", "per_generation_usd", "per_dau_usd", "n_gpus", "self-hosting cheaper from DAU"))
    # Built only while open (toggling reruns the page): a slider move redraws no hidden table.
    every = st.expander("Every column: the models and the bill's parts (they add up to the total above)", key="mb_every",
                        on_change="rerun")
    if every.open:
        common.show_table(shown, container=every, hide_index=True, width="stretch", column_config=bill_columns, column_order=(
            "tier", "model", *COMPONENTS))
    csv_in = {"dau": dau, "remix_pct": remix, "create_pct": orig, "generations_per_creator": gens, "prefix_tokens": prefix,
              "unique_tokens": unique, "output_tokens": out, "cache_hit_pct": hit, "decode_batch": batch,
              "peak_to_average": peak, "price_edits": link or "none (the defaults)"}
    common.download_csv(table, "monthly_bill.csv", key="mb_csv", inputs=csv_in)

    if setup is not None:
        st.caption(
            f"Self-hosted: {sel.model.name} on {rates.gpus_per_replica} x {sel.accelerator.name} per replica"
            + (f" (tensor-parallel, TP {rates.gpus_per_replica}, all-reduces included; the Many GPUs page plans other "
               "layouts)" if rates.gpus_per_replica > 1 else "") + " at "
            f"{common.fmt_usd(rates.replica_price_per_hour_usd)}/h, batch {rates.batch} at a "
            f"{rates.context_len:,}-token context: {common.fmt_number(rates.decode_tokens_per_s)} output tok/s "
            f"({common.fmt_usd(rates.output_usd_per_mtok)} per 1M when busy), {common.fmt_number(rates.prefill_tokens_per_s)} "
            f"prompt tok/s ({common.fmt_usd(rates.input_usd_per_mtok)} per 1M). Roofline lower bounds "
            "(a real server is 1.2-2x slower), and an 8B model is not an Opus: compare quality before price.")

    left, right = st.columns(2)
    with left:
        sweep, sweep_h = _sweeps(scenario, tiers, setup)
        fig = common.Figure()
        for name, part in sweep.groupby("name", sort=False):
            part = _chart_points(part)
            fig.add_scatter(x=part["dau"], y=part["total_usd"], name=name, mode="lines",
                            line_shape="hv" if name == "self-hosted" else "linear", customdata=part["n_gpus"],
                            hovertemplate=name + "<br>%{x:,.0f} DAU: $%{y:,.0f} per month"
                            + ("<br>%{customdata} GPUs" if name == "self-hosted" else "") + "<extra></extra>")
        fig.add_vline(x=max(dau, 10), line_dash="dot", line_color="gray")
        st.markdown("**Bill against DAU**")
        fig.update_layout(xaxis_title="daily active users (log)",
                          yaxis_title="USD per month (log)", xaxis_type="log", yaxis_type="log")
        common.show_chart(fig, key="mb_dau_chart")
        common.download_csv(sweep, "bill_vs_dau.csv", key="mb_dau_csv", inputs=csv_in)
    with right:
        fig = common.Figure()
        for name, part in sweep_h.groupby("name", sort=False):
            fig.add_scatter(x=part["cache_hit_rate"], y=part["total_usd"], name=name, mode="lines",
                            hovertemplate=name + "<br>hit rate %{x:.0%}: $%{y:,.0f} per month<extra></extra>")
        # No marker at the chosen rate: the chart then stays the same while only the hit rate moves (the
        # browser keeps it instead of drawing it anew); the caption under it names the rate.
        st.markdown(f"**Bill against prompt-cache hit rate at {dau:,.0f} DAU**")
        fig.update_layout(xaxis_title="prompt-cache hit rate", xaxis_tickformat=".0%", yaxis_title="USD per month")
        common.show_chart(fig, key="mb_hit_chart")
        st.caption(f"At the chosen {hit}% the tiers cost the bills above.")
        common.download_csv(sweep_h, "bill_vs_hit_rate.csv", key="mb_hit_csv", inputs=csv_in)


# The experiment buttons stay outside the fragment (a fragment rerun re-sends every element inside it; a
# button's full rerun runs the fragment as well).
common.experiment_buttons({
    "Defaults": DEFAULTS,
    "Cache hit 0%": {**DEFAULTS, "mb_hit": 0},
    "Cache hit 95%": {**DEFAULTS, "mb_hit": 95},
    "Remix 1/10 (blow-up)": {**DEFAULTS, "mb_remix": 10.0},
}, key="mb_exp")
bill_section()

st.subheader("The formula")
st.latex(r"\begin{aligned}\text{bill}_\text{API} &= 30\,G\,\big[\,((1-h)P + U)\,p_\text{in} + hP\,p_\text{hit}"
         r" + (1-h)P\,(m-1)\,p_\text{in} + O\,p_\text{out}\big] \\ G &= \text{DAU}\cdot(s_\text{remix}"
         r" + s_\text{create})\cdot g\end{aligned}")
st.latex(r"\begin{aligned}\text{bill}_\text{self} &= 720\,\text{h}\cdot \$_\text{replica/h}\cdot\max\!\Big(1,"
         r"\Big\lceil\frac{G\,t_\text{gen}\,\rho}{86\,400\,\text{s}}\Big\rceil\Big) \\ t_\text{gen} &= "
         r"\frac{(1-h)P + U}{\text{prefill tok/s}} + \frac{O}{\text{decode tok/s}}\end{aligned}")
st.markdown(
    "P: shared-prefix tokens, U: unique prompt tokens, O: output tokens, h: prompt-cache hit rate, "
    "m: cache-write multiplier, g: generations per creator, ρ: peak-to-average ratio. "
    "A miss bills the prefix at the base price and writes it to the cache (the surcharge m-1 where the "
    "provider charges for writes); a hit bills it at the cached price, about a tenth. That is why the "
    "input structure is worth designing: put everything shared first, keep it byte-identical, and the "
    "input bill falls with the hit rate. Output is never cached, so at high hit rates the output "
    "price dominates. The self-hosted bill is a staircase: one always-on replica even at zero traffic, "
    "then one more each time the peak outgrows the last. Prefix-cache hits skip prefill there too. "
    "The break-even DAU is the last point where the staircase crosses the API's straight line.")
