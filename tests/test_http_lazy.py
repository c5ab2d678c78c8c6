"""LazyClient: the one holder of a service's HttpClient (readers and judges): key rule, lazy creation, reopen."""

from rageval.http import LazyClient


def test_key_from_argument_else_environment_read_at_first_use(monkeypatch):
    monkeypatch.delenv("RAGEVAL_TEST_KEY", raising=False)
    lazy = LazyClient("http://127.0.0.1:9/v1", api_key_env="RAGEVAL_TEST_KEY", timeout=1.0)
    assert lazy.current is None
    monkeypatch.setenv("RAGEVAL_TEST_KEY", "from-env")  # read when the client is made, not at construction
    assert lazy.get()._api_key == "from-env"
    assert lazy.get() is lazy.current
    lazy.close()
    assert lazy.current is None
    explicit = LazyClient("http://127.0.0.1:9/v1", api_key="given", api_key_env="RAGEVAL_TEST_KEY", timeout=1.0)
    assert explicit.get()._api_key == "given"
    explicit.close()
    monkeypatch.setenv("RAGEVAL_TEST_KEY", "")
    empty = LazyClient("http://127.0.0.1:9/v1", api_key_env="RAGEVAL_TEST_KEY", timeout=1.0)
    assert empty.get()._api_key is None  # an empty variable is no key
    empty.close()


def test_close_then_get_opens_a_new_client():
    lazy = LazyClient("http://127.0.0.1:9/v1", timeout=1.0)
    first = lazy.get()
    lazy.close()
    second = lazy.get()
    assert second is not first
    lazy.close()
