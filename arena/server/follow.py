"""``WatchTournament`` for a tournament this server does not run: its progress, from the store.

Another process may play a tournament (`arena tournament run` or `resume`,
another server) or the ladder (`arena serve --ladder` runs it beside the
service). Its runner's events do not reach this process, but every game it
plays is stored with its totals (``arena.store.totals``). A watcher polls the
store at most once per ``STORE_POLL_S`` for games stored since the last poll
and the tournament's status, and is told each game in order, then the end once
the tournament is no longer running (finished, or interrupted: its runner gone).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.referee.result_words import result_words
from arena.server.offloop import off_loop
from arena.store import GameRow, Store, TournamentRow, TournamentStatus, get_tournament, list_games

STORE_POLL_S = 1.0
"""How often a watcher reads the store: each poll is two small reads, whoever plays."""

MAX_GAMES_PER_POLL = 50
"""Games told one by one per poll; more stored since the last poll are told as a count."""

Message = Callable[[int, str, int], pb.WatchTournamentResponse]
"""(tournament id, text, game id) -> the event with the tournament's row and standings."""


@dataclass(frozen=True, slots=True)
class Stored:
    """What the store holds of a tournament now: its row, and its games after a given id."""

    tournament: TournamentRow
    games: tuple[GameRow, ...]  # oldest first
    skipped: int  # games stored after the given id and not in ``games``


def stored_since(store: Store, tournament_id: int, after_game_id: int) -> Stored:
    """The tournament and its games stored after ``after_game_id`` (at most
    ``MAX_GAMES_PER_POLL``, the latest; ``skipped`` counts the rest)."""
    tournament = get_tournament(store, tournament_id)
    newest = list_games(store, tournament_id=tournament_id, limit=MAX_GAMES_PER_POLL + 1)
    games = [g for g in newest if g.id > after_game_id]
    skipped = 0
    if len(games) > MAX_GAMES_PER_POLL:
        skipped = _count_after(store, tournament_id, after_game_id) - MAX_GAMES_PER_POLL
        games = games[:MAX_GAMES_PER_POLL]
    return Stored(tournament, tuple(reversed(games)), skipped)


def _count_after(store: Store, tournament_id: int, after_game_id: int) -> int:
    with store.reading() as db:
        row = db.execute(
            "SELECT COUNT(*) FROM tournament_games WHERE tournament_id = ? AND game_id > ?",
            (tournament_id, after_game_id),
        ).fetchone()
    return int(row[0])


def latest_game_id(store: Store, tournament_id: int) -> int:
    """The id of the tournament's latest stored game (0: none yet)."""
    newest = list_games(store, tournament_id=tournament_id, limit=1)
    return newest[0].id if newest else 0


def game_line(game: GameRow) -> str:
    """A stored game as the runner tells it ("a vs b: a won: more points")."""
    result = result_words(game.bots, game.winner_seat, game.reason, game.statuses)
    return f"{game.bots[0]} vs {game.bots[1]}: {result}"


async def follow_stored(
    store: Store, tournament_id: int, message: Message, after_game_id: int,
    poll_s: float = STORE_POLL_S,
) -> AsyncIterator[pb.WatchTournamentResponse]:
    """Each game of the tournament stored after ``after_game_id`` (read before the watcher
    was shown where the tournament stands, so that no game falls between the two), until
    it is no longer running. The watcher leaving cancels it."""
    seen = after_game_id
    while True:
        await asyncio.sleep(poll_s)
        now = await off_loop(stored_since, store, tournament_id, seen)
        lines = [(game_line(g), g.id) for g in now.games]
        if now.skipped:
            lines.insert(0, (f"{now.skipped} more games stored since the last update", 0))
        if lines:
            seen = now.games[-1].id
            base = await off_loop(message, tournament_id, lines[0][0], lines[0][1])
            yield base
            for text, game_id in lines[1:]:
                event = pb.WatchTournamentResponse()
                event.CopyFrom(base)
                event.message, event.game_id = text, game_id
                yield event
        if now.tournament.status is not TournamentStatus.RUNNING:
            return
