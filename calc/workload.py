"""Workloads as sessions of turns: chat, RAG over shared documents, an agentic coding loop.

A session is a conversation (or an agent's task). It starts with a system prompt shared by every
session, then runs ``user_turns`` user turns; each user turn makes ``calls_per_turn`` LLM calls (1 for
chat; several for an agent, each followed by a tool whose output joins the context). Each call
generates ``reasoning_tokens`` of reasoning and ``answer_tokens`` of answer (or tool call); both are
output and billed as output. Whether the reasoning stays in the context of the next call follows
the provider's or engine's convention (``REASONING_CONTEXT``; ``calc/data/workloads.json`` cites them):

* ``"drop"``: never kept (OpenAI and Anthropic between user turns; the Qwen3 / DeepSeek-R1 chat
  templates for earlier turns).
* ``"keep"``: always kept in the context.
* ``"keep_in_tool_loop"``: kept between the calls of one user turn (OpenAI, Anthropic and Qwen3 require
  the reasoning that led to a tool call to be sent back with its result), dropped when the next user turn
  starts. Dropping it rewrites the history, so the prefix cache misses from the first dropped reasoning on.

The context is a list of segments (the system prompt, documents, each message); a prompt's block hashes
come from its segments, block by block, each hash standing for the block and everything before it
(vLLM's prefix hashing): two prompts share a block only when their segments agree up to its end.
After each call the full blocks of prompt + reasoning + answer are written to the cache
(``RequestStream.stored_ids``), as vLLM caches the blocks it decoded.

Timing: sessions start as a Poisson process (``session_rate_per_s``); a call's generation takes
output / ``GENERATION_TOKENS_PER_S`` seconds (an assumption, for the timeline only), then the tool runs
``tool_time_s`` before the next call, or the user thinks ``think_time_s`` before the next turn
(exponentially distributed). Token counts vary by a log-normal factor of mean 1 (``jitter``).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .checks import (check_choice, check_nonneg_int, check_nonneg_number, check_positive_int,
                     check_positive_number)
from .models import DATA_DIR
from .traces import MAX_BLOCK_ACCESSES, RequestStream, _offsets

REASONING_CONTEXT = ("drop", "keep", "keep_in_tool_loop")
#: Decode speed used only to place the next call in time (tokens per second per session): assumption.
GENERATION_TOKENS_PER_S = 50.0
#: Limits past which an input is a typing mistake rather than a workload.
MAX_SESSIONS = 100_000
MAX_TOKENS = 2_000_000
MAX_CALLS = 200_000


@dataclass(frozen=True)
class Workload:
    """A workload of sessions (module docstring). Token counts are means per message.

    Fields:
        name: label.
        sessions: number of sessions generated (>= 1).
        session_rate_per_s: new sessions per second (> 0).
        system_prompt_tokens: prompt shared by every session (>= 0).
        user_turns, calls_per_turn: user turns per session and LLM calls per user turn (>= 1).
        user_tokens: new user message per turn; tool_output_tokens: tool result appended after every call but
            the last of a turn.
        answer_tokens (>= 1), reasoning_tokens (>= 0): generated per call.
        reasoning_context: one of ``REASONING_CONTEXT``.
        think_time_s, tool_time_s: mean pauses between turns and between calls (>= 0).
        corpus_docs, doc_tokens, docs_per_turn, zipf_s: RAG: documents shared by all sessions, retrieved
            docs_per_turn at a time with Zipf(zipf_s) popularity, placed in the user's message (0 = none).
        jitter: sigma of the log-normal factor on each token count (0 = fixed lengths).
        seed: random seed (the same seed gives the same stream).
        source: where the numbers come from.

    Raises:
        ValueError: out-of-range values, more than ``MAX_CALLS`` calls in all, an unknown reasoning_context,
            docs_per_turn larger than corpus_docs.
    """

    name: str = "custom"
    sessions: int = 100
    session_rate_per_s: float = 1.0
    system_prompt_tokens: int = 1000
    user_turns: int = 3
    calls_per_turn: int = 1
    user_tokens: int = 200
    tool_output_tokens: int = 0
    answer_tokens: int = 300
    reasoning_tokens: int = 0
    reasoning_context: str = "drop"
    think_time_s: float = 30.0
    tool_time_s: float = 0.0
    corpus_docs: int = 0
    doc_tokens: int = 0
    docs_per_turn: int = 0
    zipf_s: float = 1.0
    jitter: float = 0.3
    seed: int = 0
    source: str = dataclasses.field(default="", compare=False)

    def __post_init__(self):
        check_positive_int(self.sessions, "sessions")
        if self.sessions > MAX_SESSIONS:
            raise ValueError(f"sessions must be at most {MAX_SESSIONS:,}, got {self.sessions:,}")
        check_positive_number(self.session_rate_per_s, "session_rate_per_s")
        for what in ("system_prompt_tokens", "user_tokens", "tool_output_tokens", "reasoning_tokens", "doc_tokens",
                     "corpus_docs", "docs_per_turn"):
            v = check_nonneg_int(getattr(self, what), what)
            if v > MAX_TOKENS:
                raise ValueError(f"{what} must be at most {MAX_TOKENS:,}, got {v:,}")
        check_positive_int(self.answer_tokens, "answer_tokens")
        check_positive_int(self.user_turns, "user_turns")
        check_positive_int(self.calls_per_turn, "calls_per_turn")
        if self.n_calls > MAX_CALLS:
            raise ValueError(f"sessions x user_turns x calls_per_turn is {self.n_calls:,} calls; at most "
                             f"{MAX_CALLS:,} are generated")
        check_choice(self.reasoning_context, REASONING_CONTEXT,
                     f"reasoning_context must be one of {', '.join(REASONING_CONTEXT)}")
        check_nonneg_number(self.think_time_s, "think_time_s")
        check_nonneg_number(self.tool_time_s, "tool_time_s")
        check_positive_number(self.zipf_s, "zipf_s")
        check_nonneg_number(self.jitter, "jitter")
        if self.docs_per_turn > self.corpus_docs:
            raise ValueError(f"docs_per_turn ({self.docs_per_turn}) cannot exceed corpus_docs ({self.corpus_docs})")
        if self.docs_per_turn and not self.doc_tokens:
            raise ValueError("doc_tokens must be positive when documents are retrieved")

    @property
    def n_calls(self) -> int:
        """LLM calls in all: sessions x user_turns x calls_per_turn."""
        return self.sessions * self.user_turns * self.calls_per_turn

    def replace(self, **changes) -> "Workload":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


@lru_cache(maxsize=1)
def _file() -> dict:
    with open(DATA_DIR / "workloads.json", encoding="utf-8") as f:
        return json.load(f)


def presets() -> dict:
    """The preset workloads of ``calc/data/workloads.json`` by key ("chat", "rag", "agentic"), as ``Workload``."""
    out = {}
    for key, row in _file()["presets"].items():
        fields = {k: v for k, v in row.items() if k in Workload.__dataclass_fields__}
        out[key] = Workload(name=row["label"], **{k: v for k, v in fields.items() if k != "name"})
    return out


def preset_notes(key: str) -> dict:
    """A preset's label, source and notes (text), for the page.

    Raises:
        ValueError: an unknown key.
    """
    rows = _file()["presets"]
    if key not in rows:
        raise ValueError(f"no preset named {key!r}; choose one of {', '.join(rows)}")
    return {k: rows[key].get(k, "") for k in ("label", "source", "notes")}


def reasoning_conventions() -> dict:
    """How each provider and engine bills reasoning and whether it keeps it in the next turn's context
    (``calc/data/workloads.json``): {provider: {billed_as, next_user_turn, inside_tool_loop, source}}."""
    return {k: dict(v) for k, v in _file()["reasoning_conventions"].items()}


class _Hasher:
    """Block ids for segment lists: a block's id stands for its content and everything before it."""

    def __init__(self, block_size: int):
        self.bs = block_size
        self.table: dict = {}

    def blocks(self, segments, reuse_segments=(), reuse_blocks=()) -> list:
        """Full-block ids of ``segments`` [(seg_id, n_tokens), ...], reusing the ids of ``reuse_blocks`` (the
        blocks of ``reuse_segments``) up to the first segment where the two lists differ."""
        bs = self.bs
        common = 0
        for a, b in zip(segments, reuse_segments):
            if a != b:
                break
            common += a[1]
        total = sum(n for _, n in segments)
        n_full = total // bs
        k = min(common // bs, len(reuse_blocks), n_full)
        out = list(reuse_blocks[:k])
        if k == n_full:
            return out
        prev = out[-1] if out else -1
        table = self.table
        # walk the segments from token k * bs; a block's key is its predecessor's id and its pieces
        pos, si, seg_start = k * bs, 0, 0
        while seg_start + segments[si][1] <= pos:
            seg_start += segments[si][1]
            si += 1
        for _ in range(k, n_full):
            end = pos + bs
            pieces = []
            while pos < end:
                sid, n = segments[si]
                seg_end = seg_start + n
                hi = min(end, seg_end)
                if hi > pos:
                    pieces.append((sid, pos - seg_start, hi - seg_start))
                pos = hi
                if hi == seg_end:
                    seg_start, si = seg_end, si + 1
            key = (prev, tuple(pieces)) if len(pieces) > 1 else (prev, pieces[0])
            bid = table.get(key)
            if bid is None:
                bid = table[key] = len(table)
            out.append(bid)
            prev = bid
        return out


def _lengths(rng, mean: int, jitter: float, size: int) -> np.ndarray:
    if mean == 0:
        return np.zeros(size, dtype=np.int64)
    if jitter == 0:
        return np.full(size, mean, dtype=np.int64)
    f = rng.lognormal(-jitter * jitter / 2.0, jitter, size)
    return np.maximum(1, np.round(mean * f)).astype(np.int64)


def expected_lookups(w: Workload, block_size: int) -> float:
    """Prompt blocks the stream of ``w`` will hold, from the mean lengths (what a replay of it looks up).

    Follows one session's context with every count at its mean: the prompt of each call, then what joins the
    context after it (reasoning if kept, the answer, the tool output); x sessions / block_size.
    """
    docs = w.docs_per_turn * w.doc_tokens
    context, total = w.system_prompt_tokens, 0.0
    for _ in range(w.user_turns):
        context += w.user_tokens + docs
        for c in range(w.calls_per_turn):
            total += context
            context += w.answer_tokens + (w.reasoning_tokens if w.reasoning_context != "drop" else 0)
            context += w.tool_output_tokens if c < w.calls_per_turn - 1 else 0
    return total * w.sessions / block_size


def generate(w: Workload, block_size: int = 512) -> RequestStream:
    """The request stream of workload ``w`` (module docstring), in arrival order.

    Args:
        w: the workload.
        block_size: tokens per block of the hashes (16 vLLM, 256 LMCache's default chunk, 512 Mooncake).

    Returns:
        ``RequestStream`` with sessions, reasoning tokens and stored (output) blocks filled in.

    Raises:
        ValueError: a block size that is not a positive integer; a stream of more than ``MAX_BLOCK_ACCESSES``
            prompt blocks expected (``expected_lookups``), refused before it is generated.
    """
    bs = check_positive_int(block_size, "block_size")
    if w.user_turns * w.calls_per_turn > 10_000:
        raise ValueError("user_turns x calls_per_turn must be at most 10,000 calls per session")
    expected = expected_lookups(w, bs)
    if expected > MAX_BLOCK_ACCESSES:
        raise ValueError(f"this workload holds about {expected:,.0f} prompt blocks of {bs} tokens; at most "
                         f"{MAX_BLOCK_ACCESSES:,} are replayed: choose a larger block size, fewer sessions or "
                         "shorter contexts")
    rng = np.random.default_rng(w.seed)
    hasher = _Hasher(bs)
    n_docs = w.corpus_docs
    next_seg = [1 + n_docs]  # 0: system prompt; 1..D: documents; then one id per message

    def new_seg(n):
        sid = next_seg[0]
        next_seg[0] += 1
        return (sid, int(n))

    if n_docs and w.docs_per_turn:
        p = 1.0 / np.arange(1, n_docs + 1) ** w.zipf_s
        p /= p.sum()
    starts = np.cumsum(rng.exponential(1.0 / w.session_rate_per_s, w.sessions))
    starts -= starts[0]
    rows = []  # (arrival, session, input, output, reasoning, prompt blocks, stored blocks)
    sys_seg = [(0, w.system_prompt_tokens)] if w.system_prompt_tokens else []
    per_call = w.user_turns * w.calls_per_turn
    for s in range(w.sessions):
        users = _lengths(rng, w.user_tokens, w.jitter, w.user_turns)
        answers = _lengths(rng, w.answer_tokens, w.jitter, per_call)
        reasons = _lengths(rng, w.reasoning_tokens, w.jitter, per_call)
        tools = _lengths(rng, w.tool_output_tokens, w.jitter, per_call)
        context = list(sys_seg)  # list of (segment, turn, is_reasoning)
        tags = [(-1, False)] * len(context)
        prev_segs, prev_blocks = (), []
        t = float(starts[s])
        for u in range(w.user_turns):
            if w.reasoning_context == "keep_in_tool_loop" and u > 0:  # the new user turn drops earlier reasoning
                keep = [i for i, (turn, is_r) in enumerate(tags) if not is_r]
                context, tags = [context[i] for i in keep], [tags[i] for i in keep]
            if n_docs and w.docs_per_turn:
                docs = rng.choice(n_docs, size=w.docs_per_turn, replace=False, p=p)
                for d in docs:
                    context.append((1 + int(d), w.doc_tokens))
                    tags.append((u, False))
            context.append(new_seg(users[u]))
            tags.append((u, False))
            for c in range(w.calls_per_turn):
                i = u * w.calls_per_turn + c
                prompt = tuple(context)
                blocks = hasher.blocks(prompt, prev_segs, prev_blocks)
                r_seg = new_seg(reasons[i]) if reasons[i] else None
                a_seg = new_seg(answers[i])
                generated = prompt + ((r_seg,) if r_seg else ()) + (a_seg,)
                gen_blocks = hasher.blocks(generated, prompt, blocks)
                n_in = sum(n for _, n in prompt)
                rows.append((t, s, n_in, int(reasons[i] + answers[i]), int(reasons[i]), blocks, gen_blocks[len(blocks):]))
                prev_segs, prev_blocks = generated, gen_blocks
                # reasoning stays for the next call unless dropped; "keep_in_tool_loop" drops it at the next user turn
                keep_r = r_seg is not None and w.reasoning_context != "drop"
                if keep_r:
                    context.append(r_seg)
                    tags.append((u, True))
                context.append(a_seg)
                tags.append((u, False))
                t += (reasons[i] + answers[i]) / GENERATION_TOKENS_PER_S
                if c < w.calls_per_turn - 1:
                    if tools[i]:
                        context.append(new_seg(tools[i]))
                        tags.append((u, False))
                    t += rng.exponential(w.tool_time_s) if w.tool_time_s else 0.0
            t += rng.exponential(w.think_time_s) if w.think_time_s else 0.0
    rows.sort(key=lambda r: (r[0], r[1]))
    prompt_lists = [r[5] for r in rows]
    stored_lists = [r[6] for r in rows]
    flat = np.fromiter((b for bl in prompt_lists for b in bl), dtype=np.int64, count=sum(map(len, prompt_lists)))
    sflat = np.fromiter((b for bl in stored_lists for b in bl), dtype=np.int64, count=sum(map(len, stored_lists)))
    return RequestStream(
        np.array([r[0] for r in rows]), np.array([r[2] for r in rows], dtype=np.int64),
        np.array([r[3] for r in rows], dtype=np.int64), bs, flat, _offsets([len(b) for b in prompt_lists]),
        np.array([r[4] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
        sflat, _offsets([len(b) for b in stored_lists]), w.name, w.source)
