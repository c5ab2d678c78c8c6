"""The report's progress bar: the records read, on standard error when it is a terminal, and nothing else.

Real processes, stderr on a pseudo-terminal (100 columns) or on a pipe: ``rageval report``'s bar counts
``records.jsonl``'s bytes to the file's size, or a store-only run's records (``--no-records-file``) to their
number; ``--no-progress`` and a stderr that is not a terminal show nothing; standard output is the same in every
case.  ``rageval score`` shows it after its own bar, for the report it ends with."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tqdm import tqdm

from rageval.cli import main

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal (Linux)")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The example's run with ``records.jsonl`` and one written without it (12 records each)."""
    root = tmp_path_factory.mktemp("progress")
    made = {}
    for name, extra in (("file", []), ("store", ["--no-records-file"])):
        out = root / name
        res = CliRunner().invoke(main, ["score", "--example", "--out", str(out), "--no-progress", *extra])
        assert res.exit_code == 0, res.output
        made[name] = out
    assert (made["file"] / "records.jsonl").is_file() and not (made["store"] / "records.jsonl").exists()
    return made


def report(run: Path, *flags: str, terminal: bool, code: int = 0) -> tuple[str, str]:
    """``(stdout, stderr)`` of ``rageval report RUN``, stderr on a 100-column pseudo-terminal or a pipe."""
    return rageval("report", str(run), *flags, terminal=terminal, code=code)


def rageval(*args: str, terminal: bool, code: int = 0) -> tuple[str, str]:
    """``(stdout, stderr)`` of ``rageval ARGS`` (exit ``code``), stderr on a 100-column pseudo-terminal or a pipe."""
    cmd = [sys.executable, "-m", "rageval", *args]
    if not terminal:
        done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == code, done.stderr
        return done.stdout, done.stderr
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == code, b"".join(chunks)[-2000:]
    return out.decode(), b"".join(chunks).decode("utf-8", "replace")


def bar_lines(stderr: str) -> list[str]:
    return [piece for line in stderr.split("\n") for piece in line.split("\r") if "reading records" in piece]


def test_on_a_terminal_the_bar_reads_the_file_to_its_size(runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(runs["file"], run)
    size = (run / "records.jsonl").stat().st_size
    out, err = report(run, terminal=True)
    bars = bar_lines(err)
    total = tqdm.format_sizeof(size)  # how the bar writes a count of bytes (unit_scale: 54.2k)
    assert bars and "100%" in bars[-1] and f"{total}/{total}" in bars[-1] and "B/s" in bars[-1], err[-500:]
    assert bars[-1].startswith("reading records of run:")  # the run it reads, by its folder's name
    assert f"report_html: {run / 'report.html'}" in out.splitlines()  # the report's list of files, on stdout only
    quiet, nothing = report(run, "--no-progress", terminal=True)
    assert not bar_lines(nothing) and quiet == out
    piped, on_pipe = report(run, terminal=False)
    assert on_pipe == "" and piped == out  # stderr is not a terminal: no bar, nothing else either


def test_on_a_terminal_the_bar_counts_a_store_only_runs_records(runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(runs["store"], run)
    _, err = report(run, terminal=True)
    bars = bar_lines(err)
    assert bars and "12/12" in bars[-1] and "rec" in bars[-1], err[-500:]  # 2 settings x 6 questions


def test_several_runs_a_bar_each_and_an_empty_file_none(runs, tmp_path):
    a, b, empty = tmp_path / "a", tmp_path / "b", tmp_path / "empty"
    shutil.copytree(runs["file"], a)
    shutil.copytree(runs["store"], b)
    _, err = report(a, str(b), terminal=True)
    assert {line.split(":")[0] for line in bar_lines(err)} == {"reading records of a", "reading records of b"}
    shutil.copytree(runs["file"], empty)
    (empty / "records.jsonl").write_bytes(b"")
    _, err = report(empty, terminal=True, code=2)
    assert not bar_lines(err) and "holds no record" in err  # the error alone: nothing was there to read


def test_the_python_report_shows_no_bar_unless_asked(runs, tmp_path, capfd):
    from rageval.report import build_report

    run = tmp_path / "run"
    shutil.copytree(runs["file"], run)
    build_report(run)
    assert "reading records" not in capfd.readouterr().err


@pytest.mark.parametrize("flag", [[], ["--no-progress"]])
def test_score_on_a_terminal_shows_the_reading_bar_after_its_own(tmp_path, flag):
    out = tmp_path / "o"
    _, err = rageval("score", "--example", "--out", str(out), *flag, terminal=True)
    bars = bar_lines(err)
    if flag:
        assert not bars and "rageval:" not in err  # neither bar
    else:
        size = tqdm.format_sizeof((out / "records.jsonl").stat().st_size)
        assert bars and f"{size}/{size}" in bars[-1], err[-500:]
        assert err.index("12/12") < err.index("reading records")  # the scoring bar's end, then the report's read
