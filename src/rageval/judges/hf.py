"""Model judges: transformers NLI classifiers and TRUE-style seq2seq (ALCE's judge).

torch and transformers are imported here only, when such a judge is built.
Both return, per pair, a support probability in [0, 1] or NaN for an
abstention (the protocol of :mod:`rageval.judges.base`).  NaN *logits* are not
an abstention but a numerical failure (e.g. float16 overflow): a
:class:`~rageval.judges.base.JudgeError`.

**NLIJudge** (``AutoModelForSequenceClassification``, DeBERTa/RoBERTa-MNLI
style): the probability is the softmax mass of the label whose ``id2label``
name contains ``entail`` (case-insensitive); a model without such a label is
an error.  It never abstains.  Pairs are encoded as ``(premise, hypothesis)``
with ``truncation="only_first"`` (the premise is cut, never the claim) at
``max_length`` tokens (default 512); a pair whose full encoding is longer is
*counted* in ``stats()["truncated"]``.  If the hypothesis alone does not fit,
the pair is truncated longest-first instead (also counted).

**Seq2SeqJudge** (``AutoModelForSeq2SeqLM``, TRUE / ``t5_xxl_true_nli_mixture``):
input ``"premise: {p} hypothesis: {h}"`` exactly as ALCE builds it; one decoder
step from the start token (see :func:`label_probabilities`):

* the greedy first answer token is ``"0"`` or ``"1"`` (their larger logit is at
  least every other token's): probability = softmax over the logits of ``"0"``
  and ``"1"`` only, P("1");
* any other token wins: **NaN** (abstention), counted in
  ``stats()["off_label"]``.

At threshold 0.5 a decided pair is therefore supported exactly when ALCE's
greedy decoding starts with "1"; where ALCE's ``decode == "1"`` reads a
non-label answer as "not supported", this judge abstains and the caller
decides.  When the tokenizer spells ``"1"`` as a whitespace piece plus ``"1"``
(some sentencepiece vocabularies), a first token that is that whitespace piece
is followed by a second decoder step, and the label is read there.  Inputs
longer than ``max_length`` are truncated (counted); ALCE itself does not
truncate, so pass ``max_length=None`` for that.

Both count a pair's input tokens before and after that truncation
(``token_counts``): verifier tokens are reported before it, as a paper's cost
table counts them, and after it, and each record counts its judge inputs that
were truncated (docs/design.md#decision-verifier-tokens).

Premises longer than the window can instead be judged in overlapping windows,
support = the max over them (opt-in, ``window=``; :mod:`rageval.judges.windowed`,
which plans windows with :meth:`full_lengths`).

Both: ``execution`` (default ``auto``; :mod:`rageval.judges.paths`): how the forward
passes run — fp32 one pair at a time or in padded batches (same id), bf16, int8 or ONNX
Runtime (other ids); ``dtype="bfloat16"`` casts the weights (opt-in, the ``bf16`` path;
the id changes with the dtype so caches never mix), ``batch_size`` (default 8; the runner sorts pairs by
length before batching), ``device`` (default CPU).  The id is
``{kind}:{name}@{revision}|{dtype}|max_length=…`` where the revision is a sha256
over the files of a local folder (weights, config, tokenizer), else the hub commit
(:mod:`rageval.judges.hf_loading`, which also loads the weights in their dtype);
the seq2seq id ends in ``|rule=v2`` (abstentions), so disk caches written when an
off-label first token still yielded P("1") are not reused.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rageval.errors import require
from rageval.judges import paths
from rageval.judges.base import JudgeError
from rageval.judges.hf_loading import detect_kind, from_pretrained, resolve_dtype, revision_of, weights_fingerprint

__all__ = ["NLIJudge", "Seq2SeqJudge", "weights_fingerprint", "detect_kind", "label_probabilities"]


def label_probabilities(step_logits: Any, zero_id: int, one_id: int) -> list[float]:
    """TRUE-style answer of each row of ``step_logits`` (``[n, vocab]``, one decoder step).

    P("1") from a softmax over the logits of ``zero_id`` and ``one_id`` only,
    when the larger of the two is at least every other token's logit (the
    greedy token is "0" or "1"; a tie with another token counts as decided);
    otherwise NaN, an abstention.  Rows with a NaN logit raise ValueError
    (a numerical failure, not an abstention).

    >>> import torch  # a vocabulary of 3 tokens: id 1 is "0", id 2 is "1"
    >>> [round(p, 4) for p in label_probabilities(torch.tensor([[0.0, 0.0, 1.0], [5.0, 0.0, 1.0]]), 1, 2)]
    [0.7311, nan]
    """
    import torch

    logits = torch.as_tensor(step_logits).float()
    if logits.dim() != 2:
        raise ValueError(f"step_logits must be [n, vocab], got shape {tuple(logits.shape)}")
    bad = torch.isnan(logits).any(dim=-1)
    if bool(bad.any()):
        raise ValueError(f"NaN logits in row(s) {bad.nonzero().flatten().tolist()}")
    two = logits[:, [zero_id, one_id]]
    probs = torch.softmax(two, dim=-1)[:, 1]
    others = logits.clone()
    others[:, [zero_id, one_id]] = -torch.inf
    decided = two.max(dim=-1).values >= others.max(dim=-1).values
    out = torch.where(decided, probs, torch.full_like(probs, torch.nan))
    return out.cpu().tolist()


class _HFBase:
    cacheable: bool = True  # False: the runner keeps no disk cache (weights nobody named)
    uses_torch = True
    kind = "hf"
    id_suffix = ""  # names a change of the scoring rule, so caches of the old rule are never reused
    execution = "fp32-batched"  # the resolved path (rageval.judges.paths), set by __init__
    choice: Any = None  # paths.Choice: the path, what was asked for, why

    def __init__(
        self,
        name_or_path: str,
        *,
        revision: str | None,
        max_length: int | None,
        batch_size: int,
        dtype: Any,
        device: str | None,
        execution: str | None = None,
    ):
        require("torch", "transformers", what=f"the model judge {name_or_path!r}")
        if max_length is not None and (not isinstance(max_length, int) or max_length < 8):
            raise ValueError(f"max_length must be an integer >= 8 or None, got {max_length!r}")
        self.name_or_path = str(name_or_path)
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = device or "cpu"
        self.choice = paths.resolve(execution, device=self.device, dtype=dtype)
        if self.device == "cpu":
            paths.keep_freed_memory()
        self.execution = self.choice.execution
        self.torch_dtype = resolve_dtype("bfloat16" if self.execution == "bf16" else dtype)
        self._truncated = 0
        self._scored = 0
        self._off_label = 0

    def _finish(self, model, tokenizer, revision):
        import torch

        self.model = model.to(self.device)
        if self.torch_dtype != torch.float32:
            self.model = self.model.to(self.torch_dtype)
        self.model.eval()
        self.tokenizer = tokenizer
        self.revision = revision_of(self.name_or_path, self.model, revision)
        dt = str(self.torch_dtype).replace("torch.", "")
        # a local folder is named by its content hash (portable: moving it keeps the cache valid)
        name = Path(self.name_or_path).name if Path(self.name_or_path).is_dir() else self.name_or_path
        self.id = f"{self.kind}:{name}@{self.revision}|{dt}|max_length={self.max_length}{self.id_suffix}"
        self._prepare_execution()

    def _prepare_execution(self) -> None:
        """int8: quantize the linear layers; onnx: export and load in ONNX Runtime (rageval.judges.paths)."""
        self.id += paths.id_suffix(self.execution)
        if self.execution in ("int8", "onnx"):
            self.model = paths.prepare_model(self.model, self.execution, example=self._example(), output="logits")

    def _example(self) -> dict[str, Any]:
        raise NotImplementedError

    def _predict_batch(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        raise NotImplementedError

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        """One value per pair; the forward passes as :func:`rageval.judges.paths.groups` splits them."""

        def lengths() -> list[int]:
            full = self.full_lengths(premises, hypotheses)
            return [min(n, self.max_length) if self.max_length else n for n in full]

        passes = paths.groups(self.execution, len(premises), lengths)
        if len(passes) == 1:
            return self._predict_batch(premises, hypotheses)
        out = [math.nan] * len(premises)
        for idx in passes:
            for i, p in zip(idx, self._predict_batch([premises[i] for i in idx], [hypotheses[i] for i in idx])):
                out[i] = p
        return out

    def stats(self) -> dict[str, Any]:
        """``truncated``, ``scored``; ``execution`` (the resolved path) and ``execution_reason`` (why)."""
        return {
            "truncated": self._truncated,
            "scored": self._scored,
            "execution": self.execution,
            "execution_reason": self.choice.reason if self.choice is not None else "",
        }

    def _numerical_failure(self, row: int, hypotheses: list[str]):
        return JudgeError(
            f"judge {getattr(self, 'id', self.name_or_path)!r}: NaN logits for the pair with hypothesis "
            f"{hypotheses[row]!r:.80} (numerical overflow? dtype={self.torch_dtype}); try dtype='float32'"
        )

    def length(self, premise: str, hypothesis: str) -> int:
        return len(premise) + len(hypothesis)

    def full_lengths(self, premises: list[str], hypotheses: list[str]) -> list[int]:
        """Each pair's input tokens as this judge encodes it (special tokens included), before truncation.

        The hook :mod:`rageval.judges.windowed` plans and checks its premise windows with.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"


class NLIJudge(_HFBase):
    """Sequence-classification NLI: P(entailment label)."""

    kind = "nli"

    def __init__(
        self,
        name_or_path: str,
        *,
        revision: str | None = None,
        max_length: int | None = 512,
        batch_size: int = 8,
        dtype: Any = None,
        device: str | None = None,
        execution: str | None = None,
    ):
        super().__init__(
            name_or_path,
            revision=revision,
            max_length=max_length,
            batch_size=batch_size,
            dtype=dtype,
            device=device,
            execution=execution,
        )
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(self.name_or_path, revision=revision)
        model = from_pretrained(AutoModelForSequenceClassification, self.name_or_path, revision, self.torch_dtype)
        self._setup(model, tok, revision)

    def _setup(self, model, tok, revision):
        labels = {int(k): str(v) for k, v in (model.config.id2label or {}).items()}
        hits = [i for i, name in labels.items() if "entail" in name.lower() and "not" not in name.lower()]
        if len(hits) != 1:
            raise ValueError(
                f"NLI judge {self.name_or_path!r}: expected exactly one entailment label in config.id2label, "
                f"found {labels}; set id2label (e.g. {{0: 'entailment', 1: 'neutral', 2: 'contradiction'}})"
            )
        self.entailment_index = hits[0]
        self.labels = labels
        self._finish(model, tok, revision)

    @classmethod
    def from_model(
        cls,
        model,
        tokenizer,
        *,
        name: str = "in-memory",
        revision: str = "unsaved",
        max_length: int | None = 512,
        batch_size: int = 8,
        dtype: Any = None,
        device: str | None = None,
        execution: str | None = None,
    ) -> NLIJudge:
        """Wrap an already loaded classifier (benchmarks, notebooks).  ``revision`` names its weights in the id:
        give a real one before caching on disk."""
        self = cls.__new__(cls)
        _HFBase.__init__(
            self,
            name,
            revision=revision,
            max_length=max_length,
            batch_size=batch_size,
            dtype=dtype,
            device=device,
            execution=execution,
        )
        self._setup(model, tokenizer, revision)
        self.cacheable = revision != "unsaved"  # never disk-cache weights nobody named
        return self

    def _example(self) -> dict[str, Any]:
        return dict(self.tokenizer(["a b c d", "a"], ["b", "c d"], padding=True, return_tensors="pt"))

    def _lengths(self, premises, hypotheses) -> list[int]:
        enc = self.tokenizer(premises, hypotheses, truncation=False)
        return [len(x) for x in enc["input_ids"]]

    def full_lengths(self, premises: list[str], hypotheses: list[str]) -> list[int]:
        return self._lengths(premises, hypotheses)

    def token_counts(self, premise: str, hypothesis: str) -> tuple[int, int]:
        """The pair's tokens (special tokens included) before and after truncation at ``max_length``."""
        n = self._lengths([premise], [hypothesis])[0]
        return n, (min(n, self.max_length) if self.max_length else n)

    def input_tokens(self, premise: str, hypothesis: str) -> int:
        return self.token_counts(premise, hypothesis)[1]

    def _predict_batch(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        import torch

        if self.max_length is not None:
            full = self._lengths(premises, hypotheses)
            over = [n > self.max_length for n in full]
            self._truncated += sum(over)
            hyp_len = [len(x) for x in self.tokenizer(hypotheses, truncation=False)["input_ids"]]
            strategy = "only_first" if max(hyp_len) < self.max_length // 2 else "longest_first"
            enc = self.tokenizer(
                premises, hypotheses, truncation=strategy, max_length=self.max_length, padding=True, return_tensors="pt"
            )
        else:
            enc = self.tokenizer(premises, hypotheses, padding=True, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        logits = self.model(**enc).logits.float()
        bad = torch.isnan(logits).any(dim=-1).nonzero().flatten().tolist()
        if bad:
            raise self._numerical_failure(bad[0], hypotheses)
        probs = torch.softmax(logits, dim=-1)[:, self.entailment_index]
        self._scored += len(premises)
        return probs.cpu().tolist()


class Seq2SeqJudge(_HFBase):
    """TRUE-style ``premise: … hypothesis: …`` -> P("1") normalized over {"0", "1"}."""

    kind = "seq2seq"
    id_suffix = "|rule=v2"  # v2: abstain (NaN) when the first answer token is neither "0" nor "1"

    def __init__(
        self,
        name_or_path: str,
        *,
        revision: str | None = None,
        max_length: int | None = 512,
        batch_size: int = 8,
        dtype: Any = None,
        device: str | None = None,
        execution: str | None = None,
    ):
        super().__init__(
            name_or_path,
            revision=revision,
            max_length=max_length,
            batch_size=batch_size,
            dtype=dtype,
            device=device,
            execution=execution,
        )
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(self.name_or_path, revision=revision)
        model = from_pretrained(AutoModelForSeq2SeqLM, self.name_or_path, revision, self.torch_dtype)
        self.label_prefix: int | None = None  # a whitespace piece that precedes "0"/"1", if the tokenizer splits them
        self.label_ids = (self._single_token(tok, "0"), self._single_token(tok, "1"))
        start = model.config.decoder_start_token_id
        if start is None:
            start = model.config.pad_token_id
        if start is None:
            raise ValueError(f"seq2seq judge {self.name_or_path!r}: config has no decoder_start_token_id")
        self.decoder_start = int(start)
        self._finish(model, tok, revision)

    def _single_token(self, tok, text: str) -> int:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        if len(ids) == 1:
            return int(ids[0])
        # sentencepiece may give ["▁", "1"]: the model answers the whitespace piece, then "1"
        if len(ids) == 2 and tok.decode([ids[0]]).strip() == "" and self.label_prefix in (None, int(ids[0])):
            self.label_prefix = int(ids[0])
            return int(ids[1])
        raise ValueError(
            f"seq2seq judge {self.name_or_path!r}: {text!r} is not a single token of its tokenizer ({ids}); "
            "a TRUE-style judge must answer '0' or '1' in its first decoded token"
        )

    def _example(self) -> dict[str, Any]:
        import torch

        enc = dict(
            self.tokenizer([self.format("a b c d", "b"), self.format("a", "c")], padding=True, return_tensors="pt")
        )
        enc["decoder_input_ids"] = torch.full((2, 1), self.decoder_start, dtype=torch.long)
        return enc

    @staticmethod
    def format(premise: str, hypothesis: str) -> str:
        return f"premise: {premise} hypothesis: {hypothesis}"

    def full_lengths(self, premises: list[str], hypotheses: list[str]) -> list[int]:
        return [len(x) for x in self.tokenizer([self.format(p, h) for p, h in zip(premises, hypotheses)])["input_ids"]]

    def token_counts(self, premise: str, hypothesis: str) -> tuple[int, int]:
        """The formatted input's tokens before and after truncation at ``max_length``."""
        n = self.full_lengths([premise], [hypothesis])[0]
        return n, (min(n, self.max_length) if self.max_length else n)

    def input_tokens(self, premise: str, hypothesis: str) -> int:
        return self.token_counts(premise, hypothesis)[1]

    def _predict_batch(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        import torch

        texts = [self.format(p, h) for p, h in zip(premises, hypotheses)]
        if self.max_length is not None:
            full = [len(x) for x in self.tokenizer(texts)["input_ids"]]
            self._truncated += sum(n > self.max_length for n in full)
            enc = self.tokenizer(texts, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
        else:
            enc = self.tokenizer(texts, padding=True, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        dec = torch.full((len(texts), 1), self.decoder_start, dtype=torch.long, device=self.device)
        logits = self.model(**enc, decoder_input_ids=dec).logits[:, 0, :].float()
        if self.label_prefix is not None:  # the answer starts with the whitespace piece: read the next step
            rows = (logits.argmax(dim=-1) == self.label_prefix).nonzero().flatten()
            if len(rows):
                sub = {k: v[rows] for k, v in enc.items()}
                dec2 = torch.tensor(
                    [[self.decoder_start, self.label_prefix]] * len(rows), dtype=torch.long, device=self.device
                )
                logits = logits.clone()
                logits[rows] = self.model(**sub, decoder_input_ids=dec2).logits[:, 1, :].float()
        bad = torch.isnan(logits).any(dim=-1).nonzero().flatten().tolist()
        if bad:
            raise self._numerical_failure(bad[0], hypotheses)
        probs = label_probabilities(logits, *self.label_ids)
        self._off_label += sum(math.isnan(p) for p in probs)
        self._scored += len(texts)
        return probs

    def stats(self) -> dict[str, Any]:
        """``truncated``, ``scored``, ``execution``, ``execution_reason`` and ``off_label`` (pairs whose first answer token was neither "0" nor "1")."""
        return {**super().stats(), "off_label": self._off_label}
