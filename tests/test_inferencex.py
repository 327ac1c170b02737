"""InferenceX JSON in its four shapes -> measurement rows (calc/inferencex.py).

Inputs: tests/data/inferencex_sample.json (aggregated results, utils/process_result.py),
tests/data/inferencex_dashboard_sample.json (dashboard records in the schema of inferencex.com's benchmark
API) and tests/data/inferencex_runner_sample.json (together_runner result files); every value in them is
made up for the tests, in the fields and units of each shape. Expected values are derived by hand in the
comments: seconds * 1000 = ms; a runner's server throughput / tp = per GPU.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from calc import comparison, inferencex
from calc.measurements import COLUMNS, PUBLISHED_MODEL

DATA = Path(__file__).resolve().parent / "data"


def _parse(name):
    return inferencex.parse_inferencex((DATA / name).read_bytes(), name)


def _value(df, metric, statistic):
    hit = df[(df.metric == metric) & (df.statistic == statistic)]
    assert len(hit) == 1, (metric, statistic, len(hit))
    return float(hit["value"].iloc[0])


def test_dashboard_records_seconds_become_ms_and_per_gpu_stays_per_gpu():
    df, skipped = _parse("inferencex_dashboard_sample.json")
    assert list(df.columns) == list(COLUMNS) + [PUBLISHED_MODEL]
    plain = df[(df.model == "deepseek-v3") & ~df.id.str.contains("-mtp-")]
    assert set(plain[PUBLISHED_MODEL]) == {"dsr1"}  # the record's own model prefix, computed as DeepSeek-V3
    # object 1: dsr1 -> deepseek-v3, h200, sglang, decode_tp 8 -> tp 8 on 8 GPUs, conc 16
    assert set(plain.accelerator) == {"h200"} and set(plain.engine) == {"sglang"}
    assert (plain.tp == 8).all() and (plain.n_gpus == 8).all() and (plain.ep == 1).all()
    # InferenceX draws lengths uniformly from 0.8x to 1x the nominal 1024: the rows hold the means, 0.9 x 1024 = 921.6
    assert (plain.concurrency == 16).all() and (plain.input_len == 922).all() and (plain.output_len == 922).all()
    assert "mean lengths of the nominal 1024/1024" in plain.notes.iloc[0]
    assert _value(plain, "tpot_ms", "mean") == pytest.approx(12.3)  # 0.0123 s
    assert _value(plain, "tpot_ms", "median") == pytest.approx(12.0)  # 0.012 s
    assert _value(plain, "tpot_ms", "p99") == pytest.approx(20.0)  # 0.02 s
    assert _value(plain, "ttft_ms", "median") == pytest.approx(250.0)  # 0.25 s
    assert _value(plain, "e2e_ms", "mean") == pytest.approx(12900.0)  # 12.9 s
    assert _value(plain, "output_tok_per_s_per_gpu", "mean") == 122.0  # already per GPU
    assert _value(plain, "total_tok_per_s_per_gpu", "mean") == 240.0
    # input_tput_per_gpu, *_intvty (1000 / TPOT) and ITL (InferenceX's ITL times stream chunks) give no row
    assert len(plain) == 7 and "itl_ms" not in set(df.metric)
    # the engine version from the image tag lmsysorg/sglang:v0.5.1-cu126; the run's date and URL in the notes
    assert set(plain.engine_version) == {"0.5.1"}
    assert plain.notes.iloc[0].count("2025-11-02") == 1 and "actions/runs/1" in plain.notes.iloc[0]


def test_dashboard_runs_are_ten_rounds_whose_first_is_a_burst():
    from calc.serving_fit import prepare_rows
    df, _ = _parse("inferencex_dashboard_sample.json")
    plain = df[(df.model == "deepseek-v3") & ~df.id.str.contains("-mtp-")]
    # --num-prompts CONC x 10 at --max-concurrency CONC: 10 rounds of the 16 clients
    assert plain.notes.str.contains("10 rounds of C requests").all()
    rows, comps, _ = prepare_rows(plain[plain.metric == "tpot_ms"])
    by_stat = dict(zip(rows["statistic"], rows.index))
    mean, median = by_stat["mean"], by_stat["median"]
    # the mean TPOT is the first round's burst and the steady state after it; a median leaves the first round aside.
    # The burst: 16 prompts of 922 tokens = 14,752 tokens in K = 2 steps of SGLang's 8,192-token budget (an H200),
    # so a request waits for 16 x (K + 1) / (2 K) = 12 prompts, its own included
    assert rows["rounds"][mean] == 10 and rows["npts"][mean] == 2 and rows["lockstep"][mean] == 0
    assert rows["rounds"][median] == 0 and rows["npts"][median] == 1
    first = int(rows["npts"][:mean].sum())
    assert comps["burst"][first] == 1.0 and comps["pf_n"][first] == pytest.approx(12.0)
    assert comps["burst"][first + 1] == 0.0 and comps["pf_n"][first + 1] == 1.0


def test_dashboard_records_spec_decoding_names_and_skips():
    df, skipped = _parse("inferencex_dashboard_sample.json")
    # object 2: the same configuration with MTP: its own rows, named in id and notes
    mtp = df[df.id.str.contains("-mtp-")]
    assert len(mtp) == 3 and mtp.notes.str.contains(r"speculative decoding on \(mtp\)").all()
    assert _value(mtp, "tpot_ms", "mean") == pytest.approx(8.0)  # 0.008 s
    # the comparison predicts them with speculative decoding: MTP with the default 3 drafts (the notes name no number)
    # at the golden curves' median acceptance length, and says so; their TPOT below the plain run's estimate
    table = comparison.compare_rows(mtp)
    assert table["predicted"].notna().all() and (table["note"] == "").all()
    assert table["from_notes"].str.contains("speculative decoding").all()
    assert table["from_notes"].str.contains("3 draft token").all()
    plain = comparison.compare_rows(df[(df.model == "deepseek-v3") & ~df.id.str.contains("-mtp-")])
    tpot = lambda t: float(t.loc[t["metric"] == "tpot_ms", "predicted"].iloc[0])  # noqa: E731
    assert tpot(table) < tpot(plain)
    # and the chart keeps the MTP run a point of its own: 183 tok/s per GPU at 1000 / 8 ms = 125 tok/s per user
    both = df[df.model == "deepseek-v3"]
    points = comparison.measured_points(both).sort_values("tokens_per_s_per_gpu")
    assert list(points["tokens_per_s_per_gpu"]) == [122.0, 183.0]
    assert list(points["tokens_per_s_per_user"]) == pytest.approx([1000 / 12.3, 1000 / 8.0])
    # object 4: gptoss -> gpt-oss-120b on mi355x at tp 1, no image (engine version unknown), no output tput
    oss = df[df.model == "gpt-oss-120b"]
    assert set(oss.accelerator) == {"mi355x"} and set(oss.engine_version) == {""} and (oss.n_gpus == 1).all()
    assert set(oss.metric) == {"ttft_ms", "tpot_ms", "total_tok_per_s_per_gpu"}
    assert _value(oss, "tpot_ms", "mean") == pytest.approx(10.5)  # 0.0105 s
    # object 5: llama70b (Llama-3.3-70B-Instruct) -> llama-3.1-70b on an H100 runner -> h100-sxm, TRT-LLM 1.1.0rc2
    llama = df[df.model == "llama-3.1-70b"]
    assert set(llama.accelerator) == {"h100-sxm"} and set(llama.engine) == {"trtllm"}
    assert set(llama.engine_version) == {"1.1.0rc2"} and (llama.tp == 4).all() and (llama.input_len == 7373).all()  # 0.9 x 8192
    assert _value(llama, "tpot_ms", "median") == pytest.approx(21.0)
    # object 7: dsv4 -> deepseek-v4-pro (InferenceX's configs name deepseek-ai/DeepSeek-V4-Pro) on b200, vLLM 0.16.0,
    # tp 8, fp8; mean TPOT 0.015 s = 15 ms, 60 output tok/s per GPU
    v4 = df[df.model == "deepseek-v4-pro"]
    assert set(v4.accelerator) == {"b200"} and set(v4.engine) == {"vllm"} and (v4.tp == 8).all()
    assert set(v4.weight_dtype) == {"fp8"} and set(v4.engine_version) == {"0.16.0"}
    assert _value(v4, "tpot_ms", "mean") == pytest.approx(15.0)
    assert _value(v4, "output_tok_per_s_per_gpu", "mean") == 60.0
    # objects 3 (same configuration and concurrency as object 1, older) and 6 (multi-node) skipped
    assert len(skipped) == 2
    assert skipped[0].startswith("object 3:") and "same configuration and concurrency as object 1" in skipped[0]
    assert skipped[1].startswith("object 6:") and "multi-node / disaggregated" in skipped[1]
    assert df.id.is_unique


def test_dashboard_rows_compare_against_the_serving_model_and_the_bound():
    df, _ = _parse("inferencex_dashboard_sample.json")
    plain = df[(df.model == "deepseek-v3") & ~df.id.str.contains("-mtp-")]
    table = comparison.compare_rows(plain)
    assert table["bound"].notna().all()
    # mean/median rows are predicted, and so is the p99 TPOT row (calc.serving_tails), at or above the same run's
    # mean TPOT's prediction
    p99 = table[table.statistic == "p99"]
    mean = table[(table.metric == "tpot_ms") & (table.statistic == "mean")]
    assert len(p99) == 1 and p99["predicted"].notna().all() and not p99["note"].iat[0]
    assert p99["predicted"].iat[0] >= mean["predicted"].iat[0]
    assert table[table.statistic != "p99"]["predicted"].notna().any()
    points = comparison.measured_points(plain)
    # one point: 122 tok/s per GPU at 1000 / 12.3 ms = 81.30 tok/s per user (the mean TPOT first)
    assert len(points) == 1
    assert points["tokens_per_s_per_gpu"].iloc[0] == 122.0
    assert points["tokens_per_s_per_user"].iloc[0] == pytest.approx(1000 / 12.3)


def test_runner_results_ms_stay_ms_and_server_throughput_is_divided_by_tp():
    df, skipped = _parse("inferencex_runner_sample.json")
    assert skipped == []
    dsr1 = df[df.model == "deepseek-v3"]  # nvidia/DeepSeek-R1-0528-FP4
    assert set(dsr1.accelerator) == {"b200"} and set(dsr1.weight_dtype) == {"nvfp4"}  # precision fp4, nvidia/
    assert (dsr1.tp == 8).all() and (dsr1.ep == 8).all() and (dsr1.n_gpus == 8).all()
    assert _value(dsr1, "output_tok_per_s_per_gpu", "mean") == pytest.approx(350.0)  # 2800 / 8
    assert _value(dsr1, "total_tok_per_s_per_gpu", "mean") == pytest.approx(750.0)  # 6000 / 8
    assert _value(dsr1, "requests_per_s", "mean") == pytest.approx(5.5)  # whole server
    assert _value(dsr1, "tpot_ms", "median") == pytest.approx(21.0)  # already ms
    assert _value(dsr1, "tpot_ms", "p99") == pytest.approx(28.0)
    assert _value(dsr1, "ttft_ms", "median") == pytest.approx(480.0)
    assert _value(dsr1, "e2e_ms", "median") == pytest.approx(9800.0)
    assert _value(dsr1, "e2e_ms", "p99") == pytest.approx(23000.0)
    assert len(dsr1) == 9  # successful_requests is a count, not a metric; no ITL row
    assert set(dsr1.engine_version) == {"0.5.3"} and "2026-01-05T10:00:00" in dsr1.notes.iloc[0]
    # gpt-oss on 4 of the node's 8 GPUs (gpu.n_gpus counts all 8): per GPU = 14000 / 4 = 3500, not / 8 = 1750;
    # ep 0 (no expert parallelism) -> 1
    oss = df[df.model == "gpt-oss-120b"]
    assert (oss.tp == 4).all() and (oss.n_gpus == 4).all() and (oss.ep == 1).all()
    assert _value(oss, "total_tok_per_s_per_gpu", "mean") == pytest.approx(3500.0)
    assert _value(oss, "output_tok_per_s_per_gpu", "mean") == pytest.approx(850.0)  # 3400 / 4
    assert set(oss.engine) == {"vllm"} and set(oss.engine_version) == {"0.11.0"}
    assert set(oss.weight_dtype) == {"mxfp4"}  # gpt-oss is released in MXFP4
    table = comparison.compare_rows(df)
    assert table["bound"].notna().all()
    # with fp4 read as a block format the serving model predicts the mean/median rows too
    assert table[table.statistic != "p99"]["predicted"].notna().all()


def test_aggregated_results_keep_reading_with_the_version_from_the_image():
    df, skipped = _parse("inferencex_sample.json")
    dsr1 = df[df.model == "deepseek-v3"]
    assert _value(dsr1, "tpot_ms", "mean") == pytest.approx(16.0)  # 0.016 s
    assert _value(dsr1, "ttft_ms", "p99") == pytest.approx(600.0)  # 0.6 s
    assert set(dsr1.engine_version) == {"0.5.2"}  # lmsysorg/sglang:v0.5.2-cu126
    assert set(df[df.model == "gpt-oss-120b"].engine_version) == {""}  # rocm/vllm:latest
    assert len(skipped) == 1 and "multi-node" in skipped[0]


def test_a_single_object_of_each_shape():
    rec = json.loads((DATA / "inferencex_dashboard_sample.json").read_text())[0]
    df, _ = inferencex.parse_inferencex(json.dumps(rec))
    assert _value(df, "tpot_ms", "mean") == pytest.approx(12.3)
    run = json.loads((DATA / "inferencex_runner_sample.json").read_text())[1]
    df, _ = inferencex.parse_inferencex(json.dumps(run).encode())
    assert _value(df, "ttft_ms", "median") == pytest.approx(26.0)


@pytest.mark.parametrize("name, preset", [
    ("dsr1", "deepseek-v3"), ("gptoss", "gpt-oss-120b"), ("llama70b", "llama-3.1-70b"), ("70b", "llama-3.1-70b"),
    ("kimik2.5", "kimi-k2"), ("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.1-70b"),
    ("amd/DeepSeek-R1-0528-MXFP4", "deepseek-v3"), ("nvidia/DeepSeek-R1-0528-FP4", "deepseek-v3"),
    ("openai/gpt-oss-120b", "gpt-oss-120b"),
    # InferenceX's 2026 models (configs/*.yaml at 843c6254): GLM-5 and GLM-5.1 share GLM-5's config.json shapes,
    # MiniMax-M2.5, Qwen3.5-397B-A17B, DeepSeek-V4-Pro (dsv4: every config names deepseek-ai/DeepSeek-V4-Pro) and
    # MiniMax-M3 (minimaxm3: MiniMaxAI/MiniMax-M3-MXFP8) have presets; GLM-5.2 (a shared indexer) does not
    ("glm5", "glm-5"), ("glm5.1", "glm-5"), ("zai-org/GLM-5-FP8", "glm-5"), ("nvidia/GLM-5.1-NVFP4", "glm-5"),
    ("minimaxm2.5", "minimax-m2.5"), ("amd/MiniMax-M2.5-MXFP4", "minimax-m2.5"),
    ("qwen3.5", "qwen3.5-397b-a17b"), ("Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5-397b-a17b"),
    ("nvidia/Qwen3.5-397B-A17B-NVFP4-V2", "qwen3.5-397b-a17b"),
    ("dsv4", "deepseek-v4-pro"), ("deepseek-ai/DeepSeek-V4-Pro", "deepseek-v4-pro"),
    ("nvidia/DeepSeek-V4-Pro-NVFP4", "deepseek-v4-pro"), ("glm5.2", None), ("nvidia/GLM-5.2-NVFP4", None),
    ("minimaxm3", "minimax-m3"), ("MiniMaxAI/MiniMax-M3-MXFP8", "minimax-m3"),
    ("nvidia/MiniMax-M3-NVFP4", "minimax-m3"), ("amd/MiniMax-M3-MXFP4", "minimax-m3"),
])
def test_model_names(name, preset):
    assert inferencex.match_model(name) == preset


@pytest.mark.parametrize("hw, preset", [("h100", "h100-sxm"), ("h200", "h200"), ("b200-nvd", "b200"),
                                        ("mi355x", "mi355x"), ("gb200", "gb200"), ("tpu-v9", None)])
def test_hardware_names(hw, preset):
    assert inferencex.match_accelerator(hw) == preset


@pytest.mark.parametrize("precision, checkpoint, accelerator, dtype", [
    ("fp4", "nvidia/DeepSeek-R1-0528-FP4", "b200", "nvfp4"), ("fp4", "amd/DeepSeek-R1-0528-MXFP4", "mi355x", "mxfp4"),
    ("fp4", "openai/gpt-oss-120b", "b200", "mxfp4"), ("fp4", "gptoss", "h200", "mxfp4"),
    ("fp4", "dsr1", "mi355x", "mxfp4"), ("fp4", "dsr1", "gb200", "nvfp4"), ("FP8", "dsr1", "h200", "fp8"),
    ("bf16", "llama70b", "h100-sxm", "bf16"),
    # DeepSeek-V4 ships MXFP4 experts beside fp8 blocks (config.json expert_dtype fp4): InferenceX's dsv4 "fp4" runs
    # serve that checkpoint on NVIDIA and AMD alike; NVIDIA's copy has NVFP4 experts and the same fp8 layers
    ("fp4", "dsv4", "b200", "mxfp4-fp8"), ("fp4", "deepseek-ai/DeepSeek-V4-Pro", "mi355x", "mxfp4-fp8"),
    ("fp4", "nvidia/DeepSeek-V4-Pro-NVFP4", "b200", "nvfp4-fp8"), ("fp8", "dsv4", "h200", "fp8"),
])
def test_fp4_is_read_as_the_block_format_of_checkpoint_or_maker(precision, checkpoint, accelerator, dtype):
    assert inferencex.weight_dtype(precision, checkpoint, accelerator) == dtype


@pytest.mark.parametrize("image, version", [
    ("vllm/vllm-openai:v0.22.0", "0.22.0"), ("lmsysorg/sglang:v0.5.9-rocm700-mi35x", "0.5.9"),
    ("nvcr.io#nvidia/tensorrt-llm/release:1.1.0rc2.post2", "1.1.0rc2.post2"), ("lmsysorg/sglang:dev-cu13", ""),
    ("rocm/vllm:latest", ""), (None, ""), ("rocm/vllm-dev:rocm7.0.0_vllm_0.10.1_20250909", ""),
])
def test_engine_version_from_the_image_tag(image, version):
    assert inferencex.engine_version(image) == version


def _dash(**change):
    rec = json.loads((DATA / "inferencex_dashboard_sample.json").read_text())[0]
    rec.update(change)
    return json.dumps([rec])


def _runner(**change):
    rec = json.loads((DATA / "inferencex_runner_sample.json").read_text())[0]
    rec.update(change)
    return json.dumps(rec)


def _without(text, field):
    rec = json.loads(text)
    (rec[0] if isinstance(rec, list) else rec).pop(field)
    return json.dumps(rec)


@pytest.mark.parametrize("text, message", [
    (_without(_dash(), "decode_tp"), r"r.json object 1: missing field decode_tp \(an InferenceX dashboard record"),
    (_without(_dash(), "isl"), "r.json object 1: missing field isl"),
    (_dash(metrics={"mean_tpot": "fast"}), r"object 1: field 'mean_tpot' of metrics must be a number, got 'fast'"),
    (_dash(metrics=[1, 2]), "object 1: field 'metrics' must be an object"),
    (_dash(conc=0), "field 'conc' must be a positive whole number"),
    (_dash(decode_tp=2.5), "field 'decode_tp' must be a positive whole number"),
    (_dash(precision="fp5"), "column 'weight_dtype'"),
    (_without(_runner(), "tp"), r"missing field tp \(an InferenceX runner result"),
    (_runner(ep=-1), "field 'ep' must be a non-negative whole number"),
    (_runner(metrics={"median_ttft_ms": None, "total_token_throughput": True}),
     "field 'total_token_throughput' of metrics must be a number"),
    (_dash(model="glm5.2"),
     r"no single-node result with a positive value \(object 1: no model preset matches 'glm5.2'\)"),
    (_dash(hardware="tpu-v9"), "no accelerator preset matches runner 'tpu-v9'"),
    (_dash(is_multinode=True), "multi-node / disaggregated"),
    (_dash(metrics={"mean_tpot": 0.0}), "object 1: no metric with a positive value"),
    # a raw benchmark_serving result (the shape of experimental/token_position_decode_slo/*/results/*.json)
    (json.dumps({"date": "20260101-000000", "model_id": "zai-org/GLM-5-FP8", "max_concurrency": 16,
                 "output_throughput": 400.0, "median_tpot": 0.03}), "a raw benchmark_serving result"),
])
def test_malformed_files_name_object_and_field(text, message):
    with pytest.raises(ValueError, match=message):
        inferencex.parse_inferencex(text, "r.json")


def test_inferencex_sglang_dsr1_runs_on_b200_keep_the_recv_interval_their_script_launched_with():
    # InferenceX's dsr1_fp4_b200.sh: --scheduler-recv-interval 30 at a concurrency of 16 or more, 10 below, 1 with DP
    # attention; the H200 script sets none. The row's notes carry the flag, which the fit reads as the poll interval
    from calc.serving_fit import _row_setup
    from calc.serving_params import load_serving_params
    cases = [(dict(hardware="b200", precision="fp4", conc=32), 30), (dict(hardware="b200", precision="fp4", conc=8), 10),
             (dict(hardware="b200", precision="fp4", conc=32, decode_dp_attention=True), 1),
             (dict(hardware="b300", precision="fp8", conc=64, decode_tp=4), 10), (dict(hardware="h200", conc=32), None)]
    for change, recv in cases:
        df, _ = inferencex.parse_inferencex(_dash(**change), "x.json")
        row = next(df.itertuples(index=False))
        settings = _row_setup(row, load_serving_params())[4]
        assert settings.get("recv_interval") == recv, change
        assert ("--scheduler-recv-interval" in row.notes) == (recv is not None)
    assert inferencex.launch_recv_interval("deepseek-v3", "b200", "vllm", "fp4", 8, 32, False) is None


def test_dp_attention_records_become_attention_data_parallel_layouts_with_the_balance_wait_noted():
    # decode_tp 8 with decode_dp_attention: attention in 8 ranks of TP1, experts over the 8 GPUs (tp 1, ep 8, dp 8)
    df, _ = inferencex.parse_inferencex(_dash(framework="trt", hardware="b200", precision="fp4", decode_tp=8,
                                              decode_ep=8, decode_dp_attention=True, conc=128), "x.json")
    row = df.iloc[0]
    assert (row.tp, row.ep, row.dp, row.n_gpus) == (1, 8, 8, 8) and "-dpa-" in row.id
    assert "timeout_iters 60" in row.notes  # TensorRT-LLM's ADP balance, as InferenceX's trt scripts set it
    from calc.serving_fit import _row_setup
    from calc.serving_params import load_serving_params
    layout, settings = _row_setup(next(df.itertuples(index=False)), load_serving_params())[2::2]
    assert layout.attention_dp == 8 and settings["adp_balance_timeout_iters"] == 60


def test_configurations_the_model_predicts_come_first_and_labels_say_dp_and_speculative_decoding():
    # an MTP (speculative) configuration with more rows, a plain DP-attention one with fewer: the plain one first
    # (the configurations of plain rows sort first); its label names attention DP8, the other's its MTP
    mtp, _ = inferencex.parse_inferencex(_dash(spec_method="mtp", conc=8), "a.json")
    dpa, _ = inferencex.parse_inferencex(_dash(framework="trt", hardware="b200", precision="fp4", decode_tp=8,
                                               decode_ep=8, decode_dp_attention=True, conc=64), "b.json")
    mtp2, _ = inferencex.parse_inferencex(_dash(spec_method="mtp", conc=16), "c.json")
    import pandas as pd
    both = pd.concat([mtp, mtp2, dpa], ignore_index=True)
    configs = comparison.configurations(both)
    assert len(mtp) + len(mtp2) > len(dpa)
    assert list(configs["plain"]) == [len(dpa), 0]
    first, second = (comparison.config_label(c) for _, c in configs.iterrows())
    assert first.startswith("TP1 PP1 EP8 on 8 GPUs, attention DP8") and "speculative" not in first
    assert second.endswith(", speculative decoding")


def _agg_2025(**change):
    # an object of InferenceMAX's aggregated results of 2025 (official_data/agg_*.json): no isl, osl,
    # spec_decoding, disagg, is_multinode or image; mtp "on" / "off" on some; values made up for the test
    rec = {"hw": "b200-trt", "tp": 8, "ep": 1, "dp_attention": "false", "conc": 4,
           "model": "nvidia/DeepSeek-R1-0528-FP4-V2", "framework": "trt", "precision": "fp4",
           "tput_per_gpu": 132.0, "output_tput_per_gpu": 66.0, "input_tput_per_gpu": 66.0,
           "mean_ttft": 0.1, "median_ttft": 0.08, "p99_ttft": 0.3, "mean_tpot": 0.0073, "median_tpot": 0.0072,
           "mean_e2el": 7.0}
    rec.update(change)
    return rec


def test_inferencemax_2025_results_take_lengths_from_the_file_name_and_a_given_date():
    text = json.dumps([_agg_2025(), _agg_2025(conc=8, mtp="on"),
                       _agg_2025(hw="gb200", framework="dynamo-trtllm", tp=72, mtp="off")])
    df, skipped = inferencex.parse_inferencex(text, "agg_dsr1_1k8k.json", run_date="2025-11-13")
    # "1k8k": 1 x 1,024 in, 8 x 1,024 out; InferenceX's random lengths average 0.9 of them: 921.6 -> 922, 7372.8 -> 7373
    assert set(df.input_len) == {922} and set(df.output_len) == {7373}
    assert _value(df[df.concurrency == 4], "tpot_ms", "mean") == pytest.approx(7.3)  # 0.0073 s
    # mtp "on" is speculative decoding, named as the fit leaves it out; dynamo on GB200 is a disaggregated run
    assert "speculative decoding on (mtp)" in df[df.concurrency == 8].notes.iloc[0]
    assert "speculative decoding" not in df[df.concurrency == 4].notes.iloc[0]
    assert len(skipped) == 1 and "multi-node / disaggregated" in skipped[0]
    # the date given with the file is the rows' run date, which the fit reads (serving_fit._RUN_DATE)
    from calc.serving_fit import _RUN_DATE
    hit = _RUN_DATE.search(df.notes.iloc[0].lower())
    assert hit and hit.groups() == ("2025", "11", "13")
    assert "from the file's name" in df.notes.iloc[0]
    # without a length in its name the file is refused, with a message that says where the lengths go
    with pytest.raises(ValueError, match=r"results.json object 1: an InferenceMAX aggregated result of 2025, which "
                                         r"states no lengths \(isl, osl\): .*agg_gptoss_1k8k.json"):
        inferencex.parse_inferencex(json.dumps([_agg_2025()]), "results.json")
    with pytest.raises(ValueError, match="not a date"):
        inferencex.parse_inferencex(text, "agg_dsr1_1k8k.json", run_date="13/11/2025")


@pytest.mark.parametrize("name, lengths", [
    ("agg_gptoss_1k1k.json", (1024, 1024)), ("official_data__agg_dsr1_8k1k__94f94750.json", (8192, 1024)),
    ("agg_dsr1_1k8k_fp4_sglang_tp4_conc64_b200.json", (1024, 8192)), ("results.json", None),
    ("a_1k1k_b_8k1k.json", None),   # two pairs: ambiguous
    ("agg_h100k1k.json", None),     # not a token of its own
])
def test_lengths_from_name(name, lengths):
    assert inferencex.lengths_from_name(name) == lengths
