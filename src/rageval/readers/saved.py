"""The saved reader: answers read from a JSONL file (rescoring with no model calls).

One JSON object per line:

``{"question_id": "q1", "setting": "extractive@0.25", "answer": "Paris [1].", "input_tokens": 812}``

* ``question_id`` (required) and ``answer`` (required; ``output`` or ``prediction``
  are accepted as the same field, as in ALCE and FlashRAG result files).
* ``setting`` (optional): rows without it answer every setting of that question.
* ``status``/``error``/``input_tokens`` (optional): a saved failure stays a failure.

A question (and setting) with no saved answer comes back as ``reader_error`` with a
message naming the file, the question and the setting — never as an empty answer.

``format`` (one of :data:`rageval.data.formats.FORMATS`: ``generic``, ``alce``, ...) reads the answers
of a file ``rageval score`` reads instead (docs/score.md#suites-that-read-the-same-files):
its question ids as ``rageval score`` assigns them, the lines of one ``system``
(default: the file's only one), each answering every setting that uses the reader.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from rageval.data.formats.registry import FORMATS
from rageval.infiles import read_json_lines
from rageval.readers.base import READER_STATUSES, Reader, ReaderOutput, ReaderRequest, check_requests
from rageval.readers.spec import ReaderParams, non_empty_text
from rageval.readers.template import PromptTemplate

__all__ = ["SavedParams", "SavedReader"]

_ANSWER_KEYS = ("answer", "output", "prediction")


class SavedParams(ReaderParams):
    """The saved reader's options."""

    what = "saved reader"

    path: Any = Field(description="the answers file (JSONL, or a file `rageval score` reads with `format`)")
    format: str | None = Field(None, description=f"{' | '.join(FORMATS)}: a file `rageval score` reads")
    system: str | None = Field(None, description="the system whose lines answer (a file read with `format`)")

    _text = field_validator("format", "system", mode="before")(non_empty_text)

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: Any) -> Any:
        if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
            raise ValueError(f"saved reader: path must name the answers file, got {value!r}")
        return value

    @model_validator(mode="after")
    def _system_needs_format(self) -> SavedParams:
        if self.system is not None and self.format is None:
            raise ValueError("saved reader: `system` selects the lines of a file read with `format`; add format")
        return self


class SavedReader(Reader):
    """Look answers up by (question id, setting) in a JSONL file."""

    name = "saved"
    needs_model = False
    Params = SavedParams

    def __init__(
        self,
        path: str | Path,
        *,
        format: str | None = None,
        system: str | None = None,
        template: PromptTemplate | Mapping[str, Any] | None = None,
        tokenizer: Any = "regex",
    ):
        super().__init__(template=template, tokenizer=tokenizer)
        self.Params.check(path=path, format=format, system=system)
        self.path = Path(path)
        self.format, self.system = format, system
        if not self.path.exists():
            raise FileNotFoundError(
                f"saved reader: answers file not found: {self.path} (a JSONL file of "
                "{question_id, setting, answer} rows)"
            )
        self._rows: dict[tuple[str, str | None], dict[str, Any]] = {}
        self._by_question: dict[str, list[str | None]] = {}
        if format is not None:
            self._load_scored_file()
        else:
            self._load()

    def _load_scored_file(self) -> None:
        """The answers of one system of a file ``rageval score`` reads (see the module doc)."""
        from rageval.data.formats.suite_data import given_answers

        assert self.format is not None  # called only when a format was given (__init__)
        for qid, (text, tokens, where) in given_answers(str(self.path), self.format, system=self.system).items():
            self._rows[(qid, None)] = {
                "text": text,
                "status": "ok",
                "error": None,
                "input_tokens": tokens,
                "_line": where,
            }
            self._by_question.setdefault(qid, []).append(None)

    def _load(self) -> None:
        src = str(self.path)
        for lineno, value in read_json_lines(self.path, what="the saved reader's answers file"):
            where = f"{src}: line {lineno}"
            row = _json_object(value, where)
            qid = _question_id(row, where)
            text, status = _answer(row, where)
            setting = _setting(row, where)
            key = (qid, setting)
            if key in self._rows:
                raise ValueError(
                    f"{where}: a second answer for question {qid!r}"
                    + (f" and setting {setting!r}" if setting is not None else "")
                    + f" (first at line {self._rows[key]['_line']}); keep one row per question and setting"
                )
            self._rows[key] = {
                "text": text,
                "status": status,
                "error": row.get("error"),
                "input_tokens": _input_tokens(row, where),
                "_line": lineno,
            }
            self._by_question.setdefault(qid, []).append(setting)

    def __len__(self) -> int:
        return len(self._rows)

    def params(self) -> dict[str, Any]:
        if self.format is not None:
            return {"path": str(self.path), "format": self.format, "system": self.system}
        return {"path": str(self.path)}

    def _lookup(self, req: ReaderRequest) -> dict[str, Any] | str:
        qid, setting = req.question_id, req.setting
        if (qid, setting) in self._rows:
            return self._rows[(qid, setting)]
        if (qid, None) in self._rows:
            return self._rows[(qid, None)]
        have = self._by_question.get(qid)
        if not have:
            return f"no saved answer for question {qid!r} in {self.path}"
        if setting is None and len(have) == 1:
            return self._rows[(qid, have[0])]
        if setting is None:
            return (
                f"question {qid!r} has answers for several settings in {self.path} ({sorted(map(str, have))}); "
                "the request must name its setting"
            )
        return (
            f"no saved answer for question {qid!r} and setting {setting!r} in {self.path}; "
            f"saved settings for it: {sorted(map(str, have))}"
        )

    def generate(self, requests: Sequence[ReaderRequest]) -> list[ReaderOutput]:
        out = []
        for req in check_requests(requests):
            row = self._lookup(req)
            if isinstance(row, str):
                out.append(ReaderOutput("", "reader_error", self.count_prompt_tokens(req), row))
                continue
            tokens = row["input_tokens"]
            if tokens is None:
                tokens = self.count_prompt_tokens(req)
            out.append(ReaderOutput(row["text"], row["status"], int(tokens), row["error"]))
        return out


# -- one line of an answers file, field by field (each error names the file and the line) --------------------------


def _json_object(row: Any, where: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
    return row


def _question_id(row: Mapping[str, Any], where: str) -> str:
    qid = row.get("question_id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid:
        raise ValueError(f"{where}: missing field 'question_id' (expected the question's id string)")
    return qid


def _answer(row: Mapping[str, Any], where: str) -> tuple[str, str]:
    """The answer text (``answer``, ``output`` or ``prediction``; a saved failure may have none) and the status."""
    key_name = next((k for k in _ANSWER_KEYS if k in row), None)
    if key_name is None:
        raise ValueError(
            f"{where}: missing field 'answer' (expected the answer text; 'output' or 'prediction' are accepted too)"
        )
    text = row[key_name]
    status = row.get("status", "ok")
    if text is None and status != "ok":
        text = ""
    if not isinstance(text, str):
        raise ValueError(f"{where}: field {key_name!r} is {type(text).__name__}; expected a string")
    if status not in READER_STATUSES:
        raise ValueError(f"{where}: field 'status' is {status!r}; expected one of {READER_STATUSES}")
    return text, status


def _setting(row: Mapping[str, Any], where: str) -> str | None:
    setting = row.get("setting")
    if isinstance(setting, Mapping):  # a record's setting object
        setting = setting.get("name")
    if setting is not None and not isinstance(setting, str):
        raise ValueError(f"{where}: field 'setting' is {type(setting).__name__}; expected a string or absent")
    return setting


def _input_tokens(row: Mapping[str, Any], where: str) -> int | None:
    tokens = row.get("input_tokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0):
        raise ValueError(f"{where}: field 'input_tokens' is {tokens!r}; expected a non-negative integer or absent")
    return tokens
