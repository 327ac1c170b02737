"""AppTest of the lecture story's banner: a step's sentence appears above its own page only."""
from ui import classroom
from pagetest import metric, metric_element, open_page

STEP_1_SENTENCE = classroom.step_sentence(1)  # on the home page
KV_STEP = next(i + 1 for i, (page, *_) in enumerate(classroom.STORY) if page == "app_pages/kv_cache.py")


def texts(at) -> str:
    return " ".join(m.value for m in at.markdown)


def links(at) -> list[str]:
    return [p.proto.label for p in at.get("page_link")]


def test_a_step_on_its_own_page_shows_its_banner():
    at = open_page(story="1")  # step 1 is the home page
    assert f"**Lecture, step 1 of {len(classroom.STORY)}**" in texts(at)
    assert STEP_1_SENTENCE in texts(at)


def test_a_step_on_another_page_shows_only_a_link_to_it():
    at = open_page("app_pages/kv_cache.py", story="1", present="1")
    assert STEP_1_SENTENCE not in texts(at) and "Lecture, step 1" not in texts(at)
    assert any("go to step 1" in label for label in links(at)), links(at)
    # the KV page's own step keeps its banner there
    at = open_page("app_pages/kv_cache.py", story=str(KV_STEP))
    assert f"Lecture, step {KV_STEP} of" in texts(at)


def test_step_1_quotes_the_home_pages_own_numbers():
    # Llama-3-8B on an H100 SXM, 8K, B = 1, every parameter read (the course's napkin): 16.06 GB + 1.07 GB over
    # 3.35 TB/s = 5.11 ms, 196 tok/s (the inference course, week 11, step 4). The banner once said 4.8 ms, the
    # weight read alone, beside the page's 5.11 ms.
    at = open_page(story="1")
    tpot, tok_s = metric(at, "Decode step (TPOT), bound"), metric(at, "Throughput, bound")
    assert (tpot, tok_s) == ("5.11 ms", "196 tok/s")
    banner = next(m.value for m in at.markdown if m.value.startswith("**Lecture, step 1"))
    assert f"take {tpot}" in banner and f"about {tok_s.split()[0]} tokens per second" in banner, banner
    assert "4.8 ms" not in banner


def test_step_3_quotes_the_roofline_pages_own_throughput():
    # B = 32 at 8K: 32 / (4.79 ms + 32 x 0.32 ms) = 32 / 15.05 ms = 2,126 tok/s, 2.9x the B = 1 step, 10.9x its output
    at = open_page("app_pages/roofline.py", story="3")
    tok_s = metric(at, "Throughput (tok/s), bound")
    banner = next(m.value for m in at.markdown if m.value.startswith("**Lecture, step 3"))
    assert tok_s == "2,126" and f"to {tok_s} tokens per second" in banner and "3x" in banner and "11x" in banner


def test_step_5_quotes_the_kv_pages_own_cache_and_weights():
    # Llama-3.1-8B at 128K: 131,072 B x 131,072 tokens = 17.18 GB of cache beside 8.03B x 2 B = 16.06 GB of weights
    at = open_page("app_pages/kv_cache.py", story="5")
    kv, weights = metric(at, "KV per sequence"), metric(at, "Weights")
    banner = next(m.value for m in at.markdown if m.value.startswith("**Lecture, step 5"))
    assert (kv, weights) == ("17.18 GB", "16.06 GB")
    assert f"cache ({kv})" in banner and f"weights ({weights})" in banner, banner


def banner_of(at, n: int) -> str:
    return next(m.value for m in at.markdown if m.value.startswith(f"**Lecture, step {n}"))


def test_steps_4_6_7_quote_the_kv_pages_own_figures():
    # Llama-3-8B: 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B = 128 KiB per token, x 8,192 = 1.07 GB.
    # GPT-3: 2 x 96 x 96 x 128 x 2 B = 4,718,592 B per token, x 8,192 = 38.65 GB.
    # DeepSeek-V3 (MLA): 61 layers x (512 + 64) x 2 B = 70,272 B per token, x 131,072 = 9.21 GB.
    for n, per_token, per_seq in ((4, "131,072 B", "1.07 GB"), (6, "4,718,592 B", "38.65 GB"),
                                  (7, "70,272 B", "9.21 GB")):
        at = open_page("app_pages/kv_cache.py", story=str(n))
        assert (metric(at, "KV per token"), metric(at, "KV per sequence")) == (per_token, per_seq), n
        banner = banner_of(at, n)
        assert per_seq in banner, banner
        assert (f"{per_token} per token" in banner) if n != 4 else ("128.00 KiB" in banner), banner


def test_step_8_quotes_the_quantization_pages_max_batches():
    # Llama-3-8B at 8K on 80 GB: bf16 (80 - 16.06) GB / 1.07 GB per sequence = 59.6 -> 59; int8 weights and
    # cache: (80 - 8.03) GB / 0.537 GB = 134.0 -> 134 (the course's "134 instead of 59")
    at = open_page("app_pages/quantization.py", story="8")
    deltas = {f: metric_element(at, f"{f}: decode step").delta for f in ("bf16", "int8")}
    assert deltas == {"bf16": "max batch 59", "int8": "max batch 134"}, deltas
    assert "80 GB holds 134 sequences of 8K instead of 59" in banner_of(at, 8)


def test_step_9_quotes_the_latency_cost_pages_chosen_batch_and_price():
    # TPOT <= 10 ms at 8K with every parameter read: 4.79 ms + B x 0.32 ms <= 10 ms -> B = 16 (16.3);
    # $3/h / (16 / 9.92 ms x 3,600) x 1e6 = $0.52 per 1M output tokens
    at = open_page("app_pages/latency_cost.py", story="9")
    batch, usd = metric(at, "Chosen batch B"), metric(at, "USD per 1M output tokens")
    assert (batch, usd) == ("16", "$0.52")
    assert f"B = {batch} at {usd} per million tokens" in banner_of(at, 9)


def test_step_11_quotes_the_prefix_cache_metrics():
    # 20 chats x 1,000 tokens x 131,072 B = 2.62 GB without; one shared copy, 1,000 x 131,072 B = 131.07 MB with
    at = open_page("app_pages/batching.py", story="11")
    without, with_ = metric(at, "KV without cache"), metric(at, "KV with cache")
    assert (without, with_) == ("2.62 GB", "131.07 MB")
    assert f"{without} of cache without prefix caching, {with_} with it" in banner_of(at, 11)


def test_a_present_value_that_is_no_switch_is_named_and_leaves_presenter_mode_off():
    from streamlit.testing.v1 import AppTest
    import pagetest
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    at.query_params["present"] = "2"
    at.run()  # the session's first run, as the link opens it: the notice is said there, once
    assert not at.exception and at.toggle(key=classroom.PRESENT_KEY).value is False
    assert any("present='2' in the link is not a switch" in w.value for w in at.sidebar.warning)
    for ok in ("1", "true"):  # the switches: on, nothing said
        at = open_page("app_pages/home.py", present=ok)
        assert at.toggle(key=classroom.PRESENT_KEY).value is True
        assert not any("in the link is not a switch" in w.value for w in at.sidebar.warning)
