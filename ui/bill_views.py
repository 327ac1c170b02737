"""The monthly bill page's parts: the traffic inputs, the editable price table (its edits in the URL), the bill
by component with its tables, and the bill against DAU and against the prompt-cache hit rate.

The bills come from calc.bill; this module draws them.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from calc import api_tiers, bill, measurements, product_traffic
from ui import charts, columns, downloads, formats, html_table, serving_views, table_edits, workload_views

DEFAULTS = {"mb_dau": 100_000, "mb_remix": 1.0, "mb_orig": 0.1, "mb_gens": 5.0, "mb_prefix": 3000,
            "mb_unique": 500, "mb_out": 500, "mb_hit": 70, "mb_batch": 32, "mb_peak": 3.0}
COMPONENTS = {"input_missed_usd": "input, missed cache", "input_hit_usd": "input, cache hit",
              "cache_write_usd": "cache writes (surcharge)", "output_usd": "output", "idle_usd": "idle GPU time"}
COLORS = {"input_missed_usd": "#d62728", "input_hit_usd": "#2ca02c", "cache_write_usd": "#ff7f0e",
          "output_usd": "#1f77b4", "idle_usd": "#bbbbbb"}

#: Price-table columns and their short names in the URL parameter mb_prices ("out1=30": row 1's output price).
PRICE_PARAMS = {"name": "name", "model": "model", "input_usd_per_mtok": "in", "cached_input_usd_per_mtok": "hit",
                "output_usd_per_mtok": "out", "cache_write_multiplier": "write"}


def _chart_points(part):
    """The rows of one tier's bill-against-DAU sweep that the chart draws: every 20th DAU value (an API tier
    is a straight line on the log-log axes) and, for the self-hosted staircase, each row where the GPU count
    changes (with line_shape "hv" that is the same staircase). The CSV keeps every row."""
    i = np.arange(len(part))
    keep = (i % 20 == 0) | (i == len(part) - 1) | (part["n_gpus"].diff().fillna(0).to_numpy() != 0)
    return part[keep]


#: The self-hosted staircase at the ends of the serving estimate's range in the bill-against-DAU chart: the
#: names of its two parts in ``dau_chart_parts`` (the bill's low end, then its high end), and their one legend entry.
RANGE_PARTS = {"self-hosted, range low": "low", "self-hosted, range high": "high"}
RANGE_LEGEND = "self-hosted, serving-estimate range (low/high)"
RANGE_COLOR, RANGE_FILL = "#7f7f7f", "rgba(127, 127, 127, 0.2)"


PRICE_COLUMNS = ("input_usd_per_mtok", "cached_input_usd_per_mtok", "output_usd_per_mtok")


def complete_rows(edited: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
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
            waiting.append(f"{formats.md_escape(str(edited['name'].iloc[i]).strip())} ({missing})")
    complete = edited[~(named & lacking.any(axis=1))].copy()
    if "cache_write_multiplier" in complete.columns:
        complete["cache_write_multiplier"] = complete["cache_write_multiplier"].fillna(1.0)
    return complete, waiting


@dataclass(frozen=True)
class Traffic:
    """The traffic and self-hosting inputs: daily users, the shares who remix and create (%), generations per
    creator, the prompt-cache hit rate (%), tokens per generation (shared prefix, unique, output), decode
    batch and peak-to-average ratio, and how self-hosting is timed (``calc.bill.TIMINGS``) with which engine."""

    dau: int
    remix: float
    orig: float
    gens: float
    hit: int
    prefix: int
    unique: int
    out: int
    batch: int
    peak: float
    plain: bool = False
    timing: str = "serving"
    engine: str = "vllm"

    @property
    def unit(self) -> str:
        """What the traffic's first number counts: "requests a day" (plain) or "daily users" (the product's terms)."""
        return "requests a day" if self.plain else "daily users"

    @property
    def break_even_unit(self) -> str:
        """The traffic's first number in a break-even figure: "DAU", or "requests a day" (plain)."""
        return "requests a day" if self.plain else "DAU"

    @property
    def per(self) -> str:
        """What one bill's "per ..." figure is per: "request" (plain) or "generation" (the product's terms)."""
        return _per(self.plain)


def _per(plain: bool) -> str:
    """"request" for traffic in plain requests a day, else "generation" (the product's terms)."""
    return "request" if plain else "generation"


def _requests_from_users() -> None:
    """On switching the traffic to requests a day: start the count from the product's traffic as entered (daily
    users x (remix % + create %) x generations per creator), so the bill stays the same until the user changes
    it, instead of the default 5,500."""
    ss = st.session_state
    if ss.get("mb_mode") != "requests a day":
        return
    entered = [ss.get(k, DEFAULTS[k]) for k in ("mb_dau", "mb_remix", "mb_orig", "mb_gens", "mb_prefix", "mb_unique",
                                                "mb_out", "mb_hit")]
    try:
        per_day = product_traffic.TrafficScenario.from_percentages(*entered).generations_per_day
    except ValueError:  # traffic the bill refuses anyway: the box keeps its own value
        return
    ss["mb_rpd"] = int(round(min(per_day, 10_000_000_000)))


def traffic_inputs(sel) -> Traffic:
    """The traffic inputs and the self-hosting ones (keys mb_*, in the URL), where the caller placed them."""
    st.markdown("**Traffic**")
    plain = st.radio("Traffic in", ["a product's users", "requests a day"], key="mb_mode", bind="query-params",
                     horizontal=True, on_change=_requests_from_users,
                     help="A product's users: daily users, the shares who remix and create, and "
                     "generations per creator (one product's terms). Requests a day: the plain count of generations.")
    plain = plain == "requests a day"
    per = _per(plain)
    if plain:  # one generation per "user", all of them generating: the bill's arithmetic is unchanged
        dau = st.number_input("Requests per day", 0, 10_000_000_000, 5_500, step=1_000, key="mb_rpd",
                              bind="query-params", help="Generations a day; tokens per request below")
        remix, orig, gens = 0.0, 100.0, 1.0
        c2 = st.container()   # nothing beside the hit rate here: it takes the row (half of it left an empty column)
    else:
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
    hit = workload_views.hit_rate_input(c2, DEFAULTS["mb_hit"])  # by hand, or derived from a workload's replay
    c1, c2, c3 = st.columns(3)
    prefix = c1.number_input("Prefix tokens", 0, 10_000_000, DEFAULTS["mb_prefix"], step=500, key="mb_prefix",
                             bind="query-params", help=f"Shared, cacheable prompt prefix: tokens per {per}")
    unique = c2.number_input("Unique tokens", 0, 10_000_000, DEFAULTS["mb_unique"], step=100, key="mb_unique",
                             bind="query-params", help=f"Prompt tokens unique to each {per}")
    out = c3.number_input("Output tokens", 1, 10_000_000, DEFAULTS["mb_out"], step=100, key="mb_out",
                          bind="query-params", help=f"Output tokens per {per}")
    st.markdown(f"**Self-hosting** {formats.md_escape(sel.model.name)} on {sel.accelerator.name} (the sidebar's model and GPU)")
    c1, c2 = st.columns(2)
    batch = c1.number_input("Decode batch", 1, 4096, DEFAULTS["mb_batch"], step=8, key="mb_batch",
                            bind="query-params", help="Sequences decoded together (clamped to what fits)")
    peak = c2.number_input("Peak / average", 1.0, 100.0, DEFAULTS["mb_peak"], step=0.5, key="mb_peak",
                           bind="query-params", help="Capacity is sized for the peak hour")
    timing, engine = serving_views.timing_select("mb")
    return Traffic(dau, remix, orig, gens, hit, prefix, unique, out, batch, peak, plain, timing, engine)


def price_editor(notice=None) -> tuple[pd.DataFrame, str]:
    """The editable price table and the URL parameter mb_prices that carries its edits; returns (the edited
    table, the edits as mb_prices text, "" when none). ``notice``: where a link's unreadable edits are reported
    (a container at the top of the page, where the other link messages show; default: above the table)."""
    st.subheader("Prices, USD per 1M tokens")
    st.caption(f"Defaults from the providers' price pages, transcribed {api_tiers.prices_read_on()} "
               "(dates and sources in the last columns). Edit any cell; add rows for more tiers. "
               "Cache-write multiplier: write price / base input price (Anthropic 5-minute writes 1.25; "
               "1.0 = writes free, as for OpenAI before GPT-5.6 and Gemini's implicit cache).")
    # The edited cells travel in the URL (mb_prices, e.g. "out1=30"; st.data_editor cannot bind to it). The
    # editor's base table is fixed while the editor lives (its edits are kept relative to it), and read from
    # the link, or from this session's last edits, when the editor is drawn anew.
    default_prices = api_tiers.tiers_to_frame(api_tiers.default_tiers())
    if "mb_prices" not in st.session_state or "_mb_prices_base" not in st.session_state:
        link = st.query_params.get("mb_prices", st.session_state.get("_mb_prices_link", ""))
        try:
            st.session_state["_mb_prices_base"] = table_edits.apply_table_edits(default_prices, link, PRICE_PARAMS)
        except ValueError as exc:
            (notice or st).warning(f"The link's price edits could not be read ({formats.md_escape(exc)}); the default "
                                   "prices are shown.")
            st.session_state["_mb_prices_base"] = default_prices
    edited = st.data_editor(
        st.session_state["_mb_prices_base"], key="mb_prices", num_rows="dynamic", hide_index=True,
        width="stretch", column_config={
            # widths in pixels that sum to about 760, inside the main column at a 1280-pixel window, so the table does not
            # scroll sideways there; a long source shows whole on hover and in the cell editor
            "name": st.column_config.TextColumn("tier", required=True, width=88, help="A short name: the model's, or your own"),
            "model": st.column_config.TextColumn("model", width=112),
            "input_usd_per_mtok": st.column_config.NumberColumn("in $/1M", min_value=0.0, format="%.3f", width=76, help="Base (uncached) input price, USD per 1M tokens"),
            "cached_input_usd_per_mtok": st.column_config.NumberColumn("hit $/1M", min_value=0.0, format="%.3f", width=76, help="Price of an input token read from the prompt cache, USD per 1M"),
            "output_usd_per_mtok": st.column_config.NumberColumn("out $/1M", min_value=0.0, format="%.3f", width=76, help="Output price, USD per 1M tokens"),
            "cache_write_multiplier": st.column_config.NumberColumn("write x", min_value=1.0, format="%.2f", width=64, help="Cache-write price / base input price"),
            "as_of": st.column_config.TextColumn("as of", width=128),  # "2026 (later snapshot)" whole
            "source": st.column_config.TextColumn("source", width=100, help="Where the prices were read: the whole "
                                                  "text shows on hover and when the cell is opened"),
        })

    link = table_edits.encode_table_edits(default_prices, edited, PRICE_PARAMS)
    st.session_state["_mb_prices_link"] = link
    if link:
        st.query_params["mb_prices"] = link
    elif "mb_prices" in st.query_params:
        del st.query_params["mb_prices"]
    return edited, link


#: Beside the API tiers: the price data carries no context or output limit per tier, so none is checked.
API_LIMITS = ("The API models' own context and output limits are not checked (the price table carries none): "
              "each tier is priced at any prompt and output length.")


def conventions_caption(scenario, tiers) -> None:
    """One caption naming, per API tier, the convention its bill follows (long-context tier or base, the
    cache-write multiplier, batch / off-peak), from ``PriceTier.convention``, and that the API models' own
    context limits are not checked (``API_LIMITS``)."""
    lines = [f"{formats.md_escape(t.name)}: {formats.md_escape(t.convention(scenario))}" for t in tiers]
    st.caption("Billed as: " + " · ".join(lines) + ". A prompt above a long-context threshold bills the whole "
               "request at the higher rates (input and output). " + API_LIMITS)


def bill_tables(table: pd.DataFrame, csv_in: dict, per: str = "generation", unit: str = "DAU") -> None:
    """The bill by component: a stacked bar per tier, the table (every column in an expander) and its CSV.
    ``per``: what the "per ..." column is per, "generation" or "request" (``Traffic.per``); ``unit``: what the
    traffic counts, "DAU" or "requests a day" (``Traffic.break_even_unit``): the break-even column is in it, and
    the bill per DAU is shown only for users (per request a day it would repeat the bill per request x 30)."""
    fig = charts.Figure()
    for comp, label in COMPONENTS.items():
        fig.add_bar(x=table["name"], y=table[comp], name=label, marker_color=COLORS[comp], customdata=table["model"],
                    hovertemplate="%{x} (%{customdata})<br>" + label + ": $%{y:,.0f} per month<extra></extra>")
    st.markdown("**Monthly bill by component**")
    fig.update_layout(barmode="stack", xaxis_title="tier",
                      yaxis_title="USD per month (30 days)")
    charts.show_chart(fig, key="mb_bars")

    even = f"self-hosting cheaper from ({unit})" if unit != "DAU" else "self-hosting cheaper from DAU"
    shown = table.rename(columns={"name": "tier", "break_even_dau": even})
    if even in shown:  # words, not a grid's "None": never, or not a question (itself)
        shown[even] = ["—" if tier == "self-hosted" else ("never" if pd.isna(d) else f"{d:,.0f}")
                       for tier, d in zip(shown["tier"], shown[even])]
    BILL_USD = {"input_missed_usd": "input, cache miss", "input_hit_usd": "input, cache hit",
                "cache_write_usd": "cache writes", "output_usd": "output", "idle_usd": "idle GPUs",
                "total_usd": "total / month"}
    # Dollars as formats.fmt_usd writes them: whole dollars from $100, cents below, 3 significant digits below $1
    money = [*BILL_USD, "per_dau_usd", "per_generation_usd"]
    shown = shown.assign(**{c: [formats.fmt_usd(v, significant=3) for v in shown[c]] for c in money if c in shown})
    if "n_gpus" in shown:  # an API tier rents no GPU: a dash, not a count of 0
        shown["n_gpus"] = ["—" if tier != "self-hosted" else f"{n:,.0f}" for tier, n in zip(shown["tier"], shown["n_gpus"])]
    bill_columns = {c: st.column_config.TextColumn(label) for c, label in BILL_USD.items()} | {
        "per_dau_usd": st.column_config.TextColumn("per DAU / month"),
        "tier": st.column_config.TextColumn("tier", pinned=True), "model": st.column_config.TextColumn("model", width="medium"),
        "per_generation_usd": st.column_config.TextColumn(f"per {per}"),
        "n_gpus": columns.text_column("n_gpus", unit_in_cells=False,
                                      help="GPUs rented by the self-hosted tier (an API tier rents none)"),
        even: st.column_config.TextColumn(even)}
    # The key columns fit at 1280 px; the parts of each bill and the models are one click away.
    html_table.show_table(shown, hide_index=True, width="stretch", column_config=bill_columns, column_order=(
        "tier", "total_usd", "per_generation_usd", *(["per_dau_usd"] if unit == "DAU" else []), "n_gpus", even))
    # Built only while open (toggling reruns the page): a slider move redraws no hidden table.
    every = st.expander("Every column: the models and the bill's parts (they add up to the total above)", key="mb_every",
                        on_change="rerun")
    if every.open:
        html_table.show_table(shown, container=every, hide_index=True, width="stretch", column_config=bill_columns, column_order=(
            "tier", "model", *COMPONENTS))
    downloads.download_csv(table, "monthly_bill.csv", key="mb_csv", inputs=csv_in)


def self_hosted_caption(sel, rates) -> None:
    """What the self-hosted tier runs: replica, price, batch, context and its rates, and which timing they follow
    (roofline bounds, or the serving estimate beside the bound)."""
    est = rates.estimate
    if est is None:
        speed = (f"{serving_views.DECODE_ONLY}: {formats.fmt_number(rates.decode_tokens_per_s)} tok/s "
                 f"({formats.fmt_usd(rates.output_usd_per_mtok)} per 1M output tokens when busy), "
                 f"{formats.fmt_number(rates.prefill_tokens_per_s)} prompt tok/s "
                 f"({formats.fmt_usd(rates.input_usd_per_mtok)} per 1M). Roofline lower bounds (a real server is "
                 "1.2-2x slower).")
    else:
        speed = (f"{formats.fmt_number(est.output_tokens_per_s_per_gpu * rates.gpus_per_replica)} output tok/s by the "
                 f"serving estimate ({measurements.engine_name(est.engine)}; range "
                 f"{formats.fmt_number(est.per_gpu_low * rates.gpus_per_replica)} - "
                 f"{formats.fmt_number(est.per_gpu_high * rates.gpus_per_replica)}; the bound's "
                 f"{formats.fmt_number(est.bound_output_tokens_per_s_per_gpu * rates.gpus_per_replica)}), every prompt "
                 f"prefilled; decode priced at its {serving_views.DECODE_ONLY}: "
                 f"{formats.fmt_number(rates.decode_tokens_per_s)} tok/s "
                 f"({formats.fmt_usd(rates.output_usd_per_mtok)} per 1M output tokens when busy, prefill not included), "
                 f"prompt tokens that miss the prefix cache at the bound's {formats.fmt_number(rates.prefill_tokens_per_s)} "
                 "tok/s.")
    st.caption(
        f"Self-hosted: {formats.md_escape(sel.model.name)} on {rates.gpus_per_replica} x {sel.accelerator.name} per replica"
        + (f" (tensor-parallel, TP {rates.gpus_per_replica}, all-reduces included; the Many GPUs page plans other "
           "layouts)" if rates.gpus_per_replica > 1 else "") + " at "
        f"{formats.fmt_usd(rates.replica_price_per_hour_usd)}/h, batch {rates.batch} at a "
        f"{rates.context_len:,}-token context: {speed} {formats.md_escape(sel.model.name)}, "
        f"{sel.model.n_params / 1e9:,.1f} B parameters, is "
        "priced here beside the API tiers' models, not measured against them: compare quality before price.")


def self_hosted_note(scenario, setup, rates, key: str = "mb") -> None:
    """Under the bill: which timing the self-hosted tier follows, its range, the other timing's bill and the
    replica's TPOT breakdown (``serving_views.self_hosted_pricing``), from ``calc.bill``. A context past the
    model's trained one is not warned of here: ``context_warning`` does it once, by the bill."""
    other = dataclasses.replace(setup, timing="bound" if setup.timing == "serving" else "serving")
    try:
        other_rates = bill.self_hosted_rates(scenario, other)
        other_usd, other_error = bill.self_hosted_monthly_bill(scenario, other, other_rates).total_usd, None
    except ValueError as exc:
        other_rates, other_usd, other_error = None, None, exc
    bills = [b.total_usd for b in bill.self_hosted_bill_range(scenario, setup, rates)]
    serving_rates = rates if setup.timing == "serving" else other_rates
    serving_views.self_hosted_pricing(setup.timing, setup.engine, bills, other_usd, serving_rates, key,
                                      other_error=other_error, rates=rates, warn_context=False)


def context_warning(scenario, model) -> None:
    """One warning by the bill when a generation's prompt and output run past the self-hosted ``model``'s trained
    context (``calc.bill.generation_context_notice``), whether or not the model fits on the GPUs; nothing
    otherwise."""
    notice = bill.generation_context_notice(scenario, model)
    if notice:
        st.warning(f"Self-hosted tier: {formats.md_escape(notice)}.", icon=":material/warning:")


def dau_chart_parts(sweep: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(tier name, the rows its line draws: ``_chart_points``) for each tier of a ``bill_vs_dau`` sweep, in
    the sweep's order; after the self-hosted staircase, where the sweep carries the serving estimate's range
    (``calc.bill_compare.RANGE_COLUMNS``), the staircase at the range's low and high ends (``RANGE_PARTS``, with
    columns dau, total_usd, n_gpus). A page computes them once per sweep beside the sweep (they depend on
    nothing else)."""
    parts = []
    for name, part in sweep.groupby("name", sort=False):
        parts.append((name, _chart_points(part)))
        # after the staircase, so that it keeps the colour it has in the other charts (the theme's colours go to
        # the lines in turn); the range's thin lines show it beneath them
        if name == "self-hosted" and "total_low_usd" in part:
            for label, end in RANGE_PARTS.items():
                at_end = part[["dau", f"total_{end}_usd", f"n_gpus_{end}"]].set_axis(["dau", "total_usd", "n_gpus"],
                                                                                      axis=1)
                at_end["n_gpus"] = at_end["n_gpus"].to_numpy(dtype=np.int64)  # whole GPUs on the self-hosted rows
                parts.append((label, _chart_points(at_end)))
    return parts


def dau_caption(timing: str | None, engine: str = "vllm") -> str:
    """The words under the bill-against-DAU chart on the self-hosted staircase's range: drawn at the serving
    estimate's two ends, or none with the roofline bound. "" without a self-hosted tier (``timing`` None)."""
    if timing is None:
        return ""
    if timing == "serving":
        return ("Self-hosted: the solid staircase follows the serving estimate "
                f"({measurements.engine_name(engine)}); the dashed staircases and the band between them are the bill at "
                "the two ends of its throughput range (the high throughput rents the fewest GPUs, the low the most).")
    return ("Self-hosted: the staircase follows the roofline bound, which has no range (the least time the GPUs "
            "could take); price self-hosting with the serving estimate to see its range.")


def bill_sweeps(sweep: pd.DataFrame, sweep_h: pd.DataFrame, dau: int, hit: int, csv_in: dict,
                unit: str = "daily users", dau_parts: list[tuple[str, pd.DataFrame]] | None = None,
                timing: str | None = None, engine: str = "vllm") -> None:
    """Two charts side by side: the bill against DAU (log-log), and against the prompt-cache hit rate.
    ``dau_parts``: ``dau_chart_parts(sweep)`` when the caller has it (computed here otherwise). ``timing``,
    ``engine``: what the self-hosted staircase follows (``Traffic.timing``; None without a self-hosted tier), for
    the caption on its range (``dau_caption``); the range itself is drawn where the sweep carries it."""
    left, right = st.columns(2)
    with left:
        fig = charts.Figure()
        parts = dau_chart_parts(sweep) if dau_parts is None else dau_parts
        for name, part in parts:
            end = RANGE_PARTS.get(name)
            if end is not None:  # a thin dashed staircase; the high end fills the band down to the low one. Grey in
                # either theme: the tiers take the theme's colours in turn, and the range is no tier of its own
                fig.add_scatter(x=part["dau"], y=part["total_usd"], name=RANGE_LEGEND, mode="lines", line_shape="hv",
                                line=dict(color=RANGE_COLOR, dash="dash", width=1), legendgroup="range",
                                showlegend=end == "low", fill="tonexty" if end == "high" else None,
                                fillcolor=RANGE_FILL, customdata=part["n_gpus"],
                                hovertemplate=f"self-hosted, serving-estimate range ({end} end)<br>%{{x:,.0f}} {unit}: "
                                "$%{y:,.0f} per month<br>%{customdata} GPUs<extra></extra>")
                continue
            fig.add_scatter(x=part["dau"], y=part["total_usd"], name=name, mode="lines",
                            line_shape="hv" if name == "self-hosted" else "linear", customdata=part["n_gpus"],
                            hovertemplate=name + "<br>%{x:,.0f} " + unit + ": $%{y:,.0f} per month"
                            + ("<br>%{customdata} GPUs" if name == "self-hosted" else "") + "<extra></extra>")
        fig.add_vline(x=max(dau, 10), line_dash="dot", line_color="gray")
        st.markdown(f"**Bill against {unit}**")
        fig.update_layout(xaxis_title=f"{unit} (log)",
                          yaxis_title="USD per month (log)", xaxis_type="log", yaxis_type="log")
        charts.show_chart(fig, key="mb_dau_chart")
        words = dau_caption(timing, engine)
        if words:
            st.caption(words)
        downloads.download_csv(sweep, "bill_vs_dau.csv", key="mb_dau_csv", inputs=csv_in)
    with right:
        fig = charts.Figure()
        for name, part in sweep_h.groupby("name", sort=False):
            fig.add_scatter(x=part["cache_hit_rate"], y=part["total_usd"], name=name, mode="lines",
                            hovertemplate=name + "<br>hit rate %{x:.0%}: $%{y:,.0f} per month<extra></extra>")
        # No marker at the chosen rate: the chart then stays the same while only the hit rate moves (the
        # browser keeps it instead of drawing it anew); the caption under it names the rate.
        st.markdown(f"**Bill against prompt-cache hit rate at {dau:,.0f} {unit}**")
        fig.update_layout(xaxis_title="prompt-cache hit rate", xaxis_tickformat=".0%", yaxis_title="USD per month")
        charts.show_chart(fig, key="mb_hit_chart")
        st.caption(f"At the chosen {hit}% the tiers cost the bills above.")
        downloads.download_csv(sweep_h, "bill_vs_hit_rate.csv", key="mb_hit_csv", inputs=csv_in)
