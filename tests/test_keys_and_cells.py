"""Keys and cells (issue 41, category 6): where the environment's key goes, list cells, token counts.

* Unnamed (the default), ``$OPENAI_API_KEY`` goes to OpenAI's own API
  (``https://api.openai.com``) and nowhere else — not to a local vLLM or llama.cpp
  server; a configuration that names ``api_key_env`` sends that variable's key to its
  endpoints (over https or to loopback, else refused unless ``allow_insecure_key``).
* A RAGAS CSV cell of unquoted comma-separated items in brackets is an error naming
  the line and the column, never one context; ``[citation needed]`` stays one context.
* A token count too large for a float (``10**400``) is a ValueError naming the field.
"""

from __future__ import annotations

import json
import math
import string

import pytest
from fault_http import FaultServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rageval.data.formats.layout import ScoreInputError
from rageval.data.formats.ragas import read_ragas
from rageval.http import LazyClient
from rageval.http.urls import DEFAULT_KEY, key_env_for, origin_of
from rageval.judges.openai_compat import OpenAIJudge
from rageval.readers.base import ReaderRequest
from rageval.readers.openai_compat import OpenAIReader
from rageval.token_counts import MAX_TOKEN_COUNT, achieved_ratio, check_count
from rageval.types import Unit

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
KEY = "sk-env-key-do-not-send"


@pytest.fixture
def env_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("LOCAL_KEY", "sk-local")


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.close()


# -- keys -----------------------------------------------------------------------------------------------------

_HOSTS = st.sampled_from(
    ["127.0.0.1", "localhost", "[::1]", "10.0.0.1", "api.openai.com", "API.OpenAI.com", "api.openai.com.evil.example",
     "openai.com", "gw.example", "api.openai.co"]
)  # fmt: skip
_URLS = st.builds(
    lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
    st.sampled_from(["http", "https", "HTTPS"]),
    _HOSTS,
    st.sampled_from(["", ":443", ":8000", ":80"]),
    st.sampled_from(["", "/v1", "/openai/v1"]),
)


@FAST
@given(url=_URLS, named=st.sampled_from([None, "OPENAI_API_KEY", "LOCAL_KEY"]))
def test_the_default_key_goes_to_openai_only_and_a_named_one_where_it_is_configured(url, named):
    default = key_env_for(url, DEFAULT_KEY)
    assert default == ("OPENAI_API_KEY" if origin_of(url) == ("https", "api.openai.com", 443) else None)
    assert key_env_for(url, named) == named  # named (or null): exactly what the configuration says


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/v1", "http://localhost:9/v1", "https://gw.example/v1"])
def test_lazy_clients_read_the_default_key_for_openai_only(env_key, url):
    lazy = LazyClient(url, api_key_env=DEFAULT_KEY, timeout=1.0)
    assert lazy.get()._api_key is None
    lazy.close()
    named = LazyClient(url, api_key_env="OPENAI_API_KEY", timeout=1.0)
    assert named.get()._api_key == KEY
    named.close()
    openai = LazyClient("https://api.openai.com/v1", api_key_env=DEFAULT_KEY, timeout=1.0)
    assert openai.get()._api_key == KEY
    openai.close()


def _auth(server):
    return [r["headers"].get("authorization") for r in server.requests]


def test_a_loopback_server_gets_no_key_by_default_from_the_reader_and_the_judge(env_key, server):
    req = ReaderRequest("q", "Where?", (Unit("Paris is in France."),))
    reader = OpenAIReader("m", base_url=server.url, max_retries=0, timeout=5)
    assert reader.generate([req])[0].status == "ok"
    reader.close()
    judge = OpenAIJudge("j", base_url=server.url, max_retries=0, timeout=5, concurrency=1)
    judge.predict(["p"], ["h"])
    judge.close()
    assert _auth(server) == [None, None]
    named = OpenAIReader("m", base_url=server.url, max_retries=0, timeout=5, api_key_env="LOCAL_KEY")
    named.generate([req])
    named.close()
    named_judge = OpenAIJudge("j", base_url=server.url, max_retries=0, timeout=5, api_key_env="OPENAI_API_KEY")
    named_judge.predict(["p"], ["h"])
    named_judge.close()
    assert _auth(server)[2:] == ["Bearer sk-local", f"Bearer {KEY}"]


def test_an_unnamed_key_on_plain_http_elsewhere_is_not_refused_as_it_is_not_sent(env_key):
    """The old refusal guarded a key that is no longer sent; a named one is still refused."""
    OpenAIReader("m", base_url="http://10.0.0.1:8000/v1").close()
    OpenAIJudge("m", base_url="http://10.0.0.1:8000/v1").close()
    for build in (
        lambda: OpenAIReader("m", base_url="http://10.0.0.1:8000/v1", api_key_env="OPENAI_API_KEY"),
        lambda: OpenAIJudge("m", base_url="http://10.0.0.1:8000/v1", api_key_env="OPENAI_API_KEY"),
    ):
        with pytest.raises(ValueError, match="would be sent unencrypted"):
            build()


def test_a_suite_without_api_key_env_sends_no_key_to_its_local_server(env_key, server, tmp_path):
    from suite_files import one_setting_suite

    from rageval.suite.load import load_suite
    from rageval.suite.run import run_suite

    suite = one_setting_suite(
        tmp_path, f"{{backend: openai, params: {{model: m, base_url: '{server.url}', max_retries: 0}}}}"
    )
    res = run_suite(load_suite(suite), progress=False, build_report=False)
    assert res.status_counts == {"ok": 2} and set(_auth(server)) == {None}
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    assert KEY not in manifest


# -- RAGAS list cells -------------------------------------------------------------------------------------------


def _ragas(tmp_path, cell: str):
    p = tmp_path / "r.csv"
    with p.open("w", newline="", encoding="utf-8") as f:
        import csv

        w = csv.writer(f)
        w.writerow(["question", "answer", "contexts"])
        w.writerow(["Who wrote Hamlet?", "Shakespeare", cell])
    return read_ragas(str(p))


_ITEM = st.text(alphabet=string.ascii_lowercase + " .", min_size=1, max_size=20).filter(
    lambda t: t.strip() and t[0].isalpha()
)


@FAST
@given(items=st.lists(_ITEM, min_size=2, max_size=5))
def test_unquoted_items_in_brackets_are_an_error_naming_line_and_column(tmp_path_factory, items):
    cell = "[" + ", ".join(items) + "]"
    with pytest.raises(ScoreInputError) as err:
        _ragas(tmp_path_factory.mktemp("r"), cell)
    assert "line 2" in str(err.value) and "column 'contexts'" in str(err.value) and "not quoted" in str(err.value)


def test_the_issue_cell_is_an_error(tmp_path):
    with pytest.raises(ScoreInputError, match=r"line 2: column 'contexts': a list cell whose items are not quoted"):
        _ragas(tmp_path, "[Hamlet is by Shakespeare., b]")


_TEXT = st.text(alphabet=string.ascii_letters + " ,.'[]", min_size=1, max_size=20).filter(lambda t: t.strip() == t)


@FAST
@given(items=st.lists(_TEXT, min_size=1, max_size=4, unique=True), python=st.booleans())
def test_a_quoted_list_cell_reads_as_its_items(tmp_path_factory, items, python):
    cell = repr(items) if python else json.dumps(items)  # pandas' to_csv writes Python's list text
    (item,) = _ragas(tmp_path_factory.mktemp("r"), cell).items
    assert [u.text for u in item.units] == items


@pytest.mark.parametrize(
    "cell", ["[citation needed]", "Hamlet is by Shakespeare, see [1], [2]", "[a] and, b", "x, [y, z]"]
)
def test_text_that_is_not_a_bracketed_list_is_one_context(tmp_path, cell):
    (item,) = _ragas(tmp_path, cell).items
    assert [u.text for u in item.units] == [cell]


# -- token counts -----------------------------------------------------------------------------------------------


@FAST
@given(
    value=st.one_of(
        st.integers(min_value=-(10**500), max_value=10**500),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
    )
)
def test_a_token_count_is_checked_without_an_overflow(value):
    ok = not isinstance(value, bool) and not (isinstance(value, float) and math.isnan(value))
    ok = ok and 0 <= value <= MAX_TOKEN_COUNT
    if ok:
        check_count("budget_tokens[0]", value)
        return
    with pytest.raises(ValueError) as err:
        check_count("budget_tokens[0]", value)
    assert str(err.value).startswith("budget_tokens[0] must be") and len(str(err.value)) < 160


@pytest.mark.parametrize("field", ["budget_tokens", "retrieved_tokens", "achieved_tokens", "reader_input_tokens"])
def test_the_compression_function_names_the_field_of_an_overflowing_count(field):
    from rageval.diagnostics.compression import compression

    units = [[{"text": "Paris is the capital of France.", "source_ids": ["d0.s0"]}]]
    sources = [[{"id": "d0.s0", "text": "Paris is the capital of France."}]]
    with pytest.raises(ValueError, match=rf"^{field}\[0\] must be .* got an integer of 401 digits"):
        compression(["Paris [1]."], units, sources, **{field: [10**400]})


def test_the_achieved_ratio_refuses_an_overflowing_count():
    with pytest.raises(ValueError, match="achieved tokens must be"):
        achieved_ratio(10**400, 10)
    assert achieved_ratio(7, 10) == 0.7
