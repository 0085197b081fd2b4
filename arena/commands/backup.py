"""`arena backup DEST` and `arena restore SRC`: a data directory's backup while it is in use."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from arena.commands.pathargs import given_path
from arena.commands.storeargs import add_data_dir, fail
from arena.store import SchemaError, Store, StoreError, resolve_data_dir
from arena.store.backup import (
    BackupError,
    BackupRefusedError,
    BackupSummary,
    backup,
    mib,
    restore,
)

BACKUP_DESCRIPTION = (
    "Write a backup of the data directory to DEST, a new directory, while `arena serve`"
    " may be running: a consistent snapshot of arena.db (SQLite's online backup), the"
    " stored copy of every bot version it names, and admin.token. It is written under a"
    " temporary name beside DEST (.DEST.partial-*) and renamed to DEST only once checked"
    " (the database's integrity check, each bot copy hashing to its version): an"
    " interrupted or failed backup leaves no DEST, and the data directory is never"
    " written. Refused: a DEST that exists, one inside the data directory, one on a"
    " disk without room for the database and the bots' copies. Restore with `arena"
    " restore DEST --data-dir NEW` (docs/guide/operating.md, Backups)."
)
RESTORE_DESCRIPTION = (
    "Check the backup SRC (made by `arena backup`) and copy it to --data-dir, which must"
    " not exist or be empty (a data directory in use is never overwritten), then open it:"
    " an older backup is migrated as an older data directory is. Stop the server first,"
    " then start it on the restored directory."
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "backup", help="back up the data directory (safe while arena serve runs)",
        description=BACKUP_DESCRIPTION,
    )  # fmt: skip
    parser.add_argument("dest", metavar="DEST", type=given_path,
                        help="the backup directory to create (must not exist)")
    add_data_dir(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.set_defaults(func=run_backup)
    parser = subparsers.add_parser(
        "restore", help="restore a backup into a new data directory",
        description=RESTORE_DESCRIPTION,
    )  # fmt: skip
    parser.add_argument("source", metavar="SRC", type=given_path,
                        help="a backup directory made by arena backup")
    add_data_dir(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.set_defaults(func=run_restore)


def run_backup(args: argparse.Namespace) -> int:
    data_dir = resolve_data_dir(args.data_dir)
    try:
        summary = backup(data_dir, Path(args.dest))
    except (BackupError, StoreError, SchemaError) as error:
        refused = isinstance(error, BackupRefusedError)
        return fail(f"backup {'refused' if refused else 'failed'}: {error}")
    return _report("backed up", summary, args.json)


def run_restore(args: argparse.Namespace) -> int:
    data_dir = resolve_data_dir(args.data_dir)
    try:
        summary = restore(Path(args.source), data_dir)
        with Store.open(data_dir):  # migrated here if the backup is older than this arena
            pass
    except (BackupError, StoreError, SchemaError) as error:
        refused = isinstance(error, BackupRefusedError)
        return fail(f"restore {'refused' if refused else 'failed'}: {error}")
    return _report("restored", summary, args.json)


def _report(done: str, summary: BackupSummary, as_json: bool) -> int:
    if as_json:
        print(json.dumps({
            "path": str(summary.path), "schema_version": summary.schema_version,
            "games": summary.games, "bot_versions": summary.bot_versions,
            "bytes": summary.bytes, "seconds": round(summary.seconds, 3),
        }))  # fmt: skip
    else:
        print(f"{done} to {summary.path}: {summary.games} games, {summary.bot_versions} bot"
              f" versions, {mib(summary.bytes)}, checked"
              f" ({summary.seconds:.1f} s)")
    return 0
