"""Deals and reshuffles from a seed, identical on every machine and Python version.

splitmix64 (Steele, Lea, Flood 2014) drives a Fisher-Yates shuffle. Nothing
here uses ``random``: its algorithms are free to change between versions.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.kahuna.board import CARDS_PER_ISLAND, ISLANDS

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


class SplitMix64:
    """A tiny, fully specified 64-bit generator."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK64

    def next_u64(self) -> int:
        self._state = (self._state + _GOLDEN) & _MASK64
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """A uniform integer in [0, bound), by rejection (no modulo bias)."""
        if bound <= 0:
            raise ValueError("bound must be positive")
        limit = (1 << 64) - ((1 << 64) % bound)
        while True:
            value = self.next_u64()
            if value < limit:
                return value % bound


def shuffled(items: Sequence[str], rng: SplitMix64) -> tuple[str, ...]:
    """Fisher-Yates: a uniformly random order of ``items``."""
    order = list(items)
    for i in range(len(order) - 1, 0, -1):
        j = rng.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def _stream(seed: int, purpose: int) -> SplitMix64:
    """An independent generator per (seed, purpose): deal, reshuffles, choices."""
    mixer = SplitMix64(seed)
    base = mixer.next_u64()
    return SplitMix64(base ^ ((purpose * _GOLDEN) & _MASK64))


def deal_from_seed(seed: int) -> tuple[str, ...]:
    """The deal (R2) for a seed: an order of the 24 cards."""
    cards = [island for island in ISLANDS for _ in range(CARDS_PER_ISLAND)]
    return shuffled(cards, _stream(seed, 0))


def reshuffle_from_seed(seed: int, round_no: int, cards: Sequence[str]) -> tuple[str, ...]:
    """The new draw pile of round ``round_no`` (2 or 3) from the discard pile ``cards``.

    The result depends only on the multiset of ``cards``, not on their order.
    """
    return shuffled(sorted(cards), _stream(seed, round_no))


def choice_stream(seed: int) -> SplitMix64:
    """The generator a seeded random player uses to choose actions."""
    return _stream(seed, 1000)
