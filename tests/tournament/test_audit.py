"""`arena audit`: a stored tournament passes; altering anything random or stored (its secret,
parameters, entrants, schedule, a record, a result, a rating) makes it fail naming what
differs; the stored match seed decides nothing; the secret stays secret until the end."""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.kahuna import LINES, Record, deal_from_seed, outcome_to_json, parse_record, replay
from arena.kahuna.records import play_random_game
from arena.referee.botdir import load_bot
from arena.referee.seeds import deal_seed, seed_commitment
from arena.sandbox import SandboxLimits
from arena.testing.demo_data import (
    add_demo_bots,
    forfeit_report,
    play_committed_games,
    report_for,
    write_bot_dir,
)
from arena.tournament.orchestration.runner import match_jobs
from arena.tournament.policy.audit import (
    AuditReport,
    against_noted,
    audit_bundle,
    audit_tournament,
)
from arena.tournament.policy.audit_bundle import tournament_bundle
from arena.tournament.policy.config import build_sprt
from arena.tournament.policy.results import rate, store_game
from arena.tournament.policy.rounds import create_tournament, next_rounds

BOTS = ("alpha", "beta", "gamma")


def _game(seed: int, choices: int) -> Record:
    """A random game on the deal and reshuffles of ``seed``, actions chosen by ``choices``."""
    return play_random_game(seed, choices=choices)


def _material(store: st.Store, match: st.MatchRow) -> bytes:
    """The seed material the runner gives the processes that play ``match``."""
    config = st.get_tournament(store, match.tournament_id).config
    jobs = match_jobs(store, match, config, limits=SandboxLimits(), unsafe=True, live=False,
                      paired_remote=False)  # fmt: skip
    assert len({job.config.secret for job in jobs}) == 1
    return jobs[0].config.secret


def _deals(store: st.Store, match: st.MatchRow) -> list[tuple[str, ...]]:
    material = _material(store, match)
    return [deal_from_seed(deal_seed(material, k)) for k in range(match.games // 2)]


def _play(store: st.Store, tournament_id: int) -> None:
    """Every game of the tournament, on the deals the runner would play."""
    for match in st.list_matches(store, tournament_id):
        material = _material(store, match)
        for index in range(match.games):
            seats = (match.first, match.second) if index % 2 == 0 else (match.second, match.first)
            record = _game(deal_seed(material, index // 2), match.id * 100 + index)
            store_game(store, match.id, report_for(index, seats, record))


@pytest.fixture(scope="module")
def _finished_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The finished tournament, played once for the module: ``finished`` hands each test
    its own copy, which the test may alter."""
    root = tmp_path_factory.mktemp("finished")
    data = root / "data"
    with st.Store.open(data) as store:
        add_demo_bots(store, root / "bots", BOTS)
        config = st.TournamentConfig(games_per_match=4, seed=3)
        tournament = create_tournament(store, "audited", "round_robin", list(BOTS), config)
        assert tournament.commitment is not None
        assert st.revealed_secret(store, tournament.id) is None  # created: secret
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        _play(store, tournament.id)
        assert st.revealed_secret(store, tournament.id) is None  # running: still secret
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        return data, tournament.id


@pytest.fixture
def finished(_finished_once: tuple[Path, int], tmp_path: Path) -> tuple[Path, int]:
    """A copy of the finished tournament's data directory, this test's own to alter."""
    played, tournament_id = _finished_once
    data = tmp_path / "data"
    shutil.copytree(played, data)
    return data, tournament_id


def test_a_finished_tournament_passes_and_its_commitment_is_the_revealed_seeds(
    finished: tuple[Path, int],
) -> None:
    data, tournament_id = finished
    with st.Store.open(data) as store:
        report = audit_tournament(store, "audited")
        secret = st.revealed_secret(store, tournament_id)
        assert secret is not None
        parameters = json.loads(st.tournament_parameters(store, tournament_id))
    assert report.ok, report.problem
    assert report.games == 12
    assert report.revealed_secret == secret.hex()
    assert report.commitment == seed_commitment(secret, st.tournament_parameters(
        st.Store.open(data), tournament_id))  # fmt: skip
    assert parameters["entrants"][0][0] == "alpha" and parameters["config"]["seed"] == 3
    assert "pass" in report.text()


def test_games_between_two_bots_of_one_owner_pass_unrated_and_a_rated_one_fails(
    tmp_path: Path,
) -> None:
    """A tournament may seat two bots of one user; their games move no rating (the store's
    rule, docs/guide/fair-play.md): the bundle names each match's owners, so the audit
    passes them unrated, and fails one whose ratings moved."""
    data = tmp_path / "data"
    with st.Store.open(data) as store:
        add_demo_bots(store, tmp_path / "bots", ["alpha"])
        for name in ("beta", "gamma"):
            bot = load_bot(write_bot_dir(tmp_path / "bots", name))
            st.add_bot_version(store, bot, owner="mallory")
        config = st.TournamentConfig(games_per_match=4, seed=3)
        tournament = create_tournament(store, "owned", "round_robin", list(BOTS), config)
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        _play(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        owners = [m["owners"] for m in tournament_bundle(store, tournament.id)["matches"]]
        report = audit_tournament(store, "owned")
    assert sorted(tuple(sorted(map(str, pair))) for pair in owners) == [
        ("None", "mallory"), ("None", "mallory"), ("mallory", "mallory")
    ]  # fmt: skip
    assert report.ok, report.problem
    assert ("4 games between two bots of one owner move no rating, as the store's rule says:"
            " gamma and beta (mallory)") in report.text()  # fmt: skip
    db = sqlite3.connect(data / "arena.db")
    db.execute(
        "UPDATE rating_history SET mu = mu + 0.5 WHERE id = (SELECT MAX(r.id) FROM"
        " rating_history r JOIN games g ON g.id = r.game_id JOIN matches m ON m.id = g.match_id"
        " JOIN bot_versions vf ON vf.id = m.first_id JOIN bots bf ON bf.id = vf.bot_id"
        " JOIN bot_versions vs ON vs.id = m.second_id JOIN bots bs ON bs.id = vs.bot_id"
        " WHERE bf.owner = 'mallory' AND bs.owner = 'mallory')"
    )
    db.commit()
    db.close()
    with st.Store.open(data) as store:
        altered = audit_tournament(store, "owned")
    assert not altered.ok
    assert "its rating before (two bots of one owner" in (altered.problem or ""), altered.problem


def test_an_unfinished_tournament_cannot_be_audited(tmp_path: Path) -> None:
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", BOTS[:2])
        early = create_tournament(store, "early", "round_robin", list(BOTS[:2]),
                                  st.TournamentConfig(games_per_match=2))  # fmt: skip
        st.set_status(store, early.id, st.TournamentStatus.RUNNING)
        match = st.list_matches(store, early.id)[0]
        store_game(store, match.id, report_for(0, (match.first, match.second), _game(1, 1)))
        bundle = tournament_bundle(store, "early")
        report = audit_tournament(store, "early")
    # half a deal is played: its record (its deal) must not reach anyone before the end
    assert bundle["matches"] == [] and bundle["secret"] is None
    assert bundle["commitment"] == early.commitment and bundle["parameters"]
    assert not report.ok and report.revealed_secret is None
    assert "revealed only once it is finished" in (report.problem or "")


def _first_game(db: sqlite3.Connection) -> tuple[int, dict[str, object]]:
    game_id, record = db.execute("SELECT id, record FROM games ORDER BY id LIMIT 1").fetchone()
    return game_id, json.loads(record)


def _alter_secret(db: sqlite3.Connection) -> None:
    db.execute("UPDATE tournaments SET secret = randomblob(32)")


def _alter_config(db: sqlite3.Connection) -> None:
    db.execute("UPDATE tournaments SET config = json_set(config, '$.seed', 4)")


def _alter_deal(db: sqlite3.Connection) -> None:
    game_id, record = _first_game(db)
    deal = list(record["deal"])  # type: ignore[call-overload]
    first = next(i for i, card in enumerate(deal) if card != deal[0])
    deal[0], deal[first] = deal[first], deal[0]
    record["deal"] = deal
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _alter_reshuffle(db: sqlite3.Connection) -> None:
    game_id, record = _first_game(db)
    reshuffles = record["reshuffles"]
    assert isinstance(reshuffles, list) and reshuffles and len(set(reshuffles[0])) > 1
    first = reshuffles[0]
    j = next(i for i, card in enumerate(first) if card != first[0])
    first[0], first[j] = first[j], first[0]
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _alter_action(db: sqlite3.Connection) -> None:
    game_id, record = _first_game(db)
    actions = record["actions"]
    assert isinstance(actions, list)
    record["actions"] = actions[:3] + actions[4:]
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _alter_entrants(db: sqlite3.Connection) -> None:
    db.execute("UPDATE entrants SET seed_rank = 2 - seed_rank")


def _alter_schedule(db: sqlite3.Connection) -> None:
    """Swap who takes seat 0 in a match (and in its games) after play."""
    db.execute("UPDATE matches SET first_id = second_id, second_id = first_id WHERE id ="
               " (SELECT MIN(id) FROM matches)")  # fmt: skip
    db.execute("UPDATE games SET seat0_id = seat1_id, seat1_id = seat0_id WHERE match_id ="
               " (SELECT MIN(id) FROM matches)")  # fmt: skip


def _alter_rounds(db: sqlite3.Connection) -> None:
    db.execute("UPDATE matches SET round = 4 - round")


def _alter_seats(db: sqlite3.Connection) -> None:
    db.execute("UPDATE games SET seat0_id = seat1_id, seat1_id = seat0_id WHERE id ="
               " (SELECT MIN(id) FROM games)")  # fmt: skip


def _alter_record_bots(db: sqlite3.Connection) -> None:
    game_id, record = _first_game(db)
    record["match"] = {"bots": [{"seat": 0, "name": "mallory", "version": "x"},
                                {"seat": 1, "name": "beta", "version": "y"}]}  # fmt: skip
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _alter_paired(db: sqlite3.Connection) -> None:
    """A record that claims a fresh deal (unpaired) beside its match's paired ones."""
    game_id, record = _first_game(db)
    record["match"] = {"paired": False, "deal_index": 0}
    db.execute("UPDATE games SET record = ? WHERE id = ?", (json.dumps(record), game_id))


def _delete_game(db: sqlite3.Connection) -> None:
    game_id = db.execute("SELECT MAX(id) FROM games").fetchone()[0]
    db.execute("DELETE FROM rating_history WHERE game_id = ?", (game_id,))
    db.execute("DELETE FROM tournament_games WHERE game_id = ?", (game_id,))
    db.execute("DELETE FROM games WHERE id = ?", (game_id,))


def _delete_rating(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM rating_history WHERE id = (SELECT MAX(id) FROM rating_history)")


def _alter_earlier_rating(db: sqlite3.Connection) -> None:
    """An update that is TrueSkill's of its own 'before', but that before is not what the
    version's previous game left."""
    db.execute("UPDATE rating_history SET mu = mu + 0.5 WHERE id = (SELECT MIN(id) FROM"
               " rating_history)")  # fmt: skip


def _alter_result(db: sqlite3.Connection) -> None:
    db.execute("UPDATE games SET winner_seat = 1 - winner_seat WHERE id ="
               " (SELECT MIN(id) FROM games WHERE winner_seat IS NOT NULL)")  # fmt: skip


def _alter_rating(db: sqlite3.Connection) -> None:
    db.execute("UPDATE rating_history SET mu = mu + 0.5 WHERE id = (SELECT MAX(id) FROM"
               " rating_history)")  # fmt: skip


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (_alter_secret, "published commitment"),
        (_alter_config, "published commitment"),
        (_alter_deal, "the deal differs"),
        (_alter_reshuffle, "reshuffle of round 2 differs"),
        (_alter_action, "does not replay"),
        (_alter_result, "the stored result is"),
        (_alter_rating, "stored rating after the game"),
        (_alter_entrants, "published commitment"),
        (_alter_schedule, "not the schedule of a round robin"),
        (_alter_rounds, "not the schedule of a round robin"),
        (_alter_seats, "its match puts"),
        (_alter_record_bots, "names other bots"),
        (_delete_game, "a finished match has 0..3"),
        (_alter_paired, "the committed parameters pair its deals, but the record of game"),
        (_delete_rating, "no stored rating update"),
        (_alter_earlier_rating, "stored rating after the game"),
    ],
)
def test_an_altered_store_fails_naming_what_differs(
    finished: tuple[Path, int], alter: Callable[[sqlite3.Connection], None], named: str
) -> None:
    data, _ = finished
    db = sqlite3.connect(data / "arena.db")
    alter(db)
    db.commit()
    db.close()
    with st.Store.open(data) as store:
        report = audit_tournament(store, "audited")
    assert not report.ok
    assert named in (report.problem or ""), report.problem


@pytest.mark.slow
def test_the_cli_passes_then_fails_with_exit_1(finished: tuple[Path, int]) -> None:
    import subprocess
    import sys

    data, _ = finished
    command = [sys.executable, "-m", "arena", "audit", "audited", "--data-dir", str(data)]
    ok = subprocess.run(command, capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "pass" in ok.stdout, ok.stderr
    db = sqlite3.connect(data / "arena.db")
    _alter_deal(db)
    db.commit()
    db.close()
    bad = subprocess.run(command, capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "FAIL" in bad.stderr and "the deal differs" in bad.stderr


def test_a_stored_match_seed_decides_no_deal(tmp_path: Path) -> None:
    """Rewriting a match's stored seed before play must not choose its deals: the runner
    keys them by the secret and who meets whom alone, and the audit passes (it reads no
    stored seed)."""
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", BOTS)
        tournament = create_tournament(store, "t", "round_robin", list(BOTS),
                                       st.TournamentConfig(games_per_match=4))  # fmt: skip
        match = st.list_matches(store, tournament.id)[0]
        honest = _deals(store, match)
        with store.transaction() as db:
            db.execute("UPDATE matches SET seed = seed + 12345 WHERE id = ?", (match.id,))
        (rewritten,) = [m for m in st.list_matches(store, tournament.id) if m.id == match.id]
        assert rewritten.seed != match.seed
        assert _deals(store, rewritten) == honest
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        _play(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        report = audit_tournament(store, "t")
    assert report.ok, report.problem


def test_games_played_on_another_secrets_deals_fail(tmp_path: Path) -> None:
    """An operator who plays the deals of a secret of his choice, keeping the committed one."""
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", BOTS)
        tournament = create_tournament(store, "t", "round_robin", list(BOTS),
                                       st.TournamentConfig(games_per_match=2))  # fmt: skip
        committed = st.tournament_secret(store, tournament.id)
        with store.transaction() as db:
            db.execute("UPDATE tournaments SET secret = randomblob(32)")
        _play(store, tournament.id)
        with store.transaction() as db:
            db.execute("UPDATE tournaments SET secret = ?", (committed,))
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        report = audit_tournament(store, "t")
    assert not report.ok and "the deal differs" in (report.problem or "")


def test_the_audit_reads_only_the_bundle(finished: tuple[Path, int]) -> None:
    """What `arena remote audit` checks: the bundle, through JSON, gives the same verdict,
    and one changed byte of a published record fails it."""
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = json.loads(json.dumps(tournament_bundle(store, "audited")))
    assert bundle["secret"] is not None
    assert "seed" not in json.dumps(bundle["matches"][0]["played"][0]["rating"])
    passed = audit_bundle(bundle)
    assert passed.ok, passed.problem
    assert "hash to the commitment" in passed.text()
    assert "schedule of a round robin of the 3 entrants" in passed.text()
    game = bundle["matches"][1]["played"][1]
    record = json.loads(game["record"])
    record["actions"] = record["actions"][:-1]
    game["record"] = json.dumps(record)
    failed = audit_bundle(bundle)
    assert not failed.ok and failed.problem is not None
    assert f"game {game['game_id']}" in failed.problem


def _relabelled(bundle: dict[str, Any]) -> None:
    bundle["tournament"] = "spring-open"  # another tournament's bundle, passed off as this


def _infinite_game_id(bundle: dict[str, Any]) -> None:
    bundle["matches"][0]["played"][0]["game_id"] = json.loads("1e400")


def _deep_parameters(bundle: dict[str, Any]) -> None:
    """Parameters nested past the JSON reader's depth, with the commitment to match."""
    bundle["parameters"] = "[" * 100_000 + "]" * 100_000
    secret = bytes.fromhex(bundle["secret"])
    bundle["commitment"] = seed_commitment(secret, bundle["parameters"].encode())


def _parameters_with_a_key_twice(bundle: dict[str, Any]) -> None:
    """Parameters committed with games_per_match twice: 4 to a checker that keeps the
    last, 1 to one that keeps the first."""
    bundle["parameters"] = bundle["parameters"].replace(
        '"games_per_match":4', '"games_per_match":1,"games_per_match":4')
    secret = bytes.fromhex(bundle["secret"])
    bundle["commitment"] = seed_commitment(secret, bundle["parameters"].encode())


def _record_with_a_key_twice(bundle: dict[str, Any]) -> None:
    """A record whose actions are given twice: none to a checker that keeps the first (a
    game cut short that no failure explains), every one to a checker that keeps the last."""
    game = bundle["matches"][0]["played"][0]
    game["record"] = '{"actions":[],' + game["record"].lstrip()[1:]


def _record_with_nan(bundle: dict[str, Any]) -> None:
    """A record with a NaN, which Python's reader takes and a strict JSON reader refuses."""
    game = bundle["matches"][0]["played"][0]
    game["record"] = game["record"].rstrip()[:-1] + ', "note": NaN}'


def _set_first_game(key: str, value: object) -> Callable[[dict[str, Any]], None]:
    def alter(bundle: dict[str, Any]) -> None:
        bundle["matches"][0]["played"][0][key] = value
    return alter


def _winner_as_true(bundle: dict[str, Any]) -> None:
    """Seat 1's wins given as true (1 to a checker whose true == 1, not to others)."""
    for match in bundle["matches"]:
        for game in match["played"]:
            if game["winner_seat"] == 1:
                game["winner_seat"] = True


def _round_as_text(bundle: dict[str, Any]) -> None:
    bundle["matches"][0]["round"] = str(bundle["matches"][0]["round"])


def _rating_as_text(bundle: dict[str, Any]) -> None:
    rating = bundle["matches"][0]["played"][0]["rating"]
    rating["before"][0][0] = str(rating["before"][0][0])


def _initial_rating_as_text(bundle: dict[str, Any]) -> None:
    bundle["initial_rating"] = [str(x) for x in bundle["initial_rating"]]


def _bye_round_as_text(bundle: dict[str, Any]) -> None:
    bundle["byes"] = [[str(number), bot] for number, bot in bundle["byes"]] or [["1", "alpha"]]


def _fails_naming(
    finished: tuple[Path, int], alter: Callable[[dict[str, Any]], None], named: str
) -> None:
    """The finished tournament's bundle, altered by ``alter``, fails its audit naming
    ``named``, and raises nothing."""
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = json.loads(json.dumps(tournament_bundle(store, "audited")))
    alter(bundle)
    report = audit_bundle(bundle)
    assert not report.ok and named in (report.problem or ""), report.problem


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (_set_first_game("game_index", 0.5), "game_index is 0.5, not an integer"),
        (_set_first_game("game_id", "1"), 'game_id is "1", not an integer'),
        (_winner_as_true, "winner_seat is true, not 0, 1 or null"),
        (_round_as_text, 'round is "1", not an integer'),
        (_rating_as_text, "a rating before the game is \"25.0\", not a finite number"),
        (_initial_rating_as_text, 'the initial rating ["25.0", "8.333333333333334"] is not two'),
        (_bye_round_as_text, "not [round, bot]: an integer and a name"),
    ],
    ids=["index-half", "id-text", "winner-true", "round-text", "rating-text", "initial-text",
         "bye-text"],
)  # fmt: skip
def test_a_number_of_another_kind_than_verify_gives_fails(
    finished: tuple[Path, int], alter: Callable[[dict[str, Any]], None], named: str
) -> None:
    """Python reads 0.5 as index 0 through int(), "1" as 1 and true as 1; a checker in
    another language reads each otherwise, so the audit takes the kinds VERIFY.md gives."""
    _fails_naming(finished, alter, named)


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (_relabelled, "labelled 'spring-open', but its commitment binds the parameters of"
                      " tournament 'audited'"),
        (_parameters_with_a_key_twice, "the committed parameters give key 'games_per_match'"
                                       " given twice"),
        (_infinite_game_id, "game_id is Infinity, not an integer"),
        (_deep_parameters, "malformed (nested too deeply)"),
        (_record_with_a_key_twice, "the stored record gives key 'actions' given twice"),
        (_record_with_nan, "the stored record is malformed: not JSON: NaN is not JSON"),
    ],
    ids=["relabelled", "key-twice", "infinite-game-id", "deep-parameters", "record-key-twice",
         "record-nan"],
)  # fmt: skip
def test_a_hostile_bundle_fails_naming_why_and_raises_nothing(
    finished: tuple[Path, int], alter: Callable[[dict[str, Any]], None], named: str
) -> None:
    _fails_naming(finished, alter, named)


class _Arena:
    """What `arena remote audit` talks to: an arena that sends ``bundle`` whatever is asked."""

    def __init__(self, bundle: dict[str, Any]) -> None:
        self.bundle = bundle

    def audit_bundle(self, request: object) -> Iterator[object]:
        from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb

        head = {k: v for k, v in self.bundle.items() if k != "matches"}
        yield pb.GetAuditBundleResponse(head_json=json.dumps(head))
        for match in self.bundle["matches"]:
            head = {k: v for k, v in match.items() if k != "played"}
            yield pb.GetAuditBundleResponse(match_json=json.dumps(head))
            for game in match["played"]:
                yield pb.GetAuditBundleResponse(game_json=json.dumps(game))


@pytest.mark.parametrize(("asked", "status"), [("audited", 0), ("spring-open", 9)])
def test_remote_audit_fails_the_bundle_of_another_tournament_than_the_one_asked(
    finished: tuple[Path, int], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], asked: str, status: int,
) -> None:  # fmt: skip
    """A whole, passing bundle of "audited", sent when "spring-open" was asked for."""
    from arena.cli import main
    from arena.commands import remote
    from arena.commands.remote_grpc import Endpoint

    data, _ = finished
    with st.Store.open(data) as store:
        bundle = json.loads(json.dumps(tournament_bundle(store, "audited")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(data.parent / "config"))
    monkeypatch.setattr(remote, "load_login", lambda directory: Endpoint("arena:1", "t"))
    monkeypatch.setattr(remote, "_calls", lambda endpoint: contextlib.nullcontext(_Arena(bundle)))
    assert main(["remote", "audit", asked]) == status
    if status:
        err = capsys.readouterr().err
        assert ("the arena sent the audit bundle of tournament 'audited', not of"
                " 'spring-open'") in err


def test_a_malformed_bundle_is_named_not_raised() -> None:
    report = audit_bundle({"format": "kahuna-arena/audit/1", "tournament": "x"})
    assert not report.ok and "malformed" in (report.problem or "")
    other = audit_bundle({"format": "something else"})
    assert not other.ok and "not an audit bundle" in (other.problem or "")


def test_a_seeded_tournament_deals_the_same_in_any_data_directory(tmp_path: Path) -> None:
    """`--seed`: the same deals whatever else the data directory holds (other bots first,
    so other version ids); without it, a fresh secret each time."""
    deals = []
    for number, seeded in ((0, True), (1, True), (2, False)):
        with st.Store.open(tmp_path / f"d{number}") as store:
            if number == 1:
                add_demo_bots(store, tmp_path / "other", ("zeta", "eta"))
            add_demo_bots(store, tmp_path / "bots", BOTS)
            config = st.TournamentConfig(games_per_match=4, seed=5)
            tournament = create_tournament(store, f"t{number}", "round_robin", list(BOTS),
                                           config, seeded=seeded)  # fmt: skip
            deals.append([_deals(store, m) for m in st.list_matches(store, tournament.id)])
    assert deals[0] == deals[1]
    assert deals[2] != deals[0]


def _play_to_the_end(store: st.Store, tournament_id: int) -> None:
    """As a runner would: play what is paired, pair what comes next, until nothing does."""
    while True:
        play_committed_games(store, tournament_id)
        planned = next_rounds(store, tournament_id, batch=3)
        if not planned:
            return
        st.add_rounds(store, tournament_id, planned)


FORMATS = [
    ("swiss", (*BOTS, "delta", "epsilon"), st.TournamentConfig(games_per_match=2, rounds=3)),
    ("gauntlet", BOTS, st.TournamentConfig(games_per_match=2)),
    ("sprt", BOTS[:2], st.TournamentConfig(games_per_match=2, sprt=build_sprt(
        preset="gain", max_pairs=7))),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "bots", "config"), FORMATS, ids=[f[0] for f in FORMATS])
def test_every_format_passes_and_a_changed_pairing_fails(
    tmp_path: Path, kind: str, bots: tuple[str, ...], config: st.TournamentConfig
) -> None:
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", bots)
        tournament = create_tournament(store, "f", kind, list(bots), config)
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        _play_to_the_end(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        passed = audit_tournament(store, "f")
        assert passed.ok, passed.problem
        with store.transaction() as db:  # the last match's round moves past the others
            db.execute("UPDATE matches SET round = round + 100 WHERE id ="
                       " (SELECT MAX(id) FROM matches)")  # fmt: skip
        failed = audit_tournament(store, "f")
    assert not failed.ok and failed.problem is not None


def test_a_swiss_round_paired_against_the_standings_fails(tmp_path: Path) -> None:
    """Pairing is no random choice, but an operator could still pick who meets whom: the
    audit pairs every Swiss round again from the results before it."""
    bots = (*BOTS, "delta", "epsilon", "zeta")
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", bots)
        config = st.TournamentConfig(games_per_match=2, rounds=3)
        tournament = create_tournament(store, "s", "swiss", list(bots), config)
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        _play_to_the_end(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        bundle = tournament_bundle(store, "s")
    assert audit_bundle(bundle).ok
    problems = []
    for i, j, swap in itertools.product(range(3), range(3), ("first", "second")):
        if i < j:  # swap an opponent between two of round 2's three matches
            changed = copy.deepcopy(bundle)
            second = sorted((m for m in changed["matches"] if m["round"] == 2),
                            key=lambda m: m["match_id"])  # fmt: skip
            second[i]["second"], second[j][swap] = second[j][swap], second[i]["second"]
            problems.append(audit_bundle(changed).problem or "")
    assert all(problems), problems
    # some are rematches; the others break no rule but the standings'
    assert any("round 2: the standings before it pair" in p for p in problems), problems


@pytest.mark.slow
def test_the_cli_checks_a_saved_bundle_without_a_data_directory(
    finished: tuple[Path, int], tmp_path: Path
) -> None:
    import subprocess
    import sys

    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    saved = tmp_path / "bundle.json"
    saved.write_text(json.dumps(bundle))
    command = [sys.executable, "-m", "arena", "audit", "--bundle", str(saved)]
    ok = subprocess.run(command, capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "pass" in ok.stdout, ok.stderr
    bundle["matches"][0]["played"][0]["winner_seat"] = None
    saved.write_text(json.dumps(bundle))
    bad = subprocess.run(command, capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "the stored result is a draw" in bad.stderr
    saved.write_text("[1]")
    refused = subprocess.run(command, capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and "not a JSON object" in refused.stderr
    saved.write_text("[" * 100_000)
    deep = subprocess.run(command, capture_output=True, text=True, check=False)
    assert (deep.returncode, deep.stderr) == (2, f"arena: --bundle {saved}: JSON nested"
                                                 " too deeply (at character 0)\n")  # fmt: skip
    both = subprocess.run([*command, "audited"], capture_output=True, text=True, check=False)
    assert both.returncode == 2 and "one of them" in both.stderr


def _games_by_id(bundle: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {g["game_id"]: g for m in bundle["matches"] for g in m["played"]}


def _rerate(bundle: dict[str, Any]) -> None:
    """Every rating update made again from the bundle's own ``before_from`` chain, as an
    operator who changed the chain would, so that only the chain itself is wrong."""
    afters: dict[tuple[int, str], list[float]] = {}
    for game_id, game in sorted(_games_by_id(bundle).items()):
        rating = game["rating"]
        for seat, source in enumerate(rating["before_from"]):
            bot = game["seats"][seat][0]
            if source is None:
                rating["before"][seat] = list(bundle["initial_rating"])
            elif (source, bot) in afters:
                rating["before"][seat] = afters[(source, bot)]
        after = rate(tuple(rating["before"][0]), tuple(rating["before"][1]), game["winner_seat"])
        rating["after"] = [list(after[0]), list(after[1])]
        for seat in (0, 1):
            afters[(game_id, game["seats"][seat][0])] = list(after[seat])


def _games_of(bundle: dict[str, Any], bot: str) -> list[tuple[int, int]]:
    """(game id, seat) of ``bot``'s games, in id order."""
    return [(i, [s[0] for s in g["seats"]].index(bot))
            for i, g in sorted(_games_by_id(bundle).items())
            if bot in [s[0] for s in g["seats"]]]  # fmt: skip


def _skip_a_game_in_the_chain(bundle: dict[str, Any]) -> None:
    """alpha's third game rated from its first: its second game's update left out."""
    (first, _), _, (third, seat) = _games_of(bundle, "alpha")[:3]
    _games_by_id(bundle)[third]["rating"]["before_from"][seat] = first
    _rerate(bundle)


def _chain_from_a_game_it_did_not_play(bundle: dict[str, Any]) -> None:
    """A game of this tournament passed off as alpha's game elsewhere, at a rating of 40."""
    alpha = {i for i, _ in _games_of(bundle, "alpha")}
    other = min(set(_games_by_id(bundle)) - alpha)
    later, seat = next((i, s) for i, s in _games_of(bundle, "alpha") if i > other)
    game = _games_by_id(bundle)[later]
    game["rating"]["before_from"][seat] = other
    game["rating"]["before"][seat] = [40.0, 1.0]
    _rerate(bundle)


def _start_again_from_the_initial_rating(bundle: dict[str, Any]) -> None:
    second, seat = _games_of(bundle, "alpha")[1]
    _games_by_id(bundle)[second]["rating"]["before_from"][seat] = None
    _rerate(bundle)


def _shift_the_initial_rating(bundle: dict[str, Any]) -> None:
    bundle["initial_rating"] = [30.0, bundle["initial_rating"][1]]
    _rerate(bundle)


def _first_record(bundle: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    game = bundle["matches"][0]["played"][0]
    return game, json.loads(game["record"])


def _timeout_in_a_finished_game(bundle: dict[str, Any]) -> None:
    bundle["matches"][0]["played"][0]["statuses"] = ["timeout", "ok"]


def _record_result_changed(bundle: dict[str, Any]) -> None:
    game, record = _first_record(bundle)
    # a result its actions do not reach: never the one the game really had
    record["result"]["points"] = [0, 9] if record["result"]["points"] == [9, 0] else [9, 0]
    game["record"] = json.dumps(record)


def _record_statuses_changed(bundle: dict[str, Any]) -> None:
    game, record = _first_record(bundle)
    record["match"] = {"statuses": {s[0]: "crash" for s in game["seats"]}}
    game["record"] = json.dumps(record)


def _record_winner_renamed(bundle: dict[str, Any]) -> None:
    game, record = _first_record(bundle)
    record["match"] = {"winner": "mallory"}
    game["record"] = json.dumps(record)


def _game_listed_twice(bundle: dict[str, Any]) -> None:
    """Match 2's first game given match 1's first game's id (its ratings then chain twice)."""
    bundle["matches"][1]["played"][0]["game_id"] = bundle["matches"][0]["played"][0]["game_id"]


def _match_listed_twice(bundle: dict[str, Any]) -> None:
    bundle["matches"].append(copy.deepcopy(bundle["matches"][0]))


def _another_tournaments_name(bundle: dict[str, Any]) -> None:
    bundle["tournament"] = "spring-open"


def _ratings_kept_as_if_at_play(bundle: dict[str, Any]) -> None:
    """Every update undone, as a person's game at /play leaves the bots' ratings."""
    bundle["bots_rated"] = False
    for game in _games_by_id(bundle).values():
        game["rating"]["after"] = game["rating"]["before"] = [
            list(bundle["initial_rating"]), list(bundle["initial_rating"])]
        game["rating"]["before_from"] = [None, None]


def _byes_moved(bundle: dict[str, Any]) -> None:
    bundle["byes"] = [[number, "alpha"] for number, _ in bundle["byes"]]


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (_skip_a_game_in_the_chain, "whose rating update it leaves out"),
        (_chain_from_a_game_it_did_not_play, "comes from game 1, which alpha "),
        (_start_again_from_the_initial_rating, "is the initial one, but alpha played game"),
        (_shift_the_initial_rating, "the initial rating [30.0, 8.33"),
        (_timeout_in_a_finished_game, "the stored statuses ['timeout', 'ok'] are not the record"),
        (_record_result_changed, "the record's own result"),
        (_record_statuses_changed, "the record's statuses"),
        (_record_winner_renamed, "the record names 'mallory' the winner"),
        (_game_listed_twice, "is in the bundle more than once"),
        (_match_listed_twice, "more than once"),
        (_another_tournaments_name, "the bundle is labelled 'spring-open'"),
        (_byes_moved, "the byes [round, bot]"),
        (_ratings_kept_as_if_at_play, "tournament 'audited' is no person's game at /play"),
    ],
)
def test_a_bundle_at_odds_with_its_own_games_fails_naming_what(
    finished: tuple[Path, int], alter: Callable[[dict[str, Any]], None], named: str
) -> None:
    """What a participant reads beside the deals (ratings, statuses, the records' own
    results and winners, the byes) must follow from the games, each game counted once."""
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = json.loads(json.dumps(tournament_bundle(store, "audited")))
    assert audit_bundle(bundle).ok
    alter(bundle)
    report = audit_bundle(bundle)
    assert not report.ok
    assert named in (report.problem or ""), report.problem


def test_a_forfeit_passes_and_its_statuses_must_blame_the_seat_the_record_does(
    tmp_path: Path,
) -> None:
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", BOTS[:2])
        tournament = create_tournament(store, "t", "round_robin", list(BOTS[:2]),
                                       st.TournamentConfig(games_per_match=2))  # fmt: skip
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        [match] = st.list_matches(store, tournament.id)
        material = _material(store, match)
        for index, seats in enumerate(((match.first, match.second), (match.second, match.first))):
            record = _game(deal_seed(material, 0), index)
            if index:
                report = forfeit_report(index, seats, record, len(record.actions) // 2)
                del report.record["match"]["bots"]  # type: ignore[attr-defined]  # no versions
            else:
                report = report_for(index, seats, record)
            store_game(store, match.id, report)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        bundle = tournament_bundle(store, "t")
    assert audit_bundle(bundle).ok, audit_bundle(bundle).problem
    game = bundle["matches"][0]["played"][1]
    game["statuses"] = game["statuses"][::-1]  # the page's timeout moved to the winner
    report = audit_bundle(bundle)
    assert not report.ok and "are not the record's failures" in (report.problem or "")


def test_an_sprt_test_that_stops_undecided_before_its_cap_fails(tmp_path: Path) -> None:
    """Dropping a test's last pairs (to hide where it was going) leaves a test that neither
    decided nor reached its cap: not one the runner stops."""
    with st.Store.open(tmp_path / "d") as store:
        add_demo_bots(store, tmp_path / "bots", BOTS[:2])
        config = st.TournamentConfig(games_per_match=2, sprt=build_sprt(preset="gain",
                                                                        max_pairs=5))
        tournament = create_tournament(store, "s", "sprt", list(BOTS[:2]), config)
        st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
        _play_to_the_end(store, tournament.id)
        st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
        bundle = tournament_bundle(store, "s")
    passed = audit_bundle(bundle)
    assert passed.ok and "it stops at its cap" in passed.text(), passed.problem
    bundle["matches"] = bundle["matches"][:-1]
    failed = audit_bundle(bundle)
    assert not failed.ok and "stops after 4 pairs, undecided" in (failed.problem or "")


def test_the_cli_checks_the_commitment_noted_at_creation(
    finished: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Offline too, `--commitment` holds the bundle (or data directory) to the commitment
    noted before the games, not to the one it carries itself."""
    from arena.cli import main

    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    saved = tmp_path / "bundle.json"
    saved.write_text(json.dumps(bundle))
    noted = bundle["commitment"]
    for where in (["--bundle", str(saved)], ["audited", "--data-dir", str(data)]):
        assert main(["audit", *where]) == 0
        assert "; not checked: that the commitment was published before play (give" \
            " --commitment HEX" in capsys.readouterr().out
        assert main(["audit", *where, "--commitment", noted.upper()]) == 0
        out = capsys.readouterr().out
        assert "pass" in out and "not checked: that the commitment" not in out
        assert main(["audit", *where, "--commitment", "0" * 64]) == 1
        err = capsys.readouterr().err
        assert f"the published commitment is {noted}, not the {'0' * 64} you noted" in err


def test_json_nested_too_deeply_is_named_not_raised(
    finished: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hostile bundle's JSON (the file, a record, the committed parameters) nested past
    Python's recursion limit is refused as malformed, never a traceback."""
    from arena.cli import main

    deep = "[" * 100_000 + "]" * 100_000
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    record = copy.deepcopy(bundle)
    record["matches"][0]["played"][0]["record"] = deep
    assert "the stored record is malformed: not JSON: nested too deeply" in str(
        audit_bundle(record).problem)  # fmt: skip
    parameters = copy.deepcopy(bundle)
    parameters["parameters"] = deep
    parameters["commitment"] = seed_commitment(bytes.fromhex(bundle["secret"]), deep.encode())
    assert "nested too deeply" in str(audit_bundle(parameters).problem)
    saved = tmp_path / "deep.json"
    saved.write_text(deep)
    assert main(["audit", "--bundle", str(saved)]) == 2
    assert "JSON nested too deeply" in capsys.readouterr().err



def test_a_rating_from_a_game_elsewhere_is_named_for_its_owner(
    finished: tuple[Path, int],
) -> None:
    """No bundle can show a game of another tournament or the ladder: the audit passes
    but names the version, the game and the rating it starts from."""
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    first, seat = _games_of(bundle, "alpha")[0]
    game = _games_by_id(bundle)[first]
    game["rating"]["before_from"][seat] = 0
    game["rating"]["before"][seat] = [40.0, 1.0]
    _rerate(bundle)
    report = audit_bundle(bundle)
    version = game["seats"][seat][1]
    assert report.ok, report.problem
    assert (f"1 version starts from a game outside this tournament, which this bundle cannot"
            f" show: alpha {version} (game 0: mu 40.000 sigma 1.000)") in report.text()


def _first_game_record(bundle: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    game = bundle["matches"][0]["played"][0]
    return game, json.loads(game["record"])


def _with_record(
    change: Callable[[dict[str, Any]], None],
) -> Callable[[dict[str, Any]], None]:
    """An alteration of the first game's record, its result, reason and every rating made
    again to follow from it (as an operator who wanted it to pass would)."""

    def alter(bundle: dict[str, Any]) -> None:
        game, record = _first_game_record(bundle)
        change(record)
        replayed = replay(parse_record(json.dumps({**record, "result": None})))
        assert replayed.error is None and replayed.state.outcome is not None
        outcome = replayed.state.outcome
        record["result"] = outcome_to_json(outcome)
        game["record"] = json.dumps(record)
        game["winner_seat"], game["reason"] = outcome.winner, str(outcome.termination)
        _rerate(bundle)

    return alter


def _handicap(record: dict[str, Any]) -> None:
    """A bridge for a seat before the first move, on a line where the game's actions
    still replay legally."""
    for seat, line in itertools.product((0, 1), LINES):
        record["handicap"] = [{"seat": seat, "line": line}]
        replayed = replay(parse_record(json.dumps({**record, "result": None})))
        if replayed.error is None and replayed.state.outcome is not None:
            return
    raise AssertionError("no handicap bridge leaves this game legal")


def _other_variant(record: dict[str, Any]) -> None:
    record["variant"] = {"strategic": False, "tactical": True}


def _match_meta(**meta: object) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["match"] = {**record.get("match", {}), **meta}

    return change


def _reason(reason: object) -> Callable[[dict[str, Any]], None]:
    def alter(bundle: dict[str, Any]) -> None:
        bundle["matches"][0]["played"][0]["reason"] = reason

    return alter


def _without_reasons(bundle: dict[str, Any]) -> None:
    for game in _games_by_id(bundle).values():
        del game["reason"]


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (_with_record(_handicap), "the record gives a handicap (seat "),
        (_with_record(_other_variant), "the record is of the variant strategic=False,"
                                       " tactical=True; the committed parameters say"
                                       " strategic=False, tactical=False"),
        (_with_record(_match_meta(time_control={"action_ms": 10, "bank_ms": 0})),
         'the record\'s time control {"action_ms": 10, "bank_ms": 0} is not the committed'),
        (_with_record(_match_meta(game_index=3)), "the record says it is game index 3"),
        (_with_record(_match_meta(reason="bridges")), "the record says it ended by 'bridges'"),
        (_reason("forfeit"), "the stored reason 'forfeit' is not why its record ends"),
        (_reason(None), "the stored reason None is not why its record ends"),
        (_without_reasons, "the stored reason None is not why its record ends"),
    ],
    ids=["handicap", "variant", "time-control", "game-index", "record-reason",
         "stored-reason", "no-reason", "no-reasons"],
)  # fmt: skip
def test_a_game_under_other_rules_or_reasons_fails_naming_the_game(
    finished: tuple[Path, int], alter: Callable[[dict[str, Any]], None], named: str
) -> None:
    """A record that replays legally but under other rules than the committed ones (a
    handicap, another variant, another clock), or whose reason for ending (stored or its
    own) is not how its actions end, fails even with its result and ratings made to match."""
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    assert bundle["format"] == "kahuna-arena/audit/3"
    alter(bundle)
    report = audit_bundle(bundle)
    first = bundle["matches"][0]["played"][0]["game_id"]
    assert not report.ok and f"game {first} " in (report.problem or ""), report.problem
    assert named in (report.problem or ""), report.problem


def test_a_bundle_of_format_1_is_read_and_says_its_reasons_are_unchecked(
    finished: tuple[Path, int],
) -> None:
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    assert audit_bundle(bundle).ok
    assert all(isinstance(g["reason"], str) for g in _games_by_id(bundle).values())
    _without_reasons(bundle)
    bundle["format"] = "kahuna-arena/audit/1"
    report = audit_bundle(bundle)
    assert report.ok, report.problem
    assert "(a bundle of format 1: games' reasons not in it)" in report.text()


@pytest.mark.parametrize(
    ("limit", "value", "named"),
    [
        ("MAX_BUNDLE_GAMES", 5, "the bundle holds more than 5 games, the most an audit reads"
                                " (MAX_BUNDLE_GAMES)"),
        ("MAX_BUNDLE_MATCHES", 2, "the bundle holds more than 2 matches, the most an audit"
                                  " reads (MAX_BUNDLE_MATCHES)"),
    ],
)  # fmt: skip
def test_a_bundle_over_a_count_limit_fails_naming_it(
    finished: tuple[Path, int], monkeypatch: pytest.MonkeyPatch, limit: str, value: int,
    named: str,
) -> None:  # fmt: skip
    from arena.tournament.policy import audit

    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    monkeypatch.setattr(audit, limit, value)
    report = audit_bundle(bundle)
    assert not report.ok and report.problem == named


def test_a_game_summary_over_its_limit_fails_naming_it(finished: tuple[Path, int]) -> None:
    """What the audit keeps of each game (all but its record) is bounded, so that a
    bundle's length, not its games' padding, decides the memory the audit takes."""
    data, _ = finished
    with st.Store.open(data) as store:
        bundle = tournament_bundle(store, "audited")
    game = bundle["matches"][0]["played"][0]
    game["statuses"] = ["ok"] * 2000
    problem = audit_bundle(bundle).problem or ""
    assert problem.startswith(f"game {game['game_id']} takes ")
    assert "bytes of JSON without its record, more than the 4096 an audit keeps" \
        " (MAX_SUMMARY_BYTES)" in problem


@pytest.mark.parametrize(
    ("published", "words"),
    [
        pytest.param("ab" * 32, f"the published commitment is {'ab' * 32}, not the", id="another"),
        pytest.param(None, "the arena published no seed commitment", id="none-published"),
    ],
)
def test_a_noted_commitment_the_arena_did_not_publish_fails_in_words(
    published: object, words: str
) -> None:
    report = AuditReport(tournament="ladder", ok=True, games=3, commitment=None,
                         revealed_secret=None, problem=None, checked=("x",))  # fmt: skip
    failed = against_noted(report, published, "cd" * 32)
    assert not failed.ok and failed.problem is not None
    assert words in failed.problem and "None" not in failed.problem
