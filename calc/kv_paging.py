"""Paged KV memory: a contiguous max-length slab per request against PagedAttention's fixed-size blocks.

``kv_reservation``: the KV memory reserved, used and wasted by each allocator (Kwon et al. 2023,
"Efficient Memory Management for Large Language Model Serving with PagedAttention", sections 3 and 4.1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .checks import check_nonneg_number, check_positive_int, check_positive_number

@dataclass(frozen=True)
class PagingSummary:
    """Totals of ``kv_reservation`` (bytes summed over the requests; fractions in [0, 1]).

    Fields: n_requests; block_size_tokens; max_len_tokens; used_bytes (the KV of the tokens held);
    contiguous_reserved_bytes, contiguous_wasted_bytes, contiguous_waste_fraction (wasted /
    reserved); paged_reserved_bytes, paged_wasted_bytes, paged_waste_fraction; n_blocks;
    kv_budget_bytes (or None); fit_contiguous and fit_paged: how many sequences of the stream's
    mean length fit in the budget with each allocator (None without a budget).
    """

    n_requests: int
    block_size_tokens: int
    max_len_tokens: int
    used_bytes: float
    contiguous_reserved_bytes: float
    contiguous_wasted_bytes: float
    contiguous_waste_fraction: float
    paged_reserved_bytes: float
    paged_wasted_bytes: float
    paged_waste_fraction: float
    n_blocks: int
    kv_budget_bytes: float | None = None
    fit_contiguous: int | None = None
    fit_paged: int | None = None


def kv_reservation(lengths_tokens, kv_bytes_per_token: float, max_len_tokens: int,
                   block_size_tokens: int = 16, kv_budget_bytes: float | None = None
                   ) -> tuple[pd.DataFrame, PagingSummary]:
    """KV memory reserved, used and wasted per request: contiguous max-length slabs against pages.

    Contiguous: each request reserves a slab for ``max_len_tokens`` up front (it cannot know how
    long it will run), so it wastes ``max_len - length`` tokens (the vLLM paper's "reservation"
    and "internal fragmentation"; external fragmentation between slabs is not modelled, which
    makes this the kind case). Paged: ceil(length / block) blocks of ``block_size_tokens`` tokens
    are allocated on demand, so the only waste is the unfilled tail of the last block, at most
    block_size - 1 tokens per request.

    Args:
        lengths_tokens: 1-D array-like of actual sequence lengths (prompt + output), ints in
            [1, max_len_tokens].
        kv_bytes_per_token: KV bytes of one token (e.g. ``calc.kv_bytes_per_token(model)``), > 0.
        max_len_tokens: the length the contiguous allocator reserves per request.
        block_size_tokens: tokens per KV block (vLLM's default is 16).
        kv_budget_bytes: optional KV memory available (bytes); adds the sequence counts that fit.
    Returns:
        (DataFrame with one row per request: ``request``, ``length_tokens``, ``blocks``,
        ``used_bytes``, ``contiguous_reserved_bytes``, ``contiguous_wasted_bytes``,
        ``paged_reserved_bytes``, ``paged_wasted_bytes``; ``PagingSummary`` of the totals).
    Raises:
        ValueError: empty or non-integer lengths, a length outside [1, max_len_tokens], a
            non-positive kv_bytes_per_token, max_len_tokens or block_size_tokens, a negative budget.
    Source: Kwon et al., PagedAttention (SOSP 2023), sections 3 (memory challenges, Fig. 2-3) and
    4.1-4.2 (block table, block size 16); CS336 lecture 10, Inference ("a contiguous cache slab per request wastes
    memory twice").
    """
    per_token = check_positive_number(kv_bytes_per_token, "kv_bytes_per_token")
    max_len = check_positive_int(max_len_tokens, "max_len_tokens")
    block = check_positive_int(block_size_tokens, "block_size_tokens")
    lengths = np.asarray(lengths_tokens)
    if lengths.ndim != 1 or lengths.size == 0:
        raise ValueError("lengths_tokens must be a non-empty 1-D list of token counts")
    if not np.issubdtype(lengths.dtype, np.integer):
        if not np.issubdtype(lengths.dtype, np.number) or not np.all(np.mod(lengths, 1) == 0):
            raise ValueError("lengths_tokens must be whole token counts")
        lengths = lengths.astype(np.int64)
    if np.any(lengths < 1) or np.any(lengths > max_len):
        raise ValueError(f"every length must lie in [1, max_len_tokens = {max_len}], "
                         f"got values from {int(lengths.min())} to {int(lengths.max())}")
    blocks = -(-lengths // block)
    used = lengths * per_token
    paged = blocks * block * per_token
    contiguous = np.full(lengths.size, max_len * per_token)
    df = pd.DataFrame({"request": np.arange(lengths.size), "length_tokens": lengths, "blocks": blocks,
                       "used_bytes": used, "contiguous_reserved_bytes": contiguous,
                       "contiguous_wasted_bytes": contiguous - used,
                       "paged_reserved_bytes": paged, "paged_wasted_bytes": paged - used})
    fit_c = fit_p = None
    if kv_budget_bytes is not None:
        kv_budget_bytes = check_nonneg_number(kv_budget_bytes, "kv_budget_bytes")
        fit_c = int(kv_budget_bytes // (max_len * per_token))
        fit_p = int(kv_budget_bytes // float(paged.mean()))
    c_res, p_res, u = float(contiguous.sum()), float(paged.sum()), float(used.sum())
    summary = PagingSummary(
        n_requests=int(lengths.size), block_size_tokens=block, max_len_tokens=max_len, used_bytes=u,
        contiguous_reserved_bytes=c_res, contiguous_wasted_bytes=c_res - u,
        contiguous_waste_fraction=(c_res - u) / c_res, paged_reserved_bytes=p_res,
        paged_wasted_bytes=p_res - u, paged_waste_fraction=(p_res - u) / p_res,
        n_blocks=int(blocks.sum()), kv_budget_bytes=kv_budget_bytes, fit_contiguous=fit_c, fit_paged=fit_p)
    return df, summary
