"""Convert InferenceMAX's official aggregated results of 2025 into rows of calc/data/serving_measurements.csv.

Run: python bench/convert_inferencemax_2025.py REPO > rows.csv
REPO: a git copy (bare or checked out) of github.com/faradawn/InferenceMAX, a fork of the InferenceMAX benchmark
repository (Apache-2.0), read at commit 7a175041fc1b103832870e8ff4ec3b0b1ff5dd2f (2025-11-13) with git, so no work
tree is needed. Its ``official_data/agg_{dsr1,gptoss}_{1k8k,8k1k,1k1k}.json`` and ``agg_dsr1_1k1k.json`` (the
dsr1 1k1k file lies at the root) are InferenceMAX's published aggregated results of October-November 2025:
DeepSeek-R1-0528 (FP8 and FP4) and gpt-oss-120b on B200, H100, H200, MI300X, MI325X and MI355X with vLLM, SGLang
and TensorRT-LLM, TP1-TP8, 4 to 512 concurrent clients. Each is read with ``calc.inferencex.parse_inferencex``
(lengths from the file name, the commit's date as the run date: the files state none, and the runs cannot be
later), disaggregated multi-node runs and speculative decoding left out as the parser marks them.

Kept per run, to keep the fit a few minutes long: the mean TPOT, the median TTFT (the figure InferenceX's
dashboard plots) and the output tokens/s per GPU; the other statistics (p99, e2e, total tokens/s, which repeats
the output throughput with the input's) are left out. Prints the rows (CSV, the measurement file's columns) to
standard output and, on standard error, the count and every row faster than calc's lower bound
(``calc.measurements.measurement_bound``: there should be none).
"""
import subprocess
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc.inferencex import parse_inferencex  # noqa: E402
from calc.measurements import COLUMNS, PUBLISHED_MODEL, measurement_bound, model_cell  # noqa: E402

COMMIT = "7a175041fc1b103832870e8ff4ec3b0b1ff5dd2f"
RUN_DATE = "2025-11-13"
SOURCE_ID = "inferencemax-official-2025"
FILES = ("agg_dsr1_1k1k.json", "official_data/agg_dsr1_1k8k.json", "official_data/agg_dsr1_8k1k.json",
         "official_data/agg_gptoss_1k1k.json", "official_data/agg_gptoss_1k8k.json", "official_data/agg_gptoss_8k1k.json")
FAMILIES = {"deepseek-v3": "deepseek", "gpt-oss-120b": "gpt-oss"}
KEEP = {("tpot_ms", "mean"), ("ttft_ms", "median"), ("output_tok_per_s_per_gpu", "mean")}


def convert(repo: str) -> pd.DataFrame:
    """The kept rows of the six files at ``COMMIT`` of the git copy ``repo``."""
    frames = []
    for path in FILES:
        blob = subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True, capture_output=True).stdout
        df, skipped = parse_inferencex(blob, name=Path(path).name, source_id=SOURCE_ID, run_date=RUN_DATE)
        print(f"{path}: {len(df)} rows, {len(skipped)} objects skipped", file=sys.stderr)
        df["notes"] = df["notes"] + f"; {path} of github.com/faradawn/InferenceMAX at {COMMIT}"
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out = out[[(m, s) in KEEP for m, s in zip(out["metric"], out["statistic"])]].copy()
    out = out[~out["notes"].str.contains("speculative decoding on")]
    out["model_family"] = out["model"].map(FAMILIES)
    # the model cell: the result's checkpoint where it is another model than the preset (DeepSeek-R1-0528), which
    # loading keeps as the model as published; the preset's id for its own (openai/gpt-oss-120b)
    out["model"] = [model_cell(m, p) for m, p in zip(out["model"], out[PUBLISHED_MODEL])]
    out["id"] = out["id"].str.replace(f"{SOURCE_ID}-", "imax25-", regex=False)
    return out[list(COLUMNS)].reset_index(drop=True)


def main(argv) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    rows = convert(argv[0])
    fast = [r["id"] for _, r in rows.iterrows() if not measurement_bound(r).respected]
    print(f"{len(rows)} rows; {len(fast)} faster than the lower bound: {fast[:10]}", file=sys.stderr)
    rows.to_csv(sys.stdout, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
