"""The app's pages, in menu order: app.py's navigation, the home page's cards and the classroom's story
read this one list."""


#: Every page, in menu order: (file, title, icon, one-line blurb for the home page's cards).
PAGES = [
    ("app_pages/home.py", "Home", ":material/home:", "The one fact and the napkin table."),
    ("app_pages/kv_cache.py", "KV cache bill", ":material/memory:",
     "How big the cache gets: MHA, GQA, MQA, MLA, windows; what fits."),
    ("app_pages/roofline.py", "Decode and the roofline", ":material/speed:",
     "Why decode is memory-bound; the step split; the knee."),
    ("app_pages/latency_cost.py", "Latency against cost", ":material/payments:",
     "TPOT against dollars per million tokens: the Pareto front."),
    ("app_pages/quantization.py", "Quantization", ":material/compress:", "Weights and cache from bf16 to 4 bits; q4_K_M, mxfp4, nvfp4 as stored."),
    ("app_pages/batching.py", "Batching and memory", ":material/view_week:",
     "Static vs continuous batching; PagedAttention; prefix caching."),
    ("app_pages/speculative.py", "Speculative decoding", ":material/fast_forward:",
     "Exact sampling from a draft; when the speedup vanishes."),
    ("app_pages/many_gpus.py", "Many GPUs", ":material/hub:",
     "TP, PP, EP and replicas; a capacity plan for your traffic; which GPUs can run it."),
    ("app_pages/measured.py", "Against published measurements", ":material/fact_check:",
     "Engines' published benchmarks beside the serving estimate and the bound; load your own."),
    ("app_pages/monthly_bill.py", "Monthly bill", ":material/receipt_long:",
     "A product's bill across model tiers; when self-hosting wins."),
    ("app_pages/workloads.py", "Workloads and tiered cache", ":material/stacks:",
     "Chat, RAG and agent sessions; a prefix cache in GPU, CPU and SSD tiers; the API bill against self-hosting."),
    ("app_pages/exercises.py", "Exercises", ":material/school:",
     "Graded napkin problems with worked solutions; a teacher view."),
    ("app_pages/poll.py", "Class poll", ":material/how_to_vote:",
     "Predict, then reveal: the class answers together, the projector shows the spread, then the answer."),
    ("app_pages/live.py", "Live measurement", ":material/monitor_heart:",
     "A real model on this machine, next to the prediction."),
]


class PageEnd(Exception):
    """Raised by ``end_page``: the page has drawn all it will in this run. app.py catches it around the page and
    goes on to its notice of the opening link, which ``st.stop()`` would skip (Streamlit discards what a script
    draws once a stop is requested)."""


def end_page() -> None:
    """End the page's run here, as ``st.stop()`` would, but let app.py name the link's refused and unread
    parameters after it.

    Raises:
        PageEnd: always; app.py catches it.
    """
    raise PageEnd
