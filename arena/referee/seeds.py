"""Secret deals: every deal and reshuffle of a match is keyed by a secret no bot sees.

A match has a 32-byte ``secret`` (per tournament: stored with it; per
``arena match``: fresh from ``secrets``, or derived from ``--seed``) and a
public ``match_seed`` that only tells the matches of one secret apart. The
seed of deal ``k`` is HMAC-SHA256(secret, ``"kahuna-deal/2:{match_seed}:{k}"``):
without the secret, nothing a bot receives (records, seats, names, the
match seed) lets it compute a deal it has not been dealt. Neither the
secret nor any deal seed is ever sent to a bot or written to a record.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SEED_BITS = 63
SECRET_BYTES = 32
_SEED_KEY = b"kahuna-arena/match-secret-from-seed/1"


def new_secret() -> bytes:
    """A fresh secret of ``SECRET_BYTES`` random bytes (``secrets``)."""
    return secrets.token_bytes(SECRET_BYTES)


def secret_from_seed(seed: int) -> bytes:
    """The secret of an ``arena match --seed SEED``: reproducible by whoever knows SEED.

    The seed is never sent to a bot; a bot that guesses it (e.g. a small
    seed) can compute the deals, so a match that matters uses no --seed.
    """
    return hmac.new(_SEED_KEY, f"{seed:d}".encode(), hashlib.sha256).digest()


def check_secret(secret: object) -> None:
    """ValueError unless ``secret`` is ``SECRET_BYTES`` bytes."""
    if not isinstance(secret, bytes) or len(secret) != SECRET_BYTES:
        raise ValueError(f"a match secret is {SECRET_BYTES} bytes")


def deal_seed(secret: bytes, match_seed: int, deal_index: int) -> int:
    """The seed of deal ``deal_index`` of a match (its deal and its reshuffles).

    HMAC-SHA256 keyed by ``secret`` of ``"kahuna-deal/2:{match_seed}:{deal_index}"``,
    first 8 bytes big-endian, top bit cleared: stable across machines and versions.
    """
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
