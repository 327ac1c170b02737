"""The class poll's rules: predict, then reveal.

A teacher opens a session (``open_session``): a short join code for the students and a teacher key that
only the teacher's own link carries (the database keeps its SHA-256, never the key). The teacher asks a
question (``ask``: an exercise with its variant, or a prediction, see classroom.questions), opens answering,
closes it, reveals (``set_state``), reads the answers (``results``) and exports them (``export_csv``): each
of these needs the key. Students join with the code (``join``: no account, an optional nickname) and get a
random student id that only their browser holds (the page keeps it in its URL, so a reload or another server
process finds them again). One answer per student per question (``submit``; a database unique constraint),
changed in place until answering closes. A student sees the question, their own answer and, after the
reveal, the right answer: never another student's answer, never another session.

Bounds: an answer of at most ``MAX_ANSWER_CHARS`` characters that reads as a finite number, a nickname of at
most ``MAX_NICKNAME_CHARS`` printable characters, ``ANSWERS_PER_MINUTE`` submissions per student id and
minute, ``MAX_STUDENTS`` per session, ``max_sessions()`` live sessions per database; a session expires
``ttl_s()`` after it opened and is then deleted with everything in it (``purge_expired``, run when a session
opens or a student joins).

Every function takes the ``Store`` first and raises ``PollError`` (a ValueError) with a message for the
person on the page.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import hmac
import io
import json
import math
import os
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import sqlalchemy as sa

from classroom import questions
from classroom.store import Store, answers, questions as question_rows, sessions, students, submits

MAX_ANSWER_CHARS = 32
MAX_NICKNAME_CHARS = 24
ANSWERS_PER_MINUTE = 10
MAX_STUDENTS = 1000
MAX_ABS_VALUE = 1e30
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read from the back of a hall
CODE_LENGTH = 6
STATES = ("idle", "ready", "open", "closed", "revealed")
#: action -> (states it may start from, the state it leads to)
ACTIONS = {"open": (("ready", "closed"), "open"), "close": (("open",), "closed"),
           "reveal": (("open", "closed"), "revealed")}


class PollError(ValueError):
    """A request the poll's rules refuse; the message is for the person on the page."""


def ttl_s() -> float:
    """How long a session lives, in seconds: ``EXPLORER_POLL_TTL_HOURS`` (default 6 h, 0.01 to 168)."""
    return _env_float("EXPLORER_POLL_TTL_HOURS", 6.0, 0.01, 168.0) * 3600.0


def max_sessions() -> int:
    """Live sessions a database holds at most: ``EXPLORER_POLL_MAX_SESSIONS`` (default 50, 1 to 10,000)."""
    return int(_env_float("EXPLORER_POLL_MAX_SESSIONS", 50, 1, 10_000))


def _env_float(name: str, default: float, lo: float, hi: float) -> float:
    try:
        v = float(os.environ.get(name, default))
    except ValueError:
        return default
    return min(max(v, lo), hi) if math.isfinite(v) else default


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _now(now: float | None) -> float:
    return time.time() if now is None else now


@dataclass(frozen=True)
class Opened:
    """A new session: the code students type and the teacher's key (shown once, in the teacher's link)."""

    code: str
    teacher_key: str


@dataclass(frozen=True)
class Answer:
    """One student's answer: the text typed, the number it reads as, the unit chosen, when (epoch s), nickname."""

    text: str
    value: float
    unit: str
    answered_at: float
    nickname: str = ""


@dataclass(frozen=True)
class StudentView:
    """What a student's page may show: the state, the question (None before one is asked), their own answer
    for it (None before they answer), their nickname, and whether the answer may be shown (revealed)."""

    state: str
    seq: int
    spec: dict | None
    mine: Answer | None
    nickname: str

    @property
    def revealed(self) -> bool:
        """True once the teacher revealed the right answer."""
        return self.state == "revealed"


@dataclass(frozen=True)
class Results:
    """What the teacher's screen shows: the state, the question, how many students joined, every answer."""

    state: str
    seq: int
    spec: dict | None
    joined: int
    answers: list[Answer]
    expires_at: float


def normalise_code(code: object) -> str:
    """The join code upper-cased without spaces or dashes.

    Raises:
        PollError: not ``CODE_LENGTH`` characters of ``CODE_ALPHABET``.
    """
    c = re.sub(r"[\s-]", "", str(code or "")).upper()[:20]
    if len(c) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in c):
        raise PollError(f"A join code is {CODE_LENGTH} letters and digits, as the teacher's screen shows it.")
    return c


def check_nickname(nickname: object) -> str:
    """The nickname stripped, inner spaces collapsed ("" when none).

    Raises:
        PollError: longer than ``MAX_NICKNAME_CHARS`` or with a character that does not print.
    """
    n = " ".join(str(nickname or "").split())
    if len(n) > MAX_NICKNAME_CHARS:
        raise PollError(f"A nickname has at most {MAX_NICKNAME_CHARS} characters.")
    if not n.isprintable():
        raise PollError("A nickname holds letters, digits, spaces and punctuation only.")
    return n


def parse_answer(text: object) -> tuple[str, float]:
    """(the text as kept, its number) for a typed answer: thousands separators and spaces dropped, "1.07e9"
    accepted.

    Raises:
        PollError: empty, longer than ``MAX_ANSWER_CHARS``, not a number, not finite or beyond ±1e30.
    """
    t = str(text or "").strip()
    if not t:
        raise PollError("Type a number.")
    if len(t) > MAX_ANSWER_CHARS:
        raise PollError(f"An answer has at most {MAX_ANSWER_CHARS} characters.")
    plain = t.replace(",", "").replace("_", "").replace(" ", "")
    try:
        v = float(plain)
    except ValueError:
        raise PollError("Type a number (digits, a point, and e for powers of ten: 1.07e9).") from None
    if not math.isfinite(v) or abs(v) > MAX_ABS_VALUE:
        raise PollError("Type a finite number below 1e30.")
    return plain, v


def purge_expired(store: Store, now: float | None = None) -> int:
    """Delete every expired session with its questions, students and answers, and submission records older
    than an hour; returns how many sessions went."""
    now = _now(now)
    with store.writer() as c:
        gone = [r[0] for r in c.execute(sa.select(sessions.c.id).where(sessions.c.expires_at <= now))]
        if gone:
            for table, col in ((answers, answers.c.session_id), (students, students.c.session_id),
                               (question_rows, question_rows.c.session_id)):
                c.execute(table.delete().where(col.in_(gone)))
            c.execute(sessions.delete().where(sessions.c.id.in_(gone)))
        c.execute(submits.delete().where(submits.c.at < now - 3600))
    return len(gone)


def open_session(store: Store, now: float | None = None) -> Opened:
    """Open a session: a fresh join code and teacher key.

    Raises:
        PollError: ``max_sessions()`` sessions are live already.
    """
    now = _now(now)
    purge_expired(store, now)
    key = secrets.token_urlsafe(18)
    for _ in range(20):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        with store.writer() as c:
            live = c.execute(sa.select(sa.func.count()).select_from(sessions)
                             .where(sessions.c.expires_at > now)).scalar_one()
            if live >= max_sessions():
                raise PollError(f"This server already runs {live} class sessions, its limit: try again when one "
                                "has expired.")
            if c.execute(sa.select(sessions.c.id).where(sessions.c.code == code)).first() is None:
                c.execute(sessions.insert().values(id=uuid.uuid4().hex, code=code, teacher_key_hash=_hash(key),
                                                   created_at=now, expires_at=now + ttl_s(), question_seq=0,
                                                   state="idle"))
                return Opened(code, key)
    raise PollError("No free join code was found; try again.")  # 20 collisions in 887 million codes


def _session(c, code: str, now: float, lock: bool = False):
    q = sa.select(sessions).where(sessions.c.code == normalise_code(code), sessions.c.expires_at > now)
    row = c.execute(q.with_for_update(read=True) if lock else q).first()
    if row is None:
        raise PollError("No open class session has this code (it may have expired).")
    return row


def _teacher(c, code: str, key: object, now: float, lock: bool = False):
    row = _session(c, code, now, lock)
    if not isinstance(key, str) or not hmac.compare_digest(row.teacher_key_hash, _hash(key)):
        raise PollError("This needs the teacher's key (the teacher's own link).")
    return row


def is_teacher(store: Store, code: str, key: object, now: float | None = None) -> bool:
    """True when ``key`` is the teacher key of the live session ``code``."""
    try:
        with store.reader() as c:
            _teacher(c, code, key, _now(now))
        return True
    except PollError:
        return False


def teacher_key_valid(store: Store, key: object, now: float | None = None) -> bool:
    """True when ``key`` is the teacher key of some live session (the Exercises page's answer sheet asks this)."""
    if not isinstance(key, str) or not 8 <= len(key) <= 64:
        return False
    with store.reader() as c:
        return c.execute(sa.select(sessions.c.id).where(sessions.c.teacher_key_hash == _hash(key),
                                                        sessions.c.expires_at > _now(now))).first() is not None


def ask(store: Store, code: str, key: str, spec: dict, now: float | None = None) -> int:
    """Ask a new question (answering not yet open); returns its number in the session.

    Raises:
        PollError: wrong key or code, or a spec that ``questions.check_spec`` refuses.
    """
    now = _now(now)
    try:
        spec = questions.check_spec(spec)
    except ValueError as exc:
        raise PollError(f"This question cannot be asked: {exc}.") from None
    with store.writer() as c:
        row = _teacher(c, code, key, now)
        seq = row.question_seq + 1
        c.execute(question_rows.insert().values(session_id=row.id, seq=seq, spec=json.dumps(spec), asked_at=now))
        c.execute(sessions.update().where(sessions.c.id == row.id).values(question_seq=seq, state="ready"))
    return seq


def set_state(store: Store, code: str, key: str, action: str, now: float | None = None) -> str:
    """Open answering, close it, or reveal the answer (``action`` "open", "close", "reveal"); returns the new state.

    Raises:
        PollError: wrong key or code, an unknown action, or one the current state does not allow (no question
            asked, revealing twice, reopening after the reveal).
    """
    if action not in ACTIONS:
        raise PollError(f"Unknown action {action!r}.")
    allowed, target = ACTIONS[action]
    with store.writer() as c:
        row = _teacher(c, code, key, _now(now))
        if row.state not in allowed:
            raise PollError(f"Cannot {action} now: the question is {row.state}.")
        c.execute(sessions.update().where(sessions.c.id == row.id).values(state=target))
    return target


def join(store: Store, code: str, nickname: str = "", now: float | None = None) -> str:
    """A student joins ``code``; returns their student id (the page keeps it in its URL).

    Raises:
        PollError: an unknown or expired code, a bad nickname, or a full session.
    """
    now = _now(now)
    nickname = check_nickname(nickname)
    if secrets.randbelow(20) == 0:
        purge_expired(store, now)
    student_id = secrets.token_urlsafe(16)
    with store.writer() as c:
        row = _session(c, code, now)
        n = c.execute(sa.select(sa.func.count()).select_from(students)
                      .where(students.c.session_id == row.id)).scalar_one()
        if n >= MAX_STUDENTS:
            raise PollError(f"This session is full ({MAX_STUDENTS:,} students).")
        c.execute(students.insert().values(id=student_id, session_id=row.id, nickname=nickname, joined_at=now))
    return student_id


def _student(c, row, student_id: object):
    if not isinstance(student_id, str) or not 8 <= len(student_id) <= 32:
        raise PollError("Join the session again with its code.")
    st = c.execute(sa.select(students).where(students.c.id == student_id, students.c.session_id == row.id)).first()
    if st is None:
        raise PollError("Join the session again with its code.")
    return st


def _answer(c, session_id: str, seq: int, student_id: str) -> Answer | None:
    r = c.execute(sa.select(answers).where(answers.c.session_id == session_id, answers.c.question_seq == seq,
                                           answers.c.student_id == student_id)).first()
    return None if r is None else Answer(r.text, r.value, r.unit, r.answered_at)


def _spec(c, session_id: str, seq: int) -> dict | None:
    if seq == 0:
        return None
    s = c.execute(sa.select(question_rows.c.spec).where(question_rows.c.session_id == session_id,
                                                        question_rows.c.seq == seq)).scalar_one()
    return json.loads(s)


def student_view(store: Store, code: str, student_id: str, now: float | None = None) -> StudentView:
    """What the student ``student_id`` of session ``code`` may see now.

    Raises:
        PollError: an unknown or expired code, or a student id that did not join this session.
    """
    with store.reader() as c:
        row = _session(c, code, _now(now))
        st = _student(c, row, student_id)
        return StudentView(row.state, row.question_seq, _spec(c, row.id, row.question_seq),
                           _answer(c, row.id, row.question_seq, student_id), st.nickname)


def submit(store: Store, code: str, student_id: str, text: str, unit: str, now: float | None = None) -> Answer:
    """Store the student's answer to the current question (a second submission replaces the first).

    Raises:
        PollError: answering is not open, the text is not a number (``parse_answer``), the unit is not one of
            the question's, more than ``ANSWERS_PER_MINUTE`` submissions in the last minute, or an unknown
            student or session.
    """
    now = _now(now)
    text, value = parse_answer(text)
    with store.writer() as c:
        row = _session(c, code, now, lock=True)  # PostgreSQL: FOR SHARE, so a close waits for this answer
        _student(c, row, student_id)
        if row.state != "open":
            raise PollError("Answering is closed." if row.state in ("closed", "revealed")
                            else "Answering is not open yet: wait for the teacher.")
        ex = questions.build(_spec(c, row.id, row.question_seq))
        if unit not in ex.unit_choices:
            raise PollError(f"Answer in one of: {', '.join(ex.unit_choices)}.")
        recent = c.execute(sa.select(sa.func.count()).select_from(submits)
                           .where(submits.c.student_id == student_id, submits.c.at > now - 60)).scalar_one()
        if recent >= ANSWERS_PER_MINUTE:
            raise PollError(f"At most {ANSWERS_PER_MINUTE} answers a minute: wait a little, then send again.")
        c.execute(submits.insert().values(student_id=student_id, at=now))
        if store.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        values = dict(text=text, value=value, unit=unit, answered_at=now)
        stmt = insert(answers).values(session_id=row.id, question_seq=row.question_seq, student_id=student_id,
                                      **values)
        c.execute(stmt.on_conflict_do_update(index_elements=["session_id", "question_seq", "student_id"],
                                             set_=values))
    return Answer(text, value, unit, now)


def results(store: Store, code: str, key: str, now: float | None = None) -> Results:
    """The current question's state and every answer to it (teacher only).

    Raises:
        PollError: wrong key or code.
    """
    with store.reader() as c:
        row = _teacher(c, code, key, _now(now))
        joined = c.execute(sa.select(sa.func.count()).select_from(students)
                           .where(students.c.session_id == row.id)).scalar_one()
        rows = c.execute(sa.select(answers.c.text, answers.c.value, answers.c.unit, answers.c.answered_at,
                                   students.c.nickname)
                         .join(students, students.c.id == answers.c.student_id)
                         .where(answers.c.session_id == row.id, answers.c.question_seq == row.question_seq)
                         .order_by(answers.c.answered_at, answers.c.id)).all()
        return Results(row.state, row.question_seq, _spec(c, row.id, row.question_seq), joined,
                       [Answer(*r) for r in rows], row.expires_at)


def _cell(text: str) -> str:
    # A spreadsheet runs a cell that starts with = + - @ as a formula (CSV injection): quote it as text.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def export_csv(store: Store, code: str, key: str, now: float | None = None) -> str:
    """Every answer of the session as CSV: question, answer, unit, time (ISO 8601, UTC), nickname (teacher only).

    Raises:
        PollError: wrong key or code.
    """
    with store.reader() as c:
        row = _teacher(c, code, key, _now(now))
        specs = {r.seq: json.loads(r.spec) for r in c.execute(
            sa.select(question_rows.c.seq, question_rows.c.spec).where(question_rows.c.session_id == row.id))}
        rows = c.execute(sa.select(answers.c.question_seq, answers.c.text, answers.c.unit, answers.c.answered_at,
                                   students.c.nickname)
                         .join(students, students.c.id == answers.c.student_id)
                         .where(answers.c.session_id == row.id)
                         .order_by(answers.c.question_seq, answers.c.answered_at, answers.c.id)).all()
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["question", "answer", "unit", "time", "nickname"])
    for seq, text, unit, at, nick in rows:
        when = datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds")
        w.writerow([f"{seq}. {questions.label(specs[seq])}", text, unit, when, _cell(nick)])
    return out.getvalue()


@functools.lru_cache(maxsize=64)
def qr_png(url: str, scale: int = 8) -> bytes:
    """A QR code of ``url`` as PNG bytes (segno, error correction M, a 4-module quiet zone); cached, as the
    teacher's screen asks for it every 2 s."""
    import segno

    buf = io.BytesIO()
    segno.make(url, error="m", micro=False).save(buf, kind="png", scale=scale, border=4)
    return buf.getvalue()
