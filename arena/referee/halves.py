"""The halves of a match: no bot process ever plays a deal twice.

A half is the games of a match that one launch of the bots plays. When deals
are paired, games 2k and 2k+1 share deal k (seats swapped). A process that
played game 2k knows that deal (its own hand, the cards it drew, the GameOver
record), so it must not play game 2k+1. A paired match is therefore played in
two halves -- "even" (game indices 0, 2, 4, ...) and "odd" (1, 3, 5, ...) --
each a ``run_match`` with its own freshly launched sandboxed processes for both
bots: every process sees each deal at most once, in one seat, and the GameOver
records it receives are of deals it never plays again. An unpaired match (a
fresh deal every game) is one half, and so is a paired match with a remote bot
(``arena serve --paired-remote``): its owner can link its processes however
they like, so separate halves would guarantee nothing and only ask the owner to
serve two seats at once.

``halves`` is the only place that decides which game indices share a half. The
halves of a match may be played at once (``run_halves``, `arena match`) or one
after the other (``play_in_turn``, a tournament worker), the next half's bots
launched while the current half plays where ``arena.referee.prestart`` says so;
a worker that plays several matches in turn may also launch its next match's
first half while the last half of the current one plays (``first`` and ``then``).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from arena.referee.endpoint import WireTap
from arena.referee.live import LiveHook
from arena.referee.match import StartedMatch, run_match, start_match
from arena.referee.prestart import Prestart
from arena.referee.remote import SeatOfferHook
from arena.referee.types import BotSpec, GameReport, MatchConfig, MatchReport


def halves(
    indices: Iterable[int], *, paired: bool, remote: bool = False
) -> tuple[tuple[int, ...], ...]:
    """The halves that play ``indices`` (increasing): even and odd indices apart when paired.

    Empty halves are left out; unpaired indices are one half (each game has its own deal),
    and so are a remote bot's paired ones (see the module's docstring).
    """
    played = tuple(indices)
    if not paired or remote:
        return (played,) if played else ()
    even = tuple(index for index in played if index % 2 == 0)
    odd = tuple(index for index in played if index % 2 == 1)
    return tuple(half for half in (even, odd) if half)


def half_configs(config: MatchConfig, *, remote: bool = False) -> tuple[MatchConfig, ...]:
    """``config`` as its halves, each playing only its half's indices."""
    return tuple(
        dataclasses.replace(config, game_indices=half)
        for half in halves(config.indices_to_play, paired=config.paired, remote=remote)
    )


def run_halves(
    config: MatchConfig,
    bot_a: BotSpec,
    bot_b: BotSpec,
    *,
    prestart: Prestart,
    on_game: Callable[[GameReport], None] | None = None,
    wire_tap_of_half: Callable[[int], WireTap | None] | None = None,
) -> MatchReport:
    """Play ``config`` half by half (``half_configs``), each half with its own processes;
    the games come back in index order, the score summed.

    Where ``prestart`` is on, the halves play at once: each half's processes are launched
    once the half before it is ready (its bots said Hello), and that half plays meanwhile
    (launched together, four interpreters starting at once would share the CPUs and hold
    back the first game of both halves). Where it is off, each half is launched and played
    once the half before it is over. ``on_game`` may be called from either half's thread;
    ``wire_tap_of_half(h)`` gives the wire tap of half ``h`` (its processes' messages, see
    ``run_match``).
    """
    configs = half_configs(config)

    def tap(number: int) -> WireTap | None:
        return None if wire_tap_of_half is None else wire_tap_of_half(number)

    if prestart.on:
        reports = _at_once(configs, bot_a, bot_b, on_game, tap)
    else:
        reports = [run_match(half, bot_a, bot_b, on_game=on_game, wire_tap=tap(number))
                   for number, half in enumerate(configs)]  # fmt: skip
    games = tuple(sorted((game for r in reports for game in r.games), key=lambda g: g.index))
    score: dict[str, float] = {}
    for report in reports:
        for name, points in report.score.items():
            score[name] = score.get(name, 0.0) + points
    return MatchReport(games=games, score=score)


def _at_once(
    configs: Sequence[MatchConfig],
    bot_a: BotSpec,
    bot_b: BotSpec,
    on_game: Callable[[GameReport], None] | None,
    tap: Callable[[int], WireTap | None],
) -> list[MatchReport]:
    """The halves ``configs`` played concurrently, each launched once the one before is ready."""
    started: list[StartedMatch] = []
    try:
        with ThreadPoolExecutor(max_workers=len(configs), thread_name_prefix="half") as pool:
            playing = []
            try:
                for number, half in enumerate(configs):
                    if started:
                        started[-1].wait_ready()
                    started.append(start_match(half, bot_a, bot_b, wire_tap=tap(number)))
                    playing.append(pool.submit(started[-1].run, on_game))
                return [future.result() for future in playing]
            except BaseException:  # Ctrl-C, a half that failed: the others play no more
                for half_started in started:  # games (leaving the pool waits for their threads)
                    half_started.stop()
                raise
    finally:
        for half_started in started:
            half_started.close()  # idempotent: what ``run`` did not shut down (a failure)


HalfDone = Callable[[int, MatchReport | None, BaseException | None], None]
"""Called with (half number, its report or None, the error it failed with or None)."""

Launched = StartedMatch | BaseException | None
"""A half launched ahead of its turn (``start_match``), the error its launch failed
with (reported when its turn comes), or None: nothing launched."""


def launch_ahead(launch: Callable[[], StartedMatch]) -> StartedMatch | BaseException:
    """``launch()``, or the error it failed with (that half's failure, reported later)."""
    try:
        return launch()
    except Exception as error:  # reported as that half's failure when its turn comes
        return error


def play_in_turn(
    configs: Sequence[MatchConfig],
    bot_a: BotSpec,
    bot_b: BotSpec,
    *,
    prestart: Prestart,
    on_done: HalfDone,
    on_game: Callable[[GameReport], None] | None = None,
    on_event: LiveHook | None = None,
    on_seat_offer: SeatOfferHook | None = None,
    first: Launched = None,
    then: Callable[[], StartedMatch] | None = None,
    closing: list[threading.Thread] | None = None,
) -> Launched:
    """Play the halves ``configs`` (e.g. ``half_configs``) one after the other, each with
    its own processes. Where ``prestart`` is on (``arena.referee.prestart``), a half's
    processes are launched as soon as the half before it is ready: they say Hello while
    that half plays; where it is off, each half's when its turn comes. A half that fails
    is reported to ``on_done`` and the next one is still played.

    Across matches (a tournament worker's next match): ``first`` is the first half
    launched already by the caller (what ``then`` gave the call before), and ``then``
    (given where the next match's prestart is on) launches it, once the last half's
    processes are ready; what it launched is returned, the caller's to play or close. If
    this call raises, nothing it launched is left running (``first`` and ``then``'s
    included).

    A finished half's processes are shut down in a thread (``StartedMatch.close``: their
    moment to exit after MatchOver, the cleanup) while a prestarted next half plays;
    without a prestart the next half launches once they are gone, so that a bot's two
    processes of a match never run at once. The call returns once they are all gone,
    unless ``closing`` is given: then those still running are put there, for the
    caller to join (so that the next match need not wait).
    """

    def start(config: MatchConfig) -> StartedMatch:
        return start_match(config, bot_a, bot_b, on_seat_offer=on_seat_offer, on_event=on_event)

    waiting: Launched = first
    following: Launched = None  # what ``then`` launched: the caller's
    closes: list[threading.Thread] = []  # halves that are over, shutting down meanwhile
    try:
        for number, config in enumerate(configs):
            current = waiting
            if current is None:
                # no process of the half before runs beside this one's: after its MatchOver
                # it holds every deal that half played, which this half plays in the
                # other seats (what the machine shares, no sandbox hides)
                for thread in closes:
                    thread.join()
                current = launch_ahead(functools.partial(start, config))
            waiting = None
            if isinstance(current, BaseException):
                on_done(number, None, current)
                continue
            current.its_turn()  # launched ahead, it was idle and its start-up not yet timed
            current.wait_ready()
            # the next half's processes launch once the current half's are ready (not with
            # them: on a busy machine both launches would share the CPUs, and the current
            # half would wait for twice the launch), and say Hello while it plays
            if number + 1 < len(configs):
                if prestart.on:
                    waiting = launch_ahead(functools.partial(start, configs[number + 1]))
            elif then is not None:
                following = launch_ahead(then)
            try:
                report = current.play(on_game)
            except Exception as error:  # reported as that half's failure
                on_done(number, None, error)
                continue
            closes.append(threading.Thread(target=current.close, name="close-half"))
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
