"""The estimate beside the roofline bound: each part of the bound divided by its measured utilisation."""
import pytest

import calc
from calc.efficiency import Utilisation, default_utilisation, estimate_step, utilisation_measurements

LLAMA, H100 = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")


def test_memory_bound_decode_estimate_is_the_bound_over_mbu():
    # The course's napkin (embedding table): weights 16,060,522,496 B / 3.35e12 B/s = 4.794 ms, KV of 8,192
    # tokens 1,073,741,824 B / 3.35e12 = 0.3205 ms: bound 5.115 ms. At MBU 0.5 both reads take twice as long,
    # compute (2 x 8.03e9 / 989e12 = 0.016 ms, / 0.25 = 0.065 ms) stays hidden: 10.23 ms.
    bound = calc.decode_step_time(LLAMA, H100, 1, 8192, embedding="table")
    est = estimate_step(bound, Utilisation(0.5, 0.25))
    assert bound.total_s == pytest.approx(5.115e-3, rel=1e-3)
    assert est.weights_s == pytest.approx(2 * 4.794e-3, rel=1e-3)
    assert est.kv_s == pytest.approx(2 * 0.3205e-3, rel=1e-3)
    assert est.compute_s == pytest.approx(4 * 2 * 8.03e9 / 989e12, rel=1e-3)
    assert est.total_s == pytest.approx(10.23e-3, rel=1e-3)
    assert est.tokens_per_s == pytest.approx(1 / 10.23e-3, rel=1e-3)     # B = 1 token per step
    assert (est.flops, est.bytes, est.batch) == (bound.flops, bound.bytes, bound.batch)


def test_compute_bound_prefill_estimate_is_the_bound_over_mfu():
    # Prefill of 8,192 tokens: 2 N T = 2 x 8.03e9 x 8192 = 1.316e14 FLOP plus attention, about 0.14 s at
    # 989 TFLOP/s, far above the 5 ms weight read: the estimate's compute part is bound / MFU.
    bound = calc.prefill_time(LLAMA, H100, 8192)
    est = estimate_step(bound, Utilisation(0.7, 0.8))
    assert bound.bound == "compute"
    assert est.compute_s == pytest.approx(bound.compute_s / 0.8)
    assert est.total_s == pytest.approx(bound.kv_s / 0.7 + bound.compute_s / 0.8)
    assert est.total_s > bound.total_s


def test_full_utilisation_gives_the_bound_back_and_bad_values_are_refused():
    bound = calc.decode_step_time(LLAMA, H100, 32, 8192)
    assert estimate_step(bound, Utilisation(1.0, 1.0)).total_s == pytest.approx(bound.total_s)
    for mbu, mfu in ((1.2, 0.5), (0.0, 0.5), (0.5, -1), (float("nan"), 0.5)):
        with pytest.raises(ValueError):
            Utilisation(mbu, mfu)


def test_defaults_come_from_cited_measurements():
    u = default_utilisation()
    m = utilisation_measurements()
    # gpt-fast, Llama-2-7B on an A100-80GB: 1,397 GB/s of 2,039 GB/s = 0.685
    assert u.memory_bandwidth == pytest.approx(1397 / 2039, abs=0.01)
    # stas00's best bf16 matmul on an H100 SXM: 794.5 of 989 TFLOP/s = 0.803
    assert u.compute == pytest.approx(794.5 / 989, abs=0.01)
    assert {"model", "engine", "accelerator", "source"} <= set(m.columns)
    assert m["source"].str.len().min() > 20 and set(m["what"]) == {"memory_bandwidth", "compute"}
