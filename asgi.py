"""The app's server entry: ``python3 -m streamlit run asgi.py`` serves app.py (the Streamlit script) through
Streamlit's ASGI app (``st.App``) with one middleware, :class:`BackendBaseUrl`.

Why: opened by its URL (``/kv_cache``), a page of a plain ``streamlit run app.py`` logs two 404s in the browser's
console, ``/kv_cache/_stcore/health`` and ``/kv_cache/_stcore/host-config``: Streamlit's frontend does not know
under which path its server is mounted, so it asks under the page's path first, then under the root (Streamlit
issue #7074). It asks only the server's own path when the page defines ``window.__streamlit.BACKEND_BASE_URL``;
the middleware writes that line into the HTML page, with the configured ``server.baseUrlPath``.

``streamlit run`` finds ``app`` below (an ``st.App`` assignment) and serves it with uvicorn, reading the same
command-line flags and .streamlit/config.toml as for ``streamlit run app.py`` (port, address, upload limit,
XSRF, base path). ``streamlit run app.py`` still works; it only keeps those two harmless 404s on a deep link.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import pkgutil

import streamlit as st
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from streamlit import cli_util, config
from streamlit.logger import get_logger

from ui import run_lock

#: Environment variable: "0" serves a process's script runs all at once (Streamlit's way) instead of one at a time.
RUN_LOCK_ENV = "LLM_EXPLORER_RUN_LOCK"
#: Where the line goes: right after the page's opening ``<head>`` (before Streamlit's own script tags).
HEAD_TAG = b"<head>"


def backend_base_url_script(base_url_path: str | None) -> bytes:
    """The ``<script>`` that names the app's server to Streamlit's frontend: ``location.origin`` followed by
    ``base_url_path`` between slashes (``""`` -> origin + "/", ``"explorer"`` or ``"/explorer/"`` ->
    origin + "/explorer/"), as UTF-8 bytes. Other fields of an existing ``window.__streamlit`` are kept."""
    parts = [p for p in (base_url_path or "").split("/") if p]
    path = "/" + "".join(p + "/" for p in parts)
    return ("<script>window.__streamlit=Object.assign(window.__streamlit||{},"
            f"{{BACKEND_BASE_URL:location.origin+{json.dumps(path)}}})</script>").encode()


class BackendBaseUrl:
    """Pure ASGI middleware: writes :func:`backend_base_url_script` into each HTML page the app serves (the
    single-page app's index.html, for ``/`` and for any page path), right after ``<head>``, once.

    Only HTTP responses with status 200, ``Content-Type: text/html`` and no ``Content-Encoding`` are changed:
    their ``Content-Length`` grows by the script's length and an ``ETag`` becomes weak (the body differs from
    the file's, with the same meaning). A request that accepts HTML (a browser's navigation) is passed on
    without ``Accept-Encoding``, so that Streamlit does not gzip the page before the middleware sees it; any
    other request (JavaScript, JSON, uploads) and every websocket and lifespan message pass through
    untouched. A body sent in several messages is collected until its last one (index.html is ~6 kB).
    ``base_url_path``: the server's base path; None reads ``server.baseUrlPath`` from Streamlit's config
    on each request (so a config reload is seen).
    """

    def __init__(self, app, base_url_path: str | None = None):
        self.app = app
        self.base_url_path = base_url_path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "text/html" in Headers(scope=scope).get("accept", ""):
            scope = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"])
            if "http.response.pathsend" in scope.get("extensions", {}):   # a file sent by path: no body to edit
                scope["extensions"] = {k: v for k, v in scope["extensions"].items() if k != "http.response.pathsend"}
        head_only = scope.get("method") == "HEAD"
        state = {"start": None, "body": []}

        async def send_wrapper(message):
            if message["type"] == "http.response.start":
                headers = Headers(raw=message.get("headers", []))
                if (message["status"] == 200 and headers.get("content-type", "").lower().startswith("text/html")
                        and headers.get("content-encoding", "identity").lower() == "identity"):
                    state["start"] = message           # held until the body is known
                    return
                await send(message)
                return
            if message["type"] != "http.response.body" or state["start"] is None:
                await send(message)
                return
            state["body"].append(message.get("body", b""))
            if message.get("more_body", False):
                return
            # the script is built for an HTML page only, not for every request the server answers
            base = self.base_url_path if self.base_url_path is not None else config.get_option("server.baseUrlPath")
            script = backend_base_url_script(base)
            body = b"".join(state["body"])
            if not head_only:
                body = body.replace(HEAD_TAG, HEAD_TAG + script, 1) if HEAD_TAG in body else script + body
            start, state["start"] = state["start"], None
            headers = MutableHeaders(raw=list(start.get("headers", [])))
            if "content-length" in headers:
                headers["content-length"] = str(int(headers["content-length"]) + len(script) if head_only else len(body))
            if "etag" in headers and not headers["etag"].startswith("W/"):
                headers["etag"] = "W/" + headers["etag"]
            await send(dict(start, headers=headers.raw))
            await send({"type": "http.response.body", "body": body, "more_body": False})

        await self.app(scope, receive, send_wrapper)


#: The packages whose modules the pages import, loaded at start so that their objects can be frozen (``live`` is
#: left out: it imports torch, which only the live page needs, and loads it on that page's first visit).
PRELOAD_PACKAGES = ("calc", "ui", "course", "classroom")


def freeze_startup_heap(packages=PRELOAD_PACKAGES) -> int:
    """Import every module of ``packages``, collect garbage once, then move every object the garbage collector
    tracks into its permanent generation (``gc.freeze``); returns how many objects that froze.

    Why: a full collection (generation 2) walks every tracked object. With pandas, Plotly, Streamlit and the
    calc core loaded that is about 240,000 objects, and each full collection holds the interpreter lock for
    about 100 ms, during which no student of the process is served. Modules, classes and functions live as long
    as the process, so nothing is lost by never walking them again: frozen, a full collection walks only what the
    sessions created. Measured with ``bench/bench_pages.py`` (four pages, 20 random slider moves each, two runs
    of each kind): CPU per random move 74 -> 61 ms, time in full collections 770 -> 380 ms. Garbage created
    later is collected as before; only what exists at the freeze is exempt.
    Source: Python's ``gc.freeze`` documentation ("to avoid ... collections ... for objects that are
    long-lived").
    Raises:
        ImportError: a module of ``packages`` does not import (the app would fail on that page too).
    """
    for name in packages:
        package = importlib.import_module(name)
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{name}.{module.name}")
    gc.collect()
    before = gc.get_freeze_count()
    gc.freeze()
    return gc.get_freeze_count() - before


@contextlib.asynccontextmanager
async def server_log(_app):
    """The two lines ``streamlit run app.py`` writes to its log and ``st.App`` under ``streamlit run`` does not:
    "Uvicorn server started on ADDRESS:PORT" (Streamlit's logger, at start) and "Stopping..." (at shutdown).
    The address is the one Streamlit binds (``::`` for the default address), read with Streamlit's own
    helpers; where those are not there (another Streamlit version) only the port is written. Before the first
    line, the app's modules are imported and frozen (:func:`freeze_startup_heap`), so a process is ready when it
    says it started, and its script runs are served one at a time (ui/run_lock.py; ``LLM_EXPLORER_RUN_LOCK=0``
    turns that off)."""
    if os.environ.get(RUN_LOCK_ENV, "1").strip() != "0":
        run_lock.install()
    freeze_startup_heap()
    logger = get_logger("streamlit.web.server.starlette.starlette_server")
    try:
        from streamlit.web.server.starlette import starlette_server as server
        address = server._get_bind_address(server._get_server_address())
    except (ImportError, AttributeError):
        address = config.get_option("server.address") or ""
    logger.info("Uvicorn server started on %s:%s", address, config.get_option("server.port"))
    yield None
    cli_util.print_to_cli("  Stopping...", fg="blue")


app = st.App("app.py", middleware=[Middleware(BackendBaseUrl)], lifespan=server_log)
