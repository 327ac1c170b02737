"""The live page's parts: the run's controls (model source, device, dtype, sweep sizes, mode) and the result of a
measurement (model and machine notes, headline, the calibrated prediction's parts, the probe, measured against
predicted, every point, the KV check, the generated text).

The measurement runs in live.worker; its numbers come from live.predict and calc. This module draws them.
"""
from __future__ import annotations

import os
import time

import pandas as pd
import streamlit as st

import calc
from calc.config_json import model_from_json_text
from calc.limits import parse_config_json
from live.charts import SWEEPS, ratio_figure, sweep_figure
from live.predict import PREDICTIONS, calibrated_parts_table, kernel_table, ratio_summary
from live.predict import NOISY_SPREAD, REPORTED_LABEL, machine_step
from live.run_spec import (DEFAULT_PRESET, LIVE_DTYPES, MODELS_ROOT_ENV, PRESET_IDS, QUICK_SWEEPS, RunSpec,
                           available_memory_bytes, check_config_fits, cpu_native_dtypes, cuda_present, default_dtype,
                           list_model_dirs, load_advice, models_root, parse_sweeps, preset_name,
                           resolve_weights_path)
from ui import charts, columns, downloads, equations, formats, widgets

#: Radio label (also the URL value) -> RunSpec source.
SOURCES = {"preset": "preset", "config.json": "config", "local weights": "weights"}
MODES = {"full": "full (the sweep sizes above)", "quick": "quick (8 points, about 20 s)"}


def run_controls() -> tuple[RunSpec | None, str | None, str, str]:
    """The run's controls (keys lv_*, in the URL but the uploaded file); returns (the RunSpec they make or None,
    the message saying what is wrong or None, the device, the dtype)."""
    devices = ["cpu", "cuda"] if cuda_present() else ["cpu"]

    c = st.columns([2, 2, 1, 1])
    source = SOURCES[c[0].radio("Model source", list(SOURCES), key="lv_src", bind="query-params", horizontal=True,
                                help="preset and config.json build the architecture with random weights; local "
                                     "weights load a checkpoint already on this machine.")]
    preset = c[1].selectbox("Preset", PRESET_IDS, index=PRESET_IDS.index(DEFAULT_PRESET), format_func=preset_name,
                            key="lv_model", bind="query-params", disabled=source != "preset")
    device = c[2].radio("Device", devices, key="lv_dev", bind="query-params")
    dtype_choice = c[3].radio("dtype", ("auto",) + LIVE_DTYPES, key="lv_dtype", bind="query-params",
                              help="auto: bf16 on a GPU, fp32 on a CPU.")
    dtype = default_dtype(device) if dtype_choice == "auto" else dtype_choice
    if device == "cpu" and dtype not in cpu_native_dtypes():
        st.warning(f"This CPU has no native {dtype} arithmetic: torch falls back to a slow path (a bf16 matmul "
                   "ran ~300x slower than fp32 on an AVX2-only CPU). Expect long runs.")

    config_text, weights_path = None, None
    if source == "config":
        up = st.file_uploader("Upload config.json", type=["json"], key="lv_cfgfile")
        config_text = st.text_area("…or paste config.json", key="lv_cfg", height=150, bind="query-params",
                                   help="Any architecture transformers ships (model_type); built with random weights. "
                                        "auto_map entries are ignored: remote code is never run.")
        if up is not None:
            config_text = up.getvalue().decode("utf-8", errors="replace")
    elif source == "weights":
        # Only folders below the models folder the server's operator set (environment or secrets); never a typed path.
        if not os.environ.get(MODELS_ROOT_ENV):
            try:
                if st.secrets.get("models_root"):
                    os.environ[MODELS_ROOT_ENV] = str(st.secrets["models_root"])
            except Exception:  # noqa: BLE001 - no secrets file: local weights stay off
                pass
        folders = list_model_dirs()
        if models_root() is None or not folders:
            st.info("Local weights are off on this server: its operator has set no models folder with a model in it "
                    f"({MODELS_ROOT_ENV}, or models_root in Streamlit's secrets). Use a preset or a config.json.")
        else:
            weights_path = st.selectbox("Model folder on this server", folders, key="lv_path", bind="query-params",
                                        help="Folders below the server's models folder that hold a config.json. Loaded "
                                             "with local_files_only=True and HF_HUB_OFFLINE=1; never trust_remote_code.")

    with st.expander("Sweep sizes", expanded=False):
        c = st.columns(3)
        prompts_txt = c[0].text_input("TTFT sweep: prompt lengths at batch 1 (tokens)", "32, 64, 128, 256",
                                      key="lv_prompts", bind="query-params")
        pbatch_txt = c[1].text_input("TTFT sweep: batches", "1, 2, 4", key="lv_pbatch", bind="query-params")
        pprompt = c[2].number_input("…at prompt length (tokens)", 1, 32768, 64, key="lv_pprompt", bind="query-params")
        c = st.columns(3)
        dbatch_txt = c[0].text_input("TPOT sweep: batches", "1, 4, 16, 32", key="lv_dbatch", bind="query-params")
        dctx = c[1].number_input("…at context (tokens)", 1, 131072, 128, key="lv_dctx", bind="query-params")
        dctxs_txt = c[2].text_input("TPOT sweep: contexts at batch 1 (tokens)", "128, 2048", key="lv_dctxs",
                                    bind="query-params")
        c = st.columns(4)
        steps = c[0].number_input("Timed decode steps per run", 1, 64, 4, key="lv_steps", bind="query-params")
        repeats = c[1].number_input("Timed runs per point", 1, 20, 3, key="lv_reps", bind="query-params")
        warmup = c[2].number_input("Warm-up runs per shape", 0, 5, 1, key="lv_warm", bind="query-params")
        new_tokens = c[3].number_input("Generated tokens", 1, 256, 16, key="lv_newtok", bind="query-params")

    mode = st.radio("Run", list(MODES), captions=[v.split(" ", 1)[1] for v in MODES.values()], key="lv_mode",
                    bind="query-params", horizontal=True,
                    help="quick: a classroom run on fewer points (prompts 32 and 128, batches 1 and 4 / 1 and 8, contexts "
                         "128 and 1024), about 20 s on a quiet 2-core laptop; full: the sweep sizes above. Both probe the "
                         "machine and calibrate afresh.")
    sizes, problems = parse_sweeps(dict(prompt_lens=prompts_txt, prefill_batches=pbatch_txt, decode_batches=dbatch_txt,
                                         decode_contexts=dctxs_txt))
    spec, spec_error = None, None
    if problems:
        spec_error = ("Fix the sweep sizes (whole numbers separated by commas):\n\n"
                      + "\n".join(f"- {formats.md_escape(p)}" for p in problems))
    else:
        try:
            kw = dict(sizes, repeats=int(repeats), new_tokens=int(new_tokens))
            if mode == "quick":
                kw.update(QUICK_SWEEPS)
            spec = RunSpec(source=source, preset_id=preset, config_json=config_text, weights_path=weights_path,
                           device=device, dtype=dtype, prefill_prompt_len=int(pprompt), decode_context_len=int(dctx),
                           decode_steps=int(steps), warmup=int(warmup), **kw)
            if source == "config":  # calc's count of the parameters, against the memory free here, before building
                free = None if device == "cuda" else available_memory_bytes()
                fit, need = check_config_fits(parse_config_json(config_text), dtype, free)
                st.caption(f"calc reads this config as {fit.n_params:,} parameters: {formats.fmt_bytes(need)} of weights "
                           f"in {dtype}" + (f"; {formats.fmt_bytes(free)} free on this machine." if free else "."))
        except ValueError as e:  # may quote what the visitor typed or pasted: shown as plain text
            spec, spec_error = None, formats.md_escape(e)
    return spec, spec_error, device, dtype


#: The live page's own ending of the trained-window warning: its figures are measurements, not arithmetic.
TIMED_PAST_WINDOW = ("The run would time a context that long: its timings there are of the architecture's shapes, "
                     "not of a model trained for that length.")


def context_warning(spec: RunSpec | None) -> bool:
    """The trained-window warning of the other pages (``widgets.context_warning``, ending with ``TIMED_PAST_WINDOW``
    instead of the arithmetic pages' sentence) for the longest context the run would time: the longest prompt of
    the TTFT sweeps or the longest context of the TPOT sweeps. The model's window
    is its config.json's max_position_embeddings (a preset's, the pasted config's or the local folder's). True when
    shown; nothing when there is no valid run or its config cannot be read (the run's own checks say why)."""
    if spec is None:
        return False
    try:
        if spec.source == "preset":
            model = calc.get_model(spec.preset_id)
        elif spec.source == "config":
            model = model_from_json_text(spec.config_json)
        else:
            model = model_from_json_text((resolve_weights_path(spec.weights_path) / "config.json").read_text())
    except (ValueError, OSError):
        return False
    longest = max(spec.prompt_lens + spec.decode_contexts + (spec.prefill_prompt_len, spec.decode_context_len))
    return widgets.context_warning(model, longest, meaning=TIMED_PAST_WINDOW)


def run_notes(res: dict) -> None:
    """What ran and where: the model, its notes, the machine's load, when the probe and calibration were taken,
    the reported statistic, unreliable points and invalid calibrated predictions."""
    model, probe, table = res["model"], res["probe"], res["table"]
    weights_note = ("**random weights** (timing depends only on shapes and dtypes; nothing is downloaded)"
                    if model["weights"] == "random" else "trained weights")
    st.markdown(f"**{formats.md_escape(model['label'])}**: {model['n_params']:,} parameters, {model['n_layers']} layers, "
                f"{weights_note}, {model['dtype']} on {model['device']} ({probe['device_name']}, "
                f"{probe['threads']} threads, CPU capability {probe['cpu_capability']}). Source: "
                f"{formats.md_escape(model['source'])}.")
    for note in model["notes"] + res.get("skipped", []):
        st.caption(formats.md_escape(note))
    load = res.get("load") or {}
    if load.get("before"):
        after = f", after {load['after'][0]:.2f} (the run's own threads count in it)" if load.get("after") else ""
        st.caption(f"Load average (1 min) of this machine: {load['before'][0]:.2f} before the run{after}; "
                   f"{load.get('cores')} cores.")
        advice = load_advice(load["before"], load.get("cores"))
        if advice:
            st.warning(advice)
    taken = probe.get("taken_at")
    if taken:
        pl = (f" (load {probe['load_before'][0]:.2f} before it, {probe['load_after'][0]:.2f} after)"
              if probe.get("load_before") and probe.get("load_after") else "")
        cal_at = res.get("calibration", {}).get("taken_at")
        st.caption(f"Probe taken at {time.strftime('%H:%M:%S', time.localtime(taken))}{pl}"
                   + (f", calibration at {time.strftime('%H:%M:%S', time.localtime(cal_at))}" if cal_at else "")
                   + ": both are taken afresh for every run; **Re-probe** measures the machine again now.")
    for note in res.get("bound_notes", []):
        st.warning("The probe under-measured this machine, so the machine roofline takes the best evidence: "
                   + formats.md_escape(note) + ". No measured point lies below the line.")
    for note in res.get("calibration", {}).get("notes", []):
        st.caption("Calibration check: " + formats.md_escape(note))
    n_bad = int(table["unreliable"].sum()) if "unreliable" in table else 0
    st.caption(f"Reported figures: TPOT is the {REPORTED_LABEL['decode']} (a step can be slowed by other work, never "
               f"sped up, so the low end is the undisturbed estimate); TTFT the {REPORTED_LABEL['prefill']}. The table "
               f"keeps the median and the spread (p90/p10). "
               + "Repetitions are interleaved across points, with a reference kernel timed between points; a point "
               "whose samples spread (p90/p10 > " f"{NOISY_SPREAD:g}), whose reference ran slow, or that breaks a physical "
               "check (more work cannot be faster) is measured again. "
               + (f"**{n_bad} point(s) stay unreliable** (hollow markers; the reason is in the table's last column and "
                  "on hover)." if n_bad else "No point stayed disturbed."))
    n_invalid = int((~table["cal_valid"].astype(bool)).sum()) if "cal_valid" in table else 0
    if n_invalid:
        st.warning(f"At {n_invalid} point(s) the calibrated prediction is not valid: it misses the measured point (which "
                   "the calibration never used) by more than 2x, or its matmul term lies outside its physical range (more "
                   "than 10x the machine roofline's plus a launch floor per kernel call) and the measured point does not "
                   "confirm it within 1.5x. Its line is not drawn in those sweeps; on the ratio chart its markers are "
                   "crosses. The reason is in the table's column 'calibration check'.")


def headline_section(res: dict, head: dict) -> None:
    """Four metrics at decode batch 1 (TPOT, achieved bandwidth, against the machine roofline and the calibrated
    prediction), a link to the roofline page with this MBU, and the equations."""
    model = res["model"]
    st.subheader("Headline")
    c = st.columns(4)
    d1 = head["decode_b1"]
    if d1 is not None:
        c[0].metric("TPOT, batch 1", formats.fmt_seconds(d1["reported_s"]),
                    help=f"Measured time per output token at batch 1, context {d1['context_len']}: the "
                         f"{REPORTED_LABEL['decode']} ({d1['n_samples']} steps; median "
                         f"{formats.fmt_seconds(d1['median_s'])}, p90/p10 {d1['spread']:.2f})")
        c[1].metric("Decode bandwidth", f"{head['bandwidth_pct']:.1f} %",
                    help="Achieved bandwidth of decode at batch 1: bytes a decode step must move (calc: weights + KV) "
                         "/ measured TPOT / probed read bandwidth W")
        c[2].metric("vs machine roofline", f"{d1['ratio_machine']:.2f}x",
                    help="Measured / predicted TPOT at batch 1, prediction = this machine's roofline (probed W and P)")
        c[3].metric("vs calibrated", f"{d1['ratio_calibrated']:.2f}x",
                    help="Measured / predicted TPOT at batch 1, prediction = the calibrated one (kernels + KV + overhead)")
        mbu_here = min(100, max(1, round(head["bandwidth_pct"])))
        c[1].page_link("app_pages/roofline.py", label=f"Use {mbu_here}% as MBU", icon=":material/tune:",
                       query_params={"mbu": str(mbu_here)},
                       help="Open the roofline page with this machine's measured decode bandwidth utilisation as the "
                            "MBU of its course estimate (the compute utilisation keeps its value).")
        widgets.show_equations(equations.live_rows(
            d1, machine_step(model["calc_model"], res["machine"], d1, model["dtype"]), res["machine"], model["dtype"],
            res.get("critical_batch")))


def calibrated_parts_section(res: dict, head: dict) -> None:
    """What the calibrated prediction at decode batch 1 is made of: W against the kernels' bandwidth, its parts,
    and every linear layer timed at batch 1, with their CSVs."""
    probe, d1 = res["probe"], head["decode_b1"]
    cal = res["calibration"]
    groups = cal.get("matmul_groups")
    if d1 is not None and groups:
        st.subheader("What the calibrated prediction is made of (decode, batch 1)")
        c = st.columns(3)
        c[0].metric("Read bandwidth (W)", formats.fmt_bytes(probe["read_bytes_per_s"]) + "/s",
                    help="Probed: sum() over a buffer far larger than the caches; the W of the machine roofline")
        c[1].metric("Matmul kernels, B=1", formats.fmt_bytes(cal["kernel_bytes_per_s"]) + "/s",
                    help="Achieved bandwidth of the matmul kernels at batch 1, at this model's own layer shapes and "
                         "dtype: weight bytes of every linear layer / time of F.linear on the model's own weights with one "
                         "input row, called in forward order (median of timed passes); a mixture-of-experts block is timed whole "
                         "(router, the experts its routing touches, shared expert) and counts the bytes one token reads")
        c[2].metric("Decode step", f"{head['bandwidth_pct']:.1f} % of W",
                    help="Achieved bandwidth of the whole decode step at batch 1: bytes it must move (calc) / "
                         "measured TPOT / probed read bandwidth")
        st.markdown(
            "The machine roofline assumes every weight streams at the probed bandwidth W. The matrix-vector kernels a "
            "batch-1 decode step runs, at this model's small layer shapes, stream their weights far more slowly "
            "(middle figure), so the calibrated prediction replaces the weight term by **the measured time of those "
            "kernels on the model's own weights**, adds the KV read at W and the overhead measured on the model itself "
            "with every linear layer returning zeros instead of computing (its KV read is subtracted, so nothing is "
            "counted twice).")
        parts = calibrated_parts_table(d1)
        st.dataframe(parts, hide_index=True, key="lv_parts", column_config={
            "time_s": st.column_config.NumberColumn("time (s)", format="%.5f"),
            "share_pct": st.column_config.NumberColumn("share of the prediction (%)", format="%.1f")})
        downloads.download_csv(parts, "live_calibrated_parts.csv", key="lv_parts_csv")
        st.markdown("The model's linear layers timed one by one at batch 1 (every layer of the model, in forward order):")
        kt = kernel_table(groups, 1)
        st.dataframe(kt, hide_index=True, key="lv_kernels", column_config={
            "weight_bytes": st.column_config.NumberColumn("weights (bytes)", format="%.3e"),
            "time_s": st.column_config.NumberColumn("time at batch 1 (s)", format="%.5f"),
            "bytes_per_s": st.column_config.NumberColumn("achieved bandwidth (B/s)", format="%.3e"),
            "flops_per_s": st.column_config.NumberColumn("FLOP/s", format="%.3e")})
        downloads.download_csv(kt, "live_matmul_kernels.csv", key="lv_kernels_csv")
        st.caption(f"Calibration: {cal['method']}; it took {cal['calibration_s']:.1f} s, taken afresh for this run.")


def probe_expander(res: dict) -> None:
    """This machine as probed: bandwidths, matmul rate, critical batch, threads, calibrated overhead."""
    probe, cal = res["probe"], res["calibration"]
    with st.expander("This machine (probe)", expanded=False):
        c = st.columns(3)
        c[0].metric("Read bandwidth (W)", formats.fmt_bytes(probe["read_bytes_per_s"]) + "/s",
                    help="sum() over a buffer far larger than the caches; the W of this machine's roofline")
        c[1].metric("Copy bandwidth", formats.fmt_bytes(probe["copy_bytes_per_s"]) + "/s", help="bytes read + bytes written")
        c[2].metric("GEMV bandwidth", formats.fmt_bytes(probe["gemv_bytes_per_s"]) + "/s",
                    help=f"F.linear at batch 1 in {probe['dtype']} over the same buffer: "
                         "the kernel a decode step's linear layers run")
        c = st.columns(3)
        c[0].metric(f"Matmul rate (P, {probe['dtype']})",
                    formats.fmt_bytes(probe["matmul_flops_per_s"]).replace("B", "FLOP") + "/s",
                    help=f"{probe['matmul_n']}x{probe['matmul_n']} square matmul")
        c[1].metric("Critical batch", f"{res['critical_batch']:.1f}", help="P x bytes per weight / (2 W)")
        th = res.get("threads") or {}
        c[2].metric("Threads", f"{probe['threads']}", help=(
            f"torch intra-op threads ({th.get('how', 'default')}"
            + ("; median matmul pass at 16 rows: " + ", ".join(f"{n} threads {formats.fmt_seconds(t)}" for n, t in
                                                          sorted(th["candidates_s"].items())) if th.get("candidates_s") else "")
            + f"); CPU capability {probe['cpu_capability']}. When another program holds a core, every kernel split over "
              "all cores waits for the stalled thread, so one thread fewer can be faster"))
        st.caption(f"Buffer {formats.fmt_bytes(probe['buffer_bytes'], 'GiB')}; probe took {probe['probe_s']:.1f} s. "
                   f"Calibrated overhead: c_layer = {formats.fmt_seconds(cal['c_layer_s'])}, c_step = "
                   f"{formats.fmt_seconds(cal['c_step_s'])}, so {formats.fmt_seconds(cal['overhead_s'])} per forward "
                   f"for this depth ({cal['method']}). "
                   + ("Data sheet: " + res["datasheet"].name if res.get("datasheet") else
                      "No data-sheet line: this device is not a GPU in calc's catalogue."))


def measured_against_predicted(res: dict) -> None:
    """A chart per sweep with the three predictions, the ratio chart, and the median ratio per sweep."""
    table = res["table"]
    st.subheader("Measured against predicted")
    c = st.columns(2)
    for i, sweep in enumerate(SWEEPS):
        fig = sweep_figure(res, sweep)
        if fig is not None:
            with c[i % 2]:
                st.markdown(f"**{SWEEPS[sweep][4]}** (bars: p10-p90 of the samples; hollow: unreliable)")
                charts.show_chart(fig, key=f"lv_chart_{sweep}")
    fig = ratio_figure(res)
    if fig is not None:
        st.markdown("**Measured / predicted for every point** (1 = exact; above 1: slower than predicted)")
        charts.show_chart(fig, key="lv_chart_ratio")
    st.markdown("Median measured / predicted per sweep (1.00 = exact):")
    summary = ratio_summary(table).reset_index().rename(columns={"sweep": "sweep"})
    summary["sweep"] = summary["sweep"].map(lambda s: SWEEPS[s][4])
    st.dataframe(summary, hide_index=True, column_config={v: st.column_config.NumberColumn(format="%.2f")
                                                         for v in PREDICTIONS.values()})
    st.caption("The machine roofline is the honest lower bound: a step cannot beat it. Small models in eager "
               "PyTorch miss it for two reasons the calibrated line measures: per-layer work the roofline ignores "
               "(kernel dispatch, norms, activations, attention launches; measured on the model itself with its matmuls "
               "taken out) and, on a CPU above all, matmul kernels that at these layer shapes stream their weights well "
               "below the read bandwidth (timed on the model's own weights). The stubbed model is timed at the sweep's "
               "own batches, contexts and prompts, so per-sequence work that grows with B and with B x S (attention over "
               "the cache beyond its read at W) enters the decode overhead as two fitted terms, and prefill has its own "
               "overhead: per forward, per prompt token and per B x T² (attention beyond its FLOPs at P).")


def points_table(table: pd.DataFrame) -> None:
    """Every measured point with its predictions, ratios and checks (seconds), and its CSV."""
    st.subheader("Every point")
    #: Points table headers; times stay in seconds (tests and the CSV read the same frame).
    POINT_S = {"median_s": "median (s)", "p10_s": "p10 (s)", "p90_s": "p90 (s)", "min_s": "min (s)",
                "max_s": "max (s)", "reported_s": "reported (s)", "pred_datasheet_s": "datasheet roofline (s)",
                "pred_machine_s": "machine roofline (s)", "pred_calibrated_s": "calibrated (s)",
                "cal_matmul_s": "cal.: matmuls (s)", "cal_kv_s": "cal.: KV read (s)",
                "cal_attention_s": "cal.: attention (s)", "cal_overhead_s": "cal.: overhead (s)"}
    POINT_OTHER = {
        "sweep": st.column_config.TextColumn("sweep"), "phase": st.column_config.TextColumn("phase"),
        "batch": columns.column("batch"),
        "seq_len": st.column_config.NumberColumn("tokens S or T", format="localized"),
        "context_len": columns.column("context_len"),
        "kv_measured_bytes": st.column_config.NumberColumn("KV measured (B)", format="localized"),
        "kv_calc_bytes": st.column_config.NumberColumn("KV calc (B)", format="localized"),
        "n_samples": st.column_config.NumberColumn("samples"), "wall_s": st.column_config.NumberColumn("wall (s)", format="%.2f"),
        "spread": st.column_config.NumberColumn("p90/p10", format="%.2f"), "unreliable": "unreliable",
        "runs": st.column_config.NumberColumn("timed runs"), "remeasured": st.column_config.NumberColumn("re-measured"),
        "ref_drift": st.column_config.NumberColumn("reference drift (x)", format="%.2f"),
        "cal_valid": "calibration valid", "cal_check": st.column_config.TextColumn("calibration check"),
        "cal_physical": "kernel term in its physical range", "cal_confirmed": "confirmed by this point (1.5x)",
        "reasons": st.column_config.TextColumn("why unreliable"),
        "ratio_datasheet": st.column_config.NumberColumn("measured/datasheet", format="%.2f"),
        "ratio_machine": st.column_config.NumberColumn("measured/machine", format="%.2f"),
        "ratio_calibrated": st.column_config.NumberColumn("measured/calibrated", format="%.2f"),
        "bytes_moved": st.column_config.NumberColumn("bytes moved (B)", format="localized"),
        "roofline_bound": "roofline bound",
        "achieved_bandwidth_pct": st.column_config.NumberColumn("achieved bandwidth (%)", format="%.1f"),
        "tokens_per_s": columns.column("tokens_per_s")}
    st.dataframe(table, hide_index=True, key="lv_table", column_config={
        c: cfg for c, cfg in ({c: st.column_config.NumberColumn(label, format="%.5f") for c, label in POINT_S.items()}
                              | POINT_OTHER).items() if c in table.columns})
    downloads.download_csv(table, "live_measurement.csv", key="lv_csv")


def kv_check_section(res: dict) -> None:
    """The KV cache measured from the cache tensors against calc's count, per point."""
    st.subheader("KV cache: measured from the cache tensors against calc")
    kv = pd.DataFrame(res["kv_check"])
    st.dataframe(kv, hide_index=True, key="lv_kv", column_config={
        c: st.column_config.NumberColumn(label, format="localized") for c, label in (
            ("batch", columns.label("batch")), ("tokens", "tokens"), ("measured_bytes", "measured (B)"), ("calc_bytes", "calc (B)"),
            ("difference_bytes", "difference (B)"))})
    downloads.download_csv(kv, "live_kv_check.csv", key="lv_kv_csv")
    st.caption("Prefill points: the DynamicCache after the prompt, sum of keys + values bytes over layers. Decode "
               "points: the StaticCache allocated for context + timed steps. calc: kv_cache_bytes(model, tokens, "
               "batch, kv_dtype).")


def generated_text(res: dict) -> None:
    """The text (or token ids) the model generated, with why it reads as it does."""
    st.subheader("Generated text")
    text = res.get("text")
    if text:
        st.caption(text["why"][:1].upper() + text["why"][1:] + ". " + (text["tokenizer_note"] or "").capitalize())
        if text["text"] is not None:
            st.code(f"{text['prompt']} ⟶ {text['text']}", language=None, wrap_lines=True)
        else:
            st.code(f"prompt ids {text['prompt_ids']} ⟶ output ids {text['output_ids']}", language=None, wrap_lines=True)
