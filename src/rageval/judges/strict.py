"""The strict lexical judge (``lexical-strict``): word overlap that refuses support on what overlap cannot see.

An opt-in model-free judge (the default stays ``lexical``).  Three signals, on the lexical judge's content tokens
(:func:`rageval.judges.lexical.content_tokens`: normalized, function words removed, lightly stemmed):

* ``cov``: the share of the hypothesis's content tokens found in the premise (the ``lexical`` judge's probability);
* ``pairs``: the share of the hypothesis's adjacent content-token pairs (unordered) found adjacent in one premise
  line (``cov`` when the hypothesis has fewer than two content tokens) — word order, coarsely;
* ``entities``: the share of the hypothesis's entity tokens (rule 3) found in the premise (1 without any).

They are combined by a logistic model, ``p = 1 / (1 + exp(-(B0 + B_COV*cov + B_PAIRS*pairs + B_ENT*entities)))``,
whose constants are fitted, with both classes weighted equally, on the shipped WiCE dev sample (BM25 premise,
partial support counted as unsupported, the rows no rule refuses), so that the shared decision threshold 0.5 is
the fitted one.  Refit, and the out-of-fold figures: ``python scripts/fit_strict_judge.py`` (docs/judges.md).

Then **refusals**: when one of these rules fires, ``p`` is multiplied by :data:`REFUSED` (0.49), so the pair is
never supported at a threshold of 0.5 or more, and the refused pairs keep their order:

1. **abstention** — the hypothesis is abstention-shaped ("I don't know", "cannot be determined", "not enough
   information", ...: :data:`ABSTENTION_RE`): ``p = 0``, whatever the premise;
2. **number** — a number of the hypothesis (digits, ``1,500``, ``2.5``, number words up to ninety-nine, scaled by
   hundred/thousand/million/billion/trillion, ``%``/percent, ``$``/€/£, units of length, mass and temperature
   converted to one base) has no equal in the premise (same unit dimension: equal after conversion within 1%;
   else equal values), while a premise sentence that shares most content tokens with the hypothesis holds a
   number of the same kind (the same unit dimension when both have one; else both years 1000–2100 or both not) — a different value,
   not a missing one;
3. **entity** — fewer than :data:`ENTITY_FLOOR` (half) of the hypothesis's entity tokens occur in the premise:
   capitalized words (a sentence's first word too, unless it is a function word such as "The" or "He") and
   words with a digit (dates, years, codes), normalized as content tokens;
4. **polarity** — on every premise sentence sharing most content tokens with the hypothesis, one side negates
   (a content word within :data:`NEGATION_SCOPE` words after a cue of :data:`NEGATION_RE`: not, n't, no, never,
   no longer, none, neither, nor, without, cannot, fails/failed to, denies/denied, lacks, unable, refuses to) a
   word the other states without negation.

It never abstains (no NaN).  Still word overlap: it knows no synonyms, paraphrase or world knowledge, and a claim
about another subject that shares the rest of its words ("A spider has six legs" over a passage on insects'
six legs) is still supported.

>>> j = StrictLexicalJudge()
>>> j.predict(["Title: Paris\\nParis is the capital of France."], ["France's capital is Paris."])[0] > 0.5
True
>>> [p < 0.5 for p in j.predict(["At sea level, water boils at 100 degrees Celsius.",
...   "Student loans do not affect credit scores.", "Paris is the capital of France.", "I know."],
...  ["Water boils at 50 degrees.", "Student loans can lower credit scores.", "Berlin is the capital of France.",
...   "I don't know."])]
[True, True, True, True]
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from typing import NamedTuple

from rageval.judges.lexical import STOPWORDS, content_tokens
from rageval.text.normalize import normalize_answer, remove_citations

__all__ = [
    "ABSTENTION_RE",
    "B0",
    "B_COV",
    "B_PAIRS",
    "NEGATION_RE",
    "REFUSED",
    "StrictLexicalJudge",
    "explain",
    "features",
    "numbers",
]

# -- the fitted constants --------------------------------------------------------------------------------
# Fitted by `python scripts/fit_strict_judge.py` (class-balanced logistic regression on the 349 rows of the
# shipped WiCE dev sample, BM25 top-5 premise, partially_supported counted as not supported, features computed
# after the refusal rules are known; out-of-fold figures printed by the same script, docs/judges.md).
B0 = -2.7482
B_COV = 0.8850
B_PAIRS = 2.3479
B_ENT = 1.8962
#: below this share of its entity tokens found, a hypothesis is refused (rule 3)
ENTITY_FLOOR = 0.5
#: a refused pair's probability is ``p * REFUSED`` (below 0.5 whatever p)
REFUSED = 0.49

# -- the rules ------------------------------------------------------------------------------------------

#: an abstention-shaped claim (searched in the lowercased claim, curly apostrophes made straight)
ABSTENTION_RE = re.compile(
    r"\bi (?:do not|don't|dont|did not|didn't) know\b|\bi(?: am|'m) (?:not sure|unsure|unable to)\b"
    r"|\b(?:cannot|can't|can not|could not|couldn't) be (?:determined|answered|found|known)\b"
    r"|\b(?:not enough|insufficient|no relevant|no sufficient) (?:information|context|evidence|data)\b"
    r"|\b(?:unanswerable|no answer|not answerable)\b"
    r"|\b(?:i )?(?:cannot|can't|can not|am unable to|could not|couldn't) (?:answer|tell|determine|say)\b"
    r"|\b(?:is|are) not (?:mentioned|provided|given|specified|stated) in the (?:context|passages?|documents?|text)\b"
    r"|\bthe (?:context|passages?|documents?|text|sources?) (?:does|do) not (?:mention|say|specify|provide|state"
    r"|contain)\b"
)

#: a negation cue (searched in the lowercased sentence, curly apostrophes made straight)
NEGATION_RE = re.compile(
    r"\b(?=[nwculdfr])(?:not|no|never|none|nobody|nothing|nowhere|neither|nor|without|cannot|unable|lacks?|lacked"
    r"|lacking|den(?:y|ies|ied|ying)|fail(?:s|ed|ing)? to|refus(?:e|es|ed|ing) to|no longer)\b|(?<=\w)n't\b"
)

_SENT_SPLIT = re.compile(r"(?<=[.!?;])\s+")
_MONTHS = frozenset("january february march april may june july august september october november december".split())

_SMALL = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
}
_TENS = {w: 10 * (i + 3) for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SCALE_ABBR = {"k": 1e3, "m": 1e6, "mn": 1e6, "bn": 1e9, "b": 1e9}
# unit -> (dimension, factor to the base unit, offset); temperature in kelvin
_UNITS: dict[str, tuple[str, float, float]] = {
    "%": ("pct", 1, 0),
    "percent": ("pct", 1, 0),
    "per cent": ("pct", 1, 0),
    "mm": ("len", 1e-3, 0),
    "millimetres": ("len", 1e-3, 0),
    "millimeters": ("len", 1e-3, 0),
    "cm": ("len", 1e-2, 0),
    "centimetres": ("len", 1e-2, 0),
    "centimeters": ("len", 1e-2, 0),
    "m": ("len", 1, 0),
    "metres": ("len", 1, 0),
    "meters": ("len", 1, 0),
    "metre": ("len", 1, 0),
    "meter": ("len", 1, 0),
    "km": ("len", 1e3, 0),
    "kilometres": ("len", 1e3, 0),
    "kilometers": ("len", 1e3, 0),
    "kilometre": ("len", 1e3, 0),
    "kilometer": ("len", 1e3, 0),
    "ft": ("len", 0.3048, 0),
    "feet": ("len", 0.3048, 0),
    "foot": ("len", 0.3048, 0),
    "inches": ("len", 0.0254, 0),
    "inch": ("len", 0.0254, 0),
    "miles": ("len", 1609.344, 0),
    "mile": ("len", 1609.344, 0),
    "mg": ("mass", 1e-6, 0),
    "g": ("mass", 1e-3, 0),
    "grams": ("mass", 1e-3, 0),
    "kg": ("mass", 1, 0),
    "kilograms": ("mass", 1, 0),
    "tonnes": ("mass", 1e3, 0),
    "tons": ("mass", 907.18474, 0),
    "lb": ("mass", 0.45359237, 0),
    "lbs": ("mass", 0.45359237, 0),
    "pounds": ("mass", 0.45359237, 0),
    "degrees celsius": ("temp", 1, 273.15),
    "degrees c": ("temp", 1, 273.15),
    "°c": ("temp", 1, 273.15),
    "celsius": ("temp", 1, 273.15),
    "degrees fahrenheit": ("temp", 5 / 9, 273.15 - 32 * 5 / 9),
    "degrees f": ("temp", 5 / 9, 273.15 - 32 * 5 / 9),
    "°f": ("temp", 5 / 9, 273.15 - 32 * 5 / 9),
    "fahrenheit": ("temp", 5 / 9, 273.15 - 32 * 5 / 9),
    "kelvin": ("temp", 1, 0),
}
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUM_WORD_ALT = "|".join(sorted([*_SMALL, *_TENS], key=len, reverse=True))
_NUMBER_RE = re.compile(
    r"(?=[\d$€£.uzotfsen])(?P<cur>\$|us\$|€|£)?\s?"
    r"(?:(?P<digits>(?<![\w.,-])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.,-])\d+(?:\.\d+)?|(?<![\w.])\.\d+)"
    r"(?:st|nd|rd|th|s)?"
    rf"|\b(?P<word>(?:{_NUM_WORD_ALT})(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?)\b)"
    r"(?:\s?(?P<scale>hundred|thousand|million|billion|trillion|bn|mn|k)\b)?"
    rf"(?:\s?(?P<unit>{_UNIT_ALT})(?![a-z]))?"
)


class Number(NamedTuple):
    """A number as read (value after scale words) and, when it has a unit, its dimension and base value."""

    value: float
    dim: str | None
    base: float


def _word_value(word: str) -> float:
    parts = re.split(r"[- ]", word)
    total = 0
    for p in parts:
        total += _SMALL.get(p, _TENS.get(p, 0))
    return float(total)


@functools.lru_cache(maxsize=16_384)
def numbers(text: str) -> tuple[Number, ...]:
    """The numbers of ``text`` (see the module doc, rule 2).

    >>> [(n.value, n.dim) for n in numbers("It rose 2.5% to $1.5 million; the river is 6 km long in 1960s.")]
    [(2.5, 'pct'), (1500000.0, 'usd'), (6.0, 'len'), (1960.0, None)]
    >>> numbers("Spiders have eight legs.")[0].value, numbers("twenty-five")[0].value
    (8.0, 25.0)
    """
    out = []
    low = text.lower().replace("’", "'")
    for m in _NUMBER_RE.finditer(low):
        if m.group("digits"):
            v = float(m.group("digits").replace(",", ""))
        elif m.group("word"):
            v = _word_value(m.group("word"))
        else:
            continue
        scale = m.group("scale")
        if scale:
            v *= _SCALES.get(scale, _SCALE_ABBR.get(scale, 1.0))
        dim, base = None, v
        if m.group("cur"):
            dim = {"€": "eur", "£": "gbp"}.get(m.group("cur"), "usd")
        elif m.group("unit"):
            dim, factor, offset = _UNITS[m.group("unit")]
            base = v * factor + offset
        out.append(Number(v, dim, base))
    return tuple(out)


def _close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b)) or a == b


def _number_found(n: Number, premise: tuple[Number, ...]) -> bool:
    for q in premise:
        if n.dim is not None and n.dim == q.dim:
            if _close(n.base, q.base, 1e-2):
                return True
        elif _close(n.value, q.value, 1e-9):
            return True
    return False


@functools.lru_cache(maxsize=16_384)
def _entities(text: str) -> frozenset[str]:
    """The hypothesis's entity tokens, normalized as content tokens (rule 3)."""
    out: set[str] = set()
    for sent in _SENT_SPLIT.split(remove_citations(text)):
        for i, w in enumerate(sent.split()):
            if not any(c.isdigit() for c in w):
                word = w.lstrip("\"'(\u201c\u2018[")
                if not word[:1].isupper():
                    continue
                # a sentence's first word is an entity unless it is a function word
                if i == 0 and normalize_answer(word) in STOPWORDS:
                    continue
            out |= content_tokens(w)
    return frozenset(out)


@functools.lru_cache(maxsize=32_768)
def _ordered(line: str) -> tuple[str, ...]:
    """The content tokens of ``line`` in order (duplicates kept)."""
    toks = [t for t in normalize_answer(line).split() if t not in STOPWORDS]
    return tuple(t[:-1] if len(t) > 3 and t[-1] == "s" and t[-2] != "s" else t for t in toks)


def _pairs(toks: tuple[str, ...]) -> frozenset[frozenset[str]]:
    return frozenset(frozenset(p) for p in itertools.pairwise(toks) if p[0] != p[1])


class _Negation(NamedTuple):
    scoped: frozenset[str]  # content tokens within NEGATION_SCOPE words after a negation cue
    cue: bool


class _Premise(NamedTuple):
    tokens: frozenset[str]
    pairs: frozenset[frozenset[str]]
    sentences: tuple[str, ...]
    cue: bool  # a negation cue somewhere


#: how many words after a negation cue it reaches (rule 4)
NEGATION_SCOPE = 4


@functools.lru_cache(maxsize=32_768)
def _negation(text: str) -> _Negation:
    low = text.lower().replace("\u2019", "'")
    scoped: set[str] = set()
    cue = False
    for m in NEGATION_RE.finditer(low):
        cue = True
        after = low[m.end() :].split()[:NEGATION_SCOPE]
        scoped |= content_tokens(" ".join(after))
    return _Negation(frozenset(scoped), cue)


@functools.lru_cache(maxsize=32_768)
def _premise_line(line: str) -> _Premise:
    sents = tuple(x for x in _SENT_SPLIT.split(line) if x.strip())
    cue = NEGATION_RE.search(line.lower().replace("\u2019", "'")) is not None
    return _Premise(content_tokens(line), _pairs(_ordered(line)), sents, cue)


@functools.lru_cache(maxsize=16_384)
def _premise(text: str) -> _Premise:
    lines = [_premise_line(x) for x in text.split("\n")]
    if len(lines) == 1:
        return lines[0]
    return _Premise(
        frozenset().union(*(x.tokens for x in lines)),
        frozenset().union(*(x.pairs for x in lines)),
        tuple(x for line in lines for x in line.sentences),
        any(x.cue for x in lines),
    )


@functools.lru_cache(maxsize=16_384)
def _premise_numbers(text: str) -> tuple[Number, ...]:
    return tuple(n for x in _premise(text).sentences for n in numbers(x))


class Features(NamedTuple):
    """What the strict judge reads of one pair (:func:`features`)."""

    cov: float
    pairs: float
    entities: float  # share of the hypothesis's entity tokens found in the premise (1 without any)
    abstention: bool
    number: bool  # a hypothesis number without its equal, where the best premise sentence has one of its kind
    entity: bool  # entities below ENTITY_FLOOR
    polarity: bool  # negation differs from the best-matching premise sentence on a shared word

    @property
    def refused(self) -> bool:
        return self.abstention or self.number or self.entity or self.polarity


def _year(n: Number) -> bool:
    return n.dim is None and n.value == int(n.value) and 1000 <= n.value <= 2100


def _same_kind(n: Number, q: Number) -> bool:
    """Two numbers of one kind: the same unit dimension when both have one, else both years or both not."""
    return n.dim == q.dim if n.dim is not None and q.dim is not None else _year(n) == _year(q)


class _Hypothesis(NamedTuple):
    tokens: frozenset[str]
    pairs: frozenset[frozenset[str]]
    entities: frozenset[str]
    abstention: bool
    numbers: tuple[Number, ...]
    negation: _Negation


@functools.lru_cache(maxsize=16_384)
def _hypothesis(text: str) -> _Hypothesis:
    clean = remove_citations(text)
    return _Hypothesis(
        content_tokens(clean),
        _pairs(_ordered(clean)),
        _entities(text),
        ABSTENTION_RE.search(clean.lower().replace("\u2019", "'")) is not None,
        numbers(clean),
        _negation(clean),
    )


def features(premise: str, hypothesis: str) -> Features:
    """The strict judge's signals for one pair (the module doc).

    >>> f = features("Title: Insect\\nInsects such as ants and beetles have six legs.", "A spider has six legs.")
    >>> round(f.cov, 3), f.pairs, f.refused
    (0.667, 0.5, False)
    """
    h = _hypothesis(hypothesis)
    htoks = h.tokens
    prem = _premise(premise)
    cov = len(htoks & prem.tokens) / len(htoks) if htoks else 0.0
    pairs = len(h.pairs & prem.pairs) / len(h.pairs) if h.pairs else cov
    ent_share = len(h.entities & prem.tokens) / len(h.entities) if h.entities else 1.0
    missing: list[Number] = []
    if h.numbers:
        pnums = _premise_numbers(premise)
        missing = [n for n in h.numbers if not _number_found(n, pnums)]
    number = polarity = False
    if htoks and prem.sentences and (missing or h.negation.cue or prem.cue):  # else no rule reads the sentences
        number, polarity = _sentence_rules(h, prem.sentences, missing)
    return Features(cov, pairs, ent_share, h.abstention, number, ent_share < ENTITY_FLOOR, polarity)


def _sentence_rules(h: _Hypothesis, sentences: tuple[str, ...], missing: list[Number]) -> tuple[bool, bool]:
    """Rules 2 and 4 on the premise sentences sharing most content tokens with the claim: (number, polarity)."""
    overlap = [len(h.tokens & content_tokens(x)) for x in sentences]
    top = max(overlap)
    best = [x for x, k in zip(sentences, overlap) if k == top] if top else []
    number = any(_same_kind(n, q) for n in missing for x in best for q in numbers(x))
    polarity = bool(best) and all(_polarity_differs(h.tokens, h.negation, x) for x in best)
    return number, polarity


def _polarity_differs(htoks: frozenset[str], h: _Negation, sentence: str) -> bool:
    """One side (the claim: ``htoks``, ``h``; a premise sentence) negates a content word the other states
    without negation."""
    s = _negation(sentence)
    return bool((s.scoped & htoks) - h.scoped) or bool((h.scoped & content_tokens(sentence)) - s.scoped)


def probability(
    f: Features, b0: float = B0, b_cov: float = B_COV, b_pairs: float = B_PAIRS, b_ent: float = B_ENT
) -> float:
    """The probability of :class:`Features` ``f`` (the module doc; the constants as arguments for the fit)."""
    if f.abstention:
        return 0.0
    z = b0 + b_cov * f.cov + b_pairs * f.pairs + b_ent * f.entities
    p = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
    return p * REFUSED if f.refused else p


def explain(premise: str, hypothesis: str) -> dict[str, object]:
    """The signals, the rules that fired and the probability of one pair (for reading a decision)."""
    f = features(premise, hypothesis)
    fired = [name for name in ("abstention", "number", "entity", "polarity") if getattr(f, name)]
    return {"cov": f.cov, "pairs": f.pairs, "refused_by": fired, "probability": probability(f)}


def clear_memo() -> None:
    """Forget every memoized text."""
    for fn in (numbers, _entities, _ordered, _negation, _premise_line, _premise, _premise_numbers, _hypothesis):
        fn.cache_clear()


class StrictLexicalJudge:
    """Word overlap with refusal rules (see module doc)."""

    id = "lexical-strict:v1"
    batch_size = 1024
    uses_torch = False
    tokenizer = None

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        return [probability(features(p, h)) for p, h in zip(premises, hypotheses)]

    def __repr__(self) -> str:
        return "StrictLexicalJudge()"
