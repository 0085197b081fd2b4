"""`arena token create/list/revoke`, `arena limits` and an owner-less `arena bot add` onto a
user's bot, in-process on a data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.bots.smoke import SAMPLE_RANDOM_BOT
from arena.store import Store, get_bot, register_remote_bot
from arena.store.tokens import authenticate
from tests.cli import arena_in_process


def _arena(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> tuple[int, str, str]:
    return arena_in_process(capsys, *args, "--data-dir", str(data))


def test_tokens_are_listed_revoked_and_may_expire(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    status, token, _ = _arena(capsys, data, "token", "create", "ann", "--expires-in", "2h")
    assert status == 0
    _arena(capsys, data, "token", "create", "bob")
    status, out, _ = _arena(capsys, data, "token", "list", "--json")
    rows = json.loads(out)
    assert [(r["id"], r["user"], r["state"]) for r in rows] == [(1, "ann", "active"),
                                                                (2, "bob", "active")]  # fmt: skip
    assert rows[0]["expires_at"] is not None and rows[1]["expires_at"] is None
    assert token.strip() not in out
    assert _arena(capsys, data, "token", "revoke", "1")[1] == "revoked token 1 of ann (user)\n"
    with Store.open(data) as store, pytest.raises(Exception, match="token revoked at"):
        authenticate(store, token.strip())
    status, _, err = _arena(capsys, data, "token", "revoke", "9")
    assert (status, err) == (1, "arena: no token 9\n")
    status, _, err = _arena(capsys, data, "token", "create", "cy", "--expires-in", "soon")
    assert status == 2 and "'soon' is not a duration" in err


def test_limits_are_set_shown_and_cleared(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    assert _arena(capsys, data, "limits", "set", "bots", "3", "--user", "ann")[1] == (
        "bots = 3 for ann (ann)\n"
    )
    _arena(capsys, data, "limits", "set", "bots", "5")
    shown = {r["name"]: r for r in json.loads(
        _arena(capsys, data, "limits", "show", "--user", "ann", "--json")[1])}  # fmt: skip
    assert (shown["bots"]["value"], shown["bots"]["set_for"]) == (3, "ann")
    _arena(capsys, data, "limits", "clear", "bots", "--user", "ann")
    shown = {r["name"]: r for r in json.loads(
        _arena(capsys, data, "limits", "show", "--user", "ann", "--json")[1])}  # fmt: skip
    assert (shown["bots"]["value"], shown["bots"]["set_for"]) == (5, "everyone")
    status, _, err = _arena(capsys, data, "limits", "set", "check_queue", "1", "--user", "ann")
    assert status == 2
    assert err == "arena: limit check_queue is the whole server's: set it for everyone\n"


@pytest.mark.slow
def test_an_owner_less_bot_add_onto_a_users_bot_is_refused_naming_the_owner(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    with Store.open(data) as store:
        register_remote_bot(store, "python_random", owner="mallory")
    status, _, err = _arena(capsys, data, "bot", "add", str(SAMPLE_RANDOM_BOT))
    assert status == 1
    assert "bot 'python_random' belongs to user 'mallory'" in err
    with Store.open(data) as store:
        bot = get_bot(store, "python_random")
        assert (bot.owner, len(bot.versions)) == ("mallory", 1)
