"""/play's shared state under concurrent requests and threads, each race forced.

A table is changed by three threads (the seat's stream, the game's, a person's
request) and read by the page's polls; the tables of a server are opened by any
number of requests at once. The worst interleavings: two changes at once (two
versions, never one), a change while a poll builds its answer (the change is in a
later version: the page redraws only at a new one), two clicks on one move (one
reply goes to the referee, the other is refused), and opens at once past a limit
(the limit holds and the refusal names it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import store as st
from arena.kahuna import Variant, legal_actions, play_random_game, replay_steps
from arena.protocol.convert import action_to_pb, observation_to_pb
from arena.protocol.gen.kahuna.v1 import referee_pb2
from arena.referee.botdir import load_bot
from arena.referee.remote import SeatOffer
from arena.resources import sample_bot
from arena.testing.crowd import WatchedLock
from arena.testing.waiting import wait_until
from arena.web import play as play_module
from arena.web.play import PlayOptions, PlayRefused, PlayTables, SeatLink, Table


def new_table() -> Table:
    return Table("t", "ann", load_bot(sample_bot("python_random")), 0, Variant())


def test_two_changes_at_once_are_two_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seat's thread and the game's change the table at once: the version moves on by
    two (one lost, the page could take a new state for one it has drawn).

    The race, forced: each change, having read the version, is held until the other has
    read it too or waits for the table's lock."""
    table = new_table()
    lock = getattr(table, "_version_lock", None)
    watched = WatchedLock(lock) if lock is not None else None
    if watched is not None:
        monkeypatch.setattr(table, "_version_lock", watched)
    reads: list[str] = []
    changing = threading.local()
    changers: dict[str, threading.Thread] = {}

    class Watched(Table):
        @property  # type: ignore[misc]
        def version(self) -> int:
            value = int(self.__dict__["version"])
            if getattr(changing, "now", False):
                me = threading.current_thread().name
                reads.append(me)
                other = changers["game" if me == "seat" else "seat"]
                wait_until(lambda: reads.count(other.name) > 0
                           or (watched is not None and watched.waits(other)),
                           "the other change past its read, or waiting", 10)  # fmt: skip
            return value

        @version.setter
        def version(self, value: int) -> None:
            self.__dict__["version"] = value

    def change() -> None:
        changing.now = True
        table.changed()

    table.__class__ = Watched
    changers.update({name: threading.Thread(target=change, name=name) for name in ("seat", "game")})
    for thread in changers.values():
        thread.start()
    for thread in changers.values():
        thread.join(20)
    table.__class__ = Table
    assert table.version == 2


def test_a_change_while_a_poll_is_answered_is_in_a_later_version() -> None:
    """The game is stored while a poll builds the table's answer. Two answers with one
    version show one state: the page, which redraws only at a new version, never keeps
    the older of two states that share a version.

    The interleaving, forced: the game's thread stores the game and marks the change
    just after the poll read whether the game is done."""
    table = new_table()
    stored_now = True

    class StoredWhileRead(threading.Event):
        def is_set(self) -> bool:
            nonlocal stored_now
            seen = super().is_set()
            if stored_now:
                stored_now = False
                table.game_id = 7
                self.set()
                table.changed()
            return seen

    table.done = StoredWhileRead()
    during, after = table.to_json(), table.to_json()
    assert (during["status"], after["status"]) == ("starting", "stored")
    assert during["version"] < after["version"], (during, after)


def seat_link(tmp_path: Path) -> SeatLink:
    """A seat link whose stream has ended (no referee at its socket), then handed a
    request as the referee would send it: the seat to move, its legal actions."""
    offer = SeatOffer(0, "human-ann", "v", "token", str(tmp_path / "no-socket"), "m", 0)
    link = SeatLink(offer, "human-ann", lambda: None)
    link._thread.join(20)
    assert not link._thread.is_alive()
    state = next(step.state for step in replay_steps(play_random_game(3)) if step.action >= 0)
    assert state.to_move is not None
    request = referee_pb2.ActionRequest(
        request_id=41, observation=observation_to_pb(state, state.to_move, state.history, 0),
        legal_actions=[action_to_pb(action) for action in legal_actions(state)],
        action_deadline_ms=60_000,
    )  # fmt: skip
    link._take(referee_pb2.PlayResponse(action_request=request))
    return link


def replies(link: SeatLink) -> list[referee_pb2.ActionReply]:
    sent = []
    while not link._outbox.empty():
        frame = link._outbox.get()
        if frame is not None:
            message = referee_pb2.PlayRequest.FromString(frame)
            if message.WhichOneof("kind") == "action_reply":
                sent.append(message.action_reply)
    return sent


class HeldLegal(dict[str, Any]):
    """A seat's legal actions, holding the first lookup (the test's hook)."""

    hold: Callable[[], None] = staticmethod(lambda: None)
    looked: int = 0

    def get(self, key: str, default: Any = None) -> Any:
        found = super().get(key, default)
        self.looked += 1
        if self.looked == 1:
            self.hold()
        return found


def test_two_clicks_on_one_move_send_one_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person clicks a move twice (two requests for the open request): one reply goes
    to the referee, the other is refused naming why (a second reply to a settled request
    is a protocol violation: the person would lose the game).

    The race, forced: the first click, past its checks, is held until the second waits
    for the seat's lock or has passed its checks too."""
    link = seat_link(tmp_path)
    watched = WatchedLock(link._lock)
    monkeypatch.setattr(link, "_lock", watched)
    legal = HeldLegal(link.legal)
    link.legal = legal
    text = next(iter(legal))
    outcomes: list[object] = []

    def click() -> None:
        try:
            link.play(text, 41)
            outcomes.append("sent")
        except PlayRefused as refused:
            outcomes.append((refused.status, refused.message))

    second = threading.Thread(target=click, name="second")

    def hold() -> None:
        second.start()
        wait_until(lambda: watched.waits(second) or legal.looked > 1,
                   "the second click waiting for the seat, or past its checks", 10)  # fmt: skip

    legal.hold = hold
    first = threading.Thread(target=click, name="first")
    first.start()
    first.join(20)
    second.join(20)
    assert sorted(map(str, outcomes)) == sorted(["sent", str((409, "it is not your turn"))])
    sent = replies(link)
    assert len(sent) == 1 and sent[0].request_id == 41


class OpenTables(PlayTables):
    """Tables whose games never end (the test holds them open): what opening them costs
    is the subject here, not the match."""

    def _play(self, table: Table, human_name: str) -> None:
        pass


@pytest.fixture
def store(tmp_path: Path) -> Iterator[st.Store]:
    opened = st.Store.open(tmp_path / "data")
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.parametrize(
    ("users", "options", "refusal"),
    [
        (("ann", "ann"), PlayOptions(max_tables=8, max_tables_per_user=1),
         (429, "max_tables_per_user")),
        (("ann", "bob"), PlayOptions(max_tables=1), (503, "max_tables")),
    ],
    ids=["one user's two tables", "the server's last table"],
)  # fmt: skip
def test_opening_tables_at_once_past_a_limit_opens_one(
    store: st.Store,
    monkeypatch: pytest.MonkeyPatch,
    users: tuple[str, str],
    options: PlayOptions,
    refusal: tuple[int, str],
) -> None:
    """Two tables opened at once where the limit leaves room for one: one opens, the other
    is refused naming the limit.

    The race, forced: the first open, past its count of the open tables and before its
    table is added, is held until the second waits for the tables' lock or has passed
    the count too."""
    tables = OpenTables(store, options)
    tables._bot("python_random")  # the house bot stored before the race
    watched = WatchedLock(tables._lock)
    monkeypatch.setattr(tables, "_lock", watched)
    made: list[str] = []
    second: threading.Thread | None = None

    def held_table(*args: Any) -> Table:
        made.append(threading.current_thread().name)
        if len(made) == 1:
            assert second is not None
            second.start()
            wait_until(lambda: watched.waits(second) or len(made) > 1,
                       "the second open waiting for the tables, or past the count", 10)  # fmt: skip
        return Table(*args)

    monkeypatch.setattr(play_module, "Table", held_table)
    outcomes: list[object] = []

    def open_one(user: str) -> Callable[[], None]:
        def run() -> None:
            try:
                tables.open(st.Principal(user, "user"), {"bot": "python_random"})
                outcomes.append("opened")
            except PlayRefused as refused:
                outcomes.append((refused.status, refused.message))

        return run

    second = threading.Thread(target=open_one(users[1]), name="second")
    first = threading.Thread(target=open_one(users[0]), name="first")
    first.start()
    first.join(20)
    second.join(20)
    assert len(tables._tables) == 1, outcomes
    assert "opened" in outcomes and len(outcomes) == 2
    [refused] = [outcome for outcome in outcomes if outcome != "opened"]
    assert isinstance(refused, tuple) and refused[0] == refusal[0] and refusal[1] in refused[1]
