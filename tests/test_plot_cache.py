"""A report rebuilt from unchanged records and statistics does not redraw its figures (and is byte-identical)."""

import dataclasses
import json

import pytest

from rageval.report import build, plot_cache
from rageval.report.build import build_report
from rageval.report.result import Analysis
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

SUITE = """\
name: plotcache
dataset: {{name: hotpotqa, limit: 4}}
retrieval: {{method: bm25, k: 4}}
settings:
  - {{compressor: identity}}
  - {{compressor: naive, budgets: [60, 120]}}
  - {{compressor: token_prune, budgets: [0.5]}}
reader: {{backend: extractive}}
judge: {{spec: lexical}}
contrasts: [{{vs: identity}}]
output_dir: {out}
seed: 0
"""

RESAMPLES = 300
#: the figure files are drawn on request only (the page draws its own figures)
FILES = ("png", "svg")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plotcache")
    path = tmp / "suite.yaml"
    path.write_text(SUITE.format(out=tmp / "run"))
    run_suite(load_suite(path), tmp / "run", progress=False, build_report=False)
    return tmp / "run"


def snapshot(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.fixture
def draws(monkeypatch):
    """Count the calls of the renderer the report calls (it still draws)."""
    calls = []
    for name in ("render_figures",):
        real = getattr(build, name)

        def spy(*a, _real=real, _name=name, **kw):
            calls.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(build, name, spy)
    return calls


def test_rebuild_with_unchanged_statistics_draws_nothing_and_writes_the_same_bytes(run_dir, tmp_path, draws):
    out = tmp_path / "rep"
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, figures=FILES)
    assert draws == ["render_figures"]
    first = snapshot(out)
    assert any(n.endswith(".png") for n in first) and any(n.endswith(".svg") for n in first)
    assert "reattribution_sweep.png" in first  # token pruning: the sweep figure is there too
    record = json.loads((out / "cache" / "plots.json").read_text())
    assert set(record["files"]) == {n for n in first if n.endswith((".png", ".svg"))}
    draws.clear()
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, figures=FILES)
    assert draws == []  # nothing drawn
    assert snapshot(out) == first  # every file, report.html with its embedded figures included
    # and the same bytes as a build that draws, in a fresh folder
    fresh = tmp_path / "fresh"
    build_report(run_dir, out_dir=fresh, n_resamples=RESAMPLES, figures=FILES)
    assert draws == ["render_figures"]
    assert snapshot(fresh) == first


@pytest.mark.parametrize("damage", ["delete", "edit", "corrupt-record", "other-version"])
def test_any_change_draws_again(run_dir, tmp_path, draws, damage, monkeypatch):
    out = tmp_path / "rep"
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, figures=FILES)
    first = snapshot(out)
    png = min(n for n in first if n.endswith(".png"))
    if damage == "delete":
        (out / png).unlink()
    elif damage == "edit":
        (out / png).write_bytes(first[png] + b"x")
    elif damage == "corrupt-record":
        (out / "cache" / "plots.json").write_text("{not json")
    else:  # a new matplotlib (or rageval) version: the same analysis is drawn again
        monkeypatch.setattr(plot_cache, "_version", lambda dist: "99.0")
    draws.clear()
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, figures=FILES)
    assert draws == ["render_figures"]
    assert snapshot(out) == first  # redrawn to the same bytes


def test_changed_statistics_draw_again(run_dir, tmp_path, draws):
    out = tmp_path / "rep"
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, figures=FILES)
    key = json.loads((out / "cache" / "plots.json").read_text())["key"]
    draws.clear()
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES + 1, figures=FILES)  # other intervals in the figures
    assert draws == ["render_figures"]
    assert json.loads((out / "cache" / "plots.json").read_text())["key"] != key


def test_plots_key_follows_the_analysis_not_the_manifest_or_counters():
    an = Analysis.from_json({"summary": [{"setting": "a", "x": 0.5}]}, manifest={"started": "now"})
    k = plot_cache.plots_key(an)
    assert plot_cache.plots_key(dataclasses.replace(an, manifest={"started": "later"})) == k
    assert plot_cache.plots_key(dataclasses.replace(an, summary=({"setting": "a", "x": 0.51},))) != k


def test_no_plots_writes_no_record(run_dir, tmp_path, draws):
    out = tmp_path / "rep"
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, plots=False)
    assert draws == [] and not (out / "cache" / "plots.json").exists()


def test_by_default_no_figure_file_is_drawn(run_dir, tmp_path, draws):
    out = tmp_path / "rep"
    written = build_report(run_dir, out_dir=out, n_resamples=RESAMPLES)
    assert draws == [] and not (out / "cache" / "plots.json").exists()
    assert not [n for n in snapshot(out) if n.endswith((".png", ".svg"))]
    assert not [k for k in written if k.endswith(("_png", "_svg"))]
    assert 'id="figure-data"' in written["report_html"].read_text(encoding="utf-8")  # the page draws them


def test_the_formats_asked_for_are_drawn_and_part_of_the_key(run_dir, tmp_path, draws):
    out = tmp_path / "rep"
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, figures="png")
    first = snapshot(out)
    assert any(n.endswith(".png") for n in first) and not any(n.endswith(".svg") for n in first)
    draws.clear()
    build_report(run_dir, out_dir=out, n_resamples=RESAMPLES, figures=FILES)
    assert draws == ["render_figures"]  # svg asked for too: drawn again
    again = snapshot(out)
    assert {n for n in again if n.endswith(".svg")} == {n[:-4] + ".svg" for n in first if n.endswith(".png")}
    assert all(again[n] == first[n] for n in first if n.endswith(".png"))  # the same PNG bytes
