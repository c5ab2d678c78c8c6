"""``rageval label RUN``: export a seeded sample of a run's judge decisions to label by hand, or (``--plan``) say how
many more questions to label for an interval of a given half-width (docs/score.md#human-labels)."""

from __future__ import annotations

from pathlib import Path

import click

from rageval.escape import echo

__all__ = ["label_cmd"]


@click.command("label")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--n", "n", type=click.IntRange(min=1), default=None, help="Questions to draw from the run's cohort.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the uniform draw.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of labels.jsonl, labels.csv, label.html and sample.json.",
)
@click.option("--plan", is_flag=True, help="Say how many questions to label for --width, from --labels so far.")
@click.option("--width", type=float, default=None, help="With --plan: the wanted 95% CI half-width.")
@click.option(
    "--labels",
    "labels_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="With --plan: the labels so far (or a pilot's).",
)
@click.option("--metric", default=None, help="With --plan: the metric planned for (default: every judge-based one).")
def label_cmd(
    run_dir: Path,
    n: int | None,
    seed: int,
    out_dir: Path | None,
    plan: bool,
    width: float | None,
    labels_file: Path | None,
    metric: str | None,
) -> None:
    """Export the judge decisions of N seeded questions of RUN_DIR (every setting of each) to label by hand:
    labels.jsonl (label: null), labels.csv and label.html (one pair at a time, keyboard shortcuts, saves the
    filled file).  Then: rageval report RUN_DIR --human-labels FILE.  With --plan --width W --labels FILE: how
    many more questions to label for a 95% CI half-width W."""
    from rageval.labels.errors import LabelError

    if plan:
        if width is None or labels_file is None:
            raise LabelError("--plan needs --width W (the wanted CI half-width) and --labels FILE (labels so far)")
        if n is not None:
            raise LabelError("--plan takes no --n: it says how many questions to label")
        from rageval.labels.plan import plan_more

        for line in plan_more(run_dir, labels_file, width, metric=metric):
            echo(line)
        return
    if width is not None or labels_file is not None or metric is not None:
        raise LabelError("--width, --labels and --metric go with --plan")
    if n is None or out_dir is None:
        raise LabelError("give --n N (questions to draw) and --out DIR, or --plan")
    from rageval.labels.export import export_labels

    res = export_labels(run_dir, out_dir, n=n, seed=seed)
    echo(
        f"{len(res['questions'])} of {res['cohort']} cohort questions (seed {seed}), {len(res['settings'])} settings: "
        f"{res['pairs']} pairs to label"
    )
    for name, path in res["files"].items():
        echo(f"{name}: {path}")
    echo(f"then: rageval report {run_dir} --human-labels {res['files']['labels_jsonl']}")
