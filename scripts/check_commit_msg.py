"""The commit-msg hook (.pre-commit-config.yaml): a commit's subject line holds at most 72 characters.

Usage: python scripts/check_commit_msg.py MESSAGE_FILE  (git passes the file holding the message).
The subject is the message's first line that is not a comment (git drops lines starting with "#").
Exit 0 when the subject fits, 1 (with one line saying by how much) when it does not.
"""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 72


def subject(message: str) -> str:
    """The first line git keeps: not blank, not a comment."""
    for line in message.splitlines():
        if line.strip() and not line.startswith("#"):
            return line.rstrip()
    return ""


def check(message: str, limit: int = LIMIT) -> str | None:
    """None when the subject fits, else the one-line reason."""
    line = subject(message)
    if len(line) <= limit:
        return None
    return (
        f"commit subject is {len(line)} characters, over the limit of {limit}: shorten it and put the detail "
        f"in the body (after a blank line): {line[:limit]}..."
    )


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: check_commit_msg.py MESSAGE_FILE", file=sys.stderr)
        return 2
    problem = check(Path(argv[1]).read_text(encoding="utf-8"))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
