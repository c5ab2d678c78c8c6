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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rageval.registry import Registry, unknown_name

__all__ = [
    "Output",
    "DiagnosticSpec",
    "CATALOG",
    "FUNCTIONS",
    "SCORERS",
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

Direction = Literal["higher", "lower", "none"]
Family = Literal["answer", "retrieval", "attribution", "cost"]


@dataclass(frozen=True)
class Output:
    """One record metric a diagnostic writes, and which way is better."""

    key: str
    direction: Direction
    description: str = ""
    view: bool = False  # a secondary view of another output (e.g. ``_excl_abstain``): shown, not contrasted by default


@dataclass(frozen=True)
class DiagnosticSpec:
    """Everything about one diagnostic (see the module doc)."""

    name: str
    version: str
    summary: str
    family: Family
    function: str  # "module:function" of the pure function
    outputs: tuple[Output, ...]  # the record metrics it writes
    needs: tuple[str, ...] = ()  # gold fields; applicable when an example has any of them ("auto")
    scorer: str | None = None  # "module:function" (inputs, options) -> result dict with per_question
    engine_parts: tuple[str, ...] = ()  # scored by the attribution engine, with these parts
    module_keys: tuple[Output, ...] = ()  # further aggregates its evaluate module returns (and owns)
    extra_options: tuple[str, ...] = field(default=())  # keyword options of its evaluate module

    @property
    def direction(self) -> Direction:
        """The direction of the headline output (the first)."""
        return self.outputs[0].direction

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.outputs)

    @property
    def also(self) -> tuple[str, ...]:
        """The other keys (record outputs and module aggregates) besides the name."""
        return tuple(k for k in dict.fromkeys(self.keys + tuple(o.key for o in self.module_keys)) if k != self.name)

    @property
    def uses_judge(self) -> bool:
        return bool(self.engine_parts)


def _o(key: str, direction: Direction = "higher", description: str = "") -> Output:
    return Output(key, direction, description)


def _excl(key: str, direction: Direction) -> Output:
    return Output(f"{key}_excl_abstain", direction, f"{key} with judge abstentions left out", view=True)


_ABSTENTIONS = Output(
    "judge_abstentions",
    "none",
    "judge decisions that abstained (no clean yes/no) among those made to score this record: a run counts every "
    "attribution part it scored together; an evaluate module counts those of its own parts",
)
#: verification's judge inputs (its three modes and the recovery of the cited units), and the truncated ones
_JUDGE_INPUTS = (
    Output("judge_inputs", "none", "distinct (premise, hypothesis) pairs verification asked the judge"),
    Output("judge_inputs_truncated", "none", "of those, the pairs the judge truncated (its token limit, e.g. 512)"),
    Output(
        "judge_inputs_windowed",
        "none",
        "of those, the pairs a windowed judge read in two or more overlapping windows (None: windowing off)",
    ),
)
_MODES = ("summary_checked", "declared_span", "recovered_source")
_ATTR = "rageval.diagnostics.attribution"

_SPECS = [
    DiagnosticSpec(
        "answer_in_context",
        "1.1.0",
        "Gold answer survives as a contiguous token span inside one unit of the packed context.",
        "answer",
        "rageval.diagnostics.answer:answer_in_context",
        (_o("answer_in_context"),),
        needs=("answers", "qa_pairs"),
        scorer="rageval.diagnostics.answer:score_answer_in_context",
    ),
    DiagnosticSpec(
        "str_em",
        "1.1.0",
        "String EM: ALCE's share of ASQA qa_pairs found in the answer; QASPER: an annotator's short answers all found.",
        "answer",
        "rageval.diagnostics.answer:str_em",
        (_o("str_em"), _o("str_hit")),
        needs=("qa_pairs", "annotator_answers"),
        scorer="rageval.diagnostics.answer:score_str_em",
        extra_options=("alce_compat", "convention"),
    ),
    DiagnosticSpec(
        "answer_f1",
        "1.1.0",
        "Token F1 of the answer, max over gold aliases (HotpotQA's script; QASPER's official scorer for QASPER).",
        "answer",
        "rageval.diagnostics.answer:answer_f1",
        (_o("answer_f1"), _o("answer_em")),
        needs=("answers", "reference"),
        scorer="rageval.diagnostics.answer:score_answer_f1",
        extra_options=("convention",),
    ),
    DiagnosticSpec(
        "retrieval_recall",
        "1.0.0",
        "Fraction of gold documents among the top-k retrieved.",
        "retrieval",
        "rageval.diagnostics.retrieval:retrieval_recall",
        (_o("retrieval_recall"), _o("all_gold")),
        needs=("gold_doc_ids",),
        scorer="rageval.diagnostics.retrieval:score_retrieval_recall",
        extra_options=("k",),
    ),
    DiagnosticSpec(
        "gold_coverage",
        "1.0.0",
        "Fraction of gold documents with at least one context unit declaring one of their sentences.",
        "retrieval",
        "rageval.diagnostics.coverage:gold_coverage",
        (_o("gold_coverage"),),
        needs=("gold_doc_ids",),
        scorer="rageval.diagnostics.coverage:score_gold_coverage",
        extra_options=("doc_of",),
    ),
    DiagnosticSpec(
        "emitted_precision",
        "1.1.0",
        "ALCE citation precision, premise = the unit text the reader saw.",
        "attribution",
        f"{_ATTR}:emitted_precision",
        (_o("emitted_precision"), _excl("emitted_precision", "higher"), _ABSTENTIONS),
        engine_parts=("emitted",),
    ),
    DiagnosticSpec(
        "emitted_recall",
        "1.1.0",
        "ALCE citation recall, premise = the unit text the reader saw.",
        "attribution",
        f"{_ATTR}:emitted_recall",
        (_o("emitted_recall"), _excl("emitted_recall", "higher"), _ABSTENTIONS),
        engine_parts=("emitted",),
    ),
    DiagnosticSpec(
        "grounded_precision",
        "2.0.0",
        "Citation precision against the cited units' declared, else recovered, source snippets.",
        "attribution",
        f"{_ATTR}:grounded_precision",
        (_o("grounded_precision"), _excl("grounded_precision", "higher"), _ABSTENTIONS),
        engine_parts=("emitted", "grounded"),
        module_keys=(_o("emitted_minus_grounded_precision", "none"),),
    ),
    DiagnosticSpec(
        "grounded_recall",
        "2.0.0",
        "Citation recall against the cited units' declared, else recovered, source snippets.",
        "attribution",
        f"{_ATTR}:grounded_recall",
        (_o("grounded_recall"), _excl("grounded_recall", "higher"), _ABSTENTIONS),
        engine_parts=("emitted", "grounded"),
        module_keys=(_o("emitted_minus_grounded_recall", "none"),),
    ),
    DiagnosticSpec(
        "re_attributability",
        "1.2.0",
        "Share of units without declared provenance for which a BM25 candidate source snippet passes the judge.",
        "attribution",
        f"{_ATTR}:re_attributability",
        (_o("re_attributability"), _excl("re_attributability", "higher"), _ABSTENTIONS),
        engine_parts=("re_attributability",),
    ),
    DiagnosticSpec(
        "verification",
        "2.1.0",
        "Unsupported-claim rate in three modes: summary-checked, declared-span, recovered-source (aggregate).",
        "attribution",
        "rageval.diagnostics.verification:verification",
        tuple(_o(f"unsupported_{m}", "lower") for m in _MODES)
        + tuple(_excl(f"unsupported_{m}", "lower") for m in _MODES)
        + tuple(
            _o(f"verifier_tokens_{m}", "none", "verifier input tokens before the judge's truncation") for m in _MODES
        )
        + tuple(
            _o(f"verifier_tokens_{m}_after_truncation", "none", "verifier input tokens the judge read") for m in _MODES
        )
        + (_ABSTENTIONS,)
        + _JUDGE_INPUTS,
        engine_parts=("verification",),
        module_keys=(_o("verification", "lower"),),
    ),
    DiagnosticSpec(
        "compression",
        "3.1.0",
        "Achieved compression ratio (context / retrieved tokens) with the verification cost roll-up.",
        "cost",
        "rageval.diagnostics.compression:compression",
        (_o("reader_input_tokens", "none"),)
        + tuple(_o(f"verification_cost_{m}", "none") for m in _MODES)
        + (_o("recovery_candidates_scored", "none"),)
        + _JUDGE_INPUTS,
        engine_parts=("verification",),
        module_keys=(_o("compression", "none"), _o("achieved_ratio", "none"), _o("achieved_tokens", "none")),
    ),
    DiagnosticSpec(
        "evidence_f1",
        "2.0.0",
        "QASPER evidence-F1 of the paragraphs declared by the cited units, max over annotators.",
        "attribution",
        "rageval.diagnostics.evidence:evidence_f1",
        (_o("evidence_f1"),),
        needs=("evidence",),
        scorer="rageval.diagnostics.evidence:score_evidence_f1",
        extra_options=("references", "paragraph_of", "max_citations", "alce_compat"),
    ),
]

#: name -> spec, in catalog order (the order of ``diagnostics: auto`` and of the report)
CATALOG: dict[str, DiagnosticSpec] = {s.name: s for s in _SPECS}

#: name -> pure function, imported on first use
FUNCTIONS = Registry("diagnostic")
#: name -> scorer (inputs, options) -> result, for diagnostics scored outside the attribution engine
SCORERS = Registry("scorer")
for _s in _SPECS:
    FUNCTIONS.register(_s.name, _s.function)
    if _s.scorer is not None:
        SCORERS.register(_s.name, _s.scorer)

#: per-question values the report derives from two outputs: name -> (minuend, subtrahend, direction)
DERIVED: dict[str, tuple[str, str, Direction]] = {
    "gap_precision": ("emitted_precision", "grounded_precision", "none"),
    "gap_recall": ("emitted_recall", "grounded_recall", "none"),
}


def names() -> list[str]:
    """Diagnostic names, sorted."""
    return sorted(CATALOG)


def unknown_name_error(name: Any, where: str = "diagnostic") -> ValueError:
    return unknown_name(where, name, names())


def spec(name: str) -> DiagnosticSpec:
    if name not in CATALOG:
        raise unknown_name_error(name)
    return CATALOG[name]


def get(name: str) -> Callable:
    """The pure function of diagnostic ``name``."""
    spec(name)
    return FUNCTIONS.get(name)


def _outputs() -> dict[str, tuple[str, Direction]]:
    _VIEWS.clear()
    _VIEWS.update(o.key for s in CATALOG.values() for o in s.outputs + s.module_keys if o.view)
    table: dict[str, tuple[str, Direction]] = {}
    for s in CATALOG.values():
        for o in s.outputs + s.module_keys:
            if o.key in table and table[o.key][1] != o.direction:
                raise ValueError(
                    f"catalog: {s.name} declares {o.key!r} as {o.direction!r}, {table[o.key][0]} as {table[o.key][1]!r}"
                )
            table.setdefault(o.key, (s.name, o.direction))
    return table


_VIEWS: set[str] = set()
_OUTPUTS = _outputs()


def is_view(key: str) -> bool:
    """True for a secondary view of another output (e.g. ``*_excl_abstain``): reported beside it, but not
    in the default contrast family, so it neither doubles the Holm family nor the plots."""
    return key in _VIEWS


def contrasted_by_default(key: str) -> bool:
    """A metric enters the default contrasts (and the frontier plots) when it has a direction and is no view."""
    return direction_of(key) != "none" and not is_view(key)


def register(new: DiagnosticSpec) -> None:
    """Add a diagnostic at run time (a plugin, or a test): the same as one more entry in ``_SPECS``.

    Its targets are imported lazily like the built-in ones; an existing name is an error.
    """
    global _OUTPUTS
    if new.name in CATALOG:
        raise ValueError(f"diagnostic {new.name!r} is already in the catalog")
    if new.scorer is None and not new.engine_parts:
        raise ValueError(f"diagnostic {new.name!r} needs a scorer (or engine_parts) to be scored in a suite")
    CATALOG[new.name] = new
    try:
        _OUTPUTS = _outputs()
    except ValueError:
        del CATALOG[new.name]
        raise
    FUNCTIONS.register(new.name, new.function)
    if new.scorer is not None:
        SCORERS.register(new.name, new.scorer)


def unregister(name: str) -> None:
    """Remove a diagnostic added with :func:`register` (built-in entries stay)."""
    global _OUTPUTS
    if name in {s.name for s in _SPECS}:
        raise ValueError(f"{name!r} is a built-in diagnostic")
    CATALOG.pop(name, None)
    FUNCTIONS.unregister(name)
    SCORERS.unregister(name)
    _OUTPUTS = _outputs()


def direction_of(key: str) -> Direction:
    """``"higher"``, ``"lower"`` or ``"none"`` for a record metric, module key or derived gap.

    Unknown keys have no direction (they are never guessed from their name).

    >>> direction_of("grounded_precision"), direction_of("unsupported_declared_span"), direction_of("reader_tokens")
    ('higher', 'lower', 'none')
    >>> direction_of("emitted_minus_grounded_precision"), direction_of("gap_precision")
    ('none', 'none')
    """
    if key in DERIVED:
        return DERIVED[key][2]
    return _OUTPUTS.get(key, ("", "none"))[1]


def output_owner(key: str) -> str | None:
    """The diagnostic whose spec declares ``key`` (first in catalog order), else None."""
    return _OUTPUTS.get(key, (None, "none"))[0]


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
