"""The Pareto frontier: dominance by hand on 2-D sets (ties included), the paired-test support of each
relation, intervals, constant metrics listed rather than plotted, the Pareto figures and label placement."""

import json

import pytest

from rageval.report import build_report
from rageval.report.analysis import analyze
from rageval.report.frontier import dominates, pareto
from rageval.report.load import load_run
from rageval.types import Context, Record, Setting, Unit

LH = ("lower", "higher")


def test_dominance_on_a_hand_made_set_with_ties():
    pts = {
        "identity": (1.0, 0.80),
        "a": (0.5, 0.80),  # better x, tied y: dominates identity
        "b": (0.5, 0.80),  # the same point as a: neither dominates the other
        "c": (0.25, 0.60),  # best x, worst y: on the frontier
        "d": (0.5, 0.70),  # dominated by a and b (tied x, worse y)
        "e": (0.9, 0.90),  # best y: on the frontier
    }
    front, rel = pareto(pts, LH)
    assert front == ["a", "b", "c", "e"]
    assert sorted(rel) == [("a", "d"), ("a", "identity"), ("b", "d"), ("b", "identity"), ("e", "identity")]
    assert not dominates(pts["a"], pts["b"], LH) and not dominates(pts["b"], pts["a"], LH)
    # directions matter: with both axes "higher", identity (largest x) and e (largest y) are the frontier
    front_hh, _ = pareto(pts, ("higher", "higher"))
    assert front_hh == ["identity", "e"]
    with pytest.raises(ValueError, match="needs a direction"):
        dominates((0, 0), (1, 1), ("higher", "none"))


def _record(q, name, comp, budget, ratio, metrics):
    ctx = Context(
        units=(Unit("t", ("d0.s0",)),),
        achieved_tokens=int(ratio * 100),
        retrieved_tokens=100,
        budget_tokens=None if budget is None else int(budget * 100),
        budget=budget,
    )
    return Record(q, Setting(name, comp, budget, "extractive"), "ok", context=ctx, metrics=metrics).to_dict()


SETS = [("identity", "identity", None), ("A@0.5", "A", 0.5), ("C@0.5", "C", 0.5), ("B@0.25", "B", 0.25)]


def _run(tmp_path, n=20, frontier=None):
    recs = []
    for name, comp, budget in SETS:
        ratio = {"identity": 1.0, "A@0.5": 0.5, "C@0.5": 0.5, "B@0.25": 0.25}[name]
        for i in range(n):
            gp = {"identity": 0.8, "A@0.5": 0.8, "C@0.5": 0.0 if i == 0 else 0.8, "B@0.25": 0.6}[name]
            recs.append(
                _record(
                    f"q{i:02d}",
                    name,
                    comp,
                    budget,
                    ratio,
                    {
                        "grounded_precision": gp,
                        "answer_in_context": 1.0,
                        "answer_f1": 0.1 * (i % 3) + (0.3 if comp == "A" else 0.0),
                    },
                )
            )
    d = tmp_path / "run"
    d.mkdir()
    (d / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    suite = {
        "name": "pareto",
        "hash": "h",
        "seed": 1,
        "contrasts": None,
        "settings": [{"name": n, "compressor": c, "budget": b} for n, c, b in SETS],
        "config": {"frontier": frontier} if frontier else {},
    }
    (d / "manifest.json").write_text(json.dumps({"suite": suite}))
    return d


def test_each_relation_is_supported_by_the_paired_test_or_by_the_means_only(tmp_path):
    an = analyze(load_run(_run(tmp_path)), n_resamples=2000)
    fr = an.frontier
    gp = next(p for p in fr["pairs"] if p["y"] == "grounded_precision")
    assert gp["frontier"] == ["A@0.5", "B@0.25"] and sorted(gp["dominated"]) == ["C@0.5", "identity"]
    rel = {(r["dominating"], r["dominated"]): r for r in gp["relations"]}
    assert set(rel) == {("A@0.5", "identity"), ("A@0.5", "C@0.5")}
    # A vs identity: tied on grounded precision, so only the ratio is tested: -0.5 on every question
    a_id = rel[("A@0.5", "identity")]
    assert [a["axis"] for a in a_id["axes"]] == ["achieved_ratio"] and a_id["axes"][0]["effect"] == pytest.approx(-0.5)
    assert a_id["support"] == "paired test"
    # A vs C: tied ratio; grounded precision better by 0.8 on one question of 20: the means only
    a_c = rel[("A@0.5", "C@0.5")]
    assert [a["axis"] for a in a_c["axes"]] == ["grounded_precision"] and a_c["axes"][0]["effect"] == pytest.approx(
        0.04
    )
    assert a_c["support"] == "means only" and a_c["axes"][0]["p_holm"] > 0.5
    assert gp["n_tests"] == 2 and gp["n_supported"] == 1
    # Holm over the pair's two tests
    raw = [a_id["axes"][0]["p_value"], a_c["axes"][0]["p_value"]]
    assert a_id["axes"][0]["p_holm"] == pytest.approx(min(1.0, 2 * min(raw)))
    # answer-in-context is 1 everywhere: a tie on y for every pair; A and C are the same point
    aic = next(p for p in fr["pairs"] if p["y"] == "answer_in_context")
    assert aic["frontier"] == ["B@0.25"]
    assert ("A@0.5", "C@0.5") not in {(r["dominating"], r["dominated"]) for r in aic["relations"]}
    assert len(aic["relations"]) == 5 and aic["n_supported"] == 5


def test_intervals_and_constant_metrics(tmp_path):
    an = analyze(load_run(_run(tmp_path)), n_resamples=1000)
    iv = an.frontier["intervals"]
    # grounded precision of C: mean 0.76, a real interval; identity's ratio: exactly 1, no width
    c = iv["C@0.5"]["grounded_precision"]
    assert c["mean"] == pytest.approx(0.76) and c["ci_low"] < 0.76 < c["ci_high"] and c["n"] == 20
    assert iv["identity"]["achieved_ratio"]["ci_low"] == iv["identity"]["achieved_ratio"]["ci_high"] == 1.0
    assert an.frontier["constant"] == ["answer_in_context"]


def test_declared_axes_and_missing_ones(tmp_path):
    an = analyze(
        load_run(_run(tmp_path, frontier={"axes": [["achieved_ratio", "answer_f1"], ["achieved_ratio", "str_em"]]})),
        n_resamples=500,
    )
    f1, em = an.frontier["pairs"]
    assert f1["y"] == "answer_f1" and f1["frontier"] == ["A@0.5", "B@0.25"]
    assert em["note"] == "not computed: the records carry no str_em" and em["frontier"] == []


def test_report_lists_constant_metrics_and_draws_the_pareto_figures(tmp_path):
    run = _run(tmp_path)
    written = build_report(run, n_resamples=300, figures="png,svg")
    assert {k for k in written if k.startswith("pareto_")} == {
        "pareto_achieved_ratio__grounded_precision_png",
        "pareto_achieved_ratio__grounded_precision_svg",
    }  # answer_in_context is 1.000 everywhere: an axis that does not vary, so no Pareto figure of it
    assert "frontier_answer_in_context_png" not in written  # constant: listed, not plotted
    html = written["report_html"].read_text()
    assert 'id="constant-metrics"' in html and "<code>answer_in_context</code> = 1.000" in html
    svg = written["pareto_achieved_ratio__grounded_precision_svg"].read_text()
    assert "1 supported by the paired test" in svg and "A@0.5" in svg
    # byte-identical on a rebuild
    again = build_report(run, n_resamples=300, figures="png,svg")
    for k in ("pareto_achieved_ratio__grounded_precision_svg", "report_html", "frontier_citation_precision_svg"):
        assert written[k].read_bytes() == again[k].read_bytes(), k


def test_labels_do_not_overlap_each_other():
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from rageval.report.labels import place_labels

    fig = Figure(figsize=(4, 3), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    # eight settings piled on two points (a compressor that ignores its budget), and a few spread out
    xs = [0.25] * 4 + [0.26] * 4 + [0.5, 0.75, 1.0]
    ys = [0.5] * 4 + [0.5] * 4 + [0.6, 0.7, 0.8]
    ax.plot(xs, ys, "o")
    ax.set_xlim(0, 1.1)
    ax.set_ylim(0.3, 0.9)
    items = [(x, y, f"setting-{i}", "k") for i, (x, y) in enumerate(zip(xs, ys))]
    left_out = place_labels(ax, fig.canvas.get_renderer(), items)
    fig.canvas.draw()  # annotations find their place when drawn
    renderer = fig.canvas.get_renderer()
    from matplotlib.text import Text

    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]  # the text alone, not its leader line
    assert len(boxes) == len(xs) - left_out and left_out <= 1  # a label with no free spot is left out
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert (
                not a.overlaps(b) or min(a.x1, b.x1) - max(a.x0, b.x0) < 0.5 or min(a.y1, b.y1) - max(a.y0, b.y0) < 0.5
            )
    assert matplotlib.get_backend()  # no pyplot state touched


#: the demo's points of emitted_precision in its densest band (achieved ratio 0.15-0.35): (compressor, budget
#: label, achieved ratio, mean), from its report.json
DEMO_BAND = [
    ("naive", "96 tok", 0.178, 1.0),
    ("naive", "160 tok", 0.314, 1.0),
    ("rerank", "96 tok", 0.179, 1.0),
    ("rerank", "160 tok", 0.316, 1.0),
    ("extractive", "96 tok", 0.201, 1.0),
    ("extractive", "160 tok", 0.342, 1.0),
    ("focused", "96 tok", 0.201, 1.0),
    ("focused", "160 tok", 0.341, 1.0),
    ("mmr", "96 tok", 0.201, 1.0),
    ("mmr", "160 tok", 0.342, 1.0),
    ("ecr", "96 tok", 0.201, 1.0),
    ("ecr", "160 tok", 0.342, 1.0),
    ("submodular", "96 tok", 0.198, 0.995),
    ("submodular", "160 tok", 0.337, 1.0),
    ("token_prune", "0.25", 0.249, 1.0),
    ("token_prune", "0.5", 0.499, 1.0),
    ("identity", "full", 1.0, 1.0),
]


def test_no_two_labels_overlap_in_the_demos_densest_band_nor_cover_the_legend():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    from rageval.report.labels import place_labels

    fig = Figure(figsize=(4.6, 3.6), dpi=100)  # one panel of a frontier figure
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    colors = {}
    for comp, _, x, y in DEMO_BAND:
        colors.setdefault(comp, f"C{len(colors)}")
        ax.plot(
            [x], [y], "o", color=colors[comp], label=comp if comp not in ax.get_legend_handles_labels()[1] else None
        )
    ax.set_ylim(0.4, 1.05)
    ax.legend(fontsize=7, loc="lower right")
    renderer = fig.canvas.get_renderer()
    items = [(x, y, lab, colors[c]) for c, lab, x, y in DEMO_BAND]
    left_out = place_labels(ax, renderer, items)
    fig.canvas.draw()
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]
    assert len(boxes) == len(items) - left_out and len(boxes) >= len(items) // 2  # most labels find a spot
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)  # never one label over another
    legend = ax.get_legend().get_window_extent(renderer)
    assert not any(b.overlaps(legend) for b in boxes)  # nor over the legend


def test_the_intervals_are_those_of_the_engine_with_its_full_test(tmp_path, monkeypatch):
    """The intervals draw one sign-flip replicate (their p-values are not read): the bootstrap comes first from the
    generator, so every interval is the one of the engine run with its full test."""
    from rageval.report import frontier

    run = load_run(_run(tmp_path))
    fast = analyze(run, n_resamples=1500).frontier
    real = frontier.paired_tests
    counts = []

    def full(*a, **k):
        counts.append(k.pop("n_test_resamples", None))
        return real(*a, **k)

    monkeypatch.setattr(frontier, "paired_tests", full)
    slow = analyze(run, n_resamples=1500).frontier
    assert counts[0] == 1  # the intervals' call
    assert fast["intervals"] == slow["intervals"]
    assert any(v["ci_low"] is not None for per in fast["intervals"].values() for v in per.values())
