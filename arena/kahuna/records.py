"""Game records (docs/reference/RECORD.md, ``kahuna-record/1``): read, write, replay, summarise.

``parse_record`` is the edge: it checks every type and name once and turns
any problem into a one-line MalformedRecordError. ``replay_steps`` then
walks the record position by position and stops at the first illegal
action; ``replay`` (the final position) and the web's replay viewer
(``arena/web/frames.py``, every position) both use it.

Readings of points docs/reference/RECORD.md leaves open:

- Optional keys (``variant``, ``handicap``, ``reshuffles``, ``actions``,
  ``result``, and an action's ``seat``/``card``/``line``/``cards``) given as
  null count as absent. ``handicap: []`` is malformed (1-3 bridges).
- Every action is read before any is applied: a malformed action anywhere
  (unknown type or island, wrong JSON types, seat not 0/1) makes the whole
  record malformed. Keys no action uses are ignored (per-action metadata).
- A seat that does not match the seat to move is illegal (R3), reported
  like any other illegal action.
- When an action ends round 1 or 2, the next round is dealt from
  ``reshuffles`` at once, so the C6 check at the start of the round happens
  there and a record ending on that action prints the new round. A missing
  or wrong reshuffle is a malformed record.
- A reshuffle for a round the game never reaches is only checked for names.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from arena.kahuna.actions import Action, action_from_json
from arena.kahuna.board import ISLAND_INDEX, ISLANDS, LINES, line_index
from arena.kahuna.errors import (
    IllegalActionError,
    MalformedActionError,
    MalformedRecordError,
    SetupError,
)
from arena.kahuna.legal import legal_actions
from arena.kahuna.observe import outcome_to_json
from arena.kahuna.rng import choice_stream, deal_from_seed, reshuffle_from_seed
from arena.kahuna.rules import apply, new_game, start_round
from arena.kahuna.state import HandicapBridge, Outcome, State, Termination, Variant

FORMAT = "kahuna-record/1"
MAX_RESHUFFLES = 2
_KNOWN_KEYS = frozenset(
    {"format", "variant", "handicap", "deal", "reshuffles", "actions", "result"}
)


@dataclass(frozen=True)
class Record:
    """A parsed record. ``actions`` holds (seat or None when not given, action)."""

    variant: Variant
    handicap: tuple[HandicapBridge, ...]
    deal: tuple[str, ...]
    reshuffles: tuple[tuple[str, ...], ...]
    actions: tuple[tuple[int | None, Action], ...]
    result: Outcome | None
    extra: Mapping[str, object] = field(default_factory=dict)
    action_json: tuple[object, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class ReplayError:
    """The first illegal action: its 0-based index, its JSON as given, the rule broken."""

    index: int
    action: object
    error: IllegalActionError

    def message(self) -> str:
        """The stderr line of docs/reference/RECORD.md: ``action 57 {"type": "draw"}: C5: ...``."""
        try:
            shown = json.dumps(self.action)
        except (ValueError, TypeError, RecursionError):
            shown = "<an action that cannot be shown as JSON>"
        return f"action {self.index} {shown}: {self.error}"


@dataclass(frozen=True)
class Replay:
    state: State  # after the last legal action
    error: ReplayError | None


# ------------------------------------------------------------------ parsing


def parse_record(text: str | bytes) -> Record:
    """Read a kahuna-record/1; MalformedRecordError with a one-line reason."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise MalformedRecordError("not JSON: nested too deeply") from None
    except (ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MalformedRecordError(f"not JSON: {reason}") from None
    return record_from_json(data)


def record_from_json(data: object) -> Record:
    """A record from already-decoded JSON; MalformedRecordError on any bad part."""
    if not isinstance(data, dict):
        raise MalformedRecordError("a record must be a JSON object")
    if data.get("format") != FORMAT:
        raise MalformedRecordError(f"'format' must be {FORMAT!r}, not {data.get('format')!r:.60}")
    # Optional keys: absent and null mean the same (off / none / empty).
    variant = _parse_variant(_or(data.get("variant"), {}))
    handicap = _parse_handicap(data["handicap"]) if data.get("handicap") is not None else ()
    deal = _parse_deal(data.get("deal"))
    reshuffles = _parse_reshuffles(_or(data.get("reshuffles"), []))
    raw_actions = _or(data.get("actions"), [])
    if not isinstance(raw_actions, list):
        raise MalformedRecordError("'actions' must be a list")
    actions = []
    for index, raw in enumerate(raw_actions):
        try:
            action, seat = action_from_json(raw)
        except MalformedActionError as exc:
            raise MalformedRecordError(f"action {index} {_dump(raw)}: {exc}") from None
        actions.append((seat, action))
    result = _parse_result(data["result"]) if data.get("result") is not None else None
    return Record(
        variant=variant,
        handicap=handicap,
        deal=deal,
        reshuffles=reshuffles,
        actions=tuple(actions),
        result=result,
        extra={key: value for key, value in data.items() if key not in _KNOWN_KEYS},
        action_json=tuple(raw_actions),
    )


def _or(value: object, default: object) -> object:
    return default if value is None else value


def _dump(value: object, limit: int = 200) -> str:
    try:
        text = json.dumps(value)
    except (ValueError, RecursionError):
        text = "<unprintable>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parse_variant(raw: object) -> Variant:
    if not isinstance(raw, dict):
        raise MalformedRecordError("'variant' must be an object")
    flags = {}
    for key in ("strategic", "tactical"):
        value = raw.get(key, False)
        if not isinstance(value, bool):
            raise MalformedRecordError(f"variant '{key}' must be true or false")
        flags[key] = value
    return Variant(**flags)


def _parse_handicap(raw: object) -> tuple[HandicapBridge, ...]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= 3:
        raise MalformedRecordError("'handicap' must be a list of 1 to 3 bridges")
    bridges = []
    for entry in raw:
        if not isinstance(entry, dict):
            raise MalformedRecordError("each handicap bridge must be an object")
        seat, line = entry.get("seat"), entry.get("line")
        if type(seat) is not int or seat not in (0, 1):
            raise MalformedRecordError(f"handicap 'seat' must be 0 or 1, not {seat!r:.40}")
        try:
            canonical = LINES[line_index(line)]  # type: ignore[arg-type]
        except MalformedActionError as exc:
            raise MalformedRecordError(f"handicap: {exc}") from None
        bridges.append(HandicapBridge(seat, canonical))
    if len({b.seat for b in bridges}) != 1:
        raise MalformedRecordError("handicap bridges must all belong to one seat")
    if len({b.line for b in bridges}) != len(bridges):
        raise MalformedRecordError("handicap lines must be distinct")
    return tuple(bridges)


def _island_list(raw: object, what: str) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise MalformedRecordError(f"{what} must be a list of island names")
    names = []
    for position, name in enumerate(raw):
        canonical = name.upper() if isinstance(name, str) else None
        if canonical not in ISLAND_INDEX:
            raise MalformedRecordError(
                f"{what} names an unknown island at position {position}: {_dump(name, 40)}"
            )
        names.append(canonical)
    return tuple(names)  # type: ignore[arg-type]


def _parse_deal(raw: object) -> tuple[str, ...]:
    if raw is None:
        raise MalformedRecordError("the record has no 'deal'")
    deal = _island_list(raw, "'deal'")
    if len(deal) != 24 or any(deal.count(island) != 2 for island in ISLANDS):
        raise MalformedRecordError("'deal' must hold exactly 2 cards of each of the 12 islands")
    return deal


def _parse_reshuffles(raw: object) -> tuple[tuple[str, ...], ...]:
    if not isinstance(raw, list) or len(raw) > MAX_RESHUFFLES:
        raise MalformedRecordError("'reshuffles' must be a list of at most 2 card lists")
    return tuple(_island_list(order, f"reshuffle {k}") for k, order in enumerate(raw))


def _parse_result(raw: object) -> Outcome:
    if not isinstance(raw, dict):
        raise MalformedRecordError("'result' must be an object")
    winner, reason, points = raw.get("winner"), raw.get("reason"), raw.get("points")
    if winner is not None and (type(winner) is not int or winner not in (0, 1)):
        raise MalformedRecordError("result 'winner' must be 0, 1 or null")
    if not isinstance(reason, str) or reason not in {t.value for t in Termination}:
        raise MalformedRecordError(f"result 'reason' is not a known reason: {_dump(reason, 40)}")
    if (
        not isinstance(points, list)
        or len(points) != 2
        or not all(type(p) is int for p in points)
    ):
        raise MalformedRecordError("result 'points' must be a list of two integers")
    return Outcome(winner, Termination(reason), (points[0], points[1]))


# ------------------------------------------------------------------ writing


def record_to_json(record: Record) -> dict[str, object]:
    """The JSON object of a record (docs/reference/RECORD.md key order; extra keys after)."""
    data: dict[str, object] = {
        "format": FORMAT,
        "variant": {"strategic": record.variant.strategic, "tactical": record.variant.tactical},
    }
    if record.handicap:
        data["handicap"] = [{"seat": b.seat, "line": b.line} for b in record.handicap]
    data["deal"] = list(record.deal)
    data["reshuffles"] = [list(order) for order in record.reshuffles]
    data["actions"] = [
        ({"seat": seat} if seat is not None else {}) | action.to_json()
        for seat, action in record.actions
    ]
    if record.result is not None:
        data["result"] = outcome_to_json(record.result)
    for key, value in record.extra.items():
        if key not in data:
            data[key] = value
    return data


def record_of(
    state: State,
    deal: Sequence[str],
    reshuffles: Sequence[Sequence[str]],
    extra: Mapping[str, object] | None = None,
) -> Record:
    """The record of the game that led to ``state``."""
    return Record(
        variant=state.variant,
        handicap=state.handicap,
        deal=tuple(deal),
        reshuffles=tuple(tuple(order) for order in reshuffles),
        actions=tuple((event.seat, event.action) for event in state.history),
        result=state.outcome,
        extra=dict(extra or {}),
    )


# ------------------------------------------------------------------ replay


class ReplayStep(NamedTuple):
    """One position of a replay: the start (``action`` -1) or the one after action ``action``.

    ``round_began``: that action ended a round and the next one was dealt from
    the record's reshuffles, so ``state`` is the new round's start (R6).
    ``stopped``: the record's next action is illegal here, so this is the last step.
    A NamedTuple, not a frozen dataclass: one is built per action, and a frozen
    dataclass cost replay a fifth of its speed (benchmarks/engine.py).
    """

    action: int
    state: State
    round_began: bool = False
    stopped: ReplayError | None = None


def replay_steps(record: Record) -> Iterator[ReplayStep]:
    """Every position of ``record`` in order, the start first; the one walk of a record.

    It ends after the last action, or at the first illegal one (the last step's
    ``stopped``). MalformedRecordError, once reached, when the deal, the
    handicap or a reshuffle the game needs is bad or missing.
    """
    try:
        state = new_game(record.deal, record.variant, record.handicap)
    except SetupError as exc:
        raise MalformedRecordError(str(exc)) from None
    step = ReplayStep(-1, state)
    for index, (seat, action) in enumerate(record.actions):
        try:
            after = apply(step.state, action, seat)
        except IllegalActionError as exc:
            raw = record.action_json[index] if index < len(record.action_json) else None
            if raw is None:
                raw = ({"seat": seat} if seat is not None else {}) | action.to_json()
            yield step._replace(stopped=ReplayError(index, raw, exc))
            return
        yield step
        if after.needs_reshuffle:
            step = ReplayStep(index, _deal_next_round(after, record), round_began=True)
        else:
            step = ReplayStep(index, after)
    yield step


def replay(record: Record) -> Replay:
    """Apply a record's actions; stop at the first illegal one.

    MalformedRecordError when the deal, handicap or a reshuffle the game needs
    is bad or missing.
    """
    last = deque(replay_steps(record), maxlen=1)[0]
    return Replay(last.state, last.stopped)


def _deal_next_round(state: State, record: Record) -> State:
    k = state.round - 1
    if k >= len(record.reshuffles):
        raise MalformedRecordError(f"the game reaches round {k + 2} but 'reshuffles' has no "
                                   f"entry {k} for it")
    try:
        return start_round(state, record.reshuffles[k])
    except SetupError as exc:
        raise MalformedRecordError(str(exc)) from None


def state_summary(state: State, *, legal: bool = False) -> dict[str, object]:
    """What ``arena replay`` prints (docs/reference/RECORD.md)."""
    outcome = state.outcome
    summary: dict[str, object] = {
        "finished": outcome is not None,
        "winner": outcome.winner if outcome else None,
        "reason": outcome.termination.value if outcome else None,
        "round": state.round,
        "to_move": state.to_move,
        "points": list(state.points),
        "controlled": dict(sorted(state.controlled.items())),
        "bridges": dict(sorted(state.bridges.items())),
        "hands": [list(hand) for hand in state.hands],
        "faceup": list(state.faceup),
        "deck_size": state.deck_size,
    }
    if legal:
        summary["legal"] = sorted({action.text() for action in legal_actions(state)})
    return summary


def play_random_game(
    seed: int, variant: Variant = Variant(), choices: int | None = None  # noqa: B008
) -> Record:
    """A complete game of uniformly random legal actions, reproducible from ``seed``
    (the deal and reshuffles; the actions from ``choices`` if given, else ``seed`` too)."""
    deal = deal_from_seed(seed)
    rng = choice_stream(seed if choices is None else choices)
    state = new_game(deal, variant)
    reshuffles: list[tuple[str, ...]] = []
    while not state.is_finished:
        if state.needs_reshuffle:
            order = reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
            reshuffles.append(order)
            state = start_round(state, order)
            continue
        actions = legal_actions(state)
        state = apply(state, actions[rng.below(len(actions))])
    return record_of(state, deal, reshuffles)
