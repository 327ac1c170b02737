"""No call leaves the machine unless the user asks: pages and a live run with outbound connections blocked.

A child Python process gets a ``sitecustomize`` (on PYTHONPATH, so the measurement worker it spawns
gets it too) that replaces ``socket.connect``/``connect_ex``/``getaddrinfo``: loopback and Unix
sockets pass, anything else is refused before a packet is sent and written to a log. The child
opens pages with AppTest and runs one live measurement of a preset in the worker subprocess; the log
must show the guard installed in both processes and not one outbound attempt.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

GUARD = textwrap.dedent('''
    import json, os, socket

    _LOG = os.environ["NET_GUARD_LOG"]


    def _write(entry):
        with open(_LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\\n")


    def _local(addr):
        if not isinstance(addr, tuple):
            return True  # a Unix socket path
        host = str(addr[0])
        return host in ("localhost", "::1", "0.0.0.0", "") or host.startswith("127.")


    _connect, _connect_ex, _getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo


    def guarded_connect(self, addr):
        if self.family == getattr(socket, "AF_UNIX", None) or _local(addr):
            return _connect(self, addr)
        _write({"pid": os.getpid(), "blocked": "connect", "to": repr(addr)})
        raise OSError("outbound connection blocked by the test")


    def guarded_connect_ex(self, addr):
        if self.family == getattr(socket, "AF_UNIX", None) or _local(addr):
            return _connect_ex(self, addr)
        _write({"pid": os.getpid(), "blocked": "connect_ex", "to": repr(addr)})
        return 111


    def guarded_getaddrinfo(host, *args, **kwargs):
        if host is None or _local((host,)):
            return _getaddrinfo(host, *args, **kwargs)
        _write({"pid": os.getpid(), "blocked": "getaddrinfo", "to": str(host)})
        raise socket.gaierror("name lookup blocked by the test")


    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = (guarded_connect, guarded_connect_ex,
                                                                           guarded_getaddrinfo)
    _write({"pid": os.getpid(), "installed": True})
''')

DRIVER = textwrap.dedent('''
    import json, os, sys
    from streamlit.testing.v1 import AppTest

    app = os.path.join(os.getcwd(), "app.py")
    at = AppTest.from_file(app, default_timeout=120)
    at.run()
    for page in ("app_pages/kv_cache.py", "app_pages/live.py"):
        at.switch_page(page).run()
        assert not at.exception, [e.message for e in at.exception]

    from live.run_spec import RunSpec
    from live.worker import LiveWorker

    spec = RunSpec(preset_id="smollm2-135m", prompt_lens=(8,), prefill_batches=(1,), prefill_prompt_len=8,
                   decode_batches=(1,), decode_context_len=8, decode_contexts=(8,), decode_steps=2, repeats=1,
                   warmup=0, new_tokens=2, calibrate=False)
    worker = LiveWorker()
    try:
        state = worker.wait(worker.submit(spec, owner="outbound-test"), timeout_s=240)
    finally:
        worker.stop()
    print(json.dumps({"state": state.state if state else None, "error": state.error if state else None}))
''')


def test_pages_and_a_live_run_make_no_outbound_call(tmp_path):
    guard_dir = tmp_path / "guard"
    guard_dir.mkdir()
    (guard_dir / "sitecustomize.py").write_text(GUARD)
    log = tmp_path / "net.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(guard_dir), str(ROOT)]), NET_GUARD_LOG=str(log),
               OMP_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, "-c", DRIVER], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=420)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["state"] == "done", result
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    installed = {e["pid"] for e in entries if e.get("installed")}
    assert len(installed) >= 2, entries  # the driver and the measurement worker were both guarded
    blocked = [e for e in entries if "blocked" in e]
    assert blocked == [], blocked


@pytest.mark.browser
def test_the_browser_fetches_nothing_from_another_host(app_url, page):
    """Every request a visitor's browser makes for a page, the favicon included, goes to the app's own server.

    Skipped where no chromium is installed (the fixtures; bash .ci/run installs it).
    """
    url = app_url
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(url) or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    links = 0
    for path in ("", "kv_cache", "live"):
        page.goto(f"{url}/{path}?model=custom:![x](http://example.invalid/p.png) www.example.invalid")
        page.wait_for_selector("h1", timeout=60_000)
        page.wait_for_timeout(1500)
        # The link's text is shown, but as text: no link to it inside the app's own boxes (GFM autolinks).
        assert page.get_by_text("example.invalid/p.png", exact=False).count() >= 1
        links += page.locator("a[href*='example.invalid']").count()
    icon = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")
    assert icon and all(h.startswith(url) for h in icon), icon
    assert outside == [], outside
    assert links == 0
