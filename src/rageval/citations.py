"""Citation parsing: answer text -> sentences (claims) with the units they cite.

Two rule sets (docs/design.md#citation-parsing: #default-mode, #alce-compatible-mode;
why the default: #decision-default-citation-parsing), chosen with ``mode``:

**default**

* ``[1][2]`` -> 1, 2;  ``[1, 2]`` and ``[1,2]`` -> 1, 2;  ``[1-3]`` (or ``[1–3]``) -> 1, 2, 3.
* Markers after the sentence's full stop (``… France. [1]``) belong to the sentence
  before them, also when the splitter put them at the start of the next one.
* Duplicates count once (first occurrence kept).
* A number of more than 18 digits (leading zeros aside) is out of range whatever
  ``n_units`` is: it is never converted (Python refuses ``int()`` of 4,301 digits)
  and is recorded as written, leading zeros dropped (as for any number).
* Out-of-range numbers and ``[0]`` are **invalid**: recorded in
  ``CitedSentence.invalid`` as written, never remapped; they add no support and
  each counts as one imprecise citation in the precision denominator.  A range
  with an endpoint out of range, or reversed (``[3-1]``), is one invalid citation.
* The hypothesis is the sentence with every marker removed.
* The cap (default 3, ``None`` = no cap) keeps the first valid citations in
  order; the rest are recorded in ``CitedSentence.capped``.
* Every line of the answer is used; lines are split into sentences with
  :func:`rageval.text.split_sentences`.
* Markers are ASCII digits in brackets: ``[١]`` (Arabic-Indic) and ``[１]``
  (full-width) are text, not citations.  Nothing inside code is a marker: a
  fenced block (```` ``` ```` or ``~~~``, to its closing fence or the end) or an
  inline code span (`` `arr[1]` ``) is kept as written.

**alce** (``alce_compat=True`` in the metrics) reproduces ALCE's ``eval.py``:
first line of the answer only; nltk Punkt sentences; citations read with
``re.findall(r"\\[\\d+", sent)`` (so ``[1, 2]`` is [1] and ``[1-3]`` is [1]);
``[0]`` is the last unit; duplicates kept; the cap applies after the range
check; a sentence with any out-of-range citation is recorded with it in
``invalid`` (the metrics then give it joint support 0 and no precision
denominator, as ALCE does); hypothesis = ALCE's ``remove_citations``.  With ``list_question`` (a QAMPARI
question), the sentences are ALCE's QAMPARI ones instead of Punkt's: the first
line, trailing ``.`` and ``,`` stripped, split on ``,``, each piece stripped and
prefixed with the question and a space (an empty first line has no sentence).

>>> a = parse_answer("Paris is in France [1][2]. It has 2M people. [3] See [1-2], [9].", n_units=3)
>>> [(s.text, s.citations, s.invalid) for s in a.sentences]
[('Paris is in France.', (1, 2), ()), ('It has 2M people.', (3,), ()), ('See,.', (1, 2), ('9',))]
>>> a = parse_answer("Paris [1, 2][0].", n_units=3, mode="alce")
>>> a.sentences[0].citations
(1, 3)
"""

from __future__ import annotations

import functools
import re

from rageval.scoring import DEFAULT_CITATION_MODE, DEFAULT_MAX_CITATIONS
from rageval.text.normalize import CITATION_RE, remove_citations
from rageval.text.segment import nltk_sent_tokenize, split_sentences
from rageval.types import Answer, CitedSentence

__all__ = ["parse_answer", "parse_markers", "alce_remove_citations", "alce_qampari_sentences", "MODES"]

MODES = ("default", "alce")

_LEADING_MARKERS = re.compile(r"^(?:\s*" + CITATION_RE.pattern + r")+")
_CODE = re.compile(r"(```|~~~).*?(?:\1|\Z)|`[^`\n]+`", re.DOTALL)
#: private-use pairs that stand in for ``[`` and ``]`` inside code while markers are read
_MASKS = (("\ue000", "\ue001"), ("\ue002", "\ue003"), ("\uf8fe", "\uf8ff"))
_ALCE_REF = re.compile(r"\[\d+")
_ALCE_SPACED_REF = re.compile(r" \[\d+")
_MAX_DIGITS = 18  # a citation number longer than this is out of range for any answer


def _number(digits: str) -> tuple[int, str]:
    """``(value, as recorded)`` of a marker's number; -1 (out of range) for one longer than :data:`_MAX_DIGITS`.

    >>> _number("007"), _number("9" * 5000) == (-1, "9" * 5000), _number("0-0-0"), _number("0- 0-0")
    ((7, '7'), True, (-1, '0-0-0'), (-1, '0-0-0'))
    """
    if not digits.isdecimal():  # e.g. "0-0-0": more than one range dash; recorded without its spaces
        return -1, "".join(digits.split())
    short = digits.lstrip("0") or "0"
    if len(short) > _MAX_DIGITS:
        return -1, short
    value = int(short)
    return value, str(value)


def alce_remove_citations(sent: str) -> str:
    """ALCE's ``utils.remove_citations``, character for character."""
    return _ALCE_REF.sub("", _ALCE_SPACED_REF.sub("", sent)).replace(" |", "").replace("]", "")


def _mask_code(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with the brackets inside code replaced by private-use characters it does not hold, and the
    mapping back (empty when there is no code, or no free pair: then nothing is masked)."""
    spans = list(_CODE.finditer(text))
    free = next((m for m in _MASKS if m[0] not in text and m[1] not in text), None)
    if not spans or free is None:
        return text, {}
    out, last = [], 0
    for m in spans:
        out += [text[last : m.start()], m.group(0).replace("[", free[0]).replace("]", free[1])]
        last = m.end()
    out.append(text[last:])
    return "".join(out), {free[0]: "[", free[1]: "]"}


def _unmask(text: str, back: dict[str, str]) -> str:
    for k, v in back.items():
        text = text.replace(k, v)
    return text


def parse_markers(sentence: str, n_units: int) -> tuple[list[int], list[str]]:
    """Valid unit numbers (in order, duplicates kept) and invalid citations as written.

    >>> parse_markers("a [2][1, 3] b [2-4] [0] [4-2]", 3)
    ([2, 1, 3], ['2-4', '0', '4-2'])
    """
    valid: list[int] = []
    invalid: list[str] = []
    for m in CITATION_RE.finditer(sentence):
        body = m.group(0)[1:-1]
        for part in body.split(","):
            part = part.strip()
            if not part:
                continue
            bounds = re.split(r"\s*[-\u2013]\s*", part)
            if len(bounds) == 2:
                (lo, lo_text), (hi, hi_text) = _number(bounds[0]), _number(bounds[1])
                if 1 <= lo <= hi <= n_units:
                    valid.extend(range(lo, hi + 1))
                else:
                    # Clip only the recorded text, never the numbers.
                    invalid.append(f"{lo_text}-{hi_text}")
            else:
                k, k_text = _number(part)
                if 1 <= k <= n_units:
                    valid.append(k)
                else:
                    invalid.append(k_text)
    return valid, invalid


def _check_args(text, n_units, max_citations, mode):
    if not isinstance(text, str):
        raise TypeError(f"answer must be a string, got {type(text).__name__}")
    if isinstance(n_units, bool) or not isinstance(n_units, int) or n_units < 0:
        raise ValueError(f"n_units must be a non-negative integer, got {n_units!r}")
    if max_citations is not None and (
        isinstance(max_citations, bool) or not isinstance(max_citations, int) or max_citations < 1
    ):
        raise ValueError(f"max_citations must be a positive integer or None, got {max_citations!r}")
    if mode not in MODES:
        raise ValueError(f"citation mode must be one of {MODES}, got {mode!r}")


def parse_answer(
    text: str,
    n_units: int,
    *,
    mode: str = DEFAULT_CITATION_MODE,
    max_citations: int | None = DEFAULT_MAX_CITATIONS,
    list_question: str | None = None,
) -> Answer:
    """Split an answer into claims and parse their citations (see module doc for the rules).

    ``list_question``: the question of a list answer (QAMPARI); in ``alce`` mode the claims are then ALCE's
    QAMPARI sentences, ``question + " " + piece`` per comma-separated piece (ignored in ``default`` mode).

    >>> a = parse_answer("Ann [1], Bob [2].", n_units=2, mode="alce", list_question="Who?")
    >>> [(s.text, s.citations) for s in a.sentences]
    [('Who? Ann', (1,)), ('Who? Bob', (2,))]
    """
    _check_args(text, n_units, max_citations, mode)
    return _parse(text, n_units, mode, max_citations, list_question if mode == "alce" else None)


@functools.lru_cache(maxsize=1024)
def _parse(text: str, n_units: int, mode: str, max_citations: int | None, list_question: str | None) -> Answer:
    """:func:`parse_answer` of checked arguments, remembered for the last 1,024 answers: a batch's answers are
    parsed once for every diagnostic and for the record (an :class:`Answer` is immutable)."""
    if mode == "alce":
        return _parse_alce(text, n_units, max_citations, list_question)

    masked, back = _mask_code(text)
    raw_sentences: list[str] = []
    for line in masked.splitlines():
        raw_sentences.extend(split_sentences(line))

    # Markers that open a sentence belong to the sentence before it.
    merged: list[str] = []
    for sent in raw_sentences:
        m = _LEADING_MARKERS.match(sent)
        if m and merged:
            merged[-1] = merged[-1] + " " + m.group(0).strip()
            sent = sent[m.end() :].strip()
            if not sent:
                continue
        merged.append(sent)

    sentences = []
    for raw in merged:
        valid, invalid = parse_markers(raw, n_units)
        valid = list(dict.fromkeys(valid))
        invalid = list(dict.fromkeys(invalid))
        if max_citations is not None:
            kept, capped = valid[:max_citations], valid[max_citations:]
        else:
            kept, capped = valid, []
        hypothesis = _unmask(remove_citations(raw), back)
        if not hypothesis and not kept and not invalid:
            continue
        sentences.append(
            CitedSentence(
                text=hypothesis,
                raw=_unmask(raw, back),
                citations=tuple(kept),
                invalid=tuple(invalid),
                capped=tuple(capped),
            )
        )
    return Answer(text=text, sentences=tuple(sentences), mode="default")


def alce_qampari_sentences(first_line: str, question: str) -> list[str]:
    """ALCE's QAMPARI citation sentences of an output's first line (``[]`` when it is empty).

    >>> alce_qampari_sentences("Ann [1], Bob [2],.", "Who?")
    ['Who? Ann [1]', 'Who? Bob [2]']
    """
    if not first_line.strip():
        return []
    return [question + " " + x.strip() for x in first_line.rstrip().rstrip(".").rstrip(",").split(",")]


def _parse_alce(text: str, n_units: int, max_citations: int | None, list_question: str | None = None) -> Answer:
    first_line = text.strip().split("\n")[0]
    if list_question is None:
        raw_sentences = nltk_sent_tokenize(first_line)
    else:
        raw_sentences = alce_qampari_sentences(first_line, list_question)
    sentences = []
    for sent in raw_sentences:
        ids = [_number(r[1:]) for r in _ALCE_REF.findall(sent)]
        # ALCE: ref_id = k - 1; [0] -> -1 -> the last document (Python indexing); a number too long: out of range.
        invalid = [text for k, text in ids if k < 0 or k - 1 >= n_units or (k == 0 and n_units == 0)]
        if invalid:
            cited: list[int] = []
        else:
            cited = [k if k >= 1 else n_units for k, _ in ids]
            if max_citations is not None:
                cited = cited[:max_citations]
        sentences.append(
            CitedSentence(
                text=alce_remove_citations(sent).strip(), raw=sent, citations=tuple(cited), invalid=tuple(invalid)
            )
        )
    return Answer(text=text, sentences=tuple(sentences), mode="alce")
