"""Public live games (``/live/MATCH/GAME``, ``/api/live/MATCH/GAME?after=N``).

While a game is played the runner keeps its head (with the deal) and its
entries (actions, reshuffle orders) in the store's live tables
(``arena.store.live``): full information, the admin's. Nothing of them is
sent as it is. ``SpectatorFeed`` replays them and answers with frames of the
``"public"`` perspective (``arena.web.frames``, built from
``arena.kahuna.spectate.SpectatorView`` alone): the board, the face-up row,
pile sizes, played cards, counts of face-down discards and hand sizes,
Tactical open cards, every action with hidden cards written in words.

With a delay (``arena serve --spectator-delay-s``) only entries the store
received at least that long ago are replayed, so a delayed page shows a past
public position and never anything newer. Once the game is stored the page
turns into ``/games/ID`` (the full replay once no game of its deal is still to
be played, ``arena.store.record_withheld``; until then the same public view); with
a delay, only once the game finished that long ago: until then the page plays
on from the entries the feed had read or, for a page that was not following
it, from the stored game's public frames up to the actions applied by the cut
(``PublicTimeline.stored_timing``). A game that had not begun by the cut is
"waiting", whatever it is now.

A page polls ``?after=N`` (N: the last step it has) and gets the frames
after it; ``live_id`` (the live row's id and start time: SQLite may reuse a
deleted row's id) changes when a resumed match plays the game anew, and the
page then starts over.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from arena.kahuna import MalformedRecordError, record_from_json
from arena.referee.result_words import result_words
from arena.store import InPlay, StoredTiming
from arena.store.models import LiveEntry, LiveGameRow
from arena.web.frames import PUBLIC, Frames, game_frames
from arena.web.upload import bots_of

Json = dict[str, object]
LIVE_POLL_MS = 250  # how often a live page asks for new frames
LIVE_LIST_POLL_MS = 1000  # how often /live asks which games are in play
CACHE_SIZE = 64  # live games whose entries and frames are kept


@runtime_checkable
class LiveSource(Protocol):
    """What the live pages read (the store's source has it)."""

    def match_games(self, match_id: int) -> int | None:
        """How many games match ``match_id`` has; None when there is no such match."""
        ...

    def live_game(self, match_id: int, game_index: int) -> LiveGameRow | None: ...

    def live_entries(self, live_id: int, after_seq: int) -> Sequence[LiveEntry]: ...

    def stored_game(self, match_id: int, game_index: int) -> tuple[int, str] | None:
        """The stored game's id and when it finished (``utc_now()`` stamp); None: not stored."""
        ...

    def live_games(self) -> Sequence[LiveGameRow]: ...


@runtime_checkable
class PublicTimeline(Protocol):
    """What the delay reads of games as of a moment (the store's source has it)."""

    def first_event_after(self, cut: str) -> str | None: ...

    def in_play_at(self, cut: str, tournament_id: int | None) -> Sequence[InPlay]: ...

    def stored_timing(self, match_id: int, game_index: int) -> StoredTiming | None: ...

    def game_finished_at(self, game_id: int) -> str | None: ...


StoredFrames = Callable[[int], tuple[Frames, tuple[str, str]]]
"""A stored game's public frames and its bots, by game id."""


class NoSuchGameError(LookupError):
    """No match of that id, or no game of that index in it."""


def epoch_s(stamp: str) -> float:
    """Seconds since the epoch of a stored ``utc_now()`` stamp."""
    return datetime.fromisoformat(stamp).timestamp()


def check_delay(delay_s: float) -> float:
    if not math.isfinite(delay_s) or delay_s < 0:
        raise ValueError(f"the spectator delay must be 0 or more seconds, not {delay_s!r}")
    return delay_s


@dataclass
class _Followed:
    """One live game as read so far: its head and entries, and frames of a prefix."""

    row: LiveGameRow
    entries: list[tuple[Mapping[str, object], float]] = field(default_factory=list)
    last_seq: int = -1
    frames_for: int = -1  # how many entries ``frames`` replays
    frames: Frames | None = None
    bots: tuple[str, str] = ("seat 0", "seat 1")


def live_frames(head: Mapping[str, object], entries: Sequence[Mapping[str, object]]) -> Frames:
    """The public frames of the game so far (head plus entries); frame k > 0 has ``at_ms``,
    when the referee applied action k. An action that ends a round is shown once the
    next round's order has arrived too."""
    actions = [entry for entry in entries if "reshuffle" not in entry]
    reshuffles = [entry["reshuffle"] for entry in entries if "reshuffle" in entry]
    try:
        record = record_from_json({**head, "actions": actions, "reshuffles": reshuffles})
    except MalformedRecordError as bad:
        return Frames((), f"the live game cannot be replayed: {bad}")
    frames = game_frames(record, PUBLIC)
    shown = []
    for frame in frames.frames:
        step = frame["step"]
        assert isinstance(step, int)
        at_ms = actions[step - 1].get("at_ms") if step else None
        shown.append({**frame, "at_ms": at_ms if isinstance(at_ms, int) else None})
    error = frames.error
    if error is not None and len(shown) == len(actions) and "reshuffles" in error:
        error = None  # the round's last action waits for the next round's order
    return Frames(tuple(shown), error)


def _started(row: LiveGameRow) -> tuple[str, int]:
    """The order runs of one game were played in (a later run replaces the row)."""
    return (row.started_at, row.id)


def run_key(row: LiveGameRow) -> str:
    """One run of a live game: its row id and start (a replayed game may get the same id)."""
    return f"{row.id}@{row.started_at}"


class SpectatorFeed:
    """Answers live pages from a ``LiveSource``, with entries and frames kept per game."""

    def __init__(
        self, source: LiveSource, delay_s: float = 0.0, stored_frames: StoredFrames | None = None
    ) -> None:
        self.source = source
        self.stored_frames = stored_frames
        self.delay_s = check_delay(delay_s)
        self._games: OrderedDict[str, _Followed] = OrderedDict()
        self._runs: dict[tuple[int, int], str] = {}  # (match, game) -> its latest run's key
        self._lock = threading.Lock()

    def poll(self, match_id: int, game_index: int, after: int, now_s: float) -> Json:
        """The ``/api/live`` payload: status and the frames after step ``after``."""
        games = self.source.match_games(match_id)
        if games is None:
            raise NoSuchGameError(f"no match {match_id}")
        if not 0 <= game_index < games:
            raise NoSuchGameError(f"match {match_id} has no game {game_index}")
        payload: Json = {
            "match_id": match_id, "game_index": game_index, "delay_s": self.delay_s,
            "status": "waiting", "live_id": None, "bots": ["seat 0", "seat 1"],
            "steps": 0, "frames": [], "game_id": None, "error": None, "over": None,
        }  # fmt: skip
        cut_s = now_s - self.delay_s
        row = self.source.live_game(match_id, game_index)
        if row is None:
            stored = self.source.stored_game(match_id, game_index)
            if stored is None:
                return payload
            with self._lock:  # a delayed page plays on from what it read, until the delay
                followed = self._games.get(self._runs.get((match_id, game_index), ""))
                if followed is not None and epoch_s(stored[1]) > cut_s:
                    return self._live_payload(payload, followed, cut_s, after)
            if epoch_s(stored[1]) > cut_s:  # ended, but not yet for a delayed page
                return self._stored_payload(payload, match_id, game_index, cut_s, after)
            payload.update(status="finished", game_id=stored[0])
            return payload
        if epoch_s(row.started_at) > cut_s:
            return payload  # started, but not yet for a delayed page
        with self._lock:
            return self._live_payload(payload, self._follow(row), cut_s, after)

    def _live_payload(self, payload: Json, followed: _Followed, cut_s: float, after: int) -> Json:
        frames = self._frames(followed, cut_s)
        shown = frames.frames
        payload.update(
            status="live", live_id=run_key(followed.row), bots=list(followed.bots),
            steps=max(len(shown) - 1, 0), frames=list(shown[max(after + 1, 0):]),
            error=frames.error, over=over_words(shown, followed.bots),
        )  # fmt: skip
        return payload

    def _stored_payload(
        self, payload: Json, match_id: int, game_index: int, cut_s: float, after: int
    ) -> Json:
        """A game stored after the cut, as it stood at the cut: waiting (not begun by then)
        or live with the public frames of the actions applied by then."""
        timing = (self.source.stored_timing(match_id, game_index)
                  if isinstance(self.source, PublicTimeline) else None)  # fmt: skip
        if timing is None or timing.started_at is None or self.stored_frames is None:
            return payload  # no times kept: it shows once it ended that long ago
        if epoch_s(timing.started_at) > cut_s:
            return payload
        frames, bots = self.stored_frames(timing.game_id)
        applied = sum(1 for ms in timing.action_ms or () if ms / 1000 <= cut_s)
        shown = frames.frames[: applied + 1]
        payload.update(
            status="live", live_id=f"game-{timing.game_id}@{timing.started_at}", bots=list(bots),
            steps=max(len(shown) - 1, 0), frames=list(shown[max(after + 1, 0):]),
            over=over_words(shown, bots),
        )  # fmt: skip
        return payload

    def live_games(self) -> Sequence[LiveGameRow]:
        return self.source.live_games()

    def _follow(self, row: LiveGameRow) -> _Followed:
        key = run_key(row)
        followed = self._games.get(key)
        if followed is None:
            followed = self._games[key] = _Followed(row)
            with contextlib.suppress(MalformedRecordError):  # then "seat 0", "seat 1"
                followed.bots = bots_of(record_from_json({**row.head, "actions": []}))
            game = (row.match_id, row.game_index)
            latest = self._games.get(self._runs.get(game, ""))
            if latest is None or _started(latest.row) <= _started(row):  # a poll that read
                self._runs[game] = key  # the row before the game was played anew is not it
            while len(self._games) > CACHE_SIZE:
                dropped_key, dropped = self._games.popitem(last=False)
                game = (dropped.row.match_id, dropped.row.game_index)
                if self._runs.get(game) == dropped_key:  # not a later run's
                    del self._runs[game]
        self._games.move_to_end(key)
        for entry in self.source.live_entries(row.id, followed.last_seq):
            followed.entries.append((entry.entry, epoch_s(entry.added_at)))
            followed.last_seq = entry.seq
        return followed

    def _frames(self, followed: _Followed, cut_s: float) -> Frames:
        count = len(followed.entries)
        while count and followed.entries[count - 1][1] > cut_s:
            count -= 1
        if followed.frames is None or followed.frames_for != count:
            entries = [entry for entry, _ in followed.entries[:count]]
            followed.frames = live_frames(followed.row.head, entries)
            followed.frames_for = count
        return followed.frames


def over_words(frames: Sequence[Json], bots: Sequence[str]) -> str | None:
    """The result in words (``result_words``) once the last frame shown ends the game by
    the rules; None while it goes on (a forfeit shows once the game is stored)."""
    outcome = frames[-1].get("outcome") if frames else None
    if not isinstance(outcome, dict):
        return None
    winner = outcome.get("winner")
    seat = winner if isinstance(winner, int) else None
    return result_words((bots[0], bots[1]), seat, str(outcome.get("reason") or ""))
