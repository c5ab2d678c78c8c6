"""The one escaping rule of each kind of output: CSV cells, Markdown text, console text (the HTML rule is the
report's Jinja2 environment: autoescape for the whole page, :mod:`rageval.report.html`).

A setting, system, question id, title or judge spec can be text someone else wrote (a file sent to you; a
model's reply), so every writer passes such text through the rule of the kind of file it writes
(docs/security.md#files-rageval-writes-escaping-per-output-kind).  An ordinary name comes out unchanged: only the
characters a spreadsheet, a Markdown renderer or a terminal would act on are touched.  JSON and JSON Lines keep
the text verbatim: they are data, quoted by the JSON encoder.

* **CSV** (:func:`csv_cell`, :func:`csv_text`): a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or
  a carriage return gets a leading ``'`` (the OWASP rule against formula injection), unless the whole cell is a
  plain decimal number (``-0.389``: a spreadsheet reads a number, nothing runs).  Numbers written as numbers are
  never touched.  A cell holding a comma, a quote, ``\\n`` or ``\\r`` is quoted (:func:`csv_text`; Python's csv
  writer with ``lineterminator="\\n"`` leaves a lone ``\\r`` unquoted, which splits the row in most readers).
* **Markdown** (:func:`md_text`, :func:`md_code`): the metacharacters that make a link, an image, raw HTML,
  an autolink, emphasis, a code span or a table cell boundary are backslash-escaped
  (``\\ | * ` ~`` always; ``<`` before a letter, ``/``, ``!`` or ``?``; ``]`` before ``(``, ``[`` or ``:``; ``[``
  before ``^``; ``_`` unless between two letters or digits; ``&`` before a letter or ``#``); line breaks and other
  control characters become a space.  Inside a code span (:func:`md_code`) nothing is interpreted:
  the span's backquote fence is made longer than any run of backquotes in the text.
* **Console** (:func:`console_text`): control characters (C0 but newline and tab, DEL, C1: so ``ESC[2J``, OSC 8
  hyperlinks, ``\\r``, the bell) and the bidirectional controls (U+202A..U+202E, U+2066..U+2069, U+200E,
  U+200F, U+061C) are written as visible escapes (``\\x1b``, ``\\u202e``), whether or not the output is a terminal.

>>> csv_cell('=HYPERLINK("x")'), csv_cell("-0.389"), csv_cell("-2+3"), csv_cell("full_context")
('\\'=HYPERLINK("x")', '-0.389', "'-2+3", 'full_context')
>>> csv_text([["a\\rb", "c"]])
'"a\\rb",c\\n'
>>> md_text("[x](javascript:alert(1)) <img src=x> a|b full_context [0.1, 0.2] p < 0.05")
'[x\\\\](javascript:alert(1)) \\\\<img src=x> a\\\\|b full_context [0.1, 0.2] p < 0.05'
>>> md_code("a`b"), md_code("plain")
('``a`b``', '`plain`')
>>> console_text("s\\x1b[2Jx\\u202ey\\rz")
's\\\\x1b[2Jx\\\\u202ey\\\\rz'
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click

__all__ = ["FORMULA_START", "csv_cell", "csv_text", "md_text", "md_code", "console_text", "echo", "BIDI_CONTROLS"]

#: the first characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")


def csv_cell(value: Any) -> Any:
    """A CSV text cell made inert: ``'`` before a leading formula character (:data:`FORMULA_START`), unless the
    cell is a plain decimal number.  Anything not a ``str`` (a number written as a number) is returned as is."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.match(value):
        return "'" + value
    return value


def csv_text(rows: Iterable[Sequence[Any]], number: Callable[[Any], Any] | None = None) -> str:
    """Rows as CSV text: ``\\n`` line ends, minimal quoting, a text cell (``str``) through :func:`csv_cell`, any
    other cell (a number, a flag, None) written as ``number`` formats it (never escaped: ``-0.389`` stays a
    number).  A cell holding ``\\r`` is quoted too: each row is written with ``\\r\\n`` line ends (so the writer
    quotes both characters) and its line end put back to ``\\n``; the bytes are otherwise those of
    ``csv.writer(lineterminator="\\n")``."""
    out = []
    for row in rows:
        cells = [csv_cell(c) if isinstance(c, str) else (number(c) if number else c) for c in row]
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\r\n").writerow(cells)
        out.append(buf.getvalue()[:-2] + "\n")
    return "".join(out)


#: the bidirectional formatting characters (a name holding U+202E shows its text reversed)
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def _is_control(ch: str, keep: str = "") -> bool:
    o = ord(ch)
    return ch not in keep and (o < 0x20 or 0x7F <= o <= 0x9F or ch in BIDI_CONTROLS)


_MD_ALWAYS = set("\\|*`~")


def _md_char(s: str, i: int) -> str:
    ch, nxt = s[i], s[i + 1 : i + 2]
    if ch in _MD_ALWAYS:
        return "\\" + ch
    if ch == "<" and (nxt.isalpha() or nxt in ("/", "!", "?")):
        return "\\<"  # a tag, a comment, an autolink
    if ch == "]" and nxt in ("(", "[", ":"):
        return "\\]"  # a link, an image, a reference, a definition
    if ch == "[" and nxt == "^":
        return "\\["  # a footnote
    if ch == "_" and not (0 < i and s[i - 1].isalnum() and nxt.isalnum()):
        return "\\_"
    if ch == "&" and (nxt.isalpha() or nxt == "#"):
        return "\\&"  # an entity
    return ch


def md_text(text: Any, *, spans: bool = False) -> str:
    """``text`` as inert Markdown text (a table cell or a sentence): no link, image, raw HTML, autolink,
    emphasis, code span, entity or cell boundary can come from it; a control character (a line break) is a space.
    Text with none of these forms is unchanged (``[+0.120, +0.340]``, ``p < 0.05``, ``full_context``).
    ``spans``: backquotes are kept (a message's own `code` spans; inside a span nothing is interpreted, so a
    backquote in the data can at most show some of the escaped text as code)."""
    s = "".join(" " if _is_control(ch) else ch for ch in str(text))
    return "".join("`" if spans and s[i] == "`" else _md_char(s, i) for i in range(len(s)))


def md_code(text: Any) -> str:
    """``text`` as a Markdown code span (nothing in it is interpreted): the backquote fence is one longer than
    the longest run of backquotes in ``text``, padded with a space where ``text`` starts or ends with one (or
    with a space at both ends: a renderer strips one from each side); a control character (a line break) is a
    space.  Empty text gives an empty span's two backquotes, shown as such."""
    s = "".join(" " if _is_control(ch) else ch for ch in str(text))
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ") and s.strip()) else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _visible(ch: str) -> str:
    """``\\r``, ``\\x1b`` (C0) or ``\\u009b`` / ``\\u202e`` (DEL, C1, bidirectional): the last two forms are also
    JSON's, so a JSON text printed through :func:`console_text` still reads back to the same data."""
    o = ord(ch)
    if ch == "\r":
        return "\\r"
    return f"\\x{o:02x}" if o < 0x20 else f"\\u{o:04x}"


def console_text(text: Any) -> str:
    """``text`` safe to print on a terminal: every control character but newline and tab (ESC, so CSI and OSC
    sequences; CR; BEL; DEL; C1) and every bidirectional control written as a visible escape (``\\x1b``,
    ``\\u202e``)."""
    return "".join(_visible(ch) if _is_control(ch, "\n\t") else ch for ch in str(text))


def echo(message: Any = None, err: bool = False) -> None:
    """:func:`click.echo` of :func:`console_text` (``None``: an empty line): what every command prints."""
    click.echo(None if message is None else console_text(message), err=err)
