"""AppTest of the lecture story's banner: a step's sentence appears above its own page only."""
from ui import classroom
from pagetest import open_page

STEP_1_SENTENCE = classroom.STORY[0][2]  # on the home page
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
