"""The source distribution carries what the tests, the docs site and the benchmarks need.

The sdist is built from a copy of the checkout's files (tracked and new, nothing ignored —
as a fresh clone has them), listed, unpacked, and a few test files are run from the unpacked
tree, so a packager can run the tests from the sdist alone.
"""

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _checkout_files():
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [f for f in out.splitlines() if (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    if not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout (this test builds the sdist from one)")
    work = tmp_path_factory.mktemp("sdist")
    tree = work / "tree"
    for f in _checkout_files():
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, tree / f)
    code = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    res = subprocess.run(
        [sys.executable, "-c", code, str(work / "dist")],
        check=False,
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    path = work / "dist" / res.stdout.strip().splitlines()[-1]
    with tarfile.open(path) as tar:
        names = tar.getnames()
        tar.extractall(work / "unpacked", filter="data")
    (top,) = {n.split("/", 1)[0] for n in names}
    return {"names": {n.split("/", 1)[1] for n in names if "/" in n}, "root": work / "unpacked" / top}


def test_sdist_carries_tests_fixtures_docs_and_project_files(sdist):
    names = sdist["names"]
    for f in _checkout_files():
        if f.startswith(("tests/", "docs/", "metrics/", "suites/", "compressors/", "bench/", "src/rageval/")):
            assert f in names, f"{f} is not in the sdist (MANIFEST.in)"
    for f in (
        "tests/conftest.py",
        "mkdocs.yml",
        "CITATION.cff",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "LICENSE",
        "README.md",
        "pyproject.toml",
        ".pre-commit-config.yaml",
    ):
        assert f in names, f
    assert any(n.startswith("tests/fixtures/") for n in names)
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_tests_run_from_the_unpacked_sdist(sdist):
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_citations.py",
            "tests/test_evaluate_export.py::test_card_has_the_spaces_front_matter",
        ],
        check=False,
        cwd=sdist["root"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert " passed" in res.stdout.strip().splitlines()[-1]
