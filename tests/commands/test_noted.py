"""The seed commitments this computer noted: `arena remote tournament list` and `show`
note each one first seen before the tournament finished and warn when the arena later
shows another; `arena remote audit` without --commitment holds the bundle to it, so a
tournament re-created under its name after a bad run fails the audit of a participant
who only listed it before play."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.cli import main
from arena.commands import noted, remote
from arena.commands.remote_grpc import Endpoint
from arena.protocol.gen.kahuna.v1 import arena_service_pb2 as pb
from arena.testing.demo_data import add_demo_bots, play_committed_games
from arena.tournament.policy.audit_bundle import tournament_bundle
from arena.tournament.policy.rounds import create_tournament

BOTS = ["alpha", "beta"]
ADDRESS = "arena.example:50051"


class _Arena:
    """What `arena remote` talks to: an arena listing ``listed`` and sending ``bundle``."""

    def __init__(self) -> None:
        self.listed: list[pb.Tournament] = []
        self.bundle: dict[str, Any] = {}

    def tournaments(self) -> pb.ListTournamentsResponse:
        return pb.ListTournamentsResponse(tournaments=self.listed)

    def audit_bundle(self, request: object) -> Iterator[pb.GetAuditBundleResponse]:
        head = {k: v for k, v in self.bundle.items() if k != "matches"}
        yield pb.GetAuditBundleResponse(head_json=json.dumps(head))
        for match in self.bundle["matches"]:
            yield pb.GetAuditBundleResponse(
                match_json=json.dumps({k: v for k, v in match.items() if k != "played"}))
            for game in match["played"]:
                yield pb.GetAuditBundleResponse(game_json=json.dumps(game))


@pytest.fixture
def arena(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _Arena:
    fake = _Arena()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(remote, "load_login", lambda directory: Endpoint(ADDRESS, "t"))
    monkeypatch.setattr(remote, "_calls", lambda endpoint: contextlib.nullcontext(fake))
    return fake


def _run(data: Path, bots: Path) -> tuple[pb.Tournament, dict[str, Any]]:
    """A tournament "cup" as listed at creation, and its bundle once played and finished."""
    with st.Store.open(data) as store:
        add_demo_bots(store, bots, BOTS)
        created = create_tournament(store, "cup", "round_robin", BOTS,
                                    st.TournamentConfig(games_per_match=2))  # fmt: skip
        assert created.commitment is not None
        listed = pb.Tournament(id=created.id, name="cup", status="created",
                               seed_commitment=created.commitment)  # fmt: skip
        st.set_status(store, created.id, st.TournamentStatus.RUNNING)
        play_committed_games(store, created.id)
        st.set_status(store, created.id, st.TournamentStatus.FINISHED)
        return listed, json.loads(json.dumps(tournament_bundle(store, "cup")))


def test_a_tournament_created_again_after_it_was_listed_fails_the_audit(
    arena: _Arena, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = _run(tmp_path / "first", tmp_path / "bots")
    again, bundle = _run(tmp_path / "again", tmp_path / "bots")  # a new secret, same name
    assert first.seed_commitment != again.seed_commitment
    arena.listed, arena.bundle = [first], bundle
    assert main(["remote", "tournament", "list"]) == 0
    assert capsys.readouterr().err == ""
    arena.listed = [again]
    assert main(["remote", "tournament", "show", "cup"]) == 0
    shown, warned = capsys.readouterr()
    assert re.search(r"\nnoted on this computer on \S+ \(the tournament created, 0 games"
                     rf" played\): {first.seed_commitment}\n", shown), shown  # fmt: skip
    assert f"tournament 'cup' now has seed commitment {again.seed_commitment}" in warned
    assert f"this computer noted {first.seed_commitment} on " in warned
    assert "(the tournament created, 0 games played)" in warned

    assert main(["remote", "audit", "cup"]) == remote.EXIT_AUDIT_FAILED
    err = capsys.readouterr().err
    assert (f"FAIL: the published commitment is {again.seed_commitment}, not the"
            f" {first.seed_commitment} this computer noted on ") in err
    assert "created again" in err
    # the participant who judges the second commitment the one to audit says so
    assert main(["remote", "audit", "cup", "--commitment", again.seed_commitment]) == 0


def test_the_audit_says_which_commitment_it_held_the_bundle_to(
    arena: _Arena, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed, arena.bundle = _run(tmp_path / "data", tmp_path / "bots")
    assert main(["remote", "audit", "cup"]) == 0
    out = capsys.readouterr().out
    assert "not checked: that the commitment was published before play" in out
    arena.listed = [listed]
    assert main(["remote", "tournament", "list", "--json"]) == 0
    capsys.readouterr()
    assert main(["remote", "audit", "cup"]) == 0
    out = capsys.readouterr().out
    assert "the commitment is the one this computer noted on " in out
    assert "(the tournament created, 0 games played), before the first game" in out
    assert "not checked" not in out


def test_the_first_commitment_is_kept_with_what_noting_it_then_shows(tmp_path: Path) -> None:
    seen = [noted.Seen("done", "a" * 64, "finished", 4), noted.Seen("open", "b" * 64, "running", 2),
            noted.Seen("new", "d" * 64, "created", 0)]  # fmt: skip
    assert noted.note(tmp_path, ADDRESS, seen) == []
    shows = {t.name: noted.noted_commitment(tmp_path, ADDRESS, t.name) for t in seen}
    assert [n.proves() if n else None for n in shows.values()] == [
        "; noted only once the tournament was finished, so not checked: that it was published"
        " before play",
        "; noted after 2 games, so the deals of those are not shown fixed before they were"
        " played",
        ", before the first game",
    ]
    kept = noted.noted_commitment(tmp_path, ADDRESS, "open")
    assert kept is not None and (kept.commitment, kept.games_played) == ("b" * 64, 2)
    assert noted.noted_commitment(tmp_path, "elsewhere:1", "open") is None
    warned = noted.note(tmp_path, ADDRESS, [noted.Seen("open", "c" * 64, "created", 0)])
    assert len(warned) == 1 and "c" * 64 in warned[0]
    assert noted.noted_commitment(tmp_path, ADDRESS, "open") == kept


def test_notes_that_cannot_be_read_are_named_and_left_as_they_are(
    arena: _Arena, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed, arena.bundle = _run(tmp_path / "data", tmp_path / "bots")
    notes = tmp_path / "config" / "kahuna-arena" / noted.NOTED_NAME
    notes.parent.mkdir(parents=True)
    notes.write_text("not json")
    arena.listed = [listed]
    assert main(["remote", "tournament", "list"]) == 0
    assert f"{notes}: not the commitments this computer noted" in capsys.readouterr().err
    assert notes.read_text() == "not json"
    assert main(["remote", "audit", "cup"]) == 0
    assert f"this computer noted none for this tournament ({notes}: not" in (
        capsys.readouterr().out)


def test_a_hostile_arenas_many_tournaments_stop_at_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(noted, "MAX_NOTED", 3)
    seen = [noted.Seen(f"t{i}", "a" * 64, "created", 0) for i in range(5)]
    seen[:0] = [noted.Seen("x" * (noted.MAX_NOTED_NAME + 1), "a" * 64, "created", 0),
                noted.Seen("long", "a" * 10**6, "created", 0),
                noted.Seen("words", "not hex " * 8, "created", 0)]  # fmt: skip
    assert noted.note(tmp_path, ADDRESS, [noted.Seen("status", "a" * 64, "s" * 10**6, 0)]) == []
    warned = noted.note(tmp_path, ADDRESS, seen)
    assert len(warned) == 1 and "at most 3 tournaments" in warned[0]
    assert [noted.noted_commitment(tmp_path, ADDRESS, f"t{i}") is not None
            for i in range(5)] == [True, True, False, False, False]  # fmt: skip
    assert (tmp_path / noted.NOTED_NAME).stat().st_size < 2000


def test_a_noted_tournament_the_arena_no_longer_lists_is_named(
    arena: _Arena, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-run under a new name, the tournament that went badly deleted from the store."""
    first, _ = _run(tmp_path / "data", tmp_path / "bots")
    arena.listed = [first]
    assert main(["remote", "tournament", "list"]) == 0
    arena.listed = [pb.Tournament(id=2, name="cup-final", status="created",
                                  seed_commitment="e" * 64)]  # fmt: skip
    assert main(["remote", "tournament", "show", "cup-final"]) == 0
    assert capsys.readouterr().err == ""  # one tournament shown says nothing of the others
    assert main(["remote", "tournament", "list"]) == 0
    assert (f"warning: tournament 'cup', whose seed commitment {first.seed_commitment} this"
            " computer noted on ") in capsys.readouterr().err


@pytest.mark.parametrize("given", [
    "0x" + "a" * 64, "a" * 63, "g" * 64, "sha256:" + "a" * 64, "a" * 32 + " " + "a" * 31,
])  # fmt: skip
@pytest.mark.parametrize("command", [["remote", "audit", "cup"], ["audit", "--bundle", "b.json"]])
def test_a_commitment_that_is_no_64_hex_digits_is_refused_at_the_argument(
    arena: _Arena, capsys: pytest.CaptureFixture[str], given: str, command: list[str]
) -> None:
    """A noted commitment cut short or given a prefix would fail the audit as if the arena
    had published another one."""
    with pytest.raises(SystemExit) as exited:
        main([*command, "--commitment", given])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"{json.dumps(given)} is not a seed commitment: give the 64 hex digits" in err


def test_a_commitment_is_read_in_either_case_and_without_surrounding_blanks() -> None:
    assert noted.commitment_arg(f" {'AB' * 32}\n") == "ab" * 32
