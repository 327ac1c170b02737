"""Tests of bench/convert_gpustack.py (GPUStack's Performance Lab pages -> held-out serving rows) and of the rows it
shipped in calc/data/serving_holdout.csv.

Oracles: hand-derived readings of small synthetic pages in a throwaway git repository (mean input = total input
tokens / requests, rounded half up; the mode a block's client lines imply), the shipped files' own counts, and,
where a copy of github.com/gpustack/gpustack is named (GPUSTACK_REPO), the hand-transcribed rows of seven pages.
"""
from __future__ import annotations

import os
import sys

import pandas as pd
import pytest

from bench_script import bench_script
from git_fixture import git_repo
from calc.measurements import DATA_DIR, load_measurements, load_sources, measurement_bound
from calc.models import model_preset_id

conv = bench_script("convert_gpustack")

_HEAD = """# Optimizing Qwen3-8B Throughput on NVIDIA H100 GPUs

## Conclusion

???+ tip "Serving Command"
    ```bash
    vllm serve Qwen/Qwen3-8B
    ```

| Benchmark Case | baseline | Optimized |
|---|---|---|
| **ShareGPT** | Total TPS: 4179.00 | Total TPS: 4179.00 |

## Optimization Objective

Achieve high throughput under high-concurrency request scenarios.

## Experimental Setup

### Model

Qwen/Qwen3-8B

### Hardware

A single NVIDIA H100 SXM GPU.

### Engine Version

- vLLM: v0.11.0
- SGLang: v0.5.3

### Benchmark Dataset

1. ShareGPT
2. Random dataset with varying sequence lengths:
    - Long prompt: 4000 input tokens, 200 output tokens

### Benchmark Script

```bash
# Benchmark on ShareGPT dataset
vllm bench serve --model Qwen/Qwen3-8B --backend openai-chat --dataset-name sharegpt --num-prompts 1000
```

## Experiment Results
"""


def _table(n, total_in, total_out, rps, out_tps, tot_tps, ttft, tpot, itl, conc=None, guidellm=False):
    """A result table in vllm bench serve's layout (GPUStack's guidellm layout with ``guidellm``): latencies as
    (mean, median, p99), or (mean, median, p95, p99) and an e2e triple first for guidellm."""
    stats = ("Mean", "Median", "P95", "P99") if guidellm else ("Mean", "Median", "P99")
    lines = ["============ Serving Benchmark Result ============", f"Successful requests:                     {n}"]
    if conc is not None:
        lines.append(f"Maximum request concurrency:             {conc}")
    lines += [f"Benchmark duration (s):                  {n / rps:.2f}",
              f"Total input tokens:                      {total_in}",
              f"Total generated tokens:                  {total_out}",
              f"Request throughput (req/s):              {rps:.2f}",
              f"Output token throughput (tok/s):         {out_tps:.2f}",
              "Peak output token throughput (tok/s):    3000.00",
              f"Peak concurrent requests:                {float(conc or n):.2f}",
              f"Total Token throughput (tok/s):          {tot_tps:.2f}"]
    groups = [("TTFT (ms)", ttft), ("TPOT (ms)", tpot), ("ITL (ms)", itl)]
    if guidellm:
        groups = [("Latency(s)", (30.0, 28.0, 55.0, 60.0))] + groups
    for name, values in groups:
        lines.append("--------------------------------------------------")
        lines += [f"{s} {name}:{' ' * 10}{v:.2f}" for s, v in zip(stats, values)]
    lines.append("==================================================")
    return "\n".join("    " + x for x in lines)


def _block(title, body):
    return f'??? info "{title}"\n    ```\n{body}\n    ```\n'


def _serving(command, title="Serving script"):
    return f'??? info "{title}"\n    ```bash\n    {command}\n    ```\n'


#: A page of three results and one failed engine: a burst (no --max-concurrency: 1,000 requests at once), a closed
#: loop at --max-concurrency 4 whose case label changes the launch, and a result whose launch serves another model.
_PAGE = _HEAD + "\n### 1. Choosing the Inference Engine\n\nvLLM\n" + _serving("vllm serve Qwen/Qwen3-8B") + "\n" + \
    _block("Benchmark result", _table(1000, 217400, 200500, 10.0, 2005.0, 4179.0, (40000, 41000, 80000),
                                      (100, 90, 300), (95, 80, 400))) + \
    "\nSGLang\n" + _serving("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B") + "\n" + \
    _block("Benchmark result", "    RuntimeError: CUDA out of memory") + \
    "\n### 2. Max Number of Batched Tokens\n\n" + _serving("vllm serve Qwen/Qwen3-8B --max-num-batched-tokens 4096") + \
    "\n" + _block("Benchmark result", "    # --max-num-batched-tokens 8192\n" +
                  _table(100, 23260, 22061, 2.25, 496.88, 1020.76, (64.0, 60.26, 98.59), (7.38, 7.40, 7.96),
                         (7.78, 7.37, 40.98), conc=4)) + \
    "\n### 3. A Larger Model\n\n" + _serving("vllm serve Qwen/Qwen3-14B") + "\n" + \
    _block("Benchmark result", _table(1000, 217400, 200500, 5.0, 1002.5, 2089.5, (80000, 82000, 160000),
                                      (200, 180, 600), (190, 160, 800)))

_FACTS = dict(source="gpustack-h100-test", model="qwen3-8b", family="qwen", accelerator="h100-sxm")


@pytest.fixture
def page_repo(tmp_path, monkeypatch):
    """A copy of the lab with the synthetic page at docs/performance-lab/test/h100.md, listed in ``PAGES``."""
    repo = tmp_path / "gpustack"
    repo.mkdir()
    head = git_repo(repo, {f"{conv.ROOT}/test/h100.md": _PAGE})
    monkeypatch.setitem(conv.PAGES, "test/h100.md", _FACTS)
    return repo, head


def test_a_burst_is_offline_at_n_and_a_max_concurrency_block_a_closed_loop(page_repo):
    repo, head = page_repo
    rows, sources, skipped = conv.convert(conv.git_dir(str(repo)), "2026-12-07", head, ["test/h100.md"])
    rows = rows.set_index("id")
    burst, loop = "gpustack-h100-test-vllm-bf16-tp1-sharegpt-r0", "gpustack-h100-test-vllm-bf16-tp1-sharegpt-r1"
    # the burst: 12 readings (3 throughputs on one GPU, 3 statistics of TTFT, TPOT and ITL), offline at N = 1,000
    b = rows[rows.index.str.startswith(burst)]
    assert len(b) == 12 and (b["mode"] == "offline").all() and (b["concurrency"] == 1000).all()
    # mean input 217,400 / 1,000 = 217.4 -> 217; mean output 200,500 / 1,000 = 200.5 -> 201 (halves up; Python's
    # round would give 200)
    assert (b["input_len"] == 217).all() and (b["output_len"] == 201).all()
    assert rows.loc[f"{burst}-total_tok_per_s_per_gpu-mean", "value"] == 4179.0
    assert rows.loc[f"{burst}-ttft_ms-p99", "value"] == 80000.0
    assert rows.loc[f"{burst}-itl_ms-median", "value"] == 80.0
    assert (b["engine_version"] == "0.11.0").all() and (b["weight_dtype"] == "bf16").all()
    assert (b["len_dist"] == "sharegpt").all() and (b["request_rate_per_s"] == "").all()
    # the closed loop: concurrency 4 from "Maximum request concurrency", 23,260 / 100 = 232.6 -> 233 in,
    # 22,061 / 100 = 220.61 -> 221 out; its case label sets the launch's --max-num-batched-tokens
    c = rows[rows.index.str.startswith(loop)]
    assert len(c) == 12 and (c["mode"] == "concurrency").all() and (c["concurrency"] == 4).all()
    assert (c["input_len"] == 233).all() and (c["output_len"] == 221).all()
    assert rows.loc[f"{loop}-tpot_ms-mean", "value"] == 7.38
    notes = c["notes"].iloc[0]
    assert "--num-prompts 100 --max-concurrency 4" in notes and "closed loop at max concurrency 4" in notes
    assert "serving: vllm serve Qwen/Qwen3-8B --max-num-batched-tokens 8192;" in notes
    assert "result block at line" in notes and f"docs/performance-lab/test/h100.md @{head}" in notes
    # left out, each with its reason: the engine that failed (no table, no run index) and the other model's run
    reasons = {why for _, why, _ in skipped}
    assert any(w.startswith("no result table") and "CUDA out of memory" in w for w in reasons)
    assert "the launch serves Qwen/Qwen3-14B, another model than the page's Qwen/Qwen3-8B" in reasons
    assert not rows.index.str.contains("-r2-").any() and len(rows) == 24
    # one source: the page at its commit, Apache-2.0, shipped, what its rows leave out
    s = sources.iloc[0]
    assert s["source_id"] == "gpustack-h100-test" and s["license"] == "Apache-2.0" and s["shipped"] == "yes"
    assert s["url"].endswith(f"/blob/{head}/docs/performance-lab/test/h100.md") and s["commit"] == head
    assert "results whose launch serves another model than the page's: 1, line" in s["notes"] and \
        "A check set gathered after the fit" in s["notes"]


def test_the_command_line_prints_every_skipped_block_and_checks_the_rows(page_repo, tmp_path, monkeypatch, capsys):
    repo, head = page_repo
    out = tmp_path / "rows.csv"
    monkeypatch.setattr(sys, "argv", ["convert_gpustack.py", str(out), "--repo", str(repo), "--commit", head,
                                      "--pages", "test/h100.md", "--retrieved", "2026-12-07"])
    conv.main()
    printed = capsys.readouterr().out
    assert "skipped test/h100.md:" in printed and "another model than the page's" in printed
    assert "24 rows, 1 new sources; rows beating calc's lower bound: 0" in printed
    assert len(load_measurements(out)) == 24 and (tmp_path / "rows_sources.csv").is_file()


def test_a_case_label_of_flags_replaces_the_scripts_and_a_speculative_one_all_of_them():
    assert conv.apply_case_flags("vllm serve M --max-num-batched-tokens 4096 -tp 2",
                                 "--max-num-batched-tokens 8192") == "vllm serve M --max-num-batched-tokens 8192 -tp 2"
    assert conv.apply_case_flags("trtllm-serve M --max_num_tokens=16384", "--max_num_tokens=32768") == \
        "trtllm-serve M --max_num_tokens=32768"
    spec = conv.apply_case_flags("python3 -m sglang.launch_server --model-path M --speculative-algorithm EAGLE3 "
                                 "--speculative-num-steps 4 --speculative-eagle-topk 4",
                                 "--speculative-algorithm EAGLE3 --speculative-draft-model-path D")
    assert spec == "python3 -m sglang.launch_server --model-path M --speculative-algorithm EAGLE3 " \
                   "--speculative-draft-model-path D"
    assert conv.apply_case_flags("vllm serve M", "random 4K input") == "vllm serve M"
    assert conv.layout_of("vllm serve M -tp 4 --enable-expert-parallel", "vllm") == (4, 1, 4, 1)
    assert conv.layout_of("python3 -m sglang.launch_server --model-path M --tp-size 4 --ep-size 4", "sglang") == \
        (4, 1, 4, 1)
    assert conv.base_name("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8") == "qwen3-235b-a22b"


_GUIDELLM_HEAD = """# Optimizing Qwen3.5-35B-A3B Throughput

## Conclusion

???+ tip "Serving Command"
    ```bash
    vllm serve Qwen/Qwen3.5-35B-A3B-FP8 \\
        --reasoning-parser=qwen3
    ```

## Experimental Setup

### Model

- Qwen/Qwen3.5-35B-A3B

### Hardware

NVIDIA H200

### Engine Version

- vLLM v0.17.1
- SGLang v0.5.9

### Benchmark Method

#### Benchmark Profiles

##### ShareGPT

```yaml
dataset_name: ShareGPT
request_rate: 1000
total_requests: 1000
```

##### ShareGPT 8RPS

```yaml
dataset_name: ShareGPT
request_rate: 8
total_requests: 1000
```

## Experiment Results

"""


def _params(flags, title="Backend Parameters"):
    return f"- {title}:\n  ```bash\n" + "".join(f"  {f}\n" for f in flags) + "  ```\n"


#: GPUStack's guidellm pages: a burst of 1,000 at 1,000/s (guidellm holds at most 512 in flight), the same profile on
#: SGLang, a quantized vLLM run at 8 requests/s, and an Other Benchmark Cases block that repeats the first.
_GUIDELLM_PAGE = _GUIDELLM_HEAD + "### Choosing the Inference Engine\n\n#### vLLM\n\n- Profile: `ShareGPT`\n" + \
    _params(["--reasoning-parser=qwen3", "--max-model-len=32768"]) + "\n" + \
    _block("Benchmark result", _table(1000, 342058, 281412, 14.14, 4347.55, 9632.01, (4072.64, 5786.23, 9276.23,
                                      10204.44), (25.89, 11.63, 119.58, 161.45), (11.46, 0.0, 101.72, 132.49),
                                      conc=512, guidellm=True)) + \
    "\n#### SGLang\n\n- Profile: `ShareGPT`\n" + _params(["--reasoning-parser=qwen3", "--context-length=32768"]) + \
    "\n" + _block("Benchmark result", _table(1000, 342058, 281412, 8.0, 2254.86, 4995.66, (34359.37, 44424.39,
                                             50796.35, 53280.79), (180.73, 145.27, 376.5, 743.84),
                                             (58.84, 63.82, 70.78, 73.69), conc=512, guidellm=True)) + \
    "\n### Quantization\n\n- Profile: `ShareGPT 8RPS`\n" + _params(["--reasoning-parser=qwen3"]) + "\n" + \
    _block("Benchmark result", _table(1000, 342058, 281412, 7.99, 2250.0, 4990.0, (50.0, 45.0, 90.0, 120.0),
                                      (10.0, 9.0, 15.0, 20.0), (5.0, 4.5, 7.0, 8.0), conc=59, guidellm=True)) + \
    "\n### Other Benchmark Cases\n\n#### ShareGPT Profile\n\n" + \
    _params(["--reasoning-parser=qwen3", "--max-model-len=32768"], "Baseline Backend Parameters") + "\n" + \
    _block("Baseline benchmark result", _table(1000, 342058, 281412, 14.14, 4347.55, 9632.01,
                                               (4072.64, 5786.23, 9276.23, 10204.44), (25.89, 11.63, 119.58, 161.45),
                                               (11.46, 0.0, 101.72, 132.49), conc=512, guidellm=True))


def test_guidellm_pages_read_the_profile_the_client_and_the_checkpoint(tmp_path, monkeypatch):
    repo = tmp_path / "gpustack"
    repo.mkdir()
    head = git_repo(repo, {f"{conv.ROOT}/test/h200.md": _GUIDELLM_PAGE})
    monkeypatch.setitem(conv.PAGES, "test/h200.md", dict(source="gpustack-h200-test", model="qwen3.5-35b-a3b",
                                                         family="qwen", accelerator="h200"))
    rows, sources, skipped = conv.convert(conv.git_dir(str(repo)), "2026-12-07", head, ["test/h200.md"])
    rows = rows.set_index("id")
    vllm, sgl = "gpustack-h200-test-vllm-bf16-tp1-ShareGPT-r0", "gpustack-h200-test-sglang-bf16-tp1-ShareGPT-r1"
    # 1,000 requests issued within 1 s of a 70.7 s run, at most 512 in flight: a closed loop at 512
    assert (rows.loc[rows.index.str.startswith(vllm), "mode"] == "concurrency").all()
    assert (rows.loc[rows.index.str.startswith(vllm), "concurrency"] == 512).all()
    # vLLM with a reasoning parser: only the request rate and the request latencies (s -> ms) stand
    assert sorted(rows.index[rows.index.str.startswith(vllm)].str[len(vllm) + 1:]) == [
        "e2e_ms-mean", "e2e_ms-median", "e2e_ms-p95", "e2e_ms-p99", "requests_per_s-mean"]
    assert rows.loc[f"{vllm}-e2e_ms-p95", "value"] == 55000.0
    # SGLang: its ITL is written as TPOT (vLLM's definition), its own TPOT left out, its TTFT kept with p95
    assert rows.loc[f"{sgl}-tpot_ms-median", "value"] == 63.82 and f"{sgl}-itl_ms-mean" not in rows.index
    assert rows.loc[f"{sgl}-ttft_ms-p95", "value"] == 50796.35
    assert rows.loc[f"{sgl}-total_tok_per_s_per_gpu-mean", "value"] == 4995.66
    # the quantization section serves the recommended FP8 checkpoint, at 8 requests/s: a rate run
    q = rows[rows.index.str.startswith("gpustack-h200-test-vllm-fp8-tp1-ShareGPT8RPS-r2")]
    assert len(q) == 5 and (q["mode"] == "rate").all() and (q["request_rate_per_s"] == 8.0).all()
    assert "vllm serve Qwen/Qwen3.5-35B-A3B-FP8 --reasoning-parser=qwen3" in q["notes"].iloc[0]
    # the Other Benchmark Cases block repeats the first table; the zero median ITL is named
    reasons = [why for _, why, _ in skipped]
    assert any(w.startswith("repeats the result table at line") for w in reasons)
    assert "the same run shown twice" in sources.iloc[0]["notes"]


# ---------------------------------------------------------------------------------------------------- shipped rows

#: The rows the converter shipped per new source (bench/convert_gpustack.py at gpustack/gpustack @47277d79). The
#: Qwen3.5-9B pages' rows are not shipped: calc has no preset of that model (no config.json of it to read).
NEW_SOURCES = {"gpustack-h200-qwen35-35b-a3b": 70, "gpustack-h200-qwen35-35b-a3b-latency": 90,
               "gpustack-a100-glm45air": 154, "gpustack-h100-glm45air": 55, "gpustack-a100-glm46": 55,
               "gpustack-h100-glm46": 33, "gpustack-h200-glm46": 153}


def _held():
    return pd.read_csv(DATA_DIR / "serving_holdout.csv", keep_default_na=False)


def _sources():
    return pd.read_csv(DATA_DIR / "serving_sources.csv", keep_default_na=False).set_index("source_id")


def test_the_new_gpustack_sources_ship_their_rows_under_apache_2():
    held, sources = _held(), _sources()
    new = held[held["source_id"].isin(NEW_SOURCES)]
    assert new.groupby("source_id").size().to_dict() == NEW_SOURCES and held["id"].is_unique
    for sid in NEW_SOURCES:
        s = sources.loc[sid]
        assert s["license"] == "Apache-2.0" and s["shipped"] == "yes" and s["commit"] == conv.COMMIT
        assert "A check set gathered after the fit: none of its rows is read by the fit" in s["notes"]
        assert s["url"].startswith(f"https://github.com/gpustack/gpustack/blob/{conv.COMMIT}/docs/performance-lab/")
    assert set(held["source_id"]) <= set(sources.index)
    # the models and accelerators the pages state; GLM-4.x pages run GLM-4.6 checkpoints
    assert new.groupby("source_id")["model"].first().to_dict() == {
        "gpustack-h200-qwen35-35b-a3b": "qwen3.5-35b-a3b", "gpustack-h200-qwen35-35b-a3b-latency": "qwen3.5-35b-a3b",
        "gpustack-a100-glm45air": "glm-4.5-air", "gpustack-h100-glm45air": "glm-4.5-air",
        "gpustack-a100-glm46": "glm-4.6", "gpustack-h100-glm46": "glm-4.6", "gpustack-h200-glm46": "glm-4.6"}
    # guidellm's pages: no ITL row (its ITL is written as TPOT); vLLM's runs with a reasoning parser keep only the
    # request rate and latency
    qwen = new[new["source_id"].str.contains("qwen35")]
    assert not (qwen["metric"] == "itl_ms").any()
    blind = qwen[(qwen["engine"] == "vllm")]
    assert set(blind["metric"]) == {"requests_per_s", "e2e_ms"}
    # the GLM-4.5-Air H100 page's Other Benchmark Cases are the A100 page's tables: none shipped under H100
    assert not new["id"].str.match(r"gpustack-h100-glm45air-.*random").any()


def test_the_new_rows_parse_and_respect_calcs_bound(tmp_path):
    held = _held()
    new = held[held["source_id"].isin(NEW_SOURCES)]
    assert new["model"].map(lambda m: model_preset_id(m) is not None).all()  # every model a preset (or its alias)
    assert len(new) == sum(NEW_SOURCES.values())
    path = tmp_path / "new.csv"
    new.to_csv(path, index=False)
    df = load_measurements(path, sources=load_sources())
    assert len(df) == len(new)
    for _, r in df.iterrows():
        assert measurement_bound(r).respected, r["id"]


_AGREED = ["source_id", "model", "accelerator", "n_gpus", "tp", "pp", "ep", "dp", "engine", "engine_version",
           "weight_dtype", "kv_dtype", "input_len", "output_len", "len_dist", "concurrency", "request_rate_per_s",
           "mode", "metric", "statistic", "value"]


@pytest.mark.skipif(not os.environ.get("GPUSTACK_REPO"), reason="names no copy of github.com/gpustack/gpustack")
def test_the_converter_reads_the_hand_transcribed_pages_as_they_were_stored():
    # the seven pages transcribed by hand before the converter: every stored id, configuration and value again
    old = ["qwen3-32b/a100.md", "gpt-oss-120b/a100.md", "gpt-oss-20b/a100.md", "qwen3-14b/a100.md",
           "qwen3-14b/h100.md", "qwen3-235b-a22b/a100.md", "qwen3-8b/h100-latency.md"]
    rows, _, _ = conv.convert(conv.git_dir(os.environ["GPUSTACK_REPO"]), "2026-12-07", conv.COMMIT, old)
    stored = _held()
    stored = stored[stored["source_id"].isin(set(rows["source_id"]))].set_index("id")
    mine = rows.set_index("id").astype(str)
    assert set(mine.index) == set(stored.index)
    for col in _AGREED:
        a, b = stored[col].astype(str), mine.loc[stored.index, col]
        if col in ("value", "concurrency", "request_rate_per_s"):
            a, b = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
            assert ((a == b) | (a.isna() & b.isna())).all(), col
        else:
            assert (a == b).all(), col
