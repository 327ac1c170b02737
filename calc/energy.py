"""Energy and carbon of a token: the power a server draws, joules per output token, tokens per kWh, CO2.

One decode step of B sequences takes ``total_s`` seconds on ``n_gpus`` boards (the roofline's
``StepTime``). While it runs the server draws, at the wall,

    wall_power_w = (gpu_power_w + other_power_w_per_gpu) x n_gpus x PUE

(the boards, the rest of the server: CPUs, memory, NICs, fans; and the data centre's cooling and
conversion losses as its power usage effectiveness, PUE = total facility power / IT power, The Green
Grid's definition). The step's energy is ``wall_power_w x total_s`` joules and it emits B tokens, so

    joules per output token = wall_power_w x total_s / B = wall_power_w / tokens_per_s
    tokens per kWh          = 3.6e6 / joules per token
    kg CO2e per 1M tokens   = joules per token x 1e6 / 3.6e6 x grid gCO2e/kWh / 1000

Which board power: ``basis="tdp"`` (default) is the board's limit, what a compute-bound step (prefill,
large batches) approaches; a memory-bound decode step draws less, so it is an upper bound.
``basis="measured"`` uses a figure a public measurement read under an inference load where one is on
file (``Accelerator.measured_power_w``), the limit otherwise (``power_note`` says which). Every figure,
with its source, is in ``calc/data/accelerators.json``; the defaults of PUE and the server's other power
in ``calc/data/energy.json``; grid intensities by region from Ember's yearly data (CC-BY-4.0).
"""
from __future__ import annotations

import json
import math
from functools import lru_cache

import numpy as np
import pandas as pd

from .checks import check_choice, check_positive_int, check_positive_number
from .hardware import Accelerator
from .models import DATA_DIR

POWER_BASES = ("tdp", "measured")
POWER_BASIS_LABELS = {"tdp": "board power limit (TDP): an upper bound for a memory-bound decode",
                      "measured": "measured under an inference load, where a public figure is on file"}
JOULES_PER_KWH = 3.6e6
#: Bounds of the inputs (a value outside is refused with a message, as ``calc.limits`` does for model sizes).
MAX_BOARD_POWER_W = 5_000.0          # the largest boards draw 1,400 W (MI355X); 5 kW is no accelerator
MAX_OTHER_POWER_W = 10_000.0         # per GPU; a DGX H100 spends 575 W per GPU outside the boards
MIN_PUE, MAX_PUE = 1.0, 3.0          # 1.0 is the ideal; the 2007 industry average was 2.5 (Uptime Institute)
MAX_GRID_G_PER_KWH = 2_000.0         # coal plants emit about 1,000 g/kWh; the dirtiest grids are below 1,400


def _check_between(value, what: str, low: float, high: float, why: str) -> float:
    v = float(value)
    if not math.isfinite(v) or v < low or v > high:
        raise ValueError(f"{what} must be between {low:,g} and {high:,g} ({why}), got {value!r}")
    return v


@lru_cache(maxsize=1)
def energy_data() -> dict:
    """The parsed ``calc/data/energy.json`` (defaults, ownership inputs, grid intensities; each with its
    source). Cached: treat it as read-only."""
    return json.loads((DATA_DIR / "energy.json").read_text())


def energy_defaults() -> dict:
    """The default inputs of the energy calculation, ``{name: {"value", "source", "date"}}``: "pue",
    "other_power_w_per_gpu", "idle_fraction_of_tdp" (from ``calc/data/energy.json``)."""
    return {k: dict(v) for k, v in energy_data()["defaults"].items()}


def _default(name: str) -> float:
    return float(energy_data()["defaults"][name]["value"])


def check_pue(pue) -> float:
    """``pue`` as a float in [1, 3] (total facility power / IT power).

    Raises:
        ValueError: outside [1, 3] or not a number.
    """
    if isinstance(pue, bool):
        raise ValueError(f"pue must be a number between 1 and 3, got {pue!r}")
    try:
        v = float(pue)
    except (TypeError, ValueError):
        raise ValueError(f"pue must be a number between 1 and 3, got {pue!r}") from None
    return _check_between(v, "pue", MIN_PUE, MAX_PUE, "facility power over IT power: 1.0 is the ideal, "
                          "hyperscale sites run about 1.1, the industry average is 1.58")


def check_power_w(value, what: str = "gpu_power_w", limit: float = MAX_BOARD_POWER_W, allow_zero: bool = False) -> float:
    """A power in watts, positive (or zero with ``allow_zero``) and at most ``limit``.

    Raises:
        ValueError: negative, zero (unless allowed), above the limit, or not a number.
    """
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number of watts, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number of watts, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero) or v > limit:
        low = "0" if allow_zero else "above 0"
        raise ValueError(f"{what} must be {low} and at most {limit:,.0f} W, got {value!r}")
    return v


def board_power_w(accelerator: Accelerator, basis: str = "tdp") -> float:
    """Watts one board draws while serving, by ``basis``: "tdp" (its limit) or "measured" (a public
    measurement under an inference load; the limit where none is on file). H100 SXM: 700 W.

    Raises:
        ValueError: an unknown basis, or no power figure on file for this accelerator (enter one).
    """
    check_choice(basis, POWER_BASES, f"basis must be one of {', '.join(POWER_BASES)} ({'; '.join(POWER_BASIS_LABELS.values())})")
    if basis == "measured" and accelerator.measured_power_w is not None:
        return float(accelerator.measured_power_w)
    if accelerator.tdp_w is None:
        raise ValueError(f"no power figure is on file for the {accelerator.name}; enter the watts it draws")
    return float(accelerator.tdp_w)


def power_note(accelerator: Accelerator, basis: str = "tdp") -> str:
    """Which power figure ``board_power_w`` uses, in words with its source, or that none is on file.

    Raises:
        ValueError: an unknown basis.
    """
    check_choice(basis, POWER_BASES, f"basis must be one of {', '.join(POWER_BASES)}")
    if basis == "measured" and accelerator.measured_power_w is not None:
        return (f"{accelerator.measured_power_w:,.0f} W measured under an inference load "
                f"({accelerator.measured_power_source})")
    if accelerator.tdp_w is None:
        return f"No power figure is on file for the {accelerator.name}: enter the watts it draws."
    text = f"{accelerator.tdp_w:,.0f} W, the board's limit ({accelerator.power_source}); a memory-bound decode draws less"
    if basis == "measured":
        text = f"No measurement under load is on file for the {accelerator.name}, so " + text
    return text


def idle_power_w(accelerator: Accelerator) -> float:
    """Watts one board draws with a model loaded and no traffic: the public idle figure where one is on
    file (H200: 115 W), else ``idle_fraction_of_tdp`` (0.2, energy.json) x the board's limit.

    Raises:
        ValueError: neither an idle figure nor a power limit on file.
    """
    if accelerator.idle_power_w is not None:
        return float(accelerator.idle_power_w)
    return _default("idle_fraction_of_tdp") * board_power_w(accelerator, "tdp")


def wall_power_w(gpu_power_w: float, n_gpus: int = 1, other_power_w_per_gpu: float | None = None,
                 pue: float | None = None) -> float:
    """Watts drawn at the wall by ``n_gpus`` boards at ``gpu_power_w`` each, their share of the server's
    other power, times the data centre's PUE: ``(gpu + other) x n_gpus x PUE``.

    Defaults (``calc/data/energy.json``): other power 575 W per GPU (DGX H100's 10.2 kW less 8 x 700 W,
    over 8), PUE 1.58 (Uptime Institute 2023). One H100 at 700 W: (700 + 575) x 1.58 = 2,014.5 W.

    Raises:
        ValueError: a power outside (0, 5,000] W for a board or [0, 10,000] W for the rest, a PUE
            outside [1, 3], a GPU count below 1.
    """
    gpu = check_power_w(gpu_power_w, "gpu_power_w")
    other = check_power_w(_default("other_power_w_per_gpu") if other_power_w_per_gpu is None else other_power_w_per_gpu,
                          "other_power_w_per_gpu", MAX_OTHER_POWER_W, allow_zero=True)
    n = check_positive_int(n_gpus, "n_gpus")
    return (gpu + other) * n * check_pue(_default("pue") if pue is None else pue)


def joules_per_token(tokens_per_s, wall_power_w_: float):
    """Joules per output token, ``wall_power_w / tokens_per_s`` (= wall power x step time / B).
    Accepts a scalar or a numpy array of throughputs (tokens/s of the whole replica).

    Raises:
        ValueError: a non-positive throughput or power.
    """
    p = check_positive_number(wall_power_w_, "wall_power_w")
    t = np.asarray(tokens_per_s, dtype=float)
    if t.size == 0 or np.any(~np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"tokens_per_s must be positive, got {tokens_per_s!r}")
    out = p / t
    return float(out) if out.ndim == 0 else out


def energy_per_step_j(step_s, wall_power_w_: float):
    """Joules one step of ``step_s`` seconds draws at ``wall_power_w``: their product (scalar or array).

    Raises:
        ValueError: a negative or non-finite time, a non-positive power.
    """
    p = check_positive_number(wall_power_w_, "wall_power_w")
    s = np.asarray(step_s, dtype=float)
    if np.any(~np.isfinite(s)) or np.any(s < 0):
        raise ValueError(f"step_s must be a non-negative number of seconds, got {step_s!r}")
    out = p * s
    return float(out) if out.ndim == 0 else out


def tokens_per_kwh(j_per_token):
    """Tokens per kWh, 3.6e6 / (J per token); scalar or array.

    Raises:
        ValueError: a non-positive energy per token.
    """
    j = np.asarray(j_per_token, dtype=float)
    if j.size == 0 or np.any(~np.isfinite(j)) or np.any(j <= 0):
        raise ValueError(f"j_per_token must be positive, got {j_per_token!r}")
    out = JOULES_PER_KWH / j
    return float(out) if out.ndim == 0 else out


def grid_intensities() -> pd.DataFrame:
    """Grid carbon intensity by region: columns region, code, year, g_per_kwh (gCO2e per kWh of
    electricity generated, Ember's yearly data, the latest year per country; CC-BY-4.0). The source,
    license and date are in ``grid_source()``."""
    return pd.DataFrame(energy_data()["grid"]["rows"])


def grid_source() -> dict:
    """Where the grid intensities come from: {"source", "license", "read_on"}."""
    g = energy_data()["grid"]
    return {k: g[k] for k in ("source", "license", "read_on")}


def grid_intensity_g_per_kwh(region: str) -> float:
    """gCO2e per kWh of ``region`` (its name or code, case-insensitive): "World" 485.99, "FRA" 56.04.

    Raises:
        ValueError: an unknown region; the message lists the codes.
    """
    key = str(region).strip().lower()
    for row in energy_data()["grid"]["rows"]:
        if key in (row["region"].lower(), row["code"].lower()):
            return float(row["g_per_kwh"])
    codes = ", ".join(r["code"] for r in energy_data()["grid"]["rows"])
    raise ValueError(f"unknown region {region!r}; valid: {codes}")


def check_grid_intensity(g_per_kwh) -> float:
    """A grid intensity in gCO2e/kWh within [0, 2,000].

    Raises:
        ValueError: negative, above 2,000 or not a number.
    """
    if isinstance(g_per_kwh, bool):
        raise ValueError(f"grid intensity must be a number of gCO2e per kWh, got {g_per_kwh!r}")
    try:
        v = float(g_per_kwh)
    except (TypeError, ValueError):
        raise ValueError(f"grid intensity must be a number of gCO2e per kWh, got {g_per_kwh!r}") from None
    return _check_between(v, "grid intensity (gCO2e/kWh)", 0.0, MAX_GRID_G_PER_KWH,
                          "a coal plant emits about 1,000; Norway's grid 30")


def co2_kg_per_million(j_per_token, g_per_kwh: float):
    """kg CO2e per 1M tokens: J/token x 1e6 / 3.6e6 kWh x g/kWh / 1000 (scalar or array).

    Raises:
        ValueError: a non-positive energy per token, a grid intensity outside [0, 2,000].
    """
    g = check_grid_intensity(g_per_kwh)
    tokens_per_kwh(j_per_token)  # refuses a non-positive energy
    kwh_per_million = np.asarray(j_per_token, dtype=float) * 1e6 / JOULES_PER_KWH
    out = kwh_per_million * g / 1000.0
    return float(out) if out.ndim == 0 else out


def energy_table(tokens_per_s, wall_power_w_: float, g_per_kwh: float | None = None) -> pd.DataFrame:
    """Per point of a throughput curve: j_per_token, tokens_per_kwh, kwh_per_million and (with a grid
    intensity) co2_kg_per_million. ``tokens_per_s``: array of the replica's throughput, one per point.

    Raises:
        ValueError: as ``joules_per_token`` and ``co2_kg_per_million``.
    """
    j = np.atleast_1d(joules_per_token(tokens_per_s, wall_power_w_))
    df = pd.DataFrame({"j_per_token": j, "tokens_per_kwh": tokens_per_kwh(j), "kwh_per_million": j * 1e6 / JOULES_PER_KWH})
    if g_per_kwh is not None:
        df["co2_kg_per_million"] = np.atleast_1d(co2_kg_per_million(j, g_per_kwh))
    return df
