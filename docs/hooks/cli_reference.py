"""The CLI reference, generated from the argparse parsers of components/cli (so it cannot drift from
`litm <command> --help`): an MkDocs hook that fills docs/cli.md's marker when the site is built, and
`reference()` for tests/test_docs.py, which checks each block against the real `--help` output."""

from __future__ import annotations

import argparse
import os
from contextlib import contextmanager

MARKER = "<!-- cli-reference -->"
WIDTH = "100"  # argparse wraps help text at $COLUMNS; the reference and the test both use this


@contextmanager
def columns(width: str = WIDTH):
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of a parser's subcommands, in the order they were added."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            out += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return out


def commands() -> list[tuple[list[str], str, str]]:
    """(argv after `litm`, one-line help, the --help text) for every command and subcommand."""
    from components.cli import build_parser

    out = []
    with columns():
        root = build_parser()
        out.append(([], root.description or "", root.format_help()))
        for name, short, sub in _subcommands(root):
            out.append(([name], short, sub.format_help()))
            for name2, short2, sub2 in _subcommands(sub):
                out.append(([name, name2], short2, sub2.format_help()))
    return out


def reference() -> str:
    parts = []
    for argv, short, text in commands():
        level = "##" if len(argv) <= 1 else "###"
        title = " ".join(["litm", *argv])
        parts.append(f"{level} `{title}`\n\n{short[:1].upper() + short[1:]}\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files):  # noqa: ARG001 - MkDocs hook signature
    if MARKER in markdown:
        return markdown.replace(MARKER, reference())
    return markdown
