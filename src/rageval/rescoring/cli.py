"""``rageval rescore RUN_DIR``: every metric of a run computed again from its saved records (docs/suites.md#rescoring)."""

from __future__ import annotations

from pathlib import Path

import click

from rageval.cli.options import accept_edits_option, figures_option, no_progress_option, non_blank
from rageval.escape import echo

__all__ = ["rescore_cmd"]


@click.command("rescore")
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--judge", default=None, callback=non_blank, help="Rescore with another judge (default: the run's).")
@figures_option()
@accept_edits_option()
@no_progress_option()
def rescore_cmd(
    run_dir: str, judge: str | None, figures: tuple[str, ...] | None, accept_edits: bool, no_progress: bool
) -> None:
    """Recompute every metric of a run from its saved records (no generation) into RUN_DIR/rescore-<judge>/.

    The run's own files are never changed (docs/suites.md#rescoring). A run written with --no-records-file is
    rescored without records.jsonl too.
    """
    from rageval.rescoring.run import rescore  # the command's implementation (numpy, the report)
    from rageval.rundir.manifest import RunDir

    res = rescore(
        Path(run_dir), judge=judge, accept_edits=accept_edits, figures=figures or (), progress=not no_progress
    )
    echo(f"rescored {res.rescored} of {res.n_records} records with judge {res.judge!r} ({res.judge_id})")
    echo(f"records: {RunDir(res.out_dir).records_shown()}")
    echo(f"report: {res.out_dir / 'report.html'}")
