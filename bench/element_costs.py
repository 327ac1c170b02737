"""What one kind of element adds to a slider move: the floor app with a few elements added, side by side.

Each variant is bench/one_chart_app.py (one slider, three metrics, one bar chart) plus a snippet: eight
st.metric in st.columns, the same eight as one ``widgets.metric_row``, two st.dataframe whose numbers follow
the slider or stay the same, the same two through ``html_table.show_table``. Every variant is served by its own
`streamlit run` and moved in turn (``--rounds`` rounds of three moves); printed: the median and the
milliseconds over the floor. The variants carry the app's page CSS (classroom.page_css), as the pages do.

    python bench/element_costs.py --rounds 10

These are costs in a one-chart page; on the app's pages the same change saves less (bench/ab_speed.py
measures that against the previous commit).
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_speed as bs  # noqa: E402
import ws_load  # noqa: E402

ROOT = ws_load.ROOT
#: A paragraph of the pages' length and markup (bold, italics, a link), as markdown and as the HTML it becomes.
LONG = ("Each running sequence reads its own cache; the weights are read *once* for the whole batch. A step that "
        "admits requests also prefills their prompts in the same pass and emits their first token, so **TTFT = "
        "queueing + that step**. Static batching keeps finished sequences as padding until the longest one is done; "
        "[continuous batching](https://www.usenix.org/conference/osdi22/presentation/yu) returns to the scheduler "
        "after every step.")
LONG_HTML = (LONG.replace("*once*", "<em>once</em>").replace("**TTFT = queueing + that step**",
             "<strong>TTFT = queueing + that step</strong>")
             .replace("[continuous batching](https://www.usenix.org/conference/osdi22/presentation/yu)",
                      '<a href="https://www.usenix.org/conference/osdi22/presentation/yu">continuous batching</a>'))
HEAD = f"""LONG = {LONG!r}
LONG_HTML = {LONG_HTML!r}
import sys
sys.path.insert(0, {str(ROOT)!r})
import pandas as pd
from ui import classroom, html_table, widgets
classroom.page_css()
"""
TABLE = 'pd.DataFrame({{c: [{x} * (r + 1) * (j + 1) * 1.1 for r in range(4)] for j, c in enumerate("abcdef")}})'
VARIANTS = {
    "floor": "",
    "8 st.metric": """
cc = st.columns(4) + st.columns(4)
for i in range(8):
    cc[i].metric(f"Metric {i}", f"{n * (i + 1) * 1.37:,.2f} ms", delta=f"{n - 8:+d} %", help="help text")
""",
    "8 in one metric_row": """
with widgets.metric_row(8, per_row=4) as m:
    for i in range(8):
        m[i].metric(f"Metric {i}", f"{n * (i + 1) * 1.37:,.2f} ms", delta=f"{n - 8:+d} %", help="help text")
""",
    "2 st.dataframe, changing": f"""
for k in range(2):
    st.dataframe({TABLE.format(x="n")}, hide_index=True)
""",
    "2 st.dataframe, unchanged": f"""
for k in range(2):
    st.dataframe({TABLE.format(x="1")}, hide_index=True)
""",
    "2 show_table, changing": f"""
for k in range(2):
    html_table.show_table({TABLE.format(x="n")}, hide_index=True)
""",
    "20 st.markdown": """
for i in range(20):
    st.markdown(f"Paragraph {i}: the weights are read once per step, the cache once per sequence.")
""",
    "the same text in one st.markdown": """
st.markdown("\\n\\n".join(f"Paragraph {i}: the weights are read once per step, the cache once per sequence."
                          for i in range(20)))
""",
    "20 captions in 5 st.columns(4)": """
for r in range(5):
    for i, col in enumerate(st.columns(4)):
        col.caption(f"cell {r}, {i}")
""",
    "10 long st.markdown (unchanged)": """
for i in range(10):
    st.markdown(f"**Paragraph {i}.** " + LONG)
""",
    "the same 10 as st.html (unchanged)": """
for i in range(10):
    st.html(f"<p><strong>Paragraph {i}.</strong> " + LONG_HTML + "</p>")
""",
    "8 st.slider": """
for i in range(8):
    st.slider(f"Slider {i}", 0, 100, 50, key=f"extra_{i}")
""",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8, help="rounds of three moves per variant")
    ap.add_argument("--variants", default="", help="names to run, separated by commas (the floor always runs)")
    args = ap.parse_args()
    wanted = {"floor", *filter(None, args.variants.split(","))}
    variants = {n: v for n, v in VARIANTS.items() if not args.variants or n in wanted}
    floor = (ROOT / "bench" / "one_chart_app.py").read_text()
    procs = []
    with tempfile.TemporaryDirectory(prefix="element-costs-") as tmp:
        try:
            from playwright.sync_api import sync_playwright
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=ws_load.CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                tabs = {}
                for i, (name, snippet) in enumerate(variants.items()):
                    script = Path(tmp) / f"variant_{i}.py"
                    script.write_text(HEAD + floor + snippet)
                    proc, url = ws_load.start_plain(str(script))
                    procs.append(proc)
                    tab = bs.Tab(browser, url)
                    tab.find_slider()
                    tab.move()
                    tab.move()
                    tabs[name] = tab
                times = {n: [] for n in tabs}
                for _ in range(args.rounds):
                    for n, tab in tabs.items():
                        times[n] += [tab.move() * 1e3 for _ in range(3)]
                browser.close()
        finally:
            for proc in procs:
                os.killpg(proc.pid, signal.SIGTERM)
    base = statistics.median(times["floor"])
    print(f"slider to redrawn, median of {3 * args.rounds} moves; load average {os.getloadavg()[0]:.2f}")
    print(f"{'variant':<28} {'ms':>6} {'over floor':>11}")
    for n, t in times.items():
        m = statistics.median(t)
        print(f"{n:<28} {m:6.0f} {m - base:+10.0f}")


if __name__ == "__main__":
    main()
