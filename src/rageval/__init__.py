"""rageval: metrics for retrieval-augmented generation under context compression.

The documented API, imported on first use (``import rageval`` stays cheap: nothing
heavy — torch, transformers, evaluate — is imported until a feature that needs it
is used)::

    import rageval

    suite = rageval.load_suite("demo")                 # a suite file or a shipped suite's name
    result = rageval.run_suite(suite, "runs/demo")     # plan, execute, report
    scored = rageval.score_files(["outputs.jsonl"], "runs/score")
    result = rageval.evaluate(rows)                    # rows in memory, as `rageval score` scores them
    rageval.rescore("runs/demo", judge="minilm")       # any run directory
    rageval.run_audit("runs/score", "minilm", n=50)    # a second evaluator
    run = rageval.load_run("runs/demo")                # records and manifest, checked
    judge = rageval.get_judge("lexical")

Diagnostics as pure functions: :func:`answer_in_context`, :func:`str_em`,
:func:`answer_f1`, :func:`grounded_precision` and the rest of
``rageval.diagnostics``; the catalog of every diagnostic is :data:`CATALOG`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> "module:attribute" (imported on first use)
_API = {
    # commands
    "load_suite": "rageval.suite.load:load_suite",
    "run_suite": "rageval.suite.run:run_suite",
    "score_files": "rageval.score.run:score_files",
    "evaluate": "rageval.score.memory:evaluate",
    "Evaluation": "rageval.score.memory:Evaluation",
    "ScoreOptions": "rageval.score.run:ScoreOptions",
    "rescore": "rageval.rescoring.run:rescore",
    "run_audit": "rageval.audit.run:run_audit",
    "build_report": "rageval.report.build:build_report",
    "load_run": "rageval.report.load:load_run",
    # the engine and its run directory
    "Plan": "rageval.run.plan:Plan",
    "execute": "rageval.run.engine:execute",
    "RunDir": "rageval.rundir.manifest:RunDir",
    "Manifest": "rageval.rundir.manifest:Manifest",
    # parts
    "get_judge": "rageval.judges:get_judge",
    "get_reader": "rageval.readers:get_reader",
    "get_compressor": "rageval.compressors:get",
    # the data model
    "SourceSnippet": "rageval.types:SourceSnippet",
    "Unit": "rageval.types:Unit",
    "Context": "rageval.types:Context",
    "Answer": "rageval.types:Answer",
    "Setting": "rageval.types:Setting",
    "Record": "rageval.types:Record",
    "Example": "rageval.data.schema:Example",
    # the diagnostics
    "CATALOG": "rageval.diagnostics:CATALOG",
    "answer_in_context": "rageval.diagnostics.answer:answer_in_context",
    "str_em": "rageval.diagnostics.answer:str_em",
    "answer_f1": "rageval.diagnostics.answer:answer_f1",
    "emitted_precision": "rageval.diagnostics.attribution:emitted_precision",
    "emitted_recall": "rageval.diagnostics.attribution:emitted_recall",
    "grounded_precision": "rageval.diagnostics.attribution:grounded_precision",
    "grounded_recall": "rageval.diagnostics.attribution:grounded_recall",
    "attribution_scores_batch": "rageval.diagnostics.attribution:attribution_scores_batch",
}

__all__ = ["__version__", *_API]  # noqa: PLE0604 - the names of _API, one list to keep


def __getattr__(name: str) -> Any:
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'rageval' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # imported once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
