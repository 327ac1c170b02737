"""The roofline page's tables: the step's operators, and the expander with the decode split, throughput by number
of KV heads and TTFT by prompt length (milliseconds on screen, seconds in the CSVs)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from calc import sweeps
from ui import caching, downloads, energy, html_table
from ui import columns
from ui.columns import column


def operators_table(ops: pd.DataFrame) -> None:
    """The step's operators: FLOPs, bytes, intensity, bound and estimated time, share, bound."""
    html_table.show_table(ops.assign(time_s=ops["time_s"] * 1e3, estimate_s=ops["estimate_s"] * 1e3, bytes=ops["bytes"] / 1e9,
                            flops=ops["flops"] / 1e9),
                 hide_index=True, width="stretch", column_order=(
                     "label", "flops", "bytes", "intensity_flop_per_byte", "time_s", "estimate_s", "share_of_time", "bound"),
                 column_config={
                     "label": st.column_config.TextColumn("operator", pinned=True),
                     "flops": st.column_config.NumberColumn("GFLOP", format="%.2f"),
                     "bytes": st.column_config.NumberColumn("GB moved", format="%.3f"),
                     "intensity_flop_per_byte": st.column_config.NumberColumn("FLOP/byte", format="%.1f"),
                     "time_s": st.column_config.NumberColumn("time (ms), bound", format="%.3f"),
                     "estimate_s": st.column_config.NumberColumn("course estimate (ms)", format="%.3f",
                                                                 help="Bound parts over MBU and MFU (the inputs above)"),
                     "share_of_time": st.column_config.NumberColumn("share", format="percent"),
                     "bound": "bound"})


def tables_expander(m, acc, context_len: int, batch: int, prompt_len: int, wq: str, kvq: str, emb: str,
                    kheads: pd.DataFrame, ttfts: pd.DataFrame, choice=None, price_per_hour_usd: float = 0.0) -> None:
    """The three tables behind the charts, built only while their expander is open, with their CSVs; the split
    gets USD per 1M and J per output token for each batch (``choice``: ui.energy.energy_inputs)."""
    csv_in = {"context_len": context_len, "batch": batch, "prompt_len": prompt_len}
    # Built only while open (the expander reruns the page when toggled): a slider move then redraws no table.
    tables = st.expander("Tables (times in ms here; the CSVs keep seconds and every column)", key="rf_tables",
                         on_change="rerun")
    if tables.open:
        with tables:
            st.markdown(f"**Decode step split over the batch** (its grid holds the chosen B = {batch:,})")
            # the chart's grid leaves B out while B is within the ceiling (so a B move does not redraw it); the
            # table holds it
            split = caching.cached_call(sweeps.decode_split, m, acc, context_len, batch, wq, kvq, embedding=emb)
            if choice is not None:
                split = energy.with_energy(split, choice, price_per_hour_usd=price_per_hour_usd)
            html_table.show_table(columns.shown(split), hide_index=True,
                         width="stretch", column_order=("batch", "weights_s", "kv_s", "compute_s", "total_s", "tokens_per_s",
                                                        "usd_per_million", "j_per_token", "max_batch"),
                         column_config=columns.config(split.columns) | {
                             "compute_s": column("compute_s", help="2NB/P: the step's FLOPs over peak"), "fits": "fits"})
            downloads.download_csv(split, "decode_split.csv", key="rf_csv_split", inputs=csv_in)
            st.markdown("**Throughput by number of KV heads**")
            html_table.show_table(columns.shown(kheads), hide_index=True, width="stretch", column_order=(
                "variant", "n_kv_heads", "batch", "total_s", "tokens_per_s", "max_batch", "knee_batch", "ceiling_tokens_per_s"),
                column_config=columns.config(kheads.columns) | {
                    "variant": "variant", "is_ceiling": "at ceiling", "is_knee": "at knee"})
            downloads.download_csv(kheads, "throughput_by_kv_heads.csv", key="rf_csv_k", inputs=csv_in)
            st.markdown("**Prefill (TTFT) against prompt length**")
            html_table.show_table(columns.shown(ttfts), hide_index=True, width="stretch",
                         column_config=columns.config(ttfts.columns) | {
                             "attention_flops": st.column_config.NumberColumn("attention FLOP", format="%.2e"),
                             "flops": st.column_config.NumberColumn("FLOP", format="%.2e"), "bound": "bound"})
            downloads.download_csv(ttfts, "ttft.csv", key="rf_csv_ttft", inputs=csv_in)

