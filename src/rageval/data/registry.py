"""The dataset registry: each dataset's builder, aliases, shipped sample and default hub split.

>>> LOADERS.canonical("2wiki"), LOADERS.meta("asqa").split
('2wikimultihopqa', 'dev')
>>> sample_path("musique").name
'musique_train100.json'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rageval.registry import Registry, did_you_mean, unknown_name

__all__ = ["DATASETS", "DatasetMeta", "LOADERS", "SAMPLES", "canonical_dataset", "sample_path"]


@dataclass(frozen=True)
class DatasetMeta:
    """A dataset loader's registry metadata."""

    sample: str | None  # the shipped sample, a path under ``samples/`` (None: none is shipped)
    sample_aliases: tuple[str, ...] = ()  # other names :func:`sample_path` accepts for it
    split: str = "validation"  # the default hub split


#: The dataset loaders: dataset name -> ``"module:builder"``, ``builder(record, dataset)`` returning
#: an :class:`~rageval.data.schema.Example` or a list of them (imported on first use; ``record`` is a
#: :class:`~rageval.data.fields.LocatedRecord`), with its :class:`DatasetMeta`; ``aliases``: other
#: names :func:`~rageval.data.load.load_examples` accepts.  Adding a dataset is one entry here plus
#: its module's builder.
LOADERS: Registry[Callable[..., Any], DatasetMeta] = Registry("dataset", meta=DatasetMeta, cutoff=0.5)
LOADERS.register(
    "asqa",
    "rageval.data.asqa:build",
    DatasetMeta(sample="asqa/asqa_dev_first100.jsonl", split="dev"),
    aliases=("alce", "alce_asqa"),
)
LOADERS.register(
    "qasper", "rageval.data.qasper:build", DatasetMeta(sample="qasper/qasper_dev_v0.1_hf_dummy_EDITED.json")
)
LOADERS.register(
    "hotpotqa",
    "rageval.data.multihop:build",
    DatasetMeta(sample="hotpotqa/hotpotqa_train100_distractor.json", sample_aliases=("hotpot_qa",)),
    aliases=("hotpot_qa", "hotpot"),
)
LOADERS.register(
    "2wikimultihopqa",
    "rageval.data.multihop:build",
    DatasetMeta(sample="2wikimultihopqa/2wiki_dev2.json", sample_aliases=("2wiki",)),
    aliases=("2wiki", "2wikimqa"),
)
LOADERS.register("musique", "rageval.data.musique:build", DatasetMeta(sample="musique/musique_train100.json"))
# RAGBench (rungalileo/ragbench; subsets covidqa, expertqa, ... as the hub config): no public copy of its rows
# could be reached without the hub, so none is shipped (samples/PROVENANCE.md); its field list is pinned in
# samples/ragbench/ragbench_fields.json
LOADERS.register("ragbench", "rageval.data.ragbench:build", DatasetMeta(sample=None, split="test"))

#: The dataset names (aliases such as ``2wiki`` are accepted too).
DATASETS = tuple(LOADERS.names())

#: Shipped samples (see ``samples/PROVENANCE.md``): name -> path under ``samples/``; each
#: dataset's own sample (from :data:`LOADERS`) and the other files.
SAMPLES = {
    **{name: sample for name in DATASETS if (sample := LOADERS.meta(name).sample) is not None},
    "2wikimultihopqa_dev120": "2wikimultihopqa/2wiki_dev120.json",
    "alce_asqa_demos": "asqa/alce_asqa_demos.json",
    "qasper_train": "qasper/qasper_train_v0.1_hf_dummy_EDITED.json",
    "qasper_intact": "qasper/qasper_handwritten_intact.json",
    "wice": "human/wice_claim_dev.jsonl",
}
_SAMPLE_ALIASES = {a: name for name in DATASETS for a in LOADERS.meta(name).sample_aliases}


def sample_path(name: str) -> Path:
    """Path of a shipped sample file (read through ``importlib.resources``).

    >>> sample_path("musique").name
    'musique_train100.json'
    """
    key = _SAMPLE_ALIASES.get(name, name)
    if key not in SAMPLES:
        raise KeyError(
            f"No shipped sample {name!r}; available: {sorted(SAMPLES)}.{did_you_mean(name, SAMPLES, cutoff=0.5)}"
        )
    res = resources.files("rageval.data").joinpath("samples", *SAMPLES[key].split("/"))
    return Path(str(res))


def canonical_dataset(name: str) -> str:
    """The registered name of dataset ``name`` (an alias, any case, surrounding spaces ignored).

    >>> canonical_dataset(" Hotpot "), canonical_dataset("2WIKI")
    ('hotpotqa', '2wikimultihopqa')
    """
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in LOADERS:
        raise unknown_name("dataset", name, DATASETS, spellings=LOADERS.spellings(), cutoff=0.5)
    return LOADERS.canonical(key)
