"""Seeds of a match: one deal seed per pair of games, derived from the match seed."""

from __future__ import annotations

import hashlib

SEED_BITS = 63


def deal_seed(match_seed: int, deal_index: int) -> int:
    """The seed of deal ``deal_index`` (games 2k and 2k+1) of a match.

    sha256 of ``"kahuna-deal/1:{match_seed}:{deal_index}"``, first 8 bytes
    big-endian, top bit cleared: stable across machines and versions.
    """
    text = f"kahuna-deal/1:{match_seed}:{deal_index}".encode()
    value = int.from_bytes(hashlib.sha256(text).digest()[:8], "big")
    return value & ((1 << SEED_BITS) - 1)
