"""The HTTP side of an endpoint measurement: request bodies, one streamed request timed chunk by chunk,
prompts of a chosen token length (``/tokenize`` where the server has it, else calibrated by word count).

Redirects are never followed, every request has connect / first-byte / stall / whole-request timeouts,
a response is capped in bytes, and the API key travels only in the Authorization header (never in a
result or an error message: ``_redact``).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import replace
from http import HTTPStatus

import numpy as np

from .endpoint_spec import APIS, EndpointError, EndpointSpec
from .endpoint_metrics import RequestResult


#: Words the prompts are drawn from: common English words, most of which are one token in BPE vocabularies.
WORDS = tuple("""the of and to in is was for on that with as by at from his it an were are which this be
has had not or but its have one new first their after who also two they been her she all there time
other may into year more during most over only between some years world when him made than would
city three state later then such used can under about known where while both through up being many
part around before out these three early since well because each four season team work life music
film game group house school army river water road line point name side long power found form end
area people family number place country series found small high people system""".split())


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
        detail = HTTPStatus(status).phrase
    except ValueError:
        detail = ""
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
    try:
        async with asyncio.timeout(spec.request_timeout_s):
            req = client.build_request("POST", url, json=body, headers=headers)
            try:
                resp = await asyncio.wait_for(client.send(req, stream=True), spec.first_byte_timeout_s)
            except asyncio.TimeoutError:
                raise EndpointError(f"no answer within {spec.first_byte_timeout_s:g} s (first-byte timeout)") from None
            try:
                if resp.status_code != 200:
                    raise await _status_error(resp)
                counter = _ChunkCounter(res, spec.api, t0)
                done = False
                async with contextlib.aclosing(_sse_payloads(resp, spec, res)) as events:
                    async for payload, now in events:
                        if payload is None:
                            done = True
                        else:
                            counter.add(payload, now)
                if not done and not counter.finished:  # some servers (transformers serve) end without [DONE]
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
    except (EndpointError, TimeoutError, httpx.HTTPError) as e:
        res.error = _failure_message(e, spec, res, api_key)
    return res


async def _status_error(resp) -> EndpointError:
    """The error of a response whose HTTP status is not 200, from its status and the first 64 KiB of its body."""
    data = b""
    async for part in resp.aiter_bytes():
        data += part
        if len(data) > 65536:
            break
    return EndpointError(_status_message(resp.status_code, data))


async def _sse_payloads(resp, spec: EndpointSpec, res: RequestResult):
    """Yield ``(payload, arrival time)`` per server-sent event of ``resp``'s body (its ``data:`` lines joined),
    then ``(None, time)`` at ``[DONE]`` and stop; stop too when the body ends.

    Comments and ``event:``/``id:``/``retry:`` lines are skipped; a last event without its blank line counts.
    The wait for a line is ``first_byte_timeout_s`` until ``res`` has its first token, ``stall_timeout_s`` after.

    Raises:
        EndpointError: a wait past its timeout, a body over ``max_response_bytes``, a line that is not a
            server-sent event.
    """
    lines = resp.aiter_lines()
    data_lines: list[str] = []
    n_bytes = 0
    while True:
        wait = spec.first_byte_timeout_s if res.ttft_s is None else spec.stall_timeout_s
        try:
            line = await asyncio.wait_for(lines.__anext__(), wait)
        except StopAsyncIteration:
            line = None
        except asyncio.TimeoutError:
            what = "no output within the first-byte timeout" if res.ttft_s is None else "the stream stalled"
            raise EndpointError(f"{what}: nothing received for {wait:g} s "
                                f"after {res.chunks} content chunk(s)") from None
        now = time.perf_counter()
        if line is None:
            if not data_lines:
                return
            line = ""  # flush a last event without its blank line
        n_bytes += len(line) + 1
        if n_bytes > spec.max_response_bytes:
            raise EndpointError(f"the response exceeded {spec.max_response_bytes:,} bytes; stopped reading")
        if line.startswith((":", "event:", "id:", "retry:")):
            continue
        if line.startswith("data:"):
            data_lines.append(line[5:].lstrip(" "))
            continue
        if line.strip():
            raise EndpointError("malformed stream: a line is not a server-sent event; is this an "
                                "OpenAI-compatible streaming endpoint?")
        if not data_lines:
            continue
        payload, data_lines = "\n".join(data_lines), []
        if payload.strip() == "[DONE]":
            yield None, now
            return
        yield payload, now


class _ChunkCounter:
    """Reads a stream's JSON chunks into a ``RequestResult``: TTFT at the first chunk with content, one gap per
    later content chunk, tokens per chunk from per-chunk usage when every content chunk carries it (else 1), the
    totals from the usage chunk; ``finished`` once a usage-only or finish_reason chunk arrived."""

    def __init__(self, res: RequestResult, api: str, t0: float):
        self.res, self.api, self.t0 = res, api, t0
        self.finished = self.continuous = False
        self.last_usage_tokens = 0

    def add(self, payload: str, now: float) -> None:
        """Count one event's payload received at ``now`` (perf_counter seconds).

        Raises:
            EndpointError: a payload that is not a JSON object, or one carrying the server's error.
        """
        res = self.res
        try:
            chunk = json.loads(payload)
        except ValueError:
            raise EndpointError("malformed stream: an event is not JSON") from None
        if not isinstance(chunk, dict):
            raise EndpointError("malformed stream: an event is not a JSON object")
        if chunk.get("error"):
            raise EndpointError("the server reported an error mid-stream (its message is not shown)")
        usage = chunk.get("usage")
        text = _chunk_text(chunk, self.api)
        usage_tokens = None
        if isinstance(usage, dict) and usage.get("completion_tokens") is not None:
            usage_tokens = int(usage["completion_tokens"])
            res.usage_reported = True
            res.output_tokens = usage_tokens
            if usage.get("prompt_tokens") is not None:
                res.prompt_tokens = int(usage["prompt_tokens"])
        choices = chunk.get("choices") or []
        if not choices or any(isinstance(c, dict) and c.get("finish_reason") for c in choices):
            self.finished = True  # a usage-only or finish_reason chunk: the answer is complete
        if text:
            # per-chunk usage (vLLM's continuous_usage_stats) only counts when every content chunk
            # carries it; a usage that first appears on the last content chunk is the total
            self.continuous = usage_tokens is not None and (res.chunks == 0 or self.continuous)
            k = max(usage_tokens - self.last_usage_tokens, 1) if self.continuous else 1
            if usage_tokens is not None:
                self.last_usage_tokens = usage_tokens
            if res.ttft_s is None:
                res.ttft_s = now - self.t0
            res.chunk_times_s.append(now - self.t0)
            res.chunk_tokens.append(k)


def _failure_message(e: Exception, spec: EndpointSpec, res: RequestResult, api_key: str | None) -> str:
    """The words a user reads for a request that failed with ``e`` (an EndpointError, the whole-request
    TimeoutError or an httpx error), the API key blanked out."""
    import httpx

    if isinstance(e, EndpointError):
        return _redact(str(e), api_key)
    if isinstance(e, TimeoutError):
        return f"the request took longer than the whole-request timeout ({spec.request_timeout_s:g} s)"
    if isinstance(e, httpx.ConnectError):
        return "connection refused or host unreachable (is the server running at that address and port?)"
    if isinstance(e, httpx.ConnectTimeout):
        return f"no connection within {spec.connect_timeout_s:g} s (connect timeout)"
    if isinstance(e, httpx.TimeoutException):
        return f"the stream stalled: nothing received for {spec.stall_timeout_s:g} s"
    if isinstance(e, (httpx.RemoteProtocolError, httpx.ReadError)):
        return f"the connection broke mid-stream after {res.chunks} content chunk(s) ({type(e).__name__})"
    return _redact(f"HTTP client error: {type(e).__name__}", api_key)


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
