"""Exercises: graded napkin problems after the course material, with a teacher view.

The variant (``variant=`` in the URL) picks the numbers: 0 is the course's own, any other is drawn by
course.exercises. A student's answers live in this browser session only; nothing is stored on the server.
``teacher=<key>`` lists every answer and worked solution on one printable page: the key is the teacher key of
a live class-poll session (the Class poll page's teacher link), so a student cannot flip it on.
"""
import random

import streamlit as st

from classroom import poll
from classroom.store import get_store
from course import exercises as ex_calc
from ui import formats, nav

st.title("Exercises")

qp = st.query_params
try:
    linked_variant = ex_calc.check_variant(qp.get("variant", "0"))
except ValueError as exc:
    st.warning(f"{formats.md_escape(formats.sentence(exc))}. Showing variant 0.")
    linked_variant = 0
if "ex_variant" not in st.session_state:
    st.session_state["ex_variant"] = linked_variant


def _teacher_key_ok(key: str) -> bool:
    """Whether ``key`` is the teacher key of a live class-poll session (False when the database is unreachable)."""
    try:
        return poll.teacher_key_valid(get_store(), key)
    except Exception:  # noqa: BLE001 - no database, no teacher view; the page itself still works
        return False


teacher_key = qp.get("teacher", "")
if "_ex_teacher_ok" not in st.session_state:
    st.session_state["_ex_teacher_ok"] = bool(teacher_key) and _teacher_key_ok(teacher_key)
key_ok = st.session_state["_ex_teacher_ok"]
if teacher_key and not key_ok:
    st.warning("The teacher view needs the teacher's key: open a class session on the Class poll page and follow "
               "its link to every exercise's answer.")
    del qp["teacher"]
st.session_state.setdefault("ex_teacher", key_ok)


def _new_variant() -> None:
    st.session_state["ex_variant"] = random.randint(1, ex_calc.MAX_VARIANT)


c1, c2, c3 = st.columns([2, 2, 3], vertical_alignment="bottom")
variant = int(c1.number_input("Variant", min_value=0, max_value=ex_calc.MAX_VARIANT, step=1, key="ex_variant",
                              help="0 = the course's own numbers. Give the class one variant, or each student "
                                   "their own: the same number always gives the same problems."))
c2.button("A variant of my own", on_click=_new_variant, key="ex_new", width="stretch")
teacher = key_ok and c3.toggle("Teacher view: every answer and solution", key="ex_teacher")
qp["variant"] = str(variant)

problems = ex_calc.all_exercises(variant)
st.caption(f"{len(problems)} problems after the back-of-the-envelope problems of the inference course (week 11), "
           "CS336 lecture 10 (Inference) and chapter 9 (LLM inference). Napkin numbers: lower bounds from the "
           "roofline, every weight read once per step, GB = 10^9 bytes, GiB = 2^30. Your answers stay in this "
           "browser session; nothing is stored on the server.")


def _solution(ex: ex_calc.Exercise) -> None:
    st.latex(ex.solution_latex)
    st.caption(f"{ex.solution_text} Answer: **{ex.answer_text}**, accepted {ex.tolerance_text}. After {ex.source}.")
    st.markdown(f"[See it on the explorer's page, in this state ↗]({ex.url})")


if teacher:
    st.markdown(f"### Variant {variant}: answers and worked solutions")
    st.markdown("<style>@media print {[data-testid='stSidebar'], header, [data-testid='stToolbar'] "
                "{display: none !important;}}</style>", unsafe_allow_html=True)
    for ex in problems:
        with st.container(border=True):
            st.markdown(f"**{ex.number}. {ex.title}** · answer **{ex.answer_text}** ({ex.tolerance_text})")
            st.markdown(ex.question)
            _solution(ex)
    nav.end_page()

results = st.session_state.setdefault("_ex_results", {})
solved = sum(1 for ex in problems if results.get((ex.key, variant), ("",))[0] == "correct")
st.progress(solved / len(problems), text=f"Variant {variant}: {solved} of {len(problems)} solved")


def _check(ex: ex_calc.Exercise) -> None:
    value = st.session_state.get(f"ex_{ex.key}_{ex.variant}_val")
    unit = st.session_state.get(f"ex_{ex.key}_{ex.variant}_unit")
    if value is None or unit is None:
        results[(ex.key, ex.variant)] = ("input", "Type a number and choose its unit first.")
        return
    g = ex_calc.grade(ex, value, unit)
    results[(ex.key, ex.variant)] = ("correct" if g.correct else "wrong", g.message)


def _reveal(ex: ex_calc.Exercise) -> None:
    state = results.get((ex.key, ex.variant), ("", ""))
    results[(ex.key, ex.variant)] = (state[0] if state[0] == "correct" else "revealed", state[1])


for ex in problems:
    with st.container(border=True):
        st.markdown(f"**{ex.number}. {ex.title}**")
        st.markdown(ex.question)
        with st.form(f"ex_form_{ex.key}_{variant}", border=False):
            a, b, c = st.columns([3, 2, 2], vertical_alignment="bottom")
            a.number_input("Your answer", value=None, format="%g", key=f"ex_{ex.key}_{variant}_val",
                           placeholder="a number")
            b.selectbox("Unit", ex.unit_choices, key=f"ex_{ex.key}_{variant}_unit",
                        index=None if len(ex.unit_choices) > 1 else 0, placeholder="choose a unit")
            c.form_submit_button("Check", on_click=_check, args=(ex,), width="stretch")
        status, message = results.get((ex.key, variant), ("", ""))
        message = formats.sentence(message)  # every message on the page starts as a sentence does
        if status == "correct":
            st.success(message)
        elif status in ("wrong", "input"):
            st.error(message)
        elif status == "revealed" and message:
            st.info(f"Your last try: {message}")
        if status in ("correct", "revealed"):
            _solution(ex)
        else:
            st.button("Show the solution", key=f"ex_{ex.key}_{variant}_reveal", on_click=_reveal, args=(ex,))
