"""Home: the one fact, the napkin table for the sidebar's model and GPU, and a card per page."""
import streamlit as st

import calc
from ui import downloads, equations, formats, html_table, nav, notes, sidebar, widgets

sel = sidebar.selection()
st.title("LLM Inference Explorer")
intro = widgets.page_intro()
intro.markdown(
    "**One fact drives the economics of serving a language model: to emit one token, the model reads "
    "all of its weights and its whole KV cache from memory.** Prefill reads the weights once for "
    "thousands of prompt tokens and is compute-bound; decode reads them once per step for B tokens and "
    "is memory-bound. Batching, GQA and MLA, quantization, speculative decoding and paging are all ways "
    "to move fewer bytes per token.")
intro.latex(r"t_\text{step} \approx \frac{B \cdot KV}{W} + \max\!\left(\frac{\text{weight bytes}}{W},\;"
         r"\frac{2 N B}{P}\right)")
intro.caption("W: memory bandwidth, P: peak FLOP/s, KV: cache bytes of one sequence, N: parameters, B: batch. "
           "A lower bound; a real step is usually 1.2-2x slower (the inference course, week 11, step 4).")


def _shown(row) -> str:
    if row.unit == "bytes":  # below a megabyte, the exact count (131,072 B is the number to remember)
        return f"{row.value:,.0f} B" if row.value < 1e6 else formats.fmt_bytes(row.value)
    if row.unit == "s":
        return formats.fmt_seconds(row.value)
    if row.unit == "USD":
        return formats.fmt_usd(row.value)
    if row.unit in ("sequences", "tokens"):
        return f"{row.value:,.0f}"
    return f"{row.value:,.0f} {row.unit}"


@widgets.fragment
def explore() -> None:
    """The page's controls and everything they change. A fragment: a control here reruns this part only."""
    sel = sidebar.selection()
    c1, c2 = st.columns(2)
    context_len = widgets.context_slider(c1, "Context length (tokens)", "h_ctx")
    batch = c2.select_slider("Batch (concurrent sequences)", [1, 2, 4, 8, 16, 32, 48, 64, 128, 256, 512],
                             value=1, key="h_b", bind="query-params")
    try:
        table = calc.napkin_table(sel.model, sel.accelerator, context_len, batch, sel.weight_dtype, sel.kv_dtype,
                                  sel.price_per_hour_usd, embedding=sel.embedding, logits=sel.logits)
        step = calc.decode_step_time(sel.model, sel.accelerator, batch, context_len, sel.weight_dtype, sel.kv_dtype,
                                     embedding=sel.embedding)
        napkin = notes.napkin_note(sel, step, batch, context_len)
        budget = calc.memory_budget(sel.model, sel.accelerator, context_len, batch, sel.weight_dtype, sel.kv_dtype)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    st.subheader(f"{formats.md_escape(sel.model.name)} on {sel.accelerator.name}")
    widgets.context_warning(sel.model, context_len)
    # A model too big for one GPU is timed and priced on the GPUs it occupies: the smallest TP that holds it.
    n_gpus, split = 1, None
    if not budget.fits:
        tp = calc.layout_choice.smallest_tp(sel.model, sel.accelerator, context_len, batch, sel.weight_dtype, sel.kv_dtype)
        if tp is not None:
            n_gpus = tp
            split = calc.decode_step_time(sel.model, sel.accelerator, batch, context_len, sel.weight_dtype,
                                          sel.kv_dtype, embedding=sel.embedding, tp=tp)
    shown_step = split or step
    est = calc.efficiency.estimate_step(shown_step)
    hourly = sel.price_per_hour_usd * n_gpus
    on = "" if n_gpus == 1 else f", TP {n_gpus}"
    priced = not (not budget.fits and split is None)
    # no layout of up to 8 GPUs holds it: one GPU's times, marked as the roofline page marks them
    on += "" if priced else " (if it fit)"
    with widgets.metric_row(4) as m:
        m[0].metric("Decode step (TPOT), bound" + on, formats.fmt_seconds(shown_step.total_s),
                    help=widgets.estimate_help(), delta=f"{widgets.COURSE_ESTIMATE} {formats.fmt_seconds(est.total_s)}",
                    delta_color="off", delta_arrow="off")
        m[1].metric("Throughput, bound" + on, formats.fmt_number(shown_step.tokens_per_s, "tok/s"),
                    help=widgets.estimate_help("throughput"),
                    delta=f"{widgets.COURSE_ESTIMATE} {formats.fmt_number(est.tokens_per_s, 'tok/s')}",
                    delta_color="off", delta_arrow="off")
        if priced:
            m[2].metric("USD per 1M output tokens" + ("" if n_gpus == 1 else f", {n_gpus} GPUs"),
                        formats.fmt_usd(calc.cost_per_million(shown_step.tokens_per_s, hourly)),
                        help=widgets.estimate_help() + f" Priced at {n_gpus:,} x ${sel.price_per_hour_usd:,.2f}/h.",
                        delta=f"{widgets.COURSE_ESTIMATE} {formats.fmt_usd(calc.cost_per_million(est.tokens_per_s, hourly))}",
                        delta_color="off", delta_arrow="off")
        else:
            m[2].metric("USD per 1M output tokens", "n/a", delta="no tensor-parallel layout holds it",
                        delta_color="red", delta_arrow="off")
        m[3].metric("Memory used", formats.fmt_bytes(budget.total_bytes),
                    delta=("fits on one GPU" if budget.fits else f"needs {budget.n_accelerators:,} GPUs"),
                    delta_color="green" if budget.fits else "red", delta_arrow="off")
    widgets.show_equations(equations.decode_rows(step, sel.accelerator, batch, sel.weight_dtype, sel.price_per_hour_usd,
                                                calc.cost_per_million(step.tokens_per_s, sel.price_per_hour_usd))
                          + [equations.memory_row(budget.weights_bytes, budget.kv_bytes, budget.total_bytes, batch)],
                          label="The equations behind these numbers (one GPU)" if n_gpus > 1 else
                          "The equations behind these numbers")
    if napkin and n_gpus == 1:
        st.caption(napkin)
    if not budget.fits:
        msg = (f"Weights plus cache ({formats.fmt_bytes(budget.total_bytes)}) exceed one {sel.accelerator.name} "
               f"({formats.fmt_bytes(sel.accelerator.memory_bytes)}): its memory needs {budget.n_accelerators:,} of them. ")
        if split is not None:
            msg += (f"The figures above are for the smallest tensor-parallel group that holds it, {n_gpus} GPUs "
                    f"(TP {n_gpus}; {formats.fmt_seconds(split.comm_s)} of each step all-reduces), priced at "
                    f"{n_gpus} x ${sel.price_per_hour_usd:,.2f}/h. Other layouts, replicas and a plan for your "
                    "traffic: the Many GPUs page.")
        else:
            msg += "No tensor-parallel group of up to 8 GPUs holds it here: the Many GPUs page tries pipeline and expert parallelism."
        st.warning(msg)


    shown = table.assign(shown=[_shown(r) for r in table.itertuples()])
    html_table.show_table(shown[["quantity", "shown", "note"]].rename(columns={"shown": "value"}), hide_index=True,
                 width="stretch", height=35 * (len(shown) + 1) + 3)
    st.caption(f"GB = 10^9 bytes. Times are lower bounds from the roofline. Max batch and fit against "
               f"{sel.capacity_label} (sidebar: memory capacity).")
    downloads.download_csv(table, "napkin.csv", key="h_csv", inputs={"context_len": context_len, "batch": batch})


explore()

st.subheader("Explore")
# A card per page (every page but this one) in a grid of as many 13 rem columns as fit: four at 1280 px, three at
# 700 px, one on a phone; a card's title wraps instead of being cut (a page link keeps its text on one line).
st.html("""<style>
.st-key-h_cards { display: grid !important; grid-template-columns: repeat(auto-fill, minmax(min(100%, 13rem), 1fr));
  gap: 1rem; align-items: stretch; }
.st-key-h_cards > div, .st-key-h_cards > div > [data-testid=stVerticalBlock] { width: auto !important; height: 100%; }
.st-key-h_cards [data-testid=stPageLink] * { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; }
</style>""")
with st.container(key="h_cards"):
    for path, title, _, blurb in nav.PAGES[1:]:
        with st.container(border=True):
            st.page_link(path, label=f"**{title}**")
            st.caption(blurb)
