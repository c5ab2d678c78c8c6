"""Secrets go nowhere they must not: keys only over https or to loopback, no credentials in URLs, URLs redacted.

Category "secrets going where they must not": the key named by ``api_key_env`` is sent
only over ``https://`` or to a loopback host (unnamed, ``$OPENAI_API_KEY`` goes to OpenAI's own
API only: tests/test_keys_and_cells.py), anything else refused at ``rageval validate``
and when a suite is loaded (one line, exit 2) unless ``allow_insecure_key: true``; a
``base_url`` with userinfo or a query token is refused with a message that does not print
the secret; every URL an error prints is redacted.
"""

import json

import pytest
from click.testing import CliRunner
from fault_http import FaultServer
from suite_files import one_setting_suite

from rageval.cli import main, user_message
from rageval.errors import redact_url, redact_urls
from rageval.http import EndpointPool, HttpClient, endpoint_list
from rageval.http.urls import check_key_transport, is_loopback
from rageval.judges import get_judge
from rageval.judges.openai_compat import OpenAIJudge
from rageval.readers.openai_compat import OpenAIReader
from rageval.suite.load import load_suite
from rageval.suite.run import run_suite

SECRET = "hunter2-s3cret"

CREDENTIAL_URLS = [
    f"http://bob:{SECRET}@127.0.0.1:8000/v1",
    f"https://bob:{SECRET}@gw.example/v1",
    f"https://{SECRET}@gw.example/v1",  # a token as the user name
    f"https://:{SECRET}@gw.example/v1",
    f"https://gw.example/v1?api-key={SECRET}",
    f"https://gw.example/v1?x=1&token={SECRET}",
    f"https://gw.example/v1?{SECRET}",
    f"https://gw.example/v1#{SECRET}",
]


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.close()


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    monkeypatch.setenv("MY_KEY", "sk-my-key")
    return "sk-test-key"


# -- redaction --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", CREDENTIAL_URLS)
def test_redaction_hides_every_credential(url):
    assert SECRET not in redact_url(url) and SECRET not in redact_urls(f"failed: '{url}', see log")
    assert redact_url(url).startswith(url.split("://")[0] + "://")


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "http://[::1]:8000/v1", "https://h/a/b/"]
)
def test_redaction_keeps_a_plain_url(url):
    assert redact_url(url) == url and redact_urls(f"x {url} y") == f"x {url} y"


def test_the_cli_redacts_every_error_message():
    assert SECRET not in user_message(ValueError(f"cannot reach http://u:{SECRET}@h/v1 (refused)"))
    assert user_message(ValueError("plain http://h/v1 fails")) == "plain http://h/v1 fails"


# -- credentials in a base URL are refused, the secret not printed ----------------------------------------


@pytest.mark.parametrize("url", CREDENTIAL_URLS)
def test_a_base_url_with_credentials_is_refused_everywhere(url):
    for build in (
        lambda: OpenAIReader("m", base_url=url, api_key_env=None),
        lambda: OpenAIReader("m", base_url=["http://127.0.0.1:1/v1", url], api_key_env=None),
        lambda: OpenAIJudge("m", base_url=url, api_key_env=None),
        lambda: get_judge(f"openai:m@{url}"),
        lambda: HttpClient(url),
        lambda: EndpointPool([url]),
        lambda: endpoint_list(url),
    ):
        with pytest.raises(ValueError, match="credentials|query or fragment") as info:
            build()
        assert SECRET not in str(info.value)


_suite = one_setting_suite


@pytest.mark.parametrize("url", [CREDENTIAL_URLS[1], CREDENTIAL_URLS[4]])
@pytest.mark.parametrize("where", ["reader", "judge"])
@pytest.mark.parametrize("command", ["validate", "suite"])
def test_validate_and_suite_refuse_a_credential_url_without_printing_it(tmp_path, url, where, command):
    reader = f"{{backend: openai, params: {{model: m, base_url: '{url}', api_key_env: null}}}}"
    judge = f"{{spec: 'openai:j@{url}', params: {{api_key_env: null}}}}"
    suite = _suite(tmp_path, reader) if where == "reader" else _suite(tmp_path, "{backend: extractive}", judge)
    res = CliRunner().invoke(
        main, [command, str(suite), "--no-progress"] if command == "suite" else [command, str(suite)]
    )
    assert res.exit_code == 2, res.output
    assert SECRET not in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out").exists() or not any(
        SECRET in f.read_text(errors="replace") for f in (tmp_path / "out").rglob("*") if f.is_file()
    )


def test_a_judge_flag_with_credentials_is_refused_without_printing_them(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "q", "answer": "a [1].", "units": [{"text": "a"}]}) + "\n")
    res = CliRunner().invoke(
        main, ["score", str(data), "--out", str(tmp_path / "o"), "--judge", f"openai:j@{CREDENTIAL_URLS[1]}"]
    )
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert SECRET not in res.output and "***" in res.output


# -- the key travels only over https or to loopback ------------------------------------------------------


@pytest.mark.parametrize(
    "host,loopback",
    [("127.0.0.1", True), ("127.1.2.3", True), ("localhost", True), ("LOCALHOST", True), ("a.localhost", True),
     ("::1", True), ("[::1]", True), ("10.0.0.1", False), ("192.168.1.5", False), ("example.org", False),
     ("localhost.example.org", False), ("127.0.0.1.nip.io", False), ("0.0.0.0", False)],
)  # fmt: skip
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


INSECURE = ["http://10.0.0.1:8000/v1", "http://gw.example/v1", "http://[fe80::1]:8000/v1"]
SAFE = ["https://10.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", "http://localhost:8000/v1", "http://[::1]:9/v1"]


@pytest.mark.parametrize("url", INSECURE)
def test_a_key_over_plain_http_off_this_machine_is_refused(key, url):
    for build in (
        lambda: OpenAIReader("m", base_url=url, api_key_env="OPENAI_API_KEY"),  # named for it
        lambda: OpenAIReader("m", base_url=["https://a.example/v1", url], api_key_env="OPENAI_API_KEY"),
        lambda: OpenAIReader("m", base_url=url, api_key_env="MY_KEY"),
        lambda: OpenAIJudge("m", base_url=url, api_key_env="OPENAI_API_KEY"),
        lambda: OpenAIJudge("m", base_url=url, api_key="explicit", api_key_env=None),
        lambda: get_judge("openai", model="m", base_url=url, api_key_env="OPENAI_API_KEY"),
        lambda: HttpClient(url, api_key="k"),
    ):
        with pytest.raises(ValueError, match="would be sent unencrypted") as info:
            build()
        assert "allow_insecure_key: true" in str(info.value) and "sk-" not in str(info.value)


@pytest.mark.parametrize("url", SAFE)
def test_https_and_loopback_take_a_key(key, url):
    OpenAIReader("m", base_url=url).close()
    OpenAIJudge("m", base_url=url).close()
    HttpClient(url, api_key="k").close()


@pytest.mark.parametrize("url", INSECURE)
def test_no_key_or_the_opt_in_takes_plain_http(monkeypatch, key, url):
    OpenAIReader("m", base_url=url, api_key_env=None).close()  # no key at all
    OpenAIReader("m", base_url=url, api_key_env="OPENAI_API_KEY", allow_insecure_key=True).close()
    OpenAIJudge("m", base_url=url, api_key_env=None).close()
    OpenAIJudge("m", base_url=url, api_key_env="OPENAI_API_KEY", allow_insecure_key=True).close()
    HttpClient(url, api_key="k", allow_insecure_key=True).close()
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIReader("m", base_url=url).close()  # the variable unset: nothing to send
    OpenAIJudge("m", base_url=url).close()
    check_key_transport(url, what="x", key_from="$K", allow_insecure_key=True)


@pytest.mark.parametrize("where", ["reader", "judge"])
def test_validate_refuses_an_insecure_key_in_one_line_and_takes_the_opt_in(tmp_path, key, where):
    url = INSECURE[0]
    for opt_in, code in (("", 2), (", allow_insecure_key: true", 0)):
        named = ", api_key_env: OPENAI_API_KEY"  # the variable named for this endpoint (unnamed: OpenAI's only)
        reader = f"{{backend: openai, params: {{model: m, base_url: '{url}'{named}{opt_in}}}}}"
        judge = f"{{spec: openai, params: {{model: j, base_url: '{url}'{named}{opt_in}}}}}"
        suite = _suite(tmp_path, reader) if where == "reader" else _suite(tmp_path, "{backend: extractive}", judge)
        res = CliRunner().invoke(main, ["validate", str(suite)])
        assert res.exit_code == code, res.output
        if code:
            problems = [line for line in res.output.splitlines() if "unencrypted" in line]
            assert len(problems) == 1 and "$OPENAI_API_KEY" in problems[0] and key not in res.output


def test_the_key_reaches_a_loopback_server(tmp_path, key, server):
    named = "api_key_env: OPENAI_API_KEY"  # named for this endpoint (unnamed, the key goes to OpenAI's API only)
    suite = _suite(
        tmp_path, f"{{backend: openai, params: {{model: m, base_url: '{server.url}', max_retries: 0, {named}}}}}"
    )
    res = run_suite(load_suite(suite), progress=False, build_report=False)
    assert res.status_counts == {"ok": 2}
    assert {r["headers"].get("authorization") for r in server.requests} == {f"Bearer {key}"}
    written = [f.read_text(errors="replace") for f in (tmp_path / "out").rglob("*") if f.is_file()]
    assert written and not any(key in text for text in written)  # the key itself is written nowhere
