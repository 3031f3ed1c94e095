"""What several commands share: the run store option and the exit codes.

Exit codes of `litm` (README lists them):
  0   success: every trial ran and was scored
  1   the command could not do its work: bad input, config, task file, run store, missing key
      (one line on stderr, starting with "litm: ")
  2   the command line itself is wrong (unknown option, missing argument)
  3   the sweep ran to the end but some trials ended in error (rerun with --retry-errors)
  4   the sweep stopped before the end: its first trials all failed alike (a refused key, an unknown
      model), the budget ran out, or it was cancelled
  130 interrupted (Ctrl-C); 141 the reader of stdout went away (`litm results | head`), quietly
"""

from __future__ import annotations

from pathlib import Path

DB_HELP = "run store (default: $LITM_DB, else ~/.local/share/litm-explorer/litm.sqlite: the app's store)"
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_TRIAL_ERRORS, EXIT_STOPPED = 0, 1, 2, 3, 4
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141


def add_db(parser) -> None:
    parser.add_argument("--db", default=None, help=DB_HELP)


def db_path(args) -> Path:
    from components.run.store import default_path

    return Path(args.db).expanduser() if args.db else default_path()


def warn_bad_rows(source, errors: list) -> None:
    """One line on stderr saying how many task rows were left out, and why the first one was."""
    import sys

    if errors:
        line, why = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        print(
            f"litm: {source}: {len(errors)} task row(s) could not be read and are left out; "
            f"line {line}: {why}{more}",
            file=sys.stderr,
        )
