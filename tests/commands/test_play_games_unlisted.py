"""People's games at /play stay out of every list of tournaments (`arena tournament list`,
ListTournaments, `arena remote tournament list`) while their tournament, game and record
are still there by id and name."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.cli import main
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.referee.types import GameReport
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.store import (
    PlannedMatch,
    PlannedRound,
    Store,
    TournamentConfig,
    TournamentFormat,
    add_bot_version,
    create_token,
    insert_tournament,
    latest_version_ids,
    list_matches,
    register_remote_bot,
)
from arena.store.play import PlaySeat, insert_play_tournament
from arena.tournament.policy.play_pool import store_play_game

pytestmark = pytest.mark.slow  # a real API server


def _stored(store: Store) -> tuple[str, int]:
    """A tournament ``cup`` and ann's game at /play: (the play tournament's name, game id)."""
    add_bot_version(store, load_bot(SAMPLE_RANDOM_BOT))
    register_remote_bot(store, "human-ann", owner="ann")
    entrants = latest_version_ids(store, ["human-ann", "python_random"])
    insert_tournament(store, "cup", TournamentFormat.ROUND_ROBIN, entrants,
                      TournamentConfig(games_per_match=2))  # fmt: skip
    row = insert_play_tournament(
        store, "play-ann-12345678", entrants, TournamentConfig(games_per_match=1),
        [PlannedRound(1, (PlannedMatch("human-ann", "python_random", 1, 0),))],
        PlaySeat("ann", entrants["python_random"], 0, "rated play is off"),
    )  # fmt: skip
    report = GameReport(
        index=0, bots_by_seat=("human-ann", "python_random"), winner="python_random",
        reason="points", statuses={}, actions=10, time_ms={},
        record={"format": "kahuna-record/1", "match": {"paired": False}},
    )  # fmt: skip
    game_id, _ = store_play_game(store, list_matches(store, row.id)[0].id, report, "human-ann",
                                 rated_play=False)  # fmt: skip
    assert game_id is not None
    return row.name, game_id


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Store, int, str, int, str]]:
    store = Store.open(tmp_path / "data")
    name, game_id = _stored(store)
    server, port = create_server("127.0.0.1:0", store=store, options=ServiceOptions())
    server.start()
    try:
        yield store, port, name, game_id, create_token(store, "bob")
    finally:
        server.stop(grace=None)
        store.close()


def test_the_lists_leave_out_play_games_that_stay_stored(
    served: tuple[Store, int, str, int, str], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:  # fmt: skip
    """Control: the play tournament is there by name (status, GetGameRecord)."""
    store, port, name, game_id, bob = served
    auth = (("authorization", f"Bearer {bob}"),)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.ArenaServiceStub(channel)
        listed = stub.ListTournaments(pb.ListTournamentsRequest(), metadata=auth, timeout=10)
        assert [t.name for t in listed.tournaments] == ["cup"]
        record = stub.GetGameRecord(pb.GetGameRecordRequest(game_id=game_id), metadata=auth,
                                    timeout=10)  # fmt: skip
        assert json.loads(record.record_json)["format"] == "kahuna-record/1"

    data = ["--data-dir", str(store.data_dir)]
    capsys.readouterr()
    assert main(["tournament", "list", *data]) == 0
    out = capsys.readouterr().out
    assert "cup" in out and name not in out
    assert main(["tournament", "status", name, "--json", *data]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == name

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(bob + "\n"))
    assert main(["remote", "login", f"grpc://127.0.0.1:{port}"]) == 0
    capsys.readouterr()
    assert main(["remote", "tournament", "list"]) == 0
    out = capsys.readouterr().out
    assert "cup" in out and name not in out
