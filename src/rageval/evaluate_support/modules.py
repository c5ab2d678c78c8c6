"""The base classes of the ``evaluate`` modules shipped in ``metrics/`` (imports ``evaluate`` and ``datasets``).

Only the module files import this; the diagnostics package and the suite runner
never do.

* :class:`RagevalMetric` — every rageval module: its ``MetricInfo`` comes from
  the catalog (:func:`rageval.evaluate_support.module_info`); each module's own
  ``_compute`` declares its inputs (the features, positional) and options
  (keyword-only, the pure function's defaults) by name — evaluate's module
  contract: no ``**kwargs`` — and hands its arguments to
  :meth:`RagevalMetric._score`, which calls the catalog's pure function and keeps
  the module's own keys (a test checks every module's signature against its
  features and its pure function); :meth:`RagevalMetric.compute` sorts the
  keyword arguments: the module's own inputs and options pass through; names
  that belong to *another* rageval module are dropped (``evaluate.combine``
  passes every keyword to every module); a name no rageval module knows is a
  ``TypeError`` with a "did you mean" hint.  :meth:`RagevalMetric.add` and
  :meth:`RagevalMetric.add_batch` prepare their inputs the same way, so streaming
  then ``compute()`` gives exactly what one ``compute`` over all the data gives.
* **One key, one owner.**  A module returns its own aggregates (the keys its
  catalog entry declares) and the counts no entry declares (``n``,
  ``n_undefined``, ``per_question``, totals), never an aggregate another
  module owns (``grounded_precision`` does not return ``emitted_recall``; the
  per-question rows still hold every value).  So under ``evaluate.combine``
  every metric key appears once, unprefixed, and only the common counts are
  prefixed with the module name (``emitted_precision_n``); with
  ``force_prefix=True`` every key is ``<module>_<key>``.
* :class:`AttributionMetric` — the modules over ``predictions``/``units``/``sources``.
  A unit is ``{"text", "source_ids" (nullable list), "title" (nullable)}``, a
  source ``{"id", "text", "title" (nullable), "doc_id" (nullable)}``; ``datasets``
  needs every key present, so :meth:`AttributionMetric.compute` fills an absent
  ``title``, ``doc_id`` (and a unit's absent ``source_ids``) with None before
  encoding — the same meaning as leaving it out.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import Any

import datasets
import evaluate

from rageval.diagnostics.catalog import CATALOG, get
from rageval.diagnostics.check_inputs import check_module_inputs
from rageval.evaluate_support import module_info
from rageval.registry import did_you_mean
from rageval.scoring import (
    DEFAULT_CANDIDATES,
    DEFAULT_CLAIM_PREMISE,
    DEFAULT_GROUNDING,
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_MULTI_SNIPPET,
    DEFAULT_NO_CITATION_PRECISION,
    DEFAULT_RECOVERY_K,
    DEFAULT_THRESHOLD,
)

__all__ = [
    "RagevalMetric",
    "AttributionMetric",
    "unit_feature",
    "source_feature",
    "attribution_features",
    "COMMON_ARGS",
    "known_names",
    "module_names_for",
    "own_keys",
    # the option defaults the modules' signatures name (rageval.scoring's; a module imports only this support)
    "DEFAULT_CANDIDATES",
    "DEFAULT_CLAIM_PREMISE",
    "DEFAULT_GROUNDING",
    "DEFAULT_JUDGE",
    "DEFAULT_MAX_CITATIONS",
    "DEFAULT_MULTI_SNIPPET",
    "DEFAULT_NO_CITATION_PRECISION",
    "DEFAULT_RECOVERY_K",
    "DEFAULT_THRESHOLD",
]

COMMON_ARGS = (
    """\
    predictions: list[str], one answer per question, with [k] citations (unit k = units[q][k-1]).
    units: list (per question) of lists of {"text": str, "source_ids": list[str] | None, "title": str (optional)}:
        what the reader saw; source_ids = the source snippets the unit declares (None: declares nothing).
    sources: list (per question) of lists of {"id": str, "text": str, "title": str (optional),
        "doc_id": str (optional)}: the question's source snippets (doc_id: its document; default: the id up
        to its last ".").
"""
    # the defaults: rageval.scoring's
    + f"""\
    judge: "{DEFAULT_JUDGE}" (default), "replay:<path>", "minilm", a model path / hub id ("nli:…", "seq2seq:…"),
        a judge object or a callable judge(premises, hypotheses) -> list[float]; pass a
        rageval.judges.get_judge(...) runner to share its cache between modules.
    threshold: decision threshold on the entailment probability (default {DEFAULT_THRESHOLD}).
    max_citations: citations kept per sentence, first ones first (default {DEFAULT_MAX_CITATIONS}, None = all).
    alce_compat: reproduce ALCE's eval.py parsing and premises exactly (default False).
"""
)


@functools.cache
def module_names_for(name: str) -> frozenset[str]:
    """The keyword names diagnostic ``name``'s pure function takes."""

    return frozenset(inspect.signature(get(name)).parameters)


@functools.lru_cache(maxsize=1)
def known_names() -> frozenset[str]:
    """Every input and option name of every rageval module."""

    return frozenset().union(*(module_names_for(n) for n in CATALOG))


class RagevalMetric(evaluate.Metric):
    """Base of every rageval module.

    Subclasses set ``NAME`` (a catalog entry), ``DESCRIPTION``, ``KWARGS`` (the
    inputs description), ``FEATURES`` (a function returning the ``datasets.Features``,
    or a list of them), optionally ``REFERENCE_URLS``, and define
    ``_compute(self, <features>, *, <options>)`` as ``return self._score(locals())``;
    the ``MetricInfo`` (version, direction, summary) comes from the catalog.
    """

    NAME: str = ""
    DESCRIPTION: str = ""
    KWARGS: str = ""
    FEATURES: Any = None
    REFERENCE_URLS: tuple[str, ...] = ()

    def _info(self):
        return module_info(
            self.NAME,
            self.DESCRIPTION,
            self.KWARGS,
            features=type(self).FEATURES(),
            reference_urls=list(self.REFERENCE_URLS),
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Keep this module's inputs and options, drop other rageval modules' names, reject unknown ones."""

        known, own = known_names(), module_names_for(self.NAME)
        unknown = sorted(k for k in kwargs if k not in known)
        if unknown:
            raise TypeError(
                f"{self.NAME}: unknown argument {unknown[0]!r} (no rageval module takes it)."
                f"{did_you_mean(unknown[0], sorted(known))}"
            )
        kwargs = {k: v for k, v in kwargs.items() if k in own}
        if "predictions" not in own:
            predictions = None
        if "references" not in own:
            references = None
        kwargs = self._prepare(kwargs, predictions)
        check_module_inputs(self.NAME, {"predictions": predictions, "references": references, **kwargs})
        return super().compute(predictions=predictions, references=references, **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Stream a batch of questions, prepared like :meth:`compute` (absent optional keys filled with None)."""
        kwargs = self._prepare(dict(kwargs), predictions)
        check_module_inputs(self.NAME, {"predictions": predictions, "references": references, **kwargs})
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Stream one question, prepared like :meth:`compute` (as a batch of one)."""
        batch = self._prepare({k: [v] for k, v in kwargs.items()}, [prediction])
        check_module_inputs(self.NAME, {"predictions": [prediction], "references": [reference], **batch})
        return super().add(prediction=prediction, reference=reference, **{k: v[0] for k, v in batch.items()})

    def _prepare(self, kwargs: dict[str, Any], predictions: Any) -> dict[str, Any]:
        return kwargs

    def _infer_feature_from_batch(self, batch):
        """The input format (one of ``FEATURES``) from the first row that shows its shape, not blindly row 0.

        evaluate reads row 0 only: an empty batch raised IndexError, and a row 0 of empty lists (``[[]]``)
        matched the first format whatever the later rows hold.  An empty batch takes the first format (it
        encodes under any)."""
        if isinstance(self.features, datasets.Features):
            return self.features
        rows = [dict(zip(batch, values)) for values in zip(*batch.values())]
        if not rows:
            return self.features[0]
        shown = next((r for r in rows if all(_shows_shape(v) for v in r.values() if v is not None)), rows[0])
        return self._infer_feature_from_example(shown)

    def _score(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The result of the module's ``_compute``, given its ``locals()``: the pure function's, own keys only.

        Each module's ``_compute(self, <features>, *, <options>)`` is one line,
        ``return self._score(locals())``; the names its signature declares are
        passed on by name (``self`` and anything else in ``arguments`` are not).
        """

        names = inspect.signature(self._compute).parameters  # the bound method's: without self
        return own_keys(self.NAME, get(self.NAME)(**{k: v for k, v in arguments.items() if k in names}))


def _shows_shape(value: Any) -> bool:
    """Whether ``value`` shows its nesting: not an empty list, nor a list whose first item is one."""
    if isinstance(value, (list, tuple)):
        return bool(value) and (value[0] is None or _shows_shape(value[0]))
    return True


def own_keys(name: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` of diagnostic ``name`` without the aggregates another catalog entry owns.

    A key is kept when ``name``'s entry declares it (outputs and module keys) or
    no entry does (``n``, ``n_undefined``, ``per_question``, totals).
    """

    spec = CATALOG[name]
    mine = {o.key for o in spec.outputs + spec.module_keys}
    others = {o.key for s in CATALOG.values() if s.name != name for o in s.outputs + s.module_keys}
    return {k: v for k, v in result.items() if k in mine or k not in others}


def unit_feature():
    return {
        "text": datasets.Value("string"),
        "source_ids": datasets.List(datasets.Value("string")),
        "title": datasets.Value("string"),
    }


def source_feature():
    return {
        "id": datasets.Value("string"),
        "text": datasets.Value("string"),
        "title": datasets.Value("string"),
        "doc_id": datasets.Value("string"),
    }


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


#: per-question inputs a module may be given or not (evidence_f1's ``paragraph_of``, claim_support's ``claims``)
OPTIONAL_PER_QUESTION = ("paragraph_of", "claims")


class AttributionMetric(RagevalMetric):
    """Base of the attribution modules: subclasses set NAME, DESCRIPTION, KWARGS, _compute (EXTRA_FEATURES optional)."""

    EXTRA_FEATURES: Any = None

    def _extra_features(self) -> dict:
        return type(self).EXTRA_FEATURES() if type(self).EXTRA_FEATURES else {}

    def _info(self):
        return module_info(
            self.NAME, self.DESCRIPTION, self.KWARGS, features=attribution_features(**self._extra_features())
        )

    def _prepare(self, kwargs: dict[str, Any], predictions: Any) -> dict[str, Any]:
        if "units" in kwargs:
            kwargs["units"] = _fill(kwargs["units"], {"source_ids": None, "title": None})
        if "sources" in kwargs:
            kwargs["sources"] = _fill(kwargs["sources"], {"title": None, "doc_id": None})
        for name in OPTIONAL_PER_QUESTION:  # an optional per-question input left out: None for every question
            if name in self._extra_features() and kwargs.get(name) is None and isinstance(predictions, (list, tuple)):
                kwargs[name] = [None] * len(predictions)
        return kwargs
