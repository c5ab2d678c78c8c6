import json

import pytest

from rageval.types import Answer, CitedSentence, Context, Record, Setting, SourceSnippet, Unit


def _record():
    src = (SourceSnippet("d0.s0", "Paris is in France.", "d0", title="Paris", position=0, doc_rank=0),)
    ctx = Context(
        units=(Unit("Paris is in France.", ("d0.s0",), title="Paris"), Unit("A summary.", None)),
        achieved_tokens=8,
        retrieved_tokens=16,
        budget_tokens=10,
        budget=0.5,
    )
    ans = Answer("Paris [1].", (CitedSentence("Paris.", "Paris [1].", (1,), ("9",), ()),))
    return Record(
        question_id="q1",
        setting=Setting("extractive@0.5", "extractive", 0.5, "extractive"),
        status="ok",
        context=ctx,
        sources=src,
        answer=ans,
        metrics={"answer_f1": 1.0, "evidence_f1": None, "x": float("nan")},
        input_hash="abc",
    )


def test_record_json_round_trip_is_exact():
    rec = _record()
    line = json.dumps(rec.to_dict(), sort_keys=True)
    back = Record.from_dict(json.loads(line))
    assert back == rec
    assert json.dumps(back.to_dict(), sort_keys=True) == line


def test_nan_metric_is_stored_as_null():
    assert _record().to_dict()["metrics"]["x"] is None


def test_record_has_design_keys():
    d = _record().to_dict()
    for key in ("question_id", "setting", "status", "context", "sources", "answer", "metrics"):
        assert key in d
    assert set(d["context"]) >= {"units", "budget_tokens", "achieved_tokens", "achieved_ratio"}
    assert d["context"]["achieved_ratio"] == 0.5


def test_objects_are_immutable():
    u = Unit("x", ("d0.s0",))
    with pytest.raises(AttributeError):
        u.text = "y"


def test_empty_source_ids_rejected_with_hint():
    with pytest.raises(ValueError, match="use None"):
        Unit("x", source_ids=[])


def test_unit_type_errors_name_the_field():
    with pytest.raises(TypeError, match=r"Unit.source_ids\[0\]"):
        Unit("x", source_ids=[3])
    with pytest.raises(TypeError, match="Unit.text"):
        Unit(None)


def test_unknown_status_rejected():
    with pytest.raises(ValueError, match="status"):
        Record("q", Setting("s", "identity"), status="fine")


def test_achieved_ratio_undefined_without_retrieved_tokens():
    assert Context((), achieved_tokens=0, retrieved_tokens=0).achieved_ratio is None
