"""Symmetric integer groups ("int4-g32-sym"): 4-bit integers with one 16-bit scale per 32 weights and no zero point,
the format Moonshot's INT4 checkpoints (Kimi-K2-Thinking, Kimi-K2.5) ship: its bits, its recipe (a mixture of experts
quantizes only its routed experts), the config.json reading, the sidebar's select and the Many GPUs page under SGLang,
whose published runs of it are labelled "int4-g32"."""
import json

import pytest

import calc
from calc import quant, serving_params
from calc.checkpoint_format import checkpoint_weight_format
from calc.dtypes import bits_per_element, data_set_format, kv_dtype_bytes, quant_format
from pagetest import open_page

KIMI = calc.get_model("kimi-k2")

#: moonshotai/Kimi-K2.5 config.json's quantization_config, verbatim (copy in github.com/ai-dynamo/aiconfigurator at
#: 095f58a5, aic-core/src/aiconfigurator_core/model_configs/moonshotai--Kimi-K2.5_config.json, under text_config).
KIMI_K25_QUANT = {
    "config_groups": {"group_0": {
        "input_activations": None, "output_activations": None, "targets": ["Linear"],
        "weights": {"actorder": None, "block_structure": None, "dynamic": False, "group_size": 32, "num_bits": 4,
                    "observer": "minmax", "observer_kwargs": {}, "strategy": "group", "symmetric": True,
                    "type": "int"}}},
    "format": "pack-quantized",
    "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"],
    "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}


def _kimi_k25(quant_config=KIMI_K25_QUANT) -> dict:
    """Kimi-K2.5's config.json as it nests the language model (the keys the reading looks at)."""
    return {"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
            "text_config": {"model_type": "kimi_k2", "n_routed_experts": 384, "num_experts_per_tok": 8,
                            "quantization_config": quant_config}}


def _with_weights(**change) -> dict:
    q = json.loads(json.dumps(KIMI_K25_QUANT))
    q["config_groups"]["group_0"]["weights"].update(change)
    return q


def test_bits_per_weight_of_symmetric_groups_and_the_zero_point_names_unchanged():
    # no zero point: 4 bits + one 16-bit scale per 32 = 4.5; the AutoGPTQ/AWQ names keep their 4-bit zero per group
    assert bits_per_element("int4-g32-sym") == 4.5
    assert bits_per_element("int4-g128-sym") == 4 + 16 / 128 == 4.125
    assert bits_per_element("int8-g64-sym") == 8.25
    assert bits_per_element("int4-g32") == 4.625 and bits_per_element("int4-g128") == 4.15625
    assert bits_per_element("int8-g128") == 8 + 24 / 128
    assert quant_format("INT4-G32-SYM").name == "int4-g32-sym" and quant_format("int4-g100-sym") is None
    assert "int4-g32-sym" in calc.dtypes.format_names()
    with pytest.raises(ValueError, match="weight-only"):
        kv_dtype_bytes("int4-g32-sym")
    # the published measurements spell it by bits and group
    assert data_set_format("int4-g32-sym") == "int4-g32" and data_set_format("int4-g32") == "int4-g32"
    assert data_set_format("fp8-block") == "fp8-block"


def test_kimi_k2_weight_bytes_in_its_int4_checkpoint_format():
    # Kimi-K2: 60 MoE layers x 384 routed experts x 3 matrices (gate, up, down) x d_model 7168 x expert width 2048
    # = 1,014,686,023,680 routed-expert weights, at 4 + 16/32 = 4.5 bits: 570,760,888,320 B. Everything else of the
    # 1,026,408,232,448 parameters (11,722,208,768: attention, the shared experts, the dense first layer, router,
    # embeddings, head, norms) stays bf16 as the checkpoint's ignore list says: 23,444,417,536 B.
    # Total 594,205,305,856 B.
    groups = quant.tensor_groups(KIMI)
    assert groups["experts"] + groups["experts_down"] == 60 * 384 * 3 * 7168 * 2048 == 1_014_686_023_680
    assert KIMI.n_params == 1_026_408_232_448
    assert calc.weight_bytes(KIMI, "int4-g32-sym") == 594_205_305_856
    # the zero-point reading, every linear layer at 4.625 bits, is unchanged: 2.76 GB more
    assert calc.weight_bytes(KIMI, "int4-g32") == 596_968_051_240
    # a dense model quantizes every linear layer: Llama-3-8B's 6,979,321,856 linear weights x 4.125 / 8
    # + embedding and head (2 x 525,336,576 x 2 B) + norms (266,240 x 2 B) = 5,700,591,616 B
    llama = calc.get_model("llama-3-8b")
    assert calc.weight_bytes(llama, "int4-g128-sym") == 6_979_321_856 * 4.125 / 8 + 2 * 525_336_576 * 2 + 266_240 * 2


def test_kimi_k25_config_reads_as_symmetric_int4_in_groups_of_32():
    fmt, said = checkpoint_weight_format(_kimi_k25())
    assert fmt == "int4-g32-sym"
    assert "group size 32" in said and "symmetric (no zero point)" in said
    # with a zero point per group (symmetric false) it is the AutoGPTQ/AWQ layout
    assert checkpoint_weight_format(_kimi_k25(_with_weights(symmetric=False)))[0] == "int4-g32"
    # a mixture of experts whose attention is quantized too does not fit the symmetric format's recipe (attention in
    # bf16): read with a zero point, as before, and said
    q = dict(KIMI_K25_QUANT, ignore=["lm_head", "re:.*mlp.gate$"])
    fmt, said = checkpoint_weight_format(_kimi_k25(q))
    assert fmt == "int4-g32" and "read with a zero point per group" in said
    # a dense model with every linear layer quantized (llm-compressor's W4A16 scheme, group 128)
    dense = {"quantization_config": dict(_with_weights(group_size=128), ignore=["lm_head"])}
    assert checkpoint_weight_format(dense)[0] == "int4-g128-sym"


def test_the_sidebar_offers_it_and_a_link_keeps_it():
    from ui.sidebar import WEIGHT_DTYPES
    assert "int4-g32-sym" in WEIGHT_DTYPES
    at = open_page(model="kimi-k2", wq="int4-g32-sym")
    assert "int4-g32-sym" in at.selectbox(key="wq").options
    assert at.selectbox(key="wq").value == "int4-g32-sym"
    assert at.query_params["wq"] in ("int4-g32-sym", ["int4-g32-sym"])


def test_many_gpus_kimi_k2_in_int4_g32_sym_under_sglang_says_the_thin_coverage():
    params = serving_params.load_serving_params()
    # the calibration's runs of this format are vLLM's (labelled int4-g32 in the data set), none SGLang's
    assert serving_params.thin_format(params, "sglang", "int4-g32-sym")
    vllm_rows = params["coverage"]["weight_formats"]["vllm"]["int4-g32"]["rows"]
    assert vllm_rows > 0
    vllm_words = serving_params.architecture_notice(params, KIMI, engine="vllm", weight_dtype="int4-g32-sym")
    # the notice names the format as chosen and as the data set (and its list of pairs) labels it
    assert any(w.startswith(f"only {vllm_rows} published vLLM runs with int4-g32-sym (the data set's int4-g32) "
                            "weights") for w in vllm_words)

    at = open_page("app_pages/many_gpus.py", timeout=240, model="kimi-k2", gpu="h200", wq="int4-g32-sym",
                   kvq="bf16", mg_srv_engine="sglang")
    assert at.selectbox(key="wq").value == "int4-g32-sym"
    assert at.selectbox(key="mg_srv_engine").value == "sglang"
    infos = [i.value for i in at.info]
    assert any("no published SGLang run with int4-g32-sym \\(the data set's int4-g32\\) weights was in its calibration "
               "\\(its int4-g32 runs are vLLM's\\)" in i for i in infos), infos
    # the page's weights are the hand count above: 594,205,305,856 B
    assert any("The weights alone need 594.21 GB" in i for i in infos), infos
    assert any("weights int4-g32-sym" in c.value for c in at.caption)
