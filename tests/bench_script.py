"""A script of bench/ loaded as a module for a test (bench/ is scripts, not a package)."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def bench_script(name: str):
    """bench/<name>.py as a module; registered under its name while it runs (a dataclass of the script looks its
    module up then), not after.

    Raises:
        FileNotFoundError: no such script.
    """
    path = BENCH / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module
