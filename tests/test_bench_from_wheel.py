"""Every bench/ script runs against an installed wheel as well as the checkout (no sys.path tricks).

The wheel is built and unpacked into a folder that comes first on PYTHONPATH, so ``rageval`` (with its
``rageval.compressors`` mapped from the checkout's top-level ``compressors/``) is imported from the wheel;
each script is started as ``python bench/<script>.py --help`` would start it and must import everything it
needs, from there.  (The benchmarks themselves are not run by the test command.)
"""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))

PROBE = """\
import runpy, sys
script = sys.argv[1]
sys.path.insert(0, str(__import__("pathlib").Path(script).parent))  # as `python bench/x.py` does
sys.argv = [script, "--help"]
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as e:
    assert e.code in (0, None), e.code
import rageval, rageval.compressors
print("RAGEVAL", rageval.__file__)
print("COMPRESSORS", rageval.compressors.__file__)
"""


@pytest.fixture(scope="module")
def wheel_site(project_wheel, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = project_wheel
    site = tmp / "site"
    zipfile.ZipFile(wheel).extractall(site)
    return site


def test_there_are_bench_scripts():
    names = {p.name for p in SCRIPTS}
    assert {"bench_packer.py", "bench_packer_libs.py", "bench_stats.py"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_script_imports_from_an_installed_wheel(script, wheel_site, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(wheel_site)}
    res = subprocess.run(
        [sys.executable, "-c", PROBE, str(script)],
        check=False,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    where = dict(
        line.split(" ", 1) for line in res.stdout.splitlines() if line.startswith(("RAGEVAL ", "COMPRESSORS "))
    )
    assert where["RAGEVAL"].startswith(str(wheel_site)), where
    assert where["COMPRESSORS"].startswith(str(wheel_site)), where
    assert "sys.path.insert" not in script.read_text()  # the scripts never reach into the checkout's src/
