"""What a match tells a live watcher while a game is played (``run_match(on_event=...)``).

Events carry full information (the deal, every card drawn): they are for the
arena's admin view and tracing, never for a bot. ``live_entry`` turns an event
after the start into the JSON entry a store keeps: an action in docs/reference/RECORD.md JSON
with ``"seat"``, ``"wall_ms"`` (the bot's thinking time) and ``"at_ms"`` (when the
referee applied it, Unix time in milliseconds, when known), or a reshuffle
``{"reshuffle": [cards...], "round": n}`` (the order the next round starts
with). ``GameStarted.head`` is the record before any action (format, variant,
handicap, deal, and under ``"match"`` the match id, game index, bots by seat
and time control), so head plus entries replay the game so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.kahuna import Action


@dataclass(frozen=True, slots=True)
class GameStarted:
    game_index: int
    head: dict[str, object]


@dataclass(frozen=True, slots=True)
class ActionApplied:
    """An action the rules accepted, right after it was applied."""

    game_index: int
    seat: int
    action: Action
    elapsed_ms: float
    applied_at: float | None = None  # time.time() right after it was applied


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """Round ``round`` begins with the draw pile in ``order`` (R6 reshuffle)."""

    game_index: int
    round: int
    order: tuple[str, ...]


LiveEvent = GameStarted | ActionApplied | RoundStarted
LiveHook = Callable[[LiveEvent], None]


def live_entry(event: ActionApplied | RoundStarted) -> dict[str, object]:
    """The JSON entry a live view stores for an event after the game's start."""
    if isinstance(event, RoundStarted):
        return {"reshuffle": list(event.order), "round": event.round}
    entry: dict[str, object] = {"seat": event.seat, **_action_json(event.action)}
    if "cards" in entry:
        entry["cards"] = list(event.action.cards or ())  # each entry its own list
    entry["wall_ms"] = round(event.elapsed_ms, 3)
    if event.applied_at is not None:
        entry["at_ms"] = round(event.applied_at * 1000)
    return entry


_ACTION_JSON: dict[int, tuple[Action, dict[str, object]]] = {}
_ACTION_JSON_MAX_ENTRIES = 10_000


def _action_json(action: Action) -> dict[str, object]:
    """``action.to_json()``, cached by the action's identity (the engine's actions are
    interned; the entry keeps its action alive, so the id is not reused). Read-only."""
    found = _ACTION_JSON.get(id(action))
    if found is None or found[0] is not action:
        if len(_ACTION_JSON) >= _ACTION_JSON_MAX_ENTRIES:
            _ACTION_JSON.clear()
        found = _ACTION_JSON[id(action)] = (action, action.to_json())
    return found[1]
