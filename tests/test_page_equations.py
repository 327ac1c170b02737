"""Each page's equations end with the number its metric shows (the equation filled in with the numbers
on screen), and the inputs in them are the page's own: Llama-3-8B on an H100 SXM, 8K, as the
inference course, week 11, step 4 works it (2 x 32 x 8 x 128 x 2 B = 131,072 B; x 8,192 = 1.07 GB)."""
import re

from pagetest import metric, open_page


def _tail(latex: str) -> str:
    """The text after the last '=' of a LaTeX equation, in the form a metric prints it."""
    tail = latex.removesuffix(r"\end{aligned}").rsplit("=", 1)[1].strip()
    tail = tail.replace("{,}", ",").replace(r"\,\mu\text{s}", " µs").replace(r"\$", "$")
    return re.sub(r"\\,\\text\{(.*?)\}", r" \1", tail).strip()


def _equations(at) -> list[str]:
    """The page's equations, after opening its equation expanders (they draw their LaTeX only while open)."""
    for key in ("equations", "equations_batch"):
        at.session_state[key] = True
    at.run()
    assert not at.exception, at.exception
    out = [x.value.strip().strip("$").strip() for x in at.latex if "=" in x.value]
    return [e.removeprefix(r"\begin{aligned}").replace(r" \\ &= ", " = ").replace(" &= ", " = ") for e in out]


def test_home_equations_end_with_its_metrics():
    at = open_page(emb="table", price="3")
    eqs = _equations(at)
    # 321 µs + 4.79 ms = 5.11 ms; 1 / 5.11 ms = 196 tok/s; $3 / (196 x 3600) x 1e6 = $4.26 (course, week 11 step 4)
    assert _tail(eqs[0]) == metric(at, "Decode step (TPOT)") == "5.11 ms"
    assert _tail(eqs[1]) + "" == metric(at, "Throughput") == "196 tok/s"
    assert _tail(eqs[2]) == metric(at, "USD per 1M output tokens") == "$4.26"
    assert "16.06" in eqs[0] and "3.35" in eqs[0]          # the weights read and the bandwidth, filled in
    assert _tail(eqs[3]) == metric(at, "Memory used") == "17.13 GB"


def test_kv_cache_equations_fill_in_the_model():
    at = open_page("app_pages/kv_cache.py")
    eqs = _equations(at)
    per_token = next(e for e in eqs if e.startswith(r"\text{KV/token}"))
    assert r"2 \times 32 \times 8 \times 128 \times 2" in per_token and _tail(per_token) == "131,072 B"
    per_seq = next(e for e in eqs if e.startswith(r"\text{KV/seq}"))
    assert _tail(per_seq) == metric(at, "KV per sequence") == "1.07 GB"


def test_roofline_and_quantization_equations_end_with_the_metrics():
    at = open_page("app_pages/roofline.py", emb="table")
    eqs = _equations(at)
    step = next(e for e in eqs if e.startswith("t = "))
    assert _tail(step) == metric(at, "Decode step (TPOT)") == "15.05 ms"   # 10.26 ms + 4.79 ms at B = 32
    crit = next(e for e in eqs if e.startswith("B^*"))
    assert _tail(crit) == metric(at, "Critical batch (tokens)") == "295"
    at = open_page("app_pages/quantization.py")
    eqs = _equations(at)
    assert _tail(eqs[0]) == metric(at, "bf16: decode step")


def test_prefix_cache_and_bill_equations():
    at = open_page("app_pages/batching.py")
    eqs = _equations(at)
    kv = next(e for e in eqs if e.startswith(r"\text{tokens} \times"))
    assert _tail(kv) == metric(at, "KV with cache")   # 1,000 x 131,072 B = 131.07 MB (course, week 11 step 2)
    at = open_page("app_pages/monthly_bill.py")
    from calc.api_tiers import default_tiers
    bills = [e for e in _equations(at) if e.startswith(r"30 \times G")]
    tiers = default_tiers()
    assert len(bills) == len(tiers)
    for tier, eq in zip(tiers, bills):   # the equation's dollars, rounded, are the tier's metric
        shown = float(metric(at, tier.name).replace("$", "").replace(",", ""))
        assert round(float(_tail(eq).replace("$", "").replace(",", ""))) == shown


def test_speculative_equations_end_with_the_metrics():
    at = open_page("app_pages/speculative.py")
    eqs = _equations(at)
    # the course's pair p = (0.6, 0.4), q = (0.9, 0.1): min(0.6, 0.9) + min(0.4, 0.1) = 0.700 (week 11, step 3)
    alpha = next(e for e in eqs if e.startswith(r"\alpha") and r"\min(0" in e)
    assert r"\min(0.6, 0.9) + \min(0.4, 0.1)" in alpha and _tail(alpha) == metric(at, "Acceptance rate") == "0.700"
    speed = next(e for e in eqs if e.startswith("E "))
    assert _tail(speed).replace(r"\times", "×") == metric(at, "Speedup at B = 1")


def test_many_gpus_equations_end_with_the_metrics():
    at = open_page("app_pages/many_gpus.py")
    eqs = _equations(at)
    tpot = next(e for e in eqs if e.startswith(r"t = t_\text{compute"))
    assert _tail(tpot) == metric(at, "TPOT")
    per_user = next(e for e in eqs if e.startswith(r"\frac{1}{t}"))
    assert _tail(per_user) == metric(at, "Tokens/s per user")
    month = [e for e in eqs if e.startswith(r"\text{GPUs} \times")]
    if month:   # 720 h x GPUs x price, as the metric rounds it
        assert _tail(month[0]) == metric(at, "USD per month")
