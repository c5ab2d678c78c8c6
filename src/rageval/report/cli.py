"""``rageval report RUN_DIR [RUN_DIR ...]``: rebuild statistics, tables, plots and the HTML report from records."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from rageval.run.rundir import RunDirError, run_dir_path
from rageval.stats.resolution import parse_resamples
from rageval.strict import check_probability, check_seed

__all__ = ["report_cmd", "echo_headline", "echo_holm", "nothing_scored", "resamples_option"]

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
    """The callback of every ``--out``: the run directory's path (:func:`~rageval.run.rundir.run_dir_path`)."""
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


def nothing_scored(status_counts: Mapping[str, int], report_json: Path | None) -> str | None:
    """Why a finished run has nothing to compare, else None: no record is ``ok``, or (from ``report.json``) no
    question is ``ok`` in every setting that ran.  The counts are in the message.

    >>> nothing_scored({"reader_error": 6}, None)
    'no record is ok (reader_error: 6): nothing was scored'
    >>> nothing_scored({"ok": 3, "judge_error": 1}, None) is None
    True
    """
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(status_counts.items())) or "no records"
    if not status_counts.get("ok"):
        return f"no record is ok ({counts}): nothing was scored"
    if report_json is None:
        return None
    try:
        cohort = json.loads(Path(report_json).read_text(encoding="utf-8")).get("cohort") or {}
    except (OSError, json.JSONDecodeError):
        return None
    if cohort.get("n") == 0:
        return (
            f"the common cohort is empty: none of the {cohort.get('n_questions')} questions is ok in every setting "
            f"that ran ({counts}); nothing can be compared"
        )
    return None


def echo_headline(summary: Mapping[str, Any], err: bool = False) -> None:
    """Print each setting's headline means (:func:`rageval.report.headline.headline_table`) under a title line."""
    from rageval.report.headline import headline_table

    cohort = summary.get("cohort") or {}
    click.echo(
        f"headline means on the common cohort ({cohort.get('n', '?')} of {cohort.get('n_questions', '?')} "
        "questions; — undefined):",
        err=err,
    )
    click.echo(headline_table(summary), err=err)
    found = summary.get("findings") or []
    if found:  # the findings are the last lines (rageval.report.findings)
        from rageval.report.findings import findings_lines

        click.echo("findings (report.html opens with them):", err=err)
        for line in findings_lines(found):
            click.echo(line, err=err)


def echo_holm(report_json: Path, prefix: str = "", err: bool = False) -> None:
    """Print the contrast count per family and the Holm scope recorded in ``report.json``."""
    from rageval.report.union import describe_holm

    try:
        holm = json.loads(report_json.read_text(encoding="utf-8")).get("holm")
    except (OSError, json.JSONDecodeError):
        return
    if holm:
        for line in describe_holm(holm):
            click.echo(prefix + line, err=err)


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@seed_option(default_help="the suite's seed from the manifest")
@resamples_option()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    callback=out_dir_value,
    help="Write here instead of RUN_DIR (one run only).",
)
@click.option("--no-plots", is_flag=True, help="Skip the frontier plots (tables and HTML only).")
@click.option(
    "--holm",
    type=click.Choice(["suite", "family"]),
    default=None,
    help="With several runs: Holm over every row of every run (suite) or per family name across the runs "
    "(family). Default: the scope the runs' suites declare.",
)
def report_cmd(
    run_dirs: tuple[Path, ...],
    seed: int | None,
    n_resamples: int | str | None,
    out_dir: Path | None,
    no_plots: bool,
    holm,
) -> None:
    """Rebuild statistics, tables, plots and the HTML report of RUN_DIR (no model calls).

    With several RUN_DIRs, each run's report is rebuilt in its own directory and the
    Holm adjustment runs over the union of their contrasts.
    """
    from rageval.report.build import build_report, build_reports

    if len(run_dirs) > 1 and out_dir is not None:
        raise click.ClickException(
            "--out takes one run: with several RUN_DIRs each report is written into its own run directory"
        )
    try:
        if len(run_dirs) == 1:
            written = {
                run_dirs[0]: build_report(
                    run_dirs[0], seed=seed, n_resamples=n_resamples, out_dir=out_dir, plots=not no_plots, holm=holm
                )
            }
        else:
            written = build_reports(run_dirs, seed=seed, n_resamples=n_resamples, plots=not no_plots, holm=holm)
    except ValueError as err:
        raise click.ClickException(str(err)) from err
    for run_dir, files in written.items():
        if len(written) > 1:
            click.echo(f"{run_dir}:")
        prefix = "  " if len(written) > 1 else ""
        for name in sorted(files):
            click.echo(f"{prefix}{name}: {files[name]}")
        if "report_json" in files:
            echo_holm(files["report_json"], prefix)
