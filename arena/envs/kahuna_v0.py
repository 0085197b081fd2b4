"""Kahuna as a PettingZoo AEC environment (docs/guide/learning.md).

``env()`` is the environment with PettingZoo's order checks; ``raw_env`` the
bare one. An illegal action ends the game with reward -1 for its player and 0
for the other (``infos[agent]["illegal_action"]``), as in PettingZoo's classic
games; an action outside ``Discrete(161)`` is a ValueError. Two agents, ``player_0`` and
``player_1`` (seats 0 and 1); the agent to act may act several times in a row,
as a Kahuna turn is several actions ending with a draw or a pass (R3). Each
agent's observation is ``{"observation", "action_mask"}``: the vector of
``arena.kahuna.encoding`` built from that seat's ``observe`` (what a bot of
the seat is sent), and the legal actions' flags (all zero when it is not the
agent's turn). The game is reproducible from ``reset(seed=...)`` (an integer in
[0, 2**63), as ``arena match --seed`` takes): the seed gives the deal and the
reshuffles exactly as ``arena.kahuna.deal_from_seed`` and ``reshuffle_from_seed``
do for the arena, and the later ``reset()`` calls without a seed deal a sequence of
seeds it fixes (Gymnasium's convention). Reward at the end: +1 for the winner, -1 for the loser, 0
each for a draw. The engine's position, both hands and the pile's order
included, is ``raw_env.game``: for the trainer's eyes, never an agent's;
``state()``, PettingZoo's global state for centralised critics, is not offered
(NotImplementedError, as in PettingZoo's classic games). ``render_mode="ansi"``
(or ``"human"``, printed) renders the public position as text. The variant flags
are bools (a flag given as the text "false" is refused, not read as true), and
each agent has its own space objects, each sampling on its own seed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from arena.kahuna import Observation, Variant, observe
from arena.kahuna.encoding import (
    ACTION_COUNT,
    ACTIONS,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    action_mask,
    encode_observation,
)
from arena.kahuna.legal import legal_actions
from arena.kahuna.rng import deal_from_seed, reshuffle_from_seed
from arena.kahuna.rules import apply_legal, new_game, start_round
from arena.kahuna.view_public import SpectatorView, spectate

AGENTS = ("player_0", "player_1")
RENDER_MODES = ("ansi", "human")
SEED_BITS = 63


def env(
    *, render_mode: str | None = None, strategic: bool = False, tactical: bool = False
) -> AECEnv[str, Any, Any]:
    """The environment with PettingZoo's order checks (the one to train with).

    ``raw_env`` itself ends the game on an illegal action, as PettingZoo's
    ``TerminateIllegalWrapper`` would, and refuses an action outside the space,
    as ``AssertOutOfBoundsWrapper`` would: those two wrappers would only
    double the cost of a step.
    """
    return wrappers.OrderEnforcingWrapper(
        raw_env(render_mode=render_mode, strategic=strategic, tactical=tactical)
    )


class raw_env(AECEnv[str, dict[str, np.ndarray], int]):  # type: ignore[misc]
    """Kahuna for two agents; the variants (docs/RULES.md) as keyword arguments."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": "kahuna_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self, *, render_mode: str | None = None, strategic: bool = False, tactical: bool = False
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be one of {', '.join(RENDER_MODES)} or None,"
                f" not {render_mode!r}"
            )
        self.render_mode = render_mode
        self.variant = Variant(
            strategic=_flag("strategic", strategic), tactical=_flag("tactical", tactical)
        )
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        # One space object per agent, as PettingZoo's classic games have: a space holds
        # its sampling generator, so seeding one agent's space leaves the other's alone.
        self.observation_spaces = {agent: _observation_space() for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(ACTION_COUNT) for agent in AGENTS}
        self.seed = 0
        self.np_random: np.random.Generator | None = None
        self.game = new_game(deal_from_seed(0), self.variant)
        self.illegal_by: str | None = None
        self._mask = np.zeros(ACTION_COUNT, np.int8)
        self._no_mask = np.zeros(ACTION_COUNT, np.int8)
        self._reset_bookkeeping()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game: the deal from ``seed``; ValueError for a seed that is not an integer
        in [0, 2**63), the arena's match seeds: the engine reads a seed modulo 2**64, so a
        larger or negative one would deal another seed's game, and a float or a string
        would be truncated or parsed unseen. Without a seed, the next seed of the sequence
        the last ``reset(seed=...)`` started (``np_random``, Gymnasium's convention: a run
        seeded once is the same run again), or of one from the system's entropy."""
        if seed is None:
            if self.np_random is None:
                self.np_random, _ = seeding.np_random(None)
            self.seed = int(self.np_random.integers(0, 2**SEED_BITS, dtype=np.int64))
        elif (
            isinstance(seed, bool)
            or not isinstance(seed, int | np.integer)
            or not 0 <= seed < 2**SEED_BITS
        ):
            raise ValueError(
                f"the seed must be an integer in [0, 2**{SEED_BITS}) or None, not {seed!r}"
            )
        else:
            self.seed = int(seed)
            self.np_random, _ = seeding.np_random(self.seed)
        self.game = new_game(deal_from_seed(self.seed), self.variant)
        self.illegal_by = None
        self.agents = list(AGENTS)
        self._reset_bookkeeping()

    def _reset_bookkeeping(self) -> None:
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self._after_move()

    def _after_move(self) -> None:
        """Deal the next round if one is due, then point at the seat to act."""
        state = self.game
        while state.needs_reshuffle and not state.is_finished:
            order = reshuffle_from_seed(self.seed, state.round + 1, state.reshuffle_cards)
            state = start_round(state, order)
        self.game = state
        mover = state.to_move
        if mover is not None:
            self.agent_selection = AGENTS[mover]
            self._mask = np.array(action_mask(legal_actions(state)), np.int8)

    def observation_of(self, agent: str) -> Observation:
        """The full engine observation of ``agent``'s seat (with the history)."""
        return observe(self.game, AGENTS.index(agent))

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = AGENTS.index(agent)
        vector = encode_observation(observe(self.game, seat, history=False))
        acting = self.agent_selection == agent and not self.terminations.get(agent, True)
        return {
            "observation": np.array(vector, np.float32),
            "action_mask": self._mask.copy() if acting else self._no_mask.copy(),
        }

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if (
            isinstance(action, bool)
            or not isinstance(action, int | np.integer)
            or not 0 <= action < ACTION_COUNT
        ):
            raise ValueError(
                f"the action must be an integer in [0, {ACTION_COUNT}), not {action!r}"
            )
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        if not self._mask[action]:
            self.rewards[agent] = -1.0
            self.infos[agent] = {"illegal_action": True}
            self.illegal_by = agent
            self.terminations = dict.fromkeys(AGENTS, True)
            self._accumulate_rewards()
            return
        self.game = apply_legal(self.game, ACTIONS[int(action)])
        self._after_move()
        outcome = self.game.outcome
        if outcome is not None:
            for seat, name in enumerate(AGENTS):
                won = outcome.winner == seat
                self.rewards[name] = 0.0 if outcome.winner is None else (1.0 if won else -1.0)
            self.terminations = dict.fromkeys(AGENTS, True)
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The position as everyone sees it (``public_text``), never a hand or the pile's
        order: returned with ``render_mode="ansi"``, printed with ``"human"``."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: give render_mode='ansi'")
            return None
        text = public_text(spectate(self.game, history=False), self.illegal_by)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        return None


def _flag(name: str, value: object) -> bool:
    """A variant flag, True or False (a numpy bool too); ValueError for anything else: a
    flag read from a config file as the text "false" would otherwise be true."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, not {value!r}")
    return bool(value)


def _observation_space() -> spaces.Dict:
    """One agent's observation space: the vector of ``FEATURES`` and the action mask."""
    high = np.array(OBSERVATION_HIGH, dtype=np.float32)
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, high, (OBSERVATION_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (ACTION_COUNT,), np.int8),
        }
    )


def public_text(view: SpectatorView, illegal_by: str | None = None) -> str:
    """A spectator's view as a few lines of text: what ``render`` shows (no hidden card).
    ``illegal_by``: the agent whose illegal action ended the game, which the engine's
    position does not know (it is left as it was before that action)."""
    if illegal_by is not None:
        head = f"round {view.round}, finished: {illegal_by} played an illegal action"
    elif view.outcome is not None:
        winner = view.outcome.winner
        who = "a draw" if winner is None else f"{AGENTS[winner]} wins"
        head = f"round {view.round}, finished: {who}"
    else:
        head = f"round {view.round}, {AGENTS[view.to_move or 0]} to move"
    by_seat = [
        [line for line, seat in sorted(view.bridges.items()) if seat == s] for s in (0, 1)
    ]
    held = [[isle for isle, seat in sorted(view.controlled.items()) if seat == s] for s in (0, 1)]
    lines = [f"{head}; points {view.points[0]}-{view.points[1]}"]
    for seat, name in enumerate(AGENTS):
        lines.append(
            f"{name}: hand {view.hand_sizes[seat]}, supply {view.supply[seat]}; islands"
            f" {' '.join(held[seat]) or '-'}; bridges {' '.join(by_seat[seat]) or '-'}"
        )
    faceup = " ".join(card or "-" for card in view.faceup)
    lines.append(f"face up: {faceup}; deck {view.deck_size}")
    return "\n".join(lines)
