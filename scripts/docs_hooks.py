"""MkDocs hooks (mkdocs.yml ``hooks:``): pages built from files outside ``docs/``.

* every metric card ``metrics/<name>/README.md`` becomes ``metrics/<name>.md``, in
  catalog order under the "Diagnostics" section of the nav, with its links into
  ``docs/`` rewritten for the site and an "API" section rendering the
  diagnostic's pure function from its docstring (mkdocstrings), taken from the
  catalog — so a renamed function or a stale link fails ``mkdocs build --strict``;
* ``CHANGELOG.md`` and ``CONTRIBUTING.md`` become ``changelog.md`` and
  ``contributing.md``;
* doctest blocks (``>>>`` lines and their output) outside code fences are
  rendered as code, in pages and in docstrings alike — otherwise Markdown reads
  ``>>>`` as a quote and ``x[1][2]`` as a link.

Nothing here imports torch, transformers or evaluate.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
ROOT_PAGES = {"CHANGELOG.md": "changelog.md", "CONTRIBUTING.md": "contributing.md"}


def _catalog():
    from rageval.diagnostics.catalog import CATALOG

    return CATALOG


def _card_names() -> list[str]:
    on_disk = {p.parent.name for p in (ROOT / "metrics").glob("*/README.md")}
    return [n for n in _catalog() if n in on_disk] + sorted(on_disk - set(_catalog()))


def _card_page(name: str) -> str:
    text = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    text = text.replace("](../../docs/", "](../")
    text = re.sub(r"\]\(\.\./\.\./([^)\s]+)\)", r"](https://github.com/rageval/rageval/blob/main/\1)", text)
    spec = _catalog().get(name)
    if spec is not None:
        module, attr = spec.function.split(":")
        text = text.rstrip("\n") + (
            f"\n\n## API\n\nThe pure function behind the module (`{module}.{attr}`):\n\n"
            f"::: {module}.{attr}\n    options:\n      show_root_heading: true\n      heading_level: 3\n"
        )
    return text


def _root_page(source: str) -> str:
    text = (ROOT / source).read_text(encoding="utf-8")
    text = text.replace("](docs/", "](")
    for src, dest in ROOT_PAGES.items():
        text = text.replace(f"]({src}", f"]({dest}")
    return text


class _DoctestFences(Preprocessor):
    """Wrap each doctest block that is not already in a code fence in a ``pycon`` fence."""

    FENCE = re.compile(r"^\s*(```|~~~)")

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fenced, i = False, 0
        while i < len(lines):
            line = lines[i]
            if self.FENCE.match(line):
                fenced = not fenced
            if fenced or not line.lstrip().startswith(">>>"):
                out.append(line)
                i += 1
                continue
            indent = len(line) - len(line.lstrip())
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i].lstrip())
                i += 1
            out += ["", " " * indent + "```pycon", *(" " * indent + b for b in block), " " * indent + "```", ""]
        return out


class DoctestFences(Extension):
    def extendMarkdown(self, md):
        md.preprocessors.register(_DoctestFences(md), "rageval_doctest_fences", 29)  # before fenced code (25)


@event_priority(100)  # before mkdocstrings reads the Markdown extensions
def on_config(config, **kwargs):
    """Fill the "Diagnostics" section of the nav with every card, in catalog order; fence doctest blocks."""
    config.markdown_extensions.append(DoctestFences())
    for item in config.nav or []:
        if isinstance(item, dict) and "Diagnostics" in item:
            head = [entry for entry in item["Diagnostics"] if not str(entry).startswith("{'metrics/")]
            item["Diagnostics"] = head + [{name: f"metrics/{name}.md"} for name in _card_names()]
    return config


def on_files(files, config, **kwargs):
    for name in _card_names():
        files.append(File.generated(config, f"metrics/{name}.md", content=_card_page(name)))
    for source, dest in ROOT_PAGES.items():
        if (ROOT / source).is_file():
            files.append(File.generated(config, dest, content=_root_page(source)))
    return files
