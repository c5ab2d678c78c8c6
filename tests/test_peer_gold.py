"""Peers' short gold answers (docs/score.md#peers-short-gold-answers): a RAGAS reference (``reference``,
``ground_truth``, ``ground_truths``) or a RAGChecker ``gt_answer`` of at most 10 regex tokens is also the short
``answers``, so answer-in-context is defined without ``--map``; counts by hand."""

from __future__ import annotations

import json
from pathlib import Path

from rageval.score import ScoreOptions, score_files


def test_short_gold_counts_regex_tokens_up_to_ten():
    from rageval.data.formats.common import SHORT_GOLD_TOKENS, short_gold

    assert SHORT_GOLD_TOKENS == 10
    ten = "The Nile is the longest river in the world."  # 9 words and a full stop: 10 tokens
    eleven = "The Nile is the longest river in the world, 6"  # 9 words, a comma and a number: 11
    assert short_gold(ten) == [ten] and short_gold(eleven) == []
    assert short_gold([eleven, "Nile", "  "]) == ["Nile"]  # each string on its own; a blank one never


def _ragas_file(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "ragas.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_ragas_short_ground_truth_gets_answer_in_context_without_map(tmp_path):
    rows = [
        {  # the old RAGAS columns: a short ground_truth
            "question": "Who wrote Hamlet?",
            "answer": "Shakespeare.",
            "contexts": ["Hamlet is a tragedy by William Shakespeare."],
            "ground_truth": "William Shakespeare",
        },
        {  # a long one (13 words and a full stop: 14 tokens): a reference only, answer-in-context undefined
            "question": "What flows through Paris?",
            "answer": "The Seine.",
            "contexts": ["The Seine flows through Paris."],
            "ground_truth": "The river Seine flows through Paris on its way to the English Channel.",
        },
    ]
    out = tmp_path / "out"
    res = score_files([str(_ragas_file(tmp_path, rows))], out, options=ScoreOptions(), build_report=False)
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    m = {r["question_id"]: r["metrics"] for r in recs}
    # #1: "william shakespeare" is in the context -> 1; its gold answers are the ground_truth
    assert m["#1"]["answer_in_context"] == 1.0
    assert recs[0]["extra"]["gold"]["answers"] == ["William Shakespeare"]
    assert m["#2"]["answer_in_context"] is None  # undefined (no short answer), never 0
    assert any("ground_truth of at most 10 tokens" in n and "in 1 of 2 rows" in n for n in res.notes)


def test_ragas_ground_truths_list_and_an_answers_column(tmp_path):
    from rageval.data.formats import read_input

    rows = [
        {
            "question": "Who wrote Hamlet?",
            "answer": "Shakespeare.",
            "contexts": ["Hamlet is by Shakespeare."],
            "ground_truths": ["Shakespeare", "It was written by William Shakespeare in about 1600, in London."],
        }
    ]
    got = read_input(str(_ragas_file(tmp_path, rows)))
    # ground_truths: the short one is an answer (the other is 11 words, a comma and a full stop: 13 tokens);
    # both stay references
    assert got.items[0].gold["answers"] == ("Shakespeare",)
    assert len(got.items[0].gold["reference"]) == 2
    rows[0]["answers"] = ["Will"]  # the file gives its answers: they are used, the rule does not apply
    got = read_input(str(_ragas_file(tmp_path, rows)))
    assert got.items[0].gold["answers"] == ("Will",)
    assert not any("is also read as the short answers" in n for n in got.notes)
