"""What a finished (or forfeited) game produces: report, record, GameOver messages.

A forfeited game's record stays a valid kahuna-record/1: its actions are the
legal actions that were played and ``result`` is absent because the game did
not finish by the rules; the forfeit is described under the extra key
``"match"`` with everything else the referee knows (bots, deal index, clocks,
statuses, per-action timings).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.kahuna import record_of, record_to_json
from arena.protocol import messages
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.game import GameTiming, RefereeState
from arena.referee.timings import decision_stats, seat_walls
from arena.referee.types import ANONYMOUS_OPPONENT, BotStatus, GameReport, MatchConfig

Failures = dict[int, tuple[BotStatus, str]]
"""Slot index -> (status, reason) of the bots that failed in a game."""
FORFEIT = "forfeit"


@dataclass(frozen=True)
class PlayedGame:
    match_id: str
    config: MatchConfig
    game_index: int
    deal: tuple[str, ...]
    names: tuple[str, ...]
    versions: tuple[str, ...]
    slot_at_seat: tuple[int, int]
    turns: RefereeState
    log: GameTiming
    failures: Failures
    stderr_tails: dict[int, str] = field(default_factory=dict)
    """Slot -> the end of a failed bot's stderr: private to its owner, not in the record."""
    startup_ms: dict[int, float] = field(default_factory=dict)
    """Slot -> its launches' time to Hello (or to failing) since the game before: the
    referee's measure, not in the record (``GameReport.startup_ms``)."""

    def winner_slot(self) -> int | None:
        if self.failures:
            if len(self.failures) == 2:
                return None
            return 1 - next(iter(self.failures))
        outcome = self.turns.state.outcome
        if outcome is None or outcome.winner is None:
            return None
        return self.slot_at_seat[outcome.winner]

    def reason(self) -> str:
        outcome = self.turns.state.outcome
        if self.failures or outcome is None:
            return FORFEIT
        return outcome.termination.value

    def status(self, slot: int) -> BotStatus:
        return self.failures[slot][0] if slot in self.failures else BotStatus.OK

    def report(self) -> GameReport:
        winner = self.winner_slot()
        seat_of_slot = {slot: seat for seat, slot in enumerate(self.slot_at_seat)}
        return GameReport(
            index=self.game_index,
            bots_by_seat=(self.names[self.slot_at_seat[0]], self.names[self.slot_at_seat[1]]),
            winner=None if winner is None else self.names[winner],
            reason=self.reason(),
            statuses={self.names[slot]: self.status(slot) for slot in (0, 1)},
            actions=len(self.turns.events),
            time_ms={
                self.names[slot]: round(self.log.clocks[seat_of_slot[slot]].used_ms, 3)
                for slot in (0, 1)
            },
            record=self.record(),
            stderr={self.names[slot]: tail for slot, tail in sorted(self.stderr_tails.items())},
            startup_ms={
                self.names[slot]: round(spent, 3) for slot, spent in sorted(self.startup_ms.items())
            },
        )

    def record(self) -> dict[str, object]:
        state = self.turns.state
        record = record_of(state, self.deal, self.log.reshuffles, extra={"match": self.metadata()})
        return record_to_json(record)

    def metadata(self) -> dict[str, object]:
        winner = self.winner_slot()
        control = self.config.time_control
        bots = [
            {"seat": seat, "name": self.names[slot], "version": self.versions[slot]}
            for seat, slot in enumerate(self.slot_at_seat)
        ]
        seat_of_slot = {slot: seat for seat, slot in enumerate(self.slot_at_seat)}
        return {
            "match_id": self.match_id,
            "game_index": self.game_index,
            "deal_index": self.config.deal_index(self.game_index),
            "paired": self.config.paired,
            "bots": bots,
            "time_control": {"action_ms": control.action_ms, "bank_ms": control.bank_ms},
            "winner": None if winner is None else self.names[winner],
            "reason": self.reason(),
            "statuses": {self.names[slot]: self.status(slot).value for slot in (0, 1)},
            "failures": [
                {
                    "seat": seat_of_slot[slot],
                    "bot": self.names[slot],
                    "status": status.value,
                    "detail": detail,
                }
                for slot, (status, detail) in sorted(self.failures.items())
            ],
            "time_ms": [round(clock.used_ms, 3) for clock in self.log.clocks],
            "cpu_ms": [None if value is None else round(value, 3) for value in self.log.cpu_ms],
            "bank_left_ms": [round(clock.bank_ms, 3) for clock in self.log.clocks],
            "timings": self.log.timings,
            "decisions": [
                decision_stats(seat_walls(self.log.timings, seat), self.log.cpu_ms[seat])
                for seat in (0, 1)
            ],
        }


def game_over_messages(result: PlayedGame, report: GameReport) -> list[referee_pb2.PlayResponse]:
    """The GameOver message for slot 0 and slot 1, in that order.

    Both carry the game's full record unless this half will play the same deal
    again (a paired match played as one half, e.g. with a remote bot under
    ``--paired-remote``): then ``record_json`` is empty, since the record holds
    the deal of a game these processes are still to play.
    """
    withheld = deal_replayed_in_half(result.config, result.game_index)
    winner = result.winner_slot()
    outcome = result.turns.state.outcome
    return [
        messages.game_over(
            game_index=result.game_index,
            reason=report.reason,
            your_status=result.status(slot),
            opponent_status=result.status(1 - slot),
            record_json="" if withheld else json.dumps(
                record_for(report.record, result, slot), separators=(",", ":")
            ),
            winner_seat=None if winner is None else result.slot_at_seat.index(winner),
            outcome=outcome if not result.failures else None,
        )
        for slot in (0, 1)
    ]


def record_for(record: dict[str, object], result: PlayedGame, slot: int) -> dict[str, object]:
    """``record`` as the bot in ``slot`` is sent it. With anonymous opponents (the
    ladder's) its opponent is ``ANONYMOUS_OPPONENT`` there too, without its version: the
    record of a match's first games would otherwise name, to a mule, the friend it plays
    the match's next games against."""
    if not result.config.anonymous_opponents:
        return record
    other = 1 - slot
    hidden = result.slot_at_seat.index(other)  # the opponent's seat in this game
    match = record["match"]
    assert isinstance(match, dict)
    told = dict(match)
    told["bots"] = [
        {**bot, "name": ANONYMOUS_OPPONENT, "version": ""} if bot["seat"] == hidden else bot
        for bot in match["bots"]
    ]
    if result.winner_slot() == other:
        told["winner"] = ANONYMOUS_OPPONENT
    told["statuses"] = {
        result.names[slot]: result.status(slot).value,
        ANONYMOUS_OPPONENT: result.status(other).value,
    }
    told["failures"] = [
        {**failure, "bot": ANONYMOUS_OPPONENT} if failure["seat"] == hidden else failure
        for failure in match["failures"]
    ]
    return {**record, "match": told}


def deal_replayed_in_half(config: MatchConfig, game_index: int) -> bool:
    """Whether a game after ``game_index`` in this half plays the same deal."""
    deal = config.deal_index(game_index)
    return any(
        config.deal_index(later) == deal
        for later in config.indices_to_play
        if later > game_index
    )


def score_games(reports: Sequence[GameReport], names: Sequence[str]) -> dict[str, float]:
    """1 per win, 0.5 each per draw, nothing for a forfeit by both."""
    score = dict.fromkeys(names, 0.0)
    for report in reports:
        if report.winner is not None:
            score[report.winner] += 1.0
        elif report.reason != FORFEIT:
            for name in names:
                score[name] += 0.5
    return score
