"""Running totals (schema v9), kept in the transaction that stores each match and game.

A page reads these instead of every match and game: a tournament's games
played and scheduled (``tournaments``) and its games by id (``tournament_games``,
so that its latest are read in order), and per ladder version its matches,
its latest one (a round), those unfinished, its games, its latest
opponents, its games won, drawn and lost, and the runner time its games used
(``ladder_totals``; the time as ``LadderUsage``). They are
written only here, by the store's three writers of the history
(``_insert_round``, ``add_ladder_match``, ``games._record``), within their
transactions: a game and its totals are stored together or not at all. Each
total is what the history gives (tests/store/test_ladder_totals.py recomputes
them from it); a version with no ladder match has no row (its totals are zeros).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from arena.store.db import StoreError
from arena.store.schema import RECENT_KEPT
from arena.store.usage import LadderUsage, add_charge


@dataclass(frozen=True, slots=True)
class LadderTotals:
    """A version's ladder so far (played or in play)."""

    matches: int = 0
    last_match: int | None = None  # the sequence number (round) of its latest ladder match
    in_play: int = 0  # its unfinished ladder matches
    games: int = 0  # its stored games on this ladder
    recent: tuple[int, ...] = ()  # version ids of its latest opponents, newest first
    wins: int = 0  # its stored games on this ladder won, drawn and lost
    draws: int = 0
    losses: int = 0


def count_match(
    db: sqlite3.Connection,
    tournament_id: int,
    round_no: int,
    versions: tuple[int, int],
    games: int,
    *,
    ladder: bool,
) -> None:
    """Count a match just stored (unfinished) as round ``round_no`` between ``versions``."""
    db.execute(
        "UPDATE tournaments SET games_scheduled = games_scheduled + ? WHERE id = ?",
        (games, tournament_id),
    )
    if not ladder:
        return
    first, second = versions
    for version_id, opponent in ((first, second), (second, first)):
        row = db.execute(
            "SELECT recent FROM ladder_totals WHERE tournament_id = ? AND bot_version_id = ?",
            (tournament_id, version_id),
        ).fetchone()
        if row is None:
            db.execute(
                "INSERT INTO ladder_totals (tournament_id, bot_version_id, matches, last_match,"
                " in_play, games, recent) VALUES (?, ?, 1, ?, 1, 0, ?)",
                (tournament_id, version_id, round_no, _encode([opponent])),
            )  # fmt: skip
        else:
            recent = [opponent, *json.loads(row[0])][:RECENT_KEPT]
            db.execute(
                "UPDATE ladder_totals SET matches = matches + 1, last_match = ?,"
                " in_play = in_play + 1, recent = ? WHERE tournament_id = ? AND bot_version_id = ?",
                (round_no, _encode(recent), tournament_id, version_id),
            )  # fmt: skip


def count_game(
    db: sqlite3.Connection,
    tournament_id: int,
    game_id: int,
    seat_ids: tuple[int, int],
    winner_seat: int | None,
    *,
    ladder: bool,
    charges: tuple[float, float] = (0.0, 0.0),
) -> None:
    """Count game ``game_id``, just stored, its seats' versions ``seat_ids`` (``winner_seat``
    None: a draw); on a ladder each seat's ``charges`` (``game_charges``) are added to its
    runner time as of the ladder's clock before this game (``arena.store.usage.clock``)."""
    db.execute(
        "UPDATE tournaments SET games_played = games_played + 1 WHERE id = ?", (tournament_id,)
    )
    db.execute(
        "INSERT INTO tournament_games (tournament_id, game_id) VALUES (?, ?)",
        (tournament_id, game_id),
    )
    if ladder:
        (now,) = db.execute(
            "SELECT COALESCE(SUM(charged_ms), 0) FROM ladder_totals WHERE tournament_id = ?",
            (tournament_id,),
        ).fetchone()
        for seat, version_id in enumerate(seat_ids):
            won = seat == winner_seat
            outcome = "draws" if winner_seat is None else "wins" if won else "losses"
            change = f"games = games + 1, {outcome} = {outcome} + 1"
            _update_ladder(db, tournament_id, version_id, change)
            _charge(db, tournament_id, version_id, charges[seat], float(now))


def count_finished(
    db: sqlite3.Connection, tournament_id: int, versions: tuple[int, int], *, ladder: bool
) -> None:
    """Count a match just finished (its last game stored), between ``versions``."""
    if ladder:
        for version_id in versions:
            _update_ladder(db, tournament_id, version_id, "in_play = in_play - 1")


def read_ladder_totals(db: sqlite3.Connection, tournament_id: int) -> dict[int, LadderTotals]:
    """Every version with a match on the ladder (withdrawn and superseded ones too)."""
    rows = db.execute(
        "SELECT bot_version_id, matches, last_match, in_play, games, recent, wins, draws, losses"
        " FROM ladder_totals WHERE tournament_id = ?",
        (tournament_id,),
    )
    return {
        r[0]: LadderTotals(
            matches=r[1], last_match=r[2], in_play=r[3], games=r[4],
            recent=tuple(json.loads(r[5])), wins=r[6], draws=r[7], losses=r[8],
        )
        for r in rows
    }


def read_ladder_usage(db: sqlite3.Connection, tournament_id: int) -> dict[int, LadderUsage]:
    """Every version's runner time on the ladder (withdrawn and superseded ones too)."""
    rows = db.execute(
        "SELECT bot_version_id, used_ms, used_at, charged_ms, games FROM ladder_totals"
        " WHERE tournament_id = ?",
        (tournament_id,),
    )
    return {r[0]: LadderUsage(float(r[1]), float(r[2]), float(r[3]), int(r[4])) for r in rows}


def _charge(
    db: sqlite3.Connection, tournament_id: int, version_id: int, charge_ms: float, now: float
) -> None:
    used_ms, used_at = db.execute(
        "SELECT used_ms, used_at FROM ladder_totals WHERE tournament_id = ?"
        " AND bot_version_id = ?",
        (tournament_id, version_id),
    ).fetchone()
    used_ms, used_at = add_charge(used_ms, used_at, charge_ms, now)
    db.execute(
        "UPDATE ladder_totals SET used_ms = ?, used_at = ?, charged_ms = charged_ms + ?"
        " WHERE tournament_id = ? AND bot_version_id = ?",
        (used_ms, used_at, charge_ms, tournament_id, version_id),
    )


def _update_ladder(
    db: sqlite3.Connection, tournament_id: int, version_id: int, change: str
) -> None:
    updated = db.execute(
        f"UPDATE ladder_totals SET {change} WHERE tournament_id = ? AND bot_version_id = ?",
        (tournament_id, version_id),
    ).rowcount
    if updated != 1:  # a game of a match never counted: the totals would disagree with it
        raise StoreError(
            f"ladder {tournament_id} has no totals for version {version_id}: its match was"
            " stored without them"
        )


def _encode(recent: list[int]) -> str:
    return json.dumps(recent, separators=(",", ":"))
