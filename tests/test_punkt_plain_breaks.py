"""ALCE-mode sentence splitting decides a plain candidate break ("word. Next", "[2][3]. Next") without Punkt's
token machinery: the decision must be Punkt's own on every context, and the sentences nltk's.

Categories: every abbreviation and every collocation of the parameters (where the shortcut must step aside),
sentence starters, one-letter words (initials), numbers, markers, other punctuation and whitespace, letters past
ASCII; generated contexts of all of these; whole texts (the shipped samples, generated texts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rageval.text import segment


@pytest.fixture(scope="module")
def punkt():
    """A fresh Punkt tokenizer (its decision unwrapped) and the shortcut around it."""
    tok, _ = segment.punkt_tokenizer()
    return tok.text_contains_sentbreak, segment._plain_breaks(tok), tok._params


def _words(params) -> list[str]:
    abbrevs = sorted(a for a in params.abbrev_types if a.isascii())
    firsts = sorted({a for a, _ in params.collocations if a.isascii()})
    seconds = sorted({b for _, b in params.collocations if b.isascii()})
    starters = sorted(s for s in params.sent_starters if s.isascii())
    plain = ["france", "it", "paris", "the", "a", "i", "jr", "dr", "mr", "no", "co", "vs", "st", "caf\u00e9", "x"]
    return abbrevs + firsts + seconds + starters + plain


def _cases(word: str) -> list[str]:
    return [word, word.capitalize(), word.upper()]


def test_every_abbreviation_collocation_and_starter_is_punkts_call(punkt):
    decide, quick, params = punkt
    words = _words(params)
    starters = sorted(s for s in params.sent_starters if s.isascii())
    nexts = [*starters[:12], *sorted({b for _, b in params.collocations})[:6], "it", "the", "he", "paris"]
    n = 0
    for word in words:  # every word, each next word lowercased and capitalized
        for w in _cases(word):
            for nxt in nexts:
                for c in (nxt, nxt.capitalize()):
                    context = f"{w}. {c}"
                    assert quick(context) == decide(context), context
                    n += 1
    for nxt in {*words, *nexts}:  # markers before every word
        for c in _cases(nxt):
            for context in (f"[1]. {c}", f"[2][3]. {c}"):
                assert quick(context) == decide(context), context
    for a, b in params.collocations:  # every collocation, where the shortcut must step aside
        for w in _cases(a):
            for c in _cases(b):
                context = f"{w}. {c}"
                assert quick(context) == decide(context), context
                n += 1
    assert n > 10_000


_token = st.one_of(
    st.sampled_from(["France", "paris", "It", "the", "A", "b", "Dr", "jr", "No", "etc", "U.S", "e.g", "Inc"]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=9),
    st.from_regex(r"(\[[0-9]{1,2}\]){1,3}", fullmatch=True),
    st.from_regex(r"-?[0-9]{1,4}(,[0-9]{3})?", fullmatch=True),
    st.text(alphabet="a\u00e9\u00df.-'()[]\"!?,;:", min_size=1, max_size=5),
)
_space = st.sampled_from([" ", "  ", "\n", "\t", "\n\n", "\u00a0", " \n "])
_end = st.sampled_from([".", "..", "?", "!", ".)", '."', ".]", "..."])


@settings(max_examples=2000, deadline=None)
@given(_token, _end, _space, _token)
def test_generated_contexts_are_punkts_call(punkt, prev, end, space, nxt):
    decide, quick, _ = punkt
    context = f"{prev}{end}{space}{nxt}"
    assert quick(context) == decide(context)


def _shipped_texts() -> list[str]:
    root = Path(segment.__file__).resolve().parents[1] / "data"
    texts: list[str] = []

    def walk(x):
        if isinstance(x, str):
            if "." in x:
                texts.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for f in sorted(root.rglob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                continue
    return texts


def test_the_shipped_samples_split_as_nltk_splits_them():
    tok, _ = segment.punkt_tokenizer()  # Punkt as nltk.sent_tokenize builds it, no shortcut, no memo
    segment.clear_memo()
    texts = _shipped_texts()
    assert len(texts) > 5_000
    for text in texts:
        assert segment.nltk_sent_tokenize(text) == tok.tokenize(text), text[:200]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_token, _end, _space), min_size=1, max_size=8))
def test_generated_texts_split_as_nltk_splits_them(parts):
    tok, _ = segment.punkt_tokenizer()
    text = "".join(f"{w}{e}{s}" for w, e, s in parts)
    assert segment.nltk_sent_tokenize(text) == tok.tokenize(text)


def test_a_plain_context_is_decided_without_punkts_machinery(monkeypatch):
    tok, _ = segment.punkt_tokenizer()
    calls: list[str] = []
    real = tok.text_contains_sentbreak
    tok.text_contains_sentbreak = lambda text: calls.append(text) or real(text)
    quick = segment._plain_breaks(tok)
    assert quick("France. It") and quick("[2][3]. Season") and quick("Paris. the")
    assert calls == []
    assert quick("Dr. Smith") is real("Dr. Smith") and calls == ["Dr. Smith"]  # an abbreviation: Punkt's call
    assert quick("a. Smith") == real("a. Smith") and calls[-1] == "a. Smith"  # one letter: an initial, Punkt's
