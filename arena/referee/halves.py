"""The halves of a paired match: no bot process ever plays a deal twice.

When deals are paired, games 2k and 2k+1 share deal k (seats swapped). A
process that played game 2k knows that deal (its own hand, the cards it
drew, the GameOver record), so it must not play game 2k+1. A paired match
is therefore played as two separate runs of ``run_match`` -- half "even"
(game indices 0, 2, 4, ...) and half "odd" (1, 3, 5, ...) -- each with its
own freshly launched sandboxed processes for both bots: every process sees
each deal at most once, in one seat, and the GameOver records it receives
are of deals it never plays again. An unpaired match (a fresh deal every
game) is one run, and so is a paired match with a remote bot
(``arena serve --paired-remote``): its owner can link its processes however
they like, so separate runs would guarantee nothing and only ask the owner
to serve two seats at once.

``halves`` is the only place that decides which game indices share a run.
The runs of a match may be played at once (``run_halves``, `arena match`) or
one after the other with the next run's processes launched once the current
one's are ready (``play_in_turn``, a tournament worker): a prestart, so that the
second set of processes costs (almost) no wall time where a CPU is idle during a
match; a worker that plays several matches in turn also launches its next
match's first run while the last run of the current one plays (``first`` and
``then``).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from arena.referee.endpoint import WireTap
from arena.referee.live import LiveHook
from arena.referee.match import StartedMatch, start_match
from arena.referee.remote import SeatOfferHook
from arena.referee.types import BotSpec, GameReport, MatchConfig, MatchReport


def halves(
    indices: Iterable[int], *, paired: bool, remote: bool = False
) -> tuple[tuple[int, ...], ...]:
    """The runs that play ``indices`` (increasing): even and odd indices apart when paired.

    Empty halves are left out; unpaired indices are one run (each game has its own deal),
    and so are a remote bot's paired ones (see the module's docstring).
    """
    played = tuple(indices)
    if not paired or remote:
        return (played,) if played else ()
    even = tuple(index for index in played if index % 2 == 0)
    odd = tuple(index for index in played if index % 2 == 1)
    return tuple(half for half in (even, odd) if half)


def half_configs(config: MatchConfig, *, remote: bool = False) -> tuple[MatchConfig, ...]:
    """``config`` as the runs of its halves, each playing only its half's indices."""
    return tuple(
        dataclasses.replace(config, game_indices=half)
        for half in halves(config.indices_to_play, paired=config.paired, remote=remote)
    )


def run_halves(
    config: MatchConfig,
    bot_a: BotSpec,
    bot_b: BotSpec,
    *,
    on_game: Callable[[GameReport], None] | None = None,
    wire_tap_of_half: Callable[[int], WireTap | None] | None = None,
) -> MatchReport:
    """Play ``config`` half by half (``half_configs``), the halves concurrently, each
    with its own processes; the games come back in index order, the score summed.

    Each half's processes are launched once the half before it is ready (its bots said
    Hello), and that half plays meanwhile: launched together, four interpreters starting
    at once would share the CPUs and hold back the first game of both halves.
    ``on_game`` may be called from either half's thread; ``wire_tap_of_half(h)``
    gives the wire tap of half ``h`` (its processes' messages, see ``run_match``).
    """
    configs = half_configs(config)
    started: list[StartedMatch] = []
    try:
        with ThreadPoolExecutor(max_workers=len(configs), thread_name_prefix="half") as pool:
            playing = []
            try:
                for number, half in enumerate(configs):
                    if started:
                        started[-1].wait_ready()
                    tap = None if wire_tap_of_half is None else wire_tap_of_half(number)
                    started.append(start_match(half, bot_a, bot_b, wire_tap=tap))
                    playing.append(pool.submit(started[-1].run, on_game))
                reports = [future.result() for future in playing]
            except BaseException:  # Ctrl-C, a half that failed: the others play no more
                for run in started:  # games (leaving the pool waits for the halves' threads)
                    run.stop()
                raise
    finally:
        for run in started:
            run.close()  # idempotent: what ``run`` did not shut down (a failure)
    games = tuple(sorted((game for r in reports for game in r.games), key=lambda g: g.index))
    score: dict[str, float] = {}
    for report in reports:
        for name, points in report.score.items():
            score[name] = score.get(name, 0.0) + points
    return MatchReport(games=games, score=score)


RunDone = Callable[[int, MatchReport | None, BaseException | None], None]
"""Called with (run number, its report or None, the error it failed with or None)."""

Prestart = StartedMatch | BaseException | None
"""A run launched ahead of its turn (``start_match``), the error its launch failed
with (reported when its turn comes), or None: nothing launched."""


def prestart(launch: Callable[[], StartedMatch]) -> StartedMatch | BaseException:
    """``launch()``, or the error it failed with (that run's failure, reported later)."""
    try:
        return launch()
    except Exception as error:  # reported as that run's failure when its turn comes
        return error


def play_in_turn(
    configs: Sequence[MatchConfig],
    bot_a: BotSpec,
    bot_b: BotSpec,
    *,
    on_done: RunDone,
    on_game: Callable[[GameReport], None] | None = None,
    on_event: LiveHook | None = None,
    on_seat_offer: SeatOfferHook | None = None,
    first: Prestart = None,
    then: Callable[[], StartedMatch] | None = None,
    closing: list[threading.Thread] | None = None,
    ahead: bool = True,
) -> Prestart:
    """Play the runs ``configs`` (e.g. ``half_configs``) one after the other, each with
    its own processes; a run's processes are launched as soon as the run before it is
    ready (a prestart: they say Hello while that run plays, so that their launch costs
    no wall time where a CPU is idle during the ping-pong of a match). A run that fails
    is reported to ``on_done`` and the next one is still played.

    Across matches (a tournament worker's next match): ``first`` is the first run
    launched already by the caller (what ``then`` gave the call before), and ``then``
    launches whatever follows the last run, together with the last run's processes;
    that prestart is returned, the caller's to play or close. If this call raises,
    nothing it launched is left running (``first`` and ``then``'s included).

    ``ahead=False`` launches each run's processes only when its turn comes, and nothing
    for ``then``: for a caller with no CPU to spare (a worker pinned to one CPU), where
    a prestart cannot hide a launch and only makes it share that CPU with the current
    run's game (docs/reference/PROTOCOL.md, "Processes per worker").

    A finished run's processes are shut down in a thread (``StartedMatch.close``: their
    moment to exit after MatchOver, the cleanup) while the next run plays; the call
    returns once they are all gone, unless ``closing`` is given: then those threads
    are put there, for the caller to join (so that the next match need not wait).
    """

    def start(config: MatchConfig) -> StartedMatch:
        return start_match(config, bot_a, bot_b, on_seat_offer=on_seat_offer, on_event=on_event)

    waiting: Prestart = first
    following: Prestart = None  # what ``then`` launched: the caller's
    closes: list[threading.Thread] = []  # runs that are over, shutting down meanwhile
    try:
        for number, config in enumerate(configs):
            current = waiting if waiting is not None else prestart(functools.partial(start, config))
            waiting = None
            if isinstance(current, BaseException):
                on_done(number, None, current)
                continue
            current.wait_ready()
            # the next run's processes launch once the current run's are ready (not with
            # them: on a busy machine both launches would share the CPUs, and the current
            # run would wait for twice the launch), and say Hello while it plays
            if ahead and number + 1 < len(configs):
                waiting = prestart(functools.partial(start, configs[number + 1]))
            elif ahead and then is not None:
                following = prestart(then)
            try:
                report = current.play(on_game)
            except Exception as error:  # reported as that run's failure
                on_done(number, None, error)
                continue
            closes.append(threading.Thread(target=current.close, name="close-run"))
            closes[-1].start()
            on_done(number, report, None)
    except BaseException:
        if isinstance(following, StartedMatch):
            following.close()
        raise
    finally:
        if isinstance(waiting, StartedMatch):
            waiting.close()
        if closing is None:
            for thread in closes:
                thread.join()
        else:
            closing.extend(closes)
    return following
