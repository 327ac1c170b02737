"""What the converters of public benchmark files share: reading a git copy of the source repository, their
command line, and writing their rows with calc's checks.

A converter reads a repository's files from a git copy (a bare git directory or a checkout; no work tree needed),
writes OUT.csv with the columns of ``calc.measurements.COLUMNS`` and OUT_sources.csv beside it with those of
``calc.measurements.SOURCE_COLUMNS``, then loads OUT.csv with ``calc.measurements.load_measurements`` and prints
every row faster than calc's lower bound (``calc.measurements.measurement_bound``: a misread row or a wrong bound).
"""
import argparse
import datetime as _dt
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from calc.measurements import load_measurements, measurement_bound  # noqa: E402


def git_dir(repo: str, what: str = "github.com/ROCm/vllm") -> str:
    """The git directory of ``repo``, a copy of ``what``: a bare git directory, or a checkout's ``.git``.

    Raises:
        ValueError: ``repo`` is neither.
    """
    path = Path(repo)
    for candidate in (path / ".git", path):
        probe = subprocess.run(["git", "--git-dir", str(candidate), "rev-parse", "--git-dir"], capture_output=True,
                               text=True)
        if candidate.exists() and probe.returncode == 0:
            return str(candidate)
    raise ValueError(f"{repo} is not a git copy of {what} (neither a bare git directory nor a checkout)")


def git(repo: str, *args: str) -> str:
    """The standard output of ``git --git-dir repo args``.

    Raises:
        subprocess.CalledProcessError: git fails (a path or commit the copy lacks)."""
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True, check=True).stdout


def parse_args(description: str, env: str, what: str) -> argparse.Namespace:
    """A converter's command line: OUT.csv, ``--repo`` (default: the environment variable ``env``), a git copy of
    ``what``, and ``--retrieved`` (the day the copy was taken, default today). Exits with a message where no copy
    is named."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("out", help="the rows' CSV to write (the sources' rows go to OUT_sources.csv beside it)")
    ap.add_argument("--repo", default=os.environ.get(env, ""),
                    help=f"a git copy of {what}: a bare git directory or a checkout (default: the environment "
                         f"variable {env})")
    ap.add_argument("--retrieved", default=_dt.date.today().isoformat(),
                    help="the day the copy was taken, YYYY-MM-DD, written into the sources (default: today)")
    args = ap.parse_args()
    if not args.repo:
        sys.exit(f"name a git copy of {what} with --repo or {env}")
    return args


def write_checked(out: str, rows: pd.DataFrame, sources: pd.DataFrame) -> None:
    """Write ``rows`` to ``out`` and ``sources`` to OUT_sources.csv beside it, load ``out`` with calc's checks and
    print how many rows and sources it holds and every row faster than calc's lower bound.

    Raises:
        ValueError: a row calc's checks refuse (``load_measurements``)."""
    path = Path(out)
    rows.to_csv(path, index=False)
    sources.to_csv(path.with_name(path.stem + "_sources.csv"), index=False)
    df = load_measurements(path, sources=None)
    beaten = [(r["id"], b) for _, r in df.iterrows() if not (b := measurement_bound(r)).respected]
    print(f"{len(df)} rows, {len(sources)} new sources; rows beating calc's lower bound: {len(beaten)}")
    for rid, b in beaten:
        print(f"  {rid}: {b}")
