"""Measure an OpenAI-compatible serving endpoint: TTFT, TPOT and ITL under load, as vLLM's benchmark does.

An async streaming client (httpx) sends ``/v1/completions`` or ``/v1/chat/completions`` requests with
``stream: true`` and ``stream_options: {"include_usage": true}``, prompts of a chosen token length
and a fixed output length (``max_tokens`` plus ``ignore_eos`` / ``min_tokens`` where the server
accepts them), under a closed-loop concurrency sweep or open-loop Poisson arrivals.

Definitions (vLLM's ``vllm bench serve``: ``vllm/benchmarks/serve.py::calculate_metrics`` and
``vllm/benchmarks/lib/endpoint_request_func.py``):

- TTFT: time from sending the request to the first chunk that carries output content.
- E2E: time from sending the request to the last content chunk.
- TPOT = (E2E - TTFT) / (output tokens - 1), per request; output tokens from the usage field.
- ITL: every gap between two content chunks, pooled over the requests of a level (one value per
  chunk, vLLM's convention). A chunk carrying k tokens (known from vLLM's per-chunk usage) also
  gives k per-token gaps of gap / k (``itl_per_token``: the convention where every token has a gap).
- Request throughput = completed requests / level duration; output tokens/s = all output tokens /
  level duration; goodput = requests meeting every TTFT/TPOT target / level duration.
- Percentiles: ``numpy.percentile`` (linear interpolation), p50 / p90 / p99.

Safety (the dashboard is a shared server and must not become a proxy into its network): a base URL
must match the allow-list in the ``LLM_EXPLORER_ENDPOINT_ALLOW`` environment variable (or the
``endpoint_allow`` Streamlit secret); by default nothing, loopback included (a vLLM server beside the app
is listed as ``127.0.0.1:8000``), and a refused target is never contacted. Redirects are never
followed, environment proxies are not used, every request has connect / first-byte / stall /
whole-request timeouts, a response is capped in bytes and a run in requests. An error names the HTTP
status and its reason, never the body of what answered (the page must not read other servers out). The API
key travels only in the Authorization header: never in a URL, a result, a log line or an error message.

CLI::

    python -m live.endpoint --base-url URL --model NAME --concurrency 1,2,4 --prompt-tokens 256 \
        --output-tokens 64 --requests 16 --json
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from .endpoint_spec import APIS, EndpointError, EndpointRefused, EndpointSpec, KEY_ENV, check_base_url
from .endpoint_metrics import PERCENTILES, RequestResult, level_metrics
from .endpoint_client import _redact, calibrate_prompt_words, request_body, stream_request, words_prompt


# -- a whole run -----------------------------------------------------------------------------------------
@dataclass
class EndpointRun:
    """A run's outcome: ``levels`` (one dict per level: ``level`` and ``level_metrics``'s keys, plus
    ``concurrency`` or ``request_rate_per_s``), ``samples`` (one ``RequestResult.row`` per request
    with its ``level``), ``itl_ms`` (level -> pooled ITL list, ms), ``notes``, ``cancelled``, ``spec``."""

    spec: dict
    levels: list[dict] = field(default_factory=list)
    samples: list[dict] = field(default_factory=list)
    itl_ms: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False
    error: str | None = None
    wall_s: float = 0.0


ProgressFn = Callable[[float, str], None]


async def _run_level(client, url, spec, prompts, level, extras, api_key, cancel, on_done):
    """Run one level; returns (results, duration_s). Closed loop: ``level`` workers pull requests;
    open loop: requests start at Poisson arrival times of rate ``level``."""
    results: list[RequestResult | None] = [None] * len(prompts)
    t_origin = time.perf_counter()

    async def one(i):
        r = await stream_request(client, url, spec, request_body(spec, prompts[i], extras), i, api_key, t_origin)
        results[i] = r
        on_done(r)

    if spec.mode == "concurrency":
        nxt = iter(range(len(prompts)))

        async def worker():
            for i in nxt:
                if cancel.is_set():
                    return
                await one(i)
        tasks = [asyncio.create_task(worker()) for _ in range(int(level))]
    else:
        rng = np.random.default_rng(spec.seed + int(level * 1000))
        gaps = rng.exponential(1.0 / level, size=len(prompts))
        starts = np.cumsum(gaps) - gaps[0]
        tasks = []
        for i, s in enumerate(starts):
            delay = t_origin + s - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if cancel.is_set():
                break
            tasks.append(asyncio.create_task(one(i)))
    pending = set(tasks)
    while pending:
        done, pending = await asyncio.wait(pending, timeout=0.1)
        if cancel.is_set():
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            break
    duration = time.perf_counter() - t_origin
    return [r for r in results if r is not None], duration


async def run_endpoint(spec: EndpointSpec, api_key: str | None = None, progress: ProgressFn | None = None,
                       cancel: threading.Event | None = None, allow: list[str] | None = None,
                       transport=None) -> EndpointRun:
    """Measure every level of ``spec`` at the endpoint; returns an ``EndpointRun``.

    Order: check the base URL against the allow-list; size the prompt (``calibrate_prompt_words``);
    warm-up requests at concurrency 1 (not counted; the first also finds whether the server accepts
    ``ignore_eos``/``min_tokens``/per-chunk usage: on HTTP 400/422 they are dropped and a note says so);
    then each level with ``spec.requests_per_level`` requests. ``progress(fraction, message)`` is
    called as requests finish; setting ``cancel`` stops the run (levels finished so far are kept).

    Raises:
        EndpointRefused: the base URL is not allowed (before any connection is made).
    """
    import httpx

    progress = progress or (lambda f, m: None)
    cancel = cancel or threading.Event()
    base = check_base_url(spec.base_url, allow)
    url = base + APIS[spec.api]
    run = EndpointRun(spec=asdict(spec) | {"base_url": base})
    t_start = time.perf_counter()
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    # httpx's read timeout is a backstop a little above the client's own first-byte and stall timeouts
    timeout = httpx.Timeout(connect=spec.connect_timeout_s,
                            read=max(spec.first_byte_timeout_s, spec.stall_timeout_s) + 5.0,
                            write=spec.connect_timeout_s, pool=spec.request_timeout_s)
    max_conn = max(int(max(spec.levels())) if spec.mode == "concurrency" else 256, 1)
    limits = httpx.Limits(max_connections=max_conn, max_keepalive_connections=max_conn)
    async with httpx.AsyncClient(timeout=timeout, limits=limits, follow_redirects=False, trust_env=False,
                                 transport=transport) as client:
        progress(0.0, "sizing the prompt")
        try:
            n_words, counted, how = await calibrate_prompt_words(client, base, spec, headers)
        except EndpointError as e:
            run.error = _redact(str(e), api_key)
            return run
        except httpx.ConnectError:
            run.error = "connection refused or host unreachable (is the server running at that address and port?)"
            return run
        except httpx.TimeoutException:
            run.error = "the server did not answer in time while the prompt was being sized"
            return run
        except httpx.HTTPError as e:
            run.error = f"HTTP client error while sizing the prompt: {type(e).__name__}"
            return run
        run.notes.append(f"{how}: {n_words} words = {counted} prompt tokens (asked {spec.prompt_tokens})")
        rng = np.random.default_rng(spec.seed)
        extras = True
        for w in range(spec.warmup_requests):
            if cancel.is_set():
                break
            progress(0.0, f"warm-up request {w + 1}/{spec.warmup_requests}")
            r = await stream_request(client, url, spec, request_body(spec, words_prompt(rng, n_words), extras),
                                     -1, api_key)
            if not r.ok and extras and r.error and ("HTTP 400" in r.error or "HTTP 422" in r.error):
                extras = False
                run.notes.append("The server rejected ignore_eos / min_tokens / continuous_usage_stats "
                                 f"({r.error}); requests go without them, so outputs may stop early at an "
                                 "end-of-sequence token and multi-token chunks are not detected.")
                r = await stream_request(client, url, spec, request_body(spec, words_prompt(rng, n_words), extras),
                                         -1, api_key)
            if not r.ok:  # as vLLM's initial test request: a failing warm-up stops the run before the sweep
                run.error = f"The warm-up request failed, so the sweep was not started: {r.error}"
                run.wall_s = time.perf_counter() - t_start
                return run
        n_levels = len(spec.levels())
        total = n_levels * spec.requests_per_level
        finished = 0
        for li, level in enumerate(spec.levels()):
            if cancel.is_set():
                break
            prompts = [words_prompt(rng, n_words) for _ in range(spec.requests_per_level)]
            label = f"concurrency {level:g}" if spec.mode == "concurrency" else f"{level:g} requests/s"

            def on_done(r, label=label):
                nonlocal finished
                finished += 1
                progress(finished / total, f"{label}: {finished - li * spec.requests_per_level}/"
                                           f"{spec.requests_per_level} requests done (level {li + 1}/{n_levels})")

            results, duration = await _run_level(client, url, spec, prompts, level, extras, api_key, cancel, on_done)
            if cancel.is_set() and len(results) < len(prompts):
                break
            m = level_metrics(results, duration, spec.ttft_slo_ms, spec.tpot_slo_ms)
            key = "concurrency" if spec.mode == "concurrency" else "request_rate_per_s"
            run.levels.append({"level": level, key: level} | m)
            run.itl_ms[level] = [g * 1e3 for r in results if r.ok for g in r.itl_s()]
            run.samples += [{"level": level} | r.row() for r in sorted(results, key=lambda r: r.index)]
            short = [r for r in results if r.ok and r.output_tokens != spec.output_tokens]
            if short:
                run.notes.append(f"{label}: {len(short)} request(s) returned another number of tokens than the "
                                 f"{spec.output_tokens} asked ({sorted({r.output_tokens for r in short})}); TPOT uses "
                                 "the tokens each one returned.")
            if any(r.ok and not r.usage_reported for r in results):
                run.notes.append(f"{label}: the server sent no usage in the stream; output tokens were counted as "
                                 "content chunks.")
    run.cancelled = cancel.is_set()
    run.wall_s = time.perf_counter() - t_start
    progress(1.0, "cancelled" if run.cancelled else "done")
    return run


def measure(spec: EndpointSpec, api_key: str | None = None, progress: ProgressFn | None = None,
            cancel: threading.Event | None = None, allow: list[str] | None = None) -> EndpointRun:
    """``run_endpoint`` from synchronous code (its own event loop)."""
    return asyncio.run(run_endpoint(spec, api_key, progress, cancel, allow))


class EndpointJob:
    """A measurement in a background thread (so a page never blocks its own or other sessions' scripts).

    One run per endpoint at a time on this machine: a second job for the same base URL waits (its
    ``message`` says so) until the first finishes, through a file lock every server process shares.

    ``state``: "running", "done", "error" or "cancelled"; ``fraction`` and ``message`` follow
    progress; ``result`` is the ``EndpointRun``; ``error`` a message. ``cancel()`` asks it to stop.
    The API key lives only in the thread's closure, never in an attribute.
    """

    def __init__(self, spec: EndpointSpec, api_key: str | None = None, allow: list[str] | None = None):
        self.spec = spec
        self.state = "running"
        self.fraction = 0.0
        self.message = "starting"
        self.result: EndpointRun | None = None
        self.error: str | None = None
        self._cancel = threading.Event()

        def work(key=api_key):
            lock = None
            try:
                lock = self._wait_for_endpoint(check_base_url(spec.base_url, allow))
                if lock is None:  # cancelled while waiting
                    self.result, self.state = EndpointRun(spec=asdict(spec), cancelled=True), "cancelled"
                    return
                run = measure(spec, key, self._progress, self._cancel, allow)
                self.result = run
                self.error = run.error
                self.state = "error" if run.error else ("cancelled" if run.cancelled else "done")
            except EndpointRefused as e:
                self.error, self.state = str(e), "error"
            except Exception as e:  # a bug must not kill the page silently: say what failed
                self.error, self.state = _redact(f"the run failed: {type(e).__name__}: {e}", key), "error"
            finally:
                if lock is not None:
                    lock.release()

        self._thread = threading.Thread(target=work, name="endpoint-measurement", daemon=True)
        self._thread.start()

    def _progress(self, fraction: float, message: str) -> None:
        self.fraction, self.message = fraction, message

    def _wait_for_endpoint(self, base_url: str):
        """Take the endpoint's lock, waiting while another run (any session, any server process on this
        machine) measures the same base URL: two sweeps at once would load the server for each other.
        Returns the held ``FileLock``, or None when cancelled while waiting."""
        import hashlib

        from filelock import FileLock, Timeout

        from .machine_lock import runtime_dir

        name = "llm-explorer-endpoint-" + hashlib.sha256(base_url.encode()).hexdigest()[:16] + ".lock"
        lock = FileLock(str(runtime_dir() / name), thread_local=False)
        while True:
            try:
                lock.acquire(timeout=0.25)
                return lock
            except Timeout:
                self.message = ("waiting: another run is measuring this endpoint (one sweep per endpoint at a "
                                "time, so that runs do not load the server for each other)")
                if self._cancel.is_set():
                    return None

    @property
    def finished(self) -> bool:
        return self.state != "running"

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)


# -- CLI -------------------------------------------------------------------------------------------------
CLI_KEYS = ("concurrency", "request_rate_per_s", "requests_ok", "requests_failed", "output_tokens_per_s",
            "request_throughput_per_s", "goodput_per_s", "duration_s")


def levels_json(run: EndpointRun) -> dict:
    """The CLI's JSON: ``{"levels": [{"concurrency", "ttft_ms_p50", ..., "requests_failed", "errors"}], ...}``."""
    out = []
    for lv in run.levels:
        d = {k: lv[k] for k in CLI_KEYS if k in lv}
        for m in ("ttft", "tpot", "itl", "itl_per_token", "e2e"):
            for s in ("mean",) + tuple(f"p{p}" for p in PERCENTILES):
                v = lv[f"{m}_ms_{s}"]
                d[f"{m}_ms_{s}"] = None if v is None or (isinstance(v, float) and math.isnan(v)) else round(v, 3)
        d["errors"] = lv["errors"]
        out.append(d)
    return {"levels": out, "notes": run.notes, "cancelled": run.cancelled, "error": run.error,
            "wall_s": round(run.wall_s, 3)}


def _parse_list(text: str, cast, what: str) -> tuple:
    try:
        return tuple(cast(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise SystemExit(f"--{what}: give numbers separated by commas, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    """``python -m live.endpoint``: measure an endpoint, print a table or ``--json``. Exit 2 on a refused
    URL or bad arguments, 1 when the run failed, else 0."""
    p = argparse.ArgumentParser(prog="python -m live.endpoint", description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", required=True, help="server root, e.g. http://127.0.0.1:8000")
    p.add_argument("--model", required=True, help="served model name")
    p.add_argument("--api", choices=list(APIS), default="completions")
    p.add_argument("--concurrency", default="1", help="closed-loop levels, e.g. 1,2,4")
    p.add_argument("--request-rate", default=None, help="Poisson levels in requests/s, e.g. 0.5,1,2 (instead)")
    p.add_argument("--prompt-tokens", type=int, default=256)
    p.add_argument("--output-tokens", type=int, default=64)
    p.add_argument("--requests", type=int, default=16, help="requests per level")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-ignore-eos", action="store_true", help="do not send ignore_eos / min_tokens")
    p.add_argument("--ttft-slo-ms", type=float, default=None)
    p.add_argument("--tpot-slo-ms", type=float, default=None)
    p.add_argument("--timeout", type=float, default=600.0, help="whole-request timeout (s)")
    p.add_argument("--stall-timeout", type=float, default=30.0, help="longest silence mid-stream (s)")
    p.add_argument("--json", action="store_true", help="print JSON")
    a = p.parse_args(argv)
    rate = a.request_rate is not None
    try:
        spec = EndpointSpec(base_url=a.base_url, model=a.model, api=a.api, prompt_tokens=a.prompt_tokens,
                            output_tokens=a.output_tokens, mode="rate" if rate else "concurrency",
                            concurrency=() if rate else _parse_list(a.concurrency, int, "concurrency"),
                            request_rates_per_s=_parse_list(a.request_rate, float, "request-rate") if rate else (),
                            requests_per_level=a.requests, warmup_requests=a.warmup, seed=a.seed,
                            ignore_eos=not a.no_ignore_eos, ttft_slo_ms=a.ttft_slo_ms, tpot_slo_ms=a.tpot_slo_ms,
                            request_timeout_s=a.timeout, stall_timeout_s=a.stall_timeout)
        check_base_url(spec.base_url)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    def show(f, m):
        if not a.json:
            print(f"\r[{f:4.0%}] {m:70s}", end="", file=sys.stderr, flush=True)

    cancel = threading.Event()
    try:
        run = measure(spec, os.environ.get(KEY_ENV) or None, show, cancel)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    if not a.json:
        print(file=sys.stderr)
    if a.json:
        print(json.dumps(levels_json(run), indent=1))
    else:
        for note in run.notes:
            print(f"note: {note}")
        unit = "conc." if spec.mode == "concurrency" else "req/s"
        print(f"{unit:>6} {'TTFT p50':>10} {'TPOT p50':>10} {'ITL p50':>10} {'E2E p50':>10} {'tok/s':>9} ok/failed")
        for lv in run.levels:
            print(f"{lv['level']:>6g} {lv['ttft_ms_p50']:>8.1f}ms {lv['tpot_ms_p50']:>8.2f}ms "
                  f"{lv['itl_ms_p50']:>8.2f}ms {lv['e2e_ms_p50']:>8.1f}ms {lv['output_tokens_per_s']:>9.1f} "
                  f"{lv['requests_ok']}/{lv['requests_failed']}")
            for msg, n in lv["errors"].items():
                print(f"       {n} x {msg}")
        if run.error:
            print(f"error: {run.error}", file=sys.stderr)
    return 1 if run.error else 0


if __name__ == "__main__":
    sys.exit(main())
