"""Convert InferenceX's token-position runs (vLLM on 8 H200, GLM-5, MiniMax-M2.5, Qwen3.5) into held-out rows of
calc's serving measurements.

Run::

    python3 bench/convert_inferencex_slo.py OUT.csv [--repo PATH] [--retrieved YYYY-MM-DD]

``--repo`` (or the environment variable ``INFERENCEX_REPO``) names a git copy of github.com/SemiAnalysisAI/InferenceX:
a bare git directory or a checkout; the files are read from its HEAD commit with git, so no work tree is needed.
OUT.csv receives measurement rows with the columns of ``calc.measurements.COLUMNS`` (the format of
calc/data/serving_holdout.csv), OUT_sources.csv beside it the rows for serving_sources.csv
(``calc.measurements.SOURCE_COLUMNS``). The converter prints what it wrote or skipped, then loads OUT.csv with
``calc.measurements.load_measurements`` and prints every row that beats calc's lower bound
(``calc.measurements.measurement_bound``).

Source: experimental/token_position_decode_slo/<model>/results/*.json of https://github.com/SemiAnalysisAI/InferenceX
(the repository's LICENSE is the Apache License 2.0, so the numbers may be shipped), added by pull request #709
(2026-02-18): one JSON per run of the folder's own client, benchmark_serving_random.py, against a vLLM server
(image vllm/vllm-openai:nightly) on 8 H200. What each run is, as the folder's scripts state it:

- the client (bmk_<model>_sbatch.sh): input lengths 1,024-16,384, output 128, concurrency 4-64; ``--num-warmups``
  2 x C, then ``--num-prompts`` 10 x C requests at ``--max-concurrency`` C (10 rounds of C requests), ``--request-rate
  inf``, ``--ignore-eos``; prompts of random token ids at fixed lengths (its ``sample_random_requests``: "Use fixed
  lengths (no range variation)") sent to ``/v1/completions``;
- the server: serve_<model>_*_sbatch.sh where the folder has one (MiniMax-M2.5: ``--tensor-parallel-size 8
  --enable-expert-parallel``, the "tep8" files; Qwen3.5: ``--tensor-parallel-size 8 --enable-prefix-caching``);
  GLM-5's folder has no server script, its files' name and its plot's title say TP8 on 8xH200;
- the accelerator: each folder's plot_sla_frontier.py title ("8xH200 TP8 vLLM") and the server scripts' Slurm
  partition (``-p h200``, ``--gres=gpu:8``).

Per file, seven rows: the output tokens/s (``output_throughput``, the whole deployment's), the median and 99th
percentile TTFT, TPOT and end-to-end latency (``median_ttft``, ``p99_ttft``, ``median_tpot``, ``p99_tpot``,
``median_e2el``, ``p99_e2el``, in seconds in the file, written in ms). The engine version is the run's date
(``date``, "nightly-YYYY-MM-DD": the nightly image current on or before that day). The KV cache dtype is not stated
(the engine's default). Files of another layout than the folder's server script runs (MiniMax-M2.5's seven "dep8"
files, whose launch no script in the folder gives) are skipped and named. The folder's README calls its code
experimental.

The rows are held out (calc/data/serving_holdout.csv): no fit reads them.
"""
import datetime as _dt
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from bench.converter_io import git, git_dir, parse_args, write_checked  # noqa: E402
from calc.measurements import COLUMNS, SOURCE_COLUMNS, rounds_note  # noqa: E402
from calc.speculative_serving import speculative_from_notes  # noqa: E402

ROOT = "experimental/token_position_decode_slo"
URL = "https://github.com/SemiAnalysisAI/InferenceX"
#: folder -> (calc model, family, checkpoint, weight dtype, source id)
FOLDERS = {"glm-5": ("glm-5", "glm", "zai-org/GLM-5-FP8", "fp8-block", "inferencex-slo-glm5-h200"),
           "minimax-m2.5": ("minimax-m2.5", "minimax", "MiniMaxAI/MiniMax-M2.5", "fp8-block",
                            "inferencex-slo-minimax-m25-h200"),
           "qwen3.5": ("qwen3.5-397b-a17b", "qwen", "Qwen/Qwen3.5-397B-A17B", "bf16", "inferencex-slo-qwen35-h200")}
_NAME = re.compile(r"_vllm_(?P<layout>[a-z]+\d+)_isl(?P<isl>\d+)_osl(?P<osl>\d+)_conc(?P<conc>\d+)\.json$")
_TITLE = re.compile(r"(\d+)x([A-Z]\d+[A-Z]*) ([A-Z]+\d+) vLLM")
#: the file's fields -> (metric, statistic, factor to calc's unit)
FIELDS = (("output_throughput", "output_tok_per_s", "mean", 1.0), ("median_ttft", "ttft_ms", "median", 1e3),
          ("p99_ttft", "ttft_ms", "p99", 1e3), ("median_tpot", "tpot_ms", "median", 1e3),
          ("p99_tpot", "tpot_ms", "p99", 1e3), ("median_e2el", "e2e_ms", "median", 1e3),
          ("p99_e2el", "e2e_ms", "p99", 1e3))


def _run_order(name: str) -> tuple:
    """A result file's place among the folder's: by layout, then prompt length and concurrency as numbers; a name
    of another form last, by its text."""
    m = _NAME.search(name)
    return (0, m.group("layout"), int(m.group("isl")), int(m.group("conc")), "") if m else (1, "", 0, 0, name)


def layout_of(tag: str) -> tuple[int, int, int] | None:
    """(tp, ep, dp) of a file name's layout tag: "tp8" tensor parallelism over 8 GPUs, "tep8" the same with the
    experts split over the 8 (``--enable-expert-parallel``); None for a tag no server script of the folder
    launches ("dep8")."""
    m = re.fullmatch(r"(tp|tep)(\d+)", tag)
    if not m:
        return None
    n = int(m.group(2))
    return n, (n if m.group(1) == "tep" else 1), 1


def launch_words(script: str, checkpoint: str) -> str:
    """The ``vllm serve`` command of a server script, one line, with ``checkpoint`` for its ``$MODEL`` and its
    flags but the paths, the profiler and the address; "" where the folder has no server script.
    Example: "exec vllm serve $MODEL \\ --tensor-parallel-size 8 \\ --speculative-config.method mtp \\ --port $PORT"
    -> "vllm serve zai-org/GLM-5-FP8 --tensor-parallel-size 8 --speculative-config.method mtp"."""
    m = re.search(r"vllm serve (\S+)(.*?)(?:\n\s*\n|\Z)", script, re.S)
    if not m:
        return ""
    flags = re.findall(r"(--[\w.-]+)(?: ([^\s\\-][^\s\\]*))?", m.group(2))
    keep = [f"{k} {v}".strip() for k, v in flags if k not in ("--download-dir", "--profiler-config", "--host",
                                                                 "--port")]
    return " ".join(["vllm serve", m.group(1).replace("$MODEL", checkpoint)] + keep)


def convert(repo: str, retrieved: str):
    """(rows, sources, skipped) of the git directory ``repo`` (``converter_io.git_dir``) at its HEAD: the
    measurement rows of every result file of the ``FOLDERS`` (``calc.measurements.COLUMNS``), one source per folder
    (``calc.measurements.SOURCE_COLUMNS``, retrieved on ``retrieved``, YYYY-MM-DD), and (file, reason) for each
    result or folder left out (a layout no server script launches, a run whose requests did not all complete, a
    plot title that names no 8xH200 run).

    Raises:
        subprocess.CalledProcessError: git cannot read the copy."""
    head = git(repo, "rev-parse", "HEAD").strip()
    rows, sources, skipped = [], [], []
    for folder, (model, family, ckpt, wdtype, sid) in FOLDERS.items():
        base = f"{ROOT}/{folder}"
        names = [n for n in git(repo, "ls-tree", "-r", "--name-only", "HEAD", f"{base}/results/").split("\n") if n]
        if not names:
            continue
        files = {n.rsplit("/", 1)[-1] for n in git(repo, "ls-tree", "--name-only", "HEAD", f"{base}/").split("\n")}
        plot = git(repo, "show", f"HEAD:{base}/plot_sla_frontier.py") if "plot_sla_frontier.py" in files else ""
        title = _TITLE.search(plot)
        if not title or title.group(2) != "H200":
            skipped.append((base, "the folder's plot title names no 8xH200 run"))
            continue
        server = next((f for f in sorted(files) if f.startswith("serve_") and f.endswith(".sh")), "")
        script = git(repo, "show", f"HEAD:{base}/{server}") if server else ""
        launch = launch_words(script, ckpt)
        wheel = re.search(r"VLLM_COMMIT=([0-9a-f]{7,40})", script)
        if wheel:  # the script installs a wheel of one vLLM commit over the nightly image
            launch += f" (vLLM wheel of commit {wheel.group(1)[:10]} installed over the image)"
        commit = git(repo, "log", "-1", "--format=%H %ad", "--date=short", "--", f"{base}/results").split()
        # in the order of their layout, prompt length and concurrency (the folder lists conc16 before conc4)
        for name in sorted(names, key=_run_order):
            m = _NAME.search(name)
            layout = layout_of(m.group("layout")) if m else None
            if layout is None:
                skipped.append((name, "no server script of the folder launches this layout" if m else
                                "not a result file of the folder's naming"))
                continue
            run = json.loads(git(repo, "show", f"HEAD:{name}"))
            c, n = int(m.group("conc")), int(run["num_prompts"])
            if int(run.get("completed", 0)) != n or int(run.get("max_concurrency") or 0) != c:
                skipped.append((name, f"{run.get('completed')} of {n} requests completed at concurrency "
                                      f"{run.get('max_concurrency')}"))
                continue
            i, o = int(run["total_input_tokens"]) // n, int(run["total_output_tokens"]) // n
            day = _dt.datetime.strptime(run["date"], "%Y%m%d-%H%M%S").date().isoformat()
            tp, ep, dp = layout
            serve = launch or (f"vllm serve {ckpt} (the folder has no server script; TP{tp} from the file's name and "
                               f"the plot's title '{title.group(0)}')")
            spec = speculative_from_notes(serve)
            for field, metric, stat, factor in FIELDS:
                rows.append(dict(
                    id=f"ixslo-{folder.replace('.', '')}-h200-vllm-{m.group('layout')}-{i}-{o}-c{c}-{metric}-{stat}",
                    source_id=sid, model=model, model_family=family, accelerator="h200", n_gpus=int(title.group(1)),
                    tp=tp, pp=1, ep=ep, dp=dp, engine="vllm", engine_version=f"nightly-{day}", weight_dtype=wdtype,
                    kv_dtype="", input_len=i, output_len=o, len_dist="fixed", concurrency=c, request_rate_per_s="",
                    mode="concurrency", metric=metric, statistic=stat, value=round(float(run[field]) * factor, 4),
                    notes=(f"{n} requests, {rounds_note(n // c)} at concurrency {c} after {2 * c} warm-up requests "
                           f"(the folder's benchmark_serving_random.py --max-concurrency {c} --num-prompts {n} "
                           f"--num-warmups {2 * c} --request-rate inf --ignore-eos against /v1/completions; random "
                           f"token ids at fixed lengths {i:,} / {o:,}); checkpoint {ckpt}; image "
                           f"vllm/vllm-openai:nightly, run {run['date']}; launch: {serve}"
                           + (f" (speculative decoding on: {spec['method'].upper()}, {spec['draft_tokens']} draft "
                              f"token(s) per round, no acceptance length stated)" if spec else
                              " (no speculative decoding)")
                           + f"; {title.group(1)} x H200 (the folder's plot title '{title.group(0)}'); KV cache dtype "
                           f"not stated (engine default); field '{field}'"
                           + (" x 1000 (seconds in the file)" if factor != 1.0 else "")
                           + f"; file {name} of github.com/SemiAnalysisAI/InferenceX @{head[:10]} (added "
                           f"{commit[1]} by {commit[0][:10]}); licence Apache-2.0")))
        sources.append(dict(
            source_id=sid, title=f"InferenceX token-position runs: {ckpt} on {title.group(1)}x H200 with vLLM "
                                 f"({ROOT}/{folder}/results)",
            url=f"{URL}/tree/{head}/{base}", commit=head, published=commit[1], retrieved=retrieved,
            license="Apache-2.0", shipped="yes",
            notes=(f"Pull request #709 (commit {commit[0][:10]}): closed loops of 10 rounds of C requests at "
                   f"concurrency 4-64 after 2 x C warm-up requests, fixed lengths (1,024-16,384 in, 128 out, "
                   f"--ignore-eos) against /v1/completions; median and p99 latencies and the output throughput per "
                   f"file; the folder's README calls its code experimental. A check set gathered after the fit: "
                   f"none of its rows is read by the fit (bench/convert_inferencex_slo.py)")))
    return (pd.DataFrame(rows, columns=list(COLUMNS)), pd.DataFrame(sources, columns=list(SOURCE_COLUMNS)),
            skipped)


def main():
    args = parse_args(__doc__.split("\n")[0], "INFERENCEX_REPO", "github.com/SemiAnalysisAI/InferenceX")
    try:
        rows, sources, skipped = convert(git_dir(args.repo, "github.com/SemiAnalysisAI/InferenceX"), args.retrieved)
    except (ValueError, subprocess.CalledProcessError) as e:
        sys.exit(str(e))
    for name, why in skipped:
        print(f"skipped {name}: {why}")
    if rows.empty:
        sys.exit(f"no result file under {ROOT} in {args.repo}: nothing written")
    write_checked(args.out, rows, sources)


if __name__ == "__main__":
    main()
