"""The checkers see every wing: ruff, mypy and import-linter (run by scripts/test.sh with no paths) cover the
library, the compressors, the evaluate modules, the tests, the benchmarks and the scripts as pyproject.toml
configures them, so their coverage cannot shrink without a test failing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the backport, a dependency of mypy (the test extra)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
#: what ruff lints and formats; mypy checks all but the scripts
WINGS = ("src", "compressors", "metrics", "tests", "bench", "scripts")
TYPED_WINGS = ("src", "compressors", "metrics", "tests", "bench")
#: folders of Python files that are data, not code (test inputs, sample files)
NOT_CODE = (ROOT / "src" / "rageval" / "data" / "samples", ROOT / "tests" / "fixtures")
#: what the compressors may import from rageval besides themselves (docs/architecture.md#layers)
COMPRESSORS_IMPORT = {"budget", "errors", "registry", "text", "token_counts", "types", "bm25", "lm", "llamacpp"}


def _python_files(*wings: str) -> set[Path]:
    return {
        p.resolve()
        for wing in wings
        for p in (ROOT / wing).rglob("*.py")
        if not any(p.is_relative_to(d) for d in NOT_CODE) and "__pycache__" not in p.parts
    }


def test_ruff_lints_and_formats_every_python_file_of_every_wing():
    """A path-free ``ruff check`` (and ``ruff format``, which finds files the same way) sees exactly the wings'
    files: ``ruff check --show-files`` lists what it would lint."""
    assert {p.split("/")[0] for p in CONFIG["ruff"]["include"] if p.endswith(".py")} == set(WINGS)
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--show-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    seen = {Path(line.strip()).resolve() for line in out.splitlines() if line.strip().endswith(".py")}
    expected = _python_files(*WINGS)
    assert len(expected) > 300
    assert seen == expected, {
        "not linted": sorted(map(str, expected - seen)),
        "extra": sorted(map(str, seen - expected)),
    }


def test_mypy_checks_every_wing_under_its_installed_name(monkeypatch):
    """A path-free ``mypy`` checks the library, the compressors as ``rageval.compressors``, the evaluate modules as
    ``rageval.metric_modules``, the tests and the benchmarks: mypy's own source discovery, from pyproject.toml."""
    from mypy.config_parser import parse_config_file
    from mypy.find_sources import create_source_list
    from mypy.options import Options

    for link, target in (("compressors", "compressors"), ("metric_modules", "metrics")):
        assert (ROOT / "mypy-path" / "rageval" / link).resolve() == (ROOT / target).resolve()
    monkeypatch.chdir(ROOT)
    options = Options()
    parse_config_file(options, lambda: None, str(ROOT / "pyproject.toml"), stdout=sys.stdout, stderr=sys.stderr)
    sources = create_source_list(options.files, options)
    by_path = {Path(s.path).resolve(): s.module for s in sources if s.path}
    expected = _python_files(*TYPED_WINGS)
    assert set(by_path) == expected, sorted(map(str, expected ^ set(by_path)))
    assert by_path[(ROOT / "compressors" / "base.py").resolve()] == "rageval.compressors.base"
    assert by_path[(ROOT / "compressors" / "__init__.py").resolve()] == "rageval.compressors"
    assert by_path[(ROOT / "metrics" / "str_em" / "str_em.py").resolve()] == "rageval.metric_modules.str_em.str_em"
    assert by_path[(ROOT / "src" / "rageval" / "run" / "parts.py").resolve()] == "rageval.run.parts"
    # the tests and the benchmarks import their siblings by bare name
    assert by_path[(ROOT / "tests" / "fault_http.py").resolve()] == "fault_http"
    assert by_path[(ROOT / "bench" / "_threads.py").resolve()] == "_threads"


def _layers() -> list[set[str]]:
    contract = next(c for c in CONFIG["importlinter"]["contracts"] if c["type"] == "layers")
    return [{name.strip() for name in layer.replace(":", "|").split("|")} for layer in contract["layers"]]


def test_the_layers_name_every_module_of_rageval_and_the_compressors():
    """Every top-level module of rageval sits in a layer (so the compressors' contract below names all the others),
    and so do the compressors, a root package of import-linter's graph."""
    assert "compressors" in CONFIG["importlinter"]["root_packages"]
    named = set().union(*_layers())
    top = {
        p.stem
        for p in (ROOT / "src" / "rageval").iterdir()
        if (p.suffix == ".py" or (p / "__init__.py").is_file()) and not p.name.startswith("_")
    }
    unnamed = {m for m in top if not any(n == f"rageval.{m}" or n.startswith(f"rageval.{m}.") for n in named)}
    assert not unnamed and "compressors" in named, sorted(unnamed)


def test_the_compressors_contract_forbids_every_lower_module_but_the_ground_they_use():
    """With the layers contract (nothing above the parts' layer), the forbidden contract makes the compressors'
    rule exact: of the layers below theirs, they import only COMPRESSORS_IMPORT."""
    layers = _layers()
    mine = next(i for i, layer in enumerate(layers) if "compressors" in layer)
    below = {name.removeprefix("rageval.") for layer in layers[mine + 1 :] for name in layer}
    assert below >= COMPRESSORS_IMPORT
    contract = next(c for c in CONFIG["importlinter"]["contracts"] if c.get("source_modules") == ["compressors"])
    assert contract["type"] == "forbidden" and contract["allow_indirect_imports"] is True
    assert {m.removeprefix("rageval.") for m in contract["forbidden_modules"]} == below - COMPRESSORS_IMPORT


def test_import_linter_sees_the_compressors_imports():
    """The graph import-linter checks (built the way lint-imports builds it, from the repository root) holds the
    compressors' modules and their imports of the rest of rageval; not a vacuous contract."""
    grimp = pytest.importorskip("grimp")
    sys.path.insert(0, str(ROOT))
    try:
        graph = grimp.build_graph(
            *CONFIG["importlinter"]["root_packages"], exclude_type_checking_imports=True, cache_dir=None
        )
    finally:
        sys.path.remove(str(ROOT))
    assert {f"compressors.{p.stem}" for p in (ROOT / "compressors").glob("[!_]*.py")} <= graph.modules
    assert {"rageval.budget", "rageval.token_counts", "rageval.types"} <= graph.find_modules_directly_imported_by(
        "compressors.base"
    )
