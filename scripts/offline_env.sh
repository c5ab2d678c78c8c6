# Offline settings for every run (sourced by the scripts): no hub, caches inside the project.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export HF_HOME="${HF_HOME:-$ROOT/.cache/hf}"
export NLTK_DATA="${NLTK_DATA:-$ROOT/.cache/nltk_data}"
export TIKTOKEN_CACHE_DIR="${TIKTOKEN_CACHE_DIR:-$ROOT/.cache/tiktoken}"
export TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
