"""The class deployment: two Streamlit processes behind nginx (deploy/serve_class.py), and its configs.

Needs Debian's nginx (``bash .ci/run`` installs it); the browser part needs chromium too. Skipped with
the way to install them where they are missing.
"""
import ast
import copy
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
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
         "monthly_bill": "onthly bill", "live": "ive", "workloads": "tiered prefix cache",
         "measured": "Against published measurements", "poll": "predict, then reveal"}


def test_config_names_every_upstream_and_rejects_a_bad_one(tmp_path):
    text = serve_class.render_config(["127.0.0.1:8601", "10.0.0.3:8601"], "8080", tmp_path)
    assert "server 127.0.0.1:8601 max_fails=1 fail_timeout=5s;" in text and "server 10.0.0.3:8601 " in text
    assert not [line for line in text.splitlines() if "@" in line.split("#")[0]]   # every field filled
    # the body limit is the app's own upload limit (.streamlit/config.toml says maxUploadSize = 8)
    assert "client_max_body_size 8m;" in text and serve_class.upload_limit_mb() == 8
    assert "limit_conn per_client 512;" in text and "worker_rlimit_nofile 65536;" in text
    text = serve_class.render_config(["127.0.0.1:8601"], "8080", tmp_path, conn_per_client=40, body_mb=9)
    assert "limit_conn per_client 40;" in text and "client_max_body_size 9m;" in text
    with pytest.raises(ValueError, match="conn_per_client"):
        serve_class.render_config(["127.0.0.1:8601"], "8080", tmp_path, conn_per_client=0)
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


def test_upload_limit_is_read_from_the_streamlit_config(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[server]\nmaxUploadSize = 12\n")
    assert serve_class.upload_limit_mb(cfg) == 12
    cfg.write_text("[server]\nheadless = true\n")
    assert serve_class.upload_limit_mb(cfg) == 200                # Streamlit's default
    cfg.write_text("[server]\nmaxUploadSize = 0\n")
    with pytest.raises(ValueError, match="maxUploadSize"):
        serve_class.upload_limit_mb(cfg)


def test_the_open_file_limit_is_raised_for_the_processes_started_after():
    code = ("import resource, sys; sys.path.insert(0, 'deploy'); import serve_class; "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (512, resource.getrlimit(resource.RLIMIT_NOFILE)[1])); "
            "want = min(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]); "
            "print(serve_class.raise_nofile_limit(want) == want == resource.getrlimit(resource.RLIMIT_NOFILE)[0])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def test_supervised_process_is_started_again_after_it_exits_with_a_growing_pause():
    started = []

    def start():
        started.append(subprocess.Popen([sys.executable, "-c", "pass"]))
        return started[-1]
    child = serve_class.Supervised("test process", start)
    started[-1].wait()
    child.check(now=100.0)                 # exited: restart due at 101 s
    assert child.proc is None and len(started) == 1
    child.check(now=100.5)
    assert len(started) == 1
    child.check(now=101.0)
    assert len(started) == 2 and child.restarts == 1
    started[-1].wait()
    child.check(now=101.5)                 # failed again at once: the pause doubles (restart at 103.5 s)
    child.check(now=103.4)
    assert len(started) == 2
    child.check(now=103.5)
    assert len(started) == 3 and child.restarts == 2
    started[-1].wait()


def test_kubernetes_example_is_valid_against_the_kubernetes_api_schemas():
    """Every object of the Kubernetes example validates, strictly (no unknown field), against Kubernetes' own
    OpenAPI schemas of 1.31 (bundled by kubernetes-validate; no cluster here). A misspelt field such as
    ``readinesProbe`` or a probe without a handler fails here instead of in a lecture hall."""
    import kubernetes_validate
    docs = [d for d in yaml.safe_load_all((ROOT / "deploy/kubernetes/explorer.yaml").read_text()) if d]
    assert len(docs) == 4
    for doc in docs:
        kubernetes_validate.validate(doc, "1.31.0", strict=True)
    # and the check can fail: the same Deployment with one misspelt probe field is refused
    bad = copy.deepcopy(next(d for d in docs if d["kind"] == "Deployment"))
    container = bad["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, "1.31.0", strict=True)


def test_kubernetes_example_has_the_app_a_sticky_service_and_a_cookie_ingress():
    docs = {d["kind"]: d for d in yaml.safe_load_all((ROOT / "deploy/kubernetes/explorer.yaml").read_text())}
    assert {"Deployment", "Service", "Ingress", "Secret"} <= set(docs)
    dep, svc, ing = docs["Deployment"], docs["Service"], docs["Ingress"]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"] == labels and svc["spec"]["selector"] == labels
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"
    assert container["livenessProbe"]["httpGet"]["path"] == "/_stcore/health"       # a hung process is restarted
    assert dep["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    annotations = ing["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-body-size"] == f"{serve_class.upload_limit_mb()}m"
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


def test_every_start_path_runs_the_app_with_two_malloc_arenas():
    # glibc's tunable MALLOC_ARENA_MAX=2 for the Streamlit processes, however the deployment starts them
    # (the reason is in deploy/serve_class.py, APP_MALLOC_ARENA_MAX)
    env = serve_class.app_environment(7, base={"PATH": "/bin"})
    assert env == {"PATH": "/bin", "LLM_EXPLORER_MAX_SESSIONS": "7", "MALLOC_ARENA_MAX": "2"}
    assert serve_class.app_environment(7, base={"MALLOC_ARENA_MAX": "4"})["MALLOC_ARENA_MAX"] == "4"  # operator's
    with pytest.raises(ValueError, match="at least 1"):
        serve_class.app_environment(0)
    assert serve_class.app_environment(3)["MALLOC_ARENA_MAX"] == os.environ.get("MALLOC_ARENA_MAX", "2")
    assert "\nEnvironment=MALLOC_ARENA_MAX=2\n" in (ROOT / "deploy/systemd/llm-explorer@.service").read_text()
    assert "\nENV MALLOC_ARENA_MAX=2\n" in (ROOT / "deploy/Dockerfile").read_text()
    compose = yaml.safe_load((ROOT / "deploy/docker-compose.yml").read_text())["services"]
    assert all(compose[a]["environment"]["MALLOC_ARENA_MAX"] == "2" for a in compose if a != "proxy")
    docs = {d["kind"]: d for d in yaml.safe_load_all((ROOT / "deploy/kubernetes/explorer.yaml").read_text())}
    container = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert {e["name"]: e.get("value") for e in container["env"]}["MALLOC_ARENA_MAX"] == "2"


def test_every_start_path_runs_asgi_py(monkeypatch):
    # asgi.py serves app.py and writes the server's base URL into the page: a deep link (/kv_cache) then asks
    # nothing under its own path (tests/test_asgi.py, tests/test_browser_deep_link.py). Every way the
    # project starts the app goes through it.
    started = []
    monkeypatch.setattr(serve_class.subprocess, "Popen", lambda cmd, **kw: started.append(cmd))
    serve_class.start_streamlit(8611, "127.0.0.1")
    (cmd,) = started
    assert cmd[1:5] == ["-m", "streamlit", "run", "asgi.py"] and cmd[cmd.index("--server.port") + 1] == "8611"
    run = "python3 -m streamlit run asgi.py"
    assert run in (ROOT / "README.md").read_text()
    assert "streamlit run app.py" not in (ROOT / "README.md").read_text().split("```")[1]   # the install block
    assert "ExecStart=/usr/bin/python3 -m streamlit run asgi.py --server.port %i" in \
        (ROOT / "deploy/systemd/llm-explorer@.service").read_text()
    assert 'CMD ["python", "-m", "streamlit", "run", "asgi.py",' in (ROOT / "deploy/Dockerfile").read_text()
    # compose's app containers and the Kubernetes pods run the image's command (no command of their own)
    compose = yaml.safe_load((ROOT / "deploy/docker-compose.yml").read_text())["services"]
    assert all("command" not in compose[a] for a in compose if a != "proxy")
    docs = {d["kind"]: d for d in yaml.safe_load_all((ROOT / "deploy/kubernetes/explorer.yaml").read_text())}
    container = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert "command" not in container and "args" not in container
    # nginx no longer rewrites the page: the app's own line is the only one
    assert "sub_filter" not in (ROOT / "deploy/nginx.conf.template").read_text()
    # the browser tests' server and the load benchmarks' plain server (read, not imported: no chromium needed)
    for path, name in [("tests/browsertest.py", "start_app"), ("bench/ws_load.py", "start_plain")]:
        fn = next(n for n in ast.parse((ROOT / path).read_text()).body if getattr(n, "name", "") == name)
        assert ast.literal_eval(fn.args.defaults[-1]) == "asgi.py", path


def test_serve_class_starts_its_processes_with_that_environment(monkeypatch):
    # the quick path, up to its first process: what serve_class.main hands start_streamlit
    class Started(Exception):
        pass

    def fake_start(port, address, env=None, **_):
        seen.append((port, env))
        raise Started

    seen = []
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.setattr(serve_class, "start_streamlit", fake_start)
    monkeypatch.setattr(serve_class, "raise_nofile_limit", lambda n: n)        # leave this process's limit
    monkeypatch.setattr(serve_class.signal, "signal", lambda *a: None)         # and its signal handlers
    with pytest.raises(Started):
        serve_class.main(["--no-proxy", "--procs", "1", "--first-port", "8611", "--max-sessions", "9"])
    (port, env), = seen
    assert port == 8611 and env["MALLOC_ARENA_MAX"] == "2" and env["LLM_EXPLORER_MAX_SESSIONS"] == "9"


def _unit(name: str):
    import configparser
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read_string((ROOT / "deploy/systemd" / name).read_text())
    return unit


def test_systemd_units_restart_every_process_for_ever_with_room_for_connections():
    app, proxy, target = _unit("llm-explorer@.service"), _unit("llm-explorer-nginx.service"), _unit("llm-explorer.target")
    for unit in (app, proxy):
        assert unit["Service"]["Restart"] == "always"
        assert unit["Unit"]["StartLimitIntervalSec"] == "0"                       # never gives up
        assert int(unit["Service"]["LimitNOFILE"]) >= 65536
    assert "--server.port %i" in app["Service"]["ExecStart"]
    assert "\nEnvironment=LLM_EXPLORER_MAX_SESSIONS=100\n" in (ROOT / "deploy/systemd/llm-explorer@.service").read_text()
    # the nginx unit writes its config for the two instances the target starts
    assert "--procs 2 --first-port 8601" in proxy["Service"]["ExecStartPre"]
    assert target["Unit"]["Wants"].split() == ["llm-explorer@8601.service", "llm-explorer@8602.service",
                                               "llm-explorer-nginx.service"]


def test_compose_restarts_each_container_and_the_proxy_names_each_app():
    compose = yaml.safe_load((ROOT / "deploy/docker-compose.yml").read_text())
    services = compose["services"]
    assert all(s["restart"] == "always" for s in services.values())
    apps = [n for n in services if n != "proxy"]
    command = services["proxy"]["command"]
    assert [command[i + 1] for i, c in enumerate(command) if c == "--upstream"] == [f"{a}:8501" for a in apps]
    assert all(services[a]["ulimits"]["nofile"]["soft"] >= 65536 for a in apps)


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
    _CLASS.update(pid=proc.pid, ports=(first, first + 1))
    try:
        serve_class.wait_healthy(url, timeout_s=120)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


_CLASS: dict = {}   # the serve_class.py process of the fixture: pid, the Streamlit ports


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


@pytest.mark.browser
def test_a_deep_link_through_the_proxy_asks_nothing_under_the_pages_path(class_url, page):
    """Streamlit's frontend looks for its server under the page's path first (/kv_cache/_stcore/health and
    /kv_cache/_stcore/host-config: 404s in the console) unless index.html names the base URL; the processes'
    asgi.py does, once, through the proxy too. The page still draws (over the websocket), and the menu still
    switches pages."""
    assert _get(class_url + "/kv_cache", headers={"Accept": "text/html"})[2].count(b"BACKEND_BASE_URL") == 1
    failed, console = [], []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.goto(f"{class_url}/kv_cache?kv_ctx=16K")
    page.locator("h1").filter(has_text="KV cache bill").first.wait_for(timeout=60_000)
    assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == class_url + "/"
    assert page.locator("[data-testid=stSidebarNav]").get_by_text("Decode and the roofline").count() == 1
    page.locator("[data-testid=stSidebarNav]").get_by_text("Decode and the roofline").click()
    page.locator("h1").filter(has_text="Decode and the roofline").first.wait_for(timeout=60_000)
    assert page.url.split("?")[0] == f"{class_url}/roofline"
    page.goto(f"{class_url}/roofline")               # a second deep link, straight in
    page.locator("h1").filter(has_text="Decode and the roofline").first.wait_for(timeout=60_000)
    assert not [f for f in failed if "_stcore" in f], failed
    assert not [c for c in console if "404" in c], console


def test_a_body_over_the_upload_limit_is_refused_by_nginx_before_it_is_sent(class_url):
    """413 on the headers alone: the 9 MB body (over the app's 8 MB) is never sent, and nginx does not wait for it."""
    host, port = class_url.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.putrequest("PUT", "/_stcore/upload_file/session/widget")
    conn.putheader("Content-Type", "application/octet-stream")
    conn.putheader("Content-Length", str(9 * 2 ** 20))
    conn.endheaders()                                       # no body follows
    resp = conn.getresponse()                               # within the 10 s timeout, not after a body timeout
    assert resp.status == 413
    conn.close()


def _streamlit_pid(port: int) -> int:
    """The pid of the Streamlit child of the fixture's serve_class.py listening on ``port``."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cmd = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == _CLASS["pid"] and b"streamlit" in cmd and str(port).encode() in cmd:
                return int(d)
    raise AssertionError(f"no Streamlit process on port {port}")


def test_a_killed_process_is_restarted_and_its_students_are_served_by_the_other_meanwhile(class_url):
    """Runs last: kills one of the two Streamlit processes (SIGKILL, as a crash would)."""
    dead, alive = _CLASS["ports"]
    # a browser whose cookie hashes to the process about to die
    for i in range(200):
        cookie = {"Cookie": f"explorer_route=student{i}"}
        if _get(class_url + "/", headers=cookie)[1]["X-Explorer-Upstream"].endswith(f":{dead}"):
            break
    else:
        raise AssertionError("no cookie hashed to the first process in 200 tries")
    old = _streamlit_pid(dead)
    os.kill(old, signal.SIGKILL)
    time.sleep(0.3)
    with pytest.raises(OSError):                              # the process is gone: its port refuses
        urllib.request.urlopen(f"http://127.0.0.1:{dead}/_stcore/health", timeout=2)
    # during the gap: the same student's requests answer 200 from the survivor
    status, headers, _ = _get(class_url + "/", headers=cookie)
    assert status == 200 and headers["X-Explorer-Upstream"].endswith(f":{alive}")
    assert _get(class_url + "/_stcore/health", headers=cookie)[0] == 200
    # restarted without anyone doing anything, on the same port
    serve_class.wait_healthy(f"http://127.0.0.1:{dead}", timeout_s=90)
    assert _streamlit_pid(dead) != old
    assert _get(class_url + "/", headers=cookie)[0] == 200
