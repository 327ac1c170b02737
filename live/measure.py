"""Timing prefill and decode of a causal LM with a manual loop (imports torch; runs in the worker).

Recipe (gpt-fast's generate.py; the manual loop of the transformers "LLM inference optimization"
docs): one prefill forward, then single-token forwards with a KV cache, greedy argmax kept on the
device, a fixed number of steps (random weights never stop early: there is no EOS check at all),
warm-up runs for every new shape, repeated timed runs, median and spread. On CUDA the clock is read
only after ``torch.cuda.synchronize()`` and each decode step is bracketed by CUDA events.

Caches (transformers 5.x): prefill fills a ``DynamicCache`` whose tensors are then measured
(``sum(keys.nbytes + values.nbytes)`` over layers). Decode uses a pre-allocated ``StaticCache`` of
exactly ``context + steps`` slots (never the model maximum: attention reads every allocated slot),
its first ``context`` slots filled with random values: timing depends only on shapes, and a real
prefill of B x S tokens would cost more than the measurement itself.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch


class Cancelled(Exception):
    """Raised between points when the user pressed cancel."""


@dataclass(frozen=True)
class Timing:
    """Samples of one measured point (seconds).

    Fields:
        samples_s: every timed sample (prefill: one per repetition; decode: one per step).
        median_s, p10_s, p90_s, min_s, max_s: their statistics.
    """

    samples_s: tuple[float, ...]

    @property
    def median_s(self) -> float:
        """Median of the samples."""
        return float(np.median(self.samples_s))

    @property
    def p10_s(self) -> float:
        """10th percentile."""
        return float(np.percentile(self.samples_s, 10))

    @property
    def p90_s(self) -> float:
        """90th percentile."""
        return float(np.percentile(self.samples_s, 90))

    def stats(self) -> dict:
        """median/p10/p90/min/max and the sample count as a dict."""
        s = self.samples_s
        return dict(median_s=self.median_s, p10_s=self.p10_s, p90_s=self.p90_s, min_s=float(min(s)),
                    max_s=float(max(s)), n_samples=len(s))


def sync(device) -> None:
    """Wait for queued GPU work (no-op on a CPU)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def _device(model) -> torch.device:
    return next(model.parameters()).device


def _kv_shape(config) -> tuple[int, int]:
    """(KV heads, head dim) of a transformers text config."""
    cfg = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    n_heads = cfg.num_attention_heads
    kv = getattr(cfg, "num_key_value_heads", None) or n_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads
    return int(kv), int(head_dim)


def cache_bytes(cache) -> int:
    """Bytes held by a transformers cache: ``sum(keys.nbytes + values.nbytes)`` over its layers."""
    total = 0
    for layer in cache.layers:
        k, v = getattr(layer, "keys", None), getattr(layer, "values", None)
        if isinstance(k, torch.Tensor):
            total += k.nbytes
        if isinstance(v, torch.Tensor):
            total += v.nbytes
    return int(total)


def random_ids(vocab_size: int, batch: int, length: int, device, seed: int = 0) -> torch.Tensor:
    """Random token ids ``[batch, length]`` (dense-model time does not depend on token values)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (batch, length), generator=g).to(device)


def _vocab(model) -> int:
    return int(model.get_output_embeddings().weight.shape[0])


@torch.inference_mode()
def prefill_once(model, input_ids: torch.Tensor):
    """One prefill forward into a fresh DynamicCache; returns (next token ids [B, 1], cache)."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    out = model(input_ids=input_ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
    return out.logits[:, -1:].argmax(-1), cache


@torch.inference_mode()
def time_prefill(model, batch: int, prompt_len: int, repeats: int = 3, warmup: int = 1, seed: int = 0
                 ) -> tuple[Timing, int]:
    """TTFT samples: prefill of ``batch`` prompts of ``prompt_len`` random tokens plus the first argmax.

    Returns:
        (Timing with one sample per repetition in seconds, KV bytes measured from the cache after
        the last prefill).

    Raises:
        torch.OutOfMemoryError / RuntimeError: the shape does not fit (the runner reports it).
    """
    dev = _device(model)
    ids = random_ids(_vocab(model), batch, prompt_len, dev, seed)
    samples, kv = [], 0
    for i in range(warmup + repeats):
        sync(dev)
        t0 = time.perf_counter()
        nxt, cache = prefill_once(model, ids)
        sync(dev)
        dt = time.perf_counter() - t0
        if i >= warmup:
            samples.append(dt)
        kv = cache_bytes(cache)
        del cache, nxt
    return Timing(tuple(samples)), kv


def static_cache(model, batch: int, context_len: int, steps: int, seed: int = 0):
    """A StaticCache of ``context_len + steps`` slots, allocated now, its slots filled with random values.

    Sliding-window layers get ``min(window, context_len + steps)`` slots (transformers'
    StaticSlidingWindowLayer).
    """
    from transformers import StaticCache

    dev = _device(model)
    dtype = next(model.parameters()).dtype
    cache = StaticCache(config=model.config, max_cache_len=context_len + steps)
    kv_heads, head_dim = _kv_shape(model.config)
    cache.early_initialization(batch, kv_heads, head_dim, dtype, dev)
    g = torch.Generator(device=dev).manual_seed(seed)
    for layer in cache.layers:
        layer.keys.normal_(generator=g)
        layer.values.normal_(generator=g)
    return cache


def set_cache_length(cache, n_tokens: int) -> None:
    """Mark a StaticCache as holding ``n_tokens`` tokens, so the next update writes at that position.

    transformers 5.x static layers write at their own counter (``cumulative_length``; sliding layers
    also keep ``cumulative_length_int``), not at the ``cache_position`` passed to the model, so every
    timed repetition rewinds the counters to the context length.
    """
    for layer in cache.layers:
        if hasattr(layer, "cumulative_length_int"):
            layer.cumulative_length_int = int(n_tokens)
        if isinstance(getattr(layer, "cumulative_length", None), torch.Tensor):
            layer.cumulative_length.fill_(min(int(n_tokens), int(layer.max_cache_len)))


@torch.inference_mode()
def time_decode(model, batch: int, context_len: int, steps: int = 4, repeats: int = 3, warmup: int = 1,
                seed: int = 0) -> tuple[Timing, int]:
    """TPOT samples: single-token decode steps of ``batch`` sequences after ``context_len`` cached tokens.

    Each repetition runs ``steps`` steps at cache positions context_len .. context_len+steps-1 of a
    pre-allocated StaticCache (``static_cache``); warm-up repetitions are not timed. CPU: each step
    timed with ``perf_counter``; CUDA: CUDA events around each step, one synchronize per repetition.

    Returns:
        (Timing with one sample per timed step, seconds; bytes of the allocated cache).
    """
    dev = _device(model)
    cuda = dev.type == "cuda"
    cache = static_cache(model, batch, context_len, steps, seed)
    start_tok = random_ids(_vocab(model), batch, 1, dev, seed)
    positions = [torch.tensor([context_len + i], device=dev) for i in range(steps)]
    samples: list[float] = []
    for r in range(warmup + repeats):
        tok = start_tok
        events = []
        set_cache_length(cache, context_len)
        sync(dev)
        for i in range(steps):
            if cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
            else:
                t0 = time.perf_counter()
            out = model(input_ids=tok, past_key_values=cache, cache_position=positions[i], use_cache=True,
                        logits_to_keep=1)
            tok = out.logits[:, -1:].argmax(-1)
            if cuda:
                e.record()
                events.append((s, e))
            elif r >= warmup:
                samples.append(time.perf_counter() - t0)
        sync(dev)
        if cuda and r >= warmup:
            samples.extend(s.elapsed_time(e) / 1e3 for s, e in events)
    kv = cache_bytes(cache)
    del cache
    return Timing(tuple(samples)), kv


@torch.inference_mode()
def generate_ids(model, prompt_ids: torch.Tensor, new_tokens: int) -> list[int]:
    """Greedy generation of exactly ``new_tokens`` tokens (no EOS stop) for the first sequence."""
    nxt, cache = prefill_once(model, prompt_ids)
    out = [nxt]
    for _ in range(new_tokens - 1):
        o = model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
        nxt = o.logits[:, -1:].argmax(-1)
        out.append(nxt)
    return torch.cat(out, dim=1)[0].tolist()


def is_oom(err: BaseException) -> bool:
    """Whether an exception means the device or host ran out of memory."""
    if isinstance(err, MemoryError):
        return True
    oom_type = getattr(torch, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(err, oom_type):
        return True
    text = str(err).lower()
    return "out of memory" in text or "can't allocate memory" in text or "not enough memory" in text


def finite_positive(x: float) -> bool:
    """True for a finite number > 0."""
    return isinstance(x, float) and math.isfinite(x) and x > 0
