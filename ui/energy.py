"""Energy, carbon and ownership on the pages: the inputs (board power, PUE, grid; buying a server), the
J/token and CO2 columns beside $/1M, the API / rent / buy crossover chart and where the money goes.
Every number comes from calc.energy and calc.ownership; this module only lays out and formats."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import calc
from calc import energy, ownership
from ui import caching, charts, columns, figure_style, formats, serving_views, url_state, widgets

GRID = energy.grid_intensities()
GRID_CODES = list(GRID["code"])
_GRID_LABEL = {r.code: f"{r.region} ({r.g_per_kwh:,.0f} g/kWh, {r.year})" for r in GRID.itertuples()}
_BASIS = {"tdp": "limit (TDP)", "measured": "measured"}
_E = energy.energy_defaults()
_O = ownership.ownership_defaults()


@dataclass(frozen=True)
class EnergyChoice:
    """The energy inputs of a page: board watts (None: no figure on file), which figure (note), the
    server's other watts per GPU, PUE, grid region and its intensity."""

    gpu_power_w: float | None
    note: str
    other_power_w_per_gpu: float
    pue: float
    region: str
    g_per_kwh: float

    def wall_power_w(self, n_gpus: int = 1) -> float | None:
        """Watts at the wall for ``n_gpus`` boards (calc.energy.wall_power_w), None without a board figure."""
        if self.gpu_power_w is None:
            return None
        return energy.wall_power_w(self.gpu_power_w, n_gpus, self.other_power_w_per_gpu, self.pue)


def energy_inputs(accelerator: calc.Accelerator, key: str = "en") -> EnergyChoice:
    """An expander with the energy inputs (keys ``<key>_*`` in the URL); returns the choice."""
    box = st.expander("Energy and carbon: board power, the rest of the server, PUE, grid")
    url_state.accept_url_values(f"{key}_basis", energy.POWER_BASES, _BASIS.get)  # links may say "measured"
    basis = box.radio("Board power", energy.POWER_BASES, key=f"{key}_basis", bind="query-params", horizontal=True,
                     format_func=_BASIS.get,
                     help="Limit: the board's TDP, what compute-bound steps approach (an upper bound for a "
                          "memory-bound decode). Measured: a public reading under an inference load, where one is on file.")
    c2, c3, c4 = box.columns(3)
    typed = c2.number_input("Or type the board's watts", 0.0, energy.MAX_BOARD_POWER_W, 0.0, step=10.0, key=f"{key}_w",
                            bind="query-params", help="0: the preset's figure.")
    other = c3.number_input("Rest of the server (W per GPU)", 0.0, energy.MAX_OTHER_POWER_W,
                            float(_E["other_power_w_per_gpu"]["value"]), step=25.0, key=f"{key}_other",
                            bind="query-params", help=_E["other_power_w_per_gpu"]["source"])
    pue = c4.number_input("PUE", energy.MIN_PUE, energy.MAX_PUE, float(_E["pue"]["value"]), step=0.01,
                          key=f"{key}_pue", bind="query-params", help=_E["pue"]["source"])
    url_state.accept_url_values(f"{key}_grid", GRID_CODES, _GRID_LABEL.get)        # and "FRA"
    region = box.selectbox("Grid", GRID_CODES, index=GRID_CODES.index("USA"), key=f"{key}_grid", bind="query-params",
                           format_func=_GRID_LABEL.get,
                           help=f"gCO2e per kWh generated. {energy.grid_source()['source']}; "
                                f"{energy.grid_source()['license']}.")
    if typed:
        watts, note = float(typed), f"{typed:,.0f} W per board, as typed"
    else:
        note = energy.power_note(accelerator, basis)
        try:
            watts = energy.board_power_w(accelerator, basis)
        except ValueError:
            watts = None
    box.caption(f"Board power: {note}")
    return EnergyChoice(watts, note, float(other), float(pue), region, energy.grid_intensity_g_per_kwh(region))


def with_energy(df: pd.DataFrame, choice: EnergyChoice, n_gpus: int = 1, price_per_hour_usd: float | None = None):
    """``df`` (a sweep with tokens_per_s) with j_per_token, tokens_per_kwh and co2_g_per_million, and
    usd_per_million when a price is given and the frame lacks it; unchanged columns without a power figure."""
    out = df.copy()
    if price_per_hour_usd is not None and "usd_per_million" not in out:
        out["usd_per_million"] = calc.cost_per_million(out["tokens_per_s"].to_numpy(), price_per_hour_usd)
    wall = choice.wall_power_w(n_gpus)
    if wall is None or out.empty:
        return out
    e = energy.energy_table(out["tokens_per_s"].to_numpy(), wall, choice.g_per_kwh)
    out["j_per_token"] = e["j_per_token"].to_numpy()
    out["tokens_per_kwh"] = e["tokens_per_kwh"].to_numpy()
    out["co2_g_per_million"] = e["co2_kg_per_million"].to_numpy() * 1e3
    return out


#: Column configurations of the energy columns (labels and formats: ui.columns).
ENERGY_COLUMNS = columns.config(("usd_per_million", "j_per_token", "tokens_per_kwh", "co2_g_per_million"))


def three_digits(x: float) -> str:
    """Three significant digits written out, with separators and no exponent: "9,140", "85.2", "0.222"
    ("9.14e+03" is not a number a reader takes in); "n/a" for NaN or an infinity."""
    x = float(x)
    if not np.isfinite(x):
        return "n/a"
    rounded = float(f"{x:.3g}")  # 999.6 -> 1000.0: then written "1,000"
    if abs(rounded) >= 1000:
        return f"{rounded:,.0f}"
    return f"{rounded:g}" if abs(rounded) >= 1e-4 or x == 0 else formats.fmt_number(x)  # 0.000012, not 1.2e-05


def energy_sentence(tokens_per_s: float, choice: EnergyChoice, n_gpus: int = 1, label: str = "") -> str:
    """ "0.222 J per output token (16.2M tokens per kWh), 23.8 g CO2e per 1M tokens on the United States grid"
    or what is missing."""
    wall = choice.wall_power_w(n_gpus)
    if wall is None:
        return f"Energy: {choice.note}"
    e = energy.energy_table([tokens_per_s], wall, choice.g_per_kwh).iloc[0]
    where = _GRID_LABEL[choice.region].split(" (")[0]
    return (f"Energy{label}: **{three_digits(e.j_per_token)} J per output token** "
            f"({formats.fmt_number(e.tokens_per_kwh)} tokens per kWh), {three_digits(e.co2_kg_per_million * 1e3)} g CO2e per 1M tokens on the {where} grid: "
            f"{n_gpus} x ({choice.gpu_power_w:,.0f} W board + {choice.other_power_w_per_gpu:,.0f} W rest of the server) "
            f"x PUE {choice.pue:g} = {wall:,.0f} W at the wall over {formats.fmt_number(tokens_per_s)} tok/s.")


def price_and_energy(tokens_per_s: float, price_per_hour_usd: float, choice: EnergyChoice, label: str = "") -> str:
    """ "Price: $0.51 per 1M output tokens at $3.99/h (bound). Energy ...": USD per 1M (calc.cost_per_million)
    beside ``energy_sentence``."""
    usd = calc.cost_per_million(tokens_per_s, price_per_hour_usd)
    return (f"Price: {formats.fmt_usd(usd)} per 1M output tokens at {formats.fmt_usd(price_per_hour_usd)}/h (bound). "
            + energy_sentence(tokens_per_s, choice, label=label))


# -- buying against renting against an API (the monthly bill) -------------------------------------------

class NoPowerFigure(ValueError):
    """No board power is on file for the accelerator and none was typed: buying cannot be priced (a gap in the
    data, said as information, not an error of the user's)."""


def buy_inputs(accelerator: calc.Accelerator, choice: EnergyChoice, key: str = "own"):
    """An expander with the purchase inputs; returns (OwnershipInputs, utilisation, scale_to_zero).

    Raises:
        NoPowerFigure: no board power on file for the accelerator and none typed.
        ValueError: an input calc refuses (the page shows the message).
    """
    box = st.expander("Buying: server price, depreciation, capital, space, electricity, utilisation")
    c1, c2 = box.columns(2)  # two to a row: three split "Depreciation" mid-word in a 700 px window
    price = c1.number_input("Server price per GPU (USD)", 1.0, ownership.MAX_SERVER_PRICE_USD_PER_GPU,
                            float(_O["server_price_usd_per_gpu"]["value"]), step=1000.0, key=f"{key}_price",
                            bind="query-params", help=_O["server_price_usd_per_gpu"]["source"])
    years = c2.number_input("Depreciation (years)", 0.5, ownership.MAX_DEPRECIATION_YEARS,
                            float(_O["depreciation_years"]["value"]), step=0.5, key=f"{key}_years",
                            bind="query-params", help=_O["depreciation_years"]["source"])
    c1, c2 = box.columns(2)
    rate = c1.number_input("Cost of capital (% a year)", 0.0, 100.0, 100 * float(_O["cost_of_capital"]["value"]),
                           step=0.5, key=f"{key}_rate", bind="query-params", help=_O["cost_of_capital"]["source"])
    colo = c2.number_input("Colocation (USD per kW-month)", 0.0, ownership.MAX_COLOCATION_USD_PER_KW_MONTH,
                           float(_O["colocation_usd_per_kw_month"]["value"]), step=5.0, key=f"{key}_colo",
                           bind="query-params", help=_O["colocation_usd_per_kw_month"]["source"])
    c1, c2 = box.columns(2)
    kwh = c1.number_input("Electricity (USD per kWh)", 0.001, ownership.MAX_ELECTRICITY_USD_PER_KWH,
                          float(_O["electricity_usd_per_kwh"]["value"]), step=0.01, format="%.3f", key=f"{key}_kwh",
                          bind="query-params", help=_O["electricity_usd_per_kwh"]["source"])
    util = c2.slider("Busy share of hours", 0.05, 1.0, float(_O["utilisation"]["value"]), step=0.05, key=f"{key}_util",
                     bind="query-params", help=_O["utilisation"]["source"])
    zero = box.toggle("Scale to zero when idle (rent: pay busy hours only; own: power off)", key=f"{key}_zero",
                      bind="query-params")
    if choice.gpu_power_w is None:
        raise NoPowerFigure(f"Buying is not priced: {choice.note[:1].lower()}{choice.note[1:].rstrip('.')} under "
                            "'Or type the board's watts' in the energy inputs above to compare buying with renting. "
                            "The rented bill needs no power figure.")
    inputs = ownership.OwnershipInputs.for_accelerator(
        accelerator, server_price_usd_per_gpu=price, depreciation_years=years, cost_of_capital=rate / 100.0,
        colocation_usd_per_kw_month=colo, electricity_usd_per_kwh=kwh, gpu_power_w=choice.gpu_power_w,
        other_power_w_per_gpu=choice.other_power_w_per_gpu, pue=choice.pue)
    return inputs, float(util), bool(zero)


def money_breakdown(rent_price: float, inputs, util: float, scale_to_zero: bool, tokens_per_s_per_gpu: float) -> pd.DataFrame:
    """Where the money goes, USD per 1M output tokens: rows rent and buy, columns hardware, energy, space."""
    rows = []
    for name, cost in (("rent", ownership.rented_cost_per_gpu_hour(rent_price, util, scale_to_zero)),
                       ("buy", ownership.owned_cost_per_gpu_hour(inputs, util, scale_to_zero))):
        per = ownership.usd_per_million_tokens(cost, tokens_per_s_per_gpu, util)
        rows.append({"option": name, "hardware": per["hardware_usd"],
                     "energy": per["energy_usd"], "space": per["space_usd"], "total": per["total_usd"],
                     "usd_per_gpu_hour": cost.total_usd})
    return pd.DataFrame(rows)


def tokens(n: float) -> str:
    """A token count as "950k", "28.7M", "1.2B", "3.4T"."""
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            return f"{n / div:,.3g}{suffix}"
    return f"{n:,.0f}"


def _crossover(tps: float, n: int, api_usd_per_mtok: float, rent_price: float, inputs, util: float,
               scale_to_zero: bool, peak_to_average: float):
    """What ``crossover_section`` draws, from calc.ownership: the (api, rent, buy) lines, their curves, the
    volume from which rent and buy beat the API, the utilisation below which buying beats renting, and the
    money breakdown. Memoised across sessions (``caching.cached_call``): a move of the bill's other inputs
    leaves these unchanged, so the page does not rebuild them. Raises ValueError as the calc functions."""
    lines = ownership.serving_lines(tps, n, api_usd_per_mtok, rent_price, inputs, 1.0 / peak_to_average, scale_to_zero)
    api, rent, buy = lines
    return (lines, ownership.cost_curves(lines), [ownership.crossover_volume(ln, api) for ln in (rent, buy)],
            ownership.buy_beats_rent_utilisation(rent, buy), money_breakdown(rent_price, inputs, util, scale_to_zero, tps / n))


def crossover_section(rates, api_name: str, api_usd_per_mtok: float, rent_price: float, inputs, util: float,
                      scale_to_zero: bool, peak_to_average: float, choice: EnergyChoice, key: str = "own") -> None:
    """The API / rent / buy cost lines over monthly output tokens, their crossovers, and where the money goes."""
    tps, n = rates.decode_tokens_per_s, rates.gpus_per_replica
    lines, curves, volumes, share, parts = caching.cached_call(
        _crossover, float(tps), int(n), float(api_usd_per_mtok), float(rent_price), inputs, float(util),
        bool(scale_to_zero), float(peak_to_average))   # shared, read-only
    api, rent, buy = lines
    fig = charts.Figure()
    for ln, color in ((api, "#1f77b4"), (rent, "#ff7f0e"), (buy, "#2ca02c")):
        label = api_name if ln is api else ln.name
        fig.add_scatter(x=curves["tokens_per_month"], y=curves[ln.name], name=label, mode="lines",
                        line=dict(color=color, shape="hv" if ln.capacity_tokens_per_month else "linear"),
                        hovertemplate=label + "<br>%{x:.3s} tokens a month: $%{y:,.0f}<extra></extra>")
    said = []
    for ln, v in zip((rent, buy), volumes):
        said.append(f"{'renting' if ln is rent else 'buying'} beats {api_name} from "
                    + ("no volume" if v is None else f"{tokens(v)} output tokens a month"))
        if v:
            charts.add_marker_line(fig, v, f"{ln.name} = API at {tokens(v)}", "#ff7f0e" if ln is rent else "#2ca02c")
    vals, _ = figure_style.log_ticks(float(curves["tokens_per_month"].min()), float(curves["tokens_per_month"].max()))
    fig.update_xaxes(type="log", title="output tokens per month (log)", tickvals=vals, ticktext=[tokens(v) for v in vals])
    fig.update_yaxes(type="log", title="USD per month (log)", tickprefix="$")
    fig.update_layout(height=440)
    st.markdown(f"**API, rent or buy: the monthly bill against output volume** (replicas of {n} "
                f"GPU{'s' if n != 1 else ''}, each at its {serving_views.DECODE_ONLY}: {formats.fmt_number(tps)} tok/s; sized for a peak {peak_to_average:g}x the average)")
    charts.show_chart(fig, key=f"{key}_cross")
    rent_buy = ("buying beats renting at every utilisation" if share == 1.0 else
                "renting beats buying at every utilisation" if share == 0.0 else
                "compare rent and buy per token below (scale-to-zero rent has no fixed part)" if share is None else
                f"buying beats renting while the GPUs are busy less than {share:.0%} of their capacity")
    st.caption(formats.sentence("; ".join(said) + f"; {rent_buy}.") + " The staircases are whole replicas (one "
               "always on); the API is a line. Output tokens only: prompts are priced in the bill above. "
               + ("Throughput is the serving estimate's, as in the bill above." if getattr(rates, "timing", "bound") == "serving"
                  else "Throughput is the roofline's bound (a real server is 1.2-2x slower)."))
    fig = charts.Figure()
    for col, label, color in (("hardware", "hardware (renting: the hourly price)", "#1f77b4"),
                              ("energy", "energy", "#2ca02c"), ("space", "space", "#9467bd")):
        fig.add_bar(x=parts["option"], y=parts[col], name=label, marker_color=color,
                    hovertemplate="%{x}: " + col + " $%{y:,.3f} per 1M<extra></extra>")
    fig.update_layout(barmode="stack", height=320, yaxis_title="USD per 1M output tokens", yaxis_tickprefix="$")
    left, right = st.columns([3, 2])
    with left:
        st.markdown(f"**Where the money goes per 1M output tokens** (busy {util:.0%} of the hours"
                    + (", scaled to zero" if scale_to_zero else "") + ")")
        charts.show_chart(fig, key=f"{key}_parts")
    with right:
        for r in parts.itertuples():
            st.markdown(f"**{r.option}**: {formats.fmt_usd(r.total)} per 1M, {formats.fmt_usd(r.usd_per_gpu_hour)} per GPU-hour")
        st.markdown(energy_sentence(tps, choice, n))


@dataclass(frozen=True)
class Owning:
    """The bill's self-hosting choice: "rent" or "buy", the energy inputs, and (inputs, utilisation,
    scale_to_zero) for buying, None when buying cannot be priced (the page said why)."""

    mode: str
    choice: EnergyChoice
    bought: tuple | None

    def gpu_hour_usd(self, rent_price_per_hour_usd: float) -> float:
        """What the bill charges per GPU-hour: the rent, or owning's cost at the chosen utilisation."""
        if self.mode == "buy" and self.bought:
            return ownership.owned_cost_per_gpu_hour(*self.bought).total_usd
        return rent_price_per_hour_usd


def owning_inputs(accelerator: calc.Accelerator) -> Owning:
    """Rent or buy (key mb_own), the energy inputs and the purchase inputs, where the caller placed them."""
    mode = st.radio("GPUs", ["rent", "buy"], key="mb_own", bind="query-params", horizontal=True,
                    help="Rent: the sidebar's hourly price. Buy: the server's cost per GPU-hour (inputs below).")
    choice = energy_inputs(accelerator)
    try:
        bought = buy_inputs(accelerator, choice)
    except NoPowerFigure as exc:   # the data lacks a figure (GB200, TPU v5e), not the user's error: the rented bill
        bought = None              # stands; a warning where "buy" is chosen (the bill then charges the rent)
        (st.warning if mode == "buy" else st.info)(formats.md_escape(str(exc)) + (
            " The bill below charges the rent until a power figure is typed." if mode == "buy" else ""))
    except ValueError as exc:
        bought = None
        widgets.show_error(exc)
    return Owning(mode, choice, bought)


def owning_section(owning: Owning, rates, tiers: list, rent_price_per_hour_usd: float, peak_to_average: float) -> None:
    """Under the bill: which API tier to compare, then ``crossover_section`` (nothing when buying has no price)."""
    if owning.bought is None or not tiers:
        return
    api = st.selectbox("API tier to compare", [t.name for t in tiers], key="mb_api", bind="query-params")
    if not rent_price_per_hour_usd > 0:  # the sidebar takes $0: renting would be free, a line with nothing to cross
        st.info("API, rent or buy: left out at a GPU price of $0 an hour (the sidebar's Price), where renting costs "
                "nothing and crosses no other line. Enter the hourly price the GPUs rent at to compare.")
        return
    try:
        crossover_section(rates, api, next(t for t in tiers if t.name == api).output_usd_per_mtok,
                          rent_price_per_hour_usd, *owning.bought, float(peak_to_average), owning.choice)
    except ValueError as exc:
        widgets.show_error(exc)

