"""A policy trained on ``arena.envs.kahuna_v0`` as a bot: ``from_policy(policy)``.

A policy takes what the environment's ``observe(agent)`` gives, a mapping with
``"observation"`` (the seat's vector, ``arena.kahuna.encoding.FEATURES``) and
``"action_mask"`` (one flag per action of ``arena.kahuna.encoding.ACTIONS``),
and returns an action index. The bot builds both with the engine's own
encoding from the observation the referee sent, as plain lists (indexable
and iterable like the environment's numpy arrays): a policy that runs in the
environment runs here unchanged, without numpy or PettingZoo in the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena.kahuna.encoding import ACTION_COUNT, ACTIONS, action_mask, encode_observation
from kahuna_bot.actions import Action
from kahuna_bot.observation import Observation
from kahuna_bot.session import Choose

Policy = Callable[[Mapping[str, Sequence[float] | Sequence[int]]], int]


class PolicyError(ValueError):
    """The policy returned something that is not a legal action index."""


def policy_input(observation: Observation, legal_actions: Sequence[Action]) -> dict[str, list[Any]]:
    """What ``kahuna_v0``'s ``observe`` gives the seat to act, for this observation."""
    return {
        "observation": encode_observation(observation.engine()),
        "action_mask": action_mask(legal_actions),
    }


def from_policy(policy: Policy) -> Choose:
    """A ``choose`` for ``run`` that plays ``policy``'s choice (PolicyError if not legal)."""

    def choose(observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
        given = policy_input(observation, legal_actions)
        index = policy(given)
        if isinstance(index, bool) or not isinstance(index, int):
            index = _as_index(index)
        if not 0 <= index < ACTION_COUNT:
            raise PolicyError(f"the policy returned {index}, not an index in [0, {ACTION_COUNT})")
        if not given["action_mask"][index]:
            raise PolicyError(f"the policy chose {ACTIONS[index]} (index {index}), not legal now")
        return ACTIONS[index]

    return choose


def _as_index(value: object) -> int:
    """An integer-like value (a numpy integer) as int; PolicyError otherwise."""
    try:
        index: int = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise PolicyError(f"the policy returned {value!r:.40}, not an action index") from None
    if index != value:
        raise PolicyError(f"the policy returned {value!r:.40}, not an action index")
    return index
