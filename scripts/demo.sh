#!/usr/bin/env bash
# The main job (README): set up from nothing and run the demo suite on the shipped
# real HotpotQA sample with the offline defaults (lexical judge, extractive reader).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/offline_env.sh
.venv/bin/rageval suite suites/demo.yaml "$@"
