"""The per-process cap on browser sessions (ui/session_cap.py): past it, "the class server is full"."""
import asyncio
import os
import signal

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.testing.v1 import AppTest

from ui import session_cap
from deploy.serve_class import free_port, start_streamlit, wait_healthy
from tests.pagetest import APP


@pytest.fixture(autouse=True)
def _empty():
    session_cap._admitted.clear()
    yield
    session_cap._admitted.clear()


def test_the_setting_defaults_to_100_and_refuses_nonsense():
    assert session_cap.max_sessions({}) == 100
    assert session_cap.max_sessions({"LLM_EXPLORER_MAX_SESSIONS": " 7 "}) == 7
    for bad in ("0", "-3", "many", "2.5"):
        with pytest.raises(ValueError, match="LLM_EXPLORER_MAX_SESSIONS"):
            session_cap.max_sessions({"LLM_EXPLORER_MAX_SESSIONS": bad})


def test_admits_up_to_the_cap_keeps_the_admitted_and_frees_the_places_of_the_gone():
    active = {"a", "b", "c"}
    assert session_cap.admit("a", active.__contains__, 2)
    assert session_cap.admit("b", active.__contains__, 2)
    assert not session_cap.admit("c", active.__contains__, 2)      # third of a cap of 2
    assert session_cap.admit("a", active.__contains__, 2)          # admitted stays admitted
    active.discard("b")                                            # b closed its tab
    assert session_cap.admit("c", active.__contains__, 2)
    assert not session_cap.admit("d", active.__contains__, 2)


def test_a_session_past_the_cap_sees_the_full_page_and_nothing_else(monkeypatch):
    monkeypatch.setenv("LLM_EXPLORER_MAX_SESSIONS", "2")
    session_cap._admitted.update({"s1", "s2"})
    monkeypatch.setattr(session_cap, "_runtime_check", lambda: ("s3", lambda sid: True))
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert [t.value for t in at.title] == ["The class server is full"]
    assert "2 students" in at.markdown[0].value
    assert [b.label for b in at.button] == ["Try again"]
    assert not at.sidebar.selectbox                                # no page ran
    session_cap._admitted.discard("s1")                            # one leaves: "Try again" lets s3 in
    at.button[0].click().run()
    assert not at.exception and not [t for t in at.title if t.value == "The class server is full"]


# -- on a real server: two websocket sessions against a cap of one ------------------------------------
async def _visit(url: str) -> tuple[object, list[str]]:
    """Open a session on ``url``, run the home page once; returns the open socket and the texts drawn."""
    import websockets

    ws = await websockets.connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                  origin=url, max_size=None, open_timeout=60, ping_interval=None)
    m = BackMsg()
    m.rerun_script.query_string = ""
    m.rerun_script.page_script_hash = ""
    await ws.send(m.SerializeToString())
    texts = []
    while True:
        f = ForwardMsg()
        f.ParseFromString(await asyncio.wait_for(ws.recv(), timeout=90))
        if f.WhichOneof("type") == "script_finished":
            return ws, texts
        if f.WhichOneof("type") == "delta" and f.delta.WhichOneof("type") == "new_element":
            el = f.delta.new_element
            kind = el.WhichOneof("type")
            if kind in ("heading", "markdown"):
                texts.append(getattr(el, kind).body)


def test_on_a_real_server_the_second_session_past_a_cap_of_one_is_told_the_server_is_full():
    port = free_port()
    proc = start_streamlit(port, "127.0.0.1", quiet=True, new_session=True,
                           env=dict(os.environ, LLM_EXPLORER_MAX_SESSIONS="1"))
    url = f"http://127.0.0.1:{port}"

    async def scenario():
        first, seen1 = await _visit(url)
        second, seen2 = await _visit(url)
        await first.close()                              # the first student leaves
        await asyncio.sleep(1.0)
        third, seen3 = await _visit(url)                 # a reload takes the free place
        await second.close()
        await third.close()
        return seen1, seen2, seen3
    try:
        wait_healthy(url, timeout_s=90)
        seen1, seen2, seen3 = asyncio.run(scenario())
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert "The class server is full" not in seen1 and any("LLM Inference Explorer" in t for t in seen1)
    assert "The class server is full" in seen2 and not any("LLM Inference Explorer" in t for t in seen2)
    assert "The class server is full" not in seen3


def test_an_idle_process_collects_once_empties_once_and_again_only_after_the_next_run(monkeypatch):
    calls = []
    monkeypatch.setattr(session_cap.gc, "collect", lambda: calls.append("gc") or 0)
    monkeypatch.setattr(session_cap, "empty_idle", lambda: calls.append("empty"))
    monkeypatch.setattr(session_cap, "_last_run", [100.0, False, False])
    assert not session_cap.collect_if_idle(now=110.0, idle_s=20, empty_s=150)     # 10 s idle: too soon
    assert session_cap.collect_if_idle(now=121.0, idle_s=20, empty_s=150) and calls == ["gc"]
    assert not session_cap.collect_if_idle(now=200.0, idle_s=20, empty_s=150)     # collected, not yet 150 s idle
    assert session_cap.collect_if_idle(now=251.0, idle_s=20, empty_s=150)         # 151 s idle: empty, collect
    assert calls == ["gc", "empty", "gc"]
    assert not session_cap.collect_if_idle(now=900.0, idle_s=20, empty_s=150)     # nothing ran since: done
    session_cap._last_run[:] = [1000.0, False, False]                             # a script ran at 1000 s
    assert session_cap.collect_if_idle(now=1020.0, idle_s=20, empty_s=150) and calls[-1] == "gc"


def test_emptying_clears_the_shared_caches():
    from ui import caching
    cache = caching._cache_of(test_emptying_clears_the_shared_caches, 4, caching.MB)
    cache.put("k", "v" * 1000)
    caching.FIGURES.put("f", "x" * 100)
    assert caching.clear_all() >= 1100 and len(cache) == 0 and len(caching.FIGURES) == 0
