"""A live entry is the action's docs/reference/RECORD.md JSON with seat and wall time, for every
action."""

from __future__ import annotations

import pytest

from arena.kahuna import Action, parse_action
from arena.kahuna.actions import (
    DISCARD_ACTIONS,
    DRAW_DECK,
    DRAW_FACEUP_ACTIONS,
    PASS_ACTION,
    PLACE_ACTIONS,
    REMOVE_ACTIONS,
)
from arena.referee.live import ActionApplied, live_entry

ACTIONS: list[Action] = [
    *(action for row in PLACE_ACTIONS for action in row if action is not None),
    *(action for row in REMOVE_ACTIONS for action in row),
    *DISCARD_ACTIONS, DRAW_DECK, *DRAW_FACEUP_ACTIONS, PASS_ACTION,
]  # fmt: skip


@pytest.mark.parametrize("action", ACTIONS, ids=Action.text)
@pytest.mark.parametrize("seat, elapsed_ms", [(0, 0.0), (1, 12.34567), (0, 4999.9996)])
def test_entry_is_seat_action_json_and_wall_time(
    action: Action, seat: int, elapsed_ms: float
) -> None:
    entry = live_entry(ActionApplied(3, seat, action, elapsed_ms))
    expected = {"seat": seat, **action.to_json(), "wall_ms": round(elapsed_ms, 3)}
    assert entry == expected
    assert list(entry) == list(expected)  # same key order: the stored JSON is the same


def test_entries_do_not_share_their_lists() -> None:
    action = next(action for action in ACTIONS if action.cards is not None)
    first = live_entry(ActionApplied(0, 0, action, 1.0))
    second = live_entry(ActionApplied(0, 1, action, 2.0))
    first["cards"].append("X")  # type: ignore[attr-defined]
    assert second["cards"] == list(action.cards or ())
    assert action.to_json()["cards"] == list(action.cards or ())


def test_an_equal_action_built_elsewhere_gives_the_same_entry() -> None:
    action = ACTIONS[0]
    again = parse_action(action.text())
    assert live_entry(ActionApplied(0, 0, again, 1.0)) == live_entry(
        ActionApplied(0, 0, action, 1.0)
    )


def test_the_time_the_referee_applied_it_is_kept_in_milliseconds() -> None:
    """The live page's latency is measured from it (tests/web/test_live_browser.py)."""
    entry = live_entry(ActionApplied(0, 1, ACTIONS[0], 5.0, 1_800_000_000.1234))
    assert entry["at_ms"] == 1_800_000_000_123
    assert list(entry)[-2:] == ["wall_ms", "at_ms"]
