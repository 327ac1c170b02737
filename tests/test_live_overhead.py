"""The overhead of the calibrated prediction, measured on the model itself with its matmuls taken out:
the stub, the prefill fit and its checks, on tiny configs and injected timings (no timing asserted)."""
import json

import pytest
import torch

import calc
from live import measure
from live.model_builder import build_random
from live.overhead_fit import fit_prefill_overhead
from live.predict import calibrated_parts, prefill_overhead_s
from live.probe import linear_groups, stub_matmuls
from live.robust import fit_prefill_overhead_checked, prefill_term_ranges_s
from live.runner import LiveSession
from live.run_spec import QUICK_SWEEPS, RunSpec

GQA = dict(model_type="llama", hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
           num_hidden_layers=3, vocab_size=128, max_position_embeddings=512)


def test_the_stub_returns_zeros_of_each_layers_shape_and_restores_the_layers():
    model = build_random(GQA, "fp32")
    x = torch.randn(5, 64)
    q = model.model.layers[0].self_attn.q_proj
    k = model.model.layers[0].self_attn.k_proj
    with stub_matmuls(model):
        assert torch.equal(q(x), torch.zeros(5, 64)) and k(x).shape == (5, 32)  # 2 KV heads x 16
        # the whole model still runs: same cache bytes as with real matmuls (3 x 2 x 16 x 2 x 4 B x 7 tokens)
        _, kv = measure.time_prefill(model, 1, 7, repeats=1, warmup=0)
        assert kv == 3 * 2 * 16 * 2 * 4 * 7
    assert not torch.equal(q(x), torch.zeros(5, 64))
    assert all("forward" not in m.__dict__ for g in linear_groups(model) for m in g["modules"])


def test_the_stub_is_undone_after_an_error():
    model = build_random(GQA, "fp32")
    with pytest.raises(RuntimeError):
        with stub_matmuls(model):
            raise RuntimeError("boom")
    assert all("forward" not in m.__dict__ for g in linear_groups(model) for m in g["modules"])


def _prefill_pt(b, t, extra=0.0):
    # residual = 5 ms + 20 us per token + 2 ns per B*T^2
    res = 5e-3 + 20e-6 * b * t + 2e-9 * b * t * t + extra
    return dict(batch=b, prompt_len=t, residual_s=res, step_s=res + 0.05)


def test_the_prefill_fit_recovers_its_three_terms():
    # B=1 T=32: 5 + 0.64 + 0.002048 ms; B=1 T=256: 5 + 5.12 + 0.131 ms; ...
    fit = fit_prefill_overhead([_prefill_pt(1, 32), _prefill_pt(1, 128), _prefill_pt(1, 256), _prefill_pt(4, 64)])
    assert fit["c_prefill_s"] == pytest.approx(5e-3, rel=1e-6)
    assert fit["per_token_s"] == pytest.approx(20e-6, rel=1e-6)
    assert fit["per_pair_s"] == pytest.approx(2e-9, rel=1e-5)
    assert prefill_overhead_s(2, 100, fit) == pytest.approx(5e-3 + 20e-6 * 200 + 2e-9 * 2 * 100 * 100, rel=1e-6)
    assert fit_prefill_overhead([]) is None


def test_the_prefill_fit_rejects_a_point_the_others_cannot_predict():
    pts = [_prefill_pt(1, 32), _prefill_pt(1, 64), _prefill_pt(1, 128), _prefill_pt(2, 64), _prefill_pt(4, 64, 0.2)]
    fit, notes = fit_prefill_overhead_checked(pts)
    assert len(notes) == 1 and "batch 4, 64 tokens" in notes[0]
    assert fit["per_token_s"] == pytest.approx(20e-6, rel=1e-5)


def test_prefill_term_ranges_are_relative_to_the_probed_roofline():
    m = calc.get_model("smollm2-135m")
    acc = calc.Accelerator("probe", 1e10, 68.6e9, {"fp32": 1.9e11})
    r = prefill_term_ranges_s(m, acc, "fp32")
    # per token: 30 layers x 64 passes x (576 + 1536) x 4 B / 68.6 GB/s = 0.2364 ms
    assert r["per_token_s"][1] == pytest.approx(30 * 64 * 2112 * 4 / 68.6e9)
    # per pair: 16 x 4 x 30 x 9 heads x 64 / 190 GFLOP/s + 16 x 46,080 B / 68.6 GB/s = 5.82 us + 10.75 us
    assert r["per_pair_s"][1] == pytest.approx(16 * 4 * 30 * 9 * 64 / 1.9e11 + 16 * 46_080 / 68.6e9)
    # a fitted per-pair term beyond the range is clamped, with a note
    pts = [dict(p, residual_s=p["residual_s"] + 1.0 * p["batch"] * p["prompt_len"] ** 2 * 1e-3) for p in
           (_prefill_pt(1, 32), _prefill_pt(1, 64), _prefill_pt(1, 128))]
    fit, notes = fit_prefill_overhead_checked(pts, ranges=r)
    assert fit["per_pair_s"] == pytest.approx(r["per_pair_s"][1]) and any("per_pair_s" in n for n in notes)


def test_the_prefill_prediction_uses_its_own_overhead():
    m = calc.from_hf_config(GQA)
    acc = calc.Accelerator("probe", 1e10, 1e10, {"fp32": 1e11})
    fit = dict(c_prefill_s=5e-3, per_token_s=20e-6, per_pair_s=2e-9)
    p = calibrated_parts(m, acc, "prefill", 2, 64, "fp32", 1e-3, 2e-3, prefill_overhead=fit)
    assert p["overhead_s"] == pytest.approx(5e-3 + 20e-6 * 128 + 2e-9 * 2 * 64 * 64)
    # decode keeps the per-layer and per-step overhead: 3 layers x 1 ms + 2 ms
    d = calibrated_parts(m, acc, "decode", 1, 64, "fp32", 1e-3, 2e-3, prefill_overhead=fit)
    assert d["overhead_s"] == pytest.approx(5e-3)


def test_the_quick_run_times_the_overhead_at_its_own_prefill_points():
    # quick sweeps: prompts 32 and 128 at batch 1; batches 1 and 4 at 64 tokens
    assert LiveSession.prefill_overhead_points(RunSpec(**QUICK_SWEEPS)) == ((1, 32), (1, 64), (1, 128), (4, 64))
    # the full run: prompts 32, 64, 128, 256; batches 1, 2, 4 at 64: six points, all of them, by B x T
    assert LiveSession.prefill_overhead_points(RunSpec()) == ((1, 32), (1, 64), (1, 128), (2, 64), (1, 256), (4, 64))


def test_a_calibrated_run_records_both_overheads():
    spec = RunSpec(source="config", config_json=json.dumps(GQA), prompt_lens=(8, 16), prefill_batches=(1, 2),
                   prefill_prompt_len=8, decode_batches=(1, 2), decode_context_len=8, decode_contexts=(8, 32),
                   decode_steps=2, repeats=1, warmup=0, new_tokens=2)
    cal = LiveSession(probe_buffer_bytes=16 << 20).run(spec)["calibration"]
    assert [(q["batch"], q["prompt_len"]) for q in cal["prefill_overhead_points"]] == [(1, 8), (1, 16), (2, 8)]
    assert set(cal["prefill_overhead"]) == {"c_prefill_s", "per_token_s", "per_pair_s"}
    assert sorted(cal["depth_times_s"]) == [1, 3]


def test_gpt2_runs_calibrated_without_a_tiny_model_of_its_config():
    # GPT-2's config names its width n_embd: no 1-layer tiny model is built, the stubbed model alone gives the
    # overhead, counted per layer (c_step = 0) with a note
    cfg = {"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "vocab_size": 128, "n_positions": 256,
           "bos_token_id": 0, "eos_token_id": 0}
    spec = RunSpec(source="config", config_json=json.dumps(cfg), prompt_lens=(8,), prefill_batches=(1,),
                   prefill_prompt_len=8, decode_batches=(1,), decode_context_len=8, decode_contexts=(8,),
                   decode_steps=2, repeats=1, warmup=0, new_tokens=2)
    res = LiveSession(probe_buffer_bytes=16 << 20).run(spec)
    cal = res["calibration"]
    assert cal["c_step_s"] == 0.0 and sorted(cal["depth_times_s"]) == [2]
    assert any("counted per layer" in n for n in cal["notes"])
    assert len(res["table"]) == 4  # prompt 8, prefill batch 1, decode batch 1, decode context 8
