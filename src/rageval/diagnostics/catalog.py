"""The catalog: one spec per diagnostic, and the only list of diagnostics there is.

A :class:`DiagnosticSpec` says everything the rest of rageval needs to know
about a diagnostic: its name and version, the record metrics it writes
(:class:`Output`, each with its direction), which gold fields make it
applicable, its pure function, and its *scorer* — how to build the pure
function's inputs from scored records (:class:`~rageval.diagnostics.inputs.ScoringInput`).
The suite runner, ``rageval rescore``, the report (columns, directions, plots,
contrasts), the evaluate modules and ``rageval metrics`` all loop over
:data:`CATALOG`; nothing re-lists diagnostics by hand.

The catalog is static data: reading it imports no metric code.  The targets are
``"module:function"`` strings resolved lazily through :class:`rageval.registry.Registry`.
Each spec's ``version`` is bumped whenever a score can change; the evaluate
module reports the same number (a common test checks they agree).

Adding a diagnostic (docs/architecture.md#add-a-diagnostic): its file with the
pure function and a scorer, one :class:`DiagnosticSpec` below, and its
``metrics/<name>/`` evaluate module with a card.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from rageval.diagnostics.specs import COUNT, RATE, Bounds, DiagnosticSpec, Direction, Output, record_bounds
from rageval.registry import NoMeta, Registry, unknown_name

__all__ = [
    "Output",
    "DiagnosticSpec",
    "CATALOG",
    "Catalog",
    "DERIVED",
    "get",
    "spec",
    "names",
    "unknown_name_error",
    "direction_of",
    "output_owner",
    "applicable",
    "engine_parts",
    "register",
    "unregister",
    "is_view",
    "contrasted_by_default",
]


def _o(key: str, direction: Direction = "higher", description: str = "", bounds: Bounds | None = RATE) -> Output:
    return Output(key, direction, description, bounds=bounds)


def _n(key: str, description: str = "") -> Output:
    """A count (direction none, bounds [0, inf))."""
    return Output(key, "none", description, bounds=COUNT)


def _agg(key: str, direction: Direction = "none") -> Output:
    """An aggregate an evaluate module returns (``module_keys``): never a record value, no bounds declared."""
    return Output(key, direction)


def _excl(key: str, direction: Direction) -> Output:
    return Output(f"{key}_excl_abstain", direction, f"{key} with judge abstentions left out", view=True, bounds=RATE)


_ABSTENTIONS = _n(
    "judge_abstentions",
    "judge decisions that abstained (no clean yes/no) among those made to score this record: a run counts every "
    "attribution part it scored together; an evaluate module counts those of its own parts",
)
#: verification's judge inputs (its three modes and the recovery of the cited units), and the truncated ones
_JUDGE_INPUTS = (
    _n("judge_inputs", "distinct (premise, hypothesis) pairs verification asked the judge"),
    _n("judge_inputs_truncated", "of those, the pairs the judge truncated (its token limit, e.g. 512)"),
    _n(
        "judge_inputs_windowed",
        "of those, the pairs a windowed judge read in two or more overlapping windows (None: windowing off)",
    ),
)
_MODES = ("summary_checked", "declared_span", "recovered_source")
_ATTR = "rageval.diagnostics.attribution"

_SPECS = [
    DiagnosticSpec(
        name="answer_in_context",
        version="2.0.0",
        summary="Gold answer survives as a contiguous token span of the packed context (the packing paper's rule).",
        family="answer",
        function="rageval.diagnostics.answer:answer_in_context",
        outputs=(
            _o("answer_in_context"),
            Output(
                "answer_in_context_unit",
                "higher",
                "answer_in_context with a match inside one unit (rageval's answer_in_context before 2.0.0)",
                view=True,
                bounds=RATE,
            ),
        ),
        needs=("answers", "qa_pairs"),
        scorer="rageval.diagnostics.answer:score_answer_in_context",
    ),
    DiagnosticSpec(
        name="str_em",
        version="1.2.0",
        summary="String EM: ALCE's share of ASQA qa_pairs found in the answer; QASPER: an annotator's short answers all found.",
        family="answer",
        function="rageval.diagnostics.answer:str_em",
        outputs=(_o("str_em"), _o("str_hit")),
        needs=("qa_pairs", "annotator_answers"),
        scorer="rageval.diagnostics.answer:score_str_em",
    ),
    DiagnosticSpec(
        name="answer_f1",
        version="1.2.0",
        summary="Token F1 of the answer, max over gold aliases (HotpotQA's script; QASPER's official scorer for QASPER).",
        family="answer",
        function="rageval.diagnostics.answer:answer_f1",
        outputs=(_o("answer_f1"), _o("answer_em")),
        needs=("answers", "reference"),
        scorer="rageval.diagnostics.answer:score_answer_f1",
    ),
    DiagnosticSpec(
        name="qampari_f1",
        version="1.0.0",
        summary="ALCE's QAMPARI list scores: precision, recall (and top-5), F1 (and top-5) of the comma-split answer.",
        family="answer",
        function="rageval.diagnostics.alce:qampari_f1",
        outputs=tuple(_o(f"qampari_{k}") for k in ("f1", "precision", "recall", "recall_top5", "f1_top5"))
        + (_n("qampari_num_preds", "items in the predicted list"),),
        needs=("answer_lists",),
        scorer="rageval.diagnostics.alce:score_qampari_f1",
    ),
    DiagnosticSpec(
        name="rouge_lsum",
        version="1.1.0",
        summary="ALCE's ROUGE-Lsum against the long reference (best of them), and the answer's length in words.",
        family="answer",
        function="rageval.diagnostics.alce:rouge_lsum",
        outputs=(_o("rouge_lsum"), _n("answer_length", "the answer's words (ALCE's length)")),
        needs=("reference", "answer_lists", "claims"),
        scorer="rageval.diagnostics.alce:score_rouge_lsum",
    ),
    DiagnosticSpec(
        name="claims_recall",
        version="1.0.0",
        summary="ALCE's ELI5 claims recall: share of the gold claims the answer entails, through the run's judge.",
        family="answer",
        function="rageval.diagnostics.alce:claims_recall",
        outputs=(
            _o("claims_recall"),
            _excl("claims_recall", "higher"),
            _n("claims_abstentions", "claims the judge abstained on (counted as not entailed)"),
        ),
        needs=("claims",),
        scorer="rageval.diagnostics.alce:score_claims_recall",
        judged=True,
    ),
    DiagnosticSpec(
        name="retrieval_recall",
        version="1.1.0",
        summary="Fraction of gold documents among the top-k retrieved.",
        family="retrieval",
        function="rageval.diagnostics.retrieval_recall:retrieval_recall",
        outputs=(_o("retrieval_recall"), _o("all_gold")),
        needs=("gold_doc_ids",),
        scorer="rageval.diagnostics.retrieval_recall:score_retrieval_recall",
    ),
    DiagnosticSpec(
        name="gold_coverage",
        version="1.1.0",
        summary="Fraction of gold documents with at least one context unit declaring one of their sentences.",
        family="retrieval",
        function="rageval.diagnostics.coverage:gold_coverage",
        outputs=(_o("gold_coverage"),),
        needs=("gold_doc_ids",),
        scorer="rageval.diagnostics.coverage:score_gold_coverage",
    ),
    DiagnosticSpec(
        name="emitted_precision",
        version="1.3.0",
        summary="ALCE citation precision, premise = the unit text the reader saw.",
        family="attribution",
        function=f"{_ATTR}:emitted_precision",
        outputs=(_o("emitted_precision"), _excl("emitted_precision", "higher"), _ABSTENTIONS),
        engine_parts=("emitted",),
    ),
    DiagnosticSpec(
        name="emitted_recall",
        version="1.3.0",
        summary="ALCE citation recall, premise = the unit text the reader saw.",
        family="attribution",
        function=f"{_ATTR}:emitted_recall",
        outputs=(_o("emitted_recall"), _excl("emitted_recall", "higher"), _ABSTENTIONS),
        engine_parts=("emitted",),
    ),
    DiagnosticSpec(
        name="grounded_precision",
        version="3.2.0",
        summary="Citation precision against the cited units' declared, else recovered, source snippets.",
        family="attribution",
        function=f"{_ATTR}:grounded_precision",
        outputs=(_o("grounded_precision"), _excl("grounded_precision", "higher"), _ABSTENTIONS),
        engine_parts=("emitted", "grounded"),
        module_keys=(_agg("emitted_minus_grounded_precision"),),
    ),
    DiagnosticSpec(
        name="grounded_recall",
        version="3.2.0",
        summary="Citation recall against the cited units' declared, else recovered, source snippets.",
        family="attribution",
        function=f"{_ATTR}:grounded_recall",
        outputs=(_o("grounded_recall"), _excl("grounded_recall", "higher"), _ABSTENTIONS),
        engine_parts=("emitted", "grounded"),
        module_keys=(_agg("emitted_minus_grounded_recall"),),
    ),
    DiagnosticSpec(
        name="re_attributability",
        version="1.4.0",
        summary="Share of units without declared provenance for which a BM25 candidate source snippet passes the judge.",
        family="attribution",
        function=f"{_ATTR}:re_attributability",
        outputs=(_o("re_attributability"), _excl("re_attributability", "higher"), _ABSTENTIONS),
        engine_parts=("re_attributability",),
        record_extra="rageval.diagnostics.attribution.sweep:record_sweeps",
    ),
    DiagnosticSpec(
        name="verification",
        version="2.3.0",
        summary="Unsupported-claim rate in three modes: summary-checked, declared-span, recovered-source (aggregate).",
        family="attribution",
        function="rageval.diagnostics.verification:verification",
        outputs=tuple(_o(f"unsupported_{m}", "lower") for m in _MODES)
        + tuple(_excl(f"unsupported_{m}", "lower") for m in _MODES)
        + tuple(_n(f"verifier_tokens_{m}", "verifier input tokens before the judge's truncation") for m in _MODES)
        + tuple(_n(f"verifier_tokens_{m}_after_truncation", "verifier input tokens the judge read") for m in _MODES)
        + (_ABSTENTIONS,)
        + _JUDGE_INPUTS,
        engine_parts=("verification",),
        module_keys=(_agg("verification", "lower"),),
    ),
    DiagnosticSpec(
        name="claim_support",
        version="1.2.0",
        summary="Citation-free claim support: share of the answer's claims some unit the reader saw (emitted), "
        "or its source snippets (grounded), entails.",
        family="attribution",
        function="rageval.diagnostics.claim_support:claim_support",
        outputs=tuple(_o(f"claim_support_{m}") for m in ("emitted", "grounded"))
        + tuple(_excl(f"claim_support_{m}", "higher") for m in ("emitted", "grounded"))
        + (
            _n("claim_support_claims", "the claims checked: the file's own, else the answer's sentences"),
            _o(
                "claim_support_claims_given",
                "none",
                "1: the claims are the file's own (e.g. RAGChecker's), 0: sentences",
            ),
            _n("claim_support_structural_rejections", "claims unsupported without a judge call (no premise)"),
            _n("claim_support_abstentions", "claims judged abstained (no premise entails, one abstained)"),
            _n("claim_support_inputs_truncated", "distinct pairs asked that the judge truncated"),
        )
        + tuple(
            _n(f"claim_support_verifier_tokens_{m}", "verifier input tokens before the judge's truncation")
            for m in ("emitted", "grounded")
        )
        + tuple(
            _n(f"claim_support_verifier_tokens_{m}_after_truncation", "verifier input tokens the judge read")
            for m in ("emitted", "grounded")
        ),
        scorer="rageval.diagnostics.claim_support:score_claim_support",
        judged=True,
        module_keys=(_agg("claim_support", "higher"), _agg("claim_support_gap")),
    ),
    DiagnosticSpec(
        name="compression",
        version="3.2.0",
        summary="Achieved compression ratio (context / retrieved tokens) with the verification cost roll-up.",
        family="cost",
        function="rageval.diagnostics.compression:compression",
        outputs=(_n("reader_input_tokens"),)
        + tuple(_n(f"verification_cost_{m}") for m in _MODES)
        + (_n("recovery_candidates_scored"),)
        + _JUDGE_INPUTS,
        engine_parts=("verification",),
        record_values="rageval.diagnostics.compression:record_values",
        module_keys=(_agg("compression"), _agg("achieved_ratio"), _agg("achieved_tokens")),
    ),
    DiagnosticSpec(
        name="evidence_f1",
        version="2.2.0",
        summary="QASPER evidence-F1 of the paragraphs declared by the cited units, max over annotators.",
        family="attribution",
        function="rageval.diagnostics.evidence:evidence_f1",
        outputs=(_o("evidence_f1"),),
        needs=("evidence",),
        scorer="rageval.diagnostics.evidence:score_evidence_f1",
    ),
    # `rageval new-metric NAME` adds its entry above this line
]

#: per-question values the report derives from two outputs: name -> (minuend, subtrahend, direction)
DERIVED: dict[str, tuple[str, str, Direction]] = {
    "gap_precision": ("emitted_precision", "grounded_precision", "none"),
    "gap_recall": ("emitted_recall", "grounded_recall", "none"),
    "gap_claim_support": ("claim_support_emitted", "claim_support_grounded", "none"),
}


class Catalog(Mapping[str, DiagnosticSpec]):
    """The diagnostics: name -> :class:`DiagnosticSpec`, in catalog order (the order of ``diagnostics: auto``
    and of the report), with what is derived from the specs (each output's direction and owner, the views)
    and the lazy registries of their targets.  A mapping, so ``CATALOG[name]``, ``name in CATALOG`` and
    ``CATALOG.values()`` read it; :meth:`add` and :meth:`remove` change it, and everything derived with it.
    """

    def __init__(self, specs: Iterable[DiagnosticSpec] = ()):
        self._specs: dict[str, DiagnosticSpec] = {}
        self._builtin: frozenset[str] = frozenset()
        self._outputs: dict[str, tuple[str, Direction]] = {}
        self._views: frozenset[str] = frozenset()
        self._bounds: dict[str, Bounds] = {}
        #: name -> pure function, imported on first use
        self.functions: Registry[Callable[..., Any], NoMeta] = Registry("diagnostic")
        #: name -> scorer ``(inputs, options) -> result``, for diagnostics scored outside the attribution engine
        self.scorers: Registry[Callable[..., Any], NoMeta] = Registry("scorer")
        #: name -> ``(row, input) -> record values``, for engine diagnostics that compute their own
        self.record_values: Registry[Callable[..., dict[str, Any]], NoMeta] = Registry("record values")
        #: name -> ``(inputs, options, judge) -> {index: extra}``
        self.record_extras: Registry[Callable[..., dict[int, dict[str, Any]]], NoMeta] = Registry("record extra")
        for s in specs:
            self.add(s)
        self._builtin = frozenset(self._specs)

    # -- the mapping ----------------------------------------------------------------------------
    def __getitem__(self, name: str) -> DiagnosticSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"Catalog({', '.join(self._specs)})"

    # -- changing it ----------------------------------------------------------------------------
    def add(self, new: DiagnosticSpec) -> None:
        """Add a diagnostic (a plugin, or a test): the same as one more built-in entry.

        Its targets are imported lazily like the built-in ones; an existing name, a spec that cannot be
        scored, or an output declared with another direction than elsewhere is an error (nothing changes).
        """
        if new.name in self._specs:
            raise ValueError(f"diagnostic {new.name!r} is already in the catalog")
        if new.scorer is None and not new.engine_parts:
            raise ValueError(f"diagnostic {new.name!r} needs a scorer (or engine_parts) to be scored in a suite")
        if not new.engine_parts and (new.record_values or new.record_extra):
            raise ValueError(f"diagnostic {new.name!r}: record_values/record_extra apply to engine diagnostics")
        outputs, views = _derived([*self._specs.values(), new])
        self._specs[new.name] = new
        self._outputs, self._views, self._bounds = outputs, views, record_bounds(self._specs.values())
        self.functions.register(new.name, new.function)
        for registry, target in (
            (self.scorers, new.scorer),
            (self.record_values, new.record_values),
            (self.record_extras, new.record_extra),
        ):
            if target is not None:
                registry.register(new.name, target)

    def remove(self, name: str) -> None:
        """Remove a diagnostic added with :meth:`add` (built-in entries stay)."""
        if name in self._builtin:
            raise ValueError(f"{name!r} is a built-in diagnostic")
        self._specs.pop(name, None)
        for registry in (self.functions, self.scorers, self.record_values, self.record_extras):
            registry.unregister(name)
        self._outputs, self._views = _derived(self._specs.values())
        self._bounds = record_bounds(self._specs.values())

    # -- reading it -----------------------------------------------------------------------------
    def spec(self, name: str) -> DiagnosticSpec:
        """The spec of ``name`` (unknown names raise with a did-you-mean hint)."""
        if name not in self._specs:
            raise unknown_name_error(name)
        return self._specs[name]

    def direction(self, key: str) -> Direction:
        """The direction of a record metric, module key or derived gap (unknown keys: ``"none"``)."""
        if key in DERIVED:
            return DERIVED[key][2]
        return self._outputs.get(key, ("", "none"))[1]

    def owner(self, key: str) -> str | None:
        """The diagnostic whose spec declares ``key`` (first in catalog order), else None."""
        return self._outputs.get(key, (None, "none"))[0]

    def is_view(self, key: str) -> bool:
        return key in self._views

    def bounds(self) -> Mapping[str, Bounds]:
        """Each record output's declared bounds (:func:`~rageval.diagnostics.specs.record_bounds`; not a copy)."""
        return self._bounds


def _derived(specs: Iterable[DiagnosticSpec]) -> tuple[dict[str, tuple[str, Direction]], frozenset[str]]:
    """Each output key's (owner, direction), and the keys that are views; a conflicting direction raises."""
    table: dict[str, tuple[str, Direction]] = {}
    views: set[str] = set()
    for s in specs:
        for o in s.outputs + s.module_keys:
            if o.key in table and table[o.key][1] != o.direction:
                raise ValueError(
                    f"catalog: {s.name} declares {o.key!r} as {o.direction!r}, {table[o.key][0]} as {table[o.key][1]!r}"
                )
            table.setdefault(o.key, (s.name, o.direction))
            if o.view:
                views.add(o.key)
    return table, frozenset(views)


#: The catalog of the built-in diagnostics (and any added at run time).
CATALOG = Catalog(_SPECS)
del _SPECS

#: Add a diagnostic at run time (:meth:`Catalog.add`), and remove it again (:meth:`Catalog.remove`).
register = CATALOG.add
unregister = CATALOG.remove


def names() -> list[str]:
    """Diagnostic names, sorted."""
    return sorted(CATALOG)


def unknown_name_error(name: Any, where: str = "diagnostic") -> ValueError:
    return unknown_name(where, name, names())


def spec(name: str) -> DiagnosticSpec:
    """The spec of diagnostic ``name`` (unknown names raise with a hint)."""
    return CATALOG.spec(name)


def get(name: str) -> Callable:
    """The pure function of diagnostic ``name``."""
    spec(name)
    return CATALOG.functions.get(name)


def is_view(key: str) -> bool:
    """True for a secondary view of another output (e.g. ``*_excl_abstain``): reported beside it, but not
    in the default contrast family, so it neither doubles the Holm family nor the plots."""
    return CATALOG.is_view(key)


def contrasted_by_default(key: str) -> bool:
    """A metric enters the default contrasts (and the frontier plots) when it has a direction and is no view."""
    return direction_of(key) != "none" and not is_view(key)


def direction_of(key: str) -> Direction:
    """``"higher"``, ``"lower"`` or ``"none"`` for a record metric, module key or derived gap.

    Unknown keys have no direction (they are never guessed from their name).

    >>> direction_of("grounded_precision"), direction_of("unsupported_declared_span"), direction_of("reader_tokens")
    ('higher', 'lower', 'none')
    >>> direction_of("emitted_minus_grounded_precision"), direction_of("gap_precision")
    ('none', 'none')
    """
    return CATALOG.direction(key)


def output_owner(key: str) -> str | None:
    """The diagnostic whose spec declares ``key`` (first in catalog order), else None."""
    return CATALOG.owner(key)


def applicable(diagnostics: Any, has: Callable[[str], bool]) -> list[str]:
    """The diagnostics to run: ``"auto"`` (catalog order, those whose gold ``has`` reports), else the list."""
    if diagnostics != "auto":
        for d in diagnostics:
            spec(d)
        return list(diagnostics)
    return [s.name for s in CATALOG.values() if not s.needs or any(has(n) for n in s.needs)]


def engine_parts(diagnostics: Any) -> tuple[str, ...]:
    """The attribution engine parts the selected diagnostics need, in engine order."""
    from rageval.diagnostics.attribution.engine import PARTS

    wanted = {p for d in diagnostics for p in CATALOG[d].engine_parts}
    return tuple(p for p in PARTS if p in wanted)
