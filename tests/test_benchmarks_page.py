"""docs/benchmarks.md is rendered from the saved bench results (bench/results/*.json) and cannot drift from them;
a bench script's run is saved with its command, date, load and rows by bench/_results.py."""

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_page_is_what_the_committed_results_render_to():
    render = _module("render_benchmarks")
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert page == render.render(), "run: python bench/render_benchmarks.py"
    for path in sorted((ROOT / "bench" / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["runs"], path
        for run in data["runs"]:
            assert run["command"] and run["date"] and run["load"] and run["source"], (path, run)


def test_a_saved_run_carries_its_command_load_rows_and_output_and_renders(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_BENCH_RESULTS", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["bench_demo.py", "--repeat", "2"])
    results = _module("_results")

    def main() -> int:
        print("ratio 2.50x")
        results.row(case="small", speed_up=2.5)
        return 0

    assert results.run_and_save(str(tmp_path / "bench_demo.py"), main) == 0
    assert "ratio 2.50x" in capsys.readouterr().out  # the script's printing is kept
    data = json.loads((tmp_path / "bench_demo.json").read_text(encoding="utf-8"))
    (run,) = data["runs"]
    assert run["command"].endswith("bench_demo.py --repeat 2")
    assert run["rows"] == [{"case": "small", "speed_up": 2.5}] and run["output"] == ["ratio 2.50x"]
    assert re.fullmatch(
        r"(\d+\.\d\d / ){2}\d+\.\d\d at start, (\d+\.\d\d / ){2}\d+\.\d\d at end \(1 / 5 / 15 min\)", run["load"]
    )
    assert run["source"] == results.MEASURED
    with pytest.raises(ValueError, match="command"):
        results.row(command="x")  # a row cannot hide the run's own columns
    page = _module("render_benchmarks").render(tmp_path)
    assert "## bench_demo" in page and "| small | 2.5 |" in page and run["load"] in page


def test_a_run_that_fails_is_not_saved(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_BENCH_RESULTS", str(tmp_path))
    results = _module("_results")
    before = sys.stdout

    def main() -> None:
        raise SystemExit(2)  # e.g. argparse on a wrong option

    try:
        results.run_and_save(str(tmp_path / "bench_demo.py"), main)
    except SystemExit as e:
        assert e.code == 2
    assert not (tmp_path / "bench_demo.json").exists()
    assert sys.stdout is before  # the tee is taken down
