"""asgi.py, the app's server entry: its middleware writes the frontend's base URL into HTML pages only, once,
with a right Content-Length, and leaves everything else (JavaScript, JSON, websockets) as it was.

The middleware is tested on a small Starlette app that answers like Streamlit's server does (index.html for a
page path, gzip for whoever accepts it); the browser side (no 404 on a deep link) is tests/test_browser_deep_link.py.
"""
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parent.parent

# A page shaped like Streamlit's index.html: 3,000 bytes of padding so that gzip (minimum 500 bytes) applies.
PAGE = "<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <title>Streamlit</title>\n  </head>\n<body>" + \
       "x" * 3000 + "</body></html>"
JS = "console.log('<head>')\n" * 200     # contains the marker, in a file that is not HTML


@pytest.fixture(scope="module")
def asgi(request):
    """The asgi module, imported with Streamlit's process-wide main script path restored afterwards (st.App
    sets it when nothing has)."""
    from streamlit import config
    saved = config._main_script_path
    import asgi as module
    yield module
    config._main_script_path = saved


def _inner():
    async def page(request):
        return HTMLResponse(PAGE, headers={"ETag": '"abc"'})

    async def chunks(request):
        async def gen():
            yield PAGE[:40].encode()       # the <head> tag split over two messages
            yield PAGE[40:].encode()
        return StreamingResponse(gen(), media_type="text/html")

    async def script(request):
        return Response(JS, media_type="application/javascript")

    async def data(request):
        return JSONResponse({"html": "<head>"})

    async def error(request):
        return HTMLResponse("<html><head></head></html>", status_code=404)

    async def echo(ws):
        await ws.accept(subprotocol="streamlit")
        await ws.send_bytes(await ws.receive_bytes())
        await ws.close()

    routes = [Route("/chunks", chunks), Route("/static/index.js", script), Route("/_stcore/host-config", data),
              Route("/missing", error), WebSocketRoute("/_stcore/stream", echo), Route("/{path:path}", page)]
    return routes


def _client(asgi, base=None):
    app = Starlette(routes=_inner(), middleware=[Middleware(asgi.BackendBaseUrl, base_url_path=base),
                                                 Middleware(GZipMiddleware, minimum_size=500)])
    return TestClient(app)


BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8", "Accept-Encoding": "gzip, deflate"}


def test_the_script_names_the_origin_and_the_base_path_between_slashes(asgi):
    for base, path in [("", "/"), (None, "/"), ("/", "/"), ("explorer", "/explorer/"), ("/explorer/", "/explorer/"),
                       ("a/b", "/a/b/")]:
        assert f'BACKEND_BASE_URL:location.origin+"{path}"'.encode() in asgi.backend_base_url_script(base), base


@pytest.mark.parametrize("path", ["/", "/kv_cache", "/roofline"])
def test_a_page_gets_the_line_once_after_head_with_its_length(asgi, path):
    script = asgi.backend_base_url_script("")
    r = _client(asgi).get(path, headers=BROWSER)
    assert r.status_code == 200
    assert r.headers.get("content-encoding") is None      # the page was asked for without compression
    body = r.content
    assert body.count(b"BACKEND_BASE_URL") == 1
    assert body == PAGE.encode().replace(b"<head>", b"<head>" + script, 1)
    # the page's bytes plus the script's, 3,101 + 112 = 3,213 for an empty base path
    assert int(r.headers["content-length"]) == len(PAGE.encode()) + len(script) == len(body) == 3213
    assert r.headers["etag"] == 'W/"abc"'                 # the same meaning, not the same bytes


def test_a_base_path_is_written_into_the_page(asgi):
    r = _client(asgi, base="explorer").get("/kv_cache", headers=BROWSER)
    assert b'BACKEND_BASE_URL:location.origin+"/explorer/"' in r.content


def test_the_configured_base_path_is_read_from_streamlits_config(asgi, monkeypatch):
    from streamlit import config
    monkeypatch.setattr(config, "get_option", lambda name: "course/explorer" if name == "server.baseUrlPath" else None)
    r = _client(asgi).get("/kv_cache", headers=BROWSER)
    assert b'location.origin+"/course/explorer/"' in r.content


def test_a_body_in_several_messages_is_edited_whole(asgi):
    r = _client(asgi).get("/chunks", headers=BROWSER)
    assert r.content.count(b"BACKEND_BASE_URL") == 1
    assert r.content.startswith(PAGE[:PAGE.index("<head>") + 6].encode() + b"<script>")


def test_a_head_request_gets_the_length_the_page_would_have(asgi):
    r = _client(asgi).head("/kv_cache", headers=BROWSER)
    assert r.content == b""
    assert int(r.headers["content-length"]) == len(PAGE.encode()) + len(asgi.backend_base_url_script(""))


def test_javascript_json_and_error_pages_pass_untouched(asgi):
    c = _client(asgi)
    js = c.get("/static/index.js", headers={"Accept": "*/*", "Accept-Encoding": "gzip"})
    assert js.headers["content-encoding"] == "gzip"       # still compressed: only navigations are asked plain
    assert js.text == JS
    data = c.get("/_stcore/host-config", headers={"Accept": "*/*"})
    assert data.json() == {"html": "<head>"} and int(data.headers["content-length"]) == len(b'{"html":"<head>"}')
    missing = c.get("/missing", headers=BROWSER)
    assert missing.status_code == 404 and b"BACKEND" not in missing.content


def test_a_compressed_html_body_is_left_as_it_is(asgi):
    # an HTML page fetched without "text/html" in Accept (not a navigation) comes gzipped: not edited
    r = _client(asgi).get("/kv_cache", headers={"Accept": "*/*", "Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"
    assert r.text == PAGE                                 # httpx decompressed it: the file as it was


def test_a_websocket_passes_straight_through(asgi):
    with _client(asgi).websocket_connect("/_stcore/stream", subprotocols=["streamlit"]) as ws:
        assert ws.accepted_subprotocol == "streamlit"
        ws.send_bytes(b"\x00<head>\xff")
        assert ws.receive_bytes() == b"\x00<head>\xff"


def test_streamlit_run_finds_the_app_in_asgi_py(asgi):
    from streamlit.web.server.app_discovery import discover_asgi_app
    from streamlit.web.server.starlette.starlette_app import App
    found = discover_asgi_app(ROOT / "asgi.py")
    assert found.is_asgi_app and found.import_string == "asgi:app"   # `streamlit run asgi.py` serves it
    assert isinstance(asgi.app, App)
    assert asgi.app.script_path == Path("app.py")          # the Streamlit script stays app.py
    assert [m.cls for m in asgi.app._user_middleware] == [asgi.BackendBaseUrl]


def test_server_start_freezes_the_imported_heap():
    """The lifespan imports the pages' packages and freezes what the collector tracks, before it logs the start.

    Run in a fresh interpreter (a freeze is process-wide). Independent figures: a bare interpreter that imports
    calc, ui, course and classroom tracks well over 100,000 objects (pandas, Plotly and Streamlit's modules;
    about 180,000 on the machine this was written on), so the freeze must move at least 100,000; torch is not
    among them (only the live page loads it); and a full collection afterwards walks far fewer objects than
    were frozen (what is left is what was created after the freeze)."""
    import subprocess
    import sys
    code = (
        "import asyncio, gc, sys, asgi\n"
        "async def main():\n"
        "    async with asgi.server_log(None):\n"
        "        pass\n"
        "asyncio.run(main())\n"
        "print(gc.get_freeze_count(), len(gc.get_objects()), 'calc.serving' in sys.modules,\n"
        "      'ui.sidebar' in sys.modules, 'course.exercises' in sys.modules, 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    frozen, tracked, *flags = out.stdout.strip().splitlines()[-1].split()   # after "Stopping..."
    assert int(frozen) > 100_000
    assert int(tracked) < int(frozen) / 4
    assert flags == ["True", "True", "True", "False"]
