"""The roofline of one accelerator: the decode step and the prefill as arrays, arithmetic intensity,
critical batch, attention FLOPs, the batch grid of sweeps (the public ``decode_step_time``,
``prefill_time`` and ``decode_sweep``, for one accelerator or a layout, are in ``calc.step``).

The napkin model of one decode step (the inference course, week 11, step 4; Pope et al. 2022):
``total_s = B*KV/W + max(weight_bytes/W, 2*N_active*B/P)`` with KV the cache bytes of one sequence.
It is a lower bound: a real step is usually 1.2-2x slower. Prefill is the same roofline with
T prompt tokens per sequence: compute ``2*N_active*B*T`` plus causal attention, bytes = weights read
plus the KV written.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import check_choice, check_nonneg_number, check_positive_int
from .dtypes import dtype_bytes
from .hardware import Accelerator
from .kv import decode_kv_read_bytes_array, kv_cache_bytes_array
from .layers import COMPRESSED_KINDS, attention_layer_spans, compress_ratio
from .memory import check_embedding, input_embedding_params, weight_bytes, weight_bytes_read
from .models import ModelConfig


@dataclass(frozen=True)
class StepTime:
    """Time of one forward step, split into its roofline parts (seconds).

    Fields:
        weights_s: weight bytes read / W.
        kv_s: KV-cache bytes read (decode) or written (prefill) / W.
        compute_s: FLOPs / P.
        total_s: ``kv_s + max(weights_s, compute_s) + comm_s`` (the inference course, week 11, step 4:
            the KV read does not overlap the max of weight read and compute).
        comm_s: collectives between accelerators (all-reduce, all-to-all, stage hops; ``calc.parallel``);
            0 on one accelerator.
        tokens_per_s: tokens this step yields per second: B / total_s for decode (one new token per
            sequence), B*T / total_s for prefill and for multi-token verification steps.
        flops: FLOPs of the step; bytes: bytes moved; batch, tokens: B and tokens per sequence (T).
    """

    weights_s: float
    kv_s: float
    compute_s: float
    total_s: float
    tokens_per_s: float
    flops: float = 0.0
    bytes: float = 0.0
    batch: int = 1
    tokens: int = 1
    comm_s: float = 0.0

    @property
    def arithmetic_intensity(self) -> float:
        """FLOPs per byte moved of this step."""
        return self.flops / self.bytes if self.bytes else float("inf")

    @property
    def memory_s(self) -> float:
        """Time to move every byte of the step once: ``weights_s + kv_s`` (= bytes / W)."""
        return self.weights_s + self.kv_s

    @property
    def bound(self) -> str:
        """'compute' when ``compute_s > memory_s = weights_s + kv_s``, else 'memory'.

        The same test as the step's place on the roofline chart: compute_s > memory_s is
        FLOPs/P > bytes/W, i.e. arithmetic intensity FLOPs/bytes above the ridge P/W (Williams et al.
        2009). The KV read counts: Llama-3-8B on an H100 at 8K and B = 1,024 spends 95% of its
        step reading the cache and is memory-bound, although its 2NB/P exceeds the weight read.
        """
        return bound_label(self.compute_s, self.weights_s + self.kv_s)


def bound_label(compute_s, memory_s):
    """'compute' where ``compute_s > memory_s`` (seconds; arrays broadcast), else 'memory'.

    The one definition of "bound" (``StepTime.bound``, the sweeps' bound columns and the roofline
    chart's side of the ridge): memory_s is all bytes moved / W, weights and KV cache together.
    """
    out = np.where(np.asarray(compute_s) > np.asarray(memory_s), "compute", "memory")
    return str(out) if out.ndim == 0 else out


def critical_batch(accelerator: Accelerator, weight_dtype: str = "bf16") -> float:
    """Tokens per step at which decode's matmuls turn compute-bound.

    A decode matmul does 2*N*B FLOPs on N*bytes of weights, so its intensity is 2B/bytes FLOP/byte;
    it meets the ridge P/W at ``B* = P * bytes / (2 * W)``. In bf16 that is P/W: about 295 on an
    H100 SXM (989 TFLOP/s / 3.35 TB/s; the inference course, week 11, step 3; CS336 lecture 10 (Inference) "One ratio explains the lecture").

    Raises:
        ValueError: unknown dtype.
    """
    b = dtype_bytes(weight_dtype, "weight_dtype")
    return accelerator.compute_flops(weight_dtype) * b / (2.0 * accelerator.bandwidth_bytes_per_s)


def matmul_params(model: ModelConfig, embedding: str = "gather") -> int:
    """Parameters a token multiplies by (2 FLOPs each): N_active, less the untied input embedding
    under ``embedding="gather"`` (a lookup, no matmul); the course's napkin ("table") counts all.

    Raises:
        ValueError: unknown embedding mode.
    """
    check_embedding(embedding)
    return model.active_params - (input_embedding_params(model) if embedding == "gather" else 0)


#: Which prompt positions prefill's LM head computes logits for (``logits`` keyword).
LOGITS_MODES = ("all", "last")


def check_logits(logits) -> str:
    """Return ``logits`` if it is "all" or "last".

    Raises:
        ValueError: any other value, with the two choices explained.
    """
    return check_choice(logits, LOGITS_MODES, "logits must be 'all' (the course's 2*N*B*T: the LM head multiplies "
                        "every prompt token) or 'last' (engines: logits only for each sequence's last prompt token)")


def head_flops_skipped(model: ModelConfig, prompt_len, batch, logits: str = "all"):
    """FLOPs of the LM head a prefill pass does not run: ``2 * V * D * B * (T - 1)`` under ``logits="last"``,
    0 under "all". Accepts arrays of prompt lengths and batches (broadcast).

    Serving engines compute logits only where they sample: vLLM's model runner gathers the hidden state
    of each request's last scheduled token before the head (vllm/v1/worker/gpu_model_runner.py,
    ``_prepare_inputs``: ``logits_indices = query_start_loc[1:] - 1``; ``compute_logits`` then runs on
    ``hidden_states[logits_indices]``); SGLang's LogitsProcessor prunes an extend batch to
    ``torch.cumsum(extend_seq_lens) - 1`` unless prompt logprobs are asked for
    (python/sglang/srt/layers/logits_processor.py, ``extend_return_logprob`` false). The course's
    ``2*N*B*T`` ("all", the default) charges the head for every prompt token. Llama-3-8B at T = 8,192:
    2 x 128,256 x 4,096 x 8,191 = 8.61e12 FLOPs, 8.7 ms of an H100's bf16 peak.

    Raises:
        ValueError: unknown ``logits``.
    """
    check_logits(logits)
    t = np.asarray(prompt_len, dtype=float)
    out = (2.0 * model.vocab_size * model.d_model * np.asarray(batch, dtype=float) * np.maximum(t - 1.0, 0.0)
           if logits == "last" else np.zeros(np.broadcast(t, np.asarray(batch)).shape))
    return float(out) if np.ndim(out) == 0 else out


def decode_arrays(model, accelerator, batch, context_len, weight_dtype, kv_dtype, query_tokens=1,
                   sliding="cap", mla="latent", embedding="gather"):
    """Vectorised decode step over broadcastable arrays of batch and context (no validation)."""
    w = accelerator.bandwidth_bytes_per_s
    p = accelerator.compute_flops(weight_dtype)
    b = np.asarray(batch, dtype=float)
    wbytes = np.asarray(weight_bytes_read(model, b * query_tokens, weight_dtype, embedding))
    kvbytes = decode_kv_read_bytes_array(model, context_len, b, kv_dtype, sliding, mla)
    flops = 2.0 * matmul_params(model, embedding) * b * query_tokens
    weights_s = wbytes / w
    kv_s = kvbytes / w
    compute_s = flops / p
    total_s = kv_s + np.maximum(weights_s, compute_s)
    return dict(weights_s=weights_s, kv_s=kv_s, compute_s=compute_s, total_s=total_s,
                tokens_per_s=b * query_tokens / total_s if query_tokens > 1 else b / total_s,
                flops=flops, bytes=wbytes + kvbytes, weight_bytes_read=wbytes, kv_bytes=kvbytes)


def attended_keys(prompt_len, window: int | None = None, past_len: int = 0):
    """Keys attended, summed over the ``prompt_len`` new queries of one causal sequence, in one layer.

    Query i (0-based) after ``past_len`` cached tokens sees ``past_len + i + 1`` keys, at most W in a
    sliding layer: ``sum over k = a..b of min(k, W)`` with a = past + 1, b = past + T, in closed form
    ``(m(m+1) - (a-1)a) / 2 + W (b - m)``, m = clip(W, a - 1, b); without a window ``(a + b) T / 2``.
    Accepts a numpy array of prompt lengths (no validation: callers check their inputs).
    """
    t = np.asarray(prompt_len, dtype=float)
    a, b = past_len + 1.0, past_len + t
    if window is None:
        out = (a + b) * t / 2.0
    else:
        m = np.clip(float(window), a - 1.0, b)
        out = (m * (m + 1.0) - (a - 1.0) * a) / 2.0 + window * (b - m)
    return float(out) if np.ndim(out) == 0 else out


def _attention_head_dims(model: ModelConfig) -> tuple[int, int]:
    """(H_qk, H_v): the query/key and value widths of one head (MLA: nope + rope, and v_head_dim)."""
    if model.attention == "mla":
        h_qk = (model.qk_nope_head_dim or model.head_dim - model.qk_rope_head_dim) + model.qk_rope_head_dim
        return h_qk, model.v_head_dim or model.head_dim
    return model.head_dim, model.head_dim


def chunked_attended_keys(prompt_len, chunk: int, past_len: int = 0):
    """Keys attended in one chunked-attention layer (Llama 4), summed over ``prompt_len`` new queries.

    The query at position p (1-based) sees the ((p - 1) mod C) + 1 keys of its own chunk; the sum
    up to n is ``q * C(C+1)/2 + r(r+1)/2`` with q = n // C, r = n mod C, taken between
    ``past_len`` and ``past_len + T``. Accepts a numpy array of prompt lengths.
    """
    def upto(n):
        q, r = np.floor_divide(n, chunk), np.mod(n, chunk)
        return q * chunk * (chunk + 1) / 2.0 + r * (r + 1) / 2.0
    out = upto(past_len + np.asarray(prompt_len, dtype=float)) - upto(float(past_len))
    return float(out) if np.ndim(out) == 0 else out


def compressed_attended_keys(prompt_len, ratio: int, top_k: int | None = None, past_len: int = 0):
    """Compressed entries attended in one DeepSeek-V4 csa / hca layer, summed over ``prompt_len`` new queries.

    The query at position p (1-based) sees the floor(p / r) entries compressed so far (DeepSeek's
    inference/model.py ``get_compress_topk_idxs``: ``arange((start_pos + 1) // ratio)``; the indexer scores
    ``end_pos // ratio`` of them), at most ``top_k`` (csa's indexer selection; hca: all). With
    ``G(m) = sum_{p<=m} floor(p / r) = r q (q - 1) / 2 + q (m - q r + 1)``, q = m // r, the sum up to n is
    ``G(min(n, K r - 1)) + K max(0, n - K r + 1)`` (each query past K r - 1 attends K), taken between
    ``past_len`` and ``past_len + T``. Accepts a numpy array of prompt lengths.
    """
    def floor_sum(m):
        q = np.floor_divide(m, ratio)
        return ratio * q * (q - 1.0) / 2.0 + q * (m - q * ratio + 1.0)

    def upto(n):
        n = np.asarray(n, dtype=float)
        if top_k is None:
            return floor_sum(n)
        edge = float(top_k * ratio - 1)
        return floor_sum(np.minimum(n, edge)) + top_k * np.maximum(n - edge, 0.0)
    out = upto(past_len + np.asarray(prompt_len, dtype=float)) - upto(float(past_len))
    return float(out) if np.ndim(out) == 0 else out


def block_sparse_attended_keys(prompt_len, top_k: int, block: int, past_len: int = 0):
    """Keys attended in one MiniMax-M3 sparse layer (MSA), summed over ``prompt_len`` new queries.

    The query at position p (1-based) attends to ``top_k`` blocks of ``block`` tokens, the last its own
    (MiniMax-AI/MSA @32877839, README: "the local block in the last valid position"): all p keys while
    p <= k b, then (k - 1) b + ((p - 1) mod b) + 1. The sum up to n is ``m (m + 1) / 2`` (m = min(n, k b)) plus,
    over the c = n - k b later queries, ``c (k - 1) b + q b (b + 1) / 2 + r (r + 1) / 2`` (q = c // b,
    r = c mod b), taken between ``past_len`` and ``past_len + T``. Accepts a numpy array of prompt lengths.
    """
    edge = float(top_k * block)

    def upto(n):
        m = np.minimum(n, edge)
        c = np.maximum(n - edge, 0.0)
        q, r = np.floor_divide(c, block), np.mod(c, block)
        return m * (m + 1.0) / 2.0 + c * (top_k - 1) * block + q * block * (block + 1) / 2.0 + r * (r + 1.0) / 2.0
    out = upto(past_len + np.asarray(prompt_len, dtype=float)) - upto(float(past_len))
    return float(out) if np.ndim(out) == 0 else out


def attention_flops_array(model: ModelConfig, prompt_len, batch, past_len: int = 0):
    """Vectorised ``attention_flops`` over an array of prompt lengths (no validation)."""
    h_qk, h_v = _attention_head_dims(model)
    keys = np.zeros_like(np.asarray(prompt_len, dtype=float))
    index = np.zeros_like(keys)
    for kind, span, n in attention_layer_spans(model):
        if model.has_global_shapes:  # Gemma 4: the keys of its global layers weigh their wider heads
            n = n * model.head_dim_of(kind) / model.head_dim
        if kind == "chunked":
            keys = keys + n * chunked_attended_keys(prompt_len, span, past_len)
        elif kind == "sparse":  # MiniMax-M3: the top-k blocks, the query's own the last
            keys = keys + n * block_sparse_attended_keys(prompt_len, span, model.index_block_size or 1, past_len)
        else:  # full / parallel: no limit; sliding, csa, hca: W; sparse MLA: the top-k selected keys
            keys = keys + n * attended_keys(prompt_len, span, past_len)
        if kind in ("sparse_mla", "sparse"):  # the indexer scores every key: 2 * heads * d_I per key
            index = index + n * 2.0 * model.index_n_heads * model.index_head_dim * attended_keys(prompt_len, None,
                                                                                                 past_len)
        if kind in COMPRESSED_KINDS:  # DeepSeek-V4: the compressed entries besides the window
            r = compress_ratio(model, kind)
            top = model.index_topk if kind == "csa" else None
            keys = keys + n * compressed_attended_keys(prompt_len, r, top, past_len)
            if kind == "csa":  # its indexer scores every compressed entry
                index = index + n * 2.0 * model.index_n_heads * model.index_head_dim * compressed_attended_keys(
                    prompt_len, r, None, past_len)
    return batch * (2.0 * model.n_heads * (h_qk + h_v) * keys + index)


def attention_flops(model: ModelConfig, prompt_len: int, batch: int = 1, past_len: int = 0) -> float:
    """FLOPs of causal attention scores and weighted values for ``prompt_len`` new tokens per sequence.

    Query i (0-based) of a sequence with ``past_len`` cached tokens attends to ``past_len + i + 1``
    keys (at most W in a sliding layer; ``attended_keys``); each key costs 2*H_qk FLOPs for the score
    and 2*H_v for the value, per query head: ``sum over layers of 2 * N * (H_qk + H_v) * attended_keys``.
    Chunked layers attend within their chunk (``chunked_attended_keys``), DeepSeek-V3.2's sparse
    layers to top-k keys plus the indexer's 2 * index_heads * d_I per key over all keys (MiniMax-M3's sparse
    layers: the top-k blocks, ``block_sparse_attended_keys``, and the same indexer term); DeepSeek-V4's
    csa and hca layers to their window of W tokens plus the compressed entries (``compressed_attended_keys``:
    floor(p / r), at most top-k in a csa layer), a csa layer's indexer 2 * index_heads * d_I per compressed
    entry, all of them (H_qk = H_v = 512: the 448 + 64 entry is key and value); Gemma 4's global layers their own
    head width (``ModelConfig.head_dim_of``: 512 beside its sliding layers' 256);
    constant-state layers (Mamba, Gated DeltaNet, lightning) do no quadratic attention (their
    projections are in the 2*N*T term).
    Causal, full attention from an empty cache: about ``2 * N * 2H * T^2 / 2`` per layer (Kaplan et al.
    2020, Table 1, the 2*n_layer*n_ctx*d_attn term, made causal).

    Raises:
        ValueError: non-positive prompt_len or batch, negative past_len.
    """
    t = check_positive_int(prompt_len, "prompt_len")
    b = check_positive_int(batch, "batch")
    past = int(check_nonneg_number(past_len, "past_len"))
    return float(attention_flops_array(model, t, b, past))


def prefill_arrays(model, accelerator, prompt_len, batch, weight_dtype, kv_dtype, sliding="cap", mla="latent",
                    embedding="gather", logits="all"):
    """Vectorised prefill roofline over an array of prompt lengths (no validation)."""
    t = np.asarray(prompt_len, dtype=float)
    w = accelerator.bandwidth_bytes_per_s
    wbytes = np.asarray(weight_bytes_read(model, batch * t, weight_dtype, embedding), dtype=float)
    kvbytes = np.asarray(kv_cache_bytes_array(model, t, batch, kv_dtype, sliding, mla), dtype=float)
    attn = attention_flops_array(model, t, batch)
    flops = 2.0 * matmul_params(model, embedding) * batch * t - head_flops_skipped(model, t, batch, logits) + attn
    weights_s, kv_s = wbytes / w, kvbytes / w
    compute_s = flops / accelerator.compute_flops(weight_dtype)
    total = kv_s + np.maximum(weights_s, compute_s)
    return dict(weights_s=weights_s, kv_s=kv_s, compute_s=compute_s, total_s=total,
                tokens_per_s=batch * t / total, flops=flops, attention_flops=attn, bytes=wbytes + kvbytes)


def arithmetic_intensity_decode(model: ModelConfig, batch: int, context_len: int, weight_dtype: str = "bf16",
                                kv_dtype: str = "bf16", embedding: str = "gather") -> float:
    """FLOPs per byte of one decode step: ``2*N_active*B / (weights read + B*KV)``.

    Below the ridge P/W the step is memory-bound (``StepTime.bound``); without cache it approaches
    2B/bytes-per-weight. ``embedding``: as in ``decode_step_time``.
    """
    b = check_positive_int(batch, "batch")
    s = check_positive_int(context_len, "context_len")
    wb = float(weight_bytes_read(model, b, weight_dtype, embedding))
    kv = float(decode_kv_read_bytes_array(model, s, b, kv_dtype))
    return 2.0 * matmul_params(model, embedding) * b / (wb + kv)


def arithmetic_intensity_prefill(model: ModelConfig, prompt_len: int, batch: int = 1,
                                 weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                                 embedding: str = "gather", logits: str = "all") -> float:
    """FLOPs per byte of a prefill pass (matmuls + causal attention over weights + KV written);
    ``logits`` as ``prefill_time``."""
    t = check_positive_int(prompt_len, "prompt_len")
    b = check_positive_int(batch, "batch")
    flops = (2.0 * matmul_params(model, embedding) * b * t - head_flops_skipped(model, t, b, logits)
             + attention_flops(model, t, b))
    return flops / (float(weight_bytes_read(model, b * t, weight_dtype, embedding))
                    + float(kv_cache_bytes_array(model, t, b, kv_dtype)))


def batch_where_cache_equals_weights(model: ModelConfig, context_len: int, weight_dtype: str = "bf16",
                                     kv_dtype: str = "bf16") -> float:
    """B at which the batch's cache weighs as much as the weights: weight bytes / KV per sequence
    (the inference course, week 11, step 4: about 15 for Llama-3-8B at 8k; problem 5: about 39 for the 13B at 4k)."""
    s = check_positive_int(context_len, "context_len")
    return weight_bytes(model, weight_dtype) / float(kv_cache_bytes_array(model, s, 1, kv_dtype))


#: Default decode sweeps list every batch up to this size...
SWEEP_DENSE_BATCHES = 1024


#: ...and at most about this many batches in all (geometric spacing above the dense part).
SWEEP_MAX_POINTS = 2048


def batch_grid(ceiling: int) -> np.ndarray:
    """Batch sizes 1 .. max(1, ceiling): all of them up to ``SWEEP_DENSE_BATCHES``, then a geometric
    grid (rounded, unique) that ends exactly at ``ceiling``; at most ``SWEEP_MAX_POINTS`` + 1 values.

    Example: ceiling 300 gives 1..300; ceiling 10^8 gives 1..1024 and ~1,024 batches from 1,024 to 10^8.
    """
    top = max(1, int(ceiling))
    if top <= SWEEP_MAX_POINTS:
        return np.arange(1, top + 1)
    dense = np.arange(1, SWEEP_DENSE_BATCHES + 1)
    sparse = np.round(np.geomspace(SWEEP_DENSE_BATCHES, top, SWEEP_MAX_POINTS - SWEEP_DENSE_BATCHES)).astype(np.int64)
    return np.unique(np.concatenate([dense, sparse, [top]]))
