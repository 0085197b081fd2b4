"""Bots and their versions: stored copies of the files, ratings, counters."""

from __future__ import annotations

import contextlib
import errno
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Collection
from pathlib import Path

from arena.quoting import quoted
from arena.referee.botdir import REMOTE_RUNTIME
from arena.referee.types import BotSpec
from arena.sandbox.javacds import shelf_dir
from arena.store.db import (
    FULL_ERRNOS,
    DamagedDatabaseError,
    NotFoundError,
    NotOwnerError,
    StorageFullError,
    Store,
    StoreError,
    is_disk_full,
    utc_now,
)
from arena.store.limits import directory_bytes
from arena.store.models import (
    CONSERVATIVE_SIGMAS,
    INITIAL_MU,
    INITIAL_SIGMA,
    BotDetail,
    BotSummary,
    BotVersionRow,
    LeaderboardRow,
    Principal,
    RatingPoint,
)
from arena.store.tokens import check_user_name

_VERSION_COLUMNS = """
    b.name AS bot, b.owner AS owner, v.version, v.created_at, v.mu, v.sigma, v.games,
    v.wins, v.draws, v.losses, v.timeouts, v.crashes, v.illegal_actions
"""


def _version_row(row: sqlite3.Row) -> BotVersionRow:
    return BotVersionRow(
        bot=row["bot"], version=row["version"], created_at=row["created_at"],
        mu=row["mu"], sigma=row["sigma"], games=row["games"], wins=row["wins"],
        draws=row["draws"], losses=row["losses"], timeouts=row["timeouts"],
        crashes=row["crashes"], illegal_actions=row["illegal_actions"], owner=row["owner"],
    )  # fmt: skip


PERSON_PREFIX = "human-"  # the remote bot a user plays as at /play (arena.web.play)

_PLAY_TALLY = """
    LEFT JOIN (SELECT p.bot_version_id AS version_id, COUNT(*) AS games,
                      SUM(g.winner_seat = 1 - p.seat) AS wins, SUM(g.winner_seat IS NULL) AS draws,
                      SUM(g.winner_seat = p.seat) AS losses
               FROM play_games p JOIN games g ON g.id = p.game_id
               GROUP BY p.bot_version_id) pg ON pg.version_id = v.id
"""
"""Each bot version's games against people at /play, and its results there: the public
board's games and W/D/L are the bots' games among themselves, which no person can pad."""
_BOARD_COLUMNS = """
    b.name AS bot, b.owner AS owner, v.version, v.created_at, v.mu, v.sigma,
    v.games - IFNULL(pg.games, 0) AS games, v.wins - IFNULL(pg.wins, 0) AS wins,
    v.draws - IFNULL(pg.draws, 0) AS draws, v.losses - IFNULL(pg.losses, 0) AS losses,
    v.timeouts, v.crashes, v.illegal_actions
"""


def add_bot_version(
    store: Store, spec: BotSpec, *, owner: str | None = None, off_ladder: bool = False
) -> tuple[BotVersionRow, bool]:
    """Store a copy of ``spec``'s directory as a version of bot ``spec.name``.

    Returns the version and whether it is new (an unchanged bot is the same
    version). A bot owned by another user is refused (NotOwnerError), and so is
    an owner-less version (``owner`` None: the admin's `arena bot add`) of a
    user's bot (the error names its owner); an owner no user can be named too
    (StoreError). ``off_ladder``: a new bot is stored withdrawn (by ``"arena"``), in
    the same transaction, so no ladder pairs it before the admin returns it (a house
    bot stored for a person's game at /play).
    """
    if owner is not None:
        check_user_name(owner, "owner")
    if spec.name.startswith(PERSON_PREFIX) and spec.name != PERSON_PREFIX + str(owner):
        raise StoreError(f"bot names starting {PERSON_PREFIX!r} are people's seats at /play: "
                         f"only user {spec.name[len(PERSON_PREFIX):]!r} sits as {spec.name!r}")
    check_bot_source(store, spec.directory)
    target = store.bots_dir / spec.name / spec.version
    copied = False  # set once the files are at ``target``, inside the transaction
    try:
        with store.transaction() as db:
            bot = db.execute("SELECT id, owner FROM bots WHERE name = ?", (spec.name,)).fetchone()
            if bot is not None and bot["owner"] != owner and owner is not None:
                raise NotOwnerError(spec.name)
            if bot is not None and owner is None and bot["owner"] is not None:  # an owner-less
                raise NotOwnerError(spec.name, bot["owner"])  # add never takes a user's bot
            if bot is None:
                twin = _case_twin(db, spec.name)
                if twin is not None:
                    raise StoreError(case_twin_problem(spec.name, twin))
                now = utc_now()
                withdrawn = (now, "arena") if off_ladder else (None, None)
                bot_id = db.execute(
                    "INSERT INTO bots (name, owner, created_at, withdrawn_at, withdrawn_by)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (spec.name, owner, now, *withdrawn),
                ).lastrowid
            else:
                bot_id = bot["id"]
            existing = db.execute(
                "SELECT id FROM bot_versions WHERE bot_id = ? AND version = ?",
                (bot_id, spec.version),
            ).fetchone()
            if existing is None:
                if bot is not None:  # back on the ladder, unless the admin withdrew a user's bot
                    db.execute(
                        "UPDATE bots SET withdrawn_at = NULL, withdrawn_by = NULL WHERE id = ?"
                        " AND (withdrawn_by IS NOT 'admin' OR owner IS NULL)", (bot_id,),
                    )  # fmt: skip
                _copy_files(spec.directory, target)
                copied = True
                db.execute(
                    "INSERT INTO bot_versions (bot_id, version, directory, command, runtime,"
                    " created_at, mu, sigma, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (bot_id, spec.version, str(target.relative_to(store.data_dir)),
                     json.dumps(list(spec.command)), spec.runtime, utc_now(),
                     INITIAL_MU, INITIAL_SIGMA, directory_bytes(target)),
                )  # fmt: skip
    except BaseException:
        if copied:  # in place, but its row was rolled back (a full disk at the commit)
            _drop_uncommitted_copy(store, target)
        raise
    return get_version(store, spec.name, spec.version), existing is None


def case_twin(store: Store, name: str) -> str | None:
    """The stored bot whose name differs from ``name`` only in case, if there is one."""
    with store.reading() as db:
        return _case_twin(db, name)


def _case_twin(db: sqlite3.Connection, name: str) -> str | None:
    row = db.execute(
        "SELECT name FROM bots WHERE lower(name) = lower(?) AND name != ? LIMIT 1", (name, name)
    ).fetchone()
    return None if row is None else str(row[0])


def case_twin_problem(name: str, twin: str) -> str:
    """Why a new bot may not be called ``name`` beside ``twin``: on a leaderboard or a
    crosstable the two would pass for one bot, and one could pose as the other."""
    return (
        f"bot name {name!r} differs only in case from the stored bot {twin!r}:"
        " choose another name"
    )


def check_bot_source(store: Store, directory: Path) -> None:
    """Refuse a bot directory that holds the data directory: its copy would copy itself."""
    source, data = directory.resolve(), store.data_dir.resolve()
    if data.is_relative_to(source):
        raise StoreError(
            f"bot directory {directory} holds the arena data directory {store.data_dir}:"
            " keep the data directory out of the bot's"
        )


STAGING_PREFIX = ".incoming-"


def _copy_files(source: Path, target: Path) -> None:
    """Copy to a temporary sibling, then rename: a crash leaves no half copy under the
    version's name. Called under the store's write lock (``add_bot_version``'s
    transaction), so no other copy is under way: a staging sibling there was left by a
    process killed mid-copy (up to the archive limit each), and is removed first, whichever
    bot's it was (``target`` is ``BOTS_DIR/NAME/VERSION``)."""
    if target.exists():  # left by a process killed between copy and commit: same content
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    for left in target.parent.parent.glob(f"*/{STAGING_PREFIX}*"):
        shutil.rmtree(left, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=target.parent))
    try:
        shutil.copytree(
            source, staging / "files", symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )  # fmt: skip
        (staging / "files").rename(target)
    except shutil.Error as error:  # the first file that could not be copied, and why
        path, _, why = error.args[0][0]
        if any(f"[Errno {number}]" in str(why) for number in FULL_ERRNOS):
            raise StorageFullError(OSError(errno.ENOSPC, why)) from None
        raise StoreError(f"cannot store a copy of {source}: {path}: {why}") from None
    except OSError as error:
        if is_disk_full(error):
            raise StorageFullError(error) from None
        raise StoreError(f"cannot store a copy of {source}: {error}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _drop_uncommitted_copy(store: Store, target: Path) -> None:
    """Remove the copy at ``target`` (``BOTS_DIR/NAME/VERSION``) of an add whose
    transaction failed after the copy, and its bot's directory if that is left empty.

    Done under the store's write lock again, and only if no version row names
    ``target``: every add copies under that lock, so no other add is mid-copy there,
    and a row means another add of the same version committed its own copy since
    (kept). The lock's empty transaction writes nothing, so a full disk does not stop
    it; if it cannot be had (a damaged or busy database), the copy stays for the next
    add of that version to replace, as a crash's does."""
    relative = str(target.relative_to(store.data_dir))
    errors = (StoreError, StorageFullError, DamagedDatabaseError, sqlite3.Error, OSError)
    with contextlib.suppress(*errors), store.transaction() as db:
        row = db.execute("SELECT 1 FROM bot_versions WHERE directory = ?", (relative,)).fetchone()
        if row is None:
            shutil.rmtree(target, ignore_errors=True)
            with contextlib.suppress(OSError):  # not empty: the bot's other versions
                target.parent.rmdir()


def get_version(store: Store, name: str, version: str | None = None) -> BotVersionRow:
    """A version of bot ``name`` (the latest when ``version`` is None; a prefix works)."""
    with store.reading() as db:
        rows = db.execute(
            f"SELECT {_VERSION_COLUMNS} FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
            " WHERE b.name = ? AND substr(v.version, 1, length(?)) = ? ORDER BY v.id DESC",
            (name, version or "", version or ""),
        ).fetchall()
    if not rows:
        what = f"bot {quoted(name)}" + (f" version {quoted(version)}" if version else "")
        raise NotFoundError(f"no {what} in the store")
    if version and len(rows) > 1 and rows[0]["version"] != version:
        raise NotFoundError(f"version prefix {quoted(version)} of bot {quoted(name)} is ambiguous")
    return _version_row(rows[0])


def bot_spec(store: Store, name: str, version: str | None = None) -> BotSpec:
    """The stored copy of a bot version, ready to run."""
    row = get_version(store, name, version)
    with store.reading() as db:
        stored = db.execute(
            "SELECT v.directory, v.command, v.runtime FROM bot_versions v"
            " JOIN bots b ON b.id = v.bot_id WHERE b.name = ? AND v.version = ?",
            (name, row.version),
        ).fetchone()
    runtime = stored["runtime"]
    return BotSpec(
        name=name, version=row.version, directory=store.data_dir / stored["directory"],
        command=tuple(json.loads(stored["command"])), runtime=runtime,
        class_archives=(
            shelf_dir(store.data_dir, name, row.version) if runtime == "java" else None
        ),
    )  # fmt: skip


def list_bots(store: Store) -> list[BotSummary]:
    """Every bot with its latest version, by name."""
    with store.reading() as db:
        rows = db.execute(
            f"SELECT {_VERSION_COLUMNS}, b.created_at AS bot_created,"
            " (SELECT COUNT(*) FROM bot_versions w WHERE w.bot_id = b.id) AS version_count"
            " FROM bots b JOIN bot_versions v ON v.id ="
            " (SELECT MAX(id) FROM bot_versions WHERE bot_id = b.id) ORDER BY b.name"
        ).fetchall()
    return [
        BotSummary(r["bot"], r["owner"], r["bot_created"], r["version_count"], _version_row(r))
        for r in rows
    ]


def get_bot(store: Store, name: str) -> BotDetail:
    """A bot with every version and its whole rating history (NotFoundError)."""
    with store.reading() as db:
        bot = db.execute(
            "SELECT id, owner, created_at FROM bots WHERE name = ?", (name,)
        ).fetchone()
        if bot is None:
            raise NotFoundError(f"no bot {quoted(name)} in the store")
        versions = db.execute(
            f"SELECT {_VERSION_COLUMNS} FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
            " WHERE b.id = ? ORDER BY v.id",
            (bot["id"],),
        ).fetchall()
        history = db.execute(
            "SELECT v.version, h.game_id, h.mu, h.sigma, g.finished_at FROM rating_history h"
            " JOIN bot_versions v ON v.id = h.bot_version_id JOIN games g ON g.id = h.game_id"
            " WHERE v.bot_id = ? ORDER BY h.id",
            (bot["id"],),
        ).fetchall()
    return BotDetail(
        name=name, owner=bot["owner"], created_at=bot["created_at"],
        versions=tuple(_version_row(v) for v in versions),
        history=tuple(RatingPoint(h["version"], h["game_id"], h["mu"], h["sigma"],
                                  h["finished_at"]) for h in history),
    )  # fmt: skip


def require_owner(
    store: Store, principal: Principal, name: str, *, missing_ok: bool = False
) -> None:
    """NotOwnerError unless ``principal`` may act for bot ``name`` (the admin, or its owner).

    NotFoundError when there is no such bot, unless ``missing_ok`` (a new bot is anyone's).
    """
    try:
        owner = get_bot(store, name).owner
    except NotFoundError:
        if missing_ok:
            return
        raise
    if not principal.may_act_for(owner):
        raise NotOwnerError(name)


def leaderboard(
    store: Store,
    *,
    latest_only: bool = False,
    public: bool = False,
    min_games: int = 0,
    leave_out: Collection[int] = (),
) -> list[LeaderboardRow]:
    """One row per bot version, ordered by mu - 3 sigma (best first).

    ``public``: the public board, each bot's latest version unless the bot is withdrawn
    from the ladder: a bot taken off at a lucky high does not keep that rating on the
    board while it plays no more (its page keeps it, and its return brings it back); nor
    a person's seat at /play (``PERSON_PREFIX``), whose games rate nobody; its games and
    W/D/L are those between bots (``_PLAY_TALLY``; the failure counts keep every game).
    ``leave_out``: ids of bots also off the board (those waiting off the ladder behind
    their owner's newer bots: ``arena.tournament.view.ladder_view.public_leaderboard``).
    """
    columns, tally = (_BOARD_COLUMNS, _PLAY_TALLY) if public else (_VERSION_COLUMNS, "")
    where = f"v.games - {'IFNULL(pg.games, 0)' if public else '0'} >= ?"
    if latest_only or public:
        where += " AND v.id = (SELECT MAX(id) FROM bot_versions WHERE bot_id = b.id)"
    if public:  # a person's seat at /play (a remote bot human-USER) is no bot of the board
        where += " AND b.withdrawn_at IS NULL AND NOT (substr(b.name, 1, length(?)) = ?"
        where += f" AND v.runtime = '{REMOTE_RUNTIME}')"
    left: tuple[object, ...] = ()
    if leave_out:  # one parameter however many: a JSON list
        where += " AND b.id NOT IN (SELECT value FROM json_each(?))"
        left = (json.dumps(sorted(set(leave_out))),)
    with store.reading() as db:
        rows = db.execute(
            f"SELECT {columns} FROM bot_versions v JOIN bots b ON b.id = v.bot_id {tally}"
            f" WHERE {where} ORDER BY v.mu - {CONSERVATIVE_SIGMAS} * v.sigma DESC,"
            " games DESC, b.name, v.id",
            (min_games, *((PERSON_PREFIX, PERSON_PREFIX) if public else ()), *left),
        ).fetchall()
    return [LeaderboardRow(i + 1, _version_row(r)) for i, r in enumerate(rows)]
