"""Which games people play at /play are rated in the people's pool, and how.

The pool (people by user, bots by version) is apart from the bots' ratings: a play
game never moves those. A game is rated only when the admin's ``rated_play``
setting is on for the person both when the table opens and when the game is
stored, and it is not a duplicate-mode game or a game against a bot the person
owns. A person who times out or leaves (the seat's stream closes) loses, rated
like any loss; a bot that forfeits by its own failure leaves the game unrated,
for a broken bot would otherwise be a free win. The TrueSkill update is the
bots' (``arena.tournament.rating``).
"""

from __future__ import annotations

from arena.referee.types import BotStatus, GameReport
from arena.store import Store
from arena.store.models import MuSigma, SeatFailures
from arena.store.play import record_play_game
from arena.tournament.policy.results import rate, seat_failures

SETTING_OFF = "rated play is off for you (the admin's rated_play setting)"
TURNED_OFF = "rated play was turned off before the game ended (the admin's rated_play setting)"
DUPLICATE = "duplicate mode: the deal is compared with a reference bot's, never rated"
OWN_BOT = "your own bot: it could lose to you on purpose"
BOT_FAILED = "the bot forfeited by its own failure ({status}): that says nothing of your play"


def why_unrated(*, rated_play: bool, duplicate: bool, own_bot: bool) -> str | None:
    """Why a table opened with these facts is not rated (None: it is)."""
    if not rated_play:
        return SETTING_OFF
    if duplicate:
        return DUPLICATE
    if own_bot:
        return OWN_BOT
    return None


def why_unrated_after(report: GameReport, person: str, *, rated_play: bool) -> str | None:
    """Why a rated table's finished game is not rated after all (None: it is)."""
    if not rated_play:
        return TURNED_OFF
    bot = next(name for name in report.bots_by_seat if name != person)
    status = report.statuses.get(bot, BotStatus.OK)
    if status is not BotStatus.OK and report.winner == person:
        return BOT_FAILED.format(status=status)
    return None


def rate_people(person: MuSigma, bot: MuSigma, winner: int | None) -> tuple[MuSigma, MuSigma]:
    """The pool's TrueSkill update of a person and a bot, the bots' own rule (winner 0 is
    the person): the new (person, bot) ratings."""
    return rate(person, bot, winner)


def store_play_game(
    store: Store, match_id: int, report: GameReport, person: str, *, rated_play: bool
) -> tuple[int | None, str | None]:
    """Store a play game and its people's pool update (if its table was rated and
    ``why_unrated_after`` has nothing against it): the game id (None: already stored)
    and ``why_unrated_after``'s reason (None: a rated table's game was rated)."""
    reason = why_unrated_after(report, person, rated_play=rated_play)
    game_id = record_play_game(
        store, match_id, report, failures=failures(report),
        people=rate_people if reason is None else None, unrated_reason=reason,
    )  # fmt: skip
    return game_id, reason


def failures(report: GameReport) -> tuple[SeatFailures, SeatFailures]:
    """What each seat's status adds to its version's failure counters, as in any game."""
    first, second = (seat_failures(report.statuses.get(bot, BotStatus.OK))
                     for bot in report.bots_by_seat)  # fmt: skip
    return first, second
