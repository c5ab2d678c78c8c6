"""The Compressor protocol, budgets, input validation and the shared packing helpers.

A compressor maps ``(question, source snippets, budget)`` to a
:class:`~rageval.types.Context` (the data model and the compressor contract are in
docs/design.md)::

    context = compressor.compress(question, snippets, budget, tokenizer=tok)

**Budget**: an ``int`` >= 1 is an absolute token count; a ``float``
in ``(0, 1]`` is a fraction of the retrieved tokens (the tokens of all the
question's snippets, counted with the suite's tokenizer); ``None`` is unbounded.
Zero, negative, ``bool``, ``NaN`` and floats above 1 are rejected with a
:class:`BudgetError` that says how to write the budget instead (the one budget
check, shared with the suite's ``budgets:``, is :mod:`rageval.budget`; its names
are re-exported here; examples there).

**Budget contract** (:data:`BudgetContract`, docs/compressors.md#the-budget-contract): each compressor
declares what it promises about the budget in ``budget_contract`` — a class attribute, which
``_check_params`` may set per instance where the promise depends on the parameters (``token_prune``):
``"exact"`` (the context fits the budget, else the run records ``budget_check``), ``"best_effort"`` (it
aims at the budget with a count it cannot make exact; an overshoot is recorded and counted, the record
stays ``ok``) or ``"none"`` (it does not read the budget).  A user's subclass declares its own; the
default is ``"exact"``.

**Defined outcomes for degenerate input** (never a crash mid-suite):

* no snippets -> an empty context (``units=()``, ``achieved_tokens=0``,
  ``retrieved_tokens=0``, ``achieved_ratio=None``);
* a budget smaller than every snippet -> packers return an empty context
  (the suite may then record ``budget_check``); nothing is ever truncated
  mid-sentence by a packer;
* snippets whose text has no tokens are never emitted;
* duplicate snippet ids, a non-string question, or a snippet that is neither a
  :class:`~rageval.types.SourceSnippet` nor a mapping with ``id``/``text`` ->
  :class:`SnippetError` / ``TypeError`` naming the offending index and value.

Token counts follow the one definition in :mod:`rageval.token_counts` (shared with
``Context.achieved_ratio`` and the ``compression`` diagnostic): a context's
``achieved_tokens`` is the sum over units of the token count of ``unit.text``, and
``retrieved_tokens`` the sum over all snippets of ``snippet.text``.  Titles count
in neither (they are metadata; the budget governs the evidence text, and the
reader's prompt overhead is the reader's business), so ``identity`` has a ratio
of exactly 1.0.

**The rendered context** (docs/compressors.md#budgets-in-the-readers-tokens): the reader sees the units joined
(:data:`~rageval.token_counts.UNIT_SEPARATOR`), and a sub-word tokenizer (a reader's GGUF tokenizer, a Hugging
Face one) counts that text as one, separators and joins included.  So the packers fit both the sum of their
units and that rendered count (:func:`~rageval.token_counts.budget_tokens_of`): :func:`pack_guard` recounts the
built units as rendered; a compressor whose units are single sentences (``sentence_units = True``: ``mmr``,
``submodular``, ``extractive``, ``ecr``) packs each sentence at its cost plus the separator's tokens into the
budget plus one separator (n units carry n - 1 separators), then drops trailing units should the rendered
count still exceed the budget.  With ``regex`` and ``whitespace`` the separator costs nothing and the counts
are the sums, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol, get_args, runtime_checkable

from rageval.budget import Budget, BudgetError, check_budget, resolve_budget  # re-exported: the one budget check
from rageval.errors import ModelUnavailable  # re-exported: one class for every model
from rageval.registry import did_you_mean
from rageval.text.tokenize import Tokenizer, get_tokenizer
from rageval.token_counts import budget_tokens_of, count_tokens, evidence_token_counts, separator_tokens
from rageval.types import Context, SourceSnippet, Unit, join_texts

__all__ = [
    "Compressor",
    "BaseCompressor",
    "CompressorError",
    "BudgetError",
    "SnippetError",
    "CompressorConfigError",
    "ModelUnavailable",
    "Budget",
    "BudgetContract",
    "BUDGET_CONTRACTS",
    "budget_contract",
    "resolve_budget",
    "validate_inputs",
    "count_tokens",
    "source_order",
    "make_context",
    "fit_rendered",
    "pack_guard",
]


#: What a compressor promises about its budget (docs/compressors.md#the-budget-contract):
#: ``"exact"``: the context fits it, and one over it is ``budget_check``; ``"best_effort"``: it aims at it with a
#: count it cannot make exact (its own tokenizer, a model's generation length), and an overshoot is recorded and
#: counted, never ``budget_check``; ``"none"``: it does not read the budget (recorded, never enforced).
BudgetContract = Literal["exact", "best_effort", "none"]
BUDGET_CONTRACTS: tuple[str, ...] = get_args(BudgetContract)


def budget_contract(compressor: Any) -> str:
    """The contract ``compressor`` declares (its ``budget_contract``); ``"exact"`` for one that declares none.

    >>> from rageval.compressors import get
    >>> budget_contract(get("naive")), budget_contract(get("token_prune", backend="llmlingua2",
    ...     model="llmlingua-2-xlm-roberta-large")), budget_contract(object())
    ('exact', 'best_effort', 'exact')
    """
    return getattr(compressor, "budget_contract", "exact")


class CompressorError(ValueError):
    """Base class of the compressor errors that come from user input (a bad budget: :class:`BudgetError`,
    a ValueError of :mod:`rageval.budget`)."""


class SnippetError(CompressorError):
    """Malformed snippets (duplicate ids, wrong types)."""


class CompressorConfigError(CompressorError):
    """Unknown compressor name, unknown parameter, or a parameter value out of range."""


@runtime_checkable
class Compressor(Protocol):
    """Anything with ``name``, ``needs_model`` and ``compress(...) -> Context``."""

    name: str
    needs_model: bool

    def compress(
        self,
        question: str,
        snippets: Sequence[SourceSnippet],
        budget: float | None = None,
        *,
        tokenizer: Tokenizer | str | None = None,
    ) -> Context: ...


# --------------------------------------------------------------------------- inputs


def validate_inputs(question: Any, snippets: Any) -> tuple[str, list[SourceSnippet]]:
    """Check types and duplicate ids; mappings are converted with ``SourceSnippet.from_dict``."""
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}: {question!r:.80}")
    if isinstance(snippets, (str, bytes, Mapping)) or not isinstance(snippets, Iterable):
        raise TypeError(
            f"snippets must be a list of SourceSnippet (or dicts with id/text/doc_id), got {type(snippets).__name__}"
        )
    out: list[SourceSnippet] = []
    seen: dict[str, int] = {}
    for i, s in enumerate(snippets):
        if isinstance(s, Mapping):
            try:
                s = SourceSnippet.from_dict(s)
            except KeyError as e:
                raise SnippetError(
                    f"snippets[{i}] lacks the key {e.args[0]!r}: give at least 'id' and 'text'"
                ) from None
        elif not isinstance(s, SourceSnippet):
            raise TypeError(
                f"snippets[{i}] must be a SourceSnippet or a dict with id/text, got {type(s).__name__}: {s!r:.80}"
            )
        if s.id in seen:
            raise SnippetError(
                f"duplicate snippet id {s.id!r} at snippets[{seen[s.id]}] and snippets[{i}]: "
                "snippet ids must be unique within a question (e.g. 'd3.s2' = document 3, sentence 2)"
            )
        seen[s.id] = i
        out.append(s)
    return question, out


def source_order(snippets: Sequence[SourceSnippet], indices: Iterable[int]) -> list[int]:
    """Indices sorted in source order: document rank, then document (first appearance), then position.

    Documents that share a rank (e.g. snippets given without ``doc_rank``) are
    never interleaved.
    """
    first: dict[str, int] = {}
    for k, s in enumerate(snippets):
        first.setdefault(s.doc_id, k)
    return sorted(indices, key=lambda i: (snippets[i].doc_rank, first[snippets[i].doc_id], snippets[i].position, i))


def make_context(
    units: Sequence[Unit],
    *,
    tokenizer: Tokenizer,
    retrieved_tokens: int,
    budget: float | None,
    budget_tokens: int | None,
) -> Context:
    """The Context of ``units``, its achieved tokens counted by the one definition (:mod:`rageval.token_counts`)."""
    return Context.measure(
        units, tokenizer=tokenizer, retrieved_tokens=retrieved_tokens, budget_tokens=budget_tokens, budget=budget
    )


def join_sentences(texts: Sequence[str]) -> str:
    """How a unit joins snippet texts: :func:`rageval.types.join_texts` (grounded premises write them the same way)."""
    return join_texts(texts)


def sentence_unit(s: SourceSnippet) -> Unit:
    """One sentence (its text as a unit joins it, i.e. stripped), declaring its own id."""
    return Unit(join_texts([s.text]), source_ids=(s.id,), title=s.title)


def group_unit(members: Sequence[SourceSnippet]) -> Unit:
    """Sentences of one document joined with a space, declaring exactly those ids."""
    return Unit(
        join_sentences([m.text for m in members]), source_ids=tuple(m.id for m in members), title=members[0].title
    )


def pack_guard(
    steps: list[list[int]],
    build: Callable[[list[int]], list[Unit]],
    tokenizer: Tokenizer,
    budget_tokens: int | None,
) -> list[Unit]:
    """Build units from the selection ``steps`` (snippet indices added per step) and enforce the budget.

    Packers count the cost of a step as the sum of its snippets' token counts.
    With a sub-word tokenizer the count of joined text can differ from that sum,
    so the built units are recounted — their sum and the context as the prompt
    renders it (:func:`~rageval.token_counts.budget_tokens_of`) — and whole
    trailing steps dropped until the context fits: a packer's output can never
    exceed its budget.
    """
    while True:
        chosen = [i for step in steps for i in step]
        units = build(chosen)
        if budget_tokens is None or not units:
            return units
        if budget_tokens_of(units, tokenizer) <= budget_tokens:
            return units
        steps = steps[:-1]


def fit_rendered(units: list[Unit], tokenizer: Tokenizer, budget_tokens: int | None) -> list[Unit]:
    """``units`` without the trailing ones the rendered context cannot hold (:func:`pack_guard`'s rule for a
    selection already made: the last units in source order go first)."""
    if budget_tokens is None:
        return units
    while units and budget_tokens_of(units, tokenizer) > budget_tokens:
        units = units[:-1]
    return units


# --------------------------------------------------------------------------- base class


class BaseCompressor:
    """Parameter handling shared by all compressors.

    Subclasses declare ``PARAMS`` (name -> default; every parameter has a
    documented default) and may override :meth:`_check_params`.  Unknown
    parameters fail at construction with a "did you mean" hint.
    """

    name: str = "base"
    version: str = "1.0.0"
    PARAMS: ClassVar[dict[str, Any]] = {}
    #: whether this compressor (with its current parameters) loads model weights
    needs_model: bool = False
    #: what it promises about the budget (:data:`BudgetContract`); ``_check_params`` may set it per instance
    budget_contract: BudgetContract = "exact"
    #: its units are single sentences packed at their costs: each is charged the separator the prompt puts
    #: between units too (module doc, "The rendered context")
    sentence_units: ClassVar[bool] = False

    #: accepted spellings of parameters (e.g. ``lambda`` in a YAML suite for ``lambda_``)
    ALIASES: ClassVar[dict[str, str]] = {}

    def __init__(self, **params: Any):
        for alias, real in self.ALIASES.items():
            if alias in params:
                if real in params:
                    raise CompressorConfigError(
                        f"{self.name}: give either {alias!r} or {real!r}, not both (they are the same parameter)"
                    )
                params[real] = params.pop(alias)
        unknown = [k for k in params if k not in self.PARAMS]
        if unknown:
            k = unknown[0]
            hint = did_you_mean(k, self.PARAMS)
            known = ", ".join(sorted(self.PARAMS)) or "(none)"
            raise CompressorConfigError(
                f"Unknown parameter {k!r} for compressor {self.name!r}.{hint} Known parameters: {known}."
            )
        self.params: dict[str, Any] = {**self.PARAMS, **params}
        self._check_params()
        if self.budget_contract not in BUDGET_CONTRACTS:
            raise CompressorConfigError(
                f"{self.name}: budget_contract={self.budget_contract!r} is not a budget contract: declare one of "
                f"{', '.join(map(repr, BUDGET_CONTRACTS))}.{did_you_mean(self.budget_contract, BUDGET_CONTRACTS)}"
            )

    # -- hooks
    def _check_params(self) -> None:
        pass

    def _compress(
        self,
        question: str,
        snippets: list[SourceSnippet],
        costs: list[int],
        budget_tokens: int | None,
        tokenizer: Tokenizer,
    ) -> list[Unit]:
        raise NotImplementedError

    # -- helpers for subclasses
    def _param_error(self, key: str, fix: str) -> CompressorConfigError:
        return CompressorConfigError(f"{self.name}: parameter {key}={self.params[key]!r} is invalid: {fix}")

    def _check_number(
        self,
        key: str,
        lo: float | None = None,
        hi: float | None = None,
        *,
        integer: bool = False,
        lo_open: bool = False,
    ) -> None:
        v = self.params[key]
        ok_type = (isinstance(v, int) if integer else isinstance(v, (int, float))) and not isinstance(v, bool)
        if not ok_type or (isinstance(v, float) and math.isnan(v)):
            raise self._param_error(key, f"expected {'an integer' if integer else 'a number'}")
        if lo is not None and (v < lo or (lo_open and v == lo)):
            raise self._param_error(key, f"must be {'>' if lo_open else '>='} {lo}")
        if hi is not None and v > hi:
            raise self._param_error(key, f"must be <= {hi}")

    def _check_choice(self, key: str, choices: Sequence[str]) -> None:
        v = self.params[key]
        if v not in choices:
            hint = did_you_mean(v, choices)
            raise self._param_error(key, f"choose one of {', '.join(map(repr, choices))}.{hint}")

    # -- public
    def load(self) -> BaseCompressor:
        """Load any model weights now (e.g. when a suite loads) instead of at the first ``compress``.

        Raises :class:`ModelUnavailable` when they cannot be loaded; a no-op for
        model-free settings.  Returns ``self``.
        """
        scorer = self.params.get("scorer")
        if isinstance(scorer, str) and scorer != "lexical":
            from rageval.compressors.scoring import load_scorer

            load_scorer(scorer)
        sim = self.params.get("similarity")
        if isinstance(sim, str) and sim != "lexical":
            from rageval.compressors.similarity import load_similarity

            load_similarity(sim)
        return self

    @property
    def model_id(self) -> str | None:
        """The model this setting uses (checkpoint path/id, ``minilm``, ``cross-encoder:<path>``), else None."""
        for key in ("model", "scorer", "similarity"):
            v = self.params.get(key)
            if isinstance(v, str) and v and v != "lexical":
                return v
        return None

    @property
    def weights(self) -> dict[str, Any] | None:
        """What identifies the model's weights beyond its name (a GGUF file's name, sha256 and de-quantization:
        :meth:`rageval.lm.GgufModel.identity`), for the manifest and the record key; None where the name is all
        there is (a hub id or folder) or the setting is model-free."""
        return None

    @property
    def config(self) -> dict[str, Any]:
        """Name, version and parameters (and :attr:`weights` where known): what a record hash should include."""
        out = {"name": self.name, "version": self.version, "params": dict(self.params)}
        weights = self.weights
        if weights is not None:
            out["weights"] = weights
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def compress(
        self,
        question: str,
        snippets: Sequence[SourceSnippet],
        budget: float | None = None,
        *,
        tokenizer: Tokenizer | str | None = None,
    ) -> Context:
        """Compress ``snippets`` for ``question`` into a Context within ``budget`` (see module doc)."""
        check_budget(budget)
        question, snips = validate_inputs(question, snippets)
        tok = get_tokenizer(tokenizer)
        costs = evidence_token_counts(snips, tok)
        retrieved = sum(costs)  # = rageval.token_counts.evidence_tokens(snips, tok)
        budget_tokens = resolve_budget(budget, retrieved_tokens=retrieved)
        if not snips or retrieved == 0:
            units: list[Unit] = []
        elif self.sentence_units and budget_tokens is not None and (sep := separator_tokens(tok)):
            # n units carry n - 1 separators: each unit pays one, the budget holds one more (module doc)
            pack_costs = [c + sep if c > 0 else 0 for c in costs]
            units = fit_rendered(
                self._compress(question, snips, pack_costs, budget_tokens + sep, tok), tok, budget_tokens
            )
        else:
            units = self._compress(question, snips, costs, budget_tokens, tok)
        return make_context(
            units, tokenizer=tok, retrieved_tokens=retrieved, budget=budget, budget_tokens=budget_tokens
        )


# --------------------------------------------------------------------------- shared selection helpers


def scoring_text(s: SourceSnippet, use_titles: bool) -> str:
    """What lexical scorers read: ``title + text`` when ``use_titles`` (titles never count toward cost)."""
    return f"{s.title}. {s.text}" if use_titles and s.title else s.text


def group_documents(snippets: Sequence[SourceSnippet], indices: Iterable[int] | None = None) -> list[list[int]]:
    """Snippet indices grouped by ``doc_id``; documents in retrieval order (doc_rank, first appearance),
    sentences in position order."""
    idx = list(range(len(snippets))) if indices is None else list(indices)
    groups: dict[str, list[int]] = {}
    for i in idx:
        groups.setdefault(snippets[i].doc_id, []).append(i)
    docs = [sorted(g, key=lambda i: (snippets[i].position, i)) for g in groups.values()]
    docs.sort(key=lambda g: (min(snippets[i].doc_rank for i in g), g[0]))
    return docs


def units_by_runs(snippets: Sequence[SourceSnippet], chosen: Iterable[int]) -> list[Unit]:
    """One unit per maximal run of consecutive chosen sentences of a document, in source order."""
    chosen_set = set(chosen)
    units: list[Unit] = []
    for doc in group_documents(snippets):
        run: list[int] = []
        for i in doc:
            if i in chosen_set:
                run.append(i)
            elif run:
                units.append(group_unit([snippets[j] for j in run]))
                run = []
        if run:
            units.append(group_unit([snippets[j] for j in run]))
    return units


def pack_documents(
    doc_order: Sequence[list[int]],
    costs: Sequence[int],
    budget_tokens: int | None,
    partial: str,
) -> list[list[int]]:
    """Whole documents in ``doc_order`` while they fit; then the partial-document rule.

    ``partial="leading"`` (the default): the first document that does not
    fit contributes its leading whole sentences that fit, and packing stops.
    ``"stop"``: stop at the first document that does not fit.  ``"skip"``: skip
    it and keep trying later documents whole.
    """
    steps: list[list[int]] = []
    used = 0
    for doc in doc_order:
        doc = [i for i in doc if costs[i] > 0]
        if not doc:
            continue
        c = sum(costs[i] for i in doc)
        if budget_tokens is None or used + c <= budget_tokens:
            steps.append(doc)
            used += c
            continue
        if partial == "skip":
            continue
        if partial == "leading":
            lead: list[int] = []
            for i in doc:
                if used + costs[i] > budget_tokens:
                    break
                lead.append(i)
                used += costs[i]
            if lead:
                steps.append(lead)
        break
    return steps
