"""The runner catches only the failures it declares; a programming error fails loudly."""

import json
from typing import Any, ClassVar

import pytest
from rageval.compressors import REGISTRY, CompressorError
from rageval.compressors.base import BaseCompressor

from rageval.suite.load import load_suite
from rageval.suite.run import run_suite


class FailingCompressor(BaseCompressor):
    """Raises what ``mode`` says: a declared CompressorError or a programming error."""

    name = "failing"
    PARAMS: ClassVar[dict[str, Any]] = {"mode": "declared"}

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        if self.params["mode"] == "declared":
            raise CompressorError("the backend rejected the input")
        if self.params["mode"] == "attribute":
            return self.no_such_method()
        raise NotImplementedError("a subclass forgot _compress")


@pytest.fixture
def failing():
    REGISTRY.register("failing", FailingCompressor)
    yield
    REGISTRY.unregister("failing")


def _suite(tmp_path, mode):
    p = tmp_path / "s.yaml"
    p.write_text(f"""\
name: fail
dataset: {{name: hotpotqa, limit: 2}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
  - {{compressor: failing, params: {{mode: {mode}}}}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
output_dir: {tmp_path / "out"}
""")
    return load_suite(p)


def test_declared_compressor_error_is_a_counted_status(failing, tmp_path):
    result = run_suite(_suite(tmp_path, "declared"), progress=False, build_report=False)
    assert result.status_counts == {"ok": 2, "compressor_error": 2}
    recs = [json.loads(x) for x in (result.out_dir / "records.jsonl").read_text().splitlines()]
    assert [r["error"] for r in recs if r["status"] == "compressor_error"] == [
        "CompressorError: the backend rejected the input"
    ] * 2


@pytest.mark.parametrize("mode,exc", [("attribute", AttributeError), ("missing", NotImplementedError)])
def test_programming_errors_propagate(failing, tmp_path, mode, exc):
    with pytest.raises(exc):
        run_suite(_suite(tmp_path, mode), progress=False, build_report=False)


def test_a_judge_bug_propagates_but_a_judge_error_is_a_status(failing, tmp_path, monkeypatch):
    from rageval.judges import JudgeError
    from rageval.judges.lexical import LexicalJudge

    suite = _suite(tmp_path, "declared")
    suite = suite.model_copy(update={"settings": suite.settings[:1]})

    def broken(self, premises, hypotheses):
        raise JudgeError("judge 'lexical' returned None for pair 0")

    monkeypatch.setattr(LexicalJudge, "predict", broken)
    result = run_suite(suite, progress=False, build_report=False)
    assert result.status_counts == {"judge_error": 2}

    def bug(self, premises, hypotheses):
        return {}["missing"]

    monkeypatch.setattr(LexicalJudge, "predict", bug)
    with pytest.raises(KeyError):
        run_suite(suite, tmp_path / "out2", progress=False, build_report=False)


def test_judge_and_reader_are_closed_when_the_run_fails(failing, tmp_path, monkeypatch):
    from rageval.judges import JudgeRunner

    closed = []
    original = JudgeRunner.close

    def spy(self):
        closed.append(self.id)
        original(self)

    monkeypatch.setattr(JudgeRunner, "close", spy)
    with pytest.raises(AttributeError):
        run_suite(_suite(tmp_path, "attribute"), progress=False, build_report=False)
    assert len(closed) == 1 and closed[0].startswith("lexical")
