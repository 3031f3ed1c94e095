"""A commit message's first line: at most 72 characters, then a blank line before any detail.

The commit-msg hook of .pre-commit-config.yaml runs it on the message file: exit 1 with one line when the
subject is too long or the detail follows it with no blank line."""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 72


def problem(message: str) -> str:
    """'' when the message is fine, else what is wrong with it, in one line."""
    lines = [line for line in message.splitlines() if not line.startswith("#")]
    subject = lines[0] if lines else ""
    if not subject.strip():
        return "the commit message has no subject line"
    if len(subject) > LIMIT:
        return f"the subject is {len(subject)} characters; keep it to {LIMIT} and put the detail in the body"
    if len(lines) > 1 and lines[1].strip():
        return "leave a blank line between the subject and the body"
    return ""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: commit_subject.py MESSAGE_FILE", file=sys.stderr)
        return 2
    why = problem(Path(argv[0]).read_text(encoding="utf-8", errors="replace"))
    if why:
        print(f"commit-msg: {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
