"""``rageval suite``'s front-end: plan the suite, execute the plan with the one engine, build the report.

:func:`run_suite` resolves the suite into a :class:`~rageval.run.plan.Plan`
(:func:`rageval.suite.plan.build_plan`: data, retrieval, diagnostics, settings,
record keys), hands it to :func:`rageval.run.engine.execute` — which computes
what the record cache lacks and writes ``records.jsonl``, ``manifest.json`` and
``run_stats.json`` — and builds the report, all under the run directory's lock.
A resumed run ends with byte-identical files (docs/suites.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from rageval.io import printable
from rageval.report import build_report as _build
from rageval.report.analysis import check_settings
from rageval.run.engine import RunResult, execute
from rageval.run.scale import require_ray
from rageval.rundir.claim import owned, refuse_inputs
from rageval.rundir.manifest import RunDir
from rageval.suite.config import Suite
from rageval.suite.plan import build_plan, input_files
from rageval.types import Record

__all__ = ["run_suite", "report_figures", "RunResult"]


def report_figures(suite: Suite, figures: Sequence[str] | None = None) -> tuple[str, ...]:
    """The figure files the suite's report writes: ``figures`` where given (``--figures``), else the suite's
    ``report.figures``."""
    return tuple(figures) if figures is not None else tuple(suite.report.figures)


def run_suite(
    suite: Suite,
    out_dir: str | Path | None = None,
    *,
    allow_unavailable: bool = False,
    progress: bool = True,
    build_report: bool = True,
    on_record: Callable[[Record], None] | None = None,
    retry_failed: bool = True,
    ray: str | None = None,
    ray_judges: int | None = None,
    human_labels: str | Path | None = None,
    figures: Sequence[str] | None = None,
    records_file: bool = True,
) -> RunResult:
    """Run (or resume) ``suite`` into ``out_dir`` (default: ``suite.output_dir``), holding the directory's lock.

    One writer per output directory (:mod:`rageval.rundir.lock`): a second process on the
    same directory is refused with :class:`~rageval.rundir.lock.OutDirBusy`.

    ``retry_failed``: compute cached records with a transient status (``reader_error``, ``judge_error``) again;
    False reuses them like every other cached record (docs/suites.md#statuses).

    ``ray``: scale out on Ray (:mod:`rageval.run.scale`, docs/scale.md): ``"local"`` starts a local
    instance (or joins the cluster ``RAY_ADDRESS`` names), any other string is the address of a cluster
    (``"auto"``, ``"ray://host:10001"``); questions are compressed and read in Ray tasks and judged by
    ``ray_judges`` Ray actors (default: one per GPU, else one per 4 CPUs), while this process alone
    scores, writes the records and the judge cache.  The outputs are the same bytes as without ``ray``.
    ``human_labels``: a filled label file of ``rageval label`` for this run, added to its report
    (docs/score.md#human-labels).

    ``figures``: the report's figure files (``png``, ``svg``; default: the suite's ``report.figures``, else none:
    report.html draws its own figures).  ``records_file=False``: no ``records.jsonl``; the record store holds the
    records (docs/suites.md#the-record-store-and-rageval-export).
    """
    if ray is not None:
        require_ray()  # a clear install hint before the data is read
    rundir = RunDir(out_dir if out_dir is not None else suite.output_dir)
    refuse_inputs(rundir.path, input_files(suite))  # before they are read (and again under the lock)
    embeddings = _embedding_store(suite, rundir.path)
    plan = dataclasses.replace(build_plan(suite, embeddings=embeddings), records_file=records_file)
    if build_report:  # refused before anything runs, not after
        check_settings(len(plan.settings), printable(suite.source or suite.name))
    with rundir.lock(f"rageval suite {suite.name}"):
        if embeddings is not None and owned(rundir.path):  # a rerun's new embeddings, kept before its records
            embeddings.save()
        result = execute(
            plan,
            rundir,
            allow_unavailable=allow_unavailable,
            progress_bar=progress,
            on_record=on_record,
            retry_failed=retry_failed,
            ray=ray,
            ray_judges=ray_judges,
        )
        if embeddings is not None:  # a first run's: once the engine has claimed the directory
            embeddings.save()
        if build_report:
            result.report = _build(
                rundir.path,
                seed=suite.seed,
                figures=report_figures(suite, figures),
                human_labels=human_labels,
                progress=progress,  # the records read, on a terminal
            )
    return result


def _embedding_store(suite: Suite, path: Path):
    """The run's dense-embedding cache (``cache/embeddings/``) when some retrieval of the suite is dense."""
    specs = [suite.retrieval, *(s for s in suite.setting_retrievals().values() if s is not None)]
    if not any(s.method == "dense" for s in specs):
        return None
    from rageval.dense import EmbeddingStore

    return EmbeddingStore(path / "cache" / "embeddings")
