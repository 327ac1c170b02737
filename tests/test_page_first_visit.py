"""A first visit that never misleads: the model loaded is the model shown, under its own name and in its own
weight format; a headline price is for the GPUs the model occupies; a context past the model's window is
marked. Each test fails on the app before these fixes."""
import json
from pathlib import Path

import pytest

import calc
from calc.checkpoint_format import checkpoint_weight_format
from calc.config_json import from_hf_config
import pagetest
from pagetest import open_page

DATA = Path(__file__).parent / "data"


def _gpt_oss_120b() -> dict:
    """gpt-oss-120b's config.json: the 20b file (tests/data) with 36 layers and 128 experts, as the 120b
    checkpoint's config.json on the Hugging Face hub (openai/gpt-oss-120b) has them."""
    cfg = json.loads((DATA / "gpt-oss-20b.json").read_text())
    cfg.update(num_hidden_layers=36, num_local_experts=128,
               layer_types=["sliding_attention", "full_attention"] * 18)
    return cfg


def _memory_table(at) -> dict:
    table = pagetest.tables(at)[0]
    return dict(zip(table.quantity, table.value))


# -- upload, then paste --------------------------------------------------------------------------------------


def test_a_paste_after_an_upload_is_the_model_shown_not_the_upload():
    at = open_page()
    kimi = json.dumps(calc.models.hf_config("kimi-k2")).encode()
    at.sidebar.get("file_uploader")[0].set_value(("config.json", kimi, "application/json")).run()
    at.button(key="cfg_load").click().run()
    kimi_id = at.selectbox(key="model").value
    # A file called config.json names nothing: the model is named from its architecture.
    assert kimi_id == "custom:DeepseekV3ForCausalLM", kimi_id
    at.text_area(key="cfg_text").input(json.dumps(calc.models.hf_config("mistral-7b-v0.1"))).run()
    at.text_input(key="cfg_name").input("my mistral").run()
    at.button(key="cfg_load").click().run()
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="model").value == "custom:my mistral"
    # Mistral-7B's 7,241,732,096 parameters x 2 B (bf16) = 14.48 GB, not Kimi-K2's 2.05 TB.
    assert calc.get_model("mistral-7b-v0.1").n_params == 7_241_732_096
    assert _memory_table(at)["weights"] == "14.48 GB"
    assert any("from the pasted text" in s.value for s in at.success)


def test_pasted_text_that_is_not_json_is_refused_even_with_an_upload_present():
    at = open_page()
    tiny = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "intermediate_size": 128, "vocab_size": 100, "architectures": ["TinyForCausalLM"]}
    at.sidebar.get("file_uploader")[0].set_value(("config.json", json.dumps(tiny).encode(), "application/json")).run()
    at.button(key="cfg_load").click().run()
    assert at.selectbox(key="model").value == "custom:TinyForCausalLM"
    at.text_area(key="cfg_text").input("{not json").run()
    at.button(key="cfg_load").click().run()
    assert any("the pasted text" in e.value and "line 1" in e.value for e in at.error), [e.value for e in at.error]
    assert at.selectbox(key="model").value == "custom:TinyForCausalLM"   # the previous model stays


# -- the checkpoint's own weight format ---------------------------------------------------------------------


@pytest.mark.parametrize("q, expected", [
    ({"quant_method": "mxfp4"}, "mxfp4"),
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "fp8-block"),     # DeepSeek-V3, Kimi-K2
    ({"quant_method": "fp8", "activation_scheme": "dynamic"}, "fp8"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}, "int4-g128"),
    ({"quant_method": "awq", "w_bit": 4, "q_group_size": 64}, "int4-g64"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": False}, "int4-g32"),
    ({"quant_method": "gptq", "bits": 8, "group_size": -1}, "int8"),            # one scale per channel
    ({"quant_method": "gptq", "bits": 3, "group_size": 128}, None),             # a width calc does not model
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 4, "type": "int", "strategy": "group", "group_size": 128}}}}, "int4-g128"),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 8, "type": "float", "strategy": "channel"}}}}, "fp8"),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}}}}, "nvfp4"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, None),
])
def test_checkpoint_weight_format_reads_quantization_config(q, expected):
    fmt, said = checkpoint_weight_format({"quantization_config": q})
    assert fmt == expected
    assert q["quant_method"] in said


def test_a_config_without_quantization_config_has_no_checkpoint_format():
    assert checkpoint_weight_format(calc.models.hf_config("llama-3-8b")) == (None, "")
    assert from_hf_config(calc.models.hf_config("llama-3-8b")).checkpoint_format is None


def test_gpt_oss_120b_opens_in_mxfp4_and_says_so():
    model = from_hf_config(_gpt_oss_120b())
    assert model.checkpoint_format == "mxfp4"
    at = open_page()
    at.text_area(key="cfg_text").input(json.dumps(_gpt_oss_120b())).run()
    at.button(key="cfg_load").click().run()
    assert at.selectbox(key="wq").value == "mxfp4"
    # 65.25 GB: the routed experts at 4.25 bits, the rest (attention with its biases and sinks, router, embeddings,
    # head) in bf16, 116,829,156,672 parameters counted to the tensor (OpenAI's model card: "fits in 80 GB";
    # 233.66 GB were it all bf16)
    assert model.n_params == 116_829_156_672
    assert _memory_table(at)["weights"] == "65.25 GB"
    assert any("quantization_config" in c.value and "mxfp4" in c.value for c in at.sidebar.caption)
    # ...and a link carries the format with the model
    assert calc.memory.weight_bytes(model, "bf16") / 1e9 > 230


def test_a_quantization_scheme_calc_does_not_model_is_said_not_silently_bf16():
    # Mistral-7B's config with a bitsandbytes 4-bit quantization_config: calc models no NF4, so the weights stay
    # at the sidebar's format (bf16 here: 7,241,732,096 x 2 B = 14.48 GB) and the page says why.
    cfg = dict(calc.models.hf_config("mistral-7b-v0.1"),
               quantization_config={"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"})
    at = open_page()
    at.text_area(key="cfg_text").input(json.dumps(cfg)).run()
    at.button(key="cfg_load").click().run()
    assert not at.exception and not at.error
    assert at.selectbox(key="wq").value == "bf16"
    assert _memory_table(at)["weights"] == "14.48 GB"
    said = [s.value for s in at.success if "from the pasted text" in s.value]
    assert said and "quant_method bitsandbytes" in said[0] and "does not model" in said[0], said
    # after gpt-oss (mxfp4 from its checkpoint), the unmodelled scheme puts the weights back to bf16 and says why
    at.text_area(key="cfg_text").input(json.dumps(_gpt_oss_120b())).run()
    at.button(key="cfg_load").click().run()
    assert at.selectbox(key="wq").value == "mxfp4"
    at.text_area(key="cfg_text").input(json.dumps(cfg)).run()
    at.button(key="cfg_load").click().run()
    assert at.selectbox(key="wq").value == "bf16"
    said = [s.value for s in at.success if "from the pasted text" in s.value]
    assert said and "Weights back to bf16: its quantization_config" in said[0] and "bitsandbytes" in said[0], said


# -- the home page's price ------------------------------------------------------------------------------------


def test_home_prices_a_model_on_the_gpus_it_occupies():
    at = open_page(model="deepseek-v3", gpu="h200", wq="fp8")
    row = {r.label: r for r in pagetest.row_metrics(at)}
    step = calc.decode_step_time(calc.get_model("deepseek-v3"), calc.get_accelerator("h200"), 1, 8192, "fp8", "bf16",
                                 tp=8)
    # TP 8 step at batch 1: KV 0.120 ms + weights 0.954 ms + 122 all-reduces of 7,168 x 2 B, one-shot over NVSwitch
    # (7 x 14,336 / 450e9 + 1 us = 1.223 us each) = 0.149 ms: 1.223 ms, 818 tok/s.
    # 8 GPUs x $5.40/h (H200's list price on file) = $43.20/h over 818 tok/s x 3,600 s = 2.94 M tokens an hour:
    # $14.68 per 1M
    assert step.comm_s == pytest.approx(122 * (7 * 14_336 / 450e9 + 1e-6), rel=1e-9)
    usd = row["USD per 1M output tokens, 8 GPUs"]
    assert usd.value == f"${8 * 5.40 / (step.tokens_per_s * 3600) * 1e6:,.2f}" == "$14.68"
    assert row["Throughput, bound, TP 8"].value == "818 tok/s"
    assert row["Memory used"].delta == "needs 5 GPUs"
    assert any("8 GPUs" in w.value and "priced at 8 x $5.40/h" in w.value for w in at.warning)


def test_home_price_for_a_model_on_one_gpu_is_unchanged():
    at = open_page(emb="table")
    assert pagetest.metric(at, "USD per 1M output tokens") == "$5.67"   # seed: 3.99 / (195.5 x 3600) x 1e6


# -- a context past the model's window -----------------------------------------------------------------------


@pytest.mark.parametrize("page, query", [
    (None, {"h_ctx": "131072"}),
    ("app_pages/kv_cache.py", {"kv_ctx": "131072"}),
    ("app_pages/latency_cost.py", {"lc_ctx": "128K"}),
    ("app_pages/roofline.py", {"rf_ctx": "131072"}),
    ("app_pages/quantization.py", {"q_ctx": "131072"}),
    ("app_pages/many_gpus.py", {"mg_ctx": "131072"}),
])
def test_llama_3_8b_at_128k_is_marked_beyond_its_8k_window(page, query):
    at = open_page(page, model="llama-3-8b", **query)
    notes = [w.value for w in at.warning if "Beyond the model's window" in w.value]
    assert notes and "128K" in notes[0] and "8,192" in notes[0], [w.value for w in at.warning]


def test_gpt3_at_1m_names_its_2k_window_and_8k_on_llama_3_8b_is_not_marked():
    at = open_page("app_pages/kv_cache.py", model="gpt-3-175b", kv_ctx="1048576")
    assert any("1M tokens" in w.value and "2,048" in w.value for w in at.warning)
    at = open_page(model="llama-3-8b", h_ctx="8192")
    assert not any("Beyond the model's window" in w.value for w in at.warning)


def test_beyond_trained_window():
    llama = calc.get_model("llama-3-8b")
    assert calc.models.beyond_trained_window(llama, 8192) is None
    assert calc.models.beyond_trained_window(llama, 8193) == 8192
    with pytest.raises(ValueError, match="positive"):
        calc.models.beyond_trained_window(llama, 0)


def test_every_context_slider_reads_the_same_link_forms():
    # "8192" and "8K" name the same option on every page; the app writes "8K".
    at = open_page(h_ctx="16384")
    assert at.select_slider(key="h_ctx").value == 16384
    at = open_page("app_pages/roofline.py", rf_ctx="1M")
    assert at.select_slider(key="rf_ctx").value == 2**20


def test_many_gpus_context_is_the_same_control_as_every_other_pages():
    # Many GPUs' context was a number box (1 to 2M tokens, shown "8192") that refused a link's "16K"; now the
    # shared slider: 128 to 1M tokens, shown "8K", taking "16K" and "16384" alike.
    at = open_page("app_pages/many_gpus.py", mg_ctx="16K")
    ctx = at.select_slider(key="mg_ctx")
    assert ctx.value == 16384 and ctx.options[0] == "128" and ctx.options[-1] == "1M" and "8K" in ctx.options
    assert not [i.value for i in at.info if "ignored" in i.value]
    assert any(c.value.startswith("Llama-3-8B at 16,384 tokens.") for c in at.caption)   # the GPU table's context
    assert open_page("app_pages/many_gpus.py", mg_ctx="16384").select_slider(key="mg_ctx").value == 16384


# -- the capacity plan's binding limit ------------------------------------------------------------------------


def _ds_plan(rps, max_batch=None):
    from calc import planning
    m, a = calc.get_model("deepseek-v3"), calc.get_accelerator("h200")
    t = planning.ServingTraffic(rps, 2.0, 2048, 256, 0)
    grid = None if max_batch is None else planning.plan_grid(m, a, t, "fp8", "bf16", max_batch=max_batch)
    return planning.capacity_plan(m, a, t, 0.05, 1.0, 4.5, "fp8", "bf16", grid=grid)


def test_the_plan_names_the_batch_cap_when_raising_it_saves_gpus():
    plan = _ds_plan(60)
    # 120 req/s at the peak; TP1 EP8 at batch 512 serves 1 / (28 ms + 256 x 25.0 ms / 512) = 26 req/s: 5 replicas.
    assert (plan.gpus, plan.batch, plan.max_batch, plan.binding) == (40, 512, 2080, "batch cap")
    assert "holds 2,080 sequences" in plan.verdict and "raise the largest batch tried" in plan.verdict
    raised = _ds_plan(60, max_batch=2080)
    # at batch 2,080 a replica serves 1 / (28 ms + 256 x 36.6 ms / 2,080) = 31.7 req/s: 4 replicas, 32 GPUs;
    # then each request's 28 ms prefill is 86% of a replica's time: prefill binds.
    assert (raised.gpus, raised.binding) == (32, "prefill")
    assert "fills 86% of a replica's time" in raised.verdict


def test_the_plan_says_memory_binds_a_narrower_layout_not_this_ones_batch():
    plan = _ds_plan(20)
    assert plan.binding == "memory" and plan.max_batch == 2080
    # the 2,080 sequences fit; what memory stops is the 4-GPU layout (671 GB of fp8 weights > 4 x 141 GB)
    assert "holds 2,080 sequences, more than the plan's batch" in plan.verdict and "TP1 EP4" in plan.verdict


def test_many_gpus_page_lets_the_user_raise_the_batch_cap():
    # sized with the roofline bound (the page's default is the serving estimate, whose TPOT binds first here)
    at = open_page("app_pages/many_gpus.py", model="deepseek-v3", gpu="h200", wq="fp8", mg_rps="60")
    at.radio(key="mg_timing").set_value("bound").run()
    assert any("binding: batch cap" in s.value for s in at.success), [s.value for s in at.success]
    at.number_input(key="mg_cap").set_value(2080).run()
    assert any("= 32 x NVIDIA H200" in s.value and "binding: prefill" in s.value for s in at.success)


# -- Many GPUs opens without an error for a model too big for one GPU -----------------------------------------


def test_many_gpus_offers_the_layout_that_fits_and_keeps_the_error_for_a_chosen_one():
    at = open_page("app_pages/many_gpus.py", model="deepseek-v3", gpu="h200", wq="fp8")
    # 671 GB of fp8 weights > 141 GB: the page's default of one GPU is not the user's choice, so no red error about it
    assert not [e.value for e in at.error if "The weights alone need" in e.value]
    # the smallest layout of the sliders' range: TP1 PP3 EP2, 6 GPUs (3 stages of 224 GB of weights on 2 x 141 GB)
    assert any("does not fit on one NVIDIA H200" in i.value and "**TP1 PP3 EP2**" in i.value for i in at.info)
    at.button(key="mg_use_fit").click().run()
    assert pagetest.metric(at, "GPUs") == "6"
    assert (at.select_slider(key="mg_pp").value, at.select_slider(key="mg_ep").value) == (3, 2)
    at = open_page("app_pages/many_gpus.py", model="deepseek-v3", gpu="h200", wq="fp8", mg_ep="2")
    assert any("TP1 PP3 EP2" in e.value for e in at.error)     # a layout the user chose: the error stays


def test_many_gpus_opening_layout_gets_no_red_error_from_the_serving_estimate_either():
    # DeepSeek-V3 in its checkpoint's fp8-block on one H200: 673 GB of weights against 141 GB. The page's opening
    # layout (one GPU) is not the user's: the note and the button say what fits, and no section below it adds a
    # red "does not fit in 90% of ... memory under TP1" (the serving estimate of a layout that holds nothing).
    at = open_page("app_pages/many_gpus.py", model="deepseek-v3", gpu="h200")
    assert [e.value for e in at.error] == []
    assert any("does not fit on one NVIDIA H200" in i.value for i in at.info)


# -- the monthly bill in plain terms ---------------------------------------------------------------------------


def test_monthly_bill_takes_requests_a_day_as_the_plain_alternative():
    at = open_page("app_pages/monthly_bill.py")
    product = {r.label: r.value for r in pagetest.row_metrics(at)}
    at.radio(key="mb_mode").set_value("requests a day").run()
    # the product's default, 100,000 users x (1% + 0.1%) x 5 generations = 5,500 requests a day: the same bill
    assert any(m.value == "#### The bill at 5,500 requests a day" for m in at.markdown)
    assert {r.label: r.value for r in pagetest.row_metrics(at)} == product
    at.number_input(key="mb_rpd").set_value(11_000).run()
    # twice the requests: the API tiers' bills double ($3,576.4 -> $7,152.8 for the first tier, rounded $7,153)
    assert pagetest.row_metrics(at)[0].value == "$7,153"
    # and each tier's figure is per request, not per generation (the product's word), under the metric and in the table
    captions = [c for r in pagetest.row_metrics(at) for c in r.captions]
    assert any(c.endswith("per request") for c in captions), captions
    assert not any("per generation" in c for c in captions), captions
    headers = [t[0] for t in pagetest.shown_tables(at) if t]
    assert any("per request" in h for h in headers) and not any("per generation" in h for h in headers), headers


def test_the_bills_caption_names_the_model_it_prices():
    at = open_page("app_pages/monthly_bill.py", model="qwen2.5-7b")
    notes = [c.value for c in at.caption if c.value.startswith("Self-hosted:")]
    assert notes and "Qwen2.5-7B" in notes[0] and "Opus" not in notes[0]


# -- thousands separators --------------------------------------------------------------------------------------


def test_large_gpu_counts_carry_thousands_separators():
    at = open_page("app_pages/kv_cache.py", model="gpt-3-175b", kv_ctx="1048576", kv_b="1024")
    # 96 layers x 2 x 96 heads x 128 x 2 B = 4,718,592 B per token x 1,048,576 x 1,024 = 5,066.55 TB + 349.21 GB
    # of weights = 5,066.90 TB over 80 GB: 63,337 GPUs
    assert any("needs 63,337 x NVIDIA H100" in w.value for w in at.warning), [w.value for w in at.warning]
    at = open_page("app_pages/quantization.py", model="gpt-3-175b", q_ctx="1048576", q_b="512")
    assert any("bf16 needs 31,671" in w.value for w in at.warning)


def test_the_plans_verdict_separates_thousands():
    from calc import planning
    m, a = calc.get_model("llama-3.2-1b"), calc.get_accelerator("h100-sxm")
    plan = planning.capacity_plan(m, a, planning.ServingTraffic(4_000_000.0, 1.0, 256, 64), 1.0, 1.0)
    assert plan.layout.replicas >= 1000
    assert f"{plan.layout.replicas:,} replicas" in plan.verdict and f"= {plan.gpus:,} x" in plan.verdict


def test_the_weight_format_a_config_set_follows_the_model_back_to_a_preset():
    at = open_page()
    at.text_area(key="cfg_text").input(json.dumps(_gpt_oss_120b())).run()
    at.button(key="cfg_load").click().run()
    assert at.selectbox(key="wq").value == "mxfp4"
    at.selectbox(key="model").set_value("llama-3-8b").run()
    # Llama-3-8B's checkpoint is bf16: 8,030,261,248 x 2 B = 16.06 GB, not the mxfp4 the previous config declared
    assert at.selectbox(key="wq").value == "bf16" and _memory_table(at)["weights"] == "16.06 GB"
    # a format the user picks stays theirs
    at.selectbox(key="wq").set_value("int4").run()
    at.selectbox(key="model").set_value("qwen3-8b").run()
    assert at.selectbox(key="wq").value == "int4"


# -- a preset opens in its published checkpoint's weight format ------------------------------------------------

#: The presets whose published checkpoint is not 16-bit, and its format (calc.dtypes names).
CHECKPOINT_PRESETS = {"gpt-oss-120b": "mxfp4", "gpt-oss-20b": "mxfp4", "kimi-k2": "fp8-block",
                      "deepseek-v3": "fp8-block", "deepseek-v3.2": "fp8-block", "minimax-m2.5": "fp8-block",
                      "deepseek-v4-pro": "mxfp4-fp8", "deepseek-v4-flash": "mxfp4-fp8"}


def test_each_preset_carries_the_format_its_shipped_config_declares():
    for model_id in calc.list_models():
        stored = calc.get_model(model_id).checkpoint_format
        assert stored == CHECKPOINT_PRESETS.get(model_id), model_id
        if model_id != "deepseek-v3.2":  # the catalogue and the shipped config.json agree (read independently)
            assert checkpoint_weight_format(calc.models.hf_config(model_id))[0] == stored, model_id
        assert not stored or "checkpoint format " + stored in calc.get_model(model_id).source, model_id
    # DeepSeek-V3.2's shipped file is DeepSeek's own inference config: fp8 weights with ue8m0 block scales
    v32 = calc.models.hf_config("deepseek-v3.2")
    assert (v32["dtype"], v32["scale_fmt"]) == ("fp8", "ue8m0")


def test_calc_defaults_stay_bf16_whatever_the_checkpoint():
    # The course's worked numbers use calc's own default (bf16): 671B-class DeepSeek-V3 at 2 B per parameter.
    model = calc.get_model("deepseek-v3")
    assert calc.memory.weight_bytes(model) == calc.memory.weight_bytes(model, "bf16") == 2 * model.n_params


def test_the_gpt_oss_120b_preset_opens_in_mxfp4_and_says_where_from():
    at = open_page(model="gpt-oss-120b")
    assert at.selectbox(key="wq").value == "mxfp4"
    # the same 65.25 GB as the loaded config.json above: experts at 4.25 bits, the rest in bf16 (not 233.66 GB)
    assert _memory_table(at)["weights"] == "65.25 GB"
    said = [c.value for c in at.sidebar.caption if c.value.startswith("Checkpoint format")]
    assert said and "MXFP4" in said[0] and "from the model's published checkpoint" in said[0], said


@pytest.mark.parametrize("page", [None, "app_pages/kv_cache.py", "app_pages/roofline.py", "app_pages/many_gpus.py",
                                  "app_pages/latency_cost.py", "app_pages/batching.py"])
def test_deepseek_v3_opens_in_fp8_block_on_every_page(page):
    at = open_page(page, model="deepseek-v3", gpu="h200")
    assert at.selectbox(key="wq").value == "fp8-block"


def test_the_user_can_still_choose_another_format():
    at = open_page(model="gpt-oss-120b", wq="bf16")   # a link that carries bf16 keeps it
    assert at.selectbox(key="wq").value == "bf16"
    assert _memory_table(at)["weights"] == "233.66 GB"
    assert any("the pages use bf16" in c.value for c in at.sidebar.caption)
    at.selectbox(key="wq").set_value("int4").run()
    assert at.selectbox(key="wq").value == "int4"


def test_the_format_follows_the_model_until_the_user_picks_one():
    at = open_page()                                    # Llama-3-8B, bf16
    for model_id, expected in (("gpt-oss-120b", "mxfp4"), ("deepseek-v3", "fp8-block"), ("llama-3-8b", "bf16")):
        at.selectbox(key="model").set_value(model_id).run()
        assert at.selectbox(key="wq").value == expected, model_id
    at.selectbox(key="wq").set_value("int8").run()      # the user's own choice stays with the next model
    at.selectbox(key="model").set_value("gpt-oss-120b").run()
    assert at.selectbox(key="wq").value == "int8"


def test_the_lecture_keeps_deepseek_v3_in_bf16_where_its_step_says_so():
    step = next(i + 1 for i, (page, state, _) in enumerate(calc_story()) if state.get("model") == "deepseek-v3")
    at = open_page("app_pages/kv_cache.py", story=str(step))
    assert (at.selectbox(key="model").value, at.selectbox(key="wq").value) == ("deepseek-v3", "bf16")


def calc_story():
    from ui import classroom
    return classroom.STORY


def test_token_counts_beside_the_context_read_as_the_context_does():
    # the roofline's prompt length sat beside its context slider reading "8192" (ends "16" and "131072") while the
    # context read "8K"; the batching page's lengths likewise. Shown and linked as "8K"; a link's "8192" still works.
    at = open_page("app_pages/roofline.py", rf_prompt="16K")
    prompt = at.select_slider(key="rf_prompt")
    assert prompt.value == 16384 and prompt.options[-1] == "128K" and "8K" in prompt.options
    assert open_page("app_pages/roofline.py", rf_prompt="2048").select_slider(key="rf_prompt").value == 2048
    at = open_page("app_pages/batching.py", bt_maxlen="16K", bt_pmean="1K")
    assert at.select_slider(key="bt_maxlen").value == 16384 and at.select_slider(key="bt_maxlen").options[-1] == "32K"
    assert at.select_slider(key="bt_pmean").value == 1024 and at.select_slider(key="bt_omean").options[-1] == "4K"


def test_the_roofline_experiments_name_their_context_as_the_slider_does():
    at = open_page("app_pages/roofline.py")
    labels = [b.label for b in at.button if b.label.startswith("Llama-3-8B, B=")]
    assert labels == ["Llama-3-8B, B=1 at 8K", "Llama-3-8B, B=32 at 8K"]       # not "8k" beside a slider's "8K"


def test_the_measured_page_upload_cap_is_the_servers():
    # The uploader's own cap must not exceed the server's (.streamlit/config.toml maxUploadSize): a file between
    # the two passed the widget and the server answered "AxiosError: Request failed with status code 413".
    import re
    import tomllib
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    server_mb = tomllib.loads((root / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]
    widget_mb = [int(m) for m in re.findall(r"max_upload_size=(\d+)", (root / "ui" / "measured_views.py").read_text())]
    assert widget_mb and all(mb <= server_mb for mb in widget_mb), (widget_mb, server_mb)
    # and the data set's own CSV, offered for download "to edit and upload here", fits both caps (it did not at 4 MB:
    # 4.52 MB, refused by the widget with only a tooltip)
    from calc import measurements
    size = Path(measurements.MEASUREMENTS_PATH).stat().st_size
    assert size <= measurements.MAX_UPLOAD_BYTES and size <= min(widget_mb) * 2**20, size
