"""The heap frozen for a game: out of the collector's walks while it is played, and
thawed as any game ends, so nothing stays frozen."""

from __future__ import annotations

import gc
import weakref

import pytest

from arena.referee.heap import frozen_for_game


@pytest.fixture(autouse=True)
def _thawed() -> None:
    gc.unfreeze()  # whatever an earlier test froze: the counts below start from nothing


def test_what_is_alive_as_a_game_begins_is_frozen_until_it_ends() -> None:
    alive = [object(), [1, 2]]
    with frozen_for_game():
        assert gc.get_freeze_count() >= len(alive)
        made = [[3], [4]]  # made during the game: collected as usual
        assert gc.get_freeze_count() > 0 and made
    assert gc.get_freeze_count() == 0


def test_a_game_that_ends_thaws_the_heap_even_when_another_is_still_in_play() -> None:
    """Overlapping games: the first to end thaws everything (what the other froze too),
    so garbage frozen while alive is never kept past a game's end."""
    with frozen_for_game():
        with frozen_for_game():
            pass
        assert gc.get_freeze_count() == 0


def test_a_game_that_fails_thaws_the_heap() -> None:
    with pytest.raises(RuntimeError), frozen_for_game():
        raise RuntimeError("the game's task failed")
    assert gc.get_freeze_count() == 0


def test_cyclic_garbage_frozen_while_alive_is_collected_after_the_game() -> None:
    class Node:
        def __init__(self) -> None:
            self.me = self

    node = Node()
    ref = weakref.ref(node)
    with frozen_for_game():
        del node  # garbage now, but frozen: no collection during the game walks it
        gc.collect()
        kept_during_the_game = ref() is not None
    gc.collect()
    assert kept_during_the_game
    assert ref() is None
