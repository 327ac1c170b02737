"""The live builder on a shared server: only plausible, fitting models are built; weights load only from
the server's models folder and say nothing about other paths; errors are one line of plain words.
"""
import json
import os

import pytest

from live.run_spec import RunSpec, check_config_fits, list_model_dirs, resolve_weights_path
from live.worker import _error_message

GQA = dict(model_type="llama", hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
           num_hidden_layers=2, vocab_size=128, max_position_embeddings=512)
RAW = ("Traceback", 'File "', "Exception raised from", "frame #", "set_int_max_str_digits", "File name too long",
       "TypeError", "Errno")


def _assert_plain(msg: str) -> None:
    assert not any(r in msg for r in RAW), msg
    assert "\n" not in msg.strip() and len(msg) < 500, msg


@pytest.fixture
def models_root(tmp_path, monkeypatch):
    root = tmp_path / "models"
    (root / "tiny").mkdir(parents=True)
    (root / "tiny" / "config.json").write_text(json.dumps(GQA))
    (root / "empty").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text(json.dumps(dict(GQA, _secret="outside field")))
    (root / "escape").symlink_to(outside)
    monkeypatch.setenv("LLM_EXPLORER_MODELS_ROOT", str(root))
    return root


def test_without_a_models_folder_local_weights_are_off(monkeypatch):
    monkeypatch.delenv("LLM_EXPLORER_MODELS_ROOT", raising=False)
    with pytest.raises(ValueError, match="Local weights are off on this server"):
        resolve_weights_path("tiny")
    assert list_model_dirs() == []


def test_only_folders_inside_the_models_folder_resolve(models_root):
    assert resolve_weights_path("tiny") == (models_root / "tiny").resolve()
    assert resolve_weights_path(str(models_root / "tiny")) == (models_root / "tiny").resolve()
    assert list_model_dirs() == ["tiny"]  # "escape" leads outside: a link, not listed... and refused below


@pytest.mark.parametrize("name", ["/etc/shadow", "/nonexistent", "/etc", "../outside", "escape", "empty", "tiny/..",
                                  "", "a" * 5000, "x/" * 3000, "/proc/self/root/etc/passwd", "~", "tiny\x00"])
def test_every_other_path_gets_the_same_message(models_root, name):
    with pytest.raises(ValueError) as info:
        resolve_weights_path(name)
    msg = str(info.value)
    shown = name.strip() if len(name.strip()) <= 80 else name.strip()[:79] + "…"
    # Whether the path exists, is a file, a folder or a link out: the message only quotes the name.
    assert msg.replace(repr(shown), "NAME") == ("NAME is not a model folder under this server's models folder (a "
                                                "folder there that holds config.json and the weights); pick one "
                                                "from the list")
    _assert_plain(msg)
    assert "outside field" not in msg


def test_another_session_never_sees_the_path():
    spec = RunSpec(source="weights", weights_path="/srv/private/model-7")
    assert "/srv" not in spec.describe() and "model-7" not in spec.describe()


@pytest.mark.parametrize("cfg, needle", [
    (dict(GQA, num_hidden_layers=10**12), "'num_hidden_layers' is 1,000,000,000,000, above the limit of 1,024"),
    (dict(GQA, head_dim=10**9), "'head_dim' is 1,000,000,000, above the limit of 4,096"),
    (dict(GQA, vocab_size=10**15), "'vocab_size'"),
    (dict(GQA, tie_word_embeddings="yes"), "'tie_word_embeddings' must be true or false"),
    ({"hidden_size": 64}, "no 'model_type'"),
])
def test_a_config_is_read_by_calc_before_the_worker_sees_it(cfg, needle):
    with pytest.raises(ValueError) as info:
        RunSpec(source="config", config_json=json.dumps(cfg))
    assert needle in str(info.value)
    _assert_plain(str(info.value))


@pytest.mark.parametrize("text, needle", [
    ('{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}", "5,000 digits"),
    ('{"model_type": "llama", "a": ' + "[" * 50_000 + "]" * 50_000 + "}", "nested too deeply"),
    ('{"model_type": "llama", "hidden_size": 1e400}', "too large for a float"),
])
def test_absurd_json_is_one_message_on_the_live_page_too(text, needle):
    with pytest.raises(ValueError, match=needle) as info:
        RunSpec(source="config", config_json=text)
    _assert_plain(str(info.value))


def test_a_model_too_large_for_memory_is_refused_before_building():
    # 64 layers x 12 x 8192^2 ~ 5.2e10 parameters: 206 GB in fp32 against 24 GB free.
    big = dict(GQA, hidden_size=8192, intermediate_size=4 * 8192, num_attention_heads=64, num_key_value_heads=64,
               num_hidden_layers=64, vocab_size=32000)
    with pytest.raises(ValueError, match=r"weights need 2\d\d\.\d\d GB in fp32, more than 60% of the 24.0 GB free"):
        check_config_fits(big, "fp32", 24e9)
    model, need = check_config_fits(GQA, "bf16", 24e9)
    assert need == 2 * model.n_params


def test_worker_errors_are_one_line():
    err = RuntimeError("shape '[1, 4, 64]' is invalid\nException raised from view at aten/src/ATen.cpp:42 "
                       "(most recent call first):\nframe #0: c10::Error::Error + 0x9e")
    msg = _error_message(err)
    assert msg.startswith("the measurement failed: RuntimeError: shape") and "frame #" not in msg
    assert "\n" not in msg


torch = pytest.importorskip("torch")


def test_the_builder_gives_plain_messages(models_root):
    from live.model_builder import load_model

    cases = [
        (RunSpec(source="weights", weights_path="../outside"), "not a model folder"),
        (RunSpec(source="weights", weights_path="/etc/shadow"), "not a model folder"),
        (RunSpec(source="weights", weights_path="a" * 5000), "not a model folder"),
    ]
    for spec, needle in cases:
        with pytest.raises(ValueError) as info:
            load_model(spec)
        assert needle in str(info.value)
        _assert_plain(str(info.value))
    # A value transformers would reject with its own TypeError: refused by type, in words.
    from live.model_builder import hf_config_object

    with pytest.raises(ValueError, match="'use_cache' must be true or false, got 'no'"):
        hf_config_object(dict(GQA, use_cache="no"))
    with pytest.raises(ValueError, match="'rms_norm_eps' must be a number"):
        hf_config_object(dict(GQA, rms_norm_eps="tiny"))


def test_the_offline_switches_are_set_by_importing_live():
    import live  # noqa: F401

    assert os.environ.get("HF_HUB_OFFLINE") == "1" and os.environ.get("TRANSFORMERS_OFFLINE") == "1"
