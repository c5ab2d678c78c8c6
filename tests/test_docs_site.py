"""The docs site (mkdocs.yml, scripts/docs_hooks.py): every card is a page with its function's API, and
`mkdocs build --strict` fails on a broken link, a missing anchor and a stale API reference.

scripts/test.sh builds the real site strictly; these tests check that such a build can fail, and the hooks.
"""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("mkdocs")


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts" / "docs_hooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_card_becomes_a_page_with_its_pure_function_in_catalog_order():
    from rageval.diagnostics import CATALOG

    hooks = _hooks()
    names = hooks._card_names()
    assert names == [n for n in CATALOG if (ROOT / "metrics" / n / "README.md").is_file()]
    for name in names:
        page = hooks._card_page(name)
        module, attr = CATALOG[name].function.split(":")
        assert f"::: {module}.{attr}\n" in page
        assert "](../../" not in page  # links into docs/ rewritten for the site
    assert "](../design.md#" in hooks._card_page("grounded_precision")


def test_doctest_blocks_become_code_outside_fences_only():
    import markdown

    hooks = _hooks()
    md = markdown.Markdown(extensions=["fenced_code", hooks.DoctestFences()])
    html = md.convert("Parse:\n\n>>> parse('[1][2]')[0]\n[1, 2]\n\nText after.\n\n```python\n>>> kept\n```\n")
    assert "<blockquote>" not in html and "<a " not in html  # not a quote, not a link
    assert html.count("<code") == 2 and "parse('[1][2]')[0]" in html and "Text after." in html


def _build(tmp_path, extra_pages: dict[str, str]) -> subprocess.CompletedProcess:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    for name, text in extra_pages.items():
        (docs / name).write_text(text)
        config["nav"].append({name: name})
    config.update(docs_dir=str(docs), site_dir=str(tmp_path / "site"), hooks=[str(ROOT / "scripts" / "docs_hooks.py")])
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT / "src")]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.mark.slow
def test_strict_build_fails_on_a_broken_link_and_a_missing_anchor(tmp_path):
    res = _build(tmp_path, {"bad.md": "# Bad\n\nSee [gone](no-such-page.md) and [here](design.md#no-such-section).\n"})
    assert res.returncode != 0
    assert "no-such-page.md" in res.stderr and "no-such-section" in res.stderr


@pytest.mark.slow
def test_strict_build_fails_on_a_stale_api_reference(tmp_path):
    res = _build(tmp_path, {"stale.md": "# Stale\n\n::: rageval.diagnostics.answer.no_such_function\n"})
    assert res.returncode != 0
    assert "rageval.diagnostics.answer.no_such_function" in res.stderr
