"""Information-state sampling: full game states a seat cannot tell apart.

    sampler = InfoStateSampler(observation, seed=7)
    state = sampler.sample()          # an arena.kahuna.State
    legal = arena.kahuna.legal_actions(state)

A sample puts the cards the seat has not seen (``HiddenPlaces.pool``) into
the places it cannot see: the opponent's hand next to the cards the public
history proves it holds, the opponent's face-down discards of this round and
the draw pile. Every arrangement of the unseen cards that keeps what the
history proves (see ``arena.kahuna.determinize``) is equally likely: a
Fisher-Yates shuffle of the pool (indices from ``random()``, a bias below
2**-50), dealt in order, redrawn in the rare case
that a card proven to be in the opponent's hand or face-down discards went
to the pile (and, where redraws keep missing, one allowed arrangement drawn
directly, ``arena.kahuna.determinize.deal_unseen``). ``observe(state, seat)``
of every sample equals the observation.

What the sampler does not weigh: how likely each world makes the
opponent's *choices*. An opponent that placed an ALOA had one, which makes
it less likely to hold the other ALOA still than a uniform deal of the
unseen cards says (on one small position, enumerated: 144 of the 432
consistent deals leave it without ALOA, 33%, where the sampler says 25%).
Without a model of the opponent, every world that keeps what the history
proves counts the same. Draws come from ``random.Random(seed)`` (or the
generator you pass), so a seed fixes every sample.
"""

from __future__ import annotations

import random
from collections import Counter

from arena.kahuna.determinize import Completion, HiddenPlaces, deal_unseen
from arena.kahuna.observe import Observation as EngineObservation
from arena.kahuna.state import State
from kahuna_bot.observation import Observation

MAX_REDRAWS = 200


class InfoStateSampler:
    """Samples full states for one observation; build once per decision."""

    __slots__ = ("_completion", "_held", "_hidden", "_pool", "_reach", "_rng", "places")

    def __init__(
        self,
        observation: Observation | EngineObservation,
        seed: int | None = None,
        *,
        rng: random.Random | None = None,
    ) -> None:
        engine_obs = observation.engine() if isinstance(observation, Observation) else observation
        self._completion = Completion(engine_obs)
        self.places: HiddenPlaces = self._completion.places
        self._rng = rng if rng is not None else random.Random(seed)
        self._pool = list(self.places.pool)
        self._hidden = self.places.opponent_hidden
        self._reach = self._hidden + self.places.opponent_facedown
        self._held = Counter(self.places.held)

    def deal(self) -> tuple[list[int], list[int], list[int]]:
        """One uniform arrangement: (hidden hand, face-down discards, pile top first).

        The opponent's places (hand, then face-down discards) are filled first by a
        partial Fisher-Yates shuffle, redrawn until they hold the proven cards
        (rejection keeps every allowed arrangement equally likely); only then is the
        rest of the pool shuffled into the pile, once. After ``MAX_REDRAWS`` misses
        (proven cards that almost no shuffle keeps) ``deal_unseen`` draws one
        directly, as likely as a redraw would; ValueError only when none exists."""
        pool, hidden, reach = self._pool, self._hidden, self._reach
        uniform = self._rng.random
        size = len(pool)
        held = self._held
        for _ in range(MAX_REDRAWS):
            for i in range(reach):  # Fisher-Yates from the front, the opponent's slots
                j = i + int(uniform() * (size - i))
                pool[i], pool[j] = pool[j], pool[i]
            if not held or _holds(pool, reach, held):
                break
        else:  # the proven cards rarely land in front: draw an allowed arrangement directly
            return deal_unseen(self.places, uniform)
        for i in range(size - 1, reach, -1):  # the pile: the rest, uniformly ordered
            j = reach + int(uniform() * (i - reach + 1))
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:hidden], pool[hidden:reach], pool[reach:]

    def sample(self) -> State:
        """One full state consistent with everything the seat has seen."""
        hand, facedown, deck = self.deal()
        return self._completion.state(hand, facedown, deck)


def _holds(pool: list[int], reach: int, held: Counter[int]) -> bool:
    """The first ``reach`` cards of the pool include the ``held`` multiset."""
    front = pool[:reach]
    return all(front.count(card) >= need for card, need in held.items())


def sample_state(observation: Observation | EngineObservation, rng: random.Random) -> State:
    """One full state for ``observation`` drawn with ``rng`` (see ``InfoStateSampler``)."""
    return InfoStateSampler(observation, rng=rng).sample()


__all__ = ["HiddenPlaces", "InfoStateSampler", "sample_state"]
