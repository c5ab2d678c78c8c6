"""One ScoringConfig (rageval.scoring): each scoring default declared once, and ``threshold`` walked from a suite's
YAML and from ``rageval score --threshold`` through the plan and the options the engine builds to the citation
gate, into the manifest, and back through ``rageval rescore``."""

import inspect
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rageval import diagnostics, scoring
from rageval.cli import main
from rageval.diagnostics import CATALOG
from rageval.diagnostics.attribution import gate
from rageval.diagnostics.attribution.options import AttributionOptions, AttributionSettings
from rageval.diagnostics.inputs import scoring_options
from rageval.judges.base import JudgeRunner
from rageval.judges.spec import JudgeSpec
from rageval.rundir.manifest import RunDir
from rageval.scoring import (
    DEFAULT_THRESHOLD,
    AttributionConfig,
    CitationConfig,
    JudgeConfig,
    ScoringConfig,
)
from rageval.suite.config import Suite
from rageval.suite.load import load_suite
from rageval.suite.plan import suite_scoring
from rageval.suite.run import run_suite

SUITE = """\
name: walk
dataset: {{name: hotpotqa, limit: 2}}
retrieval: {{method: bm25, k: 4}}
settings:
  - {{compressor: identity}}
reader: {{backend: extractive}}
judge: {{spec: lexical, threshold: {threshold}}}
output_dir: {out}
seed: 0
"""


def option_defaults(params=()) -> dict:
    """Each option of the pure functions (and the evaluate modules) and the value ScoringConfig's defaults give it
    (``params``: the function's parameters; without re-attribution options its ``k`` is retrieval's)."""
    config, options = ScoringConfig(), AttributionConfig()
    return {
        "judge": config.judge.spec,
        "threshold": config.judge.threshold,
        "max_citations": config.citations.max_citations,
        "alce_compat": config.citations.mode == "alce",
        "recovery_threshold": options.recovery_threshold,
        "k": options.k,
        "multi_snippet": options.multi_snippet,
        "candidates": options.candidates,
        "no_citation_precision": options.no_citation_precision,
        "claim_premise": options.claim_premise,
        **({} if "multi_snippet" in params or not params else {"k": config.retrieval_k}),
    }


def test_the_config_s_defaults_are_the_declared_constants():
    c = ScoringConfig()
    assert (c.judge.spec, c.judge.threshold, c.tokenizer) == ("lexical", 0.5, "regex")
    assert (c.citations.mode, c.citations.max_citations, c.attribution, c.retrieval_k) == ("default", 3, None, None)
    assert DEFAULT_THRESHOLD == 0.5 and scoring.DEFAULT_MAX_CITATIONS == 3 and scoring.DEFAULT_RECOVERY_K == 10


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_pure_function_takes_the_config_s_defaults(name):
    """A default changed in rageval.scoring changes every function's (and, by the module contract, every
    evaluate module's); a literal left behind in one of them fails here."""
    params = inspect.signature(diagnostics.get(name)).parameters
    want = option_defaults(params)
    for option in set(params) & set(want):
        got = params[option].default
        assert (type(got), got) == (type(want[option]), want[option]), (name, option, got, want[option])


def test_the_other_holders_of_a_default_take_it_from_the_config():
    want = option_defaults()
    opts = AttributionOptions()
    assert {k: getattr(opts, k) for k in want if k not in ("judge", "alce_compat")} == {
        k: v for k, v in want.items() if k not in ("judge", "alce_compat")
    }
    assert opts.alce_compat is want["alce_compat"]
    assert JudgeSpec is JudgeConfig  # the suite's judge: section is the config's part
    assert inspect.signature(JudgeRunner.decide).parameters["threshold"].default == DEFAULT_THRESHOLD
    assert AttributionSettings is AttributionConfig
    from rageval.calibrate.cli import calibrate_cmd
    from rageval.score.cli import score_cmd

    for cmd in (score_cmd, calibrate_cmd):
        (option,) = [p for p in cmd.params if p.name == "threshold"]
        assert option.default == DEFAULT_THRESHOLD, cmd.name
    s = Suite.model_validate({"name": "x", "dataset": {"name": "hotpotqa"}, "settings": [{"compressor": "identity"}]})
    assert suite_scoring(s) == ScoringConfig(attribution=AttributionConfig())


def test_to_json_is_the_manifest_s_scoring_section_and_reads_back():
    score_run = ScoringConfig(judge=JudgeConfig(threshold=0.7), retrieval_k=5)
    assert score_run.to_json() == {
        "judge": {"spec": "lexical", "threshold": 0.7, "params": {}},
        "tokenizer": "regex",
        "citations": {"mode": "default", "max_citations": 3},
        "attribution": {},  # rageval score sets none: the defaults, not recorded
        "retrieval_k": 5,
    }
    suite_run = ScoringConfig(citations=CitationConfig(mode="alce"), attribution=AttributionConfig(k=4))
    assert suite_run.to_json()["attribution"] == {
        "recovery_threshold": None,
        "k": 4,
        "multi_snippet": False,
        "candidates": "bm25",
        "no_citation_precision": "zero",
        "claim_premise": "single",
    }
    for c in (score_run, suite_run):
        assert ScoringConfig.model_validate(c.to_json()) == c
    opts = scoring_options(suite_run).attribution
    assert (opts.threshold, opts.k, opts.alce_compat, opts.max_citations) == (0.5, 4, True, 3)


class _Gate:
    """Records the threshold each call of the citation gate receives."""

    def __init__(self, monkeypatch):
        self.seen: list[float] = []
        real = gate.run_gate

        def run_gate(jobs, runner, threshold):
            self.seen.append(threshold)
            return real(jobs, runner, threshold)

        monkeypatch.setattr(gate, "run_gate", run_gate)

    def take(self) -> set[float]:
        seen, self.seen = set(self.seen), []
        return seen


def _manifest_threshold(run_dir: Path) -> float:
    data = json.loads((run_dir / "manifest.json").read_text())
    assert RunDir(run_dir).read_manifest().scoring_spec().judge.threshold == data["scoring"]["judge"]["threshold"]
    return data["scoring"]["judge"]["threshold"]


def test_a_suite_s_threshold_walks_from_yaml_to_the_gate_the_manifest_and_rescore(tmp_path, monkeypatch):
    path = tmp_path / "walk.yaml"
    path.write_text(SUITE.format(threshold=0.7, out=tmp_path / "out"))
    suite = load_suite(path)
    config = suite_scoring(suite)
    assert config.judge is suite.judge and config.judge.threshold == 0.7  # YAML -> the suite's JudgeSpec, in the config
    assert scoring_options(config).attribution.threshold == 0.7  # -> the engine's AttributionOptions
    seen = _Gate(monkeypatch)
    result = run_suite(suite, tmp_path / "out", progress=False, build_report=False)
    assert seen.take() == {0.7}  # -> the gate
    assert _manifest_threshold(result.out_dir) == 0.7  # -> the manifest
    res = CliRunner().invoke(main, ["rescore", str(result.out_dir)])
    assert res.exit_code == 0, res.output
    assert seen.take() == {0.7}  # rescore reads it back and gates with it
    assert _manifest_threshold(result.out_dir / "rescore-lexical") == 0.7


def test_score_s_threshold_option_walks_to_the_gate_the_manifest_and_rescore(tmp_path, monkeypatch):
    seen = _Gate(monkeypatch)
    out = tmp_path / "score"
    args = ["score", "--example", "--threshold", "0.7", "--out", str(out), "--no-progress", "--no-report"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert seen.take() == {0.7}
    assert _manifest_threshold(out) == 0.7
    res = CliRunner().invoke(main, ["rescore", str(out)])
    assert res.exit_code == 0, res.output
    assert seen.take() == {0.7}
    assert _manifest_threshold(out / "rescore-lexical") == 0.7


def test_a_nan_threshold_in_an_edited_manifest_is_one_line(tmp_path):
    out = tmp_path / "score"
    res = CliRunner().invoke(main, ["score", "--example", "--out", str(out), "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    manifest = out / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"threshold": 0.5', '"threshold": NaN'))
    for command in (["rescore", str(out)], ["audit", str(out), "--judge", "replay:x.jsonl"]):
        res = CliRunner().invoke(main, command)
        assert res.exit_code == 2, (command, res.output)
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and "scoring.judge.threshold" in lines[0] and "Traceback" not in res.output, lines


def test_the_threshold_default_is_written_once_in_the_source():
    """The issue's own check: one line of src/ declares a threshold of 0.5, the ScoringConfig's judge field."""
    import re
    from pathlib import Path

    pattern = re.compile(r"threshold[^=]*= ?(Field\()?0\.5")
    src = Path(__file__).resolve().parents[1] / "src"
    hits = [
        f"{p.relative_to(src)}:{i}"
        for p in sorted(src.rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert len(hits) == 1 and hits[0].startswith("rageval/scoring.py:"), hits
