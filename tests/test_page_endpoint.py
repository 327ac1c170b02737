"""AppTest of the live page's endpoint section: settings from the URL, a run against the scripted server, imports."""
import json

import pytest

import pagetest
from fake_openai import FakeOpenAI
from live.endpoint_predict import parallel_supported
from test_endpoint_results import vllm_result

PAGE = "app_pages/live.py"


def open_section(**query):
    return pagetest.open_page(PAGE, timeout=60, lv_target="an endpoint", **query)


def test_section_opens_from_the_url_without_contacting_anything():
    at = open_section(ep_levels="1, 2", ep_prompt="128")
    assert at.radio(key="lv_target").value == "an endpoint"
    assert at.text_input(key="ep_levels").value == "1, 2" and at.number_input(key="ep_prompt").value == 128
    assert any("Measure the endpoint" in i.value for i in at.info)
    assert not at.dataframe
    # the key is a password field and not bound to the URL
    assert at.text_input(key="ep_key").proto.type == at.text_input(key="ep_key").proto.PASSWORD


def test_a_host_outside_the_allow_list_is_refused_on_the_page(monkeypatch):
    monkeypatch.delenv("LLM_EXPLORER_ENDPOINT_ALLOW", raising=False)
    at = open_section(ep_url="http://10.20.30.40:8000", ep_model="m")
    assert len(at.error) == 1 and "LLM_EXPLORER_ENDPOINT_ALLOW" in at.error[0].value
    assert at.button(key="ep_run").disabled


class RecordingSocket:
    """A TCP listener on loopback that records every connection made to it (and answers none)."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        while not self._stop.is_set():
            try:
                conn, addr = self.sock.accept()
            except OSError:
                continue
            self.connections.append(addr)
            conn.close()

    def close(self):
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def test_an_unlisted_loopback_port_is_refused_on_the_page_without_being_contacted(monkeypatch):
    from live.endpoint import EndpointRefused, EndpointSpec, measure
    listed = RecordingSocket()      # the operator listed this one (say, vLLM)
    other = RecordingSocket()       # another service on the same machine
    try:
        monkeypatch.setenv("LLM_EXPLORER_ENDPOINT_ALLOW", f"127.0.0.1:{listed.port}")
        at = open_section(ep_url=f"http://127.0.0.1:{other.port}", ep_model="m", ep_levels="1", ep_n="1",
                          ep_warm="0")
        assert not at.exception and len(at.error) == 1
        assert f"127.0.0.1:{other.port} is not allowed" in at.error[0].value
        assert f"Currently allowed: 127.0.0.1:{listed.port}" in at.error[0].value
        assert at.button(key="ep_run").disabled
        with pytest.raises(EndpointRefused):            # the client itself checks before it connects
            measure(EndpointSpec(base_url=f"http://127.0.0.1:{other.port}", model="m", concurrency=(1,),
                                 requests_per_level=1))
        import time
        time.sleep(0.3)                                 # let the listener see anything that was on its way
        assert other.connections == [] and listed.connections == []
    finally:
        listed.close()
        other.close()


def test_bad_levels_are_a_message():
    at = open_section(ep_model="m", ep_levels="1, two, 4")
    assert not at.exception and "'two' not a number" in at.error[0].value
    at.text_input(key="ep_levels").set_value("1, x, -3, 0").run()  # every bad entry named at once
    assert "'x' not a number, '-3' not above 0, '0' not above 0" in at.error[0].value


def test_run_against_the_scripted_server_draws_measured_and_predicted():
    with FakeOpenAI(ttft_s=0.03, gap_s=0.01) as srv:
        at = open_section(ep_url=srv.base_url, ep_model="tiny", ep_levels="1, 2", ep_prompt="32", ep_out="4",
                          ep_n="3")
        at.text_input(key="ep_key").set_value("sk-page-secret")
        at.button(key="ep_run").click().run()
        assert not at.exception, at.exception
        assert srv.requests[-1]["headers"]["authorization"] == "Bearer sk-page-secret"
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    assert list(table["concurrency"]) == [1, 2] and list(table["requests_ok"]) == [3, 3]
    assert (table["ttft_ms_p50"] >= 29).all() and (table["tpot_ms_p50"] >= 9).all()
    # the prediction of the sidebar's model (Llama-3-8B on an H100 by default) sits beside every level
    assert table["pred_tpot_ms"].notna().all() and (table["ratio_tpot"] == table["tpot_ms_p50"] / table["pred_tpot_ms"]).all()
    names = {t.get("name") for f in pagetest.figures(at) for t in f["data"]}
    assert {"measured p50", "calc's roofline (lower bound)"} <= names
    assert "sk-page-secret" not in table.to_csv() and "sk-page-secret" not in json.dumps(dict(at.query_params))
    # this page's client sends one prompt length with a fixed output: the serving estimate takes each level as
    # lockstep waves of its 3 requests (3 / c rounds), and says so; varied lengths give another estimate
    assert at.radio(key="ep_lengths").value == "fixed"
    assert any("run of fixed lengths" in c.value and "1.5 at concurrency 2" in c.value for c in at.caption)
    from calc import get_accelerator, get_model
    from calc.serving import serving_estimate
    llama, h100 = get_model("llama-3-8b"), get_accelerator("h100-sxm")
    fixed = serving_estimate(llama, h100, 32, 4, concurrency=2, lengths="fixed", rounds=1.5)
    assert table.set_index("concurrency").loc[2, "est_ttft_ms"] == pytest.approx(fixed.ttft.estimate_s * 1e3)
    at.radio(key="ep_lengths").set_value("varied").run()
    assert not at.exception
    varied = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns).set_index("concurrency")
    other = serving_estimate(llama, h100, 32, 4, concurrency=2, lengths="varied", rounds=1.5)
    assert varied.loc[2, "est_ttft_ms"] == pytest.approx(other.ttft.estimate_s * 1e3)
    assert other.ttft.estimate_s != pytest.approx(fixed.ttft.estimate_s)
    assert any("run of varied lengths" in c.value and "3 at concurrency 1" in c.value for c in at.caption)


def test_import_of_vllm_result_files_draws_them_against_the_prediction():
    at = open_section(ep_src="a result file")
    assert any("Upload one or more result files" in i.value for i in at.info)
    # two `vllm bench serve --save-result` files as JSON lines: concurrency 1 and 4, 256 prompt + 64 output tokens
    text = "\n".join(json.dumps(vllm_result(c, 30.0 * c, 9.0 + c, 8.0, 700.0, detailed=True)) for c in (4, 1))
    at.text_area(key="ep_paste").set_value(text).run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    assert list(table["concurrency"]) == [1, 4] and list(table["ttft_ms_p50"]) == [30.0, 120.0]
    assert list(table["tpot_ms_p50"]) == [10.0, 13.0] and table["pred_ttft_ms"].notna().all()
    assert any("vllm bench serve" in c.value for c in at.caption)
    # the estimate says which engines it is fitted to, and what an eager Python server measured against it
    from ui.live_endpoint import EAGER_SERVER_CAVEAT
    assert EAGER_SERVER_CAVEAT in [c.value for c in at.caption] and "transformers serve" in EAGER_SERVER_CAVEAT
    # a vllm file gives p50 and p99, no p90: the chart's title says what its marks are
    assert "**TTFT against load** (p50 and p99: the file has no p90)" in [m.value for m in at.markdown]
    itl = [f for f in pagetest.figures(at) if any(t.get("type") == "histogram" for t in f["data"])]
    assert itl  # the detailed file's per-request itls give the ITL distribution
    # the TTFT chart's curve is the level's prompts prefilled at once (pred_ttft_ms), not called a lower bound
    ttft = next(f for f in pagetest.figures(at)
                if f["layout"].get("yaxis", {}).get("title", {}).get("text") == "TTFT (ms)")
    curves = {t.get("name"): t for t in ttft["data"]}
    assert "calc's roofline: the level's prompts prefilled at once" in curves
    assert pagetest.plotly_values(curves["calc's roofline: the level's prompts prefilled at once"]["y"]) == \
        pytest.approx(list(table["pred_ttft_ms"]))
    assert not any("lower bound" in (t.get("name") or "") + (t.get("hovertemplate") or "") for t in ttft["data"])
    # The equations behind the TPOT figures at the lightest level (concurrency 1), filled in and ending with the
    # metrics: the TPOT definition on the p50 figures, (700 - 30) / (64 - 1) = 10.63 ms beside the p50 of 10.00 ms.
    at.session_state["equations"] = True
    at.run()
    eqs = [x.value.replace(r"\end{aligned}", "").strip().strip("$") for x in at.latex if "=" in x.value][:4]
    assert len(eqs) == 4 and "ITL" not in eqs[-1], eqs  # then the section's symbolic definitions
    tail = [e.rsplit("=", 1)[1].strip().replace(r"\,\text{ms}", " ms").replace(r"\times", "x") for e in eqs]
    metrics = {m.label: m.value for m in at.metric}
    assert tail[0] == metrics["TPOT p50, lightest load"] == "10.00 ms"
    assert "700.00" in eqs[1] and "30.00" in eqs[1] and "64 - 1" in eqs[1] and tail[1] == "10.63 ms"
    assert tail[2] == f"{table['pred_tpot_ms'].iloc[0]:.2f} ms" and "3.35" in eqs[2]  # the H100's 3.35 TB/s
    assert tail[3] == metrics["TPOT measured / bound"]
    # The sidebar's prefill LM-head convention reaches the TTFT prediction and is named: with "last" the head
    # multiplies one of the 256 prompt tokens. At concurrency 4 prefill is compute-bound and skips
    # 2 x 128,256 x 4,096 x 4 x 255 = 1.072e12 FLOP = 1.084 ms at 989e12 FLOP/s; at concurrency 1 it is
    # bound by the weight read, which does not change. TPOT stays.
    at.radio(key="lgt").set_value("last").run()
    last = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    assert table["pred_ttft_ms"].iloc[1] - last["pred_ttft_ms"].iloc[1] == pytest.approx(1.084, rel=0.002)
    assert last["pred_ttft_ms"].iloc[0] == pytest.approx(table["pred_ttft_ms"].iloc[0])
    assert list(last["pred_tpot_ms"]) == list(table["pred_tpot_ms"])
    assert any("LM head on the last prompt token in prefill" in m.value for m in at.markdown)
    at.radio(key="lgt").set_value("all").run()
    if parallel_supported():  # calc has the parallel layout: tp = 2 halves each GPU's weights
        at.number_input(key="ep_tp").set_value(2).run()
        tp2 = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
        assert (tp2["pred_tpot_ms"] < table["pred_tpot_ms"]).all()
        assert any("tp = 2" in m.value for m in at.markdown)


def test_a_file_that_is_not_a_result_is_a_message():
    at = open_section(ep_src="a result file")
    at.text_area(key="ep_paste").set_value('{"nothing": "here"}').run()
    assert not at.exception and "Not a result file" in at.error[0].value


def test_a_run_where_every_request_fails_lists_the_errors_and_no_prediction():
    with FakeOpenAI(behaviour="500") as srv:
        at = open_section(ep_url=srv.base_url, ep_model="tiny", ep_levels="1, 2", ep_n="2", ep_warm="0")
        at.button(key="ep_run").click().run()
    assert not at.exception
    assert "Every request failed" in at.error[0].value
    msg = at.error[0].value.replace("\\", "")  # the server's words are shown escaped (plain text)
    assert "level 1: 2 x the server failed (HTTP 500): Internal Server Error" in msg and "engine died" not in msg
    assert not at.dataframe and not pagetest.figures(at)


def test_an_empty_model_is_a_hint_until_measure_is_pressed():
    at = open_section()
    hint = "Enter the model name the server serves"
    assert not at.error and any("model name" in i.value for i in at.info)  # the page's hint asks for it
    at.button(key="ep_run").click().run()  # pressed with the Model box still empty: now it is an error
    assert at.error and hint in at.error[0].value
    assert "_ep_job" not in at.session_state  # nothing was started


def _user_file(**changes):
    from test_endpoint_results import USER_RESULT
    return json.dumps(dict(USER_RESULT, **changes))


def test_a_file_with_an_impossible_figure_is_refused_on_the_page_by_its_field():
    at = open_section(ep_src="a result file")
    at.text_area(key="ep_paste").set_value(_user_file(max_concurrency=-4, median_ttft_ms=-38)).run()
    assert not at.exception and not at.dataframe and not at.metric
    msg = at.error[0].value.replace("\\", "")
    assert "the file's max_concurrency is -4; a concurrency must be a positive whole number" in msg
    assert "the file's median_ttft_ms is -38; a time must be 0 ms or more" in msg
    assert not any("batch must be a positive integer" in w.value for w in at.warning)


def test_a_file_without_prompt_tokens_says_so_rather_than_rate_mode():
    at = open_section(ep_src="a result file")
    at.text_area(key="ep_paste").set_value(_user_file(total_input_tokens=0)).run()
    assert not at.exception
    texts = [w.value.replace("\\", "") for w in at.warning] + [c.value for c in at.caption]
    assert "No prediction: no prompt length (total_input_tokens 0)." in texts, texts
    assert not any("request-rate mode" in t for t in texts)
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    assert list(table["concurrency"]) == [4] and "pred_tpot_ms" not in table  # measured only


def test_the_headline_ratio_is_measured_over_the_bound_and_the_charts_carry_the_estimate():
    from live.endpoint_charts import ESTIMATE_NAME
    at = open_section(ep_src="a result file")
    at.text_area(key="ep_paste").set_value(_user_file()).run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    metrics = {m.label: m for m in at.metric}
    assert "TPOT measured/predicted" not in metrics
    ratio = metrics["TPOT measured / bound"]
    assert ratio.value == f"{11.5 / table['pred_tpot_ms'].iloc[0]:.2f}x"  # TPOT p50 11.5 ms / calc's bound
    assert ratio.proto.delta == f"{11.5 / table['est_tpot_ms'].iloc[0]:.2f}x of the serving estimate"
    for metric, title in (("ttft", "TTFT (ms)"), ("tpot", "TPOT (ms per output token)")):
        fig = next(f for f in pagetest.figures(at)
                   if f["layout"].get("yaxis", {}).get("title", {}).get("text") == title)
        est = next(t for t in fig["data"] if t.get("name") == ESTIMATE_NAME)
        y = pagetest.plotly_values(est["y"])
        assert y == pytest.approx(list(table[f"est_{metric}_ms"]))
        high = [a + b for a, b in zip(y, pagetest.plotly_values(est["error_y"]["array"]))]
        assert high == pytest.approx(list(table[f"est_{metric}_ms_high"]))


def test_a_linked_level_the_files_levels_lack_is_named_in_the_link_notice():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    for k, v in dict(lv_target="an endpoint", ep_src="a result file", ep_level="-3").items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()  # the page as the link opens it
    text = "\n".join(json.dumps(vllm_result(c, 30.0 * c, 9.0 + c, 8.0, 700.0)) for c in (4, 1))
    at.text_area(key="ep_paste").set_value(text).run()
    assert not at.exception and at.radio(key="ep_level").value == 4  # the default, the heaviest load
    notices = [w.value for w in at.warning if "Link values that no control on this page accepts" in w.value]
    assert notices == ["Link values that no control on this page accepts were ignored, and those controls start "
                       "from their defaults: ep_level=-3 (not one of 1, 4)."]
    # a level the file has is taken, and no notice
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    for k, v in dict(lv_target="an endpoint", ep_src="a result file", ep_level="1").items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    at.text_area(key="ep_paste").set_value(text).run()
    assert at.radio(key="ep_level").value == 1 and not any("Link values" in w.value for w in at.warning)


def test_a_linked_lengths_or_layout_the_prediction_refuses_is_named_in_the_link_notice():
    # the lengths radio, the engine and the layout are drawn only once results are in: a refused link value is named
    from streamlit.testing.v1 import AppTest
    text = "\n".join(json.dumps(vllm_result(c, 30.0 * c, 9.0 + c, 8.0, 700.0)) for c in (4, 1))
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    for k, v in dict(lv_target="an endpoint", ep_src="a result file", ep_lengths="banana", ep_tp="0").items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    at.text_area(key="ep_paste").set_value(text).run()
    assert not at.exception and at.radio(key="ep_lengths").value == "varied"  # a file's default
    notices = [w.value for w in at.warning if "Link values that no control on this page accepts" in w.value]
    assert len(notices) == 1 and "ep_lengths=banana" in notices[0] and "ep_tp=0" in notices[0], notices
    # a link naming the option in another letter case is taken, and no notice
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    for k, v in dict(lv_target="an endpoint", ep_src="a result file", ep_lengths="FIXED").items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    at.text_area(key="ep_paste").set_value(text).run()
    assert at.radio(key="ep_lengths").value == "fixed" and not any("Link values" in w.value for w in at.warning)


def test_a_result_file_of_another_model_than_the_sidebars_is_said():
    # the file was measured on Llama-3.1-8B-Instruct (calc's llama-3.1-8b); the sidebar's default is Llama-3-8B
    def named(model_id):
        return "\n".join(json.dumps(dict(vllm_result(c, 30.0 * c, 9.0 + c, 8.0, 700.0), model_id=model_id))
                         for c in (4, 1))

    at = open_section(ep_src="a result file")
    at.text_area(key="ep_paste").set_value(named("meta-llama/Llama-3.1-8B-Instruct")).run()
    assert not at.exception
    warned = [w.value for w in at.warning if "The file's model is" in w.value]
    assert warned == ["The file's model is meta-llama/Llama-3.1-8B-Instruct (calc's llama-3.1-8b), but the "
                      "prediction is for the sidebar's Llama-3-8B: pick llama-3.1-8b in the sidebar to compare like "
                      "with like."]
    at.text_area(key="ep_paste").set_value(named("meta-llama/Meta-Llama-3-8B-Instruct")).run()
    assert not any("The file's model is" in w.value for w in at.warning)  # the same model: nothing to say
    at.text_area(key="ep_paste").set_value(named("my-org/secret-model")).run()
    assert any("which calc has no preset for" in w.value for w in at.warning)


def test_a_linked_target_the_live_page_refuses_is_named_though_the_page_ends_early():
    # the Live page stops (st.stop) before app.py's notice of refused links: its own top radio names them
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    at.query_params["lv_target"] = "zzz"
    at.switch_page(PAGE).run()
    assert not at.exception and at.radio(key="lv_target").value == "this machine"
    notices = [w.value for w in at.warning if "Link values that no control on this page accepts" in w.value]
    assert len(notices) == 1 and "lv_target=zzz (not one of this machine, an endpoint)" in notices[0], notices


def test_an_imported_files_run_date_is_the_estimates_software_and_the_page_says_so():
    # the same file run on two days: the estimate of the older run counts less of the fitted software gain, so its
    # TPOT estimate is higher; the bound does not move. The page names the day it took.
    tables = {}
    for day in ("20250301-101500", "20261130-120000"):
        at = open_section(ep_src="a result file")
        at.text_area(key="ep_paste").set_value(_user_file(date=day)).run()
        assert not at.exception and not at.error
        iso = f"{day[:4]}-{day[4:6]}-{day[6:8]}"
        assert any(f"The files' run date {iso} (vLLM's `date`" in c.value for c in at.caption), iso
        tables[iso] = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    old, new = tables["2025-03-01"].iloc[0], tables["2026-11-30"].iloc[0]
    assert old["pred_tpot_ms"] == new["pred_tpot_ms"] and old["est_tpot_ms"] > new["est_tpot_ms"] * 1.01
    # a day before the engine's first release on file: a current build, and the page says so
    at = open_section(ep_src="a result file")
    at.text_area(key="ep_paste").set_value(_user_file(date="19990101-000000")).run()
    assert any("before vllm's first release on file" in c.value for c in at.caption)


def test_a_model_that_does_not_fit_the_gpu_marks_its_bound_if_it_fit_and_says_why_once():
    # Llama-3.1-405B in bf16 is 405e9 x 2 B = 810 GB of weights, over ten times one H100's 80 GB: the serving model
    # refuses both levels, the page says so once, and the bound's ratio is labelled as a time with enough memory
    at = open_section(ep_src="a result file", model="llama-3.1-405b")
    text = "\n".join(json.dumps(vllm_result(c, 30.0 * c, 9.0 + c, 8.0, 700.0)) for c in (4, 1))
    at.text_area(key="ep_paste").set_value(text).run()
    assert not at.exception
    refusals = [i.value for i in at.info if "no serving estimate:" in i.value]
    assert len(refusals) == 1 and "does not fit" in refusals[0] and not refusals[0].endswith("..")
    labels = [m.label for m in at.metric]
    assert "TPOT measured / bound (if it fit)" in labels and "TPOT measured / bound" not in labels
    # a model that fits keeps the plain label
    at = open_section(ep_src="a result file")
    at.text_area(key="ep_paste").set_value(text).run()
    assert "TPOT measured / bound" in [m.label for m in at.metric]


def test_a_result_file_at_request_rates_is_predicted_at_each_rate():
    from live.endpoint_charts import ESTIMATE_NAME, RATE_PREDICTED_NAMES
    from pagetest import row_metrics
    from ui import formats
    from test_endpoint_results import rate_result
    at = open_section(ep_src="a result file")
    text = "\n".join(json.dumps(rate_result(r, t, p)) for r, t, p in ((10, 25.0, 9.0), (40, 40.0, 14.0), (80, 90.0, 22.0)))
    at.text_area(key="ep_paste").set_value(text).run()
    assert not at.exception and not at.error
    assert not any("request-rate mode" in c.value for c in at.caption)
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    assert list(table["request_rate_per_s"]) == [10.0, 40.0, 80.0]
    assert table[["pred_tpot_ms", "est_tpot_ms", "est_decode_batch"]].notna().all().all()
    assert table["est_decode_batch"].is_monotonic_increasing                  # Little's law: more rate, more batch
    assert list(table["ratio_tpot"]) == pytest.approx(list(table["tpot_ms_p50"] / table["pred_tpot_ms"]))
    assert any("Little's law" in m.value and "one prompt's prefill" in m.value for m in at.markdown)
    # the charts name the bound for a rate, and carry the estimate with its range
    tpot = next(f for f in pagetest.figures(at)
                if f["layout"].get("yaxis", {}).get("title", {}).get("text") == "TPOT (ms per output token)")
    names = [t.get("name") for t in tpot["data"]]
    assert RATE_PREDICTED_NAMES["tpot"] in names and ESTIMATE_NAME in names
    assert tpot["layout"]["xaxis"]["type"] == "log"                          # 10 to 80 requests/s: a log axis
    # the breakdown is at the highest rate by default, its estimate the table's
    assert at.radio(key="ep_rate").value == 80.0

    def shown_estimate():
        return {m.label: m for m in row_metrics(at)}["TPOT, serving estimate"]
    assert shown_estimate().value == formats.fmt_seconds(table["est_tpot_ms"].iloc[-1] / 1e3)
    assert shown_estimate().delta == (f"range {formats.fmt_seconds(table['est_tpot_ms_low'].iloc[-1] / 1e3)} - "
                                      f"{formats.fmt_seconds(table['est_tpot_ms_high'].iloc[-1] / 1e3)}")
    # at a rate the throughput metric says it is the rate's, and the bound's the headroom at that batch
    from ui.serving_views import RATE_THROUGHPUT_WORDS
    throughput = {m.label: m for m in row_metrics(at)}["Output tok/s per GPU, serving estimate"]
    # the file's 400 requests at 80/s: 400 / (399 / 80 + e2e) requests/s (calc.serving.rate_run_requests_per_s), e2e
    # the table's estimate at that rate, x 64 output tokens on one GPU, below the rate's 80 x 64 = 5,120
    finite = 400 / (399 / 80 + table["est_e2e_ms"].iloc[-1] / 1e3) * 64
    assert throughput.value == formats.fmt_number(finite) and finite < 80.0 * 64
    assert RATE_THROUGHPUT_WORDS in (throughput.help or "")
    at.radio(key="ep_rate").set_value(10.0).run()
    assert not at.exception
    assert shown_estimate().value == formats.fmt_seconds(table["est_tpot_ms"].iloc[0] / 1e3)


def test_files_of_concurrencies_and_rates_together_say_which_levels_the_prediction_follows():
    from test_endpoint_results import rate_result
    at = open_section(ep_src="a result file")
    lines = [json.dumps(vllm_result(4, 120.0, 13.0, 8.0, 700.0))] + [json.dumps(rate_result(r, 30.0, 9.0))
                                                                     for r in (10, 80)]
    at.text_area(key="ep_paste").set_value("\n".join(lines)).run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("The levels at a request rate (10, 80 requests/s) are shown as measured, without "
                                  "a prediction") for c in at.caption)
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    predicted = table[table["pred_tpot_ms"].notna()]
    assert list(predicted["concurrency"]) == [4]
    # the best throughput is the 80/s level's (80 x 64 = 5,120 tok/s), named by its rate, not "concurrency nan"
    best = next(m for m in at.metric if m.label == "Best output throughput")
    assert best.value == "5,120 tok/s" and best.help.endswith("at 80 requests/s")


def test_a_model_that_does_not_fit_at_a_rate_says_why_the_bound_is_missing():
    from test_endpoint_results import rate_result
    at = open_section(ep_src="a result file", model="llama-3.1-70b")     # 141 GB of bf16 weights on one 80 GB H100
    at.text_area(key="ep_paste").set_value(json.dumps(rate_result(10, 30.0, 9.0))).run()
    assert not at.exception
    assert any("does not fit" in i.value for i in list(at.info) + list(at.warning))
    assert any(c.value.startswith("At a request rate the bound is drawn at the decode batch the serving estimate "
                                  "finds") for c in at.caption)
