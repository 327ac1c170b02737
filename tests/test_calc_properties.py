"""Properties of the core that must hold for every input (hypothesis), and its errors on bad input."""
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calc
from calc import ModelConfig

DTYPES = ["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
PRESETS = calc.list_models()
GPUS = calc.list_accelerators()
contexts = st.integers(min_value=1, max_value=2**20)
batches = st.integers(min_value=1, max_value=4096)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PRESETS), st.sampled_from(GPUS), contexts, batches, st.integers(1, 512))
def test_a_larger_batch_never_shortens_the_step(model_id, gpu_id, s, b, extra):
    m, a = calc.get_model(model_id), calc.get_accelerator(gpu_id)
    assert calc.decode_step_time(m, a, b + extra, s).total_s >= calc.decode_step_time(m, a, b, s).total_s


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 64), st.integers(1, 64), st.integers(1, 256), contexts)
def test_more_kv_heads_never_shrink_the_cache(n_heads_mult, k, head_dim, s):
    # K and 2K query-head groups: N = k * n_heads_mult * 2 so both K and 2K divide N
    n = k * n_heads_mult * 2
    small = ModelConfig("x", 10**9, 8, 1024, n, k, head_dim, 4096, 32000, attention="gqa" if k > 1 else "mqa")
    big = small.with_changes(n_kv_heads=2 * k, attention="gqa" if 2 * k < n else "mha")
    assert calc.kv_cache_bytes(big, s) >= calc.kv_cache_bytes(small, s)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PRESETS), contexts, st.integers(1, 2**20))
def test_a_window_never_grows_the_cache(model_id, s, window):
    m = calc.get_model(model_id)
    # every layer plain attention (layer_types cleared); a GQA model's block-sparse indexer (MiniMax-M3) goes with its
    # sparse layers, DeepSeek's MLA indexer stays; Gemma 4's global layers' own shapes go too (with layer_types
    # cleared, which layers are "full" changes with the window)
    plain = {} if m.attention == "mla" else dict(index_topk=None, index_n_heads=None, index_head_dim=None,
                                                  index_block_size=None, index_key_dtype=None, global_head_dim=None,
                                                  n_global_kv_heads=None, global_k_eq_v=False)
    windowed = m.with_changes(sliding_window=window, layer_types=None, **plain)
    assert calc.kv_cache_bytes(windowed, s) <= calc.kv_cache_bytes(m.with_changes(sliding_window=None,
                                                                                   layer_types=None, **plain), s)
    # and a window only caps: below the window nothing changes
    if s <= window:
        assert calc.kv_cache_bytes(windowed, s) == calc.kv_cache_bytes(m.with_changes(
            sliding_window=None, layer_types=None, **plain), s)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PRESETS), contexts, st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_lower_precision_kv_never_grows_the_cache(model_id, s, d1, d2):
    m = calc.get_model(model_id)
    hi, lo = sorted([d1, d2], key=lambda d: -calc.DTYPE_BYTES[d])
    assert calc.kv_cache_bytes(m, s, kv_dtype=lo) <= calc.kv_cache_bytes(m, s, kv_dtype=hi)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PRESETS), st.sampled_from(GPUS), st.integers(1, 2**17))
def test_sweep_equals_the_scalar_function(model_id, gpu_id, s):
    # the vectorised sweep and the scalar API are two code paths for the same formula
    m, a = calc.get_model(model_id), calc.get_accelerator(gpu_id)
    df = calc.decode_sweep(m, a, s, batches=np.array([1, 3, 17, 64]))
    for row in df.itertuples():
        one = calc.decode_step_time(m, a, int(row.batch), s)
        assert row.total_s == pytest.approx(one.total_s, rel=1e-12)
        assert row.tokens_per_s == pytest.approx(one.tokens_per_s, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PRESETS), st.sampled_from(GPUS), st.integers(1, 2**17), st.sampled_from(DTYPES))
def test_max_batch_is_the_largest_batch_that_fits(model_id, gpu_id, s, kv_dtype):
    m, a = calc.get_model(model_id), calc.get_accelerator(gpu_id)
    b = calc.max_batch(m, a, s, kv_dtype=kv_dtype)
    if b > 0:
        assert calc.memory_budget(m, a, s, b, kv_dtype=kv_dtype).fits
    assert not calc.memory_budget(m, a, s, b + 1, kv_dtype=kv_dtype).fits


# ---- bad input: ValueError with a message a person understands -----------------------------------
M = calc.get_model("llama-3-8b")
A = calc.get_accelerator("h100-sxm")


@pytest.mark.parametrize("call,needle", [
    (lambda: calc.kv_cache_bytes(M, 0), "context_len must be a positive integer, got 0"),
    (lambda: calc.kv_cache_bytes(M, -5), "context_len must be a positive integer, got -5"),
    (lambda: calc.kv_cache_bytes(M, 8.5), "context_len must be a positive integer, got 8.5"),
    (lambda: calc.kv_cache_bytes(M, 1024, batch=0), "batch must be a positive integer"),
    (lambda: calc.decode_step_time(M, A, 2.5, 1024), "batch must be a positive integer, got 2.5"),
    (lambda: calc.decode_step_time(M, A, True, 1024), "batch must be a positive integer"),
    (lambda: calc.decode_step_time(M, A, 1, "8k"), "context_len must be a positive integer"),
    (lambda: calc.kv_cache_bytes(M, 1024, kv_dtype="fp4"), "kv_dtype must be one of fp32, bf16, fp16, fp8, int8, int4"),
    (lambda: calc.weight_bytes(M, "fp5"), "weight_dtype must be one of"),   # torch's "float16" is fp16 (an alias)
    (lambda: calc.get_model("llama-9"), "valid ids: llama-2-7b"),
    (lambda: calc.get_accelerator("h900"), "valid: h100-sxm"),
    (lambda: ModelConfig("x", 10**9, 8, 1024, 16, 16, 64, 4096, 32000, attention="mla"), "MLA needs kv_lora_rank"),
    (lambda: ModelConfig("x", 10**9, 8, 1024, 16, 5, 64, 4096, 32000), "GQA needs n_kv_heads to divide"),
    (lambda: calc.from_hf_config({"num_hidden_layers": 2, "num_attention_heads": 4}), "hidden_size"),
    (lambda: calc.max_batch(M, A, 1024, reserve_bytes=-1), "reserve_bytes must be a non-negative number"),
    (lambda: calc.cost_per_million(0, 3.0), "tokens_per_s must be positive"),
    (lambda: calc.prefix_cache_savings(M, 20, 1000, hit_rate=1.5), "hit_rate must be a number between 0 and 1"),
    (lambda: calc.max_batch_for_tpot(M, A, 1024, 0), "tpot_target_s must be a positive number"),
    (lambda: calc.Accelerator("x", 80e9, 3e12, {"bf16": -1}), "must be a positive number"),
])
def test_bad_input_raises_a_clear_value_error(call, needle):
    with pytest.raises(ValueError) as info:
        call()
    assert needle in str(info.value)


def test_unknown_preset_message_lists_the_valid_names():
    with pytest.raises(ValueError) as info:
        calc.get_model("gpt-5")
    for name in ("llama-3-8b", "deepseek-v3", "gpt2"):
        assert name in str(info.value)


# ---- the command line ------------------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "calc", *args], capture_output=True, text=True, timeout=120)


def test_cli_prints_the_napkin_table():
    out = run_cli("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "8192", "--batch", "32",
                  "--embedding", "table")
    assert out.returncode == 0, out.stderr
    assert "15.051 ms" in out.stdout          # 4.79 + 32 x 0.3205 ms (seed 000 step 4)
    assert "2,126.1 tokens/s" in out.stdout


def test_cli_json_and_config(tmp_path):
    out = run_cli("--model", "llama-3-8b", "--json", "--price", "3", "--embedding", "table")
    data = json.loads(out.stdout)
    rows = {r["quantity"]: r["value"] for r in data["rows"]}
    assert rows["KV cache per token"] == 131_072
    assert round(rows["cost per 1M output tokens"], 2) == 4.26
    cfg = tmp_path / "my-model" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                               "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}))
    out = run_cli("--config", str(cfg), "--json")
    rows = {r["quantity"]: r["value"] for r in json.loads(out.stdout)["rows"]}
    assert rows["KV cache per token"] == 131_072 and rows["weights"] == 2 * 8_030_261_248


@pytest.mark.parametrize("args,needle", [
    (("--model", "nope"), "unknown model"),
    (("--context", "0"), "context_len must be a positive integer, got 0"),
    (("--kv-dtype", "fp4"), "kv_dtype must be one of"),
    (("--config", "/nonexistent/config.json"), "no such config file"),
])
def test_cli_bad_input_is_one_line_and_status_2(args, needle):
    out = run_cli(*args)
    assert out.returncode == 2
    assert needle in out.stderr and "Traceback" not in out.stderr


def test_preset_table_matches_the_scalar_functions():
    # one broadcast evaluation against the per-pair functions, for every preset on every accelerator
    df = calc.preset_table(8192, 4)
    assert len(df) == len(PRESETS) * len(GPUS)
    for row in df.sample(40, random_state=0).itertuples():
        m = next(calc.get_model(x) for x in PRESETS if calc.get_model(x).name == row.model)
        a = next(calc.get_accelerator(g) for g in GPUS if calc.get_accelerator(g).name == row.accelerator)
        assert row.decode_s == pytest.approx(calc.decode_step_time(m, a, 4, 8192).total_s, rel=1e-12)
        assert row.max_batch == calc.max_batch(m, a, 8192)
        assert row.kv_bytes_per_seq == calc.kv_cache_bytes(m, 8192)
    h100 = df[(df.model == "Llama-3-8B") & (df.accelerator == "NVIDIA H100 SXM 80GB")].iloc[0]
    assert h100.max_batch == 59                       # seed 000 step 4


def test_hybrid_pattern_reproduces_gemma_layer_types():
    # 5 local : 1 global over 62 layers is Gemma-3-27B's catalogue pattern (full at 5, 11, ..., 59)
    assert calc.kv.hybrid_layer_types(62, 5) == calc.get_model("gemma-3-27b").layer_types
    assert calc.kv.hybrid_layer_types(42, 1) == calc.get_model("gemma-2-9b").layer_types
    with pytest.raises(ValueError, match="local_per_global must be a positive integer"):
        calc.kv.hybrid_layer_types(10, 0)


def test_with_attention_layout_changes_the_cache_as_the_formula_says():
    # Llama-3-8B at 8k: GQA-8 1.07 GB; MHA x4 (32/8); MQA /8; window 1024 on 5 of every 6 layers:
    # 5 full layers (i+1 = 6, 12, ..., 30) x 8192 + 27 sliding x 1024 tokens, x 4,096 B per layer-token
    with_layout = calc.kv.with_attention_layout
    base = calc.kv_cache_bytes(M, 8192)
    assert calc.kv_cache_bytes(with_layout(M, "mha"), 8192) == 4 * base
    assert calc.kv_cache_bytes(with_layout(M, "mqa"), 8192) == base / 8
    assert calc.kv_cache_bytes(with_layout(M, "gqa", n_kv_heads=4), 8192) == base / 2
    hybrid = with_layout(M, window=1024, local_per_global=5)
    assert calc.kv_cache_bytes(hybrid, 8192) == (5 * 8192 + 27 * 1024) * 2 * 8 * 128 * 2
    assert with_layout(hybrid, window=0).layer_types is None
    mla = with_layout(M, "mla", latent_rank=256)
    assert calc.kv.kv_elements_per_token_per_layer(mla) == 256 + 64      # d_c + H/2 RoPE dims
    with pytest.raises(ValueError, match="GQA needs n_kv_heads to divide"):
        with_layout(M, "gqa", n_kv_heads=7)
    with pytest.raises(ValueError, match="layout must be one of"):
        with_layout(M, "linear")


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3000), st.one_of(st.none(), st.integers(1, 4000)), st.integers(0, 5000))
def test_attended_keys_closed_form_equals_the_sum(t, window, past):
    # query i sees past + i + 1 keys, at most W: the plain sum over the T queries
    cap = float("inf") if window is None else window
    expected = sum(min(past + i + 1, cap) for i in range(t))
    assert calc.roofline.attended_keys(t, window, past) == pytest.approx(expected, rel=1e-12)


# ---- one memory ceiling: the sweeps mark as fitting exactly the batches calc.max_batch allows --------
# Hybrid presets (constant per-sequence state) drawn as often as all others together: a sweep that
# counted the state twice (a decode step reads and writes it, but memory holds it once) stopped short.
HYBRIDS = [p for p in PRESETS if calc.kv.kv_state_bytes(calc.get_model(p)) > 0]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(HYBRIDS) | st.sampled_from(PRESETS), st.sampled_from(GPUS), st.integers(1, 2**17),
       st.sampled_from(["bf16", "fp8"]))
def test_the_sweeps_fit_exactly_up_to_max_batch(model_id, gpu_id, s, kv_dtype):
    m, a = calc.get_model(model_id), calc.get_accelerator(gpu_id)
    ceiling = calc.max_batch(m, a, s, kv_dtype=kv_dtype)
    top = max(ceiling, 1)
    batches = np.unique([1, max(1, ceiling - 1), top, top + 1])
    # pareto_front's default grid runs 1 .. ceiling: every point fits and the last is the ceiling
    front = calc.pareto_front(m, a, s, 3.0, kv_dtype=kv_dtype)
    if ceiling:
        assert front["fits"].all() and front["batch"].max() == ceiling
    else:
        assert not front["fits"].any()
    # the sweep under it, at the boundary: ceiling fits, ceiling + 1 does not
    sweep = calc.decode_sweep(m, a, s, batches, kv_dtype=kv_dtype)
    assert sweep.loc[sweep["fits"], "batch"].tolist() == [b for b in batches if b <= ceiling]
    split = calc.decode_split(m, a, s, kv_dtype=kv_dtype, n_points=8)
    assert (split["fits"] == (split["batch"] <= ceiling)).all()
    # and memory_bytes is memory_budget's total (the cache held, each state once)
    for row in sweep.itertuples():
        assert row.memory_bytes == pytest.approx(calc.memory_budget(m, a, s, int(row.batch),
                                                                    kv_dtype=kv_dtype).total_bytes, rel=1e-12)


def test_qwen3_next_on_mi300x_fits_117_sequences_of_8k_in_every_sweep():
    # Qwen3-Next-80B-A3B at 8,192 tokens, bf16, on a 192 GB MI300X, by hand:
    #   attention cache: 12 full layers x 2 (K,V) x 2 KV heads x 256 x 2 B = 24,576 B/token
    #                    x 8,192 = 201,326,592 B
    #   state, 36 Gated DeltaNet layers: conv (4-1) x (2*16*128 + 32*128) x 2 B = 49,152 B
    #                    + recurrent 32 x 128 x 128 x 4 B (fp32) = 2,097,152 B -> 36 x 2,146,304 = 77,266,944 B
    #   per sequence 278,593,536 B; weights 79,674,391,296 x 2 B = 159,348,782,592 B
    #   (192e9 - 159,348,782,592) / 278,593,536 = 117.2 -> 117
    #   (counting the state twice, 355,860,480 B: 91.75 -> 91, the bug)
    m, a = calc.get_model("qwen3-next-80b-a3b"), calc.get_accelerator("mi300x")
    assert calc.max_batch(m, a, 8192) == 117
    front = calc.pareto_front(m, a, 8192, 3.0)
    assert front.loc[front["fits"], "batch"].max() == 117
    assert front["memory_bytes"].iloc[0] == pytest.approx(159_348_782_592 + 278_593_536, rel=1e-12)
