"""Hub-ready evaluate module folders (`rageval export-metrics`), citations, CITATION.cff, `python -m rageval`.

The shipped ``metrics/<name>/`` folders must be exactly what ``export-metrics`` writes for the
namespace ``rageval``; an exported folder must load with ``evaluate.load(DIR/<name>)``; each
``app.py`` must build evaluate's Gradio 3 widget — run here against a stub ``gradio`` whose
component signatures are Gradio 3.50's, since no Space can be started offline.
"""

import json
import re
import runpy
import subprocess
import sys
import types
from pathlib import Path
from typing import ClassVar

import pytest
import yaml
from click.testing import CliRunner
from test_common_modules import CASES

import rageval
from rageval.cli import main
from rageval.diagnostics import CATALOG
from rageval.evaluate_support.bibtex import SOURCES, WORKS, citation, rageval_entry
from rageval.evaluate_support.export import (
    FRONT_MATTER_KEYS,
    SDK_VERSION,
    export_metrics,
    render_card,
    render_folder,
)

ROOT = Path(__file__).resolve().parents[1]
METRICS = ROOT / "metrics"
NAMES = sorted(p.name for p in METRICS.iterdir() if (p / f"{p.name}.py").is_file())
SPACES_COLOURS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}


def _front_matter(card: str) -> dict:
    m = re.match(r"\A---\n(.*?)\n---\n", card, re.DOTALL)
    assert m, "the card must start with a YAML front matter block"
    return yaml.safe_load(m.group(1))


def _section(card: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", card, re.MULTILINE | re.DOTALL)
    assert m, f"no '## {heading}' section"
    return m.group(1)


# ---------------------------------------------------------------- the shipped folders


@pytest.mark.parametrize("name", NAMES)
def test_card_has_the_spaces_front_matter(name):
    fm = _front_matter((METRICS / name / "README.md").read_text())
    assert list(fm) == list(FRONT_MATTER_KEYS)
    assert fm["sdk"] == "gradio" and fm["app_file"] == "app.py" and fm["pinned"] is False
    assert re.fullmatch(r"3\.\d+\.\d+", str(fm["sdk_version"])), "evaluate's widget needs Gradio 3"
    assert fm["sdk_version"] == SDK_VERSION
    assert fm["colorFrom"] in SPACES_COLOURS and fm["colorTo"] in SPACES_COLOURS
    assert fm["emoji"] and fm["title"] and fm["description"]
    assert fm["tags"][:2] == ["evaluate", "metric"]
    assert fm["version"] == CATALOG[name].version  # kept: the card's version line


@pytest.mark.parametrize("name", NAMES)
def test_shipped_folder_is_what_export_metrics_writes(name):
    rendered = render_folder(name, "rageval")
    for fname, text in rendered.items():
        path = METRICS / name / fname
        assert path.is_file(), f"metrics/{name}/{fname} missing: run `rageval export-metrics metrics`"
        assert path.read_text() == text, f"metrics/{name}/{fname} is stale: run `rageval export-metrics metrics`"


@pytest.mark.parametrize("name", NAMES)
def test_requirements_name_rageval_at_its_version(name):
    assert (METRICS / name / "requirements.txt").read_text().splitlines() == [f"rageval=={rageval.__version__}"]


def test_package_version_is_the_pyproject_version():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1) == rageval.__version__


@pytest.mark.parametrize("name", NAMES)
def test_card_how_to_use_is_the_modules_doctest_and_citation_is_the_modules(name):
    card = (METRICS / name / "README.md").read_text()
    how = _section(card, "How to use")
    source = (METRICS / name / f"{name}.py").read_text()
    doctest_lines = source[source.index("Examples:") :].splitlines()[1:]
    first = doctest_lines[0].strip()
    assert first.startswith(">>> ") and "evaluate.load(" in first and first in how
    assert f'evaluate.load("rageval/{name}")' in how
    bib = re.search(r"```bibtex\n(.*?)```", _section(card, "Citation"), re.DOTALL).group(1)
    assert bib == citation(name)


def test_render_card_is_idempotent_and_keeps_hand_written_sections():
    name = "answer_f1"
    card = (METRICS / name / "README.md").read_text()
    source = (METRICS / name / f"{name}.py").read_text()
    bare = re.sub(r"^## (How to use|Citation)\n.*?(?=^## |\Z)", "", card, flags=re.MULTILINE | re.DOTALL)
    bare = "---\ntitle: answer_f1\nversion: 9.9.9\n---\n" + bare.split("\n---\n", 1)[1]
    once = render_card(name, bare, source, "ns")
    assert render_card(name, once, source, "ns") == once
    assert _front_matter(once)["version"] == "9.9.9"  # the card's own version is kept, never guessed
    assert _section(once, "Definition") == _section(card, "Definition")
    assert once.index("## How to use") < once.index("## Inputs") and once.index("## Citation") < once.index(
        "## Versions"
    )


# ---------------------------------------------------------------- citations


def test_every_diagnostic_cites_its_sources_and_rageval_with_its_version():
    assert set(SOURCES) == set(CATALOG)
    expected = {
        "str_em": "gao-etal-2023-enabling",
        "answer_f1": "yang-etal-2018-hotpotqa",
        "evidence_f1": "dasigi-etal-2021-dataset",
        "emitted_precision": "gao-etal-2023-enabling",
        "grounded_precision": "attribution-compression-frontier",
        "answer_in_context": "what-survives-into-context",
    }
    for name, key in expected.items():
        assert "{" + key + "," in citation(name), name
    assert "{rajpurkar-etal-2016-squad," in citation("answer_f1")
    for name in CATALOG:
        entries = re.findall(r"^@\w+\{([^,]+),", citation(name), re.MULTILINE)
        assert entries[-1] == "rageval" and len(entries) == len(set(entries)) == len(SOURCES[name]) + 1
        assert f"version = {{{rageval.__version__}}}" in citation(name)


def test_bibtex_entries_are_balanced_and_titled():
    for key, entry in [*WORKS.items(), ("rageval", rageval_entry())]:
        assert entry.count("{") == entry.count("}"), key
        assert re.search(r"^  title = \{.+\},$", entry, re.MULTILINE), key
        assert entry.rstrip().endswith("}"), key


def test_module_citation_is_the_catalog_citation():
    evaluate = pytest.importorskip("evaluate")
    for name in ("answer_f1", "evidence_f1"):
        assert evaluate.load(str(METRICS / name)).citation == citation(name)


def test_citation_cff_names_rageval_at_its_version_and_every_source():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == rageval.__version__
    assert cff["title"].startswith("rageval") and cff["authors"] and cff["message"]
    titles = {r["title"] for r in cff["references"]}
    for entry in WORKS.values():
        title = re.search(r"^  title = \{(.+)\},$", entry, re.MULTILINE).group(1).replace("{", "").replace("}", "")
        assert title in titles, title
    for ref in cff["references"]:
        assert ref["type"] and ref["authors"], ref["title"]


# ---------------------------------------------------------------- export-metrics


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "modules"
    folders = export_metrics(out, namespace="my-lab")
    assert sorted(f.name for f in folders) == NAMES
    return out


def test_exported_folder_has_the_set_with_the_users_namespace(exported):
    for name in NAMES:
        files = sorted(p.name for p in (exported / name).iterdir())
        assert files == sorted(["README.md", "app.py", "requirements.txt", f"{name}.py"])
        card = (exported / name / "README.md").read_text()
        assert f'evaluate.load("my-lab/{name}")' in card and "rageval/" + name + '")' not in card
        assert "](../../" not in card, "links out of the folder must be absolute in an exported card"
        assert _front_matter(card)["sdk_version"] == SDK_VERSION


@pytest.mark.parametrize("name", NAMES)
def test_exported_folder_loads_with_evaluate_and_matches_the_pure_function(name, exported):
    evaluate = pytest.importorskip("evaluate")
    from rageval import diagnostics
    from rageval.evaluate_support.modules import own_keys

    module = evaluate.load(str(exported / name))
    inputs, options = CASES[name]
    assert module.compute(**inputs, **options) == own_keys(name, diagnostics.get(name)(**inputs, **options))


def test_export_again_is_a_no_op(exported):
    before = {p: p.stat().st_mtime_ns for p in exported.rglob("*") if p.is_file()}
    export_metrics(exported, namespace="my-lab")
    assert {p: p.stat().st_mtime_ns for p in exported.rglob("*") if p.is_file()} == before


# ---------------------------------------------------------------- app.py against a stub gradio (Gradio 3.50 signatures)


class _Dataframe:
    def __init__(
        self,
        headers=None,
        row_count=3,
        col_count=3,
        datatype="str",
        col_width=None,
        default=None,
        type="pandas",
        label=None,
        optional=False,
    ):
        self.headers, self.datatype, self.col_count = headers, datatype, col_count


class _Textbox:
    def __init__(self, type="text", label=None):
        self.label = label


class _Interface:
    built: ClassVar[list] = []

    def __init__(
        self,
        fn,
        inputs,
        outputs,
        examples=None,
        cache_examples=None,
        title=None,
        description=None,
        article=None,
        **rest,
    ):
        unknown = set(rest) - {"live", "flagging_options", "allow_flagging", "theme", "css", "analytics_enabled"}
        assert not unknown, f"not a Gradio 3 Interface argument: {unknown}"
        self.fn, self.inputs, self.outputs = fn, inputs, outputs
        self.title, self.description, self.article = title, description, article
        self.launched = False

    def launch(self, **kwargs):
        self.launched = True
        _Interface.built.append(self)


def _stub_gradio():
    gr = types.ModuleType("gradio")
    gr.__version__ = SDK_VERSION
    gr.Interface = _Interface
    gr.inputs = types.SimpleNamespace(Dataframe=_Dataframe)
    gr.outputs = types.SimpleNamespace(Textbox=_Textbox)
    return gr


def _cell(value):
    """A value as typed into the widget's table: JSON (a string in double quotes, a list as JSON)."""
    return value if isinstance(value, (int, float)) else json.dumps(value)


@pytest.mark.parametrize("name", NAMES)
def test_app_builds_evaluates_widget_and_computes(name, exported, monkeypatch):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("evaluate")
    folder = exported / name
    monkeypatch.setitem(sys.modules, "gradio", _stub_gradio())
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path[1:]])  # as `python app.py` in the Space
    _Interface.built.clear()
    namespace = runpy.run_path(str(folder / "app.py"), run_name="__main__")
    (iface,) = _Interface.built
    assert iface.launched and iface.title == f"Metric: {name}"
    assert iface.article.lstrip().startswith(f"# Metric card: {name}")  # the card, front matter stripped
    module = namespace["module"]
    headers = list(iface.inputs.headers)
    assert headers == module._feature_names() and iface.outputs.label == name
    inputs, _ = CASES[name]
    rows = list(zip(*(inputs[h] for h in headers)))
    table = pd.DataFrame([[_cell(v) for v in row] for row in rows], columns=headers)
    assert iface.fn(table) == module.compute(**{h: inputs[h] for h in headers})


# ---------------------------------------------------------------- the command line


def test_export_metrics_command_writes_every_folder(tmp_path):
    res = CliRunner().invoke(main, ["export-metrics", str(tmp_path / "out"), "--namespace", "my-lab"])
    assert res.exit_code == 0, res.output
    assert f"wrote {len(NAMES)} evaluate module folders for namespace 'my-lab'" in res.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == NAMES


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--namespace", "my lab"], "namespace 'my lab' is not a Hub user or organisation name"),
        (["--namespace", "-lab"], "namespace '-lab' is not a Hub user or organisation name"),
        (["--name", "answer_f11"], "Did you mean 'answer_f1'?"),
    ],
)
def test_export_metrics_user_errors_are_one_line(tmp_path, args, message):
    res = CliRunner().invoke(main, ["export-metrics", str(tmp_path / "out"), *args])
    assert res.exit_code == 2  # the command is wrong (exit 1 is for a run that could not go on)
    assert message in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_export_metrics_into_a_file_is_a_one_line_error(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    res = CliRunner().invoke(main, ["export-metrics", str(target)])
    assert res.exit_code == 2 and "is a file" in res.output and "Traceback" not in res.output


def test_python_dash_m_rageval():
    res = subprocess.run(
        [sys.executable, "-m", "rageval", "--help"], check=False, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Usage: rageval ")
    for command in ("export-metrics", "install-metrics", "suite", "metrics"):
        assert command in res.stdout
    res = subprocess.run(
        [sys.executable, "-m", "rageval", "--version"], check=False, capture_output=True, text=True, timeout=120
    )
    assert res.stdout.strip() == f"rageval, version {rageval.__version__}"
