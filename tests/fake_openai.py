"""A scripted OpenAI-compatible streaming server for the endpoint tests (a child process; asyncio, raw HTTP/1.1 with
keep-alive, loopback).

Every streamed request gets its first token after ``ttft_s`` and each later token ``gap_s`` after the
previous one, as server-sent events ending in a usage chunk and ``data: [DONE]``, so the client's
TTFT, TPOT and ITL have known true values. ``behaviour`` scripts failures:

- "ok": as above; "two": the third content chunk carries two tokens (per-chunk usage says so);
- "break": the connection closes after ``break_after`` chunks; "500": HTTP 500 with a JSON error;
- "stall": after ``break_after`` chunks nothing more is sent (the connection stays open);
- "reject_extras": HTTP 400 when the body has ``ignore_eos`` (like a server without vLLM's extras);
- "redirect": HTTP 307 to this server's ``/followed`` (recorded if a client follows it); "garbage": a line that is not an SSE event.

``/tokenize`` counts one token per word plus one (a BOS token); a non-streamed completion returns
the same count in ``usage.prompt_tokens``. The server records each request's headers, body, the
``time.perf_counter()`` when it was read (``received_s``) and when each content chunk was written
(``sent_s``): the true timings, late sleeps included, that the client's figures must track.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


class FakeOpenAI:
    """The scripted server in a child process (so its timers do not share a GIL with the client under test).

    ``with FakeOpenAI(...) as srv``: ``srv.base_url``; ``srv.requests`` fetches the server's records.
    """

    def __init__(self, ttft_s=0.08, gap_s=0.015, behaviour="ok", break_after=3, tokenize=True):
        self.args = ["--ttft", str(ttft_s), "--gap", str(gap_s), "--behaviour", behaviour,
                     "--break-after", str(break_after)] + ([] if tokenize else ["--no-tokenize"])

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *self.args],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdout.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[dict]:
        with urllib.request.urlopen(self.base_url + "/_records", timeout=10) as r:
            return json.loads(r.read())


class Server:
    def __init__(self, ttft_s, gap_s, behaviour, break_after, tokenize):
        self.ttft_s, self.gap_s, self.behaviour, self.break_after = ttft_s, gap_s, behaviour, break_after
        self.tokenize = tokenize
        self.requests: list[dict] = []

    async def serve(self):
        self._stall = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        print(self.port, flush=True)
        async with server:
            await server.serve_forever()

    # -- HTTP
    async def _handle(self, reader, writer):
        try:
            while True:  # keep-alive: requests on one connection until the client closes it
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                req = json.loads(body) if body else {}
                if path == "/_records":
                    await self._json(writer, "200 OK", self.requests)
                    continue
                rec = {"path": path, "headers": headers, "body": req, "received_s": time.perf_counter(), "sent_s": []}
                self.requests.append(rec)
                if await self._route(path, req, writer, rec) == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def _json(self, writer, status, obj, extra=""):
        data = json.dumps(obj).encode()
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                     f"{extra}\r\n".encode() + data)
        await writer.drain()

    async def _route(self, path, req, writer, rec):
        if self.behaviour == "redirect":
            return await self._json(writer, "307 Temporary Redirect", {}, f"Location: {self.base_url}/followed\r\n")
        if path == "/tokenize":
            if not self.tokenize:
                return await self._json(writer, "404 Not Found", {"detail": "Not Found"})
            text = req.get("prompt") or req["messages"][0]["content"]
            return await self._json(writer, "200 OK", {"count": len(text.split()) + 1})
        if path not in ("/v1/completions", "/v1/chat/completions"):
            return await self._json(writer, "404 Not Found", {"detail": "Not Found"})
        chat = path.endswith("chat/completions")
        text = req["messages"][0]["content"] if chat else req["prompt"]
        prompt_tokens = len(text.split()) + 1
        if not req.get("stream"):
            return await self._json(writer, "200 OK", {"choices": [{"text": "x"}], "usage": {
                "prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": prompt_tokens + 1}})
        if self.behaviour == "500":
            return await self._json(writer, "500 Internal Server Error", {"error": {"message": "engine died"}})
        if self.behaviour == "reject_extras" and "ignore_eos" in req:
            return await self._json(writer, "400 Bad Request", {"error": {"message": "unknown field ignore_eos"}})
        return await self._stream(req, writer, chat, prompt_tokens, rec["sent_s"])

    async def _stream(self, req, writer, chat, prompt_tokens, sent):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")

        async def send(text: str):
            data = text.encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()

        n = int(req["max_tokens"])
        continuous = bool((req.get("stream_options") or {}).get("continuous_usage_stats"))
        per_chunk = [1] * n
        if self.behaviour == "two" and n >= 4:
            per_chunk = [1, 1, 2] + [1] * (n - 4)
        if chat:  # a role-only first delta, as chat servers send
            await send('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n')
        await send(": keep-alive comment\n\n")
        await asyncio.sleep(self.ttft_s)
        done = 0
        for i, k in enumerate(per_chunk):
            if i:
                await asyncio.sleep(self.gap_s)
            if i == self.break_after and self.behaviour == "break":
                writer.transport.abort()
                return "close"
            if i == self.break_after and self.behaviour == "stall":
                await self._stall.wait()
                return "close"
            if i == self.break_after and self.behaviour == "garbage":
                await send("this is not an event\n\n")
                continue
            done += k
            word = " tok" * k
            choice = {"index": 0, "delta": {"content": word}} if chat else {"index": 0, "text": word}
            chunk = {"choices": [choice]}
            if continuous:
                chunk["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": done,
                                  "total_tokens": prompt_tokens + done}
            await send("data: " + json.dumps(chunk) + "\n\n")
            sent.append(time.perf_counter())
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": done, "total_tokens": prompt_tokens + done}
        await send("data: " + json.dumps({"choices": [], "usage": usage}) + "\n\n")
        await send("data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--ttft", type=float)
    ap.add_argument("--gap", type=float)
    ap.add_argument("--behaviour")
    ap.add_argument("--break-after", type=int)
    ap.add_argument("--no-tokenize", action="store_true")
    a = ap.parse_args()
    asyncio.run(Server(a.ttft, a.gap, a.behaviour, a.break_after, not a.no_tokenize).serve())
