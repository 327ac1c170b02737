"""What an endpoint measurement asks for (``EndpointSpec``) and which endpoints it may reach.

Safety (the dashboard is a shared server and must not become a proxy into its network): a base URL
must match the allow-list in the ``LLM_EXPLORER_ENDPOINT_ALLOW`` environment variable (or the
``endpoint_allow`` Streamlit secret); by default nothing, loopback included (a vLLM server beside the app
is listed as ``127.0.0.1:8000``). ``live.endpoint`` runs the
measurement; this module holds its limits and checks.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from urllib.parse import urlsplit




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
            raise ValueError("Concurrency levels must be whole numbers from 1 to 1,024; got "
                             + ", ".join(f"{c:,}" if isinstance(c, (int, float)) and not isinstance(c, bool) else repr(c)
                                         for c in self.concurrency) + ".")
        if self.mode == "rate" and any(not (isinstance(r, (int, float)) and 0 < r <= 10000 and math.isfinite(r))
                                       for r in self.request_rates_per_s):
            raise ValueError("Request rates must be above 0 and at most 10,000 requests/s; got "
                             + ", ".join(f"{r:,g}" if isinstance(r, (int, float)) and not isinstance(r, bool) else repr(r)
                                         for r in self.request_rates_per_s) + ".")
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
