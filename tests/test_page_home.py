"""AppTest of the home page and the shared sidebar (model, GPU, dtypes, price, your own config.json)."""
import json

import calc
from ui.formats import fmt_usd
import pagetest
from pagetest import metric, metrics, open_page

LLAMA, H100 = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")


def test_default_home_shows_the_seed_numbers():
    at = open_page(emb="table")
    # Llama-3-8B, H100 SXM, 8k, B = 1: 5.11 ms, 196 tok/s (seed 000 step 4); at the list price $3.99/h
    # that is 3.99 / (195.5 x 3600) x 1e6 = $5.67 per 1M
    assert metric(at, "Decode step (TPOT)") == "5.11 ms"
    assert metric(at, "Throughput") == "196 tok/s"
    assert metric(at, "USD per 1M output tokens") == "$5.67"
    table = pagetest.tables(at)[0]
    assert table.loc[table.quantity == "KV cache per token", "value"].item() == "131,072 B"
    assert table.loc[table.quantity == "max batch", "value"].item() == "59"


def test_moving_the_batch_slider_shows_what_calc_computes():
    at = open_page(emb="table")
    at.select_slider(key="h_b").set_value(32).run()
    step = calc.decode_step_time(LLAMA, H100, 32, 8192, embedding="table")
    assert metric(at, "Throughput") == f"{step.tokens_per_s:,.0f} tok/s" == "2,126 tok/s"
    assert metric(at, "USD per 1M output tokens") == fmt_usd(calc.cost_per_million(step.tokens_per_s, 3.99))


def test_deep_link_and_garbage():
    at = open_page(model="qwen3-8b", gpu="h200", h_b="32", price="3")
    step = calc.decode_step_time(calc.get_model("qwen3-8b"), calc.get_accelerator("h200"), 32, 8192)
    assert metric(at, "Throughput") == f"{step.tokens_per_s:,.0f} tok/s"
    assert metric(at, "USD per 1M output tokens") == fmt_usd(calc.cost_per_million(step.tokens_per_s, 3.0))
    at = open_page(model="<script>", gpu="zzz", h_b="-1", price="abc", h_ctx="1e99", emb="rows")
    # the defaults, the embedding gathered: 1 / 4.8011 ms = 208 tok/s
    assert metric(at, "Throughput") == "208 tok/s"


def test_default_home_shows_the_gathered_step_beside_the_course_napkin():
    at = open_page()
    # Gathered: (16,060,522,496 - 1,050,673,152 + 8,192) B / 3.35e12 = 4.4806 ms + the 8K cache 0.3205 ms
    # = 4.80 ms; the napkin reads the 1.05 GB input table too: 5.11 ms.
    assert metric(at, "Decode step (TPOT)") == "4.80 ms"
    notes = [c.value for c in at.caption if c.value.startswith("Course napkin")]
    assert notes and "5.11 ms" in notes[0] and "1.05 GB input embedding table" in notes[0]
    # a tied model has nothing to gather apart from its head: no note
    at = open_page(model="qwen2.5-0.5b")
    assert not [c for c in at.caption if c.value.startswith("Course napkin")]


def test_price_follows_the_gpu_unless_the_user_typed_one():
    at = open_page()
    at.selectbox(key="gpu").set_value("a100-80gb").run()
    assert at.number_input(key="price").value == 1.59          # the A100 80GB list price in the data file
    at.number_input(key="price").set_value(2.5).run()
    at.selectbox(key="gpu").set_value("h200").run()
    assert at.number_input(key="price").value == 2.5           # typed: kept
    step = calc.decode_step_time(LLAMA, calc.get_accelerator("h200"), 1, 8192)
    assert metric(at, "USD per 1M output tokens") == fmt_usd(calc.cost_per_million(step.tokens_per_s, 2.5))


def test_your_own_config_json_becomes_the_model_and_a_bad_one_keeps_the_previous():
    at = open_page(model="qwen3-8b")
    at.text_area(key="cfg_text").input("{not json").run()
    at.button(key="cfg_load").click().run()
    assert any("as a config.json" in e.value and "line 1" in e.value for e in at.error)
    assert at.selectbox(key="model").value == "qwen3-8b"
    assert at.text_area(key="cfg_text").value == "{not json"   # what the user typed is kept
    at.text_area(key="cfg_text").input(json.dumps({"num_hidden_layers": 2})).run()
    at.button(key="cfg_load").click().run()
    assert any("hidden_size" in e.value for e in at.error)
    tiny = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "intermediate_size": 128, "vocab_size": 100}
    at.text_area(key="cfg_text").input(json.dumps(tiny)).run()
    at.text_input(key="cfg_name").input("tiny").run()
    at.button(key="cfg_load").click().run()
    assert at.selectbox(key="model").value == "custom:tiny" and not at.error
    table = pagetest.tables(at)[0]
    # 2 x 2 layers x 2 KV heads x (64 / 4 = 16) x 2 B = 256 B per token
    assert table.loc[table.quantity == "KV cache per token", "value"].item() == "256 B"


def test_a_link_to_a_model_from_another_session_says_so():
    at = open_page(emb="table", model="custom:my model")
    assert any("another browser session" in w.value for w in at.sidebar.warning)
    assert metric(at, "Throughput") == "196 tok/s"               # the default model meanwhile


def test_the_estimate_stands_beside_the_bound():
    at = open_page(emb="table")
    step = [m for m in metrics(at) if m.label.startswith("Decode step")][0]
    assert step.label == "Decode step (TPOT), bound" and step.value == "5.11 ms"
    # memory-bound at B = 1: the estimate is the bound over the default MBU of 69% (gpt-fast's 1,397 of
    # 2,039 GB/s): 5.115 ms / 0.69 = 7.41 ms
    assert step.delta == "course estimate 7.41 ms"
    tput = [m for m in metrics(at) if m.label.startswith("Throughput")][0]
    assert tput.delta == "course estimate 135 tok/s"      # 1 / 7.41 ms


def test_memory_convention_switches_the_max_batch_and_says_which():
    # Llama-3-8B at 8K on an H100: data sheet (80e9 - 16.06e9) / 1.0737e9 -> 59; driver 85.52e9 -> 64;
    # engine 0.9 x 85.52e9 = 76.97e9 -> 56 (tests/test_memory_conventions.py has the arithmetic).
    for mem, expected, label in (("datasheet", "59", "data-sheet capacity, 80.00 GB"),
                                 ("driver", "64", "driver's total, 85.52 GB"),
                                 ("engine", "56", "0.9 x the driver's total = 76.97 GB")):
        at = open_page(mem=mem)
        table = pagetest.tables(at)[0]
        assert table.loc[table.quantity == "max batch", "value"].item() == expected
        assert any(label in c.value for c in at.caption), mem
    at = open_page(mem="engine", gmu="0.5")          # 0.5 x 85.52e9 - 16.06e9 = 26.70e9 -> 24
    table = pagetest.tables(at)[0]
    assert table.loc[table.quantity == "max batch", "value"].item() == "24"
    at = open_page(mem="engine", rtr="2")            # 76.97e9 - 2e9 = 74.97e9 -> (74.97 - 16.06) / 1.0737 = 54
    table = pagetest.tables(at)[0]
    assert table.loc[table.quantity == "max batch", "value"].item() == "54"
    assert any("less a 2.00 GB runtime reserve = 74.97 GB" in c.value for c in at.caption)
    at = open_page(mem="engine", gmu="0.1", rtr="9")  # more reserve than the share: an error, the share kept
    assert any("leaves no memory" in e.value for e in at.sidebar.error)
    at = open_page(mem="nonsense")                   # a bad link falls back to the data sheet
    table = pagetest.tables(at)[0]
    assert table.loc[table.quantity == "max batch", "value"].item() == "59"


def test_a_loaded_config_travels_in_the_link():
    from streamlit.testing.v1 import AppTest
    from ui.custom_models import model_from_param, model_to_param
    from pagetest import APP
    cfg = calc.models.hf_config("llama-3.2-1b")
    mine = calc.config_json.model_from_json_text(json.dumps(cfg), name="my-1b")
    text = model_to_param(mine)
    assert model_from_param(text) == mine and len(text) < 400          # short enough for any URL
    # Loaded in one session: the URL carries it ...
    at = open_page()
    at.text_area(key="cfg_text").input(json.dumps(cfg)).run()
    at.text_input(key="cfg_name").input("my-1b").run()
    at.button(key="cfg_load").click().run()
    assert at.query_params["cfg"] == text
    # ... and a fresh session opened on that link shows the same model: Llama-3.2-1B, 16 layers, K = 8,
    # H = 64: 2 x 16 x 8 x 64 x 2 = 32,768 B per token on the KV page.
    other = AppTest.from_file(APP, default_timeout=60)
    other.query_params.update(model="custom:my-1b", cfg=text)
    other.switch_page("app_pages/kv_cache.py").run()
    assert not other.exception and not other.warning
    assert metric(other, "KV per token") == "32,768 B"
    for bad in ("garbage!!", text[:-8]):
        broken = AppTest.from_file(APP, default_timeout=60)
        broken.query_params.update(model="custom:my-1b", cfg=bad)
        broken.run()
        assert not broken.exception and any("could not be read" in w.value for w in broken.warning)


def test_throughput_below_one_token_per_second_keeps_two_digits():
    # Llama-3.1-405B in bf16 on an L4: every decode step reads the ~810 GB of weights at 300 GB/s,
    # about 2.7 s per token, about 0.37 tok/s; it used to print as "0 tok/s" (a whole-number format)
    at = open_page(model="llama-3.1-405b", gpu="l4")
    step = calc.decode_step_time(calc.get_model("llama-3.1-405b"), calc.get_accelerator("l4"), 1, 8192)
    assert 0.3 < step.tokens_per_s < 0.4
    shown = metric(at, "Throughput")
    assert shown == f"{step.tokens_per_s:.2f} tok/s" and shown != "0 tok/s"
    assert "0 tok/s" not in " ".join(m.value + " " + str(m.delta) for m in metrics(at))


def test_an_unknown_preset_or_gpu_in_a_link_is_said_in_one_notice():
    at = open_page(model="nonexistent", gpu="zzz")
    # on the page (the sidebar starts closed in a narrow window), with the link's other refused values
    notices = [w.value for w in at.warning if w.value.startswith("Link values")]
    assert len(notices) == 1, [w.value for w in at.warning]
    assert "model=nonexistent (not a known model)" in notices[0] and "gpu=zzz (not a known GPU)" in notices[0]
    # the defaults are what is shown: Llama-3-8B on an H100, 1 / 4.8011 ms = 208 tok/s
    assert metric(at, "Throughput") == "208 tok/s"
    # a valid link says nothing
    at = open_page(model="qwen3-8b", gpu="h200")
    assert not [w.value for w in at.warning if w.value.startswith("Link values")]


def test_the_throughput_help_calls_the_bound_an_upper_bound_and_the_step_help_a_lower_one():
    # a step's roofline time is a lower bound; the throughput it gives, B / that step, an upper bound
    at = open_page(emb="table")
    step = [m for m in metrics(at) if m.label.startswith("Decode step")][0]
    tput = [m for m in metrics(at) if m.label.startswith("Throughput")][0]
    assert step.help.startswith("Bound: the roofline lower bound.")
    assert tput.help.startswith("Bound: the roofline upper bound on throughput, B / the bound's step")
    assert "lower bound" not in tput.help
    # and the numbers agree with the words: 196 tok/s bound over the course estimate's 135 tok/s (B = 1)
    assert float(tput.value.split()[0].replace(",", "")) > float(tput.delta.split()[2].replace(",", ""))


def test_the_course_estimate_help_refuses_an_unknown_quantity():
    import pytest
    from ui import widgets
    with pytest.raises(ValueError, match="'time' or 'throughput'"):
        widgets.estimate_help("latency")


def test_times_of_a_model_no_layout_holds_are_marked_if_it_fit():
    # Kimi-K2 on one L4 (24 GB): no tensor-parallel group of up to 8 GPUs holds it, so the times shown are one
    # GPU's arithmetic, labelled as the roofline page labels them; a model that fits keeps the plain labels
    at = open_page(model="kimi-k2", gpu="l4")
    labels = [m.label for m in metrics(at)]
    assert "Decode step (TPOT), bound (if it fit)" in labels and "Throughput, bound (if it fit)" in labels
    assert "Decode step (TPOT), bound" in [m.label for m in metrics(open_page())]
