"""rageval.data: datasets in one example schema (docs/datasets.md;
docs/design.md#data-model, #source-snippets).

>>> from rageval.data import load_examples, sample_path
>>> ex = load_examples("musique", sample_path("musique"), limit=2)[0]
>>> len(ex.documents), ex.gold_doc_ids
(20, ('d6', 'd10'))
"""

from rageval.data.loaders import (
    DATASETS,
    LOADERS,
    SAMPLES,
    DataLoadError,
    DataUnavailable,
    corpus_doc_id,
    examples_from_records,
    load_corpus,
    load_examples,
    sample_path,
)
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
