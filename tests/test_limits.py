"""Sizes nobody could run and values nobody could mean are refused at import, with one sentence.

The shared server reads every visitor's pasted config.json; these are the examples of issue "a shared
server that no link or paste can hurt", each turned into a check, plus the kind each stands for.
"""
import json
import math
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import calc
from calc import limits
from calc.config_json import model_from_json_text
from calc.param_count import count_params

ROOT = Path(__file__).resolve().parent.parent
SMALL = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 1, "intermediate_size": 64,
         "vocab_size": 10}
RAW_INTERNALS = ("Traceback", "set_int_max_str_digits", "RecursionError", "OverflowError", 'File "')


def _message(text_or_dict) -> str:
    with pytest.raises(ValueError) as info:
        if isinstance(text_or_dict, dict):
            calc.from_hf_config(text_or_dict)
        else:
            model_from_json_text(text_or_dict)
    msg = str(info.value)
    assert not any(r in msg for r in RAW_INTERNALS), msg
    assert len(msg) < 400, msg
    return msg


def test_two_billion_layers_is_refused_naming_the_key_and_the_limit():
    msg = _message(dict(SMALL, num_hidden_layers=2_000_000_000))
    assert "'num_hidden_layers'" in msg and "2,000,000,000" in msg and "1,024" in msg


@pytest.mark.parametrize("key, quantity", [
    ("num_hidden_layers", "n_layers"), ("hidden_size", "d_model"), ("intermediate_size", "d_ff"),
    ("num_attention_heads", "n_heads"), ("vocab_size", "vocab_size"), ("head_dim", "head_dim"),
    ("max_position_embeddings", "context"), ("sliding_window", "context"), ("n_layer", "n_layers"),
    ("n_embd", "d_model"), ("padded_vocab_size", "vocab_size")])
def test_each_size_key_has_a_limit_named_in_its_message(key, quantity):
    top = limits.limit_of(quantity)
    cfg = dict(SMALL)
    cfg.pop({"n_layer": "num_hidden_layers", "n_embd": "hidden_size", "padded_vocab_size": "vocab_size"}.get(key, ""),
             None)
    cfg[key] = top + 1
    msg = _message(cfg)
    assert repr(key) in msg and f"{top:,}" in msg, msg


def test_experts_above_the_limit_are_refused():
    msg = _message(dict(SMALL, num_local_experts=10**6, num_experts_per_tok=2))
    assert "'num_local_experts'" in msg and "4,096" in msg


def test_sizes_at_the_limits_are_accepted_when_the_model_stays_plausible():
    # 1,024 layers of width 64: 1,024 x (4 x 64^2 + 3 x 64 x 64 + 2 x 64) + 2 x 10 x 64 + 64 parameters.
    m = calc.from_hf_config(dict(SMALL, num_hidden_layers=1024))
    assert m.n_layers == 1024
    assert m.n_params == 1024 * (4 * 64 * 64 + 3 * 64 * 64 + 2 * 64) + 2 * 10 * 64 + 64


def test_a_parameter_count_beyond_any_machine_is_refused():
    # 1,024 layers x 4,096 experts x 3 x 131,072 x 1,048,576 ~ 1.7e21 parameters, every shape within its limit.
    cfg = dict(SMALL, num_hidden_layers=1024, hidden_size=131072, num_attention_heads=1024,
               intermediate_size=1048576, num_local_experts=4096, num_experts_per_tok=1)
    msg = _message(cfg)
    assert "n_params" in msg and "1,000,000,000,000,000" in msg


def test_model_config_itself_refuses_sizes_beyond_the_limits():
    with pytest.raises(ValueError, match=r"n_layers is 100,000,000, above the limit of 1,024"):
        calc.ModelConfig("x", 10**9, 10**8, 64, 1, 1, 64, 64, 10, attention="mqa")


@pytest.mark.parametrize("text, needle", [
    ('{"hidden_size": 1e400, "num_hidden_layers": 2}', "too large for a float"),
    ('{"hidden_size": ' + "9" * 5000 + "}", "5,000 digits"),
    ('{"hidden_size": ' + "9" * 400 + "}", "400 digits"),
    ('{"hidden_size": NaN}', "NaN"),
    ('{"hidden_size": Infinity}', "Infinity"),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"a": ' + "[" * 40 + "]" * 40 + "}", "nested too deeply"),
    ("x" * (limits.MAX_CONFIG_CHARS + 1), "characters"),
    (b"\xff\xfe{}", "not UTF-8"),
    ("[1, 2]", "JSON object"),
    ("", "config.json is empty"),          # an empty file: what a config.json holds, not "Expecting value"
    (b"  \n", "config.json is empty"),
])
def test_absurd_json_gets_one_clear_message(text, needle):
    assert needle in _message(text)


def test_infinity_is_kept_only_in_mamba2s_time_step_limit():
    # Real Nemotron-H and Mamba2 config.json files ship "time_step_limit": [0.0, Infinity] (no clamp).
    assert limits.parse_config_json('{"time_step_limit": [0.0, Infinity]}') == {"time_step_limit": [0.0, math.inf]}
    for text, needle in [('{"time_step_limit": [0.0, NaN]}', "NaN"), ('{"time_step_limit": Infinity}', "Infinity"),
                         ('{"time_step_limit": [[Infinity]]}', "Infinity"), ('{"hidden_size": [Infinity]}', "Infinity"),
                         ('{"a": {"b": -Infinity}}', "-Infinity"), ("Infinity", "Infinity")]:
        assert needle in _message(text), text
    # the shipped Nemotron-H-56B file loads through the pasted-text path as through the file
    text = (Path(calc.models.DATA_DIR) / "hf_configs" / "nemotron-h-56b.json").read_text()
    assert "Infinity" in text
    assert model_from_json_text(text, name="Nemotron-H-56B") == calc.get_model("nemotron-h-56b")


@pytest.mark.parametrize("value", [10**400, float("inf"), float("nan"), -(10**30), "64", 64.5, True, [64], None])
def test_absurd_values_in_a_dict_get_one_clear_message(value):
    msg = _message(dict(SMALL, hidden_size=value)) if value is not None else None
    if value is None:  # an explicit null is "missing"
        msg = _message(dict(SMALL, hidden_size=None))
        assert "hidden size" in msg
    else:
        assert "'hidden_size'" in msg


def test_a_huge_integer_is_described_not_printed():
    msg = _message(dict(SMALL, vocab_size=10**400))
    assert "401 digits" in msg and "9" * 50 not in msg


def test_deeply_nested_dict_is_refused_without_recursion():
    deep: dict = {}
    cur = deep
    for _ in range(5000):
        cur["x"] = {}
        cur = cur["x"]
    assert "nested too deeply" in _message(dict(SMALL, extra=deep))


def test_count_params_reads_through_the_same_guard():
    with pytest.raises(ValueError, match="num_hidden_layers"):
        count_params(dict(SMALL, num_hidden_layers=10**12))


def test_a_long_name_is_cut():
    m = calc.from_hf_config(dict(SMALL, _name_or_path="n" * 10_000))
    assert len(m.name) <= limits.MAX_TEXT_CHARS


# -- no calc routine allocates in proportion to a size it was given ----------------------------------------

TINY = calc.from_hf_config(dict(SMALL, hidden_size=8, num_hidden_layers=1, intermediate_size=8))


def test_default_decode_sweep_is_bounded_for_a_tiny_model_on_a_big_gpu():
    acc = calc.get_accelerator("h200")
    ceiling = calc.max_batch(TINY, acc, 128, "int4", "int4")
    # KV per sequence: 2 x 1 layer x 1 head x 8 x 0.5 B x 128 tokens = 1,024 B; the ceiling is in the 10^8.
    assert ceiling > 10**7
    df = calc.pareto_front(TINY, acc, 128, 3.0, "int4", "int4")
    assert len(df) <= 2100 and df["batch"].iloc[-1] == ceiling and df["batch"].is_monotonic_increasing
    assert (df["batch"].iloc[:1024] == np.arange(1, 1025)).all()  # every batch up to 1,024


def test_max_batch_for_tpot_matches_the_full_sweep():
    # Brute force over every batch of a model whose ceiling is ~60,000 (one row each), against the bisection.
    m = calc.from_hf_config(dict(SMALL, hidden_size=256, num_attention_heads=4, num_hidden_layers=4,
                                 intermediate_size=512, vocab_size=1000))
    acc = calc.get_accelerator("l4")
    ceiling = calc.max_batch(m, acc, 4096)
    assert 1000 < ceiling < 200_000
    full = calc.decode_sweep(m, acc, 4096, np.arange(1, ceiling + 1))
    for target_s in (1e-5, 1e-4, 1e-3, 1e-2, 1.0):
        ok = full[full["total_s"] <= target_s]
        expected = int(ok["batch"].max()) if len(ok) else 0
        assert calc.max_batch_for_tpot(m, acc, 4096, target_s) == expected


def test_results_stay_finite_at_the_limits():
    # The largest accepted dense model: 1,024 layers of width 131,072 (~2.1e14 parameters < 1e15).
    big = calc.from_hf_config(dict(SMALL, num_hidden_layers=1024, hidden_size=131072, num_attention_heads=1024,
                                   intermediate_size=131072, vocab_size=limits.limit_of("vocab_size")))
    acc = calc.get_accelerator("h100-sxm")
    ctx = limits.limit_of("context")
    step = calc.decode_step_time(big, acc, 4096, ctx)
    pre = calc.prefill_time(big, acc, ctx)
    budget = calc.memory_budget(big, acc, ctx, batch=4096)
    for v in (step.total_s, pre.total_s, budget.total_bytes, calc.kv_cache_bytes(big, ctx, 4096)):
        assert math.isfinite(v) and v > 0


HUGE_CONFIGS = [dict(SMALL, num_hidden_layers=2_000_000_000), dict(SMALL, num_hidden_layers=10**12),
                dict(SMALL, num_hidden_layers=10**8), dict(SMALL, vocab_size=10**15),
                dict(SMALL, hidden_size=10**9, num_attention_heads=1)]


def test_huge_configs_are_refused_within_a_memory_cap(tmp_path):
    """In a process capped at 1.5 GiB of address space, every huge config gets its message and the tiny
    model's default sweeps stay small; before the limits, the first config allocated gigabytes."""
    script = tmp_path / "huge.py"
    script.write_text(textwrap.dedent(f"""
        import json, resource, sys
        cap = 1536 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        sys.path.insert(0, {str(ROOT)!r})
        import calc
        from calc.config_json import model_from_json_text
        out = []
        for cfg in json.loads(sys.argv[1]):
            for reader in (calc.from_hf_config, lambda c: model_from_json_text(json.dumps(c))):
                try:
                    reader(cfg)
                    out.append("accepted")
                except ValueError as e:
                    out.append(str(e))
        tiny = calc.from_hf_config(dict({SMALL!r}, hidden_size=8, num_hidden_layers=1, intermediate_size=8))
        acc = calc.get_accelerator("h200")
        out.append(len(calc.pareto_front(tiny, acc, 128, 3.0, "int4", "int4")))
        out.append(calc.max_batch_for_tpot(tiny, acc, 128, 0.01, "int4", "int4"))
        print(json.dumps(out))
    """))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(script), json.dumps(HUGE_CONFIGS)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    messages, n_rows, b_agent = out[:-2], out[-2], out[-1]
    assert len(messages) == 2 * len(HUGE_CONFIGS)
    assert all("above the limit" in m for m in messages), messages
    assert n_rows <= 2100 and b_agent > 10**6


def test_the_memory_cap_is_real():
    # The cap used above stops an allocation of the size the unbounded layer count made (> 2 GiB).
    code = ("import resource; cap = 1536 * 2**20; resource.setrlimit(resource.RLIMIT_AS, (cap, cap)); "
            "import sys\ntry:\n    x = bytearray(3 * 2**30)\nexcept MemoryError:\n    print('refused')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "refused"
    assert resource.RLIMIT_AS is not None


@pytest.mark.parametrize("key, quantity", [("linear_num_value_heads", "n_heads"), ("attention_chunk_size", "context"),
                                           ("intermediate_size_mlp", "d_ff"), ("expert_layer_period", "n_layers"),
                                           ("some_future_count", "count")])
def test_keys_of_other_families_are_bounded_by_their_name(key, quantity):
    top = limits.limit_of(quantity)
    with pytest.raises(ValueError, match=f"'{key}' is {top + 1:,}, above the limit of {top:,}"):
        limits.check_config_int(top + 1, key)
    assert limits.check_config_int(top, key) == top
