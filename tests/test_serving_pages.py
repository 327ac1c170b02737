"""The serving estimate on the pages (roofline, latency/cost, Many GPUs, the measured page), the InferenceX
parser, the measurements upload reader and the capacity plan's sizing option."""
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

import pytest

from calc import comparison, get_accelerator, get_model, inferencex, measurements, planning, serving_params
from calc.cost import cost_per_million
from calc.serving import serving_estimate
from pagetest import _in_page_order, figures, open_page, plotly_values, row_metrics, tables
from ui import formats, measured_views, serving_views

DATA = Path(__file__).resolve().parent / "data"
L8, L70, H100 = get_model("llama-3-8b"), get_model("llama-3.1-70b"), get_accelerator("h100-sxm")
SIDEBAR = dict(model="llama-3-8b", gpu="h100-sxm", wq="bf16", kvq="bf16")


def _row(at):
    return {m.label: m for m in row_metrics(at)}


def _breakdown_bars(at, which="TPOT"):
    """The bars of the 'where the time goes' figure: {part: ms}, and the estimate marker's x."""
    for fig in figures(at):
        names = [t.get("name") for t in fig["data"]]
        if "serving estimate and range" in names and any(t.get("y") == [which] for t in fig["data"]):
            bars = {t["name"]: plotly_values(t["x"])[0] for t in fig["data"] if t.get("type") == "bar"}
            mark = next(t for t in fig["data"] if t.get("name") == "serving estimate and range")
            return bars, plotly_values(mark["x"])[0]
    raise AssertionError("no breakdown figure")


def _check_estimate(at, est, price=None):
    m = _row(at)
    assert m["TPOT, bound"].value == formats.fmt_seconds(est.tpot.bound_s)
    assert m["TPOT, serving estimate"].value == formats.fmt_seconds(est.tpot.estimate_s)
    assert m["TPOT, serving estimate"].delta == (f"range {formats.fmt_seconds(est.tpot.low_s)} - "
                                                 f"{formats.fmt_seconds(est.tpot.high_s)}")
    assert est.tpot.low_s <= est.tpot.estimate_s < est.tpot.high_s
    assert est.tpot.estimate_s > est.tpot.bound_s  # an engine is slower than the roofline
    if est.arrivals:  # the closed-loop convention the numbers follow is said beside them
        assert any(f"How the requests arrive: {est.arrivals}." in c.value for c in at.caption)
    if est.batching == "continuous":  # the 99th percentiles a service level is set on, beside the means
        assert est.tpot_p99_s >= est.tpot.estimate_s
        assert any(c.value.startswith("99th percentile of the requests") and
                   f"TPOT {formats.fmt_seconds(est.tpot_p99_s)}" in c.value for c in at.caption)
    bars, mark = _breakdown_bars(at)
    # the parts drawn add up to the estimate (parts of 0 are not drawn)
    assert sum(bars.values()) == pytest.approx(est.tpot.estimate_s * 1e3, rel=1e-9)
    assert mark == pytest.approx(est.tpot.estimate_s * 1e3)
    assert bars["weights"] == pytest.approx(est.tpot.weights_s * 1e3)
    # the fixed part is named for TPOT and TTFT alike: per step in TPOT, per request too in TTFT
    assert bars["fixed costs (per step, per request)"] == pytest.approx(est.tpot.fixed_s * 1e3)
    assert "fixed per step" not in bars
    if price is not None:
        assert m["USD per 1M output tokens, serving estimate"].value == formats.fmt_usd(
            cost_per_million(est.output_tokens_per_s_per_gpu, price))
        assert m["USD per 1M output tokens, serving estimate"].delta == "bound " + formats.fmt_usd(
            cost_per_million(est.bound_output_tokens_per_s_per_gpu, price)) + ", decode steps only"
    # the bound's throughput is B / bound TPOT per GPU of a replica (decode steps only), and the metric says so;
    # GPUs per replica = all GPUs (output tok/s over its per-GPU figure) / replicas (requests over a replica's)
    replicas = est.requests_per_s * est.e2e_s / est.concurrency if est.mode == "concurrency" else 1.0
    per_replica = est.output_tokens_per_s / est.output_tokens_per_s_per_gpu / round(replicas)
    assert m["Output tok/s per GPU, serving estimate"].delta == (
        f"bound {formats.fmt_number(est.decode_batch / est.bound_tpot_s / per_replica)}, decode steps only")


def test_roofline_page_shows_the_serving_estimate_at_b_and_context():
    at = open_page("app_pages/roofline.py", **SIDEBAR, rf_ctx="8192", rf_b="32")
    # the request ends at the page's context: a prompt of 8,192 - 256 = 7,936 tokens and 256 output tokens
    est = serving_estimate(L8, H100, 7936, 256, concurrency=32)
    _check_estimate(at, est)
    assert not any("trained context" in n.value for n in [*at.warning, *at.info])  # 8,192 tokens: within Llama 3's
    assert any("prompt and 256 output tokens, ending at the page's context of 8,192" in c.value for c in at.caption)
    assert any("Bound" in c.value and "Serving estimate" in c.value for c in at.caption)  # which number is which


def test_roofline_page_engine_and_batching_choices_change_the_estimate():
    at = open_page("app_pages/roofline.py", **SIDEBAR, rf_ctx="8192", rf_b="32", rf_srv_engine="SGLang",
                   rf_srv_batching="static", rf_srv_out="512")
    est = serving_estimate(L8, H100, 8192 - 512, 512, concurrency=32, engine="sglang", batching="static")
    _check_estimate(at, est)
    assert est.tpot.interference_s == 0.0  # static batching: no other prompts in the steps
    assert "batching interference" not in _breakdown_bars(at)[0]


@pytest.mark.parametrize("page, prefix, weights, widened", [
    ("app_pages/roofline.py", "rf", "fp8-block", True), ("app_pages/roofline.py", "rf", "bf16", False),
    ("app_pages/latency_cost.py", "lc", "fp8-block", True)])
def test_the_caption_says_which_range_the_estimate_shows(page, prefix, weights, widened):
    # vLLM never ran fp8-block weights in the calibration: a notice widens the range to the held-out misses of such
    # pairs, and the caption that names the range says so rather than calling it the cross-validated one alone
    at = open_page(page, **{**SIDEBAR, "wq": weights}, **{f"{prefix}_ctx": "8192", f"{prefix}_srv_engine": "vLLM"})
    assert any(n.value.startswith("Serving model:") and n.value.endswith(f"{serving_params.WIDENED_WORDS}.")
               for n in at.info) is widened
    [caption] = [c.value for c in at.caption if c.value.startswith("**Bound**") and "Serving estimate" in c.value]
    said = ("with its range from the cross-validated errors, widened to the held-out misses the notice above names, "
            "for a current release of vLLM")
    assert (said in caption) is widened
    assert ("with its range from the cross-validated errors, for a current release of vLLM" in caption) is not widened


def test_uncalibrated_accelerator_shows_the_fallback_notice():
    at = open_page("app_pages/roofline.py", model="llama-3-8b", gpu="l4", wq="bf16", kvq="bf16", rf_ctx="1024",
                   rf_b="1")
    assert any("Serving model:" in i.value for i in at.info)


def test_latency_cost_page_estimate_and_price_beside_the_bound():
    at = open_page("app_pages/latency_cost.py", **SIDEBAR, price="3.0", lc_ctx="8192", lc_tpot="10.0")
    b = int(_row(at)["Chosen batch B"].value.replace(",", ""))
    est = serving_estimate(L8, H100, 8192 - 256, 256, concurrency=b)
    _check_estimate(at, est, price=3.0)
    # the batch is the bound's; where the estimate misses the 10 ms target the page says so, with the largest batch
    # that meets it by the estimate: its estimated TPOT is within 10 ms and the next batch's is not
    if est.tpot.estimate_s > 0.010:
        best = int(re.search(r"B = ([\d,]+) is the largest batch", at.warning[0].value).group(1).replace(",", ""))
        assert serving_estimate(L8, H100, 8192 - 256, 256, concurrency=best).tpot.estimate_s <= 0.010
        assert serving_estimate(L8, H100, 8192 - 256, 256, concurrency=best + 1).tpot.estimate_s > 0.010
        assert f"the serving estimate at B = {b:,} is" in at.warning[0].value
    # the warning shows exactly when the estimate at the chosen batch misses the target (1,024 tokens: B = 1 meets
    # 10 ms by the estimate too, so no warning)
    for ctx, target in (("1024", "10.0"), ("8192", "60.0")):
        other = open_page("app_pages/latency_cost.py", **SIDEBAR, price="3.0", lc_ctx=ctx, lc_tpot=target)
        bb = int(_row(other)["Chosen batch B"].value.replace(",", ""))
        missed = serving_estimate(L8, H100, int(ctx) - 256, 256, concurrency=bb).tpot.estimate_s > float(target) / 1e3
        assert missed == bool([w for w in other.warning if "the serving estimate at B" in w.value]), (ctx, target)


def test_many_gpus_layout_estimate_and_plan_sized_with_it():
    at = open_page("app_pages/many_gpus.py", model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16",
                   mg_tp="4", mg_b="16", mg_rep="2", mg_ctx="4096")
    est = serving_estimate(L70, H100, 4096 - 256, 256, concurrency=32, tp=4, replicas=2)
    _check_estimate(at, est, price=H100.price_per_hour_usd)
    verdict = at.success[0].value
    assert verdict.startswith("Sized with the serving estimate (vLLM)")
    traffic = planning.ServingTraffic(5.0, 2.0, 2048, 256, 0.0)
    plan = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0, timing="serving")
    assert plan.verdict == verdict
    bound = open_page("app_pages/many_gpus.py", model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16",
                      mg_timing="roofline bound").success[0].value
    assert not bound.startswith("Sized with") and "TPOT" in bound



def _figures_in(node) -> list[dict]:
    """The Plotly figures drawn inside one element of the page (an expander), page order."""
    return [json.loads(json.loads(n.proto.json)) for n in _in_page_order(node)
            if getattr(n, "type", None) == "bidi_component" and n.proto.component_name == "explorer_inplace_plotly"]


def test_serving_sized_plan_gives_its_range_and_where_its_time_goes():
    # 50 requests/s at a peak of 2x, 2,048 prompt tokens half of them cached, 256 out, TPOT <= 50 ms, TTFT <= 1 s
    traffic = planning.ServingTraffic(50.0, 2.0, 2048, 256, 0.5)
    plan = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0, timing="serving")
    lay = plan.layout
    # the replica recomputed here: round(0.5 x 2,048) = 1,024 tokens cached, so prompts of 2,048 - 1,024 = 1,024
    # tokens, one replica of the plan's layout at the plan's batch in flight
    est = serving_estimate(L70, H100, 1024, 256, concurrency=plan.batch, tp=lay.tp, pp=lay.pp, ep=lay.ep)
    assert plan.estimate.tpot.estimate_s == pytest.approx(plan.tpot_s, rel=1e-12)  # the grid's row, with its parts
    assert plan.estimate.ttft.estimate_s == pytest.approx(plan.ttft_s, rel=1e-12)
    for which in ("tpot", "ttft"):
        mine, theirs = getattr(plan.estimate, which), getattr(est, which)
        assert (mine.low_s, mine.high_s) == pytest.approx((theirs.low_s, theirs.high_s), rel=1e-12)
        assert mine.low_s < mine.estimate_s < mine.high_s   # a range, not a point
    assert plan.verdict.startswith("Sized with the serving estimate (vLLM): ")   # added to, not reworded
    assert plan.verdict.endswith(
        f"Range (cross-validated errors): TPOT {est.tpot.low_s * 1e3:.1f} - {est.tpot.high_s * 1e3:.1f} ms, "
        f"TTFT {est.ttft.low_s * 1e3:,.0f} - {est.ttft.high_s * 1e3:,.0f} ms.")
    # at the high end of the range a replica emits the low end of the throughput range, or less where the top of
    # the TPOT range (TPOT high / estimate, a separate quantile) implies less: per GPU min(per_gpu_low, per_gpu x
    # TPOT estimate / TPOT high), serving that x GPUs per replica / 256 requests/s: the peak of 100 requests/s then
    # needs ceil(100 / that) replicas of the same layout
    per_gpu = min(est.per_gpu_low, est.output_tokens_per_s_per_gpu * est.tpot.estimate_s / est.tpot.high_s)
    per_replica = per_gpu * lay.gpus_per_replica / 256
    high_gpus = int(np.ceil(100.0 / per_replica)) * lay.gpus_per_replica
    assert high_gpus > plan.gpus   # the range is wide enough to cost GPUs here
    assert f"would need {high_gpus // lay.gpus_per_replica:,} replicas, {high_gpus:,} GPUs instead of {plan.gpus:,}" \
        in plan.range_note
    assert ("miss the TPOT target of 50.0 ms" in plan.range_note) == (est.tpot.high_s > 0.05)
    # with the bound there is no estimate to range over: the verdict and plan are as before
    bound = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0)
    assert bound.estimate is None and bound.range_note == "" and "Range" not in bound.verdict
    # the page: the verdict with its range, the note, and each time's breakdown in the plan's expander
    at = open_page("app_pages/many_gpus.py", model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16",
                   mg_rps="50.0", mg_hit="50")
    assert at.success[0].value == plan.verdict
    assert any(c.value == plan.range_note for c in at.caption)
    box = next(e for e in at.expander if e.label == "Where the plan's time goes")
    figs = _figures_in(box)
    assert len(figs) == 2
    for fig, which in zip(figs, ("tpot", "ttft")):
        tb = getattr(est, which)
        bars = {t["name"]: plotly_values(t["x"])[0] for t in fig["data"] if t.get("type") == "bar"}
        mark = next(t for t in fig["data"] if t.get("name") == serving_views.ESTIMATE_TRACE)
        assert sum(bars.values()) == pytest.approx(tb.estimate_s * 1e3, rel=1e-9)   # the parts make the estimate
        assert plotly_values(mark["error_x"]["array"])[0] == pytest.approx((tb.high_s - tb.estimate_s) * 1e3)
    assert bars["queueing"] == pytest.approx(est.ttft.queue_s * 1e3)   # TTFT's queueing drawn
    # the roofline-sized plan has no such expander
    at_bound = open_page("app_pages/many_gpus.py", model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16",
                         mg_timing="roofline bound")
    assert "Where the plan's time goes" not in [e.label for e in at_bound.expander]

ONE_TOKEN = "One output token per request"


@pytest.mark.parametrize("page, query, prompt, priced", [
    ("app_pages/latency_cost.py", dict(price="3.0", lc_ctx="8192", lc_tpot="10.0", lc_srv_out="1"), 8191, True),
    ("app_pages/roofline.py", dict(rf_ctx="8192", rf_b="32", rf_srv_out="1"), 8191, False),
    ("app_pages/many_gpus.py", dict(mg_ctx="4096", mg_b="16", mg_srv_out="1"), 4095, True),
])
def test_one_output_token_says_what_the_per_token_figures_mean(page, query, prompt, priced):
    at = open_page(page, **SIDEBAR, **query)
    notes = [c.value for c in at.caption if c.value.startswith(ONE_TOKEN)]
    assert len(notes) == 1, [c.value for c in at.caption]
    # the request's prompt is the page's context less its one output token: all of it is billed to that token
    assert f"prefill ({prompt:,} tokens)" in notes[0] and f"{prompt:,} prompt tokens per output token" in notes[0]
    assert ("USD per 1M output tokens" in notes[0]) == priced
    # a chat's request (the block's default, 256 output tokens) has no such note
    chat = open_page(page, **SIDEBAR, **{k: v for k, v in query.items() if not k.endswith("_srv_out")})
    assert not [c.value for c in chat.caption if c.value.startswith(ONE_TOKEN)]
    if priced:   # nothing lost: the figure is still there, far above the chat's
        usd = "USD per 1M output tokens, serving estimate"
        one, many = (float(_row(a)[usd].value.strip("$").replace(",", "")) for a in (at, chat))
        assert one > 10 * many


@pytest.mark.parametrize("engine, name", [("sglang", "SGLang"), ("trtllm", "TensorRT-LLM")])
def test_many_gpus_plan_follows_the_engine_chosen_for_the_serving_estimate(engine, name):
    at = open_page("app_pages/many_gpus.py", model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16",
                   mg_tp="4", mg_b="16", mg_rep="2", mg_ctx="4096")
    assert [s.key for s in at.selectbox].count("mg_srv_engine") == 1   # one engine choice on the page
    at.selectbox(key="mg_srv_engine").set_value(engine).run()
    assert not at.exception
    traffic = planning.ServingTraffic(5.0, 2.0, 2048, 256, 0.0)
    plan = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0, timing="serving", engine=engine)
    vllm = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0, timing="serving")
    assert plan.verdict != vllm.verdict        # the engines' plans differ, so the page's could not pass by chance
    verdict = at.success[0].value
    assert verdict == plan.verdict and verdict.startswith(f"Sized with the serving estimate ({name}): ")
    assert any(f"Serving engine: **{name}**" in c.value for c in at.caption)   # said beside the plan's inputs
    # a layout that holds no batch has no serving block: the plan then offers the choice, and keeps it
    at.select_slider(key="mg_tp").set_value(1).run()
    assert at.selectbox(key="mg_srv_engine").value == engine
    assert at.success[0].value == plan.verdict


@pytest.mark.parametrize("link", ["serving_high", "high end of its range"])
def test_plan_sized_at_the_high_end_of_its_range(link):
    # the traffic of the test above: 100 requests/s at the peak, prompts of 1,024 uncached tokens, 256 out,
    # TPOT <= 50 ms, TTFT <= 1 s; sized at the slow end of the estimate's range instead of its centre
    traffic = planning.ServingTraffic(50.0, 2.0, 2048, 256, 0.5)
    central = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0, timing="serving")
    high = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0, timing="serving_high")
    lay = high.layout
    est = serving_estimate(L70, H100, 1024, 256, concurrency=high.batch, tp=lay.tp, pp=lay.pp, ep=lay.ep)
    # the plan's times are the range's high ends at its layout and batch, within both targets
    assert high.tpot_s == pytest.approx(est.tpot.high_s, rel=1e-9) and high.tpot_s > est.tpot.estimate_s
    assert high.ttft_s == pytest.approx(est.ttft.high_s, rel=1e-9) and high.ttft_s > est.ttft.estimate_s
    assert high.tpot_s <= 0.05 and high.ttft_s <= 1.0
    # a replica serves the low end of the throughput range, or less where the TPOT it is sized at implies less:
    # per GPU min(per_gpu_low, per_gpu x TPOT estimate / TPOT high), x GPUs per replica / 256 requests/s, so the
    # peak of 100 requests/s needs ceil(100 / that) replicas
    per_gpu = min(est.per_gpu_low, est.output_tokens_per_s_per_gpu * est.tpot.estimate_s / est.tpot.high_s)
    per_replica = per_gpu * lay.gpus_per_replica / 256
    assert high.requests_per_s_per_replica == pytest.approx(per_replica, rel=1e-9)
    # never more than its batch can emit at the TPOT it is sized at: B / TPOT output tokens/s, / 256 requests/s
    assert high.requests_per_s_per_replica <= high.batch / (high.tpot_s * 256) * (1 + 1e-9)
    assert high.gpus == int(np.ceil(100.0 / per_replica)) * lay.gpus_per_replica
    # slower times and fewer tokens per replica cannot need fewer GPUs than the centre's plan; here they need more
    assert high.gpus > central.gpus
    assert high.verdict.startswith("Sized with the high end of the serving estimate's range (vLLM): ")
    # the note gives the same layout and batch at the central estimate: est's own throughput, by the same rule
    at_centre = int(np.ceil(100.0 / (est.output_tokens_per_s_per_gpu * lay.gpus_per_replica / 256)))
    assert at_centre * lay.gpus_per_replica < high.gpus
    assert (f"would need {at_centre:,} replica{'s' * (at_centre != 1)}, {at_centre * lay.gpus_per_replica:,} GPUs "
            f"instead of {high.gpus:,}") in high.range_note
    # the page, opened by the timing's value or its label: the same verdict and note
    at = open_page("app_pages/many_gpus.py", model="llama-3.1-70b", gpu="h100-sxm", wq="bf16", kvq="bf16",
                   mg_rps="50.0", mg_hit="50", mg_timing=link)
    assert at.radio(key="mg_timing").value == "serving_high"
    assert at.success[0].value == high.verdict
    assert any(c.value == high.range_note for c in at.caption)
    box = next(e for e in at.expander if e.label == "Where the plan's time goes")   # the bars build the centre
    assert any(c.value.startswith("The bars build the central estimate;") for c in box.caption)
    # its table shows every row, the range's ends included, at full height: no inner scrolling hides "range high"
    table = next(h.proto.body for h in box.get("html") if 'class="xm-table"' in h.proto.body)
    assert "xm-full" in table and table.index(">range low<") < table.index(">range high<")


@pytest.mark.parametrize("model, widened", [("qwen3.5-35b-a3b", True), ("llama-3.1-8b", False)])
def test_the_plans_breakdown_says_which_range_it_shows(model, widened):
    # Qwen3.5's linear attention is a thinly covered trait: the plan's replica takes the held-out spread into its
    # range (its verdict says so), and the caption under the plan's breakdown says it too; Llama-3.1-8B's does not
    at = open_page("app_pages/many_gpus.py", model=model, gpu="h100-sxm", mg_rps="5.0", mg_timing="serving")
    assert ("widened to held-out misses as the notice says" in at.success[0].value) is widened
    box = next(e for e in at.expander if e.label == "Where the plan's time goes")
    assert any("with its range from the cross-validated errors" in c.value for c in box.caption)
    assert any("widened to the held-out misses the notice above names" in c.value for c in box.caption) is widened


def test_capacity_plan_sizing_option():
    traffic = planning.ServingTraffic(5.0, 2.0, 2048, 256)
    bound = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0)
    assert bound.timing == "bound" and bound.verdict == planning.capacity_plan(
        L70, H100, traffic, 0.05, 1.0, timing="bound").verdict  # the default is the bound (the course's numbers)
    served = planning.capacity_plan(L70, H100, traffic, 0.05, 1.0, timing="serving")
    assert served.timing == "serving" and served.gpus >= bound.gpus  # the estimate is slower than the bound
    # the plan's TPOT is the serving estimate of its layout at its batch per replica
    lay = served.layout
    est = serving_estimate(L70, H100, 2048, 256, concurrency=served.batch, tp=lay.tp, pp=lay.pp, ep=lay.ep)
    assert served.tpot_s == pytest.approx(est.tpot.estimate_s, rel=1e-9) and served.tpot_s <= 0.05
    assert served.requests_per_s_per_replica * lay.replicas >= traffic.peak_requests_per_s
    with pytest.raises(ValueError, match="timing"):
        planning.plan_grid(L70, H100, traffic, timing="fast")


def test_measured_page_plots_rows_of_the_data_set():
    at = open_page("app_pages/measured.py")
    model, acc, engine = (s.value for s in at.selectbox[:3])
    df = measurements.load_measurements()
    d = df[(df.model == model) & (df.accelerator == acc) & (df.engine == engine)]
    configs = comparison.configurations(d)
    # the first configuration with a throughput run (runs of TTFT and TPOT alone have no throughput-per-GPU axis)
    thr_rows = d[d.metric.isin(["output_tok_per_s_per_gpu", "output_tok_per_s"])]
    first = next(j for j, c in configs.iterrows()
                 if ((thr_rows.tp == c.tp) & (thr_rows.input_len == c.input_len) & (thr_rows.output_len == c.output_len)
                     & (thr_rows.weight_dtype == c.weight_dtype) & (thr_rows.n_gpus == c.n_gpus)).any())
    config = configs.iloc[first]
    if first:
        at.selectbox(key="ms_config").set_value(at.selectbox(key="ms_config").options[first]).run()
    rows = d[(d.tp == config.tp) & (d.input_len == config.input_len) & (d.output_len == config.output_len)
             & (d.weight_dtype == config.weight_dtype) & (d.n_gpus == config.n_gpus)]
    fig = next(f for f in figures(at) if any(t.get("name") == "serving estimate" for t in f["data"]))
    names = [t["name"] for t in fig["data"]]
    assert {"serving estimate", "estimate range", "roofline bound"} <= set(names)
    measured = [t for t in fig["data"] if t["name"].startswith("measured")]
    ys = sorted(y for t in measured for y in plotly_values(t["y"]))
    thr = rows[rows.metric.isin(["output_tok_per_s_per_gpu", "output_tok_per_s"])]
    per_gpu = np.where(thr.metric == "output_tok_per_s", thr.value / thr.n_gpus, thr.value)
    want = sorted({(c, round(y, 6)): y for c, y in zip(thr.concurrency.astype(object), per_gpu)}.values())
    assert len(ys) >= 1 and ys == pytest.approx(want)  # each throughput run of the data set is a point
    table = next(t for t in tables(at) if "predicted" in t.columns)
    assert sorted(table["id"]) == sorted(rows["id"])
    assert (table["source"].str.startswith("https://")).all()


def test_measured_page_breaks_down_the_chosen_row_and_marks_what_it_measured():
    at = open_page("app_pages/measured.py", ms_model="deepseek-v3", ms_acc="b200", ms_engine="sglang")
    rows_on_page = at.selectbox(key="ms_row").options
    ttft_id = next(o.split(":")[0] for o in rows_on_page if ": TTFT " in o)
    at.selectbox(key="ms_row").set_value(ttft_id).run()
    assert not at.exception
    data = measurements.load_measurements()
    row = data[data["id"] == ttft_id]
    # the table's "serving estimate" column for that row, through compare_rows' own path (predict_rows over the
    # prepared rows), in ms
    predicted = comparison.compare_rows(row)["predicted"].iat[0]
    measured = float(row["value"].iat[0])
    tpot_fig, ttft_fig = figures(at)[-2:]
    for fig, which in ((tpot_fig, "TPOT"), (ttft_fig, "TTFT")):
        assert all(t.get("y") == [which] for t in fig["data"])
    # the axis is in ms, s or min by the longest time drawn (serving_views.axis_unit): its values in ms
    to_ms = {" ms": 1.0, " s": 1e3, " min": 6e4}[ttft_fig["layout"]["xaxis"]["ticksuffix"]]
    bars = {t["name"]: plotly_values(t["x"])[0] * to_ms for t in ttft_fig["data"] if t.get("type") == "bar"}
    assert sum(bars.values()) == pytest.approx(predicted, rel=1e-9)   # the parts make the table's estimate
    mark = next(t for t in ttft_fig["data"] if t.get("name") == serving_views.ESTIMATE_TRACE)
    assert plotly_values(mark["x"])[0] * to_ms == pytest.approx(predicted, rel=1e-9)
    shown = [t for t in ttft_fig["data"] if t.get("name") == "measured"]
    assert len(shown) == 1 and [plotly_values(shown[0]["x"])[0] * to_ms] == pytest.approx([measured])
    assert not [t for t in tpot_fig["data"] if t.get("name") == "measured"]   # a TTFT row: its value on TTFT's bar
    statistic = row["statistic"].iat[0]
    caption = next(c.value for c in at.caption if c.value.startswith(f"{ttft_id}: TTFT"))
    # the row's own statistic named (a mean or a median row), and the bars said to be the model's means
    assert caption.startswith(f"{ttft_id}: TTFT ({statistic}) measured {formats.fmt_seconds(measured / 1e3)}")
    assert "Both bars predict this row's statistic, the run's " + statistic in caption
    # every statistic the serving model predicts has its words (a mean weighs a closed loop's first burst in, a
    # median leaves it aside: calc.serving_fit.prepare_rows)
    from calc.serving_fit import FIT_STATISTICS
    from ui.measured_views import STATISTIC_WORDS
    assert set(STATISTIC_WORDS) == set(FIT_STATISTICS)
    # a link names the row by its id
    linked = open_page("app_pages/measured.py", ms_model="deepseek-v3", ms_acc="b200", ms_engine="sglang",
                       ms_row=ttft_id)
    assert linked.selectbox(key="ms_row").value == ttft_id


def test_a_link_naming_only_a_row_opens_on_its_source_model_accelerator_and_engine():
    # a link that carries a row and nothing else: before, the page opened on the first model of the data set (the
    # row's configuration looked for among another model's rows) and said the row was ignored. Now it opens on the
    # row's own model, accelerator and engine, and, for a held-out row, on the held-out rows, the row broken down
    from calc.serving_fit import HOLDOUT_PATH
    shipped = measurements.load_measurements()
    first = sorted(shipped["model"].unique())[0]
    pick = shipped[(shipped["model"] != first) & (shipped["metric"] == "tpot_ms")
                   & shipped["statistic"].isin(["mean", "median"])].iloc[-1]
    at = open_page("app_pages/measured.py", ms_row=pick["id"])
    assert not at.exception and at.radio(key="ms_source").value == measured_views.SOURCES[0]
    assert (at.selectbox(key="ms_model").value, at.selectbox(key="ms_acc").value,
            at.selectbox(key="ms_engine").value) == (pick["model"], pick["accelerator"], pick["engine"])
    assert measured_views.row_id_of(at.selectbox(key="ms_row").value) == pick["id"]
    held = measurements.load_measurements(HOLDOUT_PATH)
    row = held[held["id"].str.startswith("ixslo-glm-5") & (held["metric"] == "tpot_ms")
               & (held["statistic"] == "median")].iloc[0]
    assert row["id"] not in set(shipped["id"])
    at = open_page("app_pages/measured.py", ms_row=row["id"])
    assert not at.exception and at.radio(key="ms_source").value == measured_views.SOURCES[3]
    assert (at.selectbox(key="ms_model").value, at.selectbox(key="ms_acc").value) == ("glm-5", "h200")
    assert measured_views.row_id_of(at.selectbox(key="ms_row").value) == row["id"]
    assert not [w for w in at.warning if "were ignored" in w.value]
    # once followed, the user's own choice of model stays (the link's row then drops out of the choices)
    # (the options are labels: "deepseek-v3 (52 of 270 rows published as deepseek-ai/DeepSeek-R1, ...)"; the value an id)
    other = next(measured_views.model_of_label(m) for m in at.selectbox(key="ms_model").options
                 if measured_views.model_of_label(m) != "glm-5")
    at.selectbox(key="ms_model").set_value(other).run()
    assert not at.exception and at.selectbox(key="ms_model").value == other
    assert at.radio(key="ms_source").value == measured_views.SOURCES[3]
    # a link that names its source keeps it, even where the row is not one of its rows
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[0], ms_row=row["id"])
    assert not at.exception and at.radio(key="ms_source").value == measured_views.SOURCES[0]
    # a link to a percentile row opens on its configuration; the row box, which breaks down means and medians, says
    # why it shows another row (before: "not one of its N options", the id cut before its "p99")
    from streamlit.testing.v1 import AppTest
    import pagetest
    p99 = held[held["id"].str.startswith("ixslo-qwen35") & (held["statistic"] == "p99")].iloc[0]
    at = AppTest.from_file(str(pagetest.APP), default_timeout=60)
    at.query_params["ms_row"] = p99["id"]
    at.switch_page("app_pages/measured.py").run()  # the page as the link opens it
    assert not at.exception and at.selectbox(key="ms_model").value == "qwen3.5-397b-a17b"
    notice = next(w.value for w in at.warning if "were ignored" in w.value)
    assert "is a p99 row: it is in the table above, with no breakdown; the first row's is shown" in notice
    assert "options" not in notice
    # what the link opened on is written into it, so that it reopens there though the row box refused its row
    # (before, the link was left bare and reopened on the data set's first model)
    link = _link(at)
    assert (link["ms_source"], link["ms_model"], link["ms_acc"]) == (measured_views.SOURCES[3], "qwen3.5-397b-a17b",
                                                                     "h200")
    assert link["ms_config"] == at.selectbox(key="ms_config").value
    assert f"{int(p99['input_len']):,} in / {int(p99['output_len'])} out" in link["ms_config"]
    # a row no measurement has: said so, not the row box's first and last labels
    at = AppTest.from_file(str(pagetest.APP), default_timeout=60)
    at.query_params["ms_row"] = "nonexistent"
    at.switch_page("app_pages/measured.py").run()
    notice = next(w.value for w in at.warning if "were ignored" in w.value)
    assert notice.endswith("ms_row=nonexistent (no row of these measurements has that id; the first row's "
                           "breakdown is shown).")

def test_a_rows_estimate_is_the_tables_for_every_kind_of_run():
    # A closed loop of R rounds mixes its burst's and steady state's times, a rate row sits between two points of
    # its grid: the breakdown's parts are mixed alike, so they add up to the table's estimate for each kind
    data = measurements.load_measurements()
    timed = data[data["metric"].isin(["tpot_ms", "ttft_ms", "itl_ms"]) & data["statistic"].isin(["mean", "median"])]
    notes = timed["notes"].fillna("").str.lower()
    rounds = notes.str.contains("rounds of c requests")
    kinds = [timed[timed["mode"] == "rate"], timed[rounds & (timed["statistic"] == "mean")].head(30),
             timed[(timed["mode"] == "concurrency") & ~rounds].head(60)]
    picks = []
    for kind in kinds:   # three rows of each kind that the serving model predicts, with the table's estimate
        predicted = comparison.compare_rows(kind)["predicted"].to_numpy()
        picks += [(r, p) for (_, r), p in zip(kind.iterrows(), predicted) if np.isfinite(p)][:3]
    assert len(picks) == 9
    for r, p in picks:
        tb = comparison.row_time(comparison.row_estimate(r), r["metric"], r["statistic"])  # a median ITL its own
        assert tb.estimate_s * 1e3 == pytest.approx(p, rel=1e-9), r["id"]
        assert sum(tb.parts().values()) == pytest.approx(tb.estimate_s, rel=1e-12)
        assert tb.bound_s <= tb.estimate_s and tb.low_s <= tb.estimate_s <= tb.high_s
    p99 = data[data["statistic"] == "p99"].iloc[0]
    with pytest.raises(ValueError, match="statistic p99"):
        comparison.row_estimate(p99)


def test_rows_without_an_estimate_still_plot_their_bound_and_say_why():
    # MLPerf v4.1's Llama-2-70B on MI300X ran vLLM eagerly (--enforce-eager), which the serving model leaves out:
    # the parity chart keeps each row's measured-against-bound point and says that no row has an estimate
    at = open_page("app_pages/measured.py", ms_model="llama-2-70b", ms_acc="mi300x", ms_engine="vllm")
    assert not at.exception
    table = next(t for t in tables(at) if "predicted" in t.columns)
    assert table["predicted"].isna().all() and table["bound"].notna().all()
    fig = next(f for f in figures(at) if any(t.get("name") == "bound" for t in f["data"]))
    bound = next(t for t in fig["data"] if t.get("name") == "bound")
    # the table shows four significant digits
    assert sorted(plotly_values(bound["x"])) == pytest.approx(sorted(table["value"].astype(float)), rel=1e-3)
    assert not any(t.get("name") == "serving estimate" for t in fig["data"])
    assert "no serving estimate" in str(fig["layout"].get("annotations"))


def test_inferencex_parser_on_a_sample_of_the_real_format():
    # tests/data/inferencex_sample.json: objects with the fields of utils/process_result.py of
    # SemiAnalysisAI/InferenceX (commit 77f3e680728b4026bb0b9e05dca7ba6cb5502362), times in seconds;
    # values made up for the test.
    df, skipped = inferencex.parse_inferencex((DATA / "inferencex_sample.json").read_bytes())
    assert len(skipped) == 1 and "multi-node" in skipped[0]
    dsr1 = df[df.model == "deepseek-v3"]
    assert set(dsr1.accelerator) == {"h200"} and set(dsr1.engine) == {"sglang"}
    assert dsr1.set_index(["metric", "statistic"]).loc[("tpot_ms", "mean"), "value"] == pytest.approx(16.0)  # 0.016 s
    assert dsr1.set_index(["metric", "statistic"]).loc[("ttft_ms", "median"), "value"] == pytest.approx(200.0)
    assert dsr1.set_index(["metric", "statistic"]).loc[("output_tok_per_s_per_gpu", "mean"), "value"] == 30.0
    # the mean of InferenceX's lengths, uniform from 0.8x to 1x the nominal 1024: 921.6
    assert (dsr1.concurrency == 4).all() and (dsr1.n_gpus == 8).all() and (dsr1.input_len == 922).all()
    oss = df[df.model == "gpt-oss-120b"]
    assert set(oss.accelerator) == {"mi355x"} and set(oss.weight_dtype) == {"mxfp4"}  # gpt-oss ships MXFP4
    # the rows compare: the serving model predicts them and the bound holds them
    table = comparison.compare_rows(dsr1)
    assert table["predicted"].notna().any() and table["bound"].notna().all()


@pytest.mark.parametrize("text, message", [
    (b"{not json", r"not JSON: at line 1, column 2 the text stops making sense \(expecting property name"),
    (b"", "an empty file: no InferenceX result in it"),
    (b" \n\t", "an empty file"),
    (b"[1, 2]", r"a list of something other than InferenceX result objects \(item 1 is a number\); each item "),
    (b'[{"hw": "h200"}, "x"]', r"\(item 2 is a string\)"),
    (b"3", r"expected an InferenceX result object \(an agg_\*.json result .*\) or a list of them, got a number"),
    (b'{"hw": "h200"}', "missing fields"),
    (b'{"hw": "h200", "conc": 4, "model": "x/unknown-model", "framework": "vllm", "precision": "fp8", "isl": 1,'
     b' "osl": 1, "tp": 1, "output_tput_per_gpu": 1}', "no model preset matches"),
    (b'{"hw": "tpu-v9", "conc": 4, "model": "openai/gpt-oss-120b", "framework": "vllm", "precision": "fp8",'
     b' "isl": 1, "osl": 1, "tp": 1, "output_tput_per_gpu": 1}', "no accelerator preset matches"),
    (b'{"hw": "h200", "conc": "four", "model": "openai/gpt-oss-120b", "framework": "vllm", "precision": "fp8",'
     b' "isl": 1, "osl": 1, "tp": 1, "output_tput_per_gpu": 1}', "'conc' must be a number"),
    (b"x" * (inferencex.MAX_BYTES + 1), "the limit is"),
])
def test_inferencex_parser_rejects_malformed_files(text, message):
    with pytest.raises(ValueError, match=message):
        inferencex.parse_inferencex(text, "r.json")


def test_the_breakdown_table_names_the_fixed_part_for_ttft_too():
    est = serving_estimate(L8, H100, 7936, 256, concurrency=32)
    frame = serving_views.breakdown_frame(est).set_index("part")
    row = frame.loc["fixed costs (per step, per request)"]
    assert row["tpot_s"] == est.tpot.fixed_s and row["ttft_s"] == est.ttft.fixed_s
    assert est.ttft.fixed_s > est.tpot.fixed_s > 0            # TTFT's holds the per-request cost as well
    assert "fixed per step" not in frame.index
    # the fixed cost's own parts follow it, "of which: ...", and add up to it; a dense model on one GPU shows no MoE
    # or MLA line
    parts = frame[frame.index.str.startswith("↳ of which: ")]
    assert len(parts) >= 2 and parts["tpot_s"].sum() == pytest.approx(row["tpot_s"], rel=1e-12)
    assert parts["ttft_s"].sum() == pytest.approx(row["ttft_s"], rel=1e-12)
    assert not [p for p in parts.index if "MoE routing" in p or "latent attention" in p]
    assert list(frame.index).index(parts.index[0]) == list(frame.index).index(row.name) + 1


def test_measurements_upload_reader():
    shipped = (Path(measurements.MEASUREMENTS_PATH)).read_bytes()
    assert len(measurements.measurements_from_text(shipped)) == len(measurements.load_measurements())
    # an empty upload names the columns a user's file needs, not all 24 of the data set's
    with pytest.raises(ValueError, match=r"^mine.csv line 1: the file is empty; the header must name at least model, "
                                         r"accelerator, engine, weight_dtype, input_len, output_len, metric, value "
                                         r"\(and n_gpus or tp\)$"):
        measurements.measurements_from_text(b"", "mine.csv")
    with pytest.raises(ValueError, match="mine.csv line 1: the header must name at least model, accelerator"):
        measurements.measurements_from_text(b"a,b\n1,2\n", "mine.csv")
    bad = shipped.decode().splitlines()
    bad[1] = bad[1].replace(",11147,", ",fast,")
    with pytest.raises(ValueError, match="mine.csv line 2, column 'value'"):
        measurements.measurements_from_text("\n".join(bad[:3]), "mine.csv")
    with pytest.raises(ValueError, match="not UTF-8"):
        measurements.measurements_from_text(b"\xff\xfe\x00", "mine.csv")


@pytest.mark.parametrize("column, text, words", [
    ("value", "1e308", "line 2, column 'value': 1e+308 is above 1,000,000,000,000"),
    ("input_len", str(2**27 + 1), "line 2, column 'input_len': 134,217,729 tokens is above the context limit"),
])
def test_an_implausible_uploaded_row_is_refused_by_name_not_drawn(column, text, words):
    """A one-row CSV with value 1e308 overflowed the log axis (1e308 * 1.25 = inf) into an exception box; it is
    refused at load with the line and column, and the data set stays on the page."""
    lines = Path(measurements.MEASUREMENTS_PATH).read_text().splitlines()[:2]
    import csv
    import io
    header, row = list(csv.reader(io.StringIO("\n".join(lines))))
    row[header.index(column)] = text
    out = io.StringIO()
    csv.writer(out).writerows([header, row])
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("mine.csv", out.getvalue().encode(), "text/csv")).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("That file cannot be read: mine.csv " + words), errors
    assert errors[0].endswith("."), errors                          # a sentence, with its full stop
    assert any(c.value.startswith("The data set is shown until the file can be read;") for c in at.caption)
    assert figures(at)                                              # the data set's charts still draw


def test_an_uploaded_csv_with_only_its_header_is_named_and_the_data_set_stays():
    header = Path(measurements.MEASUREMENTS_PATH).read_text().splitlines()[0]
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("mine.csv", (header + "\n").encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert "mine.csv holds no measurement row to compare (only its header)." in [w.value for w in at.warning]
    assert any(c.value.startswith("The data set is shown until the file can be read;") for c in at.caption)
    assert figures(at) and at.selectbox(key="ms_config").options          # the data set's selectors and charts
    # the data set's own file is offered to edit and load back (the shipped bytes pass an upload's checks whole)
    buttons = [b for b in at.get("download_button") if "data set's CSV" in b.proto.label]
    assert len(buttons) == 1
    shipped = Path(measurements.MEASUREMENTS_PATH).read_bytes()
    assert len(measurements.measurements_from_text(shipped, "serving_measurements.csv")) == len(
        measurements.load_measurements())


def test_an_upload_with_some_bad_rows_shows_its_good_rows_and_names_the_others():
    # two good rows of one Llama-3.1-8B run and two rows the reader refuses (a throughput that says not which tokens
    # it counts; a model calc has no preset of): the two good rows are drawn, the two others named by line with why
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value\n"
            "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,tok/s/gpu,1500\n"
            "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,TPOT (ms),9.5\n"
            "llama-9-1t,h100-sxm,1,vllm,bf16,1000,200,8,TPOT (ms),9.5\n"
            "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,Output tokens/s per GPU,800\n")
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("mine.csv", text.encode(), "text/csv")).run()
    assert not at.exception and not at.error
    warnings = [w.value for w in at.warning if w.value.startswith("2 rows of mine.csv left out")]
    assert len(warnings) == 1, [w.value for w in at.warning]
    assert warnings[0].startswith("2 rows of mine.csv left out, the other 2 shown: mine.csv line 2, column 'metric': "
                                  "'tok/s/gpu' says not which tokens it counts")
    assert "mine.csv line 4, column 'model'" in warnings[0] and warnings[0].endswith(".")
    assert at.selectbox(key="ms_model").value == "llama-3.1-8b" and figures(at)
    # none good: refused whole, as before, every bad row named
    bad = "\n".join(text.splitlines()[:2] + text.splitlines()[3:4]) + "\n"
    at.get("file_uploader")[0].set_value(("mine.csv", bad.encode(), "text/csv")).run()
    errors = [e.value for e in at.error]
    assert not at.exception and len(errors) == 1
    assert errors[0].startswith("That file cannot be read: mine.csv line 2, column 'metric'") and "line 3" in errors[0]


def test_rows_the_serving_model_does_not_estimate_are_said_to_be_compared_with_the_bound_alone():
    # two TPOT rows of runs without CUDA graphs (the eager launch cost is not calibrated): nothing on the chart, no
    # estimate in the table; the sentence under the chart says the table compares them with the bound, not with an
    # estimate it does not have
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value,notes\n"
            "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,tpot_ms,12,enforce-eager\n"
            "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,16,tpot_ms,14,enforce-eager\n")
    at = _upload_csv(text, "mine.csv")
    note = [i.value for i in at.info if "no point" in i.value]
    assert len(note) == 1 and note[0].endswith("the table below compares each row with the bound."), note
    warned = [w.value for w in at.warning if w.value.startswith("The serving model makes no estimate")]
    assert len(warned) == 1 and "run without CUDA graphs" in warned[0]
    table = next(t for t in tables(at) if "predicted" in t.columns)
    assert len(table) == 2 and table["predicted"].isna().all() and table["bound"].notna().all()


def test_percentile_rows_have_an_estimate_in_the_table_and_the_breakdown_says_why_it_skips_them():
    # a p99 TPOT row and the same run's mean (calc.serving_tails): both estimated, the p99's above the mean's; the
    # breakdown's row box offers the mean only and says why
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value\n"
            "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,p99_tpot_ms,12\n"
            "llama-3.1-8b,h100-sxm,1,vllm,bf16,1000,200,8,mean_tpot_ms,10\n")
    at = _upload_csv(text, "mine.csv")
    table = next(t for t in tables(at) if "predicted" in t.columns)
    assert list(table["statistic"]) == ["p99", "mean"] and table["predicted"].notna().all()
    assert table["predicted"].iat[0] > table["predicted"].iat[1]
    assert any(c.value == measured_views.TAIL_ROWS_WORDS for c in at.caption)
    # the chart of every row marks the percentile row's estimate apart from the mean's
    fig = next(f for f in figures(at) if any(t.get("name") == "bound" for t in f["data"]))
    traces = {t.get("name"): t for t in fig["data"]}
    assert plotly_values(traces["serving estimate, percentile rows (p99...)"]["x"]) == [12.0]
    assert plotly_values(traces["serving estimate"]["x"]) == [10.0]
    box = next(s for s in at.selectbox if s.label.startswith("Row"))
    assert len(box.options) == 1 and "mean" in box.options[0]


def test_an_upload_without_the_linked_model_shows_and_links_its_own_first_model():
    # the page opened on DeepSeek-V3 (a link); an upload of Llama rows only: the model box and the link both move to
    # the upload's first model, rather than the link keeping a model the box no longer shows
    shipped = measurements.load_measurements()
    rows = Path(measurements.MEASUREMENTS_PATH).read_text().splitlines()
    llama = [line for line, m in zip(rows[1:], shipped["model"]) if m == "llama-3.1-70b"][:3]
    assert llama
    at = open_page("app_pages/measured.py", ms_model="deepseek-v3")
    assert at.selectbox(key="ms_model").value == "deepseek-v3"
    at.radio(key="ms_source").set_value(measured_views.SOURCES[1]).run()
    at.get("file_uploader")[0].set_value(("mine.csv", "\n".join([rows[0]] + llama).encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="ms_model").value == "llama-3.1-70b"
    assert at.session_state["ms_model"] == "llama-3.1-70b"      # the value the link (bind="query-params") carries


def test_a_malformed_upload_loses_nothing_chosen_in_the_file_before_it():
    # Llama-3.1-8B rows of three accelerators (held-out MLPerf v5.1 rows: b200, h200, rtx-pro-6000); the user picks the
    # RTX PRO 6000, which the data set has no Llama-3.1-8B row of. A malformed file then shows the data set, whose
    # accelerator box cannot hold it (its first accelerator for the model stands in); the good file again brings
    # back the RTX PRO 6000 and the configuration chosen, not the upload's first accelerator (b200)
    from calc.serving_fit import HOLDOUT_PATH
    held = pd.read_csv(HOLDOUT_PATH, dtype=str, keep_default_na=False)
    good = held[(held["model"] == "llama-3.1-8b") & held["id"].str.startswith("mlperf51")].to_csv(index=False).encode()
    shipped = measurements.load_measurements()
    assert "rtx-pro-6000" not in set(shipped.loc[shipped["model"] == "llama-3.1-8b", "accelerator"])
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("mine.csv", good, "text/csv")).run()
    assert at.selectbox(key="ms_acc").options == ["b200", "h200", "rtx-pro-6000"]
    at.selectbox(key="ms_model").set_value("llama-3.1-8b").run()
    at.selectbox(key="ms_acc").set_value("rtx-pro-6000").run()
    configs = at.selectbox(key="ms_config").options
    assert len(configs) >= 2                        # the run's Server and Interactive rows differ in lengths
    at.selectbox(key="ms_config").set_value(configs[-1]).run()
    row_ids = [label.split(": ")[0] for label in at.selectbox(key="ms_row").options]  # "id: TTFT mean at ..."
    assert len(row_ids) >= 2 and at.selectbox(key="ms_row").value == row_ids[0]
    at.selectbox(key="ms_row").set_value(row_ids[-1]).run()
    # the file replaced: a run with no file in the uploader, then a file that cannot be read
    at.get("file_uploader")[0].set_value(None).run()
    at.get("file_uploader")[0].set_value(("mine.csv", b"model,accelerator\nllama,\x00\n", "text/csv")).run()
    assert not at.exception and at.error            # the file cannot be read: the data set stands in
    assert at.selectbox(key="ms_acc").value != "rtx-pro-6000"
    at.get("file_uploader")[0].set_value(("mine.csv", good, "text/csv")).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="ms_acc").value == "rtx-pro-6000"
    assert at.selectbox(key="ms_config").value == configs[-1]
    assert at.selectbox(key="ms_row").value == row_ids[-1]
    assert at.session_state["ms_acc"] == "rtx-pro-6000"     # the value the link (bind="query-params") carries


def test_a_configuration_chosen_in_a_file_stays_through_a_stand_in_whose_row_count_differs():
    # the user's file: the data set's own Llama-3.1-70B H100 TensorRT-LLM rows less one row of the last configuration
    # of at least two rows, so that configuration's label counts one row fewer in the file ("... (1 row)") than in
    # the data set ("... (2 rows)"). Chosen in the file, it stays chosen while a malformed file shows the data set
    # (where it had fallen back to the first configuration, the labels differing by their counts), and comes back
    # with the file
    shipped = measurements.load_measurements()
    group = shipped[(shipped["model"] == "llama-3.1-70b") & (shipped["accelerator"] == "h100-sxm")
                    & (shipped["engine"] == "trtllm")]
    configs = comparison.configurations(group)
    labels = measured_views.config_labels(configs)
    last = max(i for i, (_, c) in enumerate(configs.iterrows()) if c["rows"] >= 2 and i > 0)
    drop = measured_views.config_rows(group, configs.iloc[last])["id"].iloc[0]
    text = Path(measurements.MEASUREMENTS_PATH).read_text().splitlines()
    mine = [text[0]] + [line for line in text[1:] if line.split(",", 1)[0] in set(group["id"]) - {drop}]
    good = ("mine.csv", "\n".join(mine).encode(), "text/csv")
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(good).run()
    for key, value in (("ms_model", "llama-3.1-70b"), ("ms_acc", "h100-sxm"), ("ms_engine", "trtllm")):
        at.selectbox(key=key).set_value(value).run()
    in_file = next(o for o in at.selectbox(key="ms_config").options
                   if measured_views.config_setup(o) == measured_views.config_setup(labels[last]))
    assert in_file != labels[last]                  # one row fewer in the file: the labels differ by their count
    at.selectbox(key="ms_config").set_value(in_file).run()
    at.get("file_uploader")[0].set_value(None).run()
    at.get("file_uploader")[0].set_value(("mine.csv", b"model,accelerator\nllama,\x00\n", "text/csv")).run()
    assert not at.exception and at.error            # the data set stands in, on the same configuration
    assert at.selectbox(key="ms_config").value == labels[last]
    at.get("file_uploader")[0].set_value(good).run()
    assert not at.exception and not at.error and at.selectbox(key="ms_config").value == in_file


def test_a_link_naming_a_configuration_with_another_row_count_opens_on_that_configuration():
    # a link made while a file was loaded names its configuration with the file's row count ("... (2 rows)"); opened
    # on the data set, where the same configuration counts other rows, it opens on that configuration, with no
    # notice of an ignored link value, not on the first configuration
    shipped = measurements.load_measurements()
    group = shipped[(shipped["model"] == "llama-3.1-70b") & (shipped["accelerator"] == "h100-sxm")
                    & (shipped["engine"] == "trtllm")]
    labels = measured_views.config_labels(comparison.configurations(group))
    target = labels[3]
    linked = measured_views.config_setup(target) + " (1,234 rows)"
    assert linked not in labels and measured_views.config_setup(linked) == measured_views.config_setup(target)
    at = open_page("app_pages/measured.py", ms_model="llama-3.1-70b", ms_acc="h100-sxm", ms_engine="trtllm",
                   ms_config=linked)
    assert at.selectbox(key="ms_config").value == target
    assert not any("ms_config" in w.value for w in list(at.warning) + list(at.info) + list(at.caption))


def test_a_row_chosen_in_a_file_comes_back_after_a_stand_in_that_has_no_row_box():
    # held-out Llama-2-70B rows: on the H200, the configuration of 294 output tokens and its third row. A file that
    # cannot be read then shows the data set, whose Llama-2-70B H200 configuration measures no time, so the row box
    # is not drawn at all; the good file again brings back that configuration and that row
    from calc.serving_fit import HOLDOUT_PATH
    held = pd.read_csv(HOLDOUT_PATH, dtype=str, keep_default_na=False)
    good = ("mine.csv", held[held["model"] == "llama-2-70b"].to_csv(index=False).encode(), "text/csv")
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(good).run()
    at.selectbox(key="ms_acc").set_value("h200").run()
    config = next(c for c in at.selectbox(key="ms_config").options if "222 in / 294 out" in c)
    at.selectbox(key="ms_config").set_value(config).run()
    row = [label.split(": ")[0] for label in at.selectbox(key="ms_row").options][2]
    at.selectbox(key="ms_row").set_value(row).run()
    at.get("file_uploader")[0].set_value(None).run()
    at.get("file_uploader")[0].set_value(("mine.csv", b"\x00\x01 not a csv", "text/csv")).run()
    assert not at.exception and at.error
    assert "ms_row" not in [b.key for b in at.selectbox]            # the stand-in's configuration has no time row
    at.get("file_uploader")[0].set_value(good).run()
    assert not at.exception and not at.error
    assert (at.selectbox(key="ms_acc").value, at.selectbox(key="ms_config").value,
            at.selectbox(key="ms_row").value) == ("h200", config, row)


def test_endpoint_page_predicts_each_concurrency_with_the_serving_estimate():
    import json

    from test_page_endpoint import open_section, vllm_result
    at = open_section(ep_src="a result file")
    # two `vllm bench serve --save-result` results: concurrency 1 and 4, 256 prompt + 64 output tokens
    text = "\n".join(json.dumps(vllm_result(c, 30.0 * c, 9.0 + c, 8.0, 700.0)) for c in (4, 1))
    at.text_area(key="ep_paste").set_value(text).run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns)
    # a result file does not say whether its lengths were fixed: the default is varied lengths, each level a run
    # of its requests over its concurrency rounds (the first round a burst), and the page says so
    assert at.radio(key="ep_lengths").value == "varied"
    assert any("run of varied lengths" in c.value and "16 at concurrency 1, 4 at concurrency 4" in c.value
               for c in at.caption)
    for _, row in table.iterrows():
        c = int(row["concurrency"])
        rounds = (row["requests_ok"] + row["requests_failed"]) / c
        est = serving_estimate(L8, H100, 256, 64, concurrency=c, lengths="varied", rounds=max(rounds, 1.0))
        steady = serving_estimate(L8, H100, 256, 64, concurrency=c)
        if c > 1:  # the first round's burst adds to the steady state's TTFT
            assert row["est_ttft_ms"] > steady.ttft.estimate_s * 1e3
        assert row["est_tpot_ms"] == pytest.approx(est.tpot.estimate_s * 1e3)
        assert row["est_ttft_ms"] == pytest.approx(est.ttft.estimate_s * 1e3)
        assert row["est_tpot_ms_low"] == pytest.approx(est.tpot.low_s * 1e3)
        # TTFT has its range too, from the same estimate (calc.serving's cross-validated spread)
        assert row["est_ttft_ms_low"] == pytest.approx(est.ttft.low_s * 1e3)
        assert row["est_ttft_ms_high"] == pytest.approx(est.ttft.high_s * 1e3)
        assert row["est_ttft_ms_low"] < row["est_ttft_ms"] < row["est_ttft_ms_high"]
        assert row["ratio_tpot_est"] == pytest.approx(row["tpot_ms_p50"] / row["est_tpot_ms"])
        assert row["est_tpot_ms"] > row["pred_tpot_ms"]  # the estimate above the bound
    # the TTFT range sits beside the TTFT estimate, as TPOT's does beside its own
    cols = list(table.columns)
    i = cols.index("est_ttft_ms")
    assert cols[i:i + 3] == ["est_ttft_ms", "est_ttft_ms_low", "est_ttft_ms_high"]


def test_endpoint_page_breaks_down_one_levels_estimate_with_its_measurement():
    """Below the table: the chosen level's serving estimate, where its TPOT and its TTFT go, each bar with the
    level's measured p50 marked; the highest level by default."""
    import json

    from test_page_endpoint import open_section, vllm_result
    at = open_section(ep_src="a result file")
    # concurrency 1 and 4 (TTFT p50 30 x c ms, TPOT p50 9 + c ms), 256 prompt + 64 output tokens
    text = "\n".join(json.dumps(vllm_result(c, 30.0 * c, 9.0 + c, 8.0, 700.0)) for c in (4, 1))
    at.text_area(key="ep_paste").set_value(text).run()
    assert not at.exception and not at.error
    assert at.radio(key="ep_level").value == 4  # the heaviest load measured
    table = next(d.value for d in at.dataframe if "ttft_ms_p50" in d.value.columns).set_index("concurrency")
    for level, tpot_ms, ttft_ms in ((4, 13.0, 120.0), (1, 10.0, 30.0)):
        if level != 4:
            at.radio(key="ep_level").set_value(level).run()
            assert not at.exception
        # the file's requests at that level over its concurrency: the run's rounds (varied lengths, the default)
        rounds = max(float(table.loc[level, "requests_ok"] + table.loc[level, "requests_failed"]) / level, 1.0)
        est = serving_estimate(L8, H100, 256, 64, concurrency=level, lengths="varied", rounds=rounds)
        # the convention is said once, above the table with every level's rounds, not again below
        assert not any(c.value.startswith("How the requests arrive") for c in at.caption)
        _check_estimate(at, dataclasses.replace(est, arrivals=""))  # TPOT: bound, estimate with range, bars adding up to the estimate
        for which, tb, measured_ms in (("TPOT", est.tpot, tpot_ms), ("TTFT", est.ttft, ttft_ms)):
            fig = next(f for f in figures(at) if any(t.get("y") == [which] for t in f["data"])
                       and "serving estimate and range" in [t.get("name") for t in f["data"]])
            bars = {t["name"]: plotly_values(t["x"])[0] for t in fig["data"] if t.get("type") == "bar"}
            assert sum(bars.values()) == pytest.approx(tb.estimate_s * 1e3, rel=1e-9)
            mark = next(t for t in fig["data"] if t.get("name") == "serving estimate and range")
            # the range as the error bar: high - estimate above, estimate - low below
            assert plotly_values(mark["error_x"]["array"])[0] == pytest.approx((tb.high_s - tb.estimate_s) * 1e3)
            assert plotly_values(mark["error_x"]["arrayminus"])[0] == pytest.approx((tb.estimate_s - tb.low_s) * 1e3)
            measured = next(t for t in fig["data"] if t.get("name") == "measured p50")
            assert plotly_values(measured["x"]) == [measured_ms]
        # the measurement in words: 13 ms / the estimate, and where it falls against the range
        texts = [m.value for m in at.markdown]
        ratio = tpot_ms / (est.tpot.estimate_s * 1e3)
        assert any(t.startswith(f"Measured p50 TPOT: **{tpot_ms:.2f} ms**, {ratio:.2f}x the serving estimate")
                   for t in texts), texts
        assert any(f"TTFT at concurrency {level}" in t and serving_views.range_text(est.ttft.low_s, est.ttft.high_s)
                   in t for t in texts), texts


def test_the_breakdown_marks_a_measured_time_only_when_given_one():
    est = serving_estimate(L8, H100, 256, 64, concurrency=4)
    plain = serving_views.breakdown_figure(est, "ttft").build()
    names = [t.name for t in plain.data]
    assert serving_views.MEASURED_TRACE not in names and "serving estimate and range" in names
    assert [t.name for t in serving_views.breakdown_figure(est, "ttft", float("nan")).build().data] == names
    marked = serving_views.breakdown_figure(est, "ttft", 0.12).build()
    assert [t.name for t in marked.data] == names + [serving_views.MEASURED_TRACE]
    assert list(marked.data[-1].x) == [pytest.approx(120.0)] and list(marked.data[-1].y) == ["TTFT"]


def test_the_breakdown_axis_follows_the_longest_time_drawn():
    """ms under a second, s under two minutes, min above (fmt_seconds' thresholds): a run whose TTFT is measured
    at 271.2 s (a Kimi-K2-Thinking recipe row) is drawn in minutes, 271.2 / 60 = 4.52 min, and the bars still add
    up to the estimate in that unit."""
    assert serving_views.axis_unit(0.25) == (1e3, "ms") and serving_views.axis_unit(5.0) == (1.0, "s")
    assert serving_views.axis_unit(271.2) == (pytest.approx(1 / 60), "min")
    est = serving_estimate(L8, H100, 256, 64, concurrency=4)
    fig = serving_views.breakdown_figure(est, "ttft", 271.2).build()
    assert fig.layout.xaxis.ticksuffix == " min"
    assert list(fig.data[-1].x) == [pytest.approx(4.52)]
    bars = sum(t.x[0] for t in fig.data if t.type == "bar")
    assert bars == pytest.approx(est.ttft.estimate_s / 60, rel=1e-9)
    assert serving_views.breakdown_figure(est, "ttft").build().layout.xaxis.ticksuffix == " ms"


def test_configurations_with_points_on_the_axes_come_first():
    """A configuration of TTFT and TPOT rows alone (nothing to draw on throughput per GPU against tokens/s per
    user) comes after one with a throughput run even when it has more rows; within each kind, most rows first."""
    base = dict(model="llama-3.1-8b", accelerator="h100-sxm", engine="vllm", tp=1, pp=1, ep=1, dp=1, n_gpus=1,
                weight_dtype="bf16", kv_dtype="", input_len=1024, output_len=128, mode="concurrency",
                statistic="mean", source_id="s", notes="")
    latency_only = [dict(base, input_len=2048, metric=m, concurrency=c, value=v)
                    for c in (1, 8, 32) for m, v in (("tpot_ms", 8.0 + c), ("ttft_ms", 30.0 + c))]   # 6 rows
    with_points = [dict(base, metric="tpot_ms", concurrency=4, value=10.0),
                   dict(base, metric="output_tok_per_s_per_gpu", concurrency=4, value=380.0)]          # 2 rows, 1 run
    c = comparison.configurations(pd.DataFrame(latency_only + with_points))
    assert list(c["input_len"]) == [1024, 2048]       # fewer rows, but the one with a point comes first
    assert list(c["rows"]) == [2, 6] and list(c["points"]) == [1, 0]


def _shipped_config(**where):
    """The one configuration of the shipped data set with the values ``where`` (CONFIG_COLUMNS)."""
    configs = comparison.configurations(measurements.load_measurements())
    mask = np.ones(len(configs), dtype=bool)
    for k, v in where.items():
        mask &= (configs[k] == v).to_numpy()
    assert mask.any(), where
    return configs[mask].iloc[0]


def test_labels_say_replicas_where_dp_counts_copies_and_attention_dp_where_attention_is_data_parallel():
    # dense Llama-2-70B at TP2 on 8 GPUs (dp 4 in the data set): four independent copies of two GPUs each
    dense = _shipped_config(model="llama-2-70b", accelerator="h100-sxm", tp=2, dp=4, n_gpus=8)
    assert comparison.config_parallelism(dense) == (1, 4)
    label = comparison.config_label(dense)
    assert label.startswith("TP2 PP1 EP1 on 8 GPUs, 4 replicas of 2 GPUs, ") and "attention" not in label
    # Mixtral has experts, but at EP1 its dp 8 is eight copies of one GPU too
    mixtral = _shipped_config(model="mixtral-8x7b", accelerator="h100-sxm", tp=1, ep=1, dp=8)
    assert comparison.config_label(mixtral).startswith("TP1 PP1 EP1 on 8 GPUs, 8 replicas of 1 GPU, ")
    # DeepSeek-V3 at TP1 EP8 on 8 GPUs: one replica whose attention runs in 8 data-parallel groups
    dsv3 = _shipped_config(model="deepseek-v3", accelerator="h200", engine="sglang", tp=1, ep=8, n_gpus=8)
    assert comparison.config_parallelism(dsv3) == (8, 1)
    assert comparison.config_label(dsv3).startswith("TP1 PP1 EP8 on 8 GPUs, attention DP8, ")
    # Kimi-K2 at TP4 EP16 on 16 GPUs (dp 4): attention in 16 / 4 = 4 groups of TP4, one replica
    kimi = _shipped_config(model="kimi-k2", tp=4, ep=16)
    assert comparison.config_parallelism(kimi) == (4, 1)
    assert "attention DP4" in comparison.config_label(kimi) and "replica" not in comparison.config_label(kimi)
    # both at once: TP1 EP8 on 16 GPUs is two replicas of 8 GPUs, each with attention DP8
    both = dsv3.copy()
    both["n_gpus"], both["dp"] = 16, 16
    assert comparison.config_parallelism(both) == (8, 2)
    assert comparison.config_label(both).startswith("TP1 PP1 EP8 on 16 GPUs, attention DP8, 2 replicas of 8 GPUs, ")
    # one GPU is one GPU, not "1 GPUs"
    one = _shipped_config(model="llama-3.1-70b", accelerator="b200", engine="trtllm", n_gpus=1)
    assert comparison.config_label(one).startswith("TP1 PP1 EP1 on 1 GPU, nvfp4 / KV ")


def test_configurations_with_something_to_draw_come_before_ttft_only_ones():
    # Llama-2-70B on A100 with TensorRT-LLM: four configurations with one throughput run each, three of TTFT
    # rows alone (one with 2 rows); none has a run with both axes. The throughput runs, drawn at the estimate's
    # tokens/s per user, come first even with fewer rows.
    df = measurements.load_measurements()
    d = df[(df.model == "llama-2-70b") & (df.accelerator == "a100-80gb") & (df.engine == "trtllm")]
    c = comparison.configurations(d)
    assert list(c["points"]) == [0] * 7
    assert list(c["throughput"]) == [1, 1, 1, 1, 0, 0, 0]
    assert list(c["rows"][4:]) == [2, 1, 1] and list(c["output_len"][4:]) == [1, 1, 1]


def test_no_point_sentence_names_the_metrics_the_rows_measure():
    base = dict(model="llama-3.1-8b", accelerator="h100-sxm", engine="vllm", tp=1, pp=1, ep=1, dp=1, n_gpus=1,
                weight_dtype="bf16", kv_dtype="", input_len=1024, output_len=128, mode="concurrency",
                statistic="mean", source_id="s", notes="")
    ttft = pd.DataFrame([dict(base, metric="ttft_ms", concurrency=c, value=30.0 + c) for c in (1, 2, 4, 8, 16, 32)])
    assert comparison.no_point_sentence(ttft).startswith(
        "These 6 rows measure TTFT only: no point on the throughput-per-GPU vs tokens-per-user chart")
    both = pd.DataFrame([dict(base, metric=m, concurrency=1, value=v) for m, v in (("tpot_ms", 9.0), ("ttft_ms", 31.0))])
    assert comparison.no_point_sentence(both).startswith("These 2 rows measure TPOT and TTFT: no point")
    assert comparison.no_point_sentence(ttft.iloc[:1]).startswith("This row measures TTFT only: ")
    # a throughput run is drawn (at the estimate's tokens/s per user): nothing to say
    drawn = pd.concat([ttft, pd.DataFrame([dict(base, metric="output_tok_per_s", concurrency=8, value=900.0)])])
    assert comparison.no_point_sentence(drawn) == ""


def test_rate_points_put_a_run_at_a_request_rate_on_the_frontier_axes():
    # a run at 12.5 requests/s on 8 GPUs: 8,000 output tokens/s in all and a mean TPOT of 20 ms -> 1,000 tok/s per
    # GPU and 1000 / 20 = 50 tok/s per user; its median TPOT (25 ms) is not taken while the mean is there. A second
    # rate with no TPOT gives no point; a closed loop's run is measured_points', not rate_points'.
    base = dict(model="llama-3.1-70b", accelerator="h100-sxm", engine="vllm", tp=8, pp=1, ep=1, dp=1, n_gpus=8,
                weight_dtype="bf16", kv_dtype="", input_len=1024, output_len=128, mode="rate", concurrency=np.nan,
                source_id="s", notes="", len_dist="sharegpt", engine_version="0.10.0")
    rows = pd.DataFrame([dict(base, request_rate_per_s=12.5, metric="output_tok_per_s", statistic="mean", value=8000.0),
                         dict(base, request_rate_per_s=12.5, metric="tpot_ms", statistic="median", value=25.0),
                         dict(base, request_rate_per_s=12.5, metric="tpot_ms", statistic="mean", value=20.0),
                         dict(base, request_rate_per_s=25.0, metric="output_tok_per_s", statistic="mean", value=9000.0),
                         dict(base, mode="concurrency", concurrency=16, request_rate_per_s=np.nan,
                              metric="tpot_ms", statistic="mean", value=15.0),
                         dict(base, mode="concurrency", concurrency=16, request_rate_per_s=np.nan,
                              metric="output_tok_per_s", statistic="mean", value=7000.0)])
    at_rate = comparison.rate_points(rows)
    assert len(at_rate) == 1 and at_rate["request_rate_per_s"].iat[0] == 12.5
    assert at_rate["tokens_per_s_per_gpu"].iat[0] == pytest.approx(1000.0)
    assert at_rate["tokens_per_s_per_user"].iat[0] == pytest.approx(50.0)
    closed = comparison.measured_points(rows)
    assert list(closed["concurrency"]) == [16] and closed["tokens_per_s_per_user"].iat[0] == pytest.approx(1000 / 15)
    # the chart draws the rate run as its own series, its rate in the hover
    fig = measured_views.frontier_figure(
        pd.DataFrame({"tokens_per_s_per_user": [40.0, 80.0], "tokens_per_s_per_gpu": [900.0, 500.0],
                      "tokens_per_s_per_gpu_low": [800.0, 450.0], "tokens_per_s_per_gpu_high": [1000.0, 550.0],
                      "concurrency": [16, 4], "bound_tokens_per_s_per_user": [60.0, 120.0],
                      "bound_tokens_per_s_per_gpu": [2000.0, 900.0]}), closed,
        pd.DataFrame(columns=["x", "y", "concurrency"]), at_rate)
    drawn = [t for t in fig.build().data if t.name == "measured at a request rate"]
    assert len(drawn) == 1 and list(drawn[0].y) == [1000.0] and list(drawn[0].customdata) == [12.5]
    # rate rows with a throughput and a TPOT are drawn, so no "no point" sentence for them
    assert comparison.no_point_sentence(rows[rows["mode"] == "rate"]) == ""
    # the table names each rate row's rate, and none for the closed loop's
    table = comparison.compare_rows(rows.assign(id=[f"r{i}" for i in range(len(rows))]))
    assert list(table["request_rate_per_s"].fillna(0)) == [12.5, 12.5, 12.5, 25.0, 0, 0]


def test_measured_page_says_why_a_ttft_only_configuration_has_no_point_and_shows_its_rows():
    at = open_page("app_pages/measured.py", ms_model="llama-2-70b", ms_acc="a100-80gb", ms_engine="trtllm")
    box = at.selectbox(key="ms_config")
    # the first configuration has a throughput run to draw; the TTFT-only ones come last
    assert box.value.endswith("128 in / 128 out (1 row)")
    assert not [i for i in at.info if "no point" in i.value]
    ttft_label = next(o for o in box.options if o.endswith("128 in / 1 out (2 rows)"))
    box.set_value(ttft_label).run()
    assert not at.exception
    note = [i.value for i in at.info if "no point" in i.value]
    assert note == ["These 2 rows measure TTFT only: no point on the throughput-per-GPU vs tokens-per-user chart, "
                    "which needs a throughput run (at a concurrency, at a request rate with its TPOT, or offline); "
                    "the table below compares each row "
                    "with the serving estimate and the bound."]
    table = next(t for t in tables(at) if "predicted" in t.columns)
    df = measurements.load_measurements()
    want = df[(df.model == "llama-2-70b") & (df.accelerator == "a100-80gb") & (df.tp == 4) & (df.input_len == 128)
              & (df.output_len == 1)]
    assert sorted(table["id"]) == sorted(want["id"]) and set(want["metric"]) == {"ttft_ms"} and len(want) == 2


def test_measured_page_says_its_curve_is_a_current_release_and_its_rows_their_own():
    # TensorRT-LLM's Llama-2-70B rows ran releases of 2023-24; the curve is dated at the newest release the
    # benchmarks hold (vLLM's, for every engine), so the caption must not call the rows' estimates current
    from calc.serving_terms import SOFTWARE_LATEST_DAY, SOFTWARE_LATEST_RELEASE
    at = open_page("app_pages/measured.py", ms_model="llama-2-70b", ms_acc="a100-80gb", ms_engine="trtllm")
    assert not at.exception
    caption = next(c.value for c in at.caption if "The curve is for a current release of TensorRT-LLM" in c.value)
    assert SOFTWARE_LATEST_RELEASE.split(" of ")[0] in caption and SOFTWARE_LATEST_DAY.isoformat() in caption
    assert "the release that row ran" in caption


def test_the_curve_reaches_the_largest_measured_concurrency():
    # TensorRT-LLM's DeepSeek-R1 FP4 max-throughput run on 8 B200s: TP1 EP8 (attention DP8, one replica) at
    # --concurrency 3072, beyond the frontier's default span of 1-1,024: the curve now runs to 3,072 per replica,
    # so the run's throughput point lies on the curve's span, not beyond its end.
    df = measurements.load_measurements()
    rows = df[df["id"].str.startswith("trtllm-dsr1-b200-maxtput-fp16kv")]
    assert comparison.largest_concurrency_per_replica(rows) == 3072.0
    config = comparison.configurations(rows).iloc[0]
    fr = comparison.config_frontier(config.to_dict(), up_to=3072.0)
    # whole clients on a geometric grid of 256 points (rounded, each once: 177 of them)
    assert fr["concurrency"].max() == pytest.approx(3072.0) and len(fr) == 177
    assert (fr["concurrency"] == fr["concurrency"].round()).all()
    assert comparison.config_frontier(config.to_dict())["concurrency"].max() == pytest.approx(1024.0)
    # the rows ran FP4 on the B200's FP4 tensor cores, as the fit takes them: the curve says nothing of the
    # sidebar's matmul precision (calc.serving_terms.engine_matmul's notice is for a user's own choice)
    assert config["weight_dtype"] in ("nvfp4", "fp4")
    assert not any("FP4 tensor cores" in n for n in fr.attrs["notices"])
    assert np.isnan(comparison.largest_concurrency_per_replica(rows.assign(concurrency=pd.NA)))


def test_the_curve_reaches_the_batch_of_offline_runs_and_of_runs_at_a_rate():
    # MLPerf v6.0's DeepSeek-R1 Offline on 8 B200 (held out): TP1 EP8 with gpu_batch_size 512 per engine, which
    # TensorRT-LLM counts per attention-DP rank: 8 x 512 = 4,096 decode at once (the cache of a rank holds more), so
    # the curve must reach 4,096 per replica for the offline point (drawn at the curve's end) to sit at its batch
    hold = measurements.load_measurements(measurements.DATA_DIR / "serving_holdout.csv")
    run = "mlperf60-closed-dell-xe9780-x86-b200-sxm-180gbx8-trt-deepseek-r1-"
    offline = hold[hold["id"] == run + "offline-output-tok-per-s"]
    assert "gpu_batch_size 512 per engine" in offline["notes"].iloc[0]
    assert np.isnan(comparison.largest_concurrency_per_replica(offline))
    assert comparison.frontier_span_per_replica(offline) == 4096.0
    # the same system's Server run: Little's law on its decode steps, output tokens/s per replica x its TPOT
    server = hold[hold["id"].str.startswith(run + "server-")]
    tput = server.loc[server["metric"] == "output_tok_per_s", "value"].iloc[0]
    tpot = server.loc[(server["metric"] == "tpot_ms") & (server["statistic"] == "median"), "value"].iloc[0]
    assert comparison.frontier_span_per_replica(server) == pytest.approx(tput * tpot / 1000.0, rel=1e-9)
    both = pd.concat([offline, server])
    assert comparison.frontier_span_per_replica(both) == max(4096.0, tput * tpot / 1000.0)
    assert np.isnan(comparison.frontier_span_per_replica(offline.iloc[0:0]))


def test_the_held_out_rows_can_be_chosen_on_the_measured_page():
    # the fourth source shows calc/data/serving_holdout.csv, rows no fit reads: MLPerf v6.0's DeepSeek-R1 on B300
    # with TensorRT-LLM is among its configurations, and its table's rows carry the held-out ids and the settings
    # read from their notes (the max batch per attention-DP rank)
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[3], ms_model="deepseek-v3",
                   ms_acc="b300", ms_engine="trtllm")
    assert not at.exception
    assert any("kept out of the fit" in c.value for c in at.caption)
    hold = measurements.load_measurements(measurements.DATA_DIR / "serving_holdout.csv")
    assert measured_views.load_data(measured_views.SOURCES[3])[0]["id"].tolist() == hold["id"].tolist()
    table = next(t for t in tables(at) if "from_notes" in t.columns or "settings read from its notes" in t.columns)
    ids = " ".join(str(v) for v in table.astype(str).to_numpy().ravel())
    assert "mlperf" in ids and "per attention-DP rank" in ids
    assert measured_views.upload_inputs(measured_views.SOURCES[3]) == {}


def test_a_throughput_configuration_says_what_its_rows_estimates_count():
    # ROCm's MI300X table, Llama-3.1-405B fp8 on 8 GPUs, 1,500 requests of 128 + 4,096 tokens: rows of throughput
    # only, so no time to break down; the page still says that the estimate counts vLLM's recompute of the
    # sequences its cache cannot hold whole (the cache holds under 1,000 of the 1,500), naming the rows
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[3], ms_model="llama-3.1-405b",
                   ms_acc="mi300x", ms_engine="vllm")
    assert not at.exception
    label = next(o for o in at.selectbox(key="ms_config").options if "128 in / 4,096 out" in o)
    at.selectbox(key="ms_config").set_value(label).run()
    assert not at.exception
    said = [i.value for i in at.info if "grow together" in i.value]
    assert said and "1,500 requests per replica in service start together" in said[0]
    assert "every row above" in said[0]  # the ten rows of this configuration, one notice
    assert any("no time to break down" in c.value for c in at.caption)


def test_measured_page_engine_shows_by_name_and_a_link_may_name_it_either_way():
    # the engine box shows "TensorRT-LLM" (calc's id "trtllm"); a link with either form opens it, without a warning
    for value in ("TensorRT-LLM", "trtllm", "tensorrt-llm"):
        at = open_page("app_pages/measured.py", ms_model="deepseek-v3", ms_acc="b200", ms_engine=value)
        assert not at.exception
        box = at.selectbox(key="ms_engine")
        assert box.value == "trtllm" and box.format_func(box.value) == "TensorRT-LLM", value
        assert not [w for w in at.warning if "ms_engine" in w.value], value


def _link(at) -> dict[str, str]:
    """The page's URL parameters (AppTest holds the ones the app wrote), one value each."""
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_measured_page_link_keeps_every_choice_whatever_it_is():
    # b200 is gpt-oss-120b's first accelerator, the accelerator box's default: Streamlit leaves a widget's default out
    # of the link, so the link lost ms_acc=b200 (and a link without it opens on whatever the data list first)
    at = open_page("app_pages/measured.py", ms_model="gpt-oss-120b", ms_acc="b200", ms_engine="vLLM")
    assert at.selectbox(key="ms_acc").value == "b200" == at.selectbox(key="ms_acc").options[0]
    configs = at.selectbox(key="ms_config").options
    at.selectbox(key="ms_config").set_value(configs[1]).run()
    assert not at.exception
    link = _link(at)
    assert {k: link.get(k) for k in ("ms_source", "ms_model", "ms_acc", "ms_engine", "ms_config")} == {
        "ms_source": measured_views.SOURCES[0], "ms_model": "gpt-oss-120b", "ms_acc": "b200", "ms_engine": "vLLM",
        "ms_config": configs[1]}
    row = at.selectbox(key="ms_row")
    assert link["ms_row"] == row.format_func(row.value)
    # the row the page wrote into the link is no row link to follow: the next configuration picked stays
    at.selectbox(key="ms_config").set_value(configs[0]).run()
    assert at.selectbox(key="ms_config").value == configs[0] == _link(at)["ms_config"]
    # a session opened without parameters: after one change, the link holds every choice the page shows
    fresh = open_page("app_pages/measured.py")
    fresh.selectbox(key="ms_engine").set_value(fresh.selectbox(key="ms_engine").options[-1]).run()
    link = _link(fresh)
    for key in ("ms_acc", "ms_config"):
        assert link.get(key) == fresh.selectbox(key=key).value, key
    # the model as its box's label, which reads back as the id ("deepseek-v3 (941 of 1,337 rows published as ...)")
    assert measured_views.model_of_label(link.get("ms_model")) == fresh.selectbox(key="ms_model").value
    assert link.get("ms_source") == fresh.radio(key="ms_source").value == measured_views.SOURCES[0]


def _after_the_sources(at, n: int = 3) -> list[tuple]:
    """The first ``n`` elements of the page body after its Measurements radio, in page order: (type, key, text), the
    text a caption's or an alert's value or a widget's label (a frame: its key)."""
    order = [node for node in _in_page_order(at.main) if getattr(node, "type", None) not in (None, "column")]
    at_radio = next(i for i, node in enumerate(order) if getattr(node, "key", None) == "ms_source")
    return [(node.type, getattr(node, "key", None),
             getattr(node, "label", None) if hasattr(node, "label") else getattr(node, "value", None))
            for node in order[at_radio + 1:at_radio + 1 + n]]


def test_the_measurements_upload_box_sits_under_the_sources_with_a_label_of_its_own():
    # The upload box showed only once "My CSV" was chosen, labelled "Upload a measurements CSV", and a first visit
    # saw the sidebar's "Your own model (config.json)" upload before it: measurements went into the config.json slot.
    at = open_page("app_pages/measured.py")
    assert _after_the_sources(at, 1) == [("caption", None, measured_views.OWN_DATA_WORDS)]
    assert all(words in measured_views.OWN_DATA_WORDS
               for words in (measured_views.SOURCES[1], measured_views.SOURCES[2], "config.json"))
    for source, kind in ((measured_views.SOURCES[1], "csv"), (measured_views.SOURCES[2], "json")):
        at.radio(key="ms_source").set_value(source).run()
        assert not at.exception
        # right under the sources, in a frame of its own: the upload box, its label saying what it takes
        assert _after_the_sources(at, 2) == [("flex_container", "ms_upload_box", None),
                                             ("file_uploader", f"ms_up_{kind}", measured_views.UPLOAD_LABELS[kind])]
        label = measured_views.UPLOAD_LABELS[kind]
        assert "measurements" in label and kind.upper() in label
        # the first upload box of the page, before the sidebar's config.json one
        assert [u.proto.label for u in at.get("file_uploader")] == [measured_views.UPLOAD_LABELS[kind],
                                                                    "Upload config.json"]


def test_before_a_file_is_loaded_the_page_says_so_and_marks_the_data_set_standing_in():
    # With "My CSV" chosen and no file yet, the page said only "Upload a file to compare it; the data set is shown
    # until then" and drew the data set's charts and table under their plain headings: users read them as theirs.
    at = open_page("app_pages/measured.py", ms_model="gpt-oss-120b", ms_acc="h200")
    boxes = ("ms_model", "ms_acc", "ms_engine", "ms_config")
    chosen = [at.selectbox(key=k).value for k in boxes]
    assert not [m.value for m in at.markdown if measured_views.STAND_IN_MARK in m.value]   # the data set: unmarked
    for source, kind in ((measured_views.SOURCES[1], "csv"), (measured_views.SOURCES[2], "json")):
        at.radio(key="ms_source").set_value(source).run()
        assert not at.exception
        said = [w.value for w in at.warning if w.value.startswith("**No file loaded yet**")]
        assert said == [measured_views.NO_FILE_WORDS[kind]]
        assert not [i.value for i in at.info if "the data set is shown" in i.value]
        # every heading over the data set's charts and table marks it as the shipped data set, not the user's file
        marked = [m.value for m in at.markdown if m.value.startswith(measured_views.STAND_IN_MARK + " **")]
        assert [h.split("**")[1].split(":")[0] for h in marked] == [
            "gpt-oss-120b on h200, TensorRT-LLM", "Every row", "Where one row's time goes"]
        assert "not your file" in measured_views.STAND_IN_MARK
        assert any(c.value.startswith("These three choose among the shipped data set's") for c in at.caption)
        # the choices made stay, in the boxes and the link
        assert [at.selectbox(key=k).value for k in boxes] == chosen
        assert (_link(at).get("ms_model"), _link(at).get("ms_acc")) == ("gpt-oss-120b", "h200")
    # what a CSV needs, named where it is missing: the required columns and the template offered above it
    words = measured_views.NO_FILE_WORDS["csv"]
    assert all(column in words for column in measurements.REQUIRED_COLUMNS) and "n_gpus or tp" in words
    at.radio(key="ms_source").set_value(measured_views.SOURCES[1]).run()
    assert [b.proto.label for b in at.get("download_button") if "data set's CSV" in b.proto.label]
    assert measured_views.upload_inputs(measured_views.SOURCES[1], None, None, stand_in=True)["rows"].startswith(
        "the shipped data set, standing in")
    # back to the data set: the choices made before are there
    at.radio(key="ms_source").set_value(measured_views.SOURCES[0]).run()
    assert [at.selectbox(key=k).value for k in boxes] == chosen
    # a file loaded: its rows, unmarked, and nothing said of a missing file
    at.radio(key="ms_source").set_value(measured_views.SOURCES[1]).run()
    rows = Path(measurements.MEASUREMENTS_PATH).read_text().splitlines()
    at.get("file_uploader")[0].set_value(("mine.csv", "\n".join(rows[:40]).encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert not [m.value for m in at.markdown if measured_views.STAND_IN_MARK in m.value]
    assert not [w.value for w in at.warning if "No file loaded yet" in w.value]
    assert "rows" not in measured_views.upload_inputs(measured_views.SOURCES[1], at.get("file_uploader")[0].value)


def test_an_inferencemax_2025_file_takes_its_lengths_from_its_name_and_the_run_date_given():
    """InferenceMAX's aggregated results of 2025 state no lengths and no date: the page reads the lengths from the
    file's name and takes the date from its date box, which the rows' notes then carry (the fit's run date)."""
    import datetime
    import json
    rec = {"hw": "h200", "tp": 8, "ep": 1, "dp_attention": "false", "conc": 16, "model": "openai/gpt-oss-120b",
           "framework": "vllm", "precision": "fp4", "tput_per_gpu": 900.0, "output_tput_per_gpu": 450.0,
           "input_tput_per_gpu": 450.0, "mean_ttft": 0.05, "median_ttft": 0.04, "mean_tpot": 0.006,
           "median_tpot": 0.006, "mean_e2el": 6.2}   # made-up values in the format's fields
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[2])
    at.date_input(key="ms_run_date").set_value(datetime.date(2025, 11, 13)).run()
    at.get("file_uploader")[0].set_value(("agg_gptoss_1k8k.json", json.dumps([rec]).encode(),
                                          "application/json")).run()
    assert not at.exception, at.exception
    assert not [e.value for e in at.error]
    df, _ = inferencex.parse_inferencex(json.dumps([rec]), "agg_gptoss_1k8k.json", run_date="2025-11-13")
    # 1k8k: 0.9 x 1,024 = 922 in, 0.9 x 8,192 = 7,373 out (InferenceX's random lengths' mean)
    assert set(df.input_len) == {922} and set(df.output_len) == {7373}
    assert "date 2025-11-13" in df.notes.iloc[0]
    shown = " ".join(str(s.value) for s in at.selectbox) + " ".join(str(o) for s in at.selectbox for o in s.options)
    assert "gpt-oss-120b" in shown.lower() or "gpt-oss" in shown.lower(), shown[:300]
    # the CSV's header names the file and the date given (the link carries neither)
    up = at.session_state["ms_up_json"]
    assert measured_views.upload_inputs(measured_views.SOURCES[2], up, at.session_state["ms_run_date"]) == {
        "uploaded_file": "agg_gptoss_1k8k.json", "run_date_for_undated_results": "2025-11-13"}
    assert measured_views.upload_inputs(measured_views.SOURCES[2], up, None)["run_date_for_undated_results"] == \
        "not given"
    assert measured_views.upload_inputs(measured_views.SOURCES[1], None, None) == {"uploaded_file": "none"}
    assert measured_views.upload_inputs(measured_views.SOURCES[0], up, None) == {}


def test_the_throughput_chart_calls_the_bound_an_upper_bound_and_the_rows_bear_it_out():
    # On throughput per GPU against tokens/s per user the roofline bound is the most throughput physics allows: an
    # upper bound (it was called "the roofline lower bound", true of a step's time, not of this chart's axes)
    at = open_page("app_pages/measured.py")
    caption = next(c.value for c in at.caption if "The curve is for a current release" in c.value)
    assert "**Bound**: the roofline upper bound on throughput" in caption
    assert "lower bound" not in caption.replace("each step at its lower bound on time", "")
    # what the words claim, checked on the data set: measured throughputs sit at or under their bound, measured
    # times at or over it (rows without a bound left out). Not every row: one TensorRT-LLM v0.9 Mixtral run
    # reports 801 output tok/s per GPU against a bound of 582, a row to look into, not a reason to flip the words.
    rows = comparison.compare_rows(measurements.load_measurements())
    rows = rows[pd.to_numeric(rows["bound"], errors="coerce").notna()]
    value, bound = pd.to_numeric(rows["value"]), pd.to_numeric(rows["bound"])
    per_s = rows["metric"].str.contains("per_s")
    assert per_s.sum() > 100 and (~per_s).sum() > 100
    assert (value[per_s] <= bound[per_s] * 1.0001).mean() > 0.99
    assert (value[~per_s] >= bound[~per_s] * 0.9999).mean() > 0.99


@pytest.mark.parametrize("measures, words", [("time", "roofline lower bound on each time"),
                                             ("throughput", "roofline upper bound on throughput")])
def test_the_bound_is_named_for_what_it_bounds(measures, words):
    assert words in serving_views.bound_and_estimate(measures)
    # the range is the cross-validated one unless a notice of the estimate's says it was widened
    assert serving_views.bound_and_estimate(measures).endswith("with its range from the cross-validated errors")
    widened = [f"few runs of this pair; {serving_params.WIDENED_WORDS}"]
    assert serving_views.bound_and_estimate(measures, widened).endswith(
        "with its range from the cross-validated errors, widened to the held-out misses the notice above names")
    with pytest.raises(ValueError, match="'time' or 'throughput'"):
        serving_views.bound_and_estimate("tokens")


def test_measured_page_warns_where_no_row_of_the_configuration_has_an_estimate():
    # Llama-2-70B on MI300X with vLLM: every published run (AMD's and Dell's MLPerf v4.1 Offline) ran without CUDA
    # graphs, which the serving model does not predict (compare_rows' note), so the page says the curve is another
    # engine's before drawing it. DeepSeek-V3 on B200 with SGLang has estimated rows: no such warning.
    at = open_page("app_pages/measured.py", ms_model="llama-2-70b", ms_acc="mi300x", ms_engine="vllm")
    assert not at.exception
    data = measurements.load_measurements()
    rows = data[(data["model"] == "llama-2-70b") & (data["accelerator"] == "mi300x") & (data["engine"] == "vllm")]
    assert len(rows) and comparison.compare_rows(rows)["predicted"].isna().all()
    warned = [w.value for w in at.warning if "makes no estimate for any row" in w.value]
    assert len(warned) == 1 and "without CUDA graphs" in warned[0]
    # Kimi K2 on MI355X with vLLM: every run used speculative decoding, which the comparison now predicts (the draft
    # its notes name): no warning
    at = open_page("app_pages/measured.py", ms_model="kimi-k2", ms_acc="mi355x", ms_engine="vllm")
    assert not at.exception and not [w for w in at.warning if "makes no estimate for any row" in w.value]
    at = open_page("app_pages/measured.py", ms_model="deepseek-v3", ms_acc="b200", ms_engine="sglang")
    assert not [w for w in at.warning if "makes no estimate for any row" in w.value]


def test_the_estimates_software_caption_names_the_chosen_engine_and_its_release_then():
    import datetime

    from calc.serving_terms import release_on
    # the estimate takes every engine's software at the newest release date in the benchmarks (vLLM 0.22.0's,
    # 2026-05-29); the caption names the chosen engine and its own release of that day, not vLLM's
    at = open_page("app_pages/measured.py", ms_model="deepseek-v3", ms_acc="b200", ms_engine="sglang")
    sglang_then = release_on("sglang", datetime.date(2026, 5, 29))
    assert sglang_then and sglang_then != "0.22.0"
    text = " ".join(c.value for c in at.caption)
    assert "a current release of SGLang: its software as of 2026-05-29" in text
    assert f"(SGLang {sglang_then} then)" in text


def test_the_serving_block_says_which_context_its_bound_times_before_its_figures():
    # Many GPUs: the page's TPOT is its step at the full context; the serving block's bound is the step at the
    # request's mean context (prompt + half the output). The caption that says so comes before the block's metrics,
    # so the two TPOTs are not read as a contradiction first.
    at = open_page("app_pages/many_gpus.py")
    order = list(_in_page_order(at._tree))
    caption = next(i for i, n in enumerate(order) if getattr(n, "type", None) == "caption"
                   and str(getattr(n, "value", "")).startswith("This block times a request"))
    block = next(i for i, n in enumerate(order) if getattr(n, "type", None) == "html"
                 and 'class="xm-row"' in n.proto.body and "TPOT, bound" in n.proto.body)
    assert caption < block


def test_a_row_measured_outside_its_estimates_range_is_flagged():
    # MLPerf v5.1 Llama-3.1-8B Server on 8 B200 (NVIDIA, held-out rows): a mean TTFT of 587 ms against an estimate
    # near 50 ms, a known miss; its TPOT (about 28 ms) lies in its range. The warning appears exactly where the
    # measured value lies outside the range that calc.comparison.row_estimate gives for the row
    from calc.serving_fit import HOLDOUT_PATH
    run = "mlperf51-closed-nvidia-b200-sxm-180gbx8-trt-llama3.1-8b-server"
    held = pd.read_csv(HOLDOUT_PATH, dtype=str, keep_default_na=False)
    rows = held[held["id"].str.startswith(run + "-")]
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("run.csv", rows.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception, at.exception
    loaded = measurements.load_measurements(HOLDOUT_PATH, sources=measurements.load_sources())
    outside = {}
    for metric in ("ttft", "tpot"):
        rid = f"{run}-{metric}-ms-mean"
        at.selectbox(key="ms_row").set_value(rid).run()
        assert not at.exception, at.exception
        est = getattr(comparison.row_estimate(loaded[loaded["id"] == rid].iloc[[0]]), metric)
        measured_s = float(rows.set_index("id").loc[rid, "value"]) / 1e3
        outside[metric] = not est.low_s <= measured_s <= est.high_s
        flagged = [w.value for w in at.warning if w.value.startswith(f"The measured {metric.upper()} lies outside")]
        assert bool(flagged) == outside[metric]
        if flagged:
            ratio = float(re.search(r"range: ([\d.]+)x the estimate", flagged[0]).group(1))
            assert ratio == pytest.approx(measured_s / est.estimate_s, rel=0.05)
            assert "above the range's top" in flagged[0]
    assert outside == {"ttft": True, "tpot": False}


def test_a_median_row_at_a_rate_says_its_bars_predict_the_runs_mean():
    # An upload of one MLPerf v5.1 run at a rate (Llama-2-70B Interactive on 8 H200, held-out rows): at a rate the
    # serving model predicts means (Little's law relates means), so the caption of its median TTFT row says the bars
    # are the run's mean, and its mean row's caption does not
    from calc.serving_fit import HOLDOUT_PATH
    run = "mlperf51-closed-cisco-c885-h200x8-trt-llama2-70b-99-interactive"
    held = pd.read_csv(HOLDOUT_PATH, dtype=str, keep_default_na=False)
    rows = held[held["id"].str.startswith(run + "-")]
    assert len(rows) == 7  # throughput, mean, median and p99 TTFT and TPOT
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("run.csv", rows.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception, at.exception
    for statistic in ("median", "mean"):
        rid = f"{run}-ttft-ms-{statistic}"
        at.selectbox(key="ms_row").set_value(rid).run()
        assert not at.exception, at.exception
        caption = next(c.value for c in at.caption if c.value.startswith(f"{rid}: TTFT ({statistic})"))
        assert (measured_views.RATE_MEDIAN_WORDS in caption) == (statistic == "median")
        assert not any(w in caption for w in measured_views.STATISTIC_WORDS.values())
    # where the median lies against the run's mean is read from the run, not assumed: its TTFT median (82.5223 ms)
    # is 17.1% below its mean (99.504 ms: 82.5223 / 99.504 = 0.829), its TPOT median (34.8419 ms) 0.04% above its
    # mean (34.827 ms), which the caption gives to one decimal as 0.0%
    for metric, side, gap in (("ttft", "below", "17.1%"), ("tpot", "above", "0.0%")):
        rid = f"{run}-{metric}-ms-median"
        at.selectbox(key="ms_row").set_value(rid).run()
        caption = next(c.value for c in at.caption if c.value.startswith(f"{rid}: "))
        assert f"{gap} {side} the run's mean" in caption, caption
    assert "no mean" in measured_views.rate_median_words(82.5, None)


def _upload_csv(text: str, name: str = "theirs.csv"):
    """The measurements page with ``text`` uploaded as a CSV, checked to have drawn without an error."""
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value((name, text.encode(), "text/csv")).run()
    assert not at.exception and not at.error
    return at


def test_an_upload_with_a_benchmarks_own_headers_says_what_it_filled_and_what_it_ignored():
    # a vllm bench serve-like file: ISL/OSL/GPU/framework headers, metric keys with their statistic, a date and a licence
    # column, no layout but the GPUs: it loads, its rows are drawn, and the page says which columns took defaults
    text = ("model,gpu,num_gpus,framework,precision,isl,osl,conc,metric,value,date,license\n"
            "llama-3.1-70b,h100-sxm,8,vllm,fp8,1000,1000,16,median_tpot_ms,21.5,2025-10-02,Apache-2.0\n"
            "llama-3.1-70b,h100-sxm,8,vllm,fp8,1000,1000,16,mean_ttft_ms,120,2025-10-02,Apache-2.0\n")
    at = _upload_csv(text)
    captions = [c.value for c in at.caption]
    assert "theirs.csv: columns not read: license." in captions, captions
    assert any(c.startswith("theirs.csv: columns not in the file, taken as their defaults: id, source_id, "
                            "model_family, tp, pp, ep, dp,") for c in captions), captions
    assert at.selectbox(key="ms_model").value == "llama-3.1-70b" and figures(at)


def test_a_row_that_beats_the_roofline_bound_is_named_on_the_page():
    # Llama-3.1-70B fp8 on 8 H100s, 1,000 / 1,000 tokens at 16 clients: 2,200 output tokens/s per GPU is above the
    # bound (every GPU reading its 1/8 of 70.6 GB of fp8 weights per step at 3.35 TB/s caps a 16-sequence batch near
    # 16 x 3.35e12 / 8.8e9 = 6,100 tok/s for 8 GPUs, about 760 per GPU, before the KV cache and each request's
    # prefill, which calc's bound adds: 595); the page names it rather than drawing it silently, and a plausible
    # 21.5 ms TPOT is not named
    at = _upload_csv("model,gpu,num_gpus,framework,precision,isl,osl,conc,metric,value\n"
                     "llama-3.1-70b,h100-sxm,8,vllm,fp8,1000,1000,16,median_tpot_ms,21.5\n"
                     "llama-3.1-70b,h100-sxm,8,vllm,fp8,1000,1000,16,output_tok_per_s_per_gpu,2200\n")
    named = [w.value for w in at.warning if "beat" in w.value]
    assert len(named) == 1 and named[0].startswith("1 row beats the roofline bound, which no engine can: "
                                                   "output_tok_per_s_per_gpu 2,200 against a bound of "), named
    assert "tpot_ms" not in named[0]


def test_the_settings_a_rows_notes_set_are_said_beside_its_estimate(tmp_path):
    # two rows of one configuration that differ only in their notes: the one whose command sets vLLM V0's
    # --num-scheduler-steps 10 is estimated with it and says so; the other says nothing and is estimated without
    from calc import comparison, measurements
    from calc.serving_fit import HOLDOUT_PATH
    held = pd.read_csv(HOLDOUT_PATH, dtype=str, keep_default_na=False)
    row = held[held["source_id"].str.startswith("rocm-vllm-devdocker-tput-")
               & held["notes"].str.contains("--num-scheduler-steps 10 \\(multi-step")].head(1)
    plain = row.assign(id="plain", notes=row["notes"].str.replace("--num-scheduler-steps 10", "one step", regex=False))
    v1 = row.assign(id="v1", engine_version="0.11.0")  # a release without multi-step scheduling
    pd.concat([row, plain, v1]).assign(source_id="me").to_csv(tmp_path / "mine.csv", index=False)
    df = measurements.load_measurements(tmp_path / "mine.csv", sources=None)
    table = comparison.compare_rows(df).set_index("id")
    first = row["id"].iat[0]
    # (the page's command also sets --max-num-seqs 3,200: the row's max batch)
    assert table.loc[first, "from_notes"] == "max batch 3,200; 10 decode steps per scheduler call"
    assert table.loc["plain", "from_notes"] == "max batch 3,200"
    assert table.loc["v1", "from_notes"].startswith("max batch 3,200; 10 steps per scheduler call stated, not taken")
    assert table.loc[first, "predicted"] > table.loc["plain", "predicted"]
    # SGLang's polling interval, another setting a row's notes set, is said the same way
    sg = row.assign(engine="sglang", engine_version="0.4.3", source_id="me",
                    notes="a run; --scheduler-recv-interval 30")
    sg.to_csv(tmp_path / "sg.csv", index=False)
    t = comparison.compare_rows(measurements.load_measurements(tmp_path / "sg.csv", sources=None))
    assert t["from_notes"].iat[0] == "new requests taken in every 30 steps (--scheduler-recv-interval)"


def test_a_median_itl_rows_caption_says_the_bar_is_the_models_median_gap():
    # the serving model gives a median ITL of its own (ServingEstimate.itl_median_s), so a median ITL row at a rate
    # is not told that its bar predicts the run's mean; a median TTFT at a rate still is, beside the run's mean
    from ui.measured_views import ITL_MEDIAN_WORDS, RATE_MEDIAN_WORDS, STATISTIC_WORDS, statistic_words
    raw = pd.DataFrame({"id": ["a-itl-median", "a-ttft-median", "a-ttft-mean", "c-itl-median"],
                        "mode": ["rate", "rate", "rate", "concurrency"], "metric": ["itl_ms", "ttft_ms", "ttft_ms",
                                                                                    "itl_ms"],
                        "statistic": ["median", "median", "mean", "median"], "value": [40.0, 82.5, 99.5, 40.0],
                        "request_rate_per_s": [4.0, 4.0, 4.0, np.nan]}).set_index("id")
    assert statistic_words(raw, "a-itl-median", raw.loc["a-itl-median"], "median") == ITL_MEDIAN_WORDS
    words = statistic_words(raw, "a-ttft-median", raw.loc["a-ttft-median"], "median")
    assert words.startswith(RATE_MEDIAN_WORDS)
    assert statistic_words(raw, "c-itl-median", raw.loc["c-itl-median"], "median") == STATISTIC_WORDS["median"]
    assert statistic_words(raw, "a-ttft-mean", raw.loc["a-ttft-mean"], "mean") == ""


def test_an_itl_bars_words_name_only_what_makes_it_differ_from_tpot():
    from types import SimpleNamespace
    from ui.measured_views import itl_words
    plain, drafted = SimpleNamespace(speculative=""), SimpleNamespace(speculative="EAGLE, 3 draft tokens")
    # vLLM 0.6.0's median ITL with --num-scheduler-steps 10 (the settings compare_rows reads from its notes)
    assert itl_words(plain, "10 decode steps per scheduler call", "median") == (
        "the 10 steps of a multi-step scheduler's chunk and a median gap that decodes alone")
    assert itl_words(drafted, "", "mean") == "a round of speculative decoding of AL tokens"
    assert "speculative" in itl_words(plain, "", "mean") and "multi-step" in itl_words(plain, "", "mean")


def test_a_link_to_a_row_of_another_configuration_opens_on_that_configuration():
    # A link naming only a row (by its id, or by the label the app writes, which starts with the id) opened on the
    # default configuration, whose rows do not hold it, and fell back to that configuration's first row.
    at = open_page("app_pages/measured.py", ms_model="deepseek-v3", ms_acc="b200", ms_engine="sglang")
    configs = at.selectbox(key="ms_config").options
    assert len(configs) >= 2
    last = configs[-1]
    at.selectbox(key="ms_config").set_value(last).run()
    assert not at.exception
    row_label_text = at.selectbox(key="ms_row").options[-1]
    row_id = row_label_text.split(": ")[0]
    for named in (row_id, row_label_text):
        linked = open_page("app_pages/measured.py", ms_model="deepseek-v3", ms_acc="b200", ms_engine="sglang",
                           ms_config=configs[0], ms_row=named)
        assert not linked.exception
        assert linked.selectbox(key="ms_config").value == last
        assert linked.selectbox(key="ms_row").value == row_id
    # a configuration picked after the link stays picked (the link's row then drops out)
    linked.selectbox(key="ms_config").set_value(configs[0]).run()
    assert linked.selectbox(key="ms_config").value == configs[0]
    assert linked.selectbox(key="ms_row").value != row_id


def test_an_offline_run_of_stated_size_shows_its_requests_as_its_concurrency_and_its_point_there():
    # an offline run of Llama-3.1-8B on one H100 whose concurrency column is empty and whose notes state its 320
    # requests, all sent at once: the table gives 320 as its concurrency (the burst the estimate reads, as the row
    # label "offline, 320 requests at once" does), and its throughput point sits on the curve's tokens/s per user at
    # 320, not at the curve's largest batch, where a run of unstated size stays
    from ui.measured_views import throughput_only_points
    base = dict(source_id="s", model="llama-3.1-8b", model_family="llama", accelerator="h100-sxm", n_gpus=1, tp=1,
                pp=1, ep=1, dp=1, engine="vllm", engine_version="0.5.4", weight_dtype="fp8", kv_dtype=None,
                input_len=205, output_len=213, len_dist="sharegpt", concurrency=np.nan, request_rate_per_s=np.nan,
                mode="offline", statistic="mean")
    df = pd.DataFrame([dict(base, id="tput", metric="output_tok_per_s", value=6000.0,
                            notes="all 320 requests sent at once (--request-rate inf)"),
                       dict(base, id="unstated", metric="output_tok_per_s", value=7000.0, notes="")])
    table = comparison.compare_rows(df)
    assert list(table["concurrency"].fillna(-1)) == [320, -1]
    frontier = pd.DataFrame({"concurrency": [1.0, 32.0, 320.0, 1024.0],
                             "tokens_per_s_per_user": [150.0, 100.0, 40.0, 20.0]})
    points = throughput_only_points(df, frontier, 1)
    assert list(points["x"]) == [40.0, 20.0] and list(points["concurrency"]) == [320.0, "offline"]


def test_the_row_breakdown_says_the_settings_read_from_the_rows_notes():
    # held-out GPUStack Qwen3-8B on one H100 with SGLang 0.5.3 and EAGLE3 drafts: the breakdown of a speculative TPOT
    # row says what its estimate took from the notes, the draft and the overlap scheduler SGLang turns off under it
    # (before, only the table's cut-off column and the download said so)
    from calc.serving_fit import HOLDOUT_PATH
    held = measurements.load_measurements(HOLDOUT_PATH)
    spec = held[(held["source_id"] == "gpustack-h100-qwen3-8b") & (held["engine"] == "sglang")
                & (held["metric"] == "tpot_ms") & (held["statistic"] == "mean")
                & held["notes"].str.contains("EAGLE3")]
    row = spec["id"].iloc[0]
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[3], ms_model="qwen3-8b",
                   ms_acc="h100-sxm", ms_engine="sglang", ms_row=row)
    assert at.selectbox(key="ms_row").value.split(": ")[0] == row
    [said] = [c.value for c in at.caption if c.value.startswith("Settings read from this row's notes")]
    assert "speculative decoding" in said and "SGLang before 0.5.13 turns its overlap scheduler off" in said


def test_an_offline_run_of_stated_size_with_both_axes_is_a_measured_point_at_its_requests():
    # the same run's throughput (6,000 tok/s on its one GPU) and mean TPOT (40 ms, so 1000 / 40 = 25 tokens/s per
    # user) pair into one point at concurrency 320, its stated requests, where they were a throughput-only point and
    # a TPOT the chart never drew
    base = dict(source_id="s", model="llama-3.1-8b", model_family="llama", accelerator="h100-sxm", n_gpus=1, tp=1,
                pp=1, ep=1, dp=1, engine="vllm", engine_version="0.5.4", weight_dtype="fp8", kv_dtype=None,
                input_len=205, output_len=213, len_dist="sharegpt", concurrency=np.nan, request_rate_per_s=np.nan,
                mode="offline", statistic="mean", notes="all 320 requests sent at once (--request-rate inf)")
    df = pd.DataFrame([dict(base, id="tput", metric="output_tok_per_s", value=6000.0),
                       dict(base, id="tpot", metric="tpot_ms", value=40.0)])
    points = comparison.measured_points(df)
    assert len(points) == 1
    assert (points["concurrency"].iat[0], points["tokens_per_s_per_gpu"].iat[0],
            points["tokens_per_s_per_user"].iat[0]) == (320.0, 6000.0, 25.0)
    # a run of unstated size stays off the points (its concurrency is unknown)
    assert comparison.measured_points(df.assign(notes="")).empty


def test_a_configuration_the_engines_refuse_lists_its_rows_with_the_reason_and_no_curve():
    # an uploaded run of Llama-3.1-8B at TP3: its 32 query heads do not split over 3 ranks, so vLLM refuses the layout
    # and the serving model draws no curve. The page says so in a sentence that frames the reason, and still lists
    # the rows (measured, no estimate, each row's reason) where it had shown the bare reason alone
    header = "model,accelerator,n_gpus,tp,engine,weight_dtype,input_len,output_len,concurrency,metric,value,notes"
    text = "\n".join([header, "llama-3.1-8b,h100-sxm,3,3,vllm,bf16,1000,200,8,tpot_ms,9,",
                      "llama-3.1-8b,h100-sxm,3,3,vllm,bf16,1000,200,8,ttft_ms,60,"])
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("tp3.csv", text.encode(), "text/csv")).run()
    assert not at.exception
    [error] = [e.value for e in at.error]
    assert error.startswith("No serving estimate for this configuration, so no curve to draw:") and "TP 3" in error
    table = next(t for t in tables(at) if "measured" in t.columns or "value" in t.columns)
    assert len(table) == 2


def test_a_speculative_rows_label_says_so_and_a_link_by_its_older_label_still_opens_it():
    # held-out GPUStack Qwen3-8B on one H100, SGLang with EAGLE3 drafts: the Row box names a speculative run as such
    # (a first-time user could not tell which of the fp8 configuration's rows drafted); a link written with the label
    # before it said so ("<id>: TPOT mean at concurrency 4, measured ...") opens on the same row
    from calc.serving_fit import HOLDOUT_PATH
    held = measurements.load_measurements(HOLDOUT_PATH)
    rows = held[(held["source_id"] == "gpustack-h100-qwen3-8b") & (held["engine"] == "sglang")
                & (held["metric"] == "tpot_ms") & (held["statistic"] == "mean")]
    spec = rows[rows["notes"].str.contains("EAGLE3")].iloc[0]
    label = measured_views.row_label(spec.to_dict())
    assert ", speculative decoding, measured " in label
    plain = rows[~rows["notes"].str.contains("speculative decoding ON|EAGLE", regex=True)].iloc[0]
    assert "speculative" not in measured_views.row_label(plain.to_dict())
    older = label.replace(", speculative decoding", "")
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[3], ms_model="qwen3-8b",
                   ms_acc="h100-sxm", ms_engine="sglang", ms_row=older)
    assert at.selectbox(key="ms_row").value == spec["id"]
    assert not any("ms_row" in w.value for w in list(at.warning) + list(at.info) + list(at.caption))


def test_the_parity_chart_says_when_rows_have_neither_an_estimate_nor_a_bound():
    # the TP3 upload's rows: the engines refuse the layout, so no estimate, and the bound of a layout that does not
    # split the heads is not computed either: the chart says nothing is drawn, not "bound only"
    table = pd.DataFrame({"id": ["a"], "metric": ["tpot_ms"], "statistic": ["mean"], "value": [9.0],
                          "predicted": [np.nan], "bound": [np.nan]})
    words = [a.text for a in measured_views.parity_figure(table).build().layout.annotations]
    assert words == ["no serving estimate for these rows (the table's note says why): no bound either, nothing to draw"]
    words = [a.text for a in measured_views.parity_figure(table.assign(bound=[4.0])).build().layout.annotations]
    assert words == ["no serving estimate for these rows (the table's note says why): bound only"]
