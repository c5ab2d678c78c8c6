"""``rageval rescore`` reads a run's records.jsonl as a stream: the places of its records kept, each record read
again (and checked) when the engine takes it, the same items and record order as reading every record whole."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.linestore import KeptLines
from rageval.rescoring.run import RescoreError, RunRecords, plan_rescore
from rageval.rundir.manifest import RunDir


def _score(tmp_path, rows, name="run", *extra):
    src = tmp_path / f"{name}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / name
    res = CliRunner().invoke(main, ["score", str(src), "--out", str(out), "--no-progress", "--no-report", *extra])
    assert res.exit_code == 0, res.output
    return RunDir(out)


def _row(q: int, system: str, context: str = "") -> dict:
    return {
        "id": f"q{q}",
        "question": f"What about {q}?",
        "answer": f"It is {q} [1]. Also {q + 1} [2].",
        "contexts": [f"{q} is a thing. {context}", f"{q + 1} is another thing."],
        "answers": [str(q)],
        "system": system,
    }


@pytest.fixture(scope="module")
def two_systems(tmp_path_factory):
    """Two systems over overlapping questions, in a shuffled file: each setting's questions are not the run's."""
    rng = random.Random(1)
    rows = (
        [_row(q, "A") for q in range(30)]
        + [_row(q, "B") for q in range(30) if q % 3]
        + [_row(q, "B") for q in range(30, 40)]
    )
    rng.shuffle(rows)
    return _score(tmp_path_factory.mktemp("two"), rows)


def test_the_saved_items_and_record_order_are_those_of_reading_every_record(two_systems):
    rundir = two_systems
    manifest = rundir.read_manifest()
    whole = rundir.records()
    run = RunRecords(rundir, manifest)
    plan = plan_rescore(rundir, manifest, run, manifest.scoring_spec(None))
    assert plan.question_order == tuple(dict.fromkeys(r.question_id for r in whole))
    assert (run.n, run.ok) == (len(whole), sum(r.status == "ok" for r in whole))
    assert [sp.name for sp in plan.settings] == [s.name for s in manifest.suite.settings] == ["A", "B"]
    for sp in plan.settings:
        mine = [r for r in whole if r.setting.name == sp.name]
        assert [item.saved for item in sp.items] == mine  # read again, in the order of records.jsonl
        assert len(sp.items) == len(mine) and sp.setting == mine[0].setting
        ids = {r.question_id for r in mine}  # what a tuple of items gives: the run's order, restricted
        assert list(sp.record_questions(plan.question_order)) == [q for q in plan.question_order if q in ids]
    # by hand: A answers q0..q29, B the q that are not multiples of 3 and q30..q39
    b = next(sp for sp in plan.settings if sp.name == "B")
    assert sorted(b.record_questions(plan.question_order), key=lambda q: int(q[1:])) == [
        f"q{q}" for q in range(40) if q >= 30 or q % 3
    ]
    run.close()


def test_a_record_changed_while_rescoring_is_an_error_naming_its_line(two_systems, tmp_path):
    rundir = RunDir(tmp_path / "copy")
    (tmp_path / "copy").mkdir()
    (rundir.path / "manifest.json").write_bytes((two_systems.path / "manifest.json").read_bytes())
    lines = two_systems.records_path.read_bytes().split(b"\n")
    rundir.records_path.write_bytes(b"\n".join(lines))
    run = RunRecords(rundir, rundir.read_manifest())
    assert run.record(1).question_id == json.loads(lines[1])["question_id"]
    lines[1] = lines[1].replace(b'"status": "ok"', b'"status": "OK"', 1)  # the same length, other bytes
    rundir.records_path.write_bytes(b"\n".join(lines))
    with pytest.raises(RescoreError, match=r"records\.jsonl line 2: changed since rescore read it first"):
        run.record(1)
    assert run.record(0).question_id == json.loads(lines[0])["question_id"]  # the lines that did not change
    run.close()


def test_a_record_of_a_setting_the_manifest_does_not_list_is_refused_before_anything_is_written(two_systems, tmp_path):
    rundir = RunDir(tmp_path / "copy")
    (tmp_path / "copy").mkdir()
    (rundir.path / "manifest.json").write_bytes((two_systems.path / "manifest.json").read_bytes())
    text = two_systems.records_path.read_text(encoding="utf-8")
    last = json.loads(text.splitlines()[-1])
    last["setting"]["name"] = "C"
    rundir.records_path.write_text(text + json.dumps(last) + "\n", encoding="utf-8")
    with pytest.raises(RescoreError, match=r"setting 'C' is not a setting of the run \(A, B\)"):
        RunRecords(rundir, rundir.read_manifest())
    res = CliRunner().invoke(main, ["rescore", str(rundir.path)])
    assert res.exit_code == 2 and "setting 'C' is not a setting of the run" in res.output
    assert not (rundir.path / "rescore-lexical").exists()


def test_the_pass_holds_the_places_of_the_records_not_the_records(tmp_path):
    """Records of some 20 KB each: the first pass keeps under 1 KB a record (reading them whole holds more than
    their size), and the rescore of such a run gives the run's metrics back."""
    rundir = _score(tmp_path, [_row(q, "A", "word " * 4000) for q in range(40)], "big", "--diagnostics", "str_em")
    manifest = rundir.read_manifest()
    size = rundir.records_path.stat().st_size
    assert size > 40 * 20_000

    def held(make):
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        if isinstance(kept, RunRecords):
            kept.close()
        return after - before

    # under 1 KB a record, plus a fixed 8 KB: the last record's parse and digest objects, not yet collected
    assert held(lambda: RunRecords(rundir, manifest)) < 40 * 1024 + 8 * 1024
    assert held(rundir.records) > size  # the whole read the streaming pass replaces
    res = CliRunner().invoke(main, ["rescore", str(rundir.path)])
    assert res.exit_code == 0, res.output
    before = [json.loads(x)["metrics"] for x in rundir.records_path.read_text(encoding="utf-8").splitlines()]
    after_path = rundir.path / "rescore-lexical" / "records.jsonl"
    assert [json.loads(x)["metrics"] for x in after_path.read_text(encoding="utf-8").splitlines()] == before


def test_kept_lines_read_back_each_line_and_refuse_a_changed_one(tmp_path):
    from rageval.infiles import JsonLines

    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"q": 1}\r\n\n{"q": "two"}\n{"q": 3}')
    kept = KeptLines(JsonLines(p))
    for lineno, offset, raw, _ in kept.source:
        kept.add(lineno, offset, raw)
    assert [(kept.lineno(i), kept.text(i)) for i in range(len(kept))] == [
        (1, '{"q": 1}'),
        (3, '{"q": "two"}'),
        (4, '{"q": 3}'),
    ]
    kept.close()
    assert kept.text(2) == '{"q": 3}'  # closed, then opened again
    p.write_bytes(b'{"q": 1}\r\n\n{"q": "TWO"}\n{"q": 3}')  # the same length
    assert kept.text(1) is None and kept.text(0) == '{"q": 1}'
    p.write_bytes(b'{"q": 1}\r\n')  # cut short
    assert kept.text(2) is None
    kept.close()
