"""Both bills of one workload: the API bill and the self-hosted cost, from the same request stream.

API (``api_bill``): the provider's prompt cache keeps a prefix for a time-to-live after its last use
(Anthropic 5 minutes, refreshed by each hit; OpenAI's in-memory cache 5-10 minutes), whatever its size,
so its hits come from ``calc.prefix_cache.ttl_hits``, not from your tiers. Per request:

    usd = missed x p_in + cached x p_hit + written x (m - 1) x p_in + (answer + reasoning) x p_out

with written = missed prompt tokens (the whole prompt is marked cacheable, so what missed is written),
m the cache-write multiplier, and reasoning tokens billed as output by every provider
(``calc.workload.reasoning_conventions``; reference data section 4.2 for the cache prices).

Self-hosted (``self_hosted_bill``): GPU time, not tokens, timed as ``SelfHostedSetup.timing`` says (the
roofline bound by default, or the serving estimate with its range: ``calc.bill``'s module docstring). A
replica (``calc.bill.self_hosted_rates``: the smallest tensor-parallel group that holds the model; with the
serving estimate, its decode rate) spends on each request its prefill with the tiered
cache (``calc.prefix_cache.replay_ttft``: the computed and recomputed tokens; hits used in place or
loaded over PCIe/NVMe cost no GPU compute) plus output tokens / decode tokens per second at the chosen
batch (answer and reasoning alike). Replicas = ceil(requests per day x replica seconds / 86,400 x
peak-to-average), at least one (``calc.bill.replicas_for_traffic``).

All money in USD; a month is 30 days.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from .api_tiers import PriceTier
from .bill import SelfHostedSetup, replicas_for_traffic, self_hosted_rates
from .models import beyond_trained_window
from .checks import check_nonneg_int, check_nonneg_number, check_positive_number
from .prefix_cache import ReplaySummary, ttl_hits
from .price_sheet import request_cost
from .product_traffic import DAYS_PER_MONTH, SECONDS_PER_DAY, TOKENS_PER_MILLION, TrafficScenario
from .traces import RequestStream

#: Defaults of the API cache: Anthropic's 5-minute TTL; OpenAI's minimum cacheable prompt of 1,024 tokens.
API_TTL_S = 300.0
API_MIN_CACHED_TOKENS = 1024
COMPONENTS = ("input_missed_usd", "input_hit_usd", "cache_write_usd", "answer_usd", "reasoning_usd",
              "prefill_gpu_usd", "decode_gpu_usd", "idle_gpu_usd")


@dataclass(frozen=True)
class WorkloadBill:
    """One way of paying for a workload, per month (USD), by component (``COMPONENTS``; zeros where a
    component does not apply: GPU parts for an API, token parts for self-hosting).

    Fields also: name, model, total_usd, per_request_usd, n_gpus (0 for an API), cached_share (share of
    prompt tokens served from a cache: the provider's for an API, the tiers' for self-hosting).
    """

    name: str
    model: str
    input_missed_usd: float
    input_hit_usd: float
    cache_write_usd: float
    answer_usd: float
    reasoning_usd: float
    prefill_gpu_usd: float
    decode_gpu_usd: float
    idle_gpu_usd: float
    total_usd: float
    per_request_usd: float
    n_gpus: int
    cached_share: float


def requests_per_day_of(stream: RequestStream) -> float:
    """The stream's own request rate, per day: R / duration x 86,400 (R per day if it lasts under a second)."""
    return stream.n_requests / max(stream.duration_s, 1.0) * SECONDS_PER_DAY


def api_cache_hit_rate(stream: RequestStream, ttl_s: float = API_TTL_S, min_tokens: int = API_MIN_CACHED_TOKENS) -> float:
    """Share of prompt tokens an API provider's cache serves on this stream (``ttl_hits``), 0..1."""
    total = float(stream.input_tokens.sum())
    return float(ttl_hits(stream, ttl_s, min_tokens).sum()) / total if total else 0.0


def api_bill(stream: RequestStream, tier: PriceTier, requests_per_day: float | None = None, ttl_s: float = API_TTL_S,
             min_tokens: int = API_MIN_CACHED_TOKENS) -> WorkloadBill:
    """The monthly API bill of the stream's traffic at one price tier (module docstring formula).

    Args:
        stream: the requests (their mix is what the month repeats).
        tier: prices (``calc.api_tiers.PriceTier``).
        requests_per_day: traffic (default: the stream's own rate, ``requests_per_day_of``).
        ttl_s, min_tokens: the provider's cache (``ttl_hits``).

    Raises:
        ValueError: a negative rate, TTL or minimum; a stream without requests.
    """
    if stream.n_requests == 0:
        raise ValueError("the stream has no request")
    per_day = requests_per_day_of(stream) if requests_per_day is None else check_nonneg_number(
        requests_per_day, "requests_per_day")
    check_nonneg_int(min_tokens, "min_tokens")
    cached = ttl_hits(stream, ttl_s, min_tokens).astype(float)
    missed = stream.input_tokens - cached
    reasoning = stream.reasoning_tokens.astype(float)
    answer = stream.output_tokens - reasoning
    scale = DAYS_PER_MONTH * per_day / stream.n_requests  # sums over the stream -> month
    # Each request billed by calc.price_sheet.request_cost (a long-context tier applies per request, to the
    # whole request; batch / off-peak as the tier says); what missed is written, its surcharge kept apart.
    b = request_cost(tier.price_sheet(), np.asarray(stream.input_tokens, dtype=float), cached, missed,
                     np.asarray(answer, dtype=float), reasoning, batch=tier.batch, off_peak=tier.off_peak)
    written_at_base = missed * np.asarray(b.input_usd_per_mtok) / TOKENS_PER_MILLION
    parts = {"input_missed_usd": (b.input_usd + written_at_base).sum() * scale,
             "input_hit_usd": b.cached_input_usd.sum() * scale,
             "cache_write_usd": (b.cache_write_usd - written_at_base).sum() * scale,
             "answer_usd": b.output_usd.sum() * scale,
             "reasoning_usd": b.reasoning_usd.sum() * scale}
    total = float(sum(parts.values()))
    month = DAYS_PER_MONTH * per_day
    return WorkloadBill(tier.name, tier.model, *(float(parts[k]) for k in COMPONENTS[:5]), 0.0, 0.0, 0.0, total,
                        total / month if month else math.nan, 0, float(cached.sum() / stream.input_tokens.sum()))


def self_hosted_rates_for(stream: RequestStream, setup: SelfHostedSetup, requests_per_day: float | None = None):
    """``calc.bill.self_hosted_rates`` at the stream's mean prompt and output: the replica (GPUs, TP), its
    decode tokens per second at the setup's batch, its price.

    Raises:
        ValueError: the model does not fit on 8 GPUs (see ``self_hosted_rates``).
    """
    per_day = requests_per_day_of(stream) if requests_per_day is None else requests_per_day
    scenario = TrafficScenario(dau=min(per_day, 1e10), remix_share=1.0, original_share=0.0, generations_per_creator=1.0,
                               shared_prefix_tokens=max(1.0, float(stream.input_tokens.mean())), unique_input_tokens=0,
                               output_tokens=max(1.0, float(stream.output_tokens.mean())), cache_hit_rate=0.0)
    return self_hosted_rates(scenario, setup)


def request_tokens(stream: RequestStream) -> np.ndarray:
    """Each request's prompt plus output tokens (int64, shape (n_requests,)): the context it reaches, which a
    model's trained window must hold (``context_warning``, the workloads page's longer-context offer)."""
    return np.asarray(stream.input_tokens, dtype=np.int64) + np.asarray(stream.output_tokens, dtype=np.int64)


def requests_beyond_window(stream: RequestStream, model) -> int:
    """How many of the stream's requests carry more prompt and output (``request_tokens``) than ``model``'s trained
    context (``max_context_len``, config.json's ``max_position_embeddings``; ``calc.models.beyond_trained_window``):
    the requests an engine serving the model at that window refuses. 0 for a model that states no window.
    Example: the Agentic coding loop preset (512-token blocks) on Llama-3-8B (8,192 tokens): all 768 of its
    768 requests (the longest 134,299 tokens); the Chat preset (the longest 5,346 tokens): 0.

    Raises:
        ValueError: a stream without requests.
    """
    if stream.n_requests == 0:
        raise ValueError("the stream has no request")
    total = request_tokens(stream)
    limit = beyond_trained_window(model, int(total.max()))
    return int((total > limit).sum()) if limit else 0


def context_warning(stream: RequestStream, model, rates=None) -> str | None:
    """What to warn of when the stream's requests run past ``model``'s trained context (``calc.models
    .beyond_trained_window``), else None: how many requests' prompt and output exceed it (the longest named), and,
    with ``rates`` (``self_hosted_rates_for``), its ``context_notice`` of the mean request the bill prices
    (``calc.serving.context_notice``, the serving estimate's own words). Same for either timing.

    Raises:
        ValueError: a stream without requests.
    """
    over = requests_beyond_window(stream, model)
    if not over:
        return None
    total, limit = request_tokens(stream), model.max_context_len
    said = (f"{over:,} of the workload's {stream.n_requests:,} requests ({over / stream.n_requests:.0%}) carry more "
            f"prompt and output than {model.name}'s trained context of {limit:,} tokens (the longest "
            f"{int(total.max()):,}): an engine refuses them, so pick a model trained on longer contexts")
    mean = getattr(rates, "context_notice", None)
    return said + (f". The bill prices the mean request: {mean}" if mean else "")


def self_hosted_bill(stream: RequestStream, summary: ReplaySummary, setup: SelfHostedSetup, rates,
                     requests_per_day: float | None = None, use_cache: bool = True,
                     name: str | None = None) -> WorkloadBill:
    """The monthly self-hosted cost of the stream's traffic (module docstring).

    Args:
        summary: ``replay_ttft`` of this stream, run at ``tp = rates.gpus_per_replica``.
        rates: ``self_hosted_rates_for(stream, setup)``.
        use_cache: False prices the same traffic with every prompt prefilled in full (no prefix cache).

    Returns:
        ``WorkloadBill`` with prefill_gpu_usd, decode_gpu_usd (answer and reasoning tokens alike) and
        idle_gpu_usd (rented, not busy: the peak headroom and the always-on replica).

    Raises:
        ValueError: a negative rate.
    """
    per_day = requests_per_day_of(stream) if requests_per_day is None else check_nonneg_number(
        requests_per_day, "requests_per_day")
    d = summary.per_request
    prefill_s = (d["prefill_gpu_s"] if use_cache else d["ttft_no_cache_s"]).to_numpy().mean()
    decode_s = float(stream.output_tokens.mean()) / check_positive_number(rates.decode_tokens_per_s, "decode tokens/s")
    n_rep = int(replicas_for_traffic(per_day, prefill_s + decode_s, setup.peak_to_average))
    total = n_rep * rates.replica_month_usd
    usd_per_s = rates.replica_price_per_hour_usd / 3600.0
    month = DAYS_PER_MONTH * per_day
    prefill_usd, decode_usd = month * prefill_s * usd_per_s, month * decode_s * usd_per_s
    total_in = float(d["input_tokens"].sum())
    cached = (total_in - float(d["computed"].sum())) / total_in if (use_cache and total_in) else 0.0
    label = name or ("self-hosted, tiered cache" if use_cache else "self-hosted, no cache")
    model = f"{setup.model.name} on {n_rep * rates.gpus_per_replica} x {setup.accelerator.name}"
    return WorkloadBill(label, model, 0.0, 0.0, 0.0, 0.0, 0.0, float(prefill_usd), float(decode_usd),
                        float(max(total - prefill_usd - decode_usd, 0.0)), float(total),
                        total / month if month else math.nan, n_rep * rates.gpus_per_replica, float(cached))


def self_hosted_bill_range(stream: RequestStream, summary: ReplaySummary, setup: SelfHostedSetup, rates,
                           requests_per_day: float | None = None, use_cache: bool = True,
                           name: str | None = None) -> tuple[WorkloadBill, WorkloadBill, WorkloadBill]:
    """(low, central, high) ``self_hosted_bill``: at the high end of the serving estimate's throughput range, at the
    estimate, at its low end (``calc.bill.SelfHostedRates.for_bill_end``); low <= central <= high in total_usd, the
    three equal with timing "bound".

    Raises:
        ValueError: see ``self_hosted_bill``.
    """
    return tuple(self_hosted_bill(stream, summary, setup, rates.for_bill_end(end) if end else rates, requests_per_day,
                                  use_cache, name) for end in ("low", None, "high"))


def compare(stream: RequestStream, tiers: list, summary: ReplaySummary | None, setup: SelfHostedSetup | None, rates=None,
            requests_per_day: float | None = None, ttl_s: float = API_TTL_S,
            min_tokens: int = API_MIN_CACHED_TOKENS) -> pd.DataFrame:
    """Every API tier's bill and the self-hosted cost (with the tiered cache and without), side by side.

    Returns:
        DataFrame, one row per way of paying: the ``WorkloadBill`` fields.

    Raises:
        ValueError: see ``api_bill`` and ``self_hosted_bill``.
    """
    rows = [asdict(api_bill(stream, t, requests_per_day, ttl_s, min_tokens)) for t in tiers]
    if setup is not None and summary is not None:
        r = rates if rates is not None else self_hosted_rates_for(stream, setup, requests_per_day)
        rows.append(asdict(self_hosted_bill(stream, summary, setup, r, requests_per_day, True)))
        rows.append(asdict(self_hosted_bill(stream, summary, setup, r, requests_per_day, False)))
    return pd.DataFrame(rows)


def stream_stats(stream: RequestStream) -> dict:
    """Means and medians of the stream, for the page: requests, sessions, duration_s, input/output/reasoning
    tokens (mean and median input and output), requests_per_day."""
    s = stream
    return {"requests": s.n_requests, "sessions": int(len(np.unique(s.session[s.session >= 0]))),
            "duration_s": s.duration_s, "mean_input_tokens": float(s.input_tokens.mean()),
            "median_input_tokens": float(np.median(s.input_tokens)), "mean_output_tokens": float(s.output_tokens.mean()),
            "median_output_tokens": float(np.median(s.output_tokens)),
            "mean_reasoning_tokens": float(s.reasoning_tokens.mean()), "requests_per_day": requests_per_day_of(s)}
