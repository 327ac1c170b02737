"""Convert the throughput tables of ROCm's vLLM page into held-out rows of calc's serving measurements.

Run::

    python3 bench/convert_rocm_devdocker.py OUT.csv [--repo PATH] [--retrieved YYYY-MM-DD]

``--repo`` (or the environment variable ``ROCM_VLLM_REPO``) names a git copy of github.com/ROCm/vllm: a bare git
directory or a checkout; the page is read from every commit of its history with git, so no work tree is needed.
OUT.csv receives measurement rows with the columns of ``calc.measurements.COLUMNS`` (the format of
calc/data/serving_holdout.csv), OUT_sources.csv beside it the rows for serving_sources.csv
(``calc.measurements.SOURCE_COLUMNS``). The converter prints what it wrote, then loads OUT.csv with
``calc.measurements.load_measurements`` and prints every row that beats calc's lower bound
(``calc.measurements.measurement_bound``).

Source: docs/dev-docker/README.md of https://github.com/ROCm/vllm (Apache-2.0, so the numbers may be shipped),
"vLLM FP8 latency and throughput benchmarks on the AMD Instinct MI300X": its "Throughput Measurements" table,
Llama-3.1-70B and -405B in FP8 (AMD's Quark checkpoints with FP8 KV cache) on 8 MI300X at TP8, rows of (input,
output, Num Prompts, Max Num Seqs, Throughput (tokens/s)) run by vLLM's benchmark_throughput.py: all the prompts
queued at once, fixed lengths. Each version of the table that publishes new numbers is one source, named after the
first commit that shows it, with the vLLM release the page names for its image; a row a later version repeats
unchanged (the same model, lengths, prompts and value) is written once, under the version that first published it.

The table's "Throughput (tokens/s)" does not say whether it counts output or prompt + output tokens
(benchmark_throughput.py prints both). It is read as output tokens/s: read as prompt + output tokens, the serving
model's estimate is 1.7-2.0x the measurement on the rows of 2,048-token prompts but 0.8-1.4x on those of 128-token
prompts (three versions of the table); read as output tokens, 0.56-1.44x on both (the page's own versions of one row
spread by up to 1.54x), and no row beats calc's lower bound either way (at most 0.37 of it).

The rows are held out (calc/data/serving_holdout.csv): the latency tables of three versions of the same page are
fitted rows (sources rocm-vllm-devdocker-*), but no fit reads a throughput table.
"""
import hashlib
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from bench.converter_io import git, git_dir, parse_args, write_checked  # noqa: E402
from calc.measurements import COLUMNS, SOURCE_COLUMNS  # noqa: E402

PAGE = "docs/dev-docker/README.md"
URL = "https://github.com/ROCm/vllm/blob/main/docs/dev-docker/README.md"
MODELS = {"405B": ("llama-3.1-405b", "amd/Llama-3.1-405B-Instruct-FP8-KV"),
          "70B": ("llama-3.1-70b", "amd/Llama-3.1-70B-Instruct-FP8-KV")}
_TABLE = re.compile(r"### Throughput Measurements(.*?)### Latency Measurements", re.S)
_RELEASE = re.compile(r"^- vLLM v?(\d+\.\d+\.\d+)", re.M)
#: The page's first benchmark_throughput.py command (the one its throughput table was run with), to its fence.
_COMMAND = re.compile(r"benchmark_throughput\.py \\\n(.*?)```", re.S)
_STEPS = re.compile(r"--num[-_]scheduler[-_]steps (\d+)")


def engine_words(text: str) -> str:
    """What the page says of the engine its throughput table ran: the multi-step scheduling its
    benchmark_throughput.py command sets (``--num-scheduler-steps N``) and, where the page says so ("V1 on by
    default"), that the image runs vLLM's V1 engine, which has no multi-step scheduling
    (``calc.serving_terms.multi_step_steps`` reads both from a row's notes). Empty where the page states neither."""
    command = _COMMAND.search(text)
    steps = _STEPS.search(command.group(1)) if command else None
    v1 = "V1 on by default" in text
    words = []
    if steps:
        words.append(f"the command sets --num-scheduler-steps {steps.group(1)}"
                     + (", which the image's V1 engine does not take (the page: V1 on by default)" if v1 else
                        " (multi-step scheduling of vLLM's V0 engine)"))
    elif v1:
        words.append("the image runs vLLM's V1 engine (the page: V1 on by default)")
    return "; ".join(words)


def table_rows(text: str) -> list[tuple]:
    """(calc model, checkpoint, input, output, prompts, max_num_seqs, tokens/s) of the page's throughput table."""
    sec = _TABLE.search(text)
    out, model = [], None
    for line in (sec.group(1).splitlines() if sec else []):
        if not line.startswith("|") or "---" in line or "Model" in line:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0]:
            model = next((v for k, v in MODELS.items() if k in cells[0]), None)
        nums = [c for c in cells if re.fullmatch(r"\d+(\.\d+)?", c)]
        if model is None or len(nums) < 5:
            continue
        i, o, n, seqs, value = nums[-5:]
        out.append((*model, int(i), int(o), int(n), int(seqs), float(value)))
    return out


def convert(repo: str, retrieved: str):
    """(rows, sources) of the git directory ``repo`` (``converter_io.git_dir``): every version of the page's
    throughput table that publishes new numbers, one source each (retrieved on ``retrieved``, YYYY-MM-DD), each
    published number once, under the version that first shows it (the module's docstring)."""
    commits = git(repo, "log", "--all", "--reverse", "--date-order", "--format=%H %ad", "--date=short", "--",
                  PAGE).split("\n")
    rows, sources, seen, published = [], [], set(), set()
    for line in filter(None, commits):
        commit, day = line.split()
        try:
            text = git(repo, "show", f"{commit}:{PAGE}")
        except subprocess.CalledProcessError:  # a commit that removes the page
            continue
        table = table_rows(text)
        digest = hashlib.sha1(repr(table).encode()).hexdigest()
        if not table or digest in seen:
            continue
        seen.add(digest)
        # a later version repeats the rows it did not rerun: each published number once, under its first version
        table = [t for t in table if t[:1] + t[2:] not in published]
        if not table:
            continue
        published.update(t[:1] + t[2:] for t in table)
        release = _RELEASE.search(text)
        version = release.group(1) if release else ""
        engine = engine_words(text)
        sid = f"rocm-vllm-devdocker-tput-{commit[:8]}"
        sources.append(dict(
            source_id=sid, title=f"vLLM FP8 throughput benchmarks on the AMD Instinct MI300X (ROCm/vllm {PAGE}, "
                                 f"vLLM {version or 'unnamed'} image), throughput table",
            url=URL, commit=commit, published=day, retrieved=retrieved, license="Apache-2.0", shipped="yes",
            notes="8x MI300X (192 GiB); the page's throughput table as of this commit (the first that shows "
                  "these numbers), read as output tokens/s (bench/convert_rocm_devdocker.py says why)"))
        print(f"{commit[:9]} {day} vLLM {version or '?'}: {len(table)} rows -> {sid}")
        for model, ckpt, i, o, n, seqs, value in table:
            size = model.split("-")[-1]
            rows.append(dict(
                id=f"rocm-vllm-{commit[:8]}-mi300x-{size}-fp8-{i}-{o}-throughput", source_id=sid, model=model,
                model_family="llama", accelerator="mi300x", n_gpus=8, tp=8, pp=1, ep=1, dp=1, engine="vllm",
                engine_version=version, weight_dtype="fp8", kv_dtype="fp8", input_len=i, output_len=o,
                len_dist="fixed", concurrency=n, request_rate_per_s="", mode="offline", metric="output_tok_per_s",
                statistic="mean", value=value,
                notes=(f"{ckpt} (Quark); vLLM benchmark_throughput.py: {n:,} prompts queued at once, --max-num-seqs "
                       f"{seqs:,}; " + (f"{engine}; " if engine else "") + f"published as 'Throughput (tokens/s)' "
                       f"{value}, read as output tokens/s; page of {day} (commit {commit[:9]})")))
    return pd.DataFrame(rows, columns=list(COLUMNS)), pd.DataFrame(sources, columns=list(SOURCE_COLUMNS))


def main():
    args = parse_args(__doc__.split("\n")[0], "ROCM_VLLM_REPO", "github.com/ROCm/vllm")
    try:
        rows, sources = convert(git_dir(args.repo), args.retrieved)
    except ValueError as e:
        sys.exit(str(e))
    if rows.empty:
        sys.exit(f"no version of {PAGE} in {args.repo} has a throughput table: nothing written")
    write_checked(args.out, rows, sources)


if __name__ == "__main__":
    main()
