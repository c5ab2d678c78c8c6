"""Setting identity in ``rageval score`` (issue 41, names that merge): a setting is its file and its lines'
``(system, setting)``, never its name.  Two identities that would show one name stay two settings; the later one
(input order) is shown as ``NAME (2)`` and a note says so.  Means are computed by hand: ``answer_f1`` of the answer
``Paris`` against the gold ``Paris`` is 1, of ``Lyon`` 0 (token F1)."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.cli import main
from rageval.data.formats import ImportedFile
from rageval.data.formats.layout import GenericRecord, to_item
from rageval.data.formats.match import assign_settings, match_questions, renamed_notes, shown_name
from rageval.score import ScoreOptions, score_files

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

F1 = ScoreOptions(diagnostics=["answer_f1"])
NOTE_TAIL = "the two would show one name; a setting is its file and its (system, setting), never its name"


def _line(qid: str, right: bool, system: str | None = None, setting: str | None = None) -> dict:
    row = {"id": qid, "question": f"Question {qid}?", "answer": "Paris" if right else "Lyon", "answers": ["Paris"]}
    if system is not None:
        row["system"] = system
    if setting is not None:
        row["setting"] = setting
    return row


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _summary(out: Path) -> dict[str, dict[str, str]]:
    with (out / "summary.csv").open(encoding="utf-8", newline="") as fh:
        return {row["setting"]: row for row in csv.DictReader(fh)}


def _records(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def _means(out: Path) -> dict[str, tuple[int, float]]:
    """Setting -> (records, mean answer_f1) read off records.jsonl."""
    got: dict[str, list[float]] = {}
    for r in _records(out):
        got.setdefault(r["setting"]["name"], []).append(r["metrics"]["answer_f1"])
    return {k: (len(v), sum(v) / len(v)) for k, v in got.items()}


# -- the cases of the issue, by hand ---------------------------------------------------------------------------------


def test_a_literal_label_slash_system_and_a_qualified_system_are_two_settings_with_shared_ids(tmp_path):
    # file A: literal system "B/s" (right, right) and system "s" (right, wrong); file B: system "s" (wrong, wrong).
    # "s" is in both files, so B's is qualified "B/s": the name A's literal system already has.  Before, the two
    # were one setting and q1 a "duplicate id" blamed on B.jsonl line 1, a valid file.
    a = _write(
        tmp_path / "A.jsonl",
        [_line("q1", True, "B/s"), _line("q2", True, "B/s"), _line("q1", True, "s"), _line("q2", False, "s")],
    )
    b = _write(tmp_path / "B.jsonl", [_line("q1", False, "s"), _line("q2", False, "s")])
    out = tmp_path / "out"
    res = score_files([str(a), str(b)], out, options=F1)
    assert res.settings == ["B/s", "A/s", "B/s (2)"]
    rows = _summary(out)
    assert [(n, rows[n]["n_records"], float(rows[n]["answer_f1"])) for n in res.settings] == [
        ("B/s", "2", 1.0),  # (1 + 1) / 2
        ("A/s", "2", 0.5),  # (1 + 0) / 2
        ("B/s (2)", "2", 0.0),  # (0 + 0) / 2
    ]
    note = f"setting 'B/s (2)' ({b}: system 's') is not setting 'B/s' ({a}: system 'B/s'): {NOTE_TAIL}"
    assert res.notes.count(note) == 1
    assert note in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["notes"]
    files = {(r["setting"]["name"], r["extra"]["input"]["file"]) for r in _records(out)}
    assert files == {("B/s", str(a)), ("A/s", str(a)), ("B/s (2)", str(b))}  # each setting one file's lines


def test_the_same_with_disjoint_ids_no_longer_averages_two_systems_as_one(tmp_path):
    # with ids that do not meet, the merge was silent: one setting "B/s" of 4 records, mean 0.5
    a = _write(tmp_path / "A.jsonl", [_line("q1", True, "B/s"), _line("q2", True, "B/s"), _line("q3", True, "s")])
    b = _write(tmp_path / "B.jsonl", [_line("q3", False, "s"), _line("q4", False, "s")])
    out = tmp_path / "out"
    res = score_files([str(a), str(b)], out, options=F1, build_report=False)
    assert _means(out) == {"B/s": (2, 1.0), "A/s": (1, 1.0), "B/s (2)": (2, 0.0)}  # no common cohort: records'
    assert res.settings == ["B/s", "A/s", "B/s (2)"]


def test_system_a_slash_b_and_system_a_setting_b_are_two_settings(tmp_path):
    rows = [
        _line("q1", True, "a/b"),
        _line("q2", True, "a/b"),
        _line("q1", True, "a", "b"),
        _line("q2", False, "a", "b"),
        _line("q1", False, "b"),  # system "b" alone and setting "b" alone: two more
        _line("q2", False, "b"),
        _line("q1", True, None, "b"),
        _line("q2", False, None, "b"),
    ]
    p = _write(tmp_path / "one.jsonl", rows)
    out = tmp_path / "out"
    res = score_files([str(p)], out, options=F1, build_report=False)
    assert res.settings == ["a/b", "a/b (2)", "b", "b (2)"]
    assert _means(out) == {"a/b": (2, 1.0), "a/b (2)": (2, 0.5), "b": (2, 0.0), "b (2)": (2, 0.5)}
    assert [n for n in res.notes if NOTE_TAIL in n] == [
        f"setting 'a/b (2)' ({p}: system 'a', setting 'b') is not setting 'a/b' ({p}: system 'a/b'): {NOTE_TAIL}",
        f"setting 'b (2)' ({p}: setting 'b') is not setting 'b' ({p}: system 'b'): {NOTE_TAIL}",
    ]


def test_across_two_files_a_slash_b_and_a_plus_b_are_qualified_and_nothing_is_renamed(tmp_path):
    a = _write(tmp_path / "A.jsonl", [_line("q1", True, "a/b")])
    b = _write(tmp_path / "B.jsonl", [_line("q1", False, "a", "b")])
    res = score_files([str(a), str(b)], tmp_path / "out", options=F1, build_report=False)
    assert res.settings == ["A/a/b", "B/a/b"]
    assert not [n for n in res.notes if NOTE_TAIL in n]


def test_a_renamed_name_never_takes_a_name_another_setting_has(tmp_path):
    # setting "x" alone wants "x", which system "x" has; "x (2)" is a literal system: it goes on to "x (3)"
    rows = [_line("q1", True, "x"), _line("q1", False, "x (2)"), _line("q1", False, None, "x")]
    p = _write(tmp_path / "A.jsonl", rows)
    res = score_files([str(p)], tmp_path / "out", options=F1, build_report=False)
    assert res.settings == ["x", "x (2)", "x (3)"]
    assert [n for n in res.notes if NOTE_TAIL in n] == [
        f"setting 'x (3)' ({p}: setting 'x') is not setting 'x' ({p}: system 'x'): {NOTE_TAIL}"
    ]
    _write(p, rows[:2])
    res = score_files([str(p)], tmp_path / "out2", options=F1, build_report=False)
    assert res.settings == ["x", "x (2)"] and not [n for n in res.notes if NOTE_TAIL in n]  # the names of before


def test_the_cli_says_it_and_the_baseline_takes_the_shown_name(tmp_path):
    a = _write(tmp_path / "A.jsonl", [_line("q1", True, "B/s"), _line("q1", True, "s"), _line("q2", True, "s")])
    b = _write(tmp_path / "B.jsonl", [_line("q1", False, "s"), _line("q2", False, "s")])
    out = tmp_path / "out"
    args = ["score", str(a), str(b), "--out", str(out), "--no-progress", "--diagnostics", "answer_f1"]
    res = CliRunner().invoke(main, [*args, "--baseline", "B/s (2)"])
    assert res.exit_code == 0, res.output
    assert f"setting 'B/s (2)' ({b}: system 's') is not setting 'B/s' ({a}: system 'B/s')" in " ".join(
        res.output.split()
    )
    contrasts = list(csv.DictReader((out / "contrasts.csv").open(encoding="utf-8", newline="")))
    # vs the baseline on the common cohort (q1: B/s has no q2): 1 - 0 each
    assert {(r["a"], r["b"], r["mean_a"], r["mean_b"]) for r in contrasts if r["metric_a"] == "answer_f1"} == {
        ("B/s", "B/s (2)", "1.000000", "0.000000"),
        ("A/s", "B/s (2)", "1.000000", "0.000000"),
    }
    again = CliRunner().invoke(main, ["rescore", str(out)])  # a saved run reads back with its names
    assert again.exit_code == 0, again.output
    assert _summary(out).keys() == {"B/s", "A/s", "B/s (2)"}


def test_a_suite_reading_such_a_file_keeps_the_two_systems_apart_by_their_shown_names(tmp_path):
    from rageval.data.formats.suite_data import given_answers, read_examples

    rows = [_line("q1", True, "a/b"), _line("q1", False, "a", "b"), _line("q2", False, "a/b")]
    p = _write(tmp_path / "data.jsonl", rows)
    [q1, q2] = read_examples(str(p))
    assert (sorted(q1.meta["given"]), sorted(q2.meta["given"])) == (["a/b", "a/b (2)"], ["a/b"])
    assert [q1.meta["given"][k]["answer"] for k in ("a/b", "a/b (2)")] == ["Paris", "Lyon"]
    assert {q: a for q, (a, _, _) in given_answers(str(p), system="a/b (2)").items()} == {"q1": "Lyon"}
    assert {q: a for q, (a, _, _) in given_answers(str(p), system="a/b").items()} == {"q1": "Paris", "q2": "Lyon"}


def test_a_suite_refuses_two_settings_of_one_name_made_from_different_fields(tmp_path):
    from rageval.suite.config import SuiteError
    from rageval.suite.load import load_suite

    p = tmp_path / "s.yaml"
    p.write_text(
        "name: t\ndataset: {name: hotpotqa, limit: 2}\nsettings:\n"
        "  - {compressor: naive, budgets: [50]}\n  - {name: naive@50, compressor: identity}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError, match=r"duplicate setting names \['naive@50'\]"):
        load_suite(p)


# -- hypothesis over names -------------------------------------------------------------------------------------------

LABELS = ["A", "B", "s", "é", "a"]
# names with "/", spaces, unicode, empty-ish, equal to labels and to other settings' qualified or renamed names
ATOMS = ["a", "b", "s", "A", "a/b", "A/s", "B/s", "B/a/b", "A/a", "s (2)", "B/s (2)", "", " ", "é", "名/前", "é/s"]
name = st.one_of(st.none(), st.sampled_from(ATOMS), st.none(), st.sampled_from(ATOMS), st.text("ab/ é", max_size=3))
pair = st.tuples(name, name)


@st.composite
def inputs(draw):
    """Files, each a label and lines ``(id, system, setting, right)``: ids shared across files and identities.

    Besides names drawn at random, a pair may bring the pairs that would show its name: ``system/setting``
    written as one system, the system given as a setting (or the reverse), or the same pair in another file (so
    it is qualified ``label/name``) together with a literal system ``label/name``."""
    labels = draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=3, unique=True))
    pairs: list[list[tuple]] = [draw(st.lists(pair, min_size=1, max_size=3)) for _ in labels]
    for fi in range(len(labels)):
        for system, setting in list(pairs[fi]):
            twin = draw(st.sampled_from(["none", "join", "swap", "qualify"]))
            if twin == "join" and system is not None and setting is not None:
                pairs[fi].append((f"{system}/{setting}", None))
            elif twin == "swap" and (system is None) != (setting is None):
                pairs[fi].append((setting, system))
            elif twin == "qualify" and shown_name(system, setting) is not None:
                pairs[draw(st.integers(0, len(labels) - 1))].append((system, setting))
                literal = f"{labels[fi]}/{shown_name(system, setting)}"
                pairs[draw(st.integers(0, len(labels) - 1))].append((literal, None))
    files = []
    for label, mine in zip(labels, pairs):
        lines = []
        for system, setting in dict.fromkeys(mine):
            qids = draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, max_size=3, unique=True))
            lines += [(q, system, setting, draw(st.booleans())) for q in qids]
        files.append((label, draw(st.permutations(lines))))
    return files


def _wanted(files) -> dict[tuple, str]:
    """The names of before (docs/score.md): label; ``system/setting`` (or the one given); qualified ``label/name``
    when the name is in two files or a label."""
    labels = [lab for lab, _ in files]
    owners: dict[str, set[int]] = {}
    for fi, (_, lines) in enumerate(files):
        for _, system, setting, _ in lines:
            if (base := shown_name(system, setting)) is not None:
                owners.setdefault(base, set()).add(fi)
    out: dict[tuple, str] = {}
    for fi, (label, lines) in enumerate(files):
        for _, system, setting, _ in lines:
            base = shown_name(system, setting)
            if base is None:
                want = label
            elif len(owners[base]) > 1 or base in labels:
                want = f"{label}/{base}"
            else:
                want = base
            out.setdefault((fi, system, setting), want)
    return out


def _imported(files) -> list[ImportedFile]:
    out = []
    for label, lines in files:
        items = []
        for n, (q, system, setting, right) in enumerate(lines, 1):
            rec = GenericRecord(id=q, question=f"Question {q}?", answer="Paris" if right else "Lyon", answers=["Paris"])
            items.append(replace(to_item(rec, f"{label} line {n}"), system=system, setting=setting))
        out.append(ImportedFile(f"{label}.jsonl", "generic", items))
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs())
def test_one_setting_per_identity_and_distinct_names(files):
    imported = _imported(files)
    got = assign_settings(imported, [lab for lab, _ in files])
    wanted = _wanted(files)
    assert len(got) == len(wanted)  # as many settings as distinct (file, system, setting)
    assert list(got) == [s.name for s in got.values()] and len(set(got)) == len(got)
    assert [s.identity for s in got.values()] == list(wanted)  # input order
    for s in got.values():
        assert {(imported.index(f), f.items[i].system, f.items[i].setting) for f, i in s.refs()} == {s.identity}
        assert s.wanted == wanted[s.identity]  # type: ignore[index]
    assert sum(len(s) for s in got.values()) == sum(len(lines) for _, lines in files)
    if len(set(wanted.values())) == len(wanted):  # nothing collides: the names of before, no note
        assert list(got) == list(wanted.values()) and renamed_notes(got) == []
    assert len(renamed_notes(got)) == len(wanted) - len(set(wanted.values()))
    first = {}
    for s in got.values():  # the first of each wanted name keeps it
        first.setdefault(s.wanted, s.name)
    assert all(k == v for k, v in first.items())
    assert list(assign_settings(_imported(files), [lab for lab, _ in files])) == list(got)  # deterministic
    matched = match_questions(got)  # no "duplicate id": each setting holds an id once
    assert len(matched.order) == len({q for _, lines in files for q, *_ in lines})


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(inputs())
def test_scored_settings_are_the_identities_each_mean_by_hand(tmp_path_factory, files):
    tmp = tmp_path_factory.mktemp("ident")
    specs, where = [], {}
    for fi, (label, lines) in enumerate(files):
        p = _write(tmp / f"f{fi}.jsonl", [_line(q, right, system, setting) for q, system, setting, right in lines])
        specs.append(f"{label}={p}")
        for n, (_, system, setting, _) in enumerate(lines, 1):
            where[(str(p), n)] = (fi, system, setting)
    res = score_files(specs, tmp / "out", options=F1, build_report=False)
    wanted = _wanted(files)
    assert len(res.settings) == len(set(res.settings)) == len(wanted)
    expected: dict[tuple, list[float]] = {}
    for fi, (_, lines) in enumerate(files):
        for _, system, setting, right in lines:
            expected.setdefault((fi, system, setting), []).append(1.0 if right else 0.0)
    got: dict[str, list[tuple[tuple, float]]] = {}
    for r in _records(tmp / "out"):
        src = r["extra"]["input"]
        got.setdefault(r["setting"]["name"], []).append((where[(src["file"], src["line"])], r["metrics"]["answer_f1"]))
    assert set(got) == set(res.settings)
    for recs in got.values():
        [identity] = {i for i, _ in recs}  # one identity per shown name
        values = [v for _, v in recs]
        assert len(values) == len(expected[identity])
        assert sum(values) / len(values) == pytest.approx(sum(expected[identity]) / len(expected[identity]))
    assert len([n for n in res.notes if NOTE_TAIL in n]) == len(wanted) - len(set(wanted.values()))
