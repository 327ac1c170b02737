"""Request traces: the stream of requests a prefix cache sees, read from public trace formats.

A ``RequestStream`` is what every prefix-cache replay in calc consumes: for each request its arrival
time, its token counts and the list of block hashes of its prompt (equal hashes = the same prefix
content, so the same KV cache). Two public formats are read:

* the Mooncake FAST'25 trace (kvcache-ai/Mooncake, ``FAST25-release/traces``, Apache-2.0): JSON lines
  ``{"timestamp": ms, "input_length": tokens, "output_length": tokens, "hash_ids": [...]}``, where
  ``hash_ids`` are remapped hashes of the prompt's 512-token blocks (README of that folder: "Identical
  hash IDs indicate reusable prefix KV cache blocks"). Qin et al., "Mooncake: Trading More Storage for
  Less Computation", FAST'25, appendix.
* the Azure LLM inference trace 2023 (Azure/AzurePublicDataset, ``data/AzureLLMInferenceTrace_*.csv``,
  CC-BY-4.0): CSV ``TIMESTAMP,ContextTokens,GeneratedTokens``. Patel et al., "Splitwise", ISCA 2024.
  It has no prefix information: each prompt is unique unless the caller assumes a shared prefix
  (``shared_prefix_tokens``: the first tokens of every prompt are the same, as a common system prompt).

Uploads are bounded (``MAX_UPLOAD_BYTES``, ``MAX_REQUESTS``) and a malformed line raises a
``ValueError`` that names the line number and what is wrong with it.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from .checks import check_nonneg_int, check_positive_int
from .models import DATA_DIR

#: Largest upload read (bytes) and most requests kept: above them the trace is refused, not cut silently.
MAX_UPLOAD_BYTES = 50_000_000
MAX_REQUESTS = 200_000
#: Largest prompt a line may declare (tokens): beyond any context window, so a typing or unit mistake.
MAX_INPUT_TOKENS = 10_000_000
#: Most block lookups + stores a replay takes on (a few seconds of replay on a small machine).
MAX_BLOCK_ACCESSES = 3_000_000
#: Block size of the Mooncake trace's hash_ids (tokens), from its README.
MOONCAKE_BLOCK_TOKENS = 512

TRACE_DIR = DATA_DIR / "traces"
#: The shipped samples: file name -> (format, description, source, license).
SAMPLES = {
    "mooncake_conversation_2000.jsonl": (
        "mooncake", "Mooncake FAST'25 conversation trace, first 2,000 requests (669 s)",
        "github.com/kvcache-ai/Mooncake FAST25-release/traces/conversation_trace.jsonl @ 3b5a5941", "Apache-2.0"),
    "azure_llm_conv_2023_2000.csv": (
        "azure", "Azure LLM inference trace 2023, conversation, first 2,000 requests (about 6 min)",
        "github.com/Azure/AzurePublicDataset data/AzureLLMInferenceTrace_conv.csv @ b469a113", "CC-BY-4.0"),
}


@dataclass(frozen=True, eq=False)
class RequestStream:
    """Requests in arrival order, with the block hashes of each prompt (CSR layout).

    Fields (numpy arrays of length R = number of requests unless said otherwise):
        arrival_s: float64, seconds from the first request (non-decreasing).
        input_tokens, output_tokens: int64 prompt and generated tokens (output includes reasoning).
        reasoning_tokens: int64, the part of ``output_tokens`` spent reasoning (0 for traces).
        session: int64 session id (-1 when the trace has none).
        block_size: tokens per block of the hashes below.
        block_ids: int64, the prompt blocks of every request, concatenated.
        block_offsets: int64, R + 1 entries; request r's blocks are block_ids[block_offsets[r]:block_offsets[r+1]].
        stored_ids, stored_offsets: blocks written to the cache after request r generated (its output's
            full blocks, which the next turn may reuse); empty for traces (R + 1 zeros).
        name, source: labels for the page and the CSV.
    """

    arrival_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    block_size: int
    block_ids: np.ndarray
    block_offsets: np.ndarray
    reasoning_tokens: np.ndarray | None = None
    session: np.ndarray | None = None
    stored_ids: np.ndarray | None = None
    stored_offsets: np.ndarray | None = None
    name: str = ""
    source: str = field(default="", compare=False)

    def __post_init__(self):
        n = len(self.arrival_s)
        check_positive_int(self.block_size, "block_size")
        if len(self.block_offsets) != n + 1:
            raise ValueError("block_offsets must have one entry more than there are requests")
        zeros = np.zeros(n, dtype=np.int64)
        if self.reasoning_tokens is None:
            object.__setattr__(self, "reasoning_tokens", zeros)
        if self.session is None:
            object.__setattr__(self, "session", zeros - 1)
        if self.stored_ids is None:
            object.__setattr__(self, "stored_ids", np.zeros(0, dtype=np.int64))
            object.__setattr__(self, "stored_offsets", np.zeros(n + 1, dtype=np.int64))

    @property
    def n_requests(self) -> int:
        """R, the number of requests."""
        return len(self.arrival_s)

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last arrival (0 for a single request)."""
        return float(self.arrival_s[-1] - self.arrival_s[0]) if self.n_requests else 0.0

    @property
    def n_block_accesses(self) -> int:
        """Prompt blocks looked up plus blocks stored, over the whole stream (the replay's work)."""
        return int(len(self.block_ids) + len(self.stored_ids))

    def blocks_of(self, r: int) -> np.ndarray:
        """The prompt block hashes of request ``r``."""
        return self.block_ids[self.block_offsets[r]:self.block_offsets[r + 1]]

    def head(self, n: int) -> "RequestStream":
        """The first ``n`` requests (all of them when n >= R)."""
        n = min(check_positive_int(n, "n"), self.n_requests)
        b, s = int(self.block_offsets[n]), int(self.stored_offsets[n])
        return RequestStream(self.arrival_s[:n], self.input_tokens[:n], self.output_tokens[:n], self.block_size,
                             self.block_ids[:b], self.block_offsets[:n + 1], self.reasoning_tokens[:n],
                             self.session[:n], self.stored_ids[:s], self.stored_offsets[:n + 1], self.name,
                             self.source)


def _offsets(lengths) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=out[1:])
    return out


def _check_size(data) -> str:
    if isinstance(data, bytes):
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValueError(f"the trace is {len(data) / 1e6:,.1f} MB; at most {MAX_UPLOAD_BYTES / 1e6:,.0f} MB "
                             "is read (cut it to fewer requests)")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValueError(f"the trace is not UTF-8 text (byte {exc.start})") from None
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the trace has {len(data):,} characters; at most {MAX_UPLOAD_BYTES:,} are read")
    return data.lstrip("\ufeff")


def _int_field(obj: dict, key: str, line_no: int, minimum: int = 0) -> int:
    if key not in obj:
        raise ValueError(f"line {line_no}: the field {key!r} is missing")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or float(v) != int(v):
        raise ValueError(f"line {line_no}: {key} must be a whole number, got {v!r}")
    v = int(v)
    if v < minimum:
        raise ValueError(f"line {line_no}: {key} must be at least {minimum}, got {v}")
    if key == "input_length" and v > MAX_INPUT_TOKENS:
        raise ValueError(f"line {line_no}: input_length {v:,} is longer than any context window")
    return v


def read_mooncake(data, name: str = "uploaded trace", source: str = "") -> RequestStream:
    """Read a trace in the Mooncake FAST'25 format (JSON lines; module docstring).

    Args:
        data: the file's bytes or text. Blank lines are skipped.

    Returns:
        ``RequestStream`` with block_size 512, arrival_s = (timestamp - first timestamp) / 1000,
        requests sorted by timestamp (stable).

    Raises:
        ValueError: more than ``MAX_UPLOAD_BYTES`` or ``MAX_REQUESTS``; a line that is not a JSON object,
            lacks a field, has a negative or non-integer count or hash id; a request with more hash_ids than
            its input_length needs blocks (ceil(input_length / 512)); no request at all. The message names
            the line ("line 7: ...").
    """
    text = _check_size(data)
    ts, ins, outs, lens, ids = [], [], [], [], []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {line_no}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"line {line_no}: expected a JSON object with timestamp, input_length, "
                             f"output_length and hash_ids, got {type(obj).__name__}")
        t = obj.get("timestamp")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
            raise ValueError(f"line {line_no}: timestamp must be a number of milliseconds >= 0, got {t!r}")
        n_in = _int_field(obj, "input_length", line_no, 1)
        n_out = _int_field(obj, "output_length", line_no)
        h = obj.get("hash_ids")
        if not isinstance(h, list) or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in h):
            raise ValueError(f"line {line_no}: hash_ids must be a list of non-negative integers")
        if len(h) > -(-n_in // MOONCAKE_BLOCK_TOKENS):
            raise ValueError(f"line {line_no}: {len(h)} hash_ids for {n_in} input tokens; at most "
                             f"{-(-n_in // MOONCAKE_BLOCK_TOKENS)} blocks of {MOONCAKE_BLOCK_TOKENS} tokens fit")
        ts.append(t), ins.append(n_in), outs.append(n_out), lens.append(len(h)), ids.extend(h)
        if len(ts) > MAX_REQUESTS:
            raise ValueError(f"the trace has more than {MAX_REQUESTS:,} requests; cut it to fewer")
    if not ts:
        raise ValueError("the trace has no request (every line is empty)")
    t = np.asarray(ts, dtype=np.float64)
    order = np.argsort(t, kind="stable")
    offsets = _offsets(lens)
    flat = np.asarray(ids, dtype=np.int64)
    if not np.all(order[:-1] < order[1:]):  # out of order: regroup the blocks request by request
        flat = np.concatenate([flat[offsets[r]:offsets[r + 1]] for r in order]) if len(flat) else flat
        offsets = _offsets(np.asarray(lens)[order])
    t = t[order]
    return RequestStream((t - t[0]) / 1000.0, np.asarray(ins, dtype=np.int64)[order],
                         np.asarray(outs, dtype=np.int64)[order], MOONCAKE_BLOCK_TOKENS, flat, offsets,
                         name=name, source=source)


def _parse_time(value: str, line_no: int) -> float:
    value = value.strip()
    try:
        return float(value)  # seconds, as BurstGPT's Timestamp column
    except ValueError:
        pass
    try:  # Azure: "2023-11-16 18:15:46.6805900" (7 fractional digits; Python reads at most 6)
        head, _, frac = value.partition(".")
        base = datetime.fromisoformat(head.replace("T", " "))
        return base.timestamp() + (float("0." + frac) if frac else 0.0)
    except ValueError:
        raise ValueError(f"line {line_no}: TIMESTAMP {value!r} is neither seconds nor a date "
                         "like 2023-11-16 18:15:46.68") from None


def read_token_csv(data, name: str = "uploaded trace", source: str = "", shared_prefix_tokens: int = 0,
                   block_size: int = 512) -> RequestStream:
    """Read a trace of timestamps and token counts: the Azure LLM inference CSV (``TIMESTAMP,ContextTokens,
    GeneratedTokens``) or BurstGPT's (``Timestamp,...,Request tokens,Response tokens,...``).

    Such traces carry no prefix hashes. Each prompt gets its own blocks, except that the first
    ``shared_prefix_tokens`` of every prompt (a common system prompt, an assumption of the caller) get
    the same hashes in every request: full blocks only, as vLLM caches full blocks.

    Args:
        data: bytes or text of the CSV, with its header line.
        shared_prefix_tokens: tokens at the start of every prompt assumed identical (>= 0).
        block_size: tokens per block for the hashes made here.

    Returns:
        ``RequestStream`` sorted by time, arrival_s from the first request.

    Raises:
        ValueError: size limits; a header without the token columns; a line with the wrong number of
            fields, a non-integer or negative count, an unreadable time (the message names the line).
    """
    text = _check_size(data)
    check_nonneg_int(shared_prefix_tokens, "shared_prefix_tokens")
    bs = check_positive_int(block_size, "block_size")
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if not header:
        raise ValueError("the CSV is empty: expected a header line such as TIMESTAMP,ContextTokens,GeneratedTokens")
    cols = [h.strip().lower() for h in header]
    picks = {"time": ("timestamp",), "in": ("contexttokens", "request tokens"),
             "out": ("generatedtokens", "response tokens")}
    idx = {}
    for key, names in picks.items():
        found = [i for i, c in enumerate(cols) if c in names]
        if not found:
            raise ValueError(f"line 1: the header {','.join(header)!r} lacks a column {' or '.join(names)} "
                             "(expected TIMESTAMP,ContextTokens,GeneratedTokens or BurstGPT's columns)")
        idx[key] = found[0]
    ts, ins, outs = [], [], []
    for line_no, row in enumerate(rows, start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) != len(header):
            raise ValueError(f"line {line_no}: {len(row)} fields, the header has {len(header)}")
        vals = []
        for key in ("in", "out"):
            raw = row[idx[key]].strip()
            try:
                v = int(float(raw)) if raw and float(raw).is_integer() else None
            except ValueError:
                v = None
            if v is None or v < 0:
                raise ValueError(f"line {line_no}: {header[idx[key]].strip()} must be a whole number >= 0, got {raw!r}")
            vals.append(v)
        if vals[0] > MAX_INPUT_TOKENS:
            raise ValueError(f"line {line_no}: {vals[0]:,} prompt tokens is longer than any context window")
        ts.append(_parse_time(row[idx["time"]], line_no)), ins.append(vals[0]), outs.append(vals[1])
        if len(ts) > MAX_REQUESTS:
            raise ValueError(f"the trace has more than {MAX_REQUESTS:,} requests; cut it to fewer")
    if not ts:
        raise ValueError("the CSV has a header but no request")
    t = np.asarray(ts, dtype=np.float64)
    order = np.argsort(t, kind="stable")
    t, n_in, n_out = t[order] - t[order][0], np.asarray(ins, dtype=np.int64)[order], np.asarray(outs, dtype=np.int64)[order]
    return stream_from_lengths(t, n_in, n_out, shared_prefix_tokens, bs, name, source)


def stream_from_lengths(arrival_s, input_tokens, output_tokens, shared_prefix_tokens: int = 0, block_size: int = 512,
                        name: str = "", source: str = "") -> RequestStream:
    """A stream of unique prompts (full blocks only) that share their first ``shared_prefix_tokens``.

    Block ids: 0 .. P - 1 for the P = shared_prefix_tokens // block_size shared blocks; fresh ids after.

    Raises:
        ValueError: arrays of different lengths.
    """
    n_in = np.asarray(input_tokens, dtype=np.int64)
    if not (len(arrival_s) == len(n_in) == len(output_tokens)):
        raise ValueError("arrival_s, input_tokens and output_tokens must have the same length")
    full = n_in // block_size
    shared = np.minimum(full, shared_prefix_tokens // block_size)
    offsets = _offsets(full)
    total = int(offsets[-1])
    pos = np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], full)  # block index within its prompt
    n_shared_max = shared_prefix_tokens // block_size
    ids = np.where(pos < np.repeat(shared, full), pos, n_shared_max + np.arange(total, dtype=np.int64))
    return RequestStream(np.asarray(arrival_s, dtype=np.float64), n_in, np.asarray(output_tokens, dtype=np.int64),
                         block_size, ids, offsets, name=name, source=source)


def read_trace(data, filename: str = "", shared_prefix_tokens: int = 0, block_size: int = 512) -> RequestStream:
    """Read an uploaded trace, by its content: JSON lines (Mooncake) or CSV (Azure / BurstGPT).

    Args:
        data: bytes or text.
        filename: shown as the stream's name.
        shared_prefix_tokens, block_size: for token-count CSVs (``read_token_csv``); ignored for Mooncake,
            whose blocks are 512 tokens.

    Raises:
        ValueError: see ``read_mooncake`` and ``read_token_csv``.
    """
    text = _check_size(data)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    name = filename or "uploaded trace"
    if first.lstrip().startswith("{"):
        return read_mooncake(text, name)
    return read_token_csv(text, name, shared_prefix_tokens=shared_prefix_tokens, block_size=block_size)


def load_sample(filename: str, shared_prefix_tokens: int = 0, block_size: int = 512) -> RequestStream:
    """One of the shipped ``SAMPLES`` (calc/data/traces/), read as ``read_trace`` does.

    Raises:
        ValueError: a name that is not a shipped sample.
    """
    if filename not in SAMPLES:
        raise ValueError(f"no shipped trace named {filename!r}; choose one of {', '.join(SAMPLES)}")
    fmt, desc, source, lic = SAMPLES[filename]
    text = (TRACE_DIR / filename).read_text(encoding="utf-8-sig")
    if fmt == "mooncake":
        return read_mooncake(text, desc, f"{source} ({lic})")
    return read_token_csv(text, desc, f"{source} ({lic})", shared_prefix_tokens, block_size)
