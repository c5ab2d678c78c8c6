"""The suite's planner: a validated :class:`~rageval.suite.config.Suite` resolved into a run :class:`~rageval.run.plan.Plan`.

Nothing here runs a model.  The inputs (dataset, retrieval, the diagnostics
that apply) come from :mod:`rageval.suite.inputs`; :func:`suite_scoring` gives the run's scoring options;
:func:`setting_key` the key that enters each record's input hash (everything
that can change a record is in it, including each selected diagnostic's
version); :func:`build_plan` puts it together: one
:class:`~rageval.run.plan.SettingPlan` per compressor x budget, whose items
are compressed and read (:class:`~rageval.run.plan.CompressRead`), or — for
``compressor: given`` on a dataset read from a ``rageval score`` file — bring
the units (and the answers) the file gives (:class:`~rageval.run.plan.Given`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval import __version__
from rageval.data import LOADERS
from rageval.diagnostics import CATALOG
from rageval.diagnostics.inputs import scoring_options as options_of
from rageval.run.plan import CompressRead, Given, GivenOutput, Item, Origin, Plan, SettingPlan, sha
from rageval.scoring import DEFAULT_TOKENIZER, ScoringConfig
from rageval.suite.config import Suite, SuiteError, suite_hash
from rageval.suite.inputs import load_inputs, resolve_dataset_path, retrieve_setting, select_diagnostics
from rageval.text.tokenize import budget_unit, is_gguf_spec, tokenizer_key
from rageval.types import Setting, Unit

if TYPE_CHECKING:
    from rageval.dense import EmbeddingStore

__all__ = [
    "build_plan",
    "scoring_options",
    "suite_scoring",
    "setting_key",
]


def suite_scoring(suite: Suite) -> ScoringConfig:
    """The suite's scoring options as the run records them (judge, tokenizer, citations, attribution, k): its
    sections are the config's parts (``judge:`` a JudgeSpec, a :class:`~rageval.scoring.JudgeConfig`)."""
    return ScoringConfig(
        judge=suite.judge,
        tokenizer=suite.tokenizer,
        citations=suite.citations,
        attribution=suite.attribution,
        # settings with retrievals of their own: each record's ranking is already its setting's top k
        retrieval_k=None if suite.retrieval_varies() else suite.retrieval.k,
    )


def scoring_options(suite: Suite):
    """The suite's scoring options, typed and validated."""
    return options_of(suite_scoring(suite))


def setting_key(
    suite: Suite,
    setting: Setting,
    params: dict[str, Any],
    diagnostics: Sequence[str],
    reader: Any = None,
    retrieval: Any = None,
) -> dict[str, Any]:
    """Everything of the suite and the setting that can change a record of it (``reader``: the setting's own
    ReaderSpec, else the suite's; ``retrieval``: its own RetrievalSpec, else the suite's: method, k, corpus and a
    dense retriever's model and index).  ``compressor``, ``reader_id`` and ``judge_id`` name built parts: the
    engine fills them (:data:`rageval.run.plan.PART_KEYS`)."""

    return {
        "rageval": __version__,
        "setting": setting.to_dict(),
        "params": params,
        "compressor": None,
        "tokenizer": tokenizer_key(suite.tokenizer),  # a GGUF tokenizer's file hash (or its fallback) too
        "reader": _reader_key(reader or suite.reader),
        "reader_id": None,
        "judge": suite.judge.model_dump(mode="json"),
        "judge_id": None,
        "citations": suite.citations.model_dump(mode="json"),
        "attribution": suite.attribution.model_dump(mode="json"),
        "diagnostics": {d: CATALOG[d].version for d in diagnostics},
        "retrieval": (retrieval or suite.retrieval).key(),
    }


def _reader_key(spec: Any) -> dict[str, Any]:
    """The reader spec without its transport options (endpoints, concurrency, timeouts: they do not change an
    answer; ``rageval.readers.transport_params``), so one endpoint or two of the same model share records."""
    from rageval.readers import transport_params

    d = spec.model_dump(mode="json")
    drop = transport_params(spec.backend)
    if drop:
        d["params"] = {k: v for k, v in d["params"].items() if k not in drop}
    return d


def _given_outputs(suite: Suite, compressor: str, params: dict[str, Any], own: Any, examples):
    """Per item, the units (and, when the setting's reader is the ``saved`` reader of the dataset file itself,
    the answers) the dataset file gives its system: the file is read once, as the dataset."""

    system = params.get("system")
    key = "" if system is None else system
    answers = _answers_from_dataset(suite, own, system)
    out = []
    for ex in examples:
        given = (getattr(ex, "meta", None) or {}).get("given")
        if not given:
            raise SuiteError(
                f"{suite.source or suite.name}: settings: compressor {compressor!r} takes the units a dataset file "
                "gives: read the dataset from a file (dataset: {format: generic, path: ...})"
            )
        if key not in given:
            known = sorted(k for k in given if k)
            what = "several systems" if system is None else f"no system {system!r}"
            err = f"given: question {ex.id!r} has {what} ({known}); set params: {{system: ...}}"
            out.append(GivenOutput(units=None, error=err))
            continue
        g = given[key]
        units = tuple(Unit(u["text"], u["source_ids"], u.get("title")) for u in g["units"])
        out.append(GivenOutput(units, g.get("answer") if answers else None, g.get("input_tokens") if answers else None))
    return out


def _answers_from_dataset(suite: Suite, reader: Any, system: str | None) -> bool:
    """True when ``reader`` is the ``saved`` reader of the dataset file itself (same file, format and system)."""
    if reader is None or reader.backend != "saved" or suite.dataset.format is None:
        return False
    params = reader.params
    if params.get("format") != suite.dataset.format or params.get("system") != system:
        return False
    path = resolve_dataset_path(suite)
    given = Path(str(params.get("path", ""))).expanduser()  # the file the saved reader would open (cwd-relative)
    try:
        return path is not None and given.resolve() == path.resolve()
    except OSError:
        return False


def _setting_plan(suite: Suite, planned: tuple, diagnostics: Sequence[str], examples, retrievals) -> SettingPlan:
    """One setting (``planned``: name, compressor, budget, params) with its source, key and items
    (``retrievals``: setting name -> its examples' retrieval)."""
    from rageval.readers import PromptTemplate

    name, compressor, budget, params = planned
    retrieved = retrievals[name]
    spec = suite.setting_readers()[name]
    own = spec if spec is not None and spec != suite.reader else None
    reads = own or suite.reader
    setting = Setting(name=name, compressor=compressor, budget=budget, reader=reads.backend)
    own_retrieval = suite.setting_retrievals()[name]
    key = setting_key(suite, setting, params, diagnostics, own, own_retrieval)
    limit = suite.context_limits()[name]
    if limit is not None:  # in the key only when set: a suite without a limit keeps its records' hashes
        key["context_limit"] = limit
    source: Any
    if compressor == "given":
        givens = _given_outputs(suite, compressor, params, reads, examples)
        # answers from the dataset file itself: no reader is built (the file is not read a second time)
        answered = all(g.answer is not None or g.error is not None for g in givens)
        reader = None if answered else reads
        source = Given(label=compressor, reader=reader, own_reader=own is not None and reader is not None)
        items = tuple(Item(ex, ret, given=g) for ex, ret, g in zip(examples, retrieved, givens))
    else:
        source = CompressRead(compressor, dict(params), reads, own_reader=own is not None)
        items = tuple(Item(ex, ret) for ex, ret in zip(examples, retrieved))
    shown = PromptTemplate.coerce(reads.template).evidence_text
    return SettingPlan(
        setting,
        source,
        tuple(diagnostics),
        key,
        items,
        evidence_text=shown,
        context_limit=limit,
        retrieval=None if own_retrieval is None else own_retrieval.key(),
    )


def setting_retrieved(
    suite: Suite, examples: Sequence[Any], retrieved: Sequence[Any], *, embeddings: EmbeddingStore | None = None
) -> dict[str, Sequence[Any]]:
    """Setting name -> its examples' retrieval: the suite's (``retrieved``) or its own, each distinct retrieval
    computed once."""
    done: dict[str, Sequence[Any]] = {}
    out: dict[str, Sequence[Any]] = {}
    for name, spec in suite.setting_retrievals().items():
        if spec is None:
            out[name] = retrieved
            continue
        key = sha(spec.key())
        if key not in done:
            done[key] = retrieve_setting(suite, examples, spec, embeddings=embeddings)
        out[name] = done[key]
    return out


def _checked_inputs(
    suite: Suite, examples, retrieved, embeddings: EmbeddingStore | None = None
) -> tuple[Sequence[Any], Sequence[Any], list[str]]:
    """The examples, their retrieval and the diagnostics that apply, after the checks a run makes first."""
    from rageval.suite.checks import run_problems, tokenizer_problem

    problem = tokenizer_problem(suite.tokenizer)  # configuration errors stop the run before any record
    if problem:
        raise SuiteError(f"{suite.source or suite.name}: invalid suite:\n  tokenizer: {problem}")
    if examples is None or retrieved is None:
        examples, retrieved = load_inputs(suite, embeddings=embeddings)
    diagnostics = select_diagnostics(suite, examples)
    problems = run_problems(suite, examples, diagnostics)
    if problems:
        raise SuiteError(f"{suite.source or suite.name}: invalid suite:\n" + "\n".join(problems))
    return examples, retrieved, diagnostics


def build_plan(
    suite: Suite,
    examples: Sequence[Any] | None = None,
    retrieved: Sequence[Any] | None = None,
    *,
    embeddings: EmbeddingStore | None = None,
) -> Plan:
    """The run :class:`~rageval.run.plan.Plan` of ``suite`` (its data read and retrieved unless given; a setting
    with a retrieval of its own retrieved here).  ``embeddings``: a dense retriever's embedding store (read now,
    written by the caller, :func:`rageval.suite.run.run_suite`, under the run directory's lock)."""
    examples, retrieved, diagnostics = _checked_inputs(suite, examples, retrieved, embeddings)
    retrievals = setting_retrieved(suite, examples, retrieved, embeddings=embeddings)
    settings = [_setting_plan(suite, p, diagnostics, examples, retrievals) for p in suite.expand_settings()]
    return Plan(
        origin=Origin(
            kind="suite",
            name=suite.name,
            hash=suite_hash(suite),
            config=suite.model_dump(mode="json", exclude={"source", "output_dir"}),
            source=None,  # where the suite file lies is not recorded: a moved suite resumes with the same bytes
        ),
        settings=tuple(settings),
        question_order=tuple(e.id for e in examples),
        scoring=suite_scoring(suite),
        diagnostics=tuple(diagnostics),
        seed=suite.seed,
        contrasts=suite.contrasts,
        cluster_key="cluster_id" if any(getattr(e, "cluster_id", None) for e in examples) else None,
        summary=_summary(suite, examples, retrieved, retrievals),
        reader=suite.reader,
        notes=(*_tokenizer_notes(suite), *_retrieval_notes(suite), *_source_notes(examples)),
        inputs=input_files(suite),
    )


def _tokenizer_notes(suite: Suite) -> list[str]:
    """The budget unit of a GGUF tokenizer (the report shows the run's notes), or that it fell back to ``regex``
    here (the ``gguf`` extra or the named model is missing)."""
    if not is_gguf_spec(suite.tokenizer):
        return []
    unit = budget_unit(suite.tokenizer)
    if "fallback" in unit:
        note = (
            f"budget unit: tokenizer {unit['requested']!r} could not be loaded here ({unit['fallback']}); budgets and "
            "token counts are in rageval's word tokens (regex) instead (docs/suites.md#the-budget-unit)"
        )
        return [note]
    note = (
        f"budget unit: budgets and token counts are in the tokens of the GGUF tokenizer {unit['tokenizer']!r} "
        f"({unit['gguf_file']}, sha256 {str(unit['sha256'])[:12]}), the context counted as the prompt renders it "
        "(docs/suites.md#the-budget-unit)"
    )
    return [note]


def _retrieval_notes(suite: Suite) -> list[str]:
    """What the retrieval stands in for, for the manifest's notes: ASQA's BM25 pool (the din0s rows carry no
    retrieved passages) in place of the attribution-compression paper's GTR top-5 (docs/datasets.md#asqa-retrieval)."""
    ret, ds = suite.retrieval, suite.dataset
    if ds.format is not None or ds.name not in LOADERS or LOADERS.canonical(ds.name) != "asqa":
        return []
    if ret.method != "bm25" or ret.corpus != "dataset":
        return []
    note = (
        f"retrieval: BM25 top-{ret.k or 'all'} over the pool of every question's annotator passages (each "
        "question's own among them), a stand-in for the attribution-compression paper's retrieval, ALCE's GTR "
        "top-5 over Wikipedia (suites/asqa_gtr.yaml reads ALCE's GTR file; docs/datasets.md#asqa-retrieval)"
    )
    return [note]


def _source_notes(examples: Sequence[Any]) -> list[str]:
    """What the loader changed in the source text (docs/datasets.md#source-text), for the manifest's notes."""
    marked = [m for e in examples if (m := (getattr(e, "meta", None) or {}).get("source_markers"))]
    if not marked:
        return []
    removed = sum(m.get("footnotes_removed", 0) for m in marked)
    rewritten = sum(m.get("brackets_rewritten", 0) for m in marked)
    done = [f"{removed} footnote marker(s) removed"] if removed else []
    done += [f"{rewritten} citation-like bracket(s) put in parentheses"] if rewritten else []
    note = (
        f"source text: {' and '.join(done)} in the passages of {len(marked)} of {len(examples)} questions, so that "
        "a reader quoting a source cites nothing by it (docs/datasets.md#source-text)"
    )
    return [note]


def input_files(suite: Suite) -> tuple[Path, ...]:
    """The local files the suite reads: its dataset file and every saved reader's answers (refused inside the run
    directory: :func:`rageval.rundir.claim.claim`)."""
    files = [Path(suite.dataset.path).expanduser()] if suite.dataset.path is not None else []
    if files:
        files = [resolve_dataset_path(suite) or files[0]]
    for spec in [suite.reader, *suite.setting_readers().values()]:
        if spec is not None and spec.backend == "saved" and isinstance(spec.params.get("path"), (str, Path)):
            files.append(Path(str(spec.params["path"])).expanduser())
    return tuple(dict.fromkeys(files))


def _summary(
    suite: Suite, examples: Sequence[Any], retrieved: Sequence[Any], retrievals: dict[str, Sequence[Any]]
) -> dict[str, Any]:
    """The manifest's description of the suite's inputs and its offline stand-ins (``sources_hash``: of the
    suite's retrieval, or, when settings retrieve on their own, of every setting's, in setting order); and the budget unit, where the suite names a tokenizer other than the default ``regex``."""
    if suite.retrieval_varies():
        sources = [s for rs in retrievals.values() for r in rs for s in r.snippets]
    else:
        sources = [s for r in retrieved for s in r.snippets]
    unit = {} if suite.tokenizer == DEFAULT_TOKENIZER else {"budget_unit": budget_unit(suite.tokenizer)}
    return {
        **unit,
        "dataset": suite.dataset.name,
        "inputs": {
            "dataset": str(
                suite.dataset.path
                or suite.dataset.hub_id
                or f"shipped sample: {suite.dataset.sample or suite.dataset.name}"
            ),
            "questions": len(examples),
            "questions_hash": sha([[e.id, e.question] for e in examples])[:32],
            "sources_hash": sha([[s.id, s.text] for s in sources])[:32],
            "template_hash": _template_hash(suite.reader),
        },
        "offline_defaults": {
            "judge": suite.judge.spec,
            "reader": suite.reader.backend,
            "note": "lexical judge / extractive reader are model-free stand-ins"
            if suite.judge.spec == "lexical" or suite.reader.backend == "extractive"
            else None,
        },
    }


def _template_hash(spec: Any) -> str | None:
    from rageval.readers import PromptTemplate

    try:
        return PromptTemplate.coerce(spec.template).hash
    except (TypeError, ValueError):
        return None
