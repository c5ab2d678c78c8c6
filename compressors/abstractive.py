"""``abstractive``: a seq2seq summarizer (RECOMP-style); units declare **no** provenance.

The prompt is RECOMP's abstractive format::

    Question: {question}
     Document: {title}: {text} ... (documents in retrieval order)
     Summary:

How the summaries are cut into units
------------------------------------
Neither the attribution-compression paper nor RECOMP says how a summary was split
into the units a reader cites, yet the paper's answers cite several summary units, so
rageval chooses and says so here:

* ``per_document=True`` (the default, and the setting of the shipped paper suites):
  **one summary per retrieved document** — the prompt above holding that document
  alone, in retrieval order — and each non-empty summary is **one unit**, in
  retrieval order: unit ``[k]`` is the summary of the k-th retrieved document that
  produced one.  A document whose summary is empty gives no unit (RECOMP trains its
  summarizer to write nothing for documents that do not help: selective
  augmentation), so a context may hold fewer units than documents; the count is the
  record's ``context.units``.
* ``per_document=False``: **one summary of all documents** (the prompt above with every
  document), one unit — RECOMP's original single-summary mode.  Every citation is then
  ``[1]`` and re-attributability is 0 or 1 per question.

Every unit has ``source_ids=None`` (no declared provenance: a summary sentence cannot
be traced to source sentences by construction; grounded scores recover it through
re-attribution) and no title.  The model's output is greedy (``num_beams=1``), each
prompt truncated to ``max_input_tokens`` model tokens.  Like RECOMP, the compressor
ignores the budget: it records the nominal budget and whatever it produced (achieved
ratios can land far from the nominal one).  No summary at all gives an empty context.

Parameters
----------
model : str, required — any transformers seq2seq checkpoint (``AutoModelForSeq2SeqLM``),
    a local folder or (where a hub is reachable) a hub id.
max_new_tokens : int >= 1, default 128 — per summary (per document with ``per_document``).
max_input_tokens : int >= 1, default 1024 — each prompt is truncated to this many model tokens.
per_document : bool, default True — one summary (one unit) per retrieved document; False: one for all.
device : ``"cpu"`` (default).
"""

from __future__ import annotations

from rageval.compressors.base import BaseCompressor, ModelUnavailable, group_documents, join_sentences
from rageval.errors import require
from rageval.types import Unit

__all__ = ["AbstractiveCompressor", "recomp_prompt"]


def recomp_prompt(question: str, documents: list[tuple[str | None, str]]) -> str:
    """RECOMP's abstractive compressor input.

    >>> recomp_prompt("Who?", [("Paris", "Paris is big.")])
    'Question: Who?\\n Document: Paris: Paris is big.\\n Summary: '
    """
    docs = " ".join(f"{t}: {x}" if t else x for t, x in documents)
    return f"Question: {question}\n Document: {docs}\n Summary: "


class AbstractiveCompressor(BaseCompressor):
    name = "abstractive"
    version = "2.0.0"  # 2.0.0: per-document summaries (one unit per retrieved document) by default
    needs_model = True
    budget_contract = "none"  # the budget is recorded, not read
    PARAMS = {"model": None, "max_new_tokens": 128, "max_input_tokens": 1024, "per_document": True, "device": "cpu"}

    def _check_params(self) -> None:
        if not (isinstance(self.params["model"], str) and self.params["model"]):
            raise self._param_error(
                "model",
                "give model=<seq2seq checkpoint folder or hub id> (e.g. a RECOMP "
                "abstractive compressor or a T5 summarizer)",
            )
        self._check_number("max_new_tokens", 1, integer=True)
        self._check_number("max_input_tokens", 1, integer=True)
        if not isinstance(self.params["per_document"], bool):
            raise self._param_error("per_document", "expected true or false")
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            path = self.params["model"]
            require("torch", "transformers", what=f"the abstractive compressor's model {path!r}")
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

            try:
                tok = AutoTokenizer.from_pretrained(path)
                model = AutoModelForSeq2SeqLM.from_pretrained(path)
            except (OSError, ValueError) as e:
                raise ModelUnavailable(
                    f"abstractive: cannot load the seq2seq model {path!r} ({type(e).__name__}: {str(e)[:200]}); "
                    "give model=<local folder with config.json, weights and tokenizer files>"
                ) from None
            model.to(self.params["device"]).eval()
            self._loaded = (tok, model)
        return self._loaded

    def load(self) -> "AbstractiveCompressor":
        self._load()
        return self

    def summarize(self, prompts: list[str]) -> list[str]:
        tok, model = self._load()  # first: the install hint where torch is missing
        import torch

        out = []
        with torch.inference_mode():
            for p in prompts:
                enc = tok(p, return_tensors="pt", truncation=True, max_length=self.params["max_input_tokens"])
                enc = {k: v.to(self.params["device"]) for k, v in enc.items()}
                gen = model.generate(**enc, max_new_tokens=self.params["max_new_tokens"], do_sample=False, num_beams=1)
                out.append(tok.decode(gen[0], skip_special_tokens=True).strip())
        return out

    def _compress(self, question, snippets, costs, budget_tokens, tokenizer):
        docs = [[i for i in d if costs[i] > 0] for d in group_documents(snippets)]
        docs = [(snippets[d[0]].title, join_sentences([snippets[i].text for i in d])) for d in docs if d]
        if not docs:
            return []
        if self.params["per_document"]:
            prompts = [recomp_prompt(question, [d]) for d in docs]
        else:
            prompts = [recomp_prompt(question, docs)]
        return [Unit(s, source_ids=None) for s in self.summarize(prompts) if s]
