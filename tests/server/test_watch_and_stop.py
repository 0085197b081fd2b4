"""WatchTournament follows a tournament or a ladder that another process plays, from the
games it stores; StopTournament stops what this server plays, and says why it cannot stop
anything else.

The other process is real (``tests.store.lease_holder``: it holds the runner lease
as a runner does); the games are stored into the same store by this test, as that
runner would store them.
"""

from __future__ import annotations

import threading

import grpc
import pytest

from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.referee.types import GameReport
from arena.server.arena_service import ArenaService
from arena.store import (
    TournamentConfig,
    TournamentStatus,
    acquire_lease,
    add_ladder_match,
    create_ladder,
    ladder_entrants,
    list_matches,
    set_status,
)
from arena.testing.waiting import wait_until
from arena.tournament.policy.results import store_game
from tests.server.test_arena_service import Arena, _auth, _code, arena  # noqa: F401
from tests.store.lease_holder import kill_9, lease_holding_process

Code = grpc.StatusCode
pytestmark = pytest.mark.slow  # a server and other processes


def _report(index: int, seats: tuple[str, str], winner: str | None) -> GameReport:
    return GameReport(
        index=index, bots_by_seat=seats, winner=winner, reason="points" if winner else "draw",
        statuses={}, actions=3, time_ms={seats[0]: 1.0, seats[1]: 2.0},
        record={"format": "kahuna-record/1", "deal": [], "actions": [], "index": index},
    )  # fmt: skip


def _ladder_match(served: Arena) -> tuple[int, int]:
    """A ladder of alice_bot and bob_bot with one match of 2 games: (ladder id, match id)."""
    ladder = create_ladder(served.store, "ladder", TournamentConfig(), {})
    ids = {e.bot: e.version_id for e in ladder_entrants(served.store, ladder)}
    first, second = ids["alice_bot"], ids["bob_bot"]
    return ladder, add_ladder_match(served.store, ladder, first, second, games=2, seed=1)


def _cup_match(served: Arena) -> tuple[int, int]:
    created = served.stub.CreateTournament(
        pb.CreateTournamentRequest(name="elsewhere", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
                                   bots=["alice_bot", "bob_bot"], games_per_match=2),
        metadata=_auth(served.admin),
    )  # fmt: skip
    return created.tournament.id, list_matches(served.store, created.tournament.id)[0].id


def test_a_ladder_this_server_plays_is_not_said_to_run_in_another_process(
    arena: Arena,  # noqa: F811
) -> None:
    """`arena serve --ladder` holds its ladder's lease in its own process: a watcher is
    told the ladder runs, not that a process (the server's own pid) elsewhere runs it."""
    ladder = create_ladder(arena.store, "served-ladder", TournamentConfig(), {})
    lease = acquire_lease(arena.store, ladder, name="served-ladder")  # as LadderThread takes it
    try:
        set_status(arena.store, ladder, TournamentStatus.RUNNING)
        call = arena.stub.WatchTournament(
            pb.WatchTournamentRequest(name="served-ladder"), metadata=_auth(arena.bob),
            timeout=30,
        )
        first = next(call)
        call.cancel()
    finally:
        lease.release()
    assert first.tournament.status == "running"
    assert first.message == "tournament is running"


@pytest.mark.parametrize("kind", ["tournament", "ladder"])
def test_a_watch_follows_the_games_another_process_stores_until_its_runner_is_gone(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Control: the watch would have ended after its first event (no game ever seen); a
    game stored just after the watcher was shown where the tournament stands is told."""
    served: Arena = request.getfixturevalue("arena")
    first_status = ArenaService._watch_status
    stored_after_status: list[int] = []

    def status_then_a_game(service: ArenaService, tournament_id: int) -> pb.WatchTournamentResponse:
        """The watcher's first event, with a game stored right after it was read: the
        race of a game that lands between where the tournament stood and the follow."""
        status = first_status(service, tournament_id)
        if not stored_after_status:
            stored_after_status.append(tournament_id)
            store_game(served.store, match_id, _report(0, ("alice_bot", "bob_bot"), "alice_bot"))
        return status

    monkeypatch.setattr(ArenaService, "_watch_status", status_then_a_game)
    tournament_id, match_id = _ladder_match(served) if kind == "ladder" else _cup_match(served)
    name = "ladder" if kind == "ladder" else "elsewhere"
    seen: list[pb.WatchTournamentResponse] = []
    ended = threading.Event()

    def watch() -> None:
        asked = pb.WatchTournamentRequest(name=name)
        try:
            for event in served.stub.WatchTournament(asked, metadata=_auth(served.bob), timeout=60):
                seen.append(event)
        finally:
            ended.set()

    with lease_holding_process(served.store.data_dir, tournament_id) as runner:
        watcher = threading.Thread(target=watch)
        watcher.start()
        wait_until(lambda: len(seen) > 0 or ended.is_set(), "the first event", 20)
        assert stored_after_status == [tournament_id]
        seats = ("alice_bot", "bob_bot")
        wait_until(lambda: any(e.game_id for e in seen) or ended.is_set(), "the first game", 20)
        store_game(served.store, match_id, _report(1, seats[::-1], None))
        wait_until(lambda: sum(1 for e in seen if e.game_id) == 2 or ended.is_set(), "two games",
                   20)  # fmt: skip
        assert not ended.is_set()  # still following while the runner lives
        kill_9(runner)
    assert ended.wait(20), "the watch did not end once its runner was gone"
    watcher.join(5)
    assert f"running in another process (pid {runner.pid})" in seen[0].message
    games = [e for e in seen if e.game_id]
    assert [e.message for e in games] == [
        "alice_bot vs bob_bot: alice_bot won: more points", "bob_bot vs alice_bot: draw",
    ]  # fmt: skip
    standings = {s.bot: (s.wins, s.draws, s.losses) for s in games[-1].standings}
    assert standings == {"alice_bot": (1, 1, 0), "bob_bot": (0, 1, 1)}
    assert seen[-1].tournament.status == "interrupted"
    assert seen[-1].tournament.games_played == 2


def test_the_admin_stops_a_tournament_the_server_plays_and_nothing_else(
    request: pytest.FixtureRequest,
) -> None:
    served: Arena = request.getfixturevalue("arena")
    admin = _auth(served.admin)
    served.stub.CreateTournament(
        pb.CreateTournamentRequest(name="long-one", format=pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
                                   bots=["alice_bot", "bob_bot"], games_per_match=40, start=True),
        metadata=admin,
    )  # fmt: skip
    stop = pb.StopTournamentRequest(name="long-one")
    code, details = _code(lambda: served.stub.StopTournament(stop, metadata=_auth(served.bob)))
    assert code is Code.PERMISSION_DENIED
    stopped = served.stub.StopTournament(stop, metadata=admin)
    assert stopped.tournament.status == "interrupted"
    assert "stopped by the admin (admin) through StopTournament" in (
        stopped.tournament.interrupted_reason
    )
    assert stopped.tournament.games_played < 40
    code, details = _code(lambda: served.stub.StopTournament(stop, metadata=admin))
    assert code is Code.FAILED_PRECONDITION
    assert "'long-one' is not running in this server: tournament is interrupted" in details
    code, details = _code(
        lambda: served.stub.StopTournament(pb.StopTournamentRequest(name="nope"), metadata=admin)
    )
    assert code is Code.NOT_FOUND and "nope" in details
