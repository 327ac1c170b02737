"""Every section that its docstring calls a fragment is one (decorated with widgets.fragment), and nothing else
is: a fragment draws, it returns nothing.

Why a test: a helper written between the decorator and the function it decorated once made Many GPUs'
layout section an ordinary function and the helper a fragment; every TP, PP or batch move then reran the
whole app (43 kB over the websocket instead of about 15 kB, bench/browser_speed.py --attribute) and no
page test noticed, because AppTest runs fragments and whole pages alike.
"""
import ast
import re
from pathlib import Path

import pytest

#: The pages and the helpers that draw page sections (ui/).
PAGES = sorted(p for d in ("app_pages", "ui") for p in (Path(__file__).resolve().parent.parent / d).glob("*.py"))


def _is_fragment(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "fragment"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_fragments_are_what_their_docstrings_say(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name == "fragment":
            continue
        doc = " ".join((ast.get_docstring(node) or "").split())
        says = re.search(r"\bA fragment\b", doc) is not None
        is_fragment = any(_is_fragment(d) for d in node.decorator_list)
        assert says == is_fragment, (f"{path.name}:{node.lineno} {node.name}: docstring says fragment: {says}, "
                                     f"decorated: {is_fragment}")
        if is_fragment:  # a fragment's return value is thrown away by Streamlit
            assert node.returns is None or (isinstance(node.returns, ast.Constant) and node.returns.value is None), \
                f"{path.name}:{node.lineno} {node.name} is a fragment that returns a value"


def test_the_check_sees_the_pages_fragments():
    # the parametrised test must have something to check: the pages hold at least ten fragments
    count = sum(_is_fragment(d) for p in PAGES for n in ast.walk(ast.parse(p.read_text()))
                if isinstance(n, ast.FunctionDef) for d in n.decorator_list)
    assert count >= 10, count
