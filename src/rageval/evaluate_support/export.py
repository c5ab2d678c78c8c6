"""Hub-ready evaluate module folders: ``rageval export-metrics DIR``.

Each folder ``DIR/<name>/`` holds what a Hugging Face Space of an evaluate
metric holds (the layout of ``evaluate``'s own metrics):

* ``<name>.py`` — the module, unchanged;
* ``README.md`` — the metric card with the Spaces front matter (``title``,
  ``emoji``, ``colorFrom``, ``colorTo``, ``sdk: gradio``, ``sdk_version`` — a
  Gradio 3 release, since evaluate's widget uses Gradio 3 APIs — ``app_file``,
  ``pinned``, ``tags``, ``description``, and rageval's ``version``), a
  "How to use" section (the module's doctest example) and a "Citation" section
  (:func:`rageval.evaluate_support.bibtex.citation`);
* ``app.py`` — evaluate's Gradio widget over the module in its own folder;
* ``requirements.txt`` — rageval at the exported version.

``evaluate.load("DIR/<name>")`` loads a folder offline; pushed to a Space
``<namespace>/<name>`` it is ``evaluate.load("<namespace>/<name>")`` (not tried
against the real Hub here: docs/evaluate.md).  The folders shipped in
``metrics/`` are this function's output for the namespace ``rageval`` (a test
checks it); after a version bump or a card edit that touches the generated
parts, regenerate them from the repository root with
``rageval export-metrics metrics``.

The rendering is idempotent: the hand-written parts of a card (definition,
inputs, output, degenerate cases, parity, versions; the front matter's
``title``, ``tags``, ``description`` and ``version``) are kept as they are,
and the generated parts are replaced.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import yaml

from rageval import __version__
from rageval.diagnostics.catalog import spec
from rageval.evaluate_support import module_names, modules_dir
from rageval.evaluate_support.bibtex import HOMEPAGE, citation
from rageval.registry import unknown_name

__all__ = [
    "SDK_VERSION",
    "FRONT_MATTER_KEYS",
    "render_card",
    "render_app",
    "render_requirements",
    "render_folder",
    "absolute_links",
    "export_metrics",
    "export_metrics_cmd",
]

#: the Gradio release the Spaces run: evaluate's widget uses Gradio 3 APIs (gr.inputs / gr.outputs)
SDK_VERSION = "3.50.2"
#: every key of the Spaces front matter, in the order written
FRONT_MATTER_KEYS = (
    "title",
    "emoji",
    "colorFrom",
    "colorTo",
    "sdk",
    "sdk_version",
    "app_file",
    "pinned",
    "tags",
    "description",
    "version",
)
DEFAULT_NAMESPACE = "rageval"
_NAMESPACE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$")
# Spaces colours by diagnostic family
_COLOURS = {"answer": ("blue", "green"), "retrieval": ("green", "yellow"), "attribution": ("indigo", "purple")}
_EMOJI = {"answer": "🎯", "retrieval": "🔎", "attribution": "🔗", "cost": "🗜️"}
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


def _spec(name: str):
    return spec(name)


def _front_matter(name: str, old: dict[str, Any]) -> str:
    spec = _spec(name)
    tags = ["evaluate", "metric"] + [t for t in old.get("tags") or [] if t not in ("evaluate", "metric")]
    colour_from, colour_to = _COLOURS.get(spec.family, ("gray", "indigo"))
    values = {
        "title": old.get("title") or name,
        "emoji": _EMOJI.get(spec.family, "📏"),
        "colorFrom": colour_from,
        "colorTo": colour_to,
        "sdk": "gradio",
        "sdk_version": SDK_VERSION,
        "app_file": "app.py",
        "pinned": False,
        "tags": tags,
        "description": old.get("description") or spec.summary,
        "version": old.get("version") or spec.version,
    }
    lines = ["---"]
    for key in FRONT_MATTER_KEYS:
        v = values[key]
        if key == "tags":
            lines.append("tags:")
            lines += [f"- {t}" for t in v]
        elif key == "description":
            lines.append(f"description: {_yaml_scalar(v)}")
        elif isinstance(v, bool):
            lines.append(f"{key}: {'true' if v else 'false'}")
        else:
            lines.append(f"{key}: {_yaml_scalar(str(v))}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def _yaml_scalar(text: str) -> str:
    """``text`` as a one-line YAML scalar: plain when it is a simple token, else double-quoted (JSON)."""
    return text if re.fullmatch(r"[A-Za-z0-9_.\-]+", text) else json.dumps(text, ensure_ascii=False)


def _examples(module_source: str) -> list[str]:
    """The doctest lines of the module's ``Examples:`` block (its _KWARGS_DESCRIPTION)."""
    lines = module_source.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "Examples:") + 1
    except StopIteration:
        return []
    out = []
    for ln in lines[start:]:
        if not ln.startswith("    ") or ln.strip().startswith('"""'):
            break
        out.append(ln[4:])
    while out and not out[-1].strip():
        out.pop()
    return out


def _how_to_use(name: str, module_source: str, namespace: str) -> str:
    example = _examples(module_source)
    block = "\n".join([">>> import evaluate", *example]) if example else ">>> import evaluate"
    return f"""## How to use

```bash
git clone https://github.com/rageval/rageval && pip install ./rageval
```

rageval {__version__} is not released yet, and another public project uses the name `rageval`: install from a
clone, or from a wheel built in one, `pip install dist/rageval-*.whl`
([getting started](../../docs/getting-started.md#install)).

Load the module in one of three ways: published as a Space, `evaluate.load("{namespace}/{name}")`;
from its folder, `evaluate.load("path/to/{name}")` (a checkout's `metrics/{name}`, or a folder
written by `rageval export-metrics`); or offline by bare name after `rageval install-metrics`. The
example below uses the bare name; rageval's tests run it as a doctest
([the evaluate modules](../../docs/evaluate.md)).

```python
{block}
```
"""


def _citation_section(name: str) -> str:
    return f"""## Citation

Cite the work this metric's definition comes from and rageval {__version__}
([references](../../docs/design.md#references)):

```bibtex
{citation(name).rstrip()}
```
"""


def _set_section(body: str, heading: str, text: str, before: tuple[str, ...]) -> str:
    """Replace section ``## heading`` of ``body`` with ``text``, or insert it before the first of ``before``."""
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(body):
        return pattern.sub(lambda _: text.rstrip("\n") + "\n\n", body, count=1).rstrip("\n") + "\n"
    for h in before:
        m = re.search(rf"^## {re.escape(h)}\b", body, re.MULTILINE)
        if m:
            return body[: m.start()] + text.rstrip("\n") + "\n\n" + body[m.start() :]
    return body.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"


def render_card(name: str, card: str, module_source: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """The Hub-ready card of module ``name`` from its hand-written ``card`` (idempotent)."""
    m = _FRONT.match(card)
    old = yaml.safe_load(m.group(1)) if m else {}
    body = card[m.end() :] if m else card
    body = _set_section(body, "How to use", _how_to_use(name, module_source, namespace), ("Inputs", "Output"))
    body = _set_section(body, "Citation", _citation_section(name), ("Versions",))
    return _front_matter(name, old or {}) + "\n" + body.lstrip("\n")


def render_app(name: str) -> str:
    """``app.py``: evaluate's Gradio widget over the module in the app's own folder (works under any namespace)."""
    return f'''"""Hugging Face Space of the rageval evaluate module {name}: evaluate's Gradio widget.

Written by `rageval export-metrics`.  The module is loaded from this folder, so the
Space works under any namespace; the widget uses Gradio 3 APIs, hence the card's
sdk_version.  Requirements: requirements.txt.
"""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).resolve().with_name("{name}.py")))
launch_gradio_widget(module)
'''


def render_requirements() -> str:
    """``requirements.txt``: rageval at this version (it brings evaluate and datasets; model judges need [models])."""
    return f"rageval=={__version__}\n"


def absolute_links(card: str) -> str:
    """Links of a card that lead out of its folder (``../../docs/…``) made absolute (rageval's repository)."""

    return re.sub(r"\]\(\.\./\.\./([^)\s]+)\)", lambda m: f"]({HOMEPAGE}/blob/main/{m.group(1)})", card)


def render_folder(
    name: str, namespace: str = DEFAULT_NAMESPACE, source: Path | None = None, relative_links: bool = True
) -> dict[str, str]:
    """File name -> text of the Hub-ready folder of module ``name`` (read from ``source``, default the shipped one).

    ``relative_links=False`` (a folder outside the checkout) points the card's links into rageval's repository.
    """

    src = Path(source) if source is not None else modules_dir() / name
    module_source = (src / f"{name}.py").read_text(encoding="utf-8")
    card = render_card(name, (src / "README.md").read_text(encoding="utf-8"), module_source, namespace)
    return {
        f"{name}.py": module_source,
        "README.md": card if relative_links else absolute_links(card),
        "app.py": render_app(name),
        "requirements.txt": render_requirements(),
    }


def _check_namespace(namespace: str) -> None:
    if not _NAMESPACE.match(namespace):
        raise ValueError(
            f"namespace {namespace!r} is not a Hub user or organisation name: use letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit (e.g. --namespace my-lab)"
        )


def export_metrics(out: str | Path, namespace: str = DEFAULT_NAMESPACE, names: list[str] | None = None) -> list[Path]:
    """Write ``out/<name>/`` (module, card, app.py, requirements.txt) for each module; return the folders.

    Files of the same names are overwritten; other files in ``out`` are left alone.
    """

    _check_namespace(namespace)
    shipped = module_names()
    for n in names or []:
        if n not in shipped:
            raise unknown_name("evaluate module", n, shipped)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file: give a folder to write the modules into (it is created if missing)")
    folders = []
    for name in names or shipped:
        folder = out / name
        in_place = folder.resolve() == (modules_dir() / name).resolve()  # regenerating the shipped folders
        files = render_folder(name, namespace, relative_links=in_place)  # read everything before writing
        folder.mkdir(parents=True, exist_ok=True)
        for fname, text in files.items():
            target = folder / fname
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                target.write_text(text, encoding="utf-8")
        folders.append(folder)
    return folders


class _InputError(click.ClickException):
    exit_code = 2


@click.command("export-metrics")
@click.argument("out", type=click.Path(path_type=Path))
@click.option(
    "--namespace",
    default=DEFAULT_NAMESPACE,
    show_default=True,
    help="Hub user or organisation the Spaces will live under (used in the cards' examples).",
)
@click.option("--name", "names", multiple=True, help="Export only this module (repeatable; default: all).")
def export_metrics_cmd(out: Path, namespace: str, names: tuple[str, ...]) -> None:
    """Write Hub-ready evaluate module folders (card with Spaces front matter, app.py, requirements.txt) into OUT."""
    try:
        folders = export_metrics(out, namespace, list(names) or None)
    except ValueError as err:  # the command is wrong: exit 2, like every rageval input error
        raise _InputError(str(err)) from None
    except OSError as err:  # the disk: exit 1
        raise click.ClickException(f"cannot write into {out}: {err}") from None
    click.echo(f"wrote {len(folders)} evaluate module folders for namespace {namespace!r} into {out}")
    for f in folders:
        click.echo(f"  {f.name}")
    click.echo(
        f'load one with evaluate.load("{out / folders[0].name}"); publish one by pushing its folder to the '
        f"Space {namespace}/<name> (docs/evaluate.md)"
        if folders
        else "nothing to write"
    )
