"""Tests of calc.speculative: exactness of speculative sampling and the speedup formulas.

Hand numbers come from seed 000, step 3 (p = (0.6, 0.4), q = (0.9, 0.1)) and from Leviathan,
Kalman, Matias 2022 (Eq. 1, Theorem 3.8, Table 1; reference data section 5.7).
"""
import math

import numpy as np
import pytest

from calc.spec_speedup import (best_gamma, expected_tokens_per_target_forward, operations_factor, tokens_per_forward_table,
                               walltime_speedup)
from calc.spec_tables import (accept_or_resample, acceptance_probability, acceptance_rate, check_pair, normalise,
                              residual_distribution)
from calc.speculative import (
    SpecDecodeStats,
    acceptance_table,
    chi_square_p_value,
    output_distribution,
    run_sampling_experiment,
    speculative_generate,
    speculative_round,
    stream_distribution,
)

SEED_P = [0.6, 0.4]   # target: A 0.6, B 0.4
SEED_Q = [0.9, 0.1]   # draft:  A 0.9, B 0.1


def random_pairs(n_pairs=4, n_symbols=5, seed=2024):
    """Random 5-symbol target/draft pairs (Dirichlet(1) draws), fixed seed."""
    rng = np.random.default_rng(seed)
    return [(rng.dirichlet(np.ones(n_symbols)), rng.dirichlet(np.ones(n_symbols))) for _ in range(n_pairs)]


# --- The seed's worked example, exactly -------------------------------------------------------

def test_seed_example_accepts_A_with_probability_two_thirds():
    # min(1, 0.6/0.9) = 2/3 for A; p(B) = 0.4 > q(B) = 0.1, so B is always accepted.
    assert acceptance_probability(SEED_P, SEED_Q) == pytest.approx([2 / 3, 1.0], abs=1e-12)


def test_seed_example_rejections_are_30_percent_of_draws():
    # Rejections: 0.9 * (1 - 2/3) = 0.3; alpha = min(.6,.9) + min(.4,.1) = 0.7.
    assert acceptance_rate(SEED_P, SEED_Q) == pytest.approx(0.7, abs=1e-12)
    table = acceptance_table(SEED_P, SEED_Q)
    assert table.loc[2, "rejection mass max(0, q - p)"] == pytest.approx(0.3, abs=1e-12)
    # Simulated with one draft per round: every draft is verified; rejected share ~ 0.3.
    _, stats = speculative_generate(SEED_P, SEED_Q, 100_000, 1, np.random.default_rng(7))
    rejected = (stats.n_verified - stats.n_accepted) / stats.n_verified
    se = math.sqrt(0.3 * 0.7 / stats.n_verified)
    assert abs(rejected - 0.3) < 4 * se


def test_seed_example_residual_is_only_B():
    # max(0, p - q) = (0, 0.3); normalised: (0, 1).
    assert residual_distribution(SEED_P, SEED_Q) == pytest.approx([0.0, 1.0], abs=1e-12)
    table = acceptance_table(SEED_P, SEED_Q)
    assert table["resampled mass"][:2].tolist() == pytest.approx([0.0, 0.3], abs=1e-12)


def test_seed_example_output_is_target():
    # A: 0.9 * 2/3 = 0.6 accepted; B: 0.1 accepted + 0.3 from the residual = 0.4.
    assert output_distribution(SEED_P, SEED_Q) == pytest.approx([0.6, 0.4], abs=1e-12)
    table = acceptance_table(SEED_P, SEED_Q)
    assert table["accepted mass min(p, q)"][:2].tolist() == pytest.approx([0.6, 0.1], abs=1e-12)
    assert table["output"][:2].tolist() == pytest.approx([0.6, 0.4], abs=1e-12)
    assert table.loc[2, "output"] == pytest.approx(1.0, abs=1e-12)


def test_accept_or_resample_seed_example_frequencies():
    # Drafting A each time: accepted 2/3 of the time; a rejection can only give B (the residual).
    rng = np.random.default_rng(11)
    results = [accept_or_resample(SEED_P, SEED_Q, 0, rng) for _ in range(6000)]
    accepted = [ok for _, ok in results]
    assert all(tok == 0 for tok, ok in results if ok)
    assert all(tok == 1 for tok, ok in results if not ok)
    share = sum(accepted) / len(accepted)
    assert abs(share - 2 / 3) < 4 * math.sqrt((2 / 9) / 6000)
    # Drafting B: p(B) > q(B), always accepted.
    assert all(accept_or_resample(SEED_P, SEED_Q, 1, rng) == (1, True) for _ in range(200))


def test_wrong_residual_on_seed_example_overweights_A():
    # One step, sampling p on rejection: A = 0.6 + 0.3 * 0.6 = 0.78, B = 0.1 + 0.3 * 0.4 = 0.22.
    assert output_distribution(SEED_P, SEED_Q, wrong_residual=True) == pytest.approx([0.78, 0.22], abs=1e-12)
    # In a stream with gamma = 1: per round 1 verified draft plus a bonus (from p) with prob 0.7:
    # A = (0.78 + 0.7 * 0.6) / 1.7 = 1.2 / 1.7.
    assert stream_distribution(SEED_P, SEED_Q, 1, wrong_residual=True)[0] == pytest.approx(1.2 / 1.7, abs=1e-12)
    tokens, _ = speculative_generate(SEED_P, SEED_Q, 200_000, 1, np.random.default_rng(3), wrong_residual=True)
    freq_a = np.mean(tokens == 0)
    assert abs(freq_a - 1.2 / 1.7) < 4 * math.sqrt(0.25 / 200_000)


# --- Exactness for random pairs ---------------------------------------------------------------

def test_residual_zeroes_tokens_the_draft_overrated():
    for p, q in random_pairs():
        residual = residual_distribution(p, q)
        assert np.all(residual[q >= p] == 0)
        assert residual.sum() == pytest.approx(1.0)
        excess = np.maximum(0, p - q)
        assert residual == pytest.approx(excess / excess.sum())


def test_output_distribution_equals_target_exactly():
    # 60,000 tokens per pair through the full procedure (gamma = 3); chi-square must not reject.
    for i, (p, q) in enumerate(random_pairs()):
        tokens, _ = speculative_generate(p, q, 60_000, 3, np.random.default_rng(100 + i))
        assert chi_square_p_value(tokens, p) > 0.01, (p, q)
        assert output_distribution(p, q) == pytest.approx(p, abs=1e-12)


def test_output_distribution_with_wrong_residual_fails():
    # The same test with p sampled on rejection must reject p: it can fail.
    for i, (p, q) in enumerate(random_pairs()):
        tokens, _ = speculative_generate(p, q, 60_000, 3, np.random.default_rng(100 + i), wrong_residual=True)
        assert chi_square_p_value(tokens, p) < 1e-6, (p, q)


def test_sampling_experiment_verdicts():
    good = run_sampling_experiment(SEED_P, SEED_Q, 60_000, 4, seed=0)
    bad = run_sampling_experiment(SEED_P, SEED_Q, 60_000, 4, seed=0, wrong_residual=True)
    assert good.matches_target and not bad.matches_target
    assert good.alpha == pytest.approx(0.7)
    assert good.histogram["count"].sum() == 60_000


# --- One round ---------------------------------------------------------------------------------

def test_round_all_accepted_emits_bonus_token():
    # p == q everywhere: every draft is accepted, gamma + 1 = 4 tokens, the last from p_table[3].
    p_rows = [[0.5, 0.5, 0.0]] * 3 + [[0.0, 0.0, 1.0]]
    q_rows = [[0.5, 0.5, 0.0]] * 3
    result = speculative_round(p_rows, q_rows, np.random.default_rng(0), draft_tokens=[1, 0, 1])
    assert result.tokens.tolist() == [1, 0, 1, 2]
    assert result.n_accepted == 3 and result.bonus


def test_round_rejects_first_draft_and_resamples_residual():
    # q puts everything on symbol 0, p nothing: rejected, residual = p = symbol 1; one token.
    p_rows = [[0.0, 1.0]] * 3
    q_rows = [[1.0, 0.0]] * 2
    result = speculative_round(p_rows, q_rows, np.random.default_rng(0))
    assert result.tokens.tolist() == [1]
    assert result.n_accepted == 0 and not result.bonus


def test_round_with_gamma_zero_emits_one_target_token():
    result = speculative_round([[0.0, 1.0]], np.zeros((0, 2)), np.random.default_rng(0))
    assert result.tokens.tolist() == [1] and result.bonus


# --- Expected tokens per target forward --------------------------------------------------------

def test_expected_tokens_formula_hand_value():
    # alpha 0.7, gamma 4: (1 - 0.7^5) / 0.3 = (1 - 0.16807) / 0.3 = 2.7731.
    assert expected_tokens_per_target_forward(0.7, 4) == pytest.approx(2.7731, abs=1e-12)


@pytest.mark.parametrize("gamma", [1, 3, 6])
def test_expected_tokens_matches_simulation(gamma):
    # Seed pair, alpha = 0.7. Tokens per round lie in [1, gamma + 1], so their standard deviation is
    # at most gamma / 2 and the mean over R rounds is within 4 * gamma / (2 sqrt(R)) at 4 sigma.
    _, stats = speculative_generate(SEED_P, SEED_Q, 200_000, gamma, np.random.default_rng(gamma))
    predicted = (1 - 0.7 ** (gamma + 1)) / 0.3
    tolerance = 4 * (gamma / 2) / math.sqrt(stats.n_target_forwards)
    assert abs(stats.tokens_per_target_forward - predicted) < tolerance
    assert abs(stats.acceptance_rate - 0.7) < 4 * math.sqrt(0.21 / stats.n_verified)
    assert stats.n_drafted == gamma * stats.n_target_forwards


def test_gamma_zero_is_plain_decoding():
    assert expected_tokens_per_target_forward(0.37, 0) == 1.0
    tokens, stats = speculative_generate(SEED_P, SEED_Q, 1000, 0, np.random.default_rng(1))
    assert tokens.size == 1000 and stats.n_target_forwards == 1000 and stats.n_drafted == 0
    assert math.isnan(stats.acceptance_rate)


def test_alpha_one_gives_gamma_plus_one_tokens():
    assert expected_tokens_per_target_forward(1.0, 5) == 6.0
    p = [0.2, 0.3, 0.5]
    tokens, stats = speculative_generate(p, p, 6000, 5, np.random.default_rng(2))
    # Every draft accepted: 6 tokens per round, 6000 / 6 = 1000 rounds.
    assert stats.n_target_forwards == 1000 and stats.acceptance_rate == 1.0
    assert tokens.size == 6000


def test_alpha_zero_gives_one_token_per_forward():
    assert expected_tokens_per_target_forward(0.0, 5) == 1.0
    p, q = [0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.3, 0.7]
    assert acceptance_rate(p, q) == 0.0
    assert residual_distribution(p, q) == pytest.approx(p)  # disjoint: the residual is p itself
    tokens, stats = speculative_generate(p, q, 3000, 4, np.random.default_rng(3))
    assert stats.n_target_forwards == 3000 and stats.n_accepted == 0
    assert set(np.unique(tokens)) == {0, 1}


# --- Speedup (Leviathan et al. 2022, section 3) ------------------------------------------------

@pytest.mark.parametrize("alpha,gamma,ops,speed", [
    (0.6, 2, 1.53, 1.96), (0.7, 3, 1.58, 2.53), (0.8, 2, 1.23, 2.44),
    (0.8, 5, 1.63, 3.69), (0.9, 2, 1.11, 2.71), (0.9, 10, 1.60, 6.86),
])
def test_leviathan_table_1(alpha, gamma, ops, speed):
    # Table 1 of the paper, c = c_hat = 0, printed to two decimals.
    assert round(walltime_speedup(alpha, gamma, 0.0), 2) == speed
    assert round(operations_factor(alpha, gamma, 0.0), 2) == ops


def test_walltime_speedup_gamma_one_is_corollary_3_9():
    # gamma = 1: (1 - alpha^2) / ((1 - alpha)(1 + c)) = (1 + alpha) / (1 + c); alpha .8, c .1 -> 1.8/1.1.
    assert walltime_speedup(0.8, 1, 0.1) == pytest.approx(1.8 / 1.1)


def test_best_gamma():
    # alpha 0.8, c 0.05: speedup(g) = (1 - 0.8^(g+1)) / (0.2 (1 + 0.05 g)):
    # g=7 -> 0.83223/0.27 = 3.0823, g=8 -> 0.86578/0.28 = 3.0921, g=9 -> 0.89263/0.29 = 3.0780.
    assert best_gamma(0.8, 0.05) == 8
    # alpha <= c: no gamma helps (Corollary 3.9), plain decoding.
    assert best_gamma(0.1, 0.2) == 0
    # c = 0 and alpha 0.9: more drafts always help, so the search bound wins.
    assert best_gamma(0.9, 0.0, max_gamma=12) == 12


def test_tokens_per_forward_table_rows():
    table = tokens_per_forward_table([0.6, 0.9], [0, 2])
    assert len(table) == 4
    row = table[(table.alpha == 0.6) & (table.gamma == 2)].iloc[0]
    assert row.tokens_per_target_forward == pytest.approx(1.96)


# --- Chi-square helper -------------------------------------------------------------------------

def test_chi_square_exact_fit_and_hand_value():
    # 60 A and 40 B against (0.6, 0.4): statistic 0, p-value 1.
    assert chi_square_p_value([0] * 60 + [1] * 40, [0.6, 0.4]) == pytest.approx(1.0)
    # 70/30 against (0.5, 0.5): statistic 2 * 20^2 / 50 = 16, 1 dof: p = erfc(sqrt(16 / 2)).
    assert chi_square_p_value([0] * 70 + [1] * 30, [0.5, 0.5]) == pytest.approx(math.erfc(math.sqrt(8)), rel=1e-9)
    # A sample on a symbol of probability 0 is impossible under p.
    assert chi_square_p_value([0, 1, 2], [0.5, 0.5, 0.0]) == 0.0


# --- Invalid input -----------------------------------------------------------------------------

@pytest.mark.parametrize("p,q,message", [
    ([0.7, -0.1, 0.4], [0.3, 0.3, 0.4], "negative"),
    ([0.6, 0.3], [0.5, 0.5], "sum to 1"),
    ([0.6, 0.4], [0.3, 0.3, 0.4], "same number of symbols"),
    ([[0.6, 0.4]], [0.5, 0.5], "1-D"),
    ([float("nan"), 1.0], [0.5, 0.5], "finite"),
    ([], [], "at least one symbol"),
])
def test_invalid_tables_raise_clear_errors(p, q, message):
    with pytest.raises(ValueError, match=message):
        check_pair(p, q)
    with pytest.raises(ValueError, match=message):
        speculative_generate(p, q, 10, 2, np.random.default_rng(0))


def test_normalise_and_its_errors():
    assert normalise([3, 1, 0]) == pytest.approx([0.75, 0.25, 0.0])
    with pytest.raises(ValueError, match="at least one positive"):
        normalise([0, 0, 0])
    with pytest.raises(ValueError, match="negative"):
        normalise([1, -1])


def test_invalid_scalars_raise_clear_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="alpha"):
        expected_tokens_per_target_forward(1.5, 2)
    with pytest.raises(ValueError, match="gamma"):
        expected_tokens_per_target_forward(0.5, -1)
    with pytest.raises(ValueError, match="cost_ratio"):
        walltime_speedup(0.5, 2, -0.1)
    with pytest.raises(ValueError, match="n_tokens"):
        speculative_generate(SEED_P, SEED_Q, 0, 2, rng)
    with pytest.raises(ValueError, match="rng"):
        speculative_generate(SEED_P, SEED_Q, 10, 2, 42)
    with pytest.raises(ValueError, match="between 0 and 1"):
        accept_or_resample(SEED_P, SEED_Q, 2, rng)
    with pytest.raises(ValueError, match="cannot have proposed"):
        accept_or_resample([0.5, 0.5], [1.0, 0.0], 1, rng)
    with pytest.raises(ValueError, match="one row more"):
        speculative_round([[0.5, 0.5]], [[0.5, 0.5]], rng)


def test_stats_properties():
    stats = SpecDecodeStats(gamma=4, n_tokens=30, n_target_forwards=10, n_drafted=40, n_verified=25, n_accepted=20)
    assert stats.acceptance_rate == 0.8 and stats.accepted_per_drafted == 0.5
    assert stats.tokens_per_target_forward == 3.0


# --- The batch effect (calc's roofline) --------------------------------------------------------

def _pair():
    from calc import get_accelerator, get_model
    return get_model("llama-3.1-70b"), get_model("llama-3.2-1b"), get_accelerator("h100-sxm")


def test_verify_critical_batch_h100():
    from calc.spec_speedup import verify_critical_batch
    # H100 SXM: 989 TFLOP/s dense bf16 over 3.35 TB/s = 295 tokens per step; gamma 4 verifies 5
    # tokens per sequence, so the verify step turns compute-bound at 295 / 5 = 59 sequences.
    _, _, h100 = _pair()
    assert verify_critical_batch(h100, 4) == pytest.approx(989e12 / 3.35e12 / 5, rel=1e-3)


def test_batch_speedup_at_batch_one_is_theorem_3_8():
    from calc.spec_speedup import batch_speedup_table
    # At B = 1 verifying 5 tokens reads the same weights and KV as decoding 1 (memory-bound), so the
    # round costs t_target (1 + gamma c) and the speedup is Theorem 3.8 with c = t_draft / t_target.
    target, draft, h100 = _pair()
    row = batch_speedup_table(target, draft, h100, [1], gamma=4, alpha=0.8, context_len=512).iloc[0]
    # (up to the 4 more input-embedding rows the verify step gathers: 4 x 8,192 x 2 B of ~141 GB)
    assert row.verify_step_s == pytest.approx(row.target_step_s, rel=1e-6)
    c = row.draft_step_s / row.target_step_s
    assert row.speedup == pytest.approx(walltime_speedup(0.8, 4, c), rel=1e-6)
    # 70B vs 1B weights: c is about 1.24 / 70.6 (parameter ratio), well under 0.05 (Leviathan's c).
    assert 0.01 < c < 0.05


def test_batch_speedup_falls_below_one_when_compute_bound():
    from calc.spec_speedup import batch_speedup_table
    # Short context (KV small): at B = 4096 the verify step does 5x the FLOPs of a plain step and
    # is compute-bound, so E[tokens] = 3.36 < 5 and the speedup drops under 1.
    target, draft, h100 = _pair()
    table = batch_speedup_table(target, draft, h100, [1, 8, 64, 512, 4096], gamma=4, alpha=0.8, context_len=128)
    assert table.speedup.iloc[0] > 3.0
    assert table.speedup.iloc[-1] < 1.0
    assert np.all(np.diff(table.speedup.to_numpy()) <= 1e-12)


def test_batch_speedup_gamma_zero_is_plain_decoding():
    from calc.spec_speedup import batch_speedup_table
    # No drafts: the round is one plain target step emitting one token, at every batch size.
    target, draft, h100 = _pair()
    table = batch_speedup_table(target, draft, h100, [1, 300, 3000], gamma=0, alpha=0.8, context_len=512)
    assert table.speedup.tolist() == pytest.approx([1.0, 1.0, 1.0], abs=1e-12)


def test_batch_speedup_invalid_arguments():
    from calc.spec_speedup import batch_speedup_table
    target, draft, h100 = _pair()
    with pytest.raises(ValueError, match="gamma"):
        batch_speedup_table(target, draft, h100, [1], gamma=-1)
    with pytest.raises(ValueError, match="batch"):
        batch_speedup_table(target, draft, h100, [0])
    with pytest.raises(ValueError, match="alpha"):
        batch_speedup_table(target, draft, h100, [1], alpha=2.0)
