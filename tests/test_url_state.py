"""Every page's state is in its URL: an audit of the input widgets of every page file.

A keyed input widget either binds to the URL (``bind="query-params"``), or is listed here with the way
its state travels instead (or why it must not). A new widget without either fails this test.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INPUTS = {"slider", "select_slider", "number_input", "selectbox", "radio", "toggle", "checkbox", "text_input",
          "text_area", "data_editor", "multiselect", "file_uploader", "segmented_control", "pills", "date_input",
          "time_input", "color_picker", "feedback"}
#: (file, key as written in the source) -> how its state travels instead of bind="query-params"
NOT_BOUND = {
    ("sidebar.py", "'cfg_upload'"): "the loaded model travels as cfg (model_to_param)",
    ("sidebar.py", "'cfg_text'"): "the loaded model travels as cfg (model_to_param)",
    ("sidebar.py", "'cfg_name'"): "the loaded model travels as cfg (model_to_param)",
    ("bill_views.py", "'mb_prices'"): "st.data_editor cannot bind: the edited cells travel as mb_prices",
    ("classroom.py", "PRESENT_KEY"): "written to the URL as present=1 by presenter_toggle",
    ("exercises.py", "'ex_variant'"): "written to the URL as variant",
    ("exercises.py", "'ex_teacher'"): "shown only with teacher=<a class poll's teacher key> in the URL",
    ("poll_views.py", "'pl_code'"): "a join form: the code travels as code=, the student's id as me=",
    ("poll_views.py", "'pl_nick'"): "a join form: stored with the student, never in a URL",
    ("poll_views.py", "'pl_kind'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "'pl_ex'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "'pl_var'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "'pl_q'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "'pl_model'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "'pl_gpu'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "'pl_ctx'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "'pl_b'"): "the teacher's question picker: the question asked is stored in the session",
    ("poll_views.py", "f'pl_ans_{v.seq}'"): "a student's answer: stored in the poll's database",
    ("poll_views.py", "f'pl_unit_{v.seq}'"): "a student's answer: stored in the poll's database",
    ("exercises.py", "f'ex_{ex.key}_{variant}_val'"): "a student's own answer, not part of a shared view",
    ("exercises.py", "f'ex_{ex.key}_{variant}_unit'"): "a student's own answer, not part of a shared view",
    ("measured_views.py", "f'ms_up_{kind}'"): "an uploaded measurements file: a file, not view state",
    ("measured_views.py", "'ms_run_date'"): "the run date of an uploaded file, which stays with the file (not in a link)",
    ("live_views.py", "'lv_cfgfile'"): "a file upload; the same config.json pasted as text travels as lv_cfg",
    ("live_endpoint.py", "'ep_key'"): "an API key: kept out of the URL on purpose",
    ("live_endpoint.py", "'ep_files'"): "uploaded benchmark results: files, not view state",
    ("live_endpoint.py", "'ep_paste'"): "pasted benchmark results: a file's text, not view state",
    ("workload_views.py", "'wl_file'"): "an uploaded trace: a file, not view state",
}


def _unbound_inputs():
    for path in sorted(p for d in ("app_pages", "ui") for p in (ROOT / d).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in INPUTS:
                kw = {k.arg: ast.unparse(k.value) for k in node.keywords}
                if kw.get("bind") != "'query-params'":
                    yield path.name, kw.get("key"), node.lineno


def test_every_input_widget_is_in_the_url_or_says_how_its_state_travels():
    found = list(_unbound_inputs())
    unexplained = [f"{f}:{line} key={key}" for f, key, line in found if (f, key) not in NOT_BOUND]
    assert not unexplained, ("input widgets neither bound to the URL (bind='query-params') nor listed in "
                             f"NOT_BOUND with the way their state travels: {unexplained}")

