"""Draw a report's figures in worker processes forked from this one (:func:`draw_figures`).

The figures are independent, so on Linux :func:`draw_figures` hands them to worker
processes forked from this one (matplotlib already imported, the work inherited),
one per available core up to the number of figures (:func:`figure_processes`), and
collects what each returned, in the figures' order.  Each figure is the same
function of its input wherever it is drawn, so the files are the same bytes as a
one-process drawing (``processes=1``, the fallback elsewhere and in a process that
runs other threads, where forking is unsafe).

The report holds its output directory's lock while it draws; a forked worker starts
with :func:`rageval.rundir.lock.child_of_lock_holder`, so it lets go of the lock it
inherited and dies with its parent (a killed report leaves no worker holding the
directory).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from importlib import import_module
from typing import Any

from rageval.rundir.lock import child_of_lock_holder

__all__ = ["draw_figures", "figure_processes"]

_MAX_PROCESSES = 8
#: what forked workers inherit: the drawing function and the figures to draw
_WORK: tuple[Callable[[Any], dict[str, Any]], Sequence[Any]] | None = None


def figure_processes(n_figures: int, processes: int | None = None) -> int:
    """How many processes :func:`draw_figures` draws ``n_figures`` with (1: in this process).

    ``processes`` None: the environment variable ``RAGEVAL_FIGURE_PROCESSES`` where set
    (``1``: draw in this process), else one per core this process may use (at most 8)
    less the cores other processes are running on at that moment (:func:`_busy_cores`),
    at least one: on a machine whose cores are all taken, workers only add their
    start-up (5% slower at load 5.5 on 2 cores, ``bench/bench_report.py``), while on an
    idle one two workers took the demo's report from 4.8 s to 3.3 s.  Never more than
    the figures.  Forking needs Linux and a process without other threads (a thread
    holding a lock at the fork would leave the child's copy locked forever); tqdm's
    progress-bar monitor is the one thread allowed (:func:`_fork_safe`).
    """
    if processes is None and os.environ.get("RAGEVAL_FIGURE_PROCESSES", "").strip().isdigit():
        processes = int(os.environ["RAGEVAL_FIGURE_PROCESSES"])
    if processes is None:
        try:
            processes = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            processes = os.cpu_count() or 1
        processes = min(processes, _MAX_PROCESSES) - _busy_cores()
    n = max(1, min(int(processes), n_figures))
    if n > 1 and (not sys.platform.startswith("linux") or not _fork_safe()):
        return 1
    return n


def _busy_cores() -> int:
    """Processes other than this one running right now (Linux ``/proc/loadavg``; 0 where unreadable).

    The instantaneous count, not the 1-minute load average: that average still holds the
    work this process did just before (a suite's records), which would leave an idle
    machine's second core unused.
    """
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, running - 1)  # this process is one of them


def _fork_safe() -> bool:
    """No thread but this one, or only tqdm's monitor (it sleeps on an event and checks progress bars every
    10 s; the figure workers never touch tqdm, so no lock it may hold at the fork is one they need)."""
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    return all(type(t).__name__ == "TMonitor" and t.daemon for t in others)


def _draw_inherited(i: int) -> dict[str, Any]:
    """In a forked worker: draw figure ``i`` of the work the parent set before forking."""
    assert _WORK is not None, "figure workers are forked after the work is set"
    draw, jobs = _WORK
    return draw(jobs[i])


def draw_figures(
    draw: Callable[[Any], dict[str, Any]],
    jobs: Sequence[Any],
    *,
    cost: Callable[[Any], float],
    processes: int | None = None,
) -> list[dict[str, Any]]:
    """``[draw(job) for job in jobs]``, drawn by ``processes`` forked workers (default and limits:
    :func:`figure_processes`), the jobs of the highest ``cost`` first (the last to finish is a short one)."""
    n = figure_processes(len(jobs), processes)
    if n <= 1:
        return [draw(job) for job in jobs]

    for module in ("matplotlib.figure", "matplotlib.backends.backend_agg"):
        import_module(module)  # imported once here, inherited by every worker

    global _WORK
    _WORK = (draw, jobs)
    try:
        order = sorted(range(len(jobs)), key=lambda i: -cost(jobs[i]))  # longest first: the last to finish is short
        with ProcessPoolExecutor(
            max_workers=n,
            mp_context=multiprocessing.get_context("fork"),
            initializer=child_of_lock_holder,
            initargs=(os.getpid(),),
        ) as pool:
            drawn = dict(zip(order, pool.map(_draw_inherited, order)))
    finally:
        _WORK = None
    return [drawn[i] for i in range(len(jobs))]
