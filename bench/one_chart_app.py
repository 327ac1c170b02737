"""The floor for bench/browser_speed.py: the smallest useful Streamlit page (one slider, three metrics,
one Plotly bar chart). Run: streamlit run bench/one_chart_app.py"""
import plotly.graph_objects as go
import streamlit as st

n = st.slider("Batch", 1, 64, 8, key="floor_b")
c = st.columns(3)
c[0].metric("Step", f"{5 + 0.1 * n:.2f} ms")
c[1].metric("Throughput", f"{n * 1000 / (5 + 0.1 * n):,.0f} tok/s")
c[2].metric("Cost", f"${0.4 / n:.3f}")
fig = go.Figure(go.Bar(x=["weights", "KV cache", "compute"], y=[5, 0.1 * n, 0.02 * n]))
st.plotly_chart(fig, key="floor_chart")
