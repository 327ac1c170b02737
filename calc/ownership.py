"""What a GPU-hour and a token cost to own: buying against renting against an API.

Renting: the hourly price, paid for every hour of the month, or only for the busy hours when the
deployment scales to zero (serverless GPUs; a cold start is not priced).

Buying: one GPU's share of a server, paid back over ``depreciation_years`` at the annual
``cost_of_capital`` r as an annuity (the capital recovery factor, CRF = r / (1 - (1 + r)^-n), r = 0:
1/n; any engineering-economics text, e.g. Blank & Tarquin, Engineering Economy, ch. 2), plus its space
(colocation priced per kW of provisioned power per month, the industry's unit) and its electricity at
the wall (``calc.energy.wall_power_w``: board + the server's other power, times PUE) for the busy
hours at the serving power and the idle hours at the idle power (none when scaled to zero: the server
is off). Per GPU-hour of the month:

    hardware = price x CRF / 8,760 h
    space    = colocation_usd_per_kw_month x (board + other power) / 1,000 / 720 h
    energy   = [u (P_busy + other) + (1 - u) (P_idle + other)] / 1,000 x PUE x electricity_usd_per_kwh

and per 1M tokens, a GPU-hour's cost over the tokens it serves in an hour of the month,
tokens_per_s x 3,600 x u. A month is 720 h (30 days, as ``calc.bill``).

The crossover against an API: at a monthly volume V of output tokens, the API costs a V (a line);
rented or owned GPUs cost M per replica-month times the replicas the volume needs,
max(1, ceil(V / capacity)), plus (owned) the energy above idle, v V: a staircase on a line. The
volume from which the GPUs never cost more than the API is ``crossover_volume``, solved in closed form
as ``calc.bill_compare.break_even_dau`` solves the same staircase.

Defaults and their sources: ``calc/data/energy.json`` ("ownership").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .energy import MAX_OTHER_POWER_W, board_power_w, check_power_w, check_pue, energy_data
from .hardware import Accelerator

HOURS_PER_YEAR = 8_760.0
HOURS_PER_MONTH = 720.0          # 30 days, as calc.bill
#: Bounds: a value outside is refused with a message (as calc.limits bounds model sizes).
MAX_SERVER_PRICE_USD_PER_GPU = 10_000_000.0   # a GB300 NVL72 rack is about $3-4M for 72 GPUs
MAX_DEPRECIATION_YEARS = 20.0                  # nobody serves tokens on 20-year-old accelerators
MAX_COST_OF_CAPITAL = 1.0                      # 100% a year
MAX_COLOCATION_USD_PER_KW_MONTH = 5_000.0      # CBRE's 2023 US average: $163.44
MAX_ELECTRICITY_USD_PER_KWH = 10.0             # retail tariffs are below $1
MAX_PRICE_PER_HOUR_USD = 10_000.0
MAX_TOKENS_PER_MONTH = 1e18


def ownership_defaults() -> dict:
    """The default buy-side inputs, ``{name: {"value", "source", "date"}}``: server_price_usd_per_gpu,
    depreciation_years, cost_of_capital, colocation_usd_per_kw_month, electricity_usd_per_kwh,
    utilisation (``calc/data/energy.json``)."""
    return {k: dict(v) for k, v in energy_data()["ownership"].items()}


def _number(value, what: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return v


def _positive_at_most(value, what: str, limit: float, unit: str = "") -> float:
    v = _number(value, what)
    if v <= 0:
        raise ValueError(f"{what} must be above 0{unit}, got {value!r}")
    if v > limit:
        raise ValueError(f"{what} must be at most {limit:,.6g}{unit}, got {value!r}")
    return v


def _nonneg_at_most(value, what: str, limit: float, unit: str = "") -> float:
    v = _number(value, what)
    if v < 0 or v > limit:
        raise ValueError(f"{what} must be between 0 and {limit:,.6g}{unit}, got {value!r}")
    return v


def check_utilisation(utilisation) -> float:
    """The share of hours the GPUs serve, in (0, 1].

    Raises:
        ValueError: 0 or below (a GPU that never serves has no cost per token), above 1, not a number.
    """
    v = _number(utilisation, "utilisation")
    if not 0 < v <= 1:
        raise ValueError(f"utilisation must be above 0 and at most 1 (the share of hours the GPUs serve "
                         f"traffic), got {utilisation!r}")
    return v


def check_price_per_hour(price_per_hour_usd) -> float:
    """A rental price per GPU-hour in (0, 10,000] USD.

    Raises:
        ValueError: zero, negative, above the bound or not a number.
    """
    return _positive_at_most(price_per_hour_usd, "price_per_hour_usd", MAX_PRICE_PER_HOUR_USD, " USD")


def capital_recovery_factor(rate: float, years: float) -> float:
    """The annual payment that repays 1 USD over ``years`` at annual ``rate``: r / (1 - (1 + r)^-n);
    1 / n when r = 0. 8% over 5 years: 0.250456.

    Raises:
        ValueError: a rate outside [0, 1], a life outside (0, 20] years.
    """
    r = _nonneg_at_most(rate, "cost_of_capital", MAX_COST_OF_CAPITAL, " (a fraction per year: 0.08 is 8%)")
    n = _positive_at_most(years, "depreciation_years", MAX_DEPRECIATION_YEARS, " years")
    return 1.0 / n if r == 0 else r / (1.0 - (1.0 + r) ** -n)


@dataclass(frozen=True)
class OwnershipInputs:
    """What owning one GPU costs, with the power it draws.

    Fields:
        server_price_usd_per_gpu: one GPU's share of the server (with its networking), USD, in (0, 1e7].
        depreciation_years: years it is paid back over, in (0, 20].
        cost_of_capital: annual rate, in [0, 1] (0.08 = 8%).
        colocation_usd_per_kw_month: space, power delivery and cooling per kW provisioned, in [0, 5,000].
        electricity_usd_per_kwh: in [0, 10].
        gpu_power_w: watts one board draws while serving, in (0, 5,000].
        idle_power_w: watts it draws idle with the model loaded, in [0, gpu_power_w].
        other_power_w_per_gpu: the server's other power per GPU, in [0, 10,000].
        pue: the data centre's PUE, in [1, 3].

    Raises:
        ValueError: any field zero or negative where it must be positive, or outside its bound.
    """

    server_price_usd_per_gpu: float
    depreciation_years: float
    cost_of_capital: float
    colocation_usd_per_kw_month: float
    electricity_usd_per_kwh: float
    gpu_power_w: float
    idle_power_w: float
    other_power_w_per_gpu: float
    pue: float

    def __post_init__(self):
        _positive_at_most(self.server_price_usd_per_gpu, "server_price_usd_per_gpu", MAX_SERVER_PRICE_USD_PER_GPU, " USD")
        capital_recovery_factor(self.cost_of_capital, self.depreciation_years)
        _nonneg_at_most(self.colocation_usd_per_kw_month, "colocation_usd_per_kw_month", MAX_COLOCATION_USD_PER_KW_MONTH,
                        " USD per kW per month")
        _positive_at_most(self.electricity_usd_per_kwh, "electricity_usd_per_kwh", MAX_ELECTRICITY_USD_PER_KWH,
                          " USD per kWh")
        busy = check_power_w(self.gpu_power_w, "gpu_power_w")
        idle = check_power_w(self.idle_power_w, "idle_power_w", allow_zero=True)
        if idle > busy:
            raise ValueError(f"idle_power_w ({idle:g} W) must not exceed the power while serving ({busy:g} W)")
        check_power_w(self.other_power_w_per_gpu, "other_power_w_per_gpu", MAX_OTHER_POWER_W, allow_zero=True)
        check_pue(self.pue)

    @classmethod
    def for_accelerator(cls, accelerator: Accelerator, basis: str = "tdp", **overrides) -> "OwnershipInputs":
        """The defaults of ``ownership_defaults`` and ``calc.energy.energy_defaults``, with the accelerator's
        power (``board_power_w`` by ``basis``, ``idle_power_w``); ``overrides`` replace any field.

        Raises:
            ValueError: no power figure on file and none given; an invalid field.
        """
        d = {k: v["value"] for k, v in energy_data()["ownership"].items() if k != "utilisation"}
        e = energy_data()["defaults"]
        fields = dict(d, other_power_w_per_gpu=e["other_power_w_per_gpu"]["value"], pue=e["pue"]["value"])
        busy = (check_power_w(overrides["gpu_power_w"]) if "gpu_power_w" in overrides
                else board_power_w(accelerator, basis))
        if accelerator.idle_power_w is not None:
            idle = float(accelerator.idle_power_w)
        else:
            idle = e["idle_fraction_of_tdp"]["value"] * float(accelerator.tdp_w or busy)
        fields.update(gpu_power_w=busy, idle_power_w=min(idle, busy))
        fields.update(overrides)
        return cls(**fields)


@dataclass(frozen=True)
class GpuHourCost:
    """USD per GPU-hour of the month, split: hardware_usd (depreciation and capital), energy_usd
    (electricity at the wall), space_usd (colocation); total_usd their sum. Renting puts it all in
    hardware_usd."""

    hardware_usd: float
    energy_usd: float
    space_usd: float

    @property
    def total_usd(self) -> float:
        return self.hardware_usd + self.energy_usd + self.space_usd


def owned_cost_per_gpu_hour(inputs: OwnershipInputs, utilisation: float, scale_to_zero: bool = False) -> GpuHourCost:
    """USD per GPU-hour of owning (module docstring), busy a share ``utilisation`` of the hours.

    Worked: $33,750 at 8% over 5 years: 33,750 x 0.250456 / 8,760 = $0.9649/h; colocation $163.44 per
    kW-month for 700 + 575 W: 163.44 x 1.275 / 720 = $0.2894/h; energy at u = 0.5, idle 140 W:
    (0.5 x 1,275 + 0.5 x 715) W x 1.58 / 1,000 x $0.08 = $0.1258/h. Total $1.380/h.

    Raises:
        ValueError: a utilisation outside (0, 1].
    """
    u = check_utilisation(utilisation)
    hardware = inputs.server_price_usd_per_gpu * capital_recovery_factor(inputs.cost_of_capital,
                                                                          inputs.depreciation_years) / HOURS_PER_YEAR
    provisioned_kw = (inputs.gpu_power_w + inputs.other_power_w_per_gpu) / 1000.0
    space = inputs.colocation_usd_per_kw_month * provisioned_kw / HOURS_PER_MONTH
    idle_w = 0.0 if scale_to_zero else inputs.idle_power_w + inputs.other_power_w_per_gpu
    mean_w = u * (inputs.gpu_power_w + inputs.other_power_w_per_gpu) + (1.0 - u) * idle_w
    energy = mean_w / 1000.0 * inputs.pue * inputs.electricity_usd_per_kwh
    return GpuHourCost(hardware, energy, space)


def rented_cost_per_gpu_hour(price_per_hour_usd: float, utilisation: float, scale_to_zero: bool = False) -> GpuHourCost:
    """USD per GPU-hour of the month when renting: the price, or price x utilisation when the deployment
    scales to zero and pays for busy hours only.

    Raises:
        ValueError: a price outside (0, 10,000], a utilisation outside (0, 1].
    """
    p = check_price_per_hour(price_per_hour_usd)
    u = check_utilisation(utilisation)
    return GpuHourCost(p * u if scale_to_zero else p, 0.0, 0.0)


def usd_per_million_tokens(cost: GpuHourCost, tokens_per_s_per_gpu, utilisation: float) -> dict:
    """USD per 1M output tokens, split as ``cost`` is: each part / (tokens_per_s x 3,600 x u) x 1e6.
    ``tokens_per_s_per_gpu`` may be an array (one per batch): the values are then arrays.

    Returns:
        {"hardware_usd", "energy_usd", "space_usd", "total_usd"}.

    Raises:
        ValueError: a non-positive throughput, a utilisation outside (0, 1].
    """
    u = check_utilisation(utilisation)
    t = np.asarray(tokens_per_s_per_gpu, dtype=float)
    if t.size == 0 or np.any(~np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"tokens_per_s_per_gpu must be positive, got {tokens_per_s_per_gpu!r}")
    per_hour = t * 3600.0 * u / 1e6
    out = {"hardware_usd": cost.hardware_usd / per_hour, "energy_usd": cost.energy_usd / per_hour,
           "space_usd": cost.space_usd / per_hour}
    out["total_usd"] = out["hardware_usd"] + out["energy_usd"] + out["space_usd"]
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


@dataclass(frozen=True)
class CostLine:
    """Monthly cost of serving V output tokens a month: ``fixed_month_usd`` per replica-month for
    max(1, ceil(V / capacity_tokens_per_month)) replicas (none: ``capacity_tokens_per_month`` None, a pure
    line) plus ``usd_per_token`` x V. An API: fixed 0, its price per token."""

    name: str
    fixed_month_usd: float
    usd_per_token: float
    capacity_tokens_per_month: float | None = None

    def monthly_usd(self, tokens_per_month):
        """USD per month at ``tokens_per_month`` (scalar or array)."""
        v = np.asarray(tokens_per_month, dtype=float)
        if np.any(~np.isfinite(v)) or np.any(v < 0) or np.any(v > MAX_TOKENS_PER_MONTH):
            raise ValueError(f"tokens_per_month must be between 0 and {MAX_TOKENS_PER_MONTH:g}, got {tokens_per_month!r}")
        steps = 0.0 if self.capacity_tokens_per_month is None else np.maximum(
            1.0, np.ceil(np.round(v / self.capacity_tokens_per_month, 9)))
        out = self.fixed_month_usd * steps + self.usd_per_token * v
        return float(out) if np.ndim(out) == 0 else out

    def replicas(self, tokens_per_month):
        """Replicas the volume needs (1 at least); 0 for a pure line."""
        if self.capacity_tokens_per_month is None:
            return 0
        v = np.asarray(tokens_per_month, dtype=float)
        out = np.maximum(1, np.ceil(np.round(v / self.capacity_tokens_per_month, 9))).astype(np.int64)
        return int(out) if out.ndim == 0 else out


def serving_lines(tokens_per_s: float, n_gpus: int, api_usd_per_mtok: float, rent_price_per_hour_usd: float,
                  inputs: OwnershipInputs, max_utilisation: float = 1.0, rent_scale_to_zero: bool = False) -> list:
    """The three cost lines of serving output tokens: the API, renting and buying replicas of ``n_gpus``
    GPUs that each produce ``tokens_per_s`` (the replica's decode throughput at its batch).

    A replica serves at most tokens_per_s x 3,600 x 720 x ``max_utilisation`` tokens a month (a service
    keeps headroom for peaks: 0.5 sizes for a peak twice the average). Rent: n_gpus x price x 720 per
    replica-month, always on; with ``rent_scale_to_zero`` only busy hours are paid: a line at
    n_gpus x price / (tokens_per_s x 3,600) per token. Buy: n_gpus x 720 x (hardware + space + idle
    energy) per replica-month, plus the energy above idle per token, n_gpus x (P_busy - P_idle) / 1,000 x
    PUE x price_per_kwh / (tokens_per_s x 3,600).

    Returns:
        [CostLine("API"), CostLine("rent"), CostLine("buy")].

    Raises:
        ValueError: non-positive throughput, prices or GPU count; a utilisation outside (0, 1].
    """
    tps = _positive_at_most(tokens_per_s, "tokens_per_s", 1e12)
    n = int(n_gpus)
    if n < 1 or n != n_gpus:
        raise ValueError(f"n_gpus must be a positive integer, got {n_gpus!r}")
    api = _positive_at_most(api_usd_per_mtok, "API price per 1M output tokens", 10_000.0, " USD")
    rent = check_price_per_hour(rent_price_per_hour_usd)
    cap = tps * 3600.0 * HOURS_PER_MONTH * check_utilisation(max_utilisation)
    idle = owned_cost_per_gpu_hour(inputs, 1.0)  # hardware and space do not depend on u
    idle_energy = (inputs.idle_power_w + inputs.other_power_w_per_gpu) / 1000.0 * inputs.pue * inputs.electricity_usd_per_kwh
    above_idle_kwh_per_token = (inputs.gpu_power_w - inputs.idle_power_w) / 1000.0 / (tps * 3600.0)
    buy = CostLine("buy", n * HOURS_PER_MONTH * (idle.hardware_usd + idle.space_usd + idle_energy),
                   n * above_idle_kwh_per_token * inputs.pue * inputs.electricity_usd_per_kwh, cap)
    if rent_scale_to_zero:
        rent_line = CostLine("rent", 0.0, n * rent / (tps * 3600.0), None)
    else:
        rent_line = CostLine("rent", n * rent * HOURS_PER_MONTH, 0.0, cap)
    return [CostLine("API", 0.0, api / 1e6, None), rent_line, buy]


def crossover_volume(line: CostLine, reference: CostLine) -> float | None:
    """The monthly volume from which ``line`` (a staircase M max(1, ceil(V / c)) + v V) never costs more
    than ``reference`` (a line a V): None when it never gets there for good.

    On step k (V in ((k-1) c, k c]) the staircase is at or below the line from V = k M / (a - v). With
    r = (a - v) c / M > 1 the step's start is also below once k >= r / (r - 1), so the last crossing is at
    k* = ceil(r / (r - 1)) - 1 (at least 1): V* = k* M / (a - v) (as ``calc.bill_compare.break_even_dau``). A
    pure line against a line crosses at 0 when it is cheaper per token, else never.

    Raises:
        ValueError: a reference that is not a pure line.
    """
    if reference.capacity_tokens_per_month is not None or reference.fixed_month_usd:
        raise ValueError("the reference must be a line through zero (an API price per token)")
    slope = reference.usd_per_token - line.usd_per_token
    if line.capacity_tokens_per_month is None:
        if line.fixed_month_usd <= 0:
            return 0.0 if slope >= 0 else None
        return line.fixed_month_usd / slope if slope > 0 else None
    if slope <= 0:
        return None
    m, c = line.fixed_month_usd, line.capacity_tokens_per_month
    if m <= 0:
        return 0.0
    ratio = slope * c / m
    if ratio <= 1.0:
        return None
    k_star = max(1, math.ceil(ratio / (ratio - 1.0)) - 1)
    return k_star * m / slope


def buy_beats_rent_utilisation(rent: CostLine, buy: CostLine) -> float | None:
    """Up to which utilisation of its replicas buying costs less than renting always-on (both sized for
    the same capacity c): buying beats renting on a step of k replicas while k M_buy + v V < k M_rent,
    i.e. while V / (k c) < (M_rent - M_buy) / (v c). Returns that share, capped at 1 (buying always
    wins), 0 when renting always wins, None for a scale-to-zero rent (no fixed part: compare per token).

    Raises:
        ValueError: lines of different capacity.
    """
    if rent.capacity_tokens_per_month is None:
        return None
    if rent.capacity_tokens_per_month != buy.capacity_tokens_per_month:
        raise ValueError("rent and buy must be sized for the same capacity")
    gap = rent.fixed_month_usd - buy.fixed_month_usd
    if gap <= 0:
        return 0.0
    if buy.usd_per_token <= 0:
        return 1.0
    return min(1.0, gap / (buy.usd_per_token * buy.capacity_tokens_per_month))


def cost_curves(lines: list, tokens_per_month=None) -> pd.DataFrame:
    """Monthly cost of each line over a volume grid (default: 1e6 to 1e13 tokens a month, 561 log-spaced
    points, and every step edge of the staircases so the chart shows the steps).

    Returns:
        DataFrame: tokens_per_month, then one column per line name (USD per month), and "cheapest".

    Raises:
        ValueError: volumes outside [0, 1e18].
    """
    if tokens_per_month is None:
        grid = np.geomspace(1e6, 1e13, 561)
        for ln in lines:
            c = ln.capacity_tokens_per_month
            if c:
                edges = c * np.arange(1, min(200, int(1e13 // c) + 1))
                grid = np.union1d(grid, np.concatenate([edges, edges * (1 + 1e-9)]))
        v = grid[(grid >= 1e6) & (grid <= 1e13)]
    else:
        v = np.asarray(tokens_per_month, dtype=float)
    df = pd.DataFrame({"tokens_per_month": v})
    for ln in lines:
        df[ln.name] = ln.monthly_usd(v)
    names = [ln.name for ln in lines]
    df["cheapest"] = df[names].idxmin(axis=1)
    return df
