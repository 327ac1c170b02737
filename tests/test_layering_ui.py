"""The UI and live layers import in one direction: app.py -> app_pages (pages) -> ui (helpers) -> live -> calc.

Read from the source with ast (nothing is imported or run); an import inside a function counts like one at the
top of a module, so a loop cannot hide in a lazy import. The rules:

- app_pages/ holds the pages that app.py's navigation lists (``ui.nav.PAGES``) and nothing else;
- a page imports no other page; ui/ and live/ import no page;
- live/ imports neither ui/ nor streamlit (it also runs in a worker process and from the command line);
- calc/ imports none of app_pages/, ui/, live/;
- no import loop among the modules of ui/, nor among those of live/.
"""
import ast
from pathlib import Path

import pytest

import import_graph

ROOT = Path(__file__).resolve().parent.parent


def _modules(folder: str) -> dict[str, Path]:
    """Dotted module name -> file, for the .py files of ``folder`` (not recursive: the layers are flat)."""
    return {f"{folder}.{p.stem}": p for p in sorted((ROOT / folder).glob("*.py")) if p.stem != "__init__"}


def _imports(module: str, path: Path) -> set[str]:
    """Every module ``path`` imports, dotted and absolute; ``from pkg import name`` also yields ``pkg.name``
    (name may be a module)."""
    package = module.rsplit(".", 1)[0] if "." in module else ""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(p for p in parts + ([node.module] if node.module else []) if p)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _loops(folder: str) -> list[list[str]]:
    """The import loops among the modules of ``folder``: strongly connected groups of more than one module."""
    mods = _modules(folder)
    return import_graph.loops({m: sorted(i for i in _imports(m, p) if i in mods and i != m) for m, p in mods.items()})


def _pages_listed() -> set[str]:
    """The files app.py's navigation lists, read from the PAGES assignment in ui/nav.py."""
    nav = ROOT / "ui" / "nav.py"
    if not nav.exists():
        return set()
    for node in ast.parse(nav.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PAGES" for t in node.targets):
            return {entry.elts[0].value for entry in node.value.elts}
    return set()


def test_app_pages_holds_only_the_pages_of_the_navigation():
    files = {f"app_pages/{p.name}" for p in (ROOT / "app_pages").glob("*.py") if p.stem != "__init__"}
    listed = _pages_listed()
    assert listed, "ui/nav.py must list the pages (PAGES)"
    assert files == listed, (f"not pages (move them to ui/): {sorted(files - listed)}; "
                             f"listed but missing: {sorted(listed - files)}")


def test_a_page_imports_no_other_page():
    offenders = [f"{m} imports {i}" for m, p in _modules("app_pages").items()
                 for i in _imports(m, p) if _top(i) == "app_pages" and i not in ("app_pages", m)]
    assert not offenders, offenders


@pytest.mark.parametrize("folder", ["ui", "live"])
def test_helpers_and_live_import_no_page(folder):
    assert (ROOT / folder).is_dir(), f"{folder}/ is missing"
    offenders = [f"{m} imports {i}" for m, p in _modules(folder).items() for i in _imports(m, p) if _top(i) == "app_pages"]
    assert not offenders, offenders


def test_live_imports_neither_ui_nor_streamlit():
    offenders = [f"{m} imports {i}" for m, p in _modules("live").items() for i in _imports(m, p)
                 if _top(i) in ("ui", "streamlit", "app_pages")]
    assert not offenders, offenders


def test_calc_imports_no_layer_above_it():
    mods = {f"calc.{'.'.join(p.relative_to(ROOT / 'calc').with_suffix('').parts)}": p
            for p in sorted((ROOT / "calc").rglob("*.py"))}
    offenders = [f"{m} imports {i}" for m, p in mods.items() for i in _imports(m, p)
                 if _top(i) in ("app_pages", "ui", "live", "streamlit")]
    assert not offenders, offenders


@pytest.mark.parametrize("folder", ["ui", "live"])
def test_no_import_loop(folder):
    assert (ROOT / folder).is_dir(), f"{folder}/ is missing"
    assert not _loops(folder), f"import loops in {folder}/: {_loops(folder)}"


def test_the_loop_finder_finds_a_loop(tmp_path, monkeypatch):
    # two modules that import each other, one of them lazily inside a function
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("from pkg import b\n")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from .a import x\n")
    (tmp_path / "pkg" / "c.py").write_text("import pkg.a\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path, raising=False)
    assert _loops("pkg") == [["pkg.a", "pkg.b"]]
