"""The options every front-end's ``cli.py`` shares: replicates, seed, threshold, ``--out`` (the run directory's
path), a non-blank string, ``--accept-edits``, ``--figures``.  (The console lines a finished run prints — headline table, findings, Holm families,
nothing scored — are the report's: :mod:`rageval.report.console`.)"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from rageval.rundir.manifest import RunDirError, run_dir_path
from rageval.stats.resolution import parse_resamples
from rageval.strict import check_probability, check_seed

__all__ = [
    "FIGURE_FORMATS",
    "RESAMPLES_HELP",
    "figure_formats",
    "figures_option",
    "accept_edits_option",
    "non_blank",
    "out_dir_value",
    "resamples_option",
    "seed_option",
    "threshold_option",
]

RESAMPLES_HELP = (
    "Replicates: 'auto' (the sign-flip test's sized so the Holm floor m/(B+1) is at most alpha/10 for the "
    "family; the bootstrap keeps 10,000), 'paper' (10,000 for both, the paper's protocol) or a count for both "
    "(docs/statistics.md#resolution)."
)


def _resamples(ctx: click.Context, param: click.Parameter, value: str | None) -> int | str | None:
    if value is None:
        return None
    try:
        return parse_resamples(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


def resamples_option(default: str | None = None, default_help: str = "the suite's statistics.resamples, else auto"):
    """``--resamples auto|paper|N`` (``rageval report``, ``score``, ``audit``)."""
    return click.option(
        "--resamples",
        "n_resamples",
        default=default,
        metavar="auto|paper|N",
        callback=_resamples,
        help=f"{RESAMPLES_HELP} Default: {default_help}.",
    )


def _seed(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    try:
        return None if value is None else check_seed(value, "--seed")
    except ValueError as err:
        raise click.BadParameter(str(err).removeprefix("--seed "), ctx, param) from None


def out_dir_value(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """The callback of every ``--out``: the run directory's path (:func:`~rageval.rundir.manifest.run_dir_path`)."""
    try:
        return None if value is None else run_dir_path(value)
    except RunDirError as err:
        raise click.BadParameter(str(err), ctx, param) from None


def _threshold(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    try:
        return None if value is None else check_probability(value, "the threshold")
    except ValueError as err:
        raise click.BadParameter(str(err), ctx, param) from None


def threshold_option(default: float | None = None, what: str = "The judge's decision threshold"):
    """``--threshold P`` (``rageval score``, ``audit``): a number in [0, 1]; NaN is refused."""
    return click.option(
        "--threshold",
        type=float,
        default=default,
        show_default=default is not None,
        callback=_threshold,
        help=f"{what}: a number in [0, 1].",
    )


def seed_option(default: int | None = None, what: str = "Resampling seed", default_help: str | None = None):
    """``--seed N`` (``rageval report``, ``score``, ``audit``): a whole number from 0 to 2**63 - 1."""
    shown = f" Default: {default_help}." if default_help else ""
    return click.option(
        "--seed", type=int, default=default, show_default=default is not None, callback=_seed, help=f"{what}.{shown}"
    )


def non_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A string option given blank is refused (leave the option out instead)."""
    if value is not None and not value.strip():
        raise click.BadParameter("is empty; give a value or leave the option out", ctx=ctx, param=param)
    return value


def accept_edits_option():
    """``--accept-edits`` (``rageval report``, ``rescore``, ``audit``): read records whose digest does not match."""
    return click.option(
        "--accept-edits",
        is_flag=True,
        help="Read records edited after rageval wrote them (their digest does not match) instead of refusing "
        "the run; the manifest records which (docs/security.md#run-directories-digests-and-bounds).",
    )


#: the figure files a report writes on request (``--figures png,svg``), in the order they are written
FIGURE_FORMATS = ("png", "svg")


def figure_formats(formats: str | Sequence[str] | None) -> tuple[str, ...]:
    """``formats`` (``"png,svg"``, a list; None or empty: no file) as a tuple in :data:`FIGURE_FORMATS`'s order,
    each once; an unknown format raises ``ValueError`` naming the known ones."""
    if formats is None:
        return ()
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    wanted = {str(f).strip().lower() for f in items if str(f).strip()}
    unknown = sorted(wanted - set(FIGURE_FORMATS))
    if unknown:
        raise ValueError(
            f"unknown figure format {', '.join(map(repr, unknown))}: choose from {', '.join(FIGURE_FORMATS)}"
        )
    return tuple(f for f in FIGURE_FORMATS if f in wanted)


def _figures(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...] | None:
    try:
        return None if value is None else figure_formats(value)
    except ValueError as err:
        raise click.BadParameter(str(err), ctx, param) from None


def human_labels_option():
    """``--human-labels FILE`` (``rageval report``, ``score``, ``suite``): a filled label file of ``rageval label``
    for the run; its report adds the judge-error correction (docs/score.md#human-labels)."""
    return click.option(
        "--human-labels",
        "human_labels",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help="A filled label file of `rageval label` for this run: the report adds the judge-error correction "
        "(PPI++ means and contrasts beside the judge-only ones; ppi.csv, ppi.md; docs/score.md#human-labels).",
    )


def no_progress_option(text: str = "No progress bar."):
    """``--no-progress`` (``rageval score``, ``suite``, ``rescore``, ``report``): no progress bar on standard error
    (:mod:`rageval.progress`); ``text``: the option's help."""
    return click.option("--no-progress", is_flag=True, help=text)


def records_file_option():
    """``--records-file/--no-records-file`` (``rageval score``, ``suite``): write ``records.jsonl`` (the default), or
    keep the records in the run's record store alone (``rageval export DIR`` writes the file's bytes)."""
    return click.option(
        "--records-file/--no-records-file",
        "records_file",
        default=True,
        show_default=True,
        help="Write records.jsonl. --no-records-file: the record store (cache/store/) alone holds the records, a "
        "fraction of the disk (keep cache/store/: it is then the only copy); report, rescore, audit and label read "
        "it, 'rageval export DIR --out FILE' writes the file. A rerun with it removes an older records.jsonl.",
    )


def figures_option():
    """``--figures png,svg`` (``rageval report``, ``score``, ``suite``, ``rescore``): the figure files to write besides
    report.html, which draws its own figures; default: none (matplotlib is not imported)."""
    return click.option(
        "--figures",
        "figures",
        default=None,
        metavar="png,svg",
        callback=_figures,
        help="Also write the figures as files: png, svg or png,svg (frontier_*.png, pareto_*.svg, ...). "
        "Default: none; report.html draws its own figures.",
    )
