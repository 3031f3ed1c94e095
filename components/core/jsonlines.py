"""JSON lines as the format defines them: one JSON text per line, lines ended by "\\n" (a "\\r" before
it is JSON white space, so CRLF files read too). Never `str.splitlines()`: it also breaks at U+2028,
U+2029, U+0085, \\x1c-\\x1e, \\v and \\f, which JSON allows raw inside a string, so a valid file whose
text holds one of them would be cut in the middle of a string and refused."""

from __future__ import annotations

from collections.abc import Iterator


def numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) for every line of `text`, split on "\\n" only; blank lines included."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line of its own
    yield from enumerate(lines, 1)
