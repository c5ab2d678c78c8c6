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
prompt truncated to ``max_input_tokens`` model tokens.  No summary at all gives an
empty context.

How the budget caps the summaries
---------------------------------
With a budget of ``B`` tokens (counted with the suite's tokenizer, as every budget is):

* ``per_document=True``: the documents are summarized in retrieval order, and each
  summary may be at most ``min(max_new_tokens, R)`` tokens long, ``R`` being the budget
  still unspent (``B`` minus the suite-tokenizer count of the summaries kept so far);
  once ``R`` is 0 the remaining documents are not summarized (they give no unit).
* ``per_document=False``: the one summary is at most ``min(max_new_tokens, B)`` tokens.

The cap is the generation length (``max_new_tokens`` of ``generate``), in the
summarizer's own tokens, one for one with budget tokens; greedy decoding makes a capped
summary the first tokens of the uncapped one.  So a budget looser than what the
summaries take changes nothing (its contexts coincide with the unbounded ones: RECOMP at
0.50 and 0.25 on ASQA in the paper), and a tighter one gives fewer, shorter summaries.
The summarizer's tokens are not the suite's, so a summary can come out a few tokens over
what was left: the compressor's ``budget_contract`` is ``"best_effort"`` — the context
records what it produced and the run counts the overshoot, never ``budget_check``.

Parameters
----------
model : str, required — any transformers seq2seq checkpoint (``AutoModelForSeq2SeqLM``),
    a local folder or (where a hub is reachable) a hub id.
max_new_tokens : int >= 1, default 128 — per summary (per document with ``per_document``); with a budget, the
    cap above when it is smaller.
max_input_tokens : int >= 1, default 1024 — each prompt is truncated to this many model tokens.
per_document : bool, default True — one summary (one unit) per retrieved document; False: one for all.
device : ``"cpu"`` (default).
"""

from __future__ import annotations

from rageval.compressors.base import BaseCompressor, ModelUnavailable, count_tokens, group_documents, join_sentences
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
    # 2.0.0: per-document summaries (one unit per retrieved document) by default
    # 3.0.0: the budget caps the summaries (generation length and the documents summarized); best-effort budget
    version = "3.0.0"
    needs_model = True
    budget_contract = "best_effort"  # the summarizer counts its own tokens (module doc)
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

    def summarize(self, prompts: list[str], max_new_tokens: int | None = None) -> list[str]:
        """One greedy summary per prompt, at most ``max_new_tokens`` (default: the parameter) model tokens each."""
        tok, model = self._load()  # first: the install hint where torch is missing
        import torch

        cap = self.params["max_new_tokens"] if max_new_tokens is None else max_new_tokens
        out = []
        with torch.inference_mode():
            for p in prompts:
                enc = tok(p, return_tensors="pt", truncation=True, max_length=self.params["max_input_tokens"])
                enc = {k: v.to(self.params["device"]) for k, v in enc.items()}
                gen = model.generate(**enc, max_new_tokens=cap, do_sample=False, num_beams=1)
                out.append(tok.decode(gen[0], skip_special_tokens=True).strip())
        return out

    def _within(self, prompts: list[str], budget_tokens: int, tokenizer) -> list[str]:
        """The summaries of ``prompts`` in order, each capped by the budget still unspent (module doc)."""
        out: list[str] = []
        left = budget_tokens
        for p in prompts:
            if left <= 0:
                break
            summary = self.summarize([p], min(self.params["max_new_tokens"], left))[0]
            if summary:
                out.append(summary)
                left -= count_tokens(tokenizer, [summary])[0]
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
        if budget_tokens is None:
            summaries = self.summarize(prompts)
        else:
            summaries = self._within(prompts, budget_tokens, tokenizer)
        return [Unit(s, source_ids=None) for s in summaries if s]
