"""A run reported in the memory of its columns: records.jsonl read as a stream, the statistics' draws in
bounded blocks, and the same numbers as reading every record whole."""

from __future__ import annotations

import gc
import json
import math
import os
import random
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from test_report import SETTINGS, make_records, make_run

from rageval.infiles import MAX_DEPTH, InputFileError, JsonLines, loads, read_json_lines
from rageval.report import analysis
from rageval.report.examples import setting_examples
from rageval.report.load import Records, RunError, load_run
from rageval.rundir.columns import RecordColumns, common_cohort, metric_table, metric_value
from rageval.stats import resample

# ------------------------------------------------------------------ the depth limit


def _walk_depth(value) -> int:
    """The nesting of arrays and objects, by walking the value (what the limit means)."""
    best, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            best = max(best, d)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return best


def test_the_depth_limit_is_the_nesting_of_the_value_whatever_its_strings_hold():
    rng = random.Random(3)
    tricky = ['[{"', "]}", '\\"[', "\\\\", "{[[", "plain"]
    for _ in range(400):
        depth = rng.choice([1, 3, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 40])
        v = rng.choice(tricky)
        for _ in range(depth):
            if rng.random() < 0.5:
                v = [v, rng.choice(tricky)] if rng.random() < 0.5 else [v]
            else:
                v = {rng.choice(tricky): v, "k": rng.choice(tricky)}
        text = json.dumps(v)
        if _walk_depth(v) > MAX_DEPTH:
            with pytest.raises(InputFileError, match="nested deeper than"):
                loads(text, "t")
        else:
            assert loads(text, "t") == v, text[:80]


# ------------------------------------------------------------------ JSON lines as a stream


def test_a_stream_reads_what_the_whole_file_reading_reads_with_offsets_at_line_starts(tmp_path):
    rng = random.Random(5)
    for case in range(30):
        rows = [{"q": rng.choice(["a", "é", "x\u2028y", "[1]", "\\"]) * rng.randint(1, 5), "i": i} for i in range(20)]
        parts = []
        for r in rows:
            parts.append(json.dumps(r, ensure_ascii=rng.random() < 0.5))
            parts.append(rng.choice(["\n", "\r\n", "\n\n", "\n  \n"]))
        raw = ("\ufeff" if case % 3 == 0 else "") + "".join(parts)
        p = tmp_path / f"f{case}.jsonl"
        p.write_bytes(raw.encode("utf-8"))
        streamed = [(n, at, v) for n, at, _, v in JsonLines(p)]
        assert [(n, v) for n, _, v in streamed] == list(read_json_lines(p))
        data = p.read_bytes()
        for n, at, v in streamed:
            line = data[at:].split(b"\n", 1)[0].decode("utf-8-sig" if at == 0 else "utf-8")
            assert json.loads(line) == v


def test_a_stream_holds_each_line_not_the_file_to_the_size_limit(tmp_path, monkeypatch):
    p = tmp_path / "big.jsonl"
    p.write_text("".join(json.dumps({"i": i, "pad": "x" * 50}) + "\n" for i in range(100)))
    monkeypatch.setenv("RAGEVAL_MAX_INPUT_BYTES", "200")  # the file is ~7 KB, each line ~70 bytes
    assert len(list(JsonLines(p))) == 100
    with pytest.raises(InputFileError):
        list(read_json_lines(p))  # read whole: refused
    with p.open("a") as fh:
        fh.write(json.dumps({"i": 100, "pad": "y" * 300}) + "\n")
    with pytest.raises(InputFileError, match=r"line 101"):
        list(JsonLines(p))


def test_a_bad_byte_in_a_stream_names_its_line_and_file_offset_as_the_whole_reading_does(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(InputFileError) as whole:
        list(read_json_lines(p))
    with pytest.raises(InputFileError) as streamed:
        list(JsonLines(p))
    assert str(streamed.value) == str(whole.value)
    assert "line 2" in str(streamed.value) and "offset 16" in str(streamed.value)  # 9 bytes of line 1, 7 before


# ------------------------------------------------------------------ columns against the records


def _naive_cohort(records, settings):
    seen = {(r["question_id"], r["setting"]["name"]): r["status"] for r in records}
    questions = sorted({q for q, _ in seen})
    left = [
        s
        for s in settings
        if any((q, s) in seen for q in questions) and all(seen.get((q, s)) in (None, "unavailable") for q in questions)
    ]
    fam = [s for s in settings if s not in left]
    return tuple(q for q in questions if fam and all(seen.get((q, s)) == "ok" for s in fam)), tuple(left)


def test_the_columns_give_the_cohort_and_table_a_walk_over_the_records_gives():
    rng = random.Random(11)
    statuses = ["ok", "ok", "ok", "reader_error", "unavailable"]
    for _ in range(60):
        settings = [f"s{j}" for j in range(rng.randint(1, 4))]
        recs = []
        for q in rng.sample(range(40), rng.randint(0, 25)):
            for s in settings:
                if rng.random() < 0.9:
                    st = "unavailable" if s == "s2" and rng.random() < 0.9 else rng.choice(statuses)
                    m = {"x": rng.choice([None, 0, 1, True, 0.25, float("nan")]), "y": rng.random()}
                    recs.append({"question_id": f"q{q}", "setting": {"name": s}, "status": st, "metrics": m})
        rng.shuffle(recs)
        c = common_cohort(recs, settings)
        assert (c.question_ids, c.left_out) == _naive_cohort(recs, settings)
        for s in settings:
            mine = [r for r in recs if r["setting"]["name"] == s]
            assert c.counts[s]["n_records"] == len(mine)
            assert c.counts[s]["n_ok"] == sum(r["status"] == "ok" for r in mine)
        qids = list(c.question_ids)
        table = metric_table([r for r in recs if r["status"] == "ok"], qids, settings, ["x", "y", "absent"])
        for r in recs:
            if r["status"] == "ok" and r["question_id"] in qids:
                i = qids.index(r["question_id"])
                for m in ("x", "y"):
                    want, got = metric_value(r["metrics"][m]), table[(r["setting"]["name"], m)][i]
                    assert (np.isnan(want) and np.isnan(got)) or want == got
        assert all(np.isnan(table[(s, "absent")]).all() for s in settings)


def test_two_records_of_one_question_and_setting_are_named():
    recs = [{"question_id": q, "setting": {"name": "a"}, "status": "ok"} for q in ("q1", "q2", "q3", "q2", "q1")]
    with pytest.raises(ValueError, match=r"two records for question 'q2' in setting 'a'"):
        common_cohort(recs)


def test_a_metric_with_one_non_scalar_value_is_no_column_of_the_tables():
    cols = RecordColumns()
    cols.add({"question_id": "q1", "setting": "a", "status": "ok", "metrics": {"m": 1.0, "n": 2}})
    cols.add({"question_id": "q2", "setting": "a", "status": "ok", "metrics": {"m": [1, 2]}})
    assert cols.scalar == {"m": False, "n": True}
    assert np.isnan(cols.column("n")[1]) and cols.column("n")[0] == 2.0


def test_the_columns_of_records_by_hand():
    class Rec:  # a Record-like object: its dict comes from to_dict
        def to_dict(self):
            return {"question_id": "q1", "setting": "b", "status": "reader_error", "metrics": {"m": None}}

    recs = [
        {"question_id": "q2", "setting": {"name": "a"}, "status": "ok", "metrics": {"m": 1}, "context": {}},
        {
            "question_id": "q1",
            "setting": {"name": "a"},
            "status": "ok",
            "metrics": {"m": 0.5, "n": True},
            "context": {"achieved_ratio": 0.25, "achieved_tokens": 12},
        },
        Rec(),
    ]
    read = []
    cols = RecordColumns.of(r for r in recs if read.append(r) is None)  # a stream, read once, in order
    assert read == recs and len(cols) == 3
    assert (cols.question_ids, cols.settings, cols.statuses) == (["q2", "q1"], ["a", "b"], ["ok", "reader_error"])
    assert [a.tolist() for a in cols.indexes()] == [[0, 1, 1], [0, 0, 1], [0, 0, 1]]
    np.testing.assert_array_equal(cols.column("m"), [1.0, 0.5, np.nan])
    np.testing.assert_array_equal(cols.column("n"), [np.nan, 1.0, np.nan])  # first seen at the second record
    np.testing.assert_array_equal(cols.context_column("achieved_ratio"), [np.nan, 0.25, np.nan])
    np.testing.assert_array_equal(cols.context_column("achieved_tokens"), [np.nan, 12.0, np.nan])
    assert cols.scalar == {"m": True, "n": True}
    bare = RecordColumns.of(recs, metrics=False)
    assert bare.question_ids == ["q2", "q1"] and bare.metrics == {} and len(bare.ratio) == 0


def test_the_metric_table_finds_each_setting_s_records_once(monkeypatch):
    cols = RecordColumns.of(
        {"question_id": q, "setting": {"name": s}, "status": st, "metrics": {"m": m, "n": -m}}
        for q, s, st, m in [
            ("q1", "a", "ok", 1),
            ("q2", "a", "reader_error", 2),
            ("q2", "b", "ok", 3),
            ("q3", "b", "ok", 4),
        ]
    )
    calls = []
    rows = RecordColumns.rows
    monkeypatch.setattr(RecordColumns, "rows", lambda self, s, **kw: calls.append(s) or rows(self, s, **kw))
    t = cols.metric_table(["q2", "q1"], ["a", "b"], ["m", "absent", "n"], ok_only=True)
    assert calls == ["a", "b"]  # one lookup per setting, for its three metrics
    got = {k: v.tolist() for k, v in t.items()}
    assert list(got) == [(s, m) for s in "ab" for m in ("m", "absent", "n")]
    assert got[("a", "m")][1] == 1.0 and got[("a", "n")][1] == -1.0 and np.isnan(got[("a", "m")][0])  # q2 failed
    assert got[("b", "m")][0] == 3.0 and got[("b", "n")][0] == -3.0 and np.isnan(got[("b", "m")][1])  # no q1
    assert all(np.isnan(got[(s, "absent")]).all() for s in "ab")
    pos = cols.positions(["q2", "q1"])
    assert pos.tolist() == [1, 0, 0, -1]
    with_pos = cols.metric_table(["q2", "q1"], ["a", "b"], ["m", "absent", "n"], ok_only=True, pos=pos)
    assert {k: v.tobytes() for k, v in with_pos.items()} == {k: v.tobytes() for k, v in t.items()}


def test_the_report_places_the_cohort_questions_once(tmp_path, monkeypatch):
    run_dir = make_run(tmp_path / "run")
    lines = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]
    run = load_run(run_dir)
    calls = []
    positions = RecordColumns.positions
    monkeypatch.setattr(RecordColumns, "positions", lambda self, q: calls.append(len(q)) or positions(self, q))
    t = analysis._cohort_table(run)
    assert "q003" not in t.qids and len(t.qids) == 29  # failed in one setting (make_records)
    by_hand = [t.qids.index(r["question_id"]) if r["question_id"] in t.qids else -1 for r in lines]
    assert t.pos.tolist() == by_hand and calls == [29]
    calls.clear()
    an = analysis.analyze(run, n_resamples=200)
    assert calls == [29]  # the metric table, both context columns, the frontier's axes and the sweep share it
    assert an.sweep and an.summary[0]["achieved_ratio"] is not None


def test_the_sweep_keeps_each_value_s_record_index(tmp_path):
    run = load_run(make_run(tmp_path / "run"))
    lines = [json.loads(x) for x in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert run.sweeps.by_key
    for (s, t), (at, rate, _gp) in run.sweeps.by_key.items():
        for i, r in zip(at, rate):
            rec = lines[i]
            assert rec["setting"]["name"] == s and rec["status"] == "ok"
            want = next(v["rate"] for k, v in rec["extra"]["reattribution_sweep"].items() if float(k) == t)
            assert r == want


def test_the_metric_table_is_made_on_access_from_the_columns():
    recs = [
        {"question_id": q, "setting": {"name": s}, "status": st, "metrics": {"m": v, "k": 2.0}}
        for q, s, st, v in [
            ("q2", "a", "ok", 1.0), ("q1", "a", "ok", None), ("q1", "b", "ok", 0.5), ("q2", "b", "reader_error", 3.0),
            ("q3", "b", "ok", 7.0),
        ]
    ]  # fmt: skip
    cols = RecordColumns.of(recs)
    t = cols.metric_table(["q1", "q2", "q3"], ["a", "b"], ["m", "k", "absent"], ok_only=True)
    # by hand: q1 a undefined, q2 a 1.0, q3 a no record; q1 b 0.5, q2 b not ok, q3 b 7.0
    assert np.array_equal(t[("a", "m")], [np.nan, 1.0, np.nan], equal_nan=True)
    assert np.array_equal(t[("b", "m")], [0.5, np.nan, 7.0], equal_nan=True)
    assert np.array_equal(t[("b", "absent")], [np.nan] * 3, equal_nan=True)
    assert t[("a", "m")] is not t[("a", "m")]  # a new array at each access: the table holds no copy
    assert ("a", "k") in t and ("c", "m") not in t and ("a", "x") not in t
    with pytest.raises(KeyError):
        t[("a", "x")]
    t[("a", "ctx")] = np.zeros(3)
    assert list(t) == [(s, m) for s in "ab" for m in ("m", "k", "absent")] + [("a", "ctx")] and len(t) == 7
    assert t.get(("b", "ctx")) is None and t[("a", "ctx")].tolist() == [0.0, 0.0, 0.0]


# ------------------------------------------------------------------ the statistics' draws in blocks


def _by_row(drawn, k):
    """Per row, how often each of ``k`` indexes was drawn (a bincount a row: the counts by hand)."""
    return np.array([np.bincount(row.astype(np.int64), minlength=k) for row in drawn], dtype=np.float32)


@pytest.mark.parametrize("k", [300, 1001, 70_000])
def test_counts_in_row_blocks_are_one_uint32_draw_whatever_the_block_size(monkeypatch, k):
    b = 13
    one = list(resample._counts(np.random.default_rng(9), b, k))  # 13 x k cells: one block
    assert [lo for lo, _ in one] == [0]
    # one block: up to 65,535 blocks numpy's uint16 draw of the whole chunk (as before); above, uint32 draws,
    # the values of the int64 draws of before
    whole = np.random.default_rng(9).integers(0, k, size=(b, k), dtype=np.uint16 if k <= 65535 else np.int64)
    assert np.array_equal(one[0][1], _by_row(whole, k))
    u32 = _by_row(np.random.default_rng(9).integers(0, k, size=(b, k), dtype=np.uint32), k)
    for rows, starts in [(2, [0, 2, 4, 6, 8, 10, 12]), (5, [0, 5, 10])]:
        monkeypatch.setattr(resample, "_MAX_DRAW_CELLS", rows * k)
        monkeypatch.setattr(resample, "_BLOCK_CELLS", rows * k)
        blocked = list(resample._counts(np.random.default_rng(9), b, k))
        assert [lo for lo, _ in blocked] == starts
        assert all(w.shape == (min(rows, b - lo), k) for lo, w in blocked)
        assert np.array_equal(np.vstack([w for _, w in blocked]), u32)  # one uint32 draw of the chunk
        assert (u32.sum(axis=1) == k).all()  # each resample draws k blocks


@pytest.mark.parametrize("k", [300, 1001, 70_001])
def test_sign_bits_in_row_blocks_are_the_bytes_of_one_draw(monkeypatch, k):
    b = 13
    raw = np.random.default_rng(9).integers(0, 256, size=(b, (k + 7) // 8), dtype=np.uint8)
    whole = np.unpackbits(raw, axis=1, count=k).astype(np.float64)
    for cells, starts in [(10**9, [0]), (2 * k, [0, 4, 8, 12]), (9 * k, [0, 8])]:  # blocks of whole 32-bit words
        monkeypatch.setattr(resample, "_MAX_DRAW_CELLS", cells)
        monkeypatch.setattr(resample, "_BLOCK_CELLS", cells)
        blocked = list(resample._sign_bits(np.random.default_rng(9), b, k))
        assert [lo for lo, _ in blocked] == starts
        assert np.array_equal(np.vstack([w for _, w in blocked]), whole)


def test_a_large_bootstrap_gives_the_same_replicates_for_two_block_sizes(monkeypatch):
    rng = np.random.default_rng(0)
    K, C = 5000, 3  # 1,000 x 5,000 cells: more than one block (4,194 questions fit one)
    X = rng.normal(0.1, 1.0, size=(K, C))
    N = np.ones((K, C))
    N[:50, 1] = 0
    X[:50, 1] = 0.0
    sizes = np.ones(K, dtype=np.float32)
    est, const = X.sum(axis=0) / N.sum(axis=0), np.zeros(C, dtype=bool)
    default = resample._bootstrap_means(np.random.default_rng(4), X, N, sizes, 1500, est, const)
    monkeypatch.setattr(resample, "_BLOCK_CELLS", K * 64)
    small = resample._bootstrap_means(np.random.default_rng(4), X, N, sizes, 1500, est, const)
    # the same draws; products of another shape round alike or within float32's last bits
    np.testing.assert_allclose(small, default, rtol=1e-6, atol=1e-9)
    # the first replicate by hand: the resample's mean of each column's defined differences
    w = np.bincount(np.random.default_rng(4).integers(0, K, size=K, dtype=np.uint32), minlength=K)
    np.testing.assert_allclose(default[0], (w @ X) / (w @ N), rtol=1e-5)


def test_paired_tests_in_row_blocks_of_two_sizes_give_the_same_intervals_and_p_values(monkeypatch):
    rng = np.random.default_rng(0)
    D = rng.normal(0.1, 1.0, size=(3000, 3))
    D[rng.random(D.shape) < 0.1] = np.nan
    got = []
    for rows in (64, 100):
        monkeypatch.setattr(resample, "_MAX_DRAW_CELLS", 3000 * rows)
        monkeypatch.setattr(resample, "_BLOCK_CELLS", 3000 * rows)
        got.append(resample.paired_tests(D, n_resamples=2000, seed=4))
    np.testing.assert_allclose(got[0].ci_low, got[1].ci_low, rtol=1e-6)
    np.testing.assert_allclose(got[0].ci_high, got[1].ci_high, rtol=1e-6)
    np.testing.assert_array_equal(got[0].p_value, got[1].p_value)
    monkeypatch.undo()  # 3,000 questions fit one block: the chunk's one uint16 draw, other resamples
    one = resample.paired_tests(D, n_resamples=2000, seed=4)
    np.testing.assert_array_equal(one.p_value, got[0].p_value)  # the sign bits are the same bytes
    np.testing.assert_allclose(one.ci_low, got[0].ci_low, atol=0.02)  # two Monte-Carlo intervals


# ------------------------------------------------------------------ the run read as a stream


def test_the_records_view_reads_each_checked_record_again_and_refuses_a_changed_file(tmp_path):
    run_dir = make_run(tmp_path / "run")
    lines = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]
    run = load_run(run_dir)
    assert isinstance(run.records, Records) and len(run.records) == len(lines)
    got = list(run.records)
    assert [r["question_id"] for r in got] == [r["question_id"] for r in lines]
    assert [r["_line"] for r in got] == list(range(1, len(lines) + 1))
    assert run.records[5] == got[5] and run.records[-1] == got[-1] and run.records[2:4] == got[2:4]
    with (run_dir / "records.jsonl").open("a") as fh:
        fh.write("\n")
    with pytest.raises(RunError, match="changed since the run was loaded"):
        list(run.records)


def test_blank_lines_are_skipped_by_the_view_as_by_the_check(tmp_path):
    run_dir = make_run(tmp_path / "run")
    path = run_dir / "records.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3]) + "\n\n  \n" + "\n".join(lines[3:]) + "\n")
    run = load_run(run_dir)
    assert [r["_line"] for r in run.records][:5] == [1, 2, 3, 6, 7]
    assert run.records[3]["question_id"] == json.loads(lines[3])["question_id"]


def test_the_records_view_reads_the_lines_the_check_read(tmp_path):
    """A byte-order mark, CRLF line ends, blank lines of white space and a last line without its newline:
    iterating and indexing give the records of the lines the check's reader gives, with their line numbers."""
    run_dir = make_run(tmp_path / "run")
    path = run_dir / "records.jsonl"
    lines = path.read_text().splitlines()
    path.write_bytes(("\ufeff" + "\r\n".join(lines[:2]) + "\r\n \t\r\n\r\n" + "\n".join(lines[2:])).encode())
    run = load_run(run_dir)
    want = [(n, v) for n, _, _, v in JsonLines(path)]
    got = list(run.records)
    assert [r["_line"] for r in got] == [n for n, _ in want] and [n for n, _ in want][:4] == [1, 2, 5, 6]
    assert [{k: x for k, x in r.items() if k != "_line"} for r in got] == [v for _, v in want]
    assert [run.records[i] for i in range(len(run.records))] == got and run.records[-1] == got[-1]
    assert run.records[3:1:-1] == got[3:1:-1] and run.records[:] == got
    with pytest.raises(IndexError):
        run.records[len(got)]
    assert len(run.records._kept.lengths) == len(got) and sum(run.records._kept.lengths) < path.stat().st_size


def test_a_records_file_cut_short_while_read_is_named(tmp_path):
    run_dir = make_run(tmp_path / "run")
    path = run_dir / "records.jsonl"
    data = path.read_bytes()
    run = load_run(run_dir)
    it = iter(run.records)
    next(it)
    with path.open("r+b") as fh:
        fh.truncate(data.index(b"\n", len(data) // 2) + 1)  # whole lines left, half of them
    with pytest.raises(RunError, match="changed since the run was loaded"):
        list(it)


def _retained(fn):
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = fn()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return kept, after - before


def test_a_loaded_run_holds_columns_not_records(tmp_path):
    """Records with ~20 KB of text each: the load keeps a few hundred bytes per record (question, setting and
    status indexes, a float per metric, offsets), so what it keeps grows by far less than the texts do."""
    pad = "word " * 4000

    def run_of(n):
        recs = make_records(n=n, failures=())
        for r in recs:
            r["extra"]["question"] = pad
        return make_run(tmp_path / f"run{n}", records=recs)

    small, big = run_of(25), run_of(250)
    n_small, n_big = 4 * 25, 4 * 250  # four settings
    _, kept_small = _retained(lambda: load_run(small))
    _, kept_big = _retained(lambda: load_run(big))
    per_record = (kept_big - kept_small) / (n_big - n_small)
    line = os.path.getsize(big / "records.jsonl") / n_big
    assert line > 20_000
    # 9 metrics x 8 bytes, 3 indexes x 8, 2 context values x 8, offset, length and line 24, the question's id and
    # index (~150 bytes once per question, 4 records each): ~180 bytes; a record held as a dict would be > 20 KB
    assert per_record < 1_000, per_record


# ------------------------------------------------------------------ examples from one pass


def _examples_walk(records, settings, qids, per_kind=3):
    """The examples by a walk over every record held (the definition)."""
    from rageval.report.examples import _emitted_not_grounded, _left_context, reference_setting

    names = [s["name"] for s in settings]
    order = {q: i for i, q in enumerate(qids)}
    ok = sorted(
        (r for r in records if r.get("status") == "ok" and r["question_id"] in order),
        key=lambda r: order[r["question_id"]],
    )
    ref = reference_setting(settings, names)
    ref_aic = {r["question_id"]: r["metrics"].get("answer_in_context") for r in ok if r["setting"]["name"] == ref}
    out = {}
    for s in names:
        mine = [r for r in ok if r["setting"]["name"] == s]
        left = []
        if ref is not None and s != ref:
            left = [
                _left_context(r)
                for r in mine
                if ref_aic.get(r["question_id"]) == 1 and r["metrics"].get("answer_in_context") == 0
            ]
        eng = [x for r in mine for x in _emitted_not_grounded(r)]
        out[s] = {
            "left_context": {"n": len(left), "shown": left[:per_kind]},
            "emitted_not_grounded": {"n": len(eng), "shown": eng[:per_kind]},
        }
    return out


def test_examples_from_one_pass_are_those_of_a_walk_over_every_record():
    rng = random.Random(2)
    settings = [{"name": n, "compressor": c, "budget": b} for n, c, b in SETTINGS]
    for seed in range(8):
        recs = make_records(n=40, seed=seed)
        for r in recs:
            if r["status"] != "ok":
                continue
            k = rng.randint(0, 3)
            r["extra"]["attribution"] = {
                "sentences": [
                    {
                        "text": f"s{j} of {r['question_id']}",
                        "citations": [1],
                        "emitted": {"supported": rng.random() < 0.7},
                        "grounded": {"supported": rng.random() < 0.4},
                    }
                    for j in range(k)
                ]
            }
        rng.shuffle(recs)  # file order is not question order
        qids = sorted({r["question_id"] for r in recs})[2:]
        got = setting_examples(recs, settings, qids)
        assert got["by_setting"] == _examples_walk(recs, settings, qids)
        assert sum(v["emitted_not_grounded"]["n"] for v in got["by_setting"].values()) > 0
        assert sum(v["left_context"]["n"] for v in got["by_setting"].values()) > 0


def test_examples_from_the_load_s_marks_are_those_of_a_walk_over_every_record(tmp_path):
    """The examples of a loaded run: its records marked in the checked pass, the ones shown read at their
    places (rageval.report.examples.marked_examples), equal the definition's walk and setting_examples' pass."""
    from rageval.report.examples import marked_examples

    rng = random.Random(4)
    recs = make_records(n=40, seed=3)
    for r in recs:
        if r["status"] == "ok":
            r["extra"]["attribution"] = {
                "sentences": [
                    {
                        "text": f"s{j} of {r['question_id']}",
                        "citations": [1],
                        "emitted": {"supported": rng.random() < 0.7},
                        "grounded": {"supported": rng.random() < 0.4},
                    }
                    for j in range(rng.randint(0, 3))
                ]
            }
    run = load_run(make_run(tmp_path / "run", records=recs))
    assert run.marks is not None and load_run(run.path, slim=True).marks is None
    held = list(run.records)
    qids = list(run.columns.cohort(run.setting_names).question_ids)[3:]  # a cohort that is not every question
    ref = run.columns.metric_table(qids, ["identity"], ["answer_in_context"], ok_only=True)
    ref_aic = ref[("identity", "answer_in_context")]
    got = marked_examples(run.records, run.marks, run.columns, run.settings, qids, ref_aic)
    assert got == setting_examples(held, run.settings, qids, reference_aic=ref_aic)
    assert got["by_setting"] == _examples_walk(held, run.settings, qids)
    assert sum(v["emitted_not_grounded"]["n"] for v in got["by_setting"].values()) > 3
    assert sum(v["left_context"]["n"] for v in got["by_setting"].values()) > 0


# ------------------------------------------------------------------ the explorer in the examples' pass


def test_the_explorer_made_in_the_analysis_pass_is_the_page_s_own_pass(tmp_path, monkeypatch):
    from rageval.report import build
    from rageval.report.explorer import explorer_json

    made = []
    real = build.explorer_data
    monkeypatch.setattr(build, "explorer_data", lambda *a, **k: made.append(1) or real(*a, **k))
    run_dir = make_run(tmp_path / "run")
    build.build_report(run_dir, n_resamples=200)
    assert made == []  # the page made no pass of its own
    run = load_run(run_dir)
    an = analysis.analyze(run, n_resamples=200)
    settings, metrics, seed, reference = build._explorer_args(run, an)
    own = real(run.records, settings, metrics, seed=seed, reference=reference)
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert explorer_json(own) in html
    assert own["n_shown"] == len(run.records) > 0 and own["reference"] == "identity"


def test_a_pass_that_missed_records_or_took_other_arguments_is_not_used(tmp_path):
    from rageval.report import build
    from rageval.report.explorer import ExplorerPass

    run = load_run(make_run(tmp_path / "run"))
    an = analysis.analyze(run, n_resamples=200)
    settings, metrics, seed, reference = build._explorer_args(run, an)
    full = ExplorerPass(settings, metrics, seed=seed, reference=reference)
    for rec in run.records:
        full.add(rec)
    assert build._explorer_of(run, an, full) == full.result()
    short = ExplorerPass(settings, metrics, seed=seed, reference=reference)
    short.add(run.records[0])
    other_seed = ExplorerPass(settings, metrics, seed=seed + 1, reference=reference)
    for rec in run.records:
        other_seed.add(rec)
    assert build._explorer_of(run, an, short) is None
    assert build._explorer_of(run, an, other_seed) is None


def test_joined_snippets_are_the_collapsed_join():
    from rageval.report.explorer import _clip, _joined

    rng = random.Random(5)
    words = ["a", "b\u00a0c", "  d ", "\te\n", "", "f" * 700, "g\u2028h", " "]
    for _ in range(500):
        sources = {str(i): _clip(rng.choice(words) + rng.choice(words), 600) for i in range(4)}
        ids = [str(rng.randrange(6)) for _ in range(rng.randint(1, 4))]  # "4" and "5": no such snippet
        assert _joined(sources, ids) == " ".join(" ".join(sources.get(i, "") for i in ids).split())


def test_the_run_directory_is_claimed_once_per_report(tmp_path, monkeypatch):
    from rageval.report import build

    calls = []
    real = build.claim
    monkeypatch.setattr(build, "claim", lambda d, *a: calls.append(Path(d).resolve()) or real(d, *a))
    run_dir = make_run(tmp_path / "run")
    build.build_report(run_dir, n_resamples=200)
    assert calls == [run_dir.resolve()]  # before the read, under the lock held until the files are written
    calls.clear()
    build.build_report(run_dir, n_resamples=200, out_dir=tmp_path / "elsewhere")
    assert calls == [(tmp_path / "elsewhere").resolve()]  # the run only read; the other folder claimed to write
    calls.clear()
    other = make_run(tmp_path / "other")
    build.build_reports([run_dir, other], n_resamples=200)
    assert calls == [run_dir.resolve(), other.resolve()]


def test_full_blocks_of_a_metric_are_kept_narrow_and_read_back_exactly(monkeypatch):
    from rageval.rundir import columns as columns_module

    monkeypatch.setattr(columns_module, "BLOCK", 4)
    third = 1 / 3
    # by hand, per block of 4 records: "count" 0..3 (float16), 4096.5.. (float32: float16 has no .5 above 2,048),
    # "frac" 1/3 (float64); "late" first seen at record 9 (its first two blocks all NaN); "huge" 1e300 (float64)
    values = {
        "count": [0, 1, 2, None, 4096.5, 4097.5, 5, 6, 7, 8],
        "frac": [third, 0.5, True, False, 1, 2, 3, 4, None, 0.25],
        "late": [None] * 9 + [7],
        "huge": [1e300, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    }
    recs = [
        {
            "question_id": f"q{i}",
            "setting": "a",
            "status": "ok",
            "metrics": {k: v[i] for k, v in values.items() if i >= 9 or k != "late"},
        }
        for i in range(10)
    ]
    cols = RecordColumns.of(recs)
    for name, want in values.items():
        got = cols.column(name)
        assert got.dtype == np.float64
        want_f = np.array([math.nan if v is None else float(v) for v in want])
        assert np.array_equal(got, want_f, equal_nan=True), name
    kept = {k: [b.dtype.name for b in blocks] for k, blocks in cols._blocks.items()}
    assert kept == {
        "count": ["float16", "float32"],
        "frac": ["float64", "float16"],
        "late": ["float16", "float16"],
        "huge": ["float64", "float16"],
    }
    assert len(cols.metrics["count"]) == 2  # the last two records: not a full block yet
    t = cols.metric_table([f"q{i}" for i in (9, 0, 5)], ["a"], ["count", "frac", "late"])
    assert t[("a", "count")].tolist() == [8.0, 0.0, 4097.5]
    assert t[("a", "frac")].tolist() == [0.25, third, 2.0]
    assert np.array_equal(t[("a", "late")], [7.0, np.nan, np.nan], equal_nan=True)


def test_cell_matrix_is_the_columns_side_by_side():
    from rageval.rundir.columns import cell_matrix

    values = {("a", "m"): np.array([1.0, np.nan]), ("b", "m"): np.array([0.5, 2.0])}
    got = cell_matrix(values, [("b", "m"), ("a", "m")], 2)
    assert np.array_equal(got, [[0.5, 1.0], [2.0, np.nan]], equal_nan=True)
    assert cell_matrix({("a", "m"): np.zeros(0)}, [("a", "m"), ("a", "m")], 0).shape == (0, 2)
