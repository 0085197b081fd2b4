"""``run_match``: N games between two bots through the gRPC referee.

Bot A sits in seat 0 in even games and seat 1 in odd games; games 2k and
2k+1 share the deal (and the seed of their reshuffles), so every deal is
played once from each side (unless ``config.paired`` is False: a fresh deal
every game). Deals are keyed by ``config.secret`` (``arena.referee.seeds``),
which no bot ever receives. Each bot has a private Unix socket in a fresh
temporary directory and is launched once per match (again after a failure
that killed it, at most ``max_restarts`` times). Everything a bot does goes
through ``judge``; a failure forfeits the game in progress, or the next game
when it happens between games. Nothing is ever played in a bot's place.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from arena.kahuna import (
    State,
    deal_from_seed,
    new_game,
    record_of,
    record_to_json,
)
from arena.logs import get_logger
from arena.protocol import messages
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.endpoint import BotEndpoint, WireTap
from arena.referee.freezer import Freezer
from arena.referee.game import Clock, GameTiming, RefereeState
from arena.referee.judge import PROTOCOL_VERSION, Phase, Verdict, VerdictKind
from arena.referee.live import GameStarted, LiveHook
from arena.referee.play import GameDriver
from arena.referee.remote import REMOTE_RUNTIME, SeatOfferHook
from arena.referee.results import Failures, PlayedGame, game_over_messages, score_games
from arena.referee.seeds import deal_seed
from arena.referee.slots import BotSlot
from arena.referee.turn_loop import ArrivalQueue, TurnLoop
from arena.referee.types import (
    ANONYMOUS_OPPONENT,
    BotSpec,
    BotStatus,
    GameReport,
    MatchConfig,
    MatchReport,
)
from arena.sandbox import BotProcess, SandboxConfigError, probe_host
from arena.sandbox.watchdog import work_directory

MATCH_END_GRACE_S = 1.0
KEPT_CONNECTION = frozenset({BotStatus.OK, BotStatus.TIMEOUT, BotStatus.ILLEGAL_ACTION})
NS_PER_MS = 1_000_000
STDERR_KEPT_FOR = frozenset({BotStatus.CRASH, BotStatus.DISCONNECT, BotStatus.TIMEOUT})


def printable(text: str) -> str:
    """``text`` with control characters (terminal escapes) spelled out, newlines kept."""
    return "".join(
        char if char.isprintable() or char in "\n\t" else char.encode("unicode_escape").decode()
        for char in text
    )


def display_names(bot_a: BotSpec, bot_b: BotSpec) -> tuple[str, str]:
    """Unique names for the two bots (a bot may play itself: name#1, name#2)."""
    if bot_a.name != bot_b.name:
        return bot_a.name, bot_b.name
    return f"{bot_a.name}#1", f"{bot_b.name}#2"


def run_match(
    config: MatchConfig,
    bot_a: BotSpec,
    bot_b: BotSpec,
    *,
    on_game: Callable[[GameReport], None] | None = None,
    wire_tap: WireTap | None = None,
    on_seat_offer: SeatOfferHook | None = None,
    on_event: LiveHook | None = None,
) -> MatchReport:
    """Play the games of ``config`` (``config.indices_to_play``) between ``bot_a`` and ``bot_b``.

    ``on_game`` is called with each game's report as soon as it is over;
    ``wire_tap`` with (0 for bot_a / 1 for bot_b, bytes) for every message the
    referee puts on the wire, exactly as sent; ``on_event`` with each game's
    start, every action right after it is applied and every reshuffle
    (``arena.referee.live``: full information, for a live view, never for bots).
    """
    started = start_match(
        config, bot_a, bot_b, wire_tap=wire_tap, on_seat_offer=on_seat_offer, on_event=on_event
    )
    return started.run(on_game)


def start_match(
    config: MatchConfig,
    bot_a: BotSpec,
    bot_b: BotSpec,
    *,
    wire_tap: WireTap | None = None,
    on_seat_offer: SeatOfferHook | None = None,
    on_event: LiveHook | None = None,
) -> StartedMatch:
    """Launch the bots of a match (a half, ``arena.referee.halves``) in a thread of its
    own (Hello, Welcome), to play it later: where ``arena.referee.prestart`` says so,
    while the half before it plays (``play_in_turn``, ``run_halves``).
    The caller must ``run`` or ``close`` what it gets. A bot that fails before
    the first game (no Hello in time, a launch refused) has that game forfeited,
    exactly as if it had been launched when the game began.
    """
    if on_seat_offer is None and REMOTE_RUNTIME in (bot_a.runtime, bot_b.runtime):
        raise ValueError("a remote bot plays only in tournaments run by `arena serve`")
    return StartedMatch(config, (bot_a, bot_b), wire_tap, on_event, on_seat_offer)


AHEAD_POLL_NS = 50_000_000
"""How often a launch ahead of its turn, Hello still awaited, looks whether its turn came."""


class MatchStoppedError(RuntimeError):
    """A match told to stop (``StartedMatch.stop``) before its next game."""


class StartedMatch:
    """A match whose bots are being launched in a thread of its own (``start_match``)."""

    def __init__(
        self,
        config: MatchConfig,
        specs: tuple[BotSpec, BotSpec],
        wire_tap: WireTap | None,
        on_event: LiveHook | None,
        on_seat_offer: SeatOfferHook | None,
    ) -> None:
        self._work = work_directory()
        self._match = _Match(config, specs, Path(self._work.name), wire_tap, on_event,
                             on_seat_offer)  # fmt: skip
        self._error: BaseException | None = None
        self._closed = False
        self._launcher = threading.Thread(target=self._launch, name="launch", daemon=True)
        self._launcher.start()

    def _launch(self) -> None:
        try:
            self._match.start()
        except BaseException as error:  # raised again by run(), in the caller's thread
            self._error = error

    def wait_ready(self) -> None:
        """Return once every bot has said Hello (or failed to)."""
        self._launcher.join()

    def its_turn(self) -> None:
        """The match's turn has come (``play`` says so too): until now its bots were
        launched ahead of it, in the idle scheduling class, and their start-up was not
        theirs to be charged or timed (``_Match.its_turn``)."""
        self._match.its_turn()

    def run(self, on_game: Callable[[GameReport], None] | None = None) -> MatchReport:
        """Play the match (once its bots are ready), then shut them down."""
        try:
            return self.play(on_game)
        finally:
            self.close()

    def play(self, on_game: Callable[[GameReport], None] | None = None) -> MatchReport:
        """Play the match up to its MatchOver, leaving the shutdown (``close``: the bots'
        moment to exit, the endpoints' stop) to the caller, e.g. while the next half
        plays; a match that fails is closed at once."""
        try:
            self.its_turn()
            self.wait_ready()
            if self._error is not None:
                raise self._error
            return self._match.run(on_game)
        except BaseException:
            self.close()
            raise

    def stop(self) -> None:
        """Play no further game (from any thread): ``play`` raises MatchStoppedError once
        the game in progress is over, and the bots are shut down (Ctrl-C of `arena match`)."""
        self._match.stopping.set()

    def close(self) -> None:
        """Shut the bots down (``_Match.shut_down``: a moment to exit once their streams
        close, then every tree killed), played or not, and remove the match's directory."""
        if self._closed:
            return
        self._closed = True
        self._match.stopping.set()  # a launch still ahead of its turn waits for no Hello
        self.wait_ready()
        self._match.shut_down()
        self._work.cleanup()


class _Match:
    def __init__(
        self,
        config: MatchConfig,
        specs: tuple[BotSpec, BotSpec],
        work: Path,
        wire_tap: WireTap | None,
        on_event: LiveHook | None = None,
        on_seat_offer: SeatOfferHook | None = None,
    ) -> None:
        self.config = config
        self.on_event = on_event
        self.match_id = secrets.token_hex(6)
        arrivals = ArrivalQueue()
        names = display_names(*specs)
        self.slots = tuple(
            BotSlot(
                index=index,
                spec=spec,
                name=names[index],
                endpoint=BotEndpoint(index, work / f"b{index}.sock", arrivals, wire_tap),
                work_dir=work,
                offer_seat=on_seat_offer,
                match_id=self.match_id,
            )
            for index, spec in enumerate(specs)
        )
        self.freezer = Freezer(self.slots, enabled=not config.ponder)
        self.turn_loop = TurnLoop(arrivals, self.slots, self.freezer)
        self.sandboxed_paths = probe_host().namespaces
        self.log = get_logger(match_id=self.match_id)
        self.stderr_tails: dict[int, str] = {}  # slot -> its stderr's first and last lines
        self.early_failures: Failures = {}  # failed before the first game: it forfeits that one
        self.startup_ns: dict[int, int] = {}  # slot -> its launches' time to Hello, not yet
        # charged to a game: the next game's report carries it (``GameReport.startup_ms``)
        self.turn_ns: int | None = None  # when its turn came (``its_turn``); None: ahead
        self._turn_lock = threading.Lock()  # its_turn (the caller) beside a launch (``start``)
        self._started = False
        self._shut = False
        self.stopping = threading.Event()  # StartedMatch.stop: no further game

    # ------------------------------------------------------------------ match

    def start(self) -> None:
        """Open the bots' endpoints and launch them: they say Hello before game one, and
        wait for it frozen (``Freezer.hold_all``: launched ahead, they may wait a half)."""
        self._started = True
        for slot in self.slots:
            slot.endpoint.start()
        self._make_ready(self.early_failures)
        self.freezer.hold_all()

    def its_turn(self) -> None:
        """The match may play now (from any thread; once). Until then it was launched ahead
        of its turn, beside a half being played: each bot ran in the idle scheduling class
        (on CPU no playing bot wanted), and its start-up neither counted towards its Hello
        allowance nor was charged to it (``_started_up``); from now on both count, and it
        runs as any bot does."""
        with self._turn_lock:
            if self.turn_ns is not None:
                return
            self.turn_ns = time.monotonic_ns()
            for slot in self.slots:
                if isinstance(slot.process, BotProcess):
                    slot.process.set_idle(False)

    def run(self, on_game: Callable[[GameReport], None] | None) -> MatchReport:
        """Play every game and say MatchOver; the caller shuts the bots down."""
        self.its_turn()
        reports: list[GameReport] = []
        self.log.info("match_started", bots=[slot.name for slot in self.slots])
        self.freezer.thaw_all()  # held since their Hello (``start``)
        for game_index in self.config.indices_to_play:
            if self.stopping.is_set():
                raise MatchStoppedError(f"match {self.match_id} stopped before game {game_index}")
            report = self._play_game(game_index)
            reports.append(report)
            if on_game is not None:
                on_game(report)
        score = score_games(reports, [slot.name for slot in self.slots])
        self._say_match_over(score)
        self.log.info("match_finished", score=score)
        return MatchReport(games=tuple(reports), score=score)

    def _say_match_over(self, score: dict[str, float]) -> None:
        self.freezer.thaw_all()
        for slot in self.slots:
            other = self.slots[1 - slot.index]
            slot.send(
                messages.match_over(
                    your_score=score[slot.name],
                    opponent_score=score[other.name],
                    games=len(self.config.indices_to_play),
                )
            )
            slot.endpoint.close_stream()

    def shut_down(self) -> None:
        """Give bots a moment to exit after MatchOver, then kill every tree (once)."""
        if not self._started or self._shut:
            return
        self._shut = True
        self.freezer.thaw_all()  # a frozen bot can neither read MatchOver nor exit
        self.freezer.report()
        deadline = time.monotonic() + MATCH_END_GRACE_S
        for slot in self.slots:
            slot.endpoint.close_stream()
            if slot.process is not None and slot.ready:
                slot.process.wait(max(0.0, deadline - time.monotonic()))
            slot.kill()
        for slot in self.slots:
            slot.endpoint.stop()

    # ------------------------------------------------------------------ bots

    def _make_ready(self, failures: Failures) -> None:
        """Launch every bot that is not connected (within its restarts); await Hellos."""
        launching: list[BotSlot] = []
        launched_ns: dict[int, int] = {}  # slot -> when its launch began (monotonic)
        for slot in self.slots:
            if slot.ready or slot.index in failures:
                continue
            if not slot.can_launch(self.config.max_restarts):
                status = slot.last_failure or BotStatus.CRASH
                failures[slot.index] = (status, "restart limit reached: forfeits the rest")
                continue
            launched_ns[slot.index] = time.monotonic_ns()
            with self._turn_lock:
                ahead = self.turn_ns is None
            try:
                slot.launch(self.config, self.sandboxed_paths, idle=ahead)
                with self._turn_lock:  # its turn came during the launch: run normally
                    if ahead and self.turn_ns is not None and isinstance(slot.process, BotProcess):
                        slot.process.set_idle(False)
            except (OSError, SandboxConfigError) as error:
                # the bot's command cannot be started (E2BIG, ENOENT, ...): that bot's
                # crash, never the match's failure; it counts as a launch (restart limit)
                reason = (error.strerror if isinstance(error, OSError) else None) or str(error)
                failures.setdefault(slot.index, (BotStatus.CRASH, f"cannot be launched: {reason}"))
                slot.last_failure = BotStatus.CRASH
                slot.process = None
                self.log.info("bot_launch_failed", bot=slot.name, reason=reason)
                continue
            launching.append(slot)
        for slot in self.slots:  # ready beside a start-up charged to another: held
            if launching and slot.ready and slot not in launching:
                self.freezer.hold(slot.index)
        hello = Clock(self.config.hello_timeout_ms)  # one wait for every launched bot
        hello.start(time.monotonic_ns())
        for slot in launching:
            slot.expect.clock = hello
        while any(slot.expect.phase is Phase.AWAIT_HELLO and slot.process for slot in launching):
            awaited = next(
                slot.index for slot in launching if slot.expect.phase is Phase.AWAIT_HELLO
                and slot.process
            )
            turn_ns = self.turn_ns
            if turn_ns is None:  # ahead of its turn: its Hello allowance starts with the turn
                if self.stopping.is_set():
                    break  # closed before its turn: the bots yet to say Hello are killed
                found = self.turn_loop.wait(None, time.monotonic_ns() + AHEAD_POLL_NS)
                if found is None:
                    continue
            else:
                hello.start(max(hello.started_ns, turn_ns))
                found = self.turn_loop.wait(awaited, hello.deadline_ns)
            assert found is not None
            who, verdict = found
            if verdict.kind is VerdictKind.HELLO:
                self._welcome(self.slots[who])
                if any(s.expect.phase is Phase.AWAIT_HELLO and s.process for s in launching):
                    self.freezer.hold(who)  # ready while the other still starts up
            else:
                self._fail(who, verdict, failures)
            self._started_up(launched_ns, who)
        for index in list(launched_ns):  # a launch refused, or a bot cut off otherwise
            self._started_up(launched_ns, index)

    def _started_up(self, launched_ns: dict[int, int], index: int) -> None:
        """Count slot ``index``'s launch, from its start to now (its Hello, its failure), as
        its start-up time: the slot's runner time it spent before the game (once)."""
        began = launched_ns.pop(index, None)
        turn_ns = self.turn_ns
        if began is not None and turn_ns is not None:  # ahead of its turn: nobody waited
            spent = max(0, time.monotonic_ns() - max(began, turn_ns))
            self.startup_ns[index] = self.startup_ns.get(index, 0) + spent

    def _welcome(self, slot: BotSlot) -> None:
        slot.ready = True
        slot.expect.phase = Phase.IDLE
        other = self.slots[1 - slot.index]
        welcome = messages.welcome(
            protocol_version=PROTOCOL_VERSION,
            match_id=self.match_id,
            games=len(self.config.indices_to_play),
            bot_name=slot.name,
            opponent_name=self._opponent_name(other),
            variant=self.config.variant,
            time_control=self._time_control_pb(),
        )
        slot.send(welcome)
        get_logger(match_id=self.match_id, bot=slot.name).info("bot_connected")

    def _opponent_name(self, other: BotSlot) -> str:
        return ANONYMOUS_OPPONENT if self.config.anonymous_opponents else other.name

    def _time_control_pb(self) -> referee_pb2.TimeControl:
        control = self.config.time_control
        return messages.time_control_to_pb(control.action_ms, control.bank_ms)

    def _drain(self, failures: Failures) -> None:
        """Judge what the bots sent between games: failures count for this game."""
        while True:
            found = self.turn_loop.wait(None, time.monotonic_ns())
            if found is None:
                return
            self._fail(*found, failures)

    def _fail(self, who: int, verdict: Verdict, failures: Failures) -> None:
        slot = self.slots[who]
        if who not in failures and verdict.status in STDERR_KEPT_FOR:
            # The bot's own text is private to its owner: it goes to the
            # report's stderr, never into the public reason or record.
            kept = slot.stderr_excerpt()
            if kept:
                self.stderr_tails[who] = printable(kept)
        failures.setdefault(who, (verdict.status, verdict.reason))
        slot.last_failure = verdict.status
        self.log.info(
            "bot_failed", bot=slot.name, status=verdict.status.value, reason=verdict.reason
        )
        hello_pending = slot.expect.phase is Phase.AWAIT_HELLO
        if verdict.status not in KEPT_CONNECTION or hello_pending:
            slot.cut_off(verdict.status, verdict.reason)

    # ------------------------------------------------------------------ game

    def _play_game(self, game_index: int) -> GameReport:
        slot_at_seat = (0, 1) if game_index % 2 == 0 else (1, 0)
        seed = _deal_seed(self.config, game_index)
        deal = deal_from_seed(seed)
        failures: Failures = self.early_failures
        self.early_failures = {}
        self.stderr_tails = {w: kept for w, kept in self.stderr_tails.items() if w in failures}
        self._drain(failures)
        self._make_ready(failures)
        self.freezer.thaw_all()  # held while a relaunched bot started up
        startup_ns, self.startup_ns = self.startup_ns, {}
        control = self.config.time_control
        log = GameTiming.start(control.action_ms, control.bank_ms)
        turns = RefereeState(new_game(deal, self.config.variant, self.config.handicap))
        self._say_game_start(game_index, slot_at_seat)
        if self.on_event is not None:
            head = self._head(game_index, deal, turns.state, slot_at_seat)
            self.on_event(GameStarted(game_index, head))
        processes = [self.slots[slot].process for slot in slot_at_seat]
        cpu_start_ms = [None if process is None else process.cpu_time_ms() for process in processes]
        game = GameDriver(
            index=game_index, seed=seed, turns=turns, slot_at_seat=slot_at_seat, log=log,
            failures=failures, slots=self.slots, fail=self._fail, on_event=self.on_event,
            freezer=self.freezer,
        )  # fmt: skip
        try:
            self.turn_loop.play(game)
        finally:
            self.freezer.thaw_all()  # both read GameOver; between games nobody is frozen
        for seat, process in enumerate(processes):
            same_process = process is not None and process is self.slots[slot_at_seat[seat]].process
            start_ms = cpu_start_ms[seat]
            end_ms = process.cpu_time_ms() if process is not None and same_process else None
            log.cpu_ms[seat] = None if start_ms is None or end_ms is None else end_ms - start_ms
        result = PlayedGame(
            match_id=self.match_id,
            config=self.config,
            game_index=game_index,
            deal=deal,
            names=tuple(slot.name for slot in self.slots),
            versions=tuple(slot.spec.version for slot in self.slots),
            slot_at_seat=slot_at_seat,
            turns=turns,
            log=log,
            failures=failures,
            stderr_tails=dict(self.stderr_tails),
            startup_ms={slot: spent / NS_PER_MS for slot, spent in startup_ns.items()},
        )
        report = result.report()
        for slot, message in zip(self.slots, game_over_messages(result, report), strict=True):
            slot.send(message)
        self.log.info(
            "game_finished",
            game=game_index,
            winner=report.winner,
            reason=report.reason,
            actions=report.actions,
        )
        return report

    def _head(
        self, game_index: int, deal: tuple[str, ...], state: State, slot_at_seat: tuple[int, int]
    ) -> dict[str, object]:
        """The record before the first action, with who sits where (for live views)."""
        control = self.config.time_control
        bots = [
            {"seat": seat, "name": self.slots[slot].name, "version": self.slots[slot].spec.version}
            for seat, slot in enumerate(slot_at_seat)
        ]
        match = {
            "match_id": self.match_id,
            "game_index": game_index,
            "bots": bots,
            "time_control": {"action_ms": control.action_ms, "bank_ms": control.bank_ms},
        }
        head = record_to_json(record_of(state, deal, (), extra={"match": match}))
        head.pop("actions", None)
        return head

    def _say_game_start(self, game_index: int, slot_at_seat: tuple[int, int]) -> None:
        for seat, slot_index in enumerate(slot_at_seat):
            slot = self.slots[slot_index]
            game_start = messages.game_start(
                game_index=game_index,
                seat=seat,
                variant=self.config.variant,
                time_control=self._time_control_pb(),
                opponent_name=self._opponent_name(self.slots[1 - slot_index]),
            )
            slot.send(game_start)


def _deal_seed(config: MatchConfig, game_index: int) -> int:
    """The seed of the deal game ``game_index`` plays: given (``deal_seeds``), or derived
    from the match's secret."""
    deal = config.deal_index(game_index)
    if config.deal_seeds is not None:
        return dict(config.deal_seeds)[deal]
    assert config.secret is not None  # MatchConfig holds one or the other
    return deal_seed(config.secret, deal)
