"""The ``rageval`` command line.

Sub-commands are imported lazily: ``rageval --help`` and ``rageval metrics``
import neither torch, transformers nor evaluate (a test checks this), so they
start fast.  Each entry of ``_LAZY`` is ``name -> "module:attribute"`` of a
click command defined where its logic lives.
"""

from __future__ import annotations

import importlib

import click

from rageval import __version__

_LAZY: dict[str, tuple[str, str]] = {
    # name: (target, one-line help shown by --help without importing the target)
    "suite": ("rageval.suite.cli:suite_cmd", "Run a suite YAML: every question x setting, cached and resumable."),
    "validate": ("rageval.suite.cli:validate_cmd", "Check a suite YAML without running it."),
    "rescore": ("rageval.suite.cli:rescore_cmd", "Recompute every metric of a run directory from its saved records."),
    "report": ("rageval.report.cli:report_cmd", "Rebuild statistics, tables, plots and the HTML report of a run."),
    "calibrate": ("rageval.judges.calibrate:calibrate_cmd", "Score a judge against human support labels (WiCE)."),
    "export-metrics": (
        "rageval.evaluate_support.export:export_metrics_cmd",
        "Write Hub-ready evaluate module folders (Spaces card, app.py, requirements.txt).",
    ),
    "score": ("rageval.score.cli:score_cmd", "Score your RAG system's outputs (generic, ALCE, RAGChecker, RAGAS)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(_LAZY))

    def get_command(self, ctx, name):
        if name in self.commands:
            return self.commands[name]
        if name not in _LAZY:
            return None
        module, attr = _LAZY[name][0].split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as err:  # a sub-command not built yet, or a broken install
            raise click.ClickException(f"command {name!r} is unavailable: {err}") from err

    def format_commands(self, ctx, formatter):
        rows = [(name, cmd.get_short_help_str(60)) for name, cmd in sorted(self.commands.items())]
        rows += [(name, help_) for name, (_, help_) in _LAZY.items() if name not in self.commands]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rageval")
def main() -> None:
    """rageval: what did the compressor do to the answer and to the citations?"""


def _wrap_keys(label: str, items: list[str], width: int = 110) -> list[str]:
    """``    label: a ↑, b ↓, ...`` wrapped at ``width`` between items, never inside one."""
    indent = " " * (len(label) + 6)
    lines, line = [], f"    {label}:"
    for i, item in enumerate(items):
        item += "," if i < len(items) - 1 else ""
        if len(line) + 1 + len(item) > width and line.strip() != f"{label}:":
            lines.append(line)
            line = indent[:-1]
        line += " " + item
    return lines + [line]


@main.command("metrics")
def metrics_cmd() -> None:
    """List the diagnostics: name, version, family, direction, summary and output keys."""
    from rageval.diagnostics import CATALOG

    arrows = {"higher": "↑", "lower": "↓", "none": "·"}
    width = max(len(n) for n in CATALOG)
    fam = max(len(s.family) for s in CATALOG.values())
    for name, info in CATALOG.items():  # catalog order: the order of `diagnostics: auto` and of the report
        click.echo(
            f"{name:<{width}}  v{info.version:<7} {info.family:<{fam}}  {arrows[info.direction]}  {info.summary}"
        )
        for label, outs in (("outputs", info.outputs), ("module also", info.module_keys)):
            if outs:
                click.echo("\n".join(_wrap_keys(label, [f"{o.key} {arrows[o.direction]}" for o in outs])))
    click.echo(
        "\n↑ higher is better, ↓ lower is better, · no direction. outputs: the record metrics it writes; "
        "module also: further values its evaluate module returns."
    )


@main.command("install-metrics")
@click.option(
    "--target",
    type=click.Path(file_okay=False),
    default=None,
    help="Modules cache folder (default: $HF_MODULES_CACHE, else $HF_HOME/modules).",
)
def install_metrics_cmd(target: str | None) -> None:
    """Install the evaluate modules so evaluate.load("<name>") works by bare name, offline."""
    from rageval.evaluate_support import install_metrics, modules_cache_dir

    paths = install_metrics(target)
    where = target or str(modules_cache_dir().parent)
    click.echo(f"installed {len(paths)} evaluate modules into {where}")
    for p in paths:
        click.echo(f"  {p.parent.parent.name.split('--', 1)[1]}")


if __name__ == "__main__":  # pragma: no cover
    main()
