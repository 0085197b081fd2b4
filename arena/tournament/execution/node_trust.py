"""What a Ray node is trusted with, and what the driver checks of what it returns.

A node is trusted with its match and nothing more. Its task carries the seeds
of the deals its games play (``sealed``), never the tournament's secret: the
node learns those deals and no other. Every game it reports is checked by the
driver before the runner stores it (``check_game``): the record must be a game
of that match at that index, between its two versions in the seats the index
gives them, on the deal and with the reshuffles the seed derives, replaying
legally with the engine to the result, reason, statuses and action count the
report states; and the time it charges each bot (``time_ms``, ``startup_ms``: the
ladder bills a bot's owner for both, the record shows them) must be time the match's
committed config lets a bot use in that game (``time_limit_ms``, ``startup_limit_ms``),
and the record's per-action times (``timings``, what exports and the record show per
decision) must run each seat's clock to the time, bank and figures stated
(``_check_clocks``).
A game that fails is never stored; the executor plays it again
on another node and names the node that sent it.

What no check can show: which program chose the legal moves of a record (a
node can play any bot in the place of the one it was sent), and whether a
forfeit a record claims happened (a timeout or crash is the referee's word).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from arena.kahuna import (
    Event,
    MalformedRecordError,
    deal_from_seed,
    record_from_json,
    replay,
)
from arena.kahuna.rng import reshuffle_from_seed
from arena.referee import GameReport, MatchConfig
from arena.referee.game import Clock
from arena.referee.results import FORFEIT
from arena.referee.seeds import deal_seed
from arena.referee.timings import decision_stats, seat_walls
from arena.referee.types import BotStatus
from arena.tournament.execution.executor import MatchJob

DealSeeds = Mapping[int, int]
"""Deal index -> the seed of that deal (and of its reshuffles)."""


def deal_seeds(config: MatchConfig) -> dict[int, int]:
    """The seeds of the deals ``config``'s games play, derived on the driver from the
    match's secret: the one place a Ray driver derives a match's seed material."""
    secret = config.secret
    if secret is None:
        raise ValueError("a match without its secret cannot derive its deal seeds")
    deals = sorted({config.deal_index(index) for index in config.indices_to_play})
    return {deal: deal_seed(secret, deal) for deal in deals}


def sealed(job: MatchJob, seeds: DealSeeds, indices: tuple[int, ...]) -> MatchJob:
    """``job`` playing only ``indices``, as a node gets it: the seeds of those games'
    deals instead of the secret."""
    needed = sorted({job.config.deal_index(index) for index in indices})
    given = tuple((deal, seeds[deal]) for deal in needed)
    config = dataclasses.replace(job.config, game_indices=indices, secret=None, deal_seeds=given)
    return dataclasses.replace(job, config=config)


class ForgedGame(Exception):
    """A reported game that is not a game of its match as dealt (the message says why)."""


def check_game(job: MatchJob, seeds: DealSeeds, report: GameReport) -> None:
    """ForgedGame unless ``report`` is game ``report.index`` of ``job``'s match as the
    driver dealt it: see the module docstring. ``seeds`` holds the seed of every deal
    ``job`` plays."""
    config = job.config
    index = report.index
    if isinstance(index, bool) or not isinstance(index, int) or index not in config.indices_to_play:
        raise ForgedGame(f"game index {index!r} is not one this job was given to play")
    where = f"game {index}"
    first, second = job.first.name, job.second.name
    names = (first, second) if index % 2 == 0 else (second, first)
    versions = {job.first.name: job.first.version, job.second.name: job.second.version}
    if tuple(report.bots_by_seat) != names:
        raise ForgedGame(f"{where}: seats {report.bots_by_seat}, the index gives {names}")
    _check_figures(where, report, names)
    if not isinstance(report.record, dict):
        raise ForgedGame(f"{where}: the record is not a JSON object")
    try:
        record = record_from_json(report.record)
    except MalformedRecordError as exc:
        raise ForgedGame(f"{where}: the record is malformed: {exc}") from None
    if record.variant != config.variant or record.handicap != config.handicap:
        raise ForgedGame(f"{where}: the record's variant or handicap is not the match's")
    meta = record.extra.get("match")
    if not isinstance(meta, dict):
        raise ForgedGame(f"{where}: the record has no match metadata")
    deal_index = config.deal_index(index)
    stated = {"game_index": index, "deal_index": deal_index, "paired": config.paired,
              "bots": [{"seat": seat, "name": name, "version": versions[name]}
                       for seat, name in enumerate(names)],
              "winner": report.winner, "reason": report.reason,
              "statuses": {name: str(s) for name, s in report.statuses.items()}}  # fmt: skip
    for key, value in stated.items():
        if meta.get(key) != value:
            raise ForgedGame(f"{where}: the record's {key} {meta.get(key)!r} is not {value!r}")
    seed = seeds[deal_index]
    if record.deal != deal_from_seed(seed):
        raise ForgedGame(f"{where}: the deal is not the one its seed derives")
    for k, order in enumerate(record.reshuffles):
        if reshuffle_from_seed(seed, k + 2, order) != order:
            raise ForgedGame(f"{where}: the reshuffle of round {k + 2} is not the seed's")
    if report.actions != len(record.actions):
        raise ForgedGame(f"{where}: {report.actions} actions reported, the record has"
                         f" {len(record.actions)}")  # fmt: skip
    try:
        replayed = replay(record)
    except MalformedRecordError as exc:
        raise ForgedGame(f"{where}: the record does not replay: {exc}") from None
    if replayed.error is not None:
        raise ForgedGame(f"{where}: the record does not replay: {replayed.error.message()}")
    _check_result(where, report, names, meta, replayed.state.outcome, record.result)
    history = replayed.state.history
    _check_times(where, config, report, names, meta, history)
    _check_clocks(where, config, report, names, meta, history)


TIME_ROUNDING_MS = 0.01
"""What a reported time may exceed its limit by: the referee rounds times to the
microsecond, and sums floats."""

LAUNCH_MS = 10_000.0
"""How long the launches of a match's bots may take before their Hello allowance starts
(sandbox set-up, process start: ``_Match._make_ready`` starts the Hello clock once every
bot it launches is started) and still count as start-up."""


def time_limit_ms(config: MatchConfig, decisions: int, failed: bool) -> float:
    """The most thinking time a bot can be charged in one game it made ``decisions``
    moves of (``arena.referee.game.Clock``): each answered request its per-action limit,
    and the bank once; a bot that ``failed`` also the whole allowance of the request
    it timed out or failed on (the game ends there)."""
    control = config.time_control
    requests = decisions + (1 if failed else 0)
    return float(requests * control.action_ms + control.bank_ms)


def startup_limit_ms(config: MatchConfig) -> float:
    """The most start-up time one game can carry for a bot: one launch (a half's first,
    or the relaunch after a failure, which forfeits the game it happens in, so a game
    follows at most one launch of each bot) waited for up to its Hello allowance, after
    its launch (``LAUNCH_MS``)."""
    return float(config.hello_timeout_ms) + LAUNCH_MS


def _check_times(
    where: str, config: MatchConfig, report: GameReport, names: tuple[str, str],
    meta: dict[str, object], history: Sequence[Event],
) -> None:  # fmt: skip
    """Each bot's thinking and start-up time is within what the config allows it in this
    game, and the record's clock times are the report's."""
    for seat, name in enumerate(names):
        decisions = sum(1 for event in history if event.seat == seat)
        failed = report.statuses[name] is not BotStatus.OK
        limit = time_limit_ms(config, decisions, failed)
        used = report.time_ms.get(name, 0.0)
        if used > limit + TIME_ROUNDING_MS:
            raise ForgedGame(f"{where}: {name} (seat {seat}) is charged {used} ms of thinking"
                             f" time, more than the {limit:.0f} ms the time control allows"
                             f" for its {decisions} moves")  # fmt: skip
        startup = report.startup_ms.get(name, 0.0)
        allowed = startup_limit_ms(config)
        if startup > allowed + TIME_ROUNDING_MS:
            raise ForgedGame(f"{where}: {name} (seat {seat}) is charged {startup} ms of"
                             f" start-up, more than the {allowed:.0f} ms one launch may"
                             " take")  # fmt: skip
    control = config.time_control
    stated = {"action_ms": control.action_ms, "bank_ms": control.bank_ms}
    if meta.get("time_control") != stated:
        raise ForgedGame(f"{where}: the record's time control {meta.get('time_control')!r}"
                         f" is not the match's {stated!r}")  # fmt: skip
    clocks = [report.time_ms.get(name) for name in names]
    if None not in clocks and meta.get("time_ms") != clocks:
        raise ForgedGame(f"{where}: the record's clock times {meta.get('time_ms')!r} are not"
                         f" the report's {clocks!r}")  # fmt: skip


def _check_figures(where: str, report: GameReport, names: tuple[str, str]) -> None:
    """The report's per-bot maps name the match's two bots only, with sane values."""
    if set(report.statuses) != set(names) or not all(
        isinstance(s, BotStatus) for s in report.statuses.values()
    ):
        raise ForgedGame(f"{where}: the statuses are not one per bot of the match")
    if not set(report.time_ms) <= set(names) or not all(
        isinstance(t, (int, float)) and math.isfinite(t) and t >= 0
        for t in report.time_ms.values()
    ):
        raise ForgedGame(f"{where}: the clock times are not a time per bot of the match")
    if not set(report.startup_ms) <= set(names) or not all(
        isinstance(t, (int, float)) and math.isfinite(t) and t >= 0
        for t in report.startup_ms.values()
    ):
        raise ForgedGame(f"{where}: the start-up times are not a time per bot of the match")
    if not set(report.stderr) <= set(names) or not all(
        isinstance(text, str) for text in report.stderr.values()
    ):
        raise ForgedGame(f"{where}: the stderr excerpts are not one per bot of the match")


def _check_result(
    where: str, report: GameReport, names: tuple[str, str], meta: dict[str, object],
    outcome: object, stated: object,
) -> None:  # fmt: skip
    """The report's winner and reason are the replay's, or the forfeit the record names."""
    failures = meta.get("failures")
    if not isinstance(failures, list) or not all(
        isinstance(f, dict) and f.get("seat") in (0, 1) for f in failures
    ):
        raise ForgedGame(f"{where}: the record's failures are unreadable")
    failed = {int(f["seat"]) for f in failures}
    for seat, name in enumerate(names):
        if (report.statuses[name] is not BotStatus.OK) != (seat in failed):
            raise ForgedGame(f"{where}: {name}'s status {report.statuses[name]} disagrees"
                             " with the record's failures")  # fmt: skip
    if failed:
        winner = None if len(failed) == 2 else names[1 - next(iter(failed))]
        reason = FORFEIT
    else:
        if outcome is None:
            raise ForgedGame(f"{where}: the record stops before the game ends, and no bot failed")
        if stated is not None and stated != outcome:
            raise ForgedGame(f"{where}: the record's result is not the one its actions reach")
        won: int | None = getattr(outcome, "winner", None)
        winner = None if won is None else names[won]
        reason = str(getattr(outcome, "termination", ""))
    if report.winner != winner or report.reason != reason:
        raise ForgedGame(f"{where}: reported {report.winner or 'no winner'} ({report.reason}),"
                         f" the record gives {winner or 'no winner'} ({reason})")  # fmt: skip


def _check_clocks(
    where: str, config: MatchConfig, report: GameReport, names: tuple[str, str],
    meta: dict[str, object], history: Sequence[Event],
) -> None:  # fmt: skip
    """The record's per-action times are one per action, by its seat, each within what the
    seat's clock allowed then; run through the clocks as the referee charges them, they
    give each bot's reported time (a bot that failed: plus at most its failed request's
    allowance), the record's bank left and per-seat decision figures."""
    timings = meta.get("timings")
    if not isinstance(timings, list) or len(timings) != len(history):
        raise ForgedGame(f"{where}: the record's timings are not one per action")
    control = config.time_control
    clocks = (Clock(control.action_ms, float(control.bank_ms)),
              Clock(control.action_ms, float(control.bank_ms)))  # fmt: skip
    for number, (timing, event) in enumerate(zip(timings, history, strict=True)):
        wall = timing.get("wall_ms") if isinstance(timing, dict) else None
        clock = clocks[event.seat]
        if not (isinstance(timing, dict) and timing.get("seat") == event.seat
                and isinstance(wall, (int, float)) and _is_number(wall)
                and 0 <= wall <= clock.allowance_ms + TIME_ROUNDING_MS):  # fmt: skip
            raise ForgedGame(f"{where}: the record's timing of action {number}, {timing!r},"
                             f" is not a time seat {event.seat}'s clock allowed"
                             f" ({clock.allowance_ms:.0f} ms)")  # fmt: skip
        clock.charge(float(wall))
    slack = TIME_ROUNDING_MS * (1 + len(history))  # each timing rounded on its own
    for seat, name in enumerate(names):
        clock = clocks[seat]
        used = report.time_ms.get(name)
        failed = report.statuses[name] is not BotStatus.OK
        most = clock.used_ms + (clock.allowance_ms if failed else 0.0)
        if used is not None and not clock.used_ms - slack <= used <= most + slack:
            also = " and one failed request's allowance" if failed else ""
            raise ForgedGame(f"{where}: {name} (seat {seat}) is charged {used} ms of thinking"
                             f" time, its moves' timings add up to {clock.used_ms:.3f}"
                             f" ms{also}")  # fmt: skip
    banks = meta.get("bank_left_ms")
    left = [clock.bank_ms for clock in clocks]
    if not (isinstance(banks, list) and len(banks) == 2 and all(
        _is_number(bank) and abs(bank - should) <= slack
        for bank, should in zip(banks, left, strict=True)
    )):  # fmt: skip
        raise ForgedGame(f"{where}: the record's bank left {banks!r} is not what its timings"
                         f" leave, {[round(bank, 3) for bank in left]!r}")  # fmt: skip
    figures = meta.get("decisions")
    derived = [decision_stats(seat_walls(timings, seat), None) for seat in (0, 1)]
    if not (isinstance(figures, list) and len(figures) == 2 and all(
        isinstance(given, dict) and given.get("decisions") == should["decisions"]
        and given.get("wall_ms") == should["wall_ms"]
        for given, should in zip(figures, derived, strict=True)
    )):  # fmt: skip
        raise ForgedGame(f"{where}: the record's decision figures are not its timings'")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
