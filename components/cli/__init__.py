"""`litm`: the command line. Each subcommand lives in its own module with `add_parser(sub)` and
`run(args) -> int`; this file only wires them up and turns every expected error into one line."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand name -> module that implements it
COMMANDS = {
    "prompt": "components.cli.prompt",
    "score": "components.cli.score",
    "tasks": "components.cli.tasks",
    "sweep": "components.cli.sweep",
    "results": "components.cli.results",
    "compare": "components.cli.compare",
    "import": "components.cli.import_runs",
    "app": "components.cli.app",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, no usage dump
        print(f"litm: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="litm", description="LITM Explorer: lost-in-the-middle prompts, sweeps and results.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, module in COMMANDS.items():
        importlib.import_module(module).add_parser(sub, name)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("litm: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError, LookupError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        print(f"litm: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
