"""What several commands share: the run store option."""

from __future__ import annotations

from pathlib import Path

DB_HELP = "run store (default: $LITM_DB, else ~/.local/share/litm-explorer/litm.sqlite: the app's store)"


def add_db(parser) -> None:
    parser.add_argument("--db", default=None, help=DB_HELP)


def db_path(args) -> Path:
    from components.run.store import default_path

    return Path(args.db).expanduser() if args.db else default_path()
