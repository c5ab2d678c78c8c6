"""Reading a chat-completions response strictly (the OpenAI API's shape), for the reader and the LLM judge.

* **The choice**: the one whose ``index`` is 0 (:func:`first_choice`).  The API numbers
  its choices; a server that omits every ``index`` has its first choice read.  A list
  whose choices carry indexes but none 0 (``choices[0]`` of index 2), or two of index
  0, has no answer to read: the caller reports it, never another choice's text.
* **finish_reason**: ``stop`` (the answer ended), ``length`` (cut at ``max_tokens``: the
  answer is incomplete), ``content_filter`` (content withheld by the server),
  ``tool_calls`` / ``function_call`` (a call instead of text); its value is returned as
  sent (:func:`finish_reason`) and the caller decides.
* **usage**: a token count is a non-negative integer of at most
  :data:`MAX_USAGE_TOKENS` (no served model's context holds more); anything else (a
  float, a bool, text, ``-1``, ``10**30``) is not a count (:func:`usage_count`).
* **model**: the served model's name as the reply states it (:func:`served_model`),
  a string of at most 200 characters kept (longer ones are cut, marked ``…``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["FINISH_REASONS", "MAX_USAGE_TOKENS", "finish_reason", "first_choice", "served_model", "usage_count"]

#: the finish reasons the API documents
FINISH_REASONS = ("stop", "length", "content_filter", "tool_calls", "function_call")

#: the largest token count a reply's ``usage`` may state (100 million: no served model's context holds more)
MAX_USAGE_TOKENS = 10**8


def _is_zero(index: Any) -> bool:
    return isinstance(index, int) and not isinstance(index, bool) and index == 0


def first_choice(resp: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``(the choice of index 0, None)``, or ``(None, why there is none)``.

    >>> first_choice({"choices": [{"index": 2, "message": {}}, {"index": 0, "message": {"content": "a"}}]})
    ({'index': 0, 'message': {'content': 'a'}}, None)
    >>> first_choice({"choices": [{"message": {"content": "a"}}]})  # no index at all: the first
    ({'message': {'content': 'a'}}, None)
    >>> first_choice({"choices": [{"index": 2, "message": {}}]})[1]
    'no choice of index 0 (the choices carry index 2)'
    """
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if not isinstance(choices, list) or not choices:
        return None, "no choices"
    dicts = [c for c in choices if isinstance(c, dict)]
    indexed = [c for c in dicts if "index" in c]
    if not indexed:  # a server that numbers nothing: its first choice
        first = choices[0]
        return (first, None) if isinstance(first, dict) else (None, "choices[0] is not an object")
    zero = [c for c in indexed if _is_zero(c.get("index"))]
    if len(zero) == 1:
        return zero[0], None
    if not zero:
        seen = ", ".join(repr(c.get("index"))[:20] for c in indexed[:5])
        return None, f"no choice of index 0 (the choices carry index {seen})"
    return None, f"{len(zero)} choices of index 0"


def finish_reason(choice: dict[str, Any]) -> str | None:
    """The choice's ``finish_reason`` when it is text (None when absent or not text)."""
    value = choice.get("finish_reason")
    return value if isinstance(value, str) else None


def usage_count(resp: Any, field: str) -> tuple[int | None, Any]:
    """``(count, None)`` for ``usage[field]`` when it is a count (module doc), ``(None, the value)`` when it is
    present but no count, ``(None, None)`` when absent.

    >>> usage_count({"usage": {"prompt_tokens": 321}}, "prompt_tokens"), usage_count({}, "prompt_tokens")
    ((321, None), (None, None))
    >>> usage_count({"usage": {"prompt_tokens": 10**30}}, "prompt_tokens")[0]
    """
    usage = resp.get("usage") if isinstance(resp, dict) else None
    if not isinstance(usage, dict) or usage.get(field) is None:
        return None, None
    value = usage[field]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS:
        return value, None
    return None, value


def served_model(resp: Any) -> str | None:
    """The reply's ``model`` (the model that served it), None when absent, empty or not text."""
    value = resp.get("model") if isinstance(resp, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    return value if len(value) <= 200 else value[:199] + "…"
