"""Where the arena keeps its data.

The data directory is, in order of precedence: ``--data-dir``, the
environment variable ``KAHUNA_ARENA_DATA``, else ``$XDG_DATA_HOME/kahuna-arena``
(``~/.local/share/kahuna-arena`` when XDG_DATA_HOME is unset). A per-user
location rather than ``./.arena`` so that every command finds the same
leaderboard whatever the working directory. It is created on first use,
mode 0700 (an existing one is made 0700 when opened: the database holds
token hashes), with ``arena.db`` and its ``-wal``/``-shm`` files 0600:

    arena.db          SQLite database (WAL mode)
    bots/NAME/VERSION the stored copy of each bot version's files
    java-cds/NAME/VERSION/KEY.jsa
                      a Java bot version's class-data archive for this JDK, made by
                      the arena (arena/sandbox/javacds.py); `arena bot check` keeps
                      those of the directories it checks here too
    admin.token       the admin bearer token of `arena serve` (mode 0600)
    leases/tournament-ID.lock
                      a tournament runner's lease: flock held while a process
                      runs the tournament, with its pid (arena.store.lease)
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_DATA_DIR = "KAHUNA_ARENA_DATA"
DATABASE_NAME = "arena.db"
BOTS_DIR_NAME = "bots"
ADMIN_TOKEN_NAME = "admin.token"
LEASES_DIR_NAME = "leases"


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data directory to use (not created here)."""
    if explicit:
        return Path(explicit).expanduser()
    from_env = os.environ.get(ENV_DATA_DIR)
    if from_env:
        return Path(from_env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "kahuna-arena"
