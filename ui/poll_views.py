"""The Class poll page's parts: the teacher's question picker, the class's histogram, the join form.

The rules, the questions and the numbers come from classroom/; this module draws. Nothing here renders text
a student typed.
"""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

import calc
from classroom import analysis, poll, questions
from ui import sidebar, widgets


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
        ctx = c4.select_slider("Context (tokens)", questions.CONTEXTS, 8192, key="pl_ctx")
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
