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
from bench_script import bench_script
from calc.measurements import (CITED_COLUMNS, COLUMNS, DATA_DIR, METRICS, load_cited, load_measurements,
                               load_sources, measurement_bound)

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
    assert tuple(CITED.columns) == CITED_COLUMNS and "value" not in CITED.columns
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
    # each is the same row as calc's key would give: stored under that key, predicted the same
    row = list(GOOD)
    row[COLUMNS.index(column)] = written
    df = load_measurements(_user_file(tmp_path, [row]))
    assert df.loc[0, column] == stored
    row[COLUMNS.index(column)] = stored
    assert df.equals(load_measurements(_user_file(tmp_path, [row])))


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


def test_a_tpot_bound_decodes_no_more_sequences_than_fit_in_memory():
    # Llama-3-8B bf16 on one H100 at 512 clients, 8,192 in and 1,024 out: decode context 8,192 + 512 = 8,704
    # tokens x 131,072 B = 1,140,850,688 B of cache per sequence; the driver's 85,520,809,984 B less the
    # 16,060,522,496 B of weights leave 69,460,287,488 B: 60 sequences (60.9). The engine decodes at most those
    # 60 at once (the others wait), so the bound is the step at batch 60, not at 512.
    from calc.measurements import measurement_bound
    row = dict(model="llama-3-8b", accelerator="h100-sxm", weight_dtype="bf16", kv_dtype="bf16", tp=1, pp=1, ep=1,
               n_gpus=1, input_len=8192, output_len=1024, concurrency=512, metric="tpot_ms", value=50.0)
    held = 69_460_287_488 // 1_140_850_688
    assert held == 60
    b = measurement_bound(row)
    step = calc.decode_step_time(calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm"), held, 8704)
    assert b.bound == pytest.approx(step.total_s * 1e3, rel=1e-12)
    assert "batch 60 (of 512 in service" in b.how
    # at 32 clients every one fits: the step at 32
    small = measurement_bound(dict(row, concurrency=32))
    assert "batch 32," in small.how and small.bound < b.bound


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
    import subprocess
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
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "results"]):
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)
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
    # per scheduler call; the eager runs say so (the serving model leaves them out), the others never say "eager"
    amd = HOLDOUT[HOLDOUT["notes"].str.contains("AMD's harness_llm")]
    assert len(amd) == 121 and set(amd["accelerator"]) == {"mi300x", "mi325x", "mi355x"}
    assert amd["notes"].str.contains(r"--num-scheduler-steps \d+").all() and (amd["engine"] == "vllm").all()
    eager = amd["notes"].str.contains("enforce_eager True")
    assert eager.sum() == 108 and not amd.loc[~eager, "notes"].str.lower().str.contains("eager").any()
