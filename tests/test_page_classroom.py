"""AppTest of the lecture story's banner: a step's sentence appears above its own page only."""
from ui import classroom
from pagetest import metric, open_page

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
