"""``abstractive``: a seq2seq or causal-LM summarizer (RECOMP-style); units declare **no** provenance.

A seq2seq summarizer (``kind="seq2seq"``, the default: RECOMP's own, a T5) gets RECOMP's
abstractive format::

    Question: {question}
     Document: {title}: {text} ... (documents in retrieval order)
     Summary:

A causal LM — an instruction-tuned chat model, ``kind="causal"`` (transformers:
a folder, a hub id, a ``.gguf`` file or ``smollm2``, :func:`rageval.lm.load_causal_lm`)
or ``kind="llamacpp"`` (a ``.gguf`` file or ``smollm2`` in llama.cpp,
:class:`rageval.llamacpp.LlamaCppModel`) — gets the same question and documents as
one user message of its chat template (:func:`summary_messages`): a query-focused
summarization instruction (keep only what helps answer the question, write nothing
when nothing does, no citations), then ``Question: ...`` and the documents as above.
The summaries are cut and capped the same way for every kind (below).

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
seq2seq prompt truncated to ``max_input_tokens`` model tokens; a causal LM's chat
prompt is not cut (that would drop its instruction or its generation prompt): a longer
one is a ``compressor_error``.  No summary at all gives an
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
model : str, required — with ``kind="seq2seq"`` any transformers seq2seq checkpoint (``AutoModelForSeq2SeqLM``),
    a local folder or (where a hub is reachable) a hub id; a causal LM with the other kinds.
kind : ``"seq2seq"`` (default) | ``"causal"`` (a causal LM through transformers, greedy, its chat template) |
    ``"llamacpp"`` (a GGUF causal LM in llama.cpp, greedy, its chat template).
max_new_tokens : int >= 1, default 128 — per summary (per document with ``per_document``); with a budget, the
    cap above when it is smaller.
max_input_tokens : int >= 1, default 1024 — each prompt is truncated to this many model tokens.
per_document : bool, default True — one summary (one unit) per retrieved document; False: one for all.
device : ``"cpu"`` (default).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any, ClassVar

from rageval.compressors.base import (
    BaseCompressor,
    CompressorError,
    ModelUnavailable,
    count_tokens,
    group_documents,
    join_sentences,
)

from rageval.errors import require
from rageval.llamacpp import LlamaCppModel
from rageval.lm import load_causal_lm, resolve
from rageval.types import Unit

__all__ = ["AbstractiveCompressor", "KINDS", "SUMMARY_INSTRUCTION", "recomp_prompt", "summary_messages"]

#: the summarizer kinds (module doc)
KINDS = ("seq2seq", "causal", "llamacpp")

#: the instruction a causal-LM summarizer is given before the question and documents (module doc)
SUMMARY_INSTRUCTION = (
    "Summarize the documents below for the question. Keep only the facts that help answer the question, in "
    "one or two short sentences. If nothing in the documents helps, write nothing. Do not answer from your own "
    "knowledge and do not cite documents."
)


def recomp_prompt(question: str, documents: list[tuple[str | None, str]]) -> str:
    """RECOMP's abstractive compressor input.

    >>> recomp_prompt("Who?", [("Paris", "Paris is big.")])
    'Question: Who?\\n Document: Paris: Paris is big.\\n Summary: '
    """
    docs = " ".join(f"{t}: {x}" if t else x for t, x in documents)
    return f"Question: {question}\n Document: {docs}\n Summary: "


def summary_messages(question: str, documents: list[tuple[str | None, str]]) -> list[dict[str, str]]:
    """A causal-LM summarizer's chat messages: :data:`SUMMARY_INSTRUCTION`, the question and the documents.

    >>> summary_messages("Who?", [("Paris", "Paris is big.")])[0]["content"].splitlines()[-2:]
    ['Question: Who?', 'Document: Paris: Paris is big.']
    """
    docs = "\n".join(f"Document: {t}: {x}" if t else f"Document: {x}" for t, x in documents)
    return [{"role": "user", "content": f"{SUMMARY_INSTRUCTION}\n\nQuestion: {question}\n{docs}"}]


class AbstractiveCompressor(BaseCompressor):
    name = "abstractive"
    # 2.0.0: per-document summaries (one unit per retrieved document) by default
    # 3.0.0: the budget caps the summaries (generation length and the documents summarized); best-effort budget
    # 3.1.0: a causal-LM summarizer (kind: causal | llamacpp); the seq2seq default unchanged
    version = "3.1.0"
    needs_model = True
    budget_contract = "best_effort"  # the summarizer counts its own tokens (module doc)
    PARAMS: ClassVar[dict[str, Any]] = {
        "model": None,
        "kind": "seq2seq",
        "max_new_tokens": 128,
        "max_input_tokens": 1024,
        "per_document": True,
        "device": "cpu",
    }

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
        if self.params["kind"] not in KINDS:
            raise self._param_error("kind", f"expected one of {', '.join(KINDS)}")
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            path, kind = self.params["model"], self.params["kind"]
            what = f"the abstractive compressor's model {path!r}"
            if kind == "llamacpp":
                n_ctx = self.params["max_input_tokens"] + self.params["max_new_tokens"]
                self._loaded = (None, LlamaCppModel(path, n_ctx=n_ctx, what=what))
                return self._loaded
            if kind == "causal":
                tok, model, _ = load_causal_lm(path, what=what, otherwise="or leave the abstractive setting out")
                tok.padding_side = "left"
            else:
                require("torch", "transformers", what=what)
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

    def load(self) -> AbstractiveCompressor:
        self._load()
        return self

    @property
    def weights(self) -> dict[str, Any] | None:
        """A GGUF summarizer's file (name, sha256) and what its weights run as: de-quantized to float32 by
        transformers (``kind: causal``), kept quantized by llama.cpp (``kind: llamacpp``); computed without
        loading the model (the file's hash once per process).  None for a seq2seq or hub checkpoint."""
        kind = self.params["kind"]
        if kind == "seq2seq":
            return None
        gguf = resolve(self.params["model"])
        if gguf is None:
            return None
        dist = "llama-cpp-python" if kind == "llamacpp" else "transformers"
        try:
            engine = f"{'llama.cpp' if kind == 'llamacpp' else 'transformers'} ({dist} {metadata.version(dist)})"
        except metadata.PackageNotFoundError:
            engine = None  # not installed: loading the model says how to install it
        return {**gguf.identity("float32" if kind == "causal" else None), "engine": engine}

    def summarize(self, prompts: list, max_new_tokens: int | None = None) -> list[str]:
        """One greedy summary per prompt (a RECOMP prompt string for seq2seq, chat messages for a causal LM:
        :meth:`prompts`), at most ``max_new_tokens`` (default: the parameter) model tokens each."""
        tok, model = self._load()  # first: the install hint where torch is missing
        cap = self.params["max_new_tokens"] if max_new_tokens is None else max_new_tokens
        limit = self.params["max_input_tokens"]
        if self.params["kind"] == "llamacpp":
            for p in prompts:
                self._check_length(len(model.prompt_tokens(p)), limit)
            return [model.chat(p, cap)[0].strip() for p in prompts]
        import torch

        out = []
        with torch.inference_mode():
            for p in prompts:
                if self.params["kind"] == "causal":
                    enc = tok.apply_chat_template(p, add_generation_prompt=True, return_dict=True, return_tensors="pt")
                    self._check_length(int(enc["input_ids"].shape[1]), limit)
                else:
                    enc = tok(p, return_tensors="pt", truncation=True, max_length=limit)
                enc = {k: v.to(self.params["device"]) for k, v in enc.items()}
                gen = model.generate(**enc, max_new_tokens=cap, do_sample=False, num_beams=1)
                new = gen[0, enc["input_ids"].shape[1] :] if self.params["kind"] == "causal" else gen[0]
                out.append(tok.decode(new, skip_special_tokens=True).strip())
        return out

    @staticmethod
    def _check_length(n: int, limit: int) -> None:
        if n > limit:  # a chat prompt cut anywhere loses its instruction or its generation prompt
            raise CompressorError(f"abstractive: the summarizer prompt has {n} tokens, over max_input_tokens={limit}")

    def prompts(self, question: str, documents: list[tuple[str | None, str]]) -> list:
        """The summarizer's inputs: one per document with ``per_document``, else one for all (module doc)."""
        groups = [[d] for d in documents] if self.params["per_document"] else [documents]
        build = recomp_prompt if self.params["kind"] == "seq2seq" else summary_messages
        return [build(question, g) for g in groups]

    def _within(self, prompts: list, budget_tokens: int, tokenizer) -> list[str]:
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
        prompts = self.prompts(question, docs)
        if budget_tokens is None:
            summaries = self.summarize(prompts)
        else:
            summaries = self._within(prompts, budget_tokens, tokenizer)
        return [Unit(s, source_ids=None) for s in summaries if s]
