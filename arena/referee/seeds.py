"""The one derivation of every random choice of the arena from a committed secret.

A tournament, a ladder and an ``arena match`` each have a 32-byte ``secret``
(a tournament's or ladder's is stored with it and committed to at creation;
``arena match``'s is fresh from ``secrets``, or ``secret_from_seed(--seed)``).
Everything random follows from it, and from nothing stored beside it
(docs/reference/VERIFY.md writes the same steps out for an outside checker):

1. a match's seed material is ``match_seed_material(secret, identity)``:
   HMAC-SHA256(secret, ``MATCH_PREFIX`` + the identity's canonical JSON), the
   identity being the match's round and its two bots (name, version) in the
   stored seat order of game 0;
2. the seed of deal ``k`` of that match is ``deal_seed(material, k)``:
   HMAC-SHA256(material, ``"kahuna-deal/3:{k}"``), first 8 bytes big-endian,
   top bit cleared; the deal and its reshuffles come from that seed by
   ``arena.kahuna.rng`` (splitmix64 and Fisher-Yates).

Pairings use no randomness (seed order and results decide them). Without the
secret, nothing a bot receives (records, seats, names) lets it compute a deal
it has not been dealt; neither the secret, the seed material nor any deal seed
is sent to a bot or written to a record. A match's seed material is all that
a process playing it needs: it gives that match's deals and no other's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

SEED_BITS = 63
SECRET_BYTES = 32
_SEED_KEY = b"kahuna-arena/match-secret-from-seed/1"


def new_secret() -> bytes:
    """A fresh secret of ``SECRET_BYTES`` random bytes (``secrets``)."""
    return secrets.token_bytes(SECRET_BYTES)


def secret_from_seed(seed: int) -> bytes:
    """The secret of a run given ``--seed SEED`` (``arena match``, ``arena tournament``,
    ``arena demo``): the same in any data directory, reproducible by whoever knows SEED.

    The seed is never sent to a bot, but a seeded tournament publishes it with its
    parameters, and a bot that guesses it (e.g. a small seed) can compute the deals:
    a match or tournament that matters uses no --seed (a fresh ``new_secret``).
    """
    return hmac.new(_SEED_KEY, f"{seed:d}".encode(), hashlib.sha256).digest()


def check_secret(secret: object) -> None:
    """ValueError unless ``secret`` is ``SECRET_BYTES`` bytes."""
    if not isinstance(secret, bytes) or len(secret) != SECRET_BYTES:
        raise ValueError(f"a match secret is {SECRET_BYTES} bytes")


MATCH_PREFIX = b"kahuna-arena/match/1\n"


@dataclass(frozen=True)
class MatchIdentity:
    """Who meets whom, and when: round number, then (bot name, version) of the bot in
    seat 0 of game 0 (``first``) and of the other (``second``)."""

    round: int
    first: tuple[str, str]
    second: tuple[str, str]

    def canonical(self) -> bytes:
        """``[round,[first name,first version],[second name,second version]]`` as compact
        JSON (no spaces, non-ASCII escaped): the bytes the seed material hashes."""
        value = [self.round, list(self.first), list(self.second)]
        return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode()


STANDALONE = MatchIdentity(0, ("", ""), ("", ""))
"""The identity of an ``arena match``: its secret is its own, so the same ``--seed``
deals the same cards whichever two bots play."""


def match_seed_material(secret: bytes, identity: MatchIdentity) -> bytes:
    """Secret + match identity -> that match's seed material (32 bytes).

    HMAC-SHA256(secret, ``MATCH_PREFIX + identity.canonical()``). It keys every
    deal and reshuffle of that one match (``deal_seed``), so a worker that plays
    the match gets it and never the secret, and anyone who knows the revealed
    secret can recompute it from the match's public identity.
    """
    check_secret(secret)
    return hmac.new(secret, MATCH_PREFIX + identity.canonical(), hashlib.sha256).digest()


def deal_seed(material: bytes, deal_index: int) -> int:
    """The seed of deal ``deal_index`` of the match whose seed material is ``material``.

    HMAC-SHA256 keyed by ``material`` of ``"kahuna-deal/3:{deal_index}"``, first 8
    bytes big-endian, top bit cleared: stable across machines and versions.
    """
    text = f"kahuna-deal/3:{deal_index:d}".encode()
    digest = hmac.new(material, text, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << SEED_BITS) - 1)


def earlier_deal_seed(secret: bytes, match_seed: int, deal_index: int) -> int:
    """The seed of deal ``deal_index`` as arenas dealt before ``deal_seed``: from the
    tournament's secret and the seed stored with each match (``matches.seed``).

    HMAC-SHA256 keyed by ``secret`` of ``"kahuna-deal/2:{match_seed}:{deal_index}"``,
    first 8 bytes big-endian, top bit cleared. Kept so that the tournaments those
    arenas played still audit, and a match of theirs that was half played resumes on
    its own deals; the commitment does not bind a stored match seed, so those deals
    are not shown to be fixed in advance.
    """
    check_secret(secret)
    text = f"kahuna-deal/2:{match_seed:d}:{deal_index:d}".encode()
    digest = hmac.new(secret, text, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << SEED_BITS) - 1)


COMMITMENT_PREFIX = b"kahuna-arena/seed-commitment/1\n"


def seed_commitment(secret: bytes, parameters: bytes) -> str:
    """The public commitment to a tournament's deal ``secret`` and its ``parameters``.

    Hex SHA-256 of ``COMMITMENT_PREFIX + secret + parameters``. The secret is
    ``SECRET_BYTES`` fresh random bytes, so it is its own salt: the commitment
    tells nothing about it (hiding), and no other secret or parameters give the
    same digest (binding). Published when the tournament is created; the secret
    is revealed once it is finished, and anyone can then recompute this.
    """
    check_secret(secret)
    return hashlib.sha256(COMMITMENT_PREFIX + secret + parameters).hexdigest()
