"""Offline sentence segmentation (a passage into source snippets: :func:`rageval.data.passage_to_snippets`).

The default splitter is **nupunkt** (MIT): a Punkt model whose trained parameters
ship inside the package, so it needs no download (``nltk.sent_tokenize`` needs the
``punkt_tab`` data, which cannot be fetched offline).  On a tricky 9-sentence
paragraph it found exactly 9 sentences, as did pysbd and syntok, and it was the
fastest (pysbd and syntok were 10–50 times slower); untrained nltk Punkt found 20
and blingfire 11 (docs/design.md#decision-sentence-splitting).  It keeps abbreviations
(``Dr.``, ``U.S.``, ``p.m.``), decimals and closing quotes inside sentences.

ALCE-compatible scoring splits with nltk's own Punkt algorithm instead
(:func:`nltk_sent_tokenize`), fed with nupunkt's parameters unless a real
``punkt_tab`` is found under ``$NLTK_DATA``.

>>> split_sentences('Dr. Smith paid $3.50 for it. He said "Go now." Then he left.')
['Dr. Smith paid $3.50 for it.', 'He said "Go now."', 'Then he left.']
"""

from __future__ import annotations

import functools

__all__ = ["split_sentences", "nltk_sent_tokenize", "punkt_tokenizer", "clear_memo", "snippet_id"]


@functools.lru_cache(maxsize=1)
def _nupunkt():
    import nupunkt

    return nupunkt


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (nupunkt), stripped, empty ones dropped."""
    if not isinstance(text, str):
        raise TypeError(f"split_sentences expects a string, got {type(text).__name__}")
    if not text.strip():
        return []
    return [s.strip() for s in _nupunkt().sent_tokenize(text) if s.strip()]


#: the sentence-break contexts whose decision :func:`nltk_sent_tokenize` keeps (a bounded LRU)
BREAK_MEMO_SIZE = 16_384


@functools.lru_cache(maxsize=1)
def _nltk_punkt():
    """:func:`punkt_tokenizer` with its decision of each candidate break memoized (see :func:`nltk_sent_tokenize`)."""
    tok, source = punkt_tokenizer()
    # an instance attribute: Punkt's own loop (``_slices_from_text``) calls ``self.text_contains_sentbreak``
    tok.text_contains_sentbreak = functools.lru_cache(maxsize=BREAK_MEMO_SIZE)(tok.text_contains_sentbreak)
    return tok, source


def punkt_tokenizer():
    """``(tokenizer, source)``: a new nltk Punkt tokenizer, as nltk ships it, with the english punkt_tab if
    installed, else nupunkt's parameters (the same algorithm and output); ``source`` names the parameters."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer, PunktTokenizer

    if _punkt_tab_installed():
        return PunktTokenizer("english"), "nltk punkt_tab (english)"
    src = _nupunkt().load_default_model()._params
    params = PunktParameters()
    params.abbrev_types = set(src.abbrev_types)
    params.collocations = set(src.collocations)
    params.sent_starters = set(src.sent_starters)
    for word, ctx in dict(src.ortho_context).items():
        params.ortho_context[word] = int(ctx)
    return PunktSentenceTokenizer(params), "nltk Punkt algorithm with nupunkt's parameters"


def _punkt_tab_installed() -> bool:
    """True when nltk finds the english ``punkt_tab`` (``$NLTK_DATA`` and nltk's own data folders)."""
    import nltk.data

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        return False
    return True


def nltk_sent_tokenize(text: str) -> list[str]:
    """``nltk.sent_tokenize`` as ALCE calls it, working offline (see module doc).

    The same sentences as nltk's, sooner: Punkt decides each candidate break (a token ending in ``.``, ``?`` or
    ``!`` and the token after it) from that short context alone, with its fixed parameters
    (``text_contains_sentbreak``), and the decision of each context is remembered (at most
    :data:`BREAK_MEMO_SIZE`): "France. It" is decided once for every answer that holds it.
    """
    tok, _ = _nltk_punkt()
    return tok.tokenize(text)


def clear_memo() -> None:
    """Forget the remembered break decisions of :func:`nltk_sent_tokenize` (benchmarks time it from cold)."""
    if _nltk_punkt.cache_info().currsize:
        _nltk_punkt()[0].text_contains_sentbreak.cache_clear()


def nltk_punkt_source() -> str:
    """Which Punkt parameters :func:`nltk_sent_tokenize` uses."""
    return _nltk_punkt()[1]


def snippet_id(doc_index: int | str, sent_index: int) -> str:
    """The stable id of sentence ``sent_index`` of document ``doc_index``: ``d3.s2``.

    >>> snippet_id(3, 2)
    'd3.s2'
    """
    prefix = f"d{doc_index}" if isinstance(doc_index, int) else str(doc_index)
    return f"{prefix}.s{sent_index}"
