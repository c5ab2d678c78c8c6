"""llama.cpp in-process (``llama-cpp-python``, the ``llamacpp`` extra): one GGUF model, its chat template, greedy
chat completions and next-token log-probabilities.

:class:`LlamaCppModel` is what the ``llamacpp`` reader and the ``llm:`` judge's llamacpp
engine run on.  A chat prompt is rendered by the GGUF file's own chat template with
llama-cpp-python's ``Jinja2ChatFormatter`` and tokenized as its chat handler does
(``special=True``, no extra BOS), so :meth:`LlamaCppModel.prompt_tokens` counts exactly
what :meth:`LlamaCppModel.chat` (``create_chat_completion``, the code path of
``llama_cpp.server``) evaluates.  Decoding is greedy: ``temperature=0`` and
``repeat_penalty=1.0`` (llama-cpp-python's server defaults to 1.1, which is not greedy;
the ``openai`` reader sends ``extra_body: {repeat_penalty: 1.0}`` for the same text).

Importing this module is cheap; llama_cpp is imported when a model is built.

A model is closed (:meth:`LlamaCppModel.close`: llama.cpp's model, context and batch freed) explicitly, or at
the latest by an ``atexit`` hook, before the interpreter tears its modules down: a ``Llama`` still open then
(the judge's is held by a cache for the process's life) is freed by its ``__del__`` after ``llama_cpp``'s own
globals are gone, which prints an ``Exception ignored in: <function Llama.__del__>`` traceback at every exit.
"""

from __future__ import annotations

import atexit
import math
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rageval.errors import require
from rageval.lm import resolve

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["GREEDY", "LlamaCppModel", "close_all"]

#: the sampling options of greedy decoding in llama-cpp-python (passed to every completion)
GREEDY: dict[str, Any] = {"temperature": 0.0, "repeat_penalty": 1.0}


#: the models not yet closed (weakly: a model nobody holds is freed as usual), closed by :func:`close_all`
_OPEN: weakref.WeakSet[LlamaCppModel] = weakref.WeakSet()


def close_all() -> None:
    """Close every model still open (registered with ``atexit``, so it runs before the interpreter shuts down)."""
    for model in list(_OPEN):
        model.close()


atexit.register(close_all)


class LlamaCppModel:
    """A GGUF file loaded by llama.cpp (``model``: a ``.gguf`` path or a named model such as ``smollm2``).

    Calls are serialised by a lock (a llama.cpp context runs one sequence at a time)."""

    def __init__(self, model: str, *, n_ctx: int = 4096, n_threads: int | None = None, what: str = "llama.cpp"):
        gguf = resolve(model)
        if gguf is None or gguf.path is None:
            raise ValueError(f"{what}: 'model' must be a .gguf file or a named model (smollm2), got {model!r}")
        require("llama_cpp", what=what, otherwise="or use the transformers backend")
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.path = gguf.path
        self.n_ctx = n_ctx
        self.llm = llama_cpp.Llama(model_path=str(gguf.path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
        self.identity = {**gguf.identity(None), "engine": f"llama.cpp (llama-cpp-python {llama_cpp.__version__})"}
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"{what}: {gguf.filename} carries no chat template (tokenizer.chat_template)")

        def text(token_id: int) -> str:
            return self.llm.detokenize([token_id], special=True).decode("utf-8", "replace") if token_id >= 0 else ""

        self._formatter = Jinja2ChatFormatter(
            template=template, eos_token=text(self.llm.token_eos()), bos_token=text(self.llm.token_bos())
        )
        self._lock = threading.Lock()
        _OPEN.add(self)

    def close(self) -> None:
        """Free llama.cpp's model, context and batch now (``Llama.close``); a second call does nothing."""
        with self._lock:
            if self in _OPEN:
                _OPEN.discard(self)
                self.llm.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open_llm(self) -> Any:
        """The ``Llama`` (with the lock held), or an error once closed: a freed context must not be used."""
        if self not in _OPEN:
            raise RuntimeError(f"{self.path.name}: this llama.cpp model was closed")
        return self.llm

    def render(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The prompt text of chat ``messages`` (the file's chat template, generation prompt added)."""
        return str(self._formatter(messages=list(messages)).prompt)  # type: ignore[arg-type]  # plain dicts

    def prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        """The token ids llama.cpp evaluates for chat ``messages`` (as its chat handler tokenizes them)."""
        return list(self.llm.tokenize(self.render(messages).encode("utf-8"), add_bos=False, special=True))

    def chat(self, messages: Sequence[Mapping[str, str]], max_tokens: int) -> tuple[str, int, str | None]:
        """Greedy ``(text, prompt_tokens, finish_reason)`` of one chat completion (``create_chat_completion``)."""
        with self._lock:
            out = self._open_llm().create_chat_completion(messages=list(messages), max_tokens=max_tokens, **GREEDY)  # type: ignore[arg-type]
        choice = out["choices"][0]  # type: ignore[index]
        return str(choice["message"]["content"] or ""), int(out["usage"]["prompt_tokens"]), choice["finish_reason"]  # type: ignore[index]

    def _eval_reusing_prefix(self, tokens: Sequence[int]) -> int:
        """Evaluate ``tokens``, keeping the cached keys and values of the longest prefix they share with what the
        context last evaluated (as llama.cpp's own completions do; at least the last token is evaluated, so its
        logits are fresh).  The logits are the same bits as a fresh evaluation's
        (``tests/test_smollm2.py``).  Returns the number of tokens reused.  Call with the lock held."""
        llm = self.llm
        n = min(llm.n_tokens, len(tokens) - 1)
        cached = llm.input_ids[:n].tolist()
        k = 0
        while k < n and cached[k] == tokens[k]:
            k += 1
        llm.n_tokens = k  # eval drops the cache from here on
        llm.eval(tokens[k:])
        return k

    def next_token_logprobs(self, messages: Sequence[Mapping[str, str]], k: int) -> list[tuple[str, float]]:
        """The ``k`` most probable first answer tokens of chat ``messages`` as ``(token text, log-probability)``
        (a log-softmax over the whole vocabulary; the prompt is evaluated, nothing is generated)."""
        import llama_cpp
        import numpy as np

        tokens = self.prompt_tokens(messages)
        with self._lock:
            self._open_llm()
            self._eval_reusing_prefix(tokens)
            ptr = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
            logits = np.ctypeslib.as_array(ptr, shape=(self.llm.n_vocab(),)).astype(np.float64)
        top = logits.max()
        logz = top + math.log(float(np.exp(logits - top).sum()))
        best = np.argsort(-logits, kind="stable")[:k]
        return [
            (self.llm.detokenize([int(i)], special=True).decode("utf-8", "replace"), float(logits[i] - logz))
            for i in best
        ]
