"""Latency against cost: TPOT against USD per 1M output tokens over the batch, the Pareto front."""
import plotly.graph_objects as go
import streamlit as st

import calc
from ui import (caching, charts, columns, downloads, energy, equations, formats, html_table, notes, serving_views,
                sidebar, widgets)

EXPERIMENTS = {
    "Course, week 11: agent, TPOT <= 10 ms at $3/h": {
        "model": "llama-3-8b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "price": 3.0, "emb": "table",
        "lc_ctx": 8192, "lc_tpot": 10.0, "lc_chat": 20.2},
    "Course, week 11: chat, B = 48 (20.2 ms)": {
        "model": "llama-3-8b", "gpu": "h100-sxm", "wq": "bf16", "kvq": "bf16", "price": 3.0, "emb": "table",
        "lc_ctx": 8192, "lc_tpot": 20.2, "lc_chat": 20.2},
    "int8 weights and cache": {
        "model": "llama-3-8b", "gpu": "h100-sxm", "wq": "int8", "kvq": "int8", "price": 3.0, "emb": "table",
        "lc_ctx": 8192, "lc_tpot": 10.0, "lc_chat": 50.0},
}

sel = sidebar.selection()
st.title("Latency against cost")
intro = widgets.page_intro()
intro.markdown(
    "Every batch size B gives a pair: the step time, which is each user's time per output token (TPOT), and "
    "the price of a million tokens. Larger batches share one weight read among more tokens: **cheaper, but "
    "slower for everyone**. The service requirement picks the point (the inference course, week 11, step 4).")
widgets.experiment_buttons(EXPERIMENTS, key="lc_exp")


def front_table(fitting, context_len: int, tpot_ms: float, chat_ms: float, choice) -> None:
    """The front as a table (J per token and CO2 beside USD per 1M) with its CSV download."""
    table = energy.with_energy(fitting[["batch", "tpot_s", "tokens_per_s", "tokens_per_s_per_user", "usd_per_million",
                                        "memory_bytes", "pareto", "bound"]], choice)
    # Shown with TPOT in ms and memory in GB under the same column names; the CSV keeps seconds and bytes.
    html_table.show_table(columns.shown(table), hide_index=True, width="stretch",
                          column_order=[c for c in table.columns if c != "pareto"],
                          column_config=columns.config(table.columns, tpot_s="%.2f") | {"bound": "bound"})
    downloads.download_csv(table, "latency_cost_front.csv", key="lc_csv",
                        inputs={"context_len": context_len, "agent_tpot_ms": tpot_ms, "chat_tpot_ms": chat_ms})


@widgets.fragment
def explore() -> None:
    """The page's controls and everything they change. A fragment: a control here reruns this part only."""
    sel = sidebar.selection()
    c1, c2, c3, c4 = st.columns(4)
    context_len = widgets.context_slider(c1, "Context length S (tokens)", "lc_ctx")
    widgets.context_warning(sel.model, context_len)
    tpot_ms = c2.slider("Agent: TPOT target (ms)", 1.0, 200.0, 10.0, step=0.1, key="lc_tpot", bind="query-params",
                        help="A strict per-token latency, e.g. an agent whose tool calls wait on the stream.")
    chat_ms = c3.slider("Chat: TPOT target (ms)", 1.0, 200.0, 50.0, step=0.1, key="lc_chat", bind="query-params",
                        help="People read about 5-10 words/s (7-13 tokens/s); 50 ms (20 tok/s) already outruns them.")
    users = c4.number_input("Concurrent streams to serve", min_value=0, max_value=10_000_000, value=1000, step=100,
                            key="lc_users", bind="query-params")

    m, acc, wq, kvq, price = sel.model, sel.accelerator, sel.weight_dtype, sel.kv_dtype, sel.price_per_hour_usd
    try:
        emb = sel.embedding
        b_agent = caching.cached_call(calc.max_batch_for_tpot, m, acc, context_len, tpot_ms / 1e3, wq, kvq, embedding=emb)
        b_chat = caching.cached_call(calc.max_batch_for_tpot, m, acc, context_len, chat_ms / 1e3, wq, kvq, embedding=emb)
        # Every batch up to 1,024, a bounded grid above (a tiny model's ceiling can be 10^8), and the two picks.
        front = caching.cached_call(calc.pareto_front, m, acc, context_len, price, wq, kvq, embedding=emb,
                                  include_batches=[b for b in (b_agent, b_chat) if b])
        ceiling = calc.max_batch(m, acc, context_len, wq, kvq)
    except ValueError as exc:
        widgets.show_error(exc)
        return

    st.subheader(f"{formats.md_escape(m.name)} on {acc.name}, S = {context_len:,}")
    st.caption(f"At ${price:,.2f} per GPU-hour (the sidebar's price: type your own there).")
    if ceiling < 1:
        st.error(notes.no_batch_sentence(m, acc, context_len, wq, kvq))
        return

    fitting = front[front["fits"]]
    agent = fitting[fitting["batch"] == b_agent]
    chat = fitting[fitting["batch"] == b_chat]
    mc = widgets.metric_row(4)
    if b_agent >= 1:
        row = agent.iloc[0]
        mc[0].metric("Chosen batch B", f"{b_agent:,}", help="The largest B within memory that meets the agent's TPOT.")
        est = calc.efficiency.estimate_step(calc.decode_step_time(m, acc, b_agent, context_len, wq, kvq,
                                                                  embedding=sel.embedding))
        mc[1].metric("Its TPOT, bound", formats.fmt_seconds(row["tpot_s"]), help=widgets.estimate_help(),
                     delta=f"{widgets.COURSE_ESTIMATE} {formats.fmt_seconds(est.total_s)}", delta_color="off",
                     delta_arrow="off")
        mc[2].metric("USD per 1M output tokens", formats.fmt_usd(row["usd_per_million"]))
        mc[3].metric("Replicas needed", f"{calc.replicas_needed(users, b_agent):,}",
                     help=f"{users:,} concurrent streams at B = {b_agent:,} per replica (one {acc.name} each).")
        mc.show()
        # the energy inputs sit below the metrics, so a lecture step's quoted price stays on the first screen
        choice = energy.energy_inputs(sel.accelerator)
        st.caption(energy.energy_sentence(row["tokens_per_s"], choice, label=f" at B = {b_agent:,}"))
        widgets.show_equations(equations.decode_rows(
            calc.decode_step_time(m, acc, b_agent, context_len, wq, kvq, embedding=emb), acc, b_agent, wq, price,
            row["usd_per_million"]))
        serving_views.section("lc_srv", m, acc, context_len, 256, b_agent, wq, kvq, price_per_gpu_hour_usd=price,
                              tpot_target_s=tpot_ms / 1e3)
    else:
        fastest = fitting.iloc[0]
        mc[0].metric("Chosen batch B", "none")
        mc.show()
        choice = energy.energy_inputs(sel.accelerator)
        st.error(f"No batch meets a TPOT of {tpot_ms:g} ms: even B = 1 takes {formats.fmt_seconds(fastest['tpot_s'])} "
                 f"on one {acc.name}. Raise the target, quantize, or split the model over more GPUs.")

    st.markdown(f"**TPOT against the price of a million tokens, B = 1 .. {ceiling:,} (the memory ceiling)**")
    fig = charts.Figure()
    fig.add_scatter(x=fitting["tpot_s"] * 1e3, y=fitting["usd_per_million"], mode="lines+markers", name="B = 1 .. ceiling",
                    marker=dict(size=5, color="#1f77b4"), customdata=fitting["batch"],
                    hovertemplate="B = %{customdata}<br>TPOT %{x:.2f} ms<br>$%{y:.3f} per 1M<extra></extra>")
    marks = [(tpot_ms, "#d62728", "dash", f"agent target {tpot_ms:g} ms", 0.98),
             (chat_ms, "#2ca02c", "dot", f"chat target {chat_ms:g} ms", 0.04)]
    fig.update_layout(
        shapes=[dict(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1, line=dict(color=c, dash=d))
                for x, c, d, _, _ in marks],
        annotations=[dict(x=x, y=y, xref="x", yref="paper", text=t, showarrow=False, xanchor="left")
                     for x, _, _, t, y in marks])
    for part, label, color, symbol in ((agent, "agent", "#d62728", "star"), (chat, "chat", "#2ca02c", "diamond")):
        if len(part):
            r = part.iloc[0]
            fig.add_scatter(x=[r["tpot_s"] * 1e3], y=[r["usd_per_million"]], mode="markers",
                            name=f"{label}: B = {int(r['batch']):,}", marker=dict(size=18, color=color, symbol=symbol),
                            hovertemplate=f"{label}: B = {int(r['batch']):,}<br>TPOT %{{x:.2f}} ms<br>"
                                          "$%{y:.3f} per 1M<extra></extra>")
    fig.update_xaxes(title="TPOT, time per output token (ms)")
    fig.update_yaxes(type="log", title="USD per 1M output tokens (log)", tickprefix="$")
    fig.update_layout(height=460)
    charts.show_chart(fig, key="lc_front")

    if len(chat):
        r = chat.iloc[0]
        st.markdown(f"**Chat** (TPOT <= {chat_ms:g} ms): B = {int(r['batch']):,}, {formats.fmt_seconds(r['tpot_s'])} per "
                    f"token, {formats.fmt_number(r['tokens_per_s_per_user'], 'tok/s')} per person, {formats.fmt_usd(r['usd_per_million'])} "
                    f"per 1M. The inference course, week 11 picks B = 48 for chat on Llama-3-8B at 8k: a 20.2 ms step, 50 tok/s per person, "
                    "faster than anyone reads, $0.35 at $3/h.")
    st.latex(r"\text{TPOT}(B) = t_\text{step}(B), \qquad \frac{\$}{10^6\ \text{tokens}} = "
             r"\frac{\text{price per hour}}{B / t_\text{step}(B) \cdot 3600} \cdot 10^6, \qquad "
             r"\text{replicas} = \left\lceil \frac{\text{streams}}{B} \right\rceil")
    st.caption("Every point on this curve is on the Pareto front: B raises both the step and the output, so a cheaper "
               "point is always a slower one. The weight read (fixed per step) is shared by B tokens; the cache read "
               "(per sequence) is not, so the price falls toward a floor, W/KV tokens per second. Replicas scale "
               "throughput at the same latency (CS336 lecture 10, Inference). Step times are lower bounds: real ones are 1.2-2x slower.")

    # Built only while open (toggling reruns): a slider move sends and redraws no hidden table.
    front_box = st.expander("The front as a table", key="lc_front_table", on_change="rerun")
    if front_box.open:
        with front_box:
            front_table(fitting, context_len, tpot_ms, chat_ms, choice)


explore()
