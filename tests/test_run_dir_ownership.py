"""Run-directory ownership (issue 22): rageval writes only its own output names, refuses an out dir that holds its
inputs or a user's file of one of those names, never follows a link under the run dir, sweeps its temp files.

Categories: user files overwritten (inputs inside the out dir for score, suite dataset, saved reader; a user's
report.html / summary.md / summary.csv; what is not an output name is left alone); writes through links (cache,
cache/judge, the judge's sqlite and its -wal, rescore-*/, audit-*/, a record file, the quarantine, a FIFO); temp
files (swept in every rageval folder, not in the user's names, not inside another lock's rescore-*/); and the
property: any set of links or foreign files in an out dir leaves everything outside rageval's names untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.cli import main
from rageval.io import UnsafePathError
from rageval.judges.cache import DiskCache
from rageval.report import build_report
from rageval.rundir.claim import OwnershipError, claim, is_output_name, owned
from rageval.rundir.manifest import RunDirError
from rageval.score.run import ScoreOptions, score_files

ROWS = [
    {"id": "q1", "question": "Capital of France?", "answer": "Paris [1].", "contexts": ["Paris is in France."]},
    {"id": "q2", "question": "Who wrote Hamlet?", "answer": "Shakespeare [1].", "contexts": ["Shakespeare wrote it."]},
]
FAST = ScoreOptions(diagnostics=["answer_f1", "emitted_precision"])


def write_rows(path: Path, rows=ROWS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli(args: list[str]):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output  # no traceback
    return res


def refused(res, *words: str) -> None:
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    for w in words:
        assert w in res.output, res.output


def scored(tmp_path: Path, out: Path) -> Path:
    """A score run in ``out`` (no report), from an input outside it."""
    score_files([str(write_rows(tmp_path / "in" / "mine.jsonl"))], out, options=FAST, build_report=False)
    return out


def snapshot(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, files in os.walk(root):
        for n in dirnames + files:
            p = Path(dirpath) / n
            rel = str(p.relative_to(root))
            out[rel] = f"-> {os.readlink(p)}" if p.is_symlink() else ("<dir>" if p.is_dir() else p.read_bytes())
    return out


# -- user files overwritten ----------------------------------------------------------------------------------------


def test_score_refuses_its_own_records_as_input(tmp_path):
    out = scored(tmp_path, tmp_path / "out")
    before = (out / "records.jsonl").read_bytes()
    res = cli(["score", out / "records.jsonl", "--out", out])
    refused(res, "records.jsonl is inside the output directory", "rageval would write over its own input")
    assert (out / "records.jsonl").read_bytes() == before


@pytest.mark.parametrize("name", ["summary.csv", "data.jsonl", "sub/deep/answers.jsonl", "cache/mine.jsonl"])
def test_score_refuses_any_input_inside_the_out_dir(tmp_path, name):
    out = tmp_path / "out"
    src = write_rows(out / name)
    if name.endswith(".csv"):  # a RAGAS CSV named summary.csv
        src.write_text("user_input,response,retrieved_contexts\nQ?,Paris [1].,['Paris.']\n", encoding="utf-8")
    before = src.read_bytes()
    refused(cli(["score", src, "--out", out]), "is inside the output directory")
    assert src.read_bytes() == before
    assert not (out / "records.jsonl").exists() and not (out / "manifest.json").exists()


def test_an_input_linked_into_the_out_dir_is_refused(tmp_path):
    out = tmp_path / "out"
    real = write_rows(out / "real.jsonl")
    link = tmp_path / "outside.jsonl"
    link.symlink_to(real)
    refused(cli(["score", link, "--out", out]), "is inside the output directory")


def _suite(tmp_path: Path, data: Path, out: Path, reader: str = "{backend: extractive}") -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(
        "name: own\n"
        f"dataset: {{format: generic, path: {data}}}\n"
        "settings:\n  - {compressor: identity}\n"
        f"reader: {reader}\n"
        "judge: {spec: lexical}\n"
        "diagnostics: [answer_f1]\n"
        f"output_dir: {out}\n"
    )
    return p


def test_a_suite_dataset_or_saved_answers_inside_output_dir_are_refused(tmp_path):
    out = tmp_path / "out"
    data = write_rows(out / "records.jsonl")
    before = data.read_bytes()
    refused(cli(["suite", _suite(tmp_path, data, out), "--no-progress"]), "records.jsonl is inside the output")
    assert data.read_bytes() == before
    outside = write_rows(tmp_path / "d.jsonl")
    answers = write_rows(out / "answers.jsonl")
    saved = f"{{backend: saved, params: {{path: {answers}, format: generic}}}}"
    refused(cli(["suite", _suite(tmp_path, outside, out, saved), "--no-progress"]), "answers.jsonl is inside")
    assert cli(["suite", _suite(tmp_path, outside, tmp_path / "elsewhere", saved), "--no-progress"]).exit_code == 0


@pytest.mark.parametrize("name", ["report.html", "summary.md", "summary.csv", "manifest.json", "cache"])
def test_a_users_file_of_an_output_name_is_never_overwritten(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    mine = out / name
    if name == "cache":
        mine.mkdir()
        (mine / "notes.txt").write_text("mine")
    else:
        mine.write_text("<p>my own page</p>")
    before = snapshot(out)
    src = write_rows(tmp_path / "mine.jsonl")
    words = ("is not rageval's",) if name != "manifest.json" else ()
    res = cli(["score", src, "--out", out])
    refused(res, *words)
    res = cli(["suite", _suite(tmp_path, src, out), "--no-progress"])
    refused(res, *words)
    assert snapshot(out) == before


def test_report_out_refuses_a_users_file_and_marks_a_fresh_dir(tmp_path):
    run = scored(tmp_path, tmp_path / "run")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "report.html").write_text("mine")
    refused(cli(["report", run, "--out", theirs, "--no-plots"]), "report.html is not rageval's")
    assert (theirs / "report.html").read_text() == "mine"
    fresh = tmp_path / "fresh"
    assert cli(["report", run, "--out", fresh, "--no-plots"]).exit_code == 0
    assert owned(fresh) and (fresh / "cache" / "suite.json").is_file()
    assert cli(["report", run, "--out", fresh, "--no-plots"]).exit_code == 0  # its own files: rewritten


def test_files_that_are_not_output_names_are_left_alone(tmp_path):
    out = tmp_path / "out"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "report.html").write_text("deep, not at the top")
    (out / "README.md").write_text("mine")
    (out / ".summary.md.tmp").write_text("not an atomic-writer name")
    (out / ".notes.md.abcdefgh.tmp").write_text("a temp name of a user's file")
    before = snapshot(out)
    scored(tmp_path, out)
    build_report(out, plots=False)
    after = snapshot(out)
    assert {k: after[k] for k in before} == before
    assert all(is_output_name(k.split("/")[0]) for k in set(after) - set(before))


def test_a_first_run_killed_before_its_marker_resumes(tmp_path):
    out = tmp_path / "out"
    (out / "cache").mkdir(parents=True)
    (out / "cache" / ".suite.json.abcdEF12.tmp").write_text("{")  # killed while writing the marker
    (out / ".records.jsonl.abcdEF12.tmp").write_text("half")
    scored(tmp_path, out)
    assert not list(out.rglob("*.tmp"))


# -- writes through links --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where", ["cache", "cache/judge", "cache/records", "cache/store", "cache/quarantine", "rescore-lexical"]
)
def test_a_linked_folder_under_the_run_dir_is_refused(tmp_path, where):
    out = scored(tmp_path, tmp_path / "out")
    target = tmp_path / "target"
    target.mkdir()
    p = out / where
    if p.exists():
        shutil.rmtree(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.symlink_to(target, target_is_directory=True)
    refused(cli(["score", tmp_path / "in" / "mine.jsonl", "--out", out]), f"{where} is a symbolic link")
    refused(cli(["rescore", out]), "is a symbolic link")
    refused(cli(["report", out, "--no-plots"]), "is a symbolic link")
    assert not any(target.iterdir())


def test_a_linked_judge_database_gets_no_table(tmp_path):
    out = scored(tmp_path, tmp_path / "out")
    theirs = tmp_path / "theirs.sqlite"
    with sqlite3.connect(theirs) as db:
        db.execute("CREATE TABLE mine (x)")
    before = theirs.read_bytes()
    dbs = list((out / "cache" / "judge").glob("judge-*.sqlite"))
    assert dbs
    for f in (out / "cache" / "judge").iterdir():
        f.unlink() if f.is_file() else shutil.rmtree(f)
    dbs[0].symlink_to(theirs)
    refused(cli(["score", tmp_path / "in" / "mine.jsonl", "--out", out]), "judge-", "is a symbolic link")
    refused(cli(["rescore", out]), "is a symbolic link")
    assert theirs.read_bytes() == before
    # outside a run directory too: the cache itself refuses a link at its file or at a companion
    with pytest.raises(UnsafePathError, match="is a symbolic link"):
        DiskCache(dbs[0])
    other = tmp_path / "ext" / "judge-0.sqlite"
    other.parent.mkdir()
    (other.parent / "judge-0.sqlite-wal").symlink_to(theirs)
    with pytest.raises(UnsafePathError, match="sqlite-wal is a symbolic link"):
        DiskCache(other)
    assert theirs.read_bytes() == before


def test_links_at_files_and_at_audit_folders_are_refused(tmp_path):
    out = scored(tmp_path, tmp_path / "out")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    rec = next((out / "cache" / "store").glob("part-*.arrow"))  # the record store's part
    saved = rec.read_bytes()
    rec.unlink()
    rec.symlink_to(victim)
    refused(cli(["score", tmp_path / "in" / "mine.jsonl", "--out", out]), rec.name, "is a symbolic link")
    rec.unlink()
    rec.write_bytes(saved)
    (out / "audit-nli").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(OwnershipError, match="audit-nli is a symbolic link"):
        claim(out)
    (out / "audit-nli").unlink()
    (out / "audit-nli" / "cache").mkdir(parents=True)
    (out / "audit-nli" / "cache" / "x.sqlite").symlink_to(victim)
    with pytest.raises(OwnershipError, match="x.sqlite is a symbolic link"):
        claim(out)
    assert victim.read_text() == "precious"


def test_a_fifo_at_an_output_name_is_refused_not_waited_on(tmp_path):
    out = scored(tmp_path, tmp_path / "out")
    (out / "records.jsonl").unlink()
    os.mkfifo(out / "records.jsonl")
    refused(cli(["report", out, "--no-plots"]), "records.jsonl")  # the report's reader: not a file
    refused(cli(["score", tmp_path / "in" / "mine.jsonl", "--out", out]), "is a FIFO")


def test_the_out_dir_itself_may_be_a_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "runs").symlink_to(real, target_is_directory=True)
    scored(tmp_path, tmp_path / "runs")
    assert (real / "records.jsonl").is_file()


# -- temp files ------------------------------------------------------------------------------------------------


def test_claim_sweeps_temps_in_rageval_folders_only(tmp_path):
    out = scored(tmp_path, tmp_path / "out")
    ours = [
        out / ".report.html.abcdEF12.tmp",
        out / ".frontier_answer_f1.png.a_b1C2d3.tmp",
        out / "cache" / ".suite.json.zzzzzzzz.tmp",
        out / "cache" / "store" / ".part-000009.arrow.12345678.tmp",
        out / "audit-nli" / ".audit.md.12345678.tmp",
    ]
    theirs = [out / ".notes.md.abcdEF12.tmp", out / "rescore-lexical" / ".summary.md.abcdEF12.tmp"]
    for p in ours + theirs:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    assert sorted(claim(out)) == sorted(ours)
    assert all(p.exists() for p in theirs)  # a user's name; another lock's run directory (swept by its own claim)


@pytest.mark.parametrize("command", ["score", "report", "rescore"])
def test_every_command_sweeps_a_killed_writers_temps(tmp_path, command):
    out = scored(tmp_path, tmp_path / "out")
    leftovers = [out / ".summary.md.abcdEF12.tmp", out / "cache" / ".plots.json.abcdEF12.tmp"]
    for p in leftovers:
        p.write_text("half")
    args = {
        "score": ["score", tmp_path / "in" / "mine.jsonl", "--out", out],
        "report": ["report", out, "--no-plots"],
        "rescore": ["rescore", out],
    }[command]
    assert cli(args).exit_code in (0, 3)
    assert not any(p.exists() for p in leftovers)


# -- the property ------------------------------------------------------------------------------------------------

_NAMES = [
    "report.html",
    "summary.md",
    "records.jsonl",
    "manifest.json",
    "frontier_x.png",
    "cache",
    "cache/judge",
    "cache/suite.json",
    "cache/records",
    "rescore-lexical",
    "notes.txt",
    "data",
    "summary.md.bak",
]
_KINDS = ["file", "dir", "link-file", "link-dir"]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    base = tmp_path_factory.mktemp("template")
    return scored(base, base / "run")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start_owned=st.booleans(),
    placed=st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(_KINDS), max_size=4),
)
def test_links_and_foreign_files_leave_everything_else_untouched(tmp_path_factory, template, start_owned, placed):
    base = tmp_path_factory.mktemp("prop")
    victims = base / "victims"
    (victims / "d").mkdir(parents=True)
    (victims / "f").write_text("precious")
    out = base / "out"
    if start_owned:
        shutil.copytree(template, out, symlinks=True)
    else:
        out.mkdir()
    for name, kind in sorted(placed.items()):
        p = out / name
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.exists():
            shutil.rmtree(p)
        if not p.parent.is_dir() or p.parent.is_symlink():
            continue  # its folder is a link or a file: nothing can be placed under it
        {
            "file": lambda p: p.write_text("user's"),
            "dir": lambda p: p.mkdir(),
            "link-file": lambda p: p.symlink_to(victims / "f"),
            "link-dir": lambda p: p.symlink_to(victims / "d", target_is_directory=True),
        }[kind](p)
    before = snapshot(out)
    victims_before = snapshot(victims)
    src = write_rows(base / "in.jsonl")
    try:
        score_files([str(src)], out, options=FAST, build_report=False)
        build_report(out, plots=False)
    except (RunDirError, UnsafePathError) as err:  # OwnershipError is a RunDirError
        assert "\n" not in str(err)
        assert snapshot(out) == before  # refused before anything was written
    else:
        assert (out / "records.jsonl").is_file() and not (out / "records.jsonl").is_symlink()
    assert snapshot(victims) == victims_before
    after = snapshot(out)
    for rel, content in before.items():
        if not is_output_name(rel.split("/")[0]):
            assert after.get(rel) == content, rel
