"""What a live measurement run asks for (``RunSpec``) and the model presets; no torch here.

The page builds a ``RunSpec`` from its widgets and hands it to the worker process
(``live.worker``); everything in this module is plain Python so the Streamlit process can import it
without importing torch.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from calc.checks import check_positive_int
from calc.limits import parse_config_json

#: Preset ids of the live tab (their config.json files ship in calc/data/hf_configs/<id>.json).
PRESET_IDS: tuple[str, ...] = ("smollm2-135m", "smollm2-360m", "qwen2.5-0.5b", "tinyllama-1.1b", "llama-3.2-1b")
DEFAULT_PRESET = "smollm2-135m"
DEVICES = ("cpu", "cuda")
LIVE_DTYPES = ("fp32", "bf16", "fp16")
MODEL_SOURCES = ("preset", "config", "weights")
SWEEP_NAMES = {
    "prompt_len": "TTFT vs prompt length (batch 1)",
    "prefill_batch": "TTFT vs batch (fixed prompt)",
    "decode_batch": "TPOT vs batch (fixed context)",
    "decode_context": "TPOT vs context (batch 1)",
}


def preset_name(preset_id: str) -> str:
    """Display name of a preset (from calc's catalogue), e.g. "SmolLM2-135M".

    Raises:
        ValueError: unknown preset id (lists the valid ones).
    """
    if preset_id not in PRESET_IDS:
        raise ValueError(f"unknown live preset {preset_id!r}; valid: {', '.join(PRESET_IDS)}")
    from calc import get_model

    return get_model(preset_id).name


def preset_hf_config(preset_id: str) -> dict:
    """The shipped Hugging Face config.json of a preset, as a dict (calc/data/hf_configs/<id>.json).

    Raises:
        ValueError: unknown preset id.
    """
    preset_name(preset_id)
    from calc.models import hf_config

    return dict(hf_config(preset_id))


def preset_hub_id(preset_id: str) -> str | None:
    """The hub repository the preset's config was copied from ("HuggingFaceTB/SmolLM2-135M"), if known.

    Read from the first word of the calc catalogue entry's ``source``; used only to look for a
    tokenizer already on this machine (never downloaded).
    """
    from calc import get_model

    first = (get_model(preset_id).source or "").split(" ")[0]
    return first if first.count("/") == 1 else None


#: Environment variable naming the server's models folder: local weights load only from below it.
MODELS_ROOT_ENV = "LLM_EXPLORER_MODELS_ROOT"
#: Bytes per parameter of each live dtype (the weights the builder allocates).
LIVE_DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
#: Share of the free memory a model's weights may take (the rest: activations, KV cache, the probe).
WEIGHTS_MEMORY_SHARE = 0.6


def models_root() -> Path | None:
    """The server's models folder (``$LLM_EXPLORER_MODELS_ROOT``, resolved), or None: local weights are off.

    Set by whoever runs the server (an environment variable, or ``models_root`` in Streamlit's
    secrets, which the live page copies into the variable); never by a visitor.
    """
    text = os.environ.get(MODELS_ROOT_ENV, "").strip()
    if not text:
        return None
    try:
        root = Path(text).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return root if root.is_dir() else None


def _not_a_model_dir(name: str) -> ValueError:
    # One message for every refusal: a path outside the folder, a missing one, a file, a folder without
    # config.json. Whether anything exists outside the models folder is never told.
    shown = name if len(name) <= 80 else name[:79] + "…"
    return ValueError(f"{shown!r} is not a model folder under this server's models folder (a folder there that holds "
                      "config.json and the weights); pick one from the list")


def resolve_weights_path(name: str, root: Path | None = None) -> Path:
    """The model folder a visitor named, resolved inside the server's models folder.

    ``name`` is a folder name (or a relative path) below ``root``; an absolute path is accepted only
    when it resolves inside ``root``. Symbolic links are followed before the check, so a link that
    leads out of the folder is refused too.

    Raises:
        ValueError: local weights are off (no models folder set); or the one same message for a path
            outside the folder, a path that does not exist, is too long, is not a folder or has no
            config.json.
    """
    root = models_root() if root is None else root
    if root is None:
        raise ValueError(f"Local weights are off on this server: its operator has not set a models folder "
                         f"({MODELS_ROOT_ENV}). Use a preset or a config.json (random weights).")
    text = str(name or "").strip()
    if not text or len(text) > 1024 or "\x00" in text:
        raise _not_a_model_dir(text)
    try:
        real_root = Path(root).resolve()
        path = (real_root / Path(text).expanduser()).resolve()
        inside = path.is_relative_to(real_root) and path != real_root
        ok = inside and path.is_dir() and (path / "config.json").is_file()
    except (OSError, RuntimeError, ValueError):
        ok = False
    if not ok:
        raise _not_a_model_dir(text)
    return path


def list_model_dirs(root: Path | None = None, limit: int = 200) -> list[str]:
    """Names of the folders directly under the models folder that hold a config.json and resolve inside it
    (a link leading out is left out), sorted; [] when local weights are off."""
    root = models_root() if root is None else root
    if root is None:
        return []
    names = []
    try:
        for p in sorted(Path(root).iterdir()):
            try:
                resolve_weights_path(p.name, root)
            except ValueError:
                continue
            names.append(p.name)
            if len(names) >= limit:
                break
    except OSError:
        return []
    return names


def available_memory_bytes() -> float | None:
    """Memory available to a new allocation on this machine (MemAvailable of /proc/meminfo), or None."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_config_fits(config: dict, dtype: str, available_bytes: float | None, where: str = "this machine"):
    """calc's reading of a config and its weight bytes, refused when they cannot fit in memory.

    The live builder allocates every parameter; before it does, calc's reader checks each size
    against its plausible range (``calc.limits``) and counts the parameters, and the weights in
    ``dtype`` must fit in ``WEIGHTS_MEMORY_SHARE`` of ``available_bytes``.

    Returns:
        (calc's ``ModelConfig``, bytes of its weights in ``dtype``).

    Raises:
        ValueError: calc's message for a bad or implausible config; or "... needs 1.2 TB for its
            weights in fp32; this machine has 20.1 GB free" when it does not fit.
    """
    from calc import from_hf_config

    model = from_hf_config(config)
    need = model.n_params * LIVE_DTYPE_BYTES.get(dtype, 4)
    if available_bytes is not None and need > WEIGHTS_MEMORY_SHARE * available_bytes:
        raise ValueError(f"This model has {model.n_params:,} parameters: its weights need {need / 1e9:,.2f} GB in "
                         f"{dtype}, more than {WEIGHTS_MEMORY_SHARE:.0%} of the {available_bytes / 1e9:,.1f} GB free on "
                         f"{where}. Pick a smaller model or a 16-bit dtype.")
    return model, need


def short_error(err: BaseException, max_chars: int = 240) -> str:
    """An exception as one short line for a page: its type and the first line of its message, cut to
    ``max_chars`` (PyTorch appends C++ frames after the first line; tracebacks never reach a visitor)."""
    first = (str(err).strip().splitlines() or [""])[0]
    first = first.split(" Exception raised from ")[0]
    if len(first) > max_chars:
        first = first[: max_chars - 1] + "…"
    return f"{type(err).__name__}: {first}" if first else type(err).__name__


def _int_tuple(values, what: str) -> tuple[int, ...]:
    if isinstance(values, (int, str)):
        values = [values]
    out = tuple(check_positive_int(v, what) for v in values)
    if not out:
        raise ValueError(f"{what} needs at least one value")
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class RunSpec:
    """One live measurement request: which model, where, and which sweeps.

    Fields:
        source: "preset" (a shipped config, random weights), "config" (``config_json`` text, random
            weights; read by calc first, so its sizes are within ``calc.limits``) or "weights" (a model
            folder below the server's models folder).
        preset_id: one of ``PRESET_IDS`` (used when source is "preset").
        config_json: a config.json as text (source "config").
        weights_path: a model folder below the server's models folder (source "weights",
            ``resolve_weights_path``); loaded with local_files_only and never with remote code.
        device: "cpu" or "cuda"; dtype: "fp32", "bf16" or "fp16" (weights, activations and KV cache).
        prompt_lens: prompt lengths (tokens) of the TTFT sweep at batch 1.
        prefill_batches / prefill_prompt_len: batches of the TTFT sweep at a fixed prompt length.
        decode_batches / decode_context_len: batches of the TPOT sweep at a fixed context (tokens).
        decode_contexts: contexts (tokens) of the TPOT sweep at batch 1.
        decode_steps: timed decode steps per repetition (TPOT is their median).
        repeats: timed repetitions per point; warmup: untimed runs per new shape.
        new_tokens: tokens generated for the text sample.
        calibrate: also time the matmul kernels and the model with its matmuls taken out (the overhead).
        threads: CPU threads for torch (None: torch's default, the core count).
        seed: seed of the random weights and token ids.
        quick: a classroom run (``QUICK_SWEEPS``): a smaller probe buffer and fewer calibration points.
        probe_only: only probe the machine (bandwidth and matmul rate), no model and no sweep.

    Raises:
        ValueError: an unknown source/preset/device/dtype, a missing config or path, or a
            non-positive size, with a message naming the field.
    """

    source: str = "preset"
    preset_id: str = DEFAULT_PRESET
    config_json: str | None = None
    weights_path: str | None = None
    device: str = "cpu"
    dtype: str = "fp32"
    prompt_lens: tuple[int, ...] = (32, 64, 128, 256)
    prefill_batches: tuple[int, ...] = (1, 2, 4)
    prefill_prompt_len: int = 64
    decode_batches: tuple[int, ...] = (1, 4, 16, 32)
    decode_context_len: int = 128
    decode_contexts: tuple[int, ...] = (128, 2048)
    decode_steps: int = 4
    repeats: int = 3
    warmup: int = 1
    new_tokens: int = 16
    calibrate: bool = True
    threads: int | None = None
    seed: int = 0
    quick: bool = False
    probe_only: bool = False
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if self.source not in MODEL_SOURCES:
            raise ValueError(f"source must be one of {', '.join(MODEL_SOURCES)}; got {self.source!r}")
        if self.source == "preset":
            preset_name(self.preset_id)
        if self.source == "config" and not (self.config_json or "").strip():
            raise ValueError("source 'config' needs the config.json text (paste or upload it)")
        if self.source == "config":  # calc's reader first: its bounds and messages, before transformers sees it
            from calc import from_hf_config

            cfg = parse_config_json(self.config_json)
            if not cfg.get("model_type"):
                raise ValueError("config.json has no 'model_type', so transformers cannot tell which architecture "
                                 "to build")
            from_hf_config(cfg)
        if self.source == "weights" and not (self.weights_path or "").strip():
            raise ValueError("source 'weights' needs a model folder under this server's models folder")
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {', '.join(DEVICES)}; got {self.device!r}")
        if self.dtype not in LIVE_DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(LIVE_DTYPES)}; got {self.dtype!r}")
        for name in ("prompt_lens", "prefill_batches", "decode_batches", "decode_contexts"):
            object.__setattr__(self, name, _int_tuple(getattr(self, name), name))
        for name in ("prefill_prompt_len", "decode_context_len", "decode_steps", "repeats", "new_tokens"):
            object.__setattr__(self, name, check_positive_int(getattr(self, name), name))
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup must be a non-negative integer, got {self.warmup!r}")
        if self.threads is not None:
            object.__setattr__(self, "threads", check_positive_int(self.threads, "threads"))

    @property
    def model_key(self) -> tuple:
        """What identifies the loaded model: the worker keeps it warm while this stays the same."""
        what = {"preset": self.preset_id, "config": self.config_json, "weights": self.weights_path}[self.source]
        return (self.source, what, self.device, self.dtype, self.seed)

    @property
    def n_points(self) -> int:
        """Number of measured points over the four sweeps."""
        return (len(self.prompt_lens) + len(self.prefill_batches) + len(self.decode_batches)
                + len(self.decode_contexts))

    def describe(self) -> str:
        """What the run measures, in words, for other sessions' waiting message
        ("smollm2-135m (preset, random weights), fp32 on cpu, 13 points")."""
        if self.probe_only:
            return f"a probe of this machine ({self.dtype} on {self.device})"
        what = {"preset": f"{self.preset_id} (preset, random weights)", "config": "a pasted config (random weights)",
                "weights": "local weights"}[self.source]  # another session's path is never shown
        return f"{what}, {self.dtype} on {self.device}, {self.n_points} points" + (" (quick)" if self.quick else "")

    def to_json(self) -> str:
        """The spec as JSON text (for logs and the CSV header)."""
        d = asdict(self)
        d.pop("config_json", None)
        return json.dumps(d, sort_keys=True)


#: The quick classroom run: 8 points instead of 13 and a shorter text sample (RunSpec fields; with quick=True
#: the probe buffer is 256 MiB and the tiny-model calibration takes at most 3 extra points).
QUICK_SWEEPS = dict(prompt_lens=(32, 128), prefill_batches=(1, 4), decode_batches=(1, 8), decode_contexts=(128, 1024),
                    repeats=3, new_tokens=8, quick=True)


def size_problems(text: str, what: str, max_value: int = 1 << 20) -> tuple[tuple[int, ...], list[str]]:
    """Parse a comma-separated list of positive integers, collecting every bad entry instead of stopping.

    Returns:
        (sorted unique good values, problems): each problem names ``what`` and one bad entry, e.g.
        "prompt lengths: -5 is outside 1..131072", "prompt lengths: 'abc' is not a whole number";
        an empty list gives one problem.
    """
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        return (), [f"{what}: give at least one size, e.g. 1, 4, 16"]
    out, problems = [], []
    for p in parts:
        try:
            v = int(p)
        except ValueError:
            problems.append(f"{what}: {p!r} is not a whole number")
            continue
        if v <= 0 or v > max_value:
            problems.append(f"{what}: {v} is outside 1..{max_value}")
            continue
        out.append(v)
    return tuple(sorted(set(out))), problems


def parse_sizes(text: str, what: str, max_value: int = 1 << 20) -> tuple[int, ...]:
    """Parse a comma-separated list of positive integers ("32, 64, 128") into a sorted tuple.

    Raises:
        ValueError: an empty list, non-integers, values <= 0 or above ``max_value``; one message
            naming ``what`` and every bad entry, separated by "; ".
    """
    values, problems = size_problems(text, what, max_value)
    if problems:
        raise ValueError("; ".join(problems))
    return values


#: The page's sweep fields: keyword of RunSpec -> (what the message calls it, largest value).
SWEEP_FIELDS = {"prompt_lens": ("prompt lengths", 131072), "prefill_batches": ("prefill batches", 4096),
                "decode_batches": ("decode batches", 4096), "decode_contexts": ("decode contexts", 131072)}


def parse_sweeps(texts: dict[str, str]) -> tuple[dict[str, tuple[int, ...]], list[str]]:
    """Parse every sweep field at once (keys of ``SWEEP_FIELDS`` -> the user's text).

    Returns:
        (RunSpec keyword -> sizes for the fields that parsed, every problem of every field), so a
        page can report all bad entries in one message.
    """
    values, problems = {}, []
    for key, text in texts.items():
        what, top = SWEEP_FIELDS[key]
        v, p = size_problems(text, what, top)
        problems += p
        if not p:
            values[key] = v
    return values, problems


def load_advice(load_before: tuple[float, ...] | None, n_cores: int | None) -> str | None:
    """A sentence of advice when the machine was busy as a run started, else None.

    The 1-minute load average (``os.getloadavg()[0]``) counts runnable processes; at half the core
    count or more, other work competes with the measurement's threads for the cores and single
    points can come out several times slower than undisturbed. The load *after* a run includes the
    run itself (its threads keep the cores busy), so only the load before is judged.
    """
    if not load_before or not n_cores:
        return None
    one_min = float(load_before[0])
    if one_min < 0.5 * n_cores:
        return None
    return (f"The machine was busy when the run started (load {one_min:.2f} on {n_cores} cores): other processes "
            "compete with the measurement for the cores, so single points can be several times too slow. Points "
            "marked unreliable are the suspects; for clean figures rerun when the load is below "
            f"{0.5 * n_cores:.1f}.")


def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of this machine (Linux /proc/cpuinfo; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_native_dtypes(flags: frozenset[str] | None = None) -> tuple[str, ...]:
    """Dtypes this CPU multiplies natively: fp32 always; bf16 with AVX-512-BF16 or AMX-BF16; fp16 with
    AVX-512-FP16 or AMX-FP16. Without them torch falls back to a reference path (measured ~300x slower
    for a bf16 matmul on an AVX2-only CPU)."""
    flags = cpu_flags() if flags is None else flags
    out = ["fp32"]
    if flags & {"avx512_bf16", "amx_bf16"}:
        out.append("bf16")
    if flags & {"avx512_fp16", "amx_fp16"}:
        out.append("fp16")
    return tuple(out)


def cuda_present() -> bool:
    """Whether an NVIDIA driver is visible, checked without importing torch (the worker confirms it)."""
    import os
    import shutil

    return os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi") is not None


def default_dtype(device: str) -> str:
    """bf16 on a GPU; fp32 on a CPU (DESIGN.md: always pass dtype; a CPU's bf16 path is often slow).

    Raises:
        ValueError: unknown device.
    """
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}; got {device!r}")
    return "bf16" if device == "cuda" else "fp32"
