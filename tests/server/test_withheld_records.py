"""No deal still to be played leaves the arena early: a real store, web and API.

Games 2k and 2k+1 of a paired match share a deal (seats swapped). With game 0
stored and game 1 not, every public way to game 0 (its page, JSON, record,
frames in every perspective, the tournament's and bots' pages, the live feed,
GetGameRecord and WatchGame as a user and as the bot's owner, `arena remote
record`, the audit) is checked against game 0's own record for its hidden
cards: the deal's order, the reshuffle orders, both starting hands, every
face-down discard. The admin gets the record throughout; once game 1 is
stored everyone does, and the same check then flags what they get (the
control: the check catches a full record). An unpaired game is public at once.
"""

from __future__ import annotations

import io
import json
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import grpc
import pytest

from arena.cli import main
from arena.commands import remote
from arena.commands.remote_grpc import Endpoint
from arena.kahuna import parse_record, play_random_game, replay_steps
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.protocol.gen.kahuna.v1 import arena_service_pb2_grpc as pb_grpc
from arena.referee import load_bot
from arena.server.app import create_server
from arena.server.arena_service import ServiceOptions
from arena.store import (
    Store,
    TournamentConfig,
    TournamentFormat,
    TournamentStatus,
    acquire_lease,
    add_bot_version,
    create_token,
    ensure_admin_token,
    game_record,
    list_matches,
    set_status,
)
from arena.testing.demo_data import report_for, write_bot_dir
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament
from arena.web import create_web_server

Code = grpc.StatusCode
PERSPECTIVES = ("all", "0", "1", "public")


# ------------------------------------------------------------ the leak check


def _hidden_sequences(record: dict[str, object]) -> dict[str, list[str]]:
    """What no one but the seats (and the referee) may know of a game, by name."""
    parsed = parse_record(json.dumps(record))
    hidden: dict[str, list[str]] = {"the deal's order": list(parsed.deal)}
    for number, order in enumerate(parsed.reshuffles):
        hidden[f"reshuffle {number + 1}"] = list(order)
    steps = list(replay_steps(parsed))
    for seat, hand in enumerate(steps[0].state.hands):
        hidden[f"seat {seat}'s starting hand"] = list(hand)
    for seat, cards in enumerate(steps[-1].state.facedown_discards):
        if cards:
            hidden[f"seat {seat}'s face-down discards"] = list(cards)
    return hidden


def _walk(node: object, path: str = "") -> Iterator[str]:
    """Where a JSON document holds a hidden card: a deal, reshuffles, a hand, a face-down
    discard, a deck draw's card."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("deal", "reshuffles") and value:
                yield f"{path}.{key}"
            elif key in ("hands", "facedown_discards") and isinstance(value, list):
                if any(entry is not None for entry in value):
                    yield f"{path}.{key}"
            elif key == "drawn" and value is not None:
                yield f"{path}.drawn"
            else:
                yield from _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for number, value in enumerate(node):
            yield from _walk(value, f"{path}[{number}]")


CARD = re.compile(r"\b[A-Z]{4}\b")


def _contains_run(tokens: list[str], run: list[str]) -> bool:
    return any(tokens[i : i + len(run)] == run for i in range(len(tokens) - len(run) + 1))


def hidden_leaks(text: str, record: dict[str, object]) -> list[str]:
    """The hidden cards of ``record`` that ``text`` (a page, JSON, a message) gives out.

    A deal or reshuffle order counts as given out when its cards appear in a row
    in ``text`` whatever the formatting; a hand or face-down list when it appears
    as a JSON list; and a JSON ``text`` when any value holds a hidden card.
    """
    tokens = CARD.findall(text)
    found = []
    for name, cards in _hidden_sequences(record).items():
        as_json = (json.dumps(cards), json.dumps(cards, separators=(",", ":")))
        long_run = len(cards) >= 10 and _contains_run(tokens, cards)
        if long_run or any(shown in text for shown in as_json):
            found.append(name)
    try:
        document = json.loads(text)
    except ValueError:
        return found
    return found + list(_walk(document))


def test_the_check_catches_a_full_record_and_every_private_perspective() -> None:
    """The control: a full record, and every private perspective of it, is caught."""
    from arena.web.frames import game_frames, parse_perspective

    record = json.loads(json.dumps(_paired_record(3, 0)))
    assert "the deal's order" in hidden_leaks(json.dumps(record), record)
    assert "the deal's order" in hidden_leaks(json.dumps(record, indent=1), record)
    parsed = parse_record(json.dumps(record))
    for name in ("all", "0", "1"):
        perspective = parse_perspective(name)
        frames = json.dumps(game_frames(parsed, perspective).to_json(perspective))
        assert hidden_leaks(frames, record), name
    public = json.dumps(game_frames(parsed, "public").to_json("public"))
    assert hidden_leaks(public, record) == []


# ------------------------------------------------------------------ the arena


def _paired_record(seed: int, index: int, paired: bool = True) -> dict[str, object]:
    record = dict(report_for(index, ("a", "b"), play_random_game(seed)).record)
    record["match"] = {"paired": paired, "deal_index": index // 2 if paired else index}
    return record


@dataclass
class Site:
    store: Store
    web: str
    stub: pb_grpc.ArenaServiceStub
    grpc_port: int
    admin: str
    owner: str  # alice: owns alice_bot, which plays the paired match
    user: str  # carol: owns nothing in it
    paired_match: int
    paired_tournament: int
    fresh_match: int


def _tournament(store: Store, name: str, games: int) -> tuple[int, int]:
    config = TournamentConfig(games_per_match=games, seed=17)
    created = create_tournament(
        store, name, TournamentFormat.ROUND_ROBIN, ["alice_bot", "bob_bot"], config
    )
    set_status(store, created.id, TournamentStatus.RUNNING)
    [match] = list_matches(store, created.id)
    return created.id, match.id


def _store(store: Store, match_id: int, index: int, paired: bool = True) -> int:
    seats = ("alice_bot", "bob_bot") if index % 2 == 0 else ("bob_bot", "alice_bot")
    report = report_for(index, seats, play_random_game(100 + index // 2 if paired else 200 + index))
    deal = {"paired": paired, "deal_index": index // 2 if paired else index}
    record = {**report.record, "match": deal}
    game_id = store_game(store, match_id, replace(report, record=record))
    assert game_id is not None
    return game_id


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("withheld")
    store = Store.open(root / "data")
    for name, owner in (("alice_bot", "alice"), ("bob_bot", "bob")):
        add_bot_version(store, load_bot(write_bot_dir(root / "bots", name)), owner=owner)
    admin, alice = ensure_admin_token(store), create_token(store, "alice")
    create_token(store, "bob")
    carol = create_token(store, "carol")
    paired_tournament, paired_match = _tournament(store, "paired-cup", games=4)
    fresh_tournament, fresh_match = _tournament(store, "fresh-cup", games=2)
    leases = [acquire_lease(store, t, name=n) for t, n in
              ((paired_tournament, "paired-cup"), (fresh_tournament, "fresh-cup"))]  # fmt: skip
    server, grpc_port = create_server(
        "127.0.0.1:0", store=store, options=ServiceOptions(concurrency=1)
    )
    server.start()
    web, web_port = create_web_server(store, "127.0.0.1", 0)
    channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
    try:
        yield Site(
            store, f"http://127.0.0.1:{web_port}", pb_grpc.ArenaServiceStub(channel), grpc_port,
            admin, alice, carol, paired_match, paired_tournament, fresh_match,
        )  # fmt: skip
    finally:
        channel.close()
        web.stop()
        server.stop(grace=None)
        for lease in leases:
            lease.release()
        store.close()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _public_texts(site: Site, game_id: int) -> dict[str, tuple[int, str]]:
    """Every web page and JSON that shows (or links) game ``game_id``."""
    paths = [
        f"/games/{game_id}", f"/api/games/{game_id}", f"/api/games/{game_id}/record",
        *(f"/api/games/{game_id}/frames?perspective={name}" for name in PERSPECTIVES),
        f"/tournaments/{site.paired_tournament}", f"/api/tournaments/{site.paired_tournament}",
        "/bots/alice_bot", "/api/bots/alice_bot", "/", "/api/leaderboard",
        f"/api/live/{site.paired_match}/0", f"/live/{site.paired_match}/1",
    ]  # fmt: skip
    return {path: _get(site.web + path) for path in paths}


def _record_call(site: Site, token: str, game_id: int) -> pb.GetGameRecordResponse:
    request = pb.GetGameRecordRequest(game_id=game_id)
    reply: pb.GetGameRecordResponse = site.stub.GetGameRecord(request, metadata=_auth(token))
    return reply


def _refusal(call: object) -> tuple[Code, str]:
    assert callable(call)
    with pytest.raises(grpc.RpcError) as caught:
        call()
    error = caught.value
    return error.code(), str(error.details())


def _watch(site: Site, token: str) -> list[pb.WatchGameResponse]:
    request = pb.WatchGameRequest(match_id=site.paired_match, game_index=0)
    return list(site.stub.WatchGame(request, metadata=_auth(token), timeout=10))


def _remote_record(
    site: Site, token: str, game_id: int, config: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:  # fmt: skip
    """`arena remote record GAME_ID` as the holder of ``token``: status, stdout, stderr."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    remote.save_login(Endpoint(f"127.0.0.1:{site.grpc_port}", token), config / "kahuna-arena")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    capsys.readouterr()
    status = main(["remote", "record", str(game_id)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
def test_a_game_of_a_deal_still_to_be_played_gives_out_no_hidden_card(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    first = _store(site.store, site.paired_match, 0)
    record = game_record(site.store, first)
    waits = "withheld until game 1 of match"

    texts = _public_texts(site, first)
    for path, (status, text) in texts.items():
        assert status in (200, 303, 403), (path, status, text[:200])
        assert hidden_leaks(text, record) == [], path
    assert texts[f"/games/{first}"][0] == 200 and waits in texts[f"/games/{first}"][1]
    assert f"/api/games/{first}/record" not in texts[f"/games/{first}"][1]
    shown = json.loads(texts[f"/api/games/{first}"][1])
    assert shown["record"] is None and waits in shown["withheld"]
    assert shown["id"] == first and "winner_seat" in shown  # the result is public
    for name in ("all", "0", "1"):
        status, text = texts[f"/api/games/{first}/frames?perspective={name}"]
        assert status == 403 and waits in json.loads(text)["error"], name
    assert texts[f"/api/games/{first}/record"][0] == 403
    public = json.loads(texts[f"/api/games/{first}/frames?perspective=public"][1])
    assert len(public["frames"]) == len(record["actions"]) + 1  # type: ignore[arg-type]

    for token in (site.user, site.owner):  # a user, and the owner of a bot that played it
        code, details = _refusal(lambda token=token: _record_call(site, token, first))
        assert code is Code.FAILED_PRECONDITION and waits in details
        assert hidden_leaks(details, record) == []
        code, details = _refusal(lambda token=token: _watch(site, token))
        assert code is Code.FAILED_PRECONDITION and waits in details
        status, out, err = _remote_record(site, token, first, tmp_path / token[:6], monkeypatch,
                                          capsys)  # fmt: skip
        assert status == remote.EXIT_REFUSED and out == "" and waits in err, err
        assert hidden_leaks(out + err, record) == []
    audit = site.stub.AuditTournament(
        pb.AuditTournamentRequest(name="paired-cup"), metadata=_auth(site.user)
    )
    assert not audit.ok and "cannot be audited yet" in audit.problem
    assert hidden_leaks(str(audit), record) == []

    as_admin = _record_call(site, site.admin, first)  # the admin's view is unchanged
    assert json.loads(as_admin.record_json) == record

    second = _store(site.store, site.paired_match, 1)  # the deal is played out: public
    texts = _public_texts(site, first)
    assert json.loads(texts[f"/api/games/{first}/record"][1]) == record
    assert json.loads(texts[f"/api/games/{first}"][1])["record"] == record
    for path in (f"/api/games/{first}/record", f"/api/games/{first}",
                 *(f"/api/games/{first}/frames?perspective={n}" for n in ("all", "0", "1"))):
        assert texts[path][0] == 200 and hidden_leaks(texts[path][1], record), path  # control
    assert "withheld" not in texts[f"/games/{first}"][1]
    for token in (site.user, site.owner, site.admin):
        assert json.loads(_record_call(site, token, first).record_json) == record
        status, out, _ = _remote_record(site, token, first, tmp_path / f"after-{token[:6]}",
                                        monkeypatch, capsys)  # fmt: skip
        assert status == 0 and json.loads(out) == record and hidden_leaks(out, record)
    assert json.loads(_record_call(site, site.user, second).record_json)["match"]["deal_index"] == 0


@pytest.mark.slow
def test_an_unpaired_game_is_public_at_once(site: Site) -> None:
    game = _store(site.store, site.fresh_match, 0, paired=False)
    record = game_record(site.store, game)
    status, text = _get(f"{site.web}/api/games/{game}/record")
    assert status == 200 and json.loads(text) == record
    assert json.loads(_record_call(site, site.user, game).record_json) == record
    status, text = _get(f"{site.web}/api/games/{game}")
    assert json.loads(text)["withheld"] is None


@pytest.mark.slow
def test_a_game_of_a_finished_tournament_is_public(site: Site) -> None:
    """The tournament can no longer play the deal's other game: nothing to withhold."""
    tournament, match = _tournament(site.store, "cut-cup", games=4)
    game = _store(site.store, match, 2)
    assert _get(f"{site.web}/api/games/{game}/record")[0] == 403
    set_status(site.store, tournament, TournamentStatus.FINISHED)  # e.g. stopped early
    status, text = _get(f"{site.web}/api/games/{game}/record")
    assert status == 200 and json.loads(text) == game_record(site.store, game)
