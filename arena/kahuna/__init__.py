"""Kahuna, the game: pure rules, standard library only, no I/O, no logging.

The public API is importable from here. The
rules, the legal moves, the records and the deals are imported on first use of one
of their names (PEP 562): a sandboxed Python bot imports the engine at every launch,
twice per bot and paired match, and the SDK needs only the actions, the
board, the state and the observation (``tests/kahuna/test_lazy_api.py``). Those are
imported here at once: ``observe`` names both a submodule and its function, and
only an import here, after the submodule's, leaves the name to the function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    SetupError,
)
from arena.kahuna.lazy import on_first_use
from arena.kahuna.observe import (
    Observation,
    SeenEvent,
    observation_to_json,
    observe,
    outcome_to_json,
)
from arena.kahuna.state import (
    Event,
    HandicapBridge,
    Outcome,
    State,
    Termination,
    Variant,
)

if TYPE_CHECKING:
    from arena.kahuna.legal import is_legal, legal_actions
    from arena.kahuna.records import (
        Record,
        Replay,
        ReplayError,
        ReplayStep,
        parse_record,
        play_random_game,
        record_from_json,
        record_of,
        record_to_json,
        replay,
        replay_steps,
        state_summary,
    )
    from arena.kahuna.rng import deal_from_seed, reshuffle_from_seed
    from arena.kahuna.rules import apply, apply_legal, new_game, start_round

_LAZY: dict[str, str] = {
    **dict.fromkeys(("is_legal", "legal_actions"), "legal"),
    **dict.fromkeys(
        (
            "Record",
            "Replay",
            "ReplayError",
            "ReplayStep",
            "parse_record",
            "play_random_game",
            "record_from_json",
            "record_of",
            "record_to_json",
            "replay",
            "replay_steps",
            "state_summary",
        ),
        "records",
    ),
    **dict.fromkeys(("deal_from_seed", "reshuffle_from_seed"), "rng"),
    **dict.fromkeys(("apply", "apply_legal", "new_game", "start_round"), "rules"),
}
"""Each name imported on first use, and the submodule that defines it."""


__getattr__, __dir__ = on_first_use(
    globals(), {name: f"{__name__}.{module}" for name, module in _LAZY.items()}
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
    "ReplayStep",
    "SeenEvent",
    "SetupError",
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
    "replay_steps",
    "reshuffle_from_seed",
    "start_round",
    "state_summary",
]
