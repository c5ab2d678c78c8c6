"""``rageval score FILE [FILE ...]``: score your own RAG system's outputs, and compare systems (docs/score.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from rageval.cli.options import (
    figures_option,
    human_labels_option,
    no_progress_option,
    out_dir_value,
    records_file_option,
    resamples_option,
    seed_option,
    threshold_option,
)
from rageval.data.formats import FORMATS, parse_mapping
from rageval.data.formats.layout import ScoreInputError, json_schema
from rageval.errors import ModelUnavailable, NothingScored
from rageval.escape import echo
from rageval.report.console import echo_headline, echo_holm, nothing_scored, say
from rageval.report.headline import run_summary, summary_json
from rageval.rundir.manifest import RunDir, RunDirError
from rageval.score.run import ScoreOptions, ScoreResult, score_files
from rageval.scoring import (
    DEFAULT_GROUNDING,
    DEFAULT_JUDGE,
    DEFAULT_MAX_CITATIONS,
    DEFAULT_THRESHOLD,
    DEFAULT_TOKENIZER,
    AttributionConfig,
)

__all__ = ["EXAMPLE", "score_cmd", "score_inputs"]

#: the shipped example ``rageval score --example`` scores (package data: present in a wheel too)
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "score" / "example.jsonl"


class _InputError(click.ClickException):
    """Input that cannot be scored (a file, a line, a field, an option): exit code 2, as every wrong input."""

    exit_code = 2


class _FormatChoice(click.Choice):
    """``auto`` or a registered format (:data:`~rageval.data.formats.FORMATS`), read from the registry when the
    option is parsed or shown, so a format registered after this module was imported is a choice too."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return ("auto", *FORMATS)

    @choices.setter
    def choices(self, value: object) -> None:  # click.Choice sets it in __init__: the registry decides instead
        pass


def _diagnostics(value: str):
    value = value.strip()
    if value == "auto":
        return "auto"
    return [d.strip() for d in value.split(",") if d.strip()]


@click.command("score")
@click.argument("files", nargs=-1)
@click.option(
    "--format",
    "fmt",
    type=_FormatChoice(),
    default="auto",
    show_default=True,
    help="Input format (auto: detected from each file's content).",
)
@click.option("--map", "mapping", multiple=True, metavar="FIELD=COLUMN", help="RAGAS-style column mapping.")
@click.option("--split", default=None, help="Split of a Hugging Face dataset given as hf:<id>.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="runs/score",
    show_default=True,
    callback=out_dir_value,
)
@click.option(
    "--judge", default=DEFAULT_JUDGE, show_default=True, help="Judge spec ('lexical', a local NLI model path, ...)."
)
@threshold_option(default=DEFAULT_THRESHOLD)
@click.option(
    "--citations",
    type=click.Choice(["auto", "default", "alce"]),
    default="auto",
    show_default=True,
    help="Citation rules; auto: ALCE's when every input is an ALCE result file, else rageval's default.",
)
@click.option("--max-citations", type=click.IntRange(min=1), default=DEFAULT_MAX_CITATIONS, show_default=True)
@click.option("--diagnostics", default="auto", show_default=True, help="'auto' or a comma-separated list.")
@click.option("--baseline", default=None, help="The setting every other is compared with (default: the first).")
@click.option("--all-pairs", is_flag=True, help="Compare every pair of settings instead of each with the baseline.")
@click.option("--tokenizer", default=DEFAULT_TOKENIZER, show_default=True, help="Tokenizer for token counts.")
@click.option(
    "--grounding",
    type=click.Choice(["single", "union"]),
    default=DEFAULT_GROUNDING,
    show_default=True,
    help="Claim support's grounded premise of a unit without provenance: the snippets recovered one by one "
    "(single, the paper's rule) or the union of its top-10 recovery candidates (union: refined texts that "
    "span several sources; docs/score.md#refined-contexts-the-grounding-mode).",
)
@click.option("--k", "retrieval_k", type=click.IntRange(min=1), default=None, help="Retrieval recall@k (default: all).")
@seed_option(default=0, what="Resampling seed of the statistics")
@resamples_option(default="auto", default_help="auto")
@click.option("--no-report", is_flag=True, help="Records only: no statistics, tables, plots or HTML.")
@human_labels_option()
@figures_option()
@records_file_option()
@no_progress_option()
@click.option("--schema", is_flag=True, help="Print the JSON Schema of the generic layout and exit.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary as JSON on stdout (the other lines go to stderr).",
)
@click.option(
    "--example",
    is_flag=True,
    help="Score the shipped example (two systems over six questions) instead of FILE(s).",
)
def score_cmd(
    files,
    fmt,
    mapping,
    split,
    out_dir,
    judge,
    threshold,
    citations,
    max_citations,
    diagnostics,
    baseline,
    all_pairs,
    tokenizer,
    grounding,
    retrieval_k,
    seed,
    n_resamples,
    no_report,
    human_labels,
    figures,
    records_file,
    no_progress,
    schema,
    as_json,
    example,
) -> None:
    """Score FILE(s) a RAG system wrote: generic JSONL, ALCE results, RAGChecker, RAGAS columns or FlashRAG runs.

    Each file (or each `system` value in a file) is a setting; with two or more, each is compared with the
    baseline on their common cohort (paired bootstrap CIs, sign-flip tests, Holm). A FILE may be written
    NAME=FILE to name its setting, or hf:<id> for a Hugging Face dataset.
    """
    if schema:
        echo(json.dumps(json_schema(), indent=2))
        return
    if example:
        if files:
            raise click.UsageError("--example scores the shipped example: give no FILE with it")
        files = (str(EXAMPLE),)
    if not files:
        raise click.UsageError("give at least one FILE (or --example, or --schema)")
    try:
        result = score_inputs(
            files,
            fmt=fmt,
            mapping=mapping,
            split=split,
            out_dir=out_dir,
            judge=judge,
            threshold=threshold,
            citations=citations,
            max_citations=max_citations,
            diagnostics=diagnostics,
            baseline=baseline,
            all_pairs=all_pairs,
            tokenizer=tokenizer,
            retrieval_k=retrieval_k,
            grounding=grounding,
            seed=seed,
            n_resamples=n_resamples,
            no_report=no_report,
            no_progress=no_progress,
            human_labels=human_labels,
            figures=figures,
            records_file=records_file,
        )
    except (ScoreInputError, RunDirError) as err:
        raise _InputError(str(err)) from None
    except Exception as err:  # the rest: environment errors (exit 1, one line) from the command group, bugs raise
        if isinstance(err, ModelUnavailable):
            raise click.ClickException(f"{err}; to score without a model: --judge lexical") from err
        raise
    _summary(result, as_json)
    report_json = result.report.get("report_json") if result.report else None
    problem = nothing_scored(result.status_counts, Path(report_json) if report_json else None)
    if problem is not None:
        raise NothingScored(problem)


def score_inputs(
    files: Sequence[str],
    *,
    fmt: str,
    mapping: Sequence[str],
    split: str | None,
    out_dir: str | Path,
    judge: str,
    threshold: float,
    citations: str,
    max_citations: int,
    diagnostics: str,
    baseline: str | None,
    all_pairs: bool,
    tokenizer: str,
    retrieval_k: int | None,
    seed: int,
    n_resamples: int | str,
    no_report: bool,
    grounding: str = DEFAULT_GROUNDING,
    no_progress: bool,
    human_labels: str | Path | None = None,
    figures: tuple[str, ...] = (),
    records_file: bool = True,
) -> ScoreResult:
    """The body of ``rageval score`` once its options are parsed (each keyword is the option's parameter, as
    :func:`score_cmd` receives it): score ``files`` into ``out_dir``.  :func:`rageval.evaluate` calls it too, with
    its keywords parsed by the same option declarations (:mod:`rageval.score.memory`)."""
    options = ScoreOptions(
        judge=judge,
        threshold=threshold,
        citations=citations,
        max_citations=max_citations,
        diagnostics=_diagnostics(diagnostics),
        tokenizer=tokenizer,
        retrieval_k=retrieval_k,
        attribution=None
        if grounding == DEFAULT_GROUNDING
        else AttributionConfig.model_validate({"grounding": grounding}),
        seed=seed,
        resamples=n_resamples,
        baseline=baseline,
        all_pairs=all_pairs,
    )
    return score_files(
        list(files),
        out_dir,
        fmt=fmt,
        mapping=parse_mapping(mapping),
        split=split,
        options=options,
        progress=not no_progress,
        build_report=not no_report,
        human_labels=human_labels,
        figures=figures,
        records_file=records_file,
    )


def _summary(result, as_json: bool = False) -> None:
    """What the run did, then its judge, headline numbers per setting (a table) and findings, and the report's
    path last (with ``as_json`` the summary as JSON on stdout and every other line on stderr)."""

    def line(text: str) -> None:
        say(text, err=as_json)  # at most 100 characters a line (rageval.report.console.say)

    counts = ", ".join(f"{k}: {v}" for k, v in sorted(result.status_counts.items()))
    line(
        f"{result.n_records} records ({counts}) in {len(result.settings)} setting(s): {', '.join(result.settings)}; "
        f"{result.computed} computed, {result.reused} reused from cache"
    )
    if result.unmatched:
        line(
            f"{len(result.unmatched)} question(s) are not in every setting (outside the common cohort): "
            f"{Path(result.out_dir) / 'unmatched.csv'}"
        )
    for note in result.notes:
        line(f"note: {note}")
    line(f"records: {RunDir(result.out_dir).records_shown()}")
    report = result.report.get("report_html") if result.report else None
    report_json = result.report.get("report_json") if result.report else None
    if report:
        line(f"summary: {Path(result.out_dir) / 'summary.md'}")
        if len(result.settings) > 1:
            line(f"contrasts: {Path(result.out_dir) / 'contrasts.md'}")
            if report_json:
                echo_holm(report_json, "  ", err=as_json)
    summary = run_summary(result.out_dir, report_json)
    if as_json:
        extra = {
            "out_dir": str(result.out_dir),
            "n_records": result.n_records,
            "status_counts": dict(result.status_counts),
            "computed": result.computed,
            "reused": result.reused,
            "n_unmatched": len(result.unmatched),
            "notes": list(result.notes),
            "files": {k: str(v) for k, v in (result.report or {}).items()},
        }
        if report:
            line(f"report: {report}")
        echo(summary_json(summary, extra, result.settings))
        return
    echo_headline(summary)
    if report:
        echo(f"report: {report}")  # the last line: the page that opens on the table above
