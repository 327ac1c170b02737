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
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from calc.measurements import load_measurements, measurement_bound  # noqa: E402
from calc.models import model_preset_id  # noqa: E402


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


def parse_args(description: str, env: str, what: str, extra=None) -> argparse.Namespace:
    """A converter's command line: OUT.csv, ``--repo`` (default: the environment variable ``env``), a git copy of
    ``what``, and ``--retrieved`` (the day the copy was taken, default today); ``extra``, where given, is called with
    the ``argparse.ArgumentParser`` to add a converter's own options. Exits with a message where no copy is
    named."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("out", help="the rows' CSV to write (the sources' rows go to OUT_sources.csv beside it)")
    ap.add_argument("--repo", default=os.environ.get(env, ""),
                    help=f"a git copy of {what}: a bare git directory or a checkout (default: the environment "
                         f"variable {env})")
    ap.add_argument("--retrieved", default=_dt.date.today().isoformat(),
                    help="the day the copy was taken, YYYY-MM-DD, written into the sources (default: today)")
    if extra is not None:
        extra(ap)
    args = ap.parse_args()
    if not args.repo:
        sys.exit(f"name a git copy of {what} with --repo or {env}")
    return args


def write_checked(out: str, rows: pd.DataFrame, sources: pd.DataFrame, known_models_only: bool = False) -> None:
    """Write ``rows`` to ``out`` and ``sources`` to OUT_sources.csv beside it, load ``out`` with calc's checks and
    print how many rows and sources it holds and every row faster than calc's lower bound. With
    ``known_models_only``, rows of a model calc has no preset for (``calc.models.model_preset_id``: none, not even by
    a checkpoint alias) are written but neither loaded nor bounded (it prints how many, by model): a converter may
    gather rows before their model's preset lands.

    Raises:
        ValueError: a row calc's checks refuse (``load_measurements``)."""
    path = Path(out)
    rows.to_csv(path, index=False)
    sources.to_csv(path.with_name(path.stem + "_sources.csv"), index=False)
    known = rows["model"].map(lambda m: model_preset_id(m) is not None)
    if known_models_only and not known.all():
        counts = ", ".join(f"{m} {k}" for m, k in rows.loc[~known, "model"].value_counts().sort_index().items())
        print(f"{int((~known).sum())} rows of models calc has no preset for yet, written but not checked: {counts}")
        with tempfile.TemporaryDirectory() as tmp:
            rows[known].to_csv(Path(tmp) / "known.csv", index=False)
            df = load_measurements(Path(tmp) / "known.csv", sources=None)
    else:
        df = load_measurements(path, sources=None)
    beaten = [(r["id"], b) for _, r in df.iterrows() if not (b := measurement_bound(r)).respected]
    print(f"{len(df)} rows, {len(sources)} new sources; rows beating calc's lower bound: {len(beaten)}")
    for rid, b in beaten:
        print(f"  {rid}: {b}")
