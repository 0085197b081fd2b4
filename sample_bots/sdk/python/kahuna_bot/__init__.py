"""kahuna_bot: write a Kahuna bot for the arena in a few lines of Python.

    from kahuna_bot import run

    def choose(observation, legal_actions):
        return legal_actions[0]

    raise SystemExit(run(choose, name="first-legal"))

``choose`` gets the full ``Observation`` of the seat (history reassembled)
and the legal actions (``Action``; ``str(action)`` is docs/reference/RECORD.md notation)
and returns one of them, as an ``Action`` or as text. Subclass ``Bot`` for
hooks at match and game start and end. The SDK depends only on h2 (HTTP/2:
its transport ``kahuna_bot.wire`` speaks gRPC's wire protocol itself, without
grpcio), protobuf, the generated ``kahuna.v1`` code and the pure rules engine
``arena.kahuna`` (the arena mounts both beside it in the sandbox): its board
tables, ``Action`` and text notation are the engine's, ``Observation.engine()``
is the engine's observation, ``kahuna_bot.sampling`` draws full states
consistent with it, for bots that search, and ``from_policy`` makes a policy
trained on ``arena.envs.kahuna_v0`` a ``choose``.
"""

import gc as _gc

# What the imports below make (the modules, classes and tables of the SDK, protobuf, h2
# and the engine: some 50,000 objects) lives as long as the process, so no collection
# needs to walk it: none runs while it is made, and it is handed to ``gc.freeze`` (a
# bot's collections then walk only what the bot makes). A bot that had switched the
# collector off before this import finds it off.
_collecting = _gc.isenabled()
_gc.disable()
try:
    import importlib as _importlib
    from typing import TYPE_CHECKING, Any

    from kahuna_bot import _grpc_env  # noqa: F401 (before anything imports grpc: it tunes it)
    from kahuna_bot.actions import (
        PASS,
        Action,
        ActionType,
        action_from_proto,
        action_to_proto,
        discard,
        draw,
        parse_action,
        place,
        remove,
    )
    from kahuna_bot.board import (
        BRIDGES_PER_SEAT,
        HAND_LIMIT,
        ISLANDS,
        LINE_ISLANDS,
        LINES,
        LINES_OF,
        MAJORITY,
        canonical_island,
        canonical_line,
    )
    from kahuna_bot.client import ConfigError, referee_from_env, run, run_session
    from kahuna_bot.observation import (
        Clock,
        HistoryBuffer,
        Observation,
        Outcome,
        ProtocolError,
        SeenEvent,
        Termination,
        Variant,
        observation_from_proto,
    )
    from kahuna_bot.session import (
        Bot,
        Choose,
        FunctionBot,
        GameInfo,
        GameResult,
        MatchInfo,
        MatchResult,
        Session,
        TimeControl,
    )
finally:
    _gc.freeze()
    if _collecting:
        _gc.enable()

if TYPE_CHECKING:
    from kahuna_bot.policy import Policy, PolicyError, from_policy, policy_input
    from kahuna_bot.sampling import InfoStateSampler, sample_state

_ON_FIRST_USE = {
    "InfoStateSampler": "kahuna_bot.sampling",
    "sample_state": "kahuna_bot.sampling",
    "Policy": "kahuna_bot.policy",
    "PolicyError": "kahuna_bot.policy",
    "from_policy": "kahuna_bot.policy",
    "policy_input": "kahuna_bot.policy",
}
"""Names whose modules only bots that search or play a policy need: imported on first
use (PEP 562), not by every bot at its start."""


def __getattr__(name: str) -> Any:
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_ON_FIRST_USE})


__version__ = "1.0.0"

__all__ = [
    "BRIDGES_PER_SEAT",
    "HAND_LIMIT",
    "ISLANDS",
    "LINES",
    "LINES_OF",
    "LINE_ISLANDS",
    "MAJORITY",
    "PASS",
    "Action",
    "ActionType",
    "Bot",
    "Choose",
    "Clock",
    "ConfigError",
    "FunctionBot",
    "GameInfo",
    "GameResult",
    "HistoryBuffer",
    "InfoStateSampler",
    "MatchInfo",
    "MatchResult",
    "Observation",
    "Outcome",
    "Policy",
    "PolicyError",
    "ProtocolError",
    "SeenEvent",
    "Session",
    "Termination",
    "TimeControl",
    "Variant",
    "__version__",
    "action_from_proto",
    "action_to_proto",
    "canonical_island",
    "canonical_line",
    "discard",
    "draw",
    "from_policy",
    "observation_from_proto",
    "parse_action",
    "place",
    "policy_input",
    "referee_from_env",
    "remove",
    "run",
    "run_session",
    "sample_state",
]
