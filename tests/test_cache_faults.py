"""A cache corrupter (per-record files of the layout before the record store, and the judge's sqlite file) and
transient failures retried on rerun (a damaged part of the record store: tests/test_cache_packs.py).

Every corruption ends with the file moved to quarantine, a one-line warning that
names it, and the record (or judgement) computed again, with the same result an
intact cache gives; never a traceback.  Transient statuses (reader_error,
judge_error) are computed again by the next run unless --no-retry-failed;
deterministic statuses are reused.
"""

import contextlib
import json
import logging
import math
import random
import shutil
import sqlite3
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from fault_http import FaultServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from record_files import as_record_files

from rageval.judges.base import CallableJudge, JudgeRunner
from rageval.judges.cache import DiskCache, is_corruption, pair_key
from rageval.run.cache import TRANSIENT_STATUSES, RecordCache, _entry_prefix
from rageval.rundir.records import record_text
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite
from rageval.types import Record, Setting


def _write_suite(tmp_path, *, reader="{backend: extractive}", settings="  - {compressor: identity}", name="s"):
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"""\
name: {name}
dataset: {{name: hotpotqa, limit: 2}}
retrieval: {{method: bm25, k: 3}}
settings:
{settings}
reader: {reader}
judge: {{spec: lexical}}
output_dir: {tmp_path / "out"}
""")
    return p


def _run(path, **kw):
    return run_suite(load_suite(path), progress=False, build_report=False, **kw)


def _records(out):
    return [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]


def _stats(out):
    return json.loads((out / "run_stats.json").read_text())


# -- the record cache corrupter --------------------------------------------------------------

CORRUPTIONS = {
    "not utf-8": lambda good: b"\xff\xfe" + good[2:],
    "latin-1 inside": lambda good: good.replace(b'"record"', b'"r\xe9cord"', 1),
    "truncated json": lambda good: good[: len(good) // 2],
    "empty file": lambda good: b"",
    "null": lambda good: b"null",
    "nested too deep": lambda good: b"[" * 200_000 + b"]" * 200_000,
    "a list": lambda good: b"[1, 2, 3]",
    "a number": lambda good: b"42",
    "a string": lambda good: b'"record"',
    "no record": lambda good: json.dumps({"input_hash": json.loads(good)["input_hash"]}).encode(),
    "record is null": lambda good: json.dumps({**json.loads(good), "record": None}).encode(),
    "input_hash not a string": lambda good: json.dumps({**json.loads(good), "input_hash": 7}).encode(),
    "record missing keys": lambda good: _edit(good, lambda r: r.pop("setting")),
    "bad status": lambda good: _edit(good, lambda r: r.update(status="exploded")),
    "setting a string": lambda good: _edit(good, lambda r: r.update(setting="identity")),
    "sources not records": lambda good: _edit(good, lambda r: r.update(sources=[1, 2])),
    "another question": lambda good: _edit(good, lambda r: r.update(question_id="someone-else")),
    "metrics a list": lambda good: _edit(good, lambda r: r.update(metrics=[0.5])),
}


def _edit(good: bytes, change) -> bytes:
    data = json.loads(good)
    change(data["record"])
    return json.dumps(data).encode()


@pytest.fixture(scope="module")
def intact(tmp_path_factory):
    """One intact run: its records.jsonl and the bytes of its first cache file."""
    tmp = tmp_path_factory.mktemp("intact")
    res = _run(_write_suite(tmp))
    return (res.out_dir / "records.jsonl").read_bytes()


@pytest.mark.parametrize("what", sorted(CORRUPTIONS))
def test_a_corrupted_record_is_quarantined_and_recomputed(tmp_path, intact, what, caplog):
    suite = _write_suite(tmp_path)
    out = _run(suite).out_dir
    files = sorted(as_record_files(out))  # the run as a suite wrote it before the record store
    assert len(files) == 2
    victim = files[0]
    bad = CORRUPTIONS[what](victim.read_bytes())
    victim.write_bytes(bad)
    with caplog.at_level(logging.WARNING, logger="rageval"):
        res = _run(suite)
    assert (res.computed, res.reused, res.quarantined) == (1, 1, 1)
    assert _stats(out)["records_quarantined"] == 1
    assert (out / "records.jsonl").read_bytes() == intact  # the same bytes as a run that never broke
    moved = out / "cache" / "quarantine" / "records" / victim.relative_to(out / "cache" / "records")
    assert moved.read_bytes() == bad
    warnings = [r.getMessage() for r in caplog.records if r.name == "rageval"]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert str(victim.relative_to(out)) in warnings[0] and str(moved.relative_to(out)) in warnings[0]
    assert not files[1].exists()  # the intact file's record is in the store now: the file removed
    # and it stays fixed: a third run reuses everything, quarantines nothing
    res = _run(suite)
    assert (res.computed, res.reused, res.quarantined) == (0, 2, 0)


def test_a_folder_in_place_of_a_record_file(tmp_path, intact):
    suite = _write_suite(tmp_path)
    out = _run(suite).out_dir
    victim = min(as_record_files(out))
    victim.unlink()
    victim.mkdir()
    (victim / "junk").write_text("x")
    res = _run(suite)
    assert res.quarantined == 1 and (out / "records.jsonl").read_bytes() == intact


def test_repeated_corruption_keeps_every_quarantined_copy(tmp_path, caplog):
    suite = _write_suite(tmp_path)
    out = _run(suite).out_dir
    victim = min(as_record_files(out))
    for junk in (b"null", b"\xff", b"{"):
        victim.parent.mkdir(parents=True, exist_ok=True)
        victim.write_bytes(junk)
        shutil.rmtree(out / "cache" / "store", ignore_errors=True)  # only the file holds the record
        assert _run(suite).quarantined == 1
    qdir = out / "cache" / "quarantine" / "records" / victim.parent.name
    kept = {p.name: p.read_bytes() for p in qdir.iterdir()}
    assert kept == {victim.name: b"null", f"{victim.name}.1": b"\xff", f"{victim.name}.2": b"{"}


def test_an_older_input_hash_is_recomputed_without_quarantine(tmp_path, caplog):
    suite = _write_suite(tmp_path)
    out = _run(suite).out_dir
    victim = min(as_record_files(out))
    data = json.loads(victim.read_text())
    victim.write_text(json.dumps({**data, "input_hash": "0" * 64}))
    with caplog.at_level(logging.WARNING, logger="rageval"):
        res = _run(suite)
    assert (res.computed, res.quarantined) == (1, 0)
    assert not [r for r in caplog.records if r.name == "rageval"]


def _cache_with_one(tmp_path):
    """A record cache with one per-record file (the layout before the record store)."""
    cache = RecordCache(tmp_path)
    rec = Record(question_id="q1", setting=Setting("s", "identity"), status="ok", input_hash="h")
    path = cache.path("s", "q1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_entry_prefix("h") + record_text(rec.to_dict()) + "}\n")
    return cache, path, rec


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(max_size=200))
def test_record_cache_read_never_raises_on_bytes(tmp_path, junk):
    cache, path, _ = _cache_with_one(tmp_path)
    path.write_bytes(junk)
    assert cache.read("s", "q1", "h") is None  # random bytes are never a valid record
    assert not path.exists() and cache.quarantined


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
RECORD_KEYS = ["question_id", "setting", "status", "context", "sources", "answer", "metrics", "extra", "error"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(RECORD_KEYS), value=JSON)
def test_record_cache_read_never_raises_on_a_damaged_record(tmp_path, key, value):
    """Any one field of a valid record replaced by any JSON value: a Record or a quarantine, never an exception."""
    cache, path, _rec = _cache_with_one(tmp_path)
    data = json.loads(path.read_text())
    data["record"][key] = value
    path.write_text(json.dumps(data))
    got = cache.read("s", "q1", "h")
    if got is None:
        assert cache.quarantined and not path.exists()
    else:
        assert isinstance(got, Record) and got.question_id == "q1" and got.setting.name == "s"


def test_transient_statuses_are_exactly_reader_and_judge_errors():
    assert TRANSIENT_STATUSES == {"reader_error", "judge_error"}


# -- the judge's sqlite file ------------------------------------------------------------------


def _judge(cache_dir):
    fn = CallableJudge(lambda p, h: [0.9 if y in x else 0.1 for x, y in zip(p, h)], judge_id="substr")
    return JudgeRunner(fn, cache_dir=cache_dir)


PREMISES = [f"premise {i} about things " * 8 for i in range(400)]
HYPOTHESES = [f"{i} about" if i % 2 else "absent" for i in range(400)]
EXPECTED = [0.9 if i % 2 else 0.1 for i in range(400)]

SQLITE_CORRUPTIONS = {
    "not a database": lambda good: b"this is not sqlite" * 100,
    "random bytes": lambda good: random.Random(0).randbytes(len(good)),
    "header destroyed": lambda good: b"\x00" * 100 + good[100:],
    "truncated": lambda good: good[: len(good) // 2],
    "pages overwritten": lambda good: good[:4096] + random.Random(1).randbytes(4096) + good[8192:],
}


def _filled_cache(tmp_path):
    r = _judge(tmp_path)
    assert r(PREMISES, HYPOTHESES) == EXPECTED
    r.close()
    with sqlite3.connect(r.cache_path) as db:  # fold the WAL into the file, so the file holds every row
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return r.cache_path


@pytest.mark.parametrize("what", sorted(SQLITE_CORRUPTIONS))
def test_a_corrupted_judge_cache_is_moved_aside_and_rebuilt(tmp_path, what, caplog):
    path = _filled_cache(tmp_path)
    good = path.read_bytes()
    assert len(good) > 3 * 4096
    path.write_bytes(SQLITE_CORRUPTIONS[what](good))
    with caplog.at_level(logging.WARNING, logger="rageval"):
        r = _judge(tmp_path)
        assert r(PREMISES, HYPOTHESES) == EXPECTED  # judged again, same answers
    s = r.stats()
    assert s["cache_rebuilt"] == 1 and s["executed"] == 400 and s["cache_hits"] == 0
    r.close()
    moved = tmp_path / "quarantine" / path.name
    assert moved.read_bytes() == SQLITE_CORRUPTIONS[what](good)
    msgs = [x.getMessage() for x in caplog.records if x.name == "rageval"]
    assert len(msgs) == 1 and "\n" not in msgs[0] and str(path) in msgs[0] and str(moved) in msgs[0]
    again = _judge(tmp_path)  # the rebuilt cache works: every pair from disk now
    assert again(PREMISES, HYPOTHESES) == EXPECTED
    assert again.stats()["cache_hits"] == 400 and again.stats()["cache_rebuilt"] == 0
    again.close()


def test_an_empty_file_is_an_empty_cache_not_a_corruption(tmp_path, caplog):
    (tmp_path / "x").mkdir()
    r = _judge(tmp_path / "x")
    r.close()
    r.cache_path.write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="rageval"):
        r = _judge(tmp_path / "x")
        assert r(PREMISES[:3], HYPOTHESES[:3]) == EXPECTED[:3]
    assert r.stats()["cache_rebuilt"] == 0 and not caplog.records
    r.close()


@pytest.mark.parametrize("op", ["get", "put"])
def test_corruption_found_during_a_run_is_rebuilt_there(tmp_path, op, caplog):
    """A connection that meets a broken file mid-run (get or put): the file is moved aside, the call answered."""
    path = tmp_path / "judge.sqlite"
    disk = DiskCache(path)
    disk.put_many([("k1", 0.5)])
    disk._db.close()
    path.write_bytes(b"garbage" * 1000)
    disk._db = sqlite3.connect(str(path), check_same_thread=False)  # as if the file broke under an open cache
    with caplog.at_level(logging.WARNING, logger="rageval"):
        if op == "get":
            assert disk.get_many(["k1"]) == {}
        else:
            disk.put_many([("k2", 0.25)])
            assert disk.get_many(["k2"]) == {"k2": 0.25}
    assert disk.rebuilt == 1 and (tmp_path / "quarantine" / "judge.sqlite").is_file()
    disk.close()


def test_a_locked_database_is_not_mistaken_for_corruption(tmp_path):
    assert not is_corruption(sqlite3.OperationalError("database is locked"))
    assert not is_corruption(sqlite3.OperationalError("attempt to write a readonly database"))
    assert is_corruption(sqlite3.DatabaseError("file is not a database"))
    assert is_corruption(sqlite3.DatabaseError("database disk image is malformed"))


# -- the judge sqlite file's schema: WITHOUT ROWID for new files, the rowid tables of older ones kept ------------

OLD_SCHEMA = (  # rageval's CREATE statements before WITHOUT ROWID, as they are in older cache files
    "CREATE TABLE judgements (key TEXT PRIMARY KEY, prob REAL NOT NULL)",
    "CREATE TABLE abstentions (key TEXT PRIMARY KEY)",
)


def _schema(path):
    with contextlib.closing(sqlite3.connect(path)) as db:
        return dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))


def _old_file(path, rows):
    with contextlib.closing(sqlite3.connect(path)) as db:
        for sql in OLD_SCHEMA:
            db.execute(sql)
        db.executemany("INSERT INTO judgements VALUES (?, ?)", [(k, p) for k, p in rows if not math.isnan(p)])
        db.executemany("INSERT INTO abstentions VALUES (?)", [(k,) for k, p in rows if math.isnan(p)])
        db.commit()


def test_a_new_judge_cache_has_without_rowid_tables(tmp_path):
    DiskCache(tmp_path / "judge.sqlite").close()
    tables = _schema(tmp_path / "judge.sqlite")
    assert set(tables) == {"judgements", "abstentions"}
    assert all(sql.endswith("WITHOUT ROWID") and "key TEXT PRIMARY KEY" in sql for sql in tables.values())


def test_an_old_schema_judge_cache_is_read_and_written_as_it_is(tmp_path):
    path = tmp_path / "judge.sqlite"
    k = [pair_key("old", f"p{i}", "h") for i in range(4)]
    _old_file(path, [(k[0], 0.25), (k[1], 1.0), (k[2], float("nan"))])
    disk = DiskCache(path)
    got = disk.get_many(k)
    assert set(got) == set(k[:3]) and got[k[0]] == 0.25 and got[k[1]] == 1.0 and math.isnan(got[k[2]])
    disk.put_many([(k[3], 0.5), (k[2], 0.75), (k[0], float("nan"))])  # new, abstention -> prob, prob -> abstention
    disk.close()
    assert _schema(path) == dict(zip(("judgements", "abstentions"), OLD_SCHEMA, strict=True))  # not migrated
    again = DiskCache(path)
    got = again.get_many(k)
    assert (got[k[1]], got[k[2]], got[k[3]]) == (1.0, 0.75, 0.5) and math.isnan(got[k[0]])
    again.close()


def test_a_new_judge_cache_takes_less_disk_per_row_than_the_old_schema(tmp_path):
    """The same 3,000 rows (a few abstentions), stored by DiskCache in batches of 64, into a new file and into
    an old-schema one: the key is stored once (WITHOUT ROWID), not in the table and its primary-key index."""
    rng = random.Random(0)
    rows = [(pair_key("size", f"p{i}", "h"), float("nan") if i % 50 == 0 else rng.random()) for i in range(3000)]
    new, old = tmp_path / "new.sqlite", tmp_path / "old.sqlite"
    _old_file(old, [])
    for path in (new, old):
        disk = DiskCache(path)
        for i in range(0, len(rows), 64):
            disk.put_many(rows[i : i + 64])
        disk.close()
        with contextlib.closing(sqlite3.connect(path)) as db:  # fold the WAL into the file
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    per_row = {p.name: p.stat().st_size / len(rows) for p in (new, old)}
    assert per_row["new.sqlite"] < 0.7 * per_row["old.sqlite"], per_row


def test_a_suite_rerun_over_a_corrupted_judge_cache(tmp_path, caplog):
    suite = _write_suite(tmp_path)
    out = _run(suite).out_dir
    first = (out / "records.jsonl").read_bytes()
    [db] = list((out / "cache" / "judge").glob("*.sqlite"))
    for side in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        side.unlink(missing_ok=True)
    db.write_bytes(b"\x00garbage" * 512)
    shutil.rmtree(out / "cache" / "store")  # so the judge is needed again
    with caplog.at_level(logging.WARNING, logger="rageval"):
        _run(suite)
    assert (out / "records.jsonl").read_bytes() == first
    assert _stats(out)["judge"]["cache_rebuilt"] == 1
    assert (out / "cache" / "judge" / "quarantine" / db.name).is_file()


# -- transient failures retried on rerun ------------------------------------------------------


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.close()


def _openai(server):
    return f"{{backend: openai, params: {{model: m, base_url: '{server.url}', max_retries: 0, timeout: 2}}}}"


def test_reader_errors_are_retried_on_rerun_unless_told_not_to(tmp_path, server):
    suite = _write_suite(tmp_path, reader=_openai(server))
    server.play(("status", {"code": 503}), "non_utf8")  # an outage: two questions, two different faults
    res = _run(suite)
    assert res.status_counts == {"reader_error": 2}
    assert {r["status"] for r in _records(res.out_dir)} == {"reader_error"}
    n = len(server.requests)

    res = _run(suite, retry_failed=False)  # kept as they are, no request sent
    assert (res.reused, res.computed, res.retried) == (2, 0, 0) and len(server.requests) == n

    res = _run(suite)  # the server is back: computed again
    assert (res.reused, res.computed, res.retried) == (0, 2, 2)
    assert res.status_counts == {"ok": 2} and len(server.requests) == n + 2
    assert _stats(res.out_dir)["records_retried"] == 2
    assert [r["answer"]["text"] for r in _records(res.out_dir)] == ["echo [1].", "echo [1]."]

    res = _run(suite)  # ok records are final
    assert (res.reused, res.computed) == (2, 0) and len(server.requests) == n + 2


def test_a_prompt_overflow_is_final(tmp_path, server):
    suite = _write_suite(tmp_path, reader=_openai(server))
    msg = "This model's maximum context length is 16 tokens"
    server.play(*[("status", {"code": 400, "message": msg})] * 2)
    assert _run(suite).status_counts == {"prompt_overflow": 2}
    res = _run(suite)
    assert (res.reused, res.computed) == (2, 0) and len(server.requests) == 2


def test_judge_errors_are_retried_on_rerun(tmp_path, monkeypatch):
    from rageval.judges import JudgeError
    from rageval.judges.lexical import LexicalJudge

    suite = _write_suite(tmp_path)
    real = LexicalJudge.predict

    def broken(self, premises, hypotheses):
        raise JudgeError("judge 'lexical' is out to lunch")

    monkeypatch.setattr(LexicalJudge, "predict", broken)
    assert _run(suite).status_counts == {"judge_error": 2}
    monkeypatch.setattr(LexicalJudge, "predict", real)
    assert _run(suite, retry_failed=False).status_counts == {"judge_error": 2}
    res = _run(suite)
    assert res.status_counts == {"ok": 2} and res.retried == 2


def test_deterministic_failures_are_reused(tmp_path):
    from rageval.compressors import REGISTRY, CompressorError
    from rageval.compressors.base import BaseCompressor

    calls = []

    class Refusing(BaseCompressor):
        name = "refusing"
        PARAMS: ClassVar[dict[str, Any]] = {}

        def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
            calls.append(question)
            raise CompressorError("refuses every input")

    REGISTRY.register("refusing", Refusing)
    try:
        suite = _write_suite(tmp_path, settings="  - {compressor: refusing}")
        assert _run(suite).status_counts == {"compressor_error": 2}
        res = _run(suite)
        assert (res.reused, res.computed, res.retried) == (2, 0, 0) and len(calls) == 2
    finally:
        REGISTRY.unregister("refusing")


def test_cli_retry_flags(tmp_path, server):
    from rageval.cli import main

    suite = _write_suite(tmp_path, reader=_openai(server))
    server.play(*[("status", {"code": 500})] * 2)
    res = CliRunner().invoke(main, ["suite", str(suite), "--no-progress"])
    assert res.exit_code == 3, res.output  # every answer failed: nothing to compare (docs/suites.md exit codes)
    assert "reader_error: 2" in res.output
    res = CliRunner().invoke(main, ["suite", str(suite), "--no-progress", "--no-retry-failed"])
    assert res.exit_code == 3 and "0 computed, 2 reused" in res.output
    res = CliRunner().invoke(main, ["suite", str(suite), "--no-progress", "--retry-failed"])
    assert res.exit_code == 0 and "ok: 2" in res.output and "2 cached failures" in res.output
    assert "--retry-failed / --no-retry-failed" in CliRunner().invoke(main, ["suite", "--help"]).output


@pytest.mark.parametrize(
    "junk,msg",
    [
        (b"null", "names no suite"),
        (b"[]", "names no suite"),
        (b'{"suite": 5}', "names no suite"),
        (b"\xff\xfe{}", "not valid JSON"),
        (b"{", "not valid JSON"),
        (b"[" * 200_000, "not valid JSON"),
    ],
)
def test_an_unreadable_run_marker_is_a_clear_refusal(tmp_path, junk, msg):
    """cache/suite.json says whose run the folder holds: unreadable, the run is refused with the fix, no traceback."""
    from rageval.rundir.manifest import RunDirError

    suite = _write_suite(tmp_path)
    out = _run(suite).out_dir
    (out / "manifest.json").unlink()
    (out / "cache" / "suite.json").write_bytes(junk)
    with pytest.raises(RunDirError, match=msg) as info:
        _run(suite)
    assert "suite.json" in str(info.value) and "choose another --out" in str(info.value)
    assert "\n" not in str(info.value)


# -- sqlite errors that are not corruption: one line, exit 1, the file untouched --------------


def _hold_exclusive(path, how):
    """Another process's lock on ``path``: a second connection inside a ``BEGIN <how>`` transaction."""
    other = sqlite3.connect(str(path), isolation_level=None)
    if how == "EXCLUSIVE":
        other.execute("PRAGMA locking_mode=EXCLUSIVE")
    other.execute(f"BEGIN {how}")
    other.execute("INSERT INTO judgements (key, prob) VALUES ('held', 0.5)")
    return other


def _read_only(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)


@pytest.mark.parametrize("where", ["open", "put"])
def test_a_locked_judge_cache_is_one_line_not_a_traceback(tmp_path, monkeypatch, where):
    from rageval.judges.cache import JudgeCacheError

    monkeypatch.setattr(DiskCache, "busy_timeout", 0.05)
    path = tmp_path / "judge.sqlite"
    disk = DiskCache(path)
    disk.put_many([("k1", 0.5)])
    disk._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if where == "open":
        disk.close()
    other = _hold_exclusive(path, "EXCLUSIVE" if where == "open" else "IMMEDIATE")
    with pytest.raises(JudgeCacheError) as info:
        if where == "open":
            DiskCache(path)
        else:
            disk.put_many([("k2", 0.25)])
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and "busy timeout" in msg, msg
    other.rollback()
    other.close()
    assert path.is_file() and not (tmp_path / "quarantine").exists()  # never mistaken for corruption


def test_a_read_only_judge_cache_is_one_line(tmp_path):
    from rageval.judges.cache import JudgeCacheError

    path = tmp_path / "judge.sqlite"
    disk = DiskCache(path)
    disk.put_many([("k1", 0.5)])
    disk._db.close()
    disk._db = _read_only(path)  # as a read-only file or mount answers every write
    assert disk.get_many(["k1"]) == {"k1": 0.5}  # reading still works
    with pytest.raises(JudgeCacheError, match="read-only") as info:
        disk.put_many([("k2", 0.25)])
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    assert not (tmp_path / "quarantine").exists()


@pytest.mark.parametrize(
    ("code", "words"),
    [(13, "disk is full"), (10, "file-size limit"), (14, "cannot be opened"), (5, "busy timeout"), (1, "remove it")],
)
def test_every_sqlite_code_has_a_fix(tmp_path, code, words):
    from rageval.judges.cache import unusable

    err = sqlite3.OperationalError("some sqlite words\nover two lines")
    err.sqlite_errorcode = code  # the primary code, as sqlite reports it
    msg = str(unusable(tmp_path / "j.sqlite", err))
    assert words in msg and "\n" not in msg and "some sqlite words over two lines" in msg


def test_a_file_size_limit_on_the_judge_cache_stops_the_suite_with_one_line(tmp_path):
    """A real RLIMIT_FSIZE in a child process: the judge cache cannot grow; exit 1, one line, no traceback."""
    import subprocess
    import sys
    import textwrap

    suite = _write_suite(tmp_path)
    script = textwrap.dedent(f"""
        import resource, sys
        from rageval.judges.cache import DiskCache
        real = DiskCache._put_many
        def put_then_limit(self, items):
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.path.stat().st_size, resource.RLIM_INFINITY))
            return real(self, items + [(f"pad{{i}}", 0.5) for i in range(5000)])
        DiskCache._put_many = put_then_limit
        from rageval.cli import main
        sys.argv = ["rageval", "suite", {str(suite)!r}, "--no-progress"]
        main()
    """)
    proc = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    err = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and len(err) == 1 and "judge cache" in err[0], proc.stderr[-2000:]
