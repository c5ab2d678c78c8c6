"""The packed record cache of ``rageval score`` (rageval.run.packs.Pack): one pack per setting, one write per
batch, the last entry of a question the one that counts, torn and unreadable lines computed again, packs folded
into one when a run completes; and a score run SIGKILLed at random moments resumes to the same bytes."""

from __future__ import annotations

import json
import logging
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from rageval.run.cache import RecordCache
from rageval.types import Record, Setting


def _rec(qid: str, status: str = "ok", h: str = "h1") -> Record:
    return Record(question_id=qid, setting=Setting("s", "identity"), status=status, input_hash=h)


def _packs(out: Path) -> list[Path]:
    return sorted((out / "cache" / "records").rglob("pack-*.jsonl"))


def test_entries_go_out_at_flush_and_the_last_one_of_a_question_counts(tmp_path):
    cache = RecordCache(tmp_path, packed=True)
    text = cache.write("s", "q1", "h1", _rec("q1"))
    cache.write("s", "q2", "h1", _rec("q2"))
    assert _packs(tmp_path) == []  # nothing written before the batch is flushed
    assert cache.read_line("s", "q1", "h1") == text  # read back: flushed first
    [pack] = _packs(tmp_path)
    cache.close(complete=False)
    assert len(pack.read_bytes().splitlines()) == 2
    # the line is the text a per-record file would hold: {"input_hash", "record"}, the record as records.jsonl has it
    assert json.loads(pack.read_bytes().splitlines()[0]) == {"input_hash": "h1", "record": json.loads(text)}

    again = RecordCache(tmp_path, packed=True)
    assert again.read_entry("s", "q1", "h1")[1] == text
    assert again.read_entry("s", "q1", "h2") is None  # another input: computed again
    again.write("s", "q1", "h2", _rec("q1", "judge_error", "h2"))
    again.close(complete=True)  # two packs folded into one with each question's last entry
    [folded] = _packs(tmp_path)
    assert folded.name == "pack-000003.jsonl"
    lines = [json.loads(x) for x in folded.read_bytes().splitlines()]
    assert sorted((x["record"]["question_id"], x["input_hash"]) for x in lines) == [("q1", "h2"), ("q2", "h1")]
    third = RecordCache(tmp_path, packed=True)
    assert third.read_entry("s", "q1", "h2")[0].status == "judge_error"
    assert third.read_entry("s", "q2", "h1")[0].status == "ok"
    third.close(complete=True)
    assert _packs(tmp_path) == [folded]  # one pack and nothing written: left as it is


def test_a_torn_last_line_is_skipped_and_an_unreadable_one_warned_about(tmp_path, caplog):
    cache = RecordCache(tmp_path, packed=True)
    for q in ("q1", "q2", "q3"):
        cache.write("s", q, "h1", _rec(q))
    cache.close(complete=True)
    [pack] = _packs(tmp_path)
    lines = pack.read_bytes().splitlines(keepends=True)
    pack.write_bytes(lines[0] + b'{"input_hash": "h1", "rec\n' + lines[2][:20])  # q2 garbled, q3 torn by a kill
    with caplog.at_level(logging.WARNING, logger="rageval"):
        again = RecordCache(tmp_path, packed=True)
        got = [again.read_entry("s", q, "h1") is not None for q in ("q1", "q2", "q3")]
    assert got == [True, False, False]
    warnings = [r.getMessage() for r in caplog.records if r.name == "rageval"]
    assert len(warnings) == 1 and "1 unreadable line(s) skipped" in warnings[0]  # the torn tail is no fault


def test_an_entry_that_is_not_a_valid_record_is_not_trusted(tmp_path, caplog):
    cache = RecordCache(tmp_path, packed=True)
    cache.write("s", "q1", "h1", _rec("q1"))
    cache.close(complete=True)
    [pack] = _packs(tmp_path)
    entry = json.loads(pack.read_bytes())
    entry["record"]["status"] = "exploded"  # not a status: not a valid record
    pack.write_text(json.dumps(entry) + "\n")
    with caplog.at_level(logging.WARNING, logger="rageval"):
        assert RecordCache(tmp_path, packed=True).read_entry("s", "q1", "h1") is None
    assert any("unreadable (not a valid record" in r.getMessage() for r in caplog.records)


def _rows(n: int) -> str:
    words = "river city capital museum tower bridge painter novel planet island mountain king queen".split()
    rng = random.Random(0)
    out = []
    for i in range(n):
        ctx = [" ".join(rng.choice(words) for _ in range(12)) + "." for _ in range(3)]
        answer = f"{ctx[0][:-1]} [1]. {' '.join(rng.choice(words) for _ in range(6))} [2][3]."
        row = {"id": f"q{i}", "question": f"Question {i}?", "answer": answer, "contexts": ctx}
        out.append(json.dumps({**row, "answers": [rng.choice(words)]}))
    return "\n".join(out) + "\n"


def test_score_sigkilled_at_random_moments_resumes_to_the_same_bytes(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(_rows(3000))

    def score(out: Path, **kw):
        args = [sys.executable, "-m", "rageval.cli", "score", str(src), "--out", str(out), "--no-report"]
        return subprocess.Popen(args + ["--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)

    ref = tmp_path / "ref"
    proc = score(ref)
    assert proc.wait(timeout=600) == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    expected = (ref / "records.jsonl").read_bytes()
    rng = random.Random(7)
    killed_mid_run = 0
    for trial in range(2):
        out = tmp_path / f"trial{trial}"
        for _ in range(rng.randint(1, 3)):
            proc = score(out)
            time.sleep(rng.uniform(0.5, 4.0))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed_mid_run += 1
            proc.wait(timeout=600)
        proc = score(out)
        assert proc.wait(timeout=600) == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        assert (out / "records.jsonl").read_bytes() == expected, f"trial {trial}: records.jsonl differs"
        assert len(_packs(out)) == 1
    assert killed_mid_run >= 1, "no kill landed mid-run: the test did not exercise resume"
