"""Checks that what ``/api/play`` and the ``/play`` page show a person is their seat's view.

After the game, its stored record gives the truth: every position it went
through (``replay_steps``). A table's JSON is then held to the engine: its view
must equal ``observation_to_json(observe(state, seat))`` of the position with
as many events as the view has, its legal actions the engine's there, and it
may have no key beyond the documented ones, so a field anywhere that carries
anything more (the opponent's hand, the draw pile) fails ``check_payload``.
``check_dom`` holds the page's cards to the same view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.kahuna import (
    Record,
    State,
    legal_actions,
    observation_to_json,
    observe,
    replay_steps,
)

TABLE_KEYS = frozenset({
    "table", "bot", "seat", "variant", "status", "game", "error", "version", "view",
    "request", "legal", "clock_ms", "result", "goodbye", "reference", "duplicate",
    "rated", "unrated_reason",
})  # fmt: skip
DUPLICATE_KEYS = frozenset({
    "bot", "winner_seat", "reason", "points", "person_winner_seat", "person_points",
})  # fmt: skip
RESULT_KEYS = frozenset({"winner_seat", "reason", "points", "your_status", "opponent_status"})


class SeatLeak(AssertionError):
    """Something a seat's page or JSON holds that is not that seat's view."""


class SeatTruth:
    """The positions of one stored game, by the number of events played."""

    def __init__(self, record: Record) -> None:
        self.states: dict[int, State] = {
            len(step.state.history): step.state for step in replay_steps(record)
        }

    def state_at(self, events: int) -> State:
        if events not in self.states:
            raise SeatLeak(f"no position of the game has {events} events")
        return self.states[events]

    def view(self, events: int, seat: int) -> dict[str, object]:
        return observation_to_json(observe(self.state_at(events), seat))


def check_payload(payload: Mapping[str, object], truth: SeatTruth) -> None:
    """Raise SeatLeak unless ``payload`` (a table's JSON) holds only its seat's view."""
    extra = set(payload) - TABLE_KEYS
    if extra:
        raise SeatLeak(f"the table's JSON has keys beyond its documented ones: {sorted(extra)}")
    seat = payload["seat"]
    assert isinstance(seat, int)
    result = payload.get("result")
    if isinstance(result, Mapping) and set(result) - RESULT_KEYS:
        raise SeatLeak(f"the result has extra keys: {sorted(set(result) - RESULT_KEYS)}")
    duplicate = payload.get("duplicate")
    if duplicate is not None:
        if payload.get("status") not in ("over", "stored"):
            raise SeatLeak("a duplicate result before the person's game is over")
        if not isinstance(duplicate, Mapping) or set(duplicate) - DUPLICATE_KEYS:
            raise SeatLeak(f"the duplicate result has extra keys: {str(duplicate)[:200]}")
    view = payload.get("view")
    if view is None:
        if payload.get("legal"):
            raise SeatLeak("legal actions without a view")
        return
    if not isinstance(view, Mapping) or not isinstance(view.get("history"), list):
        raise SeatLeak(f"the view is not an observation: {str(view)[:200]}")
    events = len(view["history"])
    expected = truth.view(events, seat)
    if dict(view) != expected:
        differ = sorted(k for k in set(view) | set(expected) if view.get(k) != expected.get(k))
        raise SeatLeak(f"the view after {events} events differs from seat {seat}'s "
                       f"observation in {differ}")  # fmt: skip
    legal = payload.get("legal") or []
    assert isinstance(legal, Sequence)
    if legal:
        actions = legal_actions(truth.state_at(events))
        wanted = sorted(({"text": a.text(), **a.to_json()} for a in actions),
                        key=lambda a: str(a["text"]))  # fmt: skip
        if sorted(legal, key=lambda a: str(a["text"])) != wanted:
            raise SeatLeak(f"the legal actions after {events} events are not the engine's")


def check_dom(cards: Mapping[str, Sequence[str]], view: Mapping[str, object]) -> None:
    """``cards``: the page's ``[data-card]`` names by the id of their container. Only the
    hand, the face-up row and the open cards may be shown, each equal to the view's."""
    seat = view["seat"]
    assert isinstance(seat, int)
    open_cards = view["open_cards"]
    faceup = view["faceup"]
    assert isinstance(open_cards, list) and isinstance(faceup, list)
    expected = {
        "hand": list(view["hand"]),  # type: ignore[call-overload]
        "faceup": [card for card in faceup if card is not None],
        "own-open": list(open_cards[seat]),
        "opp-open": list(open_cards[1 - seat]),
    }
    for where, shown in cards.items():
        if where not in expected:
            raise SeatLeak(f"the page shows cards in #{where}: {list(shown)}")
        if list(shown) != expected[where]:
            raise SeatLeak(f"#{where} shows {list(shown)}, the seat sees {expected[where]}")
