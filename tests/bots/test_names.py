"""Reserved bot names: every sample bot the arena ships, whatever the case."""

from __future__ import annotations

import pytest

from arena.bots.names import reserved_bot_names, reserved_name_problem
from arena.resources import sample_bots_dir


def test_every_sample_bot_name_is_reserved() -> None:
    shipped = {d.name for d in sample_bots_dir().iterdir() if (d / "bot.toml").is_file()}
    assert shipped and shipped <= reserved_bot_names()


@pytest.mark.parametrize("name", ["python_random", "Python_Random", "JAVA_RANDOM"])
def test_a_reserved_name_is_refused_whatever_its_case(name: str) -> None:
    assert reserved_name_problem(name) == (
        f"bot name {name!r} is reserved for the arena's own sample and house bots:"
        " choose another name"
    )


def test_other_names_are_free() -> None:
    assert reserved_name_problem("python_random2") is None
