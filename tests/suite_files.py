"""A one-setting suite file on the shipped HotpotQA sample, for tests that vary its reader and judge."""

from __future__ import annotations

from pathlib import Path


def one_setting_suite(tmp_path: Path, reader: str, judge: str = "{spec: lexical}") -> Path:
    """``s.yaml`` in ``tmp_path``: 2 questions, BM25 top 3, identity, the given reader and judge sections."""
    p = tmp_path / "s.yaml"
    p.write_text(f"""\
name: s
dataset: {{name: hotpotqa, limit: 2}}
retrieval: {{method: bm25, k: 3}}
settings:
  - {{compressor: identity}}
reader: {reader}
judge: {judge}
output_dir: {tmp_path / "out"}
""")
    return p
