"""The llamacpp reader: a GGUF causal LM run in-process by llama.cpp (``pip install 'rageval[llamacpp]'``).

``LlamaCppReader("smollm2")`` (or a ``.gguf`` path) loads the file with llama-cpp-python
(:class:`rageval.llamacpp.LlamaCppModel`).  Each request's messages go through the
file's chat template; decoding is greedy (``temperature=0``, ``repeat_penalty=1.0``),
one request at a time, through ``create_chat_completion`` — the code path of
``llama_cpp.server``, so the ``openai`` reader pointed at that server answers the same.
``input_tokens`` is llama.cpp's count of the prompt (``usage.prompt_tokens``).  A prompt
longer than ``max_input_tokens`` (default ``n_ctx - max_new_tokens``) is
``prompt_overflow`` with its token count and is not generated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, field_validator

from rageval.llamacpp import LlamaCppModel
from rageval.readers.base import Reader, ReaderOutput, ReaderRequest, check_requests
from rageval.readers.spec import ReaderParams, non_empty_text, positive_int
from rageval.readers.template import PromptTemplate

__all__ = ["LlamaCppParams", "LlamaCppReader"]


class LlamaCppParams(ReaderParams):
    """The llamacpp reader's options (checked without loading anything)."""

    what = "llamacpp reader"

    model: str = Field(description="a .gguf file, or a named model (smollm2: rageval.lm)")
    max_new_tokens: int = Field(256, description="tokens generated at most (greedy)")
    n_ctx: int = Field(4096, description="llama.cpp's context size (prompt and answer)")
    n_threads: int | None = Field(None, description="CPU threads (default: llama.cpp's choice)")
    max_input_tokens: int | None = Field(None, description="prompt limit (default: n_ctx minus max_new_tokens)")

    _positive = field_validator("max_new_tokens", "n_ctx", mode="before")(positive_int)
    _model = field_validator("model", mode="before")(non_empty_text)

    @field_validator("n_threads", "max_input_tokens", mode="before")
    @classmethod
    def _optional_positive(cls, value: Any, info: Any) -> Any:
        return value if value is None else positive_int(cls, value, info)


class LlamaCppReader(Reader):
    """Greedy generation with a GGUF model in llama.cpp, in-process."""

    name = "llamacpp"
    needs_model = True
    Params = LlamaCppParams

    def __init__(
        self,
        model: str,
        *,
        template: PromptTemplate | Mapping[str, Any] | None = None,
        max_new_tokens: int = 256,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        max_input_tokens: int | None = None,
        tokenizer: Any = "regex",
    ):
        super().__init__(template=template, tokenizer=tokenizer)
        self.check_params(
            model, max_new_tokens=max_new_tokens, n_ctx=n_ctx, n_threads=n_threads, max_input_tokens=max_input_tokens
        )
        self.model_name, self.max_new_tokens = model, max_new_tokens
        self.lm = LlamaCppModel(model, n_ctx=n_ctx, n_threads=n_threads, what="the llamacpp reader")
        self.max_input_tokens = max_input_tokens if max_input_tokens is not None else n_ctx - max_new_tokens

    @classmethod
    def check_params(cls, model: Any, **params: Any) -> None:
        """Check the options' values without loading anything (the suite validator calls this)."""
        params.pop("template", None)
        cls.Params.check(model=model, **params)

    def params(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "weights": self.lm.identity,
            "max_new_tokens": self.max_new_tokens,
            "max_input_tokens": self.max_input_tokens,
            "decoding": "greedy",
        }

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        return [self._one(r) for r in check_requests(requests)]

    def _one(self, req: ReaderRequest) -> ReaderOutput:
        try:
            messages = self.template.messages(req.question, req.units)
            n = len(self.lm.prompt_tokens(messages))
        except Exception as e:  # noqa: BLE001 - a template the chat template rejects: a status, not a crash
            return ReaderOutput("", "reader_error", None, f"could not build the prompt: {type(e).__name__}: {e}")
        if n > self.max_input_tokens:
            return ReaderOutput(
                "",
                "prompt_overflow",
                n,
                f"prompt has {n} tokens; the limit is {self.max_input_tokens} "
                f"(n_ctx minus max_new_tokens={self.max_new_tokens}); lower the budget or raise n_ctx",
            )
        try:
            text, used, _ = self.lm.chat(messages, self.max_new_tokens)
        except Exception as e:  # noqa: BLE001 - a generation failure is this request's reader_error status
            return ReaderOutput("", "reader_error", n, f"generation failed: {type(e).__name__}: {e}")
        return ReaderOutput(text.strip(), "ok", used)
