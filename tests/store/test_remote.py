"""Remote bots and seat offers: the token's hash only, taken once, refusals write nothing."""

from __future__ import annotations

import sqlite3

import pytest

from arena.referee import load_bot
from arena.store import (
    Store,
    StoreError,
    TournamentConfig,
    add_bot_version,
    add_seat_offer,
    bot_spec,
    close_seat_offers,
    create_token,
    get_bot,
    list_matches,
    open_seat_offers,
    register_remote_bot,
    revoke_tokens,
    take_seat_offer,
)
from arena.store.remote import SeatRefusedError, now_ms
from arena.tournament.policy.rounds import create_tournament

from .conftest import MakeBot

TOKEN = "seat-token-for-tests-0123456789"


def _snapshot(store: Store) -> list[tuple[object, ...]]:
    db = sqlite3.connect(store.data_dir / "arena.db")
    return [("offers", *r) for r in db.execute("SELECT * FROM seat_offers ORDER BY id")]


@pytest.fixture
def match_id(store: Store, make_bot: MakeBot) -> int:
    register_remote_bot(store, "far", owner="alice")
    add_bot_version(store, make_bot("near"))
    create_tournament(store, "t", "round_robin", ["far", "near"], TournamentConfig())
    return list_matches(store, 1)[0].id


def _offer(store: Store, match_id: int, token: str = TOKEN, expires_in_ms: int = 10_000) -> int:
    version = get_bot(store, "far").versions[-1].version
    row = add_seat_offer(
        store, bot="far", version=version, token=token, match_id=match_id,
        referee_match="abc123", slot=0, socket_path="/tmp/x/b0.sock",
        expires_at_ms=now_ms() + expires_in_ms,
    )  # fmt: skip
    return row.id


def test_a_remote_bot_is_a_version_without_a_command(store: Store) -> None:
    row, created = register_remote_bot(store, "far", owner="alice", description="mine")
    again, created_again = register_remote_bot(store, "far", owner="alice", description="mine")
    spec = bot_spec(store, "far")
    assert (created, created_again, again.version) == (True, False, row.version)
    assert (spec.runtime, spec.command, row.owner) == ("remote", (), "alice")
    assert 'runtime = "remote"' in (spec.directory / "bot.toml").read_text()


@pytest.mark.parametrize(
    ("name", "owner", "description", "message"),
    [
        ("../x", "alice", "", "bot name"),
        ("", "alice", "", "bot name"),
        ("far", "alice", "x" * 501, "description"),
        ("far", "bob", "", "belongs to another user"),
    ],
    ids=["path", "empty", "long-description", "other-owner"],
)
def test_bad_remote_registrations_are_refused(
    store: Store, name: str, owner: str, description: str, message: str
) -> None:
    register_remote_bot(store, "far", owner="alice")
    with pytest.raises(StoreError, match=message):
        register_remote_bot(store, name, owner=owner, description=description)


def test_only_the_hash_is_stored_and_the_offer_is_taken_once(store: Store, match_id: int) -> None:
    _offer(store, match_id)
    raw = sqlite3.connect(store.data_dir / "arena.db").execute("SELECT * FROM seat_offers")
    assert TOKEN not in repr(raw.fetchall())
    assert [o.bot for o in open_seat_offers(store, owner="alice")] == ["far"]
    assert open_seat_offers(store, owner="bob") == []
    taken = take_seat_offer(store, TOKEN)
    assert (taken.slot, taken.socket_path, taken.referee_match) == (0, "/tmp/x/b0.sock", "abc123")
    assert open_seat_offers(store, owner="alice") == []
    before = _snapshot(store)
    with pytest.raises(SeatRefusedError, match="already used"):
        take_seat_offer(store, TOKEN)
    assert _snapshot(store) == before


@pytest.mark.parametrize(
    ("token", "expires_in_ms", "close", "message"),
    [
        ("forged-token", 10_000, False, "unknown seat token"),
        (TOKEN, -1, False, "expired"),
        (TOKEN, 10_000, True, "no longer offered"),
    ],
    ids=["forged", "expired", "withdrawn"],
)
def test_refused_tokens_change_nothing(
    store: Store, match_id: int, token: str, expires_in_ms: int, close: bool, message: str
) -> None:
    _offer(store, match_id, expires_in_ms=expires_in_ms)
    if close:
        assert close_seat_offers(store, match_id=match_id) == 1
    before = _snapshot(store)
    with pytest.raises(SeatRefusedError, match=message):
        take_seat_offer(store, token)
    assert _snapshot(store) == before


def test_offers_need_a_remote_version(store: Store, match_id: int) -> None:
    version = get_bot(store, "near").versions[-1].version
    with pytest.raises(StoreError, match="not a remote bot"):
        add_seat_offer(
            store, bot="near", version=version, token="t", match_id=match_id,
            referee_match="m", slot=1, socket_path="/s", expires_at_ms=now_ms() + 1000,
        )  # fmt: skip


def test_a_seat_of_a_bot_whose_owner_holds_no_live_token_is_refused(
    store: Store, match_id: int
) -> None:
    create_token(store, "alice")
    revoke_tokens(store, user="alice")
    _offer(store, match_id)
    before = _snapshot(store)
    with pytest.raises(SeatRefusedError, match="owner 'alice' holds no live token"):
        take_seat_offer(store, TOKEN)
    assert _snapshot(store) == before
    create_token(store, "alice")  # a new token: its seats open again
    assert take_seat_offer(store, TOKEN).bot == "far"


def test_a_tournaments_open_offers_are_withdrawn_and_no_other(store: Store, match_id: int) -> None:
    other = create_tournament(store, "u", "round_robin", ["far", "near"], TournamentConfig())
    other_match = list_matches(store, other.id)[0].id
    _offer(store, match_id, "this-tournament")
    _offer(store, other_match, "other-tournament")
    with pytest.raises(StoreError, match="exactly one of"):
        close_seat_offers(store, match_id=match_id, tournament_id=1)
    assert close_seat_offers(store, tournament_id=1) == 1
    assert [o.match_id for o in open_seat_offers(store, bot="far")] == [other_match]
    with pytest.raises(SeatRefusedError, match="no longer offered"):
        take_seat_offer(store, "this-tournament")


def test_a_seat_offered_again_withdraws_its_earlier_offer(store: Store, match_id: int) -> None:
    _offer(store, match_id, "first-launch")
    _offer(store, match_id, "second-launch")
    with pytest.raises(SeatRefusedError, match="no longer offered"):
        take_seat_offer(store, "first-launch")
    assert take_seat_offer(store, "second-launch").state == "open"


@pytest.mark.parametrize(
    "description",
    ["", "plain", 'quote " and \\ backslash', "two\nlines", "tab\there", "cr\rlf", "bell\x07",
     "escape \x1b[31mred", "del\x7f", "separator\u2028and \u00e9"],
)  # fmt: skip
def test_the_stored_bot_toml_loads_back_to_the_description(store: Store, description: str) -> None:
    register_remote_bot(store, "far", owner="alice", description=description)
    loaded = load_bot(bot_spec(store, "far").directory)
    assert (loaded.name, loaded.runtime, loaded.description) == ("far", "remote", description)
