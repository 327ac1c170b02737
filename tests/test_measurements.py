"""Tests of the published serving measurements (calc/data/serving_*.csv) and their loader (calc/measurements.py).

Oracles: the sources' own tables (each row's value is copied from its source: a few are re-checked here
against the source's text), calc's roofline (no published measurement may beat the lower bound the
public API computes for it), and hand-written malformed files whose error must name line and column.
"""
from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

import calc
from calc.hardware import with_matmul
from bench_script import bench_script
from git_fixture import git_repo
from calc.measurements import (CITED_COLUMNS, COLUMNS, DATA_DIR, METRICS, PUBLISHED_MODEL, load_cited,
                               load_measurements, load_sources, measurement_bound)

SOURCES = load_sources()
ROWS = load_measurements()
CITED = load_cited()
#: Rows no fit reads (calc/data/serving_holdout.csv): the same checks as the fitted rows'.
HOLDOUT = load_measurements(DATA_DIR / "serving_holdout.csv", sources=SOURCES)


def test_every_shipped_row_parses_and_names_a_licensed_dated_source():
    assert len(ROWS) >= 100
    assert ROWS["id"].is_unique
    for _, r in ROWS.iterrows():
        src = SOURCES.loc[r["source_id"]]
        assert src["license"] and src["retrieved"]
        assert src["published"] or src["commit"]  # shipped numbers: a publication date or a commit that pins them
        assert src["shipped"] == "yes", f"{r['id']}: numbers of a cite-only source must not ship"
        assert src["license"] not in ("unknown", "all rights reserved")


def test_every_held_out_row_has_a_shipped_source_and_none_is_a_fitted_row():
    # the held-out rows are kept out of the fit: no id of serving_holdout.csv is in serving_measurements.csv, and
    # no held-out row repeats a fitted row's configuration and metric under another id
    assert len(HOLDOUT) >= 100 and HOLDOUT["id"].is_unique
    assert not set(HOLDOUT["id"]) & set(ROWS["id"])
    key = ["source_id", "accelerator", "n_gpus", "model", "mode", "metric", "statistic", "value"]
    assert HOLDOUT[key].merge(ROWS[key], on=key).empty
    for _, r in HOLDOUT.iterrows():
        src = SOURCES.loc[r["source_id"]]
        assert src["shipped"] == "yes" and src["license"] not in ("unknown", "all rights reserved")


def test_cited_rows_come_only_from_cite_only_sources_and_carry_no_value():
    assert tuple(CITED.columns) == CITED_COLUMNS + (PUBLISHED_MODEL,) and "value" not in CITED.columns
    for _, r in CITED.iterrows():
        assert SOURCES.loc[r["source_id"], "shipped"] == "cite"


def test_every_source_is_used():
    used = set(ROWS["source_id"]) | set(CITED["source_id"]) | set(HOLDOUT["source_id"])
    assert used == set(SOURCES.index)


def test_rows_cover_the_space_a_fit_needs():
    # several sources, dense and MoE (MLA too), NVIDIA and AMD, FP8 and FP4, one GPU and 8-GPU servers,
    # latency and throughput metrics, several concurrencies per configuration
    assert ROWS["source_id"].nunique() >= 5 and ROWS["engine"].nunique() >= 3
    models = {calc.get_model(m) for m in ROWS["model"].unique()}
    assert any(m.is_moe for m in models) and any(not m.is_moe for m in models)
    assert any(m.attention == "mla" for m in models)
    assert {"h100-sxm", "h200", "b200", "gb200", "mi300x", "mi355x", "a100-80gb", "l40s"} <= set(ROWS["accelerator"])
    assert {"nvfp4", "mxfp4", "fp8"} <= set(ROWS["weight_dtype"])
    assert {1, 8} <= set(ROWS["n_gpus"])
    assert {"throughput", "latency"} == {METRICS[m][1] for m in ROWS["metric"]}
    per_config = ROWS[ROWS["mode"] == "concurrency"].groupby(["source_id", "model", "accelerator", "input_len",
                                                               "metric"])["concurrency"].nunique()
    assert per_config.max() >= 8


def test_a_row_copied_from_the_tensorrt_llm_table():
    # perf-overview.md @00f37686, Llama 3.1 8B table, row 128/128, column "H100 TP1 (FP8)": 28,312
    r = ROWS.set_index("id").loc["trtllm-perf-h100-sxm-llama-3.1-8b-instruct-fp8-128-128-tp1"]
    assert (r["value"], r["input_len"], r["output_len"], r["tp"], r["metric"]) == (28312, 128, 128, 1,
                                                                                  "output_tok_per_s")


@pytest.mark.parametrize("row_id,value,unit_check", [
    # TensorRT-LLM perf overview @03e27c7d, "GPT-OSS 120B", row 1024/1024, column "B200 DEP2 (FP4)": 25,870 tok/s/GPU
    ("trtllm-perf2-b200-gpt-oss-120b-fp4-1024-1024-dep2", 25870, ("output_tok_per_s_per_gpu", 2, 1, 2, 2)),
    # TensorRT-LLM DeepSeek-R1 blog, "H200 max-throughput": Per GPU Output Throughput 1436.1584 on 8 GPUs
    ("trtllm-dsr1-h200-maxtput-output_tok_per_s_per_gpu", 1436.1584, ("output_tok_per_s_per_gpu", 8, 1, 8, 8)),
    # ROCm/vllm @040de12d latency table: Llama 3.1 70B FP8, TP8, batch 32, 2048/2048: 25.966 s
    ("rocm-vllm-040de12d-mi300x-70b-fp8-2048-2048-bs32", 25966, ("e2e_ms", 8, 8, 1, 1)),
    # SGLang DeepSeek V3 8x H200, FP8 table, RPS 4: Median TPOT 366.48 ms
    ("sglang-dsv3-8xh200-fp8-rps4-tpot_ms", 366.48, ("tpot_ms", 8, 1, 8, 8)),
    # TensorRT-LLM v0.14.0 online table: Llama 3.1 70B, H100, TP4, 467/256, QPS 8: Mean ITL 32 ms
    ("trtllm-v014-online-h100-sxm-llama-3.1-70b-tp4-467-256-qps8-itl_ms", 32, ("itl_ms", 4, 4, 1, 1)),
    # InferenceX agg file, Kimi-K2.5 on 8x MI355X, conc 4: median_ttft 0.2969768075272441 s
    ("inferencex-repo-mi355x-vllm-kimik2.5-int4-tp8-1024-1024-c4-ttft_ms", 296.9768075272441, ("ttft_ms", 8, 8, 1, 1)),
    # aiconfigurator silicon_sample.csv @095f58a5, 2026_03_25_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c128_tp4_0_ep4_0_291:
    # tp_size 4, attention_dp_size 1, moe_ep_size 4, silicon_concurrency 128, silicon_ttft_ms 759.947319667117
    ("aic-2026-03-25-deepseek-r1-b200-sxm-sglang-fp4-agg-1024x1024-c128-tp4-0-ep4-0-291-ttft", 759.9473,
     ("ttft_ms", 4, 4, 4, 1)),
    # the same file, ..._trtllm_fp4_agg_1024x1024_c128_tp8_0_ep8_0_1085: tp_size 1, attention_dp_size 8, moe_ep_size 8
    # (8 GPUs, DP attention: tp 1, ep 8, dp 8), silicon_tpot_ms 21.33395358257017
    ("aic-2026-03-25-deepseek-r1-b200-sxm-trtllm-fp4-agg-1024x1024-c128-tp8-0-ep8-0-1085-tpot", 21.334,
     ("tpot_ms", 8, 1, 8, 8)),
])
def test_rows_copied_from_each_source(row_id, value, unit_check):
    r = ROWS.set_index("id").loc[row_id]
    metric, n_gpus, tp, ep, dp = unit_check
    assert r["value"] == value
    assert (r["metric"], r["n_gpus"], r["tp"], r["ep"], r["dp"]) == (metric, n_gpus, tp, ep, dp)


def test_the_two_tensorrt_llm_tables_agree_on_units():
    # The earlier page reports the whole TP group's output tok/s, the later one per GPU; on one GPU the two
    # must be close for the same model and lengths: Llama 3.3 70B FP4 on one B200, 1000/1000: 7,007 (earlier)
    # and 6,920 (later).
    rows = ROWS.set_index("id")
    early = rows.loc["trtllm-perf-b200-llama-3.3-70b-instruct-fp4-1000-1000-tp1"]
    late = rows.loc["trtllm-perf2-b200-llama-3.1-70b-fp4-1000-1000-tp1"]
    assert (early["metric"], late["metric"]) == ("output_tok_per_s", "output_tok_per_s_per_gpu")
    assert late["value"] / early["value"] == pytest.approx(1.0, abs=0.05)


# -- lower bound check ---------------------------------------------------------------------------

_CHECKED = pd.concat([ROWS, HOLDOUT])
BOUNDS = {r["id"]: measurement_bound(r) for _, r in _CHECKED.iterrows()}
NOTES = dict(zip(_CHECKED["id"], _CHECKED["notes"]))

#: Rows copied as published that no correct bound can hold, each investigated and marked in its notes.
KNOWN_VIOLATIONS = {
    # TensorRT-LLM v0.9.0, A100 (FP16), Mixtral 8x7B TP2, batch 32, 2048/2048: 801 tok/s/GPU = 1,602 tok/s for 32
    # sequences = one step per 20.0 ms; the FP16 weights are 93.4 GB, 46.7 GB per GPU, 22.9 ms at 2.039 TB/s, and
    # 32 tokens x top-2 touch all 8 experts of every layer: no step can be shorter. The value is read right (the
    # table's unit is out tok/s/GPU); the page's FP16 label (or the number) is what does not hold.
    "trtllm-v09-a100-80gb-mixtral-8x7b-fp16-2048-2048-tp2-bs32",
}


@pytest.mark.parametrize("row_id", sorted(BOUNDS))
def test_no_measurement_beats_calcs_lower_bound(row_id):
    b = BOUNDS[row_id]
    if row_id in KNOWN_VIOLATIONS:
        assert not b.respected and "BEATS CALC'S LOWER BOUND" in NOTES[row_id]
    else:
        assert b.respected, f"{row_id}: measured/bound = {b.ratio:.3f} ({b.kind}); {b.how}"


def test_the_known_violation_is_the_weight_read_and_nothing_looser():
    b = BOUNDS["trtllm-v09-a100-80gb-mixtral-8x7b-fp16-2048-2048-tp2-bs32"]
    # ceiling = 2 GPUs x 2048 tokens / (prefill compute + 2048 decode steps of 26.1 ms / 32) / 2 GPUs = 582 tok/s/GPU;
    # each step's 64 all-reduces of 32 x 4,096 x 2 B = 262,144 B are one-shot over NVLink 3 at TP 2 (262,144 / 300e9
    # + 1.5 us = 2.374 us, where a ring takes 0.874 + 2 x 1.5 = 3.874 us: 96 us a step less, 580.4 -> 582.4)
    assert b.bound == pytest.approx(582.4, rel=0.002) and b.ratio == pytest.approx(1.375, abs=0.005)
    step = calc.decode_step_time(calc.get_model("mixtral-8x7b"), calc.get_accelerator("a100-80gb"), 32, 3072, "fp16",
                                 "fp16", tp=2)
    assert step.weights_s * 1e3 == pytest.approx(22.84, abs=0.01)
    assert step.weights_s > 32 / (801 * 2)  # the 20.0 ms per step the published number implies


def test_bound_by_hand_llama_8b_offline_h100():
    # Llama-3.1-8B fp8 on one H100 SXM, 128 in / 128 out, offline (unbounded batch):
    # per output token: KV of one sequence at context 128 + 64 = 192, fp8: 2 * 32 layers * 8 heads * 128 * 1 B
    # = 65,536 B per token -> 12,582,912 B / 3.35e12 B/s = 3.756 us; compute: 2 * N_matmul / 1,979e12,
    # N_matmul = 8,030,261,248 - 525,336,576 (untied input embedding, gathered) = 7,504,924,672 -> 7.585 us.
    # Prefill compute per request: (2 * N_matmul * 128 - 2 * V * D * 127 + attention) / P (logits only for
    # the last token); attention = 2 * 32 heads * 256 * (128 * 129 / 2) * 32 layers = 4,328,521,728 FLOPs,
    # head skipped = 2 * 128,256 * 4,096 * 127 = 133,433,278,464 -> (1,921,260,716,032 - 133,433,278,464
    # + 4,328,521,728) / 1.979e15 = 0.9056 ms per request = 7.075 us per output token.
    # Ceiling = 1 / (3.756 + 7.585 + 7.075 us) = 54,300 tok/s; measured 28,312 (0.52 of it).
    r = ROWS.set_index("id").loc["trtllm-perf-h100-sxm-llama-3.1-8b-instruct-fp8-128-128-tp1"].to_dict()
    b = measurement_bound(r)
    assert b.bound == pytest.approx(54_300, rel=0.005)
    assert b.ratio == pytest.approx(28_312 / 54_300, rel=0.005)


def test_a_pipelined_replicas_throughput_bound_prefills_one_prompt_per_stage_at_once():
    # A replica of PP stages decodes one stage's step per micro-batch (``decode_step_time`` with pp is a stage's)
    # and prefills PP prompts at once, each stage over its share of the layers: its prompt time per request is the
    # pass through all the stages over PP. The 128 / 128 offline row of Llama-3.1-8B (test above) on 4 H100 as
    # PP4: 128 output tokens / (pass / 4 + 128 x stage step / B) per request. Counting the whole pass once per
    # request, as the bound did, gave a ceiling 1.6x lower, which a GB200 NVL72 run of Llama-3.1-405B at PP4
    # (MLPerf v6.0 Offline) beat by 17%.
    import calc
    from calc.measurements import _UNBOUNDED_BATCH
    r = ROWS.set_index("id").loc["trtllm-perf-h100-sxm-llama-3.1-8b-instruct-fp8-128-128-tp1"].to_dict()
    pp4 = measurement_bound(dict(r, pp=4, n_gpus=4))
    m, a = calc.get_model("llama-3.1-8b"), with_matmul(calc.get_accelerator("h100-sxm"), "low_precision")
    full = calc.prefill_time(m, a, 128, 1, "fp8", "fp8", logits="last", pp=4).compute_s
    token = calc.decode_step_time(m, a, _UNBOUNDED_BATCH, 192, "fp8", "fp8", pp=4).total_s / _UNBOUNDED_BATCH
    assert pp4.bound == pytest.approx(128 / (full / 4 + 128 * token), rel=1e-9)
    assert pp4.bound > 1.5 * 128 / (full + 128 * token)
    assert f"prefill compute {full / 4 * 1e3:.3f} ms per request" in pp4.how


def test_latency_bound_is_a_decode_step_at_the_concurrency():
    row = dict(id="x", source_id="x", model="llama-3.1-8b", model_family="llama", accelerator="h100-sxm",
               n_gpus=1, tp=1, pp=1, ep=1, dp=1, engine="vllm", engine_version="", weight_dtype="bf16",
               kv_dtype="bf16", input_len=1000, output_len=200, len_dist="fixed", concurrency=16,
               request_rate_per_s=None, mode="concurrency", metric="tpot_ms", statistic="median", value=20.0,
               notes="")
    step = calc.decode_step_time(calc.get_model("llama-3.1-8b"), calc.get_accelerator("h100-sxm"), 16, 1100,
                                 "bf16", "bf16")
    b = measurement_bound(row)
    assert b.kind == "latency" and b.bound == pytest.approx(step.total_s * 1e3)
    # bf16 8B on an H100: weights 16.06 GB -> 4.79 ms, 16 x 1100 x 131,072 B KV -> 0.69 ms: about 5.5 ms
    assert 5.0 < b.bound < 6.0
    per_user = measurement_bound({**row, "metric": "output_tok_per_s_per_user", "value": 50.0})
    assert per_user.bound == pytest.approx(1000 / b.bound) and per_user.respected


def test_a_speculative_round_may_emit_k_plus_one_tokens_so_its_per_token_bounds_divide_by_them():
    # plain decoding: one token per sequence per step; speculative decoding with 3 drafts: a round costs at least one
    # step and emits at most 4 tokens, so TPOT >= step / 4 and tok/s/user <= 4 x the plain bound
    row = dict(id="x", source_id="x", model="llama-3.1-8b", model_family="llama", accelerator="h100-sxm",
               n_gpus=1, tp=1, pp=1, ep=1, dp=1, engine="sglang", engine_version="", weight_dtype="bf16",
               kv_dtype="bf16", input_len=1000, output_len=200, len_dist="fixed", concurrency=16,
               request_rate_per_s=None, mode="concurrency", metric="tpot_ms", statistic="mean", value=2.0, notes="")
    plain = measurement_bound(row)
    drafted = dict(row, notes="speculative decoding on (EAGLE3, speculative-num-steps 3); vllm bench serve")
    assert measurement_bound(drafted).bound == pytest.approx(plain.bound / 4)
    assert measurement_bound({**drafted, "metric": "output_tok_per_s_per_user", "value": 300.0}).bound == \
        pytest.approx(4 * 1000 / plain.bound)
    assert "over the 4 tokens" in measurement_bound(drafted).how
    # an ITL booked per streamed chunk (vLLM's client) is a whole round, at least a step; SGLang's bench_serving
    # books it per token, bounded as TPOT
    itl = dict(drafted, metric="itl_ms")
    assert measurement_bound(itl).bound == pytest.approx(plain.bound)
    per_token = dict(itl, notes=itl["notes"].replace("vllm bench serve", "python3 -m sglang.bench_serving"))
    assert measurement_bound(per_token).bound == pytest.approx(plain.bound / 4)
    # the number of drafts unstated: the most the estimate takes (16), so the bound holds whatever the run drafted
    assert measurement_bound(dict(row, notes="speculative decoding on (MTP)")).bound == pytest.approx(plain.bound / 17)
    # throughput: k + 1 times the plain bound's decode rate, the prefill's share unchanged
    tput = measurement_bound({**row, "metric": "output_tok_per_s", "value": 1.0})
    tput4 = measurement_bound({**drafted, "metric": "output_tok_per_s", "value": 1.0})
    assert tput.bound < tput4.bound < 4 * tput.bound


# -- loading a user's file -----------------------------------------------------------------------

def _user_file(tmp_path, rows, header=COLUMNS):
    p = tmp_path / "mine.csv"
    lines = [",".join(header)] + [",".join(str(v) for v in r) for r in rows]
    p.write_text("\n".join(lines) + "\n")
    return p


GOOD = ["u1", "me", "llama-3.1-8b", "llama", "h100-sxm", 1, 1, 1, 1, 1, "vllm", "0.9", "bf16", "bf16", 1000, 200,
        "fixed", 16, "", "concurrency", "tpot_ms", "median", 21.5, "my run"]


def test_a_user_file_loads_without_a_sources_table(tmp_path):
    df = load_measurements(_user_file(tmp_path, [GOOD]))
    assert len(df) == 1 and df.loc[0, "value"] == 21.5 and df.loc[0, "concurrency"] == 16


@pytest.mark.parametrize("column,bad,words", [
    ("value", "fast", "line 3, column 'value': must be a number, got 'fast'"),
    ("value", "-2", "line 3, column 'value': must be a positive number"),
    ("model", "llama-9", "line 3, column 'model': unknown model preset 'llama-9'"),
    ("accelerator", "h900", "line 3, column 'accelerator': unknown accelerator preset"),
    ("metric", "goodput", "line 3, column 'metric': must be one of"),
    ("metric", "tok_s", "line 3, column 'metric': 'tok_s' says not which tokens it counts: write output_tok_per_s"),
    ("tp", "two", "line 3, column 'tp': must be an integer"),
    ("n_gpus", 4, "line 3, column 'n_gpus': must equal tp * pp * dp = 1"),
    ("concurrency", "", "line 3, column 'concurrency': is empty in a concurrency run"),
    ("weight_dtype", "fp5", "line 3, column 'weight_dtype': weight_dtype must be one of"),
    # a value no engine measures (1e308 overflows a chart axis padded by 1.25) and lengths past the context limit
    ("value", "1e308", "line 3, column 'value': 1e+308 is above 1,000,000,000,000 (unit: ms per output token"),
    ("value", "1.5e12", "line 3, column 'value': 1.5e+12 is above 1,000,000,000,000"),
    ("input_len", 2**27 + 1, "line 3, column 'input_len': 134,217,729 tokens is above the context limit of "
                             "134,217,728 tokens"),
    ("output_len", 10**12, "line 3, column 'output_len': 1,000,000,000,000 tokens is above the context limit"),
    ("output_len", 2**27 - 999, "line 3, column 'output_len': input_len + output_len = 134,217,729 tokens is above"),
])
def test_a_malformed_user_line_is_named(tmp_path, column, bad, words):
    broken = list(GOOD)
    broken[COLUMNS.index(column)] = bad
    second = list(GOOD)
    second[0] = "u2"
    with pytest.raises(ValueError) as e:
        load_measurements(_user_file(tmp_path, [second, broken]))
    assert "mine.csv " + words in str(e.value)


@pytest.mark.parametrize("column,written,stored", [
    ("model", "meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),    # a checkpoint's id (data/checkpoint_aliases)
    ("model", "Llama-3.1-8B", "llama-3.1-8b"),                         # the preset's display name
    ("accelerator", "NVIDIA H100 80GB HBM3", "h100-sxm"),              # nvidia-smi's name
    ("accelerator", "NVIDIA H100 SXM 80GB", "h100-sxm"),               # the preset's display name
    ("engine", "TensorRT-LLM", "trtllm"), ("engine", "TRT-LLM", "trtllm"), ("engine", "tensorrt_llm", "trtllm"),
    ("engine", "vLLM", "vllm"), ("engine", "SGLang", "sglang"),
    ("engine", "dynamo-trt", "trtllm"), ("engine", "vllm/vllm-openai", "vllm"),   # a stack or an image naming one
    ("weight_dtype", "bfloat16", "bf16"), ("weight_dtype", "FP8", "fp8"), ("kv_dtype", "fp8_e4m3", "fp8"),
    ("metric", "TPOT_ms", "tpot_ms"), ("statistic", "Median", "median"), ("mode", "Concurrency", "concurrency"),
    ("statistic", "p50", "median"), ("metric", "median_tpot_ms", "tpot_ms"),   # vllm bench serve's result key
])
def test_a_row_naming_things_as_its_source_does_is_stored_under_calcs_keys(tmp_path, column, written, stored):
    # a source writes names its own way (a benchmark's model id, nvidia-smi's GPU name, the project's engine name);
    # each is the same row as calc's key would give: stored under that key, predicted the same; the model as written
    # stays beside it (PUBLISHED_MODEL), the one column in which the two rows differ
    row = list(GOOD)
    row[COLUMNS.index(column)] = written
    df = load_measurements(_user_file(tmp_path, [row]))
    assert df.loc[0, column] == stored
    assert df.loc[0, PUBLISHED_MODEL] == (written if column == "model" else GOOD[COLUMNS.index("model")])
    row[COLUMNS.index(column)] = stored
    keyed = load_measurements(_user_file(tmp_path, [row]))
    assert df.drop(columns=PUBLISHED_MODEL).equals(keyed.drop(columns=PUBLISHED_MODEL))
    assert (keyed.loc[0, PUBLISHED_MODEL] == stored) if column == "model" else df.equals(keyed)


def test_a_file_with_the_columns_in_another_order_is_read_by_name(tmp_path):
    # the same 24 columns, reversed: every field lands in its own column, the same frame as the file in order
    order = list(reversed(COLUMNS))
    row = dict(zip(COLUMNS, GOOD))
    reordered = load_measurements(_user_file(tmp_path, [[row[c] for c in order]], header=order))
    assert reordered.equals(load_measurements(_user_file(tmp_path, [GOOD])))
    # a column named twice is refused in any file (which of the two is the value?); in a user's file a missing
    # column that has a default (notes) is not named, in the shipped files (sources given) it is
    with pytest.raises(ValueError, match="line 1: the header must name at least .*; value named twice$"):
        load_measurements(_user_file(tmp_path, [GOOD], header=list(COLUMNS[:-1]) + ["value"]))
    with pytest.raises(ValueError, match="line 1: the header must be .*; missing notes$"):
        load_measurements(_user_file(tmp_path, [GOOD[:-1]], header=list(COLUMNS[:-1])),
                          sources=pd.DataFrame(index=["me"]))


def test_the_largest_plausible_value_and_lengths_still_load(tmp_path):
    edge = list(GOOD)
    edge[COLUMNS.index("value")] = 1e12
    edge[COLUMNS.index("output_len")] = 2**27 - 1000          # with input_len 1000: the context limit exactly
    df = load_measurements(_user_file(tmp_path, [edge]))
    assert df.loc[0, "value"] == 1e12 and df.loc[0, "output_len"] == 2**27 - 1000


def test_a_short_line_and_a_wrong_header_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"mine.csv line 2: 23 fields, expected 24"):
        load_measurements(_user_file(tmp_path, [GOOD[:-1]]))
    with pytest.raises(ValueError, match=r"mine.csv line 1: the header must name at least model, accelerator, "
                                         r"engine, weight_dtype, input_len, output_len, metric, value \(and n_gpus "
                                         r"or tp\); missing value$"):
        load_measurements(_user_file(tmp_path, [GOOD[:-1]], header=CITED_COLUMNS))
    with pytest.raises(ValueError, match="cannot read measurements file"):
        load_measurements(tmp_path / "absent.csv")


def test_every_malformed_row_of_a_file_is_named_not_only_the_first(tmp_path):
    # rows 2..10 of the file: a good one, then 8 bad ones (a short line among them); the message gives the first in
    # full, the next LISTED_ROW_ERRORS (5) and counts the other 2: 8 bad rows = 1 + 5 + 2
    bad = []
    for k, (column, value) in enumerate([("value", "fast"), ("model", "llama-9"), ("tp", "two"), ("model", "gpt-9"),
                                         ("metric", "tok_s"), ("accelerator", "h900"), ("value", "x")]):
        row = list(GOOD)
        row[0] = f"b{k}"
        row[COLUMNS.index(column)] = value
        bad.append(row)
    bad.insert(3, GOOD[:-1])
    with pytest.raises(ValueError) as e:
        load_measurements(_user_file(tmp_path, [GOOD] + bad))
    text = str(e.value)
    assert text.startswith("mine.csv line 3, column 'value': must be a number, got 'fast'. 7 more malformed rows: ")
    for words in ("line 4, column 'model'", "line 5, column 'tp'", "line 6: 23 fields, expected 24",
                  "line 7, column 'model': unknown model preset 'gpt-9'", "line 8, column 'metric'"):
        assert "mine.csv " + words in text
    assert text.endswith("; and 2 more") and "line 9" not in text and "line 10" not in text
    # each column's list of valid names comes once (40 presets per message would bury the lines)
    from calc import list_models
    assert "unknown model preset 'llama-9'" in text and text.count("; valid: " + ", ".join(list_models())) == 1
    # one bad row alone: its message only, no count
    with pytest.raises(ValueError) as one:
        load_measurements(_user_file(tmp_path, [GOOD, bad[0]]))
    assert str(one.value) == "mine.csv line 3, column 'value': must be a number, got 'fast'"


def test_duplicate_ids_and_unknown_sources_are_refused(tmp_path):
    with pytest.raises(ValueError, match="line 3, column 'id': 'u1' appears twice"):
        load_measurements(_user_file(tmp_path, [GOOD, GOOD]))
    with pytest.raises(ValueError, match="line 2, column 'source_id': unknown source 'me'"):
        load_measurements(_user_file(tmp_path, [GOOD]), sources=SOURCES)


# -- presets added for these measurements --------------------------------------------------------

def test_gb200_preset_is_the_datasheet_per_gpu():
    gb = calc.get_accelerator("gb200")
    # NVL72 datasheet: 13.4 TB and 576 TB/s over 72 GPUs -> 186 GB, 8 TB/s each; dense fp4 10 PFLOP/s
    assert gb.memory_bytes == pytest.approx(13.4e12 / 72, rel=0.001)
    assert gb.bandwidth_bytes_per_s == pytest.approx(576e12 / 72)
    assert gb.peak_flops_per_s["fp4"] == 10_000e12 == 2 * gb.peak_flops_per_s["fp8"]


@pytest.mark.parametrize("model_id,published_total,rel", [
    ("qwen3-235b-a22b", 235e9, 0.001),     # Qwen3-235B-A22B model card: 235B total, 22B activated
    ("qwen3-30b-a3b", 30.5e9, 0.002),      # Qwen3-30B-A3B model card: 30.5B total, 3.3B activated
    ("gpt-oss-120b", 116.83e9, 0.001),     # OpenAI gpt-oss model card: 116.83B total (sinks, biases left out here)
    ("gpt-oss-20b", 20.91e9, 0.001),       # OpenAI gpt-oss model card: 20.91B total
])
def test_added_model_presets_match_their_published_totals(model_id, published_total, rel):
    m = calc.get_model(model_id)
    assert m.n_params == pytest.approx(published_total, rel=rel)


def test_added_moe_presets_activate_what_their_cards_say():
    # Qwen3 cards: 22B and 3.3B activated (the output head included); 8 of 128 experts per token
    assert calc.get_model("qwen3-235b-a22b").n_active_params == pytest.approx(22e9, rel=0.01)
    assert calc.get_model("qwen3-30b-a3b").n_active_params == pytest.approx(3.3e9, rel=0.02)
    # gpt-oss card: 5.13B / 3.61B active without embeddings; calc counts the untied output head, V * D =
    # 201,088 * 2,880 = 579,133,440 -> 5.13B + 0.58B = 5.71B and 3.61B + 0.58B = 4.19B
    for model_id, card in (("gpt-oss-120b", 5.13e9), ("gpt-oss-20b", 3.61e9)):
        m = calc.get_model(model_id)
        assert m.n_active_params - 201_088 * 2_880 == pytest.approx(card, rel=0.005)


def test_a_tpot_bound_takes_one_sequence_where_more_are_in_service_than_an_engine_surely_decodes():
    # Llama-3-8B bf16 on one H100 at 512 clients, 8,192 in and 1,024 out: decode context 8,192 + 512 = 8,704
    # tokens x 131,072 B = 1,140,850,688 B of cache per sequence; the driver's 85,520,809,984 B less the
    # 16,060,522,496 B of weights leave 69,460,287,488 B: 60 sequences (60.9). The engine decodes at most those
    # 60 at once, and fewer by its own reserve (a number the row does not give), so the bound is one sequence's step
    from calc.measurements import ENGINE_BATCH_FLOOR, measurement_bound
    row = dict(model="llama-3-8b", accelerator="h100-sxm", weight_dtype="bf16", kv_dtype="bf16", tp=1, pp=1, ep=1,
               n_gpus=1, input_len=8192, output_len=1024, concurrency=512, metric="tpot_ms", value=50.0)
    assert 69_460_287_488 // 1_140_850_688 == 60
    b = measurement_bound(row)
    one = calc.decode_step_time(calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm"), 1, 8704)
    assert b.bound == pytest.approx(one.total_s * 1e3, rel=1e-12)
    assert "batch 1 (of 512 in service" in b.how
    # at 32 clients every one fits: the step at 32
    small = measurement_bound(dict(row, concurrency=32))
    at32 = calc.decode_step_time(calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm"), 32, 8704)
    assert "batch 32," in small.how and small.bound == pytest.approx(at32.total_s * 1e3, rel=1e-12)
    assert small.bound > b.bound
    # short requests: 300 fit, but vLLM's default largest batch (256) may have run fewer: one sequence again
    short = dict(row, input_len=512, output_len=128, concurrency=300)
    assert ENGINE_BATCH_FLOOR == 256
    assert "batch 1 (of 300 in service" in measurement_bound(short).how
    assert "batch 256," in measurement_bound(dict(short, concurrency=256)).how


def _lenient_file(tmp_path, text):
    p = tmp_path / "theirs.csv"
    p.write_text(text)
    return p


def test_whole_numbers_written_as_floats_or_with_thousands_commas_are_integers(tmp_path):
    # pandas writes an integer column that has empty cells (concurrency, empty in rate rows) as floats: "16.0"
    row = list(GOOD)
    for col, text in (("concurrency", "16.0"), ("n_gpus", "1.0"), ("input_len", '"1,000"'), ("output_len", "2e2")):
        row[COLUMNS.index(col)] = text
    df = load_measurements(_user_file(tmp_path, [row]))
    assert (df.loc[0, "concurrency"], df.loc[0, "n_gpus"], df.loc[0, "input_len"], df.loc[0, "output_len"]) == (
        16, 1, 1000, 200)
    assert df.drop(columns="id").equals(load_measurements(_user_file(tmp_path, [GOOD])).drop(columns="id"))
    row[COLUMNS.index("concurrency")] = "16.5"   # not a whole number: refused, as it was written
    with pytest.raises(ValueError, match="column 'concurrency': must be an integer, got '16.5'"):
        load_measurements(_user_file(tmp_path, [row]))


def test_a_user_file_needs_only_the_required_columns_and_reads_common_headers(tmp_path):
    # a benchmark's own headers (GPU, num_gpus, Framework, Precision, ISL, OSL, conc), a date and a licence column, no
    # layout beyond the GPUs, no statistic, mode or id: each default is the one the docstring names
    text = ("Model,GPU,num_gpus,Framework,Precision,ISL,OSL,conc,metric,value,date,license\n"
            "meta-llama/Llama-3.1-8B-Instruct,NVIDIA H100 80GB HBM3,1.0,vLLM,bfloat16,1024,128,8.0,tpot_ms,9.1,"
            "2025-10-02,Apache-2.0\n"
            "deepseek-ai/DeepSeek-R1,B200,8,SGLang,FP8,1024,1024,,output_tok_per_s,5000,2026-01-02T10:00,MIT\n")
    df = load_measurements(_lenient_file(tmp_path, text))
    first, second = df.iloc[0], df.iloc[1]
    assert (first["id"], first["source_id"], first["model"], first["model_family"]) == (
        "theirs.csv line 2", "theirs.csv", "llama-3.1-8b", "llama")
    assert (first["accelerator"], first["n_gpus"], first["tp"], first["pp"], first["ep"], first["dp"]) == (
        "h100-sxm", 1, 1, 1, 1, 1)
    assert (first["engine"], first["weight_dtype"], first["kv_dtype"], first["len_dist"]) == (
        "vllm", "bf16", "", "not stated")
    assert (first["mode"], first["concurrency"], first["statistic"], first["value"]) == (
        "concurrency", 8, "mean", 9.1)
    assert first["notes"] == "measured 2025-10-02"      # the date column, in the words the fit dates a run by
    # 8 GPUs and no tp: TP8 (n_gpus / (pp * dp)); neither a concurrency nor a rate: an offline run
    assert (second["tp"], second["mode"], second["engine"], second["notes"]) == (
        8, "offline", "sglang", "measured 2026-01-02")
    assert df.attrs["header"] == [
        "column date read as each run's date (its notes: measured YYYY-MM-DD)", "columns not read: license",
        "columns not in the file, taken as their defaults: id, source_id, model_family, tp, pp, ep, dp, "
        "engine_version, kv_dtype, len_dist, request_rate_per_s, mode, statistic, notes"]
    # a required column left out is named; so is a run that gives neither its GPUs nor its layout
    with pytest.raises(ValueError, match="line 1: the header must name at least .*; missing value$"):
        load_measurements(_lenient_file(tmp_path, "model,accelerator,engine,weight_dtype,isl,osl,metric\n"))
    # a file saved with semicolons: one column, and a hint
    with pytest.raises(ValueError, match="its columns look separated by ';': save the file with commas$"):
        load_measurements(_lenient_file(tmp_path, "model;accelerator;value\nllama-3.1-8b;h100-sxm;9\n"))
    # a file that is not UTF-8 (Latin-1 here): named, not a codec's traceback
    latin = tmp_path / "latin.csv"
    latin.write_bytes("model,accelerator\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match="^latin.csv: not UTF-8 text; save the file as CSV"):
        load_measurements(latin)
    with pytest.raises(ValueError, match="line 2, column 'n_gpus': is empty, and so is tp"):
        load_measurements(_lenient_file(tmp_path, "model,accelerator,engine,weight_dtype,isl,osl,metric,value\n"
                                                  "llama-3.1-8b,h100-sxm,vllm,bf16,1000,200,tpot_ms,9\n"))


@pytest.mark.parametrize("written,statistic,metric,stat,value", [
    # a latency in seconds is stored in ms (x 1000); vllm bench serve's keys carry their statistic
    ("median_ttft_s", "", "ttft_ms", "median", 250.0),
    ("mean_tpot_ms", "", "tpot_ms", "mean", 0.25),
    ("TTFT (ms)", "p99", "ttft_ms", "p99", 0.25),
    ("p99_e2el_ms", "", "e2e_ms", "p99", 0.25),
    # a whole deployment's total tokens/s over its 8 GPUs: 0.25 / 8 per GPU
    ("total_token_throughput", "", "total_tok_per_s_per_gpu", "mean", 0.25 / 8),
    ("Output token throughput (tok/s)", "", "output_tok_per_s", "mean", 0.25),
    ("Request throughput (req/s)", "", "requests_per_s", "mean", 0.25),
    ("tput_per_gpu", "", "total_tok_per_s_per_gpu", "mean", 0.25),       # InferenceX: (input + output) / GPUs
    ("interactivity", "median", "output_tok_per_s_per_user", "median", 0.25),
    ("median_intvty", "", "output_tok_per_s_per_user", "median", 0.25),                # InferenceX's short field
    # throughputs in any spelling of tokens, seconds, GPU and user; trtllm-bench's report names
    ("Output tokens/s per GPU", "", "output_tok_per_s_per_gpu", "mean", 0.25),
    ("Output token throughput per GPU (tok/s)", "", "output_tok_per_s_per_gpu", "mean", 0.25),
    ("output_tok_s_gpu", "", "output_tok_per_s_per_gpu", "mean", 0.25),
    ("p50 tok/s/user", "", "output_tok_per_s_per_user", "median", 0.25),
    ("Total Output Throughput (tokens/sec)", "", "output_tok_per_s", "mean", 0.25),
    ("Total Token Throughput (tokens/sec)", "", "total_tok_per_s_per_gpu", "mean", 0.25 / 8),
    ("output_tokens_per_second", "", "output_tok_per_s", "mean", 0.25),
])
def test_a_metric_named_as_a_benchmark_names_it_is_stored_in_calcs_unit(tmp_path, written, statistic, metric, stat,
                                                                         value):
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,statistic,value\n"
            f'deepseek-v3,b200,8,vllm,fp8,1000,200,16,"{written}",{statistic},0.25\n')
    row = load_measurements(_lenient_file(tmp_path, text)).iloc[0]
    assert (row["metric"], row["statistic"]) == (metric, stat)
    assert row["value"] == pytest.approx(value, rel=1e-12)


def test_a_latency_without_its_unit_and_two_statistics_are_refused(tmp_path):
    head = "model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,statistic,value\n"
    # a throughput of tokens that says not which tokens (InferenceX's tok/s/GPU counts prompt + output, vLLM's
    # output throughput output only: 2x apart at 1k/1k) is refused, not guessed
    for name in ("throughput", "tok/s/gpu", "tokens_per_second"):
        with pytest.raises(ValueError, match=f"'{re.escape(name)}' says not which tokens it counts"):
            load_measurements(_lenient_file(tmp_path, head + f"llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,1,"
                                                             f"{name},,200\n"))
    with pytest.raises(ValueError, match="'median_ttft' gives no unit: write it as ttft_ms .* or ttft_s"):
        load_measurements(_lenient_file(tmp_path, head + "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,1,"
                                                         "median_ttft,,0.2\n"))
    with pytest.raises(ValueError, match="column 'metric': must be one of"):   # median in the name, mean beside it
        load_measurements(_lenient_file(tmp_path, head + "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,1,"
                                                         "median_ttft_ms,mean,200\n"))


def test_an_engine_of_no_family_here_keeps_its_name_and_an_images_tag_is_its_version(tmp_path):
    # TGI and LMDeploy are none of vLLM, SGLang, TensorRT-LLM: a user's rows keep their names (two configurations on
    # the page, the serving model's generic engine with a notice naming each); an image's tag is the version where
    # the row gives none (vllm/vllm-openai:v0.10.2 is vLLM 0.10.2); the shipped files refuse an unknown engine
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value,notes\n"
            "llama-3.1-8b,h100-sxm,1,TGI,bf16,1000,200,8,tpot_ms,9,my run\n"
            "llama-3.1-8b,h100-sxm,1,lmdeploy,bf16,1000,200,8,tpot_ms,9,\n"
            "llama-3.1-8b,h100-sxm,1,vllm/vllm-openai:v0.10.2,bf16,1000,200,8,tpot_ms,9,\n"
            "llama-3.1-8b,h100-sxm,1,ghcr.io/huggingface/text-generation-inference:3.2.0,bf16,1000,200,8,tpot_ms,9,\n")
    df = load_measurements(_lenient_file(tmp_path, text))
    assert list(df["engine"]) == ["TGI", "lmdeploy", "vllm", "ghcr.io/huggingface/text-generation-inference:3.2.0"]
    assert list(df["engine_version"]) == ["", "", "0.10.2", "3.2.0"] and df["notes"].iloc[0] == "my run"
    from calc.serving_fit import holdout_table
    table, skipped = holdout_table(path=_lenient_file(tmp_path, text))
    assert list(table["engine_key"]) == ["generic", "generic", "vllm", "generic"] and not skipped
    row = list(GOOD)
    row[COLUMNS.index("engine")] = "TGI"
    with pytest.raises(ValueError, match="column 'engine': must be one of vllm, sglang, trtllm, other, got 'TGI'"):
        load_measurements(_user_file(tmp_path, [row]), sources=pd.DataFrame(index=["me"]))




_ROCM_PAGE = """# vllm FP8 Latency and Throughput benchmarks
- vLLM {version}
### Throughput Measurements
| Model | Precision | TP Size | Input | Output | Num Prompts | Max Num Seqs | Throughput (tokens/s) |
|-------|-----------|---------|-------|--------|-------------|--------------|-----------------------|
| Llama 3.1 70B (amd/Llama-3.1-70B-Instruct-FP8-KV) | FP8 | 8 | 128 | 2048 | 3200 | 3200 | {first}  |
|       |           |         | 2048  | 2048   | 1500        | 1500         | 7560.9                |
| Llama 3.1 405B (amd/Llama-3.1-405B-Instruct-FP8-KV) | FP8 | 8 | 128 | 2048 | 1500 | 1500 | 3867.7 |
### Latency Measurements
{command}"""
#: The page's throughput command: the first benchmark_throughput.py block (a later one, of another model, is not it).
_ROCM_COMMAND = """```bash
python3 /app/vllm/benchmarks/benchmark_throughput.py \\
    --num-scheduler-steps 10 \\
    --max-num-seqs $MAX_NUM_SEQS
```
"""


def test_rocm_throughput_tables_are_read_once_per_version_of_their_numbers(tmp_path):
    # a page of three commits: a table, a change elsewhere (the same numbers: no new source), one new number under a
    # later release (its other rows repeated: written once, under the first version). Each row is one published
    # cell: the model of its block (a row with an empty model cell belongs to the block above), its lengths, prompts
    # and max batch, the tokens/s as written
    import subprocess
    conv = bench_script("convert_rocm_devdocker")
    repo = tmp_path / "vllm"
    page = repo / "docs" / "dev-docker" / "README.md"
    page.parent.mkdir(parents=True)

    def git(*args):
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)

    git("init", "-q")
    # the first version's command sets multi-step scheduling; the second says its image runs V1 (which ignores the
    # flag); the third drops the flag
    for version, first, extra in (("0.9.1", "12638.9", ""), ("0.9.1", "12638.9", "\n- V1 on by default\n"),
                                  ("0.10.0", "13383.3", "\n- V1 on by default\n")):
        command = "" if version == "0.10.0" else _ROCM_COMMAND
        page.write_text(_ROCM_PAGE.format(version=version, first=first, command=command) + extra)
        git("add", "-A")
        git("commit", "-q", "-m", version)
    # a checkout's root is read through its .git; a folder that is no git copy is named
    assert conv.git_dir(str(repo)) == str(repo / ".git") and conv.git_dir(str(repo / ".git")) == str(repo / ".git")
    with pytest.raises(ValueError, match="is not a git copy of github.com/ROCm/vllm"):
        conv.git_dir(str(tmp_path / "nothing"))
    rows, sources = conv.convert(conv.git_dir(str(repo)), "2026-12-05")
    assert len(sources) == 2 and list(sources["license"]) == ["Apache-2.0"] * 2
    assert len(rows) == 4 and list(rows["engine_version"]) == ["0.9.1"] * 3 + ["0.10.0"]
    assert list(rows["model"]) == ["llama-3.1-70b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.1-70b"]
    assert list(rows["input_len"]) == [128, 2048, 128, 128] and list(rows["concurrency"]) == [3200, 1500, 1500, 3200]
    assert list(rows["value"]) == [12638.9, 7560.9, 3867.7, 13383.3]
    assert list(rows["source_id"].str[:25]) == ["rocm-vllm-devdocker-tput-"] * 4 and rows["source_id"].nunique() == 2
    assert (rows["metric"] == "output_tok_per_s").all() and (rows["mode"] == "offline").all()
    assert rows["notes"].iloc[0].startswith("amd/Llama-3.1-70B-Instruct-FP8-KV (Quark)")
    assert "--max-num-seqs 3,200" in rows["notes"].iloc[0]
    # the engine each version's command ran: V0 with multi-step scheduling, then the V1 engine without the flag
    assert "--num-scheduler-steps 10 (multi-step scheduling of vLLM's V0 engine)" in rows["notes"].iloc[0]
    assert "the image runs vLLM's V1 engine" in rows["notes"].iloc[3]
    assert "scheduler-steps" not in rows["notes"].iloc[3]
    # the engine words of a page: the flag, with the V1 default that does not take it; nothing where neither is said
    v1 = conv.engine_words(_ROCM_PAGE.format(version="0.9.1", first="1", command=_ROCM_COMMAND) + "- V1 on by default")
    assert v1.startswith("the command sets --num-scheduler-steps 10, which the image's V1 engine does not take")
    assert conv.engine_words(_ROCM_PAGE.format(version="0.9.1", first="1", command="")) == ""


def test_rocm_throughput_rows_shipped_are_what_the_converter_reads():
    # the held-out file's ROCm throughput rows: the 12 versions of the page's table that publish new numbers, each
    # number once (82 of the 14 versions' 112 cells), every source shipped under the repository's Apache-2.0
    # licence, read as output tokens/s and never above calc's lower bound
    rocm = HOLDOUT[HOLDOUT["source_id"].str.startswith("rocm-vllm-devdocker-tput-")]
    assert len(rocm) == 82 and rocm["source_id"].nunique() == 12
    assert not rocm.duplicated(["model", "input_len", "output_len", "concurrency", "value"]).any()
    assert set(rocm["model"]) == {"llama-3.1-70b", "llama-3.1-405b"} and (rocm["accelerator"] == "mi300x").all()
    for _, r in rocm.iterrows():
        assert measurement_bound(r).ratio <= 1.0
        assert SOURCES.loc[r["source_id"], "license"] == "Apache-2.0"
    # the engine each version of the page ran, as its command and its words state it: the versions of vLLM 0.7.3 to
    # 0.9.0 set multi-step scheduling (V0), those from 0.9.1 say V1 is on by default (two of them keep the flag)
    from calc.serving_terms import multi_step_steps
    steps = [multi_step_steps("vllm", r["engine_version"], 10, r["notes"]) if "scheduler-steps 10" in r["notes"]
             else 1 for _, r in rocm.iterrows()]
    v0 = rocm["engine_version"].isin(["0.7.3", "0.8.3", "0.8.5", "0.9.0"]).to_numpy()
    assert v0.sum() == 56 and all(k == (10 if old else 1) for k, old in zip(steps, v0))
    assert rocm.loc[~v0, "notes"].str.contains("V1").all()


_IX_SERVE = """#SBATCH -p h200
exec vllm serve $MODEL \\
    --download-dir /workspace/model_weights \\
    --tensor-parallel-size 8 \\
    --speculative-config.method mtp \\
    --speculative-config.num_speculative_tokens 1 \\
    --host 0.0.0.0 \\
    --port $PORT
"""


def _ix_run(conc: int, completed: int, ttft_s: float) -> str:
    # a result file of the folder's client: 10 x C requests of 1,024 / 128 fixed tokens, times in seconds
    n = 10 * conc
    return json.dumps({"date": "20260213-141321", "num_prompts": n, "completed": completed, "max_concurrency": conc,
                       "total_input_tokens": 1024 * n, "total_output_tokens": 128 * completed,
                       "output_throughput": 164.72765, "median_ttft": ttft_s, "p99_ttft": 0.5848,
                       "median_tpot": 0.0213725, "p99_tpot": 0.026455, "median_e2el": 3.0226, "p99_e2el": 3.7203})


def test_inferencex_token_position_runs_are_read_with_their_server_and_client(tmp_path):
    # a copy of the repository with two folders: GLM-5's, whose server script runs TP8 with one MTP draft token,
    # holds a complete run and one whose requests did not all complete (skipped); MiniMax-M2.5's holds a "tep8" run
    # (TP8 with the experts split over the 8) under a server script of its own and a "dep8" run no script launches
    # (skipped). Each run gives seven rows: the output tokens/s and the median and p99 TTFT, TPOT and e2e, times
    # written in ms (seconds x 1000 in the file)
    conv = bench_script("convert_inferencex_slo")
    repo = tmp_path / "InferenceX"
    title = 'plt.suptitle("X SLA Frontier\\n8xH200 {} vLLM", fontsize=13)\n'
    files = {"glm-5/plot_sla_frontier.py": title.format("TP8"), "glm-5/serve_glm5_sbatch.sh": _IX_SERVE,
             "glm-5/results/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json": _ix_run(4, 40, 0.265),
             "glm-5/results/glm5_fp8_vllm_tp8_isl1024_osl128_conc8.json": _ix_run(8, 79, 0.3),
             "minimax-m2.5/plot_sla_frontier.py": title.format("TEP8"),
             "minimax-m2.5/serve_minimax_tep8_sbatch.sh":
                 "VLLM_COMMIT=dea63512bb9bdf7521d591546c52138d9d79e8ce\nexec vllm serve $MODEL \\\n"
                 "    --tensor-parallel-size 8 \\\n    --enable-expert-parallel\n",
             "minimax-m2.5/results/minimax_m25_vllm_tep8_isl1024_osl128_conc16.json": _ix_run(16, 160, 0.4),
             "minimax-m2.5/results/minimax_m25_vllm_dep8_isl1024_osl128_conc16.json": _ix_run(16, 160, 0.4)}
    repo.mkdir()
    git_repo(repo, {f"{conv.ROOT}/{name}": text for name, text in files.items()})
    rows, sources, skipped = conv.convert(conv.git_dir(str(repo), "InferenceX"), "2026-12-07")
    assert sorted(why for _, why in skipped) == ["79 of 80 requests completed at concurrency 8",
                                                 "no server script of the folder launches this layout"]
    assert list(sources["source_id"]) == ["inferencex-slo-glm5-h200", "inferencex-slo-minimax-m25-h200"]
    assert (sources["license"] == "Apache-2.0").all() and (sources["shipped"] == "yes").all()
    assert len(rows) == 14 and (rows["accelerator"] == "h200").all() and (rows["n_gpus"] == 8).all()
    glm, mm = rows[rows["model"] == "glm-5"], rows[rows["model"] == "minimax-m2.5"]
    assert list(glm["metric"] + " " + glm["statistic"]) == [
        "output_tok_per_s mean", "ttft_ms median", "ttft_ms p99", "tpot_ms median", "tpot_ms p99", "e2e_ms median",
        "e2e_ms p99"]
    # 0.265 s -> 265 ms; 0.0213725 s -> 21.3725 ms; the throughput as written
    assert list(glm["value"]) == [164.7277, 265.0, 584.8, 21.3725, 26.455, 3022.6, 3720.3]
    assert (glm[["tp", "ep", "dp"]].to_numpy() == [8, 1, 1]).all() and (mm[["tp", "ep"]].to_numpy() == [8, 8]).all()
    assert (rows["input_len"] == 1024).all() and (rows["output_len"] == 128).all()
    assert list(glm["concurrency"].unique()) == [4] and (glm["engine_version"] == "nightly-2026-02-13").all()
    assert (rows["len_dist"] == "fixed").all() and (rows["mode"] == "concurrency").all()
    # the run as the fit's readers take it: 10 rounds of C requests; GLM-5's one MTP draft token per round read back
    # from its launch; MiniMax-M2.5's run plain, with the vLLM build its script installs
    from calc.serving_fit import closed_loop_rounds
    from calc.speculative_serving import speculative_from_notes
    assert closed_loop_rounds("concurrency", 4, glm["notes"].iloc[0].lower()) == 10
    assert speculative_from_notes(glm["notes"].iloc[0]) == {"method": "mtp", "draft_tokens": 1}
    assert "--host" not in glm["notes"].iloc[0] and "serve zai-org/GLM-5-FP8 --tensor-parallel-size 8" in \
        glm["notes"].iloc[0]
    assert speculative_from_notes(mm["notes"].iloc[0]) is None
    assert "vLLM wheel of commit dea63512bb installed over the image" in mm["notes"].iloc[0]


def test_inferencex_token_position_rows_shipped_are_what_the_converter_reads():
    # the held-out file's rows of the three folders: 162 runs (GLM-5 52, MiniMax-M2.5's 65 TEP8 runs, Qwen3.5 45)
    # of seven rows each, all at concurrency 4-64 on 8 H200, none faster than calc's lower bound
    ix = HOLDOUT[HOLDOUT["source_id"].str.startswith("inferencex-slo-")]
    assert len(ix) == 7 * (52 + 65 + 45) and ix["source_id"].nunique() == 3
    assert ix.groupby("model").size().to_dict() == {"glm-5": 364, "minimax-m2.5": 455, "qwen3.5-397b-a17b": 315}
    assert set(ix["concurrency"]) == {4, 8, 16, 32, 48, 64} and (ix["accelerator"] == "h200").all()
    # each folder's runs in the order of their prompt length and concurrency as numbers (the folder lists conc16
    # before conc4), so the measured page's table and row box read 4, 8, 16 ...
    for _, g in ix.groupby("source_id", sort=False):
        keys = [(int(i), int(c)) for i, c in zip(g["input_len"], g["concurrency"])]
        assert keys == sorted(keys)
    for _, r in ix.iterrows():
        assert measurement_bound(r).respected
        assert SOURCES.loc[r["source_id"], "license"] == "Apache-2.0"

_HARNESS_COMMON = """vllm_env_config:
  VLLM_USE_V1: 0
vllm_engine_config:
  dtype: float16
  kv_cache_dtype: fp8
  tensor_parallel_size: 8
"""
_HARNESS_MODEL = """vllm_env_config:
  VLLM_LLAMA2_MLPERF_SCHED: 1
  VLLM_LLAMA2_MLPERF_MIN_TARGET_DECODE_BATCH: 1280
  VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH: 1536
vllm_engine_config:
  model: {model}
  tensor_parallel_size: 1
  num_scheduler_steps: {steps}
  quantization: {quant}
  enforce_eager: {eager}
  max_num_seqs: 1792
  enable_chunked_prefill: False
"""


def test_mlperf_v5_amd_harness_llm_layouts_are_read_from_their_yaml(tmp_path):
    # AMD's harness_llm: a model's <scenario>_<accelerator>.yaml over harness_llm/common/config.yaml, the model file's
    # keys winning (TP1 over the common TP8), the common file's KV cache dtype and V0 engine kept; multi-step
    # scheduling and eager mode as the notes state them, and a run with graphs never says "eager" (the serving model
    # reads that word as a run without CUDA graphs)
    conv = bench_script("convert_mlperf")
    repo = tmp_path / "results"
    root = "closed/AMD"
    files = {
        f"{root}/code/llama2-70b-99/harness_llm/common/config.yaml": _HARNESS_COMMON,
        f"{root}/code/llama2-70b-99/harness_llm/models/llama2-70b/offline_mi300x.yaml": _HARNESS_MODEL.format(
            model="/model/llama2-70b-chat-hf/fp8_quantized", steps=11, quant="fp8", eager="True"),
        f"{root}/code/llama2-70b-99/harness_llm/models/llama2-70b/offline_mi355x.yaml": _HARNESS_MODEL.format(
            model="/model/Llama-2-70b-chat-hf-WMXFP4-AMXFP4-KVFP8/", steps=19, quant="quark", eager="False"),
        f"{root}/code/llama2-70b-99/harness_llm/models/llama2-70b/server_mi300x.yaml": _HARNESS_MODEL.format(
            model="/model/x", steps=9, quant="int4", eager="False"),
        # a submitter that keeps Mixtral's file under the Llama benchmark's folder
        f"{root}/code/llama2-70b-99/harness_llm/models/mixtral-8x7b/offline_mi325x.yaml": _HARNESS_MODEL.format(
            model="/model/mixtral", steps=13, quant="fp8", eager="False"),
    }
    git_repo(repo, files)
    tree = conv.GitTree(str(repo))
    framework = "vLLM 0.9.0.2.dev108+g71faa1880.d20250730.rocm641, Pytorch 2.7.0"
    fp8 = conv.harness_llm_layout(tree, root, "llama2-70b-99", "Offline", "mi300x", "llama2-70b", framework)
    assert (fp8.engine, fp8.engine_version, fp8.tp, fp8.pp, fp8.weight_dtype, fp8.kv_dtype) == (
        "vllm", "0.9.0", 1, 1, "fp8", "fp8")
    assert "--num-scheduler-steps 11 (multi-step scheduling)" in fp8.how and "VLLM_USE_V1=0 (the V0 engine)" in fp8.how
    assert "enforce_eager True (eager mode, no graphs)" in fp8.how and "target decode batch 1280-1536" in fp8.how
    mx = conv.harness_llm_layout(tree, root, "llama2-70b-99", "Offline", "mi355x", "llama2-70b",
                                 "vllm-0.9.1.dev2+g790cf6584")
    assert (mx.weight_dtype, mx.kv_dtype, mx.engine_version) == ("mxfp4", "fp8", "0.9.1")
    assert "eager" not in mx.how.lower() and "--num-scheduler-steps 19" in mx.how
    mix = conv.harness_llm_layout(tree, root, "mixtral-8x7b", "Offline", "mi325x", "mixtral-8x7b", framework)
    assert mix.tp == 1 and "llama2-70b-99/harness_llm/models/mixtral-8x7b/offline_mi325x.yaml" in mix.how
    # what is not read is named: a weight format, a scenario without a file, a family without a folder
    assert "quantization 'int4'" in conv.harness_llm_layout(tree, root, "llama2-70b-99", "Server", "mi300x",
                                                             "llama2-70b", framework)
    assert "has no llama2-70b/interactive_mi300x.yaml" in conv.harness_llm_layout(
        tree, root, "llama2-70b-99", "Interactive", "mi300x", "llama2-70b", framework)
    assert "no model folder" in conv.harness_llm_layout(tree, root, "llama3.1-8b", "Offline", "mi300x",
                                                         "llama3.1-8b", framework)
    # the multi-step steps a row of such a run gets: its stated steps, its release before 0.10.1 (V0)
    from calc.serving_terms import multi_step_steps
    assert multi_step_steps("vllm", fp8.engine_version, 11, fp8.how) == 11


def test_amd_mlperf_v51_rows_shipped_state_their_harness():
    # the held-out file's MLPerf v5.1 rows of AMD's harness_llm: MI300X, MI325X and MI355X, each stating its steps
    # per scheduler call; the eager runs say so (the serving model leaves them out), the others never say "eager".
    # 121 rows of means, medians and throughputs, and 42 p99 TTFT and TPOT rows of the same runs
    # (bench/derive_mlperf_p99.py), 40 of them eager
    amd = HOLDOUT[HOLDOUT["notes"].str.contains("AMD's harness_llm") & HOLDOUT["id"].str.startswith("mlperf51")]
    assert len(amd) == 163 and set(amd["accelerator"]) == {"mi300x", "mi325x", "mi355x"}
    assert (amd["statistic"] == "p99").sum() == 42
    assert amd["notes"].str.contains(r"--num-scheduler-steps \d+").all() and (amd["engine"] == "vllm").all()
    eager = amd["notes"].str.contains("enforce_eager True")
    assert eager.sum() == 148 and not amd.loc[~eager, "notes"].str.lower().str.contains("eager").any()


_V6_COMMON = """vllm_env_config:
  VLLM_USE_V1: 1
vllm_engine_config:
  dtype: float16
  kv_cache_dtype: fp8
  tensor_parallel_size: 8
  max_num_seqs: 256
  enforce_eager: False
"""
_V6_MODEL = """vllm_env_config:
  VLLM_USE_V1: 1
  VLLM_MIN_REQUEST_DECODE_STEP: {least}
  VLLM_SUBSEQUENT_DECODE_STEPS: {sub}
vllm_engine_config:
  model: {model}
  tensor_parallel_size: 1
  quantization: quark
  compilation_config:
    cudagraph_mode: FULL_AND_PIECEWISE
  enforce_eager: False
  max_num_batched_tokens: 65536
  max_num_seqs: {seqs}
  enable_chunked_prefill: True
  async_scheduling: True
{kv}vllm_sampling_config:
  max_tokens: {max_tokens}
"""


def test_mlperf_v6_amd_src_layouts_are_read_from_their_yaml(tmp_path):
    # AMD's v6.0 harness: src/<benchmark>/<config>.yaml over src/harness_llm/common/config.yaml (the model file's keys
    # win: TP1 over the common TP8, its max_num_seqs over 256; the common file's fp8 KV cache where the model file
    # sets none); the config the result's README runs, else <scenario>_<accelerator>[_mn].yaml; Quark weights on a
    # path naming fp4 are MXFP4 where the submission says so (its own prepare_model.sh, else AMD's); the vLLM
    # version from the systems json framework, else the setup build config; AMD's decode-step patch is quoted in
    # words no note reader takes for multi-step scheduling, and a run with graphs never says "eager"
    conv = bench_script("convert_mlperf")
    repo = tmp_path / "results"
    amd, dell = "closed/AMD", "closed/Dell"
    llama = dict(model="/model/llama2-70b-chat-hf/fp4_quantized_gptq", kv="  kv_cache_dtype: fp8\n", max_tokens=1024)
    files = {
        f"{amd}/src/harness_llm/common/config.yaml": _V6_COMMON,
        f"{amd}/src/llama2-70b-99/offline_mi355x.yaml": _V6_MODEL.format(seqs=3392, sub=17, least=3840, **llama),
        f"{amd}/src/llama2-70b-99/offline_mi355x_mn.yaml": _V6_MODEL.format(seqs=2048, sub=19, least=2560, **llama),
        f"{amd}/src/llama2-70b-99/server_mi300x.yaml": _V6_MODEL.format(seqs=64, sub=2, least=16, **llama),
        f"{amd}/src/gpt-oss-120b/server_mi355x.yaml": _V6_MODEL.format(
            model="/model/gpt-oss-120b/fp4_quantized", kv="", max_tokens=10240, seqs=1024, sub=10, least=128),
        f"{amd}/setup/llama2-70b-99/dataset_and_model/prepare_model.sh":
            'python3 quantize_quark.py --quant_scheme w_mxfp4_a_mxfp4 --kv_cache_dtype fp8\n',
        f"{amd}/setup/gpt-oss-120b/dataset_and_model/prepare_model.sh":
            'EXCLUDE_LAYERS="*lm_head *self_attn* *router*"\npython3 quantize_quark.py --quant_scheme mxfp4_fp8\n',
        f"{amd}/setup/llama2-70b-99/build_docker.sh": 'export CONFIG_FILE="vllm_gfx950.config"\n',
        f"{amd}/setup/llama2-70b-99/vllm_gfx950.config":
            'export VLLM_REV="11b6af528"\nexport DOCKER_BASE_IMAGE=rocm/vllm-dev:preview_0.14_71398028_20260113\n',
        f"{amd}/setup/gpt-oss-120b/build_docker.sh": 'export CONFIG_FILE="vllm_v0.14.0_amd_dev.config"\n',
        f"{amd}/setup/gpt-oss-120b/vllm_v0.14.0_amd_dev.config": "export DOCKER_BASE_IMAGE=rocm/vllm:v0.14.0_amd_dev\n",
        # the 87-GPU cluster's README runs the multi-node config on 87 devices
        f"{amd}/results/87xMI355X/llama2-70b-99/Offline/README.md":
            "python main.py --config-path /code/llama2-70b-99/ \\\n --config-name offline_mi355x_mn \\\n"
            " harness_config.device_count=87 \\\n",
        # a partner shipping the harness without a quantization script, and a README naming a config it lacks
        f"{dell}/src/harness_llm/common/config.yaml": _V6_COMMON,
        f"{dell}/src/gpt-oss-120b/server_mi355x.yaml": _V6_MODEL.format(
            model="/model/gpt-oss-120b/fp4_quantized", kv="", max_tokens=10240, seqs=512, sub=10, least=128),
        f"{dell}/results/8xMI355X/gpt-oss-120b/Offline/README.md": "--config-name offline_mi355x_x\n",
    }
    git_repo(repo, files)
    tree = conv.GitTree(str(repo))
    one = conv.amd_src_layout(tree, amd, "8xMI355X", "llama2-70b-99", "Offline", "mi355x", "llama2-70b",
                              "PyTorch 2.9.1, ROCm 7.0.0", 8, 1)
    assert (one.engine, one.engine_version, one.tp, one.pp, one.weight_dtype, one.kv_dtype) == (
        "vllm", "0.14", 1, 1, "mxfp4", "fp8")
    assert "src/llama2-70b-99/offline_mi355x.yaml" in one.how and "max_num_seqs 3392" in one.how
    assert "a preview of 0.14" in one.how and "VLLM_REV 11b6af528" in one.how
    assert "w_mxfp4_a_mxfp4" in one.how and "VLLM_USE_V1=1 (the V1 engine)" in one.how
    assert "one scheduler step in 18 while the running batch holds at least 3840" in one.how
    assert "eager" not in one.how.lower() and "CUDA graphs on (cudagraph_mode FULL_AND_PIECEWISE)" in one.how
    # no reader of the notes takes the patch's knobs for multi-step scheduling or a request count
    from calc.serving_terms import multi_step_steps
    assert not re.search(r"num[-_ ](?:scheduler|continuous[-_ ]decode)[-_ ]steps", one.how.lower())
    assert not re.search(r"\d (?:requests|prompts)\b", one.how)
    assert multi_step_steps("vllm", one.engine_version, 1, one.how) == 1
    # the multi-node cluster: the README's config and device count; without a README a multi-node system takes _mn
    mn = conv.amd_src_layout(tree, amd, "87xMI355X", "llama2-70b-99", "Offline", "mi355x", "llama2-70b", "", 87, 11)
    assert "offline_mi355x_mn.yaml (the result's README.md runs --config-name offline_mi355x_mn)" in mn.how
    assert "max_num_seqs 2048" in mn.how and "in 20 while the running batch holds at least 2560" in mn.how
    assert "device_count=87, not the system's 88" in conv.amd_src_layout(
        tree, amd, "87xMI355X", "llama2-70b-99", "Offline", "mi355x", "llama2-70b", "", 88, 11)
    other = conv.amd_src_layout(tree, amd, "16xMI355X", "llama2-70b-99", "Offline", "mi355x", "llama2-70b", "", 16, 2)
    assert "offline_mi355x_mn.yaml (<scenario>_<accelerator>_mn" in other.how
    # gpt-oss: the common file's KV cache, the build config's release, the scheme's excluded layers
    oss = conv.amd_src_layout(tree, amd, "8xMI355X", "gpt-oss-120b", "Server", "mi355x", "gpt-oss-120b", "", 8, 1)
    assert (oss.weight_dtype, oss.kv_dtype, oss.engine_version, oss.tp) == ("mxfp4", "fp8", "0.14.0", 1)
    assert "kv_cache_dtype fp8 (harness_llm/common/config.yaml's; the model file sets none)" in oss.how
    assert "mxfp4_fp8 with --exclude_layers *lm_head *self_attn* *router*" in oss.how
    # a partner: the framework's version, AMD's quantization script named as AMD's
    partner = conv.amd_src_layout(tree, dell, "8xMI355X", "gpt-oss-120b", "Server", "mi355x", "gpt-oss-120b",
                                  "vLLM 0.14.0rc3.dev30+gb026cf14e, Pytorch 2.9.1", 8, 1)
    assert partner.engine_version == "0.14.0" and "vLLM 0.14.0rc3.dev30+gb026cf14e (systems json framework)" in \
        partner.how
    assert "AMD's setup/gpt-oss-120b/dataset_and_model/prepare_model.sh" in partner.how and "max_num_seqs 512" in \
        partner.how
    # what is not read is named: a README's config the folder lacks, FP4 on a part without FP4 in calc
    assert "no src/gpt-oss-120b/offline_mi355x_x.yaml" in conv.amd_src_layout(
        tree, dell, "8xMI355X", "gpt-oss-120b", "Offline", "mi355x", "gpt-oss-120b", "", 8, 1)
    assert "quantization 'quark'" in conv.amd_src_layout(
        tree, amd, "8xMI300X", "llama2-70b-99", "Server", "mi300x", "llama2-70b", "", 8, 1)


def test_mlperf_v6_accelerator_names_counts_and_power_caps():
    conv = bench_script("convert_mlperf")
    # the HGX B300 of v6.0 is calc's b300 from v6.0 on only (v5.x's tables are unchanged); GB300 stays b300
    assert conv.accelerator_of("NVIDIA B300-SXM-270GB", "v6.0")[0] == "b300"
    assert conv.accelerator_of("NVIDIA B300-SXM-270GB", "v5.1") == (
        "accelerator 'NVIDIA B300-SXM-270GB' has no calc preset")
    assert conv.accelerator_of("NVIDIA GB300", "v6.0")[0] == "b300"
    # AMD's cluster names count their GPUs in all
    gid, count, said = conv.accelerator_of("AMD Instinct MI355X 288GB HBM3e (x87)", "v6.0")
    assert (gid, count) == ("mi355x", 87) and "(x87)" in said
    assert conv.accelerator_of("AMD Instinct MI355X 288GB HBM3e", "v6.0")[1:] == (None, "")
    # a power-capped part is not the preset's 1,400 W part; a system of several models has no one preset
    cap = conv.accelerator_of("AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)", "v6.0")
    assert isinstance(cap, str) and "capped at 1000 W" in cap and "1,400 W part of calc's mi355x" in cap
    mixed = conv.accelerator_of("AMD Instinct MI300X 192GB HBM3 (x8) and AMD Instinct MI355X 288GB HBM3e (x8)", "v6.0")
    assert isinstance(mixed, str) and "several accelerator models" in mixed
    # the MI350X and the H200 NVL are read since they have presets, from v6.0 on; parts without one are refused
    assert conv.accelerator_of("AMD Instinct MI350X 288GB HBM3e", "v6.0") == ("mi350x", None, "")
    assert conv.accelerator_of("NVIDIA H200-NVL-141GB", "v6.0") == ("h200-nvl", None, "")
    for name in ("NVIDIA RTX PRO 4500 Blackwell", "Intel Arc Pro B60"):
        assert conv.accelerator_of(name, "v6.0") == f"accelerator {name!r} has no calc preset"
    # the B300's 270 GB passes the memory check against the preset's 288 GB; gpt-oss-120b is read from v6.0 on
    assert abs(270e9 / calc.get_accelerator("b300").memory_bytes - 1) <= 0.1
    assert conv.round_benchmarks("v6.0")["gpt-oss-120b"] == "gpt-oss-120b"
    assert "gpt-oss-120b" not in conv.round_benchmarks("v5.1")
    ds = conv.DATASETS["gpt-oss-120b"]
    assert ds["model"] == "gpt-oss-120b" and calc.get_model(ds["model"]).checkpoint_format == "mxfp4"
    assert ds["input_mean"] == pytest.approx(32048077 / 6396, abs=1e-4) and ds["max_output"] == 10240


def _summary(tokens_per_s, samples_per_s, n):
    return (f"Result is : VALID\nSamples per second: {samples_per_s}\nTokens per second: {tokens_per_s}\n"
            f"samples_per_query : {n}\n")


def test_mlperf_v6_results_of_a_counted_cluster_and_a_capped_part_are_placed_or_skipped(tmp_path):
    # end to end: an 87-GPU cluster on 8 GPUs per node x 11 nodes is 87 replicas of TP1 (its README's device count),
    # the power-capped system is skipped with its reason, and a v5.1 reading of the same files knows neither name
    conv = bench_script("convert_mlperf")
    repo = tmp_path / "results"
    amd, mango = "closed/AMD", "closed/Dell_MangoBoost"
    system = lambda name, per_node, nodes, framework: json.dumps(dict(  # noqa: E731
        accelerator_model_name=name, accelerators_per_node=per_node, number_of_nodes=nodes,
        accelerator_memory_capacity="288 GB", framework=framework, system_name="test"))
    llama = dict(model="/model/llama2-70b-chat-hf/fp4_quantized_gptq", kv="  kv_cache_dtype: fp8\n", max_tokens=1024)
    run = "llama2-70b-99/Offline/performance/run_1"
    files = {
        f"{amd}/systems/87xMI355X.json": system("AMD Instinct MI355X 288GB HBM3e (x87)", "8", "11", "PyTorch 2.9.1"),
        f"{amd}/results/87xMI355X/{run}/mlperf_log_summary.txt": _summary(870000.0, 3000.0, 5016000),
        f"{amd}/results/87xMI355X/{run}/mlperf_log_detail.txt":
            ':::MLLOG {"key": "test_datetime", "value": "2026-01-23T10:00:00Z"}\n',
        f"{amd}/results/87xMI355X/llama2-70b-99/Offline/README.md":
            "--config-name offline_mi355x_mn \\\n harness_config.device_count=87 \\\n",
        f"{amd}/src/harness_llm/common/config.yaml": _V6_COMMON,
        f"{amd}/src/llama2-70b-99/offline_mi355x_mn.yaml": _V6_MODEL.format(seqs=3392, sub=19, least=2560, **llama),
        f"{amd}/setup/llama2-70b-99/dataset_and_model/prepare_model.sh": "--quant_scheme w_mxfp4_a_mxfp4\n",
        f"{mango}/systems/capped.json": system("AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)", 8, 1, "ROCm"),
        f"{mango}/results/capped/{run}/mlperf_log_summary.txt": _summary(80000.0, 280.0, 24576),
    }
    git_repo(repo, files)
    tree = conv.GitTree(str(repo))
    means = {f: d["input_mean"] for f, d in conv.DATASETS.items()}
    lines = []
    rows = conv.convert(tree, means, rnd="v6.0", log=lines.append)
    assert len(rows) == 1
    r = rows[0]
    assert (r["accelerator"], r["n_gpus"], r["tp"], r["dp"], r["weight_dtype"], r["kv_dtype"]) == (
        "mi355x", 87, 1, 87, "mxfp4", "fp8")
    assert r["value"] == 870000.0 and r["output_len"] == 290 and r["id"].startswith("mlperf60-closed-amd-87xmi355x")
    assert "87 GPUs in all by the name's '(x87)'), of the 8 per node x 11 nodes = 88 installed" in r["notes"]
    assert "measured 2026-01-23" in r["notes"] and "eager" not in r["notes"].lower()
    skipped = [x for x in lines if x.startswith("skip") and "Dell_MangoBoost/capped" in x]
    assert len(skipped) == 1 and "capped at 1000 W, not the 1,400 W part" in skipped[0]
    # v5.1 reads neither name: the count and the cap are v6.0's
    old = []
    assert conv.convert(tree, means, rnd="v5.1", log=old.append) == []
    assert any("87xMI355X" in x and "has no calc preset" in x for x in old)


_NV_HEAD = """import code.common.constants as C
import code.llmlib.fields as llm_fields
import code.fields.models as model_fields
"""


def test_mlperf_v6_nvidia_layouts_from_scaleout_atomic_systems_and_speculative_decoding(tmp_path):
    # NVIDIA's v6.0 harness: a harness system's config that states no layout takes the engine of the atomic system
    # scaleout/REPRODUCE.md runs for it (its TP, batch and precision; the multiplicity its replicas); a disaggregated
    # command or a Dynamo cluster is skipped with its reason; MTP speculative decoding and attention-DP balancing
    # are written in the words calc's note readers take; a stray character before the first import is dropped
    conv = bench_script("convert_mlperf")
    from calc.speculative_serving import speculative_from_notes
    repo = tmp_path / "results"
    nv = "closed/NVIDIA"
    key = "C.WorkloadSetting(C.HarnessType.Custom, C.AccuracyTarget(0.99), C.PowerSetting.MaxP)"
    files = {
        f"{nv}/configs/GB200-NVL72_GB200-186GB_aarch64x72/Offline/llama2-70b.py": _NV_HEAD + (
            "cfg = {model_fields.precision: 'fp4', llm_fields.trtllm_checkpoint_flags: {'kv_cache_dtype': 'fp8'}}\n"
            f"EXPORTS = {{{key}: cfg}}\n"),
        f"{nv}/configs/GB200-NVL72_GB200-186GB_aarch64x1/Offline/llama2-70b.py": _NV_HEAD + (
            "cfg = {model_fields.precision: 'fp4', llm_fields.tensor_parallelism: 1,"
            " llm_fields.pipeline_parallelism: 1, model_fields.gpu_batch_size: {'llama2-70b': 2048},"
            " llm_fields.trtllm_checkpoint_flags: {'kv_cache_dtype': 'fp8'}}\n"
            f"EXPORTS = {{{key}: cfg}}\n"),
        f"{nv}/configs/GB200-NVL72_GB200-186GB_aarch64x72/Server/llama2-70b.py": _NV_HEAD + (
            f"cfg = {{model_fields.precision: 'fp4'}}\nEXPORTS = {{{key}: cfg}}\n"),
        f"{nv}/configs/GB200-NVL72_GB200-186GB_aarch64x72/Interactive/deepseek-r1.py": _NV_HEAD + (
            "cfg = {model_fields.precision: 'fp4', llm_fields.dynamo_cluster: {'num_prefill_workers': 2,"
            " 'num_decode_workers': 4, 'prefill': {'system': 'X_aarch64x4'}, 'decode': {'system': 'X_aarch64x16'}}}\n"
            f"EXPORTS = {{{key}: cfg}}\n"),
        f"{nv}/configs/B300-SXM-270GBx8/Interactive/deepseek-r1.py": "~" + _NV_HEAD + (
            "cfg = {model_fields.precision: 'fp4', llm_fields.tensor_parallelism: 8,"
            " llm_fields.pipeline_parallelism: 1, llm_fields.moe_expert_parallelism: 8,"
            " llm_fields.trtllm_build_flags: {'enable_attention_dp': True},"
            " llm_fields.trtllm_runtime_flags: {'adp_balancing_timeout_iters': 6,"
            " 'speculative_decoding': {'decoding_type': 'MTP', 'num_nextn_predict_layers': 3,"
            " 'max_total_draft_tokens': 3}}, llm_fields.trtllm_checkpoint_flags: {'kv_cache_dtype': 'fp8'}}\n"
            f"EXPORTS = {{{key}: cfg}}\n"),
        f"{nv}/scaleout/REPRODUCE.md": """# Reproduction
## Llama2-70b
### GB200x72
```bash
# Offline
./scaleout/run_scaleout.sh \\
    --stage all \\
    --atomic-system GB200-NVL72_GB200-186GB_aarch64x1 \\
    --gpus-per-node 4 \\
    --dp-multiplicity 72 \\
    --run-args "--benchmarks=llama2-70b --scenarios=Offline --core_type=trtllm_endpoint"

# Server (disaggregated, run from closed/NVIDIA/scripts/slurm_llm):
./disagg_trtllm_llama2_70b/llama2_70b_disagg.sh \\
    --scenario Server \\
    --ctx-num-servers 28 --gen-num-servers 44 --num-servers 9
```
""",
    }
    git_repo(repo, files)
    tree = conv.GitTree(str(repo))
    gb = "GB200-NVL72_GB200-186GB_aarch64x72_TRT"
    off = conv.exports_layout(tree, nv, gb, "llama2-70b-99", "Offline", 72, "gb200", "llama2-70b", v6=True,
                              framework="TensorRT 10.14, TensorRT-LLM feat/1.2-mlpinf")
    assert (off.tp, off.pp, off.ep, off.weight_dtype, off.kv_dtype) == (1, 1, 1, "nvfp4", "fp8")
    assert "configs/GB200-NVL72_GB200-186GB_aarch64x1/Offline/llama2-70b.py" in off.how
    assert "--dp-multiplicity 72" in off.how and "gpu_batch_size 2048 per engine" in off.how
    assert "TensorRT-LLM feat/1.2-mlpinf (systems json framework" in off.how
    # the same config read as v5.x states no layout; a multiplicity that is not the system's GPUs is refused
    assert "not stated" in conv.exports_layout(tree, nv, gb, "llama2-70b-99", "Offline", 72, "gb200", "llama2-70b")
    assert "are not the system's 64" in conv.exports_layout(tree, nv, gb, "llama2-70b-99", "Offline", 64, "gb200",
                                                             "llama2-70b", v6=True)
    server = conv.exports_layout(tree, nv, gb, "llama2-70b-99", "Server", 72, "gb200", "llama2-70b", v6=True)
    assert isinstance(server, str) and "runs it disaggregated" in server and "llama2_70b_disagg.sh" in server
    dyn = conv.exports_layout(tree, nv, gb, "deepseek-r1", "Interactive", 72, "gb200", "deepseek-r1", v6=True)
    assert isinstance(dyn, str) and "2 prefill worker(s) of X_aarch64x4; 4 decode worker(s) of X_aarch64x16" in dyn
    mtp = conv.exports_layout(tree, nv, "B300-SXM-270GBx8_TRT", "deepseek-r1", "Interactive", 8, "b300",
                              "deepseek-r1", v6=True)
    assert (mtp.tp, mtp.ep, mtp.weight_dtype) == (1, 8, "nvfp4")  # attention DP: TP1 x 8 attention replicas
    assert "a stray '~' before the first line's import dropped" in mtp.how
    assert speculative_from_notes(mtp.how) == {"method": "mtp", "draft_tokens": 3}
    assert re.search(r"enable_balance, timeout_iters 6\b", mtp.how)
    # before v6.0 the stray character leaves the file unread
    assert "EXPORTS not readable" in conv.exports_layout(tree, nv, "B300-SXM-270GBx8_TRT", "deepseek-r1",
                                                          "Interactive", 8, "b300", "deepseek-r1")
