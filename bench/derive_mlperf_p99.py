"""Add the 99th percentiles of the held-out MLPerf Server and Interactive runs: for every held-out row of a mean
TTFT or TPOT read from an MLPerf Inference v5.1 or v6.0 mlperf_log_summary.txt, the same run's "99.00 percentile
first token latency (ns)" or "99.00 percentile time to output token (ns)" of that file, as a row of statistic p99.

Run: python bench/derive_mlperf_p99.py V51_REPO V60_REPO > rows.csv
V51_REPO, V60_REPO: git copies of github.com/mlcommons/inference_results_v5.1 (commit
965182b03376a00fcae415c54e560e1c83937932) and of inference_results_v6.0 (the commit its sources in
calc/data/serving_sources.csv name), read with git (no work tree needed). Apache-2.0, as the rows they sit beside.
The rows keep their run's every column (layout, engine, lengths, rate, the latency limits in the notes) and say
which line of which file the value is; a run whose summary lacks the line is left out (printed on standard error).
"""
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc.measurements import COLUMNS  # noqa: E402

HOLDOUT = Path(__file__).resolve().parent.parent / "calc" / "data" / "serving_holdout.csv"
KEYS = {"ttft_ms": "99.00 percentile first token latency (ns)", "tpot_ms": "99.00 percentile time to output token (ns)"}
_FILE = re.compile(r"value: '[^']*' of (\S+/mlperf_log_summary\.txt)")


def summaries(repo: str) -> dict:
    """{path from the submitter's folder: full path} of every mlperf_log_summary.txt at HEAD of ``repo``."""
    names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD"], check=True,
                           capture_output=True, text=True).stdout.split("\n")
    out = {}
    for name in names:
        if name.endswith("/mlperf_log_summary.txt") and "/results/" in name:
            out.setdefault(name.split("/", 2)[2], []).append(name)
    return out


def p99_rows(holdout: pd.DataFrame, repos: dict) -> pd.DataFrame:
    """The p99 rows of the held-out mean TTFT and TPOT rows of the rounds in ``repos`` ({"51": path, "60": path})."""
    index = {rnd: summaries(path) for rnd, path in repos.items()}
    out = []
    for _, r in holdout.iterrows():
        rnd = re.match(r"mlperf(\d\d)-", str(r["id"]))
        if not rnd or rnd.group(1) not in repos or r["statistic"] != "mean" or r["metric"] not in KEYS:
            continue
        rel = _FILE.search(str(r["notes"]))
        division, submitter = str(r["id"]).split("-")[1], str(r["notes"]).split(", ")[1]
        full = [p for p in index[rnd.group(1)].get(rel.group(1), []) if p.startswith(f"{division}/")] if rel else []
        if len(full) > 1:
            full = [p for p in full if p.split("/")[1].lower() == submitter.lower()] or full[:1]
        if not full:
            print(f"{r['id']}: no summary found", file=sys.stderr)
            continue
        text = subprocess.run(["git", "-C", repos[rnd.group(1)], "show", f"HEAD:{full[0]}"], check=True,
                              capture_output=True, text=True).stdout
        m = re.search(re.escape(KEYS[r["metric"]]) + r"\s*:\s*([\d.]+)", text)
        if not m:
            print(f"{r['id']}: no '{KEYS[r['metric']]}' in {full[0]}", file=sys.stderr)
            continue
        notes = re.sub(r"; value: '[^']*' of \S+ / 1e6 \([^)]*\)$", "", str(r["notes"]))
        out.append(dict(r, id=str(r["id"]).replace("-mean", "-p99"), statistic="p99",
                        value=round(float(m.group(1)) / 1e6, 4),
                        notes=f"{notes}; value: '{KEYS[r['metric']]}' of {rel.group(1)}/ / 1e6 (LoadGen's 99th "
                              "percentile of the run's requests)".replace("/ / 1e6", " / 1e6")))
    return pd.DataFrame(out, columns=list(COLUMNS))


def main(argv) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    rows = p99_rows(pd.read_csv(HOLDOUT), {"51": argv[0], "60": argv[1]})
    print(f"{len(rows)} rows", file=sys.stderr)
    rows.to_csv(sys.stdout, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
