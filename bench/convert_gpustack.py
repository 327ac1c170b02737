"""Convert GPUStack's Performance Lab pages (one engine-tuning study per model and GPU) into held-out rows of calc's
serving measurements.

Run::

    python3 bench/convert_gpustack.py OUT.csv [--repo PATH] [--commit SHA] [--pages P1,P2] [--retrieved YYYY-MM-DD]

``--repo`` (or the environment variable ``GPUSTACK_REPO``) names a git copy of github.com/gpustack/gpustack: a bare
git directory or a checkout; the pages are read at ``--commit`` (default ``COMMIT``) with git, so no work tree is
needed. ``--pages`` picks pages of ``PAGES`` by their path under docs/performance-lab (default: all of them). OUT.csv
receives measurement rows with the columns of ``calc.measurements.COLUMNS`` (the format of
calc/data/serving_holdout.csv), OUT_sources.csv beside it one source row per page
(``calc.measurements.SOURCE_COLUMNS``).
The converter prints every block it skipped and why, then loads OUT.csv with ``calc.measurements.load_measurements``
and prints every row that beats calc's lower bound (``calc.measurements.measurement_bound``); rows of a model calc has
no preset for yet are written but not checked (it says how many). calc/data/serving_holdout.csv ships the rows of
the pages whose model calc has a preset of: not the two Qwen3.5-9B pages, whose config.json calc has no copy of.

Source: docs/performance-lab/<model>/<gpu>.md of https://github.com/gpustack/gpustack (the repository's LICENSE is the
Apache License 2.0, so the numbers may be shipped). Each page is a tuning study: under section headings, a launch
command ("Serving script", or "Backend Parameters" on the later pages) followed by a "Benchmark result" block. Two
kinds of page:

- the 2025 pages: the client is ``vllm bench serve`` (the page's "Benchmark Script" section gives its command lines:
  ShareGPT with ``--num-prompts 1000`` and random prompts from a ``--seed 42`` template; a block whose "# label"
  names a random case takes its nominal lengths from the page's "Benchmark Dataset" list). A block that prints
  "Maximum request concurrency" ran with ``--max-concurrency`` (vLLM prints the line only then): a closed loop at that
  concurrency, ``mode`` "concurrency". A block without it sent every request at once (request rate inf): ``mode``
  "offline" with concurrency = the number of requests. TTFT, TPOT and ITL are vLLM's (benchmarks/serve.py): TPOT =
  (E2E - TTFT) / (output tokens - 1) per request, ITL every gap between streamed chunks.
- the 2026 pages (Qwen3.5): GPUStack's benchmark, guidellm through gpustack/benchmark-runner (whose lock pins
  guidellm 0.5.3), rendered in vLLM's layout by the repository's hack/perf/perf_doc_common.py
  (``render_benchmark_result_block``). The profile (the page's "Benchmark Profiles": dataset, request_rate,
  total_requests) drives guidellm's constant profile: requests at ``request_rate`` per second with at most 512 in
  flight (guidellm's settings.max_concurrency default). A profile that issues all its requests within 5% of the
  run (request_rate 1000) is a burst: offline at concurrency N where N <= 512, else a closed loop at 512
  (``mode`` "concurrency"); a slower one is ``mode`` "rate" at request_rate (uniform arrivals). The block's
  "Maximum request concurrency" there is the observed peak (``request_concurrency_max``: no max_concurrency is
  set). guidellm's metrics (src/guidellm/schemas/request_stats.py @v0.5.3) are not vLLM's: its "TPOT"
  (time_per_output_token_ms) = (last token - request start) / output tokens includes the wait for the first
  token, so it is left out; its "ITL" (inter_token_latency_ms) = (last token - first token) / (output tokens - 1)
  per request is vLLM's TPOT definition and is written as ``tpot_ms`` (its distribution weighted by each
  request's output tokens - 1); "Latency(s)" is the request latency, written as ``e2e_ms``; a request whose token
  timings are missing counts as 0 in TTFT and ITL (``or 0.0`` in guidellm's metrics.py), so a 0.00 reading is left
  out. GPUStack's client reads streamed ``content`` and ``reasoning_content`` deltas
  (benchmark-runner's chat_completions_with_reasoning handler, set by gpustack/worker/benchmark/runner.py), while
  vLLM 0.17 streams a reasoning parser's output as ``reasoning`` (``reasoning_content`` removed in vLLM pull request
  #33402): for a vLLM run with ``--reasoning-parser`` the client's token timings miss the thinking tokens, so its
  first and last token are not the run's (its median ITL is 0.00 where the answer never began) and its token rates
  place the thinking tokens at the answer's times (up to 1.44 x the run's tokens over its duration on these pages):
  its TTFT, ITL and token rates are left out; its request rate and request latencies, which use no token timing,
  stand. SGLang streams ``reasoning_content``, and its runs' token rates agree with tokens over duration within 0.3%.

Per block, the readings of calc's metrics: requests_per_s, output_tok_per_s (both the whole deployment's),
total_tok_per_s_per_gpu (on one GPU only: the page's "Total Token throughput" is the deployment's), and the latency
statistics (mean, median, p95 where printed, p99). Lengths: the run's mean input and output, its token totals over
its successful requests, rounded half up. The layout comes from the launch command (``-tp``/``--tp-size``,
``--enable-expert-parallel`` (EP = TP x DP) or ``--ep-size``, ``--pp-size``), the weight dtype from the checkpoint's
name (``-FP8``, ``-AWQ``, gpt-oss's MXFP4), the engine version from the page's "Engine Version" list.

Blocks left out, each printed with its reason: a result whose launch serves another model than the page's; a result
table repeating an earlier one of the page (the same run shown twice), or one of another lab page that page's own
conclusion quotes and this one's does not (a copy); a run where not every request completed; a launch whose
checkpoint's weights (``calc.weight_bytes``) exceed its GPUs' memory; a block without a result table (an engine that
failed); a layout the converter does not read. ``PAGES`` holds what the converter
cannot read from a page (the calc keys, and per page the facts it states elsewhere, with their lines).

The rows are held out (calc/data/serving_holdout.csv): no fit reads them.
"""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from bench.converter_io import git, git_dir, parse_args, write_checked  # noqa: E402
from calc import get_accelerator, get_model, weight_bytes  # noqa: E402
from calc.measurements import COLUMNS, SOURCE_COLUMNS, model_cell  # noqa: E402

ROOT = "docs/performance-lab"
URL = "https://github.com/gpustack/gpustack"
#: The commit the rows were read at (2026-08-21): the pages' numbers are unchanged since 2026-03-30.
COMMIT = "47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d"
#: guidellm's default cap on requests in flight (src/guidellm/settings.py @v0.5.3: max_concurrency = 512).
GUIDELLM_MAX_CONCURRENCY = 512
#: A profile that issues all its requests within this share of the run's duration is a burst.
BURST_SHARE = 0.05

#: What the converter cannot read from a page, by its path under ROOT: the source id, calc's model key, family and
#: accelerator, an optional remark on the hardware, readings left out ({the reading's line: why}), launches the
#: page states elsewhere ({line of the result table: (checkpoint, why)}), and the page's path before a rename.
PAGES = {
    "qwen3-32b/a100.md": dict(source="gpustack-a100-qwen3-32b", model="qwen3-32b", family="qwen",
                              accelerator="a100-80gb"),
    "gpt-oss-120b/a100.md": dict(source="gpustack-a100-gptoss120b", model="gpt-oss-120b", family="gpt-oss",
                                 accelerator="a100-80gb"),
    "gpt-oss-20b/a100.md": dict(source="gpustack-a100-gptoss20b", model="gpt-oss-20b", family="gpt-oss",
                                accelerator="a100-80gb"),
    "qwen3-14b/a100.md": dict(source="gpustack-a100-qwen3-14b", model="qwen3-14b", family="qwen",
                              accelerator="a100-80gb",
                              hardware="memory not stated; taken as A100 SXM 80GB like the lab's other A100 pages"),
    "qwen3-14b/h100.md": dict(source="gpustack-h100-qwen3-14b", model="qwen3-14b", family="qwen",
                              accelerator="h100-sxm",
                              left_out={175: "TensorRT-LLM's median ITL of 0.12 ms: its streamed chunks arriving "
                                             "together, a gap between chunks that arrive at once is not a decode "
                                             "step"}),
    "qwen3-235b-a22b/a100.md": dict(source="gpustack-a100-qwen3-235b", model="qwen3-235b-a22b", family="qwen",
                                    accelerator="a100-80gb"),
    "qwen3-8b/h100-latency.md": dict(source="gpustack-h100-qwen3-8b", model="qwen3-8b", family="qwen",
                                     accelerator="h100-sxm"),
    "qwen3.5-35b-a3b/h200.md": dict(source="gpustack-h200-qwen35-35b-a3b", model="qwen3.5-35b-a3b",
                                    family="qwen", accelerator="h200",
                                    hardware="one GPU: no launch sets a parallel layout"),
    "qwen3.5-35b-a3b/h200-latency.md": dict(source="gpustack-h200-qwen35-35b-a3b-latency", model="qwen3.5-35b-a3b",
                                            family="qwen", accelerator="h200",
                                            hardware="one GPU: no launch sets a parallel layout"),
    "qwen3.5-9b/h100.md": dict(source="gpustack-h100-qwen35-9b", model="qwen3.5-9b", family="qwen",
                               accelerator="h100-sxm", hardware="one GPU: no launch sets a parallel layout"),
    "qwen3.5-9b/h100-latency.md": dict(source="gpustack-h100-qwen35-9b-latency", model="qwen3.5-9b",
                                       family="qwen", accelerator="h100-sxm",
                                       hardware="one GPU: no launch sets a parallel layout"),
    "glm-4.5-air/a100.md": dict(source="gpustack-a100-glm45air", model="glm-4.5-air", family="glm",
                                accelerator="a100-80gb"),
    "glm-4.5-air/h100.md": dict(source="gpustack-h100-glm45air", model="glm-4.5-air", family="glm",
                                accelerator="h100-sxm",
                                checkpoint={196: ("zai-org/GLM-4.5-Air-FP8",
                                                  "the block's script (line 192) names zai-org/GLM-4.5-Air, but the "
                                                  "page's conclusion quotes this block's Total TPS 12411.25 (line 21) "
                                                  "as the result of its recommended command, zai-org/GLM-4.5-Air-FP8 "
                                                  "--tp-size 4 --ep-size 4 (lines 12-13), and its summary puts the "
                                                  "step 3.5% above the FP8 run (line 322: 12411.25 / 11996.08)")}),
    "glm-4.x/a100.md": dict(source="gpustack-a100-glm46", model="glm-4.6", family="glm", was="glm-4.6/a100.md",
                           accelerator="a100-80gb"),
    "glm-4.x/h100.md": dict(source="gpustack-h100-glm46", model="glm-4.6", family="glm", was="glm-4.6/h100.md",
                           accelerator="h100-sxm"),
    "glm-4.x/h200.md": dict(source="gpustack-h200-glm46", model="glm-4.6", family="glm", was="glm-4.6/h200.md",
                           accelerator="h200",
                            left_out={534: "SGLang's median ITL of 0.01 ms: its streamed chunks arriving together, "
                                           "a gap between chunks that arrive at once is not a decode step"}),
}

_ENGINES = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "trtllm"}
_ENGINE_WORDS = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
#: The page's reading name -> (calc metric, statistic, factor to calc's unit), for vllm bench serve's blocks.
_VLLM_FIELDS = [("Request throughput (req/s)", "requests_per_s", "mean", 1.0),
                ("Output token throughput (tok/s)", "output_tok_per_s", "mean", 1.0),
                ("Total Token throughput (tok/s)", "total_tok_per_s_per_gpu", "mean", 1.0)] + [
    (f"{s} {k} (ms)", m, st, 1.0) for k, m in (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"), ("ITL", "itl_ms"))
    for s, st in (("Mean", "mean"), ("Median", "median"), ("P95", "p95"), ("P99", "p99"))]
#: The same for GPUStack's guidellm blocks: its "ITL" is vLLM's TPOT, its "TPOT" is left out (see the module text).
_GUIDELLM_FIELDS = _VLLM_FIELDS[:3] + [
    (f"{s} {k}", m, st, f) for k, m, f in (("TTFT (ms)", "ttft_ms", 1.0), ("ITL (ms)", "tpot_ms", 1.0),
                                           ("Latency(s)", "e2e_ms", 1000.0))
    for s, st in (("Mean", "mean"), ("Median", "median"), ("P95", "p95"), ("P99", "p99"))]
#: The readings of a guidellm block that rest on the client's token timings: left out for a vLLM run with a reasoning
#: parser, whose thinking tokens the client does not see (the token rates place them at the answer's times: up to
#: 1.44 x the run's tokens over its duration on these pages, where SGLang's runs agree with it within 0.3%).
_BLIND_METRICS = ("ttft_ms", "tpot_ms", "output_tok_per_s", "total_tok_per_s_per_gpu")
_GUIDELLM_WORDS = {"ttft_ms": "guidellm's time_to_first_token_ms",
                   "tpot_ms": "guidellm's inter_token_latency_ms = (last token - first token) / (output tokens - 1) "
                              "per request, weighted by its output tokens - 1: vLLM's TPOT definition",
                   "e2e_ms": "guidellm's request_latency, in s on the page"}


def half_up(x: float) -> int:
    """``x`` rounded to the nearest integer, halves up (2.5 -> 3; Python's round would give 2)."""
    return int(math.floor(x + 0.5))


def tag_of(label: str) -> str:
    """A case label's letters and digits, for an id: "random 32K input" -> "random32Kinput", "BS=1" -> "BS1"."""
    return re.sub(r"[^A-Za-z0-9]", "", label)


# ---------------------------------------------------------------------------------------------------- the page


@dataclass
class Table:
    """One result table of a page: its readings (name -> (text, line)) and where it stands."""
    line: int                      # the "==== Serving Benchmark Result ====" line
    readings: dict
    block: str                     # the admonition's title ("Benchmark result", "Baseline benchmark results")
    path: list                     # section heading, variant label ('vLLM', 'TP2') or sub-heading
    case: str = ""                 # the "# ..." label above the table in its block
    launch: tuple = ("", 0)        # (command or backend parameters, line)
    profile: str = ""              # guidellm pages: the block's profile
    stage: str = ""                # "Baseline" / "Optimized" / ""
    variant: str = ""              # the plain-text label or #### heading naming the run


@dataclass
class Page:
    """What the converter reads from one page (``read_page``)."""
    path: str
    title: str = ""
    model: str = ""
    hardware: str = ""
    versions: dict = field(default_factory=dict)        # engine -> version
    datasets: list = field(default_factory=list)        # (input tokens, output tokens, line)
    scripts: dict = field(default_factory=dict)         # "sharegpt" / "random" -> (vllm bench serve command, line)
    profiles: dict = field(default_factory=dict)        # name -> (dict of its yaml, line)
    recommended: tuple = ("", 0)                        # the conclusion's serving command, line
    conclusion: str = ""                                # the text above the setup (its comparison table)
    tables: list = field(default_factory=list)
    empty: list = field(default_factory=list)           # (line, block path, what it shows) of blocks with no table
    guidellm: bool = False


_ADMON = re.compile(r'^\?\?\?\+? (?:info|tip) "([^"]+)"')
_READING = re.compile(r"^([A-Za-z][^:]*?):\s+(\S+)\s*$")


def _fences(lines):
    """(start line, end line, body [(line number, text dedented)]) of every fenced code block, in order."""
    out, i = [], 0
    while i < len(lines):
        s = lines[i]
        if s.strip().startswith("```"):
            indent = len(s) - len(s.lstrip())
            j, body = i + 1, []
            while j < len(lines) and not lines[j].strip().startswith("```"):
                t = lines[j]
                body.append((j + 1, t[indent:] if t[:indent].strip() == "" else t.strip()))
                j += 1
            out.append((i + 1, j + 1, body))
            i = j + 1
        else:
            i += 1
    return out


def join_command(body) -> str:
    """One line of a fenced shell command: backslash continuations joined, comment lines and blanks dropped,
    spaces collapsed. Example: ["vllm serve X \\\\", "  -tp 8"] -> "vllm serve X -tp 8"."""
    text = " ".join(t.rstrip("\\").strip() for _, t in body if t.strip() and not t.strip().startswith("#"))
    return re.sub(r"\s+", " ", text).strip()


def read_page(path: str, text: str) -> Page:
    """Parse one Performance Lab page (``text``, its markdown) into a ``Page``: the setup it states and every result
    table with the launch, heading path and case it belongs to.

    Raises:
        ValueError: the page has no "Experiment Results" section (not a tuning page)."""
    lines = text.split("\n")
    page = Page(path=path)
    fences = {start: (end, body) for start, end, body in _fences(lines)}
    heads = {2: "", 3: "", 4: "", 5: ""}
    variant, launch, profile, stage, pending = "", ("", 0), "", "", ""
    in_results, i = False, 0
    while i < len(lines):
        s, n = lines[i], i + 1
        st = s.strip()
        if n in fences:
            end, body = fences[n]
            _fence(page, heads, in_results, body, n)
            admon = _ADMON.match(pending)
            if admon and in_results:
                title = admon.group(1)
                if "serving script" in title.lower():
                    launch = (join_command(body), body[0][0] if body else n)
                    stage = title.split()[0] if title.split()[0] in ("Baseline", "Optimized") else ""
                elif "benchmark result" in title.lower():
                    stage_here = title.split()[0] if title.split()[0] in ("Baseline", "Optimized") else stage
                    _tables(page, body, title, heads, variant, launch, profile, stage_here, n)
            elif pending.lstrip("- ").startswith(("Backend Parameters", "Baseline Backend Parameters",
                                                  "Optimized Backend Parameters")) and in_results:
                launch = (" ".join(t.strip() for _, t in body if t.strip()), body[0][0] if body else n)
                stage = pending.lstrip("- ").split()[0] if pending.lstrip("- ").split()[0] in (
                    "Baseline", "Optimized") else ""
            elif admon and "serving command" in admon.group(1).lower() and not page.recommended[0]:
                page.recommended = (join_command(body), body[0][0] if body else n)
            i = end
            pending = ""
            continue
        h = re.match(r"^(#{1,5}) (.*)$", s)
        if h:
            level, name = len(h.group(1)), h.group(2).strip()
            if level == 1:
                page.title = name
            if level == 2 and name == "Experiment Results":
                in_results = True
            if level in (2, 3, 4, 5):
                heads[level] = name
                for deeper in range(level + 1, 6):
                    heads[deeper] = ""
            if level in (2, 3, 4):
                variant = name if level == 4 else ""
                profile = _profile_named(page, name) if level == 4 else ""
            pending = ""
        elif st.startswith("- Profile:"):
            profile = st.split("`")[1] if "`" in st else st.split(":", 1)[1].strip()
        elif st:
            if in_results and not st.startswith(("- ", "|", "!!!", "???", "Result", "<")) and len(st) <= 40 and \
                    i + 1 < len(lines) and _ADMON.match(lines[i + 1].strip()) and \
                    "serving script" in _ADMON.match(lines[i + 1].strip()).group(1).lower():
                variant = st
            if not in_results:
                _setup_line(page, heads, st, n)
            pending = st
        if heads[2] == "Conclusion" and not in_results:
            page.conclusion += s + "\n"
        i += 1
    if "## Experiment Results" not in text:
        raise ValueError(f"{path}: no 'Experiment Results' section")
    page.guidellm = bool(page.profiles)
    return page


def _profile_named(page: Page, heading: str) -> str:
    """The profile a heading of "Other Benchmark Cases" names, where its blocks state none: "Long Context Profile"
    -> "Long Context", "Rate 8" -> the one profile at request_rate 8; "" where no single profile fits (the block
    then states its own "- Profile:" line, or is left out)."""
    name = re.sub(r"\s+Profile$", "", heading).strip()
    if name in page.profiles:
        return name
    m = re.fullmatch(r"Rate (\d+(?:\.\d+)?)", name)
    if m:
        hits = [k for k, (v, _) in page.profiles.items() if float(v.get("request_rate", "nan")) == float(m.group(1))]
        return hits[0] if len(hits) == 1 else ""
    return ""


def _setup_line(page: Page, heads: dict, st: str, n: int) -> None:
    """Read one line of the page's setup sections (model, hardware, engine versions, dataset list)."""
    sec = heads[3]
    if sec == "Model" and not page.model:
        page.model = st.lstrip("- ").strip()
    elif sec == "Hardware" and not page.hardware:
        page.hardware = st
    elif sec == "Engine Version":
        m = re.match(r"^- ([A-Za-z-]+):? v?(\S+)$", st)
        if m and m.group(1).lower() in _ENGINES:
            page.versions[_ENGINES[m.group(1).lower()]] = m.group(2)
    elif sec == "Benchmark Dataset":
        m = re.search(r"(\d+) input tokens, (\d+) output tokens", st)
        if m:
            page.datasets.append((int(m.group(1)), int(m.group(2)), n))


def _fence(page: Page, heads: dict, in_results: bool, body, n: int) -> None:
    """Read a fenced block of the setup: the benchmark script's command lines or a guidellm profile."""
    if in_results:
        return
    if heads[3] == "Benchmark Script":
        for ln, t in body:
            if t.startswith("vllm bench serve"):
                kind = "random" if "--dataset-name random" in t else "sharegpt"
                page.scripts.setdefault(kind, (t.strip(), ln))
    elif heads[4] == "Benchmark Profiles" and heads[5]:
        prof = {}
        for _, t in body:
            if ":" in t:
                k, v = t.split(":", 1)
                prof[k.strip()] = v.strip()
        page.profiles[heads[5]] = (prof, n)


def _tables(page: Page, body, title: str, heads: dict, variant: str, launch: tuple, profile: str, stage: str,
            block_line: int) -> None:
    """Split one result block into its tables (``Table``), each with the "# ..." case label above it; a block with
    no table goes to ``page.empty`` with what it shows."""
    path = [heads[3]] + ([variant] if variant else [])
    case, cur, found = "", None, False
    for ln, t in body:
        t = t.strip()
        if t.startswith("=") and "Serving Benchmark Result" in t:
            cur = Table(line=ln, readings={}, block=title, path=path, case=case, launch=launch, profile=profile,
                        stage=stage, variant=variant)
            continue
        if cur is not None:
            if t.startswith("=====") and cur.readings:
                page.tables.append(cur)
                found, cur, case = True, None, ""
                continue
            m = _READING.match(t)
            if m:
                cur.readings[m.group(1).strip()] = (m.group(2), ln)
            continue
        if t.startswith("#"):
            case = t.lstrip("#").strip()
    if not found:
        what = " ".join(t.strip() for _, t in body if t.strip())[:160]
        page.empty.append((block_line, " / ".join(path + [f"block '{title}'"]), what))


# ---------------------------------------------------------------------------------------------------- the launch


def _flags(command: str) -> list:
    """(flag, value) pairs of a command line, in order ("--x=1" and "--x 1" alike; a flag without a value has
    value "")."""
    toks = command.split()
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        if t.startswith("-") and not re.fullmatch(r"-?\d+(\.\d+)?", t):
            if "=" in t:
                k, v = t.split("=", 1)
                out.append((k, v))
            elif i + 1 < len(toks) and not toks[i + 1].startswith("-"):
                out.append((t, toks[i + 1]))
                i += 1
            else:
                out.append((t, ""))
        i += 1
    return out


def apply_case_flags(command: str, case: str) -> str:
    """The launch a block's case label describes: a label of flags ("--max-num-batched-tokens 8192") replaces the
    same flags of the serving script, in place, or adds them; a label that sets ``--speculative-algorithm`` states
    the whole speculative configuration, so the script's other ``--speculative-*`` flags are dropped. A label of
    words ("fa3", "random 4K input") leaves the command as it is.
    Example: ("vllm serve M --max-num-batched-tokens 4096", "--max-num-batched-tokens 8192") ->
    "vllm serve M --max-num-batched-tokens 8192"."""
    if not case.startswith("--"):
        return command
    new = _flags(case)
    names = {k for k, _ in new}
    spec = "--speculative-algorithm" in names
    toks = command.split()
    out, i, placed = [], 0, set()
    while i < len(toks):
        t = toks[i]
        key = t.split("=", 1)[0]
        takes = "=" not in t and i + 1 < len(toks) and not toks[i + 1].startswith("-")
        if key.startswith("-") and (key in names or (spec and key.startswith("--speculative-"))):
            if key in names and key not in placed:
                v = dict(new)[key]
                out.append(f"{key}={v}" if "=" in t else f"{key} {v}".strip())
                placed.add(key)
            i += 2 if takes else 1
            continue
        out.append(t)
        i += 1
    for k, v in new:
        if k not in placed:
            out.append(f"{k} {v}".strip())
    return " ".join(out)


def engine_of(command: str) -> str:
    """The engine a serving command launches ("vllm", "sglang", "trtllm"), or "" for another command."""
    if re.search(r"(^|\s)vllm serve\s", command):
        return "vllm"
    if "sglang.launch_server" in command:
        return "sglang"
    if command.startswith("trtllm-serve") or " trtllm-serve " in command:
        return "trtllm"
    return ""


def checkpoint_of(command: str) -> str:
    """The checkpoint a serving command loads: vllm serve's and trtllm-serve's first argument, SGLang's
    ``--model-path``/``--model``."""
    m = re.search(r"(?:vllm serve|trtllm-serve)\s+([^\s-][^\s]*)", command)
    if m:
        return m.group(1)
    f = dict(_flags(command))
    return f.get("--model-path") or f.get("--model") or ""


def base_name(checkpoint: str) -> str:
    """A checkpoint's model, for comparing a launch with the page's model: the name without its organisation and
    without the suffixes of a quantized or instruction-tuned release.
    Example: "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8" -> "qwen3-235b-a22b"."""
    name = checkpoint.strip().split("/")[-1].lower()
    return re.sub(r"(-instruct(-\d+)?|-fp8|-awq|-int4|-gptq)+$", "", name)


def layout_of(command: str, engine: str):
    """(tp, pp, ep, dp) of a serving command, or None where it sets a layout this converter does not read (DP
    attention). vLLM's ``--enable-expert-parallel`` spreads the experts over TP x DP GPUs; SGLang's ``--ep-size``
    and TensorRT-LLM's ``--ep_size`` name EP directly.
    Example: "vllm serve M -tp 4 --enable-expert-parallel" -> (4, 1, 4, 1)."""
    f = dict(_flags(command))

    def num(*names):
        for k in names:
            if k in f and f[k]:
                return int(f[k])
        return 1
    if "--enable-dp-attention" in f:
        return None
    tp = num("-tp", "--tensor-parallel-size", "--tp-size", "--tp", "--tp_size")
    pp = num("-pp", "--pipeline-parallel-size", "--pp-size", "--pp_size")
    dp = num("-dp", "--data-parallel-size", "--dp-size", "--dp")
    ep = num("--ep-size", "--ep_size", "--expert-parallel-size")
    if engine == "vllm" and "--enable-expert-parallel" in f:
        ep = tp * dp
    return tp, pp, ep, dp


def weight_of(checkpoint: str, accelerator: str, command: str) -> tuple:
    """(calc weight dtype, words for the notes) of a checkpoint as its name states it (a ``--quantization fp8``
    flag makes it fp8)."""
    name = checkpoint.lower()
    f = dict(_flags(command))
    old = accelerator.startswith("a100")
    if "gpt-oss" in name:
        return "mxfp4", (f"checkpoint {checkpoint} (native MXFP4 MoE weights, BF16 attention"
                         + ("; A100 has no FP4 units: weight-only MXFP4 via Marlin/Triton kernels)" if old else ")"))
    if name.endswith("-awq"):
        return "int4-g128", f"checkpoint {checkpoint} (4-bit AWQ, group 128)"
    if name.endswith("-fp8") or f.get("--quantization") == "fp8":
        return "fp8", (f"checkpoint {checkpoint} (FP8"
                       + ("; on A100 (SM80) vLLM runs FP8 weight-only via Marlin)" if old else
                          " weights and activations)"))
    return "bf16", f"BF16 checkpoint {checkpoint}"


def speculative_words(command: str) -> str:
    """The notes' words on speculative decoding, as the launch states it: vLLM's ``--speculative-config`` JSON,
    SGLang's ``--speculative-*`` flags; "no speculative decoding" where it sets none."""
    f = dict(_flags(command))
    if "--speculative-config" in f:
        try:
            cfg = json.loads(f["--speculative-config"])
        except ValueError:
            cfg = {}
        k = cfg.get("num_speculative_tokens")
        return (f"speculative decoding ON: {str(cfg.get('method', '?')).upper()}, num_speculative_tokens "
                f"{k if k is not None else 'engine default'}; acceptance length not stated")
    if "--speculative-algorithm" in f:
        parts = [f"{k.replace('--speculative-', '')} {f[k]}" if k in f else
                 f"{k.replace('--speculative-', '')} engine default"
                 for k in ("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens")]
        draft = f.get("--speculative-draft-model-path")
        return (f"speculative decoding ON: {f['--speculative-algorithm']}"
                + (f" with draft model {draft}" if draft else "") + ", " + ", ".join(parts)
                + "; acceptance length not stated")
    return "no speculative decoding"


# ---------------------------------------------------------------------------------------------------- the rows


def _number(table: Table, name: str):
    """A reading of a table as a float, or None where the table lacks it."""
    got = table.readings.get(name)
    try:
        return float(got[0]) if got else None
    except ValueError:  # "N/A"
        return None


def _fingerprint(table: Table) -> tuple:
    """The readings of a table, for finding the same run shown twice."""
    return tuple(sorted((k, v[0]) for k, v in table.readings.items()))


def _claimed(page: Page, table: Table) -> bool:
    """Whether the page's conclusion quotes the table's Total Token throughput (its comparison table)."""
    tot = table.readings.get("Total Token throughput (tok/s)")
    return bool(tot) and re.search(rf"Total TPS: {re.escape(tot[0])}(?![\d.])", page.conclusion) is not None


def history(repo: str, commit: str, path: str, was: str = "") -> tuple:
    """(first commit, last commit) of a page as (short hash, YYYY-MM-DD): the commits that touched ``path`` and,
    before a rename, ``was`` (its earlier path; git's rename following needs blobs a partial copy may lack)."""
    log = []  # newest first: the page's commits, then those of its earlier path
    for p in (path, was):
        if p:
            log += [x.split() for x in git(repo, "log", "--format=%h %ad", "--date=short", commit, "--",
                                           p).split("\n") if x.strip()]
    return (log[-1][0], log[-1][1]), (log[0][0], log[0][1])


def convert(repo: str, retrieved: str, commit: str = COMMIT, pages=None):
    """(rows, sources, skipped) of the lab pages ``pages`` (paths under ROOT, keys of ``PAGES``; default all) of
    the git directory ``repo`` (``converter_io.git_dir``) at ``commit``: the measurement rows
    (``calc.measurements.COLUMNS``), one source per page (``calc.measurements.SOURCE_COLUMNS``, retrieved on
    ``retrieved``, YYYY-MM-DD), and (page:line, reason, kind of ``LEFT_OUT``) for every block or reading left out.
    Every page of the lab at the commit is read to find result tables shown on two pages.

    Raises:
        subprocess.CalledProcessError: git cannot read the copy or the commit.
        KeyError: a page that ``PAGES`` does not list."""
    full = git(repo, "rev-parse", commit).strip()
    day = git(repo, "log", "-1", "--format=%ad", "--date=short", full).strip()
    pages = list(pages or PAGES)
    unknown = [p for p in pages if p not in PAGES]
    if unknown:
        raise KeyError(f"no facts for {', '.join(unknown)}: add the page to PAGES")
    every = [n[len(ROOT) + 1:] for n in git(repo, "ls-tree", "-r", "--name-only", full, f"{ROOT}/").split("\n")
             if n.endswith(".md")]
    parsed = {}
    for p in every:
        try:
            parsed[p] = read_page(p, git(repo, "show", f"{full}:{ROOT}/{p}"))
        except ValueError:
            continue
    seen = {}  # fingerprint -> [(page, table)]
    for p, pg in parsed.items():
        for t in pg.tables:
            seen.setdefault(_fingerprint(t), []).append((p, t))
    rows, sources, skipped = [], [], []
    for p in pages:
        page, facts = parsed[p], PAGES[p]
        first, last = history(repo, full, f"{ROOT}/{p}", f"{ROOT}/{facts['was']}" if facts.get("was") else "")
        page_rows, page_skips = _page_rows(page, facts, seen, parsed, full, day, first, last)
        rows += page_rows
        skipped += page_skips
        sources.append(_source(page, facts, full, first, last, retrieved, page_skips, page_rows))
    return (pd.DataFrame(rows, columns=list(COLUMNS)), pd.DataFrame(sources, columns=list(SOURCE_COLUMNS)),
            skipped)


def _page_rows(page: Page, facts: dict, seen: dict, parsed: dict, commit: str, day: str, first: tuple,
               last: tuple):
    """The rows of one page and the (page:line, reason, kind) of what it leaves out (see ``convert``)."""
    rows, skips = [], [(f"{page.path}:{ln}", f"no result table ({where}): the page shows '{what}'", "failed")
                       for ln, where, what in page.empty]
    shown = {}
    page_key = base_name(page.model)
    rec_ckpt = checkpoint_of(page.recommended[0])
    n_page_gpus = _page_gpus(page.hardware)
    for r, t in enumerate(page.tables):
        where = f"{page.path}:{t.line}"
        fp = _fingerprint(t)
        if fp in shown:
            skips.append((where, f"repeats the result table at line {shown[fp]} (the same run shown twice)",
                          "repeat"))
            continue
        shown[fp] = t.line
        others = [(q, u) for q, u in seen.get(fp, []) if q != page.path]
        if others:
            q, u = others[0]
            mine, theirs = _claimed(page, t), any(_claimed(parsed[q], u) for q, u in others)
            if not (mine and not theirs):
                skips.append((where, f"the same table as {q} line {u.line}"
                                     + ("; that page's conclusion quotes its Total TPS and this page's does not, so "
                                        "it is that page's run" if theirs and not mine else
                                        "; neither page's conclusion settles whose run it is"), "copy"))
                continue
        run = _run(page, facts, t, rec_ckpt)
        if isinstance(run, str):
            skips.append((where, run, "launch"))
            continue
        if base_name(run["checkpoint"]) != page_key:
            skips.append((where, f"the launch serves {run['checkpoint']}, another model than the page's "
                                 f"{page.model}", "model"))
            continue
        tight = weights_overflow(facts, run)
        if tight:
            skips.append((where, tight, "memory"))
            continue
        n = int(_number(t, "Successful requests"))
        want = run.get("requests")
        if want and n != want:
            skips.append((where, f"{n} of {want} requests completed", "incomplete"))
            continue
        rows += _rows(page, facts, t, run, r, commit, day, first, last, n_page_gpus, skips)
    return rows, skips


def weights_overflow(facts: dict, run: dict) -> str:
    """Why a run cannot have served the checkpoint its launch names: its weights (``calc.weight_bytes`` in the
    checkpoint's dtype) above the memory of the GPUs it runs on; "" where they fit, or where calc has no preset of
    the model yet (nothing checked). Example: GLM-4.5-Air in BF16, 214 GB, on 2 H100 of 80 GB -> the reason."""
    try:
        model, acc = get_model(facts["model"]), get_accelerator(facts["accelerator"])
    except (KeyError, ValueError):
        return ""
    tp, pp, ep, dp = run["layout"]
    dtype = weight_of(run["checkpoint"], facts["accelerator"], run["command"])[0]
    need, have = weight_bytes(model, dtype), tp * pp * dp * acc.memory_bytes
    if need <= have:
        return ""
    return (f"the launch's checkpoint {run['checkpoint']} holds {need / 1e9:.0f} GB of {dtype} weights, more than "
            f"the {have / 1e9:.0f} GB of its {tp * pp * dp} GPU(s): it cannot have run as the page states, and the "
            f"page does not say what ran")


def _page_gpus(hardware: str) -> int:
    """The GPUs the page's hardware line states ("8 x NVIDIA H200", "A single NVIDIA H100"): 1 where it gives no
    count."""
    m = re.match(r"^(\d+)\s*[×x]", hardware)
    return int(m.group(1)) if m else 1


def _run(page: Page, facts: dict, t: Table, rec_ckpt: str):
    """The configuration of one table's run (a dict), or the reason it is left out (a str)."""
    cmd = apply_case_flags(t.launch[0], t.case)
    if page.guidellm:
        prof = page.profiles.get(t.profile)
        if prof is None:
            return f"profile '{t.profile}' is not among the page's Benchmark Profiles"
        flags_engine = "sglang" if "--context-length" in cmd else "vllm"
        named = next((e for w, e in (("vLLM", "vllm"), ("SGLang", "sglang")) if t.variant == w), "")
        engine = named or engine_of(page.recommended[0])
        if engine != flags_engine:
            return f"the backend parameters ({cmd}) read as {flags_engine}, the heading as {engine}"
        # the backend parameters name no checkpoint: a section named "... Quantization" serves the page's
        # recommended (quantized) checkpoint, as does the optimized run of "Other Benchmark Cases"; the others the
        # page's model
        quantized = rec_ckpt.lower().endswith("-fp8")
        if "Quantization" in t.path[0] and not quantized:
            return "a quantization section, but the page's recommended command names no quantized checkpoint"
        if quantized and "Quantization" in t.path[0]:
            ckpt, why_ckpt = rec_ckpt, (f"the page's recommended checkpoint (line {page.recommended[1]}), "
                                        f"which the section '{t.path[0]}' quantizes to")
        elif t.stage == "Optimized":
            ckpt, why_ckpt = rec_ckpt, (f"the checkpoint of the page's recommended command (line "
                                        f"{page.recommended[1]}), the optimized run's")
        else:
            ckpt, why_ckpt = page.model, "the page's 'Model' section"
        launch = (f"{'vllm serve' if engine == 'vllm' else 'python3 -m sglang.launch_server --model-path'} "
                  f"{ckpt} {cmd}")
        run = dict(engine=engine, checkpoint=ckpt, command=launch, ckpt_why=why_ckpt,
                   requests=int(prof[0].get("total_requests", 0)) or None, profile=prof)
    else:
        engine = engine_of(cmd)
        if not engine:
            return f"no serving command of a known engine above the block (launch '{cmd}')"
        ckpt = checkpoint_of(cmd)
        run = dict(engine=engine, checkpoint=ckpt, command=cmd, ckpt_why="")
    override = facts.get("checkpoint", {}).get(t.line)
    if override:
        run["command"] = run["command"].replace(run["checkpoint"], override[0], 1)
        run["checkpoint"], run["ckpt_why"] = override[0], override[1]
    lay = layout_of(run["command"], engine)
    if lay is None:
        return f"a layout this converter does not read ({run['command']})"
    run["layout"] = lay
    if engine not in page.versions:
        return f"the page's 'Engine Version' list gives no version of {engine}"
    return run


def _mode(page: Page, t: Table, run: dict):
    """(mode, concurrency, request rate, words for the notes, the client's command words) of a table's run."""
    n = int(_number(t, "Successful requests"))
    dur = _number(t, "Benchmark duration (s)")
    if page.guidellm:
        prof = run["profile"][0]
        rate = float(prof["request_rate"])
        total = int(prof["total_requests"])
        what = (f"GPUStack's benchmark (guidellm's constant profile through gpustack/benchmark-runner) of the page's "
                f"profile '{t.profile}' (dataset_name {prof['dataset_name']}, request_rate {prof['request_rate']}, "
                f"total_requests {total}" + (f", dataset_input_tokens {prof['dataset_input_tokens']}, "
                                             f"dataset_output_tokens {prof['dataset_output_tokens']}, dataset_seed "
                                             f"{prof.get('dataset_seed', '')}" if "dataset_input_tokens" in prof
                                             else "") + ")")
        if total / rate <= BURST_SHARE * dur:
            if total <= GUIDELLM_MAX_CONCURRENCY:
                return ("offline", total, None,
                        f"{total} requests issued within {total / rate:.2f} s of a {dur} s run (a burst: all sent "
                        f"at once, concurrency = {total}, the whole run)", what)
            return ("concurrency", GUIDELLM_MAX_CONCURRENCY, None,
                    f"{total} requests issued at {prof['request_rate']}/s with at most "
                    f"{GUIDELLM_MAX_CONCURRENCY} in flight (guidellm's default max_concurrency): a closed loop at "
                    f"concurrency {GUIDELLM_MAX_CONCURRENCY} after the first {GUIDELLM_MAX_CONCURRENCY}", what)
        return ("rate", None, rate, f"requests at {prof['request_rate']}/s, evenly spaced (guidellm's constant "
                                    f"profile), concurrency not set", what)
    kind = "random" if "random" in t.case.lower() else "sharegpt"
    script = page.scripts.get(kind, ("", 0))[0]
    words = re.sub(r"\s*--model \S+", "", script)
    words = re.sub(r"--num-prompts \d+", f"--num-prompts {n}", words)
    if kind == "random":
        nominal = _nominal(page, t)
        if nominal:
            words = re.sub(r"--random-input-len \d+", f"--random-input-len {nominal[0]}", words)
            words = re.sub(r"--random-output-len \d+", f"--random-output-len {nominal[1]}", words)
            words += f" (the page's benchmark script; {t.case})"
    elif t.case and not t.case.startswith("--"):
        words += f" ({t.case})"
    conc = t.readings.get("Maximum request concurrency")
    if conc:
        c = int(float(conc[0]))
        if "--max-concurrency" not in words:
            words += f" --max-concurrency {c}"
        words = re.sub(r"--max-concurrency \d+", f"--max-concurrency {c}", words)
        return "concurrency", c, None, f"closed loop at max concurrency {c}", words
    return ("offline", n, None, f"request rate inf, no --max-concurrency (a burst: all {n} requests sent at once, "
                                f"concurrency = {n}, the whole run)", words)


def _nominal(page: Page, t: Table):
    """(input, output, line) of the page's random case whose input length the run's mean input matches (within 2%),
    or None."""
    n = _number(t, "Successful requests")
    mean_in = _number(t, "Total input tokens") / n
    best = min(page.datasets, key=lambda d: abs(d[0] - mean_in), default=None)
    return best if best and abs(best[0] - mean_in) <= 0.02 * best[0] else None


def _rows(page, facts, t, run, r, commit, day, first, last, n_page_gpus, skips) -> list:
    """The rows of one table's run (see ``convert``); readings left out are added to ``skips``."""
    engine, ckpt, cmd = run["engine"], run["checkpoint"], run["command"]
    tp, pp, ep, dp = run["layout"]
    n_gpus = tp * pp * dp
    mode, conc, rate, mode_words, client = _mode(page, t, run)
    n = int(_number(t, "Successful requests"))
    tot_in, tot_out = _number(t, "Total input tokens"), _number(t, "Total generated tokens")
    mean_in, mean_out = tot_in / n, tot_out / n
    wdtype, wwords = weight_of(ckpt, facts["accelerator"], cmd)
    flags = dict(_flags(cmd))
    kv = {"fp8": "fp8", "fp8_e4m3": "fp8"}.get(flags.get("--kv-cache-dtype", ""), "")
    if page.guidellm:
        prof = run["profile"][0]
        if prof["dataset_name"].lower() == "sharegpt":
            dist = "sharegpt"
        else:
            dist = (f"random (guidellm synthetic prompts: prompt_tokens={prof['dataset_input_tokens']}, "
                    f"output_tokens={prof['dataset_output_tokens']}, seed {prof.get('dataset_seed', '')}); "
                    f"mean lengths")
        tag = tag_of(t.profile)
    else:
        nominal = _nominal(page, t) if "random" in t.case.lower() else None
        if "random" in t.case.lower() and not nominal:
            skips.append((f"{page.path}:{t.line}", f"a random case ('{t.case}') whose mean input "
                                                   f"{mean_in:.1f} matches no entry of the page's dataset list",
                          "launch"))
            return []
        dist = ("sharegpt" if not nominal else
                f"random, range ratio 0 (vllm bench serve --dataset-name random --random-input-len {nominal[0]} "
                f"--random-output-len {nominal[1]} --seed 42: every prompt {nominal[0]} tokens nominal, output "
                f"capped at {nominal[1]}, no --ignore-eos so outputs may end early); mean lengths")
        tag = tag_of(t.case) if t.case and not t.case.startswith("--") else "sharegpt"
    layout_tag = f"tp{tp}" + (f"ep{ep}" if ep > 1 else "") + (f"pp{pp}" if pp > 1 else "") + \
                 (f"dp{dp}" if dp > 1 else "")
    rid = f"{facts['source']}-{engine}-{wdtype}-{layout_tag}-{tag}-r{r}"
    reasoning_blind = page.guidellm and engine == "vllm" and "--reasoning-parser" in flags
    hw = f"hardware as quoted: '{page.hardware}'"
    if facts.get("hardware"):
        hw += f" ({facts['hardware']})"
    elif n_gpus < n_page_gpus:
        hw += f" (this run uses {n_gpus} of them)"
    where_words = " / ".join([f"section {t.path[0]}"] + [f"'{x}'" for x in t.path[1:]] + [f"block '{t.block}'"]
                             + ([f"case '{t.case}'"] if t.case else []))
    layout_words = f"TP{tp}" + (f" EP{ep}" if ep > 1 else "") + (f" PP{pp}" if pp > 1 else "") + \
                   (f" DP{dp}" if dp > 1 else "") + f" on {n_gpus} GPU(s)"
    ep_words = ""
    if ep > 1:
        ep_words = ("; expert parallel on (--enable-expert-parallel: EP%d over the TP%d group)" % (ep, tp)
                    if "--enable-expert-parallel" in flags else f"; expert parallel on (EP{ep})")
    hist = (f"page first committed {first[1]} ({first[0]})"
            + (f", last changed {last[1]} ({last[0]})" if last != first else ""))
    common = "; ".join(x for x in [
        f"{n} requests",
        client,
        mode_words,
        f"peak concurrent requests {_number(t, 'Peak concurrent requests')}",
        f"benchmark duration {_number(t, 'Benchmark duration (s)')} s",
        f"total input {int(tot_in)} / generated {int(tot_out)} tokens (mean input {mean_in:.1f} / output "
        f"{mean_out:.1f})",
        f"serving: {cmd}" + (f" (checkpoint: {run['ckpt_why']})" if run.get("ckpt_why") else ""),
        f"engine {engine} {page.versions[engine]} (the page's 'Engine Version' list)",
        wwords,
        "KV cache in FP8 (--kv-cache-dtype fp8)" if kv else "KV cache dtype not stated (engine default)",
        "CUDA graphs at engine default",
        speculative_words(cmd) + ep_words,
        hw,
        layout_words,
    ] if x)
    out = []
    fields = _GUIDELLM_FIELDS if page.guidellm else _VLLM_FIELDS
    left_out = facts.get("left_out", {})
    for name, metric, stat, factor in fields:
        got = t.readings.get(name)
        if got is None:
            continue
        text, line = got
        where = f"{page.path}:{line}"
        if _number(t, name) is None:
            skips.append((where, f"'{name}' left out: the page prints '{text}'", "na"))
            continue
        if metric == "total_tok_per_s_per_gpu" and n_gpus != 1:
            continue  # the deployment's total over several GPUs: not written per GPU (the GPUStack rows' rule)
        if line in left_out:
            skips.append((where, f"'{name}' left out: {left_out[line]}", "artifact"))
            continue
        if page.guidellm and float(text) == 0.0:
            skips.append((where, f"'{name}' = {text} left out: guidellm counts a request without token timings "
                                 f"as 0", "zero"))
            continue
        if reasoning_blind and metric in _BLIND_METRICS:
            skips.append((where, f"'{name}' left out: vLLM streams the reasoning parser's output as 'reasoning', "
                                 f"which GPUStack's client does not read (its token timings miss the thinking tokens)",
                          "reasoning"))
            continue
        prefix = ("single GPU, so 'Total Token throughput (tok/s)' is per GPU; "
                  if metric == "total_tok_per_s_per_gpu" else "")
        value_words = (f"value: '{name}'" + (f" ({_GUIDELLM_WORDS[metric]})" if page.guidellm and
                                             metric in _GUIDELLM_WORDS else "")
                       + (" x 1000" if factor != 1.0 else "")
                       + f" of the benchmark result block at line {t.line} ({where_words}) of gpustack/gpustack "
                         f"{ROOT}/{page.path} @{commit} (commit of {day}; {hist}); licence Apache-2.0")
        out.append(dict(
            id=f"{rid}-{metric}-{stat}", source_id=facts["source"], model=model_cell(facts["model"], ckpt),
            model_family=facts["family"], accelerator=facts["accelerator"], n_gpus=n_gpus, tp=tp, pp=pp, ep=ep,
            dp=dp, engine=engine, engine_version=page.versions[engine], weight_dtype=wdtype, kv_dtype=kv,
            input_len=half_up(mean_in), output_len=half_up(mean_out), len_dist=dist,
            concurrency=conc if conc is not None else "", request_rate_per_s=rate if rate is not None else "",
            mode=mode, metric=metric, statistic=stat, value=round(float(text) * factor, 6),
            notes=prefix + common + "; " + value_words))
    return out


#: The source notes' words for each kind of thing a page's rows leave out (``_page_rows``, ``_rows``); "block" kinds
#: list their lines.
LEFT_OUT = {
    "failed": ("block", "blocks with no result table (the engine failed on the setup; the page shows its error)"),
    "model": ("block", "results whose launch serves another model than the page's"),
    "repeat": ("block", "result tables repeating an earlier table of the page (the same run shown twice)"),
    "copy": ("block", "result tables identical to another lab page's, whose conclusion quotes them and this "
                      "page's does not (copies)"),
    "incomplete": ("block", "runs where not every request completed"),
    "memory": ("block", "results whose launch names a checkpoint larger than its GPUs' memory (the page does not "
                        "say what ran)"),
    "launch": ("block", "results whose launch the converter cannot read"),
    "artifact": ("reading", "readings that are streaming artifacts, not decode steps"),
    "na": ("reading", "readings the page prints as N/A"),
    "zero": ("reading", "readings of 0.00 (guidellm counts a request without token timings as 0)"),
    "reasoning": ("reading", "TTFT, ITL and token-rate readings of vLLM runs with a reasoning parser (vLLM 0.17 "
                             "streams the reasoning as 'reasoning', which GPUStack's client does not read: its "
                             "token timings miss the thinking tokens; request rates and latencies stand)"),
}


def left_out_words(skips) -> str:
    """The source notes' account of what a page's rows leave out: per kind (``LEFT_OUT``), how many, with the
    lines of left-out blocks and the reasons of left-out streaming artifacts; "" where nothing is left out.
    Example: "result tables repeating an earlier table of the page (the same run shown twice): 1, line 195"."""
    parts = []
    for kind, (level, words) in LEFT_OUT.items():
        hits = [(where.rsplit(":", 1)[1], why) for where, why, k in skips if k == kind]
        if not hits:
            continue
        lines = ", ".join(line for line, _ in hits)
        if kind == "artifact":
            parts.append(f"{words}: {len(hits)}, " + "; ".join(f"line {line} ({why.split(' left out: ', 1)[-1]})"
                                                               for line, why in hits))
        elif level == "block":
            parts.append(f"{words}: {len(hits)}, line{'s' if len(hits) > 1 else ''} {lines}")
        else:
            parts.append(f"{words}: {len(hits)}")
    return "; ".join(parts)


def _source(page, facts, commit, first, last, retrieved, skips, rows) -> dict:
    """The source row of one page: its title, address, dates, licence, and what its rows leave out."""
    kind = ("GPUStack's benchmark (guidellm through gpustack/benchmark-runner) at the page's profiles: guidellm's "
            "TPOT (which includes the wait for the first token) left out, its ITL (vLLM's TPOT definition) written "
            "as TPOT, its request latency as E2E" if page.guidellm else
            "vllm bench serve against the page's launches: runs that send every request at once are offline rows "
            "with concurrency = N, runs with --max-concurrency closed loops at it")
    left = left_out_words(skips)
    return dict(
        source_id=facts["source"], title=f"GPUStack Performance Lab: {page.title} ({ROOT}/{page.path})",
        url=f"{URL}/blob/{commit}/{ROOT}/{page.path}", commit=commit, published=first[1], retrieved=retrieved,
        license="Apache-2.0", shipped="yes",
        notes=(f"First committed {first[1]} ({first[0]})"
               + (f", last changed {last[1]} ({last[0]})" if last != first else "")
               + f"; {kind}; hardware as quoted: '{page.hardware}'"
               + (f" ({facts['hardware']})" if facts.get("hardware") else "")
               + (f". Left out: {left}" if left else "")
               + ". A check set gathered after the fit: none of its rows is read by the fit; see each row's notes "
                 "for the run as the page states it (bench/convert_gpustack.py)"))


def main():
    """The command line (see the module text): convert the pages, print what was left out, write and check."""
    args = parse_args(__doc__.split("\n")[0], "GPUSTACK_REPO", "github.com/gpustack/gpustack", extra=_extra_args)
    try:
        repo = git_dir(args.repo, "github.com/gpustack/gpustack")
        pages = [p.strip() for p in args.pages.split(",")] if args.pages else None
        rows, sources, skipped = convert(repo, args.retrieved, args.commit, pages)
    except (ValueError, KeyError, subprocess.CalledProcessError) as e:
        sys.exit(e.args[0] if isinstance(e, KeyError) else str(e))
    for where, why, _ in skipped:
        print(f"skipped {where}: {why}")
    if rows.empty:
        sys.exit("no rows: nothing written")
    write_checked(args.out, rows, sources, known_models_only=True)


def _extra_args(ap) -> None:
    """The converter's own options: the commit and the pages."""
    ap.add_argument("--commit", default=COMMIT, help=f"the commit to read the pages at (default {COMMIT[:10]})")
    ap.add_argument("--pages", default="", help="comma-separated page paths under docs/performance-lab (default: "
                                                "every page of PAGES)")


if __name__ == "__main__":
    main()
