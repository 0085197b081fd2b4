"""GetLadder and SetBotWithdrawn on a real server (port 0)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.server.app import create_server
from arena.store import (
    Store,
    TournamentConfig,
    add_bot_version,
    add_ladder_match,
    create_ladder,
    create_token,
    ensure_admin_token,
    get_version,
)
from arena.store.ladder import ladder_entrants

pytestmark = pytest.mark.slow  # every test here starts a process or a server

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Served:
    stub: pb_grpc.ArenaServiceStub
    store: Store
    admin: str
    alice: str
    bob: str


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    store = Store.open(tmp_path / "data")
    for name, owner in (("a1", "alice"), ("a2", "alice"), ("b1", "bob")):
        target = tmp_path / "bots" / name
        shutil.copytree(REPO / "sample_bots" / "python_random", target)
        toml = (target / "bot.toml").read_text()
        (target / "bot.toml").write_text(toml.replace('"python_random"', f'"{name}"'))
        add_bot_version(store, load_bot(target), owner=owner)
    settings = {"placement_matches": 1, "entrants_per_user": 0}  # alice enters both her bots
    ladder = create_ladder(store, "ladder", TournamentConfig(), settings)
    ids = [r.version_id for r in ladder_entrants(store, ladder)]
    add_ladder_match(store, ladder, ids[0], ids[1], games=2, seed=1)  # in play
    server, port = create_server("127.0.0.1:0", store=store)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield Served(
        pb_grpc.ArenaServiceStub(channel), store, ensure_admin_token(store),
        create_token(store, "alice"), create_token(store, "bob"),
    )  # fmt: skip
    channel.close()
    server.stop(grace=None)
    store.close()


def test_the_ladder_shows_standings_with_sigma_games_and_the_pairing_queue(
    served: Served,
) -> None:
    answer = served.stub.GetLadder(pb.GetLadderRequest(queue=3), metadata=_auth(served.bob))
    assert answer.ladder.name == "ladder"
    assert answer.ladder.format == pb.TOURNAMENT_FORMAT_LADDER
    assert [s.rank for s in answer.standings] == [1, 2, 3]
    rows = {s.bot.name: s for s in answer.standings}
    assert set(rows) == {"a1", "a2", "b1"}
    assert rows["a1"].bot.sigma == pytest.approx(get_version(served.store, "a1").sigma)
    assert (rows["a1"].matches, rows["a1"].in_play, rows["a1"].placing) == (1, 1, False)
    assert (rows["b1"].matches, rows["b1"].placing) == (0, True)
    assert len(answer.queue) == 3
    assert answer.queue[0].first == "b1" and answer.queue[0].placement  # its placement first
    assert answer.placement_matches == 1 and list(answer.recent_games) == []


def test_an_owner_withdraws_a_bot_and_it_leaves_the_ladder(served: Served) -> None:
    served.stub.SetBotWithdrawn(
        pb.SetBotWithdrawnRequest(bot="b1", withdrawn=True), metadata=_auth(served.bob)
    )
    answer = served.stub.GetLadder(pb.GetLadderRequest(), metadata=_auth(served.alice))
    assert {s.bot.name for s in answer.standings} == {"a1", "a2"}
    assert all("b1" not in (q.first, q.second) for q in answer.queue)
    served.stub.SetBotWithdrawn(
        pb.SetBotWithdrawnRequest(bot="b1", withdrawn=False), metadata=_auth(served.admin)
    )
    answer = served.stub.GetLadder(pb.GetLadderRequest(), metadata=_auth(served.alice))
    assert {s.bot.name for s in answer.standings} == {"a1", "a2", "b1"}


def test_a_bot_the_admin_withdrew_stays_off_until_the_admin_brings_it_back(
    served: Served,
) -> None:
    """The owner can neither undo the admin's withdrawal (naming why) nor make it their own."""
    def withdraw(token: str, withdrawn: bool) -> None:
        served.stub.SetBotWithdrawn(pb.SetBotWithdrawnRequest(bot="b1", withdrawn=withdrawn),
                                    metadata=_auth(token))  # fmt: skip

    def on_ladder() -> bool:
        answer = served.stub.GetLadder(pb.GetLadderRequest(), metadata=_auth(served.alice))
        return "b1" in {s.bot.name for s in answer.standings}

    withdraw(served.admin, True)
    withdraw(served.bob, True)  # the owner's own withdrawal on top leaves it the admin's
    with pytest.raises(grpc.RpcError) as refused:
        withdraw(served.bob, False)
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert "withdrawn from the ladder by the arena's admin" in str(refused.value.details())
    assert not on_ladder()
    withdraw(served.admin, False)
    assert on_ladder()


@pytest.mark.parametrize(
    ("who", "request_", "code"),
    [
        ("alice", pb.SetBotWithdrawnRequest(bot="b1", withdrawn=True), "PERMISSION_DENIED"),
        ("alice", pb.SetBotWithdrawnRequest(bot="nobody", withdrawn=True), "NOT_FOUND"),
        ("alice", pb.SetBotWithdrawnRequest(), "INVALID_ARGUMENT"),
        ("alice", pb.GetLadderRequest(name="other"), "NOT_FOUND"),
        ("alice", pb.GetLadderRequest(queue=100_000), "INVALID_ARGUMENT"),
        ("nobody", pb.GetLadderRequest(), "UNAUTHENTICATED"),
    ],
    ids=["not-owner", "unknown-bot", "no-bot", "unknown-ladder", "queue-too-long", "no-token"],
)
def test_refusals_name_the_problem(served: Served, who: str, request_: object, code: str) -> None:
    call = (
        served.stub.GetLadder
        if isinstance(request_, pb.GetLadderRequest)
        else served.stub.SetBotWithdrawn
    )
    metadata = _auth(getattr(served, who)) if who != "nobody" else ()
    with pytest.raises(grpc.RpcError) as caught:
        call(request_, metadata=metadata)
    assert caught.value.code().name == code
    assert caught.value.details()


def test_watching_the_ladder_shows_its_standings_as_get_ladder_ranks_them(
    served: Served,
) -> None:
    """WatchTournament on a ladder: its rows are GetLadder's (rank, bot, ladder games, the
    conservative rating as points), read from the stored ratings, not scored from games."""
    from arena.store import conservative_rating

    ladder = served.stub.GetLadder(pb.GetLadderRequest(), metadata=_auth(served.bob))
    stream = served.stub.WatchTournament(
        pb.WatchTournamentRequest(name="ladder"), metadata=_auth(served.bob), timeout=30
    )
    update = next(iter(stream))
    stream.cancel()  # type: ignore[no-untyped-call]
    assert update.tournament.format == pb.TOURNAMENT_FORMAT_LADDER
    assert [(s.rank, s.bot, s.games) for s in update.standings] == [
        (s.rank, s.bot.name, s.ladder_games) for s in ladder.standings
    ]
    for row, shown in zip(update.standings, ladder.standings, strict=True):
        assert row.points == pytest.approx(conservative_rating(shown.bot.mu, shown.bot.sigma))
        assert (row.wins, row.draws, row.losses, row.byes) == (0, 0, 0, 0)
        assert not row.HasField("interval") and not row.separated_from_next


@pytest.mark.parametrize("running", [True, False], ids=["interrupted", "control-not-running"])
def test_watching_an_interrupted_ladder_says_how_to_start_it_again(
    served: Served, running: bool
) -> None:
    """An interrupted ladder's WatchTournament message names `arena serve --ladder
    --ladder-name NAME` (`arena tournament resume` and StartTournament refuse a ladder)."""
    from arena.store import TournamentStatus, get_tournament, set_status

    ladder = get_tournament(served.store, "ladder")
    if running:  # stored running, no runner holds its lease: shown interrupted
        set_status(served.store, ladder.id, TournamentStatus.RUNNING)
    stream = served.stub.WatchTournament(
        pb.WatchTournamentRequest(name="ladder"), metadata=_auth(served.bob), timeout=30
    )
    update = next(iter(stream))
    stream.cancel()  # type: ignore[no-untyped-call]
    hint = "start it again with `arena serve --ladder --ladder-name ladder`"
    assert (hint in update.message) is running, update.message
    assert "tournament resume" not in update.message
