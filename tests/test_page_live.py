"""AppTest of the Live measurement page with a tiny model: widgets -> worker subprocess -> table, charts.

The page is seeded through the URL (its keys are bound to query parameters): a pasted tiny Llama
config (2 layers, hidden 32) and one-point sweeps, so the whole run takes seconds on 2 cores.
"""
import json
import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
import pagetest
from ui.formats import fmt_seconds

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/live.py"
TINY = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 128, "max_position_embeddings": 256}
SMALL = dict(lv_src="config.json", lv_cfg=json.dumps(TINY), lv_prompts="8, 16", lv_pbatch="2", lv_pprompt="8",
             lv_dbatch="1, 2", lv_dctx="16", lv_dctxs="16", lv_steps="2", lv_reps="2", lv_warm="1", lv_newtok="4")


EQ_LABELS = ("Machine roofline", "vs machine roofline", "Calibrated prediction", "vs calibrated", "Decode bandwidth",
             "Critical batch")


def _eq_tail(latex: str) -> str:
    """What follows the last '=' of a filled-in equation, as a metric prints it ("1.23x", "4.5 %", "1.20 ms")."""
    tail = latex.replace(r"\end{aligned}", "").strip().strip("$").rsplit("=", 1)[1].strip()
    tail = tail.replace("{,}", ",").replace(r"\times", "x").replace(r"\,\mu\text{s}", " µs")
    return re.sub(r"\\,\\text\{\\?(.*?)\}", r" \1", tail).strip()


def open_page(**query) -> AppTest:
    return pagetest.open_page(PAGE, timeout=90, **query)


def frame_with(at, column):
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert found, f"no table with a {column!r} column"
    return found[0]


@pytest.fixture(scope="module", autouse=True)
def stop_worker_after():
    yield
    st.cache_resource.clear()  # on_release stops the worker subprocess


def test_page_opens_without_running_anything():
    at = open_page()
    assert at.radio(key="lv_src").value == "preset"
    assert at.selectbox(key="lv_model").value == "smollm2-135m"
    assert not at.dataframe  # nothing measured yet
    assert any("Run measurement" in i.value for i in at.info)


def test_garbage_url_values_fall_back_to_defaults():
    at = open_page(lv_dev="tpu", lv_dtype="fp64", lv_steps="abc", lv_src="nonsense", lv_model="gpt-9")
    assert not at.exception and not at.error
    assert at.radio(key="lv_dev").value == "cpu" and at.radio(key="lv_dtype").value == "auto"
    assert at.number_input(key="lv_steps").value == 4 and at.radio(key="lv_src").value == "preset"
    assert at.selectbox(key="lv_model").value == "smollm2-135m"


def test_bad_sweep_text_is_an_error_not_a_traceback():
    at = open_page(lv_prompts="32,-5,abc", lv_dbatch="0,1e9")
    assert not at.exception
    # one message naming every bad entry of every field: -5 and 'abc' in the prompts, 0 and '1e9' in the batches
    assert len(at.error) == 1
    msg = at.error[0].value
    for bad in ("prompt lengths: -5 is outside 1..131072", "prompt lengths: 'abc' is not a whole number",
                "decode batches: 0 is outside 1..4096", "decode batches: '1e9' is not a whole number"):
        assert bad in msg, msg
    assert at.text_input(key="lv_prompts").value == "32,-5,abc"  # the user's text is kept
    assert at.text_input(key="lv_dbatch").value == "0,1e9"
    assert at.button(key="lv_run").disabled


def test_another_sessions_run_is_announced_on_open_without_starting_one(monkeypatch):
    from live.worker import JobState, LiveWorker

    other = JobState(job_id=7, owner="someone-else", state="running", fraction=0.25,
                     message="TPOT vs batch: decode at batch 16", what="smollm2-135m (preset, random weights), fp32 on cpu, 13 points")
    monkeypatch.setattr(LiveWorker, "current", lambda self: other)
    submitted = []
    monkeypatch.setattr(LiveWorker, "submit", lambda self, *a, **k: submitted.append(a))
    at = open_page()
    text = " ".join(i.value for i in at.info)
    assert "started by another session" in text and "smollm2-135m (preset, random weights)" in text
    assert "decode at batch 16" in text and "25%" in text
    assert not submitted and "_lv_job" not in at.session_state



def test_another_processes_run_names_no_pid_and_no_stale_prompt(monkeypatch):
    from live.worker import JobState, LiveWorker

    other = JobState(job_id=3, owner="", state="running", fraction=0.5, message="decode B = 4", what="run A",
                     pid=4644)
    monkeypatch.setattr(LiveWorker, "current", lambda self: None)
    monkeypatch.setattr(LiveWorker, "running_for_other", lambda self, owner: other)
    monkeypatch.setattr(LiveWorker, "submit", lambda self, *a, **k: pytest.fail("nothing may start"))
    at = open_page()
    text = " ".join(i.value for i in at.info)
    assert "another server process on this machine" in text
    assert "4644" not in text and "pid" not in text
    # One notice: how to queue behind that run, not also the idle "Press Run measurement. The defaults ..." prompt.
    assert len(at.info) == 1 and "The defaults" not in text

def test_tiny_model_run_shows_measured_table_and_charts():
    at = open_page(**SMALL)
    at.button(key="lv_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    table = frame_with(at, "ratio_calibrated")
    # 2 prompt lengths + 1 prefill batch + 2 decode batches + 1 decode context = 6 points
    assert len(table) == 6
    assert set(table["sweep"]) == {"prompt_len", "prefill_batch", "decode_batch", "decode_context"}
    assert (table["median_s"] > 0).all()
    # decode at context 16 with 2 timed steps reads 16 + 2 cached tokens per sequence
    assert set(table.loc[table["phase"] == "decode", "seq_len"]) == {18}
    kv = frame_with(at, "calc_bytes")
    # tiny Llama: 2 layers x 2 KV heads x head_dim 8 x (K and V) x 4 bytes = 256 B per token;
    # prefill of 16 tokens at batch 1 = 4096 B
    row = kv[(kv["phase"] == "prefill") & (kv["tokens"] == 16) & (kv["batch"] == 1)].iloc[0]
    assert row["measured_bytes"] == 4096 and row["calc_bytes"] == 4096
    charts = pagetest.figures(at)
    assert len(charts) == 5  # four sweeps + the ratio chart
    specs = {c["layout"]["meta"]["sweep"]: c for c in charts}
    tpot = specs["decode_batch"]
    assert tpot["layout"]["yaxis"]["title"]["text"] == "TPOT (ms per step)"
    measured = [t for t in tpot["data"] if t["name"].startswith("measured")][0]
    assert list(measured["x"]) == [1, 2]
    # decode markers sit at the p10 of the steps; hollow exactly where the table marks the point unreliable
    dec = table[table["sweep"] == "decode_batch"].sort_values("batch")
    assert pagetest.plotly_values(measured["y"]) == pytest.approx((dec["p10_s"] * 1e3).tolist())
    assert list(measured["marker"]["symbol"]) == ["circle-open" if u else "circle" for u in dec["unreliable"]]
    assert any("Load average (1 min)" in c.value for c in at.caption)
    line = [t for t in tpot["data"] if t["name"].startswith("critical batch")]
    assert len(line) == 1 and line[0]["x"][0] == line[0]["x"][1] > 0  # the critical batch, a vertical line
    assert any("random weights" in m.value for m in at.markdown)
    # what the calibrated prediction is made of: the parts add up to the sum row
    parts = frame_with(at, "share_pct").set_index("part")
    total = parts.loc["calibrated prediction (sum)", "time_s"]
    summed = parts[~parts.index.str.startswith(("calibrated prediction", "measured"))]["time_s"].sum()
    assert summed == pytest.approx(total)
    kernels = frame_with(at, "bytes_per_s")
    assert (kernels["bytes_per_s"] > 0).all() and "lm_head 128x32" in set(kernels["layers"])
    # One click takes this machine's measured decode bandwidth utilisation to the roofline page's estimate.
    bw = [m for m in at.metric if m.label == "Decode bandwidth"][0]
    pct = min(100, max(1, round(float(bw.value.split()[0]))))
    [link] = [p for p in at.get("page_link") if p.proto.label.startswith("Use ")]
    assert link.proto.label == f"Use {pct}% as MBU" and link.proto.query_string == f"mbu={pct}"
    # The equations behind the headline, filled in with this run's numbers, end with the metrics shown.
    at.session_state["equations"] = True
    at.run()
    assert not at.exception, at.exception
    # live_rows' order, after the page's two symbolic formulas at its top
    eqs = dict(zip(EQ_LABELS, [x.value for x in at.latex[2:]], strict=True))
    shown = {m.label: m.value for m in at.metric}
    assert _eq_tail(eqs["vs machine roofline"]) == shown["vs machine roofline"]
    assert _eq_tail(eqs["vs calibrated"]) == shown["vs calibrated"]
    assert _eq_tail(eqs["Decode bandwidth"]) == shown["Decode bandwidth"]
    assert _eq_tail(eqs["Critical batch"]) == shown["Critical batch"]
    # the roofline ends with the table's machine prediction at the batch-1 decode point (context 16 + 2 steps),
    # and its W is the probed read bandwidth the page shows
    d1 = dec[dec["batch"] == 1].iloc[0]
    assert _eq_tail(eqs["Machine roofline"]) == fmt_seconds(d1["pred_machine_s"])
    assert shown["Read bandwidth (W)"].split()[0].replace(",", "{,}") in eqs["Decode bandwidth"]
    # measured / machine: the two times in the fraction are the table's, the quotient within rounding
    assert fmt_seconds(d1["reported_s"]).split()[0] in eqs["vs machine roofline"]
    assert float(shown["vs machine roofline"].rstrip("x")) == pytest.approx(d1["reported_s"] / d1["pred_machine_s"],
                                                                             abs=0.005)


def test_quick_mode_submits_the_classroom_sweeps(monkeypatch):
    from live.run_spec import QUICK_SWEEPS
    from live.worker import LiveWorker

    submitted = []

    def submit(self, spec, owner=""):
        submitted.append(spec)
        return 99

    monkeypatch.setattr(LiveWorker, "submit", submit)
    monkeypatch.setattr(LiveWorker, "job", lambda self, job_id: None)
    at = open_page(lv_mode="quick")
    at.button(key="lv_run").click().run()
    assert not at.exception
    [spec] = submitted
    # 2 prompt lengths + 2 prefill batches + 2 decode batches + 2 contexts = 8 points, not the full run's 13
    assert spec.quick and spec.n_points == 8 and spec.prompt_lens == (32, 128) and spec.decode_batches == (1, 8)
    assert spec.describe().endswith("8 points (quick)") and QUICK_SWEEPS["repeats"] == 3
    # the full run keeps the sweep sizes typed in the page
    submitted.clear()
    at = open_page(lv_mode="full", lv_dbatch="1, 2")
    at.button(key="lv_run").click().run()
    assert not submitted[0].quick and submitted[0].decode_batches == (1, 2)


def test_reprobe_button_measures_the_machine_now_and_says_when():
    import time as _time

    before = _time.time()
    at = open_page()
    at.button(key="lv_reprobe").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [ok] = [s.value for s in at.success if s.value.startswith("Probe taken at")]
    # a read bandwidth and a matmul rate, both positive figures with units, and the wall-clock time it was taken
    assert "/s" in ok and "read bandwidth" in ok and "fp32 matmul" in ok
    job = at.session_state["_lv_probe"]
    assert job.state == "done" and job.result["probe"]["taken_at"] >= before
    assert job.result["probe"]["read_bytes_per_s"] > 0 and "model" not in job.result
    assert not at.dataframe  # no run: nothing measured


# -- a run that stops early: cancelled mid-sweep, cancelled before any point, failed mid-sweep ------------
class _Stop(RuntimeError):
    """Stands for a failure inside the measurement (an out-of-memory, a driver error)."""


def _stopped_result(monkeypatch, when: str, how: str):
    """Run the page's spec in this process and stop it at the first progress message containing ``when``,
    by a cancel (``how="cancel"``) or a failure (``how="fail"``); returns (state, result, error)."""
    from live.runner import LiveSession
    from live.worker import LiveWorker

    submitted = []
    monkeypatch.setattr(LiveWorker, "submit", lambda self, spec, owner="": submitted.append(spec) or 7)
    monkeypatch.setattr(LiveWorker, "job", lambda self, job_id: None)
    at = open_page(**SMALL)
    at.button(key="lv_run").click().run()
    [spec] = submitted
    seen = []

    def cancelled():
        if not any(when in m for m in seen):
            return False
        if how == "fail":
            raise _Stop("the device failed")
        return True
    try:
        result = LiveSession().run(spec, progress=lambda f, m: seen.append(m), cancelled=cancelled)
        return at, "cancelled", result, None
    except _Stop as e:
        return at, "error", e.partial_result, f"RuntimeError: {e}"


def _show(monkeypatch, at, state, result, error):
    from live.worker import JobState, LiveWorker
    job = JobState(job_id=7, state=state, result=result, error=error, message=state)
    monkeypatch.setattr(LiveWorker, "job", lambda self, job_id: job)
    at.session_state["_lv_job"] = 7
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_run_cancelled_mid_sweep_shows_the_points_measured_so_far(monkeypatch):
    # SMALL plans 6 points x 2 rounds; the cancel comes as round 2 starts: every point has its first round
    at, state, result, error = _stopped_result(monkeypatch, "run 2 of 2", "cancel")
    assert result["cancelled"] and len(result["points"]) == 6
    at = _show(monkeypatch, at, state, result, error)
    assert any("Cancelled: the points measured before the cancel are shown" in w.value for w in at.warning)
    table = frame_with(at, "ratio_calibrated")
    assert len(table) == 6 and set(table["sweep"]) == {"prompt_len", "prefill_batch", "decode_batch",
                                                        "decode_context"}
    # the cancel is seen before the second repetition of round 2: one point has both rounds, the five others one
    # of two, flagged with the reason
    stopped = table["reasons"].str.contains("the run stopped after 1 of 2 rounds")
    assert stopped.sum() == 5 and table.loc[stopped, "unreliable"].all()


def test_a_run_cancelled_before_any_point_says_so_and_the_page_stays_usable(monkeypatch):
    at, state, result, error = _stopped_result(monkeypatch, "calibrating", "cancel")
    assert result["cancelled"] and result["points"] == []
    at = _show(monkeypatch, at, state, result, error)
    assert any("Cancelled before any point was measured" in w.value for w in at.warning)
    assert not [d for d in at.dataframe if "ratio_calibrated" in d.value.columns]
    assert not at.button(key="lv_run").disabled                  # a new run can start


def test_a_run_that_fails_mid_sweep_shows_the_error_and_the_points_before_it(monkeypatch):
    at, state, result, error = _stopped_result(monkeypatch, "run 2 of 2", "fail")
    at = _show(monkeypatch, at, state, result, error)
    assert "The run failed: RuntimeError: the device failed" in at.error[0].value
    assert "points measured before it are shown" in at.error[0].value
    assert len(frame_with(at, "ratio_calibrated")) == 6


def _window_warnings(at) -> list[str]:
    return [w.value for w in at.warning if "Beyond the model's window" in w.value]


def test_a_context_past_the_trained_window_is_flagged():
    # SmolLM2-135M (the default preset) was trained for 8,192 tokens (max_position_embeddings): the default sweeps
    # (contexts up to 2,048) draw no warning; a TPOT sweep at 16,384 does, naming the limit.
    assert not _window_warnings(open_page())
    warned = _window_warnings(open_page(lv_dctxs="128, 16384"))
    assert len(warned) == 1 and "8,192" in warned[0] and "SmolLM2-135M" in warned[0]
    # a page of measurements says what its timings are there, not the arithmetic pages' "a cache that long"
    assert warned[0].endswith("The run would time a context that long: its timings there are of the architecture's "
                              "shapes, not of a model trained for that length.")
    assert "arithmetic" not in warned[0]
    # a pasted config's own window: TINY's max_position_embeddings is 256, a 512-token prompt is past it
    warned = _window_warnings(open_page(**{**SMALL, "lv_prompts": "8, 512"}))
    assert len(warned) == 1 and "256" in warned[0]
