"""TrueSkill per game: equal to the trueskill library on known cases."""

from __future__ import annotations

import pytest
import trueskill

from arena.tournament.rating.ratings import KAHUNA_DRAW_RATE, Rating, environment, rate_game


def test_environment_reproduces_the_published_first_game() -> None:
    # The trueskill documentation's example: two new players, default draw rate 10%.
    env = environment(draw_probability=0.10)
    winner, loser = trueskill.rate_1vs1(env.create_rating(), env.create_rating(), env=env)
    assert (round(winner.mu, 3), round(winner.sigma, 3)) == (29.396, 7.171)
    assert (round(loser.mu, 3), round(loser.sigma, 3)) == (20.604, 7.171)


@pytest.mark.parametrize(
    ("first", "second", "winner"),
    [
        (Rating(), Rating(), 0),
        (Rating(), Rating(), 1),
        (Rating(), Rating(), None),
        (Rating(30.0, 2.0), Rating(20.0, 6.0), 1),
        (Rating(18.5, 1.2), Rating(33.1, 4.4), None),
    ],
    ids=["new-first-wins", "new-second-wins", "new-draw", "upset", "uneven-draw"],
)
def test_rate_game_equals_the_library(first: Rating, second: Rating, winner: int | None) -> None:
    env = trueskill.TrueSkill(mu=25.0, sigma=25.0 / 3, draw_probability=KAHUNA_DRAW_RATE)
    a = env.create_rating(first.mu, first.sigma)
    b = env.create_rating(second.mu, second.sigma)
    if winner == 1:
        expected_b, expected_a = trueskill.rate_1vs1(b, a, env=env)
    else:
        expected_a, expected_b = trueskill.rate_1vs1(a, b, drawn=winner is None, env=env)
    got_a, got_b = rate_game(first, second, winner=winner)
    assert got_a.mu == pytest.approx(expected_a.mu) and got_a.sigma == pytest.approx(
        expected_a.sigma
    )
    assert got_b.mu == pytest.approx(expected_b.mu) and got_b.sigma == pytest.approx(
        expected_b.sigma
    )


def test_winner_gains_and_conservative_rating_is_mu_minus_three_sigma() -> None:
    a, b = rate_game(Rating(), Rating(), winner=0)
    assert a.mu > 25.0 > b.mu
    assert a.conservative == pytest.approx(a.mu - 3 * a.sigma)


def test_bad_winner_is_refused() -> None:
    with pytest.raises(ValueError, match="winner must be"):
        rate_game(Rating(), Rating(), winner=2)
