"""Kahuna as an OpenSpiel Python game, ``python_kahuna``, over the arena's engine.

Importing this module registers the game with ``pyspiel`` (the ``rl`` extra):
``pyspiel.load_game("python_kahuna", {"deals": 1024, "strategic": False,
"tactical": False})``. The first move is chance: one of ``deals`` seeds (at most
``MAX_DEALS``, as OpenSpiel lists them all), uniformly; the seed gives the deal
and the reshuffles exactly as the arena's ``deal_from_seed`` and
``reshuffle_from_seed`` do. Players 0 and 1 are the
seats, their actions the 161 indices of ``arena.kahuna.encoding.ACTIONS``; an
action not legal in the position (or a deal not among the chance outcomes) is a
ValueError naming it.
A player's information state is its seat's observation with the history
(``observe``: perfect recall), its observation the same without the history,
and its observation tensor the ``encode_observation`` vector; nothing is built
from the other seat's hidden cards. ``resample_from_infostate`` draws a full
state the player cannot tell apart (``arena.kahuna.determinize``), which is
what OpenSpiel's ISMCTS needs; the game tree is far too large for CFR or any
algorithm that walks it whole.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pyspiel

from arena.kahuna import State, Variant, observation_to_json, observe
from arena.kahuna.determinize import Completion, deal_unseen
from arena.kahuna.encoding import (
    ACTION_COUNT,
    ACTIONS,
    OBSERVATION_SIZE,
    action_index,
    encode_observation,
)
from arena.kahuna.legal import legal_actions, violation
from arena.kahuna.rng import deal_from_seed, reshuffle_from_seed
from arena.kahuna.rules import apply_legal, new_game, start_round

SHORT_NAME = "python_kahuna"
DEFAULT_DEALS = 1024
MAX_DEALS = 2**20
"""The most deals a game takes: OpenSpiel lists every chance outcome of the opening
move, so each new game builds a list of ``deals`` entries (a game of 2**31 - 1 deals
would build it until memory ran out)."""
MAX_GAME_LENGTH = 2000  # actions; no game of random play comes near it
SEED_BITS = 62

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Kahuna (Kahuna Arena's engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"deals": DEFAULT_DEALS, "strategic": False, "tactical": False},
)


class KahunaGame(pyspiel.Game):  # type: ignore[misc]
    """The game; ``deals`` seeds for the opening chance move, the variants as parameters."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        deals = int(params.get("deals", DEFAULT_DEALS))
        if not 1 <= deals <= MAX_DEALS:
            raise ValueError(
                f"deals must be 1 to {MAX_DEALS} (OpenSpiel lists every deal as a chance"
                f" outcome of each new game), not {deals}"
            )
        info = pyspiel.GameInfo(
            num_distinct_actions=ACTION_COUNT,
            max_chance_outcomes=deals,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_GAME_TYPE, info, params)
        self.deals = deals
        self.variant = Variant(
            strategic=bool(params.get("strategic", False)),
            tactical=bool(params.get("tactical", False)),
        )

    def new_initial_state(self) -> KahunaState:
        return KahunaState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> KahunaObserver:
        perfect_recall = iig_obs_type is not None and bool(iig_obs_type.perfect_recall)
        return KahunaObserver(perfect_recall)


class KahunaState(pyspiel.State):  # type: ignore[misc]
    """A position: before the deal (chance), or an engine ``State`` and its seed."""

    def __init__(self, game: KahunaGame) -> None:
        super().__init__(game)
        self._deals = game.deals
        self._variant = game.variant
        self.seed: int | None = None
        self.engine: State | None = None

    def _engine(self) -> State:
        assert self.engine is not None, "the deal is not made yet"
        return self.engine

    def current_player(self) -> int:
        if self.engine is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.engine.is_finished:
            return int(pyspiel.PlayerId.TERMINAL)
        mover = self.engine.to_move
        assert mover is not None
        return mover

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(action_index(a) for a in legal_actions(self._engine()))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        p = 1.0 / self._deals
        return [(seed, p) for seed in range(self._deals)]

    def _apply_action(self, action: int) -> None:
        """The deal (chance) or a seat's action; ValueError for one not legal here, as
        OpenSpiel's own games refuse it (never a position the rules cannot reach)."""
        if self.engine is None:
            if not 0 <= action < self._deals:
                raise ValueError(f"the deal must be one of the chance outcomes 0 to"
                                 f" {self._deals - 1}, not {action}")  # fmt: skip
            self.seed = int(action)
            self.engine = new_game(deal_from_seed(self.seed), self._variant)
            return
        if not 0 <= action < ACTION_COUNT:
            raise ValueError(f"the action must be an index in [0, {ACTION_COUNT}), not {action}")
        chosen = ACTIONS[action]
        problem = violation(self.engine, chosen)
        if problem is not None:
            raise ValueError(f"action {action} ({chosen.text()}) is not legal here:"
                             f" {problem[0]}: {problem[1]}")  # fmt: skip
        self.engine = _deal_rounds(apply_legal(self.engine, chosen), self.seed)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {action}"
        return ACTIONS[action].text()

    def is_terminal(self) -> bool:
        return self.engine is not None and self.engine.is_finished

    def returns(self) -> list[float]:
        outcome = None if self.engine is None else self.engine.outcome
        if outcome is None or outcome.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if outcome.winner == 0 else [-1.0, 1.0]

    def information_state_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if self.engine is None:
            return "before the deal"
        return json.dumps(observation_to_json(observe(self.engine, player)), sort_keys=True)

    def observation_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if self.engine is None:
            return "before the deal"
        seen = observation_to_json(observe(self.engine, player, history=False))
        return json.dumps(seen, sort_keys=True)

    def observation_tensor(self, player: int | None = None) -> list[float]:
        player = self.current_player() if player is None else player
        if self.engine is None:
            return [0.0] * OBSERVATION_SIZE
        return encode_observation(observe(self.engine, player, history=False))

    def resample_from_infostate(self, player: int, sampler: Any = None) -> KahunaState:
        """A state ``player`` cannot tell from this one: the hidden cards dealt anew."""
        engine = self._engine()
        rng = random.Random(_seed_from(sampler))
        clone = KahunaState(self.get_game())
        if engine.is_finished:
            clone.seed, clone.engine = self.seed, engine
            return clone
        completion = Completion(observe(engine, player))
        hidden, facedown, deck = deal_unseen(completion.places, rng.random)
        clone.engine = completion.state(hidden, facedown, deck)
        clone.seed = rng.getrandbits(SEED_BITS)  # the later reshuffles: unseen, drawn anew
        return clone

    def __str__(self) -> str:
        if self.engine is None:
            return "before the deal"
        return f"seed {self.seed}, {self.engine.history_length} actions, {self.engine!r}"


class KahunaObserver:
    """OpenSpiel's PyObserver: the seat's vector as the tensor, its JSON view as the string."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(OBSERVATION_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: KahunaState, player: int) -> None:
        self.tensor[:] = state.observation_tensor(player)

    def string_from(self, state: KahunaState, player: int) -> str:
        if self.perfect_recall:
            return str(state.information_state_string(player))
        return str(state.observation_string(player))


def _deal_rounds(state: State, seed: int | None) -> State:
    while state.needs_reshuffle and not state.is_finished:
        assert seed is not None
        order = reshuffle_from_seed(seed, state.round + 1, state.reshuffle_cards)
        state = start_round(state, order)
    return state


def _seed_from(sampler: Any) -> int:
    if callable(sampler):
        return int(float(sampler()) * 2**53)
    return random.SystemRandom().getrandbits(53)


pyspiel.register_game(_GAME_TYPE, KahunaGame)
