"""An install that works and a quiet one (issue 42): the install commands of getting-started and of every card
(a clone or a wheel until a release), the release checklist, and the two lines rageval caused at load and at
exit (evaluate's per-load cache line, llama.cpp's ``Llama.__del__`` traceback)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CARDS = sorted((ROOT / "metrics").glob("*/README.md"))
UNRELEASED = re.compile(r"pip install rageval\b|rageval==")  # nothing is released: no index install


def _fences(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL)


def test_getting_started_installs_from_a_clone():
    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    install = text.split("## Install", 1)[1]
    first = _fences(install)[0].splitlines()
    assert first[0].startswith("git clone ") and first[0].endswith("&& cd rageval")
    assert first[1:] == [
        "python3 -m venv .venv",
        ".venv/bin/pip install .                  # working on rageval itself: pip install -e .",
    ]
    assert not any(UNRELEASED.search(block) for block in _fences(text))
    assert "pip install dist/rageval-*.whl" in install and "gomate-community/rageval" in install


@pytest.mark.parametrize("card", CARDS, ids=lambda p: p.parent.name)
def test_cards_install_from_a_clone_or_a_wheel(card):
    how = card.read_text(encoding="utf-8").split("## How to use", 1)[1].split("\n## ", 1)[0]
    assert _fences(how)[0].strip() == "git clone https://github.com/rageval/rageval && pip install ./rageval"
    assert "pip install dist/rageval-*.whl" in how and not UNRELEASED.search(how)


def test_the_release_checklist_names_the_name_check_and_the_clash():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    release = text.split("## Releasing\n", 1)[1].split("\n## ", 1)[0]
    first = release.split("1. ", 1)[1].split("\n2. ", 1)[0]
    assert "**The package name.**" in first and "gomate-community/rageval" in first
    assert "distribution name *and* import name" in first


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], check=False, capture_output=True, text=True, env=env, timeout=300
    )


def test_evaluate_load_is_quiet_in_rageval_only_for_the_call(tmp_path):
    """A bare name found in evaluate's module cache logs "Using the latest cached version ..." on each load;
    rageval's load drops it for its call and leaves evaluate's logger as it found it."""
    pytest.importorskip("evaluate")
    env = {**os.environ, "HF_MODULES_CACHE": str(tmp_path), "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    out = _python(
        """
        import logging, sys
        from rageval.evaluate_support import install_metrics, load
        install_metrics()
        before = logging.getLogger("evaluate.loading").level
        m = load("str_em")
        print("rageval:", m.name, logging.getLogger("evaluate.loading").level == before, flush=True)
        sys.stderr.write("--- then evaluate.load\\n"); sys.stderr.flush()
        import evaluate
        evaluate.load("str_em")
        """,
        env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "rageval: str_em True"
    ours, theirs = out.stderr.split("--- then evaluate.load\n")
    assert "Using the latest cached version" not in ours
    assert "Using the latest cached version" in theirs  # the user's own call: evaluate as it was


class _FakeLlama:
    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


def _fake_model():
    from rageval.llamacpp import _OPEN, LlamaCppModel

    m = object.__new__(LlamaCppModel)  # what __init__ leaves, without a GGUF file
    m.llm, m._lock, m.path = _FakeLlama(), threading.Lock(), Path("fake.gguf")
    _OPEN.add(m)
    return m


def test_a_llama_model_closes_once_and_refuses_use_after():
    from rageval.llamacpp import close_all

    a, b = _fake_model(), _fake_model()
    a.close()
    a.close()
    assert a.llm.closed == 1 and b.llm.closed == 0
    close_all()  # what atexit runs: the ones still open
    assert (a.llm.closed, b.llm.closed) == (1, 1)
    with pytest.raises(RuntimeError, match="was closed"):
        a.chat([{"role": "user", "content": "hi"}], 1)
    with _fake_model() as c:
        pass
    assert c.llm.closed == 1


def test_a_model_held_to_the_end_is_closed_before_shutdown():
    """The judge's model lives in a cache until the interpreter exits; llama-cpp-python's ``Llama.__del__`` then
    runs after ``llama_cpp``'s globals are cleared and prints a traceback.  The atexit hook closes it first: here a
    fake whose ``__del__`` fails, as the real one does at shutdown, unless it was closed."""
    code = """
        import functools, threading
        from pathlib import Path
        from rageval.llamacpp import _OPEN, LlamaCppModel

        class Fake:
            closed = False
            def close(self):
                self.closed = True
                print("closed", flush=True)
            def __del__(self):
                if not self.closed:
                    raise TypeError("'NoneType' object is not callable")  # llama_cpp's globals gone

        @functools.lru_cache(maxsize=1)
        def judge():
            m = object.__new__(LlamaCppModel)
            m.llm, m._lock, m.path = Fake(), threading.Lock(), Path("fake.gguf")
            _OPEN.add(m)
            return m

        judge()
        """
    out = _python(code, dict(os.environ))
    assert out.returncode == 0 and out.stdout == "closed\n"
    assert "Exception ignored" not in out.stderr and "Traceback" not in out.stderr
