"""The shared sidebar: model, GPU, weight and KV dtypes, hourly price, memory convention.

It is rendered once per run by app.py before the page; its widgets are keyed and bound to the URL, so
the choices persist from page to page and a copied link reproduces them. Pages read them with
``selection()``.
"""
from __future__ import annotations

from dataclasses import dataclass

import re
import streamlit as st

import calc
from calc.checkpoint_format import checkpoint_name_format, checkpoint_weight_format
from calc.limits import parse_config_json
from ui import classroom, url_state
from ui.custom_models import CFG_PARAM, CUSTOM_PREFIX, _custom_models, add_custom_model, get_any_model, model_from_param, model_to_param
from ui.custom_models import dataclasses_replace_name
from ui.formats import md_escape, plain_name
from ui.nav import PAGES
from ui.notes import capacity_label


DTYPES = ("bf16", "fp16", "fp8", "int8", "int4", "fp32")


#: Weights also come in the block formats of calc.quant; a cache in llama.cpp's q8_0/q4_0 blocks.
WEIGHT_DTYPES = DTYPES + tuple(calc.dtypes.format_names())


KV_DTYPES = DTYPES + ("q8_0", "q4_0", "fp8_ds_mla")


#: The two ways of counting the input embedding in a step (calc's ``embedding`` keyword).
EMBEDDING = {"gather": "B rows gathered (engines)", "table": "whole table (course napkin)"}


#: Matmul-precision conventions (calc.hardware.with_matmul), by the name the sidebar shows.
MATMUL = {"auto": "auto", "weight-only": "weight_only", "low-precision": "low_precision"}


#: Which prompt tokens prefill's LM head multiplies (calc's ``logits`` keyword).
LOGITS = {"all": "every prompt token (course)", "last": "last prompt token (engines)"}


#: The memory conventions of calc.memory.capacity_bytes, as the sidebar offers them.
MEMORY = {"datasheet": "data sheet", "driver": "driver (nvidia-smi)", "engine": "engine (vLLM share)"}


DEFAULT_MODEL = "llama-3-8b"


DEFAULT_GPU = "h100-sxm"


#: Hourly price used for owned hardware that has no list price (users type their own).
OWNED_HARDWARE_PRICE_USD = 1.0


@dataclass(frozen=True)
class Selection:
    """The shared sidebar choices: a model, an accelerator, the dtypes and the hourly price (USD)."""

    model_id: str
    model: calc.ModelConfig
    gpu_id: str
    accelerator: calc.Accelerator
    weight_dtype: str
    kv_dtype: str
    price_per_hour_usd: float
    embedding: str = "gather"
    memory: str = "datasheet"
    gpu_memory_utilization: float = calc.memory.DEFAULT_GPU_MEMORY_UTILIZATION
    runtime_reserve_bytes: float = 0.0
    logits: str = "all"

    @property
    def logits_label(self) -> str:
        """Which convention prefill and TTFT figures follow for the LM head, in words."""
        if self.logits == "last":
            return "LM head on each prompt's last token only, as vLLM and SGLang run it"
        return "LM head on every prompt token (the course's 2NT)"

    @property
    def logits_short(self) -> str:
        """The LM-head convention in a few words, for headings."""
        return "LM head on the last prompt token" if self.logits == "last" else "LM head on every prompt token"

    @property
    def capacity_label(self) -> str:
        """Which memory convention ``accelerator.memory_bytes`` follows, with its figure, for verdicts."""
        return capacity_label(self.accelerator, self.memory, self.gpu_memory_utilization, self.runtime_reserve_bytes)


#: The numbers of an id: a size with its unit, millions or billions ("135m", "1.7b", "0.5b"), or a plain number.
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)([mb])(?![a-z])|(\d+)")


def natural_key(preset_id: str) -> tuple:
    """Sort key that reads the numbers in an id as numbers and sizes with their unit: "llama-2-7b" <
    "llama-2-13b" < "llama-2-70b", "qwen3-8b" < "qwen3-14b", "gpt-oss-20b" < "gpt-oss-120b", "smollm2-135m" <
    "smollm2-360m" < "smollm2-1.7b"."""
    out, text, at = [], preset_id.lower(), 0
    for m in _NUMBER.finditer(text):
        if m.start() > at:
            out.append((1, 0.0, text[at:m.start()]))
        size, unit, plain = m.groups()
        out.append((0, float(plain) if plain else float(size) * (1e-3 if unit == "m" else 1.0), ""))
        at = m.end()
    if at < len(text):
        out.append((1, 0.0, text[at:]))
    return tuple(out)


@st.cache_data(show_spinner=False)
def _presets() -> tuple[list[str], dict[str, str], list[str], dict[str, str]]:
    """The preset model and GPU ids in the order the selectboxes list them (by family, then size: ``natural_key``)
    and their full names."""
    models = sorted(calc.list_models(), key=natural_key)
    gpus = sorted(calc.list_accelerators(), key=natural_key)
    return (models, {m: calc.get_model(m).name for m in models},
            gpus, {g: calc.get_accelerator(g).name for g in gpus})


def list_price_usd(gpu_id: str) -> float:
    """The preset's hourly list price, or ``OWNED_HARDWARE_PRICE_USD`` when it has none."""
    price = calc.get_accelerator(gpu_id).price_per_hour_usd
    return OWNED_HARDWARE_PRICE_USD if price is None else float(price)


def _on_gpu_change() -> None:
    # The price follows the GPU's list price unless the user typed a price of their own.
    previous = st.session_state.get("_price_gpu")
    typed = previous is not None and st.session_state.get("price") != list_price_usd(previous)
    if not typed:
        st.session_state["price"] = list_price_usd(st.session_state["gpu"])
    st.session_state["_price_gpu"] = st.session_state["gpu"]


def _mark_source(source: str) -> None:
    st.session_state["_cfg_last"] = source


def _config_source() -> tuple[str | None, str, str]:
    """Which of the two inputs the user chose last: ("upload" | "text" | None, its text, its default name).

    An input counts as chosen when it changed since the last "Use this config" (so a paste after an
    upload wins, and an upload after a paste); when both or neither changed, the one edited last."""
    upload = st.session_state.get("cfg_upload")
    text = st.session_state.get("cfg_text", "") or ""
    upload_id = getattr(upload, "file_id", None) if upload is not None else None
    text_new = bool(text.strip()) and text != st.session_state.get("_cfg_text_seen")
    upload_new = upload is not None and upload_id != st.session_state.get("_cfg_upload_seen")
    if text_new != upload_new:
        source = "text" if text_new else "upload"
    else:
        source = st.session_state.get("_cfg_last") or ("text" if text.strip() else "upload")
    if source == "upload" and upload is None:
        source = "text" if text.strip() else None
    if source == "text" and not text.strip():
        source = "upload" if upload is not None else None
    st.session_state["_cfg_text_seen"], st.session_state["_cfg_upload_seen"] = text, upload_id
    st.session_state["_cfg_last"] = source
    if source == "upload":
        stem = upload.name.rsplit(".", 1)[0]
        # A file called config.json names nothing: the model is named from its own _name_or_path/architecture.
        return source, upload.getvalue().decode("utf-8", errors="replace"), "" if stem.lower() == "config" else stem
    return source, text, ""


def default_weight_format(model: calc.ModelConfig) -> str:
    """The weight format pages open ``model`` in: the format its published checkpoint is stored in (a preset's
    ``checkpoint_format``, or a loaded config.json's quantization_config: mxfp4 for gpt-oss, fp8-block for
    DeepSeek-V3 and Kimi-K2), else bf16. The user may pick any other in the sidebar."""
    return model.checkpoint_format or "bf16"


#: Session-state key of the weight format a link's checkpoint name set: (preset id, format, the name as linked).
NAMED_WEIGHTS = "_wq_from_name"


def _previous_default() -> str | None:
    """The default weight format of the model the sidebar showed last (None when it cannot be told): the format a
    link's checkpoint name set for it (``weights_from_checkpoint_name``), else its own (``default_weight_format``)."""
    previous = st.session_state.get("_wq_model")
    named = st.session_state.get(NAMED_WEIGHTS)
    if previous is None:
        return "bf16"
    if named and named[0] == previous:
        return named[1]
    try:
        return default_weight_format(get_any_model(previous))
    except ValueError:
        return None


#: How the captions name a checkpoint format (calc's name follows in parentheses).
CHECKPOINT_LABELS = {"mxfp4": "MXFP4 on the routed experts, the rest bf16", "fp8-block": "FP8 e4m3 in 128 x 128 blocks",
                     "nvfp4": "NVFP4", "fp8": "FP8", "int4-g128": "4-bit integers in groups of 128",
                     "int8-g128": "8-bit integers in groups of 128", "int8": "8-bit integers, one scale per channel",
                     "int4-g32-sym": "4-bit integers in groups of 32, symmetric (no zero point)"}


def checkpoint_caption(stored: str, loaded: bool, weight_dtype: str, name: str | None = None) -> str:
    """The sidebar's line under the weight format: which format the checkpoint is stored in, where that comes
    from (a preset's published checkpoint, the quantization_config of a config.json the user loaded, or the
    checkpoint ``name`` a link gave, markdown-escaped here), and whether the pages use it or another format the
    user chose."""
    where = ("from its config.json's quantization_config" if loaded else "from the model's published checkpoint"
             if name is None else f"read from the checkpoint's name {md_escape(name[:80])}")
    label = CHECKPOINT_LABELS.get(stored)  # a format without a label is named once: "bf16 (from ...)"
    said = f"Checkpoint format: {label} ({stored}; {where})" if label else f"Checkpoint format: {stored} ({where})"
    return said + ("." if weight_dtype == stored else f"; the pages use {weight_dtype}, as chosen above.")


def _on_model_change() -> None:
    # The weight format follows the model while it is the previous model's own default (bf16, its checkpoint's
    # format, or the one a link's checkpoint name set); a format the user picked stays. A model picked in the box
    # is the preset itself, not the link's checkpoint.
    previous = _previous_default()
    st.session_state.pop(NAMED_WEIGHTS, None)
    if st.session_state.get("wq") not in (None, previous):
        return
    try:
        st.session_state["wq"] = default_weight_format(get_any_model(st.session_state["model"]))
    except ValueError:
        st.session_state["wq"] = "bf16"


def _load_config() -> None:
    source, text, file_name = _config_source()
    name = st.session_state.get("cfg_name", "").strip() or file_name
    if source is None:
        st.session_state["_cfg_error"] = "Paste the text of a config.json or upload the file first."
        st.session_state["_cfg_info"] = None
        return
    where = "the uploaded file" if source == "upload" else "the pasted text"
    try:
        model_id = add_custom_model(text, name or None)
    except ValueError as exc:  # keep the previous model; say what is wrong
        st.session_state["_cfg_error"] = f"Could not read {where} as a config.json: {exc}"
        st.session_state["_cfg_info"] = None
        return
    model = get_any_model(model_id)
    st.session_state["model"] = model_id
    st.session_state["_cfg_error"] = None
    info = (f"Loaded {model.name} from {where}: {model.n_params / 1e9:,.2f} B parameters"
            + (f", {model.max_context_len:,} tokens of context" if model.max_context_len else "") + ".")
    previous = _previous_default()
    st.session_state.pop(NAMED_WEIGHTS, None)  # the loaded config.json, not a link's checkpoint name, says it now
    if model.checkpoint_format:  # the checkpoint's own format is the default weight format
        st.session_state["wq"] = model.checkpoint_format
        info += f" Weights set to {model.checkpoint_format}, the format its quantization_config declares."
    else:
        said = _declared_quantization(text)
        if previous not in (None, "bf16") and st.session_state.get("wq") == previous:
            # the format came from the previous model's checkpoint, not from the user: this one declares none
            st.session_state["wq"] = "bf16"
            info += (" Weights back to bf16: this config declares no quantization." if not said else
                     f" Weights back to bf16: its quantization_config ({said}) is a scheme the explorer does "
                     "not model.")
        elif said:
            info += (f" Its quantization_config ({said}) is a scheme the explorer does not model, so the weights "
                     f"stay at {st.session_state.get('wq', 'bf16')}: choose the nearest format under Weights.")
    st.session_state["_cfg_info"] = info


def _declared_quantization(text: str) -> str:
    """What a config.json's quantization_config declares, in words ("" when it has none or the text does not
    parse: ``calc.checkpoint_format.checkpoint_weight_format``'s ``said`` of ``calc.limits.parse_config_json``)."""
    try:
        return checkpoint_weight_format(parse_config_json(text))[1]
    except ValueError:
        return ""


def weights_from_checkpoint_name(linked: str, preset: str) -> str:
    """Open the pages in the weight format the checkpoint name ``linked`` says (``calc.checkpoint_format.
    checkpoint_name_format``: zai-org/GLM-4.6-FP8 -> fp8), a link's model read as the preset ``preset``, unless the
    link sets the weights itself (its ``wq``). Called before the weight box is drawn, in a run whose URL names the
    model by such a name: the link's opening run, or the browser's Back to it, which then shows what the link opened
    on; in a later run on that URL the weights chosen since hold. The format goes into the link with the model's
    preset id (``url_state.seed_unnamed``: one history entry for both), so that the link reopens on it.

    Returns:
        The sentence the sidebar's note adds (markdown-escaped; "" when the name says no precision): the format set
        and where it came from, that the link's own weights were kept, or why the name sets none.
    """
    fmt, said = checkpoint_name_format(linked)
    if not said:
        return ""
    if fmt is None:
        return (f" Its name says {md_escape(said)}: no weight format of the explorer's by itself, so the weights "
                "stay as they are; choose the nearest under Weights.")
    if "wq" in st.query_params:  # the link's own weights win
        return f" Its name says {md_escape(fmt)}; the weights stay as the link sets them."
    now = st.session_state.get("wq")
    if now is not None and not url_state.history_navigation():  # a later run on this URL: a choice made since holds
        return f" Its name says {md_escape(fmt)}" + ("." if now == fmt else
                                                     f"; the pages use {md_escape(now)}, as chosen under Weights.")
    if fmt != default_weight_format(calc.get_model(preset)):
        url_state.seed_unnamed("wq", fmt)
    st.session_state[NAMED_WEIGHTS] = (preset, fmt, linked)
    how = "" if said.lower() == fmt else f": {md_escape(said)}"  # what the reading took for granted, if anything
    return f" Weights set to {md_escape(fmt)}, read from the checkpoint's name {md_escape(linked[:80])}{how}."


def _model_options() -> tuple[list[str], dict, dict, list[str]]:
    """The model ids the selectbox offers (presets, then config.json-loaded models, one carried by the link
    included), the loaded models by id, the presets' full names, and the GPU ids; a link's model loaded in another
    browser session is said in the sidebar (with what to do; an unknown preset or GPU is named by the page's link
    notice), and a stale choice is dropped so that the default shows."""
    models, model_names, gpus, _ = _presets()
    custom = _custom_models()
    linked = st.query_params.get("model", "")
    if linked.startswith(CUSTOM_PREFIX) and linked not in custom and st.query_params.get(CFG_PARAM):
        try:  # the link carries the config.json-loaded model itself
            custom[linked] = dataclasses_replace_name(model_from_param(st.query_params[CFG_PARAM]),
                                                      plain_name(linked[len(CUSTOM_PREFIX):]))
        except ValueError as exc:
            st.sidebar.warning(f"The link's own model could not be read: {md_escape(str(exc))}")
    options = models + list(custom)
    preset = None if not linked or linked in options or linked.startswith(CUSTOM_PREFIX) else \
        calc.models.model_preset_id(linked)
    if preset in models:  # a served checkpoint's id or an alias (zai-org/GLM-4.6-FP8): its preset, said once
        weights = weights_from_checkpoint_name(linked, preset)  # before the model's rewrite, which carries it
        url_state.accept_url_values("model", [preset], same=lambda v: calc.models.model_preset_id(str(v)))
        st.sidebar.info(f"The link's model {md_escape(repr(linked[:80]))} is read as the preset {preset} "
                        "(the same architecture, by the explorer's list of checkpoint aliases and their sources)." + weights)
    if linked.startswith(CUSTOM_PREFIX) and linked not in options:
        st.sidebar.warning(f"This link names the model {md_escape(repr(linked[len(CUSTOM_PREFIX):][:80]))}, which was loaded from a "
                           "config.json in another browser session. Load that config.json under \"Your own "
                           "model\" to see it; until then the default model is shown.")
    # a stale choice (a model loaded in another session, a preset gone) is dropped, so that the default shows
    for key, valid in (("model", options), ("gpu", gpus)):
        if key in st.session_state and st.session_state[key] not in valid:
            del st.session_state[key]
    return options, custom, model_names, gpus


def _config_expander() -> None:
    """The expander "Your own model": a config.json uploaded or pasted, a name, the button that loads it, and
    what came of it."""
    with st.expander("Your own model (config.json)"):
        st.file_uploader("Upload config.json", type=["json"], key="cfg_upload", on_change=_mark_source,
                         args=("upload",))
        st.text_area("…or paste its text", key="cfg_text", height=100, on_change=_mark_source, args=("text",),
                     help="Whichever you changed last, the file or the text, is the one read.")
        st.text_input("Name (optional)", key="cfg_name",
                      help="Default: the config's own model name (_name_or_path), else its architecture. "
                           "Type a name and press the button again to rename.")
        st.button("Use this config", on_click=_load_config, key="cfg_load")
        if st.session_state.get("_cfg_error"):
            st.error(md_escape(st.session_state["_cfg_error"]))
        elif st.session_state.get("_cfg_info"):
            st.success(md_escape(st.session_state["_cfg_info"]))


def _model_and_gpu_inputs(options: list[str], custom: dict, model_names: dict, gpus: list[str]) -> tuple[str, str]:
    """The model and GPU selectboxes (with the model's full name and the config.json expander): their ids."""
    # each widget's default stays the preset's (a link without ?model= means the default model): a URL-bound widget
    # returns to its default where a page's URL does not name it (the browser's Back to a page opened without it),
    # which without one was the list's first entry; a value set before (a link's, the user's, a loaded config.json)
    # is the widget's own and wins over it
    model_default = {"index": options.index(DEFAULT_MODEL)}
    gpu_default = {"index": gpus.index(DEFAULT_GPU)}
    st.markdown("**Model and hardware**")
    model_id = st.selectbox(
        "Model", options, key="model", **model_default, on_change=_on_model_change,
        bind="query-params", help="Preset id (the URL carries it); the full name is shown below.")
    st.caption(md_escape(custom[model_id].name) + " (your config.json)" if model_id in custom
               else model_names.get(model_id, model_id))
    _config_expander()
    gpu_id = st.selectbox("GPU / accelerator", gpus, key="gpu", **gpu_default,
                          bind="query-params", on_change=_on_gpu_change)
    return model_id, gpu_id


def _dtype_inputs(model_id: str, loaded: bool) -> tuple[str, str, str]:
    """Weights, KV cache and matmul precision for the model ``model_id`` (``loaded``: from a config.json); the
    checkpoint's own format is offered and is the weights' default."""
    shown = get_any_model(model_id)
    stored = shown.checkpoint_format
    weight_options = WEIGHT_DTYPES + ((stored,) if stored and stored not in WEIGHT_DTYPES else ())
    if st.session_state.get("wq") not in (None, *weight_options):
        del st.session_state["wq"]
    # The model's own checkpoint format is the widget's default: a link without wq opens in it, and a link
    # that carries wq=bf16 for gpt-oss keeps bf16.
    # Weights and KV cache one above the other, each the sidebar's width: "int4-g32-sym" and "fp8_ds_mla" read whole
    weight_dtype = st.selectbox("Weights", weight_options, key="wq", bind="query-params",
                                index=weight_options.index(default_weight_format(shown)),
                                help="Storage format of the weights. Plain names (int4 = 0.5 byte) count no "
                                     "scales, as the course does; the block formats (q4_K_M, mxfp4, "
                                     "int4-g128, ...) count their scales and the tensors they keep in 16-bit.")
    kv_dtype = st.selectbox("KV cache", KV_DTYPES, key="kvq", bind="query-params",
                            help="Storage format of the cached keys and values. fp8: one scale per layer "
                                 "(vLLM, SGLang), no bytes per token; q8_0/q4_0: llama.cpp's blocks of 32 "
                                 "with a scale each; fp8_ds_mla: FlashMLA's MLA cache, the latent in fp8 with "
                                 "a scale per 128 and the RoPE part in bf16 (656 B per token and layer for "
                                 "DeepSeek). Weight-only formats (q4_K_M, int4-g128) hold no cache.")
    st.session_state["_wq_model"] = model_id
    named = st.session_state.get(NAMED_WEIGHTS)
    if named and named[0] == model_id:  # a link's checkpoint name set the weights: say so while its model shows
        st.caption(checkpoint_caption(named[1], False, weight_dtype, name=named[2]))
    elif stored:
        st.caption(checkpoint_caption(stored, loaded, weight_dtype))
    matmul = st.selectbox("Matmul precision", list(MATMUL), key="mm", bind="query-params",
                          help="How quantized weights are multiplied, which sets the compute peak P. auto: "
                               "fp8/int8 on their own tensor cores (W8A8), 4-bit formats dequantized to bf16 "
                               "(W4A16), as calc and the course count. weight-only: activations in bf16, the "
                               "bf16 peak for every format. low-precision: W8A8 / W4A4 kernels at the "
                               "format's own peak (nvfp4, mxfp4: Blackwell's fp4 tensor cores).")
    return weight_dtype, kv_dtype, matmul


def _convention_inputs() -> tuple[str, str, str, float, float]:
    """Input embedding, prefill LM head, memory capacity and, for an engine's share, its utilization and
    reserve (GB): the radios' values as chosen (None before a first choice)."""
    # Plain option names (no format_func): a bound widget writes its shown label into the URL.
    embedding = st.radio("Input embedding per step", list(EMBEDDING), key="emb", bind="query-params",
                         horizontal=True,
                         help="gather: a step reads only the B rows it looks up, as engines do. table: the "
                              "course's napkin, every parameter read every step (Llama-3-8B at 8K on an H100: "
                              "5.1 ms instead of 4.8 ms). Tied embeddings are read once, as the head.")
    logits = st.radio("Prefill LM head on", list(LOGITS), key="lgt", bind="query-params", horizontal=True,
                      help="all: the head multiplies every prompt token, the course's 2NT. last: only each "
                           "prompt's last token, where the first output token is sampled, as vLLM and SGLang "
                           "run it (Llama-3-8B, T = 8,192, H100, embedding gathered: 143 ms with all, 134 ms "
                           "with last). Changes prefill and TTFT only.")
    memory = st.radio("Memory capacity", list(MEMORY), key="mem", bind="query-params", horizontal=True,
                      help="datasheet: the marketed capacity (80 GB for an H100), the course's convention. "
                           "driver: what nvidia-smi reports (an H100 80GB: 81,559 MiB = 85.5 GB). engine: a "
                           "serving engine's share of that, vLLM's gpu_memory_utilization (default 0.9).")
    util, runtime_gb = calc.memory.DEFAULT_GPU_MEMORY_UTILIZATION, 0.0
    if memory == "engine":
        e1, e2 = st.columns(2)
        util = e1.number_input("Utilization", min_value=0.05, max_value=1.0, value=util, step=0.05,
                               key="gmu", bind="query-params", help="vLLM's gpu_memory_utilization: the fraction "
                               "of the driver's total the engine takes for weights, activations and cache "
                               "(default 0.9).")
        runtime_gb = e2.number_input("Reserve (GB)", min_value=0.0, max_value=200.0, value=0.0, step=0.5,
                                     key="rtr", bind="query-params", help="Activations at the largest "
                                     "prefill chunk and CUDA graphs, which the engine keeps inside its share "
                                     "(vLLM profiles them at start-up: a few GB for an 8B model).")
    return embedding, logits, memory, util, runtime_gb


def _gpu_notes(acc, memory: str | None) -> None:
    """The GPU's data-sheet line, its capacity note under the chosen convention, its list price."""
    st.caption(f"{acc.name}: {acc.memory_bytes / 1e9:,.0f} GB, {acc.bandwidth_bytes_per_s / 1e12:,.2f} TB/s, "
               f"{acc.peak_flops('bf16') / 1e12:,.0f} TFLOP/s bf16 dense.")
    if calc.memory.capacity_note(acc, memory or "datasheet"):  # no driver total on file: say so, never silently
        st.info(calc.memory.capacity_note(acc, memory or "datasheet"))
    if acc.price_per_hour_usd is not None:
        st.caption(f"List price ${acc.price_per_hour_usd:.2f}/h, {acc.price_source} ({acc.price_date}).",
                   help=acc.price_evidence or None)  # the listing quoted, with the copy read
    else:
        st.caption("Owned hardware: no rental price. Enter your own amortised cost per hour.")


def _classroom_foot() -> None:
    """The sidebar's foot: the presenter toggle, the lecture's start and its menu of steps."""
    st.divider()
    st.markdown("**Classroom**")
    classroom.presenter_toggle()
    st.page_link("app_pages/home.py", label="Start the lecture (story)", icon=":material/slideshow:",
                 query_params={"story": "1", **({"present": "1"} if classroom.presenting() else {})})
    classroom.story_menu({path: title for path, title, *_ in PAGES})


def _capped_accelerator(acc, memory: str, util: float, runtime_gb: float, matmul: str | None, weight_dtype: str):
    """The GPU with the chosen memory convention's capacity and matmul precision, and the reserve in GB kept
    (0 when it does not fit in the engine's share, which the sidebar then says)."""
    try:
        capped = calc.memory.with_capacity(acc, memory, float(util), float(runtime_gb or 0.0) * 1e9)
    except ValueError as exc:  # a reserve larger than the share: say so, keep the share without it
        st.sidebar.error(str(exc))
        capped, runtime_gb = calc.memory.with_capacity(acc, memory, float(util)), 0.0
    capped = calc.hardware.with_matmul(capped, MATMUL.get(matmul or "auto", "auto"))
    if capped.matmul_precision(weight_dtype)[1]:  # low precision asked, no engine: say what runs instead
        st.sidebar.info(capped.matmul_note(weight_dtype) + ".")
    return capped, runtime_gb


def render_sidebar(current_page: str | None = None) -> Selection:
    """Draw the shared sidebar and return the choices (called by app.py once per run).

    Also the classroom parts every page shares: a lecture step's state is applied before the widgets,
    the presenter toggle sits at the sidebar's foot, and the story banner opens the main area
    (``current_page``: the page file shown, so that a step's banner appears on its own page only).
    """
    classroom.apply_story_state()
    options, custom, model_names, gpus = _model_options()
    with st.sidebar:
        model_id, gpu_id = _model_and_gpu_inputs(options, custom, model_names, gpus)
        price_default = {"value": list_price_usd(gpu_id)}  # as the model's: the GPU's list price where a URL names none
        weight_dtype, kv_dtype, matmul = _dtype_inputs(model_id, model_id in custom)
        price = st.number_input("Price, USD per GPU-hour", min_value=0.0, max_value=1000.0, step=0.1,
                                format="%.2f", key="price", bind="query-params", **price_default,
                                help="Defaults to the preset's dated list price; type your own.")
        st.session_state.setdefault("_price_gpu", gpu_id)
        embedding, logits, memory, util, runtime_gb = _convention_inputs()
        acc = calc.get_accelerator(gpu_id)
        _gpu_notes(acc, memory)
        _classroom_foot()
    classroom.page_css()
    classroom.story_banner({path: title for path, title, *_ in PAGES}, current_page)
    # Every page checks what fits against the chosen convention's capacity (calc.memory.with_capacity).
    memory = memory or "datasheet"
    if model_id in custom:  # keep the loaded model in the link
        st.query_params[CFG_PARAM] = model_to_param(custom[model_id])
    elif CFG_PARAM in st.query_params:
        del st.query_params[CFG_PARAM]
    capped, runtime_gb = _capped_accelerator(acc, memory, util, runtime_gb, matmul, weight_dtype)
    model = get_any_model(model_id)
    try:  # a cache format this model cannot be stored in (fp8_ds_mla without MLA, a weight-only format): say so
        calc.layers.kv_bytes_per_token_per_layer(model, kv_dtype)
    except ValueError as exc:
        st.sidebar.error(f"KV cache {kv_dtype}: {exc}")
    sel = Selection(model_id, model, gpu_id, capped, weight_dtype, kv_dtype, float(price or 0.0),
                    embedding or "gather", memory, float(util), float(runtime_gb or 0.0) * 1e9, logits or "all")
    st.session_state["_selection"] = sel
    return sel


def selection() -> Selection:
    """The shared sidebar choices of this run (rendered by app.py before the page)."""
    sel = st.session_state.get("_selection")
    return sel if sel is not None else render_sidebar()
