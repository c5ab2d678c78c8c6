"""rageval.data: datasets in one example schema (docs/datasets.md;
docs/design.md#data-model, #source-snippets).

* :mod:`~rageval.data.registry` — the dataset registry (:data:`LOADERS`: builders, aliases, samples);
* :mod:`~rageval.data.load` — :func:`load_examples`, :func:`examples_from_records`;
* one module per dataset: :mod:`~rageval.data.asqa`, :mod:`~rageval.data.qasper`,
  :mod:`~rageval.data.multihop` (HotpotQA, 2WikiMultiHopQA), :mod:`~rageval.data.musique`;
  :mod:`~rageval.data.asqa_corpus` (:func:`load_corpus`);
* what they share: :mod:`~rageval.data.files` (the file reader), :mod:`~rageval.data.hub`
  (the hub reader), :mod:`~rageval.data.fields` (records with their location, documents),
  :mod:`~rageval.data.errors`, :mod:`~rageval.data.schema` (:class:`Example`, :class:`Document`);
* :mod:`~rageval.data.formats` — the files ``rageval score`` reads (generic, ALCE, RAGChecker, RAGAS).

>>> from rageval.data import load_examples, sample_path
>>> ex = load_examples("musique", sample_path("musique"), limit=2)[0]
>>> len(ex.documents), ex.gold_doc_ids
(20, ('d6', 'd10'))
"""

from rageval.data.asqa_corpus import corpus_doc_id, load_corpus
from rageval.data.errors import DataLoadError, DataUnavailable
from rageval.data.load import examples_from_records, load_examples
from rageval.data.registry import DATASETS, LOADERS, SAMPLES, sample_path
from rageval.data.schema import ANSWER_TYPES, Document, Example, passage_to_snippets

__all__ = [
    "ANSWER_TYPES",
    "DATASETS",
    "LOADERS",
    "SAMPLES",
    "DataLoadError",
    "DataUnavailable",
    "Document",
    "Example",
    "corpus_doc_id",
    "examples_from_records",
    "load_corpus",
    "load_examples",
    "passage_to_snippets",
    "sample_path",
]
