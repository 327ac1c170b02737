"""A checkpoint's name says its weights' precision (zai-org/GLM-4.6-FP8 -> fp8, nvidia/GLM-4.7-NVFP4 -> nvfp4):
calc.checkpoint_format.checkpoint_name_format, for names that map, names that must not (a tag inside a word, no tag)
and tags that fix no format of calc's."""
import pytest

from calc.checkpoint_format import checkpoint_name_format
from calc.dtypes import dtype_bytes


@pytest.mark.parametrize("name, fmt", [
    # the org's conventions: Z.ai's and NVIDIA ModelOpt's exports
    ("zai-org/GLM-4.6-FP8", "fp8"), ("zai-org/GLM-4.5-Air-FP8", "fp8"), ("nvidia/GLM-4.7-NVFP4", "nvfp4"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "fp8"), ("amd/MiniMax-M3-MXFP4", "mxfp4"),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "bf16"), ("RedHatAI/Qwen3-8B-FP8-block", "fp8-block"),
    ("GLM-4.5-Air-FP8", "fp8"), ("zai-org/glm-4.6_fp8", "fp8"),
    # ModelOpt's first FP4 exports are NVFP4
    ("nvidia/DeepSeek-R1-FP4", "nvfp4"), ("nvidia/Llama-3.3-70B-Instruct-FP4", "nvfp4"),
    # integer schemes where calc has the format the scheme's published definition fixes (groups of 128)
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "int4-g128"),
    ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "int4-g128"), ("Qwen/Qwen2.5-7B-Instruct-AWQ", "int4-g128"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "int4-g128"), ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "int8-g128"),
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", "int8"), ("neuralmagic/Model-W8A8-FP8", "fp8"),
    # MXFP8 has no format of its own in calc: fp8, its scales not counted (said)
    ("MiniMaxAI/MiniMax-M3-MXFP8", "fp8"),
])
def test_a_precision_tag_names_a_format(name, fmt):
    got, said = checkpoint_name_format(name)
    assert got == fmt and said, (name, got, said)
    assert dtype_bytes(got) > 0  # one calc prices


@pytest.mark.parametrize("name", [
    "Qwen3-8B", "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "zai-org/GLM-4.6", "gpt2-xl", "glm-4.7",
    # a tag inside a word is no tag
    "org/MyFP8Model", "org/Model-FP8x", "org/nvfp4ish-7B", "org/Llama-3-8B-awqx", "org/Qwen3-8B-Int8ish",
    "", "   ",
])
def test_a_name_without_a_precision_tag_names_nothing(name):
    assert checkpoint_name_format(name) == (None, "")


@pytest.mark.parametrize("name, why", [
    ("someone/Llama-3.3-70B-Instruct-FP4", "NVFP4 or MXFP4"),      # FP4 outside NVIDIA's exports
    ("someone/Llama-3.1-8B-Instruct-INT4", "group size"),          # INT4 without a method: groups unknown
    ("someone/Model-BF16-FP8", "several precisions"),              # words that disagree
    ("someone/Model-INT4-FP8", "several precisions"),
])
def test_a_tag_that_fixes_no_format_says_why(name, why):
    fmt, said = checkpoint_name_format(name)
    assert fmt is None and why in said, (name, fmt, said)


def test_non_strings_are_read_as_text():
    assert checkpoint_name_format(None) == (None, "") and checkpoint_name_format(8) == (None, "")


def test_a_reading_that_counts_less_than_the_checkpoint_says_so():
    # MXFP8 is priced as calc's fp8: its scales, 0.25 bit per weight, are left out, and the reading says it
    fmt, said = checkpoint_name_format("MiniMaxAI/MiniMax-M3-MXFP8")
    assert fmt == "fp8" and "not counted" in said
