"""The files of a maintained library: pre-commit configuration, changelog, contributing guide, `python -m`."""

import re
import subprocess
import sys
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
    assert "CONTRIBUTING.md#versions-the-package-and-each-metric" in text
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rule = contributing[contributing.index("Bumping a metric's version") :]
    for word in ("major", "minor", "patch", "rageval export-metrics metrics"):
        assert word in rule


def test_readme_and_changelog_stay_short_and_user_facing():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert "bash scripts/demo.sh" in readme and "bash scripts/test.sh" in readme
    assert "`.ci/run` calls exactly this command" in readme
    assert not re.search(r"\bat load\b|load average", readme)  # measurements live in docs/benchmarks.md
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert len(changelog.split()) <= 3000
    releases = re.findall(r"^## \[([^\]]+)\]", changelog, re.MULTILINE)
    assert releases[:2] == ["Unreleased", "0.1.0"]  # an Unreleased section on top for later changes


def test_contributing_says_how_to_add_each_part_and_its_links_resolve():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    arch = (ROOT / "docs" / "architecture.md").read_text()
    anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", arch, re.MULTILINE)}
    for part in ("diagnostic", "compressor", "dataset", "reader", "judge"):
        assert f"| a {part} |" in text
        assert f"add-a-{part}" in anchors and f"docs/architecture.md#add-a-{part}" in text
    for target in re.findall(r"\]\(([^)#]+)", text):
        assert (ROOT / target).exists(), target


def _commit_msg_hook(tmp_path, message: str) -> subprocess.CompletedProcess:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    script = ROOT / "scripts" / "check_commit_msg.py"
    cmd = [sys.executable, str(script), str(path)]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)


def test_commit_msg_hook_refuses_a_subject_over_72_characters(tmp_path):
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert config["default_install_hook_types"] == ["pre-commit", "commit-msg"]
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert hooks["commit-subject"]["stages"] == ["commit-msg"]
    assert "scripts/check_commit_msg.py" in hooks["commit-subject"]["entry"]
    # 72 characters pass, 73 fail; git's comment lines and a long body do not count
    ok = _commit_msg_hook(tmp_path, "# a comment line git drops, " + "c" * 80 + "\n" + "s" * 72 + "\n\n" + "b" * 200)
    assert ok.returncode == 0, ok.stderr
    long = _commit_msg_hook(tmp_path, "s" * 73 + "\n")
    assert long.returncode == 1
    assert "73 characters, over the limit of 72" in long.stderr


def test_the_test_command_checks_before_the_slow_installs():
    lines = [ln.strip() for ln in (ROOT / "scripts" / "test.sh").read_text().splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]

    def at(command: str) -> int:
        return next(i for i, ln in enumerate(lines) if ln == command or ln.startswith(command + " "))

    # ruff and mypy with no paths: their files come from pyproject.toml
    assert ".venv/bin/ruff check" in lines and ".venv/bin/ruff format --check" in lines and ".venv/bin/mypy" in lines
    order = [
        ".venv/bin/ruff check",
        ".venv/bin/ruff format --check",
        "bash scripts/setup.sh lint",
        ".venv/bin/mypy",
        ".venv/bin/lint-imports",
        "bash scripts/setup.sh test",
        ".venv/bin/python -m pytest",
    ]
    assert [at(c) for c in order] == sorted(at(c) for c in order)
    # the ruff installed first is the lint extra's pin, read from pyproject.toml (one place for the version)
    pin = re.search(r'lint = \[\s*"(ruff[^"]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert re.search(r'"ruff\[>=<\]', (ROOT / "scripts" / "test.sh").read_text()) and pin.startswith("ruff>=")
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text().splitlines()
