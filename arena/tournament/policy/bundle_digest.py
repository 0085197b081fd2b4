"""A bundle's digest: SHA-256 over a canonical form of its content, for participants to compare.

An arena could send each participant a bundle of its own (one with a participant's
losses left out, sent to that participant), and each would pass its own audit. The
digest lets two participants see that they checked the same bundle: it is a function
of the bundle's content alone (not of how it was written, sent or saved), so the
same finished tournament gives every checker the same digest, from the arena's
stream, a saved file or the store, and two bundles that differ in anything an
audit reads give two digests. docs/reference/VERIFY.md defines it for other
checkers:

    SHA-256 of, for each part in the bundle's order (the head: the bundle without
    "matches"; then each match without "played", each followed by its games):
    the part's kind ("head", "match" or "game"), one space, the part's canonical
    JSON, one newline.

The canonical JSON is ``json.dumps(part, sort_keys=True, separators=(",", ":"),
ensure_ascii=False, allow_nan=False)`` in UTF-8: keys in code point order, no
whitespace, strings escaping only ``"``, ``\\`` and the control characters, integers
as their digits and other numbers as the shortest text that reads back to the same
double (Python's ``repr``: ``25.0``, ``1e-05``). A bundle that has no such form (a
lone surrogate in a string, a number too large for a double) has no digest
(``DigestError``).
"""

from __future__ import annotations

import hashlib
import json
import queue
import re
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from arena.store import Store, revealed_secret
from arena.tournament.policy.audit_bundle import BundlePart, bundle_parts

DIGEST_DIGITS = 64
"""A digest's length in hex digits (SHA-256)."""

_HEX = re.compile(r"[0-9a-f]{64}")


class DigestError(ValueError):
    """A bundle without a canonical form: the message names what in it has none."""


def canonical_json(value: Any) -> bytes:
    """``value`` as the canonical JSON the digest hashes (the module's docstring)."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)  # fmt: skip
    except ValueError:
        raise DigestError("a number in it is not finite (NaN, or too large for a double):"
                          " it has no canonical JSON, so no digest") from None  # fmt: skip
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise DigestError(f"a string in it holds {text[error.start:error.end]!a}, a lone"
                          " surrogate, which is not Unicode text: it has no canonical JSON, so"
                          " no digest") from None  # fmt: skip


def part_line(kind: str, part: Any) -> bytes:
    """What the digest hashes of one part: its kind, a space, its canonical JSON, a newline."""
    return kind.encode("ascii") + b" " + canonical_json(part) + b"\n"


class BundleDigest:
    """The digest of a bundle's parts, fed one at a time as they are read."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.error: DigestError | None = None  # set by ``through``: the bundle has none

    def update(self, kind: str, part: Any) -> None:
        self._hash.update(part_line(kind, part))

    def hexdigest(self) -> str:
        return self._hash.hexdigest()

    def through(self, parts: Iterable[BundlePart]) -> Iterator[BundlePart]:
        """``parts``, each fed to the digest as it is handed on; one without a canonical
        form is handed on all the same (its reader's own checks name what is wrong with
        it), the digest's ``error`` set."""
        for kind, part in parts:
            if self.error is None:
                try:
                    self.update(kind, part)
                except DigestError as error:
                    self.error = error
            yield kind, part


def bundle_digest(parts: Iterable[BundlePart]) -> str:
    """The digest of the bundle ``parts`` make up (DigestError when it has none)."""
    digest = BundleDigest()
    for kind, part in parts:
        digest.update(kind, part)
    return digest.hexdigest()


def parse_digest(text: str) -> str:
    """A digest given by a user: 64 hex digits, either case (ValueError naming
    what was given otherwise)."""
    digits = text.strip().lower()
    if not _HEX.fullmatch(digits):
        shown = json.dumps(text[:80]) + ("..." if len(text) > 80 else "")
        raise ValueError(f"{shown} is not a bundle digest: give the {DIGEST_DIGITS} hex digits"
                         " an audit printed (`arena remote audit NAME`)")  # fmt: skip
    return digits


class FinishedDigests:
    """The digest of each finished tournament's bundle, computed once (its bundle reads
    every record) by a thread of its own and kept: a finished
    tournament's bundle never changes. A caller waits for it at most ``wait_s``: a
    listing after a restart is never held while a long tournament's bundle is read, and
    shows no digest for it until it is done. None for a tournament not finished (its
    bundle still grows), one without a digest, or one not computed yet. Every finished
    tournament's digest is kept (one short entry each): a listing shows them all, and one
    evicted would be read whole again at each listing."""

    WAIT_S = 2.0

    def __init__(self) -> None:
        self._kept: dict[tuple[int, bytes], str | None] = {}
        self._pending: dict[tuple[int, bytes], threading.Event] = {}
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[Store, tuple[int, bytes], threading.Event]] = (
            queue.SimpleQueue()
        )
        self._worker: threading.Thread | None = None

    def of(self, store: Store, tournament_id: int, wait_s: float = WAIT_S) -> str | None:
        return self.of_many(store, [tournament_id], wait_s).get(tournament_id)

    def of_many(self, store: Store, tournament_ids: Iterable[int],
                wait_s: float = WAIT_S) -> dict[int, str | None]:  # fmt: skip
        """The digests of ``tournament_ids`` (those finished), all waited for at most
        ``wait_s`` in all."""
        keys: dict[int, tuple[int, bytes]] = {}
        for tournament_id in tournament_ids:
            secret = revealed_secret(store, tournament_id)
            if secret is not None:
                keys[tournament_id] = (tournament_id, secret)
        waits = []
        with self._lock:
            for key in keys.values():
                if key not in self._kept:
                    waits.append(self._pending.get(key) or self._queued(store, key))
        deadline = time.monotonic() + wait_s
        for done in waits:
            done.wait(max(0.0, deadline - time.monotonic()))
        with self._lock:
            return {tournament_id: self._kept.get(key) for tournament_id, key in keys.items()}

    def _queued(self, store: Store, key: tuple[int, bytes]) -> threading.Event:
        """``key``'s digest queued for the worker (started if need be); under the lock."""
        done = self._pending[key] = threading.Event()
        self._queue.put((store, key, done))
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="bundle-digests",
                                            daemon=True)  # fmt: skip
            self._worker.start()
        return done

    def _work(self) -> None:
        while True:
            store, key, done = self._queue.get()
            try:
                digest: str | None = bundle_digest(bundle_parts(store, key[0]))
            except DigestError:
                digest = None
            except Exception:  # a store closed or failing: asked again at the next look
                with self._lock:
                    self._pending.pop(key, None)
                done.set()
                continue
            with self._lock:
                self._kept[key] = digest
                self._pending.pop(key, None)
            done.set()
