"""What a suite's ``judge:`` section gets wrong, one line each (called by
:func:`rageval.suite.checks.config_problems`): the spec (:func:`~rageval.judges.spec.parse_judge_spec`), a
replay file, a misspelt name or kind, and the options (:class:`~rageval.judges.spec.JudgeOptions`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rageval.judges.build import build_judge
from rageval.judges.registry import BUILTIN, JUDGES
from rageval.judges.replay import ReplayJudge
from rageval.judges.spec import JudgeRef, option_problems, parse_judge_spec
from rageval.registry import closest, did_you_mean

__all__ = ["judge_problems", "params_problems"]


def judge_problems(spec: str, params: Mapping[str, Any], where: str = "judge") -> list[str]:
    """The problems of a judge ``spec`` with ``params`` (a suite's ``judge:``), one line each
    (``  judge.spec: ...``, ``  judge.params.<key>: ...``).  Nothing is downloaded and no model is loaded; a
    replay judge reads its file, a judge with its own parameters (openai) is built (no connection is made)."""
    ref = parse_judge_spec(spec)
    out = _spec_problems(ref, where)
    own = ref.params  # a judge with its own parameters (openai: model, base_url, ...)
    out += _params_problems(ref, params, where)
    if own and not out:  # such a judge is cheap to build (no model, no connection): build it, as the run does
        try:
            build_judge(spec, **params)
        except (TypeError, ValueError) as err:
            out.append(f"  {where}.params: {' '.join(str(err).split())}")
    return out


def _spec_problems(ref: JudgeRef, where: str) -> list[str]:
    """What is wrong with the spec string itself: malformed, an unreadable replay file, a misspelt name or kind."""
    if ref.problem is not None:
        return [f"  {where}.spec: {ref.problem}"]
    if ref.name == "replay" and ref.arg is not None:
        try:
            ReplayJudge(ref.arg)
        except (OSError, ValueError) as err:
            return [f"  {where}.spec: {' '.join(str(err).split())}"]
        return []
    if ref.name is None and not Path(ref.spec).expanduser().exists():
        return _unknown_name_problems(ref, where)
    return []


def _unknown_name_problems(ref: JudgeRef, where: str) -> list[str]:
    """A spec that names no judge and no local folder: a misspelt kind (``nil:/m``) or name (``lexcial``)."""
    judges, spec = JUDGES, ref.spec
    if ref.prefix is not None and "/" not in ref.prefix:
        known = [n for n in judges.names() if judges.meta(n).arg]
        hint = did_you_mean(ref.prefix, known) or f" Known: {', '.join(BUILTIN)}, or a model folder / hub id."
        return [f"  {where}.spec: unknown judge kind {ref.prefix!r} in {spec!r}.{hint}"]
    if ref.prefix is None and "/" not in spec:
        close = closest(spec, [n for n in judges.names() if not judges.meta(n).arg])
        if close is not None:
            msg = (
                f"  {where}.spec: {spec!r} is neither a judge name nor a local folder. Did you mean {close!r}? "
                f"Known: {', '.join(BUILTIN)}, or a model folder / hub id."
            )
            return [msg]
    return []


def params_problems(spec: str, params: Mapping[str, Any], where: str = "judge") -> list[str]:
    """What is wrong with the options ``params`` of judge ``spec`` (``  <where>.params.<key>: ...`` lines): bad
    values, and options the judge would record but not use (``max_length``, ``window`` of a judge that reads
    whole premises).  The one check of a suite's ``judge.params``, its ``audit.params`` and ``rageval audit``'s
    ``--max-length``/``--judge-param``."""
    return _params_problems(parse_judge_spec(spec), params, where)


def _params_problems(ref: JudgeRef, params: Mapping[str, Any], where: str) -> list[str]:
    """What is wrong with each of ``params``: a key written into the suite, a bad value, a window it cannot use."""
    own = ref.params
    problems = option_problems(params, own)
    out = []
    for key, value in params.items():
        if key == "api_key" and key in own:
            out.append(
                f"  {where}.params.api_key: do not write a key into a suite (the suite is recorded in the run's "
                "manifest); name the environment variable that holds it with api_key_env"
            )
        elif key in problems:
            out.append(f"  {where}.params.{key}: {problems[key]}")
        elif key == "max_length" and value is not None and not ref.windowed:
            out.append(
                f"  {where}.params.max_length: judge {ref.spec!r} does not truncate at max_length (the option "
                "would be recorded but change nothing); it applies to model judges (nli:, seq2seq:, a model "
                "folder or hub id)"
            )
        elif key == "window" and value not in (None, False) and not ref.windowed:
            out.append(
                f"  {where}.params.window: judge {ref.spec!r} reads whole premises (no token window); "
                "window applies to model judges (nli:, seq2seq:, a model folder or hub id)"
            )
    return out
