"""A suite's inputs: the dataset file, its examples and their retrieval, and the diagnostics that apply.

Nothing here runs a model.  :func:`load_inputs` reads the dataset and retrieves
as the run does (``rageval validate`` calls the same function);
:func:`select_diagnostics` resolves ``diagnostics: auto`` through the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval.data import LOADERS, load_corpus, load_examples, sample_path
from rageval.diagnostics import applicable
from rageval.suite.config import RetrievalSpec, Suite

if TYPE_CHECKING:
    from rageval.dense import DenseEncoder, EmbeddingStore

__all__ = ["load_inputs", "resolve_dataset_path", "retrieve_setting", "select_diagnostics"]


def resolve_dataset_path(suite: Suite) -> Path | None:
    """The dataset file: ``path`` (relative to the suite file, else the cwd), a shipped sample, or None (hub)."""

    ds = suite.dataset
    if ds.hub_id is not None:
        return None
    if ds.path is None:  # the dataset's own sample, under its canonical name (`hotpot` is `hotpotqa`)
        return sample_path(ds.sample or LOADERS.canonical(ds.name))
    p = Path(ds.path).expanduser()
    if not p.is_absolute() and suite.source:
        beside = Path(suite.source).resolve().parent / p
        if beside.exists():
            return beside
    if not p.exists():
        raise FileNotFoundError(f"dataset.path {ds.path!r} not found (looked beside the suite file and in the cwd)")
    return p


def load_inputs(suite: Suite, *, embeddings: EmbeddingStore | None = None):
    """Examples and their retrieval (the suite's ``retrieval:``), as the suite describes.

    ``embeddings``: where a dense retriever's embeddings are read from and kept (a run's ``cache/embeddings``).
    """
    ds = suite.dataset
    path = resolve_dataset_path(suite)
    if ds.format is not None:  # a file `rageval score` reads (docs/score.md#suites-that-read-the-same-files)
        from rageval.data.formats.suite_data import read_examples

        source = str(path) if path is not None else f"hf:{ds.hub_id}"
        examples = read_examples(source, ds.format, split=ds.split, limit=ds.limit)
    else:
        examples = load_examples(
            ds.name, path, hub_id=ds.hub_id, hub_config=ds.hub_config, split=ds.split, limit=ds.limit
        )
    return examples, retrieve_setting(suite, examples, suite.retrieval, embeddings=embeddings)


_ENCODERS: dict[str | None, DenseEncoder] = {}


def _encoder(model: str | None, store: EmbeddingStore | None) -> DenseEncoder:
    """One encoder per model in this process (its weights loaded once, its in-memory cache shared), writing what
    it computes to ``store`` (this run's)."""
    from rageval.dense import DenseEncoder

    enc = _ENCODERS.get(model)
    if enc is None:
        enc = _ENCODERS[model] = DenseEncoder(model)
    enc.store = store
    return enc


def retrieve_setting(suite: Suite, examples, spec: RetrievalSpec, *, embeddings: EmbeddingStore | None = None):
    """The retrieval ``spec`` (the suite's or a setting's) for every example."""
    from rageval.retrieval import retrieve_all

    ds = suite.dataset
    corpus = None
    if spec.method in ("bm25", "dense") and spec.corpus == "dataset":
        if ds.format is not None:
            raise ValueError(
                f"retrieval.corpus: dataset has no corpus for dataset.format {ds.format!r} (a file of outputs); "
                "use corpus: example (each question's own sources)"
            )
        path = resolve_dataset_path(suite)
        corpus = load_corpus(ds.name, path, hub_id=ds.hub_id, hub_config=ds.hub_config, split=ds.split)
    if spec.method == "dense":
        enc = _encoder(spec.model, embeddings)
        return retrieve_all(examples, method="dense", k=spec.k, corpus=corpus, encoder=enc, dense_index=spec.index)
    return retrieve_all(examples, method=spec.method, k=spec.k, corpus=corpus)


def select_diagnostics(suite: Suite, examples: Sequence[Any]) -> list[str]:
    """The suite's diagnostics; ``auto``: every catalog entry whose gold some example carries."""

    return applicable(suite.diagnostics, lambda field: any(getattr(e, field, None) for e in examples))
