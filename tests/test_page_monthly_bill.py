"""AppTest of the monthly-bill page: it renders, each experiment button moves its widget, and the
bill moves the way seed 003 says it should."""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
import pagetest
from pagetest import figures, metrics

from calc.number_text import fmt_usd

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "app_pages/monthly_bill.py"


def _money(text: str) -> float:
    # "$3,576" -> 3576.0
    return float(text.replace("$", "").replace(",", "").strip())


def _bills(at) -> dict[str, float]:
    return {m.label: _money(m.value) for m in metrics(at)}


@pytest.fixture
def at():
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def _click(at, label_start: str):
    [b] = [b for b in at.button if b.label.startswith(label_start)]
    b.click().run()
    assert not at.exception


def test_defaults_render(at):
    bills = _bills(at)
    # seed 003 experiment 1 by hand (see tests/test_bill.py): flagship 3,576.375 USD, small 715.275
    assert bills["Opus 4.8"] == pytest.approx(3576, abs=1)
    assert bills["Haiku 4.5"] == pytest.approx(715, abs=1)
    assert "self-hosted" in bills
    assert not at.error
    assert len(figures(at)) == 5   # bars, bill against DAU, against hit rate; API/rent/buy, where the money goes
    spec = figures(at)[1]
    assert spec["layout"]["xaxis"]["type"] == "log" and spec["layout"]["yaxis"]["type"] == "log"


def test_the_rent_buy_sentences_start_with_a_capital_and_count_gpus_right(at):
    # one H100 a replica for Llama-3-8B: "replicas of 1 GPU", not "1 GPU(s)"; the crossover caption is a sentence
    [heading] = [m.value for m in at.markdown if "the monthly bill against output volume" in m.value]
    assert "(replicas of 1 GPU, " in heading and "GPU(s)" not in heading
    [caption] = [c.value for c in at.caption if " beats Opus 4.8 from " in c.value]
    assert caption.startswith("Renting beats Opus 4.8 from "), caption
    hosted = [c.value for c in at.caption if c.value.startswith("$") and " GPU" in c.value]
    assert all("GPU(s)" not in c for c in hosted)


def test_break_even_column_says_never_or_a_dash_not_none(at):
    # The self-hosted row has no break-even against itself ("—"); an API tier that self-hosting never beats
    # within the sweep says "never"; any other is a whole DAU count with thousands separators.
    table = next(d for d in pagetest.tables(at) if "self-hosting cheaper from DAU" in d.columns)
    col = dict(zip(table["tier"], table["self-hosting cheaper from DAU"]))
    assert col["self-hosted"] == "—"
    assert all(v == "never" or v.replace(",", "").isdigit() for k, v in col.items() if k != "self-hosted"), col
    # the GPUs column counts the self-hosted tier's GPUs; an API tier rents none: a dash, not 0
    gpus = dict(zip(table["tier"], table["n_gpus"]))
    assert gpus["self-hosted"].replace(",", "").isdigit() and int(gpus["self-hosted"].replace(",", "")) >= 1
    assert all(v == "—" for k, v in gpus.items() if k != "self-hosted"), gpus


def test_cache_hit_buttons_move_the_bill(at):
    base = _bills(at)["Opus 4.8"]
    _click(at, "Cache hit 0%")
    assert at.slider(key="mb_hit").value == 0
    # hit 0: 5,568.75 USD by hand: more than at 70%
    assert _bills(at)["Opus 4.8"] == pytest.approx(5569, abs=1) and _bills(at)["Opus 4.8"] > base
    _click(at, "Cache hit 95%")
    assert at.slider(key="mb_hit").value == 95
    assert _bills(at)["Opus 4.8"] < base


def test_remix_blowup_and_back_to_defaults(at):
    base = _bills(at)
    _click(at, "Remix 1/10")
    assert at.number_input(key="mb_remix").value == pytest.approx(10.0)
    blown = _bills(at)
    # G grows from 5,500 to 50,500 a day: the API bills grow 50,500 / 5,500 = 9.18x
    assert blown["Opus 4.8"] == pytest.approx(base["Opus 4.8"] * 50_500 / 5_500, rel=1e-3)
    # the self-hosted staircase barely moves: an order of magnitude below the flagship
    assert blown["Opus 4.8"] > 5 * blown["self-hosted"]
    _click(at, "Defaults")
    assert at.number_input(key="mb_remix").value == pytest.approx(1.0)
    assert _bills(at)["Opus 4.8"] == pytest.approx(base["Opus 4.8"])


def test_bad_input_is_a_message_not_a_traceback(at):
    at.number_input(key="mb_remix").set_value(60.0).run()
    at.number_input(key="mb_orig").set_value(60.0).run()
    assert not at.exception
    assert any("at most 1" in e.value for e in at.error)
    assert at.number_input(key="mb_remix").value == 60.0  # the input is kept


def test_url_seeds_the_page_and_garbage_falls_back():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["mb_hit"] = "95"
    at.query_params["mb_dau"] = "banana"
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.slider(key="mb_hit").value == 95
    assert at.number_input(key="mb_dau").value == 100_000


def test_an_experiment_does_not_depend_on_the_one_before(at):
    # "Remix 1/10" sets the whole documented state: the same bill from the defaults and after
    # "Cache hit 95%" (flagship 32,838 USD by hand in tests/test_bill.py's scenario at remix 10%)
    _click(at, "Remix 1/10")
    from_defaults = _bills(at)["Opus 4.8"]
    _click(at, "Cache hit 95%")
    _click(at, "Remix 1/10")
    assert at.slider(key="mb_hit").value == 70
    assert _bills(at)["Opus 4.8"] == from_defaults == pytest.approx(32838, abs=1)


# -- the edited price table travels in the URL ------------------------------------------------------
SHORT = {"name": "name", "model": "model", "input_usd_per_mtok": "in", "cached_input_usd_per_mtok": "hit",
         "output_usd_per_mtok": "out", "cache_write_multiplier": "write"}


def test_edited_price_table_round_trips_through_the_link_text():
    import pandas as pd
    from calc import api_tiers
    from ui.table_edits import apply_table_edits, encode_table_edits
    base = api_tiers.tiers_to_frame(api_tiers.default_tiers())
    edited = base.copy()
    edited.loc[0, "output_usd_per_mtok"] = 30.0
    edited.loc[3, "name"] = "mini, 50% off"                  # a comma and a percent sign in text
    edited = pd.concat([edited, pd.DataFrame([dict(name="Llama 3 8B", model="Llama-3-8B on Together",
                                                   input_usd_per_mtok=0.18, cached_input_usd_per_mtok=0.18,
                                                   output_usd_per_mtok=0.18, cache_write_multiplier=1.0)])],
                       ignore_index=True)
    text = encode_table_edits(base, edited, SHORT)
    # Only the changed cells and the new row are written, not the 24 unchanged cells of the defaults.
    assert text.startswith("rows=5,out1=30,name4=mini%2C 50%25 off,name5=Llama 3 8B,")
    back = apply_table_edits(base, text, SHORT)
    assert back[list(SHORT)].equals(edited[list(SHORT)])
    assert api_tiers.tiers_from_frame(back)[4].output_usd_per_mtok == 0.18
    assert encode_table_edits(base, base, SHORT) == ""       # the defaults: no parameter at all
    with pytest.raises(ValueError, match="row 9"):
        apply_table_edits(base, "out9=1", SHORT)
    with pytest.raises(ValueError, match="must be a number"):
        apply_table_edits(base, "out1=cheap", SHORT)


def test_a_link_with_an_edited_price_opens_on_that_bill_and_keeps_the_edit_in_the_url():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["mb_prices"] = "out1=30"               # flagship output $25 -> $30 per 1M
    at.switch_page(PAGE).run()
    assert not at.exception and not at.warning
    # 165,000 generations a month x 500 output tokens x $5 more per 1M = $412.50 more than 3,576.375
    assert _bills(at)["Opus 4.8"] == pytest.approx(3988.875, abs=1)
    assert at.query_params["mb_prices"] == "out1=30"
    at.slider(key="mb_hit").set_value(95).run()              # another input: the edit stays
    assert at.query_params["mb_prices"] == "out1=30"
    assert _bills(at)["Opus 4.8"] < 3988


def test_a_garbled_price_link_is_a_warning_and_the_defaults():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["mb_prices"] = "zzz1=30"
    at.switch_page(PAGE).run()
    assert not at.exception and at.warning
    assert _bills(at)["Opus 4.8"] == pytest.approx(3576, abs=1)

    # the message shows at the top of the bill, before the traffic inputs, not 1,400 px down beside the table
    def walk(node):
        yield node
        kids = getattr(node, "children", None)
        for child in (kids.values() if isinstance(kids, dict) else []):
            yield from walk(child)
    shown = [(getattr(n, "type", ""), str(getattr(n, "value", ""))) for n in walk(at.main)]
    warned = next(i for i, (_, v) in enumerate(shown) if "price edits could not be read" in v)
    first_input = next(i for i, (k, _) in enumerate(shown) if k == "number_input")
    table = next(i for i, (_, v) in enumerate(shown) if "Prices, USD per 1M" in v)
    assert warned < first_input < table


def test_a_deleted_tier_is_one_item_in_the_link():
    from calc import api_tiers
    from ui.table_edits import apply_table_edits, encode_table_edits
    base = api_tiers.tiers_to_frame(api_tiers.default_tiers())
    edited = base.drop(index=1).reset_index(drop=True)              # Sonnet 4.6 removed
    edited.loc[0, "output_usd_per_mtok"] = 30.0                     # and Opus 4.8's output price edited
    text = encode_table_edits(base, edited, SHORT)
    assert text == "del=2,out1=30"
    assert apply_table_edits(base, text, SHORT)[list(SHORT)].equals(edited[list(SHORT)])
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["mb_prices"] = text
    at.switch_page(PAGE).run()
    assert not at.exception and not at.warning
    bills = _bills(at)
    assert "Sonnet 4.6" not in bills and bills["Opus 4.8"] == pytest.approx(3988.875, abs=1)
    assert at.query_params["mb_prices"] == text


def test_a_new_tier_without_prices_waits_and_the_bill_stays():
    # A row added in the editor with its name typed first (the link form: rows=5 names a fifth row). Before,
    # its empty prices failed the whole bill ("input_usd_per_mtok of tier 'Test' must be a non-negative
    # number, got nan") and every metric and chart went; now the row waits, named, and the other tiers stay.
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["mb_prices"] = "rows=5,name5=Test"
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    bills = _bills(at)
    assert bills["Opus 4.8"] == pytest.approx(3576, abs=1) and "Test" not in bills
    [info] = [i.value for i in at.info if "Left out of the bill" in i.value]
    assert "Test (in $/1M, hit $/1M, out $/1M)" in info
    assert len(figures(at)) == 5
    # its prices filled in, an empty write multiplier reads 1.0 and the tier joins the bill:
    # 165,000 generations x (prompt tokens at $1 and $0.10 per 1M, 500 output tokens at $2 per 1M)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["mb_prices"] = "rows=5,name5=Test,in5=1,hit5=0.1,out5=2"
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert "Test" in _bills(at) and not [i for i in at.info if "Left out of the bill" in i.value]


def test_buying_prices_the_self_hosted_tier_and_draws_the_crossover(at):
    # Rent: the sidebar's $3.99 per H100-hour. Buy with the defaults (energy.json): $33,750 over 5 years at 8%,
    # $163.44 per kW-month, 700 W busy / 140 W idle + 575 W of server at PUE 1.58 and $0.08 per kWh, busy half
    # the hours: $0.9649 + $0.2894 + $0.1258 = $1.380 per GPU-hour (tests/test_ownership.py by hand), so the
    # self-hosted bill falls by 1.380 / 3.99 at the same GPU count.
    rented = _bills(at)["self-hosted"]
    at.radio(key="mb_own").set_value("buy").run()
    assert not at.exception and not at.error
    assert _bills(at)["self-hosted"] == pytest.approx(rented * 1.380137 / 3.99, rel=2e-3)
    cross = figures(at)[3]
    names = [d.get("name") for d in cross["data"]]
    assert names[:3] == ["Opus 4.8", "rent", "buy"] and cross["layout"]["xaxis"]["type"] == "log"
    said = " ".join(c.value for c in at.caption)
    assert "Renting beats Opus 4.8 from" in said and "buying beats Opus 4.8 from" in said
    parts = figures(at)[4]
    assert [d["name"] for d in parts["data"]] == ["hardware (renting: the hourly price)", "energy", "space"]
    assert any("J per output token" in m.value for m in at.markdown)


def test_no_power_figure_says_so_and_keeps_the_bill(at):
    # Google publishes no board power for a TPU v5e: buying cannot be priced, the page says so, and the
    # API tiers and the rented self-hosted tier stay.
    at.selectbox(key="gpu").set_value("tpu-v5e").run()
    at.radio(key="mb_own").set_value("buy").run()
    assert not at.exception
    # a gap in the data, not the user's error: a warning where "buy" is chosen, naming the box that takes the watts
    warned = [w.value for w in at.warning if w.value.startswith("Buying is not priced: no power figure is on file "
                                                                 "for the Google TPU v5e")]
    assert len(warned) == 1 and "Or type the board" in warned[0] and "charges the rent" in warned[0]
    assert not [e.value for e in at.error if "power figure" in e.value]
    assert _bills(at)["Opus 4.8"] == pytest.approx(3576, abs=1)
    assert len(figures(at)) == 3        # no crossover chart without a price for buying


def test_a_priced_gpu_without_a_power_figure_opens_the_bill_without_an_error(at):
    # GB200 has a rental price on file ($10.50 per GPU-hour) but no board power: on the default "rent" the page opens
    # with a blue note on buying and no red error; typing watts prices buying too
    at.selectbox(key="gpu").set_value("gb200").run()
    assert not at.exception and not at.error
    assert any(i.value.startswith("Buying is not priced: no power figure is on file for the NVIDIA GB200")
               for i in at.info)
    at.number_input(key="en_w").set_value(1200.0).run()
    assert not at.exception and not at.error
    assert not any(i.value.startswith("Buying is not priced") for i in at.info)


def _shown_bill(at) -> dict[str, dict[str, str]]:
    """The bill table as shown: tier -> {header: the cell's text}."""
    head, *rows = next(t for t in pagetest.shown_tables(at) if t and "tier" in t[0] and len(t[0]) >= 4)
    return {r[0]: dict(zip(head, r)) for r in rows}


#: Dollars as the house writes them: whole dollars with separators from $100, cents below, and below $1 three
#: significant digits ("$0.0217", "$0.000919"), never "$0.0009" or "$0.02167" or "$1788187.50".
_DOLLARS = r"^\$(\d{1,3}(,\d{3})*|\d{1,2}\.\d\d|[1-9]\.\d\d|0\.0*[1-9]\d\d)$"


@pytest.mark.parametrize("dau", [50_000_000, 1_000])
def test_dollars_read_with_separators_cents_below_100_and_three_digits_below_1(dau):
    import re
    at = pagetest.open_page(None, mb_dau=str(dau))
    at.switch_page(PAGE).run()
    assert not at.exception
    # Opus at the defaults (tests/test_bill.py by hand): 3,576.375 USD a month per 100,000 DAU = 0.03576375 per DAU;
    # 1.65 generations per DAU a month (1.1% of users x 5 a day x 30 days), so 0.021675 per generation.
    bill = _shown_bill(at)
    opus = bill["Opus 4.8"]
    col = {key: next(h for h in opus if h.startswith(key)) for key in ("total", "per generation", "per DAU")}
    assert opus[col["per generation"]] == "$0.0217"
    assert opus[col["per DAU"]] == "$0.0358"
    if dau == 1_000:  # 35.76375 USD: cents below $100, in the table and the metric
        assert opus[col["total"]] == "$35.76" and pagetest.metric(at, "Opus 4.8") == "$35.76"
    else:             # 1,788,187.5 USD: whole dollars with separators
        assert opus[col["total"]].startswith("$1,788,18") and "." not in opus[col["total"]]
    for tier, cells in bill.items():  # every tier, the self-hosted one's small per-DAU share too
        for key in col.values():
            assert cells[key] == "n/a" or re.match(_DOLLARS, cells[key]), (tier, key, cells[key])
    # the caption under each tier's metric: "$0.0217 per generation" (it read "$0.02167")
    captions = [c for m in pagetest.row_metrics(at) for c in m.captions if "per generation" in c]
    assert captions and captions[0].startswith("$0.0217 per generation"), captions
    for c in captions:
        assert re.match(_DOLLARS, c.split(" per generation")[0]), c


def test_traffic_in_requests_a_day_says_requests_a_day_not_dau(at):
    # the product's default, 100,000 users x (1% + 0.1%) x 5 generations = 5,500 generations a day; counted as
    # requests a day, the verdict's break-even and the table's column are in requests a day, not DAU
    [before] = [s.value for s in at.success if "Cheapest" in s.value]
    assert " It would beat " in before and before.rstrip().endswith(" DAU."), before
    at.radio(key="mb_mode").set_value("requests a day").run()
    assert not at.exception
    [verdict] = [s.value for s in at.success if "Cheapest" in s.value]
    assert " DAU" not in verdict and " It would beat " in verdict, verdict
    assert verdict.rstrip().endswith(" requests a day."), verdict
    table = next(d for d in pagetest.tables(at) if "self-hosting cheaper from (requests a day)" in d.columns)
    col = dict(zip(table["tier"], table["self-hosting cheaper from (requests a day)"]))
    assert col["self-hosted"] == "—" and all(v == "never" or v.replace(",", "").isdigit() for v in col.values()
                                            if v != "—"), col


def test_thousands_of_gpus_read_with_separators():
    # 10 billion users of Llama-3-8B: the self-hosted tier takes more than a thousand H100s, written "12,505 x"
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["mb_dau"] = "10000000000"
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    [verdict] = [s.value for s in at.success if "Cheapest" in s.value]
    import re
    counts = re.findall(r"(\d[\d,]*) x ", verdict) + re.findall(r"(\d[\d,]*) GPUs", verdict)
    assert counts and all(len(c.replace(",", "")) < 4 or "," in c for c in counts), verdict


def test_switching_to_requests_a_day_starts_from_the_users_entered(at):
    # 1,000,000 daily users x (1% + 0.1%) x 5 generations = 55,000 generations a day: the requests-a-day box starts
    # there, so the bill does not jump back to the default 5,500 requests when the traffic is switched
    at.number_input(key="mb_dau").set_value(1_000_000).run()
    users_bill = _bills(at)
    at.radio(key="mb_mode").set_value("requests a day").run()
    assert not at.exception
    assert at.number_input(key="mb_rpd").value == 55_000
    assert _bills(at)["Opus 4.8"] == pytest.approx(users_bill["Opus 4.8"], rel=1e-6)
    # and back: the users entered are still there
    at.radio(key="mb_mode").set_value("a product's users").run()
    assert at.number_input(key="mb_dau").value == 1_000_000


def _self_hosted_bar(spec) -> float:
    """The self-hosted tier's stacked bar in the bill-by-component figure: the sum of its components, USD."""
    total = 0.0
    for trace in spec["data"]:
        xs, ys = pagetest.plotly_values(trace["x"]), pagetest.plotly_values(trace["y"])
        total += sum(y for x, y in zip(xs, ys) if x == "self-hosted")
    return total


def test_the_pricing_control_switches_the_self_hosted_bill_and_says_which_it_follows():
    import math
    import calc
    from calc.serving import serving_estimate
    # 50M DAU x 1.1% x 5 = 2,750,000 generations a day; 70% hits: 2,100 of 3,500 prompt tokens skip prefill.
    # Serving estimate (vLLM, 32 in flight, one H100): a generation holds the replica 500 / X less 2,100 tokens at
    # the bound's prefill rate; roofline bound: 1,400 / prefill + 500 / decode tok/s. GPUs = ceil(G x s x 3 /
    # 86,400), each $3.99 x 720 h.
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    prefill_tps = 3500 / float(calc.prefill_time(m, a, 3500).total_s)
    x = serving_estimate(m, a, 3500, 500, concurrency=32).output_tokens_per_s_per_gpu
    decode_tps = float(calc.decode_step_time(m, a, 32, 3750).tokens_per_s)

    def usd(replica_s):
        return math.ceil(2_750_000 * replica_s * 3 / 86_400) * 3.99 * 720

    serving_usd, bound_usd = usd(500 / x - 2100 / prefill_tps), usd(1400 / prefill_tps + 500 / decode_tps)
    at = pagetest.open_page(PAGE, mb_dau="50000000")
    assert at.radio(key="mb_timing").value == "serving"          # the page's default: what an engine measures
    assert _bills(at)["self-hosted"] == pytest.approx(serving_usd, abs=1)
    assert _self_hosted_bar(figures(at)[0]) == pytest.approx(serving_usd, rel=1e-9)
    [note] = [m.value for m in at.markdown if "self-hosted bill follows" in m.value]
    assert "follows the serving estimate** (vLLM" in note and "range $" in note
    assert f"the roofline bound would price it at {fmt_usd(bound_usd)}" in note
    [cap] = [c for r in pagetest.row_metrics(at) if r.label == "self-hosted" for c in r.captions]
    assert cap.endswith("; serving estimate (vLLM)"), cap
    assert not at.selectbox(key="mb_engine").disabled

    at.radio(key="mb_timing").set_value("bound").run()
    assert not at.exception
    assert _bills(at)["self-hosted"] == pytest.approx(bound_usd, abs=1) and bound_usd < serving_usd
    assert _self_hosted_bar(figures(at)[0]) == pytest.approx(bound_usd, rel=1e-9)
    [note] = [m.value for m in at.markdown if "self-hosted bill follows" in m.value]
    assert "follows the roofline bound**" in note and f"would price it at {fmt_usd(serving_usd)}" in note
    [cap] = [c for r in pagetest.row_metrics(at) if r.label == "self-hosted" for c in r.captions]
    assert cap.endswith("; roofline bound"), cap
    assert at.selectbox(key="mb_engine").disabled
    # the replica's TPOT breakdown (the serving estimate's, beside the bound) one click away, built when opened
    def breakdowns():
        return [f for f in figures(at) if any(d.get("name") == "serving estimate and range" for d in f["data"])]
    assert breakdowns() == []
    at.session_state["mb_tpot"] = True
    at.run()
    assert not at.exception and len(breakdowns()) == 1


def test_a_link_may_ask_for_the_roofline_bound_by_name():
    at = pagetest.open_page(PAGE, mb_timing="roofline bound", mb_engine="sglang")
    assert at.radio(key="mb_timing").value == "bound" and at.selectbox(key="mb_engine").value == "sglang"
    at = pagetest.open_page(PAGE, mb_timing="bound")
    assert at.radio(key="mb_timing").value == "bound"


def test_a_batch_above_what_fits_says_so_by_the_bill_and_the_decode_rate_says_what_it_is():
    import calc
    from calc import bill
    from calc.number_text import fmt_number
    from calc.product_traffic import TrafficScenario
    # Llama-3-8B on one H100 at the default tokens: context 3,000 + 500 + 500 / 2 = 3,750; 4,096 asked, max_batch there
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    fit = calc.max_batch(m, a, 3750)
    at = pagetest.open_page(PAGE, mb_batch="4096")
    assert not at.exception
    said = (f"Decode batch reduced from 4,096 to {fit:,}: what fits in memory at a 3,750-token context (each sequence "
            "at its mean while decoding, prompt + output / 2).")
    assert any(said in c.value for c in at.caption), [c.value for c in at.caption]
    # the serving estimate decodes fewer than the requests in flight: its KV cache at the engine's share of memory
    est = calc.serving.serving_estimate(m, a, 3500, 500, concurrency=fit)
    assert est.decode_batch < fit and est.batch_limit == "kv_capacity"
    assert any(f"The serving estimate decodes {est.decode_batch:,.0f} of the {fit:,} requests in flight at once"
               in c.value for c in at.caption)
    # the decode rate the bill prices is named as decode-only, with the prefill priced apart
    rates = bill.self_hosted_rates(TrafficScenario.from_percentages(100_000, 1.0, 0.1, 5.0, 3000, 500, 500, 70),
                                   bill.SelfHostedSetup(m, a, 3.99, 4096, 3.0, timing="serving"))
    words = f"decode-only rate, with the prompts' prefill priced apart: {fmt_number(rates.decode_tokens_per_s)} tok/s"
    assert any(words in c.value for c in at.caption if c.value.startswith("Self-hosted:"))
    [heading] = [x.value for x in at.markdown if "the monthly bill against output volume" in x.value]
    assert words in heading, heading
    # at the default batch of 32 (fits): no message
    at = pagetest.open_page(PAGE)
    assert not any("Decode batch reduced" in c.value for c in at.caption)


def test_a_context_past_eight_gpus_is_written_with_separators():
    at = pagetest.open_page(PAGE, mb_out="10000000")
    # 3,000 + 500 + 10,000,000 / 2 = 5,003,500 tokens
    assert any("with a 5,003,500-token context" in e.value for e in at.error), [e.value for e in at.error]


def _dau_chart(at):
    return next(f for f in figures(at) if f["layout"].get("xaxis", {}).get("type") == "log"
                and any(d.get("name") == "self-hosted" for d in f["data"]))


def test_the_bill_against_dau_draws_the_serving_estimates_range_and_says_the_bound_has_none():
    import math
    import calc
    from calc import bill
    from calc.product_traffic import TrafficScenario
    from pagetest import plotly_values
    from ui.bill_views import RANGE_LEGEND
    # The page's defaults: G = 0.055 x DAU generations a day, 1,400 prompt tokens missing the cache, 500 output;
    # Llama-3-8B on one H100 at $3.99/h ($2,872.80 a month). At the sweep's last point, 1e9 DAU, G = 55M a day; at
    # the range's low (high) end a generation holds the replica 1,400 / prefill tok/s + 500 / the estimate's high
    # (low) decode tok/s, and the bill is ceil(G x s x 3 / 86,400) replicas.
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    r = bill.self_hosted_rates(TrafficScenario.from_percentages(100_000, 1.0, 0.1, 5.0, 3000, 500, 500, 70),
                               bill.SelfHostedSetup(m, a, 3.99, timing="serving"))

    def usd(decode_tps):
        return math.ceil(55e6 * (1400 / r.prefill_tokens_per_s + 500 / decode_tps) * 3 / 86_400) * 2872.80

    at = pagetest.open_page(PAGE)
    spec = _dau_chart(at)
    ends = [d for d in spec["data"] if d.get("name") == RANGE_LEGEND]
    assert len(ends) == 2 and [d.get("showlegend", True) for d in ends] == [True, False]  # one legend entry
    assert all(d["line"]["dash"] == "dash" and d["line"]["shape"] == "hv" for d in ends)
    assert ends[1]["fill"] == "tonexty"                                                  # the band between them
    low, high = (plotly_values(d["y"])[-1] for d in ends)
    assert low == pytest.approx(usd(r.decode_tokens_per_s_high)) and high == pytest.approx(usd(r.decode_tokens_per_s_low))
    [hosted] = [d for d in spec["data"] if d.get("name") == "self-hosted"]
    assert low < plotly_values(hosted["y"])[-1] < high
    assert any("the dashed staircases and the band between them are the bill at the two ends of its throughput range"
               in c.value for c in at.caption)

    at.radio(key="mb_timing").set_value("bound").run()
    assert not at.exception
    assert not [d for d in _dau_chart(at)["data"] if d.get("name") == RANGE_LEGEND]
    assert any("the staircase follows the roofline bound, which has no range" in c.value for c in at.caption)


def test_the_dau_charts_csv_carries_the_range_in_columns_named_with_their_units():
    import calc
    from calc import api_tiers, bill, bill_compare
    from calc.product_traffic import TrafficScenario
    from ui.downloads import csv_with_inputs
    # The page's DAU sweep with the serving estimate is bill_vs_dau with the range (the chart above draws its
    # columns) and goes to the download as it is, written by csv_with_inputs. At 10M DAU 5 / 5 / 6 replicas of one
    # H100 (tests/test_bill.py works them by hand): $14,364.00 and $17,236.80 at the ends, $14,364.00 between
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    s = TrafficScenario.from_percentages(100_000, 1.0, 0.1, 5.0, 3000, 500, 500, 70)
    sweep = bill_compare.bill_vs_dau(s, api_tiers.default_tiers(), bill.SelfHostedSetup(m, a, 3.99, timing="serving"),
                                     [1e7], with_range=True)
    lines = [x for x in csv_with_inputs(sweep, {}).splitlines() if x and not x.startswith("#")]
    assert lines[0] == "dau,name,total_usd,n_gpus,total_low_usd,total_high_usd,n_gpus_low,n_gpus_high"
    assert lines[-1] == "10000000.0,self-hosted,14364.0,5,14364.0,17236.8,5,6"
    assert lines[1].endswith(",,,,")                         # an API tier: no range


def test_a_context_past_the_trained_one_is_one_warning_and_the_api_tiers_say_their_limits_are_not_checked():
    def warned(at):
        return [w.value for w in at.warning if "trained context" in w.value]

    # 3,000 + 500 prompt + 10,000,000 output = 10,003,500 tokens, past Llama-3-8B's 8,192; the tier does not fit
    at = pagetest.open_page(PAGE, mb_out="10000000")
    assert not at.exception
    assert warned(at) == ["Self-hosted tier: 10,003,500 tokens of prompt and output exceed Llama-3-8B's trained "
                          "context of 8,192: an engine refuses such a request; the times are the arithmetic all the same."]
    assert any("Self-hosted tier left out" in e.value for e in at.error)
    [billed] = [c.value for c in at.caption if c.value.startswith("Billed as:")]
    assert "The API models' own context and output limits are not checked" in billed
    # 3,500 + 6,000 = 9,500 tokens: the tier fits and is priced, and the warning is still said once, with either timing
    for timing in ("serving", "bound"):
        at = pagetest.open_page(PAGE, mb_out="6000", mb_timing=timing)
        assert not at.exception and "self-hosted" in _bills(at)
        assert len(warned(at)) == 1 and warned(at)[0].startswith("Self-hosted tier: 9,500 tokens"), warned(at)
        assert not any("trained context" in i.value for i in at.info)
    # the defaults, 4,000 tokens: no warning
    assert warned(pagetest.open_page(PAGE)) == []


@pytest.mark.parametrize("query", [
    {"mb_prefix": "10000000", "mb_unique": "10000000", "mb_out": "10000000", "mb_timing": "bound"},
    {"mb_prefix": "0", "mb_unique": "0", "mb_out": "1", "mb_hit": "100", "mb_batch": "4096", "mb_peak": "100"},
    {"mb_mode": "requests a day", "mb_rpd": "10000000000", "mb_out": "10000000"},
])
def test_the_longest_and_shortest_generations_the_inputs_accept_give_no_traceback(query):
    at = pagetest.open_page(PAGE, **query)
    assert not at.exception, at.exception


def test_a_notice_is_said_once_with_the_replicas_breakdown_open():
    # NVFP4 on a B200: the serving estimate's FP4 notice (calc.serving_terms.engine_matmul) stands beside the bill;
    # opening "Where the self-hosted replica's time goes" must not say it again. Priced with the bound, the bill
    # shows no serving notice, so the breakdown (the serving estimate's) carries it, once.
    def said(at, words):
        return sum(words in b.value for b in list(at.info) + list(at.warning))

    for timing in ("serving", "bound"):
        at = pagetest.open_page(PAGE, gpu="b200", wq="nvfp4", mb_timing=timing)
        at.session_state["mb_tpot"] = True
        at.run()
        assert not at.exception
        assert said(at, "FP4 tensor cores") == 1, timing
    # a context past the trained one: the page's one warning, not repeated by the breakdown's notices
    at = pagetest.open_page(PAGE, mb_out="6000")
    at.session_state["mb_tpot"] = True
    at.run()
    assert not at.exception and said(at, "exceed Llama-3-8B's trained context") == 1


def test_the_downloads_say_how_self_hosting_was_priced(monkeypatch):
    # each CSV of the page carries its inputs as "# name: value" lines (ui.downloads.download_csv): the timing the
    # self-hosted tier follows must be among them, since the serving estimate and the bound give different bills
    from ui import downloads
    seen = {}
    real = downloads.download_csv

    def record(df, name, key=None, inputs=None, **kw):
        seen[name] = dict(inputs or {})
        return real(df, name, key=key, inputs=inputs, **kw)

    monkeypatch.setattr(downloads, "download_csv", record)
    at = pagetest.open_page(PAGE, mb_engine="sglang")
    assert not at.exception
    for name in ("monthly_bill.csv", "bill_vs_dau.csv", "bill_vs_hit_rate.csv"):
        assert seen[name]["self_hosted_priced_with"] == "serving estimate (SGLang)", name
    at = pagetest.open_page(PAGE, mb_timing="bound")
    assert seen["bill_vs_dau.csv"]["self_hosted_priced_with"] == "roofline bound"


def test_a_free_gpu_leaves_the_rent_or_buy_comparison_out_with_a_sentence_not_an_error():
    # the sidebar takes a price of $0: the API / rent / buy lines had raised calc's "price_per_hour_usd must be
    # above 0 USD, got 0.0" in a red box; the page says why the comparison is left out instead
    at = pagetest.open_page(PAGE, price="0")
    assert not at.exception and not any("price_per_hour_usd" in e.value for e in at.error)
    assert any("left out at a GPU price of $0 an hour" in i.value for i in at.info)
    # with no traffic too, the verdict does not call a $0 self-hosted bill dearer than $0 API bills
    at = pagetest.open_page(PAGE, price="0", mb_dau="0")
    said = " ".join(m.value for m in at.success).replace("\\", "")
    assert "($0.00) costs the same as every API tier at this traffic" in said
    assert "dearer than every API tier" not in said and "from 0 DAU" not in said
