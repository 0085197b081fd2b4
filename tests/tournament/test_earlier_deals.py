"""Tournaments an earlier arena dealt (each match from its stored seed) after an upgrade:
their audit passes and says which matches were so dealt, and a half-played match of
theirs resumes on its own deals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena import store as st
from arena.kahuna.records import play_random_game
from arena.referee.seeds import deal_seed, earlier_deal_seed, match_seed_material, seed_commitment
from arena.sandbox import SandboxLimits
from arena.store.tournaments import committed_parameters
from arena.testing.demo_data import add_demo_bots, report_for
from arena.tournament.orchestration.runner import match_jobs
from arena.tournament.policy.audit import audit_bundle, audit_tournament
from arena.tournament.policy.audit_bundle import tournament_bundle
from arena.tournament.policy.config import match_identity
from arena.tournament.policy.results import store_game
from arena.tournament.policy.rounds import create_tournament

BOTS = ("alpha", "beta", "gamma")
EARLIER_NOTE = "dealt by the arena's earlier derivation"


def _tournament(store: st.Store, tmp_path: Path, *, earlier: bool) -> int:
    """A round robin of BOTS, 4 games a match; ``earlier``: stored as an arena before the
    current derivation left it (no ``fresh_deals`` in its config, committed so)."""
    add_demo_bots(store, tmp_path / "bots", BOTS)
    config = st.TournamentConfig(games_per_match=4, seed=3)
    tournament = create_tournament(store, "t", "round_robin", list(BOTS), config)
    if earlier:
        secret = st.tournament_secret(store, tournament.id)
        with store.transaction() as db:
            (text,) = db.execute("SELECT config FROM tournaments WHERE id = ?",
                                 (tournament.id,)).fetchone()  # fmt: skip
            stored = json.loads(text)
            del stored["fresh_deals"]
            db.execute("UPDATE tournaments SET config = ? WHERE id = ?",
                       (json.dumps(stored), tournament.id))  # fmt: skip
            commitment = seed_commitment(secret, committed_parameters(db, tournament.id))
            db.execute("UPDATE tournaments SET commitment = ? WHERE id = ?",
                       (commitment, tournament.id))  # fmt: skip
    st.set_status(store, tournament.id, st.TournamentStatus.RUNNING)
    return tournament.id


def _seed(store: st.Store, match: st.MatchRow, deal: int, earlier: bool) -> int:
    secret = st.tournament_secret(store, match.tournament_id)
    if earlier:
        return earlier_deal_seed(secret, match.seed, deal)
    return deal_seed(match_seed_material(secret, match_identity(match)), deal)


def _play(store: st.Store, tournament_id: int, earlier: bool, only: int | None = None) -> None:
    """Every game (or game ``only`` of the first match), dealt by the earlier derivation or
    the current one."""
    for match in st.list_matches(store, tournament_id):
        for index in range(match.games) if only is None else (only,):
            seats = (match.first, match.second) if index % 2 == 0 else (match.second, match.first)
            record = play_random_game(_seed(store, match, index // 2, earlier),
                                      choices=match.id * 100 + index)  # fmt: skip
            store_game(store, match.id, report_for(index, seats, record))
        if only is not None:
            return


@pytest.mark.parametrize("earlier", [True, False])
def test_a_finished_tournament_passes_its_audit_whichever_derivation_dealt_it(
    tmp_path: Path, earlier: bool
) -> None:
    with st.Store.open(tmp_path / "data") as store:
        tournament_id = _tournament(store, tmp_path, earlier=earlier)
        _play(store, tournament_id, earlier)
        st.set_status(store, tournament_id, st.TournamentStatus.FINISHED)
        report = audit_tournament(store, "t")
        bundle = tournament_bundle(store, "t")
    assert report.ok, report.problem
    assert report.games == 12
    dealt = "; ".join(report.checked)
    assert (f"3 of the 3 matches were {EARLIER_NOTE}" in dealt) is earlier
    assert all(("earlier_seed" in m) is earlier for m in bundle["matches"])


def test_a_bundle_naming_the_earlier_derivation_for_a_tournament_of_the_current_one_fails(
    tmp_path: Path,
) -> None:
    with st.Store.open(tmp_path / "data") as store:
        tournament_id = _tournament(store, tmp_path, earlier=False)
        _play(store, tournament_id, earlier=False)
        st.set_status(store, tournament_id, st.TournamentStatus.FINISHED)
        bundle = tournament_bundle(store, "t")
    bundle["matches"][0]["earlier_seed"] = 7
    report = audit_bundle(bundle)
    assert not report.ok
    assert "committed who deals afresh" in str(report.problem)


def test_an_earlier_arenas_match_without_its_earlier_seed_fails_on_its_deal(
    tmp_path: Path,
) -> None:
    with st.Store.open(tmp_path / "data") as store:
        tournament_id = _tournament(store, tmp_path, earlier=True)
        _play(store, tournament_id, earlier=True)
        st.set_status(store, tournament_id, st.TournamentStatus.FINISHED)
        bundle = tournament_bundle(store, "t")
    del bundle["matches"][0]["earlier_seed"]
    report = audit_bundle(bundle)
    assert not report.ok
    assert "the deal differs" in str(report.problem)


@pytest.mark.parametrize("earlier", [True, False])
def test_a_half_played_match_resumes_on_the_deals_its_first_game_was_dealt_by(
    tmp_path: Path, earlier: bool
) -> None:
    with st.Store.open(tmp_path / "data") as store:
        tournament_id = _tournament(store, tmp_path, earlier=earlier)
        _play(store, tournament_id, earlier, only=0)
        first, *rest = st.list_matches(store, tournament_id)
        config = st.get_tournament(store, tournament_id).config
        jobs = match_jobs(store, first, config, limits=SandboxLimits(), unsafe=True, live=False,
                          paired_remote=False)  # fmt: skip
        untouched = match_jobs(store, rest[0], config, limits=SandboxLimits(), unsafe=True,
                               live=False, paired_remote=False)  # fmt: skip
        wanted = {deal: _seed(store, first, deal, earlier) for deal in (0, 1)}
    for job in jobs:  # game 1 shares game 0's deal; games 2 and 3 play deal 1
        for index in job.config.indices_to_play:
            deal = job.config.deal_index(index)
            if job.config.deal_seeds is not None:
                seed = dict(job.config.deal_seeds)[deal]
            else:
                assert job.config.secret is not None
                seed = deal_seed(job.config.secret, deal)
            assert seed == wanted[deal], (index, deal)
    assert all(job.config.deal_seeds is None for job in untouched)  # a new match: current
