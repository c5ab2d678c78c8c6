"""Test-wide settings: offline always, caches inside the project."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Offline switches (docs/architecture.md#offline-operation): read at import time by
# evaluate / huggingface_hub / datasets.
for _k, _v in {
    "HF_HUB_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ[_k] = _v
os.environ.setdefault("HF_HOME", str(ROOT / ".cache" / "hf"))
os.environ.setdefault("NLTK_DATA", str(ROOT / ".cache" / "nltk_data"))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT / ".cache" / "tiktoken"))
os.environ.setdefault("MPLBACKEND", "Agg")


def _build_wheel_once(shared: Path) -> Path:
    """Build the project's wheel once per test run, whichever xdist worker asks first.

    ``pip wheel`` without build isolation builds in the checkout's ``build/`` folder, so two workers building at
    once collide (``File exists: build/bdist…``); an exclusive lock on a file in the run's shared temp folder
    serializes them, and later callers reuse the wheel.
    """
    import fcntl
    import subprocess
    import sys

    out = shared / "project-wheel"
    out.mkdir(parents=True, exist_ok=True)
    with open(shared / "project-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wheels = sorted(out.glob("rageval-*.whl"))
        if not wheels:
            cmd = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q"]
            res = subprocess.run([*cmd, "-w", str(out)], check=False, capture_output=True, text=True)
            assert res.returncode == 0, res.stderr[-3000:]
            wheels = sorted(out.glob("rageval-*.whl"))
    (wheel,) = wheels
    return wheel


@pytest.fixture(scope="session")
def project_wheel(tmp_path_factory) -> Path:
    """The checkout built as a wheel, once per test run (shared by the xdist workers)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return _build_wheel_once(shared)
