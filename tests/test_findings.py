"""The report's findings, the values fixed by construction and the explorer's record sample, on small cases
computed by hand (docs/statistics.md#findings)."""

from __future__ import annotations

import json

import pytest

from rageval.diagnostics.structural import STRUCTURAL, setting_facts, structural_marks
from rageval.report.explorer import explorer_data, explorer_json, sample_key
from rageval.report.findings import findings, findings_lines, frontier_sentence, structural_reason
from rageval.report.result import Analysis


def _rec(setting, qid="q1", units=None, sources=None, cites=True, status="ok"):
    return {
        "question_id": qid,
        "setting": {"name": setting},
        "status": status,
        "context": {"units": units if units is not None else []},
        "sources": sources or [],
        "answer": {"sentences": [{"text": "x", "citations": [1] if cites else []}]},
        "metrics": {"answer_f1": 0.5},
    }


SOURCES = [{"id": "d1.s0", "text": "Paris is  the capital."}, {"id": "d1.s1", "text": "It is in France."}]


def test_facts_of_a_setting_from_its_ok_records():
    verbatim = {"text": "Paris is the capital. It is in France.", "source_ids": ["d1.s0", "d1.s1"]}
    pruned = {"text": "Paris capital France", "source_ids": None}
    edited = {"text": "Paris is the capital.", "source_ids": ["d1.s0", "d1.s1"]}  # declares more than it shows
    recs = [
        _rec("identity", units=[verbatim], sources=SOURCES),
        _rec("prune", units=[pruned], sources=SOURCES),
        _rec("edit", units=[verbatim], sources=SOURCES),
        _rec("edit", qid="q2", units=[edited], sources=SOURCES),
        _rec("silent", units=[verbatim], sources=SOURCES, cites=False),
        _rec("failed", units=[pruned], status="reader_error"),  # not ok: no facts
    ]
    facts = setting_facts(iter(recs))  # one pass over an iterable
    assert facts == {
        "identity": {"no_provenance": False, "verbatim": True, "no_citations": False},
        "prune": {"no_provenance": True, "verbatim": False, "no_citations": False},
        "edit": {"no_provenance": False, "verbatim": False, "no_citations": False},
        "silent": {"no_provenance": False, "verbatim": True, "no_citations": True},
    }
    keys = ["unsupported_declared_span", "grounded_precision", "gap_precision", "answer_f1", "emitted_precision"]
    marks = structural_marks(facts, keys)
    assert set(marks) == {"identity", "prune", "silent"}  # "edit" has no mark
    assert set(marks["prune"]) == {"unsupported_declared_span"} and marks["prune"]["unsupported_declared_span"]["fixed"]
    assert marks["identity"]["gap_precision"]["fixed"] and not marks["identity"]["grounded_precision"]["fixed"]
    # the first rule that applies gives the reason: a silent verbatim setting's gap is 0 by construction
    assert marks["silent"]["gap_precision"]["reason"].startswith("0 by construction")
    assert marks["silent"]["emitted_precision"]["reason"] == STRUCTURAL[-1].reason
    assert "answer_f1" not in marks["silent"]


def _contrast(a, metric, effect, p_holm, *, mean_a, mean_b, b="base", direction="higher"):
    return {
        "a": a,
        "b": b,
        "metric": metric,
        "metric_a": metric,
        "metric_b": metric,
        "kind": "pair",
        "family": "contrasts",
        "direction": direction,
        "effect": effect,
        "mean_a": mean_a,
        "mean_b": mean_b,
        "ci_low": effect - 0.1,
        "ci_high": effect + 0.1,
        "p_value": p_holm / 2,
        "p_holm": p_holm,
        "contrast": f"{a} - {b}: {metric}",
    }


def _summary_row(setting, **means):
    return {
        "setting": setting,
        "n_records": 10,
        "n_ok": 10,
        "metrics": {k: {"mean": v, "n": 10, "n_undefined": 0} for k, v in means.items()},
    }


def _an_json():
    rows = [
        _summary_row(
            "base",
            answer_f1=0.6,
            emitted_precision=1.0,
            grounded_precision=1.0,
            gap_precision=0.0,
            unsupported_declared_span=0.0,
        ),
        _summary_row(
            "prune",
            answer_f1=0.4,
            emitted_precision=1.0,
            grounded_precision=0.5,
            gap_precision=0.5,
            unsupported_declared_span=1.0,
        ),
    ]
    return {  # the JSON object of report.json (rageval.report.result.Analysis.from_json), in part
        "summary": rows,
        "metric_names": ["answer_f1", "emitted_precision", "grounded_precision", "unsupported_declared_span"],
        "gaps": {"gap_precision": ["emitted_precision", "grounded_precision"]},
        "contrasts": [
            _contrast("prune", "answer_f1", -0.2, 0.01, mean_a=0.4, mean_b=0.6),
            _contrast("prune", "grounded_precision", -0.5, 0.02, mean_a=0.5, mean_b=1.0),
            _contrast("prune", "unsupported_declared_span", 1.0, 0.001, mean_a=1.0, mean_b=0.0, direction="lower"),
            _contrast("prune", "emitted_precision", 0.0, 1.0, mean_a=1.0, mean_b=1.0),
        ],
        "holm": {"families": {"contrasts": 4}, "resolution": {"warning": None}},
        "cohort": {"n": 40, "n_questions": 40, "n_clusters": None},
        "structural": {
            "prune": {"unsupported_declared_span": {"reason": "by construction: no provenance", "fixed": True}},
            "base": {
                "gap_precision": {"reason": "0 by construction", "fixed": True},
                "grounded_precision": {"reason": "equal to emitted by construction", "fixed": False},
            },
        },
        "frontier": {"pairs": []},
        "validity": {"available": False},
    }


def _an():
    return Analysis.from_json(_an_json())


def test_findings_list_supported_effects_gaps_and_structural_values_never_as_effects():
    an = _an()
    found = findings(an)
    kinds = [f["kind"] for f in found]
    assert kinds == ["effect", "effect", "gap", "structural", "structural"]  # 40 questions: no small-cohort warning
    answer, attribution = found[0], found[1]
    assert answer["text"].startswith("Largest supported answer effects, of 1 with Holm p < 0.05")
    assert answer["items"] == [
        "`prune` − `base` on `answer_f1`: -0.200 (0.400 vs 0.600; 95% CI [-0.300, -0.100], Holm p 0.0100, worse)."
    ]
    # grounded = emitted in base is a relation, not a fixed value: prune's grounding loss is an effect
    assert attribution["items"][0].startswith("`prune` − `base` on `grounded_precision`: -0.500")
    # the declared span's 1.0 in prune is fixed by construction: never an effect (Holm p 0.001 or not)
    assert not any("unsupported_declared_span" in i for f in found for i in f.get("items", []))
    assert structural_reason(an, an.contrasts[2]) == "by construction: no provenance"
    assert found[2]["text"] == (
        "`emitted_precision` − `grounded_precision` (what the reader saw vs the source) is non-zero in 1 of 2 "
        "settings: `prune` 1.000 vs 0.500 (gap +0.500) (grounding `single`: a unit without provenance in the "
        "snippets recovered one by one)."
    )
    assert (
        found[3]["text"]
        == "By construction: `grounded_precision` in 1 of 2 settings (`base`), equal to emitted by construction."
    )
    assert found[4]["text"] == (
        "Not an effect: `unsupported_declared_span` in 1 of 2 settings (`prune` = 1.000), by construction: "
        "no provenance."
    )
    lines = findings_lines(found)
    assert lines[0] == "- Largest supported answer effects, of 1 with Holm p < 0.05:"
    assert lines[1].startswith("    prune − base on answer_f1: -0.200")


def test_warnings_come_first():
    data = _an_json()
    data["cohort"] = {"n": 6, "n_questions": 6, "n_clusters": None}
    data["holm"]["resolution"]["warning"] = "Holm floor 0.3125: no contrast can reach alpha = 0.05."
    data["summary"][1]["judge_abstentions"] = {"sum": 3, "n_questions_with": 2, "n": 10}
    found = findings(Analysis.from_json(data))
    warnings = [f["text"] for f in found if f["kind"] == "warning"]
    assert [f["kind"] for f in found[:3]] == ["warning"] * 3
    assert warnings == [
        "Holm floor 0.3125: no contrast can reach alpha = 0.05.",
        "Small cohort: 6 questions; intervals are wide and p-values coarse.",
        "The judge abstained 3 times in 1 setting (counted as not supported).",
    ]
    assert findings_lines(found)[0].startswith("! Holm floor")


@pytest.mark.parametrize(
    ("points", "frontier", "want"),
    [
        ({"a": [0.2, 1.0], "b": [0.3, 1.0], "c": [0.5, 0.4]}, ["a"], "is degenerate: 2 of 3 settings reach"),
        ({"a": [0.2, 1.0], "b": [0.3, 1.0]}, ["a"], "every setting has `y` = 1.000"),
        ({"a": [0.2, 0.5], "b": [0.3, 0.9]}, ["a", "b"], "non-dominated `a`, `b`; 0 of 0"),
    ],
)
def test_frontier_sentences(points, frontier, want):
    pair = {
        "x": "x",
        "y": "y",
        "directions": ["lower", "higher"],
        "points": points,
        "frontier": frontier,
        "relations": [],
        "n_supported": 0,
    }
    text, degenerate = frontier_sentence(pair)
    assert want in text and degenerate == (len(frontier) == 1)


def _records(n_questions, settings):
    for s in settings:
        for i in range(n_questions):
            yield _rec(
                s, qid=f"q{i}", units=[{"text": "Paris is the capital.", "source_ids": ["d1.s0"]}], sources=SOURCES
            )


def test_the_explorer_embeds_a_small_run_whole():
    data = explorer_data(_records(3, ["base", "prune"]), ["base", "prune"], ["answer_f1"], seed=0)
    assert (data["n_total"], data["n_shown"], data["sampled"]) == (6, 6, False)
    assert [(r["s"], r["q"]) for r in data["records"]][:3] == [("base", "q0"), ("base", "q1"), ("base", "q2")]
    first = data["records"][0]
    assert first["u"] == [[None, ["d1.s0"]]]  # the join of its declared snippet (whitespace aside): null
    assert first["m"] == {"answer_f1": 0.5} and first["a"][0]["d"] == "unjudged"
    assert data["questions"]["q0"]["sources"]["d1.s0"] == "Paris is the capital."
    assert "<" not in explorer_json({"x": "</script><b>"})


def test_the_explorer_shows_an_answer_not_split_whole():
    # str-EM alone: the record's answer is not split into sentences (no selected diagnostic reads its claims)
    unsplit = {**_rec("base"), "answer": {"text": "Paris  is the capital [1].", "mode": "alce", "sentences": []}}
    empty = {**_rec("base", qid="q2"), "answer": {"text": " ", "mode": "alce", "sentences": []}}
    data = explorer_data([unsplit, empty], ["base"], [], seed=0)
    got = {r["q"]: r["a"] for r in data["records"]}
    assert got["q1"] == [{"t": "Paris is the capital [1].", "c": [], "d": "unjudged", "cd": [], "ev": [], "v": {}}]
    assert got["q2"] == []  # an empty answer: no sentence


def test_the_explorer_samples_a_large_run_by_setting_with_the_same_questions_in_each():
    settings = ["base", "a", "b", "c"]
    data = explorer_data(_records(50, settings), settings, [], seed=7, limit=40)
    assert (data["n_total"], data["n_shown"], data["sampled"]) == (200, 40, True)
    by = {s: [r["q"] for r in data["records"] if r["s"] == s] for s in settings}
    assert all(len(q) == 10 for q in by.values())  # k = 40 // 4 per stratum
    want = sorted((f"q{i}" for i in range(50)), key=lambda q: sample_key(q, 7))[:10]
    assert all(sorted(q) == sorted(want) for q in by.values())  # the 10 smallest seeded hashes, in every setting
    other = explorer_data(_records(50, settings), settings, [], seed=8, limit=40)
    assert {r["q"] for r in other["records"]} != set(want)  # another seed, another sample
    again = explorer_data(_records(50, settings), settings, [], seed=7, limit=40)
    assert json.dumps(again, sort_keys=True) == json.dumps(data, sort_keys=True)


def test_each_citation_in_the_explorer_carries_its_own_gate_decision():
    """Per citation: supported through its source, only by the unit the reader saw, or neither (the gate's
    per-citation precision in each mode); the sentence's decision where a record has none per citation."""
    from rageval.report.explorer import _sentences

    def rec(sentence):
        return {"extra": {"attribution": {"sentences": [sentence]}}}

    both = {"text": "x.", "citations": [1, 2, 3]}
    both["emitted"] = {"precise": [True, True, False], "supported": True}
    both["grounded"] = {"precise": [True, False, False], "supported": True}
    (s,) = _sentences(rec(both))
    assert s["d"] == "source" and s["cd"] == ["source", "seen", "neither"]
    short = {"text": "y.", "citations": [1, 2], "emitted": {"supported": True}, "grounded": {"supported": False}}
    (s,) = _sentences(rec(short))
    assert s["d"] == "seen" and s["cd"] == ["seen", "seen"]  # no per-citation decisions: the sentence's
    (s,) = _sentences({"answer": {"sentences": [{"text": "z.", "citations": [4]}]}})
    assert s["cd"] == ["unjudged"]


def _validity_an(rows, r_aic, r_recall):
    data = _an_json()
    data.update(summary=rows, contrasts=[], structural={})
    data["validity"] = {
        "available": True,
        "answer_metric": "answer_f1",
        "pooled": {"r_aic_f1": r_aic, "r_recall_f1": r_recall, "n": 40, "delta_r2": 0.003},
    }
    return Analysis.from_json(data)


def _validity_text(an):
    return next(f["text"] for f in findings(an) if f["kind"] == "validity")


def test_validity_compares_the_strength_of_r_and_says_a_negative_sign():
    """The false finding of issue 42: r = -0.091 vs -0.214 read as "tracks more closely" (signed r compared).
    |-0.091| < |-0.214|: answer-in-context is the weaker predictor, and both go the wrong way."""
    rows = [_summary_row("base", answer_in_context=0.5, retrieval_recall=0.8, answer_f1=0.4)]
    text = _validity_text(_validity_an(rows, -0.091, -0.214))
    assert text.startswith(
        "Answer-in-context is less strongly correlated with `answer_f1` than retrieval recall is (by |r|: pooled "
        "r = -0.091 vs -0.214, n = 40; adding it to recall changes R² by 0.003); both correlations are negative: "
        "a higher value of either goes with a lower `answer_f1`."
    )
    assert "more closely" not in text
    # positive r: the sentence of before, compared by size
    assert _validity_text(_validity_an(rows, 0.416, 0.264)).startswith(
        "Answer-in-context tracks `answer_f1` more closely than retrieval recall does (pooled r = 0.416 vs 0.264,"
    )
    # a stronger negative r is "more strongly correlated", not "more closely tracks"
    text = _validity_text(_validity_an(rows, -0.3, 0.1))
    assert text.startswith("Answer-in-context is more strongly correlated with `answer_f1` than retrieval recall is")
    assert "; answer-in-context's is negative: a higher answer-in-context goes with a lower `answer_f1`." in text
    # equal as printed: neither more nor less
    assert "tracks `answer_f1` as closely as retrieval recall does" in _validity_text(
        _validity_an(rows, 0.2004, 0.1996)
    )


def test_validity_names_one_value_once_not_as_a_range():
    """The false finding of issue 42: "runs from 0.341 to 0.341" for one setting."""
    one = [_summary_row("only", answer_in_context=0.3414, retrieval_recall=0.845, answer_f1=0.4)]
    text = _validity_text(_validity_an(one, 0.4, 0.2))
    assert text.endswith(" Its one setting, `only`, has retrieval recall 0.845 and `answer_in_context` 0.341.")
    assert "runs from" not in text and "in every setting" not in text
    # several settings, the same value as printed: said once, no claim about what recall misses
    same = [
        _summary_row("a", answer_in_context=0.3414, retrieval_recall=0.845, answer_f1=0.4),
        _summary_row("b", answer_in_context=0.3406, retrieval_recall=0.845, answer_f1=0.4),
    ]
    assert _validity_text(_validity_an(same, 0.4, 0.2)).endswith(
        " Retrieval recall is 0.845 and `answer_in_context` 0.341 in every setting."
    )
    # different values: the range, from the higher to the lower
    apart = [same[0], _summary_row("b", answer_in_context=0.2, retrieval_recall=0.845, answer_f1=0.4)]
    assert _validity_text(_validity_an(apart, 0.4, 0.2)).endswith(
        " Retrieval recall is 0.845 in every setting while `answer_in_context` runs from 0.341 (`a`) to 0.200 (`b`): "
        "recall does not see what compression removes."
    )


def test_re_attributability_is_not_marked_by_uncited_answers():
    """The false finding of issue 42: re-attributability called undefined ("the answers cite no unit") beside a
    value of 0.775.  It judges units without provenance against the sources and reads no citation, so an
    uncited setting leaves it to be measured; the citation scores it does fix are 0 (precision: undefined with
    no_citation_precision="undefined"), as the engine computes them."""
    from rageval.diagnostics.attribution import grounded_precision, re_attributability

    units = [[{"text": "Paris is France capital.", "source_ids": None}]]
    sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}]]
    uncited = ["Paris is the capital of France."]
    recs = [_rec("silent", units=units[0], sources=sources[0], cites=False)]
    facts = setting_facts(recs)
    assert facts["silent"]["no_citations"] and facts["silent"]["no_provenance"]
    keys = ["re_attributability", "emitted_precision", "emitted_recall", "grounded_precision", "grounded_recall"]
    keys += ["gap_precision", "gap_recall"]
    marks = structural_marks(facts, keys)["silent"]
    assert "re_attributability" not in marks
    assert re_attributability(uncited, units, sources, details=False)["re_attributability"] == 1.0  # measured
    rule = STRUCTURAL[-1]
    assert rule.fact == "no_citations" and set(marks) == set(keys) - {"re_attributability"}
    assert all(marks[k]["reason"] == rule.reason for k in marks)
    for option, want in (("zero", 0.0), ("undefined", None)):  # what the rule says, as the engine computes it
        r = grounded_precision(uncited, units, sources, no_citation_precision=option, details=False)
        assert (r["emitted_recall"], r["grounded_recall"], r["emitted_minus_grounded_recall"]) == (0.0, 0.0, 0.0)
        assert r["emitted_precision"] == r["grounded_precision"] == want and want in rule.values
        assert r["emitted_minus_grounded_precision"] == want
    assert "undefined" not in rule.reason.split("(")[0]  # the default says 0, not undefined
    # the finding and the summary.md footnote carry the rule's reason: neither names re-attributability
    data = _an_json()
    data["metric_names"] = [*data["metric_names"], "re_attributability"]
    for row, v in zip(data["summary"], (None, 0.775)):
        row["metrics"]["re_attributability"] = {"mean": v, "n": 10, "n_undefined": 10 if v is None else 0}
    data["summary"][1]["metrics"]["emitted_precision"]["mean"] = 0.0
    for row in data["summary"]:
        row["achieved_ratio"] = None
    data["structural"] = {"prune": {"emitted_precision": {"reason": rule.reason, "fixed": True}}}
    an = Analysis.from_json(data)
    texts = [f["text"] for f in findings(an) if f["kind"] == "structural"]
    assert texts == [f"Not an effect: `emitted_precision` in 1 of 2 settings (`prune` = 0.000), {rule.reason}."]
    from rageval.report.tables import _means_markdown  # summary.md's means tables and their † footnotes

    md = _means_markdown(an)
    assert "re_attributability" in md and f"†1 {rule.reason}." in md
    assert "0.775" in md and "0.775 †" not in md  # measured, not marked
    assert "citation scores are undefined" not in md
