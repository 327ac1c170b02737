"""Convert InferenceX's golden acceptance-length curves into calc/data/spec_acceptance.json.

Run: python bench/convert_golden_al.py REPO > calc/data/spec_acceptance.json
REPO: a git copy (bare or checked out) of github.com/SemiAnalysisAI/InferenceX (Apache-2.0), read at ``COMMIT``
with git, so no work tree is needed. Its ``golden_al_distribution/*.yaml`` map a model, a thinking mode and a
draft length (``num_speculative_tokens``, 1 to 8) to the mean acceptance length (tokens a verification step emits,
the target's own token included) measured with vLLM on a B300 over SPEED-Bench's coding prompts (temperature 1.0,
4,096 output tokens); InferenceX's AgentX runs pin every submission to these values through synthetic acceptance
(vLLM ``synthetic_acceptance_length``, SGLang ``SGLANG_SIMULATE_ACC_LEN``, TensorRT-LLM
``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`` = AL - 1), golden_al_distribution/README.md at that commit.

Each curve is kept with its file, the GitHub Actions run its header names, the draft method (``method``: "mtp",
the model's own multi-token-prediction module; "head", a separate one-layer draft head: EAGLE-3, DSpark) and the
calc preset of its model where one has the same architecture (else null: the curve is still part of the median
that ``calc.serving_terms.acceptance_length`` takes for a model without its own).
"""
import json
import subprocess
import sys

import yaml

COMMIT = "f0711382f121b081f7cbd9e4681e27723a8de125"
DATE = "2026-08-19"
REPO_URL = "https://github.com/SemiAnalysisAI/InferenceX"
#: file stem -> (calc preset or None, draft method, draft in words)
FILES = {
    "dsv4_mtp": ("deepseek-v4-pro", "mtp", "DeepSeek-V4-Pro's MTP module"),
    "dsv4-pro-0813-dspark": ("deepseek-v4-pro", "head", "a DSpark draft head for DeepSeek-V4-Pro-0813"),
    "glm5.2_mtp": (None, "mtp", "GLM-5.2's MTP module (GLM-5.2 has no preset: its indexer differs from GLM-5's)"),
    "kimik2.5_eagle3": ("kimi-k2", "head", "an EAGLE-3 head for Kimi-K2.5 (Kimi-K2's architecture)"),
    "kimik3_dspark": (None, "head", "a DSpark draft head for Kimi-K3 (no preset)"),
    "minimaxm3_eagle3": ("minimax-m3", "head", "an EAGLE-3 head for MiniMax-M3"),
    "minimaxm3_eagle3_gqa": ("minimax-m3", "head", "an EAGLE-3 head with GQA for MiniMax-M3"),
    "qwen3.5_mtp": ("qwen3.5-397b-a17b", "mtp", "Qwen3.5-397B-A17B's MTP module"),
}


def convert(repo: str) -> dict:
    """The curves of ``FILES`` at ``COMMIT`` of the git copy ``repo``, as the JSON file's dict."""
    curves = []
    for stem, (preset, method, words) in FILES.items():
        path = f"golden_al_distribution/{stem}.yaml"
        text = subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], capture_output=True, text=True,
                              check=True).stdout
        run = next(line.split(": ", 1)[1].strip() for line in text.splitlines() if "actions/runs" in line)
        for name, modes in yaml.safe_load(text).items():
            for mode, table in modes.items():
                curves.append({"file": path, "model": name, "preset": preset, "method": method, "draft": words,
                               "thinking": mode.replace("thinking_", ""), "run": run,
                               "acceptance_length": {str(k): float(v) for k, v in sorted(table.items())}})
    return {
        "_about": "Mean acceptance length (tokens emitted per verification step, the target's own token included) "
                  "by draft length, from InferenceX's golden curves (SPEED-Bench coding prompts, vLLM on B300, "
                  "temperature 1.0, 4,096 output tokens), as calc.serving_terms.acceptance_length reads them: a "
                  "model's own curve (thinking on, the AgentX runs' mode, where both are given), else the median of "
                  "every curve at that draft length. Converted by bench/convert_golden_al.py.",
        "source": {"repository": REPO_URL, "commit": COMMIT, "path": "golden_al_distribution/", "date": DATE,
                   "license": "Apache-2.0", "retrieved": "2026-12-05"},
        "curves": curves,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    json.dump(convert(sys.argv[1]), sys.stdout, indent=1)
    sys.stdout.write("\n")
