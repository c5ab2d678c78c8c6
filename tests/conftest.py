"""Test-wide settings: offline always, caches inside the project."""

import os
from pathlib import Path

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
