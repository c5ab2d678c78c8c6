import subprocess
import sys

import pytest

from rageval.data import passage_to_snippets
from rageval.text import get_tokenizer, normalize_answer, remove_citations, split_sentences
from rageval.text.segment import nltk_sent_tokenize


@pytest.mark.parametrize(
    "raw, norm",
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  A   cat, an apple; the end. ", "cat apple end"),
        ("Théâtre", "théâtre"),
        ("", ""),
        ("the", ""),
        ("U.S.A.", "usa"),
    ],
)
def test_normalize_answer_matches_squad_rules(raw, norm):
    assert normalize_answer(raw) == norm


def test_remove_citations_strips_every_marker_form():
    assert remove_citations("A [1][2]. B [1, 2]. C [1-3]. D [1–3].") == "A. B. C. D."


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Dr. Smith arrived. He left.", ["Dr. Smith arrived.", "He left."]),
        ("It cost $3.50 in total. Then more.", ["It cost $3.50 in total.", "Then more."]),
        ('He said "Go now." Then he left.', ['He said "Go now."', "Then he left."]),
        ("The U.S. Army won. It was 5 p.m. on Jan. 3.", ["The U.S. Army won.", "It was 5 p.m. on Jan. 3."]),
        ("Paris is in France [1]. Lyon too [2].", ["Paris is in France [1].", "Lyon too [2]."]),
        ("", []),
        ("   ", []),
    ],
)
def test_split_sentences_tricky_cases(text, expected):
    assert split_sentences(text) == expected


def test_citation_after_full_stop_is_split_off_by_segmenter_and_reattached_by_parser():
    # The splitter alone puts "[1]" at the start of the next sentence; parse_answer moves it back.
    assert split_sentences("Paris is in France. [1] Lyon is too.")[-1].startswith("[1]")


def test_nltk_sent_tokenize_works_offline():
    assert nltk_sent_tokenize("Dr. Smith went home. He slept.") == ["Dr. Smith went home.", "He slept."]


PUNKT_WORDS = (
    "Dr. Mr. Mrs. St. U.S. U.K. p.m. a.m. Jan. Feb. No. vs. etc. e.g. i.e. Inc. Co. J. K. Rowling ... ?! ! ? "
    "3.5 1889. 12. 2nd. the a He She It They Paris France [1] [2]. [3][4]. \" ' ( ) , ; : - -- "
    'river. city, Capital MUSEUM tower? bridge! painter.. novel... planet." island.) (mountain. KING. Queen.'
).split()


def _punkt_texts(seed: int, n: int) -> list[str]:
    """Random texts of abbreviations, initials, numbers, ellipses, quotes, brackets and capitalised words: every
    kind of context Punkt's first and second passes decide differently; a small vocabulary, so contexts recur."""
    import random

    rng = random.Random(seed)
    seps = [" ", " ", " ", "  ", "\n", "\t", ""]
    return ["".join(rng.choice(PUNKT_WORDS) + rng.choice(seps) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def test_nltk_sent_tokenize_remembers_break_decisions_and_splits_as_plain_punkt():
    """The memoized break decisions give plain Punkt's sentences on every text, the decisions shared across texts
    (a warm memo, then a cold one), and on the shipped ALCE outputs."""
    import json
    from pathlib import Path

    from rageval.text.segment import _nltk_punkt, clear_memo, punkt_tokenizer

    plain, _ = punkt_tokenizer()
    fixtures = Path(__file__).parent / "fixtures" / "alce_parity"
    shipped = [
        it["output"]
        for f in ("alce_asqa.json", "alce_eli5.json")
        for it in json.loads((fixtures / f).read_text())["data"]
    ]
    texts = _punkt_texts(0, 3000) + shipped
    clear_memo()
    assert [nltk_sent_tokenize(t) for t in texts] == [plain.tokenize(t) for t in texts]
    info = _nltk_punkt()[0].text_contains_sentbreak.cache_info()
    assert info.hits > info.misses > 0  # contexts recur: most decisions were remembered ones
    assert [nltk_sent_tokenize(t) for t in reversed(texts)] == [plain.tokenize(t) for t in reversed(texts)]
    clear_memo()
    assert _nltk_punkt()[0].text_contains_sentbreak.cache_info().currsize == 0
    assert nltk_sent_tokenize("Dr. Smith went home. He slept.") == ["Dr. Smith went home.", "He slept."]


def test_punkt_and_porter_load_without_nltks_package_init_and_nltk_imports_whole_afterwards():
    """nltk's __init__ imports scikit-learn, scipy and pandas: ALCE-mode splitting and ROUGE's stems load
    Punkt's and Porter's own modules only, leave no nltk module behind, and a later `import nltk` is the whole
    package, splitting and stemming alike."""
    script = (
        "import sys\n"
        "from rageval.text import ids\n"
        "from rageval.text.segment import nltk_sent_tokenize\n"
        "text = 'Dr. Smith went home at 5 p.m. on Jan. 3. He slept. Then, he left [1].'\n"
        "ours = nltk_sent_tokenize(text)\n"
        "stems = [ids._porter().stem(w) for w in ('running', 'generously', 'cats')]\n"
        "print(sorted(m for m in ('sklearn', 'scipy', 'pandas') if m in sys.modules))\n"
        "print([m for m in sys.modules if m == 'nltk' or m.startswith('nltk.')])\n"
        "import nltk\n"
        "from nltk.stem.porter import PorterStemmer\n"
        "from nltk.tokenize.punkt import PunktSentenceTokenizer\n"
        "from rageval.text.segment import _nltk_punkt\n"
        "theirs = PunktSentenceTokenizer(_nltk_punkt()[0]._params).tokenize(text)\n"
        "same = stems == [PorterStemmer().stem(w) for w in ('running', 'generously', 'cats')]\n"
        "print(hasattr(nltk, 'sent_tokenize'), ours == theirs, len(ours), same, stems)\n"
    )
    res = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.splitlines() == ["[]", "[]", "True True 3 True ['run', 'gener', 'cat']"]


def test_split_sentences_rejects_non_text():
    with pytest.raises(TypeError, match="string"):
        split_sentences(None)


def test_passage_to_snippets_ids_titles_and_presegmented_input():
    snips = passage_to_snippets("One sentence. Two sentences.", doc_id="d3", title="T", doc_rank=2)
    assert [s.id for s in snips] == ["d3.s0", "d3.s1"]
    assert {s.title for s in snips} == {"T"} and {s.doc_rank for s in snips} == {2}
    pre = passage_to_snippets(["A b.", "", "C d."], doc_id="d0")
    assert [(s.id, s.text) for s in pre] == [("d0.s0", "A b."), ("d0.s2", "C d.")]


def test_regex_tokenizer_counts_words_and_punctuation():
    tok = get_tokenizer()
    assert tok.name == "regex"
    assert tok.count("Hello, world!") == 4
    assert tok.count("") == 0
    assert get_tokenizer("whitespace").count("Hello, world!") == 2


def test_get_tokenizer_errors():
    with pytest.raises(ValueError, match="empty"):
        get_tokenizer(" ")
    with pytest.raises(TypeError):
        get_tokenizer(3)


def test_hf_tokenizer_by_local_path(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(["paris is the capital of france"] * 3, trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(tmp_path)
    hf = get_tokenizer(str(tmp_path))
    assert hf.count("paris is the capital") == 4
    assert hf.count_many(["paris", "of france"]) == [1, 2]
