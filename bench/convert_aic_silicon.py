"""Convert NVIDIA aiconfigurator's measured serving runs into rows of calc/data/serving_measurements.csv.

Run: python bench/convert_aic_silicon.py silicon_sample.csv [--all] > rows.csv
(silicon_sample.csv: aic-core/src/aiconfigurator_core/systems/silicon_sample.csv of
github.com/ai-dynamo/aiconfigurator, Apache-2.0.) Prints the rows (CSV, the measurement file's columns) of
the aggregated runs ("mode" agg; disaggregated runs are left out) whose model and system have a calc
preset: a TTFT and a TPOT row per run. Without ``--all``, every second concurrency of each
configuration (model, system, engine and version, lengths, quantisation, layout), counted from the
smallest, is kept, so that the fit stays a few minutes long; the lowest and highest concurrency are
always kept.

What the numbers are (from the repository, not from the dump itself, which states no client): rows of
"a 2026-04 dump of the internal benchmark DB" (docs/design/prediction_regression_gate_design.md, 2.5),
one per engine deployment and concurrency ("silicon_concurrency" in silicon_data_source; batch_size is
the batch of one attention-DP rank). The repository's generated benchmark
(src/aiconfigurator/generator/config/backend_templates/benchmark/bench_run.sh.j2) is aiperf profile at a
fixed concurrency, fixed ISL/OSL (stddev 0 by default in deployment_config.yaml), ignore_eos, streaming,
20 x concurrency requests after 2 x concurrency warm-up requests; aiconfigurator predicts, and compares
with these rows, a request's TTFT (queueing for a prefill slot included) and its mean time per output
token, so the rows are taken as means.
"""
import re
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc.measurements import COLUMNS, measurement_bound, model_cell, rounds_note  # noqa: E402

MODELS = {  # model_path -> (calc preset, family)
    "deepseek-ai/DeepSeek-R1": ("deepseek-v3", "deepseek"), "deepseek-ai/DeepSeek-V3": ("deepseek-v3", "deepseek"),
    "nvidia/DeepSeek-R1-NVFP4": ("deepseek-v3", "deepseek"), "nvidia/DeepSeek-V3.1-NVFP4": ("deepseek-v3", "deepseek"),
    "openai/gpt-oss-120b": ("gpt-oss-120b", "gpt-oss"),
    "meta-llama/Llama-3.1-70B": ("llama-3.1-70b", "llama"),
    "meta-llama/Llama-3.1-8B-Instruct": ("llama-3.1-8b", "llama"),
    "nvidia/Llama-3.1-8B-Instruct-FP8": ("llama-3.1-8b", "llama"),
    "Qwen/Qwen3-235B-A22B-FP8": ("qwen3-235b-a22b", "qwen"),
    "Qwen/Qwen3-32B": ("qwen3-32b", "qwen"), "nvidia/Qwen3-32B-NVFP4": ("qwen3-32b", "qwen"),
    "moonshotai/Kimi-K2.5": ("kimi-k2", "kimi"),
}
SYSTEMS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300", "gb200": "gb200"}
DENSE = ("llama-3.1-70b", "llama-3.1-8b", "qwen3-32b")
#: How the runs were driven (bench_run.sh.j2: ``--num-requests`` concurrency x BENCH_MULTI_ROUND, default 20,
#: after ``--warmup-request-count`` 2 x concurrency); calc.serving_fit reads the rounds from this phrase.
ROUNDS = (f"aiperf at a fixed concurrency: {rounds_note(20)} after 2 x C warm-up requests "
          "(the generated benchmark's default)")


def weight_dtype(r, model: str) -> str:
    """calc dtype of the weights from the row's precision and GEMM / MoE quantisation modes."""
    q = r.moe_quant_mode if isinstance(r.moe_quant_mode, str) else r.gemm_quant_mode
    if not isinstance(q, str):
        return "bf16"  # no precision given: the checkpoint named is the BF16 release
    if q == "nvfp4":
        return "mxfp4" if model == "gpt-oss-120b" else "nvfp4"  # gpt-oss ships MXFP4 expert weights
    if q == "int4_wo":
        return "int4-g32"  # Kimi-K2.5's compressed-tensors int4, group size 32
    return {"fp8": "fp8", "fp8_block": "fp8-block"}[q]


#: Checkpoints quantized by their publisher, run as published: their quantization config names no KV-cache
#: scheme (DeepSeek's block FP8, Qwen's block FP8, OpenAI's MXFP4, Moonshot's compressed-tensors INT4).
PUBLISHER_QUANTIZED = {"deepseek-ai/DeepSeek-R1": "fp8", "deepseek-ai/DeepSeek-V3": "fp8",
                       "Qwen/Qwen3-235B-A22B-FP8": "fp8", "openai/gpt-oss-120b": "any",
                       "moonshotai/Kimi-K2.5": "int4"}
HOPPER = ("h100_sxm", "h200_sxm")


def kv_dtype(model_path: str, backend: str, system: str, wd: str, model: str) -> tuple[str, str]:
    """(calc KV dtype, reason) of an aiconfigurator run, whose row states no KV-cache dtype: the engines'
    default read with the checkpoint the run must have loaded.

    The three engines default to "auto", which takes an FP8 cache only where the checkpoint's quantization
    config names one (ModelOpt's ``kv_cache_quant_algo`` "FP8") and the model's dtype (bf16) otherwise:
    vLLM ``--kv-cache-dtype auto`` (vllm/utils/torch_utils.py, resolve_kv_cache_dtype_string: a ModelOpt
    config's kv_cache_quant_algo, else "auto" = the model dtype), SGLang ``--kv-cache-dtype auto``
    (python/sglang/srt/model_executor/model_runner.py, configure_kv_cache_dtype: FP8 when the model's
    quant_config has kv_cache_quant_algo FP8, else the model dtype), TensorRT-LLM ``KvCacheConfig.dtype``
    "auto" (tensorrt_llm/llmapi/llm_args.py: the checkpoint's kv_cache_quant_algo, else the model dtype).
    Which checkpoint: the one the row names when it is already in the row's weight format (bf16 releases,
    DeepSeek's and Qwen's block FP8, OpenAI's MXFP4, Moonshot's INT4: no KV scheme, so bf16; NVIDIA's
    ModelOpt releases nvidia/*-FP8 / *-NVFP4: FP8); NVFP4 weights of another release, which no engine makes
    at load time, and FP8 weights on TensorRT-LLM, whose PyTorch backend loads pre-quantized checkpoints,
    come from a ModelOpt export, whose KV format defaults to FP8 (TensorRT Model Optimizer
    examples/llm_ptq/hf_ptq.py ``--kv_cache_qformat fp8``); FP8 weights of a bf16 release on vLLM and SGLang
    are their online quantization (``--quantization fp8``), which leaves "auto" at bf16. TensorRT-LLM keeps
    an MLA model's (DeepSeek-V3's) cache in bf16 off Hopper: its FP8 MLA kernels are Hopper's only
    (aiconfigurator collector/trtllm/collect_mla_module.py, "MLA: Hopper only").
    """
    if wd == "bf16":
        return "bf16", "a bf16 checkpoint: the engine's auto KV dtype is the model's bf16"
    if backend == "trtllm" and model == "deepseek-v3" and system not in HOPPER:
        return "bf16", "TensorRT-LLM's FP8 MLA cache runs on Hopper only"
    own = PUBLISHER_QUANTIZED.get(model_path)
    if own and (own == "any" or wd.startswith(own)):
        return "bf16", f"{model_path} as published names no KV-cache quantization: the engine's auto KV dtype is bf16"
    if model_path.startswith("nvidia/"):
        return "fp8", f"{model_path} is a ModelOpt checkpoint with an FP8 KV cache (kv_cache_quant_algo FP8)"
    if wd in ("nvfp4", "mxfp4") or backend == "trtllm":
        return "fp8", "weights from a ModelOpt export (its KV format defaults to FP8)"
    return "bf16", "the engine's online FP8 quantization of the bf16 release: its auto KV dtype stays bf16"


#: The dump's later parts, as a row's silicon_data_source names them.
LATER_DUMPS = re.compile(r"source_file=2026-04-06\.csv|db-dump/")


def later_dump(source: str) -> bool:
    """Whether a row's ``silicon_data_source`` names one of the dump's later parts (``LATER_DUMPS``)."""
    return bool(LATER_DUMPS.search(str(source)))


def relisted_layout(tp: int, dp: int, moe_tp: int, moe_ep: int, later: bool = True) -> tuple[int, int, int, int, str]:
    """(tp, attention dp, MoE tp, MoE ep, note) of a run as it ran, from the layout its row lists.

    The dump's later rows (source_file 2026-04-06.csv and the db-dump of 2026-04-27) list runs of the earlier ones
    (2026-03-25.csv) again, with the same TTFT and TPOT to the last digit and the same measurement date, under a
    layout k times as wide: MoE TP k x EP k, and the attention's TP or DP multiplied by k. TP8 with MoE EP8 on 8
    GPUs (``..._tp8_0_ep8_0_271``) is listed as TP64 with MoE TP8 x EP8 (``..._cfg201``), attention DP8 as DP64,
    TP4 as TP16, DP2 as DP4 with MoE TP2 x EP2; the row's own id still says "tp8_ep8". Such a row (MoE TP k =
    EP k > 1 over k x k ranks) is read as the run it repeats: the attention's TP or DP divided by k, MoE TP1 x
    EPk, and the note says so. Only rows of the later parts (``later``, ``later_dump``) are read so: the earlier
    rows that list MoE TP2 x EP2 under TP4 are what they say (Qwen3-235B-A22B FP8 on 4 H100s, which 2 could not
    hold). Example: relisted_layout(64, 1, 8, 8) is (8, 1, 1, 8, note); relisted_layout(8, 1, 1, 8) is
    (8, 1, 1, 8, ""); relisted_layout(4, 1, 2, 2, later=False) is (4, 1, 2, 2, "").
    """
    k = moe_tp
    if not later or k <= 1 or moe_ep != k or tp * dp != k * k:
        return tp, dp, moe_tp, moe_ep, ""
    new_tp, new_dp = (tp // k, dp) if tp >= k and tp % k == 0 else (tp, dp // k)
    note = (f"; listed as TP{tp} attention DP{dp} MoE TP{k} x EP{k} over {k * k} ranks, the layout of a run on {k} "
            f"GPUs widened by its MoE TP (the dump's later rows repeat runs of its earlier ones so, with the same "
            f"numbers): taken as TP{new_tp} attention DP{new_dp} MoE TP1 EP{k}")
    return new_tp, new_dp, 1, k, note


def moe_wider_layout(tp: int, dp: int, moe_tp: int, moe_ep: int) -> tuple[int, str]:
    """(attention dp, note) of a MoE run whose experts span more GPUs than its attention lists.

    A row that lists TP t with no attention DP but MoE TP x EP over w = moe_tp x moe_ep > t ranks ran on w GPUs: the
    experts cannot be sharded over more GPUs than the run has. The attention is then data parallel over the
    w / t groups of t GPUs, as vLLM runs ``--tensor-parallel-size t --data-parallel-size w / t`` without
    ``--enable-expert-parallel``: its MoE layers shard the experts by TP over all DP x TP ranks
    (vllm/model_executor/layers/fused_moe/config.py, FusedMoEParallelConfig.make: the MoE TP size is
    dp_size x tp_size when expert parallelism is off). Read as one GPU, such a run of Qwen3-235B-A22B FP8
    (235 GB of weights) on an H200 could not load. Example: moe_wider_layout(1, 1, 2, 1) is (2, note);
    moe_wider_layout(2, 1, 4, 1) is (2, note); a layout that is what it says keeps its DP and an empty note:
    moe_wider_layout(4, 1, 4, 1) is (1, "").
    """
    world = moe_tp * moe_ep
    if dp != 1 or world <= tp or world % tp:
        return dp, ""
    new_dp = world // tp
    return new_dp, (f"; MoE TP{moe_tp} x EP{moe_ep} over {world} GPUs, more than the attention's TP{tp}: a run on "
                    f"{world} GPUs with the attention data parallel (vLLM's DP{new_dp} x TP{tp} without expert "
                    f"parallelism shards the experts by TP over all {world} ranks), taken as TP{tp} attention "
                    f"DP{new_dp}")


def convert(df: pd.DataFrame, every: int = 2) -> pd.DataFrame:
    a = df[(df["mode"] == "agg") & df["model_path"].isin(MODELS) & df["system"].isin(SYSTEMS)].copy()
    a["conc"] = pd.to_numeric(a["silicon_data_source"].str.extract(r"silicon_concurrency=(\d+)")[0])
    a = a[a["conc"].notna() & (a["silicon_ttft_ms"] > 0) & (a["silicon_tpot_ms"] > 0)]
    out = []
    for r in a.itertuples(index=False):
        model, family = MODELS[r.model_path]
        tp, pp = int(r.tp_size), int(r.pp_size)
        dp = int(r.attention_dp_size) if r.attention_dp_size == r.attention_dp_size and r.attention_dp_size > 0 else 1
        moe_tp = int(r.moe_tp_size) if r.moe_tp_size == r.moe_tp_size and r.moe_tp_size > 0 else 1
        moe_ep = int(r.moe_ep_size) if r.moe_ep_size == r.moe_ep_size and r.moe_ep_size > 0 else 1
        tp, dp, moe_tp, moe_ep, extra = relisted_layout(tp, dp, moe_tp, moe_ep, later_dump(r.silicon_data_source))
        relisted = bool(extra)
        if model not in DENSE:
            dp, wider = moe_wider_layout(tp, dp, moe_tp, moe_ep)
            extra += wider
        width = tp * dp
        if model in DENSE:
            if dp > 1:
                continue  # attention DP of a dense model: not a layout calc describes
            ep = 1
        elif dp > 1:
            ep = width  # DP attention: the MoE spans the stage's ranks
            if moe_ep != width:
                extra += f"; MoE TP{moe_tp} x EP{moe_ep} over the {width} ranks, taken as EP{width}"
        else:
            ep = moe_ep
        src = r.silicon_data_source
        image = re.search(r"(?:image=)?([\w./-]+:[\w.+-]+)$", src.split(";")[-1].strip())
        measured = re.search(r"measured=([\d-]+)", src)
        wd = weight_dtype(r, model)
        kv, why = kv_dtype(r.model_path, r.backend, r.system, wd, model)
        prec = r.precision if isinstance(r.precision, str) else "not stated"
        notes = (f"aiconfigurator {r.id}: {r.model_path}, precision {prec}, GEMM {r.gemm_quant_mode if isinstance(r.gemm_quant_mode, str) else '-'}"
                 f", MoE {r.moe_quant_mode if isinstance(r.moe_quant_mode, str) else '-'}; TP{tp} PP{pp} attention DP{dp}"
                 f" MoE TP{moe_tp} EP{moe_ep}, batch per rank {int(r.batch_size)}{extra}; "
                 f"{'measured ' + measured.group(1) + '; ' if measured else ''}{image.group(1) + '; ' if image else ''}"
                 f"KV dtype not stated, taken as {kv}: {why}; {ROUNDS}")
        base = dict(source_id=f"aiconfigurator-silicon-{r.backend}", model=model, model_family=family,
                    accelerator=SYSTEMS[r.system], n_gpus=width * pp, tp=tp, pp=pp, ep=ep, dp=dp, engine=r.backend,
                    engine_version=r.backend_version, weight_dtype=wd, kv_dtype=kv, input_len=int(r.isl),
                    output_len=int(r.osl), len_dist="fixed", concurrency=int(r.conc), request_rate_per_s="",
                    mode="concurrency", statistic="mean", notes=notes,
                    _key=(r.model_path, r.system, r.backend, r.backend_version, r.isl, r.osl, r.gemm_quant_mode,
                          r.moe_quant_mode, tp, pp, dp, moe_tp, moe_ep))
        base["_deployment"] = str(base["_key"][1:])   # the same deployment whatever name its model is listed under
        base["_relisted"] = relisted
        stem = re.sub(r"[^a-z0-9.]+", "-", f"aic-{r.id}".lower()).strip("-")
        out.append(dict(base, id=f"{stem}-ttft", metric="ttft_ms", value=round(float(r.silicon_ttft_ms), 4)))
        out.append(dict(base, id=f"{stem}-tpot", metric="tpot_ms", value=round(float(r.silicon_tpot_ms), 4)))
    rows = pd.DataFrame(out)
    rows = rows.drop_duplicates(subset=["id"])
    # the same run listed under two names (DeepSeek-R1 and -V3 rows of one deployment share their numbers), or
    # listed again by the dump's later parts under a widened layout (``relisted_layout``): the row that states
    # its layout as it ran is kept
    rows = rows.sort_values("_relisted", kind="stable")
    rows = rows[~rows.duplicated(subset=["_deployment", "concurrency", "metric", "value"])]
    # a run with a number faster than calc's lower bound for its recorded configuration is not what the row
    # says it is (every row of the data set must respect the bound): both of its rows are left out
    fast, refused = set(), set()
    for _, r in rows.assign(_run=rows["id"].str[:-5]).iterrows():
        try:
            if not measurement_bound(r).respected:
                fast.add(r["_run"])
        except ValueError:  # a layout calc refuses (DeepSeek-V3's 128 heads over TP 36, ...)
            refused.add(r["_run"])
    run = rows["id"].str[:-5]
    print(f"left out {int(run.isin(fast).sum())} rows of {len(fast)} runs faster than the bound and "
          f"{int(run.isin(refused).sum())} rows of {len(refused)} runs whose layout calc refuses", file=sys.stderr)
    rows = rows[~run.isin(fast | refused)]
    if every > 1:
        keep = []
        for _, g in rows.groupby(rows["_key"].astype(str), sort=False):
            concs = sorted(g["concurrency"].unique())
            chosen = set(concs[::every]) | {concs[0], concs[-1]}
            keep.append(g[g["concurrency"].isin(chosen)])
        rows = pd.concat(keep)
    rows = rows.sort_values(["source_id", "model", "accelerator", "id"])
    # the model cell: the checkpoint where it is another model than the preset (DeepSeek-R1, Kimi-K2.5), which loading
    # keeps as the model as published; the preset's id for its own checkpoints
    rows["model"] = [model_cell(m, re.match(r"aiconfigurator [^:]+: (\S+),", n).group(1))
                     for m, n in zip(rows["model"], rows["notes"])]
    return rows[list(COLUMNS)]


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    every = 1 if "--all" in args else 2
    args = [a for a in args if a != "--all"]
    convert(pd.read_csv(args[0]), every).to_csv(sys.stdout, index=False)


if __name__ == "__main__":
    main()
