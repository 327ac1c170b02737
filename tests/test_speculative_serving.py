"""Speculative decoding in the serving model (calc.speculative_serving, calc.serving): acceptance lengths from
InferenceX's golden curves, the draft's cost, a round's time over the acceptance length, notes read, bad input
refused, and the comparison with published speculative runs."""
import json

import numpy as np
import pandas as pd
import pytest

from calc import comparison, get_model
from calc.serving import serving_estimate, serving_frontier
from calc.serving_fit import prepare_rows, predict_rows, read_measurements, speculative_notes
from calc.serving_params import load_serving_params, param_values
from calc.speculative_serving import (DEFAULT_DRAFT_TOKENS, acceptance_length, draft_cost, golden_curves,
                                      speculative_from_notes, speculative_settings)


def test_golden_curves_carry_their_source_and_license():
    d = golden_curves()
    assert d["source"]["license"] == "Apache-2.0"
    assert d["source"]["commit"] == "f0711382f121b081f7cbd9e4681e27723a8de125"
    # 8 files, 5 of them with thinking on and off: 13 curves
    assert len(d["curves"]) == 13
    assert all(c["run"].startswith("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/") for c in d["curves"])


def test_acceptance_length_of_a_model_with_its_own_curve():
    # golden_al_distribution/minimaxm3_eagle3.yaml, thinking_on, 3 drafts: 2.83 (the first of MiniMax-M3's two
    # EAGLE-3 curves; the GQA head's is 2.78)
    al, words = acceptance_length("minimax-m3", 3, "eagle3")
    assert al == pytest.approx(2.83)
    assert "minimaxm3_eagle3.yaml" in words
    # Qwen3.5's MTP curve at 1 and 8 drafts: 1.93 and 5.21; beyond 8, the value at 8
    assert acceptance_length("qwen3.5-397b-a17b", 1, "mtp")[0] == pytest.approx(1.93)
    assert acceptance_length("qwen3.5-397b-a17b", 12, "mtp")[0] == pytest.approx(5.21)


def test_acceptance_length_without_a_curve_is_the_median_of_the_curves():
    # thinking-on values at 3 drafts: 2.49 (DeepSeek-V4 MTP), 3.01 (V4-0813 DSpark), 2.99 (GLM-5.2), 2.88 (Kimi-K2.5),
    # 2.87 (Kimi-K3), 2.83 and 2.78 (MiniMax-M3's two heads), 3.39 (Qwen3.5): sorted, the middle two are 2.87 and 2.88
    al, words = acceptance_length("deepseek-v3", 3, "mtp")
    assert al == pytest.approx(2.875)
    assert "median" in words and "8" in words
    # at 1 draft: 1.79, 1.84, 1.84, 1.83, 1.84, 1.78, 1.79, 1.93 -> middle two 1.83 and 1.84
    assert acceptance_length("llama-3.1-70b", 1, "head")[0] == pytest.approx(1.835)


def test_draft_cost_of_an_mtp_module_and_of_a_head():
    v3 = get_model("deepseek-v3")
    share, words = draft_cost(v3, "deepseek_mtp")
    # the preset's MTP module uses 1.6148e9 parameters per draft, the model 37.55e9: 0.0430
    assert share == pytest.approx(v3.n_mtp_active_params / v3.active_params)
    assert 0.042 < share < 0.044
    k2 = get_model("kimi-k2")  # no MTP module on file: a one-layer head of its width with its output head
    share, words = draft_cost(k2, "mtp")
    head = 163840 * 7168
    layer = (k2.active_params - 2 * head) / 61
    assert share == pytest.approx((layer + head) / k2.active_params)
    assert "no MTP module" in words


def test_tpot_is_the_round_over_the_acceptance_length():
    # one client: the decode batch is 1 whatever AL, no other prompt shares the steps, so the round does not move
    # and TPOT is exactly round / AL: AL 2 against AL 3 is 1.5x
    kw = dict(concurrency=1, tp=8, weight_dtype="fp8-block", engine="sglang")
    two = serving_estimate("deepseek-v3", "h200", 1024, 1024, speculative={"method": "mtp", "draft_tokens": 3,
                                                                           "acceptance_length": 2.0}, **kw)
    three = serving_estimate("deepseek-v3", "h200", 1024, 1024, speculative={"method": "mtp", "draft_tokens": 3,
                                                                             "acceptance_length": 3.0}, **kw)
    assert two.tpot.estimate_s / three.tpot.estimate_s == pytest.approx(1.5, rel=1e-9)
    assert two.itl_s == pytest.approx(three.itl_s, rel=1e-9)
    assert two.itl_s == pytest.approx(2.0 * two.tpot.estimate_s, rel=1e-9)
    # the parts add up, the draft among them
    assert sum(three.tpot.parts().values()) == pytest.approx(three.tpot.estimate_s, rel=1e-9)
    assert three.tpot.draft_s > 0 and three.ttft.draft_s > 0
    # against plain decoding: a round of a memory-bound step verifying 4 tokens plus 3 drafts costs more than one
    # plain step but far less than AL of them, so TPOT falls, by less than AL
    plain = serving_estimate("deepseek-v3", "h200", 1024, 1024, **kw)
    assert "speculative draft" not in plain.tpot.parts() and plain.itl_s == plain.tpot.estimate_s
    assert plain.tpot.estimate_s / 3.0 < three.tpot.estimate_s < plain.tpot.estimate_s
    assert plain.speculative == "" and "3 draft token(s)" in three.speculative


def test_speculation_stops_paying_at_large_batch():
    # Llama-3.1-8B on one H100 at 512 clients: the verify step's 512 x 4 tokens are past the critical batch
    # (about 300 tokens per step in bf16), so the rejected drafts' matmuls cost real time; with AL 1.5 the
    # round (about 4x a plain step's matmuls) emits 1.5 tokens: slower per token than plain decoding
    kw = dict(tp=1, weight_dtype="bf16", engine="vllm")
    plain = serving_estimate("llama-3.1-8b", "h100-sxm", 512, 256, concurrency=512, **kw)
    spec = serving_estimate("llama-3.1-8b", "h100-sxm", 512, 256, concurrency=512,
                            speculative={"method": "eagle3", "draft_tokens": 3, "acceptance_length": 1.5}, **kw)
    assert spec.tpot.estimate_s > plain.tpot.estimate_s
    low = serving_estimate("llama-3.1-8b", "h100-sxm", 512, 256, concurrency=1,
                           speculative={"method": "eagle3", "draft_tokens": 3, "acceptance_length": 1.5}, **kw)
    assert low.tpot.estimate_s < serving_estimate("llama-3.1-8b", "h100-sxm", 512, 256, concurrency=1,
                                                  **kw).tpot.estimate_s


def test_defaults_are_said():
    est = serving_estimate("deepseek-v3", "h200", 1024, 1024, concurrency=8, tp=8, weight_dtype="fp8-block",
                           speculative="mtp")
    assert f"{DEFAULT_DRAFT_TOKENS} draft token(s)" in est.speculative
    assert any("without draft_tokens" in n for n in est.notices)
    assert any("acceptance length of" in n or "acceptance length 2.88" in n for n in est.notices)


@pytest.mark.parametrize("spec, words", [
    ({"method": "medusa"}, "not priced"),
    ({"method": "mtp", "draft_tokens": 0}, "draft_tokens"),
    ({"method": "mtp", "draft_tokens": 17}, "at most 16"),
    ({"method": "mtp", "draft_tokens": 2.5}, "draft_tokens"),
    ({"method": "mtp", "draft_tokens": 3, "acceptance_length": 4.5}, "between 1 and"),
    ({"method": "mtp", "draft_tokens": 3, "acceptance_length": 0.5}, "between 1 and"),
    ({"method": "mtp", "acceptance": 2}, "unknown speculative key"),
    ({"draft_tokens": 3}, "needs a method"),
    (3, "method name or a dict"),
])
def test_bad_speculative_input_is_refused(spec, words):
    with pytest.raises(ValueError, match=words):
        serving_estimate("deepseek-v3", "h200", 1024, 1024, concurrency=8, tp=8, weight_dtype="fp8-block",
                         speculative=spec)


def test_static_batching_refuses_speculation():
    with pytest.raises(ValueError, match="continuous batching"):
        serving_estimate("llama-3.1-8b", "h100-sxm", 512, 256, concurrency=8, batching="static",
                         speculative="eagle3")


@pytest.mark.parametrize("notes, expected", [
    ("speculative decoding on (MTP, 3 next-n layers)", {"method": "mtp", "draft_tokens": 3}),
    ('--speculative-config \'{"method": "eagle3", "num_speculative_tokens": 4, "synthetic_acceptance_length": 3.24}\'',
     {"method": "eagle3", "draft_tokens": 4, "acceptance_length": 3.24}),
    ("sglang --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-num-draft-tokens 4; "
     "SGLANG_SIMULATE_ACC_LEN: '2.9'", {"method": "eagle", "draft_tokens": 3, "acceptance_length": 2.9}),
    ("speculative decoding on (MTP)", {"method": "mtp"}),
    ("speculative decoding on", {"method": "mtp"}),
    ("dspark draft, max_draft_len: 2", {"method": "dspark", "draft_tokens": 2}),
    ("plain decoding, concurrency 4", None),
    # a baseline stated plain, beside a chart title and a figure path that name the paired draft runs
    ("no speculative decoding (baseline); bar of figure 'Kimi-K2.5 EAGLE3 on AMD Instinct MI355X' "
     "(assets/figures/2026-07-13-eagle-3-amd-instinct/figure4.png)", None),
    ("speculative decoding: off; EAGLE3 draft checkpoint unused", None),
    # a method the estimate does not price comes back by its name, for speculative_settings to refuse
    ("speculative decoding on; method medusa", {"method": "medusa"}),
    ("speculative decoding: ngram, num_speculative_tokens 4", {"method": "ngram"}),
    ("num_speculative_tokens 2", {"method": "mtp", "draft_tokens": 2}),
])
def test_notes_state_the_draft(notes, expected):
    assert speculative_from_notes(notes.lower()) == expected


def test_fitted_rows_leave_speculative_runs_out_and_the_comparison_predicts_them():
    m = read_measurements()
    spec = m[m["notes"].fillna("").map(speculative_notes)].reset_index(drop=True)
    assert len(spec) > 0
    rows, _, skipped = prepare_rows(spec)
    assert rows.empty and all("speculative decoding" in why for _, why in skipped)
    rows, comps, skipped = prepare_rows(spec, include_speculative=True)
    assert not skipped and len(rows) == len(spec)
    rows = rows.assign(pred=predict_rows(rows, comps, param_values(load_serving_params())))
    # TensorRT-LLM's DeepSeek-R1 at one client with 3 MTP drafts (trtllm-dsr1-blog): 274.4 output tok/s on 8 B200
    # and 158.1 on 8 H200, measured; the estimate at the curves' median acceptance length (2.875) lands within 25%
    minlat = rows[rows["id"].str.contains("minlat")]
    assert len(minlat) == 8
    ratio = minlat["value"] / minlat["pred"]
    assert ((ratio > 0.8) & (ratio < 1.25)).all()
    assert minlat["from_notes"].str.contains("speculative decoding").all()


def test_a_speculative_configuration_draws_its_own_curve():
    m = read_measurements()
    configs = comparison.configurations(m[m["source_id"] == "trtllm-dsr1-blog"])
    b200 = configs[(configs["accelerator"] == "b200") & (configs["plain"] == 0)].iloc[0]
    assert json.loads(b200["speculative"]) == {"method": "mtp", "draft_tokens": 3}
    drawn = comparison.config_frontier(b200.to_dict(), concurrencies=[1.0])
    plain = comparison.config_frontier(dict(b200.to_dict(), speculative=""), concurrencies=[1.0])
    # the speculative curve at one client: TPOT below plain decoding's, by less than AL 2.875
    ratio = float(plain["tpot_s"].iloc[0] / drawn["tpot_s"].iloc[0])
    assert 1.5 < ratio < 2.875
    table = comparison.compare_rows(m[m["id"].str.contains("minlat")])
    assert table["predicted"].notna().all()


def test_frontier_takes_speculation():
    kw = dict(tp=8, weight_dtype="fp8-block", engine="sglang")
    spec = serving_frontier("deepseek-v3", "h200", 1024, 1024, [1.0, 64.0],
                            speculative={"method": "mtp", "draft_tokens": 2, "acceptance_length": 2.0}, **kw)
    single = serving_estimate("deepseek-v3", "h200", 1024, 1024, concurrency=64,
                              speculative={"method": "mtp", "draft_tokens": 2, "acceptance_length": 2.0}, **kw)
    assert float(spec["tpot_s"].iloc[1]) == pytest.approx(single.tpot.estimate_s, rel=1e-9)
    assert any("acceptance" in n for n in spec.attrs["notices"]) is False  # AL given: no notice about its source
    assert isinstance(spec, pd.DataFrame) and np.isfinite(spec["tokens_per_s_per_gpu"]).all()


def test_a_speculative_row_beyond_the_plain_bound_is_not_called_misread():
    from ui.measured_views import beyond_bound_sentence
    # a TPOT of 2 ms against plain decoding's bound of 3 ms: impossible for plain decoding, a round of AL 2.5 tokens
    # in 5 ms for speculative decoding
    table = pd.DataFrame({"metric": ["tpot_ms"], "statistic": ["mean"], "concurrency": [1.0], "value": [2.0],
                          "bound": [3.0], "from_notes": [""]})
    assert "beats the roofline bound" in beyond_bound_sentence(table)
    drafted = table.assign(from_notes="speculative decoding (MTP module, 3 draft token(s) per round, ...)")
    assert beyond_bound_sentence(drafted) is None


def _spec_row(notes: str) -> pd.DataFrame:
    m = read_measurements()
    row = m[m["id"] == "trtllm-dsr1-b200-minlat-output_tok_per_s"].copy()
    return row.assign(notes=notes, id="uploaded").reset_index(drop=True)


@pytest.mark.parametrize("notes, words", [
    ("speculative decoding on; method medusa", "not priced"),
    ("speculative decoding: ngram, num_speculative_tokens 4", "not priced"),
    ("speculative decoding on (MTP, 40 next-n layers)", "at most 16"),
    ("eagle, max_draft_len: 0", "draft_tokens"),
    ("mtp, num_speculative_tokens 2, synthetic_acceptance_length 5", "between 1 and"),
])
def test_a_row_whose_notes_state_a_draft_the_estimate_refuses_says_why(notes, words):
    rows, _, skipped = prepare_rows(_spec_row(notes), include_speculative=True)
    assert rows.empty and len(skipped) == 1
    assert skipped[0][1].startswith("speculative decoding as its notes state it") and words in skipped[0][1]
    # a configuration of such rows still draws a curve: plain decoding, with a notice that says why
    configs = comparison.configurations(_spec_row(notes))
    assert configs["speculative"].iat[0] != ""
    drawn = comparison.config_frontier(configs.iloc[0].to_dict(), concurrencies=[1.0])
    assert any("the curve is plain decoding" in n and words in n for n in drawn.attrs["notices"])
    table = comparison.compare_rows(_spec_row(notes))
    assert table["predicted"].isna().all() and words in table["note"].iat[0]


def test_plain_decoding_as_false_and_a_head_in_place_of_a_missing_mtp_module():
    kw = dict(concurrency=8, tp=1, weight_dtype="bf16")
    assert serving_estimate("llama-3.1-8b", "h100-sxm", 512, 256, speculative=False, **kw).speculative == ""
    est = serving_estimate("llama-3.1-8b", "h100-sxm", 512, 256, speculative="mtp", **kw)
    assert "one-layer draft head, no MTP module on file" in est.speculative
    assert "MTP module, 3" not in est.speculative


def test_sglang_runs_48_requests_under_speculative_decoding_unless_told_otherwise():
    # SGLang's ServerArgs._handle_speculative_decoding sets max_running_requests to 48 for EAGLE / NEXTN drafts when
    # --max-running-requests is not given: 100 clients then run 48 at a time and the other 52 wait for a slot, so
    # (Little's law on the closed loop) the requests completed per second are 48 over a served request's time
    spec = {"method": "mtp", "draft_tokens": 3, "acceptance_length": 3.0}
    kw = dict(concurrency=100, tp=8, weight_dtype="fp8-block", speculative=spec)
    capped = serving_estimate("deepseek-v3", "h200", 1000, 1000, engine="sglang", **kw)
    assert capped.decode_batch == 48 and capped.batch_limit == "max_batch"
    assert any("48 running requests" in n for n in capped.notices)
    served_s = capped.e2e_s - capped.ttft.queue_s
    assert capped.requests_per_s == pytest.approx(48 / served_s, rel=0.01)
    assert capped.ttft.queue_s == pytest.approx((100 - 48) / 48 * served_s, rel=0.05)
    # a stated max batch, plain decoding and vLLM (no such default) keep all 100 clients running
    stated = serving_estimate("deepseek-v3", "h200", 1000, 1000, engine="sglang", engine_options={"max_batch": 256},
                              **kw)
    plain = serving_estimate("deepseek-v3", "h200", 1000, 1000, engine="sglang", concurrency=100, tp=8,
                             weight_dtype="fp8-block")
    vllm = serving_estimate("deepseek-v3", "h200", 1000, 1000, engine="vllm", **kw)
    assert stated.decode_batch == plain.decode_batch == vllm.decode_batch == 100
    assert not any("48 running requests" in n for n in stated.notices + plain.notices + vllm.notices)
    # 48 clients or fewer: the cap does not bind, nothing queues, and no notice says it does
    few = serving_estimate("deepseek-v3", "h200", 1000, 1000, engine="sglang", **dict(kw, concurrency=48))
    assert few.decode_batch == 48 and few.ttft.queue_s < 0.05 * few.e2e_s
    assert not any("running requests" in n for n in few.notices)
    # a frontier up to 1,024 clients reaches it, and says so once
    curve = serving_frontier("deepseek-v3", "h200", 1000, 1000, tp=8, weight_dtype="fp8-block", engine="sglang",
                             speculative=spec)
    assert sum("48 running requests" in n for n in curve.attrs["notices"]) == 1


def _sglang_row(notes: str, metric: str, statistic: str = "mean") -> pd.DataFrame:
    """One SGLang cookbook-style row of DeepSeek-V3 with MTP on 8 H200 at one client (its notes given)."""
    return pd.DataFrame([dict(id=f"r-{metric}-{statistic}", source_id="s", model="deepseek-v3", model_family="deepseek",
                              accelerator="h200", n_gpus=8, tp=8, pp=1, ep=1, dp=1, engine="sglang",
                              engine_version="0.5.6", weight_dtype="fp8-block", kv_dtype=None, input_len=1000,
                              output_len=1000, len_dist="fixed", concurrency=1, request_rate_per_s=None,
                              mode="concurrency", metric=metric, statistic=statistic, value=10.0, notes=notes)])


def test_sglang_bench_serving_books_itl_per_token_under_speculative_decoding():
    # python/sglang/bench_serving.py (native backend) books a streamed chunk of n tokens as n gaps of 1/n of its wait
    # (adjust_itl = chunk_gap / num_new_tokens), so with 3 tokens per round its mean ITL is the round over 3, the
    # TPOT; vLLM's client, or SGLang's own with an OpenAI backend, books one gap per chunk: the round, 3 x TPOT
    spec = "speculative decoding on (MTP, speculative-num-steps 3, acceptance length 3.0); "
    own = spec + "python3 -m sglang.bench_serving --backend sglang --max-concurrency 1"
    oai = spec + "python3 -m sglang.bench_serving --backend sglang-oai --max-concurrency 1"
    vllm = spec + "vllm bench serve --max-concurrency 1"
    rows = pd.concat([_sglang_row(own, "itl_ms"), _sglang_row(own, "tpot_ms"), _sglang_row(oai, "itl_ms"),
                      _sglang_row(vllm, "itl_ms")], ignore_index=True)
    rows["id"] = ["own-itl", "own-tpot", "oai-itl", "vllm-itl"]
    prepared, comps, skipped = prepare_rows(rows, include_speculative=True)
    assert not skipped
    p = dict(zip(prepared["id"], predict_rows(prepared, comps, param_values(load_serving_params()))))
    assert p["own-itl"] == pytest.approx(p["own-tpot"], rel=1e-9)
    assert p["oai-itl"] == pytest.approx(3.0 * p["own-tpot"], rel=1e-9) == pytest.approx(p["vllm-itl"], rel=1e-9)
    # the measured page's breakdown of the row follows the same convention
    est = comparison.row_estimate(rows.iloc[[0]])
    assert est.itl_s * 1e3 == pytest.approx(p["own-itl"], rel=1e-6)
    # plain decoding streams a token per chunk: both clients' ITL is one step
    plain = rows.assign(notes=rows["notes"].str.replace(spec, "", regex=False))
    prepared, comps, _ = prepare_rows(plain, include_speculative=True)
    q = dict(zip(prepared["id"], predict_rows(prepared, comps, param_values(load_serving_params()))))
    assert q["own-itl"] == pytest.approx(q["vllm-itl"], rel=1e-9) == pytest.approx(q["own-tpot"], rel=1e-9)
