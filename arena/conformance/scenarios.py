"""The situations `arena bot check` plays a bot through: a table, and how each is reached.

A scenario is one game the scripted referee plays with the bot: a variant, a
handicap, the bot's seat, a time control and, for most, a **situation** in
which the bot gets its first request. A situation is reached honestly: a
real deal is played from its first move by a seeded random policy for both
seats (the bot's own moves of that opening included, as if it had chosen
them) until the bot's seat is to move in it, so every observation the bot is
sent, history included, is exactly what the real referee would send in such
a game, and the record it gets at the end replays. From there the bot plays
its seat and the scripted opponent the other (the same random policy) until
the game ends by the rules, or, where the scenario says so, the opponent
forfeits after a number of the bot's decisions.

Pure: the rules engine and the standard library only.
"""

from __future__ import annotations

import enum
import functools
import random
from collections.abc import Callable
from dataclasses import dataclass

from arena.kahuna import (
    Action,
    ActionType,
    HandicapBridge,
    State,
    Variant,
    apply,
    deal_from_seed,
    legal_actions,
    new_game,
    reshuffle_from_seed,
    start_round,
)

SEARCH_DEALS = 400
"""How many deals the search for a situation tries before giving up (each is found
within the first few dozen: tests/conformance checks every row)."""
PLAIN = Variant()
STRATEGIC = Variant(strategic=True)
TACTICAL = Variant(tactical=True)
BOTH = Variant(strategic=True, tactical=True)


class Kind(enum.Enum):
    GAME = "game"
    """Requests until the game is over (or the opponent forfeits)."""
    FORFEIT_AT_ONCE = "forfeit_at_once"
    """GameStart, then at once GameOver: the opponent forfeited before any request."""


@dataclass(frozen=True, slots=True)
class Moment:
    """What the search knows at a point of a game: the state and how it got there."""

    state: State
    seat: int
    just_reshuffled: bool
    final_turn: int
    """0, or 1/2: which of the two final turns (R6, C5) is being played."""

    @property
    def turn_start(self) -> bool:
        last = self.state.last_event
        return last is None or last.seat != self.seat


Situation = Callable[[Moment], bool]


def _tactical_open_cards(moment: Moment) -> bool:
    open_cards = moment.state.open_cards
    return moment.turn_start and bool(open_cards[moment.seat]) and bool(open_cards[1 - moment.seat])


def _after_reshuffle(moment: Moment) -> bool:
    return moment.just_reshuffled


def _final_turn(number: int) -> Situation:
    def situation(moment: Moment) -> bool:
        hand = moment.state.hand_sizes[moment.seat]
        return moment.final_turn == number and moment.turn_start and hand > 0

    return situation


def _forced_draw(moment: Moment) -> bool:
    state = moment.state
    return (
        moment.turn_start and state.opponent_passed and not state.final_turns
        and 0 < state.hand_sizes[moment.seat] < 5
    )  # fmt: skip


def _hand_of_five(after_pass: bool) -> Situation:
    def situation(moment: Moment) -> bool:
        state = moment.state
        return (
            moment.turn_start and state.hand_sizes[moment.seat] == 5
            and state.opponent_passed is after_pass and not state.final_turns
        )  # fmt: skip

    return situation


@dataclass(frozen=True)
class Clock:
    action_ms: int = 2000
    bank_ms: int = 30000


DEFAULT_CLOCK = Clock()
LOW_BANK = Clock(action_ms=1000, bank_ms=20)
FAST = Clock(action_ms=250, bank_ms=0)


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    """In words: the situation the bot is put in and what a conforming bot does."""
    seat: int = 0
    variant: Variant = PLAIN
    handicap: tuple[HandicapBridge, ...] = ()
    situation: Situation | None = None
    """Where the bot's first request comes; None: from the game's first move."""
    clock: Clock = DEFAULT_CLOCK
    kind: Kind = Kind.GAME
    turns: int | None = None
    """After this many of the bot's turns the opponent forfeits (the scenario is over);
    None: the game is played to its end."""
    decisions: int | None = None
    """After this many of the bot's decisions the opponent forfeits; None: no limit."""

    @property
    def connection(self) -> Variant:
        """Scenarios of one variant are played on one connection (one match as the real
        referee would play it: its variant does not change). The time control is the
        game's (GameStart and every request carry it); Welcome states the default."""
        return self.variant


def _bridges(seat: int, *lines: str) -> tuple[HandicapBridge, ...]:
    return tuple(HandicapBridge(seat, line) for line in lines)


# fmt: off
SCENARIOS: tuple[Scenario, ...] = (
    Scenario("plain_seat0", "a whole game, plain variant, as seat 0 (moves first)"),
    Scenario("plain_seat1", "a whole game, plain variant, as seat 1 (first request after the "
             "opponent's turn, history not empty)", seat=1),
    Scenario("opponent_forfeits", "GameOver straight after GameStart (the opponent crashed "
             "before any request): the bot sends nothing and plays the next game",
             kind=Kind.FORFEIT_AT_ONCE),
    Scenario("reshuffle", "the first request of round 2, after the discard pile was "
             "reshuffled into a new deck and face-up row", situation=_after_reshuffle, turns=1),
    Scenario("forced_draw", "the opponent passed its turn: this turn must end with a draw "
             "(C4), pass is not legal", situation=_forced_draw, turns=1),
    Scenario("hand_of_five", "five cards in hand (C3): no draw is legal, the turn ends with "
             "a pass or after playing cards", situation=_hand_of_five(after_pass=False), turns=1),
    Scenario("hand_of_five_after_pass", "five cards in hand and the opponent passed: the bot "
             "must play or discard before it may draw (C3, C4)",
             situation=_hand_of_five(after_pass=True), turns=1),
    Scenario("final_turn_first", "the first of the two final turns (R6, C5): deck and face-up "
             "row empty, the turn ends with pass only", situation=_final_turn(1)),
    Scenario("final_turn_second", "the second final turn, then the final scoring",
             seat=1, situation=_final_turn(2)),
    Scenario("handicap_own", "a whole game with three handicap bridges of its own (R2h) on "
             "the board before its first move",
             handicap=_bridges(0, "ALOA-BARI", "ELAI-HUNA", "GOLA-KAHU")),
    Scenario("handicap_opponent", "a whole game as seat 0 against two handicap bridges of "
             "the opponent", handicap=_bridges(1, "BARI-ELAI", "HUNA-LALE")),
    Scenario("low_bank", "a whole game with a 20 ms time bank and 1000 ms per action: every "
             "reply within the per-action limit", clock=LOW_BANK),
    Scenario("answer_fast", "20 requests with 250 ms per action and no bank", seat=1,
             clock=FAST, decisions=20),
    Scenario("strategic", "a whole game, strategic variant (R8: no bridge next to an island "
             "the opponent controls)", seat=1, variant=STRATEGIC),
    Scenario("tactical", "a whole game, tactical variant (R8: face-up cards stay visible)",
             variant=TACTICAL),
    Scenario("tactical_open_card", "tactical: both seats hold an open card (taken face up); "
             "playing one of that island plays the open copy first", seat=1,
             variant=TACTICAL, situation=_tactical_open_cards, turns=1),
    Scenario("strategic_tactical", "a whole game with both variants", variant=BOTH),
)
# fmt: on


SUBMISSION_SCENARIOS: tuple[Scenario, ...] = tuple(
    scenario for scenario in SCENARIOS
    if scenario.situation is not None or scenario.kind is not Kind.GAME
)  # fmt: skip
"""What `arena bot add`, SubmitBot and UploadBot play: the situations a short match may never
reach (its smoke match plays whole games, both seats, after these). Not the clocks
a tournament may never use (low_bank, answer_fast): a bot is not refused for being
slower than 250 ms when the default is 2000 ms; `arena bot check` plays them."""


@dataclass
class Playout:
    """A game played from a deal by the scripted policy, one step at a time."""

    deal_seed: int
    variant: Variant
    handicap: tuple[HandicapBridge, ...]

    def __post_init__(self) -> None:
        self.deal = deal_from_seed(self.deal_seed)
        self.state = new_game(self.deal, self.variant, self.handicap)
        self.policy = random.Random(self.deal_seed)
        self.reshuffles: list[tuple[str, ...]] = []
        self.just_reshuffled = False
        self.final_turn = 0

    def reshuffle_if_due(self) -> tuple[str, ...] | None:
        """Lay out the next round where one ended (R6); the new order, else None."""
        if not self.state.needs_reshuffle:
            return None
        state = self.state
        order = reshuffle_from_seed(self.deal_seed, state.round + 1, state.reshuffle_cards)
        self.reshuffles.append(order)
        self.state = start_round(state, order)
        self.just_reshuffled = True
        return order

    def moment(self, seat: int) -> Moment:
        return Moment(self.state, seat, self.just_reshuffled, self.final_turn)

    def choose(self) -> Action:
        """The scripted policy's action for the seat to move: uniform among the legal."""
        actions = legal_actions(self.state)
        return actions[self.policy.randrange(len(actions))]

    def after(self, action: Action, before: State) -> None:
        """Note what ``action`` (just applied to ``before``) did to the final turns."""
        self.just_reshuffled = False
        if self.state.final_turns and not before.final_turns:
            self.final_turn = 1
        elif before.final_turns and action.type is ActionType.PASS:
            self.final_turn += 1

    def step(self) -> None:
        before = self.state
        action = self.choose()
        self.state = apply(before, action)
        self.after(action, before)


@functools.cache
def opening(scenario: Scenario) -> tuple[int, int]:
    """(deal seed, actions of the opening) after which ``scenario``'s situation holds
    with the bot's seat to move; (0, 0) for a scenario that starts at the first move."""
    situation = scenario.situation
    if situation is None:
        return 0, 0
    for deal_seed in range(SEARCH_DEALS):
        playout = Playout(deal_seed, scenario.variant, scenario.handicap)
        steps = 0
        while not playout.state.is_finished:
            playout.reshuffle_if_due()
            if playout.state.to_move == scenario.seat and situation(playout.moment(scenario.seat)):
                return deal_seed, steps
            playout.step()
            steps += 1
    raise LookupError(f"scenario {scenario.name}: no deal of {SEARCH_DEALS} reaches its situation")


def opened(scenario: Scenario) -> Playout:
    """A playout of ``scenario``'s deal with its opening played: the bot is to move in
    its situation (or it is the game's first move)."""
    deal_seed, steps = opening(scenario)
    playout = Playout(deal_seed, scenario.variant, scenario.handicap)
    for _ in range(steps):
        playout.reshuffle_if_due()
        playout.step()
    playout.reshuffle_if_due()
    return playout
