"""``arena export``: the public games of a tournament, a ladder or the whole store, to Parquet.

Streaming: games are read a page at a time (``arena.store.export.stored_games``)
and written as record batches of at most ``batch_games`` games and
``batch_decisions`` decisions, so memory holds one batch whatever the store's
size. A game is exported only when ``arena.store.record_withheld`` says its
record is public now (the gate of the web's and the API's records): a game whose
deal is still to be played from the other seat is left out, and counted.
The files are written under temporary names and renamed once both are complete: an
interrupted export (a full disk as the last file is closed too) leaves no partial file
under the final names, and a previous export's pair as it was. Each export's temporary
names are its own (made new, never an existing file or link followed), and the pair is
renamed under a lock on the directory: two exports into one directory at once each write
their own files, and the directory ends with one export's pair, never a mix.
``write_games`` writes games from any source (``arena remote export`` streams them from
an arena).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from arena.export.tables import DECISIONS_SCHEMA, GAMES_SCHEMA, game_rows
from arena.store import Store, record_withheld
from arena.store.export import StoredGame, stored_games

GAMES_FILE = "games.parquet"
DECISIONS_FILE = "decisions.parquet"


@dataclass(frozen=True)
class ExportSummary:
    games: int
    decisions: int
    withheld: int  # stored games left out: not public yet
    games_path: Path
    decisions_path: Path


class _Sink:
    """One Parquet file written a record batch at a time, renamed into place at the end."""

    def __init__(self, path: Path, schema: pa.Schema, rows_per_batch: int) -> None:
        self.path = path
        self.partial = path.with_name(f".{path.name}.{secrets.token_hex(8)}.partial")
        self.schema = schema
        self.rows_per_batch = rows_per_batch
        self.rows: list[dict[str, Any]] = []
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        self.file = os.fdopen(os.open(self.partial, flags, 0o666), "wb")
        try:
            self.writer = pq.ParquetWriter(self.file, schema, compression="zstd")
        except BaseException:
            self.file.close()
            self.partial.unlink(missing_ok=True)
            raise

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.rows.extend(rows)
        if len(self.rows) >= self.rows_per_batch:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.writer.write_batch(pa.RecordBatch.from_pylist(self.rows, schema=self.schema))
            self.rows = []

    def finish(self) -> None:
        """Write the last rows and the footer, still under the partial name."""
        self.flush()
        self.writer.close()
        self.file.close()

    def publish(self) -> None:
        os.replace(self.partial, self.path)

    def abandon(self) -> None:
        with contextlib.suppress(Exception):  # a close that failed (a full disk) fails again
            self.writer.close()
        with contextlib.suppress(Exception):
            self.file.close()
        self.partial.unlink(missing_ok=True)


def export_public_games(
    store: Store,
    out_dir: Path,
    tournament_id: int | None = None,
    *,
    batch_games: int = 1000,
    batch_decisions: int = 20_000,
    public_before: str | None = None,
) -> ExportSummary:
    """Write ``games.parquet`` and ``decisions.parquet`` under ``out_dir`` (created);
    with ``public_before`` (a store stamp: now minus the spectator delay), a game that
    ended after it is left out like a withheld one."""
    left_out = [0]

    def public() -> Iterator[StoredGame]:
        for game in stored_games(store, tournament_id):
            recent = public_before is not None and game.finished_at > public_before
            if recent or record_withheld(store, game.game_id) is not None:
                left_out[0] += 1
                continue
            yield game

    summary = write_games(public(), out_dir, batch_games=batch_games,
                          batch_decisions=batch_decisions)  # fmt: skip
    return replace(summary, withheld=left_out[0])


def write_games(
    games: Iterable[StoredGame],
    out_dir: Path,
    *,
    batch_games: int = 1000,
    batch_decisions: int = 20_000,
) -> ExportSummary:
    """Write ``games`` (already public: the local store's, or an arena's ExportGames) as
    ``games.parquet`` and ``decisions.parquet`` under ``out_dir`` (created), one batch in
    memory at a time; nothing under the final names unless every game is written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (GAMES_FILE, DECISIONS_FILE):  # else one file replaced, the other refused
        if (out_dir / name).is_dir():
            raise IsADirectoryError(errno.EISDIR, f"{name} there is a directory",
                                    str(out_dir / name))  # fmt: skip
    games_sink = _Sink(out_dir / GAMES_FILE, GAMES_SCHEMA, batch_games)
    try:
        decisions_sink = _Sink(out_dir / DECISIONS_FILE, DECISIONS_SCHEMA, batch_decisions)
    except BaseException:
        games_sink.abandon()
        raise
    written = decisions = 0
    try:
        for game in games:
            row, decision_rows = game_rows(game)
            games_sink.add([row])
            decisions_sink.add(decision_rows)
            written += 1
            decisions += len(decision_rows)
        games_sink.finish()
        decisions_sink.finish()  # both whole before either replaces a previous export's
        with _locked(out_dir):  # another export's pair is renamed before or after, never between
            games_sink.publish()
            decisions_sink.publish()
    except BaseException:
        games_sink.abandon()
        decisions_sink.abandon()
        raise
    return ExportSummary(written, decisions, 0, games_sink.path, decisions_sink.path)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive lock on ``directory`` (its own flock: no lock file), held a moment."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
