"""Grounded premises are written like emitted ones (docs/design.md#premises).

A cited unit's grounded premise is its declared snippets grouped by document, in
source order, each document's title once and its snippets joined exactly as a unit
joins them; several citations join their per-unit premises with "\\n" as emitted
premises do.  So a unit that is the join of its declared snippets has a grounded
premise byte-identical to its emitted one, and the emitted - grounded gap is 0 with
any judge, including one that says yes only to the exact emitted premise string.

The expected premises are written here from the definition, never through rageval's
own premise code.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rageval.compressors import get as get_compressor
from rageval.compressors.base import group_unit

from rageval.citations import parse_answer
from rageval.diagnostics.attribution import attribution_scores_batch, re_attributability
from rageval.types import SourceSnippet, join_texts

#: the compressors whose units are joins of their declared snippets (not ECR: one member shown, all declared;
#: not token pruning: its text is cut)
JOINS = ("identity", "naive", "rerank", "extractive", "focused", "mmr", "submodular")

PAIRED = [
    ("emitted_precision", "grounded_precision"),
    ("emitted_recall", "grounded_recall"),
    ("emitted_precision_excl_abstain", "grounded_precision_excl_abstain"),
    ("emitted_recall_excl_abstain", "grounded_recall_excl_abstain"),
]


def emitted_premise(unit: dict) -> str:
    t = unit.get("title")
    return f"Title: {t}\n{unit['text']}" if t is not None else unit["text"]


def expected_premises(answers, units_per_q, max_citations=3) -> dict[str, set[str]]:
    """hypothesis -> every premise the emitted gate can ask about it: each ordered sub-list of its citations."""
    out: dict[str, set[str]] = {}
    for answer, units in zip(answers, units_per_q):
        for s in parse_answer(answer, len(units), max_citations=max_citations).sentences:
            for r in range(1, len(s.citations) + 1):
                for sub in itertools.combinations(s.citations, r):
                    out.setdefault(s.text, set()).add("\n".join(emitted_premise(units[c - 1]) for c in sub))
    return out


class ExactJudge:
    """Supports a pair only when the premise is exactly one of the expected strings for its hypothesis."""

    id = "exact-string-test"

    def __init__(self, expected: dict[str, set[str]]):
        self.expected = expected
        self.asked: list[tuple[str, str]] = []

    def predict(self, premises, hypotheses):
        self.asked.extend(zip(premises, hypotheses))
        return [1.0 if p in self.expected.get(h, ()) else 0.0 for p, h in zip(premises, hypotheses)]


class YesJudge:
    """Supports everything; records every distinct pair it is asked."""

    id = "yes-test"

    def __init__(self):
        self.asked: list[tuple[str, str]] = []

    def predict(self, premises, hypotheses):
        self.asked.extend(zip(premises, hypotheses))
        return [1.0] * len(premises)


def src(sid, text, title=None, doc_id=None):
    d = {"id": sid, "text": text, "title": title}
    if doc_id is not None:
        d["doc_id"] = doc_id
    return d


# ---------------------------------------------------------------- hand cases


def test_identity_unit_grounded_premise_is_byte_identical_to_emitted():
    units = [{"text": "Paris is the capital. It has museums.", "source_ids": ["d0.s0", "d0.s1"], "title": "Paris"}]
    sources = [src("d0.s0", "Paris is the capital.", "Paris"), src("d0.s1", "It has museums.", "Paris")]
    judge = YesJudge()
    row = attribution_scores_batch(["Paris has museums [1]."], [units], [sources], judge=judge)[0]
    # emitted, grounded and all three verification modes ask one and the same pair
    assert set(judge.asked) == {("Title: Paris\nParis is the capital. It has museums.", "Paris has museums.")}
    assert row["judge_inputs"] == 1
    exact = ExactJudge({"Paris has museums.": {"Title: Paris\nParis is the capital. It has museums."}})
    row = attribution_scores_batch(["Paris has museums [1]."], [units], [sources], judge=exact)[0]
    assert (row["grounded_precision"], row["grounded_recall"]) == (1.0, 1.0)
    assert (row["emitted_minus_grounded_precision"], row["emitted_minus_grounded_recall"]) == (0.0, 0.0)
    assert (row["unsupported_declared_span"], row["unsupported_recovered_source"]) == (0.0, 0.0)


def test_claim_citing_several_units_joins_per_unit_premises_like_emitted():
    units = [
        {"text": "A zero. A one.", "source_ids": ["a.s0", "a.s1"], "title": "A"},
        {"text": "B zero.", "source_ids": ["b.s0"], "title": "B"},
    ]
    sources = [src("a.s0", "A zero.", "A"), src("a.s1", "A one.", "A"), src("b.s0", "B zero.", "B")]
    judge = YesJudge()
    attribution_scores_batch(["Claim [1][2]."], [units], [sources], judge=judge, parts=("grounded",))
    # grounded joint premise, then each citation alone
    assert ("Title: A\nA zero. A one.\nTitle: B\nB zero.", "Claim.") in judge.asked
    assert {p for p, _ in judge.asked} == {
        "Title: A\nA zero. A one.\nTitle: B\nB zero.",
        "Title: A\nA zero. A one.",
        "Title: B\nB zero.",
    }
    exact = ExactJudge(expected_premises(["Claim [1][2]."], [units]))
    row = attribution_scores_batch(["Claim [1][2]."], [units], [sources], judge=exact)[0]
    assert row["emitted_recall"] == 1.0
    for e, g in PAIRED:
        assert row[e] == row[g], (e, g)


def test_declared_snippets_grouped_by_document_in_source_order_title_once():
    # declared out of source order and across two documents: written in source order, one block per document
    units = [{"text": "not a join", "source_ids": ["d1.s0", "d0.s1", "d0.s0"], "title": "A"}]
    sources = [src("d0.s0", "a0.", "A"), src("d0.s1", "a1.", "A"), src("d1.s0", "b0.", "B")]
    judge = YesJudge()
    attribution_scores_batch(["X [1]."], [units], [sources], judge=judge, parts=("grounded", "verification"))
    assert {p for p, _ in judge.asked} == {"Title: A\nnot a join", "Title: A\na0. a1.\nTitle: B\nb0."}


def test_grounded_pool_keeps_repeated_source_ids_verification_keeps_each_once():
    # the paper de-duplicates only for recovered-source verification: the gate's joint premise is the two
    # cited units' premises concatenated (a1 twice, byte-identical to the emitted joint premise); the
    # verification modes' premise keeps a1 once (a later citation keeps only its new snippets)
    units = [
        {"text": "a0. a1.", "source_ids": ["d0.s0", "d0.s1"], "title": "A"},
        {"text": "a1. a2.", "source_ids": ["d0.s1", "d0.s2"], "title": "A"},
    ]
    sources = [src("d0.s0", "a0.", "A"), src("d0.s1", "a1.", "A"), src("d0.s2", "a2.", "A")]
    judge = YesJudge()
    attribution_scores_batch(["X [1][2]."], [units], [sources], judge=judge, parts=("grounded",))
    assert {p for p, _ in judge.asked} == {
        "Title: A\na0. a1.\nTitle: A\na1. a2.",
        "Title: A\na0. a1.",
        "Title: A\na1. a2.",
    }
    judge = YesJudge()
    attribution_scores_batch(["X [1][2]."], [units], [sources], judge=judge, parts=("verification",))
    assert {p for p, _ in judge.asked} == {"Title: A\na0. a1.\nTitle: A\na1. a2.", "Title: A\na0. a1.\nTitle: A\na2."}


def test_snippets_are_joined_exactly_as_a_unit_joins_them():
    snips = [
        SourceSnippet("d0.s0", "  Alpha one. ", doc_id="d0", position=0),
        SourceSnippet("d0.s1", "Alpha two.\n", doc_id="d0", position=1),
    ]
    unit = group_unit(snips)
    assert unit.text == join_texts([s.text for s in snips]) == "Alpha one. Alpha two."
    sources = [{"id": s.id, "text": s.text} for s in snips]  # no title: the bare joined text
    judge = YesJudge()
    row = attribution_scores_batch(["Alpha [1]."], [[unit.to_dict()]], [sources], judge=judge)[0]
    assert {p for p, _ in judge.asked} == {"Alpha one. Alpha two."}
    assert row["judge_inputs"] == 1


def test_document_is_doc_id_when_given_else_the_id_up_to_its_last_dot():
    units = [{"text": "x. y.", "source_ids": ["x", "y"], "title": "T"}]
    judge = YesJudge()
    with_doc = [src("x", "x.", "T", doc_id="D"), src("y", "y.", "T", doc_id="D")]
    attribution_scores_batch(["Q [1]."], [units], [with_doc], judge=judge, parts=("grounded",))
    assert ("Title: T\nx. y.", "Q.") in judge.asked
    judge = YesJudge()
    no_doc = [src("x", "x.", "T"), src("y", "y.", "T")]  # no dot in the ids: each snippet its own document
    attribution_scores_batch(["Q [1]."], [units], [no_doc], judge=judge, parts=("grounded",))
    assert {p for p, _ in judge.asked} == {"Title: T\nx.\nTitle: T\ny."}


def test_recovered_two_snippet_candidate_of_one_document_is_written_as_that_document():
    units = [{"text": "Alpha beta gamma delta.", "source_ids": None}]
    sources = [src("d0.s0", "Alpha beta.", "A"), src("d0.s1", "Gamma delta.", "A")]
    joined = "Title: A\nAlpha beta. Gamma delta."
    exact = ExactJudge({"Alpha beta gamma delta.": {joined}, "Claim.": {joined}})
    r = re_attributability([""], [units], [sources], judge=exact, multi_snippet=True)
    assert r["re_attributability"] == 1.0
    row = attribution_scores_batch(["Claim [1]."], [units], [sources], judge=exact, multi_snippet=True)[0]
    assert row["citations_recovered"] == 1 and row["grounded_recall"] == 1.0
    # without the multi-snippet rule no single snippet is the exact premise: not recovered
    assert re_attributability([""], [units], [sources], judge=exact)["re_attributability"] == 0.0


def test_ecr_style_unit_one_member_shown_all_declared_has_a_gap_with_the_exact_judge():
    # the control: a unit that is not the join of its declared snippets is told apart by the exact judge
    units = [{"text": "Alpha one.", "source_ids": ["d0.s0", "d0.s1"], "title": "A"}]
    sources = [src("d0.s0", "Alpha one.", "A"), src("d0.s1", "Alpha uno.", "A")]
    exact = ExactJudge(expected_premises(["Alpha [1]."], [units]))
    row = attribution_scores_batch(["Alpha [1]."], [units], [sources], judge=exact)[0]
    assert row["emitted_recall"] == 1.0 and row["grounded_recall"] == 0.0
    assert (row["emitted_minus_grounded_precision"], row["emitted_minus_grounded_recall"]) == (1.0, 1.0)


# ---------------------------------------------------------------- the property


_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "river", "city", "capital", "paris", "nile", "mars"])
_SENTENCE = st.builds(
    lambda pre, words, post: pre + " ".join(words).capitalize() + "." + post,
    st.sampled_from(["", " ", "  "]),
    st.lists(_WORDS, min_size=1, max_size=8),
    st.sampled_from(["", " ", "\n"]),
)


@st.composite
def _question(draw):
    n_docs = draw(st.integers(1, 4))
    snippets = []
    for d in range(n_docs):
        title = draw(st.one_of(st.none(), _WORDS.map(str.title)))
        for i, text in enumerate(draw(st.lists(_SENTENCE, min_size=1, max_size=4))):
            snippets.append(SourceSnippet(f"d{d}.s{i}", text, doc_id=f"d{d}", title=title, position=i, doc_rank=d))
    budget = draw(st.one_of(st.none(), st.integers(4, 60)))
    return snippets, budget


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), question=_question())
def test_units_that_join_their_declared_snippets_have_gap_exactly_zero_with_the_exact_judge(data, question):
    snippets, budget = question
    by_id = {s.id: s for s in snippets}
    for name in JOINS:
        ctx = get_compressor(name).compress("which capital city river", snippets, budget, tokenizer="regex")
        units = [u.to_dict() for u in ctx.units]
        if not units:
            continue
        for u in ctx.units:  # the premise of the property: each unit is the join of its declared snippets
            declared = [by_id[i] for i in u.source_ids]
            assert len({s.doc_id for s in declared}) == 1, name
            assert u.text == join_texts(s.text for s in declared), name
            assert u.title == declared[0].title, name
        n = len(units)
        cites = data.draw(
            st.lists(st.lists(st.integers(1, n), min_size=1, max_size=3, unique=True), min_size=1, max_size=3),
            label=name,
        )
        answer = " ".join(f"Claim {w} " + "".join(f"[{c}]" for c in cs) + "." for w, cs in zip("xyz", cites))
        sources = [{"id": s.id, "text": s.text, "title": s.title, "doc_id": s.doc_id} for s in snippets]
        exact = ExactJudge(expected_premises([answer], [units]))
        row = attribution_scores_batch([answer], [units], [sources], judge=exact)[0]
        assert row["emitted_recall"] == 1.0, name  # the judge said yes to every emitted joint premise
        for e, g in PAIRED:
            assert row[e] == row[g], (name, e, row[e], row[g])
        assert row["emitted_minus_grounded_precision"] == 0.0 and row["emitted_minus_grounded_recall"] == 0.0
        # verification reads the same premises: declared-span = summary-checked, recovered = 1 - grounded recall
        assert row["unsupported_declared_span"] == row["unsupported_summary_checked"] == 0.0
        assert row["unsupported_recovered_source"] == 1 - row["grounded_recall"]
