"""Kahuna, the game: pure rules, standard library only, no I/O, no logging.

The public API (docs/CONTRACTS.md, ``arena.kahuna``) is importable from here.
"""

from arena.kahuna.actions import (
    PASS_ACTION,
    Action,
    ActionType,
    action_from_json,
    discard,
    draw,
    parse_action,
    place,
    remove,
)
from arena.kahuna.board import (
    BRIDGES_PER_SEAT,
    ISLAND_POSITIONS,
    ISLANDS,
    LINE_ISLANDS,
    LINES,
    LINES_OF,
    MAJORITY,
    canonical_line,
)
from arena.kahuna.errors import (
    IllegalActionError,
    KahunaError,
    MalformedActionError,
    MalformedRecordError,
)
from arena.kahuna.legal import is_legal, legal_actions
from arena.kahuna.observe import (
    Observation,
    SeenEvent,
    observation_to_json,
    observe,
    outcome_to_json,
)
from arena.kahuna.records import (
    Record,
    Replay,
    ReplayError,
    parse_record,
    play_random_game,
    record_from_json,
    record_of,
    record_to_json,
    replay,
    state_summary,
)
from arena.kahuna.rng import deal_from_seed, reshuffle_from_seed
from arena.kahuna.rules import apply, apply_legal, new_game, start_round
from arena.kahuna.state import (
    Event,
    HandicapBridge,
    Outcome,
    State,
    Termination,
    Variant,
)

__all__ = [
    "BRIDGES_PER_SEAT",
    "ISLANDS",
    "ISLAND_POSITIONS",
    "LINES",
    "LINES_OF",
    "LINE_ISLANDS",
    "MAJORITY",
    "PASS_ACTION",
    "Action",
    "ActionType",
    "Event",
    "HandicapBridge",
    "IllegalActionError",
    "KahunaError",
    "MalformedActionError",
    "MalformedRecordError",
    "Observation",
    "Outcome",
    "Record",
    "Replay",
    "ReplayError",
    "SeenEvent",
    "State",
    "Termination",
    "Variant",
    "action_from_json",
    "apply",
    "apply_legal",
    "canonical_line",
    "deal_from_seed",
    "discard",
    "draw",
    "is_legal",
    "legal_actions",
    "new_game",
    "observation_to_json",
    "observe",
    "outcome_to_json",
    "parse_action",
    "parse_record",
    "place",
    "play_random_game",
    "record_from_json",
    "record_of",
    "record_to_json",
    "remove",
    "replay",
    "reshuffle_from_seed",
    "start_round",
    "state_summary",
]
