"""The graded exercises (course.exercises): course numbers, worked solutions against calc, grading and hints.

Variant 0 of each problem carries the course's numbers; the expected values below are the course's
own printed figures (the inference course, week 11, steps 2-4 and back-of-the-envelope problems 1-5;
CS336 lecture 10, Inference), checked within the rounding of the digits the course states, with the
hand arithmetic beside each. For other variants the number the worked solution ends with is compared
with calc's public functions called here on the exercise's inputs.
"""
import inspect
import math

import pytest

import calc
from course import exercises as E
from calc import spec_speedup as sd
from calc.kv_paging import kv_reservation
from calc.api_tiers import default_tiers
from calc.bill import api_monthly_bill
from calc.product_traffic import TrafficScenario

#: key -> (the course's figure in base units, relative tolerance of its printed digits)
COURSE = {
    "kv_per_token": (131_072, 0.0),        # 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B = 128 KiB (step 2)
    "kv_per_sequence": (0.67e9, 0.01),     # 163,840 B x 4,096 = 0.671 GB, "≈ 0.67 GB" (problem 1)
    "kv_mha": (0.84e9, 0.005),             # 1,024 x (40 x 128) x 40 x 2 x 2 = 0.839 GB, "0.84 GB" (CS336)
    "max_batch": (71, 0.0),                # floor((80 - 26 - 6) / 0.671) = floor(71.5) = 71 (problem 2)
    "single_user_ceiling": (129, 0.005),   # 3.35e12 / 26e9 = 128.8 tok/s, "no more than 129" (problem 3)
    "decode_step": (14.2e-3, 0.005),       # 26/3.35 + 32 x 0.671/3.35 = 7.76 + 6.41 = 14.17 ms (problem 4)
    "decode_throughput": (2126, 0.001),    # 32 / (4.794 + 32 x 0.3205 ms) = 32 / 15.05 ms = 2,126 (step 4)
    "cache_equals_weights": (39, 0.01),    # 26 GB / 0.671 GB = 38.7, "from B ≈ 39" (problem 5)
    "throughput_ceiling": (3120, 0.002),   # 3.35e12 / 1.074e9 = 3,120 tok/s (step 4)
    "critical_batch": (295, 0.002),        # 989e12 / 3.35e12 = 295.2 (step 3; CS336)
    "cost_per_million": (4.26, 0.002),     # 3 / (195.6 x 3600) x 1e6 = $4.26 (step 4)
    "gqa_saving": (5, 0.0),                # N/K = 40/8 (CS336, "a 1:5 ratio")
    "mla_saving": (2048 / 576, 1e-12),     # "576 numbers versus 2048 with GQA" (step 2, depth)
    "prefix_cache": (131e6, 0.002),        # 1,000 tokens x 131,072 B = 131.1 MB (step 2)
}
LISTED = {"kv_per_token", "kv_per_sequence", "kv_mha", "kv_mla", "kv_window", "max_batch", "decode_step",
          "decode_throughput", "critical_batch", "cost_per_million", "prefill_ttft", "gqa_saving", "mla_saving",
          "spec_tokens", "spec_speedup", "prefix_cache", "monthly_bill", "contiguous_waste", "paged_waste"}


def _napkin(func):
    return {"embedding": "table"} if "embedding" in inspect.signature(func).parameters else {}


def _model(i):
    return E.COURSE_13B if i["model"] == E.COURSE_13B_ID else calc.get_model(i["model"])


def _step(i):
    return calc.decode_step_time(_model(i), calc.get_accelerator(i["gpu"]), i.get("batch", 1), i.get("context_len", 4096),
                                 i.get("weight_dtype", "bf16"), **_napkin(calc.decode_step_time))


def _bill(i):
    tier = default_tiers()[i["tier"]]
    return api_monthly_bill(TrafficScenario(dau=i["dau"], cache_hit_rate=i["cache_hit_pct"] / 100), tier).total_usd


def _mla_ratio(i):
    base = calc.get_model("deepseek-v3")
    gqa = base.with_changes(attention="gqa", n_kv_heads=i["n_kv_heads"], head_dim=i["head_dim"], kv_lora_rank=None,
                            qk_rope_head_dim=None, qk_nope_head_dim=None, v_head_dim=None)
    mla = base.with_changes(kv_lora_rank=i["kv_lora_rank"], qk_rope_head_dim=i["qk_rope_head_dim"])
    return calc.kv_bytes_per_token(gqa) / calc.kv_bytes_per_token(mla)


def _gqa_ratio(i):
    m = calc.get_model(i["model"])
    k = i["n_kv_heads"]
    return (calc.kv_bytes_per_token(m.with_changes(attention="mha", n_kv_heads=m.n_heads))
            / calc.kv_bytes_per_token(m.with_changes(attention="gqa" if k > 1 else "mqa", n_kv_heads=k)))


def _waste(i, paged):
    per_tok = calc.kv_bytes_per_token(calc.get_model("llama-3-8b"))
    _, s = kv_reservation([i["prompt"] + i["output"]], per_tok, i["max_len"], i["block"])
    return s.paged_waste_fraction if paged else s.contiguous_waste_fraction


#: key -> calc's answer for an exercise's inputs, called independently of course.exercises.
CALC = {
    "kv_per_token": lambda i: calc.kv_bytes_per_token(calc.get_model(i["model"]), i["kv_dtype"]),
    "kv_per_sequence": lambda i: calc.kv_cache_bytes(_model(i), i["context_len"], 1, i["kv_dtype"]),
    "kv_mha": lambda i: calc.kv_cache_bytes(_model(i), i["context_len"]),
    "kv_mla": lambda i: calc.kv_cache_bytes(_model(i), i["context_len"]),
    "kv_window": lambda i: calc.kv_cache_bytes(_model(i), i["context_len"]),
    "max_batch": lambda i: calc.max_batch(_model(i), calc.get_accelerator(i["gpu"]), i["context_len"],
                                          reserve_bytes=i["reserve_gb"] * 1e9),
    "single_user_ceiling": lambda i: 1 / _step(i).weights_s,
    "decode_step": lambda i: _step(i).total_s,
    "decode_throughput": lambda i: _step(i).tokens_per_s,
    "cache_equals_weights": lambda i: calc.batch_where_cache_equals_weights(_model(i), i["context_len"]),
    "throughput_ceiling": lambda i: calc.throughput_ceiling_tokens_per_s(_model(i), calc.get_accelerator(i["gpu"]),
                                                                         i["context_len"]),
    "critical_batch": lambda i: calc.critical_batch(calc.get_accelerator(i["gpu"]), i["weight_dtype"]),
    "cost_per_million": lambda i: calc.cost_per_million(_step(i).tokens_per_s, i["price_per_hour_usd"]),
    "prefill_ttft": lambda i: calc.prefill_time(_model(i), calc.get_accelerator(i["gpu"]), i["prompt_len"],
                                                **_napkin(calc.prefill_time)).total_s,
    "gqa_saving": _gqa_ratio,
    "mla_saving": _mla_ratio,
    "spec_tokens": lambda i: sd.expected_tokens_per_target_forward(i["alpha"], i["gamma"]),
    "spec_speedup": lambda i: sd.walltime_speedup(i["alpha"], i["gamma"], i["cost_ratio"]),
    "prefix_cache": lambda i: calc.prefix_cache_savings(calc.get_model(i["model"]), i["n_requests"],
                                                        i["prefix_len"]).cache_bytes_with,
    "monthly_bill": _bill,
    "contiguous_waste": lambda i: _waste(i, False),
    "paged_waste": lambda i: _waste(i, True),
}


def test_at_least_fifteen_templates_cover_the_issue_list():
    assert len(E.TEMPLATES) >= 15
    assert LISTED <= set(E.TEMPLATES)
    assert set(CALC) == set(E.TEMPLATES)


@pytest.mark.parametrize("key", list(E.TEMPLATES))
def test_variant_0_is_the_course_and_calc(key):
    ex = E.exercise(key, 0)
    assert ex.answer == pytest.approx(CALC[key](ex.inputs), rel=1e-12)
    if key in COURSE:
        figure, rel = COURSE[key]
        assert ex.course_value is not None
        if key == "max_batch":
            assert ex.answer == figure
        else:
            assert ex.answer == pytest.approx(figure, rel=rel, abs=0)


@pytest.mark.parametrize("key", list(E.TEMPLATES))
def test_worked_solution_number_is_calcs_for_20_variants(key):
    variants = [1, 2, 3, 7, 11, 19, 42, 99, 123, 256, 1000, 4321, 9999, 31337, 50000, 65535, 100000, 271828,
                500000, 999999]
    seen = set()
    for v in variants:
        ex = E.exercise(key, v)
        number, unit = E.solution_number(ex)
        expected = CALC[key](ex.inputs)
        # the solution prints 4 significant digits (or a whole number from 1,000): within 0.05%
        assert number * E.UNITS[unit][1] == pytest.approx(expected, rel=6e-4), (v, ex.solution_latex)
        assert ex.answer == pytest.approx(expected, rel=1e-12)
        assert E.exercise(key, v) == ex  # deterministic
        seen.add(tuple(sorted(ex.inputs.items())))
    assert len(seen) >= 5, "variants should differ"


@pytest.mark.parametrize("key", list(E.TEMPLATES))
def test_grading_tolerance_and_every_mistake_hint(key):
    for v in (0, 5, 77):
        ex = E.exercise(key, v)
        scale = E.UNITS[ex.unit][1]
        tol = max(ex.rel_tol * abs(ex.answer), ex.abs_tol)
        assert E.grade(ex, ex.answer_in_unit, ex.unit).correct
        assert E.grade(ex, (ex.answer + 0.9 * tol) / scale, ex.unit).correct
        outside = E.grade(ex, (ex.answer + 1.5 * tol + 0.02 * abs(ex.answer)) / scale, ex.unit)
        assert not outside.correct
        assert ex.mistakes, "every problem names at least one likely mistake"
        for m in ex.mistakes:
            g = E.grade(ex, m.value / scale, ex.unit)
            assert not g.correct and g.message == m.hint and g.kind == "factor"


def test_named_mistakes_get_their_hints():
    kv = E.exercise("kv_per_sequence", 0)          # 0.6711 GB
    assert "K and V" in E.grade(kv, 0.3355, "GB").message        # forgot K and V: half
    assert "bits" in E.grade(kv, 5.369, "GB").message            # 16 bits instead of 2 bytes: x8
    assert "per" in E.grade(kv, 163_840, "B").message and "S" in E.grade(kv, 163_840, "B").message
    g = E.grade(kv, 0.625, "GB")                                 # 0.6711e9 / 2^30 = 0.625: GiB typed as GB
    assert g.kind == "unit" and "GiB" in g.message
    assert E.grade(kv, 0.625, "GiB").correct and E.grade(kv, 640, "MiB").correct
    step = E.exercise("decode_step", 0)            # 14.17 ms
    g = E.grade(step, 0.01417, "ms")                             # seconds typed as ms
    assert g.kind == "unit" and "1 s = 1,000 ms" in g.message
    assert E.grade(step, 0.01417, "s").correct
    cb = E.exercise("critical_batch", 0)           # 295
    assert "2N" in E.grade(cb, 590, "tokens").message            # forgot the 2 in 2N FLOPs
    prefill = E.exercise("prefill_ttft", 0)
    assert "2N" in E.grade(prefill, prefill.mistakes[0].value, "s").message
    assert not E.grade(kv, "abc", "GB").correct and not E.grade(kv, 1.0, "ms").correct


def test_bad_variants_are_refused_with_a_sentence():
    for bad in (-1, "x", 10**7, None):
        with pytest.raises(ValueError, match="variant must be a whole number"):
            E.exercise("kv_per_token", bad)
    with pytest.raises(ValueError, match="unknown exercise"):
        E.exercise("nope", 0)


def test_links_open_pages_that_exist_with_their_widget_keys():
    from ui.nav import PAGES
    paths = {p.split("/")[-1].removesuffix(".py") for p, *_ in PAGES}
    for v in (0, 3):
        for ex in E.all_exercises(v):
            assert ex.page in paths
            assert "=" in ex.link and not ex.link.startswith("?")
            assert math.isfinite(ex.answer) and ex.answer > 0


def test_a_negative_a_huge_and_a_round_wrong_answer_get_honest_feedback():
    kv = E.exercise("kv_per_sequence", 0)          # 0.6711 GB
    # a negative size: said as such, not "too low (x-0.04 of the answer)"
    g = E.grade(kv, -5, "GB")
    assert not g.correct and "not below zero" in g.message and "x-" not in g.message
    # 1e308 GB is a finite float whose bytes are not (1e317): "far too high", not "xinf"
    g = E.grade(kv, 1e308, "GB")
    assert not g.correct and g.message.startswith("Far too high") and "inf" not in g.message
    # a round number in a unit 1,000 times off the one where it would match a known mistake is no diagnosis of that
    # mistake: 1 GB is 0.931 GiB, 1 MB is not 5.369 GB of anything; the bits mistake is 5.369 GB = 5.0 GiB, so 5
    # GiB typed as 5 GB (the sibling unit, 7% off) is still diagnosed with the unit named
    assert "bits" not in E.grade(kv, 5.369, "MB").message
    g = E.grade(kv, 5.0, "GB")                                   # 5 GiB = 5.369e9 B: bits, typed in GB
    assert "bits" in g.message and "that number is in GiB" in g.message
