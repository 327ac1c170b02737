"""One request's timings (``RequestResult``) and a level's metrics: TTFT, TPOT, ITL, E2E percentiles,
throughput and goodput, with vLLM's definitions (``vllm/benchmarks/serve.py::calculate_metrics``; the
full list is in ``live.endpoint``'s docstring).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np



PERCENTILES = (50, 90, 99)

#: Metrics reported per level with percentiles (milliseconds in the output keys).
METRICS = ("ttft", "tpot", "itl", "e2e")

SAMPLE_FIELDS = ("index", "ok", "error", "start_s", "ttft_s", "e2e_s", "tpot_s", "prompt_tokens", "output_tokens",
                 "chunks", "usage_reported")


@dataclass
class RequestResult:
    """One request's measurement (seconds from sending it; times relative to the level start in ``start_s``).

    ``chunk_times_s``: arrival of each content chunk; ``chunk_tokens``: tokens each carried (1 unless
    the server's per-chunk usage said more); ``output_tokens``: from usage when reported, else the
    sum of ``chunk_tokens``; ``error``: a message for the user when ``ok`` is False.
    """

    index: int
    ok: bool = False
    error: str | None = None
    start_s: float = 0.0
    ttft_s: float | None = None
    e2e_s: float | None = None
    prompt_tokens: int | None = None
    output_tokens: int = 0
    usage_reported: bool = False
    chunk_times_s: list[float] = field(default_factory=list)
    chunk_tokens: list[int] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        return len(self.chunk_times_s)

    @property
    def tpot_s(self) -> float | None:
        """(E2E - TTFT) / (output tokens - 1); None for one output token or a failed request."""
        if not self.ok or self.output_tokens <= 1 or self.ttft_s is None or self.e2e_s is None:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)

    def itl_s(self) -> list[float]:
        """Gaps between consecutive content chunks (vLLM's ITL entries for this request)."""
        t = self.chunk_times_s
        return [b - a for a, b in zip(t, t[1:])]

    def itl_per_token_s(self) -> list[float]:
        """Per-token gaps: a chunk of k tokens after a gap g gives k gaps of g / k (the first chunk's
        extra tokens share nothing: they arrived with the first token and count as 0-length gaps)."""
        out: list[float] = []
        t, k = self.chunk_times_s, self.chunk_tokens
        if not t:
            return out
        out += [0.0] * max(k[0] - 1, 0)
        for i in range(1, len(t)):
            g = t[i] - t[i - 1]
            out += [g / k[i]] * k[i]
        return out

    def row(self) -> dict:
        """A flat record of the request (what the samples table and CSV hold)."""
        return {f: getattr(self, f) for f in SAMPLE_FIELDS}


# -- metrics ---------------------------------------------------------------------------------------------
def _pcts(values_s: list[float], name: str) -> dict:
    """``{name}_ms_mean`` and ``{name}_ms_p50/p90/p99`` of a list of seconds (NaN when empty)."""
    a = np.asarray([v for v in values_s if v is not None], dtype=float) * 1e3
    out = {f"{name}_ms_mean": float(a.mean()) if a.size else math.nan}
    for p in PERCENTILES:
        out[f"{name}_ms_p{p}"] = float(np.percentile(a, p)) if a.size else math.nan
    return out


def level_metrics(results: list[RequestResult], duration_s: float, ttft_slo_ms: float | None = None,
                  tpot_slo_ms: float | None = None) -> dict:
    """Summary of one load level, in vLLM's definitions (``calculate_metrics`` in vllm/benchmarks/serve.py).

    Returns a dict: ``{ttft,tpot,itl,itl_per_token,e2e}_ms_{mean,p50,p90,p99}``, ``requests_ok``,
    ``requests_failed``, ``duration_s``, ``request_throughput_per_s`` (ok / duration),
    ``output_tokens_per_s`` (sum of output tokens of ok requests / duration), ``total_tokens_per_s``,
    ``goodput_per_s`` (ok requests with TTFT <= target and TPOT <= target, per second; None when no
    target is set; as in vLLM a one-token request counts TPOT 0), ``prompt_tokens_mean``,
    ``output_tokens_mean``, ``errors`` (message -> count).

    Worked example: 2 requests, TTFT 100 and 120 ms, 5 tokens each 20 ms apart, duration 0.2 s ->
    TPOT p50 20 ms, ITL p50 20 ms, output tokens/s = 10 / 0.2 = 50.
    """
    ok = [r for r in results if r.ok]
    bad = [r for r in results if not r.ok]
    d = max(float(duration_s), 1e-9)
    out: dict = {}
    out.update(_pcts([r.ttft_s for r in ok], "ttft"))
    out.update(_pcts([r.tpot_s for r in ok if r.tpot_s is not None], "tpot"))
    out.update(_pcts([g for r in ok for g in r.itl_s()], "itl"))
    out.update(_pcts([g for r in ok for g in r.itl_per_token_s()], "itl_per_token"))
    out.update(_pcts([r.e2e_s for r in ok], "e2e"))
    out_tokens = sum(r.output_tokens for r in ok)
    in_tokens = sum(r.prompt_tokens or 0 for r in ok)
    out.update(requests_ok=len(ok), requests_failed=len(bad), duration_s=float(duration_s),
               request_throughput_per_s=len(ok) / d, output_tokens_per_s=out_tokens / d,
               total_tokens_per_s=(out_tokens + in_tokens) / d,
               prompt_tokens_mean=float(np.mean([r.prompt_tokens for r in ok if r.prompt_tokens is not None]))
               if any(r.prompt_tokens is not None for r in ok) else math.nan,
               output_tokens_mean=float(np.mean([r.output_tokens for r in ok])) if ok else math.nan)
    if ttft_slo_ms is None and tpot_slo_ms is None:
        out["goodput_per_s"] = None
    else:
        good = sum(1 for r in ok
                   if (ttft_slo_ms is None or r.ttft_s * 1e3 <= ttft_slo_ms)
                   and (tpot_slo_ms is None or (r.tpot_s or 0.0) * 1e3 <= tpot_slo_ms))
        out["goodput_per_s"] = good / d
    errors: dict[str, int] = {}
    for r in bad:
        errors[r.error or "unknown error"] = errors.get(r.error or "unknown error", 0) + 1
    out["errors"] = errors
    return out
