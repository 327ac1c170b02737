"""Against published measurements: the serving model's estimate and the roofline bound beside what engines
measured (the shipped data set, a user's CSV or InferenceX results)."""
import streamlit as st

from calc import comparison, measurements
from ui import caching, charts, downloads, formats, measured_views, serving_views, widgets

st.title("Against published measurements")
st.markdown(
    "Published benchmarks of vLLM, SGLang and TensorRT-LLM (each row with its source), the **serving estimate** "
    "for the same configuration with its range, and the **roofline bound**. On InferenceX's axes, throughput "
    "per GPU against tokens per second per user: the bound is an upper limit no engine passes; the estimate "
    "is what the serving model expects an engine to measure.")


def frontier_chart(config, rows, table, frontier, stand_in: bool) -> None:
    """The configuration's measured runs over the serving estimate's frontier (InferenceX's axes), with its caption."""
    serving_views.show_notices(frontier.attrs.get("notices"))
    points = comparison.measured_points(rows)
    at_rate = comparison.rate_points(rows)
    alone = measured_views.throughput_only_points(rows[~comparison.row_concurrency(rows).isin(points["concurrency"])],
                                                  frontier, int(config["n_gpus"]))
    no_point = comparison.no_point_sentence(rows, estimated=bool(table["predicted"].notna().any()))
    if no_point:  # rows of TTFT or TPOT alone: nothing on these axes; the table below still has every row
        st.info(no_point)
    # the names its rows were published under, and whose architecture computes them
    model = measured_views.model_labels(rows, architecture=True).get(config["model"], config["model"])
    st.markdown(measured_views.heading(f"{formats.md_escape(model)} on "
                                       f"{formats.md_escape(config['accelerator'])}, "
                                       f"{measurements.engine_name(config['engine'])}: throughput per GPU against "
                                       "tokens/s per user", stand_in))
    unmodelled = measured_views.no_estimate_sentence(table)
    if unmodelled:  # e.g. every run ran without CUDA graphs: the curve is not what these runs measured
        st.warning(unmodelled)
    charts.show_chart(measured_views.frontier_figure(frontier, points, alone, at_rate), key="ms_frontier")
    st.caption(f"{len(points)} measured run(s) at a concurrency with both axes"
               + (f", {len(at_rate)} at a request rate (squares: a run's throughput and 1000 / its TPOT; the curve "
                  "is over concurrency, and a rate's run sits where its decode batch puts it)" if len(at_rate) else "")
               + f"; {len(alone)} throughput-only run(s) drawn at the "
               "estimate's tokens/s per user for their concurrency (an offline run at the N requests it states it sent at "
               "once, one of unstated size at the largest batch). Band: the "
               "estimate's range (cross-validated errors). "
               + serving_views.bound_and_estimate("throughput", frontier.attrs.get("notices")) + ". The curve is "
               f"for {serving_views.current_release(config['engine'])}; each row's estimate in the table below is for the release "
               "that row ran (its date sets how close to the roofline the engine decodes).")


@widgets.fragment
def explore() -> None:
    """Data, selection, charts and table. A fragment: its controls rerun this part only."""
    measured_views.follow_linked_source("ms")  # a link to a held-out row alone opens the held-out rows
    choice = widgets.linked_radio(st, "Measurements", measured_views.SOURCES, "ms_source", horizontal=True)
    df, stand_in = measured_views.load_data(choice)  # stand_in: the data set, the file's choices kept
    if df.empty:
        st.warning("No measurement rows to compare.")
        return
    if not stand_in:  # a link to a row opens on its model, accelerator and engine
        measured_views.follow_linked_choice(df, "ms")
    d = measured_views.selection(df, "ms", stand_in, choice)
    configs = comparison.configurations(d)
    labels = measured_views.config_labels(configs)
    measured_views.follow_linked_row(d, configs, labels, "ms")  # a link to a row opens on that row's configuration
    # a configuration chosen in a file comes back by its setup, whatever its row count in the file loaded next
    pick = widgets.linked_selectbox(st, "Configuration (layout, dtypes, lengths)", labels, "ms_config", stand_in,
                                    same=measured_views.config_setup)
    config = configs.iloc[labels.index(pick) if pick in labels else 0]
    rows = measured_views.config_rows(d, config)
    try:
        table = caching.cached_call(comparison.compare_rows, rows)
    except ValueError as exc:
        widgets.show_error(exc)
        return
    try:
        frontier = caching.cached_call(comparison.config_frontier, config.to_dict(),
                                       up_to=caching.cached_call(comparison.frontier_span_per_replica, rows))
    except ValueError as exc:  # a layout or model the serving model refuses: its rows are still listed below
        st.error(measured_views.no_frontier_words(exc))
        frontier = None
    if frontier is not None:
        frontier_chart(config, rows, table, frontier, stand_in)
    st.markdown(measured_views.heading("Every row: measured, serving estimate, bound", stand_in))
    beyond = measured_views.beyond_bound_sentence(table)
    if beyond:  # a measurement no engine can make: a misread row (an upload's layout, dtype or unit)
        st.warning(beyond)
    charts.show_chart(measured_views.parity_figure(table), key="ms_parity")
    measured_views.show_table(table, measured_views.sources_table(), config["model"])
    measured_views.row_breakdown(rows, table, "ms", stand_in)
    downloads.download_csv(table, "measured_vs_predicted.csv", key="ms_csv",
                           inputs={**{k: config[k] for k in comparison.CONFIG_COLUMNS},
                                   **measured_views.upload_inputs(
                                       choice, st.session_state.get("ms_up_csv" if choice == measured_views.SOURCES[1]
                                                                    else "ms_up_json"),
                                       st.session_state.get("ms_run_date"), stand_in)}, sidebar=False)


explore()
