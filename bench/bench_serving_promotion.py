"""Would more published sources in the fit help on sources it never saw? (printed figures, not a timed test)

Run: python bench/bench_serving_promotion.py FOLD [--keep-out PREFIX ...]

The held-out rows (calc/data/serving_holdout.csv) are split by source into two folds (the parity of the SHA-1 of the
source id, so a source's rows stay together and the split does not depend on the order of the file). The fit
(``calc.serving_fit.fit_serving_params``, from the stored parameters as its prior) is run on
serving_measurements.csv plus the held-out sources of fold FOLD (0 or 1), less any source whose id starts with a
``--keep-out`` prefix; the other fold's rows are then predicted with those parameters and with the stored ones.
Printed: the share within 25% of the other fold's means and medians (all of them, and without the kept-out
prefixes), and of the rows the new fit read, under both parameter sets; then every parameter that moved by more than
10%. If the other fold gains little while the fold read gains much, the misses are the sources' own (harness,
launch settings, client) rather than a lack of rows.

One fit over about 8,000 rows takes 50 minutes or more on one core; nothing is written to calc/data.
"""
import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from calc.measurements import load_measurements, load_sources  # noqa: E402
from calc.serving_fit import (FIT_STATISTICS, HOLDOUT_PATH, fit_serving_params, holdout_table,  # noqa: E402
                              prepare_rows, read_measurements)
from calc.serving_params import load_serving_params  # noqa: E402


def source_fold(source_id: str) -> int:
    """0 or 1: the parity of the SHA-1 of ``source_id`` (a source's rows stay in one fold)."""
    return int(hashlib.sha1(source_id.encode()).hexdigest(), 16) % 2


def within_25(log_ratio) -> float:
    """Share of |measured / predicted - 1| <= 0.25 (the issue's criterion) of log(measured / predicted)."""
    r = np.asarray(log_ratio, dtype=float)
    return float((np.abs(np.exp(-r) - 1.0) <= 0.25).mean()) if r.size else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fold", type=int, choices=(0, 1))
    ap.add_argument("--keep-out", nargs="*", default=["inferencex-slo"],
                    help="source id prefixes never read by the fit (default: InferenceX's token-position runs)")
    args = ap.parse_args(argv)
    base = load_serving_params()
    held = load_measurements(HOLDOUT_PATH, sources=load_sources())
    kept_out = tuple(args.keep_out)
    read = sorted(s for s in set(held["source_id"]) if source_fold(s) == args.fold and not s.startswith(kept_out))
    train = pd.concat([read_measurements(), held[held["source_id"].isin(read)]], ignore_index=True)
    start = time.time()
    prepared = prepare_rows(train, base)
    fitted = fit_serving_params(train, base, prepared=prepared)
    print(f"fold {args.fold}: {len(read)} held-out sources read, {len(prepared[0]):,} rows fitted in "
          f"{time.time() - start:,.0f} s")
    for name, params in (("stored parameters", base), ("fit with the fold", fitted)):
        table = holdout_table(params)[0]
        centre = table[table["statistic"].isin(FIT_STATISTICS)]
        other = centre[~centre["source_id"].isin(read)]
        plain = other[~other["source_id"].str.startswith(kept_out)] if kept_out else other
        seen = centre[centre["source_id"].isin(read)]
        print(f"  {name:<18} other fold {len(other):,} rows {within_25(other['log_ratio']):.1%} within 25% "
              f"({len(plain):,} without {', '.join(kept_out) or 'none'}: {within_25(plain['log_ratio']):.1%}); "
              f"the fold read {len(seen):,} rows {within_25(seen['log_ratio']):.1%}")
    for key in sorted(fitted["params"]):
        a, b = base["params"][key]["value"], fitted["params"][key]["value"]
        if abs(np.log(b / a)) > np.log(1.1):
            print(f"  {key:<34} {a:<10.4g} -> {b:.4g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
