"""Other worlds one seat cannot tell from the real one (for leak tests).

``other_worlds(state, seat, rng)`` deals the cards ``seat`` does not see
(the opponent's hidden hand, its face-down discards of this round, the draw
pile) anew, keeping what the public history proves (``HiddenPlaces.held``),
with ``arena.kahuna.determinize.Completion``: every world it returns gives
``seat`` exactly the observation the real state gives it. A view that shows
nothing hidden from ``seat`` must be the same in all of them.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

from arena.kahuna import State, observe
from arena.kahuna.determinize import Completion


def other_worlds(state: State, seat: int, rng: random.Random, count: int) -> Iterator[State]:
    """``count`` states ``seat`` cannot tell from ``state`` (none when the game is over)."""
    if state.is_finished or state.needs_reshuffle or state.to_move is None:
        return
    completion = Completion(observe(state, seat))
    places = completion.places
    rest = Counter(places.pool)
    rest.subtract(Counter(places.held))
    loose = list(rest.elements())
    hidden_total = places.opponent_hidden + places.opponent_facedown
    for _ in range(count):
        rng.shuffle(loose)
        spare = hidden_total - len(places.held)
        hand_or_facedown = [*places.held, *loose[:spare]]
        rng.shuffle(hand_or_facedown)
        deck = loose[spare:]
        yield completion.state(
            hand_or_facedown[: places.opponent_hidden],
            hand_or_facedown[places.opponent_hidden :],
            deck,
        )
