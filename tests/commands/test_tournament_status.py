"""`arena tournament status`: the seed commitment and the parameters it binds, shown
from creation (in words and as the exact text), the secret only once finished."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena import store as st
from arena.referee.seeds import seed_commitment
from tests.cli import arena_in_process
from tests.tournament.test_committed import PRIVATE, committed_cup


def test_status_shows_the_committed_parameters_before_play_and_the_secret_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # the exact text on one line
    data = tmp_path / "data"
    with st.Store.open(data) as store:
        cup = committed_cup(store, tmp_path / "bots")
        text = st.tournament_parameters(store, cup.id).decode()
        secret = st.tournament_secret(store, cup.id).hex()
    flags = ("--data-dir", str(data))
    status, out, _ = arena_in_process(capsys, "tournament", "status", "cup", *flags)
    assert status == 0
    assert f"seed commitment   {cup.commitment}" in out
    assert "time control:     750 ms per action, 9000 ms bank" in out
    assert "fresh deals:      eve: their matches deal afresh every game" in out
    assert f"exact text:       {text}" in out
    assert "the secret is revealed once the tournament is finished" in out
    monkeypatch.setenv("COLUMNS", "80")  # too narrow for it: every line fits, --json named
    status, out, _ = arena_in_process(capsys, "tournament", "status", "cup", *flags)
    assert status == 0 and all(len(line) <= 80 for line in out.splitlines()), out
    assert cup.commitment in out and text not in out
    assert f"{len(text)} characters, too wide" in out and "status cup --json` has it" in out
    status, out, _ = arena_in_process(capsys, "tournament", "status", "cup", "--json", *flags)
    shown = json.loads(out)
    assert status == 0 and (shown["commitment"], shown["parameters"]) == (cup.commitment, text)
    assert shown["revealed_secret"] is None
    for private in (secret, *PRIVATE):
        assert private not in out
    with st.Store.open(data) as store:
        st.set_status(store, cup.id, st.TournamentStatus.FINISHED)
    status, out, _ = arena_in_process(capsys, "tournament", "status", "cup", "--json", *flags)
    shown = json.loads(out)
    assert shown["revealed_secret"] == secret
    assert seed_commitment(bytes.fromhex(secret), shown["parameters"].encode()) == cup.commitment
