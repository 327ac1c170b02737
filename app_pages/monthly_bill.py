"""Monthly bill: API model tiers, prompt-cache hits, and when self-hosting wins (chapter 9, LLM inference, last part)."""
import streamlit as st

from calc import api_tiers, bill, bill_compare, product_traffic
from ui import bill_views, caching, energy, equations, formats, serving_views, sidebar, widgets
from ui.bill_views import DEFAULTS
from ui.formats import fmt_usd


@caching.bounded_cache(max_entries=64, max_bytes=16 * caching.MB)
def _tiers_and_verdict(scenario, tiers, setup, unit="DAU"):
    """``bill_compare.compare_tiers`` and its verdict (break-even traffic in ``unit``), cached on their inputs for
    every session (read-only)."""
    table = bill_compare.compare_tiers(scenario, tiers, setup)
    return table, bill_compare.verdict(table, unit)


@caching.bounded_cache(max_entries=64, max_bytes=32 * caching.MB)
def _sweeps(scenario, tiers, setup):
    """The bill against DAU and against the hit rate, and the DAU chart's points per tier, cached on their
    inputs for every session (read-only)."""
    sweep = bill_compare.bill_vs_dau(scenario, tiers, setup,  # the serving estimate's range beside its staircase
                                     with_range=setup is not None and setup.timing == "serving")
    return sweep, bill_compare.bill_vs_hit_rate(scenario, tiers, setup), bill_views.dau_chart_parts(sweep)


sel = sidebar.selection()
st.title("Monthly bill")
intro = widgets.page_intro()
intro.markdown(
    "Model selection at scale is unit economics (chapter 9, LLM inference). Each generation pays for its prompt "
    "and its output; a long **shared prefix** is served from the provider's prompt cache at about a tenth of the "
    "input price. Rented GPUs cost the same every hour: they lose at small traffic and win once the product takes off.")


@widgets.fragment
def bill_section() -> None:
    """Traffic, prices, the bill and its charts. A fragment: an input here reruns this part only, not the sidebar,
    the introduction or the formula."""

    top = st.container()  # a link's unreadable price edits are reported here, at the top, like other link messages
    inputs, results = st.columns([5, 6], gap="medium")
    with inputs:
        traffic = bill_views.traffic_inputs(sel)
        owning = energy.owning_inputs(sel.accelerator)
    dau, remix, orig, gens, hit = traffic.dau, traffic.remix, traffic.orig, traffic.gens, traffic.hit
    prefix, unique, out, batch, peak = traffic.prefix, traffic.unique, traffic.out, traffic.batch, traffic.peak

    edited, link = bill_views.price_editor(notice=top)

    complete, waiting = bill_views.complete_rows(edited)
    if waiting:
        st.info("Left out of the bill until their prices are filled in: " + ", ".join(waiting) + ".",
                icon=":material/edit_note:")
    try:
        scenario = product_traffic.TrafficScenario.from_percentages(dau, remix, orig, gens, prefix, unique, out, hit)
        tiers = api_tiers.tiers_from_frame(complete)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    setup, self_hosted_error = None, None
    try:
        setup = bill.SelfHostedSetup(sel.model, sel.accelerator, owning.gpu_hour_usd(sel.price_per_hour_usd), int(batch),
                                     float(peak), sel.weight_dtype, sel.kv_dtype, traffic.timing, traffic.engine)
        table, verdict = _tiers_and_verdict(scenario, tiers, setup, traffic.break_even_unit)
        rates = bill.self_hosted_rates(scenario, setup)
    except ValueError as exc:
        self_hosted_error, setup = exc, None
        table, verdict = _tiers_and_verdict(scenario, tiers, None, traffic.break_even_unit)

    with results:
        st.markdown(f"#### The bill at {dau:,.0f} {traffic.unit}")
        with widgets.metric_row(max(len(table), 1), per_row=3) as cols:  # three tiers to a row
            for col, row in zip(cols, table.itertuples()):
                col.metric(f"{row.name}", fmt_usd(row.total_usd), help=f"{row.model}: USD per month of 30 days")
                gpus = (f", {row.n_gpus:,.0f} GPU{'s' if round(row.n_gpus) != 1 else ''}; "
                        + serving_views.follows_text(traffic.timing, traffic.engine) if row.name == "self-hosted" else "")
                col.caption(f"{fmt_usd(row.per_generation_usd, significant=3)} per {traffic.per}{gpus}")
        bill_views.conventions_caption(scenario, tiers)
        bill_views.context_warning(scenario, sel.model)  # once, whether or not the self-hosted tier fits
        if traffic.plain:
            st.markdown(f"**{scenario.generations_per_day:,.0f} requests a day**, each {prefix:,} shared prompt tokens + "
                        f"{unique:,} unique ones in, {out:,} tokens out.")
        else:
            st.markdown(
                f"{dau:,.0f} daily users x ({remix:.2f}% who remix + {orig:.2f}% who create) = "
                f"**{scenario.creators_per_day:,.0f} creators a day**, x {gens:,g} generations each = "
                f"**{scenario.generations_per_day:,.0f} generations a day**. The other users only view and cost nothing.")
        widgets.show_equations([equations.bill_row(scenario, t, bill.api_monthly_bill(scenario, t).total_usd)
                               for t in tiers])
        if self_hosted_error:
            st.error(f"Self-hosted tier left out: {self_hosted_error}")
        st.success(formats.md_escape(verdict))  # names of models and tiers are the user's text

    csv_in = {"dau": dau, "remix_pct": remix, "create_pct": orig, "generations_per_creator": gens, "prefix_tokens": prefix,
              "unique_tokens": unique, "output_tokens": out, "cache_hit_pct": hit, "decode_batch": batch,
              "peak_to_average": peak, "price_edits": link or "none (the defaults)",
              "self_hosted_priced_with": serving_views.follows_text(traffic.timing, traffic.engine)}
    bill_views.bill_tables(table, csv_in, traffic.per, traffic.break_even_unit)

    if setup is not None:
        bill_views.self_hosted_note(scenario, setup, rates)
        bill_views.self_hosted_caption(sel, rates)
    sweep, sweep_h, dau_parts = _sweeps(scenario, tiers, setup)
    bill_views.bill_sweeps(sweep, sweep_h, dau, hit, csv_in, traffic.unit, dau_parts,
                           traffic.timing if setup is not None else None, traffic.engine)
    if setup is not None:  # API, rent or buy against the monthly volume, and where the money goes
        energy.owning_section(owning, rates, tiers, sel.price_per_hour_usd, peak)


# The experiment buttons stay outside the fragment (a fragment rerun re-sends every element inside it; a
# button's full rerun runs the fragment as well).
PRODUCT = {**DEFAULTS, "mb_mode": "a product's users"}  # the presets are in the product's terms
widgets.experiment_buttons({
    "Defaults": PRODUCT,
    "Cache hit 0%": {**PRODUCT, "mb_hit": 0},
    "Cache hit 95%": {**PRODUCT, "mb_hit": 95},
    "Remix 1/10 (blow-up)": {**PRODUCT, "mb_remix": 10.0},
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
