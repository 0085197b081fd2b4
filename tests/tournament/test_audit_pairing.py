"""Which matches pair their deals is committed at creation (``fresh_deals``): the runner
plays each match by that rule whatever it is told at play time, the bundle shows it per
match, and the audit replays each match's deals under it, failing a forged bundle that
pairs (or unpairs) one match, naming it. A tournament that committed no rule (older ones)
passes saying what it could not check."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.kahuna.records import play_random_game, record_to_json
from arena.referee.seeds import MatchIdentity, deal_seed, match_seed_material, seed_commitment
from arena.sandbox import SandboxLimits
from arena.store.remote import register_remote_bot
from arena.store.tournaments import committed_parameters
from arena.testing.demo_data import add_demo_bots, report_for
from arena.tournament.orchestration.runner import match_jobs
from arena.tournament.policy.audit import audit_bundle
from arena.tournament.policy.audit_bundle import tournament_bundle
from arena.tournament.policy.results import rate, store_game
from arena.tournament.policy.rounds import create_tournament

LOCAL = ("alpha", "beta")
REMOTE = "faraway"


def _store_with_a_remote_bot(tmp_path: Path) -> st.Store:
    store = st.Store.open(tmp_path / "data")
    add_demo_bots(store, tmp_path / "bots", LOCAL)
    register_remote_bot(store, REMOTE, owner="rita")
    return store


def _jobs_paired(store: st.Store, match: st.MatchRow, *, paired_remote: bool) -> bool:
    """Whether the runner (told ``paired_remote`` at play time) pairs ``match``'s deals."""
    config = st.get_tournament(store, match.tournament_id).config
    jobs = match_jobs(store, match, config, limits=SandboxLimits(), unsafe=True, live=False,
                      paired_remote=paired_remote)  # fmt: skip
    assert len({job.config.paired for job in jobs}) == 1
    return jobs[0].config.paired


def _play(store: st.Store, tournament_id: int) -> None:
    """Every game on the deals the runner plays, each record saying so as the referee's do."""
    for match in st.list_matches(store, tournament_id):
        config = st.get_tournament(store, tournament_id).config
        [job, *_] = match_jobs(store, match, config, limits=SandboxLimits(), unsafe=True,
                               live=False, paired_remote=False)  # fmt: skip
        for index in range(match.games):
            seats = (match.first, match.second) if index % 2 == 0 else (match.second, match.first)
            deal = job.config.deal_index(index)
            record = play_random_game(deal_seed(job.config.secret, deal), choices=index)
            report = report_for(index, seats, record)
            report.record["match"] = {"paired": job.config.paired, "deal_index": deal}
            store_game(store, match.id, report)


def _finished(store: st.Store, *, paired_remote: bool = False) -> int:
    config = st.TournamentConfig(games_per_match=4)
    tournament = create_tournament(store, "mixed", "round_robin", [*LOCAL, REMOTE], config,
                                   paired_remote=paired_remote)  # fmt: skip
    st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
    _play(store, tournament.id)
    st.set_status(store, tournament.id, st.TournamentStatus.FINISHED)
    return tournament.id


@pytest.mark.parametrize(("paired_remote", "fresh"), [(False, [REMOTE]), (True, [])])
def test_creation_commits_whose_matches_deal_afresh_and_the_runner_keeps_to_it(
    tmp_path: Path, paired_remote: bool, fresh: list[str]
) -> None:
    """The rule is in the committed parameters; the runner's flag at play time changes no
    match of a tournament that committed one."""
    with _store_with_a_remote_bot(tmp_path) as store:
        config = st.TournamentConfig(games_per_match=4)
        tournament = create_tournament(store, "mixed", "round_robin", [*LOCAL, REMOTE], config,
                                       paired_remote=paired_remote)  # fmt: skip
        parameters = json.loads(st.tournament_parameters(store, tournament.id))
        assert parameters["config"]["fresh_deals"] == fresh
        for match in st.list_matches(store, tournament.id):
            expected = paired_remote or REMOTE not in (match.first, match.second)
            for flag in (False, True):
                assert _jobs_paired(store, match, paired_remote=flag) is expected, (match, flag)


def _matches_with(bundle: dict[str, Any], remote: bool) -> list[dict[str, Any]]:
    return [m for m in bundle["matches"] if (REMOTE in (m["first"][0], m["second"][0])) == remote]


def _repair(bundle: dict[str, Any], remote: bool, paired: bool, flag: bool | None) -> int:
    """Replay the games of one match (with the remote bot or not) on the deals that pairing
    ``paired`` gives, its records' flag set to ``flag`` (None: left out) with the deal index
    that flag gives, each game's result
    and rating made to match its new record: only the pairing is forged. The match's id."""
    match = _matches_with(bundle, remote)[0]
    secret = bytes.fromhex(bundle["secret"])
    identity = MatchIdentity(int(match["round"]), tuple(match["first"]), tuple(match["second"]))
    material = match_seed_material(secret, identity)
    for game in match["played"]:
        index = int(game["game_index"])
        deal = index // 2 if paired else index
        record = play_random_game(deal_seed(material, deal), choices=index)
        assert record.result is not None
        data = record_to_json(record)
        if flag is not None:
            data["match"] = {"paired": flag, "deal_index": index // 2 if flag else index}
        game["record"] = json.dumps(data)
        game["winner_seat"] = record.result.winner
        game["reason"] = str(record.result.termination)
    _rerate(bundle)
    return int(match["match_id"])


def _rerate(bundle: dict[str, Any]) -> None:
    games = sorted((g for m in bundle["matches"] for g in m["played"]),
                   key=lambda g: g["game_id"])  # fmt: skip
    now: dict[tuple[str, str], tuple[float, float]] = {}
    for game in games:
        versions = [tuple(seat) for seat in game["seats"]]
        before = [now.get(v, tuple(bundle["initial_rating"])) for v in versions]
        after = rate(before[0], before[1], game["winner_seat"])
        game["rating"]["before"] = [list(b) for b in before]
        game["rating"]["after"] = [list(a) for a in after]
        for v, a in zip(versions, after, strict=True):
            now[v] = a


Forgery = Callable[[dict[str, Any]], int]
FORGERIES: list[tuple[str, Forgery, str]] = [
    ("remote-match-paired", lambda b: _repair(b, remote=True, paired=True, flag=True),
     "the committed parameters deal it afresh every game (fresh_deals), but the record of"),
    ("remote-match-paired-flag-left-out", lambda b: _repair(b, remote=True, paired=True,
                                                            flag=None),
     "the committed parameters deal it afresh every game (fresh_deals), but the record of"),
    ("remote-match-paired-claiming-fresh", lambda b: _repair(b, remote=True, paired=True,
                                                             flag=False),
     "the deal differs from the one the revealed seed derives for deal index 1 (the"
     " committed parameters deal it afresh every game (fresh_deals))"),
    ("local-match-unpaired", lambda b: _repair(b, remote=False, paired=False, flag=False),
     "the committed parameters pair its deals, but the record of"),
    ("local-match-unpaired-claiming-paired", lambda b: _repair(b, remote=False, paired=False,
                                                               flag=True),
     "the deal differs from the one the revealed seed derives for deal index 0 (the"
     " committed parameters pair its deals)"),
    ("bundle-says-paired", lambda b: _shown(b, remote=True, paired=True),
     "the bundle says paired true, but the committed parameters deal it afresh"),
    ("bundle-says-null", lambda b: _shown(b, remote=False, paired=None),
     "the bundle says paired null, but the committed parameters pair its deals"),
]


def _shown(bundle: dict[str, Any], remote: bool, paired: bool | None) -> int:
    match = _matches_with(bundle, remote)[0]
    match["paired"] = paired
    return int(match["match_id"])


@pytest.mark.parametrize(("forge", "named"), [f[1:] for f in FORGERIES],
                         ids=[f[0] for f in FORGERIES])  # fmt: skip
def test_a_bundle_that_pairs_a_match_against_the_committed_rule_fails_naming_it(
    tmp_path: Path, forge: Forgery, named: str
) -> None:
    with _store_with_a_remote_bot(tmp_path) as store:
        _finished(store)
        bundle = tournament_bundle(store, "mixed")
    report = audit_bundle(bundle)
    assert report.ok, report.problem
    assert "1 of the 3 matches paired, 2 fresh" in report.text()
    assert [m["paired"] for m in _matches_with(bundle, True)] == [False, False]
    assert [m["paired"] for m in _matches_with(bundle, False)] == [True]
    match_id = forge(bundle)
    report = audit_bundle(bundle)
    assert not report.ok
    assert f"match {match_id}" in (report.problem or ""), report.problem
    assert named in (report.problem or ""), report.problem


def test_a_tournament_created_with_paired_remote_passes_with_every_match_paired(
    tmp_path: Path,
) -> None:
    with _store_with_a_remote_bot(tmp_path) as store:
        _finished(store, paired_remote=True)
        bundle = tournament_bundle(store, "mixed")
    report = audit_bundle(bundle)
    assert report.ok, report.problem
    assert "3 of the 3 matches paired, 0 fresh" in report.text()


def _uncommitted(store: st.Store, tournament_id: int) -> None:
    """The tournament as one created before the rule was committed: no fresh_deals in its
    parameters, its commitment over those."""
    with store.transaction() as db:
        row = db.execute("SELECT config, secret FROM tournaments WHERE id = ?",
                         (tournament_id,)).fetchone()  # fmt: skip
        config = json.loads(row[0])
        del config["fresh_deals"]
        db.execute("UPDATE tournaments SET config = ? WHERE id = ?",
                   (json.dumps(config), tournament_id))  # fmt: skip
        commitment = seed_commitment(row[1], committed_parameters(db, tournament_id))
        db.execute("UPDATE tournaments SET commitment = ? WHERE id = ?",
                   (commitment, tournament_id))  # fmt: skip


@pytest.mark.parametrize("format", ["kahuna-arena/audit/3", "kahuna-arena/audit/2"])
def test_a_tournament_that_committed_no_rule_passes_saying_its_pairing_is_unchecked(
    tmp_path: Path, format: str
) -> None:
    """Older tournaments (and bundles of format 1 and 2, which show no match's pairing)
    are read; the verdict says the pairing could not be held to anything committed, and a
    match's records must still agree among themselves."""
    with _store_with_a_remote_bot(tmp_path) as store:
        tournament_id = _finished(store)
        _uncommitted(store, tournament_id)
        bundle = tournament_bundle(store, "mixed")
    assert [m["paired"] for m in bundle["matches"]] == [None, None, None]
    if format != "kahuna-arena/audit/3":
        for match in bundle["matches"]:
            del match["paired"]
    bundle["format"] = format
    report = audit_bundle(bundle)
    assert report.ok, report.problem
    assert "not checked: which matches pair their deals" in report.text()
    _repair(bundle, remote=True, paired=True, flag=True)  # unprovable either way
    assert audit_bundle(bundle).ok
    first = _matches_with(bundle, True)[0]["played"][0]
    meta = json.loads(first["record"])
    meta["match"]["paired"] = False  # one record of the match says otherwise
    first["record"] = json.dumps(meta)
    report = audit_bundle(bundle)
    assert not report.ok and "some records say its deals are paired, others not" in (
        report.problem or ""), report.problem


def test_committed_fresh_deals_must_name_entrants(tmp_path: Path) -> None:
    with _store_with_a_remote_bot(tmp_path) as store:
        tournament_id = _finished(store)
        with store.transaction() as db:
            row = db.execute("SELECT config, secret FROM tournaments WHERE id = ?",
                             (tournament_id,)).fetchone()  # fmt: skip
            config = json.loads(row[0])
            config["fresh_deals"] = [REMOTE, "nobody"]
            db.execute("UPDATE tournaments SET config = ?, commitment = ? WHERE id = ?",
                       (json.dumps(config), "0", tournament_id))  # fmt: skip
            commitment = seed_commitment(row[1], committed_parameters(db, tournament_id))
            db.execute("UPDATE tournaments SET commitment = ? WHERE id = ?",
                       (commitment, tournament_id))  # fmt: skip
        bundle = tournament_bundle(store, "mixed")
    report = audit_bundle(bundle)
    assert not report.ok
    assert "the committed fresh_deals name 'nobody', not an entrant" in (report.problem or "")
