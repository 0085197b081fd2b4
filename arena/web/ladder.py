"""The ladder's page and JSON (``/ladder``, ``/api/ladder``): standings with sigma,
games per bot, the recent games, the pairing queue.

A source that can show a ladder has ``ladder(name)`` (``LadderSource``; the
store's does); one without it answers "no ladder here".
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from arena.tournament.view.ladder_view import LadderView


@runtime_checkable
class LadderSource(Protocol):
    def ladder(self, name: str) -> LadderView | None: ...


def ladder_payload(view: LadderView) -> dict[str, object]:
    """The ``/api/ladder`` payload."""
    return {
        "name": view.ladder.name,
        "status": str(view.ladder.status),
        "games_played": view.ladder.games_played,
        "settings": view.settings.to_json(),
        "standings": [
            {
                "rank": s.rank,
                "bot": s.entrant.bot,
                "version": s.entrant.version,
                "mu": s.entrant.mu,
                "sigma": s.entrant.sigma,
                "conservative": s.conservative,
                "ladder_games": s.entrant.ladder_games,
                "games": s.entrant.games,
                "matches": s.entrant.matches,
                "in_play": s.entrant.in_play,
                "placing": s.placing,
            }
            for s in view.standings
        ],
        "recent_games": [
            {
                "id": g.id,
                "bots": list(g.bots),
                "winner": g.winner,
                "reason": g.reason,
                "finished_at": g.finished_at,
            }
            for g in view.recent_games
        ],
        "queue": [
            {"first": q.first, "second": q.second, "placement": q.placement} for q in view.queue
        ],
    }
