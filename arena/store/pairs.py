"""Stored games as paired statistics need them: who sat where, the deal, the outcome.

``deal_index`` is the one the referee wrote into the record (``match.deal_index``;
games 2k and 2k+1 of a paired match share deal k); a record without it (an older
arena) falls back to ``game_index // 2``, the pairing every match used then.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.store.db import Store


@dataclass(frozen=True, slots=True)
class PairedOutcome:
    """One stored game: its match and deal, bots and versions by seat, winner seat, statuses."""

    match_id: int
    game_index: int
    deal_index: int
    bots: tuple[str, str]  # by seat
    version_ids: tuple[int, int]  # by seat
    versions: tuple[str, str]  # by seat: content hashes
    winner_seat: int | None  # None: a draw
    statuses: tuple[str, str]  # by seat ("ok" when the bot did nothing wrong)


_SELECT = """
SELECT g.match_id, g.game_index,
       COALESCE(json_extract(g.record, '$.match.deal_index'), g.game_index / 2) AS deal_index,
       b0.name, b1.name, g.seat0_id, g.seat1_id, g.winner_seat, g.status0, g.status1,
       v0.version, v1.version
FROM games g JOIN matches m ON m.id = g.match_id
JOIN bot_versions v0 ON v0.id = g.seat0_id JOIN bots b0 ON b0.id = v0.bot_id
JOIN bot_versions v1 ON v1.id = g.seat1_id JOIN bots b1 ON b1.id = v1.bot_id
"""


def paired_outcomes(
    store: Store, tournament_id: int | None = None, *, bots_only: bool = False
) -> list[PairedOutcome]:
    """Every stored game of a tournament (every stored game: None), oldest first;
    ``bots_only``: without the people's games at /play (``play_games``), which rate no bot."""
    where, args = ("WHERE m.tournament_id = ?", (tournament_id,)) if tournament_id else ("", ())
    if bots_only:
        where += (" AND" if where else "WHERE") + (
            " m.tournament_id NOT IN (SELECT tournament_id FROM play_games)"
        )
    with store.reading() as db:
        rows = db.execute(f"{_SELECT} {where} ORDER BY g.id", args).fetchall()
    return [
        PairedOutcome(
            match_id=r[0],
            game_index=r[1],
            deal_index=int(r[2]),
            bots=(r[3], r[4]),
            version_ids=(r[5], r[6]),
            versions=(r[10], r[11]),
            winner_seat=r[7],
            statuses=(r[8], r[9]),
        )
        for r in rows
    ]
