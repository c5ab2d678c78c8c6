"""TEMPORARY until the spec branch lands."""

from rageval.suite.config import JudgeSpec  # noqa: F401


def judge_problems(spec, params, where="judge"):  # TEMPORARY
    from types import SimpleNamespace

    from rageval.suite.checks import _judge_problems

    return _judge_problems(SimpleNamespace(judge=SimpleNamespace(spec=spec, params=dict(params))))
