"""The greedy bot's evaluation, which lives in the SDK (``kahuna_bot.greedy``)
so that other bots (``python_ismcts``) can use it inside the sandbox."""

from kahuna_bot.greedy import (
    NO_BRIDGES_VALUE,
    after_place,
    after_remove,
    board_value,
    card_usefulness,
    choose,
    controlled_difference,
    controller,
    counts,
    ends_round,
    island_value,
    no_bridges_value,
    position_value,
    score_action,
)

__all__ = [
    "NO_BRIDGES_VALUE",
    "after_place",
    "after_remove",
    "board_value",
    "card_usefulness",
    "choose",
    "controlled_difference",
    "controller",
    "counts",
    "ends_round",
    "island_value",
    "no_bridges_value",
    "position_value",
    "score_action",
]
