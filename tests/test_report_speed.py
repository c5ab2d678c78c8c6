"""The report's first build made faster without changing a number or a pixel.

* the resampling products run on one BLAS thread for a family of ordinary size, with the same results;
* the figures are drawn in forked worker processes, to the same bytes as one process.
"""

import io

import numpy as np
import pytest

from rageval.report import figure_pool, plots
from rageval.report.result import Analysis
from rageval.stats import paired_tests, resample
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

SUITE = """\
name: reportspeed
dataset: {{name: hotpotqa, limit: 5}}
retrieval: {{method: bm25, k: 4}}
settings:
  - {{compressor: identity}}
  - {{compressor: naive, budgets: [60, 120]}}
  - {{compressor: focused, budgets: [60]}}
  - {{compressor: token_prune, budgets: [0.5]}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
contrasts: [{{vs: identity}}]
output_dir: {out}
seed: 0
"""


# ---------------------------------------------------------------- statistics


def test_paired_tests_hand_case_unchanged():
    """Three questions, one contrast: every number by hand (2**3 = 8 <= 200 sign vectors: the exact test)."""
    r = paired_tests([1.0, 2.0, 3.0], n_resamples=200, seed=0)
    assert r.estimate[0] == 2.0
    # |sum| = 6; the eight sign vectors give |±1±2±3| in {6, 4, 2, 0, 0, 2, 4, 6}: two reach 6
    assert r.exact_p and r.p_value[0] == 2 / 8
    # a bootstrap mean of three draws from {1, 2, 3} lies in [1, 3] and is a multiple of 1/3
    assert 1.0 <= r.ci_low[0] <= r.ci_high[0] <= 3.0
    for v in (r.ci_low[0], r.ci_high[0]):
        assert abs(v * 3 - round(v * 3)) < 1e-9


def test_one_blas_thread_gives_the_same_numbers_as_the_blas_default(monkeypatch):
    """The same family with the single-thread limit on and off.

    The bootstrap products are float32 (exact counts times block sums): the BLAS may sum them in another order on
    several threads, so the intervals agree to float32 accumulation precision, not bit for bit (on this project's
    2-core machine they differ by up to 3e-8); counts and the sign-flip p-values (float64 products) agree exactly,
    and one thread count gives the same bits on every run.
    """
    rng = np.random.default_rng(3)
    D = rng.normal(size=(60, 40))
    D[rng.random(D.shape) < 0.1] = np.nan
    limited = paired_tests(D, n_resamples=2500, seed=7)
    again = paired_tests(D, n_resamples=2500, seed=7)
    monkeypatch.setattr(resample, "ONE_THREAD_WORK", -1)  # every product above the limit: BLAS default threads
    free = paired_tests(D, n_resamples=2500, seed=7)
    for field in ("estimate", "ci_low", "ci_high", "p_value", "n", "n_blocks", "n_empty_replicates"):
        np.testing.assert_array_equal(getattr(limited, field), getattr(again, field))
    for field in ("estimate", "p_value", "n", "n_blocks", "n_empty_replicates"):
        np.testing.assert_array_equal(getattr(limited, field), getattr(free, field))
    for field in ("ci_low", "ci_high"):
        np.testing.assert_allclose(getattr(limited, field), getattr(free, field), rtol=1e-6, atol=1e-7)


def test_blas_limit_applies_to_small_products_only():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with resample._blas_threads(1000 * 100 * 252):  # the demo's family
        blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)
    assert isinstance(resample._blas_threads(resample.ONE_THREAD_WORK + 1), type(resample.contextlib.nullcontext()))


# ---------------------------------------------------------------- figures


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reportspeed")
    path = tmp / "suite.yaml"
    path.write_text(SUITE.format(out=tmp / "run"))
    run_suite(load_suite(path), tmp / "run", progress=False, build_report=False)
    return tmp / "run"


def _figures(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.suffix in (".png", ".svg")}


def test_figure_processes_rules(monkeypatch):
    monkeypatch.delenv("RAGEVAL_FIGURE_PROCESSES", raising=False)
    monkeypatch.setattr(figure_pool.sys, "platform", "linux")
    monkeypatch.setattr(figure_pool, "_fork_safe", lambda: True)  # the thread rule has its own test below
    assert figure_pool.figure_processes(13, 4) == 4
    assert figure_pool.figure_processes(3, 8) == 3  # never more processes than figures
    assert figure_pool.figure_processes(0, 8) == 1
    assert figure_pool.figure_processes(5, 1) == 1
    assert 1 <= figure_pool.figure_processes(13) <= 8
    monkeypatch.setattr(figure_pool.os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    monkeypatch.setattr(figure_pool, "_busy_cores", lambda: 0)
    assert figure_pool.figure_processes(13) == 4  # four cores, none busy
    monkeypatch.setattr(figure_pool, "_busy_cores", lambda: 2)
    assert figure_pool.figure_processes(13) == 2  # two of the four busy
    monkeypatch.setattr(figure_pool, "_busy_cores", lambda: 9)
    assert figure_pool.figure_processes(13) == 1  # all busy: draw here
    assert figure_pool.figure_processes(13, 3) == 3  # an explicit number is taken as it is
    monkeypatch.setenv("RAGEVAL_FIGURE_PROCESSES", "1")
    assert figure_pool.figure_processes(13) == 1
    monkeypatch.setenv("RAGEVAL_FIGURE_PROCESSES", "3")
    assert figure_pool.figure_processes(13) == 3 and figure_pool.figure_processes(13, 2) == 2  # the argument wins
    monkeypatch.setattr(figure_pool.sys, "platform", "darwin")
    assert figure_pool.figure_processes(13, 4) == 1


def test_busy_cores_reads_the_running_processes(monkeypatch, tmp_path):
    import builtins

    fake = tmp_path / "loadavg"
    real_open = builtins.open

    def fake_open(path, *a, **kw):
        return real_open(fake if path == "/proc/loadavg" else path, *a, **kw)

    monkeypatch.setattr(builtins, "open", fake_open)
    fake.write_text("2.39 4.11 5.96 3/88 21268\n")
    assert figure_pool._busy_cores() == 2  # three running, this process one of them
    fake.write_text("0.10 0.20 0.30 1/88 21268\n")
    assert figure_pool._busy_cores() == 0
    fake.write_text("garbage\n")
    assert figure_pool._busy_cores() == 0


def test_no_fork_while_another_thread_runs(monkeypatch):
    import threading

    # the threads of this process as the rule sees them: this one, the worker started below, and none that an
    # earlier test in the same process left running (a Ray client's, say)
    real, me = threading.enumerate, threading.current_thread()
    mine: list = []
    monkeypatch.setattr(figure_pool.threading, "enumerate", lambda: [t for t in real() if t is me or t in mine])
    assert figure_pool._fork_safe()  # this thread alone
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=True)
    mine.append(worker)
    worker.start()
    try:
        assert not figure_pool._fork_safe()
        assert figure_pool.figure_processes(13, 4) == 1
    finally:
        stop.set()
        worker.join()
    assert figure_pool._fork_safe()


def test_forked_workers_write_the_same_files_as_one_process(run_dir, tmp_path):
    from rageval.report.analysis import analyze
    from rageval.report.load import load_run

    an = analyze(load_run(run_dir), n_resamples=300)
    one = plots.render_figures(an, tmp_path / "one", processes=1)
    if figure_pool.figure_processes(99, 2) < 2:
        pytest.skip("no fork here (not Linux, or a thread is running)")
    two = plots.render_figures(an, tmp_path / "two", processes=2)
    first, second = _figures(tmp_path / "one"), _figures(tmp_path / "two")
    assert len(first) >= 2 * 6 and first == second  # frontiers, Pareto, sweep: PNG and SVG each
    assert "reattribution_sweep.svg" in first
    # what the renderers return (the HTML embeds the PNG bytes) is the same too, in the same order
    for a, b in zip(one, two):
        if a is None:
            assert b is None
            continue
        if "png" in a:
            a, b = {"_": a}, {"_": b}
        assert list(a) == list(b)
        for name in a:
            assert a[name]["png_bytes"] == b[name]["png_bytes"]
            assert a[name]["png"].name == b[name]["png"].name


def test_figure_workers_start_as_children_of_the_lock_holder(monkeypatch, tmp_path):
    """Each forked worker first runs rageval.rundir.lock.child_of_lock_holder with the report's pid (it lets go of the
    inherited lock and dies with its parent: tests/test_run_engine.py); the results come back in the jobs' order."""
    import os

    if figure_pool.figure_processes(4, 2) < 2:
        pytest.skip("no fork here (not Linux, or a thread is running)")
    seen = tmp_path / "workers"
    seen.mkdir()
    real = figure_pool.child_of_lock_holder

    def spy(parent):
        (seen / str(os.getpid())).write_text(str(parent))
        real(parent)

    monkeypatch.setattr(figure_pool, "child_of_lock_holder", spy)
    got = figure_pool.draw_figures(lambda job: {"job": job, "pid": os.getpid()}, [1, 2, 3, 4], cost=float, processes=2)
    assert [g["job"] for g in got] == [1, 2, 3, 4]
    workers = {p.name: p.read_text() for p in seen.iterdir()}
    assert workers and set(workers.values()) == {str(os.getpid())}
    assert {str(g["pid"]) for g in got} <= set(workers)
    assert figure_pool._WORK is None  # nothing left for a later fork to inherit


def _per_point_errorbars(ax, an, pts, key_y, color, key_x="achieved_ratio"):
    """The drawing before: one errorbar call per point."""
    for x, y, _lab, setting in pts:
        ivy = plots._interval(an, setting, key_y)
        ivx = plots._interval(an, setting, key_x)
        yerr = [[max(0.0, y - ivy[0])], [max(0.0, ivy[1] - y)]] if ivy else None
        xerr = [[max(0.0, x - ivx[0])], [max(0.0, ivx[1] - x)]] if ivx and ivx[1] - ivx[0] > 1e-12 else None
        if yerr is None and xerr is None:
            continue
        ax.errorbar([x], [y], yerr=yerr, xerr=xerr, fmt="none", ecolor=color, elinewidth=0.8, capsize=2, alpha=0.7)


def _errorbar_figure(draw):
    import re
    from collections import Counter

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    iv = {
        "a": {"m": {"ci_low": 0.2, "ci_high": 0.5}, "achieved_ratio": {"ci_low": 0.3, "ci_high": 0.45}},
        "b": {"m": {"ci_low": 0.55, "ci_high": 0.7}},  # no x interval
        "c": {"m": {"ci_low": 0.1, "ci_high": 0.3}, "achieved_ratio": {"ci_low": 0.8, "ci_high": 0.8}},  # x: no width
        "d": {},  # no interval at all
    }
    an = Analysis.from_json({"frontier": {"intervals": iv}})
    pts = [(0.4, 0.3, "", "a"), (0.6, 0.6, "", "b"), (0.8, 0.2, "", "c"), (0.9, 0.9, "", "d")]
    with matplotlib.rc_context({"svg.hashsalt": "t", "svg.fonttype": "none"}):
        fig = Figure(figsize=(4, 3), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color="C1", label="line")
        draw(ax, an, pts, "m", "C1")
        ax.legend(loc="best")
        png, svg = io.BytesIO(), io.BytesIO()
        fig.savefig(png, format="png", metadata={"Software": None})
        fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    text = svg.getvalue().decode()
    drawn = (
        Counter(re.findall(r' d="([^"]+)"', text)),
        Counter(re.findall(r'<use [^>]* x="([^"]+)" y="([^"]+)"', text)),
    )
    return png.getvalue(), drawn


def test_error_bars_per_line_draw_what_per_point_calls_drew():
    """Same PNG bytes, and the SVG holds the same paths and cap marks (only its grouping differs)."""
    png_old, svg_old = _errorbar_figure(_per_point_errorbars)
    png_new, svg_new = _errorbar_figure(plots._errorbars)
    assert png_new == png_old
    assert svg_new == svg_old
