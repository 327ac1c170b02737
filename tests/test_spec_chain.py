"""Speculative decoding with an acceptance rate per draft position (calc.spec_speedup)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calc
from calc import speculative as sd
from calc.spec_speedup import (best_chain_length, chain_position_table, expected_tokens_per_verification,
                               published_chains, walltime_speedup_chain)


def test_expected_tokens_of_a_falling_chain_by_hand():
    # a = (0.9, 0.8, 0.7): kept 0.9, 0.9 x 0.8 = 0.72, 0.72 x 0.7 = 0.504 -> E = 1 + 0.9 + 0.72 + 0.504 = 3.124
    assert expected_tokens_per_verification([0.9, 0.8, 0.7]) == pytest.approx(3.124)
    # the i.i.d. formula at the first rate would say (1 - 0.9^4) / 0.1 = 3.439: the falling chain keeps fewer
    assert sd.expected_tokens_per_target_forward(0.9, 3) == pytest.approx(3.439)
    # speedup with c = 0.1: 3.124 / (3 x 0.1 + 1) = 2.40308 (Theorem 3.8 with the chain's E)
    assert walltime_speedup_chain([0.9, 0.8, 0.7], 0.1) == pytest.approx(3.124 / 1.3)
    t = chain_position_table([0.9, 0.8, 0.7], 0.1)
    assert list(t["kept_probability"]) == pytest.approx([0.9, 0.72, 0.504])
    assert list(t["tokens_per_verification"]) == pytest.approx([1.9, 2.62, 3.124])


def test_deepseek_v3_mtp_second_token_acceptance():
    # DeepSeek-V3 report, section 5.4.3: one MTP module, second-token acceptance 85-90% -> 1.85 to 1.90 tokens
    # per verification (the report measures 1.8x tokens per second, below it: the MTP module costs time).
    chains = published_chains()
    es = sorted(expected_tokens_per_verification(c["acceptance"]) for name, c in chains.items() if "DeepSeek" in name)
    assert es == pytest.approx([1.85, 1.90])
    assert all(c["source"] for c in chains.values())


def test_best_chain_length_and_empty_chain():
    # a = (0.9, 0.1), c = 0.2: k=0 -> 1; k=1 -> 1.9 / 1.2 = 1.583; k=2 -> (1 + 0.9 + 0.09) / 1.4 = 1.421 -> k = 1
    assert best_chain_length([0.9, 0.1], 0.2) == 1
    assert expected_tokens_per_verification([]) == 1.0
    assert best_chain_length([0.1], 0.5) == 0   # 1.1 / 1.5 < 1: no gain


@pytest.mark.parametrize("bad", [[1.2], [-0.1], [[0.5, 0.5]], "0.9,0.8", [float("nan")], [0.5] * 65])
def test_bad_chains_are_refused(bad):
    with pytest.raises(ValueError):
        expected_tokens_per_verification(bad)


def test_batch_table_takes_a_chain():
    target, draft = calc.get_model("llama-3.1-70b"), calc.get_model("llama-3.2-1b")
    gpu = calc.get_accelerator("h100-sxm")
    t = sd.batch_speedup_table(target, draft, gpu, [1, 64], gamma=None, acceptance=[0.9, 0.8, 0.7])
    assert list(t["tokens_per_target_forward"]) == pytest.approx([3.124, 3.124])
    # gamma = 3 verifies 4 tokens per sequence
    assert list(t["verify_tokens_per_step"]) == [4, 256]
    with pytest.raises(ValueError, match="must equal"):
        sd.batch_speedup_table(target, draft, gpu, [1], gamma=2, acceptance=[0.9, 0.8, 0.7])


@settings(max_examples=100, deadline=None)
@given(st.floats(0.0, 1.0), st.integers(0, 20), st.floats(0.0, 2.0))
def test_equal_rates_reduce_to_the_iid_formula(alpha, gamma, c):
    assert expected_tokens_per_verification([alpha] * gamma) == pytest.approx(
        sd.expected_tokens_per_target_forward(alpha, gamma), rel=1e-9)
    assert walltime_speedup_chain([alpha] * gamma, c) == pytest.approx(sd.walltime_speedup(alpha, gamma, c), rel=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), max_size=12), st.integers(0, 11), st.floats(0.0, 0.3))
def test_raising_one_position_never_lowers_the_expectation(chain, k, bump):
    if not chain:
        return
    k = k % len(chain)
    higher = list(chain)
    higher[k] = min(1.0, higher[k] + bump)
    assert expected_tokens_per_verification(higher) >= expected_tokens_per_verification(chain) - 1e-12


def test_deepseek_v3_mtp_as_the_draft_gives_the_reported_1_8x():
    # c = MTP active parameters / main active: (one MoE layer's active 1.51B + eh_proj 0.10B + head 0.93B... =
    # 1,614,779,392) / 37,552,282,624 = 0.0430. Speedup = E / (1 + c): 1.85 / 1.043 = 1.774, 1.90 / 1.043 = 1.822;
    # the report measures 1.8x tokens per second (DeepSeek-V3 report, section 5.4.3).
    m = calc.get_model("deepseek-v3")
    c = sd.mtp_cost_ratio(m)
    assert c == pytest.approx(1_614_779_392 / 37_552_282_624)
    assert walltime_speedup_chain([0.85], c) == pytest.approx(1.774, abs=0.001)
    assert walltime_speedup_chain([0.90], c) == pytest.approx(1.822, abs=0.001)
    assert sd.mtp_chain(m)["cost_ratio"] == c
    with pytest.raises(ValueError, match="no multi-token-prediction"):
        sd.mtp_cost_ratio(calc.get_model("llama-3-8b"))
