"""The endpoint client against a real server: `transformers serve` (its serving extra pinned in
requirements-dev.txt) on a tiny random-weight Llama saved here, with a word-level tokenizer built
with the tokenizers library; nothing is downloaded.

`transformers serve` rejects vLLM's ``ignore_eos``/``min_tokens`` (HTTP 422), so the client drops them;
the model's ``lm_head`` row of the end-of-sequence token is zeroed, so with greedy decoding the
EOS logit (0) never beats the other 129 random logits and every request runs to ``max_tokens``.
"""
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from live.endpoint_spec import EndpointSpec
from live.endpoint_client import WORDS
from live.endpoint import measure


def save_word_tokenizer(out: Path) -> dict:
    """Save to ``out`` a whitespace word-level tokenizer over ``WORDS`` (ids 0-2: <unk>, <s>, </s>) with a chat
    template that joins the messages; returns its vocabulary (word -> id)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["<unk>", "<s>", "</s>"] + sorted(set(WORDS)))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins the words with spaces
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    fast.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    fast.save_pretrained(out)
    return vocab


def stop_server(proc: subprocess.Popen, wait_s: float) -> None:
    """Terminate a server process, and kill it if it has not ended within ``wait_s`` seconds."""
    proc.terminate()
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()


def build_tiny_model(out: Path) -> None:
    """A 2-layer, 32-wide Llama with random weights and a whitespace word-level tokenizer over ``WORDS``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    vocab = save_word_tokenizer(out)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                      bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        model.lm_head.weight[cfg.eos_token_id].zero_()
    model.save_pretrained(out)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny") / "model"
    build_tiny_model(path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    exe = str(Path(sys.executable).with_name("transformers"))
    cmd = [exe if os.path.exists(exe) else "transformers", "serve", str(path), "--host", "127.0.0.1",
           "--port", str(port), "--device", "cpu", "--dtype", "float32"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"transformers serve did not start: {proc.stderr.read()[-2000:]}")
                time.sleep(0.5)
        yield url, str(path)
    finally:
        stop_server(proc, 20)


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_transformers_serve_streams_both_endpoints_offline(served, api):
    url, model = served
    spec = EndpointSpec(base_url=url, model=model, api=api, prompt_tokens=12, output_tokens=4, concurrency=(1, 2),
                        requests_per_level=2, warmup_requests=1, first_byte_timeout_s=60, stall_timeout_s=60)
    run = measure(spec)
    assert run.error is None, run.error
    assert [lv["concurrency"] for lv in run.levels] == [1, 2]
    for lv in run.levels:  # every request accounted for, none failed
        assert lv["requests_ok"] == 2 and lv["requests_failed"] == 0, lv["errors"]
    assert len(run.samples) == 4
    for s in run.samples:
        assert s["usage_reported"] and s["output_tokens"] == 4 and s["prompt_tokens"] == 12  # as asked
        assert 0 < s["ttft_s"] < s["e2e_s"] and s["tpot_s"] > 0
        assert s["chunks"] == 4  # one token per chunk
