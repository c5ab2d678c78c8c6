"""One writer per run directory, records.jsonl of this suite's records only, rescore in its own folder, safe files.

Categories: the lock (a second process refused, a stale lock taken over, re-entrant, no flock, a link at the
lock path); two `rageval suite` processes on one directory; records.jsonl streamed in the run's order (out-of-order
records held or read back), of changed/added settings, and with a cache changed under the run; rescore (own folder and manifest, the run untouched, the lost-results case); files
(umask, links placed in the run directory, full disk by fault injection and on a tiny tmpfs, read-only).
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from record_files import edit_rows

from rageval.cli import main
from rageval.io import UnsafePathError, json_text, write_bytes_atomic, write_text_atomic
from rageval.run.cache import CacheChanged, RecordCache
from rageval.rundir.lock import LOCK_NAME, OutDirBusy, OutDirLock, read_lock
from rageval.rundir.records import RecordsFile
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
from rageval.types import Record

SUITE = """\
name: od
dataset: {{name: hotpotqa, limit: {limit}}}
retrieval: {{method: bm25, k: 3}}
settings:
{settings}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
diagnostics: [answer_f1, emitted_precision, grounded_precision]
contrasts: [{{vs: identity}}]
seed: 0
"""
TWO = "  - {compressor: identity}\n  - {compressor: naive, budgets: [60]}\n"


def suite_file(tmp_path: Path, settings: str = TWO, limit: int = 3, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(SUITE.format(settings=settings, limit=limit))
    return p


def run(args: list[str]):
    return CliRunner().invoke(main, args)


def handled(res) -> bool:
    """The CLI ended with a message and an exit code, not an exception escaping it (a traceback)."""
    return res.exception is None or isinstance(res.exception, SystemExit)


def tree_bytes(d: Path, skip=("run_stats.json",)) -> dict[str, bytes]:
    return {
        str(p.relative_to(d)): p.read_bytes()
        for p in sorted(d.rglob("*"))
        if p.is_file() and p.name not in skip and "cache" not in p.relative_to(d).parts
    }


_HOLDER = """
import sys, time
from rageval.rundir.lock import OutDirLock
lock = OutDirLock(sys.argv[1], "holder").acquire()
print("locked", flush=True)
time.sleep(60)
"""


def hold_lock(directory: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, str(directory)], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    return p


# -- the lock -------------------------------------------------------------------------------------------


def test_a_second_process_is_refused_and_a_stale_lock_is_taken_over(tmp_path, caplog):
    holder = hold_lock(tmp_path)
    try:
        with pytest.raises(OutDirBusy, match=rf"in use by process {holder.pid} \(holder, started"):
            OutDirLock(tmp_path, "me").acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    assert read_lock(tmp_path / LOCK_NAME)["pid"] == holder.pid  # left behind by the kill
    with caplog.at_level(logging.WARNING, logger="rageval"), OutDirLock(tmp_path, "me") as lock:
        assert read_lock(lock.path) == {**read_lock(lock.path), "pid": os.getpid(), "command": "me"}
    assert f"taking over the lock of process {holder.pid}" in caplog.text
    assert not (tmp_path / LOCK_NAME).exists()  # released: removed


def test_the_lock_is_reentrant_in_one_process(tmp_path):
    with OutDirLock(tmp_path, "outer"):
        with OutDirLock(tmp_path / ".", "inner"):
            assert (tmp_path / LOCK_NAME).exists()
        assert read_lock(tmp_path / LOCK_NAME)["command"] == "outer"  # still held by the outer holder
    assert not (tmp_path / LOCK_NAME).exists()


@pytest.mark.parametrize("alive", [True, False], ids=["live pid", "dead pid"])
def test_without_flock_the_pid_decides(tmp_path, monkeypatch, alive):
    import socket

    import rageval.rundir.lock as lk

    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(lk.fcntl, "flock", no_flock)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        if not alive:
            other.kill()
            other.wait(10)
        info = {"pid": other.pid, "host": socket.gethostname(), "command": "other"}
        (tmp_path / LOCK_NAME).write_text(json.dumps(info))
        if alive:
            with pytest.raises(OutDirBusy, match=f"process {other.pid}"):
                OutDirLock(tmp_path).acquire()
        else:
            with OutDirLock(tmp_path):
                assert read_lock(tmp_path / LOCK_NAME)["pid"] == os.getpid()
    finally:
        other.kill()
        other.wait(10)


def test_a_link_at_the_lock_path_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).symlink_to(victim)
    res = run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress"])
    assert res.exit_code == 1 and handled(res)
    assert "is a symbolic link; remove it" in res.output
    assert victim.read_text() == "keep"


def test_the_cli_refuses_a_busy_directory_with_exit_1(tmp_path):
    out = tmp_path / "out"
    assert run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress"]).exit_code == 0
    holder = hold_lock(out)
    try:
        for args in (
            ["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress"],
            ["rescore", str(out)],
            ["report", str(out)],
        ):
            res = run(args)
            assert res.exit_code == 1 and handled(res), res.output
            assert f"in use by process {holder.pid}" in res.output and "--out" in res.output
    finally:
        holder.kill()
        holder.wait(10)


def test_two_suite_processes_on_one_directory(tmp_path):
    """The issue's case: same suite name, different settings, one out dir, at the same time."""
    a = suite_file(tmp_path, limit=12, name="a.yaml")
    b = suite_file(tmp_path, TWO.replace("[60]", "[40]") + "  - {compressor: rerank, budgets: [80]}\n", 12, "b.yaml")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "rageval.cli", "suite"]
    first = subprocess.Popen([*cmd, str(a), "--out", str(out), "--no-progress"], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not (out / LOCK_NAME).exists() and time.time() < deadline and first.poll() is None:
        time.sleep(0.01)
    second = subprocess.run(
        [*cmd, str(b), "--out", str(out), "--no-progress"], check=False, capture_output=True, text=True
    )
    assert first.wait(300) == 0, first.stderr.read()[-2000:]
    if (out / "records.jsonl").exists() and second.returncode == 0:
        pytest.skip("the first run finished before the second started: no overlap to test")
    assert second.returncode == 1, second.stderr
    assert f"in use by process {first.pid}" in second.stderr and "Traceback" not in second.stderr
    assert_consistent(out, ["identity", "naive@60"])
    # then the second suite alone: its changed and added settings are computed, the unchanged one reused
    done = subprocess.run(
        [*cmd, str(b), "--out", str(out), "--no-progress"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert_consistent(out, ["identity", "naive@40", "rerank@80"])
    stats = json.loads((out / "run_stats.json").read_text())
    assert (stats["records_reused"], stats["records_computed"]) == (12, 24)


def assert_consistent(out: Path, settings: list[str]) -> None:
    """records.jsonl holds exactly the manifest's settings, each record the one the cache holds for it."""
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["name"] for s in manifest["suite"]["settings"]] == settings
    recs = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [r["setting"]["name"] for r in recs] == [s for s in settings for _ in range(len(recs) // len(settings))]
    store = RecordCache(out).store
    for r in recs:
        row = store.read(r["setting"]["name"], r["question_id"])
        assert row is not None and row[0] == r["input_hash"] and json.loads(row[2]) == r


# -- records.jsonl ---------------------------------------------------------------------------------------


def test_a_cache_record_changed_under_the_run_is_not_mixed_and_the_rerun_recomputes_it(tmp_path):
    """records.jsonl is streamed from the records in memory: another writer changing a cache entry during the
    run does not reach it, and the next run recomputes the changed record (its input hash no longer matches)."""
    suite = load_suite(suite_file(tmp_path))
    out = tmp_path / "out"
    run_suite(suite, out, progress=False, build_report=False)
    before = (out / "records.jsonl").read_bytes()
    shutil.rmtree(out / "cache" / "store")
    identity: list[str] = []
    edited: list[str] = []

    def tamper(row):
        if row["setting"] == "identity" and row["question_id"] == identity[0]:
            row["input_hash"] = "0" * 32
            edited.append(row["question_id"])

    def on_record(rec):  # another writer edits an identity record's row (a part written) during naive@60's batch
        if rec.setting.name == "identity":
            identity.append(rec.question_id)
        elif rec.setting.name == "naive@60" and not edited:
            [part] = (out / "cache" / "store").glob("part-*.arrow")  # the first batch's part: written at once
            edit_rows(part, tamper)

    run_suite(suite, out, progress=False, build_report=False, on_record=on_record)
    assert edited == identity[:1]  # the row was edited during the run
    assert (out / "records.jsonl").read_bytes() == before
    result = run_suite(suite, out, progress=False, build_report=False)  # the rerun recomputes just that one
    assert (result.computed, result.reused) == (1, 5)
    assert (out / "records.jsonl").read_bytes() == before
    cache = RecordCache(out)
    assert cache.path("naive@60", "x") != cache.path("identity", "x")


def _entry(cache: RecordCache, setting: str, qid: str, h: str) -> str:
    rec = Record.from_dict(
        {"question_id": qid, "setting": {"name": setting, "compressor": "c"}, "status": "ok", "metrics": {"m": 0.5}}
    )
    return cache.write(setting, qid, h, rec)


@pytest.mark.parametrize("keep", [0, 1, 1024])
def test_records_file_writes_out_of_order_records_in_the_run_order_held_or_read_back(tmp_path, keep):
    """Records finished in any order come out in the announced order; beyond ``keep`` held texts they are read
    back from their cache files, and the bytes are the same either way."""
    cache = RecordCache(tmp_path)
    order = [("s1", "a"), ("s1", "b"), ("s1", "c"), ("s2", "a"), ("s2", "b")]
    texts = {k: _entry(cache, *k, f"h-{k[0]}-{k[1]}") for k in order}
    with RecordsFile.open(cache, keep=keep) as out:
        out.expect("s1", [(q, f"h-s1-{q}") for q in ("a", "b", "c")])
        for k in [("s1", "c"), ("s1", "b")]:
            out.put(*k, texts[k])
        assert out.count == 0  # "a" not yet finished: nothing can be written
        out.put("s1", "a", texts[("s1", "a")])
        assert out.count == 3
        out.put("s2", "b", texts[("s2", "b")])  # finished before its setting is announced
        out.expect("s2", [("a", "h-s2-a"), ("b", "h-s2-b")])
        out.put("s2", "a", texts[("s2", "a")])
    assert (tmp_path / "records.jsonl").read_text() == "".join(texts[k] + "\n" for k in order)
    assert [json.loads(line)["question_id"] for line in (tmp_path / "records.jsonl").read_text().splitlines()] == [
        q for _, q in order
    ]


def test_records_file_refuses_a_read_back_file_another_process_changed(tmp_path):
    cache = RecordCache(tmp_path)
    (tmp_path / "records.jsonl").write_text("old\n")
    a, b = _entry(cache, "s", "a", "ha"), _entry(cache, "s", "b", "hb")
    cache.flush()
    [part] = (tmp_path / "cache" / "store").glob("part-*.arrow")
    with (
        pytest.raises(CacheChanged, match="holds a record of other inputs: another process wrote into"),
        RecordsFile.open(cache, keep=0) as out,
    ):
        out.expect("s", [("a", "ha"), ("b", "hb")])
        out.put("s", "b", b)  # let go at once (keep=0): read back when due
        edit_rows(part, lambda row: row.update(input_hash="other" if row["question_id"] == "b" else row["input_hash"]))
        out.put("s", "a", a)
    assert (tmp_path / "records.jsonl").read_text() == "old\n"  # the old file kept, no temporary left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "records.jsonl"]


def test_records_file_with_a_record_missing_is_an_error_and_keeps_the_old_file(tmp_path):
    cache = RecordCache(tmp_path)
    (tmp_path / "records.jsonl").write_text("old\n")
    with (
        pytest.raises(RuntimeError, match="no record of setting 's', question 'b'"),
        RecordsFile.open(cache) as out,
    ):
        out.expect("s", [("a", "ha"), ("b", "hb")])
        out.put("s", "a", _entry(cache, "s", "a", "ha"))
    assert (tmp_path / "records.jsonl").read_text() == "old\n"


def test_a_cache_entry_and_its_records_line_share_one_encoding(tmp_path):
    """The cache's row holds the line's text, the record with its digest (record_text: the one writer of both); a
    key the store cannot hold (a lone surrogate) gets a file, exactly json_text({"input_hash", "record"})."""
    cache = RecordCache(tmp_path)
    rec = Record.from_dict(
        {
            "question_id": "q\u00e9",
            "setting": {"name": "s", "compressor": "c"},
            "status": "ok",
            "metrics": {"m": float("nan"), "n": 1.0},
            "extra": {"lone": "\ud800"},
        }
    )
    text = cache.write("s", "q\u00e9", "h1", rec)
    assert cache.store.read("s", "q\u00e9") == ("h1", json.loads(text)["digest"], text)
    lone = Record.from_dict({**rec.to_dict(), "question_id": "q\udcff"})
    lone_text = cache.write("s", "q\udcff", "h1", lone)
    raw = cache.path("s", "q\udcff").read_text(errors="surrogateescape")
    body = rec.to_dict()
    digest = (
        "sha256:"
        + hashlib.sha256(
            json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
        ).hexdigest()
    )  # the record's canonical JSON, without its digest
    assert text == json_text(body)[:-1] + f', "digest": "{digest}"}}' and '"m": null' in text  # digest last
    assert raw == '{"input_hash": "h1", "record": ' + lone_text + "}\n"
    assert cache.read_entry("s", "q\u00e9", "h1")[1] == text
    assert cache.read_line("s", "q\u00e9", "h1") == text
    assert cache.read_line("s", "q\udcff", "h1") == lone_text


def test_a_changed_or_added_setting_computes_new_records(tmp_path):
    out = tmp_path / "out"
    first = run_suite(load_suite(suite_file(tmp_path)), out, progress=False, build_report=False)
    assert (first.computed, first.reused) == (6, 0)
    changed = TWO.replace(
        "{compressor: naive, budgets: [60]}", "{compressor: naive, budgets: [60], params: {partial: skip}}"
    )
    second = run_suite(
        load_suite(suite_file(tmp_path, changed + "  - {compressor: focused, budgets: [50]}\n", name="t.yaml")),
        out,
        progress=False,
        build_report=False,
    )
    assert (second.computed, second.reused) == (6, 3)  # naive@60 (changed) and focused@50 (added)
    assert_consistent(out, ["identity", "naive@60", "focused@50"])
    recs = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suite"]["settings"][1]["params"] == {"partial": "skip"}
    assert len(recs) == 9


# -- rescore --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rescore")
    out = tmp / "run"
    res = run(["suite", str(suite_file(tmp)), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture()
def yes_judge():
    """A judge that supports no pair: rescoring with it changes the attribution scores."""
    from rageval.judges import JUDGES

    class No:
        id = "always-no-test"

        def predict(self, premises, hypotheses):
            return [0.0] * len(premises)

    JUDGES.register("always-no-test", lambda arg, o: No())
    yield "always-no-test"
    JUDGES.unregister("always-no-test")


def test_rescore_writes_its_own_folder_and_never_changes_the_run(demo_run, tmp_path, yes_judge):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir)
    before = tree_bytes(run_dir)
    res = run(["rescore", str(run_dir), "--judge", yes_judge])
    assert res.exit_code == 0, res.output
    folder = run_dir / f"rescore-{yes_judge}"
    assert f"records: {folder / 'records.jsonl'}" in res.output
    assert tree_bytes(run_dir, skip=("run_stats.json",)) == {
        **before,
        **{k: v for k, v in tree_bytes(run_dir).items() if k.startswith(f"rescore-{yes_judge}/")},
    }
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["suite"]["config"]["judge"]["spec"] == yes_judge
    assert manifest["models"]["judge"] == "always-no-test"
    assert manifest["rescore"]["judge"] == yes_judge and manifest["rescore"]["of_run"] == str(run_dir.resolve())
    assert (folder / "report.html").is_file() and (folder / "summary.md").is_file()
    old = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    new = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    assert [(r["question_id"], r["setting"]["name"], r["status"]) for r in old] == [
        (r["question_id"], r["setting"]["name"], r["status"]) for r in new
    ]
    ok = [r for r in new if r["status"] == "ok" and r["metrics"].get("emitted_precision") is not None]
    assert ok and all(r["metrics"]["emitted_precision"] == 0.0 for r in ok)  # the no-judge's scores
    assert any(r["metrics"].get("emitted_precision") == 1.0 for r in old if r["status"] == "ok")
    # the rescored folder is a run directory of its own
    rep = run(["report", str(folder), "--resamples", "100", "--no-plots"])
    assert rep.exit_code == 0, rep.output


def test_a_later_suite_run_does_not_revert_a_rescore(demo_run, tmp_path, yes_judge):
    """The issue's lost-results case: rescore, then `rageval suite` on the same directory."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir)
    assert run(["rescore", str(run_dir), "--judge", yes_judge]).exit_code == 0
    folder = run_dir / f"rescore-{yes_judge}"
    rescored, run_before = tree_bytes(folder), tree_bytes(run_dir)
    res = run(["suite", str(suite_file(tmp_path)), "--out", str(run_dir), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert tree_bytes(folder) == rescored  # the rescored results are still there, unchanged
    assert without_counters(tree_bytes(run_dir)) == without_counters(run_before)


def without_counters(files: dict[str, bytes]) -> dict[str, bytes]:
    """report.html holds this invocation's cache counters between markers (docs/suites.md); drop them."""
    from rageval.report.html import RUN_COUNTERS_BEGIN, RUN_COUNTERS_END

    out = {}
    for name, data in files.items():
        if name.endswith("report.html"):
            text = data.decode()
            a, b = text.index(RUN_COUNTERS_BEGIN), text.index(RUN_COUNTERS_END)
            data = (text[:a] + text[b:]).encode()
        out[name] = data
    return out


def test_rescore_refuses_what_it_cannot_rescore(tmp_path, demo_run):
    import shutil

    assert "manifest.json is missing" in run(["rescore", str(tmp_path)]).output
    res = run(["rescore", str(tmp_path), "--judge", " "])
    assert res.exit_code == 2 and "--judge" in res.output
    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir)
    res = run(["rescore", str(run_dir), "--judge", "lexcal"])
    assert res.exit_code == 2 and handled(res) and "Did you mean 'lexical'?" in res.output
    (run_dir / "manifest.json").write_text("null\n")
    res = run(["rescore", str(run_dir)])
    assert res.exit_code == 2 and handled(res) and "must hold a JSON object" in res.output
    (run_dir / "records.jsonl").write_bytes(b"\xff\n")
    shutil.copy(demo_run / "manifest.json", run_dir / "manifest.json")
    res = run(["rescore", str(run_dir)])
    assert res.exit_code == 2 and handled(res) and "records.jsonl line 1: not UTF-8" in res.output


# -- files ----------------------------------------------------------------------------------------------


def test_every_output_gets_the_users_umask(tmp_path):
    old = os.umask(0o027)
    try:
        out = tmp_path / "out"
        assert run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress"]).exit_code == 0
    finally:
        os.umask(old)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 10
    modes = {str(p.relative_to(out)): oct(stat.S_IMODE(p.stat().st_mode)) for p in files}
    assert set(modes.values()) == {oct(0o640)}, modes


def test_links_placed_in_the_run_directory_are_refused_never_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").symlink_to(victim)  # refused before anything reads or writes it
    res = run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress", "--figures", "png"])
    assert res.exit_code == 2 and handled(res) and "manifest.json is a symbolic link" in res.output
    (out / "manifest.json").unlink()
    assert (
        run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress", "--figures", "png"]).exit_code == 0
    )
    names = ["records.jsonl", "manifest.json", "report.html", "summary.md", "frontier_answer_f1.png"]
    for n in names:
        saved = (out / n).read_bytes()
        (out / n).unlink()
        (out / n).symlink_to(victim)
        res = run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress", "--figures", "png"])
        assert res.exit_code == 2 and handled(res) and f"{n} is a symbolic link" in res.output, (n, res.output)
        assert len(res.output.strip().splitlines()) == 1
        assert victim.read_text() == "precious" and (out / n).is_symlink()
        (out / n).unlink()
        (out / n).write_bytes(saved)
    assert (
        run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress", "--figures", "png"]).exit_code == 0
    )
    assert (out / "records.jsonl").read_text().count("\n") == 6


def test_a_linked_folder_inside_the_run_directory_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    (out / "cache").mkdir(parents=True)
    (out / "cache" / "records").symlink_to(elsewhere, target_is_directory=True)
    res = run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress"])
    assert res.exit_code == 2 and handled(res), res.output
    assert "cache/records is a symbolic link inside the output directory; remove it" in res.output
    assert not any(elsewhere.iterdir())
    with pytest.raises(UnsafePathError):
        write_text_atomic(out / "cache" / "records" / "x" / "y.json", "{}", root=out)


def _enospc_after(limit: int):
    """An os.write that writes ``limit`` bytes in all, then fails like a full disk."""
    real = os.write
    written = [0]

    def write(fd, data):
        if written[0] + len(data) > limit:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written[0] += len(data)
        return real(fd, data)

    return write


def test_a_full_disk_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "f.json"
    target.write_text("old")
    monkeypatch.setattr("rageval.io.os.write", _enospc_after(0))
    with pytest.raises(OSError) as err:
        write_bytes_atomic(target, b"new" * 1000)
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(target)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


# mid-report: the run writes about 163 kB, report.html (59 kB) last since the figures are drawn by the page
@pytest.mark.parametrize("limit", [0, 20_000, 120_000], ids=["at once", "mid-records", "mid-report"])
def test_a_full_disk_mid_run_is_one_line_then_the_rerun_completes(tmp_path, monkeypatch, limit):
    out = tmp_path / "out"
    monkeypatch.setattr("rageval.io.os.write", _enospc_after(limit))
    res = run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress"])
    assert res.exit_code == 1 and handled(res), res.output
    assert "No space left on device (ENOSPC); the disk is full: free space or choose another --out" in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not list(out.rglob("*.tmp"))
    monkeypatch.undo()
    res = run(["suite", str(suite_file(tmp_path)), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    clean = tmp_path / "clean"
    assert run(["suite", str(suite_file(tmp_path)), "--out", str(clean), "--no-progress"]).exit_code == 0
    assert (out / "records.jsonl").read_bytes() == (clean / "records.jsonl").read_bytes()


def _mount_tmpfs(where: Path, options: str) -> bool:
    if os.geteuid() != 0 or sys.platform != "linux":
        return False
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=False, capture_output=True
    )
    return done.returncode == 0


def test_a_real_full_disk(tmp_path):
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "size=96k"):
        pytest.skip("needs root and tmpfs to make a tiny disk")
    try:
        res = run(["suite", str(suite_file(tmp_path, limit=20)), "--out", str(disk / "out"), "--no-progress"])
        assert res.exit_code == 1 and handled(res), res.output
        # the judge's sqlite ("full; free") or a record-store part ("full: free"), whichever fills the disk first
        assert re.search(r"the disk is full[;:] free space or choose another --out", res.output), res.output
        assert not list(disk.rglob("*.tmp"))
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def test_a_read_only_directory(tmp_path):
    ro = tmp_path / "ro"
    if _mount_tmpfs(ro, "size=1m,ro"):
        expected, cleanup = "(EROFS); read-only file system: choose a writable --out", True
    elif os.geteuid() != 0:
        ro.mkdir()
        ro.chmod(0o555)
        expected, cleanup = "(EACCES); permission denied", False
    else:
        pytest.skip("root without tmpfs: no way to make a directory this process cannot write")
    try:
        for args in (
            ["suite", str(suite_file(tmp_path)), "--out", str(ro / "out"), "--no-progress"],
            ["suite", str(suite_file(tmp_path)), "--out", str(ro), "--no-progress"],
        ):
            res = run(args)
            assert res.exit_code == 1 and handled(res), res.output
            assert expected in res.output and len(res.output.strip().splitlines()) == 1
    finally:
        if cleanup:
            subprocess.run(["umount", "-l", str(ro)], check=True)
