"""Reading a suite file safely: UTF-8 only, a size limit, no duplicate keys, no alias bombs.

PyYAML's ``safe_load`` builds no Python objects from tags, but it still takes the
last of two equal keys silently, expands nested anchors ("billion laughs") into
structures far larger than the file (an alias is a reference, so the blow-up
comes later, when the suite is validated, hashed or dumped) and accepts
recursive anchors.  :func:`load_yaml_file` reads a suite with
:class:`SuiteLoader`, a :class:`yaml.SafeLoader` subclass that rejects, each
with the line and column:

* a key given twice in one mapping (merge keys ``<<:`` may still be overridden);
* a mapping key that is not a string (``on:``/``yes:`` read as true, ``1:``,
  ``null:``, a list);
* ``.nan``/``.inf`` (no value of a suite is meant to be infinite or undefined);
* the YAML 1.1 number forms that YAML 1.2 and every other reader take differently:
  base 60 (``1:30`` is 90 to PyYAML), a leading zero (``012`` is octal 10), and a
  number of more than :data:`MAX_DIGITS` digits;
* more than :data:`MAX_ALIASES` aliases, a document whose expansion holds more
  than :data:`MAX_NODES` nodes, a recursive anchor, nesting deeper than
  :data:`MAX_DEPTH`;

and :func:`load_yaml_file` rejects a file larger than :data:`MAX_BYTES` or one
that is not UTF-8.  Every error is a :class:`YamlError` whose message names the
file, the place and the fix.

>>> load_yaml_text("a: 1\\nb: [x, y]\\n")
{'a': 1, 'b': ['x', 'y']}
>>> load_yaml_text("a: 1\\na: 2\\n")
Traceback (most recent call last):
...
rageval.suite.yamlsafe.YamlError: <text>: line 2, column 1: duplicate key 'a' (first given at line 1); give each key once
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from rageval.errors import ConfigError

__all__ = ["SuiteLoader", "YamlError", "load_yaml_file", "load_yaml_text", "MAX_BYTES", "MAX_NODES", "MAX_ALIASES"]

#: the largest suite file read (a suite is a few kB; this is generous)
MAX_BYTES = 2 * 1024 * 1024
#: the most nodes a document may hold once every alias is expanded
MAX_NODES = 100_000
#: the most aliases (``*name``) one document may use
MAX_ALIASES = 1_000
#: the deepest nesting of sequences and mappings
MAX_DEPTH = 64
#: the most digits a number may have (a seed is at most 19)
MAX_DIGITS = 64
_OCTAL = re.compile(r"[-+]?0[0-7_]+")

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


class YamlError(ConfigError):
    """A suite file that cannot be read as a safe YAML mapping; the message names the file, the place and the fix."""


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "(unknown place)"


class _Refused(yaml.YAMLError):
    """Raised inside the loader; turned into a :class:`YamlError` with the file name."""

    def __init__(self, message: str, mark: Any = None):
        super().__init__(message)
        self.message, self.mark = message, mark


class SuiteLoader(yaml.SafeLoader):
    """A :class:`yaml.SafeLoader` with the limits of the module doc."""

    def __init__(self, stream: Any):
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    # -- composing: count aliases, limit depth, then measure the expanded document
    def compose_node(self, parent: Any, index: Any) -> Node | None:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _Refused(
                    f"more than {MAX_ALIASES} aliases (*name); write the values out instead of referring to anchors",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(f"nesting deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self) -> Node | None:  # type: ignore[override]
        node = super().get_single_node()
        if node is not None:
            _check_expansion(node)
        return node

    # -- constructing: duplicate and non-string keys, non-finite numbers
    def construct_mapping(self, node: Any, deep: bool = False) -> dict:  # type: ignore[override]
        if isinstance(node, MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                if not isinstance(key_node, ScalarNode):
                    raise _Refused(f"a {key_node.id} cannot be a mapping key; keys are names", key_node.start_mark)
                if key_node.tag != _STR_TAG:
                    raise _Refused(
                        f"mapping key {key_node.value} is read by YAML as {_kind(self, key_node)}, not a name; "
                        f'quote it: "{key_node.value}":',
                        key_node.start_mark,
                    )
                key = key_node.value
                if key in seen:
                    raise _Refused(
                        f"duplicate key {key!r} (first given at line {seen[key].line + 1}); give each key once",
                        key_node.start_mark,
                    )
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_float(self, node: Any) -> float:  # type: ignore[override]
        _check_number_form(node)
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise _Refused(
                f"{_short(node.value)!r} is not a finite number; give a finite value (or null where a field allows it)",
                node.start_mark,
            )
        return value

    def construct_yaml_int(self, node: Any) -> int:  # type: ignore[override]
        _check_number_form(node)
        if _OCTAL.fullmatch(node.value):
            raise _Refused(
                f"{node.value} has a leading zero, which YAML 1.1 reads as octal "
                f"({super().construct_yaml_int(node)}); write it without the zero, or quote it if it is a name",
                node.start_mark,
            )
        return super().construct_yaml_int(node)


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def _check_number_form(node: ScalarNode) -> None:
    """Refuse a base-60 number and one with more than :data:`MAX_DIGITS` digits (module doc)."""
    text = str(node.value)
    if ":" in text:
        raise _Refused(
            f'{text} is read by YAML 1.1 as a base-60 number ({_sexagesimal(text)}); quote it ("{text}") if it is '
            "text, or write the number itself",
            node.start_mark,
        )
    if sum(c.isdigit() for c in text) > MAX_DIGITS:
        raise _Refused(
            f"{_short(text)} has more than {MAX_DIGITS} digits; no value of a suite needs that many", node.start_mark
        )


def _sexagesimal(text: str) -> str:
    total = 0.0
    for part in text.lstrip("+-").split(":"):
        total = total * 60 + float(part.replace("_", "") or 0)
    return f"{'-' if text.startswith('-') else ''}{total:g}"


SuiteLoader.add_constructor("tag:yaml.org,2002:float", SuiteLoader.construct_yaml_float)
SuiteLoader.add_constructor("tag:yaml.org,2002:int", SuiteLoader.construct_yaml_int)


def _kind(loader: SuiteLoader, node: ScalarNode) -> str:
    try:
        value = loader.construct_object(node)
    except ConstructorError:
        return "a non-string"
    return f"{type(value).__name__} {value!r}"


def _check_expansion(root: Node) -> None:
    """Refuse a recursive anchor or a document whose full expansion exceeds :data:`MAX_NODES` nodes."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise _Refused("a recursive anchor (an alias inside the value it names)", node.start_mark)
        if isinstance(node, SequenceNode):
            children: list[Node] = list(node.value)
        elif isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            sizes[key] = 1
            return 1
        active.add(key)
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_NODES:
                raise _Refused(
                    f"the anchors and aliases here expand to more than {MAX_NODES} values (nested aliases, a "
                    "'billion laughs' document); write the values out",
                    node.start_mark,
                )
        active.discard(key)
        sizes[key] = total
        return total

    size(root)


def load_yaml_text(text: str, source: str = "<text>") -> Any:
    """Parse ``text`` with :class:`SuiteLoader`; errors are :class:`YamlError` naming ``source`` and the place."""
    loader = None
    try:
        loader = SuiteLoader(text)  # the reader already checks the characters
        return loader.get_single_data()
    except _Refused as err:
        raise YamlError(f"{source}: {_at(err.mark)}: {err.message}") from None
    except RecursionError:
        raise YamlError(f"{source}: nesting too deep to read; flatten the file") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        where = f" {_at(mark)}:" if mark is not None else ""
        raise YamlError(f"{source}:{where} malformed YAML: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml_file(path: str | Path) -> Any:
    """Read ``path`` (UTF-8, at most :data:`MAX_BYTES`) and parse it with :func:`load_yaml_text`."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except IsADirectoryError:
        raise YamlError(f"{path}: is a directory, not a suite file") from None
    except OSError as err:
        raise YamlError(f"{path}: cannot be read ({err.strerror or err}); check the path and its permissions") from None
    if len(raw) > MAX_BYTES:
        raise YamlError(f"{path}: larger than {MAX_BYTES // (1024 * 1024)} MiB; a suite file is a few kB of YAML")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise YamlError(
            f"{path}: line {line}: not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start}); "
            "save the file as UTF-8"
        ) from None
    if "\x00" in text:
        raise YamlError(f"{path}: contains a NUL character; a suite file is UTF-8 text")
    return load_yaml_text(text, str(path))
