"""The teacher screen's analysis (classroom/analysis.py) and the poll's questions (classroom/questions.py)
against hand-made answers and hand arithmetic."""
import pytest

from classroom import analysis as A
from classroom import questions as Q

KV_SEQ = Q.build({"kind": "exercise", "key": "kv_per_sequence", "variant": 0})


def test_log_bins_three_per_decade_when_the_spread_is_wide():
    h = A.histogram([1, 10, 100, 1000])          # spread 1000 >= 20: edges 10^(k/3), k = 0..9
    assert h.log and len(h.edges) == 10
    assert h.edges[0] == 1 and h.edges[3] == 10 and h.edges[-1] == 1000
    assert h.edges[1] == pytest.approx(2.1544, rel=1e-4)
    assert h.counts == (1, 0, 0, 1, 0, 0, 1, 0, 1)   # 1000 falls in the last bin (its right edge is closed)


def test_linear_bins_when_the_spread_is_narrow():
    h = A.histogram([14, 15, 15.5, 16, 30])      # spread 30/14 < 20: ceil(sqrt 5) = 3, at least 5 bins of 3.2
    assert not h.log
    assert h.edges == pytest.approx((14, 17.2, 20.4, 23.6, 26.8, 30))
    assert h.counts == (4, 0, 0, 0, 1)
    assert A.histogram([7, 7, 7]) == A.Histogram((6.3, 7.7), (3,), False)
    assert A.histogram([-1, 5, 1000]).log is False  # a negative answer: no log axis
    assert A.histogram([]).counts == ()


def test_wrong_answers_cluster_on_the_exercises_known_mistakes():
    # The course's 13B at 4,096 tokens: 2 x 40 x 8 x 128 x 2 B x 4,096 = 671,088,640 B = 0.6711 GB = 0.625 GiB.
    answers = [(0.67, "GB"), (0.671, "GB"),                  # right (2%)
               (0.625, "GB"), (0.625, "GB"),                  # GiB's number labelled GB
               (0.3355, "GB"),                                # half: K and V forgotten
               (5.369, "GB"),                                 # x8: bits
               (163.84, "kB"),                                # 2 x 40 x 8 x 128 x 2 = 163,840 B: per token
               (3.0, "GB")]                                   # none of these
    got = {(c.kind, c.label.split(":")[0], c.count) for c in A.clusters(KV_SEQ, answers)}
    assert ("right", "Right", 2) in got
    assert ("unit", "The right number in GiB, labelled GB (GiB vs GB)", 2) in got
    assert ("mistake", "About half the answer", 1) in got
    assert ("mistake", "Eight times too large", 1) in got
    assert ("mistake", "That is the cache per token; a sequence holds S tokens", 1) in got
    assert ("high", "Too high, no known mistake", 1) in got
    cl = A.clusters(KV_SEQ, answers)
    assert cl[0].kind == "right" and sum(c.count for c in cl) == 8 and cl[1].count == 2
    assert A.share_right(KV_SEQ, answers) == pytest.approx(2 / 8)


def test_the_2_in_2n_and_per_token_vs_per_sequence():
    crit = Q.build({"kind": "exercise", "key": "critical_batch", "variant": 0})    # 295 tokens; 590 = 2 x 295
    assert "2N" in A.classify(crit, 590, "tokens")[1]
    tpot = Q.build({"kind": "predict", "quantity": "tpot", "model": "llama-3-8b", "gpu": "h100-sxm",
                    "context": 8192, "batch": 32})
    # 15.05 ms a step for the batch of 32 (below); 15.05 / 32 = 0.47 ms is per token of the batch
    kind, label = A.classify(tpot, 0.47, "ms")
    assert kind == "mistake" and "per sequence" in label


def test_predictions_come_from_calc_with_the_lectures_numbers():
    base = {"kind": "predict", "model": "llama-3-8b", "gpu": "h100-sxm", "context": 8192, "batch": 32}
    # The lecture walk's step 3: 32 users of Llama-3-8B at 8K on an H100 SXM make 2,126 tokens per second.
    thr = Q.build({**base, "quantity": "throughput"})
    assert thr.answer == pytest.approx(2126, abs=1) and thr.unit == "tok/s"
    assert Q.build({**base, "quantity": "tpot"}).answer == pytest.approx(32 / 2126, rel=1e-3)
    kv = Q.build({**base, "quantity": "kv_seq"})
    assert kv.answer == 2 * 32 * 8 * 128 * 2 * 8192            # 1,073,741,824 B: "1.07 GB" in the walk
    assert kv.url.startswith("kv_cache?") and "kv_ctx=8K" in kv.url
    assert "rf_b=32" in thr.url and "rf_ctx=8192" in thr.url
    assert A.classify(kv, 1.0, "GiB")[0] == "right"          # 2^30 B is exactly 1 GiB


@pytest.mark.parametrize("spec, why", [
    ({"kind": "predict", "quantity": "tpot", "model": "llama-3-8b", "gpu": "h100-sxm", "context": 5000, "batch": 1},
     "context must be one of"),
    ({"kind": "predict", "quantity": "tpot", "model": "nope", "gpu": "h100-sxm", "context": 8192}, "unknown model"),
    ({"kind": "predict", "quantity": "x", "model": "llama-3-8b", "gpu": "h100-sxm", "context": 8192}, "quantity"),
    ({"kind": "exercise", "key": "kv_per_token", "variant": -1}, "variant"),
    ({"kind": "sql"}, "unknown question kind"),
    ("not a dict", "dict"),
])
def test_a_bad_question_is_refused_with_a_reason(spec, why):
    with pytest.raises(ValueError, match=why):
        Q.build(spec)


def test_the_bars_mark_the_right_answers_bin_only_after_the_reveal():
    tpot = Q.build({"kind": "predict", "quantity": "tpot", "model": "llama-3-8b", "gpu": "h100-sxm",
                    "context": 8192, "batch": 32})                      # 15.05 ms
    labels, counts, hit, log = A.bars(tpot, [1, 15, 15.2, 120], revealed=True)
    assert log and labels[hit.index(True)] == "10–21.5" and sum(hit) == 1 and sum(counts) == 4
    assert not any(A.bars(tpot, [1, 15, 15.2, 120], revealed=False)[2])
