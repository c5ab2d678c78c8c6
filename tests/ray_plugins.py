"""Plugins for tests/test_ray.py, registered in the test process and, through Ray's ``worker_process_setup_hook``,
in every Ray worker: a compressor and a judge that kill their own worker process once (marked by a file), so Ray
must retry the task or restart the actor, and a judge whose values depend on its batches (so the Ray path must
make the same batches as a single-process run to give the same bytes).

They kill only where ``RAGEVAL_TEST_KILL_DIR`` is set: in the Ray workers the test starts, never in the test
process, so the single-process reference run is the same computation without the kills.
"""

from __future__ import annotations

import os

from rageval.compressors import REGISTRY
from rageval.compressors.naive import NaiveCompressor

from rageval.judges import JUDGES, LexicalJudge

KILL_DIR = "RAGEVAL_TEST_KILL_DIR"


def _kill_once(what: str) -> None:
    """In a worker: create the marker ``what`` and end this process at once (no cleanup), the first time only."""
    where = os.environ.get(KILL_DIR)
    if not where:
        return
    try:
        with open(os.path.join(where, what), "x") as f:
            f.write(str(os.getpid()))
    except FileExistsError:
        return
    os._exit(1)


class KillOnceNaive(NaiveCompressor):
    """``naive``, but its worker process dies at its second question, once."""

    name = "naive_kill_once"
    calls = 0

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        type(self).calls += 1
        if type(self).calls >= 2:
            _kill_once("compressor")
        return super()._compress(question, snippets, costs, budget_tokens, tokenizer)


class BatchMarkJudge(LexicalJudge):
    """The lexical judge in batches of 3 whose values carry the batch's size and position (so they depend on how
    the pairs were batched); its actor process dies at its third batch, once."""

    batch_size = 3
    calls = 0

    def __init__(self) -> None:
        super().__init__()
        self.id = "test-batchmark:" + self.id

    def predict(self, premises, hypotheses):
        type(self).calls += 1
        if type(self).calls >= 3:
            _kill_once("judge")
        base = super().predict(premises, hypotheses)
        n = len(premises)
        return [0.9 * float(p) + 0.1 * ((n * 7 + i) % 11) / 11 for i, p in enumerate(base)]


class FailingJudge(LexicalJudge):
    """A judge whose every call fails as a whole (an outage): the records get ``judge_error``."""

    id = "test-failing:v1"

    def predict(self, premises, hypotheses):
        from rageval.judges import JudgeError

        raise JudgeError(f"test judge: no answer for {len(premises)} pairs")


def setup() -> None:
    """Register the plugins (idempotent): the test process calls it, and every Ray worker at start-up."""
    if "naive_kill_once" not in REGISTRY:
        REGISTRY.register("naive_kill_once", KillOnceNaive)
    if "batchmark" not in JUDGES:
        JUDGES.register("batchmark", lambda arg, o: BatchMarkJudge())
    if "failing" not in JUDGES:
        JUDGES.register("failing", lambda arg, o: FailingJudge())
