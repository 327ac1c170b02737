"""Comparing API tiers against self-hosting: the break-even DAU, the table of every tier's monthly
bill, the bill against DAU and against the prompt-cache hit rate, and the verdict in words.

The bills are ``calc.bill``'s. All money is USD; a month is 30 days.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .api_tiers import PriceTier
from .bill import (SelfHostedRates, SelfHostedSetup, api_monthly_bill, replicas_for_traffic, self_hosted_monthly_bill,
                   self_hosted_rates)
from .number_text import fmt_usd, join_and
from .product_traffic import DAYS_PER_MONTH, MAX_DAU, SECONDS_PER_DAY, TrafficScenario


# --------------------------------------------------------------------------------------------
# Break-even
# --------------------------------------------------------------------------------------------

def break_even_dau(scenario: TrafficScenario, tier: PriceTier, setup: SelfHostedSetup,
                   rates: SelfHostedRates | None = None) -> float | None:
    """The DAU from which self-hosting is never dearer than ``tier`` (the scenario's own DAU is ignored).

    The API bill is a line, A(D) = a D with a = 30 x gens per DAU x USD per generation; the
    self-hosted bill is a staircase, S(D) = M max(1, ceil(c D)) with M one replica's month and
    c = gens per DAU x replica_s x peak_to_average / 86,400 replicas per DAU. On step k
    (D in ((k-1)/c, k/c]) S = kM and A rises to a k / c = r k M, r = a / (M c). If r <= 1 the
    line never gets above the staircase: None. Otherwise S <= A on [max(kM/a, (k-1)/c), k/c]; that
    interval leaves a gap (A < S at the start of the step) while k < r / (r - 1). So the bills cross
    for the last time at D* = k* M / a, k* = ceil(r / (r - 1)) - 1 >= 1: below D* (on step k*) the
    API is cheaper, from D* on self-hosting is. With r >= 2, k* = 1 and D* = M / a: the point where
    one replica's rent equals the API bill. (Solved in closed form, since S is piecewise constant.)

    Returns:
        D* in users (float), or None when the curves never cross for good (including a tier that
        costs nothing, or a scenario with no generations).

    Raises:
        ValueError: see ``self_hosted_rates``.
    """
    r_ = rates if rates is not None else self_hosted_rates(scenario, setup)
    gens_per_dau = scenario.generations_per_dau_per_day
    a = DAYS_PER_MONTH * gens_per_dau * float(tier.cost_per_generation_usd(scenario)["total_usd"])
    m = r_.replica_month_usd
    c = gens_per_dau * r_.replica_s_per_generation * setup.peak_to_average / SECONDS_PER_DAY
    if a <= 0 or c <= 0:
        return None
    if m <= 0:
        return 0.0
    ratio = a / (m * c)
    if ratio <= 1.0:
        return None
    k_star = max(1, math.ceil(ratio / (ratio - 1.0)) - 1)
    return k_star * m / a


# --------------------------------------------------------------------------------------------
# Comparison table, sweeps, verdict
# --------------------------------------------------------------------------------------------

def compare_tiers(scenario: TrafficScenario, tiers: list[PriceTier],
                  setup: SelfHostedSetup | None = None) -> pd.DataFrame:
    """The monthly bill of every tier, and of the self-hosted setup when given, side by side.

    Returns:
        DataFrame, one row per tier (self-hosted last): name, model, the ``BILL_COMPONENTS`` (USD per
        month), total_usd, per_generation_usd, per_dau_usd, n_gpus, and break_even_dau (DAU from which
        the self-hosted setup is cheaper than this tier; NaN when it never is or without a setup).

    Raises:
        ValueError: no tiers; see ``self_hosted_rates``.
    """
    if not tiers:
        raise ValueError("give at least one price tier")
    rows = [dataclasses.asdict(api_monthly_bill(scenario, t)) for t in tiers]
    if setup is not None:
        rates = self_hosted_rates(scenario, setup)
        for row, t in zip(rows, tiers):
            d = break_even_dau(scenario, t, setup, rates)
            row["break_even_dau"] = math.nan if d is None else d
        sh = dataclasses.asdict(self_hosted_monthly_bill(scenario, setup, rates))
        sh["break_even_dau"] = math.nan
        rows.append(sh)
    return pd.DataFrame(rows)


#: Default sweeps: DAU from 10 to 1e9 (801 points, log-spaced) and hit rates 0..1 in steps of 0.01.
DAU_SWEEP = np.geomspace(10.0, 1e9, 801)
HIT_RATE_SWEEP = np.linspace(0.0, 1.0, 101)


def _dau_grid(dau) -> np.ndarray:
    d = np.asarray(DAU_SWEEP if dau is None else dau, dtype=float)
    if d.ndim != 1 or not np.all(np.isfinite(d)) or np.any(d < 0) or np.any(d > MAX_DAU):
        raise ValueError(f"dau values must be a 1-D list of numbers between 0 and {MAX_DAU:g}")
    return d


#: Columns ``bill_vs_dau(..., with_range=True)`` adds: the self-hosted staircase at the low and the high end of the
#: serving estimate's range (USD per month, GPUs rented).
RANGE_COLUMNS = ("total_low_usd", "total_high_usd", "n_gpus_low", "n_gpus_high")


def bill_vs_dau(scenario: TrafficScenario, tiers: list[PriceTier], setup: SelfHostedSetup | None,
                dau=None, with_range: bool = False) -> pd.DataFrame:
    """Monthly bill of each tier against DAU (vectorised over ``dau``; other inputs from ``scenario``).

    Args:
        dau: 1-D array of DAU values, each in [0, 1e10] (default ``DAU_SWEEP``).
        with_range: also give the self-hosted staircase at both ends of the serving estimate's range
            (``RANGE_COLUMNS``), the ends ``calc.bill.self_hosted_bill_range`` prices one DAU at:
            total_low_usd = max(1, ceil(G x replica_s_low x rho / 86,400)) x M, with replica_s_low the replica
            seconds at the estimate's high throughput (the fewest GPUs), total_high_usd the same at its low
            throughput; n_gpus_low, n_gpus_high the GPUs each rents (integers). Missing on the API rows; equal
            to total_usd and n_gpus with timing "bound" (the bound has no range). Ignored without a setup.

    Returns:
        long DataFrame with columns dau, name, total_usd (USD per month), n_gpus (len(dau) x (tiers + 1) rows),
        then ``RANGE_COLUMNS`` when asked; the self-hosted rows are the staircase max(1, ceil(c D)) x M.

    Raises:
        ValueError: bad dau values; see ``self_hosted_rates``.
    """
    d = _dau_grid(dau)
    frames = []
    gens_month = DAYS_PER_MONTH * scenario.generations_per_dau_per_day * d
    for t in tiers:
        per_gen = float(t.cost_per_generation_usd(scenario)["total_usd"])
        frames.append(pd.DataFrame({"dau": d, "name": t.name, "total_usd": gens_month * per_gen, "n_gpus": 0}))
    if setup is not None:
        r = self_hosted_rates(scenario, setup)
        gens_day = scenario.generations_per_dau_per_day * d

        def staircase(rates: SelfHostedRates) -> tuple[np.ndarray, np.ndarray]:
            n_rep = replicas_for_traffic(gens_day, rates.replica_s_per_generation, setup.peak_to_average)
            return n_rep * rates.replica_month_usd, n_rep * rates.gpus_per_replica

        usd, gpus = staircase(r)
        frame = pd.DataFrame({"dau": d, "name": "self-hosted", "total_usd": usd, "n_gpus": gpus})
        if with_range:  # the bill's low end is the estimate's high throughput (SelfHostedRates.for_bill_end)
            for end in ("low", "high"):
                frame[f"total_{end}_usd"], frame[f"n_gpus_{end}"] = staircase(r.for_bill_end(end))
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    if with_range and setup is not None:  # GPU counts stay whole numbers beside the API rows' blanks
        out = out[["dau", "name", "total_usd", "n_gpus", *RANGE_COLUMNS]].astype(
            {"n_gpus_low": "Int64", "n_gpus_high": "Int64"})
    return out


def bill_vs_hit_rate(scenario: TrafficScenario, tiers: list[PriceTier], setup: SelfHostedSetup | None,
                     hit_rates=None) -> pd.DataFrame:
    """Monthly bill of each tier against the prompt-cache hit rate (vectorised), at the scenario's DAU.

    Args:
        hit_rates: 1-D array of rates in [0, 1] (default ``HIT_RATE_SWEEP``).

    Returns:
        long DataFrame with columns cache_hit_rate, name, total_usd (self-hosted: prefix hits skip
        prefill, so fewer replicas may be needed at high rates).

    Raises:
        ValueError: a rate outside [0, 1]; see ``self_hosted_rates``.
    """
    h = np.asarray(HIT_RATE_SWEEP if hit_rates is None else hit_rates, dtype=float)
    if h.ndim != 1:
        raise ValueError("hit_rates must be a 1-D list of numbers between 0 and 1")
    gens_month = DAYS_PER_MONTH * scenario.generations_per_day
    frames = [pd.DataFrame({"cache_hit_rate": h, "name": t.name,
                            "total_usd": gens_month * t.cost_per_generation_usd(scenario, h)["total_usd"]})
              for t in tiers]
    if setup is not None:
        r = self_hosted_rates(scenario, setup, cache_hit_rate=h)
        n_rep = replicas_for_traffic(scenario.generations_per_day, r.replica_s_per_generation, setup.peak_to_average)
        frames.append(pd.DataFrame({"cache_hit_rate": h, "name": "self-hosted",
                                    "total_usd": n_rep * r.replica_month_usd}))
    return pd.concat(frames, ignore_index=True)


def verdict(table: pd.DataFrame, unit: str = "DAU") -> str:
    """One sentence on a ``compare_tiers`` table: the cheapest tier, how many times dearer the
    dearest is, and, with a self-hosted row, which model it serves, against which tiers it costs less (with a
    reminder where those tiers serve other models) and from which traffic: ``break_even_dau`` in ``unit``
    ("DAU", or "requests a day" where the traffic is counted in requests, one generation each).

    Raises:
        ValueError: an empty table.
    """
    if table.empty:
        raise ValueError("the table is empty")
    cheapest = table.loc[table["total_usd"].idxmin()]
    dearest = table.loc[table["total_usd"].idxmax()]
    api_rows = table[table["name"] != "self-hosted"]
    if len(api_rows) and (api_rows["per_generation_usd"].fillna(0) <= 0).all():
        # Every price is 0: the tiers are free whatever the traffic (not "no generations").
        out = "Every API tier is free at these prices (all its per-token prices are $0), so it costs nothing."
    elif cheapest["total_usd"] <= 0 and (api_rows["total_usd"] <= 0).all():
        out = "No generations, so every API tier costs nothing."
    else:
        model = "" if cheapest["model"] in ("", cheapest["name"]) else f" ({cheapest['model']})"
        out = f"Cheapest: {cheapest['name']}{model} at {fmt_usd(cheapest['total_usd'])} per month."
    if cheapest["total_usd"] >= 1.0:  # a ratio to a bill of cents says nothing
        out += (f" The dearest, {dearest['name']}, costs {dearest['total_usd'] / cheapest['total_usd']:,.1f}x "
                "as much.")
    if "break_even_dau" in table and (table["name"] == "self-hosted").any():
        sh = table[table["name"] == "self-hosted"].iloc[0]
        api = table[table["name"] != "self-hosted"]
        cents = api["total_usd"].round(2)
        beaten = api[cents > round(float(sh["total_usd"]), 2)]["name"].tolist()
        same = api[cents == round(float(sh["total_usd"]), 2)]["name"].tolist()  # to the cent, as the bill shows
        gpus = f"{sh['n_gpus']:,.0f} GPU" + ("s" if sh["n_gpus"] != 1 else "")
        own = str(sh.get("model", "") or "")
        own = "" if own == "self-hosted" else own
        what = f"Self-hosting {own} ({fmt_usd(sh['total_usd'])})" if own \
            else f"Self-hosting ({gpus}, {fmt_usd(sh['total_usd'])})"
        other = [n for n, m in zip(api["name"], api["model"]) if n in beaten and str(m) != own] if own else []
        out += (f" {what} costs less than {join_and(beaten)} at this traffic" if beaten
                else f" {what} costs the same as every API tier at this traffic" if len(same) == len(api)
                else f" {what} costs the same as {join_and(same)} and more than the other tiers at this traffic"
                if same else f" {what} is dearer than every API tier at this traffic")
        # a price comparison across models says nothing of what each model can do
        out += ("; it serves another model than " + ("that tier" if len(other) == 1 else "those tiers")
                + ", so the bill compares prices, not what the models can do." if other else ".")
        # a break-even at no traffic (both bills $0 there) is no threshold to name
        later = api[(api["total_usd"] <= sh["total_usd"]) & api["break_even_dau"].notna() & (api["break_even_dau"] > 0)
                    & ~api["name"].isin(same)]
        for _, row in later.iterrows():
            out += f" It would beat {row['name']} from {row['break_even_dau']:,.0f} {unit}."
    return out
