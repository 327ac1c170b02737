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
from dataclasses import asdict, dataclass, field, replace
from http import HTTPStatus
from typing import Callable
from urllib.parse import urlsplit

import numpy as np

#: Environment variable holding the allow-list (comma-separated hosts, host:port or base URLs; ``*`` = any).
ALLOW_ENV = "LLM_EXPLORER_ENDPOINT_ALLOW"
#: Streamlit secret with the same meaning (a string or a list of strings).
ALLOW_SECRET = "endpoint_allow"
#: Environment variable the API key may come from (the page also offers a password field).
KEY_ENV = "LLM_EXPLORER_ENDPOINT_KEY"
#: Most requests one run may send (warm-up and prompt calibration included).
MAX_REQUESTS_PER_RUN = 2000
#: Largest prompt and output asked for (tokens).
MAX_PROMPT_TOKENS = 131072
MAX_OUTPUT_TOKENS = 16384
APIS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
MODES = ("concurrency", "rate")
PERCENTILES = (50, 90, 99)
#: Metrics reported per level with percentiles (milliseconds in the output keys).
METRICS = ("ttft", "tpot", "itl", "e2e")
#: Words the prompts are drawn from: common English words, most of which are one token in BPE vocabularies.
WORDS = tuple("""the of and to in is was for on that with as by at from his it an were are which this be
has had not or but its have one new first their after who also two they been her she all there time
other may into year more during most over only between some years world when him made than would
city three state later then such used can under about known where while both through up being many
part around before out these three early since well because each four season team work life music
film game group house school army river water road line point name side long power found form end
area people family number place country series found small high people system""".split())

SAMPLE_FIELDS = ("index", "ok", "error", "start_s", "ttft_s", "e2e_s", "tpot_s", "prompt_tokens", "output_tokens",
                 "chunks", "usage_reported")


class EndpointRefused(ValueError):
    """The base URL is not allowed by the server's allow-list (or is not an http(s) base URL)."""


class EndpointError(RuntimeError):
    """A request failed in a way the user should read (refused connection, 4xx/5xx, bad stream, stall)."""


# -- allow-list -------------------------------------------------------------------------------------
def allow_entries(env: dict | None = None, secrets=None) -> list[str]:
    """The allow-list entries: ``LLM_EXPLORER_ENDPOINT_ALLOW`` (comma-separated) plus the
    ``endpoint_allow`` secret (a string or list); empty means that no endpoint may be contacted."""
    env = os.environ if env is None else env
    out = [e.strip() for e in env.get(ALLOW_ENV, "").split(",") if e.strip()]
    if secrets is not None:
        try:
            extra = secrets.get(ALLOW_SECRET) if hasattr(secrets, "get") else None
        except Exception:  # no secrets file: Streamlit raises on access
            extra = None
        if isinstance(extra, str):
            extra = extra.split(",")
        out += [str(e).strip() for e in (extra or []) if str(e).strip()]
    return out


def _entry_matches(entry: str, scheme: str, host: str, port: int, path: str) -> bool:
    if entry == "*":
        return True
    if "://" not in entry:
        entry = "//" + entry
    e = urlsplit(entry)
    e_host = (e.hostname or "").lower()
    if e_host != host:
        return False
    if e.scheme and e.scheme != scheme:
        return False
    try:
        e_port = e.port
    except ValueError:
        return False
    if e_port is not None and e_port != port:
        return False
    e_path = e.path.rstrip("/")
    if e_path.endswith("/v1"):
        e_path = e_path[:-3]
    return not e_path or path == e_path or path.startswith(e_path + "/")


def check_base_url(url: str, allow: list[str] | None = None) -> str:
    """Normalise and check a base URL against the allow-list; returns ``scheme://host[:port][/path]``.

    The base URL is the server root (``http://127.0.0.1:8000``; a trailing ``/v1`` is dropped, the
    API paths are added by the client). Allowed: only what an entry of ``allow`` names (``host``,
    ``host:port``, ``http(s)://host[:port][/path]`` or ``*``); loopback too must be listed (e.g.
    ``127.0.0.1:8000``), since any port of the server itself is otherwise one request away. Host names
    are compared literally, never resolved.

    Raises:
        EndpointRefused: not http(s), credentials/query/fragment in the URL, or not allowed; the
        message names the ``LLM_EXPLORER_ENDPOINT_ALLOW`` setting.
    """
    text = (url or "").strip()
    if not text:
        raise EndpointRefused("Enter the endpoint's base URL, e.g. http://127.0.0.1:8000.")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise EndpointRefused("That base URL cannot be read (bad host or port).") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointRefused("The base URL must start with http:// or https:// and name a host.")
    if parts.username is not None or parts.password is not None:
        raise EndpointRefused("Put no credentials in the URL: the API key goes in its own field.")
    if parts.query or parts.fragment:
        raise EndpointRefused("The base URL takes no query (?...) or fragment (#...): give the server's root.")
    host = parts.hostname.lower()
    port = port or (443 if parts.scheme == "https" else 80)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    allow = allow_entries() if allow is None else allow
    if not any(_entry_matches(e.lower(), parts.scheme, host, port, path) for e in allow):
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise EndpointRefused(
            f"{shown} is not allowed: this server contacts only the endpoints listed in its {ALLOW_ENV} setting "
            f"(environment variable, or `{ALLOW_SECRET}` in Streamlit's secrets), which the server's operator sets, "
            "e.g. 127.0.0.1:8000 for a vLLM server beside the app. Currently allowed: "
            + (", ".join(allow) if allow else "none") + ".")
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return f"{parts.scheme}://{netloc}{path}"


# -- what to run --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EndpointSpec:
    """One endpoint measurement: where, what, and the load levels.

    Fields (units in the names): ``base_url`` (server root, checked by ``check_base_url`` when the run
    starts), ``model`` (the served model name), ``api`` ("completions" or "chat"), ``prompt_tokens`` and
    ``output_tokens`` per request, ``mode`` ("concurrency": closed loop with N requests in flight;
    "rate": Poisson arrivals at R requests/s), ``concurrency`` / ``request_rates_per_s`` (the levels),
    ``requests_per_level``, ``warmup_requests`` (not counted), ``seed`` (prompts, arrivals, sampling),
    ``ignore_eos`` (ask for ``ignore_eos``/``min_tokens``), timeouts in seconds, ``max_response_bytes``
    per response, SLO targets ``ttft_slo_ms`` / ``tpot_slo_ms`` for goodput (None: not set).
    The API key is not part of the spec (it is passed separately and never stored in results).

    Raises:
        ValueError: a field out of range, no level, or more than ``MAX_REQUESTS_PER_RUN`` requests.
    """

    base_url: str
    model: str
    api: str = "completions"
    prompt_tokens: int = 256
    output_tokens: int = 64
    mode: str = "concurrency"
    concurrency: tuple[int, ...] = (1, 2, 4)
    request_rates_per_s: tuple[float, ...] = ()
    requests_per_level: int = 16
    warmup_requests: int = 1
    seed: int = 0
    ignore_eos: bool = True
    connect_timeout_s: float = 5.0
    first_byte_timeout_s: float = 60.0
    stall_timeout_s: float = 30.0
    request_timeout_s: float = 600.0
    max_response_bytes: int = 16 * 2**20
    ttft_slo_ms: float | None = None
    tpot_slo_ms: float | None = None

    def __post_init__(self):
        if not str(self.model).strip():
            raise ValueError("Enter the model name the server serves (as in its /v1/models list).")
        if self.api not in APIS:
            raise ValueError(f"api must be one of {', '.join(APIS)}, got {self.api!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        for name, lo, hi in (("prompt_tokens", 1, MAX_PROMPT_TOKENS), ("output_tokens", 1, MAX_OUTPUT_TOKENS),
                             ("requests_per_level", 1, MAX_REQUESTS_PER_RUN), ("warmup_requests", 0, 100)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name} must be a whole number in {lo}..{hi}, got {v!r}")
        levels = self.levels()
        if not levels:
            raise ValueError("Give at least one load level (a concurrency or a request rate).")
        if self.mode == "concurrency" and any(isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= 1024
                                              for c in self.concurrency):
            raise ValueError(f"concurrency levels must be whole numbers in 1..1024, got {list(self.concurrency)}")
        if self.mode == "rate" and any(not (isinstance(r, (int, float)) and 0 < r <= 10000 and math.isfinite(r))
                                       for r in self.request_rates_per_s):
            raise ValueError(f"request rates must be in (0, 10000] requests/s, got {list(self.request_rates_per_s)}")
        for name in ("connect_timeout_s", "first_byte_timeout_s", "stall_timeout_s", "request_timeout_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 < v <= 3600):
                raise ValueError(f"{name} must be in (0, 3600] seconds, got {v!r}")
        if not (isinstance(self.max_response_bytes, int) and self.max_response_bytes >= 1024):
            raise ValueError(f"max_response_bytes must be at least 1024, got {self.max_response_bytes!r}")
        for name in ("ttft_slo_ms", "tpot_slo_ms"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and v > 0):
                raise ValueError(f"{name} must be a positive number of milliseconds or empty, got {v!r}")
        total = self.total_requests()
        if total > MAX_REQUESTS_PER_RUN:
            raise ValueError(f"This run would send {total} requests; a run may send at most {MAX_REQUESTS_PER_RUN} "
                             "(levels x requests per level + warm-up). Use fewer levels or requests.")

    def levels(self) -> list[float]:
        """The load levels in order: concurrencies (mode "concurrency") or request rates per second."""
        return list(self.concurrency) if self.mode == "concurrency" else [float(r) for r in self.request_rates_per_s]

    def total_requests(self) -> int:
        """Measured + warm-up requests this run sends (prompt calibration adds at most 8)."""
        return len(self.levels()) * self.requests_per_level + self.warmup_requests

    def describe(self) -> str:
        """The run in words (no key), e.g. "completions at http://127.0.0.1:8000, model m: concurrency 1, 2, 4 ..."."""
        lv = ", ".join(f"{x:g}" for x in self.levels())
        unit = "concurrency" if self.mode == "concurrency" else "requests/s"
        return (f"{self.api} at {self.base_url}, model {self.model}: {unit} {lv}; {self.requests_per_level} requests "
                f"per level, {self.prompt_tokens} prompt + {self.output_tokens} output tokens")


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


# -- one streamed request ------------------------------------------------------------------------------
def _redact(text: str, secret: str | None) -> str:
    """``text`` with the secret (and anything after "Bearer ") replaced, for error messages."""
    if secret:
        text = text.replace(secret, "***")
    return text


def _status_message(status: int, body: bytes = b"") -> str:
    """A sentence for an HTTP error status: the status, its standard reason (RFC 9110) and what to check.

    ``body`` is not shown, not even in part: the page is a shared server, and what answered may be any
    service its operator listed; its words stay on that server (its own log has them).
    """
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    detail = reason
    if 300 <= status < 400:
        head = f"the server answered with a redirect (HTTP {status}); redirects are not followed"
    elif status in (401, 403):
        head = f"the server refused the request (HTTP {status}): check the API key"
    elif status == 404:
        head = "HTTP 404: the server has no such path or model (check the base URL, the API and the model name)"
    elif 400 <= status < 500:
        head = f"the server rejected the request (HTTP {status})"
    else:
        head = f"the server failed (HTTP {status})"
    return head + (f": {detail}" if detail else "")


def request_body(spec: EndpointSpec, prompt: str, extras: bool, max_tokens: int | None = None,
                 stream: bool = True) -> dict:
    """The JSON body of one request. ``extras``: add vLLM/SGLang's ``ignore_eos``, ``min_tokens`` and
    ``continuous_usage_stats`` (per-chunk usage) so every request yields exactly ``output_tokens``."""
    n = spec.output_tokens if max_tokens is None else max_tokens
    body: dict = {"model": spec.model, "max_tokens": n, "temperature": 0.0, "seed": spec.seed}
    if spec.api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if extras:
        if spec.ignore_eos:
            body["ignore_eos"] = True
            body["min_tokens"] = n
        if stream:
            body["stream_options"]["continuous_usage_stats"] = True
    return body


def _chunk_text(chunk: dict, api: str) -> str:
    """Output text carried by one streamed chunk (completions: choices[0].text; chat: delta content,
    or reasoning_content for reasoning models)."""
    choices = chunk.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return ""
    c = choices[0]
    if api == "chat":
        delta = c.get("delta") or {}
        return (delta.get("content") or "") + (delta.get("reasoning_content") or delta.get("reasoning") or "")
    return c.get("text") or ""


async def stream_request(client, url: str, spec: EndpointSpec, body: dict, index: int = 0,
                         api_key: str | None = None, t_origin: float | None = None) -> RequestResult:
    """Send one streaming request and time its chunks; never raises for request failures.

    TTFT is taken at the first chunk with non-empty content (role-only and empty chunks skipped, SSE
    comments ``:`` skipped), each later content chunk appends one gap. Tokens per chunk come from
    the per-chunk usage when the server sends it, else 1; the total from the final usage chunk.

    Returns:
        RequestResult; ``ok`` False with ``error`` set on a refused connection, an HTTP error, a
        malformed or broken stream, a stall past ``stall_timeout_s``, no first byte within
        ``first_byte_timeout_s``, a response over ``max_response_bytes`` or the whole-request timeout.
    """
    import httpx

    res = RequestResult(index=index)
    headers = {"Accept": "text/event-stream"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    t0 = time.perf_counter()
    res.start_s = t0 - (t_origin if t_origin is not None else t0)
    n_bytes = 0
    last_usage_tokens = 0
    finished = continuous = False
    try:
        async with asyncio.timeout(spec.request_timeout_s):
            req = client.build_request("POST", url, json=body, headers=headers)
            try:
                resp = await asyncio.wait_for(client.send(req, stream=True), spec.first_byte_timeout_s)
            except asyncio.TimeoutError:
                raise EndpointError(f"no answer within {spec.first_byte_timeout_s:g} s (first-byte timeout)") from None
            try:
                if resp.status_code != 200:
                    data = b""
                    async for part in resp.aiter_bytes():
                        data += part
                        if len(data) > 65536:
                            break
                    raise EndpointError(_status_message(resp.status_code, data))
                lines = resp.aiter_lines()
                data_lines: list[str] = []
                done = False
                while not done:
                    wait = spec.first_byte_timeout_s if res.ttft_s is None else spec.stall_timeout_s
                    try:
                        line = await asyncio.wait_for(lines.__anext__(), wait)
                    except StopAsyncIteration:
                        line = None
                    except asyncio.TimeoutError:
                        what = ("no output within the first-byte timeout" if res.ttft_s is None else
                                "the stream stalled")
                        raise EndpointError(f"{what}: nothing received for {wait:g} s "
                                            f"after {res.chunks} content chunk(s)") from None
                    now = time.perf_counter()
                    if line is None:
                        if data_lines:
                            line = ""  # flush a last event without its blank line
                        else:
                            break
                    n_bytes += len(line) + 1
                    if n_bytes > spec.max_response_bytes:
                        raise EndpointError(f"the response exceeded {spec.max_response_bytes:,} bytes; stopped reading")
                    if line.startswith(":") or line.startswith("event:") or line.startswith("id:") \
                            or line.startswith("retry:"):
                        continue
                    if line.startswith("data:"):
                        data_lines.append(line[5:].lstrip(" "))
                        continue
                    if line.strip():
                        raise EndpointError("malformed stream: a line is not a server-sent event; is this an "
                                            "OpenAI-compatible streaming endpoint?")
                    if not data_lines:
                        continue
                    payload = "\n".join(data_lines)
                    data_lines = []
                    if payload.strip() == "[DONE]":
                        done = True
                        break
                    try:
                        chunk = json.loads(payload)
                    except ValueError:
                        raise EndpointError("malformed stream: an event is not JSON") from None
                    if not isinstance(chunk, dict):
                        raise EndpointError("malformed stream: an event is not a JSON object")
                    if chunk.get("error"):
                        raise EndpointError("the server reported an error mid-stream (its message is not shown)")
                    usage = chunk.get("usage")
                    text = _chunk_text(chunk, spec.api)
                    usage_tokens = None
                    if isinstance(usage, dict) and usage.get("completion_tokens") is not None:
                        usage_tokens = int(usage["completion_tokens"])
                        res.usage_reported = True
                        res.output_tokens = usage_tokens
                        if usage.get("prompt_tokens") is not None:
                            res.prompt_tokens = int(usage["prompt_tokens"])
                    choices = chunk.get("choices") or []
                    if not choices or any(isinstance(c, dict) and c.get("finish_reason") for c in choices):
                        finished = True  # a usage-only or finish_reason chunk: the answer is complete
                    if text:
                        # per-chunk usage (vLLM's continuous_usage_stats) only counts when every content chunk
                        # carries it; a usage that first appears on the last content chunk is the total
                        continuous = usage_tokens is not None and (res.chunks == 0 or continuous)
                        k = max(usage_tokens - last_usage_tokens, 1) if continuous else 1
                        if usage_tokens is not None:
                            last_usage_tokens = usage_tokens
                        if res.ttft_s is None:
                            res.ttft_s = now - t0
                        res.chunk_times_s.append(now - t0)
                        res.chunk_tokens.append(k)
                if not done and not finished:  # some servers (transformers serve) end without [DONE]
                    raise EndpointError(f"the stream ended before [DONE] after {res.chunks} content chunk(s) "
                                        "(the server closed the connection)")
            finally:
                await resp.aclose()
        if res.ttft_s is None:
            raise EndpointError("the stream carried no output text")
        res.e2e_s = res.chunk_times_s[-1]
        if not res.usage_reported:
            res.output_tokens = sum(res.chunk_tokens)
        res.ok = True
    except EndpointError as e:
        res.error = _redact(str(e), api_key)
    except TimeoutError:
        res.error = f"the request took longer than the whole-request timeout ({spec.request_timeout_s:g} s)"
    except httpx.ConnectError:
        res.error = "connection refused or host unreachable (is the server running at that address and port?)"
    except httpx.ConnectTimeout:
        res.error = f"no connection within {spec.connect_timeout_s:g} s (connect timeout)"
    except httpx.TimeoutException:
        res.error = f"the stream stalled: nothing received for {spec.stall_timeout_s:g} s"
    except (httpx.RemoteProtocolError, httpx.ReadError) as e:
        res.error = f"the connection broke mid-stream after {res.chunks} content chunk(s) ({type(e).__name__})"
    except httpx.HTTPError as e:
        res.error = _redact(f"HTTP client error: {type(e).__name__}", api_key)
    return res


# -- prompts of a chosen token length -------------------------------------------------------------------
def words_prompt(rng: np.random.Generator, n_words: int) -> str:
    """``n_words`` words drawn from ``WORDS`` (a distinct text per request: no prefix-cache hits)."""
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), size=max(n_words, 1)))


async def _post_capped(client, url: str, body: dict, headers: dict, spec: EndpointSpec) -> tuple[int, bytes]:
    """POST ``body`` and read the answer, at most ``spec.max_response_bytes`` of it, within the first-byte
    timeout; returns (status, body bytes).

    Raises:
        EndpointError: the answer is larger than the cap or does not come in time.
    """
    async def go():
        async with client.stream("POST", url, json=body, headers=headers) as r:
            data = b""
            async for part in r.aiter_bytes():
                data += part
                if len(data) > spec.max_response_bytes:
                    raise EndpointError(f"the response exceeded {spec.max_response_bytes:,} bytes; stopped reading")
            return r.status_code, data
    try:
        return await asyncio.wait_for(go(), spec.first_byte_timeout_s)
    except asyncio.TimeoutError:
        raise EndpointError(f"no answer within {spec.first_byte_timeout_s:g} s while sizing the prompt") from None


async def count_prompt_tokens(client, base: str, spec: EndpointSpec, prompt: str, headers: dict,
                              use_tokenize: bool) -> tuple[int, bool]:
    """Prompt tokens the server counts for ``prompt``: its ``/tokenize`` endpoint (vLLM, SGLang) when
    ``use_tokenize``, else the ``usage.prompt_tokens`` of a one-token request. Returns (count, used_tokenize).

    Raises:
        EndpointError: neither way gives a count.
    """
    if use_tokenize:
        try:
            body = ({"model": spec.model, "messages": [{"role": "user", "content": prompt}]} if spec.api == "chat"
                    else {"model": spec.model, "prompt": prompt})
            status, data = await _post_capped(client, base + "/tokenize", body, headers, spec)
            if status == 200:
                j = json.loads(data)
                if isinstance(j, dict) and isinstance(j.get("count"), int):
                    return j["count"], True
        except (EndpointError, ValueError):  # no tokenizer endpoint: fall back to usage
            pass
    status, data = await _post_capped(client, base + APIS[spec.api],
                                      request_body(spec, prompt, False, max_tokens=1, stream=False), headers, spec)
    if status != 200:
        raise EndpointError("while sizing the prompt: " + _status_message(status, data))
    try:
        return int(json.loads(data)["usage"]["prompt_tokens"]), False
    except (ValueError, KeyError, TypeError):
        raise EndpointError("the server reports no usage.prompt_tokens, so prompt lengths cannot be sized") from None


async def calibrate_prompt_words(client, base: str, spec: EndpointSpec, headers: dict,
                                 max_tries: int = 8) -> tuple[int, int, str]:
    """Number of words whose prompt the server counts as ``spec.prompt_tokens`` tokens.

    The count is affine in the words (template + BOS tokens + about one token per common word), so a
    secant search on the server's own count converges in a few requests. Returns (n_words, tokens
    counted at n_words, a note on how it was measured).

    Raises:
        EndpointError: the target is below the prompt template's own tokens, or no count is available.
    """
    rng = np.random.default_rng(spec.seed + 7919)
    target = spec.prompt_tokens
    base_words = words_prompt(rng, 2 * target + 16).split()
    use_tok = True

    async def count(n: int) -> int:
        nonlocal use_tok
        while n > len(base_words):
            base_words.extend(words_prompt(rng, target + 16).split())
        c, use_tok = await count_prompt_tokens(client, base, spec, " ".join(base_words[:n]), headers, use_tok)
        return c

    n0 = max(target // 2, 1)
    c0 = await count(n0)
    n1 = max(n0 + (target - c0), 1)
    if n1 == n0:
        return n0, c0, _how(use_tok)
    c1 = await count(n1)
    tries = 2
    best = min(((n0, c0), (n1, c1)), key=lambda p: abs(p[1] - target))
    while best[1] != target and tries < max_tries:
        slope = (c1 - c0) / (n1 - n0) if n1 != n0 else 1.0
        slope = slope if slope > 0 else 1.0
        n2 = max(int(round(n1 + (target - c1) / slope)), 1)
        if n2 in (n0, n1):
            n2 = n1 + (1 if c1 < target else -1)
        if n2 < 1:
            break
        c2 = await count(n2)
        tries += 1
        n0, c0, n1, c1 = n1, c1, n2, c2
        best = min((best, (n2, c2)), key=lambda p: abs(p[1] - target))
        if c2 > target and n2 == 1:
            break
    if best[1] > target and best[0] == 1:
        raise EndpointError(f"a one-word prompt is already {best[1]} tokens at this endpoint (its template and "
                            f"special tokens): ask for at least {best[1]} prompt tokens")
    return best[0], best[1], _how(use_tok)


def _how(used_tokenize: bool) -> str:
    return ("prompt length sized with the server's /tokenize endpoint" if used_tokenize
            else "prompt length sized from the usage.prompt_tokens of one-token requests")


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
