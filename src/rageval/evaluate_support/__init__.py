"""Support for the Hugging Face ``evaluate`` modules shipped in ``metrics/``.

* :func:`module_info` builds each module's ``MetricInfo`` from the catalog
  (name, version, summary) so a module and its catalog entry cannot disagree.
* :func:`install_metrics` copies the modules into evaluate's module cache so a
  fresh process can ``evaluate.load("grounded_precision")`` by bare name, offline.
* :func:`load` is ``evaluate.load`` without evaluate's per-load cache line (a bare name found in the module
  cache logs "Using the latest cached version of the module from …" as a warning on every load): evaluate's
  loading logger is raised to ERROR for the duration of the call only, then set back as it was.

The cache layout is evaluate's own (``evaluate.loading.CachedEvaluationModuleFactory``):
``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--<name>/<sha256>/<name>.py``
with an ``__init__.py`` in each package folder; the newest hash folder wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
from importlib import resources
from pathlib import Path

from rageval.diagnostics import CATALOG
from rageval.evaluate_support.bibtex import HOMEPAGE, citation, rageval_entry

__all__ = [
    "module_info",
    "modules_dir",
    "module_names",
    "modules_cache_dir",
    "install_metrics",
    "load",
    "quiet_loading",
    "CITATION",
]

#: the logger evaluate's ``load`` writes its cache line to (``evaluate.loading``'s ``logger.warning``)
LOADING_LOGGER = "evaluate.loading"

#: rageval's own BibTeX entry (each module cites its sources first: :func:`citations.citation`)
CITATION = rageval_entry() + "\n"


def module_info(name: str, description: str, inputs_description: str, features, **extra):
    """``evaluate.MetricInfo`` for module ``name``, version and summary taken from the catalog."""
    import evaluate

    info = CATALOG[name]
    return evaluate.MetricInfo(
        module_type="metric",
        description=f"{description.strip()}\n\nrageval {name} version {info.version}; direction: {info.direction} is better.\n",
        citation=extra.pop("citation", None) or citation(name),
        inputs_description=inputs_description,
        features=features,
        homepage=HOMEPAGE,
        codebase_urls=[],
        reference_urls=extra.pop("reference_urls", []),
        **extra,
    )


def modules_dir() -> Path:
    """Folder holding the shipped modules (``metrics/`` of the source tree, installed as package data)."""
    return Path(str(resources.files("rageval.metric_modules")))


def module_names() -> list[str]:
    root = modules_dir()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / f"{p.name}.py").is_file())


def modules_cache_dir() -> Path:
    """evaluate's dynamic-modules folder, resolved the way evaluate resolves it (without importing it)."""
    if os.environ.get("HF_MODULES_CACHE"):
        base = Path(os.environ["HF_MODULES_CACHE"]).expanduser()
    else:
        hf_home = os.environ.get("HF_HOME") or os.path.join(
            os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "huggingface"
        )
        base = Path(hf_home).expanduser() / "modules"
    return base / "evaluate_modules"


def install_metrics(target: str | os.PathLike | None = None) -> list[Path]:
    """Copy every shipped module into evaluate's module cache; return the installed ``.py`` paths."""
    root = Path(target) / "evaluate_modules" if target is not None else modules_cache_dir()
    metrics_root = root / "metrics"
    metrics_root.mkdir(parents=True, exist_ok=True)
    for folder in (root, metrics_root):
        (folder / "__init__.py").touch(exist_ok=True)
    installed = []
    src_root = modules_dir()
    for name in module_names():
        src = src_root / name / f"{name}.py"
        digest = hashlib.sha256(src.read_bytes()).hexdigest()
        pkg = metrics_root / f"evaluate-metric--{name}"
        dest_dir = pkg / digest
        dest_dir.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").touch(exist_ok=True)
        (dest_dir / "__init__.py").touch(exist_ok=True)
        dest = dest_dir / f"{name}.py"
        shutil.copyfile(src, dest)
        card = src_root / name / "README.md"
        if card.is_file():
            shutil.copyfile(card, dest_dir / "README.md")
        os.utime(dest)  # newest hash wins in evaluate's cache lookup
        installed.append(dest)
    return installed


@contextlib.contextmanager
def quiet_loading():
    """Within the block, evaluate's loading logger drops warnings (the per-load cache line); after it, the
    logger's level is what it was, whatever the block raised."""
    log = logging.getLogger(LOADING_LOGGER)
    before = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(before)


def load(path: str, **kwargs):
    """``evaluate.load(path, **kwargs)`` without its cache line (see :func:`quiet_loading`)."""
    import evaluate

    with quiet_loading():
        return evaluate.load(path, **kwargs)
