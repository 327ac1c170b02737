"""Workloads, traces, the tiered prefix cache and both bills (calc/workload.py, calc/traces.py,
calc/prefix_cache.py, calc/workload_bill.py).

Oracles: a small trace replayed by hand (every hit and eviction written out below); the textbook LRU
thrash (a cycle of N + 1 blocks through N slots misses every time); hand arithmetic for load against
recompute and for the bills; an independent set-based replay of the shipped Mooncake sample.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import calc
from calc import api_tiers, bill, prefix_cache as pc, traces, workload, workload_bill as wb

LLAMA = calc.get_model("llama-3-8b")
H100 = calc.get_accelerator("h100-sxm")


def stream_of(blocks_per_request, block_size=4, input_tokens=None, arrival_s=None, output=None, reasoning=None):
    """A RequestStream from lists of block ids (one list per request)."""
    lens = [len(b) for b in blocks_per_request]
    n = len(lens)
    ins = np.array(input_tokens if input_tokens is not None else [max(1, k) * block_size for k in lens])
    return traces.RequestStream(np.array(arrival_s if arrival_s is not None else np.arange(n), dtype=float), ins,
                                np.array(output if output is not None else [1] * n), block_size,
                                np.array([b for bl in blocks_per_request for b in bl], dtype=np.int64),
                                traces._offsets(lens), None if reasoning is None else np.array(reasoning))


# -- the hand-worked trace ------------------------------------------------------------------------------------------

# Five requests, blocks named by id; GPU tier 2 blocks, CPU tier 2 blocks, policy "demote" (one LRU stack of 4,
# its 2 most recent blocks in the GPU). Lookups happen before a request touches anything; then its blocks are
# touched last-to-first (so its first block is the most recent) and the stack is cut back to 4 once it is done.
# Stacks are written most recent first.
#   r0 [1, 2]     1 misses -> 0 hits.                   touch 2, 1 -> [1, 2]              GPU {1, 2}
#   r1 [1, 2, 3]  1 GPU, 2 GPU, 3 misses -> GPU 2.      touch 3, 2, 1 -> [1, 2, 3]        GPU {1, 2}, CPU {3}
#   r2 [4, 5]     4 misses -> 0.                        touch 5, 4 -> [4, 5, 1, 2, 3]; cut: 3 evicted from CPU;
#                                                       1 and 2 demoted to CPU            GPU {4, 5}, CPU {1, 2}
#   r3 [1, 2, 6]  1 CPU, 2 CPU, 6 misses -> CPU 2.      touch 6, 2, 1 -> [1, 2, 6, 4, 5]; cut: 5 evicted;
#                                                       4 and 6 demoted                   GPU {1, 2}, CPU {6, 4}
#   r4 [4, 7]     4 CPU, 7 misses -> CPU 1.             touch 7, 4 -> [4, 7, 1, 2, 6]; cut: 6 evicted
# Hits (GPU, CPU): (0,0) (2,0) (0,0) (0,2) (0,1).
# GPU alone (2 blocks): r1 hits 2 (then 3 is cut); r2 cuts 1 and 2; r3 finds 1 gone -> 0; r4 finds 4 gone
# (r3 left [1, 2]) -> 0. Hits: 0, 2, 0, 0, 0.
HAND = [[1, 2], [1, 2, 3], [4, 5], [1, 2, 6], [4, 7]]


def test_hand_worked_trace_demote():
    got = pc.replay_blocks(stream_of(HAND), [2, 2, 0, 0], "demote")
    assert got.tolist() == [[0, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0], [0, 2, 0, 0], [0, 1, 0, 0]]


def test_hand_worked_trace_gpu_alone_and_reference():
    assert pc.replay_blocks(stream_of(HAND), [2, 0, 0, 0])[:, 0].tolist() == [0, 2, 0, 0, 0]
    assert pc.lru_hits_reference(HAND, 2) == [0, 2, 0, 0, 0]
    assert pc.lru_hits_reference(HAND, 4) == [0, 2, 0, 2, 1]  # the demote stack of 4, tiers summed


def test_hand_worked_trace_write_through():
    # Write-through, GPU 2 and CPU 4: the GPU holds the 2 most recent blocks, the CPU the 4 most recent (inclusive),
    # so each block is found where the demote replay with CPU 2 found it (4 = 2 + 2).
    got = pc.replay_blocks(stream_of(HAND), [2, 4, 0, 0], "write_through")
    assert got.tolist() == [[0, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0], [0, 2, 0, 0], [0, 1, 0, 0]]
    # with a CPU no larger than the GPU, the CPU holds nothing the GPU does not: no CPU hit
    assert pc.replay_blocks(stream_of(HAND), [2, 2, 0, 0], "write_through")[:, 1].sum() == 0


# -- LRU at capacity N ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 8])
def test_lru_cycle_of_n_plus_one_blocks_always_misses(n):
    # one block per request, cycling 0..N three times: with N slots, block k was evicted N steps ago (LRU thrash)
    reqs = [[k % (n + 1)] for k in range(3 * (n + 1))]
    assert pc.replay_blocks(stream_of(reqs), [n, 0, 0, 0]).sum() == 0
    # with N + 1 slots every block after the first round hits: 2 (N + 1) hits
    assert pc.replay_blocks(stream_of(reqs), [n + 1, 0, 0, 0]).sum() == 2 * (n + 1)
    # split N + 1 as GPU 1 + CPU N: the same hits, all in the CPU tier (each block is N deep when it comes back)
    got = pc.replay_blocks(stream_of(reqs), [1, n, 0, 0])
    assert got[:, 0].sum() == 0 and got[:, 1].sum() == 2 * (n + 1)


def test_prefix_rule_a_block_after_a_miss_is_no_hit():
    # [1, 2] then [9, 2]: block 2 is cached, but behind a miss it is a different prefix -> 0 hits
    assert pc.replay_blocks(stream_of([[1, 2], [9, 2]]), [10, 0, 0, 0]).sum() == 0


# -- load or recompute -----------------------------------------------------------------------------------------------

def test_load_or_recompute_both_sides_of_the_crossover():
    kvb = calc.kv_bytes_per_token(LLAMA)
    assert kvb == 131_072  # 32 layers x 2 x 8 KV heads x 128 x 2 B
    # 10,000 tokens over 64 GB/s: 10,000 x 131,072 / 64e9 = 0.02048 s < 0.175 s to recompute -> load
    load, secs = pc.load_or_recompute(10_000, kvb, 64e9, 0.175)
    assert bool(load) and float(secs) == pytest.approx(0.02048)
    # crossover bandwidth: 10,000 x 131,072 / 0.175 = 7.4898e9 B/s
    cross = 10_000 * kvb / 0.175
    assert bool(pc.load_or_recompute(10_000, kvb, cross * 1.01, 0.175)[0])
    load, secs = pc.load_or_recompute(10_000, kvb, cross * 0.99, 0.175)
    assert not bool(load) and float(secs) == pytest.approx(0.175)
    with pytest.raises(ValueError, match="bandwidth"):
        pc.load_or_recompute(1, kvb, 0, 1.0)


def test_replay_ttft_loads_over_a_fast_link_and_recomputes_over_a_slow_one():
    # Two requests with the same 8 blocks of 512 tokens (4,096 tokens); GPU tier absent, CPU holds them.
    # Request 1 finds 8 blocks, capped at 4,095 tokens (the last prompt token is always computed).
    kvb = calc.kv_bytes_per_token(LLAMA)
    s = stream_of([list(range(8))] * 2, block_size=512, input_tokens=[4096, 4096])
    fast = [pc.Tier("gpu", 0, 1e12), pc.Tier("cpu", 1e12, 63e9)]
    slow = [pc.Tier("gpu", 0, 1e12), pc.Tier("cpu", 1e12, 1e6)]
    a = pc.replay_ttft(s, fast, LLAMA, H100).per_request
    b = pc.replay_ttft(s, slow, LLAMA, H100).per_request
    assert a["cpu"].tolist() == [0, 4095] and a["recomputed"].tolist() == [0, 0]
    assert b["cpu"].tolist() == [0, 0] and b["recomputed"].tolist() == [0, 4095]
    # loading 4,095 x 131,072 B over 63 GB/s takes 8.5 ms, far below the 4,096-token prefill (about 80 ms)
    assert a["ttft_s"][1] < 0.25 * a["ttft_no_cache_s"][1]
    # with a fast link TTFT = load + suffix prefill; with a slow one = recompute + the same suffix; the recompute is
    # the prefill of the 4,095-token prefix (calc.prefill_time, LM head on the last token)
    recompute_s = b["prefill_gpu_s"][1] - a["prefill_gpu_s"][1]
    assert recompute_s == pytest.approx(calc.prefill_time(LLAMA, H100, 4095, logits="last").total_s, rel=0.01)
    assert a["ttft_s"][1] - b["ttft_s"][1] == pytest.approx(4095 * kvb / 63e9 - recompute_s)
    # recomputing all of it is no faster than no cache, and slower by at most one more pass over the weights (the
    # last token's own step, at least T(1))
    one = calc.prefill_time(LLAMA, H100, 1, logits="last").total_s
    assert b["ttft_no_cache_s"][1] <= b["ttft_s"][1] <= b["ttft_no_cache_s"][1] + one * 1.001


# -- workloads: reasoning kept or dropped ---------------------------------------------------------------------------

def _one_session(**kw):
    base = dict(sessions=1, system_prompt_tokens=32, user_turns=2, calls_per_turn=1, user_tokens=16, answer_tokens=16,
                reasoning_tokens=32, jitter=0.0, think_time_s=0.0, tool_time_s=0.0)
    return workload.generate(workload.Workload(**{**base, **kw}), block_size=16)


def test_reasoning_dropped_or_kept_in_the_next_turn():
    # Turn 1: system 32 + user 16 = 48 tokens (3 blocks of 16); it generates reasoning 32 + answer 16 -> 96 tokens.
    # Dropped: turn 2 = 32 + 16 + answer 16 + user 16 = 80 tokens; shares the 3 blocks of turn 1's prompt only.
    # Kept: turn 2 = 32 + 16 + 32 + 16 + 16 = 112 tokens; shares the 6 blocks of turn 1's whole sequence.
    drop, keep = _one_session(reasoning_context="drop"), _one_session(reasoning_context="keep")
    assert drop.input_tokens.tolist() == [48, 80] and keep.input_tokens.tolist() == [48, 112]
    assert drop.output_tokens.tolist() == [48, 48] and drop.reasoning_tokens.tolist() == [32, 32]
    assert pc.replay_blocks(drop, [100, 0, 0, 0])[:, 0].tolist() == [0, 3]
    assert pc.replay_blocks(keep, [100, 0, 0, 0])[:, 0].tolist() == [0, 6]


def test_reasoning_kept_in_the_tool_loop_is_dropped_at_the_next_user_turn():
    # 2 user turns x 2 calls, tool output 16. Call 1: 48 tokens. Call 2: + reasoning 32 + answer 16 + tool 16 = 112,
    # all of call 1's 6 generated blocks reused. Turn 2, call 1: the turn-1 reasoning is dropped: system 32 + user 16
    # + answer 16 + tool 16 + answer 16 + user 16 = 112 tokens, sharing only the first 3 blocks. Call 2: + 32 + 16 + 16.
    s = _one_session(reasoning_context="keep_in_tool_loop", calls_per_turn=2, tool_output_tokens=16)
    assert s.input_tokens.tolist() == [48, 112, 112, 176]
    assert pc.replay_blocks(s, [1000, 0, 0, 0])[:, 0].tolist() == [0, 6, 3, 10]


def test_shared_system_prompt_is_shared_across_sessions():
    w = workload.Workload(sessions=3, system_prompt_tokens=64, user_turns=1, user_tokens=16, answer_tokens=16,
                          jitter=0.0, session_rate_per_s=1.0)
    s = workload.generate(w, block_size=16)
    # each prompt: 4 system blocks (the same ids) + 1 block of its own user message; sessions 2 and 3 hit 4
    assert pc.replay_blocks(s, [100, 0, 0, 0])[:, 0].tolist() == [0, 4, 4]
    assert s.blocks_of(0)[:4].tolist() == s.blocks_of(2)[:4].tolist()


def test_presets_carry_sources_and_generate():
    for key, w in workload.presets().items():
        assert workload.preset_notes(key)["source"]
        s = workload.generate(w.replace(sessions=3), 512)
        assert s.n_requests == 3 * w.user_turns * w.calls_per_turn
    # agentic preset: the Copilot traces' 3.95 turns x 7.83 calls and ~528 completion tokens per call
    ag = workload.presets()["agentic"]
    assert (ag.user_turns, ag.calls_per_turn, ag.answer_tokens + ag.reasoning_tokens) == (4, 8, 530)
    with pytest.raises(ValueError, match="reasoning_context"):
        ag.replace(reasoning_context="sometimes")


# -- bills -----------------------------------------------------------------------------------------------------------

def _tier(provider_model: str) -> api_tiers.PriceTier:
    rows = {r["id"]: r for r in json.loads((calc.models.DATA_DIR / "api_prices.json").read_text())["prices"]}
    r = rows[provider_model]
    return api_tiers.PriceTier(r["model"], r["model"], r["input_usd_per_mtok"], r["cached_input_usd_per_mtok"],
                          r["output_usd_per_mtok"], r["cache_write_multiplier"])


# Two requests with the same 4 blocks of 512 tokens (2,048 tokens), 10 s apart; each generates 1,000 tokens of which
# 600 reasoning. At 2 requests a day the month is 30 copies of the stream.
BILL_STREAM = stream_of([[1, 2, 3, 4]] * 2, block_size=512, input_tokens=[2048, 2048], arrival_s=[0.0, 10.0],
                        output=[1000, 1000], reasoning=[600, 600])


@pytest.mark.parametrize("row_id", ["openai-gpt-5.4-mini", "anthropic-claude-sonnet-4.6", "google-gemini-3.5-flash"])
def test_reasoning_tokens_billed_as_output_on_every_sheet(row_id):
    t = _tier(row_id)
    b = wb.api_bill(BILL_STREAM, t, requests_per_day=2)
    # 30 x 2 x 600 reasoning tokens at the output price; 30 x 2 x 400 answer tokens at the same price
    assert b.reasoning_usd == pytest.approx(30 * 1200 * t.output_usd_per_mtok / 1e6)
    assert b.answer_usd == pytest.approx(30 * 800 * t.output_usd_per_mtok / 1e6)
    provider = {"openai": "OpenAI", "anthropic": "Anthropic", "google": "Google"}[row_id.split("-")[0]]
    assert workload.reasoning_conventions()[provider]["billed_as"] == "output"


def test_api_bill_by_hand_with_cache_writes():
    # Sonnet 4.6: $3 in, $0.30 cached, 1.25x writes, $15 out. Request 1 misses 2,048 tokens (and writes them);
    # request 2 finds 4 blocks within the 5-minute TTL: 2,047 tokens cached (the last is computed), 1 missed.
    # Per stream: missed 2,049 x 3 = 6,147e-6; cached 2,047 x 0.3 = 614.1e-6; writes 2,049 x 0.25 x 3 = 1,536.75e-6;
    # output 2,000 x 15 = 30,000e-6 -> 38,297.85e-6 USD; x 30 = 1.1489355 USD a month.
    b = wb.api_bill(BILL_STREAM, _tier("anthropic-claude-sonnet-4.6"), requests_per_day=2)
    assert b.input_missed_usd == pytest.approx(30 * 6147e-6)
    assert b.input_hit_usd == pytest.approx(30 * 614.1e-6)
    assert b.cache_write_usd == pytest.approx(30 * 1536.75e-6)
    assert b.total_usd == pytest.approx(1.1489355)
    # a 5 s TTL forgets the prefix before request 2 comes: everything missed
    short = wb.api_bill(BILL_STREAM, _tier("anthropic-claude-sonnet-4.6"), requests_per_day=2, ttl_s=5)
    assert short.input_hit_usd == 0 and short.input_missed_usd == pytest.approx(30 * 4096 * 3e-6)


def test_self_hosted_bill_saves_prefill_with_hits():
    s = workload.generate(workload.presets()["agentic"].replace(sessions=6), 512)
    setup = bill.SelfHostedSetup(LLAMA, H100, 4.0)
    rates = wb.self_hosted_rates_for(s, setup)
    summary = pc.replay_ttft(s, pc.default_tiers(40e9, 400e9), LLAMA, H100, tp=rates.gpus_per_replica)
    with_cache = wb.self_hosted_bill(s, summary, setup, rates, requests_per_day=1e6)
    without = wb.self_hosted_bill(s, summary, setup, rates, requests_per_day=1e6, use_cache=False)
    # prefill GPU money falls by the replay's own ratio of prefill seconds
    ratio = summary.per_request["prefill_gpu_s"].sum() / summary.per_request["ttft_no_cache_s"].sum()
    assert with_cache.prefill_gpu_usd == pytest.approx(without.prefill_gpu_usd * ratio)
    assert ratio < 0.5 and with_cache.n_gpus < without.n_gpus
    assert with_cache.decode_gpu_usd == pytest.approx(without.decode_gpu_usd)


# -- traces ----------------------------------------------------------------------------------------------------------

def _set_replay(blocks_per_request):
    """Independent replay with an unbounded cache: a set of every block seen; prefix hits per request."""
    seen, hits = set(), []
    for blocks in blocks_per_request:
        n = 0
        for b in blocks:
            if b not in seen:
                break
            n += 1
        hits.append(n)
        seen.update(blocks)
    return hits


def test_mooncake_sample_parses_and_gives_a_stable_hit_rate():
    s = traces.load_sample("mooncake_conversation_2000.jsonl")
    assert s.n_requests == 2000 and s.block_size == 512 and s.duration_s == 669.0
    assert s.input_tokens[0] == 6758 and s.blocks_of(0).tolist() == list(range(14))  # the file's first line
    lists = [s.blocks_of(r).tolist() for r in range(s.n_requests)]
    expected = _set_replay(lists)
    got = pc.replay_blocks(s, [10**6, 0, 0, 0])[:, 0]
    assert got.tolist() == expected
    assert sum(expected) == 15_771  # of 54,559 blocks: 28.9% of prompt blocks found with an unbounded cache
    assert len(s.block_ids) == 54_559
    # bounded: 1,000 blocks, against the plain list LRU on the first 500 requests
    head = s.head(500)
    assert pc.replay_blocks(head, [300, 700, 0, 0]).sum(axis=1).tolist() == pc.lru_hits_reference(lists[:500], 1000)


def test_azure_sample_parses_and_a_shared_prefix_gives_its_hits():
    s = traces.load_sample("azure_llm_conv_2023_2000.csv", shared_prefix_tokens=1024, block_size=512)
    assert s.n_requests == 2000 and s.input_tokens[:3].tolist() == [374, 396, 879]
    assert s.output_tokens[:3].tolist() == [44, 109, 55]
    assert s.arrival_s[1] == pytest.approx(4.314579, abs=1e-6)  # 18:15:50.9951690 - 18:15:46.6805900
    # with a shared 1,024-token prefix, a prompt of L tokens holds min(L // 512, 2) shared blocks, nothing else
    # reusable: an unbounded replay hits exactly what the set-based replay hits
    lists = [s.blocks_of(r).tolist() for r in range(s.n_requests)]
    shared = [b for bl in lists for b in bl if b < 2]
    assert len(shared) == sum(min(int(x) // 512, 2) for x in s.input_tokens)
    assert pc.replay_blocks(s, [10**6, 0, 0, 0])[:, 0].tolist() == _set_replay(lists)
    # without the assumption: no prefix information, no hit
    bare = traces.load_sample("azure_llm_conv_2023_2000.csv")
    assert pc.replay_blocks(bare, [10**6, 0, 0, 0]).sum() == 0


def test_malformed_upload_lines_are_named():
    good = '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}'
    with pytest.raises(ValueError, match="line 3: not valid JSON"):
        traces.read_trace((good + "\n" + good + "\n{oops\n").encode())
    with pytest.raises(ValueError, match="line 2: the field 'hash_ids' is missing|line 2: hash_ids"):
        traces.read_trace(good + '\n{"timestamp": 1, "input_length": 5, "output_length": 1}\n')
    with pytest.raises(ValueError, match="line 1: 3 hash_ids for 600 input tokens"):
        traces.read_trace('{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2, 3]}')
    csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47,12x,4\n"
    with pytest.raises(ValueError, match="line 3: ContextTokens must be a whole number"):
        traces.read_trace(csv)
    with pytest.raises(ValueError, match="line 2: TIMESTAMP 'yesterday'"):
        traces.read_trace("TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,1,1\n")
    with pytest.raises(ValueError, match="at most 50 MB"):
        traces.read_trace(b" " * (traces.MAX_UPLOAD_BYTES + 1))
    with pytest.raises(ValueError, match="lacks a column"):
        traces.read_trace("time,a,b\n1,2,3\n")


def test_ttl_hits_need_the_previous_use_within_the_ttl():
    # blocks [1, 2] at t = 0 s, again at 200 s (within 300 s: 2 blocks), again at 600 s (400 s after: none)
    s = stream_of([[1, 2]] * 3, block_size=512, input_tokens=[1100] * 3, arrival_s=[0.0, 200.0, 600.0])
    assert pc.ttl_hits(s, 300).tolist() == [0, 1024, 0]
    assert pc.ttl_hits(s, 300, min_tokens=2048).tolist() == [0, 0, 0]  # below the provider's minimum
    assert pc.ttl_hits(s, 1000).tolist() == [0, 1024, 1024]


def test_replay_refuses_bad_input():
    with pytest.raises(ValueError, match="policy"):
        pc.replay_blocks(stream_of(HAND), [1], "fifo")
    with pytest.raises(ValueError, match="capacities"):
        pc.replay_blocks(stream_of(HAND), [-1])
    with pytest.raises(ValueError, match="sessions"):
        workload.Workload(sessions=0)


def test_gpu_cache_bytes_by_hand():
    # 80 GB - 16,060,522,496 B of weights - 16 x 1,073,741,824 B (8,192 tokens x 131,072 B) = 46,759,608,320 B
    assert pc.gpu_cache_bytes(LLAMA, H100, 16, 8192) == pytest.approx(80e9 - 16_060_522_496 - 16 * 1_073_741_824)
    assert pc.gpu_cache_bytes(LLAMA, H100, 1000, 8192) == 0.0


@pytest.mark.parametrize("policy", pc.POLICIES)
def test_sweep_in_one_pass_equals_separate_replays(policy):
    s = traces.load_sample("mooncake_conversation_2000.jsonl").head(400)
    configs = [[20, c, 300, 0] for c in (0, 10, 50, 200, 1000)]
    for caps, counts in zip(configs, pc.replay_many(s, configs, policy)):
        assert counts.tolist() == pc.replay_blocks(s, caps, policy).tolist(), caps


def test_a_workload_too_large_to_replay_is_refused_before_it_is_generated():
    # agentic preset at 16-token blocks: 24 sessions x 32 calls of about 68K tokens / 16 = about 3.4M blocks > 3M
    with pytest.raises(ValueError, match="choose a larger block size"):
        workload.generate(workload.presets()["agentic"], 16)
    # the estimate follows the mean context: 2 turns of 1 call, system 32, user 16, answer 16, reasoning dropped:
    # prompts of 48 and 80 tokens -> 128 / 16 = 8 blocks per session
    w = workload.Workload(sessions=1, system_prompt_tokens=32, user_turns=2, user_tokens=16, answer_tokens=16)
    assert workload.expected_lookups(w, 16) == 8


def test_mooncake_timestamps_may_be_fractional_milliseconds():
    s = traces.read_trace('{"timestamp": 1.5, "input_length": 10, "output_length": 1, "hash_ids": [0]}\n'
                          '{"timestamp": 1001.5, "input_length": 10, "output_length": 1, "hash_ids": [0]}')
    assert s.arrival_s.tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="line 1: timestamp must be a number"):
        traces.read_trace('{"timestamp": -3, "input_length": 10, "output_length": 1, "hash_ids": [0]}')


def test_api_bill_applies_a_long_context_tier_per_request():
    # Gemini 2.5 Pro (price file: $1.25 / $10 up to 200k prompt tokens, $2.50 / $15 above, the whole request).
    # Two unrelated requests, no cache hits: 100,000 tokens (base) and 250,000 tokens (long), 1,000 out each.
    # Per stream: 100,000 x 1.25 + 1,000 x 10 = 135,000e-6; 250,000 x 2.5 + 1,000 x 15 = 640,000e-6
    # -> 775,000e-6 USD; at 2 requests a day the month is 30 streams: 23.25 USD.
    from calc.price_sheet import price_sheet
    sheet = price_sheet("google-gemini-2.5-pro")
    tier = api_tiers.PriceTier("g", "Gemini 2.5 Pro", 1.25, 0.125, 10.0, 1.0, extras=sheet)
    s = stream_of([[1], [2]], block_size=512, input_tokens=[100_000, 250_000], arrival_s=[0.0, 10_000.0],
                  output=[1000, 1000], reasoning=[0, 0])
    b = wb.api_bill(s, tier, requests_per_day=2)
    assert b.total_usd == pytest.approx(23.25)


def test_self_hosted_bill_priced_with_the_serving_estimate_and_its_range():
    from calc.serving import serving_estimate
    s = workload.generate(workload.presets()["agentic"].replace(sessions=6), 512)
    setup = bill.SelfHostedSetup(LLAMA, H100, 4.0, timing="serving")
    rates = wb.self_hosted_rates_for(s, setup)
    summary = pc.replay_ttft(s, pc.default_tiers(40e9, 400e9), LLAMA, H100, tp=rates.gpus_per_replica)
    low, mid, high = wb.self_hosted_bill_range(s, summary, setup, rates, requests_per_day=1e6)
    # The decode rate by hand from the estimate at the stream's mean prompt P and output O (rounded to tokens),
    # at the setup's batch: its output tokens/s X carries every prompt's prefill, taken out at the bound's prefill
    # rate p: decode tok/s = 1 / (1 / X - P / (O p)); a request holds the replica for its prefill left after the
    # cache plus its mean output / that rate.
    p_len, o_len = round(float(s.input_tokens.mean())), round(float(s.output_tokens.mean()))
    est = serving_estimate(LLAMA, H100, p_len, o_len, concurrency=rates.batch, tp=rates.gpus_per_replica)
    prefill_tps = p_len / float(calc.prefill_time(LLAMA, H100, p_len, tp=rates.gpus_per_replica).total_s)
    decode_tps = 1 / (1 / (est.output_tokens_per_s_per_gpu * rates.gpus_per_replica) - p_len / (o_len * prefill_tps))
    assert rates.decode_tokens_per_s == pytest.approx(decode_tps)
    replica_s = summary.per_request["prefill_gpu_s"].mean() + s.output_tokens.mean() / decode_tps
    n_rep = max(1, int(np.ceil(1e6 * replica_s / 86_400 * 3)))
    assert mid.total_usd == pytest.approx(n_rep * rates.gpus_per_replica * 4.0 * 720)
    assert low.total_usd <= mid.total_usd <= high.total_usd and low.total_usd < high.total_usd
    # the bound, the default, rents fewer GPUs for the same traffic
    bound_setup = bill.SelfHostedSetup(LLAMA, H100, 4.0)
    bound = wb.self_hosted_bill(s, summary, bound_setup, wb.self_hosted_rates_for(s, bound_setup), requests_per_day=1e6)
    assert bound.n_gpus < mid.n_gpus


def test_context_warning_counts_the_requests_past_the_trained_context():
    # The agentic preset on Llama-3-8B (trained on 8,192 tokens): count by hand each request whose prompt + output
    # exceeds 8,192, and the longest; with the rates, the serving estimate's own notice of the mean request follows.
    m = calc.get_model("llama-3-8b")
    s = workload.generate(workload.presets()["agentic"], 512)
    totals = [int(i) + int(o) for i, o in zip(s.input_tokens, s.output_tokens)]
    over = sum(t > 8192 for t in totals)
    assert over > 0
    text = wb.context_warning(s, m)
    assert text.startswith(f"{over:,} of the workload's {len(totals):,} requests ({over / len(totals):.0%}) carry more "
                           f"prompt and output than Llama-3-8B's trained context of 8,192 tokens (the longest "
                           f"{max(totals):,})"), text
    rates = wb.self_hosted_rates_for(s, bill.SelfHostedSetup(m, calc.get_accelerator("h100-sxm"), 2.0, timing="bound"))
    mean = round(float(s.input_tokens.mean())) + round(float(s.output_tokens.mean()))
    assert wb.context_warning(s, m, rates).endswith(
        f"The bill prices the mean request: {mean:,} tokens of prompt and output exceed Llama-3-8B's trained "
        "context of 8,192: an engine refuses such a request; the times are the arithmetic all the same")
    # a model trained on 128K tokens (Llama-3.1-8B): no request of the preset passes it when the longest fits
    long = calc.get_model("llama-3.1-8b")
    assert (wb.context_warning(s, long) is None) == (max(totals) <= long.max_context_len)
