"""The house's layering, read from the source with ``ast`` (nothing is imported or run).

``CALC_LAYERS`` is the one place that orders calc's modules, bottom to top: a module may import only
modules listed before it. A new module in calc/ must be added to the list, at the height of what it
imports. The other folders (live/, app_pages/, and ui/ and course/ when they exist; a folder added to
``FOLDERS`` is covered at once) are checked for import loops and for imports that point the wrong way.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import import_graph

ROOT = Path(__file__).resolve().parent.parent

#: calc's modules, bottom to top. New modules must be added here, above every calc module they import.
CALC_LAYERS = [
    "checks",        # argument checks shared by every function
    "number_text",   # numbers and dollars as text, the house style (ui/formats.py takes them from here)
    "dtypes",        # number formats and their sizes (plain dtypes, block formats)
    "limits",        # bounds on untrusted numbers and config.json text
    "layers",        # the one registry of layer kinds and what each layer holds
    "models",        # ModelConfig and the preset catalogue
    "traces",        # request streams: the block hashes of each prompt; public trace formats
    "workload",      # sessions of turns (chat, RAG, agent loops) as a request stream
    "config_shapes", # the shapes a Hugging Face config.json declares, family by family
    "param_count",   # parameter counts from a config.json's shapes
    "checkpoint_format",  # the checkpoint's weight format, from its quantization_config
    "config_json",   # a Hugging Face config.json -> ModelConfig
    "hardware",      # Accelerator and the accelerator catalogue
    "quant",         # which tensors each weight format quantizes
    "kv",            # the KV cache and constant per-sequence state
    "memory",        # weight bytes stored and read, capacity conventions
    "roofline",      # the step of one accelerator
    "collectives",   # links between accelerators and the time of a collective
    "layout",        # Layout: TP, PP, EP, replicas; which layouts the engines accept
    "gpu_share",     # what one GPU of a layout holds: weights, KV share, per-GPU memory, batch ceiling
    "parallel",      # the step of a layout
    "step",          # the public step and memory functions: one accelerator or a layout
    "speculative_serving",  # speculative decoding in the serving model: acceptance length, draft cost, notes
    "measurements",  # published serving measurements, loaded, and each row's bound from step
    "inferencex",    # InferenceX benchmark result JSON -> measurement rows
    "prefix_cache",  # a prefix cache in tiers replayed on a request stream; load or recompute; TTFT
    "serving_params",  # the serving model's parameters as data (engine settings, fitted costs)
    "run_limits",    # the latency limits a published run was tuned to, read from its row
    "serving_terms",  # what the serving model adds to the bound: bursts, attention precision, bf16 layers
    "serving_tails",  # percentiles of a run's times (p99 TTFT, TPOT, ITL, latency) from the serving model's points
    "serving",       # the serving model: TTFT, TPOT, throughput of an engine serving a workload
    "serving_fit",   # calibration of the serving model on the measurements, cross-validation
    "comparison",    # measurements against the serving model and the bound (points, frontier, table)
    "cost",          # price per token, Pareto front, replicas
    "energy",        # power drawn, joules per token, tokens per kWh, CO2 per 1M tokens
    "ownership",     # renting against buying against an API: $ per GPU-hour, crossover volumes
    "sweeps",        # curves the pages draw
    "operators",     # the step split by operator
    "efficiency",    # measured efficiency against the roofline
    "napkin",        # the napkin table of every preset and accelerator
    "layout_choice", # which layouts and GPUs hold a model, the throughput frontier, one layout's summary
    "planning",      # capacity plan for a traffic, plan options, disaggregated plan
    "request_stream",  # a ragged stream of requests: Poisson arrivals, random prompt and output lengths
    "kv_paging",     # paged KV memory against contiguous max-length slabs
    "batching",      # static and continuous batching simulation
    "price_sheet",   # vendors' price sheets and the bill of one API request
    "product_traffic",  # a product's traffic: users, generations, tokens per generation
    "api_tiers",     # API price tiers: the price table, default tiers, tiers to and from a table
    "bill",          # the monthly bill of an API tier and of self-hosting
    "bill_compare",  # tiers against self-hosting: break-even DAU, the comparison table, sweeps, verdict
    "workload_bill", # both bills of one request stream: API (provider cache, reasoning) and self-hosted
    "spec_tables",   # speculative sampling: checking probability tables, the rule for one drafted token
    "spec_speedup",  # speculative decoding's speedup: i.i.d. and per-position acceptance, the batch effect
    "speculative",   # speculative decoding
    "__main__",      # the command line (python3 -m calc)
]
#: Folders whose modules are checked; a folder that does not exist yet is skipped.
FOLDERS = ("calc", "course", "classroom", "ui", "live", "app_pages")
#: Top-level packages calc must not import (calc is pure: no UI, no torch, nothing above it).
CALC_FORBIDDEN = ("streamlit", "torch", "live", "app_pages", "ui", "course", "classroom")
COURSE_FORBIDDEN = ("streamlit", "torch", "live", "app_pages", "ui", "classroom")
#: The class poll (rules, questions, storage) sits above calc and course, below the UI.
CLASSROOM_FORBIDDEN = ("streamlit", "torch", "live", "app_pages", "ui")
LIVE_FORBIDDEN = ("app_pages", "ui")


def _modules() -> dict[str, Path]:
    """Dotted name -> file, for every .py file of ``FOLDERS`` (sub-packages included)."""
    out = {}
    for folder in FOLDERS:
        base = ROOT / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imports(name: str, path: Path) -> list[tuple[str, int, bool]]:
    """(absolute dotted target, line, inside a function) for each import of a module. ``from X import y``
    gives X.y when X.y is one of MODULES (a submodule), else X."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside |= {id(n) for n in ast.walk(fn) if n is not fn}
    out = []
    for node in ast.walk(tree):
        nested = id(node) in inside
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno, nested) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = _package_of(name, path).split(".")
                pkg = pkg[:len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub if sub in MODULES else base, node.lineno, nested))
    return out


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _internal(target: str) -> str | None:
    """The module of MODULES an import target names (itself or its nearest listed parent), or None."""
    while target:
        if target in MODULES:
            return target
        target = target.rpartition(".")[0]
    return None


def _loops(imports: dict[str, list]) -> list[list[str]]:
    """Strongly connected components of more than one module, each sorted."""
    graph = {m: sorted({t for t in (_internal(x) for x, _, _ in imps) if t and t != m}) for m, imps in imports.items()}
    return import_graph.loops(graph)


def _calc_modules() -> list[str]:
    return sorted(n.split(".", 1)[1] for n in MODULES if n.startswith("calc."))


def _pages() -> set[str]:
    """Modules of app_pages/ that the app registers with st.Page: the strings "app_pages/<name>.py"
    (the whole string, as st.Page takes it) in app.py and in the modules it reads its page list from
    (app_pages/, ui/); a helper module is named in prose only."""
    pages = set()
    sources = [ROOT / "app.py"] + [p for n, p in MODULES.items() if n.split(".")[0] in ("app_pages", "ui")]
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                m = re.fullmatch(r"app_pages/(\w+)\.py", node.value)
                if m:
                    pages.add(f"app_pages.{m.group(1)}")
    return pages & set(MODULES)


def _where(name: str, line: int) -> str:
    return f"{MODULES[name].relative_to(ROOT)}:{line}"


#: Loops that stand today outside calc, through imports inside functions; each is to end (the page
#: helpers' caching and in-place chart need no import of common; live's robust fit and predict are one
#: layer). An entry that no longer holds fails the test: delete it then.
KNOWN_LOOPS: list[list[str]] = []   # none left; a new loop fails the test below


def test_the_folders_have_no_import_loop():
    loops = _loops(IMPORTS)
    assert [lp for lp in loops if lp not in KNOWN_LOOPS] == []
    assert [lp for lp in KNOWN_LOOPS if lp not in loops] == [], "a known loop is gone: delete it from KNOWN_LOOPS"
    assert not any(name.startswith("calc") for lp in KNOWN_LOOPS for name in lp)


def test_every_calc_module_is_in_the_declared_order():
    listed = set(CALC_LAYERS)
    present = set(_calc_modules()) - {"calc"}
    assert len(CALC_LAYERS) == len(listed), "a module is listed twice"
    assert sorted(present - listed) == [], "calc modules missing from CALC_LAYERS (add them at their height)"
    assert sorted(listed - present) == [], "CALC_LAYERS lists modules that calc/ no longer has"


def test_calc_imports_only_modules_below():
    rank = {m: i for i, m in enumerate(CALC_LAYERS)}
    wrong = []
    for name, imps in IMPORTS.items():
        if not name.startswith("calc.") or name.split(".", 1)[1] not in rank:
            continue
        me = name.split(".", 1)[1]
        for target, line, _ in imps:
            t = _internal(target)
            if t and t.startswith("calc.") and t.split(".", 1)[1] in rank and rank[t.split(".", 1)[1]] >= rank[me]:
                wrong.append(f"{_where(name, line)} imports {t}, which is not below {me} in CALC_LAYERS")
    assert wrong == []


def test_calc_has_no_import_inside_a_function():
    nested = [f"{_where(n, line)} imports {t} inside a function" for n, imps in IMPORTS.items()
              if n.split(".")[0] == "calc" for t, line, inner in imps if inner]
    assert nested == []


def test_calc_modules_do_not_import_the_package_root():
    root = [f"{_where(n, line)} imports the package root (import the module that defines the name)"
            for n, imps in IMPORTS.items() if n.startswith("calc.") for t, line, _ in imps if t == "calc"]
    assert root == []


@pytest.mark.parametrize("folder, forbidden", [("calc", CALC_FORBIDDEN), ("course", COURSE_FORBIDDEN),
                                               ("classroom", CLASSROOM_FORBIDDEN), ("live", LIVE_FORBIDDEN)])
def test_lower_folders_do_not_import_upper_ones(folder, forbidden):
    wrong = [f"{_where(n, line)} imports {t}" for n, imps in IMPORTS.items() if n.split(".")[0] == folder
             for t, line, _ in imps if t.split(".")[0] in forbidden]
    assert wrong == []


def test_a_page_does_not_import_another_page():
    pages = _pages()
    assert "app_pages.home" in pages, "the page list was not found (app.py registers pages with st.Page)"
    wrong = [f"{_where(n, line)} imports the page {_internal(t)}" for n in pages for t, line, _ in IMPORTS[n]
             if _internal(t) in pages and _internal(t) != n]
    assert wrong == []
