"""rageval.registry: one registry, one "did you mean", and every family built on them."""

import dataclasses
import subprocess
import sys
from dataclasses import dataclass

import pytest

from rageval.registry import Registry, UnknownNameError, closest, did_you_mean, unknown_name


def test_did_you_mean_hints():
    assert did_you_mean("submodluar", ["mmr", "submodular"]) == " Did you mean 'submodular'?"
    assert did_you_mean("xyz", ["mmr", "submodular"]) == ""
    assert did_you_mean("x", []) == ""
    assert did_you_mean("HotpotQ", ["hotpotqa", "hotpot"]) == " Did you mean 'hotpotqa'?"  # case ignored
    assert did_you_mean(12, ["12a"]) == " Did you mean '12a'?"  # non-strings are compared as text
    # the cutoff decides how close is close enough
    assert did_you_mean("abcde", ["abcxyz"]) == ""  # difflib ratio 6/11
    assert did_you_mean("abcde", ["abcxyz"], cutoff=0.5) == " Did you mean 'abcxyz'?"
    assert closest("lexcal", ("lexical", "minilm")) == "lexical" and closest("q", ["lexical"]) is None


def test_unknown_name_message_and_attributes():
    e = unknown_name("compressor", "idenity", ["identity", "naive"])
    assert isinstance(e, ValueError) and isinstance(e, UnknownNameError)
    assert str(e) == "Unknown compressor 'idenity'. Did you mean 'identity'?"
    assert (e.kind, e.name, e.known) == ("compressor", "idenity", ("identity", "naive"))
    e = unknown_name("setting", "zzz", ["identity", "naive"], where="contrasts[0].a")
    assert str(e) == "Unknown setting 'zzz' in contrasts[0].a. Known: identity, naive."
    assert str(unknown_name("reader", "x", [])) == "Unknown reader 'x'. Known: (none)."
    # suggestions may come from more spellings than the known list shows
    e = unknown_name("dataset", "hotpt", ["hotpotqa"], spellings=["hotpotqa", "hotpot"])
    assert str(e) == "Unknown dataset 'hotpt'. Did you mean 'hotpot'?"

    class Mine(UnknownNameError):
        pass

    assert type(unknown_name("x", "y", [], error=Mine)) is Mine


@dataclass(frozen=True)
class Colour:
    hex: str = ""


@dataclass(frozen=True)
class Needs:
    needs_model: bool


def test_registry_register_get_names_meta_contains_iter_len():
    r = Registry("colour", meta=Colour)
    r.register("red", "json:dumps", Colour(hex="#f00"))
    r.register("green", len, aliases=("vert",))
    r.register("blue", str)
    assert r.names() == ["red", "green", "blue"] and list(r) == ["red", "green", "blue"] and len(r) == 3
    assert "red" in r and "vert" in r and "pink" not in r and ["red"] not in r and None not in r
    import json

    assert r.get("red") is json.dumps and r.get("green") is len and r.get("vert") is len
    assert r.meta("red") == Colour("#f00") and r.meta("vert") == Colour() and r.meta("blue") == Colour()
    assert r.aliases("vert") == r.aliases("green") == ("vert",) and r.aliases("red") == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.meta("red").hex = "changed"  # type: ignore[misc]
    assert r.canonical("vert") == "green" and r.spellings() == ["red", "green", "blue", "vert"]
    with pytest.raises(UnknownNameError, match=r"^Unknown colour 'gren'\. Did you mean 'green'\?$"):
        r.get("gren")
    with pytest.raises(UnknownNameError, match=r"Unknown colour 'verd'\. Did you mean 'vert'\?"):
        r.meta("verd")
    with pytest.raises(UnknownNameError, match="Known: red, green, blue"):
        r.get(42)


def test_registration_errors():
    r = Registry("thing")
    r.register("a", len, aliases=("b",))
    with pytest.raises(ValueError, match="'a' is already registered"):
        r.register("a", str)
    with pytest.raises(ValueError, match="'b' is already registered"):
        r.register("c", str, aliases=("b",))
    with pytest.raises(ValueError, match="'module:attr'"):
        r.register("d", "no_colon")
    with pytest.raises(ValueError, match="'module:attr'"):
        r.register("d", "a:b:c")
    with pytest.raises(TypeError, match="non-empty strings"):
        r.register("", len)
    assert r.names() == ["a"]


def test_metadata_is_typed():
    """Metadata is one object of the registry's type: a wrong type or a misspelt field fails where it is
    registered; a family whose metadata has required fields needs it given."""
    r = Registry("plugin", meta=Needs)
    with pytest.raises(TypeError, match="metadata must be a Needs, got Colour"):
        r.register("a", len, Colour())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs_model"):
        r.register("b", len)  # Needs() lacks its required field
    with pytest.raises(TypeError, match="unexpected keyword"):
        r.register("c", len, Needs(needs_modle=True))  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        r.register("d", len, needs_model=True)  # type: ignore[call-arg]  # free-form **meta is gone
    assert r.names() == []


class Base:
    pass


class Sub(Base):
    pass


def test_a_target_is_checked_against_the_base_class():
    """A class registry takes subclasses of its base only: checked at registration for an object, at the
    first get for a "module:attr" target; a registry without a base takes callables only."""
    r = Registry("thing", base=Base)
    r.register("sub", Sub)
    with pytest.raises(TypeError, match=r"'str'.*not a subclass of Base"):
        r.register("str", str)
    with pytest.raises(TypeError, match="not a subclass of Base"):
        r.register("inst", Sub())  # an instance is not a class
    r.register("late", "decimal:Decimal")
    with pytest.raises(TypeError, match=r"thing 'late'.*Decimal.*not a subclass of Base"):
        r.get("late")
    assert r.get("sub") is Sub
    f = Registry("function")
    with pytest.raises(TypeError, match="must be callable, got int"):
        f.register("n", 3)
    f.register("pi", "math:pi")
    with pytest.raises(TypeError, match="must be callable, got float"):
        f.get("pi")


def test_every_family_checks_its_kind():
    from rageval.compressors import REGISTRY, BaseCompressor

    from rageval.readers import READERS, Reader, ReaderMeta

    assert REGISTRY.base is BaseCompressor and READERS.base is Reader and READERS.meta_type is ReaderMeta
    for name in REGISTRY.names():
        assert issubclass(REGISTRY.get(name), BaseCompressor)
    for name in ("extractive", "saved"):
        assert issubclass(READERS.get(name), Reader)
    with pytest.raises(TypeError, match="not a subclass of BaseCompressor"):
        REGISTRY.register("not-a-compressor", dict)
    assert "not-a-compressor" not in REGISTRY


def test_registering_never_imports_the_target():
    r = Registry("plugin", meta=Needs, error=type("PluginError", (UnknownNameError,), {}))
    r.register("ghost", "rageval_no_such_module_xyz.inner:Thing", Needs(needs_model=True))
    assert "ghost" in r and r.names() == ["ghost"] and r.meta("ghost").needs_model
    assert "rageval_no_such_module_xyz" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        r.get("ghost")  # only now is the module looked for
    with pytest.raises(UnknownNameError) as err:
        r.get("ghots")
    assert type(err.value).__name__ == "PluginError"


def test_a_target_is_imported_once_on_first_get():
    code = (
        "import sys\n"
        "from rageval.registry import Registry\n"
        "r = Registry('x'); r.register('d', 'decimal:Decimal')\n"
        "before = 'decimal' in sys.modules\n"
        "a = r.get('d'); b = r.get('d')\n"
        "print(before, a is b, a.__name__, 'decimal' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "Decimal", "True"]


def test_families_list_names_without_importing_their_modules():
    code = (
        "import sys\n"
        "import rageval.compressors as c, rageval.readers as r, rageval.data as d, rageval.retrieval as t\n"
        "c.names(); list(r.READERS); d.DATASETS; t.METHODS\n"
        "mods = ['rageval.compressors.submodular', 'rageval.compressors.abstractive', 'rageval.readers.hf',\n"
        "        'rageval.readers.openai_compat', 'torch', 'transformers']\n"
        "print([m for m in mods if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_family_is_one_registry_with_the_same_hints():
    from rageval.compressors import REGISTRY, CompressorConfigError, get, names

    from rageval.data import DATASETS, LOADERS, load_examples
    from rageval.judges import BUILTIN, JUDGES, get_judge
    from rageval.readers import READERS, get_reader, needs_model
    from rageval.retrieval import METHODS, RETRIEVERS, retrieve

    for reg in (REGISTRY, READERS, JUDGES, LOADERS, RETRIEVERS):
        assert isinstance(reg, Registry)
    assert names() == sorted(REGISTRY.names())
    with pytest.raises(CompressorConfigError, match=r"^Unknown compressor 'rerankk'\. Did you mean 'rerank'\?$"):
        get("rerankk")
    with pytest.raises(CompressorConfigError, match=r"Did you mean 'window'\?"):
        get("focused", windw=2)
    with pytest.raises(CompressorConfigError, match=r"choose one of .*Did you mean 'leading'\?"):
        get("rerank", partial="leadin")

    assert READERS.names() == ["extractive", "saved", "transformers", "llamacpp", "openai"]
    assert needs_model("openai") and not needs_model("saved")
    with pytest.raises(UnknownNameError, match=r"^Unknown reader 'sved'\. Did you mean 'saved'\?$"):
        get_reader("sved")

    assert BUILTIN == (
        "lexical",
        "lexical-strict",
        "minilm",
        "replay:<path>",
        "embedding:<path>",
        "nli:<path>",
        "seq2seq:<path>",
        "openai[:<model>@<base_url>]",
        "llm:<model>",
    )
    assert type(get_judge("lexical").judge).__name__ == "LexicalJudge"

    assert DATASETS == ("asqa", "qasper", "hotpotqa", "2wikimultihopqa", "musique", "ragbench")
    assert LOADERS.canonical("2wiki") == "2wikimultihopqa" and LOADERS.meta("asqa").split == "dev"
    with pytest.raises(UnknownNameError, match=r"^Unknown dataset 'musiqe'\. Did you mean 'musique'\?$"):
        load_examples("musiqe", "x.json")

    assert METHODS == ("given", "bm25", "dense")
    ex = load_examples("hotpotqa", __import__("rageval.data").data.sample_path("hotpotqa"), limit=1)[0]
    with pytest.raises(UnknownNameError, match=r"^Unknown retrieval method 'givn'\. Did you mean 'given'\?$"):
        retrieve(ex, method="givn")
