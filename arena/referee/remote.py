"""Remote bots: seats the referee offers instead of launching a process.

A bot version with runtime ``"remote"`` is hosted by its owner. When the
referee would launch it, it makes the seat's token as for any bot and calls
the match's ``on_seat_offer`` hook with a ``SeatOffer`` (the tournament
runner stores it and `arena serve` hands it to the owner's connector); the
bot then reaches this seat's private socket through the `arena serve`
gateway. ``RemoteSeat`` stands where a process would: it never exits (no
CRASH is possible), so a stream that closes is a DISCONNECT, and a bot that
never says Hello times out like any other.

When the arena itself ends a remote bot's stream (the gateway, once the token
its owner obtained the seat with is revoked or expires), the gateway first
writes why in the seat's cut note (``write_cut_note``, beside the seat's
private socket, where no bot can write), and the DISCONNECT's recorded reason
says so instead of a network fault.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.referee.botdir import REMOTE_RUNTIME
from arena.referee.endpoint import BotEndpoint

__all__ = [
    "REMOTE_RUNTIME",
    "RemoteSeat",
    "SeatOffer",
    "SeatOfferHook",
    "cut_words",
    "expires_at_ms",
    "write_cut_note",
]

MAX_CUT_NOTE_CHARS = 300
"""The most of a cut note the referee reads (it goes into the game's record)."""


@dataclass(frozen=True, slots=True)
class SeatOffer:
    """A seat waiting for a remote bot: say Hello with ``token`` before ``expires_at_ms``."""

    slot: int  # 0: the match's first bot, 1: its second
    bot: str  # the stored bot name (not the display name)
    version: str
    token: str
    socket_path: str  # the seat's private referee socket
    referee_match: str  # Welcome.match_id
    expires_at_ms: int  # Unix epoch milliseconds


SeatOfferHook = Callable[[SeatOffer], None]


def expires_at_ms(hello_timeout_ms: int) -> int:
    return time.time_ns() // 1_000_000 + hello_timeout_ms


def cut_note_path(socket_path: str | Path) -> Path:
    """Where the gateway says why it ended the stream of the seat at ``socket_path``."""
    return Path(f"{socket_path}.cut")


def cut_words(refusal: str, token: str) -> str:
    """The record's words for a seat the arena ended because ``refusal`` (a token check's
    answer: ``token revoked at ...``) refused ``token`` (what that token was, in words); no
    date, no advice: the record is public."""
    for state in ("revoked", "expired"):
        if refusal.startswith(f"token {state}"):
            return f"{token} was {state}"
    return f"{token} is no longer valid"


def write_cut_note(socket_path: str | Path, reason: str) -> None:
    """Say why the arena is ending the remote bot's stream on ``socket_path`` (call it
    before ending the stream: the referee reads it when the stream closes)."""
    path = cut_note_path(socket_path)
    incoming = path.with_name(f"{path.name}.incoming")
    incoming.write_text(reason[:MAX_CUT_NOTE_CHARS], encoding="utf-8")
    incoming.replace(path)


class RemoteSeat:
    """The stand-in for a remote bot's process (same methods the referee uses)."""

    pid = 0
    sandboxed = False

    def __init__(self, endpoint: BotEndpoint) -> None:
        self._endpoint = endpoint
        self._note = cut_note_path(endpoint.socket_path)
        self._note.unlink(missing_ok=True)  # an earlier offer's: this one is not cut

    def cut_words(self) -> str:
        """Why the arena ended this seat's stream ("" if it did not: the bot left)."""
        try:
            with self._note.open(encoding="utf-8", errors="replace") as note:
                return note.read(MAX_CUT_NOTE_CHARS).strip()
        except OSError:
            return ""

    def poll(self) -> int | None:
        return None  # a remote bot has no exit status the referee could see

    def wait(self, timeout_s: float) -> int | None:
        """Wait until the seat's stream has ended (its last messages flushed); None."""
        self._endpoint.wait_idle(timeout_s)
        return None

    def cpu_time_ms(self) -> float | None:
        return None

    def kill(self) -> None:
        """Nothing to kill: the referee ends the stream itself."""
