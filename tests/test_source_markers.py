"""Source text carries no citation marker (docs/datasets.md#source-text): ASQA's Wikipedia footnotes are removed
at load and counted, and no shipped passage of any dataset holds text the citation parser would read as a
citation if a reader quoted it."""

import json
from collections import Counter

import pytest

from rageval.citations import parse_answer
from rageval.data import DATASETS, LOADERS, SAMPLES, load_corpus, load_examples, sample_path
from rageval.data.asqa_corpus import corpus_doc_id
from rageval.data.fields import clean_source, make_doc

SAMPLES_DIR = sample_path("hotpotqa").parents[1]
#: the samples a dataset loader reads, by the dataset that reads them (wice is the judges' calibration set)
LOADED = {
    **{name: name for name in DATASETS if LOADERS.meta(name).sample is not None},  # ragbench ships no rows
    "2wikimultihopqa_dev120": "2wikimultihopqa",
    "alce_asqa_demos": "asqa",
    "qasper_train": "qasper",
    "qasper_intact": "qasper",
}
SCORE_SAMPLE = "score/example.jsonl"  # read by `rageval score`'s generic format


def echoed_citations(text: str) -> list:
    """What an answer quoting ``text`` verbatim would cite, in both citation modes (valid and invalid)."""
    out = []
    for mode in ("default", "alce"):
        for s in parse_answer(text, 1000, mode=mode, max_citations=None).sentences:
            out += [*s.citations, *s.invalid]
    return out


def test_every_shipped_sample_that_a_loader_reads_is_checked_here():
    files = {p.relative_to(SAMPLES_DIR).as_posix() for p in SAMPLES_DIR.rglob("*.json*")}
    checked = {SAMPLES[k] for k in LOADED} | {SCORE_SAMPLE}
    # WiCE: claims and human labels for judge calibration, no passages; RAGBench: its pinned field list, no rows
    assert files - checked == {SAMPLES["wice"], "ragbench/ragbench_fields.json"}
    assert {LOADERS.meta(n).sample for n in DATASETS} - {None} <= checked


@pytest.mark.parametrize("sample", sorted(LOADED))
def test_no_shipped_passage_carries_a_marker_a_reader_could_echo_as_a_citation(sample):
    examples = load_examples(LOADED[sample], sample_path(sample))
    docs = [d for e in examples for d in e.documents]
    if sample == "asqa":  # din0s rows carry no documents: the passages are the corpus
        docs = load_corpus("asqa", sample_path(sample))
    assert docs
    bad = [(d.id, s.id, c) for d in docs for s in d.snippets for c in echoed_citations(s.text)]
    bad += [(d.id, None, c) for d in docs for c in echoed_citations(d.text)]
    assert bad == []


def test_the_score_sample_sources_carry_no_marker():
    rows = [json.loads(line) for line in (SAMPLES_DIR / SCORE_SAMPLE).read_text().splitlines() if line.strip()]
    texts = [s["text"] for r in rows for s in r["sources"]] + [u["text"] for r in rows for u in r["units"]]
    assert texts and [t for t in texts if echoed_citations(t)] == []


def test_asqa_footnotes_are_removed_at_load_and_counted_in_meta():
    examples = load_examples("asqa", sample_path("asqa"))
    counts = Counter()
    for e in examples:
        counts.update(e.meta.get("source_markers", {}))
    # the questions' own passages (with repeats across questions): every footnote removed, nothing else changed
    assert counts == {"footnotes_removed": 93}
    assert sum(1 for e in examples if "source_markers" in e.meta) == 41
    corpus = load_corpus("asqa", sample_path("asqa"))
    # 417 passages, 62 with footnotes (90 markers); three differed from another only by their markers
    assert len(corpus) == 414
    assert all(d.id == corpus_doc_id(d.text) for d in corpus)
    gold = {g for e in examples for g in e.gold_doc_ids}
    assert gold <= {d.id for d in corpus}
    texts = " ".join(d.text for d in corpus)
    assert "[1]" not in texts and "Biohazard[a]" not in texts
    assert "[ʒan lwiz kalmɑ̃]" in texts  # IPA in brackets is text, not a footnote


def test_hotpotqa_year_ranges_in_brackets_keep_their_text_in_parentheses():
    ex = next(e for e in load_examples("hotpotqa", sample_path("hotpotqa")) if "source_markers" in e.meta)
    assert ex.meta["source_markers"] == {"brackets_rewritten": 2}
    text = " ".join(d.text for d in ex.documents)
    assert "Buena Vista Distribution Company (1953–1987)" in text


@pytest.mark.parametrize(
    "raw, footnotes, clean, counts",
    [
        ("Paris is big.[3] It is old [12][13].", True, "Paris is big. It is old.", (2 + 1, 0)),
        ("Ledger[a] (born 1979)[b][citation needed] acted.", True, "Ledger (born 1979) acted.", (3, 0)),
        ("See [note 2], [3–5] and [3, 4].", True, "See, and.", (3, 0)),
        ("French: [ʒan] and [...] stay.", True, "French: [ʒan] and [...] stay.", (0, 0)),
        ("Years [1953–1987] and [2].", False, "Years (1953–1987) and (2).", (0, 2)),
        ("line one\n[4] line two", True, "line one\n line two", (1, 0)),
    ],
)
def test_clean_source(raw, footnotes, clean, counts):
    text, c = clean_source(raw, footnotes=footnotes)
    assert text == clean
    assert (c["footnotes_removed"], c["brackets_rewritten"]) == counts
    assert echoed_citations(text) == []


def test_make_doc_cleans_each_given_sentence_and_tallies():
    tally = Counter()
    doc = make_doc("d0", ["A [1].", "B[2] is [1990–1999]."], "T", footnotes=True, tally=tally)
    assert [s.text for s in doc.snippets] == ["A.", "B is (1990–1999)."]
    assert tally == {"footnotes_removed": 2, "brackets_rewritten": 1}


def test_a_sentence_that_was_only_a_marker_is_dropped():
    doc = make_doc("d0", ["A.", "[3]", "B."], None, footnotes=True)
    assert [s.id for s in doc.snippets] == ["d0.s0", "d0.s2"]


def test_a_suite_run_notes_what_the_loader_changed(tmp_path):
    from rageval.suite.load import load_suite
    from rageval.suite.plan import build_plan

    p = tmp_path / "s.yaml"
    p.write_text(
        "name: s\ndataset: {name: asqa}\nretrieval: {method: bm25, k: 3, corpus: dataset}\n"
        "settings: [{compressor: identity}]\nreader: {backend: extractive}\njudge: {spec: lexical}\n"
    )
    notes = build_plan(load_suite(p)).notes
    (note,) = [n for n in notes if n.startswith("source text")]  # beside it: BM25 standing in for GTR top-5
    assert len(notes) == 2 and any("GTR" in n for n in notes)
    assert note.startswith("source text: 93 footnote marker(s) removed in the passages of 41 of 100 questions")
