"""The seed commitments this computer has seen: `arena remote` notes each for the audit.

A commitment proves the deals were fixed before play only if the participant saw it
before play: one first read from the finished tournament's bundle could hash a secret
chosen after the games, and an operator who re-creates a tournament under the same
name publishes a new one. So `arena remote tournament list` and `tournament show`
note, in ``$XDG_CONFIG_HOME/kahuna-arena/commitments.json``, the first commitment
each arena shows for each tournament, with when and at what point of play (one first
seen once the tournament is finished shows nothing, and the audit says so); they warn
when the arena later shows another; and `arena remote audit` holds the bundle to the
noted one when no ``--commitment`` is given (docs/reference/VERIFY.md).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from arena.tournament.policy.bundle_digest import parse_digest

NOTED_NAME = "commitments.json"
MAX_NOTED = 10_000
"""Tournaments noted per arena: a hostile arena's list of many cannot grow the file
past that."""
MAX_NOTED_NAME = 256
"""The longest tournament name noted (the arena's own names are shorter)."""
MAX_STATUS = 40
"""The characters of a tournament's status kept (the arena's own are a word)."""
COMMITMENT_DIGITS = 64
_HEX = frozenset("0123456789abcdef")


def commitment_arg(text: str) -> str:
    """``--commitment HEX``: the 64 hex digits a tournament publishes, in either case (a
    copy cut short, or with a prefix, is refused here rather than fail the audit as if the
    arena had published another)."""
    digits = text.strip().lower()
    if len(digits) != COMMITMENT_DIGITS or not set(digits) <= _HEX:
        shown = json.dumps(text[:80]) + ("..." if len(text) > 80 else "")
        raise argparse.ArgumentTypeError(
            f"{shown} is not a seed commitment: give the {COMMITMENT_DIGITS} hex digits the"
            " arena published (`arena remote tournament show NAME`)")  # fmt: skip
    return digits


def digest_arg(text: str) -> str:
    """``--expect-digest HEX``: an audit bundle's digest, 64 hex digits in either case
    (``arena.tournament.policy.bundle_digest``); anything else refused, named."""
    try:
        return parse_digest(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class NotesError(Exception):
    """The notes file cannot be read or written (named, with why)."""


@dataclass(frozen=True)
class Noted:
    """A commitment as first seen: when (UTC, ISO 8601), and the tournament's status and
    games played then (a commitment noted before the first game is worth the most)."""

    commitment: str
    noted_at: str
    status: str
    games_played: int

    def when(self) -> str:
        return (f"on {self.noted_at} (the tournament {self.status},"
                f" {self.games_played} games played)")  # fmt: skip

    def proves(self) -> str:
        """What noting it then shows: that the deals were fixed before play, or only
        before some games, or nothing (noted once the arena called it finished)."""
        if self.status == "finished":
            return ("; noted only once the tournament was finished, so not checked: that it"
                    " was published before play")  # fmt: skip
        if self.games_played:
            return (f"; noted after {self.games_played} games, so the deals of those are not"
                    " shown fixed before they were played")  # fmt: skip
        return ", before the first game"


@dataclass(frozen=True)
class Seen:
    """A tournament as an arena lists it: what noting needs."""

    name: str
    commitment: str
    status: str
    games_played: int


def note(directory: Path, address: str, seen: Iterable[Seen], now: datetime | None = None,
         *, every: bool = False) -> list[str]:  # fmt: skip
    """Note the commitment of each tournament in ``seen`` not noted yet for the arena at
    ``address``, with its status and games played; keep what was noted first. The warnings
    to print: one for each tournament whose commitment is not the one noted, one for each
    noted tournament missing when ``seen`` is ``every`` tournament the arena lists (its
    store has no command that deletes one), and one when the arena is at MAX_NOTED.
    NotesError when the notes cannot be read or written."""
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    warnings: list[str] = []
    seen = list(seen)
    with _locked(directory):
        arenas = _read(directory)
        noted = arenas.setdefault(address, {})
        changed = full = False
        if every:
            listed = {t.name for t in seen}
            warnings += [f"warning: tournament {name!r}, whose seed commitment {n.commitment}"
                         f" this computer noted {n.when()}, is no longer listed by the arena"
                         for name, n in noted.items() if name not in listed]  # fmt: skip
        for t in seen:
            commitment = t.commitment.lower()
            if (len(commitment) != COMMITMENT_DIGITS or not set(commitment) <= _HEX
                    or len(t.name) > MAX_NOTED_NAME):  # fmt: skip
                continue  # none published, or not one (an arena's notes fill no disk)
            first = noted.get(t.name)
            if first is not None:
                if first.commitment != commitment:
                    warnings.append(
                        f"warning: tournament {t.name!r} now has seed commitment {commitment},"
                        f" but this computer noted {first.commitment} {first.when()}: it was"
                        " created again, or its commitment changed; `arena remote audit`"
                        " fails it unless given another --commitment")  # fmt: skip
            else:
                if len(noted) >= MAX_NOTED:
                    full = True
                    continue
                noted[t.name] = Noted(commitment, stamp, t.status[:MAX_STATUS], t.games_played)
                changed = True
        if full:
            warnings.append(f"warning: this computer notes at most {MAX_NOTED} tournaments of"
                            f" an arena ({directory / NOTED_NAME}): note the commitment of a"
                            " tournament you enter yourself")  # fmt: skip
        if changed:
            _write(directory, arenas)
    return warnings


def noted_commitment(directory: Path, address: str, name: str) -> Noted | None:
    """The commitment noted for tournament ``name`` of the arena at ``address``, or None.
    NotesError when the notes cannot be read."""
    return _read(directory).get(address, {}).get(name)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """One writer of the notes at a time (two `arena remote` commands at once)."""
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(directory / f".{NOTED_NAME}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as error:
        raise NotesError(f"{directory / NOTED_NAME}: cannot be written ({error.strerror})"
                         ) from None  # fmt: skip
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(directory: Path) -> dict[str, dict[str, Noted]]:
    path = directory / NOTED_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(address): {str(name): Noted(**fields) for name, fields in tournaments.items()}
                for address, tournaments in data["arenas"].items()}  # fmt: skip
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise NotesError(f"{path}: cannot be read ({error.strerror})") from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise NotesError(f"{path}: not the commitments this computer noted; move it away"
                         " to note them afresh") from None  # fmt: skip


def _write(directory: Path, arenas: dict[str, dict[str, Noted]]) -> None:
    path = directory / NOTED_NAME
    partial = path.with_name(f".{NOTED_NAME}.partial")
    data = {"arenas": {address: {name: asdict(n) for name, n in tournaments.items()}
                       for address, tournaments in arenas.items()}}  # fmt: skip
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1)
        partial.replace(path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise NotesError(f"{path}: cannot be written ({error.strerror})") from None
