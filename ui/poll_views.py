"""The Class poll page's parts: the teacher's question picker, the code and QR code, the class's counts and
histogram, the join form, the student's answer form and own answer.

The rules, the questions and the numbers come from classroom/; this module draws. Nothing here renders text
a student typed.
"""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

import calc
from classroom import analysis, poll, questions
from ui import charts, formats, sidebar, widgets


def question_picker() -> dict:
    """The teacher's choice of question (its widgets); returns its spec (classroom.questions): an exercise with
    its variant, or a prediction for a page state."""
    kind = st.radio("Question", ["An exercise", "Predict a number"], horizontal=True, key="pl_kind")
    if kind == "An exercise":
        menu = questions.exercise_menu()
        c1, c2 = st.columns([3, 1])
        ex_key = c1.selectbox("Exercise", list(menu), format_func=menu.get, key="pl_ex")
        variant = c2.number_input("Variant", 0, questions.ex_calc.MAX_VARIANT, 0, key="pl_var")
        spec = {"kind": "exercise", "key": ex_key, "variant": int(variant)}
    else:
        c1, c2, c3 = st.columns(3)
        q = c1.selectbox("Quantity", list(questions.QUANTITIES), format_func=questions.QUANTITIES.get, key="pl_q")
        model = c2.selectbox("Model", questions.models(), key="pl_model",
                             index=questions.models().index(sidebar.DEFAULT_MODEL))
        gpu = c3.selectbox("GPU", questions.GPUS, key="pl_gpu")
        c4, c5 = st.columns(2)
        ctx = c4.select_slider("Context (tokens)", questions.CONTEXTS, 8192, key="pl_ctx", format_func=formats.fmt_tokens)
        batch = c5.select_slider("Batch B", questions.BATCHES, 32, key="pl_b", disabled=q == "kv_seq")
        widgets.context_warning(calc.get_model(model), ctx)   # a question past the model's window says so
        spec = {"kind": "predict", "quantity": q, "model": model, "gpu": gpu, "context": ctx, "batch": batch}
    return spec


def histogram_figure(ex, values: list[float], revealed: bool) -> go.Figure:
    """Bars of the class's answers in the question's unit; the right answer's bin green after the reveal."""
    labels, counts, hit, log = analysis.bars(ex, values, revealed)
    fig = go.Figure(go.Bar(x=labels, y=counts, marker_color=["#16a34a" if x else "#64748b" for x in hit]))
    fig.update_layout(height=300, margin=dict(t=30, b=40), yaxis_title="answers", bargap=0.05,
                      xaxis_title=f"{ex.unit}{' (log bins)' if log else ''}", xaxis_type="category")
    fig.update_yaxes(tickformat=",d", dtick=max(1, -(-max(counts) // 6)))
    return fig


def join_form(code: str) -> tuple[str, str] | None:
    """The students' join form (a code, an optional nickname); (code, nickname) when sent, else None."""
    with st.form("pl_join"):
        st.subheader("Join your class")
        code_typed = st.text_input("Join code", value=code, max_chars=12, key="pl_code", placeholder="e.g. K7QM2P")
        nickname = st.text_input("Nickname (optional)", max_chars=poll.MAX_NICKNAME_CHARS, key="pl_nick")
        return (code_typed, nickname) if st.form_submit_button("Join", type="primary") else None


def code_panel(container, code: str, join_url: str) -> None:
    """The session's code in large type, the QR code of ``join_url`` and the address to type."""
    container.markdown(f"<div style='font-size:2.6rem;font-weight:700;letter-spacing:.2rem'>{code}</div>",
                       unsafe_allow_html=True)
    container.image(poll.qr_png(join_url), width=190)
    container.caption(f"Scan, or open {formats.md_escape(join_url)} and type the code.")


def counts_panel(container, ex, r, pairs: list) -> None:
    """How many answered of those who joined, the answering state and, after the reveal, the share right
    (``r``: classroom.poll.results; ``pairs``: the answers as (value, unit))."""
    with container, widgets.metric_row(3, per_row=1) as m:
        m[0].metric("Answers", f"{len(r.answers):,} of {r.joined:,}", help="answers to this question, of the "
                    "students who joined")
        m[1].metric("Answering", r.state)
        m[2].metric("Within tolerance", f"{analysis.share_right(ex, pairs):.0%}" if r.state == "revealed" else "–")


def question_and_spread(container, ex, r, pairs: list) -> None:
    """The question, the answers' histogram and, after the reveal, the answer, its solution and the mistakes
    behind the wrong answers with a link to the page that shows why."""
    vals = [analysis.in_unit(ex, v, u) for v, u in pairs]
    container.markdown(f"**Question {r.seq}: {ex.title}.** {ex.question}")
    if r.state == "revealed":
        container.success(f"Answer: **{ex.answer_text}** ({ex.tolerance_text}). {ex.solution_text}")
    chart, table = container.columns([3, 2]) if r.state == "revealed" else (container.container(), None)
    if vals:
        with chart:
            charts.show_chart(histogram_figure(ex, vals, r.state == "revealed"), key="pl_hist")
    if table is not None:
        table.table([{"n": c.count, "share": f"{c.share:.0%}", "what it is": c.label}
                     for c in analysis.clusters(ex, pairs)])
        table.link_button("Show why on its page ↗", ex.url, type="primary")


def answer_form(ex, v, send) -> None:
    """The student's answer and unit for question ``v.seq`` (``v``: classroom.poll.student_view); ``send(seq)``
    submits it."""
    with st.form(f"pl_answer_{v.seq}"):
        c1, c2 = st.columns([2, 1])
        c1.text_input("Your answer", max_chars=poll.MAX_ANSWER_CHARS, key=f"pl_ans_{v.seq}")
        c2.selectbox("Unit", ex.unit_choices, key=f"pl_unit_{v.seq}", index=ex.unit_choices.index(ex.unit))
        st.form_submit_button("Send" if v.mine is None else "Change my answer", type="primary", on_click=send,
                              args=(v.seq,))


def own_answer(ex, v) -> None:
    """The student's own answer (as plain text: it is theirs) and, after the reveal, the answer and what theirs
    was."""
    if v.mine is not None:
        st.text(f"Your answer: {v.mine.text} {v.mine.unit}")
    if v.revealed:
        st.success(f"The answer: {ex.answer_text} ({ex.tolerance_text}).")
        if v.mine is not None:
            st.text("Yours: " + analysis.classify(ex, v.mine.value, v.mine.unit)[1])


def teach_intro() -> None:
    """The landing page's "Teach" column: what opening a session gives the teacher."""
    st.subheader("Teach")
    st.caption("Open a session: students join with its code or QR code; your link (with its key) is the only "
               "way to ask, open, close, reveal and export. Keep it to yourself. Sessions expire after "
               f"{poll.ttl_s() / 3600:g} hours and are deleted.")


def teacher_controls(call, code: str, key: str, no_question_yet: bool) -> None:
    """The teacher's bar for session ``code`` (``key``: the teacher's): the question picker with its Ask button
    (open while no question was asked), then Open answering, Close and Reveal. Each button runs
    ``call(where, action, *args)``, the page's callback that keeps a refusal to show beside the button."""
    top = st.columns([3, 1, 1, 1], vertical_alignment="center")
    with top[0].expander("Question", expanded=no_question_yet):
        spec = question_picker()
        st.button("Ask this question", on_click=call, args=("ask", poll.ask, code, key, spec), key="pl_ask")
    for col, (label, action) in zip(top[1:], [("Open answering", "open"), ("Close", "close"), ("Reveal", "reveal")]):
        col.button(label, on_click=call, args=("state", poll.set_state, code, key, action), key=f"pl_{action}",
                   width="stretch", type="primary" if action == "reveal" else "secondary")
