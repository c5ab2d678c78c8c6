"""Bare-name loading after `rageval install-metrics`, the CLI, and the doctests."""

import doctest
import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.diagnostics import CATALOG

ROOT = Path(__file__).resolve().parents[1]
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def _env(hf_home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(OFFLINE, HF_HOME=str(hf_home))
    return env


def test_bare_name_load_in_fresh_process_after_install_metrics(tmp_path):
    env = _env(tmp_path / "hf")
    out = subprocess.run(
        [sys.executable, "-m", "rageval.cli", "install-metrics"], env=env, capture_output=True, text=True, check=True
    )
    assert "installed" in out.stdout
    script = (
        "import json, evaluate\n"
        "m = evaluate.load('answer_in_context')\n"
        "r = m.compute(contexts=['Paris is in France'], references=[['paris']])\n"
        "print(json.dumps({'v': r['answer_in_context'], 'cache': m.__module__}))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", script], check=False, env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-2000:]
    payload = json.loads(res.stdout.strip().splitlines()[-1])
    assert payload["v"] == 1.0
    assert "evaluate-metric--answer_in_context" in payload["cache"]


def test_path_load_from_repo_root_in_fresh_process(tmp_path):
    script = (
        "import evaluate\n"
        "m = evaluate.load('metrics/answer_in_context')\n"
        "print(m.compute(contexts=['a b c'], references=[['b c']])['answer_in_context'])\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", script], check=False, env=_env(tmp_path / "hf"), cwd=ROOT, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "1.0"


def test_install_metrics_installs_every_module(tmp_path):
    res = CliRunner().invoke(main, ["install-metrics", "--target", str(tmp_path)])
    assert res.exit_code == 0, res.output
    names = {p.name.split("--", 1)[1] for p in (tmp_path / "evaluate_modules" / "metrics").iterdir() if p.is_dir()}
    shipped = {p.name for p in (ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()}
    assert names == shipped


def test_help_imports_neither_torch_nor_evaluate():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from rageval.cli import main\n"
        "r = CliRunner().invoke(main, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "r = CliRunner().invoke(main, ['metrics'])\n"
        "assert r.exit_code == 0, r.output\n"
        "heavy = [m for m in ('torch', 'evaluate', 'transformers', 'datasets') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def test_metrics_command_lists_every_diagnostic_with_version():
    res = CliRunner().invoke(main, ["metrics"])
    assert res.exit_code == 0
    for name, info in CATALOG.items():
        assert any(line.startswith(name + " ") and f"v{info.version}" in line for line in res.output.splitlines())


def test_metrics_command_lists_family_direction_and_every_output_from_the_catalog():
    res = CliRunner().invoke(main, ["metrics"])
    assert res.exit_code == 0, res.output
    arrow = {"higher": "↑", "lower": "↓", "none": "·"}
    lines = res.output.splitlines()
    heads = [i for i, line in enumerate(lines) if line and not line.startswith(" ")]
    names = [lines[i].split()[0] for i in heads[:-1]]  # the last unindented line is the legend
    assert names == list(CATALOG)  # every entry, in catalog order
    for k, name in enumerate(names):
        info = CATALOG[name]
        head = lines[heads[k]].split()
        assert head[:4] == [name, f"v{info.version}", info.family, arrow[info.direction]]
        block = " ".join(lines[heads[k] + 1 : heads[k + 1]])
        for o in info.outputs + info.module_keys:
            assert f"{o.key} {arrow[o.direction]}" in block, (name, o.key)
    assert "emitted_minus_grounded_precision ·" in res.output  # an undirected key is shown without a direction


def _library_modules():
    mods = []
    for pkg_name in ("rageval", "rageval.compressors"):
        pkg = importlib.import_module(pkg_name)
        mods.append(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, pkg_name + "."):
            mods.append(info.name)
    return sorted(set(mods))


@pytest.mark.parametrize("modname", _library_modules())
def test_library_doctests(modname):
    module = importlib.import_module(modname)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_evaluate_module_doctests_run_by_bare_name(tmp_path):
    """Each module's Examples run in a fresh process, loading modules by bare name."""
    env = _env(tmp_path / "hf")
    subprocess.run([sys.executable, "-m", "rageval.cli", "install-metrics"], env=env, check=True, capture_output=True)
    script = (
        "import doctest, importlib.util, sys, evaluate, pathlib\n"
        "failed = 0\n"
        "for path in sorted(p / f'{p.name}.py' for p in pathlib.Path(sys.argv[1]).iterdir() if p.is_dir()):\n"
        "    if not path.is_file(): continue  # the module, not its app.py (docs/evaluate.md)\n"
        "    spec = importlib.util.spec_from_file_location(path.stem, path)\n"
        "    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "    r = doctest.run_docstring_examples\n"
        "    t = doctest.DocTestParser().get_doctest(mod._KWARGS_DESCRIPTION, {'evaluate': evaluate}, path.stem, str(path), 0)\n"
        "    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)\n"
        "    runner.run(t); failed += runner.failures\n"
        "    assert t.examples, f'{path.stem} has no doctest examples'\n"
        "print('FAILED', failed)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / "metrics")],
        check=False,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip().splitlines()[-1] == "FAILED 0", res.stdout[-3000:]


def test_plain_install_ships_modules_compressors_suites_and_samples(project_wheel):
    """A wheel (what `pip install .` installs) holds every metric module, card, compressor, suite and sample."""
    import zipfile

    wheel = project_wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    for mod in (p.name for p in (ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()):
        assert f"rageval/metric_modules/{mod}/{mod}.py" in names
        assert f"rageval/metric_modules/{mod}/README.md" in names
    for comp in (p.name for p in (ROOT / "compressors").glob("*.py")):
        assert f"rageval/compressors/{comp}" in names
    for suite in (p.name for p in (ROOT / "suites").glob("*.yaml")):
        assert f"rageval/suites/{suite}" in names
    for src in (ROOT / "src" / "rageval").rglob("*.py"):  # every module of the source tree, subpackages too
        rel = src.relative_to(ROOT / "src").as_posix()
        if "egg-info" not in rel:
            assert rel in names, f"{rel} is not in the wheel: add its package to [tool.setuptools] packages"
    assert "rageval/data/samples/hotpotqa/hotpotqa_train100_distractor.json" in names
    assert "rageval/data/samples/PROVENANCE.md" in names
    for t in ("report.html.j2", "macros.html.j2", "explorer.html.j2", "report.css", "explorer.js"):
        assert f"rageval/report/templates/{t}" in names  # the HTML report's templates, stylesheet and script
    assert not any(n.startswith(("compressors/", "metrics/", "suites/")) for n in names), (
        "no generic top-level packages"
    )
