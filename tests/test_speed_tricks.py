"""The pure diagnostics hold no global state of the interpreter: no garbage-collector switch inside them.

The speed tricks that were measured and why none stays are in docs/architecture.md ("Speed tricks"); the
functions of ``rageval.diagnostics`` compute values only.
"""

import ast
from pathlib import Path

import rageval.diagnostics

DIAGNOSTICS = Path(rageval.diagnostics.__file__).parent
#: the collector's switches and rageval's wrappers of them
BANNED = {"freeze", "unfreeze", "disable", "enable", "collector_paused", "heap_frozen", "freeze_survivors"}


def _gc_uses(path: Path) -> list[str]:
    """Where ``path`` imports :mod:`gc` or names a collector switch (``gc.freeze``, ``heap_frozen``, ...)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import) and any(a.name == "gc" for a in node.names):
            found.append(f"{path.name}:{node.lineno}: import gc")
        elif isinstance(node, ast.ImportFrom) and (
            node.module == "gc" or any(a.name in BANNED - {"enable", "disable", "freeze"} for a in node.names)
        ):
            found.append(f"{path.name}:{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "gc":
            found.append(f"{path.name}:{node.lineno}: gc.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in BANNED - {"enable", "disable", "freeze", "unfreeze"}:
            found.append(f"{path.name}:{node.lineno}: {node.id}")
    return found


def test_no_garbage_collector_switch_inside_the_diagnostics():
    files = sorted(DIAGNOSTICS.rglob("*.py"))
    assert len(files) > 20  # the whole package is read, not an empty folder
    assert [use for f in files for use in _gc_uses(f)] == []


def test_the_scan_finds_each_kind_of_switch(tmp_path):
    """The scan of the test above is not blind: each way of reaching the collector is found."""
    cases = {
        "import gc\ngc.freeze()\n": 2,
        "from gc import disable\n": 1,
        "from rageval.heap import heap_frozen\nwith heap_frozen():\n    pass\n": 2,
        "import gc as g\n": 1,
        "x = collector_paused\n": 1,
        "def f():\n    return 1\n": 0,
    }
    for i, (code, n) in enumerate(cases.items()):
        p = tmp_path / f"m{i}.py"
        p.write_text(code)
        assert len(_gc_uses(p)) == n, code
