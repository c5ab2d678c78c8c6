"""The in-process LLM judge: a causal LM asked the LLM judge's yes/no question, scored from its log-probabilities.

``get_judge("llm:smollm2")`` (or ``llm:<file.gguf>``, ``llm:<folder or hub id>``) asks the
model the question the OpenAI-compatible judge asks a server —
:func:`rageval.judges.openai_compat.judge_messages`: the same system prompt, the
premise and claim fenced in tags, version
:data:`~rageval.judges.openai_compat.PROMPT_VERSION` — through the model's chat
template with the generation prompt added, and reads the **first answer token's**
distribution: the ``top_logprobs`` most probable tokens (a log-softmax over the whole
vocabulary; nothing is generated) go through the same rule,
:func:`~rageval.judges.openai_compat.probability_from_logprobs`
(``P(yes) = Σ p_yes / (Σ p_yes + Σ p_no)`` over the variants ``Yes``, `` yes``, …).
Top tokens with neither answer: an **abstention** (NaN), counted (``off_label``).
A pair whose most probable first token opens a reasoning block (``<think>``:
nothing is generated, so an answer after it is never read) is counted as
``reasoning``: a reasoning model that abstains on every pair says why.

``engine``: ``llamacpp`` (default; llama.cpp in-process, the ``llamacpp`` extra; a
``.gguf`` file or a named model) or ``transformers`` (any causal LM through
:func:`rageval.lm.load_causal_lm`, a GGUF file de-quantized to float32).  The two
engines' probabilities differ in the last digits (quantized kernels against fp32), so
the engine is part of the :attr:`CausalLMJudge.id` (the cache key), beside the model,
the weights' sha256 (GGUF), the prompt version and the rule.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rageval.judges.openai_compat import PROMPT_VERSION, judge_messages, probability_from_logprobs
from rageval.judges.registry import LLM_PARAMS
from rageval.judges.replies import opens_reasoning
from rageval.llamacpp import LlamaCppModel
from rageval.lm import load_causal_lm

__all__ = ["ENGINES", "LLM_PARAMS", "CausalLMJudge"]

ENGINES = ("llamacpp", "transformers")


class CausalLMJudge:
    """Yes/no entailment questions to a causal LM run here; see the module doc for the rule."""

    def __init__(
        self,
        model: str,
        *,
        engine: str = "llamacpp",
        top_logprobs: int = 20,
        gguf_file: str | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        dtype: str | None = None,
        device: str | None = None,
        batch_size: int | None = None,
    ):
        if engine not in ENGINES:
            raise ValueError(f"llm judge: engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        for name, value in (("top_logprobs", top_logprobs), ("n_ctx", n_ctx)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"llm judge: {name} must be a positive integer, got {value!r}")
        self.engine, self.top_logprobs = engine, top_logprobs
        self.batch_size = batch_size or 16
        self.uses_torch = engine == "transformers"
        if engine == "llamacpp":
            if gguf_file is not None:
                raise ValueError("llm judge: gguf_file is for engine transformers; give llamacpp the .gguf path")
            self._llama: Any = LlamaCppModel(model, n_ctx=n_ctx, n_threads=n_threads, what="the llm judge")
            weights = self._llama.identity
        else:
            self._tok, self._model, weights = load_causal_lm(
                model, gguf_file=gguf_file, dtype=dtype, what="the llm judge", otherwise="or use --judge lexical"
            )
            self._device = device or "cpu"
            self._model.to(self._device).eval()
        self.weights = weights
        digest = (weights.get("sha256") or "")[:16]
        self.id = (
            f"llm:{model}" + (f"|sha256={digest}" if digest else "") + f"|engine={engine}"
            f"|prompt={PROMPT_VERSION}|p=yesno-logprobs-top{top_logprobs}"
        )
        self._lock = threading.Lock()
        self._counts = {"from_logprobs": 0, "off_label": 0, "reasoning": 0}

    def top_tokens(self, premise: str, hypothesis: str) -> list[tuple[str, float]]:
        """The ``top_logprobs`` most probable first answer tokens of one pair, as ``(text, log-probability)``."""
        messages = judge_messages(premise, hypothesis)
        if self.engine == "llamacpp":
            return list(self._llama.next_token_logprobs(messages, self.top_logprobs))
        return self._transformers_top(messages)

    def _transformers_top(self, messages: Sequence[Mapping[str, str]]) -> list[tuple[str, float]]:
        import torch

        enc = self._tok.apply_chat_template(
            list(messages), add_generation_prompt=True, return_dict=True, return_tensors="pt"
        )
        with torch.inference_mode():
            logits = self._model(**{k: v.to(self._device) for k, v in enc.items()}).logits[0, -1].float()
        logp = torch.log_softmax(logits, dim=-1)
        values, ids = torch.topk(logp, self.top_logprobs)
        return [(str(self._tok.decode([int(i)])), float(v)) for v, i in zip(values.tolist(), ids.tolist())]

    def predict(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        """P(yes) per pair.  llama.cpp takes the pairs grouped by premise (the prompt puts the premise first), so
        consecutive prompts share the longest prefix whose cache it keeps; the values do not depend on the order
        (the same bits as one pair at a time)."""
        order: list[int] = list(range(len(premises)))
        if self.engine == "llamacpp":
            order = sorted(order, key=lambda i: premises[i])  # stable: equal premises keep their order
        out = [math.nan] * len(premises)
        for i in order:
            top = self.top_tokens(premises[i], hypotheses[i])
            # a reasoning model's first token opens its <think> block: counted, so an abstaining model is explained
            reasoning = bool(top) and opens_reasoning(top[0][0])
            prob = probability_from_logprobs(top)
            with self._lock:
                self._counts["from_logprobs"] += 1
                self._counts["off_label"] += math.isnan(prob)
                self._counts["reasoning"] += reasoning
            out[i] = prob
        return out

    def stats(self) -> dict[str, int]:
        """``from_logprobs`` (pairs scored), ``off_label`` (abstentions: no yes/no among the top tokens) and
        ``reasoning`` (pairs whose most probable first token opens a ``<think>`` block: a reasoning model, whose
        answer comes after text this judge does not generate; its yes/no alternatives, if any, still decide)."""
        with self._lock:
            return dict(self._counts)

    def __repr__(self) -> str:
        return f"CausalLMJudge({self.id!r})"
