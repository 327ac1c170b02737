"""AppTest of the "Decode and the roofline" page: widgets -> calc -> metrics and charts.

Expected strings are built from calc and the page's formatter, and checked against the seeds'
worked numbers (seed 000 step 4: Llama-3-8B, H100 SXM, 8k: B=32 gives 15.1 ms and 2,126 tok/s;
seed 004: Llama 2 13B at S = 1024, B = 64 -> 256 costs 3x the latency for 32% more throughput).
"""
import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import calc
from ui.formats import fmt_seconds
import pagetest
from pagetest import metric, plotly_values as values, figures

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/roofline.py"
H100 = calc.get_accelerator("h100-sxm")
LLAMA3 = calc.get_model("llama-3-8b")


def open_page(**query) -> AppTest:
    return pagetest.open_page(PAGE, timeout=60, **query)


def charts(at) -> list:
    """The page's Plotly figures in page order: roofline, decode split, throughput by K, TTFT (the serving
    estimate's breakdown bar, tests/test_serving_pages.py, left out)."""
    return [f for f in figures(at) if not any(d.get("name") == "serving estimate and range" for d in f["data"])]


def test_default_is_the_seed_000_example():
    at = open_page(emb="table")
    step = calc.decode_step_time(LLAMA3, H100, 32, 8192, embedding="table")
    assert metric(at, "Decode step (TPOT)") == fmt_seconds(step.total_s) == "15.05 ms"  # seed: 15.1 ms
    assert metric(at, "Throughput (tok/s)") == f"{step.tokens_per_s:,.0f}" == "2,126"  # seed: 2,126
    assert metric(at, "Critical batch (tokens)") == "295"
    assert metric(at, "Bound") == "memory"
    assert not at.warning  # 32 sequences fit (ceiling 59)


def test_batch_slider_moves_the_metrics():
    at = open_page(emb="table")
    at.select_slider(key="rf_b").set_value(1).run()
    assert not at.exception
    # Seed 000 step 4: one user, a 5.1 ms step, 196 tokens per second.
    step = calc.decode_step_time(LLAMA3, H100, 1, 8192, embedding="table")
    assert metric(at, "Decode step (TPOT)") == fmt_seconds(step.total_s) == "5.11 ms"
    assert metric(at, "Throughput (tok/s)") == "196"
    at.select_slider(key="rf_b").set_value(128).run()
    assert at.warning and "at most 59" in at.warning[0].value  # beyond the memory ceiling


def test_charts_hold_the_ridge_the_points_and_the_cut_curves():
    figs = charts(open_page(emb="table"))
    roof = figs[0]
    ridge = next(d for d in roof["data"] if d["name"].startswith("ridge"))
    assert values(ridge["x"]) == pytest.approx([989e12 / 3.35e12] * 2)  # 295 FLOP/byte
    assert ridge["name"] == "ridge P/W = 295 FLOP/byte"
    line = roof["data"][0]
    assert max(values(line["y"])) == pytest.approx(989.0)  # TFLOP/s, the flat roof
    names = [d["name"] for d in roof["data"]]
    assert names[2:] == ["decode B=1, S=8,192", "decode B=32, S=8,192", "prefill T=8,192"]

    split = figs[1]  # two panels: the split (x, y) and the throughput by K (x2, y2)
    weights = next(d for d in split["data"] if d["name"] == "weight read")
    assert values(weights["y"])[0] == pytest.approx(4.794, abs=0.001)  # 16.06 GB / 3.35 TB/s in ms
    ceiling = [s for s in split["layout"]["shapes"] if s["line"]["color"] == "#d62728"]
    assert ceiling[0]["x0"] == 59

    k = {"data": [d for d in figs[1]["data"] if d.get("xaxis") == "x2"]}
    curves = {d["name"]: d for d in k["data"] if d.get("name")}
    # Ceilings by hand at 8k (80 GB): K=32: weights (8.030e9 + 2x32x4096x128x24) x 2 = 17.67 GB,
    # KV 4.295 GB -> 14; K=8 (the model): 59; K=1: weights (8.030e9 - 2x32x4096x128x7) x 2 = 15.59 GB,
    # KV 134.2 MB -> 479.
    assert [max(values(c["x"])) for c in curves.values()] == [14, 59, 479]
    knees = [values(d["x"]) for d in k["data"] if "knee" in d.get("hovertemplate", "")]
    # Knees at 8k: 17.67 GB / 4.295 GB = 4.1 -> 4; 16.06 / 1.074 = 15.0 -> 15 (seed 000: "15 sequences");
    # 15.59 GB / 134.2 MB = 116.
    assert knees == [[4], [15], [116]]


def test_lecture_napkin_experiments():
    at = open_page(emb="table")
    at.button(key="rf_exp_2").click().run()  # "Llama 2 13B napkin, B=64"
    assert not at.exception
    assert (at.session_state["model"], at.session_state["rf_ctx"], at.session_state["rf_b"]) == ("llama-2-13b", 1024, 64)
    t64 = metric(at, "Decode step (TPOT)")
    at.button(key="rf_exp_3").click().run()  # B=256
    assert at.session_state["rf_b"] == 256
    m13 = calc.get_model("llama-2-13b")
    s64, s256 = (calc.decode_step_time(m13, H100, b, 1024, embedding="table") for b in (64, 256))
    assert t64 == fmt_seconds(s64.total_s) and metric(at, "Decode step (TPOT)") == fmt_seconds(s256.total_s)
    # Seed 004: 3x the latency for 32% more tokens per second, and 256 sequences do not fit.
    assert s256.total_s / s64.total_s == pytest.approx(3.0, abs=0.05)
    assert s256.tokens_per_s / s64.tokens_per_s == pytest.approx(1.32, abs=0.01)
    assert at.warning and "at most 64" in at.warning[0].value


def test_seed_000_experiment_buttons_set_the_state():
    at = open_page()
    at.select_slider(key="rf_b").set_value(4).run()
    at.button(key="rf_exp_0").click().run()
    assert (at.session_state["model"], at.session_state["gpu"], at.session_state["rf_ctx"],
            at.session_state["rf_b"]) == ("llama-3-8b", "h100-sxm", 8192, 1)
    assert metric(at, "Decode step (TPOT)") == "5.11 ms"


def test_default_shows_the_gathered_step_and_the_napkin_beside_it():
    at = open_page()
    # B = 32 gathers 32 rows: (16,060,522,496 - 1,050,673,152 + 32 x 8,192) / 3.35e12 = 4.4807 ms
    # + 32 x 0.3205 ms of cache = 14.74 ms; the course's napkin 15.05 ms.
    assert metric(at, "Decode step (TPOT)") == "14.74 ms"
    notes = [c.value for c in at.caption if c.value.startswith("Course napkin")]
    assert notes and "15.05 ms" in notes[0]


def test_bound_label_and_point_agree_at_batch_1024():
    at = open_page(rf_b="1024")
    # 95% of the step is the 8K cache read of 1,024 sequences: memory-bound, left of the ridge.
    assert metric(at, "Bound") == "memory"
    roof = charts(at)[0]
    point = next(d for d in roof["data"] if d["name"] == "decode B=1,024, S=8,192")
    assert values(point["x"])[0] < 989e12 / 3.35e12


def test_garbage_url_falls_back_to_defaults():
    at = open_page(emb="table", rf_b="banana", rf_ctx="-5", rf_prompt="1e999")
    assert at.select_slider(key="rf_b").value == 32
    assert at.select_slider(key="rf_ctx").value == 8192
    assert metric(at, "Decode step (TPOT)") == "15.05 ms"


def test_a_model_that_does_not_fit_has_no_curve_but_no_traceback():
    at = open_page(model="deepseek-v3")
    assert any("so there is no curve" in i.value for i in at.info)
    assert len(at.error) == 1 and "do not fit" in at.error[0].value


def test_weights_that_do_not_fit_give_one_message_and_no_price():
    # Llama-3.1-70B in bf16 (141.11 GB) on one 80 GB H100: three boxes used to disagree (a serving error blaming
    # one sequence's cache, "holds the weights and at most 0 sequences", "no batch fits"); now one says why
    at = open_page(model="llama-3.1-70b", rf_b="1")
    weights = calc.weight_bytes(calc.get_model("llama-3.1-70b"), "bf16")
    assert f"{weights / 1e9:.2f}" == "141.11"
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith("The weights of Llama-3.1-70B in bf16 (141.11 GB) do not fit on one NVIDIA H100 "
                                "SXM 80GB (80.00 GB): no batch can be served. Pick a smaller model"), errors[0]
    assert not at.warning                                            # no "at most 0 sequences"
    page_text = " ".join(str(getattr(e, "value", "")) for e in at.main)
    assert "at most 0" not in page_text and "per 1M output tokens" not in page_text
    assert "CO2e" not in page_text and "serving estimate and range" not in json.dumps(figures(at))
    step = calc.decode_step_time(calc.get_model("llama-3.1-70b"), H100, 1, 8192)
    assert metric(at, "Decode step (TPOT), bound (if it fit)") == fmt_seconds(step.total_s)


def test_a_cache_that_does_not_fit_beside_the_weights_says_so_not_that_the_weights_do_not():
    # Llama-3-8B: 16.06 GB of weights fit; one sequence of 1M tokens holds 137.44 GB of bf16 cache
    at = open_page(rf_ctx="1M", rf_b="1")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(
        "The weights of Llama-3-8B in bf16 (16.06 GB) fit on one NVIDIA H100 SXM 80GB (80.00 GB), but one "
        "sequence's KV cache at S = 1,048,576 (137.44 GB in bf16) does not fit beside them"), errors
    assert not any("at most 0" in w.value for w in at.warning)


def test_a_batch_over_the_ceiling_names_the_sequences_that_fit():
    # Llama-3-8B at 131,072 tokens: (80 - 16.06) GB / 17.18 GB a sequence = 3 sequences; B = 32 does not fit
    ceiling = calc.max_batch(LLAMA3, H100, 131072)
    assert ceiling == 3
    at = open_page(rf_ctx="128K", rf_b="32")
    [warning] = [w.value for w in at.warning if w.value.startswith("B = 32 does not fit")]
    assert "holds the weights and at most 3 sequences of 131,072 tokens" in warning


def test_bound_and_estimate_side_by_side():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
    at.switch_page("app_pages/roofline.py").run()
    at.number_input(key="mbu").set_value(50.0).run()
    assert not at.exception
    step = [m for m in pagetest.metrics(at) if m.label.startswith("Decode step")][0]
    assert step.label.endswith("bound")
    bound_ms = float(step.value.split()[0])
    # Llama-3-8B, B = 32 at 8K on an H100 is memory-bound (compute 2NB/P = 0.52 ms is below the 4.5 ms weight
    # read), so at MBU 50% every part of the step takes twice as long: the estimate is twice the bound.
    assert step.delta.startswith("course estimate ") and step.delta.endswith(" ms")
    assert float(step.delta.split()[2]) == pytest.approx(2 * bound_ms, abs=0.011)   # both shown to 0.01 ms


def test_a_link_carries_the_utilisation():
    # The live page's "Use 20% as MBU" opens /roofline?mbu=20.
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
    at.query_params["mbu"] = "20"
    at.switch_page("app_pages/roofline.py").run()
    assert not at.exception and at.number_input(key="mbu").value == 20
    step = [m for m in pagetest.metrics(at) if m.label.startswith("Decode step")][0]
    # memory-bound: course estimate = bound / 0.2, five times the bound
    assert step.delta.startswith("course estimate ")
    assert float(step.delta.split()[2]) == pytest.approx(5 * float(step.value.split()[0]), abs=0.03)


def test_the_intro_quotes_the_selected_gpus_critical_batch():
    # P/W in bf16: H100 SXM 989e12 / 3.35e12 = 295; MI300X 1307.4e12 / 5.3e12 = 247 (the page's own ridge)
    text = " ".join(m.value for m in open_page(gpu="mi300x").markdown) + " ".join(
        c.value for c in open_page(gpu="mi300x").caption)
    assert "needs about 247" in text and "needs B > 247" in text and "295" not in text
    text = " ".join(m.value for m in open_page().markdown)
    assert "H100 SXM" in text and "needs about 295" in text


def test_the_throughput_chart_hovers_keep_two_digits_below_ten():
    # Llama-3-8B on a DDR5 desktop (89.6 GB/s) at B = 1: 16.06 GB read per step -> 0.18 s, about
    # 5.6 tok/s (the first curve, K = N = 32, has larger weights and cache: about 4.3); the hover
    # printed whole numbers (d3 ",.0f": "4")
    at = open_page(gpu="ddr5-desktop", rf_b="1")
    k = next(f for f in charts(at) if any("knee" in d.get("hovertemplate", "") for d in f["data"]))
    line = next(d for d in k["data"] if d.get("xaxis") == "x2")
    assert "%{customdata} tok/s" in line["hovertemplate"]
    y = values(line["y"])
    assert 1 < y[0] < 10
    assert values(line["customdata"])[0] == f"{y[0]:.1f}"


def test_prefill_head_convention_from_the_url():
    # ?lgt=last: the LM head runs on the prompt's last token only (engines); the TTFT headline and caption
    # follow it. Llama-3-8B, H100, T = 8,192, embedding gathered: 143.4 ms (course) vs 133.7 ms, the
    # difference 2 x 128,256 x 4,096 x 8,191 FLOPs / 989e12 = 8.70 ms.
    course = calc.ttft(LLAMA3, H100, 8192)
    engines = calc.ttft(LLAMA3, H100, 8192, logits="last")
    assert (course - engines) * 1e3 == pytest.approx(8.70, abs=0.01)
    for query, expected, words in (({}, course, "every prompt token"), ({"lgt": "last"}, engines, "last token")):
        at = open_page(**query)
        assert not at.exception
        heads = [m.value for m in at.markdown if "Time to first token against prompt length" in m.value]
        assert heads and fmt_seconds(expected) in heads[0]
        assert any(words in c.value for c in at.caption if "One prompt, no queue" in c.value)
        ttft_fig = charts(at)[2]  # the curve's point at T = 8,192 follows the convention too
        at_t = [y for d in ttft_fig["data"] for x, y in zip(values(d["x"]), values(d["y"])) if x == 8192]
        # in the axis' unit, which the sweep's longest TTFT sets (Llama-3-8B at 131,072 tokens: seconds)
        unit = ttft_fig["layout"]["yaxis"]["title"]["text"].split("(")[1].split(",")[0]  # "TTFT, ... (s, log)"
        scale = {"ms": 1e3, "s": 1.0, "min": 1 / 60}[unit]
        assert at_t and at_t[0] == pytest.approx(expected * scale)


def test_matmul_precision_from_the_url():
    # nvfp4 weights on a B200: auto runs W4A16 at the bf16 peak (2,250 TFLOP/s); low-precision runs the
    # matmuls on the fp4 tensor cores (9,000 TFLOP/s dense), so a compute-bound 8K prefill is 4x shorter
    # in its compute term. On an H100 (no fp4 engine) low-precision falls back to bf16, with a notice.
    b200 = calc.get_accelerator("b200")
    fast = calc.hardware.with_matmul(b200, "low_precision")
    for query, acc, words in (({}, b200, "matmuls in bf16"), ({"mm": "low-precision"}, fast, "matmuls in fp4")):
        at = open_page(gpu="b200", wq="nvfp4", **query)
        assert not at.exception
        assert any(words in c.value and "TFLOP/s" in c.value for c in at.caption)
        heads = [m.value for m in at.markdown if "Time to first token against prompt length" in m.value]
        assert fmt_seconds(calc.ttft(LLAMA3, acc, 8192, weight_dtype="nvfp4")) in heads[0]
    at = open_page(gpu="h100-sxm", wq="nvfp4", mm="low-precision")
    assert not at.exception and "no fp4 tensor cores" in at.sidebar.info[0].value


def test_the_split_table_holds_the_chosen_batch():
    # SmolLM2-135M at 8K on an H100 has a ceiling of 422 sequences, so the chart's grid (B = 1 to 1.25 x 422,
    # 200 points) steps by ~2.6 and skips B = 48 (a value of the Batch slider); the table, opened, holds it.
    m, acc = calc.get_model("smollm2-135m"), calc.get_accelerator("h100-sxm")
    assert 48 not in set(calc.sweeps.decode_split(m, acc, 8192, 1)["batch"])
    at = open_page(model="smollm2-135m", rf_b="48")
    at.session_state["rf_tables"] = True
    at.run()
    split = next(d for d in pagetest.tables(at) if {"batch", "weights_s", "kv_s"} <= set(d.columns))
    row = split[split["batch"] == 48]
    assert len(row) == 1
    # the table shows ms: the roofline step at B = 48 from calc directly
    assert row["total_s"].iloc[0] == pytest.approx(calc.decode_step_time(m, acc, 48, 8192).total_s * 1e3)


#: "estimate" not named as one of the page's two: the course's (bound / MBU and MFU) or the serving model's.
_BARE_ESTIMATE = r"(?i)(?<!course )(?<!serving )(?<!serving-model )\bestimates?\b(?! and range)"


def _estimate_words(at) -> list[str]:
    """Every text of the run that says "estimate": metric labels, deltas, help and captions; captions and markdown;
    table headers; chart trace names."""
    import re

    texts = [t for m in pagetest.metrics(at) for t in (m.label, m.delta or "", m.help or "", *getattr(m, "captions", []))]
    texts += [e.value for kind in ("caption", "markdown") for e in at.get(kind)]
    texts += [cell for table in pagetest.shown_tables(at) for cell in (table[0] if table else [])]
    texts += [str(t.get("name", "")) + " " + str(t.get("hovertemplate", "")) for f in figures(at) for t in f["data"]]
    return [t for t in texts if re.search(r"(?i)\bestimate", t)]


@pytest.mark.parametrize("page", ["app_pages/roofline.py", "app_pages/latency_cost.py"])
def test_the_two_estimates_never_share_a_name(page):
    # the course's estimate (the bound's parts / MBU and MFU, calc.efficiency) and the serving model's estimate
    # (calc.serving) are different numbers shown side by side: each is called by its own name wherever it appears
    import re

    at = pagetest.open_page(page, timeout=60, model="llama-3-8b", gpu="h100-sxm")
    words = _estimate_words(at)
    assert any("course estimate" in w for w in words) and any("serving estimate" in w.lower() for w in words)
    bare = [w for w in words if re.search(_BARE_ESTIMATE, w)]
    assert not bare, bare
    step = calc.decode_step_time(LLAMA3, H100, 32, 8192)
    if page.endswith("roofline.py"):   # the course's number, under its name: the bound / MBU 69%, memory-bound
        tpot = pagetest.metric_element(at, "Decode step (TPOT), bound")
        assert tpot.delta == "course estimate " + fmt_seconds(calc.efficiency.estimate_step(step).total_s)


def _operators_chart(at) -> dict:
    """The per-operator roofline (the figure with the attention operator on it)."""
    return next(f for f in figures(at) if any("attention over the cache" in str(d.get("name")) for d in f["data"]))


def test_operators_at_one_point_share_one_marker_that_names_them_all():
    # Decode, Llama-3-8B, B = 32 at 8K in bf16: each weight matmul does 2 FLOPs per weight and token on 2 bytes per
    # weight, so its intensity is B = 32 FLOP/byte, memory-bound at W x I = 3.35e12 x 32 = 107.2 TFLOP/s: QKV,
    # output projection, MLP, norms and LM head sit on one point (the gathered lookup has no FLOPs: not drawn).
    at = open_page()
    markers = [d for d in _operators_chart(at)["data"] if d.get("mode", "").startswith("markers")]
    points = [(values(d["x"])[0], values(d["y"])[0]) for d in markers]
    assert len(set(points)) == len(points)                      # no marker hides under another
    five = ["MLP", "QKV projection", "output projection", "LM head", "norms"]
    shared = next(d for d in markers if "QKV projection" in d["name"])
    assert values(shared["x"]) == [pytest.approx(32.0)] and values(shared["y"]) == [pytest.approx(107.2)]
    assert all(op in shared["name"] and op in shared["text"][0] and f"{op}: I = 32.0 FLOP/byte" in shared["hovertemplate"]
               for op in five)
    # attention alone: per layer and sequence 2 x 2 x N x H x S FLOPs (QK^T and PV) on 2 x K x H x S x 2 bytes of
    # cache, N/K = 32/8 = 4 FLOP/byte; a marker of its own, with no label beside it
    attention = next(d for d in markers if d["name"] == "attention over the cache")
    assert values(attention["x"])[0] == pytest.approx(4.0, rel=0.01) and "text" not in attention
    # every drawn operator is named exactly once, and none moved from calc's intensity
    ops = calc.operators.step_operators(LLAMA3, H100, "decode", 32, 8192)
    drawn = ops[(ops["bytes"] > 0) & (ops["flops"] > 0)]
    named = [line.split(": I = ")[0] for d in markers for line in d["hovertemplate"].split("<br>") if ": I = " in line]
    assert sorted(named) == sorted(drawn["label"])
    for d in markers:
        for line in d["hovertemplate"].split("<br>"):
            if ": I = " in line:
                label, rest = line.split(": I = ")
                want = drawn.loc[drawn["label"] == label, "intensity_flop_per_byte"].iloc[0]
                assert rest.startswith(f"{want:,.1f} FLOP/byte")


def test_deepseek_v4_and_minimax_m3_draw_the_throughput_by_k():
    # DeepSeek-V4-Pro's 849.68 GB of mxfp4-fp8 weights fit on no single GPU: the only error is that one, not a
    # layer-kind complaint from turning its compressed layers into MHA/GQA/MQA, and the metrics are drawn.
    at = open_page(model="deepseek-v4-pro")
    assert not at.exception and [e.value for e in at.error] and "do not fit" in at.error[0].value
    assert len(at.error) == 1 and metric(at, "Decode step (TPOT)")
    # V4-Flash on a B300 (288 GB): 155.58 GB of weights leave 132.42 GB. The K = 1 (MQA) curve: 41 csa / hca layers
    # become full attention, 2 x 1 x 512 x 2 B = 2,048 B per token each, the 2 window layers keep W = 128:
    # 41 x 2,048 x 8,192 + 2 x 2,048 x 128 = 688,390,144 B per sequence; 132.42e9 / 688.39e6 = 192.4 -> 192.
    at = open_page(model="deepseek-v4-flash", gpu="b300")
    assert not at.exception and not at.error
    words = next(c.value for c in at.caption if c.value.startswith("Crosses"))
    assert "K=1 MQA, params kept: knee B = 226, ceiling B = 192" in words
    assert "Its csa and hca layers become full-attention layers" in words
    # the curve of the model as configured: its own cache, 68.87 MB per 8K sequence -> 1,922 sequences
    m, b300 = calc.get_model("deepseek-v4-flash"), calc.get_accelerator("b300")
    assert "MLA = this model: knee B = 6,422, ceiling B = 1,922" in words
    assert calc.max_batch(m, b300, 8192, "mxfp4-fp8", "bf16") == 1922
    # MiniMax-M3 (GQA, K = 4; 426B parameters) in int4 on a B300: its sparse layers stay sparse under every K
    at = open_page(model="minimax-m3", gpu="b300", wq="int4")
    assert not at.exception and not at.error
    words = next(c.value for c in at.caption if c.value.startswith("Crosses"))
    assert "sparse layers stay sparse" in words and "= this model" in words


def test_ttft_chart_axis_follows_the_ttfts_drawn():
    # The TTFT sweep of Llama-3.1-405B on one H100 runs from 0.24 s (a short prompt reads the 812 GB of weights at
    # 3.35 TB/s) to 179 s at 131,072 tokens (2 x 405.9e9 x T / 989e12 s of matmuls = 108 s, attention on top): the
    # log axis reads in seconds (its middle, sqrt(0.24 x 179) = 6.5 s); Llama-3.2-1B's, from a few ms to 1.5 s, in ms.
    from calc import sweeps
    from ui import charts as ui_charts
    from ui.roofline_charts import ttft_figure
    for model, want in (("llama-3.1-405b", "s"), ("llama-3.2-1b", "ms")):
        ttfts = sweeps.ttft_sweep(calc.get_model(model), H100)
        t = ttfts["ttft_s"].to_numpy()
        k, unit = ui_charts.axis_unit(float(np.sqrt(t.min() * t.max())))
        assert unit == want
        fig = ttft_figure(ttfts).build()
        assert fig.layout.yaxis.title.text == f"TTFT, prefill only ({unit}, log)"
        drawn = np.concatenate([np.asarray(tr.y, dtype=float) for tr in fig.data])
        # every value drawn is its TTFT in the axis' unit
        assert sorted(drawn) == pytest.approx(sorted(ttfts["ttft_s"].to_numpy() * k))


@pytest.mark.parametrize("model", ["deepseek-v3", "kimi-k2"])
def test_an_mla_model_with_flashmla_cache_opens_without_an_error(model):
    # the page stopped with "has no latent cache to store in it" for every MLA model with kvq=fp8_ds_mla: its K sweep
    # put the plain-attention variants in that latent-only format; they now keep fp8 (calc.sweeps)
    at = open_page(model=model, gpu="h200", kvq="fp8_ds_mla")
    assert not at.exception
    assert not [e.value for e in at.error if "latent" in e.value]
    assert at.session_state["kvq"] == "fp8_ds_mla"
