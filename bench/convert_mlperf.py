"""Convert MLCommons MLPerf Inference results (v4.1, v5.0, v5.1, v6.0) into rows of calc's serving measurements.

Run::

    python3 bench/convert_mlperf.py OUT.csv [--round ROUND] [--repo PATH] [--url URL] [--retrieved YYYY-MM-DD]
                                    [--with-e2e] [--server] [--llama2-input-len N] [--mixtral-input-len N]

``--repo`` (or the environment variable ``MLPERF_INFERENCE_V41``) names a git copy of
github.com/mlcommons/inference_results_v4.1: a bare git directory or a checkout; the files are read from its
HEAD commit with git, so no work tree is needed. OUT.csv receives measurement rows with the columns of
``calc.measurements.COLUMNS`` (the format of calc/data/serving_measurements.csv); OUT_sources.csv beside it
receives the rows for serving_sources.csv (``calc.measurements.SOURCE_COLUMNS``). The converter prints, per
benchmark, scenario and system, what it wrote or why it skipped the result, then loads OUT.csv with
``calc.measurements.load_measurements`` (sources checked) and prints every row that beats calc's lower bound
(``calc.measurements.measurement_bound``).

Source: MLCommons MLPerf Inference v4.1 results (published 2024-08-28), repository
https://github.com/mlcommons/inference_results_v4.1, read at commit 198fc46799b3328b36ee4bcbdebfa2db5a8e6183
(the commit actually read is written into the sources file). Its LICENSE.md is the Apache License 2.0, so the
numbers may be shipped.

What is read, per result ``<division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1``:

- benchmarks llama2-70b-99 and llama2-70b-99.9 (calc model ``llama-2-70b``) and mixtral-8x7b (``mixtral-8x7b``),
  scenarios Offline and Server; closed division, and open division results whose system is not pruned or
  sparse (``DepthPruned`` / ``Sparse`` systems are skipped); a llama2-70b-99.9 result whose summary is the same
  file as the system's llama2-70b-99 result (one run submitted for both targets) is written once;
- mlperf_log_summary.txt: Offline "Tokens per second" (output tokens of the whole system) and the
  ``samples_per_query`` LoadGen issued at once; Server "Completed tokens per second", the mean and median
  ("50.00 percentile") first-token latency and time to output token (calc's ``FIT_STATISTICS`` are mean and
  median, so no other percentile is written), and the mean end-to-end latency with ``--with-e2e``;
- mlperf_log_detail.txt: the run's date (``test_datetime``), the Server run's number of queries
  (``result_query_count``) and its scheduled rate (``result_scheduled_samples_per_sec``);
- systems/<system>.json: the accelerator, accelerators per node x nodes, the framework string;
- the submitter's own code and configs for the engine and layout (see ``nvidia_layout``, ``vllm_layout``,
  ``redhat_layout``); a result whose layout the submission does not state is skipped.

Rounds: ``--round v5.0`` / ``--round v5.1`` (repository in ``--repo`` or ``MLPERF_INFERENCE_V50`` /
``MLPERF_INFERENCE_V51``) read inference_results_v5.0 / v5.1 the same way, adding llama3.1-405b (calc's
``llama-3.1-405b``), llama3.1-8b (``llama-3.1-8b``) and deepseek-r1 (``deepseek-v3``, the same architecture), and
the Interactive scenario (LoadGen's Server scenario under tighter latency limits), written as Server rate rows with
the scenario in the notes and the row id. Layouts come from NVIDIA's harness configs of that round
(configs/<system>/<scenario>/<benchmark>.py, an ``EXPORTS`` dict: ``exports_layout``) and AMD's harness_llm of
AMD and its partners' MI300X, MI325X and MI355X results (code/<benchmark>/harness_llm/models/<model>/
<scenario>_<accelerator>.yaml over its common/config.yaml: ``harness_llm_layout``; vLLM's V0 engine with multi-step
scheduling, most runs in eager mode, which the serving model leaves out); results of other harnesses are skipped
with the reason. Row ids start ``mlperf50`` / ``mlperf51``, source ids ``mlperf-inf50-<division>-<family>``.

Round v6.0: ``--round v6.0`` (``--repo`` or ``MLPERF_INFERENCE_V60``) reads inference_results_v6.0 the same
way, adding gpt-oss-120b (calc's ``gpt-oss-120b``; prompts of the 6,396-sample performance set, outputs of at most
10,240 tokens; its weights the checkpoint's own MXFP4, ``mxfp4``). The copy read for the rows handed over with this
converter is the public fork github.com/gbeezybez/inference_results_v6.0 (its LICENSE.md the Apache License 2.0):
its first commits are MLCommons' ("Publishing Results", 2026-03-26, to 4d3916a, 2026-04-03), and the fork's own
later ones add only open/Lattix's R-GAT files and a submission/ folder, none of them read here; pass ``--url`` with
the fork's address so the sources link to the commit read. What v6.0 adds to the v5.x reading:

- accelerator names (``ACCELERATORS_V6``, ``accelerator_of``): NVIDIA's "B300-SXM-270GB" is calc's b300; AMD's
  cluster names ending "(xN)" (87 and 94 MI355X) count the system's GPUs, N of the accelerators_per_node x
  number_of_nodes installed; a power-capped part ("(Power Cap 1000 W)", Dell_MangoBoost's MI355X) and a system of
  several accelerator models are skipped; the RTX PRO 4500 and Intel Arc parts have no preset (the MI350X and the
  H200 NVL are read since they have one);
- NVIDIA's harness (``exports_layout`` with ``v6``): a config that states no layout of its own belongs to a system
  that scaleout/run_scaleout.sh runs as copies of an atomic system (``scaleout_run``: the submitter's
  scaleout/REPRODUCE.md names it and the multiplicity), whose config gives the engine; runs that REPRODUCE.md runs
  disaggregated (run_scaleout_disagg.py, llama2_70b_disagg.sh) and configs of a Dynamo cluster of prefill and
  decode workers (DeepSeek-R1 Interactive on the NVL72s) are skipped, as are systems no command names (CoreWeave's
  64-GPU NVL72s); MTP speculative decoding (DeepSeek-R1 Interactive: 3 next-n layers) and attention-DP balancing
  are written into the notes; Lenovo's configs under src/ and a config whose first line has a stray "~" are read;
- AMD's harness in its v6.0 form (``amd_src_layout``): src/<benchmark>/<config>.yaml over
  src/harness_llm/common/config.yaml, in AMD's folder and in each partner's that ships it (Dell, GigaComputing,
  HPE, ORACLE, Supermicro), the config the result's README.md runs (``_mn`` on multi-node clusters, the README's
  device count checked), vLLM's V1 engine with CUDA graphs and MXFP4 weights on MI355X (the Quark scheme of the
  submitter's, else AMD's, prepare_model.sh), the vLLM version from the systems json or the setup build config;
  Dell's MI300X runs ship v5.x's harness_llm (src_mi300x/), read as before; MangoBoost's LLMBoost, which states no
  layout, and the open division's pruned Llama-3.1-405B are skipped;
- Red Hat's llm-d deployment of gpt-oss-120b (``llmd_layout``): replicas and tensor parallelism of its deploy
  script, the vLLM arguments of the scenario's override file.

Row ids start ``mlperf60``, source ids ``mlperf-inf60-<division>-<family>``.

Lengths: the prompts are the dataset's (their mean, ``DATASETS``); a request's output ends at end-of-text (at
most 1,024 tokens; 2,000, 20,000 and 10,240 for llama3.1-405b, deepseek-r1 and gpt-oss-120b), and each row carries
the mean output of its own run (tokens per second / samples per second of the same log), so ``len_dist`` marks
lengths that vary and the fit treats a finite Offline run's tail (``calc.serving_terms.spread_outputs``).
"""
from __future__ import annotations

import argparse
import ast
import csv
import datetime as _dt
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc.hardware import get_accelerator  # noqa: E402
from calc.measurements import (COLUMNS, SOURCE_COLUMNS, load_measurements, load_sources,  # noqa: E402
                               measurement_bound)

REPO_ENV = "MLPERF_INFERENCE_V41"
REPO_URL = "https://github.com/mlcommons/inference_results_v4.1"
PUBLISHED = "2024-08-28"  # the repository's first commit, "Commit Results", 2024-08-28
SCENARIOS = ("Offline", "Server")
#: Why calc's data set holds the Offline rows only (``--server`` writes the Server rows too).
SERVER_NOTE = ("a Server run holds its Poisson rate at the edge of the latency limits (TTFT 2 s, TPOT 200 ms at "
               "the 99th percentile for llama2-70b), where TTFT and TPOT turn on the queue's last few percent of "
               "capacity: the serving model put 12-19% of them within 25% before any fit saw them, and fitting "
               "them too lowered the fit's cross-validated share within 25% from 52% to 51%; their throughput "
               "is the rate the run was set to, not a measurement of the engine")

#: The Server scenario's 99th-percentile latency limits of v4.1 (TTFT ms, TPOT ms), from the round's
#: loadgen/mlperf.conf (github.com/mlcommons/inference, tag v4.1: ``<benchmark>.Server.ttft_latency`` and
#: ``tpot_latency``), written into a Server row's notes where its summary does not print them; a run tuned to
#: them sits at their edge (``calc.serving.edge_of_limits``).
V41_SERVER_LIMITS_MS = {"llama2-70b": (2000.0, 200.0), "mixtral-8x7b": (2000.0, 200.0)}

#: Each benchmark family: calc's model preset, the dataset's prompts and where their mean comes from.
#: The means are of the per-sample token counts that openshift-psap/performance-dashboard extracted from the
#: MLCommons dataset files (mlperf-data/summaries/*.csv, Apache-2.0; llama2-70b-99.csv added at commit
#: 7cd1065d1e2c53ee745cbda08e2a8f13a42c93bb, mixtral-8x7b.csv at 67033baeaac181a3a35641dd2b86a7cb22d856dd):
#: no file of the MLPerf results repository states them. The Mixtral file was made from the later dataset
#: release 09292024_mixtral_15k_mintoken2_v1.pkl, v4.1 ran 2024.06.06_mixtral_15k_v4.pkl (NVIDIA's
#: download_data.sh); the first sample's prompt has the same 657 tokens in both (NVIDIA's preprocess_data.py
#: prints it).
DATASETS = {
    "llama2-70b": dict(
        model="llama-2-70b", family="llama", samples=24576, input_mean=222.3298,
        len_dist="openorca (MLPerf llama2-70b dataset, 24,576 samples; outputs end at end-of-text); mean lengths",
        input_source=("mean prompt of the MLPerf OpenOrca set (24,576 samples, 5,463,976 tokens): "
                      "openshift-psap/performance-dashboard mlperf-data/summaries/llama2-70b-99.csv @7cd1065d, "
                      "extracted from open_orca_gpt4_tokenized_llama.sampled_24576.pkl")),
    "mixtral-8x7b": dict(
        model="mixtral-8x7b", family="mixtral", samples=15000, input_mean=427.3937,
        len_dist=("mixed (MLPerf mixtral-8x7b dataset: OpenOrca, GSM8K, MBXP, 15,000 samples; outputs end at "
                  "end-of-text or a stop sequence); mean lengths"),
        input_source=("mean prompt of the MLPerf Mixtral set (15,000 samples): openshift-psap/performance-dashboard "
                      "mlperf-data/summaries/mixtral-8x7b.csv @67033bae, extracted from the later release "
                      "09292024_mixtral_15k_mintoken2_v1.pkl of the set v4.1 ran (2024.06.06_mixtral_15k_v4.pkl)")),
}
DATASETS.update({
    "llama3.1-405b": dict(
        model="llama-3.1-405b", family="llama", samples=8313, input_mean=9428.6447, max_output=2000,
        len_dist=("mixed long-context (MLPerf llama3.1-405b dataset, 8,313 samples; outputs end at end-of-text, at most "
                  "2,000 tokens by NVIDIA's generation_config.json max_output_len); mean lengths"),
        input_source=("mean prompt of the MLPerf llama3.1-405b set (8,313 samples, 78,380,323 tokens): "
                      "openshift-psap/performance-dashboard mlperf-data/summaries/llama3-1-405b.csv @67033bae, "
                      "extracted from mlperf_llama3.1_405b_dataset_8313_processed_fp16_eval.pkl (tok_input_len)")),
    "llama3.1-8b": dict(
        model="llama-3.1-8b", family="llama", samples=13368, input_mean=870.7297, max_output=128,
        len_dist=("cnn_dailymail (MLPerf llama3.1-8b datacenter dataset, 13,368 articles to summarize in 128 tokens; "
                  "outputs end at end-of-text); mean lengths"),
        input_source=("mean prompt of the MLPerf llama3.1-8b datacenter set (13,368 samples, 11,639,915 tokens): "
                      "openshift-psap/performance-dashboard mlperf-data/summaries/llama3-1-8b-datacenter.csv @7cd1065d, "
                      "extracted from cnn_eval.json (tok_input)")),
    "deepseek-r1": dict(
        model="deepseek-v3", family="deepseek", samples=4388, input_mean=803.7912, max_output=20000,
        len_dist=("mixed reasoning (MLPerf deepseek-r1 dataset, 4,388 samples; outputs end at end-of-text, at most "
                  "20,000 tokens); mean lengths; DeepSeek-R1 has the architecture of the deepseek-v3 preset"),
        input_source=("mean prompt of the MLPerf deepseek-r1 set (4,388 samples, 3,527,036 tokens): "
                      "openshift-psap/performance-dashboard mlperf-data/summaries/deepseek-r1.csv @7cd1065d, "
                      "extracted from mlperf_deepseek_r1_dataset_4388_fp8_eval.pkl (tok_input_len)")),
})
DATASETS.update({
    "gpt-oss-120b": dict(
        model="gpt-oss-120b", family="gpt-oss", samples=6396, input_mean=5010.6437, max_output=10240,
        len_dist=("mixed long-context (MLPerf gpt-oss-120b performance set perf_eval_ref.parquet, 6,396 samples, "
                  "prompts up to 15,330 tokens; outputs end at end-of-text, at most 10,240 tokens by NVIDIA's "
                  "generation_config_performance.json max_output_len and AMD's harness yaml max_tokens); mean lengths"),
        input_source=("mean prompt of the MLPerf gpt-oss-120b performance set (6,396 samples, 32,048,077 tokens): "
                      "openshift-psap/performance-dashboard datasets/summaries/gpt-oss.csv @52a74184, extracted from "
                      "gpt-oss_data/perf/perf_eval_ref.parquet (num_tokens); its 6,396 samples and longest prompt of "
                      "15,330 tokens are those NVIDIA's src/gpt-oss-120b/tensorrt/README.md states for the set")),
})
BENCHMARKS = {"llama2-70b-99": "llama2-70b", "llama2-70b-99.9": "llama2-70b", "mixtral-8x7b": "mixtral-8x7b"}

#: systems/<system>.json accelerator_model_name -> calc accelerator id. Only names that are the preset's part
#: exactly; the others (Jetson Orin and H200 NVL among them) have no preset and are skipped. GH200's names carry
#: its HBM (v4.1's NVIDIA, Supermicro and QCT systems, v5.0's NVIDIA, HPE and QCT ones), the H100 NVL's is that of
#: v5.0's Cisco and Lenovo systems.
ACCELERATORS = {
    "NVIDIA H100-SXM-80GB": "h100-sxm",
    "NVIDIA H100-PCIe-80GB": "h100-pcie",
    "NVIDIA H100-NVL-94GB": "h100-nvl",
    "NVIDIA GH200 Grace Hopper Superchip 96GB": "gh200-96gb",  # 96 GB HBM3 (accelerator_memory_capacity)
    "NVIDIA GH200 Grace Hopper Superchip 144GB": "gh200-144gb",  # 144 GB HBM3e
    "NVIDIA H200-SXM-141GB": "h200",
    "NVIDIA H200-SXM-141GB-CTS": "h200",  # the H200 SXM 141GB with a custom thermal solution (TGP in hw_notes)
    "NVIDIA B200-SXM-180GB": "b200",
    "NVIDIA L40S": "l40s",
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "AMD MI300X-NPS1-SPX-192GB-750W": "mi300x",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
}
#: calc accelerators with FP4 tensor cores: NVIDIA's calibration.md quantizes selected linear and MLP layers
#: to FP4 "on accelerators which support FP4".
FP4_ACCELERATORS = ("b200",)

#: TensorRT-LLM public commits named by the submitters' Makefile.build (TRTLLM_PUBLIC_HASH, USE_RELEASE_TRTLLM 1)
#: -> the version in tensorrt_llm/version.py at that commit of NVIDIA/TensorRT-LLM.
TRTLLM_VERSIONS = {"2d234357c6e69fa514f6e9b4d4a5ad3bc431c4a6": "0.12.0.dev2024071600"}

#: Each round the converter reads: the repository, its environment variable, its first commit's date, the prefix of
#: its row and source ids, and the benchmarks and scenarios it reads (published None: the date of the repository's
#: first commit, read when converting; v5.1's first commit, "Commit results", is of 2025-09-04). v4.1 is the default (calc's data set);
#: v5.0 and v5.1 rows are kept out of the fit (a hold-out set).
ROUNDS = {
    "v4.1": dict(env="MLPERF_INFERENCE_V41", url="https://github.com/mlcommons/inference_results_v4.1",
                 published="2024-08-28", tag="41", scenarios=("Offline", "Server")),
    "v5.0": dict(env="MLPERF_INFERENCE_V50", url="https://github.com/mlcommons/inference_results_v5.0",
                 published=None, tag="50", scenarios=("Offline", "Server", "Interactive")),
    "v5.1": dict(env="MLPERF_INFERENCE_V51", url="https://github.com/mlcommons/inference_results_v5.1",
                 published="2025-09-04", tag="51", scenarios=("Offline", "Server", "Interactive")),
    "v6.0": dict(env="MLPERF_INFERENCE_V60", url="https://github.com/mlcommons/inference_results_v6.0",
                 published=None, tag="60", scenarios=("Offline", "Server", "Interactive")),
}

#: Benchmarks added in v5.0 / v5.1 (result directories named either way) -> dataset family. Their prompt means come
#: from the same extraction as the v4.1 sets (openshift-psap/performance-dashboard mlperf-data/summaries, commits
#: named per set); none of the MLPerf results or the MLCommons inference repository states them.
BENCHMARKS_V5 = {"llama2-70b-99": "llama2-70b", "llama2-70b-99.9": "llama2-70b", "mixtral-8x7b": "mixtral-8x7b",
                 "llama3.1-405b": "llama3.1-405b", "llama3_1-405b": "llama3.1-405b",
                 "llama3.1-8b": "llama3.1-8b", "llama3_1-8b": "llama3.1-8b", "deepseek-r1": "deepseek-r1"}
#: Benchmarks read from v6.0 on: v5.x's and gpt-oss-120b (calc's ``gpt-oss-120b``, new in v6.0).
BENCHMARKS_V6 = dict(BENCHMARKS_V5, **{"gpt-oss-120b": "gpt-oss-120b"})
#: The NVIDIA harness's config file name of each family (configs/<system>/<scenario>/<name>.py).
CONFIG_NAMES = {"llama2-70b": "llama2-70b", "mixtral-8x7b": "mixtral-8x7b", "llama3.1-405b": "llama3_1-405b",
                "llama3.1-8b": "llama3_1-8b", "deepseek-r1": "deepseek-r1", "gpt-oss-120b": "gpt-oss-120b"}
#: Accelerator names first seen in v5.0 / v5.1 systems json files -> calc accelerator id.
ACCELERATORS_V5 = {
    "NVIDIA GB200": "gb200",  # one B200 GPU of a GB200 superchip, 186 GB (accelerator_memory_capacity)
    "NVIDIA GB300": "b300",  # one Blackwell Ultra GPU of a GB300 superchip, 288 GB: calc's b300 preset
    "AMD Instinct MI325X 256GB HBM3e": "mi325x",
    "AMD Instinct MI300X 192GB HBM3": "mi300x",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000",
    "AMD Instinct MI355X 288GB HBM3e": "mi355x",
    "Virtualized NVIDIA H200-SXM-141GB": "h200",  # an H200 SXM passed to a virtual machine (systems json)
}
#: Accelerator names first seen in v6.0 systems json files -> calc accelerator id (read from v6.0 on). Names with a
#: count, "AMD Instinct MI355X 288GB HBM3e (x87)", are read by ``accelerator_of``; power-capped parts ("(Power Cap
#: 1000 W)") and systems of several accelerator models are skipped there. The MI350X and the H200 NVL, which had no
#: preset when the round was first converted, are read since they have one.
ACCELERATORS_V6 = {
    # the HGX B300 (Blackwell Ultra) SXM GPU of NVIDIA's, Cisco's, Dell's, GigaComputing's, Lenovo's, Nebius's and
    # QCT's systems, 270 GB by its name: calc's b300 preset (the HGX B300 data sheet, 288 GB), within the memory check
    "NVIDIA B300-SXM-270GB": "b300",
    # Cisco's, MiTAC's and Supermicro/Red Hat's MI350X systems (288 GB, 8 per node): calc's mi350x preset
    "AMD Instinct MI350X 288GB HBM3e": "mi350x",
    # Cisco's and Dell's H200 NVL systems (PCIe cards, NVLink-bridged): calc's h200-nvl preset
    "NVIDIA H200-NVL-141GB": "h200-nvl",
}

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "eight": 8}


class GitTree:
    """Read-only access to the files of one commit (HEAD) of a git repository, bare or checked out."""

    def __init__(self, path: str):
        """Open the repository at ``path`` (a bare git directory, a .git directory or a checkout)."""
        p = Path(path)
        if not p.exists():
            raise SystemExit(f"{path}: no such directory; pass --repo or set {REPO_ENV} to a git copy of {REPO_URL}")
        self.git = (["git", "--git-dir", str(p)] if (p / "objects").is_dir() and (p / "HEAD").exists()
                    else ["git", "-C", str(p)])
        try:
            self.commit = self._run("rev-parse", "HEAD").strip()
        except subprocess.CalledProcessError:
            raise SystemExit(f"{path}: not a git repository; pass --repo or set {REPO_ENV} to a git copy of "
                             f"{REPO_URL}") from None
        self.blobs = {}
        for line in self._run("ls-tree", "-r", "HEAD").splitlines():
            meta, _, path = line.partition("\t")
            self.blobs[path] = meta.split()[-1]
        self.files = list(self.blobs)
        self._set = set(self.files)
        self._cat = subprocess.Popen(self.git + ["cat-file", "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def _run(self, *args) -> str:
        return subprocess.run(self.git + list(args), check=True, capture_output=True, text=True).stdout

    def exists(self, path: str) -> bool:
        """Whether ``path`` is a file of the commit."""
        return path in self._set

    def read(self, path: str) -> str | None:
        """The text of ``path`` at the commit (None when absent)."""
        if path not in self._set:
            return None
        self._cat.stdin.write(f"HEAD:{path}\n".encode())
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        data = self._cat.stdout.read(int(header[2]))
        self._cat.stdout.read(1)  # the newline after the object
        return data.decode("utf-8", "replace")

    def date(self) -> str:
        """The commit's date, YYYY-MM-DD."""
        return self._run("log", "-1", "--format=%cs", "HEAD").strip()


# == Logs ======================================================================================================

def parse_summary(text: str) -> dict:
    """mlperf_log_summary.txt as {label: text value}, labels stripped ("Tokens per second", "Mean First Token
    latency (ns)", "samples_per_query", "Result is", ...); a label seen twice keeps its first value."""
    out = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, value = line.split(":", 1)
        key = key.strip()
        if key and key not in out:
            out[key] = value.strip()
    return out


def parse_detail(text: str) -> dict:
    """mlperf_log_detail.txt (``:::MLLOG {json}`` lines) as {key: value}, the last value of a key kept."""
    out = {}
    for line in text.splitlines():
        if not line.startswith(":::MLLOG"):
            continue
        try:
            d = json.loads(line[len(":::MLLOG"):])
        except json.JSONDecodeError:
            continue
        out[d.get("key")] = d.get("value")
    return out


def number(text) -> float | None:
    """A float from a log value ("31302.7", "2,400"), None when there is none."""
    if text is None:
        return None
    m = re.search(r"-?\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?", str(text))
    return float(m.group().replace(",", "")) if m else None


# == Submitter configs (NVIDIA's harness and the submitters that reuse it) =====================================

class Unresolved(Exception):
    """A config expression this reader does not evaluate."""


@dataclass
class ConfigClass:
    """One class of a configs/<benchmark>/<scenario>/*.py file: its bases, assignments and registrations."""
    name: str
    file: str
    bases: list
    attrs: dict
    registrations: list = field(default_factory=list)  # (harness, accuracy target, power setting)


class ConfigSet:
    """The config classes of one submitter, benchmark family and scenario (configs/<bench>/__init__.py,
    configs/<bench>/<scenario>/__init__.py and custom.py), read with ``ast`` without running them."""

    def __init__(self, tree: GitTree, root: str, bench: str, scenario: str):
        """Read the config files of ``root`` (closed/<submitter>) for ``bench`` and ``scenario``."""
        self.files = [f"{root}/configs/{bench}/{scenario}/custom.py", f"{root}/configs/{bench}/{scenario}/__init__.py",
                      f"{root}/configs/{bench}/__init__.py"]
        self.classes = {f: {} for f in self.files}
        self.repaired = []
        for f in self.files:
            text = tree.read(f)
            if text is None:
                continue
            module = self._parse(text)
            if module is None:
                continue
            if module[1]:
                self.repaired.append(f)
            for node in module[0].body:
                if isinstance(node, ast.ClassDef):
                    self.classes[f][node.name] = self._class(node, f)

    @staticmethod
    def _parse(text: str):
        """(module, repaired) of a config file; a comment line broken in two (the second half not starting with
        '#', as in one submitter's generated custom.py) is read as a comment. None when the file stays unreadable."""
        lines = text.splitlines()
        repaired = False
        for _ in range(50):
            try:
                return ast.parse("\n".join(lines)), repaired
            except SyntaxError as e:
                n = (e.lineno or 0) - 1
                if not (0 < n < len(lines) and lines[n - 1].lstrip().startswith("#")
                        and not lines[n].lstrip().startswith("#")):
                    return None
                lines[n] = "# " + lines[n]
                repaired = True
        return None

    @staticmethod
    def _class(node: ast.ClassDef, file: str) -> ConfigClass:
        attrs, regs = {}, []
        for st in node.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                attrs[st.targets[0].id] = st.value
        for dec in node.decorator_list:
            if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "register"
                    and len(dec.args) >= 3 and all(isinstance(a, ast.Attribute) for a in dec.args[:3])):
                regs.append(tuple(a.attr for a in dec.args[:3]))
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        return ConfigClass(node.name, file, bases, attrs, regs)

    def find(self, name: str, prefer: str | None = None) -> ConfigClass | None:
        """The class called ``name``, from ``prefer``'s file first, then custom.py, __init__.py, the base file."""
        order = ([prefer] if prefer else []) + self.files
        for f in order:
            if name in self.classes.get(f, {}):
                return self.classes[f][name]
        return None

    def get(self, cls: ConfigClass, attr: str, depth: int = 0):
        """The value of ``attr`` on ``cls`` or the nearest base that sets it; raises KeyError when none does."""
        if depth > 30:
            raise KeyError(attr)
        if attr in cls.attrs:
            return self._eval(cls.attrs[attr], cls)
        for b in cls.bases:
            base = self.find(b, cls.file)
            if base is None:
                continue
            try:
                return self.get(base, attr, depth + 1)
            except KeyError:
                continue
        raise KeyError(attr)

    def _eval(self, e, cls: ConfigClass):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Dict):
            return {self._eval(k, cls): self._eval(v, cls) for k, v in zip(e.keys, e.values)}
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return -self._eval(e.operand, cls)
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = self._eval(e.left, cls), self._eval(e.right, cls)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(e.op), a / b if b else math.nan)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            other = self.find(e.value.id, cls.file)
            if other is not None:
                return self.get(other, e.attr)
            return f"{e.value.id}.{e.attr}"  # KnownSystem.X, Scenario.Offline, ...
        raise Unresolved(ast.dump(e)[:80])

    def all_classes(self):
        """Every class of the set, custom.py's first."""
        for f in self.files:
            yield from self.classes[f].values()


def known_system_names(tree: GitTree, root: str) -> dict:
    """{normalised system id or name: KnownSystem member name} from code/common/systems/system_list.py
    (``add_systems(name_format, id_format, cpu, gpu, [counts], ...)``) and custom_list.py
    (``custom_systems['NAME'] = SystemConfiguration(..., system_id="ID")``)."""
    out = {}
    text = tree.read(f"{root}/code/common/systems/system_list.py") or ""
    try:
        nodes = list(ast.walk(ast.parse(text)))
    except SyntaxError:
        nodes = []
    for n in nodes:
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "add_systems"
                and len(n.args) >= 5 and all(isinstance(a, ast.Constant) for a in n.args[:2])
                and isinstance(n.args[4], ast.List)):
            for c in n.args[4].elts:
                if isinstance(c, ast.Constant):
                    name, sid = n.args[0].value.format(c.value), n.args[1].value.format(c.value)
                    out[norm(sid)] = name
                    out[norm(name)] = name
    text = tree.read(f"{root}/code/common/systems/custom_list.py") or ""
    for m in re.finditer(r"custom_systems\['([^']+)'\].*?system_id=\"([^\"]+)\"", text):
        out[norm(m.group(2))] = m.group(1)
        out[norm(m.group(1))] = m.group(1)
    return out


def norm(name: str) -> str:
    """A system name or id compared loosely: upper case, '-' as '_'."""
    return name.upper().replace("-", "_")


@dataclass
class Layout:
    """A result's engine and layout as its submission states them, with the sentence saying where from."""
    engine: str
    engine_version: str
    tp: int
    pp: int
    weight_dtype: str
    kv_dtype: str
    how: str
    ep: int = 1


def trtllm_version(tree: GitTree, root: str) -> tuple[str, str]:
    """(engine_version, sentence) from the submitter's Makefile.build: the TensorRT-LLM public commit it builds."""
    text = tree.read(f"{root}/Makefile.build") or ""
    release = re.search(r"^\s*USE_RELEASE_TRTLLM\s*\?=\s*(\d)", text, re.M)
    commit = re.search(r"^\s*TRTLLM_PUBLIC_HASH\s*=\s*([0-9a-f]{40})", text, re.M)
    if not (release and release.group(1) == "1" and commit):
        return "", "TensorRT-LLM build not stated in Makefile.build"
    h = commit.group(1)
    version = TRTLLM_VERSIONS.get(h, "")
    return version, (f"TensorRT-LLM {version + ' ' if version else ''}(public commit {h[:8]}, Makefile.build "
                     f"TRTLLM_PUBLIC_HASH)")


def nvidia_layout(tree: GitTree, root: str, system: str, bench_dir: str, scenario: str, n_gpus: int,
                  accelerator: str, sw_notes: str = "") -> Layout | str:
    """Layout of a result run by NVIDIA's harness (closed/<submitter>/configs/<benchmark>/<scenario>): the
    config class registered for the result's system, harness (Custom, or Triton for a ``_Triton`` system),
    accuracy target and power setting (``_MaxQ``); its tensor_parallelism, pipeline_parallelism,
    gpu_batch_size and use_fp8. A multi-node system without a class of its own takes its groups of GPUs from a
    launch script's GPU_RANK_MAP (JuniperNetworks' llama_configs). A one-GPU system without any config is TP1.
    Returns a reason (str) when the submission does not state the layout."""
    family = BENCHMARKS[bench_dir]
    harness = "Triton" if "_Triton" in system else "Custom"
    power = "MaxQ" if "MaxQ" in system else "MaxP"
    target = "k_99_9" if bench_dir.endswith("99.9") else "k_99"
    base_id = system.split("_TRT")[0]
    names = known_system_names(tree, root)
    want = names.get(norm(base_id), base_id)
    cfg = ConfigSet(tree, root, family, scenario)
    version, built = trtllm_version(tree, root)
    private = re.search(r"private git hash.*", sw_notes, re.I)
    if private:  # a preview result built from unpublished code: the Makefile's commit is not what ran
        version, built = "", f"a private TensorRT-LLM build (systems json sw_notes: '{private.group(0)}')"
    engine_note = (f"NVIDIA's harness on {built}, TensorRT engines built with trtllm-build "
                   f"(tensorrt_llm/commands/build.py)" + (", served through Triton's TensorRT-LLM backend"
                                                          if harness == "Triton" else ""))
    def registered(tgt):
        """The classes registered for (harness, ``tgt``, power) whose ``system`` is the result's."""
        found = []
        for c in cfg.all_classes():
            if (harness, tgt, power) not in c.registrations:
                continue
            try:
                sysname = cfg.get(c, "system")
            except (KeyError, Unresolved):
                continue
            if isinstance(sysname, str) and norm(sysname.split(".")[-1]) == norm(want):
                found.append(c)
        return found

    matches = registered(target)
    other_target = ""
    if not matches:
        # NVIDIA's high-accuracy classes only re-register the same engine (``pass``); a system whose class is
        # registered for the other accuracy target alone runs that engine
        alt = "k_99" if target == "k_99_9" else "k_99_9"
        matches = registered(alt)
        if matches:
            other_target = (f" (its only class for this system is registered for {alt}, not {target}: the same "
                            "engine, as NVIDIA's high-accuracy classes add nothing)")
    rel = lambda f: f.split("/", 2)[2]  # noqa: E731 (configs/... within the submitter's directory)
    if matches:
        vals = []
        for c in matches:
            try:
                tp = int(cfg.get(c, "tensor_parallelism"))
                pp = int(cfg.get(c, "pipeline_parallelism"))
            except (KeyError, Unresolved, TypeError, ValueError):
                return f"config class {c.name} ({rel(c.file)}): tensor/pipeline parallelism not readable"
            try:
                fp8 = bool(cfg.get(c, "use_fp8"))
            except (KeyError, Unresolved):
                fp8 = False
            try:
                bs = cfg.get(c, "gpu_batch_size")
                bs = bs.get(family, next(iter(bs.values()))) if isinstance(bs, dict) else bs
            except (KeyError, Unresolved, StopIteration):
                bs = None
            try:
                budget = cfg.get(c, "max_num_tokens")
            except (KeyError, Unresolved):
                budget = None
            vals.append((tp, pp, fp8, bs, budget, c))
        if len({v[:5] for v in vals}) > 1:
            return "config classes disagree: " + ", ".join(f"{v[5].name} ({rel(v[5].file)})" for v in vals)
        tp, pp, fp8, bs, budget, c = vals[0]
        if not fp8:
            return f"config class {c.name} does not set use_fp8 (FP16 engine not expected for this benchmark)"
        how = (f"{engine_note}; layout from {rel(c.file)} class {c.name} ({harness}, {target}, {power}){other_target}"
               + (" (a comment line broken in two read as a comment)" if c.file in cfg.repaired else "") + ": "
               f"tensor_parallelism {tp}, pipeline_parallelism {pp}"
               + (f", gpu_batch_size {bs} per engine" if bs else "") + (f", max_num_tokens {budget}" if budget else ""))
    else:
        layout = None
        for f in tree.files:
            if f.startswith(f"{root}/") and f.endswith(".sh") and "config" in f:
                text = tree.read(f) or ""
                sid = re.search(r'SYSTEM_ID="([^"]+)"', text)
                rank_map = re.search(r'GPU_RANK_MAP="([^"]+)"', text)
                if sid and rank_map and norm(sid.group(1)) == norm(base_id):
                    groups = [g.split(",") for g in rank_map.group(1).split("&")]
                    if len({len(g) for g in groups}) == 1 and len(groups) * len(groups[0]) == n_gpus:
                        layout = (len(groups[0]), f.split("/", 2)[2], len(groups))
        if layout is None:
            if n_gpus == 1:
                tp, pp = 1, 1
                how = f"{engine_note}; one GPU (no config class for this system in the submission)"
            else:
                return f"no config class registered for system {want} ({harness}, {target}, {power})"
        else:
            tp, pp = layout[0], 1
            how = (f"{engine_note}; {layout[2]} engines of TP{tp} from {layout[1]} (GPU_RANK_MAP); no config class "
                   f"for this multi-node system")
    if accelerator in FP4_ACCELERATORS:
        # documentation/calibration.md quantizes selected linear and MLP layers to FP4 on accelerators that support
        # it and the others to FP8, without saying which: no calc weight dtype names that mixture
        return ("weights of mixed FP4 and FP8 layers (documentation/calibration.md: 'selected' layers in FP4) that no "
                "calc weight dtype names; KV cache format not stated")
    else:
        wd, kv = "fp8", "fp8"
        how += ("; FP8 weights, activations and KV cache (documentation/calibration.md: 'KV Cache entries' quantized"
                + ("; code/llama2-70b/tensorrt/README.md quantizes with --kv_cache_dtype fp8)" if family == "llama2-70b"
                   else ")"))
    return Layout("trtllm", version, tp, pp, wd, kv, how)


# == v5.x configs (configs/<system>/<scenario>/<benchmark>.py, an ``EXPORTS`` dict) ==============================

def _field(key) -> str:
    """A config key as its bare field name: ``llm_fields.tensor_parallelism`` -> "tensor_parallelism"."""
    return key.split(".")[-1] if isinstance(key, str) else key


class _Exports:
    """Evaluates the module-level statements of one v5.x config file with ``ast`` (never running it): assignments
    to names and to ``name[key]``, dict literals with ``**`` unpacking, ``copy.deepcopy``, ``dict(...)``, and
    ``C.WorkloadSetting(C.HarnessType.X, C.AccuracyTarget(a), C.PowerSetting.Y)`` keys read as (X, a, Y).
    Keys naming fields (``llm_fields.tensor_parallelism``) become their bare names; a value this reader cannot
    evaluate becomes an ``Unresolved`` instance (so an unreadable field elsewhere does not hide the layout)."""

    def __init__(self, text: str):
        """Evaluate ``text``; raises SyntaxError when the file does not parse."""
        self.env = {}
        for st in ast.parse(text).body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                try:
                    v = self.ev(st.value)
                except Unresolved as e:
                    v = e
                if isinstance(t, ast.Name):
                    self.env[t.id] = v
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in self.env:
                    try:
                        self.env[t.value.id][_field(self.ev(t.slice))] = v
                    except (Unresolved, TypeError):
                        pass
            elif (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                  and isinstance(st.value.func, ast.Attribute) and st.value.func.attr == "update"
                  and isinstance(st.value.func.value, ast.Name) and st.value.func.value.id in self.env):
                try:
                    self.env[st.value.func.value.id].update(self.ev(st.value.args[0]))
                except (Unresolved, TypeError, IndexError, AttributeError):
                    pass

    def ev(self, e):
        """The value of expression ``e``; raises Unresolved."""
        import copy
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Dict):
            out = {}
            for k, v in zip(e.keys, e.values):
                if k is None:
                    out.update(self.ev(v))
                    continue
                try:
                    val = self.ev(v)
                except Unresolved as err:
                    val = err
                out[_field(self.ev(k))] = val
            return out
        if isinstance(e, (ast.List, ast.Tuple)):
            return [self.ev(x) for x in e.elts]
        if isinstance(e, ast.Name):
            if e.id in self.env:
                return self.env[e.id]
            raise Unresolved(e.id)
        if isinstance(e, ast.Attribute):
            inner = e.value
            names = [e.attr]
            while isinstance(inner, ast.Attribute):
                names.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name):
                return ".".join([inner.id] + names[::-1])
            raise Unresolved(ast.dump(e)[:80])
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return -self.ev(e.operand)
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = self.ev(e.left), self.ev(e.right)
            return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b}[type(e.op)]()
        if isinstance(e, ast.Call):
            fn = self.ev(e.func) if isinstance(e.func, (ast.Attribute, ast.Name)) and not (
                isinstance(e.func, ast.Name) and e.func.id == "dict") else "dict"
            if isinstance(fn, str) and fn.endswith("WorkloadSetting"):
                args = [self.ev(a) for a in e.args]
                return tuple(_field(a) if isinstance(a, str) else a for a in args)
            if isinstance(fn, str) and fn.endswith("AccuracyTarget") and e.args:
                return self.ev(e.args[0])
            if fn in ("copy.deepcopy", "copy.copy", "deepcopy") and e.args:
                return copy.deepcopy(self.ev(e.args[0]))
            if fn == "dict":
                out = dict(self.ev(e.args[0])) if e.args else {}
                for kw in e.keywords:
                    if kw.arg is None:
                        out.update(self.ev(kw.value))
                    else:
                        out[kw.arg] = self.ev(kw.value)
                return out
        raise Unresolved(ast.dump(e)[:80])


def exports_settings(text: str) -> dict:
    """{(harness, accuracy target, power setting): {field: value}} of a v5.x config file's ``EXPORTS``
    (harness "Custom" or "Triton", accuracy 0.99 or 0.999, power "MaxP" or "MaxQ"). Raises SyntaxError when the file
    does not parse and Unresolved when it has no readable ``EXPORTS`` dict."""
    ex = _Exports(text).env.get("EXPORTS")
    if not isinstance(ex, dict):
        raise Unresolved("no EXPORTS dict")
    return {k: v for k, v in ex.items() if isinstance(k, tuple) and isinstance(v, dict)}


def _exports_text(text: str, v6: bool = False) -> tuple[str, str]:
    """(text, what was repaired) of a config file: from v6.0 on, a stray character before the first line's
    ``import`` (Dell's configs/XE7740_RTXPro6000_PCIe_96GBx8/Server/llama2-70b.py begins "~import") is dropped, the
    rest of the file read as it stands."""
    if v6:
        first, _, rest = text.partition("\n")
        m = re.match(r"^([^\w\s#])+(?=(?:import|from)\s)", first)
        if m:
            return first[m.end():] + "\n" + rest, f" (a stray {m.group(0)!r} before the first line's import dropped)"
    return text, ""


def _exports_entry(settings: dict, harness: str, target: float, power: str):
    """(the EXPORTS entry for (harness, target, power), or the other accuracy target's, and the sentence saying
    so); (None, "") when neither is there."""
    cfg = settings.get((harness, target, power))
    if cfg is not None:
        return cfg, ""
    alt = 0.99 if target == 0.999 else 0.999
    cfg = settings.get((harness, alt, power))
    return cfg, (f" (its only entry for this system is for accuracy target {alt}, not {target})" if cfg is not None
                 else "")


def _bench_key(name: str) -> str:
    """A benchmark named loosely ("Llama3.1-405b", "llama3_1-405b", "GPT-OSS-120b"): lower case, '.' and '_' as '-'."""
    return re.sub(r"[._]", "-", name.strip().lower())


def scaleout_runs(tree: GitTree, root: str) -> list:
    """The commands of a submitter's scaleout/REPRODUCE.md (NVIDIA's harness, v6.0): one dict per command with its
    benchmark ("## " header or ``--benchmarks=``), scenario (``--scenarios=`` / ``--scenario`` or the comment line
    above it), kind ("aggregated" for scaleout/run_scaleout.sh, "disaggregated" for run_scaleout_disagg.py and the
    *_disagg.sh scripts), the system it runs (``--harness-system``, else ``--atomic-system`` ending x<N> with N x
    ``--dp-multiplicity``; for a disaggregated command without one, the "### GB200x72" header as (chip, GPUs)),
    the atomic system and multiplicity, and the command's text."""
    text = tree.read(f"{root}/scaleout/REPRODUCE.md")
    if not text:
        return []
    runs, bench, head, comment, cmd = [], "", None, "", None
    for line in text.splitlines() + [""]:
        st = line.strip()
        if cmd is not None:
            cmd += " " + st.rstrip("\\").strip()
            if st.endswith("\\"):
                continue
            runs.append(dict(bench=bench, head=head, comment=comment, text=cmd))
            cmd = None
            continue
        if st.startswith("## "):
            bench, head = st[3:].strip(), None
        elif st.startswith("### "):
            m = re.match(r"###\s+(\w+?)x(\d+)\s*$", st)
            head = (m.group(1), int(m.group(2))) if m else None
        elif st.startswith("# ") and re.match(r"#\s+(Offline|Server|Interactive)\b", st):
            comment = st[2:]
        elif re.search(r"run_scaleout\S*\.(?:sh|py)|_disagg\.sh", st) and not st.startswith("#"):
            cmd = st.rstrip("\\").strip()
            if not st.endswith("\\"):
                runs.append(dict(bench=bench, head=head, comment=comment, text=cmd))
                cmd = None
    out = []
    for r in runs:
        t = r["text"]
        arg = lambda name: (re.search(rf"--{name}[= ]([^\s\"]+)", t) or [None, None])[1]  # noqa: E731
        b = re.search(r"--benchmarks=([^\s\"]+)", t)
        sc = re.search(r"--scenarios?[= ]([A-Za-z]+)", t)
        scenario = sc.group(1) if sc else (r["comment"].split()[0] if r["comment"] else "")
        kind = "disaggregated" if ("disagg" in t or "disaggregated" in r["comment"].lower()) else "aggregated"
        atomic, mult = arg("atomic-system"), arg("dp-multiplicity")
        system = arg("harness-system")
        if system is None and atomic and mult and re.search(r"x\d+$", atomic):
            n = int(re.search(r"x(\d+)$", atomic).group(1))
            system = re.sub(r"x\d+$", f"x{n * int(mult)}", atomic)
        out.append(dict(bench=_bench_key(b.group(1) if b else r["bench"]), scenario=scenario.capitalize(), kind=kind,
                        system=system, head=r["head"], atomic=atomic, mult=int(mult) if mult else None, text=t))
    return out


def scaleout_run(tree: GitTree, root: str, system: str, family: str, scenario: str):
    """The scaleout/REPRODUCE.md command that ran ``scenario`` of ``family`` on ``system`` (its name without _TRT),
    or None (``scaleout_runs``)."""
    want = _bench_key(CONFIG_NAMES[family])
    for r in scaleout_runs(tree, root):
        if r["bench"] != want or r["scenario"] != scenario:
            continue
        if r["system"] is not None:
            if norm(r["system"]) == norm(system):
                return r
        elif r["head"] and norm(system).startswith(norm(r["head"][0])) and re.search(rf"x{r['head'][1]}$", system):
            return r
    return None


def _speculative(runtime) -> str:
    """The words the notes give a config's speculative decoding (trtllm_runtime_flags ``speculative_decoding``,
    which NVIDIA's code/llmlib/config.py passes to trtllm-serve as its speculative_config), "" when it is off."""
    spec = runtime.get("speculative_decoding") if isinstance(runtime, dict) else None
    if not isinstance(spec, dict) or not spec.get("decoding_type"):
        return ""
    kind = str(spec["decoding_type"])
    layers = spec.get("num_nextn_predict_layers")
    draft = spec.get("max_draft_len") or spec.get("max_total_draft_tokens")
    stated = ", ".join(f"{k} {spec[k]}" for k in ("decoding_type", "num_nextn_predict_layers", "max_draft_len",
                                                   "max_total_draft_tokens") if spec.get(k) is not None)
    if kind.upper() == "MTP" and layers:
        head = f"speculative decoding on (MTP, {int(layers)} next-n layers"
    else:
        head = f"speculative decoding on ({kind}" + (f", {int(draft)} draft tokens" if draft else "")
    return f"{head}: trtllm_runtime_flags speculative_decoding {stated})"


def exports_layout(tree: GitTree, root: str, system: str, bench_dir: str, scenario: str, n_gpus: int,
                   accelerator: str, family: str, sw_notes: str = "", v6: bool = False,
                   framework: str = "") -> Layout | str:
    """Layout of a v5.x result run by NVIDIA's harness: configs/<system>/<scenario>/<benchmark>.py (the system's
    directory named as the result's system, without ``_TRT``, or its KnownSystem name), the ``EXPORTS`` entry for
    the result's harness (Custom, or Triton for a ``_Triton`` system), accuracy target and power setting (``MaxQ``
    systems); its tensor_parallelism, pipeline_parallelism, moe_expert_parallelism, precision, the checkpoint's
    kv_cache_dtype, gpu_batch_size and enable_attention_dp. An entry for the other accuracy target alone is taken
    (NVIDIA's configs give the 99.9 target the same engine). Returns a reason (str) when none states the layout.

    From v6.0 on (``v6``), also: configs kept under the submitter's src/ (Lenovo's src/<systems>/configs/); a
    config that stated no layout of its own is one of a system run by scaleout/run_scaleout.sh, whose command in the
    submitter's scaleout/REPRODUCE.md names the atomic system (one data-parallel rank) and its multiplicity: the
    engine's layout and settings are then the atomic system's config (the harness system's config sets LoadGen's);
    a run that REPRODUCE.md runs disaggregated (run_scaleout_disagg.py, *_disagg.sh) or whose config sets a
    ``dynamo_cluster`` of prefill and decode workers is skipped, as is one that no command names; a config whose
    first line has a stray character before ``import`` is read without it; speculative decoding
    (``speculative_decoding`` of trtllm_runtime_flags: MTP with its next-n layers) and attention-DP balancing (the
    ``attention_dp_config`` enable_balance and timeout_iters that code/llmlib/config.py builds from
    ``adp_balancing_*``, on by default) are written into the notes; gpt-oss-120b's precision fp4 is its checkpoint's
    MXFP4 (NVIDIA's src/gpt-oss-120b/tensorrt/builder.py points the quantizer at the released checkpoint)."""
    harness = "Triton" if "_Triton" in system else "Custom"
    power = "MaxQ" if "MaxQ" in system else "MaxP"
    target = 0.999 if bench_dir.endswith("99.9") else 0.99
    base = re.sub(r"(_TRT|_Triton|_MaxQ|_TRT_TRT)+$", "", system)
    names = known_system_names(tree, root)
    dirs = []
    for d in (system, re.sub(r"_TRT$", "", system), base, names.get(norm(base), base), system.split("_TRT")[0]):
        if d not in dirs:
            dirs.append(d)
    stems = [CONFIG_NAMES[family]] + ([CONFIG_NAMES[family] + "-interactive"] if scenario == "Interactive" else [])
    path = None
    for d in dirs:
        for stem in stems:
            f = f"{root}/configs/{d}/{scenario}/{stem}.py"
            if tree.exists(f):
                path = f
                break
        if path:
            break
    if path is None and v6:
        for d in dirs:
            for stem in stems:
                tail = f"/configs/{d}/{scenario}/{stem}.py"
                hits = sorted(f for f in tree.files if f.startswith(f"{root}/src/") and f.endswith(tail))
                if hits:
                    path = hits[0]
                    break
            if path:
                break
    if path is None:
        return f"no configs/<system>/{scenario}/{CONFIG_NAMES[family]}.py for {system} (looked in {', '.join(dirs)})"
    rel = path.split("/", 2)[2]
    text, repaired = _exports_text(tree.read(path) or "", v6)
    try:
        settings = exports_settings(text)
    except (SyntaxError, Unresolved) as e:
        return f"{rel}: EXPORTS not readable ({e})"
    cfg, other = _exports_entry(settings, harness, target, power)
    if cfg is None:
        return f"{rel}: no EXPORTS entry for ({harness}, {target}, {power})"

    def val(key, default=None):
        v = cfg.get(key, default)  # the atomic system's config, once a scaleout command names one (below)
        return default if isinstance(v, Unresolved) else v
    source = f"{rel} EXPORTS ({harness}, {target}, {power}){other}{repaired}"
    scaled = ""
    if v6 and isinstance(val("dynamo_cluster"), dict):
        dc = val("dynamo_cluster")
        pools = "; ".join(f"{dc.get(f'num_{k}_workers')} {k} worker(s) of {(dc.get(k) or {}).get('system')}"
                          for k in ("prefill", "decode"))
        return (f"{rel}: disaggregated serving through NVIDIA Dynamo (dynamo_cluster: {pools}): prefill and decode "
                "on separate GPUs, which a row's one layout (tp, pp, ep, dp) cannot state")
    if v6 and val("tensor_parallelism") is None:
        run = scaleout_run(tree, root, base, family, scenario)
        if run is None:
            return (f"{rel}: tensor/pipeline parallelism not stated, and no scaleout/REPRODUCE.md command runs "
                    f"{base}'s {scenario}")
        if run["kind"] == "disaggregated":
            return (f"{rel}: tensor/pipeline parallelism not stated; scaleout/REPRODUCE.md runs it disaggregated "
                    f"('{run['text'][:160]}'): prefill and decode on separate GPUs, which a row's one layout "
                    "(tp, pp, ep, dp) cannot state")
        atomic_path = f"{root}/configs/{run['atomic']}/{scenario}/{CONFIG_NAMES[family]}.py"
        atomic_rel = atomic_path.split("/", 2)[2]
        if not tree.exists(atomic_path):
            return (f"{rel}: tensor/pipeline parallelism not stated, and {atomic_rel} (the atomic system of "
                    "scaleout/REPRODUCE.md's command) is not in the submission")
        a_text, a_repaired = _exports_text(tree.read(atomic_path) or "", v6)
        try:
            a_cfg, a_other = _exports_entry(exports_settings(a_text), harness, target, power)
        except (SyntaxError, Unresolved) as e:
            return f"{atomic_rel}: EXPORTS not readable ({e})"
        if a_cfg is None:
            return f"{atomic_rel}: no EXPORTS entry for ({harness}, {target}, {power})"
        cfg = a_cfg
        scaled = (f" of the atomic system {run['atomic']}, which scaleout/REPRODUCE.md's run_scaleout.sh runs as "
                  f"{run['mult']} data-parallel ranks for this system (--atomic-system {run['atomic']} "
                  f"--dp-multiplicity {run['mult']}; LoadGen's settings from {source})")
        source = f"{atomic_rel} EXPORTS ({harness}, {target}, {power}){a_other}{a_repaired}"
    build = val("trtllm_build_flags", {}) or {}
    runtime = val("trtllm_runtime_flags", {}) or {}
    ckpt = val("trtllm_checkpoint_flags", {}) or {}
    try:
        tp = int(val("tensor_parallelism"))
        pp = int(val("pipeline_parallelism", 1))
        ep = int(val("moe_expert_parallelism", 1) or 1)
    except (TypeError, ValueError):
        return f"{rel}: tensor/pipeline parallelism not stated"
    if scaled:
        n_atomic = int(re.search(r"x(\d+)$", run["atomic"]).group(1))
        if tp * pp != n_atomic or n_atomic * run["mult"] != n_gpus:
            return (f"{source}: TP{tp} x PP{pp} is not the atomic system's {n_atomic} GPU(s), or {run['mult']} of "
                    f"them are not the system's {n_gpus}")
    precision = val("precision")
    if isinstance(precision, dict):
        precision = next(iter(precision.values()), None)
    wd = {"fp4": "nvfp4", "fp8": "fp8"}.get(str(precision).lower())
    if wd is None:
        return f"{rel}: precision {precision!r} is no calc weight dtype"
    if wd == "nvfp4" and "fp4" not in get_accelerator(accelerator).peak_flops_per_s:
        return f"{rel}: precision fp4 on {accelerator}, which has no fp4 tensor cores in calc"
    weights = f"{wd} weights"
    if v6 and family == "gpt-oss-120b" and wd == "nvfp4":
        wd, weights = "mxfp4", ("the released checkpoint's MXFP4 experts: src/gpt-oss-120b/tensorrt/builder.py points "
                                "the quantizer at the existing checkpoint, skipping quantization")
    kv = str(ckpt.get("kv_cache_dtype", "")).lower() if isinstance(ckpt, dict) else ""
    kv = kv if kv in ("fp8", "fp16", "bf16", "nvfp4") else ""
    bs = val("gpu_batch_size")
    bs = next(iter(bs.values()), None) if isinstance(bs, dict) else bs
    budget = runtime.get("max_num_tokens") if isinstance(runtime, dict) else None
    adp = bool((isinstance(build, dict) and build.get("enable_attention_dp"))
               or (isinstance(runtime, dict) and runtime.get("enable_attention_dp")))
    _, built = trtllm_version(tree, root)
    mk = tree.read(f"{root}/Makefile.build") or ""
    h = re.search(r"^\s*TRTLLM_HASH\s*\??=\s*([0-9a-f]{40})", mk, re.M)
    if built.startswith("TensorRT-LLM build not stated") and h:
        built = f"TensorRT-LLM commit {h.group(1)[:8]} (Makefile.build TRTLLM_HASH)"
    private = re.search(r"private git hash.*", sw_notes, re.I)
    if private:
        built = f"a private TensorRT-LLM build (systems json sw_notes: '{private.group(0)}')"
    named = re.search(r"TensorRT-LLM\s+([^,;]+)", framework)
    if v6 and built.startswith("TensorRT-LLM build not stated") and named:
        built = f"TensorRT-LLM {named.group(1).strip()} (systems json framework; Makefile.build names no commit)"
    balance = ""
    if v6 and adp and isinstance(runtime, dict) and runtime.get("adp_balancing_enable", True) is not False:
        # code/llmlib/config.py: attention_dp_config from adp_balancing_enable (default True), _timeout_iters (500)
        balance = (f"; attention-DP balancing on (attention_dp_config enable_balance, timeout_iters "
                   f"{int(runtime.get('adp_balancing_timeout_iters', 500))}, batching_wait_iters "
                   f"{int(runtime.get('adp_balancing_batching_wait_iters', 10))}: code/llmlib/config.py from "
                   "trtllm_runtime_flags adp_balancing_*)")
    how = (f"NVIDIA's harness on {built}; layout from {source}{scaled}: "
           f"tensor_parallelism {tp}, pipeline_parallelism {pp}"
           + (f", moe_expert_parallelism {ep}" if ep > 1 else "")
           + (", enable_attention_dp True (attention data-parallel over the TP group's GPUs, experts split EP"
              f"{ep}: written as TP1 x {tp} attention replicas)" if adp else "")
           + (f", gpu_batch_size {bs} per engine" if bs else "") + (f", max_num_tokens {budget}" if budget else "")
           + f"; precision {precision} ({weights}), kv_cache_dtype {kv or 'not stated'}"
           + balance + (f"; {_speculative(runtime)}" if v6 and _speculative(runtime) else ""))
    if adp:
        tp = 1
    return Layout("trtllm", "", tp, pp, wd, kv, how, ep=ep)


def vllm_layout(tree: GitTree, root: str, bench_dir: str, scenario: str, framework: str) -> Layout | str:
    """Layout of AMD's vLLM harness (AMD's and Dell's MI300X results): TP from
    code/<benchmark>/test_VllmFp8/test_VllmFp8_<Offline or the Server variant run_tests_Server.sh runs>_perf.sh
    (``TP=``), FP8 weights (Quark w_fp8_a_fp8_o_fp8), ``--kv-cache-dtype fp8``, and ``--enforce-eager True``
    where the script sets it (no graphs: the row's notes say "eager")."""
    code = f"{root}/code/{bench_dir}/test_VllmFp8"
    if scenario == "Server":
        runner = tree.read(f"{code}/run_tests_Server.sh") or ""
        m = re.search(r"^\s*(?:ITER=\S+\s+)?(?:bash\s+|\./)test_VllmFp8_(\w+)_perf\.sh", runner, re.M)
        variant = m.group(1) if m else None
    else:
        variant = "Offline"
    script = tree.read(f"{code}/test_VllmFp8_{variant}_perf.sh") if variant else None
    if not script:
        return f"no test_VllmFp8 performance script for {scenario} in {code}"
    tp = re.search(r"^TP=(\d+)", script, re.M)
    if not tp:
        return f"{code}/test_VllmFp8_{variant}_perf.sh does not set TP"
    kv = re.search(r"--kv-cache-dtype\s+(\w+)", script)
    quant = re.search(r"--quantization\s+(\w+)", script)
    if not (quant and quant.group(1) == "fp8"):
        return "the vLLM script does not quantize to fp8"
    eager = re.search(r"--enforce-eager\s+True", script) is not None
    version = re.search(r"vLLM\s+(\d+\.\d+\.\d+)([^\s,;]*)", framework)
    how = (f"AMD's vLLM harness, vLLM {version.group(1) + version.group(2) if version else '(version not stated)'} "
           f"(systems json framework); code/{bench_dir}/test_VllmFp8/test_VllmFp8_{variant}_perf.sh: TP={tp.group(1)}, "
           f"one vLLM instance per TP group, --quantization fp8 (Quark w_fp8_a_fp8_o_fp8), --kv-cache-dtype "
           f"{kv.group(1) if kv else 'not set'}"
           + ("; --enforce-eager True (eager mode, no graphs)" if eager else ""))
    return Layout("vllm", version.group(1) if version else "", int(tp.group(1)), 1, "fp8",
                  kv.group(1) if kv else "", how)


#: AMD's harness_llm (MLPerf Inference v5.x): each model's folder under code/<benchmark>/harness_llm/models.
HARNESS_LLM_MODELS = {"llama2-70b": "llama2-70b", "mixtral-8x7b": "mixtral-8x7b"}


def _merged(base: dict, more: dict) -> dict:
    """``base`` updated by ``more`` one level down (a harness config's sections)."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for k, v in more.items():
        out[k] = dict(out.get(k) or {}, **v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def harness_llm_layout(tree: GitTree, root: str, bench_dir: str, scenario: str, accelerator: str, family: str,
                       framework: str, anywhere: bool = False) -> Layout | str:
    """Layout of AMD's harness_llm (AMD's and its partners' MI300X, MI325X and MI355X results from v5.0 on):
    code/<benchmark>/harness_llm/models/<model>/<scenario>_<accelerator>.yaml over harness_llm/common/config.yaml
    (the model file's keys win): ``vllm_engine_config``'s tensor_parallel_size (one vLLM instance per TP group),
    quantization (fp8; quark with an MXFP4 checkpoint, named in its model path, is mxfp4), kv_cache_dtype,
    num_scheduler_steps (vLLM V0's multi-step scheduling, written into the notes as ``--num-scheduler-steps N``,
    which ``calc.serving_terms.multi_step_steps`` reads), max_num_seqs, enforce_eager (eager mode: the notes say
    "eager", and the serving model leaves the row out, as it does every run without CUDA graphs), and
    ``vllm_env_config``'s VLLM_USE_V1 (0: the V0 engine). The harness's own scheduler
    (VLLM_LLAMA2_MLPERF_SCHED and its target decode batches) is quoted, not modelled. ``anywhere`` (v6.0): the
    harness_llm folder may lie anywhere in the submitter's folder (Dell's src_mi300x/<benchmark>/harness_llm)."""
    model_dir = HARNESS_LLM_MODELS.get(family)
    if model_dir is None:
        return f"AMD's harness_llm: no model folder known for {family}"
    name = f"{scenario.lower()}_{accelerator}.yaml"
    wanted = f"{root}/code/{bench_dir}/harness_llm/models/{model_dir}/{name}"
    # a submitter may keep every model under one benchmark's folder (Dell: code/llama2-70b-99.9/.../mixtral-8x7b)
    under = f"{root}/" if anywhere else f"{root}/code/"
    if anywhere:
        wanted = next((f for f in tree.files if f.startswith(under) and f.endswith(
            f"/{bench_dir}/harness_llm/models/{model_dir}/{name}")), wanted)
    found = [wanted] if tree.exists(wanted) else sorted(
        f for f in tree.files if f.startswith(under) and f.endswith(f"/harness_llm/models/{model_dir}/{name}"))
    if not found:
        return f"AMD's harness_llm has no {model_dir}/{name} under {under.rstrip('/')}"
    path = found[0]
    try:
        conf = yaml.safe_load(tree.read(path) or "") or {}
        common_path = path.split("/harness_llm/")[0] + "/harness_llm/common/config.yaml"
        common = yaml.safe_load(tree.read(common_path) or "") or {}
    except Exception as exc:  # noqa: BLE001 - a submitter's file that is not YAML is named, not raised
        return f"{path} is not readable YAML ({type(exc).__name__})"
    merged = _merged(common, conf)
    engine, env = merged.get("vllm_engine_config") or {}, merged.get("vllm_env_config") or {}
    tp = engine.get("tensor_parallel_size")
    if not isinstance(tp, int) or tp < 1:
        return f"{path} sets no tensor_parallel_size"
    quant, model_path = str(engine.get("quantization")), str(engine.get("model", ""))
    if quant == "fp8":
        weights = "fp8"
    elif quant == "quark" and "MXFP4" in model_path.upper():
        weights = "mxfp4"
    else:
        return f"{path}: weights of quantization {quant!r} (model {model_path!r}) are not read"
    kv = str(engine.get("kv_cache_dtype") or "")
    steps = int(engine.get("num_scheduler_steps") or 1)
    eager = engine.get("enforce_eager") is True
    v1 = env.get("VLLM_USE_V1")
    version = re.search(r"vllm[- ]v?(\d+\.\d+\.\d+)", framework, re.I)
    rel = path.split("/", 2)[2] if anywhere else "code/" + path.split("/code/", 1)[1]
    how = (f"AMD's harness_llm, vLLM {version.group(1) if version else '(version not stated)'} (systems json "
           f"framework); {rel} over harness_llm/common/config.yaml: tensor_parallel_size {tp}, one vLLM instance "
           f"per TP group, quantization {quant} ({model_path.rstrip('/').split('/')[-1]}), kv_cache_dtype "
           f"{kv or 'not set'}, --num-scheduler-steps {steps}"
           + (" (multi-step scheduling)" if steps > 1 else "")
           + (f", VLLM_USE_V1={v1} (the V0 engine)" if str(v1) == "0" else "")
           + f", max_num_seqs {engine.get('max_num_seqs', 'not set')}, enable_chunked_prefill "
           f"{engine.get('enable_chunked_prefill', 'not set')}"
           + (f", the harness's own scheduler (VLLM_LLAMA2_MLPERF_SCHED, target decode batch "
              f"{env.get('VLLM_LLAMA2_MLPERF_MIN_TARGET_DECODE_BATCH')}-{env.get('VLLM_LLAMA2_MLPERF_MAX_TARGET_DECODE_BATCH')})"
              if env.get("VLLM_LLAMA2_MLPERF_SCHED") else "")
           # a run with graphs names no eager setting: the serving model reads the word "eager" as a run without
           + ("; enforce_eager True (eager mode, no graphs)" if eager else ", CUDA graphs on"))
    return Layout("vllm", version.group(1) if version else "", tp, 1, weights, kv, how)


def _result_readme(tree: GitTree, root: str, system: str, bench_dir: str, scenario: str) -> dict:
    """What a v6.0 AMD-harness result's README.md (results/<system>/<benchmark>/<scenario>/README.md) says of its run:
    the ``--config-name`` of its first (performance) command, its ``harness_config.device_count``, and the
    ``--config-name`` of a worker node's command (``node_id=``), where it states them."""
    text = ""
    for scen in (scenario, scenario.lower()):
        text = tree.read(f"{root}/results/{system}/{bench_dir}/{scen}/README.md") or ""
        if text:
            break
    out = {}
    head = re.search(r"--config-name[= ](\S+)", text)
    if head:
        out["config"] = head.group(1)
    where = re.search(r"--config-path[= ](\S+)", text)
    if where:
        out["config_path"] = where.group(1)
    count = re.search(r"harness_config\.device_count=(\d+)", text)
    if count:
        out["device_count"] = int(count.group(1))
    for line in text.splitlines():
        if "node_id=" in line:
            m = re.search(r"--config-name[= ](\S+)", line)
            if m:
                out["worker_config"] = m.group(1)
                break
    return out


def _setup_build(tree: GitTree, root: str, bench_dirs) -> tuple[str, str]:
    """(vLLM version, sentence) of the docker build a submitter's setup/<benchmark>/build_docker.sh makes: its
    ``CONFIG_FILE``'s DOCKER_BASE_IMAGE ("rocm/vllm:v0.14.0_amd_dev" is 0.14.0, "rocm/vllm-dev:preview_0.14_..." a
    preview of 0.14) and the vLLM commit it checks out (VLLM_REV of VLLM_URL); ("", "") when the submission has none."""
    for bench in bench_dirs:
        build = tree.read(f"{root}/setup/{bench}/build_docker.sh")
        if not build:
            continue
        name = re.search(r'CONFIG_FILE="([^"]+)"', build)
        conf = tree.read(f"{root}/setup/{bench}/{name.group(1)}") if name else None
        if not conf:
            continue
        image = re.search(r"DOCKER_BASE_IMAGE=(\S+)", conf)
        rev, url = re.search(r'VLLM_REV="?([0-9a-f]+)', conf), re.search(r'VLLM_URL="?([^"\s]+)', conf)
        tag = image.group(1) if image else ""
        release = re.search(r":v?(\d+\.\d+\.\d+)", tag)
        preview = re.search(r"preview_(\d+\.\d+(?:\.\d+)?)", tag)
        version = release.group(1) if release else preview.group(1) if preview else ""
        if not version:
            continue
        what = (f"vLLM {version}{' (a preview of ' + version + ')' if preview and not release else ''} by "
                f"setup/{bench}/{name.group(1)} (build_docker.sh's CONFIG_FILE): DOCKER_BASE_IMAGE {tag}"
                + (f", VLLM_REV {rev.group(1)} of {url.group(1) if url else 'vLLM'}" if rev else ""))
        return version, what
    return "", ""


def _mxfp4_source(tree: GitTree, root: str, bench_dirs, model_path: str) -> str:
    """Where a submission says that its Quark checkpoint at ``model_path`` (a path naming fp4) holds MXFP4 weights:
    its setup/<benchmark>/dataset_and_model/prepare_model.sh quantizing with a Quark MXFP4 scheme
    (w_mxfp4_a_mxfp4, mxfp4_fp8) or downloading AMD's prequantized MXFP4 checkpoint, else its
    documentation/calibration.md naming OCP MXFP4, else AMD's own prepare_model.sh of the round (a partner that
    ships AMD's harness without it); "" when none does."""
    def scheme(r):
        for bench in bench_dirs:
            text = tree.read(f"{r}/setup/{bench}/dataset_and_model/prepare_model.sh") or ""
            found = re.findall(r"--quant_scheme\s+(\S*mxfp4\S*)", text)
            ready = re.findall(r"MODEL=(amd/\S*(?:MXFP4|mxfp4)\S*)", text)
            kept = re.search(r'EXCLUDE_LAYERS="([^"]+)"', text)
            if found or ready:
                return (f"setup/{bench}/dataset_and_model/prepare_model.sh: Quark --quant_scheme "
                        f"{', '.join(dict.fromkeys(found)) or 'not shown'}"
                        + (f" with --exclude_layers {kept.group(1)}" if kept else "")
                        + (f", or the prequantized {', '.join(dict.fromkeys(ready))}" if ready else ""))
        return ""
    own = scheme(root)
    if own:
        return own
    cal = tree.read(f"{root}/documentation/calibration.md") or ""
    if "MXFP4" in cal:
        return "documentation/calibration.md: 'OCP MXFP4' weights"
    division = root.split("/")[0]
    amd = scheme(f"{division}/AMD") if root != f"{division}/AMD" else ""
    return f"AMD's {amd} (this submission ships no quantization script)" if amd else ""


def amd_src_layout(tree: GitTree, root: str, system: str, bench_dir: str, scenario: str, accelerator: str,
                   family: str, framework: str, n_gpus: int, nodes: int) -> Layout | str:
    """Layout of AMD's harness in its v6.0 form (AMD's and its partners' MI355X results): src/<benchmark>/
    <config>.yaml over src/harness_llm/common/config.yaml (OmegaConf.merge in harness_llm/common/config_parser.py:
    the model file's keys win). The config is the one the result's README.md runs (``--config-name``), else
    <scenario>_<accelerator>.yaml, with ``_mn`` on a multi-node system (the zmq backend's head and worker nodes);
    the README's ``harness_config.device_count`` must be the system's GPUs. Read: ``vllm_engine_config``'s
    tensor_parallel_size (one vLLM instance per TP group), quantization (fp8; quark with a model path naming fp4 is
    MXFP4 where the submission says so: ``_mxfp4_source``), kv_cache_dtype (the common file's fp8 where the model
    file sets none), enforce_eager, max_num_seqs, max_num_batched_tokens, async_scheduling, num_scheduler_steps, and
    ``vllm_env_config``'s VLLM_USE_V1 and the decode-step knobs of AMD's vLLM patch (VLLM_SUBSEQUENT_DECODE_STEPS,
    VLLM_MIN_REQUEST_DECODE_STEP: waiting prompts are admitted on one scheduler step in N + 1 while the running
    batch holds at least M; quoted, not modelled). The vLLM version comes from the systems json framework string,
    else the setup/<benchmark>/build_docker.sh build (``_setup_build``). A pruned model (a config or model path
    naming "pruned") is skipped."""
    readme = _result_readme(tree, root, system, bench_dir, scenario)
    name = readme.get("config") or f"{scenario.lower()}_{accelerator}" + ("_mn" if nodes > 1 else "")
    how_named = (f"the result's README.md runs --config-name {name}" if readme.get("config") else
                 f"<scenario>_<accelerator>{'_mn (a multi-node system)' if nodes > 1 else ''}.yaml: the result's "
                 "README.md names no config")
    if "pruned" in name.lower():
        return f"AMD's harness: the README runs {name}, a pruned model (layers dropped), not calc's {family}"
    if readme.get("device_count") and readme["device_count"] != n_gpus:
        return (f"the result's README.md runs harness_config.device_count={readme['device_count']}, not the "
                f"system's {n_gpus} GPUs")
    bench_dirs = [bench_dir] + (["llama2-70b-99"] if family == "llama2-70b" and bench_dir != "llama2-70b-99" else [])

    def find(cfg_name):
        for bench in bench_dirs:
            want = f"{root}/src/{bench}/{cfg_name}.yaml"
            if tree.exists(want):
                return want
            # a file named in other letter case (ORACLE's interactive_MI355X.yaml for --config-name interactive_mi355x)
            other = [f for f in tree.files if f.lower() == want.lower()]
            if len(other) == 1:
                return other[0]
        return None
    path = find(name)
    if path is None:
        have = sorted(f.rsplit("/", 1)[1] for f in tree.files
                      if f.startswith(f"{root}/src/{bench_dir}/") and f.endswith(".yaml") and f.count("/") == 4)
        return (f"AMD's harness: no src/{bench_dir}/{name}.yaml in {root} ({how_named}; the folder has "
                f"{', '.join(have) or 'no yaml'})")
    rel = path.split("/", 2)[2]
    if not path.endswith(f"/{name}.yaml"):
        how_named += f"; the file is named {path.rsplit('/', 1)[1]}"
    common_path = f"{root}/src/harness_llm/common/config.yaml"
    try:
        conf = yaml.safe_load(tree.read(path) or "") or {}
        common = yaml.safe_load(tree.read(common_path) or "") or {}
    except Exception as exc:  # noqa: BLE001 - a submitter's file that is not YAML is named, not raised
        return f"{rel} is not readable YAML ({type(exc).__name__})"
    if not common:
        return f"AMD's harness: {root} has no src/harness_llm/common/config.yaml under {rel}"
    merged = _merged(common, conf)
    engine, env = merged.get("vllm_engine_config") or {}, merged.get("vllm_env_config") or {}
    own = conf.get("vllm_engine_config") or {}
    tp, pp = engine.get("tensor_parallel_size"), engine.get("pipeline_parallel_size", 1)
    if not isinstance(tp, int) or tp < 1 or not isinstance(pp, int) or pp < 1:
        return f"{rel} sets no tensor_parallel_size"
    quant, model_path = str(engine.get("quantization")), str(engine.get("model", ""))
    if "pruned" in model_path.lower():
        return f"{rel}: a pruned model ({model_path}), not calc's {family}"
    fp4_path = re.search(r"fp4", model_path, re.I) is not None
    if quant == "fp8":
        weights, said = "fp8", "FP8 weights"
    elif quant == "quark" and fp4_path and "fp4" in get_accelerator(accelerator).peak_flops_per_s:
        source = _mxfp4_source(tree, root, bench_dirs, model_path)
        if not source:
            return f"{rel}: quark weights at {model_path} whose FP4 format the submission does not state"
        weights, said = "mxfp4", f"MXFP4 weights ({source})"
    else:
        return f"{rel}: weights of quantization {quant!r} (model {model_path!r}) are not read"
    kv = str(engine.get("kv_cache_dtype") or "")
    kv_said = (f"kv_cache_dtype {kv or 'not set'}"
               + (" (harness_llm/common/config.yaml's; the model file sets none)" if kv and "kv_cache_dtype" not in own
                  else ""))
    steps = int(engine.get("num_scheduler_steps") or 1)
    eager = engine.get("enforce_eager") is True
    graphs = (engine.get("compilation_config") or {}).get("cudagraph_mode") if isinstance(
        engine.get("compilation_config"), dict) else None
    v1 = env.get("VLLM_USE_V1")
    stated = re.search(r"vllm[- ]v?(\d+\.\d+\.\d+)(\S*)", framework, re.I)
    if stated:
        version = stated.group(1)
        version_said = f"vLLM {stated.group(1)}{stated.group(2).rstrip(',')} (systems json framework)"
    else:
        version, version_said = _setup_build(tree, root, bench_dirs)
        version_said = version_said or "vLLM (version not stated in the systems json or a setup build config)"
    sub, least = env.get("VLLM_SUBSEQUENT_DECODE_STEPS"), env.get("VLLM_MIN_REQUEST_DECODE_STEP")
    worker = readme.get("worker_config")
    worker_said, w, w_env = "", engine, env
    if worker and worker != name:
        other = find(worker)
        if other is None:
            return f"the result's README.md runs its worker nodes with {worker}, which {root}/src does not ship"
        w_all = _merged(common, yaml.safe_load(tree.read(other) or "") or {})
        w, w_env = w_all.get("vllm_engine_config") or {}, w_all.get("vllm_env_config") or {}
        if any(w.get(k) != engine.get(k) for k in ("tensor_parallel_size", "pipeline_parallel_size", "quantization",
                                                     "model", "kv_cache_dtype", "enforce_eager")):
            return (f"the result's README.md runs its head node with {name} and its worker nodes with {worker}, "
                    "whose layouts differ")
        worker_said = (f"; its worker nodes run {worker}, of the same tensor_parallel_size, quantization, model and "
                       "KV cache")

    def stated(key):
        """``key`` of the engine config, or both values where the head's and the workers' configs differ (said so
        that no reader takes either for the run's)."""
        if w.get(key) != engine.get(key):
            return f"{key} differs: {engine.get(key, 'not set')} in {name}, {w.get(key, 'not set')} in {worker}"
        return f"{key} {engine.get(key, 'not set')}"
    how = (f"AMD's harness (src/harness_llm, {version_said}); {rel} ({how_named}{worker_said}) over "
           f"src/harness_llm/common/config.yaml: tensor_parallel_size {tp}"
           + (f", pipeline_parallel_size {pp}" if pp > 1 else "")
           + f", one vLLM instance per TP group, quantization {quant} ({model_path.rstrip('/')}: {said}), {kv_said}"
           + (f", --num-scheduler-steps {steps} (multi-step scheduling)" if steps > 1 else "")
           + (f", VLLM_USE_V1={v1} ({'the V1 engine' if str(v1) == '1' else 'the V0 engine'})" if v1 is not None
              else "")
           + f", {stated('max_num_seqs')}, {stated('max_num_batched_tokens')}, {stated('enable_chunked_prefill')}, "
           f"{stated('async_scheduling')}"
           + (f"; AMD's vLLM patch admits waiting prompts on one scheduler step in {int(sub) + 1}"
              + (f" while the running batch holds at least {int(least)}" if least else "")
              + f" (VLLM_SUBSEQUENT_DECODE_STEPS {int(sub)}"
              + (f", VLLM_MIN_REQUEST_DECODE_STEP {int(least)}" if least else "")
              + (f"; {w_env.get('VLLM_SUBSEQUENT_DECODE_STEPS')} and {w_env.get('VLLM_MIN_REQUEST_DECODE_STEP')} in "
                 f"{worker}" if (w_env.get("VLLM_SUBSEQUENT_DECODE_STEPS"), w_env.get("VLLM_MIN_REQUEST_DECODE_STEP"))
                 != (sub, least) else "")
              + "; quoted, not modelled)" if sub else "")
           # a run with graphs names no eager setting: the serving model reads the word "eager" as a run without
           + ("; enforce_eager True (eager mode, no graphs)" if eager else
              f", CUDA graphs on{' (cudagraph_mode ' + str(graphs) + ')' if graphs else ''}"))
    return Layout("vllm", version, tp, pp, weights, kv, how)


#: calc accelerator id -> the folder name of Red Hat's llm-d setup (src/<benchmark>/setup/llm-d/<GPU>/).
LLMD_GPU_DIRS = {"b200": "B200", "h200": "H200"}


def llmd_layout(tree: GitTree, root: str, bench_dir: str, scenario: str, accelerator: str, family: str,
                framework: str, n_gpus: int) -> Layout | str:
    """Layout of Red Hat's v6.0 runs on llm-d (vLLM behind llm-d's inference gateway on OpenShift):
    src/<benchmark>/setup/llm-d/<GPU>/deploy_*.sh deploys the model service with ``--set decode.replicas=R --set
    decode.parallelism.tensor=T`` (R vLLM servers of TP T) and the scenario's override file (``MODE`` server:
    override_*_server_*.yaml, else the offline one), whose decode container's vLLM arguments are read
    (--max-num-seqs, --max-num-batched-tokens, --kv-cache-dtype, --async-scheduling) with its image; the model file
    (override_*_model.yaml modelArtifacts.name) names the checkpoint. The vLLM version comes from the systems json
    framework string only."""
    gpu = LLMD_GPU_DIRS.get(accelerator)
    base = f"{root}/src/{bench_dir}/setup/llm-d/{gpu}/"
    deploy = sorted(f for f in tree.files if gpu and f.startswith(base) and re.match(r"deploy_\w*\.sh$",
                                                                                    f[len(base):]))
    if not deploy:
        return f"Red Hat's llm-d setup has no src/{bench_dir}/setup/llm-d/{gpu}/deploy_*.sh for {accelerator}"
    text = tree.read(deploy[0]) or ""
    reps = re.search(r"decode\.replicas=(\d+)", text)
    tp = re.search(r"decode\.parallelism\.tensor=(\d+)", text)
    mode = "server" if scenario in ("Server", "Interactive") else "offline"
    over = re.search(rf'MODE" == "server" \]\]; then\s+OVERRIDE_CONFIG="\$\{{SCRIPT_DIR\}}/([^"]+)"\s+else\s+'
                     r'OVERRIDE_CONFIG="\$\{SCRIPT_DIR\}/([^"]+)"', text)
    model_file = re.search(r'OVERRIDE_MODEL="\$\{SCRIPT_DIR\}/([^"]+)"', text)
    if not (reps and tp and over and model_file):
        return f"{deploy[0].split('/', 2)[2]} states no decode.replicas, decode.parallelism.tensor or override files"
    reps, tp = int(reps.group(1)), int(tp.group(1))
    if reps * tp != n_gpus:
        return f"{deploy[0].split('/', 2)[2]}: {reps} replicas of TP{tp} are not the system's {n_gpus} GPUs"
    name = over.group(1) if mode == "server" else over.group(2)
    try:
        conf = yaml.safe_load(tree.read(base + name) or "") or {}
        model = yaml.safe_load(tree.read(base + model_file.group(1)) or "") or {}
    except Exception as exc:  # noqa: BLE001 - a submitter's file that is not YAML is named, not raised
        return f"{base + name} is not readable YAML ({type(exc).__name__})"
    containers = (conf.get("decode") or {}).get("containers") or []
    if not containers:
        return f"{(base + name).split('/', 2)[2]} has no decode container"
    args = [str(a) for a in containers[0].get("args") or []]

    def arg(flag):
        for i, a in enumerate(args):
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
        return None
    checkpoint = str((model.get("modelArtifacts") or {}).get("name", ""))
    if family == "gpt-oss-120b" and checkpoint == "openai/gpt-oss-120b":
        weights, said = "mxfp4", "the released checkpoint's MXFP4 experts"
    else:
        return f"{(base + model_file.group(1)).split('/', 2)[2]}: checkpoint {checkpoint!r} is not read"
    kv = (arg("--kv-cache-dtype") or "").lower()
    kv = kv if kv in ("fp8", "bf16", "fp16") else ""
    version = re.search(r"vllm[- ]v?(\d+\.\d+\.\d+)", framework, re.I)
    env = {e.get("name"): e.get("value") for e in containers[0].get("env") or [] if isinstance(e, dict)}
    how = (f"Red Hat's llm-d ({containers[0].get('image', 'image not stated')}), vLLM "
           f"{version.group(1) + ' (systems json framework)' if version else '(version not stated)'}; "
           f"{deploy[0].split('/', 2)[2]}: decode.replicas={reps}, decode.parallelism.tensor={tp} ({reps} vLLM "
           f"servers of TP{tp} behind llm-d's inference gateway); {name} (MODE {mode}): max_num_seqs "
           f"{arg('--max-num-seqs') or 'not set'}, max_num_batched_tokens "
           f"{arg('--max-num-batched-tokens') or 'not set'}, "
           f"kv_cache_dtype {kv or 'not set (vLLM auto: the model dtype)'}"
           + (", --async-scheduling" if "--async-scheduling" in args else "")
           + "".join(f", {k}={v}" for k, v in env.items())
           + f"; {model_file.group(1)}: {checkpoint} ({said})")
    return Layout("vllm", version.group(1) if version else "", tp, 1, weights, kv, how)


def redhat_layout(tree: GitTree, root: str, bench_dir: str, n_gpus: int, accel_name: str) -> Layout | str:
    """Red Hat's vLLM on OpenShift AI: code/<benchmark>/README.md says how many copies of the model ran on the
    system's GPUs ("When running on 4xL40S, we created two copies"); each copy spans n_gpus / copies GPUs by
    tensor parallelism (vLLM's split of one model over GPUs); weights FP8 by AutoFP8 (quantize-autofp8.py,
    static activation scales, no KV-cache scheme: the cache dtype is not stated)."""
    text = tree.read(f"{root}/code/{bench_dir}/README.md") or ""
    short = accel_name.replace("NVIDIA ", "")
    for m in re.finditer(r"When running on (\d+)x(\S+?), we created (\w+) copies", text):
        copies = _WORDS.get(m.group(3).lower())
        if int(m.group(1)) == n_gpus and m.group(2).rstrip(",.") == short and copies and n_gpus % copies == 0:
            tp = n_gpus // copies
            how = (f"vLLM on OpenShift AI (KServe), version not stated; code/{bench_dir}/README.md: '{m.group(0)}' "
                   f"of the model: {copies} vLLM servers of TP{tp}; FP8 weights (AutoFP8, quantize-autofp8.py); "
                   f"KV cache dtype not stated")
            return Layout("vllm", "", tp, 1, "fp8", "", how)
    return f"code/{bench_dir}/README.md states no layout for {n_gpus}x {short}"


# == Rows ======================================================================================================

def from_v6(rnd: str) -> bool:
    """Whether round ``rnd`` is v6.0 or later (read with ``BENCHMARKS_V6``, ``ACCELERATORS_V6`` and AMD's src/
    layout)."""
    return rnd not in ("v4.1", "v5.0", "v5.1")


def round_benchmarks(rnd: str) -> dict:
    """{result directory name: dataset family} of the benchmarks read for round ``rnd``."""
    return BENCHMARKS if rnd == "v4.1" else BENCHMARKS_V6 if from_v6(rnd) else BENCHMARKS_V5


def accelerator_of(accel_name: str, rnd: str = "v4.1"):
    """(calc accelerator id, GPUs the name counts or None, sentence) of a systems json accelerator_model_name, or
    the reason (str) it is not read. From v6.0 on a name may end in a count, "AMD Instinct MI355X 288GB HBM3e (x87)":
    the system's GPUs in all (AMD's 87- and 94-GPU clusters, whose results' README runs the harness with
    ``harness_config.device_count`` 87 and 94 on 8 GPUs per node x 11 and 12 nodes); a power-capped part ("(Power
    Cap 1000 W)") is not the preset's part, and a system of several accelerator models ("... (x8) and ... (x8)") has
    no one preset: both are skipped."""
    v5, v6 = rnd != "v4.1", from_v6(rnd)
    name, count, said = accel_name, None, ""
    if v6:
        if " and " in name and len(re.findall(r"\(x\d+\)", name)) > 1:
            return f"accelerator {accel_name!r}: a system of several accelerator models, no one calc preset"
        cap = re.search(r"\s*\(Power Cap\s*([\d,]+)\s*W\)\s*$", name, re.I)
        if cap:
            base = ACCELERATORS_V6.get(name[:cap.start()]) or ACCELERATORS_V5.get(name[:cap.start()])
            preset = get_accelerator(base) if base else None
            return (f"accelerator {accel_name!r}: a part capped at {cap.group(1)} W"
                    + (f", not the {preset.tdp_w:,} W part of calc's {base} preset ({preset.power_source})"
                       if preset and preset.tdp_w else ", which no calc preset describes"))
        n = re.search(r"\s*\(x(\d+)\)\s*$", name)
        if n:
            name, count = name[:n.start()], int(n.group(1))
            said = f" ({count} GPUs in all by the name's '(x{count})')"
    gid = (ACCELERATORS.get(name) or (ACCELERATORS_V5.get(name) if v5 else None)
           or (ACCELERATORS_V6.get(name) if v6 else None))
    if gid is None:
        return f"accelerator {accel_name!r} has no calc preset"
    return gid, count, said


def row_id(*parts) -> str:
    """A row id from its parts: lower case, runs of other characters as '-'."""
    return re.sub(r"[^a-z0-9.]+", "-", "-".join(str(p) for p in parts).lower()).strip("-")


def source_id(division: str, family: str, rnd: str = "v4.1") -> str:
    """The source of a result: one per round, division and benchmark family ("mlperf-inf51-closed-llama2-70b")."""
    return f"mlperf-inf{ROUNDS[rnd]['tag']}-{division}-{family}"


def convert(tree: GitTree, input_means: dict, with_e2e: bool = False, log=print, rnd: str = "v4.1"):
    """Measurement rows (dicts with ``COLUMNS``) of every result the converter can place, and the report lines.

    ``input_means``: {benchmark family: mean prompt tokens}. ``rnd``: the round (``ROUNDS``), which names the
    benchmarks (``BENCHMARKS`` for v4.1, ``BENCHMARKS_V5`` after) and scenarios read. Prints (``log``) one line per
    result: what was written, or why it was skipped."""
    rows = []
    benchmarks = round_benchmarks(rnd)
    scenarios = ROUNDS[rnd]["scenarios"]
    pat = re.compile(r"^(closed|open)/([^/]+)/results/([^/]+)/([^/]+)/([^/]+)/performance/run_1/mlperf_log_summary\.txt$")
    results = []
    for f in tree.files:
        m = pat.match(f)
        if m and m.group(4) in benchmarks and m.group(5).capitalize() in scenarios:
            results.append(m.groups() + (f,))
    # a submitter whose FP8 engine meets both accuracy targets may submit one run as both llama2-70b-99 and -99.9:
    # the two summaries are then the same file (one git blob), written once
    blob = {(r[0], r[1], r[2], r[3], r[4]): tree.blobs[r[5]] for r in results}
    for division, submitter, system, bench_dir, scen_dir, path in sorted(results, key=lambda r: (r[3], r[4].lower(), r[0], r[1], r[2])):
        scenario = scen_dir.capitalize()
        label = f"{bench_dir} {scenario} {division}/{submitter}/{system}"
        twin = (division, submitter, system, "llama2-70b-99" if bench_dir == "llama2-70b-99.9" else "llama2-70b-99.9",
                scen_dir)
        same = blob.get(twin) == blob[(division, submitter, system, bench_dir, scen_dir)]
        if same and bench_dir == "llama2-70b-99.9":
            log(f"skip  {label}: the same mlperf_log_summary.txt as its llama2-70b-99 result (one run, written once)")
            continue
        out = place(tree, division, submitter, system, bench_dir, scen_dir, scenario, path, input_means, with_e2e,
                    also_999=same, rnd=rnd)
        if isinstance(out, str):
            log(f"skip  {label}: {out}")
        else:
            rows.extend(out)
            log(f"wrote {label}: {len(out)} rows ({', '.join(r['metric'] + ' ' + r['statistic'] for r in out)})")
    return rows


def place(tree, division, submitter, system, bench_dir, scen_dir, scenario, path, input_means, with_e2e,
          also_999=False, rnd="v4.1"):
    """The rows of one result, or the reason it is skipped. ``also_999``: the same log is also the system's
    llama2-70b-99.9 result (said in the notes). ``rnd``: the round (``ROUNDS``); from v5.0 on, layouts come from
    ``exports_layout`` and an Interactive result is written as a Server one (its scenario in the notes)."""
    v5, v6 = rnd != "v4.1", from_v6(rnd)
    if division == "open" and re.search(r"DepthPruned|Sparse", system, re.I):
        return "open division system with a pruned or sparse model"
    root = f"{division}/{submitter}"
    sysjson = tree.read(f"{root}/systems/{system}.json")
    if sysjson is None:
        return f"no systems/{system}.json"
    sd = json.loads(sysjson)
    accel_name = str(sd.get("accelerator_model_name", "")).strip()
    found = accelerator_of(accel_name, rnd)
    if isinstance(found, str):
        return found
    accelerator, named_count, count_note = found
    try:
        n_gpus = int(sd.get("accelerators_per_node")) * int(sd.get("number_of_nodes") or 1)
    except (TypeError, ValueError):
        return "accelerator count not stated"
    if named_count is not None:
        if named_count > n_gpus:
            return (f"the accelerator name counts {named_count} GPUs, more than accelerators_per_node x "
                    f"number_of_nodes ({n_gpus})")
        if named_count != n_gpus:
            count_note += (f", of the {sd.get('accelerators_per_node')} per node x {sd.get('number_of_nodes')} "
                           f"nodes = {n_gpus} installed")
        n_gpus = named_count
    memory = str(sd.get("accelerator_memory_capacity", ""))
    stated = re.match(r"\s*(\d[\d,]*\.?\d*)\s*([A-Za-z]*)", memory)
    if stated:
        unit = {"MIB": 2 ** 20, "GIB": 2 ** 30, "MB": 1e6, "TB": 1e12}.get(stated.group(2).upper(), 1e9)
        preset = get_accelerator(accelerator).memory_bytes
        if abs(float(stated.group(1).replace(",", "")) * unit / preset - 1) > 0.1:
            return f"accelerator memory {memory!r} is not the {accelerator} preset's {preset / 1e9:g} GB"
    hw = str(sd.get("hw_notes", "")).strip()
    accel_note = (f"accelerator {accel_name!r}{count_note}{' (hw_notes: ' + repr(hw) + ')' if hw else ''}, "
                  f"{memory or 'memory not stated'}, taken as calc's {accelerator}")
    framework = str(sd.get("framework", ""))
    family = round_benchmarks(rnd)[bench_dir]
    summary = parse_summary(tree.read(path))
    if summary.get("Result is") != "VALID":
        return f"result is {summary.get('Result is')!r}"
    detail = parse_detail(tree.read(path.replace("summary", "detail")) or "")
    # engine and layout, as the submission states them
    if v5 and ("TensorRT" in framework or re.search(r"_TRT(_|$)", system)):
        lay = exports_layout(tree, root, system, bench_dir, scenario, n_gpus, accelerator, family,
                             str(sd.get("sw_notes", "")), v6=from_v6(rnd), framework=framework)
    elif v6 and "/harness_llm/models/" in _result_readme(tree, root, system, bench_dir, scenario).get(
            "config_path", "") and any(f.startswith(f"{root}/") and "/harness_llm/models/" in f for f in tree.files):
        # v5.x's harness_llm layout, shipped again (Dell's MI300X: src_mi300x/<benchmark>/harness_llm/models/...)
        lay = harness_llm_layout(tree, root, bench_dir, scenario, accelerator, family, framework, anywhere=True)
    elif v6 and any(f.startswith(f"{root}/src/{bench_dir}/setup/llm-d/") for f in tree.files):
        lay = llmd_layout(tree, root, bench_dir, scenario, accelerator, family, framework, n_gpus)
    elif v6 and tree.exists(f"{root}/src/harness_llm/common/config.yaml"):
        lay = amd_src_layout(tree, root, system, bench_dir, scenario, accelerator, family, framework, n_gpus,
                             int(sd.get("number_of_nodes") or 1))
    elif v6:
        return (f"engine layout not read for this harness (framework {framework!r}): the submission ships neither "
                "NVIDIA's harness configs nor AMD's harness (src/<benchmark>/*.yaml, harness_llm/models) under "
                f"{root}")
    elif v5 and any(f.startswith(f"{root}/code/") and "/harness_llm/models/" in f for f in tree.files):
        lay = harness_llm_layout(tree, root, bench_dir, scenario, accelerator, family, framework)
    elif v5:
        return (f"engine layout not read for this harness (framework {framework!r}): NVIDIA's harness configs and "
                "AMD's harness_llm are read for v5.x")
    elif "TensorRT" in framework or system.endswith(("_TRT", "_TRT_MaxQ", "_TRT_Triton")):
        lay = nvidia_layout(tree, root, system, bench_dir, scenario, n_gpus, accelerator, str(sd.get("sw_notes", "")))
    elif framework.startswith("vLLM") and tree.exists(f"{root}/code/{bench_dir}/test_VllmFp8/run_tests_Offline.sh"):
        lay = vllm_layout(tree, root, bench_dir, scenario, framework)
    elif submitter == "RedHat":
        lay = redhat_layout(tree, root, bench_dir, n_gpus, accel_name)
    else:
        return (f"engine layout not stated in the submission (framework {framework!r}; "
                "no tensor-parallel size in its code or README)")
    if isinstance(lay, str):
        return lay
    width = lay.tp * lay.pp
    if n_gpus % width:
        return f"{n_gpus} GPUs do not split into TP{lay.tp} x PP{lay.pp} replicas"
    ds = DATASETS[family]
    input_len = int(round(input_means[family]))
    when = str(detail.get("test_datetime", ""))[:10]
    if scenario == "Offline":
        tok, smp = number(summary.get("Tokens per second")), number(summary.get("Samples per second"))
        n_req = number(summary.get("samples_per_query"))
    else:
        tok = number(summary.get("Completed tokens per second"))
        smp = number(summary.get("Completed samples per second"))
        n_req = number(detail.get("result_query_count") or detail.get("generated_query_count"))
    if not (tok and smp and n_req):
        return "tokens per second, samples per second or the number of requests missing from the logs"
    out_mean = tok / smp
    max_out = ds.get("max_output", 1024)
    if not 1 < out_mean <= max_out * 1.02:  # LoadGen's count may pass the generation cap by a token
        return f"tokens per sample {out_mean:.1f} outside 1-{max_out:,} (not output tokens per sample?)"
    output_len = int(round(out_mean))
    over_cap = (f" (above the {max_out}-token cap by {out_mean - max_out:.1f}: LoadGen's token count of the run "
                "exceeds the generation cap, nearly every output reaching it)") if out_mean > max_out else ""
    sys_name = str(sd.get("system_name", system))
    head = (f"MLPerf Inference {rnd} {division}, {submitter}, {sys_name} ({system}), {bench_dir} {scenario}, "
            f"result VALID{' (the same log is also its llama2-70b-99.9 result)' if also_999 else ''}; "
            f"{int(n_req):,} requests in the run")
    if scenario == "Offline":
        head += (" (LoadGen issues them at once as one query of samples_per_query, all queued from the start)")
    else:
        target = number(summary.get("target_qps"))
        sched = number(detail.get("result_scheduled_samples_per_sec")) or number(summary.get("Scheduled samples per second"))
        if not sched:
            return "scheduled rate missing from the logs"
        head += (f" (LoadGen Server: one query at a time as a Poisson process, target_qps {target:g}, scheduled "
                 f"{sched:g} queries/s by result_scheduled_samples_per_sec; "
                 + ("min_duration 2,400 s)" if not v5 else
                    f"min_duration {number(detail.get('effective_min_duration_ms')) / 1000:g} s)"
                    if number(detail.get("effective_min_duration_ms")) else "min_duration not in the log)"))
        ttft_lim, tpot_lim = number(summary.get("ttft_latency (ns)")), number(summary.get("tpot_latency (ns)"))
        if ttft_lim and tpot_lim:
            head += (f"; latency limits TTFT {ttft_lim / 1e6:g} ms and TPOT {tpot_lim / 1e6:g} ms at the 99th "
                     "percentile (the summary's test parameters)")
        elif not v5 and BENCHMARKS.get(bench_dir) in V41_SERVER_LIMITS_MS:
            ttft_ms, tpot_ms = V41_SERVER_LIMITS_MS[BENCHMARKS[bench_dir]]
            head += (f"; latency limits TTFT {ttft_ms:g} ms and TPOT {tpot_ms:g} ms at the 99th percentile "
                     f"(the round's loadgen/mlperf.conf: {BENCHMARKS[bench_dir]}.Server.ttft_latency = {ttft_ms:g}, "
                     f"tpot_latency = {tpot_ms:g})")
        if scenario == "Interactive":
            head += ("; scenario Interactive: LoadGen's Server scenario (Poisson arrivals at a set rate) under the "
                     "tighter latency limits of the interactive benchmark, written as Server-like rate rows")
    notes_common = (f"{head}; {'measured ' + when + ' (test_datetime); ' if when else ''}"
                    f"mean output {out_mean:.1f} tokens per request (this run's tokens per second / samples per "
                    f"second{over_cap}; outputs end at end-of-text, at most {max_out:,} tokens); input_len {input_len} = "
                    f"{ds['input_source']}; {lay.how}; {n_gpus} GPU(s) ({sd.get('accelerators_per_node')} per node x "
                    f"{sd.get('number_of_nodes')} node(s)): {n_gpus // width} replica(s) of TP{lay.tp} PP{lay.pp} "
                    f"(dp = replicas); {accel_note}; systems json framework: {framework}")
    base = dict(source_id=source_id(division, family, rnd), model=ds["model"], model_family=ds["family"],
                accelerator=accelerator, n_gpus=n_gpus, tp=lay.tp, pp=lay.pp, ep=lay.ep, dp=n_gpus // width,
                engine=lay.engine, engine_version=lay.engine_version, weight_dtype=lay.weight_dtype,
                kv_dtype=lay.kv_dtype, input_len=input_len, output_len=output_len, len_dist=ds["len_dist"],
                concurrency="", request_rate_per_s="", mode="offline", _submitter=submitter, _bench=bench_dir,
                _scenario=scenario)
    stem = ("mlperf" + ROUNDS[rnd]["tag"], division, submitter, system, bench_dir, scenario)
    rows = []
    rel = path.split("/", 2)[2].replace("/mlperf_log_summary.txt", "")
    if scenario == "Offline":
        rows.append(dict(base, id=row_id(*stem, "output_tok_per_s"), metric="output_tok_per_s", statistic="mean",
                         value=tok, notes=f"{notes_common}; value: 'Tokens per second' of {rel}/mlperf_log_summary.txt "
                                           "(output tokens of the whole system over the run)"))
        return rows
    base.update(mode="rate", request_rate_per_s=round(sched, 4))
    rows.append(dict(base, id=row_id(*stem, "output_tok_per_s"), metric="output_tok_per_s", statistic="mean",
                     value=tok, notes=f"{notes_common}; value: 'Completed tokens per second' of {rel}/"
                                       "mlperf_log_summary.txt (output tokens of the whole system)"))
    wanted = [("ttft_ms", "mean", "Mean First Token latency (ns)", "LoadGen's first-token latency from the scheduled "
               "arrival, queueing included"),
              ("ttft_ms", "median", "50.00 percentile first token latency (ns)", "LoadGen's first-token latency from "
               "the scheduled arrival, queueing included"),
              ("tpot_ms", "mean", "Mean Time to Output Token (ns)", "LoadGen's per-request time per output token "
               "after the first, averaged over requests"),
              ("tpot_ms", "median", "50.00 percentile time to output token (ns)", "LoadGen's per-request time per "
               "output token after the first")]
    if with_e2e:
        wanted.append(("e2e_ms", "mean", "Mean latency (ns)", "LoadGen's latency from the scheduled arrival to the "
                       "last token"))
    for metric, stat, key, what in wanted:
        v = number(summary.get(key))
        if v is None or v <= 0:
            continue
        rows.append(dict(base, id=row_id(*stem, metric, stat), metric=metric, statistic=stat, value=round(v / 1e6, 4),
                         notes=f"{notes_common}; value: '{key}' of {rel}/mlperf_log_summary.txt / 1e6 ({what})"))
    return rows


def source_rows(tree: GitTree, rows: list, retrieved: str, input_means: dict, rnd: str = "v4.1",
                copy_url: str | None = None) -> list:
    """One serving_sources.csv row per source_id used by ``rows`` (of round ``rnd``). ``copy_url``: the public
    repository the git copy was read from where it is not the round's own (a fork holding the commit read); the
    sources then link to it and say whose copy it is."""
    out = []
    benchmarks = round_benchmarks(rnd)
    url = copy_url or ROUNDS[rnd]["url"]
    copy_note = (f" Read from {copy_url}, a public copy of {ROUNDS[rnd]['url']}, at the commit named."
                 if copy_url and copy_url.rstrip("/") != ROUNDS[rnd]["url"] else "")
    for sid in sorted({r["source_id"] for r in rows}):
        division, family = sid.split("-")[2], "-".join(sid.split("-")[3:])
        benches = sorted({r["_bench"] for r in rows if r["source_id"] == sid} if rnd != "v4.1" else
                         {b for b, f in benchmarks.items() if f == family})
        scens = [c for c in ROUNDS[rnd]["scenarios"] if any(r["source_id"] == sid and r.get("_scenario") == c
                                                             for r in rows)] or ["Offline", "Server"]
        subs = sorted({r["_submitter"] for r in rows if r["source_id"] == sid})
        ds = DATASETS[family]
        out.append(dict(
            source_id=sid,
            title=(f"MLCommons MLPerf Inference {rnd} results, {division} division, {' and '.join(benches)} "
                   f"({' and '.join(scens) if rnd != 'v4.1' else 'Offline and Server'}), mlperf_log_summary.txt / "
                   "mlperf_log_detail.txt of each result"),
            url=f"{url}/tree/{tree.commit}/{division}", commit=tree.commit,
            published=ROUNDS[rnd]["published"] or tree._run("log", "--reverse", "--format=%cs").split()[0],
            retrieved=retrieved, license="Apache-2.0", shipped="yes",
            notes=(f"The repository's LICENSE.md is the Apache License 2.0.{copy_note} Submitters: {', '.join(subs)}. "
                   "Offline: 'Tokens per second' (output tokens of the system; LoadGen issues all samples_per_query "
                   "requests at once). Server: Poisson arrivals at the scheduled rate; 'Completed tokens per second', "
                   "the mean and median first-token latency and time to output token (LoadGen's per-request time "
                   "per output token after the first)"
                   + (". Interactive: the Server scenario under tighter latency limits, written as rate rows. Layouts "
                      "from each submitter's configs/<system>/<scenario>/<benchmark>.py EXPORTS (NVIDIA's harness: "
                      "tensor_parallelism, pipeline_parallelism, moe_expert_parallelism, precision, kv_cache_dtype, "
                      "speculative_decoding; a system that scaleout/REPRODUCE.md runs as data-parallel copies of an "
                      "atomic system from that system's config), src/<benchmark>/<config>.yaml over "
                      "src/harness_llm/common/config.yaml (AMD's harness and its partners': tensor_parallel_size, "
                      "quantization, kv_cache_dtype, enforce_eager, max_num_seqs; the config the result's README runs) "
                      "or Red Hat's llm-d deployment (decode.replicas, decode.parallelism.tensor); disaggregated runs, "
                      "power-capped parts, pruned models and results of other harnesses are left out, as "
                      if from_v6(rnd) else
                      ". Interactive: the Server scenario under tighter latency limits, written as rate rows. Layouts "
                      "from each submitter's configs/<system>/<scenario>/<benchmark>.py EXPORTS (NVIDIA's harness: "
                      "tensor_parallelism, pipeline_parallelism, moe_expert_parallelism, precision, kv_cache_dtype) "
                      "or code/<benchmark>/harness_llm/models/<model>/<scenario>_<accelerator>.yaml (AMD's "
                      "harness_llm on vLLM's V0 engine: tensor_parallel_size, quantization, kv_cache_dtype, "
                      "num_scheduler_steps, enforce_eager; its eager runs are left out of the serving model's "
                      "predictions); results of other harnesses are left out, as "
                      if rnd != "v4.1" else
                      ". Layouts from each submitter's configs/<benchmark>/<scenario> "
                      "(NVIDIA's harness on TensorRT-LLM: tensor_parallelism, gpu_batch_size, use_fp8) or code (AMD's "
                      "vLLM scripts, Red Hat's README); results whose submission states no layout are left out, as ")
                   + ("are accelerators without a calc preset (Intel Arc, RTX PRO 4500), CPU-only "
                      "systems and pruned " if from_v6(rnd) else
                      "are accelerators without a calc preset (Jetson Orin, H200 NVL) and pruned or sparse ")
                   + f"open-division models. Prompts: mean {input_means[family]:.1f} tokens ({ds['input_source']}); "
                   "outputs: each run's mean (tokens / samples). bench/convert_mlperf.py makes the rows.")))
    return out


def write_csv(path: Path, rows: list, columns) -> None:
    """``rows`` (dicts) to ``path`` with ``columns`` as the header."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(columns), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in columns})


def check(out: Path, sources: Path, log=print) -> int:
    """Load ``out`` with calc.measurements.load_measurements (sources from ``sources``) and print every row that
    beats calc's lower bound. Returns the number of violations."""
    frame = load_measurements(out, sources=load_sources(sources))
    bad = 0
    worst = {}
    for _, r in frame.iterrows():
        b = measurement_bound(r)
        key = (r["metric"], b.kind)
        worst[key] = max(worst.get(key, 0.0), b.ratio if b.kind == "throughput" else 1 / b.ratio)
        if not b.respected:
            bad += 1
            log(f"BOUND VIOLATION {r['id']}: measured/bound = {b.ratio:.3f} ({b.kind}); {b.how}")
    log(f"loaded {len(frame)} rows with calc.measurements.load_measurements; {bad} beat calc's lower bound; "
        "closest to the bound per metric (measured/bound for throughput, bound/measured for latency): "
        + ", ".join(f"{m} {v:.3f}" for (m, _), v in sorted(worst.items())))
    return bad


def main(argv=None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="measurement rows to write (CSV); the sources go to OUT_sources.csv beside it")
    ap.add_argument("--round", default="v4.1", choices=list(ROUNDS),
                    help="the MLPerf Inference round to read (default: %(default)s, calc's data set; v5.0 and v5.1 "
                         "add llama3.1-405b, llama3.1-8b, deepseek-r1 and the Interactive scenario; v6.0 adds "
                         "gpt-oss-120b, the B300 and AMD's src/ harness layout, e.g. --round v6.0 --repo "
                         "inference_results_v6.0 --url "
                         "https://github.com/gbeezybez/inference_results_v6.0 --server)")
    ap.add_argument("--repo", default=None,
                    help="git copy of the round's results repository (bare or checkout); default the round's "
                         f"environment variable ({', '.join(r['env'] for r in ROUNDS.values())})")
    ap.add_argument("--url", default=None,
                    help="the public repository the git copy is of, for the sources file, where it is not the round's "
                         "own (a fork whose commit the round's repository lacks), e.g. "
                         "https://github.com/gbeezybez/inference_results_v6.0; default: the round's url")
    ap.add_argument("--retrieved", default=_dt.date.today().isoformat(), help="retrieval date for the sources file")
    ap.add_argument("--llama2-input-len", type=float, default=DATASETS["llama2-70b"]["input_mean"],
                    help="mean prompt tokens of the llama2-70b set (default: %(default)s)")
    ap.add_argument("--mixtral-input-len", type=float, default=DATASETS["mixtral-8x7b"]["input_mean"],
                    help="mean prompt tokens of the mixtral-8x7b set (default: %(default)s)")
    ap.add_argument("--with-e2e", action="store_true", help="also write the Server runs' mean end-to-end latency")
    ap.add_argument("--server", action="store_true",
                    help="also write the Server scenario's rows (left out of calc's data set: see SERVER_NOTE)")
    args = ap.parse_args(argv)
    rnd = ROUNDS[args.round]
    repo = args.repo or os.environ.get(rnd["env"])
    if not repo:
        ap.error(f"no repository: pass --repo PATH or set {rnd['env']} to a git copy of {rnd['url']}")
    tree = GitTree(repo)
    means = {f: d["input_mean"] for f, d in DATASETS.items()}
    means.update({"llama2-70b": args.llama2_input_len, "mixtral-8x7b": args.mixtral_input_len})
    licence = tree.read("LICENSE.md") or tree.read("LICENSE") or ""
    if "Apache License" not in licence or "Version 2.0" not in licence:
        print("warning: the repository's LICENSE.md is not the Apache License 2.0; check before shipping",
              file=sys.stderr)
    print(f"{rnd['url']} at {tree.commit} ({tree.date()})")
    rows = convert(tree, means, args.with_e2e, rnd=args.round)
    if not args.server:
        kept = [r for r in rows if r["mode"] != "rate"]
        print(f"left out {len(rows) - len(kept)} Server rows ({SERVER_NOTE}); --server writes them")
        rows = kept
    out = Path(args.out)
    src = out.with_name(out.stem + "_sources.csv")
    write_csv(out, rows, COLUMNS)
    write_csv(src, source_rows(tree, rows, args.retrieved, means, args.round, args.url), SOURCE_COLUMNS)
    print(f"wrote {len(rows)} rows to {out} and {len({r['source_id'] for r in rows})} sources to {src}")
    return 1 if check(out, src) else 0


if __name__ == "__main__":
    sys.exit(main())
