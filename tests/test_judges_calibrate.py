"""``rageval calibrate``: figures on the shipped WiCE sample and on hand-made rows."""

import json

import pytest
from click.testing import CliRunner

from rageval.calibrate.cli import calibrate_cmd
from rageval.calibrate.core import auroc, calibrate, load_wice


def test_auroc_hand_computed_with_ties():
    assert auroc([0.5, 0.5], [0, 1]) == 0.5
    assert auroc([0.1, 0.9, 0.4], [0, 1, 1]) == 1.0
    assert auroc([0.2], [1]) is None


def test_label_mapping_and_partial_rows():
    rows = [
        {"claim": "Paris is in France.", "evidence": ["Paris is in France."], "label": "supported"},
        {"claim": "Lyon is in Spain.", "evidence": ["Paris is in France."], "label": "not_supported"},
        {"claim": "Paris is in Spain.", "evidence": ["Paris is in France."], "label": "partially_supported"},
    ]
    r = calibrate(rows, judge="lexical")
    assert r["binary"]["n"] == 2 and r["binary"]["balanced_accuracy"] == 1.0
    # "Paris is in Spain": content {pari, spain}, 1 of 2 in premise -> p = 0.5 -> judged supported
    assert r["partially_supported"] == {"n": 1, "predicted_supported": 1.0, "mean_probability": 0.5}
    strict = r["partial_as_not_supported"]
    assert strict["n"] == 3 and strict["accuracy"] == pytest.approx(2 / 3)


def test_shipped_sample_loads_via_package_resources():
    rows = load_wice()
    assert len(rows) == 349
    assert {r["label"] for r in rows} == {"supported", "not_supported", "partially_supported"}


def test_cli_prints_table_and_writes_json(tmp_path):
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(calibrate_cmd, ["--judge", "lexical", "--limit", "40", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "balanced accuracy" in res.output and "AUROC" in res.output
    data = json.loads(out.read_text())
    assert data["n_rows"] == 40 and data["judge"] == "lexical:v1"


def test_cli_bad_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"claim": "x", "evidence": [], "label": "maybe"}\n')
    res = CliRunner().invoke(calibrate_cmd, ["--data", str(bad)])
    assert res.exit_code != 0 and "maybe" in res.output


def test_abstentions_are_left_out_and_counted():
    from rageval.calibrate.core import calibrate

    rows = [
        {"claim": "Paris is in France.", "evidence": ["Paris is in France."], "label": "supported"},
        {"claim": "Lyon is big.", "evidence": ["Paris is in France."], "label": "not_supported"},
        {"claim": "Nice is warm.", "evidence": ["Paris is in France."], "label": "supported"},
    ]

    def judge(premises, hypotheses):  # 1.0 / 0.0 on the first two, abstains on the third
        return [1.0 if h == p else (float("nan") if "Nice" in h else 0.0) for p, h in zip(premises, hypotheses)]

    r = calibrate(rows, judge=judge, premise="full")
    assert r["n_abstained"] == 1
    assert r["binary"]["n"] == 2 and r["binary"]["accuracy"] == 1.0
