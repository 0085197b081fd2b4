"""TrueSkill ratings, one per bot version, updated after every game.

The draw probability is Kahuna's measured draw rate (``KAHUNA_DRAW_RATE``):
how it was measured is written beside the constant. A forfeited game (a bot
timed out, crashed, made an illegal action) is rated as the loss it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import trueskill

from arena.rating_scale import INITIAL_MU, INITIAL_SIGMA, conservative_rating

# Kahuna's draw rate (R7.5: equal points, equal final points, equal bridges).
# Measured with benchmarks/draw_rate.py: 100,000 seeded uniformly random games
# (arena.kahuna.play_random_game, seeds 0..99,999) ended in 59 draws = 0.06%
# (95% Wilson interval 0.05%..0.08%). Games between the sample bots, played
# through the referee (`--bot-games 400`: 200 greedy-greedy, 200 greedy-random
# on 100 deals each) had no draw at all (95% upper bound 1.9%). Draws need a
# tie on points, on final-scoring points and on bridges, so they stay rare;
# the measured random-game rate is the draw probability.
KAHUNA_DRAW_RATE = 0.0006

MU = INITIAL_MU  # a new version's rating: where the store starts it
SIGMA = INITIAL_SIGMA


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: what leaderboards sort by."""
        return conservative_rating(self.mu, self.sigma)


def environment(draw_probability: float = KAHUNA_DRAW_RATE) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(mu=MU, sigma=SIGMA, draw_probability=draw_probability)


_ENV = environment()


def rate_game(first: Rating, second: Rating, *, winner: int | None) -> tuple[Rating, Rating]:
    """New ratings after one game; ``winner`` is 0 (first), 1 (second) or None (draw)."""
    if winner not in (0, 1, None):
        raise ValueError(f"rate_game: winner must be 0, 1 or None, not {winner!r}")
    a = _ENV.create_rating(mu=first.mu, sigma=first.sigma)
    b = _ENV.create_rating(mu=second.mu, sigma=second.sigma)
    if winner == 1:
        new_b, new_a = trueskill.rate_1vs1(b, a, env=_ENV)
    else:
        new_a, new_b = trueskill.rate_1vs1(a, b, drawn=winner is None, env=_ENV)
    return Rating(float(new_a.mu), float(new_a.sigma)), Rating(float(new_b.mu), float(new_b.sigma))
