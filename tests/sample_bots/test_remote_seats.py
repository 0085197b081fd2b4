"""What plays each seat ``kahuna_bot.remote.serve_seats`` is given: seats in play at once
(one thread each) must not share one match's state unless the bot has none."""

from __future__ import annotations

from kahuna_bot import Action, Bot, Observation
from kahuna_bot.remote import seat_player


class Remembering(Bot):
    """A bot that keeps state of its match on itself, as a search tree would."""

    def choose(self, observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
        return legal_actions[0]


def first_legal(observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
    return legal_actions[0]


def test_a_bot_class_gives_each_seat_an_instance_of_its_own() -> None:
    one, other = seat_player(Remembering), seat_player(Remembering)
    assert isinstance(one, Remembering) and isinstance(other, Remembering)
    assert one is not other


def test_an_instance_or_a_function_is_what_every_seat_plays() -> None:
    shared = Remembering()
    assert seat_player(shared) is shared
    assert seat_player(first_legal) is first_legal
