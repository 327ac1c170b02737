"""Energy per token, tokens per kWh and CO2 per 1M tokens (calc.energy), and the power figures of the presets."""
import json

import numpy as np
import pytest

import calc
from calc import energy
from calc.models import DATA_DIR

LLAMA3 = calc.get_model("llama-3-8b")
H100 = calc.get_accelerator("h100-sxm")


def test_energy_per_token_by_hand_h100_llama3_batch_1_and_64():
    # Llama-3-8B bf16: 16,060,522,496 B of weights; a decode step gathers B rows of the untied input
    # embedding (128,256 x 4,096) instead of the whole table: B = 1 reads
    # 16,060,522,496 - 2 x (525,336,576 - 4,096) = 15,009,857,536 B of weights; KV: 32 layers x 2 x 8
    # heads x 128 x 2 B = 131,072 B per token x 1,024 = 134,217,728 B. (15,009,857,536 + 134,217,728) / 3.35e12
    # = 4.52062e-3 s (compute, 2 x 8.03e9 / 989e12 = 1.6e-5 s, hides under the weights).
    s1 = calc.decode_step_time(LLAMA3, H100, 1, 1024)
    assert s1.total_s == pytest.approx(4.52062e-3, rel=1e-5)
    # the board alone at its 700 W limit: 700 x 4.52062e-3 = 3.1644 J per token
    assert energy.joules_per_token(s1.tokens_per_s, 700.0) == pytest.approx(3.1644, rel=1e-4)
    # at the wall with the defaults: (700 + 575) x 1.58 = 2,014.5 W -> 9.1068 J; 3.6e6 / 9.1068 = 395,310 per kWh
    wall = energy.wall_power_w(700.0)
    assert wall == pytest.approx(2014.5)
    j1 = energy.joules_per_token(s1.tokens_per_s, wall)
    assert j1 == pytest.approx(9.1068, rel=1e-4)
    assert energy.tokens_per_kwh(j1) == pytest.approx(395_310, rel=1e-4)
    # B = 64: weights 16,060,522,496 - 2 x (525,336,576 - 64 x 4,096) = 15,010,373,632 B, KV 64 x 134,217,728
    # = 8,589,934,592 B: 23,600,308,224 / 3.35e12 = 7.04487e-3 s for 64 tokens: 9,084.6 tok/s;
    # 2,014.5 / 9,084.6 = 0.22175 J per token (41x less than at B = 1)
    s64 = calc.decode_step_time(LLAMA3, H100, 64, 1024)
    assert s64.total_s == pytest.approx(7.04487e-3, rel=1e-5)
    j64 = energy.joules_per_token(s64.tokens_per_s, wall)
    assert j64 == pytest.approx(0.22175, rel=1e-4)
    # per step: 2,014.5 W x 7.04487e-3 s = 14.192 J, / 64 = 0.22175 J
    assert energy.energy_per_step_j(s64.total_s, wall) / 64 == pytest.approx(j64)
    # CO2 on the US grid (Ember, 385.98 g/kWh): 0.22175 x 1e6 / 3.6e6 = 0.061597 kWh per 1M x 385.98 = 23.78 g
    us = energy.grid_intensity_g_per_kwh("USA")
    assert us == 385.98
    assert energy.co2_kg_per_million(j64, us) == pytest.approx(0.023775, rel=1e-3)


def test_energy_table_has_every_point_of_the_curve():
    df = calc.decode_sweep(LLAMA3, H100, 1024, np.array([1, 8, 64]))
    t = energy.energy_table(df["tokens_per_s"].to_numpy(), 2014.5, 56.04)
    assert len(t) == 3 and list(t.columns) == ["j_per_token", "tokens_per_kwh", "kwh_per_million", "co2_kg_per_million"]
    assert t["j_per_token"].is_monotonic_decreasing       # batching spreads the weight reads
    assert t["tokens_per_kwh"].iloc[0] * t["j_per_token"].iloc[0] == pytest.approx(3.6e6)


def test_power_basis_says_which_figure():
    assert energy.board_power_w(H100) == 700
    assert energy.board_power_w(H100, "measured") == 700          # none measured on file: the limit
    assert "No measurement under load" in energy.power_note(H100, "measured")
    rtx = calc.get_accelerator("rtx-4090")
    assert energy.board_power_w(rtx, "measured") == pytest.approx(246.6)
    assert "inference load" in energy.power_note(rtx, "measured")
    assert energy.idle_power_w(calc.get_accelerator("h200")) == 115              # public idle figure
    assert energy.idle_power_w(H100) == pytest.approx(140)                        # 0.2 x 700
    tpu = calc.get_accelerator("tpu-v5e")
    assert "No power figure is on file" in energy.power_note(tpu)
    with pytest.raises(ValueError, match="no power figure is on file"):
        energy.board_power_w(tpu)


def test_every_preset_power_figure_carries_a_source():
    raw = json.loads((DATA_DIR / "accelerators.json").read_text())
    for gid in calc.list_accelerators():
        a = calc.get_accelerator(gid)
        for value, source in ((a.tdp_w, a.power_source), (a.measured_power_w, a.measured_power_source),
                              (a.idle_power_w, a.idle_power_source)):
            if value is not None:
                assert len(source) > 20, gid
        if gid.startswith(("h1", "h2", "a1", "b", "l", "rtx", "mi")):   # every data-centre GPU has a limit
            assert a.tdp_w is not None and 50 <= a.tdp_w <= 1500, gid
            if a.idle_power_w is not None:
                assert a.idle_power_w < a.tdp_w
        assert "tdp_w" not in raw[gid] or "power_source" in raw[gid]


def test_defaults_and_grid_carry_sources():
    for name, d in energy.energy_defaults().items():
        assert d["source"] and "value" in d, name
    assert energy.energy_defaults()["pue"]["value"] == 1.58
    src = energy.grid_source()
    assert "Ember" in src["source"] and "CC-BY-4.0" in src["license"] and src["read_on"]
    g = energy.grid_intensities()
    assert {"region", "code", "year", "g_per_kwh"} <= set(g.columns) and len(g) >= 20
    assert g["g_per_kwh"].between(0, 1000).all()
    assert energy.grid_intensity_g_per_kwh("france") == 56.04


@pytest.mark.parametrize("call,needle", [
    (lambda: energy.wall_power_w(0), "gpu_power_w must be above 0"),
    (lambda: energy.wall_power_w(-5), "gpu_power_w must be above 0"),
    (lambda: energy.wall_power_w(1e9), "at most 5,000 W"),
    (lambda: energy.wall_power_w(700, pue=0.5), "pue must be between 1 and 3"),
    (lambda: energy.wall_power_w(700, pue=float("nan")), "pue must be between 1 and 3"),
    (lambda: energy.wall_power_w(700, other_power_w_per_gpu=-1), "other_power_w_per_gpu"),
    (lambda: energy.wall_power_w(700, n_gpus=0), "n_gpus"),
    (lambda: energy.joules_per_token(0, 700), "tokens_per_s must be positive"),
    (lambda: energy.co2_kg_per_million(1.0, 5000), "between 0 and 2,000"),
    (lambda: energy.co2_kg_per_million(1.0, -1), "between 0 and 2,000"),
    (lambda: energy.grid_intensity_g_per_kwh("Atlantis"), "unknown region"),
    (lambda: energy.board_power_w(H100, "nameplate"), "basis must be one of tdp, measured"),
])
def test_bad_inputs_say_what_is_allowed(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_no_accelerator_is_listed_twice_in_the_file():
    # json.loads keeps the last of two equal keys silently: two branches adding the same preset (an MI355X, say)
    # would drop one entry's fields without a word. Read the file keeping every key.
    seen = []

    def pairs(items):
        seen.append([k for k, _ in items])
        return dict(items)

    json.loads((DATA_DIR / "accelerators.json").read_text(), object_pairs_hook=pairs)
    for keys in seen:
        assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
