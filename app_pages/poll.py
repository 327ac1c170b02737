"""Class poll: predict, then reveal. The teacher asks, every student commits a number, the projector shows
the spread, then the answer and the mistakes behind the wrong ones.

Three views by the URL: ``?code=...&key=...`` the teacher's screen (the key only in the teacher's own link),
``?code=...&me=...`` a student who joined (``me`` is their random id: a reload or another server process
finds them again), neither: join with a code, or open a session. Rules, storage and analysis: classroom/.
Nothing a student typed is rendered as markdown or HTML (st.text and data frames only).
"""
import sqlalchemy as sa
import streamlit as st

from classroom import poll, questions
from classroom.store import get_store
from ui import classroom as present, formats, nav, poll_views

try:
    store = get_store()
except (ValueError, OSError, sa.exc.SQLAlchemyError) as exc:
    st.error(f"The poll's database cannot be opened: {formats.md_escape(str(exc)[:300])}")
    nav.end_page()
DB_DOWN = "The poll's database did not answer; try again in a moment (nothing you sent is lost)."
qp = st.query_params
code, key, me = qp.get("code", ""), qp.get("key", ""), qp.get("me", "")
msg = st.session_state.setdefault("_poll_msg", {})
try:
    code = poll.normalise_code(code) if code else ""  # from here on: six characters of poll.CODE_ALPHABET
except poll.PollError as exc:
    st.warning(formats.md_escape(exc))
    code = ""


def _call(where: str, func, *args, then=None) -> None:
    """Run a poll action from a button, then ``then(result)``; keep a refusal to show beside the button."""
    try:
        out = func(store, *args)
    except (poll.PollError, sa.exc.SQLAlchemyError) as exc:
        msg[where] = str(exc) if isinstance(exc, poll.PollError) else DB_DOWN
        return
    msg.pop(where, None)
    if then is not None:
        then(out)


def _read(func, *args):
    """What a poll read returns, or None after showing why it failed."""
    try:
        return func(store, *args)
    except (poll.PollError, sa.exc.SQLAlchemyError) as exc:
        st.error(formats.md_escape(exc) if isinstance(exc, poll.PollError) else DB_DOWN)
        return None


def _show_msg(where: str) -> None:
    if msg.get(where):
        st.warning(formats.md_escape(msg[where]))


def _base_url() -> str:
    return (st.context.url or "").split("?")[0]


def _teach(o: poll.Opened) -> None:
    st.query_params.update({"code": o.code, "key": o.teacher_key, "present": "1"})
    st.session_state[present.PRESENT_KEY] = True


def landing() -> None:
    """Join with a code (students) or open a session (teachers)."""
    left, right = st.columns(2, gap="large")
    with left:
        sent = poll_views.join_form(code)
        if sent:
            _call("join", poll.join, *sent, then=lambda me: st.query_params.update(
                {"code": poll.normalise_code(sent[0]), "me": me}))
            st.rerun()
        _show_msg("join")
    with right:
        poll_views.teach_intro()
        st.button("Open a class session", on_click=_call, args=("open", poll.open_session), kwargs={"then": _teach},
                  key="pl_open")
        _show_msg("open")


@st.fragment(run_every=2)
def live_results() -> None:
    """A fragment: code and QR code, the counts, the histogram and, after the reveal, the answer and the
    mistakes; the CSV export (every 2 s)."""
    r = _read(poll.results, code, key)
    if r is None:
        return
    left, right = st.columns([1, 3], gap="medium")
    poll_views.code_panel(left, code, f"{_base_url()}?code={code}")
    if r.spec is None:
        right.info("Pick a question above and ask it; then open answering.")
        return
    ex = questions.build(r.spec)
    pairs = [(a.value, a.unit) for a in r.answers]
    poll_views.counts_panel(left, ex, r, pairs)
    left.download_button("Export CSV", poll.export_csv(store, code, key), f"poll_{code}.csv", "text/csv",
                         key="pl_csv")
    poll_views.question_and_spread(right, ex, r, pairs)


def teacher() -> None:
    """The teacher's screen: the question and the controls above the live results."""
    if not poll.is_teacher(store, code, key):
        st.error("This link's teacher key does not open a live session (wrong key, or the session expired).")
        return
    poll_views.teacher_controls(_call, code, key, no_question_yet=poll.results(store, code, key).spec is None)
    _show_msg("ask")
    _show_msg("state")
    live_results()
    st.caption(f"[Every exercise's answer and solution (teacher view)](exercises?teacher={key}) · this page's "
               "address holds your key: project the code, not the address bar.")


def _send(seq: int) -> None:
    """The answer form's callback: submit what the student typed for question ``seq``."""
    _call("answer", poll.submit, code, me, st.session_state.get(f"pl_ans_{seq}"),
          st.session_state.get(f"pl_unit_{seq}"))


@st.fragment(run_every=2)
def student() -> None:
    """A fragment: the question, the student's own answer (changeable while open) and, after the reveal, the
    right answer and what theirs was (every 2 s)."""
    v = _read(poll.student_view, code, me)
    if v is None:
        return
    st.text(f"Session {code}" + (f" · you are {v.nickname}" if v.nickname else ""))
    if v.spec is None:
        st.info("Joined. Wait for the teacher's question.")
        return
    ex = questions.build(v.spec)
    st.markdown(f"**{ex.title}**")
    st.markdown(ex.question)
    if v.state == "open":
        poll_views.answer_form(ex, v, _send)
        _show_msg("answer")
    else:
        st.info("Answering is not open yet." if v.state == "ready" else "Answering is closed.")
    poll_views.own_answer(ex, v)


try:
    if key and code:
        teacher()  # no title: the code, the question and the histogram fit on a projector's screen
    else:
        st.title("Class poll: predict, then reveal")
        if code and me:
            student()
        else:
            landing()
except sa.exc.SQLAlchemyError:
    st.error(DB_DOWN)
