"""The weight format a page opens in for a link naming a quantized checkpoint (?model=zai-org/GLM-4.6-FP8 -> fp8,
ui/sidebar.py's weights_from_checkpoint_name over calc.checkpoint_format.checkpoint_name_format), the link's own wq
and a later choice winning over it, as AppTest runs the app."""
import pytest

import calc
from calc.checkpoint_format import checkpoint_name_format
from ui import formats


@pytest.mark.parametrize("name", ["zai-org/GLM-4.6-FP8", "nvidia/GLM-4.7-NVFP4", "MiniMaxAI/MiniMax-M3-MXFP8",
                                  "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "RedHatAI/Qwen3-8B-FP8-block"])
def test_every_format_a_name_gives_is_offered_by_the_weights_box(name):
    from ui.sidebar import WEIGHT_DTYPES
    assert checkpoint_name_format(name)[0] in WEIGHT_DTYPES


def _open(page="app_pages/kv_cache.py", **query):
    """A fresh session opened on ``page`` with ``query`` as its link, as a browser opens a deep link."""
    import pagetest
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(pagetest.APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _weights_metric(preset: str, weight_dtype: str) -> str:
    """The KV page's "Weights" figure for ``preset`` in ``weight_dtype`` (the page shows calc's memory budget's)."""
    budget = calc.memory_budget(calc.get_model(preset), calc.get_accelerator("h100-sxm"), 8192,
                                weight_dtype=weight_dtype)
    return formats.fmt_bytes(budget.weights_bytes)


def _notes(at) -> str:
    return " ".join([str(i.value) for i in at.sidebar.info] + [str(c.value) for c in at.sidebar.caption])


@pytest.mark.parametrize("linked, preset, fmt", [
    ("zai-org/GLM-4.6-FP8", "glm-4.7", "fp8"),
    ("nvidia/GLM-4.7-NVFP4", "glm-4.7", "nvfp4"),
    ("zai-org/GLM-4.5-Air-FP8", "glm-4.5-air", "fp8"),
    ("nvidia/DeepSeek-R1-FP4", "deepseek-v3", "nvfp4"),  # over the preset's own published format (fp8-block)
])
def test_a_link_naming_a_quantized_checkpoint_opens_in_its_format(linked, preset, fmt):
    at = _open(model=linked)
    sel = at.session_state["_selection"]
    assert (sel.model_id, sel.weight_dtype) == (preset, fmt)
    assert at.sidebar.selectbox(key="wq").value == fmt
    assert pagetest_metric(at, "Weights") == _weights_metric(preset, fmt) != _weights_metric(preset, "bf16")
    # the sidebar says where the format came from, in the link's note and under the weights box
    assert f"Weights set to {fmt}, read from the checkpoint's name {linked}" in _notes(at), _notes(at)
    assert f"read from the checkpoint's name {linked})." in _notes(at), _notes(at)
    # the link now names the preset and the format, so that it reopens on them; no link notice calls them ignored
    assert at.query_params["model"] == preset and at.query_params["wq"] == fmt
    assert not any("ignored" in str(w.value) for w in at.warning)
    # every page follows the sidebar
    at.switch_page("app_pages/roofline.py").run()
    assert not at.exception and at.session_state["_selection"].weight_dtype == fmt


def pagetest_metric(at, label):
    import pagetest
    return pagetest.metric(at, label)


def test_the_glm_fp8_link_halves_the_bf16_weights():
    # GLM-4.7's 705.60 GB in bf16 (the page opened on the preset) against 352.80 GB in fp8 (calc's plain fp8 counts
    # one byte per parameter, no scales)
    assert pagetest_metric(_open(model="glm-4.7"), "Weights") == "705.60 GB"
    assert pagetest_metric(_open(model="zai-org/GLM-4.6-FP8"), "Weights") == "352.80 GB"


@pytest.mark.parametrize("query", [{"model": "glm-4.7"}, {"model": "zai-org/GLM-4.6"}, {"model": "GLM-4.7"}])
def test_a_preset_id_or_an_untagged_checkpoint_keeps_the_presets_format(query):
    at = _open(**query)
    assert at.session_state["_selection"].weight_dtype == "bf16"
    assert "read from the checkpoint's name" not in _notes(at)


def test_the_links_own_weight_format_wins_over_the_name():
    at = _open(model="zai-org/GLM-4.6-FP8", wq="int8")
    assert at.session_state["_selection"].weight_dtype == "int8"
    assert "Its name says fp8; the weights stay as the link sets them." in _notes(at)
    at = _open(model="zai-org/GLM-4.6-FP8", wq="bf16")  # even where it is the preset's own
    assert at.session_state["_selection"].weight_dtype == "bf16"


def test_a_tag_that_fixes_no_format_leaves_the_weights_and_says_so():
    at = _open(model="meta-llama/Llama-3.1-8B-Instruct-INT4")
    assert at.session_state["_selection"].model_id == "llama-3.1-8b"
    assert at.session_state["_selection"].weight_dtype == "bf16"
    assert "INT4 without its group size" in _notes(at) and "the weights stay as they are" in _notes(at)


def test_a_later_choice_wins_and_the_caption_says_so():
    at = _open(model="zai-org/GLM-4.6-FP8")
    at.sidebar.selectbox(key="wq").set_value("bf16").run()
    assert at.session_state["_selection"].weight_dtype == "bf16"
    assert "the pages use bf16, as chosen above" in _notes(at)
    at.switch_page("app_pages/roofline.py").run()
    assert not at.exception and at.session_state["_selection"].weight_dtype == "bf16"


def test_another_model_takes_its_own_format_not_the_names():
    # the format the name set is the linked model's default: another model takes its own (llama: bf16) ...
    at = _open(model="zai-org/GLM-4.6-FP8")
    at.sidebar.selectbox(key="model").set_value("llama-3-8b").run()
    assert at.session_state["_selection"].weight_dtype == "bf16"
    assert "read from the checkpoint's name" not in _notes(at)
    # ... and back to the preset in the box is the preset, not the checkpoint: its own bf16
    at.sidebar.selectbox(key="model").set_value("glm-4.7").run()
    assert at.session_state["_selection"].weight_dtype == "bf16"
    # a format the user picked stays, as before
    at = _open(model="zai-org/GLM-4.6-FP8")
    at.sidebar.selectbox(key="wq").set_value("int8").run()
    at.sidebar.selectbox(key="model").set_value("llama-3-8b").run()
    assert at.session_state["_selection"].weight_dtype == "int8"


def test_a_name_in_the_note_is_escaped():
    # a link's text reaches the sidebar's markdown only escaped
    at = _open(model="zai-org/GLM-4.6-FP8")
    assert "zai-org/GLM-4.6-FP8" in _notes(at)
    from ui.sidebar import checkpoint_caption
    said = checkpoint_caption("fp8", False, "fp8", name="x/**GLM**-4.6-FP8")
    assert "**GLM**" not in said and "GLM" in said


@pytest.mark.parametrize("stored, label", [("int4-g128", "4-bit integers in groups of 128"), ("fp8", "FP8")])
def test_the_caption_names_a_format_once(stored, label):
    # the caption gives the format's words, then calc's name: "4-bit integers in groups of 128 (int4-g128; ...)";
    # a format with no words of its own is named once, not "bf16 (bf16; ...)"
    from ui.sidebar import checkpoint_caption
    said = checkpoint_caption(stored, False, stored, name="Qwen/Qwen3-8B-AWQ")
    assert said.startswith(f"Checkpoint format: {label} ({stored}; read from the checkpoint's name") and \
        said.count(stored) == 1, said
    plain = checkpoint_caption("bf16", False, "bf16")
    assert plain == "Checkpoint format: bf16 (from the model's published checkpoint).", plain
