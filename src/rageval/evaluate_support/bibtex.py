"""BibTeX for every diagnostic: the works its definition comes from, then rageval itself with its version.

Each evaluate module's ``citation`` (``MetricInfo``) and the "Citation" section
of its card are :func:`citation` of its name, so a paper can cite exactly the
work a number comes from.  Where the definitions come from is in
docs/design.md (section "References"); the two papers whose bibliographic
details rageval does not know are cited by their titles, nothing invented.

>>> "@inproceedings{gao-etal-2023-enabling" in citation("str_em")
True
>>> citation("answer_f1").count("@inproceedings"), "version = {" in citation("answer_f1")
(2, True)
"""

from __future__ import annotations

from rageval import __version__

__all__ = ["HOMEPAGE", "WORKS", "SOURCES", "rageval_entry", "citation"]

#: rageval's home page (also the evaluate modules' ``homepage``)
HOMEPAGE = "https://github.com/rageval/rageval"

#: key -> BibTeX entry of a work a definition comes from
WORKS: dict[str, str] = {
    "alce": """\
@inproceedings{gao-etal-2023-enabling,
  title = {Enabling Large Language Models to Generate Text with Citations},
  author = {Gao, Tianyu and Yen, Howard and Yu, Jiatong and Chen, Danqi},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  year = {2023},
  pages = {6465--6488},
  publisher = {Association for Computational Linguistics},
  url = {https://aclanthology.org/2023.emnlp-main.398},
}""",
    "hotpotqa": """\
@inproceedings{yang-etal-2018-hotpotqa,
  title = {{HotpotQA}: A Dataset for Diverse, Explainable Multi-hop Question Answering},
  author = {Yang, Zhilin and Qi, Peng and Zhang, Saizheng and Bengio, Yoshua and Cohen, William and Salakhutdinov, Ruslan and Manning, Christopher D.},
  booktitle = {Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing},
  year = {2018},
  pages = {2369--2380},
  publisher = {Association for Computational Linguistics},
  url = {https://aclanthology.org/D18-1259},
}""",
    "squad": """\
@inproceedings{rajpurkar-etal-2016-squad,
  title = {{SQuAD}: 100,000+ Questions for Machine Comprehension of Text},
  author = {Rajpurkar, Pranav and Zhang, Jian and Lopyrev, Konstantin and Liang, Percy},
  booktitle = {Proceedings of the 2016 Conference on Empirical Methods in Natural Language Processing},
  year = {2016},
  pages = {2383--2392},
  publisher = {Association for Computational Linguistics},
  url = {https://aclanthology.org/D16-1264},
}""",
    "qasper": """\
@inproceedings{dasigi-etal-2021-dataset,
  title = {A Dataset of Information-Seeking Questions and Answers Anchored in Research Papers},
  author = {Dasigi, Pradeep and Lo, Kyle and Beltagy, Iz and Cohan, Arman and Smith, Noah A. and Gardner, Matt},
  booktitle = {Proceedings of the 2021 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  year = {2021},
  pages = {4599--4610},
  publisher = {Association for Computational Linguistics},
  url = {https://aclanthology.org/2021.naacl-main.365},
}""",
    "attribution_compression": """\
@misc{attribution-compression-frontier,
  title = {The Attribution-Compression Frontier in Retrieval-Augmented Generation},
  note = {Cited by title},
}""",
    "ragchecker": """\
@misc{ru-etal-2024-ragchecker,
  title = {{RAGChecker}: A Fine-grained Framework for Diagnosing Retrieval-Augmented Generation},
  author = {Ru, Dongyu and others},
  year = {2024},
  url = {https://arxiv.org/abs/2408.08067},
}""",
    "rouge": """\
@inproceedings{lin-2004-rouge,
  title = {{ROUGE}: A Package for Automatic Evaluation of Summaries},
  author = {Lin, Chin-Yew},
  booktitle = {Text Summarization Branches Out},
  year = {2004},
  pages = {74--81},
  publisher = {Association for Computational Linguistics},
  url = {https://aclanthology.org/W04-1013},
}""",
    "packing": """\
@misc{what-survives-into-context,
  title = {What Survives Into Context},
  note = {Cited by title},
}""",
}

#: diagnostic -> the works its definition comes from (docs/design.md, "References")
SOURCES: dict[str, tuple[str, ...]] = {
    "answer_in_context": ("packing",),
    "str_em": ("alce",),
    "qampari_f1": ("alce",),
    "rouge_lsum": ("alce", "rouge"),
    "claims_recall": ("alce",),
    "answer_f1": ("hotpotqa", "squad"),
    "retrieval_recall": ("packing",),
    "gold_coverage": ("packing",),
    "emitted_precision": ("alce", "attribution_compression"),
    "emitted_recall": ("alce", "attribution_compression"),
    "grounded_precision": ("attribution_compression", "alce"),
    "grounded_recall": ("attribution_compression", "alce"),
    "re_attributability": ("attribution_compression",),
    "verification": ("attribution_compression",),
    "evidence_f1": ("qasper", "attribution_compression"),
    "claim_support": ("attribution_compression", "ragchecker"),
    "compression": ("attribution_compression",),
}


def rageval_entry(version: str = __version__) -> str:
    """rageval's own BibTeX entry, naming ``version``."""
    return f"""\
@software{{rageval,
  title = {{rageval: metrics for retrieval-augmented generation under context compression}},
  author = {{{{The rageval contributors}}}},
  version = {{{version}}},
  year = {{2026}},
  url = {{{HOMEPAGE}}},
  license = {{Apache-2.0}},
}}"""


def citation(name: str, version: str = __version__) -> str:
    """BibTeX for diagnostic ``name``: its sources (docs/design.md, "References"), then rageval at ``version``.

    A diagnostic without a declared source (a plugin) cites rageval only.
    """
    entries = [WORKS[k] for k in SOURCES.get(name, ())]
    return "\n\n".join([*entries, rageval_entry(version)]) + "\n"
