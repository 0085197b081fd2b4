"""The scripted referee of `arena bot check`: the real transport, judge and sandbox.

The bot is launched by the referee's own ``BotSlot`` (same sandbox, same
environment, same binds), talks to a real ``BotEndpoint`` on a private Unix
socket, and everything it sends is judged by ``arena.referee.judge`` through
the referee's ``Inbox``. Requests are built by ``RefereeState`` (the hot-path
frames the real referee sends), and GameOver messages by
``arena.referee.results``; only the positions are scripted
(``arena.conformance.scenarios``). Scenarios that share a variant
are played on one connection, as the games of one match; every
connection ends with MatchOver, after which the bot must exit.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from arena.conformance.report import EXIT, HELLO, NOT_PLAYED, CheckReport, ScenarioResult
from arena.conformance.scenarios import (
    DEFAULT_CLOCK,
    SCENARIOS,
    Kind,
    Playout,
    Scenario,
    opened,
)
from arena.kahuna import ActionType
from arena.logs import get_logger
from arena.protocol.convert import variant_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.endpoint import BotEndpoint
from arena.referee.game import Clock, GameTiming, RefereeState
from arena.referee.judge import PROTOCOL_VERSION, Phase, Verdict, VerdictKind, exit_words
from arena.referee.match import KEPT_CONNECTION, STDERR_KEPT_FOR, printable
from arena.referee.remote import REMOTE_RUNTIME
from arena.referee.results import Failures, PlayedGame, game_over_messages, score_games
from arena.referee.slots import BotSlot
from arena.referee.turn_loop import ArrivalQueue, TurnLoop
from arena.referee.types import (
    HELLO_TIMEOUT_MS,
    BotSpec,
    BotStatus,
    GameReport,
    MatchConfig,
    TimeControl,
)
from arena.sandbox import BotProcess, SandboxConfigError, SandboxLimits, probe_host
from arena.sandbox.watchdog import work_directory

NS_PER_MS = 1_000_000
BOT_SLOT, OPPONENT_SLOT = 0, 1
OPPONENT_NAME = "scripted-opponent"
EXIT_GRACE_S = 5.0
"""How long a bot has to exit after MatchOver. The referee waits 1 s and then kills
it, without a penalty; the check allows for a loaded machine and reports the time."""
SCENARIO_OVER = "the scripted opponent forfeits: the scenario is over"
MAX_FAILED_LAUNCHES = 2
"""After this many launches in a row without a Hello, the rest is not played."""
MAX_SILENT_SCENARIOS = 2
"""After this many scenarios in a row whose first request the bot let time out, the
rest is not played: each would wait out a whole clock (32 s) to say the same."""


def check_bot(
    spec: BotSpec,
    *,
    scenarios: Sequence[Scenario] = SCENARIOS,
    limits: SandboxLimits | None = None,
    unsafe: bool = False,
    hello_timeout_ms: int = HELLO_TIMEOUT_MS,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> CheckReport:
    """Play ``spec`` through ``scenarios`` in the sandbox; what it did in each
    (``on_result`` hears each scenario's result as soon as it is known: progress)."""
    if spec.runtime == REMOTE_RUNTIME:
        raise ValueError(f"bot {spec.name!r} is remote: the arena launches nothing to check")
    config = MatchConfig(
        limits=limits or SandboxLimits(), unsafe=unsafe, hello_timeout_ms=hello_timeout_ms
    )
    with work_directory("check-") as work:
        checker = _Checker(spec, config, Path(work))
        checker.on_result = on_result
        return checker.run(scenarios)


class _Checker:
    def __init__(
        self, spec: BotSpec, config: MatchConfig, work: Path, *, train: bool = False,
        exit_grace_s: float = EXIT_GRACE_S,
    ) -> None:  # fmt: skip
        self.spec = spec
        self.config = config
        self.exit_grace_s = exit_grace_s
        arrivals = ArrivalQueue()
        endpoint = BotEndpoint(BOT_SLOT, work / "bot.sock", arrivals)
        self.slot = BotSlot(index=BOT_SLOT, spec=spec, name=spec.name, endpoint=endpoint,
                            work_dir=work, train_class_archive=train)  # fmt: skip
        self.archive_sizes: list[int | None] = []
        """Training: the size of the archive each launch left (None: it left none)."""
        self.inbox = TurnLoop(arrivals, [self.slot])
        self.sandboxed_paths = probe_host().namespaces
        self.opponent = OPPONENT_NAME if spec.name != OPPONENT_NAME else OPPONENT_NAME + "-2"
        self.match_id = secrets.token_hex(6)
        self.report = CheckReport(spec.name, spec.version)
        self.hello = ScenarioResult(
            HELLO, f"each launch: a Hello within {config.hello_timeout_ms} ms, this launch's "
            "token, protocol_version 1",
        )  # fmt: skip
        self.exit = ScenarioResult(
            EXIT, "after each MatchOver the referee closes the stream: the bot exits by "
            f"itself, status 0, within {exit_grace_s:.0f} s",
        )  # fmt: skip
        self.failed_launches = 0
        self.silent: list[str] = []
        """The scenarios in a row, latest last, whose first request timed out."""
        self.log = get_logger(bot=spec.name, check=self.match_id)
        self.on_result: Callable[[ScenarioResult], None] | None = None

    def run(self, scenarios: Sequence[Scenario]) -> CheckReport:
        results: list[ScenarioResult] = []
        self.slot.endpoint.start()
        try:
            for _, group in itertools.groupby(scenarios, key=lambda s: s.connection):
                self._play_connection(list(group), results)
        finally:
            self.slot.kill()
            self.slot.endpoint.stop()
        self.report.results = [self.hello, *results, self.exit]
        self.log.info("bot_checked", passed=self.report.passed,
                      failed=[r.name for r in self.report.failed])  # fmt: skip
        return self.report

    # ------------------------------------------------------------ connections

    def _play_connection(self, group: list[Scenario], results: list[ScenarioResult]) -> None:
        reports: list[GameReport] = []
        for index, scenario in enumerate(group):
            result = ScenarioResult(scenario.name, scenario.what)
            results.append(result)
            if len(self.silent) >= MAX_SILENT_SCENARIOS:
                result.fail(
                    f"{NOT_PLAYED}the bot answered no request in {' and '.join(self.silent)}"
                    " (each timed out at its first decision)"
                )
                self._heard(result)
                continue
            if not self.slot.ready:
                reports = []  # a new connection: its own MatchOver counts its own games
                problem = self._connect(scenario, games=len(group) - index)
                if problem is not None:
                    result.fail(NOT_PLAYED + problem)
                    self._heard(result)
                    continue
            problem = self._drain()
            if problem is not None:
                result.fail(f"before the game: {problem}")
                self._heard(result)
                continue
            reports.append(self._play(scenario, 2 * index, result))
            self._heard(result)
        if self.slot.ready:
            self._match_over(reports)

    def _heard(self, result: ScenarioResult) -> None:
        if self.on_result is not None:
            self.on_result(result)

    def _connect(self, scenario: Scenario, games: int) -> str | None:
        """Launch the bot and await its Hello; what went wrong, or None."""
        if self.failed_launches >= MAX_FAILED_LAUNCHES:
            return f"no launch after {self.failed_launches} that failed"
        started_ns = time.monotonic_ns()
        try:
            self.slot.launch(self.config, self.sandboxed_paths)
        except (OSError, SandboxConfigError) as error:
            reason = (error.strerror if isinstance(error, OSError) else None) or str(error)
            self.slot.process = None
            return self._launch_failed(f"cannot be launched: {reason}")
        hello = Clock(self.config.hello_timeout_ms)  # the wait for Hello: a clock of its own
        hello.start(started_ns)
        self.slot.expect.clock = hello
        found = self.inbox.wait(BOT_SLOT, hello.deadline_ns)
        assert found is not None
        _, verdict = found
        if verdict.kind is not VerdictKind.HELLO:
            problem = self._failure(verdict, "before its Hello")
            self.slot.cut_off(verdict.status, verdict.reason)
            return self._launch_failed(problem)
        self.report.launch_ms.append((time.monotonic_ns() - started_ns) / NS_PER_MS)
        process = self.slot.process
        cpu_ms = process.cpu_time_ms() if isinstance(process, BotProcess) else None
        if cpu_ms is not None:
            self.report.launch_cpu_ms.append(cpu_ms)
        self.failed_launches = 0
        self.slot.ready = True
        self.slot.expect.phase = Phase.IDLE
        clock = DEFAULT_CLOCK
        welcome = referee_pb2.Welcome(
            protocol_version=PROTOCOL_VERSION, match_id=self.match_id, games=games,
            bot_name=self.spec.name, opponent_name=self.opponent,
            variant=variant_to_pb(scenario.variant),
            time_control=referee_pb2.TimeControl(action_ms=clock.action_ms, bank_ms=clock.bank_ms),
        )  # fmt: skip
        self.slot.send(referee_pb2.PlayResponse(welcome=welcome))
        return None

    def _launch_failed(self, problem: str) -> str:
        self.failed_launches += 1
        self.hello.fail(problem)
        return f"the bot did not connect (see {HELLO})"

    def _drain(self) -> str | None:
        """Anything the bot sent between games is a failure (nothing is asked of it)."""
        found = self.inbox.wait(None, time.monotonic_ns())
        if found is None:
            return None
        _, verdict = found
        problem = self._failure(verdict, "between games")
        if verdict.status not in KEPT_CONNECTION:
            self.slot.cut_off(verdict.status, verdict.reason)
        return problem

    def _match_over(self, reports: list[GameReport]) -> None:
        score = score_games(reports, [self.spec.name, self.opponent])
        match_over = referee_pb2.MatchOver(
            your_score=score[self.spec.name], opponent_score=score[self.opponent],
            games=len(reports),
        )  # fmt: skip
        self.slot.send(referee_pb2.PlayResponse(match_over=match_over))
        self.slot.endpoint.close_stream()
        sent = time.monotonic()
        process = self.slot.process
        status = process.wait(self.exit_grace_s) if process is not None else None
        if status is None:
            self.exit.fail(f"still running {self.exit_grace_s:.0f} s after MatchOver")
        elif status != 0:
            limits = self.slot.limits_words()
            self.exit.fail(
                f"{exit_words(status)} after MatchOver" + (f"; {limits}" if limits else "")
                + self._stderr()
            )  # fmt: skip
        else:
            self.report.exit_ms.append((time.monotonic() - sent) * 1000)
            if self.slot.train_class_archive:
                self.archive_sizes.append(self.slot.take_class_archive())
        self.slot.ready = False
        self.slot.kill()
        self.slot.process = None

    # ------------------------------------------------------------ one game

    def _play(self, scenario: Scenario, game_index: int, result: ScenarioResult) -> GameReport:
        seat = scenario.seat
        playout = opened(scenario)
        turns = RefereeState(playout.state)
        turns.events = list(playout.state.history)
        clock = scenario.clock
        log = GameTiming.start(clock.action_ms, clock.bank_ms)
        log.reshuffles = playout.reshuffles
        game_start = referee_pb2.GameStart(
            game_index=game_index, seat=seat, variant=variant_to_pb(scenario.variant),
            time_control=referee_pb2.TimeControl(action_ms=clock.action_ms, bank_ms=clock.bank_ms),
            opponent_name=self.opponent,
        )  # fmt: skip
        self.slot.send(referee_pb2.PlayResponse(game_start=game_start))
        failures: Failures = {}
        if scenario.kind is Kind.FORFEIT_AT_ONCE:
            failures[OPPONENT_SLOT] = (BotStatus.CRASH, "process exited with status 1")
        else:
            self._requests(scenario, game_index, playout, turns, log, failures, result)
        game = PlayedGame(
            match_id=self.match_id,
            config=MatchConfig(
                games=game_index + 1, paired=False, variant=scenario.variant,
                time_control=TimeControl(clock.action_ms, clock.bank_ms),
                handicap=scenario.handicap,
            ),
            game_index=game_index, deal=playout.deal,
            names=(self.spec.name, self.opponent), versions=(self.spec.version, "scripted"),
            slot_at_seat=(BOT_SLOT, OPPONENT_SLOT) if seat == 0 else (OPPONENT_SLOT, BOT_SLOT),
            turns=turns, log=log, failures=failures,
        )  # fmt: skip
        report = game.report()
        self.slot.send(game_over_messages(game, report)[BOT_SLOT])
        over = failures.get(OPPONENT_SLOT, (BotStatus.OK, ""))[1] == SCENARIO_OVER
        result.ending = (
            "scenario over: the opponent forfeits" if over else _ending(report, self.spec.name)
        )
        return report

    def _requests(
        self, scenario: Scenario, game_index: int, playout: Playout, turns: RefereeState,
        log: GameTiming, failures: Failures, result: ScenarioResult,
    ) -> None:  # fmt: skip
        """Request the bot's actions (the scripted opponent plays the other seat) until
        the game is over, the bot fails, or the opponent forfeits."""
        seat, slot = scenario.seat, self.slot
        first_turn, turns_played = True, 0
        while True:
            order = playout.reshuffle_if_due()
            if order is not None:
                turns.start_round(playout.state)
            state = turns.state
            if state.is_finished:
                return
            if state.to_move != seat:
                action = playout.choose()
                turns.apply(action, 1 - seat)
                playout.state = turns.state
                playout.after(action, state)
                continue
            if (scenario.decisions is not None and result.decisions >= scenario.decisions) or (
                scenario.turns is not None and turns_played >= scenario.turns
            ):
                failures[OPPONENT_SLOT] = (BotStatus.TIMEOUT, SCENARIO_OVER)
                return
            where = _where(playout, seat, result.decisions + 1)
            verdict = self._ask(turns, game_index, log, seat)
            if verdict.kind is not VerdictKind.ACTION:
                silent = verdict.status is BotStatus.TIMEOUT and result.decisions == 0
                self.silent = [*self.silent, scenario.name] if silent else []
                failures[BOT_SLOT] = (verdict.status, verdict.reason)
                result.fail(self._failure(verdict, f"at {where}"))
                if verdict.status not in KEPT_CONNECTION:
                    slot.cut_off(verdict.status, verdict.reason)
                return
            assert verdict.action is not None
            action = verdict.action
            result.decisions += 1
            self.silent = []
            ends_turn = action.type in (ActionType.DRAW, ActionType.PASS)
            if first_turn:
                result.did.append(action.text())
                first_turn = not ends_turn
            turns_played += ends_turn
            turns.apply(action, seat)
            playout.state = turns.state
            playout.after(action, state)

    def _ask(self, turns: RefereeState, game_index: int, log: GameTiming, seat: int) -> Verdict:
        """Send the bot one request and judge what comes back."""
        slot = self.slot
        request_id = slot.take_request_id()
        clock = log.clocks[seat]
        frame, legal = turns.request_for_mover(
            request_id=request_id, game_index=game_index,
            action_deadline_ms=clock.action_ms, time_bank_ms=int(clock.bank_ms),
        )  # fmt: skip
        expect = slot.expect
        expect.phase = Phase.AWAIT_REPLY
        expect.request_id = request_id
        expect.clock = clock
        expect.state = turns.state
        expect.legal = legal
        process = slot.process
        cpu_before = process.cpu_time_ms() if process is not None else None
        clock.start(time.monotonic_ns())
        slot.send(frame)
        found = self.inbox.wait(BOT_SLOT, clock.deadline_ns)
        assert found is not None
        _, verdict = found
        cpu_after = process.cpu_time_ms() if process is not None else None
        if expect.phase is Phase.AWAIT_REPLY:
            expect.phase = Phase.IDLE
        expect.state = None
        if verdict.kind is VerdictKind.ACTION:
            log.answered(seat, verdict.elapsed_ms)
            self.report.decision_wall_ms.append(verdict.elapsed_ms)
            if cpu_before is not None and cpu_after is not None:
                self.report.decision_cpu_ms.append(cpu_after - cpu_before)
        elif verdict.status is BotStatus.TIMEOUT:
            expect.expired_request_ids.add(request_id)  # a late reply is no new fault
            clock.charge_expired()
        return verdict

    # ------------------------------------------------------------ words

    def _failure(self, verdict: Verdict, when: str) -> str:
        text = f"{verdict.status.value} {when}: {verdict.reason}"
        if verdict.status in STDERR_KEPT_FOR:
            text += self._stderr()
        return text

    def _stderr(self) -> str:
        """The bot's own stderr (the one who checks it owns it), first and last lines."""
        kept = self.slot.stderr_excerpt()
        return f"; stderr: {printable(kept)}" if kept else ""


def _where(playout: Playout, seat: int, decision: int) -> str:
    state = playout.state
    facts = [f"round {state.round}"]
    if playout.final_turn:
        facts.append(f"final turn {playout.final_turn}, deck and face-up row empty")
    cards = state.hand_sizes[seat]
    facts.append(f"{cards} card{'' if cards == 1 else 's'} in hand")
    if state.opponent_passed:
        facts.append("the opponent passed")
    return f"decision {decision} ({', '.join(facts)})"


def _ending(report: GameReport, bot: str) -> str:
    if report.reason == "forfeit":
        statuses = {name: status for name, status in report.statuses.items()
                    if status is not BotStatus.OK}  # fmt: skip
        who = " and ".join(sorted(statuses))
        return f"forfeited by {who}" if who else "forfeited"
    outcome = "won" if report.winner == bot else "lost" if report.winner else "drew"
    return f"game over ({report.reason}): the bot {outcome}"
