"""What rating integrity reads: who owns a match's bots, and every game's result by bot.

``arena.tournament.policy.results`` leaves a game between two bots of one owner
unrated; ``arena.tournament.policy.collusion`` reads every stored game as
``ResultRow`` to find pairs whose results against each other depart from
what their results against everyone else predict.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.store.db import NotFoundError, Store


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One stored game: its bots (by seat), their owners, who won (None: a draw)."""

    game_id: int
    tournament_id: int
    bots: tuple[str, str]
    owners: tuple[str | None, str | None]
    winner_seat: int | None


def same_owner(owners: tuple[str | None, str | None]) -> bool:
    """Whether both bots belong to one user (the admin's own bots, owner None, never do)."""
    return owners[0] is not None and owners[0] == owners[1]


def match_owners(store: Store, match_id: int) -> tuple[str | None, str | None]:
    """The owners of match ``match_id``'s first and second bot (None: the admin's)."""
    with store.reading() as db:
        row = db.execute(
            "SELECT bf.owner, bs.owner FROM matches m"
            " JOIN bot_versions vf ON vf.id = m.first_id JOIN bots bf ON bf.id = vf.bot_id"
            " JOIN bot_versions vs ON vs.id = m.second_id JOIN bots bs ON bs.id = vs.bot_id"
            " WHERE m.id = ?",
            (match_id,),
        ).fetchone()
    if row is None:
        raise NotFoundError(f"no match {match_id}")
    return row[0], row[1]


def game_results(store: Store, *, tournament_id: int | None = None) -> list[ResultRow]:
    """Every stored game (of one tournament), oldest first, by bot name and owner."""
    where, params = ("WHERE m.tournament_id = ?", (tournament_id,)) if tournament_id else ("", ())
    with store.reading() as db:
        rows = db.execute(
            "SELECT g.id, m.tournament_id, b0.name, b1.name, b0.owner, b1.owner, g.winner_seat"
            " FROM games g JOIN matches m ON m.id = g.match_id"
            " JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id"
            " JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id"
            f" {where} ORDER BY g.id",
            params,
        ).fetchall()
    return [ResultRow(r[0], r[1], (r[2], r[3]), (r[4], r[5]), r[6]) for r in rows]
