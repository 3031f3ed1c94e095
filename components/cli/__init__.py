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
    "doctor": "components.cli.doctor",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, no usage dump
        print(f"litm: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="litm", description="LITM Explorer: lost-in-the-middle prompts, sweeps and results."
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, module in COMMANDS.items():
        importlib.import_module(module).add_parser(sub, name)
    return parser


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else exc.__class__.__name__


def _quiet_stdout() -> None:
    """The reader went away (`litm results | head`): send what is left of stdout nowhere, so the
    interpreter's final flush does not complain either."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run one command; every error a user can cause is one line on stderr (exit codes: cli.common)."""
    import sqlite3

    from components.cli.common import EXIT_BROKEN_PIPE, EXIT_ERROR, EXIT_INTERRUPTED

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("litm: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except sqlite3.DatabaseError as exc:
        print(
            f"litm: the run store cannot be used ({_line(exc)}): is it a LITM run store, and complete?",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except (ValueError, OSError, LookupError) as exc:
        print(f"litm: {_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        print("litm: out of memory: the input is too large", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a user never sees a traceback; LITM_DEBUG=1 shows it
        import os

        if os.environ.get("LITM_DEBUG"):
            raise
        from components.providers.base import ProviderError

        prefix = "" if isinstance(exc, ProviderError) else f"unexpected error ({exc.__class__.__name__}): "
        print(
            f"litm: {prefix}{_line(exc)} (LITM_DEBUG=1 shows the details)"
            if prefix
            else f"litm: {_line(exc)}",
            file=sys.stderr,
        )
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
