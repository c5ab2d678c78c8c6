"""The files of a maintained library: pre-commit configuration, changelog, contributing guide, `python -m`."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _anchor(heading: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", heading.lower()).strip().replace(" ", "-")


def test_pre_commit_runs_ruff_at_the_test_extras_version_and_mypy():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: (repo["repo"], repo.get("rev"), h) for repo in config["repos"] for h in repo["hooks"]}
    assert {"ruff-check", "ruff-format", "mypy"} <= set(hooks)
    pin = re.search(r'"ruff>=([0-9.]+),', (ROOT / "pyproject.toml").read_text()).group(1)
    assert hooks["ruff-check"][1] == f"v{pin}" == hooks["ruff-format"][1]
    assert hooks["mypy"][2]["pass_filenames"] is False  # mypy checks the configured files (pyproject.toml)


def test_changelog_follows_keep_a_changelog_and_states_the_version_rule():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "Keep a Changelog" in text and "## [Unreleased]" in text
    for section in ("### Added", "### Changed", "### Fixed"):
        assert section in text
    rule = text[text.index("Bumping a metric's version") :]
    for word in ("major", "minor", "patch", "rageval export-metrics metrics"):
        assert word in rule


def test_contributing_says_how_to_add_each_part_and_its_links_resolve():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    arch = (ROOT / "docs" / "architecture.md").read_text()
    anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", arch, re.MULTILINE)}
    for part in ("diagnostic", "compressor", "dataset", "reader", "judge"):
        assert f"| a {part} |" in text
        assert f"add-a-{part}" in anchors and f"docs/architecture.md#add-a-{part}" in text
    for target in re.findall(r"\]\(([^)#]+)", text):
        assert (ROOT / target).exists(), target
