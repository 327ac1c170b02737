"""Live measurement: a real transformer's prefill and decode timed on this machine, next to calc's roofline."""
import time
import uuid

import streamlit as st

from live.predict import headline
from live.run_spec import RunSpec
from live import job_queue
from live.job_queue import progress_text, started_by
from live.worker import LiveWorker
from ui import formats, live_views, nav, run_lock, url_state

st.title("Live measurement")
linked = url_state.link_values("lv_target")  # drawn before app.py's check of the link: named here
target = st.radio("Measure", ["this machine", "an endpoint"], key="lv_target", bind="query-params", horizontal=True,
                  help="this machine: a model run here by the app; an endpoint: a serving deployment's "
                       "OpenAI-compatible API under load")
refused = url_state.late_link_notice("lv_target", linked)
if refused:
    st.warning(refused, icon=":material/link_off:")
if target == "an endpoint":
    from ui import live_endpoint
    live_endpoint.render()
    nav.end_page()
st.markdown(
    "The other pages predict; this one measures. A real transformer runs here, in one worker process, "
    "and its **prefill** (TTFT) and **decode** (TPOT) times sit beside three predictions: the roofline of "
    "the accelerator's data sheet (a known GPU only), the roofline of **this machine** (bandwidth W and "
    "matmul rate P probed just now; the honest lower bound), and a **calibrated** prediction: the model's "
    "matmuls at the speed the matmul kernels really reach at its layer shapes on this machine, the KV read at W, "
    "and the overhead measured on the model itself with its matmuls taken out. The inference course, week 11, step 4: to emit a "
    "token the model reads all its weights and its KV cache, so decode should sit near the bandwidth line until "
    "the critical batch.")
st.latex(r"t_\text{machine} = \frac{B\cdot KV}{W} + \max\!\Big(\frac{\text{weight bytes}}{W},"
         r"\ \frac{2 N B}{P}\Big)")
st.latex(r"\begin{aligned} t_\text{calibrated} = {} & \sum_{\text{linear layers}} t_\text{kernel}(\text{shape}, B)"
         r" + \frac{B\cdot KV}{W} \\ & + L\,c_\text{layer} + c_\text{step} + \beta\,(B-1) + \gamma\,(B S - S_0)"
         r"\end{aligned}")   # two lines: one fits a 700 px window
st.caption("Decode as written; a prefill of B prompts of T tokens adds the KV write at W, the attention FLOPs at P "
           "and its own overhead c + a BT + b BT², fitted on the same stubbed model. Every prefill line charges the "
           "LM head for each prompt's last token only (the measured prefill asks for those logits alone, as serving "
           "engines do), not for all B·T tokens as the course's napkin does.")


@st.cache_resource(max_entries=1, on_release=lambda w: w.stop(), show_spinner=False)
def _worker() -> LiveWorker:
    return LiveWorker()


spec, spec_error, device, dtype = live_views.run_controls()
live_views.context_warning(spec)

worker = _worker()
owner = st.session_state.setdefault("_lv_owner", uuid.uuid4().hex)
c = st.columns([2, 1, 1, 4], vertical_alignment="center")
run = c[0].button("Run measurement", type="primary", key="lv_run", disabled=spec is None)
cancel = c[1].button("Cancel", key="lv_cancel")
reprobe = c[2].button("Re-probe", key="lv_reprobe",
                      help="Measure this machine's bandwidth and matmul rate now (a few seconds), without a run. "
                           "Every run also probes and calibrates afresh.")
progress_box = c[3].empty()
if spec_error:
    st.error(spec_error)
if run and spec is not None:
    st.session_state["_lv_pending"] = spec
elif reprobe:
    st.session_state["_lv_pending"] = RunSpec(device=device, dtype=dtype, probe_only=True)
job_id = st.session_state.get("_lv_job")
if cancel:
    st.session_state.pop("_lv_pending", None)
    if job_id is not None:
        worker.cancel(job_id)

# Another session's run: say so at once, from the worker's state, without starting anything.
pending = st.session_state.get("_lv_pending")
other = worker.running_for_other(owner)
# One slot for what the visitor waits on: another run, theirs queued, or the prompt to press Run (so that a
# prompt of the previous rerun does not stay on screen below "queued" while this rerun waits).
notice = st.empty()
if other is not None and pending is None:
    notice.info(f"A measurement is running (started by {started_by(other)}): {other.what or 'a live run'}; now "
                f"{other.message} ({other.fraction:.0%} done). One measurement runs at a time per machine: "
                "press **Run measurement** to queue yours, it starts when this one finishes.")

# Submit a pending run as soon as the worker is free (another browser may be measuring).
if pending is not None:
    with run_lock.released():   # waiting on the worker: other sessions' runs go on meanwhile
        job_id = job_queue.submit_when_free(worker, pending, owner, on_wait=lambda cur: notice.info(
            "Yours is queued: waiting for the current run to finish (one measurement at a time per "
            f"machine{', started by ' + started_by(cur) if cur else ''}): "
            f"{cur.what + '; now ' + cur.message if cur else ''}"))
    st.session_state["_lv_job"] = job_id
    st.session_state.pop("_lv_pending", None)
    notice.empty()

job = worker.job(job_id) if job_id is not None else None
if job is not None and not job.finished:
    with progress_box.container():
        bar = st.progress(0.0, text=progress_text(job))
        with run_lock.released():
            job = job_queue.follow(worker, job_id, lambda j: bar.progress(min(max(j.fraction, 0.0), 1.0),
                                                                          text=progress_text(j)))
    progress_box.empty()
if job is not None and job.finished:
    if job.result is not None and job.result.get("probe") is not None and "model" not in job.result:
        st.session_state["_lv_probe"] = job  # a probe-only run
    else:
        st.session_state["_lv_last"] = job
    if job.state == "error":
        st.session_state["_lv_last"] = job
fresh = st.session_state.get("_lv_probe")
if fresh is not None and fresh.state == "done":
    fp = fresh.result["probe"]
    loads = (f"; load average {fp['load_before'][0]:.2f} before, {fp['load_after'][0]:.2f} after"
             if fp.get("load_before") and fp.get("load_after") else "")
    st.success(f"Probe taken at {time.strftime('%H:%M:%S', time.localtime(fp['taken_at']))}: read bandwidth "
               f"{formats.fmt_bytes(fp['read_bytes_per_s'])}/s, {fp['dtype']} matmul "
               f"{formats.fmt_bytes(fp['matmul_flops_per_s']).replace('B', 'FLOP')}/s, in {fp['probe_s']:.1f} s{loads}.")
job = st.session_state.get("_lv_last")

if job is None:
    if other is not None and pending is None:
        nav.end_page()  # the notice above already says how to queue a run
    notice.info("Press **Run measurement**. The defaults (SmolLM2-135M shape with random weights, 13 points) take "
                "about 30 s on a quiet 2-core CPU, worker start, model build and calibration included (30-65 s "
                "measured at load 0.5-1.3; a second run reuses the warm model); when other work shares the cores, "
                "expect 2-4 minutes and noisier points.")
    nav.end_page()
res = job.result or {}
measured = res.get("table") is not None and not res["table"].empty  # a cancel or failure may come before any
if job.state == "error":
    st.error(f"The run failed: {formats.md_escape(job.error)}"
             + (" The points measured before it are shown." if measured else ""))
elif job.state == "cancelled":
    st.warning("Cancelled: the points measured before the cancel are shown." if measured else
               "Cancelled before any point was measured. Press **Run measurement** to start again.")
if not measured:
    nav.end_page()

head = headline(res["table"])
# The answer on top: the headline right under the Run button, then what ran and how far to trust it (the load,
# the probe, the calibration checks), then the detail behind it, folded, one expander per question.
live_views.headline_section(res, head)
live_views.run_notes(res)
with st.expander("Where the calibrated prediction's time goes", expanded=False):
    live_views.calibrated_parts_section(res, head)
live_views.probe_expander(res)
with st.expander("Measured against predicted, point by point (charts)", expanded=False):
    live_views.measured_against_predicted(res)
with st.expander("Every measured point (table)", expanded=False):
    live_views.points_table(res["table"])
with st.expander("The KV cache check and the generated text", expanded=False):
    live_views.kv_check_section(res)
    live_views.generated_text(res)
