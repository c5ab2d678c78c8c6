"""``rageval report DIR``: rebuild statistics, tables, plots and the HTML report from records."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["report_cmd"]


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--seed", type=int, default=None, help="Resampling seed (default: the suite's seed from the manifest).")
@click.option(
    "--resamples",
    "n_resamples",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Bootstrap and randomization replicates.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write here instead of RUN_DIR.",
)
@click.option("--no-plots", is_flag=True, help="Skip the frontier plots (tables and HTML only).")
def report_cmd(run_dir: Path, seed: int | None, n_resamples: int, out_dir: Path | None, no_plots: bool) -> None:
    """Rebuild statistics, tables, plots and the HTML report of RUN_DIR (no model calls)."""
    from rageval.report.build import build_report

    try:
        written = build_report(run_dir, seed=seed, n_resamples=n_resamples, out_dir=out_dir, plots=not no_plots)
    except ValueError as err:
        raise click.ClickException(str(err)) from err
    for name in sorted(written):
        click.echo(f"{name}: {written[name]}")
