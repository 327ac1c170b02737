"""Every preset's total parameter count against its published figure (model card or Hugging Face's model size).

Like is compared with like: the published figure's convention is stated per row (vision towers, MTP modules,
buffers a checkpoint stores). The tolerance is half a unit of the published figure's last digit ("6.74B":
+-0.005B) unless the row says why it is wider.
"""
from __future__ import annotations

import pytest

import calc
from calc.config_json import from_hf_config
from calc.models import hf_config

B = 1e9
M = 1e6

# id -> (published figure in params, tolerance in params, what we add to our count to match it, source)
PUBLISHED = {
    "llama-2-7b": (6.74 * B, 0.005 * B, 0, "HF meta-llama/Llama-2-7b-hf model size 6.74B"),
    "llama-2-13b": (13.0 * B, 0.05 * B, 0, "HF meta-llama/Llama-2-13b-hf model size 13B (13,015,864,320 exact, ref. data 1.1)"),
    "llama-2-70b": (69.0 * B, 0.05 * B, 0, "HF meta-llama/Llama-2-70b-hf model size 69B"),
    "llama-3-8b": (8.03 * B, 0.005 * B, 0, "HF meta-llama/Meta-Llama-3-8B model size 8.03B"),
    "llama-3.1-8b": (8.03 * B, 0.005 * B, 0, "HF meta-llama/Llama-3.1-8B model size 8.03B"),
    "llama-3.1-70b": (70.6 * B, 0.05 * B, 0, "HF meta-llama/Llama-3.1-70B model size 70.6B"),
    "llama-3.1-405b": (406 * B, 0.5 * B, 0, "HF meta-llama/Llama-3.1-405B model size 406B"),
    "llama-3.2-1b": (1.24 * B, 0.005 * B, 0, "HF meta-llama/Llama-3.2-1B model size 1.24B (card: 1.23B)"),
    "llama-3.2-3b": (3.21 * B, 0.005 * B, 0, "Llama 3.2 model card: 3.21B"),
    "mistral-7b-v0.1": (7.24 * B, 0.005 * B, 0, "HF mistralai/Mistral-7B-v0.1 model size 7.24B"),
    "mixtral-8x7b": (46.7 * B, 0.05 * B, 0, "HF mistralai/Mixtral-8x7B-v0.1 model size 46.7B"),
    "qwen2.5-0.5b": (0.49 * B, 0.005 * B, 0, "Qwen2.5-0.5B model card: 0.49B"),
    "qwen2.5-7b": (7.61 * B, 0.01 * B, 0, "Qwen2.5-7B model card: 7.61B (HF size 7.62B; both within 0.01B)"),
    "qwen3-8b": (8.2 * B, 0.05 * B, 0, "Qwen3-8B model card: 8.2B"),
    "qwen3-32b": (32.8 * B, 0.05 * B, 0, "Qwen3-32B model card: 32.8B (31.2B non-embedding)"),
    "gemma-2-9b": (9.24 * B, 0.005 * B, 0, "HF google/gemma-2-9b model size 9.24B"),
    # Gemma 3 report: 417M vision encoder beside the language model; HF counts both (27.4B).
    "gemma-3-27b": (27.4 * B, 0.05 * B, 417 * M, "HF google/gemma-3-27b-pt model size 27.4B = text + 417M SigLIP (Gemma 3 report, table 1)"),
    "deepseek-v2": (236 * B, 0.5 * B, 0, "DeepSeek-V2 README: 236B total"),
    # HF stores the MTP module beside the main model: 671B + 14B = 685B (README). Our 671.03 + 13.46 = 684.49B;
    # HF's figure also counts the fp8 block scales (one float per 128x128 block, about 0.04B): 0.1% tolerance.
    "deepseek-v3": (685 * B, 0.685 * B, "mtp", "DeepSeek-V3 README: 685B on HF = 671B main + 14B MTP"),
    # The paper's 175.0B is rounded from its own formula (biases and exact vocabulary unstated): 0.25%.
    "gpt-3-175b": (175.0 * B, 0.4375 * B, 0, "Brown et al. 2020 (arXiv 2005.14165), table 2.1: 175.0B"),
    "smollm2-135m": (135 * M, 0.5 * M, 0, "HF HuggingFaceTB/SmolLM2-135M model size 135M"),
    "smollm2-360m": (362 * M, 0.5 * M, 0, "HF HuggingFaceTB/SmolLM2-360M model size 362M"),
    "smollm2-1.7b": (1.71 * B, 0.005 * B, 0, "HF HuggingFaceTB/SmolLM2-1.7B model size 1.71B"),
    "tinyllama-1.1b": (1.1 * B, 0.05 * B, 0, "TinyLlama model card: 1.1B"),
    "gpt2": (124 * M, 0.5 * M, 0, "OpenAI GPT-2 small: 124M (HF's widget shows 137M: see the test below)"),
    # DeepSeek's inference config of V3.2 has no MTP key; the HF checkpoint stores V3's MTP module (with an
    # indexer, 13.96M): 671.88 + 13.46 + 0.014 = 685.35B.
    "deepseek-v3.2": (685 * B, 0.685 * B, "v3-mtp", "HF deepseek-ai/DeepSeek-V3.2-Exp model size 685B"),
    "minimax-m1": (456 * B, 0.5 * B, 0, "MiniMax-M1 report (arXiv 2506.13585): 456B total"),
    "qwen3-next-80b-a3b": (80 * B, 0.5 * B, 0, "Qwen3-Next-80B-A3B model card: 80B total (HF widget figure not verified)"),
    # No published total on file for the Qwen3.5 presets: the name's figure, with the MTP module (their configs
    # ship one); the vision tower's size is not on file, so 3%.
    "qwen3.5-27b": (27 * B, 0.81 * B, "mtp", "the model's name only (no published total on file)"),
    "qwen3.5-35b-a3b": (35 * B, 1.05 * B, "mtp", "the model's name only (no published total on file)"),
    "kimi-k2": (1.0e12, 0.05e12, 0, "Kimi K2 model card: 1T total (32B activated)"),
    "nemotron-h-56b": (56 * B, 0.5 * B, 0, "Nemotron-H report (arXiv 2504.03624): 56B"),
    "jamba-v0.1": (52 * B, 0.5 * B, 0, "Jamba report (arXiv 2403.19887): 52B total"),
    "qwen3-235b-a22b": (235 * B, 0.5 * B, 0, "Qwen3-235B-A22B model card: 235B total"),
    "qwen3-30b-a3b": (30.5 * B, 0.05 * B, 0, "Qwen3-30B-A3B model card: 30.5B total"),
    "gpt-oss-120b": (116.83 * B, 0.005 * B, 0, "gpt-oss model card (arXiv 2508.10925) table 1: 116.83B total"),
    "gpt-oss-20b": (20.91 * B, 0.005 * B, 0, "gpt-oss model card (arXiv 2508.10925) table 1: 20.91B total"),
    # Llama 4 model card: "17B (Activated) 109B (Total)" for Scout, "17B (Activated) 400B (Total)" for Maverick; the
    # totals count the vision encoder beside the language model (LLAMA4_VISION below). Maverick's 400B is given to
    # two significant figures (as its 17B): half a unit of the second, 5B.
    "llama-4-scout": (109 * B, 0.5 * B, "llama4-vision", "Llama 4 model card: 109B total (17B activated)"),
    "llama-4-maverick": (400 * B, 5 * B, "llama4-vision", "Llama 4 model card: 400B total (17B activated)"),
    "mixtral-8x22b": (141 * B, 0.5 * B, 0, "Mistral's announcement (mistral.ai/news/mixtral-8x22b): 141B total, 39B active"),
    # MiniMax-M2's "230 billion total parameters with 10 billion active" (transformers docs/source/en/model_doc/
    # minimax_m2.md), two significant figures: half a unit of the second, 5B; M2.5 has M2's shapes, MTP not counted.
    "minimax-m2.5": (230 * B, 5 * B, 0, "MiniMax-M2 overview in transformers' docs: 230B total, 10B active"),
    # No published total on file beyond the names (Qwen) and Z.ai's 744B as its hosts quote it (SiliconFlow lists
    # 750B); the main model without the MTP layer and the vision tower, half a unit of the name's last digit, but 1B
    # for Qwen3.5-397B (396.35B counted: the name rounds up) and 1% for GLM-5, whose quoted totals disagree.
    "qwen3.5-397b-a17b": (397 * B, 1 * B, 0, "the model's name only (no published total on file)"),
    "qwen3.5-122b-a10b": (122 * B, 0.5 * B, 0, "the model's name only (no published total on file)"),
    "glm-5": (744 * B, 7.44 * B, 0, "Z.ai's 744B total (40B active) as hosts quote it; SiliconFlow lists 750B"),
    "qwen3-coder-480b-a35b": (480 * B, 0.5 * B, 0, "Qwen3-Coder-480B-A35B-Instruct model card: 480B total, 35B active"),
    # DeepSeek-V4 report's abstract (arXiv 2606.19348) and model cards: "DeepSeek-V4-Pro with 1.6T parameters (49B
    # activated) and DeepSeek-V4-Flash with 284B parameters (13B activated)". Main model, MTP module not counted (the
    # Flash figure, three significant figures, leaves no room for its 7.67B); 1.6T to two figures: half a unit, 50B.
    "deepseek-v4-pro": (1.6e12, 0.05e12, 0, "DeepSeek-V4 report (arXiv 2606.19348) and model card: 1.6T total, 49B activated"),
    "deepseek-v4-flash": (284 * B, 0.5 * B, 0, "DeepSeek-V4 report (arXiv 2606.19348) and model card: 284B total, 13B activated"),
    # InferenceX's changelog for MiniMaxAI/MiniMax-M3-MXFP8, a vision-language checkpoint (nvidia/MiniMax-M3-NVFP4's
    # config: MiniMaxM3SparseForConditionalGeneration with a CLIP vision tower). The figure is taken to count that
    # tower (inferred, no breakdown published): text 426.17B + the tower's encoder (MINIMAX_M3_VISION, below) =
    # 426.80B; its projector and patch merger (shapes not in the config, under 0.1B) stay inside half a unit.
    "minimax-m3": (427 * B, 0.5 * B, "m3-vision", "InferenceX perf-changelog.yaml @843c6254: MiniMax-M3 427B total / 26B active"),
    # The Qwen2.5 and Qwen3 model cards ("Number of Parameters"); the main model, nothing to add. Qwen2.5-14B's and
    # Qwen2.5-32B's cards are under the shapes' count (14.77B for "14.7B", 32.76B for "32.5B"), and so are their
    # non-embedding figures (13.21B for "13.1B", 31.21B for "31.0B"): the tolerance is widened to cover the gap, 0.1B
    # and 0.3B (tests/test_presets_more_models.py compares the non-embedding figures).
    "qwen2.5-72b": (72.7 * B, 0.05 * B, 0, "Qwen2.5-72B model card: 72.7B (70.0B non-embedding)"),
    "qwen2.5-32b": (32.5 * B, 0.3 * B, 0, "Qwen2.5-32B model card: 32.5B (31.0B non-embedding), under the shapes' 32.76B"),
    "qwen2.5-14b": (14.7 * B, 0.1 * B, 0, "Qwen2.5-14B model card: 14.7B (13.1B non-embedding), under the shapes' 14.77B"),
    "qwen2.5-3b": (3.09 * B, 0.005 * B, 0, "Qwen2.5-3B model card: 3.09B (2.77B non-embedding)"),
    "qwen2.5-1.5b": (1.54 * B, 0.005 * B, 0, "Qwen2.5-1.5B model card: 1.54B (1.31B non-embedding)"),
    "qwen3-14b": (14.8 * B, 0.05 * B, 0, "Qwen3-14B model card: 14.8B (13.2B non-embedding)"),
    "qwen3-4b": (4.0 * B, 0.05 * B, 0, "Qwen3-4B model card: 4.0B (3.6B non-embedding)"),
    "qwen3-1.7b": (1.7 * B, 0.05 * B, 0, "Qwen3-1.7B model card: 1.7B (1.4B non-embedding)"),
    "qwen3-0.6b": (0.6 * B, 0.05 * B, 0, "Qwen3-0.6B model card: 0.6B (0.44B non-embedding)"),
    # Hugging Face's model size of microsoft/phi-4 (bf16 safetensors, nothing beside the language model); the Phi-4
    # report and card say "14B", two significant figures that the shapes' 14.66B rounds past
    "phi-4": (14.7 * B, 0.05 * B, 0, "HF microsoft/phi-4 model size 14.7B (Phi-4 report and card: 14B)"),
    "nemotron-3-nano-30b-a3b": (31.6 * B, 0.05 * B, 0, "NVIDIA's Nemotron 3 Nano model card (as quoted on replicate.com/"
                                "nvidia/nemotron-3-nano-30b-a3b): 31.6B total, about 3.6B active"),
    # NVIDIA gives Super and Ultra only as round figures (report, card and name: 120B total / 12B active, 550B / 55B)
    # and not the MTP module they ship: 1%.
    "nemotron-3-super-120b-a12b": (120 * B, 1.2 * B, 0, "Nemotron 3 Super report and card: 120B total, 12B active"),
    "nemotron-3-ultra-550b-a55b": (550 * B, 5.5 * B, 0, "the model's name: 550B total, 55B active"),
    "gemma-4-26b-a4b": (25.2 * B, 0.05 * B, 0, "Gemma 4 model card (as quoted on vast.ai/model/gemma-4-26b-a4b-it): "
                        "25.2B total, 3.8B active"),
    # The GLM-4.5 report (arXiv 2508.06471, Table 1) and model cards: 355B total / 32B active, 106B / 12B for Air;
    # GLM-4.7 has GLM-4.5's shapes, so GLM-4.5's figure (its own card is not on file). The main model without the MTP
    # layer counts 352.80B and 106.85B, 0.6% under and 0.8% over; the figures do not say what they count (with the MTP
    # layer GLM-4.5 would be 356.79B): 1%, as for GLM-5.
    "glm-4.5": (355 * B, 3.55 * B, 0, "GLM-4.5 report (arXiv 2508.06471) and model card: 355B total, 32B active"),
    "glm-4.5-air": (106 * B, 1.06 * B, 0, "GLM-4.5 report (arXiv 2508.06471) and model card: 106B total, 12B active"),
    "glm-4.7": (355 * B, 3.55 * B, 0, "GLM-4.5's 355B total (GLM-4.7 has its shapes; its own card not on file)"),
}

# Llama 4's vision encoder (transformers Llama4VisionModel and Llama4MultiModalProjector), from the vision_config of
# the released config.json (both models: hidden 1408, intermediate 5632, 34 layers, patch 14, image 336, pixel
# shuffle 0.5, projector 4096 -> 4096, vision_output_dim 4096; ai-dynamo/aiconfigurator @64c5ddb6,
# aic-core/src/aiconfigurator_core/model_configs/meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json):
#   patch embedding 3 x 14 x 14 x 1408 = 827,904; class embedding 1,408; positions (24^2 + 1) x 1408 = 812,416;
#   pre and post LayerNorm 2 x 2 x 1408 = 5,632; per layer q, k, v, o with biases 4 x (1408^2 + 1408) = 7,935,488,
#   fc1 and fc2 with biases 2 x 1408 x 5632 + 5632 + 1408 = 15,866,752, two LayerNorms 5,632 -> 23,807,872, x 34 =
#   809,467,648; pixel-shuffle MLP 5632 x 4096 + 4096 x 4096 = 39,845,888; projector to the text width
#   4096 x 5120 = 20,971,520. Sum 871,932,416.
LLAMA4_VISION = 827_904 + 1_408 + 812_416 + 5_632 + 34 * 23_807_872 + 39_845_888 + 20_971_520

# MiniMax-M3's vision encoder, from the vision_config of nvidia/MiniMax-M3-NVFP4's config.json (ai-dynamo/aiconfigurator
# @095f58a5, aic-core/src/aiconfigurator_core/model_configs/nvidia--MiniMax-M3-NVFP4_config.json: clip_vision_model,
# hidden 1280, intermediate 5120, 32 layers, patch 14, 3 channels, rope positions, so no position table), counted as
# a CLIP encoder: patch embedding 3 x 14 x 14 x 1280 = 752,640; pre and post LayerNorm 2 x 2 x 1280 = 5,120; per
# layer q, k, v, o with biases 4 x (1280^2 + 1280) = 6,558,720, fc1 and fc2 with biases 2 x 1280 x 5120 + 5120 + 1280
# = 13,113,600, two LayerNorms 5,120 -> 19,677,440, x 32 = 629,678,080. Sum 630,435,840.
MINIMAX_M3_VISION = 752_640 + 5_120 + 32 * 19_677_440


def test_every_preset_has_a_published_total():
    assert sorted(PUBLISHED) == sorted(calc.list_models())


@pytest.mark.parametrize("model_id", list(PUBLISHED))
def test_preset_total_matches_its_published_figure(model_id):
    published, tol, extra, source = PUBLISHED[model_id]
    m = calc.get_model(model_id)
    if extra == "mtp":
        ours = m.params_loaded(load_mtp=True)
    elif extra == "llama4-vision":
        ours = m.n_params + LLAMA4_VISION
    elif extra == "m3-vision":
        ours = m.n_params + MINIMAX_M3_VISION
    elif extra == "v3-mtp":
        indexer = 1536 * 8192 + 7168 * 128 + 2 * 128 + 7168 * 64   # wq_b, wk, k_norm, weights_proj
        ours = m.n_params + calc.get_model("deepseek-v3").n_mtp_params + indexer
    else:
        ours = m.n_params + extra
    assert abs(ours - published) <= tol, f"{model_id}: ours {ours / B:.3f}B vs published {published / B:.3f}B ({source})"


def test_gpt_oss_biases_and_sinks_by_hand():
    # gpt-oss-120b (config: D 2880, 36 layers, 64 query heads of 64, 8 KV heads, 128 experts of F 2880, top-4,
    # V 201,088, untied). Per layer:
    #   attention q 2880x4096 + 4096, k and v 2880x512 + 512 each, o 4096x2880 + 2880, sinks 64   = 26,550,144
    #   norms 2 x 2880                                                                              =      5,760
    #   router 2880 x 128 + 128 bias                                                                =    368,768
    #   experts 128 x (gate_up 2880x5760 + 5760 bias + down 2880x2880 + 2880 bias) = 128 x 24,891,840 = 3,186,155,520
    #   -> 3,213,080,192 per layer, x 36 = 115,670,886,912; + embedding and head 2 x 579,133,440 + final norm 2,880
    #   = 116,829,156,672: the card's 116.83B.
    m = calc.get_model("gpt-oss-120b")
    assert m.n_params == 116_829_156_672
    # active: 4 experts -> 126,492,032 per layer x 36 + 1,158,269,760 = 5,711,982,912; the card's 5.13B leaves out
    # the embedding table (a lookup): 5,711,982,912 - 579,133,440 = 5,132,849,472.
    assert m.n_active_params == 5_711_982_912
    assert m.n_active_params - m.vocab_size * m.d_model == pytest.approx(5.13e9, abs=0.005e9)
    small = calc.get_model("gpt-oss-20b")
    assert small.n_params == 20_914_757_184                                   # card: 20.91B
    assert small.n_active_params - small.vocab_size * small.d_model == pytest.approx(3.61e9, abs=0.005e9)  # 3.61B
    # without the biases and sinks (the Llama formula) the count is 39.8M short: 36 x (64 + 128 + 128 x 8,640)
    assert m.n_params - 36 * (64 + 128 + 128 * 8640) == 116_789_336_640


def test_llama4_totals_with_the_vision_encoder():
    # text (calc's count, tests/test_models.py) + vision encoder: Scout 107,769,861,120 + 871,932,416 =
    # 108,641,793,536 (card: 109B); Maverick 400,711,848,960 + 871,932,416 = 401,583,781,376 (card: 400B)
    assert LLAMA4_VISION == 871_932_416
    assert calc.get_model("llama-4-scout").n_params + LLAMA4_VISION == 108_641_793_536
    assert calc.get_model("llama-4-maverick").n_params + LLAMA4_VISION == 401_583_781_376
    assert round((calc.get_model("llama-4-scout").n_params + LLAMA4_VISION) / B) == 109


def test_deepseek_v3_main_plus_mtp_is_685b():
    # README: "685B, which includes 671B of the Main Model weights and 14B of the MTP Module weights";
    # README_WEIGHTS: the MTP module has 11.5B unique parameters (its embedding and head are copies).
    m = calc.get_model("deepseek-v3")
    assert m.n_params == 671_026_419_200 and m.n_mtp_layers == 1
    copies = 2 * 129_280 * 7168                     # embed_tokens and shared_head.head stored again: 1.853B
    glue = 2 * 7168 * 7168 + 3 * 7168               # eh_proj, enorm, hnorm, shared_head.norm
    unique_layer = m.n_mtp_params - copies - glue
    assert unique_layer == pytest.approx(11.5e9, abs=0.05e9)
    assert (m.n_params + m.n_mtp_params) / 1e9 == pytest.approx(685, rel=1e-3)
    assert m.params_loaded() == m.n_params          # engines load the MTP module only for MTP speculation
    assert m.params_loaded(load_mtp=True) == 684_489_845_504


def test_gpt2_hf_widget_counts_the_attention_mask_buffers():
    # HF's "137M" for gpt2 counts the 12 causal-mask buffers (h.*.attn.bias, 1 x 1 x 1024 x 1024) the old
    # checkpoint stores: 124,439,808 + 12 x 1,048,576 = 137,022,720.
    assert calc.get_model("gpt2").n_params + 12 * 1024 * 1024 == pytest.approx(137e6, abs=0.5e6)


def test_mtp_fields_follow_the_config():
    assert from_hf_config(hf_config("kimi-k2")).n_mtp_layers == 0   # num_nextn_predict_layers: 0
    q = calc.get_model("qwen3.5-27b")
    assert q.n_mtp_layers == 1 and 0 < q.n_mtp_params < q.n_params / 10
    with pytest.raises(ValueError, match="go together"):
        calc.get_model("llama-3-8b").with_changes(n_mtp_params=5)
