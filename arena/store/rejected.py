"""Games a Ray node reported that the driver refused: the node that sent each, and why.

The driver checks every game a node returns before storing it
(``arena.tournament.execution.node_trust``); a game that fails is never stored as a game.
What is kept is who sent it, for `arena tournament status` and the operator.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.store.db import Store, utc_now

MAX_PROBLEM_CHARS = 500


@dataclass(frozen=True)
class RejectedGame:
    """One refused game: its match and index, the node that sent it, why, and when."""

    match_id: int
    game_index: int
    node_ip: str
    node_id: str
    problem: str
    rejected_at: str


def add_rejected_game(
    store: Store, *, match_id: int, game_index: int, node_ip: str, node_id: str, problem: str
) -> None:
    """Keep that ``node_ip``/``node_id`` sent game ``game_index`` of ``match_id``, refused
    for ``problem`` (cut to ``MAX_PROBLEM_CHARS``)."""
    with store.transaction() as db:
        db.execute(
            "INSERT INTO rejected_games (match_id, game_index, node_ip, node_id, problem,"
            " rejected_at) VALUES (?, ?, ?, ?, ?, ?)",
            (match_id, game_index, node_ip, node_id, problem[:MAX_PROBLEM_CHARS], utc_now()),
        )


def rejected_games(store: Store, tournament_id: int) -> list[RejectedGame]:
    """The refused games of a tournament's matches, oldest first."""
    with store.reading() as db:
        rows = db.execute(
            "SELECT r.match_id, r.game_index, r.node_ip, r.node_id, r.problem, r.rejected_at"
            " FROM rejected_games r JOIN matches m ON m.id = r.match_id"
            " WHERE m.tournament_id = ? ORDER BY r.id",
            (tournament_id,),
        ).fetchall()
    return [RejectedGame(*row) for row in rows]
