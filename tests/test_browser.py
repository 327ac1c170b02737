"""The app as a user sees it: a real server, headless Chromium (Debian's package) driven by Playwright.

Skipped, with the way to install it, where no chromium is on the PATH; ``bash .ci/run`` installs it,
so in CI these run. No browser is downloaded.
"""
from pathlib import Path

import pytest

import calc
from browsertest import METRIC_LABEL, METRIC_VALUE, pick_option, start_app, sync_api, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent

PAGES = {  # url path -> a heading the page shows
    "": "LLM Inference Explorer",
    "kv_cache": "KV cache",
    "roofline": "roofline",
    "latency_cost": "cost",
    "quantization": "Quantization",
    "batching": "atching",
    "speculative": "peculative",
    "many_gpus": "Many GPUs",
    "monthly_bill": "onthly bill",
    "live": "ive",
}


def expect_metric(pg, text: str) -> None:
    """Wait (up to 30 s) until a metric shows exactly ``text``; the page may still be rendering."""
    sync_api.expect(pg.locator(METRIC_VALUE).filter(has_text=text).first).to_have_text(
        text, timeout=30_000)


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_opens_without_an_exception(page, app_url, path):
    if path and not (ROOT / "app_pages" / f"{path}.py").exists():
        pytest.skip(f"app_pages/{path}.py is not in this tree")
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    assert page.get_by_test_id("stException").count() == 0
    assert PAGES[path].lower() in page.locator("h1").first.inner_text().lower()


def test_a_fresh_server_opened_on_a_deep_link_shows_the_app_menu(page):
    # The first request of a new server goes to a page, not to "/": the menu must be app.py's
    # st.navigation (page titles), with the shared sidebar, never a list of the files in a folder.
    proc, url = start_app()
    try:
        page.goto(url + "/kv_cache?kv_ctx=32768")
        wait_for_app(page)
        nav = page.get_by_test_id("stSidebarNav").inner_text()
        assert "KV cache bill" in nav and "Monthly bill" in nav
        assert "common" not in nav
        assert page.locator(".st-key-model").count() == 1      # the shared sidebar is there
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_moving_a_slider_shows_the_new_number_and_updates_the_url(page, app_url):
    page.goto(app_url + "/?emb=table")                      # the course's napkin convention
    wait_for_app(page)
    m, a = calc.get_model("llama-3-8b"), calc.get_accelerator("h100-sxm")
    # batch 1 under the course's napkin (every parameter read each step, the 1.05 GB input table too):
    # 16.06 GB weights + 1.07 GB KV at 8K over 3.35 TB/s = 5.11 ms, 196 tok/s (week 11, step 4)
    expect_metric(page, "196 tok/s")
    page.locator(".st-key-h_b").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")                       # batch 1 -> 2
    page.wait_for_function("() => location.search.includes('h_b=2')", timeout=30_000)
    wait_for_app(page)
    expected = f"{calc.decode_step_time(m, a, 2, 8192, embedding='table').tokens_per_s:,.0f} tok/s"   # 368 tok/s
    page.locator(METRIC_VALUE).filter(has_text=expected).wait_for(timeout=30_000)


def test_a_deep_link_reproduces_its_view(page, app_url):
    page.goto(app_url + "/?model=qwen3-8b&gpu=h200&h_b=32&h_ctx=4096&price=3")
    wait_for_app(page)
    m, a = calc.get_model("qwen3-8b"), calc.get_accelerator("h200")
    step = calc.decode_step_time(m, a, 32, 4096)
    expect_metric(page, f"{step.tokens_per_s:,.0f} tok/s")
    expect_metric(page, f"${calc.cost_per_million(step.tokens_per_s, 3.0):,.2f}")
    assert "Qwen3-8B on NVIDIA H200" in page.locator("h3").first.inner_text()


def test_garbage_in_the_url_falls_back_to_defaults(page, app_url):
    page.goto(app_url + "/?model=%3Cscript%3E&gpu=zzz&h_b=-4&price=abc&h_ctx=1e99&emb=zzz")
    wait_for_app(page)
    # Llama-3-8B, H100, 8K, B = 1 with the default convention (input embedding gathered): the 1.05 GB
    # input table is no longer read, (16.06 - 1.05 + 1.07) GB / 3.35 TB/s = 4.80 ms, 208 tok/s
    expect_metric(page, "208 tok/s")
    assert page.get_by_test_id("stException").count() == 0


def test_many_gpus_pin_lands_in_the_url(page, app_url):
    page.goto(app_url + "/many_gpus?model=llama-3.1-70b&mg_tp=8&mg_b=32")
    wait_for_app(page)
    step = calc.decode_step_time(calc.get_model("llama-3.1-70b"), calc.get_accelerator("h100-sxm"), 32, 8192, tp=8)
    expect_metric(page, f"{step.total_s * 1e3:,.2f} ms")
    page.get_by_role("button", name="Pin this configuration").click()
    page.wait_for_function("() => location.search.includes('mg_p1=llama-3.1-70b')", timeout=30_000)
    assert page.get_by_test_id("stException").count() == 0


def test_many_gpus_fragments_keep_the_sections_below_and_the_pins_in_step(page, app_url):
    # The layout controls rerun their section alone; the context also drives the GPU table below it, so
    # a new context must reach that table, and a pin taken after a TP move must carry the moved TP.
    page.goto(app_url + "/many_gpus")
    wait_for_app(page)
    page.get_by_text("Llama-3-8B at 8,192 tokens.").wait_for(timeout=30_000)
    page.locator(".st-key-mg_ctx").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")                       # context 8K -> 16K (the shared context slider)
    page.wait_for_function("() => location.search.includes('mg_ctx=16K')", timeout=30_000)
    page.get_by_text("Llama-3-8B at 16,384 tokens.").wait_for(timeout=30_000)
    page.locator(".st-key-mg_tp").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")                       # TP 1 -> 2
    page.wait_for_function("() => location.search.includes('mg_tp=2')", timeout=30_000)
    wait_for_app(page)
    page.get_by_role("button", name="Pin this configuration").click()
    # model~gpu~tp~pp~ep~replicas~weights~kv~batch~context~price
    page.wait_for_function("() => decodeURIComponent(location.search).includes('mg_p1=llama-3-8b~h100-sxm~2~1~1~1~bf16~bf16~16~16384~')",
                           timeout=30_000)
    assert page.get_by_test_id("stException").count() == 0


def test_many_gpus_plan_follows_the_engine_chosen_in_the_serving_block(page, app_url):
    # The serving block sits in the layout's fragment and the capacity plan in another: the engine chosen in the
    # first must reach the second (it used to keep its own choice, vLLM, whatever the block said).
    page.goto(app_url + "/many_gpus?model=llama-3.1-70b&mg_tp=4&mg_b=16&mg_rep=2&mg_ctx=4096")
    wait_for_app(page)
    page.get_by_text("Sized with the serving estimate (vLLM)").wait_for(timeout=30_000)
    wait_for_app(page)
    pick_option(page, "mg_srv_engine", "SGLang")
    page.wait_for_function("() => location.search.includes('mg_srv_engine=SGLang')", timeout=30_000)
    page.get_by_text("Sized with the serving estimate (SGLang)").wait_for(timeout=30_000)
    page.get_by_text("Serving engine: SGLang, as chosen for the serving estimate above.").wait_for(timeout=30_000)
    assert page.get_by_text("Sized with the serving estimate (vLLM)").count() == 0
    assert page.get_by_test_id("stException").count() == 0


def test_endpoint_run_from_a_deep_link_keeps_the_key_out_of_the_url(page, app_url):
    from fake_openai import FakeOpenAI

    with FakeOpenAI(ttft_s=0.02, gap_s=0.005) as srv:
        page.goto(f"{app_url}/live?lv_target=an+endpoint&ep_url={srv.base_url}&ep_model=tiny&ep_levels=1,2"
                  "&ep_n=3&ep_prompt=32&ep_out=4")
        wait_for_app(page)
        page.locator(".st-key-ep_key input").fill("sk-browser-secret")
        page.locator(".st-key-ep_key input").press("Enter")
        wait_for_app(page)
        page.get_by_role("button", name="Measure the endpoint").click()
        page.get_by_text("Measured against predicted").wait_for(timeout=60_000)
        wait_for_app(page)
        assert srv.requests[-1]["headers"]["authorization"] == "Bearer sk-browser-secret"
    assert page.get_by_test_id("stException").count() == 0
    assert page.locator(METRIC_LABEL).filter(has_text="TPOT p50, lightest load").count() == 1
    assert "ep_model=tiny" in page.url and "sk-browser-secret" not in page.url


def test_a_slider_redraws_a_chart_in_place(page, app_url):
    # The roofline chart is the in-place element (ui/inplace_chart.py): after a context move the same
    # DOM node holds the new figure (Plotly.react), where st.plotly_chart mounted a new one.
    resp = page.request.get(app_url + "/app/static/plotly.min.js")
    assert resp.status == 200 and "javascript" in resp.headers["content-type"]
    page.set_viewport_size({"width": 1280, "height": 1400})  # a tall window (the roofline may still sit below it: then it is drawn once the page is still)
    page.goto(app_url + "/roofline?rf_ctx=8192")
    wait_for_app(page)
    plot = page.locator(".st-key-rf_roof .explorer-plot")
    plot.locator(".main-svg").first.wait_for(timeout=30_000)
    # the mode bar has its buttons but none that uploads the chart (plotly.js's "Share chart" to its cloud)
    titles = plot.evaluate("g => Array.from(g.querySelectorAll('.modebar-btn')).map(b => b.dataset.title)")
    assert "Download plot as a PNG" in titles and not [t for t in titles if "Share" in t or "Cloud" in t], titles
    before = plot.evaluate("g => { g.__marked = true; return {draws: +g.dataset.explorerDraws, "
                           "x: g.data.map(t => Array.from(t.x || []))}; }")
    page.locator(".st-key-rf_ctx").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")                        # S = 8,192 -> 16,384
    page.wait_for_function("() => location.search.includes('rf_ctx=16K')", timeout=30_000)
    wait_for_app(page)
    page.wait_for_function(f"() => +document.querySelector('.st-key-rf_roof .explorer-plot').dataset.explorerDraws"
                           f" > {before['draws']}", timeout=30_000)
    after = plot.evaluate("g => ({marked: g.__marked === true, x: g.data.map(t => Array.from(t.x || []))})")
    assert after["marked"]                                   # the same node
    # the decode point at B = 32 reads twice the cache per step at 16K, so its intensity (x) falls
    assert after["x"] != before["x"]


def test_a_chart_below_the_window_waits_faded_until_it_is_scrolled_to_or_the_page_is_still(page, app_url):
    # The roofline page at 1280 x 720: its per-operator chart (key rf_ops, the last) lies below the window. A
    # context move redraws the charts in the window at once (test above); that one waits (faded, or blank where
    # the rerun gave it a new node: it sits in a fragment inside the page's fragment) and is drawn with the figure
    # of the latest rerun when it is scrolled into the window, or once no figure has come for 0.6 s.
    data = ("g => g.data ? g.data.map(t => [t.x, t.y, t.marker && t.marker.size, t.customdata, t.text]"
            ".map(a => a == null ? null : (typeof a === 'object' ? Array.from(a) : a))) : null")
    ops = "document.querySelector('.st-key-rf_ops .explorer-plot')"
    page.goto(app_url + "/roofline?rf_ctx=8192")
    wait_for_app(page)
    near = page.locator(".st-key-rf_roof .explorer-plot")
    far = page.locator(".st-key-rf_ops .explorer-plot")
    near.locator(".main-svg").first.wait_for(timeout=30_000)
    assert far.evaluate("g => g.getBoundingClientRect().top") > 720
    far.locator(".main-svg").first.wait_for(timeout=30_000)               # drawn once the page is still
    assert far.evaluate("g => g.getBoundingClientRect().top") > 720       # without being scrolled to
    before = far.evaluate(data)
    page.evaluate(f"() => {{ window.__ops8k = JSON.stringify(({data})({ops})); window.__explorerStillMs = 1e9; }}")
    page.locator(".st-key-rf_ctx").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")                                      # S = 8,192 -> 16,384
    page.wait_for_function("() => location.search.includes('rf_ctx=16K')", timeout=30_000)
    wait_for_app(page)
    # out of date: faded, or blank where the rerun gave the chart a new node; not drawn while the reader is away
    page.wait_for_timeout(1000)
    assert far.evaluate("g => g.data ? g.style.opacity : 'blank'") in ("0.4", "blank")
    assert far.evaluate(data) in (None, before)
    far.scroll_into_view_if_needed()
    page.wait_for_function(f"() => {{ const g = {ops}; return g && g.data && g.style.opacity === ''"
                           f" && JSON.stringify(({data})(g)) !== window.__ops8k; }}", timeout=30_000)
    # attention over a 16K cache moves twice the bytes of an 8K one (its share of the step, the marker's
    # size, grows): the chart now shows the 16K step
    page.evaluate("() => { window.__explorerStillMs = null; }")           # the still wait as shipped
    page.locator("[data-testid=stMain]").evaluate("m => m.scrollTo(0, 0)")
    page.locator(".st-key-rf_ctx").get_by_role("slider").focus()
    assert far.evaluate("g => g.getBoundingClientRect().top") > 720
    page.keyboard.press("ArrowLeft")                                       # back to 8,192 (the default: not in the URL)
    page.wait_for_function("() => !location.search.includes('rf_ctx=16K')", timeout=30_000)
    wait_for_app(page)
    page.wait_for_function(f"() => {{ const g = {ops}; return g && g.data && g.style.opacity === ''"
                           f" && JSON.stringify(({data})(g)) === window.__ops8k; }}", timeout=30_000)
    assert far.evaluate("g => g.getBoundingClientRect().top") > 720       # drawn below the window, unscrolled


def test_a_legend_above_the_plot_stays_above_it_after_a_resize(page, app_url):
    # The roofline's legend sits above the plot (y = 1.02, bottom-anchored) and wraps to more rows on a narrow
    # page; after 1280 -> 900 -> 1280 px its bottom must still be above the plot area's top (Plotly.Plots.resize
    # kept the narrow page's margins and the legend covered the plot).
    page.goto(app_url + "/roofline")
    wait_for_app(page)
    plot = page.locator(".st-key-rf_roof .explorer-plot")
    plot.locator(".main-svg").first.wait_for(timeout=30_000)
    gap = ("g => g.querySelector('.nsewdrag').getBoundingClientRect().top"
           " - g.querySelector('.legend').getBoundingClientRect().bottom")
    assert plot.evaluate(gap) >= 0
    for width in (900, 1280):
        page.set_viewport_size({"width": width, "height": 720})
        page.wait_for_timeout(500)
        plot.scroll_into_view_if_needed()  # drawn anew at the new width once near the window
        plot.locator(".nsewdrag").first.wait_for(state="attached", timeout=30_000)
        page.wait_for_timeout(1000)
        assert plot.evaluate(gap) >= 0, width


def test_charts_follow_a_theme_switch_without_a_rerun(page, app_url):
    # The app follows the system's colour scheme; switching it changes no widget, so no rerun comes: the
    # charts redraw themselves. Tick labels: slate-500 #64748b = rgb(100, 116, 139) on light, slate-400
    # #94a3b8 = rgb(148, 163, 184) on dark (ui/inplace_chart.py).
    page.emulate_media(color_scheme="light")
    page.goto(app_url + "/quantization")
    wait_for_app(page)
    tick = page.locator(".explorer-plot .xtick text").first
    tick.wait_for(timeout=30_000)
    fill = "t => getComputedStyle(t).fill"
    assert tick.evaluate(fill) == "rgb(100, 116, 139)"
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("() => getComputedStyle(document.querySelector('.explorer-plot .xtick text')).fill"
                           " === 'rgb(148, 163, 184)'", timeout=10_000)


def test_the_page_icon_is_the_shipped_image(page, app_url):
    # app.py's page_icon is assets/favicon.png (shipped with the repository: a missing file made Streamlit
    # write the server's own path into the icon link, which answered with the app's HTML)
    assert (ROOT / "assets" / "favicon.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page.goto(app_url + "/")
    wait_for_app(page)
    href = page.evaluate("() => document.querySelector(\"link[rel~='icon']\").href")
    assert str(ROOT) not in href
    resp = page.request.get(href)
    assert resp.status == 200 and resp.headers["content-type"] == "image/png"


def _link_params(pg) -> dict[str, str]:
    """The page's URL parameters now, decoded."""
    return pg.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")


def _shown_choice(pg, key: str) -> str:
    """The option the selectbox keyed ``key`` shows."""
    return pg.locator(f".st-key-{key} input[role='combobox']").input_value()


def test_measured_page_link_drops_a_configuration_of_the_previous_accelerator(page, app_url):
    # A configuration chosen for DeepSeek-V3 on H200 (TensorRT-LLM) is not one of B200's: after the accelerator
    # changes, the page shows B200's first configuration and the link carries that one, no longer the H200 one
    # (reopened, it drew a warning that the value is not one of the options).
    import re
    page.goto(app_url + "/measured?ms_model=deepseek-v3&ms_acc=h200&ms_engine=TensorRT-LLM")
    wait_for_app(page)
    page.locator("[data-testid='stSelectbox']").filter(has_text="Configuration").click()
    # H200's attention-DP run of fp8-block weights at 1,024 / 2,048 tokens: B200 has no such configuration (other
    # H200 layouts, such as InferenceMAX's TP8 EP8 fp8 runs, are B200's too and stay chosen). Typed into the box, as
    # a user finds it: the list draws only the options that fit under the box in a 720-pixel window
    page.keyboard.type("fp8-block")
    option = page.get_by_role("option").filter(has_text="fp8-block").first
    h200_config = option.inner_text().strip()
    option.click()
    page.wait_for_function("() => location.search.includes('ms_config=')", timeout=30_000)
    wait_for_app(page)
    page.locator("[data-testid='stSelectbox']").filter(has_text=re.compile(r"^Accelerator")).click()
    page.get_by_role("option", name="b200", exact=True).click()
    page.wait_for_function("() => !location.search.includes('ms_acc=h200')", timeout=30_000)
    wait_for_app(page)
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('ms_config') !== {h200_config!r}",
                           timeout=30_000)
    assert _link_params(page)["ms_acc"] == "b200"
    assert _link_params(page)["ms_config"] == _shown_choice(page, "ms_config") != h200_config
    assert page.get_by_test_id("stException").count() == 0


def test_measured_page_link_keeps_every_choice_after_a_change(page, app_url):
    # B200 is gpt-oss-120b's first accelerator and sglang not in its link: Streamlit leaves a widget's default (a
    # selectbox's first option) out of the link, so the link lost ms_acc=b200 once a configuration was picked, and
    # what it left out opened on whatever the data list first. Every choice now stays in it.
    page.goto(app_url + "/measured?ms_model=gpt-oss-120b&ms_acc=b200&ms_engine=vLLM")
    wait_for_app(page)
    page.locator("[data-testid='stSelectbox']").filter(has_text="Configuration").click()
    option = page.get_by_role("option").nth(1)
    picked = option.inner_text().strip()
    option.click()
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('ms_config') === {picked!r}",
                           timeout=30_000)
    wait_for_app(page)
    page.wait_for_function("() => new URLSearchParams(location.search).has('ms_row')", timeout=30_000)
    linked = _link_params(page)
    assert {k: linked.get(k) for k in ("ms_source", "ms_model", "ms_acc", "ms_engine", "ms_config")} == {
        "ms_source": "The data set", "ms_model": "gpt-oss-120b", "ms_acc": "b200", "ms_engine": "vLLM",
        "ms_config": picked}
    assert linked["ms_row"] == _shown_choice(page, "ms_row")
    assert page.get_by_test_id("stException").count() == 0


def test_measured_page_upload_box_opens_under_the_sources_and_says_no_file_is_loaded(page, app_url):
    # A first visit saw the sidebar's config.json upload before any box for measurements, and with "My CSV" chosen
    # and no file the page drew the shipped data set under plain headings, which users read as their own rows.
    page.goto(app_url + "/measured?ms_model=gpt-oss-120b&ms_acc=h200")
    wait_for_app(page)
    hint = page.get_by_text("Your own measurements: choose")
    hint.wait_for(timeout=30_000)
    assert hint.bounding_box()["y"] + hint.bounding_box()["height"] <= 720        # in the first screen
    page.locator(".st-key-ms_source").get_by_text("My CSV (same columns)").click()
    page.wait_for_function("() => location.search.includes('ms_source=My+CSV')", timeout=30_000)
    wait_for_app(page)
    box = page.locator(".st-key-ms_upload_box")
    box.get_by_text("Your measurements: a CSV with the data set's columns").wait_for(timeout=30_000)
    assert box.bounding_box()["y"] < 720 and box.locator("[data-testid='stFileUploaderDropzone']").count() == 1
    assert box.get_by_text("No file loaded yet").count() == 1
    marks = page.get_by_text("The shipped data set, not your file")
    marks.first.wait_for(timeout=30_000)
    assert marks.count() >= 2                              # over the frontier chart and over every row's table
    linked = _link_params(page)
    assert (linked["ms_model"], linked["ms_acc"]) == ("gpt-oss-120b", "h200")  # the choices made stay
    assert page.get_by_test_id("stException").count() == 0
