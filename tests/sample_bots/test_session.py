"""kahuna_bot.session: one match's conversation, message by message, no network."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from kahuna_bot import (
    Action,
    Bot,
    GameInfo,
    GameResult,
    MatchInfo,
    MatchResult,
    Observation,
    ProtocolError,
    Session,
)
from kahuna_bot._gen import game_pb2, referee_pb2

from arena import kahuna
from arena.protocol.convert import actions_to_pb, observation_to_pb


class ScriptedBot(Bot):
    """Answers with a fixed choice and logs every hook it receives."""

    name = "scripted"
    version = "7"

    def __init__(self, answer: str | None = None) -> None:
        self.answer = answer
        self.events: list[object] = []

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action | str:
        self.events.append(("choose", observation.game_index, len(legal_actions)))
        return self.answer if self.answer is not None else legal_actions[-1]

    def on_match_start(self, match: MatchInfo) -> None:
        self.events.append(match)

    def on_game_start(self, game: GameInfo) -> None:
        self.events.append(game)

    def on_game_over(self, result: GameResult) -> None:
        self.events.append(result)

    def on_match_over(self, result: MatchResult) -> None:
        self.events.append(result)


def _welcome() -> referee_pb2.PlayResponse:
    return referee_pb2.PlayResponse(
        welcome=referee_pb2.Welcome(
            protocol_version=1, match_id="m1", games=2, bot_name="scripted",
            opponent_name="other", time_control=referee_pb2.TimeControl(action_ms=50, bank_ms=900),
        )
    )  # fmt: skip


def _game_start(game_index: int, seat: int) -> referee_pb2.PlayResponse:
    start = referee_pb2.GameStart(game_index=game_index, seat=seat, opponent_name="other")
    return referee_pb2.PlayResponse(game_start=start)


def _request(request_id: int, game_index: int, seed: int = 1) -> referee_pb2.PlayResponse:
    state = kahuna.new_game(kahuna.deal_from_seed(seed))
    legal = sorted(kahuna.legal_actions(state), key=kahuna.Action.text)
    request = referee_pb2.ActionRequest(
        request_id=request_id,
        game_index=game_index,
        observation=observation_to_pb(state, 0, [], 0),
        legal_actions=actions_to_pb(legal),
        action_deadline_ms=50,
        time_bank_ms=900,
    )
    return referee_pb2.PlayResponse(action_request=request)


def test_hello_carries_token_name_version_and_protocol() -> None:
    hello = Session(ScriptedBot(), token="secret").hello().hello
    assert (hello.token, hello.bot_name, hello.bot_version, hello.protocol_version) == (
        "secret", "scripted", "7", 1,
    )  # fmt: skip


def test_a_whole_match_calls_every_hook_and_echoes_request_ids() -> None:
    bot = ScriptedBot()
    session = Session(bot, token="t")
    record = {"format": "kahuna-record/1", "deal": [], "actions": []}
    over = referee_pb2.GameOver(
        game_index=0, winner_seat=1, reason="forfeit",
        your_status=referee_pb2.BOT_STATUS_TIMEOUT, opponent_status=referee_pb2.BOT_STATUS_OK,
        record_json=json.dumps(record),
    )  # fmt: skip
    replies = [
        session.handle(_welcome()),
        session.handle(_game_start(0, 0)),
        session.handle(_request(41, 0)),
        session.handle(referee_pb2.PlayResponse(game_over=over)),
    ]
    assert replies[0] is replies[1] is replies[3] is None
    reply = replies[2]
    assert reply is not None and reply.WhichOneof("kind") == "action_reply"
    assert reply.action_reply.request_id == 41
    assert not session.finished
    match_over = referee_pb2.MatchOver(your_score=0.5, opponent_score=1.5, games=2)
    assert session.handle(referee_pb2.PlayResponse(match_over=match_over)) is None
    assert session.finished
    match, game, choice, result, final = bot.events
    assert isinstance(match, MatchInfo) and match.time_control.bank_ms == 900
    assert isinstance(game, GameInfo) and (game.game_index, game.seat) == (0, 0)
    assert choice == ("choose", 0, len(_request(1, 0).action_request.legal_actions))
    assert isinstance(result, GameResult)
    assert (result.winner_seat, result.reason, result.outcome) == (1, "forfeit", None)
    assert (result.your_status, result.opponent_status) == ("TIMEOUT", "OK")
    assert result.record == record
    assert final == MatchResult(0.5, 1.5, 2)


def test_a_text_answer_is_sent_as_its_action() -> None:
    session = Session(ScriptedBot(answer="draw deck"), token="t")
    session.handle(_game_start(0, 0))
    reply = session.handle(_request(3, 0))
    assert reply is not None
    assert reply.action_reply.action == game_pb2.Action(type=game_pb2.ACTION_TYPE_DRAW)


def test_an_illegal_answer_is_sent_anyway_with_a_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    session = Session(ScriptedBot(answer="place ALOA ALOA-BARI"), token="t")
    session.handle(_game_start(0, 0))
    reply = session.handle(_request(9, 0))
    assert reply is not None and reply.action_reply.action.line == "ALOA-BARI"
    warning = capsys.readouterr().err
    assert "request 9: place ALOA ALOA-BARI is not among the legal actions" in warning


def test_each_game_starts_a_fresh_history() -> None:
    session = Session(ScriptedBot(), token="t")
    session.handle(_game_start(0, 0))
    session.handle(_request(1, 0))
    session.handle(_game_start(1, 0))
    assert session.handle(_request(2, 1)) is not None  # history_start 0 again: accepted


def test_a_request_for_a_game_never_started_is_a_protocol_error() -> None:
    session = Session(ScriptedBot(), token="t")
    session.handle(_game_start(0, 0))
    with pytest.raises(ProtocolError, match="request 5 for a game never started"):
        session.handle(_request(5, 3))


def test_goodbye_finishes_the_session_with_its_reason() -> None:
    session = Session(ScriptedBot(), token="t")
    goodbye = referee_pb2.Goodbye(status=referee_pb2.BOT_STATUS_PROTOCOL_VIOLATION, reason="stale")
    session.handle(referee_pb2.PlayResponse(goodbye=goodbye))
    assert session.finished
    assert session.goodbye_reason == "PROTOCOL_VIOLATION: stale"


def test_a_message_without_kind_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="no kind"):
        Session(ScriptedBot(), token="t").handle(referee_pb2.PlayResponse())


def test_choose_returning_something_else_is_a_type_error() -> None:
    bot = ScriptedBot()
    bot.choose = lambda observation, legal: 42  # type: ignore[assignment, method-assign, return-value]
    session = Session(bot, token="t")
    session.handle(_game_start(0, 0))
    with pytest.raises(TypeError, match="not int"):
        session.handle(_request(1, 0))


def _no_legal(request: referee_pb2.ActionRequest) -> None:
    del request.legal_actions[:]


def _unknown_type(request: referee_pb2.ActionRequest) -> None:
    request.legal_actions[0].type = 99  # type: ignore[assignment]


def _unknown_island(request: referee_pb2.ActionRequest) -> None:
    request.legal_actions[0].card = "ATLANTIS"


HOSTILE_REQUESTS = [
    ("no legal actions", _no_legal, "action request 1 has no legal actions"),
    ("an unknown action type", _unknown_type, "action request 1: unknown action type 99"),
    ("an unknown island", _unknown_island, "action request 1: unknown island 'ATLANTIS'"),
]  # fmt: skip


@pytest.mark.parametrize(("spoil", "message"), [case[1:] for case in HOSTILE_REQUESTS],
                         ids=[case[0] for case in HOSTILE_REQUESTS])  # fmt: skip
def test_a_request_the_sdk_cannot_read_is_a_protocol_error_before_choose(
    spoil: Callable[[referee_pb2.ActionRequest], None], message: str
) -> None:
    """A protocol error is one line on stderr (kahuna_bot.client); anything else is a
    traceback that points at the bot's own code, which is not at fault."""
    bot = ScriptedBot()
    session = Session(bot, token="t")
    session.handle(_game_start(0, 0))
    request = _request(1, 0)
    spoil(request.action_request)
    with pytest.raises(ProtocolError) as raised:
        session.handle(request)
    assert str(raised.value) == message
    assert not [event for event in bot.events if isinstance(event, tuple)]  # choose never ran


@pytest.mark.parametrize(
    "record_json", ["{not json", '{"a": ' * 100_000 + "1" + "}" * 100_000],
    ids=["garbage", "nested past the recursion limit"],
)  # fmt: skip
def test_a_game_record_that_is_not_json_is_a_protocol_error(record_json: str) -> None:
    session = Session(ScriptedBot(), token="t")
    session.handle(_game_start(0, 0))
    over = referee_pb2.GameOver(game_index=0, record_json=record_json)
    with pytest.raises(ProtocolError, match="game 0's record is not JSON"):
        session.handle(referee_pb2.PlayResponse(game_over=over))


def test_a_status_this_sdk_does_not_know_is_reported_by_its_number() -> None:
    """A newer referee's status: proto3 enums are open, and a bot must not crash on one."""
    bot = ScriptedBot()
    session = Session(bot, token="t")
    session.handle(_game_start(0, 0))
    over = referee_pb2.GameOver(game_index=0, your_status=42, opponent_status=1)  # type: ignore[arg-type]
    session.handle(referee_pb2.PlayResponse(game_over=over))
    (result,) = [event for event in bot.events if isinstance(event, GameResult)]
    assert (result.your_status, result.opponent_status) == ("STATUS_42", "OK")
    goodbye = referee_pb2.Goodbye(status=42, reason="newer")  # type: ignore[arg-type]
    session.handle(referee_pb2.PlayResponse(goodbye=goodbye))
    assert session.goodbye_reason == "STATUS_42: newer"


def test_a_text_that_is_not_an_action_names_choose_and_the_text() -> None:
    session = Session(ScriptedBot("hello world"), token="t")
    session.handle(_game_start(0, 0))
    with pytest.raises(ValueError) as raised:
        session.handle(_request(1, 0))
    assert str(raised.value) == (
        "choose() returned 'hello world', which is not an action: unknown action 'hello'"
    )
