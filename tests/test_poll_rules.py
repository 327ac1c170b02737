"""The class poll's rules (classroom/poll.py) against a real SQLite file and a real PostgreSQL server.

One answer per student per question, changed in place until answering closes; ask, open, close, reveal,
read and export only with the teacher's key; a student reads only their own answer in their own session;
answers, nicknames, submissions per minute and sessions per server are bounded; a session expires and is
deleted with what it held. Times are passed in (``now=``), so nothing here waits.
"""
import csv
import io
import threading

import pytest
import sqlalchemy as sa

from classroom import poll
from classroom.store import answers, metadata, open_store, sessions, students, submits

T0 = 1_800_000_000.0
KV_SEQ = {"kind": "exercise", "key": "kv_per_sequence", "variant": 0}   # 0.6711 GB, unit choices B ... TB


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        yield open_store(f"sqlite:///{tmp_path}/poll.sqlite")
        return
    url = request.getfixturevalue("postgres_url")
    engine = sa.create_engine(url)
    with engine.begin() as c:            # a fresh schema: the migrations run again on an empty database
        metadata.drop_all(c)
        c.execute(sa.text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()
    s = open_store(url)
    yield s
    s.engine.dispose()


def _count(store, table, *where):
    with store.reader() as c:
        return c.execute(sa.select(sa.func.count()).select_from(table).where(*where)).scalar_one()


def _open_question(store, now=T0):
    o = poll.open_session(store, now=now)
    poll.ask(store, o.code, o.teacher_key, KV_SEQ, now=now)
    poll.set_state(store, o.code, o.teacher_key, "open", now=now)
    return o


def test_the_schema_is_at_the_newest_migration(store):
    with store.reader() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalar_one() == "0001"
        if store.dialect == "sqlite":
            assert c.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"


def test_one_answer_per_student_changed_in_place_until_closed(store):
    o = _open_question(store)
    ann = poll.join(store, o.code, "Ann", now=T0)
    poll.submit(store, o.code, ann, "0.5", "GB", now=T0 + 1)
    poll.submit(store, o.code, ann, "0.67", "GB", now=T0 + 2)         # changed: still one row
    assert _count(store, answers) == 1
    r = poll.results(store, o.code, o.teacher_key, now=T0 + 3)
    assert [(a.text, a.unit, a.answered_at, a.nickname) for a in r.answers] == [("0.67", "GB", T0 + 2, "Ann")]
    poll.set_state(store, o.code, o.teacher_key, "close", now=T0 + 4)
    with pytest.raises(poll.PollError, match="closed"):
        poll.submit(store, o.code, ann, "9", "GB", now=T0 + 5)
    assert poll.student_view(store, o.code, ann, now=T0 + 6).mine.text == "0.67"
    # a new question: a new answer of the same student, the first one kept
    poll.ask(store, o.code, o.teacher_key, {**KV_SEQ, "variant": 3}, now=T0 + 7)
    with pytest.raises(poll.PollError, match="not open yet"):
        poll.submit(store, o.code, ann, "1", "GB", now=T0 + 8)
    poll.set_state(store, o.code, o.teacher_key, "open", now=T0 + 9)
    poll.submit(store, o.code, ann, "1", "GB", now=T0 + 10)
    assert _count(store, answers) == 2


def test_the_state_machine_refuses_what_it_cannot_do(store):
    o = poll.open_session(store, now=T0)
    with pytest.raises(poll.PollError, match="Cannot open now"):     # no question asked yet
        poll.set_state(store, o.code, o.teacher_key, "open", now=T0)
    poll.ask(store, o.code, o.teacher_key, KV_SEQ, now=T0)
    with pytest.raises(poll.PollError, match="Cannot reveal now"):   # nothing answered: open answering first
        poll.set_state(store, o.code, o.teacher_key, "reveal", now=T0)
    poll.set_state(store, o.code, o.teacher_key, "open", now=T0)
    assert poll.set_state(store, o.code, o.teacher_key, "reveal", now=T0) == "revealed"
    with pytest.raises(poll.PollError, match="Cannot open now"):     # no reopening after the reveal
        poll.set_state(store, o.code, o.teacher_key, "open", now=T0)
    with pytest.raises(poll.PollError, match="Unknown action"):
        poll.set_state(store, o.code, o.teacher_key, "drop tables", now=T0)
    with pytest.raises(poll.PollError, match="cannot be asked"):
        poll.ask(store, o.code, o.teacher_key, {"kind": "exercise", "key": "nope"}, now=T0)


def test_everything_a_teacher_does_needs_the_key_of_that_session(store):
    a, b = _open_question(store), _open_question(store)
    for key in ("", "guess", b.teacher_key, a.teacher_key + "x", None):
        with pytest.raises(poll.PollError, match="teacher's key"):
            poll.ask(store, a.code, key, KV_SEQ, now=T0)
        for action in ("open", "close", "reveal"):
            with pytest.raises(poll.PollError, match="teacher's key"):
                poll.set_state(store, a.code, key, action, now=T0)
        with pytest.raises(poll.PollError, match="teacher's key"):
            poll.results(store, a.code, key, now=T0)
        with pytest.raises(poll.PollError, match="teacher's key"):
            poll.export_csv(store, a.code, key, now=T0)
        assert not poll.is_teacher(store, a.code, key, now=T0)
    assert poll.is_teacher(store, a.code, a.teacher_key, now=T0)
    with store.reader() as c:     # the key itself is never stored
        stored = c.execute(sa.select(sessions.c.teacher_key_hash)).scalars().all()
    assert a.teacher_key not in stored and len(stored[0]) == 64


def test_a_student_reads_only_their_own_answer_in_their_own_session(store):
    a, b = _open_question(store), _open_question(store)
    ann, bob = poll.join(store, a.code, "Ann", now=T0), poll.join(store, a.code, "Bob", now=T0)
    cyd = poll.join(store, b.code, "Cyd", now=T0)
    poll.submit(store, a.code, ann, "0.67", "GB", now=T0)
    poll.submit(store, a.code, bob, "0.3", "GB", now=T0)
    view = poll.student_view(store, a.code, ann, now=T0)
    assert view.mine.text == "0.67" and not view.revealed
    assert set(vars(view)) == {"state", "seq", "spec", "mine", "nickname"}   # no field for others' answers
    for code, sid in ((b.code, ann), (a.code, cyd), (a.code, "made-up-student-id")):
        with pytest.raises(poll.PollError, match="Join the session again"):
            poll.student_view(store, code, sid, now=T0)
        with pytest.raises(poll.PollError, match="Join the session again"):
            poll.submit(store, code, sid, "1", "GB", now=T0)
    assert [x.text for x in poll.results(store, b.code, b.teacher_key, now=T0).answers] == []


def test_inputs_are_bounded(store, monkeypatch):
    o = _open_question(store)
    sid = poll.join(store, o.code, now=T0)
    for text, why in [("", "Type a number"), ("1" * 33, "at most 32"), ("twelve", "Type a number"),
                      ("inf", "finite"), ("1e31", "finite"), ("<b>1</b>", "Type a number")]:
        with pytest.raises(poll.PollError, match=why):
            poll.submit(store, o.code, sid, text, "GB", now=T0)
    with pytest.raises(poll.PollError, match="Answer in one of"):
        poll.submit(store, o.code, sid, "1", "ms", now=T0)            # not a unit of a size
    assert poll.parse_answer(" 1,073,741,824 ") == ("1073741824", 1073741824.0)
    with pytest.raises(poll.PollError, match="at most 24"):
        poll.join(store, o.code, "x" * 25, now=T0)
    with pytest.raises(poll.PollError, match="punctuation only"):
        poll.join(store, o.code, "a\x00b", now=T0)
    with pytest.raises(poll.PollError, match="join code"):
        poll.join(store, "<script>", now=T0)
    with pytest.raises(poll.PollError, match="No open class session"):
        poll.join(store, "AAAAAA" if o.code != "AAAAAA" else "BBBBBB", now=T0)
    # ten answers a minute per student id, then refused until the minute has passed
    for i in range(poll.ANSWERS_PER_MINUTE):
        poll.submit(store, o.code, sid, str(i), "GB", now=T0 + i)
    with pytest.raises(poll.PollError, match="answers a minute"):
        poll.submit(store, o.code, sid, "42", "GB", now=T0 + 30)
    poll.submit(store, o.code, sid, "42", "GB", now=T0 + 61)           # the first of the ten is 61 s old
    assert _count(store, answers) == 1
    # sessions per server
    with store.reader() as c:
        live = c.execute(sa.select(sa.func.count()).select_from(sessions)).scalar_one()
    monkeypatch.setenv("EXPLORER_POLL_MAX_SESSIONS", str(live + 1))
    poll.open_session(store, now=T0)
    with pytest.raises(poll.PollError, match="limit"):
        poll.open_session(store, now=T0)


def test_a_session_expires_and_is_deleted_with_what_it_held(store, monkeypatch):
    monkeypatch.setenv("EXPLORER_POLL_TTL_HOURS", "1")
    o = _open_question(store)
    sid = poll.join(store, o.code, "Ann", now=T0)
    poll.submit(store, o.code, sid, "0.67", "GB", now=T0)
    assert poll.student_view(store, o.code, sid, now=T0 + 3599).mine is not None
    assert poll.teacher_key_valid(store, o.teacher_key, now=T0 + 3599)
    with pytest.raises(poll.PollError, match="expired"):
        poll.student_view(store, o.code, sid, now=T0 + 3601)
    assert not poll.teacher_key_valid(store, o.teacher_key, now=T0 + 3601)
    assert poll.purge_expired(store, now=T0 + 3601 + 3600) == 1
    for table in (sessions, students, answers, submits):
        assert _count(store, table) == 0, table.name


def test_the_export_has_question_answer_unit_time_nickname_only(store):
    o = _open_question(store)
    for i, (nick, text) in enumerate((("Ann", "0.67"), ("=HYPERLINK(1)", "0.625"), ("", "5.4"))):
        poll.submit(store, o.code, poll.join(store, o.code, nick, now=T0), text, "GB", now=T0 + i)
    rows = list(csv.reader(io.StringIO(poll.export_csv(store, o.code, o.teacher_key, now=T0))))
    assert rows[0] == ["question", "answer", "unit", "time", "nickname"]
    assert rows[1] == ["1. KV cache per sequence (GQA) (variant 0)", "0.67", "GB", "2027-01-15T08:00:00+00:00", "Ann"]
    assert rows[2][4] == "'=HYPERLINK(1)"          # a spreadsheet would run it as a formula: quoted as text
    assert len(rows) == 4 and all(len(r) == 5 for r in rows)


def test_concurrent_answers_are_each_stored_once(store):
    o = _open_question(store)
    ids = [poll.join(store, o.code, f"s{i}", now=T0) for i in range(24)]
    errors = []

    def answer(sid, i):
        try:
            for k in range(3):       # each student sends, then changes twice
                poll.submit(store, o.code, sid, f"{i}.{k}", "GB", now=T0 + k)
        except Exception as exc:  # noqa: BLE001 - collected and shown below
            errors.append(exc)

    threads = [threading.Thread(target=answer, args=(sid, i)) for i, sid in enumerate(ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    got = sorted(a.text for a in poll.results(store, o.code, o.teacher_key, now=T0).answers)
    assert got == sorted(f"{i}.2" for i in range(24))


def test_the_qr_code_is_a_png():
    png = poll.qr_png("http://class.example/poll?code=K7QM2P")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 200


def test_processes_starting_together_migrate_once(store, tmp_path):
    # Three processes open a new database at once (as a class deployment's processes do at start): the
    # migration runs under a lock (a file lock for SQLite, an advisory lock for PostgreSQL), once.
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path}/fresh.sqlite" if store.dialect == "sqlite" else store.url
    if store.dialect == "postgresql":
        with store.engine.begin() as c:
            metadata.drop_all(c)
            c.execute(sa.text("DROP TABLE alembic_version"))
    script = "import sys; from classroom.store import open_store; open_store(sys.argv[1])"
    procs = [subprocess.Popen([sys.executable, "-c", script, url]) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    engine = sa.create_engine(url)
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all() == ["0001"]
        assert c.execute(sa.select(sa.func.count()).select_from(sessions)).scalar_one() == 0
    engine.dispose()
