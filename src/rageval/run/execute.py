"""Executing one batch of (question, setting) items: compress, read, then score through the catalog.

An item's context comes from the setting's compressor, or with the item (a
:class:`~rageval.run.plan.Given` or :class:`~rageval.run.plan.Saved` source);
its answer from the reader, or with the item.

Each failure the runner *declares* becomes a record with a status, never a
dropped question: ``budget_check`` (a budget error, or a context over the budget
of a compressor whose ``budget_contract`` is ``"exact"``; a best-effort or
budget-blind compressor's overshoot is recorded in ``extra["budget_overshoot"]``
and the record stays ``ok``),
``unavailable`` (weights missing, with ``--allow-unavailable``),
``compressor_error`` (a :class:`~rageval.compressors.CompressorError`),
``prompt_overflow`` / ``reader_error`` (the reader's per-request statuses, or a
:class:`~rageval.errors.ReaderError` / ``OSError`` of a backend that fails as a
whole) and ``judge_error`` (a :class:`~rageval.judges.JudgeError`).  Anything
else is a programming error and propagates.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rageval.citations import parse_answer
from rageval.compressors import BudgetError, CompressorError, budget_contract
from rageval.diagnostics import CATALOG
from rageval.diagnostics.inputs import Gold, ScoringInput, ScoringOptions
from rageval.errors import ModelUnavailable, ReaderError
from rageval.readers.template import DEFAULT_TEMPLATE
from rageval.run.plan import Item
from rageval.token_counts import UNIT_SEPARATOR, counts_like_words, evidence_tokens, rendered_tokens
from rageval.types import Answer, Context, Record, Setting

__all__ = ["Item", "Scored", "Stage", "compress_and_read", "run_batch", "run_joint", "score_outputs", "score_together"]


@dataclass(frozen=True)
class Stage:
    """What a batch needs besides its items: the setting and the loaded parts."""

    setting: Setting
    compressor: Any  # None when unavailable (or when the items bring their contexts)
    compressor_error: str | None
    reader: Any  # None when every item brings its answer
    tokenizer: Any
    judge: Any
    diagnostics: Sequence[str]
    options: ScoringOptions
    allow_unavailable: bool
    evidence_text: Any = None  # how a unit is shown to the reader (default: the reader's template)
    #: a saved record's recovered source ids kept (:attr:`~rageval.run.plan.Saved.fixed_recovery`)
    fixed_recovery: bool = False
    #: the most tokens a context may hold, whatever its compressor (:func:`over_limit`); None: unchecked
    context_limit: int | None = None

    def separator(self) -> str:
        """How the reader's prompt joins the units (its template's ``unit_separator``)."""
        template = getattr(self.reader, "template", None)
        return getattr(template, "unit_separator", UNIT_SEPARATOR)

    def shown(self) -> Any:
        if self.evidence_text is not None:
            return self.evidence_text
        if self.reader is not None:
            return self.reader.template.evidence_text

        return DEFAULT_TEMPLATE.evidence_text


def overshoot(ctx: Context | None) -> int:
    """How many tokens ``ctx`` is over its budget (0 when within it, unbounded or absent)."""
    if ctx is None or ctx.budget_tokens is None:
        return 0
    return max(0, ctx.achieved_tokens - ctx.budget_tokens)


def rendered_over(ctx: Context | None, tokenizer: Any, separator: str) -> tuple[int, int]:
    """``(rendered tokens, tokens over the budget)`` of ``ctx`` as the prompt renders it (its unit texts joined with
    ``separator``, counted as one text: :func:`rageval.token_counts.rendered_tokens`); ``(0, 0)`` when unbounded,
    absent, or counted by a tokenizer for which the rendered count is the sum (``regex``, ``whitespace``)."""
    if ctx is None or ctx.budget_tokens is None or not ctx.units or counts_like_words(tokenizer, separator):
        return 0, 0
    n = rendered_tokens(ctx.units, tokenizer, separator)
    return n, max(0, n - ctx.budget_tokens)


def over_limit(ctx: Context | None, limit: int | None) -> int:
    """How many tokens ``ctx`` holds over the context limit ``limit`` (0 when within it, unlimited or absent)."""
    if ctx is None or limit is None:
        return 0
    return max(0, ctx.achieved_tokens - limit)


def reads_claims(diagnostics: Sequence[str]) -> bool:
    """True when a diagnostic of ``diagnostics`` reads the answer's claims and citations (the attribution family):
    only then is a record's answer split into its sentences (``answer.sentences``)."""
    return any(CATALOG[d].family == "attribution" for d in diagnostics)


def answer_claims(item: Item) -> list[str] | None:
    """The claims of the answer an item's file supplies (``rageval score``: RAGChecker's ``response_claims``)."""
    claims = (getattr(item.example, "meta", None) or {}).get("answer_claims")
    return None if claims is None else list(claims)


def common_extra(item: Item, reader_input_tokens: int | None = None, context: Context | None = None) -> dict[str, Any]:
    ex = item.example
    extra = {
        "cluster_id": getattr(ex, "cluster_id", None),
        "retrieved_doc_ids": None if item.retrieved.doc_ids is None else list(item.retrieved.doc_ids),
        "reader_input_tokens": reader_input_tokens,
        "gold": Gold.of(ex).to_dict(),
        # the question's text: the report's examples and explorer show it (and a list question's ALCE citation
        # sentences start with it)
        "question": getattr(ex, "question", None),
    }
    if getattr(item.retrieved, "self_sourced", False):  # plain contexts, each its own source (rageval score)
        extra["self_sourced"] = True
    claims = answer_claims(item)
    if claims is not None:  # the answer's own claims, as its file states them (claim support; rageval rescore)
        extra["answer_claims"] = claims
    over = overshoot(context)
    if over:  # the tokens over the budget (a best-effort compressor's miss, or the reason for budget_check)
        extra["budget_overshoot"] = over
    return extra


def _limit_failed(item: Item, stage: Stage, ctx: Context) -> Record | None:
    """A ``budget_check`` record when ``ctx`` is over the stage's context limit (identity's context too, as the
    attribution-compression paper's runs failed), its tokens over in ``extra["context_over_limit"]``; else None."""
    over = over_limit(ctx, stage.context_limit)
    if not over:
        return None
    msg = f"context has {ctx.achieved_tokens} tokens, over the context limit of {stage.context_limit} (context_limit)"
    rec = failed(item, stage.setting, "budget_check", msg, context=ctx)
    return replace(rec, extra={**rec.extra, "context_over_limit": over})


def failed(
    item: Item,
    setting: Setting,
    status: str,
    error: str | None,
    *,
    context: Context | None = None,
    answer_text: str | None = None,
    trace: str | None = None,
    reader_input_tokens: int | None = None,
) -> Record:
    extra = common_extra(item, reader_input_tokens, context)
    if trace:
        extra["trace"] = trace
    return Record(
        question_id=item.example.id,
        setting=setting,
        status=status,
        context=context,
        sources=item.sources,
        answer=Answer(answer_text) if answer_text is not None else None,
        metrics={},
        input_hash=item.input_hash,
        error=error,
        extra=extra,
    )


def _compress(item: Item, stage: Stage) -> tuple[Context | None, Record | None]:
    ctx, rec = _compress_only(item, stage)
    if rec is None and ctx is not None and item.saved is None:
        rec = _limit_failed(item, stage, ctx)
    return ctx, rec


def _compress_only(item: Item, stage: Stage) -> tuple[Context | None, Record | None]:
    setting = stage.setting
    if item.saved is not None:  # a saved record: its own context (a failed one is kept as it was)
        return item.saved.context, (None if item.saved.status == "ok" else item.saved)
    if item.given is not None:  # the units the file gives, measured with the run's tokenizer
        if item.given.error is not None or item.given.units is None:
            return None, failed(item, setting, "compressor_error", item.given.error or "no units given")

        units, sources = item.given.units, item.sources
        retrieved = evidence_tokens(list(sources), stage.tokenizer)
        if len(units) == len(sources) and all(u.text == s.text for u, s in zip(units, sources)):
            # the units are the sources' texts (an ALCE file's documents): the same count, counted once
            return Context(
                tuple(units), achieved_tokens=retrieved, retrieved_tokens=retrieved, budget=setting.budget
            ), None
        ctx = Context.measure(units, tokenizer=stage.tokenizer, retrieved_tokens=retrieved, budget=setting.budget)
        return ctx, None
    if stage.compressor is None:
        return None, failed(item, setting, "unavailable", stage.compressor_error)
    try:
        ctx = stage.compressor.compress(
            item.example.question, list(item.sources), setting.budget, tokenizer=stage.tokenizer
        )
    except BudgetError as err:
        return None, failed(item, setting, "budget_check", str(err))
    except ModelUnavailable as err:
        if not stage.allow_unavailable:
            raise
        return None, failed(item, setting, "unavailable", str(err))
    except CompressorError as err:
        return None, failed(item, setting, "compressor_error", f"{type(err).__name__}: {err}")
    # the compressor's declared contract decides (docs/compressors.md#the-budget-contract): only a promise is
    # checked; a best-effort miss stays ok, its overshoot recorded in the record's extra and counted
    if budget_contract(stage.compressor) == "exact":
        if overshoot(ctx):
            msg = f"context has {ctx.achieved_tokens} tokens, over the budget of {ctx.budget_tokens}"
            return ctx, failed(item, setting, "budget_check", msg, context=ctx)
        # the promise holds for the context as the reader's prompt renders it too (docs/compressors.md)
        rendered, over = rendered_over(ctx, stage.tokenizer, stage.separator())
        if over:
            msg = (
                f"context has {rendered} tokens as the prompt renders it (its units joined, counted as one text), "
                f"over the budget of {ctx.budget_tokens}"
            )
            rec = failed(item, setting, "budget_check", msg, context=ctx)
            return ctx, replace(rec, extra={**rec.extra, "budget_overshoot": over})
    return ctx, None


def _brought(item: Item) -> Any:
    """The reader output an item brings with it (a saved or given answer), else None."""
    from rageval.readers.base import ReaderOutput

    if item.saved is not None:
        answer = item.saved.answer
        tokens = (item.saved.extra or {}).get("reader_input_tokens")
        return ReaderOutput(answer.text if answer is not None else "", "ok", tokens, None)
    if item.given is not None and item.given.answer is not None:
        return ReaderOutput(item.given.answer, "ok", item.given.input_tokens, None)
    return None


def _read(batch: Sequence[Item], contexts: list, records: list, stage: Stage) -> dict[int, Any]:
    from rageval.readers import ReaderRequest

    brought: dict[int, Any] = {}
    todo = []
    for i in range(len(batch)):
        if records[i] is not None:
            continue
        out = _brought(batch[i])
        if out is None:
            todo.append(i)
        else:
            brought[i] = out
    if not todo:
        return brought
    requests = [
        ReaderRequest(batch[i].example.id, batch[i].example.question, contexts[i].units, stage.setting.name)
        for i in todo
    ]
    try:
        brought.update(zip(todo, stage.reader.generate(requests)))
    except (ReaderError, OSError) as err:  # a backend that fails as a whole: every record gets the status
        msg = f"{type(err).__name__}: {err}"
        for i in todo:
            records[i] = failed(batch[i], stage.setting, "reader_error", msg, context=contexts[i])
    return dict(sorted(brought.items()))


def score_outputs(batch: Sequence[Item], contexts: list, outputs: dict[int, Any], records: list, stage: Stage) -> None:
    """Fill ``records[i]`` for each reader output ``outputs[i]``: a failed status, a ``judge_error``, or the scored
    record.  The one place a record is scored and assembled (the suite runner and ``rageval score``)."""
    score_together([Scored(batch, contexts, outputs, records, stage)])


@dataclass
class Scored:
    """One setting's part of a scoring call: its batch, contexts, reader outputs, the records to fill, its stage."""

    batch: Sequence[Item]
    contexts: list
    outputs: dict[int, Any]
    records: list
    stage: Stage
    scored: list[int] = field(default_factory=list)  # the indexes scored (their reader output is ok)
    inputs: list[ScoringInput] = field(default_factory=list)


def score_together(parts: Sequence[Scored]) -> None:
    """:func:`score_outputs` for several settings' batches in one scoring call (one judge call across them, as a
    joint group of settings asks: :attr:`~rageval.run.plan.SettingPlan.joint`); the parts share the first's
    diagnostics, options and judge."""
    from rageval.diagnostics.dispatch import score
    from rageval.judges import JudgeError

    for part in parts:
        _inputs(part)
    inputs = [x for part in parts for x in part.inputs]
    if not inputs:
        return
    first = parts[0].stage
    try:
        results = score(inputs, first.diagnostics, first.options, first.judge)
    except JudgeError as err:  # judge failures are recorded, not fatal; bugs still raise
        for part in parts:
            _judge_failed(part, err)
        return
    at = 0
    for part in parts:
        _assemble(part, results[at : at + len(part.inputs)])
        at += len(part.inputs)


def _inputs(part: Scored) -> None:
    """The scoring inputs of a part's ok reader outputs (a failed output's record filled with its status)."""
    batch, contexts, records, stage = part.batch, part.contexts, part.records, part.stage
    for i, o in part.outputs.items():
        status = getattr(o, "status", "ok")
        tokens = getattr(o, "input_tokens", None)
        if status != "ok":
            records[i] = failed(batch[i], stage.setting, status, getattr(o, "error", None), context=contexts[i])
            continue
        part.scored.append(i)
        saved = batch[i].saved
        if saved is not None:
            part.inputs.append(ScoringInput.from_record(saved, stage.shown(), fixed_recovery=stage.fixed_recovery))
            continue
        part.inputs.append(
            ScoringInput.build(
                question_id=batch[i].example.id,
                answer=o.text,
                context=contexts[i],
                sources=batch[i].sources,
                gold=Gold.of(batch[i].example),
                evidence_text=stage.shown(),
                retrieved_ids=batch[i].retrieved.doc_ids,
                self_sourced=bool(getattr(batch[i].retrieved, "self_sourced", False)),
                reader_input_tokens=tokens,
                question=batch[i].example.question,
                answer_claims=answer_claims(batch[i]),
            )
        )


def _judge_failed(part: Scored, err: Exception) -> None:
    """Every scored record of a part a ``judge_error`` (a saved one: kept, with the status and no metrics)."""
    batch, contexts, records, stage = part.batch, part.contexts, part.records, part.stage
    for i, x in zip(part.scored, part.inputs):
        saved = batch[i].saved
        if saved is not None:
            msg = f"{type(err).__name__}: {err}"
            records[i] = replace(saved, status="judge_error", error=msg, metrics={})
            continue
        records[i] = failed(
            batch[i],
            stage.setting,
            "judge_error",
            f"{type(err).__name__}: {err}",
            context=contexts[i],
            answer_text=x.answer,
            trace=traceback.format_exc(limit=3),
            reader_input_tokens=x.reader_input_tokens,
        )


def _assemble(part: Scored, results: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """A part's scored records from the scoring results (a saved one: kept, with the new metrics)."""
    batch, contexts, records, stage = part.batch, part.contexts, part.records, part.stage
    claims = reads_claims(stage.diagnostics)
    for i, x, (metrics, extra) in zip(part.scored, part.inputs, results):
        saved = batch[i].saved
        if saved is not None:  # rescored: the saved record with the new metrics
            records[i] = replace(saved, metrics=metrics, extra={**saved.extra, **extra})
            continue
        mode = stage.options.attribution.citation_mode
        if claims:
            answer = parse_answer(
                x.answer,
                len(x.units),
                mode=mode,
                max_citations=stage.options.max_citations,
                list_question=x.list_question,
            )
        else:  # no selected diagnostic reads the answer's claims: not split (docs/score.md#outputs-cache-and-resume)
            answer = Answer(x.answer, mode=mode)
        records[i] = Record(
            question_id=x.question_id,
            setting=stage.setting,
            status="ok",
            context=contexts[i],
            sources=x.sources,
            answer=answer,
            metrics=metrics,
            input_hash=batch[i].input_hash,
            # what the reader says about its answer (truncated, served_model): only where it says something
            extra={**extra, **common_extra(batch[i], x.reader_input_tokens, contexts[i]), **_said(part.outputs[i])},
        )


def _said(output: Any) -> dict[str, Any]:
    """What a reader output adds to its record's ``extra`` (:attr:`~rageval.readers.base.ReaderOutput.extra`)."""
    return dict(getattr(output, "extra", None) or {})


def compress_and_read(batch: Sequence[Item], stage: Stage) -> tuple[list, list, dict[int, Any]]:
    """Compress each item and read the rest in one call: ``(contexts, records, outputs)``.

    ``records[i]`` is already a failed record where compression or reading failed as a whole, else None;
    ``outputs[i]`` the reader's output to score.  Needs no judge (``--ray`` runs it in a worker and scores the
    outputs in the driver).
    """
    records: list[Record | None] = [None] * len(batch)
    contexts: list[Context | None] = [None] * len(batch)
    for i, item in enumerate(batch):
        contexts[i], records[i] = _compress(item, stage)
    outputs = _read(batch, contexts, records, stage)
    return contexts, records, outputs


def finish(batch: Sequence[Item], records: list) -> list[Record]:
    """The records of a batch with what each item's file adds to ``extra`` (e.g. the input file and line)."""
    out = []
    for item, rec in zip(batch, records):
        if rec is None:  # pragma: no cover - every path above fills its record
            raise RuntimeError(f"no record for question {item.example.id!r}")
        if item.given is not None and item.given.extra:
            rec = replace(rec, extra={**rec.extra, **item.given.extra})
        out.append(rec)
    return out


def run_batch(batch: Sequence[Item], stage: Stage) -> list[Record]:
    """One record per item, in order: compress each, read the rest in one call, score the answers."""
    contexts, records, outputs = compress_and_read(batch, stage)
    score_outputs(batch, contexts, outputs, records, stage)
    return finish(batch, records)


def run_joint(parts: Sequence[tuple[Sequence[Item], Stage]]) -> list[list[Record]]:
    """:func:`run_batch` for several settings' batches, scored in one call (:func:`score_together`): the records of
    each part, in order."""
    scored = []
    for batch, stage in parts:
        contexts, records, outputs = compress_and_read(batch, stage)
        scored.append(Scored(batch, contexts, outputs, records, stage))
    score_together(scored)
    return [finish(p.batch, p.records) for p in scored]
