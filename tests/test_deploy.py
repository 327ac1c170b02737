"""The class deployment: two Streamlit processes behind nginx (deploy/serve_class.py), and its configs.

Needs Debian's nginx (``bash .ci/run`` installs it); the browser part needs chromium too. Skipped with
the way to install them where they are missing.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "deploy"))
import serve_class  # noqa: E402

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed: `apt-get install nginx` "
                                                      "(bash .ci/run does it)")
# url path -> text the page's script draws (others: the menu title)
PAGES = {"": "LLM Inference Explorer", "kv_cache": "KV cache", "roofline": "roofline", "latency_cost": "cost",
         "quantization": "Quantization", "batching": "atching", "speculative": "peculative",
         "monthly_bill": "onthly bill", "live": "ive"}


def test_config_names_every_upstream_and_rejects_a_bad_one(tmp_path):
    text = serve_class.render_config(["127.0.0.1:8601", "10.0.0.3:8601"], "8080", tmp_path)
    assert "server 127.0.0.1:8601" in text and "server 10.0.0.3:8601" in text
    assert "@" not in text.split("upstream explorer")[1].split("}")[0]   # every field filled
    with pytest.raises(ValueError, match="host:port"):
        serve_class.render_config(["10.0.0.3"], "8080", tmp_path)
    with pytest.raises(ValueError, match="at least one"):
        serve_class.render_config([], "8080", tmp_path)


@needs_nginx
def test_nginx_accepts_the_config_for_one_machine_and_for_several(tmp_path):
    for ups in (["127.0.0.1:8601", "127.0.0.1:8602"], ["10.0.0.2:8601", "10.0.0.2:8602", "10.0.0.3:8601"]):
        conf = serve_class.write_config(ups, "127.0.0.1:8080", tmp_path / str(len(ups)))  # nginx -t: no workers
        check = serve_class.check_config(conf)
        assert check.returncode == 0, check.stderr
        assert "syntax is ok" in check.stderr


def test_kubernetes_example_has_the_app_a_sticky_service_and_a_cookie_ingress():
    docs = {d["kind"]: d for d in yaml.safe_load_all((ROOT / "deploy/kubernetes/explorer.yaml").read_text())}
    assert {"Deployment", "Service", "Ingress", "Secret"} <= set(docs)
    dep, svc, ing = docs["Deployment"], docs["Service"], docs["Ingress"]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"] == labels and svc["spec"]["selector"] == labels
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"
    assert svc["spec"]["sessionAffinity"] == "ClientIP"
    assert ing["metadata"]["annotations"]["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    backend = ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == svc["metadata"]["name"]
    # the class poll: every pod reads one PostgreSQL database, its URL from the Secret
    env = {e["name"]: e for e in container["env"]}
    ref = env["EXPLORER_POLL_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == docs["Secret"]["metadata"]["name"]
    assert docs["Secret"]["stringData"][ref["key"]].startswith("postgresql+psycopg://")


def test_serve_class_passes_the_database_url_to_its_processes(monkeypatch):
    monkeypatch.setenv("EXPLORER_POLL_DATABASE_URL", "restored after the test")
    monkeypatch.setattr(serve_class, "check_config", lambda conf: subprocess.CompletedProcess([], 0, "", "ok"))
    url = "postgresql+psycopg://u@db.example:5432/class"
    assert serve_class.main(["--check", "--procs", "1", "--database-url", url]) == 0
    assert os.environ["EXPLORER_POLL_DATABASE_URL"] == url      # what the Streamlit processes inherit


@pytest.fixture(scope="module")
def class_url():
    """deploy/serve_class.py with two processes on free ports; yields the proxy's URL."""
    if NGINX is None:
        pytest.skip("nginx is not installed: `apt-get install nginx` (bash .ci/run does it)")
    port, first = serve_class.free_port(), serve_class.free_port()
    while first + 1 == port or not _port_free(first + 1):
        first = serve_class.free_port()
    proc = subprocess.Popen([sys.executable, "deploy/serve_class.py", "--procs", "2", "--port", str(port),
                             "--host", "127.0.0.1", "--first-port", str(first)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        serve_class.wait_healthy(url, timeout_s=120)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _get(url, opener=None, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with (opener or urllib.request.build_opener()).open(req, timeout=30) as r:
        return r.status, dict(r.headers), r.read()


def test_a_browser_session_stays_on_one_process_and_new_sessions_spread(class_url):
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    seen = {_get(class_url + "/kv_cache", opener)[1]["X-Explorer-Upstream"] for _ in range(6)}
    assert len(seen) == 1                      # one cookie, one process
    fresh = {_get(class_url + "/")[1]["X-Explorer-Upstream"] for _ in range(24)}
    assert len(fresh) == 2                     # new browsers spread over both (all on one: p = 2^-23)


def test_static_files_are_gzipped_and_cached_by_the_proxy(class_url):
    _, _, html = _get(class_url + "/")
    js = html.decode().split('src="./', 1)[1].split('"', 1)[0]
    assert js.startswith("static/") and js.endswith(".js")
    _, plain_headers, plain = _get(f"{class_url}/{js}")
    _, headers, body = _get(f"{class_url}/{js}", headers={"Accept-Encoding": "gzip"})
    assert headers.get("Content-Encoding") == "gzip"
    assert len(body) < len(plain) / 2          # minified JavaScript compresses 3x or more
    assert headers.get("X-Cache-Status") == "HIT"   # the first fetch above filled the proxy's cache


@pytest.mark.browser
def test_every_page_renders_in_a_browser_through_the_proxy(class_url, page):
    """Skipped where no chromium is installed (the fixtures; bash .ci/run installs it)."""
    upstreams = set()
    page.on("response", lambda r: upstreams.add(r.headers.get("x-explorer-upstream"))
            if r.request.resource_type == "document" else None)
    from ui.nav import PAGES as MENU
    paths = ["" if f.endswith("home.py") else Path(f).stem for f, *_ in MENU]
    for path in paths:
        heading = PAGES[path] if path in PAGES else {Path(f).stem: t for f, t, *_ in MENU}[path]
        page.goto(f"{class_url}/{path}")
        # Text drawn by the script run: only arrives over the proxied websocket.
        page.get_by_text(heading).first.wait_for(timeout=60_000)
    assert len(upstreams - {None}) == 1        # the whole visit on one process
