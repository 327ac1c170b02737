"""AppTest of the Class poll page and of the Exercises page's teacher view, which needs a poll's teacher key.

The database is the tests' own SQLite file (tests/conftest.py sets EXPLORER_POLL_DATABASE_URL).
"""
from classroom import poll
from classroom.store import get_store
from pagetest import open_page

PAGE = "app_pages/poll.py"
KV_SEQ = {"kind": "exercise", "key": "kv_per_sequence", "variant": 0}


def _texts(at):
    return [t.value for t in at.text]


def _markdown(at):
    return " ".join(m.value for m in at.markdown)


def test_opening_a_session_puts_the_code_and_the_key_in_the_teachers_link_only():
    at = open_page(PAGE)
    at.button(key="pl_open").click().run()
    code, key = at.query_params["code"], at.query_params["key"]
    code, key = (code[0] if isinstance(code, list) else code), (key[0] if isinstance(key, list) else key)
    store = get_store()
    assert poll.is_teacher(store, code, key)
    assert key not in _markdown(at).replace(f"teacher={key}", "")   # shown nowhere but the answer sheet's link
    assert any("Pick a question" in i.value for i in at.info)


def test_a_wrong_key_opens_nothing():
    o = poll.open_session(get_store())
    at = open_page(PAGE, code=o.code, key="not-the-key")
    assert any("does not open a live session" in e.value for e in at.error)
    assert not [b for b in at.button if b.key in ("pl_open", "pl_close", "pl_reveal")]


def test_a_student_answers_and_sees_the_answer_only_after_the_reveal():
    store = get_store()
    o = poll.open_session(store)
    poll.ask(store, o.code, o.teacher_key, KV_SEQ)
    poll.set_state(store, o.code, o.teacher_key, "open")
    nickname = "**Bo** <b>x</b> [a](x.y)"
    at = open_page(PAGE, code=o.code.lower())             # the link's code, typed in lower case
    at.text_input(key="pl_nick").set_value(nickname)
    at.button[0].click().run()                              # the form's Join
    me = at.query_params["me"]
    assert f"Session {o.code} · you are {nickname}" in _texts(at)
    assert "Bo" not in _markdown(at)                        # a student's text is never markdown
    at.text_input(key="pl_ans_1").set_value("0.625")
    [b for b in at.button if b.label == "Send"][0].click().run()
    assert "Your answer: 0.625 GB" in _texts(at)
    assert not at.success                                   # no answer before the reveal
    other = poll.join(store, o.code, "Cyd")
    poll.submit(store, o.code, other, "0.67", "GB")
    poll.set_state(store, o.code, o.teacher_key, "reveal")
    at.run()
    assert any("0.6711 GB" in s.value for s in at.success)
    assert "Yours: The right number in GiB, labelled GB (GiB vs GB)" in _texts(at)
    assert "0.67 GB" not in " ".join(_texts(at))             # never another student's answer
    assert poll.student_view(store, o.code, me).mine.text == "0.625"


def test_the_teachers_screen_counts_then_reveals_with_the_clusters_and_the_link():
    store = get_store()
    o = poll.open_session(store)
    at = open_page(PAGE, code=o.code, key=o.teacher_key)
    at.radio(key="pl_kind").set_value("An exercise").run()
    at.selectbox(key="pl_ex").set_value("kv_per_sequence").run()
    at.button(key="pl_ask").click().run()
    at.button(key="pl_open").click().run()
    for text in ("0.67", "0.3355", "0.625"):
        poll.submit(store, o.code, poll.join(store, o.code), text, "GB")
    at.run()
    assert any("3 of 3" in h.value for h in at.html)        # the count, before any reveal
    assert not at.success and not at.table
    at.button(key="pl_reveal").click().run()
    assert any("0.6711 GB" in s.value for s in at.success)
    table = at.table[0].value
    assert sorted(table["n"]) == [1, 1, 1]
    assert any("K and V" in x for x in table["what it is"])
    csv_text = poll.export_csv(store, o.code, o.teacher_key)
    assert csv_text.count("\n") == 4


def test_the_exercises_teacher_view_needs_a_teacher_key():
    at = open_page("app_pages/exercises.py", variant="7", teacher="1")
    assert any("needs the teacher's key" in w.value for w in at.warning)
    assert "answer **" not in _markdown(at)
    assert not [t for t in at.toggle if t.key == "ex_teacher"]
    o = poll.open_session(get_store())
    at = open_page("app_pages/exercises.py", variant="7", teacher=o.teacher_key)
    assert _markdown(at).count("answer **") >= 20             # every problem with its answer


def test_odd_links_get_a_message_never_a_traceback():
    o = poll.open_session(get_store())
    for query in ({"code": "<img src=x onerror=alert(1)>"}, {"code": "x" * 5000}, {"code": o.code, "me": "forged"},
                  {"code": o.code, "key": "k" * 2000}, {"key": o.teacher_key}, {"me": "x", "key": "y"},
                  {"code": "ZZZZZZ" if o.code != "ZZZZZZ" else "YYYYYY", "me": "abcdefghijkl"}):
        at = open_page(PAGE, **query)
        shown = " ".join(str(e.value) for kind in ("markdown", "warning", "error", "info", "text")
                         for e in at.get(kind))
        assert "Traceback" not in shown and "<img" not in shown, query
        assert not [b for b in at.button if b.key == "pl_reveal"], query      # no teacher controls


def test_a_database_that_does_not_answer_gets_a_message(monkeypatch, tmp_path):
    # a PostgreSQL URL with no server behind it: the page says so instead of a traceback
    monkeypatch.setenv("EXPLORER_POLL_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:9/none")
    at = open_page(PAGE)
    assert any("database cannot be opened" in e.value for e in at.error)


def test_no_stray_value_is_drawn():
    # Streamlit draws the value of a bare expression statement ("magic"): the page must leave none (a "None")
    o = poll.open_session(get_store())
    for query in ({}, {"code": o.code, "me": poll.join(get_store(), o.code)}, {"code": o.code, "key": o.teacher_key}):
        at = open_page(PAGE, **query)
        assert not [c for c in at.code if c.value == "None"], query
        assert "None" not in _markdown(at), query


def test_a_question_past_the_models_window_says_so():
    # GPT-3 was trained for 2,048 tokens: a prediction at 8K names that limit for the teacher
    o = poll.open_session(get_store())
    at = open_page(PAGE, code=o.code, key=o.teacher_key)
    at.radio(key="pl_kind").set_value("Predict a number").run()
    at.selectbox(key="pl_model").set_value("gpt-3-175b").run()
    assert any("Beyond the model's window" in w.value and "2,048" in w.value for w in at.warning)
    at.selectbox(key="pl_model").set_value("llama-3.1-8b").run()   # 8K within its 128K
    assert not any("Beyond the model's window" in w.value for w in at.warning)


def test_the_predict_a_number_context_reads_as_on_every_other_page():
    # every context control of the app writes "8K", "128K" (ui.widgets.context_slider); the poll's read "8192"
    o = poll.open_session(get_store())
    at = open_page(PAGE, code=o.code, key=o.teacher_key)
    at.radio(key="pl_kind").set_value("Predict a number").run()
    ctx = at.select_slider(key="pl_ctx")
    assert list(ctx.options) == ["1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K"]
    assert ctx.value == 8192
