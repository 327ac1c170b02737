"""AppTest of the exercises page: variant from the URL, grading with hints, solutions, the teacher view."""
from course import exercises as E
from pagetest import open_page

PAGE = "app_pages/exercises.py"


def _answer(at, key, variant, value, unit):
    at.number_input(key=f"ex_{key}_{variant}_val").set_value(value)
    at.selectbox(key=f"ex_{key}_{variant}_unit").set_value(unit)
    form_button = [b for b in at.button if b.label == "Check" and b.form_id == f"ex_form_{key}_{variant}"]
    form_button[0].click().run()


def test_a_right_answer_is_accepted_and_shows_the_worked_solution():
    at = open_page(PAGE)
    assert at.number_input(key="ex_variant").value == 0
    # problem 2, the course's 13B at 4,096 tokens: 2 x 40 x 8 x 128 x 2 B x 4,096 = 0.671 GB ("≈ 0.67 GB")
    _answer(at, "kv_per_sequence", 0, 0.67, "GB")
    assert any("Correct" in s.value for s in at.success)
    latex = [x.value for x in at.latex]
    assert any(r"2 \times 40\times 8\times 128\times 2" in x and "0.6711" in x for x in latex), latex
    assert any("quantization?" in m.value and "q_ctx=4K" in m.value for m in at.markdown)


def test_a_wrong_unit_and_a_forgotten_factor_get_their_hints():
    at = open_page(PAGE)
    _answer(at, "kv_per_sequence", 0, 0.625, "GB")           # 0.6711e9 B / 2^30 = 0.625: GiB labelled GB
    assert any("right in GiB" in e.value for e in at.error)
    _answer(at, "critical_batch", 0, 590, "tokens")          # 2 x 295: the 2 in 2N forgotten
    assert any("2N" in e.value for e in at.error)
    assert not any(r"\frac{P \cdot" in x.value for x in at.latex)   # no solution before a right answer or a reveal
    at.button(key="ex_critical_batch_0_reveal").click().run()
    assert any(r"\frac{P \cdot" in x.value and "295.2" in x.value for x in at.latex)


def test_variant_from_the_url_and_the_teacher_view_lists_every_answer():
    from classroom import poll
    from classroom.store import get_store
    at = open_page(PAGE, variant="7", teacher=poll.open_session(get_store()).teacher_key)  # a poll's teacher key
    assert at.number_input(key="ex_variant").value == 7
    problems = E.all_exercises(7)
    text = " ".join(m.value for m in at.markdown)
    for ex in problems:
        assert f"answer **{ex.answer_text}**" in text, ex.key
    assert len(at.latex) >= len(problems)


def test_a_bad_variant_in_the_url_says_so_and_shows_variant_0():
    at = open_page(PAGE, variant="banana")
    # a sentence, capital first (course.exercises.check_variant's message starts in lowercase, as calc's errors do)
    assert any(w.value.startswith("The variant must be a whole number") for w in at.warning), [w.value for w in at.warning]
    assert at.number_input(key="ex_variant").value == 0


def test_every_message_of_the_page_starts_with_a_capital():
    at = open_page(PAGE)
    _answer(at, "spec_tokens", 0, 4.2, "tokens")            # γα + 1 = 4 x 0.8 + 1: the drafts taken as independent
    _answer(at, "kv_per_sequence", 0, 0.625, "GB")          # a wrong unit
    _answer(at, "cost_per_million", 0, 4.26 * 3600, "USD")  # the per-hour price read per second
    shown = [m.value for kind in ("success", "error", "info", "warning") for m in at.main.get(kind)]
    assert len(shown) >= 3, shown
    assert all(m[0].isupper() or m[0].isdigit() for m in shown), shown   # "3,600 times too much" starts a sentence
    # every hint of every exercise, in a few variants, is shown as a sentence too
    from ui.formats import sentence
    hints = {m.hint for v in (0, 1, 7, 123) for ex in E.all_exercises(v) for m in ex.mistakes}
    assert all(sentence(h)[0].isupper() or sentence(h)[0].isdigit() for h in hints), \
        [h for h in hints if not (sentence(h)[0].isupper() or sentence(h)[0].isdigit())]


def _opens_in_state(ex):
    from urllib.parse import parse_qsl
    at = open_page(f"app_pages/{ex.page}.py", timeout=120, **dict(parse_qsl(ex.link)))
    for k, v in ex.state.items():
        got = at.session_state[k]
        assert got == v or (isinstance(v, float) and abs(got - v) < 1e-9), (ex.key, k, got, v)
    return at


def test_every_variant_0_link_opens_its_page_in_the_answers_state():
    # the link sets each widget the answer depends on (labels of format_func widgets included)
    for ex in E.all_exercises(0):
        _opens_in_state(ex)


def test_a_link_shows_the_answer_on_the_page():
    # the MLA cache of DeepSeek-V3 at 32K: 61 x 576 x 2 B x 32,768 = 2.30 GB, the page's "KV per sequence"
    from pagetest import metric
    at = _opens_in_state(E.exercise("kv_mla", 0))
    assert metric(at, "KV per sequence") == "2.30 GB"
    at = _opens_in_state(E.exercise("cost_per_million", 0))   # $4.26 at B = 1, $3/h (course, week 11 step 4)
    assert metric(at, "USD per 1M output tokens") == "$4.26"


def test_links_of_another_variant_open_in_their_state_too():
    # other models, GPUs and sizes: each link still lands on values the page's widgets offer
    for ex in E.all_exercises(3):
        _opens_in_state(ex)
