"""The serving model on published runs of speculative decoding (printed figures, not a timed test).

Run: python bench/bench_speculative_serving.py
The fit leaves speculative runs out (``calc.serving_fit.prepare_rows``); the comparison page predicts them with the
draft their notes state (``include_speculative=True``, ``calc.speculative_serving``). For every such row of
calc/data/serving_measurements.csv this prints the measured value, the estimate as plain decoding (what the model
gave before it priced speculation) and with it, each over the measurement, and the share within 25%
(|predicted / measured - 1| <= 0.25). Then, for TensorRT-LLM's DeepSeek-R1 at one client with 3 MTP drafts, the
acceptance length that would put the estimate on the measurement, beside InferenceX's golden curves (1.79 to 3.39 at
3 drafts).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from calc.serving import serving_estimate  # noqa: E402
from calc.serving_fit import (error_summary, prepare_rows, predict_rows, read_measurements,  # noqa: E402
                              speculative_notes)
from calc.serving_params import load_serving_params, param_values  # noqa: E402


def table() -> pd.DataFrame:
    """The speculative rows with measured, plain (the notes' draft ignored) and speculative estimates."""
    params = load_serving_params()
    values = param_values(params)
    m = read_measurements()
    spec = m[m["notes"].fillna("").map(speculative_notes)].reset_index(drop=True)
    rows, comps, _ = prepare_rows(spec, params, include_speculative=True)
    rows = rows.assign(speculative=predict_rows(rows, comps, values))
    plain_notes = spec.assign(notes="")  # the same rows read as plain decoding
    prow, pcomps, _ = prepare_rows(plain_notes, params)
    plain = dict(zip(prow["id"], predict_rows(prow, pcomps, values)))
    rows["plain"] = rows["id"].map(plain)
    for col in ("plain", "speculative"):
        rows[f"{col}_over_measured"] = rows[col] / rows["value"]
    return rows[["id", "metric", "statistic", "value", "plain", "speculative", "plain_over_measured",
                 "speculative_over_measured"]]


def within(ratio) -> float:
    """Share of predicted / measured ``ratio`` within 25% (``calc.serving_fit.error_summary``'s criterion)."""
    return error_summary(-np.log(np.asarray(ratio, dtype=float)))["within_25"]


def implied_acceptance(accelerator: str, weight_dtype: str, ep: int, kv: str, measured_tok_s: float) -> float:
    """The acceptance length at which the estimate of TensorRT-LLM's DeepSeek-R1 min-latency run (1,024 / 2,048, one
    client, TP8, 3 MTP drafts) gives ``measured_tok_s`` output tokens/s: at one client TPOT is exactly the round over
    AL, so AL = measured tokens/s x the round."""
    est = serving_estimate("deepseek-v3", accelerator, 1024, 2048, concurrency=1, tp=8, ep=ep,
                           weight_dtype=weight_dtype, kv_dtype=kv, engine="trtllm", engine_version="0.19.0",
                           speculative={"method": "mtp", "draft_tokens": 3, "acceptance_length": 2.0})
    return measured_tok_s * est.itl_s


def main() -> None:
    t = table()
    with pd.option_context("display.width", 200, "display.max_colwidth", 70):
        print(t.round(3).to_string(index=False))
    print(f"\n{len(t)} rows: within 25% as plain decoding {within(t['plain_over_measured']):.0%}, "
          f"with speculative decoding {within(t['speculative_over_measured']):.0%}")
    trt = t[t["id"].str.contains("minlat")]
    print(f"TensorRT-LLM min-latency rows ({len(trt)}): plain {within(trt['plain_over_measured']):.0%}, "
          f"speculative {within(trt['speculative_over_measured']):.0%}")
    for acc, w, ep, kv, tok in (("b200", "nvfp4", 2, "fp8", 274.4168), ("h200", "fp8-block", 4, "bf16", 158.0669)):
        print(f"implied acceptance length, DeepSeek-R1 on 8 {acc.upper()} with 3 MTP drafts: "
              f"{implied_acceptance(acc, w, ep, kv, tok):.2f} tokens per round")


if __name__ == "__main__":
    main()
