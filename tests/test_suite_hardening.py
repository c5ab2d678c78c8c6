"""Suite files that must fail at load with a message naming the place and the fix, never later and never silently.

Categories: unsafe YAML (duplicate keys, alias bombs, recursion, depth, non-string keys, non-finite numbers,
encodings, size); strict types (no bool or string where a number is meant, no NaN/inf, no blank string);
everything a run checks about its configuration (dataset, tokenizer, reader, template, judge, contrasts);
and property-based tests over mutated suites and raw bytes: load_suite returns a Suite or raises SuiteError,
nothing else.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.suite.config import Suite, SuiteError
from rageval.suite.load import load_suite
from rageval.suite.yamlsafe import MAX_BYTES, MAX_NODES, YamlError, load_yaml_text

BASE = """\
name: t
dataset: {name: hotpotqa, limit: 3}
settings:
  - {compressor: identity}
  - {compressor: naive, budgets: [50, 0.5]}
"""


def write(tmp_path: Path, text: str | bytes, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def load_error(tmp_path: Path, text: str | bytes) -> str:
    with pytest.raises(SuiteError) as err:
        load_suite(write(tmp_path, text))
    return str(err.value)


def _laughs(levels: int, width: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


# -- unsafe YAML: one case per kind, each names the line -----------------------------------------------

YAML_CASES = [
    (BASE + "name: u\n", "line 6, column 1: duplicate key 'name' (first given at line 1)"),
    (BASE.replace("limit: 3}", "limit: 3, limit: 4}"), "line 2, column 37: duplicate key 'limit'"),
    (BASE + "judge:\n  spec: lexical\n  spec: minilm\n", "line 8, column 3: duplicate key 'spec'"),
    (BASE + _laughs(9), "expand to more than"),
    (BASE + _laughs(5, width=10), "expand to more than"),
    (BASE + "x: &x [*x]\n", "recursive anchor"),
    (BASE + "x: " + "[" * 80 + "]" * 80 + "\n", "nesting deeper than"),
    (BASE + "on: 1\n", 'mapping key on is read by YAML as bool True, not a name; quote it: "on":'),
    (BASE + "1: x\n", "mapping key 1 is read by YAML as int 1"),
    (BASE + "? [a, b]\n: 1\n", "a sequence cannot be a mapping key"),
    (BASE.replace("[50, 0.5]", "[.nan]"), "line 5, column 35: '.nan' is not a finite number"),
    (BASE + "judge: {threshold: .inf}\n", "'.inf' is not a finite number"),
    (BASE + "seed: -.Inf\n", "'-.Inf' is not a finite number"),
    (BASE + "x: !!python/object/apply:os.system [echo]\n", "could not determine a constructor"),
    (BASE + "---\nname: u\n", "malformed YAML"),
]


@pytest.mark.parametrize("text, message", YAML_CASES, ids=[f"yaml{i}" for i in range(len(YAML_CASES))])
def test_unsafe_yaml_is_refused_with_the_place(tmp_path, text, message):
    msg = load_error(tmp_path, text)
    assert message in msg and "s.yaml" in msg, msg


def test_merge_keys_may_still_be_overridden():
    data = load_yaml_text("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n")
    assert data["d"] == {"x": 3, "y": 2}


def test_an_alias_bomb_is_refused_before_it_grows():
    # 10^7 strings once expanded; the loader measures the composed graph and stops at MAX_NODES
    with pytest.raises(YamlError, match=f"more than {MAX_NODES}"):
        load_yaml_text(_laughs(7, width=10))


ENCODING_CASES = [
    ("latin-1", BASE.replace("name: t", "name: caf\u00e9").encode("latin-1"), "line 1: not UTF-8 text (byte 0xe9"),
    ("utf-16", BASE.encode("utf-16"), "not UTF-8 text (byte 0xff at offset 0)"),
    ("nul", BASE.encode() + b"x: \x00\n", "contains a NUL character"),
    ("binary", bytes(range(256)), "not UTF-8"),
    ("too large", b"a: " + b"x" * (MAX_BYTES + 10) + b"\n", "larger than 2 MiB"),
]


@pytest.mark.parametrize("raw, message", [c[1:] for c in ENCODING_CASES], ids=[c[0] for c in ENCODING_CASES])
def test_encodings_and_sizes(tmp_path, raw, message):
    msg = load_error(tmp_path, raw)
    assert message in msg, msg


def test_utf8_with_bom_is_read(tmp_path):
    assert load_suite(write(tmp_path, "\ufeff" + BASE)).name == "t"


def test_a_directory_and_an_include_with_bad_bytes(tmp_path):
    (tmp_path / "d.yaml").mkdir()
    assert "not found" in load_error(tmp_path, "include: d.yaml\n" + BASE)  # a folder is not a suite file
    write(tmp_path, b"name: \xff\n", "base.yaml")
    msg = load_error(tmp_path, "include: base.yaml\n")
    assert "base.yaml: line 1: not UTF-8" in msg


# -- strict types -----------------------------------------------------------------------------------------

TYPE_CASES = [
    (BASE.replace("[50, 0.5]", "[true]"), "settings[1].budgets: budget True is not a number"),
    (BASE.replace("[50, 0.5]", "[yes]"), "budget True is not a number"),
    (BASE.replace("[50, 0.5]", '["50"]'), "budget '50' is not a number"),
    (BASE.replace("[50, 0.5]", "[]"), "budgets must list at least one budget"),
    (BASE.replace("[50, 0.5]", "50"), "budgets must list at least one budget"),
    (BASE.replace("limit: 3", "limit: true"), "dataset.limit: Input should be a valid integer"),
    (BASE.replace("limit: 3", "limit: '3'"), "dataset.limit: Input should be a valid integer"),
    (BASE.replace("limit: 3", "limit: 3.0"), "dataset.limit: Input should be a valid integer"),
    (BASE.replace("limit: 3", "limit: 0"), "dataset.limit: Input should be greater than or equal to 1"),
    (BASE + "seed: true\n", "seed: Input should be a valid integer"),
    (BASE + "retrieval: {method: bm25, k: false}\n", "retrieval.k: Input should be a valid integer"),
    (BASE + "reader: {batch_size: true}\n", "reader.batch_size: Input should be a valid integer"),
    (BASE + "judge: {threshold: true}\n", "judge.threshold: Input should be a valid number"),
    (BASE + "judge: {threshold: '0.5'}\n", "judge.threshold: Input should be a valid number"),
    (BASE + "citations: {max_citations: true}\n", "citations.max_citations: Input should be a valid integer"),
    (BASE.replace("name: t", "name: ''"), "name: empty string"),
    (BASE.replace("name: t", "name: '   '"), "name: empty string"),
    (BASE + "tokenizer: ''\n", "tokenizer: empty string"),
    (BASE + "judge: {spec: ''}\n", "judge.spec: empty string"),
    (BASE + "reader: {backend: ''}\n", "reader.backend: empty string"),
    (BASE + "output_dir: ''\n", "output_dir: empty string"),
    (BASE.replace("limit: 3", "limit: 3, path: ''"), "dataset.path: empty string"),
    (BASE.replace("{compressor: identity}", "{compressor: identity, name: ''}"), "settings[0].name: empty string"),
    (BASE.replace("name: t", "name: [t]"), "name: Input should be a valid string"),
]


@pytest.mark.parametrize("text, message", TYPE_CASES, ids=[f"type{i}" for i in range(len(TYPE_CASES))])
def test_strict_types(tmp_path, text, message):
    msg = load_error(tmp_path, text)
    assert message in msg, msg


def test_a_nan_override_is_refused():
    with pytest.raises(SuiteError, match="judge.threshold: Input should be a finite number"):
        load_suite(Path(__file__).parents[1] / "suites" / "demo.yaml", **{"judge.threshold": math.nan})


# -- everything a run checks, at load -----------------------------------------------------------------

CONFIG_CASES = [
    # dataset
    (BASE.replace("name: hotpotqa", "name: hotpoqa"), "dataset.name: unknown dataset 'hotpoqa'. Did you mean"),
    (BASE.replace("name: hotpotqa", "name: 2wiki").replace("limit: 3", "limit: 3, sample: 2wiki_x"), "2wiki_x"),
    (BASE.replace("limit: 3", "sample: qasper_intct"), "dataset.sample: no shipped sample 'qasper_intct'"),
    (BASE.replace("limit: 3", "path: no/such.json"), "dataset.path: 'no/such.json' not found"),
    (BASE.replace("limit: 3", "path: ."), "dataset.path: '.' is a directory"),
    (BASE.replace("limit: 3", "split: dev"), "dataset.split: applies to dataset.hub_id only"),
    (BASE.replace("limit: 3", "hub_config: x"), "dataset.hub_config: applies to dataset.hub_id only"),
    # tokenizer
    (BASE + "tokenizer: regx\n", "tokenizer: 'regx' is neither a built-in tokenizer nor a local folder"),
    # reader
    (BASE + "reader: {params: {max_sentence: 2}}\n", "reader.params.max_sentence: unknown option"),
    (BASE + "reader: {params: {max_sentences: 0}}\n", "max_sentences must be a positive integer, got 0"),
    (BASE + "reader: {params: {max_sentences: true}}\n", "max_sentences must be a positive integer, got True"),
    (BASE + "reader: {params: {template: {}}}\n", "reader.params.template: give the prompt template as reader"),
    (
        BASE + "reader: {template: {user: '{question} {foo}'}}\n",
        "reader.template: PromptTemplate.user uses the placeholder {foo}",
    ),
    (BASE + "reader: {template: {usr: x}}\n", "reader.template: Unknown prompt template field(s) 'usr'"),
    (BASE + "reader: {template: {user: '{question}'}}\n", "must contain {units}"),
    (BASE + "reader: {template: {show_titles: 1}}\n", "show_titles must be true or false"),
    (BASE + "reader: {backend: saved}\n", "reader 'saved' needs 'path'"),
    (BASE + "reader: {backend: saved, params: {path: /no/such.jsonl}}\n", "answers file not found"),
    (BASE + "reader: {backend: openai, params: {model: m}}\n", "reader 'openai' needs 'base_url'"),
    (
        BASE + "reader: {backend: openai, params: {model: m, base_url: 'ftp://x'}}\n",
        "base_url must start with http:// or https://",
    ),
    (
        BASE + "reader: {backend: openai, params: {model: m, base_url: 'http://127.0.0.1:9', timeout: 0}}\n",
        "timeout",
    ),
    (BASE + "reader: {backend: transformers, params: {model: m, max_new_tokens: -1}}\n", "max_new_tokens must be"),
    (BASE + "reader: {backend: transformers, params: {model: m, dtype: float8}}\n", "unknown dtype 'float8'"),
    (BASE + "reader: {backend: transformers, params: {}}\n", "reader 'transformers' needs 'model'"),
    (
        BASE.replace("{compressor: identity}", "{compressor: identity, reader: {params: {max_sentences: 0}}}"),
        "settings[0].reader.params: extractive reader: max_sentences must be a positive integer, got 0",
    ),
    (
        BASE.replace("{compressor: identity}", "{compressor: identity, reader: {template: {user: '{units}'}}}"),
        "settings[0].reader.template: PromptTemplate.user must contain {question}",
    ),
    # judge
    (BASE + "judge: {params: {foo: 1}}\n", "judge.params.foo: unknown judge option. Accepted: batch_size"),
    (BASE + "judge: {params: {batch_sise: 1}}\n", "Did you mean 'batch_size'?"),
    (BASE + "judge: {params: {dtype: float8}}\n", "judge.params.dtype: must be one of float32"),
    (BASE + "judge: {params: {batch_size: 0}}\n", "judge.params.batch_size: must be a positive integer"),
    (BASE + "judge: {params: {max_length: true}}\n", "judge.params.max_length: must be a positive integer"),
    (BASE + "judge: {params: {cache_dir: /tmp}}\n", "judge.params.cache_dir: unknown judge option"),
    (BASE + "judge: {spec: lexcal}\n", "judge.spec: 'lexcal' is neither a judge name nor a local folder"),
    (BASE + "judge: {spec: 'nil:/m'}\n", "unknown judge kind 'nil' in 'nil:/m'. Did you mean 'nli'?"),
    (BASE + "judge: {spec: 'nli:'}\n", "judge.spec: 'nli:' names no model"),
    (BASE + "judge: {spec: replay}\n", "judge.spec: 'replay' needs a path after a colon"),
    (BASE + "judge: {spec: 'replay:/no/such.jsonl'}\n", "replay judge file not found"),
    # diagnostics and contrasts
    (BASE + "diagnostics: []\n", "diagnostics: the list is empty"),
    (BASE + "contrasts: [{vs: nonexistent}]\n", "Unknown setting 'nonexistent' in contrasts[0].vs"),
    (BASE + "contrasts: [{vs: identity, metrics: [answer_f2]}]\n", "Did you mean 'answer_f1'?"),
]


@pytest.mark.parametrize("text, message", CONFIG_CASES, ids=[f"config{i}" for i in range(len(CONFIG_CASES))])
def test_configuration_errors_fail_at_load(tmp_path, text, message):
    msg = load_error(tmp_path, text)
    assert message in msg, msg


def test_a_broken_replay_file_fails_at_load_naming_its_line(tmp_path):
    replay = write(tmp_path, '{"premise": "a", "hypothesis": "b", "probability": 0.5}\nnot json\n', "r.jsonl")
    msg = load_error(tmp_path, BASE + f"judge: {{spec: 'replay:{replay}'}}\n")
    assert "judge.spec:" in msg and "r.jsonl" in msg and "2" in msg


def test_a_dataset_alias_runs_on_its_own_sample(tmp_path):
    """`dataset.name: hotpot` (an alias of hotpotqa) once validated and then crashed looking for sample 'hotpot'."""
    from rageval.suite.plan import load_inputs

    suite = load_suite(write(tmp_path, BASE.replace("name: hotpotqa", "name: hotpot")))
    examples, _ = load_inputs(suite)
    assert len(examples) == 3


def test_good_suites_still_load(tmp_path):
    ok = [
        BASE,
        BASE + "reader: {backend: openai, params: {model: m, base_url: 'http://127.0.0.1:9/v1'}}\n",
        BASE + "judge: {spec: lexical, params: {batch_size: 4, dtype: bf16, max_length: null}}\n",
        BASE + "reader: {template: {instruction: 'Answer.', show_titles: false}}\n",
        BASE + "contrasts: [{vs: identity, metrics: [answer_f1]}]\n",
        BASE.replace("limit: 3", "limit: 3, sample: hotpotqa"),
    ]
    for text in ok:
        assert isinstance(load_suite(write(tmp_path, text)), Suite)


# -- property-based: any mutation of a valid suite, any bytes -------------------------------------------

_BASE_DATA = {
    "name": "t",
    "dataset": {"name": "hotpotqa", "limit": 3},
    "retrieval": {"method": "bm25", "k": 5},
    "tokenizer": "regex",
    "settings": [{"compressor": "identity"}, {"compressor": "naive", "budgets": [50, 0.5]}],
    "reader": {"backend": "extractive", "params": {}, "batch_size": 8},
    "judge": {"spec": "lexical", "threshold": 0.5, "params": {}},
    "citations": {"mode": "default", "max_citations": 3},
    "attribution": {"k": 10},
    "diagnostics": "auto",
    "contrasts": [{"vs": "identity"}],
    "seed": 0,
}
_PATHS = [
    ("name",),
    ("dataset", "name"),
    ("dataset", "limit"),
    ("dataset", "sample"),
    ("dataset", "split"),
    ("retrieval",),
    ("retrieval", "k"),
    ("retrieval", "method"),
    ("tokenizer",),
    ("settings",),
    ("settings", 0),
    ("settings", 1, "budgets"),
    ("settings", 1, "budgets", 0),
    ("settings", 1, "params"),
    ("settings", 1, "compressor"),
    ("reader", "backend"),
    ("reader", "params"),
    ("reader", "template"),
    ("reader", "batch_size"),
    ("judge", "spec"),
    ("judge", "threshold"),
    ("judge", "params"),
    ("citations", "max_citations"),
    ("attribution", "k"),
    ("attribution", "candidates"),
    ("diagnostics",),
    ("contrasts",),
    ("contrasts", 0),
    ("seed",),
    ("unknown_key",),
]
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 10**6)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["identity", "lexical", "replay:", "nli:x", "regex", "auto", "answer_f1", "@0.5"])
)
_values = st.recursive(
    _scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=10), c, max_size=3), max_leaves=6
)


def _set(data, path, value):
    node = data
    for p in path[:-1]:
        node = node[p]
    if isinstance(node, list) and path[-1] >= len(node):
        return
    node[path[-1]] = value


def _check_loaded(suite: Suite) -> None:
    for s in suite.settings:
        for b in s.budgets:
            assert b is None or (not isinstance(b, bool) and isinstance(b, (int, float)) and math.isfinite(b) and b > 0)
    assert not isinstance(suite.seed, bool) and isinstance(suite.seed, int)
    assert math.isfinite(suite.judge.threshold)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(st.tuples(st.sampled_from(_PATHS), _values), min_size=1, max_size=3))
def test_any_mutated_suite_loads_or_fails_with_a_suite_error(tmp_path, mutations):
    import copy

    data = copy.deepcopy(_BASE_DATA)
    for path, value in mutations:
        try:
            _set(data, path, value)
        except (KeyError, TypeError, IndexError):
            continue  # the parent was replaced by a scalar in an earlier mutation
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump(data, allow_unicode=True))
    try:
        suite = load_suite(p)
    except SuiteError as err:
        assert str(err).startswith(str(p)), str(err)
        return
    _check_loaded(suite)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_bytes_load_or_fail_with_a_suite_error(tmp_path, raw):
    p = tmp_path / "b.yaml"
    p.write_bytes(raw)
    try:
        _check_loaded(load_suite(p))
    except SuiteError:
        pass


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    keys=st.lists(st.sampled_from(["name", "seed", "tokenizer", "output_dir", "x"]), min_size=2, max_size=5),
)
def test_any_repeated_top_level_key_is_refused(tmp_path, keys):
    text = BASE + "".join(f"{k}: v\n" for k in keys)
    repeated = [k for i, k in enumerate(["name", *keys]) if k in ["name", *keys][:i]]
    p = write(tmp_path, text)
    if repeated:
        with pytest.raises(SuiteError, match=f"duplicate key {repeated[0]!r}"):
            load_suite(p)
