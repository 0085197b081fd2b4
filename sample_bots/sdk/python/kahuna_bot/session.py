"""One match as the bot sees it: referee messages in, replies out.

``Session`` holds no socket: ``handle`` takes each ``PlayResponse`` and
returns the ``PlayRequest`` to send, if any, so the whole conversation can be
driven (and tested) without a network. ``kahuna_bot.client`` wires it to the
gRPC stream.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass

from kahuna_bot._gen import game_pb2, referee_pb2
from kahuna_bot.actions import Action, action_from_proto, action_to_proto, parse_action
from kahuna_bot.observation import (
    Clock,
    HistoryBuffer,
    Observation,
    Outcome,
    ProtocolError,
    Variant,
    observation_from_proto,
    outcome_from_proto,
)

PROTOCOL_VERSION = 1


@dataclass(frozen=True, slots=True)
class TimeControl:
    action_ms: int
    bank_ms: int


@dataclass(frozen=True, slots=True)
class MatchInfo:
    match_id: str
    games: int
    bot_name: str
    opponent_name: str
    variant: Variant
    time_control: TimeControl


@dataclass(frozen=True, slots=True)
class GameInfo:
    game_index: int
    seat: int
    variant: Variant
    time_control: TimeControl
    opponent_name: str


@dataclass(frozen=True, slots=True)
class GameResult:
    """``reason`` is a docs/reference/RECORD.md reason or ``"forfeit"``; statuses are
    ``BotStatus`` names without the prefix (``"OK"``, ``"TIMEOUT"``, ...);
    ``record`` is the revealed kahuna-record/1 object."""

    game_index: int
    winner_seat: int | None
    reason: str
    outcome: Outcome | None
    your_status: str
    opponent_status: str
    record: dict[str, object]


@dataclass(frozen=True, slots=True)
class MatchResult:
    your_score: float
    opponent_score: float
    games: int


Choose = Callable[[Observation, tuple[Action, ...]], "Action | str"]


class Bot:
    """A bot with hooks. Override ``choose``; the ``on_*`` hooks are optional."""

    name: str = ""
    version: str = ""

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action | str:
        raise NotImplementedError("a Bot must override choose(observation, legal_actions)")

    def on_match_start(self, match: MatchInfo) -> None:
        """Called once, after the referee's Welcome."""

    def on_game_start(self, game: GameInfo) -> None:
        """Called before the first request of each game."""

    def on_game_over(self, result: GameResult) -> None:
        """Called when a game ends, with the revealed record."""

    def on_match_over(self, result: MatchResult) -> None:
        """Called once, before the stream closes."""


class FunctionBot(Bot):
    """A ``Bot`` made of a plain ``choose`` function."""

    def __init__(self, choose: Choose, name: str = "", version: str = "") -> None:
        self._choose = choose
        self.name = name
        self.version = version

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action | str:
        return self._choose(observation, legal_actions)


def _status_name(code: int) -> str:
    """A ``BotStatus`` without its prefix; a value this SDK does not know (a newer
    referee's) as ``STATUS_<number>``: proto3 enums are open, and a status is only
    reported, never acted on."""
    try:
        name: str = referee_pb2.BotStatus.Name(code)  # type: ignore[arg-type]
    except ValueError:
        return f"STATUS_{code}"
    return name.removeprefix("BOT_STATUS_")


def _time_control(message: referee_pb2.TimeControl) -> TimeControl:
    return TimeControl(action_ms=message.action_ms, bank_ms=message.bank_ms)


def _variant(message: game_pb2.Variant) -> Variant:
    return Variant(strategic=message.strategic, tactical=message.tactical)


def _as_action(choice: Action | str) -> Action:
    if isinstance(choice, Action):
        return choice
    if isinstance(choice, str):
        try:
            return parse_action(choice)
        except ValueError as err:  # the engine's words alone do not say whose text it was
            message = f"choose() returned {choice!r}, which is not an action: {err}"
            raise ValueError(message) from None
    raise TypeError(f"choose() must return an Action or a text action, not {type(choice).__name__}")


class Session:
    """The state of one match for one bot; feed it every referee message."""

    def __init__(self, bot: Bot, *, token: str) -> None:
        self.bot = bot
        self.token = token
        self.match: MatchInfo | None = None
        self.game: GameInfo | None = None
        self.result: MatchResult | None = None
        self.goodbye_reason: str | None = None
        self._history = HistoryBuffer()

    @property
    def finished(self) -> bool:
        """MatchOver or Goodbye received: nothing more will be asked."""
        return self.result is not None or self.goodbye_reason is not None

    def hello(self) -> referee_pb2.PlayRequest:
        return referee_pb2.PlayRequest(
            hello=referee_pb2.Hello(
                token=self.token,
                bot_name=self.bot.name,
                bot_version=self.bot.version,
                protocol_version=PROTOCOL_VERSION,
            )
        )

    def handle(self, response: referee_pb2.PlayResponse) -> referee_pb2.PlayRequest | None:
        """React to one referee message; the reply to send, if it needs one."""
        kind = response.WhichOneof("kind")
        if kind == "welcome":
            self._on_welcome(response.welcome)
        elif kind == "game_start":
            self._on_game_start(response.game_start)
        elif kind == "action_request":
            return self._on_action_request(response.action_request)
        elif kind == "game_over":
            self._on_game_over(response.game_over)
        elif kind == "match_over":
            over = response.match_over
            self.result = MatchResult(over.your_score, over.opponent_score, over.games)
            self.bot.on_match_over(self.result)
        elif kind == "goodbye":
            goodbye = response.goodbye
            self.goodbye_reason = f"{_status_name(goodbye.status)}: {goodbye.reason}"
        else:
            raise ProtocolError("the referee sent a message with no kind")
        return None

    def _on_welcome(self, welcome: referee_pb2.Welcome) -> None:
        self.match = MatchInfo(
            match_id=welcome.match_id,
            games=welcome.games,
            bot_name=welcome.bot_name,
            opponent_name=welcome.opponent_name,
            variant=_variant(welcome.variant),
            time_control=_time_control(welcome.time_control),
        )
        self.bot.on_match_start(self.match)

    def _on_game_start(self, start: referee_pb2.GameStart) -> None:
        self.game = GameInfo(
            game_index=start.game_index,
            seat=start.seat,
            variant=_variant(start.variant),
            time_control=_time_control(start.time_control),
            opponent_name=start.opponent_name,
        )
        self._history = HistoryBuffer()
        self.bot.on_game_start(self.game)

    def _on_action_request(self, request: referee_pb2.ActionRequest) -> referee_pb2.PlayRequest:
        if self.game is None or request.game_index != self.game.game_index:
            raise ProtocolError(f"action request {request.request_id} for a game never started")
        try:
            observation = observation_from_proto(
                request.observation,
                game_index=request.game_index,
                history=self._history,
                clock=Clock(request.action_deadline_ms, request.time_bank_ms),
            )
            legal = tuple(map(action_from_proto, request.legal_actions))
        except (ValueError, KeyError) as err:  # the referee's message, not the bot's code
            raise ProtocolError(f"action request {request.request_id}: {err}") from None
        if not legal:
            raise ProtocolError(f"action request {request.request_id} has no legal actions")
        action = _as_action(self.bot.choose(observation, legal))
        if action not in legal:
            _warn(f"request {request.request_id}: {action} is not among the legal actions")
        reply = referee_pb2.ActionReply(
            request_id=request.request_id, action=action_to_proto(action)
        )
        return referee_pb2.PlayRequest(action_reply=reply)

    def _on_game_over(self, over: referee_pb2.GameOver) -> None:
        try:
            record = json.loads(over.record_json) if over.record_json else {}
        except (ValueError, RecursionError) as err:
            raise ProtocolError(f"game {over.game_index}'s record is not JSON ({err})") from None
        result = GameResult(
            game_index=over.game_index,
            winner_seat=over.winner_seat if over.HasField("winner_seat") else None,
            reason=over.reason,
            outcome=outcome_from_proto(over.outcome) if over.HasField("outcome") else None,
            your_status=_status_name(over.your_status),
            opponent_status=_status_name(over.opponent_status),
            record=record if isinstance(record, dict) else {},
        )
        self.game = None
        self.bot.on_game_over(result)


def _warn(message: str) -> None:
    print(f"kahuna_bot: {message}", file=sys.stderr, flush=True)
