"""The Parquet schemas of an export and the rows of one game (docs/reference/export.md).

A game's row says who played (bots, versions, ratings before and after),
how it ended and how long it was; its decision rows say, for every action in
order, what the acting seat saw (its observation as the referee sends it,
without the history, and as the ``arena.kahuna.encoding`` vector), what it
could do, what it did and how long it took.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from arena.kahuna import Action, observation_to_json, observe, parse_record
from arena.kahuna.encoding import action_index, encode_observation
from arena.kahuna.legal import legal_actions
from arena.kahuna.records import replay_steps
from arena.store.export import StoredGame

GAMES_SCHEMA = pa.schema(
    [
        pa.field("game_id", pa.int64(), nullable=False),
        pa.field("tournament", pa.string(), nullable=False),
        pa.field("tournament_format", pa.string(), nullable=False),
        pa.field("match_id", pa.int64(), nullable=False),
        pa.field("round", pa.int32(), nullable=False),
        pa.field("game_index", pa.int32(), nullable=False),
        pa.field("seat0_bot", pa.string(), nullable=False),
        pa.field("seat0_version", pa.string(), nullable=False),
        pa.field("seat1_bot", pa.string(), nullable=False),
        pa.field("seat1_version", pa.string(), nullable=False),
        pa.field("seat0_mu_before", pa.float64(), nullable=False),
        pa.field("seat0_sigma_before", pa.float64(), nullable=False),
        pa.field("seat1_mu_before", pa.float64(), nullable=False),
        pa.field("seat1_sigma_before", pa.float64(), nullable=False),
        pa.field("seat0_mu_after", pa.float64(), nullable=False),
        pa.field("seat0_sigma_after", pa.float64(), nullable=False),
        pa.field("seat1_mu_after", pa.float64(), nullable=False),
        pa.field("seat1_sigma_after", pa.float64(), nullable=False),
        pa.field("strategic", pa.bool_(), nullable=False),
        pa.field("tactical", pa.bool_(), nullable=False),
        pa.field("winner_seat", pa.int8()),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("seat0_points", pa.int32()),
        pa.field("seat1_points", pa.int32()),
        pa.field("seat0_status", pa.string(), nullable=False),
        pa.field("seat1_status", pa.string(), nullable=False),
        pa.field("actions", pa.int32(), nullable=False),
        pa.field("rounds", pa.int32(), nullable=False),
        pa.field("seat0_time_ms", pa.float64(), nullable=False),
        pa.field("seat1_time_ms", pa.float64(), nullable=False),
        pa.field("seat0_startup_ms", pa.float64(), nullable=False),
        pa.field("seat1_startup_ms", pa.float64(), nullable=False),
        pa.field("finished_at", pa.string(), nullable=False),
        pa.field("record", pa.string(), nullable=False),
    ]
)

DECISIONS_SCHEMA = pa.schema(
    [
        pa.field("game_id", pa.int64(), nullable=False),
        pa.field("ply", pa.int32(), nullable=False),
        pa.field("round", pa.int32(), nullable=False),
        pa.field("seat", pa.int8(), nullable=False),
        pa.field("observation", pa.string(), nullable=False),
        pa.field("history_length", pa.int32(), nullable=False),
        pa.field("observation_vector", pa.list_(pa.float32()), nullable=False),
        pa.field("legal_actions", pa.list_(pa.string()), nullable=False),
        pa.field("action", pa.string(), nullable=False),
        pa.field("action_index", pa.int16(), nullable=False),
        pa.field("wall_ms", pa.float64()),
    ]
)


def game_rows(game: StoredGame) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The game's row and its decision rows (MalformedRecordError on a bad record)."""
    record = parse_record(game.record_json)
    walls = _walls(record.extra.get("match"), record.actions)
    decisions: list[dict[str, Any]] = []
    state = None
    for step in replay_steps(record):
        state = step.state
        ply = step.action + 1
        if step.stopped is not None or ply >= len(record.actions):
            break
        seat = state.to_move
        if seat is None:
            break
        seen = observe(state, seat, history=False)
        seen_json = observation_to_json(seen)
        seen_json.pop("history")
        action = record.actions[ply][1]
        decisions.append(
            {
                "game_id": game.game_id,
                "ply": ply,
                "round": state.round,
                "seat": seat,
                "observation": json.dumps(seen_json, separators=(",", ":")),
                "history_length": state.history_length,
                "observation_vector": encode_observation(seen),
                "legal_actions": [a.text() for a in legal_actions(state)],
                "action": action.text(),
                "action_index": action_index(action),
                "wall_ms": walls[ply] if walls is not None else None,
            }
        )
    result = record.result
    (mu0, sigma0), (mu1, sigma1) = game.rating_before
    (after_mu0, after_sigma0), (after_mu1, after_sigma1) = game.rating_after
    row = {
        "game_id": game.game_id,
        "tournament": game.tournament,
        "tournament_format": game.tournament_format,
        "match_id": game.match_id,
        "round": game.round,
        "game_index": game.game_index,
        "seat0_bot": game.bots[0],
        "seat0_version": game.versions[0],
        "seat1_bot": game.bots[1],
        "seat1_version": game.versions[1],
        "seat0_mu_before": mu0,
        "seat0_sigma_before": sigma0,
        "seat1_mu_before": mu1,
        "seat1_sigma_before": sigma1,
        "seat0_mu_after": after_mu0,
        "seat0_sigma_after": after_sigma0,
        "seat1_mu_after": after_mu1,
        "seat1_sigma_after": after_sigma1,
        "strategic": record.variant.strategic,
        "tactical": record.variant.tactical,
        "winner_seat": game.winner_seat,
        "reason": game.reason,
        "seat0_points": None if result is None else result.points[0],
        "seat1_points": None if result is None else result.points[1],
        "seat0_status": game.statuses[0],
        "seat1_status": game.statuses[1],
        "actions": len(record.actions),
        "rounds": 1 if state is None else state.round,
        "seat0_time_ms": game.time_ms[0],
        "seat1_time_ms": game.time_ms[1],
        "seat0_startup_ms": game.startup_ms[0],
        "seat1_startup_ms": game.startup_ms[1],
        "finished_at": game.finished_at,
        "record": game.record_json,
    }
    return row, decisions


def _walls(match: object, actions: tuple[tuple[int | None, Action], ...]) -> list[float] | None:
    """Each action's wall time from the record's ``match.timings``, when they line up."""
    timings = match.get("timings") if isinstance(match, dict) else None
    if not isinstance(timings, list) or len(timings) != len(actions):
        return None
    walls: list[float] = []
    for timing, (seat, _) in zip(timings, actions, strict=True):
        if not isinstance(timing, dict) or timing.get("seat") not in (seat, None):
            return None
        wall = timing.get("wall_ms")
        if not isinstance(wall, int | float) or isinstance(wall, bool):
            return None
        walls.append(float(wall))
    return walls

