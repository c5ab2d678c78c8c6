"""Shared plumbing of the attribution ``evaluate`` modules (``metrics/<name>/<name>.py``).

Imports ``evaluate`` and ``datasets``: only the module files import this (the
suite runner calls the pure functions directly, DESIGN §9).

Inputs are declared with ``datasets.List`` of records (OFFLINE.md): a unit is
``{"text", "source_ids" (nullable list), "title" (nullable)}``, a source
``{"id", "text", "title" (nullable)}``.  ``datasets`` needs every key present, so
:meth:`AttributionMetric.compute` fills an absent ``title`` (and a unit's absent
``source_ids``) with None before encoding — the same meaning as leaving it out.
Options (``judge``, ``threshold``, ...) are keyword arguments passed through to
the pure function unchanged.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import datasets
import evaluate

from rageval.evaluate_support import module_info

__all__ = ["AttributionMetric", "unit_feature", "source_feature", "attribution_features", "COMMON_ARGS"]

COMMON_ARGS = """\
    predictions: list[str], one answer per question, with [k] citations (unit k = units[q][k-1]).
    units: list (per question) of lists of {"text": str, "source_ids": list[str] | None, "title": str (optional)}:
        what the reader saw; source_ids = the source snippets the unit declares (None: declares nothing).
    sources: list (per question) of lists of {"id": str, "text": str, "title": str (optional)}:
        the question's source snippets.
    judge: "lexical" (default), "replay:<path>", "minilm", a model path / hub id ("nli:…", "seq2seq:…"),
        a judge object or a callable judge(premises, hypotheses) -> list[float]; pass a
        rageval.judges.get_judge(...) runner to share its cache between modules.
    threshold: decision threshold on the entailment probability (default 0.5).
    max_citations: citations kept per sentence, first ones first (default 3, None = all).
    alce_compat: reproduce ALCE's eval.py parsing and premises exactly (default False).
"""


def unit_feature():
    return {
        "text": datasets.Value("string"),
        "source_ids": datasets.List(datasets.Value("string")),
        "title": datasets.Value("string"),
    }


def source_feature():
    return {"id": datasets.Value("string"), "text": datasets.Value("string"), "title": datasets.Value("string")}


def attribution_features(**extra) -> datasets.Features:
    feats = {
        "predictions": datasets.Value("string"),
        "units": datasets.List(unit_feature()),
        "sources": datasets.List(source_feature()),
    }
    feats.update(extra)
    return datasets.Features(feats)


def _fill(rows: Any, defaults: Mapping[str, Any]) -> Any:
    if not isinstance(rows, (list, tuple)):
        return rows  # let the pure function raise its typed error
    out = []
    for per_q in rows:
        if isinstance(per_q, (list, tuple)):
            out.append([({**defaults, **d} if isinstance(d, Mapping) else d) for d in per_q])
        else:
            out.append(per_q)
    return out


class AttributionMetric(evaluate.Metric):
    """Base of the attribution modules: subclasses set NAME, FUNCTION, DESCRIPTION, KWARGS and FEATURES."""

    NAME: str = ""
    FUNCTION: Callable[..., dict] | None = None
    DESCRIPTION: str = ""
    KWARGS: str = ""
    EXTRA_FEATURES: Callable[[], dict] | None = None

    def _info(self):
        extra = type(self).EXTRA_FEATURES() if type(self).EXTRA_FEATURES else {}
        return module_info(self.NAME, self.DESCRIPTION, self.KWARGS, features=attribution_features(**extra))

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Fill absent optional keys (``title``, ``source_ids``) with None, then ``evaluate``'s compute.
"""
        if "units" in kwargs:
            kwargs["units"] = _fill(kwargs["units"], {"source_ids": None, "title": None})
        if "sources" in kwargs:
            kwargs["sources"] = _fill(kwargs["sources"], {"title": None})
        if references is not None:
            kwargs["references"] = references
        extra = type(self).EXTRA_FEATURES() if type(self).EXTRA_FEATURES else {}
        if "paragraph_of" in extra and kwargs.get("paragraph_of") is None and isinstance(predictions, (list, tuple)):
            kwargs["paragraph_of"] = [None] * len(predictions)
        return super().compute(predictions=predictions, **kwargs)

    def _compute(self, predictions, units, sources, **options):
        return type(self).FUNCTION(predictions, units, sources, **options)
