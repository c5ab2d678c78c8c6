#!/usr/bin/env bash
# Set up rageval from nothing: a virtual environment in .venv with the CPU build of
# torch installed first (so no multi-GB CUDA build is pulled), then rageval itself.
# Usage: bash scripts/setup.sh [extra]   (extra: "test" for the test dependencies)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
if [ "${1:-}" = "test" ]; then
  .venv/bin/python -m pip install -q -e ".[test]"
else
  .venv/bin/python -m pip install -q -e .
fi
