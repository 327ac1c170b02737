"""AppTest of the "Many GPUs" page: the layout's numbers, the plan, the table of GPUs, pins in the URL."""
import pytest

import calc
from ui import gpu_pins
from ui.formats import fmt_seconds
import pagetest
from pagetest import figures, metric

PAGE = "app_pages/many_gpus.py"
L70, H100 = calc.get_model("llama-3.1-70b"), calc.get_accelerator("h100-sxm")
PIN_70B_TP8 = "llama-3.1-70b~h100-sxm~8~1~1~1~bf16~bf16~32~8192~3.99"


def open_page(**query):
    """The page with the capacity plan sized on the roofline bound (the course's numbers; the page's default, the
    serving estimate, is tested in tests/test_serving_pages.py) unless ``mg_timing`` is given."""
    query.setdefault("mg_timing", "roofline bound")
    return pagetest.open_page(PAGE, timeout=60, **query)


def test_default_is_one_gpu_and_the_single_gpu_answer():
    at = open_page()
    # Llama-3-8B, H100 SXM, 8k, B = 16 on one GPU: the course's 9.92 ms (week 11, step 4: 9.9 ms) less the
    # 1.05 GB input table a step does not read (it gathers 16 rows): 4.4806 + 16 x 0.3205 = 9.61 ms.
    assert metric(at, "GPUs") == "1"
    assert metric(at, "TPOT") == "9.61 ms"
    assert at.success and "replica" in at.success[0].value
    assert not at.error


def test_llama_70b_at_tp8():
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_b="32")
    step = calc.decode_step_time(L70, H100, 32, 8192, tp=8)
    assert metric(at, "GPUs") == "8"
    assert metric(at, "TPOT") == fmt_seconds(step.total_s)
    # 8 GPUs x $3.99 x 720 h = $22,982.40
    assert metric(at, "USD per month") == "$22,982"
    assert at.info and at.info[0].value.startswith("Disaggregated: prefill on")
    options = pagetest.tables(at)[0]  # every layout of the plan's grid, cheapest first
    assert options["layout"].iat[0] in at.success[0].value
    gpus = pagetest.tables(at)[1].set_index("accelerator")
    assert gpus.loc["h100-sxm", "tp"] == 2 and gpus.loc["b200", "tp"] == 1


def test_a_layout_the_model_cannot_take_is_a_message_and_the_rest_stays():
    at = open_page(model="mixtral-8x7b", mg_ep="16")
    # Mixtral has 8 routed experts: EP 16 cannot spread them
    assert at.error and "experts" in at.error[0].value and "16" in at.error[0].value
    assert len(at.error) == 1   # said once; the frontier below does not add "does not fit in any layout"
    assert any(c.value.startswith("No curves: the PP and EP chosen above") for c in at.caption)
    assert len(pagetest.tables(at)) >= 1  # the table of GPUs is still there
    assert at.select_slider(key="mg_ep").value == 16  # the choice is kept


def test_zero_traffic_plan_is_one_replica():
    at = open_page(model="llama-3.1-70b", mg_rps="0")
    # 141 GB of weights: two 80 GB H100s; nothing else to serve.
    assert at.success[0].value.startswith("1 replica of TP2")


@pytest.mark.parametrize("timing", ["roofline bound", "serving estimate"])
def test_zero_traffic_plans_agree_on_the_batch_and_say_what_it_means(timing):
    # Llama-3-8B on one H100 at 0 requests/s: the colocated line and the disaggregated one name the same batch (the
    # decode pool said batch 1 while the colocated plan said 137), and a caption under them says what it is
    import re
    from calc import planning
    at = open_page(model="llama-3-8b", mg_rps="0", mg_timing=timing)
    colocated = re.search(r"of TP1 at batch ([\d,]+) ", at.success[0].value).group(1)
    split = next(i.value for i in at.info if i.value.startswith("Disaggregated:"))
    assert re.search(r"decode on 1 x TP1 at batch ([\d,]+) ", split).group(1) == colocated
    # the bound's batch by hand: the cache of 2,304 tokens (131,072 B each) beside 16.06 GB of weights on 80 GB
    # holds 211 sequences, at a 22.4 ms step, within the 50 ms target
    if timing == "roofline bound":
        assert colocated == "211" == str(calc.max_batch(calc.get_model("llama-3-8b"), H100, 2304))
    note = [c.value for c in at.caption if c.value.startswith("Batch, in both lines")]
    assert note and "With no traffic (0 requests/s) the always-on replicas stay idle" in note[0]
    traffic = planning.ServingTraffic(0.0, 2.0, 2048, 256)
    assert note[0] == planning.load_note(*(f(calc.get_model("llama-3-8b"), H100, traffic, 0.05, 1.0, 3.99,
                                                 timing="serving" if timing == "serving estimate" else "bound")
                                           for f in (planning.capacity_plan, planning.disaggregated_plan)), traffic)


def test_pin_goes_into_the_url_and_comes_back():
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_b="32")
    at.button(key="mg_pin").click().run()
    assert at.session_state["mg_p1"] == PIN_70B_TP8
    assert at.query_params["mg_p1"] in (PIN_70B_TP8, [PIN_70B_TP8])
    at.button(key="mg_pin").click().run()
    at.button(key="mg_pin").click().run()
    at.button(key="mg_pin").click().run()  # a fourth: all three slots taken
    assert at.warning and "Three configurations" in at.warning[0].value
    at.button(key="mg_unpin").click().run()
    assert not any(at.session_state[k] for k in gpu_pins.PIN_KEYS)
    # A fresh session opened on that link shows the pinned numbers next to what else is chosen.
    fresh = open_page(mg_p1=PIN_70B_TP8, mg_p2="llama-3.1-70b~h200~4~1~1~1~bf16~bf16~32~8192~4.5")
    pins = pagetest.tables(fresh)[-1]
    assert list(pins.columns) == ["pin 1", "pin 2"]
    assert pins.loc["TPOT", "pin 1"] == f"{calc.decode_step_time(L70, H100, 32, 8192, tp=8).total_s * 1e3:,.2f} ms"
    # Pin 2: 4 H200 at $4.50 for 720 h = $12,960.
    assert pins.loc["USD per month (720 h)", "pin 2"] == "$12,960"


def test_bad_pin_in_the_url_is_a_message():
    at = open_page(mg_p1="nonsense", mg_p2="llama-3.1-70b~h100-sxm~3~1~1~1~bf16~bf16~32~8192~3.99")
    texts = [e.value for e in at.error]
    assert any("Pin 1" in t and "11 parts" in t for t in texts)
    assert any("Pin 2" in t and "query heads" in t for t in texts)


def test_pin_codec_round_trip():
    p = gpu_pins.decode(gpu_pins.encode("deepseek-v3", "h200", 1, 1, 8, 2, "fp8", "bf16", 64, 4096, 4.5))
    assert (p["model"], p["gpu"], p["tp"], p["ep"], p["replicas"], p["weight_dtype"], p["batch"],
            p["context_len"], p["price_per_hour_usd"]) == ("deepseek-v3", "h200", 1, 8, 2, "fp8", 64, 4096, 4.5)


def test_home_gives_a_70b_the_step_on_the_smallest_tp_that_fits():
    at = pagetest.open_page(None, model="llama-3.1-70b")
    # 141 GB of weights: one H100 is not enough, two are (TP 2).
    step = calc.decode_step_time(L70, H100, 1, 8192, tp=2)
    assert metric(at, "Decode step (TPOT), bound, TP 2") == fmt_seconds(step.total_s)
    assert any("2 GPUs" in w.value and fmt_seconds(step.comm_s) in w.value for w in at.warning)


def test_garbage_url_falls_back_to_defaults():
    at = open_page(mg_tp="3", mg_ic="zzz", mg_b="-5", mg_ctx="abc", mg_rps="-1", mg_hit="500")
    assert at.select_slider(key="mg_tp").value == 1 and at.selectbox(key="mg_ic").value == "default"
    assert at.number_input(key="mg_b").value == 16
    assert metric(at, "GPUs") == "1"


def test_absurd_pin_values_are_messages():
    for text, part in (("llama-3-8b~h100-sxm~1~1~1~1~bf16~bf16~" + "9" * 400 + "~8192~1", "batch"),
                       ("llama-3-8b~h100-sxm~1~1~1~1~bf16~bf16~1~8192~inf", "price"),
                       ("llama-3-8b~h100-sxm~1.5~1~1~1~bf16~bf16~1~8192~1", "tp")):
        with pytest.raises(ValueError, match=part):
            gpu_pins.decode(text)


def test_tp16_says_it_leaves_the_nvlink_domain():
    at = open_page(model="llama-3.1-70b", mg_tp="16")
    assert any("span more than one NVLink 4" in c.value and "InfiniBand NDR" in c.value and "two levels" in c.value
               for c in at.caption)


def test_a_layout_that_does_not_fit_shows_no_headline_numbers_and_the_smallest_that_does():
    at = open_page(model="llama-3.1-405b", gpu="l4")
    # 405e9 parameters x 2 bytes (bf16) = 811 GB of weights against 24 GB per L4: 811 / 24 = 33.8, so at least
    # 34 GPUs; 32 x 24 = 768 GB is short. The sliders give TP in powers of two and PP in 1, 2, 3, 4, 8: the first
    # count above 34 is TP 16 x PP 3 = 48 GPUs (126 layers, 42 per stage: 811 / 48 = 16.9 GB per GPU, fits).
    assert metric(at, "GPUs") == "no fit"
    assert {metric(at, k) for k in ("TPOT", "Tokens/s per user", "Tokens/s per GPU", "USD per month")} == {"—"}
    # the page's opening layout (one GPU) is not the user's choice: a note and a button, not an error
    assert not [e.value for e in at.error if "The weights alone need" in e.value]
    assert "The weights alone need" in at.info[0].value and "48 GPUs per replica" in at.info[0].value


def test_a_model_too_big_for_16_gpus_is_planned_over_the_sliders_range():
    at = open_page(model="kimi-k2", wq="bf16")
    # Kimi-K2: 1.03e12 parameters x 2 bytes = 2.05 TB; 16 H100s hold 16 x 80 = 1.28 TB, so nothing of the plan's
    # usual grid (at most TP 8 x PP 2 = 16 GPUs) fits. The plan then searches the sliders' range, as the layout
    # section above does, so the two name the same smallest layout: 2.05 TB / 80 GB = 25.6 -> 32 GPUs
    # (powers of two), TP2 x EP32 (its 384 routed experts divide by 32).
    assert "is **TP2 EP32**, 32 GPUs per replica" in at.info[0].value
    # how they are counted: max(TP, EP) = 32 ranks in one stage, attention in 32 / 2 = 16 groups of TP 2
    assert "32 ranks per stage, attention data-parallel in 16 groups of TP 2" in at.info[0].value
    assert not [e.value for e in at.error if "traffic" in e.value]
    plan = at.success[0].value
    # the plan, searching the same range, serves the traffic on the same 32 GPUs as TP4 x EP32: at one GPU count a
    # wider TP group splits attention's weights further, and its all-reduces are one hop each over NVSwitch
    # (calc.collectives.all_reduce_s), so it is the faster of the two
    assert "of TP4 EP32 at batch" in plan and "= 32 x NVIDIA H100" in plan
    searched = next(c.value for c in at.caption if c.value.startswith("Searched:"))
    # EP 128 divides the 384 experts too; 256 and 320 do not (plan_eps keeps those that divide)
    assert searched.startswith("Searched: TP 1, 2, 4, 8, 16, 32 x PP 1, 2, 3, 4, 8 x EP 1, 2, 4, 8, 16, 32, 64, 128 "
                               "x batch")


def test_the_plan_searches_its_usual_grid_when_a_model_fits_there():
    at = open_page(model="mixtral-8x7b")
    # Mixtral-8x7B: 46.7e9 x 2 B = 93 GB, on two 80 GB H100s: the usual grid fits it, its 8 experts split by 2, 4, 8
    searched = next(c.value for c in at.caption if c.value.startswith("Searched:"))
    assert searched.startswith("Searched: TP 1, 2, 4, 8 x PP 1, 2 x EP 1, 2, 4, 8 x batch")


def test_interconnect_labels_are_short():
    at = open_page()
    box = at.selectbox(key="mg_ic")
    # The longest short name, "AMD Infinity Fabric", is 19 characters (was "default: AMD Infinity Fabric (8-GPU
    # platform)", 46); the full names are in the help.
    assert max(len(o) for o in box.options) <= 19
    assert "NVLink 4 + NVSwitch (HGX H100/H200)" in box.help
    # A link carries the short label; the caption names the link in full.
    at = open_page(mg_ic="PCIe Gen5 x16")
    assert at.selectbox(key="mg_ic").value == "pcie5"
    layout_caption = next(c.value for c in at.caption if c.value.startswith("Llama-3-8B on "))  # the layout's first
    assert "interconnect PCIe Gen5 x16 (no NVLink bridge);" in layout_caption


def test_an_experiment_that_changes_the_gpu_moves_the_price_with_it():
    # "DeepSeek-V3 at EP 8 on H200" switches the H100 (list price $3.99/h) to the H200 ($5.40/h in accelerators.json):
    # the price follows, as the GPU menu does, so the page and its link show the same dollars. 8 GPUs at
    # $5.40/h is $43.20/h; at the H100's $3.99 it would have been $31.92/h.
    at = open_page()
    assert at.button(key="mg_exp_3").label == "DeepSeek-V3 at EP 8 on H200"  # the button names the GPU it picks
    at.button(key="mg_exp_3").click().run()
    assert at.session_state["gpu"] == "h200"
    assert at.session_state["price"] == pytest.approx(calc.get_accelerator("h200").price_per_hour_usd)
    texts = [e.value for kind in (at.markdown, at.success, at.info, at.caption) for e in kind]
    assert any("$43.20/h" in t for t in texts) and not any("$31.92/h" in t for t in texts)
    # A price the user typed stays: type $2.00 on the H100, then the experiment keeps $2.00.
    at = open_page(price="2.0")
    at.button(key="mg_exp_3").click().run()
    assert at.session_state["price"] == pytest.approx(2.0)


def test_ep_is_offered_for_a_mixture_of_experts_only():
    at = open_page(mg_ep="16", mg_tp="16")
    # Llama-3-8B is dense: the EP slider is greyed and a link's EP 16 runs as EP 1, so the layout TP 16 draws
    # (32 query heads / 16 = 2 per GPU) instead of "ep > 1 needs a mixture-of-experts model".
    assert at.select_slider(key="mg_ep").disabled
    assert any(c.value.startswith("Llama-3-8B is dense: EP 1") for c in at.caption)
    assert not [e.value for e in at.error if "mixture-of-experts" in e.value]
    assert len([f for f in figures(at) if not any(d.get("name") == "serving estimate and range" for d in f["data"])]) == 2
    assert not open_page(model="mixtral-8x7b").select_slider(key="mg_ep").disabled


def test_the_gpu_table_says_when_no_gpu_holds_the_model_in_one_node():
    at = open_page(model="kimi-k2", wq="fp32")
    # 4.1 TB of fp32 weights against the largest GPU of the catalogue times 8 (a node; 8 x 288 GB B300s or
    # MI355Xs hold its 2.05 TB of bf16): no row fits, so the table is introduced by a sentence instead of
    # reading as "nothing can run it".
    biggest = max(calc.get_accelerator(g).memory_bytes for g in calc.list_accelerators())
    assert 8 * biggest < calc.get_model("kimi-k2").n_params * 4
    assert any(i.value.startswith("No GPU of the catalogue holds Kimi-K2") for i in at.info)
    assert not any(i.value.startswith("No GPU of the catalogue") for i in open_page(model="kimi-k2", wq="bf16").info)
    assert not any(i.value.startswith("No GPU of the catalogue") for i in open_page().info)   # Llama-3-8B fits


def test_the_throughput_curves_reach_the_tp_the_slider_offers():
    # Kimi-K2 in bf16 on H100s at PP 1, EP 1: 2.05 TB of weights need TP 32 (64 GB a GPU); TP 16 leaves 128 GB a
    # GPU, over 80. The frontier then has exactly one curve, TP 32, the layout the sliders chose (it stopped at
    # TP 16 and drew none, where the search above finds TP 32).
    at = open_page(model="kimi-k2", wq="bf16", gpu="h100-sxm", mg_tp="32")
    assert 16 * 80e9 < calc.get_model("kimi-k2").n_params * 2 < 32 * 80e9
    front = figures(at)[-1]
    curves = [t["name"] for t in front["data"] if t["name"].startswith("TP ")]
    assert curves == ["TP 32"]


def test_the_layout_shows_its_convention_and_a_refused_tp_says_why():
    # Llama-3.1-70B at TP 8 PP 3: vLLM's split 27/27/26 on screen.
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3")
    assert any(c.value.startswith("Convention: layers per stage 27/27/26 (vLLM's split)") for c in at.caption)
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3", mg_ppr="SGLang")
    assert any("26/27/27 (SGLang's split)" in c.value for c in at.caption)
    # TP 16 > 8 KV heads: replicated, said so.
    at = open_page(model="llama-3.1-70b", mg_tp="16")
    assert any("stored on 2 ranks" in c.value for c in at.caption)
    # DeepSeek-V3 prefill as its report deploys it: TP 4, EP 32, 32 redundant experts: 9 experts per GPU.
    at = open_page(model="deepseek-v3", gpu="h100-sxm", wq="fp8", mg_tp="4", mg_ep="32", mg_red="32")
    assert any("32 redundant experts per MoE layer, 9 experts per GPU" in c.value for c in at.caption)
    assert not at.exception


@pytest.mark.parametrize("link, shown, split", [(None, "vLLM's split", "27/27/26 (vLLM's split)"),
                                                 ("vLLM", "vLLM's split", "27/27/26 (vLLM's split)"),
                                                 ("SGLang", "SGLang's split", "26/27/27 (SGLang's split)"),
                                                 ("sglang", "SGLang's split", "26/27/27 (SGLang's split)")])
def test_layers_per_stage_reads_as_a_split_convention_and_takes_older_links(link, shown, split):
    # the choice names a split convention, not the serving engine: an engine's name alone read as the engine select
    query = {} if link is None else {"mg_ppr": link}
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3", **query)
    box = at.selectbox(key="mg_ppr")
    assert box.options == ["vLLM's split", "SGLang's split", "by hand"]
    assert box.value == shown
    assert "vLLM's split (the default)" in box.help and "independent of the Serving engine select below" in box.help
    # a link of the engine's name alone (older links) opens on that split, not on the default, and is not refused
    assert any(c.value.startswith(f"Convention: layers per stage {split}") for c in at.caption)
    assert not any("mg_ppr" in m.value for m in [*at.warning, *at.info])
    # the engine select the estimate follows is a separate control, left at its own default
    assert at.selectbox(key="mg_srv_engine").value == "vllm"


@pytest.mark.parametrize("choice", ["by hand", "hand", " Hand "])
def test_a_split_by_hand_is_used_and_a_bad_one_is_said(choice):
    # "hand" alone, as one would type it into a link, names the same choice as "by hand" and is not refused
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3", mg_ppr=choice, mg_split="28,26,26")
    assert at.selectbox(key="mg_ppr").value == "by hand"
    assert any("layers per stage 28/26/26 (set by hand)" in c.value for c in at.caption)
    assert not any("mg_ppr" in m.value for m in [*at.warning, *at.info])
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3", mg_ppr="by hand", mg_split="28,26,25")
    assert any("adding up to the 80" in e.value for e in at.error) and not at.exception


def test_the_plan_says_which_layouts_the_engines_refuse():
    # Qwen2.5-7B: 28 query heads; 28 / 8 = 3.5, so vLLM and SGLang refuse TP 8 (and TP 8 PP 2): the plan skips them
    # and says why.
    at = open_page(model="qwen2.5-7b")
    refused = [c.value for c in at.caption if "Skipped, as vLLM and SGLang refuse them" in c.value]
    assert refused and "**TP8, TP8 PP2**" in refused[0] and "28 query heads" in refused[0]


def test_the_gpu_table_says_no_list_price_not_no_fit_for_a_gpu_that_holds_the_model():
    # DeepSeek-V3 (fp8-block, 673 GB) at 8K: the MI325X holds it at TP 4 (4 x 256 GB) with room for a batch, but the
    # catalogue has no list price for it, so its dollars are empty: the cell says why ("no list price"), not
    # "no fit", which the same row's TP, GPUs and max batch contradict.
    at = open_page(model="deepseek-v3", gpu="h200")
    shown = next(t for t in pagetest.shown_tables(at) if t[0][0] == "accelerator")
    head, rows = shown[0], {r[0]: dict(zip(shown[0], r)) for r in shown[1:]}
    mi325 = rows["AMD Instinct MI325X 256GB"]
    assert mi325["smallest TP"] == "4" and mi325["max batch"] != "no fit"
    assert mi325[head[1]] == "no list price" and mi325["USD per hour"] == "no list price"
    assert rows["NVIDIA H100 SXM 80GB"][head[1]] == "no fit"           # 8 x 80 GB < 673 GB: no fit at all


def test_a_rate_above_the_old_box_limit_is_planned_and_a_large_fleet_gets_a_note():
    # 2,000,000 requests/s (the box used to stop at 1,000,000 and drop a larger value without a word)
    at = open_page(model="llama-3-8b", mg_rps="2000000")
    assert at.number_input(key="mg_rps").value == 2_000_000
    from calc import planning
    traffic = planning.ServingTraffic(2_000_000.0, 2.0, 2048, 256)
    plan = planning.capacity_plan(calc.get_model("llama-3-8b"), H100, traffic, 0.05, 1.0, 3.99)
    assert plan.gpus > planning.LARGE_FLEET_GPUS
    assert at.success[0].value == plan.verdict
    note = [i.value for i in at.info if i.value.startswith("A very large fleet")]
    assert note == [planning.fleet_note(plan)] and f"{plan.gpus:,} GPUs" in note[0]
    # two pools that take fewer GPUs than the colocated plan need no word
    split = planning.disaggregated_plan(calc.get_model("llama-3-8b"), H100, traffic, 0.05, 1.0, 3.99)
    assert split.gpus <= plan.gpus and planning.disaggregation_note(plan, split) == ""
    assert not [c for c in at.caption if c.value.startswith("Split into two pools")]
    # the default traffic (5 requests/s): a few GPUs, no note
    assert not [i for i in open_page(model="llama-3-8b").info if "very large fleet" in i.value]


def test_two_pools_dearer_than_the_colocated_plan_are_explained():
    # 1,000,000 requests/s with the serving estimate (the page's default model): the disaggregated pools take more
    # GPUs than the colocated replicas, and the caption says why, with both totals the two verdicts state
    import re
    at = open_page(mg_rps="1000000", mg_timing="serving")
    colocated = int(re.search(r"= ([\d,]+) x ", at.success[0].value).group(1).replace(",", ""))
    split = [i.value for i in at.info if i.value.startswith("Disaggregated:")][0]
    pools = int(re.search(r"([\d,]+) in all", split).group(1).replace(",", ""))
    prefill = re.search(r"prefill on [\d,]+ x \S+ \(([\d,]+) GPUs\)", split).group(1)
    assert pools > colocated
    note = [c.value for c in at.caption if c.value.startswith("Split into two pools")]
    assert note and note[0].startswith(f"Split into two pools it takes {pools:,} GPUs against {colocated:,} colocated: "
                                       f"its prefill pool ({prefill} GPUs) is sized one prompt at a time"), note


def test_a_rate_beyond_the_plans_limit_is_a_warning_and_the_other_inputs_stay():
    at = open_page(model="llama-3-8b", mg_rps="200000000", mg_in="4096", mg_tpot="40")
    assert [w.value for w in at.warning] == [
        "200,000,000 requests/s is beyond what the plan accepts (up to 100,000,000 requests/s): type a smaller "
        "rate to see a plan; the other inputs keep their values."]
    assert not at.success and not at.error
    assert at.number_input(key="mg_rps").value == 200_000_000
    assert at.number_input(key="mg_in").value == 4096 and at.number_input(key="mg_tpot").value == 40.0
    # back under the limit: a plan again, with the same inputs
    at.number_input(key="mg_rps").set_value(50.0).run()
    assert not at.warning and at.success and at.number_input(key="mg_in").value == 4096


def test_no_layout_meets_the_tpot_target_is_a_sentence_that_says_what_to_change():
    at = open_page(model="llama-3.1-405b", mg_tpot="20")
    errors = [e.value for e in at.error if "layout of the grid" in e.value]
    assert len(errors) == 1
    from calc import planning
    grid = planning.plan_grid(calc.get_model("llama-3.1-405b"), H100, planning.ServingTraffic(5.0, 2.0, 2048, 256))
    tpot_ms = f"{grid.loc[grid['fits'], 'tpot_s'].min() * 1e3:.1f} ms"
    assert errors[0].startswith(f"No layout of the grid meets a TPOT of 20.0 ms: the fastest that fits, TP8 PP2 at "
                                f"batch 1, takes {tpot_ms} per token. To plan this traffic, loosen the TPOT target "
                                f"to {tpot_ms} or more")
    assert "more GPUs per replica than the grid" in errors[0] and "lower-precision weights than bf16" in errors[0]


def test_one_sequence_is_counted_in_the_singular():
    # B = 1 on one H100 for Llama-3-8B: "1 sequence's cache", not "1 sequences' cache"
    at = open_page(mg_b="1")
    [text] = [c.value for c in at.caption if "cache on each GPU" in c.value]
    assert "The batch puts 1 sequence's cache on each GPU;" in text, text
    at = open_page(model="llama-3.1-405b", mg_b="1")            # 811.71 GB of weights: the page names a layout
    [text] = [i.value for i in at.info if "The smallest layout that holds" in i.value]
    assert "holds 1 sequence of 8,192 tokens" in text, text


def test_a_plan_past_one_server_says_why_in_a_sentence_and_names_the_grid_it_searched():
    # Kimi-K2 on L4s with 1M-token prompts, sized with the serving estimate (the engine's share of memory): no
    # layout of one server runs it, so the plan searches the layout controls' range; there it fits (TP4 PP4 EP128)
    # but misses the 50 ms TPOT target, and the sentence says so, what to change and the grid searched
    at = open_page(model="kimi-k2", gpu="l4", mg_in="1000000", mg_timing="serving estimate")
    [text] = [e.value for e in at.error if "No layout of the grid" in e.value]
    assert text.startswith("No layout of the grid meets a TPOT of 50.0 ms: the fastest that fits, "), text
    assert text.endswith("x PP 1, 2, 3, 4, 8 x EP 1, 2, 4, 8, 16, 32, 64, 128, the layout controls' range."), text


def test_the_serving_estimate_follows_the_interconnect():
    # Llama-3.1-70B at TP 8 and batch 32 over PCIe Gen5: the serving block's bound and estimate time the same link
    # as the page's step (they had kept NVLink's). Its bound is calc's serving estimate's, for the request the block
    # times (7,936 prompt + 256 output tokens, mean context 8,064), with interconnect="pcie5"; over PCIe each
    # all-reduce is a ring of 2 x 7 hops of 5 us (calc.collectives.all_reduce_s), over NVLink one hop of 1 us.
    from calc.serving import serving_estimate
    q = dict(model="llama-3.1-70b", wq="bf16", kvq="bf16", mg_tp=8, mg_b=32)
    kw = dict(concurrency=32, tp=8, weight_dtype="bf16", kv_dtype="bf16", engine="vllm")
    pcie = serving_estimate(L70, H100, 7936, 256, interconnect="pcie5", **kw)
    nv = serving_estimate(L70, H100, 7936, 256, **kw)
    assert pcie.tpot.comm_s > 20 * nv.tpot.comm_s
    for link, est in (("PCIe Gen5 x16", pcie), (None, nv)):
        at = open_page(**(dict(q, mg_ic=link) if link else q))
        assert not at.exception, at.exception
        assert metric(at, "TPOT, bound") == fmt_seconds(est.tpot.bound_s)
        assert metric(at, "TPOT, serving estimate") == fmt_seconds(est.tpot.estimate_s)
    assert fmt_seconds(pcie.tpot.bound_s) != fmt_seconds(nv.tpot.bound_s)


def test_a_rate_beyond_the_plan_is_named_in_a_few_digits():
    # 1e30 requests/s (the box takes it; the plan stops at planning.MAX_REQUESTS_PER_S): the warning writes the
    # rate as 1.0e+30, not 1,000,000,000,000,000,019,884,624,838,656, and keeps the other inputs
    from calc import planning
    at = open_page(model="llama-3-8b", mg_rps="1e30", mg_out="300")
    assert not at.exception
    [warning] = [w.value for w in at.warning if "beyond what the plan accepts" in w.value]
    assert warning.startswith("1.0e+30 requests/s is beyond") and f"{planning.MAX_REQUESTS_PER_S:,}" in warning
    assert len(max(warning.split(), key=len)) < 20, warning
    assert at.number_input(key="mg_out").value == 300


def test_a_model_past_one_server_gets_a_plan_on_the_wide_grid_and_the_memory_conventions_are_said():
    # Kimi-K2 on L4s: no layout of one server (TP 1-8, PP 1-2) runs it, so the plan searches the layout controls'
    # range, as the layout search above does (it had stopped at one server's grid with an error); TP4 PP3 EP16
    # holds 16 sequences at the data sheet's 24 GB but not in the engine's 90% of what the driver reports, and
    # the page says which convention each figure follows
    at = pagetest.open_page(PAGE, timeout=240, model="kimi-k2", gpu="l4", mg_tp="4", mg_pp="3", mg_ep="16")
    assert not at.exception
    assert not any("No layout of the grid can run" in e.value for e in at.error)
    assert any("does not fit in the 90% of NVIDIA L4 24GB's memory" in e.value for e in at.error)
    assert any("follow the sidebar's Memory capacity, the data sheet's capacity" in c.value for c in at.caption)
    # with the engine's convention chosen, the note is not repeated
    at = pagetest.open_page(PAGE, timeout=240, model="kimi-k2", gpu="l4", mg_tp="4", mg_pp="3", mg_ep="16",
                            mem="engine")
    assert not any("follow the sidebar's Memory capacity" in c.value for c in at.caption)


def test_a_gpu_without_a_list_price_says_the_plans_dollars_use_the_placeholder():
    # The MI325X has no list price on file (calc's preset: price_per_hour_usd None), so the sidebar's price is the
    # $1.00 placeholder for owned hardware: the plan's dollars rest on it and the page says so. The H100 has a list
    # price ($3.99): no such warning; nor once a price is typed for the MI325X.
    from ui.sidebar import OWNED_HARDWARE_PRICE_USD
    assert calc.get_accelerator("mi325x").price_per_hour_usd is None and OWNED_HARDWARE_PRICE_USD == 1.0
    at = open_page(gpu="mi325x")
    warned = [w.value for w in at.warning if "has no list price on file" in w.value]
    assert len(warned) == 1 and "$1.00 per GPU-hour" in warned[0] and "MI325X" in warned[0]
    assert not [w for w in open_page().warning if "has no list price on file" in w.value]
    at = open_page(gpu="mi325x", price="2.5")
    assert not [w for w in at.warning if "has no list price on file" in w.value]


def _serving_infos(at) -> list[str]:
    """The page's serving-model notices (st.info starting "Serving model:"), page order."""
    return [i.value for i in at.info if i.value.startswith("Serving model:")]


def _as_shown(notice: str) -> str:
    """A serving notice as ui.serving_views.show_notices writes it."""
    from ui.formats import md_escape
    return f"Serving model: {md_escape(notice.rstrip('.'))}."


@pytest.mark.parametrize("key", ["qwen3.5-35b-a3b", "nemotron-3-nano-30b-a3b"])
def test_the_architecture_coverage_notice_is_said_once_on_the_page(key):
    # Qwen3.5-35B-A3B (Gated DeltaNet) and Nemotron-3-Nano (Mamba): a trait the calibration set barely covers, so the
    # serving estimate carries calc's coverage notice. The page has two serving estimates of that model (the
    # layout's block and the capacity plan sized with the serving estimate, the page's default): it is said once,
    # in the block above, and the plan's own notices stay. With a batch no layout holds, the block above is not
    # drawn and the plan says it, once.
    from calc.serving_params import architecture_notice, load_serving_params
    [words] = architecture_notice(load_serving_params(), calc.get_model(key))
    shown = _as_shown(words)
    at = pagetest.open_page(PAGE, timeout=240, model=key)
    infos = [i.value for i in at.info]
    assert infos.count(shown) == 1, infos
    split = next(n for n, v in enumerate(infos) if v.startswith("Disaggregated: prefill on"))
    assert infos.index(shown) < split  # the block above's, not the plan's
    assert at.success and at.success[0].value.startswith("Sized with the serving estimate")
    at.number_input(key="mg_b").set_value(65_536).run(timeout=240)
    assert not at.exception
    infos = [i.value for i in at.info]
    assert any(v.startswith(f"{calc.get_model(key).name} does not fit on one") for v in infos)
    assert infos.count(shown) == 1, infos
    assert any(v.startswith("Disaggregated: prefill on") for v in infos)


def test_an_uncalibrated_gpus_fallback_notices_are_each_said_once():
    # Gaudi 3: no serving measurement, no matmul ceiling, no fitted family; the serving model says so in three
    # notices (calc.serving_params), which the layout's block and the capacity plan had each shown
    from calc.serving_params import accelerator_notice, device_family, load_serving_params, matmul_scale
    prm = load_serving_params()
    want = accelerator_notice(prm, "gaudi3") + matmul_scale(prm, "gaudi3")[1] + device_family(prm, "gaudi3")[1]
    assert len(want) == 3
    at = pagetest.open_page(PAGE, timeout=240, gpu="gaudi3")
    assert _serving_infos(at) == [_as_shown(n) for n in want]


@pytest.mark.parametrize("page", ["app_pages/latency_cost.py", "app_pages/roofline.py"])
def test_the_pages_with_one_serving_block_say_the_coverage_notice_once(page):
    from calc.serving_params import architecture_notice, load_serving_params
    [words] = architecture_notice(load_serving_params(), calc.get_model("qwen3.5-35b-a3b"))
    at = pagetest.open_page(page, timeout=240, model="qwen3.5-35b-a3b")
    assert [i.value for i in at.info].count(_as_shown(words)) == 1


def test_a_plan_for_requests_beyond_the_models_window_says_so():
    # 200,000 prompt + 256 output tokens for Llama-3.1-70B, trained for 131,072 (max_position_embeddings): the plan is
    # still sized, and a warning above it says an engine would refuse such requests; 2,000 tokens get none
    at = open_page(model="llama-3.1-70b", mg_in="200000", mg_tpot="200", mg_ttft="600000")
    beyond = [w.value for w in at.warning if "Beyond the model's window" in w.value and "The plan is sized" in w.value]
    assert len(beyond) == 1 and "131,072" in beyond[0]
    assert at.success and "replica" in at.success[0].value
    at = open_page(model="llama-3.1-70b", mg_in="2000")
    assert not [w.value for w in at.warning if "The plan is sized" in w.value]


def test_by_hand_without_a_split_asks_for_one_rather_than_failing():
    # "by hand" chosen at PP 3 before any split is typed: an instruction in blue, not a red error; a split that cannot
    # be read (letters) or does not add up (80 layers, not 79) stays an error
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3", mg_ppr="by hand")
    assert any(i.value.startswith("Type the layers of each of the 3 stages") for i in at.info)
    assert not [e.value for e in at.error if "stages" in e.value]
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3", mg_ppr="by hand", mg_split="a,b")
    assert any("whole numbers separated by commas" in e.value for e in at.error)
    at = open_page(model="llama-3.1-70b", mg_tp="8", mg_pp="3", mg_ppr="by hand", mg_split="28,26,25")
    assert at.error


def test_a_reserve_that_fills_the_gpu_is_named_as_the_cause():
    # Llama-3-8B (bf16: 16.06 GB of weights) on one H100 of 80 GB. A reserve of 100 GB per GPU takes the whole GPU:
    # the page names the reserve and asks to lower it, rather than a smaller dtype or more PP
    at = open_page(model="llama-3-8b", mg_res="100")
    said = " ".join(m.value for m in [*at.info, *at.error])
    assert "The Reserve per GPU above (100.00 GB) takes all of each GPU's 80.00 GB" in said
    assert "lower the Reserve per GPU above." in said
    assert "pick a smaller dtype" not in said and "Raise PP" not in said
    # 70 GB: with the weights' 16.06 GB the GPU is full (86.06 > 80), though the weights alone would leave room
    at = open_page(model="llama-3-8b", mg_res="70")
    said = " ".join(m.value for m in [*at.info, *at.error])
    assert "The weights need 16.06 GB and the Reserve per GPU above 70.00 GB on each GPU of 80.00 GB" in said
    assert not at.exception
