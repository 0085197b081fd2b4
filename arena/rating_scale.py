"""The TrueSkill scale the arena rates on: where a new bot version starts, and the
conservative rating (mu - 3 sigma) leaderboards sort by.

Both the store (a new version's row, the leaderboard's order) and the pure rating layer
(``arena.tournament.rating``) need these numbers, and the pure layer may not import the
store: so they live here, below both, and import nothing.
"""

from __future__ import annotations

INITIAL_MU = 25.0
"""A new bot version's TrueSkill mean (``arena.tournament.rating.ratings`` rates from here)."""
INITIAL_SIGMA = INITIAL_MU / 3

CONSERVATIVE_SIGMAS = 3
"""How many sigmas below mu the conservative rating is (leaderboard order, rating plots)."""


def conservative_rating(mu: float, sigma: float) -> float:
    """mu - 3 sigma: a rating its bot is very likely above; the leaderboard's order.

    The one place it is computed (the leaderboard query orders by the same
    expression in SQL, with ``CONSERVATIVE_SIGMAS``).
    """
    return mu - CONSERVATIVE_SIGMAS * sigma
