#!/usr/bin/env bash
# Set up rageval from nothing: a virtual environment in .venv, then rageval itself.
# Usage: bash scripts/setup.sh [extra]
#   no extra:  the light core (no torch, no transformers): the model-free diagnostics, suites such as the
#              demo, `rageval score` with the lexical judge and the report (what scripts/demo.sh needs)
#   lint:      the light core and the checkers (ruff, mypy, import-linter): what scripts/test.sh runs first
#   an extra:  "test" (the test dependencies), "models", ...: the CPU build of torch is installed first
#              (so no multi-GB CUDA build is pulled), then rageval with that extra
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
case "${1:-}" in
  "") .venv/bin/python -m pip install -q -e . ;;
  lint) .venv/bin/python -m pip install -q -e ".[lint]" ;;
  *)
    # llama-cpp-python (the test and llamacpp extras) builds llama.cpp from source. A build tuned to the CPU
    # (GGML_NATIVE, llama.cpp's default) crashed in its first decode on a virtual Xeon that reports AVX-512
    # (llama-cpp-python 0.3.36, SmolLM2); the portable build runs. It is the default here unless CMAKE_ARGS is set.
    export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
    .venv/bin/python -m pip install -q "torch==2.13.0"
    .venv/bin/python -m pip install -q -e ".[$1]"
    ;;
esac
