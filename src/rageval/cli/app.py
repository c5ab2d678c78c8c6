"""The ``rageval`` command line.

Sub-commands are imported lazily: ``rageval --help`` and ``rageval metrics``
import neither torch, transformers nor evaluate (a test checks this), so they
start fast.  Each entry of ``_LAZY`` is ``name -> "module:attribute"`` of a
click command defined where its logic lives.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import errno
import importlib
import os
import signal
import sys
import threading
from typing import Any

import click

from rageval import __version__
from rageval.errors import redact_urls
from rageval.escape import console_text, echo
from rageval.io import printable

_LAZY: dict[str, tuple[str, str]] = {
    # name: (target, one-line help shown by --help without importing the target)
    "suite": ("rageval.suite.cli:suite_cmd", "Run a suite YAML: every question x setting, cached and resumable."),
    "validate": ("rageval.suite.cli:validate_cmd", "Check a suite YAML without running it."),
    "rescore": (
        "rageval.rescoring.cli:rescore_cmd",
        "Recompute every metric of a run directory from its saved records.",
    ),
    "report": ("rageval.report.cli:report_cmd", "Rebuild statistics, tables, plots and the HTML report of a run."),
    "calibrate": (
        "rageval.calibrate.cli:calibrate_cmd",
        "Score a judge against human labels (WiCE support; ALCE's human citation judgments).",
    ),
    "label": (
        "rageval.labels.cli:label_cmd",
        "Export a sample of a run's judge decisions to label by hand, or plan how many to label.",
    ),
    "audit": ("rageval.audit.cli:audit_cmd", "Second-evaluator audit: rescore a subsample with another judge."),
    "export-metrics": (
        "rageval.evaluate_support.export:export_metrics_cmd",
        "Write Hub-ready evaluate module folders (Spaces card, app.py, requirements.txt).",
    ),
    "export": (
        "rageval.cli.export:export_cmd",
        "Export a run's records: jsonl (records.jsonl's bytes), parquet or csv (ids, status, scalar metrics).",
    ),
    "score": ("rageval.score.cli:score_cmd", "Score your RAG system's outputs (generic, ALCE, RAGChecker, RAGAS)."),
    "new-metric": (
        "rageval.evaluate_support.scaffold:new_metric_cmd",
        "Scaffold a diagnostic: pure function, evaluate module, card, catalog entry, common-test case.",
    ),
}


#: User-facing errors (docs/suites.md#errors-and-exit-codes): ``"module:Class" -> exit code``; 2 = the command,
#: the suite or an input is wrong (fix it), 1 = the run could not go on (environment: models, data, disk, a busy
#: output directory), 3 = the run finished with nothing to compare (no record ok, an empty common cohort).  A class is matched only once its module is imported.  Anything else is a bug: traceback.
USER_ERRORS: dict[str, int] = {
    "rageval.errors:ConfigError": 2,
    "rageval.suite.config:SuiteError": 2,
    "rageval.rundir.errors:RunDirError": 2,
    "rageval.io:UnsafePathError": 2,  # a link in a run directory (an OSError: before builtins:OSError)
    "rageval.registry:UnknownNameError": 2,
    "rageval.data.errors:DataLoadError": 2,
    "rageval.compressors.base:CompressorConfigError": 2,
    "rageval.budget:BudgetError": 2,  # the ground layer cannot import rageval.errors
    "rageval.report.load:RunError": 2,
    "rageval.errors:RunFailure": 1,
    "rageval.errors:NothingScored": 3,
    "rageval.errors:ModelUnavailable": 1,
    "rageval.errors:ReaderError": 1,
    "rageval.data.errors:DataUnavailable": 1,
    "rageval.judges.base:JudgeError": 1,
    "builtins:OSError": 1,
}

_OS_FIXES = {
    errno.ENOSPC: "the disk is full: free space or choose another --out, then rerun (finished records are kept)",
    errno.EDQUOT: "the disk quota is exceeded: free space or choose another --out, then rerun",
    errno.EROFS: "read-only file system: choose a writable --out",
    errno.EACCES: "permission denied: choose a writable --out or fix the permissions",
    errno.EPERM: "operation not permitted: choose a writable --out or fix the permissions",
    errno.ENOENT: "no such file or directory: check the path",
    errno.ENOTDIR: "a path component is a file, not a folder: check the path",
    errno.EISDIR: "is a folder, not a file: check the path",
    errno.EEXIST: "a file is in the way of a folder: remove it or choose another --out",
}


def _user_error_code(err: BaseException) -> int | None:
    """The exit code of a user-facing error (:data:`USER_ERRORS`), else None (a bug: let it raise)."""
    for target, code in USER_ERRORS.items():
        module, name = target.split(":")
        mod = sys.modules.get(module)
        cls = getattr(mod, name, None) if mod is not None else None
        if isinstance(cls, type) and isinstance(err, cls):
            return code
    return None


def user_message(err: BaseException) -> str:
    """What the CLI prints for a user-facing error: its message (a list of problems keeps one line each), or for an
    ``OSError`` the file, the system's words and the fix."""
    if isinstance(err, OSError) and err.strerror:
        what = f"{printable(str(err.filename))}: " if err.filename else ""
        name = errno.errorcode.get(err.errno or -1, "")
        fix = _OS_FIXES.get(err.errno or -1)
        return f"{what}{err.strerror} ({name})" + (f"; {fix}" if fix else "")
    text = printable(redact_urls(str(err).strip())) or type(err).__name__
    lines = text.splitlines()
    if len(lines) > 1 and all(line.startswith("  ") for line in lines[1:]):
        return text  # "<file>: invalid suite:" and one indented line per problem
    return " ".join(text.split())


class LazyGroup(click.Group):
    def invoke(self, ctx):
        """Run the sub-command; user-facing errors become one message and an exit code (``--debug``: traceback)."""
        previous = _count_interrupts()
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort):
            raise
        except click.ClickException as err:  # a command's own message; its cause decides the exit code
            cause = err.__cause__ or err.__context__
            code = _user_error_code(cause) if cause is not None else None
            if code is not None and err.exit_code == 1:
                err.exit_code = code
            err.message = console_text(printable(redact_urls(err.message)))
            raise
        except BrokenPipeError:  # the reader of the output went away (`rageval export RUN | head`): quiet, done
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
            raise click.exceptions.Exit(0) from None
        except KeyboardInterrupt:
            if _debug(ctx):
                raise
            raise _Failure("interrupted; rerun the same command to resume (finished records are kept)", 130) from None
        except Exception as err:
            code = _user_error_code(err)
            if code is None or _debug(ctx):
                raise
            raise _Failure(console_text(user_message(err)), code) from None
        finally:
            if previous is not None and not _interrupted.is_set():  # after a Ctrl-C it stays for the exit
                signal.signal(signal.SIGINT, previous)

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


def _exit_now(signum: int, frame: Any) -> None:
    """A second Ctrl-C: exit at once, still 130 (finished records are kept: every file rageval writes is replaced
    atomically, and the next run removes a killed run's temporary files)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(2, b"\nError: interrupted again: exiting now; rerun the same command to resume\n")
    os._exit(130)


_interrupted = threading.Event()


def _on_interrupt(signum: int, frame: Any) -> None:
    """Ctrl-C: the first raises KeyboardInterrupt (the command cleans up, exit 130); one more, while that clean-up
    runs (requests in flight ending within their deadline, threads joined as the interpreter exits), exits at once,
    still 130.  Without it a second Ctrl-C ended the process by the signal itself (exit status -2), past every
    handler."""
    if _interrupted.is_set():
        _exit_now(signum, frame)
    _interrupted.set()
    raise KeyboardInterrupt


def _count_interrupts() -> Any:
    """Install :func:`_on_interrupt` for the command (the main thread, Python's default handler in place); the
    handler it replaces, else None."""
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover - the CLI runs on the main one
        return None
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler and previous is not _on_interrupt:
        return None  # an embedding program's own handler is kept
    signal.signal(signal.SIGINT, _on_interrupt)
    return previous


@atexit.register  # registered first, so it runs after the exit handlers registered later (HTTP clients' closing)
def _ignore_interrupts_at_the_end() -> None:
    """After an interrupt, the interpreter's last moments ignore Ctrl-C: it would put back the default action (death
    by the signal, -2) before it ends, and the exit status must stay 130."""
    if _interrupted.is_set():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Failure(click.ClickException):
    """A user-facing failure: ``Error: <message>`` on stderr, then exit with ``exit_code``."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it a ClassVar; show()/exit read the instance


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.meta.get("rageval.debug")) or os.environ.get("RAGEVAL_DEBUG", "") not in ("", "0")


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rageval")
@click.option("--debug", is_flag=True, help="On an error, show the full traceback (also: RAGEVAL_DEBUG=1).")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """rageval: what did the compressor do to the answer and to the citations?

    Exit codes: 0 done; 1 the run could not go on (models, data, disk, a busy output directory); 2 the command,
    the suite or an input is wrong (the message names what, where and the fix); 3 the run finished with nothing
    to compare (no record ok, an empty common cohort); 130 interrupted.
    """
    ctx.meta["rageval.debug"] = debug
    _escape_unencodable()


def _escapes(err: UnicodeError) -> tuple[str, int]:
    """The codec error handler ``rageval.escape``: what cannot be encoded as a backslash escape, a byte of a file
    name that is not UTF-8 (a lone surrogate U+DC80 … U+DCFF, as ``os.fsdecode`` reads it) as that byte
    (``\\xff``, as :func:`~rageval.io.printable` writes it)."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    bad = err.object[err.start : err.end]
    return "".join(
        printable(c) if 0xDC80 <= ord(c) <= 0xDCFF else c.encode("ascii", "backslashreplace").decode() for c in bad
    ), err.end


codecs.register_error("rageval.escape", _escapes)


def _escape_unencodable() -> None:
    """The console never fails on a character it cannot encode (a file name's byte that is not UTF-8, as a lone
    surrogate; any character under a non-UTF-8 locale), nor writes a raw byte that is not text: it is written as a
    backslash escape (:func:`_escapes`), as the paths rageval writes into files (:func:`~rageval.io.printable`)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(Exception):
                reconfigure(errors="rageval.escape")


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
        echo(f"{name:<{width}}  v{info.version:<7} {info.family:<{fam}}  {arrows[info.direction]}  {info.summary}")
        for label, outs in (("outputs", info.outputs), ("module also", info.module_keys)):
            if outs:
                echo("\n".join(_wrap_keys(label, [f"{o.key} {arrows[o.direction]}" for o in outs])))
    echo(
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
    echo(f"installed {len(paths)} evaluate modules into {where}")
    for p in paths:
        echo(f"  {p.parent.parent.name.split('--', 1)[1]}")


if __name__ == "__main__":  # pragma: no cover
    main()
