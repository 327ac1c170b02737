"""The runs the first-round cold start is calibrated on (calc/data/cold_start_runs.csv): InferenceMAX's official
aggregated results of 2025 on AMD Instinct (MI300X, MI325X, MI355X; vLLM's and SGLang's ROCm builds), their mean
TTFT, which the fit does not read (it reads their median TTFT, mean TPOT and throughput:
bench/convert_inferencemax_2025.py).

Run: python bench/convert_cold_start_runs.py REPO > calc/data/cold_start_runs.csv
REPO: a git copy of github.com/faradawn/InferenceMAX (Apache-2.0), read at the commit
bench/convert_inferencemax_2025.py names. Prints the rows (CSV, the measurement file's columns) to standard output;
calc.serving_fit.calibrate_cold_start reads them.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import convert_inferencemax_2025 as imax  # noqa: E402


def convert(repo: str):
    """The mean-TTFT rows of InferenceMAX's 2025 runs on AMD Instinct (ids "imax25-...-ttft-ms-mean")."""
    imax.KEEP = {("ttft_ms", "mean")}
    rows = imax.convert(repo)
    return rows[rows["accelerator"].str.startswith("mi")].reset_index(drop=True)


def main(argv) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    rows = convert(argv[0])
    print(f"{len(rows)} rows", file=sys.stderr)
    rows.to_csv(sys.stdout, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
