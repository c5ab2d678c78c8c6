"""``rageval label`` and ``rageval report --human-labels`` (docs/score.md#human-labels): the pairs a run's
judge-based metrics rest on exported, human labels replayed through the scoring path, PPI++ means and contrasts
beside the judge-only ones; on WiCE claims with WiCE's own labels, by hand on ten rows, an unmatched file refused.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval.calibrate.core import _premise, load_wice
from rageval.citations import parse_answer
from rageval.cli import main
from rageval.labels.apply import human_values, read_labels
from rageval.labels.correct import flip_of
from rageval.labels.export import LabelError, draw_sample, export_labels
from rageval.labels.pairs import pair_id
from rageval.report import build_report
from rageval.score.run import ScoreOptions, score_files

Z95 = 1.959963984540054  # the 97.5% normal quantile


def wice_rows() -> list[tuple[str, dict, str]]:
    """Every shipped WiCE claim that reads as one sentence ending in a full stop, as (id, row, cited answer)."""
    out = []
    for i, r in enumerate(load_wice()):
        c = r["claim"].strip()
        if not c.endswith("."):
            continue
        answer = c[:-1] + " [1]."
        if len(parse_answer(answer, 1).sentences) == 1:
            out.append((f"w{i:03d}", r, answer))
    return out


def wice_run(tmp_path: Path, rows, diagnostics=("emitted_recall",)) -> Path:
    """A score run whose records are WiCE claims citing their evidence (the premise ``rageval calibrate`` builds:
    the top-5 BM25 evidence sentences), scored by the lexical judge."""
    path = tmp_path / "wice.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for qid, r, answer in rows:
            text = _premise(r, "bm25", 5)
            f.write(
                json.dumps(
                    {
                        "id": qid,
                        "question": "Is the claim supported?",
                        "answer": answer,
                        "units": [{"text": text, "source_ids": ["e1"]}],
                        "sources": [{"id": "e1", "text": text}],
                    }
                )
                + "\n"
            )
    out = tmp_path / "run"
    options = ScoreOptions(judge="lexical", diagnostics=list(diagnostics), resamples=200)
    score_files([str(path)], out, options=options, build_report=False, progress=False)
    return out


def fill(labels: Path, out: Path, label_of) -> Path:
    """The exported lines with ``label`` filled by ``label_of(row)``."""
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    out.write_text("".join(json.dumps({**r, "label": label_of(r)}) + "\n" for r in rows))
    return out


def records(run: Path) -> dict[str, dict]:
    return {r["question_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}


def test_the_sample_is_seeded_uniform_and_in_cohort_order():
    cohort = [f"q{i}" for i in range(20)]
    a, b = draw_sample(cohort, 5, seed=3), draw_sample(cohort, 5, seed=3)
    assert a == b and len(a) == 5 and a == sorted(a, key=cohort.index)
    assert draw_sample(cohort, 50, seed=0) == cohort  # more than the cohort: all of it


def test_ten_rows_by_hand(tmp_path):
    rows = wice_rows()[:10]
    run = wice_run(tmp_path, rows)
    res = export_labels(run, tmp_path / "lab", n=4, seed=1)
    lines = [json.loads(x) for x in (tmp_path / "lab" / "labels.jsonl").read_text().splitlines()]
    # one pair per question (its one sentence against its one cited unit), no judge score in the line
    assert len(lines) == 4 and sorted(r["question_id"] for r in lines) == sorted(res["questions"])
    assert all(set(r) == {"id", "question_id", "settings", "premise", "hypothesis", "label"} for r in lines)
    assert all(r["label"] is None and r["id"] == pair_id(r["premise"], r["hypothesis"]) for r in lines)
    truth = {qid: float(r["label"] == "supported") for qid, r, _ in rows}
    filled = fill(tmp_path / "lab" / "labels.jsonl", tmp_path / "filled.jsonl", lambda r: truth[r["question_id"]] == 1)
    build_report(run, human_labels=filled)
    ppi = json.loads((run / "report.json").read_text())["ppi"]
    (mean,) = [m for m in ppi["means"] if m["metric"] == "emitted_recall"]

    # by hand: ppi_py's PPI++ mean with the power-tuning lam of ppi_py (clipped), normal interval
    recs = records(run)
    lab = res["questions"]
    unl = [q for q in recs if q not in lab]
    y = [truth[q] for q in lab]
    yh = [recs[q]["metrics"]["emitted_recall"] for q in lab]
    yu = [recs[q]["metrics"]["emitted_recall"] for q in unl]
    n, big_n = len(y), len(yu)
    my, myh = sum(y) / n, sum(yh) / n
    cov = sum((a - my) * (b - myh) for a, b in zip(y, yh)) / n
    allh = yh + yu
    mall = sum(allh) / len(allh)
    var = sum((v - mall) ** 2 for v in allh) / (len(allh) - 1)
    lam = 0.0 if var == 0 else min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))
    mu = sum(yu) / big_n
    est = lam * mu + sum(a - lam * b for a, b in zip(y, yh)) / n
    rect = [a - lam * b for a, b in zip(y, yh)]
    mr = sum(rect) / n
    var_rect = sum((v - mr) ** 2 for v in rect) / n
    var_u = sum((v - mu) ** 2 for v in yu) / big_n
    se = math.sqrt(var_rect / n + lam**2 * var_u / big_n)
    assert mean["n_labelled"] == 4 and mean["n_unlabelled"] == 6
    assert mean["lam"] == pytest.approx(lam, abs=1e-12)
    assert mean["estimate"] == pytest.approx(est, abs=1e-12)
    assert mean["ci_low"] == pytest.approx(est - Z95 * se, abs=1e-9)
    assert mean["ci_high"] == pytest.approx(est + Z95 * se, abs=1e-9)
    assert mean["bias"] == pytest.approx(my - myh, abs=1e-12)
    assert mean["judge_mean"] == pytest.approx(sum(allh) / 10, abs=1e-12)
    md = (run / "ppi.md").read_text()
    assert "4 of 10 cohort questions labelled" in md and (run / "ppi.csv").is_file()
    assert 'id="ppi"' in (run / "report.html").read_text()


def test_wice_ppi_covers_the_label_mean_the_judge_misses(tmp_path):
    rows = wice_rows()
    run = wice_run(tmp_path, rows)
    truth = {qid: r["label"] == "supported" for qid, r, _ in rows}
    target = sum(truth.values()) / len(truth)  # the mean over every WiCE label of the run's claims
    res = export_labels(run, tmp_path / "lab", n=120, seed=7)
    assert len(res["questions"]) == 120
    filled = fill(tmp_path / "lab" / "labels.jsonl", tmp_path / "filled.jsonl", lambda r: truth[r["question_id"]])
    build_report(run, human_labels=filled)
    (mean,) = [m for m in json.loads((run / "report.json").read_text())["ppi"]["means"]]
    assert mean["metric"] == "emitted_recall" and mean["n_labelled"] == 120
    assert mean["ci_low"] <= target <= mean["ci_high"]  # the PPI++ interval covers the labels' mean
    assert not mean["judge_ci_low"] <= target <= mean["judge_ci_high"]  # the judge-only one misses it
    assert mean["bias"] == pytest.approx(
        sum(truth[q] - records(run)[q]["metrics"]["emitted_recall"] for q in res["questions"]) / 120
    )
    # the miss is visible in the report: both intervals, side by side, in ppi.md
    row = next(line for line in (run / "ppi.md").read_text().splitlines() if "`emitted_recall`" in line)
    judge_ci = f"[{mean['judge_ci_low']:.3f}, {mean['judge_ci_high']:.3f}]"
    ppi_ci = f"[{mean['ci_low']:.3f}, {mean['ci_high']:.3f}]"
    assert judge_ci in row and ppi_ci in row


def test_labels_of_another_run_are_refused_with_the_count(tmp_path):
    rows = wice_rows()[:10]
    run = wice_run(tmp_path, rows)
    export_labels(run, tmp_path / "lab", n=5, seed=0)
    lines = [json.loads(x) for x in (tmp_path / "lab" / "labels.jsonl").read_text().splitlines()]
    lines[0]["id"], lines[2]["id"] = "0" * 16, "f" * 16  # two pairs this run never asks
    lines.append({**lines[1], "question_id": "no-such-question"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps({**r, "label": True}) + "\n" for r in lines))
    with pytest.raises(LabelError, match=r"^3 of 6 label ids do not belong to this run"):
        human_values(run, bad)
    result = CliRunner().invoke(main, ["report", str(run), "--human-labels", str(bad)])
    assert result.exit_code == 2
    assert "3 of 6 label ids do not belong to this run" in result.output
    assert not (run / "ppi.md").exists()


def test_a_question_with_an_unlabelled_pair_is_unlabelled(tmp_path):
    rows = wice_rows()[:10]
    run = wice_run(tmp_path, rows)
    export_labels(run, tmp_path / "lab", n=4, seed=0)
    lines = [json.loads(x) for x in (tmp_path / "lab" / "labels.jsonl").read_text().splitlines()]
    part = tmp_path / "part.jsonl"
    part.write_text("".join(json.dumps({**r, "label": None if i == 0 else True}) + "\n" for i, r in enumerate(lines)))
    hv = human_values(run, part)
    assert hv.summary()["questions_named"] == 4 and len(hv.labelled) == 3
    assert hv.unlabelled == {lines[0]["question_id"]: 1}


def test_the_csv_twin_reads_as_the_json_lines(tmp_path):
    rows = wice_rows()[:10]
    run = wice_run(tmp_path, rows)
    export_labels(run, tmp_path / "lab", n=3, seed=0)
    js, cs = read_labels(tmp_path / "lab" / "labels.jsonl"), read_labels(tmp_path / "lab" / "labels.csv")
    assert [(r.id, r.question_id, r.label) for r in js] == [(r.id, r.question_id, r.label) for r in cs]


def test_label_cli_exports_and_plans(tmp_path):
    rows = wice_rows()[:60]
    run = wice_run(tmp_path, rows)
    r = CliRunner().invoke(main, ["label", str(run), "--n", "30", "--seed", "2", "--out", str(tmp_path / "lab")])
    assert r.exit_code == 0, r.output
    assert "30 of 60 cohort questions (seed 2), 1 settings: 30 pairs to label" in r.output
    truth = {qid: row["label"] == "supported" for qid, row, _ in rows}
    filled = fill(tmp_path / "lab" / "labels.jsonl", tmp_path / "f.jsonl", lambda x: truth[x["question_id"]])
    r = CliRunner().invoke(main, ["label", str(run), "--plan", "--width", "0.2", "--labels", str(filled)])
    assert r.exit_code == 0, r.output
    assert "emitted_recall: 30 labelled," in r.output and "for a 95% CI half-width of 0.2" in r.output
    assert "its one setting: " in r.output  # one line per metric, naming its widest setting
    r = CliRunner().invoke(
        main, ["label", str(run), "--plan", "--width", "0.2", "--labels", str(filled)] + ["--metric", "emitted_recall"]
    )
    assert r.exit_code == 0 and r.output.count("emitted_recall: 30 labelled") == 1 and "needed (" in r.output
    r = CliRunner().invoke(main, ["label", str(run), "--n", "3"])
    assert r.exit_code == 2 and "--out" in r.output


def test_score_takes_human_labels_for_its_report(tmp_path):
    rows = wice_rows()[:20]
    run = wice_run(tmp_path, rows)
    export_labels(run, tmp_path / "lab", n=8, seed=0)
    truth = {qid: r["label"] == "supported" for qid, r, _ in rows}
    filled = fill(tmp_path / "lab" / "labels.jsonl", tmp_path / "f.jsonl", lambda r: truth[r["question_id"]])
    before = (run / "records.jsonl").read_bytes()
    args = ["score", str(tmp_path / "wice.jsonl"), "--out", str(run), "--judge", "lexical"]
    args += ["--diagnostics", "emitted_recall", "--resamples", "200", "--human-labels", str(filled)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert (run / "records.jsonl").read_bytes() == before  # the records reused, unchanged
    assert "8 of 20 cohort questions labelled" in (run / "ppi.md").read_text()
    assert json.loads((run / "report.json").read_text())["ppi"]["labels"]["questions_labelled"] == 8


def test_the_plan_labelled_reaches_the_width(tmp_path):
    """``--plan`` from a pilot of 50 WiCE labels: labelling the number it gives reaches the half-width (±20%)."""
    from rageval.labels.plan import plan_rows

    rows = wice_rows()
    run = wice_run(tmp_path, rows)
    truth = {qid: r["label"] == "supported" for qid, r, _ in rows}
    export_labels(run, tmp_path / "pilot", n=50, seed=11)
    pilot = fill(tmp_path / "pilot" / "labels.jsonl", tmp_path / "pilot.jsonl", lambda r: truth[r["question_id"]])
    (row,) = plan_rows(run, pilot, 0.08)
    assert row["n_labelled"] == 50 and 50 < row["total"] < len(rows)
    export_labels(run, tmp_path / "lab", n=row["total"], seed=100)
    filled = fill(tmp_path / "lab" / "labels.jsonl", tmp_path / "f.jsonl", lambda r: truth[r["question_id"]])
    build_report(run, human_labels=filled, plots=False)
    (mean,) = json.loads((run / "report.json").read_text())["ppi"]["means"]
    assert mean["n_labelled"] == row["total"]
    assert abs((mean["ci_high"] - mean["ci_low"]) / 2 - 0.08) <= 0.2 * 0.08


def test_a_report_without_labels_has_no_correction(tmp_path):
    rows = wice_rows()[:10]
    run = wice_run(tmp_path, rows)
    build_report(run, plots=False)
    first = {f: (run / f).read_bytes() for f in ("report.json", "summary.csv", "contrasts.csv", "report.html")}
    assert "ppi" not in json.loads(first["report.json"]) and not (run / "ppi.md").exists()
    export_labels(run, tmp_path / "lab", n=5, seed=0)
    truth = {qid: r["label"] == "supported" for qid, r, _ in rows}
    filled = fill(tmp_path / "lab" / "labels.jsonl", tmp_path / "f.jsonl", lambda r: truth[r["question_id"]])
    build_report(run, human_labels=filled, plots=False)
    assert (run / "ppi.md").is_file() and "ppi" in json.loads((run / "report.json").read_text())
    build_report(run, plots=False)  # again without: the same bytes as before, no stale correction beside them
    assert {f: (run / f).read_bytes() for f in first} == first
    assert not (run / "ppi.md").exists() and not (run / "ppi.csv").exists()


def test_a_flip_of_sign_between_two_tiny_effects_is_a_sign_flip():
    """Their product underflows to 0; the signs still differ (a sign flip, not a change of significance)."""
    assert flip_of(-1e-200, 0.01, 1e-200, 0.5, 0.05) == "sign"
    assert flip_of(1e-200, 0.01, 1e-200, 0.5, 0.05) == "lost"


def test_an_export_never_overwrites_filled_labels(tmp_path):
    """A second export into a folder whose labels.jsonl holds labels is refused (a person's work is not lost); an
    unfilled one is written again."""
    run = wice_run(tmp_path, wice_rows()[:10])
    lab = tmp_path / "lab"
    export_labels(run, lab, n=4, seed=1)
    export_labels(run, lab, n=3, seed=2)  # nothing filled yet: written again
    assert len((lab / "labels.jsonl").read_text().splitlines()) == 3
    fill(lab / "labels.jsonl", lab / "labels.jsonl", lambda r: True)
    before = (lab / "labels.jsonl").read_bytes()
    with pytest.raises(LabelError, match=r"labels\.jsonl holds 3 filled labels: rageval label would overwrite it"):
        export_labels(run, lab, n=4, seed=1)
    assert (lab / "labels.jsonl").read_bytes() == before
    res = CliRunner().invoke(main, ["label", str(run), "--n", "4", "--out", str(lab)])
    assert res.exit_code == 2 and "holds 3 filled labels" in res.output
