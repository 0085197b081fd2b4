"""Remote bots and live games against a real `arena serve` server on port 0.

Remote bots are played by the SDK (the ``kahuna_bot.remote`` connector as a
real process, or its functions in threads); the other seat is a sandboxed
sample bot. Refusals are checked with raw Play streams, and each one leaves
everything stored unchanged.
"""

from __future__ import annotations

import io
import json
import os
import queue
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kahuna_bot import Action, Bot, MatchInfo, Observation, run

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.bots.submission import SubmissionCheck
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee import load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.server.gateway import PLAY_METHOD
from arena.server.limits import StreamLimits
from arena.server.rechecks import STREAM_TOKEN_BOUND_S
from arena.store import (
    Store,
    add_bot_version,
    add_seat_offer,
    create_token,
    ensure_admin_token,
    game_record,
    get_tournament,
    get_version,
    list_games,
    list_matches,
    list_tokens,
    open_seat_offers,
    tournament_secret,
)
from arena.store.remote import token_digest
from arena.testing.waiting import assert_stays
from tests.referee.leaks import Forbidden, leaks

pytestmark = pytest.mark.slow
Code = grpc.StatusCode
REPO = Path(__file__).resolve().parents[2]
SDK_DIR = REPO / "sample_bots" / "sdk" / "python"
TOURNAMENT_TIMEOUT_S = 120.0


@dataclass
class Arena:
    store: Store
    port: int
    channel: grpc.Channel
    stub: pb_grpc.ArenaServiceStub
    admin: str
    alice: str
    bob: str
    names: list[str] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def snapshot(self) -> list[object]:
        db = sqlite3.connect(self.store.data_dir / "arena.db")
        rows: list[object] = []
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            rows += [(table, *r) for r in db.execute(f"SELECT * FROM {table} ORDER BY rowid")]
        db.close()
        return rows

    def register(self, token: str, name: str) -> pb.RegisterRemoteBotResponse:
        request = pb.RegisterRemoteBotRequest(name=name, description="hosted by its owner")
        return self.stub.RegisterRemoteBot(request, metadata=_auth(token))

    def tournament(self, name: str, bots: list[str], games: int = 2) -> int:
        request = pb.CreateTournamentRequest(
            name=name, format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN, bots=bots,
            games_per_match=games, seed=7, start=True,
        )  # fmt: skip
        reply = self.stub.CreateTournament(request, metadata=_auth(self.admin))
        return int(reply.tournament.id)

    def await_finished(self, tournament_id: int) -> None:
        """Until the runner has said its last word (its thread then touches nothing)."""
        name = get_tournament(self.store, tournament_id).name
        request = pb.WatchTournamentRequest(name=name)
        events = self.stub.WatchTournament(
            request, metadata=_auth(self.admin), timeout=TOURNAMENT_TIMEOUT_S
        )
        assert [e.message for e in events][-1] in ("finished", "tournament is finished")
        assert get_tournament(self.store, tournament_id).status == "finished"


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    yield from _serve(tmp_path_factory.mktemp("remote"), paired_remote=False)


def _serve(tmp: Path, *, paired_remote: bool) -> Iterator[Arena]:
    store = Store.open(tmp / "data")
    add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
    options = ServiceOptions(
        concurrency=2, smoke_check=lambda directory: SubmissionCheck("no smoke here"),
        paired_remote=paired_remote,
    )
    server, port = create_server("127.0.0.1:0", store=store, options=options)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield Arena(
        store, port, channel, pb_grpc.ArenaServiceStub(channel), ensure_admin_token(store),
        create_token(store, "alice"), create_token(store, "bob"),
    )  # fmt: skip
    channel.close()
    server.stop(grace=None)
    store.close()


def _open_play(
    arena: Arena, token: str, timeout_s: float
) -> tuple[queue.SimpleQueue[bytes | None], Iterator[referee_pb2.PlayResponse]]:
    """A raw Play stream that has said Hello with ``token``: the outbox of further
    frames (None ends the stream) and the messages the server sends."""
    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    hello = referee_pb2.Hello(token=token, bot_name="x", protocol_version=1)
    outbox.put(referee_pb2.PlayRequest(hello=hello).SerializeToString())

    def frames() -> Iterator[bytes]:
        while (frame := outbox.get()) is not None:
            yield frame

    play = arena.channel.stream_stream(
        PLAY_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    raws = play(frames(), timeout=timeout_s)
    return outbox, (referee_pb2.PlayResponse.FromString(raw) for raw in raws)


def _hello(arena: Arena, token: str) -> list[referee_pb2.PlayResponse]:
    """Say Hello on a raw Play stream; everything the server answers until it closes."""
    outbox, messages = _open_play(arena, token, 15)
    answers = []
    for message in messages:
        answers.append(message)
        if message.WhichOneof("kind") == "goodbye":
            outbox.put(None)
    outbox.put(None)
    return answers


def _refusal(arena: Arena, token: str) -> str:
    answers = _hello(arena, token)
    assert [a.WhichOneof("kind") for a in answers] == ["goodbye"]
    assert answers[0].goodbye.status == referee_pb2.BOT_STATUS_PROTOCOL_VIOLATION
    return answers[0].goodbye.reason


class Recorder(Bot):
    """Plays a legal action; remembers its Welcome; may think slowly, or break in a game."""

    def __init__(self, think_s: float = 0.0, break_in_game: int | None = None) -> None:
        self.think_s = think_s
        self.break_in_game = break_in_game
        self.match: MatchInfo | None = None
        self.welcomed = threading.Event()

    def on_match_start(self, match: MatchInfo) -> None:
        self.match = match
        self.welcomed.set()

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
        time.sleep(self.think_s)  # the bot thinking
        if observation.game_index == self.break_in_game:
            raise RuntimeError("the bot breaks: the SDK drops the connection")
        return legal_actions[len(observation.history) % len(legal_actions)]


def _play_in_thread(arena: Arena, token: str, bot: Bot) -> Callable[[], int]:
    result: list[int] = []
    environ = {"KAHUNA_REFEREE": arena.target, "KAHUNA_TOKEN": token}
    thread = threading.Thread(target=lambda: result.append(run(bot, environ=environ)))
    thread.start()

    def join() -> int:
        thread.join(TOURNAMENT_TIMEOUT_S)
        return result[0]

    return join


def _seat_tokens(arena: Arena, user: str, bot: str, count: int) -> list[pb.WaitForSeatsResponse]:
    """The first ``count`` seats offered to ``bot`` (WaitForSeats, then hang up)."""
    request = pb.WaitForSeatsRequest(bot=bot)
    call = arena.stub.WaitForSeats(request, metadata=_auth(user), timeout=30)
    offers = iter(call)
    try:
        return [next(offers) for _ in range(count)]
    finally:
        call.cancel()  # type: ignore[no-untyped-call]


# --------------------------------------------------------------------------- tests


def test_a_remote_bot_plays_a_tournament_through_the_connector(arena: Arena) -> None:
    arena.register(arena.alice, "alice_far")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SDK_DIR), str(REPO)]),
               KAHUNA_USER_TOKEN=arena.alice)
    connector = subprocess.Popen(
        [sys.executable, "-m", "kahuna_bot.remote", "--arena", arena.target,
         "--bot", "alice_far", "--max-seats", "1", "--",
         sys.executable, str(SAMPLE_RANDOM_BOT / "bot.py")],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        tournament_id = arena.tournament("remote-vs-sandboxed", ["alice_far", "python_random"])
        arena.await_finished(tournament_id)
        _, stderr = connector.communicate(timeout=30)
    finally:
        connector.kill()
    assert connector.returncode == 0, stderr
    games = list_games(arena.store, tournament_id=tournament_id)
    assert len(games) == 2
    assert all(g.statuses == ("ok", "ok") for g in games), [g.statuses for g in games]
    assert {g.bots for g in games} == {
        ("alice_far", "python_random"),
        ("python_random", "alice_far"),
    }
    board = arena.stub.GetLeaderboard(pb.GetLeaderboardRequest(), metadata=_auth(arena.bob))
    far = [e.bot for e in board.entries if e.bot.name == "alice_far"]
    assert far and far[0].games == 2 and far[0].sigma < 25 / 3


def test_seat_tokens_bind_their_seat_and_work_once(arena: Arena) -> None:
    for name in ("alice_one", "alice_two"):
        arena.register(arena.alice, name)
    before = arena.snapshot()
    assert "unknown seat token" in _refusal(arena, "forged-token")
    assert arena.snapshot() == before
    tournament_id = arena.tournament("two-remote", ["alice_one", "alice_two"])
    (one,) = _seat_tokens(arena, arena.alice, "alice_one", 1)
    (two,) = _seat_tokens(arena, arena.alice, "alice_two", 1)
    assert one.match_id == two.match_id and one.seat_token != two.seat_token
    bots = {"one": Recorder(), "two": Recorder()}
    join_one = _play_in_thread(arena, one.seat_token, bots["one"])
    assert bots["one"].welcomed.wait(15)
    before = arena.snapshot()
    assert "already used" in _refusal(arena, one.seat_token)  # not a way into seat two
    assert arena.snapshot() == before
    join_two = _play_in_thread(arena, two.seat_token, bots["two"])
    assert (join_one(), join_two()) == (0, 0)
    arena.await_finished(tournament_id)
    welcomed = {key: bot.match for key, bot in bots.items()}
    assert welcomed["one"] is not None and welcomed["two"] is not None
    assert (welcomed["one"].bot_name, welcomed["one"].opponent_name) == ("alice_one", "alice_two")
    assert (welcomed["two"].bot_name, welcomed["two"].opponent_name) == ("alice_two", "alice_one")
    assert welcomed["one"].match_id == one.match_id
    before = arena.snapshot()
    for token in (one.seat_token, two.seat_token):  # the match is over: no other match either
        assert "already used" in _refusal(arena, token)
    assert arena.snapshot() == before


@pytest.mark.parametrize(
    ("user", "bot", "code"),
    [
        ("bob", "alice_far", Code.PERMISSION_DENIED),
        ("bob", "nobody", Code.NOT_FOUND),
        ("alice", "python_random", Code.PERMISSION_DENIED),
        ("nobody", "alice_far", Code.UNAUTHENTICATED),
    ],
    ids=["another-users-bot", "unknown-bot", "not-owned-sandboxed", "bad-token"],
)
def test_seat_offers_are_for_the_bots_owner_only(
    arena: Arena, user: str, bot: str, code: Code
) -> None:
    arena.register(arena.alice, "alice_far")
    token = {"alice": arena.alice, "bob": arena.bob}.get(user, "not-a-token")
    with pytest.raises(grpc.RpcError) as caught:
        next(iter(arena.stub.WaitForSeats(pb.WaitForSeatsRequest(bot=bot), metadata=_auth(token))))
    assert caught.value.code() == code


def test_registering_another_users_bot_name_is_refused(arena: Arena) -> None:
    arena.register(arena.alice, "alice_far")
    before = arena.snapshot()
    with pytest.raises(grpc.RpcError) as caught:
        arena.register(arena.bob, "alice_far")
    assert caught.value.code() == Code.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as caught:
        arena.register(arena.bob, "../etc")
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert arena.snapshot() == before


def test_the_admin_watches_live_while_a_user_is_refused(arena: Arena) -> None:
    arena.register(arena.alice, "alice_slow")
    tournament_id = arena.tournament("live", ["alice_slow", "python_random"], games=1)
    (seat,) = _seat_tokens(arena, arena.alice, "alice_slow", 1)
    join = _play_in_thread(arena, seat.seat_token, Recorder(think_s=0.03))
    match_id = list_matches(arena.store, tournament_id)[0].id
    watch = pb.WatchGameRequest(match_id=match_id, game_index=0)
    kinds: list[str | None] = []
    user_codes: list[Code] = []
    admin = _auth(arena.admin)
    for message in arena.stub.WatchGame(watch, metadata=admin, timeout=90):
        kinds.append(message.WhichOneof("kind"))
        if kinds[-1] == "head_json":
            head = json.loads(message.head_json)
            assert len(head["deal"]) == 24 and "actions" not in head
        elif kinds[-1] == "entry_json":  # full information: every action, with its seat
            entry = json.loads(message.entry_json)
            assert entry.get("seat") in (0, 1) or "reshuffle" in entry
        if kinds.count("entry_json") == 3:  # the game is on: a user may not look
            with pytest.raises(grpc.RpcError) as caught:
                list(arena.stub.WatchGame(watch, metadata=_auth(arena.bob)))
            user_codes.append(caught.value.code())
            listed = arena.stub.ListLiveGames(pb.ListLiveGamesRequest(), metadata=admin)
            live = [(g.match_id, g.game_index, set(g.bots)) for g in listed.games]
            assert (match_id, 0, {"alice_slow", "python_random"}) in live
            with pytest.raises(grpc.RpcError) as caught:
                arena.stub.ListLiveGames(pb.ListLiveGamesRequest(), metadata=_auth(arena.bob))
            user_codes.append(caught.value.code())
    assert join() == 0
    arena.await_finished(tournament_id)
    assert kinds[0] == "head_json" and kinds[-1] == "record_json"
    assert kinds.count("entry_json") >= 3 and user_codes == [Code.PERMISSION_DENIED] * 2
    after = list(arena.stub.WatchGame(watch, metadata=_auth(arena.bob)))
    assert [m.WhichOneof("kind") for m in after] == ["record_json"]
    assert after[0].game_id == list_games(arena.store, tournament_id=tournament_id)[0].id


@pytest.mark.parametrize(
    ("match_delta", "game_index", "code"),
    [(10_000, 0, Code.NOT_FOUND), (0, 5, Code.NOT_FOUND)],
    ids=["no-such-match", "no-such-game"],
)
def test_watching_a_game_that_does_not_exist_is_refused(
    arena: Arena, match_delta: int, game_index: int, code: Code
) -> None:
    request = pb.WatchGameRequest(match_id=1 + match_delta, game_index=game_index)
    with pytest.raises(grpc.RpcError) as caught:
        list(arena.stub.WatchGame(request, metadata=_auth(arena.admin)))
    assert caught.value.code() == code


def test_a_remote_bot_that_drops_its_connection_is_disconnected(arena: Arena) -> None:
    arena.register(arena.alice, "alice_fragile")
    tournament_id = arena.tournament("fragile", ["alice_fragile", "python_random"])
    (seat,) = _seat_tokens(arena, arena.alice, "alice_fragile", 1)
    assert _play_in_thread(arena, seat.seat_token, Recorder(break_in_game=1))() == 1
    arena.await_finished(tournament_id)
    games = sorted(list_games(arena.store, tournament_id=tournament_id), key=lambda g: g.game_index)
    statuses = [dict(zip(g.bots, g.statuses, strict=True)) for g in games]
    assert [s["alice_fragile"] for s in statuses] == ["ok", "disconnect"]
    assert games[1].winner == "python_random" and games[1].reason == "forfeit"


def _offer(arena: Arena, token: str, expires_in_ms: int, socket_path: str) -> None:
    arena.register(arena.alice, "alice_far")
    version = get_version(arena.store, "alice_far").version
    add_seat_offer(
        arena.store, bot="alice_far", version=version, token=token, match_id=None,
        referee_match="m0", slot=0, socket_path=socket_path,
        expires_at_ms=time.time_ns() // 1_000_000 + expires_in_ms,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("first_message", "reason"),
    [
        (referee_pb2.PlayRequest(action_reply=referee_pb2.ActionReply(request_id=1)), "Hello"),
        (referee_pb2.PlayRequest(hello=referee_pb2.Hello(protocol_version=1)), "without a token"),
        (referee_pb2.PlayRequest(), "Hello"),
    ],
    ids=["reply-first", "empty-token", "empty-message"],
)
def test_a_stream_that_does_not_start_with_a_seat_token_is_refused(
    arena: Arena, first_message: referee_pb2.PlayRequest, reason: str
) -> None:
    before = arena.snapshot()
    play = arena.channel.stream_stream(
        PLAY_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    answers = [
        referee_pb2.PlayResponse.FromString(raw)
        for raw in play(iter([first_message.SerializeToString()]), timeout=15)
    ]
    assert [a.WhichOneof("kind") for a in answers] == ["goodbye"]
    assert reason in answers[0].goodbye.reason
    assert arena.snapshot() == before


def test_an_expired_seat_token_is_refused_and_nothing_changes(arena: Arena) -> None:
    _offer(arena, "expired-seat-token", -1, "/nonexistent/b0.sock")
    before = arena.snapshot()
    assert "expired" in _refusal(arena, "expired-seat-token")
    assert arena.snapshot() == before


def test_a_seat_whose_match_is_gone_says_so(arena: Arena, tmp_path: Path) -> None:
    _offer(arena, "orphan-seat-token", 10_000, str(tmp_path / "gone.sock"))
    assert "no longer being played" in _refusal(arena, "orphan-seat-token")
    assert "already used" in _refusal(arena, "orphan-seat-token")


def test_a_remote_bot_that_never_connects_times_out(arena: Arena) -> None:
    arena.register(arena.alice, "alice_absent")
    tournament_id = arena.tournament("absent", ["alice_absent", "python_random"], games=1)
    arena.await_finished(tournament_id)
    (game,) = list_games(arena.store, tournament_id=tournament_id)
    assert dict(zip(game.bots, game.statuses, strict=True))["alice_absent"] == "timeout"
    assert game.winner == "python_random"


def test_a_stopped_tournament_withdraws_its_open_seats(arena: Arena) -> None:
    """Its match is no longer played: the seat's token is refused as withdrawn (not taken
    and sent to a socket nobody serves), and a connector that subscribes is offered nothing."""
    arena.register(arena.alice, "alice_stopped")
    tournament_id = arena.tournament("stopped", ["alice_stopped", "python_random"], games=1)
    (seat,) = _seat_tokens(arena, arena.alice, "alice_stopped", 1)
    name = get_tournament(arena.store, tournament_id).name
    arena.stub.StopTournament(pb.StopTournamentRequest(name=name), metadata=_auth(arena.admin))
    assert open_seat_offers(arena.store, bot="alice_stopped") == []
    before = arena.snapshot()
    assert "no longer offered" in _refusal(arena, seat.seat_token)
    assert arena.snapshot() == before


def test_the_referee_gateway_reports_healthy(arena: Arena) -> None:
    health = health_pb2_grpc.HealthStub(arena.channel)
    reply = health.Check(health_pb2.HealthCheckRequest(service="kahuna.v1.RefereeService"))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def _archive(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(directory, arcname=directory.name)
    return buffer.getvalue()


def test_a_submitted_remote_bot_toml_needs_no_smoke_match(arena: Arena, tmp_path: Path) -> None:
    remote = tmp_path / "alice_toml"
    remote.mkdir()
    (remote / "bot.toml").write_text('name = "alice_toml"\nruntime = "remote"\n')
    request = pb.SubmitBotRequest(archive=_archive(remote))
    reply = arena.stub.SubmitBot(request, metadata=_auth(arena.alice))
    assert reply.created and reply.bot.owner == "alice"
    seats_call = arena.stub.WaitForSeats(
        pb.WaitForSeatsRequest(bot="alice_toml"), metadata=_auth(arena.alice), timeout=0.5
    )
    with pytest.raises(grpc.RpcError) as caught:  # accepted, and no seat is offered yet
        next(iter(seats_call))
    assert caught.value.code() == Code.DEADLINE_EXCEEDED
    sandboxed = tmp_path / "alice_local"
    sandboxed.mkdir()
    (sandboxed / "bot.toml").write_text(
        'name = "alice_local"\nruntime = "python"\ncommand = ["python3", "bot.py"]\n'
    )
    with pytest.raises(grpc.RpcError) as caught:  # a bot to launch still needs its smoke match
        arena.stub.SubmitBot(
            pb.SubmitBotRequest(archive=_archive(sandboxed)), metadata=_auth(arena.alice)
        )
    assert caught.value.code() == Code.FAILED_PRECONDITION


def test_a_connection_that_never_says_hello_is_hung_up(arena: Arena) -> None:
    limits = StreamLimits(hello_wait_s=0.3)
    server, port = create_server("127.0.0.1:0", store=arena.store, limits=limits)
    server.start()
    silent: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            play = channel.stream_stream(
                PLAY_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
            )
            started = time.monotonic()
            replies = [
                referee_pb2.PlayResponse.FromString(r)
                for r in play(iter(silent.get, None), timeout=10)
            ]
            assert time.monotonic() - started < 5
        assert [r.goodbye.reason for r in replies] == ["no Hello within 0.3 s"]
    finally:
        silent.put(None)
        server.stop(grace=None)


def _play_raw(arena: Arena, token: str) -> list[referee_pb2.PlayResponse]:
    """Play a whole match on a raw Play stream (first legal action); every message received."""
    outbox, messages = _open_play(arena, token, TOURNAMENT_TIMEOUT_S)
    received = []
    try:
        for message in messages:
            received.append(message)
            if message.WhichOneof("kind") == "action_request":
                request = message.action_request
                reply = referee_pb2.ActionReply(
                    request_id=request.request_id, action=request.legal_actions[0]
                )
                outbox.put(referee_pb2.PlayRequest(action_reply=reply).SerializeToString())
            if message.WhichOneof("kind") in ("match_over", "goodbye"):
                break
    finally:
        outbox.put(None)
    return received


def test_no_message_to_a_remote_bot_carries_a_secret_and_its_deals_are_fresh(
    arena: Arena,
) -> None:
    games = 4
    arena.register(arena.alice, "alice_wire")
    tournament_id = arena.tournament("remote-wire", ["alice_wire", "python_random"], games)
    (seat,) = _seat_tokens(arena, arena.alice, "alice_wire", 1)
    received = _play_raw(arena, seat.seat_token)
    arena.await_finished(tournament_id)
    (match,) = list_matches(arena.store, tournament_id)
    forbidden = Forbidden.of_match(
        tournament_secret(arena.store, tournament_id), match.seed, games, extra=[match.id]
    )
    assert leaks(seat, forbidden) == []
    kinds = [message.WhichOneof("kind") for message in received]
    assert kinds.count("game_over") == games and kinds[-1] == "match_over", kinds
    for message in received:
        assert leaks(message, forbidden) == [], message.WhichOneof("kind")
    records = [json.loads(m.game_over.record_json) for m in received if m.HasField("game_over")]
    assert [r["match"]["paired"] for r in records] == [False] * games
    assert [r["match"]["deal_index"] for r in records] == list(range(games))
    assert len({tuple(r["deal"]) for r in records}) == games, "a remote bot was dealt a deal twice"


def test_paired_remote_pairs_the_deals_of_a_remote_bot_and_the_record_says_so(
    tmp_path: Path,
) -> None:
    served = _serve(tmp_path, paired_remote=True)
    arena = next(served)
    try:
        arena.register(arena.alice, "alice_paired")
        tournament_id = arena.tournament("paired", ["alice_paired", "python_random"], 4)
        (seat,) = _seat_tokens(arena, arena.alice, "alice_paired", 1)
        received = _play_raw(arena, seat.seat_token)
        arena.await_finished(tournament_id)
    finally:
        next(served, None)  # stop the server and close the store
    texts = [m.game_over.record_json for m in received if m.HasField("game_over")]
    # one run plays both games of a deal: game 2k's record (its deal) is withheld from
    # the processes that play game 2k+1 on it, and sent after that game
    assert [bool(text) for text in texts] == [False, True, False, True]
    records = [json.loads(text) for text in texts if text]
    assert [(r["match"]["paired"], r["match"]["deal_index"]) for r in records] == [
        (True, 0),
        (True, 1),
    ]
    assert records[0]["deal"] != records[1]["deal"]


def _revoke(arena: Arena, token: str) -> None:
    """Revoke ``token`` as the admin does: `arena token revoke ID`, another process (the
    server learns of it from the store, as it would in production)."""
    (row,) = [row for row in list_tokens(arena.store) if row.digest == token_digest(token)]
    command = [sys.executable, "-m", "arena", "token", "revoke", str(row.id),
               "--data-dir", str(arena.store.data_dir)]  # fmt: skip
    subprocess.run(command, check=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)


def _reader(messages: Iterator[referee_pb2.PlayResponse]) -> queue.SimpleQueue[object]:
    """``messages`` read in a thread, onto a queue (then None, or the error the call ended with)."""
    read: queue.SimpleQueue[object] = queue.SimpleQueue()

    def pump() -> None:
        try:
            for message in messages:
                read.put(message)
            read.put(None)
        except grpc.RpcError as error:
            read.put(error)

    threading.Thread(target=pump, daemon=True).start()
    return read


def _reply(outbox: queue.SimpleQueue[bytes | None], message: object) -> None:
    """Answer an ActionRequest with its first legal action."""
    assert isinstance(message, referee_pb2.PlayResponse)
    request = message.action_request
    reply = referee_pb2.ActionReply(request_id=request.request_id, action=request.legal_actions[0])
    outbox.put(referee_pb2.PlayRequest(action_reply=reply).SerializeToString())


@pytest.mark.parametrize(
    "revoked",
    ["the token that obtained the seat", "another token of the owner"],
    ids=["seat-token-holder", "control-other-token"],
)
def test_revoking_the_token_that_obtained_a_seat_ends_its_game(arena: Arena, revoked: str) -> None:
    """A stolen user token, revoked, plays no further move: the seat's stream ends within the
    bound of every open stream, the seat is a DISCONNECT that says why, and the opponent wins
    as against any disconnect. Revoking a token the seat was not handed to changes nothing."""
    user = "carol" if revoked.startswith("the token") else "dave"
    holder, spare = create_token(arena.store, user), create_token(arena.store, user)
    bot = f"{user}_far"
    arena.register(holder, bot)
    tournament_id = arena.tournament(f"revoked-{user}", [bot, "python_random"], games=1)
    (seat,) = _seat_tokens(arena, holder, bot, 1)
    outbox, messages = _open_play(arena, seat.seat_token, TOURNAMENT_TIMEOUT_S)
    read = _reader(messages)
    message = read.get(timeout=TOURNAMENT_TIMEOUT_S)
    while not (
        isinstance(message, referee_pb2.PlayResponse) and message.HasField("action_request")
    ):
        message = read.get(timeout=TOURNAMENT_TIMEOUT_S)
    # the bot's move is asked: the token goes while it thinks (well within its time)
    _revoke(arena, holder if user == "carol" else spare)
    try:
        if user == "dave":  # the control: the game goes on
            assert_stays(read.empty, 2 * STREAM_TOKEN_BOUND_S, "the seat's stream left alone")
            while isinstance(message, referee_pb2.PlayResponse):
                if message.HasField("action_request"):
                    _reply(outbox, message)
                elif message.HasField("match_over"):
                    break
                message = read.get(timeout=TOURNAMENT_TIMEOUT_S)
        else:
            message = read.get(timeout=TOURNAMENT_TIMEOUT_S)
            assert isinstance(message, referee_pb2.PlayResponse), message
            assert message.goodbye.status == referee_pb2.BOT_STATUS_DISCONNECT, message
            assert "token revoked" in message.goodbye.reason
    finally:
        outbox.put(None)
    arena.await_finished(tournament_id)
    (game,) = list_games(arena.store, tournament_id=tournament_id)
    status = dict(zip(game.bots, game.statuses, strict=True))[bot]
    match = game_record(arena.store, game.id)["match"]
    assert isinstance(match, dict)
    failures = match["failures"]
    if user == "dave":
        assert (status, failures) == ("ok", []), failures
        return
    assert (status, game.winner, game.reason) == ("disconnect", "python_random", "forfeit")
    assert [f["detail"] for f in failures] == [
        "the arena ended the stream: the token its owner obtained the seat with was revoked"
    ]
    with pytest.raises(grpc.RpcError) as caught:  # and no seat is handed out on it again
        next(iter(arena.stub.WaitForSeats(pb.WaitForSeatsRequest(bot=bot), metadata=_auth(holder))))
    assert caught.value.code() == Code.UNAUTHENTICATED


def test_a_seat_token_handed_to_a_token_since_revoked_is_refused(arena: Arena) -> None:
    erin = create_token(arena.store, "erin")
    arena.register(erin, "erin_far")
    tournament_id = arena.tournament("revoked-unused", ["erin_far", "python_random"], games=1)
    (seat,) = _seat_tokens(arena, erin, "erin_far", 1)
    create_token(arena.store, "erin")  # the owner still holds a live token: not that one
    _revoke(arena, erin)
    before = arena.snapshot()
    assert "token revoked" in _refusal(arena, seat.seat_token)
    assert arena.snapshot() == before
    arena.await_finished(tournament_id)  # the seat times out, as an absent bot's
    (game,) = list_games(arena.store, tournament_id=tournament_id)
    assert dict(zip(game.bots, game.statuses, strict=True))["erin_far"] == "timeout"
