"""The equation behind each headline number, filled in with the numbers the page shows (LaTeX rows).

Each builder takes the calc results a page already computed and returns ``[(what, latex), ...]`` for
``widgets.show_equations``. The numbers come from those results (no arithmetic beyond unit scaling), in
the page's units, so the filled-in equation reads like the course's worked examples (the inference
course, week 11, step 4: "every step reads 16.06 GB of weights: 4.79 ms at 3.35 TB/s").

Not a page; it imports neither streamlit nor another ui module but ui.formats.
"""
from __future__ import annotations

import calc
from ui.formats import fmt_number, fmt_seconds, fmt_usd


def _num(x: float, digits: int = 4) -> str:
    """A number for LaTeX: 4 significant digits below 1,000, whole with separators from 1,000."""
    x = float(x)
    if abs(x) >= 1000:
        return f"{x:,.0f}".replace(",", "{,}")
    text = f"{x:.{digits}g}"
    return text if "e" not in text else f"{x:.3e}"


def _u(unit: str) -> str:
    return r"\,\mu\text{s}" if unit == "µs" else r"\,\text{" + unit.replace("$", r"\$").replace("%", r"\%") + "}"


def _sep(text: str) -> str:
    return text.replace(",", "{,}")


def gb(n_bytes: float) -> str:
    """Bytes as ``formats.fmt_bytes`` prints them (GB/MB/kB/TB, two decimals), for LaTeX."""
    for size, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(n_bytes) >= size:
            return _sep(f"{n_bytes / size:,.2f}") + _u(unit)
    return _sep(f"{n_bytes:,.0f}") + _u("B")


def sec(s: float) -> str:
    """Seconds as ``formats.fmt_seconds`` prints them (µs / ms / s), for LaTeX."""
    value, unit = fmt_seconds(s).rsplit(" ", 1)
    return _sep(value) + _u(unit)


def rate(x: float) -> str:
    """A count per second (tok/s) as ``formats.fmt_number`` prints it (two digits below 10), for LaTeX."""
    return _sep(fmt_number(x))


def flop(x: float) -> str:
    """FLOPs in GFLOP or TFLOP for LaTeX."""
    return _num(x / 1e12) + _u("TFLOP") if x >= 1e12 else _num(x / 1e9) + _u("GFLOP")


def tbs(bandwidth_bytes_per_s: float) -> str:
    return _num(bandwidth_bytes_per_s / 1e12) + _u("TB/s")


def tflops(flops_per_s: float) -> str:
    return _num(flops_per_s / 1e12) + _u("TFLOP/s")


def usd(x: float) -> str:
    """Dollars as ``formats.fmt_usd`` prints them ("$0.39", "$0.012", "$1,234"), for LaTeX."""
    return r"\$" + _sep(fmt_usd(x)[1:])


def kv_rows(model: calc.ModelConfig, per_token: float, per_seq: float, total: float, context_len: int,
            batch: int, kv_dtype: str, state_bytes: float = 0.0, averaged: bool = False) -> list[tuple[str, str]]:
    """KV per token, per sequence and for the batch (the KV cache page's metrics). ``averaged``: ``per_token`` is
    the per-token part of the cache at S divided by S (compressed layers, ``calc.kv.kv_bytes_per_context_token``)."""
    b = calc.kv_dtype_bytes(kv_dtype)
    if averaged:  # DeepSeek-V4: a window of W entries plus floor(S / r) compressed entries (and indexer keys) per layer
        seq = (r"\text{KV/seq} = \textstyle\sum_\text{layers} \big(\min(S, W) \cdot \text{entry} + \lfloor S/r \rfloor"
               r" \cdot (\text{entry} + \text{index key})\big)" + (r" + \text{state}" if state_bytes else "") + " = "
               + gb(per_seq))
        return [
            ("KV per token (average)", r"\text{KV/token} = \frac{\text{KV/seq} - \text{state}}{S} = \frac{"
             + gb(per_seq - state_bytes) + "}{" + f"{context_len:,}".replace(",", "{,}") + "} = "
             + _sep(f"{per_token:,.0f}") + _u("B")),
            ("KV per sequence", seq),
            ("KV in total", r"\text{KV} = B \times \text{KV/seq} = " + f"{batch:,}".replace(",", "{,}") + r" \times "
             + gb(per_seq) + " = " + gb(total)),
        ]
    if model.attention == "mla" and kv_dtype == "fp8_ds_mla":  # FlashMLA: fp8 latent + fp32 scale per 128, bf16 RoPE
        r = model.kv_lora_rank
        tok = (r"L \cdot (d_c + 4 \lceil d_c / 128 \rceil + 2 d_h^R)" + _u("B") + " = " + f"{model.n_layers}"
               + r" \times (" + f"{r} + {4 * -(-r // 128)} + {2 * model.qk_rope_head_dim}" + ")" + _u("B"))
    elif model.attention == "mla":
        tok = (r"L \cdot (d_c + d_h^R) \cdot \text{bytes} = " + f"{model.n_layers}" + r" \times ("
               + f"{model.kv_lora_rank} + {model.qk_rope_head_dim}" + r") \times " + _num(b) + _u("B"))
    elif model.has_global_shapes:  # Gemma 4: its global layers' own KV heads and head width
        full, bounded = calc.kv.cache_layer_counts(model)
        tok = (r"2 \cdot (L_s K H + L_g K_g H_g) \cdot \text{bytes} = 2 \times (" + f"{bounded}" + r" \times "
               + f"{model.n_kv_heads}" + r" \times " + f"{model.head_dim}" + " + " + f"{full}" + r" \times "
               + f"{model.kv_heads_of('full')}" + r" \times " + f"{model.head_dim_of('full')}" + r") \times "
               + _num(b) + _u("B"))
    else:  # L: the layers that hold a cache of their own (a hybrid's attention layers, not its Mamba ones)
        tok = (r"2 \cdot L \cdot K \cdot H \cdot \text{bytes} = 2 \times " + f"{sum(calc.kv.cache_layer_counts(model))}"
               + r" \times " + f"{model.n_kv_heads}" + r" \times " + f"{model.head_dim}" + r" \times " + _num(b) + _u("B"))
    plain = abs(per_seq - (per_token * context_len + state_bytes)) <= 1e-9 * max(per_seq, 1.0)
    if plain:
        seq = (r"\text{KV/seq} = \text{KV/token} \times S" + (r" + \text{state}" if state_bytes else "") + " = "
               + _num(per_token) + _u("B") + r" \times " + _num(context_len)
               + (" + " + gb(state_bytes) if state_bytes else "") + " = " + gb(per_seq))
    else:  # windows, chunks or layers without a cache: each layer holds min(S, its span) tokens
        seq = (r"\text{KV/seq} = \textstyle\sum_\text{layers} \text{KV/token/layer} \times \min(S, \text{span})"
               + (r" + \text{state}" if state_bytes else "") + " = " + gb(per_seq))
    return [
        ("KV per token", r"\text{KV/token} = " + tok + " = " + _sep(f"{per_token:,.0f}") + _u("B")),
        ("KV per sequence", seq),
        ("KV in total", r"\text{KV} = B \times \text{KV/seq} = " + f"{batch:,}".replace(",", "{,}") + r" \times "
         + gb(per_seq) + " = " + gb(total)),
    ]


def decode_rows(step, accelerator: calc.Accelerator, batch: int, weight_dtype: str,
                price_per_hour_usd: float | None = None, usd_per_million: float | None = None
                ) -> list[tuple[str, str]]:
    """The decode step, its throughput and (with a price) the dollars per million tokens, from a StepTime."""
    w = accelerator.bandwidth_bytes_per_s
    p = accelerator.compute_flops(weight_dtype)
    rows = [
        ("Decode step (TPOT)",
         r"t = \frac{B \cdot KV}{W} + \max\!\left(\frac{\text{weights read}}{W}, \frac{2 N B}{P}\right) = \frac{"
         + gb(step.kv_s * w) + "}{" + tbs(w) + r"} + \max\!\left(\frac{" + gb(step.weights_s * w) + "}{" + tbs(w)
         + r"}, \frac{" + flop(step.flops) + "}{" + tflops(p) + r"}\right) = " + sec(step.kv_s)
         + " + " + sec(max(step.weights_s, step.compute_s)) + " = " + sec(step.total_s)),
        ("Throughput", r"\frac{B}{t} = \frac{" + f"{batch:,}".replace(",", "{,}") + "}{" + sec(step.total_s) + "} = "
         + rate(step.tokens_per_s) + _u("tok/s")),
    ]
    if price_per_hour_usd is not None and usd_per_million is not None:
        rows.append(("USD per 1M tokens", r"\frac{\text{price per hour}}{\text{tok/s} \times 3600} \times 10^6 = \frac{"
                     + usd(price_per_hour_usd) + "}{" + rate(step.tokens_per_s) + r" \times 3600} \times 10^6 = "
                     + usd(usd_per_million)))
    return rows


def memory_row(weights_bytes: float, kv_bytes: float, total_bytes: float, batch: int) -> tuple[str, str]:
    """Weights + the batch's cache."""
    return ("Memory used", r"\text{weights} + B \cdot \text{KV/seq} = " + gb(weights_bytes) + " + "
            + f"{batch:,}".replace(",", "{,}") + r" \times " + gb(kv_bytes / batch) + " = " + gb(total_bytes))


def critical_batch_row(accelerator: calc.Accelerator, weight_dtype: str, b_star: float) -> tuple[str, str]:
    """B* = P * bytes per weight / (2 W)."""
    return ("Critical batch", r"B^* = \frac{P \cdot \text{bytes per weight}}{2 W} = \frac{"
            + tflops(accelerator.compute_flops(weight_dtype)) + r" \times " + _num(calc.dtype_bytes(weight_dtype))
            + r"\,\text{B}}{2 \times " + tbs(accelerator.bandwidth_bytes_per_s) + "} = " + _sep(f"{b_star:,.0f}"))


def max_batch_row(memory_bytes: float, weights_bytes: float, reserve_bytes: float, kv_per_seq: float,
                  max_batch: int) -> tuple[str, str]:
    """floor((M - weights - reserve) / KV per sequence)."""
    return ("Max batch", r"\left\lfloor\frac{M - \text{weights} - \text{reserve}}{\text{KV/seq}}\right\rfloor = "
            r"\left\lfloor\frac{" + gb(memory_bytes) + " - " + gb(weights_bytes) + " - " + gb(reserve_bytes) + "}{"
            + gb(kv_per_seq) + r"}\right\rfloor = " + f"{max_batch:,}".replace(",", "{,}"))


def spec_rows(alpha: float, gamma: int, tokens_per_forward: float) -> list[tuple[str, str]]:
    """Expected tokens per target forward from alpha and gamma (Leviathan et al. 2022, Eq. 1)."""
    return [("Tokens per target forward", r"E = \frac{1 - \alpha^{\gamma + 1}}{1 - \alpha} = \frac{1 - "
             + _num(alpha, 3) + "^{" + f"{gamma + 1}" + "}}{1 - " + _num(alpha, 3) + "} = " + _num(tokens_per_forward))]


def bill_row(scenario, tier, monthly_usd: float) -> tuple[str, str]:
    """The monthly bill of one API tier (chapter 9, LLM inference, plus the cache-write surcharge)."""
    t = scenario.token_split()
    m = tier.cache_write_multiplier
    write = (r" + " + _num(t["written"]) + r" \times " + _num(m - 1, 3) + r" \times " + usd(tier.input_usd_per_mtok)
             if m != 1 else "")
    return (f"{tier.name} per month",
            r"30 \times G \times \frac{\text{missed} \cdot p_\text{in} + \text{hit} \cdot p_\text{cached}"
            + (r" + \text{written} \cdot (m - 1) \cdot p_\text{in}" if m != 1 else "")
            + r" + \text{out} \cdot p_\text{out}}{10^6} = 30 \times " + _num(scenario.generations_per_day)
            + r" \times \frac{" + _num(t["missed"]) + r" \times " + usd(tier.input_usd_per_mtok) + " + " + _num(t["hit"])
            + r" \times " + usd(tier.cached_input_usd_per_mtok) + write + " + " + _num(t["output"]) + r" \times "
            + usd(tier.output_usd_per_mtok) + r"}{10^6} = " + usd(monthly_usd))


def prefix_rows(pc, kv_per_token: float, n_requests: int, prefix_len: int, unique_len: int,
                hit_rate: float) -> list[tuple[str, str]]:
    """Prefill tokens and KV with and without prefix caching (the batching page's prefix section)."""
    return [
        ("Prefill tokens, cached", r"P \cdot (1 + (n - 1)(1 - h)) + n U = " + _num(prefix_len) + r" \times (1 + "
         + f"{n_requests - 1}" + r" \times " + _num(1 - hit_rate, 3) + ") + " + f"{n_requests}" + r" \times "
         + _num(unique_len) + " = " + _num(pc.prefill_tokens_with)),
        ("KV with cache", r"\text{tokens} \times \text{KV/token} = " + _num(pc.prefill_tokens_with) + r" \times "
         + _num(kv_per_token) + _u("B") + " = " + gb(pc.cache_bytes_with)),
    ]


def alpha_row(p, q, symbols, alpha: float) -> tuple[str, str]:
    """The acceptance rate alpha = sum over x of min(p(x), q(x)) (the inference course, week 11, step 3)."""
    terms = [(s, a, b) for s, a, b in zip(symbols, p, q) if a > 0 or b > 0]
    return ("Acceptance rate", r"\alpha = \sum_x \min(p(x), q(x)) = "
            + " + ".join(r"\min(" + _num(a, 3) + ", " + _num(b, 3) + ")" for _, a, b in terms) + " = "
            + f"{alpha:.3f}")


def quant_rows(table, accelerator: calc.Accelerator, reserve_bytes: float, batch: int) -> list[tuple[str, str]]:
    """Per format: the decode step from its parts and the max batch (the quantization page's metrics)."""
    w = accelerator.bandwidth_bytes_per_s
    rows = []
    for r in table.itertuples():
        rows.append((f"{r.format}: decode step at B = {batch}",
                     r"\frac{B \cdot KV}{W} + \max\!\left(\frac{\text{weights}}{W}, \frac{2NB}{P}\right) = \frac{"
                     + gb(r.kv_bytes) + "}{" + tbs(w) + r"} + \max\!\left(\frac{" + gb(r.weights_read_s * w) + "}{"
                     + tbs(w) + "}, " + sec(r.compute_s) + r"\right) = " + sec(r.kv_read_s) + " + "
                     + sec(max(r.weights_read_s, r.compute_s)) + " = " + sec(r.step_s)))
        rows.append(max_batch_row(accelerator.memory_bytes, r.weights_bytes, reserve_bytes, r.kv_bytes / batch,
                                  int(r.max_batch)))
        rows[-1] = (f"{r.format}: max batch", rows[-1][1])
    return rows


def spec_batch_row(row, alpha: float, gamma: int) -> tuple[str, str]:
    """Speculative speedup at one batch from its step times (``calc.spec_speedup.batch_speedup_table`` row)."""
    return (f"Speedup at B = {int(row['batch'])}",
            r"E \cdot \frac{t_\text{target}}{t_\text{verify} + \gamma\, t_\text{draft}} = \frac{1 - " + _num(alpha, 3)
            + "^{" + f"{gamma + 1}" + "}}{1 - " + _num(alpha, 3) + r"} \times \frac{" + sec(row["target_step_s"])
            + "}{" + sec(row["verify_step_s"]) + " + " + f"{gamma}" + r" \times " + sec(row["draft_step_s"]) + "} = "
            + _num(row["tokens_per_target_forward"]) + r" \times \frac{" + sec(row["target_step_s"]) + "}{"
            + sec(row["round_s"]) + "} = " + f"{row['speedup']:.2f}" + r"\times")


def parallel_rows(summary, price_per_hour_usd: float) -> list[tuple[str, str]]:
    """The many-GPU page's headline numbers from a ``calc.layout_choice.LayoutSummary``."""
    rows = [
        ("TPOT", r"t = t_\text{compute/memory} + t_\text{comm} = " + sec(summary.tpot_s - summary.comm_s) + " + "
         + sec(summary.comm_s) + " = " + sec(summary.tpot_s)),
        ("Tokens/s per user", r"\frac{1}{t} = \frac{1}{" + sec(summary.tpot_s) + "} = "
         + _sep(f"{summary.tokens_per_s_per_user:,.1f}")),
        ("Tokens/s per GPU", r"\frac{\text{tokens/s of all replicas}}{\text{GPUs}} = \frac{"
         + rate(summary.tokens_per_s) + "}{" + f"{summary.n_gpus:,}".replace(",", "{,}") + "} = "
         + rate(summary.tokens_per_s_per_gpu)),
    ]
    if summary.usd_per_month == summary.usd_per_month:  # not NaN
        rows.append(("USD per month", r"\text{GPUs} \times \text{price per GPU-hour} \times 720\,\text{h} = "
                     + f"{summary.n_gpus:,}".replace(",", "{,}") + r" \times " + usd(price_per_hour_usd)
                     + r" \times 720 = " + usd(summary.usd_per_month)))
    return rows


def _si(x: float, unit: str) -> str:
    """An amount as ``formats.fmt_bytes`` prints bytes (two decimals, k/M/G/T prefixes), in ``unit``."""
    for size, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            return _sep(f"{x / size:,.2f}") + _u(prefix + unit)
    return _sep(f"{x:,.2f}") + _u(unit)


def _per_s(x: float, unit: str) -> str:
    """A rate as ``formats.fmt_bytes(x) + "/s"`` prints it, in ``unit`` per second."""
    return _si(x, unit + "/s")


def live_rows(point: dict, step, machine: calc.Accelerator, dtype: str, critical_batch: float | None = None
              ) -> list[tuple[str, str]]:
    """The live page's headline numbers at one measured point (``live.predict.headline``'s ``decode_b1``):
    the machine roofline from its terms (``step``: ``live.predict.machine_step``, with the probed W and P of
    ``machine``), the calibrated prediction from its parts, measured / each prediction, the achieved
    bandwidth and (given) the critical batch (the inference course, week 11, step 4)."""
    w, p = machine.bandwidth_bytes_per_s, machine.compute_flops(dtype)
    b, s = int(point["batch"]), int(point["seq_len"])
    meas, t_m, t_c = point["reported_s"], point["pred_machine_s"], point["pred_calibrated_s"]
    parts = [("matmuls", point["cal_matmul_s"]), (r"\frac{B \cdot KV}{W}", point["cal_kv_s"]),
             ("attention", point["cal_attention_s"]), ("overhead", point["cal_overhead_s"])]
    parts = [(name, t) for name, t in parts if t or name != "attention"]
    rows = [
        (f"Machine roofline, {point['phase']} at B = {b}, S = {s:,} (probed W and P)",
         r"t_\text{machine} = \frac{B \cdot KV}{W} + \max\!\left(\frac{\text{weight bytes}}{W}, \frac{2 N B}{P}"
         r"\right) = \frac{" + gb(step.kv_s * w) + "}{" + _per_s(w, "B") + r"} + \max\!\left(\frac{"
         + gb(step.weights_s * w) + "}{" + _per_s(w, "B") + r"}, \frac{" + _si(step.flops, "FLOP") + "}{"
         + _per_s(p, "FLOP") + r"}\right) = " + sec(step.kv_s) + " + " + sec(max(step.weights_s, step.compute_s))
         + " = " + sec(t_m)),
        ("vs machine roofline", r"\frac{t_\text{measured}}{t_\text{machine}} = \frac{" + sec(meas) + "}{" + sec(t_m)
         + "} = " + f"{point['ratio_machine']:.2f}" + r"\times"),
        ("Calibrated prediction", r"t_\text{calibrated} = " + " + ".join(
            name if name.startswith("\\") else r"t_\text{" + name + "}" for name, _ in parts) + " = "
         + " + ".join(sec(t) for _, t in parts) + " = " + sec(t_c)),
        ("vs calibrated", r"\frac{t_\text{measured}}{t_\text{calibrated}} = \frac{" + sec(meas) + "}{" + sec(t_c)
         + "} = " + f"{point['ratio_calibrated']:.2f}" + r"\times"),
    ]
    pct = point.get("achieved_bandwidth_pct")
    if pct is not None and pct == pct:  # decode only
        rows.append(("Decode bandwidth", r"\frac{\text{bytes moved} / t_\text{measured}}{W} = \frac{"
                     + gb(point["bytes_moved"]) + " / " + sec(meas) + "}{" + _per_s(w, "B") + "} = "
                     + f"{pct:.1f}" + _u("%")))
    if critical_batch is not None:
        rows.append(("Critical batch", r"B^* = \frac{P \cdot \text{bytes per weight}}{2 W} = \frac{"
                     + _per_s(p, "FLOP") + r" \times " + _num(calc.dtype_bytes(dtype)) + r"\,\text{B}}{2 \times "
                     + _per_s(w, "B") + "} = " + f"{critical_batch:.1f}"))
    return rows


def endpoint_rows(level, tpot_check_ms: float, step=None, accelerator: calc.Accelerator | None = None,
                  weight_dtype: str = "bf16") -> list[tuple[str, str]]:
    """The endpoint section's TPOT figures at its lightest level: the measured TPOT p50, the TPOT definition
    filled in with the level's p50 figures (``tpot_check_ms``: ``live.endpoint_predict.tpot_from_p50s_ms``),
    and, with a prediction (``step``: ``live.endpoint_predict.predicted_decode_step`` on ``accelerator``),
    calc's roofline TPOT from its terms and measured / predicted (vLLM's ``benchmark_serving`` definitions;
    the inference course, week 11, step 4)."""
    ms = lambda x: _sep(f"{x:,.2f}") + _u("ms")  # noqa: E731 - the page's "%.2f ms"
    n = level["output_tokens_mean"]
    rows = [("TPOT p50, lightest load (per request, then the p50 over requests)",
             r"\text{TPOT}_{p50} = \operatorname{p50}_\text{requests} \frac{\text{E2E} - \text{TTFT}}{n_\text{out} - 1}"
             " = " + ms(level["tpot_ms_p50"]))]
    if tpot_check_ms == tpot_check_ms:
        rows.append(("The same formula on the level's p50 figures (a check: the p50 of a quotient is not the "
                     "quotient of the p50s, so the two differ a little)",
                     r"\frac{\text{E2E}_{p50} - \text{TTFT}_{p50}}{\bar n_\text{out} - 1} = \frac{" + ms(level["e2e_ms_p50"])
                     + " - " + ms(level["ttft_ms_p50"]) + "}{" + _num(n) + " - 1} = " + ms(tpot_check_ms)))
    pred = level.get("pred_tpot_ms") if hasattr(level, "get") else None
    if step is not None and accelerator is not None and pred is not None and pred == pred:
        w, p = accelerator.bandwidth_bytes_per_s, accelerator.compute_flops(weight_dtype)
        comm = step.comm_s > 0
        rows.append((f"Predicted TPOT: calc's roofline, decode at batch {step.batch:,} (the concurrency), mean "
                     "context P + N/2",
                     r"t = \frac{B \cdot KV}{W} + \max\!\left(\frac{\text{weights read}}{W}, \frac{2 N B}{P}\right)"
                     + (r" + t_\text{comm}" if comm else "") + r" = \frac{" + gb(step.kv_s * w) + "}{" + tbs(w)
                     + r"} + \max\!\left(\frac{" + gb(step.weights_s * w) + "}{" + tbs(w) + r"}, \frac{"
                     + flop(step.flops) + "}{" + tflops(p) + r"}\right)" + (" + " + sec(step.comm_s) if comm else "")
                     + " = " + ms(pred)))
        rows.append(("TPOT measured / bound", r"\frac{\text{TPOT}_{p50}}{t} = \frac{" + ms(level["tpot_ms_p50"])
                     + "}{" + ms(pred) + "} = " + f"{level['ratio_tpot']:.2f}" + r"\times"))
    return rows
