"""The Workloads page (app_pages/workloads.py) and the Monthly bill's derived hit rate, in AppTest.

Oracle: the numbers the page shows are calc's for the same inputs, recomputed here from the sidebar's defaults
(Llama-3-8B, H100 SXM, bf16) and the page's defaults (512-token blocks, 4 running sequences, 256 GB CPU, 2,000 GB
SSD, demote). The Workload box opens on the first workload listed that the sidebar's model can serve (the Chat
preset on Llama-3-8B); the tests of the agentic preset, listed first, name it in the link (``AGENTIC``)."""
import numpy as np
import pytest

import calc
from calc import bill, prefix_cache as pc, traces, workload, workload_bill as wb
from pagetest import metric, open_page, tables

PAGE = "app_pages/workloads.py"
#: The link parameter that opens the agentic preset (its requests run past Llama-3-8B's 8,192 tokens).
AGENTIC = {"wl_src": "preset:agentic"}


def _expected_summary(preset: str = "agentic"):
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    s = workload.generate(workload.presets()[preset], 512)
    rates = wb.self_hosted_rates_for(s, bill.SelfHostedSetup(m, a, a.price_per_hour_usd))
    ctx = round(float(s.input_tokens.mean())) + round(float(s.output_tokens.mean()))  # the mean request, whole
    gpu = pc.gpu_cache_bytes(m, a, 4, ctx, tp=rates.gpus_per_replica)
    return pc.replay_ttft(s, pc.default_tiers(gpu, 256e9, 2000e9), m, a, tp=rates.gpus_per_replica)


def test_page_shows_the_replay_of_the_agentic_preset():
    at = open_page(PAGE, timeout=180, **AGENTIC)
    want = _expected_summary()
    assert metric(at, "Prefix hit rate") == f"{want.hit_rate():.1%}"
    assert metric(at, "found in CPU") == f"{want.hit_rate_by_tier()['cpu']:.1%}"
    bills = next(t for t in tables(at) if "per_request_usd" in t.columns)
    assert list(bills["name"])[-2:] == ["self-hosted, tiered cache", "self-hosted, no cache"]
    assert {"Opus 4.8", "GPT-5.4 mini"} <= set(bills["name"])


def test_no_cpu_memory_no_cpu_hits_and_other_sources_open():
    at = open_page(PAGE, timeout=180)
    at.number_input(key="wl_cpu").set_value(0).run()
    assert not at.exception and metric(at, "found in CPU") == "0.0%"
    for src in ("trace:mooncake_conversation_2000.jsonl", "trace:azure_llm_conv_2023_2000.csv", "preset:rag"):
        at.selectbox(key="wl_src").set_value(src).run()
        assert not at.exception, src
        assert not at.error, (src, [e.value for e in at.error])
    at.radio(key="wl_pol").set_value("write_through").run()
    assert not at.exception
    at.selectbox(key="wl_src").set_value("upload").run()
    assert not at.exception and any("Choose a trace file" in i.value for i in at.info)


def test_monthly_bill_takes_its_hit_rate_from_a_trace():
    at = open_page("app_pages/monthly_bill.py", timeout=180)
    at.radio(key="mb_hit_src").set_value("derive from a workload/trace").run()
    at.selectbox(key="mb_hit_wl").set_value("trace:mooncake_conversation_2000.jsonl").run()
    assert not at.exception
    pct = 100 * wb.api_cache_hit_rate(calc.traces.load_sample("mooncake_conversation_2000.jsonl"))
    assert any(f"Derived: {pct:.1f}%" in c.value for c in at.caption)
    # the bill follows: the hand-set slider is gone and the scenario uses the derived rate
    assert not [s for s in at.slider if s.key == "mb_hit"]


def test_a_link_names_the_source_by_its_key():
    at = open_page(PAGE, timeout=180, wl_src="trace:mooncake_conversation_2000.jsonl", wl_pol="write_through")
    assert at.selectbox(key="wl_src").value == "trace:mooncake_conversation_2000.jsonl"
    assert at.radio(key="wl_pol").value == "write_through"
    assert any("2,000 requests" in m.value for m in at.markdown)


def test_a_link_carries_the_preset_edits():
    # 10 agent sessions x 4 turns x 8 calls = 320 requests; reasoning kept throughout. No wl_src: a link made while
    # the agentic preset was the box's default names it by its edits, on a model whose window it overruns too
    at = open_page(PAGE, timeout=180, wl_sess_agentic="10", wl_rctx_agentic="keep")
    assert any("320 requests" in m.value for m in at.markdown)
    assert at.selectbox(key="wl_rctx_agentic").value == "keep"


def test_the_bill_table_writes_dollars_the_house_way():
    # Whole dollars with separators from $100 ("$122,234", not "$122,233.94"), cents below, three significant
    # digits below $1 ("$0.0840", not "$0.08402"): formats.fmt_usd(x, significant=3).
    import re
    from pagetest import shown_tables
    at = open_page(PAGE, timeout=180)
    head, *rows = next(t for t in shown_tables(at) if t and "per request" in t[0])
    money = [i for i, h in enumerate(head) if h in ("per month", "per request", "of which reasoning")]
    assert len(money) == 3 and len(rows) >= 4
    for row in rows:
        for i in money:
            assert re.match(r"^\$(\d{1,3}(,\d{3})*|\d{1,2}\.\d\d|0\.0*[1-9]\d\d)$", row[i]), (row[0], head[i], row[i])


def test_the_pricing_control_switches_the_self_hosted_bills_and_says_which_it_follows():
    from calc.number_text import fmt_usd
    from pagetest import figures, plotly_values
    # The tiered-cache row priced by calc at the page's defaults (the stream's own rate, batch 32, peak 3): with the
    # serving estimate (vLLM), the page's default, and with the roofline bound.
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    s = workload.generate(workload.presets()["agentic"], 512)
    summary = _expected_summary()
    want = {}
    for timing in ("serving", "bound"):
        setup = bill.SelfHostedSetup(m, a, a.price_per_hour_usd, timing=timing)
        want[timing] = wb.self_hosted_bill(s, summary, setup, wb.self_hosted_rates_for(s, setup)).total_usd
    assert want["serving"] > want["bound"]

    def shown():
        row = next(t for t in tables(at) if "per_request_usd" in t.columns).set_index("name")
        bars = figures(at)
        spec = next(f for f in bars if any(d.get("name") == "decode gpu" for d in f["data"]))
        bar = sum(y for d in spec["data"] for x, y in zip(plotly_values(d["x"]), plotly_values(d["y"]))
                  if x == "self-hosted, tiered cache")
        [note] = [x.value for x in at.markdown if "tiered cache follows" in x.value]
        return row.loc["self-hosted, tiered cache", "total_usd"], bar, note

    at = open_page(PAGE, timeout=180, **AGENTIC)
    total, bar, note = shown()
    assert total == fmt_usd(want["serving"], significant=3) and abs(bar - want["serving"]) < 1e-6 * want["serving"]
    assert "follows the serving estimate** (vLLM" in note and f"roofline bound would price it at {fmt_usd(want['bound'])}" in note
    at.radio(key="wl_timing").set_value("bound").run()
    assert not at.exception
    total, bar, note = shown()
    assert total == fmt_usd(want["bound"], significant=3) and abs(bar - want["bound"]) < 1e-6 * want["bound"]
    assert "follows the roofline bound**" in note and f"would price it at {fmt_usd(want['serving'])}" in note
    assert any("roofline lower bounds." in c.value for c in at.caption)


def test_the_context_past_the_trained_one_is_a_warning_by_the_bill_with_either_timing():
    from pagetest import open_page as _open
    from ui.formats import md_escape
    # The agentic preset's requests on Llama-3-8B (8,192 trained tokens): calc's warning, outside the expander;
    # the replica's batch 32 is clamped to calc.max_batch at the mean context and the page says so.
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    s = workload.generate(workload.presets()["agentic"], 512)
    for timing in ("serving", "bound"):
        rates = wb.self_hosted_rates_for(s, bill.SelfHostedSetup(m, a, a.price_per_hour_usd, timing=timing))
        want = wb.context_warning(s, m, rates)
        assert want and "8,192" in want
        at = _open(PAGE, timeout=180, wl_timing=timing, **AGENTIC)
        assert not at.exception
        assert any(w.value == f"Self-hosted tier: {md_escape(want)}." for w in at.warning), [w.value for w in at.warning]
        fit = calc.max_batch(m, a, rates.context_len)
        assert fit < 32 and rates.batch == fit
        assert any(f"Decode batch reduced from 32 to {fit:,}: what fits in memory at a {rates.context_len:,}-token "
                   "context (each sequence at its mean while decoding, prompt + output / 2)." in c.value
                   for c in at.caption)


def test_the_cache_line_and_the_bills_batch_each_say_their_sizing_and_name_the_same_mean_request():
    from ui.formats import md_escape
    # The agentic preset's mean request: prompt 67,928.9 and output 529.0 tokens, rounded each to whole tokens as the
    # bill prices them: 67,929 + 529 = 68,458. The cache line holds the Running batch's 4 sequences at that whole
    # prompt + output (what a sequence holds by its last token); the bill's decode batch is sized at the mean context
    # while decoding, 67,929 + round(529.0 / 2) = 68,193 tokens, where calc.max_batch fits 7 of the 32 asked. Both
    # take the data sheet's 80 GB less the weights: 80e9 - 16.06e9 - 4 x 68,458 x 131,072 B = 28.05 GB for prefixes.
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    s = workload.generate(workload.presets()["agentic"], 512)
    prompt, out = round(float(s.input_tokens.mean())), round(float(s.output_tokens.mean()))
    whole, mean = prompt + out, prompt + round(float(s.output_tokens.mean()) / 2)
    rates = wb.self_hosted_rates_for(s, bill.SelfHostedSetup(m, a, a.price_per_hour_usd, timing="serving"))
    assert rates.context_len == mean == 68_193 and whole == 68_458
    fit = calc.max_batch(m, a, mean)
    assert rates.batch == fit < 32
    kv_per_token = 32 * 8 * 128 * 2 * 2   # layers x KV heads x head dim x (K and V) x 2 bytes = 131,072 B
    left_gb = (80e9 - calc.weight_bytes(m, "bf16") - 4 * whole * kv_per_token) / 1e9
    at = open_page(PAGE, timeout=180, **AGENTIC)
    assert not at.exception
    [line] = [x.value for x in at.markdown if "running sequences of" in x.value]
    assert (f"GPU keeps {left_gb:.2f} GB for prefixes (1 x NVIDIA H100 SXM 80GB less the weights and 4 running "
            f"sequences of {whole:,} tokens: the Running batch, each at its whole prompt + output)") in line, line
    assert any(f"Decode batch reduced from 32 to {fit:,}: what fits in memory at a {mean:,}-token context (each "
               "sequence at its mean while decoding, prompt + output / 2)." in c.value for c in at.caption)
    # the warning's mean request is the cache line's, to the token
    [warning] = [w.value for w in at.warning if "trained context" in w.value and "The bill prices" in w.value]
    assert f"The bill prices the mean request: {whole:,} tokens of prompt and output" in warning
    assert md_escape(wb.context_warning(s, m, rates)) in warning


def test_past_the_trained_context_a_button_switches_to_the_nearest_preset_whose_window_holds_it():
    # The agentic preset's longest request (prompt + output) is past Llama-3-8B's 8,192 tokens and Llama-3.1-8B's
    # 131,072; the nearest preset in size whose window holds it is named on the button, and a click moves the
    # sidebar's model to it, after which no warning of the context is left.
    s = workload.generate(workload.presets()["agentic"], 512)
    longest = int((s.input_tokens + s.output_tokens).max())
    want = calc.models.longer_context_preset(calc.get_model("llama-3-8b"), longest)
    other = calc.get_model(want)
    assert other.max_context_len >= longest > calc.get_model("llama-3-8b").max_context_len
    at = open_page(PAGE, timeout=180, **AGENTIC)
    # said over the replay, before any figure, and under the bills
    [top] = [w.value for w in at.warning if "The hit rates, times and bills below are the arithmetic" in w.value]
    assert "Llama-3-8B's trained context of 8,192 tokens" in top and "The bill prices the mean request" not in top
    button = at.button(key="wl_longer")
    label = f"Switch the model to {other.name} (trained on {other.max_context_len:,} tokens)"
    assert button.label == label == at.button(key="wl_longer_bill").label
    button.click().run(timeout=240)
    assert not at.exception and at.selectbox(key="model").value == want
    assert not any("trained context" in w.value for w in at.warning)
    assert not any(b.key in ("wl_longer", "wl_longer_bill") for b in at.button)


def test_a_running_batch_past_the_gpu_says_so():
    # the Chat preset on Llama-3-8B (one H100 SXM, 80 GB, bf16 weights 16.06 GB): 4,096 running sequences of the
    # mean request's whole context need 4,096 x ctx x 128 KiB of KV cache (32 layers x 8 KV heads x 128 x 2 x 2 B per
    # token), far past the 63.9 GB left after the weights, so no prefix stays on the GPU and the page says why
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    at = open_page(PAGE, timeout=180)
    at.selectbox(key="wl_src").set_value("preset:chat").run()
    assert not [w for w in at.warning if "Running batch alone" in w.value]     # 4 running sequences fit
    at.number_input(key="wl_run").set_value(4096).run()
    assert not at.exception
    [said] = [w.value for w in at.warning if "The Running batch alone needs" in w.value]
    ctx = int(said.split("sequences of ")[1].split(" tokens")[0].replace(",", ""))
    need = 4096 * ctx * 32 * 8 * 128 * 2 * 2
    assert need == calc.kv_cache_bytes(m, ctx, 4096, "bf16")
    room = a.memory_bytes - calc.weight_bytes(m, "bf16")
    from ui.formats import fmt_bytes
    assert f"needs {fmt_bytes(need)} of KV cache" in said and f"the GPU holds {fmt_bytes(room)} after the weights" in said
    assert "Lower the Running batch" in said and need > room


def test_the_sweeps_caption_gives_both_rates_it_compares():
    # the caption under the CPU-size chart names the prefix hit rate over tokens (the metric above, to the digit) and
    # the chart's share of blocks at the CPU size set, where it had called their gap (7 points on the Chat preset)
    # "a little"
    at = open_page(PAGE, timeout=180)
    at.selectbox(key="wl_src").set_value("preset:chat").run()
    [said] = [c.value for c in at.caption if "This chart counts blocks" in c.value]
    assert f"({metric(at, 'Prefix hit rate')} at the CPU size set, against " in said
    assert "a little" not in said


# -- the first visit opens on a workload the sidebar's model can serve --------------------------------------------
def _listed_streams():
    """The Workload box's sources in its order, as shipped (512-token blocks): presets (agentic first), then the
    shipped traces, each generated or read by calc."""
    presets = workload.presets()
    keys = ["agentic"] + sorted(k for k in presets if k != "agentic")
    return ([(f"preset:{k}", workload.generate(presets[k], 512)) for k in keys]
            + [(f"trace:{f}", traces.load_sample(f)) for f in traces.SAMPLES])


def _past(stream, window: int) -> int:
    """Requests whose prompt + output exceed ``window`` tokens, counted here with numpy."""
    return int(np.sum(np.asarray(stream.input_tokens) + np.asarray(stream.output_tokens) > window))


def test_a_first_visit_opens_on_the_first_workload_the_default_model_can_serve_and_says_why():
    # Llama-3-8B, the sidebar's default, was trained on 8,192 tokens; every request of the agentic preset, listed
    # first, runs past it (768 of 768, the longest 134,299 tokens), which opened the page on two warnings and
    # figures of requests an engine refuses. The first source listed whose every request fits is the Chat preset.
    window = calc.get_model("llama-3-8b").max_context_len
    streams = _listed_streams()
    want = next(k for k, s in streams if _past(s, window) == 0)
    assert window == 8192 and want == "preset:chat" and streams[0][0] == "preset:agentic"
    agentic = streams[0][1]
    over, longest = _past(agentic, window), int(max(np.asarray(agentic.input_tokens) + agentic.output_tokens))
    assert over == agentic.n_requests == 768 and longest == 134_299
    at = open_page(PAGE, timeout=180)
    assert at.selectbox(key="wl_src").value == want
    assert not [w.value for w in at.warning if "trained context" in w.value]
    assert not any(b.key in ("wl_longer", "wl_longer_bill") for b in at.button)
    [note] = [c.value for c in at.caption if c.value.startswith("Opened on")]
    assert "the first workload listed whose every request fits Llama-3-8B's trained context of 8,192 tokens" in note
    assert f"listed first, has {over:,} of its {agentic.n_requests:,} requests past it (up to {longest:,} tokens" in note
    # the figures are the Chat preset's replay on the default model
    chat = _expected_summary("chat")
    assert metric(at, "Prefix hit rate") == f"{chat.hit_rate():.1%}"
    assert metric(at, "found in CPU") == f"{chat.hit_rate_by_tier()['cpu']:.1%}"


def test_a_model_whose_window_holds_the_agentic_preset_opens_on_it():
    # Llama-4-Scout's trained window (10,485,760 tokens) holds the agentic preset's longest request
    assert calc.get_model("llama-4-scout").max_context_len >= 134_299
    at = open_page(PAGE, timeout=180, model="llama-4-scout")
    assert at.selectbox(key="wl_src").value == "preset:agentic"
    assert not [c for c in at.caption if c.value.startswith("Opened on")]
    assert not [w for w in at.warning if "trained context" in w.value]


def test_where_no_workload_fits_the_one_with_the_fewest_requests_past_the_window_is_opened():
    # Llama-2-13B (4,096 tokens): some requests of every source run past it; the page opens on the smallest share
    # (the first listed among equals) and the warning on the right says how many
    window = calc.get_model("llama-2-13b").max_context_len
    shares = [(_past(s, window) / s.n_requests, i, k, _past(s, window), s.n_requests)
              for i, (k, s) in enumerate(_listed_streams())]
    assert all(share > 0 for share, *_ in shares)
    _, _, want, over, n = min(shares)
    at = open_page(PAGE, timeout=180, model="llama-2-13b")
    assert at.selectbox(key="wl_src").value == want
    [note] = [c.value for c in at.caption if c.value.startswith("Opened on")]
    assert f"the workload listed with the fewest requests past Llama-2-13B's trained context of 4,096 tokens " \
           f"({over:,} of its {n:,})" in note
    assert any(w.value.startswith(f"{over:,} of the workload's {n:,} requests") for w in at.warning)


def test_a_users_choice_of_workload_is_kept():
    # picked in the box: kept, with its warnings, whatever the sidebar's model does; the note is for the default only
    at = open_page(PAGE, timeout=180)
    at.selectbox(key="wl_src").set_value("preset:agentic").run(timeout=180)
    assert not at.exception and at.selectbox(key="wl_src").value == "preset:agentic"
    assert not [c for c in at.caption if c.value.startswith("Opened on")]
    assert [w for w in at.warning if "Llama-3-8B's trained context of 8,192 tokens" in w.value]
    for model in ("llama-4-scout", "llama-3-8b"):
        at.selectbox(key="model").set_value(model).run(timeout=180)
        assert not at.exception and at.selectbox(key="wl_src").value == "preset:agentic", model
    at.selectbox(key="wl_src").set_value("preset:chat").run(timeout=180)
    assert not [c for c in at.caption if c.value.startswith("Opened on")]   # chosen, not opened on
    # a default left alone stays where it opened when the model changes (the box does not jump)
    at = open_page(PAGE, timeout=180)
    at.selectbox(key="model").set_value("llama-4-scout").run(timeout=180)
    assert not at.exception and at.selectbox(key="wl_src").value == "preset:chat"


@pytest.mark.parametrize("key, want", [("llama-3-8b", 768), ("llama-4-scout", 0)])
def test_requests_beyond_window_counts_what_the_warning_counts(key, want):
    s = workload.generate(workload.presets()["agentic"], 512)
    m = calc.get_model(key)
    assert wb.requests_beyond_window(s, m) == want == _past(s, m.max_context_len)
    assert (wb.context_warning(s, m) or "").startswith(f"{want:,} of the workload's 768") == bool(want)
