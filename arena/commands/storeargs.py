"""What the store-backed commands share: ``--data-dir`` and opening the store."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from rich.console import Console

from arena.commands.pathargs import any_bytes, too_long
from arena.quoting import clipped, visible
from arena.store import (
    ENV_DATA_DIR,
    DamagedDatabaseError,
    FirstOpen,
    NotFoundError,
    SchemaError,
    StorageFullError,
    Store,
    StoreError,
    resolve_data_dir,
)
from arena.store.paths import DATABASE_NAME
from arena.tournament.policy.config import TournamentError

Handler = Callable[[argparse.Namespace], int]
FlagCheck = Callable[[argparse.Namespace], str | None]
"""What is wrong with a command's flags and arguments, in words (None: nothing), found
from them alone: no store is read or written to find it."""


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        type=_data_dir,
        help=f"arena data directory (default: ${ENV_DATA_DIR}, else ~/.local/share/kahuna-arena)",
    )


@any_bytes
def _data_dir(text: str) -> str:
    """``--data-dir``: an empty value (``--data-dir "$UNSET"``) would mean the default
    data directory, someone else's store perhaps: refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty (an unset variable?): give a directory")
    if (problem := too_long(text)) is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


EXIT_BAD_FLAGS = 2
"""The exit status of a flag value refused before anything starts (argparse's too)."""


def fail(message: str, status: int = 1) -> int:
    """Say ``message`` as one line on standard error (a path's newline or escape sequence
    shown as ``\\uXXXX``: no name can break the line or drive the terminal); ``status``."""
    print(f"arena: {visible(message)}", file=sys.stderr)
    return status


def with_store(
    run: Callable[[Store, argparse.Namespace], int], *, existing: bool = False,
    flags: FlagCheck | None = None,
) -> Handler:
    """Open the store named by ``--data-dir``; turn refusals into one-line errors.

    ``flags``: the command's own checks of its flags, run before the store is opened,
    so that a refused command line leaves no data directory (or empty store) behind;
    its problem exits ``EXIT_BAD_FLAGS`` in one line.
    ``existing``: a command that only reads or changes what is stored refuses a data
    directory without a database, so that a mistyped ``--data-dir`` is said to be one
    instead of becoming a new, empty store that answers "nothing here".
    A command refused after the open (a bot not stored, a smoke match failed, a port in
    use) takes away what its open made (``FirstOpen.undo``): the data directory, or the
    database in one that held none, while they hold nothing and no other process has them
    open; so that check holds for what follows a refusal too.
    """

    def handler(args: argparse.Namespace) -> int:
        if flags is not None and (problem := flags(args)) is not None:
            return fail(problem, EXIT_BAD_FLAGS)
        if existing and (problem := _no_store(args.data_dir)) is not None:
            return fail(problem)
        first = FirstOpen.before(args.data_dir)
        status = 1  # also when an exception goes on up
        try:
            status = _on_store(run, args)
        finally:
            if status != 0:
                first.undo()
        return status

    return handler


def _on_store(run: Callable[[Store, argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``run`` on the store of ``--data-dir``, its refusals said in one line."""
    try:
        with Store.open(args.data_dir) as store:
            return run(store, args)
    except (NotFoundError, StoreError, SchemaError, TournamentError) as error:
        return fail(str(error.args[0]) if error.args else type(error).__name__)
    except StorageFullError as error:  # the write was rolled back: nothing of it is kept
        where = resolve_data_dir(args.data_dir)
        return fail(f"data directory {where} has no space left ({error.cause}); nothing was stored")
    except DamagedDatabaseError as error:  # the store writes nothing more
        return fail(str(error))


def _no_store(data_dir: str | None) -> str | None:
    """Why there is no store to read at ``data_dir`` (None: there is a database)."""
    where = resolve_data_dir(data_dir)
    try:
        if (where / DATABASE_NAME).is_file() or (where.exists() and not where.is_dir()):
            return None  # a database, or a file in the way: Store.open names the problem
    except OSError:  # a name too long, a directory that cannot be searched: Store.open says
        return None
    named = "--data-dir" if data_dir is not None else (
        f"${ENV_DATA_DIR}" if os.environ.get(ENV_DATA_DIR) else "the default data directory")
    return (f"no arena data directory at {clipped(str(where))} ({named}: it holds no"
            f" {DATABASE_NAME}); check the path, or store something first (arena bot add)")


def console() -> Console:
    """A rich console as wide as the terminal (or ``$COLUMNS``); where output goes to
    neither (a file, a pipe), 160 columns: wide enough for every column of the tables."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS", "").strip().isdigit():
        return Console()
    return Console(width=160)
