"""The model as each measurement row's source published it (calc.measurements.PUBLISHED_MODEL), kept beside the preset
calc computes the row with: in the loaded frames, in an upload's and an InferenceX file's rows, in the measured page's
model box, table and CSV download. The expected values are read from the CSV files with the csv module, not through
calc."""
import csv
import io
from pathlib import Path

import pandas as pd

from calc import comparison, get_model, inferencex, measurements
from calc.serving_fit import HOLDOUT_PATH, prepare_rows, predict_rows
from calc.serving_params import load_serving_params, param_values
from pagetest import open_page, shown_tables, tables
from ui import measured_views
from ui.downloads import csv_with_inputs

DATA = Path(__file__).resolve().parent / "data"
PUBLISHED = measurements.PUBLISHED_MODEL
HELD_OUT = measured_views.SOURCES[3]


def _raw(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _glm46_rows() -> list[dict]:
    return [r for r in _raw(HOLDOUT_PATH) if r["model"].strip() == "glm-4.6"]


def test_every_loaded_row_keeps_the_model_cell_as_its_file_wrote_it():
    raw = {r["id"]: r["model"].strip() for r in _raw(HOLDOUT_PATH)}
    held = measurements.load_measurements(HOLDOUT_PATH)
    assert list(held.columns) == list(measurements.COLUMNS) + [PUBLISHED]
    assert dict(zip(held["id"], held[PUBLISHED])) == raw
    glm46 = _glm46_rows()
    assert len(glm46) > 200                                   # GPUStack's GLM-4.6 pages (241 rows when written)
    mine = held[held[PUBLISHED] == "glm-4.6"]
    assert set(mine["id"]) == {r["id"] for r in glm46} and set(mine["model"]) == {"glm-4.7"}
    # the data set's file writes its presets' ids, or the checkpoint where its source measured another model of a
    # preset's architecture (calc.measurements.model_cell): published as its model cell, row by row
    raw_shipped = {r["id"]: r for r in _raw(measurements.MEASUREMENTS_PATH)}
    shipped = measurements.load_measurements()
    assert dict(zip(shipped["id"], shipped[PUBLISHED])) == {i: r["model"] for i, r in raw_shipped.items()}
    other = shipped[shipped[PUBLISHED] != shipped["model"]]
    # each such cell is a checkpoint its row's notes name (InferenceMAX's DeepSeek-R1-0528 runs: "checkpoint
    # deepseek-ai/DeepSeek-R1-0528"), and the rows of the preset's own checkpoints keep the preset's id
    assert len(other) > 500 and all(p in raw_shipped[i]["notes"] for i, p in zip(other["id"], other[PUBLISHED]))
    imax = shipped[(shipped["source_id"] == "inferencemax-official-2025") & (shipped["model"] == "deepseek-v3")]
    assert len(imax) and set(imax[PUBLISHED]) == {"deepseek-ai/DeepSeek-R1-0528", "nvidia/DeepSeek-R1-0528-FP4-V2",
                                                  "amd/DeepSeek-R1-0528-MXFP4-Preview"}
    oss = shipped[(shipped["source_id"] == "inferencemax-official-2025") & (shipped["model"] == "gpt-oss-120b")]
    assert len(oss) and set(oss[PUBLISHED]) == {"gpt-oss-120b"}     # notes: "checkpoint openai/gpt-oss-120b"


def test_published_models_counts_the_rows_of_each_name_a_preset_stands_for():
    raw = _raw(HOLDOUT_PATH)
    table = measurements.published_models(measurements.load_measurements(HOLDOUT_PATH))
    other = table[~table["own"]]
    # the names that are not a preset's id: GLM-4.6 (GPUStack's pages) and the checkpoints of other models of a
    # preset's architecture the sources served (DeepSeek-R1, Kimi-K2.5, ...), each with its rows counted
    ids = set(calc_ids := measurements.list_models())
    preset_of = dict(zip(*[measurements.load_measurements(HOLDOUT_PATH)[c] for c in ("id", "model")]))
    names = {}
    for r in raw:
        if r["model"] not in ids:
            names.setdefault((preset_of[r["id"]], r["model"]), 0)
            names[(preset_of[r["id"]], r["model"])] += 1
    assert dict(zip(zip(other["model"], other[PUBLISHED]), other["rows"])) == names
    n = len(_glm46_rows())
    assert names[("glm-4.7", "glm-4.6")] == n and ("kimi-k2", "moonshotai/Kimi-K2.5") in names
    assert ("deepseek-v3", "deepseek-ai/DeepSeek-R1") in names and calc_ids
    # every other name of the file is its preset's own id, with its rows counted
    own = table[table["own"]]
    assert dict(zip(own["model"], own["rows"])) == {m: sum(r["model"] == m for r in raw)
                                                    for m in {r["model"] for r in raw} if m in ids}
    assert measurements.is_preset_name("deepseek-ai/DeepSeek-V3", "deepseek-v3")
    assert measurements.is_preset_name(" GLM-4.7 ", "glm-4.7")
    assert not measurements.is_preset_name("zai-org/GLM-4.6-FP8", "glm-4.7")
    assert not measurements.is_preset_name("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b")


def test_an_uploaded_csv_naming_a_checkpoint_keeps_it_as_published():
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value\n"
            "zai-org/GLM-4.6-FP8,h200,8,vllm,fp8,1000,200,8,tpot_ms,30\n"
            "meta-llama/Llama-3.1-8B-Instruct,h100-sxm,1,vllm,bf16,1000,200,8,tpot_ms,9.5\n"
            " llama-3.1-8b ,h100-sxm,1,vllm,bf16,1000,200,16,tpot_ms,11\n")
    df = measurements.measurements_from_text(text, "mine.csv")
    assert df["model"].tolist() == ["glm-4.7", "llama-3.1-8b", "llama-3.1-8b"]
    assert df[PUBLISHED].tolist() == ["zai-org/GLM-4.6-FP8", "meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"]
    table = measurements.published_models(df)
    assert table[["model", PUBLISHED, "rows", "model_rows", "own"]].values.tolist() == [
        ["glm-4.7", "zai-org/GLM-4.6-FP8", 1, 1, False],
        ["llama-3.1-8b", "llama-3.1-8b", 1, 2, True],
        ["llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", 1, 2, False]]
    labels = measured_views.model_labels(df)
    assert labels["llama-3.1-8b"] == "llama-3.1-8b (1 of 2 rows published as meta-llama/Llama-3.1-8B-Instruct)"
    assert measured_views.model_labels(df, architecture=True)["glm-4.7"] == (
        f"glm-4.7 (rows published as zai-org/GLM-4.6-FP8, computed with {get_model('glm-4.7').name}'s architecture)")


def test_inferencex_rows_keep_the_results_own_model_name():
    import json
    objs = json.loads((DATA / "inferencex_sample.json").read_text())
    df, _ = inferencex.parse_inferencex((DATA / "inferencex_sample.json").read_bytes(), "inferencex_sample.json")
    assert set(df[PUBLISHED]) <= {o["model"] for o in objs}
    r1 = df[df[PUBLISHED].str.contains("DeepSeek-R1")]
    assert len(r1) and set(r1["model"]) == {"deepseek-v3"}


def test_the_fit_reads_the_same_with_or_without_the_published_model():
    # calc.serving_fit reads named columns: the held-out GLM-4.6 rows predict the same whether or not the frame has
    # the column, and the comparison's table carries it row by row
    held = measurements.load_measurements(HOLDOUT_PATH)
    glm = held[held[PUBLISHED] == "glm-4.6"].reset_index(drop=True)
    prm = load_serving_params()
    rows, comps, skipped = prepare_rows(glm, prm, include_speculative=True, include_tails=True)
    bare, bare_comps, bare_skipped = prepare_rows(glm.drop(columns=PUBLISHED), prm, include_speculative=True,
                                                  include_tails=True)
    assert len(rows) and skipped == bare_skipped
    assert list(predict_rows(rows, comps, param_values(prm))) == list(predict_rows(bare, bare_comps,
                                                                                  param_values(prm)))
    assert set(comparison.compare_rows(glm.head(6))[PUBLISHED]) == {"glm-4.6"}


def test_the_measured_page_names_glm_46_where_its_rows_show_under_glm_47():
    at = open_page("app_pages/measured.py", ms_source=HELD_OUT, ms_model="glm-4.7")   # a link as written before
    box = at.selectbox(key="ms_model")
    assert box.value == "glm-4.7"
    label = "glm-4.7 (rows published as glm-4.6)"
    assert label in box.options
    # the models of the file whose rows all give their own ids are labelled by their ids; the others name what
    # their rows were published as (Kimi-K2's: "kimi-k2 (191 of 230 rows published as moonshotai/Kimi-K2.5, ...")
    raw = _raw(HOLDOUT_PATH)
    ids = set(measurements.list_models())
    preset_of = dict(zip(*[measurements.load_measurements(HOLDOUT_PATH)[c] for c in ("id", "model")]))
    renamed = {preset_of[r["id"]] for r in raw if r["model"] not in ids}
    assert {o for o in box.options if " (" not in o} == {r["model"] for r in raw if r["model"] in ids} - renamed
    assert {measured_views.model_of_label(o) for o in box.options if " (" in o} == renamed
    arch = f"computed with {get_model('glm-4.7').name}'s architecture"
    assert any(c.value.startswith(f"**glm-4.7** here: rows published as glm-4.6, {arch}") for c in at.caption)
    heading = f"glm-4.7 \\(rows published as glm-4.6, {arch}\\) on "     # the chart's heading, markdown escaped
    assert any(heading in m.value for m in at.markdown)
    linked = at.query_params["ms_model"]  # the link the page writes names the model's label, which reads back
    assert measured_views.model_of_label(linked[-1] if isinstance(linked, list) else linked) == "glm-4.7"
    # the table: every row of the configuration shown, each named glm-4.6, as many as the file has of it
    table = next(t for t in tables(at) if "predicted" in t.columns)
    shown = next(t for t in shown_tables(at) if "model as published" in t[0])
    column = shown[0].index("model as published")
    assert [r[column] for r in shown[1:]] == ["glm-4.6"] * len(table) and len(table)
    glm46 = _glm46_rows()
    first = next(r for r in glm46 if r["id"] == table["id"].iloc[0])
    setup = ("accelerator", "engine", "tp", "pp", "ep", "dp", "n_gpus", "weight_dtype", "kv_dtype", "input_len",
             "output_len")
    same = [r["id"] for r in glm46 if all(r[c] == first[c] for c in setup)]
    assert sorted(table["id"]) == sorted(same)
    # the CSV download writes this table: the column comes with it
    back = pd.read_csv(io.StringIO(csv_with_inputs(table, {})), comment="#")
    assert back[PUBLISHED].tolist() == ["glm-4.6"] * len(table)


def test_a_link_by_a_label_written_for_other_rows_opens_the_model():
    for linked in ("glm-4.7 (rows published as GLM-4.6)", "GLM-4.6", "zai-org/GLM-4.6-FP8"):  # or by the name published
        at = open_page("app_pages/measured.py", ms_source=HELD_OUT, ms_model=linked)
        assert at.selectbox(key="ms_model").value == "glm-4.7", linked
        assert not [w for w in at.warning if "were ignored" in w.value], linked
    assert measured_views.model_of_label("not-a-model (x)") == "not-a-model"
    # a link to one GLM-4.6 row opens the held-out rows on glm-4.7 and that row
    row = next(r["id"] for r in _glm46_rows() if r["metric"] == "tpot_ms" and r["statistic"] == "mean")
    at = open_page("app_pages/measured.py", ms_row=row)
    assert (at.radio(key="ms_source").value, at.selectbox(key="ms_model").value) == (HELD_OUT, "glm-4.7")
    assert measured_views.row_id_of(at.selectbox(key="ms_row").value) == row


def test_a_link_naming_a_held_out_model_opens_the_held_out_rows():
    # glm-4.7's rows are all held out (GPUStack's GLM-4.6 pages): a link naming it with no source opened the data
    # set, dropped the model and warned "not one of its 16 options"; it now opens the held-out rows on glm-4.7
    shipped = measurements.load_measurements()
    assert "glm-4.7" not in set(shipped["model"])
    for linked in ({"ms_model": "glm-4.7"}, {"ms_model": "GLM-4.6", "ms_engine": "vLLM"}):
        at = open_page("app_pages/measured.py", **linked)
        assert not at.exception and at.radio(key="ms_source").value == HELD_OUT, linked
        assert at.selectbox(key="ms_model").value == "glm-4.7", linked
        assert not [w for w in at.warning if "were ignored" in w.value], linked
    # a model of the data set stays on the data set; one neither has gets the notice on the data set
    at = open_page("app_pages/measured.py", ms_model="llama-3.1-8b")
    assert at.radio(key="ms_source").value == measured_views.SOURCES[0]
    from streamlit.testing.v1 import AppTest
    import pagetest
    at = AppTest.from_file(str(pagetest.APP), default_timeout=60)
    at.query_params["ms_model"] = "no-such-model"
    at.switch_page("app_pages/measured.py").run()  # the page as the link opens it
    assert not at.exception and at.radio(key="ms_source").value == measured_views.SOURCES[0]
    assert any("ms_model=no-such-model" in w.value for w in at.warning if "were ignored" in w.value)
    # a model the data set has, on an accelerator only the held-out rows have it on (Kimi-K2 on H800, vLLM's
    # recipe): the link's accelerator decides
    held = measured_views.held_out()
    assert "h800" not in set(shipped.loc[shipped["model"] == "kimi-k2", "accelerator"])
    assert "h800" in set(held.loc[held["model"] == "kimi-k2", "accelerator"])
    at = open_page("app_pages/measured.py", ms_model="kimi-k2", ms_acc="h800")
    assert at.radio(key="ms_source").value == HELD_OUT
    assert (at.selectbox(key="ms_model").value, at.selectbox(key="ms_acc").value) == ("kimi-k2", "h800")
    at = open_page("app_pages/measured.py", ms_model="kimi-k2")
    assert at.radio(key="ms_source").value == measured_views.SOURCES[0]


def test_switching_the_source_keeps_the_model_or_says_which_one_is_shown():
    # a link opens the held-out rows on glm-4.7, which the data set lacks; the user picks GLM on H200 with SGLang
    shipped, held = measured_views.shipped(), measured_views.held_out()
    assert "glm-4.7" not in set(shipped["model"])
    at = open_page("app_pages/measured.py", ms_model="glm-4.7")
    assert at.radio(key="ms_source").value == HELD_OUT
    at.selectbox(key="ms_acc").set_value("h200").run()
    at.selectbox(key="ms_engine").set_value("sglang").run()
    configs = at.selectbox(key="ms_config").options
    assert len(configs) > 1
    at.selectbox(key="ms_config").set_value(configs[1]).run()
    # back to the data set: its first model is shown, and the page says which model was not there and which is shown
    at.radio(key="ms_source").set_value(measured_views.SOURCES[0]).run()
    first = sorted(shipped["model"].unique())[0]
    assert not at.exception and at.selectbox(key="ms_model").value == first
    [said] = [i.value for i in at.info if "glm-4.7" in i.value]
    assert said.startswith(f"**glm-4.7** is not in **The data set**, so **{first}** is shown instead.")
    assert "Held-out rows" in said
    # the held-out rows again: the model chosen there comes back with its accelerator, engine and configuration
    at.radio(key="ms_source").set_value(HELD_OUT).run()
    assert [at.selectbox(key=k).value for k in ("ms_model", "ms_acc", "ms_engine", "ms_config")] == [
        "glm-4.7", "h200", "sglang", configs[1]]
    assert not [i for i in at.info if "is not in" in i.value]
    # a model both sources have stays, with its accelerator where the data set has it (Kimi-K2 on H200), no note
    assert {"h200"} <= set(held.loc[held["model"] == "kimi-k2", "accelerator"]) \
        & set(shipped.loc[shipped["model"] == "kimi-k2", "accelerator"])
    at.selectbox(key="ms_model").set_value("kimi-k2").run()
    at.selectbox(key="ms_acc").set_value("h200").run()
    at.radio(key="ms_source").set_value(measured_views.SOURCES[0]).run()
    assert (at.selectbox(key="ms_model").value, at.selectbox(key="ms_acc").value) == ("kimi-k2", "h200")
    assert not [i for i in at.info if "is not in" in i.value]


def test_a_model_chosen_after_the_note_is_the_one_kept():
    # glm-4.7 falls out on the data set; the user then picks Llama-3.1-70B there, which the held-out rows have too:
    # going back keeps the user's latest model, not the one the note named
    at = open_page("app_pages/measured.py", ms_model="glm-4.7")
    at.radio(key="ms_source").set_value(measured_views.SOURCES[0]).run()
    assert [i for i in at.info if "glm-4.7" in i.value]
    at.selectbox(key="ms_model").set_value("llama-3.1-70b").run()
    assert not [i for i in at.info if "is not in" in i.value]
    at.radio(key="ms_source").set_value(HELD_OUT).run()
    assert not at.exception and at.selectbox(key="ms_model").value == "llama-3.1-70b"
    assert not [i for i in at.info if "is not in" in i.value]


def test_the_data_set_shows_no_published_column_where_every_row_gives_its_preset():
    at = open_page("app_pages/measured.py", ms_model="llama-3.1-8b")
    box = at.selectbox(key="ms_model")
    assert box.value == "llama-3.1-8b" and "llama-3.1-8b" in box.options
    assert not any(c.value.startswith("**llama-3.1-8b** here") for c in at.caption)
    header = next(t for t in shown_tables(at) if "measured" in t[0])[0]
    assert "model as published" not in header


def test_the_data_set_names_deepseek_r1_where_its_runs_show_under_deepseek_v3():
    # InferenceMAX's and others' DeepSeek-R1 runs are computed with DeepSeek-V3's architecture: the box and the caption
    # say how many of the preset's rows were published as which checkpoint, counted from the file itself
    raw = _raw(measurements.MEASUREMENTS_PATH)
    r1 = [r for r in raw if "deepseek-r1" in r["model"].lower()]
    total = len(r1) + sum(r["model"] == "deepseek-v3" for r in raw)
    at = open_page("app_pages/measured.py", ms_model="deepseek-v3")
    box = at.selectbox(key="ms_model")
    assert box.value == "deepseek-v3"
    label = next(o for o in box.options if o.startswith("deepseek-v3 ("))
    assert label.startswith(f"deepseek-v3 ({len(r1):,} of {total:,} rows published as ")
    assert any(c.value.startswith(f"**deepseek-v3** here: {len(r1):,} of {total:,} rows published as ")
               for c in at.caption)


def test_an_uploaded_checkpoint_id_shows_in_the_box_and_the_table():
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value\n"
            "zai-org/GLM-4.6-FP8,h200,8,vllm,fp8,1000,200,8,tpot_ms,30\n"
            "zai-org/GLM-4.6-FP8,h200,8,vllm,fp8,1000,200,8,ttft_ms,400\n")
    at = open_page("app_pages/measured.py", ms_source=measured_views.SOURCES[1])
    at.get("file_uploader")[0].set_value(("mine.csv", text.encode(), "text/csv")).run()
    assert not at.exception and not at.error
    box = at.selectbox(key="ms_model")
    assert box.value == "glm-4.7" and box.options == ["glm-4.7 (rows published as zai-org/GLM-4.6-FP8)"]
    shown = next(t for t in shown_tables(at) if "model as published" in t[0])
    column = shown[0].index("model as published")
    assert [r[column] for r in shown[1:]] == ["zai-org/GLM-4.6-FP8"] * 2


def test_a_checkpoint_names_another_model_only_where_its_name_says_so():
    # another model of a preset's architecture: an alias without same_model (DeepSeek-R1 of DeepSeek-V3's shapes,
    # Llama-3.3 of Llama-3.1-70B's, GLM-5.1 of GLM-5's), a version continuing the name (Kimi-K2.5), a release date
    # (Qwen3-235B-A22B-Instruct-2507) or a release word (Kimi-K2-Thinking, DeepSeek-V3.2-Exp)
    from calc.models import names_another_model
    for name in ("deepseek-ai/DeepSeek-R1-0528", "nvidia/DeepSeek-R1-0528-FP4-V2", "amd/DeepSeek-R1-0528-MXFP4-Preview",
                 "moonshotai/Kimi-K2.5", "moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2-Instruct-0905",
                 "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "amd/Llama-3.3-70B-Instruct-FP8-KV",
                 "deepseek-ai/DeepSeek-V3.2-Exp", "zai-org/GLM-5.1-FP8", "MiniMaxAI/MiniMax-M2.7", "glm-4.6"):
        assert names_another_model(name), name
    # the preset's own weights under a tag, an earlier spelling or an organisation prefix; a name no preset matches
    for name in ("Qwen/Qwen3-8B-FP8", "moonshotai/Kimi-K2-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1",
                 "meta-llama/Meta-Llama-3.1-8B-Instruct", "neuralmagic/Meta-Llama-3.1-8B-FP8",
                 "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
                 "deepseek-ai/DeepSeek-V3", "zai-org/GLM-5-FP8", "openai/gpt-oss-120b", "llama-3.1-8b", "gpt2-xl",
                 "qwen2.5-7b-instruct-1m", ""):
        assert not names_another_model(name), name


def test_a_converter_writes_the_checkpoint_of_another_model_and_the_id_of_the_presets_own():
    assert measurements.model_cell("deepseek-v3", "deepseek-ai/DeepSeek-R1-0528") == "deepseek-ai/DeepSeek-R1-0528"
    assert measurements.model_cell("gpt-oss-120b", "openai/gpt-oss-120b") == "gpt-oss-120b"
    assert measurements.model_cell("qwen3-8b", " Qwen/Qwen3-8B-FP8 ") == "qwen3-8b"
    # a checkpoint that resolves to another preset than the row's is not written in its place; nor is an empty name
    assert measurements.model_cell("llama-3.1-8b", "deepseek-ai/DeepSeek-R1") == "llama-3.1-8b"
    assert measurements.model_cell("kimi-k2", "") == "kimi-k2"
    # the cell written reads back as the preset, the published name kept beside it
    text = ("model,accelerator,n_gpus,engine,weight_dtype,isl,osl,conc,metric,value\n"
            f"{measurements.model_cell('kimi-k2', 'moonshotai/Kimi-K2.5')},h200,8,sglang,int4-g32-sym,1000,200,1,"
            "tpot_ms,12\n")
    df = measurements.measurements_from_text(text, "mine.csv")
    assert (df["model"].iloc[0], df[PUBLISHED].iloc[0]) == ("kimi-k2", "moonshotai/Kimi-K2.5")
