"""rageval.report: contrasts spec, run loading, tables, plots, determinism, bad input."""

import csv
import dataclasses
import json

import numpy as np
import pytest

from rageval.diagnostics import CATALOG, DERIVED, contrasted_by_default, direction_of
from rageval.report import build_report, parse_contrasts
from rageval.report.analysis import GAPS, PREFERRED_ORDER, REPORT_ORDER, analyze
from rageval.report.load import load_run
from rageval.report.plots import frontier_groups, unplotted_metrics
from rageval.report.result import Analysis
from rageval.types import Context, Record, Setting, Unit

SETTINGS = [
    ("identity", "identity", None),
    ("extractive@0.5", "extractive", 0.5),
    ("extractive@0.25", "extractive", 0.25),
    ("abstractive@0.25", "abstractive", 0.25),
]


def make_records(n=30, *, seed=0, clusters=False, failures=(("q003", "extractive@0.25", "reader_error"),)):
    fail = {(q, s): st for q, s, st in failures}
    records = []
    for name, comp, budget in SETTINGS:
        ratio = {"identity": 1.0, "extractive@0.5": 0.48, "extractive@0.25": 0.24, "abstractive@0.25": 0.07}[name]
        drop = {"identity": 0.0, "extractive@0.5": 0.1, "extractive@0.25": 0.25, "abstractive@0.25": 0.3}[name]
        for i in range(n):
            q = f"q{i:03d}"
            qr = np.random.default_rng([seed, i])
            recall = float(qr.integers(0, 3)) / 2
            aic = float(qr.random() < 0.4 + 0.4 * recall - drop)
            f1 = float(np.clip(0.2 + 0.5 * aic + 0.1 * qr.normal(), 0, 1))
            emitted = float(np.clip(0.7 - drop / 3 + 0.1 * qr.normal(), 0, 1))
            grounded = emitted if comp != "abstractive" else float(np.clip(emitted - 0.5, 0, 1))
            status = fail.get((q, name), "ok")
            metrics = (
                {}
                if status != "ok"
                else {
                    "answer_f1": f1,
                    "answer_in_context": aic if i % 10 else None,
                    "retrieval_recall": recall,
                    "emitted_precision": emitted,
                    "grounded_precision": grounded,
                    "re_attributability": float(qr.random() < 0.2) if comp == "abstractive" else None,
                    "evidence_f1": None,
                    "unsupported_declared_span": 1.0 if comp == "abstractive" else 0.2,
                    "reader_input_tokens": 100 + i,
                }
            )
            extra = {}
            if clusters:
                extra["cluster_id"] = f"paper{i // 3}"
            if comp == "abstractive" and status == "ok":
                extra["reattribution_sweep"] = {
                    str(t): {
                        "rate": max(0.0, 0.6 - t * 0.5 + 0.05 * qr.normal()),
                        "grounded_precision": max(0.0, 0.3 - t * 0.2),
                    }
                    for t in (0.3, 0.5, 0.8)
                }
            ctx = None
            if status == "ok":
                ctx = Context(
                    units=(Unit("text", None if comp == "abstractive" else ("d0.s0",)),),
                    achieved_tokens=int(ratio * 200),
                    retrieved_tokens=200,
                    budget_tokens=None if budget is None else int(budget * 200),
                    budget=budget,
                )
            rec = Record(
                question_id=q,
                setting=Setting(name, comp, budget, "extractive"),
                status=status,
                context=ctx,
                metrics=metrics,
                extra=extra,
                error=None if status == "ok" else "boom",
            )
            records.append(rec.to_dict())
    return records


def make_run(path, *, records=None, contrasts="every setting vs identity", cluster_key=None, seed=7, **kw):
    path.mkdir(parents=True, exist_ok=True)
    records = make_records(**kw) if records is None else records
    with (path / "records.jsonl").open("w") as fh:
        for r in records:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    manifest = {
        "suite": {
            "name": "toy",
            "hash": "abc123",
            "dataset": "toy-qa",
            "seed": seed,
            "contrasts": contrasts,
            "settings": [{"name": n, "compressor": c, "budget": b} for n, c, b in SETTINGS],
            "cluster_key": cluster_key,
        },
        "package": {"name": "rageval", "version": "0.1.0"},
        "models": {"reader": "extractive", "judge": "lexical"},
        "judge_stats": {"lexical": {"calls": 120, "cache_hits": 30, "cache_misses": 90, "truncated": 0}},
        "inputs": {"dataset_hash": "d1"},
    }
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return path


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# ------------------------------------------------------------------ contrasts spec

NAMES = [n for n, _, _ in SETTINGS]


def test_every_setting_vs_identity_expands_in_suite_order():
    rows = parse_contrasts({"vs": "identity", "metrics": ["answer_f1"]}, NAMES)
    assert [(r.a, r.b, r.metric) for r in rows] == [(s, "identity", "answer_f1") for s in NAMES[1:]]
    assert parse_contrasts("every setting vs identity", NAMES, default_metrics=["x"]) == parse_contrasts(
        [{"vs": "identity", "metrics": "x"}], NAMES
    )


def test_pairs_gaps_and_string_pairs():
    rows = parse_contrasts(
        [
            "extractive@0.25 vs extractive@0.5",
            {"gap": ["emitted_precision", "grounded_precision"], "settings": "abstractive@0.25"},
        ],
        NAMES,
        default_metrics=["answer_f1"],
    )
    assert rows[0].label == "extractive@0.25 - extractive@0.5: answer_f1"
    assert rows[1].kind == "gap" and rows[1].a == rows[1].b == "abstractive@0.25"


def test_unknown_setting_says_did_you_mean():
    with pytest.raises(
        ValueError,
        match=r"Unknown setting 'extractive@0.52' in contrasts\[0\]\.a\. "
        r"Did you mean 'extractive@0.5'\?",
    ):
        parse_contrasts([{"a": "extractive@0.52", "b": "identity", "metrics": "answer_f1"}], NAMES)
    with pytest.raises(ValueError, match="Did you mean 'identity'"):
        parse_contrasts("every setting vs identty", NAMES, default_metrics=["m"])


@pytest.mark.parametrize(
    "spec, msg",
    [
        ({"a": "identity", "metrics": ["m"]}, "no 'b'"),
        ({"a": "identity", "b": "identity", "metrics": ["m"]}, "with itself"),
        ({"vs": "identity", "metrix": ["m"]}, "Unknown key 'metrix'.*Did you mean 'metrics'"),
        ({"vs": "identity", "a": "identity"}, "exactly one of"),
        ("identity versus extractive@0.5", "not understood"),
        (["every setting vs identity", "extractive@0.5 vs identity"], "again"),
        ({"gap": ["m"]}, "two metric names"),
        (42, "string or a mapping"),
        ({"vs": "identity", "metrics": []}, "non-empty list"),
    ],
)
def test_bad_contrast_specs_raise_clear_errors(spec, msg):
    with pytest.raises(ValueError, match=msg):
        parse_contrasts(spec, NAMES, default_metrics=["m"])


def test_unknown_metric_is_checked_against_the_records():
    with pytest.raises(ValueError, match="Unknown metric 'answer_f2'.*Did you mean 'answer_f1'"):
        parse_contrasts({"vs": "identity", "metrics": ["answer_f2"]}, NAMES, metric_names=["answer_f1", "str_em"])


def test_default_metrics_are_those_with_a_direction():
    rows = parse_contrasts(
        "every setting vs identity",
        NAMES,
        metric_names=["answer_f1", "reader_input_tokens", "unsupported_declared_span"],
        contrasted=contrasted_by_default,
    )
    assert sorted({r.metric for r in rows}) == ["answer_f1", "unsupported_declared_span"]
    assert direction_of("unsupported_declared_span") == "lower"
    assert direction_of("answer_f1") == "higher"


def test_directions_come_from_the_catalog_never_from_the_name():
    # names that a pattern would call "higher is better" but that the catalog declares without a direction,
    # or does not declare at all
    for key in (
        "emitted_minus_grounded_precision",
        "emitted_minus_grounded_recall",
        "foo_precision",
        "bar_recall",
        "baz_f1",
        "qux_rate",
        "gap_precision",
        "verification_cost_declared_span",
    ):
        assert direction_of(key) == "none", key
    assert direction_of("grounded_precision_excl_abstain") == "higher"
    assert direction_of("unsupported_recovered_source_excl_abstain") == "lower"
    rows = parse_contrasts(
        "every setting vs identity",
        NAMES,
        metric_names=[
            "answer_f1",
            "foo_precision",
            "emitted_minus_grounded_precision",
            "judge_abstentions",
            "grounded_precision_excl_abstain",
        ],
        contrasted=contrasted_by_default,
    )
    # an _excl_abstain view has a direction but is not in the default family (it would double the Holm family)
    assert sorted({r.metric for r in rows}) == ["answer_f1"]
    named = parse_contrasts(
        [{"vs": "identity", "metrics": ["grounded_precision_excl_abstain"]}],
        NAMES,
        metric_names=["grounded_precision_excl_abstain"],
    )
    assert {r.metric for r in named} == {"grounded_precision_excl_abstain"}


def test_unknown_and_undirected_keys_in_records_are_neither_contrasted_nor_plotted(tmp_path):
    recs = make_records(n=8)
    for i, r in enumerate(recs):
        if r["status"] == "ok":
            r["metrics"].update(foo_precision=0.1 * (i % 5), emitted_minus_grounded_precision=0.05 * (i % 3))
    run = make_run(tmp_path / "r", records=recs)
    an = analyze(load_run(run), n_resamples=50)
    # both are carried as columns (alphabetically after the headline metrics) ...
    assert {"foo_precision", "emitted_minus_grounded_precision"} <= set(an.metric_names)
    assert an.metric_names.index("foo_precision") > an.metric_names.index("unsupported_declared_span")
    # ... but have no direction: no default contrast, no figure, not listed as unplotted
    assert not [c for c in an.contrasts if c["metric_a"] in ("foo_precision", "emitted_minus_grounded_precision")]
    assert all(c["direction"] in ("higher", "lower") for c in an.contrasts if c["kind"] == "pair")
    plotted = {m for _, ms in frontier_groups(an) for m in ms}
    assert "answer_f1" in plotted and not plotted & {"foo_precision", "emitted_minus_grounded_precision"}
    assert not set(unplotted_metrics(an)) & {"foo_precision", "emitted_minus_grounded_precision"}
    written = build_report(run, n_resamples=50, plots=False)
    rows = read_csv(written["contrasts_csv"])
    assert {r["metric_a"] for r in rows}.isdisjoint({"foo_precision", "emitted_minus_grounded_precision"})
    # summary.md: the means per family, a header line per table (the setting first)
    header = " ".join(line for line in written["summary_md"].read_text().splitlines() if line.startswith("| setting"))
    assert "answer_f1 ↑" in header and "unsupported_declared_span ↓" in header
    assert "| foo_precision |" in header and "| reader_input_tokens |" in header  # no arrow without a direction


def test_column_order_and_gaps_come_from_the_catalog():
    # the published summary.csv order of the headline metrics; the rest follows alphabetically
    assert PREFERRED_ORDER == (
        "answer_f1",
        "answer_em",
        "str_em",
        "str_hit",
        "answer_in_context",
        "retrieval_recall",
        "all_gold",
        "emitted_precision",
        "grounded_precision",
        "emitted_recall",
        "grounded_recall",
        "re_attributability",
        "unsupported_summary_checked",
        "unsupported_declared_span",
        "unsupported_recovered_source",
        "evidence_f1",
    )
    assert set(REPORT_ORDER) <= set(CATALOG)
    outputs = {o.key for s in CATALOG.values() for o in s.outputs}
    assert set(PREFERRED_ORDER) <= outputs and all(direction_of(m) != "none" for m in PREFERRED_ORDER)
    assert GAPS == {g: (a, b) for g, (a, b, _) in DERIVED.items()}


def test_judge_abstentions_are_summed_per_setting(tmp_path):
    recs = make_records(n=10)
    for i, r in enumerate(recs):
        if r["status"] == "ok":
            n = (i % 3) if r["setting"]["name"] == "abstractive@0.25" else 0
            r["metrics"].update(judge_abstentions=n, grounded_precision_excl_abstain=r["metrics"]["grounded_precision"])
    run = make_run(tmp_path / "r", records=recs)
    written = build_report(run, n_resamples=50, plots=False)
    rows = {r["setting"]: r for r in read_csv(written["summary_csv"])}
    cohort = {f"q{i:03d}" for i in range(10)} - {"q003"}
    counts = [
        r["metrics"]["judge_abstentions"]
        for r in recs
        if r["setting"]["name"] == "abstractive@0.25" and r["question_id"] in cohort
    ]
    want = sum(counts)
    abst = rows["abstractive@0.25"]
    assert want > 0 and abst["judge_abstentions_sum"] == str(want)  # the sum, not only the mean
    assert abst["n_questions_with_abstentions"] == str(sum(c > 0 for c in counts))
    assert float(abst["judge_abstentions"]) == pytest.approx(want / len(counts), abs=1e-6)
    assert rows["identity"]["judge_abstentions_sum"] == "0"
    cols = list(read_csv(written["summary_csv"])[0])
    first_ci = next(i for i, c in enumerate(cols) if c.endswith("_ci_low"))  # the intervals come last
    assert cols[first_ci - 2 : first_ci] == ["judge_abstentions_sum", "n_questions_with_abstentions"]
    assert all(c.endswith(("_ci_low", "_ci_high")) for c in cols[first_ci:])
    assert "grounded_precision_excl_abstain" in rows["identity"] and "judge_abstentions" in rows["identity"]
    md = written["summary_md"].read_text()
    assert "## Judge abstentions" in md and f"| abstractive@0.25 | {want} |" in md
    html = written["report_html"].read_text()
    assert 'id="abstentions-table"' in html and f"<td>{want}</td>" in html


def test_no_abstention_section_without_judge_abstentions(built):
    _, written = built
    assert "judge_abstentions_sum" not in written["summary_csv"].read_text()
    assert "Judge abstentions" not in written["summary_md"].read_text()
    assert "abstentions-table" not in written["report_html"].read_text()


def test_no_contrasts_declared_gives_empty_family():
    assert parse_contrasts(None, NAMES) == []


# ------------------------------------------------------------------ build_report


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    run = make_run(
        tmp_path_factory.mktemp("run") / "r",
        contrasts=["every setting vs identity", {"gap": ["emitted_precision", "grounded_precision"]}],
    )
    return run, build_report(run, n_resamples=500, plots=False)  # plots: below and in test_report_html


def test_build_report_writes_every_table(built):
    _run, written = built
    for key in (
        "summary_csv",
        "summary_md",
        "contrasts_csv",
        "contrasts_md",
        "validity_csv",
        "validity_md",
        "report_html",
        "report_json",
        "sweep_csv",
    ):
        assert written[key].is_file() and written[key].stat().st_size > 0, key
    assert not any(k.startswith("frontier_") for k in written)


def test_report_json_is_written_from_the_frozen_analysis(built):
    run, written = built
    an = analyze(load_run(run), n_resamples=500)
    text = written["report_json"].read_text(encoding="utf-8")
    assert an.to_json() == text  # report.json has one writer: Analysis.to_json
    assert "manifest" not in json.loads(text) and an.manifest["suite"]["name"] == an.suite["name"]
    assert Analysis.from_json(json.loads(text)).to_json() == text  # every key of report.json is a field
    with pytest.raises(dataclasses.FrozenInstanceError):
        an.seed = 1  # type: ignore[misc]


def test_frontier_plots_are_png_and_svg_side_by_side(tmp_path):
    keep = {"answer_f1", "emitted_precision", "grounded_precision", "evidence_f1", "reader_input_tokens"}
    recs = [dict(r, metrics={k: v for k, v in r["metrics"].items() if k in keep}) for r in make_records(n=8)]
    written = build_report(make_run(tmp_path / "r", records=recs), n_resamples=50, figures="png,svg")
    figs = sorted(k for k in written if k.startswith("frontier_"))
    # emitted and grounded share one figure; no plot for a metric undefined everywhere or without a direction
    assert figs == [
        "frontier_answer_f1_png",
        "frontier_answer_f1_svg",
        "frontier_citation_precision_png",
        "frontier_citation_precision_svg",
    ]
    assert written["frontier_citation_precision_png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = written["frontier_citation_precision_svg"].read_text()
    assert "<svg" in svg[:1000] and "emitted_precision" in svg and "grounded_precision" in svg
    assert "0.25" in svg and "full" in svg  # nominal budgets labelled
    assert "evidence_f1</code>" in written["report_html"].read_text()  # listed as not plotted


def test_summary_counts_cohort_failures_and_undefined(built):
    run, written = built
    rows = {r["setting"]: r for r in read_csv(written["summary_csv"])}
    assert list(rows) == NAMES
    ident = rows["identity"]
    assert ident["n_records"] == "30" and ident["n_cohort"] == "29" and ident["n_excluded"] == "1"
    assert rows["extractive@0.25"]["n_reader_error"] == "1" and rows["extractive@0.25"]["n_ok"] == "29"
    # answer_in_context undefined for q000, q010, q020 (all in the cohort)
    assert ident["answer_in_context_n"] == "26" and ident["answer_in_context_n_undefined"] == "3"
    # a metric undefined everywhere is NA with its count, never 0
    assert ident["evidence_f1"] == "NA" and ident["evidence_f1_n"] == "0" and ident["evidence_f1_n_undefined"] == "29"
    # emitted - grounded gap, per question then averaged
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    cohort = {r["question_id"] for r in recs} - {"q003"}
    gaps = [
        r["metrics"]["emitted_precision"] - r["metrics"]["grounded_precision"]
        for r in recs
        if r["setting"]["name"] == "abstractive@0.25" and r["question_id"] in cohort
    ]
    assert float(rows["abstractive@0.25"]["gap_precision"]) == pytest.approx(np.mean(gaps), abs=1e-6)
    assert float(rows["identity"]["gap_precision"]) == 0.0
    md = written["summary_md"].read_text()
    assert "undefined" in md and "reader_error" in md


def test_contrasts_table_matches_direct_computation_and_holm(built):
    run, written = built
    rows = read_csv(written["contrasts_csv"])
    # 3 settings x 8 metrics with a direction (reader_input_tokens has none), plus 4 gaps
    assert len(rows) == 3 * 8 + 4
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    val = {(r["setting"]["name"], r["question_id"]): r["metrics"].get("answer_f1") for r in recs if r["status"] == "ok"}
    cohort = sorted({q for (_, q) in val} - {"q003"})
    row = next(r for r in rows if r["a"] == "abstractive@0.25" and r["metric_a"] == "answer_f1")
    d = [val[("abstractive@0.25", q)] - val[("identity", q)] for q in cohort]
    assert float(row["effect"]) == pytest.approx(np.mean(d), abs=1e-6)
    assert float(row["ci_low"]) <= float(row["effect"]) <= float(row["ci_high"])
    assert row["n"] == "29" and row["n_dropped"] == "0"
    # Holm: adjusted >= raw, monotone in the raw order
    ps = [(float(r["p_value"]), float(r["p_holm"])) for r in rows if r["p_value"] != "NA" and r["p_holm"] != "NA"]
    left_out = [r for r in rows if r["p_value"] != "NA" and r["p_holm"] == "NA"]
    assert all("left out of the Holm family" in r["note"] and float(r["p_value"]) == 1.0 for r in left_out)
    assert all(h >= p for p, h in ps)
    ps.sort()
    assert all(ps[i][1] <= ps[i + 1][1] for i in range(len(ps) - 1))
    # all-undefined metric contrasts and identity-vs-identity gaps (all zero) are explicit
    ev = [r for r in rows if r["metric_a"] == "evidence_f1"]
    assert len(ev) == 3 and all(r["effect"] == r["p_value"] == r["p_holm"] == "NA" for r in ev)
    assert all(r["note"] == "no defined pair" and r["n"] == "0" and r["n_dropped"] == "29" for r in ev)
    ident_gap = next(r for r in rows if r["kind"] == "gap" and r["a"] == "identity")
    assert float(ident_gap["effect"]) == 0.0 and float(ident_gap["p_value"]) == 1.0


def test_judge_counters_render_flat_or_nested():
    from rageval.report.html import _judge_table

    wide = _judge_table({"nli": {"calls": 3, "cache_hits": 1}, "lexical": {"calls": 2}})
    assert wide.count("<tr>") == 3 and "cache_hits" in wide
    nested = _judge_table({"nli": {"cache": {"hits": 4}}, "total_calls": 9})
    assert "nli.cache.hits" in nested and "total_calls" in nested
    assert "no <code>judge_stats</code>" in _judge_table({})


def test_summary_budget_is_written_as_declared(built):
    _run, written = built
    rows = {r["setting"]: r for r in read_csv(written["summary_csv"])}
    assert rows["extractive@0.5"]["budget"] == "0.5" and rows["identity"]["budget"] == "NA"


@pytest.mark.parametrize("clusters", [False, True])
def test_a_slim_load_gives_the_same_summary_and_holds_no_texts(tmp_path, clusters):
    """The closing table's load reads the columns alone: the same summary as the full load, no structural facts
    or sweep gathered, and no record held (its records are read from the file when asked)."""
    from rageval.report.analysis import summarize
    from rageval.report.load import Records, load_run

    run_dir = make_run(tmp_path / "run", clusters=clusters, cluster_key="cluster_id" if clusters else None)
    full, slim = load_run(run_dir), load_run(run_dir, slim=True)
    assert summarize(slim) == summarize(full)
    assert full.facts and not slim.facts and not slim.sweeps.by_key
    assert (
        isinstance(slim.records, Records)
        and not hasattr(slim.records, "__dict__")
        or not any(
            isinstance(v, (list, dict)) and v and isinstance(next(iter(v)), dict) for v in vars(slim.records).values()
        )
    )
    assert [r["question_id"] for r in slim.records] == [r["question_id"] for r in full.records]
    assert bool(slim.clusters) is clusters
