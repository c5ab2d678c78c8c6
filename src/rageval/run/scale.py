"""Scale-out on Ray: ``rageval suite FILE --ray [ADDRESS]`` (docs/scale.md).

The single-process run stays the one path; Ray only moves work out of it:

* **questions**: each batch of pending (question, setting) items is compressed
  and read in a Ray *task* (:func:`compress_read_task`), the compressor, reader
  and tokenizer built from the suite inside the worker (once per worker process);
  the contexts, failed records and reader outputs come back to the driver;
* **judge calls**: the driver's :class:`~rageval.judges.base.JudgeRunner` (de-duplication,
  memory and sqlite cache, length-sorted batches, counters) wraps a
  :class:`RayJudge` instead of the backend; its ``predict`` splits each chunk it
  is handed into the backend's own batches (the same batches a single-process
  run makes) and fans them out to Ray *actors* (:class:`JudgeWorker`), one judge
  model per actor, each on its own GPU where the cluster has GPUs and the judge
  runs on torch;
* **the driver alone** scores (in the single-process order), writes every record
  and the judge cache (one writer per run directory), and builds the report, so
  the outputs are the same bytes as a single-process run and resume works the
  same way.

A worker killed mid-run is handled by Ray: a task is retried (``max_retries``),
an actor restarted and its call retried (``max_restarts``, ``max_task_retries``);
compression, reading and judging are deterministic, so a retry returns the same
values.  When Ray gives up, the run stops with :class:`~rageval.errors.RunFailure`;
the records written so far are kept and a rerun resumes.

Ray is an optional extra (``pip install 'rageval[ray]'``), imported only here.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from rageval.errors import ConfigError, ModelUnavailable, RunFailure, install_hint, require
from rageval.run.parts import load_judge, make_compressor, make_reader
from rageval.run.plan import CompressRead, sha
from rageval.text import get_tokenizer

log = logging.getLogger("rageval")

__all__ = [
    "LOCAL",
    "INSTALL_HINT",
    "require_ray",
    "RaySession",
    "RayJudge",
    "JudgeWorker",
    "compress_read_task",
]

#: ``--ray`` without an address: start a local Ray instance (or join the cluster ``RAY_ADDRESS`` names).
LOCAL = "local"
INSTALL_HINT = install_hint("ray")
#: Ray's retries of a task whose worker died, restarts of a judge actor and retries of its calls.
TASK_RETRIES = 3
ACTOR_RESTARTS = 3
ACTOR_TASK_RETRIES = 3


def require_ray() -> Any:
    """The ``ray`` module, or a :class:`~rageval.errors.ConfigError` saying how to install it."""
    require("ray", what="--ray", error=ConfigError, otherwise="on every node of a cluster, or run without --ray")
    import ray

    return ray


# -- in a Ray worker -------------------------------------------------------------------------------------------
_PARTS: dict[str, Any] = {}  # compressors, readers, tokenizers built in this worker process, by what they are


def _part(key: str, build: Callable[[], Any]) -> Any:
    got = _PARTS.get(key)
    if got is None:
        got = _PARTS[key] = build()
    return got


def compress_read_task(spec: tuple, batch: list) -> tuple[list, list, dict[int, Any]]:
    """A Ray task: compress and read one batch as :func:`rageval.run.execute.compress_and_read` does.

    ``spec``: ``(setting, compressor name, its params, the driver's compressor error or None, the ReaderSpec that
    reads the setting, the tokenizer spec, allow_unavailable, run hash, context limit)``.  The parts are built in
    this worker, once per worker process (:mod:`rageval.run.parts`).
    """
    from rageval.run.execute import Stage, compress_and_read

    setting, name, params, comp_error, reader_spec, tokenizer_spec, allow_unavailable, run_hash, limit = spec
    tokenizer = _part(f"tokenizer:{tokenizer_spec}", lambda: get_tokenizer(tokenizer_spec))
    compressor = None
    if comp_error is None:
        try:
            compressor = _part(f"compressor:{sha([run_hash, name, params])}", lambda: make_compressor(name, params))
        except ModelUnavailable as err:
            if not allow_unavailable:
                raise
            comp_error = str(err)
    key = sha([run_hash, reader_spec.model_dump(mode="json"), tokenizer_spec])
    reader = _part(f"reader:{key}", lambda: make_reader(reader_spec, tokenizer_spec))
    parts = (setting, compressor, comp_error, reader, tokenizer, None, (), None, allow_unavailable)
    stage = Stage(*parts, context_limit=limit)  # type: ignore[arg-type]
    return compress_and_read(batch, stage)


class JudgeWorker:
    """A Ray actor: one judge backend, built once from the suite's spec, on this actor's GPU when it has one."""

    def __init__(self, spec: str, params: dict[str, Any]):
        import ray

        from rageval.judges import build_judge

        opts = dict(params)
        if ray.get_gpu_ids() and "device" not in opts:
            opts["device"] = "cuda"  # Ray set CUDA_VISIBLE_DEVICES: this actor's own GPU
        self.backend = build_judge(spec, **opts)
        self.uses_torch = bool(getattr(self.backend, "uses_torch", False))

    def info(self) -> dict[str, Any]:
        return {"id": self.backend.id, "pid": os.getpid(), "gpus": [str(g) for g in _gpu_ids()]}

    def predict(self, premises: list[str], hypotheses: list[str]) -> tuple[Any, dict[str, Any]]:
        """The backend's values for one batch (lists, numpy/torch values as floats) and its counters."""
        ctx: Any = contextlib.nullcontext()
        if self.uses_torch:
            import torch

            ctx = torch.inference_mode()
        with ctx:
            probs = self.backend.predict(premises, hypotheses)
        if hasattr(probs, "tolist"):
            probs = probs.tolist()
        elif isinstance(probs, tuple):
            probs = list(probs)
        stats = getattr(self.backend, "stats", None)
        return probs, (dict(stats()) if callable(stats) else {})


def _gpu_ids() -> list:
    import ray

    return list(ray.get_gpu_ids())


# -- in the driver ---------------------------------------------------------------------------------------------
class RayJudge:
    """The driver's judge backend on Ray: ``predict`` runs on :class:`JudgeWorker` actors.

    Everything else (``id``, ``tokenizer``, ``length``, ``token_counts``, ...) is the driver's own instance of the
    same judge, so the cache key, the sort order and the verifier token counts are those of a single-process run.
    ``batch_size`` is a multiple of the backend's (the chunk the runner hands over); each chunk is split into the
    backend's own batches, in order, and those go to the actors round-robin.
    """

    uses_torch = False  # the actors run torch judges under inference_mode; the driver imports no torch for them

    def __init__(self, local: Any, actors: list, sub_batch: int, session: RaySession):
        self._local = local
        self._actors = actors
        self._sub = sub_batch
        self._session = session
        self._next = 0
        self._actor_stats: dict[int, dict[str, Any]] = {}
        self.id: str = local.id
        self.batch_size = sub_batch * len(actors) * 4

    def __getattr__(self, name: str) -> Any:  # only for attributes not set here: the driver's own judge
        local = self.__dict__.get("_local")
        if local is None:
            raise AttributeError(name)
        return getattr(local, name)

    def predict(self, premises: list[str], hypotheses: list[str]) -> Any:
        b, n = self._sub, len(self._actors)
        calls = []
        for k, i in enumerate(range(0, len(premises), b)):
            a = (self._next + k) % n
            calls.append((a, self._actors[a].predict.remote(premises[i : i + b], hypotheses[i : i + b])))
        self._next = (self._next + len(calls)) % n
        out: list = []
        for a, ref in calls:
            probs, stats = self._session.get(ref)
            self._actor_stats[a] = stats
            if not isinstance(probs, list):
                return probs  # not a list of values: the runner's protocol check names it
            out.extend(probs)
        return out

    def stats(self) -> dict[str, Any]:
        """The backend's counters summed over the actors (each actor's latest), plus the driver's own."""
        own = getattr(self._local, "stats", None)
        out: dict[str, Any] = dict(own()) if callable(own) else {}
        for stats in self._actor_stats.values():
            for k, v in stats.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(out.get(k, 0), (int, float)):
                    out[k] = out.get(k, 0) + v
                else:
                    out.setdefault(k, v)
        return out

    def close(self) -> None:
        close = getattr(self._local, "close", None)
        if callable(close):
            close()


class RaySession:
    """A run's use of Ray: connect (or start a local instance), the judge actors, the compress+read tasks.

    ``address``: :data:`LOCAL` (``ray.init()``: a new local instance, or the cluster ``RAY_ADDRESS`` names) or
    a cluster address (``"auto"``, ``"ray://head:10001"``).  When Ray is already initialised in this process
    (a notebook, a test), that instance is used and left running.  ``judge_actors``: number of judge actors
    (default: one per GPU for a torch judge on a cluster with GPUs, else one per 4 CPUs, at least one).
    """

    def __init__(self, address: str, *, judge_actors: int | None = None, window: int | None = None):
        ray = require_ray()
        self.ray = ray
        self.address = address
        self.started = False
        t0 = time.perf_counter()
        if not ray.is_initialized():
            try:
                if address == LOCAL and not os.environ.get("RAY_ADDRESS"):
                    ray.init(include_dashboard=False, logging_level=logging.WARNING)
                else:
                    ray.init(address=None if address == LOCAL else address, logging_level=logging.WARNING)
            except (ConnectionError, RuntimeError, ValueError) as err:
                where = os.environ.get("RAY_ADDRESS") if address == LOCAL else address
                raise RunFailure(f"--ray: cannot start or reach Ray ({where or 'a local instance'}): {err}") from None
            self.started = True
        self.init_seconds = time.perf_counter() - t0  # Ray's start-up (or connection): a fixed cost of the run
        self.actor_seconds = 0.0
        self.nodes = len([n for n in ray.nodes() if n.get("Alive", True)])
        resources = ray.cluster_resources()
        self.cpus = int(resources.get("CPU", 1))
        self.gpus = int(resources.get("GPU", 0))
        if self.started and self.nodes == 1:
            log.warning(
                "rageval: note: --ray on one machine (%d CPUs, %d GPUs): starting Ray took %.1f s, a cost the "
                "single-process run does not pay; on one machine --ray gains only where compressing and reading "
                "outweigh it (docs/scale.md#speed-on-one-machine)",
                self.cpus,
                self.gpus,
                self.init_seconds,
            )
        self.judge_actors = judge_actors
        self.window = window or max(2, 2 * self.cpus)  # batches in flight ahead of the one being scored
        self.tasks = 0
        self.actors: list = []
        self._actor_info: list[dict[str, Any]] = []
        self._task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(compress_read_task)

    def get(self, ref: Any) -> Any:
        """``ray.get``; a task's own exception is raised as itself (a ``JudgeError`` stays a ``JudgeError``)."""
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as err:
            cause = getattr(err, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise
        except ray.exceptions.RayError as err:  # a worker or actor Ray gave up on after its retries
            raise RunFailure(
                f"--ray: a Ray worker failed after {TASK_RETRIES} retries ({type(err).__name__}: "
                f"{' '.join(str(err).split())[:400]}); the records written so far are kept: rerun to resume"
            ) from None

    def judge(self, judge: Any, cache_dir: Path, tokenizer: Any) -> Any:
        """The run's :class:`~rageval.judges.base.JudgeRunner` (here, with the sqlite cache) over a :class:`RayJudge`
        (``judge``: the run's JudgeSpec)."""
        from rageval.judges import JudgeRunner

        params = dict(judge.params)
        # the driver's own instance: the id (cache key), tokenizer and token counts of a single-process run
        local = load_judge(judge, None, tokenizer).judge
        uses_torch = bool(getattr(local, "uses_torch", False))
        on_gpu = bool(self.gpus) and uses_torch
        n = self.judge_actors or (self.gpus if on_gpu else max(1, self.cpus // 4))
        options: dict[str, Any] = {
            "num_cpus": 1 if self.cpus >= 2 else 0,  # leave a CPU to the compress+read tasks
            "max_restarts": ACTOR_RESTARTS,
            "max_task_retries": ACTOR_TASK_RETRIES,
        }
        if on_gpu:
            options["num_gpus"] = 1
        worker = self.ray.remote(**options)(JudgeWorker)
        t0 = time.perf_counter()
        self.actors = [worker.remote(judge.spec, params) for _ in range(n)]
        self._actor_info = [self.get(a.info.remote()) for a in self.actors]
        self.actor_seconds = time.perf_counter() - t0  # the judge actors started and their judges loaded
        for info in self._actor_info:
            if info["id"] != local.id:
                raise RunFailure(
                    f"--ray: the judge on a Ray worker is {info['id']!r}, here it is {local.id!r}: the nodes must "
                    "have the same rageval, judge weights and options (docs/scale.md#a-cluster)"
                )
        sub = int(params.get("batch_size") or getattr(local, "batch_size", None) or (8 if uses_torch else 256))
        return JudgeRunner(RayJudge(local, self.actors, sub, self), cache_dir=cache_dir, tokenizer=tokenizer)

    def batches(self, work: Iterable[Any]) -> Iterator[tuple[Any, list, list]]:
        """Each pending batch of each :class:`~rageval.run.engine.SettingWork` compressed and read in a Ray task
        (up to :attr:`window` ahead), then scored here, in the single-process order: ``(work, batch, records)``.
        A setting whose items bring their contexts (no compressor to run) is run here."""
        from rageval.run.execute import finish, run_batch, score_outputs

        def submitted() -> Iterator[tuple[Any, list, Any]]:
            for w in work:
                s, src = w.stage, w.planned.source
                if not isinstance(src, CompressRead):
                    for batch in w.batches():
                        yield w, batch, None
                    continue
                spec = (
                    s.setting,
                    src.compressor,
                    dict(src.params),
                    s.compressor_error,
                    src.reader,
                    w.tokenizer_spec,
                    s.allow_unavailable,
                    w.run_hash,
                    s.context_limit,
                )
                for batch in w.batches():
                    yield w, batch, self._task.remote(spec, batch)

        queue: collections.deque = collections.deque()
        source = submitted()

        def fill() -> None:
            while len(queue) < self.window:
                nxt = next(source, None)
                if nxt is None:
                    return
                queue.append(nxt)

        fill()
        while queue:
            w, batch, ref = queue.popleft()
            fill()
            if ref is None:
                yield w, batch, run_batch(batch, w.stage)
                continue
            contexts, records, outputs = self.get(ref)
            self.tasks += 1
            score_outputs(batch, contexts, outputs, records, w.stage)
            yield w, batch, finish(batch, records)

    def stats(self) -> dict[str, Any]:
        """What this run used (``run_stats.json``)."""
        return {
            "address": self.address,
            "started_here": self.started,
            "cpus": self.cpus,
            "gpus": self.gpus,
            "judge_actors": len(self.actors),
            "judge_actor_gpus": [i.get("gpus", []) for i in self._actor_info],
            "tasks": self.tasks,
            "window": self.window,
            "nodes": self.nodes,
            "init_seconds": round(self.init_seconds, 3),
            "actor_seconds": round(self.actor_seconds, 3),
        }

    def close(self) -> None:
        """Stop the judge actors; shut Ray down when this run started it."""
        for a in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(a)
        self.actors = []
        if self.started:
            self.ray.shutdown()
