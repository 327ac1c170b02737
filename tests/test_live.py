"""live/: KV bytes against calc, timings, presets built offline, load errors, no remote code, predictions.

Small configs (2-3 layers, hidden 32-256) so the file runs in seconds on 2 CPU cores. Speed figures
live in bench/bench_live.py, not here.
"""
import json
import math

import pytest
import torch

import calc
from calc import from_hf_config, kv_cache_bytes
from live import measure
from live.model_builder import build_random, clean_config, count_params, load_model, tiny_width_config
from live.overhead_fit import fit_decode_overhead, fit_overhead
from live.predict import achieved_bandwidth_fraction, datasheet_accelerator_id, headline, overhead_s, predict_point
from live.predict import calibrated_parts, calibrated_parts_table, decode_overhead_s, kernel_bandwidth, matmul_time_s
from live.probe import probe_machine, time_linears
from live.runner import LiveSession
from live.predict import NOISY_SPREAD, annotate_points
from live.run_spec import PRESET_IDS, RunSpec, load_advice, parse_sizes, parse_sweeps, preset_hf_config

GQA = dict(model_type="llama", hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
           num_hidden_layers=3, vocab_size=128, max_position_embeddings=512)
MHA = dict(GQA, num_key_value_heads=4)
SLIDING = dict(GQA, model_type="mistral", sliding_window=8)


def prefill_kv(cfg, batch, prompt_len):
    model = build_random(cfg, "fp32")
    _, kv = measure.time_prefill(model, batch, prompt_len, repeats=1, warmup=0)
    return kv


# -- KV cache bytes: measured from the cache tensors == calc == hand calculation -----------------
def test_kv_bytes_gqa_model():
    # 3 layers x 2 KV heads x head_dim 16 (64/4) x 2 (K and V) x 4 bytes = 768 B per token;
    # batch 2 x 10 tokens -> 15,360 B
    measured = prefill_kv(GQA, batch=2, prompt_len=10)
    assert measured == 15_360
    assert kv_cache_bytes(from_hf_config(GQA), 10, 2, kv_dtype="fp32") == 15_360


def test_kv_bytes_mha_model():
    # MHA: 4 KV heads -> twice the GQA figure: 3 x 4 x 16 x 2 x 4 = 1,536 B per token; x 2 x 10 = 30,720 B
    measured = prefill_kv(MHA, batch=2, prompt_len=10)
    assert measured == 30_720
    assert kv_cache_bytes(from_hf_config(MHA), 10, 2, kv_dtype="fp32") == 30_720


def test_kv_bytes_sliding_window_model_dynamic_and_static_caches():
    # Mistral-style, window W = 8, prompt 20 > W. calc caps a sliding layer at W tokens:
    # 768 B per token x 8 = 6,144 B at batch 1.
    m = from_hf_config(SLIDING)
    assert kv_cache_bytes(m, 20, 1, kv_dtype="fp32") == 6_144
    # transformers 5.23's DynamicSlidingWindowLayer keeps W - 1 = 7 tokens after prefill (the token being
    # decoded brings its own K and V): 768 x 7 = 5,376 B -- one token per layer short of calc's convention.
    assert prefill_kv(SLIDING, batch=1, prompt_len=20) == 5_376
    # The pre-allocated StaticCache (StaticSlidingWindowLayer) holds exactly W slots: equal to calc.
    model = build_random(SLIDING, "fp32")
    _, static_kv = measure.time_decode(model, 1, 20, steps=2, repeats=1, warmup=0)
    assert static_kv == 6_144 == kv_cache_bytes(m, 22, 1, kv_dtype="fp32")


def test_runner_kv_check_explains_the_sliding_window_difference():
    spec = RunSpec(source="config", config_json=json.dumps(SLIDING), prompt_lens=(4, 20), prefill_batches=(1,),
                   prefill_prompt_len=4, decode_batches=(1,), decode_context_len=4, decode_contexts=(4,),
                   decode_steps=2, repeats=1, warmup=0, new_tokens=2, calibrate=False)
    res = LiveSession(probe_buffer_bytes=16 << 20).run(spec)
    rows = {(r["phase"], r["tokens"]): r for r in res["kv_check"]}
    assert rows[("prefill", 4)]["verdict"] == "equal"            # below the window: 4 tokens everywhere
    assert rows[("prefill", 20)]["verdict"].startswith("DynamicCache keeps W-1")
    assert rows[("decode", 6)]["verdict"] == "equal"


def test_a_point_too_large_for_memory_is_skipped_with_a_message():
    # GQA tiny model: 768 B per token; batch 2048 x 1,000,000 tokens = 1.6 TB of KV, far above any free RAM
    spec = RunSpec(source="config", config_json=json.dumps(GQA), prompt_lens=(4,), prefill_batches=(1,),
                   prefill_prompt_len=4, decode_batches=(2048, 4096), decode_context_len=1_000_000,
                   decode_contexts=(4,), decode_steps=1, repeats=1, warmup=0, new_tokens=1, calibrate=False)
    res = LiveSession(probe_buffer_bytes=16 << 20).run(spec)
    assert len(res["skipped"]) == 2 and "needs about" in res["skipped"][0]
    assert len(res["table"]) == 3  # the prompt, prefill-batch and decode-context points still ran


# -- timings -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def kv_heavy_model():
    # MHA with a KV-heavy shape: 2 layers x 8 heads x 32 x 2 x 4 B = 4 KiB per token, weights ~1.6 MB
    cfg = dict(model_type="llama", hidden_size=256, intermediate_size=512, num_attention_heads=8,
               num_key_value_heads=8, num_hidden_layers=2, vocab_size=256, max_position_embeddings=8192)
    return build_random(cfg, "fp32")


def test_prefill_and_decode_timings_positive_and_finite(kv_heavy_model):
    t_pre, _ = measure.time_prefill(kv_heavy_model, 2, 16, repeats=2, warmup=1)
    t_dec, _ = measure.time_decode(kv_heavy_model, 2, 16, steps=3, repeats=2, warmup=1)
    assert len(t_pre.samples_s) == 2 and len(t_dec.samples_s) == 6  # repeats, repeats x steps
    for t in (t_pre, t_dec):
        assert all(math.isfinite(s) and s > 0 for s in t.samples_s)
        assert t.p10_s <= t.median_s <= t.p90_s


def test_decode_at_16x_longer_context_is_not_faster(kv_heavy_model):
    # batch 8: at 256 tokens the cache is 8 MiB, at 4,096 tokens 128 MiB per step -- far more than the
    # 1.6 MB of weights, so the longer context must take longer (min over 12 samples each: the least
    # disturbed step; on a busy 2-core machine single steps can stall for hundreds of ms)
    short, _ = measure.time_decode(kv_heavy_model, 8, 256, steps=4, repeats=3, warmup=1)
    long, _ = measure.time_decode(kv_heavy_model, 8, 4096, steps=4, repeats=3, warmup=1)
    assert min(long.samples_s) >= min(short.samples_s)


def test_generation_has_fixed_length_with_random_weights():
    model = build_random(GQA, "fp32")
    ids = measure.random_ids(128, 1, 5, "cpu")
    assert len(measure.generate_ids(model, ids, 12)) == 12  # no early stop at any EOS


# -- presets build offline ---------------------------------------------------------------------
@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_every_preset_builds_on_meta_with_calcs_parameter_count(preset_id):
    # meta device: the real architecture at full size, instantly; its unique parameter count must
    # equal calc's catalogue entry, which was transcribed from the model cards independently
    model = build_random(preset_hf_config(preset_id), "bf16", "meta")
    assert count_params(model) == calc.get_model(preset_id).n_params


def test_default_preset_builds_for_real_with_random_weights():
    lm = load_model(RunSpec(preset_id="smollm2-135m", dtype="fp32"))
    assert lm.weights == "random" and lm.label == "SmolLM2-135M"
    assert lm.calc_model.n_params == 134_515_008  # SmolLM2-135M with tied embeddings
    assert next(lm.model.parameters()).dtype == torch.float32
    ids = measure.random_ids(49152, 1, 4, "cpu")
    assert len(measure.generate_ids(lm.model, ids, 2)) == 2


# -- errors and remote code --------------------------------------------------------------------
def test_missing_path_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_EXPLORER_MODELS_ROOT", str(tmp_path))
    with pytest.raises(ValueError, match="not a model folder under this server's models folder"):
        load_model(RunSpec(source="weights", weights_path=str(tmp_path / "nowhere")))
    with pytest.raises(ValueError, match="not a model folder under this server's models folder"):
        load_model(RunSpec(source="weights", weights_path=str(tmp_path)))


def test_broken_configs_are_clear_errors():
    with pytest.raises(ValueError, match="not valid JSON"):
        load_model(RunSpec(source="config", config_json='{"model_type": "llama",'))
    with pytest.raises(ValueError, match="no 'model_type'"):
        load_model(RunSpec(source="config", config_json='{"hidden_size": 64}'))
    with pytest.raises(ValueError, match="not built into transformers"):
        load_model(RunSpec(source="config", config_json=json.dumps(dict(GQA, model_type="my_secret_arch"))))


EVIL = "import pathlib\npathlib.Path({marker!r}).write_text('remote code ran')\n"


def test_loading_never_executes_remote_code(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_EXPLORER_MODELS_ROOT", str(tmp_path))
    marker = tmp_path / "marker.txt"
    # a real saved checkpoint whose config.json points at code shipped next to it
    model = build_random(GQA, "fp32")
    model.save_pretrained(tmp_path / "ckpt")
    (tmp_path / "ckpt" / "evil.py").write_text(EVIL.format(marker=str(marker)))
    cfg = json.loads((tmp_path / "ckpt" / "config.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "evil.Config", "AutoModelForCausalLM": "evil.Model"}
    (tmp_path / "ckpt" / "config.json").write_text(json.dumps(cfg))
    lm = load_model(RunSpec(source="weights", weights_path=str(tmp_path / "ckpt")))
    assert lm.weights == "pretrained"
    assert any("auto_map" in n for n in lm.notes)
    # the loaded weights are the saved ones, not a fresh random init
    w_saved = model.model.layers[0].mlp.up_proj.weight
    assert torch.equal(lm.model.model.layers[0].mlp.up_proj.weight, w_saved)
    # a pasted config with auto_map and an unknown model_type is refused
    with pytest.raises(ValueError, match="remote code"):
        load_model(RunSpec(source="config", config_json=json.dumps(dict(GQA, model_type="evil", auto_map=cfg["auto_map"]))))
    assert not marker.exists()


def test_clean_config_drops_auto_map():
    cfg, notes = clean_config(dict(GQA, auto_map={"AutoModel": "x.Y"}))
    assert "auto_map" not in cfg and len(notes) == 1


def test_tiny_width_config_keeps_depth_and_pattern():
    cfg = tiny_width_config(dict(GQA, num_hidden_layers=4, layer_types=["full_attention"] * 4), n_layers=2)
    # hidden = 2 x 4 heads = 8; the attention shape stays: 4 heads of 64/4 = 16, 2 KV heads
    assert cfg["num_hidden_layers"] == 2 and len(cfg["layer_types"]) == 2
    assert (cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]) == (8, 16, 256)
    assert (cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]) == (4, 2, 16)
    model = build_random(cfg)
    assert model.model.layers[0].self_attn.q_proj.weight.shape == (64, 8)


# -- probe and predictions -------------------------------------------------------------------------
def test_probe_returns_a_calc_accelerator():
    pr = probe_machine("cpu", "fp32", buffer_bytes=16 << 20, repeats=1, max_matmul_s=0.02)
    acc = pr.accelerator()
    assert isinstance(acc, calc.Accelerator)
    assert acc.bandwidth_bytes_per_s == pr.read_bytes_per_s > 0
    assert acc.peak_flops_per_s == {"fp32": pr.matmul_flops_per_s}
    assert pr.threads == torch.get_num_threads() and pr.datasheet_id is None


def test_fit_overhead_from_two_depths():
    # t(30) = 31 ms, t(1) = 2 ms -> c_layer = 29 ms / 29 = 1 ms, c_step = 2 - 1 = 1 ms
    c_layer, c_step = fit_overhead({30: 0.031, 1: 0.002})
    assert c_layer == pytest.approx(0.001) and c_step == pytest.approx(0.001)
    assert fit_overhead({10: 0.02}) == (pytest.approx(0.002), 0.0)
    with pytest.raises(ValueError):
        fit_overhead({})


def test_predictions_add_the_overhead_and_bandwidth_fraction():
    m = calc.get_model("smollm2-135m")
    acc = calc.Accelerator("probe", 1e10, 2e10, {"fp32": 1e11})
    p = predict_point(m, acc, "decode", 1, 128, "fp32", c_layer_s=0.001, c_step_s=0.002)
    # batch 1, fp32: weights 134,515,008 x 4 B = 538.06 MB at 20 GB/s = 26.9 ms; KV 128 tokens x
    # 30 x 3 x 64 x 2 x 4 B = 5.90 MB -> 0.295 ms; compute 2 x 134.5M / 1e11 = 2.7 ms (< weights)
    assert p["machine_s"] == pytest.approx(0.0269030 + 0.000295, rel=1e-3)
    assert p["calibrated_s"] == pytest.approx(p["machine_s"] + 30 * 0.001 + 0.002)
    assert math.isnan(p["datasheet_s"])
    assert overhead_s(m, 0.001, 0.002) == pytest.approx(0.032)
    assert achieved_bandwidth_fraction(1e9, 0.5, 4e9) == pytest.approx(0.5)


# A fake matmul calibration: the layers' group runs on every token, the output head on the last one.
FAKE_GROUPS = [dict(label="body", rows=[1, 16], times_s=[0.010, 0.020], per_token=True, weight_bytes=4e7),
               dict(label="lm_head", rows=[1, 16], times_s=[0.002, 0.004], per_token=False, weight_bytes=1e7)]


def test_calibrated_prediction_is_the_sum_of_its_parts():
    m = from_hf_config(GQA)  # 3 layers, 768 B of fp32 KV per token (see the KV tests above)
    acc = calc.Accelerator("probe", 1e10, 1e9, {"fp32": 1e12})
    # decode, batch 4, 128 cached tokens:
    #   matmuls: body at 4 rows = 0.010 + 3/15 x 0.010 = 0.012 s; head at 4 rows = 0.002 + 3/15 x 0.002 = 0.0024 s
    #   KV read: 768 B x 128 x 4 = 393,216 B at 1 GB/s = 0.000393216 s; overhead 3 x 1 ms + 2 ms = 0.005 s
    p = calibrated_parts(m, acc, "decode", 4, 128, "fp32", 0.001, 0.002, FAKE_GROUPS)
    assert p["matmul_s"] == pytest.approx(0.0144)
    assert p["kv_s"] == pytest.approx(0.000393216)
    assert p["attention_s"] == 0.0 and p["overhead_s"] == pytest.approx(0.005)
    assert p["total_s"] == pytest.approx(0.0144 + 0.000393216 + 0.005)
    pt = predict_point(m, acc, "decode", 4, 128, "fp32", 0.001, 0.002, matmul_groups=FAKE_GROUPS)
    assert pt["calibrated_s"] == pytest.approx(0.019793216)
    # the machine roofline is unchanged by the calibration (the honest lower bound)
    assert pt["machine_s"] == predict_point(m, acc, "decode", 4, 128, "fp32")["machine_s"]
    # prefill, batch 2 x 32 tokens: body on 64 rows, above the largest measured (16): 0.020 x 64/16 = 0.080 s;
    # head on 2 rows: 0.002 + 1/15 x 0.002 = 0.0021333 s; KV written 768 x 32 x 2 = 49,152 B -> 4.9152e-5 s;
    # attention 3 layers x 2 x 4 heads x (16 + 16) x (1 + ... + 32 = 528 keys) x 2 sequences = 811,008 FLOP
    # at 1e12 FLOP/s = 8.11008e-7 s
    q = calibrated_parts(m, acc, "prefill", 2, 32, "fp32", 0.001, 0.002, FAKE_GROUPS)
    assert q["matmul_s"] == pytest.approx(0.080 + 0.002 + 0.002 / 15)
    assert q["kv_s"] == pytest.approx(4.9152e-5) and q["attention_s"] == pytest.approx(8.11008e-7)
    assert q["total_s"] == pytest.approx(q["matmul_s"] + 4.9152e-5 + 8.11008e-7 + 0.005)
    # the page's parts table: the rows add up to the sum row
    row = dict(cal_matmul_s=p["matmul_s"], cal_kv_s=p["kv_s"], cal_attention_s=0.0, cal_overhead_s=0.005,
               pred_calibrated_s=p["total_s"], median_s=0.0198)
    t = calibrated_parts_table(row)
    assert len(t) == 5  # matmuls, KV, overhead (no attention row in decode), sum, measured
    assert t["time_s"].iloc[:3].sum() == pytest.approx(t["time_s"].iloc[3])
    # kernel bandwidth at batch 1: 5e7 B in 0.012 s
    assert kernel_bandwidth(FAKE_GROUPS)["bytes_per_s"] == pytest.approx(5e7 / 0.012)
    with pytest.raises(ValueError, match="equal length"):
        matmul_time_s([dict(rows=[1, 2], times_s=[0.1], per_token=True)], "decode", 1, 1)


def test_decode_overhead_batch_and_context_terms():
    # residuals made from 0.2 ms per extra sequence and 1 ns per KV token beyond the reference 132 tokens,
    # on top of a 5 ms reference: B=4 S=132 -> 5 + 0.6 + (528 - 132) x 1e-6 ms = 5.600396 ms;
    # B=1 S=2052 -> 5 + 0 + 1920e-6 ms = 5.00192 ms
    pts = [dict(batch=4, kv_tokens=132, residual_s=0.005600396), dict(batch=1, kv_tokens=2052, residual_s=0.00500192)]
    fit = fit_decode_overhead(pts, 0.005, 132)
    assert fit["per_seq_s"] == pytest.approx(2e-4, rel=1e-6) and fit["per_kv_token_s"] == pytest.approx(1e-9, rel=1e-6)
    assert fit_decode_overhead([], 0.005, 132) is None
    m = from_hf_config(GQA)  # 3 layers: base 3 x 1 ms + 2 ms = 5 ms
    assert decode_overhead_s(m, 4, 132, 0.001, 0.002, fit) == pytest.approx(0.005600396)
    # it enters the calibrated prediction as its overhead part, in decode only
    p = calibrated_parts(m, calc.Accelerator("probe", 1e10, 1e9, {"fp32": 1e12}), "decode", 4, 132, "fp32",
                         0.001, 0.002, FAKE_GROUPS, fit)
    assert p["overhead_s"] == pytest.approx(0.005600396)
    assert p["total_s"] == pytest.approx(p["matmul_s"] + p["kv_s"] + 0.005600396)


def test_kernel_rates_are_positive_and_finite_for_a_tiny_model():
    model = build_random(GQA, "fp32")
    groups = {g["label"]: g for g in time_linears(model, (1, 4), repeats=2, warmup=1)}
    # GQA: hidden 64, 4 heads of 16, 2 KV heads -> k/v 32 x 64; FFN 128; vocab 128 (untied output head)
    assert set(groups) == {"q_proj 64x64", "k_proj 32x64", "v_proj 32x64", "o_proj 64x64", "gate_proj 128x64",
                           "up_proj 128x64", "down_proj 64x128", "lm_head 128x64"}
    assert groups["q_proj 64x64"]["count"] == 3 and groups["q_proj 64x64"]["weight_bytes"] == 3 * 64 * 64 * 4
    assert groups["lm_head 128x64"]["count"] == 1 and groups["lm_head 128x64"]["per_token"] is False
    for g in groups.values():
        assert g["rows"] == [1, 4] and all(measure.finite_positive(t) for t in g["times_s"])
    rate = kernel_bandwidth(list(groups.values()))["bytes_per_s"]
    assert math.isfinite(rate) and rate > 0


def test_datasheet_ids():
    assert datasheet_accelerator_id("NVIDIA H200") == "h200"
    assert datasheet_accelerator_id("NVIDIA H100 PCIe") == "h100-pcie"
    assert datasheet_accelerator_id("NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert datasheet_accelerator_id("NVIDIA A100-SXM4-40GB") == "a100-40gb"
    assert datasheet_accelerator_id("NVIDIA L4") == "l4"
    assert datasheet_accelerator_id("NVIDIA L40S") == "l40s"
    assert datasheet_accelerator_id("AMD EPYC 7763") is None


def test_headline_of_an_empty_table_is_nan():
    assert math.isnan(headline(None)["bandwidth_pct"])


# -- spec validation ---------------------------------------------------------------------------------
def test_parse_sizes_and_spec_errors():
    assert parse_sizes("64, 8; 8", "sizes") == (8, 64)
    with pytest.raises(ValueError, match="outside 1..100"):
        parse_sizes("0", "sizes", 100)
    with pytest.raises(ValueError, match="unknown live preset"):
        RunSpec(preset_id="gpt-5")
    with pytest.raises(ValueError, match="decode_steps must be a positive integer, got 0"):
        RunSpec(decode_steps=0)
    with pytest.raises(ValueError, match="needs the config.json text"):
        RunSpec(source="config")


def test_bad_sweep_entries_are_all_reported_at_once():
    with pytest.raises(ValueError) as e:
        parse_sizes("32,-5,abc, 0", "prompt lengths", 131072)
    assert str(e.value) == ("prompt lengths: -5 is outside 1..131072; prompt lengths: 'abc' is not a whole number; "
                            "prompt lengths: 0 is outside 1..131072")
    values, problems = parse_sweeps(dict(prompt_lens="32,-5,abc", prefill_batches="1, 2", decode_batches="0,1e9",
                                         decode_contexts="128, 200000"))
    assert values == {"prefill_batches": (1, 2)}  # only the field without a problem
    assert problems == ["prompt lengths: -5 is outside 1..131072", "prompt lengths: 'abc' is not a whole number",
                        "decode batches: 0 is outside 1..4096", "decode batches: '1e9' is not a whole number",
                        "decode contexts: 200000 is outside 1..131072"]


def test_load_advice_only_when_busy_relative_to_the_cores():
    assert load_advice((0.9, 2.5, 2.9), 2) is None  # 0.9 < half of 2 cores
    msg = load_advice((1.8, 0.5, 0.5), 2)  # the 1-minute figure is judged: 1.8 >= 1.0
    assert msg is not None and "load 1.80 on 2 cores" in msg and "below 1.0" in msg
    assert load_advice((3.0, 3.0, 3.0), 8) is None and load_advice(None, 2) is None


def test_points_are_reported_by_their_p10_and_noisy_ones_flagged():
    m = calc.get_model("smollm2-135m")
    acc = calc.Accelerator("probe", 1e10, 2e10, {"fp32": 1e11})
    pts = [dict(sweep="decode_batch", phase="decode", batch=1, seq_len=132, context_len=128,
                median_s=0.060, p10_s=0.057, p90_s=0.063),   # spread 0.063/0.057 = 1.105: steady
           dict(sweep="decode_batch", phase="decode", batch=16, seq_len=132, context_len=128,
                median_s=1.29, p10_s=0.18, p90_s=3.37),      # the loaded-machine point: 3.37/0.18 = 18.7
           dict(sweep="prompt_len", phase="prefill", batch=1, seq_len=64, context_len=64,
                median_s=0.20, p10_s=0.184, p90_s=0.204)]
    t = annotate_points(pts, m, acc, "fp32", 0.0, 0.0)
    assert t["reported_s"].tolist() == [0.057, 0.18, 0.184]  # the p10 in both phases
    assert t["spread"].tolist() == pytest.approx([0.063 / 0.057, 3.37 / 0.18, 0.204 / 0.184])
    assert t["unreliable"].tolist() == [False, True, False] and NOISY_SPREAD == 1.5
    assert "p90/p10 = 18.72" in t["reasons"].iloc[1] and t["reasons"].iloc[0] == ""
    # the ratio divides the reported figure: decode B=1 machine roofline 26.9 ms + KV 132 tokens
    # (30 x 3 x 64 x 2 x 4 B x 132 = 6.08 MB -> 0.304 ms) = 27.2 ms; 57 / 27.2 = 2.095
    assert t["ratio_machine"].iloc[0] == pytest.approx(0.057 / (0.0269030 + 0.000304), rel=1e-3)


def test_describe_says_what_a_run_measures():
    # default sweeps: 4 prompt lengths + 3 prefill batches + 4 decode batches + 2 contexts = 13 points
    assert RunSpec().describe() == "smollm2-135m (preset, random weights), fp32 on cpu, 13 points"


def test_the_page_side_of_live_does_not_import_torch():
    # the Streamlit process imports these; torch must load only in the worker subprocess
    import subprocess
    import sys

    code = ("import sys, live, live.run_spec, live.worker, live.predict, live.charts; "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_gpt2_conv1d_layers_are_calibrated():
    # GPT-2 keeps its projections in transformers' Conv1D (weight stored [in, out]), not nn.Linear.
    # n_embd 32, 2 layers: c_attn 32 -> 96 (q, k, v), c_proj 32 -> 32 (attention) and 128 -> 32 (MLP), c_fc 32 -> 128
    cfg = {"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "vocab_size": 128, "n_positions": 64}
    model = build_random(cfg, "fp32")
    groups = {g["label"]: g for g in time_linears(model, (1, 2), repeats=1, warmup=0)}
    assert {"c_attn 96x32", "c_fc 128x32", "c_proj 32x32", "c_proj 32x128"} <= set(groups)
    assert groups["c_attn 96x32"]["count"] == 2 and groups["c_attn 96x32"]["weight_bytes"] == 2 * 96 * 32 * 4
    assert groups["c_fc 128x32"]["n_weights"] == 2 * 128 * 32
    assert all(measure.finite_positive(t) for g in groups.values() for t in g["times_s"])
