"""Owning against renting against an API (calc.ownership): $ per GPU-hour, $ per 1M tokens, crossovers."""
import numpy as np
import pytest

import calc
from calc import ownership as own

H100 = calc.get_accelerator("h100-sxm")


def inputs(**kw):
    return own.OwnershipInputs.for_accelerator(H100, **kw)


def test_owned_cost_per_gpu_hour_by_hand():
    # defaults: $33,750 per GPU, 5 years at 8%, $163.44 per kW-month, $0.08 per kWh, 700 W busy, 140 W idle
    # (0.2 x 700), 575 W of the rest of the server per GPU, PUE 1.58.
    # CRF = 0.08 / (1 - 1.08^-5) = 0.08 / (1 - 0.680583) = 0.250456; 33,750 x 0.250456 / 8,760 = $0.964944 per hour
    assert own.capital_recovery_factor(0.08, 5) == pytest.approx(0.250456, rel=1e-5)
    assert own.capital_recovery_factor(0.0, 4) == 0.25
    c = own.owned_cost_per_gpu_hour(inputs(), 0.5)
    assert c.hardware_usd == pytest.approx(0.964944, rel=1e-5)
    # space: 163.44 x (700 + 575) / 1,000 kW / 720 h = 163.44 x 1.275 / 720 = $0.289425
    assert c.space_usd == pytest.approx(0.289425, rel=1e-6)
    # energy at u = 0.5: (0.5 x 1,275 + 0.5 x (140 + 575)) = 995 W x 1.58 = 1.5721 kW x $0.08 = $0.125768
    assert c.energy_usd == pytest.approx(0.125768, rel=1e-6)
    assert c.total_usd == pytest.approx(1.380137, rel=1e-5)
    # scaled to zero the idle half costs no energy: 0.5 x 1,275 W x 1.58 / 1,000 x 0.08 = $0.08058
    assert own.owned_cost_per_gpu_hour(inputs(), 0.5, scale_to_zero=True).energy_usd == pytest.approx(0.08058)


def test_per_million_tokens_and_where_the_money_goes():
    # 1,000 tok/s per GPU busy half the hours: 1.8M tokens per hour of the month; $1.380137 / 1.8 = $0.76674 per 1M
    c = own.owned_cost_per_gpu_hour(inputs(), 0.5)
    m = own.usd_per_million_tokens(c, 1000.0, 0.5)
    assert m["total_usd"] == pytest.approx(1.380137 / 1.8, rel=1e-5)
    assert m["hardware_usd"] == pytest.approx(0.964944 / 1.8, rel=1e-5)
    assert m["hardware_usd"] + m["energy_usd"] + m["space_usd"] == pytest.approx(m["total_usd"])
    # renting at $3.99/h always on, same traffic: 3.99 / 1.8 = $2.2167; scaled to zero: 3.99 / 3.6 = $1.1083
    assert own.usd_per_million_tokens(own.rented_cost_per_gpu_hour(3.99, 0.5), 1000.0, 0.5)["total_usd"] == \
        pytest.approx(2.21667, rel=1e-5)
    assert own.usd_per_million_tokens(own.rented_cost_per_gpu_hour(3.99, 0.5, True), 1000.0, 0.5)["total_usd"] == \
        pytest.approx(1.10833, rel=1e-5)
    arr = own.usd_per_million_tokens(c, np.array([500.0, 1000.0]), 0.5)["total_usd"]
    assert arr[0] == pytest.approx(2 * arr[1])


def test_crossover_where_the_staircase_meets_the_api_line():
    # M = $1,000 per replica-month, capacity 1e9 tokens, API $1.50 per 1M: r = 1.5e-6 x 1e9 / 1,000 = 1.5,
    # r / (r - 1) = 3 -> k* = 2; V* = 2 x 1,000 / 1.5e-6 = 1.3333e9 tokens (on the second step)
    api = own.CostLine("API", 0.0, 1.5e-6)
    gpus = own.CostLine("gpus", 1000.0, 0.0, 1e9)
    v = own.crossover_volume(gpus, api)
    assert v == pytest.approx(2000.0 / 1.5e-6)
    assert gpus.monthly_usd(v) == pytest.approx(api.monthly_usd(v))            # both $2,000
    assert gpus.monthly_usd(v * 0.999) > api.monthly_usd(v * 0.999)
    above = np.geomspace(v, 1e13, 2000)
    assert np.all(gpus.monthly_usd(above) <= api.monthly_usd(above) + 1e-9)
    # step 1 ends at 1e9 where the API ($1,500) already beats one replica ($1,000) ...
    assert api.monthly_usd(1e9) > gpus.monthly_usd(1e9)
    # ... but the second replica ($2,000) is dearer than the API just after 1e9 ($1,500): the first crossing is not the last
    assert api.monthly_usd(1.0001e9) < gpus.monthly_usd(1.0001e9)
    # too cheap an API never loses for good: r = 0.9e-6 x 1e9 / 1,000 < 1
    assert own.crossover_volume(gpus, own.CostLine("API", 0.0, 0.9e-6)) is None


def test_api_rent_buy_lines_and_their_crossovers():
    # Llama-3-8B on an H100 at B = 64, 1,024 context: 9,084.6 tok/s; rent $3.99/h; API $0.20 per 1M output
    s = calc.decode_step_time(calc.get_model("llama-3-8b"), H100, 64, 1024)
    api, rent, buy = own.serving_lines(s.tokens_per_s, 1, 0.20, 3.99, inputs())
    cap = s.tokens_per_s * 3600 * 720                          # 23.55e9 tokens a month
    assert rent.capacity_tokens_per_month == pytest.approx(cap)
    assert rent.fixed_month_usd == pytest.approx(3.99 * 720)  # $2,872.80
    for line in (rent, buy):
        v = own.crossover_volume(line, api)
        assert line.monthly_usd(v) == pytest.approx(api.monthly_usd(v), rel=1e-9)
        grid = np.geomspace(v, 1e13, 500)
        assert np.all(line.monthly_usd(grid) <= api.monthly_usd(grid) * (1 + 1e-12))
    # rent: r = 2e-7 x 23.547e9 / 2,872.8 = 1.639 -> k* = ceil(2.565) - 1 = 2: V* = 2 x 2,872.8 / 2e-7 = 28.73e9
    assert own.crossover_volume(rent, api) == pytest.approx(28.728e9, rel=1e-6)
    # buying's fixed month ($968) is well under rent's: buying beats renting at every utilisation
    assert own.buy_beats_rent_utilisation(rent, buy) == 1.0
    curves = own.cost_curves([api, rent, buy])
    assert set(curves["cheapest"]) <= {"API", "rent", "buy"} and curves["tokens_per_month"].is_monotonic_increasing
    assert curves.iloc[0]["cheapest"] == "API" and curves.iloc[-1]["cheapest"] == "buy"


@pytest.mark.parametrize("kwargs,needle", [
    (dict(server_price_usd_per_gpu=0), "server_price_usd_per_gpu must be above 0"),
    (dict(server_price_usd_per_gpu=-1), "server_price_usd_per_gpu must be above 0"),
    (dict(depreciation_years=0), "depreciation_years must be above 0"),
    (dict(depreciation_years=1000), "depreciation_years must be at most 20"),
    (dict(cost_of_capital=-0.1), "cost_of_capital must be between 0 and 1"),
    (dict(cost_of_capital=8), "cost_of_capital must be between 0 and 1"),
    (dict(electricity_usd_per_kwh=0), "electricity_usd_per_kwh must be above 0"),
    (dict(electricity_usd_per_kwh=float("inf")), "electricity_usd_per_kwh must be a finite number"),
    (dict(colocation_usd_per_kw_month=-5), "colocation_usd_per_kw_month must be between 0"),
    (dict(idle_power_w=900), "idle_power_w .* must not exceed"),
    (dict(pue=0.9), "pue must be between 1 and 3"),
    (dict(gpu_power_w="lots"), "gpu_power_w must be a number of watts"),
])
def test_bad_ownership_inputs_are_refused_with_a_message(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        inputs(**kwargs)


@pytest.mark.parametrize("call,needle", [
    (lambda: own.owned_cost_per_gpu_hour(inputs(), 0), "utilisation must be above 0 and at most 1"),
    (lambda: own.owned_cost_per_gpu_hour(inputs(), 1.5), "utilisation must be above 0 and at most 1"),
    (lambda: own.rented_cost_per_gpu_hour(0, 0.5), "price_per_hour_usd must be above 0"),
    (lambda: own.rented_cost_per_gpu_hour(-2, 0.5), "price_per_hour_usd must be above 0"),
    (lambda: own.serving_lines(1000, 1, 0, 3.99, inputs()), "API price per 1M output tokens must be above 0"),
    (lambda: own.serving_lines(1000, 0, 1, 3.99, inputs()), "n_gpus must be a positive integer"),
    (lambda: own.CostLine("x", 1, 0, 1e9).monthly_usd(-1), "tokens_per_month must be between 0"),
])
def test_bad_calls_are_refused_with_a_message(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()
