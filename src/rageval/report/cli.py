"""``rageval report RUN_DIR [RUN_DIR ...]``: rebuild statistics, tables, plots and the HTML report from records."""

from __future__ import annotations

from pathlib import Path

import click

from rageval.cli.options import (
    accept_edits_option,
    figures_option,
    human_labels_option,
    no_progress_option,
    out_dir_value,
    resamples_option,
    seed_option,
)
from rageval.escape import echo
from rageval.labels.errors import LabelError
from rageval.report.console import echo_holm

__all__ = ["report_cmd"]


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
    help="Write here instead of RUN_DIR (one run); with several runs and --contrasts: the folder of the "
    "cross-run contrasts (default: FILE's name without its suffix, beside it).",
)
@click.option(
    "--contrasts",
    "contrasts_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="With several runs: a YAML of contrasts and interactions across them, settings named RUNLABEL:setting "
    "(the label: the run's folder name, or labels: in the file); tested on the questions the runs share.",
)
@click.option("--no-plots", is_flag=True, help="No figure, neither in report.html nor as files (tables and HTML only).")
@figures_option()
@click.option(
    "--holm",
    type=click.Choice(["suite", "family"]),
    default=None,
    help="With several runs: Holm over every row of every run (suite) or per family name across the runs "
    "(family). Default: the scope the runs' suites declare.",
)
@human_labels_option()
@accept_edits_option()
@no_progress_option("No progress bar (shown while the records are read, on a terminal).")
def report_cmd(
    run_dirs: tuple[Path, ...],
    seed: int | None,
    n_resamples: int | str | None,
    out_dir: Path | None,
    no_plots: bool,
    figures: tuple[str, ...],
    holm,
    accept_edits: bool,
    contrasts_file: Path | None = None,
    human_labels: Path | None = None,
    no_progress: bool = False,
) -> None:
    """Rebuild statistics, tables, plots and the HTML report of RUN_DIR (no model calls).

    With several RUN_DIRs, each run's report is rebuilt in its own directory and the
    Holm adjustment runs over the union of their contrasts.  ``--contrasts FILE`` adds contrasts across the runs
    (docs/statistics.md#contrasts-across-runs), written to their own folder.
    """
    from rageval.report.build import build_report, build_reports

    if contrasts_file is not None and len(run_dirs) < 2:
        raise click.ClickException("--contrasts takes several RUN_DIRs: it declares contrasts across runs")
    if human_labels is not None and len(run_dirs) > 1:
        raise click.ClickException("--human-labels takes one RUN_DIR: the labels are the pairs of one run")
    if len(run_dirs) > 1 and out_dir is not None and contrasts_file is None:
        raise click.ClickException(
            "--out takes one run: with several RUN_DIRs each report is written into its own run directory"
        )
    try:
        plan = _read_plan(run_dirs, contrasts_file)
        # first: a plan naming an unknown run or setting is refused before any report is written
        cross = _cross_run(run_dirs, contrasts_file, plan, out_dir, seed, n_resamples, accept_edits, not no_progress)
        if len(run_dirs) == 1:
            written = {
                run_dirs[0]: build_report(
                    run_dirs[0],
                    seed=seed,
                    n_resamples=n_resamples,
                    out_dir=out_dir,
                    plots=not no_plots,
                    holm=holm,
                    accept_edits=accept_edits,
                    human_labels=human_labels,
                    figures=figures,
                    progress=not no_progress,
                )
            }
        else:
            written = build_reports(
                run_dirs,
                seed=seed,
                n_resamples=n_resamples,
                plots=not no_plots,
                holm=holm,
                accept_edits=accept_edits,
                figures=figures,
                progress=not no_progress,
            )
    except LabelError:
        raise  # exit 2, one line (rageval.cli.app): a label file that is not the run's, say
    except ValueError as err:
        raise click.ClickException(str(err)) from err
    for run_dir, files in written.items():
        if len(written) > 1:
            echo(f"{run_dir}:")
        prefix = "  " if len(written) > 1 else ""
        for name in sorted(files):
            echo(f"{prefix}{name}: {files[name]}")
        if "report_json" in files:
            echo_holm(files["report_json"], prefix)
    if cross is not None:
        echo("contrasts across runs:")
        for line in cross["lines"]:
            echo(f"  {line}")
        for name in sorted(cross["files"]):
            echo(f"  {name}: {cross['files'][name]}")


def _read_plan(run_dirs, contrasts_file):
    """``(plan, run labels)`` of the cross-run contrasts file, None without one."""
    if contrasts_file is None:
        return None
    from rageval.report.cross_run import read_contrasts_file, run_labels

    spec, given = read_contrasts_file(contrasts_file)
    return spec, run_labels(run_dirs, given)


def _cross_run(run_dirs, contrasts_file, plan, out_dir, seed, n_resamples, accept_edits, progress):
    """The contrasts across the runs of ``plan`` (None without one), written to ``out_dir`` (default: beside
    the contrasts file)."""
    if plan is None:
        return None
    from rageval.report.cross_run import cross_run_contrasts, default_out
    from rageval.report.load import load_run

    spec, labels = plan
    runs = [load_run(d, accept_edits=accept_edits, progress=progress) for d in run_dirs]
    out = Path(out_dir) if out_dir is not None else default_out(contrasts_file)
    return cross_run_contrasts(runs, labels, spec, out, seed=seed, n_resamples=n_resamples, source=str(contrasts_file))
