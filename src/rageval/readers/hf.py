"""The transformers reader: a causal LM with its chat template, greedy decoding, batched.

``TransformersReader("path/or/hub-id")`` loads the tokenizer and model with
``AutoTokenizer`` / ``AutoModelForCausalLM`` (:func:`rageval.lm.load_causal_lm`: the
same path for a hub id, a local folder, a ``.gguf`` file — de-quantized to float32 —
and the named model ``smollm2``; :attr:`weights` records the file's sha256).  Each request's messages (:class:`~rageval.readers.template.PromptTemplate`)
go through the tokenizer's chat template with the generation prompt added; a
tokenizer without a chat template gets the plain rendered prompt (recorded in
:meth:`info` as ``chat_template: false``).

Prompt overflow is detected before generation: a prompt longer than the context
limit (``max_input_tokens``, else the model's ``max_position_embeddings`` minus
``max_new_tokens``) is returned as ``prompt_overflow`` with its token count and is
not generated.  The others are sorted by length, left-padded and generated in
batches of ``batch_size`` with ``do_sample=False`` (greedy); the answer is the
decoded new tokens, special tokens removed, stripped.  ``input_tokens`` is the
model tokenizer's count of the prompt.

Weights that cannot be loaded raise :class:`~rageval.readers.base.ModelUnavailable`
with the fix (a local path, or the extractive reader); so does an install without torch
and transformers, with the command that adds them (``pip install 'rageval[models]'``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic import Field, field_validator

from rageval.lm import load_causal_lm
from rageval.readers.base import ModelUnavailable, Reader, ReaderOutput, ReaderRequest, check_requests
from rageval.readers.spec import ReaderParams, non_empty_text, positive_int
from rageval.readers.template import PromptTemplate

__all__ = ["TransformersParams", "TransformersReader"]

#: the weight dtypes the reader accepts (torch attribute names)
_DTYPES = ("float32", "float16", "bfloat16", "float64")


class TransformersParams(ReaderParams):
    """The transformers reader's options (checked without loading anything)."""

    what = "transformers reader"

    model: str = Field(description="a hub id, a local checkpoint folder, a .gguf file, or smollm2 (rageval.lm)")
    revision: str | None = Field(None, description="hub revision")
    max_new_tokens: int = Field(256, description="tokens generated at most (greedy)")
    batch_size: int = Field(4, description="prompts per generate call")
    max_input_tokens: int | None = Field(None, description="prompt limit (default: the context minus max_new_tokens)")
    device: str | None = Field(None, description="torch device (default: cuda when available)")
    dtype: str | None = Field(None, description="weights: " + " | ".join(_DTYPES) + " (a GGUF file: float32)")
    gguf_file: str | None = Field(None, description="the .gguf file in the folder or hub repo 'model' names")

    _positive = field_validator("max_new_tokens", "batch_size", mode="before")(positive_int)
    _text = field_validator("revision", "device", "gguf_file", mode="before")(non_empty_text)

    @field_validator("model", mode="before")
    @classmethod
    def _model(cls, value: Any) -> Any:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(
                "transformers reader: 'model' must name a hub id, a local checkpoint folder, a .gguf file or "
                "a named model (smollm2)"
            )
        return value

    @field_validator("max_input_tokens", mode="before")
    @classmethod
    def _max_input_tokens(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"transformers reader: max_input_tokens must be a positive integer or None, got {value!r}")
        return value

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype(cls, value: Any) -> Any:
        if value is not None and value not in _DTYPES:
            raise ValueError(f"transformers reader: unknown dtype {value!r} (use one of {', '.join(_DTYPES)})")
        return value


class TransformersReader(Reader):
    """Greedy, batched generation with a local or hub causal LM."""

    name = "transformers"
    needs_model = True
    Params = TransformersParams

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        template: PromptTemplate | Mapping[str, Any] | None = None,
        max_new_tokens: int = 256,
        batch_size: int = 4,
        max_input_tokens: int | None = None,
        device: str | None = None,
        dtype: str | None = None,
        gguf_file: str | None = None,
        tokenizer: Any = "regex",
    ):
        super().__init__(template=template, tokenizer=tokenizer)
        self.check_params(
            model,
            revision=revision,
            max_new_tokens=max_new_tokens,
            batch_size=batch_size,
            max_input_tokens=max_input_tokens,
            device=device,
            dtype=dtype,
            gguf_file=gguf_file,
        )
        self.model_name, self.revision = model, revision
        self.max_new_tokens, self.batch_size = max_new_tokens, batch_size

        self.gguf_file = gguf_file
        self.hf_tokenizer, self.model, self.weights = load_causal_lm(
            model, gguf_file=gguf_file, revision=revision, dtype=dtype, what="the transformers reader"
        )
        import torch

        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)  # type: ignore[arg-type]  # transformers' typing of .to
        self.model.eval()
        tok = self.hf_tokenizer
        tok.padding_side = "left"
        if tok.pad_token is None:
            if tok.eos_token is None:
                raise ModelUnavailable(f"reader model {model!r}: the tokenizer has neither a pad nor an eos token")
            tok.pad_token = tok.eos_token
        self.chat_template = bool(getattr(tok, "chat_template", None))
        limit = max_input_tokens
        if limit is None:
            positions = getattr(self.model.config, "max_position_embeddings", None)
            if positions:
                limit = int(positions) - max_new_tokens
        self.max_input_tokens = limit

    @classmethod
    def check_params(cls, model: Any, **params: Any) -> None:
        """Check the options' values without loading anything (the suite validator calls this): :attr:`Params`."""
        params.pop("template", None)  # taken beside the options
        cls.Params.check(model=model, **params)

    def params(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "revision": self.revision,
            "weights": self.weights,
            "max_new_tokens": self.max_new_tokens,
            "max_input_tokens": self.max_input_tokens,
            "chat_template": self.chat_template,
            "decoding": "greedy",
        }

    def prompt(self, request: ReaderRequest) -> str:
        """The exact text fed to the tokenizer (chat template applied when there is one)."""
        if self.chat_template:
            return cast(
                str,
                self.hf_tokenizer.apply_chat_template(
                    self.template.messages(request.question, request.units), add_generation_prompt=True, tokenize=False
                ),
            )
        return self.template.render(request.question, request.units)

    def _encode(self, text: str) -> list[int]:
        # A chat template writes its own special tokens (BOS); a plain prompt gets the tokenizer's.
        return list(self.hf_tokenizer(text, add_special_tokens=not self.chat_template)["input_ids"])

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        reqs = check_requests(requests)
        results: list[ReaderOutput | None] = [None] * len(reqs)
        encoded: list[tuple[int, list[int]]] = []
        for i, req in enumerate(reqs):
            try:
                ids = self._encode(self.prompt(req))
            except Exception as e:  # noqa: BLE001 - a template the tokenizer rejects: a status, not a crash
                results[i] = ReaderOutput(
                    "", "reader_error", None, f"could not build the prompt: {type(e).__name__}: {e}"
                )
                continue
            if self.max_input_tokens is not None and len(ids) > self.max_input_tokens:
                results[i] = ReaderOutput(
                    "",
                    "prompt_overflow",
                    len(ids),
                    f"prompt has {len(ids)} tokens; the limit is {self.max_input_tokens} "
                    f"(context minus max_new_tokens={self.max_new_tokens}); lower the budget or raise max_input_tokens",
                )
                continue
            encoded.append((i, ids))
        encoded.sort(key=lambda x: (-len(x[1]), x[0]))
        torch = self._torch
        pad = self.hf_tokenizer.pad_token_id
        for b in range(0, len(encoded), self.batch_size):
            batch = encoded[b : b + self.batch_size]
            width = max(len(ids) for _, ids in batch)
            input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, (_, ids) in enumerate(batch):
                if ids:
                    input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                    mask[row, width - len(ids) :] = 1
            try:
                with torch.inference_mode():
                    out = self.model.generate(
                        input_ids=input_ids.to(self.device),
                        attention_mask=mask.to(self.device),
                        max_new_tokens=self.max_new_tokens,
                        do_sample=False,
                        num_beams=1,
                        pad_token_id=pad,
                    )
            except Exception as e:  # noqa: BLE001 - any generation failure is the batch's reader_error status
                for i, ids in batch:
                    results[i] = ReaderOutput(
                        "", "reader_error", len(ids), f"generation failed: {type(e).__name__}: {e}"
                    )
                continue
            new = out[:, width:].cpu()
            for row, (i, ids) in enumerate(batch):
                text = cast(str, self.hf_tokenizer.decode(new[row].tolist(), skip_special_tokens=True)).strip()
                results[i] = ReaderOutput(text, "ok", len(ids))
        return [r for r in results if r is not None]
